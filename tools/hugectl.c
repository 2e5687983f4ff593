// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugectl: run a program with its memory on huge pages, unchanged and
 * unrelinked. It sets libhugetlbfs's environment (HUGETLB_*) for the runtime
 * library, preloads that library by its absolute path, sets GLIBC_TUNABLES so
 * that glibc's malloc puts the heap on huge pages (glibc >= 2.35), and
 * executes the program. --dry-run prints the variables, NAME='value', in
 * libhugetlbfs 2.23's order instead. The runtime does the work: it backs the
 * heap and shared memory, and remaps the program's segments (text, data, bss)
 * from these variables before main.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <hugekit/hugekit.h>

#include "hugectl.h"
#include "lazy.h"
#include "opts.h"
#include "util.h"

enum {
	OPT_TEXT = HK_OPT_LONG_BASE,
	OPT_DATA,
	OPT_BSS,
	OPT_DISABLE,
	OPT_HEAP,
	OPT_SHM,
	OPT_THP,
	OPT_NO_RESERVE,
	OPT_SHARE_TEXT,
	OPT_PERF_MAP,
	OPT_NO_PRELOAD,
	OPT_FORCE_PRELOAD,
	OPT_LIBRARY_USE_PATH,
	OPT_LIBRARY_PATH,
	OPT_DRY_RUN,
	OPT_VERBOSE,
	OPT_MEMBIND,
	OPT_REPORT,
	OPT_COLLAPSE,
	OPT_ALL,
	OPT_JSON,
};

// clang-format off
static const struct hkt_opt opts[] = {
	{ "heap",         0,   HK_ARG_OPTIONAL, OPT_HEAP,          "SIZE", "the malloc heap on huge pages (of SIZE, default:\nthe default huge page size)", 0 },
	{ "shm",          0,   HK_ARG_OPTIONAL, OPT_SHM,           "SIZE", "SysV shared memory (shmget) on huge pages", 0 },
	{ "thp",          0,   HK_ARG_NONE,     OPT_THP,           NULL, "transparent huge pages instead, for the heap and\nfor --text, --data and --bss without SIZE", 0 },
	{ "membind",      0,   HK_ARG_REQUIRED, OPT_MEMBIND,       "NODES", "take memory, huge pages too, from these NUMA nodes", 0 },
	{ "report",       0,   HK_ARG_OPTIONAL, OPT_REPORT,        "all", "at exit, say how much memory was on huge pages\n(=all: in every process it starts too)", 0 },
	{ "no-reserve",   0,   HK_ARG_NONE,     OPT_NO_RESERVE,    NULL, "HUGETLB_NO_RESERVE=yes (MAP_NORESERVE)", 0 },
	{ "text",         0,   HK_ARG_OPTIONAL, OPT_TEXT,          "SIZE", "the program's text (and read-only data) on huge\npages of SIZE (default: the default size; thp)", 0 },
	{ "data",         0,   HK_ARG_OPTIONAL, OPT_DATA,          "SIZE", "its initialized data and bss on huge pages", 0 },
	{ "bss",          0,   HK_ARG_OPTIONAL, OPT_BSS,           "SIZE", "its bss and initialized data on huge pages", 0 },
	{ "disable",      0,   HK_ARG_NONE,     OPT_DISABLE,       NULL, "HUGETLB_ELFMAP=no: no segment remapping", 0 },
	{ "share-text",   0,   HK_ARG_NONE,     OPT_SHARE_TEXT,    NULL, "copies of the program share their huge page text", 0 },
	{ "perf-map",     0,   HK_ARG_NONE,     OPT_PERF_MAP,      NULL, "write /tmp/perf-PID.map for the text moved to huge\npages, so that perf names its functions", 0 },
	{ "no-preload",   0,   HK_ARG_NONE,     OPT_NO_PRELOAD,    NULL, "do not preload the runtime library", 0 },
	{ "force-preload", 0,  HK_ARG_NONE,     OPT_FORCE_PRELOAD, NULL, "preload the runtime library whatever the options", 0 },
	{ "library-use-path", 0, HK_ARG_NONE,   OPT_LIBRARY_USE_PATH, NULL, "leave LD_LIBRARY_PATH alone (always the case now)", 0 },
	{ "library-path", 0,   HK_ARG_REQUIRED, OPT_LIBRARY_PATH,  "PATH", "prepend PATH (or PATH/lib:PATH/lib64) to LD_LIBRARY_PATH", 0 },
	{ "dry-run",      0,   HK_ARG_NONE,     OPT_DRY_RUN,       NULL, "print the environment, NAME='value', and run nothing\n(--collapse: say what would be asked)", 0 },
	{ "collapse",     0,   HK_ARG_REQUIRED, OPT_COLLAPSE,      "PID", "collapse the memory of running process PID onto\ntransparent huge pages, and report (--heap, --text)", 0 },
	{ "all",          0,   HK_ARG_NONE,     OPT_ALL,           NULL, "with --collapse: the heap and the text (the default)", 0 },
	{ "json",         0,   HK_ARG_NONE,     OPT_JSON,          NULL, "with --collapse: the report in JSON", 0 },
	{ "verbose",      0,   HK_ARG_REQUIRED, OPT_VERBOSE,       "LEVEL", "message level of hugectl and the runtime (0-99)", 0 },
	{ NULL,           'v', HK_ARG_NONE,     'v',               NULL, "raise the message level by one", 0 },
	{ NULL,           'q', HK_ARG_NONE,     'q',               NULL, "lower the message level by one", 0 },
	{ "help",         'h', HK_ARG_NONE,     'h',               NULL, "display this help", 0 },
	{ "version",      'V', HK_ARG_NONE,     'V',               NULL, "display version", 0 },
	{ "list-options", 0,   HK_ARG_NONE,     HK_OPT_LIST_OPTIONS,  NULL, "", HK_OPT_HIDDEN },
	{ 0 },
};
// clang-format on

struct hugectl {
	int verbose;
	bool dry_run;
	/* Segment remapping: the R and W parts of HUGETLB_ELFMAP. */
	bool text, data, bss, disable;
	const char *text_size, *data_size, *bss_size;
	int maps;	  /* mapping options given: text data bss heap shm disable */
	int heap_shm;	  /* of those, --heap and --shm */
	const char *heap; /* "yes" or a size */
	bool heap_sized;  /* --heap=SIZE given */
	bool shm, thp, no_reserve, share, perf_map, no_preload, force_preload;
	const char *report; /* "1", or "all" for every process */
	const char *library_path;
	const char *membind;
	/* --collapse PID, the options only it takes, and the first option it does not take. */
	const char *collapse;
	bool all, json;
	const struct hkt_opt *not_collapse;
};

static const char *const level_names[] = {"", "ERROR", "WARNING", "INFO", "DEBUG"};

static void vmsg(int verbose, int level, const char *fmt, va_list ap)
{
	if (level > verbose)
		return;
	fprintf(stderr, "%s: %s: ", hkt_prog(), level_names[level < L_DEBUG ? level : L_DEBUG]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void hc_msg(int verbose, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(verbose, level, fmt, ap);
	va_end(ap);
}

static void msg(const struct hugectl *c, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void msg(const struct hugectl *c, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(c->verbose, level, fmt, ap);
	va_end(ap);
}

__attribute__((noreturn)) static void usage(void)
{
	/* No format strings: see hkt_opts_print_help. */
	hkt_opts_print_text(stdout, "Usage:\n ");
	hkt_opts_print_text(stdout, hkt_prog());
	hkt_opts_print_text(stdout, " [options] program [arguments]\n ");
	hkt_opts_print_text(stdout, hkt_prog());
	hkt_opts_print_text(stdout,
			    " --collapse PID [--heap|--text|--all] [--json] [--dry-run]\n\n"
			    "Run a program with its heap, shared memory and segments on huge "
			    "pages,\n"
			    "or collapse a running process's memory onto transparent huge "
			    "pages.\n\n"
			    "Options:\n");
	hkt_opts_print_help(stdout, opts);
	hkt_opts_print_text(stdout, "\nSee hugectl(1) and libhugekit-rt(7).\n");
	exit(HK_EXIT_SUCCESS);
}

/* Set (or, dry, print) one variable, in order. */
static void put(const struct hugectl *c, const char *name, const char *value)
{
	msg(c, L_INFO, "%s='%s'", name, value);
	if (c->dry_run)
		printf("%s='%s'\n", name, value);
	else
		setenv(name, value, 1);
}

/*
 * The runtime library: $HK_RT_LIBRARY; else the one of this hugectl's own
 * prefix (bindir/HK_RT_FROM_BINDIR, so a tool installed under any prefix
 * preloads that prefix's runtime), the build tree's (tools/../lib), and last
 * the one of the configured prefix.
 */
static char *runtime_path(void)
{
	static const char *const rel[] = {HK_RT_FROM_BINDIR, "../lib/libhugekit-rt.so.0"};
	const char *env = getenv("HK_RT_LIBRARY");
	char exe[PATH_MAX], *slash, *p;
	const char *execfn;

	if (env && *env)
		return strdup(env);
	/* The file this hugectl was started from, links resolved. */
	execfn = (const char *)getauxval(AT_EXECFN);
	if (execfn && realpath(execfn, exe) && (slash = strrchr(exe, '/'))) {
		*slash = '\0';
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			if (asprintf(&p, "%s/%s", exe, rel[i]) < 0)
				return NULL;
			if (access(p, R_OK) == 0) {
				/* Shown as DIR/libhugekit-rt.so.0, the directory without "..". */
				char dir[PATH_MAX], *r = NULL;

				slash = strrchr(p, '/');
				*slash = '\0';
				if (realpath(p, dir) && asprintf(&r, "%s/%s", dir, slash + 1) < 0)
					r = NULL;
				free(p);
				return r;
			}
			free(p);
		}
	}
	return access(HK_RT_INSTALLED, R_OK) == 0 ? strdup(HK_RT_INSTALLED) : NULL;
}

static int parse_level(struct hugectl *c, const char *arg)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 0 || v > 99) {
		msg(c, L_ERROR, "%s: verbosity out of range 0-99", arg);
		exit(HK_EXIT_FAILURE);
	}
	return (int)v;
}

/* A huge page size the kernel has, for OPT: 1 for the default, else bytes; 0 after a message. */
static uint64_t page_size_arg(struct hugectl *c, struct hk_ctx *ctx, const char *s, const char *opt)
{
	uint64_t size, def = 0;
	uint64_t *sizes;
	size_t n;
	bool found = false;

	if (hk_parse_size_legacy(s, &size) < 0) {
		msg(c, L_ERROR, "%s: invalid huge page size for %s", s, opt);
		return 0;
	}
	if (hk_page_sizes(ctx, &sizes, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			found |= sizes[i] == size;
		free(sizes);
	}
	if (!found) {
		msg(c, L_ERROR, "%s: this kernel has no huge pages of that size (%s)", s, opt);
		return 0;
	}
	return hk_default_page_size(ctx, &def) == 0 && def == size ? 1 : size;
}

/* The size of the W part of HUGETLB_ELFMAP: --data's if given, else --bss's (2.23). */
static const char *w_size(const struct hugectl *c)
{
	return c->data ? c->data_size : c->bss_size;
}

/* A segment size: a huge page size of this kernel, or thp; false after a message. */
static bool segment_size_ok(struct hugectl *c, struct hk_ctx *ctx, const char *s, const char *opt)
{
	return !s || strcasecmp(s, "thp") == 0 || page_size_arg(c, ctx, s, opt) != 0;
}

/*
 * The file execvp would run for NAME: NAME itself when it has a slash, else
 * the first executable regular file of that name in PATH; NULL when none.
 */
static char *program_file(const char *name)
{
	const char *path = getenv("PATH"), *p, *e;
	struct stat st;
	char *f;

	if (strchr(name, '/'))
		return strdup(name);
	for (p = path ? path : "/bin:/usr/bin";; p = e + 1) {
		e = strchrnul(p, ':');
		/* An empty element is the current directory. */
		if (asprintf(&f, "%.*s%s%s", (int)(e - p), p, e > p ? "/" : "", name) < 0)
			return NULL;
		if (access(f, X_OK) == 0 && stat(f, &st) == 0 && S_ISREG(st.st_mode))
			return f;
		free(f);
		if (!*e)
			return NULL;
	}
}

/*
 * An ELF program of this machine's byte order without PT_INTERP: the kernel
 * starts it without the dynamic loader, so nothing is preloaded (static, and
 * static-pie). Not ELF, unreadable, or dynamic: false.
 */
static bool elf_static(int fd)
{
	union {
		Elf64_Ehdr e64;
		Elf32_Ehdr e32;
	} h;
	const uint16_t one = 1;
	const int host = *(const unsigned char *)&one ? ELFDATA2LSB : ELFDATA2MSB;
	uint64_t phoff;
	size_t phnum, phentsize;

	if (pread(fd, &h, sizeof(h), 0) < (ssize_t)sizeof(h.e32) ||
	    memcmp(h.e64.e_ident, ELFMAG, SELFMAG) != 0 || h.e64.e_ident[EI_DATA] != host)
		return false;
	if (h.e64.e_ident[EI_CLASS] == ELFCLASS64) {
		if (h.e64.e_type != ET_EXEC && h.e64.e_type != ET_DYN)
			return false;
		phoff = h.e64.e_phoff, phnum = h.e64.e_phnum, phentsize = h.e64.e_phentsize;
	} else if (h.e64.e_ident[EI_CLASS] == ELFCLASS32) {
		if (h.e32.e_type != ET_EXEC && h.e32.e_type != ET_DYN)
			return false;
		phoff = h.e32.e_phoff, phnum = h.e32.e_phnum, phentsize = h.e32.e_phentsize;
	} else {
		return false;
	}
	if (phentsize < sizeof(Elf32_Phdr) || phnum == 0)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		uint32_t type; /* p_type comes first in both classes */

		if (pread(fd, &type, sizeof(type), (off_t)(phoff + i * phentsize)) != sizeof(type))
			return false;
		if (type == PT_INTERP)
			return false;
	}
	return true;
}

/*
 * Whether the kernel starts the file in secure-execution mode, where the
 * dynamic loader ignores LD_PRELOAD: set-user-ID or set-group-ID to someone
 * else, or file capabilities for a non-root caller, on a mount that honours
 * them.
 */
static bool secure_exec(int fd, const struct stat *st)
{
	struct statvfs vfs;

	if (fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_NOSUID))
		return false;
	return ((st->st_mode & S_ISUID) && st->st_uid != getuid()) ||
	       ((st->st_mode & S_ISGID) && st->st_gid != getgid()) ||
	       (getuid() != 0 && fgetxattr(fd, "security.capability", NULL, 0) >= 0);
}

/*
 * The runtime remaps the segments from inside the program; say so before exec
 * when it cannot be loaded there. A program that cannot be found or read is
 * left to exec to report.
 */
static void check_program(const struct hugectl *c, const char *name)
{
	char *file = program_file(name);
	struct stat st;
	int fd;

	if (!file)
		return;
	/* O_NONBLOCK: a FIFO named as the program must not hang hugectl here. */
	fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if (elf_static(fd))
			msg(c, L_WARNING,
			    "%s: a static program (no PT_INTERP): the runtime cannot be loaded "
			    "into it, its segments stay on base pages",
			    file);
		else if (secure_exec(fd, &st))
			msg(c, L_WARNING,
			    "%s: set-user-ID, set-group-ID or with capabilities: the dynamic "
			    "loader ignores LD_PRELOAD, its segments stay on base pages",
			    file);
	}
	if (fd >= 0)
		close(fd);
	free(file);
}

static char *join(const char *a, const char *sep, const char *b)
{
	char *r;

	if (!b || !*b)
		return strdup(a);
	return asprintf(&r, "%s%s%s", a, sep, b) < 0 ? NULL : r;
}

/*
 * libnuma's warnings (numa_parse_nodestring() prints "node argument 7 is out
 * of range" on stderr), replaced as numa(3) allows: hugectl says what is wrong
 * itself, in one line.
 */
__attribute__((visibility("default"))) void numa_warn(int num, char *fmt, ...)
{
	(void)num;
	(void)fmt;
}

/* "0", "0-1,3": the nodes this machine has, for a message. */
static void nodes_have(const struct hkt_numa *nm, char *buf, size_t sz)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i <= nm->numa_max_node() && n + 16 < sz; i++)
		if (nm->numa_bitmask_isbitset(*nm->numa_nodes_ptr, (unsigned)i))
			n += (size_t)snprintf(buf + n, sz - n, "%s%d", n ? "," : "", i);
}

/* A mapping option (--text, --data, --bss, --disable, --heap, --shm); false for another. */
static bool map_option(struct hugectl *c, int ch)
{
	switch (ch) {
	case OPT_TEXT:
		c->text = true;
		c->text_size = optarg;
		break;
	case OPT_DATA:
		c->data = true;
		c->data_size = optarg;
		break;
	case OPT_BSS:
		c->bss = true;
		c->bss_size = optarg;
		break;
	case OPT_DISABLE:
		c->disable = true;
		break;
	case OPT_HEAP:
		c->heap = optarg ? optarg : "yes";
		c->heap_sized = optarg != NULL;
		c->heap_shm++;
		break;
	case OPT_SHM:
		c->shm = true;
		if (optarg)
			msg(c, L_WARNING,
			    "shm segments may only be mapped in the default hugepage size");
		c->heap_shm++;
		break;
	default:
		return false;
	}
	c->maps++;
	return true;
}

/* The verbosity options (--verbose, -v, -q); false for another. */
static bool level_option(struct hugectl *c, int ch)
{
	if (ch == OPT_VERBOSE) {
		c->verbose = parse_level(c, optarg);
	} else if (ch == 'v') {
		if (c->verbose < 99)
			c->verbose++;
		else
			msg(c, L_WARNING, "verbosity must be at most 99");
	} else if (ch == 'q') {
		if (c->verbose > 0)
			c->verbose--;
		else
			msg(c, L_WARNING, "verbosity must be at least 0");
	} else {
		return false;
	}
	return true;
}

/* The first option given that --collapse does not take, for its message. */
static void note_collapse(struct hugectl *c, int ch)
{
	static const int ok[] = {OPT_COLLAPSE, OPT_HEAP,    OPT_TEXT, OPT_ALL, OPT_JSON,
				 OPT_DRY_RUN,  OPT_VERBOSE, 'v',      'q'};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (ch == ok[i])
			return;
	for (const struct hkt_opt *o = opts; !c->not_collapse && (o->name || o->short_name); o++)
		if (o->id == ch)
			c->not_collapse = o;
}

/* The command line into c; on return optind is the program's name (or argc). */
static void parse_options(struct hugectl *c, int argc, char **argv)
{
	struct hkt_getopt g;
	int ch;

	if (hkt_getopt_init(&g, opts, "+") < 0)
		exit(HK_EXIT_FAILURE);
	while ((ch = hkt_getopt_next(&g, argc, argv)) != -1) {
		note_collapse(c, ch);
		if (map_option(c, ch) || level_option(c, ch))
			continue;
		switch (ch) {
		case OPT_THP:
			c->thp = true;
			break;
		case OPT_NO_RESERVE:
			c->no_reserve = true;
			break;
		case OPT_SHARE_TEXT:
			c->share = true;
			break;
		case OPT_PERF_MAP:
			c->perf_map = true;
			break;
		case OPT_NO_PRELOAD:
			c->no_preload = true;
			break;
		case OPT_FORCE_PRELOAD:
			c->force_preload = true;
			break;
		case OPT_LIBRARY_USE_PATH:
			break;
		case OPT_LIBRARY_PATH:
			c->library_path = optarg;
			break;
		case OPT_DRY_RUN:
			c->dry_run = true;
			break;
		case OPT_MEMBIND:
			c->membind = optarg;
			break;
		case OPT_COLLAPSE:
			c->collapse = optarg;
			break;
		case OPT_ALL:
			c->all = true;
			break;
		case OPT_JSON:
			c->json = true;
			break;
		case OPT_REPORT:
			if (optarg && strcmp(optarg, "all") != 0) {
				msg(c, L_ERROR, "%s: invalid value for --report (only 'all')",
				    optarg);
				exit(HK_EXIT_FAILURE);
			}
			c->report = optarg ? "all" : "1";
			break;
		default:
			hkt_opts_standard(ch, opts, usage);
		}
	}
}

/* --membind's nodes, or NULL after saying what is wrong with them. */
static struct bitmask *membind_nodes(struct hugectl *c)
{
	const struct hkt_numa *nm;
	const char *why = "";
	struct bitmask *nodes;
	char have[256];

	if (!*c->membind) {
		msg(c, L_ERROR, "--membind: an empty node list");
		return NULL;
	}
	/* libnuma, loaded for --membind only (lazy.h). */
	nm = hkt_numa(&why);
	if (!nm) {
		msg(c, L_ERROR, "--membind: cannot load libnuma: %s", why);
		return NULL;
	}
	if (nm->numa_available() < 0) {
		msg(c, L_ERROR, "--membind: this kernel has no NUMA support");
		return NULL;
	}
	nodes = nm->numa_parse_nodestring(c->membind);
	if (!nodes) {
		nodes_have(nm, have, sizeof(have));
		msg(c, L_ERROR,
		    "%s: invalid or unknown NUMA nodes for --membind (this machine has %s)",
		    c->membind, have);
	}
	return nodes;
}

/*
 * Everything is checked before anything is set or run: the heap's page size
 * (UINT64_MAX: no heap; 0: THP; 1: the default size), the nodes, the segment
 * sizes. False after a message.
 */
static bool validate(struct hugectl *c, struct hk_ctx *ctx, uint64_t *heap_size,
		     struct bitmask **nodes)
{
	if (c->thp)
		*heap_size = 0;
	else if (c->heap && strcmp(c->heap, "yes") == 0)
		*heap_size = 1;
	else if (c->heap && !(*heap_size = page_size_arg(c, ctx, c->heap, "--heap")))
		return false;
	if (c->membind && !(*nodes = membind_nodes(c)))
		return false;
	if (!segment_size_ok(c, ctx, c->text_size, "--text") ||
	    !segment_size_ok(c, ctx, w_size(c), c->data ? "--data" : "--bss"))
		return false;
	if (c->share && c->thp && !(c->text_size && strcasecmp(c->text_size, "thp") != 0))
		msg(c, L_WARNING,
		    "--share-text with --thp: text on transparent huge pages is private to "
		    "each process (--text=SIZE puts it on shared hugetlb pages)");
	return true;
}

/* LD_LIBRARY_PATH for --library-path: DIR itself if the runtime is there, else DIR/lib:DIR/lib64. */
static void put_library_path(struct hugectl *c)
{
	char *dirs, *v;
	char probe[PATH_MAX];

	snprintf(probe, sizeof(probe), "%s/libhugekit-rt.so.0", c->library_path);
	if (access(probe, F_OK) == 0)
		dirs = strdup(c->library_path);
	else if (asprintf(&dirs, "%s/lib:%s/lib64", c->library_path, c->library_path) < 0)
		dirs = NULL;
	v = dirs ? join(dirs, ":", getenv("LD_LIBRARY_PATH")) : NULL;
	if (v)
		put(c, "LD_LIBRARY_PATH", v);
	free(dirs);
	free(v);
}

/* HUGETLB_ELFMAP for --text, --data and --bss ("R=2M:W"), or "no" for --disable. */
static void put_elfmap(struct hugectl *c)
{
	if (c->text || c->data || c->bss) {
		char elf[128];
		int n = 0;

		if (c->text)
			n = snprintf(elf, sizeof(elf), "R%s%s", c->text_size ? "=" : "",
				     c->text_size ? c->text_size : "");
		if (c->data || c->bss) {
			const char *w = w_size(c);

			/* 2.23 warns unless both are given, without a size. */
			if (!c->data || !c->bss || c->data_size || c->bss_size)
				msg(c, L_WARNING, "data and bss remapped together in %s",
				    w ? w : "the default hugepage size");
			snprintf(elf + n, sizeof(elf) - (size_t)n, "%sW%s%s", n ? ":" : "",
				 w ? "=" : "", w ? w : "");
		}
		put(c, "HUGETLB_ELFMAP", elf);
	}
	if (c->disable) {
		if (c->text || c->data || c->bss)
			msg(c, L_WARNING, "--disable masks requested remap");
		put(c, "HUGETLB_ELFMAP", "no");
	}
}

/*
 * LD_PRELOAD: the runtime, before what the user preloads. 2.23 preloaded for
 * --heap and --shm alone: its segment remapping needed a program relinked
 * against the library. hugekit's runtime remaps any program, from inside
 * it, so it is preloaded for the segments too. Whether it is preloaded.
 */
static bool put_preload(struct hugectl *c, bool segments)
{
	bool preload = !c->no_preload && (c->force_preload || c->heap_shm == c->maps || segments);
	char *rt, *v;

	if (!c->no_preload && !preload)
		msg(c, L_WARNING, "LD_PRELOAD not appropriate for this map combination");
	if (!preload)
		return false;
	rt = runtime_path();
	if (!rt) {
		msg(c, L_WARNING,
		    "the runtime library libhugekit-rt.so.0 is not installed: "
		    "shared memory and program segments stay on base pages");
		return true;
	}
	v = join(rt, " ", getenv("LD_PRELOAD"));
	if (v)
		put(c, "LD_PRELOAD", v);
	free(v);
	free(rt);
	return true;
}

/* The environment, libhugetlbfs 2.23's variables in its order; whether the runtime is preloaded. */
static bool put_environment(struct hugectl *c, uint64_t heap_size, bool segments)
{
	char buf[16];
	bool preload;

	if (c->verbose >= 99)
		put(c, "HUGETLB_DEBUG", "yes");
	snprintf(buf, sizeof(buf), "%d", c->verbose);
	put(c, "HUGETLB_VERBOSE", buf);
	if (c->library_path)
		put_library_path(c);
	put_elfmap(c);
	if (c->heap)
		put(c, "HUGETLB_MORECORE", c->heap);
	if (c->shm)
		put(c, "HUGETLB_SHM", "yes");
	preload = put_preload(c, segments);
	if (c->no_reserve)
		put(c, "HUGETLB_NO_RESERVE", "yes");
	if (c->share)
		put(c, "HUGETLB_SHARE", "1");
	if (c->perf_map)
		put(c, "HUGETLB_PERFMAP", "1");
	if (c->thp)
		put(c, "HUGETLB_MORECORE", "thp");
	/* New: glibc's malloc does the heap itself, with the tunables set before exec. */
	if (heap_size != UINT64_MAX) {
		char *t = NULL;

		if (hk_heap_tunables(getenv("GLIBC_TUNABLES"), heap_size, &t) == 0)
			put(c, "GLIBC_TUNABLES", t);
		free(t);
	}
	if (c->report)
		put(c, "HUGETLB_REPORT", c->report);
	return preload;
}

/* Run the program: the memory policy, then exec. Returns only on failure. */
static int launch(struct hugectl *c, struct bitmask *nodes, char **argv)
{
	char buf[32];

	if (nodes) {
		/* The policy stays with the program through exec, and the kernel takes its huge pages from these nodes. */
		const char *why;
		const struct hkt_numa *nm = hkt_numa(&why); /* loaded: nodes came from it */

		nm->numa_set_membind(nodes);
		nm->numa_bitmask_free(nodes);
	}
	/*
	 * The program keeps this pid over exec: the runtime warns and reports in
	 * it, not in each process it starts (internal, so not printed above).
	 */
	snprintf(buf, sizeof(buf), "%ld", (long)getpid());
	setenv("HK_RT_PID", buf, 1);
	unsetenv("HK_RT_REEXEC");
	fflush(stdout);
	execvp(argv[0], argv);
	msg(c, L_ERROR, "exec failed: %s", strerror(errno));
	return HK_EXIT_FAILURE;
}

/* --collapse and the options only it takes: checked, then hc_collapse(). */
static int collapse(const struct hugectl *c, int argc, char **argv)
{
	const struct hc_collapse o = {
		.pid = c->collapse,
		.heap = c->heap != NULL,
		.text = c->text,
		.all = c->all,
		.json = c->json,
		.dry_run = c->dry_run,
		.verbose = c->verbose,
	};
	const struct hkt_opt *bad = c->not_collapse;

	if (!c->collapse) {
		msg(c, L_ERROR, "%s: only with --collapse", c->all ? "--all" : "--json");
		return HK_EXIT_FAILURE;
	}
	if (bad) {
		if (bad->name)
			msg(c, L_ERROR, "--%s: not an option of --collapse", bad->name);
		else
			msg(c, L_ERROR, "-%c: not an option of --collapse", bad->short_name);
		return HK_EXIT_FAILURE;
	}
	if (optind < argc) {
		msg(c, L_ERROR, "%s: --collapse runs no program", argv[optind]);
		return HK_EXIT_FAILURE;
	}
	if (c->heap_sized || c->text_size) {
		msg(c, L_ERROR,
		    "%s=%s: --collapse takes no page size (it collapses onto transparent huge pages "
		    "of the PMD size)",
		    c->heap_sized ? "--heap" : "--text", c->heap_sized ? c->heap : c->text_size);
		return HK_EXIT_FAILURE;
	}
	return hc_collapse(&o);
}

int main(int argc, char **argv)
{
	struct hugectl c = {.verbose = 2};
	struct bitmask *nodes = NULL;
	struct hk_ctx *ctx = NULL;
	uint64_t heap_size = UINT64_MAX;
	bool preload, segments;
	int rc;

	hkt_close_stdout_atexit();
	/* Privileged for someone else (privilege.h): never; it runs what its caller names. */
	if (hk_privileged_for_other()) {
		fprintf(stderr,
			"%s: not run set-user-ID, set-group-ID or with file capabilities for "
			"another user: it runs the program its caller names, with its environment\n",
			hkt_prog());
		return HK_EXIT_FAILURE;
	}
	c.verbose = hk_verbosity_env(getenv("HUGETLB_VERBOSE"), getenv("HUGETLB_DEBUG"), c.verbose);
	parse_options(&c, argc, argv);
	if (c.collapse || c.all || c.json)
		return collapse(&c, argc, argv);
	if (optind >= argc && !c.dry_run) {
		fprintf(stderr, "%s: no program to run\n", hkt_prog());
		hkt_errtryhelp();
	}
	rc = hk_new(NULL, &ctx);
	if (rc < 0) {
		msg(&c, L_ERROR, "%s", strerror(-rc));
		return HK_EXIT_FAILURE;
	}
	if (!validate(&c, ctx, &heap_size, &nodes))
		return hk_unref(ctx), HK_EXIT_FAILURE;
	segments = (c.text || c.data || c.bss) && !c.disable;
	preload = put_environment(&c, heap_size, segments);
	hk_unref(ctx);
	if (segments && preload && optind < argc)
		check_program(&c, argv[optind]);
	if (c.dry_run) {
		const char *why;

		if (nodes)
			hkt_numa(&why)->numa_bitmask_free(nodes);
		return HK_EXIT_SUCCESS;
	}
	return launch(&c, nodes, argv + optind);
}
