# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# The "bloom" match (xt_bloom.ko, libxt_bloom.so) on live traffic, sourced
# by tests.sh. A veth pair joins the initial network namespace (the rules)
# to a second one where the kernel's packet generator (pktgen) sends N
# distinct UDP flows R times each; exact counts are asserted from the rule
# counters, within the false-positive budget computed from each filter's
# size. Both backends (iptables-legacy, and iptables-nft through
# nft_compat), IPv4 and IPv6 (fragments included), save/restore, every
# refusal, the rule life cycle and the network namespace policy.
#
# Needs: $L/xt_bloom.ko, iptables and libxt_bloom.so in the initramfs
# (run.sh), a kernel with ip(6)_tables, nft_compat, veth, pktgen and
# namespaces (built in, or modules listed in $L/modules.order). Without
# them: one "ok ... # SKIP" line.

KBLOOM_CHECKS="$KBLOOM_CHECKS run_packets"

PK_XTLIB=
for PK_XTLIB in /usr/lib/*/xtables /usr/lib/xtables /usr/lib64/xtables ""; do
	[ -e "$PK_XTLIB" ] && break
done
# Flows per IPv4 run (IPv6: half): kbloom_packets_flows=N on the kernel
# command line; by default 2000, or 300 under the debug kernel (kmemleak,
# KASAN), where a packet costs ~100 times more.
# There, too, every process costs: the checks of userspace alone (the
# extension's refusals) and the legacy save/restore round trip run on the
# stock kernel only (PK_LITE), unless kbloom_packets_full=1.
if [ -e /sys/kernel/debug/kmemleak ]; then
	PK_FLOWS=${kbloom_packets_flows:-300}
	PK_LITE=1
else
	PK_FLOWS=${kbloom_packets_flows:-2000}
	PK_LITE=
fi
if [ "${kbloom_packets_full:-}" = 1 ]; then PK_LITE=; fi
PK_NS=			# pid of the process that holds the sender's netns
PK_FILTERS=		# filters the tests created, destroyed at the end

# pk_counts IPT CHAIN: the packet counters of CHAIN's rules into C1, C2...
# (one iptables run: every process costs under the debug kernel).
pk_counts() {
	local num pkts rest i
	for i in $(seq 12); do eval "C$i="; done
	$1 -L "$2" -v -x -n --line-numbers > /tmp/cnt 2>/dev/null
	# shellcheck disable=SC2034 # pkts is read through eval
	while read -r num pkts rest; do
		case "$num" in [0-9]*) eval "C$num=\$pkts" ;; esac
	done < /tmp/cnt
}

# pk_cnt IPT CHAIN N: the packet counter of rule N.
pk_cnt() {
	pk_counts "$1" "$2"
	eval "echo \$C$3"
}

# pk_rules IPT: add the rules on stdin (iptables-save syntax, filter
# table), then one that drops the rest of vb0's UDP, in one
# iptables-restore --noflush. $PK_R starts a bloom rule on that traffic.
PK_R="-A INPUT -i vb0 -p udp -m bloom"
pk_rules() {
	{
		echo '*filter'
		cat
		echo '-A INPUT -i vb0 -p udp -j DROP'
		echo COMMIT
	} > /tmp/rules
	"$1"-restore --noflush < /tmp/rules
}

# pk_eq DESCRIPTION GOT WANT
pk_eq() {
	if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1 (got '$2', want '$3')"; fi
}

# pk_in DESCRIPTION GOT LOW HIGH
pk_in() {
	if [ -n "$2" ] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; then
		ok "$1 ($2, allowed $3..$4)"
	else
		not_ok "$1 (got '$2', allowed $3..$4)"
	fi
}

# pk_new DESCRIPTION GOT FILTER N: GOT new flows of N sent, FILTER's false
# positives (pk_budget) aside.
pk_new() {
	pk_in "$1" "$2" $(($4 - $(pk_budget "$3" "$4" "$4"))) "$4"
}

# pk_create NAME BLOOMCTL-CREATE-ARGS...: NAME made anew.
pk_create() {
	local name=$1
	shift
	bloomctl destroy "$name" >/dev/null 2>&1
	bloomctl create "$name" "$@" >/dev/null && PK_FILTERS="$PK_FILTERS $name"
}

# pk_budget FILTER KEYS QUERIES: how many of QUERIES absent keys may test
# present (false positives) once FILTER holds KEYS keys. The expected
# number is at most mu = QUERIES * fpr(KEYS); a Poisson count exceeds the
# budget 2 mu + 10 with probability under 1e-6 whatever mu (busybox awk
# has no sqrt). fpr comes from bloomctl calc on the filter's real m and k;
# if calc fails, 0: the strictest budget, never a vacuous one.
pk_budget() {
	local m='' k='' l='' c='' p
	read -r m < "/sys/kernel/bloom/filters/$1/bits"
	read -r k < "/sys/kernel/bloom/filters/$1/hashes"
	read -r l < "/sys/kernel/bloom/filters/$1/layout"
	[ "$(cat "/sys/kernel/bloom/filters/$1/counting")" = 1 ] && c=--counting
	# shellcheck disable=SC2086 # $c is one word or none
	p=$(bloomctl -j calc --bits "$m" --hashes "$k" --capacity "$2" \
		--layout "$l" $c | json_num fpr)
	awk -v p="${p:-0}" -v q="$3" 'BEGIN { printf "%d\n", 2 * p * q + 10 }'
}

# pk_keys4 MODE START N: canonical IPv4 flow keys in hex, one per line, for
# the pktgen flows from source START (an integer) on: MODE 5t (all five
# fields), sd (saddr,dport) or s (saddr). Destination 10.99.0.1, UDP,
# source port 1234, destination port 9. The layout: KBLOOM_FLOW_* in
# include/uapi/linux/kbloom.h.
pk_keys4() {
	awk -v mode="$1" -v s="$2" -v n="$3" 'BEGIN {
		for (i = 0; i < n; i++) {
			a = sprintf("%08x", s + i)
			if (mode == "5t") print "041f" a "0a630001" "11" "04d2" "0009"
			else if (mode == "sd") print "0411" a "0009"
			else print "0401" a
		}
	}'
}

# pk_keys6 MODE PORT N: IPv6 keys from fd00::2, UDP source ports PORT on,
# destination port 9: MODE 4f (saddr,proto,sport,dport) or ss (saddr,sport).
pk_keys6() {
	awk -v mode="$1" -v s="$2" -v n="$3" 'BEGIN {
		a = "fd000000000000000000000000000002"
		for (i = 0; i < n; i++) {
			p = sprintf("%04x", s + i)
			if (mode == "4f") print "061d" a "11" p "0009"
			else print "0609" a p
		}
	}'
}

pk_ip4() {
	echo "$(($1 >> 24 & 255)).$(($1 >> 16 & 255)).$(($1 >> 8 & 255)).$(($1 & 255))"
}

# pk_pktgen COUNT SETTING...: send COUNT packets from the second namespace
# through vb1 to vb0; sets PK_SENT and PK_PPS.
pk_pktgen() {
	local c=$1 l
	shift
	{
		# shellcheck disable=SC2016 # expanded when /tmp/pg.sh runs
		echo 'pg() { echo "$1" > "$2" || { echo "pktgen refused: $1" >&2; exit 1; }; }'
		echo 'pg rem_device_all /proc/net/pktgen/kpktgend_0'
		echo 'pg "add_device vb1" /proc/net/pktgen/kpktgend_0'
		for l in "count $c" "clone_skb 0" "delay 0" "dst_mac $PK_MAC" "$@"; do
			echo "pg \"$l\" /proc/net/pktgen/vb1"
		done
		echo 'pg start /proc/net/pktgen/pgctrl'
		echo 'cat /proc/net/pktgen/vb1'
	} > /tmp/pg.sh
	nsenter -t "$PK_NS" -n sh /tmp/pg.sh > /tmp/pg.out 2>&1
	PK_SENT=$(sed -n 's/.*Result: OK: [^,]*, \([0-9]*\) .*/\1/p' /tmp/pg.out)
	PK_PPS=$(sed -n 's/^ *\([0-9]*\)pps .*/\1/p' /tmp/pg.out)
	if [ "$PK_SENT" != "$c" ]; then
		sed 's/^/#   /' /tmp/pg.out
	fi
}

# pk_pktgen4 COUNT FIRST N: pk_pktgen of N UDP flows to 10.99.0.1 port 9,
# from sources FIRST (an integer) on, source port 1234.
pk_pktgen4() {
	pk_pktgen "$1" "pkt_size 64" "dst 10.99.0.1" "src_min $(pk_ip4 "$2")" \
		"src_max $(pk_ip4 $(($2 + $3 - 1)))" "udp_src_min 1234" \
		"udp_src_max 1234" "udp_dst_min 9" "udp_dst_max 9"
}

# pk_wait_rules FILTER WANT: wait (up to 10 s) until FILTER's sysfs "rules"
# reads WANT (rules deleted through nf_tables are released after the
# commit, asynchronously); print what it reads.
pk_wait_rules() {
	wait_for 10 grep -qx "$2" "/sys/kernel/bloom/filters/$1/rules"
	cat "/sys/kernel/bloom/filters/$1/rules" 2>/dev/null
}

# pk_release FILTER...: destroy each once no rule holds it.
pk_release() {
	local f
	for f in "$@"; do
		pk_wait_rules "$f" 0 >/dev/null
		bloomctl destroy "$f" >/dev/null
	done
}

# pk_flush_all: no rule and no chain left, here and in the sender's namespace.
# shellcheck disable=SC2086 # $n is a command of several words, or none
pk_flush_all() {
	local t n
	for n in "" ${PK_NS:+"nsenter -t $PK_NS -n"}; do
		for t in iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft; do
			$n $t -F >/dev/null 2>&1
			$n $t -X >/dev/null 2>&1
		done
		$n nft flush ruleset >/dev/null 2>&1
	done
}

pk_setup() {
	missing=
	for f in "$L/xt_bloom.ko" /usr/sbin/xtables-legacy-multi \
		 /usr/sbin/xtables-nft-multi "$PK_XTLIB/libxt_bloom.so"; do
		[ -e "$f" ] || missing="$missing ${f##*/}"
	done
	if [ -f "$L/modules.order" ]; then
		while read -r m; do
			# The benchmark loads xt_recent itself, sized to its flows.
			case "$m" in */xt_recent.ko) [ -n "$kbloom_packets_bench" ] && continue ;; esac
			insmod "$m" 2>/dev/null
		done < "$L/modules.order"
	fi
	for s in ipt_do_table ip6t_do_table nft_match_eval veth_xmit ipv6_find_hdr; do
		grep -qw "$s" /proc/kallsyms || missing="$missing $s"
	done
	[ -d /proc/net/pktgen ] || missing="$missing pktgen"
	[ -e /proc/self/ns/user ] || missing="$missing user-namespaces"
	if [ -n "$missing" ]; then
		ok "packets # SKIP the initramfs or the kernel lacks:$missing"
		return 1
	fi
	if ! insmod "$L/xt_bloom.ko"; then
		not_ok "insmod xt_bloom.ko"; return 1
	fi
	ok "insmod xt_bloom.ko"
	grep -qs ' /run ' /proc/mounts || mount -t tmpfs tmpfs /run
	echo 100000 > /proc/sys/net/core/netdev_max_backlog
	echo 0 > /proc/sys/net/ipv6/conf/default/accept_dad
	echo 0 > /proc/sys/net/ipv4/conf/all/rp_filter
	echo 0 > /proc/sys/net/ipv4/conf/default/rp_filter

	# The sender's namespace, held by a sleeping process.
	unshare -n sleep 100000 &
	PK_NS=$!
	# shellcheck disable=SC2016 # expanded by the inner shell
	wait_for 5 sh -c '[ "$(readlink "/proc/$1/ns/net")" != "$(readlink /proc/1/ns/net)" ]' _ "$PK_NS"
	nsenter -t "$PK_NS" -n sh -c 'echo 0 > /proc/sys/net/ipv6/conf/default/accept_dad; ip link set lo up'
	ip link add vb0 type veth peer name vb1 2>/dev/null || ip link add vb0 type veth
	peer=vb1
	if [ ! -e /sys/class/net/vb1 ]; then
		for dev in /sys/class/net/*; do
			[ "$(cat "$dev/ifindex")" = "$(cat /sys/class/net/vb0/iflink)" ] && peer=${dev##*/}
		done
	fi
	ip link set "$peer" netns "$PK_NS"
	[ "$peer" = vb1 ] || nsenter -t "$PK_NS" -n ip link set "$peer" name vb1
	ip addr add 10.99.0.1/24 dev vb0
	ip -6 addr add fd00::1/64 dev vb0
	ip link set vb0 up
	nsenter -t "$PK_NS" -n sh -c 'ip addr add 10.99.0.2/24 dev vb1 &&
		ip -6 addr add fd00::2/64 dev vb1 && ip link set vb1 up'
	PK_MAC=$(cat /sys/class/net/vb0/address)
	check "veth pair into a second network namespace" \
		sh -c "nsenter -t $PK_NS -n ping -c 1 -W 5 10.99.0.1 >/dev/null"
}

# A windowed filter under a rule, unchanged: N flows (sources 10.2.0.1 on)
# sent twice are N new flows; after one rotation they are still known (and
# test-and-add refreshes them into the newest generation); after two more
# they are forgotten and new again. The window rotates by hand (window 0),
# so the counts do not depend on the VM's speed.
pk_window4() { # IPT BACKEND
	ipt=$1 be=$2 N=$((PK_FLOWS / 2 * 2)) s0=167903233	# 10.2.0.1
	if ! pk_create wflows4 --capacity $N --fpr 0.01 --window 0 --generations 2; then
		not_ok "$be: create a windowed filter for the match"
		return
	fi
	pk_rules "$ipt" <<-EOF
	$PK_R --name wflows4 --key saddr,dport ! --test-and-add
	EOF
	check "$be: a rule on a windowed filter" [ $? -eq 0 ]
	# Two generations: twice one generation's false positives.
	b=$((2 * $(pk_budget wflows4 $N $N)))
	pk_pktgen4 $((2 * N)) $s0 $N
	c1=$(pk_cnt "$ipt" INPUT 1)
	pk_in "$be: windowed filter: $N flows sent twice are $N new flows" "$c1" $((N - b)) $N
	bloomctl rotate wflows4
	pk_pktgen4 "$N" $s0 $N
	c2=$(pk_cnt "$ipt" INPUT 1)
	pk_in "$be: after one rotation of two, every flow is still known" \
		"$((c2 - c1))" 0 0
	bloomctl rotate wflows4
	bloomctl rotate wflows4
	pk_pktgen4 "$N" $s0 $N
	c3=$(pk_cnt "$ipt" INPUT 1)
	pk_in "$be: two rotations after their last packet, the $N flows are new again" \
		"$((c3 - c2))" $((N - b)) $N
	"$ipt" -F INPUT
	pk_release wflows4
}

# IPv4: N flows (sources 10.1.0.1 on), each sent R times, through rules of
# every mode and filter kind; one pktgen run.
pk_traffic4() { # IPT BACKEND
	ipt=$1 be=$2 N=$((PK_FLOWS / 2 * 2)) R=3
	T=$((N * R)) H=$((N / 2)) s0=167837697	# 10.1.0.1
	n24=$((((s0 + N - 1) >> 8) - (s0 >> 8) + 1))
	pk_create flows4 --capacity $N --fpr 0.01
	pk_create cflows4 --capacity $N --fpr 0.01 --counting
	pk_create jflows4 --capacity $N --fpr 0.01 --hash jhash
	for f in pfx4 dst4; do pk_create $f --capacity 100 --fpr 0.001; done
	# Blocked filters: the match works on either layout.
	pk_create allow4 --capacity $N --fpr 0.001 --layout blocked
	pk_create cnt4 --capacity $((N * 50)) --fpr 0.0001 --counting --layout blocked
	pk_create add4 --capacity $N --fpr 0.01
	# The allow-list: the first half of the flows, by saddr,dport.
	pk_keys4 sd $s0 $H > /tmp/allow4.hex
	for i in $(seq 0 15); do
		bloomctl add allow4 --key saddr,dport --flow "$(pk_ip4 $((s0 + i))),9" >/dev/null
	done
	sed 1,16d /tmp/allow4.hex | bloomctl add allow4 --hex
	check "$be: bloomctl --flow builds the kernel's bytes (16 flows added with --flow found by --hex)" \
		[ "$(head -16 /tmp/allow4.hex > /tmp/a16.hex; present allow4 /tmp/a16.hex --hex)" = 16 ]
	pk_keys4 s $s0 $H | bloomctl add cnt4 --hex

	pk_rules "$ipt" <<-EOF
	$PK_R --name flows4 --key saddr,daddr,proto,sport,dport ! --test-and-add
	$PK_R --name flows4 --key dport,sport,proto,daddr,saddr --test
	$PK_R --name cflows4 --key saddr,daddr,proto,sport,dport ! --test-and-add
	$PK_R --name pfx4 --key saddr --src-prefix 24 ! --test-and-add
	$PK_R --name dst4 --key daddr,dport --dst-prefix 16 ! --test-and-add
	$PK_R --name allow4 --key saddr,dport --test
	$PK_R --name cnt4 --key saddr --remove
	$PK_R --name add4 --key saddr --add
	$PK_R --name jflows4 --key saddr,daddr,proto,sport,dport ! --test-and-add
	EOF
	check "$be: ten IPv4 rules added (iptables-restore --noflush)" [ $? -eq 0 ]
	check "$be: sysfs rules counts the two rules on flows4" [ "$(pk_wait_rules flows4 2)" = 2 ]

	pk_pktgen4 $T $s0 $N
	echo "# packets: $be IPv4: pktgen sent $PK_SENT packets ($N flows x $R) through 9 bloom rules at $PK_PPS packets/s"
	pk_eq "$be: pktgen sent $T packets" "$PK_SENT" $T
	pk_counts "$ipt" INPUT
	pk_eq "$be: every packet reached the last rule (none lost)" "$C10" $T
	pk_new "$be: ! --test-and-add matched each of $N new flows once (minus false positives)" \
		"$C1" flows4 $N
	pk_eq "$be: --test right after matched every packet (no false negative; --key order is irrelevant)" \
		"$C2" $T
	pk_new "$be: counting filter, ! --test-and-add: $N new flows" "$C3" cflows4 $N
	pk_new "$be: --src-prefix 24: $n24 new /24 sources" "$C4" pfx4 $n24
	pk_eq "$be: --dst-prefix 16, daddr,dport: 1 new key" "$C5" 1
	b=$(pk_budget allow4 $H $H)
	c=$C6
	pk_in "$be: filter filled from userspace: --test matches its $H flows, $R times each" \
		"$c" $((R * H)) $((R * (H + b)))
	check "$be: ... and a flow matches on all its packets or none" [ $((${c:-1} % R)) -eq 0 ]
	b=$(pk_budget cnt4 $H $T)
	pk_in "$be: --remove matched the first packet of each of the $H flows in the counting filter" \
		"$C7" $((H - b)) $((H + b))
	pk_keys4 s $s0 $H > /tmp/cnt4.hex
	pk_in "$be: ... which are now absent from it" "$(present cnt4 /tmp/cnt4.hex --hex)" 0 "$b"
	pk_eq "$be: --add always matches" "$C8" $T
	pk_new "$be: --hash jhash filter, ! --test-and-add: $N new flows" "$C9" jflows4 $N
	pk_keys4 s $s0 $N > /tmp/add4.hex
	pk_eq "$be: bloomctl finds every source the kernel added (--add)" "$(present add4 /tmp/add4.hex --hex)" $N
	pk_keys4 5t $s0 $N > /tmp/flows4.hex
	pk_eq "$be: bloomctl finds every flow the kernel saw (! --test-and-add)" \
		"$(present flows4 /tmp/flows4.hex --hex)" $N
	check_exit 0 "$be: bloomctl query --flow of a flow the kernel saw" \
		bloomctl query flows4 --key saddr,daddr,proto,sport,dport \
		--flow "$(pk_ip4 $((s0 + 7))),10.99.0.1,17,1234,9"
	$ipt -F INPUT
	pk_release flows4 cflows4 jflows4 pfx4 dst4 allow4 cnt4 add4
}

# IPv6: N flows by UDP source port, R times each; then fragments.
pk_traffic6() { # IP6T BACKEND
	# shellcheck disable=SC2017 # / 4 * 2: an even number of flows on purpose
	ipt=$1 be=$2 N=$((PK_FLOWS / 4 * 2)) R=2
	T=$((N * R)) H=$((N / 2)) p0=10000
	pk_create flows6 --capacity $N --fpr 0.01
	pk_create pfx6 --capacity 100 --fpr 0.001
	pk_create allow6 --capacity $N --fpr 0.001
	pk_keys6 ss $p0 $H | bloomctl add allow6 --hex
	pk_rules "$ipt" <<-EOF
	$PK_R --name flows6 --key saddr,proto,sport,dport ! --test-and-add
	$PK_R --name flows6 --key saddr,proto,sport,dport --test
	$PK_R --name pfx6 --key saddr,daddr --src-prefix 64 --dst-prefix 48 ! --test-and-add
	$PK_R --name allow6 --key saddr,sport --test
	EOF
	check "$be: five IPv6 rules added (ip6tables-restore --noflush)" [ $? -eq 0 ]
	pk_pktgen $T "pkt_size 96" "dst6 fd00::1" "src6 fd00::2" "udp_src_min $p0" \
		"udp_src_max $((p0 + N))" "udp_dst_min 9" "udp_dst_max 9"
	echo "# packets: $be IPv6: pktgen sent $PK_SENT packets ($N flows x $R) through 4 bloom rules at $PK_PPS packets/s"
	pk_counts "$ipt" INPUT
	pk_eq "$be: IPv6: every packet reached the last rule" "$C5" $T
	pk_new "$be: IPv6 ! --test-and-add: $N new flows" "$C1" flows6 $N
	pk_eq "$be: IPv6 --test matched every packet" "$C2" $T
	pk_eq "$be: IPv6 --src-prefix 64 --dst-prefix 48: 1 new key" "$C3" 1
	b=$(pk_budget allow6 $H $H)
	pk_in "$be: IPv6 filter filled from userspace matches its $H flows" \
		"$C4" $((R * H)) $((R * (H + b)))
	pk_keys6 4f $p0 $N > /tmp/flows6.hex
	pk_eq "$be: bloomctl finds every IPv6 flow the kernel saw" "$(present flows6 /tmp/flows6.hex --hex)" $N
	$ipt -F INPUT

	# A 3000-byte UDP datagram (traceroute6's probe) leaves in fragments;
	# INPUT sees each one (IPv6 reassembles after it). The first carries
	# the ports; the rest key as UDP with ports 0; all key as UDP, found
	# after the fragment header.
	for f in fragnew fragz fragp; do pk_create $f --capacity 100 --fpr 0.001; done
	bloomctl add fragz --hex 061c1100000000
	bloomctl add fragp --hex 060411
	pk_rules "$ipt" <<-EOF
	$PK_R --name fragnew --key proto,sport,dport ! --test-and-add
	$PK_R --name fragz --key proto,sport,dport --test
	$PK_R --name fragp --key proto --test
	EOF
	check "$be: fragment rules added" [ $? -eq 0 ]
	nsenter -t "$PK_NS" -n traceroute6 -n -q 1 -m 1 -w 1 -p 7000 fd00::1 3000 >/dev/null 2>&1
	pk_counts "$ipt" INPUT
	nf=${C4:-0}
	check "$be: the datagram arrived as 3 or more fragments ($nf)" [ "$nf" -ge 3 ]
	pk_eq "$be: fragments: 2 keys (first fragment with ports, the others without)" \
		"$C1" 2
	pk_eq "$be: non-first fragments key with ports 0" "$C2" $((nf - 1))
	pk_eq "$be: every fragment keys as UDP (extension header skipped)" "$C3" "$nf"
	$ipt -F INPUT
	pk_release flows6 pfx6 allow6 fragnew fragz fragp
}

# iptables -S and save/restore print the rules back exactly.
pk_roundtrip() { # IPT IP6T BACKEND
	ipt=$1 ip6t=$2 be=$3
	pk_create rt --capacity 100 --fpr 0.01
	pk_create rtc --capacity 100 --fpr 0.01 --counting
	$ipt -N BLRT
	$ipt -A BLRT -m bloom --name rt --key dport,sport,proto,daddr,saddr ! --test-and-add
	$ipt -A BLRT -s 10.0.0.0/8 -m bloom --test --key dport,saddr --name rt --src-prefix 24
	$ipt -A BLRT -m bloom --name rt --key daddr --dst-prefix 0 --add
	$ipt -A BLRT -m bloom --name rtc --key saddr,daddr --dst-prefix 8 --src-prefix 16 --remove
	$ipt -A BLRT -p udp -m bloom --name rt --key sport,proto ! --test -j ACCEPT
	cat > /tmp/rt.want <<-EOF
	-N BLRT
	-A BLRT -m bloom --name rt --key saddr,daddr,proto,sport,dport ! --test-and-add
	-A BLRT -s 10.0.0.0/8 -m bloom --name rt --key saddr,dport --src-prefix 24 --test
	-A BLRT -m bloom --name rt --key daddr --dst-prefix 0 --add
	-A BLRT -m bloom --name rtc --key saddr,daddr --src-prefix 16 --dst-prefix 8 --remove
	-A BLRT -p udp -m bloom --name rt --key proto,sport ! --test -j ACCEPT
	EOF
	# iptables-nft warns on stdout when legacy tables exist too.
	$ipt -S BLRT 2>&1 | grep -v '^#' > /tmp/rt.got
	check_same "$be: iptables -S prints the rules canonically" /tmp/rt.want /tmp/rt.got
	$ip6t -N BLRT
	$ip6t -A BLRT -m bloom --name rt --key saddr,daddr --src-prefix 64 --dst-prefix 128 --test
	$ip6t -A BLRT -m bloom --name rt --key daddr,dport --dst-prefix 0 ! --test-and-add
	cat > /tmp/rt6.want <<-EOF
	-N BLRT
	-A BLRT -m bloom --name rt --key saddr,daddr --src-prefix 64 --test
	-A BLRT -m bloom --name rt --key daddr,dport --dst-prefix 0 ! --test-and-add
	EOF
	$ip6t -S BLRT 2>&1 | grep -v '^#' > /tmp/rt6.got
	check_same "$be: ip6tables -S prints the rules canonically" /tmp/rt6.want /tmp/rt6.got
	if [ "$be" = iptables-nft ]; then
		nft list ruleset 2>/dev/null | grep bloom | head -1 | sed 's/^[[:space:]]*/# packets: nft list ruleset: /'
		check "$be: nft list ruleset shows the xt match" sh -c 'nft list ruleset 2>/dev/null | grep -q bloom'
	fi
	"$ipt"-save > /tmp/rt.save 2>/dev/null
	"$ip6t"-save > /tmp/rt6.save 2>/dev/null
	$ipt -F BLRT; $ipt -X BLRT; $ip6t -F BLRT; $ip6t -X BLRT
	check_exit 0 "$be: iptables-restore reads iptables-save's output" "$ipt"-restore /tmp/rt.save
	check_exit 0 "$be: ip6tables-restore reads ip6tables-save's output" "$ip6t"-restore /tmp/rt6.save
	$ipt -S BLRT 2>&1 | grep -v '^#' > /tmp/rt.got2
	$ip6t -S BLRT 2>&1 | grep -v '^#' > /tmp/rt6.got2
	check_same "$be: the rules survive save/restore exactly (IPv4)" /tmp/rt.want /tmp/rt.got2
	check_same "$be: the rules survive save/restore exactly (IPv6)" /tmp/rt6.want /tmp/rt6.got2
	"$ipt"-save 2>/dev/null | grep '^-A BLRT' > /tmp/rt.save2
	grep '^-A BLRT' /tmp/rt.save > /tmp/rt.save1
	check_same "$be: iptables-save prints the same after the round trip" /tmp/rt.save1 /tmp/rt.save2
	check_exit 0 "$be: iptables -C finds a rule written differently" \
		"$ipt" -C BLRT -s 10.0.0.0/8 -m bloom --name rt --key dport,saddr --src-prefix 24 --test
	check_exit 1 "$be: iptables -C tells a different mode apart" \
		"$ipt" -C BLRT -s 10.0.0.0/8 -m bloom --name rt --key dport,saddr --src-prefix 24 ! --test
	# Not with iptables-nft: deleting a rule by handle makes Debian 6.1's
	# lockdep report "suspicious RCU usage" in __nft_rule_lookup() (the
	# list walk lacks its lockdep condition; the commit mutex is held).
	# -C above compares rules the way -D does.
	if [ "$be" != iptables-nft ]; then
		check_exit 0 "$be: iptables -D deletes it by its spec" \
			"$ipt" -D BLRT -s 10.0.0.0/8 -m bloom --name rt --key saddr,dport --src-prefix 24 --test
		check "$be: 4 rules left" [ "$($ipt -S BLRT 2>/dev/null | grep -c bloom)" = 4 ]
	fi
	$ipt -F BLRT; $ipt -X BLRT; $ip6t -F BLRT; $ip6t -X BLRT
	pk_release rt rtc
}

# pk_refused EXIT-CODE DESCRIPTION MESSAGE COMMAND...: COMMAND exits
# EXIT-CODE and its stderr has MESSAGE.
pk_refused() {
	want=$1 d=$2 msg=$3
	shift 3
	"$@" >/tmp/out 2>/tmp/err
	got=$?
	if [ "$got" = "$want" ] && grep -q -- "$msg" /tmp/err; then
		ok "$d"
		return
	fi
	not_ok "$d (exit $got, want $want, with '$msg')"
	sed 's/^/#   /' /tmp/err | head -5
}

# pk_kernel_refuses BACKEND WHAT LOGLINE COMMAND...: COMMAND fails and the
# kernel log gains a line "xt_bloom: LOGLINE".
pk_kernel_refuses() {
	local be=$1 what=$2 line="xt_bloom: $3" before
	shift 3
	before=$(dmesg | grep -cF "$line")
	if "$@" >/tmp/out 2>&1; then
		not_ok "$be: kernel refuses $what (the rule was accepted)"
		return
	fi
	if [ "$(dmesg | grep -cF "$line")" -gt "$before" ]; then
		ok "$be: kernel refuses $what, and logs why"
	else
		not_ok "$be: kernel refuses $what, and logs why (no '$line' in the log)"
		sed 's/^/#   /' /tmp/out | head -5
	fi
}

pk_refusals() { # IPT IP6T BACKEND
	ipt=$1 ip6t=$2 be=$3
	pk_create plain --capacity 100 --fpr 0.01
	r="-A INPUT -m bloom"
	[ -z "$PK_LITE" ] && pk_refusals_ext "$ipt" "$ip6t" "$be"
	pk_refusals_kernel "$ipt" "$ip6t" "$be"
	check "$be: no rule was left behind" \
		[ "$($ipt -S INPUT 2>/dev/null | grep -c bloom)$($ip6t -S INPUT 2>/dev/null | grep -c bloom)" = 00 ]
	pk_release plain
}

# What the extension refuses itself, with a message (exit 2): no kernel.
# A line each: 4 or 6 (iptables or ip6tables), what is refused, the
# message, the rule's options.
pk_refusals_ext() { # IPT IP6T BACKEND
	while IFS='|' read -r v what msg opts; do
		t=$1
		[ "$v" = 6 ] && t=$2
		# shellcheck disable=SC2086 # $r and $opts are several words
		pk_refused 2 "$3: refused: $what" "$msg" "$t" $r $opts </dev/null
	done <<-EOF
	4|unknown field|unknown field "port"|--name plain --key saddr,port --test
	4|--src-prefix 33|out of range 0-32|--name plain --key saddr --src-prefix 33 --test
	6|ip6tables --dst-prefix 129|out of range 0-128|--name plain --key daddr --dst-prefix 129 --test
	4|a prefix for an address not in the key|needs saddr|--name plain --key daddr --src-prefix 8 --test
	4|name too long (32 characters)|too long|--name abcdefghijklmnopqrstuvwxyz012345 --key saddr --test
	4|missing filter|bloom: no filter "nosuch"|--name nosuch --key saddr --test
	4|--remove on a plain filter|not a counting filter|--name plain --key saddr --remove
	4|! --add|cannot be inverted|--name plain --key saddr ! --add
	4|no mode|exactly one of|--name plain --key saddr
	4|two modes|exactly one of|--name plain --key saddr --test --add
	EOF
}

# shellcheck disable=SC2086 # $r and $u are several words on purpose
pk_refusals_kernel() { # IPT IP6T BACKEND
	ipt=$1 ip6t=$2 be=$3
	# Where the extension cannot tell (no sysfs), the kernel refuses and
	# logs why.
	pk_kernel_refuses "$be" "a missing filter (sysfs hidden)" 'no filter "nosuch"' \
		unshare -m sh -c "umount -l /sys && exec $ipt $r --name nosuch --key saddr --test"
	pk_kernel_refuses "$be" "--remove on a plain filter (sysfs hidden)" \
		'filter "plain" is not a counting filter: --remove needs one' \
		unshare -m sh -c "umount -l /sys && exec $ip6t $r --name plain --key saddr --remove"
	# The test build of the extension passes anything on: the kernel's
	# own checks refuse it, each with its reason in the log. A line each:
	# 4 or 6, what is refused, the log line, the rule's options.
	[ -f "$L/xt-unchecked/libxt_bloom.so" ] || return 0
	kn=kchk_${be#iptables-}
	while IFS='|' read -r v what line opts; do
		t=$ipt
		[ "$v" = 6 ] && t=$ip6t
		pk_kernel_refuses "$be" "$what" "$line" env \
			XTABLES_LIBDIR="$L/xt-unchecked:$PK_XTLIB" "$t" $r $opts </dev/null
	done <<-EOF
	4|unknown field bits|filter "$kn": unknown key fields 0x20|--name $kn --key 0x20 --test
	4|no field|filter "$kn": unknown key fields 0|--name $kn --key 0x0 --test
	4|--src-prefix 33|filter "$kn": prefix 33 out of range 0-32|--name $kn --key saddr --src-prefix 33 --test
	6|ip6tables --dst-prefix 129|filter "$kn": prefix 129 out of range 0-128|--name $kn --key daddr --dst-prefix 129 --test
	4|a prefix for an address not in the key|filter "$kn": a prefix for an address the key does not have|--name $kn --key daddr --src-prefix 8 --test
	4|! --add|filter "$kn": bad flags 0x1|--name $kn --key saddr ! --add
	4|a name without its NUL (32 characters)|filter name too long (at most 31 characters)|--name abcdefghijklmnopqrstuvwxyz012345 --key saddr --test
	EOF
}

# Rules in the second namespace: root (CAP_NET_ADMIN in the initial user
# namespace) may; a process root only in its own user namespace may not.
pk_netns() { # IPT BACKEND
	ipt=$1 be=$2
	pk_create ns4 --capacity 100 --fpr 0.01
	check_exit 0 "$be: root adds a bloom rule in the second namespace" \
		nsenter -t "$PK_NS" -n "$ipt" -A INPUT -p icmp -m bloom --name ns4 --key saddr,proto ! --test-and-add
	nsenter -t "$PK_NS" -n "$ipt" -A INPUT -p icmp
	ping -c 3 -W 2 10.99.0.2 >/dev/null
	pk_eq "$be: it sees the 3 pings as 1 new key" "$(pk_cnt "nsenter -t $PK_NS -n $ipt" INPUT 1)" 1
	nsenter -t "$PK_NS" -n "$ipt" -F INPUT
	unshare -r -n sh -c "$ipt -A INPUT -j ACCEPT >/dev/null 2>&1; echo ctl=\$?; $ipt -A INPUT -m bloom --name ns4 --key saddr --test >/dev/null 2>&1; echo bloom=\$?" > /tmp/userns 2>&1
	check "$be: in a new user+network namespace, a plain rule is allowed" grep -q '^ctl=0' /tmp/userns
	check "$be: ... a bloom rule is refused" sh -c "grep -q '^bloom=' /tmp/userns && ! grep -q '^bloom=0' /tmp/userns"
	check "$be: ... and the kernel log says why" \
		sh -c "dmesg | grep -q 'xt_bloom: rules outside the initial network namespace need CAP_NET_ADMIN in the initial user namespace'"
	pk_release ns4
}

# A filter in use cannot be destroyed, nor kbloom or xt_bloom unloaded.
pk_lifecycle() {
	pk_create life --capacity 100 --fpr 0.01
	iptables-legacy -A INPUT -m bloom --name life --key saddr --test
	iptables-nft -N LIFE
	iptables-nft -A LIFE -m bloom --name life --key saddr --test
	ip6tables-legacy -A INPUT -m bloom --name life --key saddr,daddr --test-and-add
	pk_eq "sysfs rules: 3 rules hold the filter (legacy, nft, IPv6)" "$(pk_wait_rules life 3)" 3
	check_exit 2 "bloomctl destroy of a filter in use exits 2" bloomctl destroy life
	check "... saying it is in use" grep -qi 'in use' /tmp/err
	check "... and the filter is still there" [ -d /sys/kernel/bloom/filters/life ]
	check "rmmod kbloom is refused while rules exist" sh -c '! rmmod kbloom 2>/dev/null'
	check "rmmod xt_bloom is refused while rules exist" sh -c '! rmmod xt_bloom 2>/dev/null'
	iptables-legacy -D INPUT -m bloom --name life --key saddr --test
	pk_eq "deleting the legacy rule unpins once" "$(pk_wait_rules life 2)" 2
	iptables-nft -F LIFE	# not -D: see pk_roundtrip
	pk_eq "deleting the nft rule unpins once" "$(pk_wait_rules life 1)" 1
	iptables-nft -X LIFE
	ip6tables-legacy -F INPUT
	pk_eq "no rule holds the filter" "$(pk_wait_rules life 0)" 0
	check_exit 0 "then bloomctl destroy works" bloomctl destroy life
}

# pk_gone NAME: wait (up to 10 s) for filter NAME to be destroyed.
pk_gone() { wait_for 10 test ! -d "/sys/kernel/bloom/filters/$1"; }

# Rules that carry their filter's shape (revision 1): a saved ruleset
# restores on a boot where no filter exists, IPv4 and IPv6; the filter
# goes with its last rule unless bloomctl create adopted it; a filter of
# another shape refuses the rule, saying what differs.
pk_shapes() { # IPT IP6T BACKEND
	ipt=$1 ip6t=$2 be=$3
	for f in shp shw shx sha; do bloomctl destroy "$f" >/dev/null 2>&1; done
	cat > /tmp/sh.rules <<-EOF
	*filter
	:SHP - [0:0]
	-A SHP -m bloom --name shp --key saddr --test --capacity 1000 --fpr 0.01
	-A SHP -m bloom --name shw --key saddr,daddr,proto,sport,dport ! --test-and-add --capacity 5000 --fpr 0.001 --window 60s --generations 4 --layout blocked --hash jhash
	COMMIT
	EOF
	check_exit 0 "$be: iptables-restore of rules with shapes, no filter existing" \
		"$ipt"-restore --noflush /tmp/sh.rules
	check "$be: the rules made their filters" \
		sh -c '[ -d /sys/kernel/bloom/filters/shp ] && [ -d /sys/kernel/bloom/filters/shw ]'
	# shellcheck disable=SC2016 # expanded by the inner shell
	check "$be: of the rules' shapes" sh -c '
		[ "$(cat /sys/kernel/bloom/filters/shp/capacity)" = 1000 ] &&
		[ "$(cat /sys/kernel/bloom/filters/shp/fpr_ppb)" = 10000000 ] &&
		[ "$(cat /sys/kernel/bloom/filters/shw/window_ms)" = 60000 ] &&
		[ "$(cat /sys/kernel/bloom/filters/shw/generations)" = 4 ] &&
		[ "$(cat /sys/kernel/bloom/filters/shw/layout)" = blocked ] &&
		[ "$(cat /sys/kernel/bloom/filters/shw/hash_scheme)" = 1 ]'
	"$ipt"-save 2>/dev/null | grep -- '-A SHP' > /tmp/sh.saved
	grep -- '-A SHP' /tmp/sh.rules > /tmp/sh.want
	check_same "$be: iptables-save prints the shapes as given" /tmp/sh.want /tmp/sh.saved
	{ echo '*filter'; echo ':SHP - [0:0]'; cat /tmp/sh.saved; echo COMMIT; } > /tmp/sh.restore
	"$ipt" -F SHP; "$ipt" -X SHP
	check "$be: the filters went with their last rules" pk_gone shp
	check "$be: ... both" pk_gone shw
	check_exit 0 "$be: iptables-save's output restores them again" \
		"$ipt"-restore --noflush /tmp/sh.restore
	check "$be: the filters are back" [ -d /sys/kernel/bloom/filters/shw ]
	# IPv6, a counting filter for --remove.
	"$ip6t" -N SHP
	check_exit 0 "$be: an IPv6 rule with a counting shape" \
		"$ip6t" -A SHP -m bloom --name shx --key saddr --remove --capacity 100 --fpr 0.01 --counting
	check "$be: it made a counting filter" \
		[ "$(cat /sys/kernel/bloom/filters/shx/counting 2>/dev/null)" = 1 ]
	pk_refused 2 "$be: --remove with a shape that is not counting is refused" \
		"--remove needs a counting filter" \
		"$ip6t" -A SHP -m bloom --name shy --key saddr --remove --capacity 100 --fpr 0.01
	# A filter of another shape refuses the rule, in the extension and in
	# the kernel (the test build of the extension checks nothing).
	pk_refused 2 "$be: a rule whose shape differs from its filter's is refused" \
		"exists with capacity 1000, not 2000" \
		"$ipt" -A SHP -m bloom --name shp --key saddr --test --capacity 2000 --fpr 0.01
	pk_kernel_refuses "$be" "a shape that differs from the filter's" \
		"filter \"shp\" exists with another size: capacity 1000" \
		env XTABLES_LIBDIR="$L/xt-unchecked:$PK_XTLIB" "$ipt" -A SHP -m bloom --name shp --key saddr --test --capacity 2000 --fpr 0.01
	check "$be: a rule without a shape takes the filter as it is" \
		"$ipt" -A SHP -m bloom --name shp --key saddr,dport --test
	# Adoption: bloomctl create of the same shape keeps the filter.
	check_exit 0 "$be: a rule makes sha" \
		"$ipt" -A SHP -m bloom --name sha --key saddr --add --capacity 300 --fpr 0.05
	check_exit 0 "$be: bloomctl create of its name and shape adopts it" \
		bloomctl create sha --capacity 300 --fpr 0.05
	check_exit 2 "$be: ... of another shape does not" \
		bloomctl create shx --capacity 101 --fpr 0.01 --counting
	"$ipt" -F SHP; "$ipt" -X SHP; "$ip6t" -F SHP; "$ip6t" -X SHP
	check "$be: the rules' own filters went with them" \
		eval 'pk_gone shp && pk_gone shw && pk_gone shx'
	pk_eq "$be: the adopted filter stayed" "$(pk_wait_rules sha 0)" 0
	check_exit 0 "$be: and is userspace's to destroy" bloomctl destroy sha
}

pk_teardown() {
	pk_flush_all
	# shellcheck disable=SC2086 # PK_FILTERS is a list of names
	for f in $PK_FILTERS; do
		[ -d "/sys/kernel/bloom/filters/$f" ] && pk_release "$f"
	done
	ip link del vb0 2>/dev/null
	[ -n "$PK_NS" ] && kill "$PK_NS" 2>/dev/null
	wait "$PK_NS" 2>/dev/null
	wait_for 10 rmmod xt_bloom
	check "rmmod xt_bloom once the rules are gone" [ ! -d /sys/module/xt_bloom ]
}

# The benchmark (tools/bench/vm.sh boots a VM that runs only
# this): the same pktgen stream of F flows (F sources, one UDP port) through
# three rule sets doing the same "seen before?" job, one at a time, and
# nothing but a DROP as the baseline. Each is run twice: the first pass
# fills it (every flow new), the second finds every flow. Prints packets/s
# and the memory each keeps for the F flows: the filter's own charge for
# kbloom, the growth of kernel slab memory for xt_recent and the nft set.
pk_slab_kb() { awk 'BEGIN { v = 0 } /^SUnreclaim:/ { v = $2 } END { print v }' /proc/meminfo; }

pk_bench_pass() { # LABEL F
	pk_pktgen4 "$2" 176160768 "$2"	# 10.128.0.0
	echo "# bench: $1: $PK_SENT packets, $PK_PPS packets/s"
	eval "pk_pps_$(echo "$1" | tr -c 'a-z0-9\n' _)=$PK_PPS"
}

# pk_bench_rule LABEL: a fill pass, then the better of two passes where
# every flow is already known (pk_pps_LABEL_seen).
pk_bench_rule() { # LABEL F
	local v best
	pk_bench_pass "$1 fill" "$2"
	pk_bench_pass "$1 seen" "$2"
	v=$(echo "$1" | tr -c 'a-z0-9\n' _)
	eval "best=\$pk_pps_${v}_seen"
	pk_bench_pass "$1 seen" "$2"
	eval "[ \"\$pk_pps_${v}_seen\" -ge \"$best\" ] || pk_pps_${v}_seen=$best"
}

pk_bench() { # FLOWS
	F=$1
	echo "# bench: $F flows (sources 10.128.0.0 on, UDP port 9), $(uname -r), $(nproc) CPUs"
	ipt=iptables-legacy
	s0=$(pk_slab_kb)
	$ipt -A INPUT -i vb0 -p udp -j DROP
	pk_bench_rule "baseline" "$F"
	echo "# bench: baseline: unreclaimable slab grew by $((($(pk_slab_kb) - s0) * 1024)) bytes"
	$ipt -F INPUT

	# kbloom: one test-and-add per packet, with each hash scheme.
	for h in siphash jhash; do
		pk_create bench_$h --capacity "$F" --fpr 0.01 --hash $h
		$ipt -A INPUT -i vb0 -p udp -m bloom --name bench_$h --key saddr,dport ! --test-and-add
		$ipt -A INPUT -i vb0 -p udp -j DROP
		pk_bench_rule "bloom $h" "$F"
		read -r bmem < /sys/kernel/bloom/filters/bench_$h/memory_bytes
		pk_new "bench: bloom ($h) counted $F new flows (minus false positives)" \
			"$(pk_cnt $ipt INPUT 1)" bench_$h "$F"
		echo "# bench: bloom $h: memory $bmem bytes ($((bmem * 100 / F)) bytes per 100 flows)"
		$ipt -F INPUT
		pk_release bench_$h
	done

	# xt_recent (the whole source address is its key), its table sized
	# to the flows: a lookup per packet, an insert for each new one.
	if [ ! -d /sys/module/xt_recent ]; then
		m=$(grep /xt_recent.ko "$L/modules.order")
		# One timestamp per entry, the least it can keep (no --hitcount).
		[ -n "$m" ] && insmod "$m" ip_list_tot="$F" ip_pkt_list_tot=1
	fi
	tot=$(cat /sys/module/xt_recent/parameters/ip_list_tot 2>/dev/null)
	if [ "${tot:-0}" -ge "$F" ]; then
		s0=$(pk_slab_kb)
		$ipt -N BENCHR
		$ipt -A INPUT -i vb0 -p udp -j BENCHR
		$ipt -A BENCHR -m recent --name benchr --rsource --update -j DROP
		$ipt -A BENCHR -m recent --name benchr --rsource --set -j DROP
		pk_bench_rule "recent" "$F"
		rmem=$((($(pk_slab_kb) - s0) * 1024))
		pk_eq "bench: xt_recent added $F entries" "$(pk_cnt $ipt BENCHR 2)" "$F"
		echo "# bench: recent: memory $rmem bytes (slab growth; $((rmem * 100 / F)) bytes per 100 flows)"
		$ipt -F INPUT; $ipt -F BENCHR; $ipt -X BENCHR
	else
		echo "# bench: recent: skipped (ip_list_tot ${tot:-unknown} < $F: xt_recent is built in or loaded already)"
	fi

	# An nft set with dynamic update: a lookup per packet, an add for
	# each new flow.
	s0=$(pk_slab_kb)
	nft -f - <<-EOF
	table ip kbench {
		set seen { type ipv4_addr . inet_service; size $((F * 2)); flags dynamic; }
		chain input {
			type filter hook input priority 0;
			iifname "vb0" ip protocol udp ip saddr . udp dport @seen counter drop
			iifname "vb0" ip protocol udp add @seen { ip saddr . udp dport } counter drop
		}
	}
	EOF
	pk_bench_rule "nft" "$F"
	nmem=$((($(pk_slab_kb) - s0) * 1024))
	nft list table ip kbench | sed -n 's/.*counter packets \([0-9]*\).*/# bench: nft rule counter \1/p'
	echo "# bench: nft: memory $nmem bytes (slab growth; $((nmem * 100 / F)) bytes per 100 flows)"
	nft delete table ip kbench
	# Rates relative to the nft set's (under emulation the baseline moves
	# too much for costs over it to mean anything).
	for v in bloom_siphash bloom_jhash recent; do
		eval "f=\$pk_pps_${v}_fill s=\$pk_pps_${v}_seen"
		if [ "${f:-0}" -gt 0 ] && [ "${s:-0}" -gt 0 ] && [ "${pk_pps_nft_fill:-0}" -gt 0 ] &&
		   [ "${pk_pps_nft_seen:-0}" -gt 0 ]; then
			echo "# bench: $v: packets/s relative to the nft set: fill $((f * 100 / pk_pps_nft_fill))%, seen $((s * 100 / pk_pps_nft_seen))%"
		fi
	done
	echo "# bench: memory for $F flows: bloom $bmem, nft set $nmem${rmem:+, xt_recent $rmem} bytes: nft/bloom $((nmem / (bmem + 1)))x${rmem:+, recent/bloom $((rmem / (bmem + 1)))x}"
}

# For make demo (run_demo may call it after insmod kbloom.ko): a filter for
# 1M flows at 1%, pktgen pushing FLOWS distinct flows (then the first half
# of them again) through -m bloom ! --test-and-add, and the new-flow count
# next to the truth and the expected false-positive loss.
pk_demo() { # [FLOWS]
	local F=${1:-200000} P i b fa fb loss m k
	pk_setup > /tmp/pk_setup.log || { cat /tmp/pk_setup.log; return 1; }
	P=$((F + F / 2))
	echo "== bloomctl create flows --capacity 1000000 --fpr 0.01"
	pk_create flows --capacity 1000000 --fpr 0.01
	echo "== iptables -A INPUT -i vb0 -p udp -m bloom --name flows --key saddr,dport ! --test-and-add"
	iptables -A INPUT -i vb0 -p udp -m bloom --name flows --key saddr,dport ! --test-and-add
	iptables -A INPUT -i vb0 -p udp -j DROP
	echo "== pktgen: $P packets, $F distinct flows (sources 10.128.0.0 on, UDP port 9), half of them twice"
	pk_pktgen4 "$P" 176160768 "$F"	# 10.128.0.0
	echo "   sent $PK_SENT packets at $PK_PPS packets/s (under emulation)"
	iptables -L INPUT -v -x -n --line-numbers
	pk_counts iptables INPUT
	# Expected loss: the sum over the i-th new flow of fpr(i), by the
	# trapezoid rule on ten segments (busybox awk has no exp()).
	read -r m < /sys/kernel/bloom/filters/flows/bits
	read -r k < /sys/kernel/bloom/filters/flows/hashes
	loss=0 fa=0
	for i in $(seq 10); do
		b=$((F * i / 10))
		fb=$(bloomctl -j calc --bits "$m" --hashes "$k" --capacity "$b" |
		     json_num fpr)
		loss=$(awk -v l="$loss" -v a="$fa" -v b="$fb" -v w=$((F / 10)) \
		       'BEGIN { printf "%.3f", l + w * (a + b) / 2 }')
		fa=$fb
	done
	echo "== new flows counted by the rule: $C1; truth: $F; missed: $((F - C1)); expected false-positive loss: about $loss"
	iptables -F INPUT
	pk_teardown > /dev/null
}

run_packets() {
	pk_setup || return 0
	for be in iptables-legacy iptables-nft; do
		ip6=ip6${be#ip}
		pk_traffic4 "$be" "$be"
		pk_window4 "$be" "$be"
		pk_traffic6 "$ip6" "$be"
		if [ -z "$PK_LITE" ] || [ "$be" != iptables-legacy ]; then
			pk_roundtrip "$be" "$ip6" "$be"
		fi
		pk_refusals "$be" "$ip6" "$be"
		pk_shapes "$be" "$ip6" "$be"
		pk_netns "$be" "$be"
	done
	pk_lifecycle
	pk_teardown
}

# `make bench-vm` (tools/bench/vm.sh): run.sh --mode only --append
# "kbloom_only=run_packets_bench kbloom_packets_bench=FLOWS".
run_packets_bench() {
	pk_setup || return 0
	pk_bench "${kbloom_packets_bench:-100000}"
	pk_teardown
}
