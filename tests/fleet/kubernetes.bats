#!/usr/bin/env bats
# shellcheck disable=SC2154 # run --separate-stderr sets stderr
# contrib/kubernetes/hugekit-daemonset.yaml: valid YAML (PyYAML, yamllint with
# the .yamllint beside it) and a DaemonSet that can do its job: privileged, the
# host's /sys, the ConfigMap copied to /etc/hugekit, --apply at start, --check
# as readiness probe, on every node. Its command and probe, read from the
# manifest, run on a fake machine's tree holding a ConfigMap volume as the
# kubelet makes it (0777 on disk, 1777 on tmpfs), and against the attacks of
# another user on that volume.

# The fixture trees (HK_FIXTURES), kernel_like, the build's tools in PATH.
load ../cli/helpers

YAML="$HK_SOURCE_DIR/contrib/kubernetes/hugekit-daemonset.yaml"
YAMLLINT_CONF="$HK_SOURCE_DIR/contrib/kubernetes/.yamllint"

@test "the manifest passes yamllint with contrib/kubernetes/.yamllint, which is in force" {
	hk_need_cmd yamllint yamllint
	# The README's command, from the source tree.
	cd "$HK_SOURCE_DIR"
	run yamllint -s -c contrib/kubernetes/.yamllint contrib/kubernetes
	assert_success
	assert_output ''
	# The shipped configuration, not yamllint's relaxed one, decides: a long
	# line and an octal mode fail.
	local bad=$BATS_TEST_TMPDIR/bad.yaml
	sed 's/^  name: hugekit-config$/  name: hugekit-config-with-a-name-long-enough-to-pass-the-eighty-columns-of-the-rule/' "$YAML" > "$bad"
	run yamllint -s -c "$YAMLLINT_CONF" "$bad"
	assert_failure
	assert_output --partial '(line-length)'
	sed 's/^            name: hugekit-config$/&\n            defaultMode: 0644/' "$YAML" > "$bad"
	run yamllint -s -c "$YAMLLINT_CONF" "$bad"
	assert_failure
	assert_output --partial '(octal-values)'
}

# properties FILE: check FILE's documents; print the ConfigMap's hugekit.conf.
properties() {
	python3 - "$1" <<-'EOF'
		import re, sys, yaml
		docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]
		kinds = sorted(d["kind"] for d in docs)
		assert kinds == ["ConfigMap", "DaemonSet"], kinds
		cm = next(d for d in docs if d["kind"] == "ConfigMap")
		ds = next(d for d in docs if d["kind"] == "DaemonSet")
		assert ds["apiVersion"] == "apps/v1"
		spec = ds["spec"]["template"]["spec"]
		sel = ds["spec"]["selector"]["matchLabels"]
		labels = ds["spec"]["template"]["metadata"]["labels"]
		assert all(labels.get(k) == v for k, v in sel.items()), "selector does not match the pod"
		assert {"operator": "Exists"} in spec["tolerations"], "not on every node"
		(c,) = spec["containers"]
		assert c["securityContext"]["privileged"] is True
		assert c["resources"]["requests"] and c["resources"]["limits"]
		assert "VERSION" in c["image"]
		vols = {v["name"]: v for v in spec["volumes"]}
		mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
		host = {v["hostPath"]["path"]: n for n, v in vols.items() if "hostPath" in v}
		assert "/sys" in host and "/proc/sys" in host, host
		assert mounts["/sys"]["name"] == host["/sys"] and not mounts["/sys"].get("readOnly")
		assert any(m["name"] == host["/proc/sys"] for m in c["volumeMounts"])
		# The ConfigMap beside /etc/hugekit, which the command fills, never
		# over it (hugeadm refuses the kubelet's 0777/1777 directory).
		assert "/etc/hugekit" not in mounts, "the ConfigMap mounted where hugeadm reads"
		m = mounts["/etc/hugekit-configmap"]
		assert m.get("readOnly") is True
		assert vols[m["name"]]["configMap"]["name"] == cm["metadata"]["name"]
		assert cm["metadata"]["namespace"] == ds["metadata"]["namespace"]
		assert "hugekit.conf" in cm["data"]
		assert c["command"][:2] == ["/bin/sh", "-c"] and len(c["command"]) == 3
		cmd = c["command"][2]
		apply = re.search(r"^hugeadm .*--apply\b", cmd, re.M)
		assert apply and apply.start() < cmd.index("sleep"), cmd
		probe = c["readinessProbe"]["exec"]["command"]
		assert probe[:2] == ["/bin/sh", "-c"] and len(probe) == 3, probe
		assert re.search(r"^exec hugeadm .*--check$", probe[2], re.M), probe
		# The kubelet replaces $(NAME) of the container's variables and $$.
		for text in cmd, probe[2]:
		    assert "$$" not in text and not re.search(r"\$\(\w+\)", text), text
		sys.stdout.write(cm["data"]["hugekit.conf"])
	EOF
}

@test "the manifest is a ConfigMap and a DaemonSet with what the DaemonSet needs" {
	python3 -c 'import yaml' 2> /dev/null || hk_missing "python3-yaml is not installed (apt-get install python3-yaml)"
	run properties "$YAML"
	assert_success
	# The example configuration is one hugeadm accepts (the fake holds the
	# contract's syntax): --check on an empty machine says it drifted.
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/hugekit.conf"
	HK_FAKE_STATE="$BATS_TEST_TMPDIR/machine" run "$HK_SOURCE_DIR/tests/fleet/fake-hugeadm" --check --json "$BATS_TEST_TMPDIR/hugekit.conf"
	assert_equal "$status" 3
	assert_output --partial '"item": "pool 2M minimum", "current": "", "wanted": "512"'
}

@test "the property check fails on a manifest missing each property" {
	python3 -c 'import yaml' 2> /dev/null || hk_missing "python3-yaml is not installed (apt-get install python3-yaml)"
	local bad=$BATS_TEST_TMPDIR/bad.yaml
	sed 's/privileged: true/privileged: false/' "$YAML" > "$bad"
	run properties "$bad"
	assert_failure
	sed 's|path: /sys$|path: /host-sys|' "$YAML" > "$bad"
	run properties "$bad"
	assert_failure
	sed '/readinessProbe:/,/initialDelaySeconds:/s/--check$/--apply/' "$YAML" > "$bad"
	# `! cmd` never fails a bats test (errexit ignores it): the edit must have changed the file.
	if cmp -s "$YAML" "$bad"; then fail "the sed left $YAML unchanged"; fi
	run properties "$bad"
	assert_failure
	sed 's/^kind: DaemonSet/kind: Deployment/' "$YAML" > "$bad"
	run properties "$bad"
	assert_failure
	sed 's|mountPath: /etc/hugekit-configmap$|mountPath: /etc/hugekit|' "$YAML" > "$bad"
	if cmp -s "$YAML" "$bad"; then fail "the sed left $YAML unchanged"; fi
	run properties "$bad"
	assert_failure
	sed 's|^              cd /$|&; echo $$|' "$YAML" > "$bad"
	if cmp -s "$YAML" "$bad"; then fail "the sed left $YAML unchanged"; fi
	run properties "$bad"
	assert_failure
}

# The pod's command and probe, as the manifest has them, run on a fake node:
# a tree ($ROOT, x86-2node as a kernel shows it) under a directory every user
# can enter (the attacks run as uid 65534). The one substitution: the
# manifest's HUGEKIT_SYSROOT (unset in the pod) is the tree, so the command's
# paths are the tree's and hugeadm gets --sysroot "$ROOT"; and a `sleep` that
# sends the pod's shell the SIGTERM the kubelet sends to stop it, so that the
# idle loop ends at once (exit 0 by its trap).

# argv command|probe: the container's command or its readiness probe's, one
# NUL-terminated word each.
argv() {
	python3 - "$YAML" "$1" <<-'EOF'
		import sys, yaml
		docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]
		(c,) = next(d for d in docs if d["kind"] == "DaemonSet")["spec"]["template"]["spec"]["containers"]
		argv = c["command"] if sys.argv[2] == "command" else c["readinessProbe"]["exec"]["command"]
		sys.stdout.write("".join(a + "\0" for a in argv))
	EOF
}

node_setup() {
	hk_need_root "files of root's and of another user, and that user's attacks"
	hk_need_cmd setpriv util-linux
	python3 -c 'import yaml' 2> /dev/null || hk_missing "python3-yaml is not installed (apt-get install python3-yaml)"
	NODE=$(mktemp -d /tmp/hk-k8s-node.XXXXXX)
	chmod 0755 "$NODE"
	cp -R "$HK_FIXTURES/x86-2node" "$NODE/root"
	ROOT=$NODE/root
	kernel_like "$ROOT"
	CM=$ROOT/etc/hugekit-configmap
	POOL=$ROOT/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
	THP=$ROOT/sys/kernel/mm/transparent_hugepage/enabled
	TS=0
	mapfile -d '' POD < <(argv command)
	mapfile -d '' PROBE < <(argv probe)
	if [ "${#POD[@]}" != 3 ] || [ "${#PROBE[@]}" != 3 ]; then
		fail "no command or probe read from $YAML"
	fi
	CONF=$(properties "$YAML")
	mkdir "$NODE/stub"
	# The kubelet stopping the pod: SIGTERM to its shell, which its trap
	# ends (exit 0); SIGKILL (exit 137) if the shell slept again instead.
	cat > "$NODE/stub/sleep" <<-'EOF'
		#!/bin/sh
		if [ -e "$0.called" ]; then kill -KILL "$PPID"; fi
		: > "$0.called"
		kill -TERM "$PPID"
	EOF
	chmod 0755 "$NODE/stub/sleep"
}

teardown() {
	if [ -n "${NODE:-}" ]; then rm -rf "$NODE"; fi
}

# pod / probe: run the pod's command / its probe on the node.
pod() {
	rm -f "$NODE/stub/sleep.called"
	run --separate-stderr env HUGEKIT_SYSROOT="$ROOT" PATH="$NODE/stub:$PATH" "${POD[@]}"
}
probe() {
	run --separate-stderr env HUGEKIT_SYSROOT="$ROOT" "${PROBE[@]}"
}

# kubelet_update TEXT: what the kubelet's atomic writer does to $CM for a
# ConfigMap whose hugekit.conf is TEXT: a new timestamped directory (0755)
# holding the file (0644), a link ..data_tmp to it renamed over ..data, the
# previous directory removed.
kubelet_update() {
	local old ts
	old=$(readlink "$CM/..data") || old=
	TS=$((TS + 1))
	ts="..2026_12_07_10_0${TS}_00.12345678$TS"
	mkdir -m 0755 "$CM/$ts"
	printf '%s\n' "$1" > "$CM/$ts/hugekit.conf"
	chmod 0644 "$CM/$ts/hugekit.conf"
	ln -s "$ts" "$CM/..data_tmp"
	mv -T "$CM/..data_tmp" "$CM/..data"
	if [ -n "$old" ]; then rm -rf "${CM:?}/$old"; fi
}

# kubelet_volume MODE [DIR]: a ConfigMap volume at DIR ($CM), as the kubelet
# makes it: the directory MODE (0777 on disk, 1777 on tmpfs), the manifest's
# hugekit.conf behind ..data, and the key's link hugekit.conf -> ..data/hugekit.conf.
kubelet_volume() {
	CM=${2:-$CM}
	mkdir -p "$CM"
	chmod "$1" "$CM"
	kubelet_update "$CONF"
	ln -s ..data/hugekit.conf "$CM/hugekit.conf"
}

# as_other SCRIPT: SCRIPT run by sh as uid 65534 in $CM.
as_other() {
	run setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "cd \"\$1\" && $1" sh "$CM"
}

# refused REASON: the pod's command refused the volume, saying REASON, and
# applied nothing: no copy, the pool as it was.
refused() {
	assert_failure 1
	assert_output ''
	assert_equal "$stderr" "hugekit: $CM: $1: not copied, not applied"
	[ ! -e "$ROOT/etc/hugekit" ] || fail "a copy was made"
	assert_equal "$(cat "$POOL")" 24
}

# lifecycle MODE: a node's life with a ConfigMap volume of MODE.
lifecycle() {
	node_setup
	kubelet_volume "$1"
	# Before the pod started, not ready: nothing applied.
	probe
	assert_failure 1
	assert_equal "$stderr" "hugekit: the ConfigMap changed since --apply"
	# The pod: the ConfigMap copied, hugeadm's own checks pass, applied.
	pod
	assert_success
	assert_equal "$stderr" ''
	assert_output "changed: pool 2M minimum: 24 -> 512 ($ROOT/etc/hugekit/hugekit.conf:4)"
	assert_equal "$(cat "$POOL")" 512
	assert_equal "$(stat -c '%u %a %F' "$ROOT/etc/hugekit" "$ROOT/etc/hugekit/hugekit.conf")" \
		"$(printf '0 755 directory\n0 644 regular file')"
	assert_equal "$(ls -A "$ROOT/etc/hugekit")" hugekit.conf
	cmp "$CM/hugekit.conf" "$ROOT/etc/hugekit/hugekit.conf"
	probe
	assert_success
	assert_output "the machine matches the configuration (2 items)"
	# The node drifts: not ready; the pod's restart applies again.
	echo 500 > "$POOL"
	probe
	assert_failure 3
	assert_output "drift: pool 2M minimum: is 500, wanted 512 ($ROOT/etc/hugekit/hugekit.conf:4)"
	pod
	assert_success
	probe
	assert_success
	# The ConfigMap changes: not ready until the rollout restart's --apply.
	kubelet_update "$(printf '[pool 2M]\nminimum = 256\n[thp]\nenabled = never')"
	probe
	assert_failure 1
	assert_equal "$stderr" "hugekit: the ConfigMap changed since --apply"
	pod
	assert_success
	assert_line "changed: pool 2M minimum: 512 -> 256 ($ROOT/etc/hugekit/hugekit.conf:2)"
	assert_line "changed: thp enabled: madvise -> never ($ROOT/etc/hugekit/hugekit.conf:4)"
	assert_equal "$(cat "$POOL")" 256
	# The tree's file holds what hugeadm wrote (a kernel would show "[never]").
	assert_equal "$(cat "$THP")" never
	probe
	assert_success
}

@test "the pod on a ConfigMap volume on tmpfs (1777): not ready, applies the ConfigMap, ready; drift and a new ConfigMap turn it not ready until it applies again" {
	lifecycle 1777
}

@test "the pod on a ConfigMap volume on disk (0777): the same" {
	lifecycle 0777
}

@test "hugeadm still refuses the kubelet's directory as /etc/hugekit (1777 and 0777): why the pod copies it" {
	node_setup
	local mode
	for mode in 1777 0777; do
		rm -rf "$ROOT/etc/hugekit"
		kubelet_volume "$mode" "$ROOT/etc/hugekit"
		run --separate-stderr hugeadm --sysroot "$ROOT" --check
		assert_failure 1
		[[ $stderr == *"hugeadm:ERROR: $ROOT/etc/hugekit: writable by others (mode $mode): not read"* ]] || fail "$stderr"
	done
}

@test "attacks on a 0777 volume: another user's file or directory on the path, a swapped directory, files others can write, a plain directory, ..data out of the volume: refused, exit 1" {
	node_setup
	kubelet_volume 0777
	local ts
	ts=$(readlink "$CM/..data")
	# Another user's file behind ..data.
	chown 65534 "$CM/$ts/hugekit.conf"
	pod
	refused "hugekit.conf: not a file of root's only root can write"
	chown 0 "$CM/$ts/hugekit.conf"
	# Root's, but others can write it: the file (other users), then the
	# directory (its group).
	chmod 0646 "$CM/$ts/hugekit.conf"
	pod
	refused "hugekit.conf: not a file of root's only root can write"
	chmod 0644 "$CM/$ts/hugekit.conf"
	chmod 0775 "$CM/$ts"
	pod
	refused "$ts: not root's, or others can write it"
	chmod 0755 "$CM/$ts"
	# A link for the file, even to root's file.
	mv "$CM/$ts/hugekit.conf" "$CM/$ts/real.conf"
	ln -s real.conf "$CM/$ts/hugekit.conf"
	pod
	refused "hugekit.conf: not a file of root's only root can write"
	rm "$CM/$ts/hugekit.conf"
	mv "$CM/$ts/real.conf" "$CM/$ts/hugekit.conf"
	# In a 0777 directory another user renames root's directory away and puts
	# theirs under its name, behind root's ..data.
	as_other "mv $ts ..old && mkdir $ts && echo '[pool 2M]' > $ts/hugekit.conf && echo 'minimum = 9999' >> $ts/hugekit.conf"
	assert_success
	pod
	refused "$ts: not root's, or others can write it"
	rm -rf "${CM:?}/$ts"
	mv "$CM/..old" "$CM/$ts"
	# ... or replaces root's ..data with a link of theirs.
	as_other "ln -s $ts ..mine && mv -T ..mine ..data"
	assert_success
	pod
	refused "..data: no link of root's (not the kubelet's layout)"
	rm "$CM/..data"
	# A plain directory (no ..data), even with root's file in it.
	rm "$CM/hugekit.conf"
	cp "$CM/$ts/hugekit.conf" "$CM/hugekit.conf"
	pod
	refused "..data: no link of root's (not the kubelet's layout)"
	# Root's ..data, but to a directory out of the volume.
	ln -s ../hugekit-elsewhere "$CM/..data"
	mkdir -m 0755 "$ROOT/etc/hugekit-elsewhere"
	cp "$CM/hugekit.conf" "$ROOT/etc/hugekit-elsewhere/"
	pod
	refused "..data: leads out of the volume"
	rm "$CM/..data"
	ln -s "$ts" "$CM/..data"
	# The volume itself another user's.
	chown 65534 "$CM"
	pod
	refused "not root's"
	chown 0 "$CM"
	# All root's again: the pod runs.
	pod
	assert_success
	assert_equal "$(cat "$POOL")" 512
}

@test "attacks on a 1777 volume fail: another user can neither replace nor rename root's entries; what they add is not read" {
	node_setup
	kubelet_volume 1777
	local ts
	ts=$(readlink "$CM/..data")
	as_other "ln -s /tmp ..mine && mv -T ..mine ..data"
	assert_failure
	as_other "mv $ts ..old"
	assert_failure
	as_other "rm -f hugekit.conf"
	assert_failure
	# What another user adds: a drop-in beside the key, a conf.d, a file in
	# place of ..data_tmp. None is copied, none is read.
	as_other "printf '[pool 2M]\nminimum = 9999\n' > evil.conf && mkdir conf.d && cp evil.conf conf.d/ && cp evil.conf ..data_tmp"
	assert_success
	pod
	assert_success
	assert_equal "$stderr" ''
	assert_equal "$(cat "$POOL")" 512
	assert_equal "$(ls -A "$ROOT/etc/hugekit")" hugekit.conf
}

@test "a 0777 volume: the key's link another user replaces is not what is copied, and the probe says not ready" {
	node_setup
	kubelet_volume 0777
	as_other "rm hugekit.conf && printf '[pool 2M]\nminimum = 9999\n' > hugekit.conf"
	assert_success
	pod
	assert_success
	assert_equal "$(cat "$POOL")" 512
	probe
	assert_failure 1
	assert_equal "$stderr" "hugekit: the ConfigMap changed since --apply"
}

@test "the command and the probe pass shellcheck as sh scripts" {
	hk_need_cmd shellcheck shellcheck
	python3 -c 'import yaml' 2> /dev/null || hk_missing "python3-yaml is not installed (apt-get install python3-yaml)"
	local w
	for w in command probe; do
		mapfile -d '' argv_ < <(argv "$w")
		run shellcheck -s sh - <<< "${argv_[2]}"
		assert_success
	done
}
