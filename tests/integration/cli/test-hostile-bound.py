#!/usr/bin/env python3
"""A bench job is bounded by what it asked for, whatever the guest answers.

A hostile agent (tests/hostile-agent.py) accepts gb-bench-start and then answers
every gb-bench-status with state "running" and progress 0.1, forever; each answer
re-arms --timeout, so only the job's bound can end it:

- `--timeout 2 bench aes --seconds 0.5` (6 default block sizes: 3 s of work, bound
  2 x 3 + 30 = 36 s) ends once the bound has passed (plus the 2 s cancel grace),
  the guest as timeout ("the job ran past its bound of 36 s"), exit status 3, and
  the agent received gb-bench-cancel; --verbose prints the bound.
- --deadline still ends it first when shorter, cancelling the job too.
- a real agent's bench is unchanged, and --verbose prints its bound.

Usage: test-hostile-bound.py HOSTILE_AGENT (prints TAP)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, start_agents, start_hostile, stop, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]
# far above the bound of 36 s: without the bound the run would never end
NEVER = 90


def start_logged(hostile_agent, tmp, name, scenario, procs):
    """A hostile peer that logs what it is asked: (socket, log)."""
    log = os.path.join(tmp, name + ".log")
    return start_hostile(hostile_agent, tmp, name, scenario, procs, log=log), log


def start_cli(args):
    return subprocess.Popen([CLI] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True), time.monotonic()


def finish_cli(proc_start):
    proc, start = proc_start
    try:
        out, err = proc.communicate(timeout=NEVER)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return None, out, err, time.monotonic() - start
    return proc.returncode, out, err, time.monotonic() - start


def guest(out):
    try:
        return json.loads(out)["guests"][0]
    except (ValueError, KeyError, IndexError):
        return {}


def commands(log):
    try:
        with open(log, encoding="utf-8") as f:
            return f.read().split()
    except OSError:
        return []


def main(hostile_agent):
    tmp = tempfile.mkdtemp(prefix="gb-hostile-bound-")
    procs = []
    try:
        running = {"gb-bench-start": {"job": 1},
                   "gb-bench-status": {"job": 1, "test": "aes", "state": "running",
                                       "progress": 0.1, "phase": "aes-128-gcm 16"},
                   "gb-bench-cancel": {}}
        bound_sock, bound_log = start_logged(hostile_agent, tmp, "bound", running, procs)
        deadline_sock, deadline_log = start_logged(hostile_agent, tmp, "deadline", running,
                                                    procs)
        agents, socks = start_agents(tmp, ["honest"])
        procs += agents
        os.environ["XDG_DATA_HOME"] = os.path.join(tmp, "data")

        # the three runs at once: the long one sets the pace
        bounded = start_cli(["--verbose", "--timeout", "2", "bench", "aes", "--seconds", "0.5",
                             "--format", "json", "--no-save", bound_sock])
        deadline = start_cli(["--timeout", "2", "--deadline", "3", "bench", "aes",
                              "--seconds", "0.5", "--format", "json", "--no-save",
                              deadline_sock])
        honest = start_cli(["--verbose", "bench", "aes", "--sizes", "16,64", "--seconds",
                            "0.2", "--format", "json", "--no-save", socks[0]])

        rc, out, err, elapsed = finish_cli(deadline)
        g = guest(out)
        check("--deadline 3 ends a job that keeps saying running: rc 3, timeout, "
              "overall deadline",
              rc == 3 and g.get("status") == "timeout"
              and "overall deadline of 3 s" in (g.get("error") or ""), (rc, err, out[:500]))
        # near the deadline, not at the job's own bound (36 s): margin for a loaded machine
        check("--deadline 3: over within the deadline and the cancel grace (%.1f s)" % elapsed,
              elapsed < 3 + 2 + 15, elapsed)
        check("--deadline 3: the job was cancelled in the guest",
              "gb-bench-cancel" in commands(deadline_log), commands(deadline_log))

        rc, out, err, elapsed = finish_cli(honest)
        g = guest(out)
        check("a real agent's bench is unchanged: rc 0, status ok",
              rc == 0 and g.get("status") == "ok" and g.get("result"), (rc, err))
        check("--verbose prints the bound of the real agent's job: 2 x 0.4 s + 30 s = 31 s",
              "bench aes bounded to 31 s (2 x 0.4 s of work asked for + 30 s)" in err, err)

        rc, out, err, elapsed = finish_cli(bounded)
        g = guest(out)
        check("a guest that keeps saying running ends: rc 3, status timeout",
              rc == 3 and g.get("status") == "timeout", (rc, elapsed, err[-2000:], out[:500]))
        check("the error names the bound: 2 x 3 s of work + 30 s = 36 s",
              (g.get("error") or "").startswith(
                  "the job ran past its bound of 36 s (2 x 3 s of work asked for + 30 s)"),
              g.get("error"))
        check("over once the bound and the cancel grace have passed (%.1f s)" % elapsed,
              36 <= elapsed < 36 + 2 + 15, elapsed)
        check("--verbose prints the bound",
              "bench aes bounded to 36 s (2 x 3 s of work asked for + 30 s)" in err, err[-2000:])
        got = commands(bound_log)
        check("the job was cancelled in the guest (gb-bench-cancel received)",
              "gb-bench-cancel" in got, got[-10:])
        check("it was polled all along (gb-bench-status received %d times)"
              % got.count("gb-bench-status"), got.count("gb-bench-status") > 50,
              got.count("gb-bench-status"))
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1])
    sys.exit(tap_report())
