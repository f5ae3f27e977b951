#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Keeps host-cli's layers pointing one way (HACKING.md, "host-cli layout").

Reads the #include "..." lines of every file under host-cli/ and fails on
 - an include of a folder the including folder may not use (LAYERS below),
 - an include loop between modules (foo.c and foo.h are one module),
 - an include that names no file of the tree (a stale path).
Given the CLI's static library (meson passes libguestbench-cli-core.a), it
also reads the library's symbols with `nm -A` (the program named by $NM, if
set) and fails on
 - a symbol one file uses and a file of a folder it may not use defines
   (an upward call or reference, which an include check cannot see when a
   lower header declares what a higher file defines).
Each member of the library is one object, FOLDER_FILE.c.o (meson's name for
host-cli/FOLDER/FILE.c). Prints TAP, one result per check.
Usage: check-layers.py HOST_CLI_DIR [STATIC_LIBRARY]
"""
import os
import re
import subprocess
import sys

# Which folders each folder may include (itself always).
LAYERS = {
    "transport": set(),
    "analysis": set(),
    "render": {"analysis"},
    "fleet": {"render", "transport", "analysis"},
    "commands": {"render", "transport", "analysis", "fleet"},
    ".": {"render", "transport", "analysis", "fleet", "commands"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
MEMBER = re.compile(r"([^/:]+\.c)\.o:")


def scan(top):
    files = {}
    for dirpath, _, names in os.walk(top):
        for name in names:
            if name.endswith((".c", ".h")):
                path = os.path.relpath(os.path.join(dirpath, name), top)
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    files[path] = INCLUDE.findall(f.read())
    return files


def folder(path):
    d = os.path.dirname(path)
    return d if d else "."


def module(path):
    return os.path.splitext(path)[0]


def find_cycle(graph):
    """One cycle as a list of modules, or None (iterative DFS, white/grey/black)."""
    state = {}
    for start in sorted(graph):
        if start in state:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        state[start] = 1
        path = [start]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(sorted(graph.get(nxt, ())))))
                path.append(nxt)
    return None


def read_symbols(lib, files):
    """{symbol: defining file} and {file: set of symbols it uses}, from nm -A."""
    nm = os.environ.get("NM", "nm")
    out = subprocess.run([nm, "-A", lib], capture_output=True, text=True, check=True).stdout
    defined, used = {}, {}
    for line in out.splitlines():
        # ARCHIVE:[DIR/]MEMBER.c.o:[VALUE] TYPE SYMBOL
        fields = line.split()
        m = MEMBER.search(fields[0]) if len(fields) >= 3 else None
        if not m:
            continue
        base = m.group(1)
        path = base.replace("_", "/", 1) if "_" in base else base
        if path not in files:
            raise SystemExit(f"check-layers: {lib}: member {base}.o is no file of host-cli/")
        kind, symbol = fields[-2], fields[-1]
        if kind == "U":
            used.setdefault(path, set()).add(symbol)
        elif kind.isupper():
            defined[symbol] = path
    if not defined:
        raise SystemExit(f"check-layers: {nm} -A {lib} listed no symbol of host-cli/")
    return defined, used


def main():
    if len(sys.argv) not in (2, 3):
        print("usage: check-layers.py HOST_CLI_DIR [STATIC_LIBRARY]", file=sys.stderr)
        return 2
    top = sys.argv[1]
    files = scan(top)
    if not files:
        print(f"check-layers: no C files under {top}", file=sys.stderr)
        return 2
    results = []

    wrong = []
    stale = []
    graph = {}
    for path, includes in sorted(files.items()):
        graph.setdefault(module(path), set())
        for inc in includes:
            if inc not in files:
                # the protocol library's headers and config.h live elsewhere
                if "/" in inc:
                    stale.append(f"{path}: #include \"{inc}\" is not a file of host-cli/")
                continue
            src, dst = folder(path), folder(inc)
            if src not in LAYERS:
                wrong.append(f"{path}: folder {src} is not in the layer table")
            elif dst != src and dst not in LAYERS[src]:
                wrong.append(f"{path}: {src} -> {dst} (#include \"{inc}\")")
            if module(inc) != module(path):
                graph[module(path)].add(module(inc))
    results.append(("every include points down the layers", wrong))
    results.append(("every include names a file of host-cli/", stale))
    cycle = find_cycle(graph)
    results.append(("no include loop between modules",
                    [" -> ".join(cycle)] if cycle else []))

    if len(sys.argv) == 3:
        defined, used = read_symbols(sys.argv[2], files)
        upward = []
        for path, symbols in sorted(used.items()):
            src = folder(path)
            for symbol in sorted(symbols):
                where = defined.get(symbol)
                if where is None:
                    continue  # GLib, libc, the protocol library
                dst = folder(where)
                if dst != src and dst not in LAYERS.get(src, ()):
                    upward.append(f"{path} ({src}) uses {symbol}, defined in {where} ({dst})")
        results.append(("no symbol used up the layers (nm)", upward))

    print(f"1..{len(results)}")
    failed = 0
    for i, (name, problems) in enumerate(results, 1):
        if problems:
            failed += 1
            print(f"not ok {i} - {name}")
            for p in problems:
                print(f"# {p}")
        else:
            print(f"ok {i} - {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
