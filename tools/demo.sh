#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: build everything, boot Debian's stock kernel in QEMU with
# kbloom loaded, and walk through real use (1M keys in, 1M absent keys
# queried, measured FPR next to theory, sysfs statistics; a windowed flow
# filter against a plain one over many windows; a bloom iptables rule
# counting new flows in a pktgen stream). `make shell`
# (--shell): the same VM, with a shell instead of the walk-through.
#
# The preparation prints one line before and one after each step; what apt
# and kbuild say goes to build/demo.log (and its last lines to the terminal
# if a step fails).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/lib-module.sh
. "$top/tools/lib-module.sh"
build=${KBLOOM_BUILD:-$top/build}
mode=demo
[ "${1:-}" = --shell ] && mode=shell

mkdir -p "$build"
log=$build/demo.log
: > "$log"

# step TITLE COMMAND...: run COMMAND with its output in $log.
step() {
	local title=$1 t0=$SECONDS
	shift
	echo "== $title ..."
	printf '\n==== %s: %s\n' "$title" "$*" >> "$log"
	if "$@" >> "$log" 2>&1; then
		echo "   done ($((SECONDS - t0)) s)"
	else
		echo "   FAILED; the end of $log:"
		tail -n 30 "$log" | sed 's/^/   | /'
		exit 1
	fi
}

# The module for Debian's stock kernel, in its own copy of the tree; the
# kbuild log joins the demo's.
build_demo_module() {
	local rc=0
	kbloom_build_module "$kdir" "$build/demo" || rc=$?
	cat "$build/demo/build.log"
	return "$rc"
}

echo "== log: $log"
step "installing the Debian packages kbloom needs (tools/deps.sh)" "$top/tools/deps.sh"
kdir=$(find /usr/src -maxdepth 1 -name 'linux-headers-*-amd64' | sort -V | tail -n 1)
[ -n "$kdir" ] || { echo "== no /usr/src/linux-headers-*-amd64 (apt-get install linux-headers-amd64)"; exit 1; }
image=/boot/vmlinuz-${kdir#/usr/src/linux-headers-}
step "building bloomctl.static (the VM has no C library)" \
	make -C "$top/tools/bloomctl" bloomctl.static
step "building kbloom.ko and xt_bloom.ko against ${kdir#/usr/src/}" build_demo_module
step "building libxt_bloom.so (the iptables extension)" make -C "$top/tools/xtables"
xtlib=$(pkg-config --variable=xtlibdir xtables)
echo "== booting $image in QEMU (software emulation)"
exec "$top/tools/vm/run.sh" --kernel "$image" --dir "$build/demo-vm" \
	--mode "$mode" --timeout "$([ $mode = shell ] && echo 86400 || echo 1800)" \
	"$build/demo/kmod/kbloom.ko:lib/kbloom/kbloom.ko" \
	"$build/demo/kmod/xt_bloom.ko:lib/kbloom/xt_bloom.ko" \
	"$top/tools/xtables/libxt_bloom.so:${xtlib#/}/libxt_bloom.so" \
	"$top/tools/bloomctl/bloomctl.static:bin/bloomctl"
