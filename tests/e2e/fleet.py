#!/usr/bin/env python3
"""Boots the contrasting end-to-end guests under QEMU and tears them down.

The tests run them under TCG, which needs nothing from the host; bench/
fidelity-guest can ask for KVM instead (accel="kvm").

Each guest gets its own directory with the host end of its virtio-serial port
(agent.sock), its serial console log, and a scratch disk image found inside
the guest by its label. Guests run in their own process group so that they are
always killed, also when the caller fails.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import time

# Guests in the configurations of the field reports the tool answers (README.md),
# plus one with its disk on virtio-scsi on a named CPU model (SandyBridge: x86-64-v2,
# and under TCG without the ssbd and md-clear its guest kernel asks for).
GUESTS = {
    "legacy": {
        "machine": "pc", "cpu": "qemu64", "smp": 1, "mem": 512,
        "disk": "-drive file={img},if=ide,format=raw,cache=writethrough",
        "nic": "-netdev user,id=n0,restrict=on{fwd} -device vmxnet3,netdev=n0",
    },
    "tuned": {
        "machine": "pc", "cpu": "max", "smp": 2, "mem": 512,
        "disk": "-drive file={img},if=virtio,format=raw,cache=none",
        "nic": "-netdev user,id=n0,restrict=on{fwd} -device virtio-net-pci,netdev=n0",
    },
    "numa": {
        "machine": "pc", "cpu": "max", "smp": 2, "mem": 768,
        "extra": "-object memory-backend-ram,id=m0,size=768M "
                 "-numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1",
        "append": "hugepages=32",
        "disk": "-drive file={img},if=virtio,format=raw,cache=none",
        "nic": "-netdev user,id=n0,restrict=on{fwd} -device virtio-net-pci,netdev=n0",
    },
    "scsi": {
        "machine": "pc", "cpu": "SandyBridge", "smp": 1, "mem": 512,
        "disk": "-device virtio-scsi-pci,id=s0 "
                "-drive file={img},if=none,id=d0,format=raw,cache=directsync "
                "-device scsi-hd,drive=d0,bus=s0.0",
        "nic": "-netdev user,id=n0,restrict=on{fwd} -device virtio-net-pci,netdev=n0",
    },
    # aarch64 under TCG (-M virt, the arm64 image of build_image(arch="arm64")):
    # two CPU models with different features (max: sve, atomics; cortex-a57 not).
    "arm-max": {
        "arch": "arm64", "machine": "virt", "cpu": "max", "smp": 1, "mem": 512,
        "disk": "-drive file={img},if=virtio,format=raw,cache=none",
        "nic": "-netdev user,id=n0,restrict=on{fwd} -device virtio-net-pci,netdev=n0",
    },
    "arm-a57": {
        "arch": "arm64", "machine": "virt", "cpu": "cortex-a57", "smp": 1, "mem": 512,
        "disk": "-drive file={img},if=virtio,format=raw,cache=none",
        "nic": "-netdev user,id=n0,restrict=on{fwd} -device virtio-net-pci,netdev=n0",
    },
}

# Per architecture: the QEMU binary and the console the kernel writes to.
ARCHES = {
    "amd64": {"qemu": "qemu-system-x86_64", "console": "ttyS0"},
    "arm64": {"qemu": "qemu-system-aarch64", "console": "ttyAMA0"},
}


def build_image(work, binaries, arch="amd64"):
    """Builds (or reuses) the guest's kernel and initramfs in WORK/image (amd64) or
    WORK/image-ARCH with the given binaries in it (paths, or deb:PACKAGE:PATH, see
    build-guest.sh); the packages are cached in WORK/cache."""
    image = os.path.join(work, "image" if arch == "amd64" else "image-" + arch)
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([os.path.join(here, "build-guest.sh"), "--arch", arch,
                    os.path.join(work, "cache"), image] + list(binaries), check=True)
    return image


def free_port():
    """A TCP port of 127.0.0.1 that nothing listens on now (for a guest's hostfwd)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def make_scratch(img, mb):
    """An ext4 image of MB MiB labelled gbscratch: guest-init mounts it as the
    agent's scratch directory."""
    with open(img, "wb") as f:
        f.truncate(mb << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "gbscratch", img], check=True)


class Guest:
    def __init__(self, name, workdir, image_dir, config, run="agent", hostfwd=None,
                 scratch_mb=160, append="", accel="tcg"):
        self.name = name
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.sock = os.path.join(self.dir, "agent.sock")
        self.qga_sock = os.path.join(self.dir, "qga.sock")
        self.qmp_sock = os.path.join(self.dir, "qmp.sock")
        self.log = os.path.join(self.dir, "console.log")
        self.image_dir = image_dir
        self.config = config
        self.run = run
        self.hostfwd = hostfwd
        self.scratch_mb = scratch_mb
        self.append = append  # kernel parameters on top of the configuration's
        self.accel = accel  # "tcg" or "kvm"
        self.proc = None

    def command(self):
        c = self.config
        img = os.path.join(self.dir, "scratch.img")
        make_scratch(img, self.scratch_mb)
        fwd = ""
        if self.hostfwd:
            # Loopback only: the host side binds 127.0.0.1.
            fwd = ",hostfwd=tcp:127.0.0.1:%d-:%d" % self.hostfwd
        arch = ARCHES[c.get("arch", "amd64")]
        append = "console=%s quiet panic=-1 gb.run=%s %s %s" % (
            arch["console"], self.run, c.get("append", ""), self.append)
        args = [
            arch["qemu"], "-machine", c["machine"], "-accel", self.accel,
            "-cpu", c["cpu"], "-smp", str(c["smp"]), "-m", str(c["mem"]),
            "-nographic", "-no-reboot", "-nodefaults", "-serial", "file:" + self.log,
            "-kernel", os.path.join(self.image_dir, "vmlinuz"),
            "-initrd", os.path.join(self.image_dir, "initrd.img"),
            "-append", append.strip(),
            "-qmp", "unix:%s,server=on,wait=off" % self.qmp_sock,
            "-device", "virtio-serial-pci,id=vs0",
        ]
        if self.run in ("agent", "both"):
            args += ["-chardev", "socket,id=c0,path=%s,server=on,wait=off" % self.sock,
                     "-device", "virtserialport,bus=vs0.0,chardev=c0,name=org.guestbench.agent.0"]
        if self.run in ("qga", "both"):
            args += ["-chardev", "socket,id=c1,path=%s,server=on,wait=off" % self.qga_sock,
                     "-device", "virtserialport,bus=vs0.0,chardev=c1,name=org.qemu.guest_agent.0"]
        args += c.get("extra", "").split()
        args += c["disk"].format(img=img).split()
        args += c["nic"].format(fwd=fwd).split()
        return args

    def start(self):
        # a console log or socket left by an earlier run would be taken for this
        # guest's before QEMU replaces it
        for path in (self.log, self.sock, self.qga_sock, self.qmp_sock):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL,
                                     stdout=open(os.path.join(self.dir, "qemu.out"), "w"),
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def wait_console(self, text, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s: QEMU exited (%s): %s" % (
                    self.name, self.proc.returncode, self.tail()))
            try:
                with open(self.log, errors="replace") as f:
                    if text in f.read():
                        return
            except FileNotFoundError:
                pass
            time.sleep(0.2)
        raise RuntimeError("%s: '%s' not seen on the console within %ds: %s" % (
            self.name, text, timeout, self.tail()))

    def cpuinfo(self):
        """The guest's /proc/cpuinfo as guest-init printed it on the console: one
        {field: value} per processor."""
        with open(self.log, errors="replace") as f:
            text = f.read()
        begin, end = "gb-init: cpuinfo begin\n", "gb-init: cpuinfo end"
        if begin not in text or end not in text:
            raise RuntimeError("%s: no cpuinfo on the console: %s" % (self.name, self.tail()))
        body = text.split(begin, 1)[1].split(end, 1)[0].replace("\r", "")
        cpus = []
        for block in body.split("\n\n"):
            fields = dict((k.strip(), v.strip()) for k, _, v in
                          (line.partition(":") for line in block.splitlines() if ":" in line))
            if fields:
                cpus.append(fields)
        return cpus

    def page_size(self):
        """The kernel's base page size in bytes, from the KernelPageSize that
        guest-init printed on the console; None when it is not there."""
        with open(self.log, errors="replace") as f:
            m = re.search(r"gb-init: page size KernelPageSize:\s*([0-9]+) kB", f.read())
        return int(m.group(1)) * 1024 if m else None

    def tail(self, n=2000):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()[-n:]
        except FileNotFoundError:
            return "(no console output)"

    def stop(self):
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()


class Fleet:
    def __init__(self, workdir, image_dir, names, **kw):
        self.guests = [Guest(n, workdir, image_dir, GUESTS[n], **kw.get(n, {})) for n in names]

    def __enter__(self):
        try:
            for g in self.guests:
                g.start()
            for g in self.guests:
                g.wait_console("gb-init: starting")
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        for g in self.guests:
            g.stop()
