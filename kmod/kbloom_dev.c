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
 */

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/unaligned.h>

#include "kbloom.h"
#include "kbloom_dev.h"
#include "kbloom_filter.h"

enum kbloom_op {
	KBLOOM_OP_ADD,
	KBLOOM_OP_QUERY,
	KBLOOM_OP_TEST_AND_ADD,
	KBLOOM_OP_REMOVE,
};

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

static long kbloom_ioc_version(void __user *argp)
{
	struct kbloom_version v = {
		.api_version = KBLOOM_API_VERSION,
		.hash_scheme = KBLOOM_HASH_SCHEME,
		.features = KBLOOM_FEATURE_BATCH | KBLOOM_FEATURE_TEST_AND_ADD |
			    KBLOOM_FEATURE_SIZING | KBLOOM_FEATURE_COUNTING |
			    KBLOOM_FEATURE_MERGE | KBLOOM_FEATURE_IMAGE,
		.min_bits = KBLOOM_MIN_BITS,
		.max_bits = KBLOOM_MAX_BITS,
		.max_hashes = KBLOOM_MAX_HASHES,
		.max_key_len = KBLOOM_KEY_MAX,
		.max_batch = KBLOOM_BATCH_MAX,
		.name_max = KBLOOM_NAME_MAX,
	};

	return copy_to_user(argp, &v, sizeof(v)) ? -EFAULT : 0;
}

/* The uapi's creation flags and the core's are separate namespaces. */
static u32 kbloom_core_flags(u32 uapi_flags)
{
	return uapi_flags & KBLOOM_CREATE_COUNTING ? KBLOOM_CORE_COUNTING : 0;
}

static u32 kbloom_uapi_flags(u32 core_flags)
{
	return core_flags & KBLOOM_CORE_COUNTING ? KBLOOM_CREATE_COUNTING : 0;
}

static long kbloom_ioc_create(void __user *argp)
{
	struct kbloom_create c;
	struct kbloom_params p = {};
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&c, argp, sizeof(c)))
		return -EFAULT;
	if (c.flags & ~(KBLOOM_CREATE_COUNTING | KBLOOM_CREATE_LIKE) ||
	    c.reserved0 || !kbloom_name_valid(c.name))
		return -EINVAL;

	p.flags = kbloom_core_flags(c.flags);
	if (c.flags & KBLOOM_CREATE_LIKE) {
		/* Everything comes from the model. */
		if (c.bits || c.hashes || c.fpr_ppb || c.capacity ||
		    !kbloom_name_valid(c.like))
			return -EINVAL;
		ret = kbloom_filter_create_like(c.name, c.like, p.flags, &p);
	} else {
		if (!kbloom_zeroed(c.like, sizeof(c.like)))
			return -EINVAL;
		p.capacity = c.capacity;
		if (c.fpr_ppb) {
			/* Sized by capacity and rate: bits, hashes are outputs. */
			if (c.bits || c.hashes || !c.capacity)
				return -EINVAL;
			ret = kbloom_size(c.capacity, c.fpr_ppb, &p.nbits,
					  &p.nhashes);
			if (ret)
				return ret;
			p.fpr_ppb = c.fpr_ppb;
		} else {
			if (!c.bits || (!c.hashes && !c.capacity))
				return -EINVAL;
			p.nbits = c.bits;
			p.nhashes = c.hashes ? c.hashes :
				    kbloom_optimal_hashes(c.bits, c.capacity);
		}
		if (!kbloom_core_valid(p.nbits, p.nhashes, p.flags))
			return -EINVAL;
		ret = kbloom_filter_create(c.name, &p);
	}
	if (ret)
		return ret;

	/* Report what was made, from what it was made of. */
	c.bits = p.nbits;
	c.hashes = p.nhashes;
	c.flags = (c.flags & KBLOOM_CREATE_LIKE) | kbloom_uapi_flags(p.flags);
	c.capacity = p.capacity;
	c.fpr_ppb = p.fpr_ppb;
	if (copy_to_user(argp, &c, sizeof(c))) {
		/* "On any error nothing is created": take it back. */
		kbloom_filter_destroy(c.name);
		return -EFAULT;
	}
	return 0;
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

static long kbloom_ioc_destroy(void __user *argp)
{
	struct kbloom_name n;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = kbloom_get_name(argp, &n);
	if (ret)
		return ret;
	return kbloom_filter_destroy(n.name);
}

static long kbloom_ioc_clear(void __user *argp)
{
	struct kbloom_filter *filter;
	struct kbloom_name n;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = kbloom_get_name(argp, &n);
	if (ret)
		return ret;
	filter = kbloom_get(n.name);
	if (!filter)
		return -ENOENT;
	kbloom_filter_clear(filter);
	kbloom_put(filter);
	return 0;
}

static long kbloom_ioc_info(void __user *argp)
{
	struct kbloom_filter *filter;
	struct kbloom_totals t;
	struct kbloom_info info;
	struct kbloom_gen *gen;

	if (copy_from_user(&info, argp, sizeof(info)))
		return -EFAULT;
	if (!kbloom_zeroed(info.reserved, sizeof(info.reserved)) ||
	    !kbloom_name_valid(info.name))
		return -EINVAL;
	filter = kbloom_get(info.name);
	if (!filter)
		return -ENOENT;
	gen = kbloom_gen_get(filter);
	info.bits = gen->core.nbits;
	info.hashes = gen->core.nhashes;
	info.flags = kbloom_uapi_flags(gen->core.flags);
	info.capacity = gen->capacity;
	info.fpr_ppb = gen->fpr_ppb;
	info.hash_scheme = KBLOOM_HASH_SCHEME;
	info.bits_set = kbloom_core_weight(&gen->core);
	info.saturated = kbloom_core_saturated(&gen->core);
	info.memory_bytes = gen->bytes;
	kbloom_gen_put(gen);
	kbloom_filter_totals(filter, &t);
	info.adds = t.adds;
	info.queries = t.queries;
	info.hits = t.hits;
	kbloom_put(filter);
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

/* Run one operation on one key; return the result bit. */
static bool kbloom_do(struct kbloom_core *core, enum kbloom_op op,
		      const void *key, u32 len)
{
	switch (op) {
	case KBLOOM_OP_ADD:
		kbloom_core_add(core, key, len);
		return false;
	case KBLOOM_OP_QUERY:
		return kbloom_core_test(core, key, len);
	case KBLOOM_OP_TEST_AND_ADD:
		return kbloom_core_test_and_add(core, key, len);
	case KBLOOM_OP_REMOVE:
		return kbloom_core_remove(core, key, len);
	}
	return false;
}

/* Can @op run on @core at all? */
static int kbloom_op_check(const struct kbloom_core *core, enum kbloom_op op)
{
	if (op == KBLOOM_OP_REMOVE && !(core->flags & KBLOOM_CORE_COUNTING))
		return -EOPNOTSUPP;
	return 0;
}

/* Count @n keys of which @hits answered 1, as the API functions do. */
static void kbloom_count_op(struct kbloom_filter *filter, enum kbloom_op op,
			    u32 n, u32 hits)
{
	if (op == KBLOOM_OP_REMOVE)
		return;
	if (op != KBLOOM_OP_QUERY)
		this_cpu_add(filter->stats->adds, n);
	if (op != KBLOOM_OP_ADD) {
		this_cpu_add(filter->stats->queries, n);
		this_cpu_add(filter->stats->hits, hits);
	}
}

static long kbloom_ioc_key(struct file *file, void __user *argp,
			   enum kbloom_op op)
{
	struct kbloom_filter *filter;
	struct kbloom_core *core;
	struct kbloom_key k;
	void *key;
	int ret = 0;

	if (kbloom_op_writes(op) && !(file->f_mode & FMODE_WRITE))
		return -EBADF;
	if (copy_from_user(&k, argp, sizeof(k)))
		return -EFAULT;
	if (!kbloom_zeroed(k.reserved, sizeof(k.reserved)) ||
	    !kbloom_name_valid(k.name) || !k.len || k.len > KBLOOM_KEY_MAX)
		return -EINVAL;
	key = memdup_user(u64_to_user_ptr(k.key), k.len);
	if (IS_ERR(key))
		return PTR_ERR(key);
	filter = kbloom_get(k.name);
	if (!filter) {
		ret = -ENOENT;
		goto out_free_key;
	}
	rcu_read_lock();
	core = kbloom_filter_core(filter);
	ret = kbloom_op_check(core, op);
	if (!ret)
		k.result = kbloom_do(core, op, key, k.len);
	rcu_read_unlock();
	if (!ret)
		kbloom_count_op(filter, op, 1, k.result);
	kbloom_put(filter);
	if (!ret && copy_to_user(argp, &k, sizeof(k)))
		ret = -EFAULT;
out_free_key:
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
static int kbloom_batch_chunk(struct kbloom_filter *filter, enum kbloom_op op,
			      struct kbloom_batch *b, struct kbloom_chunk *c,
			      u64 *key_off)
{
	u32 n = min_t(u32, b->count - b->done, KBLOOM_CHUNK_KEYS);
	const u32 __user *ulens = u64_to_user_ptr(b->lens);
	struct kbloom_core *core;
	u32 i, hits = 0, len;
	size_t bytes = 0;
	int ret = 0, err;
	u8 *key;

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
	/* One generation for the whole chunk: see kbloom_filter_replace_gen(). */
	rcu_read_lock();
	core = kbloom_filter_core(filter);
	err = kbloom_op_check(core, op);
	for (key = c->keys, i = 0; !err && i < n; key += c->lens[i], i++) {
		if (kbloom_do(core, op, key, c->lens[i])) {
			c->results[i / 8] |= 1U << (i % 8);
			hits++;
		}
	}
	rcu_read_unlock();
	if (err)
		return err;
	kbloom_count_op(filter, op, n, hits);

	if (b->results && n &&
	    copy_to_user(u64_to_user_ptr(b->results) + b->done / 8,
			 c->results, DIV_ROUND_UP(n, 8)))
		return -EFAULT;
	b->done += n;
	b->hits += hits;
	*key_off += bytes;
	return ret;
}

static long kbloom_ioc_batch(struct file *file, void __user *argp,
			     enum kbloom_op op)
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
	    !kbloom_name_valid(b.name) || !b.count)
		return -EINVAL;
	if (b.count > KBLOOM_BATCH_MAX || b.keys_bytes > KBLOOM_BATCH_BYTES_MAX)
		return -E2BIG;

	b.done = 0;
	b.hits = 0;

	chunk = kvmalloc(sizeof(*chunk), GFP_KERNEL);
	if (!chunk)
		return -ENOMEM;
	filter = kbloom_get(b.name);
	if (!filter) {
		ret = -ENOENT;
		goto out_free_chunk;
	}
	while (b.done < b.count) {
		if (READ_ONCE(filter->dead)) {
			ret = -ENOENT;
			break;
		}
		ret = kbloom_batch_chunk(filter, op, &b, chunk, &key_off);
		if (ret)
			break;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
	kbloom_put(filter);
	/* Written back even on error: done tells how far the call got. */
	if (copy_to_user(argp, &b, sizeof(b)))
		ret = -EFAULT;
out_free_chunk:
	kvfree(chunk);
	return ret;
}

static long kbloom_ioc_merge(struct file *file, void __user *argp,
			     bool compare)
{
	struct kbloom_filter *a, *b;
	struct kbloom_gen *ga, *gb;
	struct kbloom_merge m;
	int ret = 0;

	if (!compare && !(file->f_mode & FMODE_WRITE))
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

	a = kbloom_get(m.dst);
	b = kbloom_get(m.src);
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
	if (!m.mismatch) {
		if (compare) {
			m.bits_dst = kbloom_core_weight(&ga->core);
			m.bits_src = kbloom_core_weight(&gb->core);
			kbloom_core_compare(&ga->core, &gb->core,
					    &m.bits_inter, &m.bits_union);
		} else if (ga != gb) {
			kbloom_core_merge(&ga->core, &gb->core);
		}
	}
	kbloom_gen_put(gb);
	kbloom_gen_put(ga);
	if (m.mismatch)
		ret = -EINVAL;
	/* Written back on -EINVAL too: mismatch says what differs. */
	if (copy_to_user(argp, &m, sizeof(m)))
		ret = -EFAULT;
out_put:
	kbloom_put(a);
	kbloom_put(b);
	return ret;
}

/*
 * Images travel in a fixed byte order: the storage as little-endian words,
 * which is the in-memory layout of every little-endian machine, whatever
 * its word size. Copied through a bounce buffer in pieces, yielding between
 * them.
 */
#define KBLOOM_BOUNCE_BYTES	(64 * 1024)

static void kbloom_word_to_le(void *dst, unsigned long w)
{
#if BITS_PER_LONG == 64
	put_unaligned_le64(w, dst);
#else
	put_unaligned_le32(w, dst);
#endif
}

static unsigned long kbloom_word_from_le(const void *src)
{
#if BITS_PER_LONG == 64
	return get_unaligned_le64(src);
#else
	return get_unaligned_le32(src);
#endif
}

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
	if (img->reserved0 || !kbloom_zeroed(img->reserved,
					     sizeof(img->reserved)) ||
	    !kbloom_name_valid(img->name))
		return -EINVAL;
	return 0;
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
	if (img.import_flags)
		return -EINVAL;
	filter = kbloom_get(img.name);
	if (!filter)
		return -ENOENT;

	/* Pinned, not locked: the copy may fault and take its time. */
	gen = kbloom_gen_get(filter);
	if (img.payload_len < gen->bytes) {
		ret = -ENOBUFS;
	} else {
		bounce = kvmalloc(KBLOOM_BOUNCE_BYTES, GFP_KERNEL);
		ret = bounce ? kbloom_copy_out(u64_to_user_ptr(img.payload),
					       gen->core.bitmap, gen->bytes,
					       bounce) : -ENOMEM;
	}
	img.bits = gen->core.nbits;
	img.hashes = gen->core.nhashes;
	img.flags = kbloom_uapi_flags(gen->core.flags);
	memcpy(img.seed, gen->core.seed, sizeof(img.seed));
	img.payload_len = gen->bytes;
	img.capacity = gen->capacity;
	img.fpr_ppb = gen->fpr_ppb;
	kbloom_gen_put(gen);
	kbloom_filter_totals(filter, &t);
	img.adds = t.adds;
	img.hash_scheme = KBLOOM_HASH_SCHEME;
	kbloom_put(filter);
	kvfree(bounce);

	if ((!ret || ret == -ENOBUFS) && copy_to_user(argp, &img, sizeof(img)))
		ret = -EFAULT;
	memzero_explicit(img.seed, sizeof(img.seed));
	return ret;
}

/* IMPORT from a checked copy of the argument, which holds the seed. */
static int kbloom_import(const struct kbloom_image *img)
{
	struct kbloom_params p = {};
	struct kbloom_filter *filter;
	struct kbloom_gen *gen;
	bool replace;
	u8 *bounce;
	int ret;

	if (img->import_flags & ~KBLOOM_IMPORT_REPLACE ||
	    img->flags & ~KBLOOM_CREATE_COUNTING ||
	    img->hash_scheme != KBLOOM_HASH_SCHEME)
		return -EINVAL;
	p.nbits = img->bits;
	p.nhashes = img->hashes;
	p.flags = kbloom_core_flags(img->flags);
	p.capacity = img->capacity;
	p.fpr_ppb = img->fpr_ppb;
	p.adds = img->adds;
	p.seed = img->seed;
	if (!kbloom_core_valid(p.nbits, p.nhashes, p.flags) ||
	    img->payload_len != kbloom_core_bytes(p.nbits, p.flags))
		return -EINVAL;

	/* Fail early, before allocating gigabytes, when the name is wrong. */
	replace = img->import_flags & KBLOOM_IMPORT_REPLACE;
	filter = kbloom_get(img->name);
	kbloom_put(filter);
	if (replace && !filter)
		return -ENOENT;
	if (!replace && filter)
		return -EEXIST;

	/* Everything is checked in a private generation before it is used. */
	bounce = kvmalloc(KBLOOM_BOUNCE_BYTES, GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;
	gen = kbloom_gen_new(&p);
	if (IS_ERR(gen)) {
		ret = PTR_ERR(gen);
		goto out_free_bounce;
	}
	ret = kbloom_copy_in(gen->core.bitmap, u64_to_user_ptr(img->payload),
			     gen->bytes, bounce);
	if (!ret && !kbloom_core_padding_clear(&gen->core))
		ret = -EINVAL;
	if (!ret)
		ret = replace ? kbloom_filter_replace_gen(img->name, gen, &p) :
				kbloom_filter_add_gen(img->name, gen, &p);
	if (ret)
		kbloom_gen_destroy(gen);
out_free_bounce:
	kvfree(bounce);
	return ret;
}

static long kbloom_ioc_import(void __user *argp)
{
	struct kbloom_image img;
	int ret;

	ret = kbloom_get_image(argp, &img);
	if (!ret)
		ret = kbloom_import(&img);
	/* The seed was in our copy: do not leave it on the stack. */
	memzero_explicit(&img, sizeof(img));
	return ret;
}

static long kbloom_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case KBLOOM_IOC_VERSION:
		return kbloom_ioc_version(argp);
	case KBLOOM_IOC_CREATE:
		return kbloom_ioc_create(argp);
	case KBLOOM_IOC_DESTROY:
		return kbloom_ioc_destroy(argp);
	case KBLOOM_IOC_CLEAR:
		return kbloom_ioc_clear(argp);
	case KBLOOM_IOC_INFO:
		return kbloom_ioc_info(argp);
	case KBLOOM_IOC_LIST:
		return kbloom_ioc_list(argp);
	case KBLOOM_IOC_ADD:
		return kbloom_ioc_key(file, argp, KBLOOM_OP_ADD);
	case KBLOOM_IOC_QUERY:
		return kbloom_ioc_key(file, argp, KBLOOM_OP_QUERY);
	case KBLOOM_IOC_TEST_AND_ADD:
		return kbloom_ioc_key(file, argp, KBLOOM_OP_TEST_AND_ADD);
	case KBLOOM_IOC_ADD_BATCH:
		return kbloom_ioc_batch(file, argp, KBLOOM_OP_ADD);
	case KBLOOM_IOC_QUERY_BATCH:
		return kbloom_ioc_batch(file, argp, KBLOOM_OP_QUERY);
	case KBLOOM_IOC_TEST_AND_ADD_BATCH:
		return kbloom_ioc_batch(file, argp, KBLOOM_OP_TEST_AND_ADD);
	case KBLOOM_IOC_REMOVE:
		return kbloom_ioc_key(file, argp, KBLOOM_OP_REMOVE);
	case KBLOOM_IOC_REMOVE_BATCH:
		return kbloom_ioc_batch(file, argp, KBLOOM_OP_REMOVE);
	case KBLOOM_IOC_MERGE:
		return kbloom_ioc_merge(file, argp, false);
	case KBLOOM_IOC_COMPARE:
		return kbloom_ioc_merge(file, argp, true);
	case KBLOOM_IOC_EXPORT:
		return kbloom_ioc_export(argp);
	case KBLOOM_IOC_IMPORT:
		return kbloom_ioc_import(argp);
	default:
		return -ENOTTY;
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
