/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbloom for BPF programs: the kfuncs of kbloom.ko (kmod/kbloom_bpf.c),
 * callable from XDP and tc (sched_cls) programs, and those that change
 * nothing (get, put, query, id, query_id) from syscall programs, which
 * the verifier refuses the others; and the flow keys of packets, byte
 * for byte the keys that the bloom iptables match (kmod/xt_bloom.c) and
 * `bloomctl --key FIELDS --flow VALUES` build, so that one filter serves
 * all three.
 *
 * Built with the uapi headers only (<linux/bpf.h>, not vmlinux.h): the
 * programs must load on the 6.1 kernels the module targets, whatever
 * kernel they are compiled on.
 */
#ifndef __KBLOOM_BPF_H
#define __KBLOOM_BPF_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/kbloom.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/*
 * The kernel's struct kbloom_bpf_filter is opaque to programs: they only
 * hold and pass pointers to it. It is declared empty rather than as a
 * bare "struct kbloom_bpf_filter;" because libbpf checks each kfunc's
 * prototype against the kernel's (bpf_core_types_are_compat()), and that
 * compares BTF kinds: a forward declaration is BTF_KIND_FWD, which does
 * not match the kernel's BTF_KIND_STRUCT; any struct, whatever its
 * members, does.
 */
struct kbloom_bpf_filter {
};

/*
 * Memory arguments (@name, @key) must be writable program memory, the
 * stack or a writable map value: until at least 6.1 the verifier checks
 * a kfunc's memory argument for reading and for writing alike, so a
 * pointer into .rodata is refused ("write into map forbidden"). Copy
 * names from .rodata to the stack first (kbloom_name_copy()).
 */

/*
 * Look a filter up by name (bytes up to the first NUL within
 * @name__sz) and take a reference; NULL if there is none, or if the
 * filter was not created open to BPF (bloomctl create --bpf read|write).
 */
extern struct kbloom_bpf_filter *bpf_kbloom_get(const char *name,
					    __u32 name__sz) __ksym;
/*
 * Drop the reference: every path must, or the verifier refuses the
 * program ("Unreleased reference").
 */
extern void bpf_kbloom_put(struct kbloom_bpf_filter *filter) __ksym;

/*
 * On a held filter. 1: maybe present (query) or seen before
 * (test-and-add); 0: absent or new; remove: 0 removed, -ENOENT absent.
 * -EINVAL: key length not 1..KBLOOM_KEY_MAX; -ENOENT: the filter was
 * destroyed since (the reference keeps its memory, not the filter);
 * -EOPNOTSUPP: remove on a filter that is not counting; -EACCES: add,
 * test-and-add or remove on a filter open to BPF for reading only.
 */
extern int bpf_kbloom_query(struct kbloom_bpf_filter *filter, const void *key,
			    __u32 key__sz) __ksym;
extern int bpf_kbloom_add(struct kbloom_bpf_filter *filter, const void *key,
			  __u32 key__sz) __ksym;
extern int bpf_kbloom_test_and_add(struct kbloom_bpf_filter *filter,
				   const void *key, __u32 key__sz) __ksym;
extern int bpf_kbloom_remove(struct kbloom_bpf_filter *filter, const void *key,
			     __u32 key__sz) __ksym;

/*
 * By id, with no reference: the filter is looked up under RCU on every
 * call. bpf_kbloom_id() gives the id (> 0; also sysfs
 * /sys/kernel/bloom/filters/NAME/id), or -ENOENT or -EINVAL, or
 * -EACCES if the filter is closed to BPF. The calls answer as above, and
 * -ENOENT once the filter is destroyed: a filter created again under the
 * same name has a new id; -EACCES on every call the filter's access does
 * not allow (ids can be read from sysfs by anyone).
 */
extern int bpf_kbloom_id(const char *name, __u32 name__sz) __ksym;
extern int bpf_kbloom_query_id(__u32 id, const void *key,
			       __u32 key__sz) __ksym;
extern int bpf_kbloom_add_id(__u32 id, const void *key, __u32 key__sz) __ksym;
extern int bpf_kbloom_test_and_add_id(__u32 id, const void *key,
				      __u32 key__sz) __ksym;
extern int bpf_kbloom_remove_id(__u32 id, const void *key,
				__u32 key__sz) __ksym;

#include "kbloom_bpf_name.h"

static __always_inline void kbloom_name_copy(union kbloom_bpf_name *dst,
					     const volatile union kbloom_bpf_name *src)
{
	int i;

#pragma unroll
	for (i = 0; i < KBLOOM_NAME_MAX / 8; i++)
		dst->w[i] = src->w[i];
}

/* ---- flow keys --------------------------------------------------------- */

/*
 * A packet's flow, parsed once, from which keys of any fields are built:
 * what bloom_key4()/bloom_key6() of xt_bloom read from an skb.
 */
struct kbloom_flow {
	__u8 family;		/* KBLOOM_FLOW_IPV4 or KBLOOM_FLOW_IPV6 */
	__u8 proto;		/* the upper-layer protocol */
	__be16 sport;		/* zero if no ports (see kbloom_has_ports()) */
	__be16 dport;
	__u16 pad;
	__be32 saddr[4];	/* IPv4: saddr[0] only */
	__be32 daddr[4];
};

/* What kbloom_parse() found. */
enum {
	KBLOOM_PARSE_OK = 0,
	/* Not IPv4 or IPv6 (ARP, LLDP...): no key. */
	KBLOOM_PARSE_NOT_IP = 1,
	/*
	 * Truncated or invalid headers: bad version or header length, a
	 * length field past the frame, an extension header or ports cut
	 * short. The IP stack drops the first kinds before netfilter, and
	 * xt_bloom drops (hotdrop) the last ones: drop them.
	 */
	KBLOOM_PARSE_MALFORMED = -1,
	/*
	 * IPv6 with more than KBLOOM_IPV6_EXT_MAX extension headers before
	 * the upper layer: the addresses are filled in, proto and ports are
	 * not (xt_bloom would have found them).
	 */
	KBLOOM_PARSE_UNSUPPORTED = -2,
};

/*
 * Extension headers skipped before giving up: real traffic has two or
 * three at most; each costs verifier work.
 */
#ifndef KBLOOM_IPV6_EXT_MAX
#define KBLOOM_IPV6_EXT_MAX	8
#endif
/* VLAN tags skipped (802.1Q, 802.1ad: QinQ). */
#define KBLOOM_VLAN_MAX		2
/*
 * Offsets from the frame's start beyond this are refused: it keeps the
 * verifier's idea of the offsets in its packet range (MAX_PACKET_OFF).
 */
#define KBLOOM_PKT_OFF_MAX	0x3fff

/*
 * Copies packet bytes at a variable offset: bpf_xdp_load_bytes() for XDP
 * (Linux 5.18); a tc program defines it as bpf_skb_load_bytes before
 * including this file.
 */
#ifndef KBLOOM_LOAD_BYTES
#define KBLOOM_LOAD_BYTES(ctx, off, to, len) \
	bpf_xdp_load_bytes((struct xdp_md *)(ctx), off, to, len)
#endif

/*
 * A 16-bit length field, as a number the 6.1 verifier can bound, to add
 * to a packet pointer: it knows nothing of the result of a byte swap
 * (bpf_ntohs()), nor of an OR of two unknown registers, but an AND with a
 * constant bounds anything. barrier_var() keeps the compiler from
 * dropping that AND, which it sees is redundant.
 */
static __always_inline __u32 kbloom_be16(const __be16 *p)
{
	__u32 v = bpf_ntohs(*p);

	barrier_var(v);
	return v & 0xffff;
}

/* The ports: IPPROTO_TCP, UDP, UDPLITE, SCTP, DCCP, as xt_bloom. */
static __always_inline int kbloom_has_ports(__u8 proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP ||
	       proto == IPPROTO_UDPLITE || proto == IPPROTO_SCTP ||
	       proto == IPPROTO_DCCP;
}

/* The IPv6 extension headers that ipv6_find_hdr() walks past. */
static __always_inline int kbloom_ipv6_ext(__u8 nexthdr)
{
	return nexthdr == 0 /* hop-by-hop */ || nexthdr == IPPROTO_ROUTING ||
	       nexthdr == IPPROTO_FRAGMENT || nexthdr == IPPROTO_AH ||
	       nexthdr == IPPROTO_DSTOPTS;
}

/*
 * The ports at @off from @data, if the layer-3 packet (ending at @end,
 * an offset from @data too) holds them.
 */
static __always_inline int kbloom_ports(void *data, void *data_end, __u32 off,
					__u32 end, struct kbloom_flow *flow)
{
	__be16 *ports;

	if (off > KBLOOM_PKT_OFF_MAX || off + 4 > end)
		return KBLOOM_PARSE_MALFORMED;
	ports = data + off;
	if ((void *)(ports + 2) > data_end)
		return KBLOOM_PARSE_MALFORMED;
	flow->sport = ports[0];
	flow->dport = ports[1];
	return KBLOOM_PARSE_OK;
}

/*
 * IPv4 at @off. The stack checks version, header length and total length
 * before netfilter sees a packet (ip_rcv_core()), and trims the frame to
 * the total length: so do we, so that a key never includes bytes of
 * Ethernet padding as ports.
 */
static __always_inline int kbloom_parse_ipv4(void *data, void *data_end,
					     __u32 off, __u8 want,
					     struct kbloom_flow *flow)
{
	struct iphdr *iph = data + off;
	__u32 hlen, tot;

	if ((void *)(iph + 1) > data_end)
		return KBLOOM_PARSE_MALFORMED;
	if (iph->version != 4 || iph->ihl < 5)
		return KBLOOM_PARSE_MALFORMED;
	hlen = iph->ihl * 4;
	tot = kbloom_be16(&iph->tot_len);
	if (tot < hlen || (void *)iph + tot > data_end)
		return KBLOOM_PARSE_MALFORMED;
	flow->family = KBLOOM_FLOW_IPV4;
	flow->proto = iph->protocol;
	flow->saddr[0] = iph->saddr;
	flow->daddr[0] = iph->daddr;
	/* Every fragment but the first keys with ports zero. */
	if (!(want & (KBLOOM_FLOW_SPORT | KBLOOM_FLOW_DPORT)) ||
	    (iph->frag_off & bpf_htons(0x1fff /* IP_OFFSET */)) ||
	    !kbloom_has_ports(iph->protocol))
		return KBLOOM_PARSE_OK;
	return kbloom_ports(data, data_end, off + hlen, off + tot, flow);
}

/*
 * The ports at @off, through the load-bytes helper: after extension
 * headers, where @off depends on the packet in ways that, as a packet
 * pointer's offset, would make the verifier walk every combination of
 * header kinds (hundreds of thousands of instructions for eight headers);
 * as a helper's argument it is a plain number.
 */
static __always_inline int kbloom_ports_load(void *ctx, __u32 off, __u32 end,
					     struct kbloom_flow *flow)
{
	__be16 ports[2];

	if (off + 4 > end || KBLOOM_LOAD_BYTES(ctx, off, ports, 4))
		return KBLOOM_PARSE_MALFORMED;
	flow->sport = ports[0];
	flow->dport = ports[1];
	return KBLOOM_PARSE_OK;
}

/*
 * IPv6 at @off: the upper-layer protocol is found as ipv6_find_hdr(skb,
 * &thoff, -1, &fragoff, NULL) finds it for xt_bloom: past hop-by-hop,
 * routing, fragment, AH and destination options headers; ports zero in a
 * fragment other than the first; protocol 44 (fragment), ports zero, if
 * such a fragment starts with another extension header. Not handled:
 * more than KBLOOM_IPV6_EXT_MAX extension headers (UNSUPPORTED), and
 * jumbograms beyond the frame (a payload length of 0 keys what the frame
 * holds).
 */
static __always_inline int kbloom_parse_ipv6(void *ctx, void *data,
					     void *data_end, __u32 off,
					     __u8 want, struct kbloom_flow *flow)
{
	struct ipv6hdr *ip6h = data + off;
	__u32 end, hlen;
	__u8 hp[4], nexthdr;
	int i;

	if ((void *)(ip6h + 1) > data_end)
		return KBLOOM_PARSE_MALFORMED;
	if (ip6h->version != 6)
		return KBLOOM_PARSE_MALFORMED;
	/*
	 * As ipv6_rcv(): the frame must hold the payload and is trimmed to
	 * it; a payload length of 0 before a hop-by-hop header is a
	 * jumbogram's, whose length is in that header: the frame's end is
	 * the only bound then (not computed as data_end - data: subtracting
	 * pointers needs CAP_PERFMON).
	 */
	end = off + sizeof(*ip6h) + kbloom_be16(&ip6h->payload_len);
	if (!ip6h->payload_len && ip6h->nexthdr == 0)
		end = 0xffff;
	else if (data + end > data_end)
		return KBLOOM_PARSE_MALFORMED;
	flow->family = KBLOOM_FLOW_IPV6;
	__builtin_memcpy(flow->saddr, &ip6h->saddr, 16);
	__builtin_memcpy(flow->daddr, &ip6h->daddr, 16);
	/* As xt_bloom: no parsing at all for a key of addresses only. */
	if (!(want & (KBLOOM_FLOW_PROTO | KBLOOM_FLOW_SPORT |
		      KBLOOM_FLOW_DPORT)))
		return KBLOOM_PARSE_OK;

	nexthdr = ip6h->nexthdr;
	off += sizeof(*ip6h);
	/* Most packets: the upper layer at once, read in place. */
	if (!kbloom_ipv6_ext(nexthdr)) {
		flow->proto = nexthdr;
		if (!(want & (KBLOOM_FLOW_SPORT | KBLOOM_FLOW_DPORT)) ||
		    !kbloom_has_ports(nexthdr))
			return KBLOOM_PARSE_OK;
		return kbloom_ports(data, data_end, off, end, flow);
	}
	for (i = 0; i < KBLOOM_IPV6_EXT_MAX; i++) {
		if (!kbloom_ipv6_ext(nexthdr))
			break;	/* the upper layer, or 59: no next header */
		/*
		 * ipv6_find_hdr() reads 4 bytes of a routing or fragment
		 * header, 2 of the others, then wants the whole header
		 * (but of a fragment other than the first): all of them
		 * are at least 8 bytes long, so 4 can be read first.
		 */
		if (off + 4 > end || KBLOOM_LOAD_BYTES(ctx, off, hp, 4))
			return KBLOOM_PARSE_MALFORMED;
		if (nexthdr == IPPROTO_FRAGMENT) {
			if (bpf_ntohs(*(__be16 *)(hp + 2)) & ~7U) {
				/*
				 * Not the first fragment: no ports in it,
				 * and its upper layer only if that follows
				 * at once; else "fragment" (ipv6_find_hdr()
				 * answers -ENOENT, which xt_bloom keys so).
				 */
				flow->proto = kbloom_ipv6_ext(hp[0]) ?
					      IPPROTO_FRAGMENT : hp[0];
				return KBLOOM_PARSE_OK;
			}
			hlen = 8;
		} else if (nexthdr == IPPROTO_AH) {
			hlen = (hp[1] + 2) << 2;
		} else {
			hlen = (hp[1] + 1) << 3;
		}
		if (off + hlen > end)
			return KBLOOM_PARSE_MALFORMED;
		off += hlen;
		nexthdr = hp[0];
	}
	if (kbloom_ipv6_ext(nexthdr))
		return KBLOOM_PARSE_UNSUPPORTED;
	flow->proto = nexthdr;
	if (!(want & (KBLOOM_FLOW_SPORT | KBLOOM_FLOW_DPORT)) ||
	    !kbloom_has_ports(nexthdr))
		return KBLOOM_PARSE_OK;
	return kbloom_ports_load(ctx, off, end, flow);
}

/**
 * kbloom_parse() - parse an Ethernet frame for its flow keys
 * @ctx: the program's context, for KBLOOM_LOAD_BYTES().
 * @data: the frame (xdp_md->data, or __sk_buff->data in tc).
 * @data_end: its end.
 * @want: the KBLOOM_FLOW_* fields of the keys to be built: what is not
 *	wanted is not parsed (as xt_bloom: an IPv6 key of addresses does
 *	not look past the IPv6 header), and not checked.
 * @flow: out: the flow, zeroed first.
 *
 * Skips up to KBLOOM_VLAN_MAX VLAN tags (an XDP program sees them; the
 * iptables match sees the packet untagged).
 *
 * Return: KBLOOM_PARSE_OK, or another KBLOOM_PARSE_* value.
 */
static __always_inline int kbloom_parse(void *ctx, void *data, void *data_end,
					__u8 want, struct kbloom_flow *flow)
{
	struct ethhdr *eth = data;
	__u32 off = sizeof(*eth);
	__be16 proto;
	int i;

	__builtin_memset(flow, 0, sizeof(*flow));
	if ((void *)(eth + 1) > data_end)
		return KBLOOM_PARSE_NOT_IP;
	proto = eth->h_proto;
#pragma unroll
	for (i = 0; i < KBLOOM_VLAN_MAX; i++) {
		__be16 *tag = data + off;

		if (proto != bpf_htons(ETH_P_8021Q) &&
		    proto != bpf_htons(ETH_P_8021AD))
			break;
		/* TCI, then the encapsulated protocol. */
		if ((void *)(tag + 2) > data_end)
			return KBLOOM_PARSE_NOT_IP;
		proto = tag[1];
		off += 4;
	}
	if (proto == bpf_htons(ETH_P_IP))
		return kbloom_parse_ipv4(data, data_end, off, want, flow);
	if (proto == bpf_htons(ETH_P_IPV6))
		return kbloom_parse_ipv6(ctx, data, data_end, off, want, flow);
	return KBLOOM_PARSE_NOT_IP;
}

static __always_inline int kbloom_key_fields(const struct kbloom_flow *flow,
					     __u8 fields, __u8 *key,
					     const int alen)
{
	int len = 0;

	key[len++] = flow->family;
	key[len++] = fields;
	if (fields & KBLOOM_FLOW_SADDR) {
		__builtin_memcpy(key + len, flow->saddr, alen);
		len += alen;
	}
	if (fields & KBLOOM_FLOW_DADDR) {
		__builtin_memcpy(key + len, flow->daddr, alen);
		len += alen;
	}
	if (fields & KBLOOM_FLOW_PROTO)
		key[len++] = flow->proto;
	if (fields & KBLOOM_FLOW_SPORT) {
		__builtin_memcpy(key + len, &flow->sport, 2);
		len += 2;
	}
	if (fields & KBLOOM_FLOW_DPORT) {
		__builtin_memcpy(key + len, &flow->dport, 2);
		len += 2;
	}
	return len;
}

/**
 * kbloom_flow_key() - build a flow key, the KBLOOM_FLOW_* layout
 * @flow: from kbloom_parse() (OK, or UNSUPPORTED for addresses only).
 * @fields: the KBLOOM_FLOW_* fields: a compile-time constant, so that
 *	every offset into @key is one (the verifier wants constant stack
 *	offsets, and the stores come out aligned).
 * @key: out: at least KBLOOM_FLOW_KEY_MAX bytes on the stack, 8-byte
 *	aligned; bytes past the key are left as they were (zero them once
 *	to pass the key to a kfunc or map of fixed size).
 *
 * Addresses are whole: no prefix masking (xt_bloom's --src-prefix,
 * --dst-prefix); mask @flow's addresses first for that.
 *
 * Return: the key's length.
 */
static __always_inline int kbloom_flow_key(const struct kbloom_flow *flow,
					   __u8 fields, __u8 *key)
{
	if (flow->family == KBLOOM_FLOW_IPV4)
		return kbloom_key_fields(flow, fields, key, 4);
	return kbloom_key_fields(flow, fields, key, 16);
}

#endif /* __KBLOOM_BPF_H */
