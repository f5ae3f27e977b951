# SPDX-License-Identifier: GPL-2.0-or-later
"""The Windows agent under wine, for the tests that talk to it (imported, never
run as a test): a wine prefix of a test's own, a pty relayed to a unix socket
as the agent's COM port, and the MSI installed and started in it.

Under wine: services end once no user process is left, so a `wine cmd` is
kept running; wineboot returns before the prefix is ready (an msiexec started
then had its service start fail and rolled the install back), so the prefix
is waited for with `wineserver -w`; COM ports are `dosdevices/comN` links;
every command's output goes to files (msiexec never finished with pipes as
its stdout) and has a time limit (a hung one fails its step, not the test).
"""
import glob
import os
import pty
import select
import socket
import subprocess
import threading
import tty

SERVICE = "guestbench-agent"
WINE_STEP_S = 180


class Wine:
    """A wine prefix of the test's own; every command's output goes to files
    (msiexec never finished with pipes as its stdout)."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.prefix = os.path.join(tmp, "prefix")
        self.env = dict(os.environ)
        self.env.update({"WINEPREFIX": self.prefix, "WINEDEBUG": "-all",
                         # no Mono or Gecko download prompts
                         "WINEDLLOVERRIDES": "mscoree=;mshtml="})
        self.env.pop("DISPLAY", None)
        self.env.pop("WAYLAND_DISPLAY", None)
        self.keeper = None
        self.n = 0

    def run(self, args, timeout=WINE_STEP_S):
        """(exit status, output) of a wine command; status None when it hung."""
        self.n += 1
        out = os.path.join(self.tmp, "wine-%02d.log" % self.n)
        with open(out, "w") as f:
            try:
                rc = subprocess.run(["wine"] + args, stdin=subprocess.DEVNULL, stdout=f,
                                    stderr=subprocess.STDOUT, env=self.env,
                                    timeout=timeout).returncode
            except subprocess.TimeoutExpired:
                rc = None
        with open(out, errors="replace") as f:
            return rc, f.read()

    def boot(self):
        self.n += 1
        with open(os.path.join(self.tmp, "wineboot.log"), "w") as f:
            rc = subprocess.run(["wineboot", "-i"], stdin=subprocess.DEVNULL, stdout=f,
                                stderr=subprocess.STDOUT, env=self.env,
                                timeout=WINE_STEP_S).returncode
            # wineboot returns while the prefix is still being set up: an
            # msiexec started then had its service start fail and the whole
            # install rolled back
            subprocess.run(["wineserver", "-w"], stdin=subprocess.DEVNULL, stdout=f,
                           stderr=subprocess.STDOUT, env=self.env, timeout=WINE_STEP_S)
        # a user process for as long as the test runs: without one, wineserver
        # ends and takes the services with it
        self.keeper = subprocess.Popen(["wine", "cmd"], stdin=subprocess.PIPE,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       env=self.env)
        return rc

    def unix_path(self, windows_path):
        """C:\\x\\y in this prefix, as a path here."""
        assert windows_path[1:3] == ":\\"
        return os.path.join(self.prefix, "drive_c", *windows_path[3:].split("\\"))

    def service_state(self):
        rc, out = self.run(["sc", "query", SERVICE], timeout=60)
        for line in out.splitlines():
            if "STATE" in line:
                return line.split()[-1]
        return "absent" if rc not in (0, None) else "unknown: %r" % out[-300:]

    def shutdown(self):
        if self.keeper is not None:
            try:
                self.keeper.stdin.close()
            except OSError:
                pass
        subprocess.run(["wineserver", "-k"], env=self.env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        if self.keeper is not None:
            try:
                self.keeper.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.keeper.kill()


class PtyRelay:
    """The host end of a serial port: a pty whose slave wine opens as COM5,
    relayed to a unix socket the CLI connects to (one client at a time, as
    QEMU's chardev socket). What the agent writes while no client is there is
    dropped, as QEMU drops it."""

    def __init__(self, sock_path):
        self.master, self.slave = pty.openpty()
        # raw, no echo: a serial line, not a terminal; the slave stays open
        # here so that wine closing and reopening it is no hang-up
        tty.setraw(self.slave)
        self.slave_path = os.ttyname(self.slave)
        self.sock_path = sock_path
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(sock_path)
        self.listener.listen(4)
        self.client = None
        self.stopping = False
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.stopping:
            fds = [self.master, self.listener] + ([self.client] if self.client else [])
            r, _, _ = select.select(fds, [], [], 0.2)
            if self.listener in r and self.client is None:
                self.client, _ = self.listener.accept()
            if self.master in r:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    data = b""
                if data and self.client is not None:
                    try:
                        self.client.sendall(data)
                    except OSError:
                        self.drop()
            if self.client is not None and self.client in r:
                try:
                    data = self.client.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    self.drop()
                else:
                    view = memoryview(data)
                    while view:
                        _, w, _ = select.select([], [self.master], [], 1)
                        if w:
                            view = view[os.write(self.master, view):]

    def drop(self):
        self.client.close()
        self.client = None

    def close(self):
        self.stopping = True
        self.thread.join(timeout=5)
        for fd in (self.master, self.slave):
            os.close(fd)
        self.listener.close()



def find_msi(win_dir):
    """The one MSI scripts/cross-build --windows left in win_dir, or None."""
    msis = glob.glob(os.path.join(win_dir, "guestbench-agent-*-x64.msi"))
    return msis[0] if len(msis) == 1 else None


class WindowsGuest:
    """The Windows agent's MSI installed in a prefix under tmp, its service on
    COM5, reachable at .sock like a guest's port. A context manager: the
    prefix, its wineserver and the relay go at the end."""

    def __init__(self, tmp, msi):
        self.tmp = tmp
        self.msi = msi
        self.wine = Wine(tmp)
        self.relay = None
        self.sock = os.path.join(tmp, "com5.sock")

    def conf_dir(self):
        return self.wine.unix_path("C:\\ProgramData\\guestbench")

    def start(self, config="[general]\nmethod=isa-serial\npath=COM5\n", before_install=None):
        """Boots the prefix, maps COM5, writes agent.conf, calls before_install(wine) if
        given, installs; (wineboot status, install status, output)."""
        boot = self.wine.boot()
        if before_install is not None:
            before_install(self.wine)
        self.relay = PtyRelay(self.sock)
        dosdev = os.path.join(self.wine.prefix, "dosdevices", "com5")
        if os.path.lexists(dosdev):
            os.unlink(dosdev)
        os.symlink(self.relay.slave_path, dosdev)
        os.makedirs(self.conf_dir(), exist_ok=True)
        with open(os.path.join(self.conf_dir(), "agent.conf"), "w") as f:
            f.write(config)
        rc, out = self.wine.run(["msiexec", "/i", self.msi, "/qn"])
        return boot, rc, out

    def log(self):
        path = os.path.join(self.conf_dir(), "agent.log")
        if not os.path.exists(path):
            return ""
        with open(path, errors="replace") as f:
            return f.read()

    def close(self):
        self.wine.shutdown()
        if self.relay is not None:
            self.relay.close()
            self.relay = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
