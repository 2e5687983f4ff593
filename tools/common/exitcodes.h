/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Exit codes are an interface: scripts test them. libhugetlbfs and util-linux
 * use 0 for success and 1 for any failure, usage errors included.
 */
#pragma once

#define HK_EXIT_SUCCESS 0
#define HK_EXIT_FAILURE 1
