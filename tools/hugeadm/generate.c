// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm --generate boot|sysctl|units: what the configuration asks of the
 * boot, as files for other programs. The kernel command line for what only
 * boot can give (gigantic pools, the default size, CMA, HVO); a sysctl.d
 * file for [sysctl], its "recommended" values worked out on this machine;
 * systemd units: a .mount per [mount] and hugekit.service, which runs
 * hugeadm --apply early in the boot; with [metrics], hugekit-metrics.service
 * and its timer, which write hugeadm --metrics into node_exporter's
 * textfile directory.
 *
 * The pools, sysctls and mounts are what libhugekit's plan resolves
 * (hk_plan_from_config, the engine of hugeadm --apply): page sizes, nodes,
 * users and groups, "recommended" values are worked out there once, and the
 * files say what --apply would do. Only [boot] is read here: it has no plan
 * items. Each generator returns the files it makes (name and text), or -1
 * after reporting every problem with the file and line of its setting.
 * Nothing is written here: the caller writes the files once everything is
 * known to be good.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generate.h"
#include "util.h" /* tools/common: hkt_escape_ctl */

/* One problem, at FILE:LINE (file NULL: none). */
__attribute__((format(printf, 4, 5))) static void gen_error(struct ha_gen *g, const char *file,
							    unsigned line, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	g->errors++;
	if (g->error)
		g->error(g->data, file, line, n >= 0 ? msg : "out of memory");
	if (n >= 0)
		free(msg);
}

/*
 * Whether s can go into a generated file: no control character, which could
 * end its line and start one of its own (a directive, a sysctl), or make a
 * line that is no longer what it was meant to be. Reported, naming s (its
 * control characters escaped) as what.
 */
static bool text_ok(struct ha_gen *g, const char *file, unsigned line, const char *what,
		    const char *s)
{
	char *esc;

	for (const char *c = s; *c; c++) {
		if ((unsigned char)*c >= 0x20 && *c != 0x7f)
			continue;
		esc = hkt_escape_ctl(s, true);
		gen_error(g, file, line,
			  "%s '%s' has a control character: it cannot be written into a "
			  "generated file",
			  what, esc ? esc : "?");
		free(esc);
		return false;
	}
	return true;
}

/* The names of the configuration files, which the files' comments give. */
static bool sources_ok(struct ha_gen *g)
{
	const char *const *files;
	size_t n = hk_config_files(g->config, &files);
	bool ok = true;

	for (size_t i = 0; i < n; i++)
		ok &= text_ok(g, NULL, 0, "the configuration file name", files[i]);
	return ok;
}

static bool is(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* The entry [section name] key, or NULL. The parser lets a key appear once per section. */
static const struct hk_config_entry *find(const struct ha_gen *g, const char *section,
					  const char *name, const char *key)
{
	const struct hk_config_entry *es;
	size_t n = hk_config_entries(g->config, &es);

	for (size_t i = 0; i < n; i++)
		if (is(es[i].section, section) && is(es[i].key, key) &&
		    (!name || is(es[i].name, name)))
			return &es[i];
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

/* Each problem the plan finds: counted, and said as the plan says it. */
static void plan_problem(void *data, const char *file, unsigned line, const char *msg)
{
	gen_error(data, file, line, "%s", msg);
}

/*
 * The configuration resolved on this machine by the plan of hugeadm --apply;
 * 0, -1 after messages, or -ENOMEM. The whole plan is resolved, whichever
 * files are made, with all of its checks (none is relaxed for --generate): a
 * configuration that --apply refuses here (a THP knob or a sysctl the kernel
 * lacks, no hugetlb cgroup controller, a pool's maximum below the minimum it
 * would have, counting what the nodes a per-node minimum leaves out hold now,
 * or a gigantic pool's above it, a size that is not whole pages) is refused
 * by every --generate too, with --apply's message, rather than made into
 * files for a boot whose hugekit.service then fails.
 */
static int resolve(struct ha_gen *g, struct hk_plan **ret)
{
	unsigned errors = g->errors;
	int rc = hk_plan_from_config(g->ctx, g->config, plan_problem, g, ret);

	if (rc == -ENOMEM || rc == 0)
		return rc;
	if (g->errors == errors)
		gen_error(g, NULL, 0, "cannot work out the configuration on this machine: %s",
			  strerror(-rc));
	return -1;
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
	const char *const *files;
	size_t n = hk_config_files(g->config, &files);

	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i == 0 ? "" : i + 1 == n ? " and " : ", ", files[i]);
	if (n == 0)
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

static bool node_exists(const int *nodes, size_t n, int node)
{
	for (size_t i = 0; i < n; i++)
		if (nodes[i] == node)
			return true;
	return false;
}

static bool size_known(const uint64_t *sizes, size_t n, uint64_t size)
{
	for (size_t i = 0; i < n; i++)
		if (sizes[i] == size)
			return true;
	return false;
}

/* Pool minimums by ascending size, then node (the whole pool, HK_NODE_ALL, is -1). */
static int cmp_minimum(const void *a, const void *b)
{
	const struct hk_plan_item *x = *(const struct hk_plan_item *const *)a;
	const struct hk_plan_item *y = *(const struct hk_plan_item *const *)b;

	if (x->page_size != y->page_size)
		return (x->page_size > y->page_size) - (x->page_size < y->page_size);
	return (x->node > y->node) - (x->node < y->node);
}

/*
 * " hugepagesz=SIZE hugepages=..." for each pool of the plan with a minimum
 * that goes on the command line (gigantic ones, or all), by ascending size,
 * the nodes of a per-node minimum ascending; 0, or -ENOMEM.
 */
static int boot_pools(struct ha_gen *g, const struct hk_plan *plan, bool all, FILE *line)
{
	size_t n = hk_plan_items(plan, NULL), n_min = 0;
	const struct hk_plan_item **min = calloc(n + 1, sizeof(*min));
	char buf[32];

	if (!min)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (hk_plan_item_at(plan, i)->kind == HK_PLAN_WRITE &&
		    hk_plan_item_at(plan, i)->page_size &&
		    hk_plan_item_at(plan, i)->field == HK_POOL_MINIMUM)
			min[n_min++] = hk_plan_item_at(plan, i);
	qsort(min, n_min, sizeof(*min), cmp_minimum);
	for (size_t i = 0, end; i < n_min; i = end) {
		struct hk_pool *pool = NULL;
		uint64_t size = min[i]->page_size;
		int rc = hk_pool_read(g->ctx, size, &pool);
		bool gigantic = rc == 0 && hk_pool_is_gigantic(pool);

		for (end = i; end < n_min && min[end]->page_size == size; end++)
			;
		hk_pool_unref(pool);
		if (rc < 0)
			gen_error(g, min[i]->file, min[i]->line, "%s: cannot read the pool: %s",
				  min[i]->item, strerror(-rc));
		if (!gigantic && !all)
			continue;
		hk_format_size(buf, sizeof(buf), size);
		fprintf(line, " hugepagesz=%s hugepages=", buf);
		for (size_t k = i; k < end; k++) {
			if (min[k]->node == HK_NODE_ALL)
				fprintf(line, "%" PRIu64, min[k]->number);
			else
				fprintf(line, "%s%d:%" PRIu64, k > i ? "," : "", min[k]->node,
					min[k]->number);
		}
	}
	free(min);
	return 0;
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
			gen_error(g, e->file, e->line,
				  "hugetlb_cma: '%s' is not a size (with K, M or G)", copy);
			bad = true;
		} else {
			hk_format_size(buf, sizeof(buf), v);
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
			gen_error(g, e->file, e->line, "hugetlb_cma: '%s' is not NODE:SIZE", tok);
			bad = true;
			continue;
		}
		if (!node_exists(nodes, n_nodes, (int)node)) {
			gen_error(g, e->file, e->line,
				  "hugetlb_cma: node %" PRIu64 " does not exist on this machine",
				  node);
			bad = true;
		}
		if (hk_parse_size(colon + 1, &v) < 0 || v == 0 || all_digits(colon + 1)) {
			gen_error(g, e->file, e->line,
				  "hugetlb_cma: '%s' is not a size (with K, M or G)", colon + 1);
			bad = true;
			continue;
		}
		hk_format_size(buf, sizeof(buf), v);
		fprintf(line, "%s%" PRIu64 ":%s", first ? "" : ",", node, buf);
		first = false;
	}
	free(copy);
	return bad ? -1 : 0;
}

/* default_hugepagesz= of [boot], when the machine has that size (else said). */
static void boot_default_size(struct ha_gen *g, const struct hk_config_entry *def,
			      const uint64_t *sizes, size_t n_sizes, FILE *line)
{
	char buf[32];
	uint64_t v;

	if (hk_parse_size(def->value, &v) < 0 || all_digits(def->value)) {
		gen_error(g, def->file, def->line,
			  "default_hugepagesz: '%s' is not a size (with K, M or G)", def->value);
	} else if (!size_known(sizes, n_sizes, v)) {
		gen_error(g, def->file, def->line,
			  "default_hugepagesz: this machine has no %s huge pages", def->value);
	} else {
		hk_format_size(buf, sizeof(buf), v);
		fprintf(line, " default_hugepagesz=%s", buf);
	}
}

/* The file kernel-cmdline: the parameters, with how to install them when commented. */
static int boot_file(struct ha_gen *g, bool comments, const char *params, struct ha_gen_files *out)
{
	struct text file;
	char *text;

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

int ha_gen_boot(struct ha_gen *g, bool comments, struct ha_gen_files *out)
{
	/* [boot]: checked by the parser (on/off, gigantic/all, sizes), on this machine here. */
	const struct hk_config_entry *def = find(g, "boot", NULL, "default_hugepagesz");
	const struct hk_config_entry *cma = find(g, "boot", NULL, "hugetlb_cma");
	const struct hk_config_entry *hvo = find(g, "boot", NULL, "hugetlb_free_vmemmap");
	const struct hk_config_entry *which = find(g, "boot", NULL, "pools");
	struct hk_plan *plan = NULL;
	uint64_t *sizes = NULL;
	int *nodes = NULL;
	size_t n_sizes = 0, n_nodes = 0;
	struct text line;
	char *params = NULL;
	unsigned errors = g->errors;
	int rc;

	/* The comments name the configuration files. */
	if (comments && !sources_ok(g))
		return -1;
	rc = hk_page_sizes(g->ctx, &sizes, &n_sizes);
	if (rc < 0) {
		gen_error(g, NULL, 0, "cannot read the huge page sizes of this machine: %s",
			  strerror(-rc));
		return -1;
	}
	rc = hk_node_list(g->ctx, &nodes, &n_nodes);
	if (rc < 0) {
		free(sizes);
		gen_error(g, NULL, 0, "cannot read the NUMA nodes of this machine: %s",
			  strerror(-rc));
		return -1;
	}
	if (text_open(&line) < 0) {
		free(sizes);
		free(nodes);
		return -ENOMEM;
	}
	if (hvo)
		fprintf(line.f, " hugetlb_free_vmemmap=%s", hvo->value);
	if (def)
		boot_default_size(g, def, sizes, n_sizes, line.f);
	/* The pools, by ascending size: hugepagesz=SIZE, then its hugepages=. */
	rc = resolve(g, &plan);
	if (rc == 0)
		rc = boot_pools(g, plan, which && is(which->value, "all"), line.f);
	hk_plan_unref(plan);
	if (rc != -ENOMEM && cma)
		rc = boot_cma(g, cma, nodes, n_nodes, line.f);
	free(sizes);
	free(nodes);
	params = text_close(&line);
	if (rc == -ENOMEM || !params) {
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
	return boot_file(g, comments, params, out);
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
	struct hk_plan *plan = NULL;
	size_t n;
	struct text t;
	char *text;
	int rc = sources_ok(g) ? resolve(g, &plan) : -1;

	if (rc < 0)
		return rc;
	if (text_open_made(&t, g, "sysctl") < 0) {
		hk_plan_unref(plan);
		return -ENOMEM;
	}
	fputs("# The huge page pools are not set here: hugekit.service sets them (hugeadm --apply)\n"
	      "# and reads them back.\n",
	      t.f);
	/* The plan's values: group names as gids, sizes in bytes, "recommended" worked out. */
	n = hk_plan_items(plan, NULL);
	for (size_t i = 0; i < n; i++) {
		const struct hk_plan_item *it = hk_plan_item_at(plan, i);
		const char *key = it->item + strlen("sysctl ");
		const struct hk_config_entry *e;

		if (strncmp(it->item, "sysctl ", strlen("sysctl ")) != 0)
			continue;
		e = find(g, "sysctl", NULL, key);
		/* sysctl.d has no quoting: a line is "key = value", blanks around it dropped. */
		if (!text_ok(g, it->file, it->line, "sysctl", key) ||
		    !text_ok(g, it->file, it->line, key, e->value) ||
		    !text_ok(g, it->file, it->line, key, it->value)) {
			rc = -1;
			continue;
		}
		if (is(e->value, "recommended") && is(key, "kernel.shmmax")) {
			/*
			 * Not at boot: the kernel's default then is above what the pools
			 * hold, and a recommended shmmax is never lowered (--apply raises
			 * a lower value, as here where it is running below).
			 */
			fprintf(t.f,
				"# %s = recommended (%s:%u) is not set at boot: the kernel's default "
				"is above\n"
				"# what the huge page pools hold, and hugekit never lowers it; "
				"hugeadm --apply\n"
				"# raises a lower value to %s (the pools at the maximum this "
				"configuration gives them)\n",
				key, it->file, it->line, it->value);
		} else if (is(e->value, "recommended")) {
			fprintf(t.f,
				"# recommended (%s:%u), worked out on this machine:\n"
				"# 11 x the default huge page size in kB x the memory zones\n%s = %s\n",
				it->file, it->line, key, it->value);
		} else if (is(key, "vm.hugetlb_shm_group") && !all_digits(e->value)) {
			fprintf(t.f, "# group %s (%s:%u): the kernel takes its gid\n%s = %s\n",
				e->value, it->file, it->line, key, it->value);
		} else if (!all_digits(e->value)) {
			fprintf(t.f, "# %s (%s:%u)\n%s = %s\n", e->value, it->file, it->line, key,
				it->value);
		} else {
			fprintf(t.f, "%s = %s\n", key, it->value);
		}
	}
	hk_plan_unref(plan);
	text = text_close(&t);
	if (!text)
		return -ENOMEM;
	if (rc < 0) {
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

/*
 * A value in a unit file (Where=, What=, Options=, Description=): taken as
 * written, but '%' starts a specifier (systemd.unit(5), "Specifiers"), so it
 * is doubled. The caller has refused control characters, and a trailing
 * '\\' (it would join the next line) or blank (dropped) in a path.
 */
static void put_unit_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '%')
			fputc('%', f);
		fputc(*s, f);
	}
}

/*
 * One word of a setting that systemd unquotes (systemd.syntax(7),
 * "Quoting"): in double quotes when it has a blank, a quote or '\\', with
 * '"' and '\\' escaped there; '%' doubled (specifiers are expanded after).
 * With exec, a word of a command line (ExecStart=, systemd.service(5),
 * "Command lines"): '$' doubled too (environment variables), and a lone ';'
 * (which would end the command) as "\\;". Else a path of a list
 * (RequiresMountsFor=).
 */
static void put_word(FILE *f, const char *s, bool exec)
{
	bool quote = strpbrk(s, " \t\"'\\") != NULL;

	if (exec && strcmp(s, ";") == 0) {
		fputs("\\;", f);
		return;
	}
	if (quote)
		fputc('"', f);
	for (; *s; s++) {
		if (quote && (*s == '"' || *s == '\\'))
			fputc('\\', f);
		if (*s == '%' || (exec && *s == '$'))
			fputc(*s, f);
		fputc(*s, f);
	}
	if (quote)
		fputc('"', f);
}

void ha_gen_service(FILE *f, const char *hugeadm_path, const char *config_path,
		    const char *const *mounts_for, size_t n)
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
	if (config_path) {
		fputs("# The configuration it applies: after the file system it is on.\n"
		      "RequiresMountsFor=",
		      f);
		put_word(f, config_path, false);
		fputc('\n', f);
	}
	if (n)
		fputs("# hugeadm --apply mounts the [mount] sections: after the file systems they are on.\n",
		      f);
	for (size_t i = 0; i < n; i++) {
		fputs("RequiresMountsFor=", f);
		put_word(f, mounts_for[i], false);
		fputc('\n', f);
	}
	fputs("\n"
	      "[Service]\n"
	      "Type=oneshot\n"
	      "RemainAfterExit=yes\n"
	      "ExecStart=",
	      f);
	put_word(f, hugeadm_path, true);
	fputs(" --apply", f);
	if (config_path) {
		fputc(' ', f);
		put_word(f, config_path, true);
	}
	fputs("\n"
	      "\n"
	      "[Install]\n"
	      "WantedBy=sysinit.target\n",
	      f);
}

/* The value of option name in a mount's options ("pagesize=2M,size=50%"), or NULL. */
static const char *option(const char *opts, const char *name, char *buf, size_t sz)
{
	size_t len = strlen(name);

	for (const char *o = opts; o; o = strchr(o, ','), o = o ? o + 1 : NULL)
		if (strncmp(o, name, len) == 0 && o[len] == '=') {
			snprintf(buf, sz, "%.*s", (int)strcspn(o + len + 1, ","), o + len + 1);
			return buf;
		}
	return NULL;
}

/* The unit's name for the mount point (0), -1 after saying why it has none, or -ENOMEM. */
static int mount_unit_name(struct ha_gen *g, const struct hk_plan_item *it, char **ret)
{
	size_t len = strlen(it->path);
	int rc;

	/* The parser refuses these; a plan built otherwise is checked all the same. */
	if (!text_ok(g, it->file, it->line, "the mount point", it->path) ||
	    !text_ok(g, it->file, it->line, "the mount options", it->value))
		return -1;
	if (len && strchr(" \t\\", it->path[len - 1])) {
		gen_error(g, it->file, it->line,
			  "[mount %s]: a mount point that ends in '\\' or a blank cannot be "
			  "written in a unit (systemd joins the next line to it or drops it)",
			  it->path);
		return -1;
	}
	rc = ha_gen_unit_name(it->path, "mount", ret);
	if (rc < 0 && rc != -ENOMEM) {
		gen_error(g, it->file, it->line, "[mount %s]: %s", it->path,
			  rc == -ENAMETOOLONG ? "the unit name would be too long for systemd"
					      : "not an absolute path without '..'");
		return -1;
	}
	return rc;
}

/*
 * The mount's options into opts, in the order of the section's keys (see
 * gen_mount); the comments a name or an implied group needs into comments.
 */
static void mount_unit_options(struct ha_gen *g, const struct hk_plan_item *it, FILE *comments,
			       FILE *opts)
{
	const struct hk_config_entry *es;
	size_t n = hk_config_entries(g->config, &es);
	char buf[64], sbuf[32];
	bool user_only = false, has_group = false;

	fputs("nosuid,nodev", opts);
	for (size_t i = 0; i < n; i++) {
		const struct hk_config_entry *e = &es[i];
		bool user = is(e->key, "user");
		const char *v;
		uint64_t bytes;

		if (!is(e->section, "mount") || !is(e->name, it->path) ||
		    !text_ok(g, e->file, e->line, e->key, e->value))
			continue;
		if (user)
			user_only = !has_group;
		if (is(e->key, "group"))
			user_only = false, has_group = true;
		if (is(e->key, "pagesize")) {
			hk_format_size(sbuf, sizeof(sbuf), it->page_size);
			fprintf(opts, ",pagesize=%s", sbuf);
		} else if (user || is(e->key, "group")) {
			/* hugetlbfs takes numbers only: a name is said in a comment. */
			if (!all_digits(e->value))
				fprintf(comments, "# %s %s is %s %u here\n", e->key, e->value,
					user ? "uid" : "gid", user ? it->uid : it->gid);
			fprintf(opts, ",%s=%u", user ? "uid" : "gid", user ? it->uid : it->gid);
		} else if (is(e->key, "mode")) {
			fprintf(opts, ",mode=%04o", (unsigned)it->mode);
		} else if ((v = option(it->value, e->key, buf, sizeof(buf)))) {
			/* size, min_size (or a percentage of the pool) and nr_inodes. */
			if (strchr(v, '%') || hk_parse_size(v, &bytes) < 0)
				fprintf(opts, ",%s=%s", e->key, v);
			else if (is(e->key, "nr_inodes"))
				fprintf(opts, ",nr_inodes=%" PRIu64, bytes);
			else {
				hk_format_size(sbuf, sizeof(sbuf), bytes);
				fprintf(opts, ",%s=%s", e->key, sbuf);
			}
		}
	}
	/* A user without a group: --apply gives the mount the user's own group (the plan's gid). */
	if (user_only && it->gid) {
		fprintf(comments, "# group: the primary group of the user, gid %u here\n", it->gid);
		fprintf(opts, ",gid=%u", it->gid);
	}
}

/*
 * One [mount]: its unit, named from the path. The options are the plan's,
 * written in the order of the section's keys, and only those it sets (no
 * pagesize=, uid=, gid= or mode= that the plan fills in, but the gid of a
 * user given alone); sizes as the kernel reads them, user and group names as
 * their ids with a comment.
 */
static int gen_mount(struct ha_gen *g, const struct hk_plan_item *it, struct ha_gen_files *out)
{
	struct text t, opts;
	char *unit = NULL, *options, *text;
	int rc = mount_unit_name(g, it, &unit);

	if (rc < 0)
		return rc;
	if (text_open(&opts) < 0) {
		free(unit);
		return -ENOMEM;
	}
	if (text_open(&t) < 0) {
		text_discard(&opts);
		free(unit);
		return -ENOMEM;
	}
	fprintf(t.f, "# Made by hugeadm --generate units from %s:%u.\n", it->file, it->line);
	mount_unit_options(g, it, t.f, opts.f);
	options = text_close(&opts);
	if (!options) {
		text_discard(&t);
		free(unit);
		return -ENOMEM;
	}
	fputs("[Unit]\nDescription=Huge pages at ", t.f);
	put_unit_value(t.f, it->path);
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
	put_unit_value(t.f, it->path);
	fputs("\nType=hugetlbfs\nOptions=", t.f);
	put_unit_value(t.f, options);
	fputs("\n\n[Install]\nWantedBy=local-fs.target\n", t.f);
	free(options);
	text = text_close(&t);
	rc = text ? ha_gen_files_add(out, unit, text) : -ENOMEM;
	free(unit);
	return rc;
}

/* The directory an absolute path is in ("/dev/hugepages-2M" -> "/dev"; "/x" -> "/"). */
static char *parent_dir(const char *path)
{
	char *d = strdup(path), *slash;

	if (!d)
		return NULL;
	slash = strrchr(d, '/');
	if (slash)
		slash[slash == d] = '\0';
	return d;
}

/* node_exporter's textfile directory on Debian, and how often, where [metrics] does not say. */
#define HA_METRICS_DIR "/var/lib/prometheus/node-exporter"
#define HA_METRICS_INTERVAL "1min"
#define HA_METRICS_FILE "hugekit.prom"

void ha_gen_metrics_service(FILE *f, const char *hugeadm_path, const char *config_path,
			    const char *dir)
{
	char *arg = NULL;

	fputs("[Unit]\n"
	      "Description=Huge page metrics for node_exporter's textfile collector (hugekit)\n"
	      "Documentation=man:hugeadm(8)\n"
	      "After=hugekit.service\n"
	      "RequiresMountsFor=",
	      f);
	put_word(f, dir, false);
	fputs("\n"
	      "\n"
	      "[Service]\n"
	      "Type=oneshot\n"
	      "# Replaces " HA_METRICS_FILE
	      " whole: a new file in the directory, renamed over it.\n"
	      "ExecStart=",
	      f);
	put_word(f, hugeadm_path, true);
	fputc(' ', f);
	if (asprintf(&arg, "--metrics=%s/" HA_METRICS_FILE, strcmp(dir, "/") ? dir : "") < 0)
		arg = NULL;
	put_word(f, arg ? arg : "--metrics", true);
	free(arg);
	if (config_path) {
		fputs(" --config ", f);
		put_word(f, config_path, true);
	}
	fputs("\n"
	      "# It reads /proc and /sys and writes that one directory.\n"
	      "NoNewPrivileges=yes\n"
	      "ProtectSystem=strict\n"
	      "ReadWritePaths=",
	      f);
	put_word(f, dir, false);
	fputs("\n"
	      "ProtectHome=read-only\n"
	      "# No PrivateTmp=: it would hide a directory or configuration under /tmp\n"
	      "# or /var/tmp (226/NAMESPACE); ProtectSystem=strict keeps both read-only.\n"
	      "PrivateNetwork=yes\n"
	      "# Reading and one file written: no capability but to pass file modes\n"
	      "# (a textfile directory owned by another user), the kernel's\n"
	      "# tunables and cgroups read-only, nothing else of the kernel's.\n"
	      "CapabilityBoundingSet=CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH\n"
	      "ProtectKernelTunables=yes\n"
	      "ProtectControlGroups=yes\n"
	      "ProtectKernelModules=yes\n"
	      "ProtectKernelLogs=yes\n"
	      "ProtectClock=yes\n"
	      "ProtectHostname=yes\n"
	      "RestrictAddressFamilies=AF_UNIX\n"
	      "RestrictNamespaces=yes\n"
	      "RestrictRealtime=yes\n"
	      "RestrictSUIDSGID=yes\n"
	      "LockPersonality=yes\n"
	      "MemoryDenyWriteExecute=yes\n"
	      "SystemCallArchitectures=native\n"
	      "UMask=0022\n",
	      f);
}

void ha_gen_metrics_timer(FILE *f, const char *interval)
{
	fputs("[Unit]\n"
	      "Description=Huge page metrics every ",
	      f);
	put_unit_value(f, interval);
	fputs(" (hugekit)\n"
	      "Documentation=man:hugeadm(8)\n"
	      "\n"
	      "[Timer]\n"
	      "OnActiveSec=0\n"
	      "OnUnitActiveSec=",
	      f);
	put_unit_value(f, interval);
	fputs("\n"
	      "AccuracySec=1s\n"
	      "\n"
	      "[Install]\n"
	      "WantedBy=timers.target\n",
	      f);
}

/* [metrics]: hugekit-metrics.service and its timer (0), none without the section, or -ENOMEM. */
static int gen_metrics(struct ha_gen *g, struct ha_gen_files *out)
{
	const struct hk_config_entry *dir = find(g, "metrics", NULL, "textfile_dir");
	const struct hk_config_entry *every = find(g, "metrics", NULL, "interval");
	struct text t;
	char *text;
	int rc;

	if (!dir && !every)
		return 0;
	if ((dir && !text_ok(g, dir->file, dir->line, "textfile_dir", dir->value)) ||
	    (every && !text_ok(g, every->file, every->line, "interval", every->value)))
		return -1;
	if (text_open_made(&t, g, "units") < 0)
		return -ENOMEM;
	ha_gen_metrics_service(t.f, g->hugeadm_path, g->config_path,
			       dir ? dir->value : HA_METRICS_DIR);
	text = text_close(&t);
	rc = text ? ha_gen_files_add(out, "hugekit-metrics.service", text) : -ENOMEM;
	if (rc < 0)
		return rc;
	if (text_open_made(&t, g, "units") < 0)
		return -ENOMEM;
	ha_gen_metrics_timer(t.f, every ? every->value : HA_METRICS_INTERVAL);
	text = text_close(&t);
	return text ? ha_gen_files_add(out, "hugekit-metrics.timer", text) : -ENOMEM;
}

int ha_gen_units(struct ha_gen *g, struct ha_gen_files *out)
{
	struct hk_plan *plan = NULL;
	const char **dirs;
	size_t n, n_dirs = 0;
	unsigned errors = g->errors;
	struct text t;
	char *text;
	int rc = -1;

	if (sources_ok(g) && text_ok(g, NULL, 0, "the path of hugeadm", g->hugeadm_path) &&
	    (!g->config_path ||
	     text_ok(g, NULL, 0, "the path of the configuration", g->config_path)))
		rc = resolve(g, &plan);
	if (rc < 0)
		return rc;
	/* The directories the mount points are in (the plan's paths are clean), each once. */
	n = hk_plan_items(plan, NULL);
	dirs = calloc(n + 1, sizeof(*dirs));
	rc = dirs ? 0 : -ENOMEM;
	for (size_t i = 0; i < n && rc == 0; i++) {
		bool seen = false;
		char *dir;

		if (hk_plan_item_at(plan, i)->kind != HK_PLAN_MOUNT)
			continue;
		dir = parent_dir(hk_plan_item_at(plan, i)->path);
		for (size_t k = 0; dir && k < n_dirs && !seen; k++)
			seen = is(dirs[k], dir);
		if (!dir)
			rc = -ENOMEM;
		else if (seen)
			free(dir);
		else
			dirs[n_dirs++] = dir;
	}
	if (rc == 0 && text_open_made(&t, g, "units") == 0) {
		ha_gen_service(t.f, g->hugeadm_path, g->config_path, dirs, n_dirs);
		text = text_close(&t);
		rc = text ? ha_gen_files_add(out, "hugekit.service", text) : -ENOMEM;
	} else {
		rc = -ENOMEM;
	}
	for (size_t k = 0; k < n_dirs; k++)
		free((char *)dirs[k]);
	free(dirs);
	for (size_t i = 0; i < n && rc != -ENOMEM; i++)
		if (hk_plan_item_at(plan, i)->kind == HK_PLAN_MOUNT)
			rc = gen_mount(g, hk_plan_item_at(plan, i), out);
	if (rc != -ENOMEM && gen_metrics(g, out) == -ENOMEM)
		rc = -ENOMEM;
	hk_plan_unref(plan);
	if (rc == -ENOMEM)
		return rc;
	return g->errors != errors ? -1 : 0;
}
