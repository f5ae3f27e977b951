#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench arguments outside the benchmarks' limits: the real CLI refuses each
with rc 2 and the limit's message before it contacts any guest (a listening
socket that must see no connection), and a real agent refuses the same values
from the wire with the same message. What only the guest knows (its caps, its
free space) stays a guest error, one per guest. Prints TAP."""
import json
import os
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, start_agents, stop, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]
AGENT = os.environ["GB_AGENT"]

SEVENTEEN = ",".join(str(i) for i in range(1, 18))

# CLI arguments, the shared message both ends give, and the params the agent gets on the wire
CASES = [
    (["disk", "--record", "3"], "record size 3 is not a multiple of 512 bytes from 512 to 64M",
     "disk", {"record_sizes": [3]}),
    (["disk", "--record", "1000"], "record size 1000 is not a multiple of 512", "disk",
     {"record_sizes": [1000]}),
    (["disk", "--record", "128M"], "record size 134217728 (128M) is not a multiple", "disk",
     {"record_sizes": [134217728]}),
    (["disk", "--record", "4k,4k"], "record size 4096 (4k) is given twice", "disk",
     {"record_sizes": [4096, 4096]}),
    (["disk", "--size", "1k"], "file size 1024 (1k) is too small (at least 4k)", "disk",
     {"size": 1024}),
    (["disk", "--size", "1M"],
     "record size 4194304 (4M) is larger than the file size 1048576 (1M)", "disk",
     {"size": 1048576}),
    (["disk", "--size", "8M", "--record", "16M"],
     "record size 16777216 (16M) is larger than the file size 8388608 (8M)", "disk",
     {"size": 8388608, "record_sizes": [16777216]}),
    (["aes", "--seconds", "0.05"], "0.05 seconds is out of range (allowed 0.1..604800)", "aes",
     {"seconds": 0.05}),
    (["aes", "--sizes", "2M"], "block size 2097152 (2M) is out of range (allowed 1..1048576)",
     "aes", {"sizes": [2097152]}),
    (["aes", "--sizes", SEVENTEEN], "17 block sizes given (allowed 1..16)", "aes",
     {"sizes": list(range(1, 18))}),
    (["mem", "--size", "1k"], "buffer size 1024 (1k) is too small (at least 1M)", "mem",
     {"size": 1024}),
    (["mem", "--size", "1025k"], "buffer size 1049600 (1025k) is not a multiple of 4096 bytes",
     "mem", {"size": 1049600}),
]

# refused by the CLI with the shared bounds, in its own option wording
CLI_ONLY = [
    (["aes", "--seconds", "700000"], "out of range"),
    (["aes", "--runs", "101"], "from 1 to 100"),
    (["aes", "--threads", "4097"], "from 1 to 4096"),
    (["net", "--host-listen", "127.0.0.1:5301", "--streams", "65"], "from 1 to 64"),
    (["net", "--host-listen", "127.0.0.1:5301", "--omit", "61"], "from 0 to 60"),
    (["net", "--host-listen", "127.0.0.1:5301", "--seconds", "0"], "--seconds"),
]


def wire_error(sock, test, params):
    """gb-bench-start with params over the agent's socket; the error's desc, or None."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(30)
        s.connect(sock)
        req = {"execute": "gb-bench-start", "arguments": {"test": test, "params": params}}
        s.sendall(json.dumps(req).encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    reply = json.loads(buf)
    return reply.get("error", {}).get("desc")


def main():
    tmp = tempfile.mkdtemp(prefix="gb-usage-")
    scratch = os.path.join(tmp, "scratch")
    os.mkdir(scratch)
    # a socket that listens but is never accepted from: any connection attempt stays queued
    trap_path = os.path.join(tmp, "trap.sock")
    trap = socket.socket(socket.AF_UNIX)
    trap.bind(trap_path)
    trap.listen(16)
    trap.setblocking(False)
    agent_sock = os.path.join(tmp, "agent.sock")
    agent = subprocess.Popen([AGENT, "-m", "unix-listen", "-p", agent_sock, "--scratch-dir",
                              scratch], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    procs = [agent]
    try:
        start_agents(tmp, [])  # nothing to start; agent.sock is waited for below
        for _ in range(500):
            if os.path.exists(agent_sock):
                break
            subprocess.run(["sleep", "0.02"])
        for args, message, test, params in CASES + [(a, m, None, None) for a, m in CLI_ONLY]:
            name = " ".join(args)
            r = subprocess.run([CLI, "--timeout", "2", "bench"] + args + ["--no-save", trap_path],
                               capture_output=True, text=True, timeout=60)
            check("bench %s: usage error rc 2" % name, r.returncode == 2,
                  "rc %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
            check("bench %s: says '%s'" % (name, message), message in r.stderr, r.stderr)
            check("bench %s: one line of error, no table" % name,
                  r.stdout == "" and r.stderr.count(message) == 1, r.stdout + r.stderr)
            try:
                conn, _ = trap.accept()
                conn.close()
                contacted = True
            except BlockingIOError:
                contacted = False
            check("bench %s: no guest contacted" % name, not contacted)
            if test is None:
                continue
            desc = wire_error(agent_sock, test, params)
            check("agent refuses %s %s from the wire with the same message" %
                  (test, json.dumps(params)), desc is not None and message in desc, desc)

        # what only the guest knows stays the guest's error, once per guest
        g_procs, socks = start_agents(tmp, ["g1", "g2"])
        procs += g_procs
        r = subprocess.run([CLI, "bench", "disk", "--size", "100G", "--no-save"] + socks,
                           capture_output=True, text=True, timeout=60)
        lines = [ln for ln in r.stdout.splitlines() if "max_bench_file_size" in ln]
        check("--size 100G over the guests' cap: rc 3", r.returncode == 3,
              "rc %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
        check("--size 100G over the guests' cap: one error line per guest",
              len(lines) == 2 and all(any(s in ln for ln in lines) for s in socks), r.stdout)

        conf = os.path.join(tmp, "big.conf")
        with open(conf, "w") as f:
            f.write("[general]\nmax-bench-file-size=%d\n" % (1 << 60))
        big_sock = os.path.join(tmp, "big.sock")
        big = subprocess.Popen([AGENT, "-m", "unix-listen", "-p", big_sock, "-c", conf,
                                "--scratch-dir", scratch], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(big)
        for _ in range(500):
            if os.path.exists(big_sock):
                break
            subprocess.run(["sleep", "0.02"])
        free = os.statvfs(scratch)
        beyond = (free.f_bavail * free.f_frsize >> 30) + 16
        r = subprocess.run([CLI, "bench", "disk", "--size", "%dG" % beyond, "--no-direct",
                            "--no-save", big_sock], capture_output=True, text=True, timeout=120)
        check("--size beyond the free scratch space: rc 3 with the guest's reason",
              r.returncode == 3 and r.stdout.count("Not enough free space") == 1,
              "rc %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    finally:
        trap.close()
        stop(procs)
        subprocess.run(["rm", "-rf", tmp])
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
