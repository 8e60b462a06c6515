// SPDX-License-Identifier: GPL-2.0
/*
 * make bench's in-kernel peer: the kernel's BPF bloom filter map
 * (kernel/bpf/bloom_filter.c) used from a BPF program, as an XDP program
 * would use it per packet. bpf_loop() runs one lookup or push per key;
 * bench_bpf.c runs the program with BPF_PROG_TEST_RUN. The keys are built
 * from their index as bench_key() builds them, in registers and on the
 * stack: the program reads no key memory (kbloom's batch reads its keys
 * from a buffer, so this favours the BPF map slightly).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* Sized by bench_bpf.c before loading: value_size, max_entries, k. */
struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__uint(value_size, 8);
	__uint(max_entries, 1);
	__uint(map_extra, 7);
} bloom SEC(".maps");

/* Set by bench_bpf.c through the mmapped .bss, before each run. */
__u64 first, count, hits;
__u32 add;

struct bench_key {
	__u64 idx;
	__u8 tail[8];
};

static long bench_one(__u64 i, void *ctx)
{
	struct bench_key k = {
		.idx = first + i,
		.tail = { 10, 0, 0, 1, 6 },	/* BENCH_KEY_TAIL */
	};

	if (add)
		bpf_map_push_elem(&bloom, &k, BPF_ANY);
	else if (!bpf_map_peek_elem(&bloom, &k))
		hits++;
	return 0;
}

SEC("xdp")
int bench(struct xdp_md *ctx)
{
	bpf_loop(count, bench_one, NULL, 0);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
