// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_failnth - systematic allocation-failure sweep over kbloom's ioctls.
 *
 * For every ioctl of /dev/bloom that allocates, write N to
 * /proc/thread-self/fail-nth (N = 1, 2, ...), make the call, and read
 * fail-nth back: 0 means the N-th allocation of the call was made to fail,
 * a positive value means the call ran past all its allocations, which ends
 * the sweep for that ioctl. After each injected failure:
 *
 *  - the call failed with ENOMEM (or it absorbed the failure and did its
 *    whole job, e.g. a uevent that could not be sent),
 *  - the filter list is unchanged (LIST, sysfs directories, filter_count),
 *  - the contents of every filter are unchanged (EXPORT payloads compared
 *    byte for byte, parameters and seeds too), and its INFO bits_set still
 *    matches the payload; batched calls that stopped part-way were allowed
 *    to apply exactly the keys before @done, and the filter must equal a
 *    copy to which only those keys were applied,
 *  - /sys/kernel/bloom/memory_used comes back to what the filters are
 *    charged (sysfs memory_charged). Frees are deferred by an RCU grace
 *    period and a workqueue, and the debug kernel's DEBUG_KOBJECT_RELEASE
 *    delays kobject releases by 1-5 s: each step checks memory_used is
 *    not below the charges, the end of each sweep waits for it to be
 *    exactly that, and a sweep that fails this is run again waiting after
 *    every step (-p), to name the step.
 *
 * Needs root, kbloom.ko loaded, CONFIG_FAULT_INJECTION (+ FAILSLAB,
 * FAIL_PAGE_ALLOC, FAULT_INJECTION_DEBUG_FS) and debugfs mounted; without
 * fail-nth it prints "1..0 # SKIP" and exits 0.
 *
 * Output: TAP. "1..N" first, then one "ok"/"not ok" line per ioctl swept,
 * with the number of injection points covered; diagnostics as "# " lines.
 * Exit status 0 only if every sweep passed.
 *
 * Usage: kbloom_failnth [-d DEV] [-v] [-p] [-o ONLY_SUBSTRING]
 *   -v  a line per injected failure;  -p  precise: wait for the deferred
 *   frees after every step (slow on the debug kernel, whose kobject
 *   releases come 1-5 s late); by default only a sweep that leaks is
 *   repeated that way;  -o  only the sweeps whose name has SUBSTRING.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/kbloom.h>

/* set_name() and sleep_ms(), as kbloom_selftest has them. */
#include "../include/kbloom_util.h"

typedef unsigned long long ull;

#define MAXF		32
#define MAX_POINTS	4000	/* a sweep that never ends is a failure */
#define SETTLE_MS	12000	/* deferred frees: RCU + workqueue + kobject */

static const char *dev = "/dev/bloom";
static int kfd = -1;
static int nth_fd = -1;
static bool verbose;
static const char *only;
/*
 * Wait at every step until deferred frees are done and memory_used is
 * exactly what the live filters are charged. Without it (the default,
 * much faster: the debug kernel releases kobjects 1-5 s late), a step
 * only checks memory_used is not below that, and the sweep ends with one
 * wait for it to come back exactly; if it does not, the sweep is run
 * again precisely to find the step that leaked.
 */
static bool precise;
/*
 * What memory_used is expected to exceed the charges by: 0, until a sweep
 * leaks; then what it leaked, so that the steps after it (and the
 * precise rerun that looks for the leaking step) are judged on their own.
 */
static long long mem_offset;
static __u64 features;	/* KBLOOM_IOC_VERSION's */

/* ------------------------------------------------------------------ */
/* Small helpers                                                      */
/* ------------------------------------------------------------------ */

static void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p) {
		printf("Bail out! out of memory\n");
		exit(2);
	}
	return p;
}

static int read_ull(const char *path, ull *v)
{
	char buf[64];
	ssize_t r;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -1;
	buf[r] = 0;
	*v = strtoull(buf, NULL, 10);
	return 0;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = write(fd, s, strlen(s));
	close(fd);
	return r == (ssize_t)strlen(s) ? 0 : -1;
}

static ull memory_used(void)
{
	ull v = ~0ULL;

	read_ull("/sys/kernel/bloom/memory_used", &v);
	return v;
}

/* ------------------------------------------------------------------ */
/* Fault injection                                                    */
/* ------------------------------------------------------------------ */

/*
 * fail-nth counts only the allocations the injectors look at: make them
 * look at all of them (sleeping ones, highmem/user pages - vmalloc'd
 * bitmaps are __GFP_HIGHMEM - and order 0), never fail one on their own
 * (probability 0: fail-nth takes precedence) and never print (verbose 0:
 * the harness fails a run whose kernel log has a "Call Trace:").
 */
static int configure_injectors(void)
{
	static const char *const common[][2] = {
		{ "verbose", "0" },
		{ "probability", "0" },
		{ "interval", "1" },
		{ "times", "-1" },
		{ "space", "0" },
		{ "task-filter", "N" },
		{ "ignore-gfp-wait", "N" },
	};
	static const char *const dirs[] = {
		"/sys/kernel/debug/failslab",
		"/sys/kernel/debug/fail_page_alloc",
	};
	char path[256];
	size_t d, i;
	int bad = 0;

	for (d = 0; d < 2; d++) {
		for (i = 0; i < sizeof(common) / sizeof(common[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", dirs[d],
				 common[i][0]);
			if (write_str(path, common[i][1])) {
				diag("cannot write %s to %s: %s", common[i][1],
				     path, strerror(errno));
				bad++;
			}
		}
	}
	if (write_str("/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem",
		      "N") ||
	    write_str("/sys/kernel/debug/fail_page_alloc/min-order", "0")) {
		diag("cannot configure fail_page_alloc: %s", strerror(errno));
		bad++;
	}
	return bad ? -1 : 0;
}

static void nth_set(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(nth_fd, buf, len, 0) != len) {
		printf("Bail out! write fail-nth: %s\n", strerror(errno));
		exit(2);
	}
}

static unsigned int nth_get(void)
{
	char buf[16];
	ssize_t r = pread(nth_fd, buf, sizeof(buf) - 1, 0);

	if (r <= 0) {
		printf("Bail out! read fail-nth: %s\n", strerror(errno));
		exit(2);
	}
	buf[r] = 0;
	return (unsigned int)strtoul(buf, NULL, 10);
}

/*
 * The call under test. Nothing else runs between setting fail-nth and the
 * ioctl, and all memory is locked, so no page fault of ours can eat the
 * injection. Returns the ioctl's result; *injected tells whether the n-th
 * allocation was reached (and failed).
 */
static int inject_ioctl(unsigned int n, unsigned long cmd, void *arg,
			int *err, bool *injected)
{
	int rc, e;
	unsigned int left;

	nth_set(n);
	rc = ioctl(kfd, cmd, arg);
	e = errno;
	left = nth_get();
	nth_set(0);
	*injected = left == 0;
	*err = rc ? e : 0;
	return rc;
}

/* ------------------------------------------------------------------ */
/* ioctl wrappers (no injection)                                      */
/* ------------------------------------------------------------------ */

static int kioctl(unsigned long cmd, void *arg)
{
	return ioctl(kfd, cmd, arg) ? errno : 0;
}

static int k_destroy(const char *name)
{
	struct kbloom_name n = {};

	set_name(n.name, name);
	return kioctl(KBLOOM_IOC_DESTROY, &n);
}

static int k_info(const char *name, struct kbloom_info *info)
{
	memset(info, 0, sizeof(*info));
	set_name(info->name, name);
	return kioctl(KBLOOM_IOC_INFO, info);
}

/* A filter's image: header and payload. */
struct image {
	struct kbloom_image hdr;
	unsigned char *payload;
};

static void image_free(struct image *im)
{
	free(im->payload);
	im->payload = NULL;
}

static int k_export(const char *name, struct image *im)
{
	__u64 len;
	int err;

	memset(&im->hdr, 0, sizeof(im->hdr));
	im->payload = NULL;
	set_name(im->hdr.name, name);
	err = kioctl(KBLOOM_IOC_EXPORT, &im->hdr);
	if (err != ENOBUFS)
		return err ? err : EPROTO;	/* an empty buffer must not do */
	/*
	 * Again with room, from a fresh structure: EXPORT takes only the
	 * name, the buffer and its size in (it refuses seed_hi set).
	 */
	len = im->hdr.payload_len;
	memset(&im->hdr, 0, sizeof(im->hdr));
	set_name(im->hdr.name, name);
	im->payload = xmalloc(len);
	im->hdr.payload = (uintptr_t)im->payload;
	im->hdr.payload_len = len;
	err = kioctl(KBLOOM_IOC_EXPORT, &im->hdr);
	if (err)
		image_free(im);
	return err;
}

/* IMPORT @im under @name, new or (@replace) in place of the contents. */
static int k_import(const char *name, const struct image *im, bool replace)
{
	struct kbloom_image hdr = im->hdr;

	set_name(hdr.name, name);
	hdr.payload = (uintptr_t)im->payload;
	hdr.import_flags = replace ? KBLOOM_IMPORT_REPLACE : 0;
	return kioctl(KBLOOM_IOC_IMPORT, &hdr);
}

static int k_list(char (*names)[KBLOOM_NAME_MAX], unsigned int room,
		  unsigned int *count)
{
	struct kbloom_list l = {};
	int err;

	l.names = (uintptr_t)names;
	l.count = room;
	err = kioctl(KBLOOM_IOC_LIST, &l);
	*count = l.count;
	return err;
}

/* Keys: "<tag><i>" for i in [from, from + n), packed for a batch. */
struct keys {
	unsigned int n;
	char *bytes;
	__u32 *lens;
	size_t size;
};

static void keys_make(struct keys *k, const char *tag, unsigned int from,
		      unsigned int n)
{
	size_t pos = 0;
	unsigned int i;

	k->n = n;
	k->bytes = xmalloc((size_t)n * 32);
	k->lens = xmalloc((size_t)n * sizeof(__u32));
	for (i = 0; i < n; i++) {
		int len = sprintf(k->bytes + pos, "%s%u", tag, from + i);

		k->lens[i] = len;
		pos += len;
	}
	k->size = pos;
}

static void keys_free(struct keys *k)
{
	free(k->bytes);
	free(k->lens);
	memset(k, 0, sizeof(*k));
}

static void batch_init(struct kbloom_batch *b, const char *name,
		       const struct keys *k, unsigned int count,
		       unsigned char *results)
{
	memset(b, 0, sizeof(*b));
	set_name(b->name, name);
	b->keys = (uintptr_t)k->bytes;
	b->lens = (uintptr_t)k->lens;
	b->keys_bytes = k->size;
	b->count = count;
	b->results = (uintptr_t)results;
}

static int k_batch(unsigned long cmd, const char *name, const struct keys *k,
		   unsigned int count, unsigned char *results, __u32 *hits)
{
	struct kbloom_batch b;
	int err;

	batch_init(&b, name, k, count, results);
	err = kioctl(cmd, &b);
	if (hits)
		*hits = b.hits;
	return err;
}

/* ------------------------------------------------------------------ */
/* Snapshots of the whole module state                                */
/* ------------------------------------------------------------------ */

struct fsnap {
	char name[KBLOOM_NAME_MAX];
	struct image im;
	struct kbloom_info info;
	ull charged;	/* what it is charged against the budget */
};

/*
 * What a filter is charged against memory_budget: sysfs memory_charged
 * (storage rounded to pages and the bookkeeping), or, from a module
 * without it, INFO's memory_bytes.
 */
static ull filter_charge(const char *name, const struct kbloom_info *info)
{
	char path[128];
	ull v;

	snprintf(path, sizeof(path), "/sys/kernel/bloom/filters/%s/memory_charged",
		 name);
	if (read_ull(path, &v))
		return info->memory_bytes;
	return v;
}

struct snap {
	unsigned int n;
	struct fsnap f[MAXF];
	ull mem;	/* memory_used */
	ull sum;	/* what the filters are charged */
};

static void snap_free(struct snap *s)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		image_free(&s->f[i].im);
	s->n = 0;
}

static const struct fsnap *snap_find(const struct snap *s, const char *name)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].name, name))
			return &s->f[i];
	return NULL;
}

/* Sorted names of the directories in /sys/kernel/bloom/filters. */
static int sysfs_names(char (*names)[KBLOOM_NAME_MAX], unsigned int room,
		       unsigned int *count)
{
	DIR *d = opendir("/sys/kernel/bloom/filters");
	struct dirent *e;
	unsigned int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n < room)
			set_name(names[n], e->d_name);
		n++;
	}
	closedir(d);
	qsort(names, n < room ? n : room, KBLOOM_NAME_MAX, cmp_name);
	*count = n;
	return 0;
}

/* Bits set (plain) or non-zero counters (counting) in a payload. */
static ull payload_weight(const struct image *im)
{
	size_t i, len = im->hdr.payload_len;
	ull w = 0;

#ifdef KBLOOM_IOC_ROTATE
	/* Windowed: INFO reports the newest generation, stored first. */
	if (im->hdr.generations > 1)
		len /= im->hdr.generations;
#endif
	for (i = 0; i < len; i++) {
		unsigned char c = im->payload[i];

		if (im->hdr.flags & KBLOOM_CREATE_COUNTING)
			w += !!(c & 0x0f) + !!(c & 0xf0);
		else
			w += __builtin_popcount(c);
	}
	return w;
}

/*
 * Take a consistent snapshot: names from LIST (checked against sysfs and
 * filter_count), each filter's EXPORT and INFO, and memory_used once it
 * has come down to the sum of what the filters are charged (deferred
 * frees of earlier steps finished). @why gets the reason on failure.
 */
static int snap_take(struct snap *s, char *why, size_t wlen)
{
	char names[MAXF][KBLOOM_NAME_MAX], sys[MAXF][KBLOOM_NAME_MAX];
	unsigned int count = 0, scount = 0, i;
	ull sum, mem, fc = 0, t0;
	int err;

	memset(s, 0, sizeof(*s));
	err = k_list(names, MAXF, &count);
	if (err || count > MAXF) {
		snprintf(why, wlen, "LIST: %s, count %u", strerror(err), count);
		return -1;
	}
	if (sysfs_names(sys, MAXF, &scount) || scount != count ||
	    memcmp(names, sys, (size_t)count * KBLOOM_NAME_MAX)) {
		snprintf(why, wlen, "LIST (%u filters) and /sys/kernel/bloom/filters (%u) disagree",
			 count, scount);
		return -1;
	}
	if (read_ull("/sys/kernel/bloom/filter_count", &fc) || fc != count) {
		snprintf(why, wlen, "filter_count %llu, LIST %u", fc, count);
		return -1;
	}
	sum = 0;
	for (i = 0; i < count; i++) {
		struct fsnap *f = &s->f[i];

		memcpy(f->name, names[i], KBLOOM_NAME_MAX);
		err = k_export(f->name, &f->im);
		if (!err)
			err = k_info(f->name, &f->info);
		if (err) {
			snprintf(why, wlen, "EXPORT/INFO %s: %s", f->name,
				 strerror(err));
			s->n = i + (f->im.payload != NULL);
			snap_free(s);
			return -1;
		}
		s->n = i + 1;
		if (f->info.bits_set != payload_weight(&f->im)) {
			snprintf(why, wlen, "%s: INFO bits_set %llu, but the payload has %llu",
				 f->name, f->info.bits_set,
				 payload_weight(&f->im));
			snap_free(s);
			return -1;
		}
		f->charged = filter_charge(f->name, &f->info);
		sum += f->charged;
	}
	/*
	 * Quiescent, what is used is what the live filters are charged;
	 * frees of earlier steps may take seconds to finish, and only add.
	 */
	sum += mem_offset;
	mem = memory_used();
	if (precise) {
		t0 = now_ms();
		while (mem != sum && now_ms() - t0 < SETTLE_MS) {
			sleep_ms(20);
			mem = memory_used();
		}
	}
	if (precise ? mem != sum : mem < sum) {
		snprintf(why, wlen, "memory_used %llu, but the %u filters are charged %llu%s",
			 mem, count, sum - mem_offset,
			 mem_offset ? " (plus what earlier steps leaked)" : "");
		snap_free(s);
		return -1;
	}
	s->mem = mem;
	s->sum = sum;
	return 0;
}

/* What may differ between two snapshots of the same filter. */
#define SAME_STATS	(1U << 0)	/* adds, queries, hits too */

static int fsnap_diff(const struct fsnap *a, const struct fsnap *b,
		      unsigned int how, char *why, size_t wlen)
{
	struct kbloom_image ha = a->im.hdr, hb = b->im.hdr;

	/* adds travels in the image, but it is a statistic; age_ms is a
	 * clock; payload is where our copy is. */
	ha.adds = hb.adds = 0;
	ha.age_ms = hb.age_ms = 0;
	ha.payload = hb.payload = 0;
	if (memcmp(&ha, &hb, sizeof(ha))) {
		snprintf(why, wlen, "%s: parameters or seed changed", a->name);
		return -1;
	}
	if (memcmp(a->im.payload, b->im.payload, ha.payload_len)) {
		snprintf(why, wlen, "%s: contents changed", a->name);
		return -1;
	}
	if (a->charged != b->charged) {
		snprintf(why, wlen, "%s: charged %llu, was %llu", a->name,
			 b->charged, a->charged);
		return -1;
	}
	if ((how & SAME_STATS) &&
	    (a->info.adds != b->info.adds ||
	     a->info.queries != b->info.queries ||
	     a->info.hits != b->info.hits)) {
		snprintf(why, wlen, "%s: statistics changed (adds %llu -> %llu, queries %llu -> %llu, hits %llu -> %llu)",
			 a->name, a->info.adds, b->info.adds,
			 a->info.queries, b->info.queries,
			 a->info.hits, b->info.hits);
		return -1;
	}
	return 0;
}

/*
 * @after must have the filters of @before except @skip (compared by the
 * caller) plus @extra (NULL: none).
 */
static int snap_diff(const struct snap *before, const struct snap *after,
		     const char *skip, const char *extra, unsigned int how,
		     char *why, size_t wlen)
{
	unsigned int i, want = before->n + (extra != NULL);

	if (after->n != want) {
		snprintf(why, wlen, "%u filters, expected %u", after->n, want);
		return -1;
	}
	for (i = 0; i < after->n; i++) {
		const struct fsnap *a = snap_find(before, after->f[i].name);

		if (extra && !strcmp(after->f[i].name, extra))
			continue;
		if (!a) {
			snprintf(why, wlen, "unexpected filter %s",
				 after->f[i].name);
			return -1;
		}
		if (skip && !strcmp(a->name, skip))
			continue;
		if (fsnap_diff(a, &after->f[i], how, why, wlen))
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The fixture                                                        */
/* ------------------------------------------------------------------ */

#define F_PLAIN		"fn_plain"	/* plain, sized by capacity */
#define F_LIKE		"fn_like"	/* --like fn_plain: mergeable */
#define F_COUNT		"fn_count"	/* counting */
#define F_VICTIM	"fn_victim"	/* for DESTROY */
#define F_NEW		"fn_new"	/* what the creating calls create */
#define F_SHADOW	"fn_shadow"	/* where partial batches are replayed */
#define F_WIN		"fn_win"	/* windowed, 3 generations, no timer */

#ifdef KBLOOM_IOC_ROTATE
#define HAVE_WINDOW	(features & KBLOOM_FEATURE_WINDOW)
#else
#define HAVE_WINDOW	0
#endif

static struct keys keys_plain, keys_like, keys_count;

static int create_plain(const char *name, ull capacity, __u32 fpr_ppb)
{
	struct kbloom_create c = {};

	set_name(c.name, name);
	c.capacity = capacity;
	c.fpr_ppb = fpr_ppb;
	return kioctl(KBLOOM_IOC_CREATE, &c);
}

static int create_bits(const char *name, ull bits, __u32 hashes,
		       __u32 flags)
{
	struct kbloom_create c = {};

	set_name(c.name, name);
	c.bits = bits;
	c.hashes = hashes;
	c.flags = flags;
	return kioctl(KBLOOM_IOC_CREATE, &c);
}

static int create_like(const char *name, const char *like)
{
	struct kbloom_create c = {};

	set_name(c.name, name);
	set_name(c.like, like);
	c.flags = KBLOOM_CREATE_LIKE;
	return kioctl(KBLOOM_IOC_CREATE, &c);
}

static int fixture(char *why, size_t wlen)
{
	const char *const ours[] = { F_PLAIN, F_LIKE, F_COUNT, F_VICTIM,
				     F_NEW, F_SHADOW, F_WIN };
	size_t i;
	int err;

	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		k_destroy(ours[i]);
	keys_make(&keys_plain, "p", 0, 500);
	keys_make(&keys_like, "l", 0, 300);
	keys_make(&keys_count, "c", 0, 200);
	err = create_plain(F_PLAIN, 2000, 10000000);
	if (!err)
		err = create_like(F_LIKE, F_PLAIN);
	if (!err)
		err = create_bits(F_COUNT, 8192, 4, KBLOOM_CREATE_COUNTING);
	if (!err)
		err = create_bits(F_VICTIM, 4096, 3, 0);
	if (!err)
		err = k_batch(KBLOOM_IOC_ADD_BATCH, F_PLAIN, &keys_plain,
			      keys_plain.n, NULL, NULL);
	if (!err)
		err = k_batch(KBLOOM_IOC_ADD_BATCH, F_LIKE, &keys_like,
			      keys_like.n, NULL, NULL);
	if (!err)
		err = k_batch(KBLOOM_IOC_ADD_BATCH, F_COUNT, &keys_count,
			      keys_count.n, NULL, NULL);
#ifdef KBLOOM_IOC_ROTATE
	if (!err && HAVE_WINDOW) {
		/* Keys in every generation: add, rotate, add, rotate, add. */
		struct kbloom_create c = {};
		struct kbloom_name n = {};
		int g;

		set_name(c.name, F_WIN);
		c.bits = 4096;
		c.hashes = 3;
		c.generations = 3;
		err = kioctl(KBLOOM_IOC_CREATE, &c);
		set_name(n.name, F_WIN);
		for (g = 0; !err && g < 3; g++) {
			err = k_batch(KBLOOM_IOC_ADD_BATCH, F_WIN, &keys_like,
				      100 * (g + 1), NULL, NULL);
			if (!err && g < 2)
				err = kioctl(KBLOOM_IOC_ROTATE, &n);
		}
	}
#endif
	if (err) {
		snprintf(why, wlen, "setting up the filters: %s",
			 strerror(err));
		return -1;
	}
	return 0;
}

/* Put @f back as it was in a snapshot (contents, seed, adds). */
static int restore(const struct fsnap *f)
{
	struct kbloom_info info;
	int err;

	if (k_info(f->name, &info) == ENOENT)
		err = k_import(f->name, &f->im, false);
	else
		err = k_import(f->name, &f->im, true);
	if (err)
		diag("restoring %s: %s", f->name, strerror(err));
	return err;
}

/* ------------------------------------------------------------------ */
/* The sweeps                                                         */
/* ------------------------------------------------------------------ */

/*
 * One step of a sweep: the call with its n-th allocation failing. The
 * case fills @arg, says how to judge a failure and a success, and how to
 * undo a success.
 */
struct step {
	unsigned long cmd;
	void *arg;
	/* Set by the case: the filter the call works on, if any. */
	const char *target;
	/* The call creates @creates on success. */
	const char *creates;
	/* A batched call: the batch, for @done. */
	struct kbloom_batch *batch;
	const struct keys *keys;
};

struct sweep {
	const char *name;
	/* Fill @st for this step; @before is the state before the call. */
	void (*prep)(struct step *st, const struct snap *before);
	/* The call succeeded: check what it did, and undo it. */
	int (*success)(struct step *st, const struct snap *before,
		       char *why, size_t wlen);
	unsigned int points, failed, absorbed;
};

/* Scratch shared by the cases (one step at a time). */
static union {
	struct kbloom_create c;
	struct kbloom_image img;
	struct kbloom_list l;
	struct kbloom_batch b;
	struct kbloom_merge m;
	struct kbloom_key k;
	struct kbloom_info info;
	struct kbloom_name n;
	struct kbloom_open o;
} arg;
static char list_buf[MAXF][KBLOOM_NAME_MAX];
static unsigned char results[4096];
static unsigned char *export_buf;
static size_t export_len;
static struct keys keys_batch, keys_query, keys_remove;
static struct image img_for_import;	/* fn_plain's contents */
/* Longer than the ioctl's on-stack copy: the key itself is allocated. */
static char single_key[] =
	"single-key, long enough to be copied in by memdup_user() rather than to the stack";
static char present_key[] = "p7";
static char count_key[] = "c150";

/* Does every key of @k[0..n) test present in @name? */
static int all_present(const char *name, const struct keys *k,
		       unsigned int n, char *why, size_t wlen)
{
	__u32 hits = 0;
	int err;

	if (!n)
		return 0;
	err = k_batch(KBLOOM_IOC_QUERY_BATCH, name, k, n, NULL, &hits);
	if (err || hits != n) {
		snprintf(why, wlen, "%s: %u of %u keys found (%s)", name, hits,
			 n, err ? strerror(err) : "no error");
		return -1;
	}
	return 0;
}

static int check_unchanged_after(const struct snap *before, const char *skip,
				 const char *extra, unsigned int how,
				 char *why, size_t wlen)
{
	struct snap after;
	int ret;

	if (snap_take(&after, why, wlen))
		return -1;
	ret = snap_diff(before, &after, skip, extra, how, why, wlen);
	if (!ret && precise && after.mem != before->mem && !extra) {
		snprintf(why, wlen, "memory_used %llu, was %llu", after.mem,
			 before->mem);
		ret = -1;
	}
	snap_free(&after);
	return ret;
}

/* Success of a call that only reads: nothing changed but statistics. */
static int success_readonly(struct step *st, const struct snap *before,
			    char *why, size_t wlen)
{
	(void)st;
	return check_unchanged_after(before, NULL, NULL, 0, why, wlen);
}

/* The new filter is there (checked by @check), the rest as it was; then
 * it goes again. */
static int success_created(struct step *st, const struct snap *before,
			   char *why, size_t wlen,
			   int (*check)(const struct fsnap *f,
					const struct snap *before,
					char *why, size_t wlen))
{
	struct snap after;
	const struct fsnap *f;
	int ret;

	if (snap_take(&after, why, wlen))
		return -1;
	ret = snap_diff(before, &after, NULL, st->creates, 0, why, wlen);
	f = snap_find(&after, st->creates);
	if (!ret && !f) {
		snprintf(why, wlen, "succeeded, but %s does not exist",
			 st->creates);
		ret = -1;
	}
	if (!ret && check)
		ret = check(f, before, why, wlen);
	snap_free(&after);
	if (k_destroy(st->creates) && !ret) {
		snprintf(why, wlen, "cannot destroy %s again", st->creates);
		ret = -1;
	}
	return ret;
}

/* The target changed as @check says, the rest did not; then restore it. */
static int success_modified(struct step *st, const struct snap *before,
			    char *why, size_t wlen,
			    int (*check)(const struct fsnap *now,
					 const struct fsnap *was,
					 char *why, size_t wlen))
{
	const struct fsnap *was = snap_find(before, st->target);
	struct snap after;
	int ret;

	if (snap_take(&after, why, wlen))
		return -1;
	ret = snap_diff(before, &after, st->target, NULL, 0, why, wlen);
	if (!ret && check)
		ret = check(snap_find(&after, st->target), was, why, wlen);
	snap_free(&after);
	if (restore(was) && !ret) {
		snprintf(why, wlen, "cannot restore %s", st->target);
		ret = -1;
	}
	return ret;
}

static bool payload_zero(const struct image *im)
{
	size_t i;

	for (i = 0; i < im->hdr.payload_len; i++)
		if (im->payload[i])
			return false;
	return true;
}

/* --- CREATE --------------------------------------------------------- */

static int check_empty(const struct fsnap *f, const struct snap *before,
		       char *why, size_t wlen)
{
	(void)before;
	if (!payload_zero(&f->im) || f->info.bits_set) {
		snprintf(why, wlen, "the new filter is not empty");
		return -1;
	}
	if (f->info.bits != arg.c.bits || f->info.hashes != arg.c.hashes) {
		snprintf(why, wlen, "INFO says %llu bits %u hashes, CREATE said %llu %u",
			 f->info.bits, f->info.hashes, arg.c.bits,
			 arg.c.hashes);
		return -1;
	}
	return 0;
}

static void prep_create_cap(struct step *st, const struct snap *before)
{
	(void)before;
	memset(&arg.c, 0, sizeof(arg.c));
	set_name(arg.c.name, F_NEW);
	arg.c.capacity = 5000;
	arg.c.fpr_ppb = 1000000;
	st->cmd = KBLOOM_IOC_CREATE;
	st->arg = &arg.c;
	st->creates = F_NEW;
}

static void prep_create_counting(struct step *st, const struct snap *before)
{
	(void)before;
	memset(&arg.c, 0, sizeof(arg.c));
	set_name(arg.c.name, F_NEW);
	arg.c.bits = 10000;
	arg.c.hashes = 5;
	arg.c.flags = KBLOOM_CREATE_COUNTING;
	st->cmd = KBLOOM_IOC_CREATE;
	st->arg = &arg.c;
	st->creates = F_NEW;
}

static int success_create(struct step *st, const struct snap *before,
			  char *why, size_t wlen)
{
	return success_created(st, before, why, wlen, check_empty);
}

static void prep_create_like(struct step *st, const struct snap *before)
{
	(void)before;
	memset(&arg.c, 0, sizeof(arg.c));
	set_name(arg.c.name, F_NEW);
	set_name(arg.c.like, F_PLAIN);
	arg.c.flags = KBLOOM_CREATE_LIKE;
	st->cmd = KBLOOM_IOC_CREATE;
	st->arg = &arg.c;
	st->creates = F_NEW;
}

/* Like its model in everything but the name and the (empty) contents. */
static int check_like(const struct fsnap *f, const struct snap *before,
		      char *why, size_t wlen)
{
	const struct fsnap *m = snap_find(before, F_PLAIN);
	struct kbloom_image a = f->im.hdr, b = m->im.hdr;

	if (check_empty(f, before, why, wlen))
		return -1;
	memset(a.name, 0, sizeof(a.name));
	memset(b.name, 0, sizeof(b.name));
	a.adds = b.adds = 0;
	a.age_ms = b.age_ms = 0;
	a.payload = b.payload = 0;
	if (memcmp(&a, &b, sizeof(a))) {
		snprintf(why, wlen, "the --like filter differs from its model in parameters or seed");
		return -1;
	}
	return 0;
}

static int success_like(struct step *st, const struct snap *before,
			char *why, size_t wlen)
{
	return success_created(st, before, why, wlen, check_like);
}

/* --- IMPORT --------------------------------------------------------- */

static void prep_import(struct step *st, bool replace)
{
	arg.img = img_for_import.hdr;
	set_name(arg.img.name, replace ? F_LIKE : F_NEW);
	arg.img.payload = (uintptr_t)img_for_import.payload;
	arg.img.import_flags = replace ? KBLOOM_IMPORT_REPLACE : 0;
	st->cmd = KBLOOM_IOC_IMPORT;
	st->arg = &arg.img;
	if (replace)
		st->target = F_LIKE;
	else
		st->creates = F_NEW;
}

static void prep_import_new(struct step *st, const struct snap *before)
{
	(void)before;
	prep_import(st, false);
}

static void prep_import_replace(struct step *st, const struct snap *before)
{
	(void)before;
	prep_import(st, true);
}

static bool same_image(const struct image *a, const struct image *b)
{
	struct kbloom_image ha = a->hdr, hb = b->hdr;

	memset(ha.name, 0, sizeof(ha.name));
	memset(hb.name, 0, sizeof(hb.name));
	ha.payload = hb.payload = 0;
	ha.import_flags = hb.import_flags = 0;
	/* A clock, not the image's contents. */
	ha.age_ms = hb.age_ms = 0;
	return !memcmp(&ha, &hb, sizeof(ha)) &&
	       !memcmp(a->payload, b->payload, ha.payload_len);
}

static int check_imported_new(const struct fsnap *f, const struct snap *before,
			      char *why, size_t wlen)
{
	(void)before;
	if (!same_image(&f->im, &img_for_import)) {
		snprintf(why, wlen, "the imported filter does not export as the image it was loaded from");
		return -1;
	}
	return 0;
}

static int success_import_new(struct step *st, const struct snap *before,
			      char *why, size_t wlen)
{
	return success_created(st, before, why, wlen, check_imported_new);
}

static int check_replaced(const struct fsnap *now, const struct fsnap *was,
			  char *why, size_t wlen)
{
	(void)was;
	if (!same_image(&now->im, &img_for_import)) {
		snprintf(why, wlen, "the replaced filter does not export as the image");
		return -1;
	}
	return 0;
}

static int success_import_replace(struct step *st, const struct snap *before,
				  char *why, size_t wlen)
{
	return success_modified(st, before, why, wlen, check_replaced);
}

/* --- LIST, EXPORT, INFO, COMPARE: readers ----------------------------- */

static void prep_list(struct step *st, const struct snap *before)
{
	(void)before;
	memset(&arg.l, 0, sizeof(arg.l));
	memset(list_buf, 0, sizeof(list_buf));
	arg.l.names = (uintptr_t)list_buf;
	arg.l.count = MAXF;
	st->cmd = KBLOOM_IOC_LIST;
	st->arg = &arg.l;
}

static int success_list(struct step *st, const struct snap *before,
			char *why, size_t wlen)
{
	unsigned int i;

	if (arg.l.count != before->n) {
		snprintf(why, wlen, "LIST says %u filters, there are %u",
			 arg.l.count, before->n);
		return -1;
	}
	for (i = 0; i < before->n; i++) {
		if (strcmp(list_buf[i], before->f[i].name)) {
			snprintf(why, wlen, "LIST name %u is '%.32s', expected %s",
				 i, list_buf[i], before->f[i].name);
			return -1;
		}
	}
	return success_readonly(st, before, why, wlen);
}

static void prep_export(struct step *st, const struct snap *before)
{
	const struct fsnap *f = snap_find(before, F_COUNT);

	if (export_len < f->im.hdr.payload_len) {
		free(export_buf);
		export_len = f->im.hdr.payload_len;
		export_buf = xmalloc(export_len);
	}
	memset(export_buf, 0xa5, export_len);
	memset(&arg.img, 0, sizeof(arg.img));
	set_name(arg.img.name, F_COUNT);
	arg.img.payload = (uintptr_t)export_buf;
	arg.img.payload_len = export_len;
	st->cmd = KBLOOM_IOC_EXPORT;
	st->arg = &arg.img;
	st->target = F_COUNT;
}

static int success_export(struct step *st, const struct snap *before,
			  char *why, size_t wlen)
{
	const struct fsnap *f = snap_find(before, F_COUNT);
	struct image got = { arg.img, export_buf };

	if (!same_image(&got, &f->im)) {
		snprintf(why, wlen, "EXPORT gave other contents or parameters than before");
		return -1;
	}
	return success_readonly(st, before, why, wlen);
}

static void prep_info(struct step *st, const struct snap *before)
{
	(void)before;
	memset(&arg.info, 0, sizeof(arg.info));
	set_name(arg.info.name, F_PLAIN);
	st->cmd = KBLOOM_IOC_INFO;
	st->arg = &arg.info;
}

static int success_info(struct step *st, const struct snap *before,
			char *why, size_t wlen)
{
	const struct fsnap *f = snap_find(before, F_PLAIN);

	if (arg.info.bits != f->info.bits ||
	    arg.info.bits_set != f->info.bits_set ||
	    arg.info.memory_bytes != f->info.memory_bytes) {
		snprintf(why, wlen, "INFO differs from the one before");
		return -1;
	}
	return success_readonly(st, before, why, wlen);
}

/* --- Handles --------------------------------------------------------------- */

static int open_fds;	/* before the OPEN step */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void prep_open(struct step *st, const struct snap *before)
{
	(void)before;
	memset(&arg.o, 0, sizeof(arg.o));
	set_name(arg.o.name, F_PLAIN);
	arg.o.fd = -1;
	st->cmd = KBLOOM_IOC_OPEN;
	st->arg = &arg.o;
	open_fds = count_fds();
}

/* A failed OPEN leaves no descriptor behind. */
static int check_no_new_fd(char *why, size_t wlen)
{
	int n = count_fds();

	if (n == open_fds)
		return 0;
	snprintf(why, wlen, "%d descriptors open after a failed OPEN, %d before",
		 n, open_fds);
	return -1;
}

/* The handle works (it finds a key of its filter) and is close-on-exec. */
static int success_open(struct step *st, const struct snap *before,
			char *why, size_t wlen)
{
	struct kbloom_key k = {};
	int fd = arg.o.fd, flags = fcntl(fd, F_GETFD);

	k.key = (uintptr_t)present_key;
	k.len = strlen(present_key);
	if (flags < 0 || !(flags & FD_CLOEXEC)) {
		snprintf(why, wlen, "OPEN's fd %d: %s", fd,
			 flags < 0 ? strerror(errno) : "not close-on-exec");
		if (flags >= 0)
			close(fd);
		return -1;
	}
	if (ioctl(fd, KBLOOM_IOC_QUERY, &k) || k.result != 1) {
		snprintf(why, wlen, "QUERY on the handle: %s, result %u",
			 strerror(errno), k.result);
		close(fd);
		return -1;
	}
	close(fd);
	return success_readonly(st, before, why, wlen);
}

static void prep_compare(struct step *st, const struct snap *before)
{
	(void)before;
	memset(&arg.m, 0, sizeof(arg.m));
	set_name(arg.m.dst, F_PLAIN);
	set_name(arg.m.src, F_LIKE);
	st->cmd = KBLOOM_IOC_COMPARE;
	st->arg = &arg.m;
}

static int success_compare(struct step *st, const struct snap *before,
			   char *why, size_t wlen)
{
	const struct fsnap *a = snap_find(before, F_PLAIN);
	const struct fsnap *b = snap_find(before, F_LIKE);
	ull uni = 0, inter = 0;
	size_t i;

	for (i = 0; i < a->im.hdr.payload_len; i++) {
		uni += __builtin_popcount(a->im.payload[i] | b->im.payload[i]);
		inter += __builtin_popcount(a->im.payload[i] &
					    b->im.payload[i]);
	}
	if (arg.m.bits_dst != a->info.bits_set ||
	    arg.m.bits_src != b->info.bits_set ||
	    arg.m.bits_union != uni || arg.m.bits_inter != inter) {
		snprintf(why, wlen, "COMPARE gave %llu %llu %llu %llu, the payloads say %llu %llu %llu %llu",
			 arg.m.bits_dst, arg.m.bits_src, arg.m.bits_union,
			 arg.m.bits_inter, a->info.bits_set, b->info.bits_set,
			 uni, inter);
		return -1;
	}
	return success_readonly(st, before, why, wlen);
}

/* --- Batches --------------------------------------------------------- */

static void prep_batch(struct step *st, unsigned long cmd, const char *name,
		       const struct keys *k)
{
	memset(results, 0xa5, sizeof(results));
	batch_init(&arg.b, name, k, k->n, results);
	st->cmd = cmd;
	st->arg = &arg.b;
	st->target = name;
	st->batch = &arg.b;
	st->keys = k;
}

static void prep_add_batch(struct step *st, const struct snap *before)
{
	(void)before;
	prep_batch(st, KBLOOM_IOC_ADD_BATCH, F_PLAIN, &keys_batch);
}

static void prep_tadd_batch(struct step *st, const struct snap *before)
{
	(void)before;
	prep_batch(st, KBLOOM_IOC_TEST_AND_ADD_BATCH, F_PLAIN, &keys_batch);
}

static void prep_query_batch(struct step *st, const struct snap *before)
{
	(void)before;
	prep_batch(st, KBLOOM_IOC_QUERY_BATCH, F_PLAIN, &keys_query);
}

static void prep_remove_batch(struct step *st, const struct snap *before)
{
	(void)before;
	prep_batch(st, KBLOOM_IOC_REMOVE_BATCH, F_COUNT, &keys_remove);
}

static int check_added(const struct fsnap *now, const struct fsnap *was,
		       char *why, size_t wlen)
{
	if (now->info.adds != was->info.adds + keys_batch.n) {
		snprintf(why, wlen, "adds went from %llu to %llu for %u keys",
			 was->info.adds, now->info.adds, keys_batch.n);
		return -1;
	}
	return all_present(now->name, &keys_batch, keys_batch.n, why, wlen);
}

static int success_add_batch(struct step *st, const struct snap *before,
			     char *why, size_t wlen)
{
	if (arg.b.done != arg.b.count) {
		snprintf(why, wlen, "success with done %u of %u", arg.b.done,
			 arg.b.count);
		return -1;
	}
	return success_modified(st, before, why, wlen, check_added);
}

static int success_query_batch(struct step *st, const struct snap *before,
			       char *why, size_t wlen)
{
	unsigned int i, hits = 0;

	if (arg.b.done != arg.b.count) {
		snprintf(why, wlen, "success with done %u of %u", arg.b.done,
			 arg.b.count);
		return -1;
	}
	/* The first half was added: every one of those must say maybe. */
	for (i = 0; i < keys_query.n; i++) {
		bool bit = results[i / 8] >> (i % 8) & 1;

		hits += bit;
		if (i < keys_query.n / 2 && !bit) {
			snprintf(why, wlen, "added key %u reported absent", i);
			return -1;
		}
	}
	if (hits != arg.b.hits) {
		snprintf(why, wlen, "hits %u, the result bits say %u",
			 arg.b.hits, hits);
		return -1;
	}
	return success_readonly(st, before, why, wlen);
}

/* Expected after the remove batch succeeds (computed once). */
static struct image count_removed;

static int check_removed(const struct fsnap *now, const struct fsnap *was,
			 char *why, size_t wlen)
{
	(void)was;
	if (memcmp(now->im.payload, count_removed.payload,
		   count_removed.hdr.payload_len)) {
		snprintf(why, wlen, "the counters differ from the same removes done without a fault");
		return -1;
	}
	return 0;
}

static int success_remove_batch(struct step *st, const struct snap *before,
				char *why, size_t wlen)
{
	if (arg.b.done != arg.b.count) {
		snprintf(why, wlen, "success with done %u of %u", arg.b.done,
			 arg.b.count);
		return -1;
	}
	return success_modified(st, before, why, wlen, check_removed);
}

/*
 * A batch that failed after applying @done keys: the target must equal its
 * old contents with exactly keys [0, done) applied. Replayed without a
 * fault on a copy made from the old image.
 */
static int expect_prefix(const struct step *st, const struct fsnap *was,
			 unsigned int done, struct image *out, char *why,
			 size_t wlen)
{
	int err;

	k_destroy(F_SHADOW);
	err = k_import(F_SHADOW, &was->im, false);
	if (!err)
		err = k_batch(st->cmd, F_SHADOW, st->keys, done, NULL, NULL);
	if (!err)
		err = k_export(F_SHADOW, out);
	k_destroy(F_SHADOW);
	if (err) {
		snprintf(why, wlen, "replaying %u keys on a copy: %s", done,
			 strerror(err));
		return -1;
	}
	return 0;
}

/* --- MERGE ------------------------------------------------------------ */

static void prep_merge(struct step *st, const struct snap *before)
{
	(void)before;
	memset(&arg.m, 0, sizeof(arg.m));
	set_name(arg.m.dst, F_LIKE);
	set_name(arg.m.src, F_PLAIN);
	st->cmd = KBLOOM_IOC_MERGE;
	st->arg = &arg.m;
	st->target = F_LIKE;
}

static const struct snap *merge_before;

static int check_merged(const struct fsnap *now, const struct fsnap *was,
			char *why, size_t wlen)
{
	const struct fsnap *src = snap_find(merge_before, F_PLAIN);
	size_t i;

	for (i = 0; i < now->im.hdr.payload_len; i++) {
		if (now->im.payload[i] !=
		    (was->im.payload[i] | src->im.payload[i])) {
			snprintf(why, wlen, "byte %zu of the union is %#x, expected %#x",
				 i, now->im.payload[i],
				 was->im.payload[i] | src->im.payload[i]);
			return -1;
		}
	}
	return 0;
}

static int success_merge(struct step *st, const struct snap *before,
			 char *why, size_t wlen)
{
	merge_before = before;
	return success_modified(st, before, why, wlen, check_merged);
}

/* --- One-key calls ------------------------------------------------------ */

static void prep_key(struct step *st, unsigned long cmd, const char *name,
		     char *key)
{
	memset(&arg.k, 0, sizeof(arg.k));
	set_name(arg.k.name, name);
	arg.k.key = (uintptr_t)key;
	arg.k.len = strlen(key);
	arg.k.result = 0xdead;
	st->cmd = cmd;
	st->arg = &arg.k;
	st->target = name;
}

static void prep_add(struct step *st, const struct snap *before)
{
	(void)before;
	prep_key(st, KBLOOM_IOC_ADD, F_PLAIN, single_key);
}

static void prep_tadd(struct step *st, const struct snap *before)
{
	(void)before;
	prep_key(st, KBLOOM_IOC_TEST_AND_ADD, F_PLAIN, single_key);
}

static void prep_query(struct step *st, const struct snap *before)
{
	(void)before;
	prep_key(st, KBLOOM_IOC_QUERY, F_PLAIN, present_key);
}

static void prep_remove(struct step *st, const struct snap *before)
{
	(void)before;
	prep_key(st, KBLOOM_IOC_REMOVE, F_COUNT, count_key);
}

static struct keys keys_single;

static int check_single_added(const struct fsnap *now, const struct fsnap *was,
			      char *why, size_t wlen)
{
	if (now->info.adds != was->info.adds + 1) {
		snprintf(why, wlen, "adds went from %llu to %llu for one key",
			 was->info.adds, now->info.adds);
		return -1;
	}
	return all_present(now->name, &keys_single, 1, why, wlen);
}

static int success_add(struct step *st, const struct snap *before,
		       char *why, size_t wlen)
{
	return success_modified(st, before, why, wlen, check_single_added);
}

static int success_query(struct step *st, const struct snap *before,
			 char *why, size_t wlen)
{
	if (arg.k.result != 1) {
		snprintf(why, wlen, "an added key answered %u", arg.k.result);
		return -1;
	}
	return success_readonly(st, before, why, wlen);
}

static int check_single_removed(const struct fsnap *now,
				const struct fsnap *was, char *why,
				size_t wlen)
{
	size_t i;
	int down = 0;

	/* Up to k counters went down by one, none went up. */
	for (i = 0; i < now->im.hdr.payload_len; i++) {
		int s;

		for (s = 0; s < 8; s += 4) {
			int a = was->im.payload[i] >> s & 15;
			int b = now->im.payload[i] >> s & 15;

			if (b != a && (b != a - 1 || a == KBLOOM_COUNTER_MAX)) {
				snprintf(why, wlen, "a counter went from %d to %d",
					 a, b);
				return -1;
			}
			down += b != a;
		}
	}
	if (!down || down > (int)now->info.hashes) {
		snprintf(why, wlen, "%d counters went down", down);
		return -1;
	}
	return 0;
}

static int success_remove(struct step *st, const struct snap *before,
			  char *why, size_t wlen)
{
	if (arg.k.result != 1) {
		snprintf(why, wlen, "removing an added key answered %u",
			 arg.k.result);
		return -1;
	}
	return success_modified(st, before, why, wlen, check_single_removed);
}

/* --- CLEAR, DESTROY ------------------------------------------------------ */

static void prep_clear(struct step *st, const struct snap *before)
{
	(void)before;
	memset(&arg.n, 0, sizeof(arg.n));
	set_name(arg.n.name, F_LIKE);
	st->cmd = KBLOOM_IOC_CLEAR;
	st->arg = &arg.n;
	st->target = F_LIKE;
}

static int check_cleared(const struct fsnap *now, const struct fsnap *was,
			 char *why, size_t wlen)
{
	(void)was;
	if (!payload_zero(&now->im) || now->info.bits_set ||
	    now->info.adds) {
		snprintf(why, wlen, "not empty after CLEAR");
		return -1;
	}
	return 0;
}

static int success_clear(struct step *st, const struct snap *before,
			 char *why, size_t wlen)
{
	return success_modified(st, before, why, wlen, check_cleared);
}

static void prep_destroy(struct step *st, const struct snap *before)
{
	(void)before;
	memset(&arg.n, 0, sizeof(arg.n));
	set_name(arg.n.name, F_VICTIM);
	st->cmd = KBLOOM_IOC_DESTROY;
	st->arg = &arg.n;
	st->target = F_VICTIM;
}

static int success_destroy(struct step *st, const struct snap *before,
			   char *why, size_t wlen)
{
	const struct fsnap *was = snap_find(before, F_VICTIM);
	struct snap after;
	struct snap less = *before;
	unsigned int i, j;
	int ret;

	(void)st;
	/* @before without the victim. */
	for (i = j = 0; i < before->n; i++)
		if (strcmp(before->f[i].name, F_VICTIM))
			less.f[j++] = before->f[i];
	less.n = j;
	if (snap_take(&after, why, wlen))
		return -1;
	ret = snap_diff(&less, &after, NULL, NULL, 0, why, wlen);
	if (!ret && precise && after.mem != before->mem - was->charged) {
		snprintf(why, wlen, "memory_used %llu after destroying a filter charged %llu, was %llu",
			 after.mem, was->charged, before->mem);
		ret = -1;
	}
	snap_free(&after);
	if (restore(was) && !ret) {
		snprintf(why, wlen, "cannot re-create %s", F_VICTIM);
		ret = -1;
	}
	return ret;
}

#ifdef KBLOOM_IOC_ROTATE
/* --- Windowed filters ---------------------------------------------------- */

static void prep_create_window(struct step *st, const struct snap *before)
{
	(void)before;
	memset(&arg.c, 0, sizeof(arg.c));
	set_name(arg.c.name, F_NEW);
	arg.c.capacity = 2000;
	arg.c.fpr_ppb = 10000000;
	arg.c.generations = 4;
	arg.c.window_ms = 3600000;	/* a timer, which never fires here */
	st->cmd = KBLOOM_IOC_CREATE;
	st->arg = &arg.c;
	st->creates = F_NEW;
}

static void prep_rotate(struct step *st, const struct snap *before)
{
	(void)before;
	memset(&arg.n, 0, sizeof(arg.n));
	set_name(arg.n.name, F_WIN);
	st->cmd = KBLOOM_IOC_ROTATE;
	st->arg = &arg.n;
	st->target = F_WIN;
}

/* The oldest generation, cleared, is now the newest (stored first). */
static int check_rotated(const struct fsnap *now, const struct fsnap *was,
			 char *why, size_t wlen)
{
	size_t g = now->im.hdr.generations, one;
	size_t i;

	if (g < 2 || g != was->im.hdr.generations) {
		snprintf(why, wlen, "%s: %zu generations", now->name, g);
		return -1;
	}
	one = now->im.hdr.payload_len / g;
	for (i = 0; i < one; i++) {
		if (now->im.payload[i]) {
			snprintf(why, wlen, "after ROTATE the newest generation is not empty");
			return -1;
		}
	}
	if (memcmp(now->im.payload + one, was->im.payload, one * (g - 1))) {
		snprintf(why, wlen, "after ROTATE the other generations did not move down by one");
		return -1;
	}
	return 0;
}

static int success_rotate(struct step *st, const struct snap *before,
			  char *why, size_t wlen)
{
	return success_modified(st, before, why, wlen, check_rotated);
}
#endif

#define SWEEP(n, p, s) { .name = n, .prep = p, .success = s }

static struct sweep sweeps[] = {
	SWEEP("CREATE by capacity and rate", prep_create_cap, success_create),
	SWEEP("CREATE counting, by bits and hashes", prep_create_counting, success_create),
	SWEEP("CREATE --like", prep_create_like, success_like),
	SWEEP("IMPORT as a new filter", prep_import_new, success_import_new),
	SWEEP("IMPORT --replace", prep_import_replace, success_import_replace),
	SWEEP("LIST", prep_list, success_list),
	SWEEP("EXPORT", prep_export, success_export),
	SWEEP("ADD_BATCH (3000 keys, 3 chunks)", prep_add_batch, success_add_batch),
	SWEEP("QUERY_BATCH", prep_query_batch, success_query_batch),
	SWEEP("TEST_AND_ADD_BATCH (3000 keys)", prep_tadd_batch, success_add_batch),
	SWEEP("REMOVE_BATCH on a counting filter", prep_remove_batch, success_remove_batch),
	SWEEP("MERGE", prep_merge, success_merge),
	SWEEP("ADD", prep_add, success_add),
	SWEEP("TEST_AND_ADD", prep_tadd, success_add),
	SWEEP("QUERY", prep_query, success_query),
	SWEEP("REMOVE", prep_remove, success_remove),
	SWEEP("INFO", prep_info, success_info),
	SWEEP("OPEN (a handle)", prep_open, success_open),
	SWEEP("COMPARE", prep_compare, success_compare),
	SWEEP("CLEAR", prep_clear, success_clear),
	SWEEP("DESTROY", prep_destroy, success_destroy),
#ifdef KBLOOM_IOC_ROTATE
	/* Only when the module has KBLOOM_FEATURE_WINDOW (see wanted()). */
	SWEEP("CREATE windowed (4 generations, timer)", prep_create_window,
	      success_create),
	SWEEP("ROTATE", prep_rotate, success_rotate),
#endif
};

#define NSWEEPS (sizeof(sweeps) / sizeof(sweeps[0]))

/*
 * Judge a failed call: the errno, and the state against @before. A batch
 * that applied keys before @done must equal the old contents with exactly
 * those keys applied.
 */
static int judge_failure(struct step *st, const struct snap *before, int err,
			 char *why, size_t wlen)
{
	unsigned int done = st->batch ? st->batch->done : 0;
	const struct fsnap *was;
	struct snap after;
	int ret;

	if (err != ENOMEM) {
		snprintf(why, wlen, "failed with %s (errno %d), not ENOMEM",
			 strerror(err), err);
		return -1;
	}
	if (st->cmd == KBLOOM_IOC_OPEN && check_no_new_fd(why, wlen))
		return -1;
	if (st->batch && done > st->batch->count) {
		snprintf(why, wlen, "done %u of %u", done, st->batch->count);
		return -1;
	}
	if (!done || st->cmd == KBLOOM_IOC_QUERY_BATCH) {
		/*
		 * Nothing applied: everything as before, statistics too
		 * (QUERY_BATCH counts the queries it did: not compared).
		 */
		return check_unchanged_after(before, NULL, NULL,
				st->cmd == KBLOOM_IOC_QUERY_BATCH ?
				0 : SAME_STATS, why, wlen);
	}
	/* A prefix was applied. */
	was = snap_find(before, st->target);
	if (snap_take(&after, why, wlen))
		return -1;
	ret = snap_diff(before, &after, st->target, NULL, SAME_STATS, why,
			wlen);
	if (!ret) {
		const struct fsnap *now = snap_find(&after, st->target);
		struct image want;

		ret = expect_prefix(st, was, done, &want, why, wlen);
		if (!ret && memcmp(now->im.payload, want.payload,
				   want.hdr.payload_len)) {
			snprintf(why, wlen, "failed after %u keys, but the contents are not the old ones plus exactly those keys",
				 done);
			ret = -1;
		}
		if (!ret && st->cmd != KBLOOM_IOC_REMOVE_BATCH &&
		    now->info.adds != was->info.adds + done) {
			snprintf(why, wlen, "failed after %u keys, but adds went from %llu to %llu",
				 done, was->info.adds, now->info.adds);
			ret = -1;
		}
		if (!ret)
			image_free(&want);
	}
	snap_free(&after);
	if (restore(was) && !ret) {
		snprintf(why, wlen, "cannot restore %s", st->target);
		ret = -1;
	}
	return ret;
}

/* The steps of one sweep; false if any went wrong (said in diag lines). */
static bool sweep_steps(struct sweep *sw, unsigned int *reached)
{
	char why[512] = "";
	unsigned int n, nerr = 0;
	bool ok = true, finished = false;

	sw->points = sw->failed = sw->absorbed = 0;
	for (n = 1; n <= MAX_POINTS && !finished; n++) {
		struct snap before;
		struct step st = {};
		bool injected;
		int rc, err;

		*reached = n - 1;
		if (snap_take(&before, why, sizeof(why))) {
			diag("%s: before step %u: %s", sw->name, n, why);
			return false;
		}
		sw->prep(&st, &before);
		rc = inject_ioctl(n, st.cmd, st.arg, &err, &injected);
		if (!injected) {
			/* Past every allocation: it must simply work. */
			finished = true;
			sw->points = n - 1;
			*reached = n - 1;
			if (rc) {
				snprintf(why, sizeof(why), "the call failed without a fault: %s",
					 strerror(err));
			} else if (!sw->success(&st, &before, why, sizeof(why))) {
				why[0] = 0;
			}
			if (why[0]) {
				diag("%s: %s", sw->name, why);
				ok = false;
			}
		} else if (!rc) {
			/* The fault was absorbed: the job must be whole. */
			sw->absorbed++;
			if (sw->success(&st, &before, why, sizeof(why))) {
				diag("%s: fault at allocation %u absorbed, but: %s",
				     sw->name, n, why);
				ok = false;
				nerr++;
			}
		} else {
			sw->failed++;
			if (verbose)
				diag("%s: allocation %u: %s, done %u, memory_used %llu (was %llu)",
				     sw->name, n, strerror(err),
				     st.batch ? st.batch->done : 0,
				     memory_used(), before.mem);
			if (judge_failure(&st, &before, err, why,
					  sizeof(why))) {
				diag("%s: fault at allocation %u: %s", sw->name,
				     n, why);
				ok = false;
				nerr++;
			}
		}
		snap_free(&before);
		/* Keep going past a bad step (to count them), not forever. */
		if (nerr >= 5) {
			diag("%s: stopping after %u bad steps", sw->name, nerr);
			return false;
		}
	}
	if (!finished) {
		diag("%s: still failing after %u injection points", sw->name,
		     MAX_POINTS);
		ok = false;
	}
	return ok;
}

/*
 * Is memory_used back to exactly what the live filters are charged, once
 * the deferred frees are done? If not, *excess is by how much.
 */
static bool memory_settles(char *why, size_t wlen, long long *excess)
{
	struct snap s;
	bool was = precise;
	int ret;

	precise = true;
	ret = snap_take(&s, why, wlen);
	precise = was;
	if (!ret) {
		snap_free(&s);
		return true;
	}
	/* The filters are whole (else snap_take said so): measure. */
	*excess = 0;
	{
		char names[MAXF][KBLOOM_NAME_MAX];
		unsigned int count, i;
		long long sum = 0;

		if (!k_list(names, MAXF, &count) && count <= MAXF) {
			for (i = 0; i < count; i++) {
				struct kbloom_info info;

				if (!k_info(names[i], &info))
					sum += filter_charge(names[i], &info);
			}
			*excess = (long long)memory_used() - sum;
		}
	}
	return false;
}

static bool run_sweep(struct sweep *sw, unsigned int tapno)
{
	char why[512];
	unsigned int reached;
	ull t0 = now_ms();
	bool ok = sweep_steps(sw, &reached);
	long long excess;

	if (!memory_settles(why, sizeof(why), &excess)) {
		diag("%s: after the sweep: %s", sw->name, why);
		ok = false;
		/* From now on, judge against what is left over. */
		mem_offset = excess;
		if (!precise) {
			/* Find the step: again, settling after each one. */
			diag("%s: sweeping again, waiting for the frees at every step to find the one that leaks",
			     sw->name);
			precise = true;
			sweep_steps(sw, &reached);
			precise = false;
			if (!memory_settles(why, sizeof(why), &excess))
				mem_offset = excess;
		}
	}
	printf("%sok %u - fail-nth %s: %u injection points: %u failed cleanly with ENOMEM, %u absorbed (%.1f s)\n",
	       ok ? "" : "not ", tapno, sw->name, reached, sw->failed,
	       sw->absorbed, (now_ms() - t0) / 1000.0);
	fflush(stdout);
	return ok;
}

/* Everything the sweeps read from, made once without faults. */
static int prepare(char *why, size_t wlen)
{
	struct image cnt;
	int err;

	if (fixture(why, wlen))
		return -1;
	keys_make(&keys_batch, "ab", 0, 3000);
	keys_make(&keys_remove, "c", 0, 100);
	keys_single.n = 1;
	keys_single.bytes = single_key;
	keys_single.lens = xmalloc(sizeof(__u32));
	keys_single.lens[0] = strlen(single_key);
	keys_single.size = strlen(single_key);
	/* Half added keys, half (probably) absent. */
	keys_make(&keys_query, "p", 0, 500);
	{
		struct keys absent;

		keys_make(&absent, "zz", 0, 500);
		keys_query.bytes = realloc(keys_query.bytes,
					   keys_query.size + absent.size);
		keys_query.lens = realloc(keys_query.lens, 1000 * sizeof(__u32));
		if (!keys_query.bytes || !keys_query.lens) {
			snprintf(why, wlen, "out of memory");
			return -1;
		}
		memcpy(keys_query.bytes + keys_query.size, absent.bytes,
		       absent.size);
		memcpy(keys_query.lens + 500, absent.lens,
		       500 * sizeof(__u32));
		keys_query.size += absent.size;
		keys_query.n = 1000;
		keys_free(&absent);
	}
	err = k_export(F_PLAIN, &img_for_import);
	/* What REMOVE_BATCH must leave: the same removes on a copy. */
	if (!err)
		err = k_export(F_COUNT, &cnt);
	if (!err) {
		k_destroy(F_SHADOW);
		err = k_import(F_SHADOW, &cnt, false);
		if (!err)
			err = k_batch(KBLOOM_IOC_REMOVE_BATCH, F_SHADOW,
				      &keys_remove, keys_remove.n, NULL, NULL);
		if (!err)
			err = k_export(F_SHADOW, &count_removed);
		k_destroy(F_SHADOW);
		image_free(&cnt);
	}
	if (err) {
		snprintf(why, wlen, "preparing images: %s", strerror(err));
		return -1;
	}
	return 0;
}

/*
 * Fault in the stack we will use and lock everything, so that no page
 * fault (a user page allocation, itself an injection point with
 * ignore-gfp-highmem N) happens during an ioctl under test.
 */
static void __attribute__((noinline)) prefault_stack(void)
{
	volatile char pad[256 * 1024];

	memset((char *)pad, 0, sizeof(pad));
}

/* Is sweep @i to run (-o, and the module's features)? */
static bool wanted(unsigned int i)
{
	if (only && !strstr(sweeps[i].name, only))
		return false;
#ifdef KBLOOM_IOC_ROTATE
	if (sweeps[i].prep == prep_create_window ||
	    sweeps[i].prep == prep_rotate)
		return HAVE_WINDOW;
#endif
	return true;
}

int main(int argc, char **argv)
{
	char why[512];
	unsigned int i, nfail = 0, planned = 0;
	int opt;

	while ((opt = getopt(argc, argv, "d:vpo:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'p':
			precise = true;
			break;
		case 'o':
			only = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-v] [-p] [-o SUBSTRING]\n",
				argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (nth_fd < 0) {
		printf("1..0 # SKIP no /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION off)\n");
		return 0;
	}
	kfd = open(dev, O_RDWR);
	if (kfd >= 0) {
		struct kbloom_version v = {};

		if (!ioctl(kfd, KBLOOM_IOC_VERSION, &v))
			features = v.features;
	}
	for (i = 0; i < NSWEEPS; i++)
		planned += wanted(i);
	printf("1..%u\n", planned);

	why[0] = 0;
	if (kfd < 0)
		snprintf(why, sizeof(why), "open %s: %s", dev, strerror(errno));
	else if (configure_injectors())
		snprintf(why, sizeof(why), "cannot configure the injectors in debugfs");
	else
		prepare(why, sizeof(why));
	if (!why[0]) {
		prefault_stack();
		if (mlockall(MCL_CURRENT | MCL_FUTURE))
			snprintf(why, sizeof(why), "mlockall: %s",
				 strerror(errno));
	}
	if (why[0]) {
		diag("%s", why);
		for (i = 1; i <= planned; i++)
			printf("not ok %u - fail-nth: not run (setup failed)\n",
			       i);
		return 1;
	}

	planned = 0;
	for (i = 0; i < NSWEEPS; i++) {
		if (!wanted(i))
			continue;
		if (!run_sweep(&sweeps[i], ++planned))
			nfail++;
	}

	{
		const char *const ours[] = { F_PLAIN, F_LIKE, F_COUNT,
					     F_VICTIM, F_NEW, F_SHADOW, F_WIN };

		for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
			k_destroy(ours[i]);
	}
	diag("fail-nth: %u of %u sweeps failed", nfail, planned);
	return nfail ? 1 : 0;
}
