// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libhugekit-rt preloaded into a program (by hugectl, or LD_PRELOAD with
 * libhugetlbfs's environment): its heap and SysV shared memory on huge pages.
 *
 * The heap: glibc >= 2.34 has no __morecore hook, but glibc's own malloc can
 * use huge pages (the glibc.malloc.hugetlb tunable, 2.35) for the main heap,
 * every thread's arena and large blocks. Tunables are read once, when the
 * program starts, so hugectl sets GLIBC_TUNABLES before exec; when a program
 * asks through HUGETLB_MORECORE alone, this library sets the same tunables and
 * executes the program again, once, before main() runs. Measured on the
 * development machine: 99.9 % of a 4-thread heap on huge pages with
 * mmap_threshold raised to 4 MiB, 27 % without (tests/live/hugectl.bats).
 * When the pool is dry, glibc falls back to base pages by itself; this
 * library says so once. It never makes a program fail that runs without it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <unistd.h>

#include "internal.h"
#include "tunables.h"

static int verbose = RT_WARNING;
static struct hk_path root_path = {.rootfd = -1};
static pthread_once_t path_once = PTHREAD_ONCE_INIT;
static bool shm_on, report_on;
static atomic_int shm_huge, shm_fallback;
static atomic_flag shm_warned = ATOMIC_FLAG_INIT;

void rt_msg(int level, const char *fmt, ...)
{
	static const char *const names[] = {"", "ERROR", "WARNING", "INFO", "DEBUG"};
	char buf[512];
	va_list ap;
	int n;

	if (level > verbose)
		return;
	n = snprintf(buf, sizeof(buf), "libhugetlbfs: %s: ", names[level < 4 ? level : 4]);
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	/* One write(2): no stdio in a library that runs inside other programs. */
	n = (int)strlen(buf);
	if (n < (int)sizeof(buf) - 1)
		buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}

static void path_init(void)
{
	if (hk_path_init(&root_path, "/") < 0)
		root_path.rootfd = -1;
}

const struct hk_path *rt_path(void)
{
	pthread_once(&path_once, path_init);
	return &root_path;
}

static bool env_yes(const char *name)
{
	const char *v = getenv(name);

	return v && (strcasecmp(v, "yes") == 0 || strcmp(v, "1") == 0);
}

static void read_verbosity(void)
{
	const char *v = getenv("HUGETLB_VERBOSE");

	if (v && *v) {
		char *end;
		long l = strtol(v, &end, 10);

		if (!*end && l >= 0 && l <= 99)
			verbose = (int)l;
	}
	if (getenv("HUGETLB_DEBUG"))
		verbose = RT_DEBUG;
}

/* HUGETLB_RESTRICT_EXE=a:b: active only in programs with one of these names. */
static bool restricted_out(void)
{
	const char *list = getenv("HUGETLB_RESTRICT_EXE");
	const char *base;
	char *exe = NULL;
	size_t len;

	if (!list || !*list || hk_path_read_allf(rt_path(), &exe, NULL, HK_PROC_SELF_CMDLINE) < 0)
		return false;
	/* argv[0] ends at the first NUL of cmdline. */
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	len = strlen(base);
	for (const char *p = list; *p;) {
		size_t l = strcspn(p, ":");

		if (l == len && strncmp(p, base, l) == 0) {
			free(exe);
			return false;
		}
		p += l + (p[l] == ':');
	}
	free(exe);
	rt_msg(RT_DEBUG, "No exe match - libhugetlbfs is inactive for this exe");
	return true;
}

/*
 * HUGETLB_MORECORE: yes (the default size, or HUGETLB_DEFAULT_PAGE_SIZE),
 * a size, or thp. Returns the page size for hkc_heap_tunables (0 thp, 1
 * default), or UINT64_MAX when the heap is not asked for or cannot be.
 */
static uint64_t heap_request(void)
{
	const char *v = getenv("HUGETLB_MORECORE");
	const char *dps = getenv("HUGETLB_DEFAULT_PAGE_SIZE");
	uint64_t size, def = 0;
	char dir[96];

	if (!v || !*v || strcasecmp(v, "no") == 0)
		return UINT64_MAX;
	if (strcasecmp(v, "thp") == 0)
		return 0;
	if (v[0] == 'y' || v[0] == 'Y') {
		if (!dps || hkc_parse_size_legacy(dps, &size) < 0)
			return 1;
	} else if (hkc_parse_size_legacy(v, &size) < 0) {
		rt_msg(RT_WARNING,
		       "Invalid huge page size %s in HUGETLB_MORECORE: heap not on huge pages", v);
		return UINT64_MAX;
	}
	snprintf(dir, sizeof(dir), "sys/kernel/mm/hugepages/hugepages-%" PRIu64 "kB", size / 1024);
	if (!hk_path_existsf(rt_path(), "%s", dir)) {
		rt_msg(RT_WARNING, "Hugepage size %" PRIu64 " unavailable: heap not on huge pages",
		       size);
		return UINT64_MAX;
	}
	return hkc_default_page_size(rt_path(), &def) == 0 && def == size ? 1 : size;
}

/* argv of this process, from /proc/self/cmdline (malloc'd, NULL-terminated). */
static char **own_argv(void)
{
	size_t len = 0, n = 0, i = 0;
	char *buf = NULL, **argv;
	int rc = hk_path_read_allf(rt_path(), &buf, &len, HK_PROC_SELF_CMDLINE);

	if (rc < 0 || len == 0) {
		free(buf);
		return NULL;
	}
	for (size_t k = 0; k < len; k++)
		n += buf[k] == '\0';
	if (buf[len - 1] != '\0')
		n++;
	argv = calloc(n + 1, sizeof(*argv));
	if (!argv) {
		free(buf);
		return NULL;
	}
	for (size_t k = 0; k < len && i < n; k += strlen(buf + k) + 1)
		argv[i++] = buf + k;
	return argv;
}

/* Whether the pool of this size has a page to give (free, or room to overcommit). */
static bool pool_has_pages(uint64_t size)
{
	uint64_t def = 0, free_p = 0, resv = 0, nr = 0, oc = 0, surp = 0;
	const struct hk_path *p = rt_path();
	uint64_t kb;

	if (size == 1 && hkc_default_page_size(p, &def) == 0)
		size = def;
	kb = size / 1024;
#define RD(f, v) hk_path_read_u64f(p, &v, "sys/kernel/mm/hugepages/hugepages-%" PRIu64 "kB/" f, kb)
	if (RD("free_hugepages", free_p) < 0 || RD("resv_hugepages", resv) < 0 ||
	    RD("nr_hugepages", nr) < 0 || RD("nr_overcommit_hugepages", oc) < 0 ||
	    RD("surplus_hugepages", surp) < 0)
		return true; /* cannot tell: say nothing */
#undef RD
	return free_p > resv || surp < oc;
}

static void setup_heap(void)
{
	uint64_t size = heap_request();
	const char *have = getenv("GLIBC_TUNABLES");
	char *tunables = NULL, **argv;

	if (size == UINT64_MAX)
		return;
	/* Already started with the tunables (hugectl, or our own second start). */
	if (have && strstr(have, "glibc.malloc.hugetlb=")) {
		/* glibc falls back to base pages by itself; say so, once. */
		if (size && !pool_has_pages(size))
			rt_msg(RT_WARNING, "no free huge pages in the pool: the heap stays on base "
					   "pages (grow it with hugeadm --pool-pages-min)");
		return;
	}
	if (getenv("HK_RT_REEXEC")) {
		rt_msg(RT_WARNING, "the heap could not be put on huge pages (GLIBC_TUNABLES lost)");
		return;
	}
	if (hkc_heap_tunables(have, size, &tunables) < 0 || !(argv = own_argv())) {
		free(tunables);
		return;
	}
	/* glibc reads its tunables only at start: start again, once, with them set. */
	setenv("GLIBC_TUNABLES", tunables, 1);
	setenv("HK_RT_REEXEC", "1", 1);
	rt_msg(RT_INFO, "starting again with GLIBC_TUNABLES=%s", tunables);
	execv(HK_ABS(HK_PROC_SELF_EXE), argv);
	rt_msg(RT_WARNING, "cannot start the program again (%s): the heap stays on base pages",
	       strerror(errno));
	unsetenv("HK_RT_REEXEC");
	free(tunables);
	free(argv[0]);
	free(argv);
}

/*
 * SysV shared memory on huge pages (HUGETLB_SHM=yes): segments are created
 * with SHM_HUGETLB and their size rounded up to a huge page; when the pool or
 * the permissions refuse, the segment is made as asked, with a warning.
 */
RT_EXPORT int shmget(key_t key, size_t size, int shmflg)
{
	static int (*real)(key_t, size_t, int);
	uint64_t hps = 0;
	int id;

	if (!real)
		real = (int (*)(key_t, size_t, int))dlsym(RTLD_NEXT, "shmget");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (!shm_on || (shmflg & SHM_HUGETLB) || (key != IPC_PRIVATE && !(shmflg & IPC_CREAT)) ||
	    hkc_default_page_size(rt_path(), &hps) < 0 || size == 0)
		return real(key, size, shmflg);
	id = real(key, (size + hps - 1) / hps * hps, shmflg | SHM_HUGETLB);
	if (id >= 0) {
		atomic_fetch_add(&shm_huge, 1);
		return id;
	}
	/* An existing segment of another kind, or no pages, or no permission: as asked. */
	if (errno != EEXIST && !atomic_flag_test_and_set(&shm_warned))
		rt_msg(RT_WARNING, "shmget: no huge page segment (%s): falling back to base pages",
		       strerror(errno));
	id = real(key, size, shmflg);
	if (id >= 0)
		atomic_fetch_add(&shm_fallback, 1);
	return id;
}

/* hugectl --report, HUGETLB_REPORT=1: where the program's memory was, at exit. */
static void report(void)
{
	uint64_t anon = 0, hugetlb = 0, sysv_huge = 0, sysv_base = 0, kps = 0, v;
	bool sysv = false;
	char *buf = NULL, *line;
	char msg[512];

	if (hk_path_read_allf(rt_path(), &buf, NULL, HK_PROC_SMAPS) < 0)
		return;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		uint64_t a, b;
		char perms[8];

		/* A mapping's first line: "start-end perms offset dev inode path". */
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s", &a, &b, perms) == 3) {
			sysv = strstr(line, "/SYSV") != NULL;
		} else if (sscanf(line, "Anonymous: %" SCNu64, &v) == 1) {
			anon += v;
		} else if (sscanf(line, "Private_Hugetlb: %" SCNu64, &v) == 1 ||
			   sscanf(line, "Shared_Hugetlb: %" SCNu64, &v) == 1) {
			hugetlb += v;
			if (sysv)
				sysv_huge += v;
		} else if (sscanf(line, "Rss: %" SCNu64, &v) == 1 && sysv) {
			sysv_base += v;
		} else if (sscanf(line, "KernelPageSize: %" SCNu64, &v) == 1 && v > 4 && v > kps) {
			kps = v;
		}
	}
	free(buf);
	snprintf(msg, sizeof(msg),
		 "hugekit report: %" PRIu64
		 " kB of anonymous and heap memory on huge pages, %" PRIu64
		 " kB on base pages (%.1f %% huge, page size %" PRIu64
		 " kB); shared memory: %" PRIu64 " kB huge, %" PRIu64
		 " kB base; shmget: %d segments huge, %d fell back\n",
		 hugetlb - sysv_huge, anon,
		 (hugetlb - sysv_huge + anon) ? 100.0 * (double)(hugetlb - sysv_huge) /
							(double)(hugetlb - sysv_huge + anon)
					      : 0.0,
		 kps, sysv_huge, sysv_base, atomic_load(&shm_huge), atomic_load(&shm_fallback));
	if (write(STDERR_FILENO, msg, strlen(msg)) < 0)
		return;
}

__attribute__((constructor)) static void rt_init(void)
{
	read_verbosity();
	if (restricted_out())
		return;
	shm_on = env_yes("HUGETLB_SHM");
	report_on = env_yes("HUGETLB_REPORT");
	setup_heap();
	unsetenv("HK_RT_REEXEC");
}

__attribute__((destructor)) static void rt_fini(void)
{
	if (report_on)
		report();
}
