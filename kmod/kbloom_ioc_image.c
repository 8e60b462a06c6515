// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/bloom's image commands: EXPORT copies a filter's parameters, seed
 * and storage out, IMPORT makes or replaces a filter from them
 * (Documentation/kbloom-image.md). The rules of every command are
 * kbloom_dev.c's.
 */

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kbloom_filter.h"
#include "kbloom_gen.h"
#include "kbloom_ioc.h"
#include "kbloom_ioc_image.h"
#include "kbloom_params.h"

/*
 * Images travel in the storage's byte order (kbloom_word_to_le()), copied
 * through a bounce buffer in pieces, yielding between them.
 */
#define KBLOOM_BOUNCE_BYTES	(64 * 1024)

static int kbloom_copy_out(void __user *dst, const unsigned long *bitmap,
			   size_t bytes, u8 *bounce)
{
	size_t off, n, i;

	for (off = 0; off < bytes; off += n) {
		n = min_t(size_t, bytes - off, KBLOOM_BOUNCE_BYTES);
		for (i = 0; i < n; i += sizeof(long))
			kbloom_word_to_le(bounce + i,
					  READ_ONCE(bitmap[(off + i) / sizeof(long)]));
		if (copy_to_user(dst + off, bounce, n))
			return -EFAULT;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

static int kbloom_copy_in(unsigned long *bitmap, const void __user *src,
			  size_t bytes, u8 *bounce)
{
	size_t off, n, i;

	for (off = 0; off < bytes; off += n) {
		n = min_t(size_t, bytes - off, KBLOOM_BOUNCE_BYTES);
		if (copy_from_user(bounce, src + off, n))
			return -EFAULT;
		for (i = 0; i < n; i += sizeof(long))
			bitmap[(off + i) / sizeof(long)] =
				kbloom_word_from_le(bounce + i);
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

static int kbloom_get_image(void __user *argp, struct kbloom_image *img)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(img, argp, sizeof(*img)))
		return -EFAULT;
	if (!kbloom_name_valid(img->name))
		return -EINVAL;
	return 0;
}

/*
 * Import: a private generation's storage, every generation (newest first)
 * one after the other, from userspace, each checked for clear padding.
 */
static int kbloom_copy_storage_in(struct kbloom_gen *gen,
				  const void __user *payload, u8 *bounce)
{
	u32 i, n = kbloom_gen_slices(gen);
	size_t bytes = gen->bytes / n;
	struct kbloom_core *core;
	int ret = 0;

	/* Nobody else can see it: the lock only satisfies the accessor. */
	kbloom_gen_lock(gen);
	for (i = 0; i < n && !ret; i++) {
		core = kbloom_gen_slice(gen, i);
		ret = kbloom_copy_in(core->bitmap, payload + i * bytes, bytes,
				     bounce);
		if (!ret && !kbloom_core_padding_clear(core))
			ret = -EINVAL;
	}
	kbloom_gen_unlock(gen);
	return ret;
}

/*
 * Export: a filter's storage to userspace, generations newest first. No
 * lock is held across the copy of a plain filter (it may fault and take
 * its time); a windowed one's waits for a rotation under way and holds
 * off the next (kbloom_window_copy_begin()), so that the image is of one
 * set of generations.
 */
static int kbloom_copy_storage_out(struct kbloom_gen *gen,
				   void __user *payload, u8 *bounce,
				   u32 *age_ms)
{
	u32 i, n = kbloom_gen_slices(gen);
	size_t bytes = gen->bytes / n;
	int ret;

	if (!gen->win)
		return kbloom_copy_out(payload, gen->core.bitmap, bytes,
				       bounce);
	ret = kbloom_window_copy_begin(gen->win, age_ms);
	if (ret)
		return ret;
	for (i = 0; i < n && !ret; i++)
		ret = kbloom_copy_out(payload + i * bytes,
				      kbloom_window_slice(gen->win, i)->core.bitmap,
				      bytes, bounce);
	kbloom_window_copy_end(gen->win);
	return ret;
}

long kbloom_ioc_export(void __user *argp)
{
	struct kbloom_filter *filter;
	struct kbloom_image img;
	struct kbloom_totals t;
	struct kbloom_gen *gen;
	u8 *bounce = NULL;
	int ret;

	ret = kbloom_get_image(argp, &img);
	if (ret)
		return ret;
	/* All out fields but @payload_len: zero on the way in. */
	if (img.import_flags || img.age_ms || img.seed_hi[0] ||
	    img.seed_hi[1] || img.generations || img.window_ms)
		return -EINVAL;
	filter = kbloom_filter_get(img.name);
	if (!filter)
		return -ENOENT;

	/* Pinned, not locked: the copy may fault and take its time. */
	gen = kbloom_gen_get(filter);
	if (img.payload_len < gen->bytes) {
		ret = -ENOBUFS;
	} else {
		bounce = kvmalloc(KBLOOM_BOUNCE_BYTES, GFP_KERNEL);
		ret = bounce ? kbloom_copy_storage_out(gen,
						u64_to_user_ptr(img.payload),
						bounce, &img.age_ms) : -ENOMEM;
	}
	/* Out only: whatever the caller left in it is not part of it. */
	img.flags = 0;
	if (gen->win) {
		img.generations = gen->win->generations;
		img.window_ms = gen->win->window_ms;
		if (gen->win->fill_limit)
			img.flags |= KBLOOM_CREATE_ROTATE_AT_FILL;
	}
	img.bits = gen->core.nbits;
	img.hashes = gen->core.nhashes;
	img.flags |= kbloom_uapi_flags(gen->core.flags) |
		     kbloom_bpf_flags(filter->bpf_ops) |
		     kbloom_track_flags(gen);
	img.seed[0] = gen->core.seed[0];
	img.seed[1] = gen->core.seed[1];
	img.seed_hi[0] = gen->core.seed[2];
	img.seed_hi[1] = gen->core.seed[3];
	img.payload_len = gen->bytes;
	img.capacity = gen->capacity;
	img.fpr_ppb = gen->fpr_ppb;
	img.hash_scheme = kbloom_flags_scheme(gen->core.flags);
	kbloom_gen_put(gen);
	kbloom_filter_totals(filter, &t);
	img.adds = t.adds;
	kbloom_filter_put(filter);
	kvfree(bounce);

	if ((!ret || ret == -ENOBUFS) && copy_to_user(argp, &img, sizeof(img)))
		ret = -EFAULT;
	memzero_explicit(&img, sizeof(img));
	return ret;
}

/* IMPORT from a checked copy of the argument, which holds the seed. */
static int kbloom_import(const struct kbloom_image *img)
{
	struct kbloom_params p = {};
	struct kbloom_filter *filter;
	struct kbloom_gen *gen;
	u32 seed[4];
	bool replace;
	u8 *bounce;
	int ret;

	struct kbloom_create c = {
		.flags = img->flags & ~(KBLOOM_CREATE_COUNTING |
					KBLOOM_CREATE_BLOCKED),
		.capacity = img->capacity,
		.window_ms = img->window_ms,
		.generations = img->generations,
	};

	if (img->import_flags & ~KBLOOM_IMPORT_REPLACE ||
	    img->flags & ~(KBLOOM_CREATE_COUNTING | KBLOOM_CREATE_BLOCKED |
			   KBLOOM_CREATE_ROTATE_AT_FILL | KBLOOM_CREATE_BPF |
			   KBLOOM_CREATE_TRACK_CHANGES) ||
	    !kbloom_scheme_valid(img->hash_scheme) ||
	    (img->hash_scheme == KBLOOM_HASH_JHASH &&
	     (img->seed_hi[0] || img->seed_hi[1])) ||
	    (img->age_ms && !img->generations) || img->age_ms > INT_MAX)
		return -EINVAL;
	/* The window, as CREATE checks it. */
	ret = kbloom_create_window(&c, &p);
	if (ret)
		return ret;
	p.nbits = img->bits;
	p.nhashes = img->hashes;
	p.flags = kbloom_core_flags(img->flags) |
		  kbloom_scheme_flags(img->hash_scheme);
	p.capacity = img->capacity;
	p.fpr_ppb = img->fpr_ppb;
	p.adds = img->adds;
	/* A new filter's; a replaced one keeps its own. */
	p.bpf_ops = kbloom_bpf_ops(img->flags);
	p.track_changes = img->flags & KBLOOM_CREATE_TRACK_CHANGES;
	/* Exactly what CREATE would have accepted. */
	ret = kbloom_params_check(&p);
	if (ret)
		return ret;
	if (img->payload_len != (u64)kbloom_core_bytes(p.nbits, p.flags) *
				max_t(u32, p.generations, 1))
		return -EINVAL;

	/* Fail early, before allocating gigabytes, when the name is wrong. */
	replace = img->import_flags & KBLOOM_IMPORT_REPLACE;
	filter = kbloom_filter_get(img->name);
	/*
	 * A replaced filter keeps tracking if it did: its new contents are
	 * all marked. One that starts tracking after this look starts with
	 * every block marked anyway (kbloom_gen_track()).
	 */
	if (replace && filter)
		p.track_changes = kbloom_filter_tracking(filter) &&
				  !(p.flags & KBLOOM_CORE_COUNTING);
	kbloom_filter_put(filter);
	if (replace && !filter)
		return -ENOENT;
	if (!replace && filter)
		return -EEXIST;
	if (!replace && kbloom_filter_count() >= READ_ONCE(kbloom_max_filters))
		return -EDQUOT;

	seed[0] = img->seed[0];
	seed[1] = img->seed[1];
	seed[2] = img->seed_hi[0];
	seed[3] = img->seed_hi[1];
	p.seed = seed;

	/* Everything is checked in a private generation before it is used. */
	bounce = kvmalloc(KBLOOM_BOUNCE_BYTES, GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;
	gen = kbloom_gen_new(&p);
	memzero_explicit(seed, sizeof(seed));
	if (IS_ERR(gen)) {
		ret = PTR_ERR(gen);
		goto out_free_bounce;
	}
	if (gen->win)
		kbloom_window_set_age(gen->win, img->age_ms);
	ret = kbloom_copy_storage_in(gen, u64_to_user_ptr(img->payload),
				     bounce);
	if (!ret)
		ret = kbloom_gen_recount(gen);
	if (!ret)
		ret = replace ? kbloom_filter_replace_gen(img->name, gen, &p) :
				kbloom_filter_add_gen(img->name, gen, &p, NULL);
	if (ret)
		kbloom_gen_destroy(gen);
out_free_bounce:
	kvfree(bounce);
	return ret;
}

long kbloom_ioc_import(struct file *file, void __user *argp)
{
	struct kbloom_image img;
	int ret;

	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	ret = kbloom_get_image(argp, &img);
	if (!ret)
		ret = kbloom_import(&img);
	/* The seed was in our copy: do not leave it on the stack. */
	memzero_explicit(&img, sizeof(img));
	return ret;
}
