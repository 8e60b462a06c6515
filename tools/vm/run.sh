#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one kbloom test VM and report. Usage:
#   run.sh --kernel IMAGE --dir DIR --mode check|demo|shell [--mem M]
#          [--timeout S] [--append ARGS] FILE:DEST...
# Builds DIR/initramfs.cpio.gz from busybox-static, init.sh, tests.sh and
# the FILE:DEST pairs (DEST relative to the initramfs root), boots it under
# software emulation and leaves DIR/console.log (kernel log), DIR/tests.log
# (test output) and DIR/result. Exit 0 only if the VM wrote "success" on
# its result channel: a panic, a hang, a splat or a failed test all leave
# it empty.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kernel= dir= mode=check mem=2G timeout=1500 append=
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	--mode) mode=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ -n "$kernel" ] && [ -n "$dir" ] || { echo "run.sh: --kernel and --dir are required" >&2; exit 2; }

root=$dir/root
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,etc,lib/kbloom,root}
cp /bin/busybox "$root/bin/busybox"
file "$root/bin/busybox" | grep -q 'statically linked' ||
	{ echo "run.sh: /bin/busybox is not static (apt-get install busybox-static)" >&2; exit 2; }
install -m 0755 "$here/init.sh" "$root/init"
install -m 0644 "$here/tests.sh" "$root/lib/kbloom/tests.sh"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
for pair in "$@"; do
	src=${pair%%:*} dst=${pair#*:}
	mkdir -p "$root/$(dirname "$dst")"
	cp "$src" "$root/$dst"
done
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$dir/initramfs.cpio.gz"

: > "$dir/result"
: > "$dir/tests.log"
: > "$dir/console.log"
console=(-serial "file:$dir/console.log")
case "$mode" in check|kunit|exchange-*) ;; *) console=(-serial mon:stdio) ;; esac
# -no-reboot: the guest's reboot (or a panic, with panic=-1) ends qemu.
set +e
timeout --foreground "$timeout" qemu-system-x86_64 \
	-machine pc -cpu "${KBLOOM_QEMU_CPU:-max}" -smp 2 -m "$mem" \
	-nographic -nodefaults -no-reboot \
	-accel tcg,thread=multi \
	"${console[@]}" \
	-serial "file:$dir/result" \
	-serial "file:$dir/tests.log" \
	-kernel "$kernel" -initrd "$dir/initramfs.cpio.gz" \
	-append "console=ttyS0 panic=-1 panic_on_warn=1 oops=panic softlockup_panic=1 loglevel=7 kbloom_mode=$mode $append"
rc=$?
set -e
[ $rc -eq 124 ] && echo "run.sh: VM timed out after ${timeout}s" >&2
# The tty turns "\n" into "\r\n".
tr -d "\r" < "$dir/result" | grep -qx success && exit 0
exit 1
