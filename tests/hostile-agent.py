#!/usr/bin/env python3
"""A hostile guest agent for the test suite: it listens on a unix socket and speaks
the agent's wire protocol (0xFF resync, guest-sync-delimited, one JSON message per
request), answering each command with what a scenario file says. The CLI must treat
everything it sends as untrusted.

Usage: hostile-agent.py SOCKET SCENARIO.json
The scenario is a JSON object: command name -> the "return" value to answer with
(any JSON), or {"__raw__": TEXT} to send TEXT as it is (no framing added).
gb-bench-status answers {"job": 1, "test": T, "state": "done", "progress": 1,
"result": scenario["gb-bench-result"]} unless the scenario names gb-bench-status;
that result may be {"__zeros__": ...} too.
Replies carry the request's "id". Unknown commands get a CommandNotFound error, as from the real agent.
A "return" value {"__zeros__": N} is an array of N zeros, written without building it
in Python (a huge reply of tiny values); with "__member__": NAME as well, the return
is an object whose member NAME is that array; with "__value__": TEXT, each element is
TEXT (raw JSON) instead of 0. A "return" value {"__drip__": N, "__chunk__": C,
"__interval__": S} is a reply that never ends: its start, then N bytes of array elements
("1000000,"), C bytes every S seconds, and nothing more (a guest that holds the CLI's
buffer without ever finishing its message). With "__stale__" in the scenario, its value
(any of the forms above) is sent as a reply with another id before each
guest-sync-delimited answer: stale replies an earlier client left behind.
With "__qmp__" in the scenario it poses as a QEMU monitor instead: on each connection
it first sends the scenario's "__greeting__" (any of the forms above; absent: a real
QEMU 7.2 greeting; null: none at all), answers qmp_capabilities with {} unless the
scenario names it, and every other command as above.
A "return" value {"__sequence__": [V1, V2, ...]} answers the command's first request
with V1, the next with V2, and so on, starting again after the last (each V any of the
forms here): one agent serves a series of documents, one per CLI run. {"__json__": TEXT}
is a "return" value written as the JSON text TEXT itself (duplicate members, numbers
Python cannot write), inside a reply that carries the request's id.
With HOSTILE_AGENT_LOG set, the name of every command received is appended to that
file, one a line (so a test can tell, e.g., that gb-bench-cancel arrived).
"""
import json
import os
import socket
import sys
import threading
import time


def send(conn, reply, request):
    if isinstance(request, dict) and "id" in request:
        reply["id"] = request["id"]
    conn.sendall(json.dumps(reply, ensure_ascii=False).encode() + b"\n")


ZEROS = {}


def zeros(value):
    """The bytes of {"__zeros__": N, ...} (see the docstring at the top), made once."""
    key = json.dumps(value, sort_keys=True)
    if key not in ZEROS:
        ZEROS[key] = make_zeros(value)
    return ZEROS[key]


def make_zeros(value):
    n = int(value["__zeros__"])
    item = value.get("__value__", "0").encode()
    array = b"[" + (item + b",") * (n - 1) + (item if n > 0 else b"") + b"]"
    if "__member__" in value:
        array = b"{" + json.dumps(value["__member__"]).encode() + b": " + array + b"}"
    return array


def drip(conn, value, request):
    """The start of {"id": ..., "return": {"cpus": [...: value["__drip__"] bytes of
    elements, value["__chunk__"] bytes every value["__interval__"] seconds, never ended."""
    rid = request.get("id") if isinstance(request, dict) else None
    conn.sendall(b'{"id": ' + json.dumps(rid).encode() + b', "return": {"cpus": [')
    left, chunk = int(value["__drip__"]), b"1000000," * (int(value["__chunk__"]) // 8)
    while left > 0:
        conn.sendall(chunk[:left])
        left -= len(chunk)
        time.sleep(float(value["__interval__"]))


def send_return(conn, value, request):
    """{"return": value, "id": ...}; value may be {"__zeros__": N}, {"__drip__": N, ...}
    or {"__raw__": TEXT}."""
    if isinstance(value, dict) and "__drip__" in value:
        drip(conn, value, request)
    elif isinstance(value, dict) and "__raw__" in value:
        conn.sendall(value["__raw__"].encode("utf-8", "surrogateescape"))
    elif isinstance(value, dict) and "__json__" in value:
        rid = request.get("id") if isinstance(request, dict) else None
        conn.sendall(b'{"id": ' + json.dumps(rid).encode() + b', "return": '
                     + value["__json__"].encode("utf-8", "surrogateescape") + b"}\n")
    elif isinstance(value, dict) and "__zeros__" in value:
        rid = request.get("id") if isinstance(request, dict) else None
        conn.sendall(b'{"id": ' + json.dumps(rid).encode() + b', "return": ' + zeros(value)
                     + b"}\n")
    else:
        send(conn, {"return": value}, request)


def log_command(name):
    path = os.environ.get("HOSTILE_AGENT_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write("%s\n" % name)


SEQUENCE = {}
SEQUENCE_LOCK = threading.Lock()


def next_in_sequence(name, value):
    """value, or for {"__sequence__": [...]} the element whose turn it is."""
    if not (isinstance(value, dict) and "__sequence__" in value):
        return value
    items = value["__sequence__"]
    with SEQUENCE_LOCK:
        turn = SEQUENCE.get(name, 0)
        SEQUENCE[name] = turn + 1
    return items[turn % len(items)]


def answer(conn, scenario, request):
    name = request.get("execute") if isinstance(request, dict) else None
    log_command(name)
    args = request.get("arguments") or {} if isinstance(request, dict) else {}
    if name in ("guest-sync-delimited", "guest-sync"):
        if "__stale__" in scenario:
            send_return(conn, scenario["__stale__"], {"id": -1})
        lead = b"\xff" if name == "guest-sync-delimited" else b""
        conn.sendall(lead + json.dumps({"return": args.get("id")}).encode() + b"\n")
        return
    if name == "gb-bench-start" and name not in scenario:
        reply = {"job": 1}
    elif name == "gb-bench-status" and name not in scenario:
        reply = {"job": 1, "test": scenario.get("gb-bench-test", "aes"), "state": "done",
                 "progress": 1.0, "result": scenario.get("gb-bench-result")}
        result = reply["result"]
        if isinstance(result, dict) and "__zeros__" in result:
            # written around the array's bytes, as a return of zeros is
            reply["result"] = None
            text = json.dumps({"return": reply, "id": request.get("id")}).encode()
            cut = text.index(b'"result": null') + len(b'"result": ')
            conn.sendall(text[:cut] + zeros(result) + text[cut + len(b"null"):] + b"\n")
            return
    elif name in scenario:
        reply = next_in_sequence(name, scenario[name])
    else:
        err = {"class": "CommandNotFound", "desc": "The command %s has not been found" % name}
        send(conn, {"error": err}, request)
        return
    send_return(conn, reply, request)


QEMU_GREETING = {"QMP": {"version": {"qemu": {"micro": 19, "minor": 2, "major": 7},
                                      "package": "Debian 1:7.2+dfsg-7+deb12u7"},
                          "capabilities": ["oob"]}}


def greet(conn, scenario):
    greeting = scenario.get("__greeting__", QEMU_GREETING)
    if greeting is None:
        return
    if isinstance(greeting, dict) and "__raw__" in greeting:
        conn.sendall(greeting["__raw__"].encode("utf-8", "surrogateescape"))
    elif isinstance(greeting, dict) and "__zeros__" in greeting:
        conn.sendall(b'{"QMP": ' + zeros(greeting) + b"}\n")
    else:
        conn.sendall(json.dumps(greeting).encode() + b"\n")


def serve(conn, scenario):
    decoder = json.JSONDecoder()
    buf = ""
    if "__qmp__" in scenario:
        scenario = dict(scenario)
        scenario.setdefault("qmp_capabilities", {})
        try:
            greet(conn, scenario)
        except OSError:
            return
    with conn:
        while True:
            try:
                data = conn.recv(65536)
            except OSError:  # the CLI reset the connection: it is done with this guest
                return
            if not data:
                return
            buf += data.replace(b"\xff", b"").decode("utf-8", "replace")
            while True:
                buf = buf.lstrip()
                if not buf:
                    break
                try:
                    request, end = decoder.raw_decode(buf)
                except ValueError:
                    break
                buf = buf[end:]
                try:
                    answer(conn, scenario, request)
                except OSError:
                    return


def main():
    path, scenario_path = sys.argv[1], sys.argv[2]
    with open(scenario_path, encoding="utf-8") as f:
        scenario = json.load(f)
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(16)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn, scenario), daemon=True).start()


if __name__ == "__main__":
    main()
