#!/usr/bin/env python3
"""The cross build and package scripts refuse bad arguments with exit 2 and a
usage line, before building or installing anything. Prints TAP.

Usage: test-script-usage.py SOURCE_ROOT
"""

import os
import subprocess
import sys
import tempfile

CASES = [
    # (script, arguments, what the message must name)
    ("scripts/cross-build", [], "usage:"),
    ("scripts/cross-build", ["mips"], "unknown architecture 'mips'"),
    ("scripts/cross-build", ["x86_64", "build-x"], "unknown architecture 'x86_64'"),
    ("scripts/deps", ["--arm"], "usage:"),
    ("packaging/build-packages", [], "usage:"),
    ("packaging/build-packages", ["--arch", "mips", "OUT"], "unknown architecture 'mips'"),
    ("packaging/build-packages", ["--arch"], "usage:"),
    ("packaging/build-packages", ["--bogus", "OUT"], "usage:"),
    ("packaging/build-packages", ["--check", "--arch", "arm64", "OUT"], "qemu-aarch64"),
    ("packaging/test-packages", ["--arch", "mips", "OUT"], "unknown architecture 'mips'"),
    ("packaging/test-packages", ["--arch"], "usage:"),
]


def main(root):
    print(f"1..{len(CASES)}")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (script, args, want) in enumerate(CASES, 1):
            # OUT is a fresh directory: test-packages wants one that exists.
            args = [os.path.join(tmp, "out") if a == "OUT" else a for a in args]
            os.makedirs(os.path.join(tmp, "out"), exist_ok=True)
            proc = subprocess.run([os.path.join(root, script)] + args, capture_output=True,
                                  text=True, timeout=60, cwd=tmp)
            ok = proc.returncode == 2 and want in proc.stderr and "usage:" in proc.stderr
            left = sorted(os.listdir(os.path.join(tmp, "out")))
            ok = ok and not left
            failed += not ok
            print(f"{'ok' if ok else 'not ok'} {i} - {script} {' '.join(args)}: exit "
                  f"{proc.returncode}, names {want!r}")
            if not ok:
                print("# stderr: " + proc.stderr.replace("\n", "\n# "))
                print(f"# left in OUT: {left}")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: test-script-usage.py SOURCE_ROOT", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
