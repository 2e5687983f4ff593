#!/bin/sh
# Runs inside the two-node QEMU guest of tests/vm/run-vm-tests.sh for
# tests/vm/boot-line.sh: the guest was booted with a per-node huge page line,
# and each node must hold exactly the pages it asks for. Same protocol as
# guest-tests.sh: `ok NAME` / `not ok NAME` (details as `#` lines), `skip ...`
# for what cannot be tested here; exit status 1 when any check failed.
#
# The host puts two files next to this script:
#   /hk/boot-line.cmdline  the kernel parameters under test, one line
#   /hk/boot-line.expect   `SIZE_KB NODE COUNT` lines: every node of every
#                          size the line configures; a size not listed must
#                          have no pages at all
# Figures (what the guest saw) are printed as `# figure SIZE_KB node N: C` lines.

# check, show, equals and the counters.
# shellcheck source=tests/vm/guest-lib.sh
. /hk/guest-lib.sh

mm=/sys/kernel/mm/hugepages
nodes=/sys/devices/system/node

# cmdline_has LINE: /proc/cmdline holds LINE as whole words, in order.
cmdline_has() {
	case " $(cat /proc/cmdline) " in
	*" $1 "*) return 0 ;;
	esac
	echo "/proc/cmdline: $(cat /proc/cmdline)"
	echo "want in it:    $1"
	return 1
}

# json_total SIZE_BYTES NODE WANT: `hugeadm --pool-list --per-node --json`
# has the entry {"node": NODE, "size": SIZE_BYTES, "total": WANT}.
json_total() {
	hugeadm --pool-list --per-node --json > /tmp/per-node.json || return 1
	got=$(awk -v size="$1" -v node="$2" '
		{ v = $2; sub(/,$/, "", v) }
		$1 == "\"node\":" { n = v }
		$1 == "\"size\":" { s = v }
		$1 == "\"total\":" && n == node && s == size { print v; exit }
	' /tmp/per-node.json)
	[ "$got" = "$3" ] || {
		echo "size $1 node $2: want total $3, got '$got'"
		cat /tmp/per-node.json
		return 1
	}
}

# json_minimum SIZE_BYTES WANT: `hugeadm --pool-list --json` says the pool's
# "minimum" (persistent pages) is WANT.
json_minimum() {
	hugeadm --pool-list --json > /tmp/pools.json || return 1
	got=$(awk -v size="$1" '
		$1 == "\"size\":" { v = $2; sub(/,$/, "", v); in_pool = (v == size) }
		in_pool && $1 == "\"minimum\":" { v = $2; sub(/,$/, "", v); print v; exit }
	' /tmp/pools.json)
	[ "$got" = "$2" ] || {
		echo "size $1: want minimum $2, got '$got'"
		cat /tmp/pools.json
		return 1
	}
}

echo "# /proc/cmdline: $(cat /proc/cmdline)"
show sh -c 'dmesg | grep -i -e hugetlb -e hugepage'
# Where the nodes' memory lies (a 1 GiB page needs a free, aligned 1 GiB of it).
show sh -c 'dmesg | grep -e "NUMA: Node" -e "node   [0-9]: \[" -e "NODE_DATA(" -e "RAMDISK:"'
show ls $mm

check two-numa-nodes equals 0-1 cat $nodes/online
check boot-line-files test -s /hk/boot-line.cmdline -a -s /hk/boot-line.expect
line=$(cat /hk/boot-line.cmdline)
check cmdline-holds-line cmdline_has "$line"

sizes=$(awk '{ print $1 }' /hk/boot-line.expect | sort -u | tr '\n' ' ')
tested=
for kb in $sizes; do
	if [ ! -d "$mm/hugepages-${kb}kB" ]; then
		if [ "$kb" = 1048576 ]; then
			# The CPU has no pdpe1gb: the kernel refuses hugepagesz=1G and
			# ignores the hugepages= after it; the other sizes still count.
			echo "skip ${kb}kB: the guest has no 1 GiB page size (CPU flag pdpe1gb missing); 1 GiB pages NOT tested"
		else
			check "size-${kb}kB-exists" test -d "$mm/hugepages-${kb}kB"
		fi
		continue
	fi
	tested="$tested $kb"
	sum=0
	while read -r size node count; do
		[ "$size" = "$kb" ] || continue
		sum=$((sum + count))
		got=$(cat "$nodes/node$node/hugepages/hugepages-${kb}kB/nr_hugepages" 2> /dev/null)
		echo "# figure ${kb}kB node $node: ${got:-?} pages (want $count)"
		check "sysfs-${kb}kB-node$node-$count" equals "$count" \
			cat "$nodes/node$node/hugepages/hugepages-${kb}kB/nr_hugepages"
		check "hugeadm-json-${kb}kB-node$node-$count" json_total $((kb * 1024)) "$node" "$count"
	done < /hk/boot-line.expect
	check "sysfs-${kb}kB-total-$sum" equals "$sum" cat "$mm/hugepages-${kb}kB/nr_hugepages"
	check "hugeadm-json-${kb}kB-minimum-$sum" json_minimum $((kb * 1024)) "$sum"
done

# Sizes the line does not configure stay empty.
for d in "$mm"/hugepages-*kB; do
	kb=${d##*/hugepages-}
	kb=${kb%kB}
	case " $sizes " in
	*" $kb "*) continue ;;
	esac
	check "unconfigured-${kb}kB-empty" equals 0 cat "$d/nr_hugepages"
done
show hugeadm --pool-list --per-node
echo "# boot-line sizes tested:${tested:- none}"

echo "# guest-boot: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
