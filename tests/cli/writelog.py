#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A write log, normalized: what a run of hugeadm wrote, in the order it wrote it.

    writelog.py ROOT < LOG

LOG is either a dry run's shell lines ("echo VALUE > FILE", 2.23's quoting of
the value, with ' or ") or the library's log of the writes it made
("hugeadm:INFO: FILE = VALUE", --verbose 3). ROOT is the tree the files are
under ("/" for the running system). Printed: one "FILE=VALUE" line per file
written, at the place of its first write, with its last value, leaving out a
file whose last value is what it holds before the run (a THP mode file: its
[selection]). 2.23's option lines write intermediate and unchanged values (a
pool's overcommit kept, then set; the minimum written again after the
maximum): the log compares what the run changed, and in which order.
"""
import os
import re
import sys

root = sys.argv[1]
order, last = [], {}
for line in sys.stdin:
    line = line.rstrip("\n")
    m = re.match(r"^echo (.*) > (/\S+)$", line) or None
    if m:
        value, path = m.group(1), m.group(2)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
    else:
        m = re.match(r"^[\w-]+:INFO: (/\S+) = (.*)$", line)
        if not m:
            continue
        path, value = m.group(1), m.group(2)
    if path not in last:
        order.append(path)
    last[path] = value


def now(path):
    try:
        with open(os.path.join(root, path.lstrip("/"))) as f:
            text = f.read().strip()
    except OSError:
        return None
    sel = re.search(r"\[([^\]]+)\]", text)
    return sel.group(1) if sel else text


for path in order:
    if now(path) != last[path]:
        print(f"{path}={last[path]}")
