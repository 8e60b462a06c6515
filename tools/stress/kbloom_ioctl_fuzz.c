// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_ioctl_fuzz - seeded random ioctl sequences against /dev/bloom.
 *
 * Several processes of several threads each issue random kbloom ioctls for
 * a bounded time: every command and unknown ones, valid and corrupted
 * arguments (bad names, non-zero reserved fields, random flags, huge
 * counts, pointers into unmapped memory and at kernel addresses, argument
 * structures and result buffers on read-only, PROT_NONE or half-mapped
 * pages, memory another thread unmaps meanwhile), read-only and read-write
 * fds, handles (KBLOOM_IOC_OPEN: key commands with no name, every other
 * command), an unprivileged process (EPERM paths), a process that is
 * SIGKILLed in the middle of long calls and restarted, and create/destroy/
 * clear/replace churn on a small set of shared names.
 *
 * Random input has no expected errno, but some things always hold, and
 * are checked:
 *  - no call fails with an errno outside the set the uapi header documents
 *    for that command (ENOTTY for unknown commands, and on a handle for
 *    any but the key commands);
 *  - nothing that needs a read-write fd or CAP_SYS_ADMIN succeeds without;
 *  - each thread owns a few filters nobody else touches, and keeps a shadow
 *    of the keys it added to them (with multiplicities on counting
 *    filters; a batch that failed counts exactly its first @done keys). A
 *    key in the shadow is always found, and a REMOVE of it is never refused,
 *    until the thread itself destroys, clears or replaces the filter.
 *    Half the key commands on an owned filter with a handle go through it;
 *    after the DESTROY, the handle refuses keys with ENOENT.
 *    Calls whose result cannot be written back must change nothing;
 *  - an owned filter never vanishes or appears on its own;
 *  - after the run, quiescent: LIST, sysfs and filter_count agree, every
 *    filter's bits_set matches its exported contents, and once every
 *    filter is destroyed memory_used returns to what it was before.
 *
 * Reproducible: "# seed N" is printed first; --seed N replays the same
 * per-thread sequences of calls (exactly so with --procs 1 --threads 1;
 * with more, the interleaving of threads still varies).
 *
 * Output: TAP ("1..N" first, then one line per property), diagnostics as
 * "# " lines. Exit status 0 only if every property held.
 *
 * Usage: kbloom_ioctl_fuzz [--seed N] [--time SECONDS] [--procs P]
 *                          [--threads T] [-d DEV] [-v]
 *   -v prints the first calls and their results (up to 200 lines).
 */
#include <getopt.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/wait.h>

/* The ioctl wrappers, key and sysfs helpers kbloom_selftest uses too. */
#include "../include/kbloom_util.h"

typedef unsigned long long ull;

#define PAGE		4096UL
#define NSHARED		4	/* fzs0..fzs3: everyone's */
#define NOWN		3	/* per thread: fzo<worker>_<slot> */
#define MAXSK		384	/* shadow keys per owned filter */
#define MAXTHREADS	16
#define MAXPROCS	16
#define OPLOG		12
#define NHANDLES	4	/* per thread: chaos handles held at once */
#define BIG_NAME	"fzbig"	/* large: long CLEAR/MERGE/EXPORT to be killed in */
#define BIG_BITS	(1ULL << 23)
#define FUZZ_BUDGET	(32ULL << 20)	/* max_memory during the run */
#define MAX_MEMORY	"/sys/module/kbloom/parameters/max_memory"

static const char *dev = "/dev/bloom";
static unsigned int opt_time = 60, opt_procs = 3, opt_threads = 3;
static ull opt_seed;
static bool opt_verbose;
static ull deadline_ms;
static u64 features;	/* KBLOOM_IOC_VERSION's, read before the run */

/* --- Shared (across processes) counters --------------------------------- */

struct shared {
	ull ops;
	ull ok_calls;
	ull bad_errno;
	ull lost;		/* shadow violations */
	ull vanished;		/* owned filters appearing/vanishing */
	ull forbidden;		/* succeeded without rights */
	ull other;		/* other inconsistencies */
	ull diag_lines;
	ull kills;
	ull per_cmd_ok[64];
	ull per_cmd_err[64];
	ull slowest_ms;
	char slowest[96];
};

static struct shared *sh;
_Static_assert(sizeof(struct shared) <= 2 * 4096, "struct shared: two pages");

static void add(ull *p, ull v)
{
	__atomic_add_fetch(p, v, __ATOMIC_RELAXED);
}

static bool expired(void)
{
	return now_ms() >= deadline_ms;
}

/* One whole "# ..." line, so that processes do not interleave parts. */
static void diag(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	if (sh && __atomic_add_fetch(&sh->diag_lines, 1,
				     __ATOMIC_RELAXED) > 200)
		return;
	n = snprintf(buf, sizeof(buf), "# ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(1, buf, n) < 0)
		_exit(3);
}

/* --- Random numbers: kbloom_util.h's rng_next(), *r its state ----------- */

static u32 below(u64 *r, u32 n)
{
	return n ? (u32)(rng_next(r) % n) : 0;
}

static bool chance(u64 *r, u32 percent)
{
	return below(r, 100) < percent;
}

/* --- Memory with holes -------------------------------------------------- */

/* Per-process: a read-only page, a PROT_NONE page, an unmapped hole. */
static char *page_ro, *page_none, *hole;
/* A region another thread keeps unmapping, remapping and protecting. */
static char *chaos;
#define CHAOS_PAGES 4

static void *map(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		diag("mmap: %s", strerror(errno));
		_exit(3);
	}
	return p;
}

/*
 * @len bytes of @prot with a PROT_NONE page on each side: a write the
 * kernel is told to make past either end faults there, and never reaches
 * a neighbouring mapping of ours.
 */
static char *map_guarded(size_t len, int prot)
{
	char *p = map(len + 2 * PAGE, PROT_NONE);

	if (prot != PROT_NONE && mprotect(p + PAGE, len, prot)) {
		diag("mprotect: %s", strerror(errno));
		_exit(3);
	}
	return p + PAGE;
}

/*
 * Made after the threads' own regions, the hole between two PROT_NONE
 * pages: no later mapping of ours is small enough to land in it, so it
 * stays unmapped.
 */
static void process_memory(void)
{
	char *three = map(3 * PAGE, PROT_NONE);

	page_ro = map_guarded(PAGE, PROT_READ);
	page_none = map_guarded(PAGE, PROT_NONE);
	chaos = map_guarded(CHAOS_PAGES * PAGE, PROT_READ | PROT_WRITE);
	munmap(three + PAGE, PAGE);
	hole = three + PAGE;
}

/* A pointer nobody may dereference, as a u64. */
static u64 bad_ptr(u64 *r)
{
	switch (below(r, 8)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return (uintptr_t)hole + below(r, PAGE);
	case 3: return (uintptr_t)page_none + below(r, PAGE);
	case 4: return 0xffffffff81000000ULL;	/* kernel text */
	case 5: return 0xffff888000000000ULL;	/* direct map */
	case 6: return 1ULL << 47;		/* past the user half */
	default: return rng_next(r);
	}
}

/*
 * A thread's own pages: @len bytes read-write followed by a PROT_NONE
 * guard, so a buffer can end exactly where memory stops.
 */
struct region {
	char *rw;
	size_t len;
	char *guard;
};

static void region_init(struct region *g, size_t len)
{
	g->len = (len + PAGE - 1) & ~(PAGE - 1);
	g->rw = map_guarded(g->len, PROT_READ | PROT_WRITE);
	g->guard = g->rw + g->len;
}

/* --- Commands and the errnos the uapi header documents for each --------- */

struct cmdinfo {
	unsigned long cmd;
	const char *name;
	unsigned int flags;
	const int *errs;	/* 0-terminated; EFAULT, EINVAL, ENOENT: any */
};

#define NEEDS_RW	1	/* never succeeds on a read-only fd */
#define NEEDS_ADMIN	2	/* never succeeds without CAP_SYS_ADMIN */
#define ON_HANDLE	4	/* a handle takes it; any other: ENOTTY */
#define CMD(c, flags, ...)						\
	{ KBLOOM_IOC_##c, #c, flags, (const int[]){ __VA_ARGS__, 0 } }
#define KEY_CMD(c, flags)						\
	CMD(c, (flags) | ON_HANDLE, EBADF, EOPNOTSUPP, ENOMEM)
#define BATCH_CMD(c, flags)						\
	CMD(c, (flags) | ON_HANDLE, EBADF, EOPNOTSUPP, ENOMEM, E2BIG, EINTR)

static const struct cmdinfo cmds[] = {
	CMD(VERSION, 0, 0),
	CMD(CREATE, NEEDS_RW | NEEDS_ADMIN,
	    EBADF, EPERM, EEXIST, EFBIG, ENOSPC, EDQUOT, ENOMEM),
	CMD(DESTROY, NEEDS_RW | NEEDS_ADMIN, EBADF, EPERM, EBUSY),
	CMD(ROTATE, NEEDS_RW | NEEDS_ADMIN, EBADF, EPERM),
	CMD(CLEAR, NEEDS_RW | NEEDS_ADMIN, EBADF, EPERM, EINTR),
	CMD(INFO, 0, 0),
	CMD(OPEN, 0, EMFILE, ENFILE, ENOMEM),
	CMD(LIST, 0, ENOMEM),
	KEY_CMD(ADD, NEEDS_RW),
	KEY_CMD(QUERY, 0),
	KEY_CMD(TEST_AND_ADD, NEEDS_RW),
	KEY_CMD(REMOVE, NEEDS_RW),
	BATCH_CMD(ADD_BATCH, NEEDS_RW),
	BATCH_CMD(QUERY_BATCH, 0),
	BATCH_CMD(TEST_AND_ADD_BATCH, NEEDS_RW),
	BATCH_CMD(REMOVE_BATCH, NEEDS_RW),
	/* Windowed filters are not merged (EOPNOTSUPP); their EXPORT waits
	 * for a rotation under way, so never gives up (no EAGAIN). */
	CMD(MERGE, NEEDS_RW, EBADF, EINTR, EOPNOTSUPP),
	CMD(COMPARE, 0, EBADF, EINTR, EOPNOTSUPP),
	CMD(EXPORT, NEEDS_ADMIN, EPERM, ENOBUFS, ENOMEM, EINTR),
	CMD(IMPORT, NEEDS_RW | NEEDS_ADMIN,
	    EBADF, EPERM, EEXIST, EFBIG, ENOSPC, EDQUOT, ENOMEM, EINTR),
	CMD(COLLECT, NEEDS_RW | NEEDS_ADMIN | ON_HANDLE,
	    EBADF, EPERM, E2BIG, EOPNOTSUPP, ENOSPC, ENOMEM, EINTR),
	CMD(APPLY, NEEDS_RW | NEEDS_ADMIN | ON_HANDLE,
	    EBADF, EPERM, E2BIG, EOPNOTSUPP, ESTALE, EXDEV, ENOSPC, ENOMEM,
	    EINTR),
};

static const struct cmdinfo *cmd_lookup(unsigned long cmd)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (cmds[i].cmd == cmd)
			return &cmds[i];
	return NULL;
}

/* --- Workers ------------------------------------------------------------ */

struct skey {
	u32 id;
	u32 mult;	/* times added (counting: how many removes it takes) */
};

struct owned {
	char name[KBLOOM_NAME_MAX];
	bool exists;
	bool counting;
	u32 bpf;		/* KBLOOM_CREATE_BPF_* it was created with */
	bool full;		/* shadow full: keys added but not tracked */
	char like[KBLOOM_NAME_MAX];	/* compatible sibling, if made --like */
	int handle;		/* KBLOOM_IOC_OPEN's fd on it, or -1 */
	unsigned int n;
	struct skey k[MAXSK];
};

struct worker {
	int proc, thread, id;
	u64 r;			/* rng_next()'s */
	int rw, ro;
	int hfd[NHANDLES];	/* chaos handles (KBLOOM_IOC_OPEN), or -1 */
	bool hfd_ro[NHANDLES];	/* ... opened on the read-only fd */
	bool admin;		/* CAP_SYS_ADMIN: owns filters too */
	u32 next_key;
	struct owned own[NOWN];
	struct region keys;	/* batch keys, ending at a guard */
	struct region res;	/* results, ending at a guard */
	struct region img;	/* export/import payloads */
	char *lens_buf;		/* u32 lens */
	char *scratch_ro;	/* a page we make read-only around a call */
	char oplog[OPLOG][96];
	unsigned int opn;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void note(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->oplog[w->opn++ % OPLOG], sizeof(w->oplog[0]), fmt, ap);
	va_end(ap);
}

/*
 * A property that did not hold: counted in *@count, said on a VIOLATION
 * line, and the thread's last calls after it.
 */
static void violation(struct worker *w, ull *count, const char *fmt, ...)
{
	unsigned int i, from = w->opn > OPLOG ? w->opn - OPLOG : 0;
	char buf[900];
	va_list ap;

	add(count, 1);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	diag("VIOLATION [p%d t%d] %s", w->proc, w->thread, buf);
	for (i = from; i < w->opn; i++)
		diag("  [p%d t%d] op %u: %s", w->proc, w->thread, i,
		     w->oplog[i % OPLOG]);
}

/*
 * Whether @fd is a handle: one of the thread's chaos handles (*@ro: opened
 * on the read-only fd) or an owned filter's (read-write). Otherwise *@ro
 * says whether it is the read-only device fd.
 */
static bool fd_handle(struct worker *w, int fd, bool *ro)
{
	int i;

	*ro = fd == w->ro;
	for (i = 0; i < NHANDLES; i++) {
		if (w->hfd[i] >= 0 && w->hfd[i] == fd) {
			*ro = w->hfd_ro[i];
			return true;
		}
	}
	for (i = 0; i < NOWN; i++)
		if (w->own[i].handle >= 0 && w->own[i].handle == fd)
			return true;
	return false;
}

/*
 * Make the call and judge its errno: one the uapi documents for @cmd, or
 * ENOTTY for an unknown command or one a handle does not take.
 * Returns 0 or the errno.
 */
static int call(struct worker *w, int fd, unsigned long cmd, u64 arg)
{
	const struct cmdinfo *ci = cmd_lookup(cmd);
	ull t0;
	int rc, err;
	const int *e;
	bool ro, handle = fd_handle(w, fd, &ro);
	bool ok;

	t0 = now_ms();
	rc = ioctl(fd, cmd, (unsigned long)arg);
	err = rc ? errno : 0;
	t0 = now_ms() - t0;
	if (t0 > __atomic_load_n(&sh->slowest_ms, __ATOMIC_RELAXED)) {
		/* Racy but only informative. */
		__atomic_store_n(&sh->slowest_ms, t0, __ATOMIC_RELAXED);
		snprintf(sh->slowest, sizeof(sh->slowest), "%s",
			 w->oplog[(w->opn + OPLOG - 1) % OPLOG]);
	}
	add(&sh->ops, 1);
	if (opt_verbose)
		diag("[p%d t%d] %s: %s", w->proc, w->thread,
		     w->oplog[(w->opn + OPLOG - 1) % OPLOG],
		     rc ? strerror(err) : "ok");
	if (ci)
		add(&(rc ? sh->per_cmd_err : sh->per_cmd_ok)[ci - cmds], 1);
	if (!rc) {
		add(&sh->ok_calls, 1);
		if (ci && ((ci->flags & NEEDS_RW && ro) ||
			   (ci->flags & NEEDS_ADMIN && !w->admin) ||
			   (handle && !(ci->flags & ON_HANDLE)))) {
			violation(w, &sh->forbidden, "%s succeeded %s", ci->name,
				  handle && !(ci->flags & ON_HANDLE) ?
				  "on a handle" : ci->flags & NEEDS_RW && ro ?
				  "on a read-only fd" : "without CAP_SYS_ADMIN");
		}
		return 0;
	}
	if (!ci || (handle && !(ci->flags & ON_HANDLE))) {
		ok = err == ENOTTY;
	} else {
		for (ok = false, e = ci->errs; *e; e++)
			ok |= *e == err;
		/* "Common to every command" */
		ok |= err == EFAULT || err == EINVAL || err == ENOENT;
	}
	if (!ok)
		violation(w, &sh->bad_errno, "%s (%#lx)%s failed with %s (errno %d), not a documented errno",
			  ci ? ci->name : "unknown command", cmd,
			  handle ? " on a handle" : "", strerror(err), err);
	return err;
}

static int pick_fd(struct worker *w, bool write)
{
	int h = w->hfd[below(&w->r, NHANDLES)];

	/* Sometimes a handle: key commands work there, others are ENOTTY. */
	if (h >= 0 && chance(&w->r, 15))
		return h;
	if (!write)
		return chance(&w->r, 50) ? w->ro : w->rw;
	return chance(&w->r, 5) ? w->ro : w->rw;
}

/* --- Names -------------------------------------------------------------- */

static void shared_name(struct worker *w, char *name)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "fzs%u", below(&w->r, NSHARED));
	set_name(name, buf);
}

/* A shared name usually; sometimes an invalid or missing one. */
static void any_name(struct worker *w, char *name)
{
	u32 i;

	switch (below(&w->r, 14)) {
	case 0:
		memset(name, 'A', KBLOOM_NAME_MAX);	/* no NUL */
		break;
	case 1:
		memset(name, 0, KBLOOM_NAME_MAX);	/* empty */
		break;
	case 2:
		set_name(name, below(&w->r, 2) ? ".." : ".hidden");
		break;
	case 3:
		set_name(name, below(&w->r, 2) ? "a/b" : "sp ace");
		break;
	case 4:
		for (i = 0; i < KBLOOM_NAME_MAX; i++)
			name[i] = (char)rng_next(&w->r);
		break;
	case 5:
		set_name(name, "fz_nosuch");
		break;
	case 6:
		set_name(name, BIG_NAME);
		break;
	case 7: {
		/* valid name, garbage after the NUL */
		shared_name(w, name);
		for (i = 6; i < KBLOOM_NAME_MAX; i++)
			name[i] = (char)rng_next(&w->r);
		break;
	}
	default:
		shared_name(w, name);
	}
}

/* --- Keys --------------------------------------------------------------- */

static u32 key_text(char *buf, int worker, u32 id)
{
	return (u32)sprintf(buf, "w%dk%u", worker, id);
}

/*
 * Lay out @n keys ending at the keys region's guard (so the region's end
 * is past the last key) and their lengths: written from its start, then
 * moved (callers keep n small enough). @ids: the key ids, or NULL for
 * random keys. Returns the pointer to the first key; *bytes the size.
 */
static char *lay_keys(struct worker *w, const u32 *ids, u32 n, u32 *lens,
		      u64 *bytes)
{
	char *p = w->keys.rw;
	u32 i, j;

	for (i = 0; i < n; p += lens[i++]) {
		if (ids) {
			lens[i] = key_text(p, w->id, ids[i]);
			continue;
		}
		lens[i] = 1 + below(&w->r, 24);
		for (j = 0; j < lens[i]; j++)
			p[j] = (char)rng_next(&w->r);
	}
	*bytes = p - w->keys.rw;
	return memmove(w->keys.guard - *bytes, w->keys.rw, *bytes);
}

/* --- Owned filters and their shadows ------------------------------------ */

static void shadow_clear(struct owned *o)
{
	o->n = 0;
	o->full = false;
}

static struct skey *shadow_find(struct owned *o, u32 id)
{
	unsigned int i;

	for (i = 0; i < o->n; i++)
		if (o->k[i].id == id)
			return &o->k[i];
	return NULL;
}

static void shadow_add(struct owned *o, u32 id)
{
	struct skey *k = shadow_find(o, id);

	if (k) {
		k->mult++;
	} else if (o->n < MAXSK) {
		o->k[o->n].id = id;
		o->k[o->n].mult = 1;
		o->n++;
	} else {
		o->full = true;
	}
}

static void shadow_remove(struct owned *o, u32 id)
{
	struct skey *k = shadow_find(o, id);

	if (k && k->mult && --k->mult == 0)
		*k = o->k[--o->n];
}

/* A key of the shadow was not found or not removed: reported once. */
static void lost(struct worker *w, struct owned *o, const char *what, u32 id)
{
	struct skey *k = shadow_find(o, id);
	char key[32];

	key_text(key, w->id, id);
	violation(w, &sh->lost, "%s: key '%s' of owned filter %s (%s, %u keys in the shadow)",
		  what, key, o->name, o->counting ? "counting" : "plain",
		  o->n);
	if (k)
		*k = o->k[--o->n];
}

/* @o is gone (ENOENT) or there (EEXIST) though we did not make it so. */
static void vanished(struct worker *w, struct owned *o, const char *what,
		     int err)
{
	violation(w, &sh->vanished, "owned filter %s: %s (%s)", o->name, what,
		  strerror(err));
	o->exists = err != ENOENT;
	shadow_clear(o);
}

/* A call on @o, which exists until the thread destroys it: not ENOENT. */
static int own_call(struct worker *w, struct owned *o, int fd,
		    unsigned long cmd, void *arg)
{
	int err = call(w, fd, cmd, (uintptr_t)arg);

	if (err == ENOENT)
		vanished(w, o, cmd_lookup(cmd)->name, err);
	return err;
}

/*
 * The fd for a key command on @o, and the name to give: the device fd
 * (@write: the read-write one) and @o's name, or, half the time if @o has
 * one, its handle and no name.
 */
static int own_key_fd(struct worker *w, struct owned *o, char *name,
		      bool write)
{
	if (o->handle >= 0 && chance(&w->r, 50)) {
		memset(name, 0, KBLOOM_NAME_MAX);
		return o->handle;
	}
	set_name(name, o->name);
	return write || chance(&w->r, 50) ? w->rw : w->ro;
}

/*
 * A batch of the keys @ids[0..n) on @o: laid out, @b filled (no results
 * buffer, @done 0). Returns the fd to give it (own_key_fd()).
 */
static int own_batch(struct worker *w, struct owned *o, const u32 *ids,
		     u32 n, struct kbloom_batch *b, bool write)
{
	u32 *lens = (u32 *)w->lens_buf;
	u64 bytes;
	char *keys = lay_keys(w, ids, n, lens, &bytes);

	fill_batch(b, "", keys, lens, NULL, bytes, n);
	b->done = 0;
	return own_key_fd(w, o, b->name, write);
}

/* Every shadow key must test present (QUERY_BATCH, either fd). */
static void own_verify(struct worker *w, struct owned *o)
{
	u32 ids[MAXSK], i, n = o->n;
	unsigned char *res = (unsigned char *)w->res.guard - (MAXSK / 8);
	struct kbloom_batch b;
	int err, fd;

	if (!o->exists || !n)
		return;
	for (i = 0; i < n; i++)
		ids[i] = o->k[i].id;
	fd = own_batch(w, o, ids, n, &b, false);
	b.results = (uintptr_t)res;
	note(w, "verify %s: %u keys", o->name, n);
	err = own_call(w, o, fd, KBLOOM_IOC_QUERY_BATCH, &b);
	if (err == ENOENT)
		return;
	if (err || b.done != n) {
		violation(w, &sh->other, "verify %s: QUERY_BATCH of %u keys: %s, done %u",
			  o->name, n, strerror(err), b.done);
		return;
	}
	/* One report per key: lost() forgets it. */
	for (i = 0; i < n; i++) {
		if (!bit_get(res, i)) {
			lost(w, o, "added key reported absent", ids[i]);
			return;
		}
	}
}

/* A handle on @o, for some of its key commands (own_key_fd()). */
static void own_open(struct worker *w, struct owned *o)
{
	struct kbloom_open op = {};

	set_name(op.name, o->name);
	note(w, "own open %s", o->name);
	if (!own_call(w, o, w->rw, KBLOOM_IOC_OPEN, &op))
		o->handle = op.fd;
}

/*
 * After its DESTROY, @o's handle must refuse every key (ENOENT), even
 * though it still holds the memory; then it is closed.
 */
static void own_close_handle(struct worker *w, struct owned *o)
{
	struct kbloom_key kk = {};
	char key[32];
	int err;

	if (o->handle < 0)
		return;
	kk.len = key_text(key, w->id, w->next_key++);
	kk.key = (uintptr_t)key;
	note(w, "own add %s through its handle after DESTROY", o->name);
	err = call(w, o->handle, KBLOOM_IOC_ADD, (uintptr_t)&kk);
	if (err != ENOENT)
		violation(w, &sh->other, "ADD on a handle of destroyed %s: %s, not ENOENT",
			  o->name, strerror(err));
	close_fd(&o->handle);
}

static void own_create(struct worker *w, struct owned *o, int slot)
{
	struct kbloom_create c = {};
	struct owned *model = slot ? &w->own[0] : NULL;
	u32 bpf;
	int err;

	close_fd(&o->handle);
	set_name(c.name, o->name);
	o->like[0] = 0;
	if (model && model->exists && chance(&w->r, 60)) {
		c.flags = KBLOOM_CREATE_LIKE;
		set_name(c.like, model->name);
		o->counting = model->counting;
		if (o->counting && chance(&w->r, 50))
			c.flags |= KBLOOM_CREATE_COUNTING;
	} else {
		o->counting = chance(&w->r, 40);
		if (o->counting)
			c.flags = KBLOOM_CREATE_COUNTING;
		if (chance(&w->r, 50)) {
			c.capacity = 100 + below(&w->r, 5000);
			c.fpr_ppb = 1000000 + below(&w->r, 100000000);
		} else {
			c.bits = 64 + below(&w->r, 1 << 16);
			c.hashes = 1 + below(&w->r, 10);
		}
	}
	/* The BPF access is the call's, with --like too; INFO reports it. */
	bpf = (u32[]){ 0, KBLOOM_CREATE_BPF_READ,
		       KBLOOM_CREATE_BPF_READ | KBLOOM_CREATE_BPF_WRITE }
	      [below(&w->r, 3)];
	/* Write alone implies read, and is reported as both. */
	c.flags |= bpf & KBLOOM_CREATE_BPF_WRITE && chance(&w->r, 50) ?
		   KBLOOM_CREATE_BPF_WRITE : bpf;
	note(w, "own create %s%s%s", o->name, c.flags & KBLOOM_CREATE_LIKE ?
	     " like " : "", c.flags & KBLOOM_CREATE_LIKE ? c.like : "");
	err = call(w, w->rw, KBLOOM_IOC_CREATE, (uintptr_t)&c);
	if (!err) {
		o->exists = true;
		o->bpf = bpf;
		shadow_clear(o);
		if (c.flags & KBLOOM_CREATE_LIKE)
			set_name(o->like, model->name);
		if (chance(&w->r, 50))
			own_open(w, o);
	} else if (err == EEXIST) {
		vanished(w, o, "exists though no CREATE of it succeeded", err);
		o->counting = false;	/* unknown: keep to plain ops */
		o->bpf = ~0U;		/* likewise */
	} else if (err == ENOENT && (c.flags & KBLOOM_CREATE_LIKE)) {
		vanished(w, model, "--like model not found", err);
	}
}

/*
 * A one-key @cmd of key @id on @o. With @ro_arg, the structure is on a
 * page that cannot be written back: the call must fail and change
 * nothing. *@result: what the call wrote back.
 */
static int own_key(struct worker *w, struct owned *o, unsigned long cmd,
		   u32 id, bool ro_arg, u32 *result)
{
	struct kbloom_key kk = {}, *kp = &kk;
	char key[32];
	int err, fd;

	kk.len = key_text(key, w->id, id);
	kk.key = (uintptr_t)key;
	fd = own_key_fd(w, o, kk.name, true);
	if (ro_arg) {
		memcpy(w->scratch_ro, &kk, sizeof(kk));
		kp = (struct kbloom_key *)w->scratch_ro;
		mprotect(w->scratch_ro, PAGE, PROT_READ);
	}
	note(w, "own %s %s key %u%s%s", cmd_lookup(cmd)->name, o->name, id,
	     ro_arg ? " (arg read-only)" : "", fd == o->handle ? " (handle)" : "");
	err = own_call(w, o, fd, cmd, kp);
	if (ro_arg)
		mprotect(w->scratch_ro, PAGE, PROT_READ | PROT_WRITE);
	*result = kp->result;
	if (!err && ro_arg)
		violation(w, &sh->other, "%s with an unwritable argument succeeded",
			  cmd_lookup(cmd)->name);
	return err;
}

/* ADD or TEST_AND_ADD one key, sometimes with the structure unwritable. */
static void own_add_one(struct worker *w, struct owned *o, bool tadd)
{
	u32 id = w->next_key++, res;

	if (!own_key(w, o, tadd ? KBLOOM_IOC_TEST_AND_ADD : KBLOOM_IOC_ADD, id,
		     chance(&w->r, 10), &res))
		shadow_add(o, id);
}

/*
 * ADD_BATCH, TEST_AND_ADD_BATCH or REMOVE_BATCH of the keys @ids[0..n) on
 * @o, sometimes with a bad length in the middle, keys that run into the
 * guard page, or result bits that cannot all be written (read-only,
 * PROT_NONE, or ending after the first chunk or earlier): the keys before
 * @done are done, no others, and none whose result bit is not writable. A
 * REMOVE of an added key is never refused.
 */
static void own_batch_cmd(struct worker *w, struct owned *o,
			  unsigned long cmd, const u32 *ids, u32 n)
{
	u32 *lens = (u32 *)w->lens_buf, i, bad_at = ~0U;
	u32 writable = ~0U;	/* keys whose result bits are writable */
	unsigned char *res = (unsigned char *)w->res.guard - (n + 7) / 8;
	const char *how = "", *name = cmd_lookup(cmd)->name;
	struct kbloom_batch b;
	int err, fd = own_batch(w, o, ids, n, &b, true);

	switch (below(&w->r, 8)) {
	case 0:
		/* A bad length: EINVAL, @done tells which. */
		bad_at = below(&w->r, n);
		lens[bad_at] = chance(&w->r, 50) ? 0 : KBLOOM_KEY_MAX + 1;
		how = " (bad length)";
		break;
	case 1:
		/* Results end after the first chunk or earlier. */
		writable = 64 * below(&w->r, 17);
		res = (unsigned char *)w->res.guard - writable / 8;
		how = " (results run into a guard page)";
		break;
	case 2:
		/* The keys buffer claims more than is mapped. */
		b.keys_bytes += below(&w->r, 64);
		if (n > 1)
			lens[n - 1] += below(&w->r, 64);
		how = " (keys run into a guard page)";
		break;
	case 3:
		res = (unsigned char *)(chance(&w->r, 50) ? page_ro :
							    page_none);
		writable = 0;
		how = " (results unwritable)";
		break;
	}
	b.results = (uintptr_t)res;
	note(w, "own %s %s %u keys%s%s", name, o->name, n, how,
	     fd == o->handle ? " (handle)" : "");
	err = own_call(w, o, fd, cmd, &b);
	if (err == ENOENT)
		return;
	if ((!err && b.done != n) || b.done > n || b.done > bad_at ||
	    b.done > writable) {
		violation(w, &sh->other, "%s: %s, done %u of %u, bad length at %d, results writable for %d keys%s",
			  name, strerror(err), b.done, n, (int)bad_at,
			  (int)writable, how);
		return;
	}
	for (i = 0; i < b.done; i++) {
		if (cmd != KBLOOM_IOC_REMOVE_BATCH)
			shadow_add(o, ids[i]);
		else if (bit_get(res, i))
			shadow_remove(o, ids[i]);
		else
			lost(w, o, "REMOVE_BATCH refused an added key", ids[i]);
	}
}

/* A batch of fresh keys. */
static void own_add_batch(struct worker *w, struct owned *o, bool tadd)
{
	u32 n = 1 + below(&w->r, chance(&w->r, 30) ? 2500 : 200);
	u32 ids[2600], i;

	for (i = 0; i < n; i++)
		ids[i] = w->next_key++;
	own_batch_cmd(w, o, tadd ? KBLOOM_IOC_TEST_AND_ADD_BATCH :
				   KBLOOM_IOC_ADD_BATCH, ids, n);
}

/* Remove keys the thread added (never others: that could steal counts). */
static void own_remove(struct worker *w, struct owned *o)
{
	u32 ids[128], n, i, start, res;
	bool ro_arg;
	int err;

	if (!o->n)
		return;
	if (chance(&w->r, 40)) {
		/* One key, sometimes with the structure unwritable. */
		ids[0] = o->k[below(&w->r, o->n)].id;
		ro_arg = chance(&w->r, 20);
		err = own_key(w, o, KBLOOM_IOC_REMOVE, ids[0], ro_arg, &res);
		if (!err && !ro_arg && !res)
			lost(w, o, "REMOVE refused an added key", ids[0]);
		else if (!err)
			shadow_remove(o, ids[0]);
		return;
	}
	/* A batch of distinct keys: a run of consecutive shadow slots. */
	n = 1 + below(&w->r, o->n < 128 ? o->n : 128);
	start = below(&w->r, o->n);
	for (i = 0; i < n; i++)
		ids[i] = o->k[(start + i) % o->n].id;
	own_batch_cmd(w, o, KBLOOM_IOC_REMOVE_BATCH, ids, n);
}

/* CLEAR or DESTROY @o: its shadow is void, and (DESTROY) it is gone. */
static void own_clear(struct worker *w, struct owned *o, bool destroy)
{
	unsigned long cmd = destroy ? KBLOOM_IOC_DESTROY : KBLOOM_IOC_CLEAR;
	struct kbloom_name n = {};
	int err, i;

	set_name(n.name, o->name);
	note(w, "own %s %s", cmd_lookup(cmd)->name, o->name);
	err = own_call(w, o, w->rw, cmd, &n);
	if (err == ENOENT)
		return;
	if (!err || (err == EINTR && !destroy))
		shadow_clear(o);
	if (err || !destroy)
		return;
	o->exists = false;
	own_close_handle(w, o);
	for (i = 0; i < NOWN; i++)
		if (!strcmp(w->own[i].like, o->name))
			w->own[i].like[0] = 0;
}

/*
 * EXPORT an owned filter and IMPORT it back with --replace (the shadow
 * stays true: same contents), or into a free slot (which then shares the
 * shadow). Sometimes the payload is damaged first: the import must then
 * fail and change nothing, or succeed (random bits can be valid) and the
 * target's shadow is void.
 */
static void own_roundtrip(struct worker *w, struct owned *o)
{
	struct kbloom_image im = {};
	struct owned *dst = o;
	bool damage = chance(&w->r, 20);
	int err, i;

	set_name(im.name, o->name);
	im.payload = (uintptr_t)w->img.rw;
	im.payload_len = w->img.len;
	note(w, "own export %s", o->name);
	if (own_call(w, o, w->rw, KBLOOM_IOC_EXPORT, &im))
		return;		/* ENOBUFS: too big for our buffer */
	for (i = 0; i < NOWN; i++)
		if (!w->own[i].exists && chance(&w->r, 50))
			dst = &w->own[i];
	if (damage)
		w->img.rw[below(&w->r, (u32)im.payload_len)] ^=
			(char)(1 << below(&w->r, 8));
	set_name(im.name, dst->name);
	im.import_flags = dst == o ? KBLOOM_IMPORT_REPLACE : 0;
	note(w, "own import %s from %s%s", dst->name, o->name,
	     damage ? " (damaged)" : "");
	err = call(w, w->rw, KBLOOM_IOC_IMPORT, (uintptr_t)&im);
	if (err == ENOENT && dst == o) {
		vanished(w, o, "IMPORT --replace", err);
		return;
	}
	if (err == EEXIST && dst != o) {
		vanished(w, dst, "IMPORT: exists though no CREATE of it succeeded",
			 err);
		dst->bpf = ~0U;		/* unknown */
		return;
	}
	if (err)
		return;
	/*
	 * A filter the image makes takes its BPF access; a replaced one
	 * keeps its own. A handle left from a filter of the name that
	 * vanished is closed.
	 */
	if (dst != o) {
		close_fd(&dst->handle);
		set_name(dst->like, o->name);
	}
	dst->exists = true;
	dst->counting = o->counting;
	dst->bpf = o->bpf;
	if (damage) {
		shadow_clear(dst);
	} else if (dst != o) {
		dst->n = o->n;
		dst->full = o->full;
		memcpy(dst->k, o->k, sizeof(o->k[0]) * o->n);
	}
}

/* MERGE a compatible sibling in: its keys are then in the target too. */
static void own_merge(struct worker *w, struct owned *o)
{
	struct kbloom_merge m = {};
	struct owned *src = NULL;
	unsigned int i;
	int err;

	for (i = 0; i < NOWN; i++)
		if (w->own[i].exists && &w->own[i] != o &&
		    (!strcmp(w->own[i].like, o->name) ||
		     !strcmp(o->like, w->own[i].name)))
			src = &w->own[i];
	if (!src)
		return;
	set_name(m.dst, o->name);
	set_name(m.src, src->name);
	note(w, "own merge %s <- %s", o->name, src->name);
	err = call(w, w->rw, KBLOOM_IOC_MERGE, (uintptr_t)&m);
	if (err == ENOENT) {
		violation(w, &sh->vanished, "MERGE %s <- %s: a side is gone",
			  o->name, src->name);
		return;
	}
	if (err)
		return;		/* e.g. EINVAL: counting flags differ */
	/*
	 * The source's keys are in the target now (counting: the counters
	 * added up, so at least once more: claim one, to stay safe).
	 */
	for (i = 0; i < src->n; i++)
		shadow_add(o, src->k[i].id);
}

static void own_info(struct worker *w, struct owned *o)
{
	struct kbloom_info info = {};
	int err;

	set_name(info.name, o->name);
	note(w, "own info %s", o->name);
	err = own_call(w, o, chance(&w->r, 50) ? w->ro : w->rw,
		       KBLOOM_IOC_INFO, &info);
	if (!err && (info.bits_set > info.bits || !info.memory_bytes ||
		     !!(info.flags & KBLOOM_CREATE_COUNTING) != o->counting ||
		     (o->bpf != ~0U &&
		      (info.flags & (KBLOOM_CREATE_BPF_READ |
				     KBLOOM_CREATE_BPF_WRITE)) != o->bpf) ||
		     (o->n && !info.bits_set)))
		violation(w, &sh->other, "INFO %s: bits %llu bits_set %llu memory %llu flags %#x with %u keys in the shadow",
			  o->name, info.bits, info.bits_set, info.memory_bytes,
			  info.flags, o->n);
}

static void own_step(struct worker *w)
{
	int slot = below(&w->r, NOWN);
	struct owned *o = &w->own[slot];
	u32 c = below(&w->r, 100);

	if (!o->exists) {
		own_create(w, o, slot);
		return;
	}
	if (c < 25)
		own_add_batch(w, o, chance(&w->r, 30));
	else if (c < 40)
		own_add_one(w, o, chance(&w->r, 30));
	else if (c < 55)
		own_verify(w, o);
	else if (c < 68) {
		if (o->counting)
			own_remove(w, o);
		else
			own_verify(w, o);
	} else if (c < 76)
		own_roundtrip(w, o);
	else if (c < 82)
		own_merge(w, o);
	else if (c < 90)
		own_info(w, o);
	else
		own_clear(w, o, c >= 94);
}

/* --- Chaos: random commands, random arguments --------------------------- */

/*
 * Where the argument structure goes: usually the stack, sometimes a page
 * another thread plays with, a read-only page, across the end of mapped
 * memory, or nowhere at all.
 */
static u64 place_arg(struct worker *w, void *arg, size_t size)
{
	char *p;

	switch (below(&w->r, 24)) {
	case 0:
		return bad_ptr(&w->r);
	case 1:
		return (uintptr_t)page_ro;	/* zeros, unwritable */
	case 2:
		/* The structure runs into the guard page. */
		p = w->keys.guard - size / 2;
		memcpy(p, arg, size / 2);
		return (uintptr_t)p;
	case 3:
		/* In the chaos region: maybe unmapped right now. */
		return (uintptr_t)(chaos + below(&w->r, CHAOS_PAGES) * PAGE);
	default:
		return (uintptr_t)arg;
	}
}

/*
 * A chaos step's call, its argument placed by place_arg(), noted as the
 * command and @fmt's words (the name, and what else tells it apart).
 */
static int chaos_call(struct worker *w, int fd, unsigned long cmd, void *arg,
		      size_t size, const char *fmt, ...)
{
	char what[80];
	va_list ap;
	bool ro;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	note(w, "chaos %s %s%s", cmd_lookup(cmd)->name, what,
	     fd_handle(w, fd, &ro) ? " (handle)" : "");
	return call(w, fd, cmd, place_arg(w, arg, size));
}

/* Flip a few random bits of a structure. */
static void chaos_bits(struct worker *w, void *p, size_t size)
{
	u32 i, n = 1 + below(&w->r, 4);

	for (i = 0; i < n; i++)
		((unsigned char *)p)[below(&w->r, (u32)size)] ^=
			(unsigned char)(1 << below(&w->r, 8));
}

/* Sometimes overwrite a field, or one of two reserved words, at random. */
static void poke32(struct worker *w, u32 percent, __u32 *field)
{
	if (chance(&w->r, percent))
		*field = (u32)rng_next(&w->r);
}

static void poke_reserved(struct worker *w, u32 percent, __u64 *reserved)
{
	if (chance(&w->r, percent))
		reserved[below(&w->r, 2)] = rng_next(&w->r);
}

static u32 rnd_count(struct worker *w)
{
	switch (below(&w->r, 8)) {
	case 0: return 0;
	case 1: return KBLOOM_BATCH_MAX;
	case 2: return KBLOOM_BATCH_MAX + 1;
	case 3: return 0xffffffffU;
	case 4: return (u32)rng_next(&w->r);
	default: return 1 + below(&w->r, 300);
	}
}

static u64 rnd_bits(struct worker *w)
{
	switch (below(&w->r, 8)) {
	case 0: return 0;
	case 1: return below(&w->r, 64);
	case 2: return KBLOOM_MAX_BITS + below(&w->r, 2);
	case 3: return rng_next(&w->r);
	case 4: return 1ULL << (30 + below(&w->r, 7));	/* EFBIG/ENOSPC */
	case 5: return 1ULL << (16 + below(&w->r, 6));	/* up to 256 KiB */
	default: return 64 + below(&w->r, 100000);
	}
}

static void chaos_create(struct worker *w, unsigned long cmd)
{
	struct kbloom_create c = {};

	any_name(w, c.name);
	switch (below(&w->r, 4)) {
	case 0:
		c.capacity = chance(&w->r, 80) ? below(&w->r, 100000) :
						 rng_next(&w->r);
		c.fpr_ppb = chance(&w->r, 80) ? below(&w->r, KBLOOM_FPR_ONE + 2) :
						(u32)rng_next(&w->r);
		break;
	case 1:
		c.flags = KBLOOM_CREATE_LIKE;
		any_name(w, c.like);
		break;
	default:
		c.bits = rnd_bits(w);
		c.hashes = below(&w->r, KBLOOM_MAX_HASHES + 3);
		if (chance(&w->r, 20))
			c.capacity = below(&w->r, 100000);
	}
	if (chance(&w->r, 30))
		c.flags |= KBLOOM_CREATE_COUNTING;
	poke32(w, 10, &c.flags);
	if (chance(&w->r, 10))
		c.hash_scheme = below(&w->r, 4);
	if ((features & KBLOOM_FEATURE_WINDOW) && chance(&w->r, 25)) {
		/* Windowed: G generations, W ms (0: by ROTATE only). */
		c.generations = chance(&w->r, 85) ? 2 + below(&w->r, 4) :
				below(&w->r, KBLOOM_MAX_GENERATIONS + 3);
		c.window_ms = chance(&w->r, 40) ? 0 :
			      chance(&w->r, 80) ? 20 + below(&w->r, 2000) :
						  (u32)rng_next(&w->r);
		if (chance(&w->r, 20))
			c.flags |= KBLOOM_CREATE_ROTATE_AT_FILL;
	}
	poke_reserved(w, 5, c.reserved);
	if (chance(&w->r, 10))
		chaos_bits(w, &c, sizeof(c));
	chaos_call(w, pick_fd(w, true), cmd, &c, sizeof(c), "'%.32s'", c.name);
}

/* DESTROY, CLEAR, ROTATE (CLEAR on a module without windows). */
static void chaos_name_cmd(struct worker *w, unsigned long cmd)
{
	struct kbloom_name n = {};

	if (cmd == KBLOOM_IOC_ROTATE && !(features & KBLOOM_FEATURE_WINDOW))
		cmd = KBLOOM_IOC_CLEAR;
	any_name(w, n.name);
	poke_reserved(w, 8, n.reserved);
	chaos_call(w, pick_fd(w, true), cmd, &n, sizeof(n), "'%.32s'", n.name);
}

static void chaos_info(struct worker *w, unsigned long cmd)
{
	struct kbloom_info info = {};

	any_name(w, info.name);
	/* The fields after @saturated are in-zero (once reserved). */
	if (chance(&w->r, 8))
		((unsigned char *)&info)[offsetof(struct kbloom_info, saturated) + 8 +
			below(&w->r, sizeof(info) -
				     offsetof(struct kbloom_info, saturated) - 8)] =
			(unsigned char)(1 + below(&w->r, 255));
	if (chance(&w->r, 10))
		chaos_bits(w, &info, sizeof(info));
	chaos_call(w, pick_fd(w, false), cmd, &info, sizeof(info), "'%.32s'",
		   info.name);
}

static void chaos_list(struct worker *w, unsigned long cmd)
{
	struct kbloom_list l = {};

	switch (below(&w->r, 5)) {
	case 0:
		l.names = bad_ptr(&w->r);
		l.count = rnd_count(w);
		break;
	case 1:
		/* Room claimed beyond what is mapped. */
		l.names = (uintptr_t)(w->res.guard - KBLOOM_NAME_MAX);
		l.count = 1 + below(&w->r, 1000);
		break;
	case 2:
		l.names = 0;
		l.count = 0;
		break;
	default:
		l.names = (uintptr_t)w->img.rw;
		l.count = below(&w->r, (u32)(w->img.len / KBLOOM_NAME_MAX));
	}
	poke32(w, 8, &l.reserved);
	chaos_call(w, pick_fd(w, false), cmd, &l, sizeof(l), "count %u",
		   l.count);
}

/* On a handle the name must be all zero: usually it is. */
static void handle_name(struct worker *w, int fd, char *name)
{
	bool ro;

	if (fd_handle(w, fd, &ro) && chance(&w->r, 85))
		memset(name, 0, KBLOOM_NAME_MAX);
}

/*
 * KBLOOM_IOC_OPEN of a shared (or bad) name; the handle replaces the
 * oldest of the thread's. The argument is on the stack, or where the fd
 * cannot be written back (then no fd may be created, which the end of the
 * run checks: a leaked handle would hold a destroyed filter's memory).
 */
static void chaos_open(struct worker *w, unsigned long cmd)
{
	struct kbloom_open op = {};
	u64 arg = (uintptr_t)&op;
	int fd = pick_fd(w, false), slot = below(&w->r, NHANDLES);
	bool ro;

	any_name(w, op.name);
	if (chance(&w->r, 6))
		op.flags = 1U << below(&w->r, 32);
	poke_reserved(w, 6, op.reserved);
	if (chance(&w->r, 8))
		arg = chance(&w->r, 50) ? (uintptr_t)page_ro : bad_ptr(&w->r);
	note(w, "chaos open '%.32s'%s", op.name,
	     arg != (uintptr_t)&op ? " (arg unwritable)" : "");
	if (call(w, fd, cmd, arg))
		return;
	if (arg != (uintptr_t)&op) {
		violation(w, &sh->other, "OPEN succeeded with an unwritable argument");
		return;
	}
	close_fd(&w->hfd[slot]);
	w->hfd[slot] = op.fd;
	fd_handle(w, fd, &ro);
	w->hfd_ro[slot] = ro;
}

static void chaos_key(struct worker *w, unsigned long cmd)
{
	struct kbloom_key k = {};
	u32 lens[1];
	u64 bytes;
	int fd;

	any_name(w, k.name);
	k.len = chance(&w->r, 80) ? 1 + below(&w->r, 64) :
		chance(&w->r, 50) ? 0 : KBLOOM_KEY_MAX + below(&w->r, 3);
	if (k.len && k.len <= KBLOOM_KEY_MAX && chance(&w->r, 85)) {
		/* Random bytes ending at the guard, or running into it. */
		lay_keys(w, NULL, 1, lens, &bytes);
		if (chance(&w->r, 70))
			k.key = (uintptr_t)(w->keys.guard - k.len);
		else
			k.key = (uintptr_t)(w->keys.guard - below(&w->r, k.len));
	} else {
		k.key = bad_ptr(&w->r);
	}
	poke_reserved(w, 8, k.reserved);
	poke32(w, 5, &k.result);
	fd = pick_fd(w, cmd != KBLOOM_IOC_QUERY);
	handle_name(w, fd, k.name);
	chaos_call(w, fd, cmd, &k, sizeof(k), "'%.32s' len %u", k.name, k.len);
}

static void chaos_batch(struct worker *w, unsigned long cmd)
{
	struct kbloom_batch b = {};
	u32 n = chance(&w->r, 80) ? 1 + below(&w->r, 2100) : rnd_count(w);
	u32 real = n < 2100 ? n : 2100;
	u32 *lens = (u32 *)w->lens_buf;
	u64 bytes;
	char *keys = lay_keys(w, NULL, real ? real : 1, lens, &bytes);
	int fd;

	any_name(w, b.name);
	b.count = n;
	b.keys = (uintptr_t)keys;
	b.lens = (uintptr_t)lens;
	b.keys_bytes = bytes;
	switch (below(&w->r, 10)) {
	case 0:
		b.keys = bad_ptr(&w->r);
		break;
	case 1:
		b.lens = bad_ptr(&w->r);
		break;
	case 2:
		/* lengths run into the guard page */
		b.lens = (uintptr_t)(w->keys.guard - 4 * below(&w->r, real + 1));
		break;
	case 3:
		b.keys_bytes = chance(&w->r, 50) ? rng_next(&w->r) :
			       bytes - below(&w->r, (u32)bytes + 1);
		break;
	case 4:
		lens[below(&w->r, real ? real : 1)] =
			chance(&w->r, 50) ? 0 : (u32)rng_next(&w->r);
		break;
	default:
		break;
	}
	switch (below(&w->r, 8)) {
	case 0:
		b.results = (uintptr_t)page_none;
		break;
	case 1:
		b.results = (uintptr_t)page_ro;
		break;
	case 2:
		b.results = bad_ptr(&w->r);
		break;
	case 3:
		b.results = 0;
		break;
	case 4:
		b.results = (uintptr_t)(chaos + below(&w->r, CHAOS_PAGES * PAGE));
		break;
	default:
		b.results = (uintptr_t)(w->res.guard - 8 * below(&w->r, 300));
	}
	poke32(w, 6, &b.reserved0);
	poke_reserved(w, 6, b.reserved);
	poke32(w, 5, &b.done);
	fd = pick_fd(w, cmd != KBLOOM_IOC_QUERY_BATCH);
	handle_name(w, fd, b.name);
	chaos_call(w, fd, cmd, &b, sizeof(b), "'%.32s' count %u", b.name, n);
}

/* MERGE, COMPARE */
static void chaos_merge(struct worker *w, unsigned long cmd)
{
	struct kbloom_merge m = {};

	any_name(w, m.dst);
	if (chance(&w->r, 20))
		memcpy(m.src, m.dst, KBLOOM_NAME_MAX);
	else
		any_name(w, m.src);
	poke32(w, 6, &m.reserved0);
	poke_reserved(w, 6, m.reserved);
	poke32(w, 6, &m.mismatch);
	chaos_call(w, pick_fd(w, true), cmd, &m, sizeof(m), "'%.32s' '%.32s'",
		   m.dst, m.src);
}

/* EXPORT a shared filter; for IMPORT, maybe damage the image, import it. */
static void chaos_image(struct worker *w, unsigned long cmd)
{
	struct kbloom_image im = {};
	int err;

	any_name(w, im.name);
	switch (below(&w->r, 6)) {
	case 0:
		im.payload = bad_ptr(&w->r);
		im.payload_len = chance(&w->r, 50) ? rng_next(&w->r) :
						     w->img.len;
		break;
	case 1:
		/* Claims more room than is mapped. */
		im.payload = (uintptr_t)(w->img.guard - below(&w->r, 4096));
		im.payload_len = w->img.len;
		break;
	case 2:
		im.payload = 0;
		im.payload_len = 0;
		break;
	default:
		im.payload = (uintptr_t)w->img.rw;
		im.payload_len = w->img.len;
	}
	poke32(w, 6, &im.import_flags);
	poke32(w, 6, &im.age_ms);
	err = chaos_call(w, pick_fd(w, false), KBLOOM_IOC_EXPORT, &im,
			 sizeof(im), "'%.32s'", im.name);
	if (cmd == KBLOOM_IOC_EXPORT)
		return;
	if (err) {
		/* Invent a header. */
		im.bits = rnd_bits(w);
		im.hashes = below(&w->r, KBLOOM_MAX_HASHES + 2);
		im.flags = chance(&w->r, 80) ? 0 : (u32)rng_next(&w->r);
		im.hash_scheme = below(&w->r, 4);
		im.seed[0] = (u32)rng_next(&w->r);
		im.payload_len = chance(&w->r, 50) ?
				 ((im.bits + 63) / 64) * 8 : rng_next(&w->r);
		im.payload = (uintptr_t)w->img.rw;
		if (im.payload_len <= w->img.len)
			memset(w->img.rw, 0, im.payload_len);
	}
	if (chance(&w->r, 30))
		chaos_bits(w, &im, sizeof(im));
	if (chance(&w->r, 30) && im.payload_len && im.payload_len <= w->img.len)
		w->img.rw[below(&w->r, (u32)im.payload_len)] ^= 0x80;
	any_name(w, im.name);
	im.import_flags = chance(&w->r, 50) ? KBLOOM_IMPORT_REPLACE :
			  chance(&w->r, 90) ? 0 : (u32)rng_next(&w->r);
	chaos_call(w, pick_fd(w, true), cmd, &im, sizeof(im),
		   "'%.32s' bits %llu", im.name, (ull)im.bits);
}

/*
 * COLLECT a shared filter's changed blocks into a buffer that may end at a
 * guard page or not exist, maybe damage them, APPLY them somewhere: what
 * APPLY takes is only ever ORed in, so no key of an owned filter is lost.
 */
static void chaos_blocks(struct worker *w, unsigned long cmd)
{
	struct kbloom_block *bl = (struct kbloom_block *)w->img.rw;
	u32 room = (u32)(w->img.len / sizeof(*bl));
	struct kbloom_blocks b = {};
	int err;

	any_name(w, b.name);
	b.count = chance(&w->r, 10) ? (u32)rng_next(&w->r) :
		  1 + below(&w->r, room < KBLOOM_BLOCKS_MAX ? room :
						KBLOOM_BLOCKS_MAX);
	b.blocks = (uintptr_t)bl;
	if (chance(&w->r, 10))
		b.blocks = bad_ptr(&w->r);
	else if (chance(&w->r, 10))
		/* Room for fewer blocks than claimed: the guard follows. */
		b.blocks = (uintptr_t)(w->img.guard - sizeof(*bl) *
				       (1 + below(&w->r, 4)));
	if (chance(&w->r, 10))
		b.flags = chance(&w->r, 50) ? KBLOOM_COLLECT_ALL :
					      (u32)rng_next(&w->r);
	if (chance(&w->r, 10))
		b.cursor = below(&w->r, 4096);
	if (chance(&w->r, 6))
		chaos_bits(w, &b, sizeof(b));
	err = chaos_call(w, pick_fd(w, true), KBLOOM_IOC_COLLECT, &b, sizeof(b),
			 "'%.32s' %u", b.name, b.count);
	if (err || !b.done || b.blocks != (uintptr_t)bl)
		return;
	if (chance(&w->r, 30))
		chaos_bits(w, bl, b.done * sizeof(*bl));
	if (chance(&w->r, 10))
		b.fingerprint = rng_next(&w->r);
	b.count = b.done;
	b.done = 0;
	b.cursor = 0;
	b.age_ms = 0;
	b.flags = 0;
	b.max_set = chance(&w->r, 20) ? rng_next(&w->r) % (BIG_BITS + 1) : 0;
	any_name(w, b.name);
	chaos_call(w, pick_fd(w, true), KBLOOM_IOC_APPLY, &b, sizeof(b),
		   "'%.32s' %u", b.name, b.count);
}

/* Unknown commands, and known numbers with the wrong size or direction. */
static void chaos_unknown(struct worker *w, unsigned long cmd)
{
	char buf[256] = {};

	switch (below(&w->r, 3)) {
	case 0:
		cmd = _IOC(below(&w->r, 4), KBLOOM_IOC_MAGIC,
			   below(&w->r, 0x50), below(&w->r, 256));
		break;
	case 1:
		cmd = _IOC(_IOC_READ | _IOC_WRITE, KBLOOM_IOC_MAGIC,
			   0x20 + below(&w->r, 4), 8 * below(&w->r, 20));
		break;
	default:
		/* (Only kbloom's magic: the VFS answers some others itself.) */
		cmd = _IOC(_IOC_READ | _IOC_WRITE, KBLOOM_IOC_MAGIC,
			   0x50 + below(&w->r, 0xb0), below(&w->r, 200));
	}
	if (cmd_lookup(cmd))
		return;
	note(w, "chaos cmd %#lx", cmd);
	call(w, pick_fd(w, false), cmd, place_arg(w, buf, sizeof(buf)));
}

static void chaos_version(struct worker *w, unsigned long cmd)
{
	struct kbloom_version v;

	chaos_call(w, pick_fd(w, false), cmd, &v, sizeof(v), "");
}

/* Each chaos step with its command, drawn @weight times in CHAOS_DRAWS. */
static const struct {
	void (*step)(struct worker *w, unsigned long cmd);
	unsigned long cmd;
	u32 weight;
} chaos_steps[] = {
	{ chaos_create, KBLOOM_IOC_CREATE, 8 },
	{ chaos_name_cmd, KBLOOM_IOC_DESTROY, 8 },
	{ chaos_name_cmd, KBLOOM_IOC_CLEAR, 2 },
	{ chaos_name_cmd, KBLOOM_IOC_ROTATE, 2 },
	{ chaos_info, KBLOOM_IOC_INFO, 4 },
	{ chaos_list, KBLOOM_IOC_LIST, 4 },
	{ chaos_key, KBLOOM_IOC_ADD, 3 },
	{ chaos_key, KBLOOM_IOC_QUERY, 3 },
	{ chaos_key, KBLOOM_IOC_TEST_AND_ADD, 3 },
	{ chaos_key, KBLOOM_IOC_REMOVE, 3 },
	{ chaos_batch, KBLOOM_IOC_ADD_BATCH, 3 },
	{ chaos_batch, KBLOOM_IOC_QUERY_BATCH, 3 },
	{ chaos_batch, KBLOOM_IOC_TEST_AND_ADD_BATCH, 3 },
	{ chaos_batch, KBLOOM_IOC_REMOVE_BATCH, 3 },
	{ chaos_merge, KBLOOM_IOC_MERGE, 4 },
	{ chaos_merge, KBLOOM_IOC_COMPARE, 4 },
	{ chaos_image, KBLOOM_IOC_EXPORT, 3 },	/* and no IMPORT */
	{ chaos_image, KBLOOM_IOC_IMPORT, 5 },
	{ chaos_unknown, 0, 4 },
	{ chaos_open, KBLOOM_IOC_OPEN, 4 },
	{ chaos_blocks, KBLOOM_IOC_COLLECT, 4 },
	{ chaos_version, KBLOOM_IOC_VERSION, 8 },
};

#define CHAOS_DRAWS	88	/* the weights' sum */

static void chaos_step(struct worker *w)
{
	u32 i = 0, draw = below(&w->r, CHAOS_DRAWS);

	while (draw >= chaos_steps[i].weight)
		draw -= chaos_steps[i++].weight;
	chaos_steps[i].step(w, chaos_steps[i].cmd);
}

/* --- Threads and processes ---------------------------------------------- */

static pthread_barrier_t start_barrier;

static void *chaos_mapper(void *arg)
{
	u64 r = *(u64 *)arg;

	while (!expired()) {
		char *p = chaos + below(&r, CHAOS_PAGES) * PAGE;

		switch (below(&r, 4)) {
		case 0:
			munmap(p, PAGE);
			break;
		case 1:
			mmap(p, PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			break;
		case 2:
			mprotect(p, PAGE, PROT_NONE);
			break;
		default:
			mprotect(p, PAGE, PROT_READ | PROT_WRITE);
		}
		/* Not too often: every change of the map stalls the
		 * process's page faults and shoots down its TLBs. */
		usleep(5000 + below(&r, 45000));
	}
	return NULL;
}

static void worker_init(struct worker *w, int proc, int thread, bool admin)
{
	int i;

	memset(w, 0, sizeof(*w));
	w->proc = proc;
	w->thread = thread;
	w->id = proc * MAXTHREADS + thread;
	w->r = opt_seed ^ ((u64)proc << 40) ^ ((u64)thread << 20) ^ 0x5eed;
	w->admin = admin;
	w->rw = w->ro = -1;
	region_init(&w->keys, 160 * 1024);
	region_init(&w->res, 64 * 1024);
	/* Room for fzbig's 4 MiB payload: long copies to be killed in. */
	region_init(&w->img, BIG_BITS / 8 + 64 * 1024);
	w->lens_buf = map_guarded(4 * PAGE, PROT_READ | PROT_WRITE);
	w->scratch_ro = map_guarded(PAGE, PROT_READ | PROT_WRITE);
	for (i = 0; i < NOWN; i++) {
		snprintf(w->own[i].name, KBLOOM_NAME_MAX, "fzo%d_%d", w->id,
			 i);
		w->own[i].handle = -1;
	}
	for (i = 0; i < NHANDLES; i++)
		w->hfd[i] = -1;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int i;

	if (w->rw < 0)
		w->rw = open(dev, O_RDWR);
	if (w->ro < 0)
		w->ro = open(dev, O_RDONLY);
	pthread_barrier_wait(&start_barrier);
	if (w->rw < 0 || w->ro < 0) {
		add(&sh->other, 1);
		diag("[p%d t%d] open %s: %s", w->proc, w->thread, dev,
		     strerror(errno));
		return NULL;
	}
	/* Leftovers of an earlier run of this process slot. */
	for (i = 0; i < NOWN && w->admin; i++)
		destroy_quiet(w->rw, w->own[i].name);
	while (!expired()) {
		if (w->admin && chance(&w->r, 45))
			own_step(w);
		else
			chaos_step(w);
	}
	/* Last word: every shadow key is still there. */
	for (i = 0; i < NOWN && w->admin; i++)
		own_verify(w, &w->own[i]);
	for (i = 0; i < NOWN; i++)
		close_fd(&w->own[i].handle);
	for (i = 0; i < NHANDLES; i++)
		close_fd(&w->hfd[i]);
	close(w->rw);
	close(w->ro);
	return NULL;
}

/*
 * One process: @threads workers and a mapper. Unprivileged processes give
 * up root after opening the device (the fds stay usable; CAP_SYS_ADMIN is
 * gone) and own no filters.
 */
static int process_main(int proc, unsigned int threads, bool unprivileged)
{
	static struct worker ws[MAXTHREADS];
	pthread_t tid[MAXTHREADS], mapper;
	u64 mapseed = opt_seed ^ (u64)proc << 50 ^ 0xc4a05;
	unsigned int t;
	int pre_rw = -1, pre_ro = -1;

	if (unprivileged) {
		/* The node is 0600: open it now, then drop root. */
		pre_rw = open(dev, O_RDWR);
		pre_ro = open(dev, O_RDONLY);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534)) {
			diag("[p%d] cannot drop privileges: %s", proc,
			     strerror(errno));
			return 3;
		}
	}
	pthread_barrier_init(&start_barrier, NULL, threads);
	for (t = 0; t < threads; t++) {
		worker_init(&ws[t], proc, t, !unprivileged);
		if (unprivileged) {
			ws[t].rw = dup(pre_rw);
			ws[t].ro = dup(pre_ro);
		}
	}
	process_memory();
	pthread_create(&mapper, NULL, chaos_mapper, &mapseed);
	for (t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, worker_main, &ws[t]);
	for (t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	pthread_join(mapper, NULL);
	return 0;
}

/* --- The parent: setup, the kill loop, the final checks ----------------- */

static int main_fd = -1;

/*
 * Quiescent (the fuzzing processes are gone): LIST, sysfs and filter_count
 * agree, and each filter's bits_set matches its exported contents. But a
 * windowed filter's timer may still rotate it between EXPORT and INFO, and
 * no sequence a caller can see brackets a rotation: such a filter is not
 * compared.
 */
static bool final_consistency(char *why, size_t wlen)
{
	char (*names)[KBLOOM_NAME_MAX];
	struct kbloom_image im;
	struct kbloom_info info;
	unsigned char *p;
	u32 n, i;
	int err = registry_names(main_fd, &names, &n, why, wlen);

	for (i = 0; !err && i < n; i++) {
		err = kb_export_all(main_fd, names[i], &im, &p);
		if (!err)
			err = kb_info(main_fd, names[i], &info);
		if (err) {
			snprintf(why, wlen, "EXPORT/INFO %s: %s", names[i],
				 strerror(err));
		} else if (info.generations && info.window_ms) {
			printf("# %s: windowed, its timer rotates it: bits_set not compared with its contents\n",
			       names[i]);
		} else if (image_weight(&im, p) != info.bits_set) {
			snprintf(why, wlen, "%s: bits_set %llu, its contents have %llu",
				 names[i], info.bits_set, image_weight(&im, p));
			err = EPROTO;
		}
		free(p);
	}
	free(names);
	return !err;
}

static void destroy_ours(void)
{
	char (*names)[KBLOOM_NAME_MAX];
	u32 n = 0, i;

	kb_list(main_fd, &names, &n);
	for (i = 0; i < n; i++)
		if (!strncmp(names[i], "fz", 2))
			kb_destroy(main_fd, names[i]);
	free(names);
}

static pid_t spawn(int proc, unsigned int threads, bool unprivileged)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(process_main(proc, threads, unprivileged));
	return pid;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--seed N] [--time SECONDS] [--procs P] [--threads T] [-d DEV] [-v]\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "time", required_argument, NULL, 't' },
		{ "procs", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 'T' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	pid_t pids[MAXPROCS + 2];
	bool seeded = false, children_ok = true, consistent;
	char why[512] = "";
	unsigned int i, nproc;
	u64 budget = 0, base_mem = 0, mem = 0, t_start, t_end;
	u64 kr;
	int opt, status, tapno = 0, nfail = 0, no_budget, unsettled;
	pid_t victim;

	while ((opt = getopt_long(argc, argv, "d:s:t:p:T:v", lopts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 's': opt_seed = strtoull(optarg, NULL, 0); seeded = true;
			  break;
		case 't': opt_time = strtoul(optarg, NULL, 0); break;
		case 'p': opt_procs = strtoul(optarg, NULL, 0); break;
		case 'T': opt_threads = strtoul(optarg, NULL, 0); break;
		case 'v': opt_verbose = true; break;
		default: usage(argv[0]);
		}
	}
	if (!opt_procs || opt_procs > MAXPROCS || !opt_threads ||
	    opt_threads > MAXTHREADS)
		usage(argv[0]);
	if (!seeded) {
		opt_seed = now_ns() ^ (u64)getpid() << 32;
		/* short enough to type */
		opt_seed = rng_next(&opt_seed) & 0xffffffffffffULL;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# seed %llu\n", opt_seed);
	printf("# replay: %s --seed %llu --time %u --procs %u --threads %u\n",
	       argv[0], opt_seed, opt_time, opt_procs, opt_threads);
	printf("1..5\n");
	fflush(stdout);

	/* Shared counters, between PROT_NONE pages (map_guarded()). */
	sh = mmap(map_guarded(2 * PAGE, PROT_NONE), 2 * PAGE,
		  PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	main_fd = open(dev, O_RDWR);
	if (sh == MAP_FAILED || main_fd < 0) {
		printf("# open %s: %s\n", dev, strerror(errno));
		for (i = 1; i <= 5; i++)
			printf("not ok %u - ioctl fuzz: not run\n", i);
		return 1;
	}
	{
		struct kbloom_version v = {};

		if (ioctl(main_fd, KBLOOM_IOC_VERSION, &v) == 0)
			features = v.features;
		printf("# module API %u, features %#llx\n", v.api_version,
		       (ull)v.features);
	}
	/* Keep huge random creations from eating the VM: a small budget. */
	no_budget = sysfs_read_u64(MAX_MEMORY, &budget);
	if (!no_budget)
		sysfs_write_u64(MAX_MEMORY, FUZZ_BUDGET);
	destroy_ours();
	/* The big filter the killed process works on. */
	kb_create(main_fd, BIG_NAME, BIG_BITS, 3, 0, 0, NULL);

	t_start = now_ms();
	deadline_ms = t_start + (ull)opt_time * 1000;
	kr = opt_seed ^ 0x4b111;
	/* Process 0..P-1: root; P: unprivileged; P+1: killed and reborn. */
	nproc = opt_procs + 2;
	for (i = 0; i < opt_procs; i++)
		pids[i] = spawn(i, opt_threads, false);
	pids[opt_procs] = spawn(opt_procs, 2, true);
	for (;;) {
		victim = pids[opt_procs + 1] = spawn(opt_procs + 1, 2, false);
		usleep(200000 + below(&kr, 1300000));
		if (expired())
			break;
		kill(victim, SIGKILL);
		waitpid(victim, &status, 0);
		add(&sh->kills, 1);
	}
	for (i = 0; i < nproc; i++) {
		if (waitpid(pids[i], &status, 0) < 0 ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			children_ok = false;
			printf("# process %u (pid %d) %s %d\n", i, pids[i],
			       WIFSIGNALED(status) ? "killed by signal" :
						     "exited",
			       WIFSIGNALED(status) ? WTERMSIG(status) :
						     WEXITSTATUS(status));
		}
	}
	t_end = now_ms();

	/* Quiescent now. */
	consistent = final_consistency(why, sizeof(why));
	destroy_ours();
	/*
	 * Once the deferred frees are done, memory_used is exactly what the
	 * remaining filters are charged (not necessarily what it was before
	 * the run: frees of earlier tests may have been pending then).
	 */
	unsettled = settle_within(main_fd, 0, 15000, &mem, &base_mem);
	if (!no_budget)
		sysfs_write_u64(MAX_MEMORY, budget);

	printf("# %llu ioctls (%llu succeeded) in %.1f s by %u processes, %llu restarts of the killed one\n",
	       sh->ops, sh->ok_calls, (t_end - t_start) / 1000.0,
	       nproc, sh->kills);
	printf("# slowest call: %llu ms (%s)\n", sh->slowest_ms, sh->slowest);
	/* Coverage: succeeded/failed calls per command. */
	printf("# calls (ok/failed):");
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		printf(" %s %llu/%llu", cmds[i].name, sh->per_cmd_ok[i],
		       sh->per_cmd_err[i]);
	printf("\n");
#define RESULT(cond, fmt, ...) do {					\
		bool _ok = (cond);					\
		nfail += !_ok;						\
		printf("%sok %d - ioctl fuzz (seed %llu): " fmt "\n",	\
		       _ok ? "" : "not ", ++tapno, opt_seed, ##__VA_ARGS__); \
	} while (0)
	RESULT(!sh->bad_errno && !sh->forbidden,
	       "every errno documented, nothing succeeded without the rights it needs (%llu undocumented, %llu forbidden)",
	       sh->bad_errno, sh->forbidden);
	RESULT(!sh->lost && !sh->other,
	       "no key added to an owned filter was lost (%llu lost, %llu other inconsistencies)",
	       sh->lost, sh->other);
	RESULT(!sh->vanished,
	       "owned filters never vanished or appeared (%llu)", sh->vanished);
	RESULT(children_ok && sh->ops > 0,
	       "every process exited cleanly (but the one killed %llu times)",
	       sh->kills);
	if (!consistent)
		printf("# %s\n", why);
	if (consistent && unsettled)
		printf("# memory_used %llu, but the remaining filters are charged %llu (%s)\n",
		       mem, base_mem, strerror(unsettled));
	RESULT(consistent && !unsettled,
	       "afterwards LIST, sysfs, filter_count and bits_set agree, and memory_used comes back to what the filters are charged");
	return nfail ? 1 : 0;
}
