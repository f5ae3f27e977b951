#!/usr/bin/env python3
"""A two-node Proxmox VE cluster on this machine, each node behind its own real
OpenSSH sshd on 127.0.0.1 (a port of its own, a host key made for this run):
--connect pve+ssh://NODE/ and pve:///cluster reach each node over ssh as
--hosts does, the node runs 'guestbench --connect pve:///' on its own files
(the sshd sets GUESTBENCH_PVE_ETC and GUESTBENCH_PVE_RUN for it), and the
results are merged per node. /etc/pve is pmxcfs, the same on every node but
for the qemu-server link and .members' nodename: here each node's ETC links
the one shared nodes/ directory. Each VM is a real QEMU (-machine none: its
QMP monitor at RUN/VMID.qmp) and a real agent on the port its args: names. A
third node in .members has no sshd (a node down). Prints TAP; needs root,
sshd and ssh (otherwise it skips).
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, skip, stop, tap_report  # noqa: E402

AGENT = os.environ["GB_AGENT"]
CLI = os.environ["GB_CLI"]
SSHD = "/usr/sbin/sshd"
SSH = "/usr/bin/ssh"
KEYGEN = "/usr/bin/ssh-keygen"
QEMU = shutil.which("qemu-system-x86_64")
NAMES = ["pve1 cluster", "pve+ssh", "census", "bad .members", "node down"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_path(path, seconds=20):
    end = time.monotonic() + seconds
    while not os.path.exists(path) and time.monotonic() < end:
        time.sleep(0.05)
    return os.path.exists(path)


def wait_port(port, seconds=20):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def port_args(run, vmid):
    return ("-chardev socket,id=guestbench,path=%s/%d.guestbench,server=on,wait=off "
            "-device virtio-serial,id=guestbench0 -device virtserialport,chardev=guestbench,"
            "name=org.guestbench.agent.0,bus=guestbench0.0" % (run, vmid))


def start_vm(run, vmid, procs):
    """QEMU with PVE's monitor and pidfile, and the agent where args: puts the port."""
    procs.append(subprocess.Popen(
        [QEMU, "-machine", "none", "-nodefaults", "-display", "none",
         "-chardev", "socket,id=qmp,path=%s/%d.qmp,server=on,wait=off" % (run, vmid),
         "-mon", "chardev=qmp,mode=control", "-pidfile", "%s/%d.pid" % (run, vmid)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    sock = "%s/%d.guestbench" % (run, vmid)
    procs.append(subprocess.Popen([AGENT, "-m", "unix-listen", "-p", sock],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL))
    wait_path("%s/%d.pid" % (run, vmid))
    wait_path(sock)


def members(tmp, local, text=None):
    path = os.path.join(tmp, "etc-" + local, ".members")
    with open(path, "w") as f:
        f.write(text if text is not None else json.dumps({
            "nodename": local, "version": 7,
            "nodelist": {"pve1": {"id": 1, "online": 1, "ip": "127.0.0.1"},
                         "pve2": {"id": 2, "online": 1, "ip": "127.0.0.1"}}}))


def main():
    if os.geteuid() != 0 or not all(os.access(p, os.X_OK) for p in (SSHD, SSH, KEYGEN)) \
            or QEMU is None:
        for n in NAMES:
            skip(n, "needs root, sshd, ssh, ssh-keygen and qemu-system-x86_64")
        return tap_report()
    tmp = tempfile.mkdtemp(prefix="gb-pvec-")
    procs = []
    made_run_sshd = False
    try:
        if not os.path.isdir("/run/sshd"):  # sshd's privilege separation directory
            os.makedirs("/run/sshd", mode=0o755)
            made_run_sshd = True
        shared = os.path.join(tmp, "pmxcfs")
        for node in ("pve1", "pve2"):
            os.makedirs(os.path.join(shared, "nodes", node, "qemu-server"))
            etc = os.path.join(tmp, "etc-" + node)
            os.makedirs(etc)
            os.symlink(os.path.join(shared, "nodes"), os.path.join(etc, "nodes"))
            os.symlink("nodes/%s/qemu-server" % node, os.path.join(etc, "qemu-server"))
            os.makedirs(os.path.join(tmp, "run-" + node))
            members(tmp, node)
        confs = {("pve1", 100): "name: web\nmemory: 512\nargs: %s\n",
                 ("pve2", 200): "name: db\ncpu: host\nmemory: 512\nargs: %s\n",
                 ("pve2", 201): "name: aes\ncpu: x86-64-v2-AES\nmemory: 512\nargs: %s\n"}
        for (node, vmid), text in confs.items():
            run = os.path.join(tmp, "run-" + node)
            with open(os.path.join(shared, "nodes", node, "qemu-server", "%d.conf" % vmid),
                      "w") as f:
                f.write(text % port_args(run, vmid))
            start_vm(run, vmid, procs)

        # ssh: a key pair, a host key, one sshd per node
        key = os.path.join(tmp, "id")
        hostkey = os.path.join(tmp, "hostkey")
        for k in (key, hostkey):
            subprocess.run([KEYGEN, "-q", "-t", "ed25519", "-N", "", "-f", k], check=True)
        shutil.copy(key + ".pub", os.path.join(tmp, "authorized_keys"))
        os.chmod(os.path.join(tmp, "authorized_keys"), 0o600)
        bindir = os.path.join(tmp, "bin")
        os.makedirs(bindir)
        os.symlink(CLI, os.path.join(bindir, "guestbench"))
        ssh_cfg = os.path.join(tmp, "ssh_config")
        with open(ssh_cfg, "w") as cfg:
            for node in ("pve1", "pve2"):
                port = free_port()
                conf = os.path.join(tmp, "sshd-%s.conf" % node)
                with open(conf, "w") as f:
                    f.write("ListenAddress 127.0.0.1\nPort %d\nHostKey %s\nPidFile %s/sshd-%s.pid\n"
                            "AuthorizedKeysFile %s/authorized_keys\nPermitRootLogin "
                            "prohibit-password\nPasswordAuthentication no\n"
                            "KbdInteractiveAuthentication no\nStrictModes no\nUsePAM no\n"
                            "SetEnv PATH=%s:/usr/sbin:/usr/bin:/sbin:/bin "
                            "GUESTBENCH_PVE_ETC=%s/etc-%s GUESTBENCH_PVE_RUN=%s/run-%s "
                            "XDG_DATA_HOME=%s/xdg-%s\n"
                            % (port, hostkey, tmp, node, tmp, bindir, tmp, node, tmp, node,
                               tmp, node))
                procs.append(subprocess.Popen([SSHD, "-D", "-e", "-f", conf],
                                              stdin=subprocess.DEVNULL,
                                              stdout=subprocess.DEVNULL,
                                              stderr=open(conf + ".log", "w")))
                wait_port(port)
                cfg.write("Host %s\n  HostName 127.0.0.1\n  Port %d\n  User root\n"
                          "  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile "
                          "/dev/null\n  StrictHostKeyChecking no\n  LogLevel ERROR\n"
                          % (node, port, key))
            cfg.write("Host pve3\n  HostName 127.0.0.1\n  Port %d\n  User root\n"
                      "  IdentityFile %s\n  LogLevel ERROR\n" % (free_port(), key))
        env = dict(os.environ, GUESTBENCH_SSH="%s -F %s" % (SSH, ssh_cfg),
                   GUESTBENCH_PVE_ETC=os.path.join(tmp, "etc-pve1"),
                   GUESTBENCH_PVE_RUN=os.path.join(tmp, "run-pve1"),
                   XDG_DATA_HOME=os.path.join(tmp, "xdg"))

        def cli(*args):
            p = subprocess.run([CLI] + list(args), capture_output=True, text=True, env=env,
                               stdin=subprocess.DEVNULL, timeout=180)
            return p.returncode, p.stdout, p.stderr

        rc, out, err = cli("audit", "--connect", "pve:///cluster", "--format", "json",
                           "--timeout", "20")
        try:
            guests = {(g.get("host"), g["target"]): g for g in json.loads(out)["guests"]}
        except (ValueError, KeyError, TypeError):
            guests = {}
        check("audit --connect pve:///cluster: each node's VMs over ssh, merged per node",
              {k: g.get("status") for k, g in guests.items()} ==
              {("pve1", "pve:100"): "ok", ("pve2", "pve:200"): "ok", ("pve2", "pve:201"): "ok"}
              and (guests[("pve2", "pve:201")].get("result") or {}).get("host", {})
              .get("pve", {}).get("cpu_type") == "x86-64-v2-AES", out[:3000] + err)

        rc, out, err = cli("ping", "--connect", "pve+ssh://root@pve2/", "--format", "json")
        try:
            got = sorted((g.get("host"), g["target"], g["status"])
                         for g in json.loads(out)["guests"])
        except (ValueError, KeyError, TypeError):
            got = []
        check("ping --connect pve+ssh://root@pve2/: that node's VMs only",
              got == [("root@pve2", "pve:200", "ok"), ("root@pve2", "pve:201", "ok")],
              "%s\n%s\n%s" % (got, out[:2000], err))

        rc, out, err = cli("census", "--connect", "pve:///cluster", "--timeout", "20")
        check("census --connect pve:///cluster: the CPU type every node can run, and the VMs "
              "below it",
              rc == 0 and "cluster-safe CPU type: x86-64-v" in out
              and "node pve1" in out and "node pve2" in out
              and "VM 100 on pve1: cpu kvm64, below what every node runs: qm set 100 --cpu "
              "x86-64-v" in out, "rc %d\n%s\n%s" % (rc, out, err))

        members(tmp, "pve1", "{\"nodename\": \"pve1\", \"nodelist\": [oops\n")
        rc, out, err = cli("census", "--connect", "pve:///cluster")
        rc2, out2, err2 = cli("ping", "--connect", "pve:///cluster")
        check("a .members that is not JSON: a clear usage error, nothing run",
              rc == 2 and ".members: JSON parse error" in err
              and rc2 == 2 and ".members: JSON parse error" in err2,
              "%d %s | %d %s" % (rc, err, rc2, err2))

        members(tmp, "pve1", json.dumps({
            "nodename": "pve1", "nodelist": {"pve1": {"id": 1, "online": 1},
                                             "pve2": {"id": 2, "online": 1},
                                             "pve3": {"id": 3, "online": 0}}}))
        rc, out, err = cli("ping", "--connect", "pve:///cluster", "--format", "json",
                           "--timeout", "5")
        try:
            st = {(g.get("host"), g["target"]): g["status"] for g in json.loads(out)["guests"]}
        except (ValueError, KeyError, TypeError):
            st = {}
        check("a node down: its own failure, the other nodes' VMs still served",
              rc == 3 and st.get(("pve1", "pve:100")) == "ok"
              and st.get(("pve2", "pve:200")) == "ok"
              and any(h == "pve3" and s != "ok" for (h, _), s in st.items()),
              "%s\n%s" % (st, err))
        rc, out, err = cli("ping", "--connect", "pve+ssh://pve2/x")
        check("--connect pve+ssh://pve2/x: usage error", rc == 2
              and "expected pve+ssh://[USER@]NODE/" in err, err)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)
        if made_run_sshd:
            shutil.rmtree("/run/sshd", ignore_errors=True)
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
