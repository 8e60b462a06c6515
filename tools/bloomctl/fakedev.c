// SPDX-License-Identifier: GPL-2.0
/*
 * fakedev.so: a stand-in for /dev/bloom, for test-native.sh, so that the
 * parts of bloomctl that talk to the module can be tested without it.
 * LD_PRELOADed into a dynamically linked bloomctl, it answers the ioctls
 * made on the file named by $FAKEDEV as the uapi (include/uapi/linux/
 * kbloom.h) says the module does, for VERSION, CREATE, DESTROY, CLEAR,
 * INFO, LIST, ROTATE, MERGE, COMPARE, EXPORT and IMPORT, windowed filters
 * included, OPEN (a handle is another fd of the fake device), and
 * change tracking (KBLOOM_CREATE_TRACK_CHANGES, COLLECT, APPLY: marks per
 * 64-byte block, kept in $FAKEDEV_STATE/.NAME.marks), with the access-mode
 * rule (EBADF without a read-write fd where the module wants one) and the
 * module's own validation of parameters (kbloom_params_valid(), through
 * sizing.c). Filters live as files in $FAKEDEV_STATE, so that they outlast
 * one bloomctl process. The key commands, one-key and batched, only log
 * each key's bytes in hex ("KEY 0411..."), answer "no" and apply nothing,
 * so that tests see the keys bloomctl builds (flows), unless FAKEDEV_KEYS
 * is set. A windowed filter's timer is not faked unless FAKEDEV_TIMER is
 * set: it rotates only on ROTATE. Every ioctl holds an flock on the
 * directory $FAKEDEV_STATE, so that several processes may share the state.
 *
 * Knobs, all optional:
 *   FAKEDEV_FEATURES	KBLOOM_FEATURE_* mask (default: all, SipHash too)
 *   FAKEDEV_SCHEME	the default hash scheme (default 1, jhash)
 *   FAKEDEV_MAX_FILTERS	CREATE and IMPORT fail with EDQUOT beyond it
 *   FAKEDEV_FAIL	"COMMAND:ERRNO": that command fails so (e.g. CREATE:28)
 *   FAKEDEV_LOG	a file that gets one line per ioctl: the command, the
 *			fd's mode, and the fields that tests look at
 *   FAKEDEV_NO_TMPFILE	openat(O_TMPFILE) fails with EOPNOTSUPP
 *   FAKEDEV_NO_LINK	linkat() of an unnamed file fails (no /proc, no
 *			CAP_DAC_READ_SEARCH)
 *   FAKEDEV_SYSFS	read in place of the module's max_filter_bytes file
 *   FAKEDEV_NO_RENAME	renameat() fails with EIO
 *   FAKEDEV_KEYS	the key commands apply keys with the module's own
 *			code (kmod/kbloom_core.c): add sets bits, query answers
 *   FAKEDEV_TIMER	windowed filters rotate every W / G of CLOCK_REALTIME
 *			(lazily, when next looked at, as if the timer had run)
 *
 * The fingerprint of COLLECT and APPLY is the module's own
 * (kbloom_core_fingerprint()), so that a fake host and a real one share
 * blocks (tools/vm/tests.d/fleet.sh).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/kbloom.h>

#include "kbloom_core.h"
#include "sizing.h"

#define ALL_FEATURES	0x1fffULL

/* What a filter is, in its state file, followed by its payload. */
struct fake_filter {
	uint64_t bits;
	uint32_t hashes;
	uint32_t flags;
	uint64_t capacity;
	uint32_t fpr_ppb;
	uint32_t hash_scheme;
	uint32_t seed[4];
	uint64_t adds;
	uint64_t payload_len;		/* all generations' */
	uint32_t generations;		/* 0: a plain filter */
	uint32_t window_ms;
	uint64_t rotations;
	uint64_t newest_since_ms;	/* CLOCK_REALTIME; the timer is not faked */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static bool has_feature(uint64_t feature)
{
	return env_u64("FAKEDEV_FEATURES", ALL_FEATURES) & feature;
}

static void __attribute__((format(printf, 1, 2))) fake_log(const char *fmt,
							      ...)
{
	const char *path = getenv("FAKEDEV_LOG");
	va_list ap;
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

/* An flock on the directory $FAKEDEV_STATE, held until the fd is closed. */
static int state_lock(void)
{
	static int (*real_open)(const char *, int, ...);
	const char *dir = getenv("FAKEDEV_STATE");
	int fd;

	if (!dir)
		return -1;
	if (!real_open)
		real_open = dlsym(RTLD_NEXT, "open");
	fd = real_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		flock(fd, LOCK_EX);
	return fd;
}

/* Is @fd the fake device? */
static bool is_fake(int fd)
{
	const char *dev = getenv("FAKEDEV");
	struct stat a, b;

	return dev && !fstat(fd, &a) && !stat(dev, &b) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A filter's file in $FAKEDEV_STATE, or (@marks) its change marks'. */
static char *state_path(const char *name, bool marks)
{
	const char *dir = getenv("FAKEDEV_STATE");
	char *p;

	if (!dir || asprintf(&p, marks ? "%s/.%s.marks" : "%s/%s", dir,
			     name) < 0)
		return NULL;
	return p;
}

static bool name_ok(const char name[KBLOOM_NAME_MAX])
{
	size_t len = strnlen(name, KBLOOM_NAME_MAX), i;

	if (!len || len == KBLOOM_NAME_MAX || name[0] == '.')
		return false;
	for (i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-",
			    name[i]))
			return false;
	return true;
}

/* Bytes of one generation's storage (the whole storage of a plain filter). */
static uint64_t gen_bytes(const struct fake_filter *f)
{
	return f->payload_len / (f->generations ? f->generations : 1);
}

/* Move @gens generations of @len bytes each @n places older, newest cleared. */
static void shift_generations(unsigned char *p, uint64_t len, uint32_t gens,
			      uint64_t n)
{
	if (n >= gens) {
		memset(p, 0, len * gens);
		return;
	}
	memmove(p + n * len, p, (gens - n) * len);
	memset(p, 0, n * len);
}

/*
 * FAKEDEV_TIMER: the rotations a windowed filter's timer would have made
 * since its newest generation began, one every W / G, on the schedule.
 */
static void timer_rotate(struct fake_filter *f, unsigned char *payload)
{
	uint64_t period, n, now = now_ms();

	if (!getenv("FAKEDEV_TIMER") || !f->generations || !f->window_ms)
		return;
	period = f->window_ms / f->generations;
	if (!period || now < f->newest_since_ms + period)
		return;
	n = (now - f->newest_since_ms) / period;
	shift_generations(payload, gen_bytes(f), f->generations, n);
	f->rotations += n;
	f->newest_since_ms += n * period;
}

/* A filter's header alone, its file left open at the payload. */
static int load_header(const char *name, struct fake_filter *f, FILE **s)
{
	char *p = state_path(name, false);

	*s = p ? fopen(p, "rb") : NULL;
	free(p);
	if (!*s)
		return ENOENT;
	if (fread(f, sizeof(*f), 1, *s) != 1) {
		fclose(*s);
		*s = NULL;
		return EIO;
	}
	return 0;
}

/* Load a filter; *payload is malloc'd. Returns 0 or an errno. */
static int load_filter(const char *name, struct fake_filter *f,
		       unsigned char **payload)
{
	FILE *s;
	int ret = load_header(name, f, &s);

	if (ret)
		return ret;
	*payload = malloc(f->payload_len);
	if (!*payload ||
	    fread(*payload, 1, f->payload_len, s) != f->payload_len)
		ret = EIO;
	fclose(s);
	if (!ret)
		timer_rotate(f, *payload);
	return ret;
}

/* Write @head, then @len bytes of @data, to the file @path (freed). */
static int store_file(char *path, const void *head, size_t head_len,
		      const void *data, uint64_t len)
{
	FILE *s = path ? fopen(path, "wb") : NULL;
	int ret = 0;

	free(path);
	if (!s)
		return EIO;
	if (fwrite(head, head_len, 1, s) != 1 ||
	    fwrite(data, 1, len, s) != len)
		ret = EIO;
	if (fclose(s))
		ret = EIO;
	return ret;
}

static int store_filter(const char *name, const struct fake_filter *f,
			const unsigned char *payload)
{
	return store_file(state_path(name, false), f, sizeof(*f), payload,
			  f->payload_len);
}

/*
 * Change tracking: a byte per block of each generation, in
 * $FAKEDEV_STATE/.NAME.marks after the rotations they are as of, so that a
 * rotation (made by ROTATE or, lazily, by FAKEDEV_TIMER) moves them along
 * with their generations when they are next read.
 */
#define TRACKING(f)	((f)->flags & KBLOOM_CREATE_TRACK_CHANGES)

static uint64_t nblocks(const struct fake_filter *f)
{
	return (gen_bytes(f) + KBLOOM_BLOCK_BYTES - 1) / KBLOOM_BLOCK_BYTES;
}

static uint32_t ngens(const struct fake_filter *f)
{
	return f->generations ? f->generations : 1;
}

static void drop_marks(const char *name)
{
	char *p = state_path(name, true);

	if (p)
		unlink(p);
	free(p);
}

/* The marks of @f as of its rotations; NULL only without memory. */
static unsigned char *load_marks(const char *name, const struct fake_filter *f)
{
	uint64_t len = ngens(f) * nblocks(f), r = 0;
	unsigned char *m = calloc(len ? len : 1, 1);
	char *p = state_path(name, true);
	FILE *s = p ? fopen(p, "rb") : NULL;

	free(p);
	if (!s)
		return m;
	if (m && fread(&r, sizeof(r), 1, s) == 1 &&
	    fread(m, 1, len, s) == len && r <= f->rotations)
		shift_generations(m, nblocks(f), ngens(f), f->rotations - r);
	else if (m)
		memset(m, 0, len);
	fclose(s);
	return m;
}

static int store_marks(const char *name, const struct fake_filter *f,
		       const unsigned char *m)
{
	return store_file(state_path(name, true), &f->rotations,
			  sizeof(f->rotations), m, ngens(f) * nblocks(f));
}

/* Block @i of generation @g: where it starts, how many bytes it has. */
static uint64_t block_at(const struct fake_filter *f, uint32_t g, uint64_t i,
			 uint64_t *len)
{
	uint64_t gb = gen_bytes(f), off = i * KBLOOM_BLOCK_BYTES;

	*len = gb - off < KBLOOM_BLOCK_BYTES ? gb - off : KBLOOM_BLOCK_BYTES;
	return (uint64_t)g * gb + off;
}

/*
 * A tracking filter whose storage went from @before (NULL: all zero) to
 * @after: mark the blocks where a bit was set.
 */
static int track(const char *name, const struct fake_filter *f,
		 const unsigned char *before, const unsigned char *after)
{
	uint64_t i, j, off, len, nb = nblocks(f);
	unsigned char *m;
	uint32_t g;
	int err;

	if (!TRACKING(f))
		return 0;
	m = load_marks(name, f);
	if (!m)
		return ENOMEM;
	for (g = 0; g < ngens(f); g++)
		for (i = 0; i < nb; i++) {
			off = block_at(f, g, i, &len);
			for (j = 0; j < len; j++)
				if (after[off + j] & ~(before ? before[off + j] : 0)) {
					m[g * nb + i] = 1;
					break;
				}
		}
	err = store_marks(name, f, m);
	free(m);
	return err;
}

/* Store a filter whose storage was @before, marking what changed. */
static int store_tracked(const char *name, const struct fake_filter *f,
			 const unsigned char *before,
			 const unsigned char *after)
{
	int err = store_filter(name, f, after);

	return err ? err : track(name, f, before, after);
}

static bool filter_exists(const char *name)
{
	char *p = state_path(name, false);
	bool ret = p && !access(p, F_OK);

	free(p);
	return ret;
}

static int fake_list(struct kbloom_list *l)
{
	const char *dir = getenv("FAKEDEV_STATE");
	DIR *d = dir ? opendir(dir) : NULL;
	char *names = (char *)(uintptr_t)l->names;
	struct dirent *e;
	uint32_t n = 0;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		/* A field of KBLOOM_NAME_MAX bytes, zero-padded. */
		if (n < l->count) {
			size_t len = strnlen(e->d_name, KBLOOM_NAME_MAX);

			memset(names + (size_t)n * KBLOOM_NAME_MAX, 0,
			       KBLOOM_NAME_MAX);
			memcpy(names + (size_t)n * KBLOOM_NAME_MAX, e->d_name,
			       len);
		}
		n++;
	}
	if (d)
		closedir(d);
	l->count = n;
	return 0;
}

/* CREATE and IMPORT fail with EDQUOT at FAKEDEV_MAX_FILTERS. */
static bool too_many_filters(void)
{
	struct kbloom_list l = { .count = 0 };

	fake_list(&l);
	return l.count >= env_u64("FAKEDEV_MAX_FILTERS", 1000);
}

/* The KBLOOM_CORE_* flags of a filter. */
static uint32_t core_flags(const struct fake_filter *f)
{
	return (f->flags & KBLOOM_CREATE_COUNTING ? KBLOOM_CORE_COUNTING : 0) |
	       (f->flags & KBLOOM_CREATE_BLOCKED ? KBLOOM_CORE_BLOCKED : 0) |
	       (f->hash_scheme == KBLOOM_HASH_SIPHASH ?
		KBLOOM_CORE_SIPHASH : 0);
}

/* The core of generation @g of a filter, over @payload. */
static void core_of(const struct fake_filter *f, unsigned char *payload,
		    uint32_t g, struct kbloom_core *c)
{
	kbloom_core_init(c, (unsigned long *)(payload + g * gen_bytes(f)),
			 f->bits, f->hashes, core_flags(f), f->seed);
}

/* Positions set in generation @g: bits, or non-zero counters. */
static uint64_t weight(const struct fake_filter *f, unsigned char *payload,
		       uint32_t g)
{
	struct kbloom_core c;
	u64 occupied, stuck;

	core_of(f, payload, g, &c);
	kbloom_core_count(&c, &occupied, &stuck);
	return occupied;
}

/* A copy of @len bytes of @p, or NULL without memory. */
static unsigned char *copy_of(const unsigned char *p, uint64_t len)
{
	unsigned char *c = malloc(len);

	return c ? memcpy(c, p, len) : NULL;
}

/* Seeds that differ between filters but not between runs. */
static void new_seed(uint32_t seed[4], uint32_t scheme)
{
	static uint32_t counter;
	uint32_t base = (uint32_t)getpid() * 2654435761U + ++counter;

	seed[0] = base ^ 0x9e3779b9;
	seed[1] = base * 0x85ebca6b;
	seed[2] = scheme == KBLOOM_HASH_SIPHASH ? base * 0xc2b2ae35 : 0;
	seed[3] = scheme == KBLOOM_HASH_SIPHASH ? base ^ 0x27d4eb2f : 0;
}

static int fake_version(struct kbloom_version *v)
{
	memset(v, 0, sizeof(*v));
	v->api_version = KBLOOM_API_VERSION;
	v->hash_scheme = env_u64("FAKEDEV_SCHEME", KBLOOM_HASH_JHASH);
	v->features = env_u64("FAKEDEV_FEATURES", ALL_FEATURES);
	v->min_bits = KBLOOM_MIN_BITS;
	v->max_bits = KBLOOM_MAX_BITS;
	v->max_hashes = KBLOOM_MAX_HASHES;
	v->max_key_len = KBLOOM_KEY_MAX;
	v->max_batch = KBLOOM_BATCH_MAX;
	v->name_max = KBLOOM_NAME_MAX;
	if (v->features & KBLOOM_FEATURE_WINDOW)
		v->max_generations = KBLOOM_MAX_GENERATIONS;
	return 0;
}

/* A scheme the fake module accepts: 0 is its default. */
static int pick_scheme(uint32_t *scheme)
{
	if (!*scheme)
		*scheme = env_u64("FAKEDEV_SCHEME", KBLOOM_HASH_JHASH);
	if (*scheme == KBLOOM_HASH_JHASH ||
	    (*scheme == KBLOOM_HASH_SIPHASH &&
	     has_feature(KBLOOM_FEATURE_SIPHASH)))
		return 0;
	return EINVAL;
}

#define BPF_FLAGS	(KBLOOM_CREATE_BPF_READ | KBLOOM_CREATE_BPF_WRITE)
/* What a filter keeps of its own when made LIKE another or replaced. */
#define OWN_FLAGS	(BPF_FLAGS | KBLOOM_CREATE_TRACK_CHANGES)

/* As the module reports them: write implies read. */
static uint32_t bpf_flags(uint32_t flags)
{
	return flags & KBLOOM_CREATE_BPF_WRITE ? BPF_FLAGS :
	       flags & KBLOOM_CREATE_BPF_READ;
}

static int fake_create_like(struct kbloom_create *cr, struct fake_filter *f,
			    unsigned char **payload)
{
	bool counting = cr->flags & KBLOOM_CREATE_COUNTING;
	int err;

	if (cr->bits || cr->hashes || cr->fpr_ppb || cr->capacity ||
	    cr->hash_scheme || cr->generations || cr->window_ms ||
	    !name_ok(cr->like))
		return EINVAL;
	err = load_filter(cr->like, f, payload);
	if (err)
		return err;
	if ((counting && !(f->flags & KBLOOM_CREATE_COUNTING)) ||
	    (cr->flags & KBLOOM_CREATE_BLOCKED &&
	     !(f->flags & KBLOOM_CREATE_BLOCKED)))
		return EINVAL;
	memset(*payload, 0, f->payload_len);
	f->adds = 0;
	f->rotations = 0;
	/* The BPF access is the call's, not the model's. */
	f->flags = (f->flags & ~OWN_FLAGS) | bpf_flags(cr->flags) |
		   (cr->flags & KBLOOM_CREATE_TRACK_CHANGES);
	return 0;
}

static int fake_create(struct kbloom_create *cr)
{
	unsigned char *payload = NULL;
	struct fake_filter f;
	int err;

	uint32_t g = cr->generations, fpr;

	memset(&f, 0, sizeof(f));
	if (!name_ok(cr->name) ||
	    cr->flags & ~(KBLOOM_CREATE_COUNTING | KBLOOM_CREATE_LIKE |
			  KBLOOM_CREATE_ROTATE_AT_FILL |
			  KBLOOM_CREATE_BLOCKED | BPF_FLAGS |
			  KBLOOM_CREATE_TRACK_CHANGES) ||
	    (cr->flags & KBLOOM_CREATE_TRACK_CHANGES &&
	     (cr->flags & KBLOOM_CREATE_COUNTING ||
	      !has_feature(KBLOOM_FEATURE_CHANGES))) ||
	    (cr->flags & BPF_FLAGS &&
	     !has_feature(KBLOOM_FEATURE_BPF_ACCESS)) ||
	    (cr->flags & KBLOOM_CREATE_BLOCKED &&
	     !has_feature(KBLOOM_FEATURE_BLOCKED)) ||
	    cr->reserved[0] || cr->reserved[1] ||
	    (g && (g < 2 || g > KBLOOM_MAX_GENERATIONS)) ||
	    (!g && cr->window_ms) ||
	    (cr->flags & KBLOOM_CREATE_ROTATE_AT_FILL &&
	     (!g || !cr->capacity)) ||
	    (g && !has_feature(KBLOOM_FEATURE_WINDOW)))
		return EINVAL;
	fpr = sizing_window_fpr(cr->fpr_ppb, g);
	if (cr->flags & KBLOOM_CREATE_LIKE) {
		err = fake_create_like(cr, &f, &payload);
		if (err)
			return err;
		goto store;
	}
	if (pick_scheme(&cr->hash_scheme))
		return EINVAL;
	if (!cr->bits && sizing_size(cr->capacity, fpr,
				     cr->flags & ~KBLOOM_CREATE_LIKE, &f.bits,
				     &f.hashes))
		return EINVAL;
	if (cr->bits) {
		if (cr->fpr_ppb)
			return EINVAL;
		f.bits = cr->bits;
		f.hashes = cr->hashes;
	}
	f.flags = cr->flags & (KBLOOM_CREATE_COUNTING | KBLOOM_CREATE_BLOCKED |
			       KBLOOM_CREATE_ROTATE_AT_FILL);
	if (!sizing_params_valid(f.bits, f.hashes, f.flags, cr->capacity,
				 fpr, NULL, 0))
		return EINVAL;
	f.flags |= bpf_flags(cr->flags) |
		   (cr->flags & KBLOOM_CREATE_TRACK_CHANGES);
	f.generations = g;
	f.window_ms = cr->window_ms;
	f.newest_since_ms = now_ms();
	f.capacity = cr->capacity;
	f.fpr_ppb = cr->fpr_ppb;
	f.hash_scheme = cr->hash_scheme;
	new_seed(f.seed, f.hash_scheme);
	f.payload_len = sizing_bytes(f.bits, f.flags) * (g ? g : 1);
	payload = calloc(1, f.payload_len);
	if (!payload)
		return ENOMEM;
store:
	if (filter_exists(cr->name))
		err = EEXIST;
	else if (too_many_filters())
		err = EDQUOT;
	else
		err = store_filter(cr->name, &f, payload);
	if (!err)
		drop_marks(cr->name);
	if (!err) {
		cr->bits = f.bits;
		cr->hashes = f.hashes;
		cr->hash_scheme = f.hash_scheme;
	}
	free(payload);
	return err;
}

static int fake_info(struct kbloom_info *info)
{
	unsigned char *payload = NULL;
	struct fake_filter f;
	int err = load_filter(info->name, &f, &payload);

	if (err)
		return err;
	info->bits = f.bits;
	info->hashes = f.hashes;
	info->flags = f.flags;
	info->capacity = f.capacity;
	info->fpr_ppb = f.fpr_ppb;
	info->hash_scheme = f.hash_scheme;
	info->adds = f.adds;
	info->memory_bytes = f.payload_len;
	info->window_ms = f.window_ms;
	info->generations = f.generations;
	info->rotations = f.rotations;
	info->newest_age_ms = f.generations ? now_ms() - f.newest_since_ms : 0;
	/* Windowed: the newest generation's, the first. */
	info->bits_set = weight(&f, payload, 0);
	free(payload);
	return 0;
}

/*
 * DESTROY, CLEAR, and ROTATE (newest first: the oldest generation goes, a
 * cleared one comes in front).
 */
static int fake_name_cmd(unsigned long req, struct kbloom_name *a)
{
	unsigned char *payload = NULL;
	struct fake_filter f;
	char *p;
	int err;

	if (req == KBLOOM_IOC_DESTROY) {
		p = state_path(a->name, false);
		err = p && !unlink(p) ? 0 : ENOENT;
		free(p);
		if (!err)
			drop_marks(a->name);
		return err;
	}
	err = load_filter(a->name, &f, &payload);
	if (!err && req == KBLOOM_IOC_ROTATE && !f.generations)
		err = EINVAL;
	if (!err && req == KBLOOM_IOC_ROTATE) {
		shift_generations(payload, gen_bytes(&f), f.generations, 1);
		f.rotations++;
		f.newest_since_ms = now_ms();
	} else if (!err) {
		memset(payload, 0, f.payload_len);
		f.adds = 0;
	}
	if (!err)
		err = store_filter(a->name, &f, payload);
	free(payload);
	return err;
}

static uint32_t mismatch(const struct fake_filter *a,
			 const struct fake_filter *b)
{
	return (a->bits != b->bits ? KBLOOM_MISMATCH_BITS : 0) |
	       (a->hashes != b->hashes ? KBLOOM_MISMATCH_HASHES : 0) |
	       ((a->flags ^ b->flags) & KBLOOM_CREATE_COUNTING ?
		KBLOOM_MISMATCH_COUNTING : 0) |
	       ((a->flags ^ b->flags) & KBLOOM_CREATE_BLOCKED ?
		KBLOOM_MISMATCH_LAYOUT : 0) |
	       (memcmp(a->seed, b->seed, sizeof(a->seed)) ?
		KBLOOM_MISMATCH_SEED : 0) |
	       (a->hash_scheme != b->hash_scheme ?
		KBLOOM_MISMATCH_HASH_SCHEME : 0);
}

/* MERGE and COMPARE with the module's core. */
static int fake_merge(unsigned long req, struct kbloom_merge *mg)
{
	unsigned char *pa = NULL, *pb = NULL, *before = NULL;
	struct kbloom_delta d = { 0 };
	struct kbloom_core ca, cb;
	struct fake_filter a, b;
	u64 both, either;
	int err;

	err = load_filter(mg->dst, &a, &pa);
	if (!err)
		err = load_filter(mg->src, &b, &pb);
	if (!err) {
		mg->mismatch = mismatch(&a, &b);
		if (a.generations || b.generations)
			err = EOPNOTSUPP;
		else if (mg->mismatch)
			err = EINVAL;
	}
	if (err)
		goto out;
	core_of(&a, pa, 0, &ca);
	core_of(&b, pb, 0, &cb);
	if (req == KBLOOM_IOC_COMPARE) {
		mg->bits_dst = weight(&a, pa, 0);
		mg->bits_src = weight(&b, pb, 0);
		kbloom_core_compare(&ca, &cb, &both, &either);
		mg->bits_inter = both;
		mg->bits_union = either;
		goto out;
	}
	before = copy_of(pa, a.payload_len);
	if (!before) {
		err = ENOMEM;
		goto out;
	}
	/* As the module: a filter merged into itself is left as it is. */
	if (strcmp(mg->dst, mg->src))
		kbloom_core_merge(&ca, &cb, &d);
	err = store_tracked(mg->dst, &a, before, pa);
out:
	free(before);
	free(pa);
	free(pb);
	return err;
}

static int fake_export(struct kbloom_image *ki)
{
	unsigned char *payload = NULL;
	struct fake_filter f;
	uint64_t room = ki->payload_len;
	int err;

	if (ki->import_flags || ki->age_ms)
		return EINVAL;
	err = load_filter(ki->name, &f, &payload);
	if (err)
		return err;
	ki->bits = f.bits;
	ki->hashes = f.hashes;
	ki->flags = f.flags;
	ki->seed[0] = f.seed[0];
	ki->seed[1] = f.seed[1];
	ki->seed_hi[0] = f.seed[2];
	ki->seed_hi[1] = f.seed[3];
	ki->adds = f.adds;
	ki->capacity = f.capacity;
	ki->fpr_ppb = f.fpr_ppb;
	ki->hash_scheme = f.hash_scheme;
	ki->payload_len = f.payload_len;
	ki->generations = f.generations;
	ki->window_ms = f.window_ms;
	ki->age_ms = f.generations ? now_ms() - f.newest_since_ms : 0;
	if (room < f.payload_len)
		err = ENOBUFS;
	else
		memcpy((void *)(uintptr_t)ki->payload, payload, f.payload_len);
	free(payload);
	return err;
}

/* IMPORT validates every field as CREATE does, and the payload. */
static int import_valid(const struct kbloom_image *ki)
{
	uint32_t scheme = ki->hash_scheme, g = ki->generations, i;
	uint64_t gb = sizing_bytes(ki->bits, ki->flags);
	const unsigned char *p = (void *)(uintptr_t)ki->payload;
	uint32_t known = KBLOOM_CREATE_COUNTING | KBLOOM_CREATE_BLOCKED |
			 BPF_FLAGS | (g ? KBLOOM_CREATE_ROTATE_AT_FILL : 0) |
			 (ki->flags & KBLOOM_CREATE_COUNTING ? 0 :
			  KBLOOM_CREATE_TRACK_CHANGES);

	if (!name_ok(ki->name) || ki->flags & ~known ||
	    ki->import_flags & ~KBLOOM_IMPORT_REPLACE ||
	    (ki->age_ms && !g) || ki->age_ms > INT32_MAX ||
	    (g && (g < 2 || g > KBLOOM_MAX_GENERATIONS)) ||
	    (!g && ki->window_ms) || !scheme ||
	    pick_scheme(&scheme) ||
	    !sizing_params_valid(ki->bits, ki->hashes, ki->flags,
				 ki->capacity,
				 sizing_window_fpr(ki->fpr_ppb, g), NULL, 0) ||
	    ki->payload_len != gb * (g ? g : 1))
		return EINVAL;
	for (i = 0; i < (g ? g : 1); i++)
		if (!sizing_padding_clear(p + i * gb, ki->bits, ki->flags))
			return EINVAL;
	if (scheme == KBLOOM_HASH_JHASH && (ki->seed_hi[0] || ki->seed_hi[1]))
		return EINVAL;
	return 0;
}

static int fake_import(const struct kbloom_image *ki)
{
	bool replace = ki->import_flags & KBLOOM_IMPORT_REPLACE;
	struct fake_filter f, old;
	int err = import_valid(ki);
	FILE *s;

	if (err)
		return err;
	if (replace != filter_exists(ki->name))
		return replace ? ENOENT : EEXIST;
	if (!replace && too_many_filters())
		return EDQUOT;
	memset(&f, 0, sizeof(f));
	f.bits = ki->bits;
	f.hashes = ki->hashes;
	f.flags = ki->flags;
	/* A replaced filter keeps its own BPF access and tracking. */
	if (replace && !load_header(ki->name, &old, &s)) {
		fclose(s);
		f.flags = (f.flags & ~OWN_FLAGS) | (old.flags & OWN_FLAGS);
	}
	f.capacity = ki->capacity;
	f.fpr_ppb = ki->fpr_ppb;
	f.hash_scheme = ki->hash_scheme;
	f.seed[0] = ki->seed[0];
	f.seed[1] = ki->seed[1];
	f.seed[2] = ki->seed_hi[0];
	f.seed[3] = ki->seed_hi[1];
	f.adds = ki->adds;
	f.payload_len = ki->payload_len;
	f.generations = ki->generations;
	f.window_ms = ki->window_ms;
	f.newest_since_ms = now_ms() - ki->age_ms;
	if (!replace)
		drop_marks(ki->name);
	/* Every block of the new contents is a change. */
	return store_tracked(ki->name, &f, NULL,
			     (void *)(uintptr_t)ki->payload);
}

/* The key commands (ADD to REMOVE_BATCH), and the batched ones. */
#define KEY_CMD(req)	(_IOC_NR(req) >= 0x10 && _IOC_NR(req) <= 0x23)
#define BATCH_CMD(req)	(_IOC_NR(req) >= 0x20)

/* Log a key's bytes in hex. */
static int log_key(const unsigned char *key, __u32 len)
{
	char hex[2 * KBLOOM_KEY_MAX + 1];
	__u32 j;

	if (len < 1 || len > KBLOOM_KEY_MAX)
		return EINVAL;
	for (j = 0; j < len; j++)
		sprintf(hex + 2 * j, "%02x", key[j]);
	fake_log("KEY %s", hex);
	return 0;
}

/* The fingerprint: the module's own (kbloom_core_fingerprint()). */
static uint64_t fingerprint(const struct fake_filter *f)
{
	struct kbloom_core core;

	kbloom_core_init(&core, NULL, f->bits, f->hashes, core_flags(f),
			 f->seed);
	return kbloom_core_fingerprint(&core, f->generations, f->window_ms);
}

/* What COLLECT and APPLY check alike. */
static int blocks_common(const struct kbloom_blocks *b)
{
	if (!b->count || b->reserved0 || b->reserved[0] || b->reserved[1])
		return EINVAL;
	if (b->count > KBLOOM_BLOCKS_MAX)
		return E2BIG;
	return 0;
}

/* The handles' filters: OPEN gives another fd of the fake device. */
static char handle_names[1024][KBLOOM_NAME_MAX];

static const char *target_name(int fd, const char name[KBLOOM_NAME_MAX])
{
	if (name[0] || fd < 0 || fd >= 1024)
		return name;
	return handle_names[fd];
}

static int fake_collect(int fd, struct kbloom_blocks *b)
{
	struct kbloom_block *out = (void *)(uintptr_t)b->blocks;
	const char *name = target_name(fd, b->name);
	unsigned char *payload = NULL, *m = NULL;
	uint64_t pos, end, nb, off, len;
	struct fake_filter f;
	uint32_t g, done = 0, old_flags;
	FILE *s = NULL;
	int err = blocks_common(b);

	if (!err && (b->flags & ~KBLOOM_COLLECT_ALL || b->max_set || b->set))
		err = EINVAL;
	if (!err)
		err = load_header(name, &f, &s);
	if (err)
		goto out;
	/*
	 * A tracking filter that FAKEDEV_TIMER does not rotate: only the
	 * marked blocks are read, so that a large filter stays quick.
	 */
	if (!TRACKING(&f) || b->flags & KBLOOM_COLLECT_ALL ||
	    (getenv("FAKEDEV_TIMER") && f.generations)) {
		fclose(s);
		s = NULL;
		err = load_filter(name, &f, &payload);
		if (err)
			goto out;
	}
	if (f.flags & KBLOOM_CREATE_COUNTING) {
		err = EOPNOTSUPP;
		goto out;
	}
	old_flags = f.flags;
	nb = nblocks(&f);
	/* The first COLLECT starts tracking and reports every non-zero block. */
	if (!TRACKING(&f) || (b->flags & KBLOOM_COLLECT_ALL && !b->cursor)) {
		f.flags |= KBLOOM_CREATE_TRACK_CHANGES;
		track(name, &f, NULL, payload);
	}
	m = load_marks(name, &f);
	if (!m) {
		err = ENOMEM;
		goto out;
	}
	end = (uint64_t)ngens(&f) * nb;
	for (pos = b->cursor; pos < end && done < b->count; pos++) {
		if (!m[pos])
			continue;
		m[pos] = 0;
		g = pos / nb;
		off = block_at(&f, g, pos % nb, &len);
		memset(&out[done], 0, sizeof(out[done]));
		out[done].index = pos % nb;
		out[done].generation = g;
		if (payload)
			memcpy(out[done].data, payload + off, len);
		else if (fseek(s, (long)(sizeof(f) + off), SEEK_SET) ||
			 fread(out[done].data, 1, len, s) != len)
			err = EIO;
		done++;
	}
	/* The storage is unchanged: only a filter that began tracking. */
	if (!err && !(old_flags & KBLOOM_CREATE_TRACK_CHANGES))
		err = store_filter(name, &f, payload);
	if (!err)
		err = store_marks(name, &f, m);
	if (err)
		goto out;
	b->done = done;
	b->cursor = pos < end ? pos : 0;
	b->rotations = f.rotations;
	b->age_ms = f.generations ? now_ms() - f.newest_since_ms : 0;
	b->fingerprint = fingerprint(&f);
out:
	if (s)
		fclose(s);
	free(m);
	free(payload);
	return err;
}

static int fake_apply(int fd, struct kbloom_blocks *b)
{
	const struct kbloom_block *in = (const void *)(uintptr_t)b->blocks;
	const char *name = target_name(fd, b->name);
	unsigned char *payload = NULL, *after = NULL;
	struct kbloom_delta d = { 0 };
	struct kbloom_core c;
	struct fake_filter f;
	uint32_t i, g;
	int err = blocks_common(b);

	if (!err && (b->flags || b->cursor || b->age_ms || b->set))
		err = EINVAL;
	if (!err)
		err = load_filter(name, &f, &payload);
	if (err)
		goto out;
	if (f.flags & KBLOOM_CREATE_COUNTING) {
		err = EOPNOTSUPP;
		goto out;
	}
	/* Every entry is checked before anything changes. */
	for (i = 0; i < b->count && !err; i++) {
		if (in[i].generation >= ngens(&f) || in[i].reserved) {
			err = EINVAL;
			break;
		}
		core_of(&f, payload, in[i].generation, &c);
		if (!kbloom_core_block_valid(&c, in[i].index,
					     (const void *)in[i].data))
			err = EINVAL;
	}
	if (!err && b->fingerprint != fingerprint(&f))
		err = EXDEV;
	if (!err && b->rotations != f.rotations)
		err = ESTALE;
	after = err ? NULL : copy_of(payload, f.payload_len);
	if (!err && !after)
		err = ENOMEM;
	if (err)
		goto out;
	for (i = 0; i < b->count; i++) {
		core_of(&f, after, in[i].generation, &c);
		kbloom_core_block_or(&c, in[i].index, (const void *)in[i].data,
				     &d);
	}
	for (g = 0; b->max_set && g < ngens(&f); g++)
		if (weight(&f, after, g) > b->max_set) {
			err = ENOSPC;
			goto out;
		}
	err = store_tracked(name, &f, payload, after);
	if (!err) {
		b->done = b->count;
		b->set = d.set;
	}
out:
	free(after);
	free(payload);
	return err;
}

/*
 * One key, applied: add to the newest generation; query any; test-and-add
 * answers "seen" if any generation has it and adds it to the newest;
 * remove (counting only) from the newest generation that has it.
 */
static int apply_key(struct fake_filter *f, unsigned char *payload,
		     unsigned long req, const void *key, u32 len, bool *result)
{
	struct kbloom_core c;
	bool hit = false;
	uint32_t g;

	switch (req) {
	case KBLOOM_IOC_ADD:
	case KBLOOM_IOC_ADD_BATCH:
		core_of(f, payload, 0, &c);
		kbloom_core_do(&c, KBLOOM_OP_ADD, key, len, NULL);
		f->adds++;
		break;
	case KBLOOM_IOC_QUERY:
	case KBLOOM_IOC_QUERY_BATCH:
		for (g = 0; g < ngens(f) && !hit; g++) {
			core_of(f, payload, g, &c);
			hit = kbloom_core_do(&c, KBLOOM_OP_QUERY, key, len, NULL);
		}
		break;
	case KBLOOM_IOC_TEST_AND_ADD:
	case KBLOOM_IOC_TEST_AND_ADD_BATCH:
		for (g = 1; g < ngens(f) && !hit; g++) {
			core_of(f, payload, g, &c);
			hit = kbloom_core_do(&c, KBLOOM_OP_QUERY, key, len, NULL);
		}
		core_of(f, payload, 0, &c);
		hit |= kbloom_core_do(&c, KBLOOM_OP_TEST_AND_ADD, key, len, NULL);
		f->adds++;
		break;
	default:
		if (!(f->flags & KBLOOM_CREATE_COUNTING))
			return EOPNOTSUPP;
		for (g = 0; g < ngens(f) && !hit; g++) {
			core_of(f, payload, g, &c);
			if (kbloom_core_do(&c, KBLOOM_OP_QUERY, key, len, NULL))
				hit = kbloom_core_do(&c, KBLOOM_OP_REMOVE, key,
						     len, NULL);
		}
	}
	*result = hit;
	return 0;
}

/*
 * The key commands, one or a batch: every key logged, then, with
 * FAKEDEV_KEYS, applied (apply_key()); without it, each answered "no".
 */
static int fake_keys(int fd, unsigned long req, void *arg)
{
	bool batch = BATCH_CMD(req), r = false;
	struct kbloom_batch *b = arg;
	struct kbloom_key *k = arg;
	const char *name = target_name(fd, arg);
	const unsigned char *key = (const void *)(uintptr_t)(batch ? b->keys :
								 k->key);
	const __u32 *lens = batch ? (const void *)(uintptr_t)b->lens : &k->len;
	unsigned char *results = batch ? (void *)(uintptr_t)b->results : NULL;
	unsigned char *payload = NULL, *before = NULL;
	__u32 i, n = 0, count = batch ? b->count : 1;
	struct fake_filter f;
	int err = count ? 0 : EINVAL;

	if (!err && getenv("FAKEDEV_KEYS")) {
		err = load_filter(name, &f, &payload);
		before = err ? NULL : copy_of(payload, f.payload_len);
		if (!err && !before)
			err = ENOMEM;
		if (err)
			goto out;
	}
	if (results)
		memset(results, 0, (count + 7) / 8);
	for (i = 0; !err && i < count; i++) {
		err = log_key(key, lens[i]);
		if (!err && before)
			err = apply_key(&f, payload, req, key, lens[i], &r);
		if (err)
			break;
		if (r && results)
			results[i / 8] |= 1U << (i % 8);
		n += r;
		key += lens[i];
	}
	if (batch) {
		b->done = i;
		b->hits = n;
	} else if (!err) {
		k->result = r;
	}
	if (before && req != KBLOOM_IOC_QUERY && req != KBLOOM_IOC_QUERY_BATCH) {
		int serr = store_tracked(name, &f, before, payload);

		err = err ? err : serr;
	}
out:
	free(before);
	free(payload);
	return err;
}

/*
 * OPEN: another descriptor of the fake device, in the mode of @fd, which
 * the key commands then take without a name (as the module's handles).
 */
static int fake_open(int fd, struct kbloom_open *o)
{
	int h;

	if (!has_feature(KBLOOM_FEATURE_HANDLE))
		return ENOTTY;
	if (!filter_exists(o->name))
		return ENOENT;
	h = open(getenv("FAKEDEV"),
		 (fcntl(fd, F_GETFL) & O_ACCMODE) | O_CLOEXEC);
	if (h < 0)
		return errno;
	o->fd = h;
	if (h < 1024)
		memcpy(handle_names[h], o->name, KBLOOM_NAME_MAX);
	return 0;
}

static const struct {
	unsigned long req;
	const char *name;
	bool rw;		/* needs a read-write fd */
} commands[] = {
	{ KBLOOM_IOC_OPEN, "OPEN", false },
	{ KBLOOM_IOC_VERSION, "VERSION", false },
	{ KBLOOM_IOC_CREATE, "CREATE", true },
	{ KBLOOM_IOC_DESTROY, "DESTROY", true },
	{ KBLOOM_IOC_CLEAR, "CLEAR", true },
	{ KBLOOM_IOC_INFO, "INFO", false },
	{ KBLOOM_IOC_LIST, "LIST", false },
	{ KBLOOM_IOC_ROTATE, "ROTATE", true },
	{ KBLOOM_IOC_MERGE, "MERGE", true },
	{ KBLOOM_IOC_COMPARE, "COMPARE", true },
	{ KBLOOM_IOC_EXPORT, "EXPORT", false },
	{ KBLOOM_IOC_IMPORT, "IMPORT", true },
	{ KBLOOM_IOC_ADD, "ADD", true },
	{ KBLOOM_IOC_QUERY, "QUERY", false },
	{ KBLOOM_IOC_TEST_AND_ADD, "TEST_AND_ADD", true },
	{ KBLOOM_IOC_REMOVE, "REMOVE", true },
	{ KBLOOM_IOC_ADD_BATCH, "ADD_BATCH", true },
	{ KBLOOM_IOC_QUERY_BATCH, "QUERY_BATCH", false },
	{ KBLOOM_IOC_TEST_AND_ADD_BATCH, "TEST_AND_ADD_BATCH", true },
	{ KBLOOM_IOC_REMOVE_BATCH, "REMOVE_BATCH", true },
	{ KBLOOM_IOC_COLLECT, "COLLECT", true },
	{ KBLOOM_IOC_APPLY, "APPLY", true },
};

static int dispatch(int fd, unsigned long req, void *arg)
{
	if (KEY_CMD(req))
		return fake_keys(fd, req, arg);
	switch (req) {
	case KBLOOM_IOC_VERSION:
		return fake_version(arg);
	case KBLOOM_IOC_CREATE:
		return fake_create(arg);
	case KBLOOM_IOC_DESTROY:
	case KBLOOM_IOC_CLEAR:
	case KBLOOM_IOC_ROTATE:
		return fake_name_cmd(req, arg);
	case KBLOOM_IOC_INFO:
		return fake_info(arg);
	case KBLOOM_IOC_LIST:
		return fake_list(arg);
	case KBLOOM_IOC_MERGE:
	case KBLOOM_IOC_COMPARE:
		return fake_merge(req, arg);
	case KBLOOM_IOC_EXPORT:
		return fake_export(arg);
	case KBLOOM_IOC_IMPORT:
		return fake_import(arg);
	case KBLOOM_IOC_COLLECT:
	case KBLOOM_IOC_APPLY:
		if (!has_feature(KBLOOM_FEATURE_CHANGES))
			return ENOTTY;
		return req == KBLOOM_IOC_COLLECT ? fake_collect(fd, arg) :
						   fake_apply(fd, arg);
	default:
		return ENOTTY;
	}
}

/* "COMMAND:ERRNO" in FAKEDEV_FAIL: that command fails so. */
static int forced_error(const char *cmd)
{
	const char *v = getenv("FAKEDEV_FAIL");
	size_t len = strlen(cmd);

	if (v && !strncmp(v, cmd, len) && v[len] == ':')
		return atoi(v + len + 1);
	return 0;
}

static void log_call(const char *cmd, bool rw, unsigned long req, void *arg)
{
	const struct kbloom_create *cr = arg;
	const struct kbloom_image *ki = arg;
	const struct kbloom_blocks *bl = arg;

	if (req == KBLOOM_IOC_CREATE)
		fake_log("%s %s hash_scheme=%u window_ms=%u generations=%u flags=0x%x",
			 cmd, rw ? "rw" : "ro", cr->hash_scheme, cr->window_ms,
			 cr->generations, cr->flags);
	else if (req == KBLOOM_IOC_IMPORT)
		fake_log("%s %s hash_scheme=%u seed_hi=%x,%x age_ms=%u", cmd,
			 rw ? "rw" : "ro", ki->hash_scheme, ki->seed_hi[0],
			 ki->seed_hi[1], ki->age_ms);
	else if (KEY_CMD(req))
		/* The key commands: by name, or nameless on a handle. */
		fake_log("%s %s name=%.*s", cmd, rw ? "rw" : "ro",
			 KBLOOM_NAME_MAX, (const char *)arg);
	else if (req == KBLOOM_IOC_COLLECT || req == KBLOOM_IOC_APPLY)
		fake_log("%s %s name=%.*s count=%u flags=0x%x cursor=%llu rotations=%llu max_set=%llu",
			 cmd, rw ? "rw" : "ro", KBLOOM_NAME_MAX, bl->name,
			 bl->count, bl->flags, (unsigned long long)bl->cursor,
			 (unsigned long long)bl->rotations,
			 (unsigned long long)bl->max_set);
	else
		fake_log("%s %s", cmd, rw ? "rw" : "ro");
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	bool rw;
	va_list ap;
	void *arg;
	size_t i;
	int err;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!is_fake(fd)) {
		if (!real)
			real = dlsym(RTLD_NEXT, "ioctl");
		return real(fd, req, arg);
	}
	rw = (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR;
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (commands[i].req == req)
			break;
	if (i == sizeof(commands) / sizeof(commands[0])) {
		errno = ENOTTY;
		return -1;
	}
	log_call(commands[i].name, rw, req, arg);
	err = forced_error(commands[i].name);
	if (!err && commands[i].rw && !rw)
		err = EBADF;
	if (!err) {
		/* One ioctl at a time over the state, whatever the process. */
		int lock = state_lock();

		err = req == KBLOOM_IOC_OPEN ? fake_open(fd, arg) :
					      dispatch(fd, req, arg);
		if (lock >= 0)
			close(lock);
	}
	errno = err;
	return err ? -1 : 0;
}

/* The module's parameter, or the file FAKEDEV_SYSFS names instead. */
static const char *redirect(const char *path)
{
	const char *sysfs = getenv("FAKEDEV_SYSFS");

	if (sysfs &&
	    !strcmp(path, "/sys/module/kbloom/parameters/max_filter_bytes"))
		return sysfs;
	return path;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	static int (*real)(int, const char *, int, ...);
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | __O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	if ((flags & __O_TMPFILE) == __O_TMPFILE && getenv("FAKEDEV_NO_TMPFILE")) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (!real)
		real = dlsym(RTLD_NEXT, "openat");
	return real(dirfd, redirect(path), flags, mode);
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | __O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	return openat(AT_FDCWD, path, flags, mode);
}

int linkat(int olddirfd, const char *old, int newdirfd, const char *new,
	   int flags)
{
	static int (*real)(int, const char *, int, const char *, int);

	if (getenv("FAKEDEV_NO_LINK") &&
	    (!strncmp(old, "/proc/", 6) || flags & AT_EMPTY_PATH)) {
		errno = flags & AT_EMPTY_PATH ? EPERM : ENOENT;
		return -1;
	}
	if (!real)
		real = dlsym(RTLD_NEXT, "linkat");
	return real(olddirfd, old, newdirfd, new, flags);
}

int renameat(int olddirfd, const char *old, int newdirfd, const char *new)
{
	static int (*real)(int, const char *, int, const char *);

	if (getenv("FAKEDEV_NO_RENAME")) {
		errno = EIO;
		return -1;
	}
	if (!real)
		real = dlsym(RTLD_NEXT, "renameat");
	return real(olddirfd, old, newdirfd, new);
}
