/* SPDX-License-Identifier: GPL-2.0 */
/* The two halves of the daemon: publish.c and subscribe.c, run by run.c. */
#ifndef BLOOMSYNC_SYNC_H
#define BLOOMSYNC_SYNC_H

#include "bloomsync.h"
#include "fleet.h"
#include "natsw.h"
#include "wire.h"

/* Core NATS (not the stream): "send a snapshot", from a peer that saw a gap. */
#define REQ_PREFIX	"kbloomreq"

struct publisher {
	struct nconn *c;
	int fd;
	uint64_t run_id;		/* random, per start: in Nats-Msg-Id */
	char name[KBLOOM_NAME_MAX];
	char subject[400];
	char req_subject[400];
	struct fleet *fleet;		/* own blocks go here too; or NULL */
	uint64_t snapshot_every_ms;
	natsSubscription *req_sub;

	uint64_t seq;			/* last sequence number used */
	uint64_t snap_stream_seq;	/* stream seq of the last snapshot */
	uint64_t last_snapshot_ms;	/* monotonic */
	bool need_snapshot;
	uint64_t image_bytes;		/* the last snapshot's payload */
	uint64_t snapshot_bytes;	/* and its image, compressed */

	/* What went out: for status and the benchmark. */
	uint64_t msgs, bytes, deltas, snapshots, blocks, failures;
	uint64_t last_bytes;		/* in the last tick */
	uint64_t last_ms;		/* realtime of the last publish */
};

/* Room in a snapshot chunk's message for NATS headers beside the payload. */
#define SNAP_HEADROOM	1024

struct peer {
	char host[WIRE_HOST_MAX + 1];
	uint64_t start_stream_seq;	/* its messages before are skipped */
	uint64_t applied;		/* last sequence number taken */
	bool synced;			/* a snapshot and every delta since */

	/* A snapshot being put together. */
	bool assembling;
	uint64_t snap_first;
	uint32_t snap_chunks, snap_got;
	unsigned char *snap_buf;
	size_t snap_len, snap_cap;
	uint64_t snap_skip;		/* chunk 0's seq of a refused one */
	bool snap_logged;		/* a refused snapshot was logged */

	uint64_t last_ms, msgs, bytes, snapshots, gaps, refused, bad;
	uint64_t restarts;		/* its sequence started over */
	bool refused_since;		/* blocks refused since its snapshot */
	struct ratelog rl;		/* its refusals' log lines */
	uint64_t last_req_ms;		/* monotonic: last snapshot request */
};

struct subscriber {
	struct nconn *c;
	char name[KBLOOM_NAME_MAX];
	char filter_subject[400];
	struct fleet *fleet;
	natsSubscription *sub;
	uint64_t last_stream_seq;
	struct peer *peers;
	size_t npeers;
	struct ratelog rl;		/* slow consumer lines */
};

int pub_init(struct publisher *p, struct nconn *c, int fd, const char *name,
	     struct fleet *fleet, uint64_t snapshot_every_ms);
int pub_tick(struct publisher *p);
void pub_close(struct publisher *p);

int sub_init(struct subscriber *s, struct nconn *c, const char *name,
	     struct fleet *fleet);
int sub_poll(struct subscriber *s, int64_t timeout_ms);
void sub_close(struct subscriber *s);

int write_status(const struct publisher *p, const struct subscriber *s,
		 const char *name, struct fleet *fleet);

#endif /* BLOOMSYNC_SYNC_H */
