/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the XDP examples (kbloom_xdp.bpf.c on kbloom's kfuncs,
 * kbloom_xdp_map.bpf.c on BPF bloom filter maps) and the kfunc test
 * programs (kbloom_kfunc_test.bpf.c) share with their loaders (kbloom_xdp.c,
 * kbloom_xdp_test.c, tools/bench/kbloom_xdp_bench.c):
 * the counters, the sizes of the map programs' values, the operations.
 */
#ifndef __KBLOOM_XDP_H
#define __KBLOOM_XDP_H

#include <linux/kbloom.h>
#include <linux/types.h>

/* A filter name in the programs' .rodata. */
#include "kbloom_bpf_name.h"

/*
 * The one value of the per-CPU array "kb_counters"; the loader sums the
 * CPUs. Every packet counts in passed or dropped; the others say why.
 */
struct kbloom_xdp_stats {
	__u64 passed;
	__u64 dropped;
	__u64 new_flows;	/* test-and-add: first packet of a 5-tuple */
	__u64 seen_flows;	/* test-and-add: 5-tuple seen before */
	/*
	 * A filter could not be consulted: no filter by that name or id
	 * (destroyed), a kfunc error, an IPv6 packet with too many
	 * extension headers for its 5-tuple. Not a packet count: a packet
	 * can count twice, once per filter.
	 */
	__u64 errors;
	__u64 malformed;	/* dropped: headers truncated or invalid */
};

/* The names of the counters, in the order of the structure. */
#define KBLOOM_XDP_COUNTERS \
	"passed", "dropped", "new_flows", "seen_flows", "errors", "malformed"

/* The name of the counters map: the loader finds it by it. */
#define KBLOOM_XDP_COUNTERS_MAP	"kb_counters"

/*
 * The map program's values: a BPF bloom filter map has one value size,
 * so keys are zero-padded to it. The allow-list key (family, fields,
 * source address) is 6 or 18 bytes; the 5-tuple key 15 or 39
 * (KBLOOM_FLOW_KEY_MAX). Family and fields come first, so a padded IPv4
 * key never equals an IPv6 one.
 */
#define KBLOOM_XDP_ALLOW_SIZE	20
#define KBLOOM_XDP_FLOW_SIZE	40

/*
 * Where the programs leave the keys of the last packet when .rodata's
 * show_keys is set (kbloom_xdp_test test-run --show-keys): lengths 0 when no
 * such key was built.
 */
struct kbloom_xdp_keys {
	__u32 allow_len;
	__u32 flow_len;
	__u8 allow[KBLOOM_XDP_FLOW_SIZE];
	__u8 flow[KBLOOM_XDP_FLOW_SIZE];
};

/*
 * kbloom_kfunc_test.bpf.c, the test programs of `kbloom_xdp_test kfunc`: one
 * kfunc call chosen by the loader. The key buffer is larger than the
 * largest key, so that a length the verifier accepts (within the buffer)
 * can still be one the kfunc refuses (-EINVAL).
 */
#define KBLOOM_KFUNC_KEY_BUF	(KBLOOM_KEY_MAX + 8)

enum kbloom_kfunc_op {
	KBLOOM_KFUNC_QUERY,		/* bpf_kbloom_query(_id) */
	KBLOOM_KFUNC_ADD,		/* bpf_kbloom_add(_id) */
	KBLOOM_KFUNC_TEST_AND_ADD,	/* bpf_kbloom_test_and_add(_id) */
	KBLOOM_KFUNC_REMOVE,		/* bpf_kbloom_remove(_id) */
	KBLOOM_KFUNC_GET,		/* bpf_kbloom_get(), bpf_kbloom_put() */
	KBLOOM_KFUNC_ID,		/* bpf_kbloom_id() */
};

/* The names of the operations, in the order of the enum. */
#define KBLOOM_KFUNC_OPS \
	"query", "add", "test-and-add", "remove", "get", "id"

/*
 * The context of the syscall program's BPF_PROG_TEST_RUN: it writes the
 * kfunc's answer there too, and the kernel copies it back.
 */
struct kbloom_kfunc_args {
	__s32 ret;
	__u32 runs;
};

#ifdef KBLOOM_XDP_PROGRAM
/*
 * What the two XDP programs (which define KBLOOM_XDP_PROGRAM) both have:
 * the counters, one per CPU, and the keys of the last packet.
 */
const volatile __u32 show_keys;
struct kbloom_xdp_keys kb_keys;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kbloom_xdp_stats);
} kb_counters SEC(".maps");

/* This CPU's counters; with show_keys, no key built yet. */
static __always_inline struct kbloom_xdp_stats *kb_stats(void)
{
	__u32 zero = 0;

	if (show_keys) {
		kb_keys.allow_len = 0;
		kb_keys.flow_len = 0;
	}
	return bpf_map_lookup_elem(&kb_counters, &zero);
}

/* With show_keys: @key, @len bytes of it, into @dst and @dst_len. */
static __always_inline void kb_show_key(__u8 dst[KBLOOM_XDP_FLOW_SIZE],
					__u32 *dst_len,
					const __u8 key[KBLOOM_XDP_FLOW_SIZE],
					int len)
{
	if (show_keys) {
		__builtin_memcpy(dst, key, KBLOOM_XDP_FLOW_SIZE);
		*dst_len = len;
	}
}
#endif

#endif /* __KBLOOM_XDP_H */
