#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) a Debian root filesystem that boots Debian's stock kernel
# under qemu with systemd, for the tests that need a whole system (the
# reboot test, tools/vm/reboot-test.sh), and print the path of its disk
# image: a raw ext4 image, to be used through a copy-on-write overlay
# (qemu-img create -f qcow2 -b IMAGE -F raw OVERLAY), never written to.
#
# Usage: rootfs.sh [--kver KVER]      (default: the newest Debian kernel
#                                      whose headers are installed)
#
# mmdebstrap builds it from the Debian archive this host's apt uses (its
# sources files), variant minbase plus the packages below; the kernel's
# modules are copied from this host's /lib/modules/KVER (the storage,
# network and netfilter parts) and the kernel and initrd stay the host's
# (/boot/vmlinuz-KVER, /boot/initrd.img-KVER; root=/dev/vda, virtio).
# mkfs.ext4 -d makes the image from the tree: no loop device, no mount.
#
# Cached like the kernels, under $KBLOOM_CACHE (default ~/.cache/kbloom),
# in rootfs-<hash of the package list, this script and KVER>: a change to
# any of them builds a new one (and removes the old ones), and an
# unchanged one is never rebuilt. About 100 s to build, 300 MB on disk.
#
# The image is made to boot fast and quietly on a serial console: no
# getty, no periodic jobs, short stop timeouts, a fixed machine-id (no
# first-boot setup), and one hook: with "kbloom.test" on the kernel command
# line, kbloom-vmtest.service mounts the disk labelled KBLOOMTEST (the
# test's payload: packages, modules, scripts) on /run/kbloom-test once the
# system is up and runs its run.sh. Nothing else of the tests is in it.
set -euo pipefail

cache=${KBLOOM_CACHE:-$HOME/.cache/kbloom}
kver=
while [ $# -gt 0 ]; do
	case "$1" in
	--kver) kver=${2:-}; shift 2 || { echo "rootfs.sh: --kver needs a value" >&2; exit 2; } ;;
	*) echo "usage: rootfs.sh [--kver KVER]" >&2; exit 2 ;;
	esac
done
if [ -z "$kver" ]; then
	kver=$(find /usr/src -maxdepth 1 -name 'linux-headers-*-amd64' | sort -V | tail -n 1)
	kver=${kver#/usr/src/linux-headers-}
fi
if [ -z "$kver" ] || [ ! -d "/lib/modules/$kver/kernel" ]; then
	echo "rootfs.sh: no /lib/modules/$kver (apt-get install linux-image-amd64)" >&2
	exit 2
fi

# The system: systemd as init, udev and kmod for the modules, the firewall
# and its persistence (both iptables backends, nft), ip and the procps
# tools the tests use. bloomctl's own dependencies (libc6, zlib1g,
# libxtables12) come with these.
packages=(systemd-sysv udev kmod iproute2 iptables iptables-persistent
	  netfilter-persistent nftables procps)

# shellcheck disable=SC1091
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$suite" ] || { echo "rootfs.sh: no VERSION_CODENAME in /etc/os-release" >&2; exit 2; }
key=$( { echo "$suite $kver"; printf '%s\n' "${packages[@]}"; cat "$0"; } | sha256sum | cut -c1-16)
out=$cache/rootfs-$key
image=$out/rootfs.img
if [ -f "$out/.kbloom-done" ]; then
	echo "$image"
	exit 0
fi

for t in mmdebstrap mkfs.ext4 depmod; do
	command -v "$t" > /dev/null ||
		{ echo "rootfs.sh: no $t (tools/deps.sh installs it)" >&2; exit 2; }
done

# The archive: whatever this host's apt is configured with.
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -s "$f" ] && grep -qE '^[[:space:]]*(deb |Types:)' "$f" && sources+=("$f")
done
[ ${#sources[@]} -gt 0 ] || { echo "rootfs.sh: no apt sources on this host" >&2; exit 2; }

mkdir -p "$cache"
work=$(mktemp -d "$cache/rootfs-tmp.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
log=$work/build.log
t0=$SECONDS
echo "rootfs.sh: building the $suite root filesystem for $kver in $out (log: $out/build.log)" >&2

# mmdebstrap reads the mirrors from the sources files given as arguments.
if ! mmdebstrap --variant=minbase --mode=root --format=directory \
	--include="$(IFS=,; echo "${packages[*]}")" \
	--aptopt='Acquire::Check-Valid-Until "false"' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	"$suite" "$root" "${sources[@]}" > "$log" 2>&1; then
	tail -n 30 "$log" >&2
	echo "rootfs.sh: mmdebstrap failed" >&2
	exit 1
fi

# ---- the kernel's modules: storage, network, netfilter; no hardware ----
# (nor KVM, which udev would load for the emulated CPU's VMX, in vain)
m=/lib/modules/$kver
mkdir -p "$root$m"
cp -a "$m"/modules.builtin "$m"/modules.builtin.modinfo "$m"/modules.order "$root$m/"
(cd "$m" && find kernel -name '*.ko*' \
	\( -path 'kernel/net/*' -o -path 'kernel/fs/*' -o -path 'kernel/lib/*' \
	   -o -path 'kernel/crypto/*' -o -path 'kernel/arch/*' -a ! -path 'kernel/arch/x86/kvm/*' \
	   -o -path 'kernel/block/*' \
	   -o -path 'kernel/mm/*' -o -path 'kernel/drivers/virtio/*' \
	   -o -path 'kernel/drivers/block/*' -o -path 'kernel/drivers/char/*' \
	   -o -path 'kernel/drivers/net/*' -a ! -path 'kernel/drivers/net/wireless/*' \
	      -a ! -path 'kernel/drivers/net/ethernet/*' -a ! -path 'kernel/drivers/net/usb/*' \
	      -a ! -path 'kernel/drivers/net/can/*' -a ! -path 'kernel/drivers/net/wwan/*' \) \
	-print0) | tar -C "$m" --null -T - -cf - | tar -C "$root$m" -xf -
depmod -b "$root" "$kver"

# ---- configuration ----
echo kbloom-vm > "$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tkbloom-vm\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
	> "$root/etc/hosts"
printf '/dev/vda\t/\text4\trw,errors=remount-ro\t0\t1\n' > "$root/etc/fstab"
# A machine-id: not a first boot (systemd-firstboot would prompt).
od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$root/etc/machine-id"
echo >> "$root/etc/machine-id"
chroot "$root" passwd -d root > /dev/null
# The journal in memory only, forwarded to nothing: the tests print what
# they need.
mkdir -p "$root/etc/systemd/journald.conf.d" "$root/etc/systemd/system.conf.d"
printf '[Journal]\nStorage=volatile\nRuntimeMaxUse=16M\n' \
	> "$root/etc/systemd/journald.conf.d/kbloom-vm.conf"
printf '[Manager]\nDefaultTimeoutStartSec=60s\nDefaultTimeoutStopSec=15s\nShowStatus=no\n' \
	> "$root/etc/systemd/system.conf.d/kbloom-vm.conf"
# What a serial-console test system does not need, and what would only
# slow its boots (every unit costs under emulation): logins and their
# records, periodic maintenance, first-boot setup, the pseudo file systems
# and modules nothing here uses.
for u in getty.target getty@tty1.service serial-getty@ttyS0.service \
	 systemd-user-sessions.service systemd-update-utmp.service \
	 systemd-update-utmp-runlevel.service systemd-firstboot.service \
	 systemd-sysusers.service apt-daily.timer apt-daily-upgrade.timer \
	 dpkg-db-backup.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer \
	 logrotate.timer man-db.timer systemd-tmpfiles-clean.timer \
	 systemd-networkd-wait-online.service systemd-timesyncd.service \
	 systemd-pstore.service dev-hugepages.mount dev-mqueue.mount \
	 sys-kernel-debug.mount sys-kernel-tracing.mount sys-kernel-config.mount \
	 sys-fs-fuse-connections.mount modprobe@drm.service modprobe@dm_mod.service \
	 modprobe@fuse.service modprobe@loop.service modprobe@configfs.service; do
	ln -sf /dev/null "$root/etc/systemd/system/$u"
done

# ---- the test hook ----
cat > "$root/usr/local/sbin/kbloom-vmtest" <<'EOF'
#!/bin/sh
# Mount the test's payload disk (label KBLOOMTEST) and run its run.sh.
set -e
mkdir -p /run/kbloom-test
mount -o ro LABEL=KBLOOMTEST /run/kbloom-test
exec /bin/sh /run/kbloom-test/run.sh
EOF
chmod 0755 "$root/usr/local/sbin/kbloom-vmtest"
cat > "$root/etc/systemd/system/kbloom-vmtest.service" <<'EOF'
[Unit]
Description=kbloom VM test payload
ConditionKernelCommandLine=kbloom.test
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/kbloom-vmtest
StandardOutput=journal+console
StandardError=journal+console

[Install]
WantedBy=multi-user.target
EOF
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -sf ../kbloom-vmtest.service "$root/etc/systemd/system/multi-user.target.wants/kbloom-vmtest.service"

# ---- the image ----
size_mb=$(( $(du -sm "$root" | cut -f1) * 3 / 2 + 512 ))
mkfs.ext4 -q -F -L kbloom-root -d "$root" "$work/rootfs.img" "${size_mb}M" >> "$log" 2>&1
rm -rf "$root"
rm -rf "$out"
mv "$work" "$out"
trap - EXIT
touch "$out/.kbloom-done"
# The images of other package lists or versions of this script: gone.
for d in "$cache"/rootfs-????????????????; do
	[ "$d" = "$out" ] || [ ! -f "$d/.kbloom-done" ] || rm -rf "$d"
done
echo "rootfs.sh: built in $((SECONDS - t0)) s: $(du -sh --apparent-size "$image" | cut -f1) image, $(du -sh "$image" | cut -f1) used" >&2
echo "$image"
