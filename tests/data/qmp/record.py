#!/usr/bin/env python3
# Records real QMP replies from a paused TCG QEMU into one file per command,
# the fixtures that tests/unit/cli/test-qmp.c and test-host-rules.c replay.
# usage: record.py OUTDIR [MEMORY]   (e.g. record.py tcg-4drives 256M)
import json, os, socket, subprocess, sys, tempfile, time

outdir = sys.argv[1]
memory = sys.argv[2] if len(sys.argv) > 2 else "256M"
half = {"256M": "128M", "16G": "8G"}[memory]
tmp = tempfile.mkdtemp()
sock = os.path.join(tmp, "qmp.sock")
args = ["qemu-system-x86_64", "-machine", "pc", "-accel", "tcg", "-S", "-nodefaults",
        "-display", "none", "-qmp", "unix:%s,server=on,wait=off" % sock, "-smp", "2",
        "-m", memory, "-cpu", "qemu64",
        "-object", "memory-backend-ram,id=m0,size=" + half,
        "-object", "memory-backend-file,id=m1,size=%s,mem-path=%s,share=on" % (half, tmp),
        "-numa", "node,nodeid=0,cpus=0,memdev=m0", "-numa", "node,nodeid=1,cpus=1,memdev=m1"]
for i, cache in enumerate(["none", "writeback", "unsafe", "directsync"]):
    img = os.path.join(tmp, cache + ".img")
    subprocess.run(["qemu-img", "create", "-q", "-f", "raw", img, "1M"], check=True)
    args += ["-drive", "file=%s,format=raw,if=none,id=d%d,cache=%s" % (img, i, cache),
             "-device", "virtio-blk-pci,drive=d%d" % i]
qemu = subprocess.Popen(args)
try:
    for _ in range(100):
        if os.path.exists(sock):
            break
        time.sleep(0.1)
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    f = s.makefile("rw")
    os.makedirs(outdir, exist_ok=True)

    def save(name, line):
        with open(os.path.join(outdir, name + ".json"), "w") as out:
            out.write(line.replace(tmp, "/var/lib/guestbench-rec"))

    save("greeting", f.readline())

    def call(name, cmd, arguments=None):
        msg = {"execute": cmd, "id": 1}
        if arguments:
            msg["arguments"] = arguments
        f.write(json.dumps(msg) + "\n")
        f.flush()
        while True:
            line = f.readline()
            if "event" not in json.loads(line):
                save(name, line)
                return json.loads(line)

    call("qmp_capabilities", "qmp_capabilities")
    for cmd in ["query-block", "query-cpus-fast", "query-memdev", "query-kvm",
                "query-memory-size-summary"]:
        call(cmd, cmd)
    for m in ["m0", "m1"]:
        call("qom-get-%s-type" % m, "qom-get", {"path": "/objects/" + m, "property": "type"})
    call("qom-get-m1-mem-path", "qom-get", {"path": "/objects/m1", "property": "mem-path"})
    call("query-cpu-model-expansion-max", "query-cpu-model-expansion",
         {"type": "full", "model": {"name": "max"}})
    call("query-cpu-model-expansion-qemu64", "query-cpu-model-expansion",
         {"type": "full", "model": {"name": "qemu64"}})
    call("no-such-command", "no-such-command")
finally:
    qemu.kill()
    qemu.wait()
    for name in os.listdir(tmp):
        os.unlink(os.path.join(tmp, name))
    os.rmdir(tmp)
