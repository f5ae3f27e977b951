#!/usr/bin/env python3
"""Checks a built binary's ELF with readelf: its machine, and the hardening
the top-level meson.build and the cross files ask for (PIE, full RELRO:
GNU_RELRO and BIND_NOW, a stack that is not executable), and that it links
no libvirt. A cross build that lost its link flags (meson drops -z relro/now/
noexecstack when its link tests fail) fails here.

Usage:
  check-elf.py MACHINE BINARY [--unhardened FIXTURE]
MACHINE is meson's cpu_family (x86_64, aarch64). With --unhardened, FIXTURE
is a binary linked without any of it (tests/packaging/meson.build), and the
check must find each defect there too, so that it is known to be able to fail.
Prints TAP; a missing readelf is a skip.
"""

import os
import re
import shutil
import subprocess
import sys

MACHINES = {
    "x86_64": "Advanced Micro Devices X86-64",
    "aarch64": "AArch64",
}
HARDENING = ("pie", "relro", "bind-now", "noexecstack")


def readelf(args, path):
    proc = subprocess.run(["readelf", "-W"] + args + [path], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        raise ValueError(f"readelf {' '.join(args)} {path}: {proc.stderr.strip()}")
    return proc.stdout


def inspect(path):
    """What the ELF says: machine, and the set of hardening properties it has."""
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    with open(path, "rb") as f:
        if f.read(4) != b"\x7fELF":
            raise ValueError(f"{path}: not an ELF file")
    header = readelf(["-h"], path)
    segments = readelf(["-l"], path)
    dynamic = readelf(["-d"], path)
    m = re.search(r"^\s*Machine:\s*(.+?)\s*$", header, re.M)
    machine = m.group(1) if m else None
    has = set()
    flags_1 = re.search(r"\(FLAGS_1\)\s+Flags:\s*(.*)$", dynamic, re.M)
    flags_1 = flags_1.group(1).split() if flags_1 else []
    if re.search(r"^\s*Type:\s*DYN\b", header, re.M) and "PIE" in flags_1:
        has.add("pie")
    if re.search(r"^\s*GNU_RELRO\s", segments, re.M):
        has.add("relro")
    if re.search(r"\(FLAGS\)\s+.*\bBIND_NOW\b", dynamic) or "NOW" in flags_1:
        has.add("bind-now")
    stack = re.search(r"^\s*GNU_STACK\s+(?:\S+\s+){5}(\S+)", segments, re.M)
    if stack and "E" not in stack.group(1):
        has.add("noexecstack")
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", dynamic)
    return machine, has, needed


def main(argv):
    fixture = None
    if len(argv) == 4 and argv[2] == "--unhardened":
        argv = argv[:2] + argv[3:]
        fixture = argv.pop()
    if len(argv) != 2 or argv[0] not in MACHINES:
        print("usage: check-elf.py {%s} BINARY [--unhardened FIXTURE]" % ",".join(MACHINES),
              file=sys.stderr)
        return 2
    family, binary = argv
    if shutil.which("readelf") is None:
        print("1..0 # SKIP no readelf (binutils)")
        return 0
    results = []

    def check(ok, what):
        results.append((ok, what))

    try:
        machine, has, needed = inspect(binary)
    except ValueError as e:
        print("1..1\nnot ok 1 - %s" % e)
        return 1
    check(machine == MACHINES[family],
          f"{binary} is {MACHINES[family]} (readelf says {machine})")
    for prop in HARDENING:
        check(prop in has, f"{binary}: {prop}")
    libvirt = [n for n in needed if "libvirt" in n]
    check(not libvirt, f"{binary} links no libvirt ({' '.join(needed)})")
    if fixture is not None:
        try:
            _, fixture_has, _ = inspect(fixture)
        except ValueError as e:
            print("1..1\nnot ok 1 - %s" % e)
            return 1
        for prop in HARDENING:
            check(prop not in fixture_has, f"the check sees {prop} missing in {fixture}")
    print(f"1..{len(results)}")
    for i, (ok, what) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {what}")
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
