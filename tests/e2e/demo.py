#!/usr/bin/env python3
"""The demo: boots a small fleet of real guests under QEMU (TCG) and shows what
guestbench sees in each, then runs field report 1 (AES-GCM, qemu64 vs -cpu max)
across them. Everything printed comes from the real agent in real guests.

Usage: demo.py BUILD_DIR
"""
import os
import subprocess
import sys

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


env = dict(os.environ, XDG_DATA_HOME=os.path.join(work, "data"))


def run(*args):
    print("$ guestbench " + " ".join(args).replace(work + "/", ""), flush=True)
    return subprocess.run([cli] + list(args), env=env).returncode


say("Building a guest image from Debian packages (cloud kernel + busybox + the agent)")
subprocess.run([os.path.join(here, "build-guest.sh"), os.path.join(work, "cache"), image, agent,
                "/usr/sbin/qemu-ga", "/usr/bin/openssl"], check=True)

say("Booting the fleet: 'legacy' (-cpu qemu64, IDE disk, vmxnet3), "
    "'tuned' (-cpu max, virtio-blk cache=none, virtio-net), "
    "'numa' (two NUMA nodes, one without memory, hugepages)")
with fleet.Fleet(os.path.join(work, "run"), image, ["legacy", "tuned", "numa"]) as fl:
    inventory = os.path.join(work, "fleet.ini")
    with open(inventory, "w") as f:
        for g in fl.guests:
            f.write("[guest %s]\ntarget=unix:%s\ntags=demo\n\n" % (g.name, g.sock))
    inv = ["--inventory", inventory, "--timeout", "120"]
    say("Are the agents answering? (over each guest's virtio-serial port)")
    run(*inv, "ping")
    say("What does each guest see?")
    run(*inv, "facts")
    say("What is wrong with each guest, and how to fix it")
    run(*inv, "audit")
    say("Field report 1: AES-128-GCM in each guest, like openssl speed -elapsed -evp aes-128-gcm")
    results = os.path.join(work, "data", "guestbench", "results")
    before = set(os.listdir(results)) if os.path.isdir(results) else set()
    # -j 1: one guest at a time, so the two do not share the host's CPUs
    rc = run(*inv, "-j", "1", "--name", "legacy", "--name", "tuned", "bench", "aes", "--seconds", "1")
    new = sorted(set(os.listdir(results)) - before) if os.path.isdir(results) else []
    if rc == 0 and new:
        say("The same run side by side: how much faster is -cpu max than qemu64?")
        run("compare", "--by", "guest", os.path.join(results, new[-1]))
say("Done: the fleet is shut down.")
