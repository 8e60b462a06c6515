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
kdir=$(ls -d /usr/src/linux-headers-*-amd64 | sort -V | tail -1)
image=/boot/vmlinuz-${kdir#/usr/src/linux-headers-}
xtlib=$(pkg-config --variable=xtlibdir xtables)

rm -rf "$build"
mkdir -p "$build/mod"
cp -r "$top/Kbuild" "$top/kmod" "$top/include" "$build/mod/"
make -s -C "$kdir" M="$build/mod" modules > "$build/build.log" 2>&1 ||
	{ cat "$build/build.log"; exit 1; }
make -s -C "$top/tools/bloomctl" bloomctl.static
make -s -C "$top/tools/xtables"

# A copy of the VM scripts whose only check is the benchmark.
cp -r "$top/tools/vm" "$build/vm"
find "$build/vm/tests.d" -name '*.sh' ! -name packets.sh -delete
cat > "$build/vm/tests.d/zz-bench.sh" <<'EOT'
KBLOOM_CHECKS=
run_checks() {
	check "insmod kbloom.ko" insmod $L/kbloom.ko
	if pk_setup; then
		pk_bench "$kbloom_packets_bench"
		pk_teardown
	fi
	check "rmmod kbloom" rmmod kbloom
	dmesg_check
}
EOT
rc=0
"$build/vm/run.sh" --kernel "$image" --dir "$build" --mode check --mem 3G \
	--append "kbloom_packets_bench=$flows" \
	"$build/mod/kmod/kbloom.ko:lib/kbloom/kbloom.ko" \
	"$build/mod/kmod/xt_bloom.ko:lib/kbloom/xt_bloom.ko" \
	"$top/tools/bloomctl/bloomctl.static:bin/bloomctl" \
	"$top/tools/xtables/libxt_bloom.so:${xtlib#/}/libxt_bloom.so" || rc=$?
tr -d '\r' < "$build/tests.log" | grep -E '^(# bench|not ok|vm:)'
exit $rc
