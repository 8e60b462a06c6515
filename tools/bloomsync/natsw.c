// SPDX-License-Identifier: GPL-2.0
/*
 * bloomsync's NATS: a connection made from the global options (server,
 * credentials, TLS), the stream KBLOOM that carries every host's blocks,
 * the template bucket, and the few JetStream calls the commands make.
 *
 * Subjects are kbloom.FILTER.HOST, one token each: a '.' in a filter's or
 * a host's name (both [A-Za-z0-9_.-]) is written '~', which neither can
 * contain, so that a subject names one filter and one host.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomsync.h"
#include "natsw.h"

const char *nerr(natsStatus s)
{
	static char buf[512];
	const char *last = nats_GetLastError(NULL);

	/* libnats' last error may quote the URL: never its password. */
	if (last && *last && strcmp(last, natsStatus_GetText(s)))
		snprintf(buf, sizeof(buf), "%s (%s)", natsStatus_GetText(s),
			 url_public(last));
	else
		snprintf(buf, sizeof(buf), "%s", natsStatus_GetText(s));
	return buf;
}

static void on_reconnected(natsConnection *nc, void *closure)
{
	struct nconn *c = closure;

	(void)nc;
	c->reconnected = 1;
	logmsg("reconnected to the NATS server");
}

static void on_disconnected(natsConnection *nc, void *closure)
{
	struct nconn *c = closure;

	(void)nc;
	if (!c->closing)
		logmsg("disconnected from the NATS server; reconnecting");
}

/* Connect as the global options say; reconnect for ever once connected. */
int nconn_open(struct nconn *c)
{
	natsOptions *o = NULL;
	natsStatus s;
	jsOptions jo;

	memset(c, 0, sizeof(*c));
	s = natsOptions_Create(&o);
	if (s == NATS_OK)
		s = natsOptions_SetURL(o, g.server);
	if (s == NATS_OK)
		s = natsOptions_SetName(o, "bloomsync");
	if (s == NATS_OK)
		s = natsOptions_SetMaxReconnect(o, -1);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectWait(o, 250);
	if (s == NATS_OK)
		s = natsOptions_SetTimeout(o, 2000);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectedCB(o, on_reconnected, c);
	if (s == NATS_OK)
		s = natsOptions_SetDisconnectedCB(o, on_disconnected, c);
	if (s == NATS_OK && g.creds)
		s = natsOptions_SetUserCredentialsFromFiles(o, g.creds, NULL);
	if (s == NATS_OK && (g.tls_ca || g.tls_cert))
		s = natsOptions_SetSecure(o, true);
	if (s == NATS_OK && g.tls_ca)
		s = natsOptions_LoadCATrustedCertificates(o, g.tls_ca);
	if (s == NATS_OK && g.tls_cert)
		s = natsOptions_LoadCertificatesChain(o, g.tls_cert,
						      g.tls_key);
	if (s != NATS_OK) {
		pr_err("NATS options: %s", nerr(s));
		natsOptions_Destroy(o);
		return -1;
	}
	s = natsConnection_Connect(&c->nc, o);
	natsOptions_Destroy(o);
	if (s != NATS_OK) {
		pr_err("NATS server %s: %s", url_public(g.server), nerr(s));
		return -1;
	}
	jsOptions_Init(&jo);
	jo.Wait = 3000;
	s = natsConnection_JetStream(&c->js, c->nc, &jo);
	if (s != NATS_OK) {
		pr_err("JetStream on %s: %s", url_public(g.server), nerr(s));
		nconn_close(c);
		return -1;
	}
	c->max_payload = natsConnection_GetMaxPayload(c->nc);
	return 0;
}

void nconn_close(struct nconn *c)
{
	c->closing = 1;
	jsCtx_Destroy(c->js);
	if (c->nc) {
		natsConnection_Close(c->nc);
		natsConnection_Destroy(c->nc);
	}
	c->js = NULL;
	c->nc = NULL;
}

/* The stream of every host's blocks: made by the first host that needs it. */
int nconn_stream(struct nconn *c, int64_t max_age_ms)
{
	const char *subjects[] = { STREAM_SUBJECTS };
	jsStreamInfo *si = NULL;
	jsStreamConfig cfg;
	jsErrCode jerr = 0;
	natsStatus s;

	s = js_GetStreamInfo(&si, c->js, STREAM_NAME, NULL, &jerr);
	if (s == NATS_OK) {
		jsStreamInfo_Destroy(si);
		return 0;
	}
	if (s != NATS_NOT_FOUND) {
		pr_err("stream %s: %s", STREAM_NAME, nerr(s));
		return -1;
	}
	jsStreamConfig_Init(&cfg);
	cfg.Name = STREAM_NAME;
	cfg.Description = "kbloom filters' blocks (bloomsync)";
	cfg.Subjects = subjects;
	cfg.SubjectsLen = 1;
	cfg.Storage = js_FileStorage;
	cfg.MaxAge = max_age_ms * 1000000LL;
	cfg.Duplicates = 120LL * 1000000000LL;
	s = js_AddStream(&si, c->js, &cfg, NULL, &jerr);
	if (s != NATS_OK && jerr != JSStreamNameExistErr) {
		pr_err("stream %s: cannot create it: %s", STREAM_NAME, nerr(s));
		return -1;
	}
	jsStreamInfo_Destroy(si);
	return 0;
}

/* The template bucket, made by the first host that needs it. */
int nconn_kv(struct nconn *c, kvStore **kv)
{
	natsStatus s = js_KeyValue(kv, c->js, TEMPLATE_BUCKET);
	kvConfig cfg;

	if (s == NATS_OK)
		return 0;
	if (s != NATS_NOT_FOUND) {
		pr_err("bucket %s: %s", TEMPLATE_BUCKET, nerr(s));
		return -1;
	}
	kvConfig_Init(&cfg);
	cfg.Bucket = TEMPLATE_BUCKET;
	cfg.Description = "kbloom filter templates (bloomsync)";
	cfg.History = 1;
	cfg.StorageType = js_FileStorage;
	s = js_CreateKeyValue(kv, c->js, &cfg);
	if (s != NATS_OK) {
		pr_err("bucket %s: cannot create it: %s", TEMPLATE_BUCKET,
		       nerr(s));
		return -1;
	}
	return 0;
}

/* A name as one subject token: '.' is '~'. */
int subject_token(char *out, size_t len, const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		if (i + 1 >= len || s[i] == '~' || s[i] == '*' ||
		    s[i] == '>' || s[i] == ' ')
			return -1;
		out[i] = s[i] == '.' ? '~' : s[i];
	}
	if (!i || i >= len)
		return -1;
	out[i] = '\0';
	return 0;
}

/* kbloom.FILTER.HOST, or with HOST "*" every host's. */
int subject_of(char *out, size_t len, const char *filter, const char *host)
{
	char f[64], h[300];

	if (subject_token(f, sizeof(f), filter))
		return -1;
	if (!strcmp(host, "*"))
		strcpy(h, "*");
	else if (subject_token(h, sizeof(h), host))
		return -1;
	return snprintf(out, len, "kbloom.%s.%s", f, h) < (int)len ? 0 : -1;
}

/* The host a subject kbloom.FILTER.HOST names, '~' made '.' again. */
int subject_host(const char *subject, char *host, size_t len)
{
	const char *p = strrchr(subject, '.');
	size_t i;

	if (!p || strlen(p + 1) >= len || !p[1])
		return -1;
	for (i = 0; p[1 + i]; i++)
		host[i] = p[1 + i] == '~' ? '.' : p[1 + i];
	host[i] = '\0';
	return 0;
}

/*
 * Publish to the stream with a message id (a retry after a lost ack is
 * dropped by the server as a duplicate) and the stream sequence of the
 * host's last snapshot in a header (and, on a snapshot's later chunks,
 * that of its first). Returns 0, or -1 (not reported: the caller decides).
 */
int nconn_publish(struct nconn *c, const char *subj, const void *data,
		  size_t len, const char *msgid, uint64_t snap_seq,
		  uint64_t chunk0_seq, uint64_t *stream_seq)
{
	natsMsg *m = NULL;
	jsPubAck *ack = NULL;
	jsPubOptions po;
	jsErrCode jerr = 0;
	char sv[32];
	natsStatus s;

	s = natsMsg_Create(&m, subj, NULL, data, (int)len);
	snprintf(sv, sizeof(sv), "%" PRIu64, snap_seq);
	if (s == NATS_OK)
		s = natsMsgHeader_Set(m, HDR_SNAPSHOT, sv);
	snprintf(sv, sizeof(sv), "%" PRIu64, chunk0_seq);
	if (s == NATS_OK && chunk0_seq)
		s = natsMsgHeader_Set(m, HDR_CHUNK0, sv);
	jsPubOptions_Init(&po);
	po.MsgId = msgid;
	po.MaxWait = 3000;
	if (s == NATS_OK)
		s = js_PublishMsg(&ack, c->js, m, &po, &jerr);
	natsMsg_Destroy(m);
	if (s != NATS_OK) {
		logmsg("%s: publish failed: %s", subj, nerr(s));
		return -1;
	}
	if (stream_seq)
		*stream_seq = ack->Sequence;
	jsPubAck_Destroy(ack);
	return 0;
}

/* The last message on @subj: 0, 1 if there is none, -1 on error. */
int nconn_last(struct nconn *c, const char *subj, natsMsg **msg)
{
	jsErrCode jerr = 0;
	natsStatus s;

	*msg = NULL;
	s = js_GetLastMsg(msg, c->js, STREAM_NAME, subj, NULL, &jerr);
	if (s == NATS_OK)
		return 0;
	if (s == NATS_NOT_FOUND)
		return 1;
	pr_err("%s: last message: %s", subj, nerr(s));
	return -1;
}

/* A number in a NATS header of @m; 0 if there is none. */
uint64_t msg_header_u64(natsMsg *m, const char *name)
{
	const char *v = NULL;

	if (natsMsgHeader_Get(m, name, &v) != NATS_OK || !v)
		return 0;
	return strtoull(v, NULL, 10);
}

/* The subjects of the stream that match @filter (malloc'd strings). */
int nconn_subjects(struct nconn *c, const char *filter, char ***subjects,
		   int *n)
{
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	jsOptions o;
	natsStatus s;
	int i;

	*subjects = NULL;
	*n = 0;
	jsOptions_Init(&o);
	o.Stream.Info.SubjectsFilter = filter;
	s = js_GetStreamInfo(&si, c->js, STREAM_NAME, &o, &jerr);
	if (s != NATS_OK) {
		pr_err("stream %s: %s", STREAM_NAME, nerr(s));
		return -1;
	}
	if (si->State.Subjects && si->State.Subjects->Count) {
		*subjects = calloc(si->State.Subjects->Count, sizeof(char *));
		for (i = 0; *subjects && i < si->State.Subjects->Count; i++)
			(*subjects)[(*n)++] =
				strdup(si->State.Subjects->List[i].Subject);
	}
	jsStreamInfo_Destroy(si);
	return 0;
}

/* The stream's last sequence (0 if empty). */
int nconn_last_stream_seq(struct nconn *c, uint64_t *seq)
{
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	natsStatus s;

	s = js_GetStreamInfo(&si, c->js, STREAM_NAME, NULL, &jerr);
	if (s != NATS_OK) {
		pr_err("stream %s: %s", STREAM_NAME, nerr(s));
		return -1;
	}
	*seq = si->State.LastSeq;
	jsStreamInfo_Destroy(si);
	return 0;
}

/*
 * An ordered consumer of @filter from stream sequence @start_seq: the
 * library recreates it where it left off when it sees a gap or misses
 * heartbeats; run.c recreates it after a reconnection too.
 */
int nconn_subscribe(struct nconn *c, const char *filter, uint64_t start_seq,
		    natsSubscription **sub)
{
	jsSubOptions so;
	jsErrCode jerr = 0;
	natsStatus s;

	jsSubOptions_Init(&so);
	so.Stream = STREAM_NAME;
	so.Ordered = true;
	so.Config.DeliverPolicy = js_DeliverByStartSequence;
	so.Config.OptStartSeq = start_seq ? start_seq : 1;
	so.Config.Heartbeat = 2000000000LL;
	s = js_SubscribeSync(sub, c->js, filter, NULL, &so, &jerr);
	if (s != NATS_OK) {
		pr_err("%s: cannot subscribe: %s", filter, nerr(s));
		return -1;
	}
	/* A flood is dropped (the ordered consumer then starts again from
	 * the last message taken) rather than held without limit. */
	natsSubscription_SetPendingLimits(*sub, 65536, 256 << 20);
	return 0;
}
