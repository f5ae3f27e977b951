# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared helpers for the bench/ scripts (measurements, not tests).

Every script: builds (or reuses) a build directory, starts what it measures in
a private temporary directory, interleaves our runs with the reference tool's
(A B B A A B ..., the order flipping every pair), prints a Markdown table and appends it, with the date, the
machine and the versions, to the data section of BENCHMARKS.md.
"""
import argparse
import contextlib
import datetime
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA_MARK = "<!-- bench/ scripts append their tables below this line -->"


def _sigterm(signum, frame):
    # turn SIGTERM into an exception so every `with` block stops its processes
    raise KeyboardInterrupt("SIGTERM")


signal.signal(signal.SIGTERM, _sigterm)


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--build", default=os.environ.get("GB_BUILD", os.path.join(ROOT, "build-bench")),
                   help="meson build directory (configured and built if missing)")
    p.add_argument("--quick", action="store_true", help="fewer and shorter runs")
    p.add_argument("--runs", type=int, default=None, help="interleaved runs per side")
    p.add_argument("--no-append", action="store_true", help="print only, do not touch BENCHMARKS.md")
    return p


def ensure_build(build):
    agent = os.path.join(build, "agent", "guestbench-agent")
    cli = os.path.join(build, "host-cli", "guestbench")
    if not os.path.exists(os.path.join(build, "build.ninja")):
        subprocess.run(["meson", "setup", build, ROOT, "-Dbuildtype=debugoptimized"],
                       check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", build, "agent/guestbench-agent", "host-cli/guestbench"],
                   check=True, stdout=subprocess.DEVNULL)
    return os.path.abspath(agent), os.path.abspath(cli)


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, **kw)


def machine():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    load = open("/proc/loadavg").read().split()[:3]
    return "%s, %d cores, kernel %s, load %s" % (cpu, os.cpu_count(), os.uname().release,
                                                 "/".join(load))


def versions(cli, extra=()):
    out = ["guestbench " + sh([cli, "--version"]).stdout.strip().split()[-1]]
    try:
        rev = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.strip()
        dirty = sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).stdout
        out[0] += " (git %s%s)" % (rev, "+changes" if dirty.strip() else "")
    except OSError:
        pass
    for cmd in extra:
        r = sh(cmd)
        line = (r.stdout or r.stderr).strip().splitlines()
        out.append(line[0] if line else " ".join(cmd) + ": ?")
    return "; ".join(out)


# ---- statistics ------------------------------------------------------------

def median(xs):
    return statistics.median(xs) if xs else float("nan")


def cv(xs):
    if len(xs) < 2 or statistics.mean(xs) == 0:
        return float("nan")
    return statistics.stdev(xs) / statistics.mean(xs)


def pct(x):
    return "-" if x != x else "%.1f%%" % (100 * x)


def fmt(x, digits=3):
    if x is None or x != x:
        return "-"
    if abs(x) >= 1000:
        return "{:,.0f}".format(x)
    return "%.*g" % (digits, x)


def ratio_cell(ours, ref):
    """Median and range of the per-pair ratios of interleaved runs."""
    pairs = [a / b for a, b in zip(ours, ref) if b]
    if not pairs:
        return "-", float("nan")
    m = median(pairs)
    return "%.3f (%.3f-%.3f)" % (m, min(pairs), max(pairs)), m


def verdict(r, lo=0.97, hi=1.03, hard_lo=0.9, hard_hi=1.1):
    if r != r:
        return "-"
    if lo <= r <= hi:
        return "yes"
    if hard_lo <= r <= hard_hi:
        return "near"
    return "NO"


def interleave(n, a, b):
    """Run a() and b() n times each as A B B A A B ...; returns ([a...], [b...]).

    The order flips every pair, so a drift of the machine (a host cache warming,
    a neighbour starting) over the run weighs on both sides alike instead of
    always on the one that runs second.
    """
    ra, rb = [], []
    for i in range(n):
        if i % 2 == 0:
            ra.append(a())
            rb.append(b())
        else:
            rb.append(b())
            ra.append(a())
    return ra, rb


# ---- output ----------------------------------------------------------------

def table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(lines)


def report(args, title, cli, body, extra_versions=(), notes=()):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = "### %s (%s)\n\n" % (title, now)
    command = " ".join(["bench/" + os.path.basename(sys.argv[0])] + sys.argv[1:])
    text += "Machine: %s. Versions: %s. Command: `%s`.\n\n" % (
        machine(), versions(cli, extra_versions), command)
    text += body.rstrip() + "\n"
    for n in notes:
        text += "\n" + n + "\n"
    print(text)
    if args.no_append:
        return
    path = os.path.join(ROOT, "BENCHMARKS.md")
    with open(path) as f:
        doc = f.read()
    if DATA_MARK not in doc:
        doc = doc.rstrip() + "\n\n## Data\n\n" + DATA_MARK + "\n"
    doc = doc.rstrip() + "\n\n" + text
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(doc)
    os.replace(tmp, path)


# ---- processes -------------------------------------------------------------

class Proc:
    """A child in its own session, ended (TERM, then KILL) when the block ends."""

    def __init__(self, argv, env=None, session=True, **kw):
        kw.setdefault("stdout", subprocess.DEVNULL)
        kw.setdefault("stderr", subprocess.DEVNULL)
        # session=False for a child that opens a pty: as a session leader it would
        # get it as its controlling terminal, and SIGHUP when the master closes
        self.p = subprocess.Popen(argv, env=env, start_new_session=session, **kw)
        self.pid = self.p.pid

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def wait_socket(path, proc, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.p.poll() is not None:
            raise RuntimeError("%s exited with %d" % (proc.p.args[0], proc.p.returncode))
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            s.close()
            return
        except OSError:
            time.sleep(0.002)
    raise TimeoutError("nothing listens on " + path)


@contextlib.contextmanager
def tempdir(prefix="gbperf-", base=None):
    d = tempfile.mkdtemp(prefix=prefix, dir=base)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


HUGE = 2 << 20
NR_HUGEPAGES = "/proc/sys/vm/nr_hugepages"
FREE_HUGEPAGES = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"


def huge_pages_for(rec):
    """Huge pages fio needs for a buffer of REC bytes under --mem=shmhuge (with its slack)."""
    return (rec + HUGE - 1) // HUGE + 1


@contextlib.contextmanager
def hugepages(n):
    """At least N free 2 MiB huge pages reserved for the block; the old count back after.

    Yields None, or why not (no root, no hugetlb, memory too fragmented): a caller
    then says so in its report rather than comparing unlike buffers silently.
    """
    try:
        with open(NR_HUGEPAGES) as f:
            old = int(f.read())
        with open(FREE_HUGEPAGES) as f:
            free = int(f.read())
    except (OSError, ValueError) as e:
        yield "no 2 MiB hugetlb pages here (%s)" % e
        return
    if free >= n:
        yield None
        return
    try:
        with open(NR_HUGEPAGES, "w") as f:
            f.write(str(old + n - free))
    except OSError as e:
        yield "cannot reserve %d huge pages (%s)" % (n, e)
        return
    try:
        try:
            with open(FREE_HUGEPAGES) as f:
                got = int(f.read())
        except (OSError, ValueError):
            got = 0
        yield None if got >= n else "only %d of %d huge pages could be reserved" % (got, n)
    finally:
        with open(NR_HUGEPAGES, "w") as f:
            f.write(str(old))


@contextlib.contextmanager
def agent(agent_bin, env=None, scratch=None, extra=()):
    """guestbench-agent on a unix socket in a private directory."""
    with tempdir() as d:
        sock = os.path.join(d, "agent.sock")
        conf = os.path.join(d, "agent.conf")
        with open(conf, "w") as f:
            # an empty config: an /etc/guestbench/agent.conf on this machine must not apply
            f.write("[general]\n")
        argv = [agent_bin, "-m", "unix-listen", "-p", sock, "-c", conf]
        if scratch:
            argv += ["--scratch-dir", scratch]
        with Proc(argv + list(extra), env=env) as p:
            wait_socket(sock, p)
            p.sock = sock
            yield p


@contextlib.contextmanager
def qemu_ga(env=None):
    """The reference qemu-ga on a unix socket (its state and pid file private)."""
    with tempdir() as d:
        sock = os.path.join(d, "qga.sock")
        argv = ["qemu-ga", "-m", "unix-listen", "-p", sock, "-t", d, "-f",
                os.path.join(d, "qga.pid")]
        with Proc(argv, env=env) as p:
            wait_socket(sock, p)
            p.sock = sock
            yield p


def cli_json(cli, argv, env=None, timeout=900):
    """Runs `guestbench ARGV --format json -q --no-save`; returns the one guest's result."""
    r = subprocess.run([cli] + argv + ["--format", "json", "-q"], env=env, capture_output=True,
                       text=True, timeout=timeout)
    try:
        doc = json.loads(r.stdout)
        g = doc["guests"][0]
    except (ValueError, KeyError, IndexError):
        raise RuntimeError("guestbench %s failed (%d): %s" % (" ".join(argv), r.returncode,
                                                               r.stderr.strip()[-400:]))
    if g.get("status") != "ok":
        raise RuntimeError("guestbench %s: %s" % (" ".join(argv), g.get("error")))
    return g["result"]


def metric(result, name, **labels):
    for m in result["metrics"]:
        if m["metric"] == name and all(m["labels"].get(k) == v for k, v in labels.items()):
            return m["value"]
    raise KeyError("%s %s not in result" % (name, labels))


# ---- a QGA client (same wire as tests/e2e/gbclient.py) -------------------------

class Qga:
    def __init__(self, path, timeout=30.0):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        sync_id = random.randint(1, 2**31)
        self.sock.sendall(b"\xff" + json.dumps({"execute": "guest-sync-delimited",
                                                "arguments": {"id": sync_id}}).encode())
        while True:
            msg = self.read()
            if isinstance(msg, dict) and msg.get("return") == sync_id:
                break

    def read(self):
        while True:
            self.buf = self.buf.lstrip(b"\xff \r\n\t")
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line, self.buf = self.buf[:nl], self.buf[nl + 1:]
                try:
                    return json.loads(line.replace(b"\xff", b""))
                except ValueError:
                    continue
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("peer closed")
            self.buf += data

    def call(self, execute, arguments=None):
        req = {"execute": execute}
        if arguments is not None:
            req["arguments"] = arguments
        self.sock.sendall(json.dumps(req).encode() + b"\n")
        reply = self.read()
        if "error" in reply:
            raise RuntimeError("%s: %s" % (execute, reply["error"]))
        return reply["return"]

    def close(self):
        self.sock.close()


def _append_main():
    """`gbbench.py TITLE CLI [NOTE]`: append stdin (a table) as one data entry (for shell scripts)."""
    p = argparse.ArgumentParser()
    p.add_argument("title")
    p.add_argument("cli")
    p.add_argument("command", help="the command line that produced the table")
    p.add_argument("--no-append", action="store_true")
    args = p.parse_args()
    sys.argv = args.command.split()
    report(args, args.title, args.cli, sys.stdin.read())


if __name__ == "__main__":
    _append_main()
