# SPDX-License-Identifier: GPL-2.0-or-later
"""Bad input a host can send an agent, as bytes, and a way to collect what an
agent answers to each (imported by tests; never run as a test).

Each case is sent on a fresh connection, followed by a guest-sync-delimited
with an id of its own; everything the agent writes before that sync's answer
is its answer to the case. Two agents given the same case must answer the
same bytes: the Windows agent's test holds it to the Linux agent's answers.
Nothing here waits on a clock: a case ends with the sync's answer, or with
the connection closed (then the answer ends with "<closed>").
"""
import socket

SYNC_ID = 7310


def _deep(n):
    return b'{"execute":"guest-ping","arguments":{"x":' + b"[" * n + b"]" * n + b"}}"


def cases():
    """(name, bytes) pairs: the bad and the ugly, each a line or a few."""
    ping = b'{"execute":"guest-ping"}'
    return [
        ("not JSON", b"this is not json\n"),
        ("a JSON array", b"[1,2,3]\n"),
        ("a JSON string", b'"guest-ping"\n'),
        ("no execute member", b'{"exec":"guest-ping"}\n'),
        ("execute not a string", b'{"execute":42}\n'),
        ("an unknown command", b'{"execute":"guest-no-such-thing"}\n'),
        ("arguments not an object", b'{"execute":"guest-ping","arguments":[1]}\n'),
        ("an unknown argument", b'{"execute":"guest-ping","arguments":{"x":1}}\n'),
        ("sync without id", b'{"execute":"guest-sync-delimited"}\n'),
        ("sync with a string id", b'{"execute":"guest-sync","arguments":{"id":"x"}}\n'),
        ("facts of an unknown section",
         b'{"execute":"gb-get-facts","arguments":{"sections":["nope"]}}\n'),
        ("facts with sections not an array",
         b'{"execute":"gb-get-facts","arguments":{"sections":"cpu"}}\n'),
        ("facts with a path argument",
         b'{"execute":"gb-get-facts","arguments":{"path":"/etc/shadow"}}\n'),
        ("invalid UTF-8 in an id", b'{"execute":"guest-ping","id":"\xc3\x28"}\n'),
        ("an overlong UTF-8 slash", b'{"execute":"guest-ping","id":"\xc0\xaf"}\n'),
        ("a lone surrogate escape", b'{"execute":"guest-ping","id":"\\ud800x"}\n'),
        ("a NUL escape in the command", b'{"execute":"guest-\\u0000ping","id":1}\n'),
        ("control bytes in a string", b'{"execute":"guest-ping","id":"a\x01\x1b"}\n'),
        ("an escape sequence id", b'{"execute":"guest-ping","id":"a\\u001b[2J"}\n'),
        ("numbers at the edges", b'{"execute":"guest-ping","id":[4E-70,1e20,-1E+22]}\n'),
        ("nesting 200 deep", _deep(200) + b"\n"),
        ("nesting 10000 deep", _deep(10000) + b"\n"),
        ("a message over 1 MiB", b'{"execute":"guest-ping","id":"' + b"x" * (1 << 20)
         + b'"}\n'),
        ("0xFF then a request", b"\xff" + ping + b"\n"),
        ("half a request then 0xFF", b'{"execute":"guest-pi\xff' + ping + b"\n"),
        ("NUL bytes between requests", b"\x00\x00" + ping + b"\x00\n"),
        ("two requests on one line", ping + ping + b"\n"),
        ("whitespace only", b"   \n\t\n"),
    ]


def converse(sock_path, data, timeout=60):
    """What the agent at sock_path answers to data (see above), as bytes."""
    sync = b'{"execute":"guest-sync-delimited","arguments":{"id":%d}}\n' % SYNC_ID
    marker = b'{"return": %d}' % SYNC_ID
    marker2 = b'{"return":%d}' % SYNC_ID
    got = b""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(timeout)
        s.connect(sock_path)
        s.sendall(data)
        # a partial request is ended by the 0xFF of the sync, as a host would
        s.sendall(b"\xff" + sync)
        while marker not in got and marker2 not in got:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                return got + b"<no answer>"
            if not chunk:
                return got + b"<closed>"
            got += chunk
    return got.split(marker)[0].split(marker2)[0]
