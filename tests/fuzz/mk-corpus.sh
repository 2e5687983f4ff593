#!/usr/bin/env bash
# Regenerate the seed corpora in tests/fuzz/corpus/<target> from the fixture
# trees, the goldens' command lines and the man pages' examples. Each seed is
# one file named after its content's sha1 (libFuzzer's own naming).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fx=$here/../fixtures/sysroot
out=$here/corpus
rm -rf "$out"
seed() { # seed TARGET: stdin is one seed
	local t=$1 f
	mkdir -p "$out/$t"
	f=$(mktemp)
	cat > "$f"
	mv "$f" "$out/$t/$(sha1sum < "$f" | cut -c1-40)"
}
for s in 2M 1G 2097152 0x200000 010 1k 64K 2MB 2MiB 2Mi 1T 1.5G 512X '64 M' -1 0 18446744073709551615 \
	18446744073709551616 9223372036854775807 16E 4096kB; do
	printf '%s' "$s" | seed size
done
for s in 0 0-1 0,2-3 '0-1023' 1024 '' 3-1 '1,1,1' '0-1
' 7 '0-'; do
	printf '%s' "$s" | seed nodelist
done
for s in '' 'glibc.malloc.hugetlb=1' 'glibc.malloc.mmap_threshold=1:glibc.malloc.arena_max=2' \
	'glibc.malloc.hugetlbx=1:a=b' ':::' 'glibc.malloc.hugetlb'; do
	for b in '\x00' '\x01' '\x02' '\x83'; do printf "$b%s" "$s" | seed tunables; done
done
for s in 0 '12
' 18446744073709551615 18446744073709551616 '1 2' ' 1' '+1' '1
2' 'always [madvise] never' '[always] madvise never
' 'always defer defer+madvise [madvise] never'; do
	printf '%s' "$s" | seed sysfs
done
for t in x86-1node x86-2node arm64 nohugetlb; do
	{ printf '\x00'; cat "$fx/$t/proc/meminfo"; } | seed meminfo
	{ printf '\x01'; cat "$fx/$t/proc/zoneinfo"; } | seed meminfo
	{ printf '\x00'; cat "$fx/$t/sys/devices/system/node/node0/meminfo"; } | seed meminfo
	seed mountinfo < "$fx/$t/proc/self/mountinfo"
	seed rt-mountinfo < "$fx/$t/proc/self/mountinfo"
done
# The container-sized table, cut to its hugetlbfs lines and a few others.
{ head -n 5 "$fx/mounts-long/proc/self/mountinfo"; grep hugetlbfs "$fx/mounts-long/proc/self/mountinfo" | head -n 20; } |
	tee >(seed rt-mountinfo) | seed mountinfo
printf '36 25 0:32 / /mnt/a\\040b rw,relatime shared:7 - hugetlbfs none rw,pagesize=1G,size=2G,min_size=1G,uid=0,mode=1777\n' |
	tee >(seed rt-mountinfo) | seed mountinfo
# Pool specifications as the CLI tests give them: '0' min, '1' max.
grep -ho -- '--pool-pages-m[ai][nx] [^ "]*' "$here"/../cli/*.bats "$here"/../live/*.bats | sort -u |
	while read -r opt spec; do
		k=0
		[ "$opt" = --pool-pages-max ] && k=1
		printf '%s%s\n' "$k" "$spec" | seed pool-spec
	done
printf '02M:1G\n12M:+1G\n01G:2@0-1\n' | seed pool-spec
# The kernel's "unlimited" overcommit (2^64 - 1) with a pool of 2^32 pages, then +1 page.
printf '#\x06\x09\n02M:+1\n' | seed pool-spec
printf '#\x14\x14\x09\n02M:-1\n#\x09\x09\x09\x09\x09\n12M:+1\n' | seed pool-spec
# Option tables: three options, then argv.
printf '\x03hapool-list\nv2verbose\n.1sysroot\n--pool-list\n-v\n--sysroot\nx\n--pool\n-h\n--\nrest\n' | seed opts
printf '\x02a0all\nV0version\n-aV\n--vers\n--all=1\n' | seed opts
# buddyinfo ('\x00') and vmstat ('\x01') of the trees that have them, and a malformed line.
for t in x86-1node x86-2node; do
	{ printf '\x00'; cat "$fx/$t/proc/buddyinfo"; } | seed buddyinfo
	{ printf '\x01'; cat "$fx/$t/proc/vmstat"; } | seed buddyinfo
done
printf '\x00Node 0, zone Normal 1 2\nNode 1, zone DMA 3\n' | seed buddyinfo
# smaps: the usage tree's processes (hugetlb, SysV, heap and anonymous mappings).
head -n 60 "$fx/usage/proc/4242/smaps" | seed smaps
seed smaps < "$fx/usage/proc/4343/smaps"
seed smaps < "$fx/x86-1node/proc/self/smaps"
# Configurations: the example, the tests' own, and a few broken ones.
grep -v '^# ' "$here/../../etc/hugekit.conf.example" | sed 's/^#\([[a-z]\)/\1/' | seed config
printf '[pool 2M]\nminimum = 10@0, 20@1\nmaximum = 40\n[pool 1G]\nminimum = 2\n' | seed config
printf '[thp]\nenabled = never\n[sysctl]\nvm.min_free_kbytes = recommended\nkernel.shmmax = recommended\n' | seed config
printf '[mount /dev/hugepages-2M]\npagesize = 2M\nuser = 0\nmode = 0770\nsize = 1G\nmin_size = 50%%\n' | seed config
printf '[cgroup db.slice/pg]\nhugetlb.2M.max = 64M\nhugetlb.1GB.rsvd.max = max\n[boot]\nhugetlb_cma = 0:2G, 1:2G\n' | seed config
printf '[pool 2M\nminimum 5\n= 3\n[pool 2M]\nminimum = 1\nminimum = 2\n' | seed config
