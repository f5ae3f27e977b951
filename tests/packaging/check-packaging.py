#!/usr/bin/env python3
"""Checks that the shipped man pages, bash completion, config file, systemd
unit and udev rule stay in step with the binaries they describe.

Usage: check-packaging.py CHECK [ARGS...]; exits 0 when the check passes,
1 with the differences on stderr when it does not, 77 to skip.
The binaries come from GB_AGENT and GB_CLI (set by tests/meson.build).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gbtest import PROM_SAMPLE, start_agents, start_holder, stop  # noqa: E402

SKIP = 77


def run(argv, check=True):
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr}")
    return proc


# ---- reading --help ---------------------------------------------------------

OPT_LINE = re.compile(r"^\s+(-\S.*?)(?:\s{2,}|$)")


def help_options(text):
    """{long: short-or-None} from the '  -x, --long=ARG  Summary' lines."""
    opts = {}
    for line in text.splitlines():
        m = OPT_LINE.match(line)
        if not m:
            continue
        short = None
        longs = []
        for tok in m.group(1).split(","):
            tok = tok.strip().split("=")[0].split(" ")[0]
            if tok.startswith("--"):
                longs.append(tok)
            elif re.fullmatch(r"-[A-Za-z0-9?]", tok):
                short = tok
        for lopt in longs:
            opts[lopt] = short
    return opts


def help_commands(text):
    """Names listed under 'Commands:' up to the next unindented line."""
    cmds = []
    inside = False
    for line in text.splitlines():
        if line and not line[0].isspace():
            inside = line.strip() == "Commands:"
            continue
        if inside and line.strip():
            cmds.append(line.split()[0])
    return cmds


def help_exit_codes(text):
    """Numbers that start an entry of the 'Exit status:' paragraph."""
    m = re.search(r"^Exit status:(.*?)(?:\n\s*\n|\Z)", text, re.S | re.M)
    if not m:
        return set()
    return set(re.findall(r"(?<![\w.])(\d{1,3})(?= [a-zA-Z(])", m.group(1)))


# ---- reading troff ----------------------------------------------------------


def troff_plain(line):
    """The text of one troff line, fonts and escapes removed."""
    line = re.sub(r"\\f[BIRP]", "", line)
    line = line.replace("\\-", "-").replace("\\(aq", "'").replace("\\(dq", '"')
    line = line.replace("\\~", " ").replace("\\&", "")
    line = re.sub(r'^\.(B|I|BR|RB|BI|IB|IR|RI|SM|OP)\s+', "", line)
    return line.replace('"', "")


def man_sections(path):
    """{SECTION NAME: [source lines]}"""
    sections = {}
    current = None
    with open(path, encoding="utf-8") as f:
        for line in f.read().splitlines():
            if line.startswith(".SH "):
                current = line[4:].strip().strip('"')
                sections[current] = []
            elif current is not None:
                sections[current].append(line)
    return sections


def man_tags(lines):
    """The first word of each .TP/.TQ tag in a section."""
    tags = []
    for i, line in enumerate(lines):
        if line.split()[:1] in ([".TP"], [".TQ"]) and i + 1 < len(lines):
            tag = troff_plain(lines[i + 1]).strip()
            if tag:
                tags.append(tag)
    return tags


FORMATS = ("table", "json", "csv", "prom", "html")


def help_formats(text):
    """The formats on the '--format' line of a command's --help."""
    line = next((l for l in text.splitlines() if l.strip().startswith("--format=")), "")
    return {w for w in re.findall(r"[a-z]+", line.split("Output format:")[-1]) if w in FORMATS}


def man_command_entries(lines):
    """{command: its COMMANDS entry as plain text}, from the .TP tags."""
    entries = {}
    current = None
    for i, line in enumerate(lines):
        if line.split()[:1] == [".TP"] and i + 1 < len(lines):
            words = troff_plain(lines[i + 1]).split()
            current = words[0] if words else None
            entries.setdefault(current, [])
            continue
        if current is not None:
            entries[current].append(troff_plain(line))
    return {c: " ".join(t) for c, t in entries.items()}


def man_option_tags(lines):
    """{long: short-or-None} from the OPTIONS section's tags."""
    opts = {}
    for tag in man_tags(lines):
        words = [w.strip(",").split("=")[0] for w in tag.split()]
        short = next((w for w in words if re.fullmatch(r"-[A-Za-z0-9]", w)), None)
        for w in words:
            if w.startswith("--"):
                opts[w] = short
    return opts


def compare_options(what, help_opts, man_opts, problems):
    for lopt, short in sorted(help_opts.items()):
        if lopt not in man_opts:
            problems.append(f"{what}: {lopt} is in --help but not in the man page's OPTIONS")
        elif short and man_opts[lopt] != short:
            problems.append(f"{what}: {lopt} is {short} in --help, "
                            f"{man_opts[lopt]} in the man page")
    for lopt in sorted(set(man_opts) - set(help_opts)):
        problems.append(f"{what}: the man page documents {lopt}, which --help does not have")


def man_version_ok(path, version, problems):
    with open(path, encoding="utf-8") as f:
        th = next((l for l in f if l.startswith(".TH ")), "")
    if not re.search(r"\b" + re.escape(version) + r"\b", th):
        problems.append(f"{path}: .TH names no version {version}: {th.strip()}")


def groff_clean(path, problems):
    if shutil.which("groff") is None:
        return
    proc = run(["groff", "-man", "-ww", "-z", path], check=False)
    if proc.returncode != 0 or proc.stderr.strip():
        problems.append(f"{path}: groff warns: {proc.stderr.strip()}")


def man_renders_clean(path, problems):
    """The page as man(1) renders it for a reader: no warning (-ww: every kind, unlike
    --warnings=all, which leaves out undefined macros), no @VARIABLE@ left."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    for left in sorted(set(re.findall(r"@[A-Za-z_]+@", source))):
        problems.append(f"{path}: {left} was left unsubstituted")
    if shutil.which("man") is None:
        problems.append("man not found: scripts/deps installs man-db")
        return
    env = dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="", LC_ALL="C.UTF-8",
               MANPAGER="cat", PAGER="cat")
    proc = subprocess.run(["man", "--warnings=w", "-l", path], capture_output=True,
                          text=True, timeout=60, env=env)
    if proc.returncode != 0 or proc.stderr.strip():
        problems.append(f"{path}: man --warnings: exit {proc.returncode}: {proc.stderr.strip()}")
    rendered = re.sub(r".\x08", "", proc.stdout)
    for left in sorted(set(re.findall(r"@[A-Za-z_]+@", rendered))):
        problems.append(f"{path}: man shows {left}")


def finish(problems):
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


# ---- checks -----------------------------------------------------------------


def check_man_agent(man):
    agent = os.environ["GB_AGENT"]
    text = run([agent, "--help"]).stdout
    version = run([agent, "--version"]).stdout.split()[-1]
    secs = man_sections(man)
    problems = []
    compare_options("guestbench-agent", help_options(text), man_option_tags(secs.get("OPTIONS", [])),
                    problems)
    codes = help_exit_codes(text)
    documented = set(man_tags(secs.get("EXIT STATUS", [])))
    if not codes:
        problems.append("guestbench-agent --help names no exit codes")
    if codes != documented:
        problems.append(f"exit codes: --help {sorted(codes)}, man page {sorted(documented)}")
    man_version_ok(man, version, problems)
    groff_clean(man, problems)
    man_renders_clean(man, problems)
    return finish(problems)


def check_man_cli(man):
    cli = os.environ["GB_CLI"]
    text = run([cli, "--help"]).stdout
    version = run([cli, "--version"]).stdout.split()[-1]
    secs = man_sections(man)
    problems = []

    commands = help_commands(text)
    if not commands:
        problems.append("guestbench --help lists no commands")
    documented = [t.split()[0] for t in man_tags(secs.get("COMMANDS", []))]
    for c in commands:
        if c not in documented:
            problems.append(f"command {c} is in --help but not in the man page's COMMANDS")
    for c in documented:
        if c not in commands:
            problems.append(f"the man page documents command {c}, which --help does not list")

    # Common options in OPTIONS; a command's own options anywhere in the page.
    global_opts = help_options(text)
    man_opts = man_option_tags(secs.get("OPTIONS", []))
    compare_options("guestbench", global_opts, man_opts, problems)
    with open(man, encoding="utf-8") as f:
        page = "\n".join(troff_plain(l) for l in f.read().splitlines())
    entries = man_command_entries(secs.get("COMMANDS", []))
    for c in commands:
        proc = run([cli, c, "--help"], check=False)
        if proc.returncode != 0:
            problems.append(f"guestbench {c} --help exited {proc.returncode}: {proc.stderr.strip()}")
            continue
        # The formats: what the command's help offers is what its entry names.
        offered = help_formats(proc.stdout)
        named = {f for f in ("csv", "prom", "html")
                 if re.search(rf"(?<![\w.-]){f}(?![\w-])", entries.get(c, ""))}
        if not offered:
            problems.append(f"guestbench {c} --help names no formats")
        for f in sorted(named - offered):
            problems.append(f"the man page names format {f} for {c}, which its --help does not")
        for f in sorted(offered - named - {"table", "json"}):
            problems.append(f"guestbench {c} --help offers --format {f}, its man entry does not")
        for lopt in help_options(proc.stdout):
            if lopt not in global_opts and not re.search(re.escape(lopt) + r"\b", page):
                problems.append(f"guestbench {c}: {lopt} is not in the man page")

    codes = help_exit_codes(text)
    documented_codes = set(man_tags(secs.get("EXIT STATUS", [])))
    if not codes:
        problems.append("guestbench --help names no exit codes")
    if codes != documented_codes:
        problems.append(f"exit codes: --help {sorted(codes)}, man page {sorted(documented_codes)}")
    man_version_ok(man, version, problems)
    groff_clean(man, problems)
    man_renders_clean(man, problems)
    return finish(problems)


def complete(script, line, cwd=None, env=None, words_only=False):
    """COMPREPLY for the line, as bash would fill it for the cursor at the end:
    COMP_LINE, COMP_POINT, COMP_WORDS and COMP_CWORD set, the function that
    'complete -p' names called. words_only: without COMP_LINE/COMP_POINT."""
    prog = ('source "$1"; spec=$(complete -p guestbench) || exit 3; fn=${spec#*-F }; '
            'fn=${fn%% *}; read -r -a COMP_WORDS <<<"$2"; '
            '[[ $2 == *" " || -z $2 ]] && COMP_WORDS+=(""); '
            'COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); ')
    if not words_only:
        prog += 'COMP_LINE="$2"; COMP_POINT=${#COMP_LINE}; '
    prog += "\"$fn\" guestbench; printf '%s\\n' \"${COMPREPLY[@]}\""
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog, "bash",
                           os.path.abspath(script), line],
                          capture_output=True, text=True, timeout=60, cwd=cwd,
                          env=dict(os.environ, **(env or {})))
    if proc.returncode != 0 or proc.stderr:
        return [f"(failed: exit {proc.returncode}: {proc.stderr.strip()})"]
    return [w for w in proc.stdout.splitlines() if w]


def save_runs(cli, env, tmp):
    """Two real saved runs (bench aes against a real agent); returns their ids."""
    procs, socks = start_agents(tmp, ["saver"])
    try:
        for _ in range(2):
            proc = subprocess.run([cli, "-q", "bench", "aes", "--seconds", "0.1", "--sizes", "16",
                                   socks[0]], capture_output=True, text=True, timeout=60,
                                  env=dict(os.environ, **env))
            if proc.returncode != 0:
                raise SystemExit(f"bench aes to save a run: {proc.returncode}: {proc.stderr}")
    finally:
        stop(procs)
    proc = subprocess.run([cli, "--format", "csv", "results"], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ, **env))
    return [l.split(",")[0] for l in proc.stdout.splitlines()[1:] if l]


def check_completion(script):
    cli = os.environ["GB_CLI"]
    text = run([cli, "--help"]).stdout
    problems = []

    def expect(line, want, cwd=None, env=None, words_only=False):
        got = complete(script, line, cwd, env, words_only)
        if sorted(got) != sorted(want):
            problems.append(f"completing {line!r}: got {got}, want {want}")

    # registered for the command name, and the hidden query is no command
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c",
                           'source "$1"; complete -p guestbench', "bash", script],
                          capture_output=True, text=True, timeout=60)
    if proc.stdout.strip() != "complete -F _guestbench guestbench":
        problems.append(f"complete -p guestbench: {proc.stdout.strip()!r} {proc.stderr}")
    proc = run([cli, "__complete", "nonsense"], check=False)
    if proc.returncode != 2 or not proc.stderr:
        problems.append(f"guestbench __complete nonsense: exit {proc.returncode}")

    commands = help_commands(text)
    expect(f"{cli} ", commands)
    expect(f"{cli} -j 4 -q ", commands)
    expect(f"{cli} help ", commands)
    expect(f"{cli} {commands[0]} --ver", ["--verbose", "--version"])
    expect(f"{cli} --format ", ["table", "json", "csv", "prom", "html"])
    expect(f"{cli} ping --color=n", ["never"])
    expect(f"{cli} ping --timeout ", [])
    expect(f"{cli} ping --wait-busy ", [])
    # libvirt URIs for --connect/-c, after the last ':' as readline wants them
    uris = ["qemu:///system", "qemu:///session", "qemu+ssh://", "pve:///", "pve:///cluster",
            "pve+ssh://"]
    expect(f"{cli} --connect ", uris)
    expect(f"{cli} audit -c ", uris)
    expect(f"{cli} discover --connect=q", uris[:3])
    expect(f"{cli} discover --connect=p", uris[3:])
    expect(f"{cli} ping -c qemu:///sy", ["///system"])
    expect(f"{cli} ping --connect=qemu+", ["qemu+ssh://"])
    expect("/nonexistent/guestbench ", [])

    # Every command's options are exactly those of its --help, and each
    # --format offers that command's formats: nothing is kept by hand.
    for c in commands:
        help_text = run([cli, c, "--help"]).stdout
        want = sorted(help_options(help_text))
        got = sorted(w.rstrip("=") for w in complete(script, f"{cli} {c} --"))
        if got != want:
            problems.append(f"completing '{c} --': got {got}, want the --help options {want}")
        expect(f"{cli} {c} --format ", sorted(help_formats(help_text), key=FORMATS.index))
    expect(f"{cli} results --j", [])
    expect(f"{cli} host-check --format ", ["table", "json", "prom"])
    expect(f"{cli} report --format ", ["html"])

    # Operands and option values.
    expect(f"{cli} bench ", ["aes", "disk", "mem", "net"])
    expect(f"{cli} bench m", ["mem"])
    expect(f"{cli} --timeout 5 bench --runs 3 ", ["aes", "disk", "mem", "net"])
    expect(f"{cli} bench aes --loop ", ["aead", "stream"])
    expect(f"{cli} bench aes --cipher=aes-2", ["aes-256-gcm"])
    expect(f"{cli} bench net --direction ", ["host-to-guest", "guest-to-host", "both"])
    expect(f"{cli} bench disk --tests ",
           ["write", "rewrite", "read", "reread", "randread", "randwrite"])
    expect(f"{cli} bench disk --tests write,r",
           ["write,rewrite", "write,read", "write,reread", "write,randread", "write,randwrite"])
    expect(f"{cli} bench disk --tests=read,write,re", ["read,write,rewrite", "read,write,reread"])
    expect(f"{cli} bench mem --pages 4k,", ["4k,thp", "4k,hugetlb"])
    expect(f"{cli} facts --sections cpu,s", ["cpu,steal"])
    expect(f"{cli} facts --sections ",
           ["cpu", "memory", "clocksource", "steal", "block", "net", "os"])
    expect(f"{cli} compare --by ", ["document", "guest"])
    expect(f"{cli} report --by g", ["guest"])
    expect(f"{cli} help b", ["bench"])
    # the same without COMP_LINE, from the words bash split
    expect(f"{cli} bench ", ["aes", "disk", "mem", "net"], words_only=True)
    expect(f"{cli} bench disk --tests write,rew", ["write,rewrite"], words_only=True)

    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "sub"))
        for name in ("web1.sock", "web2.sock", "fleet.ini"):
            open(os.path.join(tmp, name), "w").close()
        empty = os.path.join(tmp, "empty")
        os.mkdir(empty)
        # Readline replaces what follows the last ':' of the word.
        expect(f"{cli} ping unix:{tmp}/we", [f"{tmp}/web1.sock", f"{tmp}/web2.sock"])
        expect(f"{cli} ping qga:{tmp}/we", [f"{tmp}/web1.sock", f"{tmp}/web2.sock"])
        expect(f"{cli} ping vsock:3:", [])
        expect(f"{cli} ping @{tmp}/fl", [f"@{tmp}/fleet.ini"])
        expect(f"{cli} ping {tmp}/s", [f"{tmp}/sub/"])
        expect(f"{cli} ping -o {tmp}/fl", [f"{tmp}/fleet.ini"])
        expect(f"{cli} ping u", ["unix:"], cwd=tmp)
        expect(f"{cli} bench aes ", ["unix:", "vsock:", "qga:", "libvirt:", "pve:"], cwd=empty)
        expect(f"{cli} ping p", ["pve:"], cwd=empty)
        expect(f"{cli} ping q", ["qga:"], cwd=empty)
        expect(f"{cli} ping l", ["libvirt:"], cwd=empty)
        expect(f"{cli} ping --inventory {tmp}/fl", [f"{tmp}/fleet.ini"])
        expect(f"{cli} --inventory={tmp}/fl", [f"{tmp}/fleet.ini"])
        expect(f"{cli} merge {tmp}/fl", [f"{tmp}/fleet.ini"])
        # libvirt: the domains of --libvirt-dir, after the colon
        libvirt = os.path.join(tmp, "libvirt")
        os.mkdir(libvirt)
        for name in ("web1.xml", "db1.xml"):
            open(os.path.join(libvirt, name), "w").close()
        expect(f"{cli} --libvirt-dir {libvirt} audit libvirt:w", ["web1"])
        expect(f"{cli} audit --libvirt-dir={libvirt} libvirt:", ["web1", "db1"])
        expect(f"{cli} discover --libvirt-dir {libvirt} ", ["web1", "db1"])
        expect(f"{cli} --libvirt-dir={libvirt} discover web1 d", ["db1"])
        # Names with blanks or globs must not break the script.
        expect(f"{cli} ping unix:{tmp}/no*such", [])
        # libvirt: without --libvirt-dir, the domains libvirt itself lists, at the
        # first --connect URI: libvirt's test driver (the real library, no daemon)
        # with a node of three domains, one with a blank and a non-ASCII letter
        node = os.path.join(tmp, "node.xml")
        with open(node, "w") as f:
            f.write("<node>" + "".join(
                "<domain type='test'><name>%s</name><memory>65536</memory>"
                "<os><type>hvm</type></os></domain>" % n
                for n in ("web1", "db1", "gb odd.\u00fc-1")) + "</node>\n")
        listed = run([cli, "__complete", "domains", "test://" + node], check=False)
        if "built without libvirt" in listed.stderr:
            expect(f"{cli} -c test://{node} ping libvirt:", [])
        else:
            if sorted(listed.stdout.splitlines()) != ["db1", "gb odd.\u00fc-1", "web1"]:
                problems.append(f"__complete domains test://{node}: {listed}")
            expect(f"{cli} -c test://{node} ping libvirt:", ["web1", "db1", "gb\\ odd.\u00fc-1"])
            expect(f"{cli} --connect=test://{node} audit libvirt:w", ["web1"])
            expect(f"{cli} --connect test://{node} -c test:///default ping libvirt:g",
                   ["gb\\ odd.\u00fc-1"])
            expect(f"{cli} discover -c test://{node} d", ["db1"])
            # a URI that does not answer offers nothing, at once
            expect(f"{cli} -c test:///{tmp}/missing.xml ping libvirt:", [])

        # Saved runs: compare and report offer their ids; a file that is not a
        # run is not offered; a path still completes as a file.
        env = {"XDG_DATA_HOME": os.path.join(tmp, "data")}
        ids = save_runs(cli, env, tmp)
        if len(ids) != 2:
            problems.append(f"two saved runs expected, 'results' lists {ids}")
        with open(os.path.join(tmp, "data", "guestbench", "results", "junk.json"), "w") as f:
            f.write("{not json")
        expect(f"{cli} compare ", ids, cwd=empty, env=env)
        expect(f"{cli} compare {ids[0] if ids else 'x'} ", ids, cwd=empty, env=env)
        expect(f"{cli} report --by guest ", ids, cwd=empty, env=env)
        expect(f"{cli} compare {tmp}/fl", [f"{tmp}/fleet.ini"], env=env)
    return finish(problems)


def check_conffile(conf):
    """The shipped conffile loads, and so does each of its keys uncommented."""
    agent = os.environ["GB_AGENT"]
    ping = '{"execute":"guest-ping"}'
    problems = []
    with open(conf, encoding="utf-8") as f:
        lines = f.read().splitlines()
    proc = run([agent, "-c", conf, "--oneshot", ping], check=False)
    if proc.returncode != 0 or '"return"' not in proc.stdout:
        problems.append(f"{conf} as shipped: exit {proc.returncode}: {proc.stderr.strip()}")
    keys = [i for i, l in enumerate(lines) if re.fullmatch(r"#[a-z-]+=.*", l)]
    if len(keys) < 5:
        problems.append(f"{conf} lists only {len(keys)} keys")
    with tempfile.TemporaryDirectory() as tmp:
        for i in keys:
            key, value = lines[i][1:].split("=", 1)
            if value == "":
                continue  # "path=" documents the key; its default has no value
            edited = list(lines)
            edited[i] = lines[i][1:]
            path = os.path.join(tmp, "agent.conf")
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(edited) + "\n")
            proc = run([agent, "-c", path, "--oneshot", ping], check=False)
            if proc.returncode != 0 or '"return"' not in proc.stdout:
                problems.append(f"{conf}: uncommenting {key}={value} breaks it: "
                                f"{proc.stderr.strip()}")
        # The same file with a typo in a key must be refused (usage error 2),
        # or the test above could pass with an agent that ignores the file.
        path = os.path.join(tmp, "bad.conf")
        with open(path, "w", encoding="utf-8") as f:
            f.write("[general]\nscratch-dri=/tmp\n")
        proc = run([agent, "-c", path, "--oneshot", ping], check=False)
        if proc.returncode != 2:
            problems.append(f"an unknown key is not refused (exit {proc.returncode})")
    return finish(problems)


UNIT_REQUIRED = [
    r"^BindsTo=dev-virtio\\x2dports-org\.guestbench\.agent\.0\.device$",
    r"^After=dev-virtio\\x2dports-org\.guestbench\.agent\.0\.device$",
    r"^Restart=always$",
    r"^NoNewPrivileges=yes$",
    r"^ProtectSystem=strict$",
    r"^ReadWritePaths=/\S+$",
    r"^ProtectHome=yes$",
    r"^PrivateTmp=yes$",
    r"^RestrictAddressFamilies=AF_UNIX AF_VSOCK AF_INET AF_INET6$",
    r"^SystemCallFilter=@system-service$",
    r"^CapabilityBoundingSet=$",
    r"^ExecStart=/\S+/guestbench-agent$",
]


def check_unit(unit):
    problems = []
    with open(unit, encoding="utf-8") as f:
        text = f.read()
    if "@" in re.sub(r"@system-service", "", text.split("[Service]", 1)[-1]):
        problems.append(f"{unit}: an @VARIABLE@ was left unsubstituted")
    for pattern in UNIT_REQUIRED:
        if not re.search(pattern, text, re.M):
            problems.append(f"{unit}: no line matching {pattern}")
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        print("systemd-analyze not found: verify skipped", file=sys.stderr)
    else:
        # verify wants ExecStart to exist: point it at the binary just built.
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "guestbench-agent.service")
            exec_line = f"ExecStart={os.environ['GB_AGENT']}"
            with open(copy, "w", encoding="utf-8") as f:
                f.write(re.sub(r"^ExecStart=.*$", exec_line, text, flags=re.M))
            proc = run([analyze, "verify", "--man=no", copy], check=False)
            noise = [l for l in proc.stderr.splitlines() if l.strip() and not
                     re.search(r"Failed to .*(bus|D-Bus|connect)|Unit .* not found|"
                               r"dev-virtio.*\.device", l)]
            if proc.returncode != 0 or noise:
                problems.append(f"systemd-analyze verify: exit {proc.returncode}: "
                                + "\n".join(noise or proc.stderr.splitlines()))
    return finish(problems)


def check_udev(rule):
    want = ('SUBSYSTEM=="virtio-ports", ATTR{name}=="org.guestbench.agent.0", '
            'TAG+="systemd", ENV{SYSTEMD_WANTS}="guestbench-agent.service"')
    with open(rule, encoding="utf-8") as f:
        rules = [l for l in f.read().splitlines() if l.strip() and not l.startswith("#")]
    if rules != [want]:
        return finish([f"{rule}: rules are {rules}, want exactly [{want}]"])
    return 0


def check_selftest():
    """The comparisons above must see drift, or every check could pass blindly."""
    problems = []
    helptext = ("Usage:\n  x [OPTION…]\n\nCommands:\n  ping  Ping\n  facts  Facts\n\n"
                "Options:\n  -o, --output=FILE  Out\n  --color=WHEN  C: auto or never\n"
                "  -q, --quiet  Q\n")
    if help_commands(helptext) != ["ping", "facts"]:
        problems.append(f"help_commands: {help_commands(helptext)}")
    opts = help_options(helptext)
    if opts != {"--output": "-o", "--color": None, "--quiet": "-q"}:
        problems.append(f"help_options: {opts}")
    found = []
    compare_options("t", opts, {"--output": "-o", "--quiet": "-x", "--gone": None}, found)
    if len(found) != 3:
        problems.append(f"compare_options missed drift: {found}")
    codes = help_exit_codes("Exit status: 0 all ok, 1 a FAIL,\n3 guests down,\n"
                            "130 interrupted by SIGINT, 143 by SIGTERM.\n\nRun 2 x")
    if codes != {"0", "1", "3", "130", "143"}:
        problems.append(f"help_exit_codes: {sorted(codes)}")
    tags = man_option_tags([".TP", ".BR \\-o \", \" \\-\\-output =\\fIFILE\\fR", "text",
                            ".TP", ".BR \\-\\-color =\\fIWHEN\\fR"])
    if tags != {"--output": "-o", "--color": None}:
        problems.append(f"man_option_tags: {tags}")
    # man_renders_clean sees a leftover variable and a page troff warns about
    with tempfile.TemporaryDirectory() as tmp:
        for name, text, want in (
                ("left.1", '.TH X 1\n.SH NAME\nx \\- y\n.SH FILES\n@DOCDIR@/x\n', "@DOCDIR@"),
                ("warn.1", ".TH X 1\n.SH NAME\nx \\- y\n.SH BAD\n.XX undefined\n", "warn"),
                ("ok.1", ".TH X 1\n.SH NAME\nx \\- y\n", None)):
            page = os.path.join(tmp, name)
            with open(page, "w", encoding="utf-8") as f:
                f.write(text)
            found = []
            man_renders_clean(page, found)
            if (want is None) != (not found) or (want and want not in " ".join(found)):
                problems.append(f"man_renders_clean on {name}: {found}")
    return finish(problems)


# ---- the daily audit (guestbench-audit.timer/.service) ----------------------


def unit_lines(text, key):
    return [l.split("=", 1)[1] for l in text.splitlines() if l.startswith(key + "=")]


AUDIT_SERVICE_REQUIRED = [
    r"^Type=oneshot$",
    r"^EnvironmentFile=-/\S+/default/guestbench-audit$",
    r"^ExecCondition=/\S+/guestbench-audit-run --check$",
    r"^ExecStart=/\S+/guestbench-audit-run$",
    r"^SuccessExitStatus=1 3 4$",
    r"^NoNewPrivileges=yes$",
    r"^ProtectSystem=(full|strict)$",
    r"^ProtectHome=yes$",
    r"^PrivateTmp=yes$",
    r"^RestrictAddressFamilies=AF_UNIX AF_VSOCK$",
    r"^SystemCallFilter=@system-service$",
]
AUDIT_TIMER_REQUIRED = [
    r"^OnCalendar=daily$",
    r"^RandomizedDelaySec=\S+$",
    r"^Persistent=true$",
    r"^WantedBy=timers\.target$",
]


def check_audit_units(service, timer, wrapper, defaults):
    """Both units as shipped, systemd-analyze verify, and the settings file."""
    problems = []
    with open(service, encoding="utf-8") as f:
        stext = f.read()
    with open(timer, encoding="utf-8") as f:
        ttext = f.read()
    for path, text, required in ((service, stext, AUDIT_SERVICE_REQUIRED),
                                 (timer, ttext, AUDIT_TIMER_REQUIRED)):
        if re.search(r"@[A-Z_]+@", text):
            problems.append(f"{path}: an @VARIABLE@ was left unsubstituted")
        for pattern in required:
            if not re.search(pattern, text, re.M):
                problems.append(f"{path}: no line matching {pattern}")
    if "[Install]" in stext:
        problems.append(f"{service}: the timer starts it; an [Install] would let it be enabled too")

    # Every variable of the settings file is one the script reads, and back.
    with open(wrapper, encoding="utf-8") as f:
        script = f.read()
    with open(defaults, encoding="utf-8") as f:
        dlines = f.read().splitlines()
    set_vars = [l[1:].split("=", 1)[0] for l in dlines if re.fullmatch(r"#GUESTBENCH_[A-Z_]+=.*", l)]
    read_vars = set(re.findall(r"\$\{(GUESTBENCH_[A-Z_]+)", script))
    if set(set_vars) != read_vars:
        problems.append(f"{defaults} sets {sorted(set_vars)}, the script reads {sorted(read_vars)}")
    if [l for l in dlines if l.strip() and not l.startswith("#")]:
        problems.append(f"{defaults}: every setting must ship commented out")
    proc = run(["sh", "-n", wrapper], check=False)
    if proc.returncode != 0:
        problems.append(f"{wrapper}: sh -n: {proc.stderr.strip()}")

    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        print("systemd-analyze not found: verify skipped", file=sys.stderr)
        return finish(problems)
    # verify wants the Exec programs to exist: point them at the script just built.
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "guestbench-audit-run")
        shutil.copy(wrapper, exe)
        os.chmod(exe, 0o755)
        scopy = os.path.join(tmp, "guestbench-audit.service")
        tcopy = os.path.join(tmp, "guestbench-audit.timer")
        with open(scopy, "w", encoding="utf-8") as f:
            f.write(re.sub(r"^(Exec\w+=)/\S+/guestbench-audit-run", rf"\1{exe}", stext,
                           flags=re.M))
        shutil.copy(timer, tcopy)
        proc = run([analyze, "verify", "--man=no", tcopy, scopy], check=False)
        noise = [l for l in proc.stderr.splitlines() if l.strip() and not
                 re.search(r"Failed to .*(bus|D-Bus|connect)|Unit .* not found|"
                           r"(libvirtd|virtqemud)\.service", l)]
        if proc.returncode != 0 or noise:
            problems.append(f"systemd-analyze verify: exit {proc.returncode}: "
                            + "\n".join(noise or proc.stderr.splitlines()))
        # The check sees a broken unit, or the test above could pass blindly.
        with open(scopy, "a", encoding="utf-8") as f:
            f.write("SuccessExitStatus=frobnicate\nNoSuchKey=1\n")
        proc = run([analyze, "verify", "--man=no", scopy], check=False)
        if "NoSuchKey" not in proc.stderr and "frobnicate" not in proc.stderr:
            problems.append("systemd-analyze verify does not see a broken unit: "
                            + proc.stderr.strip())
    return finish(problems)


def rules_structure(doc):
    """Problems of a Prometheus rule file, as a parsed YAML document."""
    problems = []
    if not isinstance(doc, dict) or set(doc) != {"groups"} or not isinstance(doc["groups"], list):
        return ["the top level must be a mapping with only 'groups', a list"]
    names = set()
    for group in doc["groups"]:
        if not isinstance(group, dict) or not isinstance(group.get("name"), str):
            problems.append(f"a group without a name: {group!r}")
            continue
        if group["name"] in names:
            problems.append(f"group {group['name']} twice")
        names.add(group["name"])
        extra = set(group) - {"name", "interval", "limit", "rules"}
        if extra:
            problems.append(f"group {group['name']}: unknown keys {sorted(extra)}")
        rules = group.get("rules")
        if not isinstance(rules, list) or not rules:
            problems.append(f"group {group['name']}: no rules")
            continue
        for rule in rules:
            if not isinstance(rule, dict):
                problems.append(f"group {group['name']}: a rule is not a mapping")
                continue
            what = rule.get("alert", rule.get("record"))
            if ("alert" in rule) == ("record" in rule) or not isinstance(what, str) \
                    or not re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*", what):
                problems.append(f"rule {rule!r}: needs exactly one of alert/record, a valid name")
                continue
            extra = set(rule) - {"alert", "record", "expr", "for", "keep_firing_for",
                                 "labels", "annotations"}
            if extra:
                problems.append(f"rule {what}: unknown keys {sorted(extra)}")
            if not isinstance(rule.get("expr"), str) or not rule["expr"].strip():
                problems.append(f"rule {what}: no expr")
            elif rule["expr"].count("(") != rule["expr"].count(")") or \
                    rule["expr"].count("{") != rule["expr"].count("}"):
                problems.append(f"rule {what}: unbalanced expr {rule['expr']}")
            if "for" in rule and not re.fullmatch(r"(\d+(ms|s|m|h|d|w|y))+", str(rule["for"])):
                problems.append(f"rule {what}: bad duration for: {rule['for']}")
            for key in ("labels", "annotations"):
                value = rule.get(key, {})
                if not isinstance(value, dict) or \
                        not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
                    problems.append(f"rule {what}: {key} must map strings to strings")
            if "record" in rule and ("for" in rule or "annotations" in rule):
                problems.append(f"rule {what}: a recording rule has no for/annotations")
    return problems


def check_prom_rules(path):
    """The alerting rules parse as a Prometheus rule file and use real metrics."""
    try:
        import yaml
    except ImportError:
        print("python3-yaml not installed: rule file check skipped", file=sys.stderr)
        return SKIP
    promtool = shutil.which("promtool")
    if promtool is not None:
        proc = run([promtool, "check", "rules", path], check=False)
        if proc.returncode != 0:
            return finish([f"promtool check rules: {proc.stdout}{proc.stderr}"])
    with open(path, encoding="utf-8") as f:
        try:
            doc = yaml.safe_load(f)
        except yaml.YAMLError as e:
            return finish([f"{path}: not YAML: {e}"])
    problems = rules_structure(doc)
    # The names the CLI writes (a renamed metric would silence an alert).
    known = {"guestbench_up", "guestbench_busy", "guestbench_audit_finding", "guestbench_audit_worst_level",
             "guestbench_fact_info", "guestbench_fact_block_info", "guestbench_fact_net_info",
             "node_textfile_mtime_seconds"}
    exprs = [r.get("expr", "") for g in (doc or {}).get("groups", []) if isinstance(g, dict)
             for r in g.get("rules", []) or [] if isinstance(r, dict)]
    for expr in exprs:
        for name in re.findall(r"\b(guestbench_\w+|node_\w+)", str(expr)):
            if name not in known:
                problems.append(f"{path}: unknown metric {name}")
    # The structural check sees broken files, or it could pass anything.
    for bad in ({"groups": [{"name": "g", "rules": [{"alert": "A"}]}]},
                {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "up", "for": "1 hour"}]}]},
                {"groups": [{"name": "g", "rules": [{"alert": "A", "record": "b", "expr": "x"}]}]},
                {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "sum(x"}]}]},
                {"groups": [{"rules": []}]}, {"rules": []}, ["groups"]):
        if not rules_structure(bad):
            problems.append(f"rules_structure accepts {bad}")
    return finish(problems)


def prom_problems(text):
    """The text exposition format: HELP/TYPE before a family's samples, samples well formed."""
    problems = []
    declared = set()
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            declared.add(line.split()[2])
        elif not PROM_SAMPLE.match(line):
            problems.append(f"not a sample: {line!r}")
        elif line.split("{")[0].split(" ")[0] not in declared:
            problems.append(f"sample before its HELP/TYPE: {line!r}")
    if not declared:
        problems.append("no metric family")
    if text and not text.endswith("\n"):
        problems.append("no final newline")
    return problems


def check_audit_run(service, wrapper):
    """The service's own command lines against two live agents."""
    with open(service, encoding="utf-8") as f:
        stext = f.read()
    ok_codes = {0} | {int(c) for v in unit_lines(stext, "SuccessExitStatus") for c in v.split()}
    installed = unit_lines(stext, "ExecStart")[0].split()[0]

    def argv(key):
        # The script as built is not executable (meson sets the mode at install).
        words = unit_lines(stext, key)[0].split()
        return ["sh", wrapper] + words[1:] if words[0] == installed else words

    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        procs, socks = start_agents(tmp, ["web1", "db1"])
        try:
            textdir = os.path.join(tmp, "textfile")
            inventory = os.path.join(tmp, "fleet.ini")
            with open(inventory, "w", encoding="utf-8") as f:
                f.write(f"[guest web1]\ntarget=unix:{socks[0]}\n\n"
                        f"[guest db1]\ntarget=unix:{socks[1]}\n")
            env = dict(os.environ, GUESTBENCH=os.environ["GB_CLI"],
                       GUESTBENCH_INVENTORY=inventory, GUESTBENCH_TEXTFILE_DIR=textdir,
                       GUESTBENCH_LIBVIRT_DIR=os.path.join(tmp, "no-libvirt"))

            def service_run(extra_env=None):
                e = dict(env, **(extra_env or {}))
                cond = subprocess.run(argv("ExecCondition"), env=e, capture_output=True,
                                      text=True, timeout=60)
                if cond.returncode != 0:
                    return cond, True
                return subprocess.run(argv("ExecStart"), env=e, capture_output=True,
                                      text=True, timeout=120), False

            proc, skipped = service_run()
            prom = os.path.join(textdir, "guestbench.prom")
            if skipped or proc.returncode not in ok_codes:
                problems.append(f"inventory run: skipped={skipped} exit {proc.returncode}: "
                                f"{proc.stderr.strip()}")
            elif not os.path.exists(prom):
                problems.append(f"inventory run wrote no {prom}")
            else:
                with open(prom, encoding="utf-8") as f:
                    text = f.read()
                problems += [f"guestbench.prom: {p}" for p in prom_problems(text)]
                for name in ("web1", "db1"):
                    if not re.search(rf'^guestbench_up\{{guest="{name}",[^}}]*\}} 1$', text, re.M):
                        problems.append(f"guestbench.prom: {name} is not up:\n{text}")
                if "guestbench_audit_finding{" not in text:
                    problems.append("guestbench.prom: no finding at all")
                leftovers = sorted(set(os.listdir(textdir)) - {"guestbench.prom"})
                if leftovers:
                    problems.append(f"the textfile directory has leftovers: {leftovers}")

            # A guest another guestbench is benchmarking: busy, not down, and a success.
            holder = start_holder(os.environ["GB_CLI"], socks[0])
            proc, skipped = service_run()
            holder_running = holder.poll() is None
            text = ""
            if os.path.exists(prom):
                with open(prom, encoding="utf-8") as f:
                    text = f.read()
            if skipped or proc.returncode != 4 or proc.returncode not in ok_codes:
                problems.append(f"one guest busy: exit {proc.returncode}, want 4 (a success)")
            if not holder_running or \
                    not re.search(r'^guestbench_busy\{guest="web1",[^}]*\} 1$', text, re.M) or \
                    re.search(r'^guestbench_up\{guest="web1",', text, re.M) or \
                    not re.search(r'^guestbench_up\{guest="db1",[^}]*\} 1$', text, re.M):
                problems.append(f"one guest busy: web1 is not busy (and db1 up) in\n{text}")
            # ... unless the audit is told to wait its turn
            proc, skipped = service_run({"GUESTBENCH_AUDIT_ARGS": "--wait-busy 30"})
            holder.communicate(timeout=60)
            with open(prom, encoding="utf-8") as f:
                text = f.read()
            if skipped or proc.returncode not in ok_codes or proc.returncode == 4 or \
                    not re.search(r'^guestbench_up\{guest="web1",[^}]*\} 1$', text, re.M):
                problems.append(f"--wait-busy: exit {proc.returncode}, web1 not up in\n{text}")

            # One agent gone: its guestbench_up is 0, and the run still counts as success.
            stop(procs[1:])
            proc, skipped = service_run()
            text = ""
            if os.path.exists(prom):
                with open(prom, encoding="utf-8") as f:
                    text = f.read()
            if skipped or proc.returncode not in ok_codes or proc.returncode == 0:
                problems.append(f"one guest down: exit {proc.returncode}, want 3")
            if not re.search(r'^guestbench_up\{guest="db1",[^}]*\} 0$', text, re.M):
                problems.append(f"one guest down: db1 is not 0 in\n{text}")

            # No inventory and no libvirt: the condition skips the run.
            proc, skipped = service_run({"GUESTBENCH_INVENTORY": os.path.join(tmp, "none.ini")})
            if not skipped or proc.returncode != 1 or "nothing to audit" not in proc.stderr:
                problems.append(f"nothing to audit: skipped={skipped} exit {proc.returncode}")

            # No inventory: the running libvirt domains are discovered.
            libvirt = os.path.join(tmp, "libvirt")
            os.mkdir(libvirt)
            # ... none has the channel: the last metrics are replaced by nothing.
            proc, skipped = service_run({"GUESTBENCH_INVENTORY": os.path.join(tmp, "none.ini"),
                                         "GUESTBENCH_LIBVIRT_DIR": libvirt})
            if skipped or proc.returncode != 0 or not os.path.exists(prom) or \
                    os.path.getsize(prom) != 0 or os.listdir(textdir) != ["guestbench.prom"]:
                problems.append(f"no channel anywhere: skipped={skipped} exit {proc.returncode}, "
                                f"{sorted(os.listdir(textdir))}: {proc.stderr.strip()}")
            with open(os.path.join(os.environ["GB_TEST_DATA"], "libvirt", "vm1.xml"),
                      encoding="utf-8") as f:
                xml = f.read()
            xml, n = re.subn(r"(<source mode='bind' path=')[^']*(org\.guestbench\.agent\.0')",
                             lambda m: m.group(1) + socks[0] + "'", xml)
            with open(os.path.join(libvirt, "web1.xml"), "w", encoding="utf-8") as f:
                f.write(xml.replace("<name>vm1</name>", "<name>web1</name>"))
            if os.path.exists(prom):
                os.remove(prom)
            run_dir = os.path.join(tmp, "run")
            os.mkdir(run_dir)
            proc, skipped = service_run({"GUESTBENCH_INVENTORY": os.path.join(tmp, "none.ini"),
                                         "GUESTBENCH_LIBVIRT_DIR": libvirt,
                                         "RUNTIME_DIRECTORY": run_dir})
            if n != 1:
                problems.append("vm1.xml has no guestbench channel source to rewrite")
            elif skipped or proc.returncode not in ok_codes or not os.path.exists(prom):
                problems.append(f"discovery run: skipped={skipped} exit {proc.returncode}: "
                                f"{proc.stderr.strip()}")
            else:
                with open(prom, encoding="utf-8") as f:
                    text = f.read()
                if not re.search(r'^guestbench_up\{guest="web1",[^}]*\} 1$', text, re.M):
                    problems.append(f"discovery run: web1 is not up:\n{text}")

            # Bad settings fail the unit (2), they do not pass for findings (1).
            notdir = os.path.join(tmp, "file")
            open(notdir, "w").close()
            for bad in ({"GUESTBENCH_TEXTFILE_DIR": "relative/dir"},
                        {"GUESTBENCH_TEXTFILE_DIR": os.path.join(notdir, "sub")},
                        {"GUESTBENCH_AUDIT_ARGS": "--no-such-option"}):
                proc, skipped = service_run(bad)
                if skipped or proc.returncode != 2 or not proc.stderr.strip():
                    problems.append(f"{bad}: exit {proc.returncode} (want 2 and a message)")
        finally:
            stop(procs)
    return finish(problems)

# ---- README -----------------------------------------------------------------

FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)


def readme_blocks(text):
    """[(language, body, offset)] of the fenced blocks, in order."""
    return [(m.group(1), m.group(2), m.start()) for m in FENCE.finditer(text)]


def readme_shell_lines(body):
    """The commands of a sh block: comments and blank lines dropped."""
    lines = []
    for line in body.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def readme_cli_options(cli, line, commands, cache, problems):
    """The long options a guestbench command line uses must exist for its command."""
    words = line.split()
    cmd = next((w for w in words[1:] if w in commands), None)
    if cmd is None:
        problems.append(f"README: no known command in {line!r}")
        return
    if cmd not in cache:
        cache[cmd] = help_options(run([cli, cmd, "--help"]).stdout)
    for w in words[1:]:
        opt = w.split("=")[0]
        if opt.startswith("--") and opt not in cache[cmd]:
            problems.append(f"README: {line!r}: guestbench {cmd} has no option {opt}")


def readme_outputs(text):
    """{command: [output lines]} from the '$ guestbench ...' samples of text blocks."""
    samples = {}
    for lang, body, _ in readme_blocks(text):
        if lang != "text":
            continue
        current = None
        for line in body.splitlines():
            if line.startswith("$ "):
                current = re.sub(r"\s+#.*$", "", line[2:]).split()[1]
                samples.setdefault(current, [])
            elif current is not None and line.strip():
                samples[current].append(line)
    return samples


def shape(line):
    """A line with its numbers as N and its runs of blanks as one."""
    return " ".join(re.sub(r"\d+(\.\d+)?", "N", line).split())


def readme_static_problems(text, root, cli, agent):
    """The first block is the two scripts, which exist; every option shown exists."""
    problems = []
    blocks = readme_blocks(text)
    # The first block: exactly scripts/demo and scripts/test, both there and executable.
    first = readme_shell_lines(blocks[0][1]) if blocks else []
    if [l.split()[0] for l in first] != ["scripts/demo", "scripts/test"]:
        problems.append(f"README's first block is not scripts/demo and scripts/test: {first}")
    for script in ("scripts/demo", "scripts/test"):
        if not os.access(os.path.join(root, script), os.X_OK):
            problems.append(f"README: {script} is missing or not executable")

    commands = help_commands(run([cli, "--help"]).stdout)
    agent_opts = help_options(run([agent, "--help"]).stdout)
    cache = {}
    for lang, body, _ in blocks:
        if lang != "sh":
            continue
        for line in readme_shell_lines(body):
            words = line.split()
            if words[0] in ("guestbench", "build/host-cli/guestbench"):
                readme_cli_options(cli, line, commands, cache, problems)
            elif words[0] in ("guestbench-agent", "build/agent/guestbench-agent"):
                for w in words[1:]:
                    opt = w.split("=")[0]
                    if opt.startswith("-") and opt != "&" and opt not in agent_opts and \
                            opt not in agent_opts.values():
                        problems.append(f"README: guestbench-agent has no option {opt}")

    # One list of exit codes, the CLI's own: README's sentence names the codes of
    # guestbench(1)'s EXIT STATUS and of --help, no more and no fewer.
    man_path = os.path.join(root, "packaging", "man", "guestbench.1.in")
    with open(man_path, encoding="utf-8") as f:
        man = f.read()
    section = man.split(".SH EXIT STATUS", 1)[-1].split(".SH ", 1)[0]
    man_codes = set(re.findall(r"^\.B (\d+)$", section, re.M))
    help_text = run([cli, "--help"]).stdout
    help_codes = set(re.findall(r"\b(\d+) [a-z]", help_text.split("Exit status:", 1)[-1]))
    m = re.search(r"The exit status says how it went:(.*?)\n\n", text, re.S)
    # the codes are listed before the sentence on which wins over which
    listed = m.group(1).split(" wins over ")[0].rsplit(".", 1)[0] if m else ""
    readme_codes = set(re.findall(r"\b(\d+)\b", listed))
    if not m:
        problems.append("README has no 'The exit status says how it went:' sentence")
    for name, codes in (("guestbench --help", help_codes), ("README", readme_codes)):
        if codes != man_codes:
            problems.append(f"exit codes: {name} names {sorted(codes, key=int)}, "
                            f"guestbench(1) {sorted(man_codes, key=int)}")

    return problems


def check_readme(readme):
    """README starts with the two scripts; its quick start runs as written against the real
    binaries, its samples have the shape of what they print, and every option it shows exists."""
    cli = os.environ["GB_CLI"]
    agent = os.environ["GB_AGENT"]
    root = os.path.dirname(os.path.abspath(readme))
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    problems = []
    blocks = readme_blocks(text)

    commands = help_commands(run([cli, "--help"]).stdout)

    # The quick start, run as written: the agent in the background, then each command.
    head = text.find("## Try it without a VM")
    quick = next((b for lang, b, at in blocks if lang == "sh" and at > head), None) \
        if head >= 0 else None
    if quick is None:
        problems.append("README has no '## Try it without a VM' with a sh block")
        return finish(problems)
    outputs = {}
    with tempfile.TemporaryDirectory(prefix="gb-readme-") as tmp:
        env = dict(os.environ, HOME=tmp, XDG_DATA_HOME=os.path.join(tmp, "data"))
        procs = []
        try:
            for line in readme_shell_lines(quick):
                line = line.replace("/tmp/gb", tmp)
                words = line.split()
                if words[0] == "meson":
                    continue  # the build: meson test has done it
                if words[:2] == ["mkdir", "-p"]:
                    for d in words[2:]:
                        os.makedirs(d, exist_ok=True)
                elif words[0] == "build/agent/guestbench-agent" and words[-1] == "&":
                    p = subprocess.Popen([agent] + words[1:-1], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                    procs.append(p)
                    sock = words[words.index("-p") + 1]
                    deadline = time.monotonic() + 10
                    while not os.path.exists(sock) and p.poll() is None and \
                            time.monotonic() < deadline:
                        time.sleep(0.02)
                    if not os.path.exists(sock):
                        problems.append(f"README: the agent did not listen: {line}")
                        return finish(problems)
                elif words[0] == "build/host-cli/guestbench":
                    proc = subprocess.run([cli] + words[1:], capture_output=True, text=True,
                                          timeout=120, env=env)
                    cmd = next(w for w in words[1:] if w in commands)
                    # audit exits 1 for a FAIL finding on this machine: that is an answer too
                    if proc.returncode not in ((0, 1) if cmd == "audit" else (0,)):
                        problems.append(f"README: {line} exited {proc.returncode}: "
                                        f"{proc.stderr.strip()}")
                    outputs[cmd] = (proc.stdout + proc.stderr).replace(tmp, "/tmp/gb")\
                        .splitlines()
                elif words == ["kill", "%1"]:
                    stop(procs)
                else:
                    problems.append(f"README: the quick start has a line this check does "
                                    f"not know how to run: {line}")
        finally:
            stop(procs)

    if problems:
        return finish(problems)
    rules = {l.split()[0] for l in run([cli, "audit", "--list-rules"]).stdout.splitlines() if l}
    problems += readme_sample_problems(text, outputs, rules)
    problems += readme_static_problems(text, root, cli, agent)

    # Each check above must see drift, or it could pass blindly.
    drifts = {
        "the first block": text.replace("scripts/demo ", "scripts/dmeo ", 1),
        "an option": text.replace("aes --seconds 1", "aes --secnds 1"),
        "the bench header": text.replace("The 'numbers' are in 1000s", "The numbers are in 1000s"),
        "an audit rule": text.replace("NOTE  DISK-SCHEDULER", "NOTE  DISK-SCHEDULING"),
        "a facts label": text.replace("  clocksource  kvm", "  clock        kvm"),
        "a ping header": text.replace("GUEST            STATUS", "GUEST            STATE"),
    }
    for what, drifted in drifts.items():
        if drifted == text:
            problems.append(f"README self-check: {what} could not be changed")
        elif not (readme_sample_problems(drifted, outputs, rules) or
                  readme_static_problems(drifted, root, cli, agent)):
            problems.append(f"README self-check: a changed {what} went unnoticed")
    return finish(problems)


def readme_sample_problems(text, outputs, rules):
    """The samples have the shape of what the commands printed here (outputs)."""
    problems = []
    samples = readme_outputs(text)
    for cmd in ("ping", "facts", "audit", "bench", "results"):
        if cmd not in samples or not samples[cmd]:
            problems.append(f"README shows no output of {cmd}")
    if problems:
        return problems
    # the same lines, numbers aside ("saved:" names a path of the machine that ran it)
    for cmd in ("ping", "bench", "results"):
        real = {shape(l) for l in outputs[cmd]}
        for line in samples[cmd]:
            if not line.startswith("saved: ") and shape(line) not in real:
                problems.append(f"README: {cmd} sample line {line!r} is not what it prints")
    real_labels = {l.split()[0] for l in outputs["facts"] if l.startswith("  ")}
    for line in samples["facts"]:
        if line.startswith("  ") and line.split()[0] not in real_labels | {"disk", "nic", "numa"}:
            problems.append(f"README: facts sample label {line.split()[0]!r} is not printed")
    for line in samples["audit"]:
        if not line.startswith(" "):
            fields = line.split()
            if len(fields) < 3 or fields[1] not in ("PASS", "NOTE", "WARN", "FAIL") or \
                    fields[2] not in rules:
                problems.append(f"README: audit sample line {line!r} has no level and rule")
    return problems


def check_tmpfiles(conf):
    """The shipped tmpfiles.d entry makes /run/guestbench (0755 root), applied
    by the real systemd-tmpfiles to a scratch root."""
    with open(conf, encoding="utf-8") as f:
        lines = [l.split() for l in f.read().splitlines() if l.strip() and not l.startswith("#")]
    want = [["d", "/run/guestbench", "0755", "root", "root", "-"]]
    if lines != want:
        return finish([f"{conf}: entries are {lines}, want {want}"])
    tool = shutil.which("systemd-tmpfiles")
    if not tool:
        print("systemd-tmpfiles not installed: only the entry was checked", file=sys.stderr)
        return 0
    problems = []
    with tempfile.TemporaryDirectory() as root:
        run([tool, "--create", f"--root={root}", conf])
        made = os.path.join(root, "run", "guestbench")
        if not os.path.isdir(made) or os.path.islink(made):
            problems.append(f"systemd-tmpfiles --create did not make {made}")
        else:
            st = os.stat(made)
            if st.st_mode & 0o7777 != 0o755:
                problems.append(f"{made}: mode {st.st_mode & 0o7777:o}, want 755")
            if os.geteuid() == 0 and (st.st_uid, st.st_gid) != (0, 0):
                problems.append(f"{made}: owner {st.st_uid}:{st.st_gid}, want root")
    return finish(problems)


def needed_libs(binary):
    text = run(["readelf", "-d", binary]).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", text)


def check_libs(have_libvirt):
    """The agent runs inside guests and never links libvirt, nor libcrypto
    (only guestbench-agent-bench, which runs its benchmark jobs, does); its
    resident process links GLib and libc alone (JSON, GIO and the rest are
    its session process's, guestbench-agent-session); the
    host CLI never links libvirt either (a Proxmox VE node has none): built
    with libvirt, it loads libvirt.so.0 and libvirt-qemu.so.0 at its first
    libvirt call."""
    if not shutil.which("readelf"):
        print("readelf not installed", file=sys.stderr)
        return SKIP
    problems = []
    agent = [l for l in needed_libs(os.environ["GB_AGENT"]) if "virt" in l]
    if agent:
        problems.append(f"guestbench-agent links {agent}: the agent must never need libvirt")
    crypto = [l for l in needed_libs(os.environ["GB_AGENT"]) if l.startswith("libcrypto")]
    if crypto:
        problems.append(f"guestbench-agent links {crypto}: only guestbench-agent-bench may")
    resident_ok = ("libglib-2.0.so.", "libc.so.", "libasan.so.", "libubsan.so.", "libm.so.",
                   "libgcc_s.so.", "libstdc++.so.")
    extra = [l for l in needed_libs(os.environ["GB_AGENT"]) if not l.startswith(resident_ok)]
    if extra:
        problems.append(f"guestbench-agent links {extra}: the resident process needs GLib "
                        "alone; the rest belongs in guestbench-agent-session")
    cli = [l for l in needed_libs(os.environ["GB_CLI"]) if l.startswith("libvirt")]
    if cli:
        problems.append(f"guestbench links {sorted(cli)}: it must start without libvirt")
    with open(os.environ["GB_CLI"], "rb") as f:
        data = f.read()
    for soname in (b"libvirt.so.0", b"libvirt-qemu.so.0"):
        if (soname in data) != (have_libvirt == "true"):
            problems.append(f"guestbench {'lacks' if have_libvirt == 'true' else 'names'} "
                            f"{soname.decode()} (built with libvirt: {have_libvirt})")
    return finish(problems)


CHECKS = {
    "man-agent": check_man_agent,
    "man-cli": check_man_cli,
    "completion": check_completion,
    "conffile": check_conffile,
    "unit": check_unit,
    "udev": check_udev,
    "selftest": check_selftest,
    "audit-units": check_audit_units,
    "prom-rules": check_prom_rules,
    "audit-run": check_audit_run,
    "readme": check_readme,
    "tmpfiles": check_tmpfiles,
    "libs": check_libs,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CHECKS:
        print(f"usage: {sys.argv[0]} {'|'.join(CHECKS)} [FILE]", file=sys.stderr)
        sys.exit(2)
    sys.exit(CHECKS[sys.argv[1]](*sys.argv[2:]))
