// SPDX-License-Identifier: GPL-2.0
/*
 * calc, and the sizing options create shares with it. The sizes come from
 * the module's own code (sizing.c): calc prints what create gets.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bloomctl.h"
#include "sizing.h"

/* A false-positive rate: a fraction, 0 < P < 1, at least one per billion. */
static int parse_fpr(const char *s, double *fpr, uint32_t *ppb)
{
	long long v;
	char *end;
	double d;

	/* strtod() also takes blanks, signs, hex, "inf" and "nan". */
	if (!(isdigit((unsigned char)s[0]) || s[0] == '.') ||
	    strpbrk(s, "xX"))
		goto bad;
	errno = 0;
	d = strtod(s, &end);
	if (*end || end == s || !(d > 0 && d < 1))
		goto bad;
	v = llround(d * 1e9);
	if (v < 1 || v >= KBLOOM_FPR_ONE) {
		pr_err("--fpr '%s': must be between 1e-9 and 0.999999999 (the module counts in parts per billion)",
		       s);
		return -1;
	}
	*fpr = d;
	*ppb = v;
	return 0;
bad:
	pr_err("--fpr '%s': must be a fraction between 0 and 1", s);
	return -1;
}

/* Returns 1 if c was a sizing option, 0 if not, -1 on a bad value. */
int sizing_opt(struct sizing *sz, int c, const char *arg)
{
	switch (c) {
	case OPT_CAPACITY:
		sz->have_capacity = true;
		return parse_u64("--capacity", arg, &sz->capacity) ? -1 : 1;
	case OPT_FPR:
		sz->have_fpr = true;
		return parse_fpr(arg, &sz->fpr, &sz->fpr_ppb) ? -1 : 1;
	case OPT_BITS:
		sz->have_bits = true;
		return parse_u64("--bits", arg, &sz->bits) ? -1 : 1;
	case OPT_HASHES:
		sz->have_hashes = true;
		return parse_u32("--hashes", arg, 1, KBLOOM_MAX_HASHES,
				 &sz->hashes) ? -1 : 1;
	case OPT_LAYOUT:
		if (strcmp(arg, "plain") && strcmp(arg, "blocked")) {
			pr_err("--layout '%s': must be plain or blocked", arg);
			return -1;
		}
		sz->blocked = !strcmp(arg, "blocked");
		return 1;
	default:
		return 0;
	}
}

/*
 * Either --capacity and --fpr, or --bits and --hashes (with --capacity
 * recorded, or for calc needed to compute the rate). A blocked filter
 * (@flags: its uapi flags, counting or not) has whole blocks.
 */
int check_sizing(const struct sizing *sz, bool calc, uint32_t flags)
{
	uint32_t cells = sizing_block_cells(flags);

	if (sz->have_fpr && (sz->have_bits || sz->have_hashes)) {
		pr_err("--fpr cannot be combined with --bits and --hashes");
		return -1;
	}
	if (sz->have_bits != sz->have_hashes) {
		pr_err(sz->have_bits ? "--bits needs --hashes" :
		       "--hashes needs --bits");
		return -1;
	}
	if (sz->have_bits) {
		if (calc && !sz->have_capacity) {
			pr_err("--capacity is needed to compute the false-positive rate of --bits and --hashes");
			return -1;
		}
		if (calc && sz->bits == 0) {
			pr_err("--bits '0': must be at least 1");
			return -1;
		}
		if (!calc && (sz->bits < KBLOOM_MIN_BITS ||
			      sz->bits > KBLOOM_MAX_BITS)) {
			pr_err("--bits '%" PRIu64 "': must be between %llu and %llu",
			       sz->bits, KBLOOM_MIN_BITS, KBLOOM_MAX_BITS);
			return -1;
		}
		if (sz->blocked && sz->bits % cells) {
			pr_err("--bits '%" PRIu64 "': a blocked %sfilter has whole 64-byte blocks of %" PRIu32 " %s: try %" PRIu64,
			       sz->bits,
			       flags & KBLOOM_CREATE_COUNTING ? "counting " : "",
			       cells,
			       flags & KBLOOM_CREATE_COUNTING ? "counters" : "bits",
			       (sz->bits / cells + 1) * cells);
			return -1;
		}
	} else {
		if (!sz->have_capacity && !sz->have_fpr) {
			pr_err("give --capacity N --fpr P, or --bits M --hashes K");
			return -1;
		}
		if (!sz->have_fpr) {
			pr_err("--capacity needs --fpr (or --bits and --hashes)");
			return -1;
		}
		if (!sz->have_capacity) {
			pr_err("--fpr needs --capacity");
			return -1;
		}
	}
	if (sz->have_capacity && sz->capacity == 0 &&
	    (calc || sz->have_fpr)) {
		pr_err("--capacity '0': must be at least 1");
		return -1;
	}
	return 0;
}

/*
 * Sizing for n keys at fpr_ppb / 1e9 (the rate the module sees, not the
 * one typed), of the layout and kind in @flags: the module's own result,
 * from its own code, when it would accept the filter; else, for the plain
 * layout, the same formulas in double precision, for information only
 * (calc of a filter larger than the module allows).
 */
int size_filter(uint64_t n, uint32_t fpr_ppb, uint32_t flags, uint64_t *bits,
		uint32_t *hashes)
{
	double m;
	long k;

	if (!sizing_size(n, fpr_ppb, flags, bits, hashes))
		return 0;
	if (flags & KBLOOM_CREATE_BLOCKED) {
		pr_err("--capacity '%" PRIu64 "': a blocked filter for it needs more than %llu bits",
		       n, KBLOOM_MAX_BITS);
		return -1;
	}
	m = ceil(-(double)n * log(fpr_ppb / 1e9) / (M_LN2 * M_LN2));
	/* Far beyond any filter, but keep the conversion defined. */
	if (!(m < 0x1p63)) {
		pr_err("--capacity '%" PRIu64 "': needs more than 2^63 bits", n);
		return -1;
	}
	*bits = m;
	k = lround(m / (double)n * M_LN2);
	if (k < 1)
		k = 1;
	if (k > KBLOOM_MAX_HASHES)
		k = KBLOOM_MAX_HASHES;
	*hashes = k;
	return 0;
}

/*
 * Theoretical false-positive rate with n keys: (1 - e^(-kn/m))^k. In
 * floating point: the module never reports it, and its own fixed-point
 * kbloom_fpr_q32() resolves only 2^-32, too coarse to print a rate of
 * 10^-9 to three digits.
 */
static double theoretical_fpr(uint64_t m, uint32_t k, uint64_t n)
{
	return pow(-expm1(-(double)k * (double)n / (double)m), k);
}

struct calc_opts {
	struct sizing sz;
	uint32_t generations;	/* --generations; 0: a plain filter */
	bool counting;		/* --counting: 4-bit counters */
	uint64_t plain_bits;	/* blocked: what the plain layout needs */
};

static int calc_opt(void *ctx, int c, const char *arg)
{
	struct calc_opts *o = ctx;

	if (c == OPT_GENERATIONS)
		return parse_u32("--generations", arg, 2,
				 KBLOOM_MAX_GENERATIONS, &o->generations);
	if (c == OPT_COUNTING) {
		o->counting = true;
		return 0;
	}
	return sizing_opt(&o->sz, c, arg) > 0 ? 0 : -1;
}

/* Bytes of G generations; UINT64_MAX if that cannot be counted. */
static uint64_t total_bytes(uint64_t bytes, uint32_t g)
{
	if (bytes == UINT64_MAX || bytes > UINT64_MAX / g)
		return UINT64_MAX;
	return bytes * g;
}

static void calc_json(const struct calc_opts *o, const struct sizing *sz,
		      uint64_t bytes, double bpk, double fpr)
{
	uint32_t g = o->generations;
	uint64_t total = total_bytes(bytes, g ? g : 1);

	jw_start_object(jw);
	if (g)
		jw_kv_u64(jw, "generations", g);
	jw_kv_u64(jw, "capacity", sz->capacity);
	if (sz->have_fpr)
		jw_kv_double(jw, "fpr_target", sz->fpr_ppb / 1e9);
	else
		jw_kv_null(jw, "fpr_target");
	jw_kv_string(jw, "layout", sz->blocked ? "blocked" : "plain");
	jw_kv_u64(jw, "bits", sz->bits);
	jw_kv_u64(jw, "hashes", sz->hashes);
	if (o->plain_bits)
		jw_kv_u64(jw, "plain_bits", o->plain_bits);
	if (bytes == UINT64_MAX)
		jw_kv_null(jw, "bytes");
	else
		jw_kv_u64(jw, "bytes", bytes);
	if (g && total == UINT64_MAX)
		jw_kv_null(jw, "total_bytes");
	else if (g)
		jw_kv_u64(jw, "total_bytes", total);
	jw_kv_double(jw, "bits_per_key", bpk);
	jw_kv_double(jw, "fpr", fpr);
	jw_end_object(jw);
}

static void calc_text(const struct calc_opts *o, const struct sizing *sz,
		      uint64_t bytes, double bpk, double fpr)
{
	uint32_t g = o->generations;
	uint64_t total = total_bytes(bytes, g ? g : 1);

	printf("capacity:        %" PRIu64 " keys%s\n", sz->capacity,
	       g ? " per window" : "");
	if (sz->have_fpr)
		printf("target fpr:      %.9g (%.7g%%)\n", sz->fpr_ppb / 1e9,
		       sz->fpr_ppb / 1e7);
	if (g) {
		printf("generations:     %" PRIu32 " (bits, hashes and bytes are per generation)\n",
		       g);
		if (sz->have_fpr)
			printf("generation fpr:  %.9g\n",
			       sizing_window_fpr(sz->fpr_ppb, g) / 1e9);
	}
	if (sz->blocked)
		printf("layout:          blocked (a key's positions in one 64-byte block)\n");
	printf("bits:            %" PRIu64 "\n", sz->bits);
	if (o->plain_bits)
		printf("plain layout:    %" PRIu64 " bits (blocked takes %+.2f%%)\n",
		       o->plain_bits,
		       100.0 * ((double)sz->bits / o->plain_bits - 1));
	printf("hashes:          %" PRIu32 "\n", sz->hashes);
	if (bytes == UINT64_MAX)
		printf("bytes:           - (more than this %zu-bit bloomctl can count)\n",
		       sizeof(size_t) * 8);
	else
		printf("bytes:           %" PRIu64 "\n", bytes);
	printf("bits per key:    %.4f\n", bpk);
	if (g) {
		if (total == UINT64_MAX)
			printf("total bytes:     -\n");
		else
			printf("total bytes:     %" PRIu64 "\n", total);
	}
	printf("fpr at capacity: %.3g (%.3g%%)\n", fpr, fpr * 100);
}

/* No device: the module's arithmetic is built in. */
int cmd_calc(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		SIZING_LONGOPTS,
		{ "generations", required_argument, NULL, OPT_GENERATIONS },
		{ "counting",	no_argument,	   NULL, OPT_COUNTING },
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	struct calc_opts o = { .generations = 0 };
	uint32_t flags, ppb, plain_hashes;
	struct sizing sz;
	double fpr, bpk;
	uint64_t bytes;
	int ret;

	ret = parse_options(cmd, argc, argv, longopts, calc_opt, &o);
	if (ret >= 0)
		return ret;
	sz = o.sz;
	flags = (sz.blocked ? KBLOOM_CREATE_BLOCKED : 0) |
		(o.counting ? KBLOOM_CREATE_COUNTING : 0);
	if (no_args(cmd, argc, argv) || check_sizing(&sz, true, flags))
		return EXIT_ERROR;
	ppb = sizing_window_fpr(sz.fpr_ppb, o.generations);
	if (!sz.have_bits &&
	    size_filter(sz.capacity, ppb, flags, &sz.bits, &sz.hashes))
		return EXIT_ERROR;
	if (!sz.have_bits && sz.blocked &&
	    size_filter(sz.capacity, ppb, flags & ~KBLOOM_CREATE_BLOCKED,
			&o.plain_bits, &plain_hashes))
		return EXIT_ERROR;
	if (sz.bits < KBLOOM_MIN_BITS || sz.bits > KBLOOM_MAX_BITS)
		pr_warn("%" PRIu64 " bits is outside the module's range, %llu to %llu",
			sz.bits, KBLOOM_MIN_BITS, KBLOOM_MAX_BITS);

	if (sz.blocked)
		fpr = sizing_fpr_blocked(sz.bits, sz.hashes, sz.capacity,
					 flags);
	else
		fpr = theoretical_fpr(sz.bits, sz.hashes, sz.capacity);
	/* A key absent from all G generations errs if any of them does. */
	if (o.generations)
		fpr = -expm1(o.generations * log1p(-fpr));
	bpk = (double)sz.bits / (double)sz.capacity;
	bytes = sizing_bytes(sz.bits, flags);
	if (jw)
		calc_json(&o, &sz, bytes, bpk, fpr);
	else
		calc_text(&o, &sz, bytes, bpk, fpr);
	return 0;
}
