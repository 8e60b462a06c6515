#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of bloomsync that need no kbloom module: a real nats-server
# (JetStream, on a free port, its store in a temporary directory), and
# "hosts" that are each a fake device (bloomctl's fakedev.c, LD_PRELOADed,
# with FAKEDEV_KEYS so that keys set bits with the module's own code and
# FAKEDEV_TIMER so that windowed filters rotate on the clock), its own
# state directory and its own bloomsync process.
#
# Usage: test-native.sh path/to/bloomsync path/to/bloomctl
# BLOOMSYNC_TEST_KEEP=1 keeps the temporary directory (logs, state).
# Prints "ok N - ..." or "not ok N - ..." per check, then "P passed, F failed".

set -u

if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
	echo "usage: $0 path/to/bloomsync path/to/bloomctl" >&2
	exit 2
fi
BLOOMSYNC=$(readlink -f "$1")
BLOOMCTL=$(readlink -f "$2")
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
NATS_SERVER=${NATS_SERVER:-$(command -v nats-server || echo /usr/sbin/nats-server)}
export BLOOMCTL_DEVICE=/nonexistent/bloom
export PYTHONDONTWRITEBYTECODE=1
exec </dev/null

tmp=$(mktemp -d) || exit 2
pids=()
nats_pid=
cleanup() {
	local p

	for p in "${pids[@]}" $nats_pid; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	if [ -n "${BLOOMSYNC_TEST_KEEP:-}" ]; then
		echo "# kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT

start_s=$SECONDS
# shellcheck source=tools/lib-tap.sh
. "$top/tools/lib-tap.sh"

# ---- the hosts ------------------------------------------------------------

# bloomctl's fake device, built by its own rule.
if ! make -s -C "$top/tools/bloomctl" fakedev.so >"$tmp/cc.err" 2>&1; then
	sed 's/^/# /' "$tmp/cc.err"
	result 1 "fakedev.so builds"
	tap_done
	exit 1
fi
cp "$top/tools/bloomctl/fakedev.so" "$tmp/fakedev.so"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="nats://127.0.0.1:$port"

# The fake device's COLLECT and APPLY against the uapi (blocks-check.c,
# which runs on the module's /dev/bloom as well): bloomsync's tests below
# are only as good as it.
if cc -std=gnu11 -Wall -Wextra -Werror -I"$top/include/uapi" -o "$tmp/blocks-check" \
	"$here/blocks-check.c" 2>"$tmp/cc.err"; then
	mkdir -p "$tmp/bchk"
	: >"$tmp/bchk.dev"
	env LD_PRELOAD="$tmp/fakedev.so" FAKEDEV="$tmp/bchk.dev" FAKEDEV_STATE="$tmp/bchk" \
		FAKEDEV_KEYS=1 "$tmp/blocks-check" "$tmp/bchk.dev" >"$tmp/bchk.out" 2>&1
	while read -r status rest; do
		case $status in
		ok) result 0 "blocks-check: ${rest#* - }" ;;
		not) result 1 "blocks-check: ${rest#ok * - }" ;;
		esac
	done <"$tmp/bchk.out"
else
	sed 's/^/# /' "$tmp/cc.err"
	result 1 "blocks-check.c builds"
fi

# henv HOST: hostenv=(env ...), the environment of HOST's fake device.
henv() {
	mkdir -p "$tmp/$1/state" "$tmp/$1/run"
	[ -e "$tmp/$1/dev" ] || : >"$tmp/$1/dev"
	hostenv=(env LD_PRELOAD="$tmp/fakedev.so" FAKEDEV="$tmp/$1/dev"
		 FAKEDEV_STATE="$tmp/$1/state" FAKEDEV_KEYS=1 FAKEDEV_TIMER=1)
}

# hostenv HOST CMD...: CMD on HOST's fake device.
hostenv() {
	henv "$1"
	shift
	"${hostenv[@]}" "$@"
}

# bc HOST ARGS...: bloomctl on HOST; output in $tmp/out, $tmp/err, $rc.
bc() {
	local h=$1

	shift
	hostenv "$h" "$BLOOMCTL" -d "$tmp/$h/dev" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# bs HOST ARGS...: bloomsync on HOST, as bc.
bs() {
	local h=$1

	shift
	hostenv "$h" "$BLOOMSYNC" -s "$url" --host "$h" -d "$tmp/$h/dev" \
		--state-dir "$tmp/$h/run" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	return "$rc"
}

# says RC DESC PATTERN COMMAND...: COMMAND (bloomsync, or bs) exits RC,
# saying PATTERN (grep) on stdout if RC is 0, else on stderr.
says() {
	local want=$1 desc=$2 pat=$3 st stream=err

	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	st=$?
	[ "$want" = 0 ] && stream=out
	[ "$st" = "$want" ] && grep -q -- "$pat" "$tmp/$stream"
	result $? "$desc"
}

# daemon HOST NAME ARGS...: bloomsync run NAME in the background.
declare -A daemon_pid
daemon() {
	local h=$1 name=$2

	shift 2
	henv "$h"
	# Not through a function: $! must be bloomsync's (env execs it).
	"${hostenv[@]}" "$BLOOMSYNC" -s "$url" --host "$h" -d "$tmp/$h/dev" \
		--state-dir "$tmp/$h/run" run "$name" --interval 200ms "$@" \
		>>"$tmp/$h/$name.log" 2>&1 &
	daemon_pid[$h.$name]=$!
	pids+=($!)
}

stop_daemon() {
	local p=${daemon_pid[$1.$2]:-}

	[ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	daemon_pid[$1.$2]=
}

# wait_for SECONDS CMD...: until CMD succeeds; its status.
wait_for() {
	local deadline=$((SECONDS + $1))

	shift
	while ! "$@"; do
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

# has HOST FILTER KEY...: every key maybe present in HOST's FILTER.
has() {
	local h=$1 f=$2

	shift 2
	hostenv "$h" "$BLOOMCTL" -d "$tmp/$h/dev" query "$f" "$@" >/dev/null 2>&1
}

# lacks HOST FILTER KEY: the key is absent.
lacks() {
	hostenv "$1" "$BLOOMCTL" -d "$tmp/$1/dev" query "$2" "$3" >/dev/null 2>&1
	[ $? = 1 ]
}

# nats_py PORT ARGS...: the Python script on stdin, with s a socket to
# the server on PORT (its INFO line read), f its reader, connect(), which
# says CONNECT and subscribes to _INBOX.t, and req(SUBJECT, PAYLOAD),
# which publishes PAYLOAD (bytes, or an object sent as JSON) with
# _INBOX.t to reply to, and returns the reply's JSON.
nats_py() {
	python3 -c 'import json, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
f = s.makefile("rb")
f.readline()
def connect():
    s.sendall(b"CONNECT {\"verbose\":false,\"headers\":true,\"no_responders\":true}\r\n"
              b"SUB _INBOX.t 1\r\n")
def req(subject, payload):
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    s.sendall(b"PUB %s _INBOX.t %d\r\n%s\r\n" % (subject.encode(), len(data), data))
    while True:
        line = f.readline()
        if line.startswith(b"PING"):
            s.sendall(b"PONG\r\n")
        elif line.startswith(b"MSG"):
            return json.loads(f.read(int(line.split()[-1]) + 2)[:-2])
        elif line.startswith(b"HMSG"):
            p = line.split()
            body = f.read(int(p[-1]) + 2)[:-2]
            return json.loads(body[int(p[-2]):] or b"{}")
exec(sys.stdin.read())' "$@"
}

start_nats() {
	"$NATS_SERVER" -js -a 127.0.0.1 -p "$port" -sd "$tmp/js" >>"$tmp/nats.log" 2>&1 &
	nats_pid=$!
	wait_for 10 python3 -c "import socket; socket.create_connection(('127.0.0.1', $port)).close()" 2>/dev/null
}

stop_nats() {
	kill "$nats_pid" 2>/dev/null
	wait "$nats_pid" 2>/dev/null
	nats_pid=
}

# same_payloads: A, B and C have the same conv.fleet, payload for payload
# (after its header: a plain filter's 96 bytes).
same_payloads() {
	local h

	for h in A B C; do
		bc $h save conv.fleet "$tmp/$h.img"
		[ "$rc" = 0 ] || return 1
		tail -c +97 "$tmp/$h.img" >"$tmp/$h.payload"
	done
	[ -s "$tmp/A.payload" ] && cmp -s "$tmp/A.payload" "$tmp/B.payload" &&
		cmp -s "$tmp/B.payload" "$tmp/C.payload"
}

# fleet NAME HOSTS ARGS...: template NAME, of a filter created on A with
# ARGS (then destroyed there), joined by each of HOSTS.
fleet() {
	local name=$1 hosts=$2 h

	shift 2
	bc A create "$name" "$@"
	bs A template put "$name"
	bc A destroy "$name"
	for h in $hosts; do
		bs "$h" join "$name"
		[ "$rc" = 0 ] || echo "# join $name on $h: $(cat "$tmp/err")"
	done
}

# published HOST NAME: the publisher's last sequence number.
published() {
	sed -n 's/^publish seq \([0-9]*\) .*/\1/p' "$tmp/$1/run/$2.state" 2>/dev/null
}

# published_after HOST NAME SEQ: it published past SEQ.
published_after() {
	local s

	s=$(published "$1" "$2")
	[ -n "$s" ] && [ "$s" -gt "$3" ]
}

# ---- no server needed -----------------------------------------------------

"$BLOOMSYNC" --help >"$tmp/out" 2>&1
result $? "--help"
check "--help lists the commands" grep -q "template" "$tmp/out"
says 2 "an unknown command is named (exit 2)" "unknown command 'frobnicate'" "$BLOOMSYNC" frobnicate
says 2 "a bad --host is refused" "host 'a b'" "$BLOOMSYNC" --host 'a b' status x
"$BLOOMSYNC" --host h join >/dev/null 2>&1
result $(($? != 2)) "join needs a name (exit 2)"
says 2 "--interval 0 is refused" "--interval" "$BLOOMSYNC" --host h run f --interval 0
says 2 "status without a daemon names the filter (exit 2)" \
	"filter 'f': no state" "$BLOOMSYNC" --host h --state-dir "$tmp/none" status f

says 2 "no server: the server is named (exit 2)" "127.0.0.1:$port" bs A template put f

start_nats
result $? "nats-server -js starts on port $port"

# ---- templates ------------------------------------------------------------

bc A create f --capacity 10000 --fpr 0.01
check "template put f" bs A template put f
says 0 "putting the same template again is fine" "identical" bs A template put f
says 0 "template show from another host" "95851 bits, 7 hashes" bs B template show f
bs B -j template show f
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["bits"] != 95851)' "$tmp/out"
result $? "template show -j"

bc X create f --capacity 20000 --fpr 0.01
bs X template put f
[ "$rc" = 2 ] && grep -q "template 'f' exists and differs" "$tmp/err" &&
	grep -q "bits 191702 != 95851" "$tmp/err" && grep -q "seed" "$tmp/err"
result $? "a second, different template is refused, naming bits and seed"
bs X join f
[ "$rc" = 2 ] && grep -q "filter 'f' exists and differs from template 'f'" "$tmp/err" &&
	grep -q "bits 191702 != 95851" "$tmp/err"
result $? "join refuses a local filter of another shape, naming the field"
bc Y create f --capacity 10000 --fpr 0.01
says 2 "join refuses a local filter of the same size and another seed: 'seed'" \
	"differs from template 'f' (filter != template): seed$" bs Y join f
bc Z create cnt --capacity 1000 --fpr 0.01 --counting
says 2 "a counting filter cannot be a template" \
	"filter 'cnt': a counting filter" bs Z template put cnt
says 2 "join of a template nobody put" "template 'nosuch': no such template" bs Z join nosuch

bs A join f
[ "$rc" = 0 ] && grep -q "filter 'f': matches" "$tmp/out" && grep -q "filter 'f.fleet': created" "$tmp/out"
result $? "join on the template's host makes the fleet filter"
says 0 "join on another host makes both filters" "filter 'f': created" bs B join f
bc B show f
check "the joined filter has the template's shape" grep -q "95851" "$tmp/out"
check "join again is a no-op" bs B join f

# A template with bits set, put around bloomsync (a plain KV put).
bc A create bad --capacity 1000 --fpr 0.01
bc A add bad in-the-template
bc A save bad "$tmp/bad.img"
nats_py "$port" "$tmp/bad.img" <<'EOF' >"$tmp/kv.out" 2>&1
connect()
print(req("$KV.kbloom-templates.bad", open(sys.argv[2], "rb").read()))
EOF
says 2 "join refuses a template whose payload has bits set" \
	"template 'bad': [0-9]* bits set: a template's payload is all zero" bs C join bad
bc C info bad
check "and makes no filter from it" [ "$rc" != 0 ]
says 2 "template put does not call a template with bits set identical" \
	"template 'bad': [0-9]* bits set" bs A template put bad

# ---- a key travels --------------------------------------------------------

daemon A f
daemon B f
bc A add f alpha beta
t0=$SECONDS
wait_for 5 has B f.fleet alpha beta
result $? "a key added on A is in B's fleet filter (within $((SECONDS - t0))s)"
check "and in A's own fleet filter" has A f.fleet alpha beta
check "a key nobody added is not" lacks B f.fleet gamma
check "B's local filter holds only B's keys" lacks B f alpha
bc B add f gamma
check "and back: B's key reaches A" wait_for 5 has A f.fleet gamma

wait_for 3 grep -qs "^peer A .* synced 1" "$tmp/B/run/f.state"
bs B status f
[ "$rc" = 0 ] && grep -q "^peer A: lag" "$tmp/out" && grep -q "in sync" "$tmp/out" &&
	grep -q "fleet filter: [0-9]* of 95851 bits set" "$tmp/out"
result $? "status: A's lag, sequence, fill"
bs B -j status f
python3 - "$tmp/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
p = [x for x in d["peers"] if x["host"] == "A"]
sys.exit(not (p and p[0]["seq"] >= 1 and p[0]["bytes"] > 0 and p[0]["synced"]
              and d["fleet_bits"] == 95851 and 0 < d["fleet_fill"] < 0.5
              and not d["stale"]))
EOF
result $? "status -j"

# ---- B offline, A goes on -------------------------------------------------

stop_daemon B f
seq -f "off%g" 1 200 >"$tmp/keys"
bc A add f --file "$tmp/keys"
bc A add f late1
sleep 0.5
check "B is offline: it does not have A's new keys" lacks B f.fleet late1
daemon B f
check "B restarted catches up from the stream" wait_for 5 has B f.fleet late1
bc B query f.fleet --count --file "$tmp/keys"
check "all 200 keys added while B was away" grep -q "present 200," "$tmp/out"

# ---- the server restarts --------------------------------------------------

stop_nats
bc A add f during-outage
sleep 1
start_nats
result $? "nats-server restarts on its store"
check "a key added while the server was down reaches B after it is back" wait_for 10 has B f.fleet during-outage
bc A add f after-restart
check "sync resumes after the restart" wait_for 5 has B f.fleet after-restart
check "B logged the reconnection" grep -q "reconnected" "$tmp/B/f.log"

# ---- a poisoned update ----------------------------------------------------

bs E join f
bc E save f "$tmp/e.img"
python3 "$top/tools/bloomctl/mkimage.py" --from "$tmp/e.img" --ones "$tmp/e.img"
bc E load --replace f "$tmp/e.img"
result "$rc" "host E's filter is all ones"
daemon E f
check "B refuses E's all-ones blocks and logs it" wait_for 5 grep -qs "refused .* from host E" "$tmp/B/f.log"
grep "refused" "$tmp/B/f.log" | grep -q "max-fill 50%"
result $? "the log names the limit"
bc B -j show f.fleet
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not 0 < d["bits_set"] < d["bits"] / 2)' "$tmp/out"
result $? "B's fleet filter stays under half full"
check "and still answers no to a key nobody added" lacks B f.fleet never-added-anywhere
check "status counts E's refused blocks" wait_for 3 grep -qs "^peer E .* refused [1-9]" "$tmp/B/run/f.state"
grep -qs "^peer E .* synced 0 " "$tmp/B/run/f.state"
result $? "and shows E out of sync: its blocks are missing from the fleet filter"
bc A add f after-poison
check "A's keys still reach B" wait_for 5 has B f.fleet after-poison
stop_daemon E f

# ---- snapshots that are not the fleet filter's ----------------------------

bc X create other --capacity 100000 --fpr 0.01
bc X save other "$tmp/x.img"
nats_py "$port" "$tmp/x.img" "$tmp/e.img" <<'EOF' >"$tmp/snap.out" 2>&1
# Raw snapshot messages (Documentation/bloomsync.md, "Messages").
import os, struct
connect()
def pub(host, seq, count, chunks, body):
    hb = host.encode() + b"\0" * (-len(host) % 8)
    d = (b"\x89KBSYNC\n" + struct.pack("<IIQQqIIQII", 1, 2, seq, 0, 0, count,
         chunks, seq - count, len(host), 0) + hb + body)
    print(req("kbloom.f." + host, d))
other = open(sys.argv[2], "rb").read()
fleet_header = open(sys.argv[3], "rb").read()[:112]
pub("X", 1, 0, 1, other)                                   # another shape
pub("Y", 1, 0, 1, fleet_header + os.urandom(64 << 10))     # too big
pub("Z", 1, 0, 0xffffffff, fleet_header)                   # too many chunks
hb = b"V\nfake line"; hb += b"\0" * (-len(hb) % 8)          # a forged log line
d = (b"\x89KBSYNC\n" + struct.pack("<IIQQqIIQII", 1, 2, 1, 0, 0, 0, 1, 1, 11, 0) +
     hb + fleet_header)
s.sendall(b"PUB kbloom.f.V %d\r\n%s\r\n" % (len(d), d))
for i in range(40):                                        # garbage
    s.sendall(b"PUB kbloom.f.W 9\r\nnot-mine!\r\n")
s.sendall(b"PING\r\n")
while not f.readline().startswith(b"PONG"):
    pass
EOF
wait_for 5 grep -qs "host X: snapshot at sequence 1 refused: not the fleet filter's shape: bits" "$tmp/B/f.log"
result $? "B refuses a snapshot of another shape before reading it"
wait_for 5 grep -qs "host Y: snapshot at sequence 1 refused: more than the [0-9]* bytes" "$tmp/B/f.log"
result $? "B refuses a snapshot larger than the fleet filter's image"
wait_for 5 grep -qs "host Z: snapshot at sequence 1 refused: 4294967295 chunks" "$tmp/B/f.log"
result $? "B refuses a snapshot of more chunks than the fleet filter's image needs"
has B f.fleet after-poison && lacks B f.fleet never-added-anywhere
result $? "B's fleet filter is unchanged"
wait_for 5 grep -qs "^peer W .* bad 40" "$tmp/B/run/f.state" &&
	[ "$(grep -c "kbloom.f.W: message .* refused" "$tmp/B/f.log")" = 5 ]
result $? "40 refused messages from one host: counted, 5 logged"
grep -q "kbloom.f.V: message .* refused: a host name of other characters" "$tmp/B/f.log" &&
	! grep -q "^fake line" "$tmp/B/f.log"
result $? "a host name with a newline is refused, not logged"

# ---- a gap in a host's sequence -------------------------------------------

stop_daemon B f
before=$(published A f)
bc A add f gap-key
check "A published gap-key" wait_for 5 published_after A f "$before"
nats_py "$port" "kbloom.f.A" >"$tmp/del.out" 2>&1 <<'EOF'
# Raw NATS protocol: delete the last message on a subject from the stream.
connect()
r = req("$JS.API.STREAM.MSG.GET.KBLOOM", {"last_by_subj": sys.argv[2]})
seq = r["message"]["seq"]
r = req("$JS.API.STREAM.MSG.DELETE.KBLOOM", {"seq": seq})
print(seq, r)
sys.exit(not r.get("success"))
EOF
result $? "the message carrying gap-key is deleted from the stream"
before=$(published A f)
bc A add f after-gap
wait_for 5 published_after A f "$before"
daemon B f
check "B gets the lost key from a snapshot A sent for the gap" wait_for 8 has B f.fleet gap-key after-gap
check "B logged the gap" grep -q "host A: gap" "$tmp/B/f.log"
check "A was asked for the snapshot (not the 60 s schedule)" grep -q "a peer asked for a snapshot" "$tmp/A/f.log"
wait_for 3 grep -qs "^peer A .* synced 1 .* gaps [1-9]" "$tmp/B/run/f.state"
result $? "B is in sync again and counts the gap"

# ---- a host that starts over at sequence 1 --------------------------------

stop_daemon A f
nats_py "$port" >"$tmp/purge.out" 2>&1 <<'EOF'
# Raw NATS protocol: purge host A's subject (as if it expired).
connect()
r = req("$JS.API.STREAM.PURGE.KBLOOM", {"filter": "kbloom.f.A"})
print(r)
sys.exit(not r.get("success"))
EOF
result $? "host A's subject is purged"
daemon A f
bc A add f after-purge
check "B takes A's messages after A started over at sequence 1" wait_for 8 has B f.fleet after-purge
check "B logged that A started over" grep -q "host A: started over at sequence 1" "$tmp/B/f.log"

# ---- three hosts converge -------------------------------------------------

fleet conv "A B C" --capacity 20000 --fpr 0.01
for h in A B C; do
	daemon $h conv
	seq -f "$h-burst-%g" 1 1500 >"$tmp/$h.keys"
done
for h in A B C; do
	bc $h add conv --file "$tmp/$h.keys" &
done
check "three hosts' fleet filters are byte-identical after a burst" wait_for 10 same_payloads
ok=0
for h in A B C; do
	for o in A B C; do
		bc $h query conv.fleet --count --file "$tmp/$o.keys"
		grep -q "present 1500," "$tmp/out" || ok=1
	done
done
result $ok "each fleet filter has every host's 1500 keys"
bc C destroy conv.fleet
cpid=${daemon_pid[C.conv]}
wait_for 5 eval "! kill -0 $cpid 2>/dev/null"
wait "$cpid"
[ $? = 2 ] && grep -q "filter 'conv' or 'conv.fleet' is gone: stopping" "$tmp/C/conv.log"
result $? "a daemon whose fleet filter is destroyed stops (exit 2) for systemd to join again"
daemon_pid[C.conv]=
for h in A B; do stop_daemon $h conv; done

# ---- a windowed fleet forgets on schedule ---------------------------------

fleet win "A B" --capacity 1000 --fpr 0.01 --window 2s --generations 2
tb=$(date +%s%3N)
bc B -j show win.fleet
ta=$(date +%s%3N)
# Its newest generation began on a multiple of W / G = 1000 ms: its age
# is the time since the last whole second, read between tb and ta.
python3 - "$tmp/out" "$tb" "$ta" <<'EOF'
import json, sys
age = json.load(open(sys.argv[1]))["newest_age_ms"]
tb, ta = int(sys.argv[2]), int(sys.argv[3])
sys.exit(not any((t - age) % 1000 == 0 for t in range(tb, ta + 1)))
EOF
result $? "join puts the fleet filter's rotations on the wall-clock schedule"
daemon A win
daemon B win
sleep 0.5
bc A add win fleeting
t0=$(date +%s%N)
check "a key added on A to a windowed filter reaches B" wait_for 3 has B win.fleet fleeting
wait_for 5 lacks B win.fleet fleeting
gone=$((($(date +%s%N) - t0) / 1000000))
[ "$gone" -ge 900 ] && [ "$gone" -le 3500 ]
result $? "B forgets it between W (G-1)/G and W after the add (${gone} ms)"
lacks A win.fleet fleeting && lacks A win fleeting
result $? "A forgot it too"
sleep 1
check "it does not come back" lacks B win.fleet fleeting
bc A add win again
check "a new key in a later generation still travels" wait_for 3 has B win.fleet again

# A windowed filter's snapshot: B comes back to a key that only A's
# latest snapshot holds (the delta that carried it is before it), in the
# generation of its epoch, and forgets it on schedule. W = 6 s, G = 2.
for h in A B; do stop_daemon $h win; done
fleet win6 "A B" --capacity 1000 --fpr 0.01 --window 6s --generations 2
daemon A win6
wait_for 3 grep -qs "^publish seq 1 " "$tmp/A/run/win6.state"
bc A add win6 in-snapshot
t0=$(date +%s%N)
check "A published the key in a delta" wait_for 3 grep -qs "^publish seq 2 .* deltas 1 " "$tmp/A/run/win6.state"
stop_daemon A win6
daemon A win6
wait_for 3 grep -qs "^publish seq 3 .* snapshots 1 " "$tmp/A/run/win6.state"
result $? "A restarted and published a snapshot of the windowed filter"
daemon B win6
check "B, started after it, has the key from the snapshot alone" wait_for 3 has B win6.fleet in-snapshot
wait_for 3 grep -qs "^peer A seq 3 synced 1 .* snapshots 1 " "$tmp/B/run/win6.state"
result $? "B took A's snapshot and nothing before it"
wait_for 8 lacks B win6.fleet in-snapshot
gone=$((($(date +%s%N) - t0) / 1000000))
[ "$gone" -ge 2500 ] && [ "$gone" -le 7000 ]
result $? "B forgets it within the window of its add (${gone} ms)"
for h in A B; do stop_daemon $h win6; done

# ---- the example server configuration: one user per host -----------------

port2=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sed -e 's/web1/A/g; s/web2/B/g' -e "s|^listen:.*|listen: 127.0.0.1:$port2|" \
	-e "s|store_dir:.*|store_dir: \"$tmp/js2\"|" "$here/nats-server.conf.example" >"$tmp/perm.conf"
WEB1_PASSWORD=pa WEB2_PASSWORD=pb ADMIN_PASSWORD=pw "$NATS_SERVER" -c "$tmp/perm.conf" >"$tmp/nats2.log" 2>&1 &
nats2_pid=$!
pids+=("$nats2_pid")
wait_for 10 python3 -c "import socket; socket.create_connection(('127.0.0.1', $port2)).close()" 2>/dev/null
result $? "nats-server runs nats-server.conf.example (hosts A and B)"
url0=$url
url="nats://admin:pw@127.0.0.1:$port2"
bc A create perm --capacity 1000 --fpr 0.01
check "the admin user may put a template" bs A template put perm
url="nats://A:pa@127.0.0.1:$port2"
bs A join perm
url="nats://B:pb@127.0.0.1:$port2"
check "host B may read it and join" bs B join perm
daemon B perm
url="nats://A:pa@127.0.0.1:$port2"
daemon A perm
bc A add perm permitted
check "with the example's permissions, A's key reaches B" wait_for 5 has B perm.fleet permitted
nats_py "$port2" <<'EOF' >"$tmp/perm.out" 2>&1
# Host A, by the raw protocol, publishing on host B's subject.
s.sendall(b'CONNECT {"verbose":false,"user":"A","pass":"pa"}\r\nPUB kbloom.perm.B 1\r\nx\r\n'
          b'PUB $KV.kbloom-templates.perm 1\r\nx\r\nPING\r\n')
while True:
    line = f.readline()
    print(line.decode().strip())
    if not line or line.startswith(b"PONG"):
        break
EOF
grep -q "Permissions Violation for Publish to \"kbloom.perm.B\"" "$tmp/perm.out"
result $? "A may not publish on B's subject"
grep -q "Permissions Violation for Publish to \"\$KV.kbloom-templates.perm\"" "$tmp/perm.out"
result $? "A may read the templates but not put or overwrite one"
! grep -q 'A:pa@\|B:pb@' "$tmp/A/perm.log" "$tmp/B/perm.log"
result $? "the daemons' logs name the server without its password"
url="nats://A:S3CRET@127.0.0.1:1"
bs A join perm
[ "$rc" != 0 ] && grep -q 'nats://127.0.0.1:1' "$tmp/err" && ! grep -q S3CRET "$tmp/err"
result $? "a server that cannot be reached is named without the password"
url=$url0
for h in A B; do stop_daemon $h perm; done

# ---- done -----------------------------------------------------------------

echo "# $((SECONDS - start_s)) s"
tap_done
