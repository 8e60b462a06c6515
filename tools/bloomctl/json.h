/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal streaming JSON writer for bloomctl, after bpftool's json_writer:
 * values are written as they come, so that a query over millions of keys
 * needs no memory for its output.
 */
#ifndef BLOOMCTL_JSON_H
#define BLOOMCTL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* bloomctl nests at most three levels deep; more is a programming error. */
#define JW_MAX_DEPTH	8

struct jw {
	FILE *out;
	bool pretty;
	/* An error object was written: drop everything after it. */
	bool failed;
	/* A key was written and its value is still to come. */
	bool after_key;
	int depth;
	bool first[JW_MAX_DEPTH];
	char close[JW_MAX_DEPTH];
};

void jw_init(struct jw *jw, FILE *out, bool pretty);
void jw_start_object(struct jw *jw);
void jw_end_object(struct jw *jw);
void jw_start_array(struct jw *jw);
void jw_end_array(struct jw *jw);
void jw_key(struct jw *jw, const char *key);
void jw_string(struct jw *jw, const char *s);
void jw_bytes(struct jw *jw, const void *s, size_t len);
void jw_u64(struct jw *jw, uint64_t v);
void jw_double(struct jw *jw, double v);
void jw_bool(struct jw *jw, bool v);
void jw_null(struct jw *jw);

void jw_kv_string(struct jw *jw, const char *key, const char *s);
void jw_kv_u64(struct jw *jw, const char *key, uint64_t v);
void jw_kv_double(struct jw *jw, const char *key, double v);
void jw_kv_bool(struct jw *jw, const char *key, bool v);
void jw_kv_null(struct jw *jw, const char *key);

/*
 * Report an error: closes whatever is open and ends the top-level object
 * with an "error" member, or writes {"error":msg} if nothing was written,
 * so that stdout always holds exactly one JSON object. Only the first
 * error is written.
 */
void jw_error(struct jw *jw, const char *msg);

#endif /* BLOOMCTL_JSON_H */
