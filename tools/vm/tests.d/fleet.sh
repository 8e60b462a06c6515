# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# bloomsync with the module, sourced by tests.sh: a real nats-server with
# JetStream on the loopback, host "vm" on /dev/bloom (the module's own
# KBLOOM_IOC_COLLECT and KBLOOM_IOC_APPLY) and host "peer" on bloomctl's
# fake device (fakedev.so, LD_PRELOADed into the dynamically linked
# bloomctl and bloomsync). A key added on either reaches the other's fleet
# filter; the module refuses, through APPLY's fill limit, a peer's update
# that would fill the fleet filter past --max-fill. tools/bloomsync's own
# tests cover the rest (outages, gaps, server restarts, windows, three
# hosts) on fake devices.

KBLOOM_CHECKS="$KBLOOM_CHECKS run_fleet"

FL=/tmp/fleet
FL_URL=nats://127.0.0.1:4222

# fl_peer CMD ARGS...: CMD (bloomctl-dyn or bloomsync) on the fake host.
fl_peer() {
	fl_cmd=$1
	shift
	if [ "$fl_cmd" = bloomsync ]; then
		set -- -s "$FL_URL" --host peer --state-dir "$FL/peer/run" "$@"
	fi
	env LD_PRELOAD="$L/fakedev.so" FAKEDEV="$FL/peer/dev" \
		FAKEDEV_STATE="$FL/peer/state" FAKEDEV_KEYS=1 FAKEDEV_TIMER=1 \
		"$fl_cmd" -d "$FL/peer/dev" "$@"
}

# fl_vm ARGS...: bloomsync on the module.
fl_vm() {
	bloomsync -s "$FL_URL" --host vm --state-dir "$FL/vm/run" "$@"
}

# Is something listening on 127.0.0.1:4222 (0x107E; state 0A, LISTEN)?
fl_listening() {
	grep -q '0100007F:107E 00000000:0000 0A' /proc/net/tcp
}

# Does the daemon's status have a line for the peer yet? (Its state is
# written as it goes.)
fl_status_peer() {
	fl_vm status fl > "$FL/status" 2>&1 &&
		grep -q '^peer peer: lag .*, seq [0-9]*, [0-9]* bytes' "$FL/status"
}

fl_stop() {
	for p in $fl_pids; do kill "$p" 2>/dev/null; done
	for p in $fl_pids; do wait "$p" 2>/dev/null; done
	fl_pids=
}

run_fleet() {
	for x in nats-server bloomsync bloomctl-dyn; do
		if ! command -v "$x" >/dev/null || [ ! -f "$L/fakedev.so" ]; then
			echo "# fleet: $x or fakedev.so is not in this VM: skipped"
			return 0
		fi
	done
	# The uapi's promises bloomsync relies on, checked on the module as
	# tools/bloomsync's tests check them on the fake device.
	if command -v blocks-check >/dev/null; then
		blocks-check /dev/bloom > /tmp/bchk.out 2>&1
		fl_rc=$?
		check "fleet: blocks-check on the module: $(tail -n 1 /tmp/bchk.out)" \
			[ "$fl_rc" -eq 0 ]
		grep '^not ok' /tmp/bchk.out | sed 's/^/#   /'
	fi
	rm -rf "$FL"
	mkdir -p "$FL/nats" "$FL/vm/run" "$FL/peer/run" "$FL/peer/state"
	: > "$FL/peer/dev"
	ip link set lo up
	fl_pids=
	nats-server -js -a 127.0.0.1 -p 4222 -sd "$FL/nats" > "$FL/nats.log" 2>&1 &
	fl_pids="$!"
	# A Go program's start under emulation takes its time.
	if wait_for 180 fl_listening; then
		ok "fleet: nats-server -js listens on the loopback"
	else
		not_ok "fleet: nats-server -js listens on the loopback"
		sed 's/^/#   /' "$FL/nats.log" | tail -20
		sed 's/^/#   /' /proc/net/tcp | head -10
	fi
	for f in fl fl.fleet; do bloomctl destroy "$f" >/dev/null 2>&1; done
	check_exit 0 "fleet: create fl on the module" \
		bloomctl create fl --capacity 2000 --fpr 0.01
	check_exit 0 "fleet: template put fl (the module's shape and seed)" \
		fl_vm template put fl
	check_exit 0 "fleet: join fl on the module: fl.fleet made from the template" \
		fl_vm join fl
	check_exit 0 "fleet: join fl on the peer's fake device" \
		fl_peer bloomsync join fl
	# Started directly, not through the functions: $! must be bloomsync
	# (env execs it), which holds the module until it is stopped.
	bloomsync -s "$FL_URL" --host vm --state-dir "$FL/vm/run" \
		run fl --interval 200ms --max-fill 30 > "$FL/vm.log" 2>&1 &
	fl_pids="$fl_pids $!"
	env LD_PRELOAD="$L/fakedev.so" FAKEDEV="$FL/peer/dev" \
		FAKEDEV_STATE="$FL/peer/state" FAKEDEV_KEYS=1 FAKEDEV_TIMER=1 \
		bloomsync -s "$FL_URL" --host peer --state-dir "$FL/peer/run" \
		-d "$FL/peer/dev" run fl --interval 200ms > "$FL/peer.log" 2>&1 &
	fl_pids="$fl_pids $!"

	bloomctl add fl from-the-module >/dev/null
	check "fleet: a key added on the module reaches the peer's fleet filter (COLLECT)" \
		wait_for 30 fl_peer bloomctl-dyn query fl.fleet from-the-module
	check "fleet: ...and the module's own fleet filter (APPLY)" \
		wait_for 30 bloomctl query fl.fleet from-the-module
	fl_peer bloomctl-dyn add fl from-the-peer >/dev/null
	check "fleet: a key added on the peer reaches the module's fleet filter (APPLY)" \
		wait_for 30 bloomctl query fl.fleet from-the-peer
	check_exit 1 "fleet: a key nobody added is not there" \
		bloomctl query fl.fleet from-nobody
	check "fleet: the module's filter tracks its changes" \
		sh -c 'bloomctl -j show fl | grep -q "\"track_changes\": *true"'
	check "fleet: status names the peer, with its sequence and bytes" \
		wait_for 30 fl_status_peer
	sed 's/^/#   /' "$FL/status"

	# The peer overfills: 3000 keys in a filter for 2000, past the
	# module's --max-fill 30: the module refuses the update and says so.
	seq 1 3000 | sed 's/^/flood-/' > "$FL/flood"
	fl_peer bloomctl-dyn add fl --file "$FL/flood" >/dev/null
	check "fleet: the module refuses the peer's overfilling update and logs it" \
		wait_for 30 grep -q -i "refus" "$FL/vm.log"
	fl_bits=$(cat /sys/kernel/bloom/filters/fl.fleet/bits)
	fl_set=$(cat /sys/kernel/bloom/filters/fl.fleet/bits_set)
	check "fleet: the fleet filter stays under the limit ($fl_set of $fl_bits bits)" \
		[ $((fl_set * 100)) -le $((fl_bits * 30)) ]
	bloomctl add fl after-the-flood >/dev/null
	check "fleet: the module's keys still reach the peer" \
		wait_for 30 fl_peer bloomctl-dyn query fl.fleet after-the-flood
	fl_stop
	sed 's/^/#   /' "$FL/vm.log" "$FL/peer.log" | tail -12
	for f in fl fl.fleet; do bloomctl destroy "$f" >/dev/null 2>&1; done
	rm -rf "$FL"
}
