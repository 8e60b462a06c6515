# SPDX-License-Identifier: GPL-2.0
#
# Time-windowed filters on real time (issue 8), sourced by tests.sh: a
# short window forgets, a refreshed key stays, rotation by hand, images,
# bad input, and memory given back on destroy.

KBLOOM_CHECKS="$KBLOOM_CHECKS run_window"

# Milliseconds since boot.
window_now() { read -r up _ </proc/uptime; echo "$(( ${up%.*} * 1000 + 10#${up#*.} * 10 ))"; }

run_window() {
	b=bloomctl
	# The module has windows (KUnit kbloom_window proves them); these
	# end-to-end checks need a bloomctl that can make one.
	if ! $b create --help 2>&1 | grep -q -- --window; then
		ok "windowed filters end to end # SKIP this bloomctl has no --window"
		return
	fi
	$b create w_probe --capacity 10 --fpr 0.01 --window 1s >/dev/null 2>&1
	$b destroy w_probe
	used0=$(cat /sys/kernel/bloom/memory_used)

	# W = 2 s, G = 2: rotations every second. A key added once is gone
	# within 2 s (and present for at least 1 s); a key refreshed every
	# half second by test-and-add stays.
	check_exit 0 "create a 2 s window of 2 generations" \
		$b create win --capacity 10000 --fpr 0.01 --window 2s --generations 2
	check "sysfs window_ms is 2000" [ "$(cat /sys/kernel/bloom/filters/win/window_ms)" = 2000 ]
	check "sysfs generations is 2" [ "$(cat /sys/kernel/bloom/filters/win/generations)" = 2 ]
	t0=$(window_now)
	$b add win once
	$b test-and-add win kept >/dev/null
	check_exit 0 "a new key is there at once" $b query win once
	forgot=
	while [ $(( $(window_now) - t0 )) -lt 3500 ]; do
		sleep 0.5
		check_exit 0 "refreshed key still seen at $(( $(window_now) - t0 )) ms" $b test-and-add win kept
		if [ -z "$forgot" ] && ! $b query win once >/dev/null 2>&1; then
			forgot=$(( $(window_now) - t0 ))
		fi
	done
	echo "# window: the key added once was forgotten after ${forgot:-never} ms (W = 2000 ms, G = 2)"
	check "a key added once is forgotten within W (+ slack)" [ -n "$forgot" ] && [ "$forgot" -le 2600 ]
	check "a key added once stays at least W(G-1)/G" [ -n "$forgot" ] && [ "$forgot" -ge 900 ]
	check "sysfs rotations counts the rotations" [ "$(cat /sys/kernel/bloom/filters/win/rotations)" -ge 3 ]
	check_exit 0 "-j show has the window" $b -j show win
	for k in window_ms generations rotations; do
		has "\"$k\"" /tmp/out || not_ok "show JSON has $k"
	done

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

	# Bad input: each a clear error, nothing made.
	check_exit 2 "rotate on a plain filter is refused" sh -c "$b create wplain --bits 1024 --hashes 3 >/dev/null && $b rotate wplain"
	check_exit 2 "one generation is refused" $b create wbad --capacity 10 --fpr 0.01 --window 1s --generations 1
	check_exit 2 "17 generations are refused" $b create wbad --capacity 10 --fpr 0.01 --window 1s --generations 17
	check_exit 2 "--rotate-at-fill without a window is refused" $b create wbad --capacity 10 --fpr 0.01 --rotate-at-fill
	check_exit 2 "a malformed duration is refused" $b create wbad --capacity 10 --fpr 0.01 --window 10parsecs
	check "no filter was made by a refused create" [ ! -e /sys/kernel/bloom/filters/wbad ]
	check_exit 2 "merge of windowed filters is refused" $b merge wman wman2
	# A corrupt image: the generation count no longer matches the payload.
	cp /tmp/wman.img /tmp/wbad.img
	printf '\005' | dd of=/tmp/wbad.img bs=1 seek=96 conv=notrunc 2>/dev/null
	check_exit 2 "an image whose generation count does not match is refused" $b load wbad /tmp/wbad.img
	check "...and made nothing" [ ! -e /sys/kernel/bloom/filters/wbad ]

	for f in win wman wman2 wplain; do $b destroy $f; done
	rm -f /tmp/wman.img /tmp/wbad.img
	# Timers stopped and memory given back (frees follow a grace period).
	i=0
	while [ "$(cat /sys/kernel/bloom/memory_used)" != "$used0" ] && [ $i -lt 50 ]; do
		sleep 0.1; i=$((i + 1))
	done
	check "memory_used back to its value before ($used0)" [ "$(cat /sys/kernel/bloom/memory_used)" = "$used0" ]
}
