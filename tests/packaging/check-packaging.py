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
    for c in commands:
        proc = run([cli, c, "--help"], check=False)
        if proc.returncode != 0:
            problems.append(f"guestbench {c} --help exited {proc.returncode}: {proc.stderr.strip()}")
            continue
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
    return finish(problems)


def complete(script, line, cwd=None):
    """COMPREPLY for the line, as bash would fill it for the cursor at the end."""
    prog = (f'source "$1"; COMP_LINE="$2"; COMP_POINT=${{#COMP_LINE}}; '
            f"_guestbench; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog, "bash", script, line],
                          capture_output=True, text=True, timeout=60, cwd=cwd)
    if proc.returncode != 0 or proc.stderr:
        raise SystemExit(f"completion of {line!r} failed: {proc.stderr}")
    return [w for w in proc.stdout.splitlines() if w]


def check_completion(script):
    cli = os.environ["GB_CLI"]
    text = run([cli, "--help"]).stdout
    problems = []

    def expect(line, want, cwd=None):
        got = complete(script, line, cwd)
        if sorted(got) != sorted(want):
            problems.append(f"completing {line!r}: got {got}, want {want}")

    commands = help_commands(text)
    expect(f"{cli} ", commands)
    expect(f"{cli} -j 4 -q ", commands)
    expect(f"{cli} help ", commands)
    expect(f"{cli} {commands[0]} --ver", ["--verbose", "--version"])
    expect(f"{cli} --format ", ["table", "json"] + [f for f in ("csv", "prom", "html")
                                                    if re.search(rf"--format=.*\b{f}\b", text)])
    expect(f"{cli} ping --color=n", ["never"])
    expect(f"{cli} ping --timeout ", [])
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "sub"))
        for name in ("web1.sock", "web2.sock", "fleet.ini"):
            open(os.path.join(tmp, name), "w").close()
        # Readline replaces what follows the last ':' of the word.
        expect(f"{cli} ping unix:{tmp}/we", [f"{tmp}/web1.sock", f"{tmp}/web2.sock"])
        expect(f"{cli} ping vsock:3:", [])
        expect(f"{cli} ping @{tmp}/fl", [f"@{tmp}/fleet.ini"])
        expect(f"{cli} ping {tmp}/s", [f"{tmp}/sub/"])
        expect(f"{cli} ping -o {tmp}/fl", [f"{tmp}/fleet.ini"])
        expect(f"{cli} ping u", ["unix:"], cwd=tmp)
        # Names with blanks or globs must not break the script.
        expect(f"{cli} ping unix:{tmp}/no*such", [])
    expect("/nonexistent/guestbench ", [])
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
    return finish(problems)


CHECKS = {
    "man-agent": check_man_agent,
    "man-cli": check_man_cli,
    "completion": check_completion,
    "conffile": check_conffile,
    "unit": check_unit,
    "udev": check_udev,
    "selftest": check_selftest,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CHECKS:
        print(f"usage: {sys.argv[0]} {'|'.join(CHECKS)} [FILE]", file=sys.stderr)
        sys.exit(2)
    sys.exit(CHECKS[sys.argv[1]](*sys.argv[2:]))
