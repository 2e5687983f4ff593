// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm's reports. The text forms are libhugetlbfs's, byte for byte
 * (reference §2.3 and §2.7); JSON and the per-node table are new.
 */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hugeadm.h"
#include "lazy.h"

struct pools {
	struct hk_pool **p;
	size_t n;
};

static int cmp_pool(const void *a, const void *b)
{
	uint64_t x = hk_pool_get(*(struct hk_pool *const *)a, HK_POOL_SIZE);
	uint64_t y = hk_pool_get(*(struct hk_pool *const *)b, HK_POOL_SIZE);

	return (x > y) - (x < y);
}

static void pools_free(struct pools *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		hk_pool_unref(ps->p[i]);
	free(ps->p);
	ps->p = NULL;
	ps->n = 0;
}

/* Every pool, ascending by page size. */
static int pools_load(struct hugeadm_ctl *ctl, struct pools *ps)
{
	uint64_t *sizes;
	size_t n;
	int rc = hk_page_sizes(ctl->ctx, &sizes, &n);

	ps->p = NULL;
	ps->n = 0;
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "unable to obtain pools list: %s", strerror(-rc));
		return rc;
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct hk_pool **more = realloc(ps->p, (ps->n + 1) * sizeof(*more));

		if (!more) {
			rc = -ENOMEM;
			break;
		}
		ps->p = more;
		rc = hk_pool_read(ctl->ctx, sizes[i], &ps->p[ps->n]);
		if (rc == 0)
			ps->n++;
		else
			ha_msg(ctl, HA_ERROR, "cannot read the pool of %" PRIu64 " byte pages: %s",
			       sizes[i], strerror(-rc));
	}
	free(sizes);
	if (rc < 0) {
		pools_free(ps);
		return rc;
	}
	if (ps->n)
		qsort(ps->p, ps->n, sizeof(*ps->p), cmp_pool);
	return 0;
}

static void print_pool_list(const struct pools *ps)
{
	printf("%10s %8s %8s %8s %8s\n", "Size", "Minimum", "Current", "Maximum", "Default");
	for (size_t i = 0; i < ps->n; i++) {
		const struct hk_pool *p = ps->p[i];

		printf("%10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8s\n",
		       hk_pool_get(p, HK_POOL_SIZE), hk_pool_get(p, HK_POOL_MINIMUM),
		       hk_pool_get(p, HK_POOL_NR), hk_pool_get(p, HK_POOL_MAXIMUM),
		       hk_pool_is_default(p) ? "*" : "");
	}
}

enum {
	COL_NODE,
	COL_SIZE,
	COL_TOTAL,
	COL_FREE,
	COL_SURPLUS
};

// clang-format off
static const struct {
	const char *name;
	enum hk_pool_field field;
} node_cols[] = {
	[COL_NODE]    = { "Node",    HK_POOL_SIZE },
	[COL_SIZE]    = { "Size",    HK_POOL_SIZE },
	[COL_TOTAL]   = { "Total",   HK_POOL_NR },
	[COL_FREE]    = { "Free",    HK_POOL_FREE },
	[COL_SURPLUS] = { "Surplus", HK_POOL_SURPLUS },
};
// clang-format on

const struct hkt_smartcols *ha_smartcols(const struct hugeadm_ctl *ctl)
{
	const char *why = "";
	const struct hkt_smartcols *sc = hkt_smartcols(&why);

	if (!sc)
		ha_msg(ctl, HA_ERROR, "cannot load libsmartcols, which prints tables: %s", why);
	return sc;
}

/* One row per (page size, node), through libsmartcols. */
static int print_per_node(struct hugeadm_ctl *ctl, const struct pools *ps)
{
	const struct hkt_smartcols *sc = ha_smartcols(ctl);
	struct libscols_table *tb;
	int rc = 0;

	if (!sc)
		return -ELIBACC;
	tb = sc->scols_new_table();
	if (!tb)
		return -ENOMEM;
	for (size_t c = 0; c < sizeof(node_cols) / sizeof(node_cols[0]); c++) {
		if (!sc->scols_table_new_column(tb, node_cols[c].name, 0, SCOLS_FL_RIGHT)) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < ps->n; i++) {
		const struct hk_pool *p = ps->p[i];

		for (size_t k = 0; k < hk_pool_node_count(p); k++) {
			struct libscols_line *ln = sc->scols_table_new_line(tb, NULL);
			char buf[32];

			if (!ln) {
				rc = -ENOMEM;
				goto out;
			}
			for (size_t c = 0; c < sizeof(node_cols) / sizeof(node_cols[0]); c++) {
				if (c == COL_NODE)
					snprintf(buf, sizeof(buf), "%d", hk_pool_node_id(p, k));
				else
					snprintf(buf, sizeof(buf), "%" PRIu64,
						 hk_pool_node_get(p, k, node_cols[c].field));
				if (sc->scols_line_set_data(ln, c, buf) != 0) {
					rc = -ENOMEM;
					goto out;
				}
			}
		}
	}
	rc = sc->scols_print_table(tb);
out:
	sc->scols_unref_table(tb);
	if (rc < 0)
		ha_msg(ctl, HA_ERROR, "cannot print the per-node table: %s", strerror(-rc));
	return rc;
}

/* A mount of this size that the caller may use (libhugetlbfs: R, W and X access). */
static bool has_usable_mount(struct hugeadm_ctl *ctl, const struct hk_mounts *ms, uint64_t size)
{
	for (size_t i = 0; ms && i < hk_mounts_count(ms); i++) {
		if (hk_mount_page_size(ms, i) != size)
			continue;
		/* In a dumped tree the mount points are not ours to test. */
		if (!hk_is_live(ctl->ctx) ||
		    access(hk_mount_target(ms, i), R_OK | W_OK | X_OK) == 0)
			return true;
	}
	return false;
}

static bool configured(struct hugeadm_ctl *ctl, const struct hk_mounts *ms, const struct hk_pool *p)
{
	return hk_pool_get(p, HK_POOL_MAXIMUM) > 0 &&
	       has_usable_mount(ctl, ms, hk_pool_get(p, HK_POOL_SIZE));
}

static void print_page_sizes(struct hugeadm_ctl *ctl, const struct pools *ps,
			     const struct hk_mounts *ms, bool all)
{
	for (size_t i = 0; i < ps->n; i++) {
		if (all || configured(ctl, ms, ps->p[i]))
			printf("%" PRIu64 "\n", hk_pool_get(ps->p[i], HK_POOL_SIZE));
	}
}

/*
 * 2.23's table. A mount point's control characters and backslashes are written
 * as in the mount table (\012 for a newline): one line per mount, whatever the
 * name holds; an ordinary name prints as 2.23 printed it.
 */
static void print_mounts(struct hugeadm_ctl *ctl, const struct hk_mounts *ms)
{
	size_t n = ms ? hk_mounts_count(ms) : 0;
	char **targets, **options;
	int width = 20;
	bool ok;

	if (n == 0) {
		ha_msg(ctl, HA_ERROR, "No hugetlbfs mount points found");
		return;
	}
	targets = calloc(n, sizeof(*targets));
	options = calloc(n, sizeof(*options));
	ok = targets && options;
	for (size_t i = 0; ok && i < n; i++) {
		targets[i] = hkt_escape_ctl(hk_mount_target(ms, i), true);
		options[i] = hkt_escape_ctl(hk_mount_options(ms, i), false);
		ok = targets[i] && options[i];
		if (ok && strlen(targets[i]) > (size_t)width)
			width = (int)strlen(targets[i]);
	}
	if (ok) {
		printf("%-*s %s\n", width, "Mount Point", "Options");
		for (size_t i = 0; i < n; i++)
			printf("%-*s %s\n", width, targets[i], options[i]);
	} else {
		ha_msg(ctl, HA_ERROR, "cannot list the mounts: %s", strerror(ENOMEM));
	}
	for (size_t i = 0; targets && options && i < n; i++) {
		free(targets[i]);
		free(options[i]);
	}
	free(targets);
	free(options);
}

static int read_mounts(struct hugeadm_ctl *ctl, struct hk_mounts **ms)
{
	int rc = hk_mounts_read(ctl->ctx, ms);

	if (rc < 0)
		ha_msg(ctl, HA_ERROR, "cannot read the mount table: %s", strerror(-rc));
	return rc;
}

static void explain_min_free_kbytes(struct hugeadm_ctl *ctl)
{
	uint64_t cur, rec;

	if (hk_sysctl_read(ctl->ctx, HK_SYSCTL_MIN_FREE_KBYTES, &cur) < 0 ||
	    hk_recommended_min_free_kbytes(ctl->ctx, &rec) < 0) {
		ha_msg(ctl, HA_WARNING, "cannot read %s or %s",
		       hk_sysctl_path(HK_SYSCTL_MIN_FREE_KBYTES), "the zone list");
		return;
	}
	if (rec > cur) {
		printf("\n");
		printf("The %s of %" PRIu64 " is too small. To maximiuse efficiency\n",
		       hk_sysctl_path(HK_SYSCTL_MIN_FREE_KBYTES), cur);
		printf("of fragmentation avoidance, there should be at least one huge page free per zone\n");
		printf("in the system which minimally requires a min_free_kbytes value of %" PRIu64
		       "\n",
		       rec);
	}
}

/* kernel.shmmax now and the recommended value (0: no pool configured), for text and JSON. */
struct shmmax {
	bool have_cur, have_rec;
	uint64_t cur, rec;
};

static void shmmax_read(struct hugeadm_ctl *ctl, struct shmmax *s)
{
	s->have_cur = hk_sysctl_read(ctl->ctx, HK_SYSCTL_SHMMAX, &s->cur) == 0;
	s->have_rec = hk_recommended_shmmax(ctl->ctx, &s->rec) == 0;
}

static void explain_shmmax(struct hugeadm_ctl *ctl)
{
	struct shmmax s;
	uint64_t cur, rec;

	shmmax_read(ctl, &s);
	if (!s.have_cur || !s.have_rec) {
		ha_msg(ctl, HA_WARNING, "cannot read %s", hk_sysctl_path(HK_SYSCTL_SHMMAX));
		return;
	}
	cur = s.cur;
	rec = s.rec;
	/* libhugetlbfs read shmmax as a signed long and showed 2^63-1; this is the real value. */
	if (cur != rec) {
		printf("\n");
		printf("A %s value of %" PRIu64 " bytes may be sub-optimal. To maximise\n",
		       hk_sysctl_path(HK_SYSCTL_SHMMAX), cur);
		printf("shared memory usage, this should be set to the size of the largest shared memory\n");
		printf("segment size you want to be able to use. Alternatively, set it to a size matching\n");
		printf("the maximum possible allocation size of all huge pages. This can be done\n");
		printf("automatically, using the --set-recommended-shmmax option.\n");
	}
	if (rec == 0) {
		printf("\n");
		ha_msg(ctl, HA_WARNING,
		       "We can't make a shmmax recommendation until huge pages are configured!");
		return;
	}
	printf("\n");
	printf("The recommended shmmax for your currently allocated huge pages is %" PRIu64
	       " bytes.\n",
	       rec);
	printf("To make shmmax settings persistent, add the following line to /etc/sysctl.conf:\n");
	printf("  kernel.shmmax = %" PRIu64 "\n", rec);
}

static bool in_group(const struct group *gr, const char *name)
{
	for (char *const *m = gr->gr_mem; m && *m; m++)
		if (strcmp(*m, name) == 0)
			return true;
	return false;
}

/*
 * vm.hugetlb_shm_group, its group in the running system's database (gr, NULL
 * when there is none), the caller (pw, NULL when not in the password file)
 * and whether the caller may use the group: root, its primary group or a
 * member. For text and JSON.
 */
struct shm_group {
	bool have_gid;
	uint64_t gid;
	const struct group *gr;
	const struct passwd *pw;
	uid_t uid;
	bool member;
};

static void shm_group_read(struct hugeadm_ctl *ctl, struct shm_group *g)
{
	*g = (struct shm_group){.uid = getuid()};
	g->have_gid = hk_sysctl_read(ctl->ctx, HK_SYSCTL_HUGETLB_SHM_GROUP, &g->gid) == 0;
	if (!g->have_gid)
		return;
	g->gr = getgrgid((gid_t)g->gid);
	if (!g->gr)
		return;
	g->pw = getpwuid(g->uid);
	g->member = g->pw && (g->uid == 0 || g->pw->pw_gid == (gid_t)g->gid ||
			      in_group(g->gr, g->pw->pw_name));
}

static void explain_shm_group(struct hugeadm_ctl *ctl)
{
	struct shm_group g;

	shm_group_read(ctl, &g);
	if (!g.have_gid) {
		ha_msg(ctl, HA_WARNING, "cannot read %s",
		       hk_sysctl_path(HK_SYSCTL_HUGETLB_SHM_GROUP));
		return;
	}
	if (!g.gr) {
		printf("\n");
		ha_msg(ctl, HA_WARNING,
		       "Group ID %" PRIu64
		       " in hugetlb_shm_group doesn't appear to be a valid group!",
		       g.gid);
		return;
	}
	if (!g.pw) {
		printf("\n");
		ha_msg(ctl, HA_WARNING, "User uid %u is not in the password file!",
		       (unsigned)g.uid);
		return;
	}
	if (!g.member) {
		printf("\n");
		ha_msg(ctl, HA_WARNING,
		       "User %s (uid: %u) is not a member of the hugetlb_shm_group %s (gid: %" PRIu64
		       ")!",
		       g.pw->pw_name, (unsigned)g.uid, g.gr->gr_name, g.gid);
		return;
	}
	printf("\n");
	printf("To make your hugetlb_shm_group settings persistent, add the following line to /etc/sysctl.conf:\n");
	printf("  vm.hugetlb_shm_group = %" PRIu64 "\n", g.gid);
}

/* What libhugetlbfs did not say: nodes, THP, gigantic pages. */
static void explain_today(struct hugeadm_ctl *ctl, const struct pools *ps)
{
	char *enabled = NULL, *defrag = NULL;
	bool any_nodes = false;

	for (size_t i = 0; i < ps->n; i++)
		any_nodes |= hk_pool_node_count(ps->p[i]) > 0;
	if (any_nodes) {
		printf("\nHuge page pools per NUMA node:\n");
		fflush(stdout);
		print_per_node(ctl, ps);
	}
	ha_explain_obtainable(ctl, ps->p, ps->n);

	if (hk_thp_read(ctl->ctx, "enabled", &enabled) == 0) {
		printf("\nTransparent huge pages: enabled=%s", enabled);
		if (hk_thp_read(ctl->ctx, "defrag", &defrag) == 0)
			printf(" defrag=%s", defrag);
		printf("\n");
		ha_explain_thp(ctl);
	} else {
		printf("\nTransparent huge pages: not supported by this kernel\n");
	}
	free(enabled);
	free(defrag);

	for (size_t i = 0; i < ps->n; i++) {
		const struct hk_pool *p = ps->p[i];
		char sz[32];

		if (!hk_pool_is_gigantic(p))
			continue;
		hk_format_size(sz, sizeof(sz), hk_pool_get(p, HK_POOL_SIZE));
		printf("\n%s pages are gigantic: the kernel cannot overcommit them, and a running\n"
		       "system often has no free %s ranges left. Reserve them at boot with the kernel\n"
		       "parameters \"hugepagesz=%s hugepages=N\" (per node: \"hugepagesz=%s "
		       "hugepages=0:N,1:M\").\n",
		       sz, sz, sz, sz);
	}
	ha_explain_kernel(ctl, ps->p, ps->n);
}

static int explain(struct hugeadm_ctl *ctl, const struct pools *ps, const struct hk_mounts *ms)
{
	uint64_t mem_kb = 0;

	hk_meminfo_read(ctl->ctx, "MemTotal", &mem_kb);
	printf("Total System Memory: %" PRIu64 " MB\n\n", mem_kb / 1024);
	print_mounts(ctl, ms);
	printf("\nHuge page pools:\n");
	print_pool_list(ps);
	printf("\nHuge page sizes with configured pools:\n");
	print_page_sizes(ctl, ps, ms, false);
	explain_min_free_kbytes(ctl);
	explain_shmmax(ctl);
	ha_check_swap(ctl);
	explain_shm_group(ctl);
	printf("\nNote: Permanent swap space should be preferred when dynamic huge page pools are used.\n");
	explain_today(ctl, ps);
	return 0;
}

int ha_report_text(struct hugeadm_ctl *ctl)
{
	struct hk_mounts *ms = NULL;
	struct pools ps = {0};
	int rc = 0;

	/* The process first: a bad PID fails the run before any report is printed. */
	if (ctl->pages_needed && ha_pages_needed_read(ctl) < 0)
		return HK_EXIT_FAILURE;
	if ((ctl->list_mounts || ctl->page_sizes || ctl->explain) && read_mounts(ctl, &ms) < 0)
		return HK_EXIT_FAILURE;
	if ((ctl->pool_list || ctl->page_sizes || ctl->page_sizes_all || ctl->explain) &&
	    pools_load(ctl, &ps) < 0) {
		hk_mounts_unref(ms);
		return HK_EXIT_FAILURE;
	}
	if (ctl->list_mounts)
		print_mounts(ctl, ms);
	if (ctl->pool_list) {
		if (ctl->per_node) {
			fflush(stdout);
			rc = print_per_node(ctl, &ps);
		} else {
			print_pool_list(&ps);
		}
	}
	if (ctl->page_sizes)
		print_page_sizes(ctl, &ps, ms, false);
	if (ctl->page_sizes_all)
		print_page_sizes(ctl, &ps, ms, true);
	if (ctl->explain)
		explain(ctl, &ps, ms);
	if (ctl->list_text && ha_list_shared_text(ctl, NULL) < 0)
		rc = -1;
	if (ctl->usage && ha_usage_report(ctl, NULL) < 0)
		rc = -1;
	if (ctl->pages_needed && ha_pages_needed_report(ctl, NULL) < 0)
		rc = -1;
	pools_free(&ps);
	hk_mounts_unref(ms);
	return rc < 0 || ctl->obtain_failed ? HK_EXIT_FAILURE : HK_EXIT_SUCCESS;
}

/* A numeric mount option, or null when the mount has none. */
static void json_option(struct hkt_json *j, const char *key, const struct hk_mounts *ms, size_t i,
			const char *name)
{
	char *v = NULL, *end;
	unsigned long long n;

	if (hk_mount_option(ms, i, name, &v) < 0) {
		hkt_json_null(j, key);
		return;
	}
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || *end)
		hkt_json_null(j, key);
	else
		hkt_json_u64(j, key, n);
	free(v);
}

/*
 * Limits, owner and mode of a mount. On the running system the owner and mode
 * are those of the mount's root directory (hugeadm chowns it after mounting);
 * in a --sysroot tree only the mount options can tell.
 */
static void json_mount_details(struct hugeadm_ctl *ctl, struct hkt_json *j,
			       const struct hk_mounts *ms, size_t i)
{
	const struct passwd *pw;
	const struct group *gr;
	struct stat st;
	char mode[8], *v = NULL;

	json_option(j, "size_limit", ms, i, "size");
	json_option(j, "min_size", ms, i, "min_size");
	if (!hk_is_live(ctl->ctx) || stat(hk_mount_target(ms, i), &st) < 0) {
		json_option(j, "uid", ms, i, "uid");
		json_option(j, "gid", ms, i, "gid");
		if (hk_mount_option(ms, i, "mode", &v) == 0 && strspn(v, "01234567") == strlen(v) &&
		    *v) {
			snprintf(mode, sizeof(mode), "%04lo", strtoul(v, NULL, 8) & 07777);
			hkt_json_string(j, "mode", mode);
		} else {
			hkt_json_null(j, "mode");
		}
		free(v);
		return;
	}
	hkt_json_u64(j, "uid", st.st_uid);
	hkt_json_u64(j, "gid", st.st_gid);
	pw = getpwuid(st.st_uid);
	gr = getgrgid(st.st_gid);
	if (pw)
		hkt_json_string(j, "owner", pw->pw_name);
	else
		hkt_json_null(j, "owner");
	if (gr)
		hkt_json_string(j, "group", gr->gr_name);
	else
		hkt_json_null(j, "group");
	snprintf(mode, sizeof(mode), "%04o", (unsigned)(st.st_mode & 07777));
	hkt_json_string(j, "mode", mode);
}

/* --list-all-mounts (and the mounts of --explain): every hugetlbfs mount, [] when none. */
static void json_mounts(struct hugeadm_ctl *ctl, struct hkt_json *j, const struct hk_mounts *ms)
{
	hkt_json_open_array(j, "mounts");
	for (size_t i = 0; ms && i < hk_mounts_count(ms); i++) {
		hkt_json_open_object(j, NULL);
		hkt_json_string(j, "target", hk_mount_target(ms, i));
		hkt_json_u64(j, "pagesize", hk_mount_page_size(ms, i));
		hkt_json_string(j, "options", hk_mount_options(ms, i));
		json_mount_details(ctl, j, ms, i);
		hkt_json_close_object(j);
	}
	hkt_json_close_array(j);
}

/* The sizes of print_page_sizes: all of them, or those with a configured pool. */
static void json_page_sizes(struct hugeadm_ctl *ctl, struct hkt_json *j, const char *key,
			    const struct pools *ps, const struct hk_mounts *ms, bool all)
{
	hkt_json_open_array(j, key);
	for (size_t i = 0; i < ps->n; i++)
		if (all || configured(ctl, ms, ps->p[i]))
			hkt_json_u64(j, NULL, hk_pool_get(ps->p[i], HK_POOL_SIZE));
	hkt_json_close_array(j);
}

/* A number, or null when it was not read. */
static void json_u64_or_null(struct hkt_json *j, const char *key, bool have, uint64_t v)
{
	if (have)
		hkt_json_u64(j, key, v);
	else
		hkt_json_null(j, key);
}

/* One node of one pool; the flat --per-node list also names the size. */
static void json_node(struct hugeadm_ctl *ctl, struct hkt_json *j, const struct hk_pool *p,
		      size_t k, bool with_size)
{
	hkt_json_open_object(j, NULL);
	hkt_json_int(j, "node", hk_pool_node_id(p, k));
	if (with_size)
		hkt_json_u64(j, "size", hk_pool_get(p, HK_POOL_SIZE));
	hkt_json_u64(j, "total", hk_pool_node_get(p, k, HK_POOL_NR));
	hkt_json_u64(j, "free", hk_pool_node_get(p, k, HK_POOL_FREE));
	hkt_json_u64(j, "surplus", hk_pool_node_get(p, k, HK_POOL_SURPLUS));
	ha_json_obtainable(ctl, j, hk_pool_get(p, HK_POOL_SIZE), hk_pool_node_id(p, k));
	hkt_json_close_object(j);
}

/* With explain, also whether the size is gigantic and how such pages can be had. */
static void json_pool(struct hugeadm_ctl *ctl, struct hkt_json *j, const struct hk_pool *p,
		      bool explain)
{
	static const struct {
		const char *key;
		enum hk_pool_field field;
	} fields[] = {
		{"minimum", HK_POOL_MINIMUM},	    {"current", HK_POOL_NR},
		{"maximum", HK_POOL_MAXIMUM},	    {"free", HK_POOL_FREE},
		{"reserved", HK_POOL_RESV},	    {"surplus", HK_POOL_SURPLUS},
		{"overcommit", HK_POOL_OVERCOMMIT},
	};

	hkt_json_open_object(j, NULL);
	hkt_json_u64(j, "size", hk_pool_get(p, HK_POOL_SIZE));
	hkt_json_bool(j, "default", hk_pool_is_default(p));
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
		hkt_json_u64(j, fields[f].key, hk_pool_get(p, fields[f].field));
	/* Where the kernel can demote this size (5.16), the size its pages become. */
	if (hk_pool_get(p, HK_POOL_DEMOTE_SIZE))
		hkt_json_u64(j, "demote_size", hk_pool_get(p, HK_POOL_DEMOTE_SIZE));
	else
		hkt_json_null(j, "demote_size");
	ha_json_obtainable(ctl, j, hk_pool_get(p, HK_POOL_SIZE), HK_NODE_ALL);
	if (explain) {
		hkt_json_bool(j, "gigantic", hk_pool_is_gigantic(p));
		if (hk_pool_is_gigantic(p))
			ha_json_gigantic_how(ctl, j, hk_pool_get(p, HK_POOL_SIZE));
	}
	hkt_json_open_array(j, "nodes");
	for (size_t k = 0; k < hk_pool_node_count(p); k++)
		json_node(ctl, j, p, k, false);
	hkt_json_close_array(j);
	hkt_json_close_object(j);
}

static void json_per_node(struct hugeadm_ctl *ctl, struct hkt_json *j, const struct pools *ps)
{
	hkt_json_open_array(j, "nodes");
	for (size_t i = 0; i < ps->n; i++) {
		const struct hk_pool *p = ps->p[i];

		for (size_t k = 0; k < hk_pool_node_count(p); k++)
			json_node(ctl, j, p, k, true);
	}
	hkt_json_close_array(j);
}

/*
 * --explain --json: the numbers behind the text, under "explain": memory,
 * the mounts, min_free_kbytes and shmmax (now and recommended), swap,
 * hugetlb_shm_group, the pools with what a grow could get now, the sizes with
 * configured pools, and THP's counters with the verdict. Each comes from the
 * same reads as its text paragraph.
 */
static void json_explain(struct hugeadm_ctl *ctl, struct hkt_json *j, const struct pools *ps,
			 const struct hk_mounts *ms)
{
	struct ha_swap_state sw;
	struct shm_group g;
	struct shmmax sm;
	uint64_t v;

	hkt_json_open_object(j, "explain");
	if (hk_meminfo_read(ctl->ctx, "MemTotal", &v) == 0)
		hkt_json_u64(j, "memory_total", v * 1024);
	else
		hkt_json_null(j, "memory_total");
	json_mounts(ctl, j, ms);
	hkt_json_open_object(j, "min_free_kbytes");
	if (hk_sysctl_read(ctl->ctx, HK_SYSCTL_MIN_FREE_KBYTES, &v) == 0)
		hkt_json_u64(j, "current", v);
	else
		hkt_json_null(j, "current");
	if (hk_recommended_min_free_kbytes(ctl->ctx, &v) == 0)
		hkt_json_u64(j, "recommended", v);
	else
		hkt_json_null(j, "recommended");
	hkt_json_close_object(j);

	/* The recommendation is null, as the text makes none, until a pool is configured. */
	shmmax_read(ctl, &sm);
	hkt_json_open_object(j, "shmmax");
	json_u64_or_null(j, "current", sm.have_cur, sm.cur);
	json_u64_or_null(j, "recommended", sm.have_rec && sm.rec, sm.rec);
	hkt_json_close_object(j);

	ha_swap_state(ctl, &sw);
	hkt_json_open_object(j, "swap");
	json_u64_or_null(j, "total", sw.have_total, sw.total);
	json_u64_or_null(j, "free", sw.have_free, sw.free);
	hkt_json_bool(j, "configured", !sw.none);
	hkt_json_bool(j, "low", sw.low);
	hkt_json_close_object(j);

	shm_group_read(ctl, &g);
	hkt_json_open_object(j, "hugetlb_shm_group");
	json_u64_or_null(j, "gid", g.have_gid, g.gid);
	if (g.gr)
		hkt_json_string(j, "group", g.gr->gr_name);
	else
		hkt_json_null(j, "group");
	if (g.gr && g.pw)
		hkt_json_bool(j, "caller_member", g.member);
	else
		hkt_json_null(j, "caller_member");
	hkt_json_close_object(j);

	hkt_json_open_array(j, "pools");
	for (size_t i = 0; i < ps->n; i++)
		json_pool(ctl, j, ps->p[i], true);
	hkt_json_close_array(j);
	json_page_sizes(ctl, j, "configured_page_sizes", ps, ms, false);
	ha_json_thp(ctl, j);
	ha_json_kernel(ctl, j);
	hkt_json_close_object(j);
}

/* One JSON document on stdout holding every report asked for; errors go to stderr. */
int ha_report_json(struct hugeadm_ctl *ctl)
{
	struct hk_mounts *ms = NULL;
	struct pools ps = {0};
	struct hkt_json j;
	int rc = 0;

	if (ctl->pages_needed && ha_pages_needed_read(ctl) < 0)
		return HK_EXIT_FAILURE;
	if ((ctl->list_mounts || ctl->page_sizes || ctl->explain) && read_mounts(ctl, &ms) < 0)
		return HK_EXIT_FAILURE;
	if (pools_load(ctl, &ps) < 0) {
		hk_mounts_unref(ms);
		return HK_EXIT_FAILURE;
	}
	hkt_json_init(&j, stdout);
	hkt_json_open_object(&j, NULL);
	if (ctl->list_mounts)
		json_mounts(ctl, &j, ms);
	if (ctl->pool_list && ctl->per_node) {
		json_per_node(ctl, &j, &ps);
	} else if (ctl->pool_list) {
		hkt_json_open_array(&j, "pools");
		for (size_t i = 0; i < ps.n; i++)
			json_pool(ctl, &j, ps.p[i], false);
		hkt_json_close_array(&j);
	}
	if (ctl->page_sizes || ctl->page_sizes_all) {
		/* Both asked for: the configured ones under their own key. */
		if (ctl->page_sizes_all)
			json_page_sizes(ctl, &j, "page_sizes", &ps, ms, true);
		if (ctl->page_sizes)
			json_page_sizes(ctl, &j,
					ctl->page_sizes_all ? "configured_page_sizes"
							    : "page_sizes",
					&ps, ms, false);
	}
	if (ctl->list_text)
		rc = ha_list_shared_text(ctl, &j);
	if (ctl->explain)
		json_explain(ctl, &j, &ps, ms);
	if (ctl->usage && ha_usage_report(ctl, &j) < 0)
		rc = -1;
	if (ctl->pages_needed && ha_pages_needed_report(ctl, &j) < 0)
		rc = -1;
	hkt_json_close_object(&j);
	hkt_json_end(&j);
	pools_free(&ps);
	hk_mounts_unref(ms);
	return rc < 0 || ctl->obtain_failed ? HK_EXIT_FAILURE : HK_EXIT_SUCCESS;
}
