/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * xt_bloom: the "bloom" iptables/ip6tables match. It builds a flow key
 * from each packet (the layout is documented at KBLOOM_FLOW_* in
 * <linux/kbloom.h>) and tests it against, adds it to or removes it from a
 * named kbloom filter:
 *
 *	iptables -A INPUT -m bloom --name NAME --key FIELDS
 *		[--src-prefix N] [--dst-prefix N] MODE
 *	MODE: [!] --test | --add | [!] --test-and-add | --remove
 *
 * The filter must exist when the rule is added; the rule holds it (and
 * pins it: destroying it fails with EBUSY) until the rule is deleted.
 */
#ifndef _UAPI_XT_BLOOM_H
#define _UAPI_XT_BLOOM_H

#include <linux/types.h>

/* Equal to KBLOOM_NAME_MAX: a filter name and its NUL. */
#define XT_BLOOM_NAME_MAX	32

/* struct xt_bloom_mtinfo @mode. */
enum xt_bloom_mode {
	/* Match when the key may be in the filter. */
	XT_BLOOM_TEST = 1,
	/* Add the key; always match. */
	XT_BLOOM_ADD = 2,
	/* Add the key; match when it was there already (seen before). */
	XT_BLOOM_TEST_AND_ADD = 3,
	/* Remove the key (counting filters); match when it was removed. */
	XT_BLOOM_REMOVE = 4,
};

/* struct xt_bloom_mtinfo @flags. */
/* Invert the answer of XT_BLOOM_TEST or XT_BLOOM_TEST_AND_ADD. */
#define XT_BLOOM_INVERT		(1U << 0)
/* Revision 1: the rule carries the filter's shape (@capacity and on). */
#define XT_BLOOM_SHAPE		(1U << 1)

/**
 * struct xt_bloom_mtinfo - the match's data, revision 0
 * @name: the filter's name, NUL-terminated.
 * @fields: KBLOOM_FLOW_* bits: the packet fields the key is made of (at
 *	least one). Whatever order the user lists them in, they enter the
 *	key in the order of the bits.
 * @src_prefix: the source address is masked to this many leading bits:
 *	0 to 32 (IPv4) or 128 (IPv6). Must be the full length (32 or 128)
 *	when @fields lacks KBLOOM_FLOW_SADDR.
 * @dst_prefix: likewise for the destination address.
 * @mode: an enum xt_bloom_mode.
 * @flags: XT_BLOOM_INVERT, allowed with XT_BLOOM_TEST and
 *	XT_BLOOM_TEST_AND_ADD only.
 * @reserved: must be 0.
 * @filter: the kernel's; never copied to userspace (the match's usersize
 *	ends before it).
 */
struct xt_bloom_mtinfo {
	char name[XT_BLOOM_NAME_MAX];
	__u8 fields;
	__u8 src_prefix;
	__u8 dst_prefix;
	__u8 mode;
	__u8 flags;
	__u8 reserved[3];

	/* Used internally by the kernel */
	struct kbloom_filter *filter __attribute__((aligned(8)));
};

/**
 * struct xt_bloom_mtinfo1 - the match's data, revision 1
 * @name, @fields, @src_prefix, @dst_prefix, @mode: as in revision 0.
 * @flags: XT_BLOOM_INVERT as in revision 0; XT_BLOOM_SHAPE when the rule
 *	carries the filter's shape: @capacity through @generations.
 * @reserved: must be 0.
 * @capacity: the filter's design capacity n (> 0).
 * @fpr_ppb: its false-positive rate, in parts per billion (1 to
 *	KBLOOM_FPR_ONE - 1).
 * @window_ms: a windowed filter's W (0: rotated by hand only); 0 when
 *	@generations is.
 * @generations: 0 for a plain filter, else G (2 to KBLOOM_MAX_GENERATIONS).
 * @create_flags: KBLOOM_CREATE_COUNTING, KBLOOM_CREATE_BLOCKED.
 * @hash_scheme: KBLOOM_HASH_JHASH or KBLOOM_HASH_SIPHASH, or 0: the
 *	module's default for a new filter, any for an existing one.
 * @reserved1: must be 0.
 * @filter: the kernel's; never copied to userspace (the match's usersize
 *	ends before it).
 * Without XT_BLOOM_SHAPE, @capacity through @reserved1 must be 0.
 */
struct xt_bloom_mtinfo1 {
	char name[XT_BLOOM_NAME_MAX];
	__u8 fields;
	__u8 src_prefix;
	__u8 dst_prefix;
	__u8 mode;
	__u8 flags;
	__u8 reserved[3];
	__u64 capacity;
	__u32 fpr_ppb;
	__u32 window_ms;
	__u32 generations;
	__u32 create_flags;
	__u32 hash_scheme;
	__u32 reserved1;

	/* Used internally by the kernel */
	struct kbloom_filter *filter __attribute__((aligned(8)));
};

#endif /* _UAPI_XT_BLOOM_H */
