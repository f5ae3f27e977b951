"""A hostile guest behind the real libvirtd of test-libvirt.py's lab: the CLI's
reply limits and escaping through libvirt:DOMAIN (virDomainOpenChannel and
libvirt's stream), not only on unix sockets.

The lab's "hostile" domain runs guest-init's hostile responder (gb.run=hostile)
on the guestbench channel: sync and ping answered as the agent does, every
gb-get-facts poisoned, the poison chosen by --steal-window (1 over the 1 MiB
facts limit, 2 nested deeper than 64, 3 endless, 4 more values than the limit
allows; none: well-formed facts with terminal escapes in their strings). One
boot, real CLI processes: each poison is that guest's error naming the limit,
well within --timeout, with the CLI's peak RSS (wait4's ru_maxrss, VmHWM) near
that of an honest run; escapes never reach the output raw; beside an honest
domain in one run, that one's facts are intact; and the responder answers a
plain session afterwards (nothing of an endless reply is left in the channel).
"""
import json
import os
import subprocess
import tempfile
import threading
import time

from gbtest import check

CLI = os.environ.get("GB_CLI", "")
TIMEOUT = 30  # --timeout of every run: a limit must hold well before it
# what a poisoned run may take beyond an honest one's peak RSS: the framer
# skips a reply over a limit as it streams in, so none of it is kept (a run
# took the same peak to the KiB with every poison as without; an endless
# reply at TCG speed comes to tens of MB within the timeout)
RSS_MARGIN_KB = 1024
# bytes that must never reach a terminal from a guest: ESC, BEL, C1 CSI,
# the bidi override U+202E
RAW = (b"\x1b", b"\x07", b"\xc2\x9b", b"\xe2\x80\xae")
POISONS = (
    (1, "a reply over the 1 MiB facts limit",
     "reply to gb-get-facts over its size limit: JSON message exceeds 1048576 bytes"),
    (2, "a reply nested deeper than 64", "JSON nesting exceeds 64 levels"),
    (3, "an endless reply",
     "reply to gb-get-facts over its size limit: JSON message exceeds 1048576 bytes"),
    (4, "a reply of more values than the limit",
     "reply to gb-get-facts over its size limit: JSON message has more than 131072 values"),
)


def run(args, timeout=120):
    """One CLI run: (rc, stdout bytes, stderr bytes, seconds, peak RSS in KiB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        env = dict(os.environ)
        env.pop("LIBVIRT_DEFAULT_URI", None)
        t0 = time.monotonic()
        proc = subprocess.Popen([CLI] + [str(a) for a in args], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err, env=env)
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        took = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read(), took, usage.ru_maxrss


def guests(stdout):
    try:
        doc = json.loads(stdout)
    except ValueError:
        return {}
    return {g["name"]: g for g in doc.get("guests", [])}


def raw_controls(data):
    return [c for c in RAW if c in data]


def diag(text):
    print("# " + text)


def cases(lab):
    hostile = "libvirt:" + lab.hostile.name
    honest = "libvirt:" + lab.domains["auto"].name

    # an honest run through libvirt: the facts to hold the fleet run against, and
    # the peak RSS a poisoned run is measured against
    rc, out, err, took, base_rss = run(["facts", "--timeout", TIMEOUT, "--steal-window", 3,
                                        "--format", "json", honest])
    solo = (guests(out).get(honest) or {}).get("result") or {}
    check("hostile: an honest domain's facts through libvirt (the baseline)",
          rc == 0 and "cpu" in solo, (rc, err[-500:]))
    diag("honest facts through libvirt: %.1f s, peak RSS %d KiB" % (took, base_rss))

    for window, what, needle in POISONS:
        rc, out, err, took, rss = run(["facts", "--timeout", TIMEOUT, "--steal-window", window,
                                       "--format", "json", hostile])
        g = guests(out).get(hostile) or {}
        diag("%s: %.1f s, peak RSS %d KiB" % (what, took, rss))
        check("hostile through libvirt, %s: rc 3 and that guest's error naming the limit "
              "(%.1f s, not the %d s timeout)" % (what, took, TIMEOUT),
              rc == 3 and g.get("status") == "error" and needle in (g.get("error") or "") and
              took < TIMEOUT / 2, (rc, g.get("status"), g.get("error"), took, err[-500:]))
        check("hostile through libvirt, %s: the CLI's peak RSS %d KiB is within %d KiB of "
              "an honest run's %d KiB" % (what, rss, RSS_MARGIN_KB, base_rss),
              rss <= base_rss + RSS_MARGIN_KB, rss)

    # terminal escapes in well-formed facts: escaped where shown, kept in json
    rc, out, err, took, _ = run(["facts", "--timeout", TIMEOUT, hostile])
    check("hostile through libvirt, escapes: facts as text has no raw ESC, BEL, C1 or bidi "
          "control", rc == 0 and not raw_controls(out + err),
          (rc, raw_controls(out + err), out[:600], err[-300:]))
    check("hostile through libvirt, escapes: the CPU model and OS are shown escaped",
          b"\\x1b]0;owned\\x07EVIL\\x1b[31mCPU\\u009b1m\\u202e" in out and
          b"\\x1b]8;;http://evil/\\x1b\\link" in out, out[:800])
    rc, out, err, took, _ = run(["facts", "--timeout", TIMEOUT, "--format", "json", hostile])
    cpu = ((guests(out).get(hostile) or {}).get("result") or {}).get("cpu") or {}
    check("hostile through libvirt, escapes: json has no raw control byte and keeps the "
          "string as the guest sent it",
          rc == 0 and not raw_controls(out) and
          cpu.get("model_name") == "\x1b]0;owned\x07EVIL\x1b[31mCPU\x9b1m\u202e",
          (rc, raw_controls(out), cpu.get("model_name"), err[-300:]))
    rc, out, err, took, _ = run(["audit", "--timeout", TIMEOUT, hostile])
    check("hostile through libvirt, escapes: audit (rc 1: no AES-NI is a FAIL) shows the "
          "model escaped, no raw control byte",
          rc == 1 and not raw_controls(out + err) and b"\\x1b]0;owned" in out,
          (rc, raw_controls(out + err), out[:600], err[-300:]))

    # one run, the hostile domain endless beside the honest one
    rc, out, err, took, rss = run(["facts", "--timeout", TIMEOUT, "--steal-window", 3,
                                   "--format", "json", hostile, honest])
    g = guests(out)
    h, o = g.get(hostile) or {}, g.get(honest) or {}
    res = o.get("result") or {}
    diag("fleet run, endless beside honest: %.1f s, peak RSS %d KiB" % (took, rss))
    check("hostile beside honest through libvirt: rc 3, the hostile domain's error names "
          "the limit, the honest one ok (%.1f s)" % took,
          rc == 3 and h.get("status") == "error" and "exceeds 1048576 bytes" in
          (h.get("error") or "") and o.get("status") == "ok" and took < TIMEOUT / 2,
          (rc, h.get("status"), h.get("error"), o.get("status"), o.get("error"), err[-500:]))
    check("hostile beside honest through libvirt: the honest domain's cpu and os facts are "
          "those of a run of its own",
          res.get("cpu") == solo.get("cpu") and res.get("os") == solo.get("os") and
          "cpu" in res, (res.get("cpu"), solo.get("cpu")))
    check("hostile beside honest through libvirt: peak RSS %d KiB within %d KiB of an "
          "honest run's" % (rss, RSS_MARGIN_KB), rss <= base_rss + RSS_MARGIN_KB, rss)

    # the endless writer stopped when the CLI hung up: a new session is clean
    rc, out, err, took, _ = run(["ping", "--timeout", TIMEOUT, "--format", "json", hostile])
    g = guests(out).get(hostile) or {}
    check("hostile through libvirt: after the poisons the channel answers a plain ping",
          rc == 0 and g.get("status") == "ok", (rc, g.get("error"), err[-300:]))
