#!/usr/bin/env python3
"""The demo: boots a small fleet of real guests under QEMU (TCG) and shows what
guestbench sees in each, then runs field report 1 (AES-GCM, qemu64 vs -cpu max)
across them. Everything printed comes from the real agent in real guests.

Usage: demo.py BUILD_DIR
"""
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import fleet  # noqa: E402

build = os.path.abspath(sys.argv[1])
agent = os.path.join(build, "agent", "guestbench-agent")
cli = os.path.join(build, "host-cli", "guestbench")
work = os.path.join(build, "demo")
image = os.path.join(work, "image")


def say(text):
    print("\n\033[1m== %s\033[0m\n" % text if sys.stdout.isatty() else "\n== %s\n" % text,
          flush=True)


def run(*args):
    print("$ guestbench " + " ".join(args).replace(work + "/run/", ""), flush=True)
    return subprocess.run([cli] + list(args)).returncode


say("Building a guest image from Debian packages (cloud kernel + busybox + the agent)")
subprocess.run([os.path.join(here, "build-guest.sh"), os.path.join(work, "cache"), image, agent,
                "/usr/sbin/qemu-ga", "/usr/bin/openssl"], check=True)

say("Booting the fleet: 'legacy' (-cpu qemu64, IDE disk, vmxnet3), "
    "'tuned' (-cpu max, virtio-blk cache=none, virtio-net), "
    "'numa' (two NUMA nodes, one without memory, hugepages)")
with fleet.Fleet(os.path.join(work, "run"), image, ["legacy", "tuned", "numa"]) as fl:
    socks = [g.sock for g in fl.guests]
    say("Are the agents answering? (over each guest's virtio-serial port)")
    run("--timeout", "60", "ping", *socks)
    say("What does each guest see?")
    run("--timeout", "60", "facts", *socks)
    say("What is wrong with each guest, and how to fix it (WARN and FAIL only)")
    run("--timeout", "60", "-q", "audit", *socks)
    say("Field report 1: AES-128-GCM in each guest, like openssl speed -elapsed -evp aes-128-gcm")
    doc = os.path.join(work, "aes.json")
    rc = run("--timeout", "120", "-o", doc, "--format", "json", "bench", "aes", "--seconds", "1",
             "--no-save", *socks[:2])
    if rc == 0:
        run("--format", "table", "compare", "--by", "guest", doc)
say("Done: the fleet is shut down.")
