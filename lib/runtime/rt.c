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
#include <limits.h>
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
#include "parse.h"
#include "tunables.h"

extern char **environ;

/* Internal variables: the guard of the second start, and the pid of the launched program. */
#define RT_ENV_REEXEC "HK_RT_REEXEC"
#define RT_ENV_PID "HK_RT_PID"

static int verbose = RT_WARNING;
static struct hkc_path root_path = {.rootfd = -1};
static const struct hkc_path no_path = {.rootfd = -1, .root = (char *)"/"};
static pthread_mutex_t path_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool path_ready;
static atomic_size_t base_page;
/* report_on: 1 in the launched program, 2 in every process (HUGETLB_REPORT=all). */
static int report_on;
static bool shm_on;
/* Whether this process is the program hugectl launched (or no launcher said which). */
static bool launched = true;
/* Whether the run's warning was said already, by an earlier image of this process. */
static bool said;
/* This image's pid at start: a forked child (another pid) is not the launched program. */
static pid_t start_pid;
static atomic_int shm_huge, shm_fallback;
static atomic_flag shm_warned = ATOMIC_FLAG_INIT;
static int (*real_shmget)(key_t, size_t, int);
static pthread_once_t shmget_once = PTHREAD_ONCE_INIT;

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

/*
 * Not pthread_once: a first look that fails (EMFILE, an open() that a
 * wrapper makes fail) is tried again at the next call.
 */
const struct hkc_path *rt_path(void)
{
	if (atomic_load_explicit(&path_ready, memory_order_acquire))
		return &root_path;
	pthread_mutex_lock(&path_lock);
	if (!atomic_load(&path_ready) && hkc_path_init(&root_path, "/") == 0)
		atomic_store_explicit(&path_ready, true, memory_order_release);
	pthread_mutex_unlock(&path_lock);
	return atomic_load(&path_ready) ? &root_path : &no_path;
}

bool rt_path_is_ready(void)
{
	return atomic_load_explicit(&path_ready, memory_order_acquire);
}

size_t rt_base_page_size(void)
{
	size_t v = atomic_load_explicit(&base_page, memory_order_relaxed);
	long l;

	if (v)
		return v;
	l = sysconf(_SC_PAGESIZE);
	v = l > 0 ? (size_t)l : 4096;
	atomic_store_explicit(&base_page, v, memory_order_relaxed);
	return v;
}

/*
 * The environment is read with secure_getenv: setuid and file-capability
 * programs ignore it. It is glibc's own, which no program interposes (bash
 * exports its own getenv, setenv and unsetenv, but not secure_getenv).
 */
static const char *env(const char *name)
{
	return secure_getenv(name);
}

static bool env_yes(const char *name)
{
	const char *v = env(name);

	return v && (strcasecmp(v, "yes") == 0 || strcmp(v, "1") == 0);
}

/* Take NAME out of environ, in place: no unsetenv, which the program may interpose. */
static void env_drop(const char *name)
{
	size_t len = strlen(name);
	char **r, **w;

	if (!environ)
		return;
	for (r = w = environ; *r; r++)
		if (strncmp(*r, name, len) != 0 || (*r)[len] != '=')
			*w++ = *r;
	*w = NULL;
}

/*
 * A warning about this run: said by the launched program; its children say
 * it only at the information level (-v), so that a shell loop does not repeat
 * it for each process.
 */
int rt_run_level(int level)
{
	return (launched && !said) || level > RT_INFO ? level : RT_INFO;
}

/*
 * The run's warning is said: mark HK_RT_PID (":said") so that the images this
 * process executes next (a wrapper script, a pyenv shim, exec in a shell)
 * stay quiet too. The entry is replaced in place in environ, the array that
 * main() gets, so that a shell that keeps its own copy of the environment
 * (bash) passes the mark on as well. Only in the launched program: its
 * children say the warning at the information level anyway.
 */
void rt_mark_said(void)
{
	static char entry[64];
	size_t len = strlen(RT_ENV_PID);

	if (said || !environ || !launched)
		return;
	said = true;
	for (char **e = environ; *e; e++) {
		if (strncmp(*e, RT_ENV_PID, len) == 0 && (*e)[len] == '=') {
			snprintf(entry, sizeof(entry), "%s=%ld:said", RT_ENV_PID, (long)getpid());
			*e = entry;
			return;
		}
	}
}

static void read_verbosity(void)
{
	verbose = hkc_verbosity_env(env("HUGETLB_VERBOSE"), env("HUGETLB_DEBUG"), verbose);
}

/* HK_RT_PID, set by hugectl to its pid, which the program it executes keeps. */
static void read_launched(void)
{
	const char *v = env(RT_ENV_PID);
	char *end;
	long pid;

	if (!v)
		return;
	errno = 0;
	pid = strtol(v, &end, 10);
	if (errno || end == v || pid <= 0)
		return;
	if (strcmp(end, ":said") == 0)
		said = true;
	else if (*end)
		return;
	launched = pid == (long)getpid();
}

/* HUGETLB_RESTRICT_EXE=a:b: active only in programs with one of these names. */
static bool restricted_out(void)
{
	const char *list = env("HUGETLB_RESTRICT_EXE");
	const char *base;
	char *exe = NULL;
	size_t len;

	if (!list || !*list || hkc_path_read_allf(rt_path(), &exe, NULL, HK_PROC_SELF_CMDLINE) < 0)
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
 * The default huge page size, read at the first call that can read it (0
 * until then): for the heap, the pool check and shmget.
 */
uint64_t rt_default_page_size(void)
{
	static atomic_uint_fast64_t cached;
	uint64_t v = atomic_load_explicit(&cached, memory_order_relaxed);

	if (!v && hkc_default_page_size(rt_path(), &v) == 0)
		atomic_store_explicit(&cached, v, memory_order_relaxed);
	return v;
}

/*
 * HUGETLB_MORECORE: yes (the default size, or HUGETLB_DEFAULT_PAGE_SIZE),
 * a size, or thp. Returns the page size for hkc_heap_tunables (0 thp, 1
 * default), or UINT64_MAX when the heap is not asked for or cannot be.
 */
static uint64_t heap_request(void)
{
	const char *v = env("HUGETLB_MORECORE");
	const char *dps = env("HUGETLB_DEFAULT_PAGE_SIZE");
	uint64_t size;

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
	if (!hkc_path_existsf(rt_path(), HK_SYS_HUGEPAGES_SIZE, size / 1024)) {
		rt_msg(RT_WARNING, "Hugepage size %" PRIu64 " unavailable: heap not on huge pages",
		       size);
		return UINT64_MAX;
	}
	return rt_default_page_size() == size ? 1 : size;
}

/* argv of this process, from /proc/self/cmdline (malloc'd, NULL-terminated). */
static char **own_argv(void)
{
	size_t len = 0, n = 0, i = 0;
	char *buf = NULL, **argv;
	int rc = hkc_path_read_allf(rt_path(), &buf, &len, HK_PROC_SELF_CMDLINE);

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

/*
 * Huge pages this process holds already: its heap may have taken the last
 * free page of the pool (by a constructor's malloc, before ours ran), and
 * then the heap is on huge pages, not "on base pages".
 */
static uint64_t own_hugetlb_kb(void)
{
	uint64_t kb = 0;
	char *buf = NULL;

	if (hkc_path_read_allf(rt_path(), &buf, NULL, HK_PROC_SMAPS_ROLLUP) == 0 &&
	    hkc_kv_find_u64(buf, "Private_Hugetlb", &kb) < 0)
		kb = 0;
	free(buf);
	return kb;
}

/* Whether the pool of this size has a page to give (free, or room to overcommit). */
static bool pool_has_pages(uint64_t size)
{
	uint64_t free_p = 0, resv = 0, oc = 0, surp = 0;
	const struct hkc_path *p = rt_path();
	uint64_t kb;

	if (size == 1)
		size = rt_default_page_size();
	kb = size / 1024;
#define RD(f, v) hkc_path_read_u64f(p, &v, HK_SYS_HUGEPAGES_SIZE "/" f, kb)
	if (RD("free_hugepages", free_p) < 0 || RD("resv_hugepages", resv) < 0 ||
	    RD("nr_overcommit_hugepages", oc) < 0 || RD("surplus_hugepages", surp) < 0)
		return true; /* cannot tell: say nothing */
#undef RD
	return free_p > resv || surp < oc || own_hugetlb_kb() > 0;
}

/*
 * The environment of the second start: environ as it is now, without the
 * old GLIBC_TUNABLES and guard, plus the tunables, the guard, and the pid
 * of this process (HK_RT_PID, so that its children stay quiet) unless a
 * launcher set one. Built here and given to execve: a program that exports
 * its own setenv (bash does) keeps what setenv sets to itself.
 */
static char **reexec_env(const char *tunables, char **own)
{
	size_t n = 0, i = 0;
	char **envp;

	own[0] = own[1] = NULL;
	for (char **e = environ; e && *e; e++)
		n++;
	envp = calloc(n + 4, sizeof(*envp));
	if (!envp || asprintf(&own[0], "GLIBC_TUNABLES=%s", tunables) < 0 ||
	    (!env(RT_ENV_PID) && asprintf(&own[1], RT_ENV_PID "=%ld", (long)getpid()) < 0)) {
		free(envp);
		free(own[0]);
		own[0] = NULL;
		return NULL;
	}
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, "GLIBC_TUNABLES=", 15) != 0 &&
		    strncmp(*e, RT_ENV_REEXEC "=", sizeof(RT_ENV_REEXEC)) != 0)
			envp[i++] = *e;
	envp[i++] = own[0];
	envp[i++] = (char *)RT_ENV_REEXEC "=1";
	if (own[1])
		envp[i++] = own[1];
	envp[i] = NULL;
	return envp;
}

static void setup_heap(void)
{
	uint64_t size = heap_request();
	const char *have = env("GLIBC_TUNABLES");
	bool again = env(RT_ENV_REEXEC) != NULL;
	char *tunables = NULL, **argv, **envp, *own[2] = {NULL, NULL};

	/* The guard goes at once, whatever happens: the program's children start afresh. */
	env_drop(RT_ENV_REEXEC);
	if (size == UINT64_MAX)
		return;
	/* Already started with the tunables (hugectl, or our own second start). */
	if (have && strstr(have, "glibc.malloc.hugetlb=")) {
		if (size)
			rt_fork_watch();
		/* glibc falls back to base pages by itself; say so, once a run. */
		if (size && !pool_has_pages(size)) {
			rt_msg(rt_run_level(RT_WARNING),
			       "no free huge pages in the pool: the heap stays on base "
			       "pages (grow it with hugeadm --pool-pages-min)");
			rt_mark_said();
		}
		return;
	}
	if (again) {
		rt_msg(RT_WARNING, "the heap could not be put on huge pages (GLIBC_TUNABLES lost)");
		return;
	}
	if (hkc_heap_tunables(have, size, &tunables) < 0)
		return;
	argv = own_argv();
	envp = argv ? reexec_env(tunables, own) : NULL;
	if (!envp) {
		rt_msg(RT_WARNING,
		       "cannot start the program again (%s): the heap stays on "
		       "base pages",
		       argv ? strerror(ENOMEM) : "its arguments cannot be read");
		goto out;
	}
	/* glibc reads its tunables only at start: start again, once, with them set. */
	rt_msg(RT_INFO, "starting again with GLIBC_TUNABLES=%s", tunables);
	execve(HK_ABS(HK_PROC_SELF_EXE), argv, envp);
	rt_msg(RT_WARNING, "cannot start the program again (%s): the heap stays on base pages",
	       strerror(errno));
	free(envp);
	free(own[0]);
	free(own[1]);
out:
	if (argv)
		free(argv[0]);
	free(argv);
	free(tunables);
}

static void resolve_shmget(void)
{
	real_shmget = (int (*)(key_t, size_t, int))dlsym(RTLD_NEXT, "shmget");
}

/*
 * SysV shared memory on huge pages (HUGETLB_SHM=yes): segments are created
 * with SHM_HUGETLB and their size rounded up to a huge page; when the pool or
 * the permissions refuse, the segment is made as asked, with a warning.
 */
RT_EXPORT int shmget(key_t key, size_t size, int shmflg)
{
	uint64_t hps;
	int id;

	/* Resolved in the constructor; here too for a call from an earlier constructor. */
	pthread_once(&shmget_once, resolve_shmget);
	if (!real_shmget) {
		errno = ENOSYS;
		return -1;
	}
	if (!shm_on || (shmflg & SHM_HUGETLB) || (key != IPC_PRIVATE && !(shmflg & IPC_CREAT)) ||
	    size == 0 || !(hps = rt_default_page_size()) || size > SIZE_MAX - (hps - 1))
		return real_shmget(key, size, shmflg);
	id = real_shmget(key, (size + hps - 1) / hps * hps, shmflg | SHM_HUGETLB);
	if (id >= 0) {
		atomic_fetch_add(&shm_huge, 1);
		return id;
	}
	/* An existing segment of another kind, or no pages, or no permission: as asked. */
	if (errno != EEXIST && !atomic_flag_test_and_set(&shm_warned))
		rt_msg(rt_run_level(RT_WARNING),
		       "shmget: no huge page segment (%s): falling back to base pages",
		       strerror(errno));
	id = real_shmget(key, size, shmflg);
	if (id >= 0)
		atomic_fetch_add(&shm_fallback, 1);
	return id;
}

/* Add the number after "Key:" in line to *sum; false when line is another key. */
static bool add_kb(const char *line, const char *key, uint64_t *sum)
{
	size_t len = strlen(key);
	uint64_t v;

	if (strncmp(line, key, len) != 0 || sscanf(line + len, "%" SCNu64, &v) != 1)
		return false;
	*sum += v;
	return true;
}

/* What rt_segments() did, after the report's line: per kind asked, on huge and on base pages. */
static void report_segments(const char *who)
{
	char msg[200];

	for (int k = 0; k < HKC_SEG_NKINDS; k++) {
		uint64_t huge, base;

		if (!rt_segments_bytes(k, &huge, &base))
			continue;
		snprintf(msg, sizeof(msg),
			 "hugekit report%s: program %s: %" PRIu64 " kB on huge pages, %" PRIu64
			 " kB on base pages\n",
			 who, hkc_seg_kind_name(k), huge / 1024, (base + 1023) / 1024);
		if (write(STDERR_FILENO, msg, strlen(msg)) < 0)
			return;
	}
}

/* hugectl --report, HUGETLB_REPORT=1 or all: where the program's memory was, at exit. */
static void report(void)
{
	uint64_t anon = 0, hugetlb = 0, sysv_huge = 0, sysv_base = 0, kps = 0, v, h;
	bool sysv = false, segment = false;
	char *buf = NULL, *line, *next;
	char msg[600], who[48] = "";

	if (hkc_path_read_allf(rt_path(), &buf, NULL, HK_PROC_SMAPS) < 0)
		return;
	/* One line at a time, by hand: strtok is not thread-safe. */
	for (line = buf; line && *line; line = next) {
		uint64_t a, b;
		char perms[8];

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		h = 0;
		/* A mapping's first line: "start-end perms offset dev inode path". */
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s", &a, &b, perms) == 3) {
			sysv = strstr(line, "/SYSV") != NULL;
			/* The program's segments have lines of their own, after this one. */
			segment = rt_segments_holds((uintptr_t)a, (uintptr_t)b);
		} else if (segment) {
			continue;
		} else if (add_kb(line, "Anonymous:", &anon)) {
			continue;
		} else if (add_kb(line, "Private_Hugetlb:", &h) ||
			   add_kb(line, "Shared_Hugetlb:", &h)) {
			hugetlb += h;
			if (sysv)
				sysv_huge += h;
		} else if (sysv && add_kb(line, "Rss:", &sysv_base)) {
			continue;
		} else if (sscanf(line, "KernelPageSize: %" SCNu64, &v) == 1 && v > 4 && v > kps) {
			kps = v;
		}
	}
	free(buf);
	/* In every process (HUGETLB_REPORT=all), the others say who they are. */
	if (!launched || getpid() != start_pid)
		snprintf(who, sizeof(who), " (pid %ld)", (long)getpid());
	snprintf(msg, sizeof(msg),
		 "hugekit report%s: %" PRIu64
		 " kB of anonymous and heap memory on huge pages, %" PRIu64
		 " kB on base pages (%.1f %% huge, page size %" PRIu64
		 " kB); shared memory: %" PRIu64 " kB huge, %" PRIu64
		 " kB base; shmget: %d segments huge, %d fell back\n",
		 who, hugetlb - sysv_huge, anon,
		 (hugetlb - sysv_huge + anon) ? 100.0 * (double)(hugetlb - sysv_huge) /
							(double)(hugetlb - sysv_huge + anon)
					      : 0.0,
		 kps, sysv_huge, sysv_base, atomic_load(&shm_huge), atomic_load(&shm_fallback));
	if (write(STDERR_FILENO, msg, strlen(msg)) < 0)
		return;
	report_segments(who);
}

/* HUGETLB_REPORT: 1 or yes, the launched program; all, every process. */
static int read_report(void)
{
	const char *v = env("HUGETLB_REPORT");

	if (v && strcasecmp(v, "all") == 0)
		return 2;
	return env_yes("HUGETLB_REPORT") && launched ? 1 : 0;
}

/* Locks that a fork() in another thread must not leave held in the child. */
static void prefork(void)
{
	pthread_mutex_lock(&path_lock);
	rt_api_prefork();
}

static void postfork(void)
{
	rt_api_postfork();
	pthread_mutex_unlock(&path_lock);
}

__attribute__((constructor)) static void rt_init(void)
{
	pthread_atfork(prefork, postfork, postfork);
	pthread_once(&shmget_once, resolve_shmget);
	rt_base_page_size();
	start_pid = getpid();
	read_verbosity();
	read_launched();
	if (restricted_out()) {
		env_drop(RT_ENV_REEXEC);
		return;
	}
	shm_on = env_yes("HUGETLB_SHM");
	report_on = read_report();
	setup_heap();
	/*
	 * After the heap: setup_heap() may execute the program again (for the
	 * tunables) and returns only in the process that goes on to main().
	 * Segments moved before it would be moved twice, and said twice.
	 */
	rt_segments();
}

__attribute__((destructor)) static void rt_fini(void)
{
	/* HUGETLB_REPORT=1: the launched program, not its forked children. */
	if (report_on == 2 || (report_on == 1 && getpid() == start_pid))
		report();
}
