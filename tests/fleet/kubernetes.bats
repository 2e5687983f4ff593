#!/usr/bin/env bats
# contrib/kubernetes/hugekit-daemonset.yaml: valid YAML (PyYAML, yamllint) and
# a DaemonSet that can do its job: privileged, the host's /sys, the config
# from the ConfigMap at /etc/hugekit, --apply at start, --check as readiness
# probe, on every node.

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert
# shellcheck source=tests/common.bash
source "$BATS_TEST_DIRNAME/../common.bash"

: "${HK_SOURCE_DIR:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
YAML="$HK_SOURCE_DIR/contrib/kubernetes/hugekit-daemonset.yaml"

@test "the manifest passes yamllint (relaxed, long lines allowed)" {
	hk_need_cmd yamllint yamllint
	run yamllint -s -d '{extends: relaxed, rules: {line-length: disable}}' "$YAML"
	assert_success
	assert_output ''
}

# properties FILE: check FILE's documents; print the ConfigMap's hugekit.conf.
properties() {
	python3 - "$1" <<-'EOF'
		import sys, yaml
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
		cfg = mounts["/etc/hugekit"]["name"]
		assert vols[cfg]["configMap"]["name"] == cm["metadata"]["name"]
		assert cm["metadata"]["namespace"] == ds["metadata"]["namespace"]
		assert "hugekit.conf" in cm["data"]
		cmd = " ".join(c["command"])
		assert "hugeadm --apply" in cmd, cmd
		assert cmd.index("hugeadm --apply") < cmd.index("sleep"), cmd
		probe = c["readinessProbe"]["exec"]["command"]
		assert probe[0] == "hugeadm" and "--check" in probe, probe
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
	sed 's|\["hugeadm", "--check"\]|["hugeadm", "--apply"]|' "$YAML" > "$bad"
	# `! cmd` never fails a bats test (errexit ignores it): the edit must have changed the file.
	if cmp -s "$YAML" "$bad"; then fail "the sed left $YAML unchanged"; fi
	run properties "$bad"
	assert_failure
	sed 's/^kind: DaemonSet/kind: Deployment/' "$YAML" > "$bad"
	run properties "$bad"
	assert_failure
}
