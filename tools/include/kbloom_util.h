/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every kbloom test program in userspace shares, harness or not:
 * the ioctl wrappers, set_name(), sysfs access, clocks, generated key
 * sets, the count of open fds. kbloom_selftest's kbloom_test.h adds the
 * kselftest harness and its checks on top; the stress tools
 * (tools/stress) include it alone.
 *
 * Every function is static __maybe_unused: each program uses a different
 * part of it, and an unused helper must not break a -Werror build.
 *
 * The ioctl wrappers return 0 or a positive errno (KB_BADRET for a
 * positive return value, which no command has), so that a test compares
 * one number against what it expects.
 */
#ifndef KBLOOM_UTIL_H
#define KBLOOM_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <linux/kbloom.h>

#ifndef __maybe_unused
#define __maybe_unused	__attribute__((__unused__))
#endif
/* As the kselftest harness has it, which then keeps this one. */
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

typedef __u64 u64;
typedef __u32 u32;

#define PTR(p)		((u64)(uintptr_t)(p))
#define DEV		"/dev/bloom"
#define SYSFS		"/sys/kernel/bloom"

/* ioc() returns this when ioctl() returned a positive value: never valid. */
#define KB_BADRET	(-1)

/* Poison for outputs, so that a kernel that never writes one is caught. */
#define RESULT_POISON	0xdeadbeefu

/* ------------------------------------------------------------------ */
/* Errors                                                             */
/* ------------------------------------------------------------------ */

static __maybe_unused const char *errname(int err)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EINTR, "EINTR" },
		{ EIO, "EIO" }, { E2BIG, "E2BIG" }, { EBADF, "EBADF" },
		{ EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" },
		{ EACCES, "EACCES" }, { EFAULT, "EFAULT" }, { EBUSY, "EBUSY" },
		{ EEXIST, "EEXIST" }, { ENODEV, "ENODEV" },
		{ ENOTDIR, "ENOTDIR" }, { EINVAL, "EINVAL" },
		{ ENOTTY, "ENOTTY" }, { EFBIG, "EFBIG" }, { ENOSPC, "ENOSPC" },
		{ ERANGE, "ERANGE" }, { ENOSYS, "ENOSYS" },
		{ EOVERFLOW, "EOVERFLOW" }, { EOPNOTSUPP, "EOPNOTSUPP" },
		{ ENAMETOOLONG, "ENAMETOOLONG" }, { ENXIO, "ENXIO" },
	};
	size_t i;

	if (err == 0)
		return "success";
	if (err == KB_BADRET)
		return "positive return value";
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].err == err)
			return names[i].name;
	return "E?";
}

/* "ENOENT (No such file or directory)" */
static __maybe_unused const char *errtext(int err, char *buf, size_t len)
{
	if (err == 0 || err == KB_BADRET)
		snprintf(buf, len, "%s", errname(err));
	else
		snprintf(buf, len, "%s (%s)", errname(err), strerror(err));
	return buf;
}

/* ------------------------------------------------------------------ */
/* ioctl wrappers                                                     */
/* ------------------------------------------------------------------ */

static __maybe_unused int ioc(int fd, unsigned long cmd, void *arg)
{
	int rc = ioctl(fd, cmd, arg);

	if (rc == 0)
		return 0;
	if (rc == -1 && errno > 0)
		return errno;
	return KB_BADRET;
}

/*
 * Copy a name into a KBLOOM_NAME_MAX field, zero-filled. A source of
 * KBLOOM_NAME_MAX characters or more fills the field with no NUL, which is
 * exactly what the "name too long" checks need.
 */
static __maybe_unused void set_name(char *dst, const char *src)
{
	size_t len = strlen(src);

	memset(dst, 0, KBLOOM_NAME_MAX);
	memcpy(dst, src, len < KBLOOM_NAME_MAX ? len : KBLOOM_NAME_MAX);
}

/*
 * CREATE with every field a test sets; *@out gets the structure as the
 * kernel wrote it back. The helpers below are its common shapes.
 */
static __maybe_unused int kb_create_all(int fd, const char *name, u64 bits,
					u32 hashes, u64 capacity, u32 fpr_ppb,
					u32 flags, const char *like,
					u32 scheme, struct kbloom_create *out)
{
	struct kbloom_create c;
	int err;

	memset(&c, 0, sizeof(c));
	set_name(c.name, name);
	c.bits = bits;
	c.hashes = hashes;
	c.capacity = capacity;
	c.fpr_ppb = fpr_ppb;
	c.flags = flags;
	if (like)
		set_name(c.like, like);
	c.hash_scheme = scheme;
	err = ioc(fd, KBLOOM_IOC_CREATE, &c);
	if (out)
		*out = c;
	return err;
}

/* CREATE sized by bits and hashes, or by capacity and fpr_ppb. */
static __maybe_unused int kb_create(int fd, const char *name, u64 bits,
				    u32 hashes, u64 capacity, u32 fpr_ppb,
				    struct kbloom_create *out)
{
	return kb_create_all(fd, name, bits, hashes, capacity, fpr_ppb, 0,
			     NULL, 0, out);
}

/* CREATE with flags and, for KBLOOM_CREATE_LIKE, the filter to copy. */
static __maybe_unused int kb_create_ex(int fd, const char *name, u64 bits,
				       u32 hashes, u32 flags, const char *like,
				       struct kbloom_create *out)
{
	return kb_create_all(fd, name, bits, hashes, 0, 0, flags, like, 0,
			     out);
}

/* CREATE by bits and hashes, with flags and a hash scheme. */
static __maybe_unused int kb_create_scheme(int fd, const char *name, u64 bits,
					   u32 hashes, u32 flags, u32 scheme,
					   struct kbloom_create *out)
{
	return kb_create_all(fd, name, bits, hashes, 0, 0, flags, NULL,
			     scheme, out);
}

/* CREATE like @like, with more flags and a hash scheme. */
static __maybe_unused int kb_create_like(int fd, const char *name,
					 const char *like, u32 flags,
					 u32 scheme, struct kbloom_create *out)
{
	return kb_create_all(fd, name, 0, 0, 0, 0, KBLOOM_CREATE_LIKE | flags,
			     like, scheme, out);
}

static __maybe_unused int kb_name_cmd(int fd, unsigned long cmd,
				      const char *name)
{
	struct kbloom_name n;

	memset(&n, 0, sizeof(n));
	set_name(n.name, name);
	return ioc(fd, cmd, &n);
}

static __maybe_unused int kb_destroy(int fd, const char *name)
{
	return kb_name_cmd(fd, KBLOOM_IOC_DESTROY, name);
}

/* DESTROY of a filter that may or may not exist (leftovers, teardown). */
static __maybe_unused void destroy_quiet(int fd, const char *name)
{
	kb_destroy(fd, name);
}

static __maybe_unused int kb_clear(int fd, const char *name)
{
	return kb_name_cmd(fd, KBLOOM_IOC_CLEAR, name);
}

static __maybe_unused int kb_info(int fd, const char *name,
				  struct kbloom_info *info)
{
	memset(info, 0, sizeof(*info));
	set_name(info->name, name);
	return ioc(fd, KBLOOM_IOC_INFO, info);
}

static __maybe_unused bool kb_exists(int fd, const char *name)
{
	struct kbloom_info info;

	return kb_info(fd, name, &info) != ENOENT;
}

/* ADD, QUERY, TEST_AND_ADD or REMOVE of one key; *result poisoned first. */
static __maybe_unused int kb_key(int fd, unsigned long cmd, const char *name,
				 const void *key, u32 len, u32 *result)
{
	struct kbloom_key k;
	int err;

	memset(&k, 0, sizeof(k));
	set_name(k.name, name);
	k.key = PTR(key);
	k.len = len;
	k.result = RESULT_POISON;
	err = ioc(fd, cmd, &k);
	if (result)
		*result = k.result;
	return err;
}

static __maybe_unused int kb_skey(int fd, unsigned long cmd, const char *name,
				  const char *key, u32 *result)
{
	return kb_key(fd, cmd, name, key, (u32)strlen(key), result);
}

static __maybe_unused void fill_batch(struct kbloom_batch *b, const char *name,
				      const void *keys, const u32 *lens,
				      void *results, u64 keys_bytes, u32 count)
{
	memset(b, 0, sizeof(*b));
	set_name(b->name, name);
	b->keys = PTR(keys);
	b->lens = PTR(lens);
	b->results = PTR(results);
	b->keys_bytes = keys_bytes;
	b->count = count;
	/* Poisoned: the kernel must write them. */
	b->done = RESULT_POISON;
	b->hits = RESULT_POISON;
}

static __maybe_unused int kb_batch(int fd, unsigned long cmd, const char *name,
				   const void *keys, const u32 *lens,
				   void *results, u64 keys_bytes, u32 count,
				   struct kbloom_batch *out)
{
	struct kbloom_batch b;
	int err;

	fill_batch(&b, name, keys, lens, results, keys_bytes, count);
	err = ioc(fd, cmd, &b);
	if (out)
		*out = b;
	return err;
}

/* MERGE or COMPARE; every output field poisoned, so each must be written. */
static __maybe_unused int kb_merge(int fd, unsigned long cmd, const char *dst,
				   const char *src, struct kbloom_merge *out)
{
	struct kbloom_merge m;
	int err;

	memset(&m, 0, sizeof(m));
	set_name(m.dst, dst);
	set_name(m.src, src);
	m.bits_dst = m.bits_src = m.bits_union = m.bits_inter = RESULT_POISON;
	m.mismatch = RESULT_POISON;
	err = ioc(fd, cmd, &m);
	if (out)
		*out = m;
	return err;
}

static __maybe_unused int kb_export(int fd, const char *name, void *buf,
				    u64 len, struct kbloom_image *out)
{
	struct kbloom_image im;
	int err;

	memset(&im, 0, sizeof(im));
	set_name(im.name, name);
	im.payload = PTR(buf);
	im.payload_len = len;
	err = ioc(fd, KBLOOM_IOC_EXPORT, &im);
	if (out)
		*out = im;
	return err;
}

/* IMPORT @im as it is, but under @name with @import_flags. */
static __maybe_unused int kb_import(int fd, const struct kbloom_image *im,
				    const char *name, u32 import_flags)
{
	struct kbloom_image c = *im;

	set_name(c.name, name);
	c.import_flags = import_flags;
	return ioc(fd, KBLOOM_IOC_IMPORT, &c);
}

/* OPEN @name on @fd: 0 and the handle in *@out, or the errno. */
static __maybe_unused int kb_open_handle(int fd, const char *name, int *out)
{
	struct kbloom_open o;
	int err;

	memset(&o, 0, sizeof(o));
	set_name(o.name, name);
	o.fd = -1;
	err = ioc(fd, KBLOOM_IOC_OPEN, &o);
	*out = err ? -1 : o.fd;
	return err;
}

/*
 * COLLECT or APPLY (@cmd) of @b, named @name (NULL: on a handle, no
 * name); *@out: @b as it came back.
 */
static __maybe_unused int kb_blocks(int fd, unsigned long cmd,
				    const char *name, struct kbloom_blocks *b,
				    struct kbloom_blocks *out)
{
	int err;

	if (name)
		set_name(b->name, name);
	err = ioc(fd, cmd, b);
	if (out)
		*out = *b;
	return err;
}

static __maybe_unused int kb_collect(int fd, const char *name,
				     struct kbloom_block *blocks, u32 count,
				     u32 flags, u64 cursor,
				     struct kbloom_blocks *out)
{
	struct kbloom_blocks b = { .blocks = PTR(blocks), .count = count,
				   .flags = flags, .cursor = cursor };

	return kb_blocks(fd, KBLOOM_IOC_COLLECT, name, &b, out);
}

static __maybe_unused int kb_apply(int fd, const char *name,
				   const struct kbloom_block *blocks,
				   u32 count, u64 fingerprint, u64 rotations,
				   u64 max_set, struct kbloom_blocks *out)
{
	struct kbloom_blocks b = { .blocks = PTR(blocks), .count = count,
				   .fingerprint = fingerprint,
				   .rotations = rotations, .max_set = max_set };

	return kb_blocks(fd, KBLOOM_IOC_APPLY, name, &b, out);
}

/* Number of filters (LIST with count 0), or -errno. */
static __maybe_unused long kb_count(int fd)
{
	struct kbloom_list l;
	int err;

	memset(&l, 0, sizeof(l));
	err = ioc(fd, KBLOOM_IOC_LIST, &l);
	return err ? -err : (long)l.count;
}

/* Every filter's name; *names is malloc'ed. Returns 0 or an errno. */
static __maybe_unused int kb_list(int fd, char (**names)[KBLOOM_NAME_MAX],
				  u32 *count)
{
	struct kbloom_list l;
	long n = kb_count(fd);
	int err;

	*names = NULL;
	*count = 0;
	if (n < 0)
		return (int)-n;
	/* Room for a few more than now: LIST says when it was too small. */
	*names = calloc((size_t)n + 16, KBLOOM_NAME_MAX);
	if (!*names)
		return ENOMEM;
	memset(&l, 0, sizeof(l));
	l.names = PTR(*names);
	l.count = (u32)n + 16;
	err = ioc(fd, KBLOOM_IOC_LIST, &l);
	if (err)
		return err;
	if (l.count > (u32)n + 16)
		return EAGAIN;
	*count = l.count;
	return 0;
}

/*
 * The scheme CREATE gives when asked for 0: VERSION's default_hash_scheme;
 * 0 if VERSION failed.
 */
static __maybe_unused u32 default_scheme(int fd)
{
	struct kbloom_version v;

	memset(&v, 0, sizeof(v));
	if (ioc(fd, KBLOOM_IOC_VERSION, &v))
		return 0;
	return v.default_hash_scheme;
}

/* The payload size @bits implies: bits or 4-bit counters, 8-byte units. */
static __maybe_unused u64 payload_size(u64 bits, bool counting)
{
	return (bits * (counting ? 4 : 1) + 63) / 64 * 8;
}

/* ------------------------------------------------------------------ */
/* Keys                                                               */
/* ------------------------------------------------------------------ */

static __maybe_unused u64 rng_next(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Keys packed end to end: key i is @lens[i] bytes at @keys + @off[i]. */
struct keyset {
	unsigned char *keys;
	u32 *lens;
	u64 *off;
	u64 bytes;
	u32 count;
};

static __maybe_unused void keyset_free(struct keyset *ks)
{
	free(ks->keys);
	free(ks->lens);
	free(ks->off);
	memset(ks, 0, sizeof(*ks));
}

static __maybe_unused bool keyset_alloc(struct keyset *ks, u32 count,
					size_t bytes)
{
	memset(ks, 0, sizeof(*ks));
	ks->count = count;
	ks->lens = calloc(count, sizeof(*ks->lens));
	ks->off = calloc(count, sizeof(*ks->off));
	ks->keys = malloc(bytes);
	if (ks->lens && ks->off && ks->keys)
		return true;
	keyset_free(ks);
	return false;
}

/*
 * @count keys of 1..@maxlen pseudo-random bytes. The low bit of the first
 * byte is @parity, so keysets of different parity never share a key: a
 * query of the other set can only hit by a false positive. false: out of
 * memory.
 */
static __maybe_unused bool keys_gen(struct keyset *ks, u32 count, u64 seed,
				    unsigned int parity, u32 maxlen)
{
	u64 s = seed, pos = 0;
	u32 i, j;

	if (!keyset_alloc(ks, count, (size_t)count * maxlen))
		return false;
	for (i = 0; i < count; i++) {
		u32 len = 1 + (u32)(rng_next(&s) % maxlen);

		ks->lens[i] = len;
		ks->off[i] = pos;
		for (j = 0; j < len; j++)
			ks->keys[pos + j] = (unsigned char)rng_next(&s);
		ks->keys[pos] =
			(unsigned char)((ks->keys[pos] & 0xfe) | parity);
		pos += len;
	}
	ks->bytes = pos;
	return true;
}

/*
 * @count distinct keys "<tag>:<i>": unlike keys_gen(), never a duplicate,
 * so that removing one key cannot remove another. false: out of memory.
 */
static __maybe_unused bool keys_tag(struct keyset *ks, const char *tag,
				    u32 count)
{
	u64 pos = 0;
	u32 i;

	if (!keyset_alloc(ks, count, (size_t)count * 24 + 1))
		return false;
	for (i = 0; i < count; i++) {
		ks->off[i] = pos;
		ks->lens[i] = (u32)snprintf((char *)ks->keys + pos, 24, "%s:%u",
					    tag, i);
		pos += ks->lens[i];
	}
	ks->bytes = pos;
	return true;
}

/* Bytes of keys first .. first + n - 1 of @ks. */
static __maybe_unused u64 ks_span(const struct keyset *ks, u32 first, u32 n)
{
	u64 end = first + n < ks->count ? ks->off[first + n] : ks->bytes;

	return end - ks->off[first];
}

/* A batch command on keys first .. first + n - 1 of @ks. */
static __maybe_unused int ks_batch(int fd, unsigned long cmd, const char *name,
				   const struct keyset *ks, u32 first, u32 n,
				   void *results, struct kbloom_batch *out)
{
	return kb_batch(fd, cmd, name, ks->keys + ks->off[first],
			ks->lens + first, results, ks_span(ks, first, n), n,
			out);
}

/* Bit @i of a batch's result bitmap. */
static __maybe_unused bool bit_get(const unsigned char *bm, u32 i)
{
	return bm[i / 8] & (1u << (i % 8));
}

static __maybe_unused u32 bits_count(const unsigned char *bm, u32 n)
{
	u32 i, c = 0;

	for (i = 0; i < n; i++)
		c += bit_get(bm, i);
	return c;
}

/* ------------------------------------------------------------------ */
/* sysfs                                                              */
/* ------------------------------------------------------------------ */

/*
 * An attribute that must hold exactly one decimal integer and a newline:
 * 0 or an errno (EINVAL: any other format, or out of range).
 */
static __maybe_unused int sysfs_read_u64(const char *path, u64 *val)
{
	char buf[64], *end;
	ssize_t n, i;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	n = read(fd, buf, sizeof(buf) - 1);
	err = errno;
	close(fd);
	if (n < 0)
		return err;
	buf[n] = '\0';
	for (i = 0; i < n - 1; i++)
		if (buf[i] < '0' || buf[i] > '9')
			return EINVAL;
	/* A full buffer may be the start of something longer. */
	if (n < 2 || n >= (ssize_t)sizeof(buf) - 1 || buf[n - 1] != '\n')
		return EINVAL;
	errno = 0;
	*val = strtoull(buf, &end, 10);
	if (errno || *end != '\n')
		return EINVAL;
	return 0;
}

/* Write @s to a sysfs (or debugfs) file: 0 or an errno. */
static __maybe_unused int sysfs_write_str(const char *path, const char *s)
{
	ssize_t len = (ssize_t)strlen(s);
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	errno = 0;
	if (write(fd, s, (size_t)len) != len)
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

static __maybe_unused int sysfs_write_u64(const char *path, u64 val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)val);
	return sysfs_write_str(path, buf);
}

/* Attribute @attr of filter @name in /sys/kernel/bloom/filters. */
static __maybe_unused int filter_attr(const char *name, const char *attr,
				      u64 *val)
{
	char path[160];

	snprintf(path, sizeof(path), SYSFS "/filters/%s/%s", name, attr);
	return sysfs_read_u64(path, val);
}

static __maybe_unused bool filter_dir_exists(const char *name)
{
	char path[160];
	struct stat st;

	snprintf(path, sizeof(path), SYSFS "/filters/%s", name);
	return stat(path, &st) == 0;
}

static __maybe_unused int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/*
 * LIST, the directories in /sys/kernel/bloom/filters and filter_count
 * agree: 0 with LIST's names (*names, malloc'ed) and their number, or an
 * errno (EPROTO: they disagree) with @why saying what went wrong.
 */
static __maybe_unused int registry_names(int fd,
					 char (**names)[KBLOOM_NAME_MAX],
					 u32 *count, char *why, size_t wlen)
{
	char (*sys)[KBLOOM_NAME_MAX];
	struct dirent *e;
	u32 n, ns = 0;
	u64 fc = 0;
	DIR *d;
	int err = kb_list(fd, names, count);

	n = *count;
	if (err) {
		snprintf(why, wlen, "LIST: %s", strerror(err));
		goto out_names;
	}
	sys = calloc(n + 64, KBLOOM_NAME_MAX);
	if (!sys) {
		snprintf(why, wlen, "%s/filters: %s", SYSFS, strerror(ENOMEM));
		err = ENOMEM;
		goto out_names;
	}
	d = opendir(SYSFS "/filters");
	if (!d) {
		snprintf(why, wlen, "%s/filters: %s", SYSFS, strerror(errno));
		err = EIO;
		goto out_sys;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (ns < n + 64)
			set_name(sys[ns], e->d_name);
		ns++;
	}
	closedir(d);
	if (ns == n)
		qsort(sys, ns, KBLOOM_NAME_MAX, cmp_name);
	if (ns != n ||
	    memcmp(sys, *names, (size_t)n * KBLOOM_NAME_MAX)) {
		snprintf(why, wlen, "LIST has %u filters, %s/filters %u%s", n,
			 SYSFS, ns, ns == n ? ", of other names" : "");
		err = EPROTO;
	} else if (sysfs_read_u64(SYSFS "/filter_count", &fc) || fc != n) {
		snprintf(why, wlen, "filter_count %llu, LIST %u",
			 (unsigned long long)fc, n);
		err = EPROTO;
	}
out_sys:
	free(sys);
out_names:
	if (err) {
		free(*names);
		*names = NULL;
	}
	return err;
}

/*
 * EXPORT of @name into a buffer of the size it needs (*payload, malloc'ed),
 * @im as the kernel wrote it back. First with no buffer, which must fail
 * with ENOBUFS and give the size (EPROTO if it does not), then into the
 * buffer (EIO if the two sizes disagree). 0 or an errno.
 */
static __maybe_unused int kb_export_all(int fd, const char *name,
					struct kbloom_image *im,
					unsigned char **payload)
{
	u64 len;
	int err = kb_export(fd, name, NULL, 0, im);

	*payload = NULL;
	if (err != ENOBUFS)
		return err ? err : EPROTO;
	/* A fresh structure: EXPORT refuses any other field set (seed_hi). */
	len = im->payload_len;
	*payload = malloc(len ? len : 1);
	if (!*payload)
		return ENOMEM;
	err = kb_export(fd, name, *payload, len, im);
	if (!err && im->payload_len != len)
		err = EIO;	/* the two answers disagree */
	if (err) {
		free(*payload);
		*payload = NULL;
	}
	return err;
}

/*
 * What INFO's bits_set counts in an exported image: the bits set (counting:
 * the non-zero counters) of the newest generation, which is stored first.
 */
static __maybe_unused u64 image_weight(const struct kbloom_image *im,
				       const unsigned char *payload)
{
	u64 i, len = im->payload_len, w = 0;

	if (im->generations > 1)
		len /= im->generations;
	for (i = 0; i < len; i++) {
		if (im->flags & KBLOOM_CREATE_COUNTING)
			w += !!(payload[i] & 0x0f) + !!(payload[i] & 0xf0);
		else
			w += (u64)__builtin_popcount(payload[i]);
	}
	return w;
}

/* Entries of /proc/self/fd: the descriptors this process has open. */
static __maybe_unused long fds_open(void)
{
	struct dirent *de;
	long n = 0;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* ------------------------------------------------------------------ */
/* Time                                                               */
/* ------------------------------------------------------------------ */

static __maybe_unused u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

static __maybe_unused u64 now_ms(void)
{
	return now_ns() / 1000000;
}

static __maybe_unused void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Wait (up to @ms; 0: look once) until memory_used is @extra bytes more
 * than the sum of what the live filters are charged (sysfs
 * memory_charged): with @extra 0, until every deferred free has run; with
 * the charge of a destroyed filter something still holds, until everything
 * else has been freed. 0 with *used set, ETIMEDOUT (with *used and *sum the
 * last values seen), or an errno.
 */
static __maybe_unused int settle_within(int fd, u64 extra, u64 ms,
					u64 *used, u64 *sum)
{
	u64 t0 = now_ns();
	int err;

	for (;;) {
		char (*names)[KBLOOM_NAME_MAX];
		u64 charged = 0;
		u32 n, i;

		err = kb_list(fd, &names, &n);
		if (err) {
			free(names);
			return err;
		}
		*sum = 0;
		for (i = 0; i < n && !err; i++) {
			err = filter_attr(names[i], "memory_charged", &charged);
			*sum += charged;
		}
		free(names);
		if (err && err != ENOENT)	/* ENOENT: destroyed meanwhile */
			return err;
		if (!err) {
			err = sysfs_read_u64(SYSFS "/memory_used", used);
			if (err)
				return err;
			if (*used == *sum + extra)
				return 0;
		}
		if (now_ns() - t0 >= ms * 1000000)
			return ETIMEDOUT;
		sleep_ms(20);
	}
}

/* settle_within() 10 s. */
static __maybe_unused int settle(int fd, u64 extra, u64 *used, u64 *sum)
{
	return settle_within(fd, extra, 10000, used, sum);
}

/* settle() with nothing held: every deferred free has run. */
static __maybe_unused int quiesce(int fd, u64 *used, u64 *sum)
{
	return settle(fd, 0, used, sum);
}

#endif /* KBLOOM_UTIL_H */
