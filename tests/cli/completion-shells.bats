#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The zsh and fish completions that the build generates (completions/generate.sh,
# into $HK_BUILD_DIR/completions/zsh and fish), run by the shells' own completion
# machinery: fish's `complete -C LINE`, and zsh's compinit in an interactive zsh
# on a pseudo-terminal (zsh/zpty, tests/cli/zsh-complete.zsh) that a TAB
# completes. The built tools come first in PATH, as for the bash completion tests.

load helpers

setup() {
	hk_need_cmd zsh zsh
	hk_need_cmd fish fish
	ZSH_DIR=$HK_BUILD_DIR/completions/zsh
	FISH_DIR=$HK_BUILD_DIR/completions/fish
	hk_need_built "$ZSH_DIR/_hugeadm" "the zsh completions (completions/generate.sh)"
	hk_need_built "$FISH_DIR/hugeadm.fish" "the fish completions (completions/generate.sh)"
	export LC_ALL=C
	TOOLS=(pagesize hugeadm hugectl hugeedit tlbmiss_cost cpupcstat)
	ARM64=$HK_FIXTURES/arm64
	# A fish and a zsh of their own: no user configuration, no history.
	export XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/config XDG_DATA_HOME=$BATS_TEST_TMPDIR/data
	mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME"
}

# fish_complete LINE: the candidates fish offers for LINE, without descriptions, sorted.
fish_complete() {
	fish_complete_described "$1" | cut -f1 | sort -u
}

fish_complete_described() {
	# shellcheck disable=SC2016 # fish's variables, in fish's code
	fish -c 'set -p fish_complete_path $argv[1]; complete -C $argv[2]' "$FISH_DIR" "$1"
}

# zsh_complete LINE: the candidates zsh's completion system offers for LINE, sorted.
zsh_complete() {
	local out

	out=$(timeout 60 zsh "$BATS_TEST_DIRNAME/zsh-complete.zsh" "$ZSH_DIR" "$1") || return
	sort -u <<<"$out"
}

# both LINE: the candidates of both shells, sorted, the same or a failure.
both() {
	local z f

	z=$(zsh_complete "$1" | sort -u) || fail "zsh: no answer for '$1'"
	f=$(fish_complete "$1" | sort -u) || fail "fish: no answer for '$1'"
	# fish offers the whole word ("--opt=2M:1G"), zsh the part after the
	# last '=' or ':' of the word typed; fish offers "--heap=" beside "--heap".
	local cur=${1##*[[:blank:]]} pre
	pre=${cur%"${cur##*[:=]}"}
	f=$(while IFS= read -r w; do
		w=${w#"$pre"}
		[[ $w == -* ]] && w=${w%=}
		printf '%s\n' "$w"
	done <<<"$f" | sort -u)
	[ "$z" = "$f" ] || fail "zsh and fish differ for '$1':
zsh:
$z
fish:
$f"
	printf '%s\n' "$z"
}

@test "--list-options=table: every visible option, five tab-separated fields" {
	run hugeadm --list-options=table
	assert_success
	assert_line "$(printf 'pool-list\t\tnone\t\tlist the pool of each huge page size')"
	assert_line "$(printf 'apply\t\toptional\tFILE\tmake the machine match the configuration (/etc/hugekit/hugekit.conf and conf.d/, or FILE)')"
	assert_line "$(printf '\tv\tnone\t\traise the message level by one')"
	refute_line --partial list-options
	[ "$(cut -f1 <<<"$output" | grep -c .)" -eq "$(hugeadm --list-options | grep -c '^--')" ]
	run -1 pagesize --list-options=bogus
	assert_output "pagesize: bogus: unknown listing for --list-options (table)"
}

@test "zsh and fish offer every option of every tool's table, and only those" {
	local tool want z f
	for tool in "${TOOLS[@]}"; do
		want=$("$tool" --list-options | sort)
		[ -n "$want" ] || fail "$tool --list-options lists nothing"
		# fish: "--heap=" too, for an option whose argument is only after '='.
		f=$(fish_complete "$tool -" | sed 's/=$//' | sort -u)
		assert_equal "$f" "$want"
		z=$(zsh_complete "$tool -" | sed 's/=$//' | sort -u)
		assert_equal "$z" "$want"
	done
}

@test "every option argument has its values in completions/values.tab, and no line there is stale" {
	run grep -h '^# hugekit-' "$ZSH_DIR"/_* "$FISH_DIR"/*.fish
	assert_failure
	assert_output ''
}

@test "the generator names an argument values.tab leaves out, a stale line, and refuses unknown values" {
	local gen=$HK_SOURCE_DIR/completions/generate.awk
	printf 'frob\t\trequired\tFROB\tfrob it\n' > "$BATS_TEST_TMPDIR/table"
	printf 'x:--gone  nothing\n' > "$BATS_TEST_TMPDIR/values"
	run awk -v shell=fish -v tool=x -f "$gen" "$BATS_TEST_TMPDIR/values" "$BATS_TEST_TMPDIR/table"
	assert_success
	assert_line '# hugekit-unmapped: x:--frob (FROB)'
	assert_line "# hugekit-stale: values.tab names x:--gone, which x's table does not have"
	printf 'FROB  sizes\n' > "$BATS_TEST_TMPDIR/values"
	run awk -v shell=zsh -v tool=x -f "$gen" "$BATS_TEST_TMPDIR/values" "$BATS_TEST_TMPDIR/table"
	assert_failure 2
	assert_output --partial "values.tab: FROB: unknown values 'sizes'"
}

@test "the options' descriptions are their --help lines" {
	run fish_complete_described 'hugeadm --pool-l'
	assert_output "$(printf -- '--pool-list\tlist the pool of each huge page size')"
	run fish_complete_described 'hugectl --shm'
	assert_output --partial "$(printf -- '--shm\tSysV shared memory (shmget) on huge pages')"
	grep -qF "'*--pool-list[list the pool of each huge page size]'" "$ZSH_DIR/_hugeadm"
	grep -qF "'*--apply=-[make the machine match the configuration (/etc/hugekit/hugekit.conf and conf.d/, or FILE)]::FILE:_files'" "$ZSH_DIR/_hugeadm"
}

@test "page sizes: the machine's, and those of the --sysroot typed before" {
	local want
	want=$(hk_size_names /sys/kernel/mm/hugepages)
	[ -n "$want" ] || hk_skip "this kernel has no huge page sizes"
	run both 'hugeadm --pool-pages-min='
	# shellcheck disable=SC2086 # one size a word
	assert_output "$(printf '%s:\n' $want DEFAULT | sort)"
	run both 'hugectl --heap='
	assert_output "$want"
	run both 'hugectl --text='
	# shellcheck disable=SC2086 # one size a word
	assert_output "$(printf '%s\n' $want thp | sort)"
	# hugeadm's sizes follow --sysroot, in either form; hugectl has none.
	run both "hugeadm --sysroot $ARM64 --pool-pages-max "
	assert_output "$(printf '%s:\n' 64K 2M 32M 1G DEFAULT | sort)"
	run both "hugeadm --sysroot=$ARM64/ --pool-demote-size=2M:"
	assert_output "$(printf '%s\n' 64K 2M 32M 1G | sort)"
	run both "hugeadm --sysroot=$ARM64 --thp-size="
	assert_output "$(printf '%s:\n' 2M 64K)"
	run both "hugeadm --thp-size=64K:"
	assert_output "$(printf '%s\n' always inherit madvise never)"
	run both "hugeadm --sysroot $BATS_TEST_TMPDIR/none --pool-pages-min="
	assert_output DEFAULT:
	# A --sysroot typed quoted or escaped: the shell's word, unquoted.
	cp -R "$ARM64" "$BATS_TEST_TMPDIR/my root"
	run both "hugeadm --sysroot '$BATS_TEST_TMPDIR/my root' --pool-pages-max "
	assert_output "$(printf '%s:\n' 64K 2M 32M 1G DEFAULT | sort)"
	run both "hugeadm --sysroot=${BATS_TEST_TMPDIR// /\\ }/my\\ root --pool-pages-max "
	assert_output "$(printf '%s:\n' 64K 2M 32M 1G DEFAULT | sort)"
	run both "hugeedit --align="
	assert_output "$want"
}

@test "fixed words: modes, levels, kinds" {
	run both 'hugeadm --thp-defrag='
	assert_output "$(printf '%s\n' always defer defer+madvise madvise never)"
	run both 'hugeadm --thp-defrag defer'
	assert_output "$(printf '%s\n' defer defer+madvise)"
	run both 'hugeadm --generate '
	assert_output "$(printf '%s\n' boot sysctl units)"
	run both 'hugectl --verbose='
	assert_output "$(printf '%s\n' 0 1 2 3 4 99)"
	run both 'tlbmiss_cost --backing '
	assert_output "$(printf '%s\n' auto hugetlb thp)"
	run both 'hugeadm --vmemmap-optimize=o'
	assert_output "$(printf '%s\n' off on)"
}

@test "users and groups" {
	hk_need_user root
	hk_need_user -g root
	local user group
	run both 'hugeadm --create-user-mounts='
	assert_line root
	user=$(getent passwd | cut -d: -f1 | grep -vx root | head -n1)
	assert_line "$user"
	run both 'hugeadm --create-user-mounts ro'
	assert_output root
	run both 'hugeadm --set-shm-group='
	assert_line root
	group=$(getent group | cut -d: -f1 | grep -vx root | head -n1)
	assert_line "$group"
	run both 'hugeadm --create-group-mounts ro'
	assert_output root
	# --clean-shared-text's user is optional: only after '='.
	run both 'hugeadm --clean-shared-text=ro'
	assert_output root
}

@test "file and directory arguments" {
	local d=$BATS_TEST_TMPDIR/t
	mkdir -p "$d/conf.d" "$d/cfg-dir"
	touch "$d/cfg.conf"
	run fish_complete "hugeadm --config $d/cf"
	assert_output "$(printf '%s\n' "$d/cfg-dir/" "$d/cfg.conf")"
	run zsh_complete "hugeadm --config $d/cf"
	assert_output "$(printf '%s\n' cfg-dir cfg.conf)"
	# --sysroot and --output: directories only.
	run fish_complete "hugeadm --sysroot $d/c"
	assert_output "$(printf '%s\n' "$d/cfg-dir/" "$d/conf.d/")"
	run zsh_complete "pagesize --sysroot=$d/c"
	assert_output "$(printf '%s\n' cfg-dir conf.d)"
	run fish_complete "hugeadm --output=$d/cfg"
	assert_output "--output=$d/cfg-dir/"
	# --apply's file is optional: only after '='; the next word is no file of its.
	run fish_complete "hugeadm --apply=$d/cfg."
	assert_output "--apply=$d/cfg.conf"
	run zsh_complete "hugeadm --apply=$d/cfg."
	assert_output cfg.conf
	run fish_complete "hugeadm --apply $d/cfg."
	assert_output ''
	run zsh_complete "hugeadm --apply $d/cfg."
	refute_output --partial cfg.conf
	# hugeedit's words are files.
	run fish_complete "hugeedit --text $d/cfg."
	assert_output "$d/cfg.conf"
	run zsh_complete "hugeedit --text $d/cfg."
	assert_output cfg.conf
}

@test "hugectl and cpupcstat: a command after the options, then that command's own completion" {
	run fish_complete 'hugectl --heap=2M --membind 0 tru'
	assert_line true
	run zsh_complete 'hugectl --heap=2M --membind 0 tru'
	assert_line true
	run fish_complete 'cpupcstat -p 1 -- tru'
	assert_line true
	# After the command: its options, not hugectl's.
	run fish_complete 'hugectl --heap ls --al'
	assert_line --all
	refute_line --partial --heap
	run zsh_complete 'hugectl --heap ls --al'
	assert_line --all
	run zsh_complete 'hugectl ls --he'
	refute_line --heap
	run fish_complete 'hugectl ls --he'
	refute_line --heap
	# Before it: hugectl's options.
	run both 'hugectl --membind 0 --hea'
	assert_output --heap
}

@test "process ids and NUMA nodes from the machine" {
	local nodes
	run fish_complete "hugeadm --pages-needed=$$"
	assert_line "--pages-needed=$$"
	run zsh_complete "hugeadm --pages-needed $$"
	assert_line "$$"
	run fish_complete "cpupcstat -p $$"
	assert_line "$$"
	[ -r /sys/devices/system/node/online ] || hk_skip "no /sys/devices/system/node/online"
	nodes=$(tr ',' '\n' < /sys/devices/system/node/online | while IFS=- read -r lo hi; do seq "$lo" "${hi:-$lo}"; done)
	run both 'hugectl --membind='
	assert_output "$nodes"
}

@test "a number or an amount: no candidates, and zsh says what is wanted" {
	run fish_complete 'hugeadm --lock-timeout '
	assert_output ''
	run zsh_complete 'hugeadm --lock-timeout '
	assert_output 'message: SECONDS'
	run zsh_complete 'hugeadm --pool-pages-min=2M:'
	assert_output 'message: [+|-]N[@NODES]'
	run fish_complete 'hugeadm --pool-pages-min=2M:'
	assert_output ''
}
