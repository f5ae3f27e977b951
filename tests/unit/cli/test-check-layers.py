#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Shows that check-layers.py can fail: runs it over tiny trees, one
deliberate fault each, and expects exit status 1 with the line that names the
fault; a clean tree must pass. The symbol check reads `nm -A` output that
the test writes itself (NM is a script that prints it), as from a library whose objects
are meson's FOLDER_FILE.c.o. Prints TAP.
Usage: test-check-layers.py CHECK_LAYERS_PY
"""
import os
import subprocess
import sys
import tempfile

CLEAN = {
    "transport/stream.h": "",
    "analysis/units.h": "",
    "render/table.h": '#include "analysis/units.h"\n',
    "fleet/app.h": '#include "render/table.h"\n#include "transport/stream.h"\n',
    "commands/app.c": '#include "fleet/app.h"\n#include "config.h"\n',
}

# nm -A of the clean tree's library: commands/app.c uses fleet's cli_runner_run.
NM_CLEAN = """lib.a:fleet_runner.c.o:0000000000000000 T cli_runner_run
lib.a:commands_app.c.o:0000000000000000 T cli_app_run
lib.a:commands_app.c.o:                 U cli_runner_run
lib.a:commands_app.c.o:                 U g_free
"""
# fleet/runner.c calls commands/app.c's cli_app_run: an upward call that no
# include shows (the declaration sits in a fleet header).
NM_UPWARD = NM_CLEAN + "lib.a:fleet_runner.c.o:                 U cli_app_run\n"

# name -> (files added to CLEAN, text the failure must print)
CASES = {
    "an upward call (nm)": (
        {"fleet/runner.c": "", "nm.txt": NM_UPWARD},
        "fleet/runner.c (fleet) uses cli_app_run, defined in commands/app.c (commands)",
    ),
    "an upward include": (
        {"fleet/runner.c": '#include "commands/app.h"\n', "commands/app.h": ""},
        'fleet/runner.c: fleet -> commands (#include "commands/app.h")',
    ),
    "an include loop": (
        {"render/a.h": '#include "render/b.h"\n', "render/b.h": '#include "render/a.h"\n'},
        "# render/a -> render/b -> render/a",
    ),
    "a stale include": (
        {"render/csv.c": '#include "render/gone.h"\n'},
        'render/csv.c: #include "render/gone.h" is not a file of host-cli/',
    ),
    "a folder outside the layer table": (
        {"extra/x.c": '#include "fleet/app.h"\n'},
        "extra/x.c: folder extra is not in the layer table",
    ),
}


def run(checker, files):
    with tempfile.TemporaryDirectory() as top:
        for path, text in files.items():
            os.makedirs(os.path.join(top, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(top, path), "w", encoding="utf-8") as f:
                f.write(text)
        with open(os.path.join(top, "nm"), "w", encoding="utf-8") as f:
            f.write('#!/bin/sh\nexec cat "$2"\n')  # nm -A LIB, answered from LIB
        os.chmod(os.path.join(top, "nm"), 0o755)
        args = [sys.executable, checker, top]
        if "nm.txt" in files:
            args.append(os.path.join(top, "nm.txt"))
        p = subprocess.run(args, capture_output=True, text=True, check=False,
                           env={**os.environ, "NM": os.path.join(top, "nm")})
        return p.returncode, p.stdout + p.stderr


def main():
    checker = sys.argv[1]
    print(f"1..{1 + len(CASES)}")
    failed = 0
    rc, out = run(checker, {**CLEAN, "fleet/runner.c": "", "nm.txt": NM_CLEAN})
    if rc == 0:
        print("ok 1 - a clean tree passes")
    else:
        failed += 1
        print(f"not ok 1 - a clean tree passes (exit {rc})")
        print("".join(f"# {line}\n" for line in out.splitlines()), end="")
    for i, (name, (extra, expected)) in enumerate(CASES.items(), 2):
        rc, out = run(checker, {**CLEAN, **extra})
        if rc == 1 and expected in out:
            print(f"ok {i} - {name} fails")
        else:
            failed += 1
            print(f"not ok {i} - {name} fails (exit {rc}, expected 1 and: {expected})")
            print("".join(f"# {line}\n" for line in out.splitlines()), end="")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
