#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""BENCHMARKS.md is generated: bench/make-benchmarks-md makes it from bench/results/.

Checks that the committed BENCHMARKS.md is exactly what the generator makes of
the committed results (so nobody edits it by hand, and nobody commits results
without the page made from them); that a malformed result file stops the
generator with an error naming the file, not a traceback; and that of two
results of one script the later by date is the one shown, whatever the file
names, also when the later one measured only part of what the script measures.

Usage: test-benchmarks-md.py SOURCE_ROOT. Prints TAP; exits 1 when a check fails.
"""
import difflib
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..")
GENERATOR = os.path.join(ROOT, "bench", "make-benchmarks-md")
FORMAT = "guestbench-bench-result/1"

results = []


def tap(ok, name, diag=""):
    results.append(ok)
    print("%s %d - %s" % ("ok" if ok else "not ok", len(results), name))
    if not ok:
        for line in diag.rstrip().splitlines():
            print("# " + line)


def generate(results_dir, out):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, GENERATOR, "--results", results_dir, "--output", out],
                          capture_output=True, text=True, timeout=30, env=env)


def comparison(section, group, name, ours, ref, ratio, goal=None):
    goal = goal or {"low": 0.97, "high": 1.03}
    return {"section": section, "group": group, "name": name, "unit": "MB/s",
            "ours": {"value": ours, "stat": "median", "cv": 0.01},
            "reference": {"name": "iperf3", "value": ref, "stat": "median", "cv": 0.02},
            "ratio": ratio, "ratio_range": [ratio - 0.01, ratio + 0.01],
            "goal": goal, "met": goal["low"] <= ratio <= goal["high"], "control": False}


def result(script, date, commit, comparisons):
    return {"format": FORMAT, "script": script, "date": date, "started": None,
            "commit": commit, "dirty": False, "command": "bench/" + script,
            "machine": {"cpu": "Test CPU", "cores": 2, "kernel": "6.1", "memory_kib": None,
                        "load": [0.5, 0.5, 0.5]},
            "versions": [], "reference": "iperf3", "runs": 5, "setup": None,
            "comparisons": comparisons, "figures": [], "tables": [], "notes": [],
            "commands": {}}


def write(d, name, doc):
    with open(os.path.join(d, name), "w") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc, indent=1))


def check_committed(tmp):
    out = os.path.join(tmp, "BENCHMARKS.md")
    r = generate(os.path.join(ROOT, "bench", "results"), out)
    if r.returncode != 0:
        tap(False, "BENCHMARKS.md is what bench/make-benchmarks-md makes of bench/results/",
            r.stderr)
        return
    with open(out) as f:
        made = f.read()
    with open(os.path.join(ROOT, "BENCHMARKS.md")) as f:
        committed = f.read()
    diff = "".join(list(difflib.unified_diff(
        committed.splitlines(True), made.splitlines(True), "BENCHMARKS.md (committed)",
        "BENCHMARKS.md (generated)"))[:40])
    tap(made == committed, "BENCHMARKS.md is what bench/make-benchmarks-md makes of "
        "bench/results/", diff + ("\nrun bench/make-benchmarks-md and commit the result"
                                  if diff else ""))


def check_malformed(tmp):
    good = result("fidelity-net", "2026-12-03T08:18Z", "aaaaaaa",
                  [comparison("net", "host-to-guest", "1 stream", 4118, 4312, 1.001)])
    cases = [
        ("not JSON", "2026-12-03T0900-bbbbbbb-fidelity-net.json", '{"format": "guestbench-'),
        ("a ratio that is not a number", "2026-12-03T0901-ccccccc-fidelity-net.json",
         dict(good, date="2026-12-03T09:01Z", comparisons=[
             dict(good["comparisons"][0], ratio="fast")])),
        ("no date", "2026-12-03T0902-ddddddd-fidelity-net.json",
         {k: v for k, v in good.items() if k != "date"}),
    ]
    for what, name, doc in cases:
        d = tempfile.mkdtemp(dir=tmp)
        write(d, "2026-12-03T0818-aaaaaaa-fidelity-net.json", good)
        write(d, name, doc)
        r = generate(d, os.path.join(d, "out.md"))
        ok = (r.returncode != 0 and name in r.stderr and "Traceback" not in r.stderr
              and r.stderr.startswith("make-benchmarks-md: ")
              and not os.path.exists(os.path.join(d, "out.md")))
        tap(ok, "a result file with %s: an error naming it, no traceback, no output" % what,
            "exit %d, stderr: %s" % (r.returncode, r.stderr))


def check_latest(tmp):
    d = tempfile.mkdtemp(dir=tmp)
    # file names sorting the other way round: the date inside decides
    write(d, "a-later.json", result("fidelity-net", "2026-12-04T10:30:05Z", "1111111", [
        comparison("net", "host-to-guest", "1 stream", 4444, 4321, 1.028)]))
    write(d, "b-earlier.json", result("fidelity-net", "2026-12-03T08:18Z", "2222222", [
        comparison("net", "host-to-guest", "1 stream", 3333, 3456, 0.965)]))
    out = os.path.join(d, "out.md")
    r = generate(d, out)
    text = open(out).read() if r.returncode == 0 else ""
    ok = r.returncode == 0 and "4,444" in text and "1.028" in text and "1111111" in text \
        and "3,333" not in text and "0.965" not in text and "2222222" not in text
    tap(ok, "of two results of one script, the later by date is shown",
        r.stderr or "\n".join(line for line in text.splitlines() if "net" in line))

    # a later run of only part of a script (fidelity-guest --only disk) replaces that part
    guest = {"low": 0.85, "high": 1.15}
    d = tempfile.mkdtemp(dir=tmp)
    write(d, "2026-12-03T0756-3333333-fidelity-guest.json", result(
        "fidelity-guest", "2026-12-03T07:56Z", "3333333", [
            comparison("net", "1 stream", "host-to-guest", 60.9, 58.9, 0.957, guest),
            comparison("disk", "fio", "write 1 MiB", 450, 474, 0.978, guest)]))
    write(d, "2026-12-03T0924-4444444-fidelity-guest.json", result(
        "fidelity-guest", "2026-12-03T09:24Z", "4444444", [
            comparison("disk", "fio", "write 1 MiB", 537, 446, 1.205, guest)]))
    r = generate(d, out)
    text = open(out).read() if r.returncode == 0 else ""
    ok = r.returncode == 0 and "1.205" in text and "0.978" not in text and "0.957" in text \
        and "3333333" in text and "4444444" in text
    tap(ok, "a later run of part of a script replaces that part only",
        r.stderr or "\n".join(line for line in text.splitlines() if "guest" in line))


def main():
    print("TAP version 13")
    print("1..6")
    with tempfile.TemporaryDirectory(prefix="gb-benchmarks-md-") as tmp:
        check_committed(tmp)
        check_malformed(tmp)
        check_latest(tmp)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
