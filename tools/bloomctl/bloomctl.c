// SPDX-License-Identifier: GPL-2.0
/*
 * bloomctl - manage the named Bloom filters of the kbloom module through the
 * ioctls of /dev/bloom (include/uapi/linux/kbloom.h).
 *
 * Usage: bloomctl [-j|-p] [-d DEVICE] SUBCOMMAND [ARGS...]; see bloomctl(8).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
/* const next_in: the payloads deflated are never written to. */
#define ZLIB_CONST
#include <zlib.h>

#include <linux/kbloom.h>

#include "json.h"

#ifndef BLOOMCTL_VERSION
#define BLOOMCTL_VERSION	"1.0"
#endif

#define DEFAULT_DEVICE		"/dev/bloom"

/* Exit status, as grep(1): 1 is a negative answer, not an error. */
#define EXIT_NEGATIVE		1
#define EXIT_ERROR		2

/* Default batch: large enough to amortise the ioctl, small enough to stream. */
#define DEFAULT_BATCH_KEYS	65536U
#define DEFAULT_BATCH_BYTES	(4U << 20)

/* Input is read in big chunks; a line may hold a hex key and a '\r'. */
#define READ_BUF_SIZE		(1U << 20)
#define LINE_MAX_BYTES		(2 * KBLOOM_KEY_MAX + 1)

static const char *device_path = DEFAULT_DEVICE;
static bool pretty_output;
static struct jw json_writer;
/* Non-NULL in JSON mode (-j or -p). */
static struct jw *jw;

static void enable_json(bool pretty)
{
	pretty_output |= pretty;
	jw_init(&json_writer, stdout, pretty_output);
	jw = &json_writer;
}

/*
 * Report an error on stderr and, in JSON mode, as {"error":...} on stdout,
 * so that a script reading either stream sees it.
 */
static void __attribute__((format(printf, 1, 2))) pr_err(const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int ret;

	va_start(ap, fmt);
	ret = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (ret < 0) {
		fputs("bloomctl: out of memory\n", stderr);
		if (jw)
			jw_error(jw, "out of memory");
		return;
	}
	fprintf(stderr, "bloomctl: %s\n", msg);
	if (jw)
		jw_error(jw, msg);
	free(msg);
}

static void __attribute__((format(printf, 1, 2))) pr_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("bloomctl: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	putc('\n', stderr);
}

/* Text for an errno returned by the module, friendlier than strerror(). */
static const char *kerr(int err)
{
	switch (err) {
	case EEXIST:
		return "already exists";
	case ENOENT:
		return "no such filter";
	case EPERM:
		return "permission denied (need CAP_SYS_ADMIN)";
	case ENOSPC:
		return "memory budget of the module exceeded";
	case EFBIG:
		return "larger than the module's per-filter limit";
	case EBADF:
		return "device not open for writing";
	case ENOTTY:
		return "not a kbloom device, or the module lacks this command";
	default:
		return strerror(err);
	}
}

static int open_device(int flags)
{
	int fd = open(device_path, flags | O_CLOEXEC);

	if (fd < 0) {
		int err = errno;

		pr_err("%s: %s%s", device_path, strerror(err),
		       err == ENOENT ? " (is the kbloom module loaded?)" : "");
	}
	return fd;
}

/*
 * Command-line parsing
 */

struct cmd {
	const char *name;
	int (*fn)(const struct cmd *cmd, int argc, char **argv);
	const char *args;
	const char *help;
	const char *options;
};

static void cmd_usage(const struct cmd *cmd, FILE *f)
{
	fprintf(f, "Usage: bloomctl [GLOBAL OPTIONS] %s%s%s\n\n%s\n",
		cmd->name, cmd->args[0] ? " " : "", cmd->args, cmd->help);
	fprintf(f, "\nOptions:\n%s", cmd->options ? cmd->options : "");
	fputs("  -j, --json           JSON output (also a global option)\n"
	      "  -p, --pretty         pretty-printed JSON output\n"
	      "  -h, --help           show this help\n", f);
}

/* Options every subcommand takes; their values are below 256. */
#define COMMON_SHORTOPTS	":hjp"
#define COMMON_LONGOPTS					\
	{ "help",	no_argument,	NULL, 'h' },	\
	{ "json",	no_argument,	NULL, 'j' },	\
	{ "pretty",	no_argument,	NULL, 'p' }

/* getopt_long() that reports bad options itself (opterr is 0). */
static int next_opt(int argc, char **argv, const char *shortopts,
		    const struct option *longopts)
{
	int c = getopt_long(argc, argv, shortopts, longopts, NULL);
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";

	if (c == '?') {
		if (!strncmp(arg, "--", 2) && optopt)
			pr_err("option '%s' takes no argument", arg);
		else if (!strncmp(arg, "--", 2))
			pr_err("unknown or ambiguous option '%s'", arg);
		else
			pr_err("unknown option '-%c'", optopt);
	} else if (c == ':') {
		if (!strncmp(arg, "--", 2))
			pr_err("option '%s' needs an argument", arg);
		else
			pr_err("option '-%c' needs an argument", optopt);
	}
	return c;
}

/*
 * Handle an option common to all subcommands. Returns -1 if c is not one,
 * else the exit status to return at once, or INT_MAX to carry on.
 */
static int common_opt(const struct cmd *cmd, int c)
{
	switch (c) {
	case 'h':
		cmd_usage(cmd, stdout);
		return 0;
	case 'j':
		enable_json(false);
		return INT_MAX;
	case 'p':
		enable_json(true);
		return INT_MAX;
	case '?':
	case ':':
		return EXIT_ERROR;
	default:
		return -1;
	}
}

/*
 * A count: digits, then optionally k or K (10^3), M (10^6), G (10^9),
 * Ki (2^10), Mi (2^20) or Gi (2^30). No sign, no blanks, no overflow.
 */
static int parse_u64(const char *opt, const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		uint64_t mult;
	} suffixes[] = {
		{ "", 1 },
		{ "k", 1000 }, { "K", 1000 },
		{ "M", 1000000 }, { "G", 1000000000 },
		{ "Ki", 1ULL << 10 }, { "Mi", 1ULL << 20 }, { "Gi", 1ULL << 30 },
	};
	const char *p = s;
	uint64_t v = 0;
	size_t i;

	if (!isdigit((unsigned char)*p))
		goto bad;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned int d = *p - '0';

		if (v > (UINT64_MAX - d) / 10)
			goto overflow;
		v = v * 10 + d;
	}
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (strcmp(p, suffixes[i].suffix))
			continue;
		if (v > UINT64_MAX / suffixes[i].mult)
			goto overflow;
		*out = v * suffixes[i].mult;
		return 0;
	}
bad:
	pr_err("%s '%s': must be a non-negative integer, optionally followed by k, M, G, Ki, Mi or Gi",
	       opt, s);
	return -1;
overflow:
	pr_err("%s '%s': too large", opt, s);
	return -1;
}

static int parse_u32(const char *opt, const char *s, uint64_t min,
		     uint64_t max, uint32_t *out)
{
	uint64_t v;

	if (parse_u64(opt, s, &v))
		return -1;
	if (v < min || v > max) {
		pr_err("%s '%s': must be between %" PRIu64 " and %" PRIu64,
		       opt, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

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

/* Names as the module wants them, checked here for a clearer message. */
static int check_name(const char *name)
{
	size_t len = strlen(name), i;

	if (!len) {
		pr_err("filter name '': must not be empty");
		return -1;
	}
	if (len >= KBLOOM_NAME_MAX) {
		pr_err("filter name '%s': too long (%zu characters, at most %d)",
		       name, len, KBLOOM_NAME_MAX - 1);
		return -1;
	}
	if (name[0] == '.') {
		pr_err("filter name '%s': must not start with '.'", name);
		return -1;
	}
	for (i = 0; i < len; i++) {
		char c = name[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-')
			continue;
		pr_err("filter name '%s': may only contain A-Z, a-z, 0-9, '_', '.' and '-'",
		       name);
		return -1;
	}
	return 0;
}

/* Copy a checked name into a zeroed ioctl structure. */
static void set_name(char dst[KBLOOM_NAME_MAX], const char *name)
{
	memcpy(dst, name, strlen(name) + 1);
}

/*
 * The one positional NAME of create, destroy, clear and show. getopt_long()
 * has moved the options out of the way.
 */
static const char *get_name_arg(const struct cmd *cmd, int argc, char **argv)
{
	if (optind >= argc) {
		pr_err("%s: missing filter NAME", cmd->name);
		return NULL;
	}
	if (optind + 1 < argc) {
		pr_err("%s: unexpected argument '%s'", cmd->name,
		       argv[optind + 1]);
		return NULL;
	}
	if (check_name(argv[optind]))
		return NULL;
	return argv[optind];
}

static int no_args(const struct cmd *cmd, int argc, char **argv)
{
	if (optind < argc) {
		pr_err("%s: unexpected argument '%s'", cmd->name, argv[optind]);
		return -1;
	}
	return 0;
}

/*
 * Sizing: shared by calc and create
 */

enum {
	OPT_CAPACITY = 256,
	OPT_FPR,
	OPT_BITS,
	OPT_HASHES,
	OPT_FILE,
	OPT_HEX,
	OPT_BATCH,
	OPT_COUNT,
	OPT_COUNTING,
	OPT_LIKE,
	OPT_COMPRESS,
	OPT_REPLACE,
};

#define SIZING_LONGOPTS						\
	{ "capacity",	required_argument, NULL, OPT_CAPACITY },	\
	{ "fpr",	required_argument, NULL, OPT_FPR },		\
	{ "bits",	required_argument, NULL, OPT_BITS },		\
	{ "hashes",	required_argument, NULL, OPT_HASHES }

struct sizing {
	bool have_capacity, have_fpr, have_bits, have_hashes;
	uint64_t capacity;
	uint64_t bits;
	uint32_t hashes;
	uint32_t fpr_ppb;
	double fpr;
};

/* Returns 1 if c was a sizing option, 0 if not, -1 on a bad value. */
static int sizing_opt(struct sizing *sz, int c, const char *arg)
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
	default:
		return 0;
	}
}

/*
 * Either --capacity and --fpr, or --bits and --hashes (with --capacity
 * recorded, or for calc needed to compute the rate).
 */
static int check_sizing(const struct sizing *sz, bool calc)
{
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

/* Bytes of a bitmap of the given bits, in whole 64-bit words. */
static uint64_t bitmap_bytes(uint64_t bits)
{
	return (bits / 64 + !!(bits % 64)) * 8;
}

/*
 * The module sizes filters in fixed point (kmod/kbloom_core.c, no FPU in
 * the kernel), which can differ from a double computation by a bit for
 * millions of keys. calc must print what create would get, so the same
 * integer arithmetic is done here, with portable 64x64->128 helpers (no
 * __int128 on i386).
 */
#define LN2_Q32		2977044472ULL	/* ln 2 * 2^32 */
#define LOG2E_Q32	6196328019ULL	/* log2 e * 2^32 */
#define Q62_ONE		(1ULL << 62)

struct u128 {
	uint64_t hi, lo;
};

static struct u128 mul_64x64(uint64_t a, uint64_t b)
{
	uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
	uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
	struct u128 r;

	r.lo = (mid << 32) | (uint32_t)p00;
	r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
	return r;
}

/* (a * b) >> shift, 0 < shift < 64, as the kernel's mul_u64_u64_shr(). */
static uint64_t mul_shr(uint64_t a, uint64_t b, unsigned int shift)
{
	struct u128 p = mul_64x64(a, b);

	return (p.lo >> shift) | (p.hi << (64 - shift));
}

/* (a * b) / c, the quotient known to fit: mul_u64_u64_div_u64(). */
static uint64_t mul_div(uint64_t a, uint64_t b, uint64_t c)
{
	struct u128 p = mul_64x64(a, b);
	uint64_t q = 0, r = 0;
	int i;

	/* Restoring division, a bit at a time: only a few calls per run. */
	for (i = 127; i >= 0; i--) {
		uint64_t bit = i >= 64 ? p.hi >> (i - 64) & 1 : p.lo >> i & 1;
		bool carry = r >> 63;

		r = r << 1 | bit;
		q <<= 1;
		if (carry || r >= c) {
			r -= c;
			q |= 1;
		}
	}
	return q;
}

/* log2(x) * 2^32, truncated, as kbloom_log2_q32(); x >= 1. */
static uint64_t log2_q32(uint64_t x)
{
	int ip = 63 - __builtin_clzll(x), i;
	uint64_t m = ip > 62 ? x >> (ip - 62) : x << (62 - ip);
	uint64_t result = (uint64_t)ip << 32;

	for (i = 31; i >= 0; i--) {
		m = mul_shr(m, m, 62);
		if (m >= 2 * Q62_ONE) {
			m >>= 1;
			result |= 1ULL << i;
		}
	}
	return result;
}

/* k = round((m/n) ln 2) in [1, KBLOOM_MAX_HASHES], as the module does. */
static uint32_t optimal_hashes(uint64_t m, uint64_t n)
{
	uint64_t k;

	if (m / n >= 48)
		return KBLOOM_MAX_HASHES;
	k = (mul_div(m, LN2_Q32, n) + (1ULL << 31)) >> 32;
	if (k < 1)
		k = 1;
	return k > KBLOOM_MAX_HASHES ? KBLOOM_MAX_HASHES : k;
}

/*
 * The sizing KBLOOM_IOC_CREATE does with bits == 0:
 * m = ceil(-n ln(eps) / (ln 2)^2), at least KBLOOM_MIN_BITS, and
 * k = round((m/n) ln 2); -ln(eps) / (ln 2)^2 is log2(1/eps) log2(e), with
 * log2(1/eps) = log2(10^9) - log2(ppb). Returns false if m would exceed
 * KBLOOM_MAX_BITS, which the module refuses.
 */
static bool module_size(uint64_t n, uint32_t fpr_ppb, uint64_t *bits,
			uint32_t *hashes)
{
	uint64_t l2 = log2_q32(KBLOOM_FPR_ONE) - log2_q32(fpr_ppb);
	uint64_t bpk = mul_shr(l2, LOG2E_Q32, 32);	/* bits per key, Q32 */
	uint64_t m;

	if (KBLOOM_MAX_BITS / n < bpk >> 32)
		return false;
	m = mul_shr(n, bpk, 32);
	if ((uint32_t)(n * bpk) != 0)	/* a fraction was cut off: ceil */
		m++;
	if (m < KBLOOM_MIN_BITS)
		m = KBLOOM_MIN_BITS;
	if (m > KBLOOM_MAX_BITS)
		return false;
	*bits = m;
	*hashes = optimal_hashes(m, n);
	return true;
}

/*
 * Sizing for n keys at fpr_ppb / 1e9 (the rate the module sees, not the
 * one typed): the module's own result when it would accept the filter,
 * else the same formulas in double precision, for information.
 */
static int size_filter(uint64_t n, uint32_t fpr_ppb, uint64_t *bits,
		       uint32_t *hashes)
{
	double m;
	long k;

	if (module_size(n, fpr_ppb, bits, hashes))
		return 0;
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

/* Theoretical false-positive rate with n keys: (1 - e^(-kn/m))^k. */
static double theoretical_fpr(uint64_t m, uint32_t k, uint64_t n)
{
	return pow(-expm1(-(double)k * (double)n / (double)m), k);
}

static int cmd_calc(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		SIZING_LONGOPTS,
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct sizing sz = { 0 };
	double fpr, bpk;
	uint64_t bytes;
	int c, ret;

	while ((c = next_opt(argc, argv, COMMON_SHORTOPTS, longopts)) != -1) {
		ret = common_opt(cmd, c);
		if (ret == INT_MAX)
			continue;
		if (ret >= 0)
			return ret;
		if (sizing_opt(&sz, c, optarg) <= 0)
			return EXIT_ERROR;
	}
	if (no_args(cmd, argc, argv) || check_sizing(&sz, true))
		return EXIT_ERROR;

	if (!sz.have_bits && size_filter(sz.capacity, sz.fpr_ppb, &sz.bits,
					 &sz.hashes))
		return EXIT_ERROR;
	if (sz.bits < KBLOOM_MIN_BITS || sz.bits > KBLOOM_MAX_BITS)
		pr_warn("%" PRIu64 " bits is outside the module's range, %llu to %llu",
			sz.bits, KBLOOM_MIN_BITS, KBLOOM_MAX_BITS);

	fpr = theoretical_fpr(sz.bits, sz.hashes, sz.capacity);
	bpk = (double)sz.bits / (double)sz.capacity;
	bytes = bitmap_bytes(sz.bits);

	if (jw) {
		jw_start_object(jw);
		jw_kv_u64(jw, "capacity", sz.capacity);
		if (sz.have_fpr)
			jw_kv_double(jw, "fpr_target", sz.fpr_ppb / 1e9);
		else
			jw_kv_null(jw, "fpr_target");
		jw_kv_u64(jw, "bits", sz.bits);
		jw_kv_u64(jw, "hashes", sz.hashes);
		jw_kv_u64(jw, "bytes", bytes);
		jw_kv_double(jw, "bits_per_key", bpk);
		jw_kv_double(jw, "fpr", fpr);
		jw_end_object(jw);
		return 0;
	}
	printf("capacity:        %" PRIu64 " keys\n", sz.capacity);
	if (sz.have_fpr)
		printf("target fpr:      %.9g (%.7g%%)\n", sz.fpr_ppb / 1e9,
		       sz.fpr_ppb / 1e7);
	printf("bits:            %" PRIu64 "\n", sz.bits);
	printf("hashes:          %" PRIu32 "\n", sz.hashes);
	printf("bytes:           %" PRIu64 "\n", bytes);
	printf("bits per key:    %.4f\n", bpk);
	printf("fpr at capacity: %.3g (%.3g%%)\n", fpr, fpr * 100);
	return 0;
}

/*
 * Filter management
 */

static int get_info(int fd, const char *name, struct kbloom_info *info)
{
	memset(info, 0, sizeof(*info));
	set_name(info->name, name);
	return ioctl(fd, KBLOOM_IOC_INFO, info) ? errno : 0;
}

/* Members of a filter's JSON object, shared by show, list and create. */
static void json_info(const struct kbloom_info *info)
{
	double m = info->bits, x = info->bits_set, k = info->hashes;

	jw_key(jw, "name");
	jw_bytes(jw, info->name, strnlen(info->name, KBLOOM_NAME_MAX));
	jw_kv_u64(jw, "bits", info->bits);
	jw_kv_u64(jw, "hashes", info->hashes);
	jw_kv_u64(jw, "capacity", info->capacity);
	if (info->fpr_ppb)
		jw_kv_double(jw, "fpr_target", info->fpr_ppb / 1e9);
	else
		jw_kv_null(jw, "fpr_target");
	jw_kv_u64(jw, "flags", info->flags);
	jw_kv_bool(jw, "counting", info->flags & KBLOOM_CREATE_COUNTING);
	jw_kv_u64(jw, "hash_scheme", info->hash_scheme);
	jw_kv_u64(jw, "bits_set", info->bits_set);
	jw_kv_u64(jw, "saturated", info->saturated);
	jw_kv_u64(jw, "adds", info->adds);
	jw_kv_u64(jw, "queries", info->queries);
	jw_kv_u64(jw, "hits", info->hits);
	jw_kv_u64(jw, "memory_bytes", info->memory_bytes);
	if (!info->bits) {
		/* Not from a sane module; keep the output valid JSON. */
		jw_kv_null(jw, "fill_ratio");
		jw_kv_null(jw, "estimated_fpr");
		jw_kv_null(jw, "estimated_keys");
		return;
	}
	jw_kv_double(jw, "fill_ratio", x / m);
	jw_kv_double(jw, "estimated_fpr", pow(x / m, k));
	/* Swamidass & Baldi: n ~ -(m/k) ln(1 - X/m); unbounded when full. */
	if (info->bits_set >= info->bits || !info->hashes)
		jw_kv_null(jw, "estimated_keys");
	else
		jw_kv_double(jw, "estimated_keys", -(m / k) * log1p(-x / m));
}

static void print_info(const struct kbloom_info *info)
{
	double m = info->bits, x = info->bits_set, k = info->hashes;
	bool counting = info->flags & KBLOOM_CREATE_COUNTING;

	printf("filter '%.*s'\n", KBLOOM_NAME_MAX, info->name);
	printf("  bits:           %llu (%llu bytes)\n",
	       (unsigned long long)info->bits,
	       (unsigned long long)info->memory_bytes);
	printf("  hashes:         %u\n", info->hashes);
	if (info->capacity)
		printf("  capacity:       %llu\n",
		       (unsigned long long)info->capacity);
	else
		printf("  capacity:       -\n");
	if (info->fpr_ppb)
		printf("  fpr target:     %.9g\n", info->fpr_ppb / 1e9);
	else
		printf("  fpr target:     -\n");
	printf("  hash scheme:    %u\n", info->hash_scheme);
	if (info->flags)
		printf("  flags:          0x%x\n", info->flags);
	printf("  counting:       %s\n", counting ? "yes" : "no");
	/* For a counting filter X is the number of non-zero counters. */
	printf("  %s   %llu (%.2f%% full)\n",
	       counting ? "counters set:" : "bits set:    ",
	       (unsigned long long)info->bits_set,
	       m ? 100 * x / m : 0.0);
	printf("  saturated:      %llu%s\n",
	       (unsigned long long)info->saturated,
	       counting ? " (counters stuck at 15)" : "");
	printf("  adds:           %llu\n", (unsigned long long)info->adds);
	printf("  queries:        %llu\n", (unsigned long long)info->queries);
	printf("  hits:           %llu\n", (unsigned long long)info->hits);
	if (m) {
		printf("  estimated fpr:  %.3g\n", pow(x / m, k));
		if (info->bits_set < info->bits && info->hashes)
			printf("  estimated keys: %.0f\n",
			       -(m / k) * log1p(-x / m));
		else
			printf("  estimated keys: - (filter full)\n");
	}
}

static int cmd_create(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		SIZING_LONGOPTS,
		{ "counting",	no_argument,	   NULL, OPT_COUNTING },
		{ "like",	required_argument, NULL, OPT_LIKE },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct kbloom_create cr;
	struct kbloom_info info;
	struct sizing sz = { 0 };
	const char *name, *like = NULL;
	bool counting = false;
	int c, ret, fd, err;

	while ((c = next_opt(argc, argv, COMMON_SHORTOPTS, longopts)) != -1) {
		ret = common_opt(cmd, c);
		if (ret == INT_MAX)
			continue;
		if (ret >= 0)
			return ret;
		if (c == OPT_COUNTING) {
			counting = true;
			continue;
		}
		if (c == OPT_LIKE) {
			like = optarg;
			continue;
		}
		if (sizing_opt(&sz, c, optarg) <= 0)
			return EXIT_ERROR;
	}
	name = get_name_arg(cmd, argc, argv);
	if (!name)
		return EXIT_ERROR;
	if (like) {
		/*
		 * Everything comes from @like, the seed included: a size given
		 * here could only contradict it.
		 */
		if (sz.have_capacity || sz.have_fpr || sz.have_bits ||
		    sz.have_hashes) {
			pr_err("--like takes every parameter from '%s': --capacity, --fpr, --bits and --hashes cannot be given with it",
			       like);
			return EXIT_ERROR;
		}
		if (check_name(like))
			return EXIT_ERROR;
	} else if (check_sizing(&sz, false)) {
		return EXIT_ERROR;
	}

	memset(&cr, 0, sizeof(cr));
	set_name(cr.name, name);
	if (counting)
		cr.flags |= KBLOOM_CREATE_COUNTING;
	if (like) {
		cr.flags |= KBLOOM_CREATE_LIKE;
		set_name(cr.like, like);
	} else {
		cr.capacity = sz.capacity;
		if (sz.have_bits) {
			cr.bits = sz.bits;
			cr.hashes = sz.hashes;
		} else {
			cr.fpr_ppb = sz.fpr_ppb;
		}
	}

	fd = open_device(O_RDWR);
	if (fd < 0)
		return EXIT_ERROR;
	if (ioctl(fd, KBLOOM_IOC_CREATE, &cr)) {
		err = errno;
		/* With --like, the only filter that can be missing is @like. */
		if (like && err == ENOENT)
			pr_err("filter '%s' (--like): %s", like, kerr(err));
		else if (like && counting && err == EINVAL)
			pr_err("filter '%s': --counting needs '%s' to be a counting filter too",
			       name, like);
		else
			pr_err("filter '%s': %s", name, kerr(err));
		close(fd);
		return EXIT_ERROR;
	}

	/*
	 * Report the module's view (memory_bytes in particular); should the
	 * filter already be gone again, what CREATE returned will do.
	 */
	err = get_info(fd, name, &info);
	close(fd);
	if (err) {
		memset(&info, 0, sizeof(info));
		set_name(info.name, name);
		info.bits = cr.bits;
		info.hashes = cr.hashes;
		info.capacity = cr.capacity;
		info.fpr_ppb = cr.fpr_ppb;
		info.flags = cr.flags & KBLOOM_CREATE_COUNTING;
		info.memory_bytes = bitmap_bytes(cr.bits * (counting ? 4 : 1));
	}

	/* The module and calc should agree; say so if they do not. */
	if (!like && !sz.have_bits) {
		uint64_t bits;
		uint32_t hashes;

		if (!size_filter(sz.capacity, sz.fpr_ppb, &bits, &hashes) &&
		    bits >= KBLOOM_MIN_BITS && bits <= KBLOOM_MAX_BITS &&
		    (bits != cr.bits || hashes != cr.hashes))
			pr_warn("module sized '%s' as %llu bits, %u hashes; 'bloomctl calc' gives %" PRIu64 " bits, %" PRIu32 " hashes",
				name, (unsigned long long)cr.bits, cr.hashes,
				bits, hashes);
	}

	if (jw) {
		jw_start_object(jw);
		json_info(&info);
		jw_end_object(jw);
	} else {
		printf("created '%s': %llu %s, %u hashes, %llu bytes\n",
		       name, (unsigned long long)info.bits,
		       info.flags & KBLOOM_CREATE_COUNTING ? "counters" : "bits",
		       info.hashes, (unsigned long long)info.memory_bytes);
	}
	return 0;
}

/* destroy and clear: a name, an ioctl, nothing printed unless -j. */
static int name_cmd(const struct cmd *cmd, int argc, char **argv,
		    unsigned long request, const char *done)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct kbloom_name arg;
	const char *name;
	int c, ret, fd;

	while ((c = next_opt(argc, argv, COMMON_SHORTOPTS, longopts)) != -1) {
		ret = common_opt(cmd, c);
		if (ret != INT_MAX)
			return ret < 0 ? EXIT_ERROR : ret;
	}
	name = get_name_arg(cmd, argc, argv);
	if (!name)
		return EXIT_ERROR;

	memset(&arg, 0, sizeof(arg));
	set_name(arg.name, name);
	fd = open_device(O_RDWR);
	if (fd < 0)
		return EXIT_ERROR;
	ret = ioctl(fd, request, &arg) ? errno : 0;
	close(fd);
	if (ret) {
		pr_err("filter '%s': %s", name, kerr(ret));
		return EXIT_ERROR;
	}
	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, done, name);
		jw_end_object(jw);
	}
	return 0;
}

static int cmd_destroy(const struct cmd *cmd, int argc, char **argv)
{
	return name_cmd(cmd, argc, argv, KBLOOM_IOC_DESTROY, "destroyed");
}

static int cmd_clear(const struct cmd *cmd, int argc, char **argv)
{
	return name_cmd(cmd, argc, argv, KBLOOM_IOC_CLEAR, "cleared");
}

static int cmd_show(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct kbloom_info info;
	const char *name;
	int c, ret, fd;

	while ((c = next_opt(argc, argv, COMMON_SHORTOPTS, longopts)) != -1) {
		ret = common_opt(cmd, c);
		if (ret != INT_MAX)
			return ret < 0 ? EXIT_ERROR : ret;
	}
	name = get_name_arg(cmd, argc, argv);
	if (!name)
		return EXIT_ERROR;
	fd = open_device(O_RDONLY);
	if (fd < 0)
		return EXIT_ERROR;
	ret = get_info(fd, name, &info);
	close(fd);
	if (ret) {
		pr_err("filter '%s': %s", name, kerr(ret));
		return EXIT_ERROR;
	}
	if (jw) {
		jw_start_object(jw);
		json_info(&info);
		jw_end_object(jw);
	} else {
		print_info(&info);
	}
	return 0;
}

/*
 * All names, in the module's (name) order. The list may change between
 * the calls, so ask for the count, then again until it fits.
 */
static int list_names(int fd, char **names, uint32_t *count)
{
	struct kbloom_list l;
	char *buf = NULL, *tmp;
	uint32_t room = 0;

	for (;;) {
		memset(&l, 0, sizeof(l));
		l.names = (__u64)(uintptr_t)buf;
		l.count = room;
		if (ioctl(fd, KBLOOM_IOC_LIST, &l)) {
			pr_err("list: %s", kerr(errno));
			free(buf);
			return -1;
		}
		if (l.count <= room)
			break;
		/* Some slack, so that a growing list does not loop long. */
		room = l.count < UINT32_MAX - 16 ? l.count + 16 : UINT32_MAX;
		tmp = realloc(buf, (size_t)room * KBLOOM_NAME_MAX);
		if (!tmp) {
			pr_err("list: %s", strerror(ENOMEM));
			free(buf);
			return -1;
		}
		buf = tmp;
	}
	*names = buf;
	*count = l.count;
	return 0;
}

static unsigned int u64_width(uint64_t v)
{
	unsigned int w = 1;

	while (v >= 10) {
		v /= 10;
		w++;
	}
	return w;
}

static int cmd_list(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	unsigned int wn = 4, wb = 4, wh = 6, ws = 8, wa = 4;
	struct kbloom_info *infos = NULL;
	uint32_t count, i, n = 0;
	char *names = NULL;
	int c, ret, fd;

	while ((c = next_opt(argc, argv, COMMON_SHORTOPTS, longopts)) != -1) {
		ret = common_opt(cmd, c);
		if (ret != INT_MAX)
			return ret < 0 ? EXIT_ERROR : ret;
	}
	if (no_args(cmd, argc, argv))
		return EXIT_ERROR;
	fd = open_device(O_RDONLY);
	if (fd < 0)
		return EXIT_ERROR;
	if (list_names(fd, &names, &count)) {
		close(fd);
		return EXIT_ERROR;
	}
	ret = EXIT_ERROR;
	infos = calloc(count ? count : 1, sizeof(*infos));
	if (!infos) {
		pr_err("list: %s", strerror(ENOMEM));
		goto out;
	}
	for (i = 0; i < count; i++) {
		char name[KBLOOM_NAME_MAX];
		int err;

		/* The module NUL-terminates; do not rely on it. */
		memcpy(name, names + (size_t)i * KBLOOM_NAME_MAX,
		       KBLOOM_NAME_MAX);
		name[KBLOOM_NAME_MAX - 1] = '\0';
		err = get_info(fd, name, &infos[n]);
		/* Destroyed since LIST: it is simply not there any more. */
		if (err == ENOENT)
			continue;
		if (err) {
			pr_err("filter '%s': %s", name, kerr(err));
			goto out;
		}
		n++;
	}

	if (jw) {
		jw_start_object(jw);
		jw_key(jw, "filters");
		jw_start_array(jw);
		for (i = 0; i < n; i++) {
			jw_start_object(jw);
			json_info(&infos[i]);
			jw_end_object(jw);
		}
		jw_end_array(jw);
		jw_end_object(jw);
		ret = 0;
		goto out;
	}
	if (!n) {
		ret = 0;
		goto out;
	}
	for (i = 0; i < n; i++) {
		unsigned int len = strnlen(infos[i].name, KBLOOM_NAME_MAX);

		wn = len > wn ? len : wn;
		wb = u64_width(infos[i].bits) > wb ?
		     u64_width(infos[i].bits) : wb;
		ws = u64_width(infos[i].bits_set) > ws ?
		     u64_width(infos[i].bits_set) : ws;
		wa = u64_width(infos[i].adds) > wa ?
		     u64_width(infos[i].adds) : wa;
	}
	printf("%-*s  %*s  %*s  %*s  %*s\n", wn, "NAME", wb, "BITS", wh,
	       "HASHES", ws, "BITS_SET", wa, "ADDS");
	for (i = 0; i < n; i++)
		printf("%-*.*s  %*llu  %*u  %*llu  %*llu\n", wn,
		       KBLOOM_NAME_MAX, infos[i].name,
		       wb, (unsigned long long)infos[i].bits,
		       wh, infos[i].hashes,
		       ws, (unsigned long long)infos[i].bits_set,
		       wa, (unsigned long long)infos[i].adds);
	ret = 0;
out:
	free(infos);
	free(names);
	close(fd);
	return ret;
}

static int cmd_version(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	/* Bit i of KBLOOM_IOC_VERSION's features is feature_names[i]. */
	static const char * const feature_names[] = {
		"batch", "test-and-add", "sizing", "counting", "merge", "image",
	};
	const unsigned int nr_features =
		sizeof(feature_names) / sizeof(feature_names[0]);
	struct kbloom_version v;
	bool have_module = false;
	unsigned int i;
	uint64_t unknown;
	int c, ret, fd;

	while ((c = next_opt(argc, argv, COMMON_SHORTOPTS, longopts)) != -1) {
		ret = common_opt(cmd, c);
		if (ret != INT_MAX)
			return ret < 0 ? EXIT_ERROR : ret;
	}
	if (no_args(cmd, argc, argv))
		return EXIT_ERROR;

	/* Without the module there is still bloomctl's own version. */
	fd = open(device_path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		memset(&v, 0, sizeof(v));
		ret = ioctl(fd, KBLOOM_IOC_VERSION, &v) ? errno : 0;
		close(fd);
		if (ret) {
			pr_err("%s: %s", device_path, kerr(ret));
			return EXIT_ERROR;
		}
		have_module = true;
		if (v.api_version != KBLOOM_API_VERSION)
			pr_warn("module API version %u, bloomctl knows version %d",
				v.api_version, KBLOOM_API_VERSION);
	} else {
		pr_warn("%s: %s; module version unknown", device_path,
			strerror(errno));
	}
	unknown = have_module ? v.features & ~((1ULL << nr_features) - 1) : 0;

	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, "version", BLOOMCTL_VERSION);
		jw_kv_u64(jw, "uapi_version", KBLOOM_API_VERSION);
		jw_kv_string(jw, "device", device_path);
		if (!have_module) {
			jw_kv_null(jw, "module");
			jw_end_object(jw);
			return 0;
		}
		jw_key(jw, "module");
		jw_start_object(jw);
		jw_kv_u64(jw, "api_version", v.api_version);
		jw_kv_u64(jw, "hash_scheme", v.hash_scheme);
		jw_kv_u64(jw, "features_mask", v.features);
		jw_key(jw, "features");
		jw_start_array(jw);
		for (i = 0; i < nr_features; i++)
			if (v.features & (1ULL << i))
				jw_string(jw, feature_names[i]);
		jw_end_array(jw);
		jw_kv_u64(jw, "min_bits", v.min_bits);
		jw_kv_u64(jw, "max_bits", v.max_bits);
		jw_kv_u64(jw, "max_hashes", v.max_hashes);
		jw_kv_u64(jw, "max_key_len", v.max_key_len);
		jw_kv_u64(jw, "max_batch", v.max_batch);
		jw_kv_u64(jw, "name_max", v.name_max);
		jw_end_object(jw);
		jw_end_object(jw);
		return 0;
	}
	printf("bloomctl %s (kbloom API %d)\n", BLOOMCTL_VERSION,
	       KBLOOM_API_VERSION);
	if (!have_module)
		return 0;
	printf("module: api_version %u, hash_scheme %u\n", v.api_version,
	       v.hash_scheme);
	printf("features:");
	for (i = 0; i < nr_features; i++)
		if (v.features & (1ULL << i))
			printf(" %s", feature_names[i]);
	if (unknown)
		printf(" 0x%llx", (unsigned long long)unknown);
	printf("\n");
	printf("limits: bits %llu..%llu, hashes 1..%u, key 1..%u bytes, batch %u keys, name %u bytes with NUL\n",
	       (unsigned long long)v.min_bits, (unsigned long long)v.max_bits,
	       v.max_hashes, v.max_key_len, v.max_batch, v.name_max);
	return 0;
}

/*
 * Keys: add, query, test-and-add and remove share one streaming path
 */

enum key_op { OP_ADD, OP_QUERY, OP_TEST_AND_ADD, OP_REMOVE };

struct op_desc {
	unsigned long ioc_one;
	unsigned long ioc_batch;
	int open_flags;
	/* Per-key words for result bit 1 and 0 (NULL: no per-key output). */
	const char *yes, *no;
	/* Names of the totals, for --count and JSON. */
	const char *total, *total_yes, *total_no;
};

static const struct op_desc key_ops[] = {
	[OP_ADD] = {
		KBLOOM_IOC_ADD, KBLOOM_IOC_ADD_BATCH, O_RDWR,
		NULL, NULL, "added", NULL, NULL,
	},
	[OP_QUERY] = {
		/* QUERY works on a read-only fd: no need for write access. */
		KBLOOM_IOC_QUERY, KBLOOM_IOC_QUERY_BATCH, O_RDONLY,
		"maybe", "no", "queried", "present", "absent",
	},
	[OP_TEST_AND_ADD] = {
		KBLOOM_IOC_TEST_AND_ADD, KBLOOM_IOC_TEST_AND_ADD_BATCH, O_RDWR,
		"seen", "new", "processed", "seen", "new",
	},
	[OP_REMOVE] = {
		/* 0 is a refusal: the filter says the key is not there. */
		KBLOOM_IOC_REMOVE, KBLOOM_IOC_REMOVE_BATCH, O_RDWR,
		"removed", "absent", "processed", "removed", "absent",
	},
};

struct key_stream {
	const struct op_desc *op;
	const char *name;
	int fd;
	bool hex;
	/* Print each key's result (query and test-and-add without --count). */
	bool per_key;

	uint32_t batch_keys;	/* keys per call; 1: the one-key ioctls */
	size_t keys_cap;	/* bytes of keys per call */

	/* The batch being filled. */
	unsigned char *keys;
	size_t keys_used;
	__u32 *lens;
	uint32_t nkeys;
	unsigned char *results;
	/* With --hex, the keys as typed, to echo them as given. */
	char *text;
	size_t text_used;

	uint64_t total, yes;
};

static void emit_result(struct key_stream *ks, const void *key, size_t len,
			bool yes)
{
	const char *word = yes ? ks->op->yes : ks->op->no;

	if (jw) {
		jw_start_object(jw);
		jw_key(jw, "key");
		jw_bytes(jw, key, len);
		jw_kv_string(jw, "result", word);
		jw_end_object(jw);
		return;
	}
	fwrite(key, 1, len, stdout);
	putchar(' ');
	fputs(word, stdout);
	putchar('\n');
}

/* Send the pending keys to the module and print their results. */
static int flush_keys(struct key_stream *ks)
{
	uint32_t done = 0, hits = 0, count, i;
	const unsigned char *key, *text;
	bool short_done = false;
	int err = 0;

	if (!ks->nkeys)
		return 0;

	if (ks->batch_keys == 1) {
		struct kbloom_key k;

		memset(&k, 0, sizeof(k));
		set_name(k.name, ks->name);
		k.key = (__u64)(uintptr_t)ks->keys;
		k.len = ks->lens[0];
		if (ioctl(ks->fd, ks->op->ioc_one, &k)) {
			err = errno;
		} else {
			done = 1;
			hits = !!k.result;
			ks->results[0] = hits;
		}
	} else {
		struct kbloom_batch b;

		memset(&b, 0, sizeof(b));
		set_name(b.name, ks->name);
		b.keys = (__u64)(uintptr_t)ks->keys;
		b.lens = (__u64)(uintptr_t)ks->lens;
		if (ks->per_key)
			b.results = (__u64)(uintptr_t)ks->results;
		b.keys_bytes = ks->keys_used;
		b.count = ks->nkeys;
		if (ioctl(ks->fd, ks->op->ioc_batch, &b))
			err = errno;
		else if (b.done != ks->nkeys)
			short_done = true;
		/* Written back even on error, when the call got that far. */
		done = b.done <= ks->nkeys ? b.done : 0;
		hits = b.hits <= done ? b.hits : done;
	}

	if (ks->per_key) {
		key = ks->keys;
		text = (const unsigned char *)ks->text;
		for (i = 0; i < done; i++) {
			bool yes = ks->results[i / 8] & (1U << (i % 8));

			if (ks->hex) {
				emit_result(ks, text, 2 * ks->lens[i], yes);
				text += 2 * ks->lens[i];
			} else {
				emit_result(ks, key, ks->lens[i], yes);
			}
			key += ks->lens[i];
		}
	}
	count = ks->nkeys;
	ks->total += done;
	ks->yes += hits;
	ks->nkeys = 0;
	ks->keys_used = 0;
	ks->text_used = 0;

	if (short_done) {
		pr_err("filter '%s': module processed %" PRIu32 " of %" PRIu32 " keys but reported success",
		       ks->name, done, count);
		return -1;
	}
	if (!err)
		return 0;
	/* Only remove gets it: the first call fails, so ks->total is 0. */
	if (err == EOPNOTSUPP && ks->op == &key_ops[OP_REMOVE])
		pr_err("filter '%s' is not a counting filter (create it with --counting)",
		       ks->name);
	else if (ks->total == 0)
		pr_err("filter '%s': %s", ks->name, kerr(err));
	else
		pr_err("filter '%s': failed at key %" PRIu64 " (%" PRIu64 " keys done): %s",
		       ks->name, ks->total + 1, ks->total, kerr(err));
	return -1;
}

/*
 * A key for error messages: at most 40 bytes of it, non-printable bytes as
 * \xNN. The caller frees it (NULL if out of memory; "%s" of NULL is not
 * used: callers fall back to "?").
 */
static char *key_label(const char *s, size_t len)
{
	size_t n = len > 40 ? 40 : len, i;
	char *out = malloc(n * 4 + 4), *p = out;

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c >= 0x20 && c < 0x7f)
			*p++ = c;
		else
			p += sprintf(p, "\\x%02x", c);
	}
	strcpy(p, n < len ? "..." : "");
	return out;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Where a key came from, for error messages: a line, or an argument. */
struct key_origin {
	const char *src;		/* file name, "stdin", or NULL */
	unsigned long long line;
};

/*
 * Report bad input. The keys before it are sent first, so that "every key
 * before the bad one was processed" holds whatever the batch size.
 */
static void __attribute__((format(printf, 5, 6)))
key_err(struct key_stream *ks, const struct key_origin *o, const char *key,
	size_t len, const char *fmt, ...)
{
	char *label = NULL, *msg = NULL;
	va_list ap;
	int ret;

	flush_keys(ks);
	va_start(ap, fmt);
	ret = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (ret < 0)
		msg = NULL;
	if (len)
		label = key_label(key, len);
	if (o->src && len)
		pr_err("%s: line %llu: '%s': %s", o->src, o->line,
		       label ? label : "?", msg ? msg : "bad key");
	else if (o->src)
		pr_err("%s: line %llu: %s", o->src, o->line,
		       msg ? msg : "bad key");
	else
		pr_err("key '%s': %s", label ? label : "",
		       msg ? msg : "bad key");
	free(msg);
	free(label);
}

/* Append one key (as typed) to the batch, sending the batch when full. */
static int stream_key(struct key_stream *ks, const char *s, size_t len,
		      const struct key_origin *o)
{
	size_t klen = ks->hex ? len / 2 : len, i;
	unsigned char *dst;

	if (!len) {
		key_err(ks, o, s, len, "empty key (keys are 1 to %d bytes)",
			KBLOOM_KEY_MAX);
		return -1;
	}
	if (ks->hex && len % 2) {
		key_err(ks, o, s, len,
			"not hex: needs an even number of hex digits");
		return -1;
	}
	for (i = 0; ks->hex && i < len; i++) {
		if (hex_digit(s[i]) < 0) {
			key_err(ks, o, s, len, "not hex: '%c' at offset %zu",
				isprint((unsigned char)s[i]) ? s[i] : '?', i);
			return -1;
		}
	}
	if (klen > KBLOOM_KEY_MAX) {
		key_err(ks, o, s, len, "key of %zu bytes, longer than %d",
			klen, KBLOOM_KEY_MAX);
		return -1;
	}

	if (ks->nkeys == ks->batch_keys ||
	    ks->keys_used + klen > ks->keys_cap) {
		if (flush_keys(ks))
			return -1;
	}
	dst = ks->keys + ks->keys_used;
	if (ks->hex) {
		for (i = 0; i < klen; i++)
			dst[i] = hex_digit(s[2 * i]) << 4 |
				 hex_digit(s[2 * i + 1]);
		if (ks->per_key) {
			memcpy(ks->text + ks->text_used, s, len);
			ks->text_used += len;
		}
	} else {
		memcpy(dst, s, len);
	}
	ks->keys_used += klen;
	ks->lens[ks->nkeys++] = klen;
	return 0;
}

struct line_reader {
	int fd;
	char *buf;
	size_t start, end;
	bool eof;
	unsigned long long line;
};

enum { LINE_TOO_LONG = -2, LINE_ERROR = -1, LINE_EOF = 0, LINE_OK = 1 };

/*
 * Next line, without its "\n" (or "\r\n"), pointing into the buffer until
 * the next call. LINE_ERROR leaves errno set. Lines are bounded, so that a
 * stray binary file cannot eat all memory.
 */
static int read_line(struct line_reader *lr, char **line, size_t *len)
{
	char *p, *nl;
	ssize_t n;

	for (;;) {
		p = lr->buf + lr->start;
		nl = memchr(p, '\n', lr->end - lr->start);
		if (nl) {
			*line = p;
			*len = nl - p;
			if (*len && nl[-1] == '\r')
				(*len)--;
			lr->start = nl + 1 - lr->buf;
			lr->line++;
			return LINE_OK;
		}
		if (lr->end - lr->start > LINE_MAX_BYTES)
			return LINE_TOO_LONG;
		if (lr->eof) {
			if (lr->start == lr->end)
				return LINE_EOF;
			/* A last line without "\n". */
			*line = p;
			*len = lr->end - lr->start;
			lr->start = lr->end;
			lr->line++;
			return LINE_OK;
		}
		if (lr->start) {
			memmove(lr->buf, p, lr->end - lr->start);
			lr->end -= lr->start;
			lr->start = 0;
		}
		n = read(lr->fd, lr->buf + lr->end, READ_BUF_SIZE - lr->end);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return LINE_ERROR;
		}
		if (!n)
			lr->eof = true;
		lr->end += n;
	}
}

static int stream_lines(struct key_stream *ks, const char *file)
{
	struct line_reader lr = { .fd = STDIN_FILENO };
	struct key_origin o = { .src = "stdin" };
	size_t len;
	char *line;
	int ret;

	if (file && strcmp(file, "-")) {
		lr.fd = open(file, O_RDONLY | O_CLOEXEC);
		if (lr.fd < 0) {
			pr_err("%s: %s", file, strerror(errno));
			return -1;
		}
		o.src = file;
	}
	lr.buf = malloc(READ_BUF_SIZE);
	if (!lr.buf) {
		pr_err("%s", strerror(ENOMEM));
		ret = -1;
		goto out;
	}
	while ((ret = read_line(&lr, &line, &len)) == LINE_OK) {
		o.line = lr.line;
		if (stream_key(ks, line, len, &o)) {
			ret = -1;
			goto out;
		}
	}
	if (ret == LINE_TOO_LONG) {
		o.line = lr.line + 1;
		key_err(ks, &o, "", 0, "too long (keys are 1 to %d bytes%s)",
			KBLOOM_KEY_MAX, ks->hex ? ", twice that in hex" : "");
		ret = -1;
	} else if (ret == LINE_ERROR) {
		int err = errno;

		flush_keys(ks);
		pr_err("%s: %s", o.src, strerror(err));
		ret = -1;
	}
out:
	free(lr.buf);
	if (lr.fd != STDIN_FILENO)
		close(lr.fd);
	return ret;
}

static void print_totals(struct key_stream *ks, bool count_only)
{
	uint64_t no = ks->total - ks->yes;
	const struct op_desc *op = ks->op;

	if (jw) {
		if (ks->per_key) {
			jw_end_array(jw);
		} else {
			jw_start_object(jw);
		}
		jw_kv_u64(jw, op->total, ks->total);
		if (op->total_yes) {
			jw_kv_u64(jw, op->total_yes, ks->yes);
			jw_kv_u64(jw, op->total_no, no);
		}
		jw_end_object(jw);
		return;
	}
	if (!count_only)
		return;
	if (op->total_yes)
		printf("%s %" PRIu64 ", %s %" PRIu64 ", %s %" PRIu64 "\n",
		       op->total, ks->total, op->total_yes, ks->yes,
		       op->total_no, no);
	else
		printf("%s %" PRIu64 "\n", op->total, ks->total);
}

/*
 * The batch size the module allows; it may lack batching altogether, then
 * the one-key ioctls do the job.
 */
static int check_module(struct key_stream *ks, enum key_op opi)
{
	struct kbloom_version v;

	memset(&v, 0, sizeof(v));
	/* An old or odd module: let the real call report the problem. */
	if (ioctl(ks->fd, KBLOOM_IOC_VERSION, &v))
		return 0;
	if (opi == OP_TEST_AND_ADD &&
	    !(v.features & KBLOOM_FEATURE_TEST_AND_ADD)) {
		pr_err("filter '%s': the module does not support test-and-add",
		       ks->name);
		return -1;
	}
	if (opi == OP_REMOVE && !(v.features & KBLOOM_FEATURE_COUNTING)) {
		pr_err("filter '%s': the module does not support counting filters, so no remove",
		       ks->name);
		return -1;
	}
	if (!(v.features & KBLOOM_FEATURE_BATCH))
		ks->batch_keys = 1;
	else if (v.max_batch && ks->batch_keys > v.max_batch)
		ks->batch_keys = v.max_batch;
	return 0;
}

static int key_cmd(const struct cmd *cmd, int argc, char **argv,
		   enum key_op opi)
{
	static const struct option longopts[] = {
		{ "file",	required_argument, NULL, OPT_FILE },
		{ "hex",	no_argument,	   NULL, OPT_HEX },
		{ "batch",	required_argument, NULL, OPT_BATCH },
		{ "count",	no_argument,	   NULL, OPT_COUNT },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct key_stream ks = {
		.op = &key_ops[opi],
		.fd = -1,
		.batch_keys = DEFAULT_BATCH_KEYS,
	};
	bool count_only = false;
	const char *file = NULL;
	int c, ret, i;

	while ((c = next_opt(argc, argv, COMMON_SHORTOPTS, longopts)) != -1) {
		ret = common_opt(cmd, c);
		if (ret == INT_MAX)
			continue;
		if (ret >= 0)
			return ret;
		switch (c) {
		case OPT_FILE:
			file = optarg;
			break;
		case OPT_HEX:
			ks.hex = true;
			break;
		case OPT_BATCH:
			if (parse_u32("--batch", optarg, 1, KBLOOM_BATCH_MAX,
				      &ks.batch_keys))
				return EXIT_ERROR;
			break;
		case OPT_COUNT:
			count_only = true;
			break;
		default:
			return EXIT_ERROR;
		}
	}
	if (optind >= argc) {
		pr_err("%s: missing filter NAME", cmd->name);
		return EXIT_ERROR;
	}
	ks.name = argv[optind++];
	if (check_name(ks.name))
		return EXIT_ERROR;
	if (file && optind < argc) {
		pr_err("%s: --file '%s' and KEY arguments are exclusive",
		       cmd->name, file);
		return EXIT_ERROR;
	}
	ks.per_key = ks.op->yes && !count_only;

	ks.fd = open_device(ks.op->open_flags);
	if (ks.fd < 0)
		return EXIT_ERROR;
	ret = EXIT_ERROR;
	if (check_module(&ks, opi))
		goto out;

	/* In 64 bits: 2^20 keys of 4 KiB overflow a 32-bit size_t. */
	ks.keys_cap = DEFAULT_BATCH_BYTES;
	if ((uint64_t)ks.batch_keys * KBLOOM_KEY_MAX < ks.keys_cap)
		ks.keys_cap = ks.batch_keys * KBLOOM_KEY_MAX;
	ks.keys = malloc(ks.keys_cap);
	ks.lens = calloc(ks.batch_keys, sizeof(*ks.lens));
	/* Zeroed: only bits below "done" are ever written by the module. */
	ks.results = calloc(ks.batch_keys / 8 + 1, 1);
	if (ks.hex && ks.per_key)
		ks.text = malloc(2 * ks.keys_cap);
	if (!ks.keys || !ks.lens || !ks.results ||
	    (ks.hex && ks.per_key && !ks.text)) {
		pr_err("%s", strerror(ENOMEM));
		goto out;
	}

	if (jw && ks.per_key) {
		jw_start_object(jw);
		jw_key(jw, "results");
		jw_start_array(jw);
	}
	if (optind < argc) {
		struct key_origin o = { NULL, 0 };

		for (i = optind; i < argc; i++)
			if (stream_key(&ks, argv[i], strlen(argv[i]), &o))
				break;
		ret = i < argc ? -1 : 0;
	} else {
		ret = stream_lines(&ks, file);
	}
	/*
	 * Even after bad input, send what came before it, so that "every key
	 * before the bad one was processed" holds.
	 */
	if (flush_keys(&ks) || ret) {
		ret = EXIT_ERROR;
		goto out;
	}

	print_totals(&ks, count_only);
	ret = 0;
	if (ks.op->total_yes && ks.yes < ks.total)
		ret = EXIT_NEGATIVE;
out:
	free(ks.text);
	free(ks.results);
	free(ks.lens);
	free(ks.keys);
	close(ks.fd);
	return ret;
}

static int cmd_add(const struct cmd *cmd, int argc, char **argv)
{
	return key_cmd(cmd, argc, argv, OP_ADD);
}

static int cmd_query(const struct cmd *cmd, int argc, char **argv)
{
	return key_cmd(cmd, argc, argv, OP_QUERY);
}

static int cmd_test_and_add(const struct cmd *cmd, int argc, char **argv)
{
	return key_cmd(cmd, argc, argv, OP_TEST_AND_ADD);
}

static int cmd_remove(const struct cmd *cmd, int argc, char **argv)
{
	return key_cmd(cmd, argc, argv, OP_REMOVE);
}

/*
 * Merging and comparing filters
 */

/*
 * Two filter names, as merge and estimate take them. getopt_long() has
 * moved the options out of the way.
 */
static int get_two_names(const struct cmd *cmd, int argc, char **argv,
			 const char **a, const char **b)
{
	if (optind + 2 > argc) {
		pr_err("%s: needs two filter names", cmd->name);
		return -1;
	}
	if (optind + 2 < argc) {
		pr_err("%s: unexpected argument '%s'", cmd->name,
		       argv[optind + 2]);
		return -1;
	}
	*a = argv[optind];
	*b = argv[optind + 1];
	return check_name(*a) || check_name(*b) ? -1 : 0;
}

/*
 * Say which parameters differ when MERGE or COMPARE refused two filters,
 * with the values from KBLOOM_IOC_INFO (the seed is never reported, so for
 * it there is only advice). @what is e.g. "cannot merge 'b' into 'a'".
 */
static void report_mismatch(int fd, const char *what, const char *a,
			    const char *b, uint32_t mismatch)
{
	struct kbloom_info ia, ib;
	bool have = !get_info(fd, a, &ia) && !get_info(fd, b, &ib);
	const char *sep = "";
	char *msg = NULL;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&msg, &len);
	if (!f) {
		pr_err("%s: incompatible filters (mismatch 0x%x)", what,
		       mismatch);
		return;
	}
	if (mismatch & KBLOOM_MISMATCH_BITS) {
		fprintf(f, "%sbits differ", sep);
		if (have)
			fprintf(f, " (%llu vs %llu)",
				(unsigned long long)ia.bits,
				(unsigned long long)ib.bits);
		sep = ", ";
	}
	if (mismatch & KBLOOM_MISMATCH_HASHES) {
		fprintf(f, "%shashes differ", sep);
		if (have)
			fprintf(f, " (%u vs %u)", ia.hashes, ib.hashes);
		sep = ", ";
	}
	if (mismatch & KBLOOM_MISMATCH_COUNTING) {
		fprintf(f, "%scounting differs", sep);
		if (have)
			fprintf(f, " (%s vs %s)",
				ia.flags & KBLOOM_CREATE_COUNTING ?
				"counting" : "plain",
				ib.flags & KBLOOM_CREATE_COUNTING ?
				"counting" : "plain");
		sep = ", ";
	}
	if (mismatch & KBLOOM_MISMATCH_SEED) {
		fprintf(f, "%sseeds differ (create one with --like the other, or load both from images of such filters)",
			sep);
		sep = ", ";
	}
	if (mismatch & ~(KBLOOM_MISMATCH_BITS | KBLOOM_MISMATCH_HASHES |
			 KBLOOM_MISMATCH_COUNTING | KBLOOM_MISMATCH_SEED))
		fprintf(f, "%sother parameters differ (mismatch 0x%x)", sep,
			mismatch);
	if (fclose(f)) {
		free(msg);
		pr_err("%s: incompatible filters (mismatch 0x%x)", what,
		       mismatch);
		return;
	}
	pr_err("%s: %s", what, msg);
	free(msg);
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
	if (err == EINVAL && mg->mismatch)
		report_mismatch(fd, what, dst, src, mg->mismatch);
	else if (err == ENOENT)
		pr_err("filter '%s': %s",
		       get_info(fd, dst, &info) == ENOENT ? dst : src,
		       kerr(err));
	else
		pr_err("%s: %s", what, kerr(err));
	return -1;
}

static int cmd_merge(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct kbloom_merge mg;
	const char *dst, *src;
	char *what = NULL;
	int c, ret, fd;

	while ((c = next_opt(argc, argv, COMMON_SHORTOPTS, longopts)) != -1) {
		ret = common_opt(cmd, c);
		if (ret != INT_MAX)
			return ret < 0 ? EXIT_ERROR : ret;
	}
	if (get_two_names(cmd, argc, argv, &dst, &src))
		return EXIT_ERROR;
	if (asprintf(&what, "cannot merge '%s' into '%s'", src, dst) < 0) {
		pr_err("%s", strerror(ENOMEM));
		return EXIT_ERROR;
	}
	/* MERGE changes @dst: the module wants a writable fd. */
	fd = open_device(O_RDWR);
	ret = EXIT_ERROR;
	if (fd < 0)
		goto out;
	if (merge_ioctl(fd, KBLOOM_IOC_MERGE, what, dst, src, &mg))
		goto out;
	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, "merged", src);
		jw_kv_string(jw, "into", dst);
		jw_end_object(jw);
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(what);
	return ret;
}

/*
 * Keys in a filter with X of its m bits set, Swamidass & Baldi:
 * n = -(m/k) ln(1 - X/m). Infinite (NAN here, null in JSON) when every bit
 * is set: then any number of keys fits.
 */
static double estimate_keys(uint64_t x, uint64_t m, uint32_t k)
{
	if (!m || !k || x >= m)
		return NAN;
	return -((double)m / k) * log1p(-(double)x / (double)m);
}

static void print_estimate(const char *label, double v)
{
	if (isnan(v))
		printf("%-26s saturated\n", label);
	else
		printf("%-26s %.0f\n", label, v);
}

static int cmd_estimate(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	double na, nb, nu, ni, jac;
	struct kbloom_info info;
	struct kbloom_merge mg;
	const char *a, *b;
	char *what = NULL, *label;
	int c, ret, fd;

	while ((c = next_opt(argc, argv, COMMON_SHORTOPTS, longopts)) != -1) {
		ret = common_opt(cmd, c);
		if (ret != INT_MAX)
			return ret < 0 ? EXIT_ERROR : ret;
	}
	if (get_two_names(cmd, argc, argv, &a, &b))
		return EXIT_ERROR;
	if (asprintf(&what, "cannot compare '%s' with '%s'", a, b) < 0) {
		pr_err("%s", strerror(ENOMEM));
		return EXIT_ERROR;
	}
	fd = open_device(O_RDONLY);
	ret = EXIT_ERROR;
	if (fd < 0)
		goto out;
	if (merge_ioctl(fd, KBLOOM_IOC_COMPARE, what, a, b, &mg))
		goto out;
	/* Compatible filters share m and k: A's are B's. */
	ret = get_info(fd, a, &info);
	if (ret) {
		pr_err("filter '%s': %s", a, kerr(ret));
		ret = EXIT_ERROR;
		goto out;
	}
	ret = EXIT_ERROR;

	na = estimate_keys(mg.bits_dst, info.bits, info.hashes);
	nb = estimate_keys(mg.bits_src, info.bits, info.hashes);
	nu = estimate_keys(mg.bits_union, info.bits, info.hashes);
	/* Inclusion-exclusion; the errors of the three can make it negative. */
	ni = na + nb - nu;
	if (ni < 0)
		ni = 0;
	/* Two empty filters: the Jaccard index is undefined, 0/0. */
	jac = nu > 0 ? ni / nu : NAN;

	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, "a", a);
		jw_kv_string(jw, "b", b);
		/* jw_double() writes NAN as null. */
		jw_kv_double(jw, "keys_a", na);
		jw_kv_double(jw, "keys_b", nb);
		jw_kv_double(jw, "union", nu);
		jw_kv_double(jw, "intersection", ni);
		jw_kv_double(jw, "jaccard", jac);
		jw_kv_u64(jw, "bits_a", mg.bits_dst);
		jw_kv_u64(jw, "bits_b", mg.bits_src);
		jw_kv_u64(jw, "bits_union", mg.bits_union);
		jw_kv_u64(jw, "bits_inter", mg.bits_inter);
		jw_end_object(jw);
		ret = 0;
		goto out;
	}
	if (asprintf(&label, "keys in '%s':", a) >= 0) {
		print_estimate(label, na);
		free(label);
	}
	if (asprintf(&label, "keys in '%s':", b) >= 0) {
		print_estimate(label, nb);
		free(label);
	}
	print_estimate("keys in the union:", nu);
	print_estimate("keys in the intersection:", ni);
	if (isnan(nu))
		printf("%-26s saturated\n", "jaccard:");
	else if (isnan(jac))
		printf("%-26s - (both empty)\n", "jaccard:");
	else
		printf("%-26s %.4f\n", "jaccard:", jac);
	printf("%-26s %llu, %llu, union %llu, intersection %llu, of %llu\n",
	       info.flags & KBLOOM_CREATE_COUNTING ? "counters set:" :
	       "bits set:",
	       (unsigned long long)mg.bits_dst,
	       (unsigned long long)mg.bits_src,
	       (unsigned long long)mg.bits_union,
	       (unsigned long long)mg.bits_inter,
	       (unsigned long long)info.bits);
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(what);
	return ret;
}

/*
 * Filter images: save, load and inspect
 *
 * The file format is Documentation/kbloom-image.md: a fixed 96-byte
 * header, every integer little-endian and naturally aligned, then the
 * payload of KBLOOM_IOC_EXPORT, as is or deflated by zlib. The header is
 * (de)serialised field by field, never as a C structure, so the file does
 * not depend on the compiler or the host's byte order.
 */

/* \x89 catches 7-bit transfers, \n a text-mode LF to CRLF conversion. */
#define IMG_MAGIC		"\x89KBLOOM\n"
#define IMG_MAGIC_LEN		8
#define IMG_VERSION		1
#define IMG_HEADER_SIZE		96

#define IMG_OFF_MAGIC		0
#define IMG_OFF_VERSION		8
#define IMG_OFF_SCHEME		12
#define IMG_OFF_LAYOUT		16
#define IMG_OFF_FLAGS		20
#define IMG_OFF_BITS		24
#define IMG_OFF_HASHES		32
#define IMG_OFF_FPR		36
#define IMG_OFF_SEED0		40
#define IMG_OFF_SEED1		44
#define IMG_OFF_ADDS		48
#define IMG_OFF_CAPACITY	56
#define IMG_OFF_COMPRESSION	64
#define IMG_OFF_CRC		68
#define IMG_OFF_PAYLOAD_LEN	72
#define IMG_OFF_STORED_LEN	80
#define IMG_OFF_RESERVED	88

/* Bit i of the filter is bit i of the payload; a future layout may not be. */
#define IMG_LAYOUT_STANDARD	0
#define IMG_FLAGS_KNOWN		KBLOOM_CREATE_COUNTING
#define IMG_COMPRESS_NONE	0
#define IMG_COMPRESS_ZLIB	1

/* zlib counts in uInt: hand it at most this much at a time. */
#define ZLIB_CHUNK		(1U << 30)

struct image {
	const char *file;		/* for messages: the path, or "stdin" */
	uint32_t version;
	uint32_t hash_scheme;
	uint32_t layout;
	uint32_t flags;
	uint64_t bits;
	uint32_t hashes;
	uint32_t fpr_ppb;
	uint32_t seed[2];
	uint64_t adds;
	uint64_t capacity;
	uint32_t compression;
	uint32_t crc;
	uint64_t payload_len;		/* uncompressed */
	uint64_t stored_len;		/* as in the file */
	uint64_t reserved;
	uint64_t file_bytes;
	/* The uncompressed payload, payload_len bytes. */
	unsigned char *payload;
};

/*
 * CRC32C (Castagnoli, reflected polynomial 0x82F63B78), as iSCSI, ext4 and
 * btrfs use it, eight bytes a step ("slicing by 8"): images reach
 * gigabytes. The tables are built on first use.
 */
static uint32_t crc32c_table[8][256];

static void crc32c_init(void)
{
	uint32_t c;
	int i, j;

	if (crc32c_table[0][1])
		return;
	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = c & 1 ? c >> 1 ^ 0x82F63B78 : c >> 1;
		crc32c_table[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			crc32c_table[j][i] = crc32c_table[j - 1][i] >> 8 ^
				crc32c_table[0][crc32c_table[j - 1][i] & 0xff];
}

/* crc32c(crc32c(0, a), b) is the CRC of a followed by b, as zlib's crc32(). */
static uint32_t crc32c(uint32_t crc, const void *buf, uint64_t len)
{
	const unsigned char *p = buf;

	crc32c_init();
	crc = ~crc;
	/* Bytes, not a u32 load: the same result on any host. */
	for (; len >= 8; len -= 8, p += 8) {
		crc ^= (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		       (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
		crc = crc32c_table[7][crc & 0xff] ^
		      crc32c_table[6][crc >> 8 & 0xff] ^
		      crc32c_table[5][crc >> 16 & 0xff] ^
		      crc32c_table[4][crc >> 24] ^
		      crc32c_table[3][p[4]] ^ crc32c_table[2][p[5]] ^
		      crc32c_table[1][p[6]] ^ crc32c_table[0][p[7]];
	}
	for (; len; len--)
		crc = crc >> 8 ^ crc32c_table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

static void put_le32(unsigned char *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void put_le64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static uint32_t get_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const unsigned char *p)
{
	return get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

/* The header, with img->crc in its place (0 to compute the CRC). */
static void img_encode_header(unsigned char h[IMG_HEADER_SIZE],
			      const struct image *img)
{
	memset(h, 0, IMG_HEADER_SIZE);
	memcpy(h + IMG_OFF_MAGIC, IMG_MAGIC, IMG_MAGIC_LEN);
	put_le32(h + IMG_OFF_VERSION, img->version);
	put_le32(h + IMG_OFF_SCHEME, img->hash_scheme);
	put_le32(h + IMG_OFF_LAYOUT, img->layout);
	put_le32(h + IMG_OFF_FLAGS, img->flags);
	put_le64(h + IMG_OFF_BITS, img->bits);
	put_le32(h + IMG_OFF_HASHES, img->hashes);
	put_le32(h + IMG_OFF_FPR, img->fpr_ppb);
	put_le32(h + IMG_OFF_SEED0, img->seed[0]);
	put_le32(h + IMG_OFF_SEED1, img->seed[1]);
	put_le64(h + IMG_OFF_ADDS, img->adds);
	put_le64(h + IMG_OFF_CAPACITY, img->capacity);
	put_le32(h + IMG_OFF_COMPRESSION, img->compression);
	put_le32(h + IMG_OFF_CRC, img->crc);
	put_le64(h + IMG_OFF_PAYLOAD_LEN, img->payload_len);
	put_le64(h + IMG_OFF_STORED_LEN, img->stored_len);
	put_le64(h + IMG_OFF_RESERVED, img->reserved);
}

static void img_decode_header(const unsigned char h[IMG_HEADER_SIZE],
			      struct image *img)
{
	img->version = get_le32(h + IMG_OFF_VERSION);
	img->hash_scheme = get_le32(h + IMG_OFF_SCHEME);
	img->layout = get_le32(h + IMG_OFF_LAYOUT);
	img->flags = get_le32(h + IMG_OFF_FLAGS);
	img->bits = get_le64(h + IMG_OFF_BITS);
	img->hashes = get_le32(h + IMG_OFF_HASHES);
	img->fpr_ppb = get_le32(h + IMG_OFF_FPR);
	img->seed[0] = get_le32(h + IMG_OFF_SEED0);
	img->seed[1] = get_le32(h + IMG_OFF_SEED1);
	img->adds = get_le64(h + IMG_OFF_ADDS);
	img->capacity = get_le64(h + IMG_OFF_CAPACITY);
	img->compression = get_le32(h + IMG_OFF_COMPRESSION);
	img->crc = get_le32(h + IMG_OFF_CRC);
	img->payload_len = get_le64(h + IMG_OFF_PAYLOAD_LEN);
	img->stored_len = get_le64(h + IMG_OFF_STORED_LEN);
	img->reserved = get_le64(h + IMG_OFF_RESERVED);
}

/* Bits per position: 1, or 4 for the counters of a counting filter. */
static unsigned int img_width(uint32_t flags)
{
	return flags & KBLOOM_CREATE_COUNTING ? 4 : 1;
}

/* The payload's size: the positions in whole 64-bit words (the uapi). */
static uint64_t payload_bytes(uint64_t bits, uint32_t flags)
{
	return bitmap_bytes(bits * img_width(flags));
}

/*
 * Most bytes a deflate of @len bytes may take: zlib's own bound
 * (deflateBound(), about len + len / 4000 + 13 with the zlib wrapper) with
 * room to spare for other compressors. Bounds what a load allocates.
 */
static uint64_t zlib_bound(uint64_t len)
{
	return len + len / 1000 + 64;
}

/* The header alone, everything that can be checked without the payload. */
static int img_check_header(const struct image *img)
{
	const char *f = img->file;
	uint64_t need;

	if (img->version != IMG_VERSION) {
		pr_err("%s: unknown format version %u (bloomctl reads version %d)",
		       f, img->version, IMG_VERSION);
		return -1;
	}
	if (img->hash_scheme != KBLOOM_HASH_SCHEME) {
		pr_err("%s: unknown hash scheme %u (bloomctl knows scheme %d)",
		       f, img->hash_scheme, KBLOOM_HASH_SCHEME);
		return -1;
	}
	if (img->layout != IMG_LAYOUT_STANDARD) {
		pr_err("%s: unknown layout %u (only 0, standard, is defined)",
		       f, img->layout);
		return -1;
	}
	if (img->flags & ~IMG_FLAGS_KNOWN) {
		pr_err("%s: unknown flags 0x%x (only 0x%x, counting, is defined)",
		       f, img->flags, IMG_FLAGS_KNOWN);
		return -1;
	}
	if (img->compression != IMG_COMPRESS_NONE &&
	    img->compression != IMG_COMPRESS_ZLIB) {
		pr_err("%s: unknown compression %u (0 none, 1 zlib)", f,
		       img->compression);
		return -1;
	}
	if (img->reserved) {
		pr_err("%s: reserved header field at offset %d is not zero",
		       f, IMG_OFF_RESERVED);
		return -1;
	}
	if (img->bits < KBLOOM_MIN_BITS || img->bits > KBLOOM_MAX_BITS) {
		pr_err("%s: bits %" PRIu64 " out of range (%llu to %llu)", f,
		       img->bits, KBLOOM_MIN_BITS, KBLOOM_MAX_BITS);
		return -1;
	}
	if (img->hashes < 1 || img->hashes > KBLOOM_MAX_HASHES) {
		pr_err("%s: hashes %u out of range (1 to %d)", f, img->hashes,
		       KBLOOM_MAX_HASHES);
		return -1;
	}
	if (img->fpr_ppb >= KBLOOM_FPR_ONE) {
		pr_err("%s: fpr_ppb %u out of range (0 to %u)", f,
		       img->fpr_ppb, KBLOOM_FPR_ONE - 1);
		return -1;
	}
	need = payload_bytes(img->bits, img->flags);
	if (img->payload_len != need) {
		pr_err("%s: payload length mismatch: header says %" PRIu64 " bytes, a %s filter of %" PRIu64 " bits needs %" PRIu64,
		       f, img->payload_len,
		       img->flags & KBLOOM_CREATE_COUNTING ? "counting" :
		       "plain", img->bits, need);
		return -1;
	}
	if (img->compression == IMG_COMPRESS_NONE &&
	    img->stored_len != img->payload_len) {
		pr_err("%s: stored length mismatch: header says %" PRIu64 " bytes stored, %" PRIu64 " uncompressed, without compression",
		       f, img->stored_len, img->payload_len);
		return -1;
	}
	if (img->compression == IMG_COMPRESS_ZLIB &&
	    img->stored_len > zlib_bound(img->payload_len)) {
		pr_err("%s: stored length mismatch: %" PRIu64 " compressed bytes for %" PRIu64 " uncompressed, more than deflate ever needs (%" PRIu64 ")",
		       f, img->stored_len, img->payload_len,
		       zlib_bound(img->payload_len));
		return -1;
	}
	/* KBLOOM_MAX_BITS counters are 32 GiB: more than i386 can hold. */
	if (img->payload_len > SIZE_MAX / 2 || img->stored_len > SIZE_MAX / 2) {
		pr_err("%s: %" PRIu64 " bytes of payload: too large for this %zu-bit bloomctl",
		       f, img->payload_len, sizeof(size_t) * 8);
		return -1;
	}
	return 0;
}

/* Read up to @len bytes; fewer only at end of file. -1 and errno on error. */
static int64_t read_full(int fd, void *buf, uint64_t len)
{
	unsigned char *p = buf;
	uint64_t done = 0;
	ssize_t n;

	while (done < len) {
		n = read(fd, p + done, len - done < (1U << 30) ?
			 len - done : (1U << 30));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n)
			break;
		done += n;
	}
	return done;
}

/*
 * The stored payload: @len bytes from @fd into a buffer that grows as
 * data comes, so that a lying header on a pipe costs no more memory than
 * the data sent. *got is what was there, less than @len if truncated.
 */
static int read_stored(struct image *img, int fd, uint64_t len,
		       unsigned char **out, uint64_t *got)
{
	unsigned char *buf = NULL, *tmp;
	uint64_t cap = 0, done = 0;
	int64_t n;

	for (;;) {
		if (done == cap) {
			if (cap == len)
				break;
			cap = cap ? cap * 2 : 1U << 20;
			if (cap > len)
				cap = len;
			tmp = realloc(buf, cap ? cap : 1);
			if (!tmp) {
				pr_err("%s: %" PRIu64 " bytes of payload: %s",
				       img->file, len, strerror(ENOMEM));
				free(buf);
				return -1;
			}
			buf = tmp;
		}
		n = read_full(fd, buf + done, cap - done);
		if (n < 0) {
			pr_err("%s: %s", img->file, strerror(errno));
			free(buf);
			return -1;
		}
		done += n;
		if (done < cap)
			break;
	}
	*out = buf;
	*got = done;
	return 0;
}

/* Bytes left before end of file, counting at most about a megabyte. */
static int64_t count_rest(int fd, uint64_t *more)
{
	unsigned char buf[4096];
	uint64_t total = 0;
	int64_t n;

	*more = 0;
	do {
		n = read_full(fd, buf, sizeof(buf));
		if (n < 0)
			return -1;
		total += n;
	} while (n == sizeof(buf) && total < (1U << 20));
	if (n == sizeof(buf))
		*more = 1;
	return total;
}

/* Inflate the stored payload into img->payload, exactly payload_len. */
static int img_inflate(struct image *img, const unsigned char *in)
{
	uint64_t in_left = img->stored_len, out_left = img->payload_len;
	uint64_t in_done, out_done;
	unsigned char extra;
	bool armed = false;
	z_stream zs;
	int zret;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK) {
		pr_err("%s: zlib decompression failed: %s", img->file,
		       zs.msg ? zs.msg : "cannot initialise zlib");
		return -1;
	}
	zs.next_in = in;
	zs.next_out = img->payload;
	for (;;) {
		if (!zs.avail_in && in_left) {
			zs.avail_in = in_left < ZLIB_CHUNK ? in_left : ZLIB_CHUNK;
			in_left -= zs.avail_in;
		}
		if (!zs.avail_out && out_left) {
			zs.avail_out = out_left < ZLIB_CHUNK ? out_left :
				       ZLIB_CHUNK;
			out_left -= zs.avail_out;
		} else if (!zs.avail_out && !armed) {
			/* One byte more than announced shows a lie. */
			zs.next_out = &extra;
			zs.avail_out = 1;
			armed = true;
		}
		zret = inflate(&zs, Z_NO_FLUSH);
		if (armed && !zs.avail_out) {
			pr_err("%s: decompressed size mismatch: the stream gives more than the %" PRIu64 " bytes the header says",
			       img->file, img->payload_len);
			goto fail;
		}
		if (zret == Z_STREAM_END)
			break;
		if (zret == Z_BUF_ERROR && !zs.avail_in && !in_left) {
			pr_err("%s: zlib decompression failed: the compressed stream ends early",
			       img->file);
			goto fail;
		}
		if (zret != Z_OK) {
			pr_err("%s: zlib decompression failed: %s", img->file,
			       zs.msg ? zs.msg : zError(zret));
			goto fail;
		}
	}
	out_done = img->payload_len - out_left - (armed ? 0 : zs.avail_out);
	in_done = img->stored_len - in_left - zs.avail_in;
	inflateEnd(&zs);
	if (out_done != img->payload_len) {
		pr_err("%s: decompressed size mismatch: the stream gives %" PRIu64 " bytes, the header says %" PRIu64,
		       img->file, out_done, img->payload_len);
		return -1;
	}
	if (in_done != img->stored_len) {
		pr_err("%s: zlib decompression failed: %" PRIu64 " bytes after the end of the compressed stream",
		       img->file, img->stored_len - in_done);
		return -1;
	}
	return 0;
fail:
	inflateEnd(&zs);
	return -1;
}

/* The padding past the m positions must be zero: IMPORT insists too. */
static int img_check_padding(const struct image *img)
{
	uint64_t used = img->bits * img_width(img->flags), i;
	uint64_t total = img->payload_len * 8;

	for (i = used; i < total; i++) {
		/* Whole zero bytes at a time, once aligned. */
		if (!(i % 8) && !img->payload[i / 8]) {
			i += 7;
			continue;
		}
		if (img->payload[i / 8] >> (i % 8) & 1) {
			pr_err("%s: non-zero padding: bit %" PRIu64 " of the payload is set, past the %" PRIu64 " %s of the filter",
			       img->file, i, img->bits,
			       img->flags & KBLOOM_CREATE_COUNTING ?
			       "counters" : "bits");
			return -1;
		}
	}
	return 0;
}

/*
 * Read and check an image completely: on success img->payload holds the
 * uncompressed payload, which IMPORT can take as is. Every problem gets
 * its own message, naming the file, before anything touches a filter.
 */
static int read_image(const char *path, struct image *img)
{
	unsigned char h[IMG_HEADER_SIZE], *stored = NULL;
	uint64_t got, more;
	int64_t n, rest;
	uint32_t crc;
	int fd = STDIN_FILENO, ret = -1;

	memset(img, 0, sizeof(*img));
	img->file = strcmp(path, "-") ? path : "stdin";
	if (strcmp(path, "-")) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			pr_err("%s: %s", path, strerror(errno));
			return -1;
		}
	}

	n = read_full(fd, h, sizeof(h));
	if (n < 0) {
		pr_err("%s: %s", img->file, strerror(errno));
		goto out;
	}
	/* The magic first: a short file of something else is no image. */
	if (memcmp(h, IMG_MAGIC, n < IMG_MAGIC_LEN ? n : IMG_MAGIC_LEN)) {
		pr_err("%s: bad magic: not a kbloom filter image", img->file);
		goto out;
	}
	if (n < IMG_HEADER_SIZE) {
		pr_err("%s: truncated: header needs %d bytes, file has %" PRId64,
		       img->file, IMG_HEADER_SIZE, n);
		goto out;
	}
	img_decode_header(h, img);
	if (img_check_header(img))
		goto out;

	if (read_stored(img, fd, img->stored_len, &stored, &got))
		goto out;
	if (got < img->stored_len) {
		pr_err("%s: truncated: header says %" PRIu64 " bytes of payload, file has %" PRIu64 " after the header",
		       img->file, img->stored_len, got);
		goto out;
	}
	rest = count_rest(fd, &more);
	if (rest < 0) {
		pr_err("%s: %s", img->file, strerror(errno));
		goto out;
	}
	if (rest) {
		pr_err("%s: trailing garbage: %s%" PRId64 " bytes after the payload",
		       img->file, more ? "more than " : "", rest);
		goto out;
	}
	img->file_bytes = IMG_HEADER_SIZE + img->stored_len;

	put_le32(h + IMG_OFF_CRC, 0);
	crc = crc32c(crc32c(0, h, sizeof(h)), stored, img->stored_len);
	if (crc != img->crc) {
		pr_err("%s: bad CRC32C: header says 0x%08x, contents give 0x%08x (corrupt file)",
		       img->file, img->crc, crc);
		goto out;
	}

	if (img->compression == IMG_COMPRESS_NONE) {
		img->payload = stored;
		stored = NULL;
	} else {
		img->payload = malloc(img->payload_len);
		if (!img->payload) {
			pr_err("%s: %" PRIu64 " bytes of payload: %s",
			       img->file, img->payload_len, strerror(ENOMEM));
			goto out;
		}
		if (img_inflate(img, stored))
			goto out;
	}
	if (img_check_padding(img))
		goto out;
	ret = 0;
out:
	if (ret) {
		free(img->payload);
		img->payload = NULL;
	}
	free(stored);
	if (fd != STDIN_FILENO)
		close(fd);
	return ret;
}

/* Positions set (non-zero counters) and, if counting, saturated ones. */
static void img_count(const struct image *img, uint64_t *set,
		      uint64_t *saturated)
{
	uint64_t i;

	*set = 0;
	*saturated = 0;
	/* The padding is zero: whole bytes can be counted. */
	for (i = 0; i < img->payload_len; i++) {
		unsigned char b = img->payload[i];

		if (!(img->flags & KBLOOM_CREATE_COUNTING)) {
			*set += __builtin_popcount(b);
			continue;
		}
		*set += !!(b & 0x0f) + !!(b & 0xf0);
		*saturated += ((b & 0x0f) == KBLOOM_COUNTER_MAX) +
			      ((b >> 4) == KBLOOM_COUNTER_MAX);
	}
}

static int cmd_inspect(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	bool counting;
	struct image img;
	uint64_t set, sat;
	double m, x;
	int c, ret;

	while ((c = next_opt(argc, argv, COMMON_SHORTOPTS, longopts)) != -1) {
		ret = common_opt(cmd, c);
		if (ret != INT_MAX)
			return ret < 0 ? EXIT_ERROR : ret;
	}
	if (optind >= argc) {
		pr_err("%s: missing FILE", cmd->name);
		return EXIT_ERROR;
	}
	if (optind + 1 < argc) {
		pr_err("%s: unexpected argument '%s'", cmd->name,
		       argv[optind + 1]);
		return EXIT_ERROR;
	}
	if (read_image(argv[optind], &img))
		return EXIT_ERROR;

	img_count(&img, &set, &sat);
	counting = img.flags & KBLOOM_CREATE_COUNTING;
	m = img.bits;
	x = set;
	/* The seed is a secret: it is never printed. */
	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, "file", img.file);
		jw_kv_u64(jw, "format_version", img.version);
		jw_kv_u64(jw, "hash_scheme", img.hash_scheme);
		jw_kv_u64(jw, "layout", img.layout);
		jw_kv_u64(jw, "flags", img.flags);
		jw_kv_bool(jw, "counting", counting);
		jw_kv_u64(jw, "bits", img.bits);
		jw_kv_u64(jw, "hashes", img.hashes);
		jw_kv_u64(jw, "capacity", img.capacity);
		if (img.fpr_ppb)
			jw_kv_double(jw, "fpr_target", img.fpr_ppb / 1e9);
		else
			jw_kv_null(jw, "fpr_target");
		jw_kv_u64(jw, "adds", img.adds);
		jw_kv_string(jw, "compression",
			     img.compression == IMG_COMPRESS_ZLIB ? "zlib" :
			     "none");
		jw_kv_u64(jw, "payload_bytes", img.payload_len);
		jw_kv_u64(jw, "stored_bytes", img.stored_len);
		jw_kv_u64(jw, "file_bytes", img.file_bytes);
		jw_kv_u64(jw, "crc32c", img.crc);
		jw_kv_u64(jw, "bits_set", set);
		jw_kv_u64(jw, "saturated", sat);
		jw_kv_double(jw, "fill_ratio", x / m);
		jw_kv_double(jw, "estimated_fpr", pow(x / m, img.hashes));
		jw_kv_double(jw, "estimated_keys",
			     estimate_keys(set, img.bits, img.hashes));
		jw_end_object(jw);
	} else {
		printf("image '%s'\n", img.file);
		printf("  format version: %u\n", img.version);
		printf("  hash scheme:    %u\n", img.hash_scheme);
		printf("  layout:         %u (standard)\n", img.layout);
		printf("  counting:       %s\n", counting ? "yes" : "no");
		printf("  bits:           %" PRIu64 "\n", img.bits);
		printf("  hashes:         %u\n", img.hashes);
		if (img.capacity)
			printf("  capacity:       %" PRIu64 "\n", img.capacity);
		else
			printf("  capacity:       -\n");
		if (img.fpr_ppb)
			printf("  fpr target:     %.9g\n", img.fpr_ppb / 1e9);
		else
			printf("  fpr target:     -\n");
		printf("  adds:           %" PRIu64 "\n", img.adds);
		if (img.compression == IMG_COMPRESS_ZLIB)
			printf("  compression:    zlib, %" PRIu64 " bytes for %" PRIu64 "\n",
			       img.stored_len, img.payload_len);
		else
			printf("  compression:    none, %" PRIu64 " bytes\n",
			       img.payload_len);
		printf("  crc32c:         0x%08x\n", img.crc);
		printf("  %s   %" PRIu64 " (%.2f%% full)\n",
		       counting ? "counters set:" : "bits set:    ", set,
		       100 * x / m);
		if (counting)
			printf("  saturated:      %" PRIu64 "\n", sat);
		printf("  estimated fpr:  %.3g\n", pow(x / m, img.hashes));
		if (set < img.bits)
			printf("  estimated keys: %.0f\n",
			       estimate_keys(set, img.bits, img.hashes));
		else
			printf("  estimated keys: - (filter full)\n");
	}
	free(img.payload);
	return 0;
}

/* Deflate @len bytes into a new buffer, zlib format, default level. */
static int img_deflate(const unsigned char *in, uint64_t len,
		       unsigned char **out, uint64_t *out_len)
{
	uint64_t cap = zlib_bound(len), in_left = len, out_left = cap;
	unsigned char *buf;
	z_stream zs;
	int zret;

	buf = malloc(cap);
	if (!buf) {
		pr_err("compressing %" PRIu64 " bytes: %s", len,
		       strerror(ENOMEM));
		return -1;
	}
	memset(&zs, 0, sizeof(zs));
	if (deflateInit(&zs, Z_DEFAULT_COMPRESSION) != Z_OK) {
		pr_err("zlib: %s", zs.msg ? zs.msg : "cannot initialise");
		free(buf);
		return -1;
	}
	zs.next_in = in;
	zs.next_out = buf;
	for (;;) {
		if (!zs.avail_in && in_left) {
			zs.avail_in = in_left < ZLIB_CHUNK ? in_left : ZLIB_CHUNK;
			in_left -= zs.avail_in;
		}
		if (!zs.avail_out && out_left) {
			zs.avail_out = out_left < ZLIB_CHUNK ? out_left :
				       ZLIB_CHUNK;
			out_left -= zs.avail_out;
		}
		zret = deflate(&zs, in_left ? Z_NO_FLUSH : Z_FINISH);
		if (zret == Z_STREAM_END)
			break;
		/* zlib_bound() is above deflateBound(): cannot run out. */
		if ((zret != Z_OK && zret != Z_BUF_ERROR) ||
		    (!zs.avail_out && !out_left)) {
			pr_err("zlib: compression failed: %s",
			       zs.msg ? zs.msg : zError(zret));
			deflateEnd(&zs);
			free(buf);
			return -1;
		}
	}
	*out_len = cap - out_left - zs.avail_out;
	deflateEnd(&zs);
	*out = buf;
	return 0;
}

static int write_full(int fd, const void *buf, uint64_t len)
{
	const unsigned char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len < (1U << 30) ? len : (1U << 30));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * KBLOOM_IOC_EXPORT: ask for the size, allocate, fetch; again should the
 * filter have been replaced by a larger one meanwhile.
 */
static int export_filter(int fd, const char *name, struct kbloom_image *ki,
			 unsigned char **payload)
{
	unsigned char *buf = NULL, *tmp;
	uint64_t cap = 0;
	int err;

	for (;;) {
		memset(ki, 0, sizeof(*ki));
		set_name(ki->name, name);
		ki->payload = (__u64)(uintptr_t)buf;
		ki->payload_len = cap;
		if (!ioctl(fd, KBLOOM_IOC_EXPORT, ki))
			break;
		err = errno;
		if (err != ENOBUFS || ki->payload_len <= cap) {
			pr_err("filter '%s': %s", name, kerr(err));
			free(buf);
			return -1;
		}
		if (ki->payload_len > SIZE_MAX / 2) {
			pr_err("filter '%s': %llu bytes: too large for this %zu-bit bloomctl",
			       name, (unsigned long long)ki->payload_len,
			       sizeof(size_t) * 8);
			free(buf);
			return -1;
		}
		cap = ki->payload_len;
		tmp = realloc(buf, cap);
		if (!tmp) {
			pr_err("filter '%s': %s", name, strerror(ENOMEM));
			free(buf);
			return -1;
		}
		buf = tmp;
	}
	*payload = buf;
	return 0;
}

/* Make the rename durable: fsync the directory holding @path. */
static void sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd;

	if (!copy)
		return;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

/*
 * Write the image to @path through @path.tmp and a rename, so that a
 * reader sees the old file or the new one, never half of one. Mode 0600:
 * the image carries the filter's secret seed.
 */
static int write_image_file(const char *path, const unsigned char *h,
			    const unsigned char *stored, uint64_t stored_len)
{
	char *tmp;
	int fd, err;

	if (asprintf(&tmp, "%s.tmp", path) < 0) {
		pr_err("%s", strerror(ENOMEM));
		return -1;
	}
	/* O_NOFOLLOW: a symlink planted at .tmp must not be written through. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		pr_err("%s: %s", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	/* An existing .tmp keeps its mode through O_CREAT: set it. */
	if (fchmod(fd, 0600) || write_full(fd, h, IMG_HEADER_SIZE) ||
	    write_full(fd, stored, stored_len) || fsync(fd)) {
		err = errno;
		close(fd);
		goto fail;
	}
	if (close(fd)) {
		err = errno;
		goto fail;
	}
	if (rename(tmp, path)) {
		err = errno;
		pr_err("%s: cannot rename %s: %s", path, tmp, strerror(err));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	sync_dir(path);
	free(tmp);
	return 0;
fail:
	pr_err("%s: %s", tmp, strerror(err));
	unlink(tmp);
	free(tmp);
	return -1;
}

static int cmd_save(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "compress",	no_argument,	NULL, OPT_COMPRESS },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	unsigned char h[IMG_HEADER_SIZE], *payload = NULL, *zbuf = NULL;
	const unsigned char *stored;
	bool compress = false, to_stdout;
	const char *name, *path;
	struct kbloom_image ki;
	struct image img;
	int c, ret, fd;

	while ((c = next_opt(argc, argv, COMMON_SHORTOPTS, longopts)) != -1) {
		ret = common_opt(cmd, c);
		if (ret == INT_MAX)
			continue;
		if (ret >= 0)
			return ret;
		if (c != OPT_COMPRESS)
			return EXIT_ERROR;
		compress = true;
	}
	if (optind + 2 != argc) {
		pr_err(optind + 2 > argc ? "%s: needs NAME and FILE" :
		       "%s: unexpected argument", cmd->name);
		return EXIT_ERROR;
	}
	name = argv[optind];
	path = argv[optind + 1];
	if (check_name(name))
		return EXIT_ERROR;
	to_stdout = !strcmp(path, "-");
	if (to_stdout && jw) {
		pr_err("save: FILE '-' writes the image to stdout: no JSON there");
		return EXIT_ERROR;
	}
	if (to_stdout && isatty(STDOUT_FILENO)) {
		pr_err("save: refusing to write a binary image to a terminal");
		return EXIT_ERROR;
	}

	fd = open_device(O_RDONLY);
	if (fd < 0)
		return EXIT_ERROR;
	ret = export_filter(fd, name, &ki, &payload);
	close(fd);
	if (ret)
		return EXIT_ERROR;
	ret = EXIT_ERROR;

	memset(&img, 0, sizeof(img));
	img.file = to_stdout ? "stdout" : path;
	img.version = IMG_VERSION;
	img.hash_scheme = ki.hash_scheme;
	img.layout = IMG_LAYOUT_STANDARD;
	img.flags = ki.flags;
	img.bits = ki.bits;
	img.hashes = ki.hashes;
	img.fpr_ppb = ki.fpr_ppb;
	img.seed[0] = ki.seed[0];
	img.seed[1] = ki.seed[1];
	img.adds = ki.adds;
	img.capacity = ki.capacity;
	img.payload_len = ki.payload_len;
	img.stored_len = ki.payload_len;
	/* Write nothing a load would refuse. */
	if (img_check_header(&img)) {
		pr_err("filter '%s': the module exported an image bloomctl cannot load",
		       name);
		goto out;
	}
	img.payload = payload;
	if (img_check_padding(&img)) {
		pr_err("filter '%s': the module exported an image bloomctl cannot load",
		       name);
		goto out;
	}

	stored = payload;
	if (compress) {
		if (img_deflate(payload, img.payload_len, &zbuf,
				&img.stored_len))
			goto out;
		img.compression = IMG_COMPRESS_ZLIB;
		stored = zbuf;
	}
	img_encode_header(h, &img);
	img.crc = crc32c(crc32c(0, h, sizeof(h)), stored, img.stored_len);
	put_le32(h + IMG_OFF_CRC, img.crc);

	if (to_stdout) {
		/* Nothing else goes to stdout: the image is the output. */
		if (fflush(stdout) || write_full(STDOUT_FILENO, h, sizeof(h)) ||
		    write_full(STDOUT_FILENO, stored, img.stored_len)) {
			pr_err("stdout: %s", strerror(errno));
			goto out;
		}
		ret = 0;
		goto out;
	}
	if (write_image_file(path, h, stored, img.stored_len))
		goto out;

	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, "saved", name);
		jw_kv_string(jw, "file", path);
		jw_kv_u64(jw, "bits", img.bits);
		jw_kv_u64(jw, "hashes", img.hashes);
		jw_kv_bool(jw, "counting", img.flags & KBLOOM_CREATE_COUNTING);
		jw_kv_string(jw, "compression", compress ? "zlib" : "none");
		jw_kv_u64(jw, "payload_bytes", img.payload_len);
		jw_kv_u64(jw, "file_bytes", IMG_HEADER_SIZE + img.stored_len);
		jw_end_object(jw);
	} else {
		printf("saved '%s' to %s: %" PRIu64 " %s, %u hashes, %" PRIu64 " bytes\n",
		       name, path, img.bits,
		       img.flags & KBLOOM_CREATE_COUNTING ? "counters" : "bits",
		       img.hashes, IMG_HEADER_SIZE + img.stored_len);
	}
	ret = 0;
out:
	free(zbuf);
	free(payload);
	return ret;
}

/* The module's own limits, known only now that the device is open. */
static int check_image_module(int fd, const struct image *img)
{
	struct kbloom_version v;

	memset(&v, 0, sizeof(v));
	if (ioctl(fd, KBLOOM_IOC_VERSION, &v)) {
		pr_err("%s: %s", device_path, kerr(errno));
		return -1;
	}
	if (!(v.features & KBLOOM_FEATURE_IMAGE)) {
		pr_err("%s: the module does not support filter images",
		       device_path);
		return -1;
	}
	if (img->hash_scheme != v.hash_scheme) {
		pr_err("%s: hash scheme %u, but the module uses scheme %u: its keys would map to other bits",
		       img->file, img->hash_scheme, v.hash_scheme);
		return -1;
	}
	if ((v.min_bits && img->bits < v.min_bits) ||
	    (v.max_bits && img->bits > v.max_bits)) {
		pr_err("%s: %" PRIu64 " bits, outside the module's range %llu to %llu",
		       img->file, img->bits, (unsigned long long)v.min_bits,
		       (unsigned long long)v.max_bits);
		return -1;
	}
	if (v.max_hashes && img->hashes > v.max_hashes) {
		pr_err("%s: %u hashes, more than the module's %u", img->file,
		       img->hashes, v.max_hashes);
		return -1;
	}
	return 0;
}

static int cmd_load(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "replace",	no_argument,	NULL, OPT_REPLACE },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct kbloom_image ki;
	const char *name, *path;
	bool replace = false;
	struct image img;
	int c, ret, fd, err;

	while ((c = next_opt(argc, argv, COMMON_SHORTOPTS, longopts)) != -1) {
		ret = common_opt(cmd, c);
		if (ret == INT_MAX)
			continue;
		if (ret >= 0)
			return ret;
		if (c != OPT_REPLACE)
			return EXIT_ERROR;
		replace = true;
	}
	if (optind + 2 != argc) {
		pr_err(optind + 2 > argc ? "%s: needs NAME and FILE" :
		       "%s: unexpected argument", cmd->name);
		return EXIT_ERROR;
	}
	name = argv[optind];
	path = argv[optind + 1];
	if (check_name(name))
		return EXIT_ERROR;

	/* The whole file is checked before the device is even opened. */
	if (read_image(path, &img))
		return EXIT_ERROR;
	ret = EXIT_ERROR;
	fd = open_device(O_RDWR);
	if (fd < 0)
		goto out;
	if (check_image_module(fd, &img))
		goto out_close;

	memset(&ki, 0, sizeof(ki));
	set_name(ki.name, name);
	ki.bits = img.bits;
	ki.hashes = img.hashes;
	ki.flags = img.flags;
	ki.seed[0] = img.seed[0];
	ki.seed[1] = img.seed[1];
	ki.adds = img.adds;
	ki.capacity = img.capacity;
	ki.fpr_ppb = img.fpr_ppb;
	ki.hash_scheme = img.hash_scheme;
	ki.payload = (__u64)(uintptr_t)img.payload;
	ki.payload_len = img.payload_len;
	ki.import_flags = replace ? KBLOOM_IMPORT_REPLACE : 0;
	if (ioctl(fd, KBLOOM_IOC_IMPORT, &ki)) {
		err = errno;
		if (err == EEXIST)
			pr_err("filter '%s' already exists (load --replace swaps in the image's contents)",
			       name);
		else if (err == ENOENT && replace)
			pr_err("filter '%s': no such filter (--replace needs an existing filter; without it, load creates one)",
			       name);
		else if (err == EFBIG)
			pr_err("filter '%s': %s: %" PRIu64 " bytes, larger than the module's per-filter limit (its max_filter_bytes parameter)",
			       name, img.file, img.payload_len);
		else if (err == ENOSPC)
			pr_err("filter '%s': %s: %" PRIu64 " bytes would exceed the module's memory budget (its max_memory parameter)",
			       name, img.file, img.payload_len);
		else if (err == EINVAL)
			pr_err("filter '%s': the module rejected %s as invalid",
			       name, img.file);
		else
			pr_err("filter '%s': %s", name, kerr(err));
		goto out_close;
	}
	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, "loaded", name);
		jw_kv_string(jw, "file", img.file);
		jw_kv_bool(jw, "replaced", replace);
		jw_kv_u64(jw, "bits", img.bits);
		jw_kv_u64(jw, "hashes", img.hashes);
		jw_kv_bool(jw, "counting", img.flags & KBLOOM_CREATE_COUNTING);
		jw_end_object(jw);
	} else {
		printf("%s '%s' from %s: %" PRIu64 " %s, %u hashes\n",
		       replace ? "replaced" : "loaded", name, img.file,
		       img.bits,
		       img.flags & KBLOOM_CREATE_COUNTING ? "counters" : "bits",
		       img.hashes);
	}
	ret = 0;
out_close:
	close(fd);
out:
	free(img.payload);
	return ret;
}

static int cmd_help(const struct cmd *cmd, int argc, char **argv);

#define KEY_OPTIONS \
	"  --file F             read keys from F, one per line (- is stdin)\n" \
	"  --hex                keys are hex-encoded binary\n" \
	"  --batch N            keys per ioctl (default 65536; 1: one-key ioctls)\n" \
	"  --count              print only the totals\n"

static const struct cmd cmds[] = {
	{ "create", cmd_create,
	  "NAME {--capacity N --fpr P | --bits M --hashes K [--capacity N] | --like OLD} [--counting]",
	  "Create a filter, sized for N keys at false-positive rate P, or by M and K,\n"
	  "or with every parameter and the seed of OLD, so that the two can be merged.",
	  "  --capacity N         design capacity in keys\n"
	  "  --fpr P              target false-positive rate, 0 < P < 1\n"
	  "  --bits M             size in bits\n"
	  "  --hashes K           number of hash functions\n"
	  "  --counting           4-bit counters instead of bits: keys can be removed\n"
	  "  --like OLD           copy OLD's size, hashes, counting and seed\n" },
	{ "destroy", cmd_destroy, "NAME", "Destroy a filter.", NULL },
	{ "clear", cmd_clear, "NAME", "Zero every bit and counter of a filter.",
	  NULL },
	{ "list", cmd_list, "", "List the filters.", NULL },
	{ "show", cmd_show, "NAME", "Show a filter's parameters and statistics.",
	  NULL },
	{ "add", cmd_add, "NAME [--file F] [--hex] [--batch N] [--count] [KEY...]",
	  "Add keys (the arguments, else one per line from stdin or --file).",
	  KEY_OPTIONS },
	{ "query", cmd_query,
	  "NAME [--file F] [--hex] [--batch N] [--count] [KEY...]",
	  "Query keys: print KEY maybe|no. Exit 0 if all may be present, 1 if not.",
	  KEY_OPTIONS },
	{ "test-and-add", cmd_test_and_add,
	  "NAME [--file F] [--hex] [--batch N] [--count] [KEY...]",
	  "Add keys, printing KEY seen|new. Exit 0 if all were seen, 1 if not.",
	  KEY_OPTIONS },
	{ "remove", cmd_remove,
	  "NAME [--file F] [--hex] [--batch N] [--count] [KEY...]",
	  "Remove keys from a counting filter, printing KEY removed|absent.\n"
	  "Exit 0 if all were removed, 1 if some were absent (and left alone).",
	  KEY_OPTIONS },
	{ "merge", cmd_merge, "DST SRC",
	  "Add every key of SRC to DST (SRC made with --like DST, or alike).",
	  NULL },
	{ "estimate", cmd_estimate, "A B",
	  "Estimate the keys of A, of B, of their union and intersection, and\n"
	  "their Jaccard similarity, from two compatible filters.",
	  NULL },
	{ "save", cmd_save, "NAME FILE [--compress]",
	  "Save a filter, its seed included, to an image FILE (- is stdout).",
	  "  --compress           deflate the contents with zlib\n" },
	{ "load", cmd_load, "NAME FILE [--replace]",
	  "Create NAME from the image FILE (- is stdin), after checking all of it.",
	  "  --replace            swap the contents of the existing NAME atomically\n" },
	{ "inspect", cmd_inspect, "FILE",
	  "Check an image FILE completely and show its header; needs no module.",
	  NULL },
	{ "calc", cmd_calc,
	  "{--capacity N --fpr P | --bits M --hashes K --capacity N}",
	  "Compute a filter's size, or its false-positive rate, without the module.",
	  "  --capacity N         number of keys\n"
	  "  --fpr P              target false-positive rate, 0 < P < 1\n"
	  "  --bits M             size in bits\n"
	  "  --hashes K           number of hash functions\n" },
	{ "version", cmd_version, "",
	  "Show bloomctl's version and the module's API version and limits.",
	  NULL },
	{ "help", cmd_help, "", "Show this help.", NULL },
};

#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *f)
{
	size_t i;

	fputs("Usage: bloomctl [GLOBAL OPTIONS] SUBCOMMAND [ARGS...]\n\n"
	      "Subcommands:\n", f);
	for (i = 0; i < NR_CMDS; i++)
		/* The first line of the help; cmd_usage() shows all of it. */
		fprintf(f, "  %-13s %.*s\n", cmds[i].name,
			(int)strcspn(cmds[i].help, "\n"), cmds[i].help);
	fputs("\nGlobal options:\n"
	      "  -j, --json           JSON output\n"
	      "  -p, --pretty         pretty-printed JSON output (implies -j)\n"
	      "  -d, --device PATH    the kbloom device (default $BLOOMCTL_DEVICE or "
	      DEFAULT_DEVICE ")\n"
	      "  -h, --help           show this help\n"
	      "  -V, --version        show the version\n"
	      "\n'bloomctl SUBCOMMAND --help' describes a subcommand; see bloomctl(8).\n"
	      "Exit status: 0 success, 1 a key absent, new or not removed, 2 an error.\n", f);
}

static int cmd_help(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	int c, ret;

	while ((c = next_opt(argc, argv, COMMON_SHORTOPTS, longopts)) != -1) {
		ret = common_opt(cmd, c);
		if (ret != INT_MAX)
			return ret < 0 ? EXIT_ERROR : ret;
	}
	if (no_args(cmd, argc, argv))
		return EXIT_ERROR;
	usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json",	no_argument,	   NULL, 'j' },
		{ "pretty",	no_argument,	   NULL, 'p' },
		{ "device",	required_argument, NULL, 'd' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ "version",	no_argument,	   NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *cmd = NULL;
	const char *env = getenv("BLOOMCTL_DEVICE");
	bool version = false;
	int c, ret;
	size_t i;

	if (env && *env)
		device_path = env;
	opterr = 0;
	/* '+': stop at the subcommand, its options are its own. */
	while ((c = next_opt(argc, argv, "+:jpd:hV", longopts)) != -1) {
		switch (c) {
		case 'j':
			enable_json(false);
			break;
		case 'p':
			enable_json(true);
			break;
		case 'd':
			device_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			version = true;
			break;
		default:
			return EXIT_ERROR;
		}
	}

	if (version) {
		for (i = 0; i < NR_CMDS; i++)
			if (!strcmp(cmds[i].name, "version"))
				cmd = &cmds[i];
		argc = 1;
		argv += optind - 1;
	} else if (optind >= argc) {
		usage(stderr);
		pr_err("missing SUBCOMMAND");
		return EXIT_ERROR;
	} else {
		for (i = 0; i < NR_CMDS; i++)
			if (!strcmp(cmds[i].name, argv[optind]))
				cmd = &cmds[i];
		if (!cmd) {
			pr_err("unknown subcommand '%s' (try 'bloomctl --help')",
			       argv[optind]);
			return EXIT_ERROR;
		}
		argc -= optind;
		argv += optind;
	}

	/* Big writes: a query may print millions of lines. */
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOFBF, 1 << 16);

	/* 0 makes glibc start afresh, and in argument-permuting mode. */
	optind = 0;
	ret = cmd->fn(cmd, argc, argv);

	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "bloomctl: stdout: %s\n", strerror(errno));
		return EXIT_ERROR;
	}
	return ret;
}
