"""guestbench against the real libvirt of test-libvirt.py's lab: libvirt:DOMAIN
through the API (the bound channel, a libvirt-chosen one, qemu-ga only, shut
off, an odd name), --connect, discover, inventories with connect= and
[hypervisor NAME], a remote hypervisor over qemu+ssh from a process that
cannot see its files, a non-root libvirt-group user, bad input; and at the
end libvirt's own agent link still works."""
import json
import os
import subprocess
import tempfile
import time

from gbtest import check, lock_dir, skip

CLI = os.environ.get("GB_CLI", "")
SYSTEM = "qemu:///system"
# where the lab's qga domain has the agent (virtlab.py)
QGA_AGENT = ["--qga-agent", "/usr/bin/guestbench-agent"]


def wait_lock_held(pid, seconds):
    """Whether a guestbench lock file names pid within seconds (guestbench(1), LOCKS)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            names = os.listdir(lock_dir())
        except FileNotFoundError:
            names = []
        for name in names:
            try:
                with open(os.path.join(lock_dir(), name)) as f:
                    if "pid=%d\n" % pid in f.read():
                        return True
            except OSError:
                pass
        time.sleep(0.05)
    return False


def cli(args, lab=None, hidden=False, user=False, env=None, timeout=240):
    """Runs the CLI; returns (rc, stdout, stderr, seconds)."""
    argv = [CLI] + [str(a) for a in args]
    full_env = dict(os.environ)
    full_env.pop("LIBVIRT_DEFAULT_URI", None)
    if env:
        full_env.update(env)
    t0 = time.monotonic()
    if hidden:
        p = lab.run_hidden(argv, env=full_env, timeout=timeout)
    elif user:
        p = lab.user.run(argv, env=env, timeout=timeout)
    else:
        p = subprocess.run(argv, capture_output=True, text=True, env=full_env,
                           stdin=subprocess.DEVNULL, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def cli_json(args, **kw):
    rc, out, err, took = cli(list(args) + ["--format", "json"], **kw)
    try:
        doc = json.loads(out)
    except ValueError:
        doc = None
    return rc, doc, err, took


def guests(doc):
    return {g["name"]: g for g in (doc or {}).get("guests", [])}


def ours(lab, doc):
    names = {x.name for x in lab.all_domains()}
    return {k: v for k, v in guests(doc).items() if k in names}


def qga_link_ok(lab, dom):
    """libvirt's own link to a domain's qemu-ga answers (a few tries: it may reconnect)."""
    err = None
    for _ in range(10):
        err = dom.qga_ping(5)
        if err is None:
            return None
        time.sleep(1)
    return err


def cases(lab):
    """Called with the lab up; checks through gbtest.check()."""
    d = lab.domains
    bind, auto, qga, off, odd = d["bind"], d["auto"], d["qga"], d["off"], lab.odd
    prefix = bind.name[:-len("bind")]  # this run's domains: gbvl-PID-*

    # libvirt:DOMAIN through the API, the default connection (root: qemu:///system)
    rc, doc, err, _ = cli_json(["ping", "--timeout", "60"] + QGA_AGENT + ["libvirt:" + bind.name,
                                "libvirt:" + auto.name, "libvirt:" + odd.name,
                                "libvirt:" + qga.name])
    g = guests(doc)
    check("ping libvirt:DOMAIN: bound channel, libvirt-chosen channel, odd name and "
          "qemu-ga only all answer through libvirt",
          rc == 0 and all(x["status"] == "ok" for x in g.values()) and len(g) == 4,
          (rc, {k: (v["status"], v.get("error")) for k, v in g.items()}, err))

    # what the bash completion offers after libvirt: root at the default URI, and a
    # libvirt-group user at qemu:///system (its default is its own session)
    names = sorted(x.name for x in lab.all_domains())
    for who, args, kw in (("root", [], {}),
                          ("a libvirt-group user, -c " + SYSTEM, [SYSTEM],
                           {"lab": lab, "user": True})):
        rc, out, err, _ = cli(["__complete", "domains"] + args, **kw)
        listed = sorted(n for n in out.splitlines() if n in names)
        name = ("__complete domains as %s lists the lab's %d domains, the odd name too"
                % (who, len(names)))
        if kw and lab.polkit_note and listed != names:
            skip(name, lab.polkit_note)
        else:
            check(name, rc == 0 and listed == names, (rc, out[-300:], err[-300:]))

    rc, doc, err, _ = cli_json(["ping", "libvirt:" + off.name, "libvirt:gbvl-no-such-domain"])
    g = guests(doc)
    e_off = (g.get("libvirt:" + off.name) or {}).get("error") or ""
    e_none = (g.get("libvirt:gbvl-no-such-domain") or {}).get("error") or ""
    check("ping of a shut-off domain says it is not running", rc == 3 and
          "is not running (shut off)" in e_off, (rc, e_off, err))
    check("ping of an unknown domain says there is none on the URI",
          "no domain 'gbvl-no-such-domain' on qemu:///system" in e_none, e_none)

    # the channel is released after each run: a second run works, libvirt's agent link too
    rc, doc, err, _ = cli_json(["facts", "--timeout", "60", "libvirt:" + bind.name])
    fb = guests(doc).get("libvirt:" + bind.name) or {}
    check("facts libvirt:DOMAIN (a second session on the same channel)",
          rc == 0 and fb.get("status") == "ok" and "cpu" in (fb.get("result") or {}),
          (rc, fb.get("error"), err))
    check("libvirt's own qemu-ga link still answers", qga_link_ok(lab, bind) is None)

    # qga: of libvirt's own agent socket is refused before anything is touched
    qpath = bind.channel_path(lab_qga_channel())
    rc, out, err, _ = cli(["ping", "qga:" + (qpath or "/nonexistent")])
    check("qga:PATH of libvirt's own qemu-ga socket is refused (rc 2), naming libvirt:DOMAIN",
          qpath is not None and rc == 2 and "use libvirt:DOMAIN" in err, (qpath, rc, err))

    # two CLI processes on one domain: the second is told it is busy, the first is fine
    slow = subprocess.Popen([CLI, "bench", "aes", "--seconds", "4", "--no-save", "--format",
                             "json", "libvirt:" + auto.name], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    # once it holds the domain (its lock file names it), not after a guessed sleep:
    # a loaded machine once took longer than 2.5 s to get there
    locked = wait_lock_held(slow.pid, 60)
    rc, doc, err, took = cli_json(["ping", "libvirt:" + auto.name])
    st = (guests(doc).get("libvirt:" + auto.name) or {}).get("status")
    out, serr = slow.communicate(timeout=240)
    check("a second CLI on a busy domain says busy (rc 4) within 5 s",
          locked and rc == 4 and st == "busy" and took < 5, (locked, rc, st, took, err))
    check("the first CLI's benchmark completed", slow.returncode == 0,
          (slow.returncode, serr[-500:], out[-1500:]))

    # discover through the API, and its inventory
    with tempfile.TemporaryDirectory(prefix="gb-libvirt-cli-") as tmp:
        inv = os.path.join(tmp, "fleet.ini")
        rc, doc, err, _ = cli_json(["discover", "--connect", SYSTEM])
        g = ours(lab, doc)
        res = {k: (v["status"], (v.get("result") or {}).get("reach"),
                   (v.get("result") or {}).get("state"), (v.get("result") or {}).get("uri"))
               for k, v in g.items()}
        want = {bind.name: ("ok", "channel", "running", SYSTEM),
                auto.name: ("ok", "channel", "running", SYSTEM),
                odd.name: ("ok", "channel", "running", SYSTEM),
                qga.name: ("ok", "qga", "running", SYSTEM),
                off.name: ("error", res.get(off.name, (0, None))[1], "shut off", SYSTEM)}
        check("discover --connect qemu:///system: every domain with its state, URI and how "
              "it is reached", res == want, (res, err))
        rc, out, err, _ = cli(["discover", "--connect", SYSTEM, "-o", inv])
        text = open(inv).read() if os.path.exists(inv) else ""
        check("discover -o: target=libvirt:NAME with connect= and qmp=, no socket path",
              ("[guest %s]\ntarget=libvirt:%s\nconnect=%s\nqmp=libvirt:%s\ntags=libvirt\n"
               % (bind.name, bind.name, SYSTEM, bind.name)) in text and
              "domain-" not in text and "tags=libvirt;qga" in text, text[:2000])
        rc, doc, err, _ = cli_json(["ping", "--timeout", "60"] + QGA_AGENT + ["@" + inv, "--name",
                                    prefix + "*"])
        g = guests(doc)
        check("ping @inventory from discover reaches the running domains and says the "
              "shut-off one is not running",
              all(g[n]["status"] == "ok" for n in (bind.name, auto.name, qga.name)) and
              g.get(off.name, {}).get("status") in (None, "error"),
              {k: (v["status"], v.get("error")) for k, v in g.items()})

        # [hypervisor NAME]: every running guest of connect=, rendered per host
        hv = os.path.join(tmp, "hv.ini")
        with open(hv, "w") as f:
            f.write("[hypervisor here]\nconnect=%s\ntags=lab\n" % SYSTEM)
        rc, doc, err, _ = cli_json(["ping", "--timeout", "60"] + QGA_AGENT + ["--inventory", hv, "--name",
                                    prefix + "*"])
        g = guests(doc)
        check("[hypervisor NAME]: its running domains, each with host NAME",
              {bind.name, auto.name, qga.name} <= set(g) and off.name not in g and
              all(v.get("host") == "here" for v in g.values()),
              {k: (v.get("host"), v["status"]) for k, v in g.items()})
        rc, out, err, _ = cli(["ping", "--timeout", "60"] + QGA_AGENT + ["--inventory", hv, "--name",
                               prefix + "*", "--format", "csv"])
        check("[hypervisor NAME]: csv has the host column", out.startswith("host,"), out[:300])

    # --connect without targets: every running guest of the hypervisor
    rc, doc, err, _ = cli_json(["ping", "--timeout", "60", "--connect", SYSTEM] + QGA_AGENT)
    g = ours(lab, doc)
    check("ping --connect URI without targets: every running domain, not the shut-off one",
          {bind.name, auto.name, qga.name, odd.name} == set(g) and
          all(v["status"] == "ok" for v in g.values()),
          ({k: (v["status"], v.get("error")) for k, v in g.items()}, err))

    # remote: qemu+ssh from a process that cannot see the hypervisor's files
    uri = lab.remote.uri
    rc, doc, err, _ = cli_json(["ping", "--timeout", "60", "--connect", uri] + QGA_AGENT +
                               ["libvirt:" + bind.name, "libvirt:" + qga.name],
                               lab=lab, hidden=True)
    g = guests(doc)
    check("remote: ping --connect qemu+ssh://... libvirt:DOMAIN (channel and qemu-ga) from "
          "the hidden namespace", rc == 0 and len(g) == 2 and
          all(v["status"] == "ok" for v in g.values()),
          (rc, {k: (v["status"], v.get("error")) for k, v in g.items()}, err[-800:]))
    check("remote: every guest carries its hypervisor's host",
          all(v.get("host") for v in g.values()), [v.get("host") for v in g.values()])
    rc, doc, err, _ = cli_json(["facts", "--timeout", "90", "--connect", uri, "--connect",
                                SYSTEM, "libvirt:" + auto.name])
    g = guests(doc)
    check("remote: a domain found on two connections is refused as ambiguous, naming both",
          any("exists on" in (v.get("error") or "") for v in g.values()),
          {k: v.get("error") for k, v in g.items()})
    rc, doc, err, _ = cli_json(["discover", "--connect", uri], lab=lab, hidden=True)
    g = ours(lab, doc)
    check("remote: discover --connect qemu+ssh://... lists the domains, with the remote URI",
          set(g) == {x.name for x in lab.all_domains()} and
          all((v.get("result") or {}).get("uri", "").startswith("qemu+ssh://")
              for v in g.values()), {k: v.get("error") for k, v in g.items()})

    # a hypervisor that does not answer: bounded, one clear error per guest
    rc, doc, err, took = cli_json(["ping", "--timeout", "8", "--connect", lab.remote.dead_uri,
                                   "libvirt:a", "libvirt:b"], lab=lab, hidden=True)
    g = guests(doc)
    check("a dead URI: each guest its own error, within the --timeout bound (%.1f s)" % took,
          rc == 3 and len(g) == 2 and took < 30 and
          all("cannot connect to" in (v.get("error") or "") for v in g.values()),
          (rc, took, {k: v.get("error") for k, v in g.items()}, err[-500:]))
    port = lab.remote.dead_uri.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1]
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"ssh") and b"-p" in argv and port.encode() in argv:
            left.append((pid, argv[:6]))
    check("a dead URI: the ssh libvirt started for it does not outlive the CLI", not left, left)
    rc, out, err, _ = cli(["ping", "--connect", "nosuchdriver:///x", "libvirt:a"])
    check("an unknown URI scheme: a clear error, no crash", rc == 3 and
          "cannot connect to nosuchdriver:///x" in out + err, (rc, out, err))

    # non-root: a libvirt-group user, through polkit
    rc, doc, err, _ = cli_json(["ping", "--timeout", "60", "--connect", SYSTEM,
                                "libvirt:" + bind.name], lab=lab, user=True)
    g = guests(doc)
    ok = rc == 0 and all(v["status"] == "ok" for v in g.values()) and len(g) == 1
    if lab.polkit_note and not ok:
        skip("non-root: a libvirt-group user reaches the agent", lab.polkit_note)
    else:
        check("non-root: a libvirt-group user reaches the agent through qemu:///system",
              ok, (rc, {k: v.get("error") for k, v in g.items()}, err))
    rc, doc, err, _ = cli_json(["ping", "libvirt:" + bind.name], lab=lab, user=True,
                               env={"XDG_RUNTIME_DIR": lab.user.home})
    e = " ".join(v.get("error") or "" for v in guests(doc).values())
    check("non-root with the session URI: the error says system domains need "
          "--connect qemu:///system", "--connect qemu:///system" in e, (rc, e, err))

    # a user outside the libvirt group: the error names the URI and the fix
    p = subprocess.run(["runuser", "-u", "nobody", "--", "env", "-i", "PATH=/usr/bin:/bin",
                        "HOME=/", CLI, "ping", "--connect", SYSTEM, "libvirt:" + bind.name],
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    check("a user outside the libvirt group: the error names the URI and the libvirt group",
          p.returncode == 3 and "cannot connect to qemu:///system" in p.stdout and
          "'libvirt' group" in p.stdout, (p.returncode, p.stdout, p.stderr))
    home = tempfile.mkdtemp(prefix="gb-nobody-")
    try:
        os.chown(home, 65534, 65534)
        p = subprocess.run(["runuser", "-u", "nobody", "--", "env", "-i", "PATH=/usr/bin:/bin",
                            "HOME=" + home, "XDG_RUNTIME_DIR=" + home, CLI, "discover"],
                           capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        check("discover as a non-root user on the session URI says system domains need "
              "--connect qemu:///system", "--connect qemu:///system" in p.stderr,
              (p.returncode, p.stderr))
    finally:
        # the session daemon libvirt started for that user
        subprocess.run(["pkill", "-u", "nobody", "-x", "libvirtd"],
                       capture_output=True)
        subprocess.run(["rm", "-rf", home])

    check("after all of it, libvirt's own qemu-ga links still answer",
          qga_link_ok(lab, bind) is None and qga_link_ok(lab, qga) is None)


def lab_qga_channel():
    return "org.qemu.guest_agent.0"


def restart_during_run(lab):
    """libvirtd restarted while a fleet run is under way: nothing hangs, each guest
    ends ok or with its own error, and afterwards everything works again."""
    d = lab.domains
    names = [d["bind"].name, d["auto"].name, d["qga"].name, lab.odd.name]
    run = subprocess.Popen([CLI, "bench", "aes", "--seconds", "6", "--no-save", "--timeout",
                            "60", "--format", "json"] + QGA_AGENT +
                           ["libvirt:" + n for n in names],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(4)
    lab.libvirtd.restart()
    try:
        out, err = run.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        run.kill()
        out, err = run.communicate()
        check("libvirtd restarted mid-run: the run ends", False, err[-800:])
        return
    try:
        doc = json.loads(out)
    except ValueError:
        doc = None
    g = guests(doc)
    check("libvirtd restarted mid-run: the run ends, every guest ok or with its own error",
          len(g) == len(names) and
          all(v["status"] == "ok" or v.get("error") for v in g.values()),
          (run.returncode, {k: (v["status"], v.get("error")) for k, v in g.items()},
           err[-800:]))
    # libvirt reconnects to each qemu-ga in its own time after a restart
    for _ in range(15):
        rc, doc, err, _ = cli_json(["ping", "--timeout", "60"] + QGA_AGENT +
                                   ["libvirt:" + n for n in names])
        if rc == 0:
            break
        time.sleep(2)
    g = guests(doc)
    check("after the restart every guest answers again",
          rc == 0 and all(v["status"] == "ok" for v in g.values()),
          {k: (v["status"], v.get("error")) for k, v in g.items()})
