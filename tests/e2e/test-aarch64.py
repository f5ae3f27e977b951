#!/usr/bin/env python3
"""End to end on aarch64: real arm64 Linux guests under qemu-system-aarch64 -M virt
(TCG), the cross-built agent on a real virtio-serial port, driven by this host's
(amd64) CLI.

Two CPU models with different features: -cpu max (sve, atomics, ...) and
-cpu cortex-a57. What the agent reports is held against the guest's own
/proc/cpuinfo, which guest-init prints on the serial console: a channel that
is not the agent's. Then a mixed fleet: the two guests and a real x86 agent on
a unix socket of this host in one audit and one census run.

Needs GB_AGENT_AARCH64 (the cross-built agent, meson option aarch64_agent) and
qemu-system-aarch64; skips, saying which, without them. Prints TAP.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import fleet  # noqa: E402
import gbtest  # noqa: E402
from gbtest import check, start_agents, stop, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]
AGENT_AARCH64 = os.environ.get("GB_AGENT_AARCH64", "")
WORK = os.environ.get("GB_E2E_DIR") or tempfile.mkdtemp(prefix="gb-e2e-")
GUESTS = ["arm-max", "arm-a57"]
# What the agent must make of the MIDR the guest's /proc/cpuinfo shows, by
# (CPU implementer, CPU part): (cpu.vendor, cpu.model_name). QEMU's max has no
# real implementer: its vendor is shown as the hex it is.
MIDR_NAMES = {("0x41", "0xd07"): ("ARM", "Cortex-A57"), ("0x00", "0x051"): ("0x00", "QEMU max")}
ARM_LEVEL = re.compile(r"^armv(8|9)(\.[0-9])?-a$")

# Not one of these is an arm64 name: an x86 spelling at the start of a word of
# an arm64 guest's findings is a rule that took the guest for x86 (case matters:
# arm64's Features have a "cpuid" of their own).
X86_WORDS = re.compile(r"\b(AES-NI|aesni|pclmul|CPUID|x86-64|avx|sse|ssbd|spec-ctrl|md-clear|"
                       r"Skylake|Cascadelake|EPYC|vmx|svm|kvm64|qemu64)")


def cli(*args, timeout=300):
    return subprocess.run([CLI, "--color", "never"] + list(args), capture_output=True, text=True,
                          timeout=timeout)


def json_out(r):
    try:
        return json.loads(r.stdout)
    except ValueError:
        return None


def metric(result, name, **labels):
    for m in (result or {}).get("metrics", []):
        if m["metric"] == name and all(m["labels"].get(k) == v for k, v in labels.items()):
            return m["value"]
    return None


def test_facts(g):
    r = cli("--format", "json", "--timeout", "120", "facts", *[x.sock for x in g.values()])
    doc = json_out(r)
    check("facts: both aarch64 guests answer over their virtio-serial ports",
          r.returncode == 0 and doc, (r.returncode, r.stderr))
    facts = {name: guest.get("result", {}) for name, guest in zip(g, doc["guests"])}
    flags = {}
    for name, x in g.items():
        cpuinfo = x.cpuinfo()
        cpu = facts[name].get("cpu", {})
        check("%s: cpu.architecture aarch64" % name, cpu.get("architecture") == "aarch64",
              cpu.get("architecture"))
        check("%s: cpu.count as many as the guest's /proc/cpuinfo lists" % name,
              cpu.get("count") == len(cpuinfo), (cpu.get("count"), len(cpuinfo)))
        features = cpuinfo[0].get("Features", "").split()
        check("%s: cpu.flags are the guest's /proc/cpuinfo Features" % name,
              features and cpu.get("flags") == features, (cpu.get("flags"), features))
        flags[name] = set(cpu.get("flags") or [])
        midr = (cpuinfo[0].get("CPU implementer"), cpuinfo[0].get("CPU part"))
        print("# %s: implementer %s part %s; facts vendor %r model %r isa_level %r" % (
            name, midr[0], midr[1], cpu.get("vendor"), cpu.get("model_name"),
            cpu.get("isa_level")))
        check("%s: cpu.vendor and cpu.model_name from the guest's implementer %s part %s" % (
            name, midr[0], midr[1]), (cpu.get("vendor"), cpu.get("model_name")) ==
            MIDR_NAMES.get(midr), (cpu.get("vendor"), cpu.get("model_name")))
        check("%s: cpu.isa_level an Arm A-profile level" % name,
              ARM_LEVEL.match(cpu.get("isa_level") or ""), cpu.get("isa_level"))
        # the Debian arm64 cloud kernel has 4 KiB pages (CONFIG_ARM64_4K_PAGES)
        page = (facts[name].get("memory") or {}).get("page_size_bytes")
        check("%s: memory.page_size_bytes 4096, the KernelPageSize on the guest's console" % name,
              page == x.page_size() == 4096, (page, x.page_size()))
    # the table shows the same MIDR and page size
    r = cli("--timeout", "120", "facts", g["arm-a57"].sock)
    info = g["arm-a57"].cpuinfo()[0]
    want = "  midr         implementer %s, variant %s, part %s, revision %s (from cpuinfo)\n" % (
        info.get("CPU implementer"), info.get("CPU variant"), info.get("CPU part"),
        info.get("CPU revision"))
    check("arm-a57: the facts table shows the console's MIDR and 4 KiB pages",
          r.returncode == 0 and want in r.stdout and "  page size    4 KiB\n" in r.stdout,
          (want, r.stdout[-1500:], r.stderr[-300:]))
    check("arm-max: -cpu max has sve, sve2 and atomics",
          {"sve", "sve2", "atomics"} <= flags["arm-max"], sorted(flags["arm-max"]))
    check("arm-a57: cortex-a57 has aes and pmull, no sve, no atomics",
          {"aes", "pmull"} <= flags["arm-a57"] and not {"sve", "atomics"} & flags["arm-a57"],
          sorted(flags["arm-a57"]))
    check("the two models' flag sets differ, a57's within max's",
          flags["arm-a57"] < flags["arm-max"], (flags["arm-a57"], flags["arm-max"]))
    levels = {n: (facts[n].get("cpu") or {}).get("isa_level") for n in g}
    # Armv8.1 makes the LSE atomics mandatory: the a57 has none, max has them
    check("isa_level: cortex-a57 armv8-a, max above it",
          levels["arm-a57"] == "armv8-a" and levels["arm-max"] not in (None, "armv8-a"), levels)
    check("no facts errors about the CPU's identity or level",
          not [e for n in g for e in facts[n].get("errors", [])
               if e.get("member", "").split(".")[:2] in (["cpu", "model_name"], ["cpu", "vendor"],
                                                        ["cpu", "isa_level"], ["cpu", "flags"])],
          {n: facts[n].get("errors") for n in g})
    return facts


def findings(guest):
    return [x for x in (guest.get("result") or {}).get("findings", [])]


def test_audit(g):
    r = cli("--format", "json", "--timeout", "120", "audit", *[x.sock for x in g.values()])
    doc = json_out(r)
    check("audit: both aarch64 guests audited", doc and r.returncode in (0, 1) and
          all(x["status"] == "ok" for x in doc["guests"]), (r.returncode, r.stderr))
    if not doc:
        return
    for name, guest in zip(g, doc["guests"]):
        fs = findings(guest)
        aes = [x for x in fs if x["rule"] == "CPU-NO-AESNI"]
        check("audit %s: the AES rule passes on aes+pmull" % name,
              len(aes) == 1 and aes[0]["level"] == "PASS", aes)
        misfires = [x for x in fs if x["level"] != "PASS" and
                    X86_WORDS.search(x["detail"] + " " + (x.get("hint") or ""))]
        check("audit %s: no finding in x86 terms" % name, not misfires, misfires)
        print("# audit %s: %s" % (name, sorted((x["rule"], x["level"]) for x in fs
                                               if x["level"] != "PASS")))


def test_bench_aes(g):
    # one guest at a time: the host has two cores
    for name, x in g.items():
        r = cli("--format", "json", "--timeout", "300", "bench", "aes", "--seconds", "0.5",
                "--sizes", "16,16384", "--no-save", x.sock, timeout=600)
        doc = json_out(r)
        res = doc["guests"][0].get("result") if doc else None
        small = metric(res, "aes-128-gcm", block_size="16")
        big = metric(res, "aes-128-gcm", block_size="16384")
        check("bench aes %s: a rate above 0 at 16 and 16384 bytes" % name,
              r.returncode == 0 and small and small > 0 and big and big > 0,
              (r.returncode, r.stderr[-600:], small, big))
        print("# bench aes %s: %s B/s at 16 B, %s B/s at 16 KiB" % (name, small, big))


def test_require_level(g):
    """--require-level armv8.1-a: the a57 (armv8-a, no LSE atomics) is below it, max is not."""
    a57, mx = g["arm-a57"].sock, g["arm-max"].sock
    r = cli("--format", "json", "--timeout", "120", "audit", "--require-level",
            "x86-64-v3,armv8.1-a", a57, mx)
    doc = json_out(r)
    isa = {x["name"]: [f for f in findings(x) if f["rule"] == "CPU-ISA-LEVEL"]
           for x in (doc or {}).get("guests", [])}
    check("audit --require-level x86-64-v3,armv8.1-a: the cortex-a57 guest FAILs, exit 1",
          r.returncode == 1 and len(isa.get(a57, [])) == 1 and isa[a57][0]["level"] == "FAIL" and
          isa[a57][0]["detail"].startswith("ISA level armv8-a does not reach the required "
                                           "armv8.1-a: lacks atomics"),
          (r.returncode, r.stderr[-600:], isa.get(a57)))
    check("audit --require-level x86-64-v3,armv8.1-a: the max guest reaches it, x86 not applied",
          len(isa.get(mx, [])) == 1 and isa[mx][0]["level"] == "NOTE" and
          "; required armv8.1-a; the required x86-64-v3 applies to x86 guests only" in
          isa[mx][0]["detail"], isa.get(mx))
    r = cli("--format", "json", "--timeout", "120", "census", "--require-level", "armv8.1-a",
            a57, mx)
    doc = json_out(r) or {}
    req = {x["name"]: x.get("require") for x in doc.get("guests", [])}
    check("census --require-level armv8.1-a: the cortex-a57 guest lacks atomics, exit 1",
          r.returncode == 1 and req.get(mx, "absent") is None and
          (req.get(a57) or "").startswith("armv8-a does not reach the required armv8.1-a "
                                          "(lacks atomics"),
          (r.returncode, req, r.stderr[-600:]))
    r = cli("--timeout", "120", "census", "--require-level", "armv8-a", a57, mx)
    check("census --require-level armv8-a: both guests reach it, exit 0", r.returncode == 0,
          (r.returncode, r.stdout[-600:], r.stderr[-600:]))


def bench_json(*args):
    """Runs bench --format json on one guest: (exit status, its result or None, stderr)."""
    r = cli("--format", "json", "--timeout", "300", "bench", *args, "--no-save", timeout=600)
    doc = json_out(r)
    return r.returncode, doc["guests"][0].get("result") if doc else None, r.stderr[-600:]


def test_bench_disk_mem_net(x, hostport):
    """bench disk, mem and net inside one aarch64 guest, each kept short (TCG)."""
    tests = ("write", "rewrite", "read", "reread", "randread", "randwrite")
    started = time.monotonic()
    rc, res, err = bench_json("disk", "--size", "2M", "--record", "4k,1M", x.sock)
    disk = {(t, rs): metric(res, "disk-throughput", test=t, record_size=str(rs))
            for t in tests for rs in (4096, 1 << 20)}
    check("bench disk %s: a rate above 0 for all six tests at 4 KiB and 1 MiB" % x.name,
          rc == 0 and all(v and v > 0 for v in disk.values()), (rc, err, disk))
    res = res or {}
    check("bench disk %s: 2 MiB at the record sizes asked, O_DIRECT on the ext4 scratch disk "
          "vda" % x.name,
          (res.get("params") or {}).get("size") == 2 << 20 and
          (res.get("params") or {}).get("record_sizes") == [4096, 1 << 20] and
          res.get("direct") is True and res.get("filesystem") == "ext4" and
          res.get("block_device") == "vda",
          {k: res.get(k) for k in ("params", "direct", "filesystem", "block_device")})
    kernel = ((res.get("facts") or {}).get("os") or {}).get("kernel_release") or ""
    check("bench disk %s: the attached facts are the arm64 kernel's" % x.name,
          kernel.endswith("-arm64"), kernel)
    disk_s = time.monotonic() - started

    started = time.monotonic()
    rc, res, err = bench_json("mem", "--size", "8M", "--pages", "4k", x.sock)
    values = {m: metric(res, m, pages="4k") for m in ("page-fault", "memory-latency")}
    values.update({op: metric(res, "memory-bandwidth", pages="4k", op=op)
                   for op in ("read", "write", "copy")})
    check("bench mem %s: page-fault, latency and read/write/copy bandwidth above 0 with 4k "
          "pages" % x.name, rc == 0 and all(v and v > 0 for v in values.values()),
          (rc, err, values))
    res = res or {}
    kinds = {m["labels"].get("pages") for m in res.get("metrics", [])}
    facts = res.get("facts") or {}
    check("bench mem %s: 8 MiB, only the 4k pages asked" % x.name,
          (res.get("params") or {}).get("size") == 8 << 20 and kinds == {"4k"},
          (res.get("params"), kinds))
    check("bench mem %s: its facts say aarch64 with the guest's 4 KiB base page" % x.name,
          (facts.get("cpu") or {}).get("architecture") == "aarch64" and
          (facts.get("memory") or {}).get("page_size_bytes") == x.page_size() == 4096,
          ((facts.get("cpu") or {}).get("architecture"),
           (facts.get("memory") or {}).get("page_size_bytes"), x.page_size()))
    mem_s = time.monotonic() - started

    # the agent listens in the guest; QEMU forwards 127.0.0.1:hostport to it (loopback only)
    started = time.monotonic()
    rc, res, err = bench_json("net", "--guest-listen", "5201", "--host-connect",
                              "127.0.0.1:%d" % hostport, "--direction", "both", "--seconds",
                              "1", "--omit", "0", x.sock)
    rates = {d: metric(res, "tcp-throughput", direction=d, streams="1")
             for d in ("host-to-guest", "guest-to-host")}
    check("bench net %s: over user-net hostfwd, both directions above 0, one stream each" %
          x.name, rc == 0 and all(v and v > 0 for v in rates.values()), (rc, err, rates))
    res = res or {}
    transfer = res.get("transfer") or {}
    check("bench net %s: bytes moved each way, the guest received host-to-guest" % x.name,
          all((transfer.get(d) or {}).get("bytes", 0) > 0 for d in rates) and
          (transfer.get("host-to-guest") or {}).get("receiver") == "guest" and
          (transfer.get("guest-to-host") or {}).get("receiver") == "host", transfer)
    check("bench net %s: its facts say aarch64" % x.name,
          ((res.get("facts") or {}).get("cpu") or {}).get("architecture") == "aarch64",
          (res.get("facts") or {}).get("cpu"))
    print("# bench on %s: disk %.0f s (4 KiB write %.3g B/s, randread %.3g B/s), mem %.0f s "
          "(4k page fault %s ns), net %.0f s (%s)" % (
              x.name, disk_s, disk[("write", 4096)] or 0, disk[("randread", 4096)] or 0, mem_s,
              values["page-fault"], time.monotonic() - started,
              ", ".join("%s %.3g B/s" % (d, v or 0) for d, v in rates.items())))


def test_mixed_fleet(g, tmp):
    """One audit and one census over x86 and arm64 guests together: a real agent
    of this host on a unix socket beside the two aarch64 guests."""
    procs, socks = start_agents(tmp, ["x86"])
    try:
        targets = socks + [x.sock for x in g.values()]
        r = cli("--format", "json", "--timeout", "120", "audit", *targets)
        doc = json_out(r)
        ok = doc and all(x["status"] == "ok" for x in doc["guests"])
        check("mixed audit: the x86 agent and both aarch64 guests in one run, each ok",
              ok and r.returncode in (0, 1) and len(doc["guests"]) == 3,
              (r.returncode, r.stderr[-600:]))
        if ok:
            for name, guest in zip(["x86"] + list(g), doc["guests"]):
                rules = {x["rule"] for x in findings(guest)}
                check("mixed audit %s: the AES rule judged" % name, "CPU-NO-AESNI" in rules,
                      sorted(rules))
        r = cli("--format", "json", "--timeout", "120", "census", *targets)
        doc = json_out(r) or {}
        archs = {a["architecture"]: a for a in doc.get("architectures", [])}
        check("mixed census: every guest counted in one run, exit 0",
              r.returncode == 0 and len(doc.get("guests", [])) == 3 and
              all(x.get("problem") is None for x in doc["guests"]),
              (r.returncode, r.stdout[-1500:], r.stderr[-600:]))
        check("mixed census: x86_64 and aarch64 each with their own lowest level",
              set(archs) == {"aarch64", "x86_64"} and
              archs["aarch64"]["lowest"] == {"isa_level": "armv8-a",
                                             "guests": [g["arm-a57"].sock]} and
              archs["x86_64"]["lowest"]["guests"] == socks and
              archs["x86_64"]["lowest"]["isa_level"].startswith("x86-64-v"), archs)
        check("mixed census: the aarch64 baseline is the a57's Features, no x86 flag",
              set(archs.get("aarch64", {}).get("baseline", [])) ==
              set(g["arm-a57"].cpuinfo()[0]["Features"].split()), archs.get("aarch64"))
        r = cli("--timeout", "120", "census", *targets)
        print("# census of the mixed fleet (exit %d):\n# %s" % (
            r.returncode, (r.stdout + r.stderr).replace("\n", "\n# ")))
    finally:
        stop(procs)


def test_build_guest_refuses(cache):
    """build-guest.sh's bad arguments: a clear error, and no image."""
    script = os.path.join(HERE, "build-guest.sh")
    out = tempfile.mkdtemp(prefix="gb-e2e-bad-")
    try:
        for args, rc, text in (
                (["--arch", "sparc", cache, out], 2, "unknown architecture 'sparc'"),
                (["--arch", "arm64", cache], 2, "usage: build-guest.sh"),
                (["--arch", "arm64", cache, out, "/nonexistent/agent"], 1,
                 "no binary /nonexistent/agent"),
                (["--arch", "arm64", cache, out, "deb:gb-no-such-package:/usr/bin/x"], 1,
                 "apt-get download gb-no-such-package:arm64 failed"),
                (["--arch", "arm64", cache, out, CLI], 1,
                 "ELF machine 'Advanced Micro Devices X86-64', not arm64's (AArch64)"),
                (["--arch", "amd64", cache, out, AGENT_AARCH64], 1,
                 "ELF machine 'AArch64', not amd64's (Advanced Micro Devices X86-64)")):
            r = subprocess.run(["sh", script] + args, capture_output=True, text=True, timeout=300)
            check("build-guest.sh %s: exit %d, '%s'" % (" ".join(args[:2] + args[4:]), rc, text),
                  r.returncode == rc and text in r.stderr and
                  not os.path.exists(os.path.join(out, "initrd.img")),
                  (r.returncode, r.stderr[-600:]))
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main():
    if not AGENT_AARCH64:
        print("1..0 # SKIP no cross-built aarch64 agent: GB_AGENT_AARCH64 is empty "
              "(meson option aarch64_agent, from scripts/cross-build aarch64)")
        return 0
    if not shutil.which("qemu-system-aarch64"):
        print("1..0 # SKIP qemu-system-aarch64 not installed (scripts/deps --e2e)")
        return 0
    started = time.monotonic()
    image = fleet.build_image(WORK, [AGENT_AARCH64], arch="arm64")
    test_build_guest_refuses(os.path.join(WORK, "cache"))
    built = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="gb-e2e-arm-")
    try:
        hostport = fleet.free_port()
        with fleet.Fleet(os.path.join(WORK, "run-arm64"), image, GUESTS,
                         **{"arm-max": {"hostfwd": (hostport, 5201)}}) as fl:
            booted = time.monotonic()
            g = {x.name: x for x in fl.guests}
            for name, step in (("facts", lambda: test_facts(g)),
                               ("audit", lambda: test_audit(g)),
                               ("require level", lambda: test_require_level(g)),
                               ("bench aes", lambda: test_bench_aes(g)),
                               ("bench disk, mem, net",
                                lambda: test_bench_disk_mem_net(g["arm-max"], hostport)),
                               ("mixed fleet", lambda: test_mixed_fleet(g, tmp))):
                try:
                    step()
                except Exception as e:  # one broken step must not hide the others
                    check("step %s ran" % name, False, repr(e))
            print("# image and build-guest.sh's bad cases %.0f s, boot of both guests %.0f s, "
                  "tests %.0f s" % (built - started, booted - built, time.monotonic() - booted))
            if any(not ok for _, ok, _, _ in gbtest.results):
                for x in fl.guests:
                    print("# %s console:\n# %s" % (x.name, x.tail(1500).replace("\n", "\n# ")))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
