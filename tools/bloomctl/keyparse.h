/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Keys as typed: the checks and hex decoding of one key, and the splitting
 * of a stream into lines. No device here, so that the fuzz harnesses and
 * bloomctl run the same code.
 */
#ifndef BLOOMCTL_KEYPARSE_H
#define BLOOMCTL_KEYPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <linux/kbloom.h>

/* Input is read in big chunks; a line may hold a hex key and a '\r'. */
#define READ_BUF_SIZE		(1U << 20)
#define LINE_MAX_BYTES		(2 * KBLOOM_KEY_MAX + 1)

/* What is wrong with a key as typed. */
enum key_status {
	KEY_OK,
	KEY_EMPTY,		/* no bytes */
	KEY_ODD_HEX,		/* --hex: an odd number of digits */
	KEY_NOT_HEX,		/* --hex: a character that is no hex digit */
	KEY_TOO_LONG,		/* over KBLOOM_KEY_MAX bytes (decoded) */
};

/* Room for key_show(): 40 bytes of \xNN, "..." and the NUL. */
#define KEY_SHOW_MAX		(4 * 40 + 4)

int hex_digit(char c);
char *key_show(char buf[KEY_SHOW_MAX], const void *s, size_t len);
enum key_status key_check(const char *s, size_t len, bool hex, size_t *klen,
			  size_t *where);
void key_decode(const char *s, size_t len, bool hex, unsigned char *out);

/* Read up to @len bytes; 0 at end of input, -1 and errno on error. */
typedef ssize_t (*line_read_fn)(void *ctx, void *buf, size_t len);

/**
 * struct line_reader - a stream cut into lines
 * @read: where the bytes come from.
 * @ctx: its argument.
 * @buf: @size bytes, more than LINE_MAX_BYTES + 1.
 * @size: see @buf.
 * @start: the first byte not yet returned.
 * @end: the end of what was read.
 * @eof: @read said end of input.
 * @line: lines returned so far.
 */
struct line_reader {
	line_read_fn read;
	void *ctx;
	char *buf;
	size_t size;
	size_t start, end;
	bool eof;
	unsigned long long line;
};

enum { LINE_TOO_LONG = -2, LINE_ERROR = -1, LINE_EOF = 0, LINE_OK = 1 };

int read_line(struct line_reader *lr, char **line, size_t *len);

#endif /* BLOOMCTL_KEYPARSE_H */
