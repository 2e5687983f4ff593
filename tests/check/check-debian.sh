#!/usr/bin/env bash
# debian/ agrees with the tree, without a package build (tests/package/debian.bats
# builds the packages): the changelog's version is the project's; the library
# packages are named after the SONAMEs lib/CMakeLists.txt gives (libhugekit1,
# libhugekit-rt0); the symbols files list exactly the symbols and version nodes
# of lib/core/libhugekit.sym and lib/runtime/hugekit-rt.sym (the runtime's may
# add unversioned @Base ones, which its script cannot name); every lintian
# override has a comment above it that says why.
set -euo pipefail
src=${HK_SOURCE_DIR:?}
python3 - "$src" <<'PY'
import glob, os, re, sys

src = sys.argv[1]
bad = []


def read(p):
    with open(os.path.join(src, p)) as f:
        return f.read()


# The changelog's version is project(VERSION) (a native package).
project = re.search(r"project\(hugekit VERSION (\S+)", read("CMakeLists.txt")).group(1)
changelog = re.match(r"hugekit \(([^)]+)\)", read("debian/changelog")).group(1)
if changelog != project:
    bad.append(f"debian/changelog is at {changelog}, CMakeLists.txt's project at {project}")

# Library packages named after the SONAMEs.
lib = read("lib/CMakeLists.txt")
control = read("debian/control")
packages = re.findall(r"^Package: (\S+)", control, re.M)
for var, stem in (("HK_SOVERSION", "libhugekit"), ("HK_RT_SOVERSION", "libhugekit-rt")):
    m = re.search(r"set\(%s (\d+)\)" % var, lib)
    if not m:
        bad.append(f"lib/CMakeLists.txt: no set({var} N)")
        continue
    so = m.group(1)
    want = stem + so if not stem[-1].isdigit() else f"{stem}-{so}"
    if want not in packages:
        bad.append(f"{stem}.so.{so}: no package {want} in debian/control ({' '.join(packages)})")
    sym = f"debian/{want}.symbols"
    if not os.path.exists(os.path.join(src, sym)):
        bad.append(f"{sym} is missing")
    elif not read(sym).startswith(f"{stem}.so.{so} {want} "):
        bad.append(f"{sym}: its first line is not '{stem}.so.{so} {want} #MINVER#'")


def script(path):
    """(symbol, node) pairs of a version script, and the nodes."""
    text = re.sub(r"/\*.*?\*/", "", read(path), flags=re.S)
    pairs, nodes = set(), set()
    for m in re.finditer(r"([\w.]+)\s*\{(.*?)\}\s*[\w.]*\s*;", text, re.S):
        node = m.group(1)
        nodes.add(node)
        body = m.group(2).split("local:")[0].replace("global:", "")
        pairs |= {(s.strip(), node) for s in body.split(";") if s.strip()}
    return pairs, nodes


def symbols(path):
    pairs = set()
    for line in read(path).splitlines()[1:]:
        if line.startswith(" "):
            m = re.match(r" (\S+)@(\S+) \S+$", line)
            if not m:
                bad.append(f"{path}: not 'SYMBOL@NODE VERSION': {line!r}")
                continue
            pairs.add((m.group(1), m.group(2)))
    return pairs


for vs, sym, extra_base in (
    ("lib/core/libhugekit.sym", "debian/libhugekit1.symbols", False),
    ("lib/runtime/hugekit-rt.sym", "debian/libhugekit-rt0.symbols", True),
):
    if not os.path.exists(os.path.join(src, sym)):
        continue
    pairs, nodes = script(vs)
    want = pairs | {(n, n) for n in nodes}
    have = symbols(sym)
    for s, n in sorted(want - have):
        bad.append(f"{sym}: missing ' {s}@{n} {project}' ({vs} exports it)")
    for s, n in sorted(have - want):
        if not (extra_base and n == "Base"):
            bad.append(f"{sym}: lists {s}@{n}, which {vs} does not export")

# Each override with its reason: a comment line right above it.
for path in sorted(glob.glob(os.path.join(src, "debian", "*lintian-overrides"))
                   + glob.glob(os.path.join(src, "debian", "source", "lintian-overrides"))):
    prev = ""
    for no, line in enumerate(open(path), 1):
        line = line.rstrip("\n")
        if line.strip() and not line.startswith("#") and not prev.startswith("#"):
            bad.append(f"{os.path.relpath(path, src)}:{no}: an override without a comment above it saying why")
        prev = line if line.strip() else ""

if bad:
    print("check-debian:\n  " + "\n  ".join(bad), file=sys.stderr)
    sys.exit(1)
print(f"check-debian: debian/ at {project}; packages {' '.join(packages)}; symbols files match the version scripts")
PY
