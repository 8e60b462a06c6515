// SPDX-License-Identifier: GPL-2.0
/*
 * Flow keys from text, byte for byte what kmod/xt_bloom.c builds from a
 * packet: family, the --key bits, then saddr, daddr, proto, sport, dport
 * in that fixed order (whatever order --key lists them in), network byte
 * order, addresses masked to their prefix. The layout is documented with
 * KBLOOM_FLOW_* in <linux/kbloom.h>.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flowkey.h"
#include "keyparse.h"

#define FLOW_TEXT_MAX	256

static const struct {
	const char *name;
	uint8_t bit;
} flow_fields[FLOW_NFIELDS] = {
	{ "saddr", KBLOOM_FLOW_SADDR },
	{ "daddr", KBLOOM_FLOW_DADDR },
	{ "proto", KBLOOM_FLOW_PROTO },
	{ "sport", KBLOOM_FLOW_SPORT },
	{ "dport", KBLOOM_FLOW_DPORT },
};

/* The protocols people type by name; any other is given by number. */
static const struct {
	const char *name;
	uint8_t proto;
} flow_protos[] = {
	{ "icmp", 1 }, { "igmp", 2 }, { "tcp", 6 }, { "udp", 17 },
	{ "dccp", 33 }, { "gre", 47 }, { "esp", 50 }, { "ah", 51 },
	{ "icmpv6", 58 }, { "ipv6-icmp", 58 }, { "sctp", 132 },
	{ "udplite", 136 },
};

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

#define flow_err(err, ...)	snprintf(err, FLOW_ERR_MAX, __VA_ARGS__)

/* The user's text for a message (keyparse.c): no terminal control. */
static const char *flow_show(char buf[KEY_SHOW_MAX], const char *s)
{
	return key_show(buf, s, strlen(s));
}

void flow_spec_init(struct flow_spec *fs)
{
	memset(fs, 0, sizeof(*fs));
	fs->src_prefix = -1;
	fs->dst_prefix = -1;
}

/* --key FIELDS: a comma list of distinct field names, at least one. */
int flow_parse_fields(struct flow_spec *fs, const char *list, char *err)
{
	char show[KEY_SHOW_MAX], name[33];
	const char *p = list, *end;
	size_t len, i;

	if (fs->nfields) {
		flow_err(err, "--key given twice");
		return -1;
	}
	fs->fields = 0;
	fs->nfields = 0;
	do {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		for (i = 0; i < FLOW_NFIELDS; i++)
			if (strlen(flow_fields[i].name) == len &&
			    !strncmp(p, flow_fields[i].name, len))
				break;
		if (i == FLOW_NFIELDS) {
			snprintf(name, sizeof(name), "%.*s",
				 (int)(len > 32 ? 32 : len), p);
			flow_err(err, "--key: unknown field '%s' (fields: saddr, daddr, proto, sport, dport)",
				 flow_show(show, name));
			return -1;
		}
		if (fs->fields & flow_fields[i].bit) {
			flow_err(err, "--key: field '%s' twice",
				 flow_fields[i].name);
			return -1;
		}
		fs->fields |= flow_fields[i].bit;
		fs->order[fs->nfields++] = flow_fields[i].bit;
		if (end)
			p = end + 1;
	} while (end);
	return 0;
}

int flow_parse_family(struct flow_spec *fs, const char *s, char *err)
{
	char show[KEY_SHOW_MAX];

	if (!strcmp(s, "ipv4") || !strcmp(s, "inet") || !strcmp(s, "4"))
		fs->family = KBLOOM_FLOW_IPV4;
	else if (!strcmp(s, "ipv6") || !strcmp(s, "inet6") || !strcmp(s, "6"))
		fs->family = KBLOOM_FLOW_IPV6;
	else {
		flow_err(err, "--family: '%s' is not ipv4 or ipv6",
			 flow_show(show, s));
		return -1;
	}
	return 0;
}

/* A decimal number from 0 to @max, no sign, no blanks. */
static int flow_number(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (*s < '0' || *s > '9' || strlen(s) > 6)
		return -1;
	*out = strtoul(s, &end, 10);
	return *end || *out > max ? -1 : 0;
}

int flow_parse_prefix(int *prefix, const char *opt, const char *s, char *err)
{
	char show[KEY_SHOW_MAX];
	unsigned long v;

	if (flow_number(s, 128, &v)) {
		flow_err(err, "%s: '%s' is not a prefix length (0 to 32 for IPv4, 128 for IPv6)",
			 opt, flow_show(show, s));
		return -1;
	}
	*prefix = v;
	return 0;
}

/* The options together, as the extension checks them. */
int flow_spec_check(const struct flow_spec *fs, char *err)
{
	if (!fs->nfields) {
		flow_err(err, "flows need --key FIELDS");
		return -1;
	}
	if (fs->src_prefix >= 0 && !(fs->fields & KBLOOM_FLOW_SADDR)) {
		flow_err(err, "--src-prefix needs saddr in --key");
		return -1;
	}
	if (fs->dst_prefix >= 0 && !(fs->fields & KBLOOM_FLOW_DADDR)) {
		flow_err(err, "--dst-prefix needs daddr in --key");
		return -1;
	}
	if (fs->family == KBLOOM_FLOW_IPV4 &&
	    (fs->src_prefix > 32 || fs->dst_prefix > 32)) {
		flow_err(err, "a prefix of IPv4 addresses is 0 to 32");
		return -1;
	}
	return 0;
}

static bool flow_has_ports(unsigned int proto)
{
	return proto == 6 || proto == 17 || proto == 33 || proto == 132 ||
	       proto == 136;
}

static int flow_proto(const char *s, unsigned long *proto)
{
	size_t i;

	if (!flow_number(s, 255, proto))
		return 0;
	for (i = 0; i < ARRAY_LEN(flow_protos); i++) {
		if (!strcasecmp(s, flow_protos[i].name)) {
			*proto = flow_protos[i].proto;
			return 0;
		}
	}
	return -1;
}

/* Zero the bits of @addr (@len bytes) past the first @prefix. */
static void flow_mask(unsigned char *addr, size_t len, unsigned int prefix)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (prefix >= 8) {
			prefix -= 8;
			continue;
		}
		addr[i] &= (unsigned char)(0xff00U >> prefix);
		prefix = 0;
	}
}

struct flow_values {
	int family;		/* of the addresses; 0 if none */
	unsigned char addr[2][16];
	unsigned long proto, port[2];
	bool have_proto;
};

/* One value of a flow, the field @bit's, into @v. */
static int flow_value(struct flow_values *v, uint8_t bit, const char *s,
		      char *err)
{
	char show[KEY_SHOW_MAX];
	int i = 0, family;

	switch (bit) {
	case KBLOOM_FLOW_DADDR:
		i = 1;
		/* fall through */
	case KBLOOM_FLOW_SADDR:
		if (inet_pton(AF_INET, s, v->addr[i]) == 1) {
			family = KBLOOM_FLOW_IPV4;
		} else if (inet_pton(AF_INET6, s, v->addr[i]) == 1) {
			family = KBLOOM_FLOW_IPV6;
		} else {
			flow_err(err, "'%s' is not an IPv4 or IPv6 address (no zone)",
				 flow_show(show, s));
			return -1;
		}
		if (v->family && v->family != family) {
			flow_err(err, "'%s': IPv4 and IPv6 addresses in one flow",
				 flow_show(show, s));
			return -1;
		}
		v->family = family;
		return 0;
	case KBLOOM_FLOW_PROTO:
		if (flow_proto(s, &v->proto)) {
			flow_err(err, "'%s' is not a protocol (0 to 255, or tcp, udp, udplite, sctp, dccp, icmp, icmpv6...)",
				 flow_show(show, s));
			return -1;
		}
		v->have_proto = true;
		return 0;
	case KBLOOM_FLOW_DPORT:
		i = 1;
		/* fall through */
	default:
		if (flow_number(s, 65535, &v->port[i])) {
			flow_err(err, "'%s' is not a port (0 to 65535)",
				 flow_show(show, s));
			return -1;
		}
		return 0;
	}
}

/**
 * flow_key() - the key of one flow as typed
 * @fs: --key and the other flow options (flow_spec_check() passed).
 * @s: the values of the --key fields in their --key order, separated by
 *	commas: "10.0.0.1,53" for --key saddr,dport.
 * @len: the length of @s.
 * @out: the key, at most KBLOOM_FLOW_KEY_MAX bytes.
 * @err: FLOW_ERR_MAX bytes: what is wrong, on error.
 *
 * Return: the key's length, or -1.
 */
int flow_key(const struct flow_spec *fs, const char *s, size_t len,
	     unsigned char out[KBLOOM_FLOW_KEY_MAX], char *err)
{
	char text[FLOW_TEXT_MAX], *p, *comma;
	struct flow_values v;
	unsigned int full, alen;
	unsigned char *o = out;
	int i;

	if (len >= sizeof(text)) {
		flow_err(err, "a flow of %zu characters is too long", len);
		return -1;
	}
	/* Parsed as a string: a NUL would cut it short, unseen. */
	if (memchr(s, '\0', len)) {
		flow_err(err, "a flow has a NUL byte");
		return -1;
	}
	memcpy(text, s, len);
	text[len] = '\0';
	memset(&v, 0, sizeof(v));
	p = text;
	for (i = 0; i < fs->nfields; i++) {
		comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if ((!comma) != (i == fs->nfields - 1)) {
			flow_err(err, "a flow has %d comma-separated value%s, in the order of --key",
				 fs->nfields, fs->nfields > 1 ? "s" : "");
			return -1;
		}
		if (flow_value(&v, fs->order[i], p, err))
			return -1;
		if (comma)
			p = comma + 1;
	}
	if (!v.family)
		v.family = fs->family ? fs->family : KBLOOM_FLOW_IPV4;
	if (fs->family && fs->family != v.family) {
		flow_err(err, "an IPv%d flow, but --family ipv%d", v.family,
			 fs->family);
		return -1;
	}
	full = v.family == KBLOOM_FLOW_IPV4 ? 32 : 128;
	alen = full / 8;
	if (fs->src_prefix > (int)full || fs->dst_prefix > (int)full) {
		flow_err(err, "a prefix of IPv%d addresses is 0 to %u",
			 v.family, full);
		return -1;
	}
	if (v.have_proto && !flow_has_ports(v.proto) &&
	    (v.port[0] || v.port[1])) {
		flow_err(err, "protocol %lu has no ports: the match keys its packets with port 0",
			 v.proto);
		return -1;
	}
	*o++ = v.family;
	*o++ = fs->fields;
	if (fs->fields & KBLOOM_FLOW_SADDR) {
		flow_mask(v.addr[0], alen,
			  fs->src_prefix < 0 ? full : (unsigned int)fs->src_prefix);
		memcpy(o, v.addr[0], alen);
		o += alen;
	}
	if (fs->fields & KBLOOM_FLOW_DADDR) {
		flow_mask(v.addr[1], alen,
			  fs->dst_prefix < 0 ? full : (unsigned int)fs->dst_prefix);
		memcpy(o, v.addr[1], alen);
		o += alen;
	}
	if (fs->fields & KBLOOM_FLOW_PROTO)
		*o++ = v.proto;
	for (i = 0; i < 2; i++) {
		if (fs->fields & (i ? KBLOOM_FLOW_DPORT : KBLOOM_FLOW_SPORT)) {
			*o++ = v.port[i] >> 8;
			*o++ = v.port[i] & 0xff;
		}
	}
	return o - out;
}
