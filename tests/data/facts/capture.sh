#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Copies the files gb-get-facts reads from this machine into a fixture tree,
# recreating sysfs symlinks with their relative targets, and dumps the CPUID
# leaves next to it (DEST.cpuid: "LEAF SUBLEAF EAX EBX ECX EDX" in hex).
#
#   tests/data/facts/capture.sh tests/data/facts/kvm-host-model
#
set -eu

dest=${1:?usage: capture.sh DESTDIR}
mkdir -p "$dest"
dest=$(realpath "$dest")

# A file, stored at its real path; files the kernel refuses to read (speed of
# a virtio NIC with the link down: EINVAL) are left out, as the agent then
# reports null for them, same as on the live system.
cp_file() {
	[ -f "$1" ] || return 0
	real=$(realpath "$1")
	mkdir -p "$dest$(dirname "$real")"
	if ! cat "$1" >"$dest$real" 2>/dev/null; then
		rm -f "$dest$real"
	fi
}

# A symlink, recreated verbatim (sysfs links are relative) in its real parent.
cp_link() {
	[ -L "$1" ] || return 0
	parent=$(realpath "$(dirname "$1")")
	mkdir -p "$dest$parent"
	ln -sfn "$(readlink "$1")" "$dest$parent/$(basename "$1")"
	target=$(realpath "$1")
	if [ -d "$target" ]; then
		mkdir -p "$dest$target"
	fi
}

for f in /proc/cpuinfo /proc/meminfo /proc/stat /proc/sys/kernel/osrelease \
	/proc/sys/kernel/arch /sys/devices/system/cpu/online \
	/sys/kernel/mm/transparent_hugepage/enabled \
	/sys/devices/system/clocksource/clocksource0/current_clocksource \
	/sys/devices/system/clocksource/clocksource0/available_clocksource \
	/sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name; do
	cp_file "$f"
done
cp_link /etc/os-release
cp_file /etc/os-release
cp_file /usr/lib/os-release

for f in /sys/devices/system/cpu/vulnerabilities/*; do
	cp_file "$f"
done
for cpu in /sys/devices/system/cpu/cpu[0-9]*; do
	for f in physical_package_id die_id core_id; do
		cp_file "$cpu/topology/$f"
	done
done
for index in /sys/devices/system/cpu/cpu0/cache/index*; do
	for f in level type size shared_cpu_list; do
		cp_file "$index/$f"
	done
done

for node in /sys/devices/system/node/node*; do
	[ -d "$node" ] || continue
	cp_file "$node/cpulist"
	cp_file "$node/meminfo"
done

for dev in /sys/block/*; do
	cp_link "$dev"
	case "$(basename "$dev")" in
	loop* | ram* | zram*) continue ;;
	esac
	for f in size removable queue/scheduler queue/write_cache queue/logical_block_size \
		queue/physical_block_size queue/rotational device/model device/type; do
		cp_file "$dev/$f"
	done
	cp_link "$dev/device"
	cp_link "$dev/device/driver"
	cp_link "$dev/device/device"
	cp_link "$dev/device/device/driver"
	host=$(realpath "$dev" | tr / '\n' | grep -E '^host[0-9]+$' | tail -n 1 || true)
	if [ -n "$host" ]; then
		cp_link "/sys/class/scsi_host/$host"
		cp_file "/sys/class/scsi_host/$host/proc_name"
	fi
done

for dev in /sys/class/net/*; do
	cp_link "$dev"
	for f in mtu speed; do
		cp_file "$dev/$f"
	done
	for q in "$dev"/queues/rx-* "$dev"/queues/tx-*; do
		[ -d "$q" ] && mkdir -p "$dest$(realpath "$q")"
	done
	cp_link "$dev/device"
	cp_link "$dev/device/driver"
done

# CPUID is an instruction, not a file: dump the leaves the agent asks for.
case "$(uname -m)" in
x86_64 | i?86)
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	cat >"$tmp/dump.c" <<'EOF'
#include <cpuid.h>
#include <stdio.h>
static void dump(unsigned leaf, unsigned sub)
{
	unsigned a, b, c, d;
	__cpuid_count(leaf, sub, a, b, c, d);
	printf("%08x %x %08x %08x %08x %08x\n", leaf, sub, a, b, c, d);
}
int main(void)
{
	unsigned a, b, c, d, max;
	__cpuid(0, max, b, c, d);
	for (unsigned l = 0; l <= max && l < 0x20; l++)
		dump(l, 0);
	__cpuid(1, a, b, c, d);
	if (c & (1u << 31)) {
		for (unsigned l = 0x40000000; l <= 0x4000ff00; l += 0x100) {
			__cpuid(l, a, b, c, d);
			if (a || b || c || d)
				dump(l, 0);
		}
	}
	__cpuid(0x80000000, max, b, c, d);
	for (unsigned l = 0x80000000; l <= max && l < 0x80000020; l++)
		dump(l, 0);
	return 0;
}
EOF
	cc -o "$tmp/dump" "$tmp/dump.c"
	"$tmp/dump" >"$dest.cpuid"
	;;
*)
	echo unavailable >"$dest.cpuid"
	;;
esac

# git keeps no empty directories, and driver links must resolve to one.
find "$dest" -type d -empty -exec touch {}/.keep \;
