// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's state, for `bloomsync status`: a text file,
 * STATE_DIR/FILTER.state, written whole and renamed into place (bloomctl's
 * write_file_atomic()) once a second, one record a line:
 *
 *	bloomsync-state 1
 *	filter NAME
 *	host HOST
 *	updated_ms MS			CLOCK_REALTIME of the write
 *	fleet NAME bits M set X generations G max_fill PERCENT
 *	publish seq N msgs N bytes N snapshots N deltas N blocks N failures N
 *		last_ms MS image_bytes N snapshot_bytes N	(one line)
 *	peer HOST seq N synced 0|1 last_ms MS msgs N bytes N snapshots N gaps N refused N bad N
 *
 * (fleet and peer lines from a subscriber, publish from a publisher).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sync.h"

static char *state_path(const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s.state", g.state_dir, name) < 0)
		return NULL;
	return p;
}

int write_status(const struct publisher *p, const struct subscriber *s,
		 const char *name, struct fleet *fleet)
{
	char *buf = NULL, *path;
	size_t len = 0;
	uint64_t set = 0;
	FILE *f = open_memstream(&buf, &len);
	size_t i;
	int ret;

	if (!f)
		return -1;
	fprintf(f, "bloomsync-state 1\nfilter %s\nhost %s\nupdated_ms %" PRIu64 "\n",
		name, g.host, realtime_now_ms());
	if (fleet && !fleet_fill(fleet, &set))
		fprintf(f, "fleet %s bits %" PRIu64 " set %" PRIu64 " generations %u max_fill %u\n",
			fleet->name, fleet->bits, set, fleet->generations,
			fleet->max_fill);
	if (p)
		fprintf(f, "publish seq %" PRIu64 " msgs %" PRIu64 " bytes %" PRIu64 " snapshots %" PRIu64 " deltas %" PRIu64 " blocks %" PRIu64 " failures %" PRIu64 " last_ms %" PRIu64 " image_bytes %" PRIu64 " snapshot_bytes %" PRIu64 "\n",
			p->seq, p->msgs, p->bytes, p->snapshots, p->deltas,
			p->blocks, p->failures, p->last_ms, p->image_bytes,
			p->snapshot_bytes);
	for (i = 0; s && i < s->npeers; i++) {
		const struct peer *q = &s->peers[i];

		fprintf(f, "peer %s seq %" PRIu64 " synced %d last_ms %" PRIu64 " msgs %" PRIu64 " bytes %" PRIu64 " snapshots %" PRIu64 " gaps %" PRIu64 " refused %" PRIu64 " bad %" PRIu64 "\n",
			q->host, q->applied, q->synced && !q->refused_since,
			q->last_ms, q->msgs,
			q->bytes, q->snapshots, q->gaps, q->refused, q->bad);
	}
	if (fclose(f)) {
		free(buf);
		return -1;
	}
	mkdir(g.state_dir, 0755);
	path = state_path(name);
	ret = path ? write_file_atomic(path, 0644, buf, len, NULL, 0) : -1;
	free(path);
	free(buf);
	return ret;
}

/* "key value key value ..." after the first word: the value of @key. */
static bool field(const char *line, const char *key, uint64_t *v)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), " %s ", key);
	p = strstr(line, pat);
	if (!p)
		return false;
	*v = strtoull(p + strlen(pat), NULL, 10);
	return true;
}

static double lag_s(uint64_t now, uint64_t last)
{
	return last && now > last ? (now - last) / 1000.0 : 0;
}

int cmd_status(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { COMMON_LONGOPTS,
						   END_LONGOPTS };
	char line[1024], word[64], host[WIRE_HOST_MAX + 1], *path;
	uint64_t now = realtime_now_ms(), updated = 0, v, bits = 0, set = 0;
	uint64_t seq, last, bytes, msgs, gaps, refused, synced, snaps;
	const char *name;
	bool fleet_seen = false;
	FILE *f;
	int ret;

	ret = parse_options(cmd, argc, argv, longopts, NULL, NULL);
	if (ret >= 0)
		return ret;
	name = get_name_arg(cmd, argc, argv);
	if (!name)
		return EXIT_ERROR;
	path = state_path(name);
	f = path ? fopen(path, "r") : NULL;
	if (!f) {
		pr_err("filter '%s': no state in %s (%s): is bloomsync running for it?",
		       name, path ? path : g.state_dir, strerror(errno));
		free(path);
		return EXIT_ERROR;
	}
	free(path);
	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, "filter", name);
		jw_key(jw, "peers");
		jw_start_array(jw);
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%63s", word) != 1)
			continue;
		if (!strcmp(word, "updated_ms")) {
			updated = strtoull(line + 11, NULL, 10);
		} else if (!strcmp(word, "fleet")) {
			fleet_seen = field(line, "bits", &bits) &&
				     field(line, "set", &set);
		} else if (!strcmp(word, "publish") && !jw) {
			field(line, "seq", &seq);
			field(line, "bytes", &bytes);
			field(line, "snapshots", &snaps);
			printf("published: seq %" PRIu64 ", %" PRIu64 " bytes, %" PRIu64 " snapshots\n",
			       seq, bytes, snaps);
		} else if (!strcmp(word, "peer") &&
			   sscanf(line, "peer %255s", host) == 1) {
			seq = last = bytes = msgs = gaps = refused = synced = 0;
			field(line, "seq", &seq);
			field(line, "last_ms", &last);
			field(line, "bytes", &bytes);
			field(line, "msgs", &msgs);
			field(line, "gaps", &gaps);
			field(line, "refused", &refused);
			field(line, "synced", &synced);
			if (jw) {
				jw_start_object(jw);
				jw_kv_string(jw, "host", host);
				jw_kv_double(jw, "lag_s", lag_s(now, last));
				jw_kv_u64(jw, "seq", seq);
				jw_kv_u64(jw, "bytes", bytes);
				jw_kv_u64(jw, "msgs", msgs);
				jw_kv_u64(jw, "gaps", gaps);
				jw_kv_u64(jw, "refused", refused);
				jw_kv_bool(jw, "synced", synced);
				jw_end_object(jw);
			} else {
				printf("peer %s: lag %.1fs, seq %" PRIu64 ", %" PRIu64 " bytes in %" PRIu64 " messages, %s, %" PRIu64 " gaps, %" PRIu64 " blocks refused\n",
				       host, lag_s(now, last), seq, bytes, msgs,
				       synced ? "in sync" : "out of sync",
				       gaps, refused);
			}
		}
	}
	fclose(f);
	v = lag_s(now, updated) > 10;
	if (jw) {
		jw_end_array(jw);
		if (fleet_seen) {
			jw_kv_u64(jw, "fleet_bits", bits);
			jw_kv_u64(jw, "fleet_set", set);
			jw_kv_double(jw, "fleet_fill",
				     bits ? (double)set / bits : 0);
		}
		jw_kv_double(jw, "state_age_s", lag_s(now, updated));
		jw_kv_bool(jw, "stale", v);
		jw_end_object(jw);
		fputc('\n', stdout);
	} else {
		if (fleet_seen)
			printf("fleet filter: %" PRIu64 " of %" PRIu64 " bits set (%.2f%%)\n",
			       set, bits, bits ? 100.0 * set / bits : 0);
		if (v)
			printf("state is %.0fs old: is the daemon running?\n",
			       lag_s(now, updated));
	}
	return v ? EXIT_NEGATIVE : 0;
}
