// SPDX-License-Identifier: GPL-2.0
/*
 * Subscribing to the other hosts' changes of a filter: one ordered
 * consumer of kbloom.FILTER.* that starts at the earliest of the hosts'
 * latest snapshots (each message names the stream sequence of its host's
 * latest snapshot, in the Kbloom-Snapshot header), so that every host is
 * taken from its latest snapshot and the deltas after it; a host's
 * messages before its snapshot are skipped. Then, per host:
 *
 *  - a sequence number already taken is a duplicate, skipped;
 *  - a snapshot's chunks are put together and, once all are there, the
 *    image is checked (bloomctl's reader), turned into blocks (zero blocks
 *    left out) and applied: the host is then in sync;
 *  - a delta's blocks are applied at once (OR: late or twice is harmless);
 *    if its number is not the next one, some of the host's changes were
 *    lost (the stream's limits, a failed publish): the host is out of sync
 *    until its next snapshot, which is asked for at once on the subject
 *    kbloomreq.FILTER.HOST (at most every 5 s) rather than waited for.
 *
 * This host's own subject is skipped: the publisher applies its blocks to
 * the fleet filter itself. After a reconnection the consumer is made
 * again from the last stream sequence seen.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync.h"

#define REQ_EVERY_MS	5000
/* Most messages, and ms past the wait, that one poll takes. */
#define POLL_MAX_MSGS	2000
#define POLL_MAX_MS	200

static struct peer *find_peer(struct subscriber *s, const char *host,
			      bool create)
{
	struct peer *v;
	size_t i;

	for (i = 0; i < s->npeers; i++)
		if (!strcmp(s->peers[i].host, host))
			return &s->peers[i];
	if (!create)
		return NULL;
	v = realloc(s->peers, (s->npeers + 1) * sizeof(*v));
	if (!v)
		return NULL;
	s->peers = v;
	v = &s->peers[s->npeers++];
	memset(v, 0, sizeof(*v));
	snprintf(v->host, sizeof(v->host), "%s", host);
	return v;
}

static void request_snapshot(struct subscriber *s, struct peer *p)
{
	char ftok[64], htok[300], subj[400];
	uint64_t now = monotonic_ms();

	if (p->last_req_ms && now - p->last_req_ms < REQ_EVERY_MS)
		return;
	p->last_req_ms = now;
	if (subject_token(ftok, sizeof(ftok), s->name) ||
	    subject_token(htok, sizeof(htok), p->host))
		return;
	snprintf(subj, sizeof(subj), "%s.%s.%s", REQ_PREFIX, ftok, htok);
	natsConnection_PublishString(s->c->nc, subj, "");
}

static void apply_recs(struct subscriber *s, struct peer *p,
		       const struct rec *r, size_t n, uint64_t fp,
		       uint64_t seq)
{
	struct apply_stat st = { 0 };
	char from[WIRE_HOST_MAX + 16];

	snprintf(from, sizeof(from), "host %s", p->host);
	s->fleet->rl = &p->rl;
	fleet_apply(s->fleet, r, n, fp, from, seq, &st);
	s->fleet->rl = NULL;
	p->refused += st.refused;
	/* Its blocks missing from the fleet filter: not in sync (shown so
	 * in status; not asked for a snapshot, which would be refused too). */
	if (st.refused)
		p->refused_since = true;
	p->bad += st.bad;
}

static void take_delta(struct subscriber *s, struct peer *p,
		       const struct wire_hdr *h, const unsigned char *body)
{
	struct recs rs = { 0 };
	struct rec r;
	uint32_t i;

	if (h->seq != p->applied + 1 && (p->synced || p->applied)) {
		p->gaps++;
		if (ratelog_ok(&p->rl, s->name, p->host))
			logmsg("filter '%s': host %s: gap, sequence %" PRIu64 " after %" PRIu64 ": out of sync until its next snapshot (asked for)",
		       s->name, p->host, h->seq, p->applied);
		p->synced = false;
	}
	/* A host's first message ever: nothing came before it. */
	if (h->seq == 1)
		p->synced = true;
	if (!p->synced)
		request_snapshot(s, p);
	p->applied = h->seq;
	for (i = 0; i < h->count; i++) {
		wire_decode_rec(body + (size_t)i * WIRE_REC, &r);
		if (recs_push(&rs, &r))
			break;
	}
	apply_recs(s, p, rs.v, rs.n, h->fingerprint, h->seq);
	recs_free(&rs);
}

static void end_snapshot(struct peer *p)
{
	free(p->snap_buf);
	p->snap_buf = NULL;
	p->snap_len = p->snap_cap = 0;
	p->assembling = false;
}

/*
 * A snapshot refused before it is decompressed or applied: logged once
 * per host (until one of its snapshots is taken), counted as bad, and
 * the rest of its chunks skipped. The host is out of sync; asking again
 * would get the same snapshot.
 */
static void refuse_snapshot(struct subscriber *s, struct peer *p,
			    const char *why)
{
	p->bad++;
	if (!p->snap_logged)
		logmsg("filter '%s': host %s: snapshot at sequence %" PRIu64 " refused: %s (no more of its snapshots are logged until one is taken)",
		       s->name, p->host, p->snap_first, why);
	p->snap_logged = true;
	p->snap_skip = p->snap_first;
	p->synced = false;
	end_snapshot(p);
}

/*
 * The image header at the start of a snapshot: of the fleet filter's own
 * shape (bits, hashes, layout, scheme, seed, window, generations) and
 * payload size, or @why says what is not. 1: not all of it here yet.
 */
static int snapshot_header(const struct subscriber *s, const unsigned char *b,
			   size_t len, char *why, size_t whylen)
{
	const struct fleet *f = s->fleet;
	struct shape theirs;
	struct image img;
	char diff[512];

	if (len < IMG_HEADER_SIZE)
		return 1;
	if (memcmp(b, IMG_MAGIC, IMG_MAGIC_LEN)) {
		snprintf(why, whylen, "not a filter image");
		return -1;
	}
	img_decode_header(b, &img);
	if (img.version < IMG_VERSION || img.version > IMG_VERSION_SCHEDULE) {
		snprintf(why, whylen, "image version %" PRIu32, img.version);
		return -1;
	}
	if (len < img_header_len(&img))
		return 1;
	img_decode_header(b, &img);
	shape_of_image(&img, &theirs);
	if (shape_diff(&f->shape, &theirs, diff, sizeof(diff))) {
		snprintf(why, whylen, "not the fleet filter's shape: %s", diff);
		return -1;
	}
	if (img.payload_len != f->payload_bytes ||
	    img.stored_len > img_zlib_bound(f->payload_bytes)) {
		snprintf(why, whylen, "payload of %" PRIu64 " bytes (%" PRIu64 " stored), the fleet filter's is %" PRIu64,
			 img.payload_len, img.stored_len, f->payload_bytes);
		return -1;
	}
	return 0;
}

/* A whole snapshot: check the image, apply its blocks. */
static void apply_snapshot(struct subscriber *s, struct peer *p,
			   const struct wire_hdr *h)
{
	struct img_reader rd = { 0 };
	struct recs rs = { 0 };
	char why[768];

	switch (snapshot_header(s, p->snap_buf, p->snap_len, why,
				sizeof(why))) {
	case 0:
		break;
	case 1:
		snprintf(why, sizeof(why), "an image of %zu bytes", p->snap_len);
		/* fall through */
	default:
		refuse_snapshot(s, p, why);
		return;
	}
	rd.file = "the snapshot";
	rd.max_payload = s->fleet->payload_bytes;
	rd.max_payload_src = "the fleet filter's image";
	rd.keep_payload = true;
	if (img_read_mem(&rd, p->snap_buf, p->snap_len)) {
		p->bad++;
		if (ratelog_ok(&p->rl, s->name, p->host))
			logmsg("filter '%s': host %s: snapshot at sequence %" PRIu64 " refused: %s",
		       s->name, p->host, p->snap_first, rd.err);
	} else if (image_to_recs(&rd.img, rd.payload, &rs) == (size_t)-1) {
		logmsg("filter '%s': host %s: snapshot: %s", s->name, p->host,
		       strerror(ENOMEM));
	} else {
		p->refused_since = false;
		apply_recs(s, p, rs.v, rs.n, h->fingerprint, h->seq);
		p->snapshots++;
		p->snap_logged = false;
		if (!p->synced && p->gaps)
			logmsg("filter '%s': host %s: in sync again from its snapshot at sequence %" PRIu64,
			       s->name, p->host, p->snap_first);
		p->synced = true;
	}
	recs_free(&rs);
	img_reader_release(&rd);
	end_snapshot(p);
}

/* The most bytes a snapshot of the fleet filter's image may take. */
static uint64_t snapshot_max_bytes(const struct subscriber *s)
{
	return IMG_HEADER_MAX + img_zlib_bound(s->fleet->payload_bytes);
}

/*
 * The most chunks it may come in: its bytes in the smallest chunks a
 * publisher makes (chunk_room() in publish.c with the longest host name),
 * on a server whose max_payload is at least 64 KiB.
 */
static uint64_t snapshot_max_chunks(const struct subscriber *s)
{
	int64_t mp = s->c->max_payload > 0 ? s->c->max_payload : 1 << 20;
	uint64_t room;

	if (mp > 64 << 10)
		mp = 64 << 10;
	if (mp <= WIRE_FIXED + WIRE_HOST_MAX + 1 + SNAP_HEADROOM)
		return UINT32_MAX;
	room = (uint64_t)mp - (WIRE_FIXED + WIRE_HOST_MAX + 1) - SNAP_HEADROOM;
	return (snapshot_max_bytes(s) + room - 1) / room;
}

static void take_chunk(struct subscriber *s, struct peer *p,
		       const struct wire_hdr *h, const unsigned char *body,
		       size_t len)
{
	char why[768];

	if (!h->count) {
		end_snapshot(p);
		p->assembling = true;
		p->snap_first = h->seq;
		p->snap_chunks = h->chunks;
		p->snap_got = 0;
		if (h->chunks > snapshot_max_chunks(s)) {
			snprintf(why, sizeof(why), "%" PRIu32 " chunks, the fleet filter's image needs at most %" PRIu64,
				 h->chunks, snapshot_max_chunks(s));
			p->applied = h->seq;
			refuse_snapshot(s, p, why);
			return;
		}
		/* Its image's header: checked before any more is taken. */
		if (snapshot_header(s, body, len, why, sizeof(why)) < 0) {
			p->applied = h->seq;
			refuse_snapshot(s, p, why);
			return;
		}
	} else if (p->snap_skip && h->first_seq == p->snap_skip) {
		/* The rest of a refused snapshot. */
		p->applied = h->seq;
		return;
	} else if (!p->assembling || h->first_seq != p->snap_first ||
		   h->count != p->snap_got || h->chunks != p->snap_chunks) {
		/* A piece of a snapshot whose beginning we did not see. */
		end_snapshot(p);
		if (h->seq != p->applied + 1 && p->synced) {
			p->gaps++;
			p->synced = false;
			request_snapshot(s, p);
		}
		p->applied = h->seq;
		return;
	}
	if (len > snapshot_max_bytes(s) - p->snap_len) {
		snprintf(why, sizeof(why), "more than the %" PRIu64 " bytes the fleet filter's image may take",
			 snapshot_max_bytes(s));
		p->applied = h->seq;
		refuse_snapshot(s, p, why);
		return;
	}
	if (p->snap_len + len > p->snap_cap) {
		size_t cap = (p->snap_len + len) * 2;
		unsigned char *b;

		if (cap > snapshot_max_bytes(s))
			cap = snapshot_max_bytes(s);
		b = realloc(p->snap_buf, cap);
		if (!b) {
			end_snapshot(p);
			return;
		}
		p->snap_buf = b;
		p->snap_cap = cap;
	}
	memcpy(p->snap_buf + p->snap_len, body, len);
	p->snap_len += len;
	p->snap_got++;
	p->applied = h->seq;
	if (p->snap_got == p->snap_chunks)
		apply_snapshot(s, p, h);
}

static void take_msg(struct subscriber *s, natsMsg *m)
{
	const unsigned char *body;
	jsMsgMetaData *meta = NULL;
	char host[WIRE_HOST_MAX + 1], err[256];
	uint64_t ss = 0;
	struct wire_hdr h;
	struct peer *p;
	size_t blen;

	if (natsMsg_GetMetaData(&meta, m) == NATS_OK) {
		ss = meta->Sequence.Stream;
		jsMsgMetaData_Destroy(meta);
	}
	if (ss)
		s->last_stream_seq = ss;
	if (subject_host(natsMsg_GetSubject(m), host, sizeof(host)) ||
	    !strcmp(host, g.host))
		return;
	p = find_peer(s, host, true);
	if (!p)
		return;
	if (ss && ss < p->start_stream_seq)
		return;
	if (wire_decode((const void *)natsMsg_GetData(m),
			natsMsg_GetDataLength(m), &h, &body, &blen, err,
			sizeof(err)) ||
	    (strcmp(h.host, host) &&
	     snprintf(err, sizeof(err), "it says it is from host '%s'",
		      h.host))) {
		p->bad++;
		if (ratelog_ok(&p->rl, s->name, p->host))
			logmsg("filter '%s': %s: message %" PRIu64 " refused: %s",
		       s->name, natsMsg_GetSubject(m), ss, err);
		return;
	}
	if (h.seq <= p->applied &&
	    (h.seq == 1 || (h.kind == WIRE_SNAPSHOT && !h.count))) {
		/*
		 * Not a duplicate: the host started its sequence over (its
		 * subject was empty when it started: purged, or it was away
		 * longer than the stream's max age), and begins with a
		 * snapshot. Messages are never delivered twice, nor a number
		 * reused, so nothing before can come again.
		 */
		logmsg("filter '%s': host %s: started over at sequence %" PRIu64 " (after %" PRIu64 "): taken from there",
		       s->name, p->host, h.seq, p->applied);
		end_snapshot(p);
		p->applied = h.seq - 1;
		p->synced = false;
		p->snap_skip = 0;
		p->restarts++;
	}
	if (h.seq <= p->applied)
		return;
	p->msgs++;
	p->bytes += natsMsg_GetDataLength(m);
	p->last_ms = realtime_now_ms();
	if (h.kind == WIRE_DELTA) {
		unsigned char *buf;
		const unsigned char *recs = wire_delta_records(&h, body, blen,
							       &buf, err,
							       sizeof(err));

		if (recs) {
			take_delta(s, p, &h, recs);
		} else {
			/* Its blocks are lost: as a gap. */
			p->bad++;
			if (ratelog_ok(&p->rl, s->name, p->host))
				logmsg("filter '%s': host %s: message %" PRIu64 " refused: %s",
			       s->name, p->host, h.seq, err);
			p->applied = h.seq;
			p->synced = false;
			request_snapshot(s, p);
		}
		free(buf);
	} else {
		take_chunk(s, p, &h, body, blen);
	}
}

/* Wait up to @timeout_ms for messages; take what came, at most POLL_MAX_*. */
int sub_poll(struct subscriber *s, int64_t timeout_ms)
{
	natsMsg *m = NULL;
	uint64_t start;
	unsigned int taken = 0;
	natsStatus st;

	if (s->c->reconnected) {
		/* The server may have lost the consumer: make it again. */
		s->c->reconnected = 0;
		natsSubscription_Destroy(s->sub);
		s->sub = NULL;
		if (nconn_subscribe(s->c, s->filter_subject,
				    s->last_stream_seq + 1, &s->sub))
			return -1;
	}
	if (!s->sub) {
		if (nconn_subscribe(s->c, s->filter_subject,
				    s->last_stream_seq + 1, &s->sub))
			return -1;
	}
	start = monotonic_ms();
	st = natsSubscription_NextMsg(&m, s->sub, timeout_ms > 0 ? timeout_ms : 1);
	while (st == NATS_OK) {
		take_msg(s, m);
		natsMsg_Destroy(m);
		m = NULL;
		/* A flood must leave room for publishing and the state. */
		if (++taken >= POLL_MAX_MSGS || stop_requested ||
		    monotonic_ms() - start >= POLL_MAX_MS + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0))
			break;
		st = natsSubscription_NextMsg(&m, s->sub, 1);
	}
	if (st == NATS_SLOW_CONSUMER) {
		/* Past the pending limits: the ordered consumer starts again
		 * from the last message taken; the subscription stands. */
		if (ratelog_ok(&s->rl, s->name, s->filter_subject))
			logmsg("%s: %s", s->filter_subject, nerr(st));
	} else if (st != NATS_OK && st != NATS_TIMEOUT) {
		logmsg("%s: %s", s->filter_subject, nerr(st));
		natsSubscription_Destroy(s->sub);
		s->sub = NULL;
	}
	fleet_retry_held(s->fleet);
	return 0;
}

/*
 * The stream sequence of the first chunk of the latest complete snapshot,
 * as of a host's last message @m: @m's own if it is a snapshot's last
 * chunk, else the one its header names (0: none yet).
 */
static uint64_t latest_snapshot(natsMsg *m)
{
	const unsigned char *body;
	struct wire_hdr h;
	char err[256];
	size_t blen;

	if (!wire_decode((const void *)natsMsg_GetData(m),
			 natsMsg_GetDataLength(m), &h, &body, &blen, err,
			 sizeof(err)) &&
	    h.kind == WIRE_SNAPSHOT && h.count == h.chunks - 1) {
		if (h.chunks == 1 && natsMsg_GetSequence(m))
			return natsMsg_GetSequence(m);
		if (msg_header_u64(m, HDR_CHUNK0))
			return msg_header_u64(m, HDR_CHUNK0);
	}
	return msg_header_u64(m, HDR_SNAPSHOT);
}

/*
 * Where to start: each known host's latest snapshot; the earliest of them
 * is where the consumer begins.
 */
int sub_init(struct subscriber *s, struct nconn *c, const char *name,
	     struct fleet *fleet)
{
	char **subjects = NULL, host[WIRE_HOST_MAX + 1];
	uint64_t start = 0, snap, last = 0;
	natsMsg *m = NULL;
	struct peer *p;
	int n = 0, i, ret = 0;

	memset(s, 0, sizeof(*s));
	s->c = c;
	set_name(s->name, name);
	s->fleet = fleet;
	if (subject_of(s->filter_subject, sizeof(s->filter_subject), name,
		       "*")) {
		pr_err("filter '%s': not a subject", name);
		return -1;
	}
	if (nconn_last_stream_seq(c, &last) ||
	    nconn_subjects(c, s->filter_subject, &subjects, &n))
		return -1;
	start = last + 1;
	for (i = 0; i < n; i++) {
		if (subject_host(subjects[i], host, sizeof(host)) ||
		    !strcmp(host, g.host) ||
		    nconn_last(c, subjects[i], &m) < 0 || !m)
			continue;
		snap = latest_snapshot(m);
		natsMsg_Destroy(m);
		m = NULL;
		p = find_peer(s, host, true);
		if (!p) {
			ret = -1;
			break;
		}
		/* No snapshot known yet: the host's messages from the start. */
		p->start_stream_seq = snap;
		if (!snap)
			start = 1;
		else if (snap < start)
			start = snap;
	}
	for (i = 0; i < n; i++)
		free(subjects[i]);
	free(subjects);
	s->last_stream_seq = start - 1;
	return ret;
}

void sub_close(struct subscriber *s)
{
	size_t i;

	natsSubscription_Destroy(s->sub);
	s->sub = NULL;
	for (i = 0; i < s->npeers; i++)
		end_snapshot(&s->peers[i]);
	free(s->peers);
	s->peers = NULL;
	s->npeers = 0;
}
