// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/bloom: the ioctl interface (include/uapi/linux/kbloom.h).
 *
 * Every argument structure is copied in exactly once, checked whole
 * (reserved fields, flags, names) before anything happens, and worked on
 * from the kernel copy, so userspace cannot change it under us. Batched
 * calls stream keys through a bounded kernel buffer in chunks, yielding
 * between chunks, so one call with a million keys neither pins a huge
 * allocation nor holds the CPU.
 *
 * A write to userspace that can fail comes before the change it reports,
 * never after: a command that changes a filter first proves it can write
 * its answer (writing zeroes or the unchanged argument back), and a batch
 * counts a chunk in @done before it writes the chunk's results. So an
 * -EFAULT means "nothing happened" or "exactly @done keys happened", and
 * retrying never applies a key twice.
 */

#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/unaligned.h>

#include "kbloom.h"
#include "kbloom_changes.h"
#include "kbloom_dev.h"
#include "kbloom_filter.h"
#include "kbloom_gen.h"
#include "kbloom_params.h"
#include "kbloom_storage.h"

static bool kbloom_zeroed(const void *p, size_t size)
{
	return !memchr_inv(p, 0, size);
}

/*
 * Modifying a filter's contents needs the device opened for writing;
 * reading it, only opened. Modifying the set of filters needs
 * CAP_SYS_ADMIN, checked on every call: the device mode alone may have
 * been relaxed by the administrator for a group of query-only users.
 */
static bool kbloom_op_writes(enum kbloom_op op)
{
	return op != KBLOOM_OP_QUERY;
}

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

/* What INFO and EXPORT report of a generation's change tracking. */
static u32 kbloom_track_flags(struct kbloom_gen *gen)
{
	return kbloom_gen_tracking(gen) ? KBLOOM_CREATE_TRACK_CHANGES : 0;
}

static bool kbloom_filter_tracking(struct kbloom_filter *filter)
{
	struct kbloom_gen *gen = kbloom_gen_get(filter);
	bool tracking = kbloom_gen_tracking(gen);

	kbloom_gen_put(gen);
	return tracking;
}

static long kbloom_ioc_version(void __user *argp)
{
	struct kbloom_version v = {
		.api_version = KBLOOM_API_VERSION,
		.hash_scheme = KBLOOM_HASH_JHASH,
		.default_hash_scheme = KBLOOM_HASH_DEFAULT,
		.max_generations = KBLOOM_MAX_GENERATIONS,
		.features = KBLOOM_FEATURE_BATCH | KBLOOM_FEATURE_TEST_AND_ADD |
			    KBLOOM_FEATURE_SIZING | KBLOOM_FEATURE_COUNTING |
			    KBLOOM_FEATURE_MERGE | KBLOOM_FEATURE_IMAGE |
			    KBLOOM_FEATURE_SIPHASH | KBLOOM_FEATURE_WINDOW |
			    KBLOOM_FEATURE_HANDLE | KBLOOM_FEATURE_BLOCKED |
			    KBLOOM_FEATURE_BPF_ACCESS |
			    KBLOOM_FEATURE_WINDOW_AGE | KBLOOM_FEATURE_CHANGES,
		.min_bits = KBLOOM_MIN_BITS,
		.max_bits = KBLOOM_MAX_BITS,
		.max_hashes = KBLOOM_MAX_HASHES,
		.max_key_len = KBLOOM_KEY_MAX,
		.max_batch = KBLOOM_BATCH_MAX,
		.name_max = KBLOOM_NAME_MAX,
	};

	return copy_to_user(argp, &v, sizeof(v)) ? -EFAULT : 0;
}

static long kbloom_ioc_create(struct file *file, void __user *argp)
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

static long kbloom_ioc_destroy(struct file *file, void __user *argp)
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

static long kbloom_ioc_clear(struct file *file, void __user *argp)
{
	struct kbloom_filter *filter = kbloom_admin_filter(file, argp);
	int ret;

	if (IS_ERR(filter))
		return PTR_ERR(filter);
	ret = kbloom_filter_clear(filter);
	kbloom_filter_put(filter);
	return ret;
}

static long kbloom_ioc_rotate(struct file *file, void __user *argp)
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

static long kbloom_ioc_info(void __user *argp)
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

static long kbloom_ioc_list(void __user *argp)
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

/* Can @op run on @core at all? */
static int kbloom_op_check(const struct kbloom_core *core, enum kbloom_op op)
{
	if (op == KBLOOM_OP_REMOVE && !(core->flags & KBLOOM_CORE_COUNTING))
		return -EOPNOTSUPP;
	return 0;
}

/*
 * The name of a key command: a filter's on the device; on a handle, none
 * (all zero), since the handle is bound to its filter.
 */
static bool kbloom_key_name_valid(const char *name,
				  struct kbloom_filter *bound)
{
	return bound ? kbloom_zeroed(name, KBLOOM_NAME_MAX) :
		       kbloom_name_valid(name);
}

/*
 * The filter a key command works on: the handle's own (@bound, whose file
 * holds the reference), or a reference to the named one. Put with
 * kbloom_key_filter_put().
 */
static struct kbloom_filter *kbloom_key_filter_get(const char *name,
						   struct kbloom_filter *bound)
{
	return bound ? bound : kbloom_filter_get(name);
}

static void kbloom_key_filter_put(struct kbloom_filter *filter,
				  struct kbloom_filter *bound)
{
	if (!bound)
		kbloom_filter_put(filter);
}

/*
 * Keys up to this long (any flow key of xt_bloom's, a hash, an address)
 * are copied to the stack: no allocation per key on the single-key path.
 */
#define KBLOOM_KEY_ONSTACK	64

static long kbloom_ioc_key(struct file *file, void __user *argp,
			   enum kbloom_op op, struct kbloom_filter *bound)
{
	struct kbloom_key __user *uk = argp;
	u8 onstack[KBLOOM_KEY_ONSTACK] __aligned(8);
	struct kbloom_filter *filter;
	struct kbloom_gen *gen;
	struct kbloom_key k;
	void *key = onstack;
	int ret = 0;

	if (kbloom_op_writes(op) && !(file->f_mode & FMODE_WRITE))
		return -EBADF;
	if (copy_from_user(&k, argp, sizeof(k)))
		return -EFAULT;
	if (!kbloom_zeroed(k.reserved, sizeof(k.reserved)) ||
	    !kbloom_key_name_valid(k.name, bound) || !k.len ||
	    k.len > KBLOOM_KEY_MAX)
		return -EINVAL;
	/*
	 * A change must not happen unreported: prove @result writable
	 * first. Only an unmap racing with this call can still lose the
	 * answer, never the change.
	 */
	if (kbloom_op_writes(op) && put_user(0, &uk->result))
		return -EFAULT;
	if (k.len > sizeof(onstack))
		key = memdup_user(u64_to_user_ptr(k.key), k.len);
	else if (copy_from_user(onstack, u64_to_user_ptr(k.key), k.len))
		key = ERR_PTR(-EFAULT);
	if (IS_ERR(key))
		return PTR_ERR(key);
	filter = kbloom_key_filter_get(k.name, bound);
	if (!filter) {
		ret = -ENOENT;
		goto out_free_key;
	}
	rcu_read_lock();
	gen = kbloom_filter_gen(filter);
	ret = READ_ONCE(filter->dead) ? -ENOENT :
					kbloom_op_check(&gen->core, op);
	if (!ret)
		k.result = kbloom_gen_do(gen, op, key, k.len);
	rcu_read_unlock();
	if (!ret)
		kbloom_filter_count_op(filter, op, 1, k.result);
	kbloom_key_filter_put(filter, bound);
	if (!ret && put_user(k.result, &uk->result))
		ret = -EFAULT;
out_free_key:
	if (key != onstack)
		kfree(key);
	return ret;
}

/*
 * A batch goes through in chunks of at most KBLOOM_CHUNK_KEYS keys and
 * KBLOOM_CHUNK_BYTES key bytes. Every chunk but the last holds a multiple
 * of 8 keys, so each chunk's results start on a byte of the user's bitmap
 * and are written with one copy_to_user(), never read back.
 */
#define KBLOOM_CHUNK_KEYS	1024
#define KBLOOM_CHUNK_BYTES	(64 * 1024)

struct kbloom_chunk {
	u32 lens[KBLOOM_CHUNK_KEYS];
	u8 results[KBLOOM_CHUNK_KEYS / 8];
	u8 keys[KBLOOM_CHUNK_BYTES];
};

static_assert(KBLOOM_CHUNK_BYTES >= 8 * KBLOOM_KEY_MAX);

/*
 * Process keys [b->done, b->done + n) of the batch: read their lengths and
 * bytes, run @op, write their results. Stops early, with an error, at a
 * bad length; b->done and b->hits are advanced over what was processed.
 */
static int kbloom_batch_chunk(enum kbloom_op op, struct kbloom_batch *b,
			      struct kbloom_chunk *c, u64 *key_off,
			      struct kbloom_filter *bound)
{
	struct kbloom_filter *filter;
	u32 n = min_t(u32, b->count - b->done, KBLOOM_CHUNK_KEYS);
	const u32 __user *ulens = u64_to_user_ptr(b->lens);
	u8 __user *uresults = u64_to_user_ptr(b->results) + b->done / 8;
	struct kbloom_gen *gen;
	u32 i, hits = 0, len;
	size_t bytes = 0;
	int ret = 0, err;

	if (copy_from_user(c->lens, ulens + b->done, n * sizeof(u32)))
		return -EFAULT;
	for (i = 0; i < n; i++) {
		len = c->lens[i];
		if (!len || len > KBLOOM_KEY_MAX ||
		    len > b->keys_bytes - *key_off - bytes) {
			ret = -EINVAL;
			break;
		}
		if (bytes + len > KBLOOM_CHUNK_BYTES) {
			/* Keep the next chunk byte-aligned in the results. */
			while (i & 7)
				bytes -= c->lens[--i];
			break;
		}
		bytes += len;
	}
	/* On a bad length, the keys before it are still processed. */
	n = i;

	if (copy_from_user(c->keys, u64_to_user_ptr(b->keys) + *key_off,
			   bytes))
		return -EFAULT;

	memset(c->results, 0, DIV_ROUND_UP(n, 8));
	/*
	 * Zero this chunk's result bytes before applying any of its keys:
	 * if they cannot be written, fail with nothing of the chunk done
	 * (the bytes are the caller's output, so zeroing them changes
	 * nothing the caller may rely on).
	 */
	if (b->results && n &&
	    copy_to_user(uresults, c->results, DIV_ROUND_UP(n, 8)))
		return -EFAULT;

	/*
	 * The filter is held only while the chunk is applied, never across
	 * a copy from or to userspace: a stalled user page must not keep a
	 * destroyed filter's memory allocated (a handle holds it anyway).
	 */
	filter = kbloom_key_filter_get(b->name, bound);
	if (!filter)
		return -ENOENT;
	/* One generation for the whole chunk: see kbloom_filter_replace_gen(). */
	rcu_read_lock();
	gen = kbloom_filter_gen(filter);
	err = READ_ONCE(filter->dead) ? -ENOENT : kbloom_op_check(&gen->core, op);
	if (!err)
		hits = kbloom_gen_do_batch(gen, op, c->keys, c->lens, n,
					   c->results);
	rcu_read_unlock();
	if (!err)
		kbloom_filter_count_op(filter, op, n, hits);
	kbloom_key_filter_put(filter, bound);
	if (err)
		return err;
	/* Applied: counted in @done before anything else can fail. */
	b->done += n;
	b->hits += hits;
	*key_off += bytes;

	if (b->results && n &&
	    copy_to_user(uresults, c->results, DIV_ROUND_UP(n, 8)))
		return -EFAULT;
	return ret;
}

static long kbloom_ioc_batch(struct file *file, void __user *argp,
			     enum kbloom_op op, struct kbloom_filter *bound)
{
	struct kbloom_filter *filter;
	struct kbloom_chunk *chunk;
	struct kbloom_batch b;
	u64 key_off = 0;
	int ret = 0;

	if (kbloom_op_writes(op) && !(file->f_mode & FMODE_WRITE))
		return -EBADF;
	if (copy_from_user(&b, argp, sizeof(b)))
		return -EFAULT;
	if (b.reserved0 ||
	    !kbloom_zeroed(b.reserved, sizeof(b.reserved)) ||
	    !kbloom_key_name_valid(b.name, bound) || !b.count)
		return -EINVAL;
	if (b.count > KBLOOM_BATCH_MAX || b.keys_bytes > KBLOOM_BATCH_BYTES_MAX)
		return -E2BIG;

	b.done = 0;
	b.hits = 0;
	/* @done must be deliverable before any key is applied. */
	if (copy_to_user(argp, &b, sizeof(b)))
		return -EFAULT;

	/* A missing filter fails before anything is read. */
	filter = kbloom_key_filter_get(b.name, bound);
	if (!filter)
		return -ENOENT;
	ret = READ_ONCE(filter->dead) ? -ENOENT : 0;
	kbloom_key_filter_put(filter, bound);
	if (ret)
		return ret;
	chunk = kvmalloc(sizeof(*chunk), GFP_KERNEL);
	if (!chunk)
		return -ENOMEM;
	while (b.done < b.count) {
		ret = kbloom_batch_chunk(op, &b, chunk, &key_off, bound);
		if (ret)
			break;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
	/* Written back even on error: done tells how far the call got. */
	if (copy_to_user(argp, &b, sizeof(b)))
		ret = -EFAULT;
	kvfree(chunk);
	return ret;
}

static long kbloom_ioc_merge(struct file *file, void __user *argp,
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

static long kbloom_ioc_export(void __user *argp)
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

static long kbloom_ioc_import(struct file *file, void __user *argp)
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

/*
 * The commands of one filter's contents, the key commands and the block
 * commands, on the device (@bound NULL: by name) and on a handle (on its
 * filter). -ENOIOCTLCMD for any other command.
 */
static long kbloom_key_ioctl(struct file *file, unsigned int cmd,
			     void __user *argp, struct kbloom_filter *bound)
{
	switch (cmd) {
	case KBLOOM_IOC_ADD:
		return kbloom_ioc_key(file, argp, KBLOOM_OP_ADD, bound);
	case KBLOOM_IOC_QUERY:
		return kbloom_ioc_key(file, argp, KBLOOM_OP_QUERY, bound);
	case KBLOOM_IOC_TEST_AND_ADD:
		return kbloom_ioc_key(file, argp, KBLOOM_OP_TEST_AND_ADD, bound);
	case KBLOOM_IOC_REMOVE:
		return kbloom_ioc_key(file, argp, KBLOOM_OP_REMOVE, bound);
	case KBLOOM_IOC_ADD_BATCH:
		return kbloom_ioc_batch(file, argp, KBLOOM_OP_ADD, bound);
	case KBLOOM_IOC_QUERY_BATCH:
		return kbloom_ioc_batch(file, argp, KBLOOM_OP_QUERY, bound);
	case KBLOOM_IOC_TEST_AND_ADD_BATCH:
		return kbloom_ioc_batch(file, argp, KBLOOM_OP_TEST_AND_ADD,
					bound);
	case KBLOOM_IOC_REMOVE_BATCH:
		return kbloom_ioc_batch(file, argp, KBLOOM_OP_REMOVE, bound);
	case KBLOOM_IOC_COLLECT:
		return kbloom_ioc_blocks(file, argp, true, bound);
	case KBLOOM_IOC_APPLY:
		return kbloom_ioc_blocks(file, argp, false, bound);
	default:
		return -ENOIOCTLCMD;
	}
}

/* A handle: the commands of one filter, on the filter the file holds. */
static long kbloom_handle_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	long ret = kbloom_key_ioctl(file, cmd, (void __user *)arg,
				    file->private_data);

	return ret == -ENOIOCTLCMD ? -ENOTTY : ret;
}

static int kbloom_handle_release(struct inode *inode, struct file *file)
{
	kbloom_filter_put(file->private_data);
	return 0;
}

/*
 * /proc/PID/fdinfo/FD of a handle: which filter it holds, and whether that
 * filter has been destroyed (its memory is then held until the close), so
 * that an administrator can find who keeps it.
 */
static void kbloom_handle_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct kbloom_filter *filter = file->private_data;

	seq_printf(m, "kbloom-filter:\t%s\n", filter->name);
	seq_printf(m, "kbloom-destroyed:\t%d\n", READ_ONCE(filter->dead));
}

static const struct file_operations kbloom_handle_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = kbloom_handle_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.release = kbloom_handle_release,
	.show_fdinfo = kbloom_handle_show_fdinfo,
	.llseek = noop_llseek,
};

/*
 * KBLOOM_IOC_OPEN: a new fd bound to a filter. The fd is reserved and
 * written back before the file is installed, so a failed write leaves no
 * descriptor behind.
 */
static long kbloom_ioc_open(struct file *file, void __user *argp)
{
	struct kbloom_open __user *uo = argp;
	struct kbloom_filter *filter;
	struct kbloom_open o;
	struct file *handle;
	int fd, ret;

	if (copy_from_user(&o, argp, sizeof(o)))
		return -EFAULT;
	if (o.flags || !kbloom_zeroed(o.reserved, sizeof(o.reserved)) ||
	    !kbloom_name_valid(o.name))
		return -EINVAL;
	filter = kbloom_filter_get(o.name);
	if (!filter)
		return -ENOENT;
	/* Destroyed since the lookup: a handle could only fail and hold it. */
	if (READ_ONCE(filter->dead)) {
		ret = -ENOENT;
		goto err_put_filter;
	}
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto err_put_filter;
	}
	/* The file owns the filter reference from here on. */
	handle = anon_inode_getfile("[kbloom]", &kbloom_handle_fops, filter,
				    file->f_mode & FMODE_WRITE ? O_RDWR :
								 O_RDONLY);
	if (IS_ERR(handle)) {
		ret = PTR_ERR(handle);
		goto err_put_fd;
	}
	if (put_user(fd, &uo->fd)) {
		fput(handle);
		put_unused_fd(fd);
		return -EFAULT;
	}
	fd_install(fd, handle);
	return 0;

err_put_fd:
	put_unused_fd(fd);
err_put_filter:
	kbloom_filter_put(filter);
	return ret;
}

static long kbloom_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	void __user *argp = (void __user *)arg;
	long ret;

	switch (cmd) {
	case KBLOOM_IOC_VERSION:
		return kbloom_ioc_version(argp);
	case KBLOOM_IOC_CREATE:
		return kbloom_ioc_create(file, argp);
	case KBLOOM_IOC_ROTATE:
		return kbloom_ioc_rotate(file, argp);
	case KBLOOM_IOC_OPEN:
		return kbloom_ioc_open(file, argp);
	case KBLOOM_IOC_DESTROY:
		return kbloom_ioc_destroy(file, argp);
	case KBLOOM_IOC_CLEAR:
		return kbloom_ioc_clear(file, argp);
	case KBLOOM_IOC_INFO:
		return kbloom_ioc_info(argp);
	case KBLOOM_IOC_LIST:
		return kbloom_ioc_list(argp);
	case KBLOOM_IOC_MERGE:
		return kbloom_ioc_merge(file, argp, false);
	case KBLOOM_IOC_COMPARE:
		return kbloom_ioc_merge(file, argp, true);
	case KBLOOM_IOC_EXPORT:
		return kbloom_ioc_export(argp);
	case KBLOOM_IOC_IMPORT:
		return kbloom_ioc_import(file, argp);
	default:
		ret = kbloom_key_ioctl(file, cmd, argp, NULL);
		return ret == -ENOIOCTLCMD ? -ENOTTY : ret;
	}
}

static const struct file_operations kbloom_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = kbloom_ioctl,
	/* Every structure has the same layout for 32-bit callers. */
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/*
 * Root only by default. To let a group query (read-only fd) or add
 * (read-write fd), relax the node with a udev rule, e.g.
 * KERNEL=="bloom", GROUP="bloom", MODE="0660"; creating, destroying and
 * clearing still require CAP_SYS_ADMIN.
 */
static struct miscdevice kbloom_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "bloom",
	.fops = &kbloom_fops,
	.mode = 0600,
};

int kbloom_dev_init(void)
{
	return misc_register(&kbloom_misc);
}

void kbloom_dev_uninit(void)
{
	misc_deregister(&kbloom_misc);
}
