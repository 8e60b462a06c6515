/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bloomsync's messages (Documentation/bloomsync.md, "Messages"): a
 * header, then either blocks (a delta) or a piece of a filter image (a
 * snapshot chunk). Little-endian, whatever the host.
 */
#ifndef BLOOMSYNC_WIRE_H
#define BLOOMSYNC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "bloomsync.h"

#define WIRE_MAGIC		"\x89KBSYNC\n"
#define WIRE_MAGIC_LEN		8
#define WIRE_VERSION		1
#define WIRE_DELTA		1
#define WIRE_SNAPSHOT		2
#define WIRE_FIXED		64	/* header before the host name */
#define WIRE_HOST_MAX		255
#define WIRE_REC		(16 + KBLOOM_BLOCK_BYTES)
/* Header flags: a delta's records deflated with zlib. */
#define WIRE_F_ZLIB		1U
/* Most record bytes one delta may carry, uncompressed. */
#define WIRE_DELTA_MAX		(8U << 20)

struct wire_hdr {
	uint32_t version;
	uint32_t kind;		/* WIRE_DELTA or WIRE_SNAPSHOT */
	uint64_t seq;		/* the host's sequence number of this message */
	uint64_t fingerprint;	/* COLLECT's: the filter's shape and seed */
	int64_t newest_epoch;	/* epoch of generation 0 when taken; 0 plain */
	uint32_t count;		/* delta: records; snapshot: chunk index */
	uint32_t chunks;	/* snapshot: chunks in all; delta: 0 */
	uint64_t first_seq;	/* snapshot: seq of chunk 0; delta: seq */
	uint32_t flags;		/* WIRE_F_ZLIB */
	char host[WIRE_HOST_MAX + 1];
};

size_t wire_header_len(const struct wire_hdr *h);
size_t wire_encode_header(unsigned char *buf, const struct wire_hdr *h);
void wire_encode_rec(unsigned char *buf, const struct rec *r);
int wire_decode(const unsigned char *buf, size_t len, struct wire_hdr *h,
		const unsigned char **body, size_t *body_len, char *err,
		size_t errlen);
void wire_decode_rec(const unsigned char *buf, struct rec *r);
const unsigned char *wire_delta_records(const struct wire_hdr *h,
					const unsigned char *body,
					size_t body_len, unsigned char **buf,
					char *err, size_t errlen);

#endif /* BLOOMSYNC_WIRE_H */
