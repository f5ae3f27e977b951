#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The host CLI on a machine without libvirt's client library (a Proxmox VE
node has none): the same guestbench binary, run in a private mount namespace
where an overlay hides libvirt.so.0 and libvirt-qemu.so.0 from the library
directory (overlayfs whiteouts: the files are absent, as when libvirt0 is not
installed). Everything else works; a libvirt target or URI says what to
install. Outside the namespace the same commands reach libvirt's test driver.
Needs root (mount); skips otherwise, or when guestbench is built without
libvirt (argument "no-libvirt"). Prints TAP."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, skip, start_agents, stop, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]
BUILT = len(sys.argv) > 1 and sys.argv[1] == "libvirt"
HIDDEN = ("libvirt.so.0", "libvirt-qemu.so.0")


def library_dir():
    """The directory the dynamic linker finds libvirt.so.0 in, resolved."""
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.split(" ")[0] == "libvirt.so.0" and os.path.exists(path):
            return os.path.dirname(os.path.realpath(path))
    return None


def whiteouts(tmp, libdir):
    """A lower layer of whiteouts (0:0 character devices) for every libvirt*.so.0* file."""
    layer = os.path.join(tmp, "no-libvirt")
    os.mkdir(layer)
    names = [n for n in os.listdir(libdir)
             if any(n == h or n.startswith(h + ".") for h in HIDDEN)]
    for n in names:
        os.mknod(os.path.join(layer, n), 0o600 | 0o020000, os.makedev(0, 0))
    return layer, names


def run(argv, hide=None, env=None):
    """argv, in a mount namespace of its own where hide = (layer, libdir) is overlaid."""
    if hide is not None:
        layer, libdir = hide
        script = ('mount -t overlay overlay -o "lowerdir=$1:$2" "$2" || exit 99; '
                  'shift 2; exec "$@"')
        argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
                layer, libdir] + argv
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout, p.stderr


def main():
    if not BUILT:
        skip("guestbench without libvirt0", "built without libvirt: nothing is loaded at run time")
        return tap_report()
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        skip("guestbench without libvirt0", "needs root and unshare(1) to hide the library")
        return tap_report()
    libdir = library_dir()
    if libdir is None:
        skip("guestbench without libvirt0", "ldconfig -p knows no libvirt.so.0")
        return tap_report()

    needed = subprocess.run(["readelf", "-d", CLI], capture_output=True, text=True).stdout
    check("guestbench does not link libvirt (no NEEDED entry: it starts without it)",
          "NEEDED" in needed and "libvirt" not in needed, needed)

    tmp = tempfile.mkdtemp(prefix="gb-nolibvirt-")
    procs = []
    try:
        layer, names = whiteouts(tmp, libdir)
        hide = (layer, libdir)
        check("the overlay hides %s" % ", ".join(sorted(names)),
              "libvirt.so.0" in names and "libvirt-qemu.so.0" in names, names)
        probe = [sys.executable, "-c", "import ctypes; ctypes.CDLL('libvirt.so.0')"]
        rc, out, err = run(probe, hide)
        check("in the namespace libvirt.so.0 cannot be loaded at all", rc == 1
              and "libvirt.so.0" in err, "rc %d: %s" % (rc, err[-500:]))
        rc, out, err = run(probe)
        check("outside it, it can (the test changes nothing for others)", rc == 0, err[-500:])

        rc, out, err = run([CLI, "--version"], hide)
        check("guestbench --version runs without libvirt0", rc == 0 and out.strip(), err)

        procs, socks = start_agents(tmp, ["g1"])
        rc, out, err = run([CLI, "facts", "--format", "json", "unix:" + socks[0]], hide)
        try:
            doc = json.loads(out)
        except ValueError:
            doc = {}
        check("facts over unix: works without libvirt0", rc == 0 and "cpu" in json.dumps(doc),
              "rc %d: %s %s" % (rc, out[-500:], err[-500:]))
        rc, out, err = run([CLI, "audit", "--format", "json", "unix:" + socks[0]], hide)
        check("audit over unix: works without libvirt0", rc in (0, 1) and '"findings"' in out,
              "rc %d: %s %s" % (rc, out[-300:], err[-500:]))

        rc, out, err = run([CLI, "discover", "--connect", "test:///default", "--format",
                            "json"])
        check("with libvirt0, discover --connect test:///default lists the test driver's domain",
              rc == 0 and '"test"' in out, "rc %d: %s %s" % (rc, out[-500:], err[-500:]))
        rc, out, err = run([CLI, "discover", "--connect", "test:///default"], hide)
        text = out + err
        check("without it, the same discover says what to install, exits 3 (guest failed)",
              rc == 3 and "libvirt's client library is not installed" in text
              and "libvirt0" in text and "libvirt-libs" in text and "Traceback" not in text,
              "rc %d: %s" % (rc, text[-800:]))
        rc, out, err = run([CLI, "ping", "--format", "json", "libvirt:test",
                            "unix:" + socks[0]], hide,
                           env={"LIBVIRT_DEFAULT_URI": "test:///default"})
        try:
            doc = {g.get("target"): g for g in json.loads(out).get("guests", [])}
        except (ValueError, AttributeError):
            doc = {}
        lv = doc.get("libvirt:test", {})
        check("ping libvirt:test unix:SOCK without libvirt0: the libvirt target fails with the "
              "reason, the socket target answers",
              lv.get("status") == "error" and "libvirt0" in (lv.get("error") or "")
              and doc.get("unix:" + socks[0], {}).get("status") == "ok",
              "rc %d: %s %s" % (rc, out[-800:], err[-300:]))
        rc, out, err = run([CLI, "ping", "libvirt:test"],
                           env={"LIBVIRT_DEFAULT_URI": "test:///default",
                                "GUESTBENCH_LIBVIRT_SONAME": "libvirt-absent.so.0"})
        check("GUESTBENCH_LIBVIRT_SONAME names the library (absent: the same message)",
              rc != 0 and "libvirt-absent.so.0" in out + err, out + err)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
