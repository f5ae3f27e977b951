# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared helpers for the bench/ scripts (measurements, not tests).

Every script: builds (or reuses) a build directory, starts what it measures in
a private temporary directory, interleaves our runs with the reference tool's
(A B B A A B ..., the order flipping every pair), prints a Markdown table, and
writes what it measured as data (a Result) to
bench/results/DATE-COMMIT-SCRIPT.json: the date, the commit, the machine, the
versions, the exact commands, both sides' runs, medians and CVs, the pair
ratios and the goal each ratio is held to. bench/make-benchmarks-md makes
BENCHMARKS.md from the latest of those files.
"""
import argparse
import contextlib
import datetime
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.environ.get("GB_BENCH_RESULTS") or os.path.join(ROOT, "bench", "results")
RESULT_FORMAT = "guestbench-bench-result/1"

# Goals for a ratio ours / reference (bench/make-benchmarks-md shows each ratio against its own)
FIDELITY = {"low": 0.97, "high": 1.03}  # 0.9-1.1 is "near", anything else "NO"
GUEST_BAR = {"low": 0.85, "high": 1.15}  # in a TCG guest: the looser bar, within 15 %
AHEAD = {"below": 1.0}  # cost: less than qemu-ga's


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
    add_result_options(p)
    return p


def add_result_options(p):
    p.add_argument("--results", default=RESULTS, metavar="DIR",
                   help="where the result file goes (default bench/results, or $GB_BENCH_RESULTS)")
    p.add_argument("--no-save", action="store_true", help="print only, write no result file")


def ensure_build(build):
    agent = os.path.join(build, "agent", "guestbench-agent")
    cli = os.path.join(build, "host-cli", "guestbench")
    if not os.path.exists(os.path.join(build, "build.ninja")):
        subprocess.run(["meson", "setup", build, ROOT, "-Dbuildtype=debugoptimized"],
                       check=True, stdout=subprocess.DEVNULL)
    # the agent answers in guestbench-agent-session and runs each benchmark job in
    # guestbench-agent-bench
    subprocess.run(["ninja", "-C", build, "agent/guestbench-agent",
                    "agent/guestbench-agent-session", "agent/guestbench-agent-bench",
                    "host-cli/guestbench"],
                   check=True, stdout=subprocess.DEVNULL)
    return os.path.abspath(agent), os.path.abspath(cli)


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, **kw)


def machine_info():
    """The machine as data: CPU model, cores, kernel, memory, load average."""
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = None
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1])
                break
    load = [float(x) for x in open("/proc/loadavg").read().split()[:3]]
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": os.uname().release,
            "memory_kib": mem, "load": load}


def machine():
    m = machine_info()
    return "%s, %d cores, kernel %s, %s memory, load %s" % (
        m["cpu"], m["cores"], m["kernel"],
        "%.1f GiB" % (m["memory_kib"] / (1 << 20)) if m["memory_kib"] else "?",
        "/".join("%.2f" % x for x in m["load"]))


def git_commit():
    """(short commit, tree has uncommitted changes) of ROOT; ("nocommit", None) outside git."""
    try:
        r = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
        if r.returncode != 0 or not r.stdout.strip():
            return "nocommit", None
        dirty = sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).stdout
        return r.stdout.strip(), bool(dirty.strip())
    except OSError:
        return "nocommit", None


def versions(cli, extra=()):
    out = ["guestbench " + sh([cli, "--version"]).stdout.strip().split()[-1]]
    rev, dirty = git_commit()
    if dirty is not None:
        out[0] += " (git %s%s)" % (rev, "+changes" if dirty else "")
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
    return "-" if x is None or x != x else "%.1f%%" % (100 * x)


def fmt(x, digits=3):
    if x is None or x != x:
        return "-"
    if abs(x) >= 1000:
        return "{:,.0f}".format(x)
    return "%.*g" % (digits, x)


def ratio_text(c):
    """A comparison's ratio as "median (min-max)" of its pair ratios."""
    if c["ratio"] is None:
        return "-"
    if c.get("ratio_range"):
        return "%.3f (%.3f-%.3f)" % (c["ratio"], c["ratio_range"][0], c["ratio_range"][1])
    return "%.3f" % c["ratio"]


def cells(c):
    """ours, reference, ratio, CV ours, CV reference: the table cells of a comparison."""
    return [fmt(c["ours"]["value"]), fmt(c["reference"]["value"]), ratio_text(c),
            pct(c["ours"].get("cv")), pct(c["reference"].get("cv"))]


def met(goal, ratio):
    """True or False against GOAL; None when there is no ratio (no goal, or 0 against 0)."""
    if not goal or ratio is None or ratio != ratio:
        return None
    if "below" in goal:
        return ratio < goal["below"]
    return goal["low"] <= ratio <= goal["high"]


def verdict(r, lo=0.97, hi=1.03, hard_lo=0.9, hard_hi=1.1):
    if r is None or r != r:
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


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def _iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class Result:
    """What one run of one script measured, as data; report() writes it as JSON.

    comparisons: ours against a reference, each with both sides' runs (or one
    figure each), medians, CVs, the pair ratios, the goal and whether it is met;
    figures: single values without a reference (a floor, a peak); tables: rows
    worth keeping that are neither; commands: the exact command lines per test.
    """

    def __init__(self, script, reference, runs=None):
        self.started = _now()
        self.doc = {"format": RESULT_FORMAT, "script": script, "reference": reference,
                    "runs": runs, "setup": None, "comparisons": [], "figures": [],
                    "tables": [], "notes": [], "commands": {}}

    def pairs(self, section, group, name, unit, ours, ref, goal, reference=None,
              control=False):
        """Interleaved runs: OURS[i] and REF[i] ran next to each other; returns the comparison."""
        ratios = [a / b for a, b in zip(ours, ref) if b]
        r = median(ratios) if ratios else None
        c = {"section": section, "group": group, "name": name, "unit": unit,
             "ours": {"value": median(ours), "stat": "median", "cv": cv(ours), "runs": list(ours)},
             "reference": {"name": reference or self.doc["reference"], "value": median(ref),
                           "stat": "median", "cv": cv(ref), "runs": list(ref)},
             "ratio": r, "ratio_range": [min(ratios), max(ratios)] if ratios else None,
             "pair_ratios": ratios, "goal": goal, "met": met(goal, r), "control": control}
        self.doc["comparisons"].append(c)
        return c

    def values(self, section, group, name, unit, ours, ref, goal, reference=None, stat=None,
               **extra):
        """One figure a side (a quantile, a size, a median of runs); ratio = OURS / REF."""
        r = ours / ref if ref else (None if ours == ref else float("inf"))
        c = {"section": section, "group": group, "name": name, "unit": unit,
             "ours": dict({"value": ours}, **({"stat": stat} if stat else {})),
             "reference": dict({"name": reference or self.doc["reference"], "value": ref},
                               **({"stat": stat} if stat else {})),
             "ratio": r, "goal": goal, "met": met(goal, r), "control": False}
        c.update(extra)
        self.doc["comparisons"].append(c)
        return c

    def figure(self, section, name, value, unit, **extra):
        """A figure without a reference (a floor, a peak, a count)."""
        self.doc["figures"].append(dict({"section": section, "name": name, "value": value,
                                         "unit": unit}, **extra))

    def table(self, section, title, header, rows):
        self.doc["tables"].append({"section": section, "title": title, "header": list(header),
                                   "rows": [list(r) for r in rows]})

    def command(self, key, ours=None, reference=None):
        """The first command line of each side of test KEY (argv lists or strings)."""
        entry = self.doc["commands"].setdefault(key, {"ours": None, "reference": None})
        for side, argv in (("ours", ours), ("reference", reference)):
            if argv is not None and entry[side] is None:
                entry[side] = argv if isinstance(argv, str) else " ".join(str(a) for a in argv)


def _clean(x):
    """JSON has no NaN or infinity: null instead; floats to 6 decimals."""
    if isinstance(x, float):
        return None if x != x or x in (float("inf"), float("-inf")) else round(x, 6)
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def _flat(x):
    return not isinstance(x, (dict, list)) or (
        isinstance(x, list) and not any(isinstance(v, (dict, list)) for v in x))


def dump_json(doc, indent=0):
    """JSON for reading and diffing: objects indented, lists of plain values (runs, a header,
    a table row) and small flat objects on one line."""
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(doc, dict):
        if not doc:
            return "{}"
        one = json.dumps(doc)
        if all(_flat(v) for v in doc.values()) and len(one) + indent < 90:
            return one
        items = ["%s%s: %s" % (inner, json.dumps(k), dump_json(v, indent + 2))
                 for k, v in doc.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(doc, list) and any(isinstance(v, (dict, list)) for v in doc):
        if all(isinstance(v, list) and not any(isinstance(w, (dict, list)) for w in v)
               for v in doc):
            # a table's rows: one line each
            return "[\n" + ",\n".join(inner + json.dumps(v) for v in doc) + "\n" + pad + "]"
        return "[\n" + ",\n".join(inner + dump_json(v, indent + 2) for v in doc) + "\n" + pad + "]"
    return json.dumps(doc)


def result_path(results, date, commit, script):
    """RESULTS/YYYY-MM-DDTHHMM-COMMIT-SCRIPT.json (with seconds if the minute is taken)."""
    path = os.path.join(results, "%s-%s-%s.json" % (date.strftime("%Y-%m-%dT%H%M"), commit, script))
    if os.path.exists(path):
        path = os.path.join(results, "%s-%s-%s.json" % (date.strftime("%Y-%m-%dT%H%M%S"), commit,
                                                        script))
    return path


def report(args, res, cli, body, extra_versions=(), notes=()):
    """Prints the run as Markdown and writes RES, completed, to the results directory."""
    done = _now()
    rev, dirty = git_commit()
    command = " ".join(["bench/" + os.path.basename(sys.argv[0])] + sys.argv[1:])
    vers = versions(cli, extra_versions)
    text = "### %s (%s)\n\n" % (res.doc["script"], done.strftime("%Y-%m-%d %H:%M UTC"))
    text += "Machine: %s. Versions: %s. Command: `%s`.\n\n" % (machine(), vers, command)
    text += body.rstrip() + "\n"
    for n in notes:
        text += "\n" + n + "\n"
    print(text)
    doc = {"format": res.doc["format"], "script": res.doc["script"], "date": _iso(done),
           "started": _iso(res.started) if res.started else None, "commit": rev, "dirty": dirty, "command": command,
           "machine": machine_info(), "versions": vers.split("; ")}
    doc.update((k, v) for k, v in res.doc.items() if k not in doc)
    doc["notes"] = list(res.doc["notes"]) + list(notes)
    if args.no_save:
        return None
    os.makedirs(args.results, exist_ok=True)
    path = result_path(args.results, done, rev, res.doc["script"])
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(dump_json(_clean(doc)) + "\n")
    os.replace(tmp, path)
    rel = os.path.relpath(path)
    print("result: " + (path if rel.startswith("..") else rel), file=sys.stderr)
    return path


def parse_table(text):
    """A Markdown table (as table() prints it) back into (header, rows): numbers as numbers."""
    def cell(x):
        x = x.strip()
        if x in ("-", ""):
            return None
        try:
            return int(x.replace(",", "")) if re.fullmatch(r"-?[\d,]+", x) else float(x)
        except ValueError:
            return x

    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("|")]
    split = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    if len(split) < 2:
        return None, []
    return split[0], [[cell(c) for c in r] for r in split[2:]]


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


def sessions(agent_pid):
    """Session processes (guestbench-agent-session) the agent's resident process runs now."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                rest = f.read().rsplit(")", 1)[1].split()
            with open("/proc/%s/cmdline" % name, "rb") as f:
                argv0 = f.read().split(b"\0")[0]
        except (OSError, IndexError):
            continue
        if (int(rest[1]) == agent_pid and rest[0] != "Z" and
                os.path.basename(argv0) == b"guestbench-agent-session"):
            out.append(int(name))
    return out


def wait_no_session(agent_pid, timeout=60.0):
    """Until the agent's session process has ended (the agent idles as it does between hosts)."""
    deadline = time.monotonic() + timeout
    while sessions(agent_pid):
        if time.monotonic() > deadline:
            raise TimeoutError("the agent's session process did not end")
        time.sleep(0.05)


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


def _record_main():
    """`gbbench.py SCRIPT CLI COMMAND`: print and record stdin (a Markdown table) as a result.

    For the shell scripts (fleet-scale): the table is kept as data, numbers as numbers.
    """
    p = argparse.ArgumentParser()
    p.add_argument("script")
    p.add_argument("cli")
    p.add_argument("command", help="the command line that produced the table")
    p.add_argument("--reference", default=None, help="what the table compares against")
    add_result_options(p)
    args = p.parse_args()
    sys.argv = args.command.split()
    body = sys.stdin.read()
    res = Result(args.script, args.reference)
    res.started = None  # the table was measured before it came here
    header, rows = parse_table(body)
    if header:
        res.table(args.script, args.script, header, rows)
    report(args, res, args.cli, body)


if __name__ == "__main__":
    _record_main()
