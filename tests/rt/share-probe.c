// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Shared text (lib/runtime/share.c) called directly, without the segment
 * remapping, for tests/live/share-text.bats. share.c, api.c (its mount scan)
 * and regions.c are compiled in; rt.c and fork.c are not: rt_msg (the same
 * "libhugetlbfs: LEVEL: " lines on stderr, HUGETLB_VERBOSE), rt_path,
 * rt_base_page_size and rt_fork_watch are defined here.
 *
 *   share-probe key
 *       rt_share_key() of this program: the key, or "error <ERRNO>"
 *   share-probe fd NAME KEY OFFSET PAGES SEED [hold]
 *       rt_share_text_fd() for PAGES default-size pages of text whose byte i
 *       is (i * 7 + SEED) & 0xff, at OFFSET (hex). Prints "made" or "found"
 *       and "inode <n>", then maps the descriptor as the runtime does
 *       (MAP_PRIVATE|MAP_NORESERVE, PROT_READ|PROT_EXEC), reads it all and
 *       prints "same" when it holds the text, and "free <n>" (HugePages_Free
 *       while it is mapped and read). With hold, waits for a line on stdin,
 *       compares again ("same after") and exits. On failure: "error
 *       <ERRNO>", exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "share.h"

static struct hkc_path root = {.rootfd = -1};

const struct hkc_path *rt_path(void)
{
	if (root.rootfd < 0 && hkc_path_init(&root, "/") < 0)
		abort();
	return &root;
}

size_t rt_base_page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

void rt_fork_watch(void)
{
}

void rt_msg(int level, const char *fmt, ...)
{
	static const char *const names[] = {"", "ERROR", "WARNING", "INFO", "DEBUG"};
	const char *v = getenv("HUGETLB_VERBOSE");
	va_list ap;

	if (level > (v ? atoi(v) : RT_WARNING))
		return;
	fprintf(stderr, "libhugetlbfs: %s: ", names[level < 4 ? level : 4]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int fail(int rc)
{
	printf("error %s\n", strerrorname_np(-rc) ? strerrorname_np(-rc) : "?");
	return 1;
}

static int first(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(struct dl_phdr_info *)data = *info;
	return 1;
}

static int probe_key(void)
{
	struct dl_phdr_info info;
	char key[160];
	int rc;

	dl_iterate_phdr(first, &info);
	rc = rt_share_key(&info, key, sizeof(key));
	if (rc < 0)
		return fail(rc);
	printf("%s\n", key);
	return 0;
}

static uint64_t hugepages_free(void)
{
	char *buf = NULL;
	uint64_t v = UINT64_MAX;

	if (hkc_path_read_allf(rt_path(), &buf, NULL, HK_PROC_MEMINFO) == 0 &&
	    hkc_kv_find_u64(buf, "HugePages_Free", &v) < 0)
		v = UINT64_MAX;
	free(buf);
	return v;
}

static int probe_fd(int argc, char **argv)
{
	struct rt_share_req req = {.exe_name = argv[2], .key = argv[3]};
	uint64_t pages = strtoull(argv[5], NULL, 10);
	unsigned seed = (unsigned)strtoul(argv[6], NULL, 0);
	volatile unsigned char sum = 0;
	unsigned char *src, *map;
	struct stat st;
	bool made;
	int fd;

	req.offset = (uintptr_t)strtoull(argv[4], NULL, 16);
	if (hkc_default_page_size(rt_path(), &req.page_size) < 0 || pages == 0)
		return fail(-EINVAL);
	req.len = pages * req.page_size;
	src = malloc(req.len);
	if (!src)
		return fail(-ENOMEM);
	for (size_t i = 0; i < req.len; i++)
		src[i] = (unsigned char)(i * 7 + seed);
	req.src = src;
	fd = rt_share_text_fd(&req, &made);
	if (fd < 0) {
		free(src);
		return fail(fd);
	}
	fstat(fd, &st);
	printf("%s\ninode %ju\n", made ? "made" : "found", (uintmax_t)st.st_ino);
	map = mmap(NULL, req.len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		free(src);
		return fail(-errno);
	}
	for (size_t i = 0; i < req.len; i += 4096)
		sum += map[i];
	if (memcmp(map, src, req.len) == 0)
		printf("same\n");
	printf("free %" PRIu64 "\n", hugepages_free());
	fflush(stdout);
	if (argc > 7 && strcmp(argv[7], "hold") == 0) {
		char line[8];

		if (!fgets(line, sizeof(line), stdin))
			line[0] = '\0';
		if (memcmp(map, src, req.len) == 0)
			printf("same after\n");
	}
	munmap(map, req.len);
	free(src);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "key") == 0)
		return probe_key();
	if (argc >= 7 && strcmp(argv[1], "fd") == 0)
		return probe_fd(argc, argv);
	fprintf(stderr, "usage: share-probe key | fd NAME KEY OFFSET PAGES SEED [hold]\n");
	return 2;
}
