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

# KCSAN watches the whole kernel, and 6.1's core code still has races
# nobody annotated (KCSAN_REPORT_VALUE_CHANGE_ONLY hides most, not all):
# a report whose two stacks have no frame of kbloom's modules ("[kbloom]",
# "[xt_bloom]" after a function) is not about kbloom, and a run of tests
# should not fail at random on it. This filter drops such reports from
# the log dmesg_check reads, and prints their titles; a report with one
# of kbloom's frames stays, and fails the run, as does a report cut off
# and any other checker's line printed in the middle of a dropped one.
# Nor is a race inside printk or debugobjects (the title names only
# printk's and the console's functions, or debugobjects' checks), which
# any caller can meet, kbloom's too: DEBUG_KOBJECT_RELEASE prints from
# every kobject_put(), and DEBUG_OBJECTS checks every page freed, so a
# filter's last put or a batch's kvfree() shows in such a report's
# stack, under their own frames (one seen: debug_check_no_obj_freed
# against itself, on its statistics).
# The VM boots with panic_on_warn=0 for this (check.sh): a report must not
# end the run before it can be told apart; any warning still fails
# dmesg_check. And with log_buf_len=16M, so that no report scrolls out of
# the log before it is read.
kcsan_drop_foreign() {
	awk '
	/BUG: KCSAN:/ { inr = 1; buf = ""; title = $0 }
	inr {
		buf = buf $0 "\n"
		if ($0 ~ /=====/) {
			inr = 0
			# The title: "... data-race in f+0x1/0x2 [/ g+0x3/0x4]".
			fns = title
			sub(/^.*data-race in /, "", fns)
			gsub(/\+0x[0-9a-f]+\/0x[0-9a-f]+( \[[a-z_]+\])?/, "", fns)
			# Clones the compiler made: console_emit_next_record.constprop.0.
			gsub(/\.(constprop|isra|part|cold)(\.[0-9]+)?/, "", fns)
			fn = "((_?v?printk|console_)[a-z_]*|debug_check_no_obj_freed|debug_object_[a-z_]*)"
			infra_only = fns ~ ("^ *" fn "( */ *" fn ")? *$")
			if (buf ~ /\[(kbloom|xt_bloom)\]/ && !infra_only) {
				printf "%s", buf
			} else {
				print title | "cat 1>&2"
				# Other CPUs print meanwhile: their reports stay.
				n = split(buf, line, "\n")
				for (i = 1; i <= n; i++)
					if (line[i] ~ /WARNING:|Oops|KASAN:|UBSAN:|general protection|BUG:/ &&
					    line[i] !~ /BUG: KCSAN:/)
						print line[i]
			}
		}
		next
	}
	{ print }
	# A report cut off (still printing, or the log ended): it stays.
	END { if (inr) printf "%s", buf }'
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
	dmesg | kcsan_drop_foreign 2>&1 >/dev/null |
		sed 's/^.*BUG: KCSAN:/# kcsan: a race outside kbloom, not counted:/'
	dmesg_check_through kcsan_drop_foreign 2>/dev/null
}
