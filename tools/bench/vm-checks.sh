# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# make bench-vm's system-call and in-kernel parts, in this boot of the
# stock kernel. Benchmarks: the only checks are that every answer was
# right. Not in KBLOOM_CHECKS; tools/bench/vm.sh ships this file into the
# VM as tests.d/bench.sh and runs them (kbloom_only=...,run_ioctl_bench,
# run_api_bench, kbloom_bench_keys=N).
#
# run_ioctl_bench (tools/bench/kbloom_ioctl_bench.c): kbloom's ioctls
# (batched and one key per call, by name and on a handle) against one
# bpf() per key on a BPF bloom map of the same keys. It leaves its filter,
# ioctl_bench, full of the present keys, for run_api_bench.
#
# run_input_bench, run_xdp_bench: see below.
#
# run_api_bench: the in-kernel API (kbloom_apibench.ko,
# tools/bench/kbloom_apibench.c: kbloom_query() and kbloom_query_batch()
# on that filter) against a BPF program doing the same lookups in a BPF
# bloom map (make bench's BPF peer, the host's kbloom_bench with its
# libraries, -k "BPF program").

bench_keys() {
	echo "${kbloom_bench_keys:-100000}"
}

run_ioctl_bench() {
	if ! command -v kbloom_ioctl_bench >/dev/null; then
		not_ok "kbloom_ioctl_bench is in the VM"
		return
	fi
	kbloom_ioctl_bench -k "$(bench_keys)" > /tmp/ioctl_bench 2>&1
	ib_rc=$?
	cat /tmp/ioctl_bench
	check "kbloom_ioctl_bench: every present key found, every call answered (exit $ib_rc)" [ "$ib_rc" -eq 0 ]
	rm -f /tmp/ioctl_bench
}

# "| BPF ... | 0.13 MiB | 118.9 ns | 121.0 ns | 62.7 ns | ..." -> "121.0 62.7"
bench_bpf_query_ns() {
	awk -F'|' '/^\| BPF bloom map, from a BPF program/ {
		gsub(/ ns/, ""); printf "%s %s\n", $5 + 0, $6 + 0 }'
}

run_api_bench() {
	ab_keys=$(bench_keys)
	if [ ! -f "$L/kbloom_apibench.ko" ] || ! command -v kbloom_bench >/dev/null; then
		not_ok "kbloom_apibench.ko and kbloom_bench are in the VM"
		return
	fi
	check "insmod kbloom_apibench.ko (the in-kernel API on ioctl_bench)" \
		insmod "$L/kbloom_apibench.ko" name=ioctl_bench keys="$ab_keys"
	rmmod kbloom_apibench 2>/dev/null
	dmesg | sed -n 's/^.*kbloom_apibench: /# bench: /p'
	check "kbloom_apibench: every present key found" \
		sh -c '! dmesg | grep -q "kbloom_apibench: .* present keys found"'
	kbloom_bench -q -k "BPF program" -l 8 "$ab_keys" > /tmp/bpf_bench 2>&1
	ab_rc=$?
	sed -n 's/^| BPF/# bench: BPF/p' /tmp/bpf_bench
	check "kbloom_bench, BPF program: every present key found (exit $ab_rc)" [ "$ab_rc" -eq 0 ]
	# The batched API against the BPF program, present and absent keys.
	bench_bpf_query_ns < /tmp/bpf_bench | {
		read -r bp ba
		dmesg | sed -n 's/.*in-kernel API, batches.*present \([0-9.]*\) ns.*absent \([0-9.]*\) ns.*/\1 \2/p' |
			tail -n 1 | {
				read -r kp ka
				awk -v bp="$bp" -v ba="$ba" -v kp="$kp" -v ka="$ka" 'BEGIN {
					if (kp > 0 && ka > 0 && bp > 0 && ba > 0)
						printf "# bench: in-kernel API batches: %.1fx (present), %.1fx (absent) the speed of the BPF program on the BPF map\n", bp / kp, ba / ka }'
			}
	}
	rm -f /tmp/bpf_bench
	check "destroy ioctl_bench" bloomctl destroy ioctl_bench
}

# run_input_bench: bloomctl's key input (large reads, memchr() for the
# line ends, one batch ioctl per 65536 keys) against wc -l (busybox's)
# over the same file of 10 x kbloom_bench_keys lines: how much a batched
# query costs on top of just reading the lines.
run_input_bench() {
	ib_n=$(($(bench_keys) * 10))
	seq 1 "$ib_n" > /tmp/ib.keys
	check_exit 0 "input bench: create ib ($ib_n keys, blocked)" \
		bloomctl create ib --capacity "$ib_n" --fpr 0.01 --layout blocked
	bloomctl add ib < /tmp/ib.keys
	t0=$(now_ms)
	wc -l < /tmp/ib.keys > /dev/null
	t1=$(now_ms)
	bloomctl -j query ib --count < /tmp/ib.keys > /tmp/ib.out
	t2=$(now_ms)
	check "input bench: every key found" has "\"present\": *$ib_n" /tmp/ib.out
	awk -v w=$((t1 - t0)) -v q=$((t2 - t1)) -v n="$ib_n" 'BEGIN {
		printf "# bench: bloomctl input: %d lines: wc -l %d ms, bloomctl query --count %d ms (%.1fx wc -l)\n", n, w, q, (w > 0 ? q / w : 0) }'
	bloomctl destroy ib
	rm -f /tmp/ib.keys /tmp/ib.out
}

# run_xdp_bench: the XDP example (tools/bpf) with kbloom's kfuncs, by
# reference and by id, against the same program on a BPF bloom filter
# map, both sized for kbloom_xdp_flows=M flows at 1% (default 5000):
# packets/s through BPF_PROG_TEST_RUN, and the memory each filter takes.
# Each program sends 10 flows of its own, each one packet repeated 50000
# times. Every BPF_PROG_TEST_RUN of an XDP program re-patches the XDP
# dispatcher (text_poke, a grace period) and, under emulation, starts
# from a flushed TLB and retranslated code, all of which its first
# packets pay: 40 repeats left that as most of a packet's measured cost,
# and 1000 still as a third of it (the "no lookup" program took 250 ns a
# packet at 1000 repeats, 185 at 50000, 130 at 10^8, in one VM), more
# of kbloom's lookups than of the map's. kbloom_xdp_bench also runs the
# map program with its lookups left out (parsing and keys only), and
# prints each one's lookups alone: its time less that one's. Five rounds,
# and the median of each ratio: one round's ratio moves by 20% under
# emulation. vm.sh runs it twice: after the other benches, and in a
# boot of its own. Needs kbloom.ko with BTF (vm.sh builds it so).
XB_ROUNDS=5	# odd: the median is the middle round
# The median of column $1 of the XDP bench's rounds of ratios
# (/tmp/xb.ratios), said as kbloom's ratio to $2.
xb_median() {
	sort -n -k"$1" /tmp/xb.ratios | awk -v c="$1" -v what="$2" -v rounds=$XB_ROUNDS -v when="$xb_when" '{ v[NR] = $c }
	END { if (NR == rounds) {
		all = v[1]; for (i = 2; i <= NR; i++) all = all ", " v[i]
		printf "# bench: XDP: kbloom kfuncs by id %sx %s, median of %s (%s)\n", v[int((NR + 1) / 2)], what, all, when
	} else
		printf "# bench: XDP: no median of kbloom kfuncs by id to %s: %d of the %d rounds gave a ratio\n", what, NR, rounds }'
}

run_xdp_bench() {
	xb_flows=${kbloom_xdp_flows:-5000}
	xb_sent=$((xb_flows < 10 ? xb_flows : 10))
	# vm.sh runs it after the other benches, then in a boot that
	# runs nothing else.
	case "${kbloom_only:-}" in
	run_xdp_bench) xb_when="in a VM that ran nothing else" ;;
	*) xb_when="after the other checks of this boot" ;;
	esac
	xb_pkts=$((xb_sent * 50000))
	if ! command -v kbloom_xdp_bench >/dev/null ||
	   [ "$(cat /sys/kernel/bloom/kfuncs)" != available ]; then
		not_ok "XDP bench: kbloom_xdp_bench and the kfuncs ($(cat /sys/kernel/bloom/kfuncs))"
		return
	fi
	check_exit 0 "XDP bench: create xb ($xb_flows flows, 1%, blocked)" \
		bloomctl create xb --capacity "$xb_flows" --fpr 0.01 --layout blocked --bpf write
	# Rounds of the programs side by side, and the median of their ratios.
	: > /tmp/xb.ratios
	for xb_round in $(seq 1 $XB_ROUNDS); do
		echo "# bench: XDP round $xb_round of $XB_ROUNDS ($xb_when)"
		kbloom_xdp_bench --flows xb --capacity "$xb_flows" --fpr 0.01 \
			--packets "$xb_pkts" --flows-count "$xb_sent" --clear > /tmp/xb.out 2>&1
		xb_rc=$?
		sed 's/^/# bench: /' /tmp/xb.out
		# New flows: all but the 1% filters' false positives during the fill.
		check "XDP bench round $xb_round ($xb_when): each of the 3 programs counted 97-100% of $xb_sent flows new, no error (exit $xb_rc)" \
			sh -c "[ $xb_rc -eq 0 ] && [ \$(awk -v n=$xb_sent '\$NF == 0 && \$(NF - 3) <= n && \$(NF - 3) >= n * 0.97' /tmp/xb.out | wc -l) -eq 3 ]"
		# The lookup rate and packets/s of kfuncs by id against the map's.
		awk '/^kbloom kfuncs, by id / { kid = $(NF - 6) }
		/^BPF bloom map/ { map = $(NF - 6) }
		/^  lookup, kbloom kfuncs, by id .*x the map/ { lid = $(NF - 4) }
		END { if (kid > 0 && map > 0 && lid != "")
			printf "%s %.2f\n", substr(lid, 1, length(lid) - 1), kid / map }' \
			/tmp/xb.out >> /tmp/xb.ratios
	done
	xb_median 1 "the BPF map's lookup rate (lookups alone)"
	xb_median 2 "the packets/s of the BPF map"
	# kbloom: what the filter holds. The BPF map: its bit array as
	# kernel/bpf/bloom_filter.c sizes it (k * n * 7 / 5 bits, rounded up to
	# a power of two), with k = 7 for 1%, as kbloom_xdp_bench sets it.
	awk -v kb="$(cat /sys/kernel/bloom/filters/xb/memory_bytes)" -v n="$xb_flows" 'BEGIN {
		bits = n * 7 / 5 * 7; p = 64; while (p < bits) p *= 2
		printf "# bench: XDP memory for %d flows at 1%%: kbloom %.1f KiB, BPF map %.1f KiB (%.1fx)\n", n, kb / 1024, p / 8 / 1024, p / 8 / kb
	}'
	bloomctl destroy xb
	rm -f /tmp/xb.out /tmp/xb.ratios
}
