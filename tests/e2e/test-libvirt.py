#!/usr/bin/env python3
"""guestbench against a real libvirt, in one lab of virtlab.py (booting it is
the slow part, so every libvirt check shares it): a real libvirtd (the
machine's, or one started here), TCG domains of the e2e guest with a bound
guestbench channel, a libvirt-chosen one, qemu-ga only, one shut off and one
with an odd name, a hostile one (guest-init's poisoned replies); the hypervisor through qemu+ssh from a process that cannot
see its files; a non-root libvirt-group user.

The lab is first proven with virsh alone (lab_cases), then the CLI is checked
against it (libvirt_cli.py, libvirt_hostile.py, libvirt_hostview.py), and last libvirtd is
restarted, in the middle of a fleet run too (restart_cases). Prints TAP, with
how long the lab took to come up; skips without root or libvirt.
"""
import json
import os
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
from gbtest import check, skip, tap_report  # noqa: E402
import fleet  # noqa: E402
import virtlab  # noqa: E402
from gbclient import Session  # noqa: E402
import libvirt_cli  # noqa: E402
import libvirt_hostile  # noqa: E402
import libvirt_hostview  # noqa: E402

AGENT = os.environ.get("GB_AGENT", "")
QEMU_GA = os.environ.get("GB_QEMU_GA", "/usr/sbin/qemu-ga")


def diag(text):
    print("# " + str(text).replace("\n", "\n# "))


def sync_ping(path):
    """guest-sync-delimited then guest-ping on a channel; the agent's version too."""
    s = Session(path, timeout=10)
    try:
        s.call("guest-ping")
        return s.call("guest-info").get("version")
    finally:
        s.close()


def lab_cases(lab):
    d = lab.domains
    names = {x.name for x in lab.all_domains()}
    p = lab.virsh("list", "--all", "--name")
    listed = set(p.stdout.splitlines())
    check("virsh list --all shows every domain of the lab", names <= listed,
          (sorted(names - listed), p.stderr))
    want = {x.name: ("shut off" if x.kind == "off" else "running") for x in lab.all_domains()}
    got = {x.name: x.state() for x in lab.all_domains()}
    check("running and shut off as defined", got == want, got)

    version = None
    try:
        version = sync_ping(d["bind"].sock)
    except Exception as e:  # noqa: BLE001
        version = e
    check("bind: the agent answers sync + ping on %s" % d["bind"].sock,
          isinstance(version, str) and version, version)

    path = d["auto"].channel_path()
    check("auto: virsh dumpxml names a libvirt-chosen path",
          bool(path) and path.startswith("/var/lib/libvirt/qemu/channel/"), path)
    try:
        version = sync_ping(path)
    except Exception as e:  # noqa: BLE001
        version = e
    check("auto: the agent answers sync + ping there", isinstance(version, str), version)

    p = lab.virsh("qemu-agent-command", d["qga"].name, '{"execute":"guest-ping"}',
                  "--timeout", "10")
    check("qga: virsh qemu-agent-command guest-ping answers",
          p.returncode == 0 and json.loads(p.stdout or "null") == {"return": {}},
          (p.returncode, p.stdout, p.stderr))
    p = lab.virsh("qemu-agent-command", d["qga"].name,
                  json.dumps({"execute": "guest-exec", "arguments": {
                      "path": "/usr/bin/guestbench-agent", "arg": ["--version"],
                      "capture-output": True}}), "--timeout", "10")
    check("qga: guest-exec can run /usr/bin/guestbench-agent in the guest",
          p.returncode == 0 and "pid" in json.loads(p.stdout or "{}").get("return", {}),
          (p.stdout, p.stderr))
    check("qga: the domain has no guestbench channel",
          d["qga"].channel_path() is None and
          d["qga"].channel_path(virtlab.QGA_CHANNEL) is not None)

    check("bind: libvirt's own qemu-ga link answers too", d["bind"].qga_ping(10) is None,
          d["bind"].qga_ping(10))

    odd = lab.odd
    check("odd name: libvirt keeps %r and the guest answers" % odd.name,
          odd.name in listed and odd.ping() is None, odd.ping())

    # remote, from a process that cannot see the hypervisor's files
    uri = lab.remote.uri
    hidden = lab.run_hidden(["sh", "-c", 'ls -A /run/libvirt /var/lib/libvirt/qemu; '
                             'exec "$0" -q -c "$1" list --all --name', virtlab.VIRSH, uri],
                            timeout=60)
    lines = hidden.stdout.splitlines()
    check("hidden: /run/libvirt and /var/lib/libvirt/qemu are empty in there",
          hidden.stdout.startswith("/run/libvirt:\n\n/var/lib/libvirt/qemu:\n"),
          (hidden.stdout, hidden.stderr))
    check("remote: virsh -c qemu+ssh://... lists the domains from the hidden namespace",
          hidden.returncode == 0 and names <= set(lines), (hidden.returncode, lines,
                                                           hidden.stderr, uri))
    p = lab.run_hidden(["sh", "-c", 'exec "$0" -q -c qemu:///system list', virtlab.VIRSH],
                       timeout=30)
    check("hidden: the local socket is gone there (virsh without ssh fails)",
          p.returncode != 0, (p.stdout, p.stderr))
    p = lab.virsh("qemu-agent-command", d["qga"].name, '{"execute":"guest-ping"}',
                  "--timeout", "10", uri=uri)
    check("remote: qemu-agent-command through qemu+ssh",
          p.returncode == 0 and "return" in p.stdout, (p.stdout, p.stderr))

    # a domain of a lab run killed before its cleanup: swept, ours kept
    dead = next(n for n in range(4000000, 3000000, -1) if not os.path.exists("/proc/%d" % n))
    stale = virtlab.Domain(lab, "off", name="gbvl-%d-stale" % dead)
    stale.define()
    swept = virtlab.sweep_stale()
    after = set(lab.virsh("list", "--all", "--name").stdout.splitlines())
    check("sweep: a dead run's domain is removed, this run's are kept",
          swept == [stale.name] and stale.name not in after and names <= after, (swept, after))

    t0 = time.monotonic()
    p = lab.virsh("list", "--all", "--name", uri=lab.remote.dead_uri, timeout=60)
    took = time.monotonic() - t0
    check("remote: the dead URI fails, quickly (%.1f s)" % took,
          p.returncode not in (0, None) and took < 30, (p.returncode, p.stderr))

    # the non-root user through polkit
    user = lab.user.name
    p = lab.virsh("list", "--all", "--name", user=user)
    if lab.polkit_note and p.returncode != 0:
        skip("non-root: %s (libvirt group) lists the domains" % user, lab.polkit_note)
    else:
        check("non-root: %s (libvirt group) lists the domains" % user,
              p.returncode == 0 and names <= set(p.stdout.splitlines()), (p.stdout, p.stderr))
    p = lab.user.run(["sh", "-c", 'id -u; echo "$HOME"; touch "$HOME/w"'])
    check("non-root: user.run runs as that user, in its own writable home",
          p.returncode == 0 and p.stdout.split() == [str(lab.user.uid), lab.user.home],
          (p.returncode, p.stdout, p.stderr))



def restart_cases(lab):
    d = lab.domains
    want = {x.name: ("shut off" if x.kind == "off" else "running") for x in lab.all_domains()}
    libvirt_cli.restart_during_run(lab)
    # libvirtd restarted: the domains keep running, libvirt's agent link comes back
    lab.libvirtd.restart()
    check("restart: every domain is as it was after libvirtd restarted",
          {x.name: x.state() for x in lab.all_domains()} == want)
    err = None
    for _ in range(20):
        err = d["qga"].qga_ping(5)
        if err is None:
            break
        time.sleep(1)
    check("restart: virsh qemu-agent-command answers again", err is None, err)


def main():
    why = virtlab.skip_reason()
    if why:
        print("1..0 # SKIP " + why)
        return 0
    virtlab.handle_signals()
    work = os.environ.get("GB_E2E_DIR") or os.path.join("/tmp", "gb-e2e-%d" % os.getpid())
    t0 = time.monotonic()
    image = fleet.build_image(work, [AGENT, QEMU_GA, "/usr/bin/openssl"])
    diag("guest image: %.1f s" % (time.monotonic() - t0))
    lab = virtlab.VirtLab(image, hostile=True)
    try:
        try:
            lab.up()
            check("the lab came up", True)
        except Exception as e:  # noqa: BLE001 - a broken setup is a failure with its reason
            check("the lab came up", False, "%s: %s" % (type(e).__name__, e))
        else:
            diag("libvirtd: %s" % ("started here" if lab.libvirtd.started
                                   else "the machine's own"))
            diag("lab up in %.1f s (%s)" % (lab.timings["total"], ", ".join(
                "%s %.1f s" % kv for kv in lab.timings.items() if kv[0] != "total")))
            for part in (lab_cases, libvirt_cli.cases, libvirt_hostile.cases,
                         libvirt_hostview.cases, restart_cases):
                t1 = time.monotonic()
                try:
                    part(lab)
                except Exception as e:  # noqa: BLE001
                    check("the checks of %s.%s ran through" % (part.__module__, part.__name__),
                          False, "%s: %s" % (type(e).__name__, e))
                diag("%s.%s: %.1f s" % (part.__module__, part.__name__,
                                         time.monotonic() - t1))
    finally:
        t1 = time.monotonic()
        lab.close()
        diag("lab down in %.1f s" % (time.monotonic() - t1))
    left = lab.leftovers()
    check("cleanup: nothing of this run is left", not left, left)
    if lab.libvirtd.started:
        check("cleanup: the libvirtd started here is stopped",
              not os.path.exists(virtlab.SOCK) or virtlab.virsh("version").returncode != 0)
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
