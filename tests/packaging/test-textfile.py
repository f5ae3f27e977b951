#!/usr/bin/env python3
"""The daily audit's textfile, as node_exporter sees it. Runs the command lines of
guestbench-audit.service (ExecCondition, ExecStart: the guestbench-audit-run the
build installs, with the unit's UMask and settings written the way the shipped
defaults file has them) against real agents on unix sockets, then checks the
guestbench.prom it leaves with Debian's real tools: `promtool check metrics`,
and prometheus-node-exporter with only its textfile collector, run as nobody
(like the packaged one, not root) on 127.0.0.1 and a free port, scraped over
HTTP. Also that the file is replaced by rename (a reader never sees half of it).

Usage: test-textfile.py SERVICE WRAPPER DEFAULTS RULES (the built unit, the
built guestbench-audit-run, the built defaults file, the alerting rules).
Prints TAP; a check whose tool is absent is a TAP SKIP (scripts/deps installs
prometheus and prometheus-node-exporter).
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gbtest import (NODE_EXPORTER, NodeExporter, check, prom_samples, skip,  # noqa: E402
                    start_agents, stop, tap_report)

AGENT = os.environ["GB_AGENT"]
CLI = os.environ["GB_CLI"]
PROMTOOL = shutil.which("promtool")



def samples(text):
    """{(name, frozenset of labels): value} of an exposition text; None if a line is
    neither a comment nor a sample."""
    got = prom_samples(text)
    if got is None:
        return None
    return {(name, frozenset(labels)): value for name, labels, value in got}


def unit_values(text, key):
    return [l.split("=", 1)[1] for l in text.splitlines() if l.startswith(key + "=")]


def environment_file(path):
    """KEY=VALUE lines as systemd's EnvironmentFile= reads them (comments skipped)."""
    env = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(("#", ";")) and "=" in line:
                key, value = line.split("=", 1)
                env[key.strip()] = value.strip()
    return env


def main(service, wrapper, defaults, rules):
    with open(service, encoding="utf-8") as f:
        unit = f.read()
    ok_codes = {0} | {int(c) for v in unit_values(unit, "SuccessExitStatus") for c in v.split()}
    umask = int((unit_values(unit, "UMask") or ["0022"])[0], 8)
    installed = unit_values(unit, "ExecStart")[0].split()[0]

    def argv(key):
        # the built script is not executable yet (meson sets its mode at install)
        words = unit_values(unit, key)[0].split()
        return ["sh", wrapper] + words[1:] if words[0] == installed else words

    tmp = tempfile.mkdtemp(prefix="gb-textfile-")
    os.chmod(tmp, 0o755)  # node_exporter runs as nobody
    procs = []
    exporter = None
    try:
        procs, socks = start_agents(tmp, ["web1", "db1"])
        inventory = os.path.join(tmp, "fleet.ini")
        with open(inventory, "w") as f:
            f.write("[guest web1]\ntarget=unix:%s\n\n[guest db1]\ntarget=unix:%s\n" % tuple(socks))
        textdir = os.path.join(tmp, "textfile")
        prom = os.path.join(textdir, "guestbench.prom")
        runtime = os.path.join(tmp, "runtime")
        os.mkdir(runtime)

        # the shipped settings file with three settings uncommented, as an admin would
        settings = os.path.join(tmp, "guestbench-audit")
        values = {"GUESTBENCH_INVENTORY": inventory, "GUESTBENCH_TEXTFILE_DIR": textdir,
                  "GUESTBENCH_LIBVIRT_DIR": os.path.join(tmp, "no-libvirt")}
        with open(defaults, encoding="utf-8") as f:
            text = f.read()
        for key, value in values.items():
            text, n = re.subn(r"^#%s=.*$" % key, "%s=%s" % (key, value), text, flags=re.M)
            if n != 1:
                raise RuntimeError("%s has no commented-out %s=" % (defaults, key))
        with open(settings, "w") as f:
            f.write(text)
        # as systemd starts it: the settings, RuntimeDirectory=, UMask=; GUESTBENCH is the
        # program the installed script finds in the bindir
        base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GUESTBENCH": CLI,
                "RUNTIME_DIRECTORY": runtime, "LC_ALL": "C.UTF-8"}
        base.update(environment_file(settings))

        def service_run(**extra):
            env = dict(base, **extra)
            for key in ("ExecCondition", "ExecStart"):
                p = subprocess.run(argv(key), env=env, capture_output=True, text=True,
                                   timeout=120, stdin=subprocess.DEVNULL, umask=umask)
                if p.returncode != 0:
                    return key, p
            return "ran", p

        step, p = service_run()
        check("service run: exit %d is a success of the unit" % p.returncode,
              step == "ran" and p.returncode in ok_codes, (step, p.returncode, p.stderr))
        text = open(prom).read() if os.path.exists(prom) else ""
        check("guestbench.prom written, mode 0644 (node_exporter is another user)",
              text and os.stat(prom).st_mode & 0o777 == 0o644,
              oct(os.stat(prom).st_mode) if text else "no file")
        check("nothing else in the directory (no temporary file left)",
              os.listdir(textdir) == ["guestbench.prom"], os.listdir(textdir))
        file_samples = samples(text) or {}
        check("both guests up in the file",
              file_samples.get(("guestbench_up", frozenset({("guest", "web1"),
                                                             ("target", "unix:" + socks[0])})))
              == "1" and file_samples.get(("guestbench_up", frozenset(
                  {("guest", "db1"), ("target", "unix:" + socks[1])}))) == "1", text[:2000])

        if PROMTOOL:
            t = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                               text=True, timeout=60)
            check("promtool check metrics accepts guestbench.prom", t.returncode == 0,
                  t.stdout + t.stderr)
            # the control: half a file (cut inside a sample) is refused
            half = text[:text.index('guestbench_audit_finding{') + 30]
            t = subprocess.run([PROMTOOL, "check", "metrics"], input=half, capture_output=True,
                               text=True, timeout=60)
            check("control: promtool refuses the file cut in half", t.returncode != 0,
                  t.stdout + t.stderr)
        else:
            skip("promtool check metrics accepts guestbench.prom", "promtool not installed")
            skip("control: promtool refuses the file cut in half", "promtool not installed")

        # replaced by rename: a reader holding the old file keeps all of it, and readers
        # during three more runs only ever see whole files
        old_fd = os.open(prom, os.O_RDONLY)
        old_inode = os.fstat(old_fd).st_ino
        reads, torn = [], []
        stop_reading = threading.Event()

        def reader():
            while not stop_reading.is_set():
                try:
                    with open(prom) as f:
                        seen = f.read()
                except FileNotFoundError:
                    torn.append("the file was missing for a moment")
                    continue
                reads.append(1)
                whole = seen.endswith("\n") and samples(seen) is not None and all(
                    'guestbench_audit_worst_level{guest="%s"}' % g in seen
                    for g in ("web1", "db1"))
                if not whole:
                    torn.append(seen[-200:])

        thread = threading.Thread(target=reader)
        thread.start()
        codes = [service_run()[1].returncode for _ in range(3)]
        stop_reading.set()
        thread.join()
        with os.fdopen(old_fd) as f:
            old_text = f.read()
        check("three more runs succeed", all(c in ok_codes for c in codes), codes)
        check("replaced by rename: a new inode, the old one still whole",
              os.stat(prom).st_ino != old_inode and old_text == text,
              (old_inode, os.stat(prom).st_ino, len(old_text), len(text)))
        check("a reader during the runs never saw half a file (%d reads)" % len(reads),
              reads and not torn, torn[:3])
        check("still nothing else in the directory", os.listdir(textdir) == ["guestbench.prom"],
              os.listdir(textdir))

        if not NODE_EXPORTER:
            why = "prometheus-node-exporter not installed"
            for name in ("node_exporter: no textfile scrape error",
                         "node_exporter: every sample of guestbench.prom",
                         "node_exporter: the staleness alert's selector matches the file",
                         "node_exporter: a guest down is guestbench_up 0",
                         "node_exporter: the empty file of a host without guests",
                         "control: node_exporter reports a broken file"):
                skip(name, why)
            return
        exporter = NodeExporter(textdir, os.path.join(tmp, "node_exporter.log"))
        scraped = exporter.scrape()
        got = samples(scraped) or {}
        check("node_exporter: no textfile scrape error",
              got.get(("node_textfile_scrape_error", frozenset())) == "0",
              [l for l in scraped.splitlines() if "textfile" in l])
        text = open(prom).read()
        file_samples = samples(text) or {}
        missing = [k for k, v in file_samples.items() if got.get(k) != v]
        check("node_exporter: every sample of guestbench.prom (%d)" % len(file_samples),
              file_samples and not missing, missing[:5])
        mtimes = [dict(k[1]).get("file", "") for k in got if k[0] == "node_textfile_mtime_seconds"]
        with open(rules, encoding="utf-8") as f:
            m = re.search(r'node_textfile_mtime_seconds\{file=~"([^"]*)"\}', f.read())
        # PromQL regexes are anchored; the rule file escapes the dot for YAML and PromQL
        pattern = m.group(1).replace("\\\\", "\\") if m else None
        check("node_exporter: the staleness alert's selector matches the file",
              pattern and any(re.fullmatch(pattern, v) for v in mtimes), (pattern, mtimes))

        stop(procs[1:])
        step, p = service_run()
        got = samples(exporter.scrape()) or {}
        check("node_exporter: a guest down is guestbench_up 0 (the run exits %d, a success)"
              % p.returncode,
              p.returncode == 3 and p.returncode in ok_codes
              and got.get(("guestbench_up", frozenset({("guest", "db1"),
                                                       ("target", "unix:" + socks[1])}))) == "0"
              and got.get(("node_textfile_scrape_error", frozenset())) == "0",
              (step, p.returncode, p.stderr))

        # no inventory, libvirt without a guestbench channel: an empty file, no guests
        libvirt = os.path.join(tmp, "libvirt")
        os.mkdir(libvirt)
        step, p = service_run(GUESTBENCH_INVENTORY=os.path.join(tmp, "none.ini"),
                              GUESTBENCH_LIBVIRT_DIR=libvirt)
        scraped = exporter.scrape()
        got = samples(scraped) or {}
        check("node_exporter: the empty file of a host without guests",
              step == "ran" and p.returncode == 0 and os.path.getsize(prom) == 0
              and got.get(("node_textfile_scrape_error", frozenset())) == "0"
              and not any(k[0].startswith("guestbench_") for k in got),
              (step, p.returncode, p.stderr, os.listdir(textdir)))

        # the control: node_exporter does report a file it cannot take
        with open(os.path.join(textdir, "broken.prom"), "w") as f:
            f.write(text[:text.index('guestbench_audit_finding{') + 30])
        got = samples(exporter.scrape()) or {}
        check("control: node_exporter reports a broken file",
              got.get(("node_textfile_scrape_error", frozenset())) == "1")
    finally:
        if exporter is not None:
            exporter.close()
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)


def on_signal(signum, frame):
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print("usage: %s SERVICE WRAPPER DEFAULTS RULES" % sys.argv[0], file=sys.stderr)
        sys.exit(2)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        main(*sys.argv[1:])
    except Exception as e:  # a broken setup is a failure with its reason
        check("the run went through", False, "%s: %s" % (type(e).__name__, e))
    sys.exit(tap_report())
