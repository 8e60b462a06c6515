// SPDX-License-Identifier: GPL-2.0
/* Clocks, durations, the daemon's log lines and lists of blocks. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bloomsync.h"

uint64_t realtime_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A duration as bloomctl takes them (500ms, 2s, 1m, 1h), in ms, not 0. */
int parse_ms(const char *opt, const char *s, uint64_t *ms)
{
	uint32_t v;

	if (parse_duration(opt, s, &v))
		return -1;
	if (!v) {
		pr_err("%s: must not be 0", opt);
		return -1;
	}
	*ms = v;
	return 0;
}

/*
 * A line for the journal (stderr under systemd): what the daemon did or
 * refused, naming the filter, the peer and the sequence number.
 */
void logmsg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * @s with the userinfo of every URL in it left out ("nats://joe:pw@host"
 * is "nats://host"): user names, passwords and tokens are never printed.
 * In one of four static buffers: four calls may share one printf.
 */
const char *url_public(const char *s)
{
	static char bufs[4][1024];
	static unsigned int next;
	char *buf = bufs[next++ % 4];
	size_t n = 0;

	while (*s && n < sizeof(bufs[0]) - 1) {
		const char *at, *end;

		if (strncmp(s, "://", 3)) {
			buf[n++] = *s++;
			continue;
		}
		for (end = s + 3; *end && !strchr("/?#, \t\n", *end); end++)
			;
		at = memrchr(s + 3, '@', end - (s + 3));
		if (at) {
			n += snprintf(buf + n, sizeof(bufs[0]) - n, "://");
			s = at + 1;
		} else {
			buf[n++] = *s++;
		}
		if (n >= sizeof(bufs[0]))
			n = sizeof(bufs[0]) - 1;
	}
	buf[n] = 0;
	return buf;
}

/*
 * Whether to log one more line of @r's: the first RATELOG_N a minute;
 * the lines left out are counted, and the count logged when the next
 * minute's first line is.
 */
bool ratelog_ok(struct ratelog *r, const char *filter, const char *who)
{
	uint64_t now = monotonic_ms();

	if (!r->start_ms || now - r->start_ms >= 60000) {
		if (r->dropped)
			logmsg("filter '%s': %s: %" PRIu64 " more lines like the next not logged in the last minute",
			       filter, who, r->dropped);
		r->start_ms = now;
		r->n = 0;
		r->dropped = 0;
	}
	if (r->n < RATELOG_N) {
		r->n++;
		return true;
	}
	r->dropped++;
	return false;
}

int recs_push(struct recs *r, const struct rec *x)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		struct rec *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -1;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = *x;
	return 0;
}

void recs_free(struct recs *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}
