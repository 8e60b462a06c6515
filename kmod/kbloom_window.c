// SPDX-License-Identifier: GPL-2.0
/*
 * Time-windowed filters.
 *
 * A windowed filter's generation (struct kbloom_gen, what an image load
 * swaps) holds G generations of storage ("slices" here, to keep the two
 * words apart) and a view: the slices in use, newest first, behind an RCU
 * pointer. Every operation reads the view once, under rcu_read_lock(),
 * hashes its key once and probes the slices at the same positions (they
 * share m, k and the seed), so it runs wholly on one view.
 *
 * A rotation (from a delayed work: never on the hot path) publishes a view
 * without the oldest slice, waits for a grace period so that no reader can
 * still see that slice, clears it (no reader stalls, none sees a half
 * cleared slice), and publishes it again as the newest. Between the two
 * views readers see G - 1 slices: the one missing held only keys already
 * older than W (G - 1) / G, which the guarantee lets go.
 *
 * Keys keep landing in the outgoing newest slice until the new one is
 * published, at the end of a rotation. So the clock of a slice's keys
 * starts then, not at the rotation's deadline: a timed rotation never
 * drops a slice before W (G - 1) / G has passed since it stopped being
 * the newest (@keep_until, in CLOCK_MONOTONIC time, which is what callers
 * measure with), and waits for it if it has not, whatever the size of
 * the slices and the load, which only make rotations slower.
 */

#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "kbloom_storage.h"
#include "kbloom_window.h"

/*
 * The period, W / G rounded up to whole jiffies: never shorter, so a key
 * always stays at least W (G - 1) / G; a key may then stay up to G jiffies
 * past W, plus the time rotations take.
 */
static unsigned long kbloom_window_period(const struct kbloom_window *win)
{
	return max(msecs_to_jiffies(DIV_ROUND_UP(win->window_ms,
						 win->generations)), 1UL);
}

/*
 * Jiffies until the oldest generation may go by the clock, 0 if it may
 * go now. Under @win->lock.
 */
static unsigned long kbloom_window_hold(struct kbloom_window *win)
{
	struct kbloom_view *view;
	s64 left;

	view = rcu_dereference_protected(win->view,
					 lockdep_is_held(&win->lock));
	left = ktime_to_ns(ktime_sub(view->s[view->n - 1]->keep_until,
				     ktime_get()));
	return left > 0 ? nsecs_to_jiffies(left) + 1 : 0;
}

/* Is the newest generation at its design fill? Under @win->lock. */
static bool kbloom_window_full(struct kbloom_window *win)
{
	u64 occupied, stuck;

	if (!win->fill_limit)
		return false;
	kbloom_occ_read(kbloom_window_slice(win, 0)->occ, &occupied, &stuck);
	return occupied >= win->fill_limit;
}

/*
 * Rotations run on a system workqueue: they sleep (grace periods). The
 * work runs for three reasons and rotates only if one still holds when it
 * gets the lock: the period is due (deadlines are absolute, so periods
 * do not drift, unless the oldest generation must be held longer:
 * kbloom_window_hold()), KBLOOM_IOC_ROTATE asked, or the newest
 * generation is full. A kick that arrives while a rotation runs (adds
 * still landing in the generation that was full) thus finds a fresh
 * newest generation and does nothing.
 */
static void kbloom_window_work(struct work_struct *work)
{
	struct kbloom_window *win = container_of(to_delayed_work(work),
						 struct kbloom_window, work);
	bool due, asked, full, rotated;
	unsigned long hold;

	mutex_lock(&win->lock);
	due = win->started && win->window_ms &&
	      time_after_eq(jiffies, win->deadline);
	if (due) {
		hold = kbloom_window_hold(win);
		if (hold) {
			win->deadline = jiffies + hold;
			due = false;
		}
	}
	asked = test_and_clear_bit(KBLOOM_WIN_ROTATE, &win->requests);
	full = test_and_clear_bit(KBLOOM_WIN_FULL, &win->requests) &&
	       kbloom_window_full(win);
	mutex_unlock(&win->lock);

	rotated = due || asked || full;
	if (rotated)
		kbloom_window_rotate(win);

	mutex_lock(&win->lock);
	if (full && win->started && win->on_full)
		win->on_full(win->on_full_ctx);
	if (win->started && win->window_ms) {
		if (due)
			win->deadline += kbloom_window_period(win);
		else if (rotated)	/* an early rotation starts a period */
			win->deadline = jiffies + kbloom_window_period(win);
		if (time_after_eq(jiffies, win->deadline))	/* far behind */
			win->deadline = jiffies + kbloom_window_period(win);
		queue_delayed_work(system_unbound_wq, &win->work,
				   win->deadline - jiffies);
	}
	mutex_unlock(&win->lock);
}

/**
 * kbloom_window_new() - allocate G zeroed generations
 * @generations: G, 2 to KBLOOM_MAX_GENERATIONS.
 * @window_ms: W.
 * @fill_limit: rotate when the newest holds this many positions; 0: never.
 * @nbits: m of each generation.
 * @nhashes: k.
 * @flags: KBLOOM_CORE_* flags.
 * @seed: the seed, shared by every generation.
 * @storage: the bytes of each generation's storage (kbloom_storage_bytes()).
 *
 * Process context. The caller has charged the memory.
 *
 * Return: the window, not yet rotating (kbloom_window_start()), or NULL.
 */
struct kbloom_window *kbloom_window_new(u32 generations, u32 window_ms,
					u64 fill_limit, u64 nbits,
					u32 nhashes, u32 flags,
					const u32 *seed, size_t storage)
{
	struct kbloom_window *win;
	unsigned long *bitmap;
	u32 i;

	win = kzalloc(struct_size(win, slices, generations),
		      GFP_KERNEL_ACCOUNT);
	if (!win)
		return NULL;
	win->generations = generations;
	win->window_ms = window_ms;
	win->fill_limit = fill_limit;
	/*
	 * Look at the fill often enough that all CPUs together overshoot it
	 * by at most a quarter: a CPU looks every fill_every positions.
	 */
	win->fill_every = div64_u64(fill_limit, 4 * num_possible_cpus());
	win->fill_every = clamp_t(u64, win->fill_every, 1, 256);
	atomic64_set(&win->rotations, 0);
	mutex_init(&win->lock);
	init_rwsem(&win->copying);
	INIT_DELAYED_WORK(&win->work, kbloom_window_work);
	for (i = 0; i < generations; i++) {
		struct kbloom_slice *s = &win->slices[i];

		s->occ = alloc_percpu_gfp(struct kbloom_occupancy,
					  GFP_KERNEL_ACCOUNT);
		bitmap = kbloom_storage_alloc(storage);
		kbloom_core_init(&s->core, bitmap, nbits, nhashes, flags, seed);
		if (!s->occ || !bitmap) {
			kbloom_window_free(win);
			return NULL;
		}
		win->views[0].s[i] = s;
	}
	win->views[0].n = generations;
	RCU_INIT_POINTER(win->view, &win->views[0]);
	win->newest_since = jiffies;
	return win;
}

/* Process context; the window is stopped and no reader can reach it. */
void kbloom_window_free(struct kbloom_window *win)
{
	u32 i;

	kbloom_window_stop(win);
	for (i = 0; i < win->generations; i++) {
		vfree(win->slices[i].core.bitmap);
		free_percpu(win->slices[i].occ);
	}
	mutex_destroy(&win->lock);
	/* The slices' cores hold the seed. */
	kfree_sensitive(win);
}

/*
 * An imported window's newest generation is @age_ms old already: its
 * first period is that much shorter, so that a filter saved and restored
 * rotates when it would have, had it never left. Before
 * kbloom_window_start(), on a window nobody else sees.
 */
void kbloom_window_set_age(struct kbloom_window *win, u32 age_ms)
{
	win->age = msecs_to_jiffies(age_ms);
	/* INFO and EXPORT may read it as soon as the filter is published. */
	WRITE_ONCE(win->newest_since, jiffies - win->age);
}

/*
 * Start the timer: the window's filter is published. Process context. A
 * rotation may already have run (ROTATE, rotate-at-fill): then the newest
 * generation is new, and the period starts now.
 */
void kbloom_window_start(struct kbloom_window *win)
{
	unsigned long period = kbloom_window_period(win), age, first;

	mutex_lock(&win->lock);
	age = atomic64_read(&win->rotations) ? 0 : win->age;
	first = period - min(age, period);
	win->started = true;
	WRITE_ONCE(win->newest_since, jiffies - age);
	win->deadline = jiffies + first;
	if (win->window_ms)
		queue_delayed_work(system_unbound_wq, &win->work, first);
	mutex_unlock(&win->lock);
}

/* Stop the timer for good, waiting for a rotation in progress. */
void kbloom_window_stop(struct kbloom_window *win)
{
	mutex_lock(&win->lock);
	win->started = false;
	mutex_unlock(&win->lock);
	cancel_delayed_work_sync(&win->work);
}

/**
 * kbloom_window_rotate() - clear the oldest generation, make it the newest
 * @win: the window.
 *
 * Process context; sleeps for two grace periods, and for an export's copy
 * under way. Never interrupted: a half-cleared generation must never
 * become the newest.
 */
void kbloom_window_rotate(struct kbloom_window *win)
{
	struct kbloom_view *cur, *nxt;
	struct kbloom_slice *oldest;
	struct kbloom_delta d = {};
	u32 g = win->generations;

	/*
	 * Before the lock: waiting for an export here must not hold up
	 * clear, import and ROTATE, which take only the lock.
	 */
	down_write(&win->copying);
	mutex_lock(&win->lock);
	cur = rcu_dereference_protected(win->view,
					lockdep_is_held(&win->lock));
	nxt = cur == &win->views[0] ? &win->views[1] : &win->views[0];
	oldest = cur->s[cur->n - 1];

	/* Readers lose sight of the oldest generation... */
	nxt->n = cur->n - 1;
	memcpy(nxt->s, cur->s, nxt->n * sizeof(nxt->s[0]));
	rcu_assign_pointer(win->view, nxt);
	synchronize_rcu();

	/* ...which no operation can touch now: clear it whole. */
	kbloom_core_wipe(&oldest->core, &d);
	kbloom_occ_account(oldest->occ, &d);

	/* It comes back as the newest, in the view nobody reads any more. */
	cur->n = nxt->n + 1;
	cur->s[0] = oldest;
	memcpy(&cur->s[1], nxt->s, nxt->n * sizeof(cur->s[0]));
	rcu_assign_pointer(win->view, cur);
	/*
	 * From now on no add lands in the newest of before: its keys are
	 * owed W (G - 1) / G from here (an add that started before the store
	 * started before this clock reading).
	 */
	cur->s[1]->keep_until = ktime_add_ms(ktime_get(),
					     DIV_ROUND_UP_ULL((u64)win->window_ms *
							  (g - 1), g));
	/* Before the next rotation rewrites nxt, its readers must be gone. */
	synchronize_rcu();

	atomic64_inc(&win->rotations);
	WRITE_ONCE(win->newest_since, jiffies);
	mutex_unlock(&win->lock);
	up_write(&win->copying);
}

/*
 * Rotate now, on the timer's work so that the clear runs where no signal
 * can cut it short, and restart the period; waits for it. Process context.
 */
void kbloom_window_rotate_now(struct kbloom_window *win)
{
	u64 before = atomic64_read(&win->rotations);

	/*
	 * A rotation already running may have started before this call:
	 * kick and wait until one has started and finished since.
	 */
	do {
		set_bit(KBLOOM_WIN_ROTATE, &win->requests);
		mod_delayed_work(system_unbound_wq, &win->work, 0);
		flush_delayed_work(&win->work);
	} while (atomic64_read(&win->rotations) - before < 1);
}

/*
 * Rotate-at-fill: after a key set positions in the newest generation,
 * look at its fill every @fill_every positions this CPU set (summing the
 * per-CPU counters is not for every key) and, past the limit, kick the
 * rotation work at once, only once until it has run.
 */
static void kbloom_window_check_fill(struct kbloom_window *win,
				     struct kbloom_slice *newest,
				     const struct kbloom_delta *d)
{
	u64 occupied, stuck;

	if (!win->fill_limit || !d->set ||
	    !kbloom_occ_crossed(newest->occ, d->set, win->fill_every))
		return;
	kbloom_occ_read(newest->occ, &occupied, &stuck);
	if (occupied >= win->fill_limit &&
	    !test_and_set_bit(KBLOOM_WIN_FULL, &win->requests))
		mod_delayed_work(system_unbound_wq, &win->work, 0);
}

/**
 * kbloom_window_do() - run one operation on a windowed filter
 * @win: the window.
 * @op: the operation.
 * @key: the key bytes.
 * @len: its length, at least 1.
 *
 * Under rcu_read_lock() or another RCU reader (bh or preemption off); any
 * context, lock-free, never sleeps. Add goes to the newest generation;
 * query asks all; test-and-add adds to the newest and answers "seen" if
 * any generation had the key; remove takes the key from every generation
 * in which it tests present.
 *
 * Return: the result bit, as kbloom_do().
 */
bool kbloom_window_do(struct kbloom_window *win, enum kbloom_op op,
		      const void *key, u32 len)
{
	struct kbloom_view *view = rcu_dereference_check(win->view,
							 rcu_read_lock_any_held());
	struct kbloom_slice *newest = view->s[0];
	u64 pos[KBLOOM_CORE_MAX_HASHES];
	struct kbloom_delta d = {};
	bool ret = false;
	u32 i;

	kbloom_core_positions(&newest->core, key, len, pos);
	switch (op) {
	case KBLOOM_OP_ADD:
		kbloom_core_add_at(&newest->core, pos, &d);
		break;
	case KBLOOM_OP_QUERY:
		for (i = 0; i < view->n && !ret; i++)
			ret = kbloom_core_query_at(&view->s[i]->core, pos);
		return ret;
	case KBLOOM_OP_TEST_AND_ADD:
		ret = kbloom_core_test_and_add_at(&newest->core, pos, &d);
		for (i = 1; i < view->n && !ret; i++)
			ret = kbloom_core_query_at(&view->s[i]->core, pos);
		break;
	case KBLOOM_OP_REMOVE:
		/*
		 * From the newest generation that has the key, only: one
		 * remove undoes one add. Taking it from every generation
		 * that tests present would also take counts from other keys
		 * wherever it is only a false positive.
		 */
		for (i = 0; i < view->n && !ret; i++) {
			struct kbloom_delta di = {};

			ret = kbloom_core_remove_at(&view->s[i]->core, pos, &di);
			kbloom_occ_account(view->s[i]->occ, &di);
		}
		return ret;
	}
	kbloom_occ_account(newest->occ, &d);
	kbloom_window_check_fill(win, newest, &d);
	return ret;
}

/*
 * Generation @i, newest first, for whole-filter operations (clear, export,
 * import): the caller holds @win->lock, or is between
 * kbloom_window_copy_begin() and _end(), so no rotation reorders them.
 */
struct kbloom_slice *kbloom_window_slice(struct kbloom_window *win, u32 i)
{
	struct kbloom_view *view;

	view = rcu_dereference_protected(win->view,
					 lockdep_is_held(&win->lock) ||
					 lockdep_is_held(&win->copying));
	return view->s[i];
}

/*
 * Generation @i's storage in no particular order (not newest first): for
 * what concerns every generation alike, such as its change marks.
 */
struct kbloom_core *kbloom_window_storage(struct kbloom_window *win, u32 i)
{
	return &win->slices[i].core;
}

/* How long ago the newest generation became the newest, in ms. */
static u32 kbloom_window_age_ms(struct kbloom_window *win)
{
	return jiffies_to_msecs(jiffies - READ_ONCE(win->newest_since));
}

/*
 * Around a copy of the generations to userspace (export): waits for a
 * rotation under way (a fatal signal ends the wait), and holds off the
 * next one until kbloom_window_copy_end(), so that the copy is of one set
 * of generations, read in between with kbloom_window_slice(), and
 * @age_ms, the newest one's age, is theirs. Not @win->lock, which a
 * stalled page would hold for clear and import too. Process context.
 *
 * Return: 0, or -EINTR if a fatal signal came first.
 */
int kbloom_window_copy_begin(struct kbloom_window *win, u32 *age_ms)
{
	int ret = down_read_killable(&win->copying);

	if (!ret)
		*age_ms = kbloom_window_age_ms(win);
	return ret;
}

void kbloom_window_copy_end(struct kbloom_window *win)
{
	up_read(&win->copying);
}

/* Lock-free: sysfs and INFO never wait for a rotation. */
void kbloom_window_info(struct kbloom_window *win, u64 *rotations,
			u64 *newest_age_ms)
{
	*rotations = atomic64_read(&win->rotations);
	*newest_age_ms = kbloom_window_age_ms(win);
}
