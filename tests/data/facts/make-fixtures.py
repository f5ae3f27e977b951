#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes the hand-made gb-get-facts fixture trees (all but kvm-host-model,
which capture.sh copies from a real guest). Layouts follow real guests:
relative sysfs symlinks, files at their real device paths. Run from anywhere:

    tests/data/facts/make-fixtures.py
"""

import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


class Tree:
    def __init__(self, name):
        self.root = os.path.join(HERE, name)
        self.name = name
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(self.root)
        self.cpuid_lines = []

    def path(self, p):
        return os.path.join(self.root, p.lstrip("/"))

    def put(self, p, content, newline=True):
        full = self.path(p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        data = content if isinstance(content, bytes) else content.encode()
        if newline and not isinstance(content, bytes):
            data += b"\n"
        with open(full, "wb") as f:
            f.write(data)

    def mkdir(self, p):
        os.makedirs(self.path(p), exist_ok=True)

    def link(self, p, target_abs=None, raw=None):
        """A symlink at p; relative to target_abs as sysfs makes them, or raw."""
        full = self.path(p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if raw is None:
            raw = os.path.relpath(target_abs, os.path.dirname(p))
            self.mkdir(target_abs)
        os.symlink(raw, full)

    # CPUID: 12-byte signatures and register values.
    def cpuid(self, leaf, sub, a, b, c, d):
        self.cpuid_lines.append("%08x %x %08x %08x %08x %08x" % (leaf, sub, a, b, c, d))

    def cpuid_sig(self, leaf, eax, sig):
        b, c, d = struct.unpack("<III", sig.ljust(12, b"\0"))
        self.cpuid(leaf, 0, eax, b, c, d)

    def finish(self, cpuid_unavailable=False):
        with open(self.root + ".cpuid", "w") as f:
            if cpuid_unavailable:
                f.write("unavailable\n")
            else:
                f.write("# LEAF SUBLEAF EAX EBX ECX EDX (hex); absent leaves read as zeros\n")
                f.write("\n".join(self.cpuid_lines) + "\n")
        for dirpath, dirnames, filenames in os.walk(self.root):
            if not dirnames and not filenames:
                open(os.path.join(dirpath, ".keep"), "w").close()


def x86_cpuinfo(ncpu, vendor, family, model, name, flags):
    blocks = []
    for i in range(ncpu):
        blocks.append(
            "processor\t: %d\nvendor_id\t: %s\ncpu family\t: %d\nmodel\t\t: %d\n"
            "model name\t: %s\nstepping\t: 1\ncpu MHz\t\t: 2095.076\n"
            "physical id\t: 0\nsiblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\n"
            "fpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: 13\nwp\t\t: yes\n"
            "flags\t\t: %s\nbugs\t\t: spectre_v1 spectre_v2\nbogomips\t: 4190.15\n"
            "clflush size\t: 64\ncache_alignment\t: 64\n"
            "address sizes\t: 40 bits physical, 48 bits virtual\npower management:\n"
            % (i, vendor, family, model, name, ncpu, i, ncpu, flags))
    return "\n".join(blocks)


def meminfo(total_kb, huge_total=0, huge_free=0, huge_kb=2048):
    return ("MemTotal:       %d kB\nMemFree:        %d kB\nMemAvailable:   %d kB\n"
            "Buffers:           12345 kB\nCached:           234567 kB\n"
            "HugePages_Total:   %d\nHugePages_Free:    %d\nHugePages_Rsvd:        0\n"
            "HugePages_Surp:        0\nHugepagesize:       %d kB\n"
            "Hugetlb:               %d kB\n"
            % (total_kb, total_kb // 2, total_kb // 2, huge_total, huge_free, huge_kb,
               huge_total * huge_kb))


def base(t, release="6.1.0-26-cloud-amd64", arch="x86_64", clock=("kvm-clock",
         "kvm-clock tsc acpi_pm"), thp="always [madvise] never", mem_kb=4026532,
         ncpu=2, pretty='PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"'):
    t.put("/proc/sys/kernel/osrelease", release)
    t.put("/proc/sys/kernel/arch", arch)
    t.put("/proc/meminfo", meminfo(mem_kb), newline=False)
    t.put("/proc/stat", "cpu  10132 12 5120 881234 301 0 87 1544 0 0\n"
          "cpu0 5066 6 2560 440617 150 0 43 772 0 0\nintr 1234\nctxt 5678\n", newline=False)
    t.put("/sys/devices/system/clocksource/clocksource0/current_clocksource", clock[0])
    t.put("/sys/devices/system/clocksource/clocksource0/available_clocksource", clock[1] + " ")
    t.put("/sys/kernel/mm/transparent_hugepage/enabled", thp)
    t.put("/sys/devices/system/cpu/online", "0-%d" % (ncpu - 1) if ncpu > 1 else "0")
    t.put("/usr/lib/os-release", pretty + '\nNAME="Debian GNU/Linux"\nID=debian\n'
          'VERSION_ID="12"\n', newline=False)
    t.link("/etc/os-release", raw="../usr/lib/os-release")
    t.put("/sys/devices/system/node/node0/cpulist", "0-%d" % (ncpu - 1) if ncpu > 1 else "0")
    t.put("/sys/devices/system/node/node0/meminfo",
          "Node 0 MemTotal:       %d kB\nNode 0 MemFree:        %d kB\n" % (mem_kb, mem_kb // 2),
          newline=False)
    t.mkdir("/sys/block")
    t.mkdir("/sys/class/net")
    t.link("/sys/class/net/lo", "/sys/devices/virtual/net/lo")
    t.put("/sys/devices/virtual/net/lo/mtu", "65536")


def disk(t, name, devpath, sched, cache, size, lbs=512, pbs=512, rot=1, rem=0, model=None,
         scsi_type=None, dev_driver=None):
    """A disk at devpath (its real /sys/devices/... directory)."""
    t.link("/sys/block/" + name, devpath)
    t.put(devpath + "/queue/scheduler", sched)
    t.put(devpath + "/queue/write_cache", cache)
    t.put(devpath + "/queue/logical_block_size", str(lbs))
    t.put(devpath + "/queue/physical_block_size", str(pbs))
    t.put(devpath + "/queue/rotational", str(rot))
    t.put(devpath + "/removable", str(rem))
    t.put(devpath + "/size", str(size))
    return devpath


def scsi_disk(t, name, hostpath, host, hctl, proc_name, driver, **kw):
    """hostpath: the device above hostN (a PCI function, or its virtioN child)."""
    h = hostpath + "/" + host
    sdev = "%s/target%s/%s" % (h, hctl.rsplit(":", 1)[0], hctl)
    devpath = disk(t, name, sdev + "/block/" + name, **kw)
    t.link(devpath + "/device", sdev)
    t.link(sdev + "/driver", "/sys/bus/scsi/drivers/" + driver)
    t.link("/sys/class/scsi_host/" + host, h + "/scsi_host/" + host)
    t.put(h + "/scsi_host/" + host + "/proc_name", proc_name)
    return sdev


def nic(t, name, pcipath, driver, queues, mtu=1500, speed=None, virtio=None):
    dev = pcipath + ("/" + virtio if virtio else "")
    netdir = dev + "/net/" + name
    t.link("/sys/class/net/" + name, netdir)
    t.put(netdir + "/mtu", str(mtu))
    if speed is not None:
        t.put(netdir + "/speed", str(speed))
    for i in range(queues):
        t.mkdir(netdir + "/queues/rx-%d" % i)
        t.mkdir(netdir + "/queues/tx-%d" % i)
    t.link(netdir + "/device", dev)
    bus = "virtio" if virtio else "pci"
    t.link(dev + "/driver", "/sys/bus/%s/drivers/%s" % (bus, driver))


# CPUID words for "AuthenticAMD" / "GenuineIntel" as (ebx, ecx, edx).
AMD = (0x68747541, 0x444D4163, 0x69746E65)
INTEL = (0x756E6547, 0x6C65746E, 0x49656E69)


VULNS_MITIGATED = {
    "meltdown": "Not affected",
    "spec_store_bypass": "Mitigation: Speculative Store Bypass disabled via prctl",
    "spectre_v1": "Mitigation: usercopy/swapgs barriers and __user pointer sanitization",
    "spectre_v2": "Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; "
                  "RSB filling; PBRSB-eIBRS: SW sequence; BHI: SW loop, KVM: SW loop",
    "mds": "Not affected",
}

# What a 6.1 guest kernel says on -cpu qemu64 of an Intel host (no md-clear, no ssbd).
VULNS_QEMU64 = {
    "meltdown": "Mitigation: PTI",
    "spec_store_bypass": "Vulnerable",
    "spectre_v1": "Mitigation: usercopy/swapgs barriers and __user pointer sanitization",
    "spectre_v2": "Mitigation: Retpolines; STIBP: disabled; RSB filling; "
                  "PBRSB-eIBRS: Not affected; BHI: Retpoline",
    "mds": "Vulnerable: Clear CPU buffers attempted, no microcode; SMT Host state unknown",
}


def vulns(t, table):
    for name, text in table.items():
        t.put("/sys/devices/system/cpu/vulnerabilities/" + name, text)


def topology(t, ncpu, threads=1, l2_shared=1):
    """cpuN/topology as one socket, one die; cpu0's caches like a KVM guest's."""
    for i in range(ncpu):
        top = "/sys/devices/system/cpu/cpu%d/topology/" % i
        t.put(top + "physical_package_id", "0")
        t.put(top + "die_id", "0")
        t.put(top + "core_id", str(i // threads))
    caches = [(1, "Data", "32K", "0"), (1, "Instruction", "32K", "0"),
              (2, "Unified", "1024K", "0-%d" % (l2_shared - 1) if l2_shared > 1 else "0"),
              (3, "Unified", "16384K", "0-%d" % (ncpu - 1) if ncpu > 1 else "0")]
    for n, (level, kind, size, shared) in enumerate(caches):
        d = "/sys/devices/system/cpu/cpu0/cache/index%d/" % n
        t.put(d + "level", str(level))
        t.put(d + "type", kind)
        t.put(d + "size", size)
        t.put(d + "shared_cpu_list", shared)


def leaf0(t, maxleaf, vendor):
    b, c, d = vendor
    t.cpuid(0, 0, maxleaf, b, c, d)


def qemu64():
    """-machine pc -cpu qemu64 under TCG: IDE disk via ata_piix, vmxnet3 NIC."""
    t = Tree("qemu64")
    base(t, clock=("tsc", "tsc hpet acpi_pm"), thp="[always] madvise never")
    t.put("/proc/cpuinfo", x86_cpuinfo(
        2, "AuthenticAMD", 15, 107, "QEMU Virtual CPU version 2.5+",
        "fpu de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx "
        "fxsr sse sse2 syscall nx lm rep_good nopl cpuid extd_apicid pni cx16 hypervisor "
        "lahf_lm svm 3dnowprefetch vmmcall"), newline=False)
    t.put("/sys/class/dmi/id/sys_vendor", "QEMU")
    t.put("/sys/class/dmi/id/product_name", "Standard PC (i440FX + PIIX, 1996)")
    scsi_disk(t, "sda", "/sys/devices/pci0000:00/0000:00:01.1/ata1", "host0", "0:0:0:0",
              "ata_piix", "sd", sched="[mq-deadline] none", cache="write through",
              size=20971520, model="QEMU HARDDISK")
    t.put("/sys/devices/pci0000:00/0000:00:01.1/ata1/host0/target0:0:0/0:0:0:0/model",
          "QEMU HARDDISK   ")
    t.put("/sys/devices/pci0000:00/0000:00:01.1/ata1/host0/target0:0:0/0:0:0:0/type", "0")
    nic(t, "ens4", "/sys/devices/pci0000:00/0000:00:04.0", "vmxnet3", 2, speed=10000)
    vulns(t, VULNS_QEMU64)
    topology(t, 2)
    leaf0(t, 0xD, AMD)
    # pni cx16 hypervisor; no aes, pclmulqdq, avx.
    t.cpuid(1, 0, 0x000F6B1, 0x00000800, 0x80802001, 0x078BFBFF)
    t.cpuid(0x80000000, 0, 0x8000000A, *AMD)
    t.cpuid(0x80000001, 0, 0x000F6B1, 0, 0x00000105, 0x2191ABFF)
    t.cpuid_sig(0x40000000, 0x40000001, b"TCGTCGTCGTCG")
    t.finish()


def cpu_host():
    """-cpu host on an Intel host with Hyper-V enlightenments: KVM behind "Microsoft Hv"."""
    t = Tree("cpu-host")
    base(t, ncpu=4, mem_kb=8152360)
    t.put("/proc/cpuinfo", x86_cpuinfo(
        4, "GenuineIntel", 6, 106, "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz",
        "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush "
        "mmx fxsr sse sse2 ss syscall nx pdpe1gb rdtscp lm constant_tsc arch_perfmon "
        "rep_good nopl xtopology cpuid tsc_known_freq pni pclmulqdq vmx ssse3 fma cx16 pdcm "
        "pcid sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c "
        "rdrand hypervisor lahf_lm abm 3dnowprefetch fsgsbase bmi1 avx2 smep bmi2 erms "
        "invpcid avx512f avx512dq rdseed adx smap clflushopt clwb avx512cd sha_ni avx512bw "
        "avx512vl xsaveopt xsavec xgetbv1 xsaves arat avx512vbmi umip pku ospke avx512_vbmi2 "
        "gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq rdpid md_clear "
        "arch_capabilities"), newline=False)
    dev = disk(t, "vda", "/sys/devices/pci0000:00/0000:00:04.0/virtio1/block/vda",
               sched="[none] mq-deadline", cache="write back", size=41943040, pbs=4096)
    t.link(dev + "/device", "/sys/devices/pci0000:00/0000:00:04.0/virtio1")
    t.link("/sys/devices/pci0000:00/0000:00:04.0/virtio1/driver", "/sys/bus/virtio/drivers/virtio_blk")
    t.put("/sys/devices/pci0000:00/0000:00:04.0/virtio1/device", "0x0002")
    nic(t, "eth0", "/sys/devices/pci0000:00/0000:00:03.0", "virtio_net", 4, speed=-1,
        virtio="virtio0")
    vulns(t, VULNS_MITIGATED)
    topology(t, 4, threads=2, l2_shared=2)
    leaf0(t, 0x1B, INTEL)
    # aes pclmulqdq avx vmx hypervisor (+ sse3, ssse3, fma, cx16, sse4.x, x2apic, ...).
    t.cpuid(1, 0, 0x000606A6, 0x00040800, 0xFEFA3223, 0x0F8BFBFF)
    # avx2 (b5), sha (b29) in EBX; vaes (c9), vpclmulqdq (c10) in ECX.
    t.cpuid(7, 0, 0, 0xF3BFA7EB | (1 << 5) | (1 << 29), 0x00405F4E | (1 << 9) | (1 << 10),
            0xBC000410)
    t.cpuid(0x80000000, 0, 0x80000008, 0, 0, 0)
    t.cpuid(0x80000001, 0, 0, 0, 0x00000121, 0x2C100800)
    # XSAVE states x87 SSE AVX opmask ZMM_Hi256 Hi16_ZMM: AVX-512 usable (x86-64-v4).
    t.cpuid(0xD, 0, 0xE7, 0x340, 0xA88, 0)
    t.cpuid_sig(0x40000000, 0x40000010, b"Microsoft Hv")
    t.cpuid_sig(0x40000100, 0x40000101, b"KVMKVMKVM")
    # Past a hypervisor's range some CPUs repeat another leaf: not a signature.
    t.cpuid(0x40000200, 0, 0x00000A88, 0x00000A88, 0x00000000, 0x00000A88)
    t.finish()


def virtio_scsi():
    t = Tree("virtio-scsi")
    base(t)
    t.put("/proc/cpuinfo", x86_cpuinfo(2, "AuthenticAMD", 25, 1, "AMD EPYC 7713 64-Core Processor",
                                        "fpu sse sse2 hypervisor aes pclmulqdq avx avx2"),
          newline=False)
    vio = "/sys/devices/pci0000:00/0000:00:05.0/virtio2"
    sdev = scsi_disk(t, "sda", vio, "host2", "2:0:0:0", "virtio_scsi", "sd",
                     sched="[mq-deadline] kyber bfq none", cache="write back", size=104857600,
                     pbs=4096, rot=0, model="QEMU HARDDISK")
    t.put(sdev + "/model", "QEMU HARDDISK   ")
    t.put(sdev + "/type", "0")
    t.link(vio + "/driver", "/sys/bus/virtio/drivers/virtio_scsi")
    nic(t, "enp0s3", "/sys/devices/pci0000:00/0000:00:03.0", "e1000", 1, speed=1000)
    leaf0(t, 0x10, AMD)
    t.cpuid(1, 0, 0x00A00F11, 0, 0x92000001 | (1 << 28), 0x078BFBFF)
    t.cpuid(7, 0, 0, 1 << 5, 0, 0)
    t.cpuid(0x80000000, 0, 0x80000021, *AMD)
    t.cpuid(0x80000001, 0, 0, 0, 0, 0)
    t.cpuid_sig(0x40000000, 0x40000001, b"KVMKVMKVM")
    t.finish()


def nvme():
    t = Tree("nvme")
    base(t, clock=("tsc", "tsc kvm-clock acpi_pm"))
    t.put("/proc/cpuinfo", x86_cpuinfo(1, "GenuineIntel", 6, 85, "Intel Xeon Processor (Cascadelake)",
                                        "fpu sse sse2 hypervisor aes"), newline=False)
    ctrl = "/sys/devices/pci0000:00/0000:00:06.0/nvme/nvme0"
    dev = disk(t, "nvme0n1", ctrl + "/nvme0n1", sched="[none] mq-deadline", cache="write back",
               size=209715200, rot=0)
    t.link(dev + "/device", ctrl)
    t.link(ctrl + "/device", "/sys/devices/pci0000:00/0000:00:06.0")
    t.link("/sys/devices/pci0000:00/0000:00:06.0/driver", "/sys/bus/pci/drivers/nvme")
    t.put(ctrl + "/model", "QEMU NVMe Ctrl                          ")
    nic(t, "eth0", "/sys/devices/pci0000:00/0000:00:03.0", "e1000e", 1, speed=1000)
    leaf0(t, 0xD, INTEL)
    t.cpuid(1, 0, 0x00050656, 0, (1 << 31) | (1 << 25), 0x0F8BFBFF)
    t.cpuid_sig(0x40000000, 0x40000001, b"KVMKVMKVM")
    t.finish()


def numa():
    t = Tree("numa")
    base(t, ncpu=4, thp="always madvise [never]", mem_kb=16303200)
    t.put("/proc/meminfo", meminfo(16303200, 512, 500, 2048), newline=False)
    t.put("/proc/cpuinfo", x86_cpuinfo(4, "GenuineIntel", 6, 85, "Intel Xeon Processor (Skylake, IBRS)",
                                        "fpu sse sse2 hypervisor"), newline=False)
    t.put("/sys/devices/system/node/node0/cpulist", "0-1")
    t.put("/sys/devices/system/node/node0/meminfo",
          "Node 0 MemTotal:        8151600 kB\nNode 0 MemFree:         7000000 kB\n", newline=False)
    # node1: CPUs but no memory (memoryless); node10: memory only (no CPUs).
    t.put("/sys/devices/system/node/node1/cpulist", "2-3")
    t.put("/sys/devices/system/node/node1/meminfo",
          "Node 1 MemTotal:              0 kB\nNode 1 MemFree:               0 kB\n", newline=False)
    t.put("/sys/devices/system/node/node10/cpulist", "")
    t.put("/sys/devices/system/node/node10/meminfo",
          "Node 10 MemTotal:        8151600 kB\n", newline=False)
    t.put("/sys/devices/system/node/online", "0-1,10")
    t.put("/sys/devices/system/node/possible", "0-1,10")
    leaf0(t, 0xD, INTEL)
    t.cpuid(1, 0, 0x00050654, 0, 1 << 31, 0)
    t.cpuid_sig(0x40000000, 0x40000001, b"KVMKVMKVM")
    t.finish()


def cdrom():
    """-machine q35: AHCI disk and AHCI DVD drive."""
    t = Tree("cdrom")
    base(t, ncpu=1)
    t.put("/proc/cpuinfo", x86_cpuinfo(1, "GenuineIntel", 6, 85, "Intel Xeon Processor (Icelake)",
                                        "fpu sse sse2 hypervisor"), newline=False)
    ahci = "/sys/devices/pci0000:00/0000:00:1f.2"
    sdev = scsi_disk(t, "sda", ahci + "/ata1", "host0", "0:0:0:0", "ahci", "sd",
                     sched="[mq-deadline] none", cache="write back", size=33554432,
                     model="QEMU HARDDISK")
    t.put(sdev + "/model", "QEMU HARDDISK   ")
    t.put(sdev + "/type", "0")
    sdev = scsi_disk(t, "sr0", ahci + "/ata2", "host1", "1:0:0:0", "ahci", "sr",
                     sched="[mq-deadline] none", cache="write through", size=0, lbs=2048,
                     pbs=2048, rem=1)
    t.put(sdev + "/model", "QEMU DVD-ROM    ")
    t.put(sdev + "/type", "5")
    leaf0(t, 0xD, INTEL)
    t.cpuid(1, 0, 0x000606A0, 0, 1 << 31, 0)
    t.cpuid_sig(0x40000000, 0x40000001, b"KVMKVMKVM")
    t.finish()


def aarch64():
    """arm64 virt under KVM: no CPUID, no model name, DMI names the hypervisor."""
    t = Tree("aarch64")
    base(t, release="6.1.0-26-arm64", arch="aarch64", clock=("arch_sys_counter",
         "arch_sys_counter"))
    blocks = []
    for i in range(2):
        blocks.append("processor\t: %d\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes "
                      "pmull sha1 sha2 crc32 atomics cpuid asimdrdm lrcpc dcpop asimddp\n"
                      "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\n"
                      "CPU part\t: 0xd0c\nCPU revision\t: 1\n" % i)
    t.put("/proc/cpuinfo", "\n".join(blocks), newline=False)
    t.put("/sys/class/dmi/id/sys_vendor", "QEMU")
    t.put("/sys/class/dmi/id/product_name", "KVM Virtual Machine")
    dev = disk(t, "vda", "/sys/devices/platform/4010000000.pcie/pci0000:00/0000:00:01.0/virtio1/block/vda",
               sched="[none] mq-deadline", cache="write back", size=20971520)
    t.link(dev + "/device", "/sys/devices/platform/4010000000.pcie/pci0000:00/0000:00:01.0/virtio1")
    t.link("/sys/devices/platform/4010000000.pcie/pci0000:00/0000:00:01.0/virtio1/driver",
           "/sys/bus/virtio/drivers/virtio_blk")
    t.finish(cpuid_unavailable=True)


def broken_missing():
    """Almost nothing there: every member degrades to null with a reason."""
    t = Tree("broken-missing")
    # A disk and a NIC whose directories are empty.
    t.link("/sys/block/vda", "/sys/devices/pci0000:00/0000:00:04.0/virtio1/block/vda")
    t.link("/sys/class/net/eth0", "/sys/devices/pci0000:00/0000:00:03.0/virtio0/net/eth0")
    # A device link whose driver link is gone.
    t.link("/sys/devices/pci0000:00/0000:00:03.0/virtio0/net/eth0/device",
           "/sys/devices/pci0000:00/0000:00:03.0/virtio0")
    # The NUMA directory is a file: "exists but cannot be listed".
    t.put("/sys/devices/system/node", "not a directory")
    # A SCSI disk whose host has no proc_name: bus from the path alone.
    h = "/sys/devices/pci0000:00/0000:00:05.0/virtio2/host2"
    t.link("/sys/block/sdb", h + "/target2:0:0/2:0:0:0/block/sdb")
    t.link(h + "/target2:0:0/2:0:0:0/block/sdb/device", h + "/target2:0:0/2:0:0:0")
    t.link("/sys/class/scsi_host/host2", h + "/scsi_host/host2")
    # hypervisor bit set, but the vendor leaves are empty.
    leaf0(t, 0xD, INTEL)
    t.cpuid(1, 0, 0, 0, 1 << 31, 0)
    t.finish()


def broken_garbage():
    """Files with the wrong content: non-numbers, huge numbers, binary, bad lists, escapes."""
    t = Tree("broken-garbage")
    t.put("/proc/cpuinfo", b"processor\t: 0\nmodel name\t: \xff\xfe\x00garbage\n")
    t.put("/sys/devices/system/cpu/online", "0-")
    t.put("/proc/sys/kernel/arch", "x86 64")
    t.put("/proc/meminfo", "MemTotal:       lots kB\n"
          "HugePages_Total:   99999999999999999999\nHugePages_Free: -1\n", newline=False)
    t.put("/sys/kernel/mm/transparent_hugepage/enabled", "always madvise never")
    t.put("/proc/stat", "cpu  1 2 3 4\n", newline=False)
    t.put("/sys/devices/system/clocksource/clocksource0/current_clocksource", "")
    t.put("/sys/devices/system/clocksource/clocksource0/available_clocksource",
          b"tsc \x01\x02 hpet\n")
    t.put("/sys/devices/system/node/node0/cpulist", "0-3,2-x")
    t.put("/sys/devices/system/node/node0/meminfo", "Node 0 MemFree: 1 kB\n", newline=False)
    # The kernel release is a directory; os-release has broken quoting.
    t.mkdir("/proc/sys/kernel/osrelease")
    t.put("/etc/os-release", 'NAME=x\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)\n',
          newline=False)
    vio = "/sys/devices/pci0000:00/0000:00:04.0/virtio1"
    dev = disk(t, "vda", vio + "/block/vda", sched="none mq-deadline", cache="write sideways",
               size="-5", lbs="abc", pbs="99999999999999999999", rot=2, rem="")
    t.link(dev + "/device", vio)
    t.link(vio + "/driver", "/sys/bus/virtio/drivers/virtio_blk")
    t.put(vio + "/model", b"\x00\x01\x02")
    # A disk whose link climbs out of the sysroot, and one pointing at an absolute path.
    t.link("/sys/block/evil", raw="../../../../../../../../../../etc")
    # Absolute targets restart at the sysroot (as in a chroot): this one is just missing.
    t.link("/sys/block/abs", raw="/nonexistent/block/abs")
    netdir = "/sys/devices/pci0000:00/0000:00:03.0/virtio0/net/eth0"
    t.link("/sys/class/net/eth0", netdir)
    t.put(netdir + "/mtu", "1500x")
    t.put(netdir + "/speed", "fast")
    t.put(netdir + "/queues", "not a directory")
    # A loop of links.
    t.link("/sys/class/net/loop1", raw="loop2")
    t.link("/sys/class/net/loop2", raw="loop1")
    # hypervisor bit set with an unknown signature holding control bytes.
    leaf0(t, 0x7, INTEL)
    t.cpuid(1, 0, 0, 0, (1 << 31) | (1 << 25), 0)
    t.cpuid_sig(0x40000000, 0x40000001, b"Evil\x01Hv\\\x7f")
    # Vulnerability files the kernel never writes: binary, oversized, several lines.
    vd = "/sys/devices/system/cpu/vulnerabilities/"
    t.put(vd + "mds", b"Vulner\x00able\xff\n")
    t.put(vd + "huge", "Vulnerable " * 500)
    t.put(vd + "two_lines", "Vulnerable\nNot affected")
    t.put(vd + "spectre_v1", "Mitigation: __user pointer sanitization")
    t.mkdir(vd + "a_directory")
    # Topology with an id that is not a number.
    t.put("/sys/devices/system/cpu/cpu0/topology/physical_package_id", "zero")
    t.finish()


def arm_cpuinfo(ncpu, features, implementer, part, variant="0x0", revision=0):
    return "\n".join("processor\t: %d\nBogoMIPS\t: 125.00\nFeatures\t: %s\n"
                     "CPU implementer\t: %s\nCPU architecture: 8\nCPU variant\t: %s\n"
                     "CPU part\t: %s\nCPU revision\t: %d\n"
                     % (i, features, implementer, variant, part, revision)
                     for i in range(ncpu))


def hugepage_sizes(t, sizes_kb):
    for kb in sizes_kb:
        t.put("/sys/kernel/mm/hugepages/hugepages-%dkB/nr_hugepages" % kb, "0")


def arm_qemu_max():
    """qemu-system-aarch64 -M virt -cpu max under TCG, direct kernel boot: no DMI,
    the device tree's root says linux,dummy-virt; MIDR implementer 0 part 'Q'.
    Features in the kernel's order for the extensions QEMU 7.2's max model has."""
    t = Tree("arm-qemu-max")
    base(t, release="6.1.0-26-cloud-arm64", arch="aarch64",
         clock=("arch_sys_counter", "arch_sys_counter"))
    t.put("/proc/cpuinfo", arm_cpuinfo(
        2, "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm "
        "jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc "
        "flagm ssbs sb paca pacg dcpodp sve2 sveaes svepmull svebitperm svesha3 svesm4 "
        "flagm2 frint svei8mm svebf16 i8mm bf16 dgh rng bti", "0x00", "0x051"), newline=False)
    t.put("/sys/firmware/devicetree/base/compatible", b"linux,dummy-virt\0")
    t.put("/sys/firmware/devicetree/base/model", b"linux,dummy-virt\0")
    # 4K base pages: contiguous-PTE 64K, PMD 2M, contiguous-PMD 32M, PUD 1G
    hugepage_sizes(t, [64, 2048, 32768, 1048576])
    t.finish(cpuid_unavailable=True)


def arm_a57_xen():
    """A Cortex-A57 (r1p0) Xen guest with a 64K-page kernel: the device tree's
    hypervisor node names Xen."""
    t = Tree("arm-a57-xen")
    base(t, release="6.1.0-26-arm64-64k", arch="aarch64", ncpu=1,
         clock=("arch_sys_counter", "arch_sys_counter"))
    t.put("/proc/cpuinfo", arm_cpuinfo(1, "fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid",
                                        "0x41", "0xd07", variant="0x1"), newline=False)
    t.put("/sys/firmware/devicetree/base/compatible", b"xen,xenvm-4.17\0xen,xenvm\0")
    t.put("/sys/firmware/devicetree/base/hypervisor/compatible", b"xen,xen-4.17\0xen,xen\0")
    t.put("/sys/hypervisor/type", "xen")
    # 64K base pages: contiguous-PTE 2M, PMD 512M, contiguous-PMD 16G
    hugepage_sizes(t, [2048, 524288, 16777216])
    t.finish(cpuid_unavailable=True)


def arm_midr_sysfs():
    """A kernel whose cpuinfo lost the MIDR lines: the register in sysfs names the
    CPU (Neoverse-N1 r3p1, as on Graviton2 and Ampere Altra); /sys/hypervisor/type
    holds something other than xen."""
    t = Tree("arm-midr-sysfs")
    base(t, release="6.1.0-26-cloud-arm64", arch="aarch64", ncpu=1,
         clock=("arch_sys_counter", "arch_sys_counter"))
    t.put("/proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd "
          "evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop "
          "asimddp ssbs\n", newline=False)
    t.put("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", "0x00000000413fd0c1")
    t.put("/sys/devices/system/cpu/cpu0/regs/identification/revidr_el1", "0x0000000000000000")
    t.put("/sys/hypervisor/type", "acrn")
    t.finish(cpuid_unavailable=True)


def arm_broken():
    """arm64 files with the wrong content: MIDR lines that do not parse, a sysfs
    register that is not one, no Features line, a device tree with binary junk."""
    t = Tree("arm-broken")
    base(t, release="6.1.0-26-arm64", arch="aarch64", ncpu=1,
         clock=("arch_sys_counter", "arch_sys_counter"))
    t.put("/proc/cpuinfo", "processor\t: 0\nCPU implementer\t: 0xzz\nCPU variant\t: 0x0\n"
          "CPU part\t: 0xd0c\nCPU revision\t: 1\n", newline=False)
    t.put("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", "0x1234567890abcdef")
    t.put("/sys/firmware/devicetree/base/compatible", b"linux,dummy-\x01virt\0")
    t.put("/sys/firmware/devicetree/base/hypervisor/compatible", b"no terminating NUL")
    t.put("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "0")
    t.mkdir("/sys/kernel/mm/hugepages/hugepages-lotskB")
    t.finish(cpuid_unavailable=True)


for make in (qemu64, cpu_host, virtio_scsi, nvme, numa, cdrom, aarch64, broken_missing,
             broken_garbage, arm_qemu_max, arm_a57_xen, arm_midr_sysfs, arm_broken):
    make()
