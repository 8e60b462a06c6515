// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_xdp_pkt: frames from text descriptions, for the XDP example's
 * tests (kbloom_xdp_test test-run, kfunc) and its benchmark
 * (tools/bench/kbloom_xdp_bench): kbloom_xdp_pkt.h.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kbloom_xdp_load.h"
#include "kbloom_xdp_pkt.h"

#define ETH_ZLEN_	60	/* a frame's minimum, without FCS */

static const struct {
	const char *name;
	uint8_t proto;
} protos[] = {
	{ "icmp", 1 }, { "igmp", 2 }, { "tcp", 6 }, { "udp", 17 },
	{ "dccp", 33 }, { "gre", 47 }, { "esp", 50 }, { "ah", 51 },
	{ "icmpv6", 58 }, { "sctp", 132 }, { "udplite", 136 },
};

static bool has_ports(uint8_t p)
{
	return p == 6 || p == 17 || p == 33 || p == 132 || p == 136;
}

struct endpoint {
	int family;
	unsigned char addr[16];
	uint16_t port;
};

/* "10.0.0.1", "10.0.0.1:53", "2001:db8::1", "[2001:db8::1]:53". */
static int parse_endpoint(const char *s, struct endpoint *e, char *err,
			  size_t errlen)
{
	char buf[INET6_ADDRSTRLEN + 16], *colon, *port = NULL;
	uint64_t v;

	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	e->port = 0;
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');

		if (!close || (close[1] && close[1] != ':'))
			goto bad;
		*close = '\0';
		if (close[1])
			port = close + 2;
		memmove(buf, buf + 1, strlen(buf + 1) + 1);
	} else {
		colon = strchr(buf, ':');
		/* One colon: IPv4 and a port; more: an IPv6 address. */
		if (colon && !strchr(colon + 1, ':')) {
			*colon = '\0';
			port = colon + 1;
		}
	}
	e->family = parse_addr(buf, e->addr);
	if (!e->family)
		goto bad;
	if (port) {
		if (parse_u64(port, 0, 65535, &v))
			goto bad;
		e->port = (uint16_t)v;
	}
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not ADDR, ADDR:PORT or [ADDR6]:PORT",
		 s);
	return -1;
}

int parse_hex(const char *s, unsigned char *buf, size_t max, size_t *len)
{
	size_t n = strlen(s), i;

	if (!n || n % 2 || n / 2 > max)
		return -1;
	for (i = 0; i < n; i += 2) {
		if (!isxdigit((unsigned char)s[i]) ||
		    !isxdigit((unsigned char)s[i + 1]))
			return -1;
		buf[i / 2] = (unsigned char)strtoul(
			(char[]){ s[i], s[i + 1], 0 }, NULL, 16);
	}
	*len = n / 2;
	return 0;
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static uint16_t ip_csum(const unsigned char *p, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (p[i] << 8) | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/* The transport header, or 8 bytes of data for a later fragment. */
static size_t put_l4(unsigned char *p, uint8_t proto, bool later_frag,
		     const struct endpoint *src, const struct endpoint *dst,
		     bool v6)
{
	size_t len;

	if (later_frag) {
		/*
		 * Not a header: were the ports read from it, they would
		 * show as eeee in the key.
		 */
		memset(p, 0xee, 8);
		return 8;
	}
	switch (proto) {
	case 6:		/* TCP: a SYN */
		len = 20;
		memset(p, 0, len);
		p[7] = 1;
		p[12] = 5 << 4;
		p[13] = 0x02;
		put16(p + 14, 65535);
		break;
	case 17:	/* UDP, UDP-Lite: 8 bytes, length covers the header */
	case 136:
		len = 8;
		memset(p, 0, len);
		put16(p + 4, 8);
		break;
	case 33:	/* DCCP: a 16-byte generic header */
	case 132:	/* SCTP: the 12-byte common header, and 4 */
		len = 16;
		memset(p, 0, len);
		break;
	case 1:		/* ICMP, ICMPv6: an echo request */
	case 58:
		len = 8;
		memset(p, 0, len);
		p[0] = v6 ? 128 : 8;
		put16(p + 4, 0x4b42);
		put16(p + 6, 1);
		break;
	default:
		len = 8;
		memset(p, 0xa5, len);
		break;
	}
	if (has_ports(proto)) {
		put16(p, src->port);
		put16(p + 2, dst->port);
	}
	return len;
}

/* IPv6 extension headers by name: hop, dst, rt, ah, frag. */
static int ext_proto(const char *name)
{
	static const struct {
		const char *name;
		int proto;
	} exts[] = {
		{ "hop", 0 }, { "rt", 43 }, { "frag", 44 }, { "ah", 51 },
		{ "dst", 60 },
	};
	size_t i;

	for (i = 0; i < ARRAY_LEN(exts); i++)
		if (!strcmp(name, exts[i].name))
			return exts[i].proto;
	return -1;
}

#define MAX_EXT		12

/* What is wrong with the description, into @err: -1. */
static int __attribute__((format(printf, 3, 4)))
bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * A frame from its description (kbloom_xdp_test help has the grammar):
 *   PROTO SRC > DST [frag=OFF] [mf] [vlan=ID]... [opts=N] [ext=LIST]
 *     [iplen=N] [trunc=N]
 *   arp [vlan=ID]...
 *   raw HEX
 */
int pkt_build(const char *spec, struct pkt *pkt, char *err, size_t errlen)
{
	char buf[512], *tok[32], *save, *t;
	unsigned char *p = pkt->buf, *l3;
	int ntok = 0, i, nvlan = 0, nr_ext = 0, ext[MAX_EXT];
	uint16_t vlans[2];
	struct endpoint src, dst;
	uint64_t v, frag = 0, opts = 0, trunc = 0, iplen = 0;
	bool mf = false, have_frag = false, have_iplen = false;
	bool have_trunc = false, frag_in_ext = false;
	int proto = -1;
	size_t len, l4len;

	if (strlen(spec) >= sizeof(buf))
		return bad(err, errlen, "packet description too long");
	strcpy(buf, spec);
	for (t = strtok_r(buf, " \t", &save); t && ntok < (int)ARRAY_LEN(tok);
	     t = strtok_r(NULL, " \t", &save))
		tok[ntok++] = t;
	if (!ntok)
		return bad(err, errlen, "empty packet description");
	memset(pkt->buf, 0, sizeof(pkt->buf));

	if (!strcmp(tok[0], "raw")) {
		if (ntok != 2 || parse_hex(tok[1], pkt->buf, PKT_MAX, &len) ||
		    len < 14)
			return bad(err, errlen, "raw: HEX of 14 to %d bytes",
				   PKT_MAX);
		pkt->len = len;
		return 0;
	}

	i = 1;
	if (strcmp(tok[0], "arp")) {
		size_t k;

		for (k = 0; k < ARRAY_LEN(protos); k++)
			if (!strcmp(tok[0], protos[k].name))
				proto = protos[k].proto;
		if (proto < 0 && !strncmp(tok[0], "proto=", 6) &&
		    !parse_u64(tok[0] + 6, 0, 255, &v))
			proto = (int)v;
		else if (proto < 0)
			return bad(err, errlen, "'%s' is not a protocol (tcp, udp, udplite, sctp, dccp, icmp, icmpv6, gre, esp, ah, igmp, proto=N), arp or raw",
				   tok[0]);
		if (ntok < 4 || strcmp(tok[2], ">"))
			return bad(err, errlen, "expected '%s SRC > DST'",
				   tok[0]);
		if (parse_endpoint(tok[1], &src, err, errlen) ||
		    parse_endpoint(tok[3], &dst, err, errlen))
			return -1;
		if (src.family != dst.family)
			return bad(err, errlen, "IPv4 and IPv6 addresses in one packet");
		if ((src.port || dst.port) && !has_ports(proto))
			return bad(err, errlen, "protocol %d has no ports",
				   proto);
		i = 4;
	}
	for (; i < ntok; i++) {
		t = tok[i];
		if (!strcmp(t, "mf")) {
			mf = true;
		} else if (!strncmp(t, "frag=", 5) &&
			   !parse_u64(t + 5, 0, 65528, &v) && !(v % 8)) {
			frag = v;
			have_frag = true;
		} else if (!strncmp(t, "vlan=", 5) &&
			   !parse_u64(t + 5, 0, 4095, &v) && nvlan < 2) {
			vlans[nvlan++] = (uint16_t)v;
		} else if (!strncmp(t, "opts=", 5) &&
			   !parse_u64(t + 5, 0, 40, &v) && !(v % 4)) {
			opts = v;
		} else if (!strncmp(t, "iplen=", 6) &&
			   !parse_u64(t + 6, 0, 65535, &v)) {
			iplen = v;
			have_iplen = true;
		} else if (!strncmp(t, "trunc=", 6) &&
			   !parse_u64(t + 6, 14, PKT_MAX, &v)) {
			trunc = v;
			have_trunc = true;
		} else if (!strncmp(t, "ext=", 4)) {
			char *e, *s2;

			for (e = strtok_r(t + 4, ",", &s2); e;
			     e = strtok_r(NULL, ",", &s2)) {
				if (nr_ext == MAX_EXT || ext_proto(e) < 0)
					return bad(err, errlen, "ext=: a list of at most %d of hop, dst, rt, ah, frag",
						   MAX_EXT);
				ext[nr_ext++] = ext_proto(e);
				frag_in_ext |= ext[nr_ext - 1] == 44;
			}
		} else {
			return bad(err, errlen, "'%s': not an option (frag=BYTES (a multiple of 8), mf, vlan=ID (two at most), opts=BYTES (IPv4 options, a multiple of 4), ext=LIST (IPv6), iplen=N, trunc=N)",
				   t);
		}
	}
	if (proto < 0 && (have_frag || mf || opts || nr_ext || have_iplen))
		return bad(err, errlen, "arp takes vlan= and trunc= only");
	if (proto >= 0 && src.family == 4 && nr_ext)
		return bad(err, errlen, "ext= is for IPv6");
	if (proto >= 0 && src.family == 6 && opts)
		return bad(err, errlen, "opts= is for IPv4");
	/* A fragment header goes last, unless ext= placed it. */
	if (proto >= 0 && src.family == 6 && (have_frag || mf) &&
	    !frag_in_ext) {
		if (nr_ext == MAX_EXT)
			return bad(err, errlen, "too many extension headers");
		ext[nr_ext++] = 44;
	}

	/* Ethernet: 02:00:00:00:00:02 < 02:00:00:00:00:01 */
	p[0] = 2;
	p[5] = 2;
	p[6] = 2;
	p[11] = 1;
	len = 12;
	for (i = 0; i < nvlan; i++) {
		/* The outer tag of two is 802.1ad, as QinQ has it. */
		put16(p + len, nvlan == 2 && !i ? 0x88a8 : 0x8100);
		put16(p + len + 2, vlans[i]);
		len += 4;
	}
	if (proto < 0) {
		static const unsigned char arp[28] = {
			0, 1, 8, 0, 6, 4, 0, 1,
			2, 0, 0, 0, 0, 1, 10, 0, 0, 1,
			0, 0, 0, 0, 0, 0, 10, 0, 0, 2,
		};

		put16(p + len, 0x0806);
		len += 2;
		memcpy(p + len, arp, sizeof(arp));
		len += sizeof(arp);
		goto done;
	}
	put16(p + len, src.family == 4 ? 0x0800 : 0x86dd);
	len += 2;
	l3 = p + len;
	if (src.family == 4) {
		size_t hlen = 20 + opts;

		l3[0] = 0x40 | (hlen / 4);
		put16(l3 + 4, 0x4b42);
		put16(l3 + 6, (mf ? 0x2000 : 0) | (frag / 8));
		l3[8] = 64;
		l3[9] = proto;
		memcpy(l3 + 12, src.addr, 4);
		memcpy(l3 + 16, dst.addr, 4);
		memset(l3 + 20, 1, opts);	/* NOP options */
		l4len = put_l4(l3 + hlen, proto, frag > 0, &src, &dst, false);
		put16(l3 + 2, have_iplen ? iplen : hlen + l4len);
		put16(l3 + 10, ip_csum(l3, hlen));
		len += hlen + l4len;
	} else {
		unsigned char *h = l3 + 40, *nh = l3 + 6;
		bool later = false;

		l3[0] = 0x60;
		l3[7] = 64;
		memcpy(l3 + 8, src.addr, 16);
		memcpy(l3 + 24, dst.addr, 16);
		/*
		 * Each header's next-header field is written when the next
		 * one is known.
		 */
		for (i = 0; i < nr_ext && !later; i++) {
			*nh = ext[i];
			nh = h;
			memset(h, 0, 8);
			switch (ext[i]) {
			case 44:
				put16(h + 2, frag | mf);
				put16(h + 6, 0x4b42);
				later = frag > 0;
				h += 8;
				break;
			case 51:	/* AH: (2 + 2) * 4 = 16 bytes */
				h[1] = 2;
				memset(h + 8, 0, 8);
				h += 16;
				break;
			default:	/* hop, dst, rt: (0 + 1) * 8 bytes */
				if (ext[i] != 43) {
					h[2] = 1;	/* PadN, 4 bytes */
					h[3] = 4;
				}
				h += 8;
				break;
			}
		}
		/*
		 * After a later fragment's header: the next header as
		 * listed (maybe another extension), then data.
		 */
		*nh = i < nr_ext ? ext[i] : proto;
		l4len = put_l4(h, proto, later, &src, &dst, true);
		h += l4len;
		put16(l3 + 4, have_iplen ? iplen : (uint64_t)(h - l3) - 40);
		len = h - p;
	}
done:
	if (len < ETH_ZLEN_)
		len = ETH_ZLEN_;	/* padding, as on the wire */
	if (have_trunc && trunc < len)
		len = trunc;
	pkt->len = len;
	return 0;
}
