# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# The ioctl fuzzer, sourced by tests.sh: kbloom_ioctl_fuzz runs seeded
# random ioctl sequences from several processes and threads (valid and
# corrupted arguments, unmapped and read-only memory, an unprivileged
# process, a process killed in mid-call, create/destroy churn) and checks
# the errnos and what must never be lost; the kernel log is checked by the
# harness afterwards. kbloom_fuzz_seconds (kernel command line, default 30)
# bounds it, split 2:1 between the 64-bit build and the 32-bit one (compat
# ioctl); kbloom_fuzz_seed replays a run (both builds get the seed).
# tap_run is in faults.sh.

KBLOOM_CHECKS="$KBLOOM_CHECKS run_fuzz"

run_fuzz() {
	fz_secs=${kbloom_fuzz_seconds:-30}
	fz_seed=${kbloom_fuzz_seed:+--seed $kbloom_fuzz_seed}
	fz_32=$((fz_secs / 3))
	fz_64=$((fz_secs - fz_32))
	if [ ! -x /bin/kbloom_ioctl_fuzz ]; then
		not_ok "ioctl fuzz: /bin/kbloom_ioctl_fuzz is missing from the initramfs"
		return 0
	fi
	# shellcheck disable=SC2086
	tap_run kbloom_ioctl_fuzz "ioctl fuzz, 64-bit, ${fz_64} s" \
		kbloom_ioctl_fuzz --time "$fz_64" $fz_seed
	if [ -x /bin/kbloom_ioctl_fuzz32 ] && [ "$fz_32" -gt 0 ]; then
		# shellcheck disable=SC2086
		tap_run kbloom_ioctl_fuzz32 "ioctl fuzz, 32-bit (compat), ${fz_32} s" \
			kbloom_ioctl_fuzz32 --time "$fz_32" $fz_seed
	fi
}
