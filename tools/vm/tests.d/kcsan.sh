# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# The KCSAN kernel's run (tests.sh mode "kcsan"; the kernel is
# tools/vm/kernel.sh --variant kcsan), sourced by tests.sh: the KUnit
# suites (kbloom_concurrency among them), the selftest's stress area
# (kbloom_selftest_stress) and the ioctl fuzzer, 64- and 32-bit, under the
# data race detector. A report says "BUG: KCSAN: data-race ..." in the
# kernel log, which dmesg_check (and the harness) fail on. tap_run is in
# faults.sh, run_fuzz in fuzz.sh, run_selftest_stress in selftest.sh.
# Not in KBLOOM_CHECKS: the check mode does not run it.

# kcsan_counter NAME: a counter from /sys/kernel/debug/kcsan.
kcsan_counter() {
	sed -n "s/^$1: *//p" /sys/kernel/debug/kcsan 2>/dev/null
}

run_kcsan() {
	# Zero reports mean something only if the detector is on and watching.
	if grep -q '^enabled: *1' /sys/kernel/debug/kcsan 2>/dev/null; then
		ok "KCSAN is enabled ($(uname -r))"
	else
		not_ok "KCSAN is enabled: /sys/kernel/debug/kcsan says otherwise ($(uname -r))"
	fi
	w0=$(kcsan_counter setup_watchpoints)
	check "insmod kbloom.ko" insmod "$L/kbloom.ko"
	run_kunit
	run_selftest_stress
	run_fuzz
	check "rmmod kbloom" rmmod kbloom
	w1=$(kcsan_counter setup_watchpoints)
	# data_races also counts races KCSAN then chose not to report (no
	# value change seen, rate limit): the reports in the log are what
	# count, as everywhere else.
	echo "# kcsan: $((${w1:-0} - ${w0:-0})) watchpoints set up during the tests; since boot: data_races $(kcsan_counter data_races), races of unknown origin $(kcsan_counter races_unknown_origin)"
	check "KCSAN set up watchpoints during the tests" [ "${w1:-0}" -gt "${w0:-0}" ]
	dmesg_check
}
