// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/bloom's commands on the set of filters (CREATE, DESTROY, LIST) and
 * on whole filters (CLEAR, ROTATE, INFO, MERGE, COMPARE), by name. The
 * rules of every command are kbloom_dev.c's.
 */

#include <linux/capability.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kbloom_filter.h"
#include "kbloom_gen.h"
#include "kbloom_ioc.h"
#include "kbloom_ioc_filters.h"
#include "kbloom_params.h"
#include "kbloom_storage.h"

/*
 * Commands that change the set of filters or their contents wholesale:
 * a read-write fd and CAP_SYS_ADMIN, in that order.
 */
static int kbloom_check_admin(struct file *file)
{
	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	return 0;
}

long kbloom_ioc_create(struct file *file, void __user *argp)
{
	struct kbloom_filter *filter;
	struct kbloom_create c = {};
	struct kbloom_params p = {};
	int ret;

	ret = kbloom_check_admin(file);
	if (ret)
		return ret;
	if (copy_from_user(&c, argp, sizeof(c)))
		return -EFAULT;
	if (c.flags & ~(KBLOOM_CREATE_COUNTING | KBLOOM_CREATE_LIKE |
			KBLOOM_CREATE_ROTATE_AT_FILL | KBLOOM_CREATE_BLOCKED |
			KBLOOM_CREATE_BPF | KBLOOM_CREATE_TRACK_CHANGES) ||
	    !kbloom_zeroed(c.reserved, sizeof(c.reserved)) ||
	    !kbloom_name_valid(c.name))
		return -EINVAL;
	/* The answer must be deliverable before there is anything to undo. */
	if (copy_to_user(argp, &c, sizeof(c)))
		return -EFAULT;

	p.flags = kbloom_core_flags(c.flags);
	p.bpf_ops = kbloom_bpf_ops(c.flags);
	p.track_changes = c.flags & KBLOOM_CREATE_TRACK_CHANGES;
	if (c.flags & KBLOOM_CREATE_LIKE) {
		/* Everything comes from the model, hash and window included. */
		if (c.bits || c.hashes || c.fpr_ppb || c.capacity ||
		    c.hash_scheme || c.window_ms || c.generations ||
		    c.flags & KBLOOM_CREATE_ROTATE_AT_FILL ||
		    !kbloom_name_valid(c.like))
			return -EINVAL;
		ret = kbloom_filter_create_like(c.name, c.like, &p, &filter);
	} else {
		ret = kbloom_create_params(&c, &p);
		if (!ret)
			ret = kbloom_filter_create(c.name, &p, &filter);
		/* A rule's filter of this very shape becomes the caller's. */
		if (ret == -EEXIST &&
		    !kbloom_filter_adopt(c.name, &p, &filter))
			ret = 0;
	}
	if (ret)
		return ret;

	/* Report what was made, from what it was made of. */
	c.bits = p.nbits;
	c.hashes = p.nhashes;
	c.flags = (c.flags & KBLOOM_CREATE_LIKE) | kbloom_uapi_flags(p.flags) |
		  (p.rotate_at_fill ? KBLOOM_CREATE_ROTATE_AT_FILL : 0) |
		  kbloom_bpf_flags(filter->bpf_ops) |
		  (kbloom_filter_tracking(filter) ?
		   KBLOOM_CREATE_TRACK_CHANGES : 0);
	c.capacity = p.capacity;
	c.fpr_ppb = p.fpr_ppb;
	c.hash_scheme = kbloom_flags_scheme(p.flags);
	c.generations = p.generations;
	c.window_ms = p.window_ms;
	if (copy_to_user(argp, &c, sizeof(c))) {
		/*
		 * Unmapped since the check above. "On any error nothing is
		 * created": take back this filter, not whatever may have
		 * taken its name since.
		 */
		if (kbloom_filter_unlink_this(filter) == -EBUSY)
			pr_notice_ratelimited("kbloom: %s: created, pinned before the result could be written back: it stays\n",
					      c.name);
		ret = -EFAULT;
	}
	kbloom_filter_put(filter);
	return ret;
}

/* Copy in a struct kbloom_name and check it. */
static int kbloom_get_name(void __user *argp, struct kbloom_name *n)
{
	if (copy_from_user(n, argp, sizeof(*n)))
		return -EFAULT;
	if (!kbloom_zeroed(n->reserved, sizeof(n->reserved)) ||
	    !kbloom_name_valid(n->name))
		return -EINVAL;
	return 0;
}

long kbloom_ioc_destroy(struct file *file, void __user *argp)
{
	struct kbloom_name n;
	int ret;

	ret = kbloom_check_admin(file);
	if (ret)
		return ret;
	ret = kbloom_get_name(argp, &n);
	if (ret)
		return ret;
	return kbloom_filter_destroy(n.name);
}

/*
 * The filter named by a struct kbloom_name at @argp, for the commands that
 * change a filter wholesale (CLEAR, ROTATE): CAP_SYS_ADMIN and a writable
 * fd first, as for CREATE. A reference the caller puts.
 */
static struct kbloom_filter *kbloom_admin_filter(struct file *file,
						 void __user *argp)
{
	struct kbloom_filter *filter;
	struct kbloom_name n;
	int ret;

	ret = kbloom_check_admin(file);
	if (!ret)
		ret = kbloom_get_name(argp, &n);
	if (ret)
		return ERR_PTR(ret);
	filter = kbloom_filter_get(n.name);
	return filter ? filter : ERR_PTR(-ENOENT);
}

long kbloom_ioc_clear(struct file *file, void __user *argp)
{
	struct kbloom_filter *filter = kbloom_admin_filter(file, argp);
	int ret;

	if (IS_ERR(filter))
		return PTR_ERR(filter);
	ret = kbloom_filter_clear(filter);
	kbloom_filter_put(filter);
	return ret;
}

long kbloom_ioc_rotate(struct file *file, void __user *argp)
{
	struct kbloom_filter *filter = kbloom_admin_filter(file, argp);
	struct kbloom_gen *gen;
	int ret = 0;

	if (IS_ERR(filter))
		return PTR_ERR(filter);
	gen = kbloom_gen_get(filter);
	if (gen->win)
		kbloom_window_rotate_now(gen->win);
	else
		ret = -EINVAL;
	kbloom_gen_put(gen);
	kbloom_filter_put(filter);
	return ret;
}

long kbloom_ioc_info(void __user *argp)
{
	struct kbloom_filter *filter;
	struct kbloom_totals t;
	struct kbloom_info info;
	struct kbloom_gen *gen;

	if (copy_from_user(&info, argp, sizeof(info)))
		return -EFAULT;
	/* Everything from @window_ms on was reserved: it must be zero. */
	if (!kbloom_zeroed(&info.window_ms,
			   sizeof(info) - offsetof(struct kbloom_info,
						   window_ms)) ||
	    !kbloom_name_valid(info.name))
		return -EINVAL;
	filter = kbloom_filter_get(info.name);
	if (!filter)
		return -ENOENT;
	gen = kbloom_gen_get(filter);
	info.bits = gen->core.nbits;
	info.hashes = gen->core.nhashes;
	info.flags = kbloom_uapi_flags(gen->core.flags) |
		     kbloom_bpf_flags(filter->bpf_ops) |
		     kbloom_track_flags(gen);
	info.capacity = gen->capacity;
	info.fpr_ppb = gen->fpr_ppb;
	info.hash_scheme = kbloom_flags_scheme(gen->core.flags);
	/* Counters, not scans: O(1) whoever asks. */
	kbloom_gen_occupancy(gen, &info.bits_set, &info.saturated);
	info.memory_bytes = gen->bytes;
	if (gen->win) {
		info.generations = gen->win->generations;
		info.window_ms = gen->win->window_ms;
		if (gen->win->fill_limit)
			info.flags |= KBLOOM_CREATE_ROTATE_AT_FILL;
		kbloom_window_info(gen->win, &info.rotations,
				   &info.newest_age_ms);
	}
	kbloom_gen_put(gen);
	kbloom_filter_totals(filter, &t);
	info.adds = t.adds;
	info.queries = t.queries;
	info.hits = t.hits;
	kbloom_filter_put(filter);
	return copy_to_user(argp, &info, sizeof(info)) ? -EFAULT : 0;
}

long kbloom_ioc_list(void __user *argp)
{
	char *names;
	struct kbloom_list l;
	u32 count;
	int ret;

	if (copy_from_user(&l, argp, sizeof(l)))
		return -EFAULT;
	if (l.reserved)
		return -EINVAL;
	ret = kbloom_filter_names(&names, &count);
	if (ret)
		return ret;
	if (count && l.count &&
	    copy_to_user(u64_to_user_ptr(l.names), names,
			 (size_t)min(count, l.count) * KBLOOM_NAME_MAX))
		ret = -EFAULT;
	kvfree(names);
	if (ret)
		return ret;
	l.count = count;
	return copy_to_user(argp, &l, sizeof(l)) ? -EFAULT : 0;
}

long kbloom_ioc_merge(struct file *file, void __user *argp,
		      bool compare)
{
	struct kbloom_filter *a, *b;
	struct kbloom_delta d = {};
	struct kbloom_gen *ga, *gb;
	struct kbloom_merge m;
	u64 stuck;
	int ret = 0;

	/*
	 * Both walk whole filters: not for every reader. COMPARE stays open
	 * to an administrator on a read-only fd, as it always was.
	 */
	if (!(file->f_mode & FMODE_WRITE) && (!compare || !capable(CAP_SYS_ADMIN)))
		return -EBADF;
	if (copy_from_user(&m, argp, sizeof(m)))
		return -EFAULT;
	if (m.reserved0 || !kbloom_zeroed(m.reserved, sizeof(m.reserved)) ||
	    !kbloom_name_valid(m.dst) || !kbloom_name_valid(m.src))
		return -EINVAL;
	m.bits_dst = 0;
	m.bits_src = 0;
	m.bits_union = 0;
	m.bits_inter = 0;
	m.mismatch = 0;
	/* A merge must be reportable before it is done (counters add up). */
	if (copy_to_user(argp, &m, sizeof(m)))
		return -EFAULT;

	a = kbloom_filter_get(m.dst);
	b = kbloom_filter_get(m.src);
	if (!a || !b) {
		ret = -ENOENT;
		goto out_put;
	}
	/*
	 * Both generations pinned: a replacement meanwhile is as if it came
	 * after the merge (which then went into the old contents).
	 */
	ga = kbloom_gen_get(a);
	gb = kbloom_gen_get(b);
	m.mismatch = kbloom_gen_mismatch(ga, gb);
	if (ga->win || gb->win) {
		/* Generations rotate on their own clocks: no meaningful union. */
		ret = -EOPNOTSUPP;
	} else if (m.mismatch) {
		ret = -EINVAL;
	} else if (compare) {
		kbloom_gen_occupancy(ga, &m.bits_dst, &stuck);
		kbloom_gen_occupancy(gb, &m.bits_src, &stuck);
		ret = kbloom_core_compare(&ga->core, &gb->core, &m.bits_inter,
					  &m.bits_union);
	} else if (ga != gb) {
		ret = kbloom_core_merge(&ga->core, &gb->core, &d);
		kbloom_occ_account(ga->occ, &d);
	}
	kbloom_gen_put(gb);
	kbloom_gen_put(ga);
	/* Written back on -EINVAL too: mismatch says what differs. */
	if ((!ret || ret == -EINVAL) && copy_to_user(argp, &m, sizeof(m)))
		ret = -EFAULT;
out_put:
	kbloom_filter_put(a);
	kbloom_filter_put(b);
	return ret;
}
