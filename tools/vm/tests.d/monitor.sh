# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# Fill alerts and `bloomctl monitor`, sourced by tests.sh: the uevents of
# filters created and destroyed, and the alerts, counted exactly: a
# filter filled past its design capacity sends one "full" (and one again
# after a clear), a counting filter one "saturated" when a first counter
# sticks, a rotate-at-fill window "rotated"; the monitor's JSON lines.

KBLOOM_CHECKS="$KBLOOM_CHECKS run_monitor"

# mon_count EVENT FILTER: lines of /tmp/mon.json for that event and filter.
mon_count() {
	grep -c "\"event\":\"$1\",\"filter\":\"$2\"" /tmp/mon.json
}

run_monitor() {
	for f in mon monc monw; do bloomctl destroy "$f" >/dev/null 2>&1; done
	bloomctl -j monitor > /tmp/mon.json 2> /tmp/mon.err &
	mp=$!
	# It listens once it has bound its socket: a moment.
	sleep 1
	check_exit 0 "monitor: create mon (100 keys at 1%)" \
		bloomctl create mon --capacity 100 --fpr 0.01
	seq 1 300 > /tmp/mon.keys
	check_exit 0 "monitor: 300 keys into mon, three times its capacity" \
		bloomctl add mon --file /tmp/mon.keys
	seq 301 600 | bloomctl add mon >/dev/null
	check_exit 0 "monitor: clear mon" bloomctl clear mon
	check_exit 0 "monitor: fill it again" bloomctl add mon --file /tmp/mon.keys
	check_exit 0 "monitor: a counting filter by bits, monc" \
		bloomctl create monc --bits 64 --hashes 2 --counting
	printf "k\nk\nk\nk\nk\nk\nk\nk\n" > /tmp/mon.same
	check_exit 0 "monitor: the same key into monc until a counter sticks" \
		bloomctl add monc --batch 1 --file /tmp/mon.same --count
	bloomctl add monc --batch 1 --file /tmp/mon.same --count >/dev/null
	check_exit 0 "monitor: a rotate-at-fill window, monw" \
		bloomctl create monw --capacity 50 --fpr 0.01 --window 1h --rotate-at-fill
	check_exit 0 "monitor: 300 keys into monw" bloomctl add monw --file /tmp/mon.keys
	# Its rotation runs from a work item: wait for it (10 s at most).
	# shellcheck disable=SC2016 # expanded by the inner shell
	wait_for 10 sh -c '[ "$(cat /sys/kernel/bloom/filters/monw/rotations)" != 0 ]'
	for f in mon monc monw; do bloomctl destroy "$f"; done
	# The alerts go out from a work item: give them a moment.
	sleep 2
	kill "$mp" 2>/dev/null
	wait "$mp" 2>/dev/null
	sed 's/^/# monitor: /' /tmp/mon.json | head -20
	pk_eq "monitor: one create and one destroy of mon" \
		"$(mon_count create mon)$(mon_count destroy mon)" 11
	pk_eq "monitor: one full per crossing: once filled, once after the clear" \
		"$(mon_count full mon)" 2
	pk_eq "monitor: one saturated for monc" "$(mon_count saturated monc)" 1
	pk_eq "monitor: no full for monc, created by bits" "$(mon_count full monc)" 0
	check "monitor: monw rotated because full" [ "$(mon_count rotated monw)" -ge 1 ]
	check "monitor: a full alert carries the fill" \
		grep -q '"event":"full","filter":"mon","bits_set":[0-9]*,"bits":[0-9]*' /tmp/mon.json
	check "monitor: every line is one JSON object" \
		sh -c '! grep -v "^{.*}$" /tmp/mon.json'
	check "monitor: nothing on stderr" [ ! -s /tmp/mon.err ]
	rm -f /tmp/mon.json /tmp/mon.err /tmp/mon.keys /tmp/mon.same
}
