// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * seg-test: a program that knows nothing of huge pages, with 6 MiB of text
 * (48 functions of 128 KiB), 4 MiB of initialized data, a RELRO table and
 * 8 MiB of bss. Built as a PIE (seg-test) and not (seg-test-nopie).
 *   seg-test check: calls every function, checks data and bss, dladdr,
 *     backtrace and dl_iterate_phdr, then prints one line per part from its
 *     own /proc/self/smaps: "text hugetlb|thp|base PERMS", "relro PERMS",
 *     "data hugetlb|thp|base", "bss hugetlb|thp|base", and "ok".
 *   seg-test fork: a child prints "child bss HOW (was HOW)" (its bss after
 *     fork, and the parent's before), writes data and bss, checks them,
 *     exits 0; the parent's stay as they were. The child's text is backed
 *     as the parent's. seg-test fork-threads: the same while two threads of
 *     the parent write to the bss.
 *   seg-test exec: executes itself with "check" (does the child inherit?).
 *   seg-test dlopen: dlopen(libm.so.6) and a call into it, after the move.
 * Exit 0 when every check held; else the failed check on stderr, exit 1.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* clang-format off */
#define FN(i)                                                                                      \
	long fn##i(long x);                                                                        \
	__attribute__((noinline)) long fn##i(long x)                                               \
	{                                                                                          \
		__asm__ volatile(".fill 131072,1,0x90");                                           \
		return x * 3 + i;                                                                  \
	}
#define FN8(a) FN(a##0) FN(a##1) FN(a##2) FN(a##3) FN(a##4) FN(a##5) FN(a##6) FN(a##7)
FN8(1) FN8(2) FN8(3) FN8(4) FN8(5) FN8(6)
#define R8(a) fn##a##0, fn##a##1, fn##a##2, fn##a##3, fn##a##4, fn##a##5, fn##a##6, fn##a##7
long (*const table[])(long) = {R8(1), R8(2), R8(3), R8(4), R8(5), R8(6)};
/* clang-format on */
#define NFN (sizeof(table) / sizeof(table[0]))

#define NDATA (512 * 1024)
long data[NDATA] = {[0] = 11, [NDATA / 2] = 22, [NDATA - 1] = 33};
static char bss[8 << 20];
/*
 * Defined in seg-bsslib, whose constructor fills it before the runtime's
 * runs: a copy relocation puts it in this program's bss, whose touched
 * pages must be copied (HUGETLB_MINIMAL_COPY copies only those).
 */
extern char seg_lib_buf[3 << 20];
/* Relocated pointers in a const table: .data.rel.ro, under RELRO in a PIE. */
static const char *const relro_names[] = {"one", "two", "three"};

static int failed(const char *what)
{
	fprintf(stderr, "seg-test: %s\n", what);
	return 1;
}

/* Of the mapping holding addr: its permissions, and how it is backed. */
static void where(const void *addr, char *perms, const char **how)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	uintptr_t a, b, x = (uintptr_t)addr;
	bool in = false;
	unsigned long kb;

	strcpy(perms, "?");
	*how = "none";
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char p[8];

		/* A mapping's first line: "start-end perms ..."; the others are "Key: value". */
		if (sscanf(line, "%lx-%lx %7s", &a, &b, p) == 3) {
			if (in)
				break;
			in = a <= x && x < b;
			if (in) {
				strcpy(perms, p);
				*how = "base";
			}
			continue;
		}
		if (in && sscanf(line, "KernelPageSize: %lu kB", &kb) == 1 && kb > 4)
			*how = "hugetlb";
		if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1 && kb > 0)
			*how = "thp";
	}
	fclose(f);
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	int *found = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + p->p_vaddr, f = (uintptr_t)fn33;

		if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && s <= f && f < s + p->p_memsz)
			*found = 1;
	}
	return 1; /* the first object: the program */
}

/*
 * A backtrace taken in moved text names the function it was taken in. Not
 * static (-rdynamic exports it, so backtrace_symbols can name it) and never
 * inlined: in an optimized build check() is inlined into main and tail-called,
 * so its caller's frame is libc's, which has no name.
 */
int backtrace_names_itself(void);
__attribute__((noinline)) int backtrace_names_itself(void)
{
	void *frames[8];
	char **syms;
	int n = backtrace(frames, 8), ok;

	if (n < 1 || !(syms = backtrace_symbols(frames, 1)))
		return 0;
	ok = strstr(syms[0], "backtrace_names_itself") != NULL;
	free(syms);
	return ok;
}

static int check(void)
{
	long sum = 0;
	char perms[8];
	const char *how;
	Dl_info di;
	int found = 0;

	long want = 0;

	/* fnAB(1) returns 3 + AB. */
	for (size_t i = 0; i < NFN; i++)
		sum += table[i](1);
	for (int a = 1; a <= 6; a++)
		for (int b = 0; b < 8; b++)
			want += 3 + a * 10 + b;
	if (sum != want)
		return failed("the functions return other values");
	sum = 0;
	for (long i = 0; i < NDATA; i++)
		sum += data[i];
	if (data[0] != 11 || data[NDATA / 2] != 22 || data[NDATA - 1] != 33 || sum != 66)
		return failed("data changed");
	for (size_t i = 0; i < sizeof(bss); i += 4096)
		if (bss[i])
			return failed("bss is not zero");
	for (size_t i = 0; i < sizeof(bss); i += 4096)
		bss[i] = (char)(i >> 12);
	for (size_t i = 0; i < sizeof(bss); i += 4096)
		if (bss[i] != (char)(i >> 12))
			return failed("bss does not keep what is written");
	for (size_t i = 0; i < sizeof(seg_lib_buf); i += 4096)
		if (seg_lib_buf[i] != (char)(1 + i / 4096 % 100))
			return failed("bss written by a library's constructor changed");
	if (strcmp(relro_names[2], "three") != 0)
		return failed("RELRO table changed");
	if (!dladdr((void *)fn33, &di) || !di.dli_fname || !di.dli_sname ||
	    strcmp(di.dli_sname, "fn33") != 0)
		return failed("dladdr does not name fn33");
	if (!backtrace_names_itself())
		return failed("backtrace names no function");
	dl_iterate_phdr(phdr_cb, &found);
	if (!found)
		return failed("dl_iterate_phdr does not hold fn33");
	where((void *)fn33, perms, &how);
	printf("text %s %s\n", how, perms);
	where(&relro_names, perms, &how);
	printf("relro %s\n", perms);
	where(&data[NDATA / 2], perms, &how);
	printf("data %s\n", how);
	where(&bss[sizeof(bss) / 2], perms, &how);
	printf("bss %s\n", how);
	printf("ok\n");
	return 0;
}

static atomic_bool stop;

static void *writer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		for (size_t i = 0; i < sizeof(bss) / 2; i += 4096)
			bss[i]++;
	return NULL;
}

static int do_fork(int threads)
{
	pthread_t t[2];
	const char *text, *how;
	char perms[8];
	int st;
	pid_t pid;

	data[7] = 7;
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, writer, NULL);
	where((void *)fn33, perms, &text);
	where(&bss[sizeof(bss) / 2], perms, &how);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		const char *now;

		char line[64];
		int n;

		/*
		 * Text stays as it was (never written); private hugetlb data is the
		 * child's own copy: on hugetlb pages where the pool had room for it.
		 */
		where((void *)fn33, perms, &now);
		if (strcmp(now, text) != 0)
			_exit(5);
		where(&bss[sizeof(bss) / 2], perms, &now);
		n = snprintf(line, sizeof(line), "child bss %s (was %s)\n", now, how);
		if (write(STDOUT_FILENO, line, (size_t)n) != n)
			_exit(6);
		for (long i = 0; i < NDATA; i += 512)
			data[i] = -i;
		memset(bss + sizeof(bss) / 2, 5, sizeof(bss) / 2);
		for (long i = 0; i < NDATA; i += 512)
			if (data[i] != -i)
				_exit(2);
		for (size_t i = sizeof(bss) / 2; i < sizeof(bss); i += 4096)
			if (bss[i] != 5)
				_exit(3);
		_exit(table[5](2) == 3 * 2 + 15 ? 0 : 4);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return failed("fork or wait failed");
	atomic_store(&stop, true);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return failed("the child failed");
	if (data[7] != 7 || data[512] != 0 || bss[sizeof(bss) - 1] != 0)
		return failed("the child's writes reached the parent");
	printf("ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "check";

	if (strcmp(mode, "check") == 0)
		return check();
	if (strcmp(mode, "fork") == 0)
		return do_fork(0);
	if (strcmp(mode, "fork-threads") == 0)
		return do_fork(2);
	if (strcmp(mode, "exec") == 0) {
		char *args[] = {argv[0], (char *)"check", NULL};

		fflush(stdout);
		execv("/proc/self/exe", args);
		return failed("exec failed");
	}
	if (strcmp(mode, "dlopen") == 0) {
		void *h = dlopen("libm.so.6", RTLD_NOW);
		double (*c)(double) = h ? (double (*)(double))dlsym(h, "cos") : NULL;

		if (!c || c(0.0) != 1.0)
			return failed("dlopen or the call failed");
		return check();
	}
	return failed("unknown mode");
}
