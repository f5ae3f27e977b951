#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""libvirt:DOMAIN, --connect, discover and inventories through the real CLI
and libvirt's own test driver (the real libvirt library, no daemon):
test:///default and test:///FILE with a node XML written here, whose domains
are running with a guestbench channel, running with only qemu-ga's, running
with neither, shut off, and one with an odd name. The machine's libvirtd and
the default URI are never used. Argument: "libvirt" when guestbench was built
with libvirt, anything else otherwise. Prints TAP."""
import json
import os
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from gbtest import check, skip, tap_report  # noqa: E402

CLI = os.environ["GB_CLI"]
BUILT = len(sys.argv) > 1 and sys.argv[1] == "libvirt"
ODD = "gb odd.ü-1"


def domain(name, channels, extra=""):
    devs = "".join(
        "<channel type='unix'><source mode='bind' path='%s'/>"
        "<target type='virtio' name='%s'/></channel>" % (path, target)
        for target, path in channels)
    return ("<domain type='test' xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>"
            "<name>%s</name><memory>65536</memory><os><type>hvm</type></os>"
            "<devices>%s</devices>%s</domain>\n" % (name, devs, extra))


def node(tmp, names):
    gb, qga = "org.guestbench.agent.0", "org.qemu.guest_agent.0"
    doms = {
        "gb-run": domain("gb-run", [(gb, tmp + "/run.sock"), (qga, tmp + "/run-qga.sock")]),
        "gb-qga": domain("gb-qga", [(qga, tmp + "/qga.sock")]),
        "gb-none": domain("gb-none", []),
        # runstate 5: VIR_DOMAIN_SHUTOFF
        "gb-off": domain("gb-off", [(gb, tmp + "/off.sock")], "<test:runstate>5</test:runstate>"),
        ODD: domain(ODD, [(gb, tmp + "/odd.sock")]),
    }
    return "<node>\n" + "".join(doms[n] for n in names) + "</node>\n"


def run(*args, env=None):
    e = dict(os.environ)
    e.pop("LIBVIRT_DEFAULT_URI", None)
    e.pop("GUESTBENCH_LIBVIRT_DIR", None)
    if env:
        e.update(env)
    p = subprocess.run([CLI] + list(args), capture_output=True, text=True, timeout=60, env=e)
    return p.returncode, p.stdout, p.stderr


def rows(out):
    """ping's JSON: guest name -> (status, error)."""
    doc = json.loads(out)
    return {g["name"]: (g["status"], g.get("error") or "") for g in doc["guests"]}


def not_built():
    rc, out, err = run("ping", "libvirt:gb-run")
    text = out + err
    check("without libvirt: libvirt:DOMAIN says it needs libvirt",
          rc != 0 and "built without libvirt" in text and "-Dlibvirt=enabled" in text, text)
    rc, out, err = run("ping", "--connect", "test:///default", "libvirt:test")
    check("without libvirt: --connect says it needs libvirt",
          rc != 0 and "built without libvirt" in out + err, out + err)


def ping_classification(uri):
    rc, out, err = run("ping", "--format", "json", "--timeout", "10", "--connect", uri,
                       "libvirt:gb-run", "libvirt:gb-qga", "libvirt:gb-none", "libvirt:gb-off",
                       "libvirt:nope", "libvirt:" + ODD)
    r = rows(out)
    detail = out + err
    check("ping: every guest has its row, rc 3", rc == 3 and len(r) == 6, detail)
    # the test driver has no channels nor agent: the error says which way it tried
    check("ping: guestbench channel is opened through libvirt",
          "cannot open its guestbench channel" in r["libvirt:gb-run"][1], detail)
    check("ping: qemu-ga only goes through libvirt's agent command",
          "qemu-ga (through libvirt)" in r["libvirt:gb-qga"][1], detail)
    none = r["libvirt:gb-none"][1]
    check("ping: no channel names the channel and the XML to add",
          "has no <channel> with <target type='virtio' name='org.guestbench.agent.0'/>" in none
          and "<source mode='bind' path='/run/guestbench/DOMAIN.sock'/>" in none
          and "see 'guestbench discover'" not in none, detail)
    check("ping: shut off is not running",
          r["libvirt:gb-off"][1] == "libvirt domain 'gb-off' is not running (shut off)", detail)
    check("ping: unknown domain names the URI",
          r["libvirt:nope"][1] == "no domain 'nope' on " + uri, detail)
    check("ping: odd name is looked up as is",
          "cannot open its guestbench channel" in r["libvirt:" + ODD][1], detail)
    for bad in ("libvirt:a/b", "libvirt:", "libvirt:..", "libvirt: a"):
        rc, out, err = run("ping", "--connect", uri, bad)
        check("ping %r: usage error rc 2" % bad,
              rc == 2 and "invalid target" in err and out == "", out + err)


def ping_default():
    rc, out, err = run("ping", "--format", "json", "--connect", "test:///default", "libvirt:test")
    r = rows(out)
    check("test:///default: its domain 'test' has no guestbench channel",
          rc == 3 and "has no <channel>" in r.get("libvirt:test", ("", ""))[1], out + err)


def bad_uri(tmp):
    missing = "test://" + tmp + "/missing.xml"
    rc, out, err = run("ping", "--format", "json", "--timeout", "10", "--connect", missing,
                       "libvirt:x")
    r = rows(out)
    check("a URI that fails is the guest's error, naming the URI",
          rc == 3 and r["libvirt:x"][1].startswith("cannot connect to " + missing), out + err)
    rc, out, err = run("ping", "--format", "json", "--timeout", "10", "--connect", missing)
    r = rows(out) if out else {}
    check("--connect alone with a URI that fails: one row named after it",
          rc == 3 and missing in r and "cannot connect to" in r[missing][1], out + err)


def ambiguous(uri, uri2):
    rc, out, err = run("ping", "--format", "json", "--connect", uri, "--connect", uri2,
                       "libvirt:gb-none", "libvirt:gb-qga")
    r = rows(out)
    check("a domain on two URIs is ambiguous, naming both",
          "exists on %s, %s" % (uri, uri2) in r["libvirt:gb-none"][1], out + err)
    check("a domain on one of two URIs is found there",
          "qemu-ga (through libvirt)" in r["libvirt:gb-qga"][1], out + err)


def connect_alone(uri, uri2):
    rc, out, err = run("ping", "--format", "json", "--connect", uri, "--connect", uri2)
    doc = json.loads(out)
    names = [g["name"] for g in doc["guests"]]
    check("--connect without targets: every running domain of each URI, in order",
          names == [ODD, "gb-none", "gb-qga", "gb-run", "gb-none"] and rc == 3, out + err)
    check("--connect without targets: shut-off ones are said on stderr",
          "%s: 1 domain(s) not running, left out" % uri in err, err)


def discover(tmp, uri):
    rc, out, err = run("discover", "--connect", uri, "--format", "json")
    doc = json.loads(out)
    by = {g["name"]: g for g in doc["guests"]}
    check("discover json: every domain", sorted(by) == sorted([ODD, "gb-none", "gb-off",
                                                               "gb-qga", "gb-run"]), out)
    check("discover json: states and reach",
          by["gb-run"]["result"]["reach"] == "channel"
          and by["gb-qga"]["result"]["reach"] == "qga"
          and by["gb-off"]["result"]["state"] == "shut off"
          and by["gb-run"]["result"]["uri"] == uri, out)
    inv = os.path.join(tmp, "inv.ini")
    rc, out, err = run("discover", "--connect", uri, "-o", inv)
    with open(inv, encoding="utf-8") as f:
        text = f.read()
    check("discover -o: stable target, connect and qmp",
          "[guest gb-run]\ntarget=libvirt:gb-run\nconnect=%s\nqmp=libvirt:gb-run\ntags=libvirt\n"
          % uri in text, text)
    check("discover -o: qemu-ga only is tagged qga",
          "[guest gb-qga]\ntarget=libvirt:gb-qga\nconnect=%s\nqmp=libvirt:gb-qga\n"
          "tags=libvirt;qga\n" % uri in text, text)
    check("discover -o: shut off is marked", "[guest gb-off]\n#   shut off now\n" in text, text)
    check("discover -o: no channel is left out with the XML",
          "[guest gb-none]" not in text and "<target type='virtio' name='org.guestbench.agent.0'/>"
          in text, text)
    # what discover wrote is an inventory the CLI reads back, each guest on its URI
    rc, out, err = run("ping", "--format", "json", "--inventory", inv)
    r = rows(out)
    check("discover -o read back: each guest on its connect=",
          "qemu-ga (through libvirt)" in r.get("gb-qga", ("", ""))[1]
          and "not running (shut off)" in r.get("gb-off", ("", ""))[1], out + err)


def inventory(tmp, uri, uri2):
    inv = os.path.join(tmp, "hv.ini")
    with open(inv, "w", encoding="utf-8") as f:
        f.write("[hypervisor hv2]\nconnect=%s\n\n[guest solo]\ntarget=libvirt:gb-qga\n"
                "connect=%s\n" % (uri2, uri))
    rc, out, err = run("ping", "--format", "json", "--inventory", inv)
    doc = json.loads(out)
    got = [(g["name"], g.get("host")) for g in doc["guests"]]
    check("[hypervisor NAME]: its running guests, with their host in json; the others on "
          "this host", got == [("gb-none", "hv2"), ("solo", socket.gethostname())], out + err)
    rc, out, err = run("ping", "--inventory", inv)
    check("[hypervisor NAME]: the table groups by host", "hv2" in out, out + err)
    with open(inv, "w", encoding="utf-8") as f:
        f.write("[hypervisor hv2]\nconnect=%s\ntarget=libvirt:x\n" % uri2)
    rc, out, err = run("ping", "--inventory", inv)
    check("[hypervisor NAME] with target=: rc 2, names the key",
          rc == 2 and "unknown key 'target' in [hypervisor hv2]" in err, out + err)


def usage():
    rc, out, err = run("ping", "qga:/var/lib/libvirt/qemu/channel/target/domain-1-x/"
                       "org.qemu.guest_agent.0")
    check("qga: on libvirt's own socket is refused, rc 2, says libvirt:DOMAIN",
          rc == 2 and "use libvirt:DOMAIN" in err, out + err)
    rc, out, err = run("ping", "qga:/tmp/somewhere/org.qemu.guest_agent.0")
    check("qga: on a socket named like libvirt's is refused too",
          rc == 2 and "use libvirt:DOMAIN" in err, out + err)
    rc, out, err = run("bench", "net", "--connect", "1.2.3.4:5", "unix:/nonexistent.sock")
    check("bench net --connect ADDR:PORT: rc 2, says --host-connect and what --connect is",
          rc == 2 and "--host-connect" in err and "--connect is a libvirt URI" in err, out + err)


def main():
    usage()
    if not BUILT:
        not_built()
        for name in ("ping", "discover", "inventory"):
            skip("libvirt test driver: " + name, "guestbench built without libvirt")
        return tap_report()
    with tempfile.TemporaryDirectory(prefix="gb-virt-") as tmp:
        path = os.path.join(tmp, "node.xml")
        path2 = os.path.join(tmp, "node2.xml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(node(tmp, ["gb-run", "gb-qga", "gb-none", "gb-off", ODD]))
        with open(path2, "w", encoding="utf-8") as f:
            f.write(node(tmp, ["gb-none"]))
        uri, uri2 = "test://" + path, "test://" + path2
        ping_classification(uri)
        ping_default()
        bad_uri(tmp)
        ambiguous(uri, uri2)
        connect_alone(uri, uri2)
        discover(tmp, uri)
        inventory(tmp, uri, uri2)
    return tap_report()


if __name__ == "__main__":
    sys.exit(main())
