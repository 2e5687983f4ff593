# shellcheck shell=bash
# The ABI of a shared library as tests/abi's baselines hold it: the public
# headers' types and the exported symbols, without paths or DT_NEEDED (a
# sanitizer build needs libasan), type ids by hash (stable across builds).
# shellcheck disable=SC2154 # src: the sourcing script's source directory
hk_abidw() {
	abidw --headers-dir "$src/lib/include" --no-corpus-path --short-locs --no-comp-dir-path \
		--no-elf-needed --drop-undefined-syms --type-id-style hash "$1"
}
