#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Keeps host-cli's layers pointing one way (HACKING.md, "host-cli layout").

Reads the #include "..." lines of every file under host-cli/ and fails on
 - an include of a folder the including folder may not use (LAYERS below),
 - an include loop between modules (foo.c and foo.h are one module),
 - an include that names no file of the tree (a stale path).
Prints TAP, one result per check.
Usage: check-layers.py HOST_CLI_DIR
"""
import os
import re
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


def main():
    if len(sys.argv) != 2:
        print("usage: check-layers.py HOST_CLI_DIR", file=sys.stderr)
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
