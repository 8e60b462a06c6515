# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# The blocked layout end to end, sourced by tests.sh: sizing
# as calc computes it, no false negative and the target rate kept on real
# keys, counting, windows, --like and merge, images, and the refusals.
# The bloom match on blocked filters is in packets.sh (allow4, cnt4).

KBLOOM_CHECKS="$KBLOOM_CHECKS run_blocked"

run_blocked() {
	b=bloomctl
	bn=50000
	check_exit 0 "blocked: create --layout blocked" \
		$b create blk --capacity $bn --fpr 0.01 --layout blocked
	check "blocked: sysfs layout is blocked" \
		[ "$(cat /sys/kernel/bloom/filters/blk/layout)" = blocked ]
	bits=$(cat /sys/kernel/bloom/filters/blk/bits)
	$b -j calc --capacity $bn --fpr 0.01 --layout blocked >/tmp/out
	check "blocked: the module's size is calc's ($bits bits, whole 512-bit blocks)" \
		sh -c "[ $((bits % 512)) = 0 ] && grep -q '\"bits\": *$bits' /tmp/out"
	seq 1 $bn >/tmp/blk.in
	seq 1000001 $((1000000 + 4 * bn)) >/tmp/blk.out
	check_exit 0 "blocked: add $bn keys" sh -c "$b add blk </tmp/blk.in"
	check_exit 0 "blocked: every one of them is found (no false negative)" \
		sh -c "$b query blk --count </tmp/blk.in"
	fp=$(present blk /tmp/blk.out)
	echo "# blocked: $fp false positives of $((4 * bn)) absent keys (target 1%)"
	# 1% of 4n, plus 4 binomial sigma and the spread of one filter's rate.
	check "blocked: the measured rate keeps the 1% target ($fp of $((4 * bn)))" \
		[ "${fp:-99999}" -le $((4 * bn / 100 + 4 * bn / 1000 + 100)) ]
	check_exit 0 "blocked: show -j says blocked" $b -j show blk
	check "blocked: show JSON layout" has '"layout": *"blocked"' /tmp/out
	# The estimates invert the blocked fill, and the rate is the blocked one.
	est=$(json_num estimated_keys /tmp/out)
	efpr=$(json_num estimated_fpr /tmp/out)
	echo "# blocked: estimated keys $est (truth $bn), estimated fpr $efpr"
	check "blocked: estimated keys within 2% of $bn ($est)" \
		awk -v e="${est:-0}" -v n=$bn 'BEGIN { d = (e - n) / n; exit !(d < 0.02 && d > -0.02) }'
	check "blocked: estimated fpr near the 1% it was sized for ($efpr)" \
		awk -v f="${efpr:-0}" 'BEGIN { exit !(f > 0.008 && f < 0.0115) }'

	# --like and merge: same layout merges; plain and blocked do not.
	check_exit 0 "blocked: create --like keeps the layout" $b create blk2 --like blk
	check "blocked: the copy is blocked" \
		[ "$(cat /sys/kernel/bloom/filters/blk2/layout)" = blocked ]
	$b add blk2 only-in-2
	check_exit 0 "blocked: merge two blocked filters" $b merge blk blk2
	check_exit 0 "blocked: the merged key is found" $b query blk only-in-2
	$b create pln --bits "$bits" --hashes 6 >/dev/null
	check_exit 2 "blocked: merge of a plain filter into a blocked one is refused" $b merge blk pln
	check "blocked: the refusal says the layouts differ" has "layouts differ" /tmp/err
	check_exit 2 "blocked: --bits not whole blocks is refused" \
		$b create blk3 --bits 1000 --hashes 3 --layout blocked

	# Images: the layout travels; the loaded filter answers the same.
	check_exit 0 "blocked: save" $b save blk /tmp/blk.img
	check_exit 0 "blocked: load" $b load blk4 /tmp/blk.img
	check "blocked: the loaded filter is blocked" \
		[ "$(cat /sys/kernel/bloom/filters/blk4/layout)" = blocked ]
	check_exit 0 "blocked: the loaded filter has every key" \
		sh -c "$b query blk4 --count </tmp/blk.in"
	check "blocked: ... and the same bits set" \
		[ "$(cat /sys/kernel/bloom/filters/blk4/bits_set)" = "$(cat /sys/kernel/bloom/filters/blk/bits_set)" ]

	# Counting: 128-counter blocks, remove, saturation never loses a key.
	check_exit 0 "blocked: a counting filter" \
		$b create blkc --capacity 10000 --fpr 0.01 --layout blocked --counting
	check "blocked: its bits are whole 128-counter blocks" \
		[ $(($(cat /sys/kernel/bloom/filters/blkc/bits) % 128)) = 0 ]
	for _ in $(seq 20); do echo k20; done >/tmp/k20
	$b add blkc </tmp/k20
	$b remove blkc </tmp/k20 >/dev/null
	check_exit 0 "blocked: a saturated key survives 20 removes" $b query blkc k20
	check_exit 0 "blocked: add then remove" sh -c "$b add blkc once && $b remove blkc once"
	check_exit 1 "blocked: the removed key is gone" $b query blkc once
	check_exit 0 "blocked: keys added to a counting filter are found" \
		sh -c "$b add blkc </tmp/blk.in && $b query blkc --count </tmp/blk.in"

	# Windows: generations of blocked filters rotate like any others.
	check_exit 0 "blocked: a windowed filter" \
		$b create blkw --capacity 1000 --fpr 0.01 --layout blocked --window 0 --generations 2
	$b add blkw w1
	$b rotate blkw
	check_exit 0 "blocked: kept after one rotation" $b query blkw w1
	$b rotate blkw
	check_exit 1 "blocked: forgotten after two" $b query blkw w1
	for f in blk blk2 blk4 blkc blkw pln; do $b destroy $f; done
	rm -f /tmp/blk.in /tmp/blk.out /tmp/blk.img /tmp/k20
}
