// SPDX-License-Identifier: GPL-2.0
/*
 * Keys as typed: checks, hex decoding, and streams cut into lines.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "keyparse.h"

/**
 * key_show() - user input, fit for a message on a terminal
 * @buf: KEY_SHOW_MAX bytes.
 * @s: the input: a key, a flow, an option's value.
 * @len: its length.
 *
 * At most its first 40 bytes, each byte not printable as \xNN (so that no
 * terminal control reaches the screen), and "..." if there was more.
 *
 * Return: @buf.
 */
char *key_show(char buf[KEY_SHOW_MAX], const void *s, size_t len)
{
	const unsigned char *in = s;
	size_t n = len > 40 ? 40 : len, i;
	char *p = buf;

	for (i = 0; i < n; i++) {
		if (in[i] >= 0x20 && in[i] < 0x7f)
			*p++ = in[i];
		else
			p += sprintf(p, "\\x%02x", in[i]);
	}
	strcpy(p, n < len ? "..." : "");
	return buf;
}

int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/**
 * key_check() - can this text be a key?
 * @s: the key as typed (a line, an argument).
 * @len: its length.
 * @hex: --hex: @s is hex digits, two per byte.
 * @klen: out, on KEY_OK: the key's length in bytes.
 * @where: out, on KEY_NOT_HEX: the offset of the first bad character.
 *
 * Return: KEY_OK, or what is wrong. Bad hex digits are reported before a
 * bad length, so that a line of text given to --hex says so.
 */
enum key_status key_check(const char *s, size_t len, bool hex, size_t *klen,
			  size_t *where)
{
	size_t i;

	if (!len)
		return KEY_EMPTY;
	if (hex && len % 2)
		return KEY_ODD_HEX;
	for (i = 0; hex && i < len; i++) {
		if (hex_digit(s[i]) < 0) {
			*where = i;
			return KEY_NOT_HEX;
		}
	}
	*klen = hex ? len / 2 : len;
	return *klen > KBLOOM_KEY_MAX ? KEY_TOO_LONG : KEY_OK;
}

/* The bytes of a key key_check() accepted, into @out (its klen bytes). */
void key_decode(const char *s, size_t len, bool hex, unsigned char *out)
{
	size_t i;

	if (!hex) {
		memcpy(out, s, len);
		return;
	}
	for (i = 0; i < len / 2; i++)
		out[i] = hex_digit(s[2 * i]) << 4 | hex_digit(s[2 * i + 1]);
}

/**
 * read_line() - the next line of the stream
 * @lr: the reader.
 * @line: out: the line, without its "\n" (or "\r\n"); it points into the
 *	buffer and is valid until the next call.
 * @len: out: its length.
 *
 * Lines are bounded, so that a stray binary file cannot eat all memory: a
 * line longer than LINE_MAX_BYTES is LINE_TOO_LONG whether or not its
 * "\n" happened to arrive in the same read, so that the answer does not
 * depend on how the input was cut into reads (a pipe, a file).
 *
 * Return: LINE_OK, LINE_EOF, LINE_TOO_LONG, or LINE_ERROR with errno set.
 */
/*
 * No "\n" among the @have bytes buffered: can the line still be short
 * enough? Its "\r\n" may be split between two reads, so one byte more is
 * allowed if it is a '\r'.
 */
static bool line_may_fit(const struct line_reader *lr, size_t have)
{
	if (have <= LINE_MAX_BYTES)
		return true;
	return have == LINE_MAX_BYTES + 1 && !lr->eof &&
	       lr->buf[lr->end - 1] == '\r';
}

int read_line(struct line_reader *lr, char **line, size_t *len)
{
	char *p, *nl;
	ssize_t n;

	for (;;) {
		p = lr->buf + lr->start;
		nl = memchr(p, '\n', lr->end - lr->start);
		if (nl) {
			*len = nl - p;
			if (*len && nl[-1] == '\r')
				(*len)--;
			if (*len > LINE_MAX_BYTES)
				return LINE_TOO_LONG;
			*line = p;
			lr->start = nl + 1 - lr->buf;
			lr->line++;
			return LINE_OK;
		}
		if (!line_may_fit(lr, lr->end - lr->start))
			return LINE_TOO_LONG;
		if (lr->eof) {
			if (lr->start == lr->end)
				return LINE_EOF;
			/* A last line without "\n". */
			*line = p;
			*len = lr->end - lr->start;
			lr->start = lr->end;
			lr->line++;
			return LINE_OK;
		}
		if (lr->start) {
			memmove(lr->buf, p, lr->end - lr->start);
			lr->end -= lr->start;
			lr->start = 0;
		}
		/* Never full here: at most LINE_MAX_BYTES + 1 are kept. */
		n = lr->read(lr->ctx, lr->buf + lr->end, lr->size - lr->end);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return LINE_ERROR;
		}
		if (!n)
			lr->eof = true;
		lr->end += n;
	}
}
