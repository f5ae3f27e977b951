# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared pieces of the Python tests (imported, never run as a test): TAP
results, real agents and hostile peers on unix sockets, the CLI on a real pty,
the Prometheus exposition format as the tests check it without promtool, and a
real node_exporter."""
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

# ---- TAP ----------------------------------------------------------------------------------

results = []


def check(name, cond, detail=""):
    results.append((name, bool(cond), None, detail))


def skip(name, why):
    results.append((name, True, why, ""))


def tap_report():
    """Prints the plan and every result; returns the exit status (1 if any failed)."""
    print("1..%d" % len(results))
    failed = 0
    for i, (name, ok, why, detail) in enumerate(results, 1):
        if why is not None:
            print("ok %d - %s # SKIP %s" % (i, name, why))
            continue
        print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
        if not ok:
            failed += 1
            for line in str(detail).splitlines()[:20]:
                print("# " + line)
    return 1 if failed else 0


# ---- agents -------------------------------------------------------------------------------

def start_agents(tmp, names):
    """One $GB_AGENT -m unix-listen per name, in tmp; returns (procs, sockets) once all listen."""
    agent = os.environ["GB_AGENT"]
    procs, socks = [], []
    for name in names:
        sock = os.path.join(tmp, name + ".sock")
        procs.append(subprocess.Popen([agent, "-m", "unix-listen", "-p", sock],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        socks.append(sock)
    deadline = time.monotonic() + 10
    for sock in socks:
        while True:
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(sock)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("agent %s did not listen" % sock)
                time.sleep(0.02)
    return procs, socks


def signal_agent(pid, sig):
    """sig to an agent and every process under it (its session process, a benchmark's):
    the whole guest agent stops or resumes, as a hung guest would."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(name))
    todo = [pid]
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass


def stop(procs):
    """SIGTERM to each process still running, then wait; SIGKILL after 5 s."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


# ---- the per-target lock of guestbench(1) (FILES) ----------------------------------------


# ---- hostile peers ------------------------------------------------------------------------

def start_hostile(hostile_agent, tmp, name, scenario, procs, suffix=".sock", log=None):
    """tests/hostile-agent.py on a unix socket in tmp, answering as scenario says
    (a dict: command -> reply); appended to procs. log: where it writes what it was
    asked (HOSTILE_AGENT_LOG), None for nowhere. Returns the socket's path once it
    exists."""
    import json
    import sys
    path = os.path.join(tmp, name + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(scenario, f)
    sock = os.path.join(tmp, name + suffix)
    env = dict(os.environ, HOSTILE_AGENT_LOG=log) if log is not None else None
    procs.append(subprocess.Popen([sys.executable, hostile_agent, sock, path],
                                  stdin=subprocess.DEVNULL, env=env))
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    return sock



def by_target(doc):
    """A CLI document's guests by their target."""
    return {g.get("target"): g for g in doc.get("guests", [])}


# ---- a process's peak RSS -----------------------------------------------------------------

# Runs argv and prints its exit status and peak RSS. A process's high-water mark
# starts from its parent's (Linux carries it across fork and exec), so the program
# measured is not started from the test, whose RSS grows with the documents it
# reads, but from this small interpreter.
_MEASURED = """
import os, subprocess, sys
with open(sys.argv[1], "wb") as out, open(sys.argv[2], "wb") as err:
    proc = subprocess.Popen(sys.argv[3:], stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    _, status, usage = os.wait4(proc.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def run_measured(argv, out_path, err_path):
    """(exit status, peak RSS in KiB, seconds) of argv, its stdout and stderr in the files."""
    start = time.monotonic()
    spawned = subprocess.run([sys.executable, "-c", _MEASURED, out_path, err_path] + argv,
                             stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             check=True)
    rc, rss = (int(x) for x in spawned.stdout.split())
    return rc, rss, time.monotonic() - start


# ---- a real terminal ----------------------------------------------------------------------

def on_pty(cli, args, env_extra=None, cols=None, stderr=True, raw=False, interrupt_after=None,
           timeout=60):
    """Runs the CLI with stdout (and stderr unless stderr=False) on a new pty as
    TERM=xterm, without COLUMNS or NO_COLOR unless env_extra sets them; cols: the
    pty's width; raw: without the pty's own newline translation (\\n -> \\r\\n),
    which is not the CLI's doing; interrupt_after: SIGINT after that many seconds.
    Reads until the CLI closes the pty or timeout; returns (rc, what the terminal
    got, decoded)."""
    import fcntl
    import pty
    import select
    import signal
    import struct
    import termios
    master, slave = pty.openpty()
    if cols is not None:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    if raw:
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.OPOST
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
    env = dict(os.environ, TERM="xterm")
    env.pop("COLUMNS", None)
    env.pop("NO_COLOR", None)
    env.update(env_extra or {})
    p = subprocess.Popen([cli] + args, stdin=subprocess.DEVNULL, stdout=slave,
                         stderr=slave if stderr else subprocess.DEVNULL, env=env)
    os.close(slave)
    out = b""
    start = time.monotonic()
    sent = False
    while True:
        if interrupt_after is not None and not sent and time.monotonic() - start > interrupt_after:
            p.send_signal(signal.SIGINT)
            sent = True
        r, _, _ = select.select([master], [], [], 0.1)
        if not r:
            if p.poll() is not None or time.monotonic() - start > timeout:
                break
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the CLI closed its end
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(30), out.decode("utf-8", "replace")


def lock_dir():
    """Where guestbench(1) says this user's lock files are."""
    if os.geteuid() == 0:
        return "/run/guestbench/locks"
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "guestbench", "locks")
    return "/tmp/guestbench-%d/locks" % os.geteuid()


def lock_path(sock):
    """The lock file of the guest behind a unix socket."""
    import hashlib
    key = "socket:" + os.path.realpath(sock)
    return os.path.join(lock_dir(), hashlib.sha256(key.encode()).hexdigest() + ".lock")


def start_holder(cli, sock, seconds=4):
    """A real guestbench benchmarking sock (one block size, one run); returns the
    Popen once the lock file names it."""
    proc = subprocess.Popen([cli, "bench", "aes", "--sizes", "1k", "--seconds", str(seconds),
                             "--runs", "1", "--no-save", sock], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    path = lock_path(sock)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                if "pid=%d\n" % proc.pid in f.read():
                    return proc
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    proc.kill()
    proc.wait()
    raise RuntimeError("the holder did not lock %s" % path)


# ---- Prometheus text format ---------------------------------------------------------------

PROM_SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*'
                         r'(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})?'
                         r' (-?[0-9.e+-]+|NaN|[+-]Inf)$')


PROM_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
# label names as written, valid or not, so a test can see a bad one
PROM_LABEL = re.compile(r'([^=,{}]*)="((?:[^"\\]|\\.)*)",?')


def prom_samples(text):
    """[(name, [(label, value), ...], value)] of an exposition text, in order; None if
    a line is neither a comment nor a sample."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = PROM_LINE.match(line)
        if not m:
            return None
        out.append((m.group(1), PROM_LABEL.findall(m.group(2) or ""), m.group(3)))
    return out


def prom_valid(text):
    """Each line HELP, TYPE or a sample; each family declared once, before its samples."""
    declared = []
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            name = line.split()[2]
            if name in declared and declared[-1] != name:
                return False
            if name not in declared:
                declared.append(name)
            continue
        if not PROM_SAMPLE.match(line) or not declared:
            return False
        if line.split("{")[0].split(" ")[0] != declared[-1]:
            return False
    return bool(declared)


# ---- node_exporter --------------------------------------------------------------------------

NODE_EXPORTER = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
# node_exporter as another user than the one writing the file, as packaged
NOBODY = {"user": 65534, "group": 65534, "extra_groups": []} if os.geteuid() == 0 else {}


class NodeExporter:
    """prometheus-node-exporter with only the textfile collector, on 127.0.0.1."""

    def __init__(self, directory, logpath):
        self.proc = None
        for _ in range(5):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                self.port = s.getsockname()[1]
            log = open(logpath, "w")
            self.proc = subprocess.Popen(
                [NODE_EXPORTER, "--web.listen-address=127.0.0.1:%d" % self.port,
                 "--collector.disable-defaults", "--collector.textfile",
                 "--collector.textfile.directory=" + directory],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                **NOBODY)
            log.close()
            deadline = time.monotonic() + 10
            while self.proc.poll() is None and time.monotonic() < deadline:
                try:
                    self.scrape()
                    return
                except OSError:
                    time.sleep(0.05)
            stop([self.proc])  # the port was taken meanwhile: another one
        with open(logpath) as f:
            raise RuntimeError("node_exporter did not serve /metrics: " + f.read()[-2000:])

    def scrape(self):
        url = "http://127.0.0.1:%d/metrics" % self.port
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.read().decode()

    def close(self):
        if self.proc is not None:
            stop([self.proc])
