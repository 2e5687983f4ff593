# shellcheck shell=bash
# SC2034: the variables are the .bats files'; SC2154: bats' run sets $output.
# shellcheck disable=SC2034,SC2154
# Shared by the fleet tests: contrib/ansible's role run by ansible-playbook
# against localhost, into a scratch directory.

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert
# shellcheck source=tests/common.bash
source "${BASH_SOURCE[0]%/*}/../common.bash"

: "${HK_SOURCE_DIR:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${HK_BUILD_DIR:=$HK_SOURCE_DIR/build/dev}"
FAKE_HUGEADM="$HK_SOURCE_DIR/tests/fleet/fake-hugeadm"
ROLE_DIR="$HK_SOURCE_DIR/contrib/ansible/roles/hugekit"

# fleet_requirements: skip (with the reason) without ansible-playbook.
fleet_requirements() {
	hk_need_cmd ansible-playbook ansible-core
}

# fleet_env DIR: ansible's settings, state and temporary files under DIR, so
# that no ansible.cfg, ~/.ansible or colour of the caller's gets in the way.
fleet_env() {
	mkdir -p "$1/ansible-home" "$1/ansible-tmp" "$1/tmp"
	# Scratch files of this run only (not another run's in /tmp).
	export TMPDIR="$1/tmp"
	export ANSIBLE_HOME="$1/ansible-home"
	export ANSIBLE_LOCAL_TEMP="$1/ansible-tmp"
	export ANSIBLE_REMOTE_TMP="$1/ansible-tmp"
	export ANSIBLE_CONFIG="$1/ansible.cfg"
	: > "$ANSIBLE_CONFIG"
	export ANSIBLE_ROLES_PATH="$HK_SOURCE_DIR/contrib/ansible/roles"
	export ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0
	export ANSIBLE_STDOUT_CALLBACK=default
	export ANSIBLE_RETRY_FILES_ENABLED=0
	# Ansible refuses to run in a locale that is not UTF-8 (ctest sets LC_ALL=C).
	export LC_ALL=C.UTF-8 LANG=C.UTF-8
	ANSIBLE_PYTHON_INTERPRETER=$(command -v python3)
	export ANSIBLE_PYTHON_INTERPRETER
}

# fleet_playbook DIR: DIR/play.yml, which runs the role on localhost with the
# variables of DIR/vars.yml (written by the test) and the configuration under
# DIR/etc/hugekit, owned by the caller.
fleet_playbook() {
	cat > "$1/play.yml" <<-EOF
		---
		- name: Run the hugekit role
		  hosts: localhost
		  gather_facts: false
		  vars_files:
		    - $1/vars.yml
		  roles:
		    - role: hugekit
		      vars:
		        hugekit_config_dir: $1/etc/hugekit
		        hugekit_config_owner: $(id -un)
		        hugekit_config_group: $(id -gn)
		  post_tasks:
		    - name: Show what hugeadm said
		      ansible.builtin.debug:
		        msg: >-
		          {% for c in hugekit_result.changes | default([]) %}change {{ c.item }}: {{ c.from }} -> {{ c.to }}; {% endfor %}
		          {% for d in hugekit_result.differences | default([]) %}difference {{ d.item }}: {{ d.current }} wanted {{ d.wanted }}; {% endfor %}
	EOF
}

# fleet_run DIR [ARGS...]: ansible-playbook on DIR/play.yml (bats' run: $status,
# $output); the play recap's counts in $changed and $failed.
fleet_run() {
	local dir=$1
	shift
	run ansible-playbook -i localhost, -c local "$dir/play.yml" "$@"
	echo "$output" > "$dir/last-run.log"
	changed=$(sed -n 's/^localhost *: .* changed=\([0-9]*\) .*/\1/p' <<< "$output")
	failed=$(sed -n 's/^localhost *: .* failed=\([0-9]*\) .*/\1/p' <<< "$output")
	if [ -z "$changed" ]; then
		echo "$output"
		fail "no play recap in ansible-playbook's output"
	fi
}
