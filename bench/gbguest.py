# SPDX-License-Identifier: GPL-2.0-or-later
"""The tests of a guest's fidelity, shared by bench/fidelity-guest (x86) and
bench/fidelity-aarch64: ours through the CLI and the agent's virtio-serial
port, the reference tools (openssl speed, fio, iperf3, bench/memref.c and
bench/ioref.c) in the same guest through its qemu-ga's guest-exec, each test's
runs interleaved (A B B A ...) and kept as comparisons of a gbbench.Result.

The guest is one of tests/e2e/fleet.py's, its image made by build-guest.sh
with the reference tools at /usr/bin and its scratch disk (ext4) mounted on
SCRATCH. VCPU is the vCPU the agent and every guest-side tool are pinned to
(taskset), None for no pinning (a guest with one vCPU).
"""
import base64
import json
import subprocess
import sys
import time

import gbbench as gb
from gbclient import Session

GUEST_PORT = 5201
VCPU = 1  # see the docstring; a script sets it to None for a guest with one vCPU
SCRATCH = "/var/lib/guestbench"  # the agent's default scratch-dir; the guest mounts its disk there
FIO_FILE = SCRATCH + "/fio.dat"
AES_SIZES = [16, 1024, 16384]
SECTIONS = ["aes", "disk", "net", "mem"]
BAR = 0.15  # in a TCG guest: within 15 % of the reference


# the first command line of each side per test, for the report
commands = {}


def note_command(key, ours=None, ref=None):
    entry = commands.setdefault(key, [None, None])
    if ours is not None and entry[0] is None:
        entry[0] = ours
    if ref is not None and entry[1] is None:
        entry[1] = ref



# ---- qemu-ga in the guest ----------------------------------------------------

class GuestExec:
    """guest-exec through the guest's qemu-ga, on one connection for the whole run.

    The virtio-serial chardev serves one client at a time, so every command
    goes through this one session.
    """

    def __init__(self, sock, timeout=90):
        self.s = Session(sock, timeout=timeout)
        self.running = set()

    def start(self, argv):
        pid = self.s.call("guest-exec", {"path": argv[0], "arg": argv[1:],
                                         "capture-output": True})["pid"]
        self.running.add(pid)
        return pid

    def poll(self, pid):
        """(exitcode or -signal, stdout, stderr) once PID has exited, else None."""
        st = self.s.call("guest-exec-status", {"pid": pid})
        if not st.get("exited"):
            return None
        self.running.discard(pid)
        code = st.get("exitcode")
        if code is None:
            code = -st.get("signal", 0)
        return (code, base64.b64decode(st.get("out-data", "")).decode(errors="replace"),
                base64.b64decode(st.get("err-data", "")).decode(errors="replace"))

    def wait(self, pid, timeout):
        deadline = time.monotonic() + timeout
        pause = 0.02
        while time.monotonic() < deadline:
            r = self.poll(pid)
            if r is not None:
                return r
            # back off to the CLI's 250 ms: every poll is work for the guest's vCPUs
            time.sleep(pause)
            pause = min(0.25, pause * 2)
        self.kill(pid)
        raise TimeoutError("guest pid %d did not finish within %d s" % (pid, timeout))

    def run(self, argv, timeout=300):
        code, out, err = self.wait(self.start(argv), timeout)
        if code != 0:
            raise RuntimeError("in the guest, %s exited with %s: %s" % (
                " ".join(argv), code, (err or out).strip()[-400:]))
        return out

    def kill(self, pid):
        try:
            k = self.start(["/bin/kill", "-KILL", str(pid)])
            self.wait(k, 30)
            self.wait(pid, 30)
        except (RuntimeError, TimeoutError, OSError):
            pass
        self.running.discard(pid)

    def close(self):
        # what still runs in the guest goes with the guest, killed right after
        self.s.close()



def pinned(argv):
    return argv if VCPU is None else ["/bin/taskset", "-c", str(VCPU)] + argv


def pin_agent(ge):
    """Every thread of the agent, and those it starts later (the jobs'), on VCPU."""
    pids = ge.run(["/bin/pidof", "guestbench-agent"]).split()
    if len(pids) != 1:
        raise RuntimeError("expected one guestbench-agent in the guest, found %r" % pids)
    # the session process it starts inherits this; one already running is pinned too
    pids += ge.run(["/bin/sh", "-c", "pidof guestbench-agent-session || true"]).split()
    for pid in pids:
        ge.run(["/bin/taskset", "-a", "-p", "-c", str(VCPU), pid])


# ---- the four tests: (ours, reference) per run --------------------------------

def cli_run(cli, sock, argv):
    full = ["bench"] + argv + ["--no-save", "--timeout", "90", sock]
    return gb.cli_json(cli, full, timeout=900), full


def aes_ours(cli, sock, seconds):
    res, argv = cli_run(cli, sock, ["aes", "--sizes", ",".join(str(s) for s in AES_SIZES),
                                    "--seconds", str(seconds), "--threads", "1"])
    note_command("aes", ours=argv)
    # openssl's unit: 1000s of bytes per second
    return [gb.metric(res, "aes-128-gcm", block_size=str(s)) / 1000 for s in AES_SIZES]


def aes_openssl(ge, seconds):
    out = []
    for size in AES_SIZES:
        base = ["/usr/bin/openssl", "speed", "-elapsed", "-seconds", str(seconds), "-bytes",
                str(size), "-evp", "aes-128-gcm"]
        argv = pinned(base)
        note_command("aes", ref=pinned(base[:6] + ["N"] + base[7:]))
        text = ge.run(argv, timeout=60 + 10 * seconds)
        val = None
        for line in text.splitlines():
            f = line.split()
            if len(f) == 2 and f[0].upper() == "AES-128-GCM" and f[1].endswith("k"):
                val = float(f[1][:-1])
        if val is None:
            raise RuntimeError("cannot parse openssl speed output: " + text[-300:])
        out.append(val)
    return out


# For records above a page: ioref again with DRAIN_MIB of memory faulted in
# right before its buffer, as fio's start-up does (see bench/ioref.c). A direct
# request reaches the device as one segment per physically contiguous run of
# its buffer, and the two ioref turns show what that alone is worth.
DRAIN_MIB = 8
DISK_REFS = [("fio", "fio"), ("fio-malloc", "fio with its default malloc buffer (control)"),
             ("ioref", "bare loop (bench/ioref.c)"),
             ("drained", "bare loop, buffer after %d MiB (ioref)" % DRAIN_MIB)]
# Above a page fio takes its buffer from huge pages, as bench disk does (see
# bench/fidelity-disk); FIO_MEM is cleared when the guest cannot reserve them.
FIO_MEM = ["shmhuge"]
buffer_runs = {"ioref": [], "drained": []}


def fio_argv(name, size, rec):
    kind = {"fill": "write", "read-malloc": "read"}.get(name, name)
    argv = pinned(["/usr/bin/fio", "--output-format=json", "--name=" + name, "--ioengine=psync",
            "--direct=1", "--size=%d" % size, "--fallocate=none", "--randrepeat=1",
            "--invalidate=1", "--filename=" + FIO_FILE, "--bs=%d" % rec, "--rw=" + kind])
    if rec > 4096 and FIO_MEM[0] and name != "read-malloc":
        argv.append("--mem=" + FIO_MEM[0])
    if "write" in kind:
        argv.append("--end_fsync=1")
    return kind, argv


def fio_job(ge, name, size, rec):
    kind, argv = fio_argv(name, size, rec)
    if name == "read-malloc":
        note_command("disk-read fio-malloc", ref=argv)
    elif name != "fill":
        note_command("disk-%s fio" % name, ref=argv)
    text = ge.run(argv, timeout=600)
    try:
        j = json.loads(text[text.find("{"):])["jobs"][0]
    except (ValueError, KeyError, IndexError):
        raise RuntimeError("cannot parse fio output: " + text[-300:])
    if j.get("error"):
        raise RuntimeError("fio %s: error %s" % (name, j["error"]))
    return j["read" if "read" in kind else "write"]["bw_bytes"]


def disk_fio(ge, tests, size, rec):
    """Each test in a fio process of its own (see bench/fidelity-disk); B/s per test."""
    ge.run(["/bin/rm", "-f", FIO_FILE])
    out = {}
    if "write" not in tests:
        fio_job(ge, "fill", size, rec)  # untimed, as ours fills the file first
    for t in tests:
        out[t] = fio_job(ge, t, size, rec)
    if "read" in tests and rec > 4096 and FIO_MEM[0]:
        out["read-malloc"] = fio_job(ge, "read-malloc", size, rec)
    ge.run(["/bin/rm", "-f", FIO_FILE])
    return out


def disk_ioref(ge, tests, size, rec, key="ioref"):
    argv = pinned(["/usr/bin/ioref", SCRATCH, str(size), str(rec), ",".join(tests)])
    if key == "drained":
        argv.append(str(DRAIN_MIB << 20))
    for t in tests:
        note_command("disk-%s %s" % (t, key), ref=argv)
    try:
        doc = json.loads(ge.run(argv, timeout=600))
        out = {t: float(doc[t]) for t in tests}
    except (ValueError, KeyError, TypeError):
        raise RuntimeError("ioref printed no figures for " + ",".join(tests))
    if rec > 4096 and doc.get("buffer_runs") is not None:
        buffer_runs[key].append(doc["buffer_runs"])
    return out


def disk_refs(ge, tests, size, rec, turn):
    """One reference turn: fio and ioref (twice above a page), the order reversed every turn."""
    runs = [("fio", lambda: disk_fio(ge, tests, size, rec)),
            ("ioref", lambda: disk_ioref(ge, tests, size, rec))]
    if rec > 4096:
        runs.append(("drained", lambda: disk_ioref(ge, tests, size, rec, "drained")))
    if turn[0] % 2:
        runs.reverse()
    turn[0] += 1
    out = {k: fn() for k, fn in runs}
    if "read-malloc" in out["fio"]:
        out["fio-malloc"] = {"read": out["fio"].pop("read-malloc")}
    return out


def disk_ours(cli, sock, tests, size, rec, seen):
    res, argv = cli_run(cli, sock, ["disk", "--size", str(size), "--record", str(rec),
                                    "--tests", ",".join(tests)])
    for t in tests:
        note_command("disk-" + t, ours=argv)
    seen.update({k: res.get(k) for k in ("filesystem", "block_device", "direct", "fsync")})
    if rec > 4096:
        seen.setdefault("pages", set()).update(b["pages"] for b in res.get("buffers", []))
    return {t: gb.metric(res, "disk-throughput", test=t, record_size=str(rec)) for t in tests}


def net_ours(cli, sock, hostport, direction, seconds, omit):
    res, argv = cli_run(cli, sock, ["net", "--guest-listen", str(GUEST_PORT), "--host-connect",
                                    "127.0.0.1:%d" % hostport, "--direction", direction,
                                    "--streams", "1", "--seconds", str(seconds), "--omit",
                                    str(omit)])
    note_command("net-" + direction, ours=argv)
    return gb.metric(res, "tcp-throughput", direction=direction)


def guest_listens(ge, port):
    text = ge.run(["/bin/cat", "/proc/net/tcp", "/proc/net/tcp6"])
    for line in text.splitlines():
        f = line.split()
        # local_address is HEXADDR:HEXPORT; state 0A is LISTEN
        if len(f) > 3 and f[1].endswith(":%04X" % port) and f[3] == "0A":
            return True
    return False


def net_iperf3(ge, hostport, direction, seconds, omit):
    server = pinned(["/usr/bin/iperf3", "-s", "-1", "-p", str(GUEST_PORT)])
    client = ["iperf3", "-c", "127.0.0.1", "-p", str(hostport), "-t", str(seconds), "-O",
              str(omit), "-P", "1", "-l", "128K", "-J"]
    if direction == "guest-to-host":
        client.append("-R")
    note_command("net-" + direction, ref=(server, client))
    pid = ge.start(server)
    try:
        # a probe connection through hostfwd would be iperf3's one test: look in /proc instead
        deadline = time.monotonic() + 30
        while not guest_listens(ge, GUEST_PORT):
            r = ge.poll(pid)
            if r is not None:
                raise RuntimeError("iperf3 -s in the guest exited with %s: %s" % (
                    r[0], (r[2] or r[1]).strip()[-300:]))
            if time.monotonic() > deadline:
                raise TimeoutError("iperf3 -s in the guest does not listen after 30 s")
            time.sleep(0.1)
        r = gb.sh(client, timeout=seconds + omit + 90)
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            raise RuntimeError("iperf3 -c failed (%d): %s" % (r.returncode, r.stderr[-300:]))
        if "error" in doc:
            raise RuntimeError("iperf3 -c: " + doc["error"])
        code, _, err = ge.wait(pid, 30)
        if code != 0:
            raise RuntimeError("iperf3 -s in the guest exited with %s: %s" % (code, err[-300:]))
    finally:
        if pid in ge.running:
            ge.kill(pid)
    return doc["end"]["sum_received"]["bits_per_second"] / 8


MEM_ROWS = [("page-fault", "ns per 4 KiB", 1), ("read", "GB/s", 1e9), ("write", "GB/s", 1e9),
            ("copy", "GB/s", 1e9)]


def mem_ours(cli, sock, size):
    res, argv = cli_run(cli, sock, ["mem", "--size", str(size), "--pages", "4k"])
    note_command("mem", ours=argv)
    out = {"page-fault": gb.metric(res, "page-fault", pages="4k")}
    for op in ("read", "write", "copy"):
        out[op] = gb.metric(res, "memory-bandwidth", pages="4k", op=op)
    return out


def mem_ref(ge, size):
    argv = pinned(["/usr/bin/memref", str(size), "4k"])
    note_command("mem", ref=argv)
    try:
        doc = json.loads(ge.run(argv, timeout=120))
    except ValueError:
        raise RuntimeError("memref printed no JSON")
    if doc["faults"] < size // 4096:
        raise RuntimeError("memref: %d faults for %d pages" % (doc["faults"], size // 4096))
    return {"page-fault": doc["per_4k_ns"], "read": doc["read"], "write": doc["write"],
            "copy": doc["copy"], "faults": doc["faults"]}


# ---- the run -------------------------------------------------------------------

def row(res, where, test, unit, oa, ob, reference, control=False):
    """One comparison (WHERE: section, group, name) into RES; its table row and ratio."""
    c = res.pairs(where[0], where[1], where[2], unit, oa, ob, gb.GUEST_BAR, reference=reference,
                  control=control)
    within = "-" if c["met"] is None else ("yes" if c["met"] else "NO")
    return [test, unit] + gb.cells(c) + [within], c["ratio"]




def fmt_cmd(argv, hostport):
    """Our command line (cli_run's, the socket last) with SOCK and HOSTPORT for the paths."""
    if not argv:
        return "-"
    s = " ".join(["guestbench"] + argv[:-1] + ["SOCK"])
    return s.replace("127.0.0.1:%d" % hostport, "127.0.0.1:HOSTPORT")


def fmt_ref(ref, hostport):
    if not ref:
        return "-"
    if isinstance(ref, tuple):
        server, client = ref
        return "in the guest `%s`, on the host `%s`" % (
            " ".join(server), " ".join(client).replace("-p %d" % hostport, "-p HOSTPORT"))
    return "in the guest `%s`" % " ".join(ref)


class Run:
    """The sections of one guest's run into RES: each appends its table rows to
    self.rows, its ratios against the reference tools to self.ratios, what it
    saw to self.notes; a section that fails is named in self.failed and noted."""

    def __init__(self, script, res, cli, sock, ge, n, hostport=None, prefix=""):
        self.script = script
        # before each group and test name: the guest's CPU, where a script has several
        self.prefix = prefix
        self.res, self.cli, self.sock, self.ge, self.n = res, cli, sock, ge, n
        self.hostport = hostport
        self.rows, self.ratios, self.notes, self.failed = [], [], [], []
        self.disk_seen = {}

    def section(self, name, fn):
        t0 = time.monotonic()
        try:
            fn()
        except (RuntimeError, TimeoutError, OSError, KeyError, ValueError,
                subprocess.SubprocessError) as e:
            self.failed.append(name)
            self.notes.append("%s: not measured: %s" % (name, e))
            print("%s: %s failed: %s" % (self.script, name, e), file=sys.stderr)
        print("%s: %s done in %.0f s" % (self.script, name, time.monotonic() - t0),
              file=sys.stderr)

    def add(self, where, test, unit, oa, ob, reference, control=False):
        where = (where[0], self.prefix + where[1], where[2])
        r, x = row(self.res, where, self.prefix + test, unit, oa, ob, reference, control)
        self.rows.append(r)
        # the 15 % bar is against the reference tools; the control rows are not counted
        if not control:
            self.ratios.append(x)

    def aes(self, seconds, group="aes-128-gcm", reference="openssl speed"):
        ra, rb = gb.interleave(self.n, lambda: aes_ours(self.cli, self.sock, seconds),
                               lambda: aes_openssl(self.ge, seconds))
        for i, size in enumerate(AES_SIZES):
            self.add(("aes", group, "%d B" % size), "%s %d B" % (group, size), "1000 B/s",
                     [a[i] for a in ra], [b[i] for b in rb], reference)

    def disk(self, seq_size, rand_size, need=2):
        """NEED: the 2 MiB pages fio's 1 MiB buffer takes with its slack (x86: 2)."""
        got = self.ge.run(["/bin/sh", "-c", "echo %d > /proc/sys/vm/nr_hugepages; cat "
                           "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages" % need])
        if not got.strip().isdigit() or int(got) < need:
            FIO_MEM[0] = None
            self.notes.append("disk: the guest could not reserve %d huge pages (%r): fio ran "
                              "with its malloc buffer." % (need, got.strip()))
        for tests, size, rec in ((["write", "read"], seq_size, 1 << 20),
                                 (["randread", "randwrite"], rand_size, 4096)):
            turn = [0]
            ra, rb = gb.interleave(
                self.n, lambda: disk_ours(self.cli, self.sock, tests, size, rec, self.disk_seen),
                lambda: disk_refs(self.ge, tests, size, rec, turn))
            for t in tests:
                for key, label in DISK_REFS:
                    if key not in rb[0] or t not in rb[0][key]:
                        continue
                    recs = "1 MiB" if rec == 1 << 20 else "4 KiB"
                    self.add(("disk", key, "%s %s" % (t, recs)),
                             "disk %s %s, %d MiB vs %s" % (t, recs, size >> 20, label),
                             "MB/s", [a[t] / 1e6 for a in ra], [b[key][t] / 1e6 for b in rb],
                             label, control=key != "fio")
        self.ge.run(["/bin/sh", "-c", "echo 0 > /proc/sys/vm/nr_hugepages"])

    def net(self, seconds, omit):
        for direction in ("host-to-guest", "guest-to-host"):
            ra, rb = gb.interleave(
                self.n, lambda: net_ours(self.cli, self.sock, self.hostport, direction, seconds,
                                         omit),
                lambda: net_iperf3(self.ge, self.hostport, direction, seconds, omit))
            self.add(("net", "1 stream", direction), "net %s, 1 stream" % direction, "MB/s",
                     [a / 1e6 for a in ra], [b / 1e6 for b in rb], "iperf3")

    def mem(self, size):
        # one untimed run each first: the guest's first use of its RAM also
        # faults in QEMU's memory on the host, whichever side comes first
        mem_ours(self.cli, self.sock, size)
        mem_ref(self.ge, size)
        ra, rb = gb.interleave(self.n, lambda: mem_ours(self.cli, self.sock, size),
                               lambda: mem_ref(self.ge, size))
        for key, unit, scale in MEM_ROWS:
            name = "mem page-fault 4k" if key == "page-fault" else "mem bandwidth %s 4k" % key
            self.add(("mem", "4k", name[4:-3]), name, unit, [a[key] / scale for a in ra],
                     [b[key] / scale for b in rb], "memref")
        self.notes.append("memref's kernel fault count: %s per run for %d pages of 4 KiB."
                          % ("/".join(str(f) for f in sorted({b["faults"] for b in rb})),
                             size // 4096))

    def summary(self):
        """The count of ratios within the bar, for the end of the table."""
        good = [r for r in self.ratios if r == r]
        return ("%d of %d ratios against the reference tools within 15%% (0.85-1.15), %d of %d "
                "within 0.97-1.03 (the control rows are not counted).\n" % (
                    sum(1 for r in good if abs(r - 1) <= BAR), len(self.ratios),
                    sum(1 for r in good if 0.97 <= r <= 1.03), len(self.ratios)))

    def finish(self):
        """The disk notes and the commands of every test: as text for the body, into RES."""
        if buffer_runs["ioref"] or buffer_runs["drained"]:
            self.notes.insert(0, "disk: ioref's 1 MiB buffer in physically contiguous runs (of "
                              "256 pages): %s plain, %s after %d MiB drained." % (
                                  buffer_runs["ioref"] or "-", buffer_runs["drained"] or "-",
                                  DRAIN_MIB))
        seen = self.disk_seen
        if seen:
            self.notes.insert(0, "disk: ours reported filesystem %s on %s, direct %s, fsync %s, "
                              "its 1 MiB buffer in %s pages; fio's file %s is on the same "
                              "filesystem, its buffer %s." % (
                                  seen.get("filesystem"), seen.get("block_device"),
                                  seen.get("direct"), seen.get("fsync"),
                                  "/".join(sorted(seen.get("pages", ()))) or "?", FIO_FILE,
                                  "from 2 MiB hugetlb pages (--mem=shmhuge)" if FIO_MEM[0] else
                                  "from malloc"))
        hp = self.hostport or 0
        text = ("\nCommands (SOCK = the guest's virtio-serial socket, HOSTPORT = the hostfwd "
                "port):\n\n")
        for key in sorted(commands):
            ours, ref = commands[key]
            text += "- %s: ours `%s`; reference %s\n" % (key, fmt_cmd(ours, hp),
                                                          fmt_ref(ref, hp))
            self.res.command(key, ours=fmt_cmd(ours, hp) if ours else None,
                             reference=fmt_ref(ref, hp) if ref else None)
        for key in ("ioref", "drained"):
            if buffer_runs[key]:
                self.res.figure("disk", "ioref 1 MiB buffer, physically contiguous runs of 256 "
                                "pages, " + ("plain" if key == "ioref" else
                                             "after %d MiB drained" % DRAIN_MIB),
                                buffer_runs[key], "runs")
        return text
