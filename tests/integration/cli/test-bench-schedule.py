#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench's schedule across a fleet, against real agents on this host (one
hypervisor): one benchmark at a time per hypervisor by default (checked from
the agents' own job start and end times), --per-host N, --contention's solo,
loaded and ratio, inventory host= groups running in parallel, the idle check
marked under a real CPU load, compare's warning, and the bad cases: --per-host
refused before any guest, a stopped (SIGSTOP) agent in the middle of the
schedule, Ctrl-C between rounds on a real pty. Prints TAP."""
import fcntl
import json
import os
import pty
import re
import select
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from datetime import datetime

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, signal_agent, start_agents, stop, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]
ESCAPES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# short jobs: the idle check (1 s) and 0.3 s of AES at one block size
AES = ["bench", "aes", "--seconds", "0.3", "--sizes", "1k", "--no-save"]


def cli(*args, timeout=120):
    return subprocess.run([CLI] + list(args), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout)


def doc_of(p):
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"guests": []}


def when(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def interval(guest):
    """The agent's job, start and end, as its result says (one host, one clock)."""
    r = guest.get("result") or {}
    return when(r["timestamp"]), when(r["finished"])


def overlap(a, b):
    return a[0] < b[1] and b[0] < a[1]


def any_overlap(intervals):
    return any(overlap(a, b) for i, a in enumerate(intervals) for b in intervals[i + 1:])


def rate(guest):
    return guest["result"]["metrics"][0]["value"]


def on_pty(args, interrupt_when, action=None):
    """The CLI on a pty; once interrupt_when(output so far) holds, action(cli process) (SIGINT
    to the CLI by default). Returns (rc, output, whether the action ran)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 200, 0, 0))
    env = dict(os.environ, TERM="xterm", COLUMNS="200")
    p = subprocess.Popen([CLI] + args, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                         env=env)
    os.close(slave)
    out, sent, start = b"", False, time.monotonic()
    while time.monotonic() - start < 90:
        if not sent and interrupt_when(ESCAPES.sub("", out.decode("utf-8", "replace"))):
            if action is None:
                p.send_signal(signal.SIGINT)
            else:
                action(p)
            sent = True
        r, _, _ = select.select([master], [], [], 0.05)
        if not r:
            if p.poll() is not None:
                break
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(30), ESCAPES.sub("", out.decode("utf-8", "replace")), sent


def main(hostile_agent):
    tmp = tempfile.mkdtemp(prefix="gb-sched-")
    procs, socks = start_agents(tmp, ["a1", "a2", "a3", "a4"])
    burners = []
    try:
        cases(tmp, procs, socks, burners)
        hostile(tmp, procs, hostile_agent)
    finally:
        stop(burners)
        for p in procs:
            if p.poll() is None:
                signal_agent(p.pid, signal.SIGCONT)
        stop(procs)
        subprocess.run(["rm", "-rf", tmp])
    return tap_report()


def cases(tmp, procs, socks, burners):
    host = socket.gethostname()

    # ---- bad --per-host: usage errors before any guest (the socket does not exist) ------
    gone = os.path.join(tmp, "gone.sock")
    for value, want in (("0", "invalid value '0' for --per-host (expected a whole number "
                               "from 1 to 10000)"),
                        ("-1", "invalid value '-1' for --per-host"),
                        ("two", "invalid value 'two' for --per-host"),
                        ("", "invalid value '' for --per-host"),
                        ("10001", "invalid value '10001' for --per-host")):
        p = cli(*AES, "--per-host=" + value, gone)
        check("--per-host=%r: exit 2 before any guest, naming the limit" % value,
              p.returncode == 2 and want in p.stderr and gone not in p.stderr,
              (p.returncode, p.stderr))
    p = cli(*AES, "--per-host", "2", "--contention", gone)
    check("--per-host with --contention: exit 2, says why",
          p.returncode == 2 and "--per-host does not go with --contention" in p.stderr,
          (p.returncode, p.stderr))

    # ---- one guest alone: the reference ------------------------------------------------
    p = cli(*AES, "--format", "json", socks[0])
    solo = doc_of(p)["guests"]
    check("solo: exit 0", p.returncode == 0, p.stderr)
    g = solo[0] if solo else {}
    idle = (g.get("result") or {}).get("idle", {})
    check("solo: the result carries the idle check (busy and steal % over 1 s)",
          idle.get("window_ms") == 1000 and 0 <= idle.get("busy_percent", -1) <= 100
          and 0 <= idle.get("steal_percent", -1) <= 100, idle)
    check("solo: labels say this host and concurrent 1",
          (g.get("result") or {}).get("labels") == {"hypervisor": host, "concurrent": 1},
          (g.get("result") or {}).get("labels"))

    # ---- default: one at a time on this host -------------------------------------------
    default_doc = os.path.join(tmp, "default.json")
    p = cli(*AES, "--format", "json", "-o", default_doc, *socks)
    with open(default_doc) as f:
        serial = json.load(f)["guests"]
    spans = [interval(g) for g in serial]
    check("default: exit 0, four results", p.returncode == 0 and len(serial) == 4, p.stderr)
    check("default: no two agents' jobs overlapped (their start and end times)",
          not any_overlap(spans), spans)
    check("default: in target order", spans == sorted(spans), spans)
    check("default: each result says concurrent 1 on this host",
          all(g["result"]["labels"] == {"hypervisor": host, "concurrent": 1} for g in serial),
          [g["result"].get("labels") for g in serial])
    check("default: the estimate before the start says 4 rounds, one at a time",
          re.search(r"^4 guests on 1 hypervisor, one at a time on each: 4 rounds of about "
                    r"[0-9]+ s, about [0-9]+ s in all$", p.stderr, re.M), p.stderr)

    # ---- --per-host 4: all at once -----------------------------------------------------
    loaded_doc = os.path.join(tmp, "loaded.json")
    p = cli(*AES, "--per-host", "4", "--format", "json", "-o", loaded_doc, *socks)
    with open(loaded_doc) as f:
        together = json.load(f)["guests"]
    spans4 = [interval(g) for g in together]
    check("--per-host 4: exit 0", p.returncode == 0 and len(together) == 4, p.stderr)
    check("--per-host 4: the agents' jobs overlapped", any_overlap(spans4), spans4)
    check("--per-host 4: each result says concurrent 4",
          all(g["result"]["labels"]["concurrent"] == 4 for g in together),
          [g["result"].get("labels") for g in together])
    check("--per-host 4: one round", "at most 4 at a time on each: 1 round " in p.stderr,
          p.stderr)
    # two cores, four AES jobs: one at a time each gets more than when all run at once
    one_at_a_time = statistics.median(rate(g) for g in serial)
    all_at_once = statistics.median(rate(g) for g in together)
    check("default figures are above the all-at-once ones (median %.3g > %.3g B/s)"
          % (one_at_a_time, all_at_once), one_at_a_time > all_at_once)

    # ---- compare warns when the sides' concurrent differ ------------------------------
    p = cli("compare", default_doc, loaded_doc)
    said = re.sub(r"\s+", " ", p.stdout)
    check("compare default vs --per-host 4: warns about labels.concurrent",
          p.returncode == 0 and "warning: the sides ran with different numbers of benchmarks "
          "at once on their hypervisor (labels.concurrent: " in said, (p.returncode, said))
    p = cli("compare", "--format", "json", default_doc, loaded_doc)
    check("compare --format json: the warning is in warnings, each column's concurrent",
          any("labels.concurrent" in w for w in doc_of(p).get("warnings", []))
          and [c.get("concurrent") for c in doc_of(p).get("columns", [])] == [1] * 4 + [4] * 4,
          p.stdout[-800:])
    p = cli("compare", default_doc, default_doc)
    check("compare default vs default: no such warning",
          p.returncode == 0 and "labels.concurrent" not in p.stdout + p.stderr, p.stdout)

    # ---- --contention: solo, loaded and ratio ------------------------------------------
    p = cli(*AES, "--contention", "--format", "json", *socks)
    cont = doc_of(p)["guests"]
    check("--contention: exit 0, four guests", p.returncode == 0 and len(cont) == 4, p.stderr)
    samples = [((g.get("result") or {}).get("contention") or {}).get("samples", [{}])[0]
               for g in cont]
    check("--contention: each guest has solo, loaded and ratio = loaded / solo",
          all(s.get("solo") and s.get("loaded") and
              abs(s["ratio"] - s["loaded"] / s["solo"]) < 1e-9 for s in samples), samples)
    # that the loaded pass loads: its four jobs ran at once, as the agents' own
    # start and end times say (the ratio itself, 0.5 to 0.8 here, is a
    # measurement: another load on the machine moves it, so it is not checked)
    loaded_spans = [interval(g) for g in cont if g.get("result")]
    check("--contention: the four loaded jobs ran at once (mean ratio %.2f)"
          % statistics.mean(s.get("ratio") or 0 for s in samples),
          len(loaded_spans) == 4
          and max(a for a, _ in loaded_spans) < min(b for _, b in loaded_spans), loaded_spans)
    check("--contention: the loaded result says concurrent 4, its solo result 1",
          all(g["result"]["labels"]["concurrent"] == 4 and
              g["result"]["contention"]["solo"]["labels"]["concurrent"] == 1 for g in cont
              if g.get("result")), [g.get("result", {}).get("labels") for g in cont])
    solo_spans = [interval({"result": g["result"]["contention"]["solo"]}) for g in cont
                  if g.get("result")]
    check("--contention: the solo runs did not overlap", len(solo_spans) == 4
          and not any_overlap(solo_spans), solo_spans)
    check("--contention: the estimate names the solo pass and the loaded one",
          "solo pass: 4 guests on 1 hypervisor, one at a time on each: 4 rounds" in p.stderr
          and "then all at once" in p.stderr
          and "loaded pass: 4 guests on 1 hypervisor, all at once on each" in p.stderr,
          p.stderr)
    p = cli(*AES, "--contention", *socks[:2])
    rows = [ln for ln in p.stdout.splitlines()
            if re.match(r"^\S+\s+aes-128-gcm\s+block_size=1024\s+\S+ [kMG]?B/s\s+\S+ "
                        r"[kMG]?B/s\s+[0-9]+\.[0-9]{2}$", ln)]
    check("--contention table: SOLO, LOADED, RATIO per guest",
          p.returncode == 0 and "RATIO = LOADED / SOLO" in p.stdout and len(rows) == 2,
          p.stdout)

    # ---- inventory host=: two hypervisors in parallel, each one at a time --------------
    inv = os.path.join(tmp, "fleet.ini")
    with open(inv, "w") as f:
        for i, sock in enumerate(socks):
            f.write("[guest g%d]\ntarget=%s\nhost=%s\n" % (i + 1, sock,
                                                           "hv-a" if i < 2 else "hv-b"))
    p = cli(*AES, "--inventory", inv, "--format", "json")
    by = {g["name"]: g for g in doc_of(p)["guests"]}
    spans = {n: interval(g) for n, g in by.items() if g.get("result")}
    check("host=: exit 0, each result labelled with its hypervisor",
          p.returncode == 0 and len(spans) == 4 and
          [by[n]["result"]["labels"]["hypervisor"] for n in ("g1", "g2", "g3", "g4")]
          == ["hv-a", "hv-a", "hv-b", "hv-b"], (p.returncode, p.stderr, by.keys()))
    if len(spans) == 4:
        check("host=: one at a time inside each hypervisor",
              not overlap(spans["g1"], spans["g2"]) and not overlap(spans["g3"], spans["g4"]),
              spans)
        check("host=: the two hypervisors in parallel",
              overlap(spans["g1"], spans["g3"]) and overlap(spans["g2"], spans["g4"]), spans)
    check("host=: 2 rounds for 2 hypervisors",
          "4 guests on 2 hypervisors, one at a time on each: 2 rounds" in p.stderr, p.stderr)

    # ---- a guest that was not idle is marked ------------------------------------------
    burn = "import time\nend = time.monotonic() + 20\nwhile time.monotonic() < end: pass\n"
    for _ in range(os.cpu_count() or 2):
        burners.append(subprocess.Popen([sys.executable, "-c", burn]))
    time.sleep(0.3)
    p = cli(*AES, socks[0])
    stop(burners)
    check("CPU burners: the table marks the guest NOT IDLE with the 20 % threshold",
          p.returncode == 0 and re.search(r"NOT IDLE: %s was [0-9]+ %% busy \(steal [0-9]+ "
                                          r"%%\) in the second before its run \(more than "
                                          r"20 %%\)" % re.escape(socks[0]), p.stdout),
          p.stdout)

    # ---- a stopped agent in the middle of the schedule --------------------------------
    signal_agent(procs[1].pid, signal.SIGSTOP)
    t0 = time.monotonic()
    p = cli(*AES, "--timeout", "2", "--format", "json", *socks[:3])
    took = time.monotonic() - t0
    signal_agent(procs[1].pid, signal.SIGCONT)
    gs = doc_of(p)["guests"]
    status = [g.get("status") for g in gs]
    check("SIGSTOP a2: exit 3, a1 and a3 ok, a2 timed out",
          p.returncode == 3 and status == ["ok", "timeout", "ok"], (p.returncode, status))
    check("SIGSTOP a2: its error says it timed out", len(gs) == 3 and
          "timed out after 2 s" in (gs[1].get("error") or ""), gs[1:2])
    if status == ["ok", "timeout", "ok"]:
        check("SIGSTOP a2: a3 ran after a1, alone",
              interval(gs[0])[1] <= interval(gs[2])[0]
              and gs[2]["result"]["labels"]["concurrent"] == 1, (gs[0], gs[2]))
    check("SIGSTOP a2: the run did not wait beyond the timeout (%.1f s)" % took, took < 30)

    # ---- an agent that stops answering in the middle of its job ----------------------
    def freeze(_):
        signal_agent(procs[1].pid, signal.SIGSTOP)

    rc, out, sent = on_pty(["bench", "aes", "--seconds", "1", "--sizes", "1k", "--no-save",
                            "--timeout", "2"] + socks[:3],
                           lambda text: re.search(r"round 2/3, .*%s: aes: aes-128-gcm"
                                                  % re.escape(socks[1]), text), freeze)
    signal_agent(procs[1].pid, signal.SIGCONT)
    check("SIGSTOP mid-job: a2 was stopped while its job ran", sent, out[-2000:])
    check("SIGSTOP mid-job: exit 3", rc == 3, (rc, out[-2000:]))
    check("SIGSTOP mid-job: a2 timed out, a1 and a3 measured",
          re.search(r"^%s\s+timeout\s+timed out after 2 s" % re.escape(socks[1]), out, re.M)
          and all(re.search(r"^%s\s+aes-128-gcm\s+[0-9.]+k" % re.escape(s), out, re.M)
                  for s in (socks[0], socks[2])), out[-2000:])
    # a2's agent goes on with its job: let it end before the next case uses that agent
    for _ in range(100):
        if '"running"' not in cli("jobs", "--format", "json", socks[1]).stdout:
            break
        time.sleep(0.2)

    # ---- Ctrl-C between rounds on a real pty ------------------------------------------
    rc, out, sent = on_pty(["bench", "aes", "--seconds", "1", "--sizes", "1k", "--no-save"]
                           + socks[:3], lambda text: "round 2/3" in text)
    check("Ctrl-C: the progress line said round 2/3 before the signal", sent, out[-2000:])
    check("Ctrl-C: exit 130", rc == 130, (rc, out[-2000:]))
    check("Ctrl-C: the first guest's figure is printed",
          re.search(r"^%s\s+aes-128-gcm\s+[0-9.]+k" % re.escape(socks[0]), out, re.M),
          out[-2000:])
    check("Ctrl-C: the running guest was cancelled",
          re.search(r"^%s\s+error\s+cancelled" % re.escape(socks[1]), out, re.M), out[-2000:])
    check("Ctrl-C: the last guest never started",
          re.search(r"^%s\s+error\s+not started \(interrupted by SIGINT\)"
                    % re.escape(socks[2]), out, re.M), out[-2000:])


def hostile(tmp, procs, hostile_agent):
    """A guest that writes the CLI's members itself (labels, contention) and an idle check
    out of range: the labels are the CLI's, the rest is not shown."""
    scenario = os.path.join(tmp, "scenario.json")
    fake = {"metric": "aes-128-gcm", "unit": "B/s", "labels": {"block_size": "1024"},
            "solo": 1, "loaded": 1000, "ratio": 1000}
    with open(scenario, "w") as f:
        json.dump({"gb-bench-test": "aes",
                   "gb-bench-result": {
                       "test": "aes", "params": {"seconds": 0.3}, "agent_version": "0",
                       "runs": 1, "facts": {}, "timestamp": "2026-12-04T00:00:00Z",
                       "finished": "2026-12-04T00:00:01Z",
                       "idle": {"busy_percent": 1e9, "steal_percent": "lots"},
                       "labels": {"hypervisor": "evil", "concurrent": 99},
                       "contention": {"samples": [fake]},
                       "metrics": [{"metric": "aes-128-gcm", "value": 5e8, "unit": "B/s",
                                    "labels": {"block_size": "1024"}}]}}, f)
    bad = os.path.join(tmp, "hostile.sock")
    procs.append(subprocess.Popen([sys.executable, hostile_agent, bad, scenario],
                                  stdin=subprocess.DEVNULL))
    for _ in range(200):
        if os.path.exists(bad):
            break
        time.sleep(0.05)
    p = cli(*AES, "--format", "json", bad)
    r = (doc_of(p)["guests"] or [{}])[0].get("result") or {}
    check("hostile guest: its labels replaced by the CLI's, its contention dropped",
          p.returncode == 0 and r.get("labels") == {"hypervisor": socket.gethostname(),
                                                    "concurrent": 1}
          and "contention" not in r, (p.returncode, r))
    p = cli(*AES, bad)
    check("hostile guest: no contention table, no NOT IDLE from a busy % out of range",
          p.returncode == 0 and "RATIO" not in p.stdout and "NOT IDLE" not in p.stdout,
          p.stdout)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
