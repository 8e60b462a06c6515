// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "stress": concurrent use while the filter is
 * destroyed and re-created, and concurrent adds. Included by
 * kbloom_selftest.c and, alone, by kbloom_selftest_stress.c (the KCSAN
 * run).
 */

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
	struct fails bad;	/* unexpected errnos or results */
	unsigned long fneg;	/* final phase: false negatives */
};

static int stress_stop;
static pthread_barrier_t stress_barrier;

static bool stress_stopped(void)
{
	return __atomic_load_n(&stress_stop, __ATOMIC_ACQUIRE);
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
		fail_note(&w->bad, op, err);
	return false;
}

static u32 stress_key(char *buf, size_t len, const char *tag, int id, u32 j)
{
	return (u32)snprintf(buf, len, "%s%d-%u", tag, id, j);
}

static void *stress_churn_worker(void *arg)
{
	struct stress_worker *w = arg;
	struct fails *bad = &w->bad;
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
			fail_note(bad, "ADD result", 0);
		err = kb_key(w->fd, KBLOOM_IOC_QUERY, STRESS_F, key, len, &res);
		if (stress_note(w, "QUERY", err) && res > 1)
			fail_note(bad, "QUERY result", 0);
		if (i % 8 == 0) {
			err = kb_key(w->fd, KBLOOM_IOC_TEST_AND_ADD, STRESS_F,
				     key, len, &res);
			if (stress_note(w, "TEST_AND_ADD", err) && res > 1)
				fail_note(bad, "TEST_AND_ADD result", 0);
		}
		if (i % 32 == 0) {
			for (j = 0, pos = 0; j < 16; j++) {
				blens[j] = stress_key(bkeys + pos, 32, "b",
						      w->id, i + j);
				pos += blens[j];
			}
			err = kb_batch(w->fd, KBLOOM_IOC_ADD_BATCH, STRESS_F,
				       bkeys, blens, bres, pos, 16, &out);
			if (stress_note(w, "ADD_BATCH", err) && out.done != 16)
				fail_note(bad, "ADD_BATCH done", 0);
			else if (err == ENOENT && out.done > 16 &&
				 out.done != RESULT_POISON)
				fail_note(bad, "ADD_BATCH done on ENOENT", 0);
			err = kb_batch(w->fd, KBLOOM_IOC_QUERY_BATCH, STRESS_F,
				       bkeys, blens, bres, pos, 16, &out);
			if (stress_note(w, "QUERY_BATCH", err) &&
			    (out.done != 16 || out.hits > 16))
				fail_note(bad, "QUERY_BATCH done/hits", 0);
		}
		if (i % 64 == 0) {
			err = kb_info(w->fd, STRESS_F, &info);
			if (stress_note(w, "INFO", err) &&
			    (info.bits != STRESS_BITS ||
			     info.hashes != STRESS_HASHES))
				fail_note(bad, "INFO size", 0);
		}
	}
	return NULL;
}

struct stress_destroyer {
	pthread_t tid;
	int fd;
	unsigned long cycles;
	struct fails bad;
};

static void *stress_destroyer_fn(void *arg)
{
	struct stress_destroyer *d = arg;
	unsigned long i;
	int err;

	for (i = 0; !stress_stopped(); i++) {
		/* Only this thread destroys and creates: both must work. */
		err = kb_destroy(d->fd, STRESS_F);
		if (err)
			fail_note(&d->bad, "DESTROY", err);
		err = kb_create(d->fd, STRESS_F, STRESS_BITS, STRESS_HASHES,
				0, 0, NULL);
		if (err)
			fail_note(&d->bad, "CREATE", err);
		err = i % 8 == 7 ? kb_clear(d->fd, STRESS_F) : 0;
		if (err)
			fail_note(&d->bad, "CLEAR", err);
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
		fail_note(&w->bad, "malloc", ENOMEM);
		pthread_barrier_wait(&stress_barrier);
		goto out;
	}
	/* First half one at a time, second half in batches. */
	for (j = 0; j < STRESS_KEYS / 2; j++) {
		u32 len = stress_key(key, sizeof(key), "f", w->id, j);

		err = kb_key(w->fd, KBLOOM_IOC_ADD, STRESS_F, key, len, NULL);
		if (err)
			fail_note(&w->bad, "final ADD", err);
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
			fail_note(&w->bad, "final ADD_BATCH", err);
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
				fail_note(&w->bad, "final QUERY_BATCH", err);
				continue;
			}
			w->fneg += count - bits_count(bm, count);
		}
	}
	for (j = 0; j < STRESS_KEYS; j++) {
		u32 len = stress_key(key, sizeof(key), "f", w->id, j);

		err = kb_key(w->fd, KBLOOM_IOC_QUERY, STRESS_F, key, len, &res);
		if (err)
			fail_note(&w->bad, "final QUERY", err);
		else if (res != 1)
			w->fneg++;
	}
out:
	free(keys);
	free(bm);
	return NULL;
}

/*
 * A fresh STRESS_F, and a device fd of its own for each worker and the
 * destroyer: concurrent users of the device, not only of a file.
 */
FIXTURE(stress) {
	struct stress_worker w[STRESS_WORKERS];
	struct stress_destroyer d;
};

FIXTURE_SETUP(stress)
{
	int i;

	for (i = 0; i < STRESS_WORKERS; i++)
		self->w[i].fd = -1;
	self->d.fd = -1;
	st_open(_metadata);
	cleanup(_metadata, STRESS_F);
	ASSERT_EQ(0, kb_create(g_fd, STRESS_F, STRESS_BITS, STRESS_HASHES, 0,
			       0, NULL));
	for (i = 0; i < STRESS_WORKERS; i++) {
		self->w[i].id = i;
		self->w[i].fd = open(DEV, O_RDWR);
		ASSERT_LE(0, self->w[i].fd);
	}
	self->d.fd = open(DEV, O_RDWR);
	ASSERT_LE(0, self->d.fd);
}

FIXTURE_TEARDOWN(stress)
{
	int i;

	for (i = 0; i < STRESS_WORKERS; i++)
		if (self->w[i].fd >= 0)
			close(self->w[i].fd);
	if (self->d.fd >= 0)
		close(self->d.fd);
	cleanup(_metadata, STRESS_F);
	st_close();
}

/* Workers use the filter while the destroyer destroys and re-creates it. */
TEST_F_TIMEOUT(stress, churn, 300)
{
	unsigned long ops = 0, oks = 0, enoent = 0;
	struct kbloom_info info;
	int i, err, started = 0;
	char detail[160];

	__atomic_store_n(&stress_stop, 0, __ATOMIC_RELEASE);
	for (i = 0; i < STRESS_WORKERS; i++) {
		err = pthread_create(&self->w[i].tid, NULL, stress_churn_worker,
				     &self->w[i]);
		if (!EXPECT_COND(err == 0, strerror(err),
				 "stress: start worker %d", i))
			break;
		started++;
	}
	err = pthread_create(&self->d.tid, NULL, stress_destroyer_fn, &self->d);
	EXPECT_COND(err == 0, strerror(err), "stress: start destroyer");
	if (err == 0)
		sleep(STRESS_SECS);
	__atomic_store_n(&stress_stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < started; i++)
		pthread_join(self->w[i].tid, NULL);
	if (err == 0)
		pthread_join(self->d.tid, NULL);
	if (started != STRESS_WORKERS || err)
		return;

	for (i = 0; i < STRESS_WORKERS; i++) {
		EXPECT_NO_FAILS(&self->w[i].bad,
				"stress: worker %d saw only success or ENOENT",
				i);
		ops += self->w[i].ops;
		oks += self->w[i].ok;
		enoent += self->w[i].enoent;
	}
	EXPECT_NO_FAILS(&self->d.bad,
			"stress: destroyer saw only success or ENOENT");
	snprintf(detail, sizeof(detail),
		 "%lu destroy/create cycles, %lu ops (%lu ok, %lu ENOENT)",
		 self->d.cycles, ops, oks, enoent);
	NOTE("stress: %s", detail);
	EXPECT_COND(self->d.cycles >= 10, detail,
		    "stress: the filter was churned");
	EXPECT_COND(oks > 0, detail, "stress: workers made progress");

	/* Stable phase: the destroyer's last create left it in place. */
	EXPECT_OK(kb_info(g_fd, STRESS_F, &info),
		  "stress: filter exists after the churn");
}

/* Every worker adds its own keys at once: none may be lost or uncounted. */
TEST_F_TIMEOUT(stress, concurrent_adds, 300)
{
	struct kbloom_info info;
	unsigned long fneg = 0;
	int i, err, started;
	u64 adds_before;

	err = kb_info(g_fd, STRESS_F, &info);
	if (!EXPECT_OK(err, "stress: INFO %s", STRESS_F))
		return;
	adds_before = info.adds;
	err = pthread_barrier_init(&stress_barrier, NULL, STRESS_WORKERS);
	if (!EXPECT_COND(err == 0, strerror(err), "stress: barrier init"))
		return;
	started = 0;
	for (i = 0; i < STRESS_WORKERS; i++) {
		err = pthread_create(&self->w[i].tid, NULL, stress_final_worker,
				     &self->w[i]);
		if (!EXPECT_COND(err == 0, strerror(err),
				 "stress: start final worker %d", i))
			break;
		started++;
	}
	/* A missing worker would hang the barrier: nothing sane to do. */
	ASSERT_EQ(STRESS_WORKERS, started) {
		TH_LOG("stress: final phase: cannot continue");
	}
	for (i = 0; i < STRESS_WORKERS; i++)
		pthread_join(self->w[i].tid, NULL);
	pthread_barrier_destroy(&stress_barrier);
	for (i = 0; i < STRESS_WORKERS; i++) {
		EXPECT_NO_FAILS(&self->w[i].bad,
				"stress: final worker %d calls succeeded", i);
		fneg += self->w[i].fneg;
	}
	EXPECT_U64(fneg, 0, "stress: no false negatives after concurrent adds");
	err = kb_info(g_fd, STRESS_F, &info);
	if (EXPECT_OK(err, "stress: INFO after the final phase"))
		EXPECT_U64(info.adds - adds_before,
			   (u64)STRESS_WORKERS * STRESS_KEYS,
			   "stress: INFO adds counted every concurrent add");
}
