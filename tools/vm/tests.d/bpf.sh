# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# kbloom's BPF kfuncs (kmod/kbloom_bpf.c), sourced by tests.sh: the XDP
# example of tools/bpf on this kernel: its loader kbloom_xdp, its tests'
# way in kbloom_xdp_test and its benchmark kbloom_xdp_bench (tools/bench),
# the programs inside them through libbpf skeletons. The module must have BTF: the debug kernel
# gives it, Debian's stock one needs make BTF=1 (tools/btf-kdir.sh), which
# check.sh builds with.
#  - sysfs "kfuncs" says available, and the module's BTF carries them;
#  - tools/bpf/kbloom_bpf_access: no program reads a filter's memory, and
#    each filter's BPF access (none, read, write) holds for every call;
#  - tools/bpf/test-kfunc.sh: verdicts and keys on crafted packets
#    (BPF_PROG_TEST_RUN), by reference and by id, the verifier refusing a
#    leaked reference, filters destroyed under a loaded program;
#  - real traffic: UDP flows over a veth pair (tests.d/packets.sh's
#    pk_setup) through the program in generic XDP mode: exact new-flow
#    counts (up to the few other packets on the link), and the filter
#    holds every one of the flows sent, with the kernel's key bytes;
#  - rmmod kbloom is refused while a program that calls the kfuncs is
#    attached (to lo), and works once it is detached;
#  - the same kbloom.ko without its .BTF section loads and says the
#    kfuncs are unavailable, and why.

KBLOOM_CHECKS="$KBLOOM_CHECKS run_bpf"

# Real traffic: N UDP flows (source ports 20000 on), R datagrams each,
# sent by sockets in the second namespace (kbloom_udpflows: pktgen's
# shared skbs hit a BUG() in 6.1's generic XDP) to vb0, where the program
# counts new 5-tuples in filter xdpflows, by id.
bpf_traffic() {
	N=$((PK_FLOWS / 4)) R=2
	bloomctl destroy xdpflows >/dev/null 2>&1
	# Sized far beyond N: a false positive would make the count inexact.
	check_exit 0 "kfuncs traffic: create xdpflows" \
		bloomctl create xdpflows --capacity 1000000 --fpr 0.000000001 --layout blocked --bpf write
	check_exit 0 "kfuncs traffic: attach the program to vb0 (generic XDP, by id)" \
		kbloom_xdp attach --by-id --flows xdpflows --generic vb0
	t0=$(now_ms)
	check_exit 0 "kfuncs traffic: send $N UDP flows x $R datagrams" \
		nsenter -t "$PK_NS" -n kbloom_udpflows -r $R -p 20000 10.99.0.2 10.99.0.1 7 $N
	echo "# kfuncs: $((N * R)) datagrams through the XDP program in $(($(now_ms) - t0)) ms"
	kbloom_xdp stats -j vb0 > /tmp/bpf.stats 2>&1
	sed 's/^/# /' /tmp/bpf.stats
	# Other packets cross vb0 too (ARP, IPv6 neighbour discovery and
	# MLD from the namespace): each may be a flow of its own, never more.
	x=$(($(json_num passed /tmp/bpf.stats) - N * R))
	pk_in "kfuncs traffic: $N new flows counted, plus at most the $x other packets'" \
		"$(json_num new_flows /tmp/bpf.stats)" $N $((N + x))
	pk_in "kfuncs traffic: $((N * (R - 1))) datagrams of flows seen before, plus at most the $x others" \
		"$(json_num seen_flows /tmp/bpf.stats)" $((N * (R - 1))) $((N * (R - 1) + x))
	pk_eq "kfuncs traffic: no error" "$(json_num errors /tmp/bpf.stats)" 0
	# The 5-tuple keys of the flows sent, as xt_bloom and bloomctl build
	# them: the program's are the same bytes.
	awk -v n=$N 'BEGIN {
		for (i = 0; i < n; i++)
			printf "041f0a6300020a63000111%04x0007\n", 20000 + i }' > /tmp/bpf.flows
	pk_eq "kfuncs traffic: bloomctl finds every flow the program added" \
		"$(present xdpflows /tmp/bpf.flows --hex)" $N
	check_exit 0 "kfuncs traffic: bloomctl query --flow of one of them" \
		bloomctl query xdpflows --key saddr,daddr,proto,sport,dport \
		--flow 10.99.0.2,10.99.0.1,udp,20003,7
	check_exit 0 "kfuncs traffic: detach" kbloom_xdp detach vb0
	bloomctl destroy xdpflows
}

# A loaded program holds kbloom.ko: on lo, with nothing else holding it
# (tests.d/packets.sh's xt_bloom is gone by then).
bpf_rmmod() {
	bloomctl create xdplo --capacity 1000 --fpr 0.01 --bpf write >/dev/null
	br0=$(cat /sys/module/kbloom/refcnt)
	check_exit 0 "kfuncs: attach the program to lo (generic XDP)" \
		kbloom_xdp attach --by-ref --flows xdplo --generic lo
	br1=$(cat /sys/module/kbloom/refcnt)
	check "kfuncs: the attached program holds kbloom.ko (refcnt $br0 -> $br1)" \
		[ "$br1" -gt "$br0" ]
	check "kfuncs: rmmod kbloom is refused while it is attached" \
		sh -c '! rmmod kbloom 2>/dev/null && [ -d /sys/module/kbloom ]'
	check_exit 0 "kfuncs: detach it" kbloom_xdp detach lo
	# The program goes with its last reference, after a grace period.
	wait_for 10 rmmod kbloom
	check "kfuncs: then rmmod kbloom works" [ ! -d /sys/module/kbloom ]
	check "insmod kbloom.ko again" insmod "$L/kbloom.ko"
}

run_bpf() {
	if ! command -v kbloom_xdp >/dev/null ||
	   ! command -v kbloom_xdp_test >/dev/null ||
	   ! command -v kbloom_xdp_bench >/dev/null; then
		ok "kfuncs # SKIP no kbloom_xdp, kbloom_xdp_test or kbloom_xdp_bench in the initramfs"
		return 0
	fi
	kf=$(cat /sys/kernel/bloom/kfuncs)
	echo "# kfuncs: $kf"
	check "kfuncs: sysfs kfuncs says available" [ "$kf" = available ]
	if [ "$kf" != available ]; then
		dmesg | grep -i 'btf\|kfunc' | sed 's/^/#   /' | tail -5
		return 0
	fi
	if command -v bpftool >/dev/null; then
		bpftool btf dump file /sys/kernel/btf/kbloom > /tmp/bpf.btf 2>&1
		check "kfuncs: kbloom's BTF has bpf_kbloom_get and struct kbloom_bpf_filter, nothing to load" \
			sh -c "grep -q \"FUNC 'bpf_kbloom_get'\" /tmp/bpf.btf && grep -q \"STRUCT 'kbloom_bpf_filter' size=0 vlen=1\" /tmp/bpf.btf"
		rm -f /tmp/bpf.btf
	else
		ok "kfuncs: kbloom's BTF # SKIP no bpftool in the initramfs"
	fi
	# tap_run (faults.sh): each a TAP stream of its own, whose plan, results
	# and exit status the host checks.
	tap_run test-kfunc "kfuncs: test-kfunc.sh" env KBLOOM_REQUIRE_KFUNCS=1 \
		sh "$L/test-kfunc.sh" "$(command -v kbloom_xdp_test)" \
		"$(command -v kbloom_xdp_bench)" "$(command -v bloomctl)"
	tap_run kbloom_bpf_access "kbloom_bpf_access: what programs can read and reach" \
		kbloom_bpf_access
	if pk_setup; then
		bpf_traffic
		pk_teardown
	fi
	rm -f /tmp/bpf.stats /tmp/bpf.flows
	ip link set lo up
	bpf_rmmod
	if [ -f "$L/kbloom-nobtf.ko" ]; then
		check "kfuncs: rmmod kbloom (to load it without BTF)" rmmod kbloom
		check "kfuncs: insmod kbloom.ko without BTF" insmod "$L/kbloom-nobtf.ko"
		check "kfuncs: without BTF, sysfs kfuncs says unavailable and why" \
			grep -q "^unavailable: kbloom.ko has no BTF (build it with make BTF=1)" \
			/sys/kernel/bloom/kfuncs
		check "kfuncs: ... and so does the kernel log" \
			sh -c 'dmesg | grep -q "kbloom: kfuncs: unavailable: kbloom.ko has no BTF"'
		check_exit 0 "kfuncs: without BTF, filters still work" \
			sh -c 'bloomctl create nobtf --capacity 100 --fpr 0.01 && bloomctl add nobtf k && bloomctl query nobtf k && bloomctl destroy nobtf'
		check "kfuncs: rmmod the module without BTF" rmmod kbloom
		check "insmod kbloom.ko again" insmod "$L/kbloom.ko"
	fi
}
