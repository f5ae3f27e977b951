#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""compare through the real CLI: saved runs the real agent made (tests/data/results/saved,
looked up by id in $XDG_DATA_HOME as users do), and runs made here by a real agent. Runs of
different tests are refused, the summary uses headline metrics only, a side with runs = 1 is
warned about, the text fits 100 columns, and --label names the columns. Prints TAP."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, start_agents, stop, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]
SAVED = os.path.join(os.environ["GB_TEST_DATA"], "results", "saved")

AES_1 = ("2026-12-03T23-04-46Z-bench-aes", "2026-12-03T23-04-48Z-bench-aes")
AES_3 = ("2026-12-03T23-04-53Z-bench-aes", "2026-12-03T23-04-58Z-bench-aes")
MEM = ("2026-12-03T23-05-05Z-bench-mem", "2026-12-03T23-05-10Z-bench-mem")
NET = ("2026-12-03T23-05-12Z-bench-net", "2026-12-03T23-05-14Z-bench-net")
DISK = "2026-12-03T23-05-01Z-bench-disk"


def run(args, home, cwd=None, timeout=60):
    env = dict(os.environ, XDG_DATA_HOME=home)
    return subprocess.run([CLI] + args, capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=cwd)


def width(text):
    return max((len(line) for line in text.splitlines()), default=0)


def saved_runs(home):
    return sorted(os.path.basename(p)[:-len(".json")]
                  for p in glob.glob(os.path.join(home, "guestbench", "results", "*.json")))


def check_fixtures(home):
    # aes against disk: a usage error naming both tests, nothing on stdout
    r = run(["compare", AES_1[0], DISK], home)
    check("aes vs disk: rc 2", r.returncode == 2, r.stdout + r.stderr)
    check("aes vs disk: says why, naming both tests",
          "cannot compare different benchmarks" in r.stderr and "ran aes" in r.stderr and
          "ran disk" in r.stderr and r.stdout == "", r.stderr)
    r = run(["compare", "--format", "json", DISK, AES_1[1]], home)
    check("disk vs aes (json): rc 2 too", r.returncode == 2 and r.stdout == "", r.stderr)

    # two net runs that differ in streams: the throughput lines up and is the whole summary
    r = run(["compare", "--format", "json"] + list(NET), home)
    doc = json.loads(r.stdout) if r.returncode == 0 else {}
    rows = doc.get("rows", [])
    headline = [row for row in rows if row.get("headline")]
    check("net vs net: throughput rows have values on both sides",
          len(headline) == 1 and headline[0]["metric"] == "tcp-throughput" and
          None not in headline[0]["values"], r.stdout[:2000] + r.stderr)
    check("net vs net: the summary counts the throughput only",
          doc.get("pairs", [{}])[0].get("metrics") == 1 and
          abs(doc["pairs"][0]["geomean_ratio"] - headline[0]["ratios"][1]) < 1e-12,
          json.dumps(doc.get("pairs")))
    check("net vs net: CPU % and retransmits are shown, not counted",
          {row["metric"] for row in rows if not row.get("headline", True)} ==
          {"guest-cpu-busy", "tcp-retransmits"}, json.dumps(rows)[:2000])
    r = run(["compare"] + list(NET), home)
    check("net vs net (table): summary over 1 headline metric",
          r.returncode == 0 and
          "B vs A: geometric mean ratio" in r.stdout and
          "over 1 headline metric (tcp-throughput)" in r.stdout, r.stdout + r.stderr)

    # runs = 1: warned in the table, JSON and (on stderr) CSV; runs = 3: not
    r = run(["compare"] + list(AES_1), home)
    check("runs = 1: warning in the table",
          r.returncode == 0 and "warning: A and B are single runs (runs = 1)" in r.stdout and
          "no noise estimate" in r.stdout, r.stdout)
    r = run(["compare", "--format", "json"] + list(AES_1), home)
    warnings = json.loads(r.stdout).get("warnings", []) if r.returncode == 0 else []
    check("runs = 1: warning in the JSON",
          len(warnings) == 1 and "single runs (runs = 1)" in warnings[0], r.stdout[:500])
    r = run(["compare", "--format", "csv"] + list(AES_1), home)
    check("runs = 1: warning on stderr with CSV, the CSV untouched",
          r.returncode == 0 and "warning:" in r.stderr and "single runs" in r.stderr and
          "warning" not in r.stdout and r.stdout.startswith("test,metric,"), r.stderr)
    r = run(["compare"] + list(AES_3), home)
    check("runs = 3: no warning", r.returncode == 0 and "warning" not in r.stdout and
          "3 runs" in r.stdout, r.stdout)
    r = run(["compare", AES_3[0], AES_1[0]], home)
    check("runs = 3 vs runs = 1: the single side is named",
          "warning: B is a single run (runs = 1)" in r.stdout, r.stdout)

    # every same-test pair of real runs, by id (as users type them) and by file name
    for pair in (AES_1, AES_3, MEM, NET):
        r = run(["compare"] + list(pair), home)
        check("%s: the table fits 100 columns (%d)" % (pair[0][21:], width(r.stdout)),
              r.returncode == 0 and width(r.stdout) <= 100, r.stdout)
        r = run(["compare", pair[0] + ".json", pair[1] + ".json"], home, cwd=SAVED)
        check("%s by file name: fits 100 columns (%d)" % (pair[0][21:], width(r.stdout)),
              r.returncode == 0 and width(r.stdout) <= 100, r.stdout)
    r = run(["compare", MEM[0], MEM[1]], home)
    check("mem: rows without a value on either side are not shown",
          "hugetlb" not in r.stdout and "Not shown: 5 rows" in r.stdout, r.stdout)

    # --label: a comma list or repeated, everywhere a column is named
    r = run(["compare", "--label", "before,after"] + list(AES_1), home)
    check("--label A,B: headers and summary use them",
          r.returncode == 0 and "after/before" in r.stdout and
          "after vs before: geometric mean ratio" in r.stdout and
          "before: guest " in r.stdout and width(r.stdout) <= 100, r.stdout)
    r = run(["compare", "--label", "old", "--label", "new", "--format", "json"] + list(NET),
            home)
    labels = [c["label"] for c in json.loads(r.stdout)["columns"]] if r.returncode == 0 else []
    check("--label twice: the columns of the JSON", labels == ["old", "new"], r.stderr)
    r = run(["report", "--label", "old,new"] + list(NET), home)
    check("report takes --label too", r.returncode == 0 and ">new<" in r.stdout, r.stderr)
    bad = [
        (["--label", ""], "an empty label"),
        (["--label", ",b"], "an empty label"),
        (["--label", "a, "], "an empty label"),
        (["--label", "a,b,c"], "gives 3 labels for 2 columns"),
        (["--label", "a"], "gives 1 label for 2 columns"),
        (["--label", "a", "--label", "b", "--label", "c"], "gives 3 labels for 2 columns"),
        (["--label", "same,same"], "given twice"),
        (["--label", "a-label-too-long-x,b"], "at most 16"),
        (["--label", "a\x1b[31m,b"], "control"),
        (["--label"], "--label"),
    ]
    for args, expect in bad:
        r = run(["compare"] + args + list(NET), home)
        check("bad %r: rc 2, says %r" % (args, expect),
              r.returncode == 2 and expect in r.stderr and r.stdout == "" and
              "\x1b" not in r.stderr, r.stderr)


def check_live(home):
    """Runs made here by a real agent, compared by the ids the CLI saved them under."""
    tmp = tempfile.mkdtemp(prefix="gb-compare-live-")
    procs, socks = start_agents(tmp, ["vm"])
    try:
        for args in (["aes", "--seconds", "0.1", "--sizes", "16,1k"],
                     ["aes", "--seconds", "0.1", "--sizes", "16,1k"],
                     ["mem", "--size", "8M", "--pages", "4k"]):
            r = run(["-q", "bench"] + args + socks, home, timeout=120)
            check("live: bench %s" % args[0], r.returncode == 0, r.stderr)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    fixtures = {os.path.basename(p)[:-len(".json")] for p in glob.glob(SAVED + "/*.json")}
    ids = [i for i in saved_runs(home) if i not in fixtures]
    # two runs in one second: the second id ends in -2
    aes = [i for i in ids if "-bench-aes" in i]
    mem = [i for i in ids if "-bench-mem" in i]
    if len(aes) != 2 or len(mem) != 1:
        check("live: three runs saved", False, repr(ids))
        return
    r = run(["compare"] + aes, home)
    check("live: aes vs aes, runs = 1 warned, fits 100 columns",
          r.returncode == 0 and "single runs (runs = 1)" in r.stdout and
          "over 2 headline metrics (aes-128-gcm)" in r.stdout and width(r.stdout) <= 100,
          r.stdout + r.stderr)
    r = run(["compare", aes[0], mem[0]], home)
    check("live: aes vs mem refused, rc 2",
          r.returncode == 2 and "ran aes" in r.stderr and "ran mem" in r.stderr, r.stderr)


def main():
    home = tempfile.mkdtemp(prefix="gb-compare-")
    results = os.path.join(home, "guestbench", "results")
    os.makedirs(results)
    for path in glob.glob(os.path.join(SAVED, "*.json")):
        shutil.copy(path, results)
    try:
        check_fixtures(home)
        check_live(home)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
