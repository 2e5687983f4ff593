// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tlbmiss_cost: the cost of one TLB miss in cycles, measured without hardware
 * counters. The same random dependent pointer chase runs over a region on base
 * pages and over a region of the same size on huge pages. Each hop goes to
 * another base page and to another cache line (the line offsets within a page
 * vary, so the lines spread over all cache sets), so both chases miss the
 * caches alike; only the base page one also misses the TLB on every hop. The
 * difference per hop, in cycles, is the cost of a miss (its page walk).
 *
 * The machine is a noisy VM: the measurement is rounds of one short piece on
 * each backing (tools/common/measure.c: a round the scheduler disturbed is
 * discarded, the cost is the median of the rounds' differences with its
 * interval), repeated until the interval is narrow or the budget is spent.
 *
 * Prints what it measured on stderr and TLB_MISS_COST=N last on stdout, as
 * libhugetlbfs's tlbmiss_cost.sh did, so that scripts can eval it.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#define CLOCK_NAME "tsc"
#else
#define CLOCK_NAME "monotonic-ns"
#endif

#include <hugekit/hugekit.h>

#include "measure-fake.h"
#include "measure.h"
#include "opts.h"
#include "util.h"

enum {
	OPT_HOPS = HK_OPT_LONG_BASE,
	OPT_BACKING,
	OPT_BUDGET,
};

// clang-format off
static const struct hkt_opt opts[] = {
	{ "size",         's', HK_ARG_REQUIRED, 's', "SIZE", "the region each chase runs over (default 512M)", 0 },
	{ "budget",       0,   HK_ARG_REQUIRED, OPT_BUDGET, "SECONDS", "the most time the rounds take (default 5)", 0 },
	{ "runs",         'r', HK_ARG_REQUIRED, 'r', "N", "the most rounds (default 1000000)", 0 },
	{ "hops",         0,   HK_ARG_REQUIRED, OPT_HOPS, "N", "hops of each side of a round (default 2000)", 0 },
	{ "backing",      0,   HK_ARG_REQUIRED, OPT_BACKING, "KIND", "huge pages from: auto, hugetlb or thp (default auto)", 0 },
	{ "json",         'J', HK_ARG_NONE,     'J', NULL, "print the measurement as JSON", 0 },
	{ "quiet",        'q', HK_ARG_NONE,     'q', NULL, "print only TLB_MISS_COST=N", 0 },
	{ "help",         'h', HK_ARG_NONE,     'h', NULL, "display this help", 0 },
	{ "version",      'V', HK_ARG_NONE,     'V', NULL, "display version", 0 },
	{ "list-options", 0,   HK_ARG_NONE,     HK_OPT_LIST_OPTIONS, NULL, "", HK_OPT_HIDDEN },
	{ 0 },
};
// clang-format on

/* The value printed when no difference can be measured (see tlbmiss_cost(8)). */
#define UNMEASURABLE_COST 0
/* Measurable: the interval within max(5 cycles, 10 % of the cost) of it, above 0. */
#define BOUND_CYCLES 5.0
#define BOUND_PCT 10.0
/* Kept rounds before the interval may stop the measurement. */
#define MIN_ROUNDS 16
#define MAX_ROUNDS 100000000
#define WARMUP_HOPS 100000

__attribute__((noreturn)) static void usage(void)
{
	printf("Usage:\n %s [options]\n\n", hkt_prog());
	printf("Measure the cost of one TLB miss in cycles, without hardware counters:\n"
	       "the same random pointer chase on base pages and on huge pages.\n"
	       "Prints TLB_MISS_COST=N last on standard output.\n\n");
	printf("Options:\n");
	hkt_opts_print_help(stdout, opts);
	printf("\nSee tlbmiss_cost(8).\n");
	exit(HK_EXIT_SUCCESS);
}

struct region {
	char *mem; /* the aligned start */
	void *map; /* what munmap gets */
	size_t map_len;
	const char *backing; /* "base", "hugetlb" or "thp" */
	uint64_t huge_kb;    /* AnonHugePages or Hugetlb of the range, from smaps */
};

static uint64_t ticks(void)
{
#ifdef HAVE_TSC
	return __rdtsc();
#else
	return (uint64_t)(hkt_now() * 1e9);
#endif
}

/* The tick rate: the TSC against CLOCK_MONOTONIC over 200 ms, or 1 GHz for nanoseconds. */
static double tick_hz(void)
{
#ifdef HAVE_TSC
	double t0 = hkt_now(), t1;
	uint64_t c0 = ticks(), c1;

	do
		t1 = hkt_now();
	while (t1 - t0 < 0.2);
	c1 = ticks();
	return (double)(c1 - c0) / (t1 - t0);
#else
	return 1e9;
#endif
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * The chase itself: no sanitizer instrumentation (its shadow loads would be
 * cache misses of their own), unrolled so that the loop costs little beside
 * the loads.
 */
/* Where the chase's end goes, so that no call is taken for pure and dropped. */
static void *volatile sink;

__attribute__((no_sanitize("address", "undefined"), noinline)) static void *chase(void *start,
										  uint64_t hops)
{
	void **p = start;

	for (uint64_t i = 0; i < hops / 8; i++) {
		p = *p;
		p = *p;
		p = *p;
		p = *p;
		p = *p;
		p = *p;
		p = *p;
		p = *p;
	}
	sink = p;
	return p;
}

/*
 * The ring of one pointer per (page, line): pages in a random cyclic order
 * (Sattolo), a round visits every page once, and in round r page k is visited
 * at line (r + h(k)) mod lines, so that over all rounds every line of every
 * page is used once and consecutive hops are always on different pages. The
 * offsets depend only on the sizes, so both regions get the same ring.
 */
static int build_ring(char *mem, size_t size, size_t page, size_t line)
{
	size_t npages = size / page, lines = page / line;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	uint32_t *order;

	if (npages < 2 || npages > UINT32_MAX)
		return -EINVAL;
	order = malloc(npages * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < npages; i++)
		order[i] = (uint32_t)i;
	for (size_t i = npages - 1; i > 0; i--) {
		size_t j = xorshift(&seed) % i;
		uint32_t t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
#define SLOT(r, i)                                                                                 \
	(mem + (size_t)order[i] * page +                                                           \
	 (((r) + (size_t)order[i] * 2654435761u % lines) % lines) * line)
	for (size_t r = 0; r < lines; r++)
		for (size_t i = 0; i < npages; i++) {
			size_t nr = i + 1 < npages ? r : (r + 1) % lines;
			size_t ni = i + 1 < npages ? i + 1 : 0;

			*(void **)SLOT(r, i) = SLOT(nr, ni);
		}
#undef SLOT
	free(order);
	return 0;
}

/* The kB of huge pages smaps shows in [start, start + len) (libhugekit's reading); 0 unread. */
static uint64_t smaps_huge_kb(struct hk_ctx *ctx, const char *start, size_t len)
{
	uint64_t kb = 0;

	return hk_range_huge_kb(ctx, start, len, &kb) == 0 ? kb : 0;
}

static int map_base(struct region *r, size_t size)
{
	r->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->map == MAP_FAILED)
		return -errno;
	r->map_len = size;
	r->mem = r->map;
	r->backing = "base";
	if (madvise(r->mem, size, MADV_NOHUGEPAGE) < 0)
		return -errno;
	return 0;
}

static int map_hugetlb(struct region *r, size_t size)
{
	r->map = mmap(NULL, size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1, 0);
	if (r->map == MAP_FAILED)
		return -errno;
	r->map_len = size;
	r->mem = r->map;
	r->backing = "hugetlb";
	return 0;
}

/* Anonymous memory on transparent huge pages: MADV_HUGEPAGE, touched, then MADV_COLLAPSE. */
static int map_thp(struct region *r, size_t size, size_t huge)
{
	uintptr_t a;

	r->map_len = size + huge;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->map == MAP_FAILED)
		return -errno;
	a = ((uintptr_t)r->map + huge - 1) & ~(uintptr_t)(huge - 1);
	r->mem = (char *)a;
	r->backing = "thp";
	if (madvise(r->mem, size, MADV_HUGEPAGE) < 0)
		return -errno;
	for (size_t off = 0; off < size; off += huge)
		r->mem[off] = 1;
	/* Where the faults got base pages; EINVAL on kernels before 6.1, then as it is. */
	(void)hk_collapse(r->mem, size);
	return 0;
}

static void unmap(struct region *r)
{
	if (r->map && r->map != MAP_FAILED)
		munmap(r->map, r->map_len);
	r->map = NULL;
}

/*
 * Both regions of one run, mapped afresh (each run samples other physical
 * pages: on a VM, what the host backs them with changes the walk), with the
 * chase built and the backing checked in smaps. 0, or -1 with a message.
 */
static int map_pair(struct hk_ctx *ctx, struct region *rb, struct region *rh, uint64_t size,
		    uint64_t huge, size_t page, size_t line, const char *backing,
		    uint64_t free_pages)
{
	int rc;

	rc = map_base(rb, size);
	if (rc < 0) {
		fprintf(stderr, "%s: ERROR: cannot map %" PRIu64 " MiB on base pages: %s\n",
			hkt_prog(), size >> 20, strerror(-rc));
		return -1;
	}
	rc = -ENOMEM;
	if (strcmp(backing, "thp") && (strcmp(backing, "auto") || free_pages >= size / huge))
		rc = map_hugetlb(rh, size);
	if (rc < 0 && strcmp(backing, "hugetlb")) {
		unmap(rh);
		rc = map_thp(rh, size, huge);
	}
	if (rc < 0) {
		fprintf(stderr, "%s: ERROR: cannot map %" PRIu64 " MiB on huge pages (%s): %s\n",
			hkt_prog(), size >> 20, backing, strerror(-rc));
		return -1;
	}
	if (build_ring(rb->mem, size, page, line) < 0 ||
	    build_ring(rh->mem, size, page, line) < 0) {
		fprintf(stderr, "%s: ERROR: cannot build the chase: %s\n", hkt_prog(),
			strerror(ENOMEM));
		return -1;
	}
	rb->huge_kb = smaps_huge_kb(ctx, rb->mem, size);
	rh->huge_kb = smaps_huge_kb(ctx, rh->mem, size);
	/* Both must be what they claim: a comparison of like with like is no measurement. */
	if (rh->huge_kb * 1024 < size * 9 / 10) {
		fprintf(stderr,
			"%s: ERROR: only %" PRIu64 " of %" PRIu64
			" MiB got huge pages (%s; smaps); grow the pool (hugeadm --pool-pages-min) "
			"or allow THP (madvise)\n",
			hkt_prog(), rh->huge_kb >> 10, size >> 20, rh->backing);
		return -1;
	}
	if (rb->huge_kb * 1024 > size / 10) {
		fprintf(stderr,
			"%s: ERROR: %" PRIu64 " MiB of the base page region is on huge pages\n",
			hkt_prog(), rb->huge_kb >> 10);
		return -1;
	}
	return 0;
}

/* The chases of a measurement: where each stands, and the hops of a piece. */
struct chases {
	void *pb, *ph;
	uint64_t hops;
	uint64_t extra; /* ticks added to each base page hop (HK_MEASURE_EXTRA, test copies) */
};

/* The ticks of one piece of the chase from *p, which moves on. */
static uint64_t timed_piece(void **p, uint64_t hops, uint64_t extra)
{
	uint64_t t0 = ticks(), t1;

	*p = chase(*p, hops);
	if (extra)
		for (uint64_t end = ticks() + extra * hops; ticks() < end;)
			;
	t1 = ticks();
	return t1 - t0;
}

/*
 * One round: a piece on each backing, base first in even rounds and huge
 * first in odd ones (what the order costs cancels out), between two probes of
 * the scheduler (the discard rule, hkt_disturbed).
 */
static int round_sample(void *ctx, size_t round, struct hkt_sample *s)
{
	struct chases *c = ctx;
	struct hkt_probe p0, p1;
	uint64_t tb, th;
	int rc;

	rc = hkt_probe_take(&p0);
	if (rc < 0)
		return rc;
	if (round & 1) {
		th = timed_piece(&c->ph, c->hops, 0);
		tb = timed_piece(&c->pb, c->hops, c->extra);
	} else {
		tb = timed_piece(&c->pb, c->hops, c->extra);
		th = timed_piece(&c->ph, c->hops, 0);
	}
	rc = hkt_probe_take(&p1);
	if (rc < 0)
		return rc;
	s->a = (double)tb / (double)c->hops;
	s->b = (double)th / (double)c->hops;
	s->disturbed = hkt_disturbed(&p0, &p1);
	return 0;
}

static double clock_now(void *ctx)
{
	(void)ctx;
	return hkt_now();
}

/* One measurement: its sizes and clock, its two regions and the chases over them. */
struct bench {
	uint64_t size; /* of each region, whole huge pages */
	uint64_t huge; /* the huge page size */
	size_t page, line;
	const char *clock;    /* CLOCK_NAME, or "fake" */
	double hz;	      /* ticks a second */
	struct region rb, rh; /* on base pages, on huge pages */
	struct chases ch;
};

#ifdef HK_MEASURE_FAKE
/*
 * The test copy's hooks (tests/CMakeLists.txt builds it; never installed):
 * HK_MEASURE_FAKE="A B SECONDS [switched|stalled]; ..." gives the rounds
 * (hkt_fake_parse) on a fake clock, and no memory is mapped;
 * HK_MEASURE_INPAGE=1 makes the huge side a chase within one base page (a
 * pattern that never misses the TLB or L1, for live/insight-tlb's ordering);
 * HK_MEASURE_EXTRA=TICKS adds TICKS to each base page hop of the real chase,
 * a cost known in advance. 0, 1 with HK_MEASURE_FAKE, -1 after a message.
 */
static int test_hooks(struct hkt_fake *f, struct hkt_measure_cfg *cfg, struct chases *c)
{
	/* A privileged run (setuid, file capabilities: AT_SECURE) never takes them. */
	const char *extra = secure_getenv("HK_MEASURE_EXTRA");

	if (getauxval(AT_SECURE) && (getenv("HK_MEASURE_FAKE") || getenv("HK_MEASURE_EXTRA") ||
				     getenv("HK_MEASURE_INPAGE")))
		fprintf(stderr,
			"%s: a privileged run ignores HK_MEASURE_FAKE, HK_MEASURE_INPAGE and HK_MEASURE_EXTRA\n",
			hkt_prog());

	if (extra && (hk_parse_count(extra, &c->extra) < 0 || c->extra > 1000000)) {
		fprintf(stderr, "%s: HK_MEASURE_EXTRA: '%s' is not a number to 1000000\n",
			hkt_prog(), extra);
		return -1;
	}
	return hkt_fake_hook(f, cfg);
}
#endif

/* One untimed pass over each region: the page tables and the caches settle. */
static void warm_up(struct bench *b)
{
	b->ch.pb = chase(b->rb.mem, WARMUP_HOPS);
	b->ch.ph = chase(b->rh.mem, WARMUP_HOPS);
#ifdef HK_MEASURE_FAKE
	if (secure_getenv("HK_MEASURE_INPAGE")) {
		for (size_t i = 0; i < b->page / b->line; i++)
			*(void **)(b->rh.mem + i * b->line) =
				b->rh.mem + (i + 1) % (b->page / b->line) * b->line;
		b->ch.ph = chase(b->rh.mem, WARMUP_HOPS);
		b->rh.backing = "inpage";
	}
#endif
}

/* Free pages of the pool of size, or 0 where it cannot be read. */
static uint64_t free_pages_of(struct hk_ctx *ctx, uint64_t size)
{
	struct hk_pool *pool = NULL;
	uint64_t n = hk_pool_read(ctx, size, &pool) == 0 ? hk_pool_get(pool, HK_POOL_FREE) : 0;

	hk_pool_unref(pool);
	return n;
}

/*
 * The measurement's sizes (the cache line, the huge page, the region of size
 * bytes rounded up to whole huge pages) and, but in a fake run, its clock and
 * both regions, mapped with the chase built and warmed up. -1 after a message.
 */
static int setup(struct hk_ctx *ctx, struct bench *b, uint64_t size, const char *backing, bool fake)
{
	uint64_t free_pages, v;

	if (hk_cache_line_size(ctx, &v) == 0 && v >= 16 && v <= b->page && (v & (v - 1)) == 0)
		b->line = v;
	/* The PMD size: the default hugetlb size, which is also THP's. */
	if (fake)
		b->huge = 2 << 20;
	else if (hk_default_page_size(ctx, &b->huge) < 0 || b->huge <= b->page) {
		fprintf(stderr, "%s: ERROR: no huge page size on this machine\n", hkt_prog());
		return -1;
	}
	b->size = (size + b->huge - 1) / b->huge * b->huge;
	free_pages = free_pages_of(ctx, b->huge);
	if (fake) {
		b->clock = "fake";
		b->rh.backing = "fake";
		return 0;
	}
	b->hz = tick_hz();
	if (map_pair(ctx, &b->rb, &b->rh, b->size, b->huge, b->page, b->line, backing, free_pages) <
	    0)
		return -1;
	warm_up(b);
	return 0;
}

/* The clock's name for people. noipa: at -O2 gcc would see, in the test copy,
 * which short array the name comes from and warn (-Wstring-compare). */
__attribute__((noipa)) static const char *clock_label(const char *clock)
{
	if (!strcmp(clock, "tsc"))
		return "TSC";
	if (!strcmp(clock, "monotonic-ns"))
		return "CLOCK_MONOTONIC (ns)";
	return clock;
}

/* The cost and its interval on stderr (nothing with --quiet but a verdict), TLB_MISS_COST=N. */
static void print_text(const struct hkt_measure *m, const struct hkt_measure_cfg *cfg,
		       const struct bench *b, bool quiet)
{
	const char *why = hkt_measure_why_not(m, cfg);

	if (!quiet) {
		fprintf(stderr,
			"%s: chase of %" PRIu64 " hops a side over %" PRIu64
			" MiB a round; clock %s at %.0f MHz\n",
			hkt_prog(), b->ch.hops, b->size >> 20, clock_label(b->clock), b->hz / 1e6);
		fprintf(stderr,
			"%s: base pages %.1f cycles/hop, huge pages (%s) %.1f cycles/hop "
			"(medians of the rounds kept)\n",
			hkt_prog(), hkt_median(m->a, m->kept), b->rh.backing,
			hkt_median(m->b, m->kept));
		fprintf(stderr,
			"%s: %zu rounds: %zu kept, %zu discarded (%zu switched out, %zu stalled); "
			"%.2f s of %.2f s; stopped: %s\n",
			hkt_prog(), m->rounds, m->kept,
			m->discarded[HK_SWITCHED] + m->discarded[HK_STALLED],
			m->discarded[HK_SWITCHED], m->discarded[HK_STALLED], m->used_s,
			cfg->budget_s, hkt_stop_name(m->stop));
		fprintf(stderr,
			"%s: TLB miss cost %.1f cycles, 95 %% interval %.1f to %.1f "
			"(bound: within %.1f of it, above 0)\n",
			hkt_prog(), m->iv.est, m->iv.low, m->iv.high, m->bound);
	}
	if (why)
		fprintf(stderr,
			"%s: not measurable: %s (95 %% interval %.1f to %.1f cycles, bound %.1f); "
			"printing %d\n",
			hkt_prog(), why, m->iv.low, m->iv.high, m->bound, UNMEASURABLE_COST);
	printf("TLB_MISS_COST=%lld\n", m->measurable ? llround(m->iv.est) : UNMEASURABLE_COST);
}

/* The measurement as JSON. */
static void print_json(const struct hkt_measure *m, const struct hkt_measure_cfg *cfg,
		       const struct bench *b)
{
	struct hkt_json j;

	hkt_json_init(&j, stdout);
	hkt_json_open_object(&j, NULL);
	hkt_json_open_object(&j, "tlbmiss_cost");
	hkt_json_string(&j, "method",
			"random dependent pointer chase, one hop per base page and cache line, "
			"base pages vs huge pages, in paired rounds");
	hkt_json_u64(&j, "size", b->size);
	hkt_json_u64(&j, "base_page_size", b->page);
	hkt_json_u64(&j, "huge_page_size", b->huge);
	hkt_json_u64(&j, "line_size", b->line);
	hkt_json_string(&j, "backing", b->rh.backing);
	hkt_json_u64(&j, "huge_kb", b->rh.huge_kb);
	hkt_json_string(&j, "clock", b->clock);
	hkt_json_double(&j, "clock_hz", b->hz, 0);
	hkt_json_u64(&j, "hops", b->ch.hops);
	hkt_json_double(&j, "base_cycles_per_hop", hkt_median(m->a, m->kept), 2);
	hkt_json_double(&j, "huge_cycles_per_hop", hkt_median(m->b, m->kept), 2);
	hkt_json_double(&j, "estimate", m->iv.est, 2);
	hkt_measure_json(&j, m, cfg, "bound_cycles");
	hkt_json_u64(&j, "tlb_miss_cost",
		     m->measurable ? (uint64_t)llround(m->iv.est) : UNMEASURABLE_COST);
	hkt_json_close_object(&j);
	hkt_json_close_object(&j);
	hkt_json_end(&j);
}

/* What the command line asks for. */
struct options {
	uint64_t size, runs, hops;
	double budget_s;
	const char *backing;
	bool json, quiet;
};

/* The options into *o; exits on a usage error, -1 when getopt cannot start. */
static int parse_options(int argc, char **argv, struct options *o)
{
	struct hkt_getopt g;
	int c;

	if (hkt_getopt_init(&g, opts, "+") < 0)
		return -1;
	while ((c = hkt_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 's':
			if (hk_parse_size(optarg, &o->size) < 0 || o->size < (4ull << 20) ||
			    o->size > (64ull << 30)) {
				fprintf(stderr, "%s: --size: '%s' is not a size from 4M to 64G\n",
					hkt_prog(), optarg);
				hkt_errtryhelp();
			}
			break;
		case 'r':
			if (hk_parse_count(optarg, &o->runs) < 0 || o->runs < 6 ||
			    o->runs > MAX_ROUNDS) {
				fprintf(stderr, "%s: --runs: '%s' is not a number from 6 to %d\n",
					hkt_prog(), optarg, MAX_ROUNDS);
				hkt_errtryhelp();
			}
			break;
		case OPT_HOPS:
			if (hk_parse_count(optarg, &o->hops) < 0 || o->hops < 100 ||
			    o->hops > 1000000) {
				fprintf(stderr,
					"%s: --hops: '%s' is not a number from 100 to 1000000\n",
					hkt_prog(), optarg);
				hkt_errtryhelp();
			}
			break;
		case OPT_BUDGET:
			if (hkt_parse_seconds(optarg, 0.1, 3600, &o->budget_s) < 0) {
				fprintf(stderr,
					"%s: --budget: '%s' is not a number of seconds from 0.1 to "
					"3600\n",
					hkt_prog(), optarg);
				hkt_errtryhelp();
			}
			break;
		case OPT_BACKING:
			if (strcmp(optarg, "auto") && strcmp(optarg, "hugetlb") &&
			    strcmp(optarg, "thp")) {
				fprintf(stderr,
					"%s: --backing: '%s' is not one of auto, hugetlb, thp\n",
					hkt_prog(), optarg);
				hkt_errtryhelp();
			}
			o->backing = optarg;
			break;
		case 'J':
			o->json = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		default:
			hkt_opts_standard(c, opts, usage);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", hkt_prog(), argv[optind]);
		hkt_errtryhelp();
	}
	return 0;
}

/* The rounds, the regions unmapped after them, and the report; -1 after a message. */
static int measure(struct hkt_measure_cfg *cfg, struct bench *b, const struct options *o)
{
	struct hkt_measure m = {0};
	int rc = hkt_measure_run(cfg, &m);

	unmap(&b->rb);
	unmap(&b->rh);
	if (rc < 0)
		fprintf(stderr, "%s: ERROR: measuring: %s\n", hkt_prog(), strerror(-rc));
	else if (o->json)
		print_json(&m, cfg, b);
	else
		print_text(&m, cfg, b, o->quiet);
	hkt_measure_fini(&m);
	return rc < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct options o = {
		.size = 512ull << 20,
		.runs = 1000000,
		.hops = 2000,
		.budget_s = 5,
		.backing = "auto",
	};
	struct bench b = {
		.page = (size_t)sysconf(_SC_PAGESIZE),
		.line = 64,
		.clock = CLOCK_NAME,
		.hz = 1e9,
	};
	struct hkt_measure_cfg cfg = {
		.kind = HK_VALUE_DIFF,
		.bound = {BOUND_CYCLES, BOUND_PCT},
		.positive = true,
		.min_rounds = MIN_ROUNDS,
		.sample = round_sample,
		.clock = clock_now,
		.ctx = &b.ch,
	};
	int rc, status = HK_EXIT_FAILURE;
	struct hk_ctx *ctx = NULL;
	bool fake = false;
#ifdef HK_MEASURE_FAKE
	struct hkt_fake f = {0};
#endif

	hkt_close_stdout_atexit();
	if (parse_options(argc, argv, &o) < 0)
		return HK_EXIT_FAILURE;
	cfg.max_rounds = o.runs;
	cfg.budget_s = o.budget_s;
	b.ch.hops = o.hops;
	rc = hk_new(NULL, &ctx);
	if (rc < 0) {
		fprintf(stderr, "%s: ERROR: cannot open /: %s\n", hkt_prog(), strerror(-rc));
		return HK_EXIT_FAILURE;
	}
#ifdef HK_MEASURE_FAKE
	rc = test_hooks(&f, &cfg, &b.ch);
	fake = rc > 0;
#endif
	if (rc >= 0 && setup(ctx, &b, o.size, o.backing, fake) == 0 && measure(&cfg, &b, &o) == 0)
		status = HK_EXIT_SUCCESS;
#ifdef HK_MEASURE_FAKE
	hkt_fake_fini(&f);
#endif
	unmap(&b.rb);
	unmap(&b.rh);
	hk_unref(ctx);
	return status;
}
