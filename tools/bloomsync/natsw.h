/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The little of libnats bloomsync uses, in one place: connecting with the
 * global options, the stream, the template bucket, publishing with a
 * message id, the last message of a subject, and ordered consumers.
 */
#ifndef BLOOMSYNC_NATSW_H
#define BLOOMSYNC_NATSW_H

#include <stdbool.h>
#include <stdint.h>

#include <nats/nats.h>

/* The NATS header that names the stream sequence of a host's last snapshot. */
#define HDR_SNAPSHOT	"Kbloom-Snapshot"
/* On a snapshot's chunks after the first: the stream sequence of the first. */
#define HDR_CHUNK0	"Kbloom-Chunk0"

struct nconn {
	natsConnection *nc;
	jsCtx *js;
	/* Set by the library's thread on reconnection; cleared by the loop. */
	volatile int reconnected;
	/* Closing: a disconnection is not news. */
	volatile int closing;
	int64_t max_payload;
};

const char *nerr(natsStatus s);
int nconn_open(struct nconn *c);
void nconn_close(struct nconn *c);
int nconn_stream(struct nconn *c, int64_t max_age_ms);
int nconn_kv(struct nconn *c, kvStore **kv);
int subject_token(char *out, size_t len, const char *s);
int subject_of(char *out, size_t len, const char *filter, const char *host);
int subject_host(const char *subject, char *host, size_t len);
int nconn_publish(struct nconn *c, const char *subj, const void *data,
		  size_t len, const char *msgid, uint64_t snap_seq,
		  uint64_t chunk0_seq, uint64_t *stream_seq);
int nconn_last(struct nconn *c, const char *subj, natsMsg **msg);
uint64_t msg_header_u64(natsMsg *m, const char *name);
int nconn_subjects(struct nconn *c, const char *filter, char ***subjects,
		   int *n);
int nconn_subscribe(struct nconn *c, const char *filter, uint64_t start_seq,
		    natsSubscription **sub);
int nconn_last_stream_seq(struct nconn *c, uint64_t *seq);

#endif /* BLOOMSYNC_NATSW_H */
