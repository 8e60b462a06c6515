/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbloom filter images (Documentation/kbloom-image.md): the header, the
 * CRC32C, and a streaming reader that checks an image completely. Nothing
 * here opens the device or prints: errors are formatted into the reader,
 * so that bloomctl, the fuzz harnesses and the tests share one reader.
 */
#ifndef BLOOMCTL_IMAGE_H
#define BLOOMCTL_IMAGE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* \x89 catches 7-bit transfers, \n a text-mode LF to CRLF conversion. */
#define IMG_MAGIC		"\x89KBLOOM\n"
#define IMG_MAGIC_LEN		8
#define IMG_VERSION		1
/* Version 2: windowed filters; the version-1 header and 8 more bytes. */
#define IMG_VERSION_WINDOW	2
/* Version 3: windowed filters with their schedule; 8 more bytes. */
#define IMG_VERSION_SCHEDULE	3
#define IMG_HEADER_SIZE		96
#define IMG_HEADER_SIZE_V2	104
#define IMG_HEADER_SIZE_V3	112
#define IMG_HEADER_MAX		IMG_HEADER_SIZE_V3

#define IMG_OFF_MAGIC		0
#define IMG_OFF_VERSION		8
#define IMG_OFF_SCHEME		12
#define IMG_OFF_LAYOUT		16
#define IMG_OFF_FLAGS		20
#define IMG_OFF_BITS		24
#define IMG_OFF_HASHES		32
#define IMG_OFF_FPR		36
#define IMG_OFF_SEED0		40
#define IMG_OFF_SEED1		44
#define IMG_OFF_ADDS		48
#define IMG_OFF_CAPACITY	56
#define IMG_OFF_COMPRESSION	64
#define IMG_OFF_CRC		68
#define IMG_OFF_PAYLOAD_LEN	72
#define IMG_OFF_STORED_LEN	80
/* Scheme 2 (SipHash): the high 64 bits of the seed; scheme 1: zero. */
#define IMG_OFF_SEED_HI0	88
#define IMG_OFF_SEED_HI1	92
/* Versions 2 and 3. */
#define IMG_OFF_GENERATIONS	96
#define IMG_OFF_WINDOW		100
/* Version 3 only. */
#define IMG_OFF_NEWEST_START	104

/*
 * How keys map to positions: standard (KBLOOM_CREATE_BLOCKED clear) or
 * blocked (set: a key's positions in one 64-byte block). Either way bit i
 * of the filter is bit i of the payload; the file keeps the layout here
 * and not in @flags.
 */
#define IMG_LAYOUT_STANDARD	0
#define IMG_LAYOUT_BLOCKED	1
#define IMG_COMPRESS_NONE	0
#define IMG_COMPRESS_ZLIB	1

/* Room for any message the reader formats, file name included. */
#define IMG_ERR_MAX		(PATH_MAX + 256)

/**
 * struct image - the header of an image, decoded
 *
 * Every field of the file, by its name in Documentation/kbloom-image.md.
 * The seed is secret: nothing prints it.
 */
struct image {
	uint32_t version;
	uint32_t hash_scheme;
	uint32_t layout;
	uint32_t flags;
	uint64_t bits;
	uint32_t hashes;
	uint32_t fpr_ppb;
	uint32_t seed[2];
	uint64_t adds;
	uint64_t capacity;
	uint32_t compression;
	uint32_t crc;
	uint64_t payload_len;		/* uncompressed */
	uint64_t stored_len;		/* as in the file */
	uint32_t seed_hi[2];
	uint32_t generations;		/* versions 2, 3: G; version 1: 0 */
	uint32_t window_ms;		/* versions 2, 3: W */
	/*
	 * Version 3: when the newest generation became the newest,
	 * CLOCK_REALTIME in ms since the epoch; 0 unknown.
	 */
	uint64_t newest_start_ms;
};

/* Read up to @len bytes; 0 at end of input, -1 and errno on error. */
typedef ssize_t (*img_read_fn)(void *ctx, void *buf, size_t len);

/**
 * struct img_reader - one pass over an image
 * @file: in: the name for messages (a path, "stdin").
 * @max_payload: in: the largest payload_len accepted (decompression bombs
 *	are refused before anything is allocated or inflated).
 * @max_payload_src: in: where that limit comes from, for the message.
 * @keep_payload: in: collect the payload (load); else only count (inspect).
 * @img: out: the header.
 * @payload: out: with @keep_payload, the img.payload_len bytes; the
 *	caller frees it with img_reader_release().
 * @set: out: positions set (non-zero counters).
 * @saturated: out: counters at KBLOOM_COUNTER_MAX.
 * @file_bytes: out: the size of the image.
 * @err: out: on failure, the message, "FILE: what is wrong".
 *
 * The rest is the reader's own state.
 */
struct img_reader {
	const char *file;
	uint64_t max_payload;
	const char *max_payload_src;
	bool keep_payload;

	struct image img;
	unsigned char *payload;
	uint64_t set;
	uint64_t saturated;
	uint64_t file_bytes;
	char err[IMG_ERR_MAX];

	/* Streaming state: see image.c. */
	uint64_t out;			/* payload bytes produced */
	uint64_t cap;			/* bytes allocated at @payload */
	uint64_t used_bits;		/* bits * width: padding starts here */
	uint64_t gen_bytes;		/* payload bytes of one generation */
	uint32_t crc;			/* of what was read so far */
	bool decode_failed;		/* stop decoding, keep reading */
	bool zinit, zend;
	void *zs;			/* z_stream */
	char decode_err[IMG_ERR_MAX];	/* first decoding problem */
	char pad_err[IMG_ERR_MAX];	/* first padding bit set */
};

int img_read(struct img_reader *rd, img_read_fn fn, void *ctx);
int img_read_fd(struct img_reader *rd, int fd);
int img_read_mem(struct img_reader *rd, const void *buf, size_t len);
int img_read_parts(struct img_reader *rd, const void *h, size_t hlen,
		   const void *stored, size_t slen);
void img_reader_release(struct img_reader *rd);

int img_check_header(const struct image *img, const char *file,
		     uint64_t max_payload, const char *max_payload_src,
		     char *err, size_t errlen);
size_t img_header_len(const struct image *img);
bool img_windowed(const struct image *img);
void img_encode_header(unsigned char *h,
		       const struct image *img);
void img_decode_header(const unsigned char *h,
		       struct image *img);
uint32_t crc32c(uint32_t crc, const void *buf, uint64_t len);
uint64_t img_payload_bytes(uint64_t bits, uint32_t flags);
uint32_t img_kflags(const struct image *img);
uint64_t img_zlib_bound(uint64_t len);
int img_deflate(const unsigned char *in, uint64_t len, unsigned char **out,
		uint64_t *out_len, char *err, size_t errlen);
const char *hash_scheme_name(uint32_t scheme);

#endif /* BLOOMCTL_IMAGE_H */
