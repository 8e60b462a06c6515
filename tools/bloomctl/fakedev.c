// SPDX-License-Identifier: GPL-2.0
/*
 * fakedev.so: a stand-in for /dev/bloom, for test-native.sh, so that the
 * parts of bloomctl that talk to the module can be tested without it.
 * LD_PRELOADed into a dynamically linked bloomctl, it answers the ioctls
 * made on the file named by $FAKEDEV as the uapi (include/uapi/linux/
 * kbloom.h) says the module does, for VERSION, CREATE, DESTROY, CLEAR,
 * INFO, LIST, ROTATE, MERGE, COMPARE, EXPORT and IMPORT, windowed filters
 * included, and OPEN (a handle is another fd of the fake device), with
 * the access-mode
 * rule (EBADF without a read-write fd where the module wants one) and the
 * module's own validation of parameters (kbloom_params_valid(), through
 * sizing.c). Filters live as files in $FAKEDEV_STATE, so that they outlast
 * one bloomctl process. The key commands, one-key and batched, only log
 * each key's bytes in hex ("KEY 0411..."), answer "no" and apply nothing,
 * so that tests see the keys bloomctl builds (flows). A windowed filter's timer is not faked:
 * it rotates only on ROTATE.
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
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/kbloom.h>

#include "sizing.h"

#define ALL_FEATURES	0xfffULL

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

/* Is @fd the fake device? */
static bool is_fake(int fd)
{
	const char *dev = getenv("FAKEDEV");
	struct stat a, b;

	return dev && !fstat(fd, &a) && !stat(dev, &b) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static char *state_path(const char *name)
{
	const char *dir = getenv("FAKEDEV_STATE");
	char *p;

	if (!dir || asprintf(&p, "%s/%s", dir, name) < 0)
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

/* Load a filter; *payload is malloc'd. Returns 0 or an errno. */
static int load_filter(const char *name, struct fake_filter *f,
		       unsigned char **payload)
{
	char *p = state_path(name);
	FILE *s = p ? fopen(p, "rb") : NULL;
	int ret = ENOENT;

	free(p);
	if (!s)
		return ENOENT;
	if (fread(f, sizeof(*f), 1, s) == 1) {
		*payload = malloc(f->payload_len);
		if (*payload &&
		    fread(*payload, 1, f->payload_len, s) == f->payload_len)
			ret = 0;
		else
			ret = EIO;
	}
	fclose(s);
	return ret;
}

static int store_filter(const char *name, const struct fake_filter *f,
			const unsigned char *payload)
{
	char *p = state_path(name);
	FILE *s = p ? fopen(p, "wb") : NULL;
	int ret = 0;

	free(p);
	if (!s)
		return EIO;
	if (fwrite(f, sizeof(*f), 1, s) != 1 ||
	    fwrite(payload, 1, f->payload_len, s) != f->payload_len)
		ret = EIO;
	if (fclose(s))
		ret = EIO;
	return ret;
}

static bool filter_exists(const char *name)
{
	char *p = state_path(name);
	bool ret = p && !access(p, F_OK);

	free(p);
	return ret;
}

static uint32_t count_filters(void)
{
	const char *dir = getenv("FAKEDEV_STATE");
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	uint32_t n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* Positions set: bits, or non-zero counters. */
static uint64_t weight(const struct fake_filter *f, const unsigned char *p)
{
	uint64_t i, n = 0;

	for (i = 0; i < f->payload_len; i++)
		n += f->flags & KBLOOM_CREATE_COUNTING ?
		     (uint64_t)(!!(p[i] & 0x0f) + !!(p[i] & 0xf0)) :
		     (uint64_t)__builtin_popcount(p[i]);
	return n;
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
	bool siphash = env_u64("FAKEDEV_FEATURES", ALL_FEATURES) &
		       KBLOOM_FEATURE_SIPHASH;

	if (!*scheme)
		*scheme = env_u64("FAKEDEV_SCHEME", KBLOOM_HASH_JHASH);
	if (*scheme == KBLOOM_HASH_JHASH ||
	    (*scheme == KBLOOM_HASH_SIPHASH && siphash))
		return 0;
	return EINVAL;
}

#define BPF_FLAGS	(KBLOOM_CREATE_BPF_READ | KBLOOM_CREATE_BPF_WRITE)

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
	f->flags = (f->flags & ~BPF_FLAGS) | bpf_flags(cr->flags);
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
			  KBLOOM_CREATE_BLOCKED | BPF_FLAGS) ||
	    (cr->flags & BPF_FLAGS &&
	     !(env_u64("FAKEDEV_FEATURES", ALL_FEATURES) &
	       KBLOOM_FEATURE_BPF_ACCESS)) ||
	    (cr->flags & KBLOOM_CREATE_BLOCKED &&
	     !(env_u64("FAKEDEV_FEATURES", ALL_FEATURES) &
	       KBLOOM_FEATURE_BLOCKED)) ||
	    cr->reserved[0] || cr->reserved[1] ||
	    (g && (g < 2 || g > KBLOOM_MAX_GENERATIONS)) ||
	    (!g && cr->window_ms) ||
	    (cr->flags & KBLOOM_CREATE_ROTATE_AT_FILL &&
	     (!g || !cr->capacity)))
		return EINVAL;
	if (g && !(env_u64("FAKEDEV_FEATURES", ALL_FEATURES) &
		   KBLOOM_FEATURE_WINDOW))
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
	f.flags |= bpf_flags(cr->flags);
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
	else if (count_filters() >= env_u64("FAKEDEV_MAX_FILTERS", 1000))
		err = EDQUOT;
	else
		err = store_filter(cr->name, &f, payload);
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
	if (f.generations)
		f.payload_len /= f.generations;
	info->bits_set = weight(&f, payload);
	free(payload);
	return 0;
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
		if (n < l->count)
			strncpy(names + (size_t)n * KBLOOM_NAME_MAX, e->d_name,
				KBLOOM_NAME_MAX);
		n++;
	}
	if (d)
		closedir(d);
	l->count = n;
	return 0;
}

static int fake_name_cmd(unsigned long req, struct kbloom_name *a)
{
	unsigned char *payload = NULL;
	struct fake_filter f;
	char *p;
	int err;

	if (req == KBLOOM_IOC_DESTROY) {
		p = state_path(a->name);
		err = p && !unlink(p) ? 0 : ENOENT;
		free(p);
		return err;
	}
	err = load_filter(a->name, &f, &payload);
	if (!err) {
		memset(payload, 0, f.payload_len);
		f.adds = 0;
		err = store_filter(a->name, &f, payload);
	}
	free(payload);
	return err;
}

/* Newest first: the oldest goes, a cleared one comes in front. */
static int fake_rotate(struct kbloom_name *a)
{
	unsigned char *payload = NULL;
	struct fake_filter f;
	uint64_t gb;
	int err;

	err = load_filter(a->name, &f, &payload);
	if (!err && !f.generations)
		err = EINVAL;
	if (!err) {
		gb = f.payload_len / f.generations;
		memmove(payload + gb, payload, f.payload_len - gb);
		memset(payload, 0, gb);
		f.rotations++;
		f.newest_since_ms = now_ms();
		err = store_filter(a->name, &f, payload);
	}
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

/* Plain filters only: counters are left to the real module's tests. */
static int fake_merge(unsigned long req, struct kbloom_merge *mg)
{
	unsigned char *pa = NULL, *pb = NULL;
	struct fake_filter a, b;
	uint64_t i;
	int err;

	err = load_filter(mg->dst, &a, &pa);
	if (!err)
		err = load_filter(mg->src, &b, &pb);
	if (!err) {
		mg->mismatch = mismatch(&a, &b);
		if (mg->mismatch || a.generations || b.generations)
			err = EINVAL;
	}
	if (!err && req == KBLOOM_IOC_COMPARE) {
		mg->bits_dst = weight(&a, pa);
		mg->bits_src = weight(&b, pb);
		mg->bits_union = mg->bits_inter = 0;
		for (i = 0; i < a.payload_len; i++) {
			mg->bits_union += __builtin_popcount(pa[i] | pb[i]);
			mg->bits_inter += __builtin_popcount(pa[i] & pb[i]);
		}
	} else if (!err) {
		for (i = 0; i < a.payload_len; i++)
			pa[i] |= pb[i];
		err = store_filter(mg->dst, &a, pa);
	}
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
			 BPF_FLAGS | (g ? KBLOOM_CREATE_ROTATE_AT_FILL : 0);

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
	struct fake_filter f;
	int err = import_valid(ki);

	if (err)
		return err;
	if (replace != filter_exists(ki->name))
		return replace ? ENOENT : EEXIST;
	if (!replace && count_filters() >= env_u64("FAKEDEV_MAX_FILTERS", 1000))
		return EDQUOT;
	memset(&f, 0, sizeof(f));
	f.bits = ki->bits;
	f.hashes = ki->hashes;
	f.flags = ki->flags;
	if (replace) {
		/* A replaced filter keeps its own BPF access. */
		struct fake_filter old;
		unsigned char *payload = NULL;

		if (!load_filter(ki->name, &old, &payload))
			f.flags = (f.flags & ~BPF_FLAGS) |
				  (old.flags & BPF_FLAGS);
		free(payload);
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
	return store_filter(ki->name, &f, (void *)(uintptr_t)ki->payload);
}

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

/* The one-key commands: log the key, answer "no". */
static int fake_key(struct kbloom_key *k)
{
	int err = log_key((const void *)(uintptr_t)k->key, k->len);

	if (!err)
		k->result = 0;
	return err;
}

/* The batched key commands: log every key, answer "no" to each. */
static int fake_keys(struct kbloom_batch *b)
{
	const unsigned char *key = (const void *)(uintptr_t)b->keys;
	const __u32 *lens = (const void *)(uintptr_t)b->lens;
	__u32 i;
	int err;

	for (i = 0; i < b->count; i++) {
		err = log_key(key, lens[i]);
		if (err)
			return err;
		key += lens[i];
	}
	b->done = b->count;
	b->hits = 0;
	return 0;
}

/*
 * OPEN: another descriptor of the fake device, in the mode of @fd, which
 * the key commands then take without a name (as the module's handles).
 */
static int fake_open(int fd, struct kbloom_open *o)
{
	unsigned char *payload = NULL;
	struct fake_filter f;
	int err, h;

	if (!(env_u64("FAKEDEV_FEATURES", ALL_FEATURES) & KBLOOM_FEATURE_HANDLE))
		return ENOTTY;
	err = load_filter(o->name, &f, &payload);
	free(payload);
	if (err)
		return err;
	h = open(getenv("FAKEDEV"),
		 (fcntl(fd, F_GETFL) & O_ACCMODE) | O_CLOEXEC);
	if (h < 0)
		return errno;
	o->fd = h;
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
};

static int dispatch(unsigned long req, void *arg)
{
	switch (req) {
	case KBLOOM_IOC_VERSION:
		return fake_version(arg);
	case KBLOOM_IOC_CREATE:
		return fake_create(arg);
	case KBLOOM_IOC_DESTROY:
	case KBLOOM_IOC_CLEAR:
		return fake_name_cmd(req, arg);
	case KBLOOM_IOC_INFO:
		return fake_info(arg);
	case KBLOOM_IOC_LIST:
		return fake_list(arg);
	case KBLOOM_IOC_ROTATE:
		return fake_rotate(arg);
	case KBLOOM_IOC_MERGE:
	case KBLOOM_IOC_COMPARE:
		return fake_merge(req, arg);
	case KBLOOM_IOC_EXPORT:
		return fake_export(arg);
	case KBLOOM_IOC_IMPORT:
		return fake_import(arg);
	case KBLOOM_IOC_ADD:
	case KBLOOM_IOC_QUERY:
	case KBLOOM_IOC_TEST_AND_ADD:
	case KBLOOM_IOC_REMOVE:
		return fake_key(arg);
	case KBLOOM_IOC_ADD_BATCH:
	case KBLOOM_IOC_QUERY_BATCH:
	case KBLOOM_IOC_TEST_AND_ADD_BATCH:
	case KBLOOM_IOC_REMOVE_BATCH:
		return fake_keys(arg);
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

	if (req == KBLOOM_IOC_CREATE)
		fake_log("%s %s hash_scheme=%u window_ms=%u generations=%u flags=0x%x",
			 cmd, rw ? "rw" : "ro", cr->hash_scheme, cr->window_ms,
			 cr->generations, cr->flags);
	else if (req == KBLOOM_IOC_IMPORT)
		fake_log("%s %s hash_scheme=%u seed_hi=%x,%x age_ms=%u", cmd,
			 rw ? "rw" : "ro", ki->hash_scheme, ki->seed_hi[0],
			 ki->seed_hi[1], ki->age_ms);
	else if (_IOC_NR(req) >= 0x10 && _IOC_NR(req) <= 0x23)
		/* The key commands: by name, or nameless on a handle. */
		fake_log("%s %s name=%.*s", cmd, rw ? "rw" : "ro",
			 KBLOOM_NAME_MAX, (const char *)arg);
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
	if (!err)
		err = req == KBLOOM_IOC_OPEN ? fake_open(fd, arg) :
					      dispatch(req, arg);
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
