/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bloomsync: kbloom filters shared by a fleet of hosts through NATS
 * JetStream. What the files share: main.c (the command table, global
 * options), dev.c (the device), natsw.c (NATS), wire.c (the messages),
 * window.c (wall-clock epochs), template.c (template put, join),
 * publish.c, fleet.c (applying blocks to the fleet filter), subscribe.c,
 * run.c (the daemon loop), status.c. bloomctl's common.c, output.c,
 * images.c, image.c, sizing.c and json.c are built in (see Makefile).
 */
#ifndef BLOOMSYNC_H
#define BLOOMSYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/kbloom.h>

#include "bloomctl.h"

#ifndef BLOOMSYNC_VERSION
#define BLOOMSYNC_VERSION	"1.0"
#endif

#define DEFAULT_SERVER		"nats://127.0.0.1:4222"
#define DEFAULT_STATE_DIR	"/run/bloomsync"
#define STREAM_NAME		"KBLOOM"
#define STREAM_SUBJECTS		"kbloom.*.*"
#define TEMPLATE_BUCKET		"kbloom-templates"
#define FLEET_SUFFIX		".fleet"

/* Global options (main.c). */
struct globals {
	const char *server;
	const char *creds;
	const char *tls_ca, *tls_cert, *tls_key;
	char host[256];
	const char *state_dir;
};
extern struct globals g;

/* Set by SIGINT/SIGTERM: the loops end. */
extern volatile int stop_requested;

/* Milliseconds: CLOCK_REALTIME since the epoch, CLOCK_MONOTONIC. */
uint64_t realtime_now_ms(void);
uint64_t monotonic_ms(void);
int parse_ms(const char *opt, const char *s, uint64_t *ms);
const char *url_public(const char *s);

/* A source of log lines (a peer): the first RATELOG_N a minute, then a count. */
#define RATELOG_N	5
struct ratelog {
	uint64_t start_ms;
	uint32_t n;
	uint64_t dropped;
};
bool ratelog_ok(struct ratelog *r, const char *filter, const char *who);
void __attribute__((format(printf, 1, 2))) logmsg(const char *fmt, ...);

/*
 * A block as it travels: a wall-clock epoch instead of a generation index
 * (window.c), so that hosts whose filters rotated a different number of
 * times agree on what it is. Plain filters: epoch 0.
 */
struct rec {
	uint64_t index;
	int64_t epoch;
	uint8_t data[KBLOOM_BLOCK_BYTES];
};

struct recs {
	struct rec *v;
	size_t n, cap;
};
int recs_push(struct recs *r, const struct rec *x);
void recs_free(struct recs *r);

/* window.c: W / G of a filter, and the epochs of its generations. */
uint64_t window_period(uint32_t window_ms, uint32_t generations);
int64_t epoch_of_newest(uint64_t now_ms, uint64_t age_ms, uint64_t period);
uint32_t age_for_schedule(uint64_t now_ms, uint64_t period);

/* dev.c: the device, and the shape of filters. */
struct shape {
	uint64_t bits;
	uint32_t hashes;
	uint32_t flags;		/* KBLOOM_CREATE_*: layout, counting */
	uint32_t hash_scheme;
	uint32_t seed[4];
	uint32_t window_ms;
	uint32_t generations;
};
int dev_open(void);
int dev_info(int fd, const char *name, struct kbloom_info *info);
int dev_shape(int fd, const char *name, struct shape *s);
int dev_collect(int fd, const char *name, uint32_t flags, uint64_t cursor,
		struct kbloom_block *buf, uint32_t room,
		struct kbloom_blocks *out);
int dev_apply(int fd, const char *name, const struct kbloom_block *b,
	      uint32_t n, uint64_t rotations, uint64_t fingerprint,
	      uint64_t max_set, uint64_t *set);
void shape_of_image(const struct image *img, struct shape *s);
int shape_diff(const struct shape *a, const struct shape *b, char *buf,
	       size_t len);
size_t image_to_recs(const struct image *img, const unsigned char *payload,
		     struct recs *out);

/* template.c */
int cmd_template(const struct cmd *cmd, int argc, char **argv);
int cmd_join(const struct cmd *cmd, int argc, char **argv);

/* run.c: publish, subscribe, or both in one process */
int cmd_publish(const struct cmd *cmd, int argc, char **argv);
int cmd_subscribe(const struct cmd *cmd, int argc, char **argv);
int cmd_run(const struct cmd *cmd, int argc, char **argv);

/* status.c */
int cmd_status(const struct cmd *cmd, int argc, char **argv);

#endif /* BLOOMSYNC_H */
