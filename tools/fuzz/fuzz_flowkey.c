// SPDX-License-Identifier: GPL-2.0
/*
 * Harness (d): bloomctl's flow keys (tools/bloomctl/flowkey.c): the text
 * of a flow ("10.0.0.1,53" for --key saddr,dport) into the KBLOOM_FLOW_*
 * layout of <linux/kbloom.h>, which must be what kmod/xt_bloom.c builds
 * from a packet of that flow.
 *
 * Input: four bytes of options, then the flow's text.
 *   byte 0: bits 0-1 --family (0 none, 1 ipv4, 2 ipv6, 3 none); bits 2-4
 *           the number of --key fields less one (mod 5); bit 5: --key is
 *           given as the rest of the input up to the first '\n' (which is
 *           then the flow), not built from byte 1.
 *   byte 1: which permutation of the five fields --key lists (mod 120).
 *   byte 2: --src-prefix: 0-128, or none for 129-255; likewise byte 3,
 *           --dst-prefix.
 * The options go through the parsers bloomctl uses (flow_parse_fields(),
 * flow_parse_prefix(), flow_spec_check()). An accepted flow is checked
 * against the layout: 2 + the fields' sizes for its family, family byte,
 * fields byte, the fields in their fixed order, and against a reference
 * parse of the values (inet_pton(), ports big-endian, addresses masked
 * as ipv6_addr_prefix() and bloom_mask4() mask them), and byte for byte
 * against a transcription of bloom_key4()/bloom_key6() run on a packet of
 * that flow.
 */
#include <arpa/inet.h>
#include <stdbool.h>

#include "flowkey.h"
#include "fuzz.h"

static const char *const names[FLOW_NFIELDS] = {
	"saddr", "daddr", "proto", "sport", "dport",
};

/* The bit of field name @i, as the uapi numbers them. */
static uint8_t bit_of(int i)
{
	return 1U << i;
}

/* Permutation number @perm (0-119) of the five field indices. */
static void permutation(unsigned int perm, int out[FLOW_NFIELDS])
{
	int pool[FLOW_NFIELDS] = { 0, 1, 2, 3, 4 }, n = FLOW_NFIELDS, i, j;

	for (i = 0; i < FLOW_NFIELDS; i++) {
		j = perm % n;
		perm /= n;
		out[i] = pool[j];
		memmove(pool + j, pool + j + 1, (n - j - 1) * sizeof(pool[0]));
		n--;
	}
}

/* Bits of @addr (@len bytes) past @prefix are zero. */
static bool masked(const unsigned char *addr, size_t len, unsigned int prefix)
{
	unsigned int bit;

	for (bit = prefix; bit < len * 8; bit++)
		if (addr[bit / 8] & (0x80 >> (bit % 8)))
			return false;
	return true;
}

/* The reference: value @idx (of @n) of the comma-separated @s, or NULL. */
static const char *nth_value(const char *s, int idx, char *buf, size_t cap)
{
	const char *p = s, *comma;
	size_t len;
	int i;

	for (i = 0; i < idx; i++) {
		p = strchr(p, ',');
		if (!p)
			return NULL;
		p++;
	}
	comma = strchr(p, ',');
	len = comma ? (size_t)(comma - p) : strlen(p);
	if (len >= cap)
		return NULL;
	memcpy(buf, p, len);
	buf[len] = '\0';
	return buf;
}

/* A packet's fields, as the bloom match reads them. */
struct pkt {
	int family;
	unsigned char saddr[16], daddr[16];
	uint8_t proto;
	uint16_t sport, dport;	/* host order */
};

static const struct {
	const char *name;
	uint8_t proto;
} ref_protos[] = {
	{ "icmp", 1 }, { "igmp", 2 }, { "tcp", 6 }, { "udp", 17 },
	{ "dccp", 33 }, { "gre", 47 }, { "esp", 50 }, { "ah", 51 },
	{ "icmpv6", 58 }, { "ipv6-icmp", 58 }, { "sctp", 132 },
	{ "udplite", 136 },
};

static bool ref_has_ports(uint8_t proto)
{
	return proto == 6 || proto == 17 || proto == 136 || proto == 132 ||
	       proto == 33;
}

/* bloom_mask4() of kmod/xt_bloom.c. */
static uint32_t kmask4(uint8_t prefix)
{
	return prefix ? htonl(~0U << (32 - prefix)) : 0;
}

/* ipv6_addr_prefix() of <net/ipv6.h>. */
static void kprefix6(unsigned char *pfx, const unsigned char *addr, int plen)
{
	int o = plen >> 3, b = plen & 0x7;

	memset(pfx, 0, 16);
	memcpy(pfx, addr, o);
	if (b != 0)
		pfx[o] = addr[o] & (0xff00 >> b);
}

/*
 * bloom_key4()/bloom_key6() of kmod/xt_bloom.c, transcribed, on a first
 * (or only) fragment: the rule's prefixes are the full length unless
 * given, as libxt_bloom sets them.
 */
static int kernel_key(const struct flow_spec *fs, const struct pkt *k,
		      unsigned char *key)
{
	unsigned int full = k->family == KBLOOM_FLOW_IPV4 ? 32 : 128;
	uint8_t sp = fs->src_prefix < 0 ? full : fs->src_prefix;
	uint8_t dp = fs->dst_prefix < 0 ? full : fs->dst_prefix;
	uint8_t fields = fs->fields;
	unsigned char *p = key, a6[16];
	uint16_t ports[2] = { 0, 0 };
	uint32_t a4;

	*p++ = k->family;
	*p++ = fields;
	if (k->family == KBLOOM_FLOW_IPV4) {
		if (fields & KBLOOM_FLOW_SADDR) {
			memcpy(&a4, k->saddr, 4);
			a4 &= kmask4(sp);
			memcpy(p, &a4, 4);
			p += 4;
		}
		if (fields & KBLOOM_FLOW_DADDR) {
			memcpy(&a4, k->daddr, 4);
			a4 &= kmask4(dp);
			memcpy(p, &a4, 4);
			p += 4;
		}
	} else {
		if (fields & KBLOOM_FLOW_SADDR) {
			kprefix6(a6, k->saddr, sp);
			memcpy(p, a6, 16);
			p += 16;
		}
		if (fields & KBLOOM_FLOW_DADDR) {
			kprefix6(a6, k->daddr, dp);
			memcpy(p, a6, 16);
			p += 16;
		}
	}
	if (fields & KBLOOM_FLOW_PROTO)
		*p++ = k->proto;
	if (ref_has_ports(k->proto)) {
		ports[0] = htons(k->sport);
		ports[1] = htons(k->dport);
	}
	if (fields & KBLOOM_FLOW_SPORT) {
		memcpy(p, &ports[0], 2);
		p += 2;
	}
	if (fields & KBLOOM_FLOW_DPORT) {
		memcpy(p, &ports[1], 2);
		p += 2;
	}
	return p - key;
}

/* An accepted flow against the layout and a reference parse of @text. */
static void check_key(const struct flow_spec *fs, const char *text,
		      const unsigned char *key, int len)
{
	unsigned int want = 2, alen, full, i, prefix;
	const unsigned char *p = key + 2;
	unsigned char ref[16];
	char buf[FLOW_ERR_MAX];
	const char *val;
	unsigned long port;
	int idx[FLOW_NFIELDS], k;
	unsigned char kkey[KBLOOM_FLOW_KEY_MAX];
	struct pkt pkt;
	size_t j;

	memset(&pkt, 0, sizeof(pkt));
	/* Unless the key has a protocol, the packet's is one with ports. */
	pkt.proto = 6;

	CHECK(key[0] == KBLOOM_FLOW_IPV4 || key[0] == KBLOOM_FLOW_IPV6);
	CHECK(key[1] == fs->fields);
	if (fs->family)
		CHECK(key[0] == fs->family);
	alen = key[0] == KBLOOM_FLOW_IPV4 ? 4 : 16;
	full = alen * 8;
	pkt.family = key[0];
	/* Addresses, then a byte of protocol, then two of each port. */
	for (i = 0; i < FLOW_NFIELDS; i++)
		if (fs->fields & bit_of(i))
			want += i < 2 ? alen : i == 2 ? 1 : 2;
	CHECK(len >= 0 && (unsigned int)len == want);
	CHECK(want <= KBLOOM_FLOW_KEY_MAX);

	/* Where each field's value is in the text: the --key order. */
	for (i = 0; i < FLOW_NFIELDS; i++)
		idx[i] = -1;
	for (k = 0; k < fs->nfields; k++)
		for (i = 0; i < FLOW_NFIELDS; i++)
			if (fs->order[k] == bit_of(i))
				idx[i] = k;
	/* The exact number of values: no more commas than fields. */
	CHECK(nth_value(text, fs->nfields - 1, buf, sizeof(buf)));
	CHECK(!nth_value(text, fs->nfields, buf, sizeof(buf)));

	/* saddr, daddr, proto, sport, dport: the fixed order. */
	for (i = 0; i < FLOW_NFIELDS; i++) {
		if (!(fs->fields & bit_of(i)))
			continue;
		CHECK(idx[i] >= 0);
		val = nth_value(text, idx[i], buf, sizeof(buf));
		CHECK(val);
		switch (i) {
		case 0:
		case 1:
			prefix = i ? fs->dst_prefix : fs->src_prefix;
			if ((int)prefix < 0)
				prefix = full;
			CHECK(prefix <= full);
			CHECK(inet_pton(alen == 4 ? AF_INET : AF_INET6, val,
					ref) == 1);
			memcpy(i ? pkt.daddr : pkt.saddr, ref, alen);
			CHECK(masked(p, alen, prefix));
			/* The first @prefix bits are the address's. */
			for (k = 0; k < (int)prefix; k++)
				CHECK(!((p[k / 8] ^ ref[k / 8]) &
					(0x80 >> (k % 8))));
			p += alen;
			break;
		case 2:
			/* A number, or a name: only the number is checked. */
			if (val[0] >= '0' && val[0] <= '9') {
				CHECK(*p == strtoul(val, NULL, 10));
				pkt.proto = strtoul(val, NULL, 10);
			} else {
				for (j = 0; j < sizeof(ref_protos) /
					    sizeof(ref_protos[0]); j++)
					if (!strcasecmp(val, ref_protos[j].name))
						break;
				CHECK(j < sizeof(ref_protos) / sizeof(ref_protos[0]));
				pkt.proto = ref_protos[j].proto;
				CHECK(*p == pkt.proto);
			}
			p++;
			break;
		default:
			CHECK(val[0] >= '0' && val[0] <= '9');
			port = strtoul(val, NULL, 10);
			CHECK(port <= 65535);
			CHECK(p[0] == port >> 8 && p[1] == (port & 0xff));
			if (i == 3)
				pkt.sport = port;
			else
				pkt.dport = port;
			p += 2;
			break;
		}
	}
	CHECK(p == key + len);
	/* What the bloom match builds from that packet, byte for byte. */
	CHECK(kernel_key(fs, &pkt, kkey) == len);
	CHECK(!memcmp(kkey, key, len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char key[KBLOOM_FLOW_KEY_MAX + 8], again[KBLOOM_FLOW_KEY_MAX];
	char err[FLOW_ERR_MAX], list[64], num[8], *text, *copy, *keys = NULL;
	static const int families[4] = {
		0, KBLOOM_FLOW_IPV4, KBLOOM_FLOW_IPV6, 0,
	};
	const uint8_t *nl;
	struct flow_spec fs;
	int perm[FLOW_NFIELDS], n, i, ret;
	size_t len;

	if (size < 4)
		return 0;
	flow_spec_init(&fs);
	if (families[data[0] & 3] == KBLOOM_FLOW_IPV4)
		CHECK(!flow_parse_family(&fs, "ipv4", err));
	else if (families[data[0] & 3] == KBLOOM_FLOW_IPV6)
		CHECK(!flow_parse_family(&fs, "inet6", err));
	for (i = 0; i < 2; i++) {
		if (data[2 + i] > 128)
			continue;
		snprintf(num, sizeof(num), "%u", data[2 + i]);
		CHECK(!flow_parse_prefix(i ? &fs.dst_prefix : &fs.src_prefix,
					 i ? "--dst-prefix" : "--src-prefix",
					 num, err));
	}
	data += 4;
	size -= 4;
	if (data[-4] & 0x20) {
		/* --key as typed: any bytes up to the first '\n'. */
		nl = memchr(data, '\n', size);
		len = nl ? (size_t)(nl - data) : size;
		keys = malloc(len + 1);
		CHECK(keys);
		memcpy(keys, data, len);
		keys[len] = '\0';
		ret = flow_parse_fields(&fs, keys, err);
		free(keys);
		if (ret) {
			CHECK(memchr(err, '\0', FLOW_ERR_MAX));
			return 0;
		}
		CHECK(fs.nfields >= 1 && fs.nfields <= FLOW_NFIELDS);
		CHECK(fs.fields && !(fs.fields & ~KBLOOM_FLOW_FIELDS));
		if (!nl)
			return 0;
		data = nl + 1;
		size -= len + 1;
	} else {
		n = 1 + ((data[-4] >> 2) & 7) % FLOW_NFIELDS;
		permutation(data[-3] % 120, perm);
		list[0] = '\0';
		for (i = 0; i < n; i++) {
			if (i)
				strcat(list, ",");
			strcat(list, names[perm[i]]);
		}
		CHECK(!flow_parse_fields(&fs, list, err));
		CHECK(fs.nfields == n);
		for (i = 0; i < n; i++)
			CHECK(fs.order[i] == bit_of(perm[i]));
	}
	if (flow_spec_check(&fs, err)) {
		CHECK(memchr(err, '\0', FLOW_ERR_MAX));
		return 0;
	}

	/* Exactly @size bytes, so that ASan sees any read past them. */
	text = malloc(size ? size : 1);
	CHECK(text);
	memcpy(text, data, size);
	memset(key, 0xa5, sizeof(key));
	ret = flow_key(&fs, text, size, key, err);
	for (i = KBLOOM_FLOW_KEY_MAX; i < (int)sizeof(key); i++)
		CHECK(key[i] == 0xa5);
	if (ret < 0) {
		CHECK(ret == -1);
		CHECK(memchr(err, '\0', FLOW_ERR_MAX));
		free(text);
		return 0;
	}
	/* A NUL would cut the flow short unseen: flow_key() refuses it. */
	CHECK(!memchr(text, '\0', size));
	/* The reference reads what flow_key() read: up to a NUL. */
	copy = malloc(size + 1);
	CHECK(copy);
	memcpy(copy, data, size);
	copy[size] = '\0';
	check_key(&fs, copy, key, ret);
	free(copy);
	/* The same text gives the same key. */
	CHECK(flow_key(&fs, text, size, again, err) == ret);
	CHECK(!memcmp(again, key, ret));
	free(text);
	return 0;
}
