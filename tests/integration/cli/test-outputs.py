#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What the real CLI prints against a real agent and a guest that is not there:
-q keeps the results on stdout and says nothing on stderr, --failed-only keeps
only the guests that are not ok (table, csv, json), bench's csv and prom carry
every guest with its status, and a --qmp that leads nowhere is an error of the
guest while a command that does not read the host view refuses --qmp. Usage
errors are checked against a listener that must never see a connection.
Prints TAP."""
import csv
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, prom_valid, skip, start_agents, stop, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]
PROMTOOL = shutil.which("promtool")
AES = ["bench", "aes", "--seconds", "0.1", "--sizes", "16"]


def run(args, env=None, timeout=60):
    return subprocess.run([CLI] + args, capture_output=True, text=True, timeout=timeout,
                          env=env, stdin=subprocess.DEVNULL)


def shape(text):
    """The text with its numbers blanked: steal time and such differ from run to run."""
    return re.sub(r"[0-9]+", "N", text)


def csv_rows(text):
    return list(csv.DictReader(io.StringIO(text)))


class Listener:
    """A unix socket that counts who connects: a usage error must reach nobody."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(path)
        self.sock.listen(8)
        self.sock.setblocking(False)

    def connections(self):
        n = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return n
            conn.close()
            n += 1

    def close(self):
        self.sock.close()


def quiet_checks(good, env):
    """-q: the same results on stdout as without it, and an empty stderr."""
    for name, args in (("info", ["info"]), ("facts", ["facts"]), ("audit", ["audit"])):
        loud = run(args + [good], env)
        r = run(["-q"] + args + [good], env)
        check("-q %s: exit 0, results on stdout" % name,
              r.returncode == 0 and r.stdout != "" and shape(r.stdout) == shape(loud.stdout),
              "rc %d\n%s---\n%s" % (r.returncode, r.stdout, loud.stdout))
        check("-q %s: nothing on stderr" % name, r.stderr == "", r.stderr)
    loud = run(AES + [good], env)
    check("bench without -q says where it saved the run", "saved: " in loud.stderr,
          loud.stderr)
    r = run(["-q"] + AES + [good], env)
    check("-q bench aes: the openssl-style table on stdout",
          r.returncode == 0 and "aes-128-gcm" in r.stdout and "type " in r.stdout,
          "rc %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    check("-q bench aes: nothing on stderr", r.stderr == "", r.stderr)
    r = run(["--quiet", "--format", "json", "facts", good], env)
    doc = json.loads(r.stdout) if r.returncode == 0 else {}
    check("--quiet --format json facts: the whole document",
          doc.get("guests", [{}])[0].get("status") == "ok" and r.stderr == "", r.stderr)


def failed_only_checks(good, dead, env):
    """--failed-only with one good and one unreachable guest: only the unreachable one."""
    r = run(["--color", "never", "--failed-only", "facts", good, dead], env)
    check("--failed-only facts (text): the failed guest, exit 3",
          r.returncode == 3 and dead in r.stdout and "error" in r.stdout, r.stdout + r.stderr)
    check("--failed-only facts (text): not the good guest", good not in r.stdout, r.stdout)
    r = run(["--failed-only", "--format", "csv", "facts", good, dead], env)
    rows = csv_rows(r.stdout)
    check("--failed-only facts (csv): only the failed guest's row",
          r.returncode == 3 and rows and {row["guest"] for row in rows} == {dead},
          r.stdout + r.stderr)
    r = run(["--failed-only", "--format", "json", "facts", good, dead], env)
    guests = json.loads(r.stdout)["guests"] if r.stdout else []
    check("--failed-only facts (json): only the failed guest",
          r.returncode == 3 and [g["target"] for g in guests] == [dead] and
          guests[0]["status"] == "error", r.stdout + r.stderr)
    r = run(["--color", "never", "--failed-only", "info", good, dead], env)
    check("--failed-only info (table): only the failed guest",
          r.returncode == 3 and dead in r.stdout and good not in r.stdout, r.stdout)
    r = run(["--color", "never", "--failed-only"] + AES + ["--no-save", good, dead], env)
    check("--failed-only bench (text): the error, not the good guest's numbers",
          r.returncode == 3 and dead in r.stdout and good not in r.stdout and
          "aes-128-gcm" not in r.stdout, r.stdout)
    r = run(["--failed-only", "--format", "csv"] + AES + ["--no-save", good, dead], env)
    rows = csv_rows(r.stdout)
    check("--failed-only bench (csv): only the failed guest's row",
          r.returncode == 3 and [row["guest"] for row in rows] == [dead], r.stdout)
    # every guest ok: nothing to print, and that is a success
    for fmt, want in (("table", ""), ("json", None)):
        r = run(["--failed-only", "--format", fmt, "ping", good], env)
        ok = r.returncode == 0 and (r.stdout == want if want is not None
                                    else json.loads(r.stdout)["guests"] == [])
        check("--failed-only ping, all ok (%s): nothing listed, exit 0" % fmt, ok,
              "rc %d: %r" % (r.returncode, r.stdout))
    # merge of a saved document: the same filter
    doc = os.path.join(env["HOME"], "hv1.json")
    run(["--format", "json", "-o", doc, "ping", good, dead], env)
    r = run(["--failed-only", "--format", "json", "merge", doc], env)
    guests = json.loads(r.stdout)["guests"] if r.returncode == 0 else []
    check("merge --failed-only (json): only the failed guest",
          [g["target"] for g in guests] == [dead], r.stdout + r.stderr)
    r = run(["--failed-only", "--format", "prom", "merge", doc], env)
    check("merge --failed-only --format prom: usage error", r.returncode == 2, r.stderr)
    # without it, both guests as before
    r = run(["--format", "json", "facts", good, dead], env)
    check("without --failed-only: both guests",
          len(json.loads(r.stdout)["guests"]) == 2, r.stdout[:200])


def usage_checks(tmp, env):
    """Refused before any guest is contacted, exit 2."""
    listener = Listener(os.path.join(tmp, "listener.sock"))
    try:
        cases = [
            ("--failed-only with --format prom", ["--failed-only", "--format", "prom", "ping"],
             "--failed-only applies to --format table, csv and json"),
            ("--failed-only with a command that contacts no guest",
             ["--failed-only", "results"], "--failed-only applies to commands that contact"),
            ("facts --qmp", ["--qmp", os.path.join(tmp, "qmp.sock"), "facts"],
             "--qmp does not apply to 'facts'"),
            ("facts --qmp after the command", ["facts", "--qmp", os.path.join(tmp, "qmp.sock")],
             "--qmp does not apply to 'facts'"),
            ("bench --qmp", ["--qmp", os.path.join(tmp, "qmp.sock")] + AES,
             "--qmp does not apply to 'bench'"),
        ]
        for name, args, message in cases:
            target = [] if args[-1] == "results" else [listener.path]
            r = run(args + target, env)
            check("%s: exit 2" % name, r.returncode == 2,
                  "rc %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
            check("%s: says why" % name, message in r.stderr, r.stderr)
            check("%s: no guest contacted" % name, listener.connections() == 0)
    finally:
        listener.close()


def bench_machine_checks(good, dead, env):
    """bench csv and prom with an unreachable guest: its row, its status."""
    r = run(["--format", "csv"] + AES + ["--no-save", good, dead], env)
    check("bench csv with a dead guest: exit 3", r.returncode == 3, r.stderr)
    header = r.stdout.splitlines()[0] if r.stdout else ""
    check("bench csv header has status and error",
          header == "guest,metric,value,unit,labels,runs,mean,stddev,status,error", header)
    rows = csv_rows(r.stdout)
    mine = [row for row in rows if row["guest"] == good]
    gone = [row for row in rows if row["guest"] == dead]
    check("bench csv: the good guest's samples are status ok",
          mine and all(row.get("status") == "ok" and row.get("error") == "" and row["metric"]
                       for row in mine), r.stdout)
    check("bench csv: the dead guest has its row, status error and why",
          len(gone) == 1 and gone[0].get("status") == "error" and "cannot connect" in
          (gone[0].get("error") or "") and gone[0]["metric"] == "" and gone[0]["value"] == "", r.stdout)

    r = run(["--format", "prom"] + AES + ["--no-save", good, dead], env)
    check("bench prom with a dead guest: exit 3", r.returncode == 3, r.stderr)
    lines = r.stdout.splitlines()
    check("bench prom: guestbench_up 0 for the dead guest",
          'guestbench_up{guest="%s",target="%s"} 0' % (dead, dead) in lines, r.stdout)
    check("bench prom: guestbench_up 1 for the good guest",
          'guestbench_up{guest="%s",target="%s"} 1' % (good, good) in lines, r.stdout)
    check("bench prom: the good guest's samples",
          any(line.startswith('guestbench_bench_value{guest="%s"' % good) for line in lines),
          r.stdout)
    check("bench prom: well-formed exposition", prom_valid(r.stdout), r.stdout)
    if PROMTOOL is None:
        skip("promtool check metrics accepts bench prom", "promtool not installed")
    else:
        t = subprocess.run([PROMTOOL, "check", "metrics"], input=r.stdout,
                           capture_output=True, text=True, timeout=30)
        check("promtool check metrics accepts bench prom", t.returncode == 0,
              t.stdout + t.stderr)


def qmp_checks(tmp, good, env):
    """A --qmp that leads nowhere: the guest's error (exit 3), shown even with -q."""
    nowhere = os.path.join(tmp, "nonexistent", "qmp.sock")
    r = run(["--format", "json", "--qmp", nowhere, "audit", good], env)
    guests = json.loads(r.stdout)["guests"] if r.stdout else [{}]
    check("audit --qmp nowhere: exit 3", r.returncode == 3, r.stdout + r.stderr)
    check("audit --qmp nowhere: the guest is an error that names the path",
          guests[0].get("status") == "error" and nowhere in guests[0].get("error", ""),
          r.stdout)
    r = run(["-q", "--color", "never", "--qmp", nowhere, "audit", good], env)
    check("audit -q --qmp nowhere: the error is on stdout all the same",
          r.returncode == 3 and "error" in r.stdout and nowhere in r.stdout, r.stdout)
    r = run(["--format", "csv", "--qmp", nowhere, "audit", good], env)
    rows = csv_rows(r.stdout)
    check("audit csv --qmp nowhere: the guest's row says error",
          r.returncode == 3 and any(row.get("guest") == good and "error" in row.values()
                                    for row in rows), r.stdout)


def main():
    tmp = tempfile.mkdtemp(prefix="gb-outputs-")
    env = dict(os.environ, HOME=os.path.join(tmp, "home"),
               XDG_DATA_HOME=os.path.join(tmp, "home", "data"))
    os.makedirs(env["HOME"])
    procs, socks = start_agents(tmp, ["vm"])
    good = socks[0]
    dead = os.path.join(tmp, "nobody.sock")
    try:
        quiet_checks(good, env)
        failed_only_checks(good, dead, env)
        usage_checks(tmp, env)
        bench_machine_checks(good, dead, env)
        qmp_checks(tmp, good, env)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
