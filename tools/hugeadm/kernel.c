// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The newer pool features of the kernel: demote (Linux 5.16: split free pages
 * of one size into pages of a smaller one), the HugeTLB vmemmap optimization
 * (HVO, vm.hugetlb_optimize_vmemmap, Linux 5.19) and hugetlb_cma (a boot
 * parameter). Their options, what a demote did, and what --explain says
 * of them (libhugekit judges and plans them).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hugeadm.h"

/* The kernel's struct page: 64 bytes where HVO exists (x86-64, arm64, riscv64, loongarch). */
#define STRUCT_PAGE_BYTES 64

/* "ARG: WHAT", -1. */
static int plan_error(struct hugeadm_ctl *ctl, const char *arg, const char *what)
{
	ha_msg(ctl, HA_ERROR, "%s: %s", arg, what);
	return -1;
}

/* "SIZE:REST": the SIZE part into a->size_str and the rest into a->adj_str. */
static int split_spec(struct hugeadm_ctl *ctl, struct ha_action *a, const char *arg)
{
	const char *colon = strchr(arg, ':');

	if (!colon || colon == arg || !colon[1])
		return -1;
	a->size_str = strndup(arg, (size_t)(colon - arg));
	a->adj_str = strdup(colon + 1);
	if (!a->size_str || !a->adj_str) {
		ha_msg(ctl, HA_ERROR, "out of memory");
		return -1;
	}
	return 0;
}

int ha_plan_demote_size(struct hugeadm_ctl *ctl, const char *arg)
{
	struct ha_action *a = ha_new_action(ctl, HA_DEMOTE_SIZE, arg);

	if (split_spec(ctl, a, arg) < 0)
		return plan_error(ctl, arg, "invalid demote size setting (SIZE:TO, e.g. 1G:2M)");
	if (hk_parse_size(a->adj_str, &a->u) < 0)
		return plan_error(ctl, a->adj_str, "invalid page size to demote to");
	return 0;
}

int ha_plan_demote(struct hugeadm_ctl *ctl, const char *arg)
{
	struct ha_action *a = ha_new_action(ctl, HA_DEMOTE, arg);
	char *at;
	int rc;

	if (split_spec(ctl, a, arg) < 0)
		return plan_error(ctl, arg,
				  "invalid demote specification (SIZE:N[@NODES], e.g. 1G:1)");
	at = strchr(a->adj_str, '@');
	if (at)
		*at = '\0';
	if (!*a->adj_str || strspn(a->adj_str, "0123456789") != strlen(a->adj_str) ||
	    hk_parse_size(a->adj_str, &a->amount) < 0 || a->amount == 0)
		return plan_error(ctl, a->adj_str, "invalid number of pages to demote (1 or more)");
	if (!at)
		return 0;
	rc = hk_nodelist_parse(at + 1, &a->nodes, &a->n_nodes);
	if (rc < 0 || a->n_nodes == 0)
		return plan_error(ctl, at + 1, "invalid node list");
	return 0;
}

int ha_plan_vmemmap(struct hugeadm_ctl *ctl, const char *arg)
{
	struct ha_action *a = ha_new_action(ctl, HA_VMEMMAP, arg);

	if (strcmp(arg, "on") == 0)
		a->u = 1;
	else if (strcmp(arg, "off") != 0)
		return plan_error(ctl, arg, "invalid value for --vmemmap-optimize (on or off)");
	return 0;
}

/*
 * A --pool-demote's pages, as libhugekit's executor read them back (what the
 * pool or its nodes lost): said, 2.23-style. 0, 1 when fewer than asked, or
 * -1 (said) when the pool's demote size cannot be read.
 */
int ha_demote_said(struct hugeadm_ctl *ctl, const struct ha_action *a, uint64_t done)
{
	uint64_t asked = a->amount * (a->nodes ? a->n_nodes : 1), to, each;
	struct hk_pool *pool = NULL;
	char sz[32], tsz[32];
	int rc = hk_pool_read(ctl->ctx, a->size, &pool);

	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "%s: cannot read the pool back: %s", a->arg, strerror(-rc));
		return -1;
	}
	to = hk_pool_get(pool, HK_POOL_DEMOTE_SIZE);
	hk_pool_unref(pool);
	each = to ? a->size / to : 0;
	hk_format_size(sz, sizeof(sz), a->size);
	hk_format_size(tsz, sizeof(tsz), to);
	if (done < asked) {
		ha_msg(ctl, HA_WARNING,
		       "%s: demoted %" PRIu64 " of %" PRIu64 " %s pages into %" PRIu64
		       " %s pages: the kernel demotes only free pages that no mapping has reserved",
		       a->arg, done, asked, sz, done * each, tsz);
		return 1;
	}
	if (!ctl->json)
		printf("Demoted %" PRIu64 " %s page%s into %" PRIu64 " %s pages\n", done, sz,
		       done == 1 ? "" : "s", done * each, tsz);
	return 0;
}

int ha_hugetlb_cma(struct hugeadm_ctl *ctl, uint64_t *ret)
{
	int rc = hk_hugetlb_cma(ctl->ctx, ret);

	return rc < 0 ? -ENOENT : 0;
}

/*
 * The bytes of struct pages HVO gives back for each huge page of size: all
 * of its vmemmap but one base page (Documentation/mm/vmemmap_dedup.rst; with
 * 4 KiB pages 7 pages per 2 MiB page, 4095 per 1 GiB page).
 */
static uint64_t hvo_saving(uint64_t size, uint64_t base)
{
	uint64_t vmemmap = size / base * STRUCT_PAGE_BYTES;

	return vmemmap > base ? (vmemmap / base - 1) * base : 0;
}

static const char hvo_cost[] =
	"pages move between the pool and the system about 2x slower, and freeing pages "
	"back to the system can fail while memory is short (retry later)";

void ha_explain_kernel(struct hugeadm_ctl *ctl, struct hk_pool *const *pools, size_t n)
{
	bool header = false;
	uint64_t v, base = 4096;
	char sz[32], to[32], saved[32];
	size_t shown = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t size = hk_pool_get(pools[i], HK_POOL_SIZE),
			 dsz = hk_pool_get(pools[i], HK_POOL_DEMOTE_SIZE);

		if (!dsz)
			continue;
		if (!header)
			printf("\nDemote (free pages split into smaller huge pages: --pool-demote "
			       "SIZE:N):\n");
		header = true;
		hk_format_size(sz, sizeof(sz), size);
		hk_format_size(to, sizeof(to), dsz);
		printf("  %s pages demote to %s pages, %" PRIu64 " each; %" PRIu64 " free now\n",
		       sz, to, size / dsz, hk_pool_get(pools[i], HK_POOL_FREE));
	}

	printf("\nHugeTLB vmemmap optimization (vm.hugetlb_optimize_vmemmap): ");
	if (hk_sysctl_read(ctl->ctx, HK_SYSCTL_HUGETLB_OPTIMIZE_VMEMMAP, &v) < 0) {
		printf("not available\n");
		return;
	}
	printf("%s\n", v ? "on" : "off");
	hk_base_page_size(ctl->ctx, &base);
	printf("  Each huge page allocated %s gives back struct pages:\n  ",
	       v ? "since it was turned on" : "after it is turned on");
	for (size_t i = 0; i < n; i++) {
		uint64_t size = hk_pool_get(pools[i], HK_POOL_SIZE), s = hvo_saving(size, base);

		if (!s)
			continue;
		hk_format_size(sz, sizeof(sz), size);
		hk_format_size(saved, sizeof(saved), s);
		printf("%s%s per %s page", shown++ ? ", " : "", saved, sz);
	}
	printf("%s (pages already in the pool keep theirs).\n", shown ? "" : "none");
	printf("  Cost: pages move between the pool and the system about 2x slower, and\n"
	       "  freeing pages back to the system can fail while memory is short.\n");
}

void ha_json_kernel(struct hugeadm_ctl *ctl, struct hkt_json *j)
{
	uint64_t v, base = 4096, *sizes = NULL;
	char *param = NULL;
	size_t n = 0;
	bool have, set;

	hkt_json_open_object(j, "vmemmap_optimize");
	have = hk_sysctl_read(ctl->ctx, HK_SYSCTL_HUGETLB_OPTIMIZE_VMEMMAP, &v) == 0;
	hkt_json_bool(j, "available", have);
	if (have)
		hkt_json_bool(j, "enabled", v != 0);
	else
		hkt_json_null(j, "enabled");
	hk_base_page_size(ctl->ctx, &base);
	hkt_json_open_array(j, "saves");
	if (have && hk_page_sizes(ctl->ctx, &sizes, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			hkt_json_open_object(j, NULL);
			hkt_json_u64(j, "size", sizes[i]);
			hkt_json_u64(j, "bytes", hvo_saving(sizes[i], base));
			hkt_json_close_object(j);
		}
		free(sizes);
	}
	hkt_json_close_array(j);
	if (have)
		hkt_json_string(j, "cost", hvo_cost);
	else
		hkt_json_null(j, "cost");
	hkt_json_close_object(j);

	hkt_json_open_object(j, "hugetlb_cma");
	have = hk_kernel_param(ctl->ctx, "hugetlb_cma", &param) == 0;
	set = have && ha_hugetlb_cma(ctl, &v) == 0;
	hkt_json_bool(j, "set", set);
	if (have)
		hkt_json_string(j, "parameter", param);
	else
		hkt_json_null(j, "parameter");
	if (set)
		hkt_json_u64(j, "size", v);
	else
		hkt_json_null(j, "size");
	free(param);
	if (hk_meminfo_read(ctl->ctx, "CmaTotal", &v) == 0)
		hkt_json_u64(j, "cma_total", v * 1024);
	else
		hkt_json_null(j, "cma_total");
	if (hk_meminfo_read(ctl->ctx, "CmaFree", &v) == 0)
		hkt_json_u64(j, "cma_free", v * 1024);
	else
		hkt_json_null(j, "cma_free");
	hkt_json_close_object(j);
}
