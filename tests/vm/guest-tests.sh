#!/bin/sh
# Runs inside the two-node QEMU guest of tests/vm/run-vm-tests.sh (busybox sh,
# as root, /proc, /sys and /dev mounted, the tools on PATH). Each check prints
# `ok NAME` or `not ok NAME` (with the command's output as `#` lines); /init
# counts them. A `skip ...` line is neither. The exit status is 1 when any
# check failed.

# check, show, equals and the counters.
# shellcheck source=tests/vm/guest-lib.sh
. /hk/guest-lib.sh

node_nr() {
	echo "/sys/devices/system/node/node$1/hugepages/hugepages-2048kB/nr_hugepages"
}

# set_nr NODE N: writes N to the node's 2 MiB pool.
set_nr() {
	echo "$2" > "$(node_nr "$1")"
}

# per_node_row NODE TOTAL: hugeadm --pool-list --per-node has the row
# `NODE 2097152 TOTAL TOTAL 0` (all pages free, none surplus).
per_node_row() {
	hugeadm --pool-list --per-node > /tmp/per-node || return 1
	grep -Eq "^ *$1 +2097152 +$2 +$2 +0 *\$" /tmp/per-node || {
		cat /tmp/per-node
		return 1
	}
}

# json_current SIZE N: hugeadm --pool-list --json says "current": N for SIZE.
json_current() {
	hugeadm --pool-list --json > /tmp/pools.json || return 1
	got=$(awk -v size="$1" '
		$1 == "\"size\":" { sub(/,$/, "", $2); in_pool = ($2 == size) }
		in_pool && $1 == "\"current\":" { sub(/,$/, "", $2); print $2; exit }
	' /tmp/pools.json)
	[ "$got" = "$2" ] || {
		echo "size $1: want current $2, got '$got'"
		cat /tmp/pools.json
		return 1
	}
}

check two-numa-nodes equals 0-1 cat /sys/devices/system/node/online
check pagesize-lists-2M sh -c 'pagesize -H | grep -qx 2097152'

check node0-write-4 set_nr 0 4
check node1-write-12 set_nr 1 12
check node0-reads-4 equals 4 cat "$(node_nr 0)"
check node1-reads-12 equals 12 cat "$(node_nr 1)"
show hugeadm --pool-list --per-node
check per-node-row-node0 per_node_row 0 4
check per-node-row-node1 per_node_row 1 12
check json-current-16 json_current 2097152 16

# ---- hugeadm's per-node pool options on a real two-node kernel -------------
# status_is N CMD...: CMD exits with status N (stderr kept in /tmp/err).
status_is() {
	want=$1
	shift
	"$@" 2> /tmp/err
	got=$?
	[ "$got" -eq "$want" ] || {
		echo "exit $got, want $want"
		cat /tmp/err
		return 1
	}
}

# err_has TEXT: the last status_is's stderr has TEXT.
err_has() {
	grep -qF -- "$1" /tmp/err || {
		cat /tmp/err
		return 1
	}
}

# below NODE N: the node's 2M pool has fewer than N pages.
below() {
	v=$(cat "$(node_nr "$1")")
	[ "$v" -lt "$2" ] || {
		echo "node $1 has $v pages, not fewer than $2"
		return 1
	}
}

global_nr() {
	cat /proc/sys/vm/nr_hugepages
}

# left_at OLD TARGET CMD...: the last status_is's warning says "became M", CMD
# reads M, and M is neither OLD (a put-back) nor TARGET: the pool was left
# where the kernel got it.
left_at() {
	old=$1
	target=$2
	shift 2
	m=$(sed -n 's/.*failed to set pool minimum to [0-9]* became \([0-9]*\).*/\1/p' /tmp/err | head -n 1)
	got=$("$@")
	if [ -z "$m" ] || [ "$got" != "$m" ] || [ "$m" -eq "$old" ] || [ "$m" -eq "$target" ]; then
		echo "became '$m', reads '$got'; old $old, target $target"
		cat /tmp/err
		return 1
	fi
}

# fill N: N files of 32 MiB under /run/fill whose pages are on node 0.
fill() {
	mkdir -p /run/fill
	i=0
	while [ "$i" -lt "$1" ]; do
		mempolicy bind 0 dd if=/dev/zero of=/run/fill/f$i bs=1M count=32 2> /dev/null || return 1
		i=$((i + 1))
	done
}

# fed CMD...: runs CMD (a hugeadm -v --hard), its messages in /tmp/err; each
# retry round it announces frees one file of /run/fill, so that rounds make
# progress for as long as there are files.
fed() {
	"$@" 2>&1 > /dev/null | while read -r line; do
		echo "$line"
		case $line in
		*"Retrying allocation"* | *"trying again"*)
			for f in /run/fill/*; do
				rm -f "$f"
				break
			done
			;;
		esac
	done > /tmp/err
}

# rounds_at_least N: the last --hard run retried N times or more, and said why it stopped.
rounds_at_least() {
	n=$(grep -cE 'Retrying allocation|trying again' /tmp/err)
	if [ "$n" -lt "$1" ] || ! grep -q -- 'giving up after' /tmp/err; then
		echo "$n rounds, want at least $1 and a reason to stop"
		cat /tmp/err
		return 1
	fi
}

if hugeadm --help 2>&1 | grep -q -- '--pool-pages-min'; then
	set_nr 0 0
	set_nr 1 0
	check hugeadm-pool-pages-min-per-node \
		hugeadm --pool-pages-min 2M:4@0 --pool-pages-min 2M:12@1
	check hugeadm-node0-reads-4 equals 4 cat "$(node_nr 0)"
	check hugeadm-node1-reads-12 equals 12 cat "$(node_nr 1)"
	check hugeadm-per-node-row-node0 per_node_row 0 4
	check hugeadm-per-node-row-node1 per_node_row 1 12
	check hugeadm-json-current-16 json_current 2097152 16

	# Relative to each listed node's own count.
	check hugeadm-relative-plus-2-on-both status_is 0 hugeadm --pool-pages-min 2M:+2@0-1
	check hugeadm-node0-reads-6 equals 6 cat "$(node_nr 0)"
	check hugeadm-node1-reads-14 equals 14 cat "$(node_nr 1)"
	check hugeadm-relative-minus-on-node1 status_is 0 hugeadm --pool-pages-min 2M:-4@1
	check hugeadm-node1-reads-10 equals 10 cat "$(node_nr 1)"

	# Bad nodes: exit 1 and nothing written.
	check hugeadm-unknown-node-exit-1 status_is 1 hugeadm --pool-pages-min 2M:1@0 --pool-pages-min 2M:1@7
	check hugeadm-unknown-node-message err_has "node 7 has no 2M pool"
	check hugeadm-unknown-node-node0-unchanged equals 6 cat "$(node_nr 0)"

	# A node of 640 MiB cannot hold 800 MiB: 2.23's warning, per node, exit 0.
	check hugeadm-short-node-exit-0 status_is 0 hugeadm --pool-pages-min 2M:400@0
	check hugeadm-short-node-warning err_has "failed to set pool minimum to 400 became"
	check hugeadm-short-node-names-node err_has "on node 0"
	check hugeadm-short-node-below-400 below 0 400
	check hugeadm-short-node-left-where-it-got left_at 6 400 cat "$(node_nr 0)"
	check hugeadm-short-node1-untouched equals 10 cat "$(node_nr 1)"

	# --strict: the same shortfall is put back and is exit 2.
	set_nr 0 6
	check hugeadm-strict-node-exit-2 status_is 2 hugeadm --strict --pool-pages-min 2M:400@0
	check hugeadm-strict-node-restored equals 6 cat "$(node_nr 0)"
	check hugeadm-strict-node-message err_has "put back"

	# The whole pool: a 1 GiB page never fits in nodes of 640 MiB, so the
	# global write comes up short without taking the memory the guest runs in
	# (a short 2M pool of the whole guest would leave nothing for processes).
	if [ -d /sys/kernel/mm/hugepages/hugepages-1048576kB ]; then
		g=/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages
		check hugeadm-short-global-exit-0 status_is 0 hugeadm --pool-pages-min 1G:1
		check hugeadm-short-global-warning err_has "failed to set pool minimum to 1 became 0"
		check hugeadm-short-gigantic-advice err_has "hugepagesz=1G hugepages=N"
		check hugeadm-short-per-node-report err_has "reached per node: 0: 0, 1: 0"
		check hugeadm-strict-global-exit-2 status_is 2 hugeadm --strict --pool-pages-min 1G:1
		check hugeadm-strict-global-message err_has "put back"
		# (From 0 to 0, a pool put back and one left where it got look the
		# same: the 2M tests below start elsewhere.)
		check hugeadm-strict-global-restored equals 0 cat "$g"
		# The guest's MemTotal (about 1.2 GiB) holds one 1 GiB page, not two.
		check hugeadm-beyond-memory-exit-1 status_is 1 hugeadm --pool-pages-min 1G:2
		check hugeadm-beyond-memory-message err_has "1G:2: 2 pages of 1G are more than the memory holds"
		check hugeadm-beyond-memory-unchanged equals 0 cat "$g"
		# --hard compacts and retries, and gives up within its bound.
		# No round can bring a page: exactly 3 rounds, with and without @NODES.
		check hugeadm-hard-exit-0 status_is 0 hugeadm -v --hard --pool-pages-min 1G:1
		check hugeadm-hard-warning err_has "failed to set pool minimum to 1 became 0"
		check hugeadm-hard-global-3-rounds equals 3 grep -c 'Retrying allocation' /tmp/err
		check hugeadm-hard-global-gives-up err_has "giving up after 3 rounds (the last ones without progress)"
		check hugeadm-hard-node-exit-0 status_is 0 hugeadm -v --hard --pool-pages-min 1G:1@1
		check hugeadm-hard-node-3-rounds equals 3 grep -c 'trying again' /tmp/err
		check hugeadm-hard-node-gives-up err_has "giving up after 3 rounds (the last ones without progress)"
		check hugeadm-gigantic-max-refused status_is 1 hugeadm --pool-pages-max 1G:1
		check hugeadm-gigantic-max-message err_has "gigantic"
	else
		echo "skip global shortfall: the guest CPU has no 1 GiB pages"
	fi

	# The whole pool through --obey-mempolicy: under a policy preferring node
	# 0, the global nr_hugepages_mempolicy grows on node 0 alone and comes up
	# short there, while the guest keeps node 1 for its processes.
	if command -v mempolicy > /dev/null; then
		set_nr 0 6
		set_nr 1 10
		check hugeadm-strict-global-2M-exit-2 status_is 2 \
			mempolicy preferred 0 hugeadm --strict --obey-mempolicy --pool-pages-min 2M:400
		check hugeadm-strict-global-2M-put-back equals 16 global_nr
		check hugeadm-strict-global-2M-node0-put-back equals 6 cat "$(node_nr 0)"
		check hugeadm-strict-global-2M-node1-untouched equals 10 cat "$(node_nr 1)"
		check hugeadm-short-global-2M-exit-0 status_is 0 \
			mempolicy preferred 0 hugeadm --obey-mempolicy --pool-pages-min 2M:400
		check hugeadm-short-global-2M-left-where-it-got left_at 16 400 global_nr

		# --hard while rounds bring pages (each frees 32 MiB on node 0): more
		# than 3 rounds, until 3 in a row bring none (or 30 s), on both paths.
		set_nr 0 0
		set_nr 1 0
		check hugeadm-hard-fill-node0 fill 5
		fed hugeadm -v --hard --pool-pages-min 2M:400@0
		show cat /tmp/err
		check hugeadm-hard-node-progress-rounds rounds_at_least 6
		set_nr 0 0
		rm -rf /run/fill
		check hugeadm-hard-fill-node0-again fill 5
		fed mempolicy preferred 0 hugeadm -v --hard --obey-mempolicy --pool-pages-min 2M:400
		show cat /tmp/err
		check hugeadm-hard-global-progress-rounds rounds_at_least 6
		set_nr 0 0
		rm -rf /run/fill
	else
		echo "skip --strict and --hard on 2M pages: no mempolicy helper in the guest"
	fi
	check hugeadm-back-to-zero status_is 0 hugeadm --pool-pages-min 2M:0@0-1
	check hugeadm-zero equals 0 global_nr
else
	echo "skip per-node hugeadm: option not built yet"
fi
# ---- End of hugeadm's per-node pool options ---------------------------------

echo "# guest-tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
