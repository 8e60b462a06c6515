# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# kbloom_selftest (tools/selftest/kbloom_selftest.c and the per-area files
# it includes): every ioctl with good and bad arguments, permissions,
# concurrency, on the kernel's kselftest harness, 64-bit and i386 (compat
# ioctl), sourced by tests.sh and run by run_checks with kbloom.ko loaded.
# Each binary runs through tap_run (faults.sh): its "ok N fixture.case"
# lines are counted by the host between "# TAP-BEGIN"/"# TAP-END", which
# checks its plan ("1..N", printed first by the harness) against them; it
# must exit 0.

# st_run BINARY DESCRIPTION: one selftest binary through tap_run.
st_run() {
	if [ -x "/bin/$1" ]; then
		tap_run "$1" "$2" "$1"
	else
		echo "# $1: not in this VM"
	fi
}

run_selftest() {
	st_run kbloom_selftest "kbloom_selftest (64-bit)"
	st_run kbloom_selftest32 "kbloom_selftest (32-bit, compat ioctl)"
}

# The stress area alone (kbloom_selftest_stress, 64-bit and i386): what
# the KCSAN run (kcsan.sh) runs of the selftest, under the race detector.
run_selftest_stress() {
	st_run kbloom_selftest_stress "kbloom_selftest_stress: the selftest's stress area"
	st_run kbloom_selftest_stress32 "kbloom_selftest_stress32: the selftest's stress area"
}
