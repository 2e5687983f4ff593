// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm --generate boot|sysctl|units: what the configuration asks of the
 * boot, as files for other programs. The kernel command line for what only
 * boot can give (gigantic pools, the default size, CMA, HVO); a sysctl.d
 * file for [sysctl], its "recommended" values worked out on this machine;
 * systemd units: a .mount per [mount] and hugekit.service, which runs
 * hugeadm --apply early in the boot.
 *
 * Each generator is a function over the configuration's entries that
 * returns the files it makes (name and text), or -1 after reporting every
 * problem with the file and line of its setting. Nothing is written here:
 * the caller writes the files once everything is known to be good.
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generate.h"
#include "parse.h" /* lib/common: hkc_format_size */

/* One problem, at the file and line of the setting it comes from. */
__attribute__((format(printf, 3, 4))) static void
gen_error(struct ha_gen *g, const struct hk_config_entry *e, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int n;

	g->errors++;
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (g->error)
		g->error(g->data, e ? e->file : NULL, e ? e->line : 0,
			 n >= 0 ? msg : "out of memory");
	if (n >= 0)
		free(msg);
}

static bool is(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* The entry [section name] key, or NULL. The parser lets a key appear once per section. */
static const struct hk_config_entry *find(const struct ha_gen *g, const char *section,
					  const char *name, const char *key)
{
	for (size_t i = 0; i < g->n_entries; i++) {
		const struct hk_config_entry *e = &g->entries[i];

		if (is(e->section, section) && is(e->key, key) && (!name || is(e->name, name)))
			return e;
	}
	return NULL;
}

static bool all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/* A whole decimal number, no sign, no suffix. */
static int parse_number(const char *s, uint64_t *ret)
{
	if (!all_digits(s))
		return -EINVAL;
	return hk_parse_size(s, ret);
}

int ha_gen_files_add(struct ha_gen_files *f, const char *name, char *text)
{
	struct ha_gen_file *nf = realloc(f->files, (f->n + 1) * sizeof(*nf));
	char *n = strdup(name);

	if (!nf || !n) {
		free(n);
		free(text);
		if (nf)
			f->files = nf;
		return -ENOMEM;
	}
	f->files = nf;
	f->files[f->n].name = n;
	f->files[f->n].text = text;
	f->n++;
	return 0;
}

void ha_gen_files_free(struct ha_gen_files *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->files[i].name);
		free(f->files[i].text);
	}
	free(f->files);
	free(f->note);
	memset(f, 0, sizeof(*f));
}

/* A text built in memory: open_memstream, closed into a string. */
struct text {
	FILE *f;
	char *buf;
	size_t len;
};

static int text_open(struct text *t)
{
	t->buf = NULL;
	t->len = 0;
	t->f = open_memstream(&t->buf, &t->len);
	return t->f ? 0 : -ENOMEM;
}

/* The text, or NULL (out of memory); the stream is closed either way. */
static char *text_close(struct text *t)
{
	bool bad = ferror(t->f);

	if (fclose(t->f) != 0 || bad) {
		free(t->buf);
		return NULL;
	}
	return t->buf;
}

static void text_discard(struct text *t)
{
	fclose(t->f);
	free(t->buf);
}

/* "FILE, FILE and FILE", the configuration files read. */
static void put_files(FILE *f, const struct ha_gen *g)
{
	for (size_t i = 0; i < g->n_files; i++)
		fprintf(f, "%s%s", i == 0 ? "" : i + 1 == g->n_files ? " and " : ", ", g->files[i]);
	if (g->n_files == 0)
		fputs("no configuration file", f);
}

/* A text that starts "# Made by hugeadm --generate KIND from FILES.". */
static int text_open_made(struct text *t, const struct ha_gen *g, const char *kind)
{
	if (text_open(t) < 0)
		return -ENOMEM;
	fprintf(t->f, "# Made by hugeadm --generate %s from ", kind);
	put_files(t->f, g);
	fputs(".\n", t->f);
	return 0;
}

/* Boot: the kernel command line */

/* One pool's share on one node (node HK_NODE_ALL: the whole pool). */
struct node_pages {
	int node;
	uint64_t pages;
};

static int cmp_node(const void *a, const void *b)
{
	const struct node_pages *x = a, *y = b;

	return (x->node > y->node) - (x->node < y->node);
}

static bool node_exists(const int *nodes, size_t n, int node)
{
	for (size_t i = 0; i < n; i++)
		if (nodes[i] == node)
			return true;
	return false;
}

/*
 * An amount of a [pool] minimum: N pages, or a memory amount with K, M or G
 * (whole pages of the size, truncated, as hugeadm --pool-pages-min counts).
 */
static int parse_pages(const char *s, uint64_t page_size, uint64_t *ret)
{
	uint64_t v;
	int rc = hk_parse_size(s, &v);

	if (rc < 0)
		return rc;
	*ret = all_digits(s) ? v : v / page_size;
	return 0;
}

/*
 * A [pool] minimum: "N" (the whole pool), or a list of "N@NODES" separated by
 * blanks or commas, each NODES a node or a range A-B. The shares, sorted by
 * node; -1 after a message.
 */
static int parse_minimum(struct ha_gen *g, const struct hk_config_entry *e, uint64_t page_size,
			 const int *nodes, size_t n_nodes, struct node_pages **ret, size_t *ret_n)
{
	char *copy = strdup(e->value), *save = NULL;
	struct node_pages *np = NULL;
	size_t n = 0;
	bool whole = false, bad = false;

	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ", \t", &save); tok && !bad;
	     tok = strtok_r(NULL, ", \t", &save)) {
		char *at = strchr(tok, '@');
		int *list = NULL;
		size_t nl = 0;
		uint64_t pages;

		if (at)
			*at = '\0';
		if (parse_pages(tok, page_size, &pages) < 0) {
			gen_error(g, e, "minimum: '%s' is not a number of pages or an amount", tok);
			bad = true;
			break;
		}
		if (!at) {
			whole = true;
			list = malloc(sizeof(*list));
			if (list)
				list[0] = HK_NODE_ALL;
			nl = 1;
		} else if (hk_nodelist_parse(at + 1, &list, &nl) < 0 || nl == 0) {
			gen_error(g, e, "minimum: '%s' is not a node list", at + 1);
			bad = true;
			break;
		}
		if (!list) {
			free(copy);
			free(np);
			return -ENOMEM;
		}
		for (size_t k = 0; k < nl && !bad; k++) {
			struct node_pages *nn;

			if (list[k] != HK_NODE_ALL && !node_exists(nodes, n_nodes, list[k])) {
				gen_error(g, e,
					  "minimum: node %d does not exist on this machine "
					  "(the kernel ignores a hugepages= with an unknown node)",
					  list[k]);
				bad = true;
				break;
			}
			for (size_t j = 0; j < n; j++)
				if (np[j].node == list[k]) {
					gen_error(g, e, "minimum: node %d is given twice", list[k]);
					bad = true;
				}
			nn = bad ? NULL : realloc(np, (n + 1) * sizeof(*np));
			if (!nn && !bad) {
				free(list);
				free(copy);
				free(np);
				return -ENOMEM;
			}
			if (nn) {
				np = nn;
				np[n].node = list[k];
				np[n].pages = pages;
				n++;
			}
		}
		free(list);
	}
	free(copy);
	if (!bad && whole && n > 1) {
		gen_error(g, e, "minimum: a whole pool and per-node shares at once");
		bad = true;
	}
	if (!bad && n == 0) {
		gen_error(g, e, "minimum: empty");
		bad = true;
	}
	if (bad) {
		free(np);
		return -1;
	}
	qsort(np, n, sizeof(*np), cmp_node);
	*ret = np;
	*ret_n = n;
	return 0;
}

/* A [pool NAME] section's page size: the name as a size, or -1 after a message. */
static int pool_size(struct ha_gen *g, const struct hk_config_entry *e, uint64_t *ret)
{
	int rc;

	if (e->name && strcasecmp(e->name, "default") == 0)
		rc = hk_default_page_size(g->ctx, ret);
	else
		rc = e->name ? hk_parse_size(e->name, ret) : -EINVAL;
	if (rc < 0) {
		gen_error(g, e, "[pool %s]: not a page size", e->name ? e->name : "");
		return -1;
	}
	return 0;
}

static bool size_known(const uint64_t *sizes, size_t n, uint64_t size)
{
	for (size_t i = 0; i < n; i++)
		if (sizes[i] == size)
			return true;
	return false;
}

/* A [pool]'s minimum and its page size. */
struct pool_min {
	const struct hk_config_entry *e;
	uint64_t size;
};

static int cmp_pool_min(const void *a, const void *b)
{
	const struct pool_min *x = a, *y = b;

	return (x->size > y->size) - (x->size < y->size);
}

/*
 * " hugepagesz=SIZE hugepages=..." for each pool with a minimum that goes on
 * the command line (gigantic ones, or all), by ascending size; 0, -1 after
 * messages, or -ENOMEM.
 */
static int boot_pools(struct ha_gen *g, const uint64_t *sizes, size_t n_sizes, const int *nodes,
		      size_t n_nodes, bool all, FILE *line)
{
	struct pool_min *pm = calloc(g->n_entries ? g->n_entries : 1, sizeof(*pm));
	size_t n = 0;
	char buf[32];
	int rc = 0;

	if (!pm)
		return -ENOMEM;
	for (size_t i = 0; i < g->n_entries; i++) {
		const struct hk_config_entry *e = &g->entries[i];
		uint64_t size;
		bool twice = false;

		if (!is(e->section, "pool") || !is(e->key, "minimum") || pool_size(g, e, &size) < 0)
			continue;
		for (size_t k = 0; k < n && !twice; k++)
			if (pm[k].size == size) {
				gen_error(g, e, "[pool %s]: the page size of [pool %s] (%s:%u)",
					  e->name, pm[k].e->name, pm[k].e->file, pm[k].e->line);
				twice = true;
			}
		if (twice)
			continue;
		if (!size_known(sizes, n_sizes, size)) {
			gen_error(g, e, "[pool %s]: this machine has no huge pages of that size",
				  e->name);
			continue;
		}
		pm[n].e = e;
		pm[n].size = size;
		n++;
	}
	qsort(pm, n, sizeof(*pm), cmp_pool_min);
	for (size_t i = 0; i < n && rc != -ENOMEM; i++) {
		struct hk_pool *pool = NULL;
		struct node_pages *np = NULL;
		size_t n_np = 0;
		bool gigantic;

		rc = hk_pool_read(g->ctx, pm[i].size, &pool);
		if (rc < 0) {
			gen_error(g, pm[i].e, "[pool %s]: cannot read the pool: %s", pm[i].e->name,
				  strerror(-rc));
			continue;
		}
		gigantic = hk_pool_is_gigantic(pool);
		hk_pool_unref(pool);
		if (!gigantic && !all)
			continue;
		rc = parse_minimum(g, pm[i].e, pm[i].size, nodes, n_nodes, &np, &n_np);
		if (rc < 0)
			continue;
		hkc_format_size(buf, sizeof(buf), pm[i].size);
		fprintf(line, " hugepagesz=%s hugepages=", buf);
		for (size_t k = 0; k < n_np; k++) {
			if (np[k].node == HK_NODE_ALL)
				fprintf(line, "%" PRIu64, np[k].pages);
			else
				fprintf(line, "%s%d:%" PRIu64, k ? "," : "", np[k].node,
					np[k].pages);
		}
		free(np);
	}
	free(pm);
	return rc == -ENOMEM ? rc : 0;
}

/* hugetlb_cma = SIZE, or a list of NODE:SIZE: checked and written as the kernel reads it. */
static int boot_cma(struct ha_gen *g, const struct hk_config_entry *e, const int *nodes,
		    size_t n_nodes, FILE *line)
{
	char *copy = strdup(e->value), *save = NULL;
	char buf[32];
	bool first = true, bad = false;
	uint64_t v;

	if (!copy)
		return -ENOMEM;
	if (!strchr(copy, ':')) {
		if (hk_parse_size(copy, &v) < 0 || v == 0 || all_digits(copy)) {
			gen_error(g, e, "hugetlb_cma: '%s' is not a size (with K, M or G)", copy);
			bad = true;
		} else {
			hkc_format_size(buf, sizeof(buf), v);
			fprintf(line, " hugetlb_cma=%s", buf);
		}
		free(copy);
		return bad ? -1 : 0;
	}
	fputs(" hugetlb_cma=", line);
	for (char *tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		char *colon = strchr(tok, ':');
		uint64_t node;

		if (colon)
			*colon = '\0';
		if (!colon || parse_number(tok, &node) < 0 || node > INT32_MAX) {
			gen_error(g, e, "hugetlb_cma: '%s' is not NODE:SIZE", tok);
			bad = true;
			continue;
		}
		if (!node_exists(nodes, n_nodes, (int)node)) {
			gen_error(g, e,
				  "hugetlb_cma: node %" PRIu64 " does not exist on this machine",
				  node);
			bad = true;
		}
		if (hk_parse_size(colon + 1, &v) < 0 || v == 0 || all_digits(colon + 1)) {
			gen_error(g, e, "hugetlb_cma: '%s' is not a size (with K, M or G)",
				  colon + 1);
			bad = true;
			continue;
		}
		hkc_format_size(buf, sizeof(buf), v);
		fprintf(line, "%s%" PRIu64 ":%s", first ? "" : ",", node, buf);
		first = false;
	}
	free(copy);
	return bad ? -1 : 0;
}

int ha_gen_boot(struct ha_gen *g, bool comments, struct ha_gen_files *out)
{
	const struct hk_config_entry *def = find(g, "boot", NULL, "default_hugepagesz");
	const struct hk_config_entry *cma = find(g, "boot", NULL, "hugetlb_cma");
	const struct hk_config_entry *hvo = find(g, "boot", NULL, "hugetlb_free_vmemmap");
	const struct hk_config_entry *which = find(g, "boot", NULL, "pools");
	uint64_t *sizes = NULL;
	int *nodes = NULL;
	size_t n_sizes = 0, n_nodes = 0;
	bool all = false;
	struct text line, file;
	char buf[32];
	char *params = NULL, *text;
	unsigned errors = g->errors;
	int rc;

	rc = hk_page_sizes(g->ctx, &sizes, &n_sizes);
	if (rc < 0) {
		gen_error(g, NULL, "cannot read the huge page sizes of this machine: %s",
			  strerror(-rc));
		return -1;
	}
	rc = hk_node_list(g->ctx, &nodes, &n_nodes);
	if (rc < 0) {
		free(sizes);
		gen_error(g, NULL, "cannot read the NUMA nodes of this machine: %s", strerror(-rc));
		return -1;
	}
	if (text_open(&line) < 0) {
		free(sizes);
		free(nodes);
		return -ENOMEM;
	}
	if (which) {
		if (is(which->value, "all"))
			all = true;
		else if (!is(which->value, "gigantic"))
			gen_error(g, which, "pools: '%s' is not gigantic or all", which->value);
	}
	if (hvo) {
		if (is(hvo->value, "on") || is(hvo->value, "off"))
			fprintf(line.f, " hugetlb_free_vmemmap=%s", hvo->value);
		else
			gen_error(g, hvo, "hugetlb_free_vmemmap: '%s' is not on or off",
				  hvo->value);
	}
	if (def) {
		uint64_t v;

		if (hk_parse_size(def->value, &v) < 0 || all_digits(def->value)) {
			gen_error(g, def, "default_hugepagesz: '%s' is not a size (with K, M or G)",
				  def->value);
		} else if (!size_known(sizes, n_sizes, v)) {
			gen_error(g, def, "default_hugepagesz: this machine has no %s huge pages",
				  def->value);
		} else {
			hkc_format_size(buf, sizeof(buf), v);
			fprintf(line.f, " default_hugepagesz=%s", buf);
		}
	}
	/* The pools, by ascending size: hugepagesz=SIZE, then its hugepages=. */
	rc = boot_pools(g, sizes, n_sizes, nodes, n_nodes, all, line.f);
	if (rc == -ENOMEM)
		goto out;
	if (cma) {
		rc = boot_cma(g, cma, nodes, n_nodes, line.f);
		if (rc == -ENOMEM)
			goto out;
	}
	rc = 0;
out:
	free(sizes);
	free(nodes);
	params = text_close(&line);
	if (rc < 0 || !params) {
		free(params);
		return -ENOMEM;
	}
	if (g->errors != errors) {
		free(params);
		return -1;
	}
	/* Without the leading blank; an empty line is nothing to add. */
	memmove(params, params + (*params == ' '), strlen(params) + 1 - (*params == ' '));
	out->note = params;
	if (comments ? text_open_made(&file, g, "boot") < 0 : text_open(&file) < 0)
		return -ENOMEM;
	if (comments) {
		if (*params)
			ha_gen_boot_hint(file.f, "# ", params);
		else
			fputs("# Nothing to put on the kernel command line.\n", file.f);
	}
	if (*params)
		fprintf(file.f, "%s\n", params);
	text = text_close(&file);
	if (!text)
		return -ENOMEM;
	return ha_gen_files_add(out, "kernel-cmdline", text);
}

void ha_gen_boot_hint(FILE *f, const char *prefix, const char *params)
{
	fprintf(f,
		"%sTo install them: add them to GRUB_CMDLINE_LINUX in /etc/default/grub, then run\n"
		"%supdate-grub (Debian, Ubuntu) or grub2-mkconfig -o /boot/grub2/grub.cfg; or\n"
		"%sgrubby --update-kernel=ALL --args='%s' (Fedora, RHEL);\n"
		"%sor kernelstub -a '%s' (Pop!_OS). They take effect at the next boot.\n",
		prefix, prefix, prefix, params, prefix, params);
}

/* Sysctl: a sysctl.d file */

int ha_gen_sysctl(struct ha_gen *g, struct ha_gen_files *out)
{
	unsigned errors = g->errors;
	struct text t;
	char *text;
	int rc;

	if (text_open_made(&t, g, "sysctl") < 0)
		return -ENOMEM;
	fputs("# The huge page pools are not set here: hugekit.service sets them (hugeadm --apply)\n"
	      "# and reads them back.\n",
	      t.f);
	for (size_t i = 0; i < g->n_entries; i++) {
		const struct hk_config_entry *e = &g->entries[i];
		uint64_t v;

		if (!is(e->section, "sysctl"))
			continue;
		if (is(e->value, "recommended") &&
		    (is(e->key, "vm.min_free_kbytes") || is(e->key, "kernel.shmmax"))) {
			bool mfk = is(e->key, "vm.min_free_kbytes");

			rc = mfk ? hk_recommended_min_free_kbytes(g->ctx, &v)
				 : hk_recommended_shmmax(g->ctx, &v);
			if (rc < 0) {
				gen_error(g, e, "%s: cannot work out the recommended value: %s",
					  e->key, strerror(-rc));
				continue;
			}
			fprintf(t.f,
				"# recommended (%s:%u), worked out on this machine:\n# %s\n%s = %" PRIu64
				"\n",
				e->file, e->line,
				mfk ? "11 x the default huge page size in kB x the memory zones"
				    : "what the huge page pools hold at their maximum now, in bytes",
				e->key, v);
		} else if (is(e->value, "recommended")) {
			gen_error(g, e,
				  "%s: no recommended value (only vm.min_free_kbytes and "
				  "kernel.shmmax have one)",
				  e->key);
		} else if (is(e->key, "vm.hugetlb_shm_group") && !all_digits(e->value)) {
			const struct group *gr = getgrnam(e->value);

			if (!gr) {
				gen_error(g, e,
					  "vm.hugetlb_shm_group: no group '%s' on this machine",
					  e->value);
				continue;
			}
			fprintf(t.f, "# group %s (%s:%u): the kernel takes its gid\n%s = %u\n",
				e->value, e->file, e->line, e->key, (unsigned)gr->gr_gid);
		} else if (strncmp(e->key, "vm.nr_", 6) == 0 && strstr(e->key, "hugepages")) {
			gen_error(g, e, "%s: pools go in [pool SIZE] sections", e->key);
		} else if (all_digits(e->value)) {
			fprintf(t.f, "%s = %s\n", e->key, e->value);
		} else if (hk_parse_size(e->value, &v) == 0) {
			fprintf(t.f, "# %s (%s:%u)\n%s = %" PRIu64 "\n", e->value, e->file, e->line,
				e->key, v);
		} else {
			gen_error(g, e, "%s: '%s' is not a number", e->key, e->value);
		}
	}
	text = text_close(&t);
	if (!text)
		return -ENOMEM;
	if (g->errors != errors) {
		free(text);
		return -1;
	}
	return ha_gen_files_add(out, "90-hugekit.conf", text);
}

/* Units: a .mount per [mount], and hugekit.service */

/*
 * systemd's unit name of a path, as systemd-escape --path --suffix=SUFFIX
 * makes it (unit_name_path_escape): the path simplified (no doubled or
 * trailing '/', no "." component), "/" as "-", the leading '/' dropped, each
 * other '/' as '-', and every byte but ASCII letters, digits, ':', '_' and
 * '.' (a leading '.' too) as \xNN. -EINVAL for a relative path or one with
 * "..", -ENAMETOOLONG past systemd's 255 bytes.
 */
int ha_gen_unit_name(const char *path, const char *suffix, char **ret)
{
	size_t len = strlen(path), n = 0;
	char *simple, *name, *t;
	const char *p = path;

	if (*path != '/')
		return -EINVAL;
	simple = malloc(len + 1);
	if (!simple)
		return -ENOMEM;
	/* Components, each once, without "." and empty ones. */
	while (*p) {
		size_t c;

		p += strspn(p, "/");
		c = strcspn(p, "/");
		if (c == 0)
			break;
		if (c == 2 && p[0] == '.' && p[1] == '.') {
			free(simple);
			return -EINVAL;
		}
		if (!(c == 1 && p[0] == '.')) {
			if (n)
				simple[n++] = '/';
			memcpy(simple + n, p, c);
			n += c;
		}
		p += c;
	}
	simple[n] = '\0';
	name = malloc(4 * n + strlen(suffix) + 3);
	if (!name) {
		free(simple);
		return -ENOMEM;
	}
	t = name;
	if (n == 0)
		*t++ = '-';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)simple[i];

		if (c == '/')
			*t++ = '-';
		else if ((i == 0 && c == '.') ||
			 !(isascii(c) && (isalnum(c) || c == ':' || c == '_' || c == '.')))
			t += sprintf(t, "\\x%02x", c);
		else
			*t++ = (char)c;
	}
	*t++ = '.';
	strcpy(t, suffix);
	free(simple);
	if (strlen(name) > 255) {
		free(name);
		return -ENAMETOOLONG;
	}
	*ret = name;
	return 0;
}

/* A value in a unit file: '%' starts a specifier there, so it is doubled. */
static void put_unit_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '%')
			fputc('%', f);
		fputc(*s, f);
	}
}

/* A path as one word of a unit setting: quoted when it has a blank, '"' or '\\'. */
static void put_unit_path(FILE *f, const char *s)
{
	bool quote = strpbrk(s, " \t\"\\") != NULL;

	if (quote)
		fputc('"', f);
	for (; *s; s++) {
		if (quote && (*s == '"' || *s == '\\'))
			fputc('\\', f);
		if (*s == '%')
			fputc('%', f);
		fputc(*s, f);
	}
	if (quote)
		fputc('"', f);
}

void ha_gen_service(FILE *f, const char *hugeadm_path, const char *const *mounts_for, size_t n)
{
	fprintf(f, "[Unit]\n"
		   "Description=Huge page pools and settings of /etc/hugekit (hugekit)\n"
		   "Documentation=man:hugeadm(8)\n"
		   "# Early, while memory is least fragmented: after the sysctl.d files (so that\n"
		   "# the pools read back here are the last word), before the basic system and\n"
		   "# the hugetlbfs mounts and services that use huge pages.\n"
		   "DefaultDependencies=no\n"
		   "After=systemd-modules-load.service systemd-sysctl.service\n"
		   "Before=sysinit.target shutdown.target\n"
		   "Conflicts=shutdown.target\n");
	if (n)
		fputs("# hugeadm --apply mounts the [mount] sections: after the file systems they are on.\n",
		      f);
	for (size_t i = 0; i < n; i++) {
		fputs("RequiresMountsFor=", f);
		put_unit_path(f, mounts_for[i]);
		fputc('\n', f);
	}
	fprintf(f,
		"\n"
		"[Service]\n"
		"Type=oneshot\n"
		"RemainAfterExit=yes\n"
		"ExecStart=%s --apply\n"
		"\n"
		"[Install]\n"
		"WantedBy=sysinit.target\n",
		hugeadm_path);
}

/* The option of a [mount]'s key that takes a size or a percentage of the pool. */
static int mount_size_option(struct ha_gen *g, const struct hk_config_entry *e, FILE *opts)
{
	char buf[32];
	uint64_t v;
	size_t len = strlen(e->value);

	if (len > 1 && e->value[len - 1] == '%' && strspn(e->value, "0123456789") == len - 1) {
		fprintf(opts, ",%s=%s", e->key, e->value);
		return 0;
	}
	if (hk_parse_size(e->value, &v) < 0) {
		gen_error(g, e, "%s: '%s' is not a size or a percentage of the pool", e->key,
			  e->value);
		return -1;
	}
	hkc_format_size(buf, sizeof(buf), v);
	fprintf(opts, ",%s=%s", e->key, buf);
	return 0;
}

/*
 * uid= or gid= of a [mount]'s user or group: a number as it is, a name looked
 * up here (hugetlbfs takes numbers only), with a comment in head that says so.
 */
static void mount_owner(struct ha_gen *g, const struct hk_config_entry *e, bool user, FILE *head,
			FILE *opts)
{
	const char *what = user ? "user" : "group", *opt = user ? "uid" : "gid";
	long long id = -1;
	uint64_t v;

	if (all_digits(e->value)) {
		if (parse_number(e->value, &v) == 0 && v < UINT32_MAX) {
			fprintf(opts, ",%s=%s", opt, e->value);
			return;
		}
	} else if (user) {
		const struct passwd *pw = getpwnam(e->value);

		if (pw)
			id = pw->pw_uid;
	} else {
		const struct group *gr = getgrnam(e->value);

		if (gr)
			id = gr->gr_gid;
	}
	if (id < 0) {
		gen_error(g, e, "%s: no %s '%s' on this machine", what, what, e->value);
		return;
	}
	fprintf(head, "# %s %s is %s %lld here\n", what, e->value, opt, id);
	fprintf(opts, ",%s=%lld", opt, id);
}

/* One [mount]: its unit, named from the path. */
static int gen_mount(struct ha_gen *g, const struct hk_config_entry *first,
		     struct ha_gen_files *out)
{
	const char *where = first->name;
	struct text t, opts;
	char *unit = NULL, *options, *text, buf[32];
	unsigned errors = g->errors;
	int rc;

	for (const char *p = where; *p; p++)
		if (iscntrl((unsigned char)*p)) {
			gen_error(g, first, "[mount %s]: a control character in the path", where);
			return -1;
		}
	rc = ha_gen_unit_name(where, "mount", &unit);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0) {
		gen_error(g, first, "[mount %s]: %s", where,
			  rc == -ENAMETOOLONG ? "the unit name would be too long for systemd"
					      : "not an absolute path without '..'");
		return -1;
	}
	if (text_open(&opts) < 0) {
		free(unit);
		return -ENOMEM;
	}
	if (text_open(&t) < 0) {
		text_discard(&opts);
		free(unit);
		return -ENOMEM;
	}
	fprintf(t.f, "# Made by hugeadm --generate units from %s:%u.\n", first->file, first->line);
	fputs("nosuid,nodev", opts.f);
	for (size_t i = 0; i < g->n_entries; i++) {
		const struct hk_config_entry *e = &g->entries[i];
		uint64_t v;

		if (!is(e->section, "mount") || !is(e->name, where))
			continue;
		if (is(e->key, "pagesize")) {
			if (hk_parse_size(e->value, &v) < 0) {
				gen_error(g, e, "pagesize: '%s' is not a size", e->value);
				continue;
			}
			hkc_format_size(buf, sizeof(buf), v);
			fprintf(opts.f, ",pagesize=%s", buf);
		} else if (is(e->key, "user") || is(e->key, "group")) {
			mount_owner(g, e, is(e->key, "user"), t.f, opts.f);
		} else if (is(e->key, "mode")) {
			char *end;
			unsigned long m;

			errno = 0;
			m = strtoul(e->value, &end, 8);
			if (errno || end == e->value || *end || m > 07777 || !isdigit(*e->value)) {
				gen_error(g, e, "mode: '%s' is not an octal mode", e->value);
				continue;
			}
			fprintf(opts.f, ",mode=%04lo", m);
		} else if (is(e->key, "size") || is(e->key, "min_size")) {
			mount_size_option(g, e, opts.f);
		} else if (is(e->key, "nr_inodes")) {
			if (hk_parse_size(e->value, &v) < 0 || v == 0) {
				gen_error(g, e, "nr_inodes: '%s' is not a number", e->value);
				continue;
			}
			fprintf(opts.f, ",nr_inodes=%" PRIu64, v);
		} else {
			gen_error(g, e, "unknown key '%s' in [mount %s]", e->key, where);
		}
	}
	options = text_close(&opts);
	if (!options) {
		text_discard(&t);
		free(unit);
		return -ENOMEM;
	}
	fputs("[Unit]\nDescription=Huge pages at ", t.f);
	put_unit_value(t.f, where);
	fputs(" (hugekit)\n"
	      "Documentation=man:hugeadm(8)\n"
	      "# The pools first: a min_size= mount reserves its pages when it is made.\n"
	      "Requires=hugekit.service\n"
	      "After=hugekit.service\n"
	      "\n"
	      "[Mount]\n"
	      "What=hugetlbfs\n"
	      "Where=",
	      t.f);
	put_unit_value(t.f, where);
	fputs("\nType=hugetlbfs\nOptions=", t.f);
	put_unit_value(t.f, options);
	fputs("\n\n[Install]\nWantedBy=local-fs.target\n", t.f);
	free(options);
	text = text_close(&t);
	if (!text || g->errors != errors) {
		free(text);
		free(unit);
		return text ? -1 : -ENOMEM;
	}
	rc = ha_gen_files_add(out, unit, text);
	free(unit);
	return rc;
}

static void free_names(char **names, size_t n)
{
	for (size_t k = 0; k < n; k++)
		free(names[k]);
	free(names);
}

/* The directory an absolute path is in ("/dev/hugepages-2M/" -> "/dev"; "/x" -> "/"). */
static char *parent_dir(const char *path)
{
	char *d = strdup(path), *slash;
	size_t len;

	if (!d)
		return NULL;
	len = strlen(d);
	while (len > 1 && d[len - 1] == '/')
		d[--len] = '\0';
	slash = strrchr(d, '/');
	while (slash && slash > d && slash[-1] == '/')
		slash--;
	if (slash)
		slash[slash == d] = '\0';
	return d;
}

int ha_gen_units(struct ha_gen *g, struct ha_gen_files *out)
{
	unsigned errors = g->errors;
	char **names = NULL, **nn;
	size_t n_names = 0;
	struct text t;
	char *text;
	int rc;

	/* The directories the mount points are in, each once. */
	for (size_t i = 0; i < g->n_entries; i++) {
		const struct hk_config_entry *e = &g->entries[i];
		char *dir;
		bool seen = false;

		if (!is(e->section, "mount") || !e->name || *e->name != '/' ||
		    ha_gen_unit_name(e->name, "mount", &text) < 0)
			continue;
		free(text);
		dir = parent_dir(e->name);
		if (!dir)
			return free_names(names, n_names), -ENOMEM;
		for (size_t k = 0; k < n_names && !seen; k++)
			seen = is(names[k], dir);
		if (seen) {
			free(dir);
			continue;
		}
		nn = realloc(names, (n_names + 1) * sizeof(*nn));
		if (!nn) {
			free(dir);
			return free_names(names, n_names), -ENOMEM;
		}
		names = nn;
		names[n_names++] = dir;
	}
	if (text_open_made(&t, g, "units") < 0)
		return free_names(names, n_names), -ENOMEM;
	ha_gen_service(t.f, g->hugeadm_path, (const char *const *)names, n_names);
	free_names(names, n_names);
	names = NULL;
	n_names = 0;
	text = text_close(&t);
	if (!text)
		return -ENOMEM;
	rc = ha_gen_files_add(out, "hugekit.service", text);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < g->n_entries; i++) {
		const struct hk_config_entry *e = &g->entries[i];
		bool seen = false;

		if (!is(e->section, "mount") || !e->name)
			continue;
		for (size_t k = 0; k < i; k++)
			seen |= is(g->entries[k].section, "mount") &&
				is(g->entries[k].name, e->name);
		if (seen)
			continue;
		/* Two spellings of one mount point ("/a/b" and "/a//b/"): one unit name. */
		if (ha_gen_unit_name(e->name, "mount", &text) == 0) {
			for (size_t k = 0; k < n_names && !seen; k++)
				seen = is(names[k], text);
			if (seen) {
				gen_error(g, e,
					  "[mount %s]: the mount point of another [mount] (%s)",
					  e->name, text);
				free(text);
				continue;
			}
			nn = realloc(names, (n_names + 1) * sizeof(*nn));
			if (!nn) {
				free(text);
				rc = -ENOMEM;
				break;
			}
			names = nn;
			names[n_names++] = text;
		}
		rc = gen_mount(g, e, out);
		if (rc == -ENOMEM)
			break;
	}
	free_names(names, n_names);
	if (rc == -ENOMEM)
		return rc;
	return g->errors != errors ? -1 : 0;
}
