#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The live progress line of bench on a real pty against a real agent: it fits
the terminal (COLUMNS, else the pty's size) so that each update rewrites the
same line, names the guest once, shows sizes as the user typed them, a live
rate and an ETA; Ctrl-C (SIGINT) keeps what the job measured before and prints
it marked partial, as text and as JSON. Prints TAP."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, stop, tap_report  # noqa: E402
from gbtest import on_pty as run_on_pty  # noqa: E402

CLI = os.environ["GB_CLI"]
AGENT = os.environ["GB_AGENT"]
ESCAPES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def start_agent(sock, scratch):
    p = subprocess.Popen([AGENT, "-m", "unix-listen", "-p", sock, "--scratch-dir", scratch],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    for _ in range(500):
        if os.path.exists(sock):
            break
        time.sleep(0.02)
    return p


def on_pty(args, env_extra, cols=80, interrupt_after=None):
    """The CLI with stdout and stderr on one pty of cols columns; returns (rc, output)."""
    return run_on_pty(CLI, args, env_extra, cols=cols, interrupt_after=interrupt_after)


def progress_updates(out):
    """The progress line's updates: what follows each carriage return up to the next one."""
    out = out.replace("\r\n", "\n")  # the pty's own newline translation
    head, _, _ = out.partition("\n")
    segments = [ESCAPES.sub("", s) for s in head.split("\r")[1:]]
    # the last one is the result's first line, written after the line was erased
    if "\n" in out:
        segments = segments[:-1]
    return [s for s in segments if s != ""]


def width(text):
    return len(text)  # the progress text is ASCII plus the one-column ellipsis


def main():
    tmp = tempfile.mkdtemp(prefix="gb-prog-")
    scratch = os.path.join(tmp, "scratch")
    os.mkdir(scratch)
    sock = os.path.join(tmp, "vm.sock")
    longdir = os.path.join(tmp, "a-guest-socket-directory-with-a-name-long-enough-to-wrap")
    os.mkdir(longdir)
    long_sock = os.path.join(longdir, "vm.sock")
    procs = [start_agent(sock, scratch), start_agent(long_sock, scratch)]
    try:
        # aes with the block size spelled 1024k: the agent says 1048576 bytes
        args = ["bench", "aes", "--sizes", "1024k", "--seconds", "3", "--no-save", sock]
        rc, out = on_pty(args, {"COLUMNS": "80"})
        ups = progress_updates(out)
        check("80 columns: the run succeeds", rc == 0, out)
        check("80 columns: several updates on one line", len(ups) >= 4, repr(out[:2000]))
        check("80 columns: no update reaches the last column",
              ups and all(width(u) < 80 for u in ups), "\n".join(ups))
        # once per update: whole, or cut from its start when a slow run's wider
        # figures ([13%][eta 10s]) leave it no room at 80 columns
        check("the guest is named once per update",
              ups and all(u.count(sock) == 1 or (u.startswith("\u2026") and sock not in u
                                                 and sock[-12:] in u) for u in ups)
              and any(sock in u for u in ups), "\n".join(ups))
        check("the size as typed (1024k), never 1048576",
              any("1024k" in u for u in ups) and not any("1048576" in u for u in ups),
              "\n".join(ups))
        check("a live rate [r=...B/s]",
              any(re.search(r"\[r=[0-9.]+[kMGT]?B/s\]", u) for u in ups), "\n".join(ups))
        check("an ETA [eta Ns]", any(re.search(r"\[eta [0-9]+s\]", u) for u in ups),
              "\n".join(ups))
        check("a percentage [N%]", any(re.search(r"\[[0-9]+%\]", u) for u in ups),
              "\n".join(ups))

        # the default sizes of disk shown short (4k, not 4096); defaults no user typed
        rc, out = on_pty(["bench", "disk", "--size", "8M", "--record", "4096,2M",
                          "--no-direct", "--no-fsync", "--tests", "write,read", "--no-save",
                          sock], {"COLUMNS": "80"})
        ups = progress_updates(out)
        check("disk: the record sizes as typed (4096 and 2M)",
              rc == 0 and not any("2097152" in u for u in ups), "\n".join(ups) + out[-500:])

        # net: the rate of the transfer so far
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        rc, out = on_pty(["bench", "net", "--host-listen", "127.0.0.1:%d" % port, "--seconds",
                          "2", "--omit", "0", "--no-save", sock], {"COLUMNS": "80"})
        ups = progress_updates(out)
        check("net: a live rate during the transfer",
              rc == 0 and any(re.search(r"transfer \[[0-9]+%\]\[r=[0-9.]+[kMGT]?B/s\]", u)
                              for u in ups), "\n".join(ups) + out[-300:])

        # a socket path that leaves no room: cut with an ellipsis, still one line
        args = ["bench", "aes", "--sizes", "1024k", "--seconds", "2", "--no-save", long_sock]
        rc, out = on_pty(args, {"COLUMNS": "80"})
        ups = progress_updates(out)
        check("long guest name: cut to 79 columns from its start, rate and ETA kept",
              rc == 0 and ups and all(width(u) <= 79 for u in ups)
              and all(u.startswith("\u2026") and "/vm.sock: " in u for u in ups)
              and any("[eta " in u for u in ups), "\n".join(ups))
        # without COLUMNS, the pty's own width
        rc, out = on_pty(args, {}, cols=60)
        ups = progress_updates(out)
        check("no COLUMNS: the pty's 60 columns", rc == 0 and ups and
              all(width(u) <= 59 for u in ups), "\n".join(ups))

        # Ctrl-C after the first block size (the job's 1 s idle check comes before it): its
        # number is kept, marked partial
        args = ["bench", "aes", "--sizes", "16,1024k", "--seconds", "1.5", "--no-save", sock]
        rc, out = on_pty(args, {"COLUMNS": "80"}, interrupt_after=3.3)
        check("SIGINT: exit status 130", rc == 130, "rc %d\n%s" % (rc, out))
        check("SIGINT: the text result says PARTIAL and names the guest",
              "PARTIAL: %s was interrupted" % sock in out, out)
        row = [ln for ln in out.splitlines() if ln.startswith(sock) and "k" in ln]
        check("SIGINT: the row holds the 16-byte number",
              any(re.search(r"[0-9]+\.[0-9]+k", ln) for ln in row), out)
        check("SIGINT: the guest's status says partial", "partial result" in out, out)

        p = subprocess.Popen([CLI, "--format", "json"] + args, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(3.3)
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=30)
        try:
            doc = json.loads(stdout)
            guest = doc["guests"][0]
            result = guest["result"]
            metrics = result["metrics"]
        except (ValueError, KeyError, IndexError, TypeError) as e:
            doc, guest, result, metrics = None, {}, {}, []
            stderr += ("\nbad document: %s" % e).encode()
        check("SIGINT --format json: exit status 130", p.returncode == 130, stderr)
        check("SIGINT --format json: result marked partial, status error",
              result.get("partial") is True and guest.get("status") == "error" and
              "partial" in guest.get("error", ""), stdout[:2000])
        check("SIGINT --format json: the finished block size is there, the cut one is not",
              [m.get("labels", {}).get("block_size") for m in metrics] == ["16"],
              json.dumps(metrics))
    finally:
        stop(procs)
        subprocess.run(["rm", "-rf", tmp])
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
