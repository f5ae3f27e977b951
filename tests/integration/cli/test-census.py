#!/usr/bin/env python3
"""guestbench census with the real CLI: live agents (and a hostile agent serving
this machine's facts under another model), saved facts and bench documents, an
inventory with tags, bad documents and options, 10,000 saved documents, and
--qmp against a real QEMU and against QMP peers that fail. Prints TAP.
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
import threading
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, prom_samples, prom_valid, skip, start_agents, stop, tap_report  # noqa: E402

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


def fake_qmp(sock, answer):
    """A QMP server for one connection: the greeting, capabilities, then answer(command) for
    each command: raw bytes, an object (sent with the command's id), or None (hang up)."""
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(sock)
    srv.listen(1)

    def serve():
        conn, _ = srv.accept()
        with conn, conn.makefile("rwb") as f:
            f.write(b'{"QMP": {"version": {"qemu": {"major": 7, "minor": 2, "micro": 0}}, '
                    b'"capabilities": []}}\r\n')
            f.flush()
            for line in f:
                cmd = json.loads(line)
                out = {"return": {}} if cmd["execute"] == "qmp_capabilities" else answer(cmd)
                if out is None:
                    return
                if isinstance(out, dict):
                    out = json.dumps(dict(out, id=cmd.get("id"))).encode() + b"\r\n"
                f.write(out)
                f.flush()
        srv.close()

    threading.Thread(target=serve, daemon=True).start()


def qmp_checks(tmp, live):
    """census --qmp against a real QEMU (no guest: -machine none), and QMP peers that fail."""
    qmp = os.path.join(tmp, "qmp.sock")
    q = subprocess.Popen(["qemu-system-x86_64", "-machine", "none", "-accel", "tcg", "-S",
                          "-nodefaults", "-display", "none",
                          "-qmp", "unix:%s,server=on,wait=off" % qmp],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_socket(qmp)
        p = cli("census", "--format", "json", "--qmp", qmp, FLEET12)
        doc = json.loads(p.stdout)
        base = doc["baselines"][0]
        # the fleet's baseline lacks cx16 (legacy guests): only the oldest runnable models
        check("--qmp: the fleet's baseline covered by a named model, exit 0",
              p.returncode == 0 and base["qemu_model"] == "Opteron_G1-v1"
              and base["qemu_beyond"] == [] and doc["qemu"]["error"] is None
              and doc["qemu"]["models"] > 30, "%d %s %s" % (p.returncode, base, p.stderr))
        # a pool of Icelake guests: TCG cannot run Haswell and later, and the pool lacks
        # Westmere's arat, so Nehalem, with what the pool has beyond it
        inv = os.path.join(tmp, "pools.ini")
        with open(inv, "w") as fh:
            fh.write("[guest plain]\ntarget=unix:%s\ntags=solo\n" % live)
        web = os.path.join(tmp, "web.json")
        wdoc = json.load(open(FLEET12))
        wdoc["guests"] = [g for g in wdoc["guests"] if g["name"].startswith("web-")]
        write_json(web, wdoc)
        p = cli("census", "--qmp", "unix:" + qmp, web)
        check("--qmp table: the model and what the baseline has beyond it",
              p.returncode == 0 and "QEMU CPU model covering it: Nehalem-v1, and beyond it: "
              in p.stdout and " avx2 " in p.stdout.split("beyond it:")[1],
              "%d %s %s" % (p.returncode, p.stdout, p.stderr))
        p = cli("census", "--qmp", qmp, "--format", "csv", web)
        rows = list(csv.DictReader(io.StringIO(p.stdout)))
        check("--qmp csv: each guest's pool model",
              p.returncode == 0 and len(rows) == 6
              and all(r["qemu_model"] == "Nehalem-v1" for r in rows), p.stdout + p.stderr)
        p = cli("census", "--by", "tag", "--format", "json", "--qmp", qmp, "--inventory", inv)
        doc = json.loads(p.stdout)
        check("--qmp with a live guest of an inventory tag: a model for the fleet and the tag",
              p.returncode == 0 and [b["tag"] for b in doc["baselines"]] == [None, "solo"]
              and all(b["qemu_model"] for b in doc["baselines"]),
              "%d %s %s" % (p.returncode, doc["baselines"], p.stderr))
        # no model covers: a baseline without even what the oldest models have
        bare = os.path.join(tmp, "bare.json")
        bdoc = json.load(open(FLEET12))
        bdoc["guests"] = bdoc["guests"][:1]
        bdoc["guests"][0]["result"]["cpu"]["flags"] = ["fpu", "tsc", "sse2"]
        write_json(bare, bdoc)
        p = cli("census", "--qmp", qmp, bare)
        check("--qmp: no model covers, said so, exit 0",
              p.returncode == 0 and "no named QEMU CPU model of this host covers it" in p.stdout,
              "%d %s" % (p.returncode, p.stdout))
    finally:
        q.kill()
        q.wait()

    # Unreachable monitor: the census is still written, the error named, exit 3.
    gone = os.path.join(tmp, "no-qmp.sock")
    p = cli("census", "--timeout", "2", "--qmp", gone, FLEET12)
    check("--qmp unreachable: census written, error named, exit 3",
          p.returncode == 3 and "baseline of the fleet (12 guests" in p.stdout
          and "QEMU CPU models: --qmp %s: cannot open the monitor" % gone in p.stdout,
          "%d %s %s" % (p.returncode, p.stdout, p.stderr))
    # Peers that answer garbage, a wrong type, or hang up: each named, exit 3.
    for name, answer, want in (
            ("garbage", lambda c: b"this is not json\r\n", "query-cpu-definitions: "),
            ("not a list", lambda c: {"return": "nope"},
             "query-cpu-definitions did not return a list"),
            ("hang-up", lambda c: None, "query-cpu-definitions: "),
            ("bad expansion",
             lambda c: ({"return": [{"name": "m1", "migration-safe": True, "static": False,
                                     "unavailable-features": []}]}
                        if c["execute"] == "query-cpu-definitions"
                        else {"return": {"model": {"name": "base", "props": 7}}}),
             "model m1: ")):
        sock = os.path.join(tmp, "fake-qmp.sock")
        if os.path.exists(sock):
            os.unlink(sock)
        fake_qmp(sock, answer)
        p = cli("census", "--timeout", "5", "--format", "json", "--qmp", sock, FLEET12)
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            doc = {}
        err = (doc.get("qemu") or {}).get("error") or ""
        check("--qmp peer %s: census written, error named, exit 3" % name,
              p.returncode == 3 and len(doc.get("guests", [])) == 12 and want in err
              and doc["baselines"][0]["qemu_model"] is None,
              "%d %r %s" % (p.returncode, err, p.stderr))


def parallel_checks(tmp, real):
    """Documents are read on a thread per processor: the census must not depend on which
    thread is first. 64 documents on distinct models (some slow to read), one with a
    malformed cpu member, against the same guests in one document (read in one piece)
    and against one processor (taskset); the first bad document in operand order is
    the one named."""
    par = os.path.join(tmp, "parallel")
    os.mkdir(par)
    rows, paths = [], []
    for i in range(64):
        facts = copy.deepcopy(real)
        facts["cpu"]["model_name"] = "model-%02d" % (i * 37 % 64)
        facts["cpu"]["flags"] = sorted(real["cpu"]["flags"])[i % 5:]
        if i == 23:
            facts["cpu"]["flags"] = "fpu vme"
        g = {"name": "p%02d" % i, "target": "unix:p%02d" % i, "status": "ok", "result": facts}
        rows.append(g)
        paths.append(os.path.join(par, "p%02d.json" % i))
        saved = {"guestbench": "0.1.0", "command": "facts", "guests": [g]}
        if i % 16 == 0:
            saved["pad"] = list(range(300000))  # slow to read: the next ones finish first
        write_json(paths[-1], saved)
    whole = os.path.join(par, "whole.json")
    write_json(whole, {"guestbench": "0.1.0", "command": "facts", "guests": rows})

    def strip_sources(text):
        doc = json.loads(text)
        for g in doc["guests"]:
            g["source"] = None
        return doc

    p = cli("census", "--format", "json", *paths)
    q = cli("census", "--format", "json", whole)
    doc = json.loads(p.stdout or "null") or {"guests": []}
    check("64 documents read in parallel: the guests in operand order, the malformed one "
          "in its place",
          p.returncode == 3 and [g["name"] for g in doc["guests"]]
          == ["p%02d" % i for i in range(64)]
          and doc["guests"][23]["problem"] == "cpu.flags of the wrong type"
          and [g["source"] for g in doc["guests"]] == paths and len(doc["groups"]) == 63,
          "%d %s" % (p.returncode, p.stderr))
    check("64 documents give the census of the same guests in one document",
          q.returncode == 3 and strip_sources(p.stdout) == strip_sources(q.stdout),
          p.stdout[:400] + q.stdout[:400])
    for fmt in ("table", "csv", "prom"):
        a = cli("census", "--format", fmt, *paths)
        b = cli("census", "--format", fmt, *paths)
        check("64 documents, %s: the same output twice" % fmt,
              a.returncode == 3 and a.stdout == b.stdout and a.stdout != "", a.stderr)
    if shutil.which("taskset"):
        one = subprocess.run(["taskset", "-c", "0", CLI, "census", "--format", "json"] + paths,
                             capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL)
        check("64 documents on one processor (read in turn): the same census",
              one.returncode == 3 and one.stdout == p.stdout, one.stderr)
    else:
        skip("census on one processor", "taskset not installed")

    # Two bad documents: the first in operand order is named, though it is the slower one
    # to read (a large document broken at its end) and the second fails at once.
    slow = os.path.join(par, "slow.json")
    with open(slow, "w") as fh:
        fh.write('{"guestbench": "0.1.0", "command": "facts", "pad": [')
        fh.write(",".join(["1234567"] * 600000))
        fh.write("]")
    fast = os.path.join(par, "fast.json")
    with open(fast, "w") as fh:
        fh.write("{not json")
    for cmd in ([], ["taskset", "-c", "0"] if shutil.which("taskset") else None):
        if cmd is None:
            continue
        p = subprocess.run(cmd + [CLI, "census"] + paths[:5] + [slow] + paths[5:40] + [fast]
                           + paths[40:], capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        check("two bad documents%s: exit 2 naming the first in operand order"
              % (" on one processor" if cmd else ""),
              p.returncode == 2 and slow in p.stderr and fast not in p.stderr
              and p.stdout == "", "%d %s" % (p.returncode, p.stderr))


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
                (["--qmp", "", live], "--qmp"),
                (["--qmp", "libvirt:", live], "--qmp 'libvirt:': expected"),
                ([], "no targets or saved documents given for 'census'")):
            p = cli("census", *args)
            check("usage error: census %s" % " ".join(os.path.basename(a) for a in args),
                  p.returncode == 2 and want in p.stderr and p.stdout == "",
                  "%d %s" % (p.returncode, p.stderr))

        if shutil.which("qemu-system-x86_64"):
            qmp_checks(tmp, live)
        else:
            skip("census --qmp", "qemu-system-x86_64 not installed")

        parallel_checks(tmp, real)

        # 10,000 saved documents, one guest each, on varied models (bench/census times it).
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
        # one process with every file (short relative names keep the command line small)
        p = subprocess.run([CLI, "census", "--format", "json", "-o",
                            os.path.join(tmp, "many-census.json")]
                           + [os.path.basename(x) for x in paths],
                           cwd=many, capture_output=True, text=True, timeout=300,
                           stdin=subprocess.DEVNULL)
        with open(os.path.join(tmp, "many-census.json")) as fh:
            doc = json.load(fh)
        check("a census of 10,000 saved documents",
              p.returncode == 0 and len(doc["guests"]) == 10000 and len(doc["groups"]) == 7,
              p.stderr)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
