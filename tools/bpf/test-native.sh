#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Tests of tools/bpf that need no kbloom module, on any kernel that lets
# root use bpf() (5.18 or later: bpf_xdp_load_bytes):
#  - the programs as built: the kfunc program calls the kfuncs, declares
#    struct kbloom_bpf_filter as a STRUCT (libbpf refuses a FWD), and carries
#    the GPL license kfuncs want; the kfunc test programs call all eleven
#    kfuncs, their syscall program only those that change nothing, and
#    the programs that must be refused the others;
#  - the usage errors (exit 2) and runtime errors (exit 1, the object
#    named) of kbloom_xdp (the loader), kbloom_xdp_test (the tests' way in)
#    and tools/bench/kbloom_xdp_bench;
#  - the --map program (BPF bloom filter maps, the same keys, counters and
#    verdicts as the kfunc program) under BPF_PROG_TEST_RUN on crafted
#    packets: verdicts, counters, and keys byte for byte, against
#    literal keys and, where a dynamically linked bloomctl and a C
#    compiler are at hand, against the keys bloomctl builds from text
#    (tools/bloomctl/fakedev.c logs them);
#  - attach, stats, detach on a veth pair, if one can be made;
#  - kbloom_xdp_bench --map.
# The program tests need root on Linux 5.18 or later, and are skipped
# otherwise; there, a program that does not load is a failure.
# POSIX sh: runs in the VM's busybox too.
#
# Usage: test-native.sh path/to/kbloom_xdp path/to/kbloom_xdp_test
#                       path/to/kbloom_xdp_bench [path/to/bloomctl]
# Prints "ok N - ..." or "not ok N - ..." per check, then
# "P passed, F failed, S skipped".

set -u

if [ $# -lt 3 ] || [ ! -x "$1" ] || [ ! -x "$2" ] || [ ! -x "$3" ]; then
	echo "usage: $0 path/to/kbloom_xdp path/to/kbloom_xdp_test path/to/kbloom_xdp_bench [path/to/bloomctl]" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
abs() {
	echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
}
XDP=$(abs "$1")
XT=$(abs "$2")
XB=$(abs "$3")
BLOOMCTL=${4:-$top/tools/bloomctl/bloomctl}
exec </dev/null

tmp=$(mktemp -d) || exit 2
veth=
cleanup() {
	[ -n "$veth" ] && ip link del "$veth" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

# shellcheck source=tools/lib-tap.sh
. "$top/tools/lib-tap.sh"
# On a failure, what the last command said.
tap_out=$tmp/out
tap_err=$tmp/err

# ---- the objects ------------------------------------------------------------

# relocs OBJ: "SECTION KFUNC" per kfunc call of OBJ, sorted, unique, into
# $tmp/err (shown on a failure).
relocs() {
	: >"$tmp/out"
	llvm-objdump -d -r "$1" 2>&1 | awk '
		/^Disassembly of section / { s = $4; sub(/:$/, "", s) }
		/R_BPF_64_32/ { print s, $NF }' | sort -u >"$tmp/err"
}
# calls SECTION KFUNC...: the last relocs has SECTION calling each KFUNC.
calls() {
	c_sec=$1
	shift
	for f in "$@"; do
		grep -qx "$c_sec $f" "$tmp/err" || return 1
	done
}
RO="bpf_kbloom_get bpf_kbloom_put bpf_kbloom_query bpf_kbloom_id bpf_kbloom_query_id"
RW="bpf_kbloom_add bpf_kbloom_test_and_add bpf_kbloom_remove bpf_kbloom_add_id bpf_kbloom_test_and_add_id bpf_kbloom_remove_id"
if command -v llvm-objdump >/dev/null 2>&1 &&
   [ -f "$here/kbloom_xdp.bpf.o" ] &&
   [ -f "$here/kbloom_kfunc_test.bpf.o" ] &&
   [ -f "$here/kbloom_kfunc_refused.bpf.o" ]; then
	relocs "$here/kbloom_xdp.bpf.o"
	calls xdp bpf_kbloom_get bpf_kbloom_put bpf_kbloom_query \
		bpf_kbloom_test_and_add bpf_kbloom_query_id \
		bpf_kbloom_test_and_add_id && calls syscall bpf_kbloom_id
	result $? "kbloom_xdp.bpf.o calls the kfuncs it uses (kfunc relocations)"
	relocs "$here/kbloom_kfunc_test.bpf.o"
	# shellcheck disable=SC2086 # $RO and $RW are lists
	for sec in xdp tc; do
		calls $sec $RO $RW
		result $? "kbloom_kfunc_test.bpf.o: its $sec program calls all eleven kfuncs"
	done
	# shellcheck disable=SC2086
	calls syscall $RO &&
		! grep -qE "^syscall ($(echo $RW | tr ' ' '|'))\$" "$tmp/err"
	result $? "kbloom_kfunc_test.bpf.o: its syscall program calls the kfuncs that change nothing, and only those"
	relocs "$here/kbloom_kfunc_refused.bpf.o"
	# shellcheck disable=SC2086
	calls syscall $RW
	result $? "kbloom_kfunc_refused.bpf.o: syscall programs call each kfunc that changes a filter"
else
	skip "no llvm-objdump or no kbloom_xdp.bpf.o, kbloom_kfunc_test.bpf.o, kbloom_kfunc_refused.bpf.o"
fi
if command -v bpftool >/dev/null 2>&1 && [ -f "$here/kbloom_xdp.bpf.o" ]; then
	bpftool btf dump file "$here/kbloom_xdp.bpf.o" >"$tmp/out" 2>"$tmp/err"
	grep -q "STRUCT 'kbloom_bpf_filter'" "$tmp/out" &&
		! grep -q "FWD 'kbloom_bpf_filter'" "$tmp/out"
	result $? "struct kbloom_bpf_filter is a STRUCT in BTF (libbpf's prototype check refuses a FWD)"
	grep -q "FUNC 'bpf_kbloom_get' type_id=[0-9]* linkage=extern" "$tmp/out"
	result $? "bpf_kbloom_get is an extern function in BTF (a __ksym)"
	for o in kbloom_xdp kbloom_xdp_map kbloom_xdp_leak kbloom_kfunc_test \
		 kbloom_kfunc_refused; do
		llvm-objdump -s -j license "$here/$o.bpf.o" 2>/dev/null |
			grep -q 'GPL'
		result $? "$o.bpf.o: license GPL"
	done
else
	skip "no bpftool or no kbloom_xdp.bpf.o"
fi

# ---- arguments --------------------------------------------------------------

expect 0 "help" "$XDP" help
out_has "kbloom_xdp stats" "help lists stats"
expect 0 "kbloom_xdp_test help" "$XT" help
out_has "test-run" "help lists test-run"
out_has "kfunc OP" "help lists kfunc"
expect 0 "kbloom_xdp_bench --help" "$XB" --help
out_has "--flows-count" "its help lists --flows-count"
expect 2 "an unknown option is a usage error" "$XT" test-run --bogus
expect 2 "a bad filter name is a usage error" "$XT" test-run --allow ../x
err_has "'../x' is not a filter name" "the bad name is named"
expect 2 "a bad packet is a usage error" "$XT" test-run --map --flows f --pkt 'udp 10.0.0.1 > '
err_has "udp 10.0.0.1 > " "the bad packet is named"
expect 2 "ports on a protocol without" "$XT" test-run --map --pkt 'icmp 10.0.0.1:5 > 10.0.0.2'
expect 2 "--allow-addr needs --allow" "$XT" test-run --map --allow-addr 10.0.0.1
expect 2 "--by-id with --map" "$XT" test-run --map --by-id
expect 2 "attach without a device" "$XDP" attach --map
expect 2 "a test-run option on stats" "$XDP" stats --pkt arp lo
expect 2 "bench: --flows-count past 2^21 (each program its own IPv4 flows)" \
	"$XB" --map --flows f --flows-count 2097153 --packets 4194306
err_has "'2097153' is not 1 to 2097152" "... and says the range"
expect 2 "bench: more packets per flow than one test run repeats" \
	"$XB" --map --flows f --packets 1099511627776 --flows-count 1
expect 1 "stats of a device that does not exist" "$XDP" stats kbnosuch0
err_has "device 'kbnosuch0': no such device" "the missing device is named"
expect 2 "kfunc without arguments" "$XT" kfunc
expect 2 "kfunc of an unknown operation" "$XT" kfunc frob f 01
err_has "'frob' is not query, add" "the unknown operation is named"
expect 2 "kfunc query without a key" "$XT" kfunc query f
expect 2 "kfunc: a key that is not hex" "$XT" kfunc add f 0x1
expect 2 "kfunc: a key of an odd number of digits" "$XT" kfunc add f 012
expect 2 "kfunc: --len past the key buffer" "$XT" kfunc add f 01 --len 4105
expect 2 "kfunc get takes no key" "$XT" kfunc get f 01
expect 2 "kfunc get is by name" "$XT" kfunc get --by-id f
expect 2 "kfunc: --tc and --syscall" "$XT" kfunc query --tc --syscall f 01
expect 2 "kfunc add --syscall: syscall programs may not change filters" \
	"$XT" kfunc add --syscall f 01
err_has "syscall programs may only query, get and id" "... and says so"
expect 2 "kfunc: --id 0" "$XT" kfunc query --id 0 f 01
expect 2 "kfunc: a kfunc option on test-run" "$XT" test-run --map --tc
if [ "$(cat /sys/kernel/bloom/kfuncs 2>/dev/null)" != available ]; then
	expect 1 "kfunc without kbloom's kfuncs" "$XT" kfunc query f 01
	err_has "kbloom's kfuncs: " "... says why the kfuncs are missing"
	expect 1 "kfunc-syscall-refused without kbloom's kfuncs" "$XT" kfunc-syscall-refused
	err_has "not loaded, so not checked" "... says it checked nothing"
fi

# ---- can this process run BPF programs at all? ------------------------------

# Decided from who and where we are, never from the program under test:
# a program that the verifier came to refuse must fail, not skip.
kver=$(uname -r)
kmaj=${kver%%.*}
kmin=${kver#*.}
kmin=${kmin%%[!0-9]*}
why=
case "$kmaj.$kmin" in
[0-9]*.[0-9]*) ;;
*) why="Linux $kver: a version not understood" ;;
esac
if [ -n "$why" ]; then
	:
elif [ "$(id -u)" != 0 ]; then
	why="not root"
elif [ "$kmaj" -lt 5 ] || { [ "$kmaj" = 5 ] && [ "$kmin" -lt 18 ]; }; then
	why="Linux $kver, before 5.18 (bpf_xdp_load_bytes)"
fi
if [ -n "$why" ]; then
	skip "$why: no program tests (root on Linux 5.18 or later is needed)"
	tap_done
	exit
fi
run "$XT" test-run --map --pkt arp
[ "$rc" = 0 ]
result $? "root on Linux $kver: the map program loads and runs (exit 0, got $rc)"
if [ "$rc" != 0 ]; then
	# What follows needs it.
	tap_done
	exit 1
fi

# ---- verdicts, counters, keys -----------------------------------------------

# line SPEC VERDICT COUNTERS...: the line of SPEC in $tmp/out says VERDICT
# and these counter changes, and no others.
line() {
	want="$1: $2"
	shift 2
	for c in "$@"; do
		want="$want $c"
	done
	grep -qxF -- "$want" "$tmp/out"
	result $? "$want"
}

# key KIND SPEC HEX: after SPEC's line, KIND-key HEX.
key() {
	awk -v spec="$2" -v kind="$1" -v hex="$3" '
		index($0, spec ": ") == 1 { mine = 1; next }
		/^[^\t]/ { mine = 0 }
		mine && $1 == kind "-key" && $2 == hex { found = 1 }
		END { exit !found }' "$tmp/out"
	result $? "$2: $1 key $3"
}

U4='udp 10.0.0.1:1000 > 10.0.0.2:53'
U6='udp [2001:db8::1]:1000 > [2001:db8::2]:53'
run "$XT" test-run --map --allow a --flows f --allow-addr 10.0.0.1 \
	--allow-addr 2001:db8::1 --show-keys \
	--pkt "$U4" --pkt "$U4" \
	--pkt 'tcp 10.0.0.1:40000 > 10.0.0.2:80' \
	--pkt 'icmp 10.0.0.1 > 10.0.0.2' \
	--pkt "$U4 frag=1480" \
	--pkt "$U4 mf" \
	--pkt "$U4 opts=12" \
	--pkt "$U4 vlan=5 vlan=7" \
	--pkt 'udp 10.0.0.3:1000 > 10.0.0.2:53' \
	--pkt "$U6" \
	--pkt 'tcp [2001:db8::1]:40000 > [2001:db8::2]:443 ext=hop,dst' \
	--pkt "$U6 ext=hop,rt,ah,dst" \
	--pkt "$U6 frag=1232" \
	--pkt "$U6 ext=frag,dst frag=8" \
	--pkt "$U6 ext=hop,hop,hop,hop,hop,hop,hop,hop,hop" \
	--pkt 'udp [2001:db8::3]:1000 > [2001:db8::2]:53' \
	--pkt "$U4 trunc=36" \
	--pkt "$U4 iplen=23" \
	--pkt "$U6 ext=dst iplen=10" \
	--pkt 'raw 0200000000020200000000010800450000140000000040110000' \
	--pkt 'arp'
[ "$rc" = 0 ]
result $? "test-run --map on crafted packets (exit 0)"

line "$U4" XDP_PASS passed+1 new_flows+1
key allow "$U4" 04010a000001
key flow "$U4" 041f0a0000010a0000021103e80035
line 'tcp 10.0.0.1:40000 > 10.0.0.2:80' XDP_PASS passed+1 new_flows+1
key flow 'tcp 10.0.0.1:40000 > 10.0.0.2:80' 041f0a0000010a000002069c400050
line 'icmp 10.0.0.1 > 10.0.0.2' XDP_PASS passed+1 new_flows+1
key flow 'icmp 10.0.0.1 > 10.0.0.2' 041f0a0000010a0000020100000000
# A later fragment: no ports (its first bytes, eeee, are not read).
line "$U4 frag=1480" XDP_PASS passed+1 new_flows+1
key flow "$U4 frag=1480" 041f0a0000010a0000021100000000
# The first fragment has its ports: the same flow as the whole packet.
line "$U4 mf" XDP_PASS passed+1 seen_flows+1
line "$U4 opts=12" XDP_PASS passed+1 seen_flows+1
key flow "$U4 opts=12" 041f0a0000010a0000021103e80035
line "$U4 vlan=5 vlan=7" XDP_PASS passed+1 seen_flows+1
line 'udp 10.0.0.3:1000 > 10.0.0.2:53' XDP_DROP dropped+1
key allow 'udp 10.0.0.3:1000 > 10.0.0.2:53' 04010a000003
line "$U6" XDP_PASS passed+1 new_flows+1
key allow "$U6" 060120010db8000000000000000000000001
key flow "$U6" 061f20010db800000000000000000000000120010db80000000000000000000000021103e80035
key flow 'tcp [2001:db8::1]:40000 > [2001:db8::2]:443 ext=hop,dst' 061f20010db800000000000000000000000120010db8000000000000000000000002069c4001bb
# AH's length is counted in 4-byte units, the others' in 8.
line "$U6 ext=hop,rt,ah,dst" XDP_PASS passed+1 seen_flows+1
key flow "$U6 frag=1232" 061f20010db800000000000000000000000120010db80000000000000000000000021100000000
# A later fragment whose next header is another extension: "fragment".
key flow "$U6 ext=frag,dst frag=8" 061f20010db800000000000000000000000120010db80000000000000000000000022c00000000
line "$U6 ext=hop,hop,hop,hop,hop,hop,hop,hop,hop" XDP_PASS passed+1 errors+1
line 'udp [2001:db8::3]:1000 > [2001:db8::2]:53' XDP_DROP dropped+1
line "$U4 trunc=36" XDP_DROP dropped+1 malformed+1
# Ports past the IPv4 total length, in the frame's padding.
line "$U4 iplen=23" XDP_DROP dropped+1 malformed+1
line "$U6 ext=dst iplen=10" XDP_DROP dropped+1 malformed+1
line 'raw 0200000000020200000000010800450000140000000040110000' XDP_DROP dropped+1 malformed+1
line arp XDP_PASS passed+1
out_has "total: passed 15 dropped 6 new_flows 8 seen_flows 5 errors 1 malformed 4" "the totals add up"

# No allow-list, no flow count: every well-formed IP packet passes, and
# IPv6 extension headers are not even parsed for an address-only key.
run "$XT" test-run --map --pkt "$U4" --pkt "$U6 ext=hop,hop,hop,hop,hop,hop,hop,hop,hop"
line "$U4" XDP_PASS passed+1
line "$U6 ext=hop,hop,hop,hop,hop,hop,hop,hop,hop" XDP_PASS passed+1

run "$XT" test-run --map --allow a --flows f --allow-addr 10.0.0.1 -j --pkt "$U4"
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'import json, sys
d = json.load(sys.stdin)
p = d["packets"][0]
assert p["verdict"] == "XDP_PASS" and p["retval"] == 2, p
assert p["counters"]["new_flows"] == 1 and p["counters"]["passed"] == 1, p
assert d["counters"]["passed"] == 1, d' <"$tmp/out" 2>"$tmp/err"
	result $? "test-run -j is JSON with verdict and counters"
else
	out_has '"verdict":"XDP_PASS"' "test-run -j has the verdict"
fi

# ---- the keys are bloomctl's ------------------------------------------------

# fakedev.so stands in for /dev/bloom and logs the keys bloomctl sends.
if [ -x "$BLOOMCTL" ] && command -v cc >/dev/null 2>&1 &&
   file "$BLOOMCTL" 2>/dev/null | grep -q 'dynamically linked' &&
   make -s -C "$top/tools/bloomctl" fakedev.so >/dev/null 2>"$tmp/cc.err" &&
   cp "$top/tools/bloomctl/fakedev.so" "$tmp/fakedev.so"; then
	mkdir "$tmp/state"
	: >"$tmp/dev"
	bloomctl() {
		: >"$tmp/log"
		env LD_PRELOAD="$tmp/fakedev.so" FAKEDEV="$tmp/dev" \
			FAKEDEV_STATE="$tmp/state" FAKEDEV_LOG="$tmp/log" \
			"$BLOOMCTL" -d "$tmp/dev" "$@" >/dev/null 2>&1
	}
	bloomctl create f --capacity 1000 --fpr 0.01
	# same KIND FIELDS FLOW SPEC: bloomctl's key of FLOW is kbloom_xdp's
	# KIND key of SPEC.
	same() {
		bloomctl add f --key "$2" --flow "$3"
		want=$(sed -n 's/^KEY //p' "$tmp/log")
		run "$XT" test-run --map --allow a --flows f --allow-addr 10.0.0.1 \
			--allow-addr 2001:db8::1 --show-keys --pkt "$4"
		[ -n "$want" ] &&
			grep -qx "	$1-key $want" "$tmp/out"
		result $? "bloomctl --key $2 --flow $3 is the $1 key of '$4' ($want)"
	}
	same allow saddr 10.0.0.1 "$U4"
	same allow saddr 2001:db8::1 "$U6"
	F=saddr,daddr,proto,sport,dport
	same flow $F 10.0.0.1,10.0.0.2,udp,1000,53 "$U4"
	same flow $F 10.0.0.1,10.0.0.2,tcp,40000,80 'tcp 10.0.0.1:40000 > 10.0.0.2:80'
	same flow $F 10.0.0.1,10.0.0.2,sctp,1,2 'sctp 10.0.0.1:1 > 10.0.0.2:2'
	same flow $F 10.0.0.1,10.0.0.2,icmp,0,0 'icmp 10.0.0.1 > 10.0.0.2'
	same flow $F 10.0.0.1,10.0.0.2,udp,0,0 "$U4 frag=8"
	same flow $F 2001:db8::1,2001:db8::2,udp,1000,53 "$U6 ext=dst,rt"
	same flow $F 2001:db8::1,2001:db8::2,44,0,0 "$U6 ext=frag,hop frag=64"
	same flow $F 2001:db8::1,2001:db8::2,icmpv6,0,0 'icmpv6 2001:db8::1 > 2001:db8::2'
else
	skip "no dynamically linked bloomctl ($BLOOMCTL) or no cc: keys not compared with bloomctl's"
fi

# ---- attach, stats, detach --------------------------------------------------

if command -v ip >/dev/null 2>&1 &&
   ip link add kbxdp0 type veth peer name kbxdp1 2>/dev/null; then
	veth=kbxdp0
	ip link set kbxdp0 up && ip link set kbxdp1 up
	expect 0 "attach --map --generic to a veth" "$XDP" --map --flows f --generic kbxdp0
	out_has "attached kbloom_xdp_map" "attach says what it attached"
	expect 1 "a second attach is refused" "$XDP" --map --generic kbxdp0
	err_has "device 'kbxdp0': an XDP program is attached already" "the busy device is named"
	expect 0 "stats" "$XDP" stats kbxdp0
	out_has "kbxdp0: kbloom_xdp_map" "stats names the program"
	out_has "malformed" "stats lists the counters"
	expect 0 "stats -j" "$XDP" stats -j kbxdp0
	out_has '"mode":"generic"' "stats -j has the attach mode"
	expect 0 "detach" "$XDP" detach kbxdp0
	expect 1 "detach with nothing attached" "$XDP" detach kbxdp0
	err_has "device 'kbxdp0': no XDP program attached" "the empty device is named"
	ip link del kbxdp0 2>/dev/null
	veth=
else
	skip "no veth pair: attach, stats, detach not tried"
fi

# ---- bench ------------------------------------------------------------------

expect 0 "bench --map (repeat)" "$XB" --map --allow a --flows f --packets 20000 --flows-count 100
out_has "BPF bloom map" "bench prints the map program's row"
grep -Eq '^BPF bloom map, k = 7 +[0-9]+ +[0-9.]+ +[0-9]+ +100 +19900 +0 +0$' "$tmp/out"
result $? "bench: 100 new flows, 19900 seen, nothing dropped"
expect 0 "bench --map --distinct --ipv6 -j" "$XB" --map --flows f --packets 2000 --flows-count 1000 --distinct --ipv6 -j
out_has '"new_flows":1000,"seen_flows":1000' "bench --distinct: the second round is all seen"

tap_done
