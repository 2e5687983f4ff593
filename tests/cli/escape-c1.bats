#!/usr/bin/env bats
# shellcheck disable=SC2154 # run --separate-stderr sets stderr
# C1 control characters (U+0080 to U+009F; U+009B, UTF-8 C2 9B, is CSI to a
# terminal) in names hugeadm reports: \u00XX in JSON, \ooo of each byte in
# text, like the C0 ones; other UTF-8 (é, €, whose bytes include 0x82) as it is.

load helpers

# c1_tree: a scratch copy of the "usage" tree whose hugetlbfs mount holds one
# file of 1 page named "x", CSI, "2J", é, €; and whose process 4242 is named
# "db", CSI, "2J".
c1_tree() {
	local t
	t=$(fixture usage)
	mkdir -p "$t/dev/hugepages"
	fallocate -l 2M "$t/dev/hugepages/$(printf 'x\xc2\x9b2J\xc3\xa9\xe2\x82\xac')"
	printf 'db\xc2\x9b2J\n' > "$t/proc/4242/comm"
	printf '%s\n' "$t"
}

@test "--usage --json: a C1 control in a file name and a command name is \\u00XX; the JSON parses" {
	local t
	t=$(c1_tree)
	hugeadm --sysroot "$t" --usage --json > "$BATS_TEST_TMPDIR/json"
	python3 - "$BATS_TEST_TMPDIR/json" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
assert b"\xc2\x9b" not in raw, "a raw C1 control in the JSON"
doc = json.loads(raw.decode("utf-8"))
paths = [f["path"] for f in doc["usage"]["files"]]
assert "/dev/hugepages/x\u009b2J\u00e9\u20ac" in paths, paths
assert b'x\\u009b2J\xc3\xa9\xe2\x82\xac' in raw, raw
comms = [p["comm"] for p in doc["usage"]["processes"] if p["pid"] == 4242]
assert comms and all(c == "db\u009b2J" for c in comms), comms
PY
}

@test "--usage text: a C1 control in a table is \\302\\233" {
	local t
	t=$(c1_tree)
	run --separate-stderr hugeadm --sysroot "$t" --usage
	assert_success
	[[ $output != *$'\xc2\x9b'* ]] || fail "a raw C1 control in the text: $output"
	assert_line --regexp '^ *4242 db\\302\\2332J '
	assert_line --partial 'x\302\2332J'
}

@test "an error message: a C1 control in the name is \\302\\233, é and € as they are" {
	run --separate-stderr hugeadm --sysroot "$(printf '%s/no\xc2\x9b2J\xc3\xa9\xe2\x82\xac' "$BATS_TEST_TMPDIR")" --pool-list
	assert_failure 1
	[[ $stderr != *$'\xc2\x9b'* ]] || fail "a raw C1 control on stderr: $stderr"
	assert_equal "$stderr" "$(printf 'hugeadm:ERROR: %s/no\\302\\2332J\xc3\xa9\xe2\x82\xac: No such file or directory' "$BATS_TEST_TMPDIR")"
}
