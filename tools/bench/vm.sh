#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench-vm`, in a boot of Debian's stock kernel under QEMU:
# - the bloom match against xt_recent and an nft set doing the same "seen
#   before?" job on the same pktgen stream: packets/s and kernel memory of
#   each (pk_bench in tools/vm/tests.d/packets.sh);
# - kbloom's ioctls (batched, one key per call, by name and on a handle)
#   against one bpf() per key on a BPF bloom map of the same KEYS keys,
#   and kbloom's in-kernel API (kbloom_apibench.ko) against a BPF program
#   doing the same lookups (vm-checks.sh, the VM's tests.d/bench.sh);
# - bloomctl's key input against wc -l, and the XDP example on kbloom's
#   kfuncs against the same program on a BPF bloom map (vm-checks.sh);
# then the XDP bench again in a second boot that runs nothing else.
# A benchmark, not a test: under software emulation the ratios mean more
# than the rates.
#   [KEYS=N] tools/bench/vm.sh [FLOWS]   (default 100000 each)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
flows=${1:-100000}
keys=${KEYS:-100000}
build=${KBLOOM_BUILD:-$top/build}/bench-vm
kdir=$(find /usr/src -maxdepth 1 -name "linux-headers-*-amd64" | sort -V | tail -n 1)
image=/boot/vmlinuz-${kdir#/usr/src/linux-headers-}
xtlib=$(pkg-config --variable=xtlibdir xtables)

# shellcheck source=tools/lib-module.sh
. "$top/tools/lib-module.sh"
# With BTF: the XDP example calls kbloom's kfuncs (tools/btf-kdir.sh).
KBLOOM_BTF=1 kbloom_build_module "$kdir" "$build/mod" ||
	{ cat "$build/mod/build.log"; exit 1; }
# The in-kernel API bench (Kbuild here): a module of its own, on the
# symbols kbloom.ko exports, out of a copy of its sources.
rm -rf "$build/apibench"
mkdir -p "$build/apibench"
cp "$top/tools/bench/Kbuild" "$top/tools/bench/kbloom_apibench.c" \
	"$top/kmod/kbloom.h" "$build/apibench/"
make -C "$kdir" M="$build/apibench" W=1 \
	KBUILD_EXTRA_SYMBOLS="$build/mod/Module.symvers" modules \
	> "$build/apibench/build.log" 2>&1 ||
	{ cat "$build/apibench/build.log"; exit 1; }
make -s -C "$top/tools/bloomctl" bloomctl.static
make -s -C "$top/tools/xtables"
make -s -C "$top/tools/bench" kbloom_ioctl_bench kbloom_bench kbloom_xdp_bench

# make bench's BPF peer runs in the VM as built here, with its libraries.
bench_libs=()
for l in $(ldd "$top/tools/bench/kbloom_bench" |
	   awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
	bench_libs+=("$l:${l#/}")
done

# One boot of the stock kernel running the checks $1 (kbloom_only), with
# the kernel arguments $2, and what it printed of the benches; its logs
# stay in $build/$3.
bench_boot() {
	local rc=0

	"$top/tools/vm/run.sh" --kernel "$image" --dir "$build/$3" --mode only --mem 3G \
		--append "kbloom_only=$1 $2" \
		"$build/mod/kmod/kbloom.ko:lib/kbloom/kbloom.ko" \
		"$build/mod/kmod/xt_bloom.ko:lib/kbloom/xt_bloom.ko" \
		"$top/tools/bloomctl/bloomctl.static:bin/bloomctl" \
		"$top/tools/bench/vm-checks.sh:lib/kbloom/tests.d/bench.sh" \
		"$top/tools/bench/kbloom_ioctl_bench:bin/kbloom_ioctl_bench" \
		"$top/tools/bench/kbloom_bench:bin/kbloom_bench" "${bench_libs[@]}" \
		"$top/tools/bench/kbloom_xdp_bench:bin/kbloom_xdp_bench" \
		"$build/apibench/kbloom_apibench.ko:lib/kbloom/kbloom_apibench.ko" \
		"$top/tools/xtables/libxt_bloom.so:${xtlib#/}/libxt_bloom.so" || rc=$?
	echo "# bench: boot: kbloom_only=$1 (logs in $build/$3)"
	tr -d '\r' < "$build/$3/tests.log" | grep -E '^(# bench|not ok|vm:)'
	return $rc
}

rc=0
bench_boot run_packets_bench,run_ioctl_bench,run_api_bench,run_input_bench,run_xdp_bench \
	"kbloom_packets_bench=$flows kbloom_bench_keys=$keys" all || rc=$?
# The XDP bench again, in a boot of its own: what the benches before it
# leave in the VM slows both programs, kbloom's lookups more than the
# map's (Documentation/benchmarks.md, "XDP: kfuncs against the BPF bloom
# map").
bench_boot run_xdp_bench "" xdp || rc=$?
exit $rc
