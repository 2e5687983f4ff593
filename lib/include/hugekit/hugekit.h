/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libhugekit: read (and later change) the Linux huge page state of a machine.
 *
 * Every call returns 0 or a negative errno value. The library never prints
 * and never exits; details go to the log function set on the context.
 * A context is bound to a root directory: "/" for the running system, or a
 * dump of its /proc and /sys files (a "sysroot") for tests and post-mortems.
 */
#ifndef HUGEKIT_HUGEKIT_H
#define HUGEKIT_HUGEKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hugekit/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Context */

struct hk_ctx;

/* Open a context on sysroot (NULL or "/" for the running system; "" is -EINVAL). */
int hk_new(const char *sysroot, struct hk_ctx **ret_ctx);
struct hk_ctx *hk_ref(struct hk_ctx *ctx);
struct hk_ctx *hk_unref(struct hk_ctx *ctx);

/* The root the context reads, and whether it is the running system's. */
const char *hk_get_sysroot(const struct hk_ctx *ctx);
bool hk_is_live(const struct hk_ctx *ctx);

/* syslog(3) priorities: LOG_ERR 3, LOG_WARNING 4, LOG_INFO 6, LOG_DEBUG 7. */
typedef void (*hk_log_fn)(void *data, int priority, const char *msg);
/* Default: no output at all. The environment variable HK_DEBUG raises the priority to 7. */
void hk_set_log_fn(struct hk_ctx *ctx, hk_log_fn fn, void *data);
void hk_set_log_priority(struct hk_ctx *ctx, int priority);
int hk_get_log_priority(const struct hk_ctx *ctx);

const char *hk_get_library_version(void);

/* Parsers */

/* The libhugetlbfs size grammar: base 0 (hex, octal), one K/M/G suffix, rest ignored, > 0. */
int hk_parse_size_legacy(const char *s, uint64_t *ret);
/* Strict: decimal digits, optional K/M/G/T with optional B or iB (binary, any case). */
int hk_parse_size(const char *s, uint64_t *ret);
/* "0,2-3" -> {0,2,3}, sorted and unique; free(*ret_nodes) afterwards. */
int hk_nodelist_parse(const char *s, int **ret_nodes, size_t *ret_n);
/*
 * HK_1.6: the grammars the tools share, so that no tool parses on its own.
 * An amount of hugeadm's options (--pool-pages-min 2M:AMOUNT): base 0 as
 * libhugetlbfs read it, then optionally K, M or G (either case, optionally
 * B or iB); *ret_bytes (may be NULL): a suffix made it bytes, else a count.
 * 0 is allowed; nothing may follow. -EINVAL, -ERANGE.
 */
int hk_parse_amount(const char *s, uint64_t *ret, bool *ret_bytes);
/* A count: decimal digits only (one trailing newline allowed). -EINVAL, -ERANGE. */
int hk_parse_count(const char *s, uint64_t *ret);
/* A size with the largest binary unit that divides it: 2M, 1G, 64K, 512 (K to E). */
void hk_format_size(char *buf, size_t sz, uint64_t bytes);
/*
 * The verbosity from libhugetlbfs's environment, the same in every tool and
 * in the runtime, as 2.23 reads it: debug (HUGETLB_DEBUG) set, to any value,
 * gives 4 whatever verbose says; else verbose (HUGETLB_VERBOSE), when set, is
 * its leading decimal number (none is 0), held to 0..99; else def.
 */
int hk_verbosity_env(const char *verbose, const char *debug, int def);

/*
 * HK_1.6: the symlink-safe walk, for a root tool given a name a user can
 * touch. The name (absolute: from "/"; else from the working directory) is
 * taken one component at a time, each looked up without following anything
 * in the directory the previous one opened, so that a directory renamed or
 * replaced by a link meanwhile cannot send the walk elsewhere. Links are
 * followed only with HK_WALK_LINKS (at most 40), by their content read from
 * the link opened; with HK_WALK_ROOT_LINKS, as root, only links owned by
 * root. Without HK_WALK_LINKS a link anywhere is -ELOOP. "" is -ENOENT, "/"
 * -EISDIR ("a/" ends at a). 0 with dirfd and fd (O_PATH: the
 * directory the last name is in, and that name, not followed), path (that
 * directory as walked, "" for the root), base (the last name) and its
 * mode, uid, dev and ino; or -errno with problem, error (an errno), where
 * (the link, "PATH/NAME") and link_uid. The caller sets w->size;
 * hk_walk_fini() either way.
 */
#define HK_WALK_LINKS 1u
#define HK_WALK_ROOT_LINKS 2u
enum hk_walk_problem {
	HK_WALK_FAILED,		/* error: a lookup or an open failed, or a link not followed */
	HK_WALK_LINK_NOT_ROOTS, /* where, link_uid: as root, a link of another user */
	HK_WALK_READLINK,	/* where, error: the link could not be read */
};
struct hk_walk {
	size_t size;
	int dirfd, fd;
	char *path, *base;
	uint32_t mode, uid;
	uint64_t dev, ino;
	enum hk_walk_problem problem;
	int error;
	char *where;
	uint32_t link_uid;
};
int hk_walk(const char *name, unsigned flags, struct hk_walk *w);
void hk_walk_fini(struct hk_walk *w);
/*
 * HK_1.9: name opened with flags (and O_CLOEXEC), no symbolic link followed
 * anywhere on its path: openat2(2) with RESOLVE_NO_SYMLINKS, and where that
 * is missing (before Linux 5.6, or a seccomp filter that answers ENOSYS, as
 * systemd's RestrictSUIDSGID= does) hk_walk without links, the file walked
 * being what is opened (through /proc/self/fd; without /proc by its name,
 * and -ESTALE when it was replaced in between). A link anywhere: -ELOOP;
 * O_DIRECTORY or a trailing "/" on a non-directory: -ENOTDIR; O_CREAT,
 * O_TMPFILE: -EINVAL (nothing is made). The descriptor, or -errno.
 */
int hk_walk_open(const char *name, int flags);

/*
 * HK_1.6: privileges. Whether this process is privileged for a user other
 * than the one who ran it (setuid, setgid, file capabilities: AT_SECURE),
 * so that it must not act on that user's word; and giving up every
 * privilege for good (ids made the real ones, no capability left), checked
 * after the change: 0 or -errno.
 */
bool hk_privileged_for_other(void);
int hk_drop_privileges(void);

/*
 * GLIBC_TUNABLES that put malloc's heap on huge pages (glibc >= 2.35): existing
 * (may be NULL) plus glibc.malloc.hugetlb and glibc.malloc.mmap_threshold,
 * never overwriting one the user set. page_size: 0 transparent huge pages,
 * 1 the default huge page size, else that size. free(*ret) afterwards.
 */
int hk_heap_tunables(const char *existing, uint64_t page_size, char **ret);

/* Page sizes (bytes) */

/* The kernel's default huge page size; -EOPNOTSUPP when the kernel has no hugetlb. */
int hk_default_page_size(struct hk_ctx *ctx, uint64_t *ret);
/* All huge page sizes, the default first, then ascending; free(*ret_sizes) afterwards. */
int hk_page_sizes(struct hk_ctx *ctx, uint64_t **ret_sizes, size_t *ret_n);
/*
 * The same sizes, all ascending (1.9): the default is not looked up, so
 * /proc/meminfo is not read (the kernel takes some 12 us to write it, more
 * than the rest of `pagesize -a`'s work). free(*ret_sizes) afterwards.
 */
int hk_page_sizes_ascending(struct hk_ctx *ctx, uint64_t **ret_sizes, size_t *ret_n);
/* The base page size. */
int hk_base_page_size(struct hk_ctx *ctx, uint64_t *ret);

/* NUMA nodes that are online, ascending; an empty list on a kernel without NUMA sysfs. */
int hk_node_list(struct hk_ctx *ctx, int **ret_nodes, size_t *ret_n);

/* Pools: one per huge page size, read as one consistent snapshot */

enum hk_pool_field {
	HK_POOL_SIZE,	    /* page size in bytes */
	HK_POOL_NR,	    /* nr_hugepages: persistent plus surplus ("Current") */
	HK_POOL_FREE,	    /* free_hugepages */
	HK_POOL_RESV,	    /* resv_hugepages */
	HK_POOL_SURPLUS,    /* surplus_hugepages */
	HK_POOL_OVERCOMMIT, /* nr_overcommit_hugepages */
	HK_POOL_MINIMUM,    /* nr - surplus (libhugetlbfs "Minimum") */
	HK_POOL_MAXIMUM,    /* minimum + overcommit (libhugetlbfs "Maximum") */
	/*
	 * demote_size in bytes: the size a demoted page becomes (Linux 5.16); 0
	 * where the kernel has no demote files (older, or the smallest size). (HK_1.2)
	 */
	HK_POOL_DEMOTE_SIZE,
	/* hk_pool_file only: the write-only demote file. (HK_1.2) */
	HK_POOL_DEMOTE,
};

struct hk_pool;

int hk_pool_read(struct hk_ctx *ctx, uint64_t page_size, struct hk_pool **ret_pool);
void hk_pool_unref(struct hk_pool *pool);
uint64_t hk_pool_get(const struct hk_pool *pool, enum hk_pool_field field);
bool hk_pool_is_default(const struct hk_pool *pool);
/* A gigantic size is one the buddy allocator cannot provide (1 GiB on x86): no overcommit. */
bool hk_pool_is_gigantic(const struct hk_pool *pool);

/*
 * Per node: HK_POOL_NR, HK_POOL_FREE, HK_POOL_SURPLUS and (since HK_1.3)
 * HK_POOL_MINIMUM (nr - surplus) exist; others read 0.
 */
size_t hk_pool_node_count(const struct hk_pool *pool);
int hk_pool_node_id(const struct hk_pool *pool, size_t i);
uint64_t hk_pool_node_get(const struct hk_pool *pool, size_t i, enum hk_pool_field field);

/* hugetlbfs mounts, from /proc/self/mountinfo */

struct hk_mounts;

int hk_mounts_read(struct hk_ctx *ctx, struct hk_mounts **ret_mounts);
void hk_mounts_unref(struct hk_mounts *mounts);
size_t hk_mounts_count(const struct hk_mounts *mounts);
/* The mount point, escapes decoded. */
const char *hk_mount_target(const struct hk_mounts *mounts, size_t i);
/* The options as /proc/mounts shows them ("rw,relatime,pagesize=2M"). */
const char *hk_mount_options(const struct hk_mounts *mounts, size_t i);
/* The page size of the mount in bytes (its pagesize= option, else the default size). */
uint64_t hk_mount_page_size(const struct hk_mounts *mounts, size_t i);
/* One mount option's value ("size", "min_size", "uid", "mode"...); -ENOENT if absent. free() */
int hk_mount_option(const struct hk_mounts *mounts, size_t i, const char *name, char **ret_value);
/*
 * Mount hugetlbfs ("none") at target with options; the running system only (-EOPNOTSUPP).
 * Every mount these calls make is nosuid,nodev, whether options say so or not
 * (they may: "nosuid", "nodev" and "noexec" are taken as the mount's flags);
 * options with "suid" or "dev" are -EINVAL.
 */
int hk_mount_hugetlbfs(struct hk_ctx *ctx, const char *target, const char *options);
/*
 * Mount hugetlbfs ("none") with options on the directory that dirfd holds (any
 * descriptor of a directory, O_PATH too), by the descriptor and not by a path:
 * what the caller checked through dirfd is what gets the mount. Uses
 * fsopen/fsmount/move_mount, or on kernels without them mount(2) on
 * /proc/self/fd/N. The running system only (-EOPNOTSUPP).
 */
int hk_mount_hugetlbfs_fd(struct hk_ctx *ctx, int dirfd, const char *options);
/*
 * The same, and *ret_mnt_id is the new mount's id (statx STATX_MNT_ID, as in
 * mountinfo), or 0 where the kernel cannot say (the mount(2) fallback): the
 * caller can check that the mount sits where it meant it to.
 */
int hk_mount_hugetlbfs_fd_id(struct hk_ctx *ctx, int dirfd, const char *options,
			     uint64_t *ret_mnt_id);
/* The mount's id (mountinfo's first field). */
int hk_mount_id(const struct hk_mounts *mounts, size_t i);
int hk_umount(struct hk_ctx *ctx, const char *target);
/*
 * umount2(flags) through /proc/self/fd/N, not by a path: the mount on the
 * directory fd holds (the directory it covers), or with name, the one on name
 * in that directory, a symlink there not followed. An open descriptor of the
 * mount's own root keeps it busy (-EBUSY without MNT_DETACH).
 */
int hk_umount_fd(struct hk_ctx *ctx, int fd, const char *name, int flags);
/*
 * Mount i of mounts taken down (HK_1.6), by its parent's descriptor and its
 * name, after its path was walked from "/" without following a symbolic link
 * and found to end on that very mount's root: a user who owns a level of the
 * path cannot send the unmount elsewhere by swapping a directory for a link.
 * 0; -EXDEV when the path does not lead to that mount (a link or a file
 * where a directory was, a level gone, or another mount there); -EINVAL for
 * "/" or a relative target; -EOPNOTSUPP off the running system; else the
 * walk's or the unmount's -errno.
 */
int hk_mount_unmount(struct hk_ctx *ctx, const struct hk_mounts *mounts, size_t i);

/*
 * Making a mount where users may own directories on the way (HK_1.6). The
 * path is walked from "/" one directory at a time without following a
 * symbolic link, every level checked by its descriptor: the levels up to
 * base (NULL: the mount point's parent) are root's, made 0755, and may be
 * written by others only when they are root's and mode lets others write;
 * the levels below it, the mount point among them, are made with uid, gid
 * and mode, and may be owned by uid. Every refusal is logged with the path.
 * The caller sets size to sizeof(struct hk_mount_request).
 */
struct hk_mount_request {
	size_t size;
	const char *path; /* absolute: the mount point */
	const char *base; /* a leading part of path, or NULL */
	uint32_t uid, gid, mode;
	const char *options; /* hugetlbfs options (nosuid,nodev are always added) */
	unsigned flags;
};

/* The mount point must be an empty directory that is not a mount point already. */
#define HK_MOUNT_EMPTY 0x1u
/*
 * A mount item's (hk_plan_add_mount, HK_1.6), not hk_mount_make's (which
 * refuses it): libhugetlbfs's rule for its --create-*-mounts. A mount at
 * the path already is the one asked for (not compared: the caller checked it
 * when it planned), the mount point need not be empty, and the directories
 * made are not taken away by a put-back.
 */
#define HK_MOUNT_KEEP 0x2u

/*
 * The request's directory, walked and checked (made where missing with
 * create): its descriptor, or -errno (logged), or -ENOENT without create
 * where a level is missing (not logged).
 */
int hk_mount_dir_open(struct hk_ctx *ctx, const struct hk_mount_request *req, bool create);
/* The id of the mount whose root fd is (as mountinfo numbers it), 0 when it is not a mount's root. */
uint64_t hk_mount_root_id(int fd);
/* Mount i has both nosuid and nodev in the mount table. */
bool hk_mount_is_restricted(const struct hk_mounts *mounts, size_t i);
/*
 * Walk (create), mount hugetlbfs on the descriptor, then walk again: the
 * mount is at the path and nosuid,nodev in the mount table, or it is taken
 * down (through the directory it covers) and the result is -errno. 0 and
 * *ret_fd the mount point's descriptor under the new mount (hk_umount_fd
 * takes it down again; close it). The running system only (-EOPNOTSUPP).
 */
int hk_mount_make(struct hk_ctx *ctx, const struct hk_mount_request *req, int *ret_fd);

/* Kernel settings */

enum hk_sysctl {
	HK_SYSCTL_NR_HUGEPAGES,		      /* vm.nr_hugepages */
	HK_SYSCTL_NR_HUGEPAGES_MEMPOLICY,     /* vm.nr_hugepages_mempolicy */
	HK_SYSCTL_NR_OVERCOMMIT_HUGEPAGES,    /* vm.nr_overcommit_hugepages */
	HK_SYSCTL_HUGETLB_SHM_GROUP,	      /* vm.hugetlb_shm_group */
	HK_SYSCTL_MIN_FREE_KBYTES,	      /* vm.min_free_kbytes */
	HK_SYSCTL_SHMMAX,		      /* kernel.shmmax */
	HK_SYSCTL_SHMALL,		      /* kernel.shmall */
	HK_SYSCTL_HUGEPAGES_TREAT_AS_MOVABLE, /* vm.hugepages_treat_as_movable (removed in 5.x) */
	HK_SYSCTL_COMPACT_MEMORY,	      /* vm.compact_memory (write-only trigger) */
	/* vm.hugetlb_optimize_vmemmap (HVO, Linux 5.19; -ENOENT without it). (HK_1.2) */
	HK_SYSCTL_HUGETLB_OPTIMIZE_VMEMMAP,
	HK_SYSCTL_COMPACTION_PROACTIVENESS, /* vm.compaction_proactiveness (Linux 5.9; HK_1.6) */
};

/*
 * What a plan's items set, in the order every plan runs them (HK_1.6): one
 * order for hugeadm's options and for a configuration (hk_plan_from_config),
 * from the enum's values. THP and HVO come before the pools (HVO acts on the
 * pages allocated after it), the sysctls that follow the pools after them
 * (a recommended shmmax is counted from them), mounts and cgroups last.
 */
enum hk_setting {
	HK_SETTING_SHARED_TEXT,	 /* --clean-shared-text: files of shared text removed, first */
	HK_SETTING_UNMOUNT,	 /* --unmount-all: hugetlbfs mounts taken down, before anything */
	HK_SETTING_ZONE_MOVABLE, /* vm.hugepages_treat_as_movable: where the pools grow */
	HK_SETTING_THP,
	HK_SETTING_HVO, /* vm.hugetlb_optimize_vmemmap */
	/* Pools; a configuration's [pool] demote_size and demote = yes with their pool. */
	HK_SETTING_POOL,
	HK_SETTING_DEMOTE_SIZE, /* --pool-demote-size */
	HK_SETTING_DEMOTE,	/* --pool-demote: pages of the pools as they are left */
	HK_SETTING_MIN_FREE_KBYTES,
	HK_SETTING_SHMMAX,
	HK_SETTING_SHM_GROUP, /* vm.hugetlb_shm_group */
	HK_SETTING_SYSCTL,    /* every other sysctl */
	HK_SETTING_MOUNT,
	HK_SETTING_CGROUP,
};

int hk_sysctl_read(struct hk_ctx *ctx, enum hk_sysctl which, uint64_t *ret);
/* The file behind a setting, for messages, such as /proc/sys/vm/min_free_kbytes. */
const char *hk_sysctl_path(enum hk_sysctl which);

/* A /proc/meminfo field as the kernel writes it (kB for sizes, a count for HugePages_*). */
int hk_meminfo_read(struct hk_ctx *ctx, const char *key, uint64_t *ret);
/* Number of memory zones ("Node N, zone ..." lines of /proc/zoneinfo, empty zones too). */
int hk_zone_count(struct hk_ctx *ctx, unsigned *ret);

/*
 * A transparent huge page knob ("enabled", "defrag", "shmem_enabled") of
 * /sys/kernel/mm/transparent_hugepage: the selected value ("madvise").
 * -ENOENT on a kernel without THP. free(*ret_value) afterwards.
 */
int hk_thp_read(struct hk_ctx *ctx, const char *knob, char **ret_value);
/* The knob's whole first line ("always [madvise] never"). free(*ret_line) afterwards. */
int hk_thp_modes(struct hk_ctx *ctx, const char *knob, char **ret_line);
/*
 * Whether value can be written to the knob (HK_1.6): 0 when the knob lists
 * modes ("always [madvise] never") and value is one of them, or lists none
 * (a number: khugepaged's); 1 when value is not one of its modes (*ret_line,
 * may be NULL, is then the knob's line: free() it); -ENOENT when the kernel
 * has no such knob; else -errno (the line not read, or not a knob's).
 */
int hk_thp_check(struct hk_ctx *ctx, const char *knob, const char *value, char **ret_line);

/* What the kernel could give now (since HK_1.1) */

/*
 * Pages of page_size the buddy allocator holds free in one piece now, on one
 * node or on all (HK_NODE_ALL), from /proc/buddyinfo: over the zones the
 * kernel allocates hugetlb pages from (DMA32, Normal, HighMem, Movable; not
 * DMA, which the lowmem reserve keeps for its own users), the free blocks of
 * every order at or above the page's, each counted as the pages it holds.
 * An estimate of what a grow gets without compaction: the watermarks keep
 * some of it back, compaction can find more. A node without memory has 0.
 * -ERANGE for a gigantic size (above the largest buddy order), -ENOENT
 * without /proc/buddyinfo, -EINVAL for a malformed one (logged).
 */
int hk_buddy_obtainable(struct hk_ctx *ctx, uint64_t page_size, int node, uint64_t *ret);
/* A /proc/vmstat counter ("thp_fault_alloc", "compact_stall"); -ENOENT when the kernel has none. */
int hk_vmstat_read(struct hk_ctx *ctx, const char *name, uint64_t *ret);
/* The mTHP sizes (bytes, ascending) of /sys/kernel/mm/transparent_hugepage; free(*ret_sizes). */
int hk_thp_sizes(struct hk_ctx *ctx, uint64_t **ret_sizes, size_t *ret_n);
/* One counter of an mTHP size ("anon_fault_alloc", "split"): hugepages-<kB>kB/stats/<name>. */
int hk_thp_stat_read(struct hk_ctx *ctx, uint64_t size, const char *name, uint64_t *ret);

/* Changing the machine */

/*
 * Dry run: from now on no file is written. Each write that would be done is
 * handed to fn with the absolute path of the file and the value, after the
 * same checks as a real write (a missing file is still -ENOENT). fn NULL
 * writes for real again.
 */
typedef void (*hk_dry_run_fn)(void *data, const char *path, const char *value);
void hk_set_dry_run(struct hk_ctx *ctx, hk_dry_run_fn fn, void *data);
bool hk_is_dry_run(const struct hk_ctx *ctx);

/* A node number, or all of them. */
#define HK_NODE_ALL (-1)

/* hk_pool_set_nr: write nr_hugepages_mempolicy (the writer's NUMA policy spreads the pages). */
#define HK_POOL_SET_MEMPOLICY (1u << 0)
/*
 * A plan item's flag (HK_1.6), HK_POOL_DEMOTE: number is the count of free
 * pages to demote (--pool-demote SIZE:N), not the minimum to demote down to.
 * Applied by writing it to the demote file; never "already so". Where a
 * kernel answers it is read back as the pages the pool (or the node) lost
 * (the kernel demotes only what it finds free): hk_plan_item_apply()'s
 * *ret_reached is that count, -EAGAIN when it is fewer than number.
 */
#define HK_POOL_DEMOTE_PAGES (1u << 1)

/*
 * Set the persistent size of a pool (node HK_NODE_ALL) or of one node's share
 * of it. The default size is written through /proc/sys/vm, the others through
 * /sys, as libhugetlbfs did. The kernel grows a pool as far as it can and
 * still succeeds: read the pool back to learn what was reached.
 */
int hk_pool_set_nr(struct hk_ctx *ctx, uint64_t page_size, int node, uint64_t nr, unsigned flags);
/* nr_overcommit_hugepages (global only). Gigantic sizes refuse it: -EINVAL. */
int hk_pool_set_overcommit(struct hk_ctx *ctx, uint64_t page_size, uint64_t overcommit);
/*
 * The file that hk_pool_set_nr (field HK_POOL_NR) or hk_pool_set_overcommit
 * (HK_POOL_OVERCOMMIT) writes, absolute, for messages. free(*ret_path).
 * Since HK_1.2 also HK_POOL_DEMOTE_SIZE (global) and HK_POOL_DEMOTE (global
 * or a node): -ENOENT where the kernel has no such file.
 */
int hk_pool_file(struct hk_ctx *ctx, uint64_t page_size, int node, enum hk_pool_field field,
		 unsigned flags, char **ret_path);

/* Ask the kernel to compact memory, everywhere (HK_NODE_ALL) or on one node. */
int hk_compact_memory(struct hk_ctx *ctx, int node);

int hk_sysctl_write(struct hk_ctx *ctx, enum hk_sysctl which, uint64_t value);

/*
 * Write a THP knob: "enabled", "defrag", "khugepaged/pages_to_scan",
 * "hugepages-64kB/enabled", ... (relative to /sys/kernel/mm/transparent_hugepage).
 */
int hk_thp_write(struct hk_ctx *ctx, const char *knob, const char *value);

/*
 * Serialize changes: take the machine-wide lock (/run/hugekit/hugekit.lock,
 * root's only: -EPERM when the directory or the file is not root's, is
 * writable by others or is a symbolic link; on a sysroot tree, the tree's
 * directory), waiting up to timeout_ms; -ETIMEDOUT when another holder keeps
 * it. hk_unlock(*ret_fd) releases it (so does exiting).
 */
int hk_lock(struct hk_ctx *ctx, int timeout_ms, int *ret_fd);
void hk_unlock(int fd);

/* Recommendations of libhugetlbfs, kept for compatibility. */
/* 11 x default huge page size in kB x number of zones. */
int hk_recommended_min_free_kbytes(struct hk_ctx *ctx, uint64_t *ret);
/* The sum over pools of Maximum x page size, saturated at UINT64_MAX; 0 without pools. */
int hk_recommended_shmmax(struct hk_ctx *ctx, uint64_t *ret);

/*
 * For the measuring tools (HK_1.6). The kB of huge pages smaps shows for
 * this process's mappings that overlap [start, start + len): AnonHugePages
 * and Hugetlb. A process's threads (its task directory; -ESRCH when it is
 * gone): free(*ret_tids) afterwards. The L2 cache line of CPU 0, in bytes.
 * MADV_COLLAPSE on a range (Linux 6.1; the constant's fallback is the
 * library's): 0 or -errno.
 */
int hk_range_huge_kb(struct hk_ctx *ctx, const void *start, size_t len, uint64_t *ret_kb);
int hk_process_threads(struct hk_ctx *ctx, int pid, int **ret_tids, size_t *ret_n);
int hk_cache_line_size(struct hk_ctx *ctx, uint64_t *ret);
int hk_collapse(void *addr, size_t len);

/* Usage (HK_1.1): who holds huge pages, and how many a process would need */

enum hk_usage_kind {
	HK_USAGE_PRIVATE, /* MAP_PRIVATE anonymous hugetlb (MAP_HUGETLB) */
	HK_USAGE_SHARED,  /* MAP_SHARED anonymous hugetlb, memfd */
	HK_USAGE_SYSV,	  /* a SysV SHM_HUGETLB segment */
	HK_USAGE_FILE,	  /* a file on a hugetlbfs mount */
};

/* One row per process, page size and kind. Fields may be added at the end only. */
struct hk_usage_process {
	int pid;
	uint32_t uid;
	const char *comm;
	uint64_t page_size;
	enum hk_usage_kind kind;
	uint64_t pages;	    /* the huge pages its mappings of this kind hold */
	uint64_t accounted; /* of those, the ones counted here and nowhere else */
	int node;	    /* the node of all its huge pages; -1 unknown, -2 several */
};

/* A SysV segment on huge pages. */
struct hk_usage_shm {
	int id;
	int32_t key;
	uint32_t uid;
	uint64_t size; /* bytes, as asked at shmget */
	uint64_t page_size;
	uint64_t pages;
	uint64_t nattch; /* 0: detached, nothing maps it */
	/*
	 * No readable process maps it (detached, or its processes unreadable): the
	 * default size, from its rss; possibly huge. One a readable process maps on
	 * base pages is no huge segment and not listed.
	 */
	bool inferred;
	bool accounted; /* its pages are in the total's accounted (an inferred one may not be) */
};

/* A file on a hugetlbfs mount that holds pages. */
struct hk_usage_file {
	const char *path;
	uint32_t uid;
	uint64_t page_size;
	uint64_t pages;
	bool mapped; /* a process maps it */
};

/* A hugetlb cgroup's counters (v2 or v1), in bytes; UINT64_MAX is "max". */
struct hk_usage_cgroup {
	const char *path; /* "/db.slice", below the cgroup root */
	uint64_t page_size;
	uint64_t current, max, rsvd_current, rsvd_max;
	/*
	 * hugetlb.<size>.events "max": charges its limits refused, below it too
	 * (hierarchical); UINT64_MAX where the file is missing. (HK_1.2)
	 */
	uint64_t events_max;
	/*
	 * The hierarchy read: 2, or 1 where cgroup v1 holds hugetlb (path below
	 * its hierarchy; usage_in_bytes, limit_in_bytes; events_max is failcnt
	 * plus rsvd.failcnt). (HK_1.3)
	 */
	int version;
};

/* Per page size: the pool's counters against the sum of the lists. */
struct hk_usage_total {
	uint64_t page_size;
	uint64_t used;	    /* nr_hugepages - free_hugepages */
	uint64_t accounted; /* each page once: via its file, its segment or its process */
	uint64_t reserved;  /* resv_hugepages: reserved, not yet faulted (not in used) */
	uint64_t surplus;
	int64_t difference; /* used - accounted */
	/*
	 * Pages of inferred segments (hk_usage_shm.inferred) left out of accounted:
	 * the pool's used pages do not show them to be huge. 0 when they are counted.
	 */
	uint64_t inferred;
};

/* What could not be read (another user's process, a directory without access). */
enum hk_usage_unread {
	HK_USAGE_UNREAD_PROCESSES,
	HK_USAGE_UNREAD_DIRS,
	HK_USAGE_UNREAD_CGROUPS,
};

struct hk_usage;

/*
 * Walk the processes (smaps), /proc/sysvipc/shm, the files of every hugetlbfs
 * mount (no symbolic link followed, no FIFO opened) and the hugetlb cgroups.
 * A process that exits during the walk is left out; one that cannot be read
 * is counted (hk_usage_unread_count). Free with hk_usage_unref().
 */
int hk_usage_read(struct hk_ctx *ctx, struct hk_usage **ret_usage);
void hk_usage_unref(struct hk_usage *usage);
size_t hk_usage_processes(const struct hk_usage *usage, const struct hk_usage_process **ret);
size_t hk_usage_shm(const struct hk_usage *usage, const struct hk_usage_shm **ret);
size_t hk_usage_files(const struct hk_usage *usage, const struct hk_usage_file **ret);
size_t hk_usage_cgroups(const struct hk_usage *usage, const struct hk_usage_cgroup **ret);
size_t hk_usage_totals(const struct hk_usage *usage, const struct hk_usage_total **ret);
unsigned hk_usage_unread_count(const struct hk_usage *usage, enum hk_usage_unread what);

/*
 * The huge pages of one size that a process's memory would take, from its
 * smaps: each mapping huge pages could back, at its size (touched or not).
 * Changed in HK_1.4: shared_pages added, and each mapping counts at its size
 * (HK_1.1 to 1.3 counted resident private anonymous memory and left shared
 * anonymous memory out). Programs built against 1.1 to 1.3 get the same
 * figures in the struct they know (shared memory in pages only).
 */
struct hk_pages_needed {
	uint64_t page_size;
	uint64_t pages;		/* all below; at most their sum (see hk_pages_needed) */
	uint64_t heap_pages;	/* [heap] */
	uint64_t anon_pages;	/* other private anonymous, writable (not the stacks) */
	uint64_t sysv_pages;	/* SysV segments on base pages */
	uint64_t hugetlb_pages; /* mappings already on huge pages */
	uint64_t shared_pages;	/* shared anonymous: MAP_SHARED|MAP_ANONYMOUS (HK_1.4) */
};

/*
 * One entry per huge page size of the machine, ascending. A mapping counts at
 * its size (end - start), in one of the five counts; one without access, a
 * MAP_NORESERVE one, the stacks (the main one, and those marked "nh" in
 * VmFlags: MAP_STACK since Linux 6.7, or MADV_NOHUGEPAGE) and file mappings
 * count nowhere; a MAP_NORESERVE hugetlb mapping counts what it holds. Each
 * mapping of a page or more is rounded up to whole pages of that size, the
 * smaller ones are summed and the sum rounded up (once for pages, once in each
 * of the five counts, so pages may be less than their sum). -ESRCH: no such
 * process. free(*ret) afterwards.
 */
int hk_pages_needed(struct hk_ctx *ctx, int pid, struct hk_pages_needed **ret, size_t *ret_n);

/* Newer pool features and boot parameters (HK_1.2) */

/*
 * Write demote_size (Linux 5.16): the smaller huge page size that demoted
 * pages of page_size become. -ENOENT where the kernel has no demote files for
 * page_size; the kernel refuses (-EINVAL) a size that is not a smaller huge
 * page size. The file is global (the per-node ones are the same setting).
 */
int hk_pool_set_demote_size(struct hk_ctx *ctx, uint64_t page_size, uint64_t demote_size);
/*
 * Demote nr free pages of page_size into pages of its demote size, from any
 * node (HK_NODE_ALL) or from one. The kernel demotes as many as it can (free
 * pages that are not reserved) and still succeeds: read the pool back (its
 * HK_POOL_NR) to learn how many it did.
 */
int hk_pool_demote(struct hk_ctx *ctx, uint64_t page_size, int node, uint64_t nr);

/*
 * A kernel boot parameter from /proc/cmdline ("hugetlb_cma"): its value after
 * '=' ("" for a bare flag), the last one when given twice; -ENOENT when it is
 * not there. Parameters after " -- " are the init's, not the kernel's. free().
 */
int hk_kernel_param(struct hk_ctx *ctx, const char *name, char **ret_value);
/*
 * The bytes hugetlb_cma= set aside for gigantic pages: its size, or the sum of
 * its per-node "node:size" list. -ENOENT when it is not set, -EINVAL when its
 * value cannot be read.
 */
int hk_hugetlb_cma(struct hk_ctx *ctx, uint64_t *ret_bytes);

/* Configuration (HK_1.2): /etc/hugekit/hugekit.conf and /etc/hugekit/conf.d/ */

/*
 * The file hk_config_load reads when given no path (under the context's
 * sysroot), and the directory whose *.conf files follow it, in name order.
 */
#define HK_CONFIG_FILE "/etc/hugekit/hugekit.conf"
#define HK_CONFIG_DIR "/etc/hugekit/conf.d"

/*
 * One setting of a configuration: [section name] key = value, with where it
 * was read. Sections: "pool" (name: a page size as written, "2M"), "mount"
 * (name: the mount point), "thp", "sysctl" (no name: NULL), "cgroup" (name:
 * the cgroup's path below the cgroup root, "db.slice"). The value has its
 * comment and surrounding blanks removed. Fields may be added at the end only.
 */
struct hk_config_entry {
	const char *file; /* as opened: the path given, or under the sysroot */
	unsigned line;	  /* 1-based */
	const char *section;
	const char *name;
	const char *key;
	const char *value;
};

struct hk_config;

/*
 * Called once per problem found in a configuration, with the file and the
 * line it is on (line 0: the file as a whole, e.g. it cannot be read) and a
 * message that names the bad part ("unknown key 'minmum' in [pool 2M]").
 */
typedef void (*hk_config_error_fn)(void *data, const char *file, unsigned line, const char *msg);

/*
 * Read a configuration. path NULL: HK_CONFIG_FILE and then the *.conf files of
 * HK_CONFIG_DIR in name order (either may be missing), under the context's
 * sysroot; a path: that file alone (not under the sysroot). INI syntax (libinih),
 * '#' and ';' comments, also after a value. Checked without looking at the
 * machine: known sections and keys, values of the right form, no key twice
 * in one section of one file, no key set to two different values by two
 * files, a pool's maximum not below its minimum. Every problem is reported to
 * fn (which may be NULL) and counted; when there is any, nothing is returned
 * and the result is -EINVAL. A missing file given by path is -ENOENT (also
 * reported). On success free with hk_config_unref().
 */
int hk_config_load(struct hk_ctx *ctx, const char *path, hk_config_error_fn fn, void *data,
		   struct hk_config **ret_config);
/* The same from a string (for tests and for a config given on stdin); name is used in messages. */
int hk_config_parse_string(struct hk_ctx *ctx, const char *name, const char *text,
			   hk_config_error_fn fn, void *data, struct hk_config **ret_config);
void hk_config_unref(struct hk_config *config);
/*
 * The settings, in the order they take effect: files in reading order, lines
 * in file order; a key that several files set to the same value appears once
 * (its first place). The array lives as long as the config.
 */
size_t hk_config_entries(const struct hk_config *config, const struct hk_config_entry **ret);
/* The files read, in order (the pointers live as long as the config). */
size_t hk_config_files(const struct hk_config *config, const char *const **ret);

/* Plans (HK_1.2): the resolved writes that make the machine match a configuration */

enum hk_plan_kind {
	HK_PLAN_WRITE,	    /* write value to path (a file of /proc/sys or /sys), read it back */
	HK_PLAN_CONTROLLER, /* path is a cgroup.subtree_control that must list value ("hugetlb") */
	HK_PLAN_MKDIR,	    /* a cgroup directory at path */
	HK_PLAN_MOUNT, /* hugetlbfs on path (made as needed), options in value, owner and mode */
	/*
	 * The hugetlbfs mount on path taken down (HK_1.6, hk_plan_add_unmount;
	 * value: its options when planned); not put back.
	 */
	HK_PLAN_UNMOUNT,
	/*
	 * A file of shared text removed (HK_1.6, hk_plan_add_shared_text; path:
	 * the file, value: the huge pages it held when planned); not put back.
	 */
	HK_PLAN_REMOVE,
};

/*
 * One resolved step. Items come in the order they are applied (since HK_1.5
 * the order of hugeadm's options): THP knobs,
 * vm.hugetlb_optimize_vmemmap, pools (per size: the minimum, whole or per
 * node, then the overcommit that gives the maximum), the other sysctls, mounts, cgroups (each parent's
 * controller, the directory, the limits). Since HK_1.6 a hk_plan_add_* call
 * builds every kind (pool, demote, THP, sysctl, mount): hugekit's own tools
 * build none.
 */
struct hk_plan_item {
	/*
	 * sizeof(struct hk_plan_item) of the header the item was built with
	 * (HK_1.6; tests/abi's baseline holds the layout). Fields are only ever
	 * added at the end. An item a caller builds (for hk_plan_add(),
	 * hk_plan_item_check(), hk_plan_item_apply(), hk_run_apply(),
	 * hk_run_record(), hk_run_items()) sets it: the library reads no
	 * further than size and takes the fields beyond as 0; -EINVAL when it
	 * is less than HK_PLAN_ITEM_SIZE_MIN, -E2BIG when bytes the library does
	 * not know are not 0 or size is more than 4096. The library's items
	 * carry the library's size: read them through hk_plan_item_at()
	 * (hk_plan_items()' array can be indexed only where items->size ==
	 * sizeof(struct hk_plan_item)).
	 */
	size_t size;
	enum hk_plan_kind kind;
	/*
	 * What it is about, stable and one word per part, for people and for
	 * scripts: "thp enabled", "sysctl vm.min_free_kbytes", "pool 2M minimum",
	 * "pool 2M node 1 minimum", "pool 2M overcommit" (named for what it writes:
	 * the overcommit that gives [pool] maximum; "maximum" until HK_1.5),
	 * "mount /dev/hugepages-2M",
	 * "cgroup db.slice", "cgroup db.slice hugetlb.2MB.max".
	 */
	const char *item;
	const char *path;  /* absolute, as on the running system (no sysroot prefix) */
	const char *value; /* what is written, as written; a mount's options */
	const char *why;   /* the setting it comes from: "[pool 2M] minimum = 512" */
	const char *file;  /* where that setting is; NULL for an implied step */
	unsigned line;
	uint64_t page_size; /* pools, mounts and cgroup limits; else 0 */
	int node;	    /* pools: a node, or HK_NODE_ALL; else HK_NODE_ALL */
	/*
	 * Pools: HK_POOL_MINIMUM (value: the persistent pages; checked as nr -
	 * surplus, written to nr_hugepages) or HK_POOL_OVERCOMMIT (value:
	 * maximum - minimum), HK_POOL_DEMOTE_SIZE (number: the bytes) or
	 * HK_POOL_DEMOTE ("pool 1G demote", [pool] demote = yes; value and
	 * number: the minimum to demote down to: applying it demotes the
	 * pages above it, it holds when the minimum is at most that; HK_1.3);
	 * else HK_POOL_SIZE (unused).
	 */
	enum hk_pool_field field;
	uint64_t number;   /* pools: the pages of value; a mount's or a limit's bytes; else 0 */
	uint32_t uid, gid; /* mounts: the owner asked (the caller's when not asked) */
	uint32_t mode;	   /* mounts: the mode of the mount's root */
	/*
	 * Pools: HK_POOL_SET_MEMPOLICY (path: nr_hugepages_mempolicy) or 0 (HK_1.3).
	 * Mounts: HK_MOUNT_EMPTY, HK_MOUNT_KEEP (HK_1.6); 0 is HK_MOUNT_EMPTY.
	 */
	unsigned flags;
};

struct hk_plan;

/*
 * Resolve a configuration against this machine: page sizes and nodes exist,
 * THP knobs and sysctls exist and take the value, users and groups exist,
 * "recommended" values computed. Every problem is reported to fn with the
 * file and line of its setting; when there is any the result is -EINVAL and
 * no plan. Nothing is written. Free with hk_plan_unref().
 */
int hk_plan_from_config(struct hk_ctx *ctx, const struct hk_config *config, hk_config_error_fn fn,
			void *data, struct hk_plan **ret_plan);
void hk_plan_unref(struct hk_plan *plan);
/* The smallest hk_plan_item.size the library takes: HK_1.6's, the first with the field. */
#define HK_PLAN_ITEM_SIZE_MIN (offsetof(struct hk_plan_item, flags) + sizeof(unsigned))
/*
 * How many items; *ret (may be NULL): the array of them, each the library's
 * size (see hk_plan_item.size). It moves on each hk_plan_add().
 */
size_t hk_plan_items(const struct hk_plan *plan, const struct hk_plan_item **ret);
/* Item index of the plan, whatever the caller's sizeof (HK_1.6); NULL past the end. */
const struct hk_plan_item *hk_plan_item_at(const struct hk_plan *plan, size_t index);

/*
 * Does the machine match the item now? 1 yes, 0 no, or -errno when it cannot
 * be read. *ret_current (may be NULL) is what is there, in the item's terms:
 * "480" for a pool's minimum, "always" for a knob, a mount's options, NULL
 * when there is nothing (no mount, no directory); free() it.
 */
int hk_plan_item_check(struct hk_ctx *ctx, const struct hk_plan_item *item, char **ret_current);
/*
 * Make the item true and read it back: 0 when it holds, -EAGAIN when the
 * kernel took the write but reached less (a pool that came up short:
 * *ret_reached says what it reached), or -errno of the write. Honours the
 * context's dry run. HK_PLAN_MOUNT is the caller's (its directories must be
 * made through descriptors): -EOPNOTSUPP. An unmount or a removed file is
 * not read back: done when the call succeeds (a mount stacked below, a file
 * of the name made again since, is another one).
 */
int hk_plan_item_apply(struct hk_ctx *ctx, const struct hk_plan_item *item, char **ret_reached);

/*
 * Building a plan item by item (HK_1.3): how a program's own options become a
 * plan that hk_plan_item_check() and hk_plan_item_apply() run, with the same
 * item names, files and values as hk_plan_from_config() gives. Items are not
 * reordered: they run in the order added. Each add returns the new item's
 * index (>= 0) or -errno; the array hk_plan_items() gives moves on each add.
 * why (may be NULL: "implied") says what asked for the item, such as the
 * option as given.
 */
int hk_plan_new(struct hk_plan **ret_plan);
/* A copy of item (its strings copied); item->item and item->path are required. */
int hk_plan_add(struct hk_plan *plan, const struct hk_plan_item *item);
/*
 * A pool write: field HK_POOL_MINIMUM (number: persistent pages, of the pool
 * or of one node; flags HK_POOL_SET_MEMPOLICY for the whole pool only),
 * HK_POOL_OVERCOMMIT (number: the overcommit, whole pool) or
 * HK_POOL_DEMOTE_SIZE (number: bytes). The file is the one hk_pool_file() names.
 */
int hk_plan_add_pool(struct hk_ctx *ctx, struct hk_plan *plan, uint64_t page_size, int node,
		     enum hk_pool_field field, uint64_t number, unsigned flags, const char *why);
/* A THP knob ("enabled", "khugepaged/pages_to_scan", "hugepages-64kB/enabled"): "thp KNOB". */
int hk_plan_add_thp(struct hk_ctx *ctx, struct hk_plan *plan, const char *knob, const char *value,
		    const char *why);
/* A sysctl of /proc/sys: "sysctl vm.min_free_kbytes" (not HK_SYSCTL_COMPACT_MEMORY). */
/*
 * Demote pages free pages of the pool of page_size (node HK_NODE_ALL) or of
 * one node into pages of its demote size (HK_1.6): "pool 1G demote", "pool 1G
 * node 0 demote", flags HK_POOL_DEMOTE_PAGES. -ENOENT when the kernel has no
 * demote file there.
 */
int hk_plan_add_pool_demote(struct hk_ctx *ctx, struct hk_plan *plan, uint64_t page_size, int node,
			    uint64_t pages, const char *why);
int hk_plan_add_sysctl(struct hk_ctx *ctx, struct hk_plan *plan, enum hk_sysctl which,
		       uint64_t value, const char *why);
/*
 * A hugetlbfs mount as an item (HK_1.6), "mount PATH", as the executor
 * makes it through hk_mount_make: the request's path (absolute), options
 * (as mount(8) takes them), owner uid:gid and mode of its root (at most
 * 07777), base (kept by the plan) and flags (the item's flags: 0 is
 * HK_MOUNT_EMPTY, as a configuration's [mount]), of pages of page_size.
 * With it and the other hk_plan_add_* calls no caller builds a struct
 * hk_plan_item. The plan's index, or -errno.
 */
int hk_plan_add_mount(struct hk_plan *plan, const struct hk_mount_request *req, uint64_t page_size,
		      const char *why);
/*
 * The hugetlbfs mount at mount i's path taken down when the plan runs: the
 * one the table shows there then (on top), through hk_mount_unmount
 * (-EXDEV, told as SHORT, when the path does not lead to it). Mount ids are
 * reused at once, so the item names the path; a mount of another type put
 * there is left. The item's index, or -errno.
 */
int hk_plan_add_unmount(struct hk_plan *plan, const struct hk_mounts *mounts, size_t i,
			const char *why);

struct hk_shared_text;
/*
 * A file of shared text (hk_shared_text_walk's) removed when the plan runs:
 * looked up again by its name alone (nothing followed, owner and type
 * checked as the walk does) and removed by the directory's descriptor
 * (hk_shared_text_remove). A file gone since is done; one that cannot be
 * removed is told as SHORT with its error, and the other items still run.
 * The item's index, or -errno.
 */
int hk_plan_add_shared_text(struct hk_plan *plan, const struct hk_shared_text *file,
			    const char *why);

/*
 * Running a plan with put-back (HK_1.5): the executor's journal. Every item
 * written through a run keeps what was there before its first write (on the
 * running system the value in the item's terms, in a --sysroot tree the
 * file's bytes), so that hk_run_put_back() can make every file it wrote as it
 * was: when a later step fails, or when a pool comes up short and the caller
 * wants all or nothing. Demoted pages cannot be put back together: a demote
 * is not journaled.
 */
struct hk_run;

/*
 * Pools: a minimum that comes up short is retried (memory compacted, a
 * second's wait, written again) until it is reached, three rounds in a row
 * bring no page, or 30 seconds have passed.
 */
#define HK_RUN_HARD 0x1u
/*
 * hk_run_items (HK_1.6): write every item, also one that reads as planned
 * already (libhugetlbfs's options wrote every value they were given); a
 * mount item is compared all the same (a mount is never made twice).
 */
#define HK_RUN_ALWAYS 0x2u
/*
 * A whole pool's minimum goes to nr_hugepages_mempolicy: the pages come from
 * and go back to the nodes of the calling thread's NUMA policy (HK_1.6).
 */
#define HK_RUN_MEMPOLICY 0x4u
/*
 * hk_run_items (HK_1.6), libhugetlbfs's options: when a whole pool's minimum
 * comes up short, the overcommit that gives the pool the maximum its items
 * plan is written at once (not for a gigantic pool, which has none), and its
 * later overcommit items are held back. Without it they are held back and
 * the maximum stays as it was; with HK_RUN_ALWAYS alone they are written.
 */
#define HK_RUN_KEEP_MAXIMUM 0x8u
/*
 * hk_run_plan (HK_1.6), --strict: a unit in which an item came up short
 * where a kernel answers (a SHORT step without an error: a pool, a demote, a
 * value or a controller the kernel took otherwise) is the run's last: the run stops where that
 * unit ends and returns 1. Its pool's maximum is not kept
 * (HK_RUN_KEEP_MAXIMUM): the overcommits are held back, to be put back.
 */
#define HK_RUN_STRICT 0x10u
/*
 * hk_run_plan (HK_1.6), all or nothing: where the run stops before its end
 * (a step that failed, fn that stopped it, what fails outside a step,
 * HK_RUN_STRICT), the run puts back everything it kept (hk_run_put_back())
 * before it returns, and tells it as one HK_RUN_STEP_PUT_BACK step. Not in a
 * dry run, which keeps nothing.
 */
#define HK_RUN_PUT_BACK 0x20u

int hk_run_new(struct hk_ctx *ctx, unsigned flags, struct hk_run **ret_run);
void hk_run_unref(struct hk_run *run);
/*
 * hk_plan_item_apply() through the run: what was there is kept first (also
 * when the write then fails: a failed write may have changed the file). Same
 * results. HK_PLAN_MOUNT (since HK_1.6): made by hk_mount_make() (on an
 * empty mount point unless the item has HK_MOUNT_KEEP, where a mount there
 * already is left as it is: 0), its directory (when the run made it) and the
 * mount kept; -EOPNOTSUPP in a dry run or a tree. Nothing is kept in a dry
 * run. Only hk_run_plan() knows an item's base (its plan keeps it): here
 * and in hk_run_items() the levels up to the mount point's parent must be
 * root's.
 */
int hk_run_apply(struct hk_run *run, const struct hk_plan_item *item, char **ret_reached);
/*
 * An item the caller made itself, that was not there before: a mount
 * (unmounted on put-back), a directory (removed when empty), a controller
 * (taken out of the subtree_control again).
 */
int hk_run_record(struct hk_run *run, const struct hk_plan_item *item);
/* How many items the run would put back. */
size_t hk_run_count(const struct hk_run *run);
/*
 * Put back every item kept, newest first, each read back: 0, or the first
 * -errno (every failure logged); *ret_done (may be NULL): how many were put
 * back. The run is empty afterwards.
 */
int hk_run_put_back(struct hk_run *run, size_t *ret_done);

/*
 * The executor (HK_1.6): hk_run_items() runs items in order through the
 * run, and tells fn what each step does, for the caller's messages.
 */
enum hk_run_step_kind {
	/* It reads as planned: not written (never with HK_RUN_ALWAYS). */
	HK_RUN_STEP_ALREADY,
	/* About to be written; before: what it reads now (NULL: not read). */
	HK_RUN_STEP_WRITE,
	/* Written and read back as planned; reached: what it reads now. */
	HK_RUN_STEP_DONE,
	/*
	 * Written, and it reads otherwise (reached): a pool the kernel could not
	 * grow that far, a demote that found fewer free pages, a value the kernel
	 * took in its own terms.
	 */
	HK_RUN_STEP_SHORT,
	/* A pool's overcommit not written: the pool's minimum came up short before. */
	HK_RUN_STEP_HELD,
	/*
	 * error: it cannot be read (no WRITE step before), or not written;
	 * -EBUSY: a mount point mounted with other options (before: them);
	 * -EOPNOTSUPP: a mount in a --sysroot tree (made on the running system only).
	 */
	HK_RUN_STEP_FAILED,
	/*
	 * hk_run_plan (HK_1.6): a unit begins; plan, first and n: the items it
	 * runs. BEGIN, AGAIN and END have no item (NULL) and index 0.
	 */
	HK_RUN_STEP_BEGIN,
	/*
	 * hk_run_plan, before BEGIN, where a kernel answers: a pool change whose
	 * pool the kernel moved since it was planned, planned again from it; a
	 * recommended shmmax, always, computed again from the pools as the writes
	 * before it left them (shmmax: that one, which may have an item where the
	 * plan had none, or none). plan: the unit planned again (the plan run is
	 * left as it was). error: it could not be read or planned (the run stops).
	 */
	HK_RUN_STEP_AGAIN,
	/*
	 * hk_run_plan: the unit ends, also where the run stops inside it (error:
	 * the value that stops it, fn's or -errno; 0 otherwise).
	 */
	HK_RUN_STEP_END,
	/*
	 * hk_run_set_swap (HK_1.6), before the WRITE of a whole pool's minimum
	 * that grows: swap added (swap: what was made, or in a dry run what
	 * would be; after -EIO what was tried and taken down again; NULL when
	 * nothing was tried); error: the -errno of hk_swap_add_file() or
	 * hk_swap_add_ramdisks() (-EIO: it could not be set up, logged; the run
	 * goes on without unless fn stops it). item: the minimum's. An UNSWAP
	 * follows wherever swap is not NULL.
	 */
	HK_RUN_STEP_SWAP,
	/* That swap is about to be taken away, where its unit ends (or the run stops); no item. */
	HK_RUN_STEP_UNSWAP,
	/*
	 * HK_RUN_PUT_BACK, after the END of the unit where the run stopped:
	 * everything the run kept was put back; put_back: how many files and
	 * mounts; error: 0, or the first -errno (each failure logged). No item,
	 * no unit; fn cannot stop it.
	 */
	HK_RUN_STEP_PUT_BACK,
};

struct hk_shmmax_plan; /* below, with hk_plan_add_recommended_shmmax */

/* hk_run_plan's units: what a step's items are. */
enum hk_run_unit {
	/* Consecutive items of one why, no file twice (one option, one setting). */
	HK_RUN_UNIT_ITEMS,
	/* A pool change (hk_plan_add_pool_change): hk_plan_pool_change tells it. */
	HK_RUN_UNIT_POOL_CHANGE,
	/* A recommended shmmax (hk_plan_add_recommended_shmmax), with its item or none. */
	HK_RUN_UNIT_SHMMAX,
};

struct hk_run_step {
	size_t size;  /* sizeof(struct hk_run_step): fields are only ever added at the end */
	size_t index; /* of the item in the items given (hk_run_plan: in plan) */
	const struct hk_plan_item *item;
	enum hk_run_step_kind kind;
	const char *before;  /* NULL: nothing there, or not read (HK_RUN_ALWAYS) */
	const char *reached; /* DONE, SHORT: what the item reads after the write, or NULL */
	int error;	     /* FAILED: -errno; SHORT of an unmount: -EXDEV (left mounted) */
	/* hk_run_plan (HK_1.6), on every step: the unit the step is in. */
	enum hk_run_unit unit;
	const struct hk_plan *plan; /* the plan its items are in: the one run, or planned again */
	size_t first, n;	    /* its items in plan */
	const struct hk_shmmax_plan *shmmax; /* HK_RUN_UNIT_SHMMAX: the one it writes, or not */
	const struct hk_swap *swap;	     /* SWAP, UNSWAP (HK_1.6) */
	size_t put_back;		     /* PUT_BACK (HK_1.6) */
};

/*
 * 0 goes on; anything else stops the run, and hk_run_items() returns it. The
 * step, its item and its strings live during the call only (an item of the
 * plan hk_run_plan was given lives as long as that plan; one planned again,
 * or the overcommit HK_RUN_KEEP_MAXIMUM writes, which is in no plan the step
 * names, during the call only).
 */
typedef int (*hk_run_step_fn)(void *data, const struct hk_run_step *step);

/*
 * Run items [0, n) in order (each items->size bytes after the one before): each compared with the machine (unless
 * HK_RUN_ALWAYS), written through hk_run_apply() (what was there kept for
 * hk_run_put_back()), and read back. A pool's minimum that comes up short
 * holds back its pool's later overcommit items (HK_RUN_STEP_HELD): the
 * maximum stays as it was rather than counted from pages the pool lacks
 * (see HK_RUN_ALWAYS and HK_RUN_KEEP_MAXIMUM for the options' rules; the
 * overcommit HK_RUN_KEEP_MAXIMUM writes is told as a step of its own, with
 * the short minimum's index).
 * In a dry run (hk_set_dry_run) nothing is written: a directory an item
 * makes counts as made for the items under it, a mount is only told.
 * Returns 0, 1 when an item came up short (a pool, or a value the kernel
 * reads back otherwise), fn's value when it stopped the run (a caller that
 * must tell it from those returns something else, such as 2), or the -errno
 * of the step that failed (the run stops there; the caller decides whether
 * to put back). What fails outside a step (the pool read back to keep its
 * maximum) is logged and returned. fn may be NULL.
 */
int hk_run_items(struct hk_run *run, const struct hk_plan_item *items, size_t n, hk_run_step_fn fn,
		 void *data);

/*
 * Run a whole plan (HK_1.6) in one walk, as hk_run_items() runs its items,
 * unit by unit: each unit's steps come between a BEGIN and an END. Where a
 * kernel answers (not a dry run, not a --sysroot tree of plain files):
 * - a pool change whose pool the kernel moved since it was planned is
 *   planned again from the kernel's pool (AGAIN, then the new items run);
 * - a recommended shmmax is computed again from the pools as the writes
 *   before it left them (one that came up short, or was planned again), and
 *   written only where it keeps or raises kernel.shmmax.
 * A pool's short minimum holds back the pool's later overcommits (not with
 * HK_RUN_ALWAYS alone) in the whole plan; with HK_RUN_KEEP_MAXIMUM (which
 * keeps the maximum itself) in its own unit only, where it also looks for
 * the maximum to keep. The plan is never changed. Returns as hk_run_items().
 */
int hk_run_plan(struct hk_run *run, const struct hk_plan *plan, hk_run_step_fn fn, void *data);

/*
 * Swap while a pool grows (HK_1.6), libhugetlbfs's --add-temp-swap and
 * --add-ramdisk-swap: before the write of a whole pool's minimum that grows
 * (above what it reads, or with HK_RUN_ALWAYS above what it was planned
 * from), the run adds swap for it (hk_swap_add_file() of file_pages pages of
 * the pool's size, else with ramdisks hk_swap_add_ramdisks(); flags:
 * HK_SWAP_PERSIST) and takes it away when the minimum's unit ends
 * (hk_run_plan; hk_run_items: when its items end), telling SWAP and UNSWAP.
 * swap NULL, or neither file_pages nor ramdisks: none. 0 or -EINVAL.
 */
struct hk_run_swap {
	size_t size; /* sizeof(struct hk_run_swap) */
	uint64_t file_pages;
	bool ramdisks;
	unsigned flags;
};
int hk_run_set_swap(struct hk_run *run, const struct hk_run_swap *swap);

/*
 * Shared text (HK_1.6): the files libhugekit-rt makes for HUGETLB_SHARE=1, in
 * <hugetlbfs mount>/elflink-uid-<uid>/, the directory of libhugetlbfs 2.23's
 * shared files (2.23's own are told too: they hold huge pages the same way),
 * and in <hugetlbfs mount>/hugekit-text-<uid>/, where the runtime kept them
 * before (no longer used; told so that nothing is left behind).
 * hk_shared_text_walk() tells fn each regular file of every user's
 * directories (uid < 0) or of one uid's, mount by mount, directories and
 * names sorted; nothing is followed: a directory must be a real one owned by
 * its uid, a mount must still be hugetlbfs (one bound twice is read once).
 * What is skipped is logged. fn's non-zero value stops the walk and is
 * returned; else 0 or -errno. The file and its strings live during fn only.
 */
struct hk_shared_text {
	size_t size;	    /* sizeof(struct hk_shared_text): fields only added at the end */
	const char *dir;    /* "<mount>/elflink-uid-<uid>" or "<mount>/hugekit-text-<uid>" */
	const char *name;   /* the file's name in dir */
	uint32_t uid;	    /* whose directory */
	uint64_t page_size; /* the mount's */
	uint64_t bytes;	    /* the file's size */
	uint64_t pages;	    /* huge pages it holds */
	bool unfinished;    /* being made, or left by a crash */
	/* From the name <exe>.<key>.<offset hex>; NULL (0) when not one of the runtime's. */
	const char *executable, *key;
	uint64_t offset;
	/*
	 * Since 2.23's layout (older callers' structs end above): the program of
	 * a file named as libhugetlbfs 2.23 names its own in elflink-uid-<uid>,
	 * <exe>_<32|64>_<phdr index> (unfinished: with .tmp after it), else NULL.
	 * Only a name: the runtime never opens such a file.
	 */
	const char *libhugetlbfs_executable;
};

typedef int (*hk_shared_text_fn)(void *data, const struct hk_shared_text *file);

int hk_shared_text_walk(struct hk_ctx *ctx, int64_t uid, hk_shared_text_fn fn, void *data);
/*
 * Inside fn, for the file fn was given (-EINVAL for any other, a copy
 * included): remove it by its directory's descriptor (a link swapped in is at
 * most unlinked itself, a directory not at all): 0 or -errno.
 */
int hk_shared_text_remove(const struct hk_shared_text *file);

/*
 * Swap while a pool grows (HK_1.6): the kernel can push pages out to make
 * room for huge pages. A temporary file of bytes under
 * /var/lib/hugetlbfs/swap/temp (made 0600 in directories of root's that no
 * one else can write to, O_EXCL, never through a link; a file a killed run
 * left there is removed first), or the ramdisks /dev/ram0.. (brd), enough
 * for one page of page_size. While a file is in use, SIGINT, SIGTERM, SIGHUP
 * and SIGQUIT take it off swap and remove it first; one file at a time in a
 * process (-EBUSY while another is in use). Swap that cannot be set
 * up is logged as a warning and returns -EIO with *ret_swap set (what was
 * made is taken down); the caller goes on without. In a dry run nothing is
 * made: hk_swap_path() and hk_swap_ramdisks() say what would be.
 */
struct hk_swap;

/* Keep the swap after hk_swap_remove(), in use: a file renamed swapfile-PID.persist (-2, -3 ... when taken). */
#define HK_SWAP_PERSIST 0x1u

int hk_swap_add_file(struct hk_ctx *ctx, uint64_t bytes, unsigned flags, struct hk_swap **ret_swap);
int hk_swap_add_ramdisks(struct hk_ctx *ctx, uint64_t page_size, unsigned flags,
			 struct hk_swap **ret_swap);
/* The swap file (NULL: none, or ramdisks), and how many ramdisks are (or would be) in use. */
const char *hk_swap_path(const struct hk_swap *swap);
int hk_swap_ramdisks(const struct hk_swap *swap);
/* Taken off swap and removed (only what this run made; a file kept by HK_SWAP_PERSIST stays), freed. */
void hk_swap_remove(struct hk_swap *swap);

/*
 * The pool planner (HK_1.6): the pools as a plan leaves them, and what one
 * change of a pool's Minimum or Maximum writes from there, in which order.
 * A pool is read from the machine once (hk_pool_plan_load), then moved by
 * every change added to a plan; a new hk_pool_plan reads the kernel again.
 */
struct hk_pool_plan;

int hk_pool_plan_new(struct hk_ctx *ctx, struct hk_pool_plan **ret_pools);
void hk_pool_plan_unref(struct hk_pool_plan *pools);
/* Hold the pool of page_size, read now unless held: 0, -ENOENT (no such pool), or -errno. */
int hk_pool_plan_load(struct hk_pool_plan *pools, uint64_t page_size);
/*
 * A held pool as planned: HK_POOL_MINIMUM, HK_POOL_OVERCOMMIT or
 * HK_POOL_MAXIMUM (saturated: UINT64_MAX is unlimited) of the pool (node
 * HK_NODE_ALL), HK_POOL_MINIMUM of one node; 0 for anything else.
 */
uint64_t hk_pool_plan_get(const struct hk_pool_plan *pools, uint64_t page_size, int node,
			  enum hk_pool_field field);
bool hk_pool_plan_has_node(const struct hk_pool_plan *pools, uint64_t page_size, int node);
bool hk_pool_plan_is_gigantic(const struct hk_pool_plan *pools, uint64_t page_size);
/*
 * Whether pages free pages of the pool of page_size can be demoted now (HK_1.6),
 * from the pool (nodes NULL) or from each listed node, counting the pages
 * the changes planned before add (hk_pool_plan_free); pages 0 checks only
 * that the pool can demote. The caller sets ret->size. 0 with the verdict,
 * or -errno (-ENOENT: no such pool).
 */
enum hk_demote_problem {
	HK_DEMOTE_FITS,
	HK_DEMOTE_NO_KERNEL,	/* the kernel has no demote (Linux 5.16 or later) */
	HK_DEMOTE_NO_SMALLER,	/* the kernel demotes, but this size has no smaller one */
	HK_DEMOTE_NO_NODE,	/* node: a listed node without this pool */
	HK_DEMOTE_NO_NODE_FILE, /* node: no demote file there; error: why */
	HK_DEMOTE_NOT_FREE,	/* free: fewer free pages (of node, when listed) than pages */
	HK_DEMOTE_NOT_SMALLER,	/* hk_pool_demote_size_check: TO is not a smaller huge page size */
};

struct hk_demote_verdict {
	size_t size;
	enum hk_demote_problem problem;
	int node;      /* the node a problem is about, else HK_NODE_ALL */
	uint64_t free; /* HK_DEMOTE_NOT_FREE: the free pages there */
	int error;     /* HK_DEMOTE_NO_NODE_FILE: -errno */
};

int hk_pool_demote_check(struct hk_pool_plan *pools, uint64_t page_size, const int *nodes,
			 size_t n_nodes, uint64_t pages, struct hk_demote_verdict *ret);
/*
 * --pool-demote-size SIZE:TO and [pool SIZE] demote_size = TO: whether the
 * pool can demote (hk_pool_demote_check's HK_DEMOTE_NO_KERNEL and
 * HK_DEMOTE_NO_SMALLER, said first), then whether to is a huge page size of
 * this machine below page_size (HK_DEMOTE_NOT_SMALLER). The caller sets
 * ret->size. 0 with the verdict, or -errno (-ENOENT: no such pool).
 */
int hk_pool_demote_size_check(struct hk_pool_plan *pools, uint64_t page_size, uint64_t to,
			      struct hk_demote_verdict *ret);
/* The overcommit that gives a pool of minimum pages the maximum (UINT64_MAX: unlimited). */
uint64_t hk_pool_overcommit_for(uint64_t minimum, uint64_t maximum);
/*
 * kernel.shmmax's recommendation from the pools as the plan leaves them: the
 * sum of every page size's Maximum in bytes, saturated (every size is held:
 * read now where it was not). hk_recommended_shmmax() is this on a new plan.
 */
int hk_pool_plan_recommended_shmmax(struct hk_pool_plan *pools, uint64_t *ret);
/*
 * kernel.shmmax set to its recommendation, from the pools as the plan
 * leaves them (pools NULL: the kernel's pools now). Written only where it
 * keeps or raises kernel.shmmax: never 0 (no huge pages), never lowered.
 * The caller sets ret->size. 0 with ret filled (added: one item, at index),
 * or -errno. The plan keeps the recommendation, item or not: hk_run_plan
 * computes it again where a kernel answers (HK_RUN_STEP_AGAIN), and may
 * write it where the plan had no item, or not where it had one.
 */
struct hk_shmmax_plan {
	size_t size;
	uint64_t recommended; /* every size's Maximum in bytes */
	uint64_t current;     /* kernel.shmmax now */
	bool added;
	size_t index;
};
int hk_plan_add_recommended_shmmax(struct hk_ctx *ctx, struct hk_plan *plan,
				   struct hk_pool_plan *pools, const char *why,
				   struct hk_shmmax_plan *ret);
/*
 * Free pages of the pool now (the kernel's, now) or of one node, with the
 * persistent pages the plan adds before (a pool or node the plan holds at a
 * larger Minimum than now); 0 for a node the pool does not have.
 */
uint64_t hk_pool_plan_free(const struct hk_pool_plan *pools, const struct hk_pool *now, int node);
/*
 * The new pages a Minimum (of pool, or of node) going from "from" to "to"
 * needs: its surplus pages become persistent first and need no new page.
 */
uint64_t hk_pool_new_pages(const struct hk_pool *pool, int node, uint64_t from, uint64_t to);

/*
 * One change, as hugeadm's --pool-pages-min and --pool-pages-max ask it.
 * The caller sets size to sizeof(struct hk_pool_change), so that fields
 * added later are read only from callers that know them.
 */
struct hk_pool_change {
	size_t size;
	uint64_t page_size;
	enum hk_pool_field field; /* HK_POOL_MINIMUM or HK_POOL_MAXIMUM */
	char sign;		  /* 0: set to pages; '+' or '-': move by pages (saturated) */
	uint64_t pages;
	/* NULL: the whole pool; else the nodes whose persistent pages are set (Minimum only). */
	const int *nodes;
	size_t n_nodes;
	/* HK_POOL_SET_MEMPOLICY: the whole pool's Minimum through nr_hugepages_mempolicy. */
	unsigned flags;
};

enum hk_pool_problem {
	HK_POOL_CHANGE_FITS,
	HK_POOL_CHANGE_NO_NODE,		      /* node: a listed node the pool does not have */
	HK_POOL_CHANGE_BEYOND_MEMORY,	      /* pages: more than MemTotal holds */
	HK_POOL_CHANGE_MINIMUM_BEYOND_MEMORY, /* minimum: the Minimum left, more than MemTotal holds */
	HK_POOL_CHANGE_GIGANTIC,	      /* a gigantic pool's Maximum above its Minimum */
};

/* What a change would do, and whether the machine can have it. The caller sets size. */
struct hk_pool_verdict {
	size_t size;
	enum hk_pool_problem problem;
	int node;
	uint64_t minimum, maximum;  /* what the change leaves */
	uint64_t mem_kb, mem_pages; /* MemTotal, in kB and in pages of the size (0: unknown) */
	/* A Maximum set or raised beyond memory: only a limit, which the kernel takes. */
	bool limit_beyond_memory;
};

/* Judge a change against the held pool (nothing planned): 0, -ENOENT (pool not held), -EINVAL. */
int hk_pool_change_check(struct hk_pool_plan *pools, const struct hk_pool_change *change,
			 struct hk_pool_verdict *ret);
/*
 * Plan a change: without nodes the overcommit first when the Maximum must
 * grow, the Minimum, then the overcommit that gives the Maximum asked for;
 * with nodes each listed node's persistent pages, in node order. The items
 * (*ret_n of them, maybe none) are added to plan and the held pool moved.
 * The index of the first item (hk_plan_items' count before), or -errno.
 */
int hk_plan_add_pool_change(struct hk_plan *plan, struct hk_pool_plan *pools,
			    const struct hk_pool_change *change, const char *why, size_t *ret_n);
/*
 * A change hk_plan_add_pool_change added, as it was planned (first: the
 * index it returned): its items, the whole pool before it and after, and
 * whether it grows a Minimum (a node's, with nodes). The caller sets
 * ret->size. 0, or -ENOENT when no change starts at first. A change that
 * planned no item (*ret_n 0) is kept by none of these calls: its index is
 * the next change's first.
 */
struct hk_pool_change_plan {
	size_t size;
	size_t n; /* its items, from first */
	uint64_t minimum_before, maximum_before;
	uint64_t minimum_after, maximum_after;
	bool grows;
};
int hk_plan_pool_change(const struct hk_plan *plan, size_t first, struct hk_pool_change_plan *ret);
/*
 * The value the file of a pool change's item index had before it, as
 * planned: 0, or -ENOENT for an item no pool change added.
 */
int hk_plan_item_before(const struct hk_plan *plan, size_t index, uint64_t *ret);
/*
 * The change at first against the kernel's pool now: another program may
 * have written the pool since the plan was made. 0 when the pool is as it
 * was planned from (*ret_again NULL); 1 when it moved, with *ret_again a
 * new plan of the same change from the kernel's pool (its items from 0, one
 * change: hk_plan_pool_change(*ret_again, 0, ...)); plan is left as it was.
 * -errno (-ENOENT: no change starts at first).
 */
int hk_plan_pool_change_again(struct hk_ctx *ctx, const struct hk_plan *plan, size_t first,
			      struct hk_plan **ret_again);

/*
 * An intent: what the administrator wants set, in the order it was asked
 * (hugeadm's change options). libhugekit plans it into a plan: in the order
 * of every plan (enum hk_setting, and in the order asked within one), each
 * entry judged against the machine and the pools as the entries before it
 * leave them, then its items added. The caller words what it is told.
 */
struct hk_intent;

/* The entry's flags. */
enum {
	HK_INTENT_LEGACY_SIZE = 1 << 0, /* page_size in 2.23's grammar (hk_parse_size_legacy) */
	HK_INTENT_BYTES = 1 << 1,	/* a pool's number is bytes: whole pages of the size */
	HK_INTENT_MEMPOLICY = 1 << 2,	/* a pool's Minimum through nr_hugepages_mempolicy */
	HK_INTENT_SHOW_ONLY =
		1 << 3, /* mounts, unmounts: the plan is only shown (a tree can have one) */
	HK_INTENT_ONE_UID = 1 << 4, /* shared text: uid's files only (else every user's) */
	/* min_free_kbytes, shmmax: number is the value (a configuration's), not the recommendation. */
	HK_INTENT_GIVEN = 1 << 5,
	/* A mount of one page size: max_size, min_size a percentage of the pool (0 to 100). */
	HK_INTENT_MAX_PERCENT = 1 << 6,
	HK_INTENT_MIN_PERCENT = 1 << 7,
	/* A pool's state (HK_SETTING_POOL: a configuration's [pool]), and what it says. */
	HK_INTENT_STATE = 1 << 8,
	HK_INTENT_HAS_MINIMUM = 1 << 9,
	HK_INTENT_HAS_MAXIMUM = 1 << 10,
	HK_INTENT_DEMOTE_DOWN = 1 << 11,
};

/*
 * One entry; the caller sets size to sizeof(struct hk_intent_entry). What
 * each setting reads:
 * - HK_SETTING_POOL: page_size, field (HK_POOL_MINIMUM or HK_POOL_MAXIMUM),
 *   sign, number (pages, or bytes with HK_INTENT_BYTES), nodes; or with
 *   HK_INTENT_STATE the pool's state (a configuration's [pool], an item
 *   for each limit said, whether or not it changes the pool): with
 *   HK_INTENT_HAS_MINIMUM number the pool's Minimum, or node_pages[i] each
 *   listed node's persistent pages; with HK_INTENT_HAS_MAXIMUM maximum its
 *   Maximum (else the overcommit is left as it is); HK_INTENT_DEMOTE_DOWN
 *   (with a minimum): the pages above it demoted into pages of demote_to
 *   (0: the kernel's demote size) first, which join that pool;
 * - HK_SETTING_DEMOTE_SIZE: page_size, number (the size to demote to);
 * - HK_SETTING_DEMOTE: page_size, number (pages, on each listed node), nodes;
 * - HK_SETTING_THP: knob and value (hk_thp_check's);
 * - HK_SETTING_HVO, HK_SETTING_ZONE_MOVABLE, HK_SETTING_SHM_GROUP: number;
 * - HK_SETTING_MIN_FREE_KBYTES, HK_SETTING_SHMMAX: nothing (the recommended
 *   values, computed from the pools the entries before leave), or with
 *   HK_INTENT_GIVEN number, the value;
 * - HK_SETTING_SYSCTL: knob, a sysctl no other setting sets ("kernel.shmall",
 *   "vm.compaction_proactiveness"), and number, its value;
 * - HK_SETTING_SHARED_TEXT: every file of shared text (hk_shared_text_walk),
 *   or uid's with HK_INTENT_ONE_UID, removed: one item each, one verdict
 *   (HK_INTENT_NOT_LIVE on a tree: the files are the running system's);
 * - HK_SETTING_UNMOUNT: the hugetlbfs mounts under base (absolute) taken
 *   down, last mounted first: those named pagesize-* (2.23's layout); the
 *   others are left mounted (HK_INTENT_NOT_OURS). One entry is enough: a
 *   second plans nothing. The mounts planned after see them gone;
 * - HK_SETTING_CGROUP: the hugetlb limit knob ("max" or "rsvd.max") of
 *   page_size of the cgroup sub (a path below the controller's root:
 *   "db.slice", "machine.slice/vm1"): number bytes, or with value "max" no
 *   limit; the cgroup's directories made first (those above it, and with
 *   cgroup v2 each parent's hugetlb controller, are items whose why is
 *   "implied"), each once in the plan. HK_INTENT_NO_KERNEL without a
 *   hugetlb controller;
 * - HK_SETTING_MOUNT: one hugetlbfs mount per page size of the machine, at
 *   base[/sub]/pagesize-<N>{KB,MB,GB} (2.23's names), its root owned uid:gid
 *   with mode, and the limits max_size and min_size (bytes) and max_inodes
 *   where not 0; one there already is kept when it is the same mount.
 *   With page_size ("2M", "DEFAULT": a configuration's [mount]) one mount
 *   of that size at base itself, made on an empty mount point (--check
 *   compares one there): its limits whole pages of the size
 *   (HK_INTENT_NOT_WHOLE_PAGES), or a percentage of the pool with
 *   HK_INTENT_MAX_PERCENT, HK_INTENT_MIN_PERCENT, as hugetlbfs takes it.
 * Strings and nodes are copied. why: the item's reason (hk_plan_item.why).
 */
struct hk_intent_entry {
	size_t size;
	enum hk_setting setting;
	unsigned flags;
	const char *page_size; /* "2M", "2MB", "DEFAULT" */
	enum hk_pool_field field;
	char sign; /* 0, '+' or '-' */
	uint64_t number;
	const int *nodes; /* NULL: the whole pool */
	size_t n_nodes;
	const char *knob, *value;
	const char *why;
	const char *base, *sub;
	uint32_t uid, gid, mode;
	uint64_t max_size, min_size, max_inodes;
	/* Since the pool's state (HK_INTENT_STATE): older callers' entries end above. */
	const uint64_t *node_pages; /* n_nodes of them */
	uint64_t maximum, demote_to;
};

int hk_intent_new(struct hk_ctx *ctx, struct hk_intent **ret);
struct hk_intent *hk_intent_unref(struct hk_intent *intent);
/* Add an entry: its index (0, 1, ... in the order added), or -errno (-EINVAL: a setting not planned here). */
int hk_intent_add(struct hk_intent *intent, const struct hk_intent_entry *entry);

/* What an entry came to; the first that holds, in this order. */
enum hk_intent_problem {
	HK_INTENT_PLANNED,	       /* items [first, first + n) of the plan (n may be 0) */
	HK_INTENT_UNKNOWN_SIZE,	       /* page_size is no pool's size here */
	HK_INTENT_UNREAD,	       /* error: what the judgement needs could not be read */
	HK_INTENT_NODES_AND_MEMPOLICY, /* nodes listed and HK_INTENT_MEMPOLICY */
	HK_INTENT_POOL_NO_NODE,	       /* pool.node: a listed node the pool does not have */
	HK_INTENT_LESS_THAN_A_PAGE,    /* HK_INTENT_BYTES: not 0, but less than one page */
	HK_INTENT_POOL,		       /* pool.problem: the change does not fit */
	HK_INTENT_DEMOTE,	       /* demote.problem */
	HK_INTENT_NO_KERNEL,	       /* the kernel has no such file (THP knob, HVO) */
	HK_INTENT_NOT_A_MODE,	       /* THP: value is not one of line's modes */
	HK_INTENT_UNPLANNED,	       /* error: the items could not be planned */
	HK_INTENT_NOT_LIVE,	       /* a tree: a mount without SHOW_ONLY, shared text */
	HK_INTENT_MOUNTED_OTHERWISE,   /* target: another mount there (options: its options) */
	HK_INTENT_MIN_OVER_MAX,	       /* min_size is more whole pages than max_size */
	HK_INTENT_MIN_OVER_POOL,       /* min_size reserves more than the pool's Maximum */
	HK_INTENT_NOT_WHOLE_PAGES, /* a cgroup's limit, a mount's: not whole pages of its size */
	/* A pool's state: its maximum (pages) below the minimum (min_pages) it leaves. */
	HK_INTENT_MAX_BELOW_MIN,
	HK_INTENT_GIGANTIC_MAX, /* a pool's state: gigantic pages, a maximum not its minimum */
};

/* A mount's or an unmount's warnings (hk_intent_verdict.warnings): planned all the same. */
enum {
	HK_INTENT_MAX_OVER_POOL = 1 << 0, /* max_size is more than the pool's Maximum */
	HK_INTENT_MAX_NO_PAGE = 1 << 1,	  /* max_size is less than one page */
	HK_INTENT_NOT_OURS = 1 << 2,	  /* an unmount's: target is not pagesize-*: left mounted */
};

/*
 * The verdict on one entry, told once, in the order planned; a mount
 * entry's once per mount (page size), each with its target, an unmount
 * entry's once per mount under its base (once, without a target, when
 * there is none). pool is set
 * for a pool entry past its page size (limit_beyond_memory: a warning),
 * shmmax for HK_SETTING_SHMMAX. A zone movable setting the kernel lacks
 * is planned with no item.
 */
struct hk_intent_verdict {
	size_t size;
	size_t entry;
	enum hk_intent_problem problem;
	int error;	    /* -errno, where the problem has one */
	uint64_t page_size; /* the size resolved, for the entries that have one */
	uint64_t pages;	    /* a pool entry's pages (bytes made whole pages) */
	struct hk_pool_verdict pool;
	struct hk_demote_verdict demote;
	struct hk_shmmax_plan shmmax;
	const char *line; /* HK_INTENT_NOT_A_MODE: the knob's modes */
	size_t first, n;
	/* A mount's; HK_INTENT_UNREAD's target: the file that could not be read, where one was. */
	const char *target, *options;
	uint64_t min_pages, max_pages, pool_maximum;
	unsigned warnings;
	/* A pool's state: pages a larger pool's demote brings into it, planned before. */
	uint64_t incoming;
};

/* Told each verdict: 0 goes on, anything else stops planning (returned). */
typedef int hk_intent_fn(void *data, const struct hk_intent_verdict *v);

/*
 * Plan the intent into plan, over pools (the caller's, which later
 * additions such as mounts then see as the entries leave them). Planning
 * stops at the first entry that is not HK_INTENT_PLANNED: 0 when every
 * entry was planned, 1 when one was not (fn told why), fn's value when it
 * stopped, or -errno.
 */
int hk_plan_from_intent(struct hk_intent *intent, struct hk_plan *plan, struct hk_pool_plan *pools,
			hk_intent_fn *fn, void *data);

/*
 * Live collapse (HK_1.7): the kernel asked to put a running process's memory
 * on transparent huge pages of the PMD size (2 MiB on x86-64) with
 * process_madvise(2) and MADV_COLLAPSE, and the process's smaps read before
 * and after. What is chosen:
 *
 * HK_COLLAPSE_HEAP: its private, writable anonymous mappings ("[heap]",
 *   malloc's arenas and large blocks, anonymous mmaps, "[anon:NAME]"), not
 *   the stacks ("[stack]"; thread stacks are MAP_STACK, kept off THP since
 *   Linux 6.7), not hugetlb mappings, and not MAP_NORESERVE ones (VmFlags
 *   "nr": sparse reservations). MADV_COLLAPSE fills the base pages of a part
 *   that were never touched (khugepaged's max_ptes_none does not apply): a
 *   part with one page touched takes the whole huge page.
 * HK_COLLAPSE_TEXT: the executable mappings of its program and libraries
 *   (private, executable, of a file). The kernel collapses file text only
 *   with CONFIG_READ_ONLY_THP_FOR_FS, where the file's offset and the address
 *   agree modulo the PMD size.
 *
 * Only the whole PMD-aligned parts of a mapping can be collapsed: a mapping
 * without one is not asked (HK_COLLAPSE_TOO_SMALL). With HK_COLLAPSE_DRY_RUN
 * nothing is asked; the rights are checked all the same, and after is before.
 *
 * The rights are the kernel's (Linux 5.12 and later): the caller needs
 * PTRACE_MODE_READ over the process (the same user, or CAP_SYS_PTRACE: -EACCES
 * otherwise; reading its smaps needs the same) and CAP_SYS_NICE (-EPERM) unless
 * the process is the caller itself. MADV_COLLAPSE through process_madvise
 * needs Linux 6.1 (older kernels: -EINVAL); it ignores the THP mode of
 * /sys/kernel/mm/transparent_hugepage/enabled (a kernel 6.18 collapses with
 * "never" too), and refuses mappings marked MADV_NOHUGEPAGE and processes
 * with THP disabled by prctl(PR_SET_THP_DISABLE).
 *
 * The process is held by a pidfd: one that exits, or whose pid is reused,
 * while it is read is -ESRCH (HK_COLLAPSE_EXITED), never another's memory.
 * On a sysroot tree (hk_is_live() false) only a dry run reads its
 * proc/PID files; asking is -EOPNOTSUPP.
 */
#define HK_COLLAPSE_HEAP 1u
#define HK_COLLAPSE_TEXT 2u
#define HK_COLLAPSE_DRY_RUN 4u

enum hk_collapse_kind {
	HK_COLLAPSE_KIND_HEAP,
	HK_COLLAPSE_KIND_TEXT,
};
#define HK_COLLAPSE_NKINDS 2

/* Why the process could not be collapsed at all (the call's -errno beside it). */
enum hk_collapse_problem {
	HK_COLLAPSE_NO_PROBLEM, /* none, or an error of its own (-ENOMEM ...) */
	HK_COLLAPSE_NO_PROCESS, /* -ESRCH: no such process, or one without memory (a kernel thread) */
	HK_COLLAPSE_NOT_PROCESS, /* -ENOENT (-EINVAL before 6.9): a thread's id, not a process's */
	HK_COLLAPSE_EXITED,	 /* -ESRCH: it exited while it was read or collapsed */
	HK_COLLAPSE_NO_PTRACE,	 /* -EACCES: no PTRACE_MODE_READ right over it */
	HK_COLLAPSE_NO_CAP,	 /* -EPERM: CAP_SYS_NICE missing */
	HK_COLLAPSE_UNSUPPORTED, /* the kernel lacks pidfd_open or process_madvise (-ENOSYS),
				    MADV_COLLAPSE for it (-EINVAL, before 6.1), or THP (-ENOENT) */
	HK_COLLAPSE_UNREAD,	 /* its smaps could not be read or parsed */
};

enum hk_collapse_result {
	HK_COLLAPSE_COLLAPSED, /* the kernel collapsed the parts asked (or they were already) */
	HK_COLLAPSE_REFUSED, /* the kernel said error: some parts may have collapsed all the same */
	HK_COLLAPSE_TOO_SMALL,	/* no whole PMD-aligned part: not asked */
	HK_COLLAPSE_MISALIGNED, /* text whose file offset and address differ modulo the PMD size */
	HK_COLLAPSE_NOT_ASKED,	/* a dry run: it would be asked */
};

/* The likely reason of a refusal (or, in a dry run, of the one to come). */
enum hk_collapse_why {
	HK_COLLAPSE_WHY_NONE,
	HK_COLLAPSE_WHY_NOHUGEPAGE,   /* VmFlags "nh": MADV_NOHUGEPAGE (or MAP_STACK) */
	HK_COLLAPSE_WHY_THP_DISABLED, /* the process: prctl(PR_SET_THP_DISABLE) */
	HK_COLLAPSE_WHY_FILE_THP,     /* file text: EINVAL, no CONFIG_READ_ONLY_THP_FOR_FS */
	HK_COLLAPSE_WHY_UNTOUCHED,    /* EINVAL with parts not resident: never touched */
};

/* One mapping chosen. Fields may be added at the end only: read them through hk_collapse_range_at(). */
struct hk_collapse_range {
	uint64_t start, end; /* the mapping, end exclusive */
	uint64_t from, to;   /* its whole PMD-aligned parts, asked for (from == to: none) */
	enum hk_collapse_kind kind;
	char perms[5];	  /* "rw-p" */
	const char *name; /* "[heap]", "" (anonymous), the file as smaps names it */
	enum hk_collapse_result result;
	int error; /* HK_COLLAPSE_REFUSED: the kernel's errno (positive) */
	enum hk_collapse_why why;
	uint64_t rss_kb_before, huge_kb_before; /* Rss; AnonHugePages + FilePmdMapped */
	uint64_t rss_kb_after, huge_kb_after;	/* the mappings there after */
};

/* The mappings of one kind in smaps. */
struct hk_collapse_state {
	uint64_t mappings;
	uint64_t rss_kb;
	uint64_t huge_kb; /* AnonHugePages + FilePmdMapped */
};

struct hk_collapse_total {
	struct hk_collapse_state before, after;
	uint64_t asked, asked_kb; /* ranges asked (a dry run: to be), and their parts' kB */
	uint64_t collapsed, refused;
};

struct hk_collapse;

/*
 * Collapse process pid's mappings chosen by flags (HK_COLLAPSE_HEAP,
 * HK_COLLAPSE_TEXT, at least one; HK_COLLAPSE_DRY_RUN). 0 with *ret (free
 * with hk_collapse_free()) even when the kernel refused some ranges (each
 * says so); -errno with *problem (may be NULL) otherwise.
 */
int hk_collapse_process(struct hk_ctx *ctx, int pid, unsigned flags, struct hk_collapse **ret,
			enum hk_collapse_problem *problem);
void hk_collapse_free(struct hk_collapse *c);
/* Its name (/proc/PID/comm, as the process set it: any bytes), and whether THP is off for it. */
const char *hk_collapse_comm(const struct hk_collapse *c);
bool hk_collapse_thp_disabled(const struct hk_collapse *c);
/* The PMD size in bytes: the size of a part. */
uint64_t hk_collapse_pmd_size(const struct hk_collapse *c);
size_t hk_collapse_count(const struct hk_collapse *c);
/* The i-th mapping chosen, in address order; NULL past the end. */
const struct hk_collapse_range *hk_collapse_range_at(const struct hk_collapse *c, size_t i);
/* The totals of a kind that was chosen; NULL for one that was not. */
const struct hk_collapse_total *hk_collapse_total(const struct hk_collapse *c,
						  enum hk_collapse_kind kind);

/* Metrics (HK_1.8): the huge page state as one snapshot of samples, for Prometheus */

enum hk_metric_type {
	HK_METRIC_GAUGE,
	HK_METRIC_COUNTER,
};

/*
 * A metric family: a name in Prometheus's rules ("hugekit_pool_free_pages":
 * the hugekit_ prefix, base units, _total on counters), its type, one line
 * of help (no newline) and its samples. Fields may be added at the end
 * only: read them through hk_metrics_family_at().
 */
struct hk_metric_family {
	const char *name;
	enum hk_metric_type type;
	const char *help;
	size_t n_samples;
};

/*
 * One sample: labels is a NULL-terminated array of name, value, name,
 * value, ... (label values as the machine has them: a cgroup's name may hold
 * any byte, the caller escapes); value is +INFINITY for "no limit". Fields
 * may be added at the end only.
 */
struct hk_metric_sample {
	const char *const *labels;
	double value;
};

struct hk_metrics;

/*
 * Read the snapshot: per page size the pool (labels page_size in bytes) and
 * per node its share (page_size, node), the pages a grow could get now
 * (hk_buddy_obtainable; none for a gigantic size), the THP settings (an
 * _info gauge) and counters (/proc/vmstat, each mTHP size's stats), the
 * hugetlb cgroups that hold or limit pages (cgroup, page_size), and the
 * configuration (config_path, or NULL: HK_CONFIG_FILE and HK_CONFIG_DIR
 * under the sysroot): present, valid, its items and how many differ from the
 * machine (hk_plan_item_check). flags: 0. What is absent (no THP, no
 * cgroup, no configuration) has no samples; what could not be read is
 * logged, counted (hk_metrics_errors) and a sample of
 * hugekit_metrics_errors. Families come in a fixed order, samples in page
 * size, node and cgroup order. -EINVAL for unknown flags, -ENOMEM. Free
 * with hk_metrics_free().
 */
int hk_metrics_read(struct hk_ctx *ctx, const char *config_path, unsigned flags,
		    struct hk_metrics **ret);
void hk_metrics_free(struct hk_metrics *m);
size_t hk_metrics_family_count(const struct hk_metrics *m);
/* The i-th family; NULL past the end. */
const struct hk_metric_family *hk_metrics_family_at(const struct hk_metrics *m, size_t i);
/* Sample k of family i; NULL past the end. */
const struct hk_metric_sample *hk_metrics_sample_at(const struct hk_metrics *m, size_t i, size_t k);
/* The parts of the state that could not be read (0: the snapshot is whole). */
unsigned hk_metrics_errors(const struct hk_metrics *m);

#ifdef __cplusplus
}
#endif

#endif /* HUGEKIT_HUGEKIT_H */
