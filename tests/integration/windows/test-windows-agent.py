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
import pty
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tty

sys.dont_write_bytecode = True  # nothing written into the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
from gbtest import check, skip, start_agents, stop, tap_report  # noqa: E402
import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "hostile_corpus", os.path.join(HERE, "..", "..", "hostile-corpus.py"))
hostile_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hostile_corpus)

CLI = os.environ.get("GB_CLI", "")
WIN_DIR = os.environ.get("GB_WINDOWS_AGENT_DIR", "")
SERVICE = "guestbench-agent"
# every wine command gets this long: a hung one fails its step, not the whole test
WINE_STEP_S = 180


class Wine:
    """A wine prefix of the test's own; every command's output goes to files
    (msiexec never finished with pipes as its stdout)."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.prefix = os.path.join(tmp, "prefix")
        self.env = dict(os.environ)
        self.env.update({"WINEPREFIX": self.prefix, "WINEDEBUG": "-all",
                         # no Mono or Gecko download prompts
                         "WINEDLLOVERRIDES": "mscoree=;mshtml="})
        self.env.pop("DISPLAY", None)
        self.env.pop("WAYLAND_DISPLAY", None)
        self.keeper = None
        self.n = 0

    def run(self, args, timeout=WINE_STEP_S):
        """(exit status, output) of a wine command; status None when it hung."""
        self.n += 1
        out = os.path.join(self.tmp, "wine-%02d.log" % self.n)
        with open(out, "w") as f:
            try:
                rc = subprocess.run(["wine"] + args, stdin=subprocess.DEVNULL, stdout=f,
                                    stderr=subprocess.STDOUT, env=self.env,
                                    timeout=timeout).returncode
            except subprocess.TimeoutExpired:
                rc = None
        with open(out, errors="replace") as f:
            return rc, f.read()

    def boot(self):
        self.n += 1
        with open(os.path.join(self.tmp, "wineboot.log"), "w") as f:
            rc = subprocess.run(["wineboot", "-i"], stdin=subprocess.DEVNULL, stdout=f,
                                stderr=subprocess.STDOUT, env=self.env,
                                timeout=WINE_STEP_S).returncode
            # wineboot returns while the prefix is still being set up: an
            # msiexec started then had its service start fail and the whole
            # install rolled back
            subprocess.run(["wineserver", "-w"], stdin=subprocess.DEVNULL, stdout=f,
                           stderr=subprocess.STDOUT, env=self.env, timeout=WINE_STEP_S)
        # a user process for as long as the test runs: without one, wineserver
        # ends and takes the services with it
        self.keeper = subprocess.Popen(["wine", "cmd"], stdin=subprocess.PIPE,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       env=self.env)
        return rc

    def unix_path(self, windows_path):
        """C:\\x\\y in this prefix, as a path here."""
        assert windows_path[1:3] == ":\\"
        return os.path.join(self.prefix, "drive_c", *windows_path[3:].split("\\"))

    def service_state(self):
        rc, out = self.run(["sc", "query", SERVICE], timeout=60)
        for line in out.splitlines():
            if "STATE" in line:
                return line.split()[-1]
        return "absent" if rc not in (0, None) else "unknown: %r" % out[-300:]

    def shutdown(self):
        if self.keeper is not None:
            try:
                self.keeper.stdin.close()
            except OSError:
                pass
        subprocess.run(["wineserver", "-k"], env=self.env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        if self.keeper is not None:
            try:
                self.keeper.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.keeper.kill()


class PtyRelay:
    """The host end of a serial port: a pty whose slave wine opens as COM5,
    relayed to a unix socket the CLI connects to (one client at a time, as
    QEMU's chardev socket). What the agent writes while no client is there is
    dropped, as QEMU drops it."""

    def __init__(self, sock_path):
        self.master, self.slave = pty.openpty()
        # raw, no echo: a serial line, not a terminal; the slave stays open
        # here so that wine closing and reopening it is no hang-up
        tty.setraw(self.slave)
        self.slave_path = os.ttyname(self.slave)
        self.sock_path = sock_path
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(sock_path)
        self.listener.listen(4)
        self.client = None
        self.stopping = False
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.stopping:
            fds = [self.master, self.listener] + ([self.client] if self.client else [])
            r, _, _ = select.select(fds, [], [], 0.2)
            if self.listener in r and self.client is None:
                self.client, _ = self.listener.accept()
            if self.master in r:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    data = b""
                if data and self.client is not None:
                    try:
                        self.client.sendall(data)
                    except OSError:
                        self.drop()
            if self.client is not None and self.client in r:
                try:
                    data = self.client.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    self.drop()
                else:
                    view = memoryview(data)
                    while view:
                        _, w, _ = select.select([], [self.master], [], 1)
                        if w:
                            view = view[os.write(self.master, view):]

    def drop(self):
        self.client.close()
        self.client = None

    def close(self):
        self.stopping = True
        self.thread.join(timeout=5)
        for fd in (self.master, self.slave):
            os.close(fd)
        self.listener.close()


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
    msis = glob.glob(os.path.join(WIN_DIR, "guestbench-agent-*-x64.msi"))
    if len(msis) != 1 or shutil.which("wine") is None:
        print("Bail out! %s holds no single MSI (%s), or wine is missing"
              % (WIN_DIR, msis))
        return 1
    msi = msis[0]
    tmp = tempfile.mkdtemp(prefix="gb-windows-")
    wine = Wine(tmp)
    relay = None
    procs = []
    try:
        rc = wine.boot()
        check("wineboot made a prefix", rc == 0 and os.path.isdir(wine.prefix), rc)
        relay = PtyRelay(os.path.join(tmp, "com5.sock"))
        dosdev = os.path.join(wine.prefix, "dosdevices", "com5")
        if os.path.lexists(dosdev):
            os.unlink(dosdev)
        os.symlink(relay.slave_path, dosdev)
        conf_dir = wine.unix_path("C:\\ProgramData\\guestbench")
        os.makedirs(conf_dir, exist_ok=True)
        with open(os.path.join(conf_dir, "agent.conf"), "w") as f:
            f.write("[general]\nmethod=isa-serial\npath=COM5\n")

        rc, out = wine.run(["msiexec", "/i", msi, "/qn"])
        check("msiexec /i %s /qn: exit status 0" % os.path.basename(msi), rc == 0, out[-1000:])
        exe = wine.unix_path("C:\\Program Files\\guestbench\\guestbench-agent.exe")
        dlls = glob.glob(os.path.join(os.path.dirname(exe), "*.dll"))
        check("the exe and its %d DLLs are under Program Files\\guestbench" % len(dlls),
              os.path.isfile(exe) and any("json-glib" in d for d in dlls), dlls)
        state = wine.service_state()
        check("service %s registered and running after install (%s)" % (SERVICE, state),
              state == "RUNNING", state)

        sock = relay.sock_path
        ok, err = wait_ping(sock, 6)
        check("guestbench ping over COM5: ok", ok, err[-500:])
        log = os.path.join(conf_dir, "agent.log")
        text = open(log, errors="replace").read() if os.path.exists(log) else ""
        removed = re.search(r"privileges removed: ([0-9]+); kept: SeChangeNotifyPrivilege", text)
        check("the service dropped its privileges (%s removed), as its log says"
              % (removed.group(1) if removed else "none"),
              removed and int(removed.group(1)) > 0, text[-1000:])
        if not ok:
            print("# the agent's log:")
            if os.path.exists(log):
                with open(log, errors="replace") as f:
                    for line in f.readlines()[-20:]:
                        print("#   " + line.rstrip())
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
        wine.shutdown()
        if relay is not None:
            relay.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
