#!/usr/bin/env python3
"""scripts/deps --arm64 installs every arm64 library that Debian's arm64
qemu-guest-agent needs (bench/fidelity-aarch64 puts it into the aarch64
guest image with those libraries): what the script asks apt-get to install,
with all that depends on, is held against apt-cache's own Depends of
qemu-guest-agent:arm64.

The script runs for real with PATH shims for the commands that would change
the machine (apt-get, dpkg --add-architecture, sudo, systemctl) and a
dpkg-query that says nothing is installed, so it asks for its whole list;
apt-get only records that list. Skips when apt knows no arm64 packages.
Prints TAP.

Usage: test-deps-arm64.py SOURCE_ROOT
"""

import os
import shutil
import stat
import subprocess
import sys
import tempfile

SHIMS = {
    # nothing is installed: the script asks for everything on its list
    "dpkg-query": "exit 1\n",
    # arm64 is already a foreign architecture: no --add-architecture
    "dpkg": 'if [ "$1" = --print-foreign-architectures ]; then echo arm64; exit 0; fi\n'
            'echo "dpkg shim: unexpected $*" >&2; exit 1\n',
    "apt-get": 'echo "$@" >>"$GB_SHIM_LOG"\n',
    "sudo": 'exec "$@"\n',
    "systemctl": "exit 0\n",
}


def qemu_ga_arm64_depends():
    """The arm64 libraries qemu-guest-agent:arm64 depends on, as apt-cache names them."""
    r = subprocess.run(["apt-cache", "depends", "qemu-guest-agent:arm64"], capture_output=True,
                       text=True, timeout=60)
    deps = set()
    for line in r.stdout.splitlines():
        kind, _, pkg = line.strip().partition(": ")
        if kind == "Depends" and pkg.startswith("lib") and pkg.endswith(":arm64"):
            deps.add(pkg)
    return deps


def closure(pkgs):
    """pkgs and every package they depend on, recursively (what apt-get install brings)."""
    r = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
                        "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"] +
                       sorted(pkgs), capture_output=True, text=True, timeout=120)
    return {line.strip() for line in r.stdout.splitlines() if not line.startswith(" ")}


def main(root):
    if not shutil.which("apt-cache"):
        print("1..0 # SKIP no apt-cache")
        return 0
    deps = qemu_ga_arm64_depends()
    if not deps:
        print("1..0 # SKIP apt knows no qemu-guest-agent:arm64 (dpkg --add-architecture "
              "arm64; apt-get update)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, body in SHIMS.items():
            path = os.path.join(tmp, name)
            with open(path, "w") as fh:
                fh.write("#!/bin/sh\n" + body)
            os.chmod(path, stat.S_IRWXU)
        log = os.path.join(tmp, "apt-get.log")
        env = dict(os.environ, PATH=tmp + ":" + os.environ["PATH"], GB_SHIM_LOG=log)
        r = subprocess.run([os.path.join(root, "scripts", "deps"), "--arm64"], env=env,
                           capture_output=True, text=True, timeout=60, cwd=tmp)
        try:
            with open(log) as fh:
                calls = fh.read().splitlines()
        except FileNotFoundError:
            calls = []
    installed = set()
    for call in calls:
        words = call.split()
        if "install" in words:
            installed.update(w for w in words[words.index("install") + 1:]
                             if not w.startswith("-"))
    print("1..2")
    ok = r.returncode == 0 and installed
    print("%s 1 - scripts/deps --arm64 ran and asked apt-get to install its list" %
          ("ok" if ok else "not ok"))
    if not ok:
        print("# exit %d, apt-get calls %r, stderr: %s" % (r.returncode, calls, r.stderr))
    lacking = sorted(deps - closure(installed)) if installed else sorted(deps)
    print("%s 2 - it installs qemu-guest-agent:arm64's libraries (%s)" % (
        "ok" if not lacking else "not ok", " ".join(sorted(deps))))
    if lacking:
        print("# not installed by scripts/deps --arm64: " + " ".join(lacking))
    return 0 if ok and not lacking else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: test-deps-arm64.py SOURCE_ROOT", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
