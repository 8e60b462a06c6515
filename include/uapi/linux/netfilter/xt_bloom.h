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

#endif /* _UAPI_XT_BLOOM_H */
