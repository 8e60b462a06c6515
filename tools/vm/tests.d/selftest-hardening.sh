# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# kbloom_hardening (tools/selftest/kbloom_hardening.c): the regression tests
# of issue 9 on the kernel's kselftest harness, 64-bit and i386 (compat
# ioctl), sourced by tests.sh and run by run_checks with kbloom.ko loaded.
# Each binary runs through tap_run (faults.sh): its "ok N fixture.case"
# lines are counted by the host between "# TAP-BEGIN"/"# TAP-END", and it
# must exit 0 with its plan ("1..N", printed first by the harness) matching
# its results. Without tap_run, check on the exit status.

KBLOOM_CHECKS="$KBLOOM_CHECKS run_selftest_hardening"

run_selftest_hardening() {
	for hb in kbloom_hardening kbloom_hardening32; do
		if [ ! -x /bin/$hb ]; then
			echo "# $hb: not in this VM"
		elif type tap_run >/dev/null 2>&1; then
			tap_run "$hb" "$hb: every case of the hardening tests" $hb
		else
			$hb; check "$hb: every case of the hardening tests" [ $? -eq 0 ]
		fi
	done
}
