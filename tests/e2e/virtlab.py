"""A real libvirt test lab: libvirtd, TCG domains built from the e2e guest, a
remote hypervisor over qemu+ssh and a non-root libvirt-group user.

Imported by tests the way fleet.py is (it is never a test itself). Everything
it makes is undone by close(), which also runs at exit and on failure:

    import virtlab
    with virtlab.VirtLab(image_dir) as lab:      # image_dir: fleet.build_image()
        lab.up()                                 # daemons, domains, remote, user
        lab.domains["bind"].sock                 # the guestbench channel's socket
        lab.virsh("list", "--all")               # CompletedProcess, never raises
        lab.virsh("list", uri=lab.remote.uri)    # through qemu+ssh
        lab.virsh("list", user=lab.user.name)    # as the non-root user
        lab.run_hidden([...])                    # without the hypervisor's files

Pieces, usable alone:

Libvirtd(logdir)
    start(): when nothing answers on /run/libvirt/libvirt-sock, starts virtlogd
    and libvirtd (system mode, in the foreground, children of this process)
    and waits (bounded) until `virsh -c qemu:///system version` works; when
    one already runs (systemd, CI), uses it and close() stops nothing.
    restart(): libvirtd again (the domains keep running): by PID when started
    here, `systemctl restart` under systemd; waits until it answers.
    close(): SIGTERM then SIGKILL by PID to what start() started, and removes
    what that libvirtd wrote (state, caches, /run/libvirt) unless a domain of
    someone else's appeared meanwhile (then it stays running for them).
    `started` says whether it started them.

SystemBus(logdir)
    start(): the system D-Bus and polkitd, each only if not already running
    (children, stopped by PID at close()). polkit's 60-libvirt.rules grants
    the libvirt group.

Domain(lab, kind, name)
    One TCG domain (<domain type='qemu'>, 1 vCPU, MEM_MIB, direct kernel boot
    of the e2e guest, its own ext4 scratch disk as virtio vda with serial
    gbscratch, console into Domain.console). Kinds (KINDS):
      "bind"  guestbench channel bound at Domain.sock (lab dir) + qemu-ga channel;
              the guest runs both agents
      "auto"  guestbench channel, path chosen by libvirt (channel_path() reads it
              from the live XML); the guest runs the agent
      "qga"   only the qemu-ga channel; qemu-ga runs in the guest and
              /usr/bin/guestbench-agent is in the guest for guest-exec
      "off"   defined, never started
      "hostile" guestbench channel, path chosen by libvirt; the guest runs no
              agent but guest-init's hostile responder (gb.run=hostile: sync and
              ping answered, every gb-get-facts poisoned, see guest-init)
    Methods: define(), start(), state() ("running", "shut off", ...),
    live_xml(), channel_path(name), ping() (guest-sync-delimited + guest-ping
    over the guestbench channel, and `virsh qemu-agent-command` guest-ping
    where the kind has qemu-ga; None or the error), qga_ping(uri=),
    wait_agent(timeout), destroy(), undefine(). Names are PREFIX + kind; PREFIX is per run
    ("gbvl-PID-") so that no domain of the machine's own is ever touched.
    ODD_NAME is a further domain (kind "auto" unless VirtLab(odd_kind=...))
    whose name has a space, a quote and non-ASCII characters.

Remote(lab)
    A hypervisor reached as qemu+ssh://root@ADDR:PORT/system?... through a
    real sshd in a network namespace (the --hosts tests' namespaces, veths
    and teardown, from tests/integration/cli/test-hosts-sshd.py), with a key
    and known_hosts made for this run, an ssh wrapper that adds its own
    ssh_config (BatchMode: nothing ever prompts). The sshd sees this machine's
    /run/libvirt, so the remote side (virt-ssh-helper) talks to the lab's
    libvirtd. `uri` is the URI, `dead_uri` the same host on a port where
    nothing listens (a hypervisor that is down), `ssh` the wrapper,
    `ssh_config` its config file, `key` the private key (root's only).

User(lab)
    A throw-away user gbvirt-PID in the libvirt group with a home in the lab's
    directory; run(argv, env=) runs argv as that user with a clean
    environment. close() kills its processes by PID and removes it.

VirtLab(image_dir, kinds=KINDS, odd_kind="auto", remote=True, user=True,
        hostile=False)
    With hostile=True, `hostile` is a further domain of kind "hostile", booted
    with the others but not one of all_domains() (the honest ones).
    up() starts all of the above, removes the domains of earlier runs that
    were killed before their cleanup (`swept`), defines every domain, starts the running
    kinds together and waits until each answers (bounded by BOOT_TIMEOUT);
    `timings` has how long each phase took; `polkit_note` says why non-root
    access cannot work (a machine's libvirtd that predates the system bus
    started here), else None. virsh(*args, uri=, user=,
    timeout=) runs virsh. run_hidden(argv, **kw) runs argv in a mount
    namespace of its own with tmpfs over /run/libvirt and
    /var/lib/libvirt/qemu: the local hypervisor's files are invisible there.
    close() destroys and undefines the run's domains, removes their logs,
    stops what was started, removes the user and the temporary directory.

skip_reason() says why the lab cannot run here (not root, libvirt missing),
or None.
"""
import atexit
import importlib.util
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from xml.sax.saxutils import escape, quoteattr

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fleet  # noqa: E402
from gbclient import Session  # noqa: E402

PID = os.getpid()
PREFIX = "gbvl-%d-" % PID
ODD_NAME = PREFIX + "odd name \u00e9\u00df'q"
URI = "qemu:///system"
SOCK = "/run/libvirt/libvirt-sock"
KINDS = ("bind", "auto", "qga", "off")
MEM_MIB = 256
BOOT_TIMEOUT = 240  # seconds for every guest's agent to answer (TCG, 2 shared cores)
DAEMON_TIMEOUT = 30
GUESTBENCH_CHANNEL = "org.guestbench.agent.0"
QGA_CHANNEL = "org.qemu.guest_agent.0"
VIRSH = shutil.which("virsh") or "/usr/bin/virsh"
LIBVIRTD = shutil.which("libvirtd") or "/usr/sbin/libvirtd"
VIRTLOGD = shutil.which("virtlogd") or "/usr/sbin/virtlogd"
DBUS_DAEMON = shutil.which("dbus-daemon") or "/usr/bin/dbus-daemon"
POLKITD = next((p for p in ("/usr/lib/polkit-1/polkitd", "/usr/libexec/polkitd")
                if os.access(p, os.X_OK)), "/usr/lib/polkit-1/polkitd")
QEMU = shutil.which("qemu-system-x86_64") or "/usr/bin/qemu-system-x86_64"
DBUS_SOCK = "/run/dbus/system_bus_socket"


def skip_reason():
    """Why the lab cannot run on this machine, or None."""
    if os.geteuid() != 0:
        return "needs root (libvirtd, network namespaces, users)"
    for path in (VIRSH, LIBVIRTD, VIRTLOGD, QEMU):
        if not os.access(path, os.X_OK):
            return "%s not installed (scripts/deps --e2e installs it)" % path
    return None


def run(argv, **kw):
    """subprocess.run with text output captured, no stdin and a bound (60 s)."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 60)
    if "input" not in kw:
        kw.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run(argv, **kw)


def must(argv, **kw):
    p = run(argv, **kw)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(argv), p.returncode,
                                                (p.stderr or p.stdout).strip()))
    return p


def virsh(*args, uri=URI, user=None, timeout=60):
    """virsh -c URI ARGS (as USER through runuser when given); never raises on
    a non-zero exit, a timeout is returned as returncode None."""
    argv = [VIRSH, "-q", "-c", uri] + list(args)
    if user:
        argv = ["runuser", "-u", user, "--"] + argv
    env = dict(os.environ, LC_ALL="C.UTF-8")
    env.pop("LIBVIRT_DEFAULT_URI", None)
    try:
        return run(argv, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(argv, None, e.stdout or "",
                                           "virsh timed out after %ds" % timeout)


def wait_for(what, test, timeout, interval=0.1, detail=lambda: ""):
    deadline = time.monotonic() + timeout
    while True:
        if test():
            return
        if time.monotonic() > deadline:
            raise RuntimeError("%s not within %ds%s" % (what, timeout, detail()))
        time.sleep(interval)


def stop_procs(procs):
    """SIGTERM to each still running, SIGKILL after 10 s, by PID."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def daemon_env():
    """A daemon's environment: none of the test run's (G_DEBUG=fatal-criticals,
    MALLOC_PERTURB_, sanitizer options) reaches libvirtd, D-Bus or polkitd."""
    return {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LANG": "C.UTF-8"}


def tail(path, n=2000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return "(no %s)" % path


def in_parallel(fn, doms):
    """fn(d) for every domain at once (threads); raises with every domain's error."""
    errors = {}

    def one(d):
        try:
            fn(d)
        except Exception as e:  # noqa: BLE001 - collected, raised below
            errors[d.name] = str(e)
    threads = [threading.Thread(target=one, args=(d,), daemon=True) for d in doms]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError("; ".join("%s: %s" % kv for kv in errors.items()))


# ---- daemons ------------------------------------------------------------------------------

def state_files():
    """Every path under libvirt's configuration, state, cache and log directories."""
    found = set()
    for top in ("/etc/libvirt", "/var/lib/libvirt", "/var/cache/libvirt", "/var/log/libvirt"):
        for root, dirs, files in os.walk(top):
            found.update(os.path.join(root, n) for n in dirs + files)
    return found


class Libvirtd:
    def __init__(self, logdir):
        self.logdir = logdir
        self.procs = []
        self.before = set()
        self.initial = set()
        self.kept = False  # left running at close() for someone else's domains
        self.started = False
        self.made = []  # directories this run created (removed at close)

    def answers(self):
        return virsh("version", timeout=10).returncode == 0

    def start(self):
        if os.path.exists(SOCK) and self.answers():
            return
        if not os.path.exists("/run/libvirt"):
            self.made.append("/run/libvirt")
        self.before = state_files()
        for name, argv in (("virtlogd", [VIRTLOGD]), ("libvirtd", [LIBVIRTD])):
            log = open(os.path.join(self.logdir, name + ".log"), "w")
            self.procs.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                               stderr=subprocess.STDOUT, env=daemon_env()))
            log.close()
        self.started = True
        libvirtd = self.procs[1]

        def up():
            if libvirtd.poll() is not None and not os.path.exists(SOCK):
                raise RuntimeError("libvirtd exited (%s): %s" % (
                    libvirtd.returncode, tail(os.path.join(self.logdir, "libvirtd.log"))))
            return os.path.exists(SOCK) and self.answers()
        wait_for("libvirtd answering on " + SOCK, up, DAEMON_TIMEOUT, 0.2,
                 lambda: ": " + tail(os.path.join(self.logdir, "libvirtd.log")))
        if libvirtd.poll() is not None:
            # another run started one at the same time and it answers: use that one
            self.started = False
            stop_procs(self.procs)
            self.procs = []
            self.made = []
        self.initial = set(self.domain_names())

    def restart(self, timeout=DAEMON_TIMEOUT):
        """Restarts libvirtd (running domains keep running): the one started here
        by PID, the machine's through systemctl; waits until it answers again."""
        if self.started:
            old = self.procs[1]
            old.terminate()
            try:
                old.wait(15)
            except subprocess.TimeoutExpired:
                old.kill()
                old.wait()
            log = open(os.path.join(self.logdir, "libvirtd.log"), "a")
            self.procs[1] = subprocess.Popen([LIBVIRTD], stdin=subprocess.DEVNULL, stdout=log,
                                             stderr=subprocess.STDOUT, env=daemon_env())
            log.close()
        elif os.path.isdir("/run/systemd/system"):
            must(["systemctl", "restart", "libvirtd.service"], timeout=timeout)
        else:
            raise RuntimeError("virtlab: cannot restart a libvirtd that it did not start "
                               "and that systemd does not run")
        wait_for("libvirtd answering again", self.answers, timeout, 0.2,
                 lambda: ": " + tail(os.path.join(self.logdir, "libvirtd.log")))

    def domain_names(self):
        return [n for n in virsh("list", "--all", "--name", timeout=15).stdout.splitlines()
                if n.strip()]

    def close(self):
        if not self.procs:
            return
        others = [n for n in self.domain_names()
                  if not n.startswith(PREFIX) and n not in self.initial]
        if others:
            # defined meanwhile by someone else (another lab run): this libvirtd stays
            # up for them, and the next run uses it
            print("# virtlab: libvirtd left running for %s" % ", ".join(others))
            self.kept = True
            return
        stop_procs(self.procs)
        self.procs = []
        # what libvirtd wrote on this first start (its default network and nwfilter
        # configuration from the templates, the capabilities cache, logs)
        for path in sorted(state_files() - self.before, reverse=True):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass
        for d in self.made:
            shutil.rmtree(d, ignore_errors=True)


class SystemBus:
    """The system D-Bus and polkitd, started only where they do not run."""

    def __init__(self, logdir):
        self.logdir = logdir
        self.procs = []
        self.made_sock = False

    def bus_answers(self):
        return run(["dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.DBus",
                    "/org/freedesktop/DBus", "org.freedesktop.DBus.ListNames"],
                   timeout=10).returncode == 0 if shutil.which("dbus-send") else \
            os.path.exists(DBUS_SOCK)

    def has_polkit(self):
        p = run(["dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.DBus",
                 "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner",
                 "string:org.freedesktop.PolicyKit1"], timeout=10)
        return p.returncode == 0 and "boolean true" in p.stdout

    def start(self):
        for path in (DBUS_DAEMON, POLKITD):
            if not os.access(path, os.X_OK):
                raise RuntimeError("%s not installed (scripts/deps --e2e installs dbus and "
                                   "polkitd)" % path)
        if not self.bus_answers():
            os.makedirs("/run/dbus", exist_ok=True)
            if os.path.exists(DBUS_SOCK):
                os.unlink(DBUS_SOCK)  # stale: nothing answers on it
            self.spawn("dbus", [DBUS_DAEMON, "--system", "--nofork", "--nopidfile"])
            self.made_sock = True
            wait_for("the system D-Bus", self.bus_answers, DAEMON_TIMEOUT, 0.1,
                     lambda: ": " + tail(os.path.join(self.logdir, "dbus.log")))
        if not self.has_polkit():
            self.spawn("polkitd", [POLKITD, "--no-debug"])
            wait_for("polkitd on the system bus", self.has_polkit, DAEMON_TIMEOUT, 0.1,
                     lambda: ": " + tail(os.path.join(self.logdir, "polkitd.log")))

    def spawn(self, name, argv):
        log = open(os.path.join(self.logdir, name + ".log"), "w")
        self.procs.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                           stderr=subprocess.STDOUT, env=daemon_env()))
        log.close()

    def close(self):
        stop_procs(list(reversed(self.procs)))
        self.procs = []
        if self.made_sock and os.path.exists(DBUS_SOCK):
            os.unlink(DBUS_SOCK)
        self.made_sock = False


# ---- domains ------------------------------------------------------------------------------

class Domain:
    def __init__(self, lab, kind, name=None):
        self.lab = lab
        self.kind = kind
        self.name = name or PREFIX + kind
        self.dir = os.path.join(lab.tmp, "dom-" + kind + ("-odd" if name else ""))
        os.makedirs(self.dir, exist_ok=True)
        self.sock = os.path.join(lab.sockdir, kind + ("-odd" if name else "") + ".sock") \
            if kind == "bind" else None
        self.console = os.path.join(self.dir, "console.log")
        self.disk = os.path.join(self.dir, "scratch.img")
        self.defined = False

    def xml(self):
        run_what = {"bind": "both", "auto": "agent", "qga": "qga", "off": "agent",
                    "hostile": "hostile"}[self.kind]
        channels = []
        if self.kind in ("bind", "auto", "off", "hostile"):
            src = ("<source mode='bind' path=%s/>" % quoteattr(self.sock)) if self.sock else ""
            channels.append("<channel type='unix'>%s<target type='virtio' name='%s'/>"
                            "</channel>" % (src, GUESTBENCH_CHANNEL))
        if self.kind in ("bind", "qga"):
            channels.append("<channel type='unix'><target type='virtio' name='%s'/></channel>"
                            % QGA_CHANNEL)
        img = self.lab.image
        return """<domain type='qemu'>
  <name>{name}</name>
  <memory unit='MiB'>{mem}</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>{kernel}</kernel>
    <initrd>{initrd}</initrd>
    <cmdline>console=ttyS0 quiet panic=-1 gb.run={run}</cmdline>
  </os>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>{qemu}</emulator>
    <disk type='file' device='disk'>
      <driver name='qemu' type='raw'/>
      <source file={disk}/>
      <target dev='vda' bus='virtio'/>
      <serial>gbscratch</serial>
    </disk>
    <controller type='usb' model='none'/>
    <controller type='virtio-serial' index='0'/>
    <serial type='file'><source path={console}/><target port='0'/></serial>
    {channels}
    <memballoon model='none'/>
  </devices>
</domain>
""".format(name=escape(self.name), mem=MEM_MIB, kernel=escape(os.path.join(img, "vmlinuz")),
           initrd=escape(os.path.join(img, "initrd.img")), run=run_what, qemu=escape(QEMU),
           disk=quoteattr(self.disk), console=quoteattr(self.console),
           channels="\n    ".join(channels))

    def define(self):
        fleet.make_scratch(self.disk, 64)
        path = os.path.join(self.dir, "domain.xml")
        with open(path, "w") as f:
            f.write(self.xml())
        p = virsh("define", path)
        if p.returncode != 0:
            raise RuntimeError("virsh define %s: %s" % (self.name, p.stderr.strip()))
        self.defined = True

    def start(self):
        p = virsh("start", self.name, timeout=120)
        if p.returncode != 0:
            raise RuntimeError("virsh start %s: %s" % (self.name, p.stderr.strip()))

    def state(self):
        p = virsh("domstate", self.name)
        return p.stdout.strip() if p.returncode == 0 else "error: " + p.stderr.strip()

    def live_xml(self):
        return virsh("dumpxml", self.name).stdout

    def channel_path(self, name=GUESTBENCH_CHANNEL):
        """The host end of a channel as the running domain's XML says."""
        import xml.etree.ElementTree as ET
        try:
            root = ET.fromstring(self.live_xml())
        except ET.ParseError:
            return None
        for ch in root.iter("channel"):
            t, s = ch.find("target"), ch.find("source")
            if t is not None and t.get("name") == name and s is not None:
                return s.get("path")
        return None

    def qga_ping(self, timeout=5, uri=URI):
        """guest-ping through libvirt's own qemu-ga link (virsh qemu-agent-command);
        returns None or the error."""
        p = virsh("qemu-agent-command", self.name, '{"execute":"guest-ping"}',
                  "--timeout", str(timeout), uri=uri, timeout=timeout + 30)
        try:
            if p.returncode == 0 and json.loads(p.stdout).get("return") == {}:
                return None
        except ValueError:
            pass
        return "qemu-agent-command: %s" % (p.stderr or p.stdout).strip()

    def ping(self, timeout=5):
        """One guest-sync-delimited + guest-ping through the guestbench channel,
        and guest-ping through libvirt's qemu-ga link where the kind has one;
        returns None or the error."""
        if self.kind in ("bind", "qga"):
            err = self.qga_ping(timeout)
            if err or self.kind == "qga":
                return err
        try:
            path = self.sock or self.channel_path()
            if not path:
                return "no %s channel path in the live XML" % GUESTBENCH_CHANNEL
            s = Session(path, timeout=timeout)
            try:
                s.call("guest-ping")
            finally:
                s.close()
            return None
        except Exception as e:  # noqa: BLE001 - the reason is the answer
            return "%s: %s" % (type(e).__name__, e)

    def wait_agent(self, timeout=BOOT_TIMEOUT):
        last = ["not tried"]

        def ok():
            st = self.state()
            if st != "running":
                raise RuntimeError("%s is %s: %s" % (self.name, st, tail(self.console)))
            last[0] = self.ping()
            return last[0] is None
        wait_for("%s's agent answering" % self.name, ok, timeout, 1.0,
                 lambda: ": %s; console: %s" % (last[0], tail(self.console, 800)))

    def destroy(self):
        if virsh("domstate", self.name).stdout.strip() not in ("shut off", ""):
            virsh("destroy", self.name, timeout=60)

    def undefine(self):
        if self.defined:
            virsh("undefine", self.name, "--nvram", timeout=60)
            if virsh("dominfo", self.name).returncode != 0:
                self.defined = False
        for log in ("/var/log/libvirt/qemu/%s.log" % self.name,):
            try:
                os.unlink(log)
            except OSError:
                pass


# ---- remote -------------------------------------------------------------------------------

def hosts_sshd_module():
    """tests/integration/cli/test-hosts-sshd.py, whose Lab builds the namespaces,
    veths and sshd configurations of the --hosts tests."""
    path = os.path.join(HERE, "..", "integration", "cli", "test-hosts-sshd.py")
    spec = importlib.util.spec_from_file_location("gb_hosts_sshd", path)
    mod = importlib.util.module_from_spec(spec)
    saved = dict(os.environ)
    try:
        # it reads these at import; the lab uses none of what needs them
        os.environ.setdefault("GB_AGENT", "")
        os.environ.setdefault("GB_CLI", "")
        spec.loader.exec_module(mod)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return mod


class Remote:
    def __init__(self, lab):
        self.lab = lab
        self.net = None
        self.uri = None

    def start(self):
        hs = hosts_sshd_module()
        self.net = hs.Lab()  # its own temporary directory, namespaces and teardown
        net = self.net
        net.pick_subnet()
        net.pick_port()
        ns, hdir = net.add_host(1)
        key = os.path.join(net.tmp, "id_ed25519")
        must([hs.SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "virtlab", "-f", key])
        shutil.copy(key + ".pub", os.path.join(net.tmp, "authorized_keys"))
        hostkey = os.path.join(hdir, "ssh_host_ed25519_key")
        must([hs.SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "hv1", "-f", hostkey])
        addr, port = net.addr[1], net.port
        config = os.path.join(hdir, "sshd_config")
        with open(config, "w") as f:
            f.write("\n".join([
                "ListenAddress %s:%d" % (addr, port), "HostKey " + hostkey,
                "PidFile " + os.path.join(hdir, "sshd.pid"),
                "AuthorizedKeysFile " + os.path.join(net.tmp, "authorized_keys"),
                "PermitRootLogin prohibit-password", "PubkeyAuthentication yes",
                "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
                "StrictModes no", "X11Forwarding no", "PrintMotd no", "PrintLastLog no",
                "SetEnv PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8",
                "LogLevel VERBOSE", ""]))
        # A private /run for sshd's /run/sshd, with this machine's /run/libvirt moved
        # into it: the remote side talks to the lab's libvirtd.
        keep = os.path.join(hdir, "libvirt-run")
        os.makedirs(keep, exist_ok=True)
        sshd = [hs.IP, "netns", "exec", ns, "sh", "-ec",
                'mount --bind /run/libvirt "$1"; '
                'mount -t tmpfs -o mode=0755,size=1m gbvirtlab /run; '
                'mkdir -m 0755 /run/sshd /run/libvirt; mount --move "$1" /run/libvirt; '
                'shift; exec "$@"', "sh", keep, hs.SSHD, "-f", config]
        p = run(sshd + ["-t"])
        if p.returncode != 0:
            raise RuntimeError("sshd -t: " + p.stderr.strip())
        log = open(os.path.join(hdir, "sshd.log"), "w")
        proc = subprocess.Popen(sshd + ["-D", "-e"], stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT)
        log.close()
        net.procs.append(proc)

        def listening():
            if proc.poll() is not None:
                raise RuntimeError("sshd exited: " + tail(os.path.join(hdir, "sshd.log")))
            return hs.port_open(addr, port)
        wait_for("sshd on %s:%d" % (addr, port), listening, 15, 0.05)
        with open(hostkey + ".pub") as f:
            kind, pub = f.read().split()[:2]
        known = os.path.join(net.tmp, "known_hosts")
        with open(known, "w") as f:
            f.write("[%s]:%d %s %s\n" % (addr, port, kind, pub))
        self.ssh_config = os.path.join(net.tmp, "ssh_config")
        with open(self.ssh_config, "w") as f:
            f.write("Host *\n  User root\n  IdentityFile %s\n  IdentitiesOnly yes\n"
                    "  IdentityAgent none\n  UserKnownHostsFile %s\n"
                    "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n"
                    "  BatchMode yes\n  ConnectTimeout 10\n  ControlMaster no\n"
                    "  ControlPath none\n  LogLevel ERROR\n" % (key, known))
        wrapper = os.path.join(net.tmp, "ssh")
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\nexec %s -F %s "$@"\n' % (hs.SSH, self.ssh_config))
        os.chmod(wrapper, 0o755)
        os.chmod(net.tmp, 0o755)  # the non-root user may use the wrapper too
        self.addr, self.port, self.key, self.ssh = addr, port, key, wrapper
        self.uri = ("qemu+ssh://root@%s:%d/system?keyfile=%s&no_tty=1&command=%s"
                    % (addr, port, key, wrapper))
        # the same host on a port where nothing listens: a hypervisor that is down
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            dead = s.getsockname()[1]
        self.dead_uri = ("qemu+ssh://root@%s:%d/system?keyfile=%s&no_tty=1&command=%s"
                         % (addr, dead if dead != port else dead + 1, key, wrapper))

    def close(self):
        if self.net:
            self.net.close()
            self.net = None


# ---- the non-root user --------------------------------------------------------------------

class User:
    """gbvirt-PID, in the libvirt group, with a home in the lab's directory."""

    def __init__(self, lab):
        self.name = "gbvirt-%d" % PID
        self.home = os.path.join(lab.tmp, "home-user")
        self.made = False
        self.uid = None

    def start(self):
        must(["useradd", "-M", "-N", "-d", self.home, "-s", "/bin/sh", "-G", "libvirt",
              self.name])
        self.made = True
        pw = pwd.getpwnam(self.name)
        self.uid = pw.pw_uid
        os.makedirs(self.home, mode=0o700, exist_ok=True)
        os.chown(self.home, pw.pw_uid, pw.pw_gid)

    def run(self, argv, env=None, **kw):
        """argv as this user (runuser), with HOME and nothing of root's
        environment but PATH, LANG and ENV."""
        e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
             "HOME": self.home, "USER": self.name, "LOGNAME": self.name}
        e.update(env or {})
        return run(["runuser", "-u", self.name, "--", "env", "-i"] +
                   ["%s=%s" % kv for kv in e.items()] + list(argv), **kw)

    def pids(self):
        found = []
        for d in os.listdir("/proc"):
            try:
                if d.isdigit() and os.stat("/proc/" + d).st_uid == self.uid:
                    found.append(int(d))
            except OSError:
                pass
        return found

    def close(self):
        if self.made:
            # what this run's user still runs, by PID (the user exists only for this run)
            for pid in self.pids():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            run(["userdel", self.name], timeout=30)
            self.made = False


def sweep_stale():
    """Destroys and undefines domains of lab runs whose process is gone (killed
    before its cleanup ran): names gbvl-PID-* of a PID that does not exist.
    Returns their names."""
    import re
    swept = []
    for n in virsh("list", "--all", "--name", timeout=15).stdout.splitlines():
        m = re.match(r"gbvl-(\d+)-", n)
        if not m or os.path.exists("/proc/" + m.group(1)):
            continue
        virsh("destroy", n, timeout=60)
        virsh("undefine", n, "--nvram", timeout=60)
        swept.append(n)
    return swept


# ---- the lab ------------------------------------------------------------------------------

class VirtLab:
    def __init__(self, image_dir, kinds=KINDS, odd_kind="auto", remote=True, user=True,
                 hostile=False):
        # world-readable so that libvirt-qemu reaches the kernel, disks and sockets
        self.tmp = tempfile.mkdtemp(prefix="gb-virtlab-")
        os.chmod(self.tmp, 0o755)
        self.image = os.path.join(self.tmp, "image")
        os.makedirs(self.image)
        for f in ("vmlinuz", "initrd.img"):
            try:
                shutil.copy(os.path.join(image_dir, f), self.image)
            except OSError as e:
                shutil.rmtree(self.tmp, ignore_errors=True)
                raise RuntimeError("virtlab: no guest image in %s (fleet.build_image() makes "
                                   "it): %s" % (image_dir, e)) from None
        self.sockdir = os.path.join(self.tmp, "sockets")
        os.makedirs(self.sockdir)
        self.logdir = os.path.join(self.tmp, "logs")
        os.makedirs(self.logdir)
        try:
            q = pwd.getpwnam("libvirt-qemu")
            os.chown(self.sockdir, q.pw_uid, q.pw_gid)
        except KeyError:
            os.chmod(self.sockdir, 0o1777)
        self.libvirtd = Libvirtd(self.logdir)
        self.bus = SystemBus(self.logdir) if user else None
        self.remote = Remote(self) if remote else None
        self.user = User(self) if user else None
        self.domains = {k: Domain(self, k) for k in kinds}
        self.odd = Domain(self, odd_kind, ODD_NAME) if odd_kind else None
        self.hostile = Domain(self, "hostile") if hostile else None
        self.timings = {}
        self.swept = []
        self.polkit_note = None  # why non-root access cannot work here, if it cannot
        self.closed = False
        atexit.register(self.close)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def all_domains(self):
        return list(self.domains.values()) + ([self.odd] if self.odd else [])

    def every_domain(self):
        """all_domains() and the hostile one."""
        return self.all_domains() + ([self.hostile] if self.hostile else [])

    def _phase(self, name, fn):
        t0 = time.monotonic()
        fn()
        self.timings[name] = time.monotonic() - t0

    def up(self):
        """Starts everything; raises with the reason when a part does not come up."""
        t0 = time.monotonic()
        if self.bus:
            # before libvirtd, which asks polkit over the system bus
            self._phase("dbus+polkit", self.bus.start)
        self._phase("libvirtd", self.libvirtd.start)
        self.swept = sweep_stale()
        if self.bus and self.bus.procs and not self.libvirtd.started:
            # libvirtd keeps the failure of its first system bus connection: one that
            # ran before this bus existed never asks polkit
            self.polkit_note = ("the machine's libvirtd started before the system D-Bus "
                                "ran (restart it with the bus running)")
        self._phase("define", lambda: [d.define() for d in self.every_domain()])
        running = [d for d in self.every_domain() if d.kind != "off"]
        self._phase("start", lambda: in_parallel(Domain.start, running))
        if self.remote:
            self._phase("remote", self.remote.start)
        if self.user:
            self._phase("user", self.user.start)
        self._phase("agents", lambda: self.wait_agents(running))
        self.timings["total"] = time.monotonic() - t0

    def wait_agents(self, doms, timeout=BOOT_TIMEOUT):
        in_parallel(lambda d: d.wait_agent(timeout), doms)

    def virsh(self, *args, uri=URI, user=None, timeout=60):
        return virsh(*args, uri=uri, user=user, timeout=timeout)

    def run_hidden(self, argv, **kw):
        """argv with tmpfs over /run/libvirt and /var/lib/libvirt/qemu (a mount
        namespace of its own): none of the local hypervisor's files are visible."""
        script = ('for d in /run/libvirt /var/lib/libvirt/qemu; do '
                  '[ ! -d "$d" ] || mount -t tmpfs -o size=1m,mode=0755 gbhidden "$d"; done; '
                  'exec "$@"')
        return run(["unshare", "-m", "--propagation", "private", "sh", "-ec", script, "sh"]
                   + list(argv), **kw)

    def close(self):
        if self.closed:
            return
        self.closed = True
        for d in self.every_domain():
            try:
                d.destroy()
                d.undefine()
            except Exception:  # noqa: BLE001 - the rest is cleaned up all the same
                pass
        for part in (self.user, self.remote, self.libvirtd, self.bus):
            if part:
                try:
                    part.close()
                except Exception:  # noqa: BLE001
                    pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def leftovers(self):
        """What of this run is still there (for the tests' cleanup check)."""
        left = []
        names = virsh("list", "--all", "--name", timeout=15).stdout.splitlines() \
            if os.path.exists(SOCK) else []
        left += ["domain " + n for n in names if n.startswith(PREFIX)]
        if os.path.exists(self.tmp):
            left.append(self.tmp)
        if self.user:
            try:
                pwd.getpwnam(self.user.name)
                left.append("user " + self.user.name)
            except KeyError:
                pass
        procs = [] if self.libvirtd.kept else self.libvirtd.procs
        left += ["process %d" % p.pid for p in procs + (self.bus.procs if self.bus else [])
                 if p.poll() is None]
        if self.libvirtd.started and not self.libvirtd.procs:
            left += sorted(state_files() - self.libvirtd.before)[:10]
        ns = run(["ip", "netns", "list"], timeout=10).stdout
        if "gbtest-%d-" % PID in ns:
            left.append("netns gbtest-%d-*" % PID)
        return left


def on_signal(signum, frame):
    # unwinds into the caller's finally/with: the lab is always taken down
    raise SystemExit(128 + signum)


def handle_signals():
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)


__all__ = ["VirtLab", "Libvirtd", "SystemBus", "Domain", "Remote", "User", "virsh",
           "skip_reason", "handle_signals", "KINDS", "PREFIX", "ODD_NAME", "URI"]
