#!/usr/bin/env bash
# Write the ABI baselines of libhugekit and libhugekit-rt (tests/abi/*.abi)
# from a build with debug information (the dev preset): run it in the commit
# that changes the ABI on purpose, and say why in that commit.
#   tests/abi/update.sh [BUILD_DIR]   (default build/dev)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build/dev}
. "$src/tests/abi/abi.bash"
for lib in libhugekit.so.1 libhugekit-rt.so.0; do
	readelf -S "$build/lib/$lib" | grep '\.debug_info' > /dev/null || {
		echo "update.sh: $build/lib/$lib has no debug information: build the dev preset" >&2
		exit 1
	}
	hk_abidw "$build/lib/$lib" > "$src/tests/abi/${lib%%.so*}.abi"
	echo "tests/abi/${lib%%.so*}.abi"
done
