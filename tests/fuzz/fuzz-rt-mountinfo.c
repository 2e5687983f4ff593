// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The runtime's own /proc/self/mountinfo parser (lib/runtime/api.c, no
 * libmount): its scan is static and runs once per process, so this target
 * compiles api.c in and calls the scan on a scratch tree each time. rt.c,
 * the preload side with its constructor, and fork.c are left out:
 * rt_path(), rt_msg(), rt_base_page_size() and rt_fork_watch() are defined
 * here; regions.c is compiled in.
 */
#include "fuzz.h"

#include "../../lib/runtime/api.c"

static struct hkc_path root;

const struct hkc_path *rt_path(void)
{
	return &root;
}

size_t rt_base_page_size(void)
{
	return 4096;
}

void rt_fork_watch(void)
{
}

/* Messages are formatted (the format and its arguments are checked), not printed. */
void rt_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fuzz_vformat(fmt, ap);
	va_end(ap);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_tree_init();
	fuzz_put_str("proc/meminfo", "Hugepagesize:       2048 kB\n");
	fuzz_mkdirs("sys/kernel/mm/hugepages/hugepages-2048kB");
	if (hkc_path_init(&root, fuzz_root) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_put("proc/self/mountinfo", data, size);
	scan_mountinfo();
	for (size_t i = 0; i < atomic_load(&cfg.n_mounts); i++) {
		if (!cfg.mounts[i].path || cfg.mounts[i].size <= 0)
			abort();
		free(cfg.mounts[i].path);
		cfg.mounts[i].path = NULL;
	}
	atomic_store(&cfg.n_mounts, 0);
	return 0;
}
