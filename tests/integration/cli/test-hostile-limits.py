#!/usr/bin/env python3
"""One hostile guest cannot make the others time out, nor the CLI's memory grow.

50 real agents and one hostile agent (tests/hostile-agent.py) in one CLI run with
--timeout 15, the real agents answering facts after 1 s (--steal-window 1000, as a
real guest would) while the hostile one answers at once (with --timeout 3, an
ASan build on a loaded machine once timed out half the honest guests: the limits
are what is tested, and a CLI that parsed the huge reply still fails on the
hostile guest's error and on the peak RSS):

- a gb-get-facts reply of 15.6 MB of tiny values (7.8 M zeros, under the CLI's
  16 MiB cap): the 50 honest guests ok, the hostile one an error naming the facts
  limit (1 MiB), and the CLI's peak RSS far below what parsing it would take;
- the same 15.6 MB sent as a stale reply before each guest-sync-delimited answer:
  skipped unparsed, all 51 guests ok;
- a facts reply just under the limit (one value per 8 bytes, the most a reply
  may carry) is taken, with a peak RSS in proportion;
- 20 guests at once each sending facts of tiny values just under 1 MiB (0.5 M
  zeros, a tree of about 42 MB each: 846 MB for the 20 when they were taken):
  each an error naming the values limit, the CLI's peak RSS small; 20 guests at
  the values limit: taken, the peak RSS within 20 x 12 times the limit;
- 8 guests answering `bench aes` with a result of 15 MB (1.9 M values of 8
  bytes, under the 16 MiB cap and the values limit: 156 MB of tree each, 469 MB
  for three when the cap was the limit): each an error naming the job's result
  limit (facts 1 MiB + 64 KiB + 2 x 6 sizes x 512 bytes), the CLI's peak RSS
  small, and a real agent's bench in the same run ok;
- a guest-ping reply of 6 KB: an error naming the ping's limit (4 KiB), beside a
  real agent answering the same ping;
- a reply that came in time counts even when the CLI could not read it before
  its deadline passed: a proxy in front of a real agent stops the CLI (SIGSTOP)
  when the ping goes through, hands it the agent's reply, and lets it go on
  (SIGCONT) after the timeout: the deadline first reads what has arrived, so the
  guest is ok, not timed out.

Usage: test-hostile-limits.py HOSTILE_AGENT (prints TAP)
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import (by_target, check, run_measured, skip, start_agents, start_hostile,  # noqa: E402
                    stop, tap_report)

CLI = os.environ["GB_CLI"]
HONEST = 50
# 7.8 M zeros: "0," each, 15.6 MB, under the old single cap of 16 MiB
HUGE = {"__zeros__": 7800000, "__member__": "cpus"}
FACTS_LIMIT = 1024 * 1024
# a reply may carry one value per 8 bytes of its limit
FACTS_VALUES = FACTS_LIMIT // 8
# values of 8 bytes ("1000000,"), a few less than the limit for the object around them
AT_LIMIT = {"__zeros__": FACTS_VALUES - 16, "__member__": "cpus", "__value__": "1000000"}
# tiny values just under the byte limit: far more values than the limit
TINY = {"__zeros__": (FACTS_LIMIT - 100) // 2, "__member__": "cpus"}
FLEET = 20
# 20 trees of 131,000 values (about 10 MB each) and the CLI
MAX_FLEET_RSS_KB = 400 * 1024
# the limit of an aes job's result with the default sizes and one run (bench-args.h)
AES_RESULT_LIMIT = FACTS_LIMIT + 64 * 1024 + 2 * 6 * 512
BIG_FLEET = 8
BIG_RESULT = {"gb-bench-start": {"job": 1},
              "gb-bench-result": {"__zeros__": 1900000, "__member__": "metrics",
                                  "__value__": "1000000"}}
# the peak RSS of a run, in KiB: a few MB of CLI plus what the replies take
# (a 1 MiB reply of tiny values builds a tree of about 50 MB); parsing the
# 15.6 MB reply took 838 MB
MAX_RSS_KB = 160 * 1024



def run_cli(tmp, args):
    """(rc, document, stderr, seconds, peak RSS in KiB) of one CLI run."""
    out_path = os.path.join(tmp, "out.json")
    err_path = os.path.join(tmp, "err.txt")
    rc, rss, elapsed = run_measured([CLI] + args, out_path, err_path)
    with open(out_path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    with open(err_path, encoding="utf-8", errors="replace") as f:
        err_text = f.read()
    try:
        doc = json.loads(text)
    except ValueError:
        doc = {"unparsed": text[:500]}
    return rc, doc, err_text, elapsed, rss


def pump(src, dst, stop_on=None, on_stop=None, sent=None):
    """Copies src to dst; on the first chunk holding stop_on, calls on_stop(chunk) instead;
    calls sent() after each chunk copied."""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if stop_on is not None and stop_on in data:
                stop_on = None
                on_stop(data)
                continue
            dst.sendall(data)
            if sent is not None:
                sent()
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def run_stopped_cli(tmp, agent_sock, timeout):
    """ping through a proxy to a real agent that holds the CLI stopped across its deadline."""
    path = os.path.join(tmp, "proxy.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(1)
    proc_holder = {}
    events = []
    answered = threading.Event()

    def sent():
        if "stopped" in events:
            answered.set()

    def serve():
        conn, _ = server.accept()
        agent = socket.socket(socket.AF_UNIX)
        agent.connect(agent_sock)

        def stop_and_answer(request):
            pid = proc_holder["proc"].pid
            os.kill(pid, signal.SIGSTOP)
            events.append("stopped")
            agent.sendall(request)
            # the other thread hands the reply on
            if answered.wait(10):
                events.append("answered")
            time.sleep(timeout + 1)
            os.kill(pid, signal.SIGCONT)
            events.append("continued")

        back = threading.Thread(target=pump, args=(agent, conn, None, None, sent), daemon=True)
        back.start()
        pump(conn, agent, b'"guest-ping"', stop_and_answer)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    start = time.monotonic()
    proc = subprocess.Popen([CLI, "--timeout", str(timeout), "--format", "json", "ping", path],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc_holder["proc"] = proc
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGCONT)
        proc.kill()
        out, err = proc.communicate()
    server.close()
    try:
        doc = json.loads(out)
    except ValueError:
        doc = {"unparsed": out[:500]}
    return proc.returncode, doc, err, time.monotonic() - start, events



def main(hostile_agent):
    tmp = tempfile.mkdtemp(prefix="gb-hostile-limits-")
    procs = []
    sanitized = os.environ.get("GB_SANITIZED") == "1"
    try:
        huge = start_hostile(hostile_agent, tmp, "huge", {"gb-get-facts": HUGE}, procs)
        stale = start_hostile(hostile_agent, tmp, "stale",
                              {"__stale__": HUGE, "gb-get-facts": {"agent_version": "9"}},
                              procs)
        at_limit = start_hostile(hostile_agent, tmp, "at-limit", {"gb-get-facts": AT_LIMIT},
                                 procs)
        ping = start_hostile(hostile_agent, tmp, "ping",
                             {"guest-ping": {"__zeros__": 300, "__value__": '"%s"' % ("x" * 18)}},
                             procs)
        tiny = [start_hostile(hostile_agent, tmp, "tiny%02d" % i, {"gb-get-facts": TINY}, procs)
                for i in range(FLEET)]
        big = [start_hostile(hostile_agent, tmp, "big%02d" % i, BIG_RESULT, procs)
               for i in range(BIG_FLEET)]
        full = [start_hostile(hostile_agent, tmp, "full%02d" % i, {"gb-get-facts": AT_LIMIT},
                              procs) for i in range(FLEET)]
        agents, socks = start_agents(tmp, ["honest%02d" % i for i in range(HONEST)])
        procs += agents
        os.environ["XDG_DATA_HOME"] = os.path.join(tmp, "data")

        # a reply just under the limit is taken, at a cost in proportion
        rc, doc, err, elapsed, rss = run_cli(
            tmp, ["--timeout", "10", "--format", "json", "facts", at_limit])
        g = by_target(doc).get(at_limit, {})
        check("facts reply at the values limit, just under 1 MiB: taken (status ok)",
              rc == 0 and g.get("status") == "ok"
              and len((g.get("result") or {}).get("cpus") or []) == AT_LIMIT["__zeros__"],
              (rc, str(g)[:300], err[-500:]))
        if sanitized:
            skip("facts reply just under 1 MiB: peak RSS bounded", "ASan keeps freed memory")
        else:
            check("facts reply just under 1 MiB: peak RSS %d MiB, below %d MiB"
                  % (rss // 1024, MAX_RSS_KB // 1024), rss < MAX_RSS_KB, rss)

        # a fleet of guests each sending as many tiny values as fit in the byte limit
        rc, doc, err, elapsed, rss = run_cli(
            tmp, ["--timeout", "20", "--format", "json", "facts"] + tiny)
        guests = by_target(doc)
        refused = [t for t in tiny if guests.get(t, {}).get("error") ==
                   "reply to gb-get-facts over its size limit: JSON message has more than "
                   "%d values" % FACTS_VALUES]
        check("%d guests with 0.5 M tiny values each: every one an error naming the values "
              "limit (%d), exit status 3" % (FLEET, len(refused)),
              rc == 3 and len(refused) == FLEET, (rc, list(guests.values())[:2], err[-500:]))
        if sanitized:
            skip("%d guests with tiny values: peak RSS bounded" % FLEET, "ASan keeps freed memory")
        else:
            check("%d guests with tiny values: peak RSS %d MiB, below %d MiB"
                  % (FLEET, rss // 1024, MAX_RSS_KB // 1024), rss < MAX_RSS_KB, rss)
        rc, doc, err, elapsed, rss = run_cli(
            tmp, ["--timeout", "20", "--format", "table", "facts"] + full)
        check("%d guests at the values limit: taken, rc 0" % FLEET, rc == 0, (rc, err[-500:]))
        if sanitized:
            skip("%d guests at the values limit: peak RSS bounded" % FLEET,
                 "ASan keeps freed memory")
        else:
            check("%d guests at the values limit: peak RSS %d MiB, below %d MiB"
                  % (FLEET, rss // 1024, MAX_FLEET_RSS_KB // 1024), rss < MAX_FLEET_RSS_KB, rss)

        # bench results far larger than the job asked for
        rc, doc, err, elapsed, rss = run_cli(
            tmp, ["--timeout", "60", "--format", "json", "--no-save", "bench", "aes",
                  "--seconds", "0.1"] + big + [socks[0]])
        guests = by_target(doc)
        refused = [t for t in big if guests.get(t, {}).get("error") ==
                   "reply to gb-bench-status over its size limit: JSON message exceeds %d bytes"
                   % AES_RESULT_LIMIT]
        check("%d guests with a 15 MB bench result: every one an error naming the job's "
              "result limit (%d)" % (BIG_FLEET, len(refused)), len(refused) == BIG_FLEET,
              (rc, list(guests.values())[:2], err[-500:]))
        check("the real agent's bench in the same run is ok, exit status 3",
              rc == 3 and guests.get(socks[0], {}).get("status") == "ok", guests.get(socks[0]))
        if sanitized:
            skip("%d guests with a 15 MB bench result: peak RSS bounded" % BIG_FLEET,
                 "ASan keeps freed memory")
        else:
            check("%d guests with a 15 MB bench result: peak RSS %d MiB, below %d MiB"
                  % (BIG_FLEET, rss // 1024, MAX_RSS_KB // 1024), rss < MAX_RSS_KB, rss)

        # the huge reply among 50 honest guests
        rc, doc, err, elapsed, rss = run_cli(
            tmp, ["--timeout", "15", "--format", "json", "facts", "--steal-window", "1000"] + socks + [huge])
        guests = by_target(doc)
        ok = [s for s in socks if guests.get(s, {}).get("status") == "ok"]
        bad = {s: guests.get(s) for s in socks if s not in ok}
        check("huge facts reply: all %d honest guests ok (%d ok, %.1f s)"
              % (HONEST, len(ok), elapsed), len(ok) == HONEST,
              (rc, list(bad.items())[:3], err[-1000:]))
        h = guests.get(huge, {})
        check("huge facts reply: the hostile guest is an error naming the values limit",
              h.get("status") == "error" and h.get("error") ==
              "reply to gb-get-facts over its size limit: JSON message has more than %d values"
              % FACTS_VALUES, h)
        check("huge facts reply: exit status 3 (one guest failed)", rc == 3, rc)
        if sanitized:
            skip("huge facts reply: peak RSS bounded", "ASan keeps freed memory")
        else:
            check("huge facts reply: peak RSS %d MiB, below %d MiB" % (rss // 1024,
                                                                        MAX_RSS_KB // 1024),
                  rss < MAX_RSS_KB, rss)

        # the same bytes as a stale reply before the sync's answer
        rc, doc, err, elapsed, rss = run_cli(
            tmp, ["--timeout", "15", "--format", "json", "facts", "--steal-window", "1000"] + socks + [stale])
        guests = by_target(doc)
        ok = [s for s in socks + [stale] if guests.get(s, {}).get("status") == "ok"]
        check("stale huge reply during sync: all %d guests ok, rc 0 (%d ok, %.1f s)"
              % (HONEST + 1, len(ok), elapsed), len(ok) == HONEST + 1 and rc == 0,
              (rc, guests.get(stale), err[-1000:]))
        if sanitized:
            skip("stale huge reply: peak RSS bounded", "ASan keeps freed memory")
        else:
            check("stale huge reply: peak RSS %d MiB, below %d MiB" % (rss // 1024,
                                                                       MAX_RSS_KB // 1024),
                  rss < MAX_RSS_KB, rss)

        # a ping's limit is a few KiB
        rc, doc, err, elapsed, rss = run_cli(
            tmp, ["--timeout", "3", "--format", "json", "ping", socks[0], ping])
        guests = by_target(doc)
        p = guests.get(ping, {})
        check("6 KB ping reply: an error naming the 4 KiB limit, exit status 3",
              rc == 3 and p.get("status") == "error" and p.get("error") ==
              "reply to guest-ping over its size limit: JSON message exceeds 4096 bytes",
              (rc, p))
        check("6 KB ping reply: the real agent beside it is ok",
              guests.get(socks[0], {}).get("status") == "ok", guests.get(socks[0]))


        # the reply in the socket when the deadline fires: read first, then judged
        rc, doc, err, elapsed, events = run_stopped_cli(tmp, socks[1], 1)
        g = (doc.get("guests") or [{}])[0]
        check("stopped across its deadline with the reply in the socket: ok, not timed out "
              "(%.1f s)" % elapsed,
              events == ["stopped", "answered", "continued"] and rc == 0
              and g.get("status") == "ok" and elapsed > 2, (rc, events, g, err[-500:]))
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1])
    sys.exit(tap_report())
