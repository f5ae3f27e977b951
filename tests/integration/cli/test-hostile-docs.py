#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Fleets of guests whose documents tests/gendocs.py generates (wrong types,
nulls, extremes, duplicate elements, members and names, very many of them),
through the real CLI: audit and census over live hostile guests beside a
valid one and a real agent, census and merge over saved facts and audit
documents, compare and report over saved bench runs, and bench itself over
hostile guests. Every run must end with an exit status the CLI documents (no
crash, no sanitizer report), the valid guests' results intact and every bad
guest named. scripts/test runs it in the ASan+UBSan build too.

Usage: test-hostile-docs.py HOSTILE_AGENT   (env GB_CLI, GB_AGENT, GB_TEST_DATA)
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import gendocs  # noqa: E402
from gbtest import check, prom_samples, start_agents, start_hostile, stop, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]
DATA = os.environ["GB_TEST_DATA"]
SANITIZER = ("AddressSanitizer", "LeakSanitizer", "runtime error:", "double free",
             "free(): ", "malloc(): ", "Segmentation fault")
FLEET = 16          # hostile guests per CLI run
BATCH = 24          # saved documents per CLI run
stats = {"runs": 0, "docs": 0, "failures": 0}


def load(*path):
    with open(os.path.join(DATA, *path), encoding="utf-8") as f:
        return json.load(f)


def cli(args, ok_codes=(0, 1, 3), timeout=300):
    """Runs the CLI; returns (proc, problem) where problem says what was wrong
    with how it ended (a signal, an undocumented status, a sanitizer report)."""
    stats["runs"] += 1
    p = subprocess.run([CLI] + args, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL, errors="replace")
    problem = None
    if p.returncode < 0:
        problem = "killed by signal %d" % -p.returncode
    elif p.returncode not in ok_codes:
        problem = "exit status %d" % p.returncode
    elif any(s in p.stderr for s in SANITIZER):
        problem = "sanitizer report"
    return p, problem


def failed(what, p, problem, docs):
    """One failed run: its documents, to find it again, and the end of its stderr."""
    stats["failures"] += 1
    names = "; ".join(docs[:FLEET + 2])
    check(what, False, "%s\ndocuments: %s\n%s" % (problem, names, p.stderr[-3000:]))


def findings_of(doc, target):
    for g in doc.get("guests", []):
        if g.get("target") == target:
            result = g.get("result") if isinstance(g.get("result"), dict) else {}
            return g.get("status"), json.dumps(result.get("findings"), sort_keys=True)
    return None, None


# ---- live fleets: audit and census ------------------------------------------------------------

def live_fleets(tmp, hostile_agent, procs, bases):
    """Generated facts served by FLEET hostile guests, one document each per CLI run,
    beside a guest serving a valid document and a real agent."""
    docs, junk = [], []
    for name, base in bases:
        for what, doc in gendocs.facts_documents(base):
            # JSON with a member twice is junk to the CLI's parser: the reply is
            # discarded and the guest times out, so these go in one round of their own
            (junk if what.startswith("member ") else docs).append(("%s: %s" % (name, what),
                                                                   doc))
    rounds = (len(docs) + FLEET - 1) // FLEET
    # each round is three CLI runs (audit json, audit in another format, census):
    # each document is served three times in a row
    socks = []
    for s in range(FLEET):
        mine = [docs[(r * FLEET + s) % len(docs)][1] for r in range(rounds)]
        seq = []
        for d in mine:
            ret = {"__json__": d.text} if isinstance(d, gendocs.Raw) else d
            seq += [ret] * 3
        socks.append(start_hostile(hostile_agent, tmp, "h%02d" % s,
                                   {"gb-get-facts": {"__sequence__": seq}}, procs))
    valid = start_hostile(hostile_agent, tmp, "valid", {"gb-get-facts": bases[0][1]}, procs)
    aprocs, (real,) = start_agents(tmp, ["real"])
    procs += aprocs

    p, problem = cli(["audit", "--format", "json", valid])
    check("audit of the valid guest alone", problem is None, (problem, p.stderr[-2000:]))
    baseline = findings_of(json.loads(p.stdout), valid) if problem is None else (None, None)
    check("the valid guest alone has findings", baseline[0] == "ok" and baseline[1] != "null",
          baseline)

    targets = socks + [valid, real]
    formats = ["table", "csv", "prom"]
    t0 = time.monotonic()
    bad_runs = 0
    for r in range(rounds):
        served = [docs[(r * FLEET + s) % len(docs)][0] for s in range(FLEET)]
        stats["docs"] += FLEET
        # audit, JSON: every guest named, the valid one's findings as when alone
        p, problem = cli(["audit", "--format", "json", "--timeout", "10"] + targets)
        if problem is None:
            try:
                out = json.loads(p.stdout)
                named = {g.get("target") for g in out.get("guests", [])}
                if named != set(targets):
                    problem = "guests missing from the document: %s" % (set(targets) - named)
                elif findings_of(out, valid) != baseline:
                    problem = "the valid guest's findings changed: %s" % (
                        findings_of(out, valid)[1] or "")[:500]
                elif findings_of(out, real)[0] != "ok":
                    problem = "the real agent is not ok: %s" % str(findings_of(out, real))
            except ValueError as e:
                problem = "not JSON: %s" % e
        if problem is not None:
            bad_runs += 1
            failed("round %d: audit --format json" % r, p, problem, served)
        # audit in another format: it ends as documented, and says so of the valid guest
        fmt = formats[r % len(formats)]
        p, problem = cli(["audit", "--format", fmt, "--timeout", "10"] + targets)
        if problem is None and valid not in p.stdout:
            problem = "the valid guest is not in the %s output" % fmt
        if problem is None and fmt == "csv":
            rows = list(csv.reader(io.StringIO(p.stdout)))
            if len({len(row) for row in rows}) != 1:
                problem = "CSV rows of different lengths"
        if problem is None and fmt == "prom" and prom_samples(p.stdout) is None:
            problem = "not the Prometheus text format"
        if problem is not None:
            bad_runs += 1
            failed("round %d: audit --format %s" % (r, fmt), p, problem, served)
        # census of the same fleet: the valid guest and the real agent counted
        p, problem = cli(["census", "--format", "json", "--timeout", "10"] + targets)
        if problem is None:
            try:
                out = json.loads(p.stdout)
                text = json.dumps(out)
                if valid not in text or real not in text:
                    problem = "census does not name the valid guests"
            except ValueError as e:
                problem = "not JSON: %s" % e
        if problem is not None:
            bad_runs += 1
            failed("round %d: census" % r, p, problem, served)
    # the junk round: each such guest named, as timed out, the others as before
    jsocks = []
    for i, (what, d) in enumerate(junk):
        jsocks.append(start_hostile(hostile_agent, tmp, "j%02d" % i,
                                    {"gb-get-facts": {"__json__": d.text}}, procs))
    stats["docs"] += len(junk)
    p, problem = cli(["audit", "--format", "json", "--timeout", "2"] + jsocks + [valid, real])
    if problem is None:
        out = json.loads(p.stdout)
        statuses = [findings_of(out, s)[0] for s in jsocks]
        if statuses != ["timeout"] * len(jsocks) or findings_of(out, valid) != baseline:
            problem = "statuses %s" % statuses
    if problem is not None:
        bad_runs += 1
        failed("audit of %d guests answering JSON with a member twice" % len(junk), p,
               problem, [w for w, _ in junk])
    check("audit and census over %d generated facts documents in %d fleets of %d: every run "
          "as documented" % (len(docs) + len(junk), rounds, len(targets)), bad_runs == 0,
          "%d bad runs" % bad_runs)
    return docs + junk, time.monotonic() - t0


# ---- saved documents: census, merge, compare, report ------------------------------------------

def write(tmp, name, doc):
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(gendocs.dumps(doc))
    return path


def batches(items, n):
    for i in range(0, len(items), n):
        yield items[i:i + n]


def run_batches(what, files, argv, ok_codes, check_out=None):
    """argv + each batch of files; a failed batch is run again file by file to name
    the file. The very large documents (2000 guests, 10000 samples) run alone: a
    batch of them makes report's work grow with rows times columns (minutes for
    10000 samples beside a dozen documents), a case of its own."""
    bad = 0
    big = [f for f in files if os.path.getsize(f) > 256 << 10]
    small = [f for f in files if f not in big]
    for batch in list(batches(small, BATCH)) + [[f] for f in big]:
        stats["docs"] += len(batch)
        p, problem = cli(argv(batch), ok_codes)
        if problem is None and check_out is not None:
            problem = check_out(p, batch)
        if problem is None:
            continue
        for one in batch:
            p1, problem1 = cli(argv([one]), ok_codes)
            if problem1 is None and check_out is not None:
                problem1 = check_out(p1, [one])
            if problem1 is not None:
                bad += 1
                failed("%s: %s" % (what, os.path.basename(one)), p1, problem1,
                       [open(one, encoding="utf-8", errors="replace").read(300)])
        if bad == 0:
            bad += 1
            failed("%s: a batch of %d" % (what, len(batch)), p, problem, batch)
    return bad


def write_pairs(tmp, prefix, command, valid, docs, other):
    """Saved documents of command, one per generated doc: a valid guest, then the
    generated one as "bad" (raw JSON text as it is); then the document-level
    variants of gendocs.saved_documents() around valid and other. Their paths."""
    files = []
    for i, (what, doc) in enumerate(docs):
        if isinstance(doc, gendocs.Raw):
            saved = gendocs.Raw(
                '{"guestbench": "0.1.0", "command": "%s", "guests": [{"name": "valid", '
                '"target": "valid", "status": "ok", "result": %s}, {"name": "bad", '
                '"target": "bad", "status": "ok", "result": %s}]}'
                % (command, json.dumps(valid), doc.text))
        else:
            saved = next(gendocs.saved_documents(command, [("valid", valid), ("bad", doc)]))[1]
        files.append(write(tmp, "%s-%04d.json" % (prefix, i), saved))
    for j, (what, doc) in enumerate(gendocs.saved_documents(
            command, [("valid", valid), ("other", other)])):
        files.append(write(tmp, "%s-doc-%02d.json" % (prefix, j), doc))
    return files


def saved_facts(tmp, docs, valid_doc):
    """census and merge over saved facts documents: the valid guest beside each
    generated one, and the document-level variants."""
    files = write_pairs(tmp, "facts", "facts", valid_doc, docs, docs[0][1])

    def census_out(p, batch):
        # a saved file whose JSON has a member twice is refused whole, by name
        if p.returncode == 2:
            return None if "duplicate key" in p.stderr else "exit status 2: " + p.stderr
        try:
            out = json.loads(p.stdout)
        except ValueError as e:
            return "not JSON: %s" % e
        if "valid" not in json.dumps(out) and '"g0"' not in json.dumps(out):
            return "the valid guest is not counted"
        return None
    bad = run_batches("census of saved facts", files,
                      lambda b: ["census", "--format", "json"] + b, (0, 1, 2, 3), census_out)
    bad += run_batches("merge of saved facts", files,
                       lambda b: ["merge", "--format", "json"] + b, (0, 1, 2, 3))
    bad += run_batches("merge of saved facts, table", files,
                       lambda b: ["merge"] + b, (0, 1, 2, 3))
    check("census and merge over %d saved facts documents: every run as documented"
          % len(files), bad == 0, "%d bad" % bad)


def saved_runs(tmp, docs, valid_result):
    """compare and report over saved bench runs, each with a valid guest and a
    generated one."""
    files = write_pairs(tmp, "run", "bench", valid_result, docs, valid_result)
    valid_run = write(tmp, "valid-run.json",
                      next(gendocs.saved_documents("bench", [("valid", valid_result)]))[1])

    def by_guest_out(p, batch):
        try:
            out = json.loads(p.stdout)
        except ValueError as e:
            return "not JSON: %s" % e
        cols = out.get("columns", [])
        # the 2000-guest document names its guests g0, g1, ...
        if not any(c.get("guest") in ("valid", "g0") and not c.get("error") for c in cols):
            return "the valid guest's column is missing or has no values"
        return None

    bad = 0
    for f in files:
        stats["docs"] += 1
        p, problem = cli(["compare", "--by", "guest", "--format", "json", f], (0, 2))
        if problem is None and p.returncode == 2:
            # a file whose JSON has a member twice is refused whole, by name
            if "duplicate key" not in p.stderr:
                problem = "exit status 2: " + p.stderr
        elif problem is None:
            problem = by_guest_out(p, [f])
        if problem is not None:
            bad += 1
            failed("compare --by guest %s" % os.path.basename(f), p, problem,
                   [os.path.basename(f)])
    bad += run_batches("compare by document", files,
                       lambda b: ["compare", valid_run] + b, (0, 2))
    bad += run_batches("report", files,
                       lambda b: ["report", "-o", os.path.join(tmp, "r.html"), valid_run] + b,
                       (0, 2))
    bad += run_batches("merge of saved runs", files,
                       lambda b: ["merge", "--format", "json"] + b, (0, 1, 2, 3))
    check("compare, report and merge over %d saved bench runs, each with a valid guest: "
          "the valid guest compared every time" % len(files), bad == 0, "%d bad" % bad)


# ---- bench over hostile guests -----------------------------------------------------------------

def live_bench(tmp, hostile_agent, procs, docs):
    """bench aes over a real agent and FLEET guests answering generated results:
    each saved run compares with the real agent's results."""
    results_dir = os.path.join(tmp, "xdg")
    env_before = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = results_dir
    try:
        aprocs, (real,) = start_agents(tmp, ["bench-real"])
        procs += aprocs
        rounds = 3
        socks = []
        for s in range(FLEET):
            seq = []
            for r in range(rounds):
                d = docs[(r * FLEET + s) % len(docs)][1]
                seq.append({"__json__": d.text} if isinstance(d, gendocs.Raw) else d)
            socks.append(start_hostile(
                hostile_agent, tmp, "b%02d" % s,
                {"gb-bench-test": "aes", "gb-bench-status": {"__sequence__": [
                    {"job": 1, "test": "aes", "state": "done", "progress": 1.0,
                     "result": d} for d in seq]}}, procs))
        bad = 0
        for r in range(rounds):
            stats["docs"] += FLEET
            before = set(os.listdir(os.path.join(results_dir, "guestbench", "results"))) \
                if os.path.isdir(os.path.join(results_dir, "guestbench", "results")) else set()
            p, problem = cli(["bench", "aes", "--seconds", "0.1", "--sizes", "16,16k",
                              "--per-host", "64", "--timeout", "30", real] + socks)
            saved = sorted(set(os.listdir(os.path.join(results_dir, "guestbench", "results")))
                           - before) if problem is None else []
            if problem is None and len(saved) != 1:
                problem = "no run saved"
            if problem is None:
                path = os.path.join(results_dir, "guestbench", "results", saved[0])
                p, problem = cli(["compare", "--by", "guest", "--format", "json", path], (0,))
                if problem is None:
                    cols = json.loads(p.stdout).get("columns", [])
                    if not any(c.get("guest") == real and not c.get("error") for c in cols):
                        problem = "the real agent's results are not compared"
                    elif len(cols) != FLEET + 1:
                        problem = "%d columns for %d guests" % (len(cols), FLEET + 1)
            if problem is not None:
                bad += 1
                failed("bench round %d" % r, p, problem,
                       [docs[(r * FLEET + s) % len(docs)][0] for s in range(FLEET)])
        check("bench aes over a real agent and %d guests with generated results, %d rounds: "
              "every saved run compares, the real agent's results in it" % (FLEET, rounds),
              bad == 0)
    finally:
        if env_before is None:
            del os.environ["XDG_DATA_HOME"]
        else:
            os.environ["XDG_DATA_HOME"] = env_before


def main(hostile_agent):
    tmp = tempfile.mkdtemp(prefix="gb-hostile-docs-")
    procs = []
    t0 = time.monotonic()
    live_s = 0.0
    try:
        bases = [(n, load("facts-json", n + ".json"))
                 for n in ("tuned-host", "numa-memoryless")]
        facts_docs, live_s = live_fleets(tmp, hostile_agent, procs, bases)
        t1 = time.monotonic()
        saved_facts(tmp, facts_docs, bases[0][1])
        print("# saved facts %.1f s" % (time.monotonic() - t1))
        t1 = time.monotonic()
        run_doc = load("results", "kvm64.json")
        valid_result = run_doc["guests"][0]["result"]
        result_docs = [(w, d) for w, d in gendocs.result_documents(valid_result)]
        saved_runs(tmp, result_docs, valid_result)
        print("# saved runs %.1f s" % (time.monotonic() - t1))
        live_bench(tmp, hostile_agent, procs, result_docs)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    print("# %d generated documents through %d CLI runs in %.1f s (live fleets %.1f s), "
          "%d failed" % (stats["docs"], stats["runs"], time.monotonic() - t0, live_s,
                         stats["failures"]))
    return tap_report()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
