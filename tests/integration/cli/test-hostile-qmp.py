#!/usr/bin/env python3
"""A hostile QEMU monitor behind `audit --qmp`: tests/hostile-agent.py in its QMP mode
poses as the monitor of the guest's QEMU, beside a real agent as the guest. The
host is trusted, but what QMP reports about a guest (its disks' names and files,
the CPU model) is set by whoever configured the guest, and a compromised QEMU
process answers anything:

- poisoned strings (ESC, OSC, C1, bidi, 300 columns) in the CPU model, a disk's
  device name, qdev and file: on a real pty of 80 columns no control reaches the
  terminal, no line with that text is wider than the terminal, the escaped text
  is shown; --format json is valid JSON without raw controls, the strings kept;
- no greeting: the guest is an error naming the missing greeting, within --timeout;
- a 5 MiB greeting: an error naming the 4 MiB limit, memory small;
- a greeting nested 100,000 deep: an error naming the depth limit;
- a query-block reply of 2 M zeros (4 MB, under the byte limit, a 200 MB tree):
  an error naming the values limit, memory small.

Usage: test-hostile-qmp.py HOSTILE_AGENT (prints TAP)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from gbtest import (check, run_measured, skip, start_agents, start_hostile, stop,  # noqa: E402
                    tap_report)

CLI = os.environ["GB_CLI"]
DANGER = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202eLIAF\u202c\r"
QMP_LIMIT = 4 * 1024 * 1024
MAX_RSS_KB = 100 * 1024


def load_views():
    """on_pty() and the checks of what a terminal gets, from test-hostile-views.py."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "hostile_views", os.path.join(HERE, "test-hostile-views.py"))
    views = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(views)
    return views


def start_monitor(hostile_agent, tmp, name, scenario, procs):
    return start_hostile(hostile_agent, tmp, name, dict(scenario, __qmp__=True), procs,
                         suffix=".qmp")


def run(args):
    """(rc, stdout, stderr, seconds) of one CLI run."""
    start = time.monotonic()
    proc = subprocess.Popen([CLI] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace")
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err, time.monotonic() - start


def run_rss(args):
    """(rc, stdout, stderr, seconds, peak RSS in KiB) of one CLI run."""
    with tempfile.TemporaryDirectory(prefix="gb-qmp-rss-") as tmp:
        out_path, err_path = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        rc, rss, elapsed = run_measured([CLI] + args, out_path, err_path)
        with open(out_path, encoding="utf-8", errors="replace") as out, \
                open(err_path, encoding="utf-8", errors="replace") as err:
            return rc, out.read(), err.read(), elapsed, rss


def guest_error(out):
    try:
        g = json.loads(out)["guests"][0]
    except (ValueError, KeyError, IndexError):
        return None
    return g.get("error") or ""


POISONED = {
    "query-kvm": {"enabled": True, "present": True},
    "query-cpu-model-expansion": {"model": {"name": DANGER + "E" * 300,
                                            "props": {"aes": True, "vmx": True}}},
    "query-block": [{"device": "drive-" + DANGER + "q" * 300, "qdev": DANGER + "Q" * 100,
                     "inserted": {"drv": "qcow2", "file": "/var/" + DANGER + "f" * 300,
                                  "cache": {"writeback": True, "direct": False,
                                            "no-flush": True}}}],
    "query-cpus-fast": [],
    "query-memdev": [],
    "query-memory-size-summary": {"base-memory": 1073741824},
}


def main(hostile_agent):
    tmp = tempfile.mkdtemp(prefix="gb-hostile-qmp-")
    procs = []
    sanitized = os.environ.get("GB_SANITIZED") == "1"
    views = load_views()
    try:
        agents, socks = start_agents(tmp, ["guest"])
        procs += agents
        guest = socks[0]
        poisoned = start_monitor(hostile_agent, tmp, "poisoned", POISONED, procs)
        silent = start_monitor(hostile_agent, tmp, "silent", {"__greeting__": None}, procs)
        huge = start_monitor(hostile_agent, tmp, "huge",
                             {"__greeting__": {"__raw__": '{"QMP": "' + "a" * (5 << 20)
                                               + '"}\n'}}, procs)
        deep = start_monitor(hostile_agent, tmp, "deep",
                             {"__greeting__": {"__raw__": '{"QMP": ' + "[" * 100000
                                               + "]" * 100000 + "}\n"}}, procs)
        tiny = start_monitor(hostile_agent, tmp, "tiny",
                             dict(POISONED, **{"query-block": {"__zeros__": 2000000}}), procs)

        # wide enough for the findings' text after the guest's long socket path
        rc, text = views.on_pty(["--timeout", "10", "audit", "--qmp", poisoned, guest], cols=160)
        plain = views.check_terminal("audit --qmp, poisoned monitor, on a pty", rc, text, 1,
                                     ["HOST-CACHE-UNSAFE", "\\x1b]0;owned\\x07", "…"], cols=160)
        print("# " + "\n# ".join(l for l in plain.split("\n") if "HOST-" in l))
        rc, out, err, _ = run(["--timeout", "10", "--format", "json", "audit", "--qmp",
                               poisoned, guest])
        try:
            doc = json.loads(out)
            host = json.dumps(doc["guests"][0]["result"]["host"], ensure_ascii=False)
        except (ValueError, KeyError, IndexError, TypeError):
            doc, host = None, ""
        check("poisoned monitor, --format json: valid JSON with the host view", doc is not None
              and host != "", (rc, out[:500], err[-500:]))
        check("poisoned monitor, --format json: no raw control or bidi character",
              not any(c in out for c in "\x1b\x07\x9b\u202e\r"), out[:300])
        check("poisoned monitor, --format json: the CPU model kept whole, escaped as JSON",
              "E" * 300 in out and "\\u001b]0;owned\\u0007" in out, host[:300])

        rc, out, err, elapsed = run(["--timeout", "2", "--format", "json", "audit", "--qmp",
                                     silent, guest])
        check("monitor without greeting: rc 3, the guest an error naming the greeting "
              "(%.1f s)" % elapsed, rc == 3 and "QMP greeting" in (guest_error(out) or ""),
              (rc, out[:600], err[-300:]))
        check("monitor without greeting: over within --timeout and a margin", elapsed < 2 + 8,
              elapsed)

        rc, out, err, elapsed, rss = run_rss(["--timeout", "10", "--format", "json", "audit",
                                              "--qmp", huge, guest])
        check("5 MiB greeting: rc 3, an error naming the 4 MiB limit",
              rc == 3 and "exceeds %d bytes" % QMP_LIMIT in (guest_error(out) or ""),
              (rc, out[:600], err[-300:]))
        if sanitized:
            skip("5 MiB greeting: peak RSS bounded", "ASan keeps freed memory")
        else:
            check("5 MiB greeting: peak RSS %d MiB, below %d MiB" % (rss >> 10, MAX_RSS_KB >> 10),
                  rss < MAX_RSS_KB, rss)

        rc, out, err, elapsed = run(["--timeout", "10", "--format", "json", "audit", "--qmp",
                                     deep, guest])
        check("greeting nested 100,000 deep: rc 3, an error naming the depth limit",
              rc == 3 and "nesting exceeds 64 levels" in (guest_error(out) or ""),
              (rc, out[:600], err[-300:]))

        rc, out, err, elapsed, rss = run_rss(["--timeout", "10", "--format", "json", "audit",
                                              "--qmp", tiny, guest])
        check("query-block of 2 M zeros: an error naming the values limit",
              "more than %d values" % (QMP_LIMIT // 8) in out, (rc, out[:800], err[-300:]))
        if sanitized:
            skip("query-block of 2 M zeros: peak RSS bounded", "ASan keeps freed memory")
        else:
            check("query-block of 2 M zeros: peak RSS %d MiB, below %d MiB"
                  % (rss >> 10, MAX_RSS_KB >> 10), rss < MAX_RSS_KB, rss)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1])
    sys.exit(tap_report())
