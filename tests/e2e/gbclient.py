"""A minimal QGA-protocol client for the end-to-end tests.

It does what a host must do on a virtio-serial port: send 0xFF and
guest-sync-delimited with a random id, then discard everything (stale
replies, qemu-ga's parse error for the 0xFF) until the reply with that id.
"""
import json
import random
import socket
import time


class Session:
    def __init__(self, path, timeout=30.0):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        sync_id = random.randint(1, 2**31)
        self.sock.sendall(b"\xff" + json.dumps(
            {"execute": "guest-sync-delimited", "arguments": {"id": sync_id}}).encode())
        deadline = time.monotonic() + timeout
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError("no sync reply from %s" % path)
            msg = self._read_message()
            if isinstance(msg, dict) and msg.get("return") == sync_id:
                return

    def _read_message(self):
        while True:
            self.buf = self.buf.lstrip(b"\xff \r\n\t")
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line, self.buf = self.buf[:nl], self.buf[nl + 1:]
                try:
                    return json.loads(line.replace(b"\xff", b""))
                except ValueError:
                    continue
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("peer closed")
            self.buf += data

    def call(self, execute, arguments=None):
        req = {"execute": execute, "id": random.randint(1, 2**31)}
        if arguments is not None:
            req["arguments"] = arguments
        self.sock.sendall(json.dumps(req).encode() + b"\n")
        while True:
            msg = self._read_message()
            if msg.get("id") == req["id"]:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (execute, msg["error"]["desc"]))
                return msg["return"]

    def close(self):
        self.sock.close()


def guest_exec(path, argv, timeout=60):
    """Runs argv in the guest through qemu-ga's guest-exec; returns (exitcode, stdout)."""
    import base64
    s = Session(path)
    try:
        pid = s.call("guest-exec", {"path": argv[0], "arg": argv[1:],
                                    "capture-output": True})["pid"]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            st = s.call("guest-exec-status", {"pid": pid})
            if st.get("exited"):
                out = base64.b64decode(st.get("out-data", "")).decode(errors="replace")
                return st.get("exitcode"), out
            time.sleep(0.2)
        raise TimeoutError("guest-exec %s did not finish" % argv)
    finally:
        s.close()
