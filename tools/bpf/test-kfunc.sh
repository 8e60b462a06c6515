#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Tests of the kfunc program (kbloom_xdp.bpf.c) on a kernel running
# kbloom.ko with its kfuncs (built with BTF: /sys/kernel/bloom/kfuncs says
# "available"): in the VM. Through BPF_PROG_TEST_RUN on crafted packets:
#  - the verifier refuses a program that leaks a reference (leak-check);
#  - by reference, by id (ids from bpf_kbloom_id() or from sysfs): the
#    allow-list drops unknown sources, the 5-tuple test-and-add tells new
#    flows from seen ones, and the keys the program adds are the keys
#    bloomctl builds from text (bloomctl query finds them);
#  - a filter destroyed under a loaded program: -ENOENT, counted as an
#    error; a dropped packet if it was the allow-list (unless
#    --fail-open); created again, it is found again by name, not by its
#    old id;
#  - every kfunc, through `kbloom_xdp_test kfunc` (kbloom_kfunc_test.bpf.c):
#    add, test-and-add, query, remove, by reference and by id, from XDP
#    and from tc programs: the answers (1, 0, -ENOENT, -EOPNOTSUPP,
#    -EINVAL), bloomctl finding the keys added, sysfs "adds" counting
#    them; syscall programs may query, get/put and id, and the verifier
#    refuses them the kfuncs that change filters (kfunc-syscall-refused);
#  - tools/bench/kbloom_xdp_bench of the kfunc program, by reference and
#    by id (the BPF bloom map's is test-native.sh's).
# Leaves no filter behind (it uses kbxdp_allow, kbxdp_flows, kbxdp_kf and
# kbxdp_kfc). POSIX sh.
#
# Usage: test-kfunc.sh path/to/kbloom_xdp_test path/to/kbloom_xdp_bench
#                      [path/to/bloomctl]
# Without the kfuncs it skips, unless KBLOOM_REQUIRE_KFUNCS=1.
# Prints "ok N - ..." or "not ok N - ..." per check, then
# "P passed, F failed, S skipped".

set -u

if [ $# -lt 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
	echo "usage: $0 path/to/kbloom_xdp_test path/to/kbloom_xdp_bench [path/to/bloomctl]" >&2
	exit 2
fi
XT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
XB=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
BLOOMCTL=${3:-$(command -v bloomctl)}
exec </dev/null

tmp=$(mktemp -d) || exit 2
A=kbxdp_allow
F=kbxdp_flows
K=kbxdp_kf
C=kbxdp_kfc
cleanup() {
	for f in "$A" "$F" "$K" "$C"; do
		"$BLOOMCTL" destroy "$f" >/dev/null 2>&1
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

# result, run, expect and tap_done: tools/lib-tap.sh, beside this script
# in the VM (tools/vm/run.sh puts both in /lib/kbloom), one directory up here.
tap_lib=$(dirname "$0")/lib-tap.sh
[ -f "$tap_lib" ] || tap_lib=$(dirname "$0")/../lib-tap.sh
# shellcheck source=tools/lib-tap.sh
. "$tap_lib"
tap_out=$tmp/out
tap_err=$tmp/err

kfuncs=$(cat /sys/kernel/bloom/kfuncs 2>/dev/null)
if [ "$kfuncs" != available ] || [ -z "$BLOOMCTL" ]; then
	why="kbloom's kfuncs: ${kfuncs:-no kbloom.ko}; bloomctl: ${BLOOMCTL:-none}"
	if [ "${KBLOOM_REQUIRE_KFUNCS:-0}" = 1 ]; then
		: >"$tmp/out"; : >"$tmp/err"
		result 1 "kfuncs and bloomctl available ($why)"
	else
		skip "$why"
	fi
	tap_done
	exit
fi

bc() { run "$BLOOMCTL" "$@"; }

# line SPEC VERDICT COUNTERS...: SPEC's line in $tmp/out, exactly.
line() {
	want="$1: $2"
	shift 2
	for c in "$@"; do
		want="$want $c"
	done
	grep -qxF -- "$want" "$tmp/out"
	result $? "$mode: $want"
}

fresh() { # (re)create both filters, the allow-list holding 10.0.0.1
	"$BLOOMCTL" destroy "$A" >/dev/null 2>&1
	"$BLOOMCTL" destroy "$F" >/dev/null 2>&1
	"$BLOOMCTL" create "$A" --capacity 1000 --fpr 0.001 --bpf read >/dev/null &&
	"$BLOOMCTL" create "$F" --capacity 100000 --fpr 0.001 --bpf write >/dev/null &&
	"$BLOOMCTL" add "$A" --key saddr --flow 10.0.0.1 \
		--flow 2001:db8::1 >/dev/null
}

U4='udp 10.0.0.1:1000 > 10.0.0.2:53'
U6='udp [2001:db8::1]:1000 > [2001:db8::2]:53'
FIELDS=saddr,daddr,proto,sport,dport

# ---- the verifier -----------------------------------------------------------

mode=leak
expect 0 "leak-check: the verifier refuses a leaked reference" "$XT" leak-check
grep -q "Unreleased reference" "$tmp/out"
result $? "leak-check: refused for its 'Unreleased reference'"

# ---- verdicts and keys, each way of reaching a filter -----------------------

for mode in "--by-ref" "--by-id" "--by-id --ids-from sysfs"; do
	fresh
	result $? "$mode: filters $A and $F created"
	# shellcheck disable=SC2086 # $mode is options
	run "$XT" test-run $mode --allow "$A" --flows "$F" \
		--pkt "$U4" --pkt "$U4" \
		--pkt 'udp 10.0.0.3:1000 > 10.0.0.2:53' \
		--pkt "$U4 frag=8" \
		--pkt 'tcp [2001:db8::1]:40000 > [2001:db8::2]:443 ext=hop,dst' \
		--pkt "$U6" --pkt 'arp' \
		--pkt "$U4 trunc=36"
	[ "$rc" = 0 ]
	result $? "$mode: test-run (exit 0, got $rc)"
	line "$U4" XDP_PASS passed+1 new_flows+1
	grep -c "^$U4: XDP_PASS passed+1 seen_flows+1\$" "$tmp/out" |
		grep -qx 1
	result $? "$mode: $U4 again: seen"
	line 'udp 10.0.0.3:1000 > 10.0.0.2:53' XDP_DROP dropped+1
	line "$U4 frag=8" XDP_PASS passed+1 new_flows+1
	line 'tcp [2001:db8::1]:40000 > [2001:db8::2]:443 ext=hop,dst' XDP_PASS passed+1 new_flows+1
	line "$U6" XDP_PASS passed+1 new_flows+1
	line arp XDP_PASS passed+1
	line "$U4 trunc=36" XDP_DROP dropped+1 malformed+1
	case "$mode" in
	--by-id*)
		ids="ids: allow $(cat /sys/kernel/bloom/filters/$A/id), flows $(cat /sys/kernel/bloom/filters/$F/id)"
		grep -qF "$ids" "$tmp/out"
		result $? "$mode: the program uses the filters' sysfs ids ($ids)"
		;;
	esac
	# What the program added is what bloomctl builds from text.
	bc query "$F" --key $FIELDS --flow 10.0.0.1,10.0.0.2,udp,1000,53 \
		--flow 10.0.0.1,10.0.0.2,udp,0,0 \
		--flow 2001:db8::1,2001:db8::2,tcp,40000,443 \
		--flow 2001:db8::1,2001:db8::2,udp,1000,53
	result $rc "$mode: bloomctl query finds the program's 5-tuples"
	bc query "$F" --key $FIELDS --flow 10.0.0.3,10.0.0.2,udp,1000,53
	[ "$rc" = 1 ]
	result $? "$mode: a dropped packet's 5-tuple was not added"
done

# ---- a filter destroyed under the program -----------------------------------

# The flow filter destroyed, then created again: destroyed, -ENOENT, an
# error, the packet passes; recreated, by id its old id still fails, by
# reference it is found by name again, the flow new in it. The allow-list
# destroyed: an error, the packet dropped, or passed with --fail-open.
for mode in --by-id --by-ref; do
	fresh
	run "$XT" test-run $mode --allow "$A" --flows "$F" --pkt "$U4" \
		--pkt "exec $BLOOMCTL destroy $F" --pkt "$U4" \
		--pkt "exec $BLOOMCTL create $F --capacity 1000 --fpr 0.01 --bpf write" \
		--pkt "$U4"
	[ "$rc" = 0 ]
	result $? "$mode: test-run with the flow filter destroyed, then created again (exit 0, got $rc)"
	errors=1 new=2
	[ "$mode" = --by-id ] && errors=2 new=1
	grep -c "^$U4: XDP_PASS passed+1 errors+1\$" "$tmp/out" | grep -qx $errors
	result $? "$mode: $errors packets with the filter destroyed or by its old id: an error each, the packet passes"
	grep -c "^$U4: XDP_PASS passed+1 new_flows+1\$" "$tmp/out" | grep -qx $new
	result $? "$mode: $new packets found the flow new in a filter"
	fresh
	run "$XT" test-run $mode --allow "$A" --flows "$F" --pkt "$U4" \
		--pkt "exec $BLOOMCTL destroy $A" --pkt "$U4"
	line "$U4" XDP_DROP dropped+1 errors+1
	fresh
	run "$XT" test-run $mode --fail-open --allow "$A" --flows "$F" \
		--pkt "$U4" --pkt "exec $BLOOMCTL destroy $A" --pkt "$U4"
	line "$U4" XDP_PASS passed+1 seen_flows+1 errors+1
done

"$BLOOMCTL" destroy "$F" >/dev/null 2>&1
for mode in --by-id "--by-id --ids-from sysfs"; do
	# shellcheck disable=SC2086 # $mode is options
	expect 1 "$mode: a missing filter stops the load" "$XT" test-run $mode --flows "$F"
	grep -qF "filter '$F': no such filter" "$tmp/err"
	result $? "$mode: the missing filter is named"
done

# ---- each kfunc, from XDP, tc and syscall programs --------------------------

# kf WANT ARGS...: `kbloom_xdp_test kfunc ARGS` runs and prints WANT, the
# kfunc's answer.
kf() {
	want=$1
	shift
	run "$XT" kfunc "$@"
	got=$(cat "$tmp/out")
	[ "$rc" = 0 ] && [ "$got" = "$want" ]
	result $? "kfunc $*: $want (exit $rc, got ${got:-nothing})"
}

# adds NAME: sysfs "adds" of filter NAME.
adds() {
	cat "/sys/kernel/bloom/filters/$1/adds"
}

mode=kfunc
"$BLOOMCTL" destroy "$K" >/dev/null 2>&1
"$BLOOMCTL" destroy "$C" >/dev/null 2>&1
"$BLOOMCTL" create "$K" --capacity 1000 --fpr 0.01 --bpf write >/dev/null &&
	"$BLOOMCTL" create "$C" --capacity 1000 --fpr 0.01 --counting --bpf write >/dev/null
result $? "kfunc: filters $K and $C (counting) created"
adds0=$(adds "$K")
# Each program type and way of reaching a filter, a key of its own.
i=0
for prog in "" --tc; do
	for by in "" --by-id; do
		i=$((i + 1))
		k=6b660$i
		w="${prog:---xdp} ${by:---by-ref}"
		# shellcheck disable=SC2086 # $prog and $by are options
		{
		kf 0 query $prog $by "$K" $k
		kf 0 add $prog $by "$K" $k
		kf 1 query $prog $by "$K" $k
		bc query "$K" --hex $k
		result $rc "$w: bloomctl query --hex finds the key the program added"
		kf 0 test-and-add $prog $by "$K" ${k}ff
		kf 1 test-and-add $prog $by "$K" ${k}ff
		# The longest key there is; then one byte more, and none.
		kf 0 add $prog $by "$K" ${k}ee --len 4096
		kf 1 query $prog $by "$K" ${k}ee --len 4096
		kf -22 add $prog $by "$K" ${k}dd --len 4097
		kf -22 test-and-add $prog $by "$K" ${k}dd --len 4097
		kf -22 query $prog $by "$K" ${k}dd --len 0
		kf -22 remove $prog $by "$C" ${k}dd --len 4097
		# Counting: removed, then absent; a plain filter cannot.
		kf 0 add $prog $by "$C" $k
		kf 1 query $prog $by "$C" $k
		kf 0 remove $prog $by "$C" $k
		kf 0 query $prog $by "$C" $k
		kf -2 remove $prog $by "$C" $k
		kf -95 remove $prog $by "$K" $k
		kf -2 query $prog $by kbxdp_none $k
		}
	done
	kf 1 get $prog "$K"
	kf 0 get $prog kbxdp_none
	kf "$(cat "/sys/kernel/bloom/filters/$K/id")" id $prog "$K"
done
# 4 ways x (add, 2 test-and-adds, the longest key): the refused ones
# (-EINVAL, -EOPNOTSUPP) are not counted.
adds1=$(adds "$K")
[ "$((adds1 - adds0))" = 16 ]
result $? "kfunc: sysfs adds of $K counts the programs' 16 adds ($adds0 -> $adds1)"
bc query "$K" --hex 6b6601 6b6602 6b6603 6b6604 6b6601ff 6b6604ff
result $rc "kfunc: bloomctl finds the keys of every program and way"

# Syscall programs: what changes nothing, and nothing else.
kf 1 query --syscall "$K" 6b6601
kf 1 query --syscall "$K" 6b6604ff
kf 0 query --syscall "$K" 6b66ff
kf 1 query --syscall --by-id "$K" 6b6602
kf 0 query --syscall --by-id "$K" 6b66ff
kf -22 query --syscall "$K" 6b66 --len 4097
kf -22 query --syscall --by-id "$K" 6b66 --len 0
kf 1 get --syscall "$K"
kf 0 get --syscall kbxdp_none
kf "$(cat "/sys/kernel/bloom/filters/$K/id")" id --syscall "$K"
kf -2 id --syscall kbxdp_none
[ "$(adds "$K")" = "$adds1" ]
result $? "kfunc --syscall: sysfs adds of $K unchanged ($adds1)"
expect 0 "kfunc-syscall-refused: syscall programs may not change filters" \
	"$XT" kfunc-syscall-refused
for f in add test_and_add remove add_id test_and_add_id remove_id; do
	grep -qF "calling kernel function bpf_kbloom_$f is not allowed" "$tmp/out"
	result $? "kfunc-syscall-refused: a syscall program calling bpf_kbloom_$f is refused at load"
done

# A destroyed filter: its id resolves no more, its name neither.
kid=$(cat "/sys/kernel/bloom/filters/$K/id")
"$BLOOMCTL" destroy "$K" >/dev/null
for prog in "" --tc --syscall; do
	kf -2 query $prog --id "$kid" "$K" 6b6601
	kf -2 query $prog "$K" 6b6601
done
kf -2 add --tc --id "$kid" "$K" 6b6601

# ---- bench ------------------------------------------------------------------

fresh
mode=bench
expect 0 "bench: by reference, by id" "$XB" --kfunc --allow "$A" --flows "$F" \
	--packets 20000 --flows-count 100 --clear
for p in "kbloom kfuncs, by reference" "kbloom kfuncs, by id"; do
	grep -Eq "^$p.* 100 +19900 +0 +0\$" "$tmp/out"
	result $? "bench: $p: 100 new flows, 19900 seen"
done

tap_done
