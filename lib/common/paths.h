/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel paths hugekit reads and writes, relative to the root of the tree.
 * These are the only spellings of /proc and /sys in the source.
 */
#pragma once

#define HK_PROC_MEMINFO "proc/meminfo"
#define HK_PROC_ZONEINFO "proc/zoneinfo"
#define HK_PROC_MOUNTINFO "proc/self/mountinfo"
#define HK_PROC_SMAPS "proc/self/smaps"
#define HK_PROC_SMAPS_ROLLUP "proc/self/smaps_rollup"
#define HK_PROC_SELF_CMDLINE "proc/self/cmdline"
#define HK_PROC_SELF_EXE "proc/self/exe"
#define HK_PROC_SELF_FD "proc/self/fd"
#define HK_PROC_SELF_MAPS "proc/self/maps"
#define HK_PROC_SELF_PAGEMAP "proc/self/pagemap"
#define HK_PROC_SELF_STATUS "proc/self/status"
#define HK_PROC_SYS "proc/sys"
#define HK_PROC_SYS_VM HK_PROC_SYS "/vm"
#define HK_PROC_SYS_KERNEL "proc/sys/kernel"
#define HK_SYS_HUGEPAGES "sys/kernel/mm/hugepages"
/* One size's directory: printf format, the size in kB (uint64_t). */
#define HK_SYS_HUGEPAGES_SIZE HK_SYS_HUGEPAGES "/hugepages-%" PRIu64 "kB"
#define HK_SYS_THP "sys/kernel/mm/transparent_hugepage"
#define HK_SYS_NODE "sys/devices/system/node"
#define HK_LOCK_DIR "run/hugekit"
#define HK_LOCK_NAME "hugekit.lock"
/* Obtainable pages and THP effectiveness: the buddy allocator's and the VM's counters. */
#define HK_PROC_BUDDYINFO "proc/buddyinfo"
#define HK_PROC_VMSTAT "proc/vmstat"
/* One mTHP size's counter: printf format, the size in kB (uint64_t) and the counter's name. */
#define HK_SYS_THP_STAT HK_SYS_THP "/hugepages-%" PRIu64 "kB/stats/%s"

/* Usage: other processes, SysV segments, hugetlb cgroups (v2). */
#define HK_PROC "proc"
#define HK_PROC_SYSVIPC_SHM "proc/sysvipc/shm"
#define HK_SYS_CGROUP "sys/fs/cgroup"
#define HK_SYS_CGROUP_UNIFIED HK_SYS_CGROUP "/unified"
#define HK_SYS_CGROUP_HUGETLB_V1 HK_SYS_CGROUP "/hugetlb" /* cgroup v1's hugetlb hierarchy */
#define HK_SYS_CPU0_L2_LINE_SIZE "sys/devices/system/cpu/cpu0/cache/index2/coherency_line_size"

/* The kernel's boot parameters (hugetlb_cma=). */
#define HK_PROC_CMDLINE "proc/cmdline"

/* Printable absolute form, for messages and dry-run lines. */
#define HK_ABS(rel) "/" rel
