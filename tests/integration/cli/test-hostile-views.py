#!/usr/bin/env python3
"""What a terminal gets from the text views of facts, audit and compare when a
hostile guest's strings are long or carry controls: a hostile agent
(tests/hostile-agent.py) answers gb-get-facts with a real agent's facts whose
CPU model is 300 columns, a disk and a NIC named with 81 columns, and strings
carrying ESC, CSI, OSC, BEL, C1 and bidi controls; its bench results (saved,
then compared) carry the same in label values. The CLI runs on a real pty of
80 columns (stdout and stderr):

- no line holding guest text is wider than the terminal (so none wraps into
  what reads as a row of its own), and no guest string is longer than a
  table's last cell (240 columns) when not on a terminal;
- no byte a terminal obeys reaches it but the CLI's own colours;
- what was cut ends in "…", and the escaped start of each string is there.

Usage: test-hostile-views.py HOSTILE_AGENT (prints TAP)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unicodedata

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, start_agents, start_hostile, stop, tap_report  # noqa: E402
from gbtest import on_pty as run_on_pty  # noqa: E402

CLI = os.environ["GB_CLI"]
COLS = 80
# what the CLI itself writes: SGR colours; the progress line (on stderr) is erased
# with "\r\x1b[K" before the next line, so what came before that on a line is gone
OWN_ESCAPES = re.compile(r"\x1b\[[0-9;]*m")
ERASED = re.compile(r"[^\n]*\r\x1b\[K")
# text a hostile guest (or the test's own guest names) put in a line; the CLI's own
# sentences may wrap on a terminal, guest text may not
GUEST_TEXT = re.compile(r"owned|MMMMMMMMMM|dddddddddd|nnnnnnnnnn|ssssssssss|rrrrrrrrrr|"
                        r"cccccccccc|bbbbbbbbbb|OOOOOOOOOO|VVVVVVVVVV|xxxxxxxxxx|EEEEEEEEEE|"
                        r"qqqqqqqqqq|QQQQQQQQQQ|ffffffffff|gb-hostile-")
# no string of the guest's is shown longer than a table's last cell
CELL_MAX = 240
LONGEST = "M" * 300
DANGER = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202eLIAF\u202c\r"


def on_pty(args, cols=COLS):
    """The CLI with stdout and stderr on one pty of cols columns; (rc, text)."""
    return run_on_pty(CLI, args, cols=cols, raw=True)


def width(line):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def check_terminal(what, rc, text, want_rc, needles, cols=COLS):
    plain = OWN_ESCAPES.sub("", ERASED.sub("", text))
    check("%s: rc %d" % (what, want_rc), rc == want_rc, (rc, text[-1500:]))
    lines = plain.split("\n")
    wide = [l for l in lines if width(l) > cols and GUEST_TEXT.search(l)]
    check("%s: no line with guest text wider than %d columns" % (what, cols), not wide,
          [(width(l), l[:200]) for l in wide[:3]])
    bad = sorted({"U+%04X" % ord(c) for c in plain
                  if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0
                  or c in "\u202e\u202c\u2066\u061c"})
    check("%s: no control a terminal obeys but the CLI's colours" % what, not bad, bad)
    for needle in needles:
        check("%s: shows %r" % (what, needle), needle in plain, plain[:3000])
    return plain


def long_cells(text):
    """Runs of one of the guest's repeated characters longer than a cell may be."""
    return re.findall(r"(M{%d,}|d{%d,}|s{%d,}|r{%d,}|c{%d,})" % ((CELL_MAX + 1,) * 5), text)


def hostile_facts(facts):
    """A real agent's facts with a hostile guest's strings in them."""
    facts = json.loads(json.dumps(facts))
    facts["cpu"]["model_name"] = "M" * 300 + DANGER
    facts["cpu"]["vendor"] = DANGER + "V" * 100
    facts["os"]["pretty_name"] = DANGER + "O" * 81
    disk = dict(facts["block"][0]) if facts.get("block") else {}
    disk.update({"name": "d" * 81 + DANGER, "scheduler": "s" * 120 + DANGER,
                 "model": "m" * 81})
    facts["block"] = [disk]
    nic = dict(facts["net"][0]) if facts.get("net") else {}
    nic.update({"name": "n" * 81 + DANGER, "driver": DANGER + "r" * 120})
    facts["net"] = [nic]
    facts["clocksource"]["current"] = "c" * 100 + DANGER
    return facts


def aes_result(facts, label):
    return {"test": "aes", "agent_version": "0.1.0", "timestamp": "2026-01-01T00:00:00Z",
            "params": {"cipher": "aes-128-gcm", "sizes": [16], "seconds": 0.1, "threads": 1,
                       "loop": "aead", "aad": False, "runs": 1},
            "known_answer_test": {"vector": DANGER, "passed": True},
            "facts": {"cpu": facts["cpu"]},
            "metrics": [{"metric": "aes-128-gcm" + DANGER + "x" * 100, "value": 1e9,
                         "unit": "B/s", "labels": {"block_size": label}}],
            "runs": 1}



def main(hostile_agent):
    tmp = tempfile.mkdtemp(prefix="gb-hostile-views-")
    procs = []
    try:
        agents, socks = start_agents(tmp, ["honest"])
        procs += agents
        os.environ["XDG_DATA_HOME"] = os.path.join(tmp, "data")
        real = subprocess.run([CLI, "--format", "json", "facts", socks[0]], capture_output=True,
                              text=True, timeout=60)
        facts = hostile_facts(json.loads(real.stdout)["guests"][0]["result"])
        hostile = start_hostile(hostile_agent, tmp, "hostile", {"gb-get-facts": facts}, procs)
        guests = [socks[0], hostile]

        rc, text = on_pty(["facts"] + guests)
        check_terminal("facts", rc, text, 0, ["MMMM", "…", "\\x1b]0;owned\\x07", "\\u202e"])
        rc, text = on_pty(["audit"] + guests)
        check_terminal("audit", rc, text, rc if rc in (0, 1) else 0, ["…"])

        # not on a terminal: lines are cut at 240 columns, not at the terminal's width
        for cmd in (["facts"], ["audit"]):
            out = subprocess.run([CLI] + cmd + guests, capture_output=True, text=True,
                                 timeout=60).stdout
            check("%s into a pipe: no guest string over %d columns" % (cmd[0], CELL_MAX),
                  not long_cells(out) and ("…" in out or cmd[0] != "facts"),
                  [c[:20] + "... (%d)" % len(c) for c in long_cells(out)][:3])

        # two saved runs of a hostile guest's bench, compared
        docs = []
        for i, label in enumerate(["16" + DANGER + "b" * 100, "16" + DANGER + "b" * 100]):
            sock = start_hostile(hostile_agent, tmp, "bench%d" % i,
                                 {"gb-bench-start": {"job": 1},
                                  "gb-bench-result": aes_result(facts, label)}, procs)
            doc = os.path.join(tmp, "run%d.json" % i)
            r = subprocess.run([CLI, "-q", "bench", "aes", "--sizes", "16", "--seconds", "0.1",
                                "--no-save", "--format", "json", "-o", doc, sock],
                               capture_output=True, text=True, timeout=120)
            check("saved bench run %d of the hostile guest: rc 0" % i, r.returncode == 0,
                  (r.returncode, r.stderr[-500:]))
            docs.append(doc)
        both = os.path.join(tmp, "both.json")
        r = subprocess.run([CLI, "-q", "bench", "aes", "--sizes", "16", "--seconds", "0.1",
                            "--no-save", "--format", "json", "-o", both, sock,
                            os.path.join(tmp, "bench0.sock")],
                           capture_output=True, text=True, timeout=120)
        check("saved bench run of two hostile guests: rc 0", r.returncode == 0,
              (r.returncode, r.stderr[-500:]))
        rc, text = on_pty(["compare", docs[0], docs[1]])
        check_terminal("compare", rc, text, 0, ["aes-128-gcm\\x1b]0;owned\\x07", "…"])
        rc, text = on_pty(["compare", "--by", "guest", both])
        check_terminal("compare --by guest", rc, text, 0, ["…"])
        out = subprocess.run([CLI, "compare", docs[0], docs[1]], capture_output=True, text=True,
                             timeout=60).stdout
        check("compare into a pipe: no guest string over %d columns" % CELL_MAX,
              not long_cells(out), long_cells(out)[:3])
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1])
    sys.exit(tap_report())
