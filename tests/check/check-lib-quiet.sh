#!/usr/bin/env bash
# The library never prints and never exits: libhugekit imports none of the
# functions that write to stdout/stderr or end the process, and lib/core,
# lib/common and its header never name stdout or stderr. (lib/runtime is the
# libhugetlbfs runtime loaded into programs: it warns on stderr by design.)
set -euo pipefail
src=${HK_SOURCE_DIR:?} build=${HK_BUILD_DIR:?}
lib=$(ls "$build"/lib/libhugekit.so.* | head -n 1)
forbidden='^(printf|vprintf|puts|putchar|perror|exit|_exit|_Exit|abort|err|errx|warn|warnx|verr|verrx|vwarn|vwarnx|fprintf|vfprintf|fputs|fputc|fwrite|putc|dprintf|vdprintf|error|error_at_line)$'
imports() { nm -D --undefined-only "$lib"; }
if grep -q '^HK_COVERAGE:BOOL=ON$' "$build/CMakeCache.txt" 2> /dev/null; then
	# gcov's runtime, linked in, prints and exits: the library's own objects instead.
	imports() { find "$build/lib/CMakeFiles/hugekit_obj.dir" "$build/lib/CMakeFiles/hk_common.dir" -name '*.o' -exec nm --undefined-only {} + | grep -v '^$\|:$'; }
fi
bad=$(imports | awk '{ print $2 }' | sed 's/@.*//' | grep -E "$forbidden" || true)
if [ -n "$bad" ]; then
	echo "check-lib-quiet: libhugekit imports: $bad" >&2
	exit 1
fi
if grep -rnE '\b(stdout|stderr|STDOUT_FILENO|STDERR_FILENO)\b' "$src/lib/core" "$src/lib/common" "$src/lib/include/hugekit" --include='*.c' --include='*.h'; then
	echo "check-lib-quiet: lib/ names stdout or stderr (above)" >&2
	exit 1
fi
echo "check-lib-quiet: libhugekit imports no printing or exiting function ($(imports | wc -l) imports checked)"
