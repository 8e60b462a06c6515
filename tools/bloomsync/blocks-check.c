// SPDX-License-Identifier: GPL-2.0
/*
 * blocks-check: KBLOOM_IOC_COLLECT and KBLOOM_IOC_APPLY as the uapi
 * describes them ("Changes as blocks" in include/uapi/linux/kbloom.h),
 * checked on a device: marks, the cursor, the first COLLECT of a filter
 * that did not track, KBLOOM_COLLECT_ALL, and APPLY's checks (-EXDEV,
 * -ESTALE, -EINVAL for every bad entry before anything changes, -E2BIG,
 * -ENOSPC with @max_set, -EOPNOTSUPP on counting filters). bloomsync
 * relies on all of it. test-native.sh runs it on the fake device; it runs
 * as well on /dev/bloom with the module (as root): it makes filters named
 * bchk-* and destroys them.
 *
 * Usage: blocks-check DEVICE
 * Prints "ok N - ..." or "not ok N - ..." per check, then "P passed, F failed".
 */
#include "../include/kbloom_util.h"

#define BITS	1000	/* two blocks, the second with padding past m */

static int fd, n, failed;

static void check(int ok, const char *what)
{
	n++;
	failed += !ok;
	printf("%sok %d - %s\n", ok ? "" : "not ", n, what);
}

static int create(const char *name, uint32_t flags, const char *like)
{
	if (like)
		return kb_create_like(fd, name, like, flags, 0, NULL);
	return kb_create_ex(fd, name, BITS, 3, flags, NULL, NULL);
}

static uint64_t bits_set(const char *name)
{
	struct kbloom_info i;

	return kb_info(fd, name, &i) ? (uint64_t)-1 : i.bits_set;
}

/* The filters this makes, destroyed before and after. */
static void destroy_all(void)
{
	static const char *const names[] = {
		"bchk-a", "bchk-b", "bchk-c", "bchk-n", "bchk-w"
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		destroy_quiet(fd, names[i]);
}

/* A whole pass, one block a call: the blocks, or -1 on an error. */
static int pass(const char *name, uint32_t flags, struct kbloom_block *b,
		int room, uint64_t *fp)
{
	struct kbloom_blocks r;
	uint64_t cursor = 0;
	int got = 0;

	do {
		if (got >= room ||
		    kb_collect(fd, name, b + got, 1, flags, cursor, &r) ||
		    r.done > 1)
			return -1;
		got += r.done;
		cursor = r.cursor;
		if (fp)
			*fp = r.fingerprint;
	} while (cursor);
	return got;
}

static int apply(const char *name, struct kbloom_block *b, uint32_t count,
		 uint64_t rotations, uint64_t fp, uint64_t max_set,
		 uint64_t *set)
{
	struct kbloom_blocks a;
	int err = kb_apply(fd, name, b, count, fp, rotations, max_set, &a);

	if (!err && set)
		*set = a.set;
	return err;
}

/* @bad, two good blocks with one bad field, refused; then @good again. */
static void bad_entry(struct kbloom_block *bad, const struct kbloom_block *good,
		      uint64_t fp, const char *what)
{
	check(apply("bchk-b", bad, 2, 0, fp, 0, NULL) == EINVAL, what);
	memcpy(bad, good, 2 * sizeof(*bad));
}

int main(int argc, char **argv)
{
	static struct kbloom_block b[8], bad[2], big[KBLOOM_BLOCKS_MAX + 1];
	struct kbloom_version v;
	struct kbloom_blocks r;
	struct kbloom_merge m;
	uint64_t fp = 0, set = 0, before;
	int got, i, err;
	char key[16];

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, KBLOOM_IOC_VERSION, &v)) {
		perror(argv[1]);
		return 2;
	}
	check(v.features & KBLOOM_FEATURE_CHANGES, "KBLOOM_FEATURE_CHANGES");
	destroy_all();

	check(!create("bchk-a", KBLOOM_CREATE_TRACK_CHANGES, NULL),
	      "CREATE with KBLOOM_CREATE_TRACK_CHANGES");
	check(!kb_collect(fd, "bchk-a", b, 8, 0, 0, &r) && !r.done &&
	      !r.cursor && r.fingerprint, "COLLECT of an empty filter: nothing, cursor 0, a fingerprint");
	for (i = 0; i < 60; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		kb_skey(fd, KBLOOM_IOC_ADD, "bchk-a", key, NULL);
	}
	got = pass("bchk-a", 0, b, 8, &fp);
	check(got == 2 && b[0].index == 0 && b[1].index == 1 &&
	      !b[0].generation, "a pass one block a call: both changed blocks, in order, cursor to 0");
	check(pass("bchk-a", 0, b + 2, 6, NULL) == 0,
	      "the next pass: nothing (the marks were cleared)");
	/* m = 1000: bits 1000 to 1023 are bytes 61 to 63 of block 1. */
	check(!b[1].data[61] && !b[1].data[62] && !b[1].data[63],
	      "bits past m are zero in the last block");
	kb_skey(fd, KBLOOM_IOC_ADD, "bchk-a", "one more", NULL);
	got = pass("bchk-a", 0, b + 2, 6, NULL);
	check(got >= 0 && got <= 2, "after one add: at most the blocks it changed");
	got = pass("bchk-a", KBLOOM_COLLECT_ALL, b, 8, NULL);
	check(got == 2, "KBLOOM_COLLECT_ALL: every non-zero block");

	check(!create("bchk-b", KBLOOM_CREATE_TRACK_CHANGES, "bchk-a"),
	      "a filter LIKE it, tracking");
	check(apply("bchk-b", b, 2, 0, fp ^ 1, 0, NULL) == EXDEV,
	      "APPLY with another fingerprint: -EXDEV");
	check(apply("bchk-b", b, 2, 7, fp, 0, NULL) == ESTALE,
	      "APPLY with rotations a plain filter never had: -ESTALE");
	memcpy(bad, b, sizeof(bad));
	bad[1].index = 2;
	bad_entry(bad, b, fp, "an index past the filter: -EINVAL");
	bad[1].data[61] |= 0x01;	/* bit 1000 */
	bad_entry(bad, b, fp, "a bit past m: -EINVAL");
	bad[1].reserved = 1;
	bad_entry(bad, b, fp, "a reserved field: -EINVAL");
	bad[1].generation = 1;
	bad_entry(bad, b, fp, "a generation a plain filter has not: -EINVAL");
	check(bits_set("bchk-b") == 0,
	      "the refused calls changed nothing, good entries before the bad one included");
	check(apply("bchk-b", b, 0, 0, fp, 0, NULL) == EINVAL,
	      "count 0: -EINVAL");
	memcpy(big, b, sizeof(b[0]));
	for (i = 1; i <= KBLOOM_BLOCKS_MAX; i++)
		big[i] = b[0];
	check(apply("bchk-b", big, KBLOOM_BLOCKS_MAX + 1, 0, fp, 0, NULL) ==
	      E2BIG, "count over KBLOOM_BLOCKS_MAX: -E2BIG");
	check(apply("bchk-b", b, 2, 0, fp, 1, NULL) == ENOSPC &&
	      bits_set("bchk-b") == 0,
	      "max_set below what the blocks set: -ENOSPC, nothing applied");
	before = bits_set("bchk-a");
	err = apply("bchk-b", b, 2, 0, fp, before, &set);
	check(!err && set == before && bits_set("bchk-b") == before,
	      "APPLY: sets exactly the source's bits (max_set at the limit)");
	check(!kb_merge(fd, KBLOOM_IOC_COMPARE, "bchk-a", "bchk-b", &m) &&
	      m.bits_union == m.bits_dst && m.bits_inter == m.bits_src &&
	      m.bits_dst == m.bits_src, "COMPARE: the two filters are equal");
	check(!apply("bchk-b", b, 2, 0, fp, 0, &set) && set == 0,
	      "APPLY again: idempotent, nothing set");
	check(pass("bchk-b", 0, b + 2, 6, NULL) == 2,
	      "APPLY marks the blocks it changed in a tracking target");

	check(!create("bchk-n", 0, "bchk-a"), "a filter LIKE it, not tracking");
	check(!apply("bchk-n", b, 2, 0, fp, 0, NULL), "APPLY into it");
	check(pass("bchk-n", 0, b + 2, 6, NULL) == 2,
	      "its first COLLECT reports every non-zero block");
	check(pass("bchk-n", 0, b + 2, 6, NULL) == 0,
	      "and then it tracks: nothing new");

	check(!create("bchk-c", KBLOOM_CREATE_COUNTING, NULL),
	      "a counting filter");
	check(kb_collect(fd, "bchk-c", b, 8, 0, 0, &r) == EOPNOTSUPP,
	      "COLLECT on a counting filter: -EOPNOTSUPP");
	check(kb_collect(fd, "bchk-a", b, 8, 4, 0, &r) == EINVAL,
	      "COLLECT with an unknown flag: -EINVAL");

	/* A windowed filter rotated by hand: generations and rotations. */
	{
		struct kbloom_create c;

		memset(&c, 0, sizeof(c));
		set_name(c.name, "bchk-w");
		c.bits = BITS;
		c.hashes = 3;
		c.generations = 2;
		c.flags = KBLOOM_CREATE_TRACK_CHANGES;
		check(!ioctl(fd, KBLOOM_IOC_CREATE, &c),
		      "a windowed filter of 2 generations, tracking");
		kb_skey(fd, KBLOOM_IOC_ADD, "bchk-w", "w1", NULL);
		got = pass("bchk-w", 0, b, 8, &fp);
		check(got >= 1 && !b[0].generation,
		      "its changes are in generation 0");
		check(!kb_name_cmd(fd, KBLOOM_IOC_ROTATE, "bchk-w"), "ROTATE");
		check(apply("bchk-w", b, got, 0, fp, 0, NULL) == ESTALE,
		      "APPLY relative to the rotations before: -ESTALE");
		for (i = 0; i < got; i++)
			b[i].generation = 1;
		check(!apply("bchk-w", b, got, 1, fp, 0, &set) && set == 0,
		      "mapped again (now generation 1): applies, nothing new");
		check(!kb_collect(fd, "bchk-w", b, 8, 0, 0, &r) &&
		      r.rotations == 1,
		      "COLLECT reports the rotations");
	}
	destroy_all();
	printf("1..%d\n%d passed, %d failed\n", n, n - failed, failed);
	return failed ? 1 : 0;
}
