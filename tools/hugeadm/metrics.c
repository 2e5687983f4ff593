// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm --metrics[=FILE] [--config FILE] [--json]: libhugekit's snapshot
 * of the huge page state (hk_metrics_read) in Prometheus's text exposition
 * format (version 0.0.4), for node_exporter's textfile collector. FILE is
 * replaced whole: a new file in its directory that no one else can open or
 * name, synced and renamed over FILE (a link left there is replaced, never
 * followed), so that the collector reads the old snapshot or the new one.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hugeadm.h"

/*
 * A label value: '\\', '"' and a newline escaped (the format's rule); the
 * format wants UTF-8, and a cgroup's name may be any bytes: a byte that is
 * not part of valid UTF-8 is written "%XX" (its value in hex), and so is '%'
 * itself ("%25"), so that two names never give one label value (a series
 * twice makes the collector drop the whole file).
 */
static void put_label_value(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = hkt_utf8_len(p);

		if (n == 0 || *p == '%') {
			fprintf(f, "%%%02X", *p++);
			continue;
		}
		if (*p == '\\' || *p == '"')
			fputc('\\', f);
		if (*p == '\n')
			fputs("\\n", f);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
}

/* HELP text: '\\' and a newline escaped. */
static void put_help(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

/* A value: a whole number as digits, +Inf for no limit. */
static void put_value(FILE *f, double v)
{
	if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else if (isnan(v))
		fputs("NaN", f);
	else if (v >= 0 && v < 1e18 && (double)(uint64_t)v == v)
		fprintf(f, "%" PRIu64, (uint64_t)v);
	else
		fprintf(f, "%.17g", v);
}

static void text_family(FILE *f, const struct hk_metrics *m, size_t i)
{
	const struct hk_metric_family *fam = hk_metrics_family_at(m, i);

	if (!fam->n_samples)
		return;
	fprintf(f, "# HELP %s ", fam->name);
	put_help(f, fam->help);
	fprintf(f, "\n# TYPE %s %s\n", fam->name,
		fam->type == HK_METRIC_COUNTER ? "counter" : "gauge");
	for (size_t k = 0; k < fam->n_samples; k++) {
		const struct hk_metric_sample *s = hk_metrics_sample_at(m, i, k);

		fputs(fam->name, f);
		for (size_t l = 0; s->labels[l]; l += 2) {
			fprintf(f, "%s%s=\"", l ? "," : "{", s->labels[l]);
			put_label_value(f, s->labels[l + 1]);
			fputc('"', f);
		}
		fputs(s->labels[0] ? "} " : " ", f);
		put_value(f, s->value);
		fputc('\n', f);
	}
}

/* --json: the families with samples; a value without a number (+Inf: no limit) is null. */
static void json_metrics(FILE *f, const struct hk_metrics *m)
{
	struct hkt_json j;

	hkt_json_init(&j, f);
	hkt_json_open_object(&j, NULL);
	hkt_json_open_array(&j, "metrics");
	for (size_t i = 0; i < hk_metrics_family_count(m); i++) {
		const struct hk_metric_family *fam = hk_metrics_family_at(m, i);

		if (!fam->n_samples)
			continue;
		hkt_json_open_object(&j, NULL);
		hkt_json_string(&j, "name", fam->name);
		hkt_json_string(&j, "type", fam->type == HK_METRIC_COUNTER ? "counter" : "gauge");
		hkt_json_string(&j, "help", fam->help);
		hkt_json_open_array(&j, "samples");
		for (size_t k = 0; k < fam->n_samples; k++) {
			const struct hk_metric_sample *s = hk_metrics_sample_at(m, i, k);

			hkt_json_open_object(&j, NULL);
			hkt_json_open_object(&j, "labels");
			for (size_t l = 0; s->labels[l]; l += 2)
				hkt_json_string(&j, s->labels[l], s->labels[l + 1]);
			hkt_json_close_object(&j);
			if (isfinite(s->value))
				hkt_json_u64(&j, "value", (uint64_t)s->value);
			else
				hkt_json_null(&j, "value");
			hkt_json_close_object(&j);
		}
		hkt_json_close_array(&j);
		hkt_json_close_object(&j);
	}
	hkt_json_close_array(&j);
	hkt_json_close_object(&j);
	hkt_json_end(&j);
}

/* The snapshot as text (or JSON) in *ret (malloc'd), its length in *ret_len: 0 or -ENOMEM. */
static int render(const struct hugeadm_ctl *ctl, const struct hk_metrics *m, char **ret,
		  size_t *ret_len)
{
	FILE *f = open_memstream(ret, ret_len);

	if (!f)
		return -ENOMEM;
	if (ctl->json)
		json_metrics(f, m);
	else
		for (size_t i = 0; i < hk_metrics_family_count(m); i++)
			text_family(f, m, i);
	if (ferror(f)) {
		fclose(f);
		free(*ret);
		return -ENOMEM;
	}
	return fclose(f) == 0 ? 0 : -ENOMEM;
}

/*
 * FILE replaced whole, in its directory opened without following a link
 * in its path (the directory may be another user's, node_exporter's: the
 * new file is made where no one else can name it, and the rename replaces
 * whatever is at FILE's name). 0, or -1 said.
 */
static int write_metrics_file(struct hugeadm_ctl *ctl, const char *text, size_t len)
{
	const char *file = ctl->metrics_file, *slash = strrchr(file, '/');
	const char *base = slash ? slash + 1 : file;
	char *dir = slash ? strndup(file, (size_t)(slash - file) + (slash == file)) : strdup(".");
	char *disp = hkt_escape_ctl(file, true), *ddisp = dir ? hkt_escape_ctl(dir, true) : NULL;
	int dirfd = -1, rc = -1;

	if (!dir || !disp || !ddisp)
		ha_msg(ctl, HA_ERROR, "out of memory");
	else if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		ha_msg(ctl, HA_ERROR, "--metrics %s: not a file name", disp);
	else if ((dirfd = ha_open_dir(ctl, "--metrics", dir, ddisp, false)) >= 0)
		rc = ha_write_replace(ctl, dirfd, ddisp, base, text, len) < 0 ? -1 : 0;
	if (dirfd >= 0)
		close(dirfd);
	free(dir);
	free(disp);
	free(ddisp);
	return rc;
}

int ha_metrics(struct hugeadm_ctl *ctl)
{
	struct hk_metrics *m = NULL;
	char *text = NULL;
	size_t len = 0;
	unsigned errors;
	size_t n = ctl->metrics_file ? strlen(ctl->metrics_file) : 0;
	int rc;

	/* node_exporter's textfile collector reads every *.prom as the text format. */
	if (ctl->json && n >= 5 && !strcmp(ctl->metrics_file + n - 5, ".prom")) {
		ha_msg(ctl, HA_ERROR,
		       "--metrics=%s with --json: a .prom file is read as Prometheus's text "
		       "format; give the JSON another name",
		       ctl->metrics_file);
		return HK_EXIT_FAILURE;
	}
	rc = hk_metrics_read(ctl->ctx, ctl->gen_config, 0, &m);
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "cannot read the metrics: %s", strerror(-rc));
		return HK_EXIT_FAILURE;
	}
	errors = hk_metrics_errors(m);
	rc = render(ctl, m, &text, &len);
	hk_metrics_free(m);
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "out of memory");
		return HK_EXIT_FAILURE;
	}
	if (ctl->metrics_file)
		rc = write_metrics_file(ctl, text, len);
	else
		fwrite(text, 1, len, stdout);
	free(text);
	if (rc < 0)
		return HK_EXIT_FAILURE;
	if (errors) {
		/* Written all the same, with hugekit_metrics_errors: a partial snapshot is news too. */
		ha_msg(ctl, HA_ERROR,
		       "%u %s of the huge page state could not be read (see above; "
		       "hugekit_metrics_errors says so too)",
		       errors, hkt_plural(errors, "part", "parts"));
		return HK_EXIT_FAILURE;
	}
	return HK_EXIT_SUCCESS;
}
