#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run each libFuzzer harness for SECONDS, starting from its committed seed
# corpus (corpus/<harness>/, read only); what it finds goes to
# work/<harness>/. Prints one "ok - ..." or "not ok - ..." line per
# harness, as tools/check.sh counts them, and exits 1 if any harness
# failed to build or found a crash, a leak, undefined behaviour, a failed
# check or an input slower than 20 s.
#
# Usage: run.sh [SECONDS [HARNESS...]]    (default: 20, all four)

set -u

here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-20}
[ $# -gt 0 ] && shift
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(fuzz_image fuzz_keys fuzz_core fuzz_flowkey)

case $secs in
''|*[!0-9]*) echo "usage: $0 [SECONDS [HARNESS...]]" >&2; exit 2 ;;
esac

status=0
echo "1..${#harnesses[@]}"
for h in "${harnesses[@]}"; do
	work=$here/work/$h
	if ! make -s -C "$here" "$h" >"$here/work.$h.build.log" 2>&1; then
		echo "not ok - $h: does not build (clang with libFuzzer needed)"
		sed 's/^/    /' "$here/work.$h.build.log" | tail -20
		rm -f "$here/work.$h.build.log"
		status=1
		continue
	fi
	rm -f "$here/work.$h.build.log"
	mkdir -p "$work/corpus"
	rm -f "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*
	"$here/$h" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/" \
		"$work/corpus" "$here/corpus/$h" >"$work/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
	if [ "$rc" = 0 ]; then
		echo "ok - $h: $secs s, ${runs:-?} inputs, no failure"
		continue
	fi
	status=1
	artifact=$(find "$work" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' \
		-o -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' | head -1)
	echo "not ok - $h: exit $rc after ${runs:-?} inputs; reproduce with: $here/$h ${artifact:-(no artifact)}; log: $work/log"
	grep -m 3 -E 'check failed|ERROR: |runtime error|SUMMARY' "$work/log" | sed 's/^/    /'
done
exit $status
