// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "badioctl": unknown commands, bad pointers,
 * reserved fields and flags, and that a rejected call changed nothing.
 * Included by kbloom_selftest.c.
 */

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
/* Both words of a reserved[2]; with reserved0 before them too. */
#define RSV_2(c, s)	RSV_I(c, s, reserved, 0), RSV_I(c, s, reserved, 1)
#define RSV_3(c, s)	RSV(c, s, reserved0), RSV_2(c, s)

static const struct rsv_case rsv_cases[] = {
	/*
	 * CREATE's reserved0 is hash_scheme now (create_flags_and_schemes);
	 * @like must be all zero without KBLOOM_CREATE_LIKE.
	 */
	RSV_B(CREATE, kbloom_create, like, 0),
	RSV_B(CREATE, kbloom_create, like, 31),
	RSV_2(DESTROY, kbloom_name),
	RSV_2(CLEAR, kbloom_name),
	/* INFO's outputs that were reserved must be 0 on input. */
	RSV(INFO, kbloom_info, window_ms),
	RSV(INFO, kbloom_info, generations),
	RSV(INFO, kbloom_info, rotations),
	RSV(INFO, kbloom_info, newest_age_ms),
	RSV(LIST, kbloom_list, reserved),
	RSV(OPEN, kbloom_open, flags), RSV_2(OPEN, kbloom_open),
	RSV_2(ADD, kbloom_key),
	RSV_2(QUERY, kbloom_key),
	RSV_2(TEST_AND_ADD, kbloom_key),
	RSV_3(ADD_BATCH, kbloom_batch),
	RSV_3(QUERY_BATCH, kbloom_batch),
	RSV_3(TEST_AND_ADD_BATCH, kbloom_batch),
	RSV_2(REMOVE, kbloom_key),
	RSV_3(REMOVE_BATCH, kbloom_batch),
	RSV_3(MERGE, kbloom_merge),
	RSV_3(COMPARE, kbloom_merge),
	/* EXPORT: import_flags must be 0 like a reserved field. */
	RSV(EXPORT, kbloom_image, import_flags),
	RSV(EXPORT, kbloom_image, age_ms),
	/* EXPORT's other outputs must be 0 on input too. */
	RSV(EXPORT, kbloom_image, seed_hi),
	RSV(EXPORT, kbloom_image, generations),
	RSV(EXPORT, kbloom_image, window_ms),
};

/*
 * (Re)create the badioctl filter with its sentinel key, its LIKE twin
 * BAD_SRC, the counting BAD_CNT, and an export of BAD_F in bad_image.
 */
static bool bad_setup(struct __test_metadata *_metadata)
{
	int err;

	cleanup(_metadata, BAD_SRC);
	cleanup(_metadata, BAD_CNT);
	err = kb_create(g_fd, BAD_F, BAD_BITS, 7, 0, 0, NULL);
	if (!EXPECT_OK(err, "badioctl: create %s", BAD_F))
		return false;
	err = kb_skey(g_fd, KBLOOM_IOC_ADD, BAD_F, BAD_SENTINEL, NULL);
	if (!EXPECT_OK(err, "badioctl: add the sentinel key"))
		return false;
	err = kb_create_ex(g_fd, BAD_SRC, 0, 0, KBLOOM_CREATE_LIKE, BAD_F,
			   NULL);
	if (!EXPECT_OK(err, "badioctl: create %s like %s", BAD_SRC, BAD_F))
		return false;
	err = kb_create_ex(g_fd, BAD_CNT, BAD_BITS, 4, KBLOOM_CREATE_COUNTING,
			   NULL, NULL);
	if (!EXPECT_OK(err, "badioctl: create counting %s", BAD_CNT))
		return false;
	err = kb_export(g_fd, BAD_F, bad_payload, sizeof(bad_payload),
			&bad_image);
	if (!EXPECT_OK(err, "badioctl: EXPORT %s", BAD_F))
		return false;
	return EXPECT_U64(bad_image.payload_len, sizeof(bad_payload),
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
	case KBLOOM_IOC_OPEN:
		set_name(((struct kbloom_open *)buf)->name, BAD_F);
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

/*
 * Every case starts with BAD_F (holding the sentinel key), its LIKE twin
 * BAD_SRC, the counting BAD_CNT and an export of BAD_F in bad_image; no
 * BAD_NEW, which a wrongly accepted CREATE or IMPORT would make.
 */
FIXTURE(badioctl) {
};

FIXTURE_SETUP(badioctl)
{
	st_open(_metadata);
	cleanup(_metadata, BAD_F);
	cleanup(_metadata, BAD_NEW);
	ASSERT_TRUE(bad_setup(_metadata));
}

FIXTURE_TEARDOWN(badioctl)
{
	cleanup(_metadata, BAD_F);
	cleanup(_metadata, BAD_NEW);
	cleanup(_metadata, BAD_SRC);
	cleanup(_metadata, BAD_CNT);
	st_close();
}

TEST_F(badioctl, unknown_commands)
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
	size_t i;

	for (i = 0; i < ARRAY_SIZE(unknown); i++) {
		memset(argbuf, 0, sizeof(argbuf));
		EXPECT_ERRNO(ioc(g_fd, unknown[i].cmd, argbuf), ENOTTY,
			     "badioctl: unknown command %s", unknown[i].what);
	}
}

TEST_F(badioctl, null_and_unmapped_arguments)
{
	void *hole;
	size_t i;
	int err;
	u32 res;

	for (i = 0; i < ARRAY_SIZE(all_cmds); i++) {
		err = ioc(g_fd, all_cmds[i].cmd, NULL);
		EXPECT_ERRNO(err, EFAULT, "badioctl: %s with a NULL argument",
			     all_cmds[i].name);
	}
	hole = unmapped_page(_metadata);
	if (hole) {
		for (i = 0; i < ARRAY_SIZE(all_cmds); i++) {
			EXPECT_ERRNO(ioc(g_fd, all_cmds[i].cmd, hole), EFAULT,
				     "badioctl: %s with an unmapped argument",
				     all_cmds[i].name);
		}
	}
	/* Nothing above may have destroyed or cleared the filter. */
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, BAD_F, BAD_SENTINEL, &res);
	EXPECT_COND(err == 0 && res == 1, "sentinel lost",
		    "badioctl: filter intact after the EFAULT calls");
}

/*
 * The blocked layout: whole blocks of 512 bits (128 counters), the flag
 * reported back and by INFO, and sizing that gives whole blocks.
 */
TEST_F(badioctl, create_blocked)
{
	struct kbloom_create c;
	struct kbloom_info info;

	ASSERT_EQ(0, kb_create_ex(g_fd, BAD_NEW, 1024, 3,
				  KBLOOM_CREATE_BLOCKED, NULL, &c));
	EXPECT_EQ(KBLOOM_CREATE_BLOCKED, c.flags);
	ASSERT_EQ(0, kb_info(g_fd, BAD_NEW, &info));
	EXPECT_EQ(KBLOOM_CREATE_BLOCKED, info.flags);
	cleanup(_metadata, BAD_NEW);

	ASSERT_EQ(0, kb_create_ex(g_fd, BAD_NEW, 384, 3,
				  KBLOOM_CREATE_BLOCKED |
				  KBLOOM_CREATE_COUNTING, NULL, NULL));
	cleanup(_metadata, BAD_NEW);

	ASSERT_EQ(0, kb_create_all(g_fd, BAD_NEW, 0, 0, 100000, 10000000,
				   KBLOOM_CREATE_BLOCKED, NULL, 0, &c));
	EXPECT_EQ(0ULL, c.bits % 512);
	EXPECT_EQ(6U, c.hashes);
	cleanup(_metadata, BAD_NEW);
}

/* Each reserved field in turn, in an otherwise valid call. */
TEST_F(badioctl, reserved_fields)
{
	u64 argbuf[512];	/* zeroed, big enough for any struct */
	unsigned char results[8];
	u32 lens[1];
	char key[32];
	size_t i;
	int err;

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
			EXPECT_OK(kb_skey(g_fd, KBLOOM_IOC_ADD, BAD_CNT, key,
					  NULL),
				  "badioctl: add %s to %s", key, BAD_CNT);
		if (rc->cmd == KBLOOM_IOC_MERGE)
			EXPECT_OK(kb_skey(g_fd, KBLOOM_IOC_ADD, BAD_SRC, key,
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
		EXPECT_ERRNO(err, EINVAL, "badioctl: %s with non-zero %s",
			     rc->cmd_name, rc->field);

		/*
		 * A rejected call must have had no effect: the filter still
		 * exists with its sentinel, the key was not added and no
		 * new filter appeared.
		 */
		e1 = kb_skey(g_fd, KBLOOM_IOC_QUERY, BAD_F, BAD_SENTINEL,
			     &sres);
		e2 = kb_skey(g_fd, KBLOOM_IOC_QUERY, BAD_F, key, &kres);
		EXPECT_COND(e1 == 0 && sres == 1 && e2 == 0 && kres == 0 &&
			    kb_info(g_fd, BAD_NEW, &info) == ENOENT,
			    "the rejected call changed state",
			    "badioctl: rejected %s %s had no effect",
			    rc->cmd_name, rc->field);
		if (rc->cmd == KBLOOM_IOC_REMOVE ||
		    rc->cmd == KBLOOM_IOC_REMOVE_BATCH) {
			int e3 = kb_skey(g_fd, KBLOOM_IOC_QUERY, BAD_CNT, key,
					 &kres);

			EXPECT_COND(e3 == 0 && kres == 1, "the key was removed",
				    "badioctl: rejected %s %s removed nothing",
				    rc->cmd_name, rc->field);
		}
		if (e1 == ENOENT || (e1 == 0 && sres != 1)) {
			cleanup(_metadata, BAD_F);
			if (!bad_setup(_metadata))
				return;
		}
		cleanup(_metadata, BAD_NEW);
	}
}

/* The single-key commands; REMOVE (last) goes to BAD_CNT, others to BAD_F. */
static const unsigned long key_cmds[] = {
	KBLOOM_IOC_ADD, KBLOOM_IOC_QUERY, KBLOOM_IOC_TEST_AND_ADD,
	KBLOOM_IOC_REMOVE,
};

/*
 * NULL and unmapped pointers inside the arguments of every key command
 * (REMOVE on BAD_CNT, the others on BAD_F), of EXPORT, and of LIST with
 * room for a name (filters exist).
 */
TEST_F(badioctl, pointers_in_arguments)
{
	static const unsigned long batch_cmds[] = {
		KBLOOM_IOC_ADD_BATCH, KBLOOM_IOC_QUERY_BATCH,
		KBLOOM_IOC_TEST_AND_ADD_BATCH, KBLOOM_IOC_REMOVE_BATCH,
	};
	void *hole = unmapped_page(_metadata);
	unsigned char *bufs[2] = { NULL, hole };
	const char *how[2] = { "NULL", "unmapped" };
	unsigned char results[8];
	struct kbloom_image im;
	struct kbloom_list l;
	const char *f, *kn, *bn;
	u32 lens[1] = { 6 };
	long before;
	size_t i, j;
	int err;

	for (j = 0; j < 2; j++) {
		if (j == 1 && !hole)
			break;
		err = kb_skey(g_fd, KBLOOM_IOC_ADD, BAD_CNT, "ptrkey",
			      NULL);
		EXPECT_OK(err, "badioctl: add ptrkey to %s", BAD_CNT);
		if (j == 1)
			kb_skey(g_fd, KBLOOM_IOC_ADD, BAD_CNT, "reskey", NULL);
		for (i = 0; i < ARRAY_SIZE(key_cmds); i++) {
			f = i == ARRAY_SIZE(key_cmds) - 1 ? BAD_CNT : BAD_F;
			kn = cmd_name(key_cmds[i]);
			bn = cmd_name(batch_cmds[i]);
			EXPECT_ERRNO(kb_key(g_fd, key_cmds[i], f, bufs[j], 6,
					    NULL),
				     EFAULT, "badioctl: %s key %s", kn, how[j]);
			EXPECT_ERRNO(kb_batch(g_fd, batch_cmds[i], f, bufs[j],
					      lens, results, 6, 1, NULL),
				     EFAULT, "badioctl: %s keys %s", bn, how[j]);
			EXPECT_ERRNO(kb_batch(g_fd, batch_cmds[i], f, "ptrkey",
					      (u32 *)bufs[j], results, 6, 1,
					      NULL),
				     EFAULT, "badioctl: %s lens %s", bn, how[j]);
			/*
			 * results NULL is legal, so only unmapped. Whether
			 * the key went before the result failed to copy is
			 * not specified: a key of its own, no check of it.
			 */
			if (j == 1)
				EXPECT_ERRNO(kb_batch(g_fd, batch_cmds[i], f,
						      "reskey", lens, hole, 6,
						      1, NULL),
					     EFAULT,
					     "badioctl: %s results unmapped",
					     bn);
		}
		EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, BAD_CNT, "ptrkey", 1,
			    "badioctl: faulting REMOVE calls kept the key (%s)",
			    how[j]);
		EXPECT_ERRNO(kb_export(g_fd, BAD_F, bufs[j],
				       sizeof(bad_payload), &im),
			     EFAULT, "badioctl: EXPORT payload %s", how[j]);
		l = (struct kbloom_list){ .names = PTR(bufs[j]), .count = 1 };
		EXPECT_ERRNO(ioc(g_fd, KBLOOM_IOC_LIST, &l), EFAULT,
			     "badioctl: LIST names %s", how[j]);
		/* IMPORT's payload NULL or unmapped: image_made.bad_inputs. */
	}

	/* Unknown commands and bad pointers created nothing. */
	before = count_filters(_metadata);
	EXPECT_COND(before >= 1, "LIST failed or lost " BAD_F,
		    "badioctl: LIST still counts the test filter");
}

/* Key lengths 0 and KEY_MAX + 1: EINVAL from every single-key command. */
TEST_F(badioctl, key_lengths)
{
	static const u32 lens[] = { 0, KBLOOM_KEY_MAX + 1 };
	unsigned char *big = calloc(1, KBLOOM_KEY_MAX + 1);
	const char *f;
	size_t i, j;

	ASSERT_TRUE(big != NULL);
	for (i = 0; i < ARRAY_SIZE(key_cmds); i++) {
		f = i == ARRAY_SIZE(key_cmds) - 1 ? BAD_CNT : BAD_F;
		for (j = 0; j < ARRAY_SIZE(lens); j++)
			EXPECT_ERRNO(kb_key(g_fd, key_cmds[i], f, big, lens[j],
					    NULL),
				     EINVAL, "badioctl: %s len %u",
				     cmd_name(key_cmds[i]), lens[j]);
	}
	free(big);
}
