#!/usr/bin/env python3
"""pve:VMID, --connect pve:/// and discover against a Proxmox VE node laid out
in a temporary directory (GUESTBENCH_PVE_ETC, GUESTBENCH_PVE_RUN): configs in
PVE's format, cpu-models.conf, .members, and for each running VM a real QEMU
(-machine none: no guest, but its real QMP monitor at RUN/VMID.qmp and its
pidfile at RUN/VMID.pid, as PVE starts it). What the guest side answers is a
real guestbench-agent on the socket that args: names (VM 100), and a real
qemu-ga on RUN/101.qga running the real agent through guest-exec (VM 101,
root only). A second client holding VMID.qmp or VMID.qga, as PVE's backup
would, makes guestbench say busy. Bad configs are each their VM's error, and
the others are still served. The e2e suite (tests/e2e/test-pve.py) boots real
guests with the argv PVE generates. Prints TAP.
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

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, skip, stop, tap_report  # noqa: E402

AGENT = os.environ["GB_AGENT"]
CLI = os.environ["GB_CLI"]
QEMU = shutil.which("qemu-system-x86_64")
QGA = os.environ.get("GB_QEMU_GA")


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def wait_socket(path, seconds=10):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if os.path.exists(path):
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(path)
                return True
            except OSError:
                pass
        time.sleep(0.02)
    return False


def start_qemu(run_dir, vmid, procs):
    """A real QEMU with no machine: its QMP monitor and pidfile where PVE has them."""
    qmp = os.path.join(run_dir, "%d.qmp" % vmid)
    pidfile = os.path.join(run_dir, "%d.pid" % vmid)
    procs.append(subprocess.Popen(
        [QEMU, "-machine", "none", "-nodefaults", "-display", "none", "-name", "vm%d" % vmid,
         "-chardev", "socket,id=qmp,path=%s,server=on,wait=off" % qmp,
         "-mon", "chardev=qmp,mode=control", "-pidfile", pidfile],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    end = time.monotonic() + 20
    while not (os.path.exists(pidfile) and os.path.getsize(pidfile) > 0) and \
            time.monotonic() < end:
        time.sleep(0.05)
    return qmp


def cli(env, *args, timeout=120):
    p = subprocess.run([CLI] + list(args), capture_output=True, text=True, env=env,
                       stdin=subprocess.DEVNULL, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def guests(out):
    try:
        return {g["target"]: g for g in json.loads(out)["guests"]}
    except (ValueError, KeyError, TypeError):
        return {}


def port_args(run_dir, vmid):
    return ("-chardev socket,id=guestbench,path=%s/%d.guestbench,server=on,wait=off "
            "-device virtio-serial,id=guestbench0 -device virtserialport,chardev=guestbench,"
            "name=org.guestbench.agent.0,bus=guestbench0.0" % (run_dir, vmid))


def layout(tmp):
    etc = os.path.join(tmp, "etc-pve")
    run = os.path.join(tmp, "run-qemu-server")
    os.makedirs(run)
    node = os.path.join(etc, "nodes", "pve1", "qemu-server")
    os.makedirs(node)
    os.makedirs(os.path.join(etc, "nodes", "pve2", "qemu-server"))
    os.symlink("nodes/pve1/qemu-server", os.path.join(etc, "qemu-server"))
    write(os.path.join(etc, ".members"), json.dumps({
        "nodename": "pve1", "version": 3,
        "nodelist": {"pve1": {"id": 1, "online": 1, "ip": "127.0.0.1"},
                     "pve2": {"id": 2, "online": 1, "ip": "127.0.0.2"}}}))
    write(os.path.join(etc, "virtual-guest", "cpu-models.conf"),
          "cpu-model: aesclmul\n\tflags +aes;+popcnt;+pni;+sse4.1;+sse4.2;+ssse3;+pclmulqdq\n"
          "\treported-model qemu64\n\n")
    confs = {
        100: "agent: 1\nargs: %s\ncores: 2\ncpu: x86-64-v2-AES\nmemory: 1024\nname: web1\n"
             "net0: virtio=BC:24:11:00:00:01,bridge=vmbr0,queues=2\nnuma: 0\n"
             "scsi0: local-lvm:vm-100-disk-0,cache=writeback,size=8G\nscsihw: virtio-scsi-pci\n"
             "\n[snap1]\ncpu: host\nname: web1-snap\nsnaptime: 1700000000\n"
             % port_args(run, 100),
        101: "agent: 1\ncores: 1\nmemory: 512\nname: db1\n"
             "virtio0: local-lvm:vm-101-disk-0,iothread=1\n",
        102: "cpu: custom-aesclmul\nmemory: 512\nname: stopped1\n",
        103: "cpu: x86-64-v2-AES\nmemory: 512\nname: noagent\n",
        104: "name: unknowns\nfrobnicate: 1\nmemory: 512\nagent: 1\n",
        105: "name: binary\n\x00\x01\x02\n",
        106: "name: evil\nagent: 1\nargs: -chardev socket,id=g,path=/tmp/x,server=on;"
             "touch %s/pwned\n" % tmp,
    }
    for vmid, text in confs.items():
        write(os.path.join(node, "%d.conf" % vmid), text)
    write(os.path.join(node, "abc.conf"), "name: not-a-vmid\n")
    return etc, run


class Holder:
    """A second client on a socket, as PVE's backup holds VMID.qga: connects and
    keeps the connection until closed (reading what comes, like a QMP client
    that took the greeting)."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.s.settimeout(2)
        try:
            self.s.recv(4096)
        except OSError:
            pass

    def alive(self):
        """Whether the socket still answers this client (QMP: a reply to qmp_capabilities)."""
        try:
            self.s.sendall(b'{"execute":"qmp_capabilities"}\n')
            return b"return" in self.s.recv(4096)
        except OSError:
            return False

    def close(self):
        self.s.close()


def main():
    if QEMU is None:
        skip("pve: a node laid out with real QEMU monitors", "needs qemu-system-x86_64")
        return tap_report()
    tmp = tempfile.mkdtemp(prefix="gb-pve-")
    procs = []
    try:
        etc, run = layout(tmp)
        env = dict(os.environ, GUESTBENCH_PVE_ETC=etc, GUESTBENCH_PVE_RUN=run,
                   XDG_DATA_HOME=os.path.join(tmp, "xdg"), XDG_RUNTIME_DIR=tmp)
        # VM 100: our port (a real agent where args: puts the socket), 101: qemu-ga only,
        # 103: neither, 104: unknown keys, qemu-ga; 105 and 106 run but their configs are bad
        for vmid in (100, 101, 103, 104, 105, 106):
            start_qemu(run, vmid, procs)
        sock = os.path.join(run, "100.guestbench")
        procs.append(subprocess.Popen([AGENT, "-m", "unix-listen", "-p", sock],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        wait_socket(sock)
        have_qga = QGA is not None and os.geteuid() == 0
        if have_qga:
            for vmid in (101, 104):
                state = os.path.join(tmp, "qga-state-%d" % vmid)
                os.mkdir(state)
                qsock = os.path.join(run, "%d.qga" % vmid)
                procs.append(subprocess.Popen(
                    [QGA, "-m", "unix-listen", "-p", qsock, "-t", state, "-f",
                     os.path.join(tmp, "qga-%d.pid" % vmid)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL))
                wait_socket(qsock)

        # ---- discover ----
        rc, out, err = cli(env, "discover", "--connect", "pve:///")
        check("discover --connect pve:///: every VM with a config, by VMID",
              all("[guest pve:%d]" % v in out for v in (100, 101))
              and "VM 102 (stopped1) is not running" in out
              and "abc" not in out.replace("pve", ""), out + err)
        check("discover: name, node, state and path of each VM",
              "VM 100 web1 on node pve1, running, through our port (args:)" in out
              and "#   VM 102 (stopped1) is not running" in out
              and ("VM 101 db1 on node pve1, running, through qemu-ga" in out or not have_qga),
              out)
        check("discover: a VM without a path says how to add one (qm set ... --args)",
              "VM 103 (noagent) has neither our port (args:) nor qemu-ga (agent: 1)" in out
              and "qm set 103 --args '-chardev socket,id=guestbench," in out, out + err)
        check("discover: bad configs are each their VM's error (exit 3), the others listed",
              rc == 3 and "VM 105's config has a NUL byte" in out + err
              and "args: has the shell metacharacter ';'" in out + err
              and "[guest pve:100]" in out, "rc %d\n%s\n%s" % (rc, out, err))
        rc, out, err = cli(env, "discover", "--connect", "pve:///", "--format", "json")
        doc = guests(out)
        g100 = doc.get("pve:100", {}).get("result", {})
        check("discover --format json: vmid, name, node, state, reach, socket",
              g100.get("vmid") == 100 and g100.get("name") == "web1"
              and g100.get("node") == "pve1" and g100.get("state") == "running"
              and g100.get("reach") == "port" and g100.get("socket") == sock, out)

        # ---- ping and audit of the node ----
        qga_agent = ["--qga-agent", AGENT] if have_qga else []
        rc, out, err = cli(env, "ping", "--connect", "pve:///", "--format", "json",
                           "--timeout", "20", *qga_agent)
        doc = guests(out)
        check("ping --connect pve:///: the running VMs, the stopped one left out",
              doc.get("pve:100", {}).get("status") == "ok" and "pve:102" not in doc
              and "1 VM(s) not running" in err
              and (doc.get("pve:101", {}).get("status") == "ok" or not have_qga),
              err + out[:3000])
        check("ping: a bad config or args: line is that VM's error, nothing executed",
              doc.get("pve:105", {}).get("status") == "error"
              and doc.get("pve:106", {}).get("status") == "error"
              and not os.path.exists(os.path.join(tmp, "pwned")), out)

        rc, out, err = cli(env, "audit", "--connect", "pve:///", "--format", "json",
                           "--timeout", "20", *qga_agent)
        doc = guests(out)
        r100 = doc.get("pve:100", {}).get("result", {})
        rules = {f["rule"]: f for f in r100.get("findings", [])}
        check("audit --connect pve:///: VM 100 audited with its host view from 100.qmp",
              doc.get("pve:100", {}).get("status") == "ok" and any(
                  r.startswith("HOST-") or r.startswith("PVE-") for r in rules), out + err)
        pve = r100.get("host", {}).get("pve", {}) if isinstance(r100.get("host"), dict) else {}
        check("audit: the config is a fact of the host view (cpu type, disks, nics)",
              pve.get("cpu_type") == "x86-64-v2-AES" and pve.get("scsihw") == "virtio-scsi-pci"
              and pve.get("disks", [{}])[0].get("cache") == "writeback"
              and pve.get("nics", [{}])[0].get("queues") == 2, json.dumps(r100)[:3000])

        rc, out, err = cli(env, "audit", "--format", "json", "--timeout", "20", *qga_agent,
                           "pve:104")
        doc = guests(out)
        errs = json.dumps(doc.get("pve:104", {}))
        check("audit pve:104: unknown config keys are noted, the VM still audited",
              (not have_qga) or (doc.get("pve:104", {}).get("status") == "ok"
                                 and "unknown key 'frobnicate'" in errs), out + err)

        # ---- a second client: busy, and no harm to it ----
        holder = Holder(os.path.join(run, "100.qmp"))
        t0 = time.monotonic()
        rc, out, err = cli(env, "audit", "--format", "json", "--timeout", "2", "pve:100")
        doc = guests(out)
        g = doc.get("pve:100", {})
        check("audit while another client holds 100.qmp: busy (exit 4), not a failure",
              rc == 4 and g.get("status") == "busy" and "busy" in (g.get("error") or "")
              and "100.qmp" in (g.get("error") or ""), "rc %d %s %s" % (rc, out, err))
        check("the other client on 100.qmp saw nothing go wrong", holder.alive())
        holder.close()
        check("busy came within the timeout", time.monotonic() - t0 < 15)
        rc, out, err = cli(env, "audit", "--format", "json", "--timeout", "20", "pve:100")
        check("once the other client is gone, 100.qmp serves guestbench again",
              guests(out).get("pve:100", {}).get("status") == "ok", out + err)
        if have_qga:
            holder = Holder(os.path.join(run, "101.qga"))
            rc, out, err = cli(env, "ping", "--format", "json", "--timeout", "2", *qga_agent,
                               "pve:101")
            g = guests(out).get("pve:101", {})
            check("ping while another client holds 101.qga: busy (exit 4)",
                  rc == 4 and g.get("status") == "busy" and "101.qga" in g.get("error", ""),
                  "rc %d %s %s" % (rc, out, err))
            holder.s.sendall(b'{"execute":"guest-ping"}\n')
            try:
                ok = b"return" in holder.s.recv(4096)
            except OSError:
                ok = False
            check("the other client on 101.qga is still answered by qemu-ga", ok)
            holder.close()
        else:
            skip("ping while another client holds 101.qga: busy (exit 4)",
                 "needs GB_QEMU_GA and root")
            skip("the other client on 101.qga is still answered by qemu-ga",
                 "needs GB_QEMU_GA and root")

        # ---- host-check: the args: line and qm commands; applying them works ----
        rc, out, err = cli(env, "host-check")
        check("host-check on a PVE node: VM 100 has our port",
              "Checking a Proxmox VE VM for our port" in out
              and "VM 100 (web1): args: adds our port on %s" % sock in out, out + err)
        m = re.search(r"VM 103 \(noagent\) has no guestbench port\)\n +hint: the line is "
                      r"args: (.*) -- as root: qm set 103 --args '(.*)', then a cold restart: "
                      r"qm shutdown 103 && qm start 103\n", out)
        check("host-check: the exact args: line for VM 103 and the qm commands",
              m is not None and m.group(1) == m.group(2)
              and "path=%s/103.guestbench,server=on" % run in m.group(1), out)
        if m is not None:
            # what qm set --args does: one more line in the config; then the "cold restart"
            with open(os.path.join(etc, "qemu-server", "103.conf"), "a") as f:
                f.write("args: %s\n" % m.group(1))
            sock103 = os.path.join(run, "103.guestbench")
            procs.append(subprocess.Popen([AGENT, "-m", "unix-listen", "-p", sock103],
                                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
            wait_socket(sock103)
            rc, out, err = cli(env, "ping", "--format", "json", "pve:103")
            check("with host-check's line applied, pve:103 is reached on our port",
                  rc == 0 and guests(out).get("pve:103", {}).get("status") == "ok",
                  out + err)
        else:
            skip("with host-check's line applied, pve:103 is reached on our port",
                 "no line found")

        # ---- bad input on the command line ----
        for text, want in (("pve:abc", "'abc' is not a VMID"), ("pve:", "'' is not a VMID"),
                           ("pve:99", "'99' is not a VMID"),
                           ("pve:100;reboot", "'100;reboot' is not a VMID")):
            rc, out, err = cli(env, "ping", text)
            check("ping %s: usage error saying why" % text, rc == 2 and want in err,
                  "rc %d %s" % (rc, err))
        rc, out, err = cli(env, "ping", "pve:999")
        check("ping pve:999 (no such VM): that VM's error naming the file",
              rc == 3 and "999.conf" in out, "rc %d %s %s" % (rc, out, err))
        rc, out, err = cli(env, "ping", "--connect", "pve://x/")
        check("--connect pve://x/: usage error naming the URIs there are",
              rc == 2 and "pve:///" in err and "pve+ssh://" in err, err)
        env_none = dict(env, GUESTBENCH_PVE_ETC=os.path.join(tmp, "nowhere"))
        rc, out, err = cli(env_none, "ping", "--connect", "pve:///")
        check("--connect pve:/// on a machine that is no PVE node: says so",
              rc == 3 and "is this a Proxmox VE node" in out, out + err)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
