// SPDX-License-Identifier: GPL-2.0
/*
 * Changes as blocks: KBLOOM_IOC_COLLECT hands out the blocks of a filter's
 * storage that changed since they were last collected, KBLOOM_IOC_APPLY
 * ORs blocks into a filter of the same shape and seed ("Changes as
 * blocks" in include/uapi/linux/kbloom.h). The marks are set by the core
 * as bits are set (kbloom_core_changed()) and belong to the generation
 * (kbloom_gen_track()); this file only reads, clears and copies them.
 *
 * A windowed filter holds its rotations off for the length of a call
 * (kbloom_window_copy_begin()), so every block of the call is numbered
 * against one set of generations, @rotations. The generation stays pinned
 * across the copies to userspace, as EXPORT's does.
 */

#include <linux/bitmap.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kbloom.h"
#include "kbloom_ioc_blocks.h"
#include "kbloom_filter.h"
#include "kbloom_gen.h"

/* Blocks looked at between two looks for a fatal signal. */
#define KBLOOM_CHANGES_YIELD	1024

/* What a block may be ORed into: kbloom_core_fingerprint(). */
static u64 kbloom_fingerprint(struct kbloom_gen *gen)
{
	return kbloom_core_fingerprint(&gen->core,
				       gen->win ? gen->win->generations : 0,
				       gen->win ? gen->win->window_ms : 0);
}

/*
 * Hold a window's rotations off; @rotations and @age_ms then (INFO's
 * @rotations and @newest_age_ms), 0 for a plain filter.
 */
static int kbloom_changes_begin(struct kbloom_gen *gen, u64 *rotations,
				u64 *age_ms)
{
	u32 age;
	int ret;

	*rotations = 0;
	*age_ms = 0;
	if (!gen->win)
		return 0;
	ret = kbloom_window_copy_begin(gen->win, &age);
	if (!ret)
		kbloom_window_info(gen->win, rotations, age_ms);
	return ret;
}

static void kbloom_changes_end(struct kbloom_gen *gen)
{
	if (gen->win)
		kbloom_window_copy_end(gen->win);
}

/*
 * Marked blocks (@all: every block) from @b->cursor on into @out, marks
 * cleared, at most @b->count, zero blocks skipped. Sets @b->done and
 * @b->cursor.
 */
static int kbloom_collect_blocks(struct kbloom_gen *gen,
				 struct kbloom_blocks *b,
				 struct kbloom_block *out)
{
	u64 nblocks = kbloom_core_blocks(&gen->core);
	u64 pos = b->cursor, total = nblocks * kbloom_gen_slices(gen);
	unsigned long words[KBLOOM_BLOCK_LONGS];
	bool all = b->flags & KBLOOM_COLLECT_ALL;
	struct kbloom_core *core;
	u64 i, scanned = 0;
	u32 g, w;

	if (pos >= total)
		return -EINVAL;
	b->done = 0;
	while (pos < total && b->done < b->count) {
		g = div64_u64_rem(pos, nblocks, &i);
		core = kbloom_gen_slice(gen, g);
		if (!all) {
			/*
			 * Only where to look: adds and other collectors change
			 * marks meanwhile, and test_and_clear_bit() below
			 * decides. A mark set after this look is found by the
			 * next collection.
			 */
			i = data_race(find_next_bit(core->changed, nblocks, i));
			if (i >= nblocks) {
				pos = (u64)(g + 1) * nblocks;
				continue;
			}
			pos = (u64)g * nblocks + i;
		}
		/* Fully ordered: the block is read after the mark went. */
		if ((test_and_clear_bit(i, core->changed) || all) &&
		    kbloom_core_block_read(core, i, words)) {
			out[b->done].index = i;
			out[b->done].generation = g;
			out[b->done].reserved = 0;
			for (w = 0; w < KBLOOM_BLOCK_LONGS; w++)
				kbloom_word_to_le(out[b->done].data +
						  w * sizeof(long), words[w]);
			b->done++;
		}
		pos++;
		if (!(++scanned % KBLOOM_CHANGES_YIELD)) {
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
	}
	b->cursor = pos < total ? pos : 0;
	return 0;
}

/* The blocks a failed call took go back to be collected again. */
static void kbloom_collect_undo(struct kbloom_gen *gen,
				const struct kbloom_block *out, u32 n)
{
	u32 j;

	for (j = 0; j < n; j++)
		set_bit(out[j].index,
			kbloom_gen_slice(gen, out[j].generation)->changed);
}

static int kbloom_collect(struct kbloom_gen *gen, struct kbloom_blocks *b,
			  void __user *argp)
{
	struct kbloom_block *out;
	int ret;

	/* A filter starts tracking on its first collection: all marked. */
	if (!kbloom_gen_tracking(gen)) {
		ret = kbloom_gen_track(gen, true);
		if (ret)
			return ret;
	}
	out = kvmalloc_array(b->count, sizeof(*out), GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	ret = kbloom_changes_begin(gen, &b->rotations, &b->age_ms);
	if (ret)
		goto out_free;
	b->fingerprint = kbloom_fingerprint(gen);
	ret = kbloom_collect_blocks(gen, b, out);
	/* Nothing is lost: what did not reach userspace is marked again. */
	if (!ret && (copy_to_user(u64_to_user_ptr(b->blocks), out,
				  array_size(b->done, sizeof(*out))) ||
		     copy_to_user(argp, b, sizeof(*b))))
		ret = -EFAULT;
	if (ret)
		kbloom_collect_undo(gen, out, b->done);
	kbloom_changes_end(gen);
out_free:
	kvfree(out);
	return ret;
}

/* A block's words, from the image byte order. */
static void kbloom_block_words(const struct kbloom_block *blk,
			       unsigned long *words)
{
	u32 w;

	for (w = 0; w < KBLOOM_BLOCK_LONGS; w++)
		words[w] = kbloom_word_from_le(blk->data + w * sizeof(long));
}

/*
 * Every entry checked, and the fill limit, before any is applied: a bad
 * entry anywhere changes nothing.
 */
static int kbloom_apply_check(struct kbloom_gen *gen,
			      const struct kbloom_blocks *b,
			      const struct kbloom_block *in)
{
	u64 add[KBLOOM_MAX_GENERATIONS] = {};
	unsigned long words[KBLOOM_BLOCK_LONGS];
	u32 j, n = kbloom_gen_slices(gen);

	for (j = 0; j < b->count; j++) {
		kbloom_block_words(&in[j], words);
		if (in[j].reserved || in[j].generation >= n ||
		    !kbloom_core_block_valid(&gen->core, in[j].index, words))
			return -EINVAL;
		if (b->max_set)
			add[in[j].generation] +=
				kbloom_core_block_new(kbloom_gen_slice(gen, in[j].generation),
						      in[j].index, words);
	}
	for (j = 0; b->max_set && j < n; j++)
		if (add[j] && kbloom_gen_slice_set(gen, j) + add[j] > b->max_set)
			return -ENOSPC;
	return 0;
}

static int kbloom_apply(struct kbloom_gen *gen, struct kbloom_blocks *b,
			void __user *argp)
{
	unsigned long words[KBLOOM_BLOCK_LONGS];
	struct kbloom_block *in;
	u64 rotations, age_ms;
	struct kbloom_delta d;
	int ret;
	u32 j;

	if (b->fingerprint != kbloom_fingerprint(gen))
		return -EXDEV;
	/* All of it in before anything changes: a fault changes nothing. */
	in = kvmalloc_array(b->count, sizeof(*in), GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	if (copy_from_user(in, u64_to_user_ptr(b->blocks),
			   array_size(b->count, sizeof(*in)))) {
		ret = -EFAULT;
		goto out_free;
	}
	/*
	 * The answer must be deliverable before the blocks go in; proved
	 * before rotations are held off, which a stalled page would stall.
	 */
	if (copy_to_user(argp, b, sizeof(*b))) {
		ret = -EFAULT;
		goto out_free;
	}
	ret = kbloom_changes_begin(gen, &rotations, &age_ms);
	if (ret)
		goto out_free;
	if (rotations != b->rotations)
		ret = -ESTALE;
	if (!ret)
		ret = kbloom_apply_check(gen, b, in);
	for (j = 0; !ret && j < b->count; j++) {
		memset(&d, 0, sizeof(d));
		kbloom_block_words(&in[j], words);
		kbloom_core_block_or(kbloom_gen_slice(gen, in[j].generation),
				     in[j].index, words, &d);
		kbloom_gen_slice_account(gen, in[j].generation, &d);
		b->set += d.set;
		if (!((j + 1) % KBLOOM_CHANGES_YIELD))
			cond_resched();
	}
	kbloom_changes_end(gen);
	if (!ret) {
		b->done = b->count;
		/* Applied: an unmapped structure now loses only the counts. */
		if (copy_to_user(argp, b, sizeof(*b)))
			ret = -EFAULT;
	}
out_free:
	kvfree(in);
	return ret;
}

/* The argument, checked whole before anything happens. */
static int kbloom_blocks_check(const struct kbloom_blocks *b, bool collect,
			       bool bound)
{
	if (bound ? !!memchr_inv(b->name, 0, sizeof(b->name)) :
		    !kbloom_name_valid(b->name))
		return -EINVAL;
	if (b->count > KBLOOM_BLOCKS_MAX)
		return -E2BIG;
	/* Out-only fields are zero on the way in, as reserved ones. */
	if (!b->count || b->reserved0 || b->done || b->set || b->age_ms ||
	    memchr_inv(b->reserved, 0, sizeof(b->reserved)))
		return -EINVAL;
	if (collect)
		return b->flags & ~KBLOOM_COLLECT_ALL || b->rotations ||
		       b->fingerprint || b->max_set ? -EINVAL : 0;
	return b->flags || b->cursor ? -EINVAL : 0;
}

/**
 * kbloom_ioc_blocks() - KBLOOM_IOC_COLLECT and KBLOOM_IOC_APPLY
 * @file: the device, or a handle.
 * @argp: the struct kbloom_blocks.
 * @collect: COLLECT, else APPLY.
 * @bound: a handle's filter, or NULL on the device (by name).
 *
 * Return: 0 or a negative errno, as the uapi describes.
 */
long kbloom_ioc_blocks(struct file *file, void __user *argp, bool collect,
		       struct kbloom_filter *bound)
{
	struct kbloom_filter *filter;
	struct kbloom_blocks b;
	struct kbloom_gen *gen;
	long ret;

	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&b, argp, sizeof(b)))
		return -EFAULT;
	ret = kbloom_blocks_check(&b, collect, bound);
	if (ret)
		return ret;
	filter = bound ?: kbloom_filter_get(b.name);
	if (!filter)
		return -ENOENT;
	gen = kbloom_gen_get(filter);
	if (READ_ONCE(filter->dead))
		ret = -ENOENT;
	else if (gen->core.flags & KBLOOM_CORE_COUNTING)
		ret = -EOPNOTSUPP;
	else
		ret = collect ? kbloom_collect(gen, &b, argp) :
				kbloom_apply(gen, &b, argp);
	kbloom_gen_put(gen);
	if (!bound)
		kbloom_filter_put(filter);
	return ret;
}
