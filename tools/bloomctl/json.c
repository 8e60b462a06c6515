// SPDX-License-Identifier: GPL-2.0
/*
 * Minimal streaming JSON writer for bloomctl.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

void jw_init(struct jw *jw, FILE *out, bool pretty)
{
	jw->out = out;
	jw->pretty = pretty;
	jw->failed = false;
	jw->after_key = false;
	jw->depth = 0;
	jw->first[0] = true;
	jw->close[0] = 0;
}

static void jw_indent(struct jw *jw, int depth)
{
	int i;

	putc('\n', jw->out);
	for (i = 0; i < depth; i++)
		fputs("    ", jw->out);
}

/* Separator and indentation due before a value or a key. */
static void jw_prefix(struct jw *jw)
{
	if (jw->after_key) {
		jw->after_key = false;
		return;
	}
	if (jw->depth == 0)
		return;
	if (!jw->first[jw->depth])
		putc(',', jw->out);
	jw->first[jw->depth] = false;
	if (jw->pretty)
		jw_indent(jw, jw->depth);
}

static void jw_open(struct jw *jw, char open, char close)
{
	if (jw->failed)
		return;
	/* Nesting is fixed by the code, not by the input. */
	if (jw->depth + 1 >= JW_MAX_DEPTH)
		abort();
	jw_prefix(jw);
	putc(open, jw->out);
	jw->depth++;
	jw->first[jw->depth] = true;
	jw->close[jw->depth] = close;
}

static void jw_close(struct jw *jw)
{
	if (jw->failed)
		return;
	if (jw->depth == 0)
		abort();
	if (jw->pretty && !jw->first[jw->depth])
		jw_indent(jw, jw->depth - 1);
	putc(jw->close[jw->depth], jw->out);
	jw->depth--;
	if (jw->depth == 0)
		putc('\n', jw->out);
}

void jw_start_object(struct jw *jw)
{
	jw_open(jw, '{', '}');
}

void jw_end_object(struct jw *jw)
{
	jw_close(jw);
}

void jw_start_array(struct jw *jw)
{
	jw_open(jw, '[', ']');
}

void jw_end_array(struct jw *jw)
{
	jw_close(jw);
}

/*
 * Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0 if there is none.
 */
static size_t utf8_len(const unsigned char *s, size_t len)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;
		else if (s[0] == 0xed)
			hi = 0x9f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static void jw_write_string(struct jw *jw, const unsigned char *s, size_t len)
{
	FILE *f = jw->out;
	size_t i = 0, n;

	putc('"', f);
	while (i < len) {
		unsigned char c = s[i];

		switch (c) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (c >= 0x20 && c < 0x7f) {
				putc(c, f);
				break;
			}
			if (c >= 0x80) {
				n = utf8_len(s + i, len - i);
				if (n) {
					fwrite(s + i, 1, n, f);
					i += n;
					continue;
				}
			}
			/*
			 * Control characters, DEL and bytes that are not
			 * UTF-8: JSON text must be valid Unicode, so such a
			 * byte is written as the code point of equal value.
			 */
			fprintf(f, "\\u%04x", c);
			break;
		}
		i++;
	}
	putc('"', f);
}

void jw_key(struct jw *jw, const char *key)
{
	if (jw->failed)
		return;
	jw_prefix(jw);
	jw_write_string(jw, (const unsigned char *)key, strlen(key));
	fputs(jw->pretty ? ": " : ":", jw->out);
	jw->after_key = true;
}

void jw_bytes(struct jw *jw, const void *s, size_t len)
{
	if (jw->failed)
		return;
	jw_prefix(jw);
	jw_write_string(jw, s, len);
}

void jw_string(struct jw *jw, const char *s)
{
	jw_bytes(jw, s, strlen(s));
}

void jw_u64(struct jw *jw, uint64_t v)
{
	if (jw->failed)
		return;
	jw_prefix(jw);
	fprintf(jw->out, "%llu", (unsigned long long)v);
}

void jw_double(struct jw *jw, double v)
{
	if (jw->failed)
		return;
	/* JSON has no NaN or infinity. */
	if (!isfinite(v)) {
		jw_null(jw);
		return;
	}
	jw_prefix(jw);
	fprintf(jw->out, "%.10g", v);
}

void jw_bool(struct jw *jw, bool v)
{
	if (jw->failed)
		return;
	jw_prefix(jw);
	fputs(v ? "true" : "false", jw->out);
}

void jw_null(struct jw *jw)
{
	if (jw->failed)
		return;
	jw_prefix(jw);
	fputs("null", jw->out);
}

void jw_kv_string(struct jw *jw, const char *key, const char *s)
{
	jw_key(jw, key);
	jw_string(jw, s);
}

void jw_kv_u64(struct jw *jw, const char *key, uint64_t v)
{
	jw_key(jw, key);
	jw_u64(jw, v);
}

void jw_kv_double(struct jw *jw, const char *key, double v)
{
	jw_key(jw, key);
	jw_double(jw, v);
}

void jw_kv_bool(struct jw *jw, const char *key, bool v)
{
	jw_key(jw, key);
	jw_bool(jw, v);
}

void jw_kv_null(struct jw *jw, const char *key)
{
	jw_key(jw, key);
	jw_null(jw);
}

void jw_error(struct jw *jw, const char *msg)
{
	if (jw->failed)
		return;
	if (jw->after_key)
		jw_null(jw);
	/* An error inside an array: close it, report in the outer object. */
	while (jw->depth > 1)
		jw_close(jw);
	if (jw->depth == 0)
		jw_start_object(jw);
	jw_kv_string(jw, "error", msg);
	jw_end_object(jw);
	jw->failed = true;
}
