# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# Fault injection, sourced by tests.sh. kbloom_failnth makes each
# allocation of each allocating ioctl fail in turn (through
# /proc/thread-self/fail-nth) and checks that the module fails cleanly
# (ENOMEM; filter list, contents and memory_used unchanged) or absorbs the
# fault and does the whole job. Only on kernels with fault injection (the
# debug kernel); elsewhere one "# SKIP" line.
#
# Also defines tap_run, which fuzz.sh, kcsan.sh, selftest.sh and bpf.sh
# use too, and wait_for, which any area may.

KBLOOM_CHECKS="$KBLOOM_CHECKS run_faults"

# wait_for SECONDS COMMAND...: until COMMAND succeeds (its output
# dropped), at most SECONDS; fails if it never did.
wait_for() {
	wf_end=$(($(now_ms) + $1 * 1000))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$(now_ms)" -lt "$wf_end" ] || return 1
		sleep 0.2
	done
}

# tap_run NAME DESCRIPTION COMMAND...: run a TAP-producing test program.
# Its output goes through to the host between "# TAP-BEGIN NAME" and
# "# TAP-END NAME exit=RC": the host (tools/check.sh, count_tap) counts its
# results and checks that it printed one plan, matching them (a crash
# half-way leaves a short plan); here it must exit 0.
tap_run() {
	tr_name=$1 tr_desc=$2; shift 2
	rm -f /tmp/tap_run.rc
	echo "# TAP-BEGIN $tr_name"
	{ "$@" 2>&1; echo $? > /tmp/tap_run.rc; } | tee /tmp/tap_run.out
	tr_rc=$(cat /tmp/tap_run.rc 2>/dev/null)
	echo "# TAP-END $tr_name exit=${tr_rc:-none}"
	check "$tr_desc: exit ${tr_rc:-none}, $(grep -c -E '^(not )?ok($| )' /tmp/tap_run.out) results" \
		[ "$tr_rc" = 0 ]
}

run_faults() {
	if [ ! -e /proc/thread-self/fail-nth ]; then
		ok "fail-nth sweep # SKIP no fault injection in $(uname -r)"
		return 0
	fi
	if [ ! -x /bin/kbloom_failnth ]; then
		not_ok "fail-nth sweep: /bin/kbloom_failnth is missing from the initramfs"
		return 0
	fi
	# kbloom_failnth_only=WORD on the kernel command line: only the
	# sweeps whose name has WORD (kbloom_failnth -o), to chase one.
	tap_run kbloom_failnth "fail-nth sweep over every allocating ioctl" \
		kbloom_failnth ${kbloom_failnth_only:+-o "$kbloom_failnth_only"}
}
