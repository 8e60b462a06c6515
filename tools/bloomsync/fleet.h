/* SPDX-License-Identifier: GPL-2.0 */
/* The fleet filter: blocks from every host, ORed in by KBLOOM_IOC_APPLY. */
#ifndef BLOOMSYNC_FLEET_H
#define BLOOMSYNC_FLEET_H

#include "bloomsync.h"

/* Most blocks of future epochs kept for a rotation to come. */
#define FLEET_HELD_MAX		(1U << 20)

struct held {
	struct rec r;
	uint64_t fingerprint;
};

struct fleet {
	int fd;
	char name[KBLOOM_NAME_MAX];
	uint64_t bits;
	uint32_t generations;
	uint64_t period;		/* W / G, 0 for a plain filter */
	struct shape shape;		/* a peer's snapshot must have it */
	uint64_t payload_bytes;		/* its image's payload, all generations */
	uint32_t max_fill;		/* percent of the bits */
	uint64_t max_set;		/* APPLY's @max_set */
	struct ratelog *rl;		/* the peer applied from, if any */
	struct ratelog own_rl;		/* else */
	struct held *held;		/* epochs the filter has not reached */
	size_t nheld, capheld;
};

struct apply_stat {
	uint64_t applied;	/* blocks applied */
	uint64_t set;		/* bits they set */
	uint64_t refused;	/* blocks refused by --max-fill */
	uint64_t expired;	/* blocks of epochs past the window */
	uint64_t held;		/* blocks of epochs yet to come */
	uint64_t bad;		/* blocks refused otherwise */
};

int fleet_open(struct fleet *f, int fd, const char *name, uint32_t max_fill);
void fleet_close(struct fleet *f);
int fleet_apply(struct fleet *f, const struct rec *r, size_t n,
		uint64_t fingerprint, const char *from, uint64_t seq,
		struct apply_stat *st);
void fleet_retry_held(struct fleet *f);
int fleet_fill(struct fleet *f, uint64_t *set);

#endif /* BLOOMSYNC_FLEET_H */
