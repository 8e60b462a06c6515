# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# kbloom_hardening (tools/selftest/kbloom_hardening.c): the hardening's
# regression tests on the kernel's kselftest harness, 64-bit and i386
# (compat ioctl), sourced by tests.sh and run by run_checks with kbloom.ko
# loaded. Each binary runs through tap_run (faults.sh): its
# "ok N fixture.case" lines are counted by the host between
# "# TAP-BEGIN"/"# TAP-END", and it must exit 0 with its plan ("1..N",
# printed first by the harness) matching its results. Without tap_run,
# check on the exit status.

KBLOOM_CHECKS="$KBLOOM_CHECKS run_selftest_hardening"

run_selftest_hardening() {
	# st_run is in selftest.sh.
	st_run kbloom_hardening "kbloom_hardening: every case of the hardening tests"
	st_run kbloom_hardening32 "kbloom_hardening32: every case of the hardening tests"
}
