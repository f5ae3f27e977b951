# SPDX-License-Identifier: GPL-2.0-or-later
"""The Prometheus text exposition format, as the --hosts tests check it without
promtool (which checks it too where it is installed)."""
import re

PROM_SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*'
                         r'(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})?'
                         r' (-?[0-9.e+-]+|NaN|[+-]Inf)$')


def prom_valid(text):
    """Each line HELP, TYPE or a sample; each family declared once, before its samples."""
    declared = []
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            name = line.split()[2]
            if name in declared and declared[-1] != name:
                return False
            if name not in declared:
                declared.append(name)
            continue
        if not PROM_SAMPLE.match(line) or not declared:
            return False
        if line.split("{")[0].split(" ")[0] != declared[-1]:
            return False
    return bool(declared)
