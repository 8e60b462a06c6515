// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom filter images: the header, the CRC32C, and a reader that checks
 * an image completely while streaming it.
 *
 * The file format is Documentation/kbloom-image.md: a fixed 96-byte
 * header, every integer little-endian and naturally aligned, then the
 * payload of KBLOOM_IOC_EXPORT, as is or deflated by zlib. The header is
 * (de)serialised field by field, never as a C structure, so the file does
 * not depend on the compiler or the host's byte order.
 *
 * The reader takes the stored payload in IMG_PIECE pieces and inflates
 * each into a buffer of the same size: it never holds the stored payload,
 * and holds the uncompressed one only for a caller that asks (load, which
 * hands it to KBLOOM_IOC_IMPORT), and then only after the header has
 * passed the size limit, and growing only as the stream really produces
 * bytes. A 180-byte image that claims 32 GiB is refused from its header;
 * one that inflates to 64 MiB costs inspect 128 KiB.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* const next_in: the payloads deflated are never written to. */
#define ZLIB_CONST
#include <zlib.h>

#include <linux/kbloom.h>

#include "image.h"
#include "sizing.h"

/* Bytes read, and inflated, at a time. */
#define IMG_PIECE		(64U << 10)
/* zlib counts in uInt: hand it at most this much at a time. */
#define ZLIB_CHUNK		(1U << 30)
/* Trailing garbage is counted up to about this much, then "more than". */
#define REST_MAX		(1U << 20)

const char *hash_scheme_name(uint32_t scheme)
{
	switch (scheme) {
	case KBLOOM_HASH_JHASH:
		return "jhash";
	case KBLOOM_HASH_SIPHASH:
		return "siphash";
	default:
		return "unknown";
	}
}

/*
 * CRC32C (Castagnoli, reflected polynomial 0x82F63B78), as iSCSI, ext4 and
 * btrfs use it, eight bytes a step ("slicing by 8"): images reach
 * gigabytes. The tables are built on first use.
 */
static uint32_t crc32c_table[8][256];

static void crc32c_init(void)
{
	uint32_t c;
	int i, j;

	if (crc32c_table[0][1])
		return;
	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = c & 1 ? c >> 1 ^ 0x82F63B78 : c >> 1;
		crc32c_table[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			crc32c_table[j][i] = crc32c_table[j - 1][i] >> 8 ^
				crc32c_table[0][crc32c_table[j - 1][i] & 0xff];
}

/* crc32c(crc32c(0, a), b) is the CRC of a followed by b, as zlib's crc32(). */
uint32_t crc32c(uint32_t crc, const void *buf, uint64_t len)
{
	const unsigned char *p = buf;

	crc32c_init();
	crc = ~crc;
	/* Bytes, not a u32 load: the same result on any host. */
	for (; len >= 8; len -= 8, p += 8) {
		crc ^= (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		       (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
		crc = crc32c_table[7][crc & 0xff] ^
		      crc32c_table[6][crc >> 8 & 0xff] ^
		      crc32c_table[5][crc >> 16 & 0xff] ^
		      crc32c_table[4][crc >> 24] ^
		      crc32c_table[3][p[4]] ^ crc32c_table[2][p[5]] ^
		      crc32c_table[1][p[6]] ^ crc32c_table[0][p[7]];
	}
	for (; len; len--)
		crc = crc >> 8 ^ crc32c_table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

static void put_le32(unsigned char *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void put_le64(unsigned char *p, uint64_t v)
{
	put_le32(p, v);
	put_le32(p + 4, v >> 32);
}

static uint32_t get_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const unsigned char *p)
{
	return get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

/* Versions 2 and 3 are a windowed filter's. */
bool img_windowed(const struct image *img)
{
	return img->version == IMG_VERSION_WINDOW ||
	       img->version == IMG_VERSION_SCHEDULE;
}

/* The header's size: 104 bytes for version 2, 112 for 3, else 96. */
size_t img_header_len(const struct image *img)
{
	if (img->version == IMG_VERSION_SCHEDULE)
		return IMG_HEADER_SIZE_V3;
	return img->version == IMG_VERSION_WINDOW ? IMG_HEADER_SIZE_V2 :
	       IMG_HEADER_SIZE;
}

/* The header, with img->crc in its place (0 to compute the CRC). */
void img_encode_header(unsigned char *h,
		       const struct image *img)
{
	/* Version 1 callers may have only IMG_HEADER_SIZE bytes. */
	memset(h, 0, img_header_len(img));
	memcpy(h + IMG_OFF_MAGIC, IMG_MAGIC, IMG_MAGIC_LEN);
	put_le32(h + IMG_OFF_VERSION, img->version);
	put_le32(h + IMG_OFF_SCHEME, img->hash_scheme);
	put_le32(h + IMG_OFF_LAYOUT, img->layout);
	put_le32(h + IMG_OFF_FLAGS, img->flags);
	put_le64(h + IMG_OFF_BITS, img->bits);
	put_le32(h + IMG_OFF_HASHES, img->hashes);
	put_le32(h + IMG_OFF_FPR, img->fpr_ppb);
	put_le32(h + IMG_OFF_SEED0, img->seed[0]);
	put_le32(h + IMG_OFF_SEED1, img->seed[1]);
	put_le64(h + IMG_OFF_ADDS, img->adds);
	put_le64(h + IMG_OFF_CAPACITY, img->capacity);
	put_le32(h + IMG_OFF_COMPRESSION, img->compression);
	put_le32(h + IMG_OFF_CRC, img->crc);
	put_le64(h + IMG_OFF_PAYLOAD_LEN, img->payload_len);
	put_le64(h + IMG_OFF_STORED_LEN, img->stored_len);
	put_le32(h + IMG_OFF_SEED_HI0, img->seed_hi[0]);
	put_le32(h + IMG_OFF_SEED_HI1, img->seed_hi[1]);
	if (img_windowed(img)) {
		put_le32(h + IMG_OFF_GENERATIONS, img->generations);
		put_le32(h + IMG_OFF_WINDOW, img->window_ms);
	}
	if (img->version == IMG_VERSION_SCHEDULE)
		put_le64(h + IMG_OFF_NEWEST_START, img->newest_start_ms);
}

/* The bytes past 96 are read only once the version says they exist. */
void img_decode_header(const unsigned char *h,
		       struct image *img)
{
	img->version = get_le32(h + IMG_OFF_VERSION);
	img->hash_scheme = get_le32(h + IMG_OFF_SCHEME);
	img->layout = get_le32(h + IMG_OFF_LAYOUT);
	img->flags = get_le32(h + IMG_OFF_FLAGS);
	img->bits = get_le64(h + IMG_OFF_BITS);
	img->hashes = get_le32(h + IMG_OFF_HASHES);
	img->fpr_ppb = get_le32(h + IMG_OFF_FPR);
	img->seed[0] = get_le32(h + IMG_OFF_SEED0);
	img->seed[1] = get_le32(h + IMG_OFF_SEED1);
	img->adds = get_le64(h + IMG_OFF_ADDS);
	img->capacity = get_le64(h + IMG_OFF_CAPACITY);
	img->compression = get_le32(h + IMG_OFF_COMPRESSION);
	img->crc = get_le32(h + IMG_OFF_CRC);
	img->payload_len = get_le64(h + IMG_OFF_PAYLOAD_LEN);
	img->stored_len = get_le64(h + IMG_OFF_STORED_LEN);
	img->seed_hi[0] = get_le32(h + IMG_OFF_SEED_HI0);
	img->seed_hi[1] = get_le32(h + IMG_OFF_SEED_HI1);
	img->generations = img->window_ms = 0;
	img->newest_start_ms = 0;
	if (img_windowed(img)) {
		img->generations = get_le32(h + IMG_OFF_GENERATIONS);
		img->window_ms = get_le32(h + IMG_OFF_WINDOW);
	}
	if (img->version == IMG_VERSION_SCHEDULE)
		img->newest_start_ms = get_le64(h + IMG_OFF_NEWEST_START);
}

/* The header's flags and layout as the uapi's flags (struct kbloom_image). */
uint32_t img_kflags(const struct image *img)
{
	return img->flags |
	       (img->layout == IMG_LAYOUT_BLOCKED ? KBLOOM_CREATE_BLOCKED : 0);
}

/* Bits per position: 1, or 4 for the counters of a counting filter. */
static unsigned int img_width(uint32_t flags)
{
	return flags & KBLOOM_CREATE_COUNTING ? 4 : 1;
}

static const char *img_positions(uint32_t flags)
{
	return flags & KBLOOM_CREATE_COUNTING ? "counters" : "bits";
}

/* The payload's size: what the core allocates, the uapi's payload_len. */
uint64_t img_payload_bytes(uint64_t bits, uint32_t flags)
{
	return sizing_bytes(bits, flags);
}

/*
 * Most bytes a deflate of @len bytes may take: zlib's own bound
 * (deflateBound(), about len + len / 4000 + 13 with the zlib wrapper) with
 * room to spare for other compressors. Bounds what a load reads.
 */
uint64_t img_zlib_bound(uint64_t len)
{
	return len + len / 1000 + 64;
}

static void __attribute__((format(printf, 4, 5)))
fmt_err(char *err, size_t errlen, const char *file, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	n = snprintf(err, errlen, "%s: ", file);
	if (n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
}

/* The fields that say what the image is; a newer writer may differ here. */
static int img_check_kind(const struct image *img, const char *f, char *err,
			  size_t errlen)
{
	/* The BPF access: a policy, not a shape; any version carries it. */
	uint32_t known = KBLOOM_CREATE_COUNTING | KBLOOM_CREATE_BPF_READ |
			 KBLOOM_CREATE_BPF_WRITE;

	if (img->version != IMG_VERSION && !img_windowed(img)) {
		fmt_err(err, errlen, f, "unknown format version %" PRIu32 " (bloomctl reads versions %d to %d)",
			img->version, IMG_VERSION, IMG_VERSION_SCHEDULE);
		return -1;
	}
	if (img_windowed(img))
		known |= KBLOOM_CREATE_ROTATE_AT_FILL;
	if (img->hash_scheme != KBLOOM_HASH_JHASH &&
	    img->hash_scheme != KBLOOM_HASH_SIPHASH) {
		fmt_err(err, errlen, f, "unknown hash scheme %" PRIu32 " (bloomctl knows 1, jhash, and 2, siphash)",
			img->hash_scheme);
		return -1;
	}
	if (img->layout != IMG_LAYOUT_STANDARD &&
	    img->layout != IMG_LAYOUT_BLOCKED) {
		fmt_err(err, errlen, f, "unknown layout %" PRIu32 " (bloomctl knows 0, standard, and 1, blocked)",
			img->layout);
		return -1;
	}
	if (img->flags & ~known) {
		if (img_windowed(img))
			fmt_err(err, errlen, f, "unknown flags 0x%" PRIx32 " (only 0x%x, counting, 0x%x, rotate at fill, and 0x%x, BPF access, are defined)",
				img->flags, KBLOOM_CREATE_COUNTING,
				KBLOOM_CREATE_ROTATE_AT_FILL,
				KBLOOM_CREATE_BPF_READ |
				KBLOOM_CREATE_BPF_WRITE);
		else
			fmt_err(err, errlen, f, "unknown flags 0x%" PRIx32 " (only 0x%x, counting, and 0x%x, BPF access, are defined)",
				img->flags, KBLOOM_CREATE_COUNTING,
				KBLOOM_CREATE_BPF_READ |
				KBLOOM_CREATE_BPF_WRITE);
		return -1;
	}
	if (img_windowed(img) &&
	    (img->generations < 2 ||
	     img->generations > KBLOOM_MAX_GENERATIONS)) {
		fmt_err(err, errlen, f, "generations %" PRIu32 " out of range (a windowed filter has 2 to %d)",
			img->generations, KBLOOM_MAX_GENERATIONS);
		return -1;
	}
	if (img->compression != IMG_COMPRESS_NONE &&
	    img->compression != IMG_COMPRESS_ZLIB) {
		fmt_err(err, errlen, f, "unknown compression %" PRIu32 " (0 none, 1 zlib)",
			img->compression);
		return -1;
	}
	/* jhash has a 64-bit seed: bytes 88..95 stay reserved for it. */
	if (img->hash_scheme == KBLOOM_HASH_JHASH &&
	    (img->seed_hi[0] || img->seed_hi[1])) {
		fmt_err(err, errlen, f, "header bytes %d to %d (seed_hi) are not zero, but hash scheme 1 (jhash) has no high seed",
			IMG_OFF_SEED_HI0, IMG_OFF_SEED_HI1 + 3);
		return -1;
	}
	return 0;
}

/*
 * Version 2: G generations of payload. Checked before the parameters, so
 * that a generation count that does not match the payload says so, rather
 * than that the sizing (for fpr / G) is off.
 */
static int img_check_generations(const struct image *img, const char *f,
				 char *err, size_t errlen)
{
	uint64_t need;

	if (!img->generations || img->bits < KBLOOM_MIN_BITS ||
	    img->bits > KBLOOM_MAX_BITS)
		return 0;
	need = img_payload_bytes(img->bits, img->flags);
	if (need == UINT64_MAX || need > UINT64_MAX / img->generations)
		return 0;
	need *= img->generations;
	if (img->payload_len == need)
		return 0;
	fmt_err(err, errlen, f, "payload length mismatch: header says %" PRIu64 " bytes, %" PRIu32 " generations of a %s filter of %" PRIu64 " bits need %" PRIu64 " (the generation count does not match the payload)",
		img->payload_len, img->generations,
		img->flags & KBLOOM_CREATE_COUNTING ? "counting" : "plain",
		img->bits, need);
	return -1;
}

/* The filter's parameters: exactly what the kernel would create. */
static int img_check_params(const struct image *img, const char *f,
			    char *err, size_t errlen)
{
	char why[256];

	if (img->bits < KBLOOM_MIN_BITS || img->bits > KBLOOM_MAX_BITS) {
		fmt_err(err, errlen, f, "bits %" PRIu64 " out of range (%llu to %llu)",
			img->bits, KBLOOM_MIN_BITS, KBLOOM_MAX_BITS);
		return -1;
	}
	if (img->hashes < 1 || img->hashes > KBLOOM_MAX_HASHES) {
		fmt_err(err, errlen, f, "hashes %" PRIu32 " out of range (1 to %d)",
			img->hashes, KBLOOM_MAX_HASHES);
		return -1;
	}
	if (img->fpr_ppb >= KBLOOM_FPR_ONE) {
		fmt_err(err, errlen, f, "fpr_ppb %" PRIu32 " out of range (0 to %u)",
			img->fpr_ppb, KBLOOM_FPR_ONE - 1);
		return -1;
	}
	/* A windowed filter's generations are sized for fpr_ppb / G. */
	if (!sizing_params_valid(img->bits, img->hashes, img_kflags(img),
				 img->capacity,
				 sizing_window_fpr(img->fpr_ppb,
						   img->generations),
				 why, sizeof(why))) {
		fmt_err(err, errlen, f, "parameters the module would refuse: %s",
			why);
		return -1;
	}
	return 0;
}

/* The lengths, and the limit that keeps a small file from inflating huge. */
static int img_check_lengths(const struct image *img, const char *f,
			     uint64_t max_payload, const char *max_src,
			     char *err, size_t errlen)
{
	uint64_t need = img_payload_bytes(img->bits, img->flags);
	uint32_t g = img->generations ? img->generations : 1;

	if (need != UINT64_MAX && need > UINT64_MAX / g)
		need = UINT64_MAX;
	else if (need != UINT64_MAX)
		need *= g;

	/*
	 * Only a 32-bit bloomctl: the core sizes storage in a size_t, and
	 * this filter's does not fit. Refused either way; the limit first,
	 * as on 64-bit.
	 */
	if (need == UINT64_MAX && img->payload_len <= max_payload) {
		fmt_err(err, errlen, f, "a %s filter of %" PRIu64 " bits: too large for this %zu-bit bloomctl",
			img->flags & KBLOOM_CREATE_COUNTING ? "counting" :
			"plain", img->bits, sizeof(size_t) * 8);
		return -1;
	}
	if (img_check_generations(img, f, err, errlen))
		return -1;
	if (need != UINT64_MAX && img->payload_len != need) {
		fmt_err(err, errlen, f, "payload length mismatch: header says %" PRIu64 " bytes, a %s filter of %" PRIu64 " bits needs %" PRIu64,
			img->payload_len,
			img->flags & KBLOOM_CREATE_COUNTING ? "counting" :
			"plain", img->bits, need);
		return -1;
	}
	if (img->compression == IMG_COMPRESS_NONE &&
	    img->stored_len != img->payload_len) {
		fmt_err(err, errlen, f, "stored length mismatch: header says %" PRIu64 " bytes stored, %" PRIu64 " uncompressed, without compression",
			img->stored_len, img->payload_len);
		return -1;
	}
	if (img->compression == IMG_COMPRESS_ZLIB &&
	    img->stored_len > img_zlib_bound(img->payload_len)) {
		fmt_err(err, errlen, f, "stored length mismatch: %" PRIu64 " compressed bytes for %" PRIu64 " uncompressed, more than deflate ever needs (%" PRIu64 ")",
			img->stored_len, img->payload_len,
			img_zlib_bound(img->payload_len));
		return -1;
	}
	if (img->payload_len > max_payload) {
		fmt_err(err, errlen, f, "payload of %" PRIu64 " bytes is over the limit of %" PRIu64 " bytes (%s): not reading it",
			img->payload_len, max_payload, max_src);
		return -1;
	}
	/* KBLOOM_MAX_BITS counters are 32 GiB: more than i386 can hold. */
	if (img->payload_len > SIZE_MAX / 2 || img->stored_len > SIZE_MAX / 2) {
		fmt_err(err, errlen, f, "%" PRIu64 " bytes of payload: too large for this %zu-bit bloomctl",
			img->payload_len, sizeof(size_t) * 8);
		return -1;
	}
	return 0;
}

/**
 * img_check_header() - everything that can be checked without the payload
 * @img: the decoded header.
 * @file: the name for messages.
 * @max_payload: the largest payload_len accepted.
 * @max_src: where that limit comes from, for the message.
 * @err: out: the message on failure.
 * @errlen: its size.
 *
 * What the image is (version, scheme, layout, flags, compression) comes
 * first, so that a well-formed image from a newer writer is reported as
 * such rather than as corrupt.
 *
 * Return: 0, or -1 with @err set.
 */
int img_check_header(const struct image *img, const char *file,
		     uint64_t max_payload, const char *max_src, char *err,
		     size_t errlen)
{
	if (img_check_kind(img, file, err, errlen) ||
	    img_check_generations(img, file, err, errlen) ||
	    img_check_params(img, file, err, errlen) ||
	    img_check_lengths(img, file, max_payload, max_src, err, errlen))
		return -1;
	return 0;
}

static int __attribute__((format(printf, 2, 3)))
rd_fail(struct img_reader *rd, const char *fmt, ...)
{
	char msg[IMG_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fmt_err(rd->err, sizeof(rd->err), rd->file, "%s", msg);
	return -1;
}

/*
 * A problem found while decoding, reported only once the whole file has
 * been read and its CRC checked, so that a damaged file is reported as
 * damaged (the CRC) rather than by whatever the damage did to the stream.
 * Only the first one counts.
 */
static void __attribute__((format(printf, 2, 3)))
rd_defer(char *slot, const char *fmt, ...)
{
	va_list ap;

	if (*slot)
		return;
	va_start(ap, fmt);
	vsnprintf(slot, IMG_ERR_MAX, fmt, ap);
	va_end(ap);
}

/* Room for @need bytes of payload, growing only as data arrives. */
static int rd_grow(struct img_reader *rd, uint64_t need)
{
	uint64_t cap = rd->cap ? rd->cap : 1U << 20;
	unsigned char *p;

	if (need <= rd->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > rd->img.payload_len)
		cap = rd->img.payload_len;
	p = realloc(rd->payload, cap);
	if (!p)
		return rd_fail(rd, "%" PRIu64 " bytes of payload: %s",
			       rd->img.payload_len, strerror(ENOMEM));
	rd->payload = p;
	rd->cap = cap;
	return 0;
}

/* Positions set (non-zero counters) and stuck counters in a 64-bit word. */
static void count_word(struct img_reader *rd, uint64_t w, bool counting)
{
	const uint64_t lsbs = 0x1111111111111111ULL;

	if (!counting) {
		rd->set += __builtin_popcountll(w);
		return;
	}
	/* Nibbles stay whole whatever the byte order of the load. */
	rd->saturated += __builtin_popcountll(w & (w >> 1) & (w >> 2) &
					      (w >> 3) & lsbs);
	w |= w >> 1;
	w |= w >> 2;
	rd->set += __builtin_popcountll(w & lsbs);
}

/* One byte at or past the end of the positions: the padding must be 0. */
static void check_pad_byte(struct img_reader *rd, uint64_t off,
			   unsigned char b, bool counting)
{
	uint64_t bit0 = off * 8;
	unsigned char pad = bit0 >= rd->used_bits ? 0xff :
			    0xff << (rd->used_bits - bit0);

	if (b & pad)
		rd_defer(rd->pad_err, "non-zero padding: bit %" PRIu64 " of the payload is set, past the %" PRIu64 " %s of the filter",
			 bit0 + __builtin_ctz(b & pad), rd->img.bits,
			 img_positions(rd->img.flags));
	count_word(rd, b & ~pad, counting);
}

/*
 * Take the next @n bytes of the payload: count them, check the padding,
 * keep them if asked.
 */
static void rd_sink_gen(struct img_reader *rd, const unsigned char *p,
			size_t n, uint64_t off)
{
	bool counting = rd->img.flags & KBLOOM_CREATE_COUNTING;
	/* Bytes from here on may hold padding. */
	uint64_t pad_from = rd->used_bits / 8;
	size_t i = 0;
	uint64_t w;

	for (; i + 8 <= n && off + i + 8 <= pad_from; i += 8) {
		memcpy(&w, p + i, 8);
		count_word(rd, w, counting);
	}
	for (; i < n; i++) {
		if (off + i < pad_from)
			count_word(rd, p[i], counting);
		else
			check_pad_byte(rd, off + i, p[i], counting);
	}
}

/* Each generation (one for a plain filter) has its padding at its end. */
static int rd_sink(struct img_reader *rd, const unsigned char *p, size_t n)
{
	uint64_t goff, chunk;

	if (!n)
		return 0;
	if (rd->keep_payload) {
		if (rd_grow(rd, rd->out + n))
			return -1;
		memcpy(rd->payload + rd->out, p, n);
	}
	while (n) {
		goff = rd->gen_bytes ? rd->out % rd->gen_bytes : rd->out;
		chunk = rd->gen_bytes ? rd->gen_bytes - goff : n;
		if (chunk > n)
			chunk = n;
		rd_sink_gen(rd, p, chunk, goff);
		rd->out += chunk;
		p += chunk;
		n -= chunk;
	}
	return 0;
}

/* Inflate one piece of the stored payload, or take it as it is. */
static int rd_decode(struct img_reader *rd, const unsigned char *in,
		     size_t n, unsigned char *piece)
{
	z_stream *zs = rd->zs;
	size_t produced;
	int zret;

	if (rd->decode_failed)
		return 0;
	if (rd->img.compression == IMG_COMPRESS_NONE)
		return rd_sink(rd, in, n);
	if (rd->zend)
		return 0;	/* bytes after the stream: counted at the end */
	zs->next_in = in;
	zs->avail_in = n;
	do {
		zs->next_out = piece;
		zs->avail_out = IMG_PIECE;
		zret = inflate(zs, Z_NO_FLUSH);
		produced = IMG_PIECE - zs->avail_out;
		/* Never more than the header said: that is what is bounded. */
		if (produced > rd->img.payload_len - rd->out) {
			rd_defer(rd->decode_err, "decompressed size mismatch: the stream gives more than the %" PRIu64 " bytes the header says",
				 rd->img.payload_len);
			rd->decode_failed = true;
			return 0;
		}
		if (produced && rd_sink(rd, piece, produced))
			return -1;
		if (zret == Z_STREAM_END) {
			rd->zend = true;
			return 0;
		}
		/* No progress possible: it wants more input. */
		if (zret == Z_BUF_ERROR)
			return 0;
		if (zret != Z_OK) {
			rd_defer(rd->decode_err, "zlib decompression failed: %s",
				 zs->msg ? zs->msg : zError(zret));
			rd->decode_failed = true;
			return 0;
		}
	} while (zs->avail_in || !zs->avail_out);
	return 0;
}

/* After the last piece: did the stream end exactly where it should? */
static void rd_decode_end(struct img_reader *rd)
{
	z_stream *zs = rd->zs;

	if (rd->decode_failed || rd->img.compression != IMG_COMPRESS_ZLIB)
		return;
	if (!rd->zend)
		rd_defer(rd->decode_err, "zlib decompression failed: the compressed stream ends early");
	else if (rd->out != rd->img.payload_len)
		rd_defer(rd->decode_err, "decompressed size mismatch: the stream gives %" PRIu64 " bytes, the header says %" PRIu64,
			 rd->out, rd->img.payload_len);
	else if (zs->total_in != rd->img.stored_len)
		rd_defer(rd->decode_err, "zlib decompression failed: %" PRIu64 " bytes after the end of the compressed stream",
			 rd->img.stored_len - (uint64_t)zs->total_in);
}

/* Read up to @len bytes; fewer only at end of input. -1 and errno on error. */
static ssize_t read_full(img_read_fn fn, void *ctx, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = fn(ctx, p + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n)
			break;
		done += n;
	}
	return done;
}

/* Bytes left before end of input, counting at most about REST_MAX. */
static int rd_check_rest(struct img_reader *rd, img_read_fn fn, void *ctx,
			 unsigned char *buf)
{
	uint64_t total = 0;
	ssize_t n;

	do {
		n = read_full(fn, ctx, buf, IMG_PIECE);
		if (n < 0)
			return rd_fail(rd, "%s", strerror(errno));
		total += n;
	} while (n == IMG_PIECE && total < REST_MAX);
	if (total)
		return rd_fail(rd, "trailing garbage: %s%" PRIu64 " bytes after the payload",
			       n == IMG_PIECE ? "more than " : "", total);
	return 0;
}

/* The header: magic, completeness, and every field. */
static int rd_header(struct img_reader *rd, img_read_fn fn, void *ctx)
{
	unsigned char h[IMG_HEADER_MAX];
	size_t hlen = IMG_HEADER_SIZE;
	ssize_t n;

	n = read_full(fn, ctx, h, IMG_HEADER_SIZE);
	if (n < 0)
		return rd_fail(rd, "%s", strerror(errno));
	/* The magic first: a short file of something else is no image. */
	if (memcmp(h, IMG_MAGIC, n < IMG_MAGIC_LEN ? n : IMG_MAGIC_LEN))
		return rd_fail(rd, "bad magic: not a kbloom filter image");
	if (n < IMG_HEADER_SIZE)
		return rd_fail(rd, "truncated: header needs %d bytes, file has %zd",
			       IMG_HEADER_SIZE, n);
	img_decode_header(h, &rd->img);
	if (img_windowed(&rd->img)) {
		hlen = img_header_len(&rd->img);
		n = read_full(fn, ctx, h + IMG_HEADER_SIZE,
			      hlen - IMG_HEADER_SIZE);
		if (n < 0)
			return rd_fail(rd, "%s", strerror(errno));
		if ((size_t)n < hlen - IMG_HEADER_SIZE)
			return rd_fail(rd, "truncated: a version %u header needs %zu bytes, file has %zd",
				       rd->img.version, hlen,
				       IMG_HEADER_SIZE + n);
		img_decode_header(h, &rd->img);
	}
	if (img_check_header(&rd->img, rd->file, rd->max_payload,
			     rd->max_payload_src, rd->err, sizeof(rd->err)))
		return -1;
	rd->used_bits = rd->img.bits * img_width(rd->img.flags);
	rd->gen_bytes = rd->img.payload_len /
			(rd->img.generations ? rd->img.generations : 1);
	/* The CRC covers the header with its own field zeroed. */
	memset(h + IMG_OFF_CRC, 0, 4);
	rd->crc = crc32c(0, h, hlen);
	return 0;
}

/* The stored payload, piece by piece, through the CRC and the decoder. */
static int rd_body(struct img_reader *rd, img_read_fn fn, void *ctx,
		   unsigned char *in, unsigned char *piece)
{
	uint64_t got = 0, want;
	ssize_t n;

	while (got < rd->img.stored_len) {
		want = rd->img.stored_len - got;
		if (want > IMG_PIECE)
			want = IMG_PIECE;
		n = read_full(fn, ctx, in, want);
		if (n < 0)
			return rd_fail(rd, "%s", strerror(errno));
		if (!n)
			break;
		rd->crc = crc32c(rd->crc, in, n);
		if (rd_decode(rd, in, n, piece))
			return -1;
		got += n;
		if ((uint64_t)n < want)
			break;
	}
	if (got < rd->img.stored_len)
		return rd_fail(rd, "truncated: header says %" PRIu64 " bytes of payload, file has %" PRIu64 " after the header",
			       rd->img.stored_len, got);
	return 0;
}

static void rd_reset(struct img_reader *rd)
{
	memset(&rd->img, 0, sizeof(rd->img));
	rd->payload = NULL;
	rd->set = rd->saturated = rd->file_bytes = 0;
	rd->out = rd->cap = rd->used_bits = rd->gen_bytes = 0;
	rd->crc = 0;
	rd->decode_failed = rd->zinit = rd->zend = false;
	rd->err[0] = rd->decode_err[0] = rd->pad_err[0] = '\0';
}

/**
 * img_read() - read and check a whole image
 * @rd: the reader, its in fields set.
 * @fn: where the bytes come from.
 * @ctx: its argument.
 *
 * Every problem has its own message, in the order of
 * Documentation/kbloom-image.md: the header, then truncation and
 * trailing garbage, the CRC, and only then what decoding found.
 *
 * Return: 0, or -1 with rd->err set (and nothing to release).
 */
int img_read(struct img_reader *rd, img_read_fn fn, void *ctx)
{
	unsigned char *in = NULL, *piece = NULL;
	z_stream zs;
	int ret = -1;

	rd_reset(rd);
	if (rd_header(rd, fn, ctx))
		return -1;
	in = malloc(IMG_PIECE);
	piece = malloc(IMG_PIECE);
	if (!in || !piece) {
		rd_fail(rd, "%s", strerror(ENOMEM));
		goto out;
	}
	memset(&zs, 0, sizeof(zs));
	rd->zs = &zs;
	if (rd->img.compression == IMG_COMPRESS_ZLIB) {
		if (inflateInit(&zs) != Z_OK) {
			rd_fail(rd, "zlib decompression failed: %s",
				zs.msg ? zs.msg : "cannot initialise zlib");
			goto out;
		}
		rd->zinit = true;
	}
	if (rd_body(rd, fn, ctx, in, piece) ||
	    rd_check_rest(rd, fn, ctx, in))
		goto out;
	rd->file_bytes = img_header_len(&rd->img) + rd->img.stored_len;
	if (rd->crc != rd->img.crc) {
		rd_fail(rd, "bad CRC32C: header says 0x%08" PRIx32 ", contents give 0x%08" PRIx32 " (corrupt file)",
			rd->img.crc, rd->crc);
		goto out;
	}
	rd_decode_end(rd);
	if (*rd->decode_err || *rd->pad_err) {
		rd_fail(rd, "%s", *rd->decode_err ? rd->decode_err : rd->pad_err);
		goto out;
	}
	ret = 0;
out:
	if (rd->zinit)
		inflateEnd(&zs);
	rd->zinit = false;
	rd->zs = NULL;
	free(piece);
	free(in);
	if (ret) {
		free(rd->payload);
		rd->payload = NULL;
	}
	return ret;
}

static ssize_t fd_read(void *ctx, void *buf, size_t len)
{
	/* Large reads are fine, but keep each within what ssize_t holds. */
	return read(*(int *)ctx, buf, len > (1U << 30) ? 1U << 30 : len);
}

int img_read_fd(struct img_reader *rd, int fd)
{
	return img_read(rd, fd_read, &fd);
}

struct mem_src {
	const unsigned char *p[2];
	size_t len[2];
};

static ssize_t mem_read(void *ctx, void *buf, size_t len)
{
	struct mem_src *m = ctx;
	int i = m->len[0] ? 0 : 1;

	if (len > m->len[i])
		len = m->len[i];
	if (!len)
		return 0;
	memcpy(buf, m->p[i], len);
	m->p[i] += len;
	m->len[i] -= len;
	return len;
}

int img_read_mem(struct img_reader *rd, const void *buf, size_t len)
{
	struct mem_src m = { { buf, NULL }, { len, 0 } };

	return img_read(rd, mem_read, &m);
}

/* The header and the stored payload as they would be written. */
int img_read_parts(struct img_reader *rd, const void *h, size_t hlen,
		   const void *stored, size_t slen)
{
	struct mem_src m = { { h, stored }, { hlen, slen } };

	return img_read(rd, mem_read, &m);
}

void img_reader_release(struct img_reader *rd)
{
	free(rd->payload);
	rd->payload = NULL;
}

/* Deflate @len bytes into a new buffer, zlib format, default level. */
int img_deflate(const unsigned char *in, uint64_t len, unsigned char **out,
		uint64_t *out_len, char *err, size_t errlen)
{
	uint64_t cap = img_zlib_bound(len), in_left = len, out_left = cap;
	unsigned char *buf;
	z_stream zs;
	int zret;

	buf = malloc(cap);
	if (!buf) {
		snprintf(err, errlen, "compressing %" PRIu64 " bytes: %s", len,
			 strerror(ENOMEM));
		return -1;
	}
	memset(&zs, 0, sizeof(zs));
	if (deflateInit(&zs, Z_DEFAULT_COMPRESSION) != Z_OK) {
		snprintf(err, errlen, "zlib: %s",
			 zs.msg ? zs.msg : "cannot initialise");
		free(buf);
		return -1;
	}
	zs.next_in = in;
	zs.next_out = buf;
	for (;;) {
		if (!zs.avail_in && in_left) {
			zs.avail_in = in_left < ZLIB_CHUNK ? in_left : ZLIB_CHUNK;
			in_left -= zs.avail_in;
		}
		if (!zs.avail_out && out_left) {
			zs.avail_out = out_left < ZLIB_CHUNK ? out_left :
				       ZLIB_CHUNK;
			out_left -= zs.avail_out;
		}
		zret = deflate(&zs, in_left ? Z_NO_FLUSH : Z_FINISH);
		if (zret == Z_STREAM_END)
			break;
		/* img_zlib_bound() is above deflateBound(): cannot run out. */
		if ((zret != Z_OK && zret != Z_BUF_ERROR) ||
		    (!zs.avail_out && !out_left)) {
			snprintf(err, errlen, "zlib: compression failed: %s",
				 zs.msg ? zs.msg : zError(zret));
			deflateEnd(&zs);
			free(buf);
			return -1;
		}
	}
	*out_len = cap - out_left - zs.avail_out;
	deflateEnd(&zs);
	*out = buf;
	return 0;
}
