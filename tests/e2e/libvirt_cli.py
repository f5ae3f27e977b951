"""guestbench against the real libvirt of test-libvirt.py's lab: libvirt:DOMAIN
through the API (the bound channel, a libvirt-chosen one, qemu-ga only, shut
off, an odd name), --connect, discover, inventories with connect= and
[hypervisor NAME], a remote hypervisor over qemu+ssh from a process that
cannot see its files, a non-root libvirt-group user, bad input; and at the
end libvirt's own agent link still works."""
import json
import os
import subprocess
import sys
import tempfile
import time

from gbtest import check, skip

CLI = os.environ.get("GB_CLI", "")


def cli(args, lab=None, hidden=False, user=None, env=None, timeout=180):
    """Runs the CLI; returns (rc, stdout, stderr)."""
    argv = [CLI] + list(args)
    full_env = dict(os.environ)
    full_env.pop("LIBVIRT_DEFAULT_URI", None)
    if env:
        full_env.update(env)
    if hidden:
        p = lab.run_hidden(argv, env=full_env, timeout=timeout)
    elif user is not None:
        p = lab.user.run(argv, env=env, timeout=timeout)
    else:
        p = subprocess.run(argv, capture_output=True, text=True, env=full_env,
                           stdin=subprocess.DEVNULL, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def cli_json(args, **kw):
    rc, out, err = cli(list(args) + ["--format", "json"], **kw)
    try:
        doc = json.loads(out)
    except ValueError:
        doc = None
    return rc, doc, err


def guests(doc):
    return {g["name"]: g for g in (doc or {}).get("guests", [])}


def cases(lab):
    """Called with the lab up; checks through gbtest.check()."""


def restart_during_run(lab):
    """libvirtd restarted while a fleet run is under way."""
