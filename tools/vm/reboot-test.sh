#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The reboot test: kbloom on a whole Debian system, across a clean reboot
# and a crash. Boots Debian's stock kernel under qemu three times on one
# disk, a copy-on-write overlay of the cached root filesystem
# (tools/vm/rootfs.sh), with the test's payload on a second disk: the
# bloomctl package (dpkg -i'd inside the VM at the first boot, so its
# postinst runs there), the modules built for the stock kernel (installed
# into /lib/modules/KVER/updates, then depmod) and tools/vm/reboot-guest.sh,
# which does and checks everything inside (see there):
#   boot 1  install, filters, rules, netfilter-persistent save, enable the
#           units; systemctl reboot (qemu -no-reboot: the reboot ends qemu)
#   boot 2  all of it back; the window forgot; packets hit the rules; then
#           keys around a timer save, and a crash (sysrq b)
#   boot 3  what was saved before the crash is there
# Prints TAP ("ok N - boot B: ..."; the plan "1..N" last) with each boot's
# times, and "N passed, M failed"; exits non-zero if anything failed.
#
# Usage: reboot-test.sh [--deb BLOOMCTL_DEB] [--modules DIR] [--dir DIR]
#   --deb      the bloomctl package (default: made now from the tree by
#              tools/packaging/deb.sh, into build/deb)
#   --modules  where kbloom.ko and xt_bloom.ko for the stock kernel are
#              (default: built now from the tree, into build/stock)
#   --dir      the work directory (default: build/vm-reboot): the overlay,
#              the payload disk, console-B.log (serial console) and
#              results-B.log (the guest's results) of each boot B
# KBLOOM_REBOOT_BOOT_TIMEOUT: seconds one boot may take (default 300).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${KBLOOM_BUILD:-$top/build}
deb='' moddir='' dir=$build/vm-reboot
while [ $# -gt 0 ]; do
	case "$1" in
	--deb) deb=$2; shift 2 ;;
	--modules) moddir=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	*) echo "usage: reboot-test.sh [--deb FILE] [--modules DIR] [--dir DIR]" >&2; exit 2 ;;
	esac
done
boot_timeout=${KBLOOM_REBOOT_BOOT_TIMEOUT:-300}

# shellcheck source=tools/lib-tap.sh
. "$top/tools/lib-tap.sh"
ok() { result 0 "$*"; }
not_ok() { result 1 "$*"; }
finish() {
	tap_done
	exit
}

kdir=$(find /usr/src -maxdepth 1 -name 'linux-headers-*-amd64' | sort -V | tail -n 1)
kver=${kdir#/usr/src/linux-headers-}
kernel=/boot/vmlinuz-$kver
initrd=/boot/initrd.img-$kver
if [ -z "$kver" ] || [ ! -r "$kernel" ] || [ ! -r "$initrd" ]; then
	not_ok "Debian's stock kernel and initrd ($kernel, $initrd)"
	finish
fi

mkdir -p "$dir"
t_all=$SECONDS
# ---- what is tested: the package, the modules ----
if [ -z "$moddir" ]; then
	# shellcheck source=tools/lib-module.sh
	. "$top/tools/lib-module.sh"
	kbloom_build_module "$kdir" "$build/stock" ||
		{ tail -n 20 "$build/stock/build.log"; not_ok "the modules build for $kver"; finish; }
	moddir=$build/stock/kmod
fi
if [ -z "$deb" ]; then
	rm -f "$build"/deb/bloomctl_*.deb
	bash "$top/tools/packaging/deb.sh" > "$dir/deb.out" 2>&1
	deb=$(find "$build/deb" -name 'bloomctl_*.deb' 2>/dev/null | head -n 1)
	[ -n "$deb" ] || { tail -n 20 "$dir/deb.out"; not_ok "make deb: the bloomctl package"; finish; }
fi
for f in "$deb" "$moddir/kbloom.ko" "$moddir/xt_bloom.ko"; do
	[ -f "$f" ] || { not_ok "missing $f"; finish; }
done

# ---- the root filesystem, cached; this run's overlay and payload ----
t0=$SECONDS
if ! base=$("$top/tools/vm/rootfs.sh" --kver "$kver" 2> "$dir/rootfs.log"); then
	cat "$dir/rootfs.log"
	not_ok "the Debian root filesystem (tools/vm/rootfs.sh)"
	finish
fi
echo "# root filesystem: $base ($((SECONDS - t0)) s$(grep -q 'built in' "$dir/rootfs.log" && echo ', built now'))"
rm -f "$dir"/overlay.qcow2 "$dir"/payload.img "$dir"/console-*.log "$dir"/results-*.log
qemu-img create -q -f qcow2 -b "$base" -F raw "$dir/overlay.qcow2" ||
	{ not_ok "qemu-img create the overlay"; finish; }
pl=$dir/payload
rm -rf "$pl"
mkdir -p "$pl"
cp "$deb" "$moddir/kbloom.ko" "$moddir/xt_bloom.ko" "$pl/"
install -m 0755 "$top/tools/vm/reboot-guest.sh" "$pl/run.sh"
mkfs.ext4 -q -F -L KBLOOMTEST -d "$pl" "$dir/payload.img" 64M > "$dir/mkfs.log" 2>&1 ||
	{ not_ok "mkfs.ext4 the payload disk"; finish; }

# boot B: one boot of the overlay; its results become TAP lines here.
# Whether it ended as it should (qemu exited: the guest rebooted, crashed
# or powered off; the guest's last line says its phase ended) is checked
# too.
boot() { # B WHAT
	local b=$1 what=$2 t rc line res=$dir/results-$1.log
	: > "$res"
	t=$SECONDS
	timeout --foreground "$boot_timeout" qemu-system-x86_64 \
		-machine pc -cpu "${KBLOOM_QEMU_CPU:-max,la57=off}" -smp 2 -m 1G \
		-nographic -nodefaults -no-reboot -accel tcg,thread=multi \
		-rtc base=utc,clock=host \
		-serial "file:$dir/console-$b.log" -serial "file:$res" \
		-drive "file=$dir/overlay.qcow2,if=virtio,format=qcow2,cache=writeback" \
		-drive "file=$dir/payload.img,if=virtio,format=raw,readonly=on" \
		-device virtio-rng-pci \
		-kernel "$kernel" -initrd "$initrd" \
		-append "root=/dev/vda rw console=ttyS0 noresume quiet loglevel=4 panic=-1 systemd.show_status=0 kbloom.test=$b" \
		< /dev/null
	rc=$?
	echo "# boot $b ($what): $((SECONDS - t)) s in qemu (exit $rc)"
	while IFS= read -r line; do
		line=${line%$'\r'}
		case "$line" in
		"ok - "*) ok "boot $b: ${line#ok - }" ;;
		"not ok - "*) not_ok "boot $b: ${line#not ok - }" ;;
		"#"*) echo "$line" ;;
		esac
	done < "$res"
	if [ $rc -eq 124 ]; then
		not_ok "boot $b: ended in time (timed out after ${boot_timeout} s); the console's end:"
		tail -n 30 "$dir/console-$b.log" | sed 's/^/#   | /'
	elif ! grep -q "^# phase $b end" "$res"; then
		not_ok "boot $b: the guest's test ran to its end; the console's end:"
		tail -n 40 "$dir/console-$b.log" | sed 's/^/#   | /'
	else
		ok "boot $b: $what, and qemu exited"
	fi
}

boot 1 "install, filters, rules, save, clean reboot"
boot 2 "all back; window; packets; crash"
boot 3 "after the crash"
echo "# the reboot test took $((SECONDS - t_all)) s"
finish
