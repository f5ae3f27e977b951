#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Benchmark jobs that outlive their CLI, against a real agent and the real
CLI: --deadline cancels the job in the guest, `jobs` shows what a killed CLI
left running, `cancel` stops it, and the errors of both. Through a real
qemu-ga (root only): --deadline and an early Ctrl-C stop the one-shot agent.
Prints TAP."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, skip, start_agents, stop, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]
AGENT = os.environ["GB_AGENT"]


def cli(*args, timeout=60):
    t0 = time.monotonic()
    p = subprocess.run([CLI] + list(args), stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=timeout,
                       env=dict(os.environ, XDG_DATA_HOME=XDG))
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def guests(out):
    try:
        return json.loads(out)["guests"]
    except (ValueError, KeyError):
        return []


def jobs_of(sock):
    """The agent's jobs as `guestbench jobs --format json` shows them."""
    rc, out, err, _ = cli("jobs", "--format", "json", sock)
    g = guests(out)
    if rc != 0 or len(g) != 1:
        raise AssertionError("jobs failed: rc %d %s %s" % (rc, out, err))
    return g[0]["result"]["jobs"]


def wait_running(sock, seconds=10):
    """After a CLI was killed: the agent serves the next client once it sees the close."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        jobs = jobs_of(sock)
        if any(j["state"] == "running" for j in jobs):
            return jobs
        time.sleep(0.05)
    return jobs_of(sock)


def start_job_and_kill_cli(sock):
    """A 30 s job whose CLI dies: what an operator finds after a lost terminal."""
    p = subprocess.Popen([CLI, "bench", "aes", "--seconds", "30", "--sizes", "16", "--no-save",
                          sock], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=dict(os.environ, XDG_DATA_HOME=XDG))
    time.sleep(1.0)  # connect, sync and gb-bench-start take milliseconds
    p.kill()
    p.wait()
    return wait_running(sock)


def test_deadline(sock):
    rc, out, err, elapsed = cli("--deadline", "1", "bench", "aes", "--seconds", "30", "--sizes",
                                "16", "--no-save", "--format", "json", sock)
    g = guests(out)
    check("deadline: rc 3, the guest timed out with its job cancelled",
          rc == 3 and len(g) == 1 and g[0]["status"] == "timeout" and
          "overall deadline of 1 s" in g[0]["error"] and "(cancelled)" in g[0]["error"],
          "rc %d out %s err %s" % (rc, out, err))
    check("deadline: ends within the deadline plus the cancel grace", elapsed < 4.5,
          "%.2f s" % elapsed)
    jobs = jobs_of(sock)
    check("deadline: jobs shows the job cancelled and nothing running",
          jobs and jobs[-1]["state"] == "cancelled" and jobs[-1]["test"] == "aes" and
          not any(j["state"] == "running" for j in jobs), jobs)
    rc, out, err, _ = cli("bench", "aes", "--seconds", "0.2", "--sizes", "16", "--no-save",
                          "--format", "json", sock)
    g = guests(out)
    check("deadline: the next bench starts (no 'already running')",
          rc == 0 and g and g[0]["status"] == "ok", "rc %d %s %s" % (rc, out, err))


def test_jobs_and_cancel(sock, dead):
    jobs = start_job_and_kill_cli(sock)
    running = [j for j in jobs if j["state"] == "running"]
    check("jobs: the job of a killed CLI is listed running with test, progress and age",
          len(running) == 1 and running[0]["test"] == "aes" and
          0 <= running[0]["progress"] < 1 and 0.5 <= running[0]["age"] < 30, jobs)
    job_id = running[0]["job"] if running else -1

    rc, out, err, _ = cli("jobs", sock)
    lines = out.splitlines()
    check("jobs: the table has the columns and a running aes row",
          rc == 0 and lines and lines[0].split() == ["GUEST", "STATUS", "JOB", "TEST", "STATE",
                                                     "PROGRESS", "AGE", "DETAIL"] and
          any(" aes " in ln and " running " in ln and (" %d " % job_id) in ln
              for ln in lines[1:]), out + err)

    rc, out, err, _ = cli("jobs", "--format", "csv", sock, dead)
    rows = out.splitlines()
    check("jobs csv: header, the running job, and the unreachable guest with its error",
          rc == 3 and rows and
          rows[0] == "guest,target,status,job,test,state,progress,age_seconds,phase,error" and
          any(r.startswith("%s,%s,ok,%d,aes,running," % (sock, sock, job_id)) for r in rows) and
          any(r.startswith("%s,%s,error,,,,,,," % (dead, dead)) and "cannot connect" in r
              for r in rows), out + err)

    rc, out, err, _ = cli("jobs", "--format", "prom", sock)
    check("jobs: --format prom is a usage error", rc == 2 and out == "", err)

    rc, out, err, _ = cli("cancel", sock)
    check("cancel: stops the running job and says which",
          rc == 0 and ("job %d (aes) cancelled at" % job_id) in out, out + err)
    jobs = jobs_of(sock)
    check("cancel: the job is cancelled in the agent, nothing runs",
          any(j["job"] == job_id and j["state"] == "cancelled" for j in jobs) and
          not any(j["state"] == "running" for j in jobs), jobs)

    rc, out, err, _ = cli("cancel", "--format", "json", sock)
    g = guests(out)
    check("cancel with no job running: an error of that guest, rc 3",
          rc == 3 and g and g[0]["status"] == "error" and
          g[0]["error"] == "no benchmark job is running", out + err)

    rc, out, err, _ = cli("cancel", "--job", "999", "--format", "json", sock)
    g = guests(out)
    check("cancel --job 999: 'No such job: 999', rc 3",
          rc == 3 and g and "No such job: 999" in g[0]["error"], out + err)

    rc, out, err, _ = cli("cancel", "--job", str(job_id), "--format", "json", sock)
    g = guests(out)
    check("cancel --job of a finished job: 'has already finished', rc 3",
          rc == 3 and g and ("Job %d has already finished" % job_id) in g[0]["error"],
          out + err)

    # --job N cancels that job, and csv carries its final state
    jobs = start_job_and_kill_cli(sock)
    running = [j for j in jobs if j["state"] == "running"]
    job_id = running[0]["job"] if running else -1
    rc, out, err, _ = cli("cancel", "--job", str(job_id), "--format", "csv", sock)
    rows = out.splitlines()
    check("cancel --job N --format csv: that job, cancelled",
          rc == 0 and len(rows) == 2 and
          rows[1].startswith("%s,%s,ok,%d,aes,cancelled," % (sock, sock, job_id)), out + err)

    for bad in ["0", "-1", "x", "1.5", "", "99999999999999999999"]:
        # a dead target: rc 2 proves nothing was contacted
        rc, out, err, _ = cli("cancel", "--job", bad, dead)
        check("cancel --job '%s': usage error rc 2 before any guest" % bad,
              rc == 2 and "--job" in err and out == "", "rc %d %s %s" % (rc, out, err))


class DelayingRelay:
    """A unix socket in front of a real qemu-ga that holds back guest-exec's {"pid"}
    answers: qemu-ga has started the agent but the CLI does not know its pid yet."""

    def __init__(self, path, upstream, delay):
        self.path, self.upstream, self.delay = path, upstream, delay
        self.srv = socket.socket(socket.AF_UNIX)
        self.srv.bind(path)
        self.srv.listen(1)
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                client, _ = self.srv.accept()
            except OSError:
                return
            up = socket.socket(socket.AF_UNIX)
            up.connect(self.upstream)
            threading.Thread(target=self.pump, args=(client, up, False), daemon=True).start()
            self.pump(up, client, True)
            client.close()
            up.close()

    def pump(self, src, dst, delaying):
        buf = b""
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                try:
                    dst.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return
            if not delaying:
                try:
                    dst.sendall(data)
                except OSError:
                    return
                continue
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if b'"pid"' in line:
                    time.sleep(self.delay)
                try:
                    dst.sendall(line + b"\n")
                except OSError:
                    return


def oneshot_pids(marker):
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"--oneshot" in argv and any(marker.encode() in a for a in argv):
            pids.append(int(name))
    return pids


def wait_started(marker, seconds):
    """True once a one-shot agent with the marker was seen. Seen once is enough: the
    agent execs its session program, and a process in the middle of execve() shows an
    empty cmdline for a moment."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if oneshot_pids(marker):
            return True
        time.sleep(0.005)
    return False


def wait_gone(marker, seconds):
    """True once no one-shot agent with the marker is seen twice in a row, 50 ms apart
    (one empty scan may be an execve() in progress)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not oneshot_pids(marker):
            time.sleep(0.05)
            if not oneshot_pids(marker):
                return True
        time.sleep(0.02)
    return False


def test_qga(tmp):
    qga = os.environ.get("GB_QEMU_GA")
    if not qga or os.geteuid() != 0:
        for name in ["qga: --deadline cancels the one-shot job",
                     "qga: Ctrl-C before guest-exec answered cancels the one-shot job",
                     "qga: SIGTERM before the agent was ready is reported as cancelled"]:
            skip(name, "needs GB_QEMU_GA and root (guest-exec)")
        return []
    state = os.path.join(tmp, "qga-state")
    os.mkdir(state)
    qsock = os.path.join(tmp, "qga.sock")
    proc = subprocess.Popen([qga, "-m", "unix-listen", "-p", qsock, "-t", state, "-f",
                             os.path.join(tmp, "qga.pid")], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 10
    while not os.path.exists(qsock) and time.monotonic() < end:
        time.sleep(0.02)

    marker = "20.75"
    rc, out, err, elapsed = cli("--deadline", "1", "bench", "aes", "--seconds", marker,
                                "--sizes", "16", "--no-save", "--format", "json",
                                "--qga-agent", AGENT, "qga:" + qsock)
    g = guests(out)
    check("qga: --deadline cancels the one-shot job",
          rc == 3 and g and g[0]["status"] == "timeout" and "(cancelled" in g[0]["error"] and
          wait_gone(marker, 2), "rc %d %s %s; left: %s" % (rc, out, err, oneshot_pids(marker)))
    for pid in oneshot_pids(marker):
        os.kill(pid, signal.SIGKILL)

    relay = os.path.join(tmp, "relay.sock")
    DelayingRelay(relay, qsock, 0.6)
    marker = "20.5"
    p = subprocess.Popen([CLI, "bench", "aes", "--seconds", marker, "--sizes", "16",
                          "--no-save", "--format", "json", "--qga-agent", AGENT,
                          "qga:" + relay], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, XDG_DATA_HOME=XDG))
    started = wait_started(marker, 10)
    # qemu-ga runs the agent; its pid is still held back by the relay
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    g = guests(out)
    check("qga: Ctrl-C before guest-exec answered cancels the one-shot job",
          started and p.returncode == 130 and g and g[0]["error"].startswith("cancelled") and
          wait_gone(marker, 2),
          "started %s rc %s %s %s; left: %s" % (started, p.returncode, out, err,
                                                oneshot_pids(marker)))
    for pid in oneshot_pids(marker):
        os.kill(pid, signal.SIGKILL)

    # an agent that gets the SIGTERM before it is ready for it (a wrapper still sleeping,
    # whose sleep does not hold the output qemu-ga waits on)
    wrapper = os.path.join(tmp, "slow-agent")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nsleep 3 >/dev/null 2>&1\nexec %s \"$@\"\n" % AGENT)
    os.chmod(wrapper, 0o755)
    marker = "19.5"
    p = subprocess.Popen([CLI, "bench", "aes", "--seconds", marker, "--sizes", "16",
                          "--no-save", "--format", "json", "--qga-agent", wrapper,
                          "qga:" + qsock], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, XDG_DATA_HOME=XDG))
    wait_started(marker, 10)
    time.sleep(0.3)  # guest-exec has answered with the wrapper's pid
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    g = guests(out)
    check("qga: SIGTERM before the agent was ready is reported as cancelled",
          p.returncode == 130 and g and
          g[0]["error"] == "cancelled (before the job had started)" and wait_gone(marker, 2),
          "rc %s %s %s" % (p.returncode, out, err))
    return [proc]


def main():
    global XDG
    tmp = tempfile.mkdtemp(prefix="gb-jobs-")
    XDG = os.path.join(tmp, "xdg")
    procs, socks = start_agents(tmp, ["vm"])
    dead = os.path.join(tmp, "dead.sock")
    try:
        test_deadline(socks[0])
        test_jobs_and_cancel(socks[0], dead)
        procs += test_qga(tmp)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    return tap_report()


XDG = None

if __name__ == "__main__":
    sys.exit(main())
