// SPDX-License-Identifier: GPL-2.0
/*
 * Applying blocks to the fleet filter: epochs mapped to the filter's own
 * generations (window.c), KBLOOM_IOC_APPLY in calls of at most
 * KBLOOM_BLOCKS_MAX blocks, each refused whole by the module if it would
 * take a generation past --max-fill (@max_set), again with a fresh
 * mapping if the filter rotated meanwhile (-ESTALE). Blocks of an epoch
 * already out of the window are dropped; blocks of the epoch after the
 * filter's newest (the sender's clock or timer is a little ahead) are held
 * and tried again on every tick until the filter rotates to it; blocks of
 * an epoch further ahead are dropped as a wrong clock's (epoch_gen()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"

int fleet_open(struct fleet *f, int fd, const char *name, uint32_t max_fill)
{
	struct kbloom_info info;

	memset(f, 0, sizeof(*f));
	f->fd = fd;
	set_name(f->name, name);
	if (dev_info(fd, name, &info))
		return -1;
	if (info.flags & KBLOOM_CREATE_COUNTING) {
		pr_err("filter '%s': a counting filter cannot be a fleet filter",
		       name);
		return -1;
	}
	if (dev_shape(fd, name, &f->shape))
		return -1;
	f->payload_bytes = img_payload_bytes(info.bits, f->shape.flags);
	if (info.generations)
		f->payload_bytes *= info.generations;
	f->bits = info.bits;
	f->generations = info.generations;
	f->period = window_period(info.window_ms, info.generations);
	f->max_fill = max_fill;
	f->max_set = max_fill >= 100 ? 0 : info.bits * max_fill / 100;
	return 0;
}

void fleet_close(struct fleet *f)
{
	free(f->held);
	f->held = NULL;
	f->nheld = f->capheld = 0;
}

static void hold(struct fleet *f, const struct rec *r, uint64_t fp,
		 struct apply_stat *st)
{
	if (f->nheld == f->capheld) {
		size_t cap = f->capheld ? 2 * f->capheld : 1024;
		struct held *v;

		if (cap > FLEET_HELD_MAX ||
		    !(v = realloc(f->held, cap * sizeof(*v)))) {
			st->expired++;
			return;
		}
		f->held = v;
		f->capheld = cap;
	}
	f->held[f->nheld].r = *r;
	f->held[f->nheld].fingerprint = fp;
	f->nheld++;
	st->held++;
}

/*
 * The generation of a block of @epoch when the filter's newest is
 * @newest: @gens or more is gone, -1 the next one (held until the filter
 * gets there). An epoch further ahead, or one whose distance overflows,
 * is a wrong clock or a hostile peer: it counts as gone, so nothing is
 * held for it.
 */
static int64_t epoch_gen(int64_t newest, int64_t epoch, uint32_t gens)
{
	int64_t g;

	if (__builtin_sub_overflow(newest, epoch, &g) || g < -1)
		return gens;
	return g;
}

/*
 * One APPLY of up to KBLOOM_BLOCKS_MAX records, mapped to the filter's
 * generations as of now; again if it rotated in between. 0, or -1 if the
 * rest of the update is not worth trying (a fingerprint that differs).
 */
static int apply_some(struct fleet *f, const struct rec *r, size_t n,
		      uint64_t fp, const char *from, uint64_t seq,
		      struct apply_stat *st)
{
	static struct kbloom_block b[KBLOOM_BLOCKS_MAX];
	struct kbloom_info info;
	uint64_t set = 0, rotations = 0;
	int64_t newest = 0, g;
	int attempt, err = ESTALE;
	uint32_t m = 0;
	size_t i;

	for (attempt = 0; attempt < 5 && err == ESTALE; attempt++) {
		struct apply_stat tmp = { 0 };

		if (f->generations) {
			if (dev_info(f->fd, f->name, &info))
				return -1;
			rotations = info.rotations;
			newest = epoch_of_newest(realtime_now_ms(),
						 info.newest_age_ms, f->period);
		}
		m = 0;
		for (i = 0; i < n; i++) {
			g = f->generations ?
			    epoch_gen(newest, r[i].epoch, f->generations) : 0;
			if (g >= (int64_t)(f->generations ? f->generations : 1)) {
				tmp.expired++;
				continue;
			}
			if (g < 0) {
				tmp.held++;
				continue;
			}
			memset(&b[m], 0, sizeof(b[m]));
			b[m].index = r[i].index;
			b[m].generation = (uint32_t)g;
			memcpy(b[m].data, r[i].data, KBLOOM_BLOCK_BYTES);
			m++;
		}
		err = m ? dev_apply(f->fd, f->name, b, m, rotations, fp,
				    f->max_set, &set) : 0;
		if (err == ESTALE)
			continue;
		st->expired += tmp.expired;
		/* The mapping stands: hold what is yet to come. */
		for (i = 0; i < n && tmp.held; i++)
			if (f->generations &&
			    epoch_gen(newest, r[i].epoch, f->generations) < 0)
				hold(f, &r[i], fp, st);
	}
	switch (err) {
	case 0:
		st->applied += m;
		st->set += set;
		return 0;
	case ENOSPC:
		st->refused += m;
		if (ratelog_ok(f->rl ? f->rl : &f->own_rl, f->name, from))
			logmsg("filter '%s': refused %u blocks from %s (seq %" PRIu64 "): they would fill it past --max-fill %u%% (%" PRIu64 " of %" PRIu64 " bits)",
		       f->name, m, from, seq, f->max_fill, f->max_set, f->bits);
		return 0;
	case EXDEV:
		st->bad += n;
		if (ratelog_ok(f->rl ? f->rl : &f->own_rl, f->name, from))
			logmsg("filter '%s': refused the blocks from %s (seq %" PRIu64 "): another filter's (fingerprint %016" PRIx64 "): join the same template",
		       f->name, from, seq, fp);
		return -1;
	default:
		st->bad += m;
		if (ratelog_ok(f->rl ? f->rl : &f->own_rl, f->name, from))
			logmsg("filter '%s': cannot apply %u blocks from %s (seq %" PRIu64 "): %s",
		       f->name, m, from, seq, kerr(err));
		return err == EINVAL ? 0 : -1;
	}
}

/* Apply @n records from @from (a host), message @seq; counts in @st. */
int fleet_apply(struct fleet *f, const struct rec *r, size_t n,
		uint64_t fingerprint, const char *from, uint64_t seq,
		struct apply_stat *st)
{
	size_t off, m;

	for (off = 0; off < n; off += m) {
		m = n - off < KBLOOM_BLOCKS_MAX ? n - off : KBLOOM_BLOCKS_MAX;
		if (apply_some(f, r + off, m, fingerprint, from, seq, st))
			return -1;
	}
	return 0;
}

/* The blocks held for epochs to come: those the filter reached go in. */
void fleet_retry_held(struct fleet *f)
{
	struct held *h = f->held;
	size_t n = f->nheld, i, j;
	struct apply_stat st = { 0 };

	if (!n)
		return;
	f->held = NULL;
	f->nheld = f->capheld = 0;
	/* Runs of one fingerprint (there is one in a healthy fleet). */
	for (i = 0; i < n; i = j) {
		struct recs rs = { 0 };

		for (j = i; j < n && h[j].fingerprint == h[i].fingerprint; j++)
			recs_push(&rs, &h[j].r);
		fleet_apply(f, rs.v, rs.n, h[i].fingerprint, "held blocks", 0,
			    &st);
		recs_free(&rs);
	}
	free(h);
}

/* Bits set in the newest generation (INFO's @bits_set). */
int fleet_fill(struct fleet *f, uint64_t *set)
{
	struct kbloom_info info;

	if (get_info(f->fd, f->name, &info))
		return -1;
	*set = info.bits_set;
	return 0;
}
