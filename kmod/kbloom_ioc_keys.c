// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/bloom's key commands: ADD, QUERY, TEST_AND_ADD and REMOVE of one
 * key, and their batches, on the device (by name) and on a handle (on its
 * filter); and the dispatch of the commands of one filter's contents. The
 * rules of every command are kbloom_dev.c's.
 */

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kbloom_ioc_blocks.h"
#include "kbloom_filter.h"
#include "kbloom_gen.h"
#include "kbloom_ioc.h"
#include "kbloom_ioc_keys.h"

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

/*
 * The commands of one filter's contents, the key commands and the block
 * commands, on the device (@bound NULL: by name) and on a handle (on its
 * filter). -ENOIOCTLCMD for any other command.
 */
long kbloom_key_ioctl(struct file *file, unsigned int cmd,
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
