// SPDX-License-Identifier: GPL-2.0
/*
 * Publishing a filter's changes: every tick, KBLOOM_IOC_COLLECT until the
 * pass ends, the blocks published on kbloom.FILTER.HOST as one delta
 * message (more if they pass the server's max_payload); every
 * --snapshot-every, when a delta would be larger than a quarter of the
 * image, after a failed publish and when a peer asks (it saw a gap), a
 * snapshot: the filter's image (Documentation/kbloom-image.md, zlib),
 * in chunks. Every message has the next sequence number of this host,
 * found again at start from the stream's last message on the subject, and
 * the message id FILTER/HOST/SEQ, so that a retry is a duplicate the
 * server drops. A sequence number whose publish failed is never reused
 * (the server may have stored it): subscribers see a gap and the snapshot
 * that follows covers it.
 *
 * The blocks collected are also applied to the local fleet filter: the
 * fleet filter holds this host's keys too, without a round trip through
 * the server (subscribers skip their own host's subject).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "sync.h"

static uint64_t chunk_room(const struct publisher *p, size_t hlen)
{
	int64_t mp = p->c->max_payload > 0 ? p->c->max_payload : 1 << 20;

	return (uint64_t)mp - hlen - SNAP_HEADROOM;
}

static void fill_header(struct wire_hdr *h, uint32_t kind, uint64_t fp,
			int64_t newest_epoch)
{
	memset(h, 0, sizeof(*h));
	h->kind = kind;
	h->fingerprint = fp;
	h->newest_epoch = newest_epoch;
	snprintf(h->host, sizeof(h->host), "%s", g.host);
}

/* Publish one message as sequence number p->seq + 1; it is used either way. */
static int publish_one(struct publisher *p, const unsigned char *buf,
		       size_t len, uint64_t chunk0_seq, uint64_t *stream_seq)
{
	char msgid[400];

	p->seq++;
	/*
	 * The run's id: a retry of this run is a duplicate, a number used
	 * again by a run that started over at 1 (its subject purged or
	 * expired) is not.
	 */
	snprintf(msgid, sizeof(msgid), "%s/%s/%" PRIu64 "/%016" PRIx64,
		 p->name, g.host, p->seq, p->run_id);
	if (nconn_publish(p->c, p->subject, buf, len, msgid,
			  p->snap_stream_seq, chunk0_seq, stream_seq)) {
		p->failures++;
		p->need_snapshot = true;
		return -1;
	}
	p->msgs++;
	p->bytes += len;
	p->last_bytes += len;
	p->last_ms = realtime_now_ms();
	return 0;
}

/*
 * COLLECT until the pass ends: the blocks, as records with epochs. The
 * fingerprint and the newest epoch of the last call.
 */
static int collect(struct publisher *p, uint32_t flags, struct recs *out,
		   uint64_t *fp, int64_t *newest)
{
	static struct kbloom_block b[KBLOOM_BLOCKS_MAX];
	struct kbloom_blocks res;
	struct kbloom_info info;
	uint64_t cursor = 0, period;
	struct rec r;
	uint32_t i;
	int err;

	if (dev_info(p->fd, p->name, &info))
		return -1;
	period = window_period(info.window_ms, info.generations);
	do {
		err = dev_collect(p->fd, p->name, flags, cursor, b,
				  KBLOOM_BLOCKS_MAX, &res);
		if (err) {
			pr_err("filter '%s': cannot collect its changes: %s",
			       p->name, kerr(err));
			return -1;
		}
		/* Generations are relative to this call's rotations. */
		*newest = epoch_of_newest(realtime_now_ms(), res.age_ms,
					  period);
		*fp = res.fingerprint;
		for (i = 0; i < res.done; i++) {
			r.index = b[i].index;
			r.epoch = period ? *newest - b[i].generation : 0;
			memcpy(r.data, b[i].data, KBLOOM_BLOCK_BYTES);
			if (recs_push(out, &r)) {
				pr_err("filter '%s': %s", p->name,
				       strerror(ENOMEM));
				return -1;
			}
		}
		cursor = res.cursor;
	} while (cursor);
	return 0;
}

/* Own blocks into the fleet filter. */
static void apply_own(struct publisher *p, const struct recs *rs, uint64_t fp)
{
	struct apply_stat st = { 0 };

	if (p->fleet && rs->n)
		fleet_apply(p->fleet, rs->v, rs->n, fp, "this host", p->seq,
			    &st);
}

/* A delta's messages, encoded, before any is sent. */
struct delta_msgs {
	unsigned char **buf;
	size_t *len;
	size_t n, bytes;
};

static void delta_free(struct delta_msgs *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->buf[i]);
	free(d->buf);
	free(d->len);
	memset(d, 0, sizeof(*d));
}

/*
 * The records as messages of at most max_payload, numbered from
 * p->seq + 1, each deflated with zlib when that is smaller (a block of a
 * sparse filter is mostly zeros).
 */
static int encode_delta(const struct publisher *p, const struct recs *rs,
			uint64_t fp, int64_t newest, struct delta_msgs *d)
{
	unsigned char *recs = NULL, *z = NULL, *m;
	uint64_t zlen;
	struct wire_hdr h;
	size_t hlen, per, off, n, i;
	char err[256];
	int ret = 0;

	memset(d, 0, sizeof(*d));
	fill_header(&h, WIRE_DELTA, fp, newest);
	hlen = wire_header_len(&h);
	per = chunk_room(p, hlen) / WIRE_REC;
	if (per > WIRE_DELTA_MAX / WIRE_REC)
		per = WIRE_DELTA_MAX / WIRE_REC;
	n = (rs->n + per - 1) / per;
	d->buf = calloc(n ? n : 1, sizeof(*d->buf));
	d->len = calloc(n ? n : 1, sizeof(*d->len));
	recs = malloc(per * WIRE_REC);
	if (!d->buf || !d->len || !recs) {
		free(recs);
		return -1;
	}
	for (off = 0; off < rs->n && !ret; off += n) {
		n = rs->n - off < per ? rs->n - off : per;
		for (i = 0; i < n; i++)
			wire_encode_rec(recs + i * WIRE_REC, &rs->v[off + i]);
		h.seq = h.first_seq = p->seq + 1 + d->n;
		h.count = (uint32_t)n;
		h.flags = 0;
		zlen = n * WIRE_REC;
		if (!img_deflate(recs, n * WIRE_REC, &z, &zlen, err,
				 sizeof(err)) && zlen < n * WIRE_REC)
			h.flags = WIRE_F_ZLIB;
		else
			zlen = n * WIRE_REC;
		m = malloc(hlen + zlen);
		if (!m) {
			ret = -1;
		} else {
			wire_encode_header(m, &h);
			memcpy(m + hlen, h.flags ? z : recs, zlen);
			d->buf[d->n] = m;
			d->len[d->n++] = hlen + zlen;
			d->bytes += hlen + zlen;
		}
		free(z);
		z = NULL;
	}
	free(recs);
	return ret;
}

static int publish_delta(struct publisher *p, const struct delta_msgs *d,
			 size_t blocks)
{
	for (size_t i = 0; i < d->n; i++)
		if (publish_one(p, d->buf[i], d->len[i], 0, NULL))
			return -1;
	p->deltas++;
	p->blocks += blocks;
	return 0;
}

/* The image, in chunks; the stream seq of the first goes in later headers. */
static int publish_snapshot(struct publisher *p, uint64_t fp)
{
	struct filter_image fi;
	struct wire_hdr h;
	unsigned char *img, *buf;
	uint64_t period, first_ss = 0, ss;
	size_t hlen, room, len, off, n;
	uint32_t chunks, i;
	int ret = 0;

	if (filter_image(p->fd, p->name, true, &fi, false))
		return -1;
	len = fi.hlen + fi.img.stored_len;
	img = malloc(len);
	if (!img) {
		filter_image_release(&fi);
		return -1;
	}
	memcpy(img, fi.h, fi.hlen);
	memcpy(img + fi.hlen, fi.stored, fi.img.stored_len);
	period = window_period(fi.img.window_ms, fi.img.generations);
	fill_header(&h, WIRE_SNAPSHOT, fp,
		    period ? epoch_of_newest(fi.img.newest_start_ms, 0, period) :
			     0);
	p->image_bytes = fi.img.payload_len;
	filter_image_release(&fi);
	hlen = wire_header_len(&h);
	room = chunk_room(p, hlen);
	chunks = (uint32_t)((len + room - 1) / room);
	buf = malloc(hlen + room);
	if (!buf) {
		free(img);
		return -1;
	}
	h.chunks = chunks;
	h.first_seq = p->seq + 1;
	for (i = 0, off = 0; i < chunks && !ret; i++, off += n) {
		n = len - off < room ? len - off : room;
		h.count = i;
		h.seq = h.first_seq + i;
		wire_encode_header(buf, &h);
		memcpy(buf + hlen, img + off, n);
		ret = publish_one(p, buf, hlen + n, first_ss, &ss);
		if (!ret && !i)
			first_ss = ss;
	}
	free(buf);
	free(img);
	if (ret)
		return -1;
	p->snap_stream_seq = first_ss;
	p->snapshot_bytes = len;
	p->snapshots++;
	p->need_snapshot = false;
	p->last_snapshot_ms = monotonic_ms();
	return 0;
}

/* A peer that saw a gap asks for a snapshot: at most one a second. */
static void check_requests(struct publisher *p)
{
	natsMsg *m = NULL;

	while (p->req_sub &&
	       natsSubscription_NextMsg(&m, p->req_sub, 0) == NATS_OK) {
		if (!p->need_snapshot &&
		    monotonic_ms() - p->last_snapshot_ms >= 1000) {
			logmsg("filter '%s': a peer asked for a snapshot",
			       p->name);
			p->need_snapshot = true;
		}
		natsMsg_Destroy(m);
		m = NULL;
	}
}

/*
 * A tick: collect, apply to the fleet filter, publish a delta, or a
 * snapshot at start, on schedule, on request, after a failure, or when
 * the delta as sent (compressed) would be larger than a quarter of the
 * image's payload.
 */
int pub_tick(struct publisher *p)
{
	struct delta_msgs d = { 0 };
	struct recs rs = { 0 };
	uint64_t fp = 0;
	int64_t newest = 0;
	int ret = 0;

	p->last_bytes = 0;
	check_requests(p);
	if (collect(p, 0, &rs, &fp, &newest)) {
		recs_free(&rs);
		return -1;
	}
	apply_own(p, &rs, fp);
	if (!p->need_snapshot &&
	    monotonic_ms() - p->last_snapshot_ms < p->snapshot_every_ms &&
	    rs.n) {
		if (encode_delta(p, &rs, fp, newest, &d))
			p->need_snapshot = true;
		else if (d.bytes > p->image_bytes / 4)
			p->need_snapshot = true;
		else
			ret = publish_delta(p, &d, rs.n);
		delta_free(&d);
	}
	if (p->need_snapshot ||
	    monotonic_ms() - p->last_snapshot_ms >= p->snapshot_every_ms)
		ret = publish_snapshot(p, fp);
	recs_free(&rs);
	return ret;
}

int pub_init(struct publisher *p, struct nconn *c, int fd, const char *name,
	     struct fleet *fleet, uint64_t snapshot_every_ms)
{
	char ftok[64], htok[300], err[256];
	const unsigned char *body;
	struct wire_hdr h;
	natsMsg *m = NULL;
	size_t blen;
	natsStatus s;
	int ret;

	memset(p, 0, sizeof(*p));
	p->c = c;
	p->fd = fd;
	set_name(p->name, name);
	p->fleet = fleet;
	p->snapshot_every_ms = snapshot_every_ms;
	p->need_snapshot = true;	/* the first tick: one to start from */
	if (getrandom(&p->run_id, sizeof(p->run_id), 0) !=
	    sizeof(p->run_id))
		p->run_id = realtime_now_ms() ^ ((uint64_t)getpid() << 32);
	if (subject_of(p->subject, sizeof(p->subject), name, g.host) ||
	    subject_token(ftok, sizeof(ftok), name) ||
	    subject_token(htok, sizeof(htok), g.host)) {
		pr_err("filter '%s', host '%s': not a subject", name, g.host);
		return -1;
	}
	snprintf(p->req_subject, sizeof(p->req_subject), "%s.%s.%s",
		 REQ_PREFIX, ftok, htok);
	/* Go on from this host's last sequence number in the stream. */
	ret = nconn_last(c, p->subject, &m);
	if (ret < 0)
		return -1;
	if (!ret) {
		if (wire_decode((const void *)natsMsg_GetData(m),
				natsMsg_GetDataLength(m), &h, &body, &blen,
				err, sizeof(err)))
			logmsg("%s: the last message is not bloomsync's (%s): starting over at 1",
			       p->subject, err);
		else
			p->seq = h.seq;
		p->snap_stream_seq = msg_header_u64(m, HDR_SNAPSHOT);
		natsMsg_Destroy(m);
	}
	s = natsConnection_SubscribeSync(&p->req_sub, c->nc, p->req_subject);
	if (s != NATS_OK) {
		pr_err("%s: cannot subscribe: %s", p->req_subject, nerr(s));
		return -1;
	}
	return 0;
}

void pub_close(struct publisher *p)
{
	natsSubscription_Destroy(p->req_sub);
	p->req_sub = NULL;
}
