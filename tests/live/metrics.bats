#!/usr/bin/env bats
# hugeadm --metrics on the running kernel, end to end: the units --generate
# units makes from a [metrics] section, the service's own ExecStart (read
# from the unit) run with the build's hugeadm, Debian's
# prometheus-node-exporter on 127.0.0.1 with that textfile directory, and the
# hugekit_ series in its /metrics, the 2 MiB pool as this test set it.

load live

D=/sys/kernel/mm/hugepages/hugepages-2048kB

setup_file() {
	# Skips belong in setup() (bats 1.8): here only lock and save where a test will run.
	if live_usable; then
		live_lock
		live_save
	fi
}

setup() {
	live_requirements
	hk_need_cmd prometheus-node-exporter prometheus-node-exporter
	hk_need_cmd curl curl
	hk_need_cmd promtool prometheus
}

teardown() {
	# The exporter this test started, and only it.
	if [ -n "${EXPORTER_PID:-}" ]; then
		kill "$EXPORTER_PID" 2> /dev/null || true
		wait "$EXPORTER_PID" 2> /dev/null || true
	fi
}

teardown_file() {
	live_restore
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# scrape PORT: node_exporter's /metrics, once it answers (10 s at most).
scrape() {
	local _
	for _ in $(seq 100); do
		curl -fsS "http://127.0.0.1:$1/metrics" 2> /dev/null && return 0
		sleep 0.1
	done
	return 1
}

@test "node_exporter serves the hugekit_ series the generated service writes into its textfile directory" {
	local out="$BATS_TEST_TMPDIR/units" tf="$BATS_TEST_TMPDIR/textfile" cmd port
	mkdir -m 0700 "$out" "$tf"
	echo 8 > "$D/nr_hugepages"
	[ "$(cat "$D/nr_hugepages")" -eq 8 ] || hk_skip "the kernel gave $(cat "$D/nr_hugepages") of 8 pages of 2 MiB"
	printf '[metrics]\ntextfile_dir = %s\ninterval = 15s\n' "$tf" > "$BATS_TEST_TMPDIR/m.conf"
	hugeadm --generate units --config "$BATS_TEST_TMPDIR/m.conf" --output "$out"
	cmd=$(sed -n 's/^ExecStart=//p' "$out/hugekit-metrics.service")
	read -r -a words <<<"$cmd"
	assert_equal "${words[1]}" "--metrics=$tf/hugekit.prom"
	# The service's command, with the build's hugeadm for the installed one.
	run --separate-stderr hugeadm "${words[@]:1}"
	assert_success
	assert_equal "$stderr" ""
	run --separate-stderr promtool check metrics < "$tf/hugekit.prom"
	assert_success
	port=$(free_port)
	prometheus-node-exporter --collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$tf" --web.listen-address="127.0.0.1:$port" \
		> "$BATS_TEST_TMPDIR/exporter.log" 2>&1 &
	EXPORTER_PID=$!
	run scrape "$port"
	assert_success
	assert_line 'hugekit_pool_pages{page_size="2097152"} 8'
	assert_line 'hugekit_pool_minimum_pages{page_size="2097152"} 8'
	assert_line --regexp '^hugekit_pool_obtainable_pages\{page_size="2097152"\} [0-9.e+]+$'
	assert_line --regexp '^hugekit_thp_info\{defrag="[a-z+]+",enabled="[a-z]+",shmem_enabled="[a-z_]+"\} 1$'
	assert_line --regexp '^hugekit_thp_fault_alloc_total [0-9.e+]+$'
	assert_line 'hugekit_config_present 1'
	assert_line 'hugekit_config_drift 0'
	assert_line 'hugekit_metrics_errors 0'
	assert_line --partial '# TYPE hugekit_thp_fault_alloc_total counter'
	# The textfile collector read it without a complaint.
	assert_line 'node_textfile_scrape_error 0'
	# The pool changes, the service runs again: the exporter serves the new file.
	echo 4 > "$D/nr_hugepages"
	hugeadm "${words[@]:1}"
	run scrape "$port"
	assert_line 'hugekit_pool_pages{page_size="2097152"} 4'
	run ls -A "$tf"
	assert_output hugekit.prom
}
