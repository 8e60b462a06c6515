// SPDX-License-Identifier: GPL-2.0
/*
 * Harness (b): bloomctl's key parsers (tools/bloomctl/keyparse.c): the
 * splitting of streamed input into lines and the checks and hex decoding
 * of each key.
 *
 * Input: one byte of options (bit 0: --hex; the rest seed how the stream
 * is cut into reads), then the stream. Each line and verdict is compared
 * with a plain reference written from bloomctl(8): lines end at "\n", a
 * "\r" before it is not part of the key, a last line needs no "\n", a line
 * of more than LINE_MAX_BYTES is refused; so, whatever the reads and the
 * buffer size, the reader must give exactly those lines.
 */
#include <ctype.h>
#include <stdbool.h>

#include "fuzz.h"
#include "keyparse.h"

/* The reference: the next line of data[*pos..n), or LINE_TOO_LONG/EOF. */
static int ref_line(const uint8_t *data, size_t n, size_t *pos,
		    const uint8_t **line, size_t *len)
{
	const uint8_t *p = data + *pos, *nl;

	if (*pos == n)
		return LINE_EOF;
	nl = memchr(p, '\n', n - *pos);
	*line = p;
	if (nl) {
		*len = nl - p;
		if (*len && nl[-1] == '\r')
			(*len)--;
		*pos = nl + 1 - data;
	} else {
		*len = n - *pos;
		*pos = n;
	}
	return *len > LINE_MAX_BYTES ? LINE_TOO_LONG : LINE_OK;
}

/* The reference verdict on one key. */
static enum key_status ref_key(const char *s, size_t len, bool hex,
			       size_t *where)
{
	size_t i;

	if (!len)
		return KEY_EMPTY;
	if (hex && len % 2)
		return KEY_ODD_HEX;
	for (i = 0; hex && i < len; i++) {
		if (!isxdigit((unsigned char)s[i])) {
			*where = i;
			return KEY_NOT_HEX;
		}
	}
	return (hex ? len / 2 : len) > KBLOOM_KEY_MAX ? KEY_TOO_LONG : KEY_OK;
}

static void check_key(const char *s, size_t len, bool hex)
{
	static unsigned char out[KBLOOM_KEY_MAX];
	size_t klen = 0, where = 0, rwhere = 0, i;
	enum key_status st = key_check(s, len, hex, &klen, &where);
	unsigned int byte;
	char two[3] = { 0 };

	CHECK(st == ref_key(s, len, hex, &rwhere));
	if (st == KEY_NOT_HEX)
		CHECK(where == rwhere);
	if (st != KEY_OK)
		return;
	CHECK(klen == (hex ? len / 2 : len) && klen <= KBLOOM_KEY_MAX);
	key_decode(s, len, hex, out);
	for (i = 0; i < klen; i++) {
		if (!hex) {
			CHECK(out[i] == (unsigned char)s[i]);
			continue;
		}
		memcpy(two, s + 2 * i, 2);
		CHECK(sscanf(two, "%2x", &byte) == 1 && out[i] == byte);
	}
}

/* Split the stream with a buffer of @size bytes and reads of 1 to @max. */
static void split(const uint8_t *data, size_t n, bool hex, size_t size,
		  size_t max, uint64_t seed)
{
	struct fuzz_src src = { data, n, max, seed | 1 };
	static char *big;
	struct line_reader lr = {
		.read = fuzz_read, .ctx = &src, .size = size,
	};
	const uint8_t *want;
	size_t pos = 0, len, wlen;
	int ret, ref;
	char *line;

	/* The big buffer once: a fresh megabyte per input is slow in ASan. */
	if (size == READ_BUF_SIZE) {
		if (!big)
			big = malloc(READ_BUF_SIZE);
		lr.buf = big;
	} else {
		lr.buf = malloc(size);
	}
	CHECK(lr.buf);
	do {
		ret = read_line(&lr, &line, &len);
		ref = ref_line(data, n, &pos, &want, &wlen);
		CHECK(ret == ref);
		if (ret != LINE_OK)
			break;
		CHECK(len == wlen && !memcmp(line, want, len));
		check_key(line, len, hex);
	} while (1);
	if (lr.buf != big)
		free(lr.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool hex;
	uint8_t opt;

	if (!size)
		return 0;
	opt = data[0];
	hex = opt & 1;
	data++;
	size--;
	/* As bloomctl reads: a big buffer, reads of any size. */
	split(data, size, hex, READ_BUF_SIZE, 1 + size, opt);
	/* The smallest buffer allowed, and small reads: every memmove. */
	split(data, size, hex, LINE_MAX_BYTES + 2 + opt % 7, 1 + opt % 61,
	      opt * 2654435761ULL);
	return 0;
}
