#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Where -o writes, with the real CLI against a real agent: a new file, a
regular file replaced atomically, a symlink written through, a FIFO with a
reader, a character device node (root only: a /dev/null node made in the test's
own directory, never /dev/null itself), '-' for standard output, a pipe from
bash's >(...), and paths that cannot be written, refused before any guest is
contacted. Prints TAP."""
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, skip, start_agents, stop, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]


def run(args, cwd=None, timeout=60):
    return subprocess.run([CLI] + args, capture_output=True, text=True, timeout=timeout, cwd=cwd)


def is_ping_doc(text):
    try:
        doc = json.loads(text)
    except ValueError:
        return False
    return doc.get("command") == "ping" and doc["guests"][0]["status"] == "ok"


def main():
    tmp = tempfile.mkdtemp(prefix="gb-output-")
    procs, socks = start_agents(tmp, ["vm"])
    sock = socks[0]
    try:
        # a new file, then the same path replaced: a new inode, never half a file
        path = os.path.join(tmp, "new.json")
        r = run(["--format", "json", "-o", path, "ping", sock])
        check("new file: written", r.returncode == 0 and is_ping_doc(open(path).read()),
              r.stderr)
        before = os.stat(path).st_ino
        r = run(["--format", "json", "-o", path, "ping", sock])
        check("regular file: replaced by rename", r.returncode == 0 and
              os.stat(path).st_ino != before and is_ping_doc(open(path).read()), r.stderr)

        # a symlink: the file it points to is replaced, the link stays a link
        target = os.path.join(tmp, "target.json")
        with open(target, "w") as f:
            f.write("old")
        link = os.path.join(tmp, "link.json")
        os.symlink(target, link)
        r = run(["--format", "json", "-o", link, "ping", sock])
        check("symlink: written through", r.returncode == 0 and os.path.islink(link) and
              is_ping_doc(open(target).read()), r.stderr)
        dangling = os.path.join(tmp, "dangling.json")
        made = os.path.join(tmp, "made-through-link.json")
        os.symlink(made, dangling)
        r = run(["--format", "json", "-o", dangling, "ping", sock])
        check("dangling symlink: its target is created", r.returncode == 0 and
              os.path.islink(dangling) and is_ping_doc(open(made).read()), r.stderr)

        # a FIFO: its reader gets the document, and it is still a FIFO afterwards
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)
        got = {}

        def reader():
            with open(fifo) as f:
                got["text"] = f.read()

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        r = run(["--format", "json", "-o", fifo, "ping", sock])
        t.join(30)
        check("FIFO: the reader gets the document", r.returncode == 0 and
              is_ping_doc(got.get("text", "")), r.stderr)
        check("FIFO: still a FIFO", stat.S_ISFIFO(os.lstat(fifo).st_mode))

        # a character device node: written in place, never replaced by a file
        if os.geteuid() == 0:
            node = os.path.join(tmp, "null")
            os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            r = run(["-o", node, "ping", sock])
            st = os.lstat(node)
            check("character device: written, still a device", r.returncode == 0 and
                  stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3), r.stderr)
        else:
            skip("character device: written, still a device", "needs root for mknod")

        # '-' is standard output: nothing named '-' appears
        r = run(["--format", "json", "-o", "-", "ping", sock], cwd=tmp)
        check("'-': standard output", r.returncode == 0 and is_ping_doc(r.stdout) and
              not os.path.exists(os.path.join(tmp, "-")), r.stderr)

        # bash's >(cmd) is /dev/fd/N, a pipe
        out = os.path.join(tmp, "from-pipe.json")
        script = '"$1" --format json -o >(cat > "$2") ping "$3"; rc=$?; wait; exit $rc'
        r = subprocess.run(["bash", "-c", script, "bash", CLI, out, sock], capture_output=True,
                           text=True, timeout=60)
        check("process substitution: written to the pipe", r.returncode == 0 and
              os.path.exists(out) and is_ping_doc(open(out).read()), r.stderr)

        # unwritable: refused (rc 2) before any guest is contacted
        with socket.socket(socket.AF_UNIX) as listener:
            quiet = os.path.join(tmp, "nobody-answers.sock")
            listener.bind(quiet)
            listener.listen(8)
            for name, bad in [("under /proc", "/proc/gb-no-such-dir/out.json"),
                              ("a directory", tmp),
                              ("missing directory", os.path.join(tmp, "nope", "out.json")),
                              ("/proc entry", "/proc/version")]:
                r = run(["--timeout", "30", "-o", bad, "bench", "aes", "--seconds", "3", quiet])
                listener.setblocking(False)
                try:
                    conn, _ = listener.accept()
                    conn.close()
                    contacted = True
                except BlockingIOError:
                    contacted = False
                check("unwritable -o %s: rc 2, no guest contacted" % name,
                      r.returncode == 2 and not contacted and "--output" in r.stderr,
                      "rc %d contacted %s: %s" % (r.returncode, contacted, r.stderr))
    finally:
        stop(procs)
        subprocess.run(["rm", "-rf", tmp])
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
