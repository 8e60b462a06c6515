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
#include <stdarg.h>
#include <sys/mman.h>

#include "../include/kbloom_util.h"

#define MAXF		32
#define MAX_POINTS	4000	/* a sweep that never ends is a failure */
#define SETTLE_MS	12000	/* deferred frees: RCU + workqueue + kobject */

static const char *dev = DEV;
static int kfd = -1;
static int nth_fd = -1;
static bool verbose;
static const char *only;
static bool precise;	/* -p, or the rerun of a sweep that leaked */
/*
 * What memory_used is expected to exceed the charges by: 0, until a sweep
 * leaks; then what it leaked, so that the steps after it (and the
 * precise rerun that looks for the leaking step) are judged on their own.
 */
static u64 mem_offset;
static u64 features;	/* KBLOOM_IOC_VERSION's */
/* What went wrong, for the diagnostic line (fail()). */
static char why[512];

/* --- Small helpers ------------------------------------------------------ */

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

/* Say in why[] what went wrong; -1, for the caller to return. */
static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return -1;
}

/* --- Fault injection ---------------------------------------------------- */

/*
 * fail-nth counts only the allocations the injectors look at: make them
 * look at all of them (sleeping ones, highmem/user pages - vmalloc'd
 * bitmaps are __GFP_HIGHMEM - and order 0), never fail one on their own
 * (probability 0: fail-nth takes precedence) and never print (verbose 0:
 * the harness fails a run whose kernel log has a "Call Trace:").
 */
static int configure_injectors(void)
{
	static const char *const knobs[][2] = {
		{ "verbose", "0" }, { "probability", "0" },
		{ "interval", "1" }, { "times", "-1" }, { "space", "0" },
		{ "task-filter", "N" }, { "ignore-gfp-wait", "N" },
		/* The last two are fail_page_alloc's only. */
		{ "ignore-gfp-highmem", "N" }, { "min-order", "0" },
	};
	static const char *const dirs[] = { "failslab", "fail_page_alloc" };
	char path[256];
	size_t d, i;
	int err, bad = 0;

	for (d = 0; d < ARRAY_SIZE(dirs); d++) {
		for (i = 0; i < ARRAY_SIZE(knobs) - (d ? 0 : 2); i++) {
			snprintf(path, sizeof(path), "/sys/kernel/debug/%s/%s",
				 dirs[d], knobs[i][0]);
			err = sysfs_write_str(path, knobs[i][1]);
			if (err) {
				diag("cannot write %s to %s: %s", knobs[i][1],
				     path, strerror(err));
				bad++;
			}
		}
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

/* --- Images ------------------------------------------------------------- */

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

static int export_image(const char *name, struct image *im)
{
	return kb_export_all(kfd, name, &im->hdr, &im->payload);
}

/* IMPORT @im under @name with @flags (KBLOOM_IMPORT_REPLACE or 0). */
static int import_image(const char *name, const struct image *im, u32 flags)
{
	struct kbloom_image hdr = im->hdr;

	hdr.payload = PTR(im->payload);
	return kb_import(kfd, &hdr, name, flags);
}

/*
 * Do two images have the same parameters and seed (and, with @adds, the
 * same adds, which travels in the image)? Names, buffers, import flags
 * and the age (a clock) aside.
 */
static bool same_header(struct kbloom_image a, struct kbloom_image b,
			bool adds)
{
	memset(a.name, 0, sizeof(a.name));
	memset(b.name, 0, sizeof(b.name));
	a.payload = b.payload = 0;
	a.import_flags = b.import_flags = 0;
	a.age_ms = b.age_ms = 0;
	if (!adds)
		a.adds = b.adds = 0;
	return !memcmp(&a, &b, sizeof(a));
}

static bool same_image(const struct image *a, const struct image *b)
{
	return same_header(a->hdr, b->hdr, true) &&
	       !memcmp(a->payload, b->payload, a->hdr.payload_len);
}

static bool payload_zero(const struct image *im)
{
	size_t i;

	for (i = 0; i < im->hdr.payload_len; i++)
		if (im->payload[i])
			return false;
	return true;
}

/* --- Snapshots of the whole module state -------------------------------- */

struct fsnap {
	char name[KBLOOM_NAME_MAX];
	struct image im;
	struct kbloom_info info;
	u64 charged;	/* sysfs memory_charged: what the budget counts */
};

struct snap {
	unsigned int n;
	struct fsnap f[MAXF];
	u64 mem;	/* memory_used */
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

/* Each filter's EXPORT, INFO (bits_set matching the payload) and charge. */
static int snap_filters(struct snap *s, char (*names)[KBLOOM_NAME_MAX],
			u32 count, u64 *sum)
{
	u32 i;
	int err;

	for (i = 0; i < count; i++) {
		struct fsnap *f = &s->f[i];

		memcpy(f->name, names[i], KBLOOM_NAME_MAX);
		s->n = i + 1;
		err = export_image(f->name, &f->im);
		if (!err)
			err = kb_info(kfd, f->name, &f->info);
		if (!err)
			err = filter_attr(f->name, "memory_charged",
					  &f->charged);
		if (err)
			return fail("EXPORT/INFO/memory_charged %s: %s",
				    f->name, strerror(err));
		if (f->info.bits_set != image_weight(&f->im.hdr, f->im.payload))
			return fail("%s: INFO bits_set %llu, but the payload has %llu",
				    f->name, f->info.bits_set,
				    image_weight(&f->im.hdr, f->im.payload));
		*sum += f->charged;
	}
	return 0;
}

/*
 * Take a consistent snapshot: names from LIST (checked against sysfs and
 * filter_count), each filter's EXPORT and INFO, and memory_used, which
 * must not be below the sum of what the filters are charged (-p: must
 * come down to exactly that once the deferred frees of earlier steps
 * are done).
 */
static int snap_take(struct snap *s)
{
	char (*names)[KBLOOM_NAME_MAX];
	u64 sum = 0, mem = 0, charged;
	u32 count;
	int err;

	memset(s, 0, sizeof(*s));
	if (registry_names(kfd, &names, &count, why, sizeof(why)))
		return -1;
	err = count > MAXF ? fail("%u filters, room for %u", count, MAXF) :
			     snap_filters(s, names, count, &sum);
	free(names);
	if (err) {
		snap_free(s);
		return -1;
	}
	sum += mem_offset;
	err = sysfs_read_u64(SYSFS "/memory_used", &mem);
	if (!err && precise)
		err = settle_within(kfd, mem_offset, SETTLE_MS, &mem, &charged);
	if (err && err != ETIMEDOUT) {
		snap_free(s);
		return fail("memory_used: %s", strerror(err));
	}
	if (precise ? mem != sum : mem < sum) {
		snap_free(s);
		return fail("memory_used %llu, but the %u filters are charged %llu%s",
			    mem, count, sum - mem_offset,
			    mem_offset ? " (plus what earlier steps leaked)" : "");
	}
	s->mem = mem;
	return 0;
}

/* What may differ between two snapshots of the same filter. */
#define SAME_STATS	(1U << 0)	/* adds, queries, hits too */

static int fsnap_diff(const struct fsnap *a, const struct fsnap *b,
		      unsigned int how)
{
	if (!same_header(a->im.hdr, b->im.hdr, false))
		return fail("%s: parameters or seed changed", a->name);
	if (memcmp(a->im.payload, b->im.payload, a->im.hdr.payload_len))
		return fail("%s: contents changed", a->name);
	if (a->charged != b->charged)
		return fail("%s: charged %llu, was %llu", a->name, b->charged,
			    a->charged);
	if ((how & SAME_STATS) &&
	    (a->info.adds != b->info.adds ||
	     a->info.queries != b->info.queries ||
	     a->info.hits != b->info.hits))
		return fail("%s: statistics changed (adds %llu -> %llu, queries %llu -> %llu, hits %llu -> %llu)",
			    a->name, a->info.adds, b->info.adds,
			    a->info.queries, b->info.queries,
			    a->info.hits, b->info.hits);
	return 0;
}

/*
 * @after must have the filters of @before except @skip (compared by the
 * caller) plus @extra (NULL: none).
 */
static int snap_diff(const struct snap *before, const struct snap *after,
		     const char *skip, const char *extra, unsigned int how)
{
	unsigned int i, want = before->n + (extra != NULL);

	if (after->n != want)
		return fail("%u filters, expected %u", after->n, want);
	for (i = 0; i < after->n; i++) {
		const struct fsnap *a = snap_find(before, after->f[i].name);

		if (extra && !strcmp(after->f[i].name, extra))
			continue;
		if (!a)
			return fail("unexpected filter %s", after->f[i].name);
		if (skip && !strcmp(a->name, skip))
			continue;
		if (fsnap_diff(a, &after->f[i], how))
			return -1;
	}
	return 0;
}

/* --- The fixture -------------------------------------------------------- */

#define F_PLAIN		"fn_plain"	/* plain, sized by capacity */
#define F_LIKE		"fn_like"	/* --like fn_plain: mergeable */
#define F_COUNT		"fn_count"	/* counting */
#define F_VICTIM	"fn_victim"	/* for DESTROY */
#define F_NEW		"fn_new"	/* what the creating calls create */
#define F_SHADOW	"fn_shadow"	/* where partial batches are replayed */
#define F_WIN		"fn_win"	/* windowed, 3 generations, no timer */

#define HAVE_WINDOW	(features & KBLOOM_FEATURE_WINDOW)

static const char *const ours[] = { F_PLAIN, F_LIKE, F_COUNT, F_VICTIM,
				    F_NEW, F_SHADOW, F_WIN };

/* "p:0".."p:499", keys_query's first half, go into fn_plain. */
static struct keyset keys_query, keys_like, keys_count;
/* The batches: 3000 new keys; removes. */
static struct keyset keys_batch, keys_remove;

/* An ADD of each key of @ks[0..n) to @name. */
static int add_keys(const char *name, const struct keyset *ks, u32 n)
{
	return ks_batch(kfd, KBLOOM_IOC_ADD_BATCH, name, ks, 0, n, NULL,
			NULL);
}

static int fixture(void)
{
	size_t i;
	int err, g;

	for (i = 0; i < ARRAY_SIZE(ours); i++)
		destroy_quiet(kfd, ours[i]);
	if (!keys_tag(&keys_query, "p", 1000) ||
	    !keys_tag(&keys_like, "l", 300) ||
	    !keys_tag(&keys_count, "c", 200))
		return fail("out of memory");
	err = kb_create(kfd, F_PLAIN, 0, 0, 2000, 10000000, NULL);
	if (!err)
		err = kb_create_like(kfd, F_LIKE, F_PLAIN, 0, 0, NULL);
	if (!err)
		err = kb_create_ex(kfd, F_COUNT, 8192, 4,
				   KBLOOM_CREATE_COUNTING, NULL, NULL);
	if (!err)
		err = kb_create(kfd, F_VICTIM, 4096, 3, 0, 0, NULL);
	if (!err)
		err = add_keys(F_PLAIN, &keys_query, keys_query.count / 2);
	if (!err)
		err = add_keys(F_LIKE, &keys_like, keys_like.count);
	if (!err)
		err = add_keys(F_COUNT, &keys_count, keys_count.count);
	if (!err && HAVE_WINDOW) {
		/* Keys in every generation: add, rotate, add, rotate, add. */
		struct kbloom_create c = { .name = F_WIN, .bits = 4096,
					   .hashes = 3, .generations = 3 };

		err = ioc(kfd, KBLOOM_IOC_CREATE, &c);
		for (g = 0; !err && g < 3; g++) {
			err = add_keys(F_WIN, &keys_like, 100 * (g + 1));
			if (!err && g < 2)
				err = kb_name_cmd(kfd, KBLOOM_IOC_ROTATE,
						  F_WIN);
		}
	}
	if (err)
		return fail("setting up the filters: %s", strerror(err));
	return 0;
}

/* @cmd of keys [0, n) of @ks, without a fault, on a copy of @from. */
static int replay(const struct image *from, unsigned long cmd,
		  const struct keyset *ks, u32 n, struct image *out)
{
	int err;

	destroy_quiet(kfd, F_SHADOW);
	err = import_image(F_SHADOW, from, 0);
	if (!err)
		err = ks_batch(kfd, cmd, F_SHADOW, ks, 0, n, NULL, NULL);
	if (!err)
		err = export_image(F_SHADOW, out);
	destroy_quiet(kfd, F_SHADOW);
	return err;
}

/* --- The sweeps --------------------------------------------------------- */

/*
 * A check of the filter a call changed or created (@now), against the
 * snapshot before the call (@was; NULL for a new filter). For a call that
 * only reads, @now is NULL: it checks what the call wrote back.
 */
typedef int check_fn(const struct fsnap *now, const struct fsnap *was);

/* What a sweep's call does when it succeeds, and how it is undone. */
enum effect {
	READS,		/* nothing changes but statistics */
	CREATES,	/* @target appears; destroyed again */
	MODIFIES,	/* @target changes; restored from its image */
	DESTROYS,	/* @target goes; re-created from its image */
};

/*
 * One sweep: its call, made with the n-th allocation failing for n = 1, 2,
 * ... until the call makes no more. Each step fills the argument from the
 * fields that the call takes.
 */
struct sweep {
	const char *name;
	unsigned long cmd;
	enum effect effect;
	const char *target;		/* the filter the call works on */
	const char *src;		/* MERGE, COMPARE: the other one */
	const char *key;		/* one-key calls */
	const struct keyset *keys;	/* batches */
	struct kbloom_create create;	/* CREATE's argument */
	check_fn *check;
	unsigned int failed, absorbed;
};

/*
 * The argument, shared by the sweeps (one step at a time); each but
 * LIST's begins with the filter's name (MERGE's, COMPARE's: @dst).
 */
static union {
	char name[KBLOOM_NAME_MAX];
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
/* The step under way: its sweep and the snapshot before the call. */
static const struct sweep *cur;
static const struct snap *cur_before;
static char list_buf[MAXF][KBLOOM_NAME_MAX];
static unsigned char results[4096];
static unsigned char *export_buf;
static size_t export_len;
static struct image img_for_import;	/* fn_plain's contents */
/* Longer than the ioctl's on-stack copy: the key itself is allocated. */
static const char single_key[] =
	"single-key, long enough to be copied in by memdup_user() rather than to the stack";
/*
 * Before the OPEN step, the lowest free descriptor (where one would go)
 * and how many are open.
 */
static int free_fd;
static long nfds;

static void prep(const struct sweep *sw)
{
	const struct keyset *ks = sw->keys;

	memset(&arg, 0, sizeof(arg));
	switch (sw->cmd) {
	case KBLOOM_IOC_CREATE:
		arg.c = sw->create;
		break;
	case KBLOOM_IOC_IMPORT:
		arg.img = img_for_import.hdr;
		arg.img.payload = PTR(img_for_import.payload);
		if (sw->effect == MODIFIES)
			arg.img.import_flags = KBLOOM_IMPORT_REPLACE;
		break;
	case KBLOOM_IOC_LIST:
		memset(list_buf, 0, sizeof(list_buf));
		arg.l.names = PTR(list_buf);
		arg.l.count = MAXF;
		break;
	case KBLOOM_IOC_EXPORT:
		memset(export_buf, 0xa5, export_len);
		arg.img.payload = PTR(export_buf);
		arg.img.payload_len = export_len;
		break;
	case KBLOOM_IOC_MERGE:
	case KBLOOM_IOC_COMPARE:
		set_name(arg.m.src, sw->src);
		break;
	case KBLOOM_IOC_OPEN:
		arg.o.fd = -1;
		free_fd = dup(kfd);
		close(free_fd);
		nfds = fds_open();
		break;
	default:
		if (ks) {
			memset(results, 0xa5, sizeof(results));
			fill_batch(&arg.b, "", ks->keys, ks->lens, results,
				   ks->bytes, ks->count);
			arg.b.done = 0;
		} else if (sw->key) {
			arg.k.key = PTR(sw->key);
			arg.k.len = strlen(sw->key);
			arg.k.result = 0xdead;
		}
	}
	if (sw->target)
		set_name(arg.name, sw->target);
}

/* --- Checks of what a successful call did ------------------------------- */

/* CREATE: the new filter is empty, with the geometry CREATE gave back. */
static int check_empty(const struct fsnap *f, const struct fsnap *was)
{
	if (!payload_zero(&f->im) || f->info.bits_set)
		return fail("the new filter is not empty");
	if (f->info.bits != arg.c.bits || f->info.hashes != arg.c.hashes)
		return fail("INFO says %llu bits %u hashes, CREATE said %llu %u",
			    f->info.bits, f->info.hashes, arg.c.bits,
			    arg.c.hashes);
	return 0;
}

/* Like its model in everything but the name and the (empty) contents. */
static int check_like(const struct fsnap *f, const struct fsnap *was)
{
	const struct fsnap *m = snap_find(cur_before, F_PLAIN);

	if (check_empty(f, was))
		return -1;
	if (!same_header(f->im.hdr, m->im.hdr, false))
		return fail("the --like filter differs from its model in parameters or seed");
	return 0;
}

/* IMPORT, new or --replace: the filter exports as the image. */
static int check_imported(const struct fsnap *now, const struct fsnap *was)
{
	if (!same_image(&now->im, &img_for_import))
		return fail("%s does not export as the image it was loaded from",
			    now->name);
	return 0;
}

static int check_list(const struct fsnap *now, const struct fsnap *was)
{
	unsigned int i;

	if (arg.l.count != cur_before->n)
		return fail("LIST says %u filters, there are %u", arg.l.count,
			    cur_before->n);
	for (i = 0; i < cur_before->n; i++)
		if (strcmp(list_buf[i], cur_before->f[i].name))
			return fail("LIST name %u is '%.32s', expected %s", i,
				    list_buf[i], cur_before->f[i].name);
	return 0;
}

static int check_export(const struct fsnap *now, const struct fsnap *was)
{
	struct image got = { arg.img, export_buf };

	if (!same_image(&got, &was->im))
		return fail("EXPORT gave other contents or parameters than before");
	return 0;
}

static int check_info(const struct fsnap *now, const struct fsnap *was)
{
	if (arg.info.bits != was->info.bits ||
	    arg.info.bits_set != was->info.bits_set ||
	    arg.info.memory_bytes != was->info.memory_bytes)
		return fail("INFO differs from the one before");
	return 0;
}

/* The handle works (it finds a key of its filter) and is close-on-exec. */
static int check_open(const struct fsnap *now, const struct fsnap *was)
{
	int fd = arg.o.fd, flags = fcntl(fd, F_GETFD);
	u32 res = 0;
	int err = 0;

	if (flags >= 0 && (flags & FD_CLOEXEC))
		err = kb_skey(fd, KBLOOM_IOC_QUERY, "", "p:7", &res);
	if (flags >= 0)
		close(fd);
	if (flags < 0 || !(flags & FD_CLOEXEC))
		return fail("OPEN's fd %d: %s", fd,
			    flags < 0 ? strerror(errno) : "not close-on-exec");
	if (err || res != 1)
		return fail("QUERY on the handle: %s, result %u",
			    strerror(err), res);
	return 0;
}

static int check_compare(const struct fsnap *now, const struct fsnap *a)
{
	const struct fsnap *b = snap_find(cur_before, F_LIKE);
	u64 uni = 0, inter = 0;
	size_t i;

	for (i = 0; i < a->im.hdr.payload_len; i++) {
		uni += __builtin_popcount(a->im.payload[i] | b->im.payload[i]);
		inter += __builtin_popcount(a->im.payload[i] &
					    b->im.payload[i]);
	}
	if (arg.m.bits_dst != a->info.bits_set ||
	    arg.m.bits_src != b->info.bits_set ||
	    arg.m.bits_union != uni || arg.m.bits_inter != inter)
		return fail("COMPARE gave %llu %llu %llu %llu, the payloads say %llu %llu %llu %llu",
			    arg.m.bits_dst, arg.m.bits_src, arg.m.bits_union,
			    arg.m.bits_inter, a->info.bits_set,
			    b->info.bits_set, uni, inter);
	return 0;
}

/* ADD, TEST_AND_ADD: adds counts one, and the key is found. */
static int check_added(const struct fsnap *now, const struct fsnap *was)
{
	u32 res = 0;
	int err;

	if (now->info.adds != was->info.adds + 1)
		return fail("adds went from %llu to %llu for one key",
			    was->info.adds, now->info.adds);
	err = kb_skey(kfd, KBLOOM_IOC_QUERY, now->name, cur->key, &res);
	if (err || res != 1)
		return fail("%s: the added key not found (%s, result %u)",
			    now->name, strerror(err), res);
	return 0;
}

/* The first half was added: every one of those must say maybe. */
static int check_query_batch(const struct fsnap *now, const struct fsnap *was)
{
	unsigned int i, hits = 0;

	for (i = 0; i < keys_query.count; i++) {
		hits += bit_get(results, i);
		if (i < keys_query.count / 2 && !bit_get(results, i))
			return fail("added key %u reported absent", i);
	}
	if (hits != arg.b.hits)
		return fail("hits %u, the result bits say %u", arg.b.hits,
			    hits);
	return 0;
}

static int check_merged(const struct fsnap *now, const struct fsnap *was)
{
	const struct fsnap *src = snap_find(cur_before, F_PLAIN);
	size_t i;

	for (i = 0; i < now->im.hdr.payload_len; i++)
		if (now->im.payload[i] !=
		    (was->im.payload[i] | src->im.payload[i]))
			return fail("byte %zu of the union is %#x, expected %#x",
				    i, now->im.payload[i],
				    was->im.payload[i] | src->im.payload[i]);
	return 0;
}

/* QUERY, REMOVE of an added key: the answer is 1. */
static int check_query(const struct fsnap *now, const struct fsnap *was)
{
	if (arg.k.result != 1)
		return fail("an added key answered %u", arg.k.result);
	return 0;
}

/* REMOVE of an added key: up to k counters went down by one, none up. */
static int check_single_removed(const struct fsnap *now,
				const struct fsnap *was)
{
	size_t i;
	int s, a, b, down = 0;

	if (check_query(now, was))
		return -1;
	for (i = 0; i < now->im.hdr.payload_len; i++) {
		for (s = 0; s < 8; s += 4) {
			a = was->im.payload[i] >> s & 15;
			b = now->im.payload[i] >> s & 15;
			if (b != a && (b != a - 1 || a == KBLOOM_COUNTER_MAX))
				return fail("a counter went from %d to %d", a,
					    b);
			down += b != a;
		}
	}
	if (!down || down > (int)now->info.hashes)
		return fail("%d counters went down", down);
	return 0;
}

static int check_cleared(const struct fsnap *now, const struct fsnap *was)
{
	if (!payload_zero(&now->im) || now->info.bits_set || now->info.adds)
		return fail("not empty after CLEAR");
	return 0;
}

/* The oldest generation, cleared, is now the newest (stored first). */
static int check_rotated(const struct fsnap *now, const struct fsnap *was)
{
	size_t g = now->im.hdr.generations, one, i;

	if (g < 2 || g != was->im.hdr.generations)
		return fail("%s: %zu generations", now->name, g);
	one = now->im.hdr.payload_len / g;
	for (i = 0; i < one; i++)
		if (now->im.payload[i])
			return fail("after ROTATE the newest generation is not empty");
	if (memcmp(now->im.payload + one, was->im.payload, one * (g - 1)))
		return fail("after ROTATE the other generations did not move down by one");
	return 0;
}

/*
 * A batch that applied @done keys (all of them, or those before it
 * failed): the target must equal its old contents with exactly keys
 * [0, done) applied, replayed without a fault on a copy made from the old
 * image; adds counts them, and each added key is found, so that a fault
 * the replay shares cannot hide one.
 */
static int check_batch(const struct fsnap *now, const struct fsnap *was)
{
	unsigned int done = arg.b.done;
	struct image want = {};
	struct kbloom_batch q;
	int ret = 0, err;

	err = replay(&was->im, cur->cmd, cur->keys, done, &want);
	if (err)
		ret = fail("replaying %u keys on a copy: %s", done,
			   strerror(err));
	else if (memcmp(now->im.payload, want.payload, want.hdr.payload_len))
		ret = fail("%u keys done, but the contents are not the old ones plus exactly those keys",
			   done);
	else if (cur->cmd != KBLOOM_IOC_REMOVE_BATCH &&
		 now->info.adds != was->info.adds + done)
		ret = fail("%u keys done, but adds went from %llu to %llu",
			   done, was->info.adds, now->info.adds);
	else if (cur->cmd != KBLOOM_IOC_REMOVE_BATCH && done &&
		 (ks_batch(kfd, KBLOOM_IOC_QUERY_BATCH, now->name, cur->keys,
			   0, done, NULL, &q) || q.hits != done))
		ret = fail("%s: %u keys done, %u of them found", now->name,
			   done, q.hits);
	image_free(&want);
	return ret;
}

/* --- The table ---------------------------------------------------------- */

#define SWEEP(n, c, e, t, ...)						\
	{ .name = n, .cmd = KBLOOM_IOC_##c, .effect = e, .target = t,	\
	  __VA_ARGS__ }

static struct sweep sweeps[] = {
	SWEEP("CREATE by capacity and rate", CREATE, CREATES, F_NEW,
	      .create = { .capacity = 5000, .fpr_ppb = 1000000 },
	      .check = check_empty),
	SWEEP("CREATE counting, by bits and hashes", CREATE, CREATES, F_NEW,
	      .create = { .bits = 10000, .hashes = 5,
			  .flags = KBLOOM_CREATE_COUNTING },
	      .check = check_empty),
	SWEEP("CREATE --like", CREATE, CREATES, F_NEW,
	      .create = { .like = F_PLAIN, .flags = KBLOOM_CREATE_LIKE },
	      .check = check_like),
	SWEEP("IMPORT as a new filter", IMPORT, CREATES, F_NEW,
	      .check = check_imported),
	SWEEP("IMPORT --replace", IMPORT, MODIFIES, F_LIKE,
	      .check = check_imported),
	SWEEP("LIST", LIST, READS, NULL, .check = check_list),
	SWEEP("EXPORT", EXPORT, READS, F_COUNT, .check = check_export),
	SWEEP("ADD_BATCH (3000 keys, 3 chunks)", ADD_BATCH, MODIFIES, F_PLAIN,
	      .keys = &keys_batch, .check = check_batch),
	SWEEP("QUERY_BATCH", QUERY_BATCH, READS, F_PLAIN,
	      .keys = &keys_query, .check = check_query_batch),
	SWEEP("TEST_AND_ADD_BATCH (3000 keys)", TEST_AND_ADD_BATCH, MODIFIES,
	      F_PLAIN, .keys = &keys_batch, .check = check_batch),
	SWEEP("REMOVE_BATCH on a counting filter", REMOVE_BATCH, MODIFIES,
	      F_COUNT, .keys = &keys_remove, .check = check_batch),
	SWEEP("MERGE", MERGE, MODIFIES, F_LIKE, .src = F_PLAIN,
	      .check = check_merged),
	SWEEP("ADD", ADD, MODIFIES, F_PLAIN, .key = single_key,
	      .check = check_added),
	SWEEP("TEST_AND_ADD", TEST_AND_ADD, MODIFIES, F_PLAIN,
	      .key = single_key, .check = check_added),
	SWEEP("QUERY", QUERY, READS, F_PLAIN, .key = "p:7",
	      .check = check_query),
	SWEEP("REMOVE", REMOVE, MODIFIES, F_COUNT, .key = "c:150",
	      .check = check_single_removed),
	SWEEP("INFO", INFO, READS, F_PLAIN, .check = check_info),
	SWEEP("OPEN (a handle)", OPEN, READS, F_PLAIN, .check = check_open),
	SWEEP("COMPARE", COMPARE, READS, F_PLAIN, .src = F_LIKE,
	      .check = check_compare),
	SWEEP("CLEAR", CLEAR, MODIFIES, F_LIKE, .check = check_cleared),
	SWEEP("DESTROY", DESTROY, DESTROYS, F_VICTIM),
	/* These two only when the module has KBLOOM_FEATURE_WINDOW. */
	SWEEP("CREATE windowed (4 generations, timer)", CREATE, CREATES, F_NEW,
	      .create = { .capacity = 2000, .fpr_ppb = 10000000,
			  .generations = 4,
			  /* a timer, which never fires here */
			  .window_ms = 3600000 },
	      .check = check_empty),
	SWEEP("ROTATE", ROTATE, MODIFIES, F_WIN, .check = check_rotated),
};

/* --- Judging a step ----------------------------------------------------- */

/*
 * A snapshot after the call against @before: the same filters but @skip
 * and @extra (a new one, which must be there), which @check judges
 * instead (@was: @skip's snapshot before). With neither, under -p,
 * memory_used is also what it was.
 */
static int compare_after(const struct snap *before, const char *skip,
			 const char *extra, unsigned int how, check_fn *check,
			 const struct fsnap *was)
{
	const struct fsnap *now = NULL;
	struct snap after;
	int ret;

	if (snap_take(&after))
		return -1;
	ret = snap_diff(before, &after, skip, extra, how);
	if (skip || extra)
		now = snap_find(&after, skip ? skip : extra);
	if (!ret && extra && !now)
		ret = fail("succeeded, but %s does not exist", extra);
	if (!ret && check)
		ret = check(now, was);
	if (!ret && precise && !skip && !extra && after.mem != before->mem)
		ret = fail("memory_used %llu, expected %llu", after.mem,
			   before->mem);
	snap_free(&after);
	return ret;
}

/*
 * The target changed as @check says (DESTROYS: it is gone), the rest did
 * not; then it is restored from its image.
 */
static int changed(const struct sweep *sw, const struct snap *before,
		   unsigned int how, check_fn *check)
{
	const struct fsnap *was = snap_find(before, sw->target);
	struct snap less;
	unsigned int i;
	int ret, err;

	if (sw->effect == DESTROYS) {
		less = *before;
		less.n = 0;
		for (i = 0; i < before->n; i++)
			if (strcmp(before->f[i].name, sw->target))
				less.f[less.n++] = before->f[i];
		less.mem -= was->charged;
		ret = compare_after(&less, NULL, NULL, 0, NULL, NULL);
	} else {
		ret = compare_after(before, sw->target, NULL, how, check, was);
	}
	/* Back as it was: contents, seed, adds. */
	err = import_image(was->name, &was->im, kb_exists(kfd, was->name) ?
						KBLOOM_IMPORT_REPLACE : 0);
	if (err && !ret)
		ret = fail("cannot restore %s: %s", was->name, strerror(err));
	return ret;
}

/* The call succeeded, or absorbed the fault: it did the whole job. */
static int success(const struct sweep *sw, const struct snap *before)
{
	const struct fsnap *was = sw->target ? snap_find(before, sw->target) :
					       NULL;
	int ret;

	if (sw->keys && arg.b.done != sw->keys->count)
		return fail("success with done %u of %u", arg.b.done,
			    sw->keys->count);
	switch (sw->effect) {
	case READS:
		if (sw->check(NULL, was))
			return -1;
		return compare_after(before, NULL, NULL, 0, NULL, NULL);
	case CREATES:
		ret = compare_after(before, NULL, sw->target, 0, sw->check,
				    NULL);
		if (kb_destroy(kfd, sw->target) && !ret)
			ret = fail("cannot destroy %s again", sw->target);
		return ret;
	default:
		return changed(sw, before, 0, sw->check);
	}
}

/*
 * Judge a failed call: the errno, and the state against @before. A batch
 * that applied keys before @done must equal the old contents with exactly
 * those keys applied.
 */
static int judge_failure(const struct sweep *sw, const struct snap *before,
			 int err)
{
	unsigned int done = sw->keys ? arg.b.done : 0;

	if (err != ENOMEM)
		return fail("failed with %s (errno %d), not ENOMEM",
			    strerror(err), err);
	/* A failed OPEN leaves no descriptor behind, and closes none. */
	if (sw->cmd == KBLOOM_IOC_OPEN && fcntl(free_fd, F_GETFD) >= 0)
		return fail("descriptor %d open after a failed OPEN", free_fd);
	if (sw->cmd == KBLOOM_IOC_OPEN && fds_open() != nfds)
		return fail("%ld descriptors open after a failed OPEN, %ld before",
			    fds_open(), nfds);
	if (sw->keys && done > sw->keys->count)
		return fail("done %u of %u", done, sw->keys->count);
	/*
	 * Nothing applied: everything as before, statistics too
	 * (QUERY_BATCH counts the queries it did: not compared).
	 */
	if (sw->cmd == KBLOOM_IOC_QUERY_BATCH)
		return compare_after(before, NULL, NULL, 0, NULL, NULL);
	if (!done)
		return compare_after(before, NULL, NULL, SAME_STATS, NULL,
				     NULL);
	return changed(sw, before, SAME_STATS, check_batch);
}

/* --- Running a sweep ---------------------------------------------------- */

/* The steps of one sweep; false if any went wrong (said in diag lines). */
static bool sweep_steps(struct sweep *sw, unsigned int *reached)
{
	unsigned int n, nerr = 0;
	bool finished = false;

	cur = sw;
	sw->failed = sw->absorbed = 0;
	for (n = 1; n <= MAX_POINTS && !finished; n++) {
		struct snap before;
		bool injected;
		int rc, err, bad;
		u64 mem = ~0ULL;

		*reached = n - 1;
		if (snap_take(&before)) {
			diag("%s: before step %u: %s", sw->name, n, why);
			return false;
		}
		cur_before = &before;
		prep(sw);
		rc = inject_ioctl(n, sw->cmd, &arg, &err, &injected);
		/* Past every allocation, it must simply work. */
		finished = !injected;
		if (rc && !injected) {
			bad = fail("the call failed without a fault: %s",
				   strerror(err));
		} else if (rc) {
			sw->failed++;
			if (verbose) {
				sysfs_read_u64(SYSFS "/memory_used", &mem);
				diag("%s: allocation %u: %s, done %u, memory_used %llu (was %llu)",
				     sw->name, n, strerror(err),
				     sw->keys ? arg.b.done : 0, mem,
				     before.mem);
			}
			bad = judge_failure(sw, &before, err);
		} else {
			/* Absorbed or no fault: the job must be whole. */
			sw->absorbed += injected;
			bad = success(sw, &before);
		}
		if (bad) {
			diag("%s: %s at allocation %u: %s", sw->name,
			     !injected ? "no fault" : rc ? "fault" :
			     "fault absorbed, but", n, why);
			nerr++;
		}
		snap_free(&before);
		/* Keep going past a bad step (to count them), not forever. */
		if (nerr >= 5) {
			diag("%s: stopping after %u bad steps", sw->name, nerr);
			return false;
		}
	}
	if (!finished)
		diag("%s: still failing after %u injection points", sw->name,
		     MAX_POINTS);
	return finished && !nerr;
}

/*
 * Is memory_used back to exactly what the live filters are charged, once
 * the deferred frees are done? If not, *excess is by how much.
 */
static bool memory_settles(u64 *excess)
{
	struct snap s;
	bool was = precise;
	u64 used = 0, sum = 0;
	int ret;

	precise = true;
	ret = snap_take(&s);
	precise = was;
	if (!ret) {
		snap_free(&s);
		return true;
	}
	/* The filters are whole (else snap_take said so): measure. */
	settle_within(kfd, 0, 0, &used, &sum);
	*excess = used - sum;
	return false;
}

static bool run_sweep(struct sweep *sw, unsigned int tapno)
{
	unsigned int reached;
	u64 t0 = now_ms(), excess;
	bool ok = sweep_steps(sw, &reached);

	if (!memory_settles(&excess)) {
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
			if (!memory_settles(&excess))
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
static int prepare(void)
{
	struct image cnt = {};
	int err;

	if (fixture())
		return -1;
	if (!keys_tag(&keys_batch, "ab", 3000) ||
	    !keys_tag(&keys_remove, "c", 100))
		return fail("out of memory");
	err = export_image(F_PLAIN, &img_for_import);
	if (!err)
		err = export_image(F_COUNT, &cnt);
	export_len = cnt.hdr.payload_len;
	export_buf = malloc(export_len);
	if (!err && !export_buf)
		err = ENOMEM;
	image_free(&cnt);
	if (err)
		return fail("preparing images: %s", strerror(err));
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
	if (sweeps[i].cmd == KBLOOM_IOC_ROTATE || sweeps[i].create.generations)
		return HAVE_WINDOW;
	return true;
}

int main(int argc, char **argv)
{
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
	for (i = 0; i < ARRAY_SIZE(sweeps); i++)
		planned += wanted(i);
	printf("1..%u\n", planned);

	if (kfd < 0)
		fail("open %s: %s", dev, strerror(errno));
	else if (configure_injectors())
		fail("cannot configure the injectors in debugfs");
	else
		prepare();
	if (!why[0]) {
		prefault_stack();
		if (mlockall(MCL_CURRENT | MCL_FUTURE))
			fail("mlockall: %s", strerror(errno));
	}
	if (why[0]) {
		diag("%s", why);
		for (i = 1; i <= planned; i++)
			printf("not ok %u - fail-nth: not run (setup failed)\n",
			       i);
		return 1;
	}

	planned = 0;
	for (i = 0; i < ARRAY_SIZE(sweeps); i++) {
		if (!wanted(i))
			continue;
		if (!run_sweep(&sweeps[i], ++planned))
			nfail++;
	}
	for (i = 0; i < ARRAY_SIZE(ours); i++)
		destroy_quiet(kfd, ours[i]);
	diag("fail-nth: %u of %u sweeps failed", nfail, planned);
	return nfail ? 1 : 0;
}
