/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kbloom test programs on the kernel's kselftest
 * harness (kbloom_selftest and kbloom_hardening): the harness itself, the
 * ioctl wrappers, sysfs access, and the checks kbloom_selftest words its
 * assertions with.
 *
 * Every function is static __maybe_unused: each program (and the
 * stress-only build of kbloom_selftest) uses a different part of it, and
 * an unused helper must not break a -Werror build.
 *
 * The ioctl wrappers return 0 or a positive errno (KB_BADRET for a
 * positive return value, which no command has), so that a test compares
 * one number against what it expects.
 */
#ifndef KBLOOM_TEST_H
#define KBLOOM_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kbloom.h>

/*
 * The 6.1 harness's SIGALRM handler ignores its third parameter: the only
 * warning -Wextra has about it. Everything after it is checked in full.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#ifndef __maybe_unused
#define __maybe_unused	__attribute__((__unused__))
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

/*
 * A "# " line on stdout, flushed: a test child leaves by _exit(), which
 * would drop what stdio still buffers when stdout is a pipe.
 */
#define NOTE(fmt, ...) do {					\
	ksft_print_msg(fmt "\n", ##__VA_ARGS__);		\
	fflush(stdout);						\
} while (0)

/* ------------------------------------------------------------------ */
/* Errors and checks                                                  */
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

/*
 * kbloom_selftest's checks: each is an EXPECT_*() of the harness whose
 * failure logs what was checked and why it failed, and each evaluates to
 * whether it held, so that a case can leave out what depends on a failed
 * step without giving up the rest of the case (an ASSERT_*() would).
 * @fmt describes the check; its arguments are evaluated only on failure.
 */

/* @cond holds; @detail (evaluated right after @cond) says why not. */
#define EXPECT_COND(cond, detail, fmt, ...) ({				\
	bool __kb_ok = (cond);						\
	const char *__kb_why = __kb_ok ? "" : (detail);			\
									\
	EXPECT_TRUE(__kb_ok)						\
		TH_LOG(fmt ": %s", ##__VA_ARGS__, __kb_why);		\
	__kb_ok;							\
})

/* @err, from one of the wrappers below, is 0. */
#define EXPECT_OK(err, fmt, ...) ({					\
	int __kb_err = (err);						\
	char __kb_et[96];						\
									\
	EXPECT_EQ(0, __kb_err)						\
		TH_LOG(fmt ": failed with %s", ##__VA_ARGS__,		\
		       errtext(__kb_err, __kb_et, sizeof(__kb_et)));	\
	__kb_err == 0;							\
})

/* @err is @want or @want2. */
#define EXPECT_ERRNO2(err, want, want2, fmt, ...) ({			\
	int __kb_err = (err), __kb_w1 = (want), __kb_w2 = (want2);	\
	bool __kb_ok = __kb_err == __kb_w1 ||				\
		       (__kb_w2 && __kb_err == __kb_w2);		\
	char __kb_et[96];						\
									\
	EXPECT_TRUE(__kb_ok)						\
		TH_LOG(fmt ": expected %s%s%s, got %s", ##__VA_ARGS__,	\
		       errname(__kb_w1), __kb_w2 ? " or " : "",		\
		       __kb_w2 ? errname(__kb_w2) : "",			\
		       errtext(__kb_err, __kb_et, sizeof(__kb_et)));	\
	__kb_ok;							\
})

/* @err is the errno @want. */
#define EXPECT_ERRNO(err, want, fmt, ...) \
	EXPECT_ERRNO2(err, want, 0, fmt, ##__VA_ARGS__)

/* @got == @want, as unsigned 64-bit numbers. */
#define EXPECT_U64(got, want, fmt, ...) ({				\
	u64 __kb_got = (got), __kb_want = (want);			\
									\
	EXPECT_EQ(__kb_want, __kb_got)					\
		TH_LOG(fmt, ##__VA_ARGS__);				\
	__kb_got == __kb_want;						\
})

/* @lo <= @got <= @hi. */
#define EXPECT_RANGE(got, lo, hi, fmt, ...) ({				\
	u64 __kb_got = (got), __kb_lo = (lo), __kb_hi = (hi);		\
	bool __kb_ok = __kb_got >= __kb_lo && __kb_got <= __kb_hi;	\
									\
	EXPECT_TRUE(__kb_ok)						\
		TH_LOG(fmt ": got %llu, want %llu..%llu", ##__VA_ARGS__,\
		       (unsigned long long)__kb_got,			\
		       (unsigned long long)__kb_lo,			\
		       (unsigned long long)__kb_hi);			\
	__kb_ok;							\
})

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

static __maybe_unused int sysfs_write_u64(const char *path, u64 val)
{
	char buf[32];
	int fd, len, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	len = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)val);
	if (write(fd, buf, (size_t)len) != len)
		err = errno ? errno : EIO;
	close(fd);
	return err;
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

/* ------------------------------------------------------------------ */
/* Time                                                               */
/* ------------------------------------------------------------------ */

static __maybe_unused u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

static __maybe_unused void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Wait (up to 10 s) until memory_used is @extra bytes more than the sum of
 * what the live filters are charged (sysfs memory_charged): with @extra 0,
 * until every deferred free has run; with the charge of a destroyed filter
 * something still holds, until everything else has been freed. 0 with *used set, ETIMEDOUT (with *used and *sum the
 * last values seen), or an errno.
 */
static __maybe_unused int settle(int fd, u64 extra, u64 *used, u64 *sum)
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
		if (now_ns() - t0 > 10000000000ULL)
			return ETIMEDOUT;
		sleep_ms(20);
	}
}

/* settle() with nothing held: every deferred free has run. */
static __maybe_unused int quiesce(int fd, u64 *used, u64 *sum)
{
	return settle(fd, 0, used, sum);
}

#endif /* KBLOOM_TEST_H */
