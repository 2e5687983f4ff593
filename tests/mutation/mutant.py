#!/usr/bin/env python3
"""Helper of tests/mutation/run.sh: reads tests/mutation/mutants, keeps the
private copy of the source in step with the working tree, applies one mutant
to that copy and puts the file back. It never writes to the working tree.

  mutant.py list MUTANTS                 id<TAB>file<TAB>killers<TAB>why, one a line
  mutant.py check MUTANTS SRC            each mutant's text found exactly once in SRC?
  mutant.py sync SRC COPY                COPY := the files git lists in SRC
  mutant.py apply MUTANTS ID COPY        exit 0 applied, 3 text not found exactly once
  mutant.py restore SRC COPY FILE        COPY/FILE := SRC/FILE (new mtime)
"""
import os
import shutil
import subprocess
import sys

FIELDS = ("id", "file", "find", "replace", "kill", "why")


def parse(path):
    """Records are blocks of 'key: value' lines separated by blank lines;
    'find+: ' and 'replace+: ' continue the previous value on a new line.
    Lines starting with '#' are comments."""
    mutants, cur = [], {}
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                if cur:
                    mutants.append(cur)
                    cur = {}
                continue
            key, sep, val = line.partition(":")
            if not sep:
                sys.exit(f"{path}:{n}: expected 'key: value'")
            if val.startswith(" "):
                val = val[1:]
            if key.endswith("+"):
                base = key[:-1]
                if base not in ("find", "replace") or base not in cur:
                    sys.exit(f"{path}:{n}: {key} without {base}")
                cur[base] += "\n" + val
                continue
            if key not in FIELDS:
                sys.exit(f"{path}:{n}: unknown key {key!r}")
            if key in cur:
                sys.exit(f"{path}:{n}: {key} given twice")
            cur[key] = val
    if cur:
        mutants.append(cur)
    seen = set()
    for m in mutants:
        missing = [k for k in FIELDS if k not in m]
        if missing:
            sys.exit(f"{path}: mutant {m.get('id', '?')}: missing {', '.join(missing)}")
        if m["id"] in seen:
            sys.exit(f"{path}: mutant {m['id']} given twice")
        seen.add(m["id"])
    return mutants


def find(mutants, ident):
    for m in mutants:
        if m["id"] == ident:
            return m
    sys.exit(f"no mutant {ident}")


def copy_fresh(src, dst):
    """Copy content and mode with a new mtime, so make rebuilds what depends on it."""
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    tmp = dst + ".mutation-tmp"
    shutil.copyfile(src, tmp, follow_symlinks=False)
    if not os.path.islink(src):
        shutil.copymode(src, tmp)
    os.replace(tmp, dst)


def same(a, b):
    if os.path.islink(a) or os.path.islink(b):
        return os.path.islink(a) and os.path.islink(b) and os.readlink(a) == os.readlink(b)
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except FileNotFoundError:
        return False


def sync(src, copy):
    out = subprocess.run(["git", "-C", src, "ls-files", "-co", "--exclude-standard", "-z"],
                         check=True, capture_output=True).stdout
    files = sorted({f for f in out.decode().split("\0") if f and os.path.lexists(os.path.join(src, f))})
    changed = 0
    for f in files:
        s, d = os.path.join(src, f), os.path.join(copy, f)
        if os.path.isdir(s) and not os.path.islink(s):
            continue  # a submodule: not carried
        if not same(s, d):
            if os.path.lexists(d) and (os.path.islink(d) or os.path.isfile(d)):
                os.unlink(d)
            if os.path.islink(s):
                os.makedirs(os.path.dirname(d), exist_ok=True)
                os.symlink(os.readlink(s), d)
            else:
                copy_fresh(s, d)
            changed += 1
    keep = set(files)
    removed = 0
    for root, dirs, names in os.walk(copy):
        for n in names:
            rel = os.path.relpath(os.path.join(root, n), copy)
            if rel not in keep:
                os.unlink(os.path.join(root, n))
                removed += 1
    print(f"copy in step with the working tree: {changed} file(s) copied, {removed} removed")


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "list":
        for m in parse(sys.argv[2]):
            print("\t".join((m["id"], m["file"], m["kill"], m["why"])))
    elif cmd == "check":
        bad = 0
        for m in parse(sys.argv[2]):
            path = os.path.join(sys.argv[3], m["file"])
            n = open(path, encoding="utf-8").read().count(m["find"]) if os.path.exists(path) else -1
            if n != 1:
                print(f"{m['id']}: text found {n} times in {m['file']}")
                bad += 1
        sys.exit(1 if bad else 0)
    elif cmd == "sync":
        sync(sys.argv[2], sys.argv[3])
    elif cmd == "apply":
        m = find(parse(sys.argv[2]), sys.argv[3])
        path = os.path.join(sys.argv[4], m["file"])
        try:
            text = open(path, encoding="utf-8").read()
        except FileNotFoundError:
            print(f"{m['file']}: no such file", file=sys.stderr)
            sys.exit(3)
        n = text.count(m["find"])
        if n != 1:
            print(f"{m['file']}: the text to replace is found {n} times", file=sys.stderr)
            sys.exit(3)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(m["find"], m["replace"]))
    elif cmd == "restore":
        copy_fresh(os.path.join(sys.argv[2], sys.argv[4]), os.path.join(sys.argv[3], sys.argv[4]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
