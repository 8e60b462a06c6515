// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_xdp_map: kbloom_xdp.bpf.c on the kernel's own BPF bloom filter
 * maps (BPF_MAP_TYPE_BLOOM_FILTER) instead of kbloom's filters: the same
 * allow-list, the same 5-tuple new-flow count, the same keys (zero-padded
 * to the maps' value sizes, KBLOOM_XDP_ALLOW_SIZE and _FLOW_SIZE), the
 * same counters, for kbloom_xdp_bench to run the two side by side. It
 * loads on any kernel with bloom filter maps (5.16), no kbloom.ko needed.
 *
 * Differences that come with the map: the maps are the program's own,
 * filled by the loader (bpf() BPF_MAP_UPDATE_ELEM), not named filters
 * that bloomctl and iptables share; a bloom map has no test-and-add, so a
 * new flow is a peek then a push, and two CPUs seeing a flow's first
 * packets at once can both count it new; the hash seed is random
 * (map_flags without BPF_F_ZERO_SEED) and the number of hashes is the
 * loader's (map_extra).
 */
#define KBLOOM_XDP_PROGRAM
#include "kbloom.bpf.h"
#include "kbloom_xdp.h"

/* Set by the loader before loading; the verifier prunes what is off. */
const volatile __u32 use_allow;
const volatile __u32 use_flows;
/* The bench's baseline: parse and build the keys, but look nothing up. */
const volatile __u32 no_lookup;

/* Sized by the loader: max_entries (capacity), map_extra (hashes). */
struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__uint(value_size, KBLOOM_XDP_ALLOW_SIZE);
	__uint(max_entries, 1);
	__uint(map_extra, 7);
} kb_allow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__uint(value_size, KBLOOM_XDP_FLOW_SIZE);
	__uint(max_entries, 1);
	__uint(map_extra, 7);
} kb_flows SEC(".maps");

SEC("xdp")
int kbloom_xdp_map(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	/*
	 * Zeroed: the padding up to the maps' value sizes is part of the
	 * value; separate, as the two maps' sizes differ.
	 */
	__u8 akey[KBLOOM_XDP_FLOW_SIZE] __attribute__((aligned(8))) = {};
	__u8 fkey[KBLOOM_XDP_FLOW_SIZE] __attribute__((aligned(8))) = {};
	struct kbloom_xdp_stats *st;
	struct kbloom_flow flow;
	int parsed, len;

	st = kb_stats();
	if (!st)
		return XDP_PASS;	/* cannot happen: an array's only entry */
	parsed = kbloom_parse(ctx, data, data_end,
			      use_flows ? KBLOOM_FLOW_FIELDS :
					  KBLOOM_FLOW_SADDR, &flow);
	if (parsed == KBLOOM_PARSE_NOT_IP)
		goto pass;
	if (parsed == KBLOOM_PARSE_MALFORMED) {
		st->malformed++;
		goto drop;
	}

	if (use_allow) {
		len = kbloom_flow_key(&flow, KBLOOM_FLOW_SADDR, akey);
		kb_show_key(kb_keys.allow, &kb_keys.allow_len, akey, len);
		/* 0: maybe present; -ENOENT: certainly absent. */
		if (!no_lookup && bpf_map_peek_elem(&kb_allow, akey))
			goto drop;
	}

	if (use_flows) {
		if (parsed == KBLOOM_PARSE_UNSUPPORTED) {
			st->errors++;
			goto pass;
		}
		len = kbloom_flow_key(&flow, KBLOOM_FLOW_FIELDS, fkey);
		kb_show_key(kb_keys.flow, &kb_keys.flow_len, fkey, len);
		if (no_lookup)
			goto pass;
		if (!bpf_map_peek_elem(&kb_flows, fkey))
			st->seen_flows++;
		else if (bpf_map_push_elem(&kb_flows, fkey, BPF_ANY))
			st->errors++;
		else
			st->new_flows++;
	}
pass:
	st->passed++;
	return XDP_PASS;
drop:
	st->dropped++;
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
