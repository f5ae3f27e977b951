#!/bin/sh
# Builds a small Linux guest for the end-to-end tests from Debian packages only:
# the cloud kernel (apt-get download + dpkg -x), a busybox-static initramfs that
# loads the virtio/ATA/SCSI/NIC modules in dependency order, and the binaries
# given on the command line with every shared library ldd lists.
#
# Usage: build-guest.sh CACHE_DIR OUT_DIR BINARY...
# Produces OUT_DIR/vmlinuz and OUT_DIR/initrd.img. CACHE_DIR keeps the
# downloaded kernel package between runs, so only apt is ever contacted.
set -eu

cache=$1
out=$2
shift 2
mkdir -p "$cache" "$out"
cache=$(cd "$cache" && pwd)
out=$(cd "$out" && pwd)

# The kernel: the newest linux-image-*-cloud-amd64 the meta package points to.
if ! ls "$cache"/linux-image-*-cloud-amd64_*.deb >/dev/null 2>&1; then
	pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
		sed -n 's/.*Depends: \(linux-image-[0-9].*-cloud-amd64\)$/\1/p' | head -n 1)
	if [ -z "$pkg" ]; then
		echo "build-guest: cannot resolve linux-image-cloud-amd64 (run apt-get update)" >&2
		exit 1
	fi
	(cd "$cache" && apt-get download "$pkg" >/dev/null 2>&1) || {
		echo "build-guest: apt-get download $pkg failed" >&2
		exit 1
	}
fi
deb=$(ls "$cache"/linux-image-*-cloud-amd64_*.deb | sort | tail -n 1)
kroot="$cache/kernel"
if [ ! -d "$kroot/boot" ] || [ "$deb" -nt "$kroot/boot" ]; then
	rm -rf "$kroot"
	dpkg -x "$deb" "$kroot"
fi
kver=$(ls "$kroot/lib/modules" | head -n 1)
cp "$kroot"/boot/vmlinuz-"$kver" "$out/vmlinuz"

busybox=$(command -v busybox || echo /bin/busybox)
if ! "$busybox" --list >/dev/null 2>&1 || ! file -L "$busybox" 2>/dev/null | grep -q static; then
	[ -x /bin/busybox ] && busybox=/bin/busybox
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/bin "$stage"/sbin "$stage"/lib/modules "$stage"/proc "$stage"/sys \
	"$stage"/dev "$stage"/tmp "$stage"/run "$stage"/etc "$stage"/var/lib/guestbench \
	"$stage"/usr/bin "$stage"/usr/sbin
cp "$busybox" "$stage/bin/busybox"
for applet in $("$busybox" --list); do
	[ -e "$stage/bin/$applet" ] || ln -s busybox "$stage/bin/$applet"
done

# Modules in dependency order: virtio and its console (the agent's port), the
# disks (virtio-blk, IDE through ata_piix: the cloud kernel has no AHCI, so the
# emulated disk is on -machine pc; the CD-ROM; virtio-scsi) and the NICs
# (virtio-net, and vmxnet3 as the emulated one: the cloud kernel has no e1000).
mods="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_console
virtio_blk scsi_common scsi_mod libata ata_piix sd_mod cdrom sr_mod virtio_scsi failover
net_failover virtio_net vmxnet3"
: >"$stage/lib/modules/order"
for m in $mods; do
	f=$(find "$kroot/lib/modules/$kver" -name "$m.ko" | head -n 1)
	if [ -z "$f" ]; then
		echo "build-guest: module $m not found in $kver" >&2
		exit 1
	fi
	cp "$f" "$stage/lib/modules/"
	echo "$m" >>"$stage/lib/modules/order"
done

# Binaries and the libraries they need, at the same paths.
copy_with_libs() {
	bin=$1
	dest=$2
	mkdir -p "$stage$(dirname "$dest")"
	cp -L "$bin" "$stage$dest"
	ldd "$bin" 2>/dev/null | awk '/=> \//{print $3} /^\t\//{print $1}' | while read -r lib; do
		mkdir -p "$stage$(dirname "$lib")"
		[ -e "$stage$lib" ] || cp -L "$lib" "$stage$lib"
	done
}
for b in "$@"; do
	copy_with_libs "$b" "/usr/bin/$(basename "$b")"
done
if [ -d /etc/ssl ]; then
	mkdir -p "$stage/etc/ssl"
	[ -f /etc/ssl/openssl.cnf ] && cp /etc/ssl/openssl.cnf "$stage/etc/ssl/"
fi
echo "root:x:0:0:root:/root:/bin/sh" >"$stage/etc/passwd"
echo "root:x:0:" >"$stage/etc/group"
cat >"$stage/etc/os-release" <<'OS'
PRETTY_NAME="guestbench e2e guest (busybox)"
NAME="guestbench-e2e"
ID=guestbench-e2e
OS

cp "$(dirname "$0")/guest-init" "$stage/init"
chmod 755 "$stage/init"

(cd "$stage" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$out/initrd.img.tmp"
mv "$out/initrd.img.tmp" "$out/initrd.img"
echo "$kver" >"$out/kernel-version"
