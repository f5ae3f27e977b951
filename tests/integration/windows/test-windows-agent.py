#!/usr/bin/env python3
"""The Windows agent end to end, under wine: its MSI, its service, and the host
CLI talking to it over a COM port.

In a wine prefix of its own (removed at the end), with a process that keeps the
prefix's services alive (wine ends them once no user process is left):

- the MSI of scripts/cross-build --windows installs with `msiexec /i /qn`: the
  exe and its DLLs under Program Files, the service guestbench-agent registered
  and running; %ProgramData%\\guestbench\\agent.conf (written first, as an
  operator would) points it at COM5;
- COM5 is wine's dosdevices/com5 link to a pty; this test relays the pty to a
  unix socket, as QEMU exposes a guest's serial port to the host;
- the service removed its privileges (its log says how many);
- `bench aes` and `bench mem` run (guestbench-agent-bench.exe, the rates
  and the facts in the result), `bench disk` is refused naming what runs;
- the host CLI: `ping`, `facts` (CPU flags as /proc/cpuinfo shows them on this
  machine, the OS a Windows one, memory), `audit` and `census` of a mixed fleet
  (the Linux agent beside it): every guest there, ok;
- bad input from the host (tests/hostile-corpus.py): the Windows agent answers
  each case byte for byte as the Linux agent does;
- the service survives the host going away and coming back;
- `msiexec /x /qn` stops and removes the service and removes the files.

Usage: test-windows-agent.py (prints TAP). Needs GB_WINDOWS_AGENT_DIR (the
folder scripts/cross-build --windows filled), GB_AGENT, GB_CLI, wine.
"""
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # nothing written into the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
from gbtest import check, skip, start_agents, stop, tap_report  # noqa: E402
from winetest import SERVICE, WindowsGuest, find_msi  # noqa: E402
import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "hostile_corpus", os.path.join(HERE, "..", "..", "hostile-corpus.py"))
hostile_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hostile_corpus)

CLI = os.environ.get("GB_CLI", "")
WIN_DIR = os.environ.get("GB_WINDOWS_AGENT_DIR", "")


def cli(args, timeout=120):
    p = subprocess.run([CLI] + args, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=timeout)
    doc = None
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        pass
    return p.returncode, doc, p.stdout, p.stderr


def by_target(doc):
    return {g.get("target"): g for g in (doc or {}).get("guests", [])}


def cpuinfo_value(key):
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.split(":", 1)[0].strip() == key:
                return line.split(":", 1)[1].strip()
    return None


def cpuinfo_flags():
    return set((cpuinfo_value("flags") or "").split())


# The NIC given a virtio-win NetKVM driver in the registry (register_netkvm)
NETKVM_NIC = ([n for n in sorted(os.listdir("/sys/class/net")) if n != "lo"] or [None])[0]


def register_netkvm(wine):
    """Writes what Windows' network class installer writes for a NetKVM adapter with 2
    RSS queues, for NETKVM_NIC. wine names the adapter of a Linux interface
    {IIIIIIII-0000-0000-0000-4E6574446576}, IIIIIIII its ifindex ("NetDev")."""
    if NETKVM_NIC is None:
        return
    with open("/sys/class/net/%s/ifindex" % NETKVM_NIC) as f:
        guid = "{%08X-0000-0000-0000-4E6574446576}" % int(f.read())
    cls = "{4D36E972-E325-11CE-BFC1-08002BE10318}"
    base = "HKLM\\SYSTEM\\CurrentControlSet\\"
    pnp = "PCI\\VEN_1AF4&DEV_1000&SUBSYS_00011AF4&REV_00\\3&267A616A&0&18"
    for key, name, value in (
            (base + "Control\\Network\\" + cls + "\\" + guid + "\\Connection",
             "PnPInstanceId", pnp),
            (base + "Enum\\" + pnp, "Service", "netkvm"),
            (base + "Control\\Class\\" + cls + "\\0000", "NetCfgInstanceId", guid),
            (base + "Control\\Class\\" + cls + "\\0000", "DriverDesc",
             "Red Hat VirtIO Ethernet Adapter"),
            (base + "Control\\Class\\" + cls + "\\0000", "*NumRssQueues", "2")):
        wine.run(["reg", "add", key, "/v", name, "/t", "REG_SZ", "/d", value, "/f"], timeout=60)


def wait_ping(sock, tries):
    """The first ping that succeeds, after at most tries CLI runs (each bounded by --timeout)."""
    for _ in range(tries):
        rc, doc, out, err = cli(["--timeout", "10", "--format", "json", "ping", sock])
        if rc == 0:
            return True, err
    return False, err


class Unanswered(Exception):
    """The agent does not answer: the checks that need it are not run."""


def on_term(signum, frame):
    # meson's timeout: clean up (wineserver, the prefix) on the way out
    raise SystemExit("terminated by signal %d" % signum)


def main():
    signal.signal(signal.SIGTERM, on_term)
    if not WIN_DIR:
        skip("the Windows agent under wine", "no Windows build (meson -Dwindows_agent=DIR, "
             "filled by scripts/cross-build --windows)")
        return tap_report()
    msi = find_msi(WIN_DIR)
    if msi is None or shutil.which("wine") is None:
        print("Bail out! %s holds no single MSI, or wine is missing" % WIN_DIR)
        return 1
    tmp = tempfile.mkdtemp(prefix="gb-windows-")
    guest = WindowsGuest(tmp, msi)
    wine = guest.wine
    procs = []
    try:
        boot, rc, out = guest.start(before_install=register_netkvm)
        check("wineboot made a prefix", boot == 0 and os.path.isdir(wine.prefix), boot)
        check("msiexec /i %s /qn: exit status 0" % os.path.basename(msi), rc == 0, out[-1000:])
        exe = wine.unix_path("C:\\Program Files\\guestbench\\guestbench-agent.exe")
        dlls = glob.glob(os.path.join(os.path.dirname(exe), "*.dll"))
        check("the exe and its %d DLLs are under Program Files\\guestbench" % len(dlls),
              os.path.isfile(exe) and any("json-glib" in d for d in dlls), dlls)
        state = wine.service_state()
        check("service %s registered and running after install (%s)" % (SERVICE, state),
              state == "RUNNING", state)

        sock = guest.sock
        ok, err = wait_ping(sock, 6)
        check("guestbench ping over COM5: ok", ok, err[-500:])
        text = guest.log()
        removed = re.search(r"privileges removed: ([0-9]+); kept: SeChangeNotifyPrivilege", text)
        check("the service dropped its privileges (%s removed), as its log says"
              % (removed.group(1) if removed else "none"),
              removed and int(removed.group(1)) > 0, text[-1000:])
        if not ok:
            print("# the agent's log:")
            for line in guest.log().splitlines()[-20:]:
                print("#   " + line)
            raise Unanswered()

        rc, doc, out, err = cli(["--timeout", "60", "--format", "json", "facts", sock])
        g = by_target(doc).get(sock, {})
        facts = g.get("result") or {}
        cpu = facts.get("cpu") or {}
        flags = set(cpu.get("flags") or [])
        host = cpuinfo_flags()
        keys = ["aes", "pclmulqdq", "sse4_2", "avx", "avx2", "sha_ni", "vaes", "vmx", "svm",
                "rdrand", "hypervisor"]
        differ = [k for k in keys if (k in flags) != (k in host)]
        check("facts: status ok, CPU flags as /proc/cpuinfo has them (%s)"
              % ", ".join(k for k in keys if k in flags),
              rc == 0 and g.get("status") == "ok" and flags and not differ,
              (rc, differ, str(g)[:500], err[-500:]))
        vendor = cpuinfo_value("vendor_id")
        check("facts: CPU vendor %s, as /proc/cpuinfo has it (%s)" % (cpu.get("vendor"), vendor),
              cpu.get("vendor") == vendor, cpu.get("vendor"))
        # wine answers neither NtQuerySystemInformation class: null, with the reason
        why = [e.get("reason") for e in facts.get("errors") or []
               if e.get("member") == "cpu.vulnerabilities"]
        check("facts: cpu.vulnerabilities null, the reason says Windows did not report them",
              cpu.get("vulnerabilities") is None and why
              and "did not report its speculation control" in why[0], (cpu.get("vulnerabilities"), why))
        osf = facts.get("os") or {}
        check("facts: the OS is Windows (%s, %s)" % (osf.get("pretty_name"),
                                                     osf.get("kernel_release")),
              "Windows" in str(osf.get("pretty_name")), osf)
        nics = {n.get("name"): n for n in facts.get("net") or []}
        host_nics = sorted(n for n in os.listdir("/sys/class/net") if n != "lo")
        mtus_ok = all(str(nics[n].get("mtu")) == open("/sys/class/net/%s/mtu" % n).read().strip()
                      for n in host_nics if n in nics)
        check("facts: the NICs and MTUs this machine has (%s)" % ", ".join(
              "%s %s" % (n, (nics.get(n) or {}).get("mtu")) for n in host_nics),
              sorted(nics) == host_nics and mtus_ok, facts.get("net"))
        nic = nics.get(NETKVM_NIC) or {}
        if NETKVM_NIC is None:
            skip("facts: a NIC's driver and RSS queues from the registry", "no NIC here")
        else:
            check("facts: %s's driver and RSS queues from the registry as the class installer "
                  "writes them (%s, %s)" % (NETKVM_NIC, nic.get("driver"), nic.get("rx_queues")),
                  nic.get("driver") == "netkvm" and nic.get("rx_queues") == 2, nic)
        others = [n for n in host_nics if n != NETKVM_NIC]
        reasons = {e.get("member"): e.get("reason") for e in facts.get("errors") or []}
        check("facts: the other NICs' drivers null, the reason in errors (%s)" % ", ".join(others),
              all(nics[n].get("driver") is None and "net.%s.driver" % n in reasons
                  for n in others if n in nics), reasons)
        disks = facts.get("block")
        check("facts: the disks Windows has, by their PhysicalDrive names (%s)"
              % ", ".join("%s %s" % (d.get("name"), d.get("bus")) for d in disks or []),
              isinstance(disks, list) and disks
              and all(re.match(r"^PhysicalDrive[0-9]+$", d.get("name") or "")
                      and d.get("scheduler") is None for d in disks), disks)
        mem = facts.get("memory") or {}
        nodes = (mem.get("numa") or {}).get("nodes") or []
        host_nodes = glob.glob("/sys/devices/system/node/node[0-9]*")
        cpus = sorted(c for n in nodes for c in n.get("cpus") or [])
        check("facts: %d NUMA node(s) holding CPUs %s, as this machine has (%d)"
              % (len(nodes), cpus, len(host_nodes)),
              len(nodes) == max(1, len(host_nodes)) and cpus == list(range(os.cpu_count()))
              and (len(nodes) > 1 or nodes[0].get("memory_bytes") == mem.get("total_bytes")),
              mem.get("numa"))
        check("facts: memory total %s bytes" % mem.get("total_bytes"),
              isinstance(mem.get("total_bytes"), int) and mem["total_bytes"] > 0, mem)

        # bench aes: the same OpenSSL EVP loop, in guestbench-agent-bench.exe
        rc, doc, out, err = cli(["--timeout", "60", "--format", "json", "--no-save", "bench",
                                 "aes", "--sizes", "16,8k", "--seconds", "0.3", sock],
                                timeout=300)
        g = by_target(doc).get(sock, {})
        res = g.get("result") or {}
        rates = {m.get("labels", {}).get("block_size"): m.get("value")
                 for m in res.get("metrics") or [] if m.get("metric") == "aes-128-gcm"}
        check("bench aes on the Windows agent: ok, a rate for 16 B and 8 KiB (%s)"
              % ", ".join("%s: %.0f MB/s" % (k, (v or 0) / 1e6) for k, v in sorted(rates.items())),
              rc == 0 and g.get("status") == "ok" and set(rates) == {"16", "8192"}
              and all(v and v > 0 for v in rates.values()), (rc, str(g)[:800], err[-500:]))
        check("bench aes: its result carries the Windows agent's facts",
              ((res.get("facts") or {}).get("cpu") or {}).get("vendor") == vendor,
              str(res.get("facts"))[:300])
        rc, doc, out, err = cli(["--timeout", "60", "--format", "json", "--no-save", "bench",
                                 "disk", "--size", "32M", sock])
        g = by_target(doc).get(sock, {})
        check("bench disk on the Windows agent: an error naming aes and mem as what it runs",
              rc == 3 and "Unknown benchmark 'disk' (known: aes, mem)" in str(g.get("error")),
              (rc, g, err[-500:]))
        # bench mem: VirtualAlloc'd 4 KiB pages, the same loops as on Linux
        rc, doc, out, err = cli(["--timeout", "60", "--format", "json", "--no-save", "bench",
                                 "mem", "--size", "16M", "--pages", "4k", sock], timeout=300)
        g = by_target(doc).get(sock, {})
        res = g.get("result") or {}
        found = {(m.get("metric"), (m.get("labels") or {}).get("op")): m.get("value")
                 for m in res.get("metrics") or []}
        check("bench mem on the Windows agent: ok, page faults, bandwidths and latency (%s)"
              % ", ".join("%s %s: %.3g" % (k[0], k[1] or "", v or 0)
                          for k, v in sorted(found.items())),
              rc == 0 and g.get("status") == "ok" and len(found) == 5
              and all(v and v > 0 for v in found.values()), (rc, str(g)[:800], err[-500:]))

        agents, socks = start_agents(tmp, ["linux"])
        procs += agents
        linux = socks[0]
        os.environ["XDG_DATA_HOME"] = os.path.join(tmp, "data")
        rc, doc, out, err = cli(["--timeout", "60", "--format", "json", "audit", linux, sock])
        guests = by_target(doc)
        check("audit of a mixed fleet: both guests ok, each with findings",
              all(guests.get(t, {}).get("status") == "ok"
                  and (guests[t].get("result") or {}).get("findings") for t in (linux, sock)),
              (rc, str(doc)[:800], err[-500:]))
        findings = (guests.get(sock, {}).get("result") or {}).get("findings") or []
        levels = {(f.get("rule"), f.get("subject")): f.get("level") for f in findings}
        if NETKVM_NIC is not None:
            subject = "net/" + NETKVM_NIC
            check("audit of the Windows guest: %s is NetKVM, not emulated (%s)"
                  % (NETKVM_NIC, levels.get(("NIC-EMULATED", subject))),
                  levels.get(("NIC-EMULATED", subject)) == "PASS", findings)
        rc, doc, out, err = cli(["--timeout", "60", "--format", "table", "audit", linux, sock])
        check("audit as a table names both guests",
              linux in out and sock in out, (rc, out[-1500:], err[-500:]))
        for line in out.splitlines():
            print("# " + line)
        rc, doc, out, err = cli(["--timeout", "60", "--format", "json", "census", linux, sock])
        check("census of the mixed fleet: exit status 0", rc == 0, (rc, out[-800:], err[-500:]))

        # the same bad input to both agents: the same answers
        diffs = []
        for name, data in hostile_corpus.cases():
            a = hostile_corpus.converse(linux, data)
            b = hostile_corpus.converse(sock, data)
            if a != b:
                diffs.append((name, a[:300], b[:300]))
        check("hostile corpus (%d cases): the Windows agent answers as the Linux agent"
              % len(hostile_corpus.cases()), not diffs, diffs[:3])
        ok, err = wait_ping(sock, 3)
        check("after the corpus the Windows agent still answers", ok, err[-500:])

        # the host end goes away (the CLI runs above each closed it) and a
        # request is cut off mid-message: the next client is answered
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(sock)
            s.sendall(b'{"execute":"guest-pi')
        ok, err = wait_ping(sock, 3)
        check("a host that left mid-request: the next one is answered", ok, err[-500:])

        rc, out = wine.run(["msiexec", "/x", msi, "/qn"])
        check("msiexec /x /qn: exit status 0", rc == 0, out[-1000:])
        state = wine.service_state()
        check("the service is gone after uninstall (%s)" % state, state == "absent", state)
        check("the exe and DLLs are gone after uninstall",
              not os.path.exists(exe) and not glob.glob(os.path.join(os.path.dirname(exe), "*")),
              os.listdir(os.path.dirname(exe)) if os.path.isdir(os.path.dirname(exe)) else "")
    except Unanswered:
        pass
    finally:
        stop(procs)
        guest.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
