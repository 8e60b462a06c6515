// SPDX-License-Identifier: GPL-2.0
/*
 * Harness (a): bloomctl's image reader (tools/bloomctl/image.c) over any
 * bytes: header checks, the kernel's parameter rules built in, the
 * streaming CRC, inflate, size and padding checks.
 *
 * Besides "no crash, no leak, no undefined behaviour", it checks that:
 *  - load (keeping the payload) and inspect (streaming it) judge every
 *    input alike, with the same message, and count the same bits;
 *  - the verdict does not depend on how the input is cut into reads;
 *  - what is accepted is what the kernel would accept (its own
 *    kbloom_params_valid(), payload size and kbloom_core_padding_clear());
 *  - what is accepted, written again as save writes it, plain and
 *    compressed, reads back to the same payload: save never writes what
 *    load refuses.
 */
#include <stdbool.h>

#include <linux/kbloom.h>

#include "fuzz.h"
#include "image.h"
#include "sizing.h"

/* Enough for every layout and size rule; small enough to run fast. */
#define FUZZ_MAX_PAYLOAD	(1U << 20)

static void reader_init(struct img_reader *rd, bool keep)
{
	memset(rd, 0, sizeof(*rd));
	rd->file = "fuzz";
	rd->max_payload = FUZZ_MAX_PAYLOAD;
	rd->max_payload_src = "the harness";
	rd->keep_payload = keep;
}

/* The accepted image, as save would write it again: it must read back. */
static void check_rewrite(const struct img_reader *rd, bool compress)
{
	unsigned char h[IMG_HEADER_SIZE], *z = NULL;
	const unsigned char *stored = rd->payload;
	struct image img = rd->img;
	struct img_reader again;
	char err[256];

	img.compression = IMG_COMPRESS_NONE;
	img.stored_len = img.payload_len;
	if (compress) {
		CHECK(!img_deflate(rd->payload, img.payload_len, &z,
				   &img.stored_len, err, sizeof(err)));
		img.compression = IMG_COMPRESS_ZLIB;
		stored = z;
	}
	img.crc = 0;
	img_encode_header(h, &img);
	img.crc = crc32c(crc32c(0, h, sizeof(h)), stored, img.stored_len);
	img_encode_header(h, &img);
	reader_init(&again, true);
	if (img_read_parts(&again, h, sizeof(h), stored, img.stored_len)) {
		fprintf(stderr, "rewritten image refused: %s\n", again.err);
		abort();
	}
	CHECK(!memcmp(again.payload, rd->payload, img.payload_len));
	CHECK(again.set == rd->set && again.saturated == rd->saturated);
	img_reader_release(&again);
	free(z);
}

/* Accepted: then the kernel, from its own code, would accept it too. */
static void check_accepted(const struct img_reader *rd, size_t size)
{
	const struct image *img = &rd->img;
	uint64_t *words;

	CHECK(img->version == IMG_VERSION);
	CHECK(img->hash_scheme == KBLOOM_HASH_JHASH ||
	      img->hash_scheme == KBLOOM_HASH_SIPHASH);
	CHECK(img->hash_scheme == KBLOOM_HASH_SIPHASH ||
	      (!img->seed_hi[0] && !img->seed_hi[1]));
	CHECK(sizing_params_valid(img->bits, img->hashes, img->flags,
				  img->capacity, img->fpr_ppb, NULL, 0));
	CHECK(img->payload_len == sizing_bytes(img->bits, img->flags));
	CHECK(img->payload_len <= FUZZ_MAX_PAYLOAD);
	CHECK(rd->file_bytes == size);
	CHECK(rd->set <= img->bits && rd->saturated <= rd->set);
	/* The core reads words: give it an aligned copy. */
	words = malloc(img->payload_len);
	CHECK(words);
	memcpy(words, rd->payload, img->payload_len);
	CHECK(sizing_padding_clear(words, img->bits, img->flags));
	free(words);
	check_rewrite(rd, false);
	check_rewrite(rd, true);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct img_reader load, inspect, cut;
	struct fuzz_src src = { data, size, 1 + size % 4099, size * 2 + 1 };
	int a, b, c;

	reader_init(&load, true);
	reader_init(&inspect, false);
	reader_init(&cut, false);
	a = img_read_mem(&load, data, size);
	b = img_read_mem(&inspect, data, size);
	c = img_read(&cut, fuzz_read, &src);
	CHECK(a == b && b == c);
	if (a) {
		CHECK(!strcmp(load.err, inspect.err));
		CHECK(!strcmp(load.err, cut.err));
		CHECK(!load.payload);
		return 0;
	}
	CHECK(load.set == inspect.set && load.set == cut.set);
	CHECK(load.saturated == inspect.saturated);
	CHECK(!inspect.payload);
	check_accepted(&load, size);
	img_reader_release(&load);
	return 0;
}
