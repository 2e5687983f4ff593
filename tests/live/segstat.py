#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""segstat.py: where a program's segments are, from the outside.

  segstat.py elf FILE    the text (R+X PT_LOAD) of FILE and its 2 MiB-aligned
                         interior, the part that can go on 2 MiB pages
  segstat.py pid PID     for the main executable of process PID: per range
                         (text, data, bss) its size and the fractions on
                         hugetlb pages and on transparent huge pages, from
                         /proc/PID/smaps

Used by the live tests and the benchmarks for programs that do not measure
themselves (cc1, cc1plus); tests/live/segbig.c does the same from inside.
"""
import os
import struct
import sys

HUGE = 2 << 20


def phdrs(path):
    """(e_type, [(p_type, p_flags, p_vaddr, p_filesz, p_memsz)]) of a 64-bit LE ELF."""
    with open(path, "rb") as f:
        h = f.read(64)
        if h[:4] != b"\x7fELF" or h[4] != 2 or h[5] != 1:
            raise SystemExit(f"segstat: {path}: not a 64-bit little-endian ELF file")
        e_type = struct.unpack_from("<H", h, 16)[0]
        phoff = struct.unpack_from("<Q", h, 32)[0]
        phentsize, phnum = struct.unpack_from("<HH", h, 54)
        f.seek(phoff)
        raw = f.read(phentsize * phnum)
    out = []
    for i in range(phnum):
        p_type, p_flags, _off, vaddr, _pa, filesz, memsz, _al = struct.unpack_from(
            "<IIQQQQQQ", raw, i * phentsize)
        out.append((p_type, p_flags, vaddr, filesz, memsz))
    return e_type, out


def ranges(path, base):
    """{'text': (s, e), 'data': (s, e), 'bss': (s, e)} at load base BASE."""
    page = os.sysconf("SC_PAGE_SIZE")
    _t, ph = phdrs(path)
    relro_end = 0
    for p_type, _f, vaddr, _fs, memsz in ph:
        if p_type == 0x6474E552:  # PT_GNU_RELRO
            relro_end = base + vaddr + memsz
    r = {}
    for p_type, flags, vaddr, filesz, memsz in ph:
        if p_type != 1:  # PT_LOAD
            continue
        s = base + vaddr
        if flags & 1 and "text" not in r:  # PF_X
            r["text"] = (s & ~(page - 1), (s + memsz + page - 1) & ~(page - 1))
        elif flags & 2:  # PF_W: data after RELRO, then the bss tail
            ds = max(s, relro_end)
            de = s + filesz
            r["data"] = (ds, de)
            r["bss"] = (de, s + memsz)
    return r


def interior(s, e):
    a = (s + HUGE - 1) & ~(HUGE - 1)
    b = e & ~(HUGE - 1)
    return max(0, b - a)


def load_base(pid, exe):
    """The load bias: the first mapping of the file at offset 0, less its first vaddr."""
    _t, ph = phdrs(exe)
    first = min(v for t, _f, v, _fs, _m in ph if t == 1)
    st = os.stat(exe)
    with open(f"/proc/{pid}/maps") as m:
        for line in m:
            f = line.split()
            if len(f) >= 6 and int(f[2], 16) == 0:
                dev_ino = (f[3], int(f[4]))
                maj, mnr = (int(x, 16) for x in dev_ino[0].split(":"))
                if dev_ino[1] == st.st_ino and os.makedev(maj, mnr) == st.st_dev:
                    return int(f[0].split("-")[0], 16) - (first & ~(os.sysconf("SC_PAGE_SIZE") - 1))
    raise SystemExit(f"segstat: {exe} is not mapped in process {pid}")


def smaps_fractions(pid, r):
    """{kind: (bytes, hugetlb bytes, thp bytes)} from /proc/PID/smaps."""
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    out = {k: [e - s, 0, 0] for k, (s, e) in r.items()}
    vma = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split(None, 1)[0]
            if "-" in head and not head.endswith(":"):
                vs, ve = (int(x, 16) for x in head.split("-"))
                vma = [vs, ve, 0, 0]
            elif head == "KernelPageSize:" and vma:
                vma[2] = int(line.split()[1])
            elif head == "AnonHugePages:" and vma:
                vma[3] = int(line.split()[1]) * 1024
            elif head == "VmFlags:" and vma:
                for k, (s, e) in r.items():
                    inter = min(e, vma[1]) - max(s, vma[0])
                    if inter <= 0:
                        continue
                    if vma[2] > page_kb:
                        out[k][1] += inter
                    out[k][2] += min(vma[3], inter)
                vma = None
    return out


def main(argv):
    if len(argv) == 3 and argv[1] == "elf":
        r = ranges(argv[2], 0)
        s, e = r["text"]
        print(f"{argv[2]}: text {(e - s) / 2**20:.1f} MiB, 2 MiB-aligned interior "
              f"{interior(s, e) / 2**20:.1f} MiB ({100 * interior(s, e) / (e - s):.0f} %)")
        return 0
    if len(argv) == 3 and argv[1] == "pid":
        pid = argv[2]
        exe = os.readlink(f"/proc/{pid}/exe")
        e_type, _ph = phdrs(exe)
        base = load_base(pid, exe) if e_type == 3 else 0  # ET_DYN: PIE
        for k, (size, huge, thp) in smaps_fractions(pid, ranges(exe, base)).items():
            size = max(size, 1)
            print(f"{k} {size} hugetlb {100 * huge / size:.1f} thp {100 * thp / size:.1f}")
        return 0
    print(__doc__, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
