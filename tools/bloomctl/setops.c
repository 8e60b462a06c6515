// SPDX-License-Identifier: GPL-2.0
/*
 * Set operations on two compatible filters: merge (union) and estimate
 * (sizes of both, of their union and intersection).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "bloomctl.h"
#include "image.h"

#define MISMATCH_KNOWN	(KBLOOM_MISMATCH_BITS | KBLOOM_MISMATCH_HASHES | \
			 KBLOOM_MISMATCH_COUNTING | KBLOOM_MISMATCH_SEED | \
			 KBLOOM_MISMATCH_HASH_SCHEME | KBLOOM_MISMATCH_LAYOUT)

static const char *kind(const struct kbloom_info *info)
{
	return info->flags & KBLOOM_CREATE_COUNTING ? "counting" : "plain";
}

static const char *layout(const struct kbloom_info *info)
{
	return info->flags & KBLOOM_CREATE_BLOCKED ? "blocked" : "plain";
}

/* What differs, with A's and B's values when INFO gave them (@have). */
static void mismatch_text(FILE *f, uint32_t mismatch, bool have,
			  const struct kbloom_info *a,
			  const struct kbloom_info *b)
{
	const char *sep = "";

	if (mismatch & KBLOOM_MISMATCH_BITS) {
		fprintf(f, "bits differ");
		if (have)
			fprintf(f, " (%llu vs %llu)",
				(unsigned long long)a->bits,
				(unsigned long long)b->bits);
		sep = ", ";
	}
	if (mismatch & KBLOOM_MISMATCH_HASHES) {
		fprintf(f, "%shashes differ", sep);
		if (have)
			fprintf(f, " (%u vs %u)", a->hashes, b->hashes);
		sep = ", ";
	}
	if (mismatch & KBLOOM_MISMATCH_COUNTING) {
		fprintf(f, "%scounting differs", sep);
		if (have)
			fprintf(f, " (%s vs %s)", kind(a), kind(b));
		sep = ", ";
	}
	/* The seed is never reported: there is only advice. */
	if (mismatch & KBLOOM_MISMATCH_SEED) {
		fprintf(f, "%sseeds differ (create one with --like the other, or load both from images of such filters)",
			sep);
		sep = ", ";
	}
	if (mismatch & KBLOOM_MISMATCH_HASH_SCHEME) {
		fprintf(f, "%shash schemes differ", sep);
		if (have)
			fprintf(f, " (%s vs %s)",
				hash_scheme_name(a->hash_scheme),
				hash_scheme_name(b->hash_scheme));
		sep = ", ";
	}
	if (mismatch & KBLOOM_MISMATCH_LAYOUT) {
		fprintf(f, "%slayouts differ", sep);
		if (have)
			fprintf(f, " (%s vs %s)", layout(a), layout(b));
		sep = ", ";
	}
	if (mismatch & ~MISMATCH_KNOWN)
		fprintf(f, "%sother parameters differ (mismatch 0x%x)", sep,
			mismatch);
}

/*
 * Say which parameters differ when MERGE or COMPARE refused two filters,
 * with the values from KBLOOM_IOC_INFO. @what is e.g. "cannot merge 'b'
 * into 'a'".
 */
static void report_mismatch(int fd, const char *what, const char *a,
			    const char *b, uint32_t mismatch)
{
	struct kbloom_info ia, ib;
	bool have = !get_info(fd, a, &ia) && !get_info(fd, b, &ib);
	char *msg = NULL;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&msg, &len);
	if (f) {
		mismatch_text(f, mismatch, have, &ia, &ib);
		if (!fclose(f)) {
			pr_err("%s: %s", what, msg);
			free(msg);
			return;
		}
		free(msg);
	}
	pr_err("%s: incompatible filters (mismatch 0x%x)", what, mismatch);
}

/*
 * KBLOOM_IOC_MERGE or KBLOOM_IOC_COMPARE of @dst and @src into @mg, with
 * the errors reported. The module does not say which filter is missing on
 * ENOENT: INFO does.
 */
static int merge_ioctl(int fd, unsigned long request, const char *what,
		       const char *dst, const char *src,
		       struct kbloom_merge *mg)
{
	struct kbloom_info info;
	int err;

	memset(mg, 0, sizeof(*mg));
	set_name(mg->dst, dst);
	set_name(mg->src, src);
	if (!ioctl(fd, request, mg))
		return 0;
	err = errno;
	if (err == EOPNOTSUPP)
		pr_err("%s: '%s' is a windowed filter: windowed filters are not merged or compared",
		       what, !get_info(fd, dst, &info) && info.generations ?
		       dst : src);
	else if (err == EINVAL && mg->mismatch)
		report_mismatch(fd, what, dst, src, mg->mismatch);
	else if (err == ENOENT)
		pr_err("filter '%s': %s",
		       get_info(fd, dst, &info) == ENOENT ? dst : src,
		       kerr(err));
	else
		pr_err("%s: %s", what, kerr(err));
	return -1;
}

/*
 * The two filters of merge and estimate, and the device, read-write:
 * MERGE changes @a, and both cost a pass over the filters, which the
 * module allows only on a read-write fd. Returns the fd, or -1 after
 * reporting why not.
 */
static int setop_start(const struct cmd *cmd, int argc, char **argv,
		       const char **a, const char **b)
{
	if (get_two_args(cmd, argc, argv, "two filter names", a, b) ||
	    check_name(*a) || check_name(*b))
		return -1;
	return open_device(O_RDWR);
}

/* merge_ioctl(), the messages naming @x and @y as @fmt says. */
static int setop_ioctl(int fd, unsigned long request, const char *fmt,
		       const char *x, const char *y, const char *dst,
		       const char *src, struct kbloom_merge *mg)
{
	char *what;
	int ret;

	if (asprintf(&what, fmt, x, y) < 0) {
		pr_err("%s", strerror(ENOMEM));
		return -1;
	}
	ret = merge_ioctl(fd, request, what, dst, src, mg);
	free(what);
	return ret;
}

int cmd_merge(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	struct kbloom_merge mg;
	const char *dst, *src;
	int ret, fd;

	ret = parse_options(cmd, argc, argv, longopts, NULL, NULL);
	if (ret >= 0)
		return ret;
	fd = setop_start(cmd, argc, argv, &dst, &src);
	if (fd < 0)
		return EXIT_ERROR;
	ret = setop_ioctl(fd, KBLOOM_IOC_MERGE, "cannot merge '%s' into '%s'",
			  src, dst, dst, src, &mg);
	close(fd);
	if (ret)
		return EXIT_ERROR;
	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, "merged", src);
		jw_kv_string(jw, "into", dst);
		jw_end_object(jw);
	}
	return 0;
}

/* The estimates, from the bits of A, B, their union, and A's m and k. */
struct estimate {
	double a, b, uni, inter, jaccard;
};

static void estimate_compute(const struct kbloom_merge *mg,
			     const struct kbloom_info *info,
			     struct estimate *e)
{
	e->a = estimate_keys(mg->bits_dst, info->bits, info->hashes,
			     info->flags);
	e->b = estimate_keys(mg->bits_src, info->bits, info->hashes,
			     info->flags);
	e->uni = estimate_keys(mg->bits_union, info->bits, info->hashes,
			       info->flags);
	/* Inclusion-exclusion; the errors of the three can make it negative. */
	e->inter = e->a + e->b - e->uni;
	if (e->inter < 0)
		e->inter = 0;
	/* Two empty filters: the Jaccard index is undefined, 0/0. */
	e->jaccard = e->uni > 0 ? e->inter / e->uni : NAN;
}

static void estimate_json(const char *a, const char *b,
			  const struct estimate *e,
			  const struct kbloom_merge *mg)
{
	jw_start_object(jw);
	jw_kv_string(jw, "a", a);
	jw_kv_string(jw, "b", b);
	/* jw_double() writes NAN as null. */
	jw_kv_double(jw, "keys_a", e->a);
	jw_kv_double(jw, "keys_b", e->b);
	jw_kv_double(jw, "union", e->uni);
	jw_kv_double(jw, "intersection", e->inter);
	jw_kv_double(jw, "jaccard", e->jaccard);
	jw_kv_u64(jw, "bits_a", mg->bits_dst);
	jw_kv_u64(jw, "bits_b", mg->bits_src);
	jw_kv_u64(jw, "bits_union", mg->bits_union);
	jw_kv_u64(jw, "bits_inter", mg->bits_inter);
	jw_end_object(jw);
}

static void print_estimate(const char *label, double v)
{
	if (isnan(v))
		printf("%-26s saturated\n", label);
	else
		printf("%-26s %.0f\n", label, v);
}

static void print_estimate_of(const char *name, double v)
{
	char *label;

	if (asprintf(&label, "keys in '%s':", name) >= 0) {
		print_estimate(label, v);
		free(label);
	}
}

static void estimate_text(const char *a, const char *b,
			  const struct estimate *e,
			  const struct kbloom_merge *mg,
			  const struct kbloom_info *info)
{
	print_estimate_of(a, e->a);
	print_estimate_of(b, e->b);
	print_estimate("keys in the union:", e->uni);
	print_estimate("keys in the intersection:", e->inter);
	if (isnan(e->uni))
		printf("%-26s saturated\n", "jaccard:");
	else if (isnan(e->jaccard))
		printf("%-26s - (both empty)\n", "jaccard:");
	else
		printf("%-26s %.4f\n", "jaccard:", e->jaccard);
	printf("%-26s %llu, %llu, union %llu, intersection %llu, of %llu\n",
	       info->flags & KBLOOM_CREATE_COUNTING ? "counters set:" :
	       "bits set:",
	       (unsigned long long)mg->bits_dst,
	       (unsigned long long)mg->bits_src,
	       (unsigned long long)mg->bits_union,
	       (unsigned long long)mg->bits_inter,
	       (unsigned long long)info->bits);
}

int cmd_estimate(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	struct kbloom_info info;
	struct kbloom_merge mg;
	struct estimate e;
	const char *a, *b;
	int ret, fd;

	ret = parse_options(cmd, argc, argv, longopts, NULL, NULL);
	if (ret >= 0)
		return ret;
	fd = setop_start(cmd, argc, argv, &a, &b);
	if (fd < 0)
		return EXIT_ERROR;
	ret = setop_ioctl(fd, KBLOOM_IOC_COMPARE,
			  "cannot compare '%s' with '%s'", a, b, a, b, &mg);
	/* Compatible filters share m and k: A's are B's. */
	if (!ret) {
		ret = get_info(fd, a, &info);
		if (ret)
			pr_err("filter '%s': %s", a, kerr(ret));
	}
	close(fd);
	if (ret)
		return EXIT_ERROR;
	estimate_compute(&mg, &info, &e);
	if (jw)
		estimate_json(a, b, &e, &mg);
	else
		estimate_text(a, b, &e, &mg, &info);
	return 0;
}
