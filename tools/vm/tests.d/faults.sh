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
# Also defines tap_run, which fuzz.sh and kcsan.sh use too.

KBLOOM_CHECKS="$KBLOOM_CHECKS run_faults"

# tap_plan_ok FILE: FILE is TAP with exactly one plan "1..N", before the
# first result or after the last, and exactly N "ok"/"not ok" results.
tap_plan_ok() {
	awk '
		/^1\.\.[0-9]+/ {
			plans++; split($1, p, /\.\./); want = p[2] + 0
			where = results ? "end" : "start"; next
		}
		/^(not )?ok($| )/ { results++; if (where == "end") late = 1 }
		END {
			if (plans != 1) { printf "# %d plan lines\n", plans; exit 1 }
			if (late) { print "# results after a trailing plan"; exit 1 }
			if (results != want) { printf "# plan 1..%d, %d results\n", want, results; exit 1 }
		}' "$1"
}

# tap_run NAME DESCRIPTION COMMAND...: run a TAP-producing test program.
# Its output goes through to the host (which counts its ok lines) between
# "# TAP-BEGIN NAME" and "# TAP-END NAME exit=RC", so the host can check
# each program's plan on its own; here it must exit 0 and print its plan
# and exactly that many results (a crash half-way leaves a short plan).
tap_run() {
	tr_name=$1 tr_desc=$2; shift 2
	rm -f /tmp/tap_run.rc
	echo "# TAP-BEGIN $tr_name"
	{ "$@" 2>&1; echo $? > /tmp/tap_run.rc; } | tee /tmp/tap_run.out
	tr_rc=$(cat /tmp/tap_run.rc 2>/dev/null)
	echo "# TAP-END $tr_name exit=${tr_rc:-none}"
	if [ "$tr_rc" != 0 ]; then
		not_ok "$tr_desc (exit ${tr_rc:-none})"
	elif ! tap_plan_ok /tmp/tap_run.out > /tmp/tap_run.why; then
		cat /tmp/tap_run.why
		not_ok "$tr_desc (its TAP plan does not match its results)"
	else
		ok "$tr_desc: exit 0, $(grep -c -E '^(not )?ok($| )' /tmp/tap_run.out) results as planned"
	fi
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
