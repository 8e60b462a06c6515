# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# Time-windowed filters on real time, sourced by tests.sh: a
# short window forgets, a refreshed key stays, rotation by hand (refused on
# a plain filter), images, and memory given back on destroy.

KBLOOM_CHECKS="$KBLOOM_CHECKS run_window"

run_window() {
	b=bloomctl
	# Filters the earlier tests destroyed are freed a grace period late,
	# and the debug kernel (DEBUG_KOBJECT_RELEASE) delays each release by
	# up to a second more; a grace period on a loaded emulated machine
	# can take seconds. With no filter left, wait for memory_used to
	# reach 0; with some, for it to stay put for 2 s. That is the
	# baseline (20 s at most).
	i=0 same=0 used0=
	while [ $i -lt 40 ] && [ $same -lt 4 ]; do
		u=$(cat /sys/kernel/bloom/memory_used)
		if [ "$u" != 0 ] && [ -z "$(ls /sys/kernel/bloom/filters)" ]; then
			same=0 used0=$u
		elif [ "$u" = "$used0" ]; then
			same=$((same + 1))
		else
			same=0 used0=$u
		fi
		sleep 0.5; i=$((i + 1))
	done

	# W = 6 s, G = 3: a rotation every 2 s. Judged by when each look
	# started, so a slow VM (the debug kernel) only looks less often: a
	# key added once must be there in every look that started within
	# W(G-1)/G = 4 s of its add, and gone in every look that started
	# past W (+ 0.5 s for the timer and the rotation itself) after it; a
	# key refreshed by test-and-add is seen whenever its last refresh was
	# less than 4 s before.
	check_exit 0 "create a 6 s window of 3 generations" \
		$b create win --capacity 10000 --fpr 0.01 --window 6s --generations 3
	check "sysfs window_ms is 6000" [ "$(cat /sys/kernel/bloom/filters/win/window_ms)" = 6000 ]
	check "sysfs generations is 3" [ "$(cat /sys/kernel/bloom/filters/win/generations)" = 3 ]
	t0=$(now_ms)
	$b add win once
	$b test-and-add win kept >/dev/null
	t1=$(now_ms)
	refreshed=$t1
	early_lost='' late_seen='' forgot='' kept_lost='' looks=0
	while :; do
		t=$(now_ms)
		[ $((t - t0)) -gt 9000 ] && break
		looks=$((looks + 1))
		if $b query win once >/dev/null 2>&1; then
			[ $((t - t1)) -gt 6500 ] && late_seen="$late_seen $((t - t0))"
		else
			[ $((t - t0)) -lt 4000 ] && early_lost="$early_lost $((t - t0))"
			[ -z "$forgot" ] && forgot=$((t - t0))
		fi
		if ! $b test-and-add win kept >/dev/null 2>&1 &&
		   [ $((t - refreshed)) -lt 4000 ]; then
			kept_lost="$kept_lost $((t - t0))"
		fi
		refreshed=$(now_ms)
		sleep 0.5
	done
	echo "# window: $looks looks; the key added once was first missed at ${forgot:-never} ms (W = 6000 ms, G = 3)"
	check "a key added once is there for W(G-1)/G (missed at:${early_lost:- never})" [ -z "$early_lost" ]
	# Never seen late, and missed at some point: both in one test.
	check "a key added once is gone after W (seen at:${late_seen:- never})" \
		[ "$late_seen/${forgot:+missed}" = /missed ]
	check "a key refreshed within W(G-1)/G stays (lost at:${kept_lost:- never})" [ -z "$kept_lost" ]
	check "sysfs rotations counts the rotations" [ "$(cat /sys/kernel/bloom/filters/win/rotations)" -ge 3 ]
	check_exit 0 "-j show has the window" $b -j show win
	check "show JSON has window_ms, generations and rotations" \
		has_keys /tmp/out window_ms generations rotations

	# Manual rotation, and a window of 0 (manual only).
	check_exit 0 "create a manual-only window" \
		$b create wman --capacity 1000 --fpr 0.01 --window 0 --generations 3
	$b add wman k1
	check_exit 0 "rotate by hand" $b rotate wman
	check_exit 0 "rotate again" $b rotate wman
	check_exit 0 "after G-1 rotations the key is there" $b query wman k1
	check_exit 0 "third rotation" $b rotate wman
	check_exit 1 "after G rotations it is gone" $b query wman k1
	check "manual rotations counted" [ "$(cat /sys/kernel/bloom/filters/wman/rotations)" = 3 ]

	# Images carry every generation and the window.
	$b add wman a1
	$b rotate wman
	$b add wman a2
	check_exit 0 "save a windowed filter" $b save wman /tmp/wman.img
	check_exit 0 "load it under a new name" $b load wman2 /tmp/wman.img
	check_exit 0 "both generations' keys came along" $b query wman2 a1 a2
	check "the window came along" [ "$(cat /sys/kernel/bloom/filters/wman2/generations)" = 3 ]
	check_exit 0 "the loaded filter rotates on" $b rotate wman2
	check_exit 0 "...keeping the newer keys" $b query wman2 a2

	# The module refuses it; bloomctl's own refusals of bad windows,
	# merges and images are tools/bloomctl/test-native.sh's.
	check_exit 2 "rotate on a plain filter is refused" sh -c "$b create wplain --bits 1024 --hashes 3 >/dev/null && $b rotate wplain"

	for f in win wman wman2 wplain; do $b destroy $f; done
	rm -f /tmp/wman.img
	# Timers stopped and memory given back (frees follow a grace period).
	wait_for 5 sh -c "[ \"\$(cat /sys/kernel/bloom/memory_used)\" = $used0 ]"
	u=$(cat /sys/kernel/bloom/memory_used)
	check "memory_used back to its value before ($used0; now $u)" [ "$u" = "$used0" ]
}

# win_demo_flows FIRST N PORT: N flows "saddr,dport", sources from the
# integer FIRST on (10.0.0.0 is 167772160), one per line.
win_demo_flows() {
	awk -v s="$1" -v n="$2" -v port="$3" 'BEGIN {
		for (i = s; i < s + n; i++)
			printf "%d.%d.%d.%d,%d\n", int(i / 16777216) % 256,
				int(i / 65536) % 256, int(i / 256) % 256, i % 256, port
	}'
}

# `make demo`: a windowed flow filter keeps its false-positive rate while
# new flows stream in for many windows; a plain filter of the same memory
# fills up and its rate climbs. The window's timer is replaced by rotating
# by hand after each W/G worth of flows, so the demo is the same on any
# machine: WINDOWS windows of N new flows each.
win_demo() { # [N] [WINDOWS]
	local rc
	win_demo_run "$@"
	rc=$?
	# Whatever happened: no filter or file left for the next run.
	bloomctl destroy recent 2>/dev/null
	bloomctl destroy forever 2>/dev/null
	rm -f /tmp/flows /tmp/absent
	return $rc
}

win_demo_run() { # [N] [WINDOWS]
	local n=${1:-50000} windows=${2:-8} g=4 w p q=20000 src=167772160
	local bits hashes wpos ppos theo wtheo over=0
	echo "== bloomctl create recent --capacity $n --fpr 0.01 --window 0 --generations $g"
	bloomctl create recent --capacity "$n" --fpr 0.01 --window 0 --generations $g || return 1
	bits=$(( $(cat /sys/kernel/bloom/filters/recent/bits) * g ))
	hashes=$(cat /sys/kernel/bloom/filters/recent/hashes)
	echo "== bloomctl create forever --bits $bits --hashes $hashes (a plain filter of the same memory)"
	bloomctl create forever --bits "$bits" --hashes "$hashes" || return 1
	# The windowed filter's rate in theory: the union of g generations of
	# n/g flows each (each generation is sized for the whole n, so that
	# a burst of a window's flows in one period still keeps the target).
	wtheo=$(bloomctl -j calc --bits $((bits / g)) --hashes "$hashes" \
		--capacity $((n / g)) | json_num fpr)
	# (1 - f)^g by hand: busybox's awk may be built without ^.
	wtheo=$(awk -v f="$wtheo" -v g=$g 'BEGIN {
		for (p = 1; g-- > 0; ) p *= 1 - f
		printf "%.4f%%", 100 * (1 - p)
	}')
	# Flows never added: another destination port.
	win_demo_flows 184549376 $q 8443 > /tmp/absent
	echo "== $windows windows of $n new flows each (--key saddr,dport), a rotation every $((n / g)) flows; after each window, $q flows never seen are queried"
	echo "   (the windowed filter's rate in theory: $wtheo, at most 1% whatever the arrivals)"
	printf '   %-7s %-9s %-22s %-22s %s\n' window flows "windowed, measured" "plain, measured" "plain, theory"
	for w in $(seq "$windows"); do
		for p in $(seq $g); do
			win_demo_flows $src $((n / g)) 443 > /tmp/flows
			src=$((src + n / g))
			bloomctl add recent --key saddr,dport < /tmp/flows || return 1
			bloomctl add forever --key saddr,dport < /tmp/flows || return 1
			# The newest generation holds the period just ended: rotate
			# before the next, except after the window's last period,
			# where the filter is looked at with all g periods in it.
			[ "$p" -lt $g ] && bloomctl rotate recent
		done
		wpos=$(present recent /tmp/absent --key saddr,dport)
		ppos=$(present forever /tmp/absent --key saddr,dport)
		theo=$(bloomctl -j calc --bits "$bits" --hashes "$hashes" \
		       --capacity $((w * n)) | json_num fpr)
		awk -v w="$w" -v f=$((w * n)) -v a="$wpos" -v b="$ppos" -v q=$q -v t="$theo" 'BEGIN {
			printf "   %-7d %-9d %-22s %-22s %.4f%%\n", w, f,
				sprintf("%.4f%% (%d)", 100 * a / q, a),
				sprintf("%.4f%% (%d)", 100 * b / q, b), 100 * t
		}'
		# Above 1% by more than three binomial sigmas (q = 20000)?
		[ "${wpos:-999999}" -le $((q / 100 + 3 * 14)) ] || over=1
		bloomctl rotate recent
	done
	echo "== bloomctl show recent"
	bloomctl show recent
	[ $over -eq 0 ] && echo "== the windowed filter stayed at or under its 1% target in every window"
	[ $over -eq 0 ]
}
