# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# TAP for the shell tests (tools/*/test-native.sh, the VM's tests.sh, the
# packaging checks): one "ok N - what" or "not ok N - what" per check,
# then the plan "1..N" and "P passed, F failed" (", S skipped" if any
# were) as the last lines; tools/check.sh's count_tap checks the plan
# against the results. Source it, report with result, check, expect and
# skip, end with tap_done. On a failure, what the last command said is
# shown if $tap_out and $tap_err name its output files. It runs under
# bash and under busybox sh (in the VM): POSIX sh and `local` only.

# The tests' Python is Debian's, which tools/deps.sh installs, whatever
# comes first in PATH: a version manager's shim there (pyenv's is a shell
# script that starts several processes) costs ten times the interpreter's
# own start, and the tests start it hundreds of times.
if [ -x /usr/bin/python3 ]; then
	python3() { /usr/bin/python3 "$@"; }
fi

n=0
passed=0
failed=0
skipped=0

# result STATUS DESCRIPTION: ok if STATUS is 0.
result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
		passed=$((passed + 1))
		return
	fi
	echo "not ok $n - $2"
	failed=$((failed + 1))
	if [ -n "${tap_out:-}" ] && [ -s "$tap_out" ]; then
		sed 's/^/#   out: /' "$tap_out" | head -20
	fi
	if [ -n "${tap_err:-}" ] && [ -s "$tap_err" ]; then
		sed 's/^/#   err: /' "$tap_err" | head -20
	fi
}

ok() { result 0 "$*"; }
not_ok() { result 1 "$*"; }

# check DESC COMMAND...: ok if COMMAND succeeds.
check() {
	local desc=$1

	shift
	"$@"
	result $? "$desc"
}

# run COMMAND...: its stdout, stderr and status in $tap_out, $tap_err and
# $rc. A test whose commands all run one program may define its own.
run() {
	"$@" >"$tap_out" 2>"$tap_err"
	rc=$?
}

# expect STATUS DESC ARGS...: run ARGS (with $runner in place of run, if
# set), then check the exit status.
expect() {
	local want=$1 desc=$2

	shift 2
	"${runner:-run}" "$@"
	check "$desc (exit $want, got $rc)" [ "$rc" = "$want" ]
}

# out_has / err_has TEXT DESC: fixed-string search of the last run's output.
out_has() {
	check "$2" grep -qF -- "$1" "$tap_out"
}

err_has() {
	check "$2" grep -qF -- "$1" "$tap_err"
}

# skip WHY: a check that could not run here.
skip() {
	n=$((n + 1))
	echo "ok $n - # SKIP $1"
	skipped=$((skipped + 1))
}

# tap_done: the plan and the counts; succeeds if nothing failed.
tap_done() {
	echo "1..$n"
	if [ "$skipped" -gt 0 ]; then
		echo "$passed passed, $failed failed, $skipped skipped"
	else
		echo "$passed passed, $failed failed"
	fi
	[ "$failed" = 0 ]
}
