/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Frames from text descriptions (kbloom_xdp_pkt.c), for the XDP example's
 * tests and benchmark: headers and a little payload.
 */
#ifndef KBLOOM_XDP_PKT_H
#define KBLOOM_XDP_PKT_H

#include <stddef.h>

#define PKT_MAX		512

struct pkt {
	unsigned char buf[PKT_MAX];
	size_t len;
};

/*
 * @spec into @pkt: 0, or -1 with why in @err:
 *   PROTO SRC > DST [frag=OFF] [mf] [vlan=ID]... [opts=N] [ext=LIST]
 *     [iplen=N] [trunc=N]
 *   arp [vlan=ID]...
 *   raw HEX
 */
int pkt_build(const char *spec, struct pkt *pkt, char *err, size_t errlen);
/* @s, pairs of hex digits, into 1 to @max bytes at @buf: 0, or -1. */
int parse_hex(const char *s, unsigned char *buf, size_t max, size_t *len);

#endif /* KBLOOM_XDP_PKT_H */
