// SPDX-License-Identifier: GPL-2.0
/*
 * bloomsync's device: the ioctls it makes on /dev/bloom (COLLECT, APPLY,
 * INFO; EXPORT and IMPORT through bloomctl's images.c), and the shape
 * of a filter, compared field by field between a template, a local filter
 * and the fleet filter.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "bloomsync.h"

int dev_open(void)
{
	return open_device(O_RDWR);
}

/* KBLOOM_IOC_INFO: 0, or the errno, reported. */
int dev_info(int fd, const char *name, struct kbloom_info *info)
{
	int err = get_info(fd, name, info);

	if (err)
		pr_err("filter '%s': %s", name, kerr(err));
	return err;
}

void shape_of_image(const struct image *img, struct shape *s)
{
	memset(s, 0, sizeof(*s));
	s->bits = img->bits;
	s->hashes = img->hashes;
	s->flags = img_kflags(img) &
		   (KBLOOM_CREATE_COUNTING | KBLOOM_CREATE_BLOCKED);
	s->hash_scheme = img->hash_scheme;
	s->seed[0] = img->seed[0];
	s->seed[1] = img->seed[1];
	s->seed[2] = img->seed_hi[0];
	s->seed[3] = img->seed_hi[1];
	s->window_ms = img->window_ms;
	s->generations = img->generations;
}

/* The shape of filter @name (EXPORT: the seed too): 0, -ENOENT, or -1. */
int dev_shape(int fd, const char *name, struct shape *s)
{
	struct filter_image fi;
	int ret = filter_image(fd, name, false, &fi, true);

	if (ret)
		return ret;
	shape_of_image(&fi.img, s);
	filter_image_release(&fi);
	return 0;
}

/*
 * What differs between two shapes, as "bits 1024 != 2048, seed, ...": the
 * number of fields that differ, 0 if none.
 */
int shape_diff(const struct shape *a, const struct shape *b, char *buf,
	       size_t len)
{
	size_t used = 0;
	int n = 0;

	buf[0] = '\0';
#define DIFF(cond, ...)							\
	do {								\
		if ((cond) && used < len) {				\
			used += snprintf(buf + used, len - used, "%s",	\
					 n++ ? ", " : "");		\
			if (used < len)					\
				used += snprintf(buf + used, len - used, \
						 __VA_ARGS__);		\
		}							\
	} while (0)
	DIFF(a->bits != b->bits, "bits %" PRIu64 " != %" PRIu64, a->bits,
	     b->bits);
	DIFF(a->hashes != b->hashes, "hashes %u != %u", a->hashes, b->hashes);
	DIFF((a->flags ^ b->flags) & KBLOOM_CREATE_BLOCKED, "layout %s != %s",
	     a->flags & KBLOOM_CREATE_BLOCKED ? "blocked" : "standard",
	     b->flags & KBLOOM_CREATE_BLOCKED ? "blocked" : "standard");
	DIFF((a->flags ^ b->flags) & KBLOOM_CREATE_COUNTING,
	     "counting %s != %s",
	     a->flags & KBLOOM_CREATE_COUNTING ? "yes" : "no",
	     b->flags & KBLOOM_CREATE_COUNTING ? "yes" : "no");
	DIFF(a->hash_scheme != b->hash_scheme, "hash scheme %s != %s",
	     hash_scheme_name(a->hash_scheme),
	     hash_scheme_name(b->hash_scheme));
	/* The seed is secret: only that it differs. */
	DIFF(memcmp(a->seed, b->seed, sizeof(a->seed)), "seed");
	DIFF(a->window_ms != b->window_ms, "window %ums != %ums", a->window_ms,
	     b->window_ms);
	DIFF(a->generations != b->generations, "generations %u != %u",
	     a->generations, b->generations);
#undef DIFF
	return n;
}

/* One KBLOOM_IOC_COLLECT: 0 or the errno (not reported). */
int dev_collect(int fd, const char *name, uint32_t flags, uint64_t cursor,
		struct kbloom_block *buf, uint32_t room,
		struct kbloom_blocks *out)
{
	memset(out, 0, sizeof(*out));
	set_name(out->name, name);
	out->blocks = (__u64)(uintptr_t)buf;
	out->count = room;
	out->flags = flags;
	out->cursor = cursor;
	return ioctl(fd, KBLOOM_IOC_COLLECT, out) ? errno : 0;
}

/* One KBLOOM_IOC_APPLY of at most KBLOOM_BLOCKS_MAX: 0 or the errno. */
int dev_apply(int fd, const char *name, const struct kbloom_block *b,
	      uint32_t n, uint64_t rotations, uint64_t fingerprint,
	      uint64_t max_set, uint64_t *set)
{
	struct kbloom_blocks a;

	memset(&a, 0, sizeof(a));
	set_name(a.name, name);
	a.blocks = (__u64)(uintptr_t)b;
	a.count = n;
	a.rotations = rotations;
	a.fingerprint = fingerprint;
	a.max_set = max_set;
	if (ioctl(fd, KBLOOM_IOC_APPLY, &a))
		return errno;
	if (set)
		*set = a.set;
	return 0;
}

/*
 * An image's payload as blocks, zero blocks left out: generation g of a
 * windowed image (the payload's g-th, newest first) holds the epoch of the
 * image's newest generation minus g. Returns the number of blocks, or
 * (size_t)-1 without memory.
 */
size_t image_to_recs(const struct image *img, const unsigned char *payload,
		     struct recs *out)
{
	uint64_t period = window_period(img->window_ms, img->generations);
	uint32_t gens = img->generations ? img->generations : 1, gi;
	uint64_t gb = img->payload_len / gens, off, len, i;
	int64_t newest = period ? epoch_of_newest(img->newest_start_ms, 0,
						  period) : 0;
	static const unsigned char zero[KBLOOM_BLOCK_BYTES];
	struct rec r;
	size_t n = 0;

	for (gi = 0; gi < gens; gi++)
		for (i = 0; i * KBLOOM_BLOCK_BYTES < gb; i++) {
			off = gi * gb + i * KBLOOM_BLOCK_BYTES;
			len = gb - i * KBLOOM_BLOCK_BYTES;
			if (len > KBLOOM_BLOCK_BYTES)
				len = KBLOOM_BLOCK_BYTES;
			if (!memcmp(payload + off, zero, len))
				continue;
			memset(&r, 0, sizeof(r));
			r.index = i;
			r.epoch = period ? newest - gi : 0;
			memcpy(r.data, payload + off, len);
			if (recs_push(out, &r))
				return (size_t)-1;
			n++;
		}
	return n;
}
