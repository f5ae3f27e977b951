#!/usr/bin/env python3
"""guestbench census with the real CLI: live agents (and a hostile agent serving
this machine's facts under another model), saved facts and bench documents, an
inventory with tags, bad documents and options, and the time of a census of
10,000 saved documents (printed, not asserted). Prints TAP.
"""
import copy
import csv
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, prom_samples, prom_valid, start_agents, stop, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]
DATA = os.environ["GB_TEST_DATA"]
HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "hostile-agent.py")
FLEET12 = os.path.join(DATA, "census", "fleet12.json")
BROKEN = os.path.join(DATA, "census", "fleet-broken.json")


def cli(*args, timeout=120):
    return subprocess.run([CLI] + list(args), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def wait_socket(sock):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(sock)
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("nothing listens on %s" % sock)


def guests(doc):
    return {g["name"]: g for g in doc["guests"]}


def write_json(path, doc):
    with open(path, "w") as fh:
        json.dump(doc, fh)


def main():
    tmp = tempfile.mkdtemp(prefix="gb-census-")
    procs = []
    try:
        live_procs, (live, live2, live3) = start_agents(tmp, ["live", "live2", "live3"])
        procs += live_procs
        p = cli("facts", "--format", "json", "-o", os.path.join(tmp, "saved.json"), live)
        check("facts -o writes a saved document", p.returncode == 0, p.stderr)
        with open(os.path.join(tmp, "saved.json")) as fh:
            real = json.load(fh)["guests"][0]["result"]
        model = real["cpu"]["model_name"]
        flags = set(real["cpu"]["flags"])

        # A live guest on another model: this machine's facts, renamed, without two flags.
        odd_facts = copy.deepcopy(real)
        odd_facts["cpu"]["model_name"] = "QEMU Virtual CPU version 2.5+"
        odd_facts["cpu"]["isa_level"] = "x86-64-v1"
        dropped = sorted(flags)[:2]
        odd_facts["cpu"]["flags"] = [f for f in real["cpu"]["flags"] if f not in dropped]
        scenario = os.path.join(tmp, "odd.json")
        write_json(scenario, {"gb-get-facts": odd_facts, "gb-ping": {}, "gb-info": {}})
        odd = os.path.join(tmp, "odd.sock")
        procs.append(subprocess.Popen([sys.executable, HOSTILE, odd, scenario],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_socket(odd)

        # Live: three real agents and the odd one.
        p = cli("census", "--format", "json", live, live2, live3, odd)
        doc = json.loads(p.stdout)
        g = guests(doc)
        check("live census exits 0", p.returncode == 0, p.stderr)
        check("two groups: the machine's model (3 guests) and the odd one",
              [(x["model"], x["count"]) for x in doc["groups"]]
              == [(model, 3), ("QEMU Virtual CPU version 2.5+", 1)], doc["groups"])
        check("the odd guest is the fleet's outlier, by model",
              g[odd]["outlier"] is not None and "model differs" in g[odd]["outlier"]
              and all(g[s]["outlier"] is None for s in (live, live2, live3)), g[odd])
        base = doc["baselines"][0]
        check("the fleet's baseline is the machine's flags without the two dropped",
              base["tag"] is None and set(base["flags"]) == flags - set(dropped), base)
        check("the odd group lacks the dropped flags", doc["groups"][1]["lacks"] == dropped,
              doc["groups"][1]["lacks"])
        check("lowest level: x86-64-v1, held by the odd guest",
              doc["lowest"] == {"isa_level": "x86-64-v1", "guests": [odd]}, doc["lowest"])

        # Table: the groups, the baseline, the outlier.
        p = cli("census", live, live2, odd)
        check("table names the groups, baseline, lowest level and outlier",
              p.returncode == 0 and "GROUP" in p.stdout and "baseline of the fleet" in p.stdout
              and "lowest ISA level: x86-64-v1" in p.stdout and "outliers:" in p.stdout
              and model in p.stdout, p.stdout + p.stderr)

        # Tags from an inventory: --by tag judges within each tag.
        inv = os.path.join(tmp, "fleet.ini")
        with open(inv, "w") as fh:
            for name, sock, tag in (("a1", live, "pool"), ("a2", live2, "pool"),
                                    ("a3", live3, "pool"), ("a4", odd, "pool")):
                fh.write("[guest %s]\ntarget=unix:%s\ntags=%s\n" % (name, sock, tag))
        p = cli("census", "--by", "tag", "--format", "json", "--inventory", inv)
        doc = json.loads(p.stdout)
        check("--by tag: a baseline for the tag and the outlier of its tag",
              p.returncode == 0 and [b["tag"] for b in doc["baselines"]] == [None, "pool"]
              and "tag pool" in (guests(doc)["a4"]["outlier"] or "")
              and guests(doc)["a1"]["tags"] == ["pool"], p.stdout + p.stderr)

        # Saved documents and live guests together; a saved bench run carries facts.
        bench = os.path.join(tmp, "bench.json")
        p = cli("bench", "aes", "--sizes", "16", "--seconds", "0.2", "--no-save",
                "--format", "json", "-o", bench, live2)
        check("a bench run saved", p.returncode == 0, p.stderr)
        p = cli("census", "--format", "json", os.path.join(tmp, "saved.json"), bench, FLEET12,
                odd)
        doc = json.loads(p.stdout)
        names = [x["name"] for x in doc["guests"]]
        check("saved facts, a saved bench run, a fixture fleet and a live guest, in order",
              p.returncode == 0 and names[:2] == [live, live2] and len(names) == 15
              and names[-1] == odd and doc["guests"][1]["source"] == bench,
              "%d %r %s" % (p.returncode, names, p.stderr))
        check("the bench run's facts are counted like the live ones",
              doc["guests"][1]["model"] == model
              and doc["guests"][1]["group"] == doc["guests"][0]["group"], doc["guests"][1])
        check("the fixture fleet's models are grouped",
              len(doc["groups"]) == 6 and doc["lowest"]["isa_level"] == "x86-64-v1",
              doc["groups"])

        # --require-level / --require-flags: exit 1 naming the guest.
        p = cli("census", "--require-level", "x86-64-v2", FLEET12)
        check("--require-level: exit 1, the legacy guests named",
              p.returncode == 1 and "required and lacking:" in p.stdout
              and "legacy-1: x86-64-v1 is below the required x86-64-v2" in p.stdout,
              "%d %s" % (p.returncode, p.stdout))
        p = cli("census", "--require-flags", "ssbd", "--format", "csv", FLEET12)
        rows = list(csv.DictReader(io.StringIO(p.stdout)))
        check("--require-flags in csv: exit 1, one row per guest, web-6 lacks ssbd",
              p.returncode == 1 and len(rows) == 12
              and [r["guest"] for r in rows if r["require"]] == ["web-6", "legacy-1", "legacy-2"]
              and rows[0]["model"] == "Intel Xeon Processor (Icelake)",
              "%d %s" % (p.returncode, p.stdout))
        p = cli("census", "--require-level", "x86-64-v1", "--require-flags", "sse2", FLEET12)
        check("requirements every guest meets: exit 0", p.returncode == 0, p.stdout + p.stderr)

        # Prometheus: the level per guest, a count per model, labels escaped.
        weird = os.path.join(tmp, "weird.json")
        wdoc = json.load(open(FLEET12))
        wdoc["guests"][0]["name"] = 'we"ird\\name\n'
        wdoc["guests"][1]["result"]["cpu"]["model_name"] = 'Model "X"'
        write_json(weird, wdoc)
        p = cli("census", "--format", "prom", weird)
        samples = prom_samples(p.stdout) or []
        levels = {dict(s[1])["guest"]: s[2] for s in samples if s[0] == "guestbench_cpu_isa_level"}
        counts = {dict(s[1])["model"]: s[2] for s in samples
                  if s[0] == "guestbench_cpu_model_guests"}
        check("prom is valid exposition text", p.returncode == 0 and prom_valid(p.stdout), p.stdout)
        # the newline is shown as the text \n first, as in the other prom outputs
        check("guestbench_cpu_isa_level per guest, labels escaped",
              levels.get('we\\"ird\\\\name\\\\n') == "4" and levels.get("legacy-2") == "1"
              and len(levels) == 12, levels)
        check("guestbench_cpu_model_guests per model",
              counts == {"Intel Xeon Processor (Icelake)": "5", 'Model \\"X\\"': "1",
                         "AMD EPYC-Rome Processor": "4", "QEMU Virtual CPU version 2.5+": "2"},
              counts)

        # Broken guests: each says what was missing, the rest is counted, exit 3.
        p = cli("census", BROKEN)
        check("unreadable cpu members: exit 3, the census over the rest",
              p.returncode == 3 and "1 guest(s) counted, 1 group(s), 6 not counted" in p.stdout,
              "%d %s" % (p.returncode, p.stdout))
        for line in ("no-isa (%s): cpu.isa_level absent" % BROKEN,
                     "bad-flags (%s): cpu.flags of the wrong type" % BROKEN,
                     "no-cpu (%s): cpu null" % BROKEN,
                     "two-missing (%s): cpu.model_name absent, cpu.flags null" % BROKEN,
                     "bad-level (%s): cpu.isa_level is not x86-64-v1..x86-64-v4" % BROKEN,
                     "down (%s): status timeout in the document" % BROKEN):
            check("not counted: " + line.split(" ")[0], line in p.stdout, p.stdout)
        # A bench run whose guest has no facts, and a guest entry that is not an object.
        nofacts = os.path.join(tmp, "nofacts.json")
        bdoc = json.load(open(bench))
        del bdoc["guests"][0]["result"]["facts"]
        bdoc["guests"].append("not a guest")
        write_json(nofacts, bdoc)
        p = cli("census", "--format", "json", nofacts, FLEET12)
        doc = json.loads(p.stdout)
        check("a bench guest without facts and a guest that is no object: named, not counted",
              p.returncode == 3 and doc["guests"][0]["problem"].startswith("result: ")
              and "facts" in doc["guests"][0]["problem"]
              and doc["guests"][1]["name"] == "guests[1]" and doc["guests"][1]["problem"]
              and len(doc["groups"]) == 4, "%d %s" % (p.returncode, p.stdout[:2000]))
        gone = os.path.join(tmp, "gone.sock")
        p = cli("census", "--timeout", "2", live, gone)
        check("an unreachable live guest: not counted, exit 3",
              p.returncode == 3 and "gone.sock (%s): error:" % gone in p.stdout,
              "%d %s" % (p.returncode, p.stdout))

        # Bad input: usage errors (exit 2) before any guest is asked.
        notdoc = os.path.join(tmp, "notdoc.json")
        write_json(notdoc, {"hello": 1})
        audit = os.path.join(tmp, "audit.json")
        cli("audit", "--format", "json", "-o", audit, live)
        garbage = os.path.join(tmp, "garbage.json")
        with open(garbage, "w") as fh:
            fh.write("{not json")
        for args, want in (
                ([notdoc, live], "not a guestbench document"),
                ([audit], "a 'audit' document; census reads facts and bench documents"),
                ([garbage], garbage),
                ([os.path.join(tmp, "missing.json")], "missing.json"),
                (["--require-level", "x86-64-v7", live], "--require-level"),
                (["--require-flags", "a b", live], "--require-flags"),
                (["--by", "model", live], "--by 'model': expected tag or fleet"),
                (["--failed-only", live], "--failed-only does not apply to census"),
                (["--format", "html", live], "html"),
                ([], "no targets or saved documents given for 'census'")):
            p = cli("census", *args)
            check("usage error: census %s" % " ".join(os.path.basename(a) for a in args),
                  p.returncode == 2 and want in p.stderr and p.stdout == "",
                  "%d %s" % (p.returncode, p.stderr))

        # 10,000 saved documents, one guest each, on varied models: the time is printed.
        many = os.path.join(tmp, "many")
        os.mkdir(many)
        models = ["EPYC-Rome", "EPYC-Milan", "Icelake-Server", "Cascadelake-Server",
                  "Skylake-Client", "qemu64", "host"]
        paths = []
        for i in range(10000):
            facts = copy.deepcopy(real) if i == 0 else facts
            facts["cpu"]["model_name"] = models[i % len(models)]
            path = os.path.join(many, "g%05d.json" % i)
            with open(path, "w") as fh:
                json.dump({"guestbench": "0.1.0", "command": "facts", "guests": [
                    {"name": "g%05d" % i, "target": "unix:g%05d" % i, "status": "ok",
                     "result": facts}]}, fh)
            paths.append(path)
        t0 = time.monotonic()
        # one process with every file (short relative names keep the command line small)
        p = subprocess.run([CLI, "census", "--format", "json", "-o",
                            os.path.join(tmp, "many-census.json")]
                           + [os.path.basename(x) for x in paths],
                           cwd=many, capture_output=True, text=True, timeout=300,
                           stdin=subprocess.DEVNULL)
        took = time.monotonic() - t0
        with open(os.path.join(tmp, "many-census.json")) as fh:
            doc = json.load(fh)
        check("a census of 10,000 saved documents",
              p.returncode == 0 and len(doc["guests"]) == 10000 and len(doc["groups"]) == 7,
              p.stderr)
        print("# census of 10000 saved documents: %.2f s" % took)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
