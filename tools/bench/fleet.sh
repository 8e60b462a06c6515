#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bloomsync natively: a real nats-server (JetStream), hosts faked by
# bloomctl's fakedev.c (FAKEDEV_KEYS: keys set bits with the module's own
# kmod/kbloom_core.c; change tracking, COLLECT and APPLY as the uapi says).
#
#  1. Bytes on the wire per interval against the image, for a 1%-FPR
#     filter sized for CAPACITY keys (default 10M), at each of RATES new
#     keys per second (default "1000 10000 100000") on one host: what the
#     publisher sent (deltas, and snapshots when a delta would exceed a
#     quarter of the image) for MEASURE seconds of keys (default 5),
#     counted once it has sent them all.
#  2. Propagation latency: from `bloomctl add` on the publishing host to
#     the key answering "maybe" in a subscriber's fleet filter (polled),
#     SAMPLES times, with each of SUBSCRIBERS (default "1 3 10"), at --interval
#     LAT_INTERVAL (default 1s), on a filter of LAT_CAPACITY keys (default
#     100k: the fake device reads and writes the whole filter on every
#     ioctl, which a 10M-key filter would make the latency of).
#  3. Catch-up after an outage: a subscriber stopped for OUTAGE seconds
#     (default 60) while the publisher takes OUTAGE_RATE new keys a second
#     (default 10000, filter of OUTAGE_CAPACITY keys, default 1M), then
#     started again: the time until its fleet filter has every key.
#
# Usage: fleet.sh path/to/bloomsync path/to/bloomctl
# Every number printed is measured in this run.

set -u

if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
	echo "usage: $0 path/to/bloomsync path/to/bloomctl" >&2
	exit 2
fi
BLOOMSYNC=$(readlink -f "$1")
BLOOMCTL=$(readlink -f "$2")
top=$(cd "$(dirname "$0")/../.." && pwd)
NATS_SERVER=${NATS_SERVER:-$(command -v nats-server || echo /usr/sbin/nats-server)}
CAPACITY=${CAPACITY:-10M}
RATES=${RATES:-1000 10000 100000}
MEASURE=${MEASURE:-5}
SAMPLES=${SAMPLES:-25}
LAT_INTERVAL=${LAT_INTERVAL:-1s}
LAT_CAPACITY=${LAT_CAPACITY:-100k}
SUBSCRIBERS=${SUBSCRIBERS:-1 3 10}
OUTAGE=${OUTAGE:-60}
OUTAGE_RATE=${OUTAGE_RATE:-10000}
OUTAGE_CAPACITY=${OUTAGE_CAPACITY:-1M}
export BLOOMCTL_DEVICE=/nonexistent/bloom
exec </dev/null

tmp=$(mktemp -d) || exit 2
pids=()
cleanup() {
	local p

	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# bloomctl's fake device, built by its own rule.
make -s -C "$top/tools/bloomctl" fakedev.so || exit 2
cp "$top/tools/bloomctl/fakedev.so" "$tmp/fakedev.so"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="nats://127.0.0.1:$port"
"$NATS_SERVER" -js -a 127.0.0.1 -p "$port" -sd "$tmp/js" >"$tmp/nats.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do
	python3 -c "import socket; socket.create_connection(('127.0.0.1', $port)).close()" 2>/dev/null && break
	sleep 0.1
done

henv() {
	mkdir -p "$tmp/$1/state" "$tmp/$1/run"
	[ -e "$tmp/$1/dev" ] || : >"$tmp/$1/dev"
	hostenv=(env LD_PRELOAD="$tmp/fakedev.so" FAKEDEV="$tmp/$1/dev"
		 FAKEDEV_STATE="$tmp/$1/state" FAKEDEV_KEYS=1)
}

bc() {
	local h=$1

	shift
	henv "$h"
	"${hostenv[@]}" "$BLOOMCTL" -d "$tmp/$h/dev" "$@"
}

bs() {
	local h=$1

	shift
	henv "$h"
	"${hostenv[@]}" "$BLOOMSYNC" -s "$url" --host "$h" -d "$tmp/$h/dev" \
		--state-dir "$tmp/$h/run" "$@"
}

# daemon HOST CMD NAME ARGS...: bloomsync CMD NAME in the background.
daemon() {
	local h=$1

	shift
	henv "$h"
	"${hostenv[@]}" "$BLOOMSYNC" -s "$url" --host "$h" -d "$tmp/$h/dev" \
		--state-dir "$tmp/$h/run" "$@" >>"$tmp/$h.log" 2>&1 &
	last_pid=$!
	pids+=("$last_pid")
}

# pubfield HOST NAME FIELD: a number of the publisher's state.
pubfield() {
	sed -n "s/^publish .* $3 \\([0-9]*\\).*/\\1/p" "$tmp/$1/run/$2.state" 2>/dev/null
}

now_ms() {
	date +%s%3N
}

# keys BASE RATE SECS PREFIX: BASE.S for each second S, RATE unique keys.
keys() {
	python3 - "$@" <<'EOF'
import sys
base, rate, secs, pre = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
for s in range(secs):
    with open("%s.%d" % (base, s), "w") as f:
        for i in range(rate):
            f.write("%ss%d-k%d\n" % (pre, s, i))
EOF
}

# ---- 1. bytes on the wire -------------------------------------------------

bc P create big --capacity "$CAPACITY" --fpr 0.01 >"$tmp/create.out" || exit 2
bs P template put big >/dev/null || exit 2
bs P join big >/dev/null || exit 2
# The wire only: no fleet filter on P, whose APPLY (the whole 12 MB file
# read and written by the fake device per call) would slow the ticks.
bc P destroy big.fleet >/dev/null || exit 2
bits=$(bc P -j show big | python3 -c 'import json, sys; print(json.load(sys.stdin)["bits"])')
echo "# filter: $CAPACITY keys at 1% FPR: $bits bits, $(sed -n 's/.*, \([0-9]*\) bytes$/\1/p' "$tmp/create.out") bytes of image payload"
echo "# one publishing host, --interval 1s, --snapshot-every 1h (a snapshot at start, and when a delta would pass a quarter of the image)"
echo "# $MEASURE s of keys at each rate, then until the publisher is idle: all it sent for them, per 1 s interval"
echo "# image (zlib): the filter saved compressed at the end, what one snapshot would send then"
echo "# lag: how long the publisher took to catch up after the last second of keys (the fake device"
echo "# reads and writes the whole filter file on every ioctl: a 10M-key filter makes that slow)"
printf '%-10s %14s %15s %7s %9s %13s %13s %10s %10s %9s\n' "keys/s" "bytes/interval" "blocks/interval" "deltas" "snapshots" "image payload" "image (zlib)" "wire/image" "wire/zlib" "lag"
# pubstate: "updated bytes blocks deltas snapshots" of P's publisher.
pubstate() {
	local u

	u=$(sed -n 's/^updated_ms //p' "$tmp/P/run/big.state" 2>/dev/null)
	echo "${u:-0} $(pubfield P big bytes) $(pubfield P big blocks) $(pubfield P big deltas) $(pubfield P big snapshots)"
}

# drained: the publisher's counters stood still over three state writes.
drained() {
	local s u last=

	for _ in 1 2 3; do
		s=$(pubstate)
		u=${s%% *}
		while [ "$(pubstate | cut -d' ' -f1)" = "$u" ]; do sleep 0.1; done
		[ -n "$last" ] && [ "${s#* }" != "$last" ] && return 1
		last=${s#* }
	done
}

for rate in $RATES; do
	rm -f "$tmp/P/run/big.state"
	daemon P publish big --interval 1s --snapshot-every 1h
	ppid=$last_pid
	keys "$tmp/keys" "$rate" "$MEASURE" "r$rate-"
	# The snapshot a publisher starts with, then quiet.
	until [ "$(pubfield P big snapshots)" = 1 ] && drained; do sleep 0.2; done
	read -r _ b0 k0 d0 n0 <<<"$(pubstate)"
	# MEASURE seconds of keys, RATE a second, then until all is sent.
	t0=$(now_ms)
	for s in $(seq 0 $((MEASURE - 1))); do
		t=$(now_ms)
		bc P add big --file "$tmp/keys.$s" >/dev/null
		left=$((1000 - ($(now_ms) - t)))
		[ "$left" -gt 0 ] && sleep "$(printf '0.%03d' "$left")"
	done
	t1=$(now_ms)
	until drained; do sleep 0.2; done
	t2=$(now_ms)
	read -r _ b1 k1 d1 n1 <<<"$(pubstate)"
	img=$(pubfield P big image_bytes)
	bc P save --compress big "$tmp/big.img" >/dev/null || exit 2
	zimg=$(stat -c %s "$tmp/big.img")
	python3 - "$rate" "$MEASURE" "$b0" "$b1" "$k0" "$k1" "$d0" "$d1" "$n0" "$n1" "$img" "$zimg" "$((t1 - t0))" "$((t2 - t1))" <<'EOF'
import sys
(rate, secs, b0, b1, k0, k1, d0, d1, n0, n1, img, zimg, feed,
 drain) = map(int, sys.argv[1:])
per = (b1 - b0) / secs
print("%-10d %14.0f %15.0f %7d %9d %13d %13d %9.2f%% %9.1f%% %8.1fs" %
      (rate, per, (k1 - k0) / secs, d1 - d0, n1 - n0, img, zimg,
       100.0 * per / img, 100.0 * per / zimg, max(0, drain - 3000) / 1000.0))
EOF
	kill "$ppid"
	wait "$ppid" 2>/dev/null
	rm -f "$tmp"/keys.*
done

# ---- 2. propagation latency -----------------------------------------------

# latency NSUB: SAMPLES keys added on P, each polled for on NSUB subscribers.
latency() {
	local nsub=$1 i h t0 done_hosts subs=() sp=()

	for i in $(seq 1 "$nsub"); do subs+=("S$i"); done
	for h in "${subs[@]}"; do
		bs "$h" join lat >/dev/null || exit 2
		daemon "$h" subscribe lat
		sp+=("$last_pid")
	done
	daemon P publish lat --interval "$LAT_INTERVAL"
	sp+=("$last_pid")
	sleep 2
	: >"$tmp/lat.$nsub"
	for i in $(seq 1 "$SAMPLES"); do
		# A random phase against the publisher's ticks.
		sleep "0.$((RANDOM % 1000))"
		t0=$(now_ms)
		bc P add lat "lat-$nsub-$i" >/dev/null
		done_hosts=()
		while [ "${#done_hosts[@]}" -lt "$nsub" ]; do
			for h in "${subs[@]}"; do
				[[ " ${done_hosts[*]} " == *" $h "* ]] && continue
				if bc "$h" query lat.fleet "lat-$nsub-$i" >/dev/null 2>&1; then
					echo "$(($(now_ms) - t0))" >>"$tmp/lat.$nsub"
					done_hosts+=("$h")
				fi
			done
			[ $(($(now_ms) - t0)) -gt 10000 ] && { echo "# sample $i: not everywhere after 10 s"; break; }
		done
	done
	for i in "${sp[@]}"; do kill "$i" 2>/dev/null; wait "$i" 2>/dev/null; done
	python3 - "$nsub" "$tmp/lat.$nsub" <<'EOF'
import sys
v = sorted(int(x) for x in open(sys.argv[2]))
def pct(p):
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]
print("%-12s %8d %8d %8d %8d %8d" % (sys.argv[1], len(v), pct(50), pct(90), pct(99), v[-1]))
EOF
}

bc P create lat --capacity "$LAT_CAPACITY" --fpr 0.01 >/dev/null || exit 2
bs P template put lat >/dev/null || exit 2
bs P join lat >/dev/null || exit 2
echo
echo "# propagation latency, ms: bloomctl add on the publisher to \"maybe\" in a subscriber's fleet filter"
echo "# (polled with bloomctl query: adds its own few ms), --interval $LAT_INTERVAL, $LAT_CAPACITY keys at 1%, $SAMPLES keys"
printf '%-12s %8s %8s %8s %8s %8s\n' "subscribers" "samples" "p50" "p90" "p99" "max"
for n in $SUBSCRIBERS; do
	latency "$n"
done

# ---- 3. catch-up after an outage ------------------------------------------

bc P create cu --capacity "$OUTAGE_CAPACITY" --fpr 0.01 >/dev/null || exit 2
bs P template put cu >/dev/null || exit 2
bs P join cu >/dev/null || exit 2
bs C join cu >/dev/null || exit 2
keys "$tmp/cu" "$OUTAGE_RATE" "$OUTAGE" cu-
daemon P publish cu --interval 1s
cup=$last_pid
daemon C subscribe cu
cus=$last_pid
sleep 3
kill "$cus"
wait "$cus" 2>/dev/null
for s in $(seq 0 $((OUTAGE - 1))); do
	t=$(now_ms)
	bc P add cu --file "$tmp/cu.$s" >/dev/null
	left=$((1000 - ($(now_ms) - t)))
	[ "$left" -gt 0 ] && sleep "$(printf '0.%03d' "$left")"
done
# Polled for the last key of every second (a whole query of every key
# takes the fake device seconds); then every key, once.
cat "$tmp"/cu.* > "$tmp/cu.all"
for f in "$tmp"/cu.[0-9]*; do tail -n 1 "$f"; done > "$tmp/cu.last"
t0=$(now_ms)
daemon C subscribe cu
cus=$last_pid
until bc C query cu.fleet --file "$tmp/cu.last" >/dev/null 2>&1; do
	[ $(($(now_ms) - t0)) -gt 300000 ] && { echo "# catch-up: not done after 300 s"; break; }
	sleep 0.2
done
t1=$(now_ms)
if bc C query cu.fleet --file "$tmp/cu.all" >/dev/null 2>&1; then
	cu_all=yes
else
	cu_all=NO
fi
echo
echo "# catch-up: a subscriber away for $OUTAGE s while the publisher took $OUTAGE_RATE new keys/s"
echo "# ($((OUTAGE * OUTAGE_RATE)) keys, $OUTAGE_CAPACITY-key filter at 1%), from its restart to every key in its fleet filter"
printf '%-10s %10s %12s %10s\n' "outage" "keys" "catch-up" "all keys"
printf '%-10s %10d %11.1fs %10s\n' "${OUTAGE}s" "$((OUTAGE * OUTAGE_RATE))" "$(( (t1 - t0) / 100 ))e-1" "$cu_all"
kill "$cus" "$cup" 2>/dev/null
wait "$cus" "$cup" 2>/dev/null
