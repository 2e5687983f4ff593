#!/usr/bin/env bash
# Line and branch coverage of lib/ and tools/ in a build configured with
# -DHK_COVERAGE=ON (gcc --coverage; the release preset):
#
#   tests/coverage.sh prepare BUILD   make the count files (the build does it)
#   tests/coverage.sh reset BUILD     zero the counts, before a run of the tests
#   tests/coverage.sh report BUILD    gcovr over the counts: totals and a table
#                                     per directory; exit 1 under HK_COVERAGE_MIN
#                                     (85) percent of lines
#
# The instrumented programs write their counts to HK_COVERAGE_DIR (the cache
# variable, /var/tmp/hugekit-gcov), one file per object named after its path
# with '/' as '#' (gcc -fprofile-dir). prepare creates each file empty and
# mode 0666, so a tool run as nobody, setuid or with file capabilities writes
# its counts like root's runs do, instead of printing "profiling:...: Cannot
# open" on the stderr a test compares. The report copies them next to the
# objects' .gcno files, where gcov looks.
set -euo pipefail
usage() {
	echo "usage: tests/coverage.sh prepare|reset|report BUILD" >&2
	exit 2
}
[ $# -eq 2 ] || usage
mode=$1
build=$(cd "$2" && pwd -P)
src=$(cd "$(dirname "$0")/.." && pwd -P)
min=${HK_COVERAGE_MIN:-85}

cache="$build/CMakeCache.txt"
[ -f "$cache" ] || { echo "coverage: $2 is not a build directory (no CMakeCache.txt)" >&2; exit 1; }
grep -q '^HK_COVERAGE:BOOL=ON$' "$cache" || {
	echo "coverage: $2 is not a coverage build (configure it with -DHK_COVERAGE=ON)" >&2
	exit 1
}
dir=$(sed -n 's/^HK_COVERAGE_DIR:PATH=//p' "$cache")
[ -n "$dir" ] || { echo "coverage: no HK_COVERAGE_DIR in $cache" >&2; exit 1; }

# each_object CMD: CMD GCNO COUNTS for every instrumented object of the build.
each_object() {
	local gcno base
	while IFS= read -r -d '' gcno; do
		base=${gcno%.gcno}
		"$1" "$gcno" "$dir/${base//\//#}.gcda"
	done < <(find "$build" -name '*.gcno' -print0)
}

make_counts() {
	if [ ! -e "$2" ]; then
		: > "$2"
	fi
	# Another user's file (a shared directory) is theirs to open up.
	if [ -O "$2" ]; then chmod 0666 "$2"; fi
}
zero_counts() {
	: > "$2"
}
gathered=0
gather_counts() {
	rm -f "${1%.gcno}.gcda"
	if [ -s "$2" ]; then
		cp "$2" "${1%.gcno}.gcda"
		gathered=$((gathered + 1))
	fi
}

case $mode in
prepare)
	if [ ! -d "$dir" ]; then
		mkdir -p "$dir"
		chmod 1777 "$dir"
	fi
	each_object make_counts
	;;
reset)
	[ -d "$dir" ] || exit 0
	each_object zero_counts
	;;
report)
	command -v gcovr > /dev/null || { echo "coverage: gcovr is not installed (Debian: gcovr)" >&2; exit 1; }
	each_object gather_counts
	[ "$gathered" -gt 0 ] || { echo "coverage: no counts in $dir for $build: run the tests first" >&2; exit 1; }
	json="$build/coverage.json"
	(cd "$src" && gcovr --root "$src" --filter 'lib/' --filter 'tools/' \
		--exclude-unreachable-branches -j 2 --json-summary "$json" --json-summary-pretty \
		--txt "$build/coverage.txt" "$build")
	python3 - "$json" "$min" <<'PY'
import json, os, sys
data = json.load(open(sys.argv[1]))
minimum = float(sys.argv[2])
dirs = {}
for f in data["files"]:
    name = f["filename"]
    d = os.path.dirname(name)
    # tools/*.c are the single-file tools; the others by directory.
    key = "tools/*.c" if d == "tools" else d
    a = dirs.setdefault(key, [0, 0, 0, 0])
    a[0] += f["line_covered"]; a[1] += f["line_total"]
    a[2] += f["branch_covered"]; a[3] += f["branch_total"]
def pct(c, t):
    return 100.0 * c / t if t else 100.0
print("Coverage of lib/ and tools/ (gcovr; lines and branches covered / total):")
print(f"{'directory':<16} {'lines':>16} {'%':>6} {'branches':>16} {'%':>6}")
for key in sorted(dirs):
    lc, lt, bc, bt = dirs[key]
    print(f"{key:<16} {lc:>7} / {lt:<6} {pct(lc, lt):6.1f} {bc:>7} / {bt:<6} {pct(bc, bt):6.1f}")
lc, lt = data["line_covered"], data["line_total"]
bc, bt = data["branch_covered"], data["branch_total"]
print(f"{'total':<16} {lc:>7} / {lt:<6} {pct(lc, lt):6.1f} {bc:>7} / {bt:<6} {pct(bc, bt):6.1f}")
if pct(lc, lt) < minimum:
    print(f"coverage: {pct(lc, lt):.1f} % of the lines of lib/ and tools/, under {minimum:g} %", file=sys.stderr)
    sys.exit(1)
PY
	echo "coverage: per file in $build/coverage.txt"
	;;
*) usage ;;
esac
