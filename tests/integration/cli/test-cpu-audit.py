#!/usr/bin/env python3
"""The CPU audit of the real CLI against real agents: the agent's cpu.isa_level
against glibc's loader on this machine, cpu.vulnerabilities against sysfs,
audit --require-level/--require-flags and the inventory's require_level=/
require_flags=, CPU-VULNERABLE on a fixture guest, and a lying guest (the
hostile agent serving this machine's real facts with a lower level).
Prints TAP.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, skip, start_agents, stop, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]
AGENT = os.environ["GB_AGENT"]
DATA = os.environ["GB_TEST_DATA"]
HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "hostile-agent.py")
LDSO = "/lib64/ld-linux-x86-64.so.2"
VULN_DIR = "/sys/devices/system/cpu/vulnerabilities"


def cli(*args, timeout=60):
    return subprocess.run([CLI] + list(args), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def wait_socket(sock):
    import socket
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(sock)
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("nothing listens on %s" % sock)


def findings(proc):
    """{guest: [finding, ...]} of audit --format json."""
    doc = json.loads(proc.stdout)
    return {g["name"]: (g.get("result") or {}).get("findings", []) for g in doc["guests"]}


def rule(found, rule_id, subject=None):
    return [f for f in found if f["rule"] == rule_id and (subject is None or f["subject"] == subject)]


def ldso_level():
    out = subprocess.run([LDSO, "--help"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("x86-64-v") and "(supported" in line:
            return line.split()[0]
    return "x86-64-v1"


def main():
    tmp = tempfile.mkdtemp(prefix="gb-cpu-audit-")
    procs = []
    try:
        live_procs, (live, live2) = start_agents(tmp, ["live", "live2"])
        procs += live_procs
        fixture = os.path.join(tmp, "qemu64.sock")
        procs.append(subprocess.Popen([AGENT, "-m", "unix-listen", "-p", fixture, "--sysroot",
                                       os.path.join(DATA, "facts", "qemu64")],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_socket(fixture)

        # The live agent against glibc's loader and sysfs, read here.
        p = cli("facts", "--format", "json", "--sections", "cpu", live)
        cpu = json.loads(p.stdout)["guests"][0]["result"]["cpu"]
        if os.path.exists(LDSO):
            want = ldso_level()
            check("isa_level is what ld.so --help says is supported",
                  cpu["isa_level"] == want, "%s vs %s" % (cpu["isa_level"], want))
        else:
            skip("isa_level is what ld.so --help says is supported", "no " + LDSO)
        if os.path.isdir(VULN_DIR):
            files = {}
            for name in os.listdir(VULN_DIR):
                with open(os.path.join(VULN_DIR, name)) as f:
                    files[name] = f.read().rstrip("\n")
            check("vulnerabilities are the sysfs files verbatim", cpu["vulnerabilities"] == files,
                  "%r vs %r" % (cpu["vulnerabilities"], files))
        else:
            check("no vulnerabilities directory: null", cpu["vulnerabilities"] is None)
        check("every hypervisor leaf is listed",
              isinstance(cpu["hypervisor"]["signatures"], list)
              and all(s["leaf"].startswith("0x400000") or s["leaf"].startswith("0x4000")
                      for s in cpu["hypervisor"]["signatures"]))
        check("the kernel's hypervisor says how it was decided",
              isinstance(cpu["hypervisor"]["kernel"]["evidence"], str), p.stdout[:300])
        level = cpu["isa_level"]

        # --require-level at the machine's own level holds; a required flag it lacks fails.
        p = cli("audit", "--format", "json", "--require-level", level, live)
        f = findings(p)[live]
        isa = rule(f, "CPU-ISA-LEVEL")
        check("require-level met: a NOTE with the level",
              len(isa) == 1 and isa[0]["level"] == "NOTE" and level in isa[0]["detail"]
              and "required " + level in isa[0]["detail"], p.stdout[:500])
        p = cli("audit", "--format", "json", "--require-flags", "fpu,gbnosuchflag", live)
        req = rule(findings(p)[live], "CPU-REQUIRED-FLAGS")
        check("require-flags: a FAIL naming only the missing flag, exit 1",
              p.returncode == 1 and len(req) == 1 and req[0]["level"] == "FAIL"
              and req[0]["detail"].endswith("missing: gbnosuchflag"), "%d %r" % (p.returncode, req))
        p = cli("audit", "--format", "json", "--require-flags", "fpu", live)
        req = rule(findings(p)[live], "CPU-REQUIRED-FLAGS")
        check("require-flags all present: PASS", len(req) == 1 and req[0]["level"] == "PASS", req)
        p = cli("audit", "--format", "json", live)
        check("nothing required: no CPU-REQUIRED-FLAGS row",
              rule(findings(p)[live], "CPU-REQUIRED-FLAGS") == [])

        # A guest whose kernel reports hidden mitigations (fixture tree, real agent).
        p = cli("audit", "--format", "json", fixture)
        f = findings(p)[fixture]
        ssb = rule(f, "CPU-VULNERABLE", "cpu/spec_store_bypass")
        check("CPU-VULNERABLE names ssbd and how to expose it",
              len(ssb) == 1 and ssb[0]["level"] == "WARN" and "ssbd" in ssb[0]["detail"]
              and "+ssbd" in ssb[0]["hint"] and "<feature policy='require' name='ssbd'/>"
              in ssb[0]["hint"], ssb)
        mds = rule(f, "CPU-VULNERABLE", "cpu/mds")
        check("CPU-VULNERABLE names md-clear", len(mds) == 1 and "md-clear" in mds[0]["hint"], mds)
        check("a mitigated one is not a finding", rule(f, "CPU-VULNERABLE", "cpu/meltdown") == [])
        # Under --sysroot there is no CPUID: a required level cannot be checked.
        p = cli("audit", "--format", "json", "--require-level", "x86-64-v2", fixture)
        isa = rule(findings(p)[fixture], "CPU-ISA-LEVEL")
        check("unknown level with a requirement: WARN, not a silent pass",
              len(isa) == 1 and isa[0]["level"] == "WARN", isa)

        # A lying guest: this machine's real facts with the level of a qemu64 guest.
        real = json.loads(cli("facts", "--format", "json", live).stdout)["guests"][0]["result"]
        real["cpu"]["isa_level"] = "x86-64-v1"
        real["cpu"]["isa_missing"] = ["popcnt", "sse4_1", "sse4_2", "ssse3"]
        scenario = os.path.join(tmp, "v1.json")
        with open(scenario, "w") as fh:
            json.dump({"gb-get-facts": real, "gb-ping": {}, "gb-info": {}}, fh)
        v1 = os.path.join(tmp, "v1.sock")
        procs.append(subprocess.Popen([sys.executable, HOSTILE, v1, scenario],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_socket(v1)
        p = cli("audit", "--format", "json", "--require-level", "x86-64-v2", v1, live)
        got = findings(p)
        isa = rule(got[v1], "CPU-ISA-LEVEL")
        check("below --require-level: FAIL naming the missing features and a model, exit 1",
              p.returncode == 1 and len(isa) == 1 and isa[0]["level"] == "FAIL"
              and "sse4_2" in isa[0]["detail"] and "Nehalem" in isa[0]["hint"],
              "%d %r" % (p.returncode, isa))
        check("the guest at the level is not failed",
              rule(got[live], "CPU-ISA-LEVEL")[0]["level"] == "NOTE")
        p = cli("audit", "--require-level", "x86-64-v2", v1)
        check("table: the FAIL row and its hint", "CPU-ISA-LEVEL" in p.stdout
              and "below the required x86-64-v2" in p.stdout and "hint:" in p.stdout, p.stdout)

        # Inventory keys, per guest; the command line overrides them.
        inv = os.path.join(tmp, "fleet.ini")
        with open(inv, "w") as fh:
            fh.write("[guest old]\ntarget=%s\nrequire_level=x86-64-v3\n\n"
                     "[guest new]\ntarget=%s\nrequire_flags=gbnosuchflag\n" % (v1, live2))
        p = cli("audit", "--format", "json", "--inventory", inv)
        got = findings(p)
        check("inventory require_level= fails only its guest",
              p.returncode == 1 and rule(got["old"], "CPU-ISA-LEVEL")[0]["level"] == "FAIL"
              and rule(got["new"], "CPU-ISA-LEVEL")[0]["level"] == "NOTE", p.stdout[:400])
        check("inventory require_flags= fails only its guest",
              rule(got["new"], "CPU-REQUIRED-FLAGS")[0]["level"] == "FAIL"
              and rule(got["old"], "CPU-REQUIRED-FLAGS") == [])
        p = cli("audit", "--format", "json", "--inventory", inv, "--require-level", "x86-64-v1",
                "--require-flags", "fpu")
        got = findings(p)
        check("--require-level/--require-flags override the inventory",
              rule(got["old"], "CPU-ISA-LEVEL")[0]["level"] == "NOTE"
              and rule(got["new"], "CPU-REQUIRED-FLAGS")[0]["level"] == "PASS", p.stdout[:400])

        # Usage errors: exit 2 before any guest is contacted (a dead socket would be exit 3).
        dead = os.path.join(tmp, "dead.sock")
        for args, want in (
                (["--require-level", "x86-64-v5"], "--require-level: invalid ISA level 'x86-64-v5'"),
                (["--require-level", ""], "--require-level: invalid ISA level ''"),
                (["--require-level", "v3"], "expected x86-64-v1..x86-64-v4, armv8-a"),
                (["--require-flags", ""], "--require-flags: invalid CPU flag ''"),
                (["--require-flags", "avx2,,aes"], "--require-flags: invalid CPU flag ''"),
                (["--require-flags", "avx2;aes"], "invalid CPU flag 'avx2;aes'")):
            p = cli("audit", *args, dead)
            check("usage error %r: exit 2 with the reason" % args,
                  p.returncode == 2 and want in p.stderr, "%d %s" % (p.returncode, p.stderr))
        bad = os.path.join(tmp, "bad.ini")
        with open(bad, "w") as fh:
            fh.write("[guest a]\ntarget=%s\nrequire_level=x86-64-v7\n" % dead)
        p = cli("audit", "--inventory", bad)
        check("inventory require_level= bad: exit 2 naming file and line",
              p.returncode == 2 and (bad + ":1: [guest a]: require_level: invalid ISA level "
                                     "'x86-64-v7'") in p.stderr, p.stderr)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
