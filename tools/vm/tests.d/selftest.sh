# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# kbloom_selftest (tools/selftest/kbloom_selftest.c and the per-area files
# it includes): every ioctl with good and bad arguments, permissions,
# concurrency, on the kernel's kselftest harness, 64-bit and i386 (compat
# ioctl), sourced by tests.sh and run by run_checks with kbloom.ko loaded.
# Each binary runs through tap_run (faults.sh): its "ok N fixture.case"
# lines are counted by the host between "# TAP-BEGIN"/"# TAP-END", and it
# must exit 0 with its plan ("1..N", printed first by the harness) matching
# its results. Without tap_run, check on the exit status.

run_selftest() {
	for st in kbloom_selftest:"kbloom_selftest (64-bit)" \
		  kbloom_selftest32:"kbloom_selftest (32-bit, compat ioctl)"; do
		if [ ! -x "/bin/${st%%:*}" ]; then
			echo "# ${st%%:*}: not in this VM"
		elif type tap_run >/dev/null 2>&1; then
			tap_run "${st%%:*}" "${st#*:}" "${st%%:*}"
		else
			"${st%%:*}"; check "${st#*:}" [ $? -eq 0 ]
		fi
	done
}

# The stress area alone (kbloom_selftest_stress, 64-bit and i386): what
# the KCSAN run (kcsan.sh) runs of the selftest, under the race detector.
run_selftest_stress() {
	for st in kbloom_selftest_stress kbloom_selftest_stress32; do
		if [ ! -x "/bin/$st" ]; then
			echo "# $st: not in this VM"
		elif type tap_run >/dev/null 2>&1; then
			tap_run "$st" "$st: the selftest's stress area" "$st"
		else
			"$st"; check "$st: the selftest's stress area" [ $? -eq 0 ]
		fi
	done
}
