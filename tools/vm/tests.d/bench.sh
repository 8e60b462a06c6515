# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# make bench-vm's system-call part (tools/stress/kbloom_ioctl_bench.c):
# kbloom's ioctls (batched and one key per call, by name and on a handle)
# against one bpf() per key on a BPF bloom map of the same keys, in this
# boot. A benchmark: the only check is that every answer was right. Not
# in KBLOOM_CHECKS; tools/xtables/bench-vm.sh runs it
# (kbloom_only=...,run_ioctl_bench, kbloom_ioctl_bench_keys=N).

run_ioctl_bench() {
	if ! command -v kbloom_ioctl_bench >/dev/null; then
		not_ok "kbloom_ioctl_bench is in the VM"
		return
	fi
	kbloom_ioctl_bench "${kbloom_ioctl_bench_keys:-100000}" > /tmp/ioctl_bench 2>&1
	ib_rc=$?
	cat /tmp/ioctl_bench
	check "kbloom_ioctl_bench: every present key found, every call answered (exit $ib_rc)" [ "$ib_rc" -eq 0 ]
	rm -f /tmp/ioctl_bench
}
