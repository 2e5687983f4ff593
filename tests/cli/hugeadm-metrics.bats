#!/usr/bin/env bats
# hugeadm --metrics on fixture trees: Prometheus's text format (golden files,
# promtool check metrics), the configuration's drift, label values escaped,
# --json, --metrics=FILE replaced whole in a directory another user may
# write (a link at FILE's name replaced, never followed; a link in its path
# refused), what could not be read, the options around it, and
# hugekit-metrics.service and .timer from --generate units with [metrics].

load helpers

# metrics ROOT ARGS...: hugeadm --sysroot ROOT --metrics ARGS...
metrics() {
	local root=$1
	shift
	"$HUGEADM" --sysroot "$root" --metrics "$@"
}

# promcheck FILE: promtool check metrics finds nothing in FILE, not even a lint.
promcheck() {
	hk_need_cmd promtool prometheus
	run --separate-stderr promtool check metrics < "$1"
	assert_success
	assert_output ""
	assert_equal "$stderr" ""
}

@test "the pools, nodes, THP and cgroups of each tree, as golden files" {
	for t in x86-1node x86-2node arm64 usage; do
		golden "hugeadm/metrics-$t" metrics "$(fixture "$t")"
	done
}

@test "promtool check metrics takes the output of each tree, with and without a configuration" {
	local root t
	for t in x86-1node x86-2node arm64 usage mounts-long; do
		root=$(fixture "$t")
		metrics "$root" > "$BATS_TEST_TMPDIR/$t.prom"
		promcheck "$BATS_TEST_TMPDIR/$t.prom"
	done
	mkdir -p "$root/etc/hugekit"
	printf '[pool 2M]\nminimum = 3\n' > "$root/etc/hugekit/hugekit.conf"
	metrics "$root" > "$BATS_TEST_TMPDIR/conf.prom"
	grep -qx 'hugekit_config_drift [01]' "$BATS_TEST_TMPDIR/conf.prom"
	promcheck "$BATS_TEST_TMPDIR/conf.prom"
}

@test "promtool check metrics takes the running machine's" {
	run --separate-stderr "$HUGEADM" --metrics
	assert_success
	assert_equal "$stderr" ""
	assert_line --regexp '^hugekit_pool_pages\{page_size="[0-9]+"\} [0-9]+$'
	assert_line --regexp '^hugekit_config_present [01]$'
	assert_line 'hugekit_metrics_errors 0'
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/live.prom"
	promcheck "$BATS_TEST_TMPDIR/live.prom"
}

@test "the configuration: absent, matching, drifted (and how many), not valid: as --check says" {
	local root
	root=$(fixture x86-2node)
	run metrics "$root"
	assert_line 'hugekit_config_present 0'
	refute_line --partial 'hugekit_config_drift'
	mkdir -p "$root/etc/hugekit"
	printf '[pool 2M]\nminimum = 21\n[thp]\nenabled = madvise\n' > "$root/etc/hugekit/hugekit.conf"
	run "$HUGEADM" --sysroot "$root" --check
	assert_success
	run metrics "$root"
	assert_line 'hugekit_config_present 1'
	assert_line 'hugekit_config_valid 1'
	assert_line 'hugekit_config_items 2'
	assert_line 'hugekit_config_drift 0'
	assert_line 'hugekit_config_drifted_items 0'
	sed -i 's/= 21/= 30/; s/= madvise/= always/' "$root/etc/hugekit/hugekit.conf"
	run "$HUGEADM" --sysroot "$root" --check
	assert_failure 3
	run metrics "$root"
	assert_success
	assert_line 'hugekit_config_drift 1'
	assert_line 'hugekit_config_drifted_items 2'
	# --config FILE: that file alone.
	printf '[pool 2M]\nminimum = 21\n' > "$BATS_TEST_TMPDIR/one.conf"
	run metrics "$root" --config "$BATS_TEST_TMPDIR/one.conf"
	assert_line 'hugekit_config_drift 0'
	# Not valid: said as warnings, the metric 0, no drift, exit 0.
	printf '[pool 2M]\nminimum = lots\n' > "$root/etc/hugekit/hugekit.conf"
	run --separate-stderr metrics "$root"
	assert_success
	assert_line 'hugekit_config_present 1'
	assert_line 'hugekit_config_valid 0'
	refute_line --partial 'hugekit_config_drift'
	assert_equal "$stderr" "hugeadm:WARNING: $root/etc/hugekit/hugekit.conf:2: [pool 2M] 'lots': 'lots' is not a page count or a whole number of pages (a size with K, M or G)"
}

@test "a cgroup named with quotes, backslashes and a newline: escaped as the format says, promtool takes it" {
	local root cg
	root=$(fixture usage)
	cg=$'we"ird\\name\nx'
	mkdir "$root/sys/fs/cgroup/$cg"
	echo 4194304 > "$root/sys/fs/cgroup/$cg/hugetlb.2MB.current"
	echo max > "$root/sys/fs/cgroup/$cg/hugetlb.2MB.max"
	metrics "$root" > "$BATS_TEST_TMPDIR/out.prom"
	grep -qxF 'hugekit_cgroup_usage_bytes{cgroup="/we\"ird\\name\nx",page_size="2097152"} 4194304' "$BATS_TEST_TMPDIR/out.prom"
	grep -qxF 'hugekit_cgroup_limit_bytes{cgroup="/we\"ird\\name\nx",page_size="2097152"} +Inf' "$BATS_TEST_TMPDIR/out.prom"
	promcheck "$BATS_TEST_TMPDIR/out.prom"
}

@test "a cgroup named with bytes that are not UTF-8, or with '%': %XX, one label value per name, promtool takes it" {
	local root cg d
	root=$(fixture usage)
	# Any user given a part of the cgroup tree can name a cgroup so; the
	# format wants UTF-8, and two names must not give one series.
	for cg in $'x\xff' 'x%FF' $'caf\xc3\xa9'; do
		d="$root/sys/fs/cgroup/$cg"
		mkdir "$d"
		echo 2097152 > "$d/hugetlb.2MB.current"
		echo max > "$d/hugetlb.2MB.max"
	done
	metrics "$root" > "$BATS_TEST_TMPDIR/out.prom"
	grep -qxF 'hugekit_cgroup_usage_bytes{cgroup="/x%FF",page_size="2097152"} 2097152' "$BATS_TEST_TMPDIR/out.prom"
	grep -qxF 'hugekit_cgroup_usage_bytes{cgroup="/x%25FF",page_size="2097152"} 2097152' "$BATS_TEST_TMPDIR/out.prom"
	grep -qxF $'hugekit_cgroup_usage_bytes{cgroup="/caf\xc3\xa9",page_size="2097152"} 2097152' "$BATS_TEST_TMPDIR/out.prom"
	promcheck "$BATS_TEST_TMPDIR/out.prom"
}

@test "a cgroup that only limits reservations (rsvd.max), holding nothing: its limit is a sample" {
	local root d
	root=$(fixture usage)
	d="$root/sys/fs/cgroup/rsvd-only.slice"
	mkdir "$d"
	echo 0 > "$d/hugetlb.2MB.current"
	echo max > "$d/hugetlb.2MB.max"
	echo 0 > "$d/hugetlb.2MB.rsvd.current"
	echo 4194304 > "$d/hugetlb.2MB.rsvd.max"
	metrics "$root" > "$BATS_TEST_TMPDIR/out.prom"
	grep -qxF 'hugekit_cgroup_reserved_limit_bytes{cgroup="/rsvd-only.slice",page_size="2097152"} 4194304' \
		"$BATS_TEST_TMPDIR/out.prom" || fail "no reservation limit of /rsvd-only.slice: $(grep cgroup_reserved "$BATS_TEST_TMPDIR/out.prom")"
	promcheck "$BATS_TEST_TMPDIR/out.prom"
}

@test "a kernel without hugetlb: THP and the configuration, no pool samples, exit 0 (the timer does not fail)" {
	local root
	root=$(fixture nohugetlb)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --metrics
	assert_success
	assert_equal "$stderr" ""
	assert_line --regexp '^hugekit_thp_info\{'
	assert_line 'hugekit_config_present 0'
	refute_line --partial hugekit_pool_
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/out.prom"
	promcheck "$BATS_TEST_TMPDIR/out.prom"
}

@test "--json: the same families and samples, +Inf as null" {
	local root
	hk_need_cmd jq jq
	root=$(fixture usage)
	run metrics "$root" --json
	assert_success
	run jq -r '.metrics[] | select(.name == "hugekit_pool_minimum_pages") | .samples[] | "\(.labels.page_size) \(.value)"' <<<"$output"
	assert_output "$(metrics "$root" | sed -n 's/^hugekit_pool_minimum_pages{page_size="\([0-9]*\)"} /\1 /p')"
	run bash -c 'hugeadm --sysroot "$1" --metrics --json | jq -c ".metrics[] | select(.name == \"hugekit_cgroup_reserved_limit_bytes\") | .samples[0]"' j "$root"
	assert_output '{"labels":{"cgroup":"/db.slice","page_size":"2097152"},"value":null}'
	run bash -c 'hugeadm --sysroot "$1" --metrics --json | jq -r "[.metrics[].name] | length"' j "$root"
	assert_output "$(metrics "$root" | grep -c '^# TYPE')"
}

@test "--metrics=FILE: the same text, mode 0644, a new file each time (renamed over FILE)" {
	local root dir="$BATS_TEST_TMPDIR/tf" ino
	root=$(fixture x86-2node)
	mkdir "$dir"
	run --separate-stderr metrics "$root" "$dir/hugekit.prom"
	assert_success
	assert_output ""
	diff -u <(metrics "$root") "$dir/hugekit.prom"
	assert_equal "$(stat -c %a "$dir/hugekit.prom")" 644
	ino=$(stat -c %i "$dir/hugekit.prom")
	(umask 077 && "$HUGEADM" --sysroot "$root" --metrics="$dir/hugekit.prom")
	assert_equal "$(stat -c %a "$dir/hugekit.prom")" 644
	[ "$(stat -c %i "$dir/hugekit.prom")" != "$ino" ] || fail "FILE was written in place, not replaced"
	assert_equal "$(ls -A "$dir")" hugekit.prom
	# Relative, from the working directory.
	(cd "$dir" && "$HUGEADM" --sysroot "$root" --metrics=rel.prom)
	diff -u <(metrics "$root") "$dir/rel.prom"
}

@test "--metrics=FILE in a directory another user writes: a link at FILE's name is replaced, its target untouched" {
	local root dir="$BATS_TEST_TMPDIR/tf" mode i
	hk_need_root "to make a directory another user writes, as node_exporter's may be"
	root=$(fixture x86-2node)
	mkdir -m 1777 "$dir"
	chown nobody "$dir"
	echo precious > "$BATS_TEST_TMPDIR/victim"
	for mode in "" named; do
		# What the other user left: a link at the name, links and files at names hugeadm might pick.
		ln -sfn "$BATS_TEST_TMPDIR/victim" "$dir/hugekit.prom"
		for i in $(seq 20); do ln -sfn "$BATS_TEST_TMPDIR/victim" "$dir/.hugekit.prom.$i"; done
		run --separate-stderr env HK_TMPFILE="$mode" "$HUGEADM" --sysroot "$root" --metrics="$dir/hugekit.prom"
		assert_success
		assert_equal "$stderr" ""
		assert_equal "$(cat "$BATS_TEST_TMPDIR/victim")" precious
		[ -f "$dir/hugekit.prom" ] && [ ! -L "$dir/hugekit.prom" ] || fail "FILE is not a plain file now"
		diff -u <(metrics "$root") "$dir/hugekit.prom"
		assert_equal "$(stat -c %u "$dir/hugekit.prom")" 0
		# Nothing left behind but what the other user made.
		assert_equal "$(find "$dir" -mindepth 1 ! -type l | wc -l)" 1
	done
	# A directory at the name: not replaced, said.
	rm "$dir/hugekit.prom"
	mkdir "$dir/hugekit.prom"
	run --separate-stderr metrics "$root" "$dir/hugekit.prom"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "hugeadm:ERROR: $dir/hugekit.prom: renaming the new file failed: Is a directory"
}

@test "--metrics=FILE through a link in its path: refused, nothing written at the link's target" {
	local root
	root=$(fixture x86-2node)
	mkdir "$BATS_TEST_TMPDIR/real"
	ln -s "$BATS_TEST_TMPDIR/real" "$BATS_TEST_TMPDIR/link"
	run --separate-stderr metrics "$root" "$BATS_TEST_TMPDIR/link/hugekit.prom"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "hugeadm:ERROR: --metrics $BATS_TEST_TMPDIR/link: a symbolic link is in its path: not followed (name the directory itself)"
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/real")" ""
	run --separate-stderr metrics "$root" "$BATS_TEST_TMPDIR/nodir/hugekit.prom"
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --metrics $BATS_TEST_TMPDIR/nodir: No such file or directory"
	run --separate-stderr metrics "$root" "$BATS_TEST_TMPDIR/real/"
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --metrics $BATS_TEST_TMPDIR/real/: not a file name"
}

@test "--metrics=FILE without openat2 (ENOSYS, as under the unit's RestrictSUIDSGID=): written by the walk; through a link refused" {
	local root n=$HK_BUILD_DIR/tests/no-openat2
	root=$(fixture x86-2node)
	mkdir "$BATS_TEST_TMPDIR/real"
	ln -s "$BATS_TEST_TMPDIR/real" "$BATS_TEST_TMPDIR/link"
	run --separate-stderr "$n" "$HUGEADM" --sysroot "$root" --metrics="$BATS_TEST_TMPDIR/link/hugekit.prom"
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --metrics $BATS_TEST_TMPDIR/link: a symbolic link is in its path: not followed (name the directory itself)"
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/real")" ""
	run --separate-stderr "$n" "$HUGEADM" --sysroot "$root" --metrics="$BATS_TEST_TMPDIR/real/hugekit.prom"
	assert_success
	assert_equal "$stderr" ""
	grep -qx 'hugekit_pool_pages{page_size="2097152"} 24' "$BATS_TEST_TMPDIR/real/hugekit.prom"
}

@test "a part that cannot be read: said, counted in hugekit_metrics_errors, FILE written all the same, exit 1" {
	local root
	root=$(fixture x86-2node)
	rm "$root/proc/vmstat"
	mkdir "$root/proc/vmstat"
	run --separate-stderr metrics "$root" "$BATS_TEST_TMPDIR/m.prom"
	assert_failure 1
	grep -qx 'hugekit_metrics_errors 16' "$BATS_TEST_TMPDIR/m.prom"
	grep -qx 'hugekit_pool_pages{page_size="2097152"} 24' "$BATS_TEST_TMPDIR/m.prom"
	assert_equal "$output" ""
	assert_equal "${stderr_lines[0]}" "hugeadm:WARNING: metrics: cannot read the vmstat counter thp_fault_alloc: Is a directory"
	assert_equal "${stderr_lines[-1]}" "hugeadm:ERROR: 16 parts of the huge page state could not be read (see above; hugekit_metrics_errors says so too)"
}

@test "--metrics=FILE.prom with --json: refused (the collector reads every .prom as text), nothing written; another name takes JSON" {
	local root
	root=$(fixture x86-2node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --metrics="$BATS_TEST_TMPDIR/hugekit.prom" --json
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --metrics=$BATS_TEST_TMPDIR/hugekit.prom with --json: a .prom file is read as Prometheus's text format; give the JSON another name"
	[ ! -e "$BATS_TEST_TMPDIR/hugekit.prom" ] || fail "hugekit.prom was written"
	# A name with a newline and an escape sequence: said escaped, on one line.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --metrics="$BATS_TEST_TMPDIR/a"$'\n\e[31m'"b.prom" --json
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --metrics=$BATS_TEST_TMPDIR/a\\012\\033[31mb.prom with --json: a .prom file is read as Prometheus's text format; give the JSON another name"
	run "$HUGEADM" --sysroot "$root" --metrics="$BATS_TEST_TMPDIR/hugekit.json" --json
	assert_success
	jq -e '.metrics | length > 0' "$BATS_TEST_TMPDIR/hugekit.json"
}

@test "options: --metrics alone or with --config, --json, --sysroot; anything else refused" {
	local root
	root=$(fixture x86-2node)
	golden hugeadm/metrics-with-report "$HUGEADM" --sysroot "$root" --metrics --pool-list
	golden hugeadm/metrics-with-change "$HUGEADM" --sysroot "$root" --metrics --pool-pages-min 2M:1
	golden hugeadm/metrics-with-output "$HUGEADM" --sysroot "$root" --metrics --output "$BATS_TEST_TMPDIR"
	golden hugeadm/metrics-twice "$HUGEADM" --sysroot "$root" --metrics --metrics
	golden hugeadm/metrics-empty-file "$HUGEADM" --sysroot "$root" --metrics=
	golden hugeadm/config-without-generate "$HUGEADM" --sysroot "$root" --config x.conf --pool-list
	run --separate-stderr "$HUGEADM" --sysroot "$root" --metrics --config "$BATS_TEST_TMPDIR/none.conf" -v
	assert_success
	assert_line 'hugekit_config_present 0'
}

# The units --generate units writes into DIR from CONF (no other unit).
gen_units() {
	"$HUGEADM" --sysroot "$1" --generate units --config "$2" --output "$3"
}

@test "--generate units with [metrics]: hugekit-metrics.service and .timer, as golden files, and systemd-analyze verify takes them" {
	local root out="$BATS_TEST_TMPDIR/units"
	hk_need_cmd systemd-analyze systemd
	root=$(fixture x86-2node)
	mkdir -m 0700 "$out"
	printf '[metrics]\ntextfile_dir = /srv/node exporter/textfile\ninterval = 1h 30min\n' > "$BATS_TEST_TMPDIR/m.conf"
	gen_units "$root" "$BATS_TEST_TMPDIR/m.conf" "$out"
	run ls -A "$out"
	assert_output "$(printf '%s\n' hugekit-metrics.service hugekit-metrics.timer hugekit.service)"
	for f in hugekit-metrics.service hugekit-metrics.timer; do
		sed -e "s|$BATS_TEST_TMPDIR|@TMP@|g" -e 's|^ExecStart=/.*/hugeadm |ExecStart=@BINDIR@/hugeadm |' "$out/$f" > "$BATS_TEST_TMPDIR/$f"
		diff -u "$HK_EXPECTED/hugeadm/generate-$f" "$BATS_TEST_TMPDIR/$f" || fail "$f differs from its golden file"
	done
	# The defaults: Debian's textfile directory, every minute.
	printf '[metrics]\ninterval = 1min\n' > "$BATS_TEST_TMPDIR/d.conf"
	run "$HUGEADM" --sysroot "$root" --generate units --config "$BATS_TEST_TMPDIR/d.conf"
	assert_line --regexp '^ExecStart=/.*/hugeadm --metrics=/var/lib/prometheus/node-exporter/hugekit.prom --config '
	assert_line 'OnUnitActiveSec=1min'
	# Without [metrics]: no such units.
	run "$HUGEADM" --sysroot "$root" --generate units
	refute_output --partial hugekit-metrics
	printf '#!/bin/sh\nexit 0\n' > "$BATS_TEST_TMPDIR/fake-hugeadm"
	chmod +x "$BATS_TEST_TMPDIR/fake-hugeadm"
	sed -i "s|^ExecStart=[^ ]*|ExecStart=$BATS_TEST_TMPDIR/fake-hugeadm|" "$out"/*.service
	run --separate-stderr bash -c 'cd "$1" && systemd-analyze verify --man=no hugekit-metrics.service hugekit-metrics.timer' v "$out"
	assert_success
	assert_equal "$stderr" ""
}

@test "the service's own command (ExecStart, read from the unit) writes the textfile directory, and promtool takes it" {
	local root out="$BATS_TEST_TMPDIR/units" tf="$BATS_TEST_TMPDIR/textfile" cmd
	root=$(fixture usage)
	mkdir -m 0700 "$out" "$tf"
	printf '[metrics]\ntextfile_dir = %s\n' "$tf" > "$BATS_TEST_TMPDIR/m.conf"
	gen_units "$root" "$BATS_TEST_TMPDIR/m.conf" "$out"
	cmd=$(sed -n 's/^ExecStart=//p' "$out/hugekit-metrics.service")
	[ -n "$cmd" ] || fail "no ExecStart in hugekit-metrics.service"
	read -r -a words <<<"$cmd"
	# The build's hugeadm for the installed one, on the tree.
	"$HUGEADM" --sysroot "$root" "${words[@]:1}"
	run ls -A "$tf"
	assert_output hugekit.prom
	grep -qx 'hugekit_cgroup_usage_bytes{cgroup="/db.slice",page_size="2097152"} 6291456' "$tf/hugekit.prom"
	grep -qx 'hugekit_config_present 1' "$tf/hugekit.prom"
	promcheck "$tf/hugekit.prom"
}

@test "[metrics] errors: FILE:LINE of each, --generate writes nothing" {
	local root out="$BATS_TEST_TMPDIR/units"
	root=$(fixture x86-2node)
	mkdir -m 0700 "$out"
	printf '[metrics]\ntextfile_dir = var/lib/x\ninterval = 0min\nevery = 1s\n[metrics]\ninterval = 5 min\n' > "$BATS_TEST_TMPDIR/bad.conf"
	run --separate-stderr gen_units "$root" "$BATS_TEST_TMPDIR/bad.conf" "$out"
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: $BATS_TEST_TMPDIR/bad.conf:2: [metrics] textfile_dir 'var/lib/x': an absolute path without '.', '..', '//', control characters or a trailing '/', '\\' or blank
hugeadm:ERROR: $BATS_TEST_TMPDIR/bad.conf:3: [metrics] interval '0min': a time span, a number and a unit (s, min, h, d) for each part: 30s, 1min, 1h 30min
hugeadm:ERROR: $BATS_TEST_TMPDIR/bad.conf:4: unknown key 'every' in [metrics] (textfile_dir, interval)
hugeadm:ERROR: $BATS_TEST_TMPDIR/bad.conf:6: [metrics] interval '5 min': a time span, a number and a unit (s, min, h, d) for each part: 30s, 1min, 1h 30min
hugeadm:ERROR: $BATS_TEST_TMPDIR/bad.conf:6: key 'interval' is set twice in [metrics] (line 3)"
	assert_equal "$(ls -A "$out")" ""
}
