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
 * Prints what it measured on stderr and TLB_MISS_COST=N last on stdout, as
 * libhugetlbfs's tlbmiss_cost.sh did, so that scripts can eval it.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

#include <hugekit/hugekit.h>

#include "measure.h"
#include "opts.h"
#include "pagesizes.h"
#include "path.h"
#include "util.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

enum {
	OPT_HOPS = HK_OPT_LONG_BASE,
	OPT_BACKING,
};

// clang-format off
static const struct hk_opt opts[] = {
	{ "size",         's', HK_ARG_REQUIRED, 's', "SIZE", "the region each chase runs over (default 512M)", 0 },
	{ "runs",         'r', HK_ARG_REQUIRED, 'r', "N", "timed runs, each on new regions (default 7)", 0 },
	{ "hops",         0,   HK_ARG_REQUIRED, OPT_HOPS, "N", "hops of each timed run (default 1000000)", 0 },
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
/*
 * Above this median deviation of the per-run costs from their median (percent
 * of the median) the figure is noise.
 */
#define NOISE_SPREAD_PCT 50.0
#define MAX_RUNS 101
/* Hops of one timed piece of a run (some milliseconds); a run is at most MAX_PAIRS pairs. */
#define CHUNK_HOPS 20000
/* The quantile of the pieces of a run that stands for it. */
#define QUANTILE 0.1
#define MAX_PAIRS 5000

__attribute__((noreturn)) static void usage(void)
{
	printf("Usage:\n %s [options]\n\n", hk_prog());
	printf("Measure the cost of one TLB miss in cycles, without hardware counters:\n"
	       "the same random pointer chase on base pages and on huge pages.\n"
	       "Prints TLB_MISS_COST=N last on standard output.\n\n");
	printf("Options:\n");
	hk_opts_print_help(stdout, opts);
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
	return (uint64_t)(hk_now() * 1e9);
#endif
}

/* The tick rate: the TSC against CLOCK_MONOTONIC over 200 ms, or 1 GHz for nanoseconds. */
static double tick_hz(void)
{
#ifdef HAVE_TSC
	double t0 = hk_now(), t1;
	uint64_t c0 = ticks(), c1;

	do
		t1 = hk_now();
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

/* The kB of huge pages smaps shows in [start, start + len): AnonHugePages and Hugetlb. */
static uint64_t smaps_huge_kb(struct hk_path *p, const char *start, size_t len)
{
	uintptr_t lo = (uintptr_t)start, hi = lo + len;
	uint64_t total = 0;
	bool in = false;
	char *buf, *line, *save;

	if (hk_path_read_allf(p, &buf, NULL, HK_PROC_SMAPS) < 0)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uintptr_t a, b;
		unsigned long long kb;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &a, &b) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = a < hi && b > lo;
		else if (in && (sscanf(line, "AnonHugePages: %llu kB", &kb) == 1 ||
				sscanf(line, "Private_Hugetlb: %llu kB", &kb) == 1 ||
				sscanf(line, "Shared_Hugetlb: %llu kB", &kb) == 1))
			total += kb;
	}
	free(buf);
	return total;
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
	(void)madvise(r->mem, size, MADV_COLLAPSE);
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
static int map_pair(struct hk_path *path, struct region *rb, struct region *rh, uint64_t size,
		    uint64_t huge, size_t page, size_t line, const char *backing,
		    uint64_t free_pages)
{
	int rc;

	rc = map_base(rb, size);
	if (rc < 0) {
		fprintf(stderr, "%s: ERROR: cannot map %" PRIu64 " MiB on base pages: %s\n",
			hk_prog(), size >> 20, strerror(-rc));
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
			hk_prog(), size >> 20, backing, strerror(-rc));
		return -1;
	}
	if (build_ring(rb->mem, size, page, line) < 0 ||
	    build_ring(rh->mem, size, page, line) < 0) {
		fprintf(stderr, "%s: ERROR: cannot build the chase: %s\n", hk_prog(),
			strerror(ENOMEM));
		return -1;
	}
	rb->huge_kb = smaps_huge_kb(path, rb->mem, size);
	rh->huge_kb = smaps_huge_kb(path, rh->mem, size);
	/* Both must be what they claim: a comparison of like with like is no measurement. */
	if (rh->huge_kb * 1024 < size * 9 / 10) {
		fprintf(stderr,
			"%s: ERROR: only %" PRIu64 " of %" PRIu64
			" MiB got huge pages (%s; smaps); grow the pool (hugeadm --pool-pages-min) "
			"or allow THP (madvise)\n",
			hk_prog(), rh->huge_kb >> 10, size >> 20, rh->backing);
		return -1;
	}
	if (rb->huge_kb * 1024 > size / 10) {
		fprintf(stderr,
			"%s: ERROR: %" PRIu64 " MiB of the base page region is on huge pages\n",
			hk_prog(), rb->huge_kb >> 10);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t size = 512ull << 20, runs = 7, hops = 1000000, huge = 0, free_pages = 0,
		 huge_kb = 0;
	double base_c[MAX_RUNS], huge_c[MAX_RUNS], cost_c[MAX_RUNS], dev[MAX_RUNS], hz, median,
		spread, mad_pct;
	const char *backing = "auto", *verdict = NULL, *used = NULL;
	struct region rb = {0}, rh = {0};
	bool json = false, quiet = false, measurable;
	struct hk_path path;
	struct hk_getopt g;
	void *pb, *ph;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), line = 64;
	uint64_t v;
	int c, rc;

	hk_close_stdout_atexit();
	if (hk_getopt_init(&g, opts, "+") < 0)
		return HK_EXIT_FAILURE;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (hk_parse_size(optarg, &size) < 0 || size < (4ull << 20) ||
			    size > (64ull << 30)) {
				fprintf(stderr, "%s: --size: '%s' is not a size from 4M to 64G\n",
					hk_prog(), optarg);
				hk_errtryhelp();
			}
			break;
		case 'r':
			if (hk_parse_u64_strict(optarg, &runs) < 0 || runs < 1 || runs > MAX_RUNS) {
				fprintf(stderr, "%s: --runs: '%s' is not a number from 1 to %d\n",
					hk_prog(), optarg, MAX_RUNS);
				hk_errtryhelp();
			}
			break;
		case OPT_HOPS:
			if (hk_parse_u64_strict(optarg, &hops) < 0 || hops < CHUNK_HOPS ||
			    hops > (uint64_t)CHUNK_HOPS * MAX_PAIRS) {
				fprintf(stderr, "%s: --hops: '%s' is not a number from %d to %d\n",
					hk_prog(), optarg, CHUNK_HOPS, CHUNK_HOPS * MAX_PAIRS);
				hk_errtryhelp();
			}
			break;
		case OPT_BACKING:
			if (strcmp(optarg, "auto") && strcmp(optarg, "hugetlb") &&
			    strcmp(optarg, "thp")) {
				fprintf(stderr,
					"%s: --backing: '%s' is not one of auto, hugetlb, thp\n",
					hk_prog(), optarg);
				hk_errtryhelp();
			}
			backing = optarg;
			break;
		case 'J':
			json = true;
			break;
		case 'q':
			quiet = true;
			break;
		default:
			hk_opts_standard(c, opts, &g, usage);
		}
	}
	hk_getopt_fini(&g);
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", hk_prog(), argv[optind]);
		hk_errtryhelp();
	}

	rc = hk_path_init(&path, NULL);
	if (rc < 0) {
		fprintf(stderr, "%s: ERROR: cannot open /: %s\n", hk_prog(), strerror(-rc));
		return HK_EXIT_FAILURE;
	}
	if (hk_path_read_u64f(&path, &v, HK_SYS_CPU0_L2_LINE_SIZE) == 0 && v >= 16 && v <= page &&
	    (v & (v - 1)) == 0)
		line = v;
	/* The PMD size: the default hugetlb size, which is also THP's. */
	if (hkc_default_page_size(&path, &huge) < 0 || huge <= page) {
		fprintf(stderr, "%s: ERROR: no huge page size on this machine\n", hk_prog());
		goto fail;
	}
	size = (size + huge - 1) / huge * huge;
	(void)hk_path_read_u64f(&path, &free_pages, HK_SYS_HUGEPAGES_SIZE "/free_hugepages",
				huge / 1024);

	hz = tick_hz();
	for (uint64_t i = 0; i < runs; i++) {
		uint64_t npairs = hops / CHUNK_HOPS;
		double pb_c[MAX_PAIRS], ph_c[MAX_PAIRS];

		if (map_pair(&path, &rb, &rh, size, huge, page, line, backing, free_pages) < 0)
			goto fail;
		used = rh.backing;
		huge_kb = rh.huge_kb;
		/* One untimed pass over each: the page tables and the caches settle. */
		pb = chase(rb.mem, hops / 4);
		ph = chase(rh.mem, hops / 4);

		/*
		 * A run is many short pieces, base then huge, some milliseconds each.
		 * What disturbs the machine (a neighbour, another VM, a preemption)
		 * only ever adds time, so each side's figure is its least disturbed
		 * tenth (the 10th percentile of its pieces), taken over the same
		 * stretch of time for both.
		 */
		for (uint64_t k = 0; k < npairs; k++) {
			uint64_t t0 = ticks(), t1;

			pb = chase(pb, CHUNK_HOPS);
			t1 = ticks();
			pb_c[k] = (double)(t1 - t0) / CHUNK_HOPS;
			t0 = ticks();
			ph = chase(ph, CHUNK_HOPS);
			t1 = ticks();
			ph_c[k] = (double)(t1 - t0) / CHUNK_HOPS;
		}
		unmap(&rb);
		unmap(&rh);
		base_c[i] = hk_quantile(pb_c, npairs, QUANTILE);
		huge_c[i] = hk_quantile(ph_c, npairs, QUANTILE);
		cost_c[i] = base_c[i] - huge_c[i];
	}
	median = hk_median(cost_c, runs);
	spread = hk_spread_pct(cost_c, runs, median);
	for (uint64_t i = 0; i < runs; i++)
		dev[i] = fabs(cost_c[i] - median);
	mad_pct = median > 0 ? hk_median(dev, runs) / median * 100 : NAN;
	/* One disturbed run may stray; the typical one must not (the median deviation). */
	measurable = median >= 1 && (runs < 3 || mad_pct <= NOISE_SPREAD_PCT);
	if (!(median >= 1))
		verdict = "no difference between base and huge pages";
	else if (!measurable)
		verdict = "the runs disagree too much (noise)";

	if (json) {
		struct hk_json j;

		hk_json_init(&j, stdout);
		hk_json_open_object(&j, NULL);
		hk_json_open_object(&j, "tlbmiss_cost");
		hk_json_string(&j, "method",
			       "random dependent pointer chase, one hop per base page "
			       "and cache line, base pages vs huge pages");
		hk_json_u64(&j, "size", size);
		hk_json_u64(&j, "base_page_size", page);
		hk_json_u64(&j, "huge_page_size", huge);
		hk_json_u64(&j, "line_size", line);
		hk_json_string(&j, "backing", used);
		hk_json_u64(&j, "huge_kb", huge_kb);
#ifdef HAVE_TSC
		hk_json_string(&j, "clock", "tsc");
#else
		hk_json_string(&j, "clock", "monotonic-ns");
#endif
		hk_json_double(&j, "clock_hz", hz, 0);
		hk_json_u64(&j, "hops", hops);
		hk_json_open_array(&j, "runs");
		for (uint64_t i = 0; i < runs; i++) {
			hk_json_open_object(&j, NULL);
			hk_json_double(&j, "base_cycles_per_hop", base_c[i], 2);
			hk_json_double(&j, "huge_cycles_per_hop", huge_c[i], 2);
			hk_json_double(&j, "cost", cost_c[i], 2);
			hk_json_close_object(&j);
		}
		hk_json_close_array(&j);
		hk_json_double(&j, "median", median, 2);
		hk_json_double(&j, "spread_pct", spread, 1);
		hk_json_double(&j, "median_deviation_pct", mad_pct, 1);
		hk_json_bool(&j, "measurable", measurable);
		if (verdict)
			hk_json_string(&j, "reason", verdict);
		hk_json_u64(&j, "tlb_miss_cost",
			    measurable ? (uint64_t)llround(median) : UNMEASURABLE_COST);
		hk_json_close_object(&j);
		hk_json_close_object(&j);
		hk_json_end(&j);
	} else {
		if (!quiet) {
			fprintf(stderr,
				"%s: chase of %" PRIu64 " hops over %" PRIu64
				" MiB, %d runs; clock %s at %.0f MHz\n",
				hk_prog(), hops, size >> 20, (int)runs,
#ifdef HAVE_TSC
				"TSC",
#else
				"CLOCK_MONOTONIC (ns)",
#endif
				hz / 1e6);
			fprintf(stderr,
				"%s: base pages %.1f cycles/hop, huge pages (%s) %.1f cycles/hop "
				"(medians)\n",
				hk_prog(), hk_median(base_c, runs), used, hk_median(huge_c, runs));
			fprintf(stderr,
				"%s: TLB miss cost %.1f cycles (median of the runs; largest deviation "
				"%.1f %%, median deviation %.1f %%)\n",
				hk_prog(), median, spread, mad_pct);
		}
		if (verdict)
			fprintf(stderr, "%s: not measurable: %s; printing %d\n", hk_prog(), verdict,
				UNMEASURABLE_COST);
		printf("TLB_MISS_COST=%lld\n", measurable ? llround(median) : UNMEASURABLE_COST);
	}
	unmap(&rb);
	unmap(&rh);
	hk_path_fini(&path);
	return HK_EXIT_SUCCESS;
fail:
	unmap(&rb);
	unmap(&rh);
	hk_path_fini(&path);
	return HK_EXIT_FAILURE;
}
