#!/usr/bin/env python3
"""A Proxmox VE node laid out for real, at PVE's own paths: /etc/pve (configs
in PVE's format, a custom CPU model, .members with two nodes) and
/var/run/qemu-server (the sockets and pidfiles), with real TCG guests started
with the QEMU command line PVE's qemu-server generates for those configs
(kvm: 0, PVE 8's -drive form; tap networking replaced by a restricted user
netdev, the e2e guest booted through args: -kernel, as root may do in PVE):

  100 web     no cpu: line (PVE's kvm64), our port via args:, agent: 1, scsi0 on
              virtio-scsi-pci with cache=writeback, net0 virtio queues=2
  101 db      cpu: max, only qemu-ga (agent: 1), virtio0 with iothread, net0 e1000
  102 off     custom-aesclmul, never started
  103 aes     cpu: x86-64-v2-AES (aes without pclmulqdq), our port and qemu-ga
  104 broken  a binary config: its own error, the others served

Refuses to run (skips) when /etc/pve or /var/run/qemu-server already exist,
and removes everything it made. Also measures AES-GCM at 16 KiB in the kvm64,
x86-64-v2-AES and max guests, each against openssl speed in the same guest
(BENCHMARKS.md). Prints TAP.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fleet  # noqa: E402
from gbclient import guest_exec  # noqa: E402
from gbtest import check, skip, tap_report  # noqa: E402

AGENT = os.environ["GB_AGENT"]
CLI = os.environ["GB_CLI"]
QEMU_GA = os.environ.get("GB_QEMU_GA", "/usr/sbin/qemu-ga")
WORK = os.environ.get("GB_E2E_DIR") or tempfile.mkdtemp(prefix="gb-e2e-")
ETC = "/etc/pve"
RUN = "/var/run/qemu-server"
NODE = "pve-e2e"
GUEST_AGENT = "/usr/bin/guestbench-agent"

VMS = {
    100: {"name": "web", "cpu": None, "run": "both", "port": True, "agent": True,
          "disk": ("scsi0", "virtio-scsi-pci", "cache=writeback"),
          "net": ("virtio", "queues=2")},
    101: {"name": "db", "cpu": "max", "run": "qga", "port": False, "agent": True,
          "disk": ("virtio0", None, "iothread=1"), "net": ("e1000", "")},
    103: {"name": "aes", "cpu": "x86-64-v2-AES", "run": "both", "port": True, "agent": True,
          "disk": ("scsi0", "virtio-scsi-single", "iothread=1"), "net": ("virtio", "")},
}
MAC = "BC:24:11:00:%02X:01"


def port_args(vmid):
    return ("-chardev socket,id=guestbench,path=%s/%d.guestbench,server=on,wait=off "
            "-device virtio-serial,id=guestbench0 -device virtserialport,chardev=guestbench,"
            "name=org.guestbench.agent.0,bus=guestbench0.0" % (RUN, vmid))


def boot_args(vmid, vm, image):
    """What root puts in args: to boot the e2e guest's kernel directly."""
    return ("-kernel %s/vmlinuz -initrd %s/initrd.img -append 'console=ttyS0 quiet panic=-1 "
            "gb.run=%s' -serial file:%s/pve-%d.console" % (image, image, vm["run"], WORK, vmid))


def config(vmid, vm, image):
    key, scsihw, opts = vm["disk"]
    model, nopts = vm["net"]
    lines = ["boot: order=%s" % key, "cores: 1", "kvm: 0", "memory: 512", "name: " + vm["name"],
             "ostype: l26", "sockets: 1"]
    if vm["agent"]:
        lines.append("agent: 1")
    if vm["cpu"]:
        lines.append("cpu: " + vm["cpu"])
    if scsihw:
        lines.append("scsihw: " + scsihw)
    lines.append("%s: local:%d/vm-%d-disk-0.raw,%s,size=160M" % (key, vmid, vmid, opts))
    lines.append("net0: %s=%s,bridge=vmbr0%s" % (model, MAC % (vmid - 100),
                                                 "," + nopts if nopts else ""))
    args = boot_args(vmid, vm, image)
    if vm["port"]:
        args += " " + port_args(vmid)
    lines.append("args: " + args)
    text = "\n".join(sorted(lines)) + "\n"
    # a snapshot section: only what comes before it is the running config
    return text + "\n[before-tuning]\ncpu: host\nname: %s-old\nsnaptime: 1700000000\n" % vm["name"]


def qemu_argv(vmid, vm, image, img):
    """The argv qemu-server's config_to_command() gives for config() with kvm: 0 (PVE 8,
    -drive); only the tap netdev is a restricted user netdev here."""
    cpu = {None: "kvm64,+lahf_lm,+sep", "max": "max",
           "x86-64-v2-AES": "qemu64,+aes,+pni,+popcnt,+sse4.1,+sse4.2,+ssse3"}[vm["cpu"]]
    # PVE's own QEMU build has -id VMID; Debian's has not, so it is left out
    a = [shutil.which("qemu-system-x86_64"), "-name",
         "%s,debug-threads=on" % vm["name"], "-no-shutdown",
         "-chardev", "socket,id=qmp,path=%s/%d.qmp,server=on,wait=off" % (RUN, vmid),
         "-mon", "chardev=qmp,mode=control",
         "-pidfile", "%s/%d.pid" % (RUN, vmid), "-daemonize",
         "-smp", "1,sockets=1,cores=1,maxcpus=1", "-nodefaults",
         "-boot", "menu=on,strict=on,reboot-timeout=1000",
         "-vnc", "unix:%s/%d.vnc,password=on" % (RUN, vmid),
         "-cpu", cpu, "-m", "512",
         "-device", "pci-bridge,id=pci.1,chassis_nr=1,bus=pci.0,addr=0x1e",
         "-device", "pci-bridge,id=pci.2,chassis_nr=2,bus=pci.0,addr=0x1f",
         "-device", "piix3-usb-uhci,id=uhci,bus=pci.0,addr=0x1.0x2",
         "-device", "usb-tablet,id=tablet,bus=uhci.0,port=1",
         "-device", "VGA,id=vga,bus=pci.0,addr=0x2"]
    if vm["agent"]:
        a += ["-chardev", "socket,path=%s/%d.qga,server=on,wait=off,id=qga0" % (RUN, vmid),
              "-device", "virtio-serial,id=qga0,bus=pci.0,addr=0x8",
              "-device", "virtserialport,chardev=qga0,name=org.qemu.guest_agent.0"]
    a += ["-device", "virtio-balloon-pci,id=balloon0,bus=pci.0,addr=0x3,free-page-reporting=on",
          "-iscsi", "initiator-name=iqn.1993-08.org.debian:01:guestbench"]
    key, scsihw, opts = vm["disk"]
    cache = "writeback" if "cache=writeback" in opts else "none"
    if key.startswith("scsi"):
        if scsihw == "virtio-scsi-single":
            a += ["-object", "iothread,id=iothread-virtioscsi0",
                  "-device", "pci-bridge,id=pci.3,chassis_nr=3,bus=pci.0,addr=0x5",
                  "-device", "virtio-scsi-pci,id=virtioscsi0,bus=pci.3,addr=0x1,"
                  "iothread=iothread-virtioscsi0"]
            bus = "virtioscsi0.0"
        else:
            a += ["-device", "virtio-scsi-pci,id=scsihw0,bus=pci.0,addr=0x5"]
            bus = "scsihw0.0"
        a += ["-drive", "file=%s,if=none,id=drive-scsi0,cache=%s,format=raw,aio=threads,"
              "detect-zeroes=on" % (img, cache),
              "-device", "scsi-hd,bus=%s,channel=0,scsi-id=0,lun=0,drive=drive-scsi0,id=scsi0,"
              "bootindex=100" % bus]
    else:
        a += ["-object", "iothread,id=iothread-virtio0",
              "-drive", "file=%s,if=none,id=drive-virtio0,cache=%s,format=raw,aio=threads,"
              "detect-zeroes=on" % (img, cache),
              "-device", "virtio-blk-pci,drive=drive-virtio0,id=virtio0,bus=pci.0,addr=0xa,"
              "iothread=iothread-virtio0,bootindex=100"]
    model, nopts = vm["net"]
    a += ["-netdev", "user,id=net0,restrict=on"]
    if model == "virtio":
        mq = ",vectors=6,mq=on" if "queues=2" in nopts else ""
        a += ["-device", "virtio-net-pci,mac=%s,netdev=net0,bus=pci.0,addr=0x12,id=net0%s,"
              "rx_queue_size=1024,tx_queue_size=256,bootindex=300" % (MAC % (vmid - 100), mq)]
    else:
        a += ["-device", "e1000,mac=%s,netdev=net0,bus=pci.0,addr=0x12,id=net0,bootindex=300"
              % (MAC % (vmid - 100))]
    a += ["-machine", "type=pc,accel=tcg"]
    # args: comes last, split like PVE splits it
    import shlex
    args = boot_args(vmid, vm, image) + (" " + port_args(vmid) if vm["port"] else "")
    return a + shlex.split(args)


def cli(*args, timeout=300):
    p = subprocess.run([CLI] + list(args), capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def guests(out):
    try:
        return {g["target"]: g for g in json.loads(out)["guests"]}
    except (ValueError, KeyError, TypeError):
        return {}


def findings(doc, target):
    r = doc.get(target, {}).get("result") or {}
    return {(f["rule"], f["subject"]): f for f in r.get("findings", [])}


def show(found):
    return "\n".join("%s %s: %s" % (k, v.get("level"), v.get("hint")) for k, v in found.items())


def kill_vms(made_pids):
    for pid in made_pids:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    end = time.monotonic() + 10
    while any(os.path.exists("/proc/%d" % p) for p in made_pids) and time.monotonic() < end:
        time.sleep(0.1)


def openssl_speed(qga_sock, size=16384):
    code, out = guest_exec(qga_sock, ["/usr/bin/openssl", "speed", "-elapsed", "-seconds", "3",
                                      "-bytes", str(size), "-evp", "aes-128-gcm"], timeout=180)
    m = re.search(r"^(?:AES-128-GCM|aes-128-gcm)\s+([\d.]+)k", out, re.M)
    return float(m.group(1)) * 1000 if code == 0 and m else None


class Holder:
    """A second client holding a socket, as PVE's backup holds VMID.qga."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.s.settimeout(5)
        if path.endswith(".qmp"):
            self.s.recv(4096)

    def answered(self, request):
        try:
            self.s.sendall(request)
            return b"return" in self.s.recv(65536)
        except OSError:
            return False

    def close(self):
        self.s.close()


def main():
    if os.geteuid() != 0:
        skip("pve e2e at /etc/pve and /var/run/qemu-server", "needs root")
        return tap_report()
    for path in (ETC, RUN):
        if os.path.lexists(path):
            skip("pve e2e at /etc/pve and /var/run/qemu-server",
                 "%s exists: this machine may be a PVE node, nothing is touched" % path)
            return tap_report()
    made_pids = []
    try:
        image = fleet.build_image(WORK, [AGENT, QEMU_GA, "/usr/bin/openssl"])
        node_dir = os.path.join(ETC, "nodes", NODE, "qemu-server")
        os.makedirs(node_dir)
        os.makedirs(os.path.join(ETC, "nodes", "pve-e2e2", "qemu-server"))
        os.symlink("nodes/%s/qemu-server" % NODE, os.path.join(ETC, "qemu-server"))
        os.makedirs(RUN)
        os.makedirs(os.path.join(ETC, "virtual-guest"))
        with open(os.path.join(ETC, ".members"), "w") as f:
            json.dump({"nodename": NODE, "version": 5, "cluster": {"name": "e2e", "nodes": 2},
                       "nodelist": {NODE: {"id": 1, "online": 1, "ip": "127.0.0.1"},
                                    "pve-e2e2": {"id": 2, "online": 0, "ip": "127.0.0.2"}}},
                      f)
        with open(os.path.join(ETC, "virtual-guest", "cpu-models.conf"), "w") as f:
            f.write("cpu-model: aesclmul\n    flags +aes;+popcnt;+pni;+sse4.1;+sse4.2;+ssse3;"
                    "+pclmulqdq\n    reported-model qemu64\n\n")
        for vmid, vm in VMS.items():
            with open(os.path.join(node_dir, "%d.conf" % vmid), "w") as f:
                f.write(config(vmid, vm, image))
        with open(os.path.join(node_dir, "102.conf"), "w") as f:
            f.write("cpu: custom-aesclmul\nmemory: 512\nname: off\nscsi0: local:102/vm-102-disk-"
                    "0.raw\n")
        with open(os.path.join(node_dir, "104.conf"), "wb") as f:
            f.write(b"name: broken\n\x00\xff\xfe binary\n")

        for vmid, vm in VMS.items():
            img = os.path.join(WORK, "pve-%d.img" % vmid)
            fleet.make_scratch(img, 160)
            p = subprocess.run(qemu_argv(vmid, vm, image, img), capture_output=True, text=True,
                               timeout=60)
            check("VM %d: QEMU starts with PVE's command line (-daemonize)" % vmid,
                  p.returncode == 0, p.stderr)
            try:
                with open("%s/%d.pid" % (RUN, vmid)) as f:
                    made_pids.append(int(f.read().strip()))
            except (OSError, ValueError):
                pass

        # every guest boots and answers (TCG: a minute or two)
        end = time.monotonic() + 300
        doc = {}
        while time.monotonic() < end:
            rc, out, err = cli("ping", "--connect", "pve:///", "--format", "json", "--timeout",
                               "20", "--qga-agent", GUEST_AGENT)
            doc = guests(out)
            if all(doc.get("pve:%d" % v, {}).get("status") == "ok" for v in VMS):
                break
            time.sleep(5)
        check("ping --connect pve:///: the three running VMs answer",
              all(doc.get("pve:%d" % v, {}).get("status") == "ok" for v in VMS),
              json.dumps(doc, indent=1)[:3000])
        rc, out, err = cli("ping", "--format", "json", "pve:104", "pve:100")
        doc = guests(out)
        check("ping pve:104 pve:100: the binary config is VM 104's own error, 100 answers",
              rc == 3 and doc.get("pve:104", {}).get("status") == "error"
              and "NUL byte" in doc.get("pve:104", {}).get("error", "")
              and doc.get("pve:100", {}).get("status") == "ok", out + err)

        rc, out, err = cli("discover", "--connect", "pve:///", "--format", "json")
        d = {k: (v.get("result") or {}) for k, v in guests(out).items()}
        check("discover: 100 and 103 on our port (args:), 101 through qemu-ga, 102 stopped",
              d.get("pve:100", {}).get("reach") == "port"
              and d.get("pve:103", {}).get("reach") == "port"
              and d.get("pve:101", {}).get("reach") == "qga"
              and d.get("pve:102", {}).get("state") == "stopped"
              and d.get("pve:100", {}).get("node") == NODE, json.dumps(d)[:2000])

        rc, out, err = cli("audit", "--connect", "pve:///", "--format", "json", "--timeout",
                           "60", "--qga-agent", GUEST_AGENT)
        doc = guests(out)
        f100, f101, f103 = (findings(doc, "pve:%d" % v) for v in (100, 101, 103))
        check("audit --connect pve:///: the three VMs audited with their host view",
              all(doc.get("pve:%d" % v, {}).get("status") == "ok" for v in VMS),
              json.dumps(doc)[:3000])
        host100 = (doc.get("pve:100", {}).get("result") or {}).get("host") or {}
        pve100 = host100.get("pve") or {}
        check("VM 100: the config in the host view, kvm64 resolved from no cpu: line",
              pve100.get("cpu_type") == "kvm64" and pve100.get("cpu") is None
              and pve100.get("scsihw") == "virtio-scsi-pci"
              and pve100.get("nics", [{}])[0].get("queues") == 2
              and pve100.get("snapshots") == ["before-tuning"], json.dumps(pve100))
        f = f100.get(("CPU-NO-AESNI", "cpu"), {})
        check("VM 100 (kvm64): no AES, and the fix is a cpu-models.conf entry and qm set",
              f.get("level") == "FAIL" and "cpu-models.conf" in (f.get("hint") or "")
              and "qm set 100 --cpu custom-" in (f.get("hint") or ""), json.dumps(f))
        f = f100.get(("HOST-CACHE-NOT-DIRECT", "host-block/drive-scsi0"), {})
        check("VM 100: cache=writeback, fixed by qm set 100 --scsi0 without cache=",
              f.get("level") == "NOTE" and (f.get("hint") or "").startswith(
                  "qm set 100 --scsi0 local:100/vm-100-disk-0.raw,size=160M"),
              show(f100)[:3000])
        f = f100.get(("PVE-DISK-IOTHREAD", "pve-disk/scsi0"), {})
        check("VM 100: scsi0 on virtio-scsi-pci: qm set 100 --scsihw virtio-scsi-single",
              f.get("level") == "NOTE"
              and "qm set 100 --scsihw virtio-scsi-single --scsi0 " in (f.get("hint") or "")
              and "iothread=1" in (f.get("hint") or ""), json.dumps(f))
        f = f103.get(("PVE-CPU-AES-NO-PCLMUL", "cpu"), {})
        check("VM 103 (x86-64-v2-AES): its own finding, aes without pclmulqdq",
              f.get("level") == "FAIL" and "x86-64-v2-AES" in f.get("detail", "")
              and "+pclmulqdq" in (f.get("hint") or "")
              and ("CPU-NO-AESNI", "cpu") not in f103, show(f103)[:3000])
        check("VM 103: virtio-scsi-single with iothread=1 passes",
              f103.get(("PVE-DISK-IOTHREAD", "pve-disk/scsi0"), {}).get("level") == "PASS",
              show(f103)[:2000])
        bad = ["%s %s: %s" % (vmid, k, v.get("hint"))
               for vmid, found in ((100, f100), (101, f101), (103, f103))
               for k, v in found.items() if v.get("level") != "PASS" and v.get("hint")
               and re.search(r"libvirt <|(?<!-)-(cpu|drive|device|accel) ", v["hint"])]
        check("no fix for a PVE VM is given in libvirt's or QEMU's words", not bad,
              "\n".join(bad))
        f = f101.get(("CPU-HYPERVISOR", "cpu"), {})
        check("VM 101 (kvm: 0): TCG, fixed by qm set 101 --kvm 1",
              "qm set 101 --kvm 1" in (f.get("hint") or ""), show(f101))
        # a second client as PVE's backup: busy, and the other client unharmed
        h = Holder("%s/103.qmp" % RUN)
        rc, out, err = cli("audit", "--format", "json", "--timeout", "3", "pve:103")
        g = guests(out).get("pve:103", {})
        check("audit while another client holds 103.qmp: busy, exit 4",
              rc == 4 and g.get("status") == "busy", "rc %d %s %s" % (rc, out, err))
        check("the other client on 103.qmp is still served",
              h.answered(b'{"execute":"qmp_capabilities"}\n'))
        h.close()
        h = Holder("%s/101.qga" % RUN)
        rc, out, err = cli("ping", "--format", "json", "--timeout", "3", "--qga-agent",
                           GUEST_AGENT, "pve:101")
        g = guests(out).get("pve:101", {})
        check("ping while another client holds 101.qga: busy, exit 4",
              rc == 4 and g.get("status") == "busy", "rc %d %s %s" % (rc, out, err))
        check("the other client on 101.qga is still answered by the guest's qemu-ga",
              h.answered(b'{"execute":"guest-ping"}\n'))
        h.close()

        # AES-GCM at 16 KiB: kvm64, x86-64-v2-AES and max, each against openssl speed
        rows = {}
        for vmid in (100, 103, 101):
            extra = ["--qga-agent", GUEST_AGENT] if vmid == 101 else []
            rc, out, err = cli("bench", "aes", "--seconds", "3", "--sizes", "16384", "--no-save",
                               "--format", "json", "--timeout", "120", *extra, "pve:%d" % vmid)
            g = guests(out).get("pve:%d" % vmid, {})
            ours = None
            for m in (g.get("result") or {}).get("metrics", []):
                if m.get("metric") == "aes-128-gcm" and \
                        m.get("labels", {}).get("block_size") == "16384":
                    ours = m.get("value")
            ref = openssl_speed("%s/%d.qga" % (RUN, vmid))
            rows[vmid] = (ours, ref)
            print("# AES-128-GCM 16 KiB VM %d (%s): guestbench %s B/s, openssl speed %s B/s"
                  % (vmid, VMS[vmid]["cpu"] or "kvm64", ours, ref))
        check("bench aes ran in the three guests and openssl speed beside it",
              all(o is not None and r is not None for o, r in rows.values()), rows)
    except Exception as e:  # noqa: BLE001 - reported as a failure, the cleanup still runs
        check("the e2e run went through", False, repr(e))
    finally:
        kill_vms(made_pids)
        shutil.rmtree(ETC, ignore_errors=True)
        shutil.rmtree(RUN, ignore_errors=True)
        for vmid in VMS:
            for suffix in (".img", ".console"):
                try:
                    os.unlink(os.path.join(WORK, "pve-%d%s" % (vmid, suffix)))
                except FileNotFoundError:
                    pass
    check("everything made at /etc/pve and /var/run/qemu-server is gone",
          not os.path.lexists(ETC) and not os.path.lexists(RUN))
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
