// SPDX-License-Identifier: GPL-2.0
/*
 * The messages bloomsync publishes, encoded and checked. The layout is in
 * Documentation/bloomsync.md ("Messages"); a message that breaks it is
 * refused whole, before any of it is applied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "wire.h"

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The header's size: the fixed part and the host name, padded to 8. */
size_t wire_header_len(const struct wire_hdr *h)
{
	return WIRE_FIXED + ((strlen(h->host) + 7) & ~(size_t)7);
}

size_t wire_encode_header(unsigned char *buf, const struct wire_hdr *h)
{
	size_t hl = strlen(h->host), len = wire_header_len(h);

	memset(buf, 0, len);
	memcpy(buf, WIRE_MAGIC, WIRE_MAGIC_LEN);
	put32(buf + 8, WIRE_VERSION);
	put32(buf + 12, h->kind);
	put64(buf + 16, h->seq);
	put64(buf + 24, h->fingerprint);
	put64(buf + 32, (uint64_t)h->newest_epoch);
	put32(buf + 40, h->count);
	put32(buf + 44, h->chunks);
	put64(buf + 48, h->first_seq);
	put32(buf + 56, hl);
	put32(buf + 60, h->flags);
	memcpy(buf + WIRE_FIXED, h->host, hl);
	return len;
}

void wire_encode_rec(unsigned char *buf, const struct rec *r)
{
	put64(buf, r->index);
	put64(buf + 8, (uint64_t)r->epoch);
	memcpy(buf + 16, r->data, KBLOOM_BLOCK_BYTES);
}

void wire_decode_rec(const unsigned char *buf, struct rec *r)
{
	r->index = get64(buf);
	r->epoch = (int64_t)get64(buf + 8);
	memcpy(r->data, buf + 16, KBLOOM_BLOCK_BYTES);
}

/* Check a message and split it: 0, or -1 with the reason in @err. */
int wire_decode(const unsigned char *buf, size_t len, struct wire_hdr *h,
		const unsigned char **body, size_t *body_len, char *err,
		size_t errlen)
{
	uint32_t hl;
	size_t i;

	memset(h, 0, sizeof(*h));
	if (len < WIRE_FIXED || memcmp(buf, WIRE_MAGIC, WIRE_MAGIC_LEN)) {
		snprintf(err, errlen, "not a bloomsync message");
		return -1;
	}
	h->version = get32(buf + 8);
	h->kind = get32(buf + 12);
	h->seq = get64(buf + 16);
	h->fingerprint = get64(buf + 24);
	h->newest_epoch = (int64_t)get64(buf + 32);
	h->count = get32(buf + 40);
	h->chunks = get32(buf + 44);
	h->first_seq = get64(buf + 48);
	hl = get32(buf + 56);
	if (h->version != WIRE_VERSION) {
		snprintf(err, errlen, "message version %u (bloomsync reads %d)",
			 h->version, WIRE_VERSION);
		return -1;
	}
	h->flags = get32(buf + 60);
	if (h->flags & ~WIRE_F_ZLIB ||
	    (h->flags && h->kind != WIRE_DELTA)) {
		snprintf(err, errlen, "unknown flags 0x%x", h->flags);
		return -1;
	}
	if (!hl || hl > WIRE_HOST_MAX ||
	    len < WIRE_FIXED + ((hl + 7) & ~7U)) {
		snprintf(err, errlen, "bad host name length %u", hl);
		return -1;
	}
	memcpy(h->host, buf + WIRE_FIXED, hl);
	/* Only what a host name may hold: it goes into log lines. */
	for (i = 0; i < hl; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-",
			    h->host[i]) || !h->host[i]) {
			snprintf(err, errlen, "a host name of other characters than A-Z, a-z, 0-9, '_', '.' and '-'");
			return -1;
		}
	*body = buf + wire_header_len(h);
	*body_len = len - wire_header_len(h);
	if (!h->seq) {
		snprintf(err, errlen, "sequence number 0");
		return -1;
	}
	if (h->kind == WIRE_DELTA) {
		if (h->chunks || h->first_seq != h->seq ||
		    (uint64_t)h->count * WIRE_REC > WIRE_DELTA_MAX ||
		    (h->flags & WIRE_F_ZLIB ? !*body_len :
		     *body_len != (size_t)h->count * WIRE_REC)) {
			snprintf(err, errlen, "delta of %u records in %zu bytes",
				 h->count, *body_len);
			return -1;
		}
	} else if (h->kind == WIRE_SNAPSHOT) {
		if (!h->chunks || h->count >= h->chunks || !*body_len ||
		    h->first_seq + h->count != h->seq) {
			snprintf(err, errlen, "snapshot chunk %u of %u, seq %llu from %llu",
				 h->count, h->chunks,
				 (unsigned long long)h->seq,
				 (unsigned long long)h->first_seq);
			return -1;
		}
	} else {
		snprintf(err, errlen, "unknown message kind %u", h->kind);
		return -1;
	}
	return 0;
}

/*
 * A delta's records, inflated if need be into *@buf (freed by the
 * caller): exactly count records, or NULL with the reason in @err.
 */
const unsigned char *wire_delta_records(const struct wire_hdr *h,
					const unsigned char *body,
					size_t body_len, unsigned char **buf,
					char *err, size_t errlen)
{
	uLongf len = (uLongf)h->count * WIRE_REC;

	*buf = NULL;
	if (!(h->flags & WIRE_F_ZLIB))
		return body;
	*buf = malloc(len ? len : 1);
	if (!*buf) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (uncompress(*buf, &len, body, body_len) != Z_OK ||
	    len != (uLongf)h->count * WIRE_REC) {
		snprintf(err, errlen, "a deflated delta that is not %u records",
			 h->count);
		free(*buf);
		*buf = NULL;
		return NULL;
	}
	return *buf;
}
