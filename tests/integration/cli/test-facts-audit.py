#!/usr/bin/env python3
"""The real CLI's facts and audit commands against real agents on unix sockets.

Agents read fixture trees (--sysroot) of contrasting guests, plus one agent on
the live system whose facts are checked against /proc and /sys read here.
Prints TAP.
"""
import csv
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

AGENT = os.environ["GB_AGENT"]
CLI = os.environ["GB_CLI"]
DATA = os.environ["GB_TEST_DATA"]

results = []


def check(name, cond, detail=""):
    results.append((name, bool(cond), detail))


class Agents:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="gb-facts-audit-")
        self.procs = []

    def start(self, name, sysroot=None):
        sock = os.path.join(self.dir, name + ".sock")
        args = [AGENT, "-m", "unix-listen", "-p", sock]
        if sysroot:
            args += ["--sysroot", os.path.join(DATA, "facts", sysroot)]
        p = subprocess.Popen(args, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(sock)
                s.close()
                return sock
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("agent %s did not listen" % name)

    def stop(self):
        for p in self.procs:
            p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def cli(*args, timeout=60):
    return subprocess.run([CLI] + list(args), capture_output=True, text=True, timeout=timeout)


PROM_SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*'
                         r'(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})?'
                         r' (-?[0-9.e+-]+|NaN|[+-]Inf)$')


def prom_valid(text):
    """Each line a HELP, a TYPE or a sample; each family's HELP/TYPE before its samples."""
    declared = set()
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            declared.add(line.split()[2])
            continue
        if not PROM_SAMPLE.match(line):
            return False
        if line.split("{")[0].split(" ")[0] not in declared:
            return False
    return bool(declared)


def findings_by_rule(guest):
    out = {}
    for f in guest["result"]["findings"]:
        out.setdefault(f["rule"], []).append(f)
    return out


def levels(guest, rule):
    return sorted({f["level"] for f in findings_by_rule(guest).get(rule, [])})


def live_checks(doc):
    """The live agent's facts agree with /proc and /sys read independently."""
    facts = doc["guests"][0]["result"]
    cpuinfo = open("/proc/cpuinfo").read()
    model = re.search(r"^model name\s*:\s*(.*)$", cpuinfo, re.M)
    if model:
        check("live: model name", facts["cpu"]["model_name"] == model.group(1).strip(),
              facts["cpu"]["model_name"])
    flags = re.search(r"^flags\s*:\s*(.*)$", cpuinfo, re.M).group(1).split()
    check("live: flags", facts["cpu"]["flags"] == flags)
    check("live: cpu count", facts["cpu"]["count"] == len(re.findall(r"^processor\s*:", cpuinfo, re.M)))
    meminfo = dict(l.split(":", 1) for l in open("/proc/meminfo").read().splitlines())
    check("live: MemTotal", facts["memory"]["total_bytes"] == int(meminfo["MemTotal"].split()[0]) * 1024)
    cs = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
    check("live: clocksource", facts["clocksource"]["current"] == open(cs).read().strip())
    want_disks = sorted(d for d in os.listdir("/sys/block")
                        if not re.match(r"(loop|ram|zram)\d", d))
    check("live: disks", sorted(d["name"] for d in facts["block"]) == want_disks,
          "%s vs %s" % ([d["name"] for d in facts["block"]], want_disks))
    for d in facts["block"]:
        sched = open("/sys/block/%s/queue/scheduler" % d["name"]).read()
        active = re.search(r"\[(.*?)\]", sched)
        check("live: scheduler of " + d["name"],
              d["scheduler"] == (active.group(1) if active else sched.strip()))
        wc = open("/sys/block/%s/queue/write_cache" % d["name"]).read().strip()
        check("live: write cache of " + d["name"], d["write_cache"] == wc)
    want_nics = sorted(n for n in os.listdir("/sys/class/net") if n != "lo")
    check("live: nics", sorted(n["name"] for n in facts["net"]) == want_nics)
    for n in facts["net"]:
        link = "/sys/class/net/%s/device/driver" % n["name"]
        drv = os.path.basename(os.readlink(link)) if os.path.islink(link) else None
        check("live: driver of " + n["name"], n["driver"] == drv, "%s vs %s" % (n["driver"], drv))
        mtu = int(open("/sys/class/net/%s/mtu" % n["name"]).read())
        check("live: mtu of " + n["name"], n["mtu"] == mtu)
    check("live: kernel", facts["os"]["kernel_release"] == os.uname().release)


diag_skip = []


def qmp_checks(agents, target):
    """A paused QEMU (no guest needed) with a cache=unsafe disk behind --qmp."""
    img = os.path.join(agents.dir, "disk.img")
    with open(img, "wb") as f:
        f.truncate(1 << 20)
    qmp = os.path.join(agents.dir, "qmp.sock")
    q = subprocess.Popen(["qemu-system-x86_64", "-machine", "pc", "-accel", "tcg", "-S",
                          "-nodefaults", "-display", "none",
                          "-qmp", "unix:%s,server=on,wait=off" % qmp,
                          "-drive", "file=%s,if=none,id=d0,format=raw,cache=unsafe" % img,
                          "-device", "virtio-blk-pci,drive=d0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not os.path.exists(qmp) and time.monotonic() < deadline:
            time.sleep(0.05)
        r = cli("--format", "json", "--qmp", qmp, "audit", target)
        doc = json.loads(r.stdout)
        g = doc["guests"][0]
        check("--qmp: audit exit 1 for cache=unsafe", r.returncode == 1, r.stderr)
        check("--qmp: HOST-CACHE-UNSAFE FAIL", "FAIL" in levels(g, "HOST-CACHE-UNSAFE"),
              findings_by_rule(g).keys())
        check("--qmp: the host view is in the result", "host" in g["result"])
        none = os.path.join(agents.dir, "none.sock")
        r = cli("--format", "json", "--qmp", none, "audit", target)
        g = json.loads(r.stdout)["guests"][0]
        check("--qmp to nowhere: the guest is an error, exit 3",
              r.returncode == 3 and g["status"] == "error" and none in g["error"],
              r.stdout + r.stderr)
    finally:
        q.kill()
        q.wait()


def main():
    agents = Agents()
    try:
        legacy = agents.start("legacy", "qemu64")
        tuned = agents.start("tuned", "cpu-host")
        numa = agents.start("numa", "numa")
        live = agents.start("live")
        dead = os.path.join(agents.dir, "nobody.sock")

        # audit: the legacy guest fails, the tuned one does not; a dead guest is exit 3
        r = cli("--format", "json", "audit", legacy, tuned, numa)
        check("audit exit 1 on FAIL", r.returncode == 1, r.stderr)
        doc = json.loads(r.stdout)
        check("audit document", doc["command"] == "audit" and len(doc["guests"]) == 3)
        g_legacy, g_tuned, g_numa = doc["guests"]
        check("legacy: CPU-LEGACY-MODEL FAIL", levels(g_legacy, "CPU-LEGACY-MODEL") == ["FAIL"])
        check("legacy: CPU-NO-AESNI FAIL", levels(g_legacy, "CPU-NO-AESNI") == ["FAIL"])
        check("legacy: DISK-EMULATED WARN", levels(g_legacy, "DISK-EMULATED") == ["WARN"])
        check("legacy: DISK-WRITE-THROUGH not WARN (IDE is already flagged)",
              "WARN" not in levels(g_legacy, "DISK-WRITE-THROUGH"))
        check("legacy worst FAIL", g_legacy["result"]["worst"] == "FAIL")
        check("tuned: CPU-LEGACY-MODEL PASS", levels(g_tuned, "CPU-LEGACY-MODEL") == ["PASS"])
        check("tuned: CPU-NO-AESNI PASS", levels(g_tuned, "CPU-NO-AESNI") == ["PASS"])
        check("tuned: DISK-EMULATED PASS", levels(g_tuned, "DISK-EMULATED") == ["PASS"])
        check("tuned: no FAIL", g_tuned["result"]["worst"] != "FAIL", g_tuned["result"]["worst"])
        check("numa: NUMA-MEMORYLESS-NODE WARN", levels(g_numa, "NUMA-MEMORYLESS-NODE") == ["WARN"])
        check("numa: NUMA-SPAN NOTE", levels(g_numa, "NUMA-SPAN") == ["NOTE"])
        for g in doc["guests"]:
            for f in g["result"]["findings"]:
                if not (re.fullmatch(r"[A-Z][A-Z0-9-]+", f["rule"]) and
                        f["level"] in ("PASS", "NOTE", "WARN", "FAIL") and f["subject"]):
                    check("finding shape", False, json.dumps(f))
                    break

        # table: one screen tells them apart; -q prints the same findings
        r = cli("--color", "never", "audit", legacy, tuned)
        check("table names the legacy model",
              "QEMU Virtual CPU version 2.5+" in r.stdout and "FAIL" in r.stdout)
        check("table has the fleet summary", "Audit summary: 2 guests" in r.stdout, r.stdout[-400:])
        check("table without colour codes", "\033[" not in r.stdout)
        full = cli("--color", "never", "audit", legacy, tuned)
        r = cli("-q", "--color", "never", "audit", legacy, tuned)
        check("-q keeps every finding and the summary",
              r.stdout == full.stdout and " PASS " in r.stdout and "CPU-LEGACY-MODEL" in r.stdout,
              r.stdout[-400:])
        # the summary counts the fleet asked, and names who could not be audited
        r = cli("--color", "never", "audit", legacy, tuned, dead)
        check("summary counts an unreachable guest",
              r.returncode == 3 and "Audit summary: 3 guests, 1 not audited (%s), worst level "
              "FAIL of the 2 audited" % dead in r.stdout, r.stdout[-600:])
        r = cli("--color", "never", "audit", legacy, dead)
        check("summary with one audited guest of two",
              "Audit summary: 2 guests, 1 not audited (%s)" % dead in r.stdout, r.stdout[-600:])

        # csv: header + RFC 4180 rows; an unreachable guest is a row, exit 3
        r = cli("--format", "csv", "audit", legacy, dead)
        check("csv audit with a dead guest exits 3", r.returncode == 3, r.stderr)
        rows = list(csv.reader(io.StringIO(r.stdout)))
        check("csv header", rows and rows[0][0] == "guest", rows[:1])
        check("csv has the dead guest", any(row[0] == dead for row in rows[1:]))
        check("csv rows have the header's width", all(len(row) == len(rows[0]) for row in rows))

        # facts
        r = cli("--color", "never", "facts", legacy)
        check("facts table", r.returncode == 0 and "ata_piix" in r.stdout and "vmxnet3" in r.stdout,
              r.stdout)
        r = cli("--format", "json", "facts", "--sections", "cpu,os", tuned)
        doc = json.loads(r.stdout)
        res = doc["guests"][0]["result"]
        check("facts --sections", "cpu" in res and "os" in res and "block" not in res, list(res))
        r = cli("facts", "--sections", "cpu,nonsense", tuned)
        check("facts unknown section: usage error naming it and the known ones",
              r.returncode == 2 and "unknown section 'nonsense'" in r.stderr
              and "known: cpu, memory, clocksource, steal, block, net, os" in r.stderr
              and r.stdout == "", r.stdout + r.stderr)
        # sections not asked for are not shown at all, in any format
        r = cli("--color", "never", "facts", "--sections", "steal", tuned)
        labels = [line.split()[0] for line in r.stdout.splitlines()[1:] if line.strip()]
        check("facts --sections steal: text shows steal only",
              r.returncode == 0 and labels[:2] == ["steal", "agent"]
              and set(labels[2:]) <= {"errors"} and "cpu" not in r.stdout, r.stdout)
        r = cli("--format", "json", "facts", "--sections", "steal", tuned)
        res = json.loads(r.stdout)["guests"][0]["result"]
        check("facts --sections steal: json has steal only",
              r.returncode == 0 and sorted(res) == ["agent_version", "errors", "steal"], list(res))
        r = cli("--format", "csv", "facts", "--sections", "steal,os", tuned)
        sections = {row[1] for row in list(csv.reader(io.StringIO(r.stdout)))[1:]}
        check("facts --sections steal,os: csv rows of those only",
              r.returncode == 0 and sections == {"steal", "os", "agent"}, r.stdout)
        r = cli("--color", "never", "facts", tuned)
        check("facts without --sections: every section",
              all(("\n  %s " % k) in r.stdout for k in
                  ("cpu", "memory", "clocksource", "steal", "disk", "nic", "os")), r.stdout)
        r = cli("facts", "--sections", "cpu,,os", tuned)
        check("facts empty section: usage error", r.returncode == 2, r.stderr)
        r = cli("facts", "--steal-window", "99999", tuned)
        check("facts steal window out of range: usage error", r.returncode == 2, r.stderr)
        # --steal-window: without it no wait, the window runs since the agent's previous
        # sample (here its start-up, over a second ago); with it, exactly that window
        steal = agents.start("steal")
        time.sleep(1.2)
        r = cli("--format", "json", "facts", "--sections", "steal", steal)
        window = json.loads(r.stdout)["guests"][0]["result"]["steal"]["window_ms"] \
            if r.returncode == 0 else None
        check("steal without --steal-window: since start-up, longer than 200 ms",
              window is not None and window >= 1000, r.stdout + r.stderr)
        r = cli("--format", "json", "facts", "--sections", "steal", "--steal-window", "300", steal)
        window = json.loads(r.stdout)["guests"][0]["result"]["steal"]["window_ms"] \
            if r.returncode == 0 else None
        check("--steal-window 300 measures 300 ms", window == 300, r.stdout + r.stderr)
        r = cli("facts", "--help")
        line = next((l for l in r.stdout.splitlines() if "--steal-window" in l), "")
        check("facts --help says what the default window is",
              "previous sample" in line and "default 200" not in line, line)
        r = cli("--format", "html", "facts", tuned)
        check("facts refuses a format it cannot write", r.returncode == 2, r.stderr)

        # Prometheus text exposition, as node_exporter's textfile collector reads it
        prom = os.path.join(agents.dir, "audit.prom")
        r = cli("--format", "prom", "-o", prom, "audit", legacy, tuned, dead)
        text = open(prom).read() if os.path.exists(prom) else ""
        check("prom audit written with -o, exit 3 for the dead guest", r.returncode == 3 and text,
              r.stderr)
        check("prom: every line is valid exposition", prom_valid(text), text[:2000])
        check("prom: guestbench_up 0 for the dead guest",
              re.search(r'^guestbench_up\{[^}]*guest="%s"[^}]*\} 0$' % re.escape(dead), text, re.M),
              text[:600])
        check("prom: the legacy FAIL finding",
              re.search(r'^guestbench_audit_finding\{guest="%s",rule="CPU-NO-AESNI",level="FAIL",'
                        % re.escape(legacy), text, re.M))
        check("prom: worst level 3 for legacy",
              re.search(r'^guestbench_audit_worst_level\{guest="%s"\} 3$' % re.escape(legacy),
                        text, re.M))
        r = cli("--format", "prom", "facts", legacy)
        check("prom facts", r.returncode == 0 and prom_valid(r.stdout) and
              'guestbench_fact_block_info{guest="%s",disk="sda",bus="ata"' % legacy in r.stdout,
              r.stdout[:2000])
        r = cli("audit", "--list-rules")
        check("audit --list-rules", r.returncode == 0 and "CPU-NO-AESNI" in r.stdout, r.stdout)

        # with --qmp: what only the host can see joins the guest's findings
        qemu = shutil.which("qemu-system-x86_64")
        if qemu:
            qmp_checks(agents, tuned)
        else:
            diag_skip.append("qemu-system-x86_64 not installed: --qmp not checked")

        # the live system, through the real CLI
        r = cli("--format", "json", "facts", live)
        check("live facts exit 0", r.returncode == 0, r.stderr)
        live_checks(json.loads(r.stdout))
    finally:
        agents.stop()

    print("1..%d" % len(results))
    for text in diag_skip:
        print("# " + text)
    for i, (name, ok, detail) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
        if not ok and detail:
            print("# " + str(detail).replace("\n", "\n# ")[:2000])
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
