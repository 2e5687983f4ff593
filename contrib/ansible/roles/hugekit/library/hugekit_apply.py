#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Ansible module: make a machine's huge pages match hugekit's configuration."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: hugekit_apply
short_description: Run C(hugeadm --apply) and report what it changed
description:
  - Runs C(hugeadm --apply --json) on the configuration and reports C(changed)
    only when hugeadm changed something.
  - In check mode runs C(hugeadm --check --json) instead and never applies;
    C(changed) is true when the machine differs from the configuration, with
    the differences in the result.
options:
  hugeadm:
    description: The hugeadm to run, a name looked up in PATH or a path.
    type: str
    default: hugeadm
  config:
    description:
      - Configuration files. Empty (the default) runs hugeadm without a file, so
        that it reads /etc/hugekit/hugekit.conf and /etc/hugekit/conf.d/*.conf
        itself. Given files, hugeadm runs once per file, in order (hugeadm reads
        a file it is given alone), and the results are merged.
    type: list
    elements: path
    default: []
  strict:
    description: Pass C(--strict), so a pool that comes up short fails the task.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
"""

EXAMPLES = r"""
- name: Apply /etc/hugekit
  hugekit_apply:

- name: Apply one file, failing when a pool comes up short
  hugekit_apply:
    config: /srv/hugekit/db.conf
    strict: true
"""

RETURN = r"""
changes:
  description: What hugeadm changed (not in check mode), C(item), C(from), C(to).
  returned: always
  type: list
short:
  description: Pools that came up short (not in check mode).
  returned: always
  type: list
differences:
  description: In check mode, where the machine differs, C(item), C(current), C(wanted).
  returned: always
  type: list
commands:
  description: The hugeadm command lines run.
  returned: always
  type: list
"""

import json

from ansible.module_utils.basic import AnsibleModule


def run_one(module, argv, check):
    rc, out, err = module.run_command(argv)
    want_rc = (0, 3) if check else (0,)
    if rc not in want_rc:
        result = dict(rc=rc, stdout=out, stderr=err, cmd=argv)
        if rc == 2 and not check:
            # --strict: the writes were made, a pool came up short.
            try:
                result.update(json.loads(out))
            except ValueError:
                pass
            result["changed"] = bool(result.get("changed", True))
        msg = err.strip() or out.strip() or "hugeadm exited with %d" % rc
        module.fail_json(msg=msg, **result)
    try:
        data = json.loads(out)
    except ValueError:
        module.fail_json(msg="hugeadm printed no JSON: %r" % out[:200], rc=rc, stdout=out, stderr=err, cmd=argv)
    if check and (rc == 3) != bool(data.get("drifted")):
        module.fail_json(msg="hugeadm --check exited %d but said drifted=%s" % (rc, data.get("drifted")),
                         rc=rc, stdout=out, stderr=err, cmd=argv)
    return data, err


def main():
    module = AnsibleModule(
        argument_spec=dict(
            hugeadm=dict(type="str", default="hugeadm"),
            config=dict(type="list", elements="path", default=[]),
            strict=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    hugeadm = module.params["hugeadm"]
    if "/" not in hugeadm:
        hugeadm = module.get_bin_path(hugeadm, required=True)
    check = module.check_mode
    files = module.params["config"] or [None]

    changes, short, differences, commands, warnings = [], [], [], [], []
    changed = False
    for f in files:
        if check:
            argv = [hugeadm, "--check", "--json"]
        else:
            argv = [hugeadm, "--apply", "--json"]
            if module.params["strict"]:
                argv.append("--strict")
        if f is not None:
            argv.append(f)
        commands.append(argv)
        data, err = run_one(module, argv, check)
        if check:
            differences.extend(data.get("differences", []))
            changed = changed or bool(data.get("drifted"))
        else:
            changes.extend(data.get("changes", []))
            short.extend(data.get("short", []))
            changed = changed or bool(data.get("changed"))
            if err.strip():
                warnings.append(err.strip())

    result = dict(changed=changed, changes=changes, short=short, differences=differences, commands=commands)
    if module._diff:
        if check:
            pairs = [(d.get("item"), d.get("current"), d.get("wanted")) for d in differences]
        else:
            pairs = [(c.get("item"), c.get("from"), c.get("to")) for c in changes]
        result["diff"] = dict(
            before="".join("%s = %s\n" % (i, a) for i, a, _ in pairs),
            after="".join("%s = %s\n" % (i, b) for i, _, b in pairs),
        )
    for w in warnings:
        module.warn(w)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
