#!/usr/bin/env bats
# contrib/ansible's hugekit role, run for real by ansible-playbook against
# localhost, with tests/fleet/fake-hugeadm (the --apply/--check contract on a
# state file) standing in for the machine: no root needed, nothing outside
# the test's directory is written.

load fleet

setup() {
	fleet_requirements
	D=$BATS_TEST_TMPDIR
	fleet_env "$D"
	export HK_FAKE_STATE="$D/machine" HK_FAKE_LOG="$D/hugeadm.log"
	unset HK_FAKE_POOL_LIMIT
	printf 'pool 2M minimum=0\nthp enabled=always\n' > "$HK_FAKE_STATE"
	fleet_playbook "$D"
	vars 64
}

# vars MINIMUM [EXTRA]: the role's variables: a 2M pool minimum, THP madvise,
# one drop-in, the fake hugeadm; EXTRA is appended as it is.
vars() {
	cat > "$D/vars.yml" <<-EOF
		---
		hugekit_hugeadm: $FAKE_HUGEADM
		hugekit_config:
		  pool 2M:
		    minimum: $1
		  thp:
		    enabled: madvise
		hugekit_conf_d:
		  50-db:
		    sysctl:
		      vm.min_free_kbytes: 67584
		${2:-}
	EOF
}

@test "first run changes the machine, the second changes nothing" {
	fleet_run "$D"
	assert_success
	[ "$changed" -gt 0 ] || fail "first run: changed=$changed"
	assert_equal "$(grep 'pool 2M minimum' "$HK_FAKE_STATE")" "pool 2M minimum=64"
	grep -qx 'thp enabled=madvise' "$HK_FAKE_STATE"
	grep -qx 'sysctl vm.min_free_kbytes=67584' "$HK_FAKE_STATE"
	assert_output --partial 'change pool 2M minimum: 0 -> 64;'
	# The files, as the role installs them.
	run cat "$D/etc/hugekit/hugekit.conf"
	assert_line 'minimum = 64'
	assert_line 'enabled = madvise'
	grep -qx 'vm.min_free_kbytes = 67584' "$D/etc/hugekit/conf.d/50-db.conf"
	assert_equal "$(stat -c %a "$D/etc/hugekit/hugekit.conf" "$D/etc/hugekit/conf.d/50-db.conf" "$D/etc/hugekit/conf.d")" \
		"$(printf '644\n644\n755')"
	# Outside /etc/hugekit every file is given to hugeadm (it reads a given file alone).
	assert_equal "$(cat "$HK_FAKE_LOG")" "$(printf '%s\n' \
		"--apply --json $D/etc/hugekit/hugekit.conf" "--apply --json $D/etc/hugekit/conf.d/50-db.conf")"

	cp "$HK_FAKE_STATE" "$D/after-first"
	fleet_run "$D"
	assert_success
	assert_equal "$changed" 0
	cmp "$HK_FAKE_STATE" "$D/after-first"
	assert_equal "$(grep -c -- '--apply' "$HK_FAKE_LOG")" 4
}

@test "after a drift, check mode reports changed and changes nothing; a run repairs it" {
	fleet_run "$D"
	assert_success
	sed -i 's/^pool 2M minimum=.*/pool 2M minimum=12/' "$HK_FAKE_STATE"
	cp "$HK_FAKE_STATE" "$D/drifted"
	: > "$HK_FAKE_LOG"

	fleet_run "$D" --check --diff
	assert_success
	assert_equal "$changed" 1 # hugeadm's task alone: the files are as they should be
	assert_output --partial 'difference pool 2M minimum: 12 wanted 64;'
	assert_output --partial '-pool 2M minimum = 12'
	assert_output --partial '+pool 2M minimum = 64'
	cmp "$HK_FAKE_STATE" "$D/drifted"
	run grep -c -- '--apply' "$HK_FAKE_LOG"
	assert_output 0
	run grep -c -- '--check --json' "$HK_FAKE_LOG"
	assert_output 2
	# The scratch copy of the configuration was made in this run's TMPDIR and is gone.
	run find "$D/tmp" -maxdepth 0 -newer "$D/drifted"
	assert_output "$D/tmp"
	run find "$D/ansible-tmp" "$D/tmp" -maxdepth 1 -name 'ansible.*hugekit' -newer "$D/drifted"
	assert_output ''

	fleet_run "$D"
	assert_success
	assert_equal "$changed" 1
	grep -qx 'pool 2M minimum=64' "$HK_FAKE_STATE"
}

@test "check mode compares the machine with the configuration it would install" {
	fleet_run "$D"
	assert_success
	vars 32
	# The machine holds 64, the installed file says 64, the play would install 32:
	# the file's task and hugeadm's both report changed.
	fleet_run "$D" --check
	assert_success
	assert_equal "$changed" 2
	assert_output --partial 'difference pool 2M minimum: 64 wanted 32;'
	grep -qx 'minimum = 64' "$D/etc/hugekit/hugekit.conf"
	grep -qx 'pool 2M minimum=64' "$HK_FAKE_STATE"

	# The machine already holds 32: only the file would change.
	sed -i 's/^pool 2M minimum=.*/pool 2M minimum=32/' "$HK_FAKE_STATE"
	fleet_run "$D" --check
	assert_success
	assert_equal "$changed" 1
	grep -qx 'minimum = 64' "$D/etc/hugekit/hugekit.conf"
}

@test "check mode on a machine never configured changes nothing, not even the files" {
	fleet_run "$D" --check
	assert_success
	[ "$changed" -gt 0 ] || fail "changed=$changed"
	assert_output --partial 'difference thp enabled: always wanted madvise;'
	[ ! -e "$D/etc/hugekit" ]
	assert_equal "$(cat "$HK_FAKE_STATE")" "$(printf 'pool 2M minimum=0\nthp enabled=always')"
}

@test "a configuration error fails the play with hugeadm's message" {
	cat > "$D/vars.yml" <<-EOF
		---
		hugekit_hugeadm: $FAKE_HUGEADM
		hugekit_config:
		  pool 2M:
		    minmum: 64
	EOF
	cp "$HK_FAKE_STATE" "$D/before"
	fleet_run "$D"
	assert_failure
	assert_equal "$failed" 1
	assert_output --partial "hugeadm: $D/etc/hugekit/hugekit.conf:4: unknown key 'minmum' in [pool 2M]"
	cmp "$HK_FAKE_STATE" "$D/before"
	# The same in check mode.
	fleet_run "$D" --check
	assert_failure
	assert_output --regexp "hugekit.conf:4: unknown key 'minmum' in \[pool 2M\]"
}

@test "a pool that comes up short: a warning, and a failure with hugekit_strict" {
	export HK_FAKE_POOL_LIMIT=40
	fleet_run "$D"
	assert_success
	assert_output --partial 'pool 2M minimum: reached 40 of 64'
	grep -qx 'pool 2M minimum=40' "$HK_FAKE_STATE"

	vars 64 'hugekit_strict: true'
	fleet_run "$D"
	assert_failure
	assert_equal "$failed" 1
	assert_output --partial 'pool 2M minimum: reached 40 of 64'
	grep -q -- '--apply --json --strict' "$HK_FAKE_LOG"
}

@test "hugekit_config_src installs a file as it is" {
	printf '[pool 2M]\nminimum = 8 # from a file\n' > "$D/mine.conf"
	vars 64 "hugekit_config_src: $D/mine.conf"
	fleet_run "$D"
	assert_success
	cmp "$D/mine.conf" "$D/etc/hugekit/hugekit.conf"
	grep -qx 'pool 2M minimum=8' "$HK_FAKE_STATE"
	fleet_run "$D"
	assert_equal "$changed" 0
}

@test "hugekit_apply without files runs hugeadm alone (it reads /etc/hugekit itself)" {
	mkdir -p "$D/etc/conf.d"
	printf '[thp]\nenabled = never\n' > "$D/etc/hugekit.conf"
	printf '[pool 1G]\nminimum = 2\n' > "$D/etc/conf.d/10-big.conf"
	export HK_FAKE_ETC="$D/etc"
	run ansible -i localhost, -c local localhost -M "$ROLE_DIR/library" -m hugekit_apply -a "hugeadm=$FAKE_HUGEADM"
	assert_success
	assert_output --partial 'CHANGED'
	assert_equal "$(cat "$HK_FAKE_LOG")" "--apply --json"
	grep -qx 'pool 1G minimum=2' "$HK_FAKE_STATE"
	grep -qx 'thp enabled=never' "$HK_FAKE_STATE"
	run ansible -i localhost, -c local localhost -M "$ROLE_DIR/library" -m hugekit_apply -a "hugeadm=$FAKE_HUGEADM"
	assert_success
	assert_output --partial 'SUCCESS'
	# A hugeadm that is not there is named.
	run ansible -i localhost, -c local localhost -M "$ROLE_DIR/library" -m hugekit_apply -a "hugeadm=no-such-hugeadm"
	assert_failure
	assert_output --partial 'no-such-hugeadm'
}

@test "the role, its module and the example playbook are well formed" {
	run ansible-doc -M "$ROLE_DIR/library" hugekit_apply
	assert_success
	assert_output --partial 'HUGEKIT_APPLY'
	run ansible-playbook --syntax-check -i localhost, "$HK_SOURCE_DIR/contrib/ansible/site.yml"
	assert_success
	if command -v yamllint > /dev/null; then
		run yamllint -s -d '{extends: default, rules: {line-length: {max: 160}}}' "$HK_SOURCE_DIR/contrib/ansible"
		assert_success
	fi
}
