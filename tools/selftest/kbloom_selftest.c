// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest - integration test for the kbloom module, run as root
 * inside the test VM with kbloom.ko loaded and /dev/bloom present.
 *
 * Output is TAP: one "ok N - what" or "not ok N - what: detail" line per
 * check, then "selftest: P passed, F failed" and the plan "1..N" (last, so
 * that a run that dies half-way has none). The exit status is 0 only when
 * F is 0. The same source is built as a 64-bit and as an i386 binary: the
 * i386 one goes through compat_ptr_ioctl(), so both must pass.
 *
 * Usage: kbloom_selftest [-d DEV] [-t GROUP] [-l]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kbloom.h>

typedef __u64 u64;
typedef __u32 u32;

/*
 * The ABI promise is that i386 and x86_64 see identical layouts, so that
 * compat_ptr_ioctl() suffices. Pin every size and offset here: both builds
 * compile this, so a layout drift on either breaks the build, not the VM.
 */
#define ASSERT_SIZE(t, n) \
	_Static_assert(sizeof(struct t) == (n), "sizeof(struct " #t ")")
#define ASSERT_OFF(t, f, n) \
	_Static_assert(offsetof(struct t, f) == (n), "offsetof(" #t ", " #f ")")
#define ASSERT_FSIZE(t, f, n) \
	_Static_assert(sizeof(((struct t *)0)->f) == (n), "sizeof(" #t "." #f ")")

ASSERT_SIZE(kbloom_version, 80);
ASSERT_OFF(kbloom_version, api_version, 0);
ASSERT_OFF(kbloom_version, hash_scheme, 4);
ASSERT_OFF(kbloom_version, features, 8);
ASSERT_OFF(kbloom_version, min_bits, 16);
ASSERT_OFF(kbloom_version, max_bits, 24);
ASSERT_OFF(kbloom_version, max_hashes, 32);
ASSERT_OFF(kbloom_version, max_key_len, 36);
ASSERT_OFF(kbloom_version, max_batch, 40);
ASSERT_OFF(kbloom_version, name_max, 44);
ASSERT_OFF(kbloom_version, default_hash_scheme, 48);
ASSERT_OFF(kbloom_version, max_generations, 52);
ASSERT_OFF(kbloom_version, reserved, 56);
ASSERT_FSIZE(kbloom_version, reserved, 24);

ASSERT_SIZE(kbloom_create, 120);
ASSERT_OFF(kbloom_create, name, 0);
ASSERT_FSIZE(kbloom_create, name, KBLOOM_NAME_MAX);
ASSERT_OFF(kbloom_create, bits, 32);
ASSERT_OFF(kbloom_create, hashes, 40);
ASSERT_OFF(kbloom_create, fpr_ppb, 44);
ASSERT_OFF(kbloom_create, capacity, 48);
ASSERT_OFF(kbloom_create, flags, 56);
ASSERT_OFF(kbloom_create, hash_scheme, 60);
ASSERT_OFF(kbloom_create, like, 64);
ASSERT_FSIZE(kbloom_create, like, KBLOOM_NAME_MAX);
ASSERT_OFF(kbloom_create, window_ms, 96);
ASSERT_OFF(kbloom_create, generations, 100);
ASSERT_OFF(kbloom_create, reserved, 104);
ASSERT_FSIZE(kbloom_create, reserved, 16);
/* The argument before windows, still accepted under its own number. */
ASSERT_SIZE(kbloom_create_v1, 96);
ASSERT_OFF(kbloom_create_v1, hash_scheme, 60);
ASSERT_OFF(kbloom_create_v1, like, 64);

ASSERT_SIZE(kbloom_name, 48);
ASSERT_OFF(kbloom_name, name, 0);
ASSERT_OFF(kbloom_name, reserved, 32);
ASSERT_FSIZE(kbloom_name, reserved, 16);

ASSERT_SIZE(kbloom_info, 136);
ASSERT_OFF(kbloom_info, name, 0);
ASSERT_OFF(kbloom_info, bits, 32);
ASSERT_OFF(kbloom_info, hashes, 40);
ASSERT_OFF(kbloom_info, flags, 44);
ASSERT_OFF(kbloom_info, capacity, 48);
ASSERT_OFF(kbloom_info, fpr_ppb, 56);
ASSERT_OFF(kbloom_info, hash_scheme, 60);
ASSERT_OFF(kbloom_info, bits_set, 64);
ASSERT_OFF(kbloom_info, adds, 72);
ASSERT_OFF(kbloom_info, queries, 80);
ASSERT_OFF(kbloom_info, hits, 88);
ASSERT_OFF(kbloom_info, memory_bytes, 96);
ASSERT_OFF(kbloom_info, saturated, 104);
ASSERT_OFF(kbloom_info, window_ms, 112);
ASSERT_OFF(kbloom_info, generations, 116);
ASSERT_OFF(kbloom_info, rotations, 120);
ASSERT_OFF(kbloom_info, newest_age_ms, 128);

ASSERT_SIZE(kbloom_list, 16);
ASSERT_OFF(kbloom_list, names, 0);
ASSERT_OFF(kbloom_list, count, 8);
ASSERT_OFF(kbloom_list, reserved, 12);

ASSERT_SIZE(kbloom_key, 64);
ASSERT_OFF(kbloom_key, name, 0);
ASSERT_OFF(kbloom_key, key, 32);
ASSERT_OFF(kbloom_key, len, 40);
ASSERT_OFF(kbloom_key, result, 44);
ASSERT_OFF(kbloom_key, reserved, 48);
ASSERT_FSIZE(kbloom_key, reserved, 16);

ASSERT_SIZE(kbloom_batch, 96);
ASSERT_OFF(kbloom_batch, name, 0);
ASSERT_OFF(kbloom_batch, keys, 32);
ASSERT_OFF(kbloom_batch, lens, 40);
ASSERT_OFF(kbloom_batch, results, 48);
ASSERT_OFF(kbloom_batch, keys_bytes, 56);
ASSERT_OFF(kbloom_batch, count, 64);
ASSERT_OFF(kbloom_batch, done, 68);
ASSERT_OFF(kbloom_batch, hits, 72);
ASSERT_OFF(kbloom_batch, reserved0, 76);
ASSERT_OFF(kbloom_batch, reserved, 80);
ASSERT_FSIZE(kbloom_batch, reserved, 16);

ASSERT_SIZE(kbloom_merge, 120);
ASSERT_OFF(kbloom_merge, dst, 0);
ASSERT_FSIZE(kbloom_merge, dst, KBLOOM_NAME_MAX);
ASSERT_OFF(kbloom_merge, src, 32);
ASSERT_FSIZE(kbloom_merge, src, KBLOOM_NAME_MAX);
ASSERT_OFF(kbloom_merge, bits_dst, 64);
ASSERT_OFF(kbloom_merge, bits_src, 72);
ASSERT_OFF(kbloom_merge, bits_union, 80);
ASSERT_OFF(kbloom_merge, bits_inter, 88);
ASSERT_OFF(kbloom_merge, mismatch, 96);
ASSERT_OFF(kbloom_merge, reserved0, 100);
ASSERT_OFF(kbloom_merge, reserved, 104);
ASSERT_FSIZE(kbloom_merge, reserved, 16);

ASSERT_SIZE(kbloom_image, 120);
ASSERT_OFF(kbloom_image, name, 0);
ASSERT_FSIZE(kbloom_image, name, KBLOOM_NAME_MAX);
ASSERT_OFF(kbloom_image, bits, 32);
ASSERT_OFF(kbloom_image, hashes, 40);
ASSERT_OFF(kbloom_image, flags, 44);
ASSERT_OFF(kbloom_image, seed, 48);
ASSERT_FSIZE(kbloom_image, seed, 8);
ASSERT_OFF(kbloom_image, adds, 56);
ASSERT_OFF(kbloom_image, capacity, 64);
ASSERT_OFF(kbloom_image, fpr_ppb, 72);
ASSERT_OFF(kbloom_image, hash_scheme, 76);
ASSERT_OFF(kbloom_image, payload, 80);
ASSERT_OFF(kbloom_image, payload_len, 88);
ASSERT_OFF(kbloom_image, import_flags, 96);
ASSERT_OFF(kbloom_image, reserved0, 100);
ASSERT_OFF(kbloom_image, seed_hi, 104);
ASSERT_FSIZE(kbloom_image, seed_hi, 8);
ASSERT_OFF(kbloom_image, generations, 112);
ASSERT_OFF(kbloom_image, window_ms, 116);

/* The command numbers themselves are ABI: the same on both builds. */
_Static_assert(KBLOOM_IOC_VERSION == 0x8050BF00u, "VERSION number");
_Static_assert(KBLOOM_IOC_CREATE == 0xC078BF01u, "CREATE number");
_Static_assert(KBLOOM_IOC_CREATE_V1 == 0xC060BF01u, "CREATE_V1 number");
_Static_assert(KBLOOM_IOC_ROTATE == 0x4030BF06u, "ROTATE number");
_Static_assert(KBLOOM_IOC_DESTROY == 0x4030BF02u, "DESTROY number");
_Static_assert(KBLOOM_IOC_CLEAR == 0x4030BF03u, "CLEAR number");
_Static_assert(KBLOOM_IOC_INFO == 0xC088BF04u, "INFO number");
_Static_assert(KBLOOM_IOC_LIST == 0xC010BF05u, "LIST number");
_Static_assert(KBLOOM_IOC_ADD == 0xC040BF10u, "ADD number");
_Static_assert(KBLOOM_IOC_QUERY == 0xC040BF11u, "QUERY number");
_Static_assert(KBLOOM_IOC_TEST_AND_ADD == 0xC040BF12u, "TEST_AND_ADD number");
_Static_assert(KBLOOM_IOC_ADD_BATCH == 0xC060BF20u, "ADD_BATCH number");
_Static_assert(KBLOOM_IOC_QUERY_BATCH == 0xC060BF21u, "QUERY_BATCH number");
_Static_assert(KBLOOM_IOC_TEST_AND_ADD_BATCH == 0xC060BF22u,
	       "TEST_AND_ADD_BATCH number");
_Static_assert(KBLOOM_IOC_REMOVE == 0xC040BF13u, "REMOVE number");
_Static_assert(KBLOOM_IOC_REMOVE_BATCH == 0xC060BF23u, "REMOVE_BATCH number");
_Static_assert(KBLOOM_IOC_MERGE == 0xC078BF30u, "MERGE number");
_Static_assert(KBLOOM_IOC_COMPARE == 0xC078BF31u, "COMPARE number");
_Static_assert(KBLOOM_IOC_EXPORT == 0xC078BF40u, "EXPORT number");
_Static_assert(KBLOOM_IOC_IMPORT == 0x4078BF41u, "IMPORT number");
/* Flag and limit values are ABI too. */
_Static_assert(KBLOOM_CREATE_COUNTING == 1 && KBLOOM_CREATE_LIKE == 2,
	       "create flags");
_Static_assert(KBLOOM_IMPORT_REPLACE == 1, "import flags");
_Static_assert(KBLOOM_COUNTER_MAX == 15, "4-bit counters");
_Static_assert(KBLOOM_MISMATCH_BITS == 1 && KBLOOM_MISMATCH_HASHES == 2 &&
	       KBLOOM_MISMATCH_COUNTING == 4 && KBLOOM_MISMATCH_SEED == 8 &&
	       KBLOOM_MISMATCH_HASH_SCHEME == 16,
	       "mismatch bits");
_Static_assert(KBLOOM_HASH_JHASH == 1 && KBLOOM_HASH_SIPHASH == 2,
	       "hash schemes");
_Static_assert(KBLOOM_FEATURE_SIPHASH == 1ULL << 6, "SIPHASH feature");

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define PTR(p) ((u64)(uintptr_t)(p))
#define PRINTF(a, b) __attribute__((format(printf, a, b)))

/* ioc() returns this when ioctl() returned a positive value: never valid. */
#define KB_BADRET (-1)

#define SYSFS_ROOT "/sys/kernel/bloom"

static const char *g_dev = "/dev/bloom";
static int g_fd = -1;
/*
 * The hash scheme filters get when CREATE's hash_scheme is 0: the
 * module's default, VERSION's default_hash_scheme (main() asks before any
 * group runs).
 */
static u32 g_scheme;

/*
 * Counters live in a MAP_SHARED page so that checks run by a forked child
 * (the perm group) are numbered and counted with the parent's.
 */
struct tap_state {
	unsigned int n;
	unsigned int passed;
	unsigned int failed;
};

static struct tap_state tap_fallback;
static struct tap_state *tap = &tap_fallback;
static pthread_mutex_t tap_lock = PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------------ */
/* Reporting                                                          */
/* ------------------------------------------------------------------ */

static const char *errname(int err)
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
static const char *errtext(int err, char *buf, size_t len)
{
	if (err == 0 || err == KB_BADRET)
		snprintf(buf, len, "%s", errname(err));
	else
		snprintf(buf, len, "%s (%s)", errname(err), strerror(err));
	return buf;
}

static bool tap_line(bool pass, const char *desc, const char *detail)
{
	pthread_mutex_lock(&tap_lock);
	tap->n++;
	if (pass) {
		tap->passed++;
		printf("ok %u - %s\n", tap->n, desc);
	} else {
		tap->failed++;
		printf("not ok %u - %s: %s\n", tap->n, desc, detail);
	}
	fflush(stdout);
	pthread_mutex_unlock(&tap_lock);
	return pass;
}

#define VDESC(buf, fmt)                                          \
	do {                                                     \
		va_list ap_;                                     \
		va_start(ap_, fmt);                              \
		vsnprintf(buf, sizeof(buf), fmt, ap_);           \
		va_end(ap_);                                     \
	} while (0)

/* Generic check; @detail explains a failure. */
static PRINTF(3, 4) bool check(bool cond, const char *detail,
			       const char *fmt, ...)
{
	char desc[256];

	VDESC(desc, fmt);
	return tap_line(cond, desc, detail);
}

static PRINTF(3, 4) bool check_u64(u64 got, u64 want, const char *fmt, ...)
{
	char desc[256], detail[128];

	VDESC(desc, fmt);
	snprintf(detail, sizeof(detail), "got %llu, want %llu",
		 (unsigned long long)got, (unsigned long long)want);
	return tap_line(got == want, desc, detail);
}

static PRINTF(4, 5) bool check_range(u64 got, u64 lo, u64 hi,
				     const char *fmt, ...)
{
	char desc[256], detail[128];

	VDESC(desc, fmt);
	snprintf(detail, sizeof(detail), "got %llu, want %llu..%llu",
		 (unsigned long long)got, (unsigned long long)lo,
		 (unsigned long long)hi);
	return tap_line(got >= lo && got <= hi, desc, detail);
}

/* @err is 0 or an errno from ioc(); success expected. */
static PRINTF(2, 3) bool check_ok(int err, const char *fmt, ...)
{
	char desc[256], detail[128], et[96];

	VDESC(desc, fmt);
	snprintf(detail, sizeof(detail), "failed with %s",
		 errtext(err, et, sizeof(et)));
	return tap_line(err == 0, desc, detail);
}

/* @err is 0 or an errno; expect @want (or @want2 if non-zero). */
static bool check_err_v(int err, int want, int want2, const char *desc)
{
	char detail[160], et[96];

	if (err == want || (want2 && err == want2))
		return tap_line(true, desc, NULL);
	if (err == 0)
		snprintf(detail, sizeof(detail), "expected %s%s%s, succeeded",
			 errname(want), want2 ? " or " : "",
			 want2 ? errname(want2) : "");
	else
		snprintf(detail, sizeof(detail), "expected %s%s%s, got %s",
			 errname(want), want2 ? " or " : "",
			 want2 ? errname(want2) : "",
			 errtext(err, et, sizeof(et)));
	return tap_line(false, desc, detail);
}

static PRINTF(3, 4) bool check_err(int err, int want, const char *fmt, ...)
{
	char desc[256];

	VDESC(desc, fmt);
	return check_err_v(err, want, 0, desc);
}

static PRINTF(4, 5) bool check_err2(int err, int want, int want2,
				    const char *fmt, ...)
{
	char desc[256];

	VDESC(desc, fmt);
	return check_err_v(err, want, want2, desc);
}

/* ------------------------------------------------------------------ */
/* ioctl helpers: each returns 0 or a positive errno                  */
/* ------------------------------------------------------------------ */

static int ioc(int fd, unsigned long cmd, void *arg)
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
 * exactly what the "name too long" check needs.
 */
static void set_name(char *dst, const char *src)
{
	size_t len = strlen(src);

	memset(dst, 0, KBLOOM_NAME_MAX);
	memcpy(dst, src, len < KBLOOM_NAME_MAX ? len : KBLOOM_NAME_MAX);
}

static int kb_create(int fd, const char *name, u64 bits, u32 hashes,
		     u64 capacity, u32 fpr_ppb, struct kbloom_create *out)
{
	struct kbloom_create c;
	int err;

	memset(&c, 0, sizeof(c));
	set_name(c.name, name);
	c.bits = bits;
	c.hashes = hashes;
	c.capacity = capacity;
	c.fpr_ppb = fpr_ppb;
	err = ioc(fd, KBLOOM_IOC_CREATE, &c);
	if (out)
		*out = c;
	return err;
}

static int kb_name_cmd(int fd, unsigned long cmd, const char *name)
{
	struct kbloom_name n;

	memset(&n, 0, sizeof(n));
	set_name(n.name, name);
	return ioc(fd, cmd, &n);
}

static int kb_destroy(int fd, const char *name)
{
	return kb_name_cmd(fd, KBLOOM_IOC_DESTROY, name);
}

static int kb_clear(int fd, const char *name)
{
	return kb_name_cmd(fd, KBLOOM_IOC_CLEAR, name);
}

static int kb_info(int fd, const char *name, struct kbloom_info *info)
{
	memset(info, 0, sizeof(*info));
	set_name(info->name, name);
	return ioc(fd, KBLOOM_IOC_INFO, info);
}

/* Poison @result so that a kernel that never writes it is caught. */
#define RESULT_POISON 0xdeadbeefu

static int kb_key(int fd, unsigned long cmd, const char *name,
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

static int kb_skey(int fd, unsigned long cmd, const char *name,
		   const char *key, u32 *result)
{
	return kb_key(fd, cmd, name, key, (u32)strlen(key), result);
}

static int kb_batch(int fd, unsigned long cmd, const char *name,
		    const void *keys, const u32 *lens, void *results,
		    u64 keys_bytes, u32 count, struct kbloom_batch *out)
{
	struct kbloom_batch b;
	int err;

	memset(&b, 0, sizeof(b));
	set_name(b.name, name);
	b.keys = PTR(keys);
	b.lens = PTR(lens);
	b.results = PTR(results);
	b.keys_bytes = keys_bytes;
	b.count = count;
	/* Poison the outputs: they must be written by the kernel. */
	b.done = RESULT_POISON;
	b.hits = RESULT_POISON;
	err = ioc(fd, cmd, &b);
	if (out)
		*out = b;
	return err;
}

/* CREATE with flags and, for KBLOOM_CREATE_LIKE, the filter to copy. */
static int kb_create_ex(int fd, const char *name, u64 bits, u32 hashes,
			u32 flags, const char *like, struct kbloom_create *out)
{
	struct kbloom_create c;
	int err;

	memset(&c, 0, sizeof(c));
	set_name(c.name, name);
	c.bits = bits;
	c.hashes = hashes;
	c.flags = flags;
	if (like)
		set_name(c.like, like);
	err = ioc(fd, KBLOOM_IOC_CREATE, &c);
	if (out)
		*out = c;
	return err;
}

/* MERGE or COMPARE; every output field poisoned, so each must be written. */
static int kb_merge(int fd, unsigned long cmd, const char *dst,
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

static int kb_export(int fd, const char *name, void *buf, u64 len,
		     struct kbloom_image *out)
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
static int kb_import(int fd, const struct kbloom_image *im, const char *name,
		     u32 import_flags)
{
	struct kbloom_image c = *im;

	set_name(c.name, name);
	c.import_flags = import_flags;
	return ioc(fd, KBLOOM_IOC_IMPORT, &c);
}

/* Number of filters, or -1 (after reporting) if LIST failed. */
static long kb_count(int fd)
{
	struct kbloom_list l;
	int err;

	memset(&l, 0, sizeof(l));
	err = ioc(fd, KBLOOM_IOC_LIST, &l);
	if (err) {
		check_ok(err, "LIST with count 0");
		return -1;
	}
	return l.count;
}

/*
 * Destroy a filter a group created. ENOENT is fine (a failed create, or a
 * test that already destroyed it); anything else is a failure worth a line.
 */
static void cleanup(const char *name)
{
	int err = kb_destroy(g_fd, name);

	if (err && err != ENOENT)
		check_ok(err, "cleanup: destroy %s", name);
}

/* ------------------------------------------------------------------ */
/* Keys                                                               */
/* ------------------------------------------------------------------ */

/* splitmix64: deterministic, so a failing run can be reproduced. */
static u64 rng_next(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct keyset {
	unsigned char *keys;
	u32 *lens;
	u64 *off;
	u64 bytes;
	u32 count;
};

static void keyset_free(struct keyset *ks)
{
	free(ks->keys);
	free(ks->lens);
	free(ks->off);
	memset(ks, 0, sizeof(*ks));
}

/*
 * @count keys of 1..@maxlen pseudo-random bytes. The low bit of the first
 * byte is @parity, so keysets of different parity never share a key: a
 * query of the other set can only hit by a false positive.
 */
static bool keyset_gen(struct keyset *ks, u32 count, u64 seed,
		       unsigned int parity, u32 maxlen)
{
	u64 s = seed, pos = 0;
	u32 i, j;

	memset(ks, 0, sizeof(*ks));
	ks->count = count;
	ks->lens = calloc(count, sizeof(*ks->lens));
	ks->off = calloc(count, sizeof(*ks->off));
	ks->keys = malloc((size_t)count * maxlen);
	if (!ks->lens || !ks->off || !ks->keys) {
		keyset_free(ks);
		return check(false, "out of memory", "allocate %u keys", count);
	}
	for (i = 0; i < count; i++) {
		u32 len = 1 + (u32)(rng_next(&s) % maxlen);

		ks->lens[i] = len;
		ks->off[i] = pos;
		for (j = 0; j < len; j++)
			ks->keys[pos + j] = (unsigned char)rng_next(&s);
		ks->keys[pos] = (unsigned char)((ks->keys[pos] & 0xfe) | parity);
		pos += len;
	}
	ks->bytes = pos;
	return true;
}

static bool bit_get(const unsigned char *bm, u32 i)
{
	return bm[i / 8] & (1u << (i % 8));
}

static u32 bits_count(const unsigned char *bm, u32 n)
{
	u32 i, c = 0;

	for (i = 0; i < n; i++)
		c += bit_get(bm, i);
	return c;
}

/*
 * @count distinct keys "<tag>:<i>": unlike keyset_gen(), never a duplicate,
 * so that removing one key cannot remove another.
 */
static bool keyset_tag(struct keyset *ks, const char *tag, u32 count)
{
	u64 pos = 0;
	u32 i;

	memset(ks, 0, sizeof(*ks));
	ks->count = count;
	ks->lens = calloc(count, sizeof(*ks->lens));
	ks->off = calloc(count, sizeof(*ks->off));
	ks->keys = malloc((size_t)count * 24 + 1);
	if (!ks->lens || !ks->off || !ks->keys) {
		keyset_free(ks);
		return check(false, "out of memory", "allocate %u keys", count);
	}
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
static u64 ks_span(const struct keyset *ks, u32 first, u32 n)
{
	u64 end = first + n < ks->count ? ks->off[first + n] : ks->bytes;

	return end - ks->off[first];
}

static int ks_batch(int fd, unsigned long cmd, const char *name,
		    const struct keyset *ks, u32 first, u32 n, void *results,
		    struct kbloom_batch *out)
{
	return kb_batch(fd, cmd, name, ks->keys + ks->off[first],
			ks->lens + first, results, ks_span(ks, first, n), n,
			out);
}

/* ADD_BATCH keys first .. first + n - 1 of @ks to @name; reports. */
static bool ks_add(const char *name, const struct keyset *ks, u32 first,
		   u32 n, const char *what)
{
	struct kbloom_batch out;
	int err = ks_batch(g_fd, KBLOOM_IOC_ADD_BATCH, name, ks, first, n,
			   NULL, &out);

	if (!check_ok(err, "%s: ADD_BATCH %u keys to %s", what, n, name))
		return false;
	return check_u64(out.done, n, "%s: ADD_BATCH to %s done", what, name);
}

/* How many of keys first .. first + n - 1 are present; -1 on error. */
static long ks_hits(int fd, const char *name, const struct keyset *ks,
		    u32 first, u32 n)
{
	struct kbloom_batch out;
	int err = ks_batch(fd, KBLOOM_IOC_QUERY_BATCH, name, ks, first, n,
			   NULL, &out);

	if (!check_ok(err, "QUERY_BATCH %u keys on %s", n, name) ||
	    !check_u64(out.done, n, "QUERY_BATCH on %s done", name))
		return -1;
	return out.hits;
}

static u64 popcount_bytes(const unsigned char *p, u64 n)
{
	u64 i, c = 0;

	for (i = 0; i < n; i++)
		c += (u64)__builtin_popcount(p[i]);
	return c;
}

/* Are bits @from .. 8 * @len - 1 of @p (payload bit order) all zero? */
static bool pad_zero(const unsigned char *p, u64 len, u64 from)
{
	u64 i;

	for (i = from; i < len * 8; i++)
		if (p[i / 8] & (1u << (i % 8)))
			return false;
	return true;
}

/* Are all @n bytes of @p equal to @v? */
static bool all_bytes(const unsigned char *p, u64 n, unsigned char v)
{
	u64 i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* The payload size the header implies: m bits or m 4-bit counters. */
static u64 payload_size(u64 bits, bool counting)
{
	return (bits * (counting ? 4 : 1) + 63) / 64 * 8;
}

/* A page that is certainly not mapped: map one, then unmap it. */
static void *unmapped_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		check(false, strerror(errno), "mmap a scratch page");
		return NULL;
	}
	if (munmap(p, 4096)) {
		check(false, strerror(errno), "munmap the scratch page");
		return NULL;
	}
	return p;
}

/* ------------------------------------------------------------------ */
/* Group: version                                                     */
/* ------------------------------------------------------------------ */

static void test_version(void)
{
	const u64 want_feat = KBLOOM_FEATURE_BATCH |
			      KBLOOM_FEATURE_TEST_AND_ADD |
			      KBLOOM_FEATURE_SIZING;
	const u64 new_feat = KBLOOM_FEATURE_COUNTING | KBLOOM_FEATURE_MERGE |
			     KBLOOM_FEATURE_IMAGE;
	struct kbloom_version v;
	unsigned int i, nonzero = 0;
	char detail[64];
	int err;

	/* Poison it all: every field must come from the kernel. */
	memset(&v, 0xa5, sizeof(v));
	err = ioc(g_fd, KBLOOM_IOC_VERSION, &v);
	if (!check_ok(err, "version: KBLOOM_IOC_VERSION"))
		return;
	check_u64(v.api_version, KBLOOM_API_VERSION, "version: api_version");
	check_u64(v.hash_scheme, KBLOOM_HASH_SCHEME, "version: hash_scheme");
	/* The default scheme of new filters: jhash or SipHash. */
	check_range(v.default_hash_scheme, KBLOOM_HASH_JHASH,
		    KBLOOM_HASH_SIPHASH,
		    "version: default_hash_scheme is a known scheme");
	snprintf(detail, sizeof(detail), "features 0x%llx",
		 (unsigned long long)v.features);
	check((v.features & want_feat) == want_feat, detail,
	      "version: features has BATCH, TEST_AND_ADD and SIZING");
	check((v.features & new_feat) == new_feat, detail,
	      "version: features has COUNTING, MERGE and IMAGE");
	check_u64(v.min_bits, KBLOOM_MIN_BITS, "version: min_bits");
	check_u64(v.max_bits, KBLOOM_MAX_BITS, "version: max_bits");
	check_u64(v.max_hashes, KBLOOM_MAX_HASHES, "version: max_hashes");
	check_u64(v.max_key_len, KBLOOM_KEY_MAX, "version: max_key_len");
	check_u64(v.max_batch, KBLOOM_BATCH_MAX, "version: max_batch");
	check_u64(v.name_max, KBLOOM_NAME_MAX, "version: name_max");
	for (i = 0; i < ARRAY_SIZE(v.reserved); i++)
		if (v.reserved[i])
			nonzero |= 1u << i;
	snprintf(detail, sizeof(detail), "non-zero reserved mask 0x%x",
		 nonzero);
	check(nonzero == 0, detail, "version: reserved all zero");
}

/* ------------------------------------------------------------------ */
/* Group: badioctl                                                    */
/* ------------------------------------------------------------------ */

static const struct {
	unsigned long cmd;
	const char *name;
} all_cmds[] = {
	{ KBLOOM_IOC_VERSION, "VERSION" },
	{ KBLOOM_IOC_CREATE, "CREATE" },
	{ KBLOOM_IOC_DESTROY, "DESTROY" },
	{ KBLOOM_IOC_CLEAR, "CLEAR" },
	{ KBLOOM_IOC_INFO, "INFO" },
	{ KBLOOM_IOC_LIST, "LIST" },
	{ KBLOOM_IOC_ADD, "ADD" },
	{ KBLOOM_IOC_QUERY, "QUERY" },
	{ KBLOOM_IOC_TEST_AND_ADD, "TEST_AND_ADD" },
	{ KBLOOM_IOC_ADD_BATCH, "ADD_BATCH" },
	{ KBLOOM_IOC_QUERY_BATCH, "QUERY_BATCH" },
	{ KBLOOM_IOC_TEST_AND_ADD_BATCH, "TEST_AND_ADD_BATCH" },
	/* Appended: test_create indexes the entries above by position. */
	{ KBLOOM_IOC_REMOVE, "REMOVE" },
	{ KBLOOM_IOC_REMOVE_BATCH, "REMOVE_BATCH" },
	{ KBLOOM_IOC_MERGE, "MERGE" },
	{ KBLOOM_IOC_COMPARE, "COMPARE" },
	{ KBLOOM_IOC_EXPORT, "EXPORT" },
	{ KBLOOM_IOC_IMPORT, "IMPORT" },
};

#define BAD_F		"badioctl_f"
#define BAD_NEW		"badioctl_new"
#define BAD_SRC		"badioctl_src"	/* like BAD_F: MERGE/COMPARE source */
#define BAD_CNT		"badioctl_cnt"	/* counting: REMOVE target */
#define BAD_SENTINEL	"sentinel"
#define BAD_BITS	(1u << 16)

/* An export of BAD_F: the valid IMPORT argument (under BAD_NEW). */
static struct kbloom_image bad_image;
static unsigned char bad_payload[BAD_BITS / 8];

struct rsv_case {
	unsigned long cmd;
	const char *cmd_name;
	const char *field;
	size_t off;
	size_t size;
};

#define RSV(c, s, f) { KBLOOM_IOC_##c, #c, #f, offsetof(struct s, f), \
		       sizeof(((struct s *)0)->f) }
#define RSV_I(c, s, f, i) { KBLOOM_IOC_##c, #c, #f "[" #i "]", \
			    offsetof(struct s, f) + (i) * sizeof(u64), \
			    sizeof(u64) }
/* One byte of a char array (set to 'x'). */
#define RSV_B(c, s, f, i) { KBLOOM_IOC_##c, #c, #f "[" #i "]", \
			    offsetof(struct s, f) + (i), 1 }

static const struct rsv_case rsv_cases[] = {
	/* CREATE's reserved0 is hash_scheme now: see test_badioctl. */
	/* @like must be all zero without KBLOOM_CREATE_LIKE. */
	RSV_B(CREATE, kbloom_create, like, 0),
	RSV_B(CREATE, kbloom_create, like, 31),
	RSV_I(DESTROY, kbloom_name, reserved, 0),
	RSV_I(DESTROY, kbloom_name, reserved, 1),
	RSV_I(CLEAR, kbloom_name, reserved, 0),
	RSV_I(CLEAR, kbloom_name, reserved, 1),
	/* INFO's outputs that were reserved must be 0 on input. */
	RSV(INFO, kbloom_info, window_ms),
	RSV(INFO, kbloom_info, generations),
	RSV(INFO, kbloom_info, rotations),
	RSV(INFO, kbloom_info, newest_age_ms),
	RSV(LIST, kbloom_list, reserved),
	RSV_I(ADD, kbloom_key, reserved, 0),
	RSV_I(ADD, kbloom_key, reserved, 1),
	RSV_I(QUERY, kbloom_key, reserved, 0),
	RSV_I(QUERY, kbloom_key, reserved, 1),
	RSV_I(TEST_AND_ADD, kbloom_key, reserved, 0),
	RSV_I(TEST_AND_ADD, kbloom_key, reserved, 1),
	RSV(ADD_BATCH, kbloom_batch, reserved0),
	RSV_I(ADD_BATCH, kbloom_batch, reserved, 0),
	RSV_I(ADD_BATCH, kbloom_batch, reserved, 1),
	RSV(QUERY_BATCH, kbloom_batch, reserved0),
	RSV_I(QUERY_BATCH, kbloom_batch, reserved, 0),
	RSV_I(QUERY_BATCH, kbloom_batch, reserved, 1),
	RSV(TEST_AND_ADD_BATCH, kbloom_batch, reserved0),
	RSV_I(TEST_AND_ADD_BATCH, kbloom_batch, reserved, 0),
	RSV_I(TEST_AND_ADD_BATCH, kbloom_batch, reserved, 1),
	RSV_I(REMOVE, kbloom_key, reserved, 0),
	RSV_I(REMOVE, kbloom_key, reserved, 1),
	RSV(REMOVE_BATCH, kbloom_batch, reserved0),
	RSV_I(REMOVE_BATCH, kbloom_batch, reserved, 0),
	RSV_I(REMOVE_BATCH, kbloom_batch, reserved, 1),
	RSV(MERGE, kbloom_merge, reserved0),
	RSV_I(MERGE, kbloom_merge, reserved, 0),
	RSV_I(MERGE, kbloom_merge, reserved, 1),
	RSV(COMPARE, kbloom_merge, reserved0),
	RSV_I(COMPARE, kbloom_merge, reserved, 0),
	RSV_I(COMPARE, kbloom_merge, reserved, 1),
	/* EXPORT: import_flags must be 0 like a reserved field. */
	RSV(EXPORT, kbloom_image, import_flags),
	RSV(EXPORT, kbloom_image, reserved0),
	/* EXPORT's other outputs must be 0 on input too. */
	RSV(EXPORT, kbloom_image, seed_hi),
	RSV(EXPORT, kbloom_image, generations),
	RSV(EXPORT, kbloom_image, window_ms),
	RSV(IMPORT, kbloom_image, reserved0),
};

/*
 * (Re)create the badioctl filter with its sentinel key, its LIKE twin
 * BAD_SRC, the counting BAD_CNT, and an export of BAD_F in bad_image.
 */
static bool bad_setup(void)
{
	int err;

	cleanup(BAD_SRC);
	cleanup(BAD_CNT);
	err = kb_create(g_fd, BAD_F, BAD_BITS, 7, 0, 0, NULL);
	if (!check_ok(err, "badioctl: create %s", BAD_F))
		return false;
	err = kb_skey(g_fd, KBLOOM_IOC_ADD, BAD_F, BAD_SENTINEL, NULL);
	if (!check_ok(err, "badioctl: add the sentinel key"))
		return false;
	err = kb_create_ex(g_fd, BAD_SRC, 0, 0, KBLOOM_CREATE_LIKE, BAD_F,
			   NULL);
	if (!check_ok(err, "badioctl: create %s like %s", BAD_SRC, BAD_F))
		return false;
	err = kb_create_ex(g_fd, BAD_CNT, BAD_BITS, 4, KBLOOM_CREATE_COUNTING,
			   NULL, NULL);
	if (!check_ok(err, "badioctl: create counting %s", BAD_CNT))
		return false;
	err = kb_export(g_fd, BAD_F, bad_payload, sizeof(bad_payload),
			&bad_image);
	if (!check_ok(err, "badioctl: EXPORT %s", BAD_F))
		return false;
	return check_u64(bad_image.payload_len, sizeof(bad_payload),
			 "badioctl: EXPORT %s payload_len", BAD_F);
}

/* A valid argument for @cmd, for the filter BAD_F and key @key. */
static void bad_build(unsigned long cmd, void *buf, const char *key,
		      u32 *lens, unsigned char *results)
{
	memset(buf, 0, 256);
	switch (cmd) {
	case KBLOOM_IOC_CREATE: {
		struct kbloom_create *c = buf;

		set_name(c->name, BAD_NEW);
		c->bits = 1024;
		c->hashes = 3;
		break;
	}
	case KBLOOM_IOC_DESTROY:
	case KBLOOM_IOC_CLEAR:
		set_name(((struct kbloom_name *)buf)->name, BAD_F);
		break;
	case KBLOOM_IOC_INFO:
		set_name(((struct kbloom_info *)buf)->name, BAD_F);
		break;
	case KBLOOM_IOC_LIST:
		break;	/* names 0, count 0: a valid "how many" call */
	case KBLOOM_IOC_ADD:
	case KBLOOM_IOC_QUERY:
	case KBLOOM_IOC_TEST_AND_ADD:
	case KBLOOM_IOC_REMOVE: {
		struct kbloom_key *k = buf;

		set_name(k->name, cmd == KBLOOM_IOC_REMOVE ? BAD_CNT : BAD_F);
		k->key = PTR(key);
		k->len = (u32)strlen(key);
		break;
	}
	case KBLOOM_IOC_MERGE:
	case KBLOOM_IOC_COMPARE: {
		struct kbloom_merge *m = buf;

		set_name(m->dst, BAD_F);
		set_name(m->src, BAD_SRC);
		break;
	}
	case KBLOOM_IOC_EXPORT: {
		struct kbloom_image *im = buf;

		set_name(im->name, BAD_F);
		im->payload = PTR(bad_payload);
		im->payload_len = sizeof(bad_payload);
		break;
	}
	case KBLOOM_IOC_IMPORT: {
		struct kbloom_image *im = buf;

		*im = bad_image;
		set_name(im->name, BAD_NEW);
		im->payload = PTR(bad_payload);
		im->import_flags = 0;
		break;
	}
	default: {
		struct kbloom_batch *b = buf;

		set_name(b->name, cmd == KBLOOM_IOC_REMOVE_BATCH ? BAD_CNT :
								   BAD_F);
		lens[0] = (u32)strlen(key);
		b->keys = PTR(key);
		b->lens = PTR(lens);
		b->results = PTR(results);
		b->keys_bytes = lens[0];
		b->count = 1;
		break;
	}
	}
}

static void test_badioctl(void)
{
	static const struct {
		unsigned long cmd;
		const char *what;
	} unknown[] = {
		{ _IO(KBLOOM_IOC_MAGIC, 0x7f), "_IO(KBLOOM_IOC_MAGIC, 0x7f)" },
		{ _IOWR(KBLOOM_IOC_MAGIC, 0x7f, struct kbloom_key),
		  "_IOWR(KBLOOM_IOC_MAGIC, 0x7f, kbloom_key)" },
		/* Right nr, wrong size/direction: the full number counts. */
		{ _IOWR(KBLOOM_IOC_MAGIC, 0x10, struct kbloom_info),
		  "ADD's nr with kbloom_info's size" },
		{ _IOR(KBLOOM_IOC_MAGIC, 0x04, struct kbloom_info),
		  "INFO's nr as _IOR" },
		{ _IO(KBLOOM_IOC_MAGIC, 0x00), "VERSION's nr as _IO" },
		{ _IOWR(0x42, 0x01, struct kbloom_create),
		  "foreign magic 0x42 with CREATE's nr and size" },
		{ _IOR(0xBE, 0x00, struct kbloom_version),
		  "foreign magic 0xBE with VERSION's nr and size" },
	};
	u64 argbuf[512];	/* zeroed, big enough for any struct */
	unsigned char results[8];
	struct kbloom_info info;
	u32 lens[1], res32;
	char key[32];
	void *hole;
	long before;
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(unknown); i++) {
		memset(argbuf, 0, sizeof(argbuf));
		err = ioc(g_fd, unknown[i].cmd, argbuf);
		check_err(err, ENOTTY, "badioctl: unknown command %s",
			  unknown[i].what);
	}

	cleanup(BAD_F);
	cleanup(BAD_NEW);
	if (!bad_setup())
		goto out;

	for (i = 0; i < ARRAY_SIZE(all_cmds); i++) {
		err = ioc(g_fd, all_cmds[i].cmd, NULL);
		check_err(err, EFAULT, "badioctl: %s with a NULL argument",
			  all_cmds[i].name);
	}
	hole = unmapped_page();
	if (hole) {
		for (i = 0; i < ARRAY_SIZE(all_cmds); i++) {
			err = ioc(g_fd, all_cmds[i].cmd, hole);
			check_err(err, EFAULT,
				  "badioctl: %s with an unmapped argument",
				  all_cmds[i].name);
		}
	}
	/* Nothing above may have destroyed or cleared the filter. */
	{
		u32 res;

		err = kb_skey(g_fd, KBLOOM_IOC_QUERY, BAD_F, BAD_SENTINEL,
			      &res);
		check(err == 0 && res == 1, "sentinel lost",
		      "badioctl: filter intact after the EFAULT calls");
	}

	/* Unknown create flags. */
	{
		/* 1 and 2 are COUNTING and LIKE now: see the merge group. */
		static const u32 bad_flags[] = {
			1u << 2, 0x80000000u, KBLOOM_CREATE_COUNTING | 1u << 2,
		};

		for (i = 0; i < ARRAY_SIZE(bad_flags); i++) {
			struct kbloom_create c;
			struct kbloom_info info;

			memset(&c, 0, sizeof(c));
			set_name(c.name, BAD_NEW);
			c.bits = 1024;
			c.hashes = 3;
			c.flags = bad_flags[i];
			err = ioc(g_fd, KBLOOM_IOC_CREATE, &c);
			check_err(err, EINVAL,
				  "badioctl: create with flags 0x%x",
				  bad_flags[i]);
			err = kb_info(g_fd, BAD_NEW, &info);
			check_err(err, ENOENT,
				  "badioctl: flags 0x%x created nothing",
				  bad_flags[i]);
			cleanup(BAD_NEW);
		}
	}

	/* Unknown hash schemes (was reserved0; 0 is the default). */
	{
		static const u32 bad_schemes[] = { 3, 0x80000000u, 0xffffffffu };

		for (i = 0; i < ARRAY_SIZE(bad_schemes); i++) {
			struct kbloom_create c;
			struct kbloom_info info;

			memset(&c, 0, sizeof(c));
			set_name(c.name, BAD_NEW);
			c.bits = 1024;
			c.hashes = 3;
			c.hash_scheme = bad_schemes[i];
			err = ioc(g_fd, KBLOOM_IOC_CREATE, &c);
			check_err(err, EINVAL,
				  "badioctl: create with hash_scheme 0x%x",
				  bad_schemes[i]);
			err = kb_info(g_fd, BAD_NEW, &info);
			check_err(err, ENOENT,
				  "badioctl: hash_scheme 0x%x created nothing",
				  bad_schemes[i]);
			cleanup(BAD_NEW);
		}
	}

	/* Each reserved field in turn, in an otherwise valid call. */
	for (i = 0; i < ARRAY_SIZE(rsv_cases); i++) {
		const struct rsv_case *rc = &rsv_cases[i];
		unsigned char *field = (unsigned char *)argbuf + rc->off;
		struct kbloom_info info;
		u32 sres = 0, kres = 0;
		int e1, e2;

		snprintf(key, sizeof(key), "rsv-%zu", i);
		/*
		 * Give the key a place where a wrongly accepted call would
		 * show: in BAD_CNT for REMOVE (it must stay), in BAD_SRC
		 * for MERGE (it must not reach BAD_F).
		 */
		if (rc->cmd == KBLOOM_IOC_REMOVE ||
		    rc->cmd == KBLOOM_IOC_REMOVE_BATCH)
			check_ok(kb_skey(g_fd, KBLOOM_IOC_ADD, BAD_CNT, key,
					 NULL),
				 "badioctl: add %s to %s", key, BAD_CNT);
		if (rc->cmd == KBLOOM_IOC_MERGE)
			check_ok(kb_skey(g_fd, KBLOOM_IOC_ADD, BAD_SRC, key,
					 NULL),
				 "badioctl: add %s to %s", key, BAD_SRC);
		bad_build(rc->cmd, argbuf, key, lens, results);
		if (rc->size == 1) {
			*field = 'x';
		} else if (rc->size == sizeof(u32)) {
			u32 v = 1;

			memcpy(field, &v, sizeof(v));
		} else {
			/* The top bit: catches checks that truncate. */
			u64 v = 1ULL << 63;

			memcpy(field, &v, sizeof(v));
		}
		err = ioc(g_fd, rc->cmd, argbuf);
		check_err(err, EINVAL, "badioctl: %s with non-zero %s",
			  rc->cmd_name, rc->field);

		/*
		 * A rejected call must have had no effect: the filter still
		 * exists with its sentinel, the key was not added and no
		 * new filter appeared.
		 */
		e1 = kb_skey(g_fd, KBLOOM_IOC_QUERY, BAD_F, BAD_SENTINEL,
			     &sres);
		e2 = kb_skey(g_fd, KBLOOM_IOC_QUERY, BAD_F, key, &kres);
		check(e1 == 0 && sres == 1 && e2 == 0 && kres == 0 &&
		      kb_info(g_fd, BAD_NEW, &info) == ENOENT,
		      "the rejected call changed state",
		      "badioctl: rejected %s %s had no effect",
		      rc->cmd_name, rc->field);
		if (rc->cmd == KBLOOM_IOC_REMOVE ||
		    rc->cmd == KBLOOM_IOC_REMOVE_BATCH) {
			int e3 = kb_skey(g_fd, KBLOOM_IOC_QUERY, BAD_CNT, key,
					 &kres);

			check(e3 == 0 && kres == 1, "the key was removed",
			      "badioctl: rejected %s %s removed nothing",
			      rc->cmd_name, rc->field);
		}
		if (e1 == ENOENT || (e1 == 0 && sres != 1)) {
			cleanup(BAD_F);
			if (!bad_setup())
				goto out;
		}
		cleanup(BAD_NEW);
	}

	/* LIST with room but no buffer must fault (one filter exists). */
	{
		struct kbloom_list l;

		memset(&l, 0, sizeof(l));
		l.count = 1;
		err = ioc(g_fd, KBLOOM_IOC_LIST, &l);
		check_err(err, EFAULT, "badioctl: LIST count 1 names NULL");
		if (hole) {
			memset(&l, 0, sizeof(l));
			l.count = 1;
			l.names = PTR(hole);
			err = ioc(g_fd, KBLOOM_IOC_LIST, &l);
			check_err(err, EFAULT,
				  "badioctl: LIST names unmapped");
		}
	}

	/* Pointers inside the new commands' arguments. */
	{
		unsigned char *bufs[2] = { NULL, hole };
		const char *how[2] = { "NULL", "unmapped" };
		struct kbloom_image im;
		size_t j;

		for (j = 0; j < 2; j++) {
			if (j == 1 && !hole)
				break;
			err = kb_skey(g_fd, KBLOOM_IOC_ADD, BAD_CNT, "ptrkey",
				      NULL);
			check_ok(err, "badioctl: add ptrkey to %s", BAD_CNT);
			err = kb_key(g_fd, KBLOOM_IOC_REMOVE, BAD_CNT, bufs[j],
				     6, NULL);
			check_err(err, EFAULT, "badioctl: REMOVE key %s",
				  how[j]);
			lens[0] = 6;
			err = kb_batch(g_fd, KBLOOM_IOC_REMOVE_BATCH, BAD_CNT,
				       bufs[j], lens, results, 6, 1, NULL);
			check_err(err, EFAULT,
				  "badioctl: REMOVE_BATCH keys %s", how[j]);
			err = kb_batch(g_fd, KBLOOM_IOC_REMOVE_BATCH, BAD_CNT,
				       "ptrkey", (u32 *)bufs[j], results, 6, 1,
				       NULL);
			check_err(err, EFAULT,
				  "badioctl: REMOVE_BATCH lens %s", how[j]);
			err = kb_skey(g_fd, KBLOOM_IOC_QUERY, BAD_CNT, "ptrkey",
				      &res32);
			check(err == 0 && res32 == 1, "ptrkey removed",
			      "badioctl: faulting REMOVE calls kept the key (%s)",
			      how[j]);
			if (j == 1) {
				/*
				 * results NULL is legal, so only unmapped.
				 * Whether the key went before the result
				 * failed to copy is not specified: a key of
				 * its own, and no check of it afterwards.
				 */
				lens[0] = 6;
				kb_skey(g_fd, KBLOOM_IOC_ADD, BAD_CNT, "reskey",
					NULL);
				err = kb_batch(g_fd, KBLOOM_IOC_REMOVE_BATCH,
					       BAD_CNT, "reskey", lens, hole,
					       6, 1, NULL);
				check_err(err, EFAULT,
					  "badioctl: REMOVE_BATCH results unmapped");
			}

			err = kb_export(g_fd, BAD_F, bufs[j],
					sizeof(bad_payload), &im);
			check_err(err, EFAULT, "badioctl: EXPORT payload %s",
				  how[j]);
			im = bad_image;
			set_name(im.name, BAD_NEW);
			im.payload = PTR(bufs[j]);
			err = ioc(g_fd, KBLOOM_IOC_IMPORT, &im);
			check_err(err, EFAULT, "badioctl: IMPORT payload %s",
				  how[j]);
			err = kb_info(g_fd, BAD_NEW, &info);
			check_err(err, ENOENT,
				  "badioctl: faulting IMPORT created nothing (%s)",
				  how[j]);
		}
	}

	/* Unknown commands and bad pointers created nothing. */
	before = kb_count(g_fd);
	check(before >= 1, "LIST failed or lost " BAD_F,
	      "badioctl: LIST still counts the test filter");
out:
	cleanup(BAD_F);
	cleanup(BAD_NEW);
	cleanup(BAD_SRC);
	cleanup(BAD_CNT);
}

/* ------------------------------------------------------------------ */
/* Group: create                                                      */
/* ------------------------------------------------------------------ */

/* m = ceil(-n ln(p) / (ln 2)^2), the header's formula, in doubles. */
static u64 expect_bits(u64 n, u32 fpr_ppb)
{
	double p = (double)fpr_ppb / KBLOOM_FPR_ONE;

	return (u64)ceil(-(double)n * log(p) / (M_LN2 * M_LN2));
}

static void check_info_basic(const char *name, u64 bits, u32 hashes,
			     u64 capacity, u32 fpr)
{
	struct kbloom_info info;
	int err;

	memset(&info, 0xa5, sizeof(info));
	err = kb_info(g_fd, name, &info);
	if (!check_ok(err, "create: INFO %s", name))
		return;
	check_u64(info.bits, bits, "create: INFO %s bits", name);
	check_u64(info.hashes, hashes, "create: INFO %s hashes", name);
	check_u64(info.capacity, capacity, "create: INFO %s capacity", name);
	check_u64(info.fpr_ppb, fpr, "create: INFO %s fpr_ppb", name);
	check_u64(info.flags, 0, "create: INFO %s flags", name);
	check_u64(info.hash_scheme, g_scheme,
		  "create: INFO %s hash_scheme (the default)", name);
	check(info.bits_set == 0 && info.adds == 0 && info.queries == 0 &&
	      info.hits == 0, "statistics not zero",
	      "create: INFO %s fresh statistics zero", name);
	check(info.memory_bytes >= (bits + 7) / 8, "smaller than the bitmap",
	      "create: INFO %s memory_bytes >= bits/8", name);
	check_u64(info.saturated, 0, "create: INFO %s saturated 0 (plain)",
		  name);
	check(!info.window_ms && !info.generations && !info.rotations,
	      "non-zero window fields",
	      "create: INFO %s window_ms, generations, rotations zero (not windowed)",
	      name);
}

/* Creation that must fail with EINVAL; undo it if it did not. */
static void create_einval(const char *name, u64 bits, u32 hashes, u64 cap,
			  u32 fpr, const char *what)
{
	int err = kb_create(g_fd, name, bits, hashes, cap, fpr, NULL);

	check_err(err, EINVAL, "create: %s", what);
	if (err == 0 && strlen(name) < KBLOOM_NAME_MAX)
		cleanup(name);
}

static void test_create(void)
{
	static const char *const created[] = {
		"create_a", "create_cap1", "create_cap2", "create_b64",
		"create_h1", "create_h32", "create_dup", "create_ok-._9",
		"create_bad", "create_huge", "create_twice", "Z",
	};
	static const char *const bad_names[] = {
		"", ".hidden", "a b", "x/y", "caf\xc3\xa9", "tab\there",
		"\x80", "a:b",
	};
	char long31[KBLOOM_NAME_MAX], long32[KBLOOM_NAME_MAX + 1];
	char (*names)[KBLOOM_NAME_MAX] = NULL;
	struct kbloom_create c;
	struct kbloom_info info;
	long before, after;
	u64 want;
	u32 res;
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(created); i++)
		cleanup(created[i]);

	/* By bits and hashes. */
	err = kb_create(g_fd, "create_a", 10000, 3, 0, 0, &c);
	if (check_ok(err, "create: by bits 10000 hashes 3")) {
		check_u64(c.bits, 10000, "create: bits written back");
		check_u64(c.hashes, 3, "create: hashes written back");
		check_info_basic("create_a", 10000, 3, 0, 0);
	}

	/* By capacity and fpr: 1e6 keys at 1%. */
	want = expect_bits(1000000, 10000000);
	err = kb_create(g_fd, "create_cap1", 0, 0, 1000000, 10000000, &c);
	if (check_ok(err, "create: capacity 1000000 fpr 1%%")) {
		check_range(c.bits, want - 1, want + 1,
			    "create: capacity 1e6 at 1%% gives m = ceil(-n ln p / ln2^2)");
		check_u64(c.hashes, 7, "create: capacity 1e6 at 1%% gives k 7");
		check_info_basic("create_cap1", c.bits, c.hashes, 1000000,
				 10000000);
	}

	/* 1000 keys at 0.1%: m about 14378, k = round(14.378 ln 2) = 10. */
	want = expect_bits(1000, 1000000);
	err = kb_create(g_fd, "create_cap2", 0, 0, 1000, 1000000, &c);
	if (check_ok(err, "create: capacity 1000 fpr 0.1%%")) {
		check_range(c.bits, want - 1, want + 1,
			    "create: capacity 1000 at 0.1%% bits (expected %llu)",
			    (unsigned long long)want);
		check_range(c.bits, 14377, 14379,
			    "create: capacity 1000 at 0.1%% bits near 14378");
		check_u64(c.hashes, 10,
			  "create: capacity 1000 at 0.1%% gives k 10");
		check_info_basic("create_cap2", c.bits, c.hashes, 1000,
				 1000000);
	}

	/* Size and hash-count limits. */
	create_einval("create_bad", 0, 7, 0, 0, "bits 0 and capacity 0");
	create_einval("create_bad", 0, 0, 0, 10000000,
		      "bits 0, capacity 0, fpr set");
	create_einval("create_bad", 63, 7, 0, 0, "bits 63 (below MIN_BITS)");
	err = kb_create(g_fd, "create_b64", 64, 7, 0, 0, &c);
	if (check_ok(err, "create: bits 64 (MIN_BITS)"))
		check_info_basic("create_b64", 64, 7, 0, 0);
	create_einval("create_bad", KBLOOM_MAX_BITS + 1, 7, 0, 0,
		      "bits MAX_BITS + 1");
	create_einval("create_bad", 1024, 0, 0, 0,
		      "hashes 0 with bits and no capacity");
	create_einval("create_bad", 1024, KBLOOM_MAX_HASHES + 1, 0, 0,
		      "hashes 33");
	err = kb_create(g_fd, "create_h1", 1024, 1, 0, 0, NULL);
	if (check_ok(err, "create: hashes 1"))
		check_info_basic("create_h1", 1024, 1, 0, 0);
	err = kb_create(g_fd, "create_h32", 1024, KBLOOM_MAX_HASHES, 0, 0,
			NULL);
	if (check_ok(err, "create: hashes 32"))
		check_info_basic("create_h32", 1024, KBLOOM_MAX_HASHES, 0, 0);

	/* Both ways of sizing at once. */
	create_einval("create_bad", 1024, 3, 1000, 10000000,
		      "bits+hashes and capacity+fpr_ppb together");
	create_einval("create_bad", 1024, 0, 1000, 10000000,
		      "bits and capacity+fpr_ppb together");
	create_einval("create_bad", 1024, 3, 0, 10000000,
		      "bits+hashes and fpr_ppb together");
	/* fpr_ppb out of range with a capacity. */
	create_einval("create_bad", 0, 0, 1000, 0,
		      "capacity with fpr_ppb 0");
	create_einval("create_bad", 0, 0, 1000, KBLOOM_FPR_ONE,
		      "capacity with fpr_ppb FPR_ONE");
	create_einval("create_bad", 0, 0, 1000, KBLOOM_FPR_ONE + 1,
		      "capacity with fpr_ppb FPR_ONE + 1");
	err = kb_info(g_fd, "create_bad", &info);
	check_err(err, ENOENT, "create: rejected creates left nothing");

	/* A taken name: EEXIST, and the existing filter is untouched. */
	err = kb_create(g_fd, "create_dup", 1 << 16, 7, 0, 0, NULL);
	if (check_ok(err, "create: create_dup")) {
		err = kb_skey(g_fd, KBLOOM_IOC_ADD, "create_dup", "dupkey",
			      NULL);
		check_ok(err, "create: add a key to create_dup");
		err = kb_create(g_fd, "create_dup", 2048, 3, 0, 0, NULL);
		check_err(err, EEXIST, "create: duplicate name");
		err = kb_create(g_fd, "create_dup", 0, 0, 100, 10000000,
			    NULL);
		check_err(err, EEXIST, "create: duplicate name, by capacity");
		err = kb_skey(g_fd, KBLOOM_IOC_QUERY, "create_dup", "dupkey",
			      &res);
		check(err == 0 && res == 1, "key lost",
		      "create: duplicate create kept the existing keys");
		err = kb_info(g_fd, "create_dup", &info);
		check(err == 0 && info.bits == 1 << 16 && info.hashes == 7 &&
		      info.adds == 1, "INFO changed or failed",
		      "create: duplicate create kept size and statistics");
	}

	/* Names. */
	memset(long31, 'n', sizeof(long31));
	memcpy(long31, "create_", 7);
	long31[KBLOOM_NAME_MAX - 1] = '\0';
	memset(long32, 'n', sizeof(long32));
	long32[KBLOOM_NAME_MAX] = '\0';
	cleanup(long31);

	err = kb_create(g_fd, "create_ok-._9", 1024, 3, 0, 0, NULL);
	check_ok(err, "create: name with - . _ and digits");
	err = kb_create(g_fd, "Z", 1024, 3, 0, 0, NULL);
	check_ok(err, "create: one-character name");
	err = kb_create(g_fd, long31, 1024, 3, 0, 0, NULL);
	if (check_ok(err, "create: 31-character name")) {
		err = kb_info(g_fd, long31, &info);
		check_ok(err, "create: INFO by the 31-character name");
	}

	before = kb_count(g_fd);
	for (i = 0; i < ARRAY_SIZE(bad_names); i++) {
		char shown[64];
		size_t j, o = 0;

		/* Show the name escaped: it may hold control bytes. */
		for (j = 0; bad_names[i][j] && o + 5 < sizeof(shown); j++) {
			unsigned char ch = (unsigned char)bad_names[i][j];

			if (ch >= 0x21 && ch < 0x7f)
				shown[o++] = (char)ch;
			else
				o += (size_t)snprintf(shown + o,
						      sizeof(shown) - o,
						      "\\x%02x", ch);
		}
		shown[o] = '\0';
		err = kb_create(g_fd, bad_names[i], 1024, 3, 0, 0, NULL);
		check_err(err, EINVAL, "create: bad name \"%s\"", shown);
		if (err == 0)
			cleanup(bad_names[i]);
	}
	err = kb_create(g_fd, long32, 1024, 3, 0, 0, NULL);
	check_err(err, EINVAL, "create: 32-character name with no NUL");
	after = kb_count(g_fd);
	check(before >= 0 && after == before, "filter count changed",
	      "create: bad names created nothing (LIST count unchanged)");

	/* LIST: every name, in name order, and truncation. */
	before = kb_count(g_fd);
	if (before >= 3) {
		u32 room = (u32)before + 8, n;
		struct kbloom_list l;
		bool sorted = true, terminated = true;
		int found = 0;

		names = calloc(room, KBLOOM_NAME_MAX);
		if (!check(names != NULL, "out of memory", "create: alloc"))
			goto skip_list;
		/* 0xa5 is no valid name byte: shows what was not written. */
		memset(names, 0xa5, (size_t)room * KBLOOM_NAME_MAX);
		memset(&l, 0, sizeof(l));
		l.names = PTR(names);
		l.count = room;
		err = ioc(g_fd, KBLOOM_IOC_LIST, &l);
		if (!check_ok(err, "create: LIST with room"))
			goto skip_list;
		check_u64(l.count, (u64)before, "create: LIST count");
		n = l.count < room ? l.count : room;
		for (i = 0; i < n; i++) {
			if (!memchr(names[i], '\0', KBLOOM_NAME_MAX)) {
				terminated = false;
				break;
			}
			if (i && strcmp(names[i - 1], names[i]) >= 0)
				sorted = false;
			if (!strcmp(names[i], "create_a") ||
			    !strcmp(names[i], "Z") ||
			    !strcmp(names[i], long31))
				found++;
		}
		check(terminated, "a name without NUL",
		      "create: LIST names NUL-terminated");
		check(terminated && sorted, "not in strictly ascending order",
		      "create: LIST in name order");
		check(found == 3, "a created name is missing",
		      "create: LIST holds the created names");
		check(n >= room || (unsigned char)names[n][0] == 0xa5,
		      "wrote past count",
		      "create: LIST wrote only count names");

		memset(names, 0xa5, (size_t)room * KBLOOM_NAME_MAX);
		memset(&l, 0, sizeof(l));
		l.names = PTR(names);
		l.count = 1;
		err = ioc(g_fd, KBLOOM_IOC_LIST, &l);
		if (check_ok(err, "create: LIST with room for one")) {
			check_u64(l.count, (u64)before,
				  "create: short LIST reports the full count");
			check(memchr(names[0], '\0', KBLOOM_NAME_MAX) &&
			      (unsigned char)names[1][0] == 0xa5 &&
			      (unsigned char)names[1][31] == 0xa5,
			      "first slot bad or second slot written",
			      "create: short LIST wrote exactly one name");
		}
	} else {
		check(false, "fewer than 3 filters", "create: LIST");
	}
skip_list:
	free(names);

	/* Unknown names. */
	{
		static const unsigned long name_cmds[] = {
			KBLOOM_IOC_DESTROY, KBLOOM_IOC_CLEAR,
		};
		static const unsigned long key_cmds[] = {
			KBLOOM_IOC_ADD, KBLOOM_IOC_QUERY,
			KBLOOM_IOC_TEST_AND_ADD,
		};
		static const unsigned long batch_cmds[] = {
			KBLOOM_IOC_ADD_BATCH, KBLOOM_IOC_QUERY_BATCH,
			KBLOOM_IOC_TEST_AND_ADD_BATCH,
		};
		const char *ghost = "create_nonexistent";
		unsigned char bm[1];
		u32 len = 3;

		for (i = 0; i < ARRAY_SIZE(name_cmds); i++) {
			err = kb_name_cmd(g_fd, name_cmds[i], ghost);
			check_err(err, ENOENT, "create: %s unknown name",
				  i ? "CLEAR" : "DESTROY");
		}
		err = kb_info(g_fd, ghost, &info);
		check_err(err, ENOENT, "create: INFO unknown name");
		for (i = 0; i < ARRAY_SIZE(key_cmds); i++) {
			err = kb_skey(g_fd, key_cmds[i], ghost, "abc", NULL);
			check_err(err, ENOENT, "create: %s unknown name",
				  all_cmds[6 + i].name);
		}
		for (i = 0; i < ARRAY_SIZE(batch_cmds); i++) {
			err = kb_batch(g_fd, batch_cmds[i], ghost, "abc",
				       &len, bm, 3, 1, NULL);
			check_err(err, ENOENT, "create: %s unknown name",
				  all_cmds[9 + i].name);
		}
	}

	/* Destroy twice. */
	err = kb_create(g_fd, "create_twice", 1024, 3, 0, 0, NULL);
	if (check_ok(err, "create: create_twice")) {
		err = kb_destroy(g_fd, "create_twice");
		check_ok(err, "create: first destroy");
		err = kb_destroy(g_fd, "create_twice");
		check_err(err, ENOENT, "create: second destroy");
		err = kb_info(g_fd, "create_twice", &info);
		check_err(err, ENOENT, "create: destroyed filter gone");
	}

	/* Beyond the memory budget: 2^36 bits is 8 GiB, the VM has ~2. */
	before = kb_count(g_fd);
	err = kb_create(g_fd, "create_huge", KBLOOM_MAX_BITS, 7, 0, 0, NULL);
	check_err2(err, ENOSPC, EFBIG, "create: MAX_BITS over the budget");
	after = kb_count(g_fd);
	check(before >= 0 && after == before, "filter count changed",
	      "create: over-budget create left nothing (LIST count)");
	err = kb_info(g_fd, "create_huge", &info);
	check_err(err, ENOENT, "create: over-budget filter not findable");

	for (i = 0; i < ARRAY_SIZE(created); i++)
		cleanup(created[i]);
	cleanup(long31);
}

/* ------------------------------------------------------------------ */
/* Group: keys                                                        */
/* ------------------------------------------------------------------ */

#define KEYS_F "keys_f"

static void test_keys(void)
{
	static const char *const absent[] = {
		"beta", "gamma", "alphA", "alpha ", "lpha",
	};
	static const unsigned char bin1[] = { 'a', 0, 'b', 0 };
	static const unsigned char bin2[] = { 'a', 0, 'c', 0 };
	u64 adds = 0, queries = 0, hits = 0;
	struct kbloom_info info;
	unsigned char *big = NULL;
	void *hole;
	u32 res;
	size_t i;
	int err;

	cleanup(KEYS_F);
	/* 1 Mbit, 7 hashes: a few keys make false positives negligible. */
	err = kb_create(g_fd, KEYS_F, 1 << 20, 7, 0, 0, NULL);
	if (!check_ok(err, "keys: create " KEYS_F))
		return;

	err = kb_skey(g_fd, KBLOOM_IOC_ADD, KEYS_F, "alpha", &res);
	if (check_ok(err, "keys: ADD alpha"))
		check_u64(res, 0, "keys: ADD writes result 0");
	adds++;
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, KEYS_F, "alpha", &res);
	if (check_ok(err, "keys: QUERY alpha"))
		check_u64(res, 1, "keys: QUERY of an added key is 1");
	queries++;
	hits++;
	for (i = 0; i < ARRAY_SIZE(absent); i++) {
		err = kb_skey(g_fd, KBLOOM_IOC_QUERY, KEYS_F, absent[i], &res);
		if (check_ok(err, "keys: QUERY \"%s\"", absent[i]))
			check_u64(res, 0, "keys: never-added \"%s\" is absent",
				  absent[i]);
		queries++;
	}

	err = kb_skey(g_fd, KBLOOM_IOC_TEST_AND_ADD, KEYS_F, "delta", &res);
	if (check_ok(err, "keys: TEST_AND_ADD delta (new)"))
		check_u64(res, 0, "keys: TEST_AND_ADD of a new key is 0");
	err = kb_skey(g_fd, KBLOOM_IOC_TEST_AND_ADD, KEYS_F, "delta", &res);
	if (check_ok(err, "keys: TEST_AND_ADD delta (again)"))
		check_u64(res, 1, "keys: TEST_AND_ADD the second time is 1");
	adds += 2;
	queries += 2;
	hits += 1;
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, KEYS_F, "delta", &res);
	if (check_ok(err, "keys: QUERY delta"))
		check_u64(res, 1, "keys: TEST_AND_ADD added the key");
	queries++;
	hits++;

	/* Lengths. */
	big = malloc(KBLOOM_KEY_MAX + 1);
	if (!check(big != NULL, "out of memory", "keys: alloc"))
		goto out;
	memset(big, 'k', KBLOOM_KEY_MAX + 1);
	err = kb_key(g_fd, KBLOOM_IOC_ADD, KEYS_F, big, 0, NULL);
	check_err(err, EINVAL, "keys: ADD len 0");
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, big, 0, NULL);
	check_err(err, EINVAL, "keys: QUERY len 0");
	err = kb_key(g_fd, KBLOOM_IOC_TEST_AND_ADD, KEYS_F, big, 0, NULL);
	check_err(err, EINVAL, "keys: TEST_AND_ADD len 0");
	err = kb_key(g_fd, KBLOOM_IOC_ADD, KEYS_F, big, KBLOOM_KEY_MAX + 1,
		     NULL);
	check_err(err, EINVAL, "keys: ADD len KEY_MAX + 1");
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, big, KBLOOM_KEY_MAX + 1,
		     NULL);
	check_err(err, EINVAL, "keys: QUERY len KEY_MAX + 1");
	err = kb_key(g_fd, KBLOOM_IOC_ADD, KEYS_F, big, KBLOOM_KEY_MAX, NULL);
	check_ok(err, "keys: ADD len KEY_MAX");
	adds++;
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, big, KBLOOM_KEY_MAX, &res);
	if (check_ok(err, "keys: QUERY len KEY_MAX"))
		check_u64(res, 1, "keys: KEY_MAX key present");
	queries++;
	hits++;
	/* The whole key is hashed: changing only its last byte matters. */
	big[KBLOOM_KEY_MAX - 1] = 'K';
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, big, KBLOOM_KEY_MAX, &res);
	if (check_ok(err, "keys: QUERY KEY_MAX key, last byte changed"))
		check_u64(res, 0, "keys: the last byte of a key is hashed");
	queries++;
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, big, KBLOOM_KEY_MAX - 1,
		     &res);
	if (check_ok(err, "keys: QUERY KEY_MAX key minus its last byte"))
		check_u64(res, 0, "keys: the length is part of the key");
	queries++;

	/* Bad key pointers. */
	err = kb_key(g_fd, KBLOOM_IOC_ADD, KEYS_F, NULL, 5, NULL);
	check_err(err, EFAULT, "keys: ADD key NULL");
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, NULL, 5, NULL);
	check_err(err, EFAULT, "keys: QUERY key NULL");
	err = kb_key(g_fd, KBLOOM_IOC_TEST_AND_ADD, KEYS_F, NULL, 5, NULL);
	check_err(err, EFAULT, "keys: TEST_AND_ADD key NULL");
	hole = unmapped_page();
	if (hole) {
		err = kb_key(g_fd, KBLOOM_IOC_ADD, KEYS_F, hole, 5, NULL);
		check_err(err, EFAULT, "keys: ADD key unmapped");
	}

	/* Binary keys: embedded NULs are part of the key. */
	err = kb_key(g_fd, KBLOOM_IOC_ADD, KEYS_F, bin1, sizeof(bin1), NULL);
	check_ok(err, "keys: ADD binary key a\\0b\\0");
	adds++;
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, bin1, sizeof(bin1), &res);
	if (check_ok(err, "keys: QUERY a\\0b\\0"))
		check_u64(res, 1, "keys: binary key present");
	queries++;
	hits++;
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, bin2, sizeof(bin2), &res);
	if (check_ok(err, "keys: QUERY a\\0c\\0"))
		check_u64(res, 0, "keys: bytes after a NUL are hashed");
	queries++;
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, bin1, 1, &res);
	if (check_ok(err, "keys: QUERY \"a\" (len 1)"))
		check_u64(res, 0, "keys: key is not cut at the NUL");
	queries++;

	/* Statistics, then CLEAR. */
	err = kb_info(g_fd, KEYS_F, &info);
	if (check_ok(err, "keys: INFO")) {
		check_u64(info.adds, adds, "keys: INFO adds");
		check_u64(info.queries, queries, "keys: INFO queries");
		check_u64(info.hits, hits, "keys: INFO hits");
		check_range(info.bits_set, 1, 7 * adds,
			    "keys: INFO bits_set in 1..k*adds");
	}
	err = kb_clear(g_fd, KEYS_F);
	if (check_ok(err, "keys: CLEAR")) {
		err = kb_info(g_fd, KEYS_F, &info);
		if (check_ok(err, "keys: INFO after CLEAR")) {
			check_u64(info.bits_set, 0, "keys: CLEAR zeroes bits_set");
			check_u64(info.adds, 0, "keys: CLEAR zeroes adds");
			check_u64(info.queries, 0, "keys: CLEAR zeroes queries");
			check_u64(info.hits, 0, "keys: CLEAR zeroes hits");
			check(info.bits == 1 << 20 && info.hashes == 7,
			      "size changed", "keys: CLEAR keeps bits, hashes");
		}
		err = kb_skey(g_fd, KBLOOM_IOC_QUERY, KEYS_F, "alpha", &res);
		if (check_ok(err, "keys: QUERY alpha after CLEAR"))
			check_u64(res, 0, "keys: CLEAR removed alpha");
		err = kb_skey(g_fd, KBLOOM_IOC_QUERY, KEYS_F, "delta", &res);
		if (check_ok(err, "keys: QUERY delta after CLEAR"))
			check_u64(res, 0, "keys: CLEAR removed delta");
		err = kb_info(g_fd, KEYS_F, &info);
		if (check_ok(err, "keys: INFO after the post-CLEAR queries"))
			check(info.queries == 2 && info.hits == 0,
			      "counters wrong",
			      "keys: counting restarts after CLEAR");
	}
out:
	free(big);
	cleanup(KEYS_F);
}

/* ------------------------------------------------------------------ */
/* Group: batch                                                       */
/* ------------------------------------------------------------------ */

#define BATCH_F		"batch_f"
#define BATCH_TAA	"batch_taa"
#define BATCH_ERR	"batch_err"
#define BATCH_N		100000u

/* Is key i of @ks present, by single QUERY? -1 on error (reported). */
static int query_one(const char *name, const void *key, u32 len)
{
	u32 res;
	int err = kb_key(g_fd, KBLOOM_IOC_QUERY, name, key, len, &res);

	if (err) {
		check_ok(err, "QUERY on %s", name);
		return -1;
	}
	return res == 1;
}

/* Ten fixed-size keys "<tag>-<i>" padded to 8 bytes, packed. */
static void make_keys8(char *buf, u32 *lens, const char *tag, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		char tmp[16];

		snprintf(tmp, sizeof(tmp), "%s-%u%s", tag, i, "________");
		memcpy(buf + 8 * i, tmp, 8);
		lens[i] = 8;
	}
}

static void batch_main(void)
{
	struct keyset a = { 0 }, b = { 0 };
	unsigned char *res = NULL;
	u64 adds = 0, queries = 0, hits = 0;
	struct kbloom_batch out;
	struct kbloom_create c;
	struct kbloom_info info;
	size_t rbytes = (BATCH_N + 7) / 8;
	u32 i, bad, fp = 0;
	double theory, rate;
	char detail[160];
	int err;

	err = kb_create(g_fd, BATCH_F, 0, 0, BATCH_N, 10000000, &c);
	if (!check_ok(err, "batch: create %s (capacity 100000, 1%%)",
		      BATCH_F))
		return;
	if (!keyset_gen(&a, BATCH_N, 1, 0, 64) ||
	    !keyset_gen(&b, BATCH_N, 2, 1, 64))
		goto out;
	res = malloc(rbytes);
	if (!check(res != NULL, "out of memory", "batch: alloc results"))
		goto out;

	memset(res, 0xff, rbytes);
	err = kb_batch(g_fd, KBLOOM_IOC_ADD_BATCH, BATCH_F, a.keys, a.lens,
		       res, a.bytes, a.count, &out);
	if (check_ok(err, "batch: ADD_BATCH of 100000 keys")) {
		check_u64(out.done, a.count, "batch: ADD_BATCH done");
		check_u64(out.hits, 0, "batch: ADD_BATCH hits 0");
		check_u64(bits_count(res, a.count), 0,
			  "batch: ADD_BATCH result bits all 0");
		adds += out.done;
	}

	memset(res, 0, rbytes);
	err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_F, a.keys, a.lens,
		       res, a.bytes, a.count, &out);
	if (check_ok(err, "batch: QUERY_BATCH of the added keys")) {
		check_u64(out.done, a.count, "batch: QUERY_BATCH done");
		check_u64(out.hits, a.count, "batch: QUERY_BATCH hits == count");
		bad = a.count - bits_count(res, a.count);
		snprintf(detail, sizeof(detail), "%u false negatives", bad);
		check(bad == 0, detail, "batch: every added key answers 1");
		queries += out.done;
		hits += out.hits;
	}

	/* Some of the batch-added keys, one at a time. */
	bad = 0;
	for (i = 0; i < a.count; i += 997) {
		int r = query_one(BATCH_F, a.keys + a.off[i], a.lens[i]);

		if (r != 1)
			bad++;
		queries++;
		hits += r == 1;
	}
	check_u64(bad, 0, "batch: single QUERY agrees with ADD_BATCH");

	memset(res, 0, rbytes);
	err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_F, b.keys, b.lens,
		       res, b.bytes, b.count, &out);
	if (check_ok(err, "batch: QUERY_BATCH of 100000 other keys")) {
		check_u64(out.done, b.count, "batch: QUERY_BATCH done");
		fp = bits_count(res, b.count);
		check_u64(out.hits, fp, "batch: hits == result bits set");
		queries += out.done;
		hits += out.hits;
		/* (1 - e^(-kn/m))^k with the size the kernel chose. */
		theory = pow(1.0 - exp(-(double)c.hashes * BATCH_N /
				       (double)c.bits), c.hashes);
		rate = (double)fp / b.count;
		snprintf(detail, sizeof(detail),
			 "measured %.4f%%, theory %.4f%% (m %llu k %u)",
			 rate * 100, theory * 100,
			 (unsigned long long)c.bits, c.hashes);
		printf("# batch: %s\n", detail);
		check(rate >= 0.005 && rate <= 0.015, detail,
		      "batch: false-positive rate within 0.5%%..1.5%%");
		check(rate >= theory * 0.5 && rate <= theory * 1.5, detail,
		      "batch: false-positive rate within 50%% of theory");
	}

	/* results == 0: only hits wanted. */
	err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_F, a.keys, a.lens,
		       NULL, a.bytes, a.count, &out);
	if (check_ok(err, "batch: QUERY_BATCH with results 0")) {
		check_u64(out.done, a.count, "batch: results 0 done");
		check_u64(out.hits, a.count, "batch: results 0 hits");
		queries += out.done;
		hits += out.hits;
	}

	err = kb_info(g_fd, BATCH_F, &info);
	if (check_ok(err, "batch: INFO")) {
		check_u64(info.adds, adds, "batch: INFO adds");
		check_u64(info.queries, queries, "batch: INFO queries");
		check_u64(info.hits, hits, "batch: INFO hits");
		check_range(info.bits_set, 1, (u64)c.hashes * adds,
			    "batch: INFO bits_set in 1..k*n");
	}
out:
	free(res);
	keyset_free(&a);
	keyset_free(&b);
	cleanup(BATCH_F);
}

static void batch_taa(void)
{
	char keys[12 * 8];
	u32 lens[12], i;
	unsigned char res[2];
	struct kbloom_batch out;
	struct kbloom_info info;
	u32 bad;
	int err;

	err = kb_create(g_fd, BATCH_TAA, 1 << 20, 7, 0, 0, NULL);
	if (!check_ok(err, "batch: create %s", BATCH_TAA))
		return;
	/* Ten new keys, then keys 0 and 3 again within the same batch. */
	make_keys8(keys, lens, "taa", 10);
	memcpy(keys + 80, keys, 8);
	memcpy(keys + 88, keys + 24, 8);
	lens[10] = lens[11] = 8;

	memset(res, 0, sizeof(res));
	err = kb_batch(g_fd, KBLOOM_IOC_TEST_AND_ADD_BATCH, BATCH_TAA, keys,
		       lens, res, sizeof(keys), 12, &out);
	if (check_ok(err, "batch: TEST_AND_ADD_BATCH of 10 new + 2 repeats")) {
		check_u64(out.done, 12, "batch: TEST_AND_ADD_BATCH done");
		check_u64(out.hits, 2, "batch: TEST_AND_ADD_BATCH hits 2");
		check(bits_count(res, 10) == 0, "a new key answered 1",
		      "batch: TEST_AND_ADD_BATCH new keys answer 0");
		check(bit_get(res, 10) && bit_get(res, 11),
		      "a repeat answered 0",
		      "batch: a key repeated later in the batch answers 1");
	}
	memset(res, 0, sizeof(res));
	err = kb_batch(g_fd, KBLOOM_IOC_TEST_AND_ADD_BATCH, BATCH_TAA, keys,
		       lens, res, sizeof(keys), 12, &out);
	if (check_ok(err, "batch: TEST_AND_ADD_BATCH again")) {
		check_u64(out.hits, 12, "batch: second TEST_AND_ADD_BATCH hits");
		check_u64(bits_count(res, 12), 12,
			  "batch: second TEST_AND_ADD_BATCH all 1");
	}
	bad = 0;
	for (i = 0; i < 10; i++)
		bad += query_one(BATCH_TAA, keys + 8 * i, 8) != 1;
	check_u64(bad, 0, "batch: TEST_AND_ADD_BATCH added every key");
	err = kb_info(g_fd, BATCH_TAA, &info);
	if (check_ok(err, "batch: INFO %s", BATCH_TAA)) {
		check_u64(info.adds, 24, "batch: TEST_AND_ADD counts as adds");
		check_u64(info.queries, 34,
			  "batch: TEST_AND_ADD counts as queries");
		check_u64(info.hits, 24, "batch: TEST_AND_ADD hits counted");
	}
	cleanup(BATCH_TAA);
}

static void batch_errors(void)
{
	char keys[10 * 8];
	u32 lens[10], *mlens = NULL, i;
	unsigned char res[2], *mkeys = NULL, *mres = NULL;
	struct kbloom_batch out;
	struct kbloom_info info;
	u64 adds_before;
	void *hole;
	u32 bad;
	int err;

	err = kb_create(g_fd, BATCH_ERR, 1 << 20, 7, 0, 0, NULL);
	if (!check_ok(err, "batch: create %s", BATCH_ERR))
		return;

	make_keys8(keys, lens, "c0", 10);
	err = kb_batch(g_fd, KBLOOM_IOC_ADD_BATCH, BATCH_ERR, keys, lens, res,
		       sizeof(keys), 0, NULL);
	check_err(err, EINVAL, "batch: ADD_BATCH count 0");
	err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_ERR, keys, lens,
		       res, sizeof(keys), 0, NULL);
	check_err(err, EINVAL, "batch: QUERY_BATCH count 0");

	/*
	 * count BATCH_MAX + 1 with real buffers behind it, so that E2BIG is
	 * the only possible complaint; and BATCH_MAX itself must work.
	 */
	mlens = malloc(((size_t)KBLOOM_BATCH_MAX + 1) * sizeof(u32));
	mkeys = malloc((size_t)KBLOOM_BATCH_MAX + 1);
	mres = malloc(((size_t)KBLOOM_BATCH_MAX + 8) / 8);
	if (check(mlens && mkeys && mres, "out of memory",
		  "batch: alloc BATCH_MAX buffers")) {
		for (i = 0; i <= KBLOOM_BATCH_MAX; i++) {
			mlens[i] = 1;
			mkeys[i] = (unsigned char)i;
		}
		err = kb_batch(g_fd, KBLOOM_IOC_ADD_BATCH, BATCH_ERR, mkeys,
			       mlens, mres, KBLOOM_BATCH_MAX + 1,
			       KBLOOM_BATCH_MAX + 1, NULL);
		check_err(err, E2BIG, "batch: ADD_BATCH count BATCH_MAX + 1");
		err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_ERR, mkeys,
			       mlens, mres, KBLOOM_BATCH_MAX + 1,
			       KBLOOM_BATCH_MAX + 1, NULL);
		check_err(err, E2BIG, "batch: QUERY_BATCH count BATCH_MAX + 1");
		err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_ERR, mkeys,
			       mlens, mres, KBLOOM_BATCH_MAX,
			       KBLOOM_BATCH_MAX, &out);
		if (check_ok(err, "batch: QUERY_BATCH count BATCH_MAX"))
			check_u64(out.done, KBLOOM_BATCH_MAX,
				  "batch: BATCH_MAX keys all done");
	}
	/* keys_bytes over the limit; the lengths themselves are fine. */
	err = kb_batch(g_fd, KBLOOM_IOC_ADD_BATCH, BATCH_ERR, keys, lens, res,
		       KBLOOM_BATCH_BYTES_MAX + 1, 1, NULL);
	check_err(err, E2BIG, "batch: ADD_BATCH keys_bytes BATCH_BYTES_MAX + 1");
	err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_ERR, keys, lens,
		       res, KBLOOM_BATCH_BYTES_MAX + 1, 1, NULL);
	check_err(err, E2BIG,
		  "batch: QUERY_BATCH keys_bytes BATCH_BYTES_MAX + 1");

	err = kb_info(g_fd, BATCH_ERR, &info);
	if (!check_ok(err, "batch: INFO %s", BATCH_ERR))
		goto out;
	adds_before = info.adds;
	check_u64(adds_before, 0, "batch: rejected batches added nothing");

	/* A zero length at index 5: keys 0..4 added, 5.. not. */
	make_keys8(keys, lens, "zl", 10);
	lens[5] = 0;
	memset(res, 0xff, sizeof(res));
	err = kb_batch(g_fd, KBLOOM_IOC_ADD_BATCH, BATCH_ERR, keys, lens, res,
		       sizeof(keys), 10, &out);
	if (check_err(err, EINVAL, "batch: zero length at index 5")) {
		check_u64(out.done, 5, "batch: zero length: done == 5");
		/* The last byte written is whole: bits from done on are 0. */
		check_u64(res[0], 0x00,
			  "batch: result byte of keys 0..7 written, bits 5..7 zero");
		check_u64(res[1], 0xff, "batch: result bytes after it untouched");
	}
	bad = 0;
	for (i = 0; i < 5; i++)
		bad += query_one(BATCH_ERR, keys + 8 * i, 8) != 1;
	check_u64(bad, 0, "batch: keys before the bad length were added");
	bad = 0;
	for (i = 6; i < 10; i++)
		bad += query_one(BATCH_ERR, keys + 8 * i, 8) != 0;
	check_u64(bad, 0, "batch: keys after the bad length were not added");

	/* A length over KEY_MAX at index 3. */
	{
		unsigned char *kb = calloc(1, 8 * 3 + KBLOOM_KEY_MAX + 1 + 8);
		u32 l2[5] = { 8, 8, 8, KBLOOM_KEY_MAX + 1, 8 };

		if (check(kb != NULL, "out of memory", "batch: alloc")) {
			make_keys8((char *)kb, l2, "km", 3);
			l2[3] = KBLOOM_KEY_MAX + 1;
			l2[4] = 8;
			err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_ERR,
				       kb, l2, res,
				       8 * 3 + KBLOOM_KEY_MAX + 1 + 8, 5,
				       &out);
			if (check_err(err, EINVAL,
				      "batch: length KEY_MAX + 1 at index 3"))
				check_u64(out.done, 3,
					  "batch: long key: done == 3");
		}
		free(kb);
	}

	/* Index 7's length runs past keys_bytes. */
	make_keys8(keys, lens, "ov", 10);
	err = kb_batch(g_fd, KBLOOM_IOC_ADD_BATCH, BATCH_ERR, keys, lens, res,
		       7 * 8 + 4, 10, &out);
	if (check_err(err, EINVAL, "batch: length past keys_bytes at index 7"))
		check_u64(out.done, 7, "batch: overrun: done == 7");
	bad = 0;
	for (i = 0; i < 7; i++)
		bad += query_one(BATCH_ERR, keys + 8 * i, 8) != 1;
	check_u64(bad, 0, "batch: keys before the overrun were added");
	bad = 0;
	for (i = 7; i < 10; i++)
		bad += query_one(BATCH_ERR, keys + 8 * i, 8) != 0;
	check_u64(bad, 0, "batch: keys from the overrun on were not added");

	err = kb_info(g_fd, BATCH_ERR, &info);
	if (check_ok(err, "batch: INFO after the partial batches"))
		check_u64(info.adds, adds_before + 5 + 7,
			  "batch: INFO adds counts only the done keys");

	/* Bad pointers. */
	hole = unmapped_page();
	make_keys8(keys, lens, "bp", 10);
	if (hole) {
		err = kb_batch(g_fd, KBLOOM_IOC_ADD_BATCH, BATCH_ERR, keys,
			       hole, res, sizeof(keys), 10, NULL);
		check_err(err, EFAULT, "batch: ADD_BATCH lens unmapped");
		err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_ERR, keys,
			       hole, res, sizeof(keys), 10, NULL);
		check_err(err, EFAULT, "batch: QUERY_BATCH lens unmapped");
		err = kb_batch(g_fd, KBLOOM_IOC_ADD_BATCH, BATCH_ERR, hole,
			       lens, res, sizeof(keys), 10, NULL);
		check_err(err, EFAULT, "batch: ADD_BATCH keys unmapped");
		err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_ERR, keys,
			       lens, hole, sizeof(keys), 10, NULL);
		check_err(err, EFAULT, "batch: QUERY_BATCH results unmapped");
		err = kb_batch(g_fd, KBLOOM_IOC_TEST_AND_ADD_BATCH, BATCH_ERR,
			       keys, lens, hole, sizeof(keys), 10, NULL);
		check_err(err, EFAULT,
			  "batch: TEST_AND_ADD_BATCH results unmapped");
	}
	err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_ERR, keys, NULL,
		       res, sizeof(keys), 10, NULL);
	check_err(err, EFAULT, "batch: QUERY_BATCH lens NULL");
	err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_ERR, NULL, lens,
		       res, sizeof(keys), 10, NULL);
	check_err(err, EFAULT, "batch: QUERY_BATCH keys NULL");
out:
	free(mlens);
	free(mkeys);
	free(mres);
	cleanup(BATCH_ERR);
}

static void test_batch(void)
{
	cleanup(BATCH_F);
	cleanup(BATCH_TAA);
	cleanup(BATCH_ERR);
	batch_main();
	batch_taa();
	batch_errors();
}

/* ------------------------------------------------------------------ */
/* Group: perm                                                        */
/* ------------------------------------------------------------------ */

#define PERM_F		"perm_f"
#define PERM_NEW	"perm_new"
#define NOBODY		65534

/* Runs in the child, which still holds the parent's O_RDWR fd. */
static void perm_child(int fd)
{
	struct kbloom_info info;
	int err, dfd;
	u32 res;

	if (!check(setgroups(0, NULL) == 0, strerror(errno),
		   "perm: child setgroups(0, NULL)") ||
	    !check(setresgid(NOBODY, NOBODY, NOBODY) == 0, strerror(errno),
		   "perm: child setresgid(65534)") ||
	    !check(setresuid(NOBODY, NOBODY, NOBODY) == 0, strerror(errno),
		   "perm: child setresuid(65534)"))
		return;

	/* The node is 0600 root: only the inherited fd gets us in. */
	dfd = open(g_dev, O_RDWR);
	err = dfd < 0 ? errno : 0;
	check_err(err, EACCES, "perm: unprivileged open(O_RDWR) of %s", g_dev);
	if (dfd >= 0)
		close(dfd);
	dfd = open(g_dev, O_RDONLY);
	err = dfd < 0 ? errno : 0;
	check_err(err, EACCES, "perm: unprivileged open(O_RDONLY) of %s",
		  g_dev);
	if (dfd >= 0)
		close(dfd);

	err = kb_create(fd, PERM_NEW, 1024, 3, 0, 0, NULL);
	check_err(err, EPERM, "perm: unprivileged CREATE");
	err = kb_destroy(fd, PERM_F);
	check_err(err, EPERM, "perm: unprivileged DESTROY");
	err = kb_clear(fd, PERM_F);
	check_err(err, EPERM, "perm: unprivileged CLEAR");

	err = kb_skey(fd, KBLOOM_IOC_QUERY, PERM_F, "rootkey", &res);
	if (check_ok(err, "perm: unprivileged QUERY"))
		check_u64(res, 1, "perm: unprivileged QUERY sees root's key");
	err = kb_skey(fd, KBLOOM_IOC_ADD, PERM_F, "childkey", NULL);
	check_ok(err, "perm: unprivileged ADD on the inherited fd");
	err = kb_info(fd, PERM_F, &info);
	check_ok(err, "perm: unprivileged INFO");
}

static void test_perm(void)
{
	u32 lens[1] = { 6 };
	unsigned char bm[1];
	struct kbloom_info info;
	struct kbloom_version v;
	int ro = -1, err, status;
	pid_t pid;
	u32 res;

	cleanup(PERM_F);
	cleanup(PERM_NEW);
	if (!check(geteuid() == 0, "not running as root", "perm: euid 0"))
		return;
	err = kb_create(g_fd, PERM_F, 1 << 20, 7, 0, 0, NULL);
	if (!check_ok(err, "perm: create %s", PERM_F))
		return;
	err = kb_skey(g_fd, KBLOOM_IOC_ADD, PERM_F, "rootkey", NULL);
	check_ok(err, "perm: add rootkey");

	/* Read-only fd: lookups yes, changes to keys no. */
	ro = open(g_dev, O_RDONLY);
	if (check(ro >= 0, strerror(errno), "perm: open %s O_RDONLY", g_dev)) {
		err = ioc(ro, KBLOOM_IOC_VERSION, &v);
		check_ok(err, "perm: VERSION on a read-only fd");
		err = kb_skey(ro, KBLOOM_IOC_QUERY, PERM_F, "rootkey", &res);
		if (check_ok(err, "perm: QUERY on a read-only fd"))
			check_u64(res, 1, "perm: read-only QUERY finds rootkey");
		err = kb_batch(ro, KBLOOM_IOC_QUERY_BATCH, PERM_F, "rootkey",
			       (u32[]){ 7 }, bm, 7, 1, NULL);
		check_ok(err, "perm: QUERY_BATCH on a read-only fd");
		err = kb_info(ro, PERM_F, &info);
		check_ok(err, "perm: INFO on a read-only fd");
		err = kb_skey(ro, KBLOOM_IOC_ADD, PERM_F, "rokey", NULL);
		check_err(err, EBADF, "perm: ADD on a read-only fd");
		err = kb_skey(ro, KBLOOM_IOC_TEST_AND_ADD, PERM_F, "rokey",
			      NULL);
		check_err(err, EBADF, "perm: TEST_AND_ADD on a read-only fd");
		err = kb_batch(ro, KBLOOM_IOC_ADD_BATCH, PERM_F, "rokey!",
			       lens, bm, 6, 1, NULL);
		check_err(err, EBADF, "perm: ADD_BATCH on a read-only fd");
		err = kb_batch(ro, KBLOOM_IOC_TEST_AND_ADD_BATCH, PERM_F,
			       "rokey!", lens, bm, 6, 1, NULL);
		check_err(err, EBADF,
			  "perm: TEST_AND_ADD_BATCH on a read-only fd");
		err = kb_skey(g_fd, KBLOOM_IOC_QUERY, PERM_F, "rokey", &res);
		check(err == 0 && res == 0, "a rejected add took effect",
		      "perm: rejected ADD/TEST_AND_ADD added nothing");
		err = kb_skey(g_fd, KBLOOM_IOC_QUERY, PERM_F, "rokey!", &res);
		check(err == 0 && res == 0, "a rejected batch took effect",
		      "perm: rejected batches added nothing");
		close(ro);
	}

	/* Unprivileged child with the inherited O_RDWR fd. */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		perm_child(g_fd);
		fflush(stdout);
		_exit(0);
	}
	if (!check(pid > 0, strerror(errno), "perm: fork"))
		goto out;
	if (!check(waitpid(pid, &status, 0) == pid, strerror(errno),
		   "perm: waitpid"))
		goto out;
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child crashed or failed", "perm: child exited cleanly");

	/* The child could neither destroy, clear nor create. */
	err = kb_info(g_fd, PERM_F, &info);
	check_ok(err, "perm: filter survived the unprivileged child");
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, PERM_F, "rootkey", &res);
	check(err == 0 && res == 1, "rootkey gone",
	      "perm: filter not cleared by the child");
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, PERM_F, "childkey", &res);
	check(err == 0 && res == 1, "childkey absent",
	      "perm: the child's ADD is visible");
	err = kb_info(g_fd, PERM_NEW, &info);
	check_err(err, ENOENT, "perm: the child's CREATE made nothing");
out:
	cleanup(PERM_F);
	cleanup(PERM_NEW);
}

/* ------------------------------------------------------------------ */
/* Group: counting                                                    */
/* ------------------------------------------------------------------ */

#define CNT_F		"counting_f"
#define CNT_PLAIN	"counting_plain"
#define CNT_BATCH	"counting_batch"
#define CNT_MODEL	"counting_model"
#define CNT_BITS	(1u << 16)
#define CNT_HASHES	4
#define MODEL_KEYS	300
#define MODEL_OPS	20000
/*
 * Model counts stay in 0..MODEL_CAP: even three keys sharing a counter
 * (expected 0.03 such triples for 900 positions in 2^16) stay below
 * KBLOOM_COUNTER_MAX, so the model never saturates and is exact.
 */
#define MODEL_CAP	4

/* REMOVE @key @n times on @name; returns how many did not answer 1. */
static u32 remove_n(const char *name, const char *key, u32 n, int *first)
{
	u32 i, res, bad = 0;
	int err;

	*first = 0;
	for (i = 0; i < n; i++) {
		err = kb_skey(g_fd, KBLOOM_IOC_REMOVE, name, key, &res);
		if (err || res != 1) {
			if (!bad++)
				*first = err ? err : KB_BADRET;
		}
	}
	return bad;
}

static u32 add_n(const char *name, const char *key, u32 n)
{
	u32 i, res, bad = 0;

	for (i = 0; i < n; i++)
		bad += kb_skey(g_fd, KBLOOM_IOC_ADD, name, key, &res) != 0 ||
		       res != 0;
	return bad;
}

static void counting_single(void)
{
	struct kbloom_create c;
	struct kbloom_info info, before;
	u32 res, bad;
	int err, first;
	int ro;

	err = kb_create_ex(g_fd, CNT_F, CNT_BITS, CNT_HASHES,
			   KBLOOM_CREATE_COUNTING, NULL, &c);
	if (!check_ok(err, "counting: create counting %s", CNT_F))
		return;
	check(c.bits == CNT_BITS && c.hashes == CNT_HASHES, "size changed",
	      "counting: CREATE wrote back bits and hashes");
	err = kb_info(g_fd, CNT_F, &info);
	if (check_ok(err, "counting: INFO %s", CNT_F)) {
		check_u64(info.flags, KBLOOM_CREATE_COUNTING,
			  "counting: INFO flags is COUNTING");
		check_u64(info.memory_bytes, payload_size(CNT_BITS, true),
			  "counting: INFO memory_bytes is 4 bits a counter, in 64-bit words");
		check(info.bits_set == 0 && info.saturated == 0,
		      "not zero", "counting: fresh bits_set and saturated 0");
	}

	/* 20 adds saturate the key's counters at 15: they stick there. */
	bad = add_n(CNT_F, "satkey", 20);
	check_u64(bad, 0, "counting: ADD satkey 20 times");
	err = kb_info(g_fd, CNT_F, &info);
	if (check_ok(err, "counting: INFO after 20 adds")) {
		check_range(info.saturated, 1, CNT_HASHES,
			    "counting: saturated is 1..k after 20 adds of one key");
		check_u64(info.bits_set, info.saturated,
			  "counting: the only key's counters are all saturated");
	}
	before = info;
	bad = remove_n(CNT_F, "satkey", 20, &first);
	check_u64(bad, 0, "counting: REMOVE satkey 20 times, each result 1");
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, CNT_F, "satkey", &res);
	if (check_ok(err, "counting: QUERY satkey"))
		check_u64(res, 1,
			  "counting: saturated key still present after 20 adds and 20 removes");
	err = kb_info(g_fd, CNT_F, &info);
	if (check_ok(err, "counting: INFO after the 20 removes"))
		check(info.saturated == before.saturated &&
		      info.bits_set == before.bits_set,
		      "counters changed",
		      "counting: saturated counters are never decremented");

	/* Once in, once out: gone; a second remove is refused. */
	bad = add_n(CNT_F, "other", 1) + add_n(CNT_F, "once", 1);
	check_u64(bad, 0, "counting: ADD other, once");
	err = kb_info(g_fd, CNT_F, &before);
	check_ok(err, "counting: INFO before removing once");
	err = kb_skey(g_fd, KBLOOM_IOC_REMOVE, CNT_F, "once", &res);
	if (check_ok(err, "counting: REMOVE once"))
		check_u64(res, 1, "counting: REMOVE of a present key is 1");
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, CNT_F, "once", &res);
	if (check_ok(err, "counting: QUERY once after its remove"))
		check_u64(res, 0, "counting: added once, removed once: absent");
	err = kb_info(g_fd, CNT_F, &info);
	if (check_ok(err, "counting: INFO after removing once"))
		check_range(info.bits_set, before.bits_set - CNT_HASHES,
			    before.bits_set - 1,
			    "counting: the remove cleared 1..k counters");
	before = info;
	err = kb_skey(g_fd, KBLOOM_IOC_REMOVE, CNT_F, "once", &res);
	if (check_ok(err, "counting: second REMOVE once"))
		check_u64(res, 0,
			  "counting: REMOVE of an absent key is refused (0)");
	err = kb_skey(g_fd, KBLOOM_IOC_REMOVE, CNT_F, "never-added", &res);
	if (check_ok(err, "counting: REMOVE never-added"))
		check_u64(res, 0, "counting: REMOVE of a never-added key is 0");
	err = kb_info(g_fd, CNT_F, &info);
	if (check_ok(err, "counting: INFO after the refused removes"))
		check(info.bits_set == before.bits_set &&
		      info.saturated == before.saturated, "counters changed",
		      "counting: refused removes changed nothing");
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, CNT_F, "other", &res);
	check(err == 0 && res == 1, "other lost",
	      "counting: refused removes kept the other key");

	/* Argument errors. */
	err = kb_key(g_fd, KBLOOM_IOC_REMOVE, CNT_F, "other", 0, NULL);
	check_err(err, EINVAL, "counting: REMOVE len 0");
	err = kb_key(g_fd, KBLOOM_IOC_REMOVE, CNT_F, "other",
		     KBLOOM_KEY_MAX + 1, NULL);
	check_err(err, EINVAL, "counting: REMOVE len KEY_MAX + 1");
	err = kb_skey(g_fd, KBLOOM_IOC_REMOVE, "counting_ghost", "other",
		      NULL);
	check_err(err, ENOENT, "counting: REMOVE unknown name");
	err = kb_batch(g_fd, KBLOOM_IOC_REMOVE_BATCH, "counting_ghost",
		       "other", (u32[]){ 5 }, NULL, 5, 1, NULL);
	check_err(err, ENOENT, "counting: REMOVE_BATCH unknown name");

	/* A plain filter cannot remove. */
	err = kb_create(g_fd, CNT_PLAIN, CNT_BITS, CNT_HASHES, 0, 0, NULL);
	if (check_ok(err, "counting: create plain %s", CNT_PLAIN)) {
		check_u64(add_n(CNT_PLAIN, "other", 1), 0,
			  "counting: ADD to the plain filter");
		err = kb_skey(g_fd, KBLOOM_IOC_REMOVE, CNT_PLAIN, "other",
			      NULL);
		check_err(err, EOPNOTSUPP, "counting: REMOVE on a plain filter");
		err = kb_batch(g_fd, KBLOOM_IOC_REMOVE_BATCH, CNT_PLAIN,
			       "other", (u32[]){ 5 }, NULL, 5, 1, NULL);
		check_err(err, EOPNOTSUPP,
			  "counting: REMOVE_BATCH on a plain filter");
		err = kb_skey(g_fd, KBLOOM_IOC_QUERY, CNT_PLAIN, "other", &res);
		check(err == 0 && res == 1, "key lost",
		      "counting: refused plain REMOVEs kept the key");
	}

	/* A read-only fd cannot remove. */
	ro = open(g_dev, O_RDONLY);
	if (check(ro >= 0, strerror(errno), "counting: open O_RDONLY")) {
		err = kb_skey(ro, KBLOOM_IOC_REMOVE, CNT_F, "other", NULL);
		check_err(err, EBADF, "counting: REMOVE on a read-only fd");
		err = kb_batch(ro, KBLOOM_IOC_REMOVE_BATCH, CNT_F, "other",
			       (u32[]){ 5 }, NULL, 5, 1, NULL);
		check_err(err, EBADF,
			  "counting: REMOVE_BATCH on a read-only fd");
		err = kb_skey(ro, KBLOOM_IOC_QUERY, CNT_F, "other", &res);
		check(err == 0 && res == 1, "key lost",
		      "counting: read-only REMOVEs removed nothing");
		close(ro);
	}
	cleanup(CNT_F);
	cleanup(CNT_PLAIN);
}

static void counting_batch(void)
{
	struct keyset ks = { 0 };
	struct kbloom_batch out;
	unsigned char bm[1000 / 8 + 1];
	int err;

	/* 2^18 counters, 4000 positions in use: false positives ~1e-7. */
	err = kb_create_ex(g_fd, CNT_BATCH, 1u << 18, CNT_HASHES,
			   KBLOOM_CREATE_COUNTING, NULL, NULL);
	if (!check_ok(err, "counting: create %s", CNT_BATCH))
		return;
	if (!keyset_tag(&ks, "rb", 1000) ||
	    !ks_add(CNT_BATCH, &ks, 0, 1000, "counting"))
		goto out;
	memset(bm, 0, sizeof(bm));
	err = ks_batch(g_fd, KBLOOM_IOC_REMOVE_BATCH, CNT_BATCH, &ks, 0, 500,
		       bm, &out);
	if (check_ok(err, "counting: REMOVE_BATCH 500 of 1000 keys")) {
		check_u64(out.done, 500, "counting: REMOVE_BATCH done");
		check_u64(out.hits, 500,
			  "counting: REMOVE_BATCH hits (all removed)");
		check_u64(bits_count(bm, 500), 500,
			  "counting: REMOVE_BATCH result bits all 1");
	}
	check_u64((u64)ks_hits(g_fd, CNT_BATCH, &ks, 0, 500), 0,
		  "counting: the 500 removed keys are absent");
	check_u64((u64)ks_hits(g_fd, CNT_BATCH, &ks, 500, 500), 500,
		  "counting: the 500 other keys are present");
	/* Again: every key is now absent, so every remove is refused. */
	memset(bm, 0xff, sizeof(bm));
	err = ks_batch(g_fd, KBLOOM_IOC_REMOVE_BATCH, CNT_BATCH, &ks, 0, 500,
		       bm, &out);
	if (check_ok(err, "counting: REMOVE_BATCH the removed keys again")) {
		check_u64(out.done, 500, "counting: second REMOVE_BATCH done");
		check_u64(out.hits, 0,
			  "counting: second REMOVE_BATCH refused all (hits 0)");
		check_u64(bits_count(bm, 500), 0,
			  "counting: second REMOVE_BATCH result bits all 0");
	}
	check_u64((u64)ks_hits(g_fd, CNT_BATCH, &ks, 500, 500), 500,
		  "counting: the refused batch kept the other keys");
out:
	keyset_free(&ks);
	cleanup(CNT_BATCH);
}

/* Random adds and removes against an exact multiset model. */
static void counting_model(void)
{
	struct keyset ks = { 0 };
	struct kbloom_info info;
	u32 counts[MODEL_KEYS] = { 0 };
	u32 i, res, bad_add = 0, bad_rm = 0, npos = 0, nzero = 0, fneg = 0;
	u32 zhit = 0, adds = 0, removes = 0;
	int err, first_err = 0;
	u64 s = 12345;
	char detail[160];

	err = kb_create_ex(g_fd, CNT_MODEL, CNT_BITS, 3,
			   KBLOOM_CREATE_COUNTING, NULL, NULL);
	if (!check_ok(err, "counting: create %s", CNT_MODEL))
		return;
	if (!keyset_tag(&ks, "mk", MODEL_KEYS))
		goto out;
	for (i = 0; i < MODEL_OPS; i++) {
		u64 r = rng_next(&s);
		u32 k = (u32)(r % MODEL_KEYS);
		bool add = counts[k] == 0 ||
			   (counts[k] < MODEL_CAP && ((r >> 32) & 1));
		const unsigned char *key = ks.keys + ks.off[k];

		if (add) {
			err = kb_key(g_fd, KBLOOM_IOC_ADD, CNT_MODEL, key,
				     ks.lens[k], &res);
			if (err || res != 0) {
				if (!bad_add++ && !first_err)
					first_err = err ? err : KB_BADRET;
			} else {
				counts[k]++;
			}
			adds++;
		} else {
			/* Only keys the model holds: each must go. */
			err = kb_key(g_fd, KBLOOM_IOC_REMOVE, CNT_MODEL, key,
				     ks.lens[k], &res);
			if (err || res != 1) {
				if (!bad_rm++ && !first_err)
					first_err = err ? err : KB_BADRET;
			} else {
				counts[k]--;
			}
			removes++;
		}
	}
	snprintf(detail, sizeof(detail),
		 "%u bad adds, %u bad removes, first %s", bad_add, bad_rm,
		 errname(first_err));
	printf("# counting: model: %u adds, %u removes\n", adds, removes);
	check(bad_add == 0, detail, "counting: model: every ADD succeeded");
	check(bad_rm == 0, detail,
	      "counting: model: every REMOVE of a held key answered 1");
	for (i = 0; i < MODEL_KEYS; i++) {
		int r = query_one(CNT_MODEL, ks.keys + ks.off[i], ks.lens[i]);

		if (counts[i]) {
			npos++;
			fneg += r != 1;
		} else {
			nzero++;
			zhit += r == 1;
		}
	}
	snprintf(detail, sizeof(detail), "%u of %u held keys absent", fneg,
		 npos);
	check(fneg == 0, detail,
	      "counting: model: every key with count > 0 is present");
	snprintf(detail, sizeof(detail), "%u of %u count-0 keys present", zhit,
		 nzero);
	printf("# counting: model: %s\n", detail);
	check(zhit * 50 <= nzero, detail,
	      "counting: model: at most 2%% of count-0 keys present");
	err = kb_info(g_fd, CNT_MODEL, &info);
	if (check_ok(err, "counting: model: INFO")) {
		check_range(info.bits_set, npos ? 1 : 0, 3 * (u64)npos,
			    "counting: model: bits_set (non-zero counters) <= k * held keys");
		check_u64(info.saturated, 0,
			  "counting: model: no counter saturated (counts <= %u)",
			  MODEL_CAP);
	}
out:
	keyset_free(&ks);
	cleanup(CNT_MODEL);
}

static void test_counting(void)
{
	cleanup(CNT_F);
	cleanup(CNT_PLAIN);
	cleanup(CNT_BATCH);
	cleanup(CNT_MODEL);
	counting_single();
	counting_batch();
	counting_model();
}

/* ------------------------------------------------------------------ */
/* Group: merge                                                       */
/* ------------------------------------------------------------------ */

#define MRG_A		"merge_a"
#define MRG_B		"merge_b"
#define MRG_IND		"merge_ind"
#define MRG_BITS	"merge_bits"
#define MRG_HASH	"merge_hashes"
#define MRG_C		"merge_c"
#define MRG_D		"merge_d"
#define MRG_E		"merge_e"
#define MRG_F		"merge_f"
#define MRG_BAD		"merge_bad"
#define MRG_KEYS	2000u

/* MERGE or COMPARE that must fail EINVAL with exactly @want mismatch. */
static void merge_mismatch(unsigned long cmd, const char *dst,
			   const char *src, u32 want, const char *what)
{
	struct kbloom_merge m;
	int err = kb_merge(g_fd, cmd, dst, src, &m);
	const char *c = cmd == KBLOOM_IOC_MERGE ? "MERGE" : "COMPARE";

	if (check_err(err, EINVAL, "merge: %s %s <- %s (%s)", c, dst, src,
		      what))
		check_u64(m.mismatch, want, "merge: %s %s mismatch", c, what);
}

/* CREATE that must fail; nothing may be left behind. */
static void merge_create_fails(u64 bits, u32 hashes, u64 cap, u32 fpr,
			       u32 flags, const char *like, int want,
			       const char *what)
{
	struct kbloom_create c;
	struct kbloom_info info;
	int err;

	memset(&c, 0, sizeof(c));
	set_name(c.name, MRG_BAD);
	c.bits = bits;
	c.hashes = hashes;
	c.capacity = cap;
	c.fpr_ppb = fpr;
	c.flags = flags;
	if (like)
		set_name(c.like, like);
	err = ioc(g_fd, KBLOOM_IOC_CREATE, &c);
	check_err(err, want, "merge: create %s", what);
	err = kb_info(g_fd, MRG_BAD, &info);
	check_err(err, ENOENT, "merge: create %s made nothing", what);
	cleanup(MRG_BAD);
}

static void merge_errors(void)
{
	struct kbloom_info ia, info;
	struct kbloom_merge m;
	u32 res;
	int err, ro;

	/* Incompatible filters: each differing parameter is reported. */
	err = kb_create(g_fd, MRG_IND, 100000, 5, 0, 0, NULL);
	if (check_ok(err, "merge: create independent %s", MRG_IND)) {
		merge_mismatch(KBLOOM_IOC_MERGE, MRG_A, MRG_IND,
			       KBLOOM_MISMATCH_SEED,
			       "same size, independent seed");
		merge_mismatch(KBLOOM_IOC_COMPARE, MRG_A, MRG_IND,
			       KBLOOM_MISMATCH_SEED,
			       "same size, independent seed");
	}
	err = kb_create(g_fd, MRG_BITS, 100064, 5, 0, 0, NULL);
	if (check_ok(err, "merge: create %s", MRG_BITS))
		merge_mismatch(KBLOOM_IOC_MERGE, MRG_A, MRG_BITS,
			       KBLOOM_MISMATCH_BITS | KBLOOM_MISMATCH_SEED,
			       "different bits");
	err = kb_create(g_fd, MRG_HASH, 100000, 6, 0, 0, NULL);
	if (check_ok(err, "merge: create %s", MRG_HASH))
		merge_mismatch(KBLOOM_IOC_MERGE, MRG_A, MRG_HASH,
			       KBLOOM_MISMATCH_HASHES | KBLOOM_MISMATCH_SEED,
			       "different hashes");
	err = kb_create_ex(g_fd, MRG_C, 1 << 16, 4, KBLOOM_CREATE_COUNTING,
			   NULL, NULL);
	check_ok(err, "merge: create counting %s", MRG_C);
	err = kb_create(g_fd, MRG_D, 1 << 16, 4, 0, 0, NULL);
	if (check_ok(err, "merge: create plain %s", MRG_D)) {
		merge_mismatch(KBLOOM_IOC_MERGE, MRG_C, MRG_D,
			       KBLOOM_MISMATCH_COUNTING | KBLOOM_MISMATCH_SEED,
			       "counting <- plain");
		merge_mismatch(KBLOOM_IOC_MERGE, MRG_D, MRG_C,
			       KBLOOM_MISMATCH_COUNTING | KBLOOM_MISMATCH_SEED,
			       "plain <- counting");
	}
	/* The rejected merges left A alone. */
	err = kb_info(g_fd, MRG_A, &ia);
	check_ok(err, "merge: INFO %s after the rejected merges", MRG_A);

	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, "merge_ghost", MRG_B, NULL);
	check_err(err, ENOENT, "merge: MERGE unknown dst");
	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, MRG_A, "merge_ghost", NULL);
	check_err(err, ENOENT, "merge: MERGE unknown src");
	err = kb_merge(g_fd, KBLOOM_IOC_COMPARE, "merge_ghost", MRG_B, NULL);
	check_err(err, ENOENT, "merge: COMPARE unknown dst");
	err = kb_merge(g_fd, KBLOOM_IOC_COMPARE, MRG_A, "merge_ghost", NULL);
	check_err(err, ENOENT, "merge: COMPARE unknown src");
	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, "", MRG_B, NULL);
	check_err(err, EINVAL, "merge: MERGE empty dst name");
	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, MRG_A, ".b", NULL);
	check_err(err, EINVAL, "merge: MERGE bad src name");
	/* (Reserved fields: in the badioctl group's table.) */

	/* A read-only fd may compare (as root) but not merge. */
	ro = open(g_dev, O_RDONLY);
	if (check(ro >= 0, strerror(errno), "merge: open O_RDONLY")) {
		err = kb_skey(g_fd, KBLOOM_IOC_ADD, MRG_B, "ro-only-in-b",
			      NULL);
		check_ok(err, "merge: add ro-only-in-b to %s", MRG_B);
		err = kb_merge(ro, KBLOOM_IOC_MERGE, MRG_A, MRG_B, NULL);
		check_err(err, EBADF, "merge: MERGE on a read-only fd");
		err = kb_skey(g_fd, KBLOOM_IOC_QUERY, MRG_A, "ro-only-in-b",
			      &res);
		check(err == 0 && res == 0, "the merge happened",
		      "merge: the read-only MERGE changed nothing");
		err = kb_merge(ro, KBLOOM_IOC_COMPARE, MRG_A, MRG_B, &m);
		if (check_ok(err, "merge: COMPARE on a read-only fd"))
			check_u64(m.mismatch, 0,
				  "merge: read-only COMPARE mismatch 0");
		close(ro);
	}
	err = kb_info(g_fd, MRG_A, &info);
	if (check_ok(err, "merge: INFO %s after the errors", MRG_A))
		check_u64(info.bits_set, ia.bits_set,
			  "merge: failed merges left %s's bits alone", MRG_A);

	/* CREATE with KBLOOM_CREATE_LIKE: what it refuses. */
	merge_create_fails(1024, 0, 0, 0, KBLOOM_CREATE_LIKE, MRG_A, EINVAL,
			   "LIKE with bits");
	merge_create_fails(0, 5, 0, 0, KBLOOM_CREATE_LIKE, MRG_A, EINVAL,
			   "LIKE with hashes");
	merge_create_fails(0, 0, 1000, 0, KBLOOM_CREATE_LIKE, MRG_A, EINVAL,
			   "LIKE with capacity");
	merge_create_fails(0, 0, 0, 10000000, KBLOOM_CREATE_LIKE, MRG_A,
			   EINVAL, "LIKE with fpr_ppb");
	merge_create_fails(0, 0, 0, 0, KBLOOM_CREATE_LIKE, "merge_ghost",
			   ENOENT, "LIKE an unknown filter");
	merge_create_fails(0, 0, 0, 0, KBLOOM_CREATE_LIKE, "", EINVAL,
			   "LIKE with an empty like name");
	merge_create_fails(0, 0, 0, 0, KBLOOM_CREATE_LIKE, ".a", EINVAL,
			   "LIKE with a bad like name");
	merge_create_fails(0, 0, 0, 0,
			   KBLOOM_CREATE_LIKE | KBLOOM_CREATE_COUNTING, MRG_A,
			   EINVAL, "LIKE a plain filter with COUNTING");
	merge_create_fails(1024, 3, 0, 0, 0, MRG_A, EINVAL,
			   "like set without the LIKE flag");
	merge_create_fails(1024, 3, 0, 0, KBLOOM_CREATE_COUNTING, MRG_C,
			   EINVAL, "COUNTING with like set, no LIKE flag");
}

static void merge_counting(void)
{
	struct kbloom_create c;
	struct kbloom_info ic, ie, info;
	struct kbloom_merge m;
	u32 bad, res;
	int err, first;

	/* LIKE from a counting filter: with or without the COUNTING flag. */
	err = kb_create_ex(g_fd, MRG_E, 0, 0,
			   KBLOOM_CREATE_LIKE | KBLOOM_CREATE_COUNTING, MRG_C,
			   &c);
	if (!check_ok(err, "merge: create %s like counting %s with COUNTING",
		      MRG_E, MRG_C))
		return;
	check(c.bits == 1 << 16 && c.hashes == 4, "not the source's",
	      "merge: LIKE wrote back the source's bits and hashes");
	err = kb_create_ex(g_fd, MRG_F, 0, 0, KBLOOM_CREATE_LIKE, MRG_C, NULL);
	if (check_ok(err, "merge: create %s like counting %s, no COUNTING",
		     MRG_F, MRG_C)) {
		err = kb_info(g_fd, MRG_F, &info);
		if (check_ok(err, "merge: INFO %s", MRG_F))
			check(info.flags & KBLOOM_CREATE_COUNTING,
			      "not counting",
			      "merge: LIKE copies the counting flag");
		cleanup(MRG_F);
	}

	/* 10 + 10 adds of one key: the sum saturates at 15. */
	check_u64(add_n(MRG_C, "ck", 10) + add_n(MRG_E, "ck", 10), 0,
		  "merge: ADD ck 10 times to each counting filter");
	err = kb_info(g_fd, MRG_C, &ic);
	if (check_ok(err, "merge: INFO %s", MRG_C))
		check_u64(ic.saturated, 0, "merge: 10 adds do not saturate");
	err = kb_info(g_fd, MRG_E, &ie);
	check_ok(err, "merge: INFO %s", MRG_E);
	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, MRG_C, MRG_E, &m);
	if (check_ok(err, "merge: MERGE counting %s <- %s", MRG_C, MRG_E))
		check_u64(m.mismatch, 0, "merge: counting MERGE mismatch 0");
	err = kb_info(g_fd, MRG_C, &info);
	if (check_ok(err, "merge: INFO %s after the merge", MRG_C)) {
		check_range(info.saturated, 1, 4,
			    "merge: counters added and saturated (1..k saturated)");
		check_u64(info.bits_set, ic.bits_set,
			  "merge: no new non-zero counters");
	}
	err = kb_info(g_fd, MRG_E, &info);
	if (check_ok(err, "merge: INFO %s after the merge", MRG_E))
		check(info.saturated == 0 && info.bits_set == ie.bits_set,
		      "changed", "merge: the counting source is unchanged");
	bad = remove_n(MRG_C, "ck", 30, &first);
	check_u64(bad, 0, "merge: REMOVE ck 30 times from %s, each 1", MRG_C);
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, MRG_C, "ck", &res);
	check(err == 0 && res == 1, "absent",
	      "merge: saturated merged key survives 30 removes");
	/* The source kept exactly 10: ten removes empty it. */
	bad = remove_n(MRG_E, "ck", 10, &first);
	check_u64(bad, 0, "merge: REMOVE ck 10 times from %s, each 1", MRG_E);
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, MRG_E, "ck", &res);
	check(err == 0 && res == 0, "still present",
	      "merge: the source's counters were 10, not more");
}

static void test_merge(void)
{
	static const char *const all[] = {
		MRG_A, MRG_B, MRG_IND, MRG_BITS, MRG_HASH, MRG_C, MRG_D,
		MRG_E, MRG_F, MRG_BAD,
	};
	struct keyset s1 = { 0 }, s2 = { 0 };
	struct kbloom_create c;
	struct kbloom_info ia, ib, info;
	struct kbloom_merge m;
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(all); i++)
		cleanup(all[i]);

	err = kb_create(g_fd, MRG_A, 100000, 5, 0, 0, NULL);
	if (!check_ok(err, "merge: create %s", MRG_A))
		goto out;
	err = kb_create_ex(g_fd, MRG_B, 0, 0, KBLOOM_CREATE_LIKE, MRG_A, &c);
	if (!check_ok(err, "merge: create %s like %s", MRG_B, MRG_A))
		goto out;
	check(c.bits == 100000 && c.hashes == 5, "not the source's",
	      "merge: LIKE wrote back bits 100000 hashes 5");
	err = kb_info(g_fd, MRG_A, &ia);
	check_ok(err, "merge: INFO %s", MRG_A);
	err = kb_info(g_fd, MRG_B, &ib);
	if (check_ok(err, "merge: INFO %s", MRG_B)) {
		check(ib.bits == ia.bits && ib.hashes == ia.hashes &&
		      ib.capacity == ia.capacity &&
		      ib.hash_scheme == ia.hash_scheme,
		      "differs", "merge: INFO of the LIKE filter matches");
		check_u64(ib.flags & KBLOOM_CREATE_COUNTING, 0,
			  "merge: LIKE a plain filter is plain");
		check_u64(ib.bits_set, 0, "merge: LIKE copies no contents");
	}

	if (!keyset_tag(&s1, "s1", MRG_KEYS) ||
	    !keyset_tag(&s2, "s2", MRG_KEYS) ||
	    !ks_add(MRG_A, &s1, 0, MRG_KEYS, "merge") ||
	    !ks_add(MRG_B, &s2, 0, MRG_KEYS, "merge"))
		goto out;
	err = kb_info(g_fd, MRG_A, &ia);
	check_ok(err, "merge: INFO %s before", MRG_A);
	err = kb_info(g_fd, MRG_B, &ib);
	check_ok(err, "merge: INFO %s before", MRG_B);

	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, MRG_A, MRG_B, &m);
	if (check_ok(err, "merge: MERGE %s <- %s", MRG_A, MRG_B))
		check_u64(m.mismatch, 0, "merge: MERGE mismatch 0");
	check_u64((u64)ks_hits(g_fd, MRG_A, &s1, 0, MRG_KEYS), MRG_KEYS,
		  "merge: %s keeps its own keys", MRG_A);
	check_u64((u64)ks_hits(g_fd, MRG_A, &s2, 0, MRG_KEYS), MRG_KEYS,
		  "merge: %s has every key of %s", MRG_A, MRG_B);
	err = kb_info(g_fd, MRG_A, &info);
	if (check_ok(err, "merge: INFO %s after", MRG_A))
		check_range(info.bits_set, ia.bits_set > ib.bits_set ?
			    ia.bits_set : ib.bits_set,
			    ia.bits_set + ib.bits_set,
			    "merge: bits_set of the union in max..sum");
	err = kb_info(g_fd, MRG_B, &info);
	if (check_ok(err, "merge: INFO %s after", MRG_B))
		check_u64(info.bits_set, ib.bits_set,
			  "merge: the source's bits_set unchanged");
	/* B at 9.5% fill: 5 hashes give false positives ~1e-5. */
	check_range((u64)ks_hits(g_fd, MRG_B, &s1, 0, MRG_KEYS), 0, 20,
		    "merge: the source did not receive the destination's keys");

	/* dst == src: allowed, and ORing a filter into itself is a no-op. */
	err = kb_info(g_fd, MRG_A, &ia);
	check_ok(err, "merge: INFO %s before the self-merge", MRG_A);
	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, MRG_A, MRG_A, &m);
	if (check_ok(err, "merge: MERGE %s <- itself", MRG_A))
		check_u64(m.mismatch, 0, "merge: self-MERGE mismatch 0");
	err = kb_info(g_fd, MRG_A, &info);
	if (check_ok(err, "merge: INFO %s after the self-merge", MRG_A))
		check_u64(info.bits_set, ia.bits_set,
			  "merge: self-merge changed no bit");

	merge_errors();
	merge_counting();
out:
	keyset_free(&s1);
	keyset_free(&s2);
	for (i = 0; i < ARRAY_SIZE(all); i++)
		cleanup(all[i]);
}

/* ------------------------------------------------------------------ */
/* Group: compare                                                     */
/* ------------------------------------------------------------------ */

#define CMP_A		"compare_a"
#define CMP_B		"compare_b"
#define CMP_EMPTY	"compare_empty"
#define CMP_BITS	300000u
#define CMP_HASHES	7
#define CMP_N		10000u

/* n = -(m/k) ln(1 - X/m), the header's estimate. */
static double est_n(u64 x, u64 m, u32 k)
{
	return -((double)m / k) * log(1.0 - (double)x / (double)m);
}

static bool within(double got, double want, double frac)
{
	return fabs(got - want) <= want * frac;
}

static void test_compare(void)
{
	struct keyset sh = { 0 }, oa = { 0 }, ob = { 0 };
	struct kbloom_info ia, ib, info;
	struct kbloom_merge m, r;
	double na, nb, nu, ni, naive;
	char detail[200];
	u64 mx, mn;
	int err, ro;

	cleanup(CMP_A);
	cleanup(CMP_B);
	cleanup(CMP_EMPTY);
	/* Room for ~30000 keys at 1%: the estimates are then tight. */
	err = kb_create(g_fd, CMP_A, CMP_BITS, CMP_HASHES, 0, 0, NULL);
	if (!check_ok(err, "compare: create %s", CMP_A))
		return;
	err = kb_create_ex(g_fd, CMP_B, 0, 0, KBLOOM_CREATE_LIKE, CMP_A, NULL);
	if (!check_ok(err, "compare: create %s like %s", CMP_B, CMP_A))
		goto out;
	/* A: shared + own-A (20000); B: shared + own-B (20000). */
	if (!keyset_tag(&sh, "cs", CMP_N) || !keyset_tag(&oa, "ca", CMP_N) ||
	    !keyset_tag(&ob, "cb", CMP_N) ||
	    !ks_add(CMP_A, &sh, 0, CMP_N, "compare") ||
	    !ks_add(CMP_A, &oa, 0, CMP_N, "compare") ||
	    !ks_add(CMP_B, &sh, 0, CMP_N, "compare") ||
	    !ks_add(CMP_B, &ob, 0, CMP_N, "compare"))
		goto out;
	if (!check_ok(kb_info(g_fd, CMP_A, &ia), "compare: INFO %s", CMP_A) ||
	    !check_ok(kb_info(g_fd, CMP_B, &ib), "compare: INFO %s", CMP_B))
		goto out;

	err = kb_merge(g_fd, KBLOOM_IOC_COMPARE, CMP_A, CMP_B, &m);
	if (!check_ok(err, "compare: COMPARE %s %s", CMP_A, CMP_B))
		goto out;
	check_u64(m.mismatch, 0, "compare: mismatch 0");
	check_u64(m.bits_dst, ia.bits_set,
		  "compare: bits_dst == INFO bits_set of A");
	check_u64(m.bits_src, ib.bits_set,
		  "compare: bits_src == INFO bits_set of B");
	mx = m.bits_dst > m.bits_src ? m.bits_dst : m.bits_src;
	mn = m.bits_dst < m.bits_src ? m.bits_dst : m.bits_src;
	check_range(m.bits_union, mx, CMP_BITS, "compare: bits_union >= max");
	check_range(m.bits_inter, 0, mn, "compare: bits_inter <= min");
	check_u64(m.bits_union + m.bits_inter, m.bits_dst + m.bits_src,
		  "compare: union + inter == dst + src");

	na = est_n(m.bits_dst, CMP_BITS, CMP_HASHES);
	nb = est_n(m.bits_src, CMP_BITS, CMP_HASHES);
	nu = est_n(m.bits_union, CMP_BITS, CMP_HASHES);
	/*
	 * The intersection by inclusion-exclusion: applying the formula to
	 * bits_inter itself overestimates it (bits of A-only and B-only
	 * keys that coincide count as shared: ~11900 here, not 10000).
	 */
	ni = na + nb - nu;
	naive = est_n(m.bits_inter, CMP_BITS, CMP_HASHES);
	snprintf(detail, sizeof(detail),
		 "A %.0f, B %.0f, union %.0f, inter %.0f (formula on bits_inter %.0f)",
		 na, nb, nu, ni, naive);
	printf("# compare: estimates %s\n", detail);
	check(within(na, 2 * CMP_N, 0.05), detail,
	      "compare: |A| estimate within 5%% of 20000");
	check(within(nb, 2 * CMP_N, 0.05), detail,
	      "compare: |B| estimate within 5%% of 20000");
	check(within(nu, 3 * CMP_N, 0.05), detail,
	      "compare: union estimate within 5%% of 30000");
	check(within(ni, CMP_N, 0.05), detail,
	      "compare: intersection estimate (|A|+|B|-|union|) within 5%% of 10000");

	/* Symmetric, and read-only. */
	err = kb_merge(g_fd, KBLOOM_IOC_COMPARE, CMP_B, CMP_A, &r);
	if (check_ok(err, "compare: COMPARE %s %s", CMP_B, CMP_A))
		check(r.bits_dst == m.bits_src && r.bits_src == m.bits_dst &&
		      r.bits_union == m.bits_union &&
		      r.bits_inter == m.bits_inter, "not symmetric",
		      "compare: COMPARE B A mirrors COMPARE A B");
	ro = open(g_dev, O_RDONLY);
	if (check(ro >= 0, strerror(errno), "compare: open O_RDONLY")) {
		err = kb_merge(ro, KBLOOM_IOC_COMPARE, CMP_A, CMP_B, &r);
		if (check_ok(err, "compare: COMPARE on a read-only fd"))
			check(r.bits_union == m.bits_union &&
			      r.bits_inter == m.bits_inter, "differs",
			      "compare: read-only COMPARE gives the same counts");
		close(ro);
	}
	err = kb_info(g_fd, CMP_A, &info);
	if (check_ok(err, "compare: INFO %s after", CMP_A))
		check(info.bits_set == ia.bits_set && info.adds == ia.adds,
		      "changed", "compare: COMPARE changed nothing");

	/* With itself, and with an empty twin. */
	err = kb_merge(g_fd, KBLOOM_IOC_COMPARE, CMP_A, CMP_A, &r);
	if (check_ok(err, "compare: COMPARE %s with itself", CMP_A))
		check(r.bits_dst == ia.bits_set && r.bits_src == ia.bits_set &&
		      r.bits_union == ia.bits_set &&
		      r.bits_inter == ia.bits_set, "counts differ",
		      "compare: self-COMPARE: union == inter == bits_set");
	err = kb_create_ex(g_fd, CMP_EMPTY, 0, 0, KBLOOM_CREATE_LIKE, CMP_A,
			   NULL);
	if (check_ok(err, "compare: create %s like %s", CMP_EMPTY, CMP_A)) {
		err = kb_merge(g_fd, KBLOOM_IOC_COMPARE, CMP_A, CMP_EMPTY, &r);
		if (check_ok(err, "compare: COMPARE with an empty twin"))
			check(r.bits_src == 0 && r.bits_inter == 0 &&
			      r.bits_union == ia.bits_set, "counts wrong",
			      "compare: empty twin: src 0, inter 0, union == A");
	}
out:
	keyset_free(&sh);
	keyset_free(&oa);
	keyset_free(&ob);
	cleanup(CMP_A);
	cleanup(CMP_B);
	cleanup(CMP_EMPTY);
}

/* ------------------------------------------------------------------ */
/* Group: image                                                       */
/* ------------------------------------------------------------------ */

#define IMG_P		"image_p"
#define IMG_Q		"image_q"
#define IMG_C		"image_c"
#define IMG_CQ		"image_cq"
#define IMG_R		"image_r"
#define IMG_S		"image_s"
#define IMG_BAD		"image_bad"
#define IMG_PBITS	100003u	/* not a multiple of 64: padding exists */
#define IMG_CBITS	10007u	/* odd: the last counter shares a byte */
#define IMG_KEYS	2000u
#define IMG_READERS	3
#define IMG_REPLACES	50
#define IMG_ZKEYS	8	/* in both X and Y */

/* An export with its own buffer. */
struct img {
	struct kbloom_image im;
	unsigned char *buf;
	u64 len;
};

static void img_free(struct img *g)
{
	free(g->buf);
	memset(g, 0, sizeof(*g));
}

/* Export @name into @g (sized by a first ENOBUFS call); reports. */
static bool img_take(const char *name, struct img *g, const char *what)
{
	struct kbloom_image im;
	int err;

	memset(g, 0, sizeof(*g));
	err = kb_export(g_fd, name, NULL, 0, &im);
	if (!check_err(err, ENOBUFS, "image: %s: EXPORT %s to learn the size",
		       what, name))
		return false;
	g->len = im.payload_len;
	g->buf = malloc(g->len + 64);
	if (!check(g->buf != NULL, "out of memory", "image: alloc"))
		return false;
	memset(g->buf, 0xa5, g->len + 64);
	err = kb_export(g_fd, name, g->buf, g->len, &g->im);
	if (!check_ok(err, "image: %s: EXPORT %s", what, name))
		return false;
	return check_u64(g->im.payload_len, g->len,
			 "image: %s: EXPORT %s payload_len", what, name);
}

/* Is @name's current export identical to @g (parameters and bytes)? */
static bool img_same(const char *name, const struct img *g)
{
	struct img now;
	bool same;

	if (!img_take(name, &now, "compare"))
		return false;
	same = now.len == g->len && now.im.bits == g->im.bits &&
	       now.im.hashes == g->im.hashes && now.im.flags == g->im.flags &&
	       now.im.hash_scheme == g->im.hash_scheme &&
	       !memcmp(now.im.seed, g->im.seed, sizeof(now.im.seed)) &&
	       !memcmp(now.im.seed_hi, g->im.seed_hi,
		       sizeof(now.im.seed_hi)) &&
	       !memcmp(now.buf, g->buf, g->len);
	img_free(&now);
	return same;
}

/* IMPORT of a broken image: must fail and create nothing. */
static void img_bad(const struct kbloom_image *im, int want, long before,
		    const char *what)
{
	struct kbloom_info info;
	int err = ioc(g_fd, KBLOOM_IOC_IMPORT, (void *)im);

	check_err(err, want, "image: IMPORT %s", what);
	check(kb_count(g_fd) == before && kb_info(g_fd, IMG_BAD, &info) ==
	      ENOENT, "a filter appeared",
	      "image: IMPORT %s created nothing (LIST count unchanged)", what);
	cleanup(IMG_BAD);
}

static void image_bad_inputs(const struct img *p, const struct img *c)
{
	struct kbloom_image base = p->im, im;
	void *hole = unmapped_page();
	long before = kb_count(g_fd);
	unsigned char *b2;

	set_name(base.name, IMG_BAD);
	base.payload = PTR(p->buf);
	base.import_flags = 0;

#define BAD(field, val, want, what)		\
	do {					\
		im = base;			\
		im.field = (val);		\
		img_bad(&im, want, before, what); \
	} while (0)

	BAD(bits, 63, EINVAL, "bits 63");
	BAD(bits, KBLOOM_MAX_BITS + 1, EINVAL, "bits MAX_BITS + 1");
	im = base;
	im.bits = 63;
	im.payload_len = 8;
	img_bad(&im, EINVAL, before, "bits 63 with a matching 8-byte payload");
	BAD(bits, IMG_PBITS + 64, EINVAL, "bits that need 8 more bytes");
	BAD(hashes, 0, EINVAL, "hashes 0");
	BAD(hashes, KBLOOM_MAX_HASHES + 1, EINVAL, "hashes 33");
	/* 1 (jhash) and 2 (SipHash) are the schemes; 0 is no scheme. */
	BAD(hash_scheme, KBLOOM_HASH_SIPHASH + 1, EINVAL, "hash_scheme 3");
	BAD(hash_scheme, 0, EINVAL, "hash_scheme 0");
	BAD(flags, KBLOOM_CREATE_LIKE, EINVAL, "flags LIKE");
	BAD(flags, 1u << 2, EINVAL, "flags 1 << 2");
	BAD(flags, 0x80000000u, EINVAL, "flags 0x80000000");
	BAD(flags, KBLOOM_CREATE_COUNTING, EINVAL,
	    "flags COUNTING with a plain payload's size");
	BAD(payload_len, p->len - 8, EINVAL, "payload_len 8 short");
	BAD(payload_len, p->len + 8, EINVAL, "payload_len 8 over");
	BAD(payload_len, 0, EINVAL, "payload_len 0");
	BAD(payload, 0, EFAULT, "payload NULL");
	if (hole)
		BAD(payload, PTR(hole), EFAULT, "payload unmapped");
	BAD(import_flags, 1u << 1, EINVAL, "import_flags 1 << 1");
	BAD(import_flags, 0x80000000u, EINVAL, "import_flags 0x80000000");
	BAD(reserved0, 1, EINVAL, "reserved0 1");
	/* Was reserved: 1 generation and a window without them are invalid. */
	BAD(generations, 1, EINVAL, "generations 1");
	BAD(window_ms, 1, EINVAL, "window_ms without generations");
	im = base;
	set_name(im.name, "");
	img_bad(&im, EINVAL, before, "empty name");
	im = base;
	set_name(im.name, ".x");
	img_bad(&im, EINVAL, before, "bad name");

	/* Padding: bit m itself, then the last bit of the last word. */
	b2 = malloc(p->len);
	if (check(b2 != NULL, "out of memory", "image: alloc")) {
		im = base;
		im.payload = PTR(b2);
		memcpy(b2, p->buf, p->len);
		b2[IMG_PBITS / 8] |= (unsigned char)(1u << (IMG_PBITS % 8));
		img_bad(&im, EINVAL, before, "with bit m set (padding)");
		memcpy(b2, p->buf, p->len);
		b2[p->len - 1] |= 0x80;
		img_bad(&im, EINVAL, before,
			"with the last padding bit set");
	}
	free(b2);
	/* Counting padding: counter m (high nibble of byte m / 2). */
	if (c->buf) {
		b2 = malloc(c->len);
		if (check(b2 != NULL, "out of memory", "image: alloc")) {
			im = c->im;
			set_name(im.name, IMG_BAD);
			im.payload = PTR(b2);
			memcpy(b2, c->buf, c->len);
			b2[IMG_CBITS / 2] |= 0x10;
			img_bad(&im, EINVAL, before,
				"counting with counter m non-zero (padding)");
			/* Smaller than the buffer: only the size is wrong. */
			im.payload = PTR(c->buf);
			im.payload_len = payload_size(IMG_CBITS, false);
			img_bad(&im, EINVAL, before,
				"counting with a plain-sized payload");
		}
		free(b2);
	}
#undef BAD

	/* The name is taken: EEXIST, and the holder is untouched. */
	im = base;
	set_name(im.name, IMG_Q);
	check_err(ioc(g_fd, KBLOOM_IOC_IMPORT, &im), EEXIST,
		  "image: IMPORT over an existing name without REPLACE");
	check_err(kb_import(g_fd, &base, IMG_BAD, KBLOOM_IMPORT_REPLACE),
		  ENOENT, "image: IMPORT REPLACE of a missing name");
	check(kb_count(g_fd) == before, "count changed",
	      "image: EEXIST/ENOENT imports created nothing");
}

/* The unprivileged child: EXPORT and IMPORT need CAP_SYS_ADMIN. */
static void image_child(int fd, const struct img *p)
{
	struct kbloom_image im;
	unsigned char buf[64];
	int err;

	if (!check(setgroups(0, NULL) == 0 &&
		   setresgid(NOBODY, NOBODY, NOBODY) == 0 &&
		   setresuid(NOBODY, NOBODY, NOBODY) == 0, strerror(errno),
		   "image: child drops to nobody"))
		return;
	err = kb_export(fd, IMG_P, p->buf, p->len, NULL);
	check_err(err, EPERM, "image: unprivileged EXPORT");
	err = kb_export(fd, IMG_P, buf, 0, NULL);
	check_err(err, EPERM, "image: unprivileged EXPORT size query");
	im = p->im;
	im.payload = PTR(p->buf);
	err = kb_import(fd, &im, IMG_BAD, 0);
	check_err(err, EPERM, "image: unprivileged IMPORT");
	err = kb_import(fd, &im, IMG_Q, KBLOOM_IMPORT_REPLACE);
	check_err(err, EPERM, "image: unprivileged IMPORT REPLACE");
}

static void image_perm(const struct img *p)
{
	struct kbloom_info info;
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		image_child(g_fd, p);
		fflush(stdout);
		_exit(0);
	}
	if (!check(pid > 0, strerror(errno), "image: fork") ||
	    !check(waitpid(pid, &status, 0) == pid, strerror(errno),
		   "image: waitpid"))
		return;
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child crashed or failed", "image: child exited cleanly");
	check_err(kb_info(g_fd, IMG_BAD, &info), ENOENT,
		  "image: the unprivileged IMPORT created nothing");
	check(img_same(IMG_Q, p), "changed",
	      "image: the unprivileged IMPORT REPLACE changed nothing");
}

/* Plain export and import. */
static void image_plain(struct img *p)
{
	struct kbloom_info info, iq;
	struct kbloom_image im;
	struct kbloom_merge m;
	struct keyset ks = { 0 };
	unsigned char *buf = NULL;
	u64 want = payload_size(IMG_PBITS, false);
	u32 res;
	int err;

	err = kb_create(g_fd, IMG_P, IMG_PBITS, 5, 0, 0, NULL);
	if (!check_ok(err, "image: create %s", IMG_P))
		return;
	if (!keyset_tag(&ks, "ix", IMG_KEYS) ||
	    !ks_add(IMG_P, &ks, 0, IMG_KEYS, "image"))
		goto out;
	kb_skey(g_fd, KBLOOM_IOC_QUERY, IMG_P, "ix:0", &res);
	if (!check_ok(kb_info(g_fd, IMG_P, &info), "image: INFO %s", IMG_P))
		goto out;

	/* Too small: ENOBUFS, the size reported, nothing copied. */
	buf = malloc(want + 64);
	if (!check(buf != NULL, "out of memory", "image: alloc"))
		goto out;
	memset(buf, 0xa5, want + 64);
	err = kb_export(g_fd, IMG_P, buf, 0, &im);
	if (check_err(err, ENOBUFS, "image: EXPORT payload_len 0"))
		check_u64(im.payload_len, want,
			  "image: ENOBUFS reports (bits + 63) / 64 * 8");
	err = kb_export(g_fd, IMG_P, buf, want - 8, &im);
	if (check_err(err, ENOBUFS, "image: EXPORT payload_len 8 short"))
		check_u64(im.payload_len, want,
			  "image: ENOBUFS (8 short) reports the size");
	check(all_bytes(buf, want + 64, 0xa5), "the buffer was written",
	      "image: a too-small EXPORT copied nothing (buffer untouched)");

	/* A larger buffer than needed: exactly the payload is written. */
	err = kb_export(g_fd, IMG_P, buf, want + 64, &im);
	if (!check_ok(err, "image: EXPORT %s", IMG_P))
		goto out;
	check_u64(im.payload_len, want, "image: EXPORT payload_len out");
	check_u64(im.bits, info.bits, "image: EXPORT bits == INFO");
	check_u64(im.hashes, info.hashes, "image: EXPORT hashes == INFO");
	check_u64(im.flags, info.flags, "image: EXPORT flags == INFO");
	check_u64(im.adds, info.adds, "image: EXPORT adds == INFO");
	check_u64(im.capacity, info.capacity, "image: EXPORT capacity == INFO");
	check_u64(im.fpr_ppb, info.fpr_ppb, "image: EXPORT fpr_ppb == INFO");
	check_u64(im.hash_scheme, g_scheme,
		  "image: EXPORT hash_scheme (the default)");
	check_u64(popcount_bytes(buf, want), info.bits_set,
		  "image: payload popcount == INFO bits_set");
	check(pad_zero(buf, want, IMG_PBITS), "a padding bit is set",
	      "image: payload padding past m is zero");
	check(all_bytes(buf + want, 64, 0xa5), "bytes past it written",
	      "image: EXPORT wrote nothing past payload_len");
	p->im = im;
	p->buf = buf;
	p->len = want;
	buf = NULL;

	/* Import under a new name: the same filter. */
	im = p->im;
	err = kb_import(g_fd, &im, IMG_Q, 0);
	if (!check_ok(err, "image: IMPORT as %s", IMG_Q))
		goto out;
	err = kb_info(g_fd, IMG_Q, &iq);
	if (check_ok(err, "image: INFO %s", IMG_Q)) {
		check(iq.bits == info.bits && iq.hashes == info.hashes &&
		      iq.flags == info.flags && iq.bits_set == info.bits_set,
		      "differs", "image: imported bits, hashes, flags, bits_set");
		check(iq.capacity == info.capacity &&
		      iq.fpr_ppb == info.fpr_ppb && iq.adds == p->im.adds,
		      "differs",
		      "image: imported capacity, fpr_ppb, adds as in the image");
		check_u64(iq.hash_scheme, p->im.hash_scheme,
			  "image: imported hash_scheme");
	}
	check_u64((u64)ks_hits(g_fd, IMG_Q, &ks, 0, IMG_KEYS), IMG_KEYS,
		  "image: every key present in the import");
	check(img_same(IMG_Q, p), "differs",
	      "image: export of the import == the original export (seed too)");
	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, IMG_P, IMG_Q, &m);
	if (check_ok(err, "image: MERGE original <- import (same seed)"))
		check_u64(m.mismatch, 0, "image: import is compatible");
	err = kb_merge(g_fd, KBLOOM_IOC_COMPARE, IMG_P, IMG_Q, &m);
	if (check_ok(err, "image: COMPARE original, import"))
		check(m.bits_union == info.bits_set &&
		      m.bits_inter == info.bits_set, "differ",
		      "image: original and import hold the same bits");
out:
	free(buf);
	keyset_free(&ks);
}

/* Counting export and import: nibbles, saturation. */
static void image_counting(struct img *c)
{
	struct kbloom_info info, iq;
	struct kbloom_image im;
	u64 want = payload_size(IMG_CBITS, true), i, nz = 0, sat = 0;
	u32 res, j;
	int err, first;
	char key[16];

	err = kb_create_ex(g_fd, IMG_C, IMG_CBITS, 4, KBLOOM_CREATE_COUNTING,
			   NULL, NULL);
	if (!check_ok(err, "image: create counting %s", IMG_C))
		return;
	check_u64(add_n(IMG_C, "sat", 20), 0, "image: ADD sat 20 times");
	for (j = 0; j < 50; j++) {
		snprintf(key, sizeof(key), "c%u", j);
		check_u64(add_n(IMG_C, key, 1), 0, "image: ADD %s", key);
	}
	if (!check_ok(kb_info(g_fd, IMG_C, &info), "image: INFO %s", IMG_C))
		return;
	err = kb_export(g_fd, IMG_C, NULL, 0, &im);
	if (check_err(err, ENOBUFS, "image: counting EXPORT size query"))
		check_u64(im.payload_len, want,
			  "image: counting payload is (4m + 63) / 64 * 8 bytes");
	if (!img_take(IMG_C, c, "counting"))
		return;
	check_u64(c->im.flags, KBLOOM_CREATE_COUNTING,
		  "image: counting EXPORT flags");
	check(c->im.bits == IMG_CBITS && c->im.hashes == 4, "differs",
	      "image: counting EXPORT bits, hashes");
	for (i = 0; i < IMG_CBITS && c->len == want; i++) {
		unsigned int v = (c->buf[i / 2] >> (4 * (i % 2))) & 0xf;

		nz += v != 0;
		sat += v == KBLOOM_COUNTER_MAX;
	}
	check_u64(nz, info.bits_set,
		  "image: non-zero counters in the payload == INFO bits_set");
	check_u64(sat, info.saturated,
		  "image: counters at 15 in the payload == INFO saturated");
	check_range(sat, 1, 4, "image: the saturated key shows in the payload");
	check(pad_zero(c->buf, c->len, 4 * (u64)IMG_CBITS),
	      "a padding counter is set",
	      "image: counting payload padding past m is zero");

	err = kb_import(g_fd, &c->im, IMG_CQ, 0);
	if (!check_ok(err, "image: IMPORT counting as %s", IMG_CQ))
		return;
	err = kb_info(g_fd, IMG_CQ, &iq);
	if (check_ok(err, "image: INFO %s", IMG_CQ))
		check(iq.flags == KBLOOM_CREATE_COUNTING &&
		      iq.bits_set == info.bits_set &&
		      iq.saturated == info.saturated, "differs",
		      "image: imported counting filter: flags, bits_set, saturated");
	check(img_same(IMG_CQ, c), "differs",
	      "image: export of the counting import is identical");
	err = kb_skey(g_fd, KBLOOM_IOC_REMOVE, IMG_CQ, "c7", &res);
	if (check_ok(err, "image: REMOVE c7 from the import"))
		check_u64(res, 1, "image: imported counters can be removed");
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, IMG_CQ, "c7", &res);
	check(err == 0 && res == 0, "still present",
	      "image: c7 gone from the import after one remove");
	check_u64(remove_n(IMG_CQ, "sat", 20, &first), 0,
		  "image: REMOVE sat 20 times from the import");
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, IMG_CQ, "sat", &res);
	check(err == 0 && res == 1, "absent",
	      "image: imported saturated counters stay");
}

/* ---- REPLACE and its atomicity ---- */

static int img_stop;

struct img_reader {
	pthread_t tid;
	int fd;
	char keys[64 * 16];
	u32 lens[64];
	u64 bytes;
	unsigned long batches;	/* atomic: the main thread waits on it */
	unsigned long gen_x, gen_y, both, bad, enoent, zmiss;
	const char *bad_what;
	int bad_err;
};

static void img_reader_bad(struct img_reader *r, const char *what, int err)
{
	if (!r->bad++) {
		r->bad_what = what;
		r->bad_err = err;
	}
}

static void *img_reader_fn(void *arg)
{
	struct img_reader *r = arg;
	struct kbloom_batch out;
	unsigned char bm[8];
	char zk[16];
	u32 i, j, x, y, zl, res;
	int err;

	for (i = 0; !__atomic_load_n(&img_stop, __ATOMIC_ACQUIRE); i++) {
		memset(bm, 0, sizeof(bm));
		err = kb_batch(r->fd, KBLOOM_IOC_QUERY_BATCH, IMG_R, r->keys,
			       r->lens, bm, r->bytes, 64, &out);
		if (err == ENOENT) {
			r->enoent++;
		} else if (err) {
			img_reader_bad(r, "QUERY_BATCH", err);
		} else if (out.done != 64 || out.hits != bits_count(bm, 64)) {
			img_reader_bad(r, "QUERY_BATCH done/hits", 0);
		} else {
			/* Even slots are X keys, odd slots Y keys. */
			for (j = 0, x = 0, y = 0; j < 64; j++) {
				if (bit_get(bm, j))
					*(j % 2 ? &y : &x) += 1;
			}
			if (x == 32 && y == 32)
				r->both++;
			else if (x == 32)
				r->gen_x++;
			else if (y == 32)
				r->gen_y++;
			else
				img_reader_bad(r, "mixed batch (X and Y)", 0);
		}
		__atomic_add_fetch(&r->batches, 1, __ATOMIC_RELEASE);
		/* A key in both images: present whatever the generation. */
		zl = (u32)snprintf(zk, sizeof(zk), "rz:%u", i % IMG_ZKEYS);
		err = kb_key(r->fd, KBLOOM_IOC_QUERY, IMG_R, zk, zl, &res);
		if (err == ENOENT)
			r->enoent++;
		else if (err)
			img_reader_bad(r, "QUERY", err);
		else if (res != 1)
			r->zmiss++;
	}
	return NULL;
}

static void image_replace_load(const struct img *ix, const struct img *iy)
{
	struct img_reader rd[IMG_READERS];
	unsigned long fails = 0, bx = 0, by = 0, bb = 0;
	int i, j, err, first_err = 0, started = 0;
	char detail[200], et[96];
	struct timespec ts = { 0, 2000000 };

	memset(rd, 0, sizeof(rd));
	for (i = 0; i < IMG_READERS; i++) {
		u64 pos = 0;

		for (j = 0; j < 64; j++) {
			/* X keys rx:0..31 and Y keys ry:0..31, interleaved. */
			rd[i].lens[j] = (u32)snprintf(
				rd[i].keys + pos, 16, "r%c:%d",
				j % 2 ? 'y' : 'x', (j / 2 + 32 * i) % 1000);
			pos += rd[i].lens[j];
		}
		rd[i].bytes = pos;
		/* Queries need no write access: read-only fds. */
		rd[i].fd = open(g_dev, O_RDONLY);
		if (!check(rd[i].fd >= 0, strerror(errno),
			   "image: open reader fd %d", i))
			goto out;
	}
	__atomic_store_n(&img_stop, 0, __ATOMIC_RELEASE);
	for (i = 0; i < IMG_READERS; i++) {
		err = pthread_create(&rd[i].tid, NULL, img_reader_fn, &rd[i]);
		if (!check(err == 0, strerror(err), "image: start reader %d",
			   i))
			break;
		started++;
	}
	/* Let every reader get going before the first swap. */
	for (i = 0; i < started; i++)
		while (!__atomic_load_n(&rd[i].batches, __ATOMIC_ACQUIRE))
			nanosleep(&ts, NULL);
	for (i = 0; i < IMG_REPLACES && started == IMG_READERS; i++) {
		err = kb_import(g_fd, i % 2 ? &iy->im : &ix->im, IMG_R,
				KBLOOM_IMPORT_REPLACE);
		if (err && !fails++)
			first_err = err;
		nanosleep(&ts, NULL);
	}
	__atomic_store_n(&img_stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < started; i++)
		pthread_join(rd[i].tid, NULL);
	if (started != IMG_READERS)
		goto out;

	snprintf(detail, sizeof(detail), "%lu failed, first %s", fails,
		 errtext(first_err, et, sizeof(et)));
	check(fails == 0, detail, "image: %d IMPORT REPLACEs under load",
	      IMG_REPLACES);
	for (i = 0; i < IMG_READERS; i++) {
		snprintf(detail, sizeof(detail),
			 "%lu bad, first %s: %s", rd[i].bad,
			 rd[i].bad_what ? rd[i].bad_what : "?",
			 errtext(rd[i].bad_err, et, sizeof(et)));
		check(rd[i].bad == 0, detail,
		      "image: reader %d: every batch all-X or all-Y", i);
		snprintf(detail, sizeof(detail), "%lu ENOENT", rd[i].enoent);
		check(rd[i].enoent == 0, detail,
		      "image: reader %d: the filter was never missing", i);
		snprintf(detail, sizeof(detail), "%lu misses", rd[i].zmiss);
		check(rd[i].zmiss == 0, detail,
		      "image: reader %d: keys in both images always present", i);
		check(rd[i].batches > 0, "no batch ran",
		      "image: reader %d made progress", i);
		bx += rd[i].gen_x;
		by += rd[i].gen_y;
		bb += rd[i].both;
	}
	printf("# image: batches saw X %lu, Y %lu, both %lu\n", bx, by, bb);
	/* 50 replaces starting with X end with Y. */
	check(img_same(IMG_R, iy), "differs",
	      "image: after the replaces %s holds image Y", IMG_R);
out:
	for (i = 0; i < IMG_READERS; i++)
		if (rd[i].fd > 0)
			close(rd[i].fd);
}

static void image_replace(void)
{
	struct keyset xs = { 0 }, ys = { 0 }, zs = { 0 };
	struct img ix = { 0 }, iy = { 0 };
	struct kbloom_image im;
	struct kbloom_info info;
	struct kbloom_merge m;
	unsigned char *b2 = NULL;
	int err;

	/* R: X keys, 100000 bits, 5 hashes; S: Y keys, 200003 bits, 6. */
	if (!check_ok(kb_create(g_fd, IMG_R, 100000, 5, 0, 0, NULL),
		      "image: create %s", IMG_R) ||
	    !check_ok(kb_create(g_fd, IMG_S, 200003, 6, 0, 0, NULL),
		      "image: create %s", IMG_S))
		return;
	if (!keyset_tag(&xs, "rx", 1000) || !keyset_tag(&ys, "ry", 1000) ||
	    !keyset_tag(&zs, "rz", IMG_ZKEYS) ||
	    !ks_add(IMG_R, &xs, 0, 1000, "image") ||
	    !ks_add(IMG_R, &zs, 0, IMG_ZKEYS, "image") ||
	    !ks_add(IMG_S, &ys, 0, 1000, "image") ||
	    !ks_add(IMG_S, &zs, 0, IMG_ZKEYS, "image"))
		goto out;
	if (!img_take(IMG_R, &ix, "X") || !img_take(IMG_S, &iy, "Y"))
		goto out;

	err = kb_import(g_fd, &iy.im, IMG_R, KBLOOM_IMPORT_REPLACE);
	if (!check_ok(err, "image: IMPORT REPLACE %s with S's image", IMG_R))
		goto out;
	err = kb_info(g_fd, IMG_R, &info);
	if (check_ok(err, "image: INFO %s after REPLACE", IMG_R))
		check(info.bits == 200003 && info.hashes == 6, "old size",
		      "image: REPLACE took S's bits and hashes");
	check_u64((u64)ks_hits(g_fd, IMG_R, &ys, 0, 1000), 1000,
		  "image: after REPLACE every Y key present");
	check_u64((u64)ks_hits(g_fd, IMG_R, &xs, 0, 1000), 0,
		  "image: after REPLACE every X key absent");
	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, IMG_R, IMG_S, &m);
	if (check_ok(err, "image: MERGE %s <- %s after REPLACE", IMG_R,
		     IMG_S))
		check_u64(m.mismatch, 0, "image: REPLACE took S's seed too");
	check(img_same(IMG_S, &iy), "changed",
	      "image: the exported filter S is unchanged");

	/* Failed replaces leave R byte for byte as it was. */
	im = ix.im;
	im.payload_len += 8;
	err = kb_import(g_fd, &im, IMG_R, KBLOOM_IMPORT_REPLACE);
	check_err(err, EINVAL, "image: IMPORT REPLACE with payload_len 8 over");
	check(img_same(IMG_R, &iy), "changed",
	      "image: the failed REPLACE (size) left R intact");
	b2 = malloc(ix.len);
	if (check(b2 != NULL, "out of memory", "image: alloc")) {
		memcpy(b2, ix.buf, ix.len);
		b2[ix.len - 1] |= 0x80;
		im = ix.im;
		im.payload = PTR(b2);
		err = kb_import(g_fd, &im, IMG_R, KBLOOM_IMPORT_REPLACE);
		check_err(err, EINVAL,
			  "image: IMPORT REPLACE with a padding bit set");
		check(img_same(IMG_R, &iy), "changed",
		      "image: the failed REPLACE (padding) left R intact");
	}
	im = ix.im;
	im.hashes = 0;
	err = kb_import(g_fd, &im, IMG_R, KBLOOM_IMPORT_REPLACE);
	check_err(err, EINVAL, "image: IMPORT REPLACE with hashes 0");
	check(img_same(IMG_R, &iy), "changed",
	      "image: the failed REPLACE (hashes) left R intact");

	image_replace_load(&ix, &iy);
out:
	free(b2);
	img_free(&ix);
	img_free(&iy);
	keyset_free(&xs);
	keyset_free(&ys);
	keyset_free(&zs);
}

static void test_image(void)
{
	static const char *const all[] = {
		IMG_P, IMG_Q, IMG_C, IMG_CQ, IMG_R, IMG_S, IMG_BAD,
	};
	struct img p = { 0 }, c = { 0 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(all); i++)
		cleanup(all[i]);
	image_plain(&p);
	image_counting(&c);
	if (p.buf) {
		image_bad_inputs(&p, &c);
		image_perm(&p);
	}
	image_replace();
	img_free(&p);
	img_free(&c);
	for (i = 0; i < ARRAY_SIZE(all); i++)
		cleanup(all[i]);
}

/* ------------------------------------------------------------------ */
/* Group: stress                                                      */
/* ------------------------------------------------------------------ */

#define STRESS_F	"stress_f"
#define STRESS_BITS	(1u << 20)
#define STRESS_HASHES	7
#define STRESS_WORKERS	4
#define STRESS_SECS	3
#define STRESS_KEYS	20000u	/* per worker, final phase */
#define STRESS_CHUNK	1000u

struct stress_worker {
	pthread_t tid;
	int id;
	int fd;
	unsigned long ops;
	unsigned long ok;
	unsigned long enoent;
	unsigned long bad;	/* unexpected errnos or results */
	const char *bad_op;
	int bad_err;
	unsigned long fneg;	/* final phase: false negatives */
};

static int stress_stop;
static pthread_barrier_t stress_barrier;

static bool stress_stopped(void)
{
	return __atomic_load_n(&stress_stop, __ATOMIC_ACQUIRE);
}

static void stress_bad(struct stress_worker *w, const char *op, int err)
{
	if (!w->bad++) {
		w->bad_op = op;
		w->bad_err = err;
	}
}

/* During the churn, only success and ENOENT are acceptable. */
static bool stress_note(struct stress_worker *w, const char *op, int err)
{
	w->ops++;
	if (err == 0) {
		w->ok++;
		return true;
	}
	if (err == ENOENT)
		w->enoent++;
	else
		stress_bad(w, op, err);
	return false;
}

static u32 stress_key(char *buf, size_t len, const char *tag, int id, u32 j)
{
	return (u32)snprintf(buf, len, "%s%d-%u", tag, id, j);
}

static void *stress_churn_worker(void *arg)
{
	struct stress_worker *w = arg;
	char key[32], bkeys[16 * 32];
	u32 blens[16];
	unsigned char bres[2];
	struct kbloom_batch out;
	struct kbloom_info info;
	u32 i, j, res, pos;
	int err;

	for (i = 0; !stress_stopped(); i++) {
		u32 len = stress_key(key, sizeof(key), "c", w->id, i);

		err = kb_key(w->fd, KBLOOM_IOC_ADD, STRESS_F, key, len, &res);
		if (stress_note(w, "ADD", err) && res != 0)
			stress_bad(w, "ADD result", 0);
		err = kb_key(w->fd, KBLOOM_IOC_QUERY, STRESS_F, key, len,
			     &res);
		if (stress_note(w, "QUERY", err) && res > 1)
			stress_bad(w, "QUERY result", 0);
		if (i % 8 == 0) {
			err = kb_key(w->fd, KBLOOM_IOC_TEST_AND_ADD, STRESS_F,
				     key, len, &res);
			if (stress_note(w, "TEST_AND_ADD", err) && res > 1)
				stress_bad(w, "TEST_AND_ADD result", 0);
		}
		if (i % 32 == 0) {
			for (j = 0, pos = 0; j < 16; j++) {
				blens[j] = stress_key(bkeys + pos, 32, "b",
						      w->id, i + j);
				pos += blens[j];
			}
			err = kb_batch(w->fd, KBLOOM_IOC_ADD_BATCH, STRESS_F,
				       bkeys, blens, bres, pos, 16, &out);
			if (stress_note(w, "ADD_BATCH", err) &&
			    out.done != 16)
				stress_bad(w, "ADD_BATCH done", 0);
			else if (err == ENOENT && out.done > 16 &&
				 out.done != RESULT_POISON)
				stress_bad(w, "ADD_BATCH done on ENOENT", 0);
			err = kb_batch(w->fd, KBLOOM_IOC_QUERY_BATCH, STRESS_F,
				       bkeys, blens, bres, pos, 16, &out);
			if (stress_note(w, "QUERY_BATCH", err) &&
			    (out.done != 16 || out.hits > 16))
				stress_bad(w, "QUERY_BATCH done/hits", 0);
		}
		if (i % 64 == 0) {
			err = kb_info(w->fd, STRESS_F, &info);
			if (stress_note(w, "INFO", err) &&
			    (info.bits != STRESS_BITS ||
			     info.hashes != STRESS_HASHES))
				stress_bad(w, "INFO size", 0);
		}
	}
	return NULL;
}

struct stress_destroyer {
	pthread_t tid;
	int fd;
	unsigned long cycles;
	unsigned long bad;
	const char *bad_op;
	int bad_err;
};

static void *stress_destroyer_fn(void *arg)
{
	struct stress_destroyer *d = arg;
	unsigned long i;
	int err;

	for (i = 0; !stress_stopped(); i++) {
		/* Only this thread destroys and creates: both must work. */
		err = kb_destroy(d->fd, STRESS_F);
		if (err && !d->bad++) {
			d->bad_op = "DESTROY";
			d->bad_err = err;
		}
		err = kb_create(d->fd, STRESS_F, STRESS_BITS, STRESS_HASHES,
				0, 0, NULL);
		if (err && !d->bad++) {
			d->bad_op = "CREATE";
			d->bad_err = err;
		}
		if (i % 8 == 7) {
			err = kb_clear(d->fd, STRESS_F);
			if (err && !d->bad++) {
				d->bad_op = "CLEAR";
				d->bad_err = err;
			}
		}
		d->cycles++;
	}
	return NULL;
}

/* Final phase: add own keys, wait for all, then check every key. */
static void *stress_final_worker(void *arg)
{
	struct stress_worker *w = arg;
	u32 lens[STRESS_CHUNK], j, k, pos, count, res;
	unsigned char *bm = NULL;
	char *keys = NULL;
	struct kbloom_batch out;
	char key[32];
	int err, id;

	keys = malloc(STRESS_CHUNK * 32);
	bm = malloc(STRESS_CHUNK / 8 + 1);
	if (!keys || !bm) {
		stress_bad(w, "malloc", ENOMEM);
		pthread_barrier_wait(&stress_barrier);
		goto out;
	}
	/* First half one at a time, second half in batches. */
	for (j = 0; j < STRESS_KEYS / 2; j++) {
		u32 len = stress_key(key, sizeof(key), "f", w->id, j);

		err = kb_key(w->fd, KBLOOM_IOC_ADD, STRESS_F, key, len, NULL);
		if (err)
			stress_bad(w, "final ADD", err);
	}
	for (; j < STRESS_KEYS; j += count) {
		count = STRESS_KEYS - j < STRESS_CHUNK ? STRESS_KEYS - j :
							  STRESS_CHUNK;
		for (k = 0, pos = 0; k < count; k++) {
			lens[k] = stress_key(keys + pos, 32, "f", w->id, j + k);
			pos += lens[k];
		}
		err = kb_batch(w->fd, KBLOOM_IOC_ADD_BATCH, STRESS_F, keys,
			       lens, NULL, pos, count, &out);
		if (err || out.done != count)
			stress_bad(w, "final ADD_BATCH", err);
	}

	pthread_barrier_wait(&stress_barrier);

	/* Every worker's keys by batch, this worker's also one by one. */
	for (id = 0; id < STRESS_WORKERS; id++) {
		for (j = 0; j < STRESS_KEYS; j += count) {
			count = STRESS_KEYS - j < STRESS_CHUNK ?
				STRESS_KEYS - j : STRESS_CHUNK;
			for (k = 0, pos = 0; k < count; k++) {
				lens[k] = stress_key(keys + pos, 32, "f", id,
						     j + k);
				pos += lens[k];
			}
			memset(bm, 0, STRESS_CHUNK / 8 + 1);
			err = kb_batch(w->fd, KBLOOM_IOC_QUERY_BATCH, STRESS_F,
				       keys, lens, bm, pos, count, &out);
			if (err || out.done != count) {
				stress_bad(w, "final QUERY_BATCH", err);
				continue;
			}
			w->fneg += count - bits_count(bm, count);
		}
	}
	for (j = 0; j < STRESS_KEYS; j++) {
		u32 len = stress_key(key, sizeof(key), "f", w->id, j);

		err = kb_key(w->fd, KBLOOM_IOC_QUERY, STRESS_F, key, len, &res);
		if (err)
			stress_bad(w, "final QUERY", err);
		else if (res != 1)
			w->fneg++;
	}
out:
	free(keys);
	free(bm);
	return NULL;
}

static void stress_report_bad(const char *who, unsigned long bad,
			      const char *op, int err)
{
	char detail[160], et[96];

	snprintf(detail, sizeof(detail), "%lu bad, first %s: %s", bad,
		 op ? op : "?", err ? errtext(err, et, sizeof(et)) :
				      "bad output");
	check(bad == 0, detail, "stress: %s saw only success or ENOENT", who);
}

static void test_stress(void)
{
	struct stress_worker w[STRESS_WORKERS];
	struct stress_destroyer d;
	struct kbloom_info info;
	unsigned long ops = 0, oks = 0, enoent = 0, fneg = 0;
	u64 adds_before = 0;
	bool have_info;
	int i, err, started = 0;
	char detail[160];

	memset(w, 0, sizeof(w));
	memset(&d, 0, sizeof(d));
	for (i = 0; i < STRESS_WORKERS; i++)
		w[i].fd = -1;
	d.fd = -1;

	cleanup(STRESS_F);
	err = kb_create(g_fd, STRESS_F, STRESS_BITS, STRESS_HASHES, 0, 0,
			NULL);
	if (!check_ok(err, "stress: create %s", STRESS_F))
		return;

	/* Own fds: concurrent users of the device, not only of a file. */
	for (i = 0; i < STRESS_WORKERS; i++) {
		w[i].id = i;
		w[i].fd = open(g_dev, O_RDWR);
		if (!check(w[i].fd >= 0, strerror(errno),
			   "stress: open worker %d fd", i))
			goto out;
	}
	d.fd = open(g_dev, O_RDWR);
	if (!check(d.fd >= 0, strerror(errno), "stress: open destroyer fd"))
		goto out;

	__atomic_store_n(&stress_stop, 0, __ATOMIC_RELEASE);
	for (i = 0; i < STRESS_WORKERS; i++) {
		err = pthread_create(&w[i].tid, NULL, stress_churn_worker,
				     &w[i]);
		if (!check(err == 0, strerror(err),
			   "stress: start worker %d", i))
			break;
		started++;
	}
	err = pthread_create(&d.tid, NULL, stress_destroyer_fn, &d);
	check(err == 0, strerror(err), "stress: start destroyer");
	if (err == 0)
		sleep(STRESS_SECS);
	__atomic_store_n(&stress_stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < started; i++)
		pthread_join(w[i].tid, NULL);
	if (err == 0)
		pthread_join(d.tid, NULL);
	if (started != STRESS_WORKERS || err)
		goto out;

	for (i = 0; i < STRESS_WORKERS; i++) {
		char who[32];

		snprintf(who, sizeof(who), "worker %d", i);
		stress_report_bad(who, w[i].bad, w[i].bad_op, w[i].bad_err);
		ops += w[i].ops;
		oks += w[i].ok;
		enoent += w[i].enoent;
	}
	stress_report_bad("destroyer", d.bad, d.bad_op, d.bad_err);
	snprintf(detail, sizeof(detail),
		 "%lu destroy/create cycles, %lu ops (%lu ok, %lu ENOENT)",
		 d.cycles, ops, oks, enoent);
	printf("# stress: %s\n", detail);
	check(d.cycles >= 10, detail, "stress: the filter was churned");
	check(oks > 0, detail, "stress: workers made progress");

	/* Stable phase: the destroyer's last create left it in place. */
	have_info = kb_info(g_fd, STRESS_F, &info) == 0;
	if (!check(have_info, "filter missing",
		   "stress: filter exists after the churn"))
		goto out;
	adds_before = info.adds;
	for (i = 0; i < STRESS_WORKERS; i++) {
		w[i].bad = 0;
		w[i].bad_op = NULL;
		w[i].bad_err = 0;
	}
	err = pthread_barrier_init(&stress_barrier, NULL, STRESS_WORKERS);
	if (!check(err == 0, strerror(err), "stress: barrier init"))
		goto out;
	started = 0;
	for (i = 0; i < STRESS_WORKERS; i++) {
		err = pthread_create(&w[i].tid, NULL, stress_final_worker,
				     &w[i]);
		if (!check(err == 0, strerror(err),
			   "stress: start final worker %d", i))
			break;
		started++;
	}
	/* A missing worker would hang the barrier: nothing sane to do. */
	if (started != STRESS_WORKERS) {
		check(false, "cannot continue", "stress: final phase");
		exit(1);
	}
	for (i = 0; i < STRESS_WORKERS; i++)
		pthread_join(w[i].tid, NULL);
	pthread_barrier_destroy(&stress_barrier);
	for (i = 0; i < STRESS_WORKERS; i++) {
		char who[32];
		char et[96];

		snprintf(who, sizeof(who), "final worker %d", i);
		snprintf(detail, sizeof(detail), "%lu failed, first %s: %s",
			 w[i].bad, w[i].bad_op ? w[i].bad_op : "?",
			 errtext(w[i].bad_err, et, sizeof(et)));
		check(w[i].bad == 0, detail, "stress: %s calls succeeded", who);
		fneg += w[i].fneg;
	}
	snprintf(detail, sizeof(detail), "%lu keys lost", fneg);
	check(fneg == 0, detail,
	      "stress: no false negatives after concurrent adds");
	err = kb_info(g_fd, STRESS_F, &info);
	if (check_ok(err, "stress: INFO after the final phase"))
		check_u64(info.adds - adds_before,
			  (u64)STRESS_WORKERS * STRESS_KEYS,
			  "stress: INFO adds counted every concurrent add");
out:
	for (i = 0; i < STRESS_WORKERS; i++)
		if (w[i].fd >= 0)
			close(w[i].fd);
	if (d.fd >= 0)
		close(d.fd);
	cleanup(STRESS_F);
}

/* ------------------------------------------------------------------ */
/* Group: sysfs                                                       */
/* ------------------------------------------------------------------ */

#define SYSFS_F "sysfs_t"

/*
 * Read a sysfs attribute that must hold exactly one decimal integer and a
 * newline. Reports the format check; returns false if it failed.
 */
static bool sysfs_u64(const char *path, u64 *val)
{
	char buf[64], *end;
	ssize_t n;
	int fd, i;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return check(false, strerror(errno), "sysfs: open %s", path);
	n = read(fd, buf, sizeof(buf) - 1);
	i = errno;
	close(fd);
	if (n < 0)
		return check(false, strerror(i), "sysfs: read %s", path);
	buf[n] = '\0';
	for (i = 0; i < n - 1; i++)
		if (buf[i] < '0' || buf[i] > '9')
			break;
	if (!check(n >= 2 && n < (ssize_t)sizeof(buf) - 1 && i == n - 1 &&
		   buf[n - 1] == '\n', "not one decimal integer + newline",
		   "sysfs: %s is an integer", path))
		return false;
	errno = 0;
	*val = strtoull(buf, &end, 10);
	return check(errno == 0 && *end == '\n', "out of range",
		     "sysfs: %s parses", path);
}

static void test_sysfs(void)
{
	static const char *const files[] = {
		"bits", "hashes", "capacity", "bits_set", "adds", "queries",
		"hits", "memory_bytes",
	};
	const char *dir = SYSFS_ROOT "/filters/" SYSFS_F;
	struct keyset ks = { 0 };
	struct kbloom_batch out;
	struct kbloom_info info;
	u64 val[ARRAY_SIZE(files)], want[ARRAY_SIZE(files)];
	u64 count, used, budget;
	bool have[ARRAY_SIZE(files)];
	char path[256];
	struct stat st;
	size_t i;
	int err;

	cleanup(SYSFS_F);
	err = kb_create(g_fd, SYSFS_F, 100000, 5, 0, 0, NULL);
	if (!check_ok(err, "sysfs: create %s", SYSFS_F))
		return;
	if (!keyset_gen(&ks, 1000, 3, 0, 32))
		goto out;
	err = kb_batch(g_fd, KBLOOM_IOC_ADD_BATCH, SYSFS_F, ks.keys, ks.lens,
		       NULL, ks.bytes, ks.count, &out);
	check(err == 0 && out.done == 1000, "ADD_BATCH failed",
	      "sysfs: add 1000 keys");
	err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, SYSFS_F, ks.keys,
		       ks.lens, NULL, ks.off[500], 500, &out);
	check(err == 0 && out.done == 500 && out.hits == 500,
	      "QUERY_BATCH failed or missed", "sysfs: query 500 of them");
	err = kb_info(g_fd, SYSFS_F, &info);
	if (!check_ok(err, "sysfs: INFO %s", SYSFS_F))
		goto out;
	check_range(info.bits_set, 1, 5000, "sysfs: INFO bits_set in 1..5000");

	want[0] = 100000;
	want[1] = 5;
	want[2] = 0;
	want[3] = info.bits_set;
	want[4] = 1000;
	want[5] = 500;
	want[6] = 500;
	want[7] = info.memory_bytes;
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		have[i] = sysfs_u64(path, &val[i]);
		if (have[i])
			check_u64(val[i], want[i], "sysfs: %s", files[i]);
	}

	snprintf(path, sizeof(path), SYSFS_ROOT "/filter_count");
	if (sysfs_u64(path, &count))
		check(count >= 1, "zero with a filter present",
		      "sysfs: filter_count >= 1");
	snprintf(path, sizeof(path), SYSFS_ROOT "/memory_used");
	if (sysfs_u64(path, &used) && have[7])
		check(used >= val[7], "less than the filter's own memory",
		      "sysfs: memory_used >= memory_bytes");
	snprintf(path, sizeof(path), SYSFS_ROOT "/memory_budget");
	if (sysfs_u64(path, &budget))
		check(budget > 0 && budget >= used, "zero or below memory_used",
		      "sysfs: memory_budget > 0 and >= memory_used");

	err = kb_destroy(g_fd, SYSFS_F);
	if (check_ok(err, "sysfs: destroy %s", SYSFS_F)) {
		err = stat(dir, &st) ? errno : 0;
		check_err(err, ENOENT, "sysfs: %s gone after destroy", dir);
	}
out:
	keyset_free(&ks);
	cleanup(SYSFS_F);
}

/* ------------------------------------------------------------------ */
/* Driver                                                             */
/* ------------------------------------------------------------------ */

static const struct test_group {
	const char *name;
	void (*fn)(void);
	const char *desc;
} groups[] = {
	{ "version", test_version, "KBLOOM_IOC_VERSION contents" },
	{ "badioctl", test_badioctl,
	  "unknown commands, bad pointers, reserved fields, flags" },
	{ "create", test_create, "sizing, limits, names, LIST, ENOENT" },
	{ "keys", test_keys, "single-key add/query/test-and-add, CLEAR" },
	{ "batch", test_batch, "batched calls, FP rate, partial failures" },
	{ "counting", test_counting, "counting filters: REMOVE, saturation" },
	{ "merge", test_merge, "CREATE_LIKE, MERGE, mismatches" },
	{ "compare", test_compare, "COMPARE counts and size estimates" },
	{ "image", test_image, "EXPORT/IMPORT, REPLACE atomicity" },
	{ "perm", test_perm, "read-only fd, unprivileged caller" },
	{ "stress", test_stress, "concurrent use while destroy/re-create" },
	{ "sysfs", test_sysfs, "/sys/kernel/bloom attributes" },
};

static void usage(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s [-d DEV] [-t GROUP] [-l]\n"
		   "  -d DEV    device node (default /dev/bloom)\n"
		   "  -t GROUP  run only GROUP\n"
		   "  -l        list the groups\n", prog);
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	size_t i;
	bool found = false;
	void *shared;
	int opt;

	while ((opt = getopt(argc, argv, "d:t:lh")) != -1) {
		switch (opt) {
		case 'd':
			g_dev = optarg;
			break;
		case 't':
			only = optarg;
			break;
		case 'l':
			for (i = 0; i < ARRAY_SIZE(groups); i++)
				printf("%-10s %s\n", groups[i].name,
				       groups[i].desc);
			return 0;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr, argv[0]);
		return 2;
	}
	if (only) {
		for (i = 0; i < ARRAY_SIZE(groups); i++)
			found |= !strcmp(groups[i].name, only);
		if (!found) {
			fprintf(stderr, "%s: no test group '%s' (try -l)\n",
				argv[0], only);
			return 2;
		}
	}

	/* Line-buffered, so a forked child never repeats parent output. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	shared = mmap(NULL, sizeof(*tap), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	tap = shared;

	g_fd = open(g_dev, O_RDWR);
	if (check(g_fd >= 0, strerror(errno), "open %s O_RDWR", g_dev)) {
		struct kbloom_version v;

		memset(&v, 0, sizeof(v));
		check_ok(ioc(g_fd, KBLOOM_IOC_VERSION, &v),
			 "VERSION: the default hash scheme");
		g_scheme = v.default_hash_scheme ? v.default_hash_scheme :
						   v.hash_scheme;
		for (i = 0; i < ARRAY_SIZE(groups); i++) {
			if (only && strcmp(groups[i].name, only))
				continue;
			printf("# group %s\n", groups[i].name);
			groups[i].fn();
		}
		close(g_fd);
	}
	printf("selftest: %u passed, %u failed\n", tap->passed, tap->failed);
	/*
	 * The plan, after the last result: a run that dies half-way prints
	 * none, and the harness (tap_run in tools/vm/tests.d) fails it.
	 */
	printf("1..%u\n", tap->n);
	return tap->failed ? 1 : 0;
}
