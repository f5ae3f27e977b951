"""The host view of libvirt domains (audit --qmp libvirt:DOMAIN), checked in the
lab of test-libvirt.py: the monitor through virDomainQemuMonitorCommand on
the guest's own connection, QEMU's pid from a vCPU thread (no libvirt pid
file), findings that name the disk as the guest does (vda), and a domain of
a remote hypervisor judged from what libvirt says (pinning, <numatune>) with
a NOTE for the local-only extras, from a process that cannot see the
hypervisor's files; census --qmp libvirt:DOMAIN. libvirt's own agent link still
works afterwards."""
import os

from gbtest import check
from libvirt_cli import cli_json

# What the lab's TCG domains warrant: a virtio disk vda with libvirt's default
# cache (writeback: honours flushes, goes through the host page cache), one
# vCPU free to run anywhere, little memory, QEMU's "max" model offering flags
# the guest's default model lacks.
HOST_RULES = ("HOST-CACHE-UNSAFE", "HOST-CACHE-NOT-DIRECT", "HOST-NO-HUGEPAGES",
              "HOST-CPU-HIDDEN")


def audit(lab, dom, connect=None, qmp=None, hidden=False):
    """audit --qmp libvirt:DOM libvirt:DOM; returns (rc, the guest's entry, stderr)."""
    args = []
    if connect:
        args += ["--connect", connect]
    args += ["--qmp", qmp or "libvirt:" + dom.name, "audit", "libvirt:" + dom.name]
    rc, doc, err, _ = cli_json(args, lab=lab, hidden=hidden)
    gs = (doc or {}).get("guests") or [{}]
    return rc, gs[0], err


def by_rule(g):
    out = {}
    for f in (g.get("result") or {}).get("findings", []):
        out.setdefault(f["rule"], []).append(f)
    return out


def qemu_pid(dom):
    """QEMU's pid of a local domain, as the test (root) finds it: the process
    whose command line names the domain."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv and b"qemu" in os.path.basename(argv[0]) and \
                ("guest=" + dom.name).encode() in b" ".join(argv):
            return int(pid)
    return None


def common_checks(what, rc, g, err):
    rules = by_rule(g)
    ok = rc in (0, 1) and g.get("status") == "ok"
    check("%s: the audit ran with the host view" % what,
          ok and "host" in (g.get("result") or {}), (rc, g.get("status"), g.get("error"), err))
    if not ok:
        return rules, {}
    view = g["result"]["host"]
    missing = [r for r in HOST_RULES if r not in rules]
    check("%s: HOST-* findings the domain warrants" % what, not missing,
          (missing, sorted(rules)))
    subjects = sorted({f["subject"] for fs in rules.values() for f in fs
                       if f["subject"].startswith("host-block/")})
    check("%s: disk findings name the guest's disk (vda), not QMP's path" % what,
          "host-block/vda" in subjects and not any("/machine/" in s for s in subjects),
          subjects)
    levels = {f["level"] for f in rules.get("HOST-CACHE-NOT-DIRECT", [])
              if f["subject"] == "host-block/vda"}
    check("%s: vda with libvirt's default cache is a HOST-CACHE-NOT-DIRECT NOTE" % what,
          levels == {"NOTE"}, levels)
    vda = [b for b in view.get("block", []) if b.get("disk") == "vda"]
    check("%s: the view keeps QMP's path and the serial of vda" % what,
          len(vda) == 1 and "virtio-disk0" in (vda[0].get("device") or "") and
          vda[0].get("serial") == "gbscratch", view.get("block"))
    if (os.cpu_count() or 1) >= 2:
        lv = {f["level"] for f in rules.get("HOST-VCPU-UNPINNED", [])}
        check("%s: the unpinned vCPU is a HOST-VCPU-UNPINNED NOTE" % what, lv == {"NOTE"},
              (lv, view.get("vcpus"), view.get("host_cpus")))
    return rules, view


def cases(lab):
    """Called with the lab up; checks through gbtest.check()."""
    dom = lab.domains["bind"]

    # local, as root, on libvirt's default connection and on an explicit one
    for connect in (None, "qemu:///system"):
        what = "hostview local" + (" --connect " + connect if connect else "")
        rc, g, err = audit(lab, dom, connect=connect)
        rules, view = common_checks(what, rc, g, err)
        if not view:
            continue
        pid = qemu_pid(dom)
        check("%s: QEMU's pid from a vCPU thread, without libvirt's pid file" % what,
              pid is not None and view.get("pid") == pid, (view.get("pid"), pid))
        check("%s: a local domain reads this host's extras, no remote note" % what,
              view.get("remote_host") is None and "HOST-VIEW-REMOTE" not in rules and
              view.get("memory_nodes") and "HOST-VIEW-ERRORS" not in rules,
              (view.get("remote_host"), view.get("memory_nodes"), view.get("errors")))

    # remote: through qemu+ssh, from a process that cannot see the hypervisor's files
    if lab.remote is not None:
        what = "hostview remote"
        rc, g, err = audit(lab, dom, connect=lab.remote.uri, hidden=True)
        rules, view = common_checks(what, rc, g, err)
        if view:
            notes = rules.get("HOST-VIEW-REMOTE", [])
            host = view.get("remote_host")
            check("%s: the local-only extras are a NOTE naming the hypervisor" % what,
                  len(notes) == 1 and notes[0]["level"] == "NOTE" and host and
                  host in notes[0]["detail"] and "numa_maps" in notes[0]["detail"],
                  (host, notes))
            check("%s: no local /proc read for it (no pid, no errors)" % what,
                  view.get("pid") is None and not view.get("errors") and
                  "HOST-VIEW-ERRORS" not in rules, (view.get("pid"), view.get("errors")))
            check("%s: host CPUs and vCPU pinning from libvirt" % what,
                  view.get("host_cpus") == os.cpu_count() and
                  all(v.get("cpus_allowed") for v in view.get("vcpus", [])),
                  (view.get("host_cpus"), view.get("vcpus")))

    # bad input: a domain libvirt does not have is that guest's own clear error
    rc, g, err = audit(lab, dom, qmp="libvirt:gb-no-such-domain")
    check("hostview: --qmp libvirt:UNKNOWN is the guest's error naming the domain, exit 3",
          rc == 3 and g.get("status") == "error" and
          "gb-no-such-domain" in (g.get("error") or ""), (rc, g, err))

    # census: the domain's QEMU, through libvirt, names the model covering its flags
    rc, doc, err, _ = cli_json(["census", "--qmp", "libvirt:" + dom.name,
                                "libvirt:" + dom.name], lab=lab)
    base = ((doc or {}).get("baselines") or [{}])[0]
    qemu = (doc or {}).get("qemu") or {}
    check("census --qmp libvirt:DOMAIN: a model of that QEMU covers the guest's flags, exit 0",
          rc == 0 and base.get("qemu_model") and qemu.get("error") is None
          and qemu.get("models", 0) > 30, (rc, base, qemu, err))
    rc, doc, err, _ = cli_json(["census", "--qmp", "libvirt:gb-no-such-domain",
                                "libvirt:" + dom.name], lab=lab)
    qemu = (doc or {}).get("qemu") or {}
    check("census --qmp libvirt:UNKNOWN: the census written, the error names the domain, exit 3",
          rc == 3 and "gb-no-such-domain" in (qemu.get("error") or "")
          and [g.get("problem") for g in doc.get("guests", [])] == [None], (rc, qemu, err))

    # libvirt's own link to the guest's qemu-ga is untouched
    check("hostview: virsh qemu-agent-command guest-ping still answers after",
          dom.qga_ping(10) is None)
