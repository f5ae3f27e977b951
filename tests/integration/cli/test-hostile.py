#!/usr/bin/env python3
"""A hostile guest's bench result against the machine formats, read by their real
consumers. `guestbench bench aes` runs over an honest agent and a hostile one
(tests/hostile-agent.py) whose samples carry label names Prometheus reserves or
that clean up to the same name, our own label names, duplicate samples, terminal
controls and a value of 1e308.

- prom, of bench and of `merge` of the run saved on two hosts: through `promtool
  check metrics` and a real node_exporter (textfile collector, 127.0.0.1, a free
  port), which must neither fail the scrape nor lose the honest guest. A control
  shows node_exporter does refuse the old output.
- json, of bench, merge, results and compare, and the saved runs: parsed by
  Python's json, with no character a terminal obeys.

Usage: test-hostile.py HOSTILE_AGENT (prints TAP; promtool or node_exporter
missing: those checks are TAP SKIPs)
"""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import (NODE_EXPORTER, NodeExporter, check, prom_samples,  # noqa: E402
                    prom_valid, skip, start_agents, stop, tap_report)

CLI = os.environ["GB_CLI"]
PROMTOOL = shutil.which("promtool")
OURS = {"guest", "metric", "unit", "other_labels", "host", "target"}
AGENT_LABELS = {"block_size", "direction", "kind", "op", "pages", "quantile", "record_size",
                "streams", "test"}
# what a terminal obeys: C0 but newline, DEL, C1, bidi marks and U+061C
DANGEROUS = re.compile("[\x00-\x09\x0b-\x1f\x7f\x80-\x9f\u061c\u200e\u200f\u2028-\u202e"
                       "\u2066-\u2069]")

POISON = [
    {"metric": "aes-128-gcm", "value": 1000, "unit": "B/s", "labels": {"block_size": "16"}},
    {"metric": "aes-128-gcm", "value": 1000, "unit": "B/s", "labels": {"block_size": "16"}},
    {"metric": "aes-128-gcm", "value": 2, "unit": "B/s",
     "labels": {"\u00e9t\u00e9": "1", "\t=1+1": "2", "--x": "3", "_-x": "4"}},
    {"metric": "aes-128-gcm", "value": 3, "unit": "B/s",
     "labels": {"guest": "victim", "label_guest": "x", "a-b": "1", "a_b": "2", "9x": "a",
                "label_9x": "b", "host": "evil", "__name__": "up"}},
    {"metric": "evil\x1b]0;pwned\x07\u009b\u202e", "value": 4, "unit": "B/s\r",
     "labels": {"block_size": "\x1b[31mred\u061c\u202e"}},
    {"metric": "aes-128-gcm", "value": 1e308, "unit": "B/s", "labels": {"block_size": "8192"}},
    {"metric": "=HYPERLINK(\"http://127.0.0.1/\")", "value": 5, "unit": "+1",
     "labels": {"block_size": "@SUM(A1)", "test": "-2+3"}},
]
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def run(args, timeout=120):
    return subprocess.run([CLI] + args, capture_output=True, text=True, timeout=timeout)


def check_file(what, text, honest, hosts=None):
    got = prom_samples(text)
    check(what + ": every line is HELP, TYPE or a sample", got is not None and prom_valid(text),
          text[:2000])
    got = got or []
    bad_names = sorted({k for _, labels, _ in got for k, _ in labels
                        if k not in OURS | AGENT_LABELS or k.startswith("__")})
    check(what + ": label names are ours or the agent's documented ones", not bad_names,
          bad_names)
    twice = [(n, labels) for n, labels, _ in got
             if len({k for k, _ in labels}) != len(labels)]
    check(what + ": no sample has a label twice", not twice, twice[:3])
    series = [(n, tuple(sorted(labels))) for n, labels, _ in got]
    check(what + ": no series twice", len(series) == len(set(series)),
          [s for s in series if series.count(s) > 1][:3])
    check(what + ": no byte a terminal obeys", not DANGEROUS.search(text),
          DANGEROUS.findall(text)[:5])
    mine = [labels for n, labels, _ in got
            if n == "guestbench_bench_value" and ("guest", honest) in labels]
    check(what + ": the honest guest's samples are there (%d)" % len(mine), len(mine) >= 5)
    if hosts is not None:
        per_sample = [sum(1 for k, _ in labels if k == "host") for _, labels, _ in got]
        check(what + ": each sample has one host label, ours",
              per_sample and all(c == 1 for c in per_sample)
              and {v for _, labels, _ in got for k, v in labels if k == "host"} == set(hosts))
    if PROMTOOL:
        p = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                           text=True)
        # promtool's lint notes (e.g. on units) are not errors; a parse error is
        check(what + ": promtool parses it", "error while linting" not in p.stdout + p.stderr
              and "text format parsing error" not in p.stdout + p.stderr, p.stdout + p.stderr)
    else:
        skip(what + ": promtool parses it", "promtool not installed")


def json_ok(what, text):
    """The document parses, and holds no raw character a terminal obeys."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        check(what + ": Python's json parses it", False, str(e))
        return None
    check(what + ": Python's json parses it", True)
    check(what + ": no character a terminal obeys", not DANGEROUS.search(text),
          DANGEROUS.findall(text)[:5])
    return doc


def check_json(tmp, files, honest):
    doc = json_ok("bench --format json", open(os.path.join(tmp, "bench.json"),
                                                encoding="utf-8").read())
    big = [m for g in (doc or {}).get("guests", []) if g.get("result")
           for m in g["result"].get("metrics", []) if m.get("value") == 1e308]
    check("bench --format json: 1e308 reads back as 1e308", len(big) == 1, big)
    p = run(["merge", "--format", "json"] + files)
    json_ok("merge --format json", p.stdout)
    p = run(["results", "--format", "json"])
    listed = json_ok("results --format json", p.stdout) or {}
    runs = [r["path"] for r in listed.get("results", [])]
    check("results: both saved runs are listed", len(runs) == 2, (runs, p.stderr))
    for path in runs:
        json_ok("saved run " + os.path.basename(path), open(path, encoding="utf-8").read())
    if len(runs) == 2:
        # the hostile guest repeats a sample: compare reads the runs guest by guest,
        # the honest guest compared, the hostile one a column that says why, escaped
        p = run(["compare", "--format", "json"] + runs)
        cols = (json_ok("compare --format json", p.stdout) or {}).get("columns", [])
        errors = [c.get("error") or "" for c in cols]
        check("compare: the honest guest is compared, the repeated sample named",
              p.returncode == 0 and any(not e for e in errors)
              and any("appears twice" in e for e in errors)
              and not DANGEROUS.search(p.stdout), (p.returncode, errors, p.stderr))


def check_csv(honest, bad):
    """CSV of bench and info: guest cells are no formulas and stay on their line."""
    for args, columns in ((["bench", "aes", "--seconds", "0.2"], ("metric", "unit", "labels")),
                          (["info"], ("version", "commands"))):
        p = run(args + ["--format", "csv", honest, bad])
        what = "%s --format csv" % args[0]
        rows = list(csv.DictReader(io.StringIO(p.stdout)))
        mine = [r for r in rows if r.get("guest") == bad]
        check(what + ": rc 0, the hostile guest's rows are there", p.returncode == 0 and mine,
              (p.returncode, p.stderr, p.stdout[:500]))
        cells = [r.get(c) or "" for r in mine for c in columns]
        formulas = [c for c in cells if c.startswith(FORMULA) and len(c) > 1]
        check(what + ": no guest cell starts a formula", cells and not formulas, formulas)
        check(what + ": no character a terminal obeys, CR and LF included",
              not DANGEROUS.search(p.stdout) and "\r" not in p.stdout
              and all("\n" not in c for r in rows for c in r.values() if c),
              DANGEROUS.findall(p.stdout)[:5])


def scrape_ok(exporter, textdir, name, text, honest):
    for f in os.listdir(textdir):
        os.unlink(os.path.join(textdir, f))
    with open(os.path.join(textdir, name), "w", encoding="utf-8") as f:
        f.write(text)
    try:
        scraped = exporter.scrape()
    except OSError as e:  # node_exporter 1.5 panics on a reserved label name
        return False, "no answer: %s" % e
    error = [l for l in scraped.splitlines() if l.startswith("node_textfile_scrape_error")]
    mine = [l for l in scraped.splitlines()
            if l.startswith("guestbench_bench_value{") and 'guest="%s"' % honest in l]
    return error == ["node_textfile_scrape_error 0"] and len(mine) >= 5, (error, len(mine))


def check_error_messages(tmp):
    """Errors quote what they refuse (a saved document's members): escaped on stderr."""
    evil = os.path.join(tmp, "evil.json")
    with open(evil, "w", encoding="utf-8") as f:
        json.dump({"guestbench": "0.1.0", "command": "bench\x1b]0;pwned\x07\x1b[2J\u202e",
                   "guests": []}, f)
    for args in (["compare", evil, evil], ["report", evil, "-o", os.path.join(tmp, "r.html")],
                 ["merge", evil]):
        p = run(args)
        raw = [c for c in p.stderr if c in "\x1b\x07\u202e"]
        check("%s of a hostile document: the error is escaped on stderr (rc %d)"
              % (args[0], p.returncode), p.returncode != 0 and not raw and "\\x1b" in p.stderr,
              p.stderr[:300])


def main(hostile_agent):
    tmp = tempfile.mkdtemp(prefix="gb-hostile-prom-")
    procs = []
    exporter = None
    try:
        procs, socks = start_agents(tmp, ["honest"])
        scenario = os.path.join(tmp, "scenario.json")
        with open(scenario, "w", encoding="utf-8") as f:
            json.dump({"gb-bench-test": "aes",
                       "gb-bench-result": {"test": "aes", "params": {"seconds": 0.2},
                                           "agent_version": "0", "runs": 1, "facts": {},
                                           "timestamp": "2026-12-03T00:00:00Z",
                                           "metrics": POISON},
                       "guest-info": {"version": "=2+5\r\nvictim,ok",
                                      "supported_commands": [{"name": "-x", "enabled": True}]}},
                      f)
        bad = os.path.join(tmp, "hostile.sock")
        procs.append(subprocess.Popen([sys.executable, hostile_agent, bad, scenario],
                                      stdin=subprocess.DEVNULL))
        for _ in range(200):
            if os.path.exists(bad):
                break
            subprocess.run(["sleep", "0.05"])
        honest = socks[0]
        env_runs = os.path.join(tmp, "runs")
        os.environ["XDG_DATA_HOME"] = env_runs
        prom = os.path.join(tmp, "bench.prom")
        doc = os.path.join(tmp, "bench.json")
        p = run(["bench", "aes", "--seconds", "0.2", "--format", "prom", "-o", prom,
                 honest, bad])
        check("bench --format prom over an honest and a hostile guest: rc 0", p.returncode == 0,
              (p.returncode, p.stderr))
        text = open(prom, encoding="utf-8").read() if os.path.exists(prom) else ""
        check_file("bench", text, honest)
        check("bench: the hostile guest's other labels are kept, as one value",
              'other_labels="\u00e9t\u00e9=1;\\\\t\\\\=1+1=2;--x=3;_-x=4"' in text,
              [l for l in text.splitlines() if "other_labels" in l])

        p = run(["bench", "aes", "--seconds", "0.2", "--format", "json", "-o", doc, honest,
                 bad])
        try:
            runs = json.load(open(doc, encoding="utf-8"))
        except (OSError, ValueError):
            runs = {"guestbench": "0", "command": "bench", "guests": []}
        files = []
        for host in ("hv1", "hv2"):
            runs["host"] = host
            path = os.path.join(tmp, host + ".json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(runs, f)
            files.append(path)
        p = run(["merge", "--format", "prom"] + files)
        check("merge --format prom of the run on two hosts: rc 0", p.returncode == 0,
              (p.returncode, p.stderr))
        merged = p.stdout
        check_file("merge", merged, honest, hosts=["hv1", "hv2"])

        check_json(tmp, files, honest)
        check_csv(honest, bad)

        if not NODE_EXPORTER:
            for name in ("node_exporter takes bench's file", "node_exporter takes merge's file",
                         "control: node_exporter refuses reserved or repeated label names"):
                skip(name, "prometheus-node-exporter not installed")
            return
        textdir = os.path.join(tmp, "textfile")
        os.mkdir(textdir)
        os.chmod(tmp, 0o755)
        os.chmod(textdir, 0o755)
        exporter = NodeExporter(textdir, os.path.join(tmp, "node_exporter.log"))
        ok, detail = scrape_ok(exporter, textdir, "guestbench.prom", text, honest)
        check("node_exporter takes bench's file and keeps the honest guest", ok, detail)
        ok, detail = scrape_ok(exporter, textdir, "guestbench.prom", merged, honest)
        check("node_exporter takes merge's file and keeps the honest guest", ok, detail)
        # the control: what the output once was (a reserved name; a name twice)
        refused = []
        for label in ('a_b="1",a_b="2"', '__1_1="2"'):
            broken = text + 'guestbench_bench_value{guest="x",metric="m",unit="u",%s} 1\n' % label
            ok, detail = scrape_ok(exporter, textdir, "guestbench.prom", broken, honest)
            refused.append((label, not ok, detail))
        check("control: node_exporter refuses reserved or repeated label names",
              all(r[1] for r in refused), refused)
    finally:
        check_error_messages(tmp)
        if exporter is not None:
            exporter.close()
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1])
    sys.exit(tap_report())
