#!/usr/bin/env python3
"""--hosts: the CLI runs its command line on several hypervisors over ssh and
merges the documents. ssh is replaced (GUESTBENCH_SSH) by a stand-in that
runs the remote command line through sh in a per-host directory, each with its
own fleet.ini pointing at real agents on unix sockets; nothing leaves the
machine. Prints TAP.
"""
import ast
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, prom_valid, start_holder, tap_report  # noqa: E402

AGENT = os.environ["GB_AGENT"]
CLI = os.environ["GB_CLI"]

# The stand-in for ssh: the options the CLI passes, then "--", HOST and one
# command line for the remote shell, exactly as OpenSSH gets them.
FAKE_SSH = r'''#!/usr/bin/env python3
import os, subprocess, sys
args = sys.argv[1:]
with open(os.environ["FAKE_SSH_LOG"], "a") as log:
    log.write(repr(args) + "\n")
want = ["-o", "BatchMode=yes", "-o", "ConnectTimeout=", "-o", "ServerAliveInterval=5",
        "-o", "ServerAliveCountMax=3", "--"]
if len(args) != len(want) + 2 or any(not a.startswith(w) for a, w in zip(args, want)):
    sys.exit("fake ssh: unexpected arguments %r" % args)
host, command = args[-2], args[-1]
if host.startswith("hang"):
    # a host that never answers: exec, so that killing this process ends it
    with open(os.environ["FAKE_SSH_LOG"] + ".pids", "a") as pids:
        pids.write("%s %d\n" % (host, os.getpid()))
    os.execvp("sleep", ["sleep", "600"])
if host.startswith("par"):
    # a host that takes a while: its start and end show how many ran at once
    import time
    with open(os.environ["FAKE_SSH_LOG"] + ".par", "a") as par:
        par.write("start %.6f\n" % time.monotonic())
    time.sleep(0.4)
    with open(os.environ["FAKE_SSH_LOG"] + ".par", "a") as par:
        par.write("end %.6f\n" % time.monotonic())
    host = "hv-a"
if host == "down":
    sys.stderr.write("ssh: connect to host down port 22: Connection refused\n")
    sys.exit(255)
if host == "garbage":
    print("Welcome to garbage!")
    sys.exit(0)
if host == "flood":
    # a hostile hypervisor: a document without end
    sys.stdout.buffer.write(b'{"command": "ping", "guests": [')
    chunk = b'{"name": "x", "status": "ok"},' * 4096
    try:
        while True:
            sys.stdout.buffer.write(chunk)
    except BrokenPipeError:
        sys.exit(0)
if host == "errflood":
    # 110 MB of messages with terminal escapes, then a last line
    chunk = (b"\x1b]0;owned\x07" + b"e" * 100 + b"\n") * 1000
    for _ in range(1000):
        sys.stderr.buffer.write(chunk)
    sys.stderr.buffer.write(b"ssh: \x1b[2Jthe last line\n")
    sys.exit(255)
poison = host == "poison"
big = host if host in ("bigread", "bigdoc") else None
if poison or big:
    host = "hv-a"
hostdir = os.path.join(os.environ["FAKE_SSH_HOSTS"], host)
env = dict(os.environ, PATH=os.environ["FAKE_SSH_BIN"] + ":" + os.environ["PATH"])
if poison:
    # the real document with the guest's name replaced by escapes and 300 columns
    import json
    p = subprocess.run(["sh", "-c", command], cwd=hostdir, env=env, stdout=subprocess.PIPE)
    name = json.dumps("\x1b]0;owned\x07\x1b[2J\u009b31m\u202e" + "w" * 300)[1:-1]
    sys.stdout.buffer.write(p.stdout.replace(b'"web1"', b'"' + name.encode() + b'"'))
    sys.exit(p.returncode)
if big:
    # the real document, then 4 MiB of blanks (bigread); or its guest's result an array of
    # 300,000 zeros (bigdoc): 600 KB of text that costs 2.4 MB kept (8 bytes a value)
    import json
    p = subprocess.run(["sh", "-c", command], cwd=hostdir, env=env, stdout=subprocess.PIPE)
    doc = json.loads(p.stdout)
    if big == "bigdoc":
        doc["guests"][0]["result"] = [0] * 300000
    sys.stdout.buffer.write(json.dumps(doc, separators=(",", ":")).encode())
    if big == "bigread":
        sys.stdout.buffer.write(b" " * (4 << 20))
    sys.exit(p.returncode)
sys.exit(subprocess.run(["sh", "-c", command], cwd=hostdir, env=env).returncode)
'''

def start_agent(path):
    proc = subprocess.Popen([AGENT, "-m", "unix-listen", "-p", path], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(path)
            return proc
        except OSError:
            time.sleep(0.02)
    proc.kill()
    proc.wait()
    raise RuntimeError("agent did not listen on " + path)


def cli(*args, env=None, timeout=120):
    return subprocess.run([CLI] + list(args), capture_output=True, text=True, timeout=timeout,
                          env=env)


def main():
    tmp = tempfile.mkdtemp(prefix="gb-hosts-")
    procs = []
    try:
        procs.append(start_agent(os.path.join(tmp, "a.sock")))
        procs.append(start_agent(os.path.join(tmp, "b.sock")))
        hosts = os.path.join(tmp, "hosts")
        fleets = {
            "hv-a": "[guest web1]\ntarget=unix:%s/a.sock\n" % tmp,
            "hv-b": ("[guest web1]\ntarget=unix:%s/b.sock\n\n"
                     "[guest dead]\ntarget=unix:%s/none.sock\n" % (tmp, tmp)),
            "hv-c": None,  # no fleet.ini: the remote guestbench fails with 2
        }
        for host, fleet in fleets.items():
            os.makedirs(os.path.join(hosts, host))
            if fleet:
                with open(os.path.join(hosts, host, "fleet.ini"), "w") as f:
                    f.write(fleet)
        bindir = os.path.join(tmp, "bin")
        os.mkdir(bindir)
        os.symlink(CLI, os.path.join(bindir, "guestbench"))
        ssh = os.path.join(bindir, "fake-ssh")
        with open(ssh, "w") as f:
            f.write(FAKE_SSH)
        os.chmod(ssh, stat.S_IRWXU)
        log = os.path.join(tmp, "ssh.log")
        env = dict(os.environ, GUESTBENCH_SSH=ssh, FAKE_SSH_LOG=log, FAKE_SSH_HOSTS=hosts,
                   FAKE_SSH_BIN=bindir)

        # prom: one document, every guest with its host, the dead guest down (exit 3)
        p = cli("--hosts", "hv-a,hv-b", "audit", "--inventory", "fleet.ini", "--format",
                "prom", env=env)
        check("prom: exit 3 for the dead guest", p.returncode == 3, p.stderr)
        check("prom: valid exposition format", prom_valid(p.stdout), p.stdout[:2000])
        for host, guest, up in (("hv-a", "web1", 1), ("hv-b", "web1", 1), ("hv-b", "dead", 0)):
            check(f"prom: {host}/{guest} up={up}",
                  re.search(rf'^guestbench_up\{{host="{host}",guest="{guest}",[^}}]*\}} {up}$',
                            p.stdout, re.M), p.stdout[:2000])
        check("prom: findings carry the host",
              'guestbench_audit_finding{host="hv-a",guest="web1",' in p.stdout)

        # json to -o, with --hosts repeated; a host whose ssh fails is an error guest
        out = os.path.join(tmp, "fleet.json")
        p = cli("--hosts", "hv-a", "-o", out, "ping", "--hosts=down", "--inventory",
                "fleet.ini", "--format", "json", env=env)
        check("json: exit 3 with a host down", p.returncode == 3, p.stderr)
        check("json: -o written, stdout empty", os.path.exists(out) and p.stdout == "")
        doc = json.load(open(out)) if os.path.exists(out) else {}
        guests = doc.get("guests", [])
        check("json: command ping", doc.get("command") == "ping", doc)
        check("json: hosts in order", [(g["host"], g["name"], g["status"]) for g in guests] ==
              [("hv-a", "web1", "ok"), ("down", "ssh:down", "error")], guests)
        check("json: ssh's message kept",
              any("exit 255: ssh: connect to host down" in g.get("error", "") for g in guests),
              guests)

        # the remote shell gets every argument quoted: a glob stays a glob for --name
        open(log, "w").close()
        p = cli("--hosts", "hv-b", "ping", "--inventory", "fleet.ini", "--name", "w*",
                "--format", "json", env=env)
        names = [g["name"] for g in json.loads(p.stdout or "{}").get("guests", [])]
        check("quoting: --name 'w*' selects web1 only", p.returncode == 0 and names == ["web1"],
              (p.returncode, names, p.stderr))
        with open(log) as f:
            sent = "\n".join(ast.literal_eval(line)[-1] for line in f if line.strip())
        check("quoting: the remote line quotes each word",
              "guestbench '--format' 'json' 'ping' '--inventory' 'fleet.ini' '--name' 'w*'"
              in sent, sent)
        check("quoting: -o and the local --format are not sent",
              "'-o'" not in sent and sent.count("'--format'") == 1, sent)

        # a guest that another guestbench is benchmarking: busy on its host (exit 4), kept
        # busy in the merged document; --wait-busy goes to the host and waits there
        holder = start_holder(CLI, os.path.join(tmp, "a.sock"), seconds=10)
        p = cli("--hosts", "hv-a", "ping", "--inventory", "fleet.ini", "--format", "json",
                env=env)
        guests = json.loads(p.stdout or "{}").get("guests", [])
        check("busy: a host's busy guest is busy in the merge, exit 4",
              p.returncode == 4 and [(g["host"], g["status"]) for g in guests] ==
              [("hv-a", "busy")] and "pid %d" % holder.pid in guests[0].get("error", ""),
              (p.returncode, guests, p.stderr))
        p = cli("--hosts", "hv-a,hv-b", "ping", "--inventory", "fleet.ini", "--format", "prom",
                env=env)
        check("busy: prom carries guestbench_busy by host; the dead guest still wins (3)",
              p.returncode == 3 and prom_valid(p.stdout) and
              re.search(r'^guestbench_busy\{host="hv-a",guest="web1",[^}]*\} 1$', p.stdout,
                        re.M), (p.returncode, p.stdout[:2000], p.stderr))
        p = cli("--hosts", "hv-a", "--wait-busy", "20", "ping", "--inventory", "fleet.ini",
                "--format", "json", env=env)
        holder.communicate(timeout=60)
        guests = json.loads(p.stdout or "{}").get("guests", [])
        check("busy: --wait-busy is sent to the host, which waits and pings ok",
              p.returncode == 0 and [g["status"] for g in guests] == ["ok"],
              (p.returncode, guests, p.stderr))

        # a remote usage error (no fleet.ini there) and a host that prints garbage
        p = cli("--hosts", "hv-c,garbage,hv-a", "ping", "--inventory", "fleet.ini",
                "--format", "json", env=env)
        guests = json.loads(p.stdout or "{}").get("guests", [])
        by_host = {g["host"]: g for g in guests}
        check("failures: exit 3", p.returncode == 3, p.stderr)
        check("failures: remote exit 2 reported",
              "exit 2:" in by_host.get("hv-c", {}).get("error", ""), guests)
        check("failures: garbage is a parse error",
              "JSON parse error" in by_host.get("garbage", {}).get("error", ""), guests)
        check("failures: the good host still there",
              by_host.get("hv-a", {}).get("status") == "ok", guests)

        # a host that never answers is cut off at --deadline + 5 s; the others are kept
        t0 = time.monotonic()
        p = cli("--hosts", "hang,hv-a", "--deadline", "1", "ping", "--inventory", "fleet.ini",
                "--format", "json", env=env)
        took = time.monotonic() - t0
        guests = json.loads(p.stdout or "{}").get("guests", [])
        by_host = {g["host"]: g for g in guests}
        check("hang: exit 3, cut off at the deadline, not hung",
              p.returncode == 3 and took < 30, (p.returncode, took, p.stderr))
        check("hang: the host's error says so",
              "deadline" in by_host.get("hang", {}).get("error", ""), guests)
        check("hang: the good host still there",
              by_host.get("hv-a", {}).get("status") == "ok", guests)

        # --host-jobs bounds the ssh sessions at once; the default runs these 5 at once.
        # The five are one hypervisor with one guest: its pings take turns (--wait-busy).
        for jobs, want in ((["--host-jobs", "2"], 2), ([], 5)):
            par = log + ".par"
            if os.path.exists(par):
                os.unlink(par)
            p = cli("--hosts", "par1,par2,par3,par4,par5", *jobs, "--wait-busy", "20", "ping",
                    "--inventory",
                    "fleet.ini", "--format", "json", env=env)
            events = sorted((float(t), kind) for kind, t in
                            (line.split() for line in open(par))) if os.path.exists(par) else []
            now = peak = 0
            for _, kind in events:
                now += 1 if kind == "start" else -1
                peak = max(peak, now)
            guests = json.loads(p.stdout or "{}").get("guests", [])
            check(f"host-jobs {jobs or 'default'}: at most {want} at once, all 5 merged",
                  p.returncode == 0 and peak == want and len(events) == 10 and
                  sorted(g["host"] for g in guests) == ["par%d" % i for i in range(1, 6)],
                  (p.returncode, peak, events, p.stderr))

        # Ctrl-C: finished hosts stay, running ssh get the signal, the rest never start
        pids = log + ".pids"
        # 2 at once: hv-a and hang1; hv-a ends, hang2 starts; hv-b waits for a free slot
        proc = subprocess.Popen([CLI, "--hosts", "hv-a,hang1,hang2,hv-b", "--host-jobs", "2",
                                 "ping",
                                 "--inventory", "fleet.ini", "--format", "json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env)
        # under valgrind, hv-a's end and hang2's start can take tens of seconds
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not (
                os.path.exists(pids) and "hang2" in open(pids).read()):
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        by_host = {g["host"]: g for g in json.loads(out or "{}").get("guests", [])}
        check("SIGINT: exit 130 with the document", proc.returncode == 130 and by_host,
              (proc.returncode, out[:500], err))
        check("SIGINT: the finished host is kept", by_host.get("hv-a", {}).get("status") == "ok",
              by_host)
        check("SIGINT: the running hosts say they were interrupted",
              all("host %s: interrupted by SIGINT" % h == by_host.get(h, {}).get("error")
                  for h in ("hang1", "hang2")), by_host)
        check("SIGINT: the queued host was not started",
              "not started (interrupted by SIGINT)" in by_host.get("hv-b", {}).get("error", ""),
              by_host)
        hang_pids = [int(line.split()[1]) for line in open(pids)
                     if line.split()[0] in ("hang1", "hang2")] if os.path.exists(pids) else []
        alive = list(hang_pids)
        for _ in range(100):
            alive = [pid for pid in alive if os.path.exists("/proc/%d" % pid) and
                     "zombie" not in open("/proc/%d/status" % pid).read()]
            if not alive:
                break
            time.sleep(0.05)
        check("SIGINT: no ssh left running", len(hang_pids) == 2 and not alive, (hang_pids, alive))

        # table: a section per host
        p = cli("--hosts", "hv-a,hv-b", "ping", "--inventory", "fleet.ini", "--color=never",
                env=env)
        check("table: a section per host",
              "== host hv-a ==" in p.stdout and "== host hv-b ==" in p.stdout, p.stdout)

        # a hostile hypervisor: a document without end, 110 MB of stderr, poisoned names
        start = time.monotonic()
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            proc = subprocess.Popen([CLI, "--hosts", "flood,errflood,hv-a", "ping",
                                     "--inventory", "fleet.ini", "--format", "json"],
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env)
            try:
                status = proc.wait(120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                status = None
            out.seek(0)
            text = out.read().decode(errors="replace")
        check("hostile hosts: over in time (%.1f s)" % (time.monotonic() - start),
              status is not None, text[:300])
        try:
            by_host = {g["host"]: g for g in json.loads(text)["guests"]}
        except (ValueError, KeyError):
            by_host = {}
        check("a host writing without end: an error naming the 256 MiB limit",
              by_host.get("flood", {}).get("error") ==
              "host flood: the document is larger than 256 MiB", by_host.get("flood"))
        check("110 MB of stderr: the error is its last line, escaped",
              by_host.get("errflood", {}).get("error", "").endswith(
                  "\x1b[2Jthe last line"), by_host.get("errflood", {}).get("error", "")[-300:])
        check("the honest host beside them: ok", by_host.get("hv-a", {}).get("status") == "ok",
              by_host.get("hv-a"))
        # the fleet's reply budget bounds what all hosts' documents hold together: as they
        # are read (bigread: 4 MiB), and once parsed (bigdoc: 600 KB costing 2.4 MB).
        # All three run hv-a's CLI on the same agents: one host at a time, or a slow one
        # finds the guests locked by another and says busy (exit 4)
        p = cli("--hosts", "bigread,bigdoc,hv-a", "--host-jobs", "1", "--format", "json",
                "ping", "--inventory", "fleet.ini", env=env)
        by_host = {g["host"]: g for g in json.loads(p.stdout or "{}").get("guests", [])}
        check("large host documents under the default --reply-budget 1G: all kept",
              p.returncode == 0 and all(by_host.get(h, {}).get("status") == "ok"
                                        for h in ("bigread", "bigdoc", "hv-a")),
              (p.returncode, p.stderr[-300:]))
        # one host at a time: bigread's hold is given back before bigdoc is read
        p = cli("--hosts", "bigread,bigdoc,hv-a", "--host-jobs", "1", "--reply-budget", "1M",
                "--format", "json", "ping", "--inventory", "fleet.ini", env=env)
        by_host = {g["host"]: g for g in json.loads(p.stdout or "{}").get("guests", [])}
        budget_error = ("host %s: the fleet's reply budget of 1 MiB is used up: this host's %s "
                        "was dropped at ([0-9]+) KiB; run fewer guests at once or raise "
                        "--reply-budget")
        m = re.fullmatch(budget_error % ("bigread", "output"),
                         by_host.get("bigread", {}).get("error") or "")
        check("--reply-budget 1M: a host whose output does not fit fails while it is read, "
              "naming the budget", m is not None and int(m.group(1)) < 4096,
              by_host.get("bigread"))
        m = re.fullmatch(budget_error % ("bigdoc", "document"),
                         by_host.get("bigdoc", {}).get("error") or "")
        check("--reply-budget 1M: a host whose parsed document does not fit fails, naming the "
              "budget and its cost", m is not None and int(m.group(1)) >= 2300,
              by_host.get("bigdoc"))
        check("--reply-budget 1M: the host beside them keeps its result, exit status 3",
              p.returncode == 3 and by_host.get("hv-a", {}).get("status") == "ok",
              (p.returncode, by_host.get("hv-a"), p.stderr[-300:]))
        p = cli("--hosts", "poison", "ping", "--inventory", "fleet.ini", env=env)
        check("poisoned guest names from a host: escaped and cut in the table",
              p.returncode == 0 and "\x1b" not in p.stdout and "\u202e" not in p.stdout
              and "\\x1b]0;owned\\x07" in p.stdout and "w" * 61 not in p.stdout
              and "…" in p.stdout, p.stdout[:600])

        # refused before any ssh runs
        open(log, "w").close()
        for args, why in ((["--hosts", "-oProxyCommand=touch /tmp/x", "ping", "a"], "option"),
                          (["--hosts", "a,a", "ping", "x"], "twice"),
                          (["--hosts", "a b", "ping", "x"], "blank"),
                          (["--hosts", "", "ping", "x"], "empty"),
                          (["--hosts", "a", "merge", "x.json"], "not a guest command"),
                          (["--hosts", "a", "-qo", "x", "ping", "x"], "-o in a cluster"),
                          (["--hosts", "a", "--host-jobs", "0", "ping", "x"], "host-jobs 0"),
                          (["--hosts", "a", "--host-jobs", "1001", "ping", "x"], "host-jobs big"),
                          (["--hosts", "a", "--host-jobs=x", "ping", "x"], "host-jobs word"),
                          (["--host-jobs", "2", "ping", "x"], "host-jobs without hosts")):
            p = cli(*args, env=env)
            check(f"refused ({why}): exit 2 with a message",
                  p.returncode == 2 and p.stderr.strip(), (p.returncode, p.stderr))
        check("refused: ssh never ran", os.path.getsize(log) == 0)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        subprocess.run(["rm", "-rf", tmp])

    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
