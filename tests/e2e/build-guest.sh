#!/bin/sh
# Builds a small Linux guest for the end-to-end tests from Debian packages only:
# the cloud kernel (apt-get download + dpkg -x), a busybox-static initramfs that
# loads the virtio/ATA/SCSI/NIC modules in dependency order, and the binaries
# given on the command line with every shared library they need.
#
# Usage: build-guest.sh [--arch amd64|arm64] CACHE_DIR OUT_DIR BINARY|lib:PACKAGE...
# Produces OUT_DIR/vmlinuz and OUT_DIR/initrd.img for the architecture (default
# amd64, this host's). A BINARY is a path on this host, or deb:PACKAGE:PATH for
# PATH inside the architecture's PACKAGE (apt-get download; for a foreign
# architecture, whose binaries are not installed here). The libraries of a
# foreign binary come from this host's multiarch directories
# (/usr/lib/aarch64-linux-gnu, from `apt-get install LIB:arm64`), then from the
# packages named by lib:PACKAGE arguments: the architecture's PACKAGE, downloaded
# and extracted in the cache, never installed (for libraries that cannot be
# installed beside this host's, or that only a guest's binary needs); only the
# libraries a binary needs go into the image. CACHE_DIR keeps the downloaded
# packages between runs, so only apt is ever contacted.
set -eu

arch=amd64
if [ "${1:-}" = "--arch" ]; then
	arch=${2:-}
	shift 2
fi
case "$arch" in
amd64)
	triplet=x86_64-linux-gnu
	machine="Advanced Micro Devices X86-64"
	;;
arm64)
	triplet=aarch64-linux-gnu
	machine=AArch64
	;;
*)
	echo "build-guest: unknown architecture '$arch' (amd64 or arm64)" >&2
	exit 2
	;;
esac
if [ $# -lt 2 ]; then
	echo "usage: build-guest.sh [--arch amd64|arm64] CACHE_DIR OUT_DIR BINARY|lib:PACKAGE..." >&2
	exit 2
fi
cache=$1
out=$2
shift 2
mkdir -p "$cache" "$out"
cache=$(cd "$cache" && pwd)
out=$(cd "$out" && pwd)
native=$(dpkg --print-architecture)

# download PACKAGE: the newest PACKAGE of $arch as a .deb in the cache (once),
# extracted under $cache/PACKAGE-$arch; prints that directory.
download() {
	dir="$cache/$1-$arch"
	if ! ls "$cache/$1"_*_"$arch".deb >/dev/null 2>&1; then
		(cd "$cache" && apt-get download "$1:$arch" >/dev/null 2>&1) || {
			echo "build-guest: apt-get download $1:$arch failed (dpkg --add-architecture $arch; apt-get update)" >&2
			exit 1
		}
	fi
	deb=$(ls "$cache/$1"_*_"$arch".deb | sort | tail -n 1)
	# dpkg -x gives the files the package's times: a stamp says when it ran
	if [ ! -e "$dir/.extracted" ] || [ "$deb" -nt "$dir/.extracted" ]; then
		rm -rf "$dir"
		dpkg -x "$deb" "$dir"
		touch "$dir/.extracted"
	fi
	echo "$dir"
}

# The binaries first, so that a wrong one fails before any work: each a file
# of the image's architecture; deb:PACKAGE:PATH becomes PATH in the extracted
# package. lib:PACKAGE adds the extracted package's library directories to
# those a foreign binary's libraries are looked up in.
libdirs="/lib/$triplet /usr/lib/$triplet"
n=$#
for b in "$@"; do
	case "$b" in
	lib:*)
		[ "$arch" != "$native" ] || {
			echo "build-guest: $b: lib: is for a foreign architecture's binaries" >&2
			exit 2
		}
		d=$(download "${b#lib:}")
		# its multiarch directories and those below them (librados2's ceph/)
		libdirs="$libdirs $(find "$d/lib/$triplet" "$d/usr/lib/$triplet" -type d 2>/dev/null |
			tr '\n' ' ')"
		continue
		;;
	deb:*:*)
		p=${b#deb:}
		path=${p#*:}
		b="$(download "${p%%:*}")$path"
		;;
	esac
	if [ ! -f "$b" ]; then
		echo "build-guest: no binary $b" >&2
		exit 1
	fi
	m=$(readelf -h "$b" 2>/dev/null | sed -n 's/^ *Machine: *//p')
	if [ "$m" != "$machine" ]; then
		echo "build-guest: $b: ELF machine '${m:-none}', not $arch's ($machine)" >&2
		exit 1
	fi
	set -- "$@" "$b"
done
shift "$n"

# The kernel: the one in the cache, or the newest linux-image-*-cloud-$arch the
# meta package points to.
pkg=$(ls "$cache" | sed -n "s/^\(linux-image-[0-9].*-cloud-$arch\)_.*_$arch\.deb\$/\1/p" |
	sort | tail -n 1)
[ -n "$pkg" ] || pkg=$(apt-cache depends "linux-image-cloud-$arch:$arch" 2>/dev/null |
	sed -n "s/.*Depends: \(linux-image-[0-9].*-cloud-$arch\)\(:$arch\)\{0,1\}\$/\1/p" | head -n 1)
if [ -z "$pkg" ]; then
	echo "build-guest: cannot resolve linux-image-cloud-$arch:$arch (run apt-get update)" >&2
	exit 1
fi
kroot=$(download "$pkg")
kver=$(ls "$kroot/lib/modules" | head -n 1)
cp "$kroot"/boot/vmlinuz-"$kver" "$out/vmlinuz"

# busybox: this host's static one, or the architecture's busybox-static package;
# the applets are the ones this host's busybox lists (the same Debian build).
busybox=$(command -v busybox || echo /bin/busybox)
if ! "$busybox" --list >/dev/null 2>&1 || ! file -L "$busybox" 2>/dev/null | grep -q static; then
	[ -x /bin/busybox ] && busybox=/bin/busybox
fi
guest_busybox=$busybox
[ "$arch" = "$native" ] || guest_busybox="$(download busybox-static)/bin/busybox"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/bin "$stage"/sbin "$stage"/lib/modules "$stage"/proc "$stage"/sys \
	"$stage"/dev "$stage"/tmp "$stage"/run "$stage"/etc "$stage"/var/lib/guestbench \
	"$stage"/usr/bin "$stage"/usr/sbin
cp "$guest_busybox" "$stage/bin/busybox"
for applet in $("$busybox" --list); do
	[ -e "$stage/bin/$applet" ] || ln -s busybox "$stage/bin/$applet"
done

# Modules in dependency order: virtio and its console (the agent's port), the
# disks and the NICs. amd64: virtio-blk, IDE through ata_piix (the cloud kernel
# has no AHCI, so the emulated disk is on -machine pc), the CD-ROM, virtio-scsi,
# virtio-net and vmxnet3 as the emulated NIC (the cloud kernel has no e1000).
# arm64 (-M virt): virtio over PCI and MMIO, virtio-blk and virtio-net.
case "$arch" in
amd64)
	mods="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_console
virtio_blk scsi_common scsi_mod libata ata_piix sd_mod cdrom sr_mod virtio_scsi failover
net_failover virtio_net vmxnet3"
	;;
arm64)
	mods="virtio_ring virtio virtio_mmio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
virtio_console virtio_blk failover net_failover virtio_net"
	;;
esac
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

# Binaries and the libraries they need, at the same paths. A native binary's
# come from ldd; a foreign one's from its ELF headers (interpreter, DT_NEEDED,
# recursively), found in this host's multiarch directories or in an extracted
# lib:PACKAGE, which goes to the path it has in its package.
copy_lib() {
	dest=$1
	case "$1" in
	"$cache"/*)
		dest=${1#"$cache"/}
		dest=/${dest#*/}
		;;
	esac
	mkdir -p "$stage$(dirname "$dest")"
	[ -e "$stage$dest" ] || cp -L "$1" "$stage$dest"
}
foreign_libs() {
	interp=$(readelf -lW "$1" | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
	[ -z "$interp" ] || echo "$interp"
	todo=$1
	seen=" "
	while [ -n "$todo" ]; do
		set -- $todo
		elf=$1
		shift
		todo=$*
		for name in $(readelf -dW "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
			found=
			for d in $libdirs; do
				if [ -e "$d/$name" ]; then
					found="$d/$name"
					break
				fi
			done
			if [ -z "$found" ]; then
				echo "build-guest: $name (needed by $elf) is not in $libdirs (apt-get install the package of it for $arch, or pass lib:PACKAGE)" >&2
				exit 1
			fi
			case "$seen" in
			*" $found "*) continue ;;
			esac
			seen="$seen$found "
			todo="$todo $found"
			echo "$found"
		done
	done
}
copy_with_libs() {
	bin=$1
	dest=$2
	mkdir -p "$stage$(dirname "$dest")"
	cp -L "$bin" "$stage$dest"
	if [ "$arch" = "$native" ]; then
		ldd "$bin" 2>/dev/null | awk '/=> \//{print $3} /^\t\//{print $1}' >"$stage/.libs"
	else
		foreign_libs "$bin" >"$stage/.libs"
	fi
	sort -u "$stage/.libs" | while read -r lib; do
		copy_lib "$lib"
	done
	rm -f "$stage/.libs"
}
for b in "$@"; do
	copy_with_libs "$b" "/usr/bin/$(basename "$b")"
	# the agent answers in its session program and runs each benchmark job in
	# its bench program, both built beside it
	if [ "$(basename "$b")" = guestbench-agent ]; then
		for helper in guestbench-agent-session guestbench-agent-bench; do
			if [ ! -x "$(dirname "$b")/$helper" ]; then
				echo "build-guest: $(dirname "$b")/$helper is missing: the agent needs it" >&2
				exit 1
			fi
			copy_with_libs "$(dirname "$b")/$helper" "/usr/bin/$helper"
		done
	fi
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
