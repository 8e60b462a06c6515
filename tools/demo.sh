#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: build everything, boot Debian's stock kernel in QEMU with
# kbloom loaded, and walk through real use (1M keys in, 1M absent keys
# queried, measured FPR next to theory, sysfs statistics). `make shell`
# (--shell): the same VM, with a shell instead of the walk-through.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${KBLOOM_BUILD:-$top/build}
mode=demo
[ "${1:-}" = --shell ] && mode=shell

"$top/tools/deps.sh"
make -s -C "$top/tools/bloomctl" >/dev/null
kdir=$(ls -d /usr/src/linux-headers-*-amd64 | sort -V | tail -1)
image=/boot/vmlinuz-${kdir#/usr/src/linux-headers-}
rm -rf "$build/demo"
mkdir -p "$build/demo"
cp -r "$top/Kbuild" "$top/kmod" "$top/kunit" "$top/include" "$build/demo/"
make -s -C "$kdir" M="$build/demo" modules >/dev/null
exec "$top/tools/vm/run.sh" --kernel "$image" --dir "$build/demo-vm" \
	--mode "$mode" --timeout "$([ $mode = shell ] && echo 86400 || echo 1200)" \
	"$build/demo/kmod/kbloom.ko:lib/kbloom/kbloom.ko" \
	"$top/tools/bloomctl/bloomctl.static:bin/bloomctl"
