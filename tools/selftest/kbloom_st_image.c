// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "image": EXPORT and IMPORT, broken images, and
 * that IMPORT REPLACE is atomic for concurrent readers (that they need
 * CAP_SYS_ADMIN is perm.unprivileged_caller's). Included by
 * kbloom_selftest.c.
 */

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

/* IMPORT of a broken image: must fail and create nothing. */
static void img_bad(struct __test_metadata *_metadata,
		    const struct kbloom_image *im, int want, long before,
		    const char *what)
{
	struct kbloom_info info;
	int err = ioc(g_fd, KBLOOM_IOC_IMPORT, (void *)im);

	EXPECT_ERRNO(err, want, "image: IMPORT %s", what);
	EXPECT_COND(count_filters(_metadata) == before &&
		    kb_info(g_fd, IMG_BAD, &info) == ENOENT,
		    "a filter appeared",
		    "image: IMPORT %s created nothing (LIST count unchanged)",
		    what);
	cleanup(_metadata, IMG_BAD);
}

static void image_bad_inputs(struct __test_metadata *_metadata,
			     const struct img *p, const struct img *c)
{
	struct kbloom_image base = p->im, im;
	void *hole = unmapped_page(_metadata);
	long before = count_filters(_metadata);
	unsigned char *b2;

	set_name(base.name, IMG_BAD);
	base.payload = PTR(p->buf);
	base.import_flags = 0;

#define BAD(field, val, want, what)		\
	do {					\
		im = base;			\
		im.field = (val);		\
		img_bad(_metadata, &im, want, before, what); \
	} while (0)

	BAD(bits, 63, EINVAL, "bits 63");
	BAD(bits, KBLOOM_MAX_BITS + 1, EINVAL, "bits MAX_BITS + 1");
	im = base;
	im.bits = 63;
	im.payload_len = 8;
	img_bad(_metadata, &im, EINVAL, before,
		"bits 63 with a matching 8-byte payload");
	BAD(bits, IMG_PBITS + 64, EINVAL, "bits that need 8 more bytes");
	BAD(hashes, 0, EINVAL, "hashes 0");
	BAD(hashes, KBLOOM_MAX_HASHES + 1, EINVAL, "hashes 33");
	/* 1 (jhash) and 2 (SipHash) are the schemes; 0 is no scheme. */
	BAD(hash_scheme, KBLOOM_HASH_SIPHASH + 1, EINVAL, "hash_scheme 3");
	BAD(hash_scheme, 0, EINVAL, "hash_scheme 0");
	BAD(flags, KBLOOM_CREATE_LIKE, EINVAL, "flags LIKE");
	BAD(flags, 1u << 2, EINVAL, "flags 1 << 2");
	BAD(flags, 1u << 7, EINVAL, "flags 1 << 7");
	BAD(flags, KBLOOM_CREATE_BLOCKED, EINVAL,
	    "flags BLOCKED on bits that are no whole blocks");
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
	BAD(age_ms, 1, EINVAL, "age_ms on a plain filter");
	/* Was reserved: 1 generation and a window without them are invalid. */
	BAD(generations, 1, EINVAL, "generations 1");
	BAD(window_ms, 1, EINVAL, "window_ms without generations");
	im = base;
	set_name(im.name, "");
	img_bad(_metadata, &im, EINVAL, before, "empty name");
	im = base;
	set_name(im.name, ".x");
	img_bad(_metadata, &im, EINVAL, before, "bad name");

	/* Padding: bit m itself, then the last bit of the last word. */
	b2 = malloc(p->len > c->len ? p->len : c->len);
	if (EXPECT_COND(b2 != NULL, "out of memory", "image: alloc")) {
		im = base;
		im.payload = PTR(b2);
		memcpy(b2, p->buf, p->len);
		b2[IMG_PBITS / 8] |= (unsigned char)(1u << (IMG_PBITS % 8));
		img_bad(_metadata, &im, EINVAL, before,
			"with bit m set (padding)");
		memcpy(b2, p->buf, p->len);
		b2[p->len - 1] |= 0x80;
		img_bad(_metadata, &im, EINVAL, before,
			"with the last padding bit set");
	}
	/* Counting padding: counter m (high nibble of byte m / 2). */
	if (b2 && c->buf) {
		im = c->im;
		set_name(im.name, IMG_BAD);
		im.payload = PTR(b2);
		memcpy(b2, c->buf, c->len);
		b2[IMG_CBITS / 2] |= 0x10;
		img_bad(_metadata, &im, EINVAL, before,
			"counting with counter m non-zero (padding)");
		/* Smaller than the buffer: only the size is wrong. */
		im.payload = PTR(c->buf);
		im.payload_len = payload_size(IMG_CBITS, false);
		img_bad(_metadata, &im, EINVAL, before,
			"counting with a plain-sized payload");
	}
	free(b2);
#undef BAD

	/* The name is taken: EEXIST, and the holder is untouched. */
	im = base;
	set_name(im.name, IMG_Q);
	EXPECT_ERRNO(ioc(g_fd, KBLOOM_IOC_IMPORT, &im), EEXIST,
		     "image: IMPORT over an existing name without REPLACE");
	EXPECT_ERRNO(kb_import(g_fd, &base, IMG_BAD, KBLOOM_IMPORT_REPLACE),
		     ENOENT, "image: IMPORT REPLACE of a missing name");
	EXPECT_COND(count_filters(_metadata) == before, "count changed",
		    "image: EEXIST/ENOENT imports created nothing");
}

/* Plain export and import. */
static void image_plain(struct __test_metadata *_metadata, struct img *p)
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
	if (!EXPECT_OK(err, "image: create %s", IMG_P))
		return;
	if (!keyset_tag(_metadata, &ks, "ix", IMG_KEYS) ||
	    !ks_add(_metadata, IMG_P, &ks, 0, IMG_KEYS))
		goto out;
	kb_skey(g_fd, KBLOOM_IOC_QUERY, IMG_P, "ix:0", &res);
	if (!EXPECT_OK(kb_info(g_fd, IMG_P, &info), "image: INFO %s", IMG_P))
		goto out;

	/* Too small: ENOBUFS, the size reported, nothing copied. */
	buf = malloc(want + 64);
	if (!EXPECT_COND(buf != NULL, "out of memory", "image: alloc"))
		goto out;
	memset(buf, 0xa5, want + 64);
	err = kb_export(g_fd, IMG_P, buf, 0, &im);
	if (EXPECT_ERRNO(err, ENOBUFS, "image: EXPORT payload_len 0"))
		EXPECT_U64(im.payload_len, want,
			   "image: ENOBUFS reports (bits + 63) / 64 * 8");
	err = kb_export(g_fd, IMG_P, buf, want - 8, &im);
	if (EXPECT_ERRNO(err, ENOBUFS, "image: EXPORT payload_len 8 short"))
		EXPECT_U64(im.payload_len, want,
			   "image: ENOBUFS (8 short) reports the size");
	EXPECT_COND(all_bytes(buf, want + 64, 0xa5), "the buffer was written",
		    "image: a too-small EXPORT copied nothing (buffer untouched)");

	/* A larger buffer than needed: exactly the payload is written. */
	err = kb_export(g_fd, IMG_P, buf, want + 64, &im);
	if (!EXPECT_OK(err, "image: EXPORT %s", IMG_P))
		goto out;
	EXPECT_U64(im.payload_len, want, "image: EXPORT payload_len out");
	EXPECT_U64(im.bits, info.bits, "image: EXPORT bits == INFO");
	EXPECT_U64(im.hashes, info.hashes, "image: EXPORT hashes == INFO");
	EXPECT_U64(im.flags, info.flags, "image: EXPORT flags == INFO");
	EXPECT_U64(im.adds, info.adds, "image: EXPORT adds == INFO");
	EXPECT_U64(im.capacity, info.capacity,
		   "image: EXPORT capacity == INFO");
	EXPECT_U64(im.fpr_ppb, info.fpr_ppb, "image: EXPORT fpr_ppb == INFO");
	EXPECT_U64(im.hash_scheme, default_scheme(g_fd),
		   "image: EXPORT hash_scheme (the default)");
	EXPECT_U64(image_weight(&im, buf), info.bits_set,
		   "image: payload popcount == INFO bits_set");
	EXPECT_COND(pad_zero(buf, want, IMG_PBITS), "a padding bit is set",
		    "image: payload padding past m is zero");
	EXPECT_COND(all_bytes(buf + want, 64, 0xa5), "bytes past it written",
		    "image: EXPORT wrote nothing past payload_len");
	p->im = im;
	p->buf = buf;
	p->len = want;
	buf = NULL;

	/* Import under a new name: the same filter. */
	im = p->im;
	err = kb_import(g_fd, &im, IMG_Q, 0);
	if (!EXPECT_OK(err, "image: IMPORT as %s", IMG_Q))
		goto out;
	err = kb_info(g_fd, IMG_Q, &iq);
	if (EXPECT_OK(err, "image: INFO %s", IMG_Q)) {
		EXPECT_COND(iq.bits == info.bits && iq.hashes == info.hashes &&
			    iq.flags == info.flags &&
			    iq.bits_set == info.bits_set,
			    "differs",
			    "image: imported bits, hashes, flags, bits_set");
		EXPECT_COND(iq.capacity == info.capacity &&
			    iq.fpr_ppb == info.fpr_ppb && iq.adds == p->im.adds,
			    "differs",
			    "image: imported capacity, fpr_ppb, adds as in the image");
		EXPECT_U64(iq.hash_scheme, p->im.hash_scheme,
			   "image: imported hash_scheme");
	}
	EXPECT_U64((u64)ks_hits(_metadata, IMG_Q, &ks, 0, IMG_KEYS),
		   IMG_KEYS, "image: every key present in the import");
	EXPECT_COND(img_same(_metadata, IMG_Q, p), "differs",
		    "image: export of the import == the original export (seed too)");
	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, IMG_P, IMG_Q, &m);
	if (EXPECT_OK(err, "image: MERGE original <- import (same seed)"))
		EXPECT_U64(m.mismatch, 0, "image: import is compatible");
	err = kb_merge(g_fd, KBLOOM_IOC_COMPARE, IMG_P, IMG_Q, &m);
	if (EXPECT_OK(err, "image: COMPARE original, import"))
		EXPECT_COND(m.bits_union == info.bits_set &&
			    m.bits_inter == info.bits_set, "differ",
			    "image: original and import hold the same bits");
out:
	free(buf);
	keyset_free(&ks);
}

/* Counting export and import: nibbles, saturation. */
static void image_counting(struct __test_metadata *_metadata, struct img *c)
{
	struct kbloom_info info, iq;
	u32 res, j;
	int err;
	char key[16];

	err = kb_create_ex(g_fd, IMG_C, IMG_CBITS, 4, KBLOOM_CREATE_COUNTING,
			   NULL, NULL);
	if (!EXPECT_OK(err, "image: create counting %s", IMG_C))
		return;
	add_n(_metadata, IMG_C, "sat", 20);
	for (j = 0; j < 50; j++) {
		snprintf(key, sizeof(key), "c%u", j);
		add_n(_metadata, IMG_C, key, 1);
	}
	if (!EXPECT_OK(kb_info(g_fd, IMG_C, &info), "image: INFO %s", IMG_C))
		return;
	/* img_take() asks the size first: ENOBUFS, and the size it gives. */
	if (!img_take(_metadata, IMG_C, c, "counting"))
		return;
	EXPECT_U64(c->len, payload_size(IMG_CBITS, true),
		   "image: counting payload is (4m + 63) / 64 * 8 bytes");
	EXPECT_U64(c->im.flags, KBLOOM_CREATE_COUNTING,
		   "image: counting EXPORT flags");
	EXPECT_COND(c->im.bits == IMG_CBITS && c->im.hashes == 4, "differs",
		    "image: counting EXPORT bits, hashes");
	check_counts(_metadata, IMG_C, "image: counting export");
	EXPECT_RANGE(img_saturated(c), 1, 4,
		     "image: the saturated key shows in the payload");
	EXPECT_COND(pad_zero(c->buf, c->len, 4 * (u64)IMG_CBITS),
		    "a padding counter is set",
		    "image: counting payload padding past m is zero");

	err = kb_import(g_fd, &c->im, IMG_CQ, 0);
	if (!EXPECT_OK(err, "image: IMPORT counting as %s", IMG_CQ))
		return;
	if (EXPECT_OK(kb_info(g_fd, IMG_CQ, &iq), "image: INFO %s", IMG_CQ))
		EXPECT_COND(iq.flags == KBLOOM_CREATE_COUNTING &&
			    iq.bits_set == info.bits_set &&
			    iq.saturated == info.saturated, "differs",
			    "image: imported counting filter: flags, bits_set, saturated");
	EXPECT_COND(img_same(_metadata, IMG_CQ, c), "differs",
		    "image: export of the counting import is identical");
	EXPECT_SKEY(g_fd, KBLOOM_IOC_REMOVE, IMG_CQ, "c7", 1,
		    "image: imported counters can be removed");
	EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, IMG_CQ, "c7", 0,
		    "image: c7 gone from the import after one remove");
	remove_n(_metadata, IMG_CQ, "sat", 20);
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, IMG_CQ, "sat", &res);
	EXPECT_COND(err == 0 && res == 1, "absent",
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
	unsigned long gen_x, gen_y, both, enoent, zmiss;
	struct fails bad;
};

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
			fail_note(&r->bad, "QUERY_BATCH", err);
		} else if (out.done != 64 || out.hits != bits_count(bm, 64)) {
			fail_note(&r->bad, "QUERY_BATCH done/hits", 0);
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
				fail_note(&r->bad, "mixed batch (X and Y)", 0);
		}
		__atomic_add_fetch(&r->batches, 1, __ATOMIC_RELEASE);
		/* A key in both images: present whatever the generation. */
		zl = (u32)snprintf(zk, sizeof(zk), "rz:%u", i % IMG_ZKEYS);
		err = kb_key(r->fd, KBLOOM_IOC_QUERY, IMG_R, zk, zl, &res);
		if (err == ENOENT)
			r->enoent++;
		else if (err)
			fail_note(&r->bad, "QUERY", err);
		else if (res != 1)
			r->zmiss++;
	}
	return NULL;
}

static void image_replace_load(struct __test_metadata *_metadata,
			       const struct img *ix, const struct img *iy)
{
	struct img_reader rd[IMG_READERS];
	unsigned long bx = 0, by = 0, bb = 0;
	struct fails replaces = { 0 };
	int i, j, err, started = 0;
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
		rd[i].fd = open(DEV, O_RDONLY);
		if (!EXPECT_COND(rd[i].fd >= 0, strerror(errno),
				 "image: open reader fd %d", i))
			goto out;
	}
	__atomic_store_n(&img_stop, 0, __ATOMIC_RELEASE);
	for (i = 0; i < IMG_READERS; i++) {
		err = pthread_create(&rd[i].tid, NULL, img_reader_fn, &rd[i]);
		if (!EXPECT_COND(err == 0, strerror(err),
				 "image: start reader %d", i))
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
		if (err)
			fail_note(&replaces, "IMPORT REPLACE", err);
		nanosleep(&ts, NULL);
	}
	__atomic_store_n(&img_stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < started; i++)
		pthread_join(rd[i].tid, NULL);
	if (started != IMG_READERS)
		goto out;

	EXPECT_NO_FAILS(&replaces, "image: %d IMPORT REPLACEs under load",
			IMG_REPLACES);
	for (i = 0; i < IMG_READERS; i++) {
		EXPECT_NO_FAILS(&rd[i].bad,
				"image: reader %d: every batch all-X or all-Y",
				i);
		EXPECT_U64(rd[i].enoent, 0,
			   "image: reader %d: the filter was never missing", i);
		EXPECT_U64(rd[i].zmiss, 0,
			   "image: reader %d: keys in both images always present",
			   i);
		EXPECT_COND(rd[i].batches > 0, "no batch ran",
			    "image: reader %d made progress", i);
		bx += rd[i].gen_x;
		by += rd[i].gen_y;
		bb += rd[i].both;
	}
	NOTE("image: batches saw X %lu, Y %lu, both %lu", bx, by, bb);
	/* 50 replaces starting with X end with Y. */
	EXPECT_COND(img_same(_metadata, IMG_R, iy), "differs",
		    "image: after the replaces %s holds image Y", IMG_R);
out:
	for (i = 0; i < IMG_READERS; i++)
		if (rd[i].fd > 0)
			close(rd[i].fd);
}

static void image_replace(struct __test_metadata *_metadata)
{
	struct keyset xs = { 0 }, ys = { 0 }, zs = { 0 };
	struct img ix = { 0 }, iy = { 0 };
	struct kbloom_image im;
	struct kbloom_info info;
	struct kbloom_merge m;
	unsigned char *b2 = NULL;
	int err;

	/* R: X keys, 100000 bits, 5 hashes; S: Y keys, 200003 bits, 6. */
	if (!EXPECT_OK(kb_create(g_fd, IMG_R, 100000, 5, 0, 0, NULL),
		       "image: create %s", IMG_R) ||
	    !EXPECT_OK(kb_create(g_fd, IMG_S, 200003, 6, 0, 0, NULL),
		       "image: create %s", IMG_S))
		return;
	if (!keyset_tag(_metadata, &xs, "rx", 1000) ||
	    !keyset_tag(_metadata, &ys, "ry", 1000) ||
	    !keyset_tag(_metadata, &zs, "rz", IMG_ZKEYS) ||
	    !ks_add(_metadata, IMG_R, &xs, 0, 1000) ||
	    !ks_add(_metadata, IMG_R, &zs, 0, IMG_ZKEYS) ||
	    !ks_add(_metadata, IMG_S, &ys, 0, 1000) ||
	    !ks_add(_metadata, IMG_S, &zs, 0, IMG_ZKEYS))
		goto out;
	if (!img_take(_metadata, IMG_R, &ix, "X") ||
	    !img_take(_metadata, IMG_S, &iy, "Y"))
		goto out;

	err = kb_import(g_fd, &iy.im, IMG_R, KBLOOM_IMPORT_REPLACE);
	if (!EXPECT_OK(err, "image: IMPORT REPLACE %s with S's image", IMG_R))
		goto out;
	err = kb_info(g_fd, IMG_R, &info);
	if (EXPECT_OK(err, "image: INFO %s after REPLACE", IMG_R))
		EXPECT_COND(info.bits == 200003 && info.hashes == 6, "old size",
			    "image: REPLACE took S's bits and hashes");
	EXPECT_U64((u64)ks_hits(_metadata, IMG_R, &ys, 0, 1000), 1000,
		   "image: after REPLACE every Y key present");
	EXPECT_U64((u64)ks_hits(_metadata, IMG_R, &xs, 0, 1000), 0,
		   "image: after REPLACE every X key absent");
	if (EXPECT_OK(kb_merge(g_fd, KBLOOM_IOC_MERGE, IMG_R, IMG_S, &m),
		      "image: MERGE %s <- %s after REPLACE", IMG_R, IMG_S))
		EXPECT_U64(m.mismatch, 0, "image: REPLACE took S's seed too");
	EXPECT_COND(img_same(_metadata, IMG_S, &iy), "changed",
		    "image: the exported filter S is unchanged");

	/* Failed replaces leave R byte for byte as it was. */
	im = ix.im;
	im.payload_len += 8;
	EXPECT_ERRNO(kb_import(g_fd, &im, IMG_R, KBLOOM_IMPORT_REPLACE), EINVAL,
		     "image: IMPORT REPLACE with payload_len 8 over");
	EXPECT_COND(img_same(_metadata, IMG_R, &iy), "changed",
		    "image: the failed REPLACE (size) left R intact");
	b2 = malloc(ix.len);
	if (EXPECT_COND(b2 != NULL, "out of memory", "image: alloc")) {
		memcpy(b2, ix.buf, ix.len);
		b2[ix.len - 1] |= 0x80;
		im = ix.im;
		im.payload = PTR(b2);
		err = kb_import(g_fd, &im, IMG_R, KBLOOM_IMPORT_REPLACE);
		EXPECT_ERRNO(err, EINVAL,
			     "image: IMPORT REPLACE with a padding bit set");
		EXPECT_COND(img_same(_metadata, IMG_R, &iy), "changed",
			    "image: the failed REPLACE (padding) left R intact");
	}
	im = ix.im;
	im.hashes = 0;
	err = kb_import(g_fd, &im, IMG_R, KBLOOM_IMPORT_REPLACE);
	EXPECT_ERRNO(err, EINVAL, "image: IMPORT REPLACE with hashes 0");
	EXPECT_COND(img_same(_metadata, IMG_R, &iy), "changed",
		    "image: the failed REPLACE (hashes) left R intact");

	image_replace_load(_metadata, &ix, &iy);
out:
	free(b2);
	img_free(&ix);
	img_free(&iy);
	keyset_free(&xs);
	keyset_free(&ys);
	keyset_free(&zs);
}

static const char *const image_all[] = {
	IMG_P, IMG_Q, IMG_C, IMG_CQ, IMG_R, IMG_S, IMG_BAD,
};

FIXTURE(image) {
};

/* The cases create their filters: what they hold is part of the test. */
FIXTURE_SETUP(image)
{
	st_open(_metadata);
	cleanup_all(image_all);
}

FIXTURE_TEARDOWN(image)
{
	cleanup_all(image_all);
	st_close();
}

TEST_F(image, export_import_plain)
{
	struct img p = { 0 };

	image_plain(_metadata, &p);
	img_free(&p);
}

TEST_F(image, export_import_counting)
{
	struct img c = { 0 };

	image_counting(_metadata, &c);
	img_free(&c);
}

TEST_F_TIMEOUT(image, import_replace, 300)
{
	image_replace(_metadata);
}

#define IMG_BPF		(KBLOOM_CREATE_BPF_READ | KBLOOM_CREATE_BPF_WRITE)

/* A filter's BPF access, as INFO and sysfs "bpf" report it. */
static void img_bpf_is(struct __test_metadata *_metadata, const char *name,
		       u32 want, const char *word)
{
	struct kbloom_info info;
	char path[128], got[16] = "";
	FILE *f;

	ASSERT_EQ(0, kb_info(g_fd, name, &info));
	EXPECT_EQ(want, info.flags & IMG_BPF) {
		TH_LOG("%s: INFO flags %#x", name, info.flags);
	}
	snprintf(path, sizeof(path), SYSFS "/filters/%s/bpf", name);
	f = fopen(path, "r");
	ASSERT_TRUE(f != NULL);
	EXPECT_TRUE(fgets(got, sizeof(got), f) != NULL);
	fclose(f);
	EXPECT_EQ(0, strncmp(got, word, strlen(word))) {
		TH_LOG("%s: sysfs bpf says %s, want %s", name, got, word);
	}
}

/*
 * A filter's BPF access: write implies read, CREATE reports both; EXPORT
 * carries it and IMPORT gives it to the filter it creates, while a
 * replaced filter keeps its own; --like does not copy it.
 */
TEST_F(image, bpf_access)
{
	struct kbloom_create c;
	struct img g;

	ASSERT_EQ(0, kb_create_ex(g_fd, IMG_R, 4096, 3,
				  KBLOOM_CREATE_BPF_WRITE, NULL, &c));
	EXPECT_EQ(IMG_BPF, c.flags & IMG_BPF);
	img_bpf_is(_metadata, IMG_R, IMG_BPF, "write");
	ASSERT_EQ(0, kb_create_ex(g_fd, IMG_BAD, 4096, 3,
				  KBLOOM_CREATE_BPF_READ, NULL, NULL));
	img_bpf_is(_metadata, IMG_BAD, KBLOOM_CREATE_BPF_READ, "read");
	ASSERT_EQ(0, kb_create_like(g_fd, IMG_Q, IMG_R, 0, 0, &c));
	img_bpf_is(_metadata, IMG_Q, 0, "none");

	ASSERT_TRUE(img_take(_metadata, IMG_R, &g, "image"));
	EXPECT_EQ(IMG_BPF, g.im.flags & IMG_BPF);
	ASSERT_EQ(0, kb_import(g_fd, &g.im, IMG_S, 0));
	img_bpf_is(_metadata, IMG_S, IMG_BPF, "write");
	ASSERT_EQ(0, kb_import(g_fd, &g.im, IMG_BAD, KBLOOM_IMPORT_REPLACE));
	img_bpf_is(_metadata, IMG_BAD, KBLOOM_CREATE_BPF_READ, "read");
	img_free(&g);
}

/*
 * IMG_P and its import IMG_Q, IMG_C and its import IMG_CQ, as the cases
 * export_import_plain and export_import_counting leave them; self->p and
 * self->c are their exports.
 */
FIXTURE(image_made) {
	struct img p, c;
};

FIXTURE_SETUP(image_made)
{
	st_open(_metadata);
	cleanup_all(image_all);
	image_plain(_metadata, &self->p);
	image_counting(_metadata, &self->c);
	/* Without the plain export there is nothing to break or guard. */
	ASSERT_TRUE(self->p.buf != NULL);
}

FIXTURE_TEARDOWN(image_made)
{
	img_free(&self->p);
	img_free(&self->c);
	cleanup_all(image_all);
	st_close();
}

TEST_F(image_made, bad_inputs)
{
	image_bad_inputs(_metadata, &self->p, &self->c);
}

/* ---- IMPORT checks every field as CREATE does; both hash schemes ---- */

#define IMG_CAP		"image_cap"
#define IMG_J		"image_j"
#define IMG_SIP		"image_sip"
#define IMG_NEW		"image_new"
#define IMG_SIP2	"image_sip2"

static const char *const image_fields_all[] = {
	IMG_CAP, IMG_J, IMG_SIP, IMG_NEW, IMG_SIP2,
};

/*
 * self->cap: an export of IMG_CAP, made for 1000 keys at 1% and empty
 * (a zero payload); self->jh and self->sh: exports of IMG_J (jhash) and
 * IMG_SIP (SipHash), 2^16 bits and 5 hashes, holding self->ks; self->zero
 * a zeroed payload of any size needed here.
 */
FIXTURE(image_fields) {
	struct img cap, jh, sh;
	struct keyset ks;
	long count;
	unsigned char *zero;
};

FIXTURE_SETUP(image_fields)
{
	struct kbloom_create c;

	st_open(_metadata);
	cleanup_all(image_fields_all);
	ASSERT_EQ(0, kb_create(g_fd, IMG_CAP, 0, 0, 1000, 10000000, &c));
	ASSERT_TRUE(img_take(_metadata, IMG_CAP, &self->cap, "image"));
	ASSERT_EQ(1000ULL, self->cap.im.capacity);
	ASSERT_EQ(10000000U, self->cap.im.fpr_ppb);
	ASSERT_EQ(0, kb_create_scheme(g_fd, IMG_J, 1 << 16, 5, 0,
				      KBLOOM_HASH_JHASH, NULL));
	ASSERT_EQ(0, kb_create_scheme(g_fd, IMG_SIP, 1 << 16, 5, 0,
				      KBLOOM_HASH_SIPHASH, NULL));
	ASSERT_TRUE(keyset_tag(_metadata, &self->ks, "iv", 500));
	ASSERT_TRUE(ks_add(_metadata, IMG_J, &self->ks, 0, 500));
	ASSERT_TRUE(ks_add(_metadata, IMG_SIP, &self->ks, 0, 500));
	ASSERT_TRUE(img_take(_metadata, IMG_J, &self->jh, "image"));
	ASSERT_TRUE(img_take(_metadata, IMG_SIP, &self->sh, "image"));
	self->zero = calloc(1, self->cap.len + 4096);
	ASSERT_TRUE(self->zero != NULL);
	self->count = count_filters(_metadata);
	ASSERT_LE(3, self->count);
}

FIXTURE_TEARDOWN(image_fields)
{
	img_free(&self->cap);
	img_free(&self->jh);
	img_free(&self->sh);
	keyset_free(&self->ks);
	free(self->zero);
	cleanup_all(image_fields_all);
	st_close();
}

/* IMPORT of @im as IMG_NEW fails with EINVAL and creates nothing. */
static void image_einval(struct __test_metadata *_metadata,
			 FIXTURE_DATA(image_fields) *self,
			 const struct kbloom_image *im, const char *what)
{
	EXPECT_ERRNO(kb_import(g_fd, im, IMG_NEW, 0), EINVAL, "image: IMPORT %s",
		     what);
	EXPECT_COND(!kb_exists(g_fd, IMG_NEW) &&
		    kb_count(g_fd) == self->count, "a filter appeared",
		    "image: IMPORT %s created nothing", what);
	destroy_quiet(g_fd, IMG_NEW);
}

/* The capacity image with (bits, hashes) changed; payload sized to fit. */
static struct kbloom_image cap_with(FIXTURE_DATA(image_fields) *self,
				    u64 bits, u32 hashes)
{
	struct kbloom_image im = self->cap.im;

	im.bits = bits;
	im.hashes = hashes;
	im.payload = PTR(self->zero);
	im.payload_len = payload_size(bits, false);
	return im;
}

/*
 * What CREATE would refuse, IMPORT refuses: fpr_ppb out of range or
 * without a capacity, bits and hashes that are not what the capacity and
 * fpr_ppb give, an unknown hash scheme, a jhash image with seed_hi.
 */
TEST_F(image_fields, refuses_what_create_would)
{
	u64 m = self->cap.im.bits;
	u32 k = self->cap.im.hashes;
	struct kbloom_image im;

	ASSERT_LE(64ULL, m);
	ASSERT_LT(1U, k);
	im = self->cap.im;
	im.fpr_ppb = KBLOOM_FPR_ONE;
	image_einval(_metadata, self, &im, "fpr_ppb 10^9");
	im.fpr_ppb = KBLOOM_FPR_ONE + 1;
	image_einval(_metadata, self, &im, "fpr_ppb 10^9 + 1");
	im.fpr_ppb = 0xffffffffu;
	image_einval(_metadata, self, &im, "fpr_ppb 2^32 - 1");
	im = self->cap.im;
	im.capacity = 0;
	image_einval(_metadata, self, &im, "fpr_ppb set, capacity 0");

	im = cap_with(self, m + 1, k);
	image_einval(_metadata, self, &im, "bits m + 1");
	im = cap_with(self, m - 1, k);
	image_einval(_metadata, self, &im, "bits m - 1");
	im = cap_with(self, m + 64, k);
	image_einval(_metadata, self, &im, "bits m + 64");
	im = cap_with(self, m * 2, k);
	image_einval(_metadata, self, &im, "bits 2m");
	/* Another capacity with the same m and k is not what sizing gives. */
	im = cap_with(self, m, k);
	im.capacity = 2000;
	image_einval(_metadata, self, &im, "capacity 2n");
	im = cap_with(self, m, k);
	im.fpr_ppb = 1000000;
	image_einval(_metadata, self, &im, "fpr 0.1% with 1%'s m, k");
	im = cap_with(self, m, k + 1);
	image_einval(_metadata, self, &im, "hashes k + 1");
	im = cap_with(self, m, k - 1);
	image_einval(_metadata, self, &im, "hashes k - 1");

	/* (hash_scheme 0 and 3: image_made.bad_inputs.) */
	im = self->jh.im;
	im.hash_scheme = 0x80000001u;
	image_einval(_metadata, self, &im, "hash_scheme 0x80000001");
	im = self->jh.im;
	ASSERT_EQ((u32)KBLOOM_HASH_JHASH, im.hash_scheme);
	im.seed_hi[0] = 1;
	image_einval(_metadata, self, &im, "jhash, seed_hi[0] 1");
	im.seed_hi[0] = 0;
	im.seed_hi[1] = 0x80000000u;
	image_einval(_metadata, self, &im, "jhash, seed_hi[1] set");
}

/*
 * An image loads as the filter it was: one sized by capacity and
 * fpr_ppb, and one of either hash scheme holding self->ks.
 */
TEST_F(image_fields, reimport)
{
	const struct img *src[] = { &self->cap, &self->jh, &self->sh };
	struct kbloom_image im;
	struct kbloom_info info;
	struct img g;
	size_t i;

	ASSERT_EQ((u32)KBLOOM_HASH_JHASH, self->jh.im.hash_scheme);
	ASSERT_EQ((u32)KBLOOM_HASH_SIPHASH, self->sh.im.hash_scheme);
	for (i = 0; i < ARRAY_SIZE(src); i++) {
		ASSERT_EQ(0, kb_import(g_fd, &src[i]->im, IMG_NEW, 0));
		ASSERT_EQ(0, kb_info(g_fd, IMG_NEW, &info));
		EXPECT_EQ(src[i]->im.bits, info.bits);
		EXPECT_EQ(src[i]->im.hashes, info.hashes);
		EXPECT_EQ(src[i]->im.capacity, info.capacity);
		EXPECT_EQ(src[i]->im.fpr_ppb, info.fpr_ppb);
		EXPECT_EQ(src[i]->im.hash_scheme, info.hash_scheme);
		EXPECT_EQ(i ? 500L : 0L,
			  ks_hits(_metadata, IMG_NEW, &self->ks, 0, 500));
		ASSERT_TRUE(img_take(_metadata, IMG_NEW, &g, "image"));
		EXPECT_TRUE(img_equal(&g, src[i]));
		img_free(&g);
		ASSERT_EQ(0, kb_destroy(g_fd, IMG_NEW));
	}
	/* The payload needs no particular buffer: a zeroed one is the same. */
	im = cap_with(self, self->cap.im.bits, self->cap.im.hashes);
	EXPECT_EQ(0, kb_import(g_fd, &im, IMG_NEW, 0));
}

/* A jhash filter has no second seed half, nor window fields. */
TEST_F(image_fields, jhash_exports_zero_seed_hi)
{
	const struct kbloom_image *im = &self->jh.im;

	EXPECT_EQ((u32)KBLOOM_HASH_JHASH, im->hash_scheme);
	EXPECT_EQ(0U, im->seed_hi[0]);
	EXPECT_EQ(0U, im->seed_hi[1]);
	EXPECT_EQ(0U, im->generations);
	EXPECT_EQ(0U, im->window_ms);
}

/* SipHash's seed_hi: random, carried by EXPORT and IMPORT, key material. */
TEST_F(image_fields, siphash_seed_hi)
{
	struct keyset ks = { 0 };
	struct kbloom_image im;
	struct img s;

	ASSERT_EQ(0, kb_create_scheme(g_fd, IMG_SIP2, 1 << 20, 7, 0,
				      KBLOOM_HASH_SIPHASH, NULL));
	ASSERT_TRUE(keyset_tag(_metadata, &ks, "sh", 1000));
	ASSERT_TRUE(ks_add(_metadata, IMG_SIP2, &ks, 0, 1000));
	ASSERT_TRUE(img_take(_metadata, IMG_SIP2, &s, "image"));
	EXPECT_EQ((u32)KBLOOM_HASH_SIPHASH, s.im.hash_scheme);
	/* 64 random bits are all zero with probability 2^-64. */
	EXPECT_TRUE(s.im.seed_hi[0] || s.im.seed_hi[1]) {
		TH_LOG("a SipHash filter exported seed_hi {0, 0}");
	}
	/* The import is the same filter (image_fields.reimport): mergeable. */
	ASSERT_EQ(0, kb_import(g_fd, &s.im, IMG_NEW, 0));
	EXPECT_EQ(0, kb_merge(g_fd, KBLOOM_IOC_MERGE, IMG_SIP2, IMG_NEW, NULL));
	ASSERT_EQ(0, kb_destroy(g_fd, IMG_NEW));

	/* seed_hi is key material: another seed_hi, other positions. */
	im = s.im;
	im.seed_hi[0] ^= 1;
	ASSERT_EQ(0, kb_import(g_fd, &im, IMG_NEW, 0));
	EXPECT_EQ(0L, ks_hits(_metadata, IMG_NEW, &ks, 0, 1000)) {
		TH_LOG("seed_hi does not change the positions");
	}
	img_free(&s);
	keyset_free(&ks);
}
