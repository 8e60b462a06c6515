#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench-vm`: the bloom match against xt_recent and an nft set doing
# the same "seen before?" job on the same pktgen stream, in one boot of
# Debian's stock kernel under QEMU. Prints packets/s and kernel memory of
# each (pk_bench in tools/vm/tests.d/packets.sh). A benchmark, not a test:
# under software emulation the ratios mean more than the rates.
#   tools/xtables/bench-vm.sh [FLOWS]        (default 100000)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
flows=${1:-100000}
build=${KBLOOM_BUILD:-$top/build}/bench-vm
kdir=$(find /usr/src -maxdepth 1 -name "linux-headers-*-amd64" | sort -V | tail -n 1)
image=/boot/vmlinuz-${kdir#/usr/src/linux-headers-}
xtlib=$(pkg-config --variable=xtlibdir xtables)

# shellcheck source=tools/lib-module.sh
. "$top/tools/lib-module.sh"
kbloom_build_module "$kdir" "$build/mod" || { cat "$build/mod/build.log"; exit 1; }
make -s -C "$top/tools/bloomctl" bloomctl.static
make -s -C "$top/tools/xtables"

rc=0
"$top/tools/vm/run.sh" --kernel "$image" --dir "$build" --mode only --mem 3G \
	--append "kbloom_only=run_packets_bench kbloom_packets_bench=$flows" \
	"$build/mod/kmod/kbloom.ko:lib/kbloom/kbloom.ko" \
	"$build/mod/kmod/xt_bloom.ko:lib/kbloom/xt_bloom.ko" \
	"$top/tools/bloomctl/bloomctl.static:bin/bloomctl" \
	"$top/tools/xtables/libxt_bloom.so:${xtlib#/}/libxt_bloom.so" || rc=$?
tr -d '\r' < "$build/tests.log" | grep -E '^(# bench|not ok|vm:)'
exit $rc
