# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# kbloom's in-VM tests, sourced by init.sh (busybox sh). One "ok N - what"
# or "not ok N - what" line per check; the host counts them.

L=/lib/kbloom
# result, skip and tap_done: the TAP helper every shell test shares
# (run.sh installs tools/lib-tap.sh here).
# shellcheck source=tools/lib-tap.sh
. $L/lib-tap.sh
# The areas run_checks runs in order, with kbloom.ko loaded, before the
# rmmod checks: this file's, run_selftest (tests.d/selftest.sh: every
# ioctl with good and bad arguments), then those each file in
# $L/tests.d/ adds.
KBLOOM_CHECKS="run_kunit run_selftest run_bloomctl run_setops run_images"

# check_exit CODE DESCRIPTION COMMAND...: ok if the command exits CODE.
check_exit() {
	want=$1 d=$2; shift 2
	"$@" >/tmp/out 2>/tmp/err; got=$?
	if [ "$got" = "$want" ]; then ok "$d"; else
		not_ok "$d (exit $got, want $want)"; sed 's/^/#   /' /tmp/err /tmp/out | head -20
	fi
}
has() { grep -q -- "$1" "$2"; }
# has_keys FILE KEY...: the JSON in FILE has every KEY.
has_keys() {
	hk_f=$1
	shift
	for hk; do
		has "\"$hk\"" "$hk_f" || return 1
	done
}
# check_same DESCRIPTION WANT GOT: ok if the files are the same (else the
# diff).
check_same() {
	diff "$2" "$3" > /tmp/diff
	result $? "$1"
	sed 's/^/#   /' /tmp/diff | head -20
}
# json_num KEY [FILE]: the number after "KEY": in bloomctl's -j output.
json_num() { sed -n "s/.*\"$1\": *\([0-9.eE+-]*\).*/\1/p" "${2:--}"; }
# present FILTER FILE [QUERY-OPTION...]: how many keys of FILE test present.
present() {
	pr_f=$1 pr_k=$2
	shift 2
	bloomctl -j query "$pr_f" --count "$@" < "$pr_k" 2>/dev/null | json_num present
}

now_ms() { read -r up _ </proc/uptime; echo "${up%.*}${up#*.}0"; }

# timed FUNCTION [ARGS]: run it, and add its wall-clock seconds to
# $kbloom_times, which run_checks prints as one "# times:" line (the host
# shows it), so that a slow area is seen in every run.
kbloom_times=
timed() {
	_t0=$(now_ms)
	"$@"
	kbloom_times="$kbloom_times $1 $((($(now_ms) - _t0) / 1000))s"
}

# area FUNCTION: run_checks runs each area through this. check.sh splits a
# kernel's areas between two VMs side by side: kbloom_split (kernel
# command line) lists the first VM's areas, kbloom_part says which VM
# this is, and the second runs every area not in the list.
area() {
	case ",${kbloom_split:-$1}," in
	*",$1,"*) [ "${kbloom_part:-1}" = 1 ] || return 0 ;;
	*) [ "${kbloom_part:-1}" = 2 ] || return 0 ;;
	esac
	timed "$1"
}

kmemleak_reset() {
	[ -w /sys/kernel/debug/kmemleak ] || return 0
	echo scan > /sys/kernel/debug/kmemleak
	echo clear > /sys/kernel/debug/kmemleak
}

kmemleak_check() {
	[ -w /sys/kernel/debug/kmemleak ] || return 0
	# Objects must be unreferenced for two scans to be reported.
	echo scan > /sys/kernel/debug/kmemleak
	sleep 1
	echo scan > /sys/kernel/debug/kmemleak
	# Read, not tested with -s: a debugfs file's size is always 0.
	cat /sys/kernel/debug/kmemleak > /tmp/leaks
	check "kmemleak: no leaks" [ ! -s /tmp/leaks ]
	sed 's/^/#   /' /tmp/leaks | head -60
}

# Any of these in the kernel log fails the run, whatever the tests said.
splat='BUG:|WARNING:|KASAN:|UBSAN:|suspected memory leak|Call Trace:|possible circular locking|inconsistent lock state|possible recursive locking|sleeping function called from invalid context|INFO: task .* blocked|soft lockup|detected stall|general protection fault|Oops'
# dmesg_check_through FILTER: the kernel log, through FILTER (a command
# or function), has no report of any checker. dmesg_check: the whole log.
dmesg_check() {
	dmesg_check_through cat
}

dmesg_check_through() {
	dmesg | "$1" | grep -E -B2 -A25 "$splat" > /tmp/splat
	check "kernel log: no splat" [ ! -s /tmp/splat ]
	sed 's/^/#   /' /tmp/splat | head -100
}

# The KUnit suites are built into kbloom.ko on a kernel with KUnit, and run
# when it is loaded with kunit=1: reload it that way, collect the KTAP
# results from debugfs, and reload it plainly.
run_kunit() {
	[ -e /sys/module/kbloom/parameters/kunit ] || return 0
	check "rmmod kbloom (to reload it with the KUnit suites)" rmmod kbloom
	check "insmod kbloom.ko kunit=1 (runs the KUnit suites)" insmod $L/kbloom.ko kunit=1
	nsuites=0
	for d in /sys/kernel/debug/kunit/kbloom_*; do
		[ -f "$d/results" ] || continue
		nsuites=$((nsuites + 1))
		echo "# KTAP-BEGIN ${d##*/}"
		cat "$d/results"
		echo "# KTAP-END ${d##*/}"
		# The suite's own result line: "ok 1 kbloom_x" at column 0.
		check "KUnit suite ${d##*/}" \
			grep -q "^ok [0-9]* ${d##*/}\$" "$d/results"
	done
	check "KUnit: all 4 kbloom suites ran" [ $nsuites -eq 4 ]
	check "rmmod kbloom after the KUnit run" rmmod kbloom
	check "insmod kbloom.ko again" insmod $L/kbloom.ko
}

run_bloomctl() {
	b=bloomctl
	check_exit 0 "bloomctl create by capacity and fpr" $b create e2e --capacity 100000 --fpr 0.01
	check_exit 0 "bloomctl create by bits and hashes" $b create e2e2 --bits 1000000 --hashes 7
	check_exit 2 "bloomctl create duplicate fails" $b create e2e --bits 1000 --hashes 3
	check_exit 0 "bloomctl add KEY..." $b add e2e alpha beta gamma
	check_exit 0 "bloomctl query present keys exits 0" $b query e2e alpha beta
	check "query prints 'KEY maybe'" has "alpha maybe" /tmp/out
	check_exit 1 "bloomctl query absent key exits 1" $b query e2e alpha definitely-not-there
	check "query prints 'KEY no'" has "definitely-not-there no" /tmp/out
	check_exit 1 "test-and-add of a new key exits 1" $b test-and-add e2e delta
	check "test-and-add prints 'new'" has "delta new" /tmp/out
	check_exit 0 "test-and-add of a seen key exits 0" $b test-and-add e2e delta
	check "test-and-add prints 'seen'" has "delta seen" /tmp/out
	seq 1 20000 > /tmp/keys
	check_exit 0 "bloomctl add from stdin" sh -c "$b add e2e < /tmp/keys"
	check_exit 0 "bloomctl add --file" $b add e2e2 --file /tmp/keys
	check_exit 0 "bloomctl query --count from stdin" sh -c "$b -j query e2e --count < /tmp/keys"
	check "all 20000 streamed keys present" has '"present": *20000' /tmp/out
	check_exit 0 "bloomctl --hex keys" $b add e2e --hex 00ff10 deadbeef
	check_exit 0 "bloomctl query --hex" $b query e2e --hex 00ff10 deadbeef
	check_exit 0 "bloomctl -j show" $b -j show e2e
	check "show JSON has every documented key" has_keys /tmp/out name bits \
		hashes capacity bits_set adds queries hits memory_bytes fill_ratio \
		estimated_fpr
	cat /sys/kernel/bloom/filters/e2e/adds > /tmp/adds
	check "sysfs adds matches" [ "$(cat /tmp/adds)" -ge 20005 ]
	check_exit 0 "bloomctl list" $b list
	check "list shows filters" has e2e2 /tmp/out
	check_exit 0 "bloomctl -j list" $b -j list
	check_exit 2 "bloomctl query unknown filter" $b query nosuch x
	check_exit 0 "bloomctl clear" $b clear e2e
	check_exit 1 "cleared filter forgets keys" $b query e2e alpha
	if [ -x /bin/bloomctl32 ]; then
		check_exit 0 "32-bit bloomctl add" bloomctl32 add e2e2 from32
		check_exit 0 "32-bit bloomctl query" bloomctl32 query e2e2 from32 1 2 3
		check_exit 0 "32-bit bloomctl show" bloomctl32 -j show e2e2
		check "32-bit show reads info" has '"bits": *1000000' /tmp/out
	fi
	# Unprivileged: nobody cannot open the 0600 node; with an inherited
	# fd the capability checks still refuse create/destroy/clear.
	check_exit 2 "unprivileged bloomctl list is refused" su -s /bin/sh nobody -c "bloomctl list" 
	check_exit 0 "bloomctl destroy" $b destroy e2e
	check_exit 0 "bloomctl destroy second" $b destroy e2e2
	check_exit 2 "destroy twice fails" $b destroy e2e
}

# Counting filters, union, estimates (bloomctl end to end).
run_setops() {
	b=bloomctl
	check_exit 0 "create --counting" $b create cnt --bits 65536 --hashes 4 --counting
	check "sysfs counting is 1" [ "$(cat /sys/kernel/bloom/filters/cnt/counting)" = 1 ]
	for _ in $(seq 20); do echo k20; done > /tmp/k20
	check_exit 0 "add a key 20 times" sh -c "$b add cnt < /tmp/k20"
	check "20 adds saturate counters (sysfs saturated > 0)" [ "$(cat /sys/kernel/bloom/filters/cnt/saturated)" -gt 0 ]
	check_exit 0 "remove it 20 times" sh -c "$b remove cnt < /tmp/k20"
	check_exit 0 "still present after 20 removes (saturation never loses a key)" $b query cnt k20
	check_exit 0 "add then remove a key" sh -c "$b add cnt once && $b remove cnt once"
	check_exit 1 "the removed key is absent" $b query cnt once
	before=$(cat /sys/kernel/bloom/filters/cnt/bits_set)
	check_exit 1 "removing an absent key is refused (exit 1)" $b remove cnt once
	check "refused remove prints 'absent'" has "once absent" /tmp/out
	check "refused remove changes nothing" [ "$(cat /sys/kernel/bloom/filters/cnt/bits_set)" = "$before" ]

	# Union and estimates: A has keys 1..20000, B (made --like A) keys
	# 10001..30000: union 30000, intersection 10000.
	seq 1 20000 > /tmp/ka
	seq 10001 30000 > /tmp/kb
	$b create sa --capacity 30000 --fpr 0.01 >/dev/null
	check_exit 0 "create --like" $b create sb --like sa
	$b add sa < /tmp/ka
	$b add sb < /tmp/kb
	check_exit 0 "bloomctl -j estimate A B" $b -j estimate sa sb
	bad=
	for kv in keys_a:20000 keys_b:20000 union:30000 intersection:10000; do
		awk -v k="${kv%:*}" -v v="$(json_num "${kv%:*}" /tmp/out)" \
		    -v t="${kv#*:}" 'BEGIN {
			d = (v - t) / t; if (d < 0) d = -d
			printf "# estimate %s: %s (truth %s, off %.2f%%)\n", k, v, t, d * 100
			exit !(v != "" && d <= 0.05)
		}' || bad=1
	done
	check "estimates of |A|, |B|, union and intersection within 5%" [ -z "$bad" ]
	check_exit 0 "merge B into A" $b merge sa sb
	check_exit 0 "after merge A has every key of B" sh -c "$b query sa --count < /tmp/kb"
	check_exit 0 "after merge A keeps its own keys" sh -c "$b query sa --count < /tmp/ka"
	for f in cnt sa sb; do $b destroy $f; done
}

# Save and load on the module: round trip, --replace, a corrupt file that
# must leave the existing filter byte-for-byte unchanged, a save during
# adds (compression and every check of an image: test-native.sh).
run_images() {
	b=bloomctl
	seq 1 20000 > /tmp/k1
	$b create img --capacity 20000 --fpr 0.01 >/dev/null
	$b add img < /tmp/k1
	check_exit 0 "save" $b save img /tmp/img.img
	check_exit 0 "load under a new name" $b load img2 /tmp/img.img
	check_exit 0 "loaded filter has every key" sh -c "$b query img2 --count < /tmp/k1"
	check "loaded filter has the same bits_set" [ "$(cat /sys/kernel/bloom/filters/img/bits_set)" = "$(cat /sys/kernel/bloom/filters/img2/bits_set)" ]
	check_exit 0 "loaded filter merges with the original (same seed)" $b merge img2 img

	# --replace swaps contents: img2 becomes a filter of other keys.
	seq 50001 51000 > /tmp/k2
	$b create other --capacity 20000 --fpr 0.01 >/dev/null
	$b add other < /tmp/k2
	$b save other /tmp/other.img
	check_exit 0 "load --replace" $b load img2 /tmp/other.img --replace
	check_exit 0 "replaced filter has the new keys" sh -c "$b query img2 --count < /tmp/k2"
	check_exit 1 "replaced filter lost the old keys" $b query img2 1 2 3

	# A corrupt image (each corruption is refused by bloomctl before the
	# device is opened: tools/bloomctl/test-native.sh); the target must
	# not change, and no filter is created.
	$b create small --bits 1024 --hashes 3 >/dev/null
	$b add small a b c
	$b save small /tmp/small.before
	cp /tmp/small.before /tmp/bad.img
	echo garbage >> /tmp/bad.img
	check_exit 2 "corrupt image refused" $b load small /tmp/bad.img --replace
	check_exit 2 "corrupt image refused as a new filter" $b load cut /tmp/bad.img
	$b save small /tmp/small.after
	check_same "after a refused load the filter is byte-for-byte unchanged" /tmp/small.before /tmp/small.after
	check "no filter was created by a refused load" [ ! -e /sys/kernel/bloom/filters/cut ]

	# A save taken while keys are being added has every key added before.
	seq 100001 300000 > /tmp/k3
	$b add img < /tmp/k3 &
	adder=$!
	$b save img /tmp/busy.img
	wait $adder
	check_exit 0 "save during adds loads" $b load busy /tmp/busy.img
	check_exit 0 "it has every key added before the save began" sh -c "$b query busy --count < /tmp/k1"
	for f in img img2 other small busy; do $b destroy $f; done
	rm -f /tmp/*.img /tmp/k1 /tmp/k2 /tmp/k3
}

# Batched versus one ioctl per key, in this VM run: NKEYS MIN_RATIO.
run_speed() {
	nkeys=$1 min=$2
	bloomctl create speed --capacity "$nkeys" --fpr 0.01 >/dev/null
	seq 1 "$nkeys" > /tmp/speedkeys
	bloomctl add speed < /tmp/speedkeys
	t0=$(now_ms)
	bloomctl query speed --count < /tmp/speedkeys > /tmp/batched
	t1=$(now_ms)
	bloomctl query speed --count --batch 1 < /tmp/speedkeys > /tmp/single
	t2=$(now_ms)
	bloomctl destroy speed
	b=$((t1 - t0)); s=$((t2 - t1))
	[ $b -gt 0 ] || b=1
	echo "# speed: query of $nkeys keys: batched ${b} ms, one ioctl per key ${s} ms, ratio $((s / b))x"
	cat /tmp/batched /tmp/single | sed 's/^/#   /'
	check "batched query of $nkeys keys at least ${min}x faster than one ioctl per key ($((s / b))x)" [ $((s / b)) -ge "$min" ]
	rm -f /tmp/speedkeys
}

# Every area; kbloom_vm_main loads kbloom.ko before and unloads it after.
run_checks() {
	check "/dev/bloom exists" [ -c /dev/bloom ]
	check "/dev/bloom is root-only (0600)" [ "$(stat -c %a /dev/bloom)" = 600 ]
	check "/sys/kernel/bloom exists" [ -d /sys/kernel/bloom/filters ]
	for t in $KBLOOM_CHECKS; do
		area "$t"
	done
	echo "# times:$kbloom_times"
	# A wall-clock ratio under emulation is a benchmark, not a test: only
	# when asked for on the kernel command line (kbloom_speed_keys=N).
	if [ -n "${kbloom_speed_keys:-}" ]; then
		run_speed "$kbloom_speed_keys" "${kbloom_speed_min:-1}"
	fi
	bloomctl create live1 --bits 100000 --hashes 3 >/dev/null
	bloomctl create live2 --capacity 50000 --fpr 0.001 >/dev/null
	bloomctl add live1 a b c
	check "rmmod with live filters" rmmod kbloom
	check "sysfs gone after rmmod" [ ! -e /sys/kernel/bloom ]
	check "insmod again after rmmod" insmod $L/kbloom.ko
	check "no filters after reload" [ "$(cat /sys/kernel/bloom/filter_count)" = 0 ]
}

run_demo() {
	insmod $L/kbloom.ko || return 1
	echo "== kbloom demo on $(uname -r)"
	echo "== bloomctl calc --capacity 1000000 --fpr 0.01"
	bloomctl calc --capacity 1000000 --fpr 0.01
	echo "== bloomctl create demo --capacity 1000000 --fpr 0.01"
	bloomctl create demo --capacity 1000000 --fpr 0.01 || return 1
	echo "== streaming keys 1..1000000 in: seq 1 1000000 | bloomctl add demo"
	t0=$(now_ms)
	seq 1 1000000 | bloomctl add demo || return 1
	t1=$(now_ms)
	echo "   took $((t1 - t0)) ms (under emulation)"
	echo "== querying 1000000 keys never inserted: seq 1000001 2000000 | bloomctl query demo --count"
	seq 1000001 2000000 | bloomctl -j query demo --count > /tmp/q
	t2=$(now_ms)
	cat /tmp/q
	echo "   took $((t2 - t1)) ms (under emulation)"
	echo "== every inserted key is found: seq 1 1000000 | bloomctl query demo --count"
	seq 1 1000000 | bloomctl query demo --count
	fn=$?
	echo "== bloomctl show demo"
	bloomctl show demo
	echo "== sysfs: /sys/kernel/bloom/filters/demo/"
	for f in /sys/kernel/bloom/filters/demo/* /sys/kernel/bloom/*; do
		[ -f "$f" ] && printf '   %-14s %s\n' "${f##*/}" "$(cat "$f")"
	done
	present=$(json_num present /tmp/q)
	bits=$(cat /sys/kernel/bloom/filters/demo/bits)
	hashes=$(cat /sys/kernel/bloom/filters/demo/hashes)
	# busybox awk has no exp(): the theory comes from bloomctl calc.
	theo=$(bloomctl -j calc --bits "$bits" --hashes "$hashes" \
	       --capacity 1000000 | json_num fpr)
	awk -v p="$present" -v theo="$theo" 'BEGIN {
		meas = p / 1000000
		rel = (meas - theo) / theo; if (rel < 0) rel = -rel
		printf "== measured FPR %.4f%% (%d of 1000000), theoretical %.4f%%, relative difference %.1f%%\n", meas * 100, p, theo * 100, rel * 100
		exit !(rel < 0.10)
	}'
	fpr_ok=$?
	bloomctl destroy demo
	# Filters that forget (tests.d/window.sh).
	echo
	echo "== time windows: a windowed flow filter against a plain one"
	win_demo
	win_ok=$?
	# Packets (tests.d/packets.sh), when the bloom match came along.
	pk_ok=0
	if [ -f $L/xt_bloom.ko ]; then
		echo
		echo "== packets: a bloom rule counting new flows on live traffic"
		pk_demo "${kbloom_demo_flows:-200000}"
		pk_ok=$?
	fi
	rmmod kbloom
	[ $fn -eq 0 ] && [ $fpr_ok -eq 0 ] && [ $win_ok -eq 0 ] && [ $pk_ok -eq 0 ] &&
		echo "== demo passed"
}

# Files leave the VM base64-encoded on the test channel.
emit_file() { # PATH
	echo "# FILE-BEGIN ${1##*/}"
	base64 "$1"
	echo "# FILE-END"
}

# The Summary Cache pattern across two boots ("hosts"). Host A makes the
# digest, ships an empty template (it carries the seed) and later its
# filled digest; host B starts from the template, adds its own keys,
# loads A's digest and merges: the union of both hosts' keys.
# Each host between insmod and rmmod (kbloom_vm_main).
run_exchange_a() {
	check_exit 0 "host A: create digest" bloomctl create digest --capacity 100000 --fpr 0.01
	check_exit 0 "host A: save the empty template" bloomctl save digest /tmp/template.img
	seq 1 50000 > /tmp/ka
	check_exit 0 "host A: add its keys" sh -c "bloomctl add digest < /tmp/ka"
	check_exit 0 "host A: save its digest (compressed)" bloomctl save digest /tmp/a.img --compress
	emit_file /tmp/template.img
	emit_file /tmp/a.img
}

run_exchange_b() {
	check_exit 0 "host B: load the template from host A" bloomctl load digest /in/template.img
	seq 40001 90000 > /tmp/kb
	check_exit 0 "host B: add its keys" sh -c "bloomctl add digest < /tmp/kb"
	check_exit 0 "host B: load host A's digest" bloomctl load peer_a /in/a.img
	check_exit 0 "host B: estimate overlap" bloomctl -j estimate digest peer_a
	sed 's/^/# /' /tmp/out
	check_exit 0 "host B: merge host A's digest" bloomctl merge digest peer_a
	seq 1 90000 > /tmp/kall
	check_exit 0 "the merged digest has every key of both hosts" sh -c "bloomctl query digest --count < /tmp/kall"
}

for f in "$L"/tests.d/*.sh; do
	# shellcheck source=/dev/null
	[ -f "$f" ] && . "$f"
done

kbloom_vm_main() {
	echo "# kbloom VM: $(uname -r), $(nproc) CPUs, mode $1"
	case "$1" in
	kcsan)
		# tests.d/kcsan.sh: KUnit, the stress area, the ioctl fuzzer.
		run_kcsan
		;;
	check | only | kunit | exchange-a | exchange-b)
		# only: some areas while working on them, kbloom_only=run_a,run_b
		# on the kernel command line (run.sh --mode only --append).
		case "$1" in
		check) kbloom_only=run_checks ;;
		only) ;;
		*) kbloom_only=run_$(echo "$1" | tr - _) ;;
		esac
		kmemleak_reset
		check "insmod kbloom.ko" insmod "$L/kbloom.ko"
		for t in $(echo "${kbloom_only:-}" | tr , ' '); do
			"$t"
		done
		check "rmmod kbloom" rmmod kbloom
		kmemleak_check
		dmesg_check
		;;
	demo)
		run_demo
		return
		;;
	shell)
		insmod $L/kbloom.ko
		echo "kbloom loaded; try: bloomctl create f --capacity 1000 --fpr 0.01; bloomctl add f a b; bloomctl query f a z"
		return
		;;
	esac
	tap_done
}
