#!/usr/bin/env python3
"""One client per guest port: a real agent and real CLI processes. While one
guestbench runs a benchmark, a second one reports the guest busy (with the
holder's pid, command and start time) at once instead of timing out;
--wait-busy waits its turn; a holder that died leaves nothing that blocks.
Prints TAP.
"""
import json
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import gbtest  # noqa: E402
from gbtest import check, lock_dir, lock_path, prom_valid, start_agents, stop, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]
EXIT_BUSY = 4


def cli(*args, timeout=60):
    start = time.monotonic()
    proc = subprocess.run([CLI] + list(args), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    return proc, time.monotonic() - start


def start_holder(sock, seconds=4):
    return gbtest.start_holder(CLI, sock, seconds)


def catches_sigint(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return int(line.split()[1], 16) & (1 << (signal.SIGINT - 1))
    except OSError:
        pass
    return False


def guest_doc(out, index=0):
    return json.loads(out)["guests"][index]


def main():
    tmp = tempfile.mkdtemp(prefix="gb-busy-")
    procs, socks = start_agents(tmp, ["a", "b"])
    sock, other = socks
    try:
        run_tests(tmp, sock, other)
    finally:
        stop(procs)
        subprocess.run(["rm", "-rf", tmp])
    return tap_report()


def run_tests(tmp, sock, other):
    # ---- usage errors: rc 2 before any guest is contacted (the target does not exist)
    missing = os.path.join(tmp, "missing.sock")
    for bad in ["-1", "abc", "", "nan", "inf", "1e9", " 1", "1s", "604801"]:
        proc, _ = cli("--wait-busy", bad, "ping", missing)
        check("--wait-busy %r: rc 2 with a message naming the option" % bad,
              proc.returncode == 2 and "--wait-busy" in proc.stderr and proc.stdout == "",
              "rc %d\n%s%s" % (proc.returncode, proc.stdout, proc.stderr))
    proc, _ = cli("ping", "--wait-busy=-1", missing)
    check("--wait-busy after the command is checked too (rc 2)", proc.returncode == 2,
          proc.stderr)
    proc, _ = cli("--wait-busy", "0", "ping", sock)
    check("--wait-busy 0 is accepted (no wait) and ping is ok", proc.returncode == 0,
          proc.stdout + proc.stderr)

    # ---- the lock file while a benchmark runs (long enough for every check below)
    holder = start_holder(sock, seconds=8)
    path = lock_path(sock)
    st_dir = os.stat(lock_dir())
    st_file = os.lstat(path)
    check("lock directory is the user's alone (0700)",
          stat.S_IMODE(st_dir.st_mode) == 0o700 and st_dir.st_uid == os.geteuid(),
          oct(st_dir.st_mode))
    check("lock file is a regular file, mode 0600",
          stat.S_ISREG(st_file.st_mode) and stat.S_IMODE(st_file.st_mode) == 0o600,
          oct(st_file.st_mode))
    with open(path) as f:
        content = f.read()
    check("lock file records pid, start time and command line",
          "pid=%d\n" % holder.pid in content and re.search(r"^since=\d+$", content, re.M)
          and "command=%s bench aes" % CLI in content, content)
    check("no lock file next to the socket",
          not [n for n in os.listdir(tmp) if "lock" in n], os.listdir(tmp))

    # ---- a second client: busy at once, with who and since when
    proc, took = cli("--timeout", "30", "ping", sock)
    check("ping of a busy guest: rc 4 (busy), not 3", proc.returncode == EXIT_BUSY,
          "rc %d\n%s%s" % (proc.returncode, proc.stdout, proc.stderr))
    # "promptly" is: not after --timeout (30 s); a loaded machine takes seconds, not 30
    check("ping of a busy guest answers promptly (%.2f s), not after --timeout 30" % took,
          took < 15)
    check("the table says busy, the holder's pid and command and since when",
          re.search(r"\bbusy\b", proc.stdout) and "pid %d" % holder.pid in proc.stdout
          and "bench aes" in proc.stdout and re.search(r"since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d",
                                                       proc.stdout), proc.stdout)

    proc, _ = cli("--format", "json", "ping", sock)
    g = guest_doc(proc.stdout)
    check("json: status busy, error names the holder",
          proc.returncode == EXIT_BUSY and g["status"] == "busy"
          and "pid %d" % holder.pid in g["error"] and g["result"] is None, proc.stdout)

    proc, _ = cli("--format", "csv", "ping", sock)
    check("csv: the guest's row says busy", proc.returncode == EXIT_BUSY
          and re.search(r"^[^\n]*,busy,[^\n]*pid %d" % holder.pid, proc.stdout, re.M),
          proc.stdout)

    proc, _ = cli("--format", "prom", "ping", sock, other)
    text = proc.stdout
    check("prom: valid exposition format", prom_valid(text), text)
    check("prom: guestbench_busy 1 for the busy guest, 0 for the free one",
          re.search(r'^guestbench_busy\{guest="%s",[^}]*\} 1$' % re.escape(sock), text, re.M)
          and re.search(r'^guestbench_busy\{guest="%s",[^}]*\} 0$' % re.escape(other), text,
                        re.M), text)
    check("prom: no guestbench_up 0 for the busy guest (it is not down)",
          not re.search(r'^guestbench_up\{guest="%s",' % re.escape(sock), text, re.M)
          and re.search(r'^guestbench_up\{guest="%s",[^}]*\} 1$' % re.escape(other), text,
                        re.M), text)
    check("busy and ok guests: rc 4", proc.returncode == EXIT_BUSY, proc.returncode)

    proc, _ = cli("ping", sock, missing)
    check("a busy guest and a dead one: rc 3 (the failure wins)", proc.returncode == 3,
          proc.stdout)

    # the same socket by another name is the same port
    link = os.path.join(tmp, "link.sock")
    os.symlink(sock, link)
    proc, _ = cli("ping", link)
    check("a symlink to the socket finds it busy too", proc.returncode == EXIT_BUSY,
          proc.stdout)

    # --wait-busy shorter than the holder: busy after about that long
    proc, took = cli("--wait-busy", "1", "ping", sock)
    # busy (the holder still ran) after at least the second it waited
    check("--wait-busy 1 while the holder runs: busy after ~1 s (%.2f s)" % took,
          proc.returncode == EXIT_BUSY and 0.9 <= took and "waiting 1 s" in proc.stdout,
          proc.stdout)

    # waiting for one guest does not hold up the others (the main loop keeps going);
    # GLib writes the debug lines of -v to stdout
    proc, _ = cli("-v", "--wait-busy", "1", "ping", sock, other)
    lines = (proc.stdout + proc.stderr).splitlines()
    free_done = [i for i, l in enumerate(lines) if other + ": ok" in l]
    busy_done = [i for i, l in enumerate(lines) if sock + ": busy" in l]
    check("while one guest waits, another is served first",
          free_done and busy_done and free_done[0] < busy_done[0], proc.stdout + proc.stderr)

    # --deadline ends a wait as busy (it was never slow, only taken)
    proc, took = cli("--deadline", "1", "--wait-busy", "30", "ping", sock)
    check("--deadline 1 while waiting: busy at the deadline (%.2f s), rc 4" % took,
          proc.returncode == EXIT_BUSY and took < 15 and "overall deadline" in proc.stdout
          and "pid %d" % holder.pid in proc.stdout, proc.stdout)

    # --wait-busy longer than the holder: it waits, then runs
    was_running = holder.poll() is None
    proc, took = cli("--wait-busy", "10", "ping", sock)
    holder_out, holder_err = holder.communicate(timeout=30)
    check("the holder's benchmark finished ok", holder.returncode == 0,
          holder_out + holder_err)
    check("--wait-busy 10 waits for the holder and then pings ok (%.2f s)" % took,
          was_running and proc.returncode == 0 and re.search(r"\bok\b", proc.stdout),
          proc.stdout + proc.stderr)

    # released on exit: nothing left behind, the next run is ok
    check("the lock file is gone once the holder is done", not os.path.exists(path),
          os.listdir(lock_dir()))
    proc, took = cli("ping", sock)
    check("after the holder: ping is ok at once", proc.returncode == 0 and took < 5,
          proc.stdout + proc.stderr)

    # ---- a holder that died (SIGKILL) leaves its file, which blocks nobody
    holder = start_holder(sock)
    holder.kill()
    holder.wait()
    check("a killed holder's lock file is still there", os.path.exists(path))
    proc, took = cli("ping", sock)
    check("...and does not block: ping ok (%.2f s)" % took, proc.returncode == 0,
          proc.stdout + proc.stderr)

    # ---- Ctrl-C while waiting ends the wait at once
    holder = start_holder(other)
    waiter = subprocess.Popen([CLI, "--wait-busy", "30", "ping", other], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    # the signal goes once the CLI catches it (its main loop runs), not before
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not catches_sigint(waiter.pid):
        time.sleep(0.02)
    time.sleep(0.3)
    start = time.monotonic()
    waiter.send_signal(signal.SIGINT)
    out, _ = waiter.communicate(timeout=10)
    took = time.monotonic() - start
    # "at once": long before the 30 s it would have waited
    check("SIGINT while waiting for a busy guest: rc 130 at once (%.2f s)" % took,
          waiter.returncode == 130 and took < 10, "rc %d\n%s" % (waiter.returncode, out))
    holder.send_signal(signal.SIGINT)
    holder.communicate(timeout=30)
    check("a holder interrupted by SIGINT releases its lock",
          not os.path.exists(lock_path(other)))

    # ---- a lock directory planted by another user is refused, not used
    if os.geteuid() != 0:
        check("planted lock directory # SKIP needs root to run the CLI as nobody", True)
        return
    planted = "/tmp/guestbench-65534"
    if os.path.lexists(planted):
        check("planted lock directory # SKIP %s exists already" % planted, True)
        return
    os.mkdir(planted, 0o700)  # root's: not nobody's
    try:
        env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
        proc = subprocess.run(["runuser", "-u", "nobody", "--", CLI, "ping", missing],
                              capture_output=True, text=True, env=env, timeout=30,
                              stdin=subprocess.DEVNULL)
        check("a user whose lock directory belongs to someone else: a clear error, rc 3",
              proc.returncode == 3 and "refusing lock directory %s: owned by uid 0, not 65534"
              % planted in proc.stdout, proc.stdout + proc.stderr)
    finally:
        os.rmdir(planted)


if __name__ == "__main__":
    sys.exit(main())
