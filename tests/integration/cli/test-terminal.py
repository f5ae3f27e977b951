#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a terminal and a pipe get from the real CLI against a real agent:
colour on a real pty by default, none with NO_COLOR or TERM=dumb (unless
--color=always), and a reader that closes the pipe early (| head) ends the
run quietly. Prints TAP."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, start_agents, stop, tap_report  # noqa: E402
from gbtest import on_pty as run_on_pty  # noqa: E402

CLI = os.environ["GB_CLI"]


def on_pty(args, env_extra):
    """Runs the CLI with stdout on a pty; returns (rc, what the terminal got)."""
    return run_on_pty(CLI, args, env_extra, stderr=False)


def main():
    tmp = tempfile.mkdtemp(prefix="gb-term-")
    procs, socks = start_agents(tmp, ["vm"])
    sock = socks[0]
    try:
        rc, out = on_pty(["ping", sock], {})
        check("pty: the status column is coloured", rc == 0 and "\033[32mok\033[0m" in out, out)
        rc, out = on_pty(["ping", sock], {"NO_COLOR": "1"})
        check("pty + NO_COLOR: no escape at all", rc == 0 and "ok" in out and "\033" not in out,
              out)
        rc, out = on_pty(["ping", sock], {"NO_COLOR": ""})
        check("pty + empty NO_COLOR: coloured", rc == 0 and "\033[32m" in out, out)
        rc, out = on_pty(["ping", sock], {"TERM": "dumb"})
        check("pty + TERM=dumb: no escape", rc == 0 and "ok" in out and "\033" not in out, out)
        rc, out = on_pty(["--color", "always", "ping", sock], {"NO_COLOR": "1"})
        check("--color=always wins over NO_COLOR", rc == 0 and "\033[32m" in out, out)

        # a reader that goes away before the document is written
        p = subprocess.Popen([CLI, "--format", "json", "facts", sock], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdout.close()
        err = p.stderr.read().decode()
        rc = p.wait(60)
        check("closed pipe: no complaint, the run's own status", rc == 0 and err == "",
              "rc %d stderr %r" % (rc, err))
    finally:
        stop(procs)
        subprocess.run(["rm", "-rf", tmp])
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
