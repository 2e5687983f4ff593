#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The bash completions in completions/bash/: source them as bash would, fill
# COMP_WORDS and friends, call the completion function and check COMPREPLY.
# Run by ctest; by hand: HK_SOURCE_DIR=. HK_BUILD_DIR=build/dev bats tests/cli/completion.bats

# shellcheck source=tests/common.bash
source "$BATS_TEST_DIRNAME/../common.bash"

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert

	: "${HK_SOURCE_DIR:?HK_SOURCE_DIR must be set}"
	: "${HK_BUILD_DIR:?HK_BUILD_DIR must be set}"
	COMPLETIONS=$HK_SOURCE_DIR/completions/bash
	# The completions ask the tool for its options (--list-options): the built ones.
	PATH=$HK_BUILD_DIR/tools:$PATH
	if [[ -r /usr/share/bash-completion/bash_completion ]]; then
		# shellcheck disable=SC1091
		source /usr/share/bash-completion/bash_completion
	fi
	# shellcheck source=/dev/null
	source "$COMPLETIONS/hugeadm"
	# shellcheck source=/dev/null
	source "$COMPLETIONS/pagesize"
	# shellcheck source=/dev/null
	source "$COMPLETIONS/hugectl"
}

# complete_line LINE: complete LINE with the cursor at its end, as readline would
# after a TAB. The words are split at blanks and at '=' (COMP_WORDBREAKS);
# a LINE that ends in a blank completes a new, empty word.
complete_line() {
	local line=$1 w

	COMP_LINE=$line
	COMP_POINT=${#line}
	COMP_WORDS=()
	for w in $line; do
		if [[ $w == --*=* ]]; then
			COMP_WORDS+=("${w%%=*}" "=")
			[[ -n ${w#*=} ]] && COMP_WORDS+=("${w#*=}")
		else
			COMP_WORDS+=("$w")
		fi
	done
	if [[ $line == *[[:blank:]] || $line == *= ]]; then
		[[ $line == *= ]] || COMP_WORDS+=("")
	fi
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	# The function that "complete -p" names for the command, called as bash
	# calls it: with errexit off (bash-completion's helpers rely on that).
	local spec rc
	spec=$(complete -p "${COMP_WORDS[0]}")
	[[ $spec == "complete -F "* ]] || return 1
	spec=${spec#complete -F }
	set +e
	"${spec%% *}" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	rc=$?
	set -e
	return "$rc"
}

# replies: COMPREPLY sorted, one a line, into $output for assert_line.
replies() {
	run bash -c 'printf "%s\n" "$@" | sort' replies "${COMPREPLY[@]}"
}

@test "the completions are registered for their commands" {
	run complete -p hugeadm
	assert_success
	assert_output 'complete -F _hugeadm hugeadm'
	run complete -p pagesize
	assert_success
	assert_output 'complete -F _pagesize pagesize'
}

@test "hugeadm --pool-l completes to --pool-list" {
	complete_line 'hugeadm --pool-l'
	assert_equal "${#COMPREPLY[@]}" 1
	assert_equal "${COMPREPLY[0]}" --pool-list
}

@test "hugeadm --page offers both page-sizes options and --pages-needed" {
	complete_line 'hugeadm --page'
	replies
	assert_output "$(printf '%s\n' --page-sizes --page-sizes-all --pages-needed)"
}

@test "hugeadm - offers every report option" {
	complete_line 'hugeadm -'
	replies
	for opt in --list-all-mounts --pool-list --per-node --page-sizes --page-sizes-all \
		--explain --json --sysroot --verbose --help --version; do
		assert_line -- "$opt"
	done
}

@test "hugeadm - offers the change options" {
	complete_line 'hugeadm -'
	replies
	for opt in --pool-pages-min --pool-pages-max --pool-demote-size --pool-demote \
		--vmemmap-optimize --obey-mempolicy --hard --strict -d \
		--dry-run --thp-always --thp-madvise --thp-never --thp-defrag --thp-size \
		--thp-khugepaged-pages --thp-khugepaged-scan-sleep --thp-khugepaged-alloc-sleep \
		--set-recommended-min_free_kbytes --set-recommended-shmmax --set-shm-group \
		--add-temp-swap --add-ramdisk-swap --persist --enable-zone-movable \
		--disable-zone-movable --lock-timeout --create-mounts --create-user-mounts \
		--create-group-mounts --create-global-mounts --max-size --min-size \
		--max-inodes --unmount-all; do
		assert_line -- "$opt"
	done
}

@test "hugeadm --create- offers the four create options" {
	complete_line 'hugeadm --create-'
	replies
	assert_output "$(printf '%s\n' --create-global-mounts --create-group-mounts \
		--create-mounts --create-user-mounts)"
}

@test "pagesize - offers --all and --huge-only" {
	complete_line 'pagesize -'
	replies
	assert_line -- --all
	assert_line -- --huge-only
	assert_line -- --sysroot
	refute_line -- --pool-list
}

@test "hugeadm --verbose offers the levels" {
	complete_line 'hugeadm --verbose '
	assert_equal "${COMPREPLY[*]}" '0 1 2 3 4 99'
	complete_line 'hugeadm --verbose 9'
	assert_equal "${COMPREPLY[*]}" 99
	complete_line 'hugeadm --verbose='
	assert_equal "${COMPREPLY[*]}" '0 1 2 3 4 99'
}

@test "hugeadm --sysroot offers directories only" {
	mkdir -p "$BATS_TEST_TMPDIR/t/tree-a" "$BATS_TEST_TMPDIR/t/tree b"
	touch "$BATS_TEST_TMPDIR/t/file"
	complete_line "hugeadm --sysroot $BATS_TEST_TMPDIR/t/"
	replies
	assert_line "$BATS_TEST_TMPDIR/t/tree-a"
	assert_line "$BATS_TEST_TMPDIR/t/tree b"
	refute_line "$BATS_TEST_TMPDIR/t/file"
	complete_line "hugeadm --sysroot=$BATS_TEST_TMPDIR/t/tree-"
	assert_equal "${COMPREPLY[*]}" "$BATS_TEST_TMPDIR/t/tree-a"
}

@test "pagesize --sysroot offers directories" {
	mkdir -p "$BATS_TEST_TMPDIR/t/tree-a"
	touch "$BATS_TEST_TMPDIR/t/file"
	complete_line "pagesize --sysroot $BATS_TEST_TMPDIR/t/"
	assert_equal "${COMPREPLY[*]}" "$BATS_TEST_TMPDIR/t/tree-a"
}

@test "every tool's completion offers its options from the tool's own table (--list-options)" {
	local tool want
	for tool in pagesize hugeadm hugectl hugeedit tlbmiss_cost cpupcstat; do
		# shellcheck source=/dev/null
		source "$COMPLETIONS/$tool"
		complete_line "$tool --"
		want=$("$tool" --list-options | grep -- '^--' | sort)
		[ -n "$want" ] || fail "$tool --list-options lists nothing"
		assert_equal "$(printf '%s\n' "${COMPREPLY[@]}" | sort)" "$want"
	done
}

@test "the completions work without bash-completion loaded" {
	mkdir -p "$BATS_TEST_TMPDIR/t/tree-a"
	touch "$BATS_TEST_TMPDIR/t/file"
	run bash --norc --noprofile -c '
		source "$1/hugeadm" || exit 1
		declare -F _filedir && exit 1
		COMP_WORDS=(hugeadm --sysroot "$2/t/"); COMP_CWORD=2
		_hugeadm; echo "${COMPREPLY[*]}"
		COMP_WORDS=(hugeadm --pool-l); COMP_CWORD=1
		_hugeadm; echo "${COMPREPLY[*]}"
		# "=" not in COMP_WORDBREAKS: "--verbose=9" is one word.
		COMP_WORDS=(hugeadm --verbose=9); COMP_CWORD=1
		_hugeadm; echo "${COMPREPLY[*]}"
	' sh "$COMPLETIONS" "$BATS_TEST_TMPDIR"
	assert_success
	assert_line --index 0 "$BATS_TEST_TMPDIR/t/tree-a"
	assert_line --index 1 --pool-list
	assert_line --index 2 --verbose=99
}

@test "hugeadm --thp-defrag offers the defrag modes" {
	complete_line 'hugeadm --thp-defrag '
	assert_equal "${COMPREPLY[*]}" 'always defer defer+madvise madvise never'
	complete_line 'hugeadm --thp-defrag defer'
	assert_equal "${COMPREPLY[*]}" 'defer defer+madvise'
	complete_line 'hugeadm --thp-defrag=ma'
	assert_equal "${COMPREPLY[*]}" madvise
}

@test "hugeadm --pool-pages-min offers DEFAULT and the sizes of the --sysroot" {
	local root=$HK_SOURCE_DIR/tests/fixtures/sysroot/arm64

	complete_line "hugeadm --sysroot $root --pool-pages-min "
	replies
	assert_output "$(printf '%s\n' 1G: 2M: 32M: 64K: DEFAULT:)"
	complete_line "hugeadm --sysroot=$root --pool-pages-max 3"
	assert_equal "${COMPREPLY[*]}" 32M:
	complete_line "hugeadm --sysroot $root --pool-pages-min D"
	assert_equal "${COMPREPLY[*]}" DEFAULT:
	# The count after the colon is the user's to type.
	complete_line "hugeadm --sysroot $root --pool-pages-min 2M:"
	assert_equal "${#COMPREPLY[@]}" 0
}

@test "hugeadm --pool-demote(-size) offer the sizes, then the sizes to demote to; --vmemmap-optimize on|off" {
	local root=$HK_SOURCE_DIR/tests/fixtures/sysroot/arm64

	complete_line "hugeadm --sysroot $root --pool-demote "
	replies
	assert_output "$(printf '%s\n' 1G: 2M: 32M: 64K: DEFAULT:)"
	complete_line "hugeadm --sysroot $root --pool-demote 1G:"
	assert_equal "${#COMPREPLY[@]}" 0
	complete_line "hugeadm --sysroot $root --pool-demote-size 3"
	assert_equal "${COMPREPLY[*]}" 32M:
	complete_line "hugeadm --sysroot $root --pool-demote-size 1G:3"
	replies
	assert_output 1G:32M
	complete_line "hugeadm --vmemmap-optimize "
	replies
	assert_output "$(printf '%s\n' off on)"
}

@test "hugeadm --thp-size offers the THP sizes of the --sysroot, then the modes" {
	local root=$HK_SOURCE_DIR/tests/fixtures/sysroot/arm64

	complete_line "hugeadm --sysroot $root --thp-size "
	replies
	assert_output "$(printf '%s\n' 2M: 64K:)"
	complete_line "hugeadm --sysroot $root --thp-size 64K:"
	replies
	assert_output "$(printf '%s\n' 64K:always 64K:inherit 64K:madvise 64K:never)"
}

@test "hugeadm --set-shm-group offers groups" {
	local group
	group=$(id -gn)

	complete_line "hugeadm --set-shm-group ${group:0:1}"
	replies
	assert_line -- "$group"
	refute_line -- --pool-list
}

@test "hugeadm --create-user-mounts offers users" {
	complete_line 'hugeadm --create-user-mounts r'
	replies
	assert_line -- root
	refute_line -- --pool-list
	complete_line 'hugeadm --create-user-mounts=r'
	replies
	assert_line -- root
}

@test "hugeadm --create-group-mounts offers groups" {
	local group
	group=$(id -gn)

	complete_line "hugeadm --create-group-mounts ${group:0:1}"
	replies
	assert_line -- "$group"
	refute_line -- --create-mounts
}

@test "hugeadm offers no value for numeric options" {
	for opt in --lock-timeout --thp-khugepaged-pages --thp-khugepaged-scan-sleep \
		--thp-khugepaged-alloc-sleep --max-size --min-size --max-inodes; do
		complete_line "hugeadm $opt "
		assert_equal "${#COMPREPLY[@]}" 0
	done
	# --add-temp-swap takes its count only after '='.
	complete_line 'hugeadm --add-temp-swap='
	assert_equal "${#COMPREPLY[@]}" 0
	complete_line 'hugeadm --add-temp-swap --pool-l'
	assert_equal "${COMPREPLY[*]}" --pool-list
}

# hugectl_sizes: the huge page sizes of this machine, as the completion names them.
hugectl_sizes() {
	hk_size_names /sys/kernel/mm/hugepages
}

@test "the hugectl completion is registered" {
	run complete -p hugectl
	assert_success
	assert_output 'complete -F _hugectl hugectl'
}

@test "hugectl - offers every option" {
	complete_line 'hugectl -'
	replies
	for opt in --heap --shm --thp --membind --report --no-reserve --text --data --bss \
		--disable --share-text --perf-map --no-preload --force-preload --library-use-path \
		--library-path --dry-run --collapse --all --json --verbose -v -q --help --version; do
		assert_line -- "$opt"
	done
	refute_line -- --list-options
	complete_line 'hugectl --force-'
	assert_equal "${COMPREPLY[*]}" --force-preload
}

@test "hugectl --heap= and --shm= offer the huge page sizes of the machine" {
	local sizes
	sizes=$(hugectl_sizes)
	[[ -n $sizes ]] || hk_missing "this kernel has no huge page sizes"

	complete_line 'hugectl --heap='
	replies
	assert_output "$sizes"
	complete_line 'hugectl --shm='
	replies
	assert_output "$sizes"
	complete_line "hugectl --heap=${sizes:0:1}"
	replies
	assert_output "$(grep "^${sizes:0:1}" <<<"$sizes")"
}

@test "hugectl --text=, --data= and --bss= offer the sizes and thp" {
	local sizes opt
	sizes=$(hugectl_sizes)

	for opt in --text --data --bss; do
		complete_line "hugectl $opt="
		replies
		assert_output "$(printf '%s\n' $sizes thp | sort)"
	done
	complete_line 'hugectl --text=t'
	assert_equal "${COMPREPLY[*]}" thp
}

@test "hugectl --heap without '=': the next word is the program" {
	complete_line 'hugectl --heap hugea'
	replies
	assert_line hugeadm
	refute_line 2M
}

@test "hugectl --membind offers the online nodes" {
	local online
	online=$(cat /sys/devices/system/node/online 2>/dev/null) ||
		hk_skip "no /sys/devices/system/node/online (a kernel without NUMA)"
	online=${online%%[-,]*}

	complete_line 'hugectl --membind '
	replies
	assert_line "$online"
	complete_line 'hugectl --membind='
	replies
	assert_line "$online"
	complete_line 'hugectl --membind 0 --he'
	assert_equal "${COMPREPLY[*]}" '--heap --help'
}

@test "hugectl --collapse offers the running processes, then its options" {
	complete_line 'hugectl --collapse '
	replies
	assert_line "$$"
	assert_line 1
	refute_line -- --heap
	complete_line "hugectl --collapse=$$"
	replies
	assert_line "$$"
	# The pid is --collapse's: the next word is an option again, not a program.
	complete_line "hugectl --collapse $$ --js"
	assert_equal "${COMPREPLY[*]}" --json
}

@test "hugectl --verbose offers the levels" {
	complete_line 'hugectl --verbose '
	assert_equal "${COMPREPLY[*]}" '0 1 2 3 4 99'
	complete_line 'hugectl --verbose=9'
	assert_equal "${COMPREPLY[*]}" 99
}

@test "hugectl --library-path offers directories" {
	mkdir -p "$BATS_TEST_TMPDIR/t/lib-a"
	touch "$BATS_TEST_TMPDIR/t/file"
	complete_line "hugectl --library-path $BATS_TEST_TMPDIR/t/"
	replies
	assert_line "$BATS_TEST_TMPDIR/t/lib-a"
	refute_line "$BATS_TEST_TMPDIR/t/file"
}

@test "hugectl completes the program, then the program's own arguments" {
	declare -F _command_offset >/dev/null || hk_missing "bash-completion is not installed (apt-get install bash-completion)"
	complete_line 'hugectl --heap --shm pagesi'
	replies
	assert_line pagesize
	refute_line -- --heap
	# After the program, its words are its own: hugeadm's options, not hugectl's.
	complete_line 'hugectl --heap=2M --verbose 3 hugeadm --pool-l'
	assert_equal "${COMPREPLY[*]}" --pool-list
	complete_line 'hugectl -- pagesize --hu'
	assert_equal "${COMPREPLY[*]}" --huge-only
	# A program without a completion of its own: file names.
	mkdir -p "$BATS_TEST_TMPDIR/t"
	touch "$BATS_TEST_TMPDIR/t/input-file"
	complete_line "hugectl --heap hk-no-such-program $BATS_TEST_TMPDIR/t/inp"
	assert_equal "${COMPREPLY[*]}" "$BATS_TEST_TMPDIR/t/input-file"
}

@test "the hugectl completion works without bash-completion loaded" {
	mkdir -p "$BATS_TEST_TMPDIR/t/lib-a"
	touch "$BATS_TEST_TMPDIR/t/file"
	run bash --norc --noprofile -c '
		source "$1/hugectl" || exit 1
		declare -F _command_offset && exit 1
		COMP_WORDS=(hugectl --library-path "$2/t/"); COMP_CWORD=2
		_hugectl; echo "${COMPREPLY[*]}"
		COMP_WORDS=(hugectl --no-pre); COMP_CWORD=1
		_hugectl; echo "${COMPREPLY[*]}"
		# After the program: file names.
		COMP_WORDS=(hugectl --heap ls "$2/t/fi"); COMP_CWORD=3
		_hugectl; echo "${COMPREPLY[*]}"
		# The program: command names.
		COMP_WORDS=(hugectl --shm hk-no-such-comman); COMP_CWORD=2
		_hugectl; echo "${#COMPREPLY[@]}"
		COMP_WORDS=(hugectl --verbose=9); COMP_CWORD=1
		_hugectl; echo "${COMPREPLY[*]}"
	' sh "$COMPLETIONS" "$BATS_TEST_TMPDIR"
	assert_success
	assert_line --index 0 "$BATS_TEST_TMPDIR/t/lib-a"
	assert_line --index 1 --no-preload
	assert_line --index 2 "$BATS_TEST_TMPDIR/t/file"
	assert_line --index 3 0
	assert_line --index 4 --verbose=99
}

@test "hugeadm --pages-needed offers the running processes' ids; - offers --usage and --pages-needed" {
	complete_line "hugeadm --pages-needed $$"
	replies
	assert_line -- "$$"
	refute_line -- --pool-list
	complete_line 'hugeadm --pages-needed='
	replies
	assert_line -- "1"
	complete_line 'hugeadm -'
	replies
	assert_line -- --usage
	assert_line -- --pages-needed
}

@test "hugeadm --generate offers its kinds; --output directories, --config files" {
	complete_line 'hugeadm --generate '
	assert_equal "${COMPREPLY[*]}" 'boot sysctl units'
	complete_line 'hugeadm --generate=s'
	assert_equal "${COMPREPLY[*]}" 'sysctl'
	mkdir -p "$BATS_TEST_TMPDIR/g/units dir"
	touch "$BATS_TEST_TMPDIR/g/hugekit.conf"
	complete_line "hugeadm --generate units --output $BATS_TEST_TMPDIR/g/"
	assert_equal "${COMPREPLY[*]}" "$BATS_TEST_TMPDIR/g/units dir"
	complete_line "hugeadm --generate units --config $BATS_TEST_TMPDIR/g/hu"
	assert_equal "${COMPREPLY[*]}" "$BATS_TEST_TMPDIR/g/hugekit.conf"
	complete_line 'hugeadm --gen'
	assert_equal "${COMPREPLY[*]}" '--generate'
}

@test "hugeadm --metrics offers files, as the next word or after '='; '-' offers the options; --config files with it" {
	mkdir -p "$BATS_TEST_TMPDIR/tf"
	touch "$BATS_TEST_TMPDIR/tf/hugekit.prom" "$BATS_TEST_TMPDIR/m.conf"
	complete_line "hugeadm --metrics $BATS_TEST_TMPDIR/tf/hu"
	assert_equal "${COMPREPLY[*]}" "$BATS_TEST_TMPDIR/tf/hugekit.prom"
	complete_line "hugeadm --metrics=$BATS_TEST_TMPDIR/tf/hu"
	assert_equal "${COMPREPLY[*]}" "$BATS_TEST_TMPDIR/tf/hugekit.prom"
	complete_line 'hugeadm --metrics --j'
	assert_equal "${COMPREPLY[*]}" '--json'
	complete_line "hugeadm --metrics --config $BATS_TEST_TMPDIR/m.c"
	assert_equal "${COMPREPLY[*]}" "$BATS_TEST_TMPDIR/m.conf"
	complete_line 'hugeadm --metr'
	assert_equal "${COMPREPLY[*]}" '--metrics'
}
