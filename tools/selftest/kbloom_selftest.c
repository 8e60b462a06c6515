// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest - integration test for the kbloom module, run as root
 * inside the test VM with kbloom.ko loaded and /dev/bloom present.
 *
 * Output is TAP-ish: one "ok N - what" or "not ok N - what: detail" line per
 * check, then "selftest: P passed, F failed". The exit status is 0 only when
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
ASSERT_OFF(kbloom_version, reserved, 48);
ASSERT_FSIZE(kbloom_version, reserved, 32);

ASSERT_SIZE(kbloom_create, 96);
ASSERT_OFF(kbloom_create, name, 0);
ASSERT_FSIZE(kbloom_create, name, KBLOOM_NAME_MAX);
ASSERT_OFF(kbloom_create, bits, 32);
ASSERT_OFF(kbloom_create, hashes, 40);
ASSERT_OFF(kbloom_create, fpr_ppb, 44);
ASSERT_OFF(kbloom_create, capacity, 48);
ASSERT_OFF(kbloom_create, flags, 56);
ASSERT_OFF(kbloom_create, reserved0, 60);
ASSERT_OFF(kbloom_create, reserved, 64);
ASSERT_FSIZE(kbloom_create, reserved, 32);

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
ASSERT_OFF(kbloom_info, reserved, 104);
ASSERT_FSIZE(kbloom_info, reserved, 32);

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

/* The command numbers themselves are ABI: the same on both builds. */
_Static_assert(KBLOOM_IOC_VERSION == 0x8050BF00u, "VERSION number");
_Static_assert(KBLOOM_IOC_CREATE == 0xC060BF01u, "CREATE number");
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

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define PTR(p) ((u64)(uintptr_t)(p))
#define PRINTF(a, b) __attribute__((format(printf, a, b)))

/* ioc() returns this when ioctl() returned a positive value: never valid. */
#define KB_BADRET (-1)

#define SYSFS_ROOT "/sys/kernel/bloom"

static const char *g_dev = "/dev/bloom";
static int g_fd = -1;

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
	snprintf(detail, sizeof(detail), "features 0x%llx",
		 (unsigned long long)v.features);
	check((v.features & want_feat) == want_feat, detail,
	      "version: features has BATCH, TEST_AND_ADD and SIZING");
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
};

#define BAD_F		"badioctl_f"
#define BAD_NEW		"badioctl_new"
#define BAD_SENTINEL	"sentinel"

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

static const struct rsv_case rsv_cases[] = {
	RSV(CREATE, kbloom_create, reserved0),
	RSV_I(CREATE, kbloom_create, reserved, 0),
	RSV_I(CREATE, kbloom_create, reserved, 1),
	RSV_I(CREATE, kbloom_create, reserved, 2),
	RSV_I(CREATE, kbloom_create, reserved, 3),
	RSV_I(DESTROY, kbloom_name, reserved, 0),
	RSV_I(DESTROY, kbloom_name, reserved, 1),
	RSV_I(CLEAR, kbloom_name, reserved, 0),
	RSV_I(CLEAR, kbloom_name, reserved, 1),
	RSV_I(INFO, kbloom_info, reserved, 0),
	RSV_I(INFO, kbloom_info, reserved, 1),
	RSV_I(INFO, kbloom_info, reserved, 2),
	RSV_I(INFO, kbloom_info, reserved, 3),
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
};

/* (Re)create the badioctl filter with its sentinel key. */
static bool bad_setup(void)
{
	int err = kb_create(g_fd, BAD_F, 1 << 16, 7, 0, 0, NULL);

	if (!check_ok(err, "badioctl: create %s", BAD_F))
		return false;
	err = kb_skey(g_fd, KBLOOM_IOC_ADD, BAD_F, BAD_SENTINEL, NULL);
	return check_ok(err, "badioctl: add the sentinel key");
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
	case KBLOOM_IOC_TEST_AND_ADD: {
		struct kbloom_key *k = buf;

		set_name(k->name, BAD_F);
		k->key = PTR(key);
		k->len = (u32)strlen(key);
		break;
	}
	default: {
		struct kbloom_batch *b = buf;

		set_name(b->name, BAD_F);
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
	u32 lens[1];
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
		static const u32 bad_flags[] = { 1, 0x80000000u };

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

	/* Each reserved field in turn, in an otherwise valid call. */
	for (i = 0; i < ARRAY_SIZE(rsv_cases); i++) {
		const struct rsv_case *rc = &rsv_cases[i];
		unsigned char *field = (unsigned char *)argbuf + rc->off;
		struct kbloom_info info;
		u32 sres = 0, kres = 0;
		int e1, e2;

		snprintf(key, sizeof(key), "rsv-%zu", i);
		bad_build(rc->cmd, argbuf, key, lens, results);
		if (rc->size == sizeof(u32)) {
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

	/* Unknown commands and bad pointers created nothing. */
	before = kb_count(g_fd);
	check(before >= 1, "LIST failed or lost " BAD_F,
	      "badioctl: LIST still counts the test filter");
out:
	cleanup(BAD_F);
	cleanup(BAD_NEW);
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
	check_u64(info.hash_scheme, KBLOOM_HASH_SCHEME,
		  "create: INFO %s hash_scheme", name);
	check(info.bits_set == 0 && info.adds == 0 && info.queries == 0 &&
	      info.hits == 0, "statistics not zero",
	      "create: INFO %s fresh statistics zero", name);
	check(info.memory_bytes >= (bits + 7) / 8, "smaller than the bitmap",
	      "create: INFO %s memory_bytes >= bits/8", name);
	check(!info.reserved[0] && !info.reserved[1] && !info.reserved[2] &&
	      !info.reserved[3], "non-zero reserved",
	      "create: INFO %s reserved zero", name);
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
		for (i = 0; i < ARRAY_SIZE(groups); i++) {
			if (only && strcmp(groups[i].name, only))
				continue;
			printf("# group %s\n", groups[i].name);
			groups[i].fn();
		}
		close(g_fd);
	}
	printf("selftest: %u passed, %u failed\n", tap->passed, tap->failed);
	return tap->failed ? 1 : 0;
}
