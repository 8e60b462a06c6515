// SPDX-License-Identifier: GPL-2.0
/*
 * xt_bloom: the "bloom" xtables match. Each packet's flow key (family,
 * selected fields, masked addresses: the KBLOOM_FLOW_* layout of
 * <uapi/linux/kbloom.h>) is tested against, added to or removed from a
 * named kbloom filter, so that a rule can ask "seen before?" of every
 * packet. Works under iptables-legacy and, through nft_compat, under
 * iptables-nft, for IPv4 and IPv6.
 *
 * The rule looks the filter up (revision 1: makes it, if the rule carries
 * its shape and it is missing), keeps one reference to it and pins it at
 * checkentry (process context); the per-packet path only calls the
 * lock-free, sleep-free kbloom API: no lock, no reference count, no
 * allocation, so it runs in softirq context at any hook.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/module.h>
#include <linux/netfilter/x_tables.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <uapi/linux/kbloom.h>
#include <uapi/linux/netfilter/xt_bloom.h>

#include "kbloom.h"

/* Does @proto carry 16-bit source and destination ports first? */
static bool bloom_has_ports(u8 proto)
{
	switch (proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
	case IPPROTO_DCCP:
		return true;
	}
	return false;
}

/*
 * Append the ports the key asks for. @thoff is the transport header's
 * offset, valid only when @ports_valid. Returns the new end of the key,
 * or NULL if the transport header is truncated.
 */
static u8 *bloom_put_ports(const struct sk_buff *skb, u8 fields, u8 *p,
			   unsigned int thoff, bool ports_valid)
{
	static const __be16 none[2];
	const __be16 *ports = none;
	__be16 _ports[2];

	if (!(fields & (KBLOOM_FLOW_SPORT | KBLOOM_FLOW_DPORT)))
		return p;
	if (ports_valid) {
		ports = skb_header_pointer(skb, thoff, sizeof(_ports), _ports);
		if (!ports)
			return NULL;
	}
	if (fields & KBLOOM_FLOW_SPORT) {
		memcpy(p, &ports[0], sizeof(ports[0]));
		p += sizeof(ports[0]);
	}
	if (fields & KBLOOM_FLOW_DPORT) {
		memcpy(p, &ports[1], sizeof(ports[1]));
		p += sizeof(ports[1]);
	}
	return p;
}

static __be32 bloom_mask4(u8 prefix)
{
	return prefix ? htonl(~0U << (32 - prefix)) : 0;
}

/* The IPv4 flow key of @skb into @key; its length, or -1 if malformed. */
static int bloom_key4(const struct sk_buff *skb,
		      const struct xt_bloom_mtinfo *info, u8 *key)
{
	const struct iphdr *iph = ip_hdr(skb);
	u8 fields = info->fields;
	__be32 addr;
	u8 *p = key;

	*p++ = KBLOOM_FLOW_IPV4;
	*p++ = fields;
	if (fields & KBLOOM_FLOW_SADDR) {
		addr = iph->saddr & bloom_mask4(info->src_prefix);
		memcpy(p, &addr, sizeof(addr));
		p += sizeof(addr);
	}
	if (fields & KBLOOM_FLOW_DADDR) {
		addr = iph->daddr & bloom_mask4(info->dst_prefix);
		memcpy(p, &addr, sizeof(addr));
		p += sizeof(addr);
	}
	if (fields & KBLOOM_FLOW_PROTO)
		*p++ = iph->protocol;
	p = bloom_put_ports(skb, fields, p,
			    skb_network_offset(skb) + ip_hdrlen(skb),
			    !(iph->frag_off & htons(IP_OFFSET)) &&
			    bloom_has_ports(iph->protocol));
	return p ? p - key : -1;
}

#if IS_ENABLED(CONFIG_IPV6)
/* The IPv6 flow key of @skb into @key; its length, or -1 if malformed. */
static int bloom_key6(const struct sk_buff *skb,
		      const struct xt_bloom_mtinfo *info, u8 *key)
{
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	unsigned short fragoff = 0;
	unsigned int thoff = 0;
	struct in6_addr addr;
	u8 fields = info->fields;
	u8 *p = key;
	int proto = 0;

	if (fields & (KBLOOM_FLOW_PROTO | KBLOOM_FLOW_SPORT |
		      KBLOOM_FLOW_DPORT)) {
		/* The upper-layer header, after any extension headers. */
		proto = ipv6_find_hdr(skb, &thoff, -1, &fragoff, NULL);
		/*
		 * -ENOENT: a non-first fragment whose fragmentable part
		 * starts with another extension header, so the upper layer
		 * is not in it. It keys as protocol "fragment", no ports.
		 */
		if (proto == -ENOENT) {
			proto = NEXTHDR_FRAGMENT;
			fragoff = 1;
		} else if (proto < 0) {
			return -1;
		}
	}
	*p++ = KBLOOM_FLOW_IPV6;
	*p++ = fields;
	if (fields & KBLOOM_FLOW_SADDR) {
		ipv6_addr_prefix(&addr, &ip6h->saddr, info->src_prefix);
		memcpy(p, &addr, sizeof(addr));
		p += sizeof(addr);
	}
	if (fields & KBLOOM_FLOW_DADDR) {
		ipv6_addr_prefix(&addr, &ip6h->daddr, info->dst_prefix);
		memcpy(p, &addr, sizeof(addr));
		p += sizeof(addr);
	}
	if (fields & KBLOOM_FLOW_PROTO)
		*p++ = proto;
	p = bloom_put_ports(skb, fields, p, thoff,
			    !fragoff && bloom_has_ports(proto));
	return p ? p - key : -1;
}
#endif

/* Revision 1 begins as revision 0 does: the code below reads both so. */
static_assert(offsetof(struct xt_bloom_mtinfo1, reserved) ==
	      offsetof(struct xt_bloom_mtinfo, reserved) &&
	      sizeof_field(struct xt_bloom_mtinfo1, reserved) ==
	      sizeof_field(struct xt_bloom_mtinfo, reserved),
	      "xt_bloom revisions 0 and 1 share their first fields");

/* The rule's filter, where its revision keeps it. */
static struct kbloom_filter *bloom_filter(const struct xt_action_param *par)
{
	if (par->match->revision)
		return ((const struct xt_bloom_mtinfo1 *)par->matchinfo)->filter;
	return ((const struct xt_bloom_mtinfo *)par->matchinfo)->filter;
}

/* Apply the rule's mode to a key: does the packet match? */
static bool bloom_apply(const struct xt_action_param *par, const u8 *key,
			int len)
{
	const struct xt_bloom_mtinfo *info = par->matchinfo;
	struct kbloom_filter *filter = bloom_filter(par);
	int ret;

	switch (info->mode) {
	case XT_BLOOM_TEST:
		ret = kbloom_query(filter, key, len);
		break;
	case XT_BLOOM_ADD:
		return kbloom_add(filter, key, len) == 0;
	case XT_BLOOM_TEST_AND_ADD:
		ret = kbloom_test_and_add(filter, key, len);
		break;
	default:	/* XT_BLOOM_REMOVE, as checkentry made sure */
		return kbloom_remove(filter, key, len) == 0;
	}
	/* An error (the filter pinned by this rule cannot go) never matches. */
	if (unlikely(ret < 0))
		return false;
	return ret ^ !!(info->flags & XT_BLOOM_INVERT);
}

static bool bloom_mt4(const struct sk_buff *skb, struct xt_action_param *par)
{
	const struct xt_bloom_mtinfo *info = par->matchinfo;
	u8 key[KBLOOM_FLOW_KEY_MAX];
	int len = bloom_key4(skb, info, key);

	if (unlikely(len < 0)) {
		par->hotdrop = true;
		return false;
	}
	return bloom_apply(par, key, len);
}

#if IS_ENABLED(CONFIG_IPV6)
static bool bloom_mt6(const struct sk_buff *skb, struct xt_action_param *par)
{
	const struct xt_bloom_mtinfo *info = par->matchinfo;
	u8 key[KBLOOM_FLOW_KEY_MAX];
	int len = bloom_key6(skb, info, key);

	if (unlikely(len < 0)) {
		par->hotdrop = true;
		return false;
	}
	return bloom_apply(par, key, len);
}
#endif

/*
 * The rule's arguments, before any filter is looked up; @flags: the
 * flags its revision knows.
 */
static int bloom_mt_check_args(const struct xt_mtchk_param *par,
			       const struct xt_bloom_mtinfo *info, u8 flags)
{
	unsigned int full = par->family == NFPROTO_IPV6 ? 128 : 32;
	bool invertible;

	if (!net_eq(par->net, &init_net) && !capable(CAP_NET_ADMIN)) {
		pr_info_ratelimited("rules outside the initial network namespace need CAP_NET_ADMIN in the initial user namespace (filters are global)\n");
		return -EPERM;
	}
	if (strnlen(info->name, sizeof(info->name)) == sizeof(info->name)) {
		pr_info_ratelimited("filter name too long (at most %zu characters)\n",
				    sizeof(info->name) - 1);
		return -EINVAL;
	}
	if (!info->name[0]) {
		pr_info_ratelimited("empty filter name\n");
		return -EINVAL;
	}
	if (!info->fields || (info->fields & ~KBLOOM_FLOW_FIELDS)) {
		pr_info_ratelimited("filter \"%s\": unknown key fields %#x\n",
				    info->name, info->fields);
		return -EINVAL;
	}
	if (info->src_prefix > full || info->dst_prefix > full) {
		pr_info_ratelimited("filter \"%s\": prefix %u out of range 0-%u\n",
				    info->name,
				    max(info->src_prefix, info->dst_prefix),
				    full);
		return -EINVAL;
	}
	if ((!(info->fields & KBLOOM_FLOW_SADDR) && info->src_prefix != full) ||
	    (!(info->fields & KBLOOM_FLOW_DADDR) && info->dst_prefix != full)) {
		pr_info_ratelimited("filter \"%s\": a prefix for an address the key does not have\n",
				    info->name);
		return -EINVAL;
	}
	invertible = info->mode == XT_BLOOM_TEST ||
		     info->mode == XT_BLOOM_TEST_AND_ADD;
	if (!invertible && info->mode != XT_BLOOM_ADD &&
	    info->mode != XT_BLOOM_REMOVE) {
		pr_info_ratelimited("filter \"%s\": unknown mode %u\n",
				    info->name, info->mode);
		return -EINVAL;
	}
	if ((info->flags & ~flags) ||
	    ((info->flags & XT_BLOOM_INVERT) && !invertible) ||
	    memchr_inv(info->reserved, 0, sizeof(info->reserved))) {
		pr_info_ratelimited("filter \"%s\": bad flags %#x or reserved bytes\n",
				    info->name, info->flags);
		return -EINVAL;
	}
	return 0;
}

/*
 * The rule's hold on its filter: what the mode needs of it, and a pin.
 * Consumes the reference on failure.
 */
static int bloom_mt_hold(const struct xt_bloom_mtinfo *info,
			 struct kbloom_filter *filter)
{
	int ret;

	if (info->mode == XT_BLOOM_REMOVE && !kbloom_is_counting(filter)) {
		pr_info_ratelimited("filter \"%s\" is not a counting filter: --remove needs one\n",
				    info->name);
		ret = -EOPNOTSUPP;
		goto err_put;
	}
	ret = kbloom_pin(filter);
	if (ret) {
		pr_info_ratelimited("filter \"%s\" is being destroyed\n",
				    info->name);
		goto err_put;
	}
	return 0;

err_put:
	kbloom_put(filter);
	return ret;
}

/* A rule without a shape: its filter must exist. */
static struct kbloom_filter *bloom_mt_existing(const struct xt_bloom_mtinfo *info)
{
	struct kbloom_filter *filter = kbloom_get(info->name);
	int ret;

	if (!filter) {
		pr_info_ratelimited("no filter \"%s\"\n", info->name);
		return ERR_PTR(-ENOENT);
	}
	ret = bloom_mt_hold(info, filter);
	return ret ? ERR_PTR(ret) : filter;
}

static int bloom_mt_check(const struct xt_mtchk_param *par)
{
	struct xt_bloom_mtinfo *info = par->matchinfo;
	struct kbloom_filter *filter;
	int ret;

	ret = bloom_mt_check_args(par, info, XT_BLOOM_INVERT);
	if (ret)
		return ret;
	filter = bloom_mt_existing(info);
	if (IS_ERR(filter))
		return PTR_ERR(filter);
	info->filter = filter;
	return 0;
}

static const char *bloom_kind(u32 create_flags)
{
	return create_flags & KBLOOM_CREATE_COUNTING ? "counting, " : "";
}

/*
 * An existing filter's shape against the rule's: 0, or -EEXIST with what
 * differs in the log. A rule that names no hash scheme takes any.
 */
static int bloom_shape_check(const char *name, struct kbloom_filter *filter,
			     const struct kbloom_shape *want)
{
	struct kbloom_shape have;

	kbloom_shape_of(filter, &have);
	if (have.capacity != want->capacity || have.fpr_ppb != want->fpr_ppb)
		pr_info_ratelimited("filter \"%s\" exists with another size: capacity %llu, fpr %u ppb (the rule: %llu, %u ppb)\n",
				    name, have.capacity, have.fpr_ppb,
				    want->capacity, want->fpr_ppb);
	else if (have.flags != want->flags)
		pr_info_ratelimited("filter \"%s\" exists as another kind: %s%s layout (the rule: %s%s layout)\n",
				    name, bloom_kind(have.flags),
				    have.flags & KBLOOM_CREATE_BLOCKED ? "blocked" : "plain",
				    bloom_kind(want->flags),
				    want->flags & KBLOOM_CREATE_BLOCKED ? "blocked" : "plain");
	else if (have.generations != want->generations ||
		 have.window_ms != want->window_ms)
		pr_info_ratelimited("filter \"%s\" exists with another window: %u ms, %u generations (the rule: %u ms, %u generations)\n",
				    name, have.window_ms, have.generations,
				    want->window_ms, want->generations);
	else if (want->hash_scheme && have.hash_scheme != want->hash_scheme)
		pr_info_ratelimited("filter \"%s\" exists with another hash: %s (the rule: %s)\n",
				    name,
				    have.hash_scheme == KBLOOM_HASH_SIPHASH ? "siphash" : "jhash",
				    want->hash_scheme == KBLOOM_HASH_SIPHASH ? "siphash" : "jhash");
	else
		return 0;
	return -EEXIST;
}

static int bloom_mt_check1(const struct xt_mtchk_param *par)
{
	struct xt_bloom_mtinfo1 *info = par->matchinfo;
	struct kbloom_filter *filter;
	struct kbloom_shape shape = {
		.capacity = info->capacity,
		.fpr_ppb = info->fpr_ppb,
		.flags = info->create_flags,
		.hash_scheme = info->hash_scheme,
		.window_ms = info->window_ms,
		.generations = info->generations,
	};
	bool created;
	int ret;

	ret = bloom_mt_check_args(par, (void *)info,
				  XT_BLOOM_INVERT | XT_BLOOM_SHAPE);
	if (ret)
		return ret;
	if (info->reserved1 ||
	    (!(info->flags & XT_BLOOM_SHAPE) &&
	     memchr_inv(&shape, 0, sizeof(shape)))) {
		pr_info_ratelimited("filter \"%s\": shape fields without a shape, or reserved bytes\n",
				    info->name);
		return -EINVAL;
	}
	if (!(info->flags & XT_BLOOM_SHAPE)) {
		filter = bloom_mt_existing((void *)info);
		if (IS_ERR(filter))
			return PTR_ERR(filter);
		info->filter = filter;
		return 0;
	}
	/* Before anything is made, so that nothing is left behind. */
	if (info->mode == XT_BLOOM_REMOVE &&
	    !(shape.flags & KBLOOM_CREATE_COUNTING)) {
		pr_info_ratelimited("filter \"%s\": --remove needs a counting filter (--counting)\n",
				    info->name);
		return -EOPNOTSUPP;
	}
	filter = kbloom_get_shaped(info->name, &shape, &created);
	if (IS_ERR(filter)) {
		ret = PTR_ERR(filter);
		pr_info_ratelimited("filter \"%s\": cannot make it (error %d%s)\n",
				    info->name, ret,
				    ret == -EINVAL ? ": a bad shape" :
				    ret == -EPERM ? ": it takes CAP_SYS_ADMIN" : "");
		return ret;
	}
	ret = created ? 0 : bloom_shape_check(info->name, filter, &shape);
	if (ret) {
		kbloom_put(filter);
		return ret;
	}
	/*
	 * A filter made here cannot fail the mode's check (see above), and
	 * fails the pin only if it was destroyed meanwhile.
	 */
	ret = bloom_mt_hold((void *)info, filter);
	if (!ret)
		info->filter = filter;
	return ret;
}

static void bloom_mt_destroy(const struct xt_mtdtor_param *par)
{
	struct xt_bloom_mtinfo *info = par->matchinfo;

	kbloom_unpin(info->filter);
	kbloom_put(info->filter);
}

static void bloom_mt_destroy1(const struct xt_mtdtor_param *par)
{
	struct xt_bloom_mtinfo1 *info = par->matchinfo;

	kbloom_unpin(info->filter);
	kbloom_put(info->filter);
}

static struct xt_match bloom_mt_reg[] __read_mostly = {
	{
		.name		= "bloom",
		.revision	= 0,
		.family		= NFPROTO_IPV4,
		.match		= bloom_mt4,
		.checkentry	= bloom_mt_check,
		.destroy	= bloom_mt_destroy,
		.matchsize	= sizeof(struct xt_bloom_mtinfo),
		.usersize	= offsetof(struct xt_bloom_mtinfo, filter),
		.me		= THIS_MODULE,
	},
	{
		.name		= "bloom",
		.revision	= 1,
		.family		= NFPROTO_IPV4,
		.match		= bloom_mt4,
		.checkentry	= bloom_mt_check1,
		.destroy	= bloom_mt_destroy1,
		.matchsize	= sizeof(struct xt_bloom_mtinfo1),
		.usersize	= offsetof(struct xt_bloom_mtinfo1, filter),
		.me		= THIS_MODULE,
	},
#if IS_ENABLED(CONFIG_IPV6)
	{
		.name		= "bloom",
		.revision	= 0,
		.family		= NFPROTO_IPV6,
		.match		= bloom_mt6,
		.checkentry	= bloom_mt_check,
		.destroy	= bloom_mt_destroy,
		.matchsize	= sizeof(struct xt_bloom_mtinfo),
		.usersize	= offsetof(struct xt_bloom_mtinfo, filter),
		.me		= THIS_MODULE,
	},
	{
		.name		= "bloom",
		.revision	= 1,
		.family		= NFPROTO_IPV6,
		.match		= bloom_mt6,
		.checkentry	= bloom_mt_check1,
		.destroy	= bloom_mt_destroy1,
		.matchsize	= sizeof(struct xt_bloom_mtinfo1),
		.usersize	= offsetof(struct xt_bloom_mtinfo1, filter),
		.me		= THIS_MODULE,
	},
#endif
};

static int __init bloom_mt_init(void)
{
	BUILD_BUG_ON(XT_BLOOM_NAME_MAX != KBLOOM_NAME_MAX);
	return xt_register_matches(bloom_mt_reg, ARRAY_SIZE(bloom_mt_reg));
}

static void __exit bloom_mt_exit(void)
{
	xt_unregister_matches(bloom_mt_reg, ARRAY_SIZE(bloom_mt_reg));
}

module_init(bloom_mt_init);
module_exit(bloom_mt_exit);

MODULE_DESCRIPTION("Xtables: match packets against a kbloom Bloom filter");
MODULE_LICENSE("GPL");
MODULE_ALIAS("ipt_bloom");
MODULE_ALIAS("ip6t_bloom");
MODULE_IMPORT_NS(KBLOOM);
