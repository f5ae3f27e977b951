"""The host view of libvirt domains (audit --qmp libvirt:DOMAIN), checked in the
lab of test-libvirt.py."""


def cases(lab):
    """Called with the lab up; checks through gbtest.check()."""
