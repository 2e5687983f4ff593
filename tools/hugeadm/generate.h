/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hugeadm --generate: generators over a configuration and its plan
 * (generate.c), free of hugeadm's control struct so that unit tests call them
 * directly.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <hugekit/hugekit.h>

struct ha_gen {
	struct hk_ctx *ctx; /* the machine the values are worked out on */
	/* Read and checked (hk_config_load, hk_config_parse_string); resolved by its plan. */
	const struct hk_config *config;
	const char *hugeadm_path; /* ExecStart of hugekit.service */
	/* --config FILE, absolute: what hugekit.service applies; NULL: /etc/hugekit. */
	const char *config_path;
	/* Each problem, with the file and line of its setting (file NULL: none). */
	hk_config_error_fn error;
	void *data;
	unsigned errors; /* problems reported so far */
};

/* A file made: its name (no directory) and its whole text. */
struct ha_gen_file {
	char *name;
	char *text;
};

struct ha_gen_files {
	struct ha_gen_file *files;
	size_t n;
	char *note; /* boot: the parameters alone, one line without '\n' ("" for none) */
};

/*
 * Each returns 0 and adds its files to out, -1 after reporting every problem
 * to g->error, or -ENOMEM. Nothing is written anywhere.
 *
 * boot: "kernel-cmdline", the parameters on one line (or nothing); with
 * comments, lines of '#' before it that name the configuration and say how
 * to install the line.
 */
int ha_gen_boot(struct ha_gen *g, bool comments, struct ha_gen_files *out);
/* sysctl: "90-hugekit.conf", a sysctl.d file of [sysctl]. */
int ha_gen_sysctl(struct ha_gen *g, struct ha_gen_files *out);
/*
 * units: "hugekit.service", then one .mount per [mount] in configuration
 * order, then with [metrics] "hugekit-metrics.service" and
 * "hugekit-metrics.timer".
 */
int ha_gen_units(struct ha_gen *g, struct ha_gen_files *out);
void ha_gen_files_free(struct ha_gen_files *f);
/* Takes text (freed on failure too). */
int ha_gen_files_add(struct ha_gen_files *f, const char *name, char *text);

/*
 * hugekit.service's text, running hugeadm_path --apply; ordered after the
 * file systems of the n directories of mounts_for (RequiresMountsFor=).
 */
void ha_gen_service(FILE *f, const char *hugeadm_path, const char *config_path,
		    const char *const *mounts_for, size_t n);
/*
 * hugekit-metrics.service's text: hugeadm_path --metrics=DIR/hugekit.prom
 * (--config config_path), the system read-only but dir; and its timer's,
 * every interval (a systemd time span) from when it starts.
 */
void ha_gen_metrics_service(FILE *f, const char *hugeadm_path, const char *config_path,
			    const char *dir);
void ha_gen_metrics_timer(FILE *f, const char *interval);
/* How to install the kernel parameters params, each line after prefix. */
void ha_gen_boot_hint(FILE *f, const char *prefix, const char *params);
/* systemd-escape --path --suffix=SUFFIX; free(*ret). -EINVAL, -ENAMETOOLONG, -ENOMEM. */
int ha_gen_unit_name(const char *path, const char *suffix, char **ret);
