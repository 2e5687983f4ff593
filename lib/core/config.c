// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The configuration: /etc/hugekit/hugekit.conf and /etc/hugekit/conf.d/NAME.conf
 * (in name order), or one file, parsed with libinih. Everything that can be
 * checked without the machine is checked here (sections, keys, the form of
 * each value, a key set twice, two files that disagree, a maximum below its
 * minimum), each problem reported with its file and line; what the machine
 * must have (sizes, nodes, users) is the plan's (plan.c).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dl.h"
#include "internal.h"
#include "privilege.h"

/* Longest line: libinih's buffer; longer ones are an error, not split. */
#define LINE_MAX_LEN 1024

struct hk_config {
	struct hk_config_entry *entries;
	unsigned *section_lines; /* per entry: the line of its [section] header */
	size_t n;
	char **files;
	bool *hidden; /* per file: its text is not shown (see problem()) */
	size_t n_files;
	char **strings; /* every string the entries point to */
	size_t n_strings;
};

/* One file being parsed. */
struct parse {
	struct hk_config *cfg;
	hk_config_error_fn fn;
	void *data;
	unsigned errors;
	const char *file; /* as kept in cfg->files */
	size_t first;	  /* this file's first entry */
	/* The reader's place. */
	const char *pos;
	unsigned line;
	unsigned section_line;
	unsigned bad_section_line; /* a section already said to be bad */
	bool bad_header; /* the last [ line or its section was bad: its keys are not checked */
	/*
	 * The section as written, whole (libinih's own copy is cut at 49
	 * characters), and the keys it had; a value too long for libinih's line
	 * buffer (it gets a stand-in).
	 */
	char section[LINE_MAX_LEN];
	unsigned keys;
	char long_value[LINE_MAX_LEN];
	int oom;
	/*
	 * Privileged for someone else, on a file that someone cannot read: a
	 * problem is said with its file and line, never with the text it is
	 * about (it could be a line of any file root can read).
	 */
	bool hide;
};

/* The value libinih gets for a line too long for its buffer: the reader keeps the real one. */
#define LONG_VALUE "\x01"

static void problem(struct parse *p, unsigned line, const char *fmt, ...) HK_PRINTF(3, 4);

static void problem(struct parse *p, unsigned line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->errors++;
	if (p->fn)
		p->fn(p->data, p->file, line, p->hide ? HKC_HIDDEN_PROBLEM : msg);
}

static const char *keep(struct parse *p, const char *s)
{
	struct hk_config *c = p->cfg;
	char **nv, *d;

	if (!s)
		return NULL;
	nv = realloc(c->strings, (c->n_strings + 1) * sizeof(*nv));
	d = strdup(s);
	if (!nv || !d) {
		if (nv)
			c->strings = nv;
		free(d);
		p->oom = 1;
		return NULL;
	}
	c->strings = nv;
	c->strings[c->n_strings++] = d;
	return d;
}

/* Values */

static bool is_number(const char *s)
{
	uint64_t v;

	return hkc_parse_u64_strict(s, &v) == 0;
}

static bool is_size(const char *s)
{
	uint64_t v;

	return hk_parse_size(s, &v) == 0 && v > 0;
}

static bool one_of(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (strcmp(s, *words) == 0)
			return true;
	return false;
}

int hkl_pool_pages(const char *s, uint64_t size, uint64_t *ret)
{
	uint64_t v;

	if (hkc_parse_u64_strict(s, &v) == 0) {
		*ret = v;
		return 0;
	}
	if (hk_parse_size(s, &v) < 0 || !size || v % size)
		return -EINVAL;
	*ret = v / size;
	return 0;
}

/* Whether value has an empty part between commas (strtok_r would pass over it). */
static bool empty_part(const char *value)
{
	for (const char *c = value; *c; c++) {
		const char *next = c + 1;

		while (*next == ' ' || *next == '\t')
			next++;
		if (*c == ',' && (c == value || *next == ',' || !*next))
			return true;
	}
	return false;
}

/* One part "N" or "N@NODE" (tok, cut up) into part: 0, or -EINVAL with why. */
static int one_part(char *tok, const char *value, uint64_t size, bool allow_nodes,
		    struct hkl_pool_part *part, char *why, size_t why_sz)
{
	char *at = strchr(tok, '@');
	uint64_t node;

	part->node = HK_NODE_ALL;
	if (at) {
		*at = '\0';
		if (!allow_nodes) {
			snprintf(why, why_sz, "%s: a maximum is for the whole pool (no @NODE)",
				 value);
			return -EINVAL;
		}
		if (hkc_parse_u64_strict(hkc_trim(at + 1), &node) < 0 || node > INT_MAX) {
			snprintf(why, why_sz, "'%s': '%s' is not a node number", value,
				 hkc_trim(at + 1));
			return -EINVAL;
		}
		part->node = (int)node;
	}
	if (hkl_pool_pages(hkc_trim(tok), size, &part->pages) < 0) {
		snprintf(why, why_sz,
			 "'%s': '%s' is not a page count or a whole number of pages (a size with "
			 "K, M or G)",
			 value, hkc_trim(tok));
		return -EINVAL;
	}
	return 0;
}

int hkl_pool_parts(const char *value, uint64_t size, bool allow_nodes, struct hkl_pool_part *parts,
		   size_t max, size_t *ret_n, char *why, size_t why_sz)
{
	char buf[LINE_MAX_LEN], *save = NULL;
	size_t n = 0, with_node = 0;

	if (empty_part(value)) {
		snprintf(why, why_sz, "'%s': an empty part between commas", value);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", value);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max || n == HKC_MAX_NODES) {
			snprintf(why, why_sz, "'%s': more than %d nodes", value, HKC_MAX_NODES);
			return -EINVAL;
		}
		if (one_part(tok, value, size, allow_nodes, &parts[n], why, why_sz) < 0)
			return -EINVAL;
		for (size_t i = 0; parts[n].node != HK_NODE_ALL && i < n; i++) {
			if (parts[i].node == parts[n].node) {
				snprintf(why, why_sz, "'%s': node %d is given twice", value,
					 parts[n].node);
				return -EINVAL;
			}
		}
		with_node += parts[n].node != HK_NODE_ALL;
		n++;
	}
	if (!n) {
		snprintf(why, why_sz, "'%s': no page count", value);
		return -EINVAL;
	}
	if (!allow_nodes && n > 1) {
		snprintf(why, why_sz, "%s: a maximum is one count for the whole pool", value);
		return -EINVAL;
	}
	if (!with_node && n > 1) {
		snprintf(why, why_sz,
			 "'%s': one count for the whole pool, or a count per node (N@NODE, ...)",
			 value);
		return -EINVAL;
	}
	if (with_node && with_node != n) {
		snprintf(why, why_sz, "'%s': give every part a node (N@NODE) or none", value);
		return -EINVAL;
	}
	*ret_n = n;
	return 0;
}

/*
 * minimum: N, or N@NODE, ... (nodes once each, all or none per node). The
 * sum of the pages in *ret_total; -1 after saying what is wrong.
 */
static int check_minimum(struct parse *p, unsigned line, const char *sec, const char *value,
			 uint64_t size, bool allow_nodes, uint64_t *ret_total)
{
	struct hkl_pool_part *parts = calloc(HKC_MAX_NODES, sizeof(*parts));
	uint64_t total = 0;
	char why[LINE_MAX_LEN + 128];
	size_t n = 0;

	if (!parts) {
		problem(p, line, "[%s] '%s': out of memory", sec, value);
		return -1;
	}
	if (hkl_pool_parts(value, size, allow_nodes, parts, HKC_MAX_NODES, &n, why, sizeof(why)) <
	    0) {
		problem(p, line, "[%s] %s", sec, why);
		free(parts);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		total = hkc_sat_add(total, parts[i].pages);
	free(parts);
	*ret_total = total;
	return 0;
}

/* A name of a user or group, or a number. */
static bool is_account(const char *s)
{
	if (is_number(s))
		return true;
	if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_.-", *s))
			return false;
	return true;
}

/* size, min_size: a size, or a percentage N% (0-100). */
static bool is_mount_size(const char *s)
{
	size_t len = strlen(s);
	char num[32];
	uint64_t v;

	if (len > 1 && s[len - 1] == '%') {
		if (len - 1 >= sizeof(num))
			return false;
		snprintf(num, sizeof(num), "%.*s", (int)(len - 1), s);
		return hkc_parse_u64_strict(num, &v) == 0 && v <= 100;
	}
	return is_size(s) || is_number(s);
}

/* An absolute path with nothing to resolve: no ".", "..", "//", trailing '/'. */
static bool clean_path(const char *s)
{
	size_t len = strlen(s);

	if (s[0] != '/' || len < 2 || s[len - 1] == '/' || strstr(s, "//") || len >= PATH_MAX)
		return false;
	for (const char *c = s; c; c = strchr(c + 1, '/')) {
		const char *e = c + 1;

		if ((e[0] == '.' && (e[1] == '/' || !e[1])) ||
		    (e[0] == '.' && e[1] == '.' && (e[2] == '/' || !e[2])))
			return false;
	}
	for (const char *c = s; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return false;
	return true;
}

/* A cgroup below the root: "db.slice", "machine.slice/vm1" (a leading '/' dropped). */
bool hkl_cgroup_name_ok(const char *s)
{
	char buf[PATH_MAX];

	/* "/" and s fit whole, or it is refused: never a check of a cut copy. */
	if (!*s || strlen(s) >= sizeof(buf) - 1)
		return false;
	snprintf(buf, sizeof(buf), "/%s", s);
	return clean_path(buf);
}

static const char *const thp_enabled[] = {"always", "madvise", "never", NULL};
static const char *const thp_defrag[] = {"always",  "defer", "defer+madvise",
					 "madvise", "never", NULL};
static const char *const thp_shmem[] = {"always", "within_size", "advise", "never",
					"deny",	  "force",	 NULL};
static const char *const mthp_enabled[] = {"always", "inherit", "madvise", "never", NULL};
static const char *const mthp_shmem[] = {"always", "inherit", "within_size",
					 "advise", "never",   NULL};
static const char *const zero_one[] = {"0", "1", NULL};
static const char *const on_off[] = {"on", "off", NULL};
static const char *const boot_pools[] = {"gigantic", "all", NULL};

/* "hugepages-64kB/enabled": the mTHP size's knob, or NULL. */
static const char *mthp_knob(const char *key)
{
	const char *p = key;

	if (strncmp(p, "hugepages-", 10) != 0)
		return NULL;
	p += 10;
	if (!isdigit((unsigned char)*p))
		return NULL;
	while (isdigit((unsigned char)*p))
		p++;
	return strncmp(p, "kB/", 3) == 0 ? p + 3 : NULL;
}

static void check_thp(struct parse *p, unsigned line, const char *key, const char *value)
{
	static const char *const numbers[] = {
		"khugepaged/pages_to_scan",
		"khugepaged/scan_sleep_millisecs",
		"khugepaged/alloc_sleep_millisecs",
		"khugepaged/max_ptes_none",
		"khugepaged/max_ptes_swap",
		"khugepaged/max_ptes_shared",
		NULL,
	};
	const char *const *words = NULL;
	const char *m = mthp_knob(key);

	if (strcmp(key, "enabled") == 0)
		words = thp_enabled;
	else if (strcmp(key, "defrag") == 0)
		words = thp_defrag;
	else if (strcmp(key, "shmem_enabled") == 0)
		words = thp_shmem;
	else if (strcmp(key, "use_zero_page") == 0 || strcmp(key, "khugepaged/defrag") == 0)
		words = zero_one;
	else if (m && strcmp(m, "enabled") == 0)
		words = mthp_enabled;
	else if (m && strcmp(m, "shmem_enabled") == 0)
		words = mthp_shmem;
	if (words) {
		if (!one_of(value, words))
			problem(p, line, "[thp] %s '%s': not one of the kernel's modes", key,
				value);
		return;
	}
	if (one_of(key, numbers)) {
		if (!is_number(value))
			problem(p, line, "[thp] %s '%s': not a number", key, value);
		return;
	}
	problem(p, line, "unknown key '%s' in [thp]", key);
}

static void check_sysctl(struct parse *p, unsigned line, const char *key, const char *value)
{
	uint64_t v;

	if (strcmp(key, "vm.min_free_kbytes") == 0) {
		if (strcmp(value, "recommended") && !is_number(value))
			problem(p, line, "[sysctl] %s '%s': not a number or 'recommended'", key,
				value);
	} else if (strcmp(key, "kernel.shmmax") == 0) {
		if (strcmp(value, "recommended") && !is_number(value) && !is_size(value))
			problem(p, line, "[sysctl] %s '%s': not a size or 'recommended'", key,
				value);
	} else if (strcmp(key, "kernel.shmall") == 0) {
		if (!is_number(value))
			problem(p, line, "[sysctl] %s '%s': not a number", key, value);
	} else if (strcmp(key, "vm.hugetlb_shm_group") == 0) {
		if (!is_account(value))
			problem(p, line, "[sysctl] %s '%s': not a group name or number", key,
				value);
	} else if (strcmp(key, "vm.hugetlb_optimize_vmemmap") == 0) {
		if (!one_of(value, zero_one))
			problem(p, line, "[sysctl] %s '%s': 0 or 1", key, value);
	} else if (strcmp(key, "vm.compaction_proactiveness") == 0) {
		if (hkc_parse_u64_strict(value, &v) < 0 || v > 100)
			problem(p, line, "[sysctl] %s '%s': a number from 0 to 100", key, value);
	} else if (strcmp(key, "vm.nr_hugepages") == 0 ||
		   strcmp(key, "vm.nr_hugepages_mempolicy") == 0) {
		problem(p, line, "[sysctl] %s: set it as [pool SIZE] minimum", key);
	} else if (strcmp(key, "vm.nr_overcommit_hugepages") == 0) {
		problem(p, line, "[sysctl] %s: set it as [pool SIZE] maximum", key);
	} else {
		problem(p, line, "unknown key '%s' in [sysctl]", key);
	}
}

static void check_cgroup_key(struct parse *p, unsigned line, const char *sec, const char *key,
			     const char *value)
{
	char size[32];
	const char *s = key + 8, *dot;

	if (strncmp(key, "hugetlb.", 8) != 0 || !(dot = strchr(s, '.')) ||
	    (strcmp(dot, ".max") != 0 && strcmp(dot, ".rsvd.max") != 0) ||
	    (size_t)(dot - s) >= sizeof(size)) {
		problem(p, line,
			"unknown key '%s' in [%s] (hugetlb.SIZE.max, hugetlb.SIZE.rsvd.max)", key,
			sec);
		return;
	}
	snprintf(size, sizeof(size), "%.*s", (int)(dot - s), s);
	if (!is_size(size)) {
		problem(p, line, "[%s] %s: '%s' is not a page size", sec, key, size);
		return;
	}
	if (strcmp(value, "max") && !is_size(value) && !is_number(value))
		problem(p, line, "[%s] %s '%s': not a size or 'max'", sec, key, value);
}

static void check_boot(struct parse *p, unsigned line, const char *key, const char *value)
{
	if (strcmp(key, "default_hugepagesz") == 0) {
		if (!is_size(value))
			problem(p, line, "[boot] %s '%s': not a page size", key, value);
	} else if (strcmp(key, "hugetlb_cma") == 0) {
		char buf[LINE_MAX_LEN], *save = NULL;
		bool ok = true;

		snprintf(buf, sizeof(buf), "%s", value);
		for (char *t = strtok_r(buf, ",", &save); t && ok; t = strtok_r(NULL, ",", &save)) {
			char *colon = strchr(t, ':');

			if (colon) {
				*colon = '\0';
				ok = is_number(hkc_trim(t)) && is_size(hkc_trim(colon + 1));
			} else {
				ok = is_size(hkc_trim(t)) && !strchr(value, ',');
			}
		}
		if (!ok)
			problem(p, line, "[boot] %s '%s': a size, or NODE:SIZE, ...", key, value);
	} else if (strcmp(key, "hugetlb_free_vmemmap") == 0) {
		if (!one_of(value, on_off))
			problem(p, line, "[boot] %s '%s': on or off", key, value);
	} else if (strcmp(key, "pools") == 0) {
		if (!one_of(value, boot_pools))
			problem(p, line, "[boot] %s '%s': gigantic or all", key, value);
	} else {
		problem(p, line, "unknown key '%s' in [boot]", key);
	}
}

/*
 * [apply]: how --apply runs, as its options say it (--hard, --strict,
 * --obey-mempolicy, --add-temp-swap=N, --add-ramdisk-swap, --persist).
 */
static void check_apply(struct parse *p, unsigned line, const char *key, const char *value)
{
	static const char *const flags[] = {"hard",	    "strict",  "obey_mempolicy",
					    "ramdisk_swap", "persist", NULL};
	static const char *const yes_no[] = {"yes", "no", NULL};
	uint64_t n;

	if (one_of(key, flags)) {
		if (!one_of(value, yes_no))
			problem(p, line, "[apply] %s '%s': yes or no", key, value);
	} else if (strcmp(key, "temp_swap") == 0) {
		if (hkc_parse_u64_strict(value, &n) < 0 || n > (1u << 20))
			problem(p, line, "[apply] temp_swap '%s': pages of swap, 0 to 1048576",
				value);
	} else {
		problem(p, line,
			"unknown key '%s' in [apply] (hard, strict, obey_mempolicy, temp_swap, "
			"ramdisk_swap, persist)",
			key);
	}
}

/*
 * A systemd time span of whole parts ("1min", "30s", "1h 30min"): each a
 * number and a unit, more than 0 in all.
 */
static bool is_interval(const char *s)
{
	static const char *const units[] = {"s", "sec", "m", "min", "h", "hr", "d", NULL};
	bool nonzero = false, any = false;

	while (*s) {
		size_t digits = strspn(s, "0123456789"), len;
		char unit[8];

		if (!digits)
			return false;
		for (size_t i = 0; i < digits; i++)
			nonzero |= s[i] != '0';
		s += digits;
		len = strspn(s, "abcdefghijklmnopqrstuvwxyz");
		if (len >= sizeof(unit))
			return false;
		memcpy(unit, s, len);
		unit[len] = '\0';
		if (!one_of(unit, units))
			return false;
		s += len;
		any = true;
		if (*s == ' ' && s[1])
			s++;
	}
	return any && nonzero;
}

/*
 * [metrics]: hugekit-metrics.service and .timer (hugeadm --generate units):
 * node_exporter's textfile directory and how often.
 */
static void check_metrics(struct parse *p, unsigned line, const char *key, const char *value)
{
	if (strcmp(key, "textfile_dir") == 0) {
		if (!clean_path(value) || strchr(" \t\\", value[strlen(value) - 1]))
			problem(p, line,
				"[metrics] textfile_dir '%s': an absolute path without '.', '..', "
				"'//', control characters or a trailing '/', '\\' or blank",
				value);
	} else if (strcmp(key, "interval") == 0) {
		if (!is_interval(value))
			problem(p, line,
				"[metrics] interval '%s': a time span, a number and a unit (s, "
				"min, h, d) for each part: 30s, 1min, 1h 30min",
				value);
	} else {
		problem(p, line, "unknown key '%s' in [metrics] (textfile_dir, interval)", key);
	}
}

/* The section's type and name ("pool", "2M"); false after saying what is wrong. */
static bool split_section(struct parse *p, const char *section, char *type, size_t tsz,
			  const char **ret_name)
{
	const char *sp = section + strcspn(section, " \t");
	const char *name = sp;
	size_t tlen = (size_t)(sp - section);
	static const char *const named[] = {"pool", "mount", "cgroup", NULL};
	static const char *const plain[] = {"thp", "sysctl", "boot", "apply", "metrics", NULL};

	while (*name == ' ' || *name == '\t')
		name++;
	if (tlen >= tsz)
		tlen = tsz - 1;
	memcpy(type, section, tlen);
	type[tlen] = '\0';
	*ret_name = *name ? name : NULL;
	if (p->bad_section_line == p->section_line)
		return false;
	if (one_of(type, named) && !*ret_name) {
		problem(p, p->section_line, "[%s] needs a name ([%s %s])", type, type,
			strcmp(type, "pool") == 0    ? "SIZE"
			: strcmp(type, "mount") == 0 ? "PATH"
						     : "NAME");
	} else if (one_of(type, plain) && *ret_name) {
		problem(p, p->section_line, "[%s] takes no name ('%s')", type, *ret_name);
	} else if (!one_of(type, named) && !one_of(type, plain)) {
		problem(p, p->section_line,
			"unknown section [%s] (pool, mount, thp, sysctl, cgroup, boot, apply, "
			"metrics)",
			section);
	} else if (strcmp(type, "pool") == 0 && !is_size(*ret_name)) {
		problem(p, p->section_line, "[%s]: '%s' is not a page size", section, *ret_name);
	} else if (strcmp(type, "mount") == 0 && !clean_path(*ret_name)) {
		problem(p, p->section_line,
			"[%s]: the mount point must be an absolute path without '.', '..', "
			"'//' or a trailing '/'",
			section);
	} else if (strcmp(type, "mount") == 0 &&
		   strchr(" \t\\", (*ret_name)[strlen(*ret_name) - 1])) {
		/* A unit's Where= would join the next line to it, or drop the blank. */
		problem(p, p->section_line, "[%s]: the mount point must not end in '\\' or a blank",
			section);
	} else if (strcmp(type, "cgroup") == 0 &&
		   !hkl_cgroup_name_ok(*ret_name + (**ret_name == '/'))) {
		problem(p, p->section_line,
			"[%s]: the cgroup must be a path below the cgroup root without '.', '..' "
			"or empty parts",
			section);
	} else {
		return true;
	}
	p->bad_section_line = p->section_line;
	return false;
}

/* Two sections name the same thing: [pool 2M] and [pool 2MB], [cgroup a] and [cgroup /a]. */
static bool same_section(const struct hk_config_entry *e, const char *type, const char *name)
{
	uint64_t a, b;

	if (strcmp(e->section, type) != 0)
		return false;
	if (!e->name || !name)
		return !e->name && !name;
	if (strcmp(type, "pool") == 0 && hk_parse_size(e->name, &a) == 0 &&
	    hk_parse_size(name, &b) == 0)
		return a == b;
	if (strcmp(type, "cgroup") == 0)
		return strcmp(e->name + (*e->name == '/'), name + (*name == '/')) == 0;
	return strcmp(e->name, name) == 0;
}

/* A key of a [pool SIZE] (name: the SIZE) and its value: said when wrong. */
static void check_pool_key(struct parse *p, unsigned line, const char *sec, const char *name,
			   const char *key, const char *value)
{
	uint64_t size = 0, total;

	hk_parse_size(name, &size);
	if (strcmp(key, "minimum") == 0)
		check_minimum(p, line, sec, value, size, true, &total);
	else if (strcmp(key, "maximum") == 0)
		check_minimum(p, line, sec, value, size, false, &total);
	else if (strcmp(key, "demote_size") == 0) {
		uint64_t to;

		if (hk_parse_size(value, &to) < 0 || !to)
			problem(p, line, "[%s] demote_size '%s': not a page size", sec, value);
		else if (to >= size)
			problem(p, line, "[%s] demote_size %s: not below the pool's size", sec,
				value);
	} else if (strcmp(key, "demote") == 0) {
		if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0)
			problem(p, line, "[%s] demote '%s': yes or no", sec, value);
	} else {
		problem(p, line, "unknown key '%s' in [%s] (minimum, maximum, demote_size, demote)",
			key, sec);
	}
}

/* A key of a [mount PATH] and its value: said when wrong. */
static void check_mount_key(struct parse *p, unsigned line, const char *sec, const char *key,
			    const char *value)
{
	if (strcmp(key, "pagesize") == 0) {
		if (!is_size(value))
			problem(p, line, "[%s] pagesize '%s': not a page size", sec, value);
	} else if (strcmp(key, "user") == 0 || strcmp(key, "group") == 0) {
		if (!is_account(value))
			problem(p, line, "[%s] %s '%s': not a name or a number", sec, key, value);
	} else if (strcmp(key, "mode") == 0) {
		uint32_t m;

		if (hkc_parse_mode(value, &m) < 0)
			problem(p, line, "[%s] mode '%s': not an octal mode (0000-7777)", sec,
				value);
	} else if (strcmp(key, "size") == 0 || strcmp(key, "min_size") == 0) {
		if (!is_mount_size(value))
			problem(p, line, "[%s] %s '%s': not a size or a percentage (N%%)", sec, key,
				value);
	} else if (strcmp(key, "nr_inodes") == 0) {
		if (!is_number(value) && !is_size(value))
			problem(p, line, "[%s] nr_inodes '%s': not a number", sec, value);
	} else {
		problem(p, line,
			"unknown key '%s' in [%s] (pagesize, user, group, mode, size, "
			"min_size, nr_inodes)",
			key, sec);
	}
}

/* A key and its value, by the type of its section: said when wrong. */
static void check_key(struct parse *p, unsigned line, const char *type, const char *sec,
		      const char *name, const char *key, const char *value)
{
	if (strcmp(type, "pool") == 0)
		check_pool_key(p, line, sec, name, key, value);
	else if (strcmp(type, "mount") == 0)
		check_mount_key(p, line, sec, key, value);
	else if (strcmp(type, "thp") == 0)
		check_thp(p, line, key, value);
	else if (strcmp(type, "sysctl") == 0)
		check_sysctl(p, line, key, value);
	else if (strcmp(type, "boot") == 0)
		check_boot(p, line, key, value);
	else if (strcmp(type, "apply") == 0)
		check_apply(p, line, key, value);
	else if (strcmp(type, "metrics") == 0)
		check_metrics(p, line, key, value);
	else
		check_cgroup_key(p, line, sec, key, value);
}

/*
 * The key already set in its section: said if in this file, or to another
 * value by an earlier file; true when it is not to be kept again.
 */
static bool set_before(struct parse *p, unsigned line, const char *type, const char *name,
		       const char *sec, const char *key, const char *value)
{
	const struct hk_config *c = p->cfg;

	/* Once per section and file; another file may say it again, the same way. */
	for (size_t i = 0; i < c->n; i++) {
		const struct hk_config_entry *e = &c->entries[i];

		if (!same_section(e, type, name) || strcmp(e->key, key) != 0)
			continue;
		if (i >= p->first) {
			problem(p, line, "key '%s' is set twice in [%s] (line %u)", key, sec,
				e->line);
			return true;
		}
		if (strcmp(e->value, value) != 0) {
			problem(p, line, "[%s] %s is set to %s in %s:%u and to %s here", sec, key,
				e->value, e->file, e->line, value);
			return true;
		}
		return true; /* the same value again: kept once, at its first place */
	}
	return false;
}

/* The entry kept, with the line of its section: 1, or 0 out of memory. */
static int store_entry(struct parse *p, unsigned line, const char *type, const char *name,
		       const char *key, const char *value)
{
	struct hk_config *c = p->cfg;
	struct hk_config_entry *ne;
	unsigned *sl;

	ne = realloc(c->entries, (c->n + 1) * sizeof(*ne));
	if (!ne) {
		p->oom = 1;
		return 0;
	}
	c->entries = ne;
	sl = realloc(c->section_lines, (c->n + 1) * sizeof(*sl));
	if (!sl) {
		p->oom = 1;
		return 0;
	}
	c->section_lines = sl;
	sl[c->n] = p->section_line;
	ne = &c->entries[c->n];
	memset(ne, 0, sizeof(*ne));
	ne->file = p->file;
	ne->line = line;
	ne->section = keep(p, type);
	ne->name = name ? keep(p, name) : NULL;
	ne->key = keep(p, key);
	ne->value = keep(p, value);
	if (!p->oom)
		c->n++;
	return !p->oom;
}

static int handler(void *user, const char *section, const char *key, const char *value)
{
	struct parse *p = user;
	const char *name;
	char type[16], sec[LINE_MAX_LEN + 16];
	unsigned line = p->line;

	if (p->bad_header)
		return 1; /* said at the header */
	if (!*section) {
		problem(p, line, "'%s' is outside any section", key);
		return 1;
	}
	/* The reader's whole copy of the section (libinih's may be cut short). */
	section = p->section;
	if (strcmp(value, LONG_VALUE) == 0)
		value = p->long_value;
	if (!split_section(p, section, type, sizeof(type), &name))
		return 1;
	snprintf(sec, sizeof(sec), "%s", section);
	if (!*value) {
		problem(p, line, "[%s] %s: no value", sec, key);
		return 1;
	}
	check_key(p, line, type, sec, name, key, value);
	if (set_before(p, line, type, name, sec, key, value))
		return 1;
	return store_entry(p, line, type, name, key, value);
}

/*
 * libinih's reader: one line at a time, counted, with blanks in front and a
 * '#' comment (at the start, or after a blank) taken off, so that libinih
 * sees neither; a line too long, or one that is not a section, a key = value
 * or a comment, is said here with its number.
 */
/* At a new header or the end: a section that had no keys (it would do nothing) is a problem. */
static void section_done(struct parse *p)
{
	if (p->section_line && !p->bad_header && !p->keys)
		problem(p, p->section_line, "[%s] has no keys: it would do nothing", p->section);
	p->keys = 0;
}

/* A [header] line (t is it, trimmed): the section kept whole and checked now. */
static void header(struct parse *p, char *t)
{
	char *close = strchr(t, ']'), *rest, type[16];
	const char *name;

	section_done(p);
	p->section_line = p->line;
	rest = close ? hkc_trim(close + 1) : NULL;
	if (!close || (*rest && *rest != ';')) {
		problem(p, p->line,
			close ? "'%s' after the section header"
			      : "a section header without its ']'",
			close ? rest : "");
		p->bad_header = true;
		return;
	}
	*close = '\0';
	snprintf(p->section, sizeof(p->section), "%s", hkc_trim(t + 1));
	p->bad_header = !split_section(p, p->section, type, sizeof(type), &name);
}

/*
 * libinih's reader: one line at a time, counted, with blanks in front and a
 * '#' comment (at the start, or after a blank) taken off, so that libinih
 * sees neither; a line that is not a section, a key = value or a comment is
 * said here with its number. Headers are kept whole here (libinih cuts them
 * at 49 characters); a key = value line longer than libinih's buffer goes to
 * it as "key = " LONG_VALUE, the value kept here.
 */
static char *reader(char *str, int num, void *stream)
{
	struct parse *p = stream;
	char line[LINE_MAX_LEN + 1], *hash, *t, *eq;
	const char *nl, *s;
	size_t len;

	if (!p->pos || !*p->pos) {
		if (p->pos) {
			section_done(p);
			p->pos = NULL;
		}
		return NULL;
	}
	nl = strchr(p->pos, '\n');
	len = nl ? (size_t)(nl - p->pos) : strlen(p->pos);
	s = p->pos;
	p->pos = nl ? nl + 1 : s + len;
	p->line++;
	if (len > LINE_MAX_LEN) {
		p->keys++;
		problem(p, p->line, "line too long (over %d characters)", LINE_MAX_LEN);
		snprintf(str, (size_t)num, "\n");
		return str;
	}
	memcpy(line, s, len);
	line[len] = '\0';
	if (len && line[len - 1] == '\r')
		line[--len] = '\0';
	if (p->line == 1 && (unsigned char)line[0] == 0xef && (unsigned char)line[1] == 0xbb &&
	    (unsigned char)line[2] == 0xbf)
		memmove(line, line + 3, len - 2);
	t = hkc_trim(line);
	for (hash = strchr(t, '#'); hash; hash = strchr(hash + 1, '#')) {
		if (hash == t || isspace((unsigned char)hash[-1])) {
			*hash = '\0';
			break;
		}
	}
	t = hkc_trim(t);
	p->long_value[0] = '\0';
	if (*t == '[') {
		header(p, t);
		/* libinih gets a header of its own; the handler takes p->section. */
		snprintf(str, (size_t)num, "[s]\n");
		return str;
	}
	if (*t && *t != ';')
		p->keys++; /* a key (or a try at one): the section is not empty */
	if (*t && *t != ';' && !strchr(t, '=')) {
		problem(p, p->line, "'%s' is not 'key = value', a [section] or a comment", t);
		*t = '\0';
	} else if (*t == '=') {
		problem(p, p->line, "'%s': no key before '='", t);
		*t = '\0';
	}
	if (strlen(t) + 2 >= (size_t)num && (eq = strchr(t, '='))) {
		/* Too long for libinih: the key goes, the value stays here. */
		char *v = hkc_trim(eq + 1), *semi;

		for (semi = strchr(v, ';'); semi; semi = strchr(semi + 1, ';')) {
			if (isspace((unsigned char)semi[-1])) {
				*semi = '\0';
				break;
			}
		}
		snprintf(p->long_value, sizeof(p->long_value), "%s", hkc_trim(v));
		*eq = '\0';
		if ((size_t)snprintf(str, (size_t)num, "%s = " LONG_VALUE "\n", hkc_trim(t)) >=
		    (size_t)num) {
			problem(p, p->line, "key too long");
			snprintf(str, (size_t)num, "\n");
		}
		return str;
	}
	snprintf(str, (size_t)num, "%s\n", t);
	return str;
}

static void say(hk_config_error_fn fn, void *data, const char *file, const char *fmt, ...)
	HK_PRINTF(4, 5);

static int parse_text(struct hk_config *cfg, const char *file, const char *text,
		      hk_config_error_fn fn, void *data, unsigned *ret_errors)
{
	struct parse p = {.cfg = cfg,
			  .fn = fn,
			  .data = data,
			  .file = file,
			  .first = cfg->n,
			  .pos = text,
			  .hide = hkl_config_hidden(cfg, file)};
	const struct hkl_libinih *li = NULL;
	const char *why = "";
	int rc;

	if (!*text) {
		*ret_errors = 0;
		return 0;
	}
	/* libinih, loaded on the first file there is to parse (dl.h). */
	if (hkl_libinih(&li, &why) < 0) {
		say(fn, data, file, "cannot be parsed: cannot load libinih: %s", why);
		*ret_errors = 1;
		return -ELIBACC;
	}
	rc = li->ini_parse_stream(reader, &p, handler, &p);
	if (p.oom || rc == -2)
		return -ENOMEM;
	/* The reader and the handler said every problem; libinih's own count is not needed. */
	if (rc > 0 && !p.errors)
		problem(&p, (unsigned)rc, "not understood");
	*ret_errors = p.errors;
	return 0;
}

/* A pool's maximum below its minimum, over all files. */
static unsigned check_pools(struct hk_config *cfg, hk_config_error_fn fn, void *data)
{
	unsigned errors = 0;

	for (size_t i = 0; i < cfg->n; i++) {
		const struct hk_config_entry *mx = &cfg->entries[i];
		uint64_t size, max, min = 0;

		if (strcmp(mx->section, "pool") || strcmp(mx->key, "maximum") ||
		    hk_parse_size(mx->name, &size) < 0 || hkl_pool_pages(mx->value, size, &max) < 0)
			continue;
		for (size_t j = 0; j < cfg->n; j++) {
			const struct hk_config_entry *mn = &cfg->entries[j];
			struct parse q = {.cfg = cfg};

			if (!same_section(mn, "pool", mx->name) || strcmp(mn->key, "minimum") ||
			    check_minimum(&q, 0, "", mn->value, size, true, &min) < 0 || max >= min)
				continue;
			errors++;
			if (fn) {
				char msg[512];

				snprintf(msg, sizeof(msg),
					 "[pool %s] maximum %" PRIu64
					 " is below the minimum %" PRIu64 " (%s:%u)",
					 mx->name, max, min, mn->file, mn->line);
				fn(data, mx->file, mx->line,
				   hkl_config_hidden(cfg, mx->file) ||
						   hkl_config_hidden(cfg, mn->file)
					   ? HKC_HIDDEN_PROBLEM
					   : msg);
			}
		}
	}
	return errors;
}

HK_EXPORT void hk_config_unref(struct hk_config *config)
{
	if (!config)
		return;
	for (size_t i = 0; i < config->n_strings; i++)
		free(config->strings[i]);
	for (size_t i = 0; i < config->n_files; i++)
		free(config->files[i]);
	free(config->strings);
	free(config->files);
	free(config->hidden);
	free(config->entries);
	free(config->section_lines);
	free(config);
}

/* hidden: its text is not to be shown (see struct parse). */
static const char *add_file(struct hk_config *cfg, const char *path, bool hidden)
{
	char **nf = realloc(cfg->files, (cfg->n_files + 1) * sizeof(*nf));
	bool *nh;

	if (!nf)
		return NULL;
	cfg->files = nf;
	nh = realloc(cfg->hidden, (cfg->n_files + 1) * sizeof(*nh));
	if (!nh)
		return NULL;
	cfg->hidden = nh;
	nh[cfg->n_files] = hidden;
	nf[cfg->n_files] = strdup(path);
	return nf[cfg->n_files] ? nf[cfg->n_files++] : NULL;
}

unsigned hkl_config_section_line(const struct hk_config *cfg, const struct hk_config_entry *e)
{
	if (cfg && cfg->section_lines && e >= cfg->entries && e < cfg->entries + cfg->n &&
	    cfg->section_lines[e - cfg->entries])
		return cfg->section_lines[e - cfg->entries];
	return e->line;
}

bool hkl_config_hidden(const struct hk_config *cfg, const char *file)
{
	for (size_t i = 0; cfg && file && i < cfg->n_files; i++)
		if (cfg->files[i] == file || strcmp(cfg->files[i], file) == 0)
			return cfg->hidden[i];
	return false;
}

static void say(hk_config_error_fn fn, void *data, const char *file, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (fn)
		fn(data, file, 0, msg);
}

/*
 * Read with any privilege (euid 0, set-user-ID or set-group-ID, file or
 * ambient capabilities): a file or directory others could write would let
 * them steer what the privileges do.
 */
static int check_owner(const char *path, const struct stat *st, hk_config_error_fn fn, void *data)
{
	if (!hkc_privileged())
		return 0;
	if (st->st_uid != 0) {
		say(fn, data, path,
		    "owned by uid %u, not root: not read (root applies what it says)",
		    (unsigned)st->st_uid);
		return -EPERM;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		say(fn, data, path, "writable by %s (mode %04o): not read",
		    st->st_mode & S_IWOTH ? "others" : "its group",
		    (unsigned)(st->st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/*
 * One file into cfg; -ENOENT when missing (said only when must_exist). With
 * ctx, rel is opened through its path layer, inside its tree (a link that
 * leads out of a --sysroot tree is refused); path is the name said.
 */
static int load_file(struct hk_config *cfg, struct hk_ctx *ctx, const char *rel, const char *path,
		     bool must_exist, hk_config_error_fn fn, void *data, unsigned *errors)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	int fd;
	struct stat st;
	char *text = NULL;
	const char *kept;
	size_t len = 0;
	unsigned e = 0;
	bool hide;
	int rc = 0;

	/*
	 * A file the caller names, in a program privileged for that caller: not
	 * opened (the privileges would read what the caller cannot).
	 */
	if (!ctx && hkc_privileged_for_other()) {
		say(fn, data, path,
		    "not read: a program privileged for its caller (set-user-ID, "
		    "set-group-ID or capabilities) reads only the configuration of the system");
		(*errors)++;
		return -EPERM;
	}
	fd = ctx ? hkc_path_openf(&ctx->path, flags, "%s", rel) : open(path, flags);
	if (fd < 0) {
		rc = ctx ? fd : -errno;
		if (rc != -ENOENT || must_exist) {
			say(fn, data, path, "cannot read it: %s", strerror(-rc));
			(*errors)++;
		}
		/* Said and counted: -ENOENT stays what it is, the rest is a bad configuration. */
		return rc == -ENOENT || rc == -ENOMEM ? rc : -EINVAL;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		say(fn, data, path, "not a regular file");
		rc = -EINVAL;
	} else if (st.st_size > 1 << 20) {
		say(fn, data, path, "larger than 1 MiB: not a configuration");
		rc = -EFBIG;
	} else if ((rc = check_owner(path, &st, fn, data)) == 0) {
		text = malloc((size_t)st.st_size + 1);
		if (!text)
			rc = -ENOMEM;
		while (text && len < (size_t)st.st_size) {
			ssize_t n = read(fd, text + len, (size_t)st.st_size - len);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				rc = n < 0 ? -errno : 0;
				break;
			}
			len += (size_t)n;
		}
	}
	hide = rc == 0 && hkc_privileged_for_other() && !hkc_caller_can_read_fd(fd);
	close(fd);
	if (rc < 0 || !text) {
		if (rc != -ENOMEM && rc != -EINVAL && rc != -EFBIG && rc != -EPERM && rc < 0)
			say(fn, data, path, "cannot read it: %s", strerror(-rc));
		free(text);
		(*errors)++;
		return rc < 0 ? rc : -EIO;
	}
	text[len] = '\0';
	if (memchr(text, '\0', len)) {
		say(fn, data, path, "holds a NUL byte: not a text file");
		free(text);
		(*errors)++;
		return -EINVAL;
	}
	kept = add_file(cfg, path, hide);
	rc = kept ? parse_text(cfg, kept, text, fn, data, &e) : -ENOMEM;
	free(text);
	*errors += e;
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.conf files of dir in name order; a missing dir is none. */
static int load_dir(struct hk_config *cfg, struct hk_ctx *ctx, const char *rel, const char *dir,
		    hk_config_error_fn fn, void *data, unsigned *errors)
{
	DIR *d = NULL;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	struct stat st;
	int rc = hkc_path_opendirf(&ctx->path, &d, "%s", rel);

	if (rc < 0) {
		if (rc == -ENOENT)
			return 0;
		say(fn, data, dir, "cannot read it: %s", strerror(-rc));
		(*errors)++;
		return rc;
	}
	if (fstat(dirfd(d), &st) == 0 && check_owner(dir, &st, fn, data) < 0) {
		closedir(d);
		(*errors)++;
		return -EPERM;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char **nn;

		if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".conf") != 0)
			continue;
		nn = realloc(names, (n + 1) * sizeof(*nn));
		if (!nn || !(nn[n] = strdup(de->d_name))) {
			names = nn ? nn : names;
			rc = -ENOMEM;
			break;
		}
		names = nn;
		n++;
	}
	closedir(d);
	if (names)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX], rpath[PATH_MAX];

		if (rc == 0 &&
		    snprintf(path, sizeof(path), "%s/%s", dir, names[i]) < (int)sizeof(path) &&
		    snprintf(rpath, sizeof(rpath), "%s/%s", rel, names[i]) < (int)sizeof(rpath))
			rc = load_file(cfg, ctx, rpath, path, true, fn, data, errors);
		if (rc == -ENOENT) /* removed meanwhile */
			rc = 0;
		if (rc == -EINVAL || rc == -EPERM || rc == -EFBIG)
			rc = 0; /* said and counted: go on to report the rest */
		free(names[i]);
	}
	free(names);
	return rc;
}

static int finish(struct hk_config *cfg, int rc, unsigned errors, hk_config_error_fn fn, void *data,
		  struct hk_config **ret)
{
	if (rc == 0 || rc == -EINVAL || rc == -EPERM || rc == -EFBIG)
		errors += check_pools(cfg, fn, data);
	if (rc == 0 && errors)
		rc = -EINVAL;
	if (rc < 0) {
		hk_config_unref(cfg);
		return rc == -EPERM || rc == -EFBIG ? -EINVAL : rc;
	}
	*ret = cfg;
	return 0;
}

HK_EXPORT int hk_config_parse_string(struct hk_ctx *ctx, const char *name, const char *text,
				     hk_config_error_fn fn, void *data,
				     struct hk_config **ret_config)
{
	struct hk_config *cfg;
	const char *kept;
	unsigned errors = 0;
	int rc;

	if (!ctx || !name || !text || !ret_config)
		return -EINVAL;
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return -ENOMEM;
	kept = add_file(cfg, name, false);
	rc = kept ? parse_text(cfg, kept, text, fn, data, &errors) : -ENOMEM;
	return finish(cfg, rc, errors, fn, data, ret_config);
}

/* As root, the directory that holds the configuration: root's, writable by no one else. */
static int check_dir(struct hk_ctx *ctx, const char *rel, const char *dir, hk_config_error_fn fn,
		     void *data)
{
	struct stat st;
	int fd = hkc_path_openf(&ctx->path, O_PATH | O_DIRECTORY | O_CLOEXEC, "%s", rel), rc;

	if (fd == -ENOENT)
		return 0;
	if (fd < 0) {
		say(fn, data, dir, "cannot read it: %s", strerror(-fd));
		return fd;
	}
	rc = fstat(fd, &st) < 0 ? -errno : check_owner(dir, &st, fn, data);
	close(fd);
	return rc;
}

HK_EXPORT int hk_config_load(struct hk_ctx *ctx, const char *path, hk_config_error_fn fn,
			     void *data, struct hk_config **ret_config)
{
	struct hk_config *cfg;
	unsigned errors = 0;
	int rc;

	if (!ctx || !ret_config || (path && !*path))
		return -EINVAL;
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return -ENOMEM;
	if (path) {
		rc = load_file(cfg, NULL, NULL, path, true, fn, data, &errors);
	} else {
		/* Under the context's root, through its path layer: a tree's links stay in it. */
		const char *root = hk_get_sysroot(ctx);
		char file[PATH_MAX], dir[PATH_MAX], top[PATH_MAX];
		bool slash = strcmp(root, "/") == 0;

		snprintf(file, sizeof(file), "%s%s", slash ? "" : root, HK_CONFIG_FILE);
		snprintf(dir, sizeof(dir), "%s%s", slash ? "" : root, HK_CONFIG_DIR);
		snprintf(top, sizeof(top), "%s%s", slash ? "" : root, "/etc/hugekit");
		rc = check_dir(ctx, "etc/hugekit", top, fn, data);
		if (rc < 0) {
			errors++;
			rc = 0;
		} else {
			rc = load_file(cfg, ctx, &HK_CONFIG_FILE[1], file, false, fn, data,
				       &errors);
			if (rc == -ENOENT || rc == -EINVAL || rc == -EPERM || rc == -EFBIG)
				rc = 0;
			if (rc == 0)
				rc = load_dir(cfg, ctx, &HK_CONFIG_DIR[1], dir, fn, data, &errors);
		}
	}
	if (rc == -EINVAL || rc == -EPERM || rc == -EFBIG)
		rc = 0; /* counted in errors */
	return finish(cfg, rc, errors, fn, data, ret_config);
}

HK_EXPORT size_t hk_config_entries(const struct hk_config *config,
				   const struct hk_config_entry **ret)
{
	if (ret)
		*ret = config ? config->entries : NULL;
	return config ? config->n : 0;
}

HK_EXPORT size_t hk_config_files(const struct hk_config *config, const char *const **ret)
{
	if (ret)
		*ret = config ? (const char *const *)config->files : NULL;
	return config ? config->n_files : 0;
}
