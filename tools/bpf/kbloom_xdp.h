/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the XDP examples (kbloom_xdp.bpf.c on kbloom's kfuncs,
 * kbloom_xdp_map.bpf.c on BPF bloom filter maps) share with their loader
 * kbloom_xdp.c: the counters and the sizes of the map programs' values.
 */
#ifndef __KBLOOM_XDP_H
#define __KBLOOM_XDP_H

#include <linux/kbloom.h>
#include <linux/types.h>

/* A filter name in the programs' .rodata (kbloom.bpf.h has the same). */
#ifndef __KBLOOM_BPF_NAME
#define __KBLOOM_BPF_NAME
union kbloom_bpf_name {
	char s[KBLOOM_NAME_MAX];
	__u64 w[KBLOOM_NAME_MAX / 8];
};
#endif

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
 * show_keys is set (kbloom_xdp test-run --show-keys): lengths 0 when no
 * such key was built.
 */
struct kbloom_xdp_keys {
	__u32 allow_len;
	__u32 flow_len;
	__u8 allow[KBLOOM_XDP_FLOW_SIZE];
	__u8 flow[KBLOOM_XDP_FLOW_SIZE];
};

#endif /* __KBLOOM_XDP_H */
