#!/usr/bin/env python3
"""arm64 guests with the real agent and the real CLI on this (x86) machine: agents
reading arm64 fixture trees (--sysroot) beside a live agent, checked against what
each tree's /proc/cpuinfo says; the audit's rows for them (no x86 rule misfires);
a census of the mixed fleet (per-architecture baselines and lowest levels); bad
arm64 documents; bench aes reporting OpenSSL's capability mask (the software
path of a guest without aes/pmull or AES-NI). Prints TAP.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, prom_samples, prom_valid, start_agents, stop, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]
AGENT = os.environ["GB_AGENT"]
DATA = os.environ["GB_TEST_DATA"]
ARM_TREES = ["arm-qemu-max", "arm-a57-xen", "aarch64"]


def cli(*args, timeout=60):
    return subprocess.run([CLI] + list(args), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def start_sysroot_agent(tmp, name, root, procs):
    sock = os.path.join(tmp, name + ".sock")
    procs.append(subprocess.Popen([AGENT, "-m", "unix-listen", "-p", sock, "--sysroot", root],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL))
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(sock)
            return sock
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError("agent on %s did not listen" % root)
            time.sleep(0.02)


def cpuinfo_first(root):
    """The first CPU's lines of TREE/proc/cpuinfo, as a dict."""
    out = {}
    with open(os.path.join(root, "proc", "cpuinfo")) as fh:
        for line in fh:
            if not line.strip():
                break
            key, _, value = line.partition(":")
            out.setdefault(key.strip(), value.strip())
    return out


def findings(proc):
    doc = json.loads(proc.stdout)
    return {g["name"]: (g.get("result") or {}).get("findings", []) for g in doc["guests"]}


def rule(found, rule_id):
    return [f for f in found if f["rule"] == rule_id]


def main():
    tmp = tempfile.mkdtemp(prefix="gb-arm-fleet-")
    procs = []
    try:
        live_procs, (live,) = start_agents(tmp, ["live"])
        procs += live_procs
        socks = {t: start_sysroot_agent(tmp, t, os.path.join(DATA, "facts", t), procs)
                 for t in ARM_TREES}
        # a57 without the Crypto Extensions: the fixture with aes and pmull taken out
        nocrypto = os.path.join(tmp, "nocrypto")
        shutil.copytree(os.path.join(DATA, "facts", "arm-a57-xen"), nocrypto, symlinks=True)
        cpuinfo = os.path.join(nocrypto, "proc", "cpuinfo")
        with open(cpuinfo) as fh:
            text = fh.read().replace(" aes pmull", "")
        with open(cpuinfo, "w") as fh:
            fh.write(text)
        socks["nocrypto"] = start_sysroot_agent(tmp, "nocrypto", nocrypto, procs)

        # facts: what the tree's cpuinfo says, named
        want = {"arm-qemu-max": ("0x00", "QEMU max", "armv9.1-a", "QEMU"),
                "arm-a57-xen": ("ARM", "Cortex-A57", "armv8-a", "Xen"),
                "aarch64": ("ARM", "Neoverse-N1", "armv8.2-a", "KVM")}
        for tree, (vendor, model, level, hv) in want.items():
            p = cli("facts", "--format", "json", "--sections", "cpu,memory", socks[tree])
            doc = json.loads(p.stdout) if p.returncode == 0 else {}
            cpu = doc["guests"][0]["result"]["cpu"] if doc else {}
            info = cpuinfo_first(os.path.join(DATA, "facts", tree))
            check("%s: facts name the CPU from its MIDR lines" % tree,
                  cpu.get("vendor") == vendor and cpu.get("model_name") == model
                  and cpu.get("midr", {}).get("implementer") == info["CPU implementer"]
                  and cpu.get("midr", {}).get("part") == info["CPU part"],
                  p.stderr + json.dumps(cpu)[:400])
            check("%s: flags are the Features line, level %s" % (tree, level),
                  cpu.get("flags") == info["Features"].split() and cpu.get("isa_level") == level
                  and cpu.get("architecture") == "aarch64" and cpu.get("cpuid") is None,
                  json.dumps(cpu)[:400])
            check("%s: hypervisor %s without CPUID" % (tree, hv),
                  cpu.get("hypervisor", {}).get("vendor") == hv, json.dumps(cpu)[:400])
        p = cli("facts", "--format", "json", "--sections", "memory", socks["arm-a57-xen"])
        mem = json.loads(p.stdout)["guests"][0]["result"]["memory"]
        check("64K-page tree: its huge page sizes", mem["hugepages"]["sizes_bytes"]
              == [2 << 20, 512 << 20, 16 << 30] and mem["page_size_bytes"] is None, mem)
        p = cli("facts", "--format", "json", "--sections", "memory", live)
        mem = json.loads(p.stdout)["guests"][0]["result"]["memory"]
        check("live agent: the page size of this kernel",
              mem["page_size_bytes"] == os.sysconf("SC_PAGE_SIZE"), mem)

        # audit: arm64 rows, and no x86 rule misfiring on them
        fleet = [live] + [socks[t] for t in ARM_TREES] + [socks["nocrypto"]]
        p = cli("audit", "--format", "json", "--require-level", "x86-64-v1", *fleet)
        f = findings(p)
        for tree in ARM_TREES:
            rows = f[socks[tree]]
            check("%s: no x86 SIMD or nested-virtualisation rows" % tree,
                  rule(rows, "CPU-MISSING-SIMD") == [] and rule(rows, "CPU-NESTED-EXPOSED") == [],
                  rows)
            aes = rule(rows, "CPU-NO-AESNI")
            check("%s: AES-GCM acceleration is aes and pmull" % tree,
                  len(aes) == 1 and aes[0]["level"] == "PASS" and "aes, pmull" in aes[0]["detail"],
                  aes)
            isa = rule(rows, "CPU-ISA-LEVEL")
            check("%s: its Arm level as a NOTE; x86-64-v1 not applied" % tree,
                  len(isa) == 1 and isa[0]["level"] == "NOTE"
                  and isa[0]["detail"].startswith("ISA level " + want[tree][2])
                  and "applies to x86 guests only" in isa[0]["detail"], isa)
        hv = rule(f[socks["arm-qemu-max"]], "CPU-HYPERVISOR")
        check("QEMU's own max CPU: TCG warned", len(hv) == 1 and hv[0]["level"] == "WARN"
              and "only TCG presents" in hv[0]["detail"], hv)
        hv = rule(f[socks["arm-a57-xen"]], "CPU-HYPERVISOR")
        check("Xen from the device tree", len(hv) == 1 and hv[0]["level"] == "PASS"
              and "Xen" in hv[0]["detail"], hv)
        aes = rule(f[socks["nocrypto"]], "CPU-NO-AESNI")
        check("no aes, pmull: FAIL with the arm64 remedy",
              len(aes) == 1 and aes[0]["level"] == "FAIL" and "no aes, pmull" in aes[0]["detail"]
              and "Crypto Extensions" in aes[0]["hint"], aes)
        check("the x86 guest keeps its x86 rows", rule(f[live], "CPU-NO-AESNI") != []
              and rule(f[live], "CPU-ISA-LEVEL")[0]["detail"].startswith("ISA level x86-64-v"),
              f[live])

        # census of the mixed fleet: per architecture
        fleet = [live] + [socks[t] for t in ARM_TREES]
        p = cli("census", "--format", "json", *fleet)
        doc = json.loads(p.stdout) if p.stdout else {}
        archs = {a["architecture"]: a for a in doc.get("architectures", [])}
        check("census: every guest counted, two architectures",
              p.returncode == 0 and all(g["problem"] is None for g in doc["guests"])
              and set(archs) == {"aarch64", "x86_64"}, p.stderr + p.stdout[:500])
        check("census: the aarch64 lowest is the Cortex-A57's armv8-a",
              archs["aarch64"]["lowest"] == {"isa_level": "armv8-a",
                                             "guests": [socks["arm-a57-xen"]]}, archs)
        check("census: the aarch64 baseline has aes and pmull, no x86 flag",
              {"aes", "pmull", "crc32"} <= set(archs["aarch64"]["baseline"])
              and "sse2" not in archs["aarch64"]["union"], archs["aarch64"])
        check("census: x86 lowest is the live guest's level",
              archs["x86_64"]["lowest"]["guests"] == [live]
              and archs["x86_64"]["lowest"]["isa_level"].startswith("x86-64-v"), archs)
        check("census: no fleet-wide lowest across architectures", doc["lowest"] is None)
        check("census: baselines per architecture",
              sorted(b["architecture"] for b in doc["baselines"]) == ["aarch64", "x86_64"],
              doc["baselines"])
        p = cli("census", *fleet)
        check("census table: a lowest line per architecture",
              "lowest ISA level of the aarch64 guests: armv8-a, held by 1 guest(s)" in p.stdout
              and "lowest ISA level of the x86_64 guests: x86-64-v" in p.stdout
              and "baseline of the fleet's aarch64 guests (3 guests" in p.stdout, p.stdout)
        p = cli("census", "--format", "prom", *fleet)
        samples = prom_samples(p.stdout) or []
        arm_levels = sorted(float(s[2]) for s in samples if s[0] == "guestbench_cpu_arm_isa_level")
        check("census prom: valid, Arm levels as major.minor",
              prom_valid(p.stdout) and arm_levels == [8.0, 8.2, 9.1]
              and len([s for s in samples if s[0] == "guestbench_cpu_isa_level"]) == 1,
              p.stdout)

        # --require-level with an Arm level: judges the aarch64 guests, the x86 one its own
        p = cli("audit", "--format", "json", "--require-level", "x86-64-v1,armv8.2-a", *fleet)
        f = findings(p)
        isa = {t: rule(f[socks[t]], "CPU-ISA-LEVEL") for t in ARM_TREES}
        check("audit --require-level x86-64-v1,armv8.2-a: the armv8-a guest FAILs, exit 1",
              p.returncode == 1 and len(isa["arm-a57-xen"]) == 1
              and isa["arm-a57-xen"][0]["level"] == "FAIL"
              and isa["arm-a57-xen"][0]["detail"] == "ISA level armv8-a does not reach the "
              "required armv8.2-a: lacks atomics, asimdrdm, dcpop"
              and "host-passthrough" in isa["arm-a57-xen"][0]["hint"],
              (p.returncode, isa["arm-a57-xen"]))
        check("audit --require-level x86-64-v1,armv8.2-a: armv8.2-a and armv9.1-a reach it",
              all(len(isa[t]) == 1 and isa[t][0]["level"] == "NOTE"
                  and "; required armv8.2-a" in isa[t][0]["detail"]
                  for t in ("aarch64", "arm-qemu-max")), isa)
        live_isa = rule(f[live], "CPU-ISA-LEVEL")
        check("audit --require-level x86-64-v1,armv8.2-a: the x86 guest judged at x86-64-v1",
              len(live_isa) == 1 and live_isa[0]["level"] == "NOTE"
              and "required x86-64-v1" in live_isa[0]["detail"], live_isa)
        p = cli("audit", "--format", "json", "--require-level", "armv9-a", *fleet)
        f = findings(p)
        isa = {t: rule(f[socks[t]], "CPU-ISA-LEVEL")[0] for t in ARM_TREES}
        check("audit --require-level armv9-a: armv8.2-a lacks sve2 and more, armv9.1-a holds",
              p.returncode == 1 and isa["aarch64"]["level"] == "FAIL"
              and isa["aarch64"]["detail"].endswith(", sve2")
              and isa["arm-qemu-max"]["level"] == "NOTE", (p.returncode, isa))
        # the inventory's require_level= per guest, Arm levels too
        inv = os.path.join(tmp, "arm.ini")
        with open(inv, "w") as fh:
            fh.write("[guest a57]\ntarget=%s\nrequire_level=armv8.2-a\n\n"
                     "[guest max]\ntarget=%s\nrequire_level=x86-64-v1,armv9-a\n\n"
                     "[guest x86]\ntarget=%s\nrequire_level=armv9.3-a\n"
                     % (socks["arm-a57-xen"], socks["arm-qemu-max"], live))
        p = cli("audit", "--format", "json", "--inventory", inv)
        f = findings(p)
        isa = {n: rule(f.get(n, []), "CPU-ISA-LEVEL") for n in ("a57", "max", "x86")}
        check("inventory require_level=armv8.2-a: the armv8-a guest FAILs, exit 1",
              p.returncode == 1 and len(isa["a57"]) == 1 and isa["a57"][0]["level"] == "FAIL"
              and "required armv8.2-a" in isa["a57"][0]["detail"], (p.returncode, isa))
        check("inventory require_level=x86-64-v1,armv9-a: armv9.1-a reaches armv9-a",
              len(isa["max"]) == 1 and isa["max"][0]["level"] == "NOTE"
              and "; required armv9-a" in isa["max"][0]["detail"], isa)
        check("inventory require_level=armv9.3-a: an Arm level does not judge an x86 guest",
              len(isa["x86"]) == 1 and isa["x86"][0]["level"] == "NOTE"
              and "required" not in isa["x86"][0]["detail"], isa)
        p = cli("census", "--format", "json", "--require-level", "armv8.2-a,x86-64-v1", *fleet)
        doc = json.loads(p.stdout) if p.stdout else {"guests": []}
        req = {g["name"]: g.get("require") for g in doc["guests"]}
        check("census --require-level armv8.2-a,x86-64-v1: only the armv8-a guest lacks, exit 1",
              p.returncode == 1 and req == {
                  live: None, socks["arm-qemu-max"]: None, socks["aarch64"]: None,
                  socks["arm-a57-xen"]: "armv8-a does not reach the required armv8.2-a "
                                        "(lacks atomics, asimdrdm, dcpop)"},
              (p.returncode, req, p.stderr))
        p = cli("census", "--require-level", "armv8-a", *fleet)
        check("census --require-level armv8-a: every guest reaches it, exit 0",
              p.returncode == 0 and "required and lacking" not in p.stdout,
              (p.returncode, p.stdout[-600:]))
        # bad levels: usage errors, exit 2 before any guest is asked (a dead socket: exit 3)
        dead = os.path.join(tmp, "dead.sock")
        for value, want_err in (
                ("armv8.9-a", "--require-level: invalid ISA level 'armv8.9-a' in 'armv8.9-a' "
                              "(expected x86-64-v1..x86-64-v4, armv8-a, armv8.1-a..armv8.8-a, "
                              "armv9-a or armv9.1-a..armv9.3-a"),
                ("armv8-a,armv9-a", "'armv8-a' and 'armv9-a' in 'armv8-a,armv9-a' are both "
                                    "Arm levels"),
                ("x86-64-v2,x86-64-v3", "are both x86-64 levels"),
                ("armv8.2-a,", "invalid ISA level '' in 'armv8.2-a,'"),
                ("armv8.2", "invalid ISA level 'armv8.2'")):
            for command in ("audit", "census"):
                p = cli(command, "--require-level", value, dead)
                check("%s --require-level %s: exit 2 with the reason" % (command, value),
                      p.returncode == 2 and want_err in p.stderr and p.stdout == "",
                      (p.returncode, p.stderr))

        # bad arm64 documents: a problem each, exit 3
        p = cli("facts", "--format", "json", "-o", os.path.join(tmp, "arm.json"),
                socks["aarch64"])
        with open(os.path.join(tmp, "arm.json")) as fh:
            saved = json.load(fh)
        for level, arch, problem in [
                ("armv10-a", "aarch64", "cpu.isa_level is not armv8-a..armv9.3-a"),
                ("x86-64-v3", "aarch64", "cpu.isa_level is not armv8-a..armv9.3-a"),
                ("armv8-a", "x86_64", "cpu.isa_level is not x86-64-v1..x86-64-v4"),
                ("rv64gc", "riscv64", "cpu.architecture riscv64 has no ISA levels known")]:
            saved["guests"][0]["result"]["cpu"]["isa_level"] = level
            saved["guests"][0]["result"]["cpu"]["architecture"] = arch
            path = os.path.join(tmp, "bad.json")
            with open(path, "w") as fh:
                json.dump(saved, fh)
            p = cli("census", "--format", "json", path)
            doc = json.loads(p.stdout) if p.stdout else {"guests": [{}]}
            check("census of a saved %s guest at %s: not counted, exit 3" % (arch, level),
                  p.returncode == 3 and problem in (doc["guests"][0].get("problem") or ""),
                  "%d %s" % (p.returncode, p.stdout[:300]))
        # bench aes: an agent whose OpenSSL is told to ignore AES-NI/PCLMULQDQ (x86) and
        # the ARMv8 AES/PMULL instructions (aarch64) says so in its result
        masked = os.path.join(tmp, "masked.sock")
        env = dict(os.environ, OPENSSL_ia32cap="~0x200000200000000", OPENSSL_armcap="0")
        procs.append(subprocess.Popen([AGENT, "-m", "unix-listen", "-p", masked], env=env,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 10
        while not os.path.exists(masked) and time.monotonic() < deadline:
            time.sleep(0.02)
        rates = {}
        for sock in (live, masked):
            p = cli("bench", "aes", "--sizes", "16k", "--seconds", "0.5", "--no-save",
                    "--format", "json", sock)
            res = json.loads(p.stdout)["guests"][0]["result"] if p.returncode == 0 else {}
            rates[sock] = (res.get("metrics") or [{}])[0].get("value", 0)
            caps = res.get("openssl_capability_env")
            if sock == live:
                check("bench aes: no mask, nothing reported", caps == {}, p.stdout[:300])
            else:
                check("bench aes: the masks the agent runs under are in its result",
                      caps == {"OPENSSL_ia32cap": "~0x200000200000000", "OPENSSL_armcap": "0"},
                      p.stdout[:300])
        with open("/proc/cpuinfo") as fh:
            has_aesni = " aes " in fh.read()
        if has_aesni:
            check("bench aes: the masked agent ran OpenSSL's slower software path",
                  0 < rates[masked] < rates[live], rates)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
