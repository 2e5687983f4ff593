#!/usr/bin/env bats
# contrib/ansible's hugekit role with the real hugeadm of the build on the
# running kernel: the 2 MiB pool's minimum 8 pages above what it is and a
# THP knob changed, a second run changes nothing, a drift is seen by check
# mode without being repaired, a run repairs it. As root, under the live lock;
# every value is restored. The configuration is written under the test's
# directory and given to hugeadm: /etc/hugekit is never touched.

load ../live/live
load fleet

setup() {
	live_requirements
	fleet_requirements
	HUGEADM_BIN="$HK_BUILD_DIR/tools/hugeadm"
	hk_need_built "$HUGEADM_BIN"
	live_lock
	live_save
	D=$BATS_TEST_TMPDIR
	fleet_env "$D"
}

teardown() {
	live_restore
}

# minimum: the 2 MiB pool's persistent pages (nr - surplus).
minimum() {
	echo $(($(cat "$HP/hugepages-2048kB/nr_hugepages") - $(cat "$HP/hugepages-2048kB/surplus_hugepages")))
}

@test "the role with the real hugeadm: changes, then changed=0, drift seen in check mode, repaired" {
	local min0 want thp0 thp1 pool=$HP/hugepages-2048kB
	min0=$(minimum)
	want=$((min0 + 8))
	# The kernel must be able to give 8 more pages (the saved values come back after).
	echo $(($(cat "$pool/nr_hugepages") + 8)) > "$pool/nr_hugepages"
	[ "$(minimum)" -ge "$want" ] || hk_skip "the kernel could not give 8 more 2 MiB pages"
	echo "$min0" > "$pool/nr_hugepages"
	[ "$(minimum)" -eq "$min0" ] || hk_skip "the 2 MiB pool could not be put back to $min0 (pages in use)"
	thp0=$(sed 's/.*\[\(.*\)\].*/\1/' "$THP/enabled")
	if [ "$thp0" = madvise ]; then thp1=never; else thp1=madvise; fi

	cat > "$D/vars.yml" <<-EOF
		---
		hugekit_hugeadm: $HUGEADM_BIN
		hugekit_config:
		  pool 2M:
		    minimum: $want
		  thp:
		    enabled: $thp1
	EOF
	fleet_playbook "$D"

	fleet_run "$D"
	assert_success
	[ "$changed" -gt 0 ] || fail "first run: changed=$changed"
	assert_equal "$(minimum)" "$want"
	grep -q "\[$thp1\]" "$THP/enabled"
	assert_output --partial "change pool 2M minimum: $min0 -> $want;"
	run "$HUGEADM_BIN" --check --json "$D/etc/hugekit/hugekit.conf"
	assert_success

	fleet_run "$D"
	assert_success
	assert_equal "$changed" 0

	# Drift: the pool back where it was. Check mode sees it and leaves it.
	echo "$min0" > "$pool/nr_hugepages"
	[ "$(minimum)" -eq "$min0" ] || hk_skip "the 2 MiB pool could not shrink back to $min0"
	fleet_run "$D" --check
	assert_success
	assert_equal "$changed" 1
	assert_output --partial "difference pool 2M minimum: $min0 wanted $want;"
	assert_equal "$(minimum)" "$min0"

	fleet_run "$D"
	assert_success
	assert_equal "$changed" 1
	assert_equal "$(minimum)" "$want"
}
