// SPDX-License-Identifier: GPL-2.0
/*
 * libxt_bloom: the iptables/ip6tables extension for the "bloom" match
 * (kmod/xt_bloom.c). Loaded by iptables-legacy and iptables-nft from the
 * xtables library directory (pkg-config --variable=xtlibdir xtables).
 *
 *	-m bloom --name NAME --key FIELDS [--src-prefix N] [--dst-prefix N]
 *		[!] --test | --add | [!] --test-and-add | --remove
 *		[--capacity N --fpr P [--window W [--generations G]]
 *		 [--layout blocked] [--counting] [--hash siphash|jhash]]
 *
 * Revision 1 carries the filter's shape, when given, so that the kernel
 * makes a missing filter (a saved ruleset restored at boot); revision 0,
 * for kernels without it, only names the filter.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xtables.h>
#include <linux/kbloom.h>
#include <linux/netfilter/xt_bloom.h>

#define BLOOM_SYSFS "/sys/kernel/bloom"

/*
 * The test build (make unchecked/libxt_bloom.so) hands what it is given
 * to the kernel unchecked: a name that fills all XT_BLOOM_NAME_MAX bytes,
 * --key as a number (0x20), any prefix up to 255, "!" on every mode, no
 * look at sysfs. tools/vm/tests.d/packets.sh uses it to reach the
 * kernel's own checks; it is never installed.
 */
#ifdef XT_BLOOM_UNCHECKED
#define BLOOM_CHECKED	0
#define BLOOM_MODE_INV	XTOPT_INVERT
#else
#define BLOOM_CHECKED	1
#define BLOOM_MODE_INV	0
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))
#endif

enum {
	O_NAME = 0,
	O_KEY,
	O_SRC_PREFIX,
	O_DST_PREFIX,
	O_TEST,
	O_ADD,
	O_TEST_AND_ADD,
	O_REMOVE,
	O_CAPACITY,
	O_FPR,
	O_WINDOW,
	O_GENERATIONS,
	O_LAYOUT,
	O_COUNTING,
	O_HASH,
	F_NAME = 1 << O_NAME,
	F_KEY = 1 << O_KEY,
	F_SRC_PREFIX = 1 << O_SRC_PREFIX,
	F_DST_PREFIX = 1 << O_DST_PREFIX,
	F_MODE = (1 << O_TEST) | (1 << O_ADD) | (1 << O_TEST_AND_ADD) |
		 (1 << O_REMOVE),
	F_CAPACITY = 1 << O_CAPACITY,
	F_FPR = 1 << O_FPR,
	F_WINDOW = 1 << O_WINDOW,
	F_GENERATIONS = 1 << O_GENERATIONS,
	F_SHAPE = F_CAPACITY | F_FPR | F_WINDOW | F_GENERATIONS |
		  (1 << O_LAYOUT) | (1 << O_COUNTING) | (1 << O_HASH),
};

/* A windowed filter's generations when --window comes alone. */
#define BLOOM_GENERATIONS	4

/* The options of both revisions. */
#define BLOOM_OPTS \
	{.name = "name", .id = O_NAME, .type = XTTYPE_STRING, \
	 .flags = XTOPT_MAND}, \
	{.name = "key", .id = O_KEY, .type = XTTYPE_STRING, \
	 .flags = XTOPT_MAND}, \
	{.name = "src-prefix", .id = O_SRC_PREFIX, .type = XTTYPE_UINT8}, \
	{.name = "dst-prefix", .id = O_DST_PREFIX, .type = XTTYPE_UINT8}, \
	{.name = "test", .id = O_TEST, .type = XTTYPE_NONE, \
	 .excl = F_MODE, .flags = XTOPT_INVERT}, \
	{.name = "add", .id = O_ADD, .type = XTTYPE_NONE, .excl = F_MODE, \
	 .flags = BLOOM_MODE_INV}, \
	{.name = "test-and-add", .id = O_TEST_AND_ADD, .type = XTTYPE_NONE, \
	 .excl = F_MODE, .flags = XTOPT_INVERT}, \
	{.name = "remove", .id = O_REMOVE, .type = XTTYPE_NONE, \
	 .excl = F_MODE, .flags = BLOOM_MODE_INV}

static const struct xt_option_entry bloom_opts[] = {
	BLOOM_OPTS,
	XTOPT_TABLEEND,
};

/* Revision 1: the same, and the filter's shape. */
static const struct xt_option_entry bloom_opts1[] = {
	BLOOM_OPTS,
	{.name = "capacity", .id = O_CAPACITY, .type = XTTYPE_UINT64,
	 .min = 1},
	{.name = "fpr", .id = O_FPR, .type = XTTYPE_STRING},
	{.name = "window", .id = O_WINDOW, .type = XTTYPE_STRING},
	{.name = "generations", .id = O_GENERATIONS, .type = XTTYPE_UINT32,
	 .min = 2, .max = KBLOOM_MAX_GENERATIONS},
	{.name = "layout", .id = O_LAYOUT, .type = XTTYPE_STRING},
	{.name = "counting", .id = O_COUNTING, .type = XTTYPE_NONE},
	{.name = "hash", .id = O_HASH, .type = XTTYPE_STRING},
	XTOPT_TABLEEND,
};

/* The fields, in the order they enter the key (and are printed). */
static const struct {
	const char *name;
	unsigned int bit;
} bloom_fields[] = {
	{"saddr", KBLOOM_FLOW_SADDR},
	{"daddr", KBLOOM_FLOW_DADDR},
	{"proto", KBLOOM_FLOW_PROTO},
	{"sport", KBLOOM_FLOW_SPORT},
	{"dport", KBLOOM_FLOW_DPORT},
};

#define BLOOM_NFIELDS ARRAY_SIZE(bloom_fields)

static_assert(XT_BLOOM_NAME_MAX == KBLOOM_NAME_MAX,
	      "xt_bloom and kbloom name lengths differ");

static void bloom_help(void);

static void bloom_help1(void)
{
	bloom_help();
	printf("and, so that the rule makes the filter when it is missing:\n"
"  --capacity N --fpr P     its design capacity and false-positive rate\n"
"  --window W               windowed: forget keys after W (ms, s, m, h)\n"
"  --generations G          generations of a windowed filter (default 4)\n"
"  --layout plain|blocked   its layout (default plain)\n"
"  --counting               4-bit counters (for --remove)\n"
"  --hash siphash|jhash     its hash (default: the module's)\n"
"A filter that exists must have that shape; one the rule made goes with\n"
"its last rule, unless 'bloomctl create' of the same shape adopted it.\n");
}

static void bloom_help(void)
{
	printf("bloom match options:\n"
"  --name NAME              the kbloom filter (bloomctl create NAME ...)\n"
"  --key FIELDS             what the key is made of: a comma list of\n"
"                           saddr, daddr, proto, sport, dport\n"
"  --src-prefix N           mask the source address to N bits\n"
"                           (default 32, or 128 for ip6tables)\n"
"  --dst-prefix N           likewise the destination address\n"
"and one of:\n"
"[!] --test                 match if the key may be in the filter\n"
"    --add                  add the key; always match\n"
"[!] --test-and-add         match if the key was there already; add it\n"
"    --remove               remove the key (counting filters); match if\n"
"                           it was removed\n");
}

static unsigned int bloom_full(unsigned int family)
{
	return family == NFPROTO_IPV6 ? 128 : 32;
}

static void bloom_init(struct xt_entry_match *m, unsigned int family)
{
	struct xt_bloom_mtinfo *info = (void *)m->data;

	info->src_prefix = bloom_full(family);
	info->dst_prefix = bloom_full(family);
}

static void bloom_init4(struct xt_entry_match *m)
{
	bloom_init(m, NFPROTO_IPV4);
}

static void bloom_init6(struct xt_entry_match *m)
{
	bloom_init(m, NFPROTO_IPV6);
}

static bool bloom_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/* What the kernel accepts as a filter name (kbloom_name_valid()). */
static void bloom_parse_name(struct xt_bloom_mtinfo *info, const char *name)
{
	size_t len = strlen(name), i;

	if (!BLOOM_CHECKED) {
		memcpy(info->name, name,
		       len < sizeof(info->name) ? len + 1 : sizeof(info->name));
		return;
	}
	if (len >= sizeof(info->name))
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: filter name \"%s\" too long (at most %zu characters)",
			      name, sizeof(info->name) - 1);
	if (!len || name[0] == '.')
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: bad filter name \"%s\"", name);
	for (i = 0; i < len; i++)
		if (!bloom_name_char(name[i]))
			xtables_error(PARAMETER_PROBLEM,
				      "bloom: bad filter name \"%s\" (letters, digits, '_', '.', '-')",
				      name);
	memcpy(info->name, name, len + 1);
}

static void bloom_parse_key(struct xt_bloom_mtinfo *info, const char *arg)
{
	const char *p = arg;
	unsigned int i;
	size_t len;

	info->fields = 0;
	if (!BLOOM_CHECKED && !strncmp(arg, "0x", 2)) {
		info->fields = strtoul(arg, NULL, 16);
		return;
	}
	for (;;) {
		len = strcspn(p, ",");
		for (i = 0; i < BLOOM_NFIELDS; i++)
			if (strlen(bloom_fields[i].name) == len &&
			    !strncmp(p, bloom_fields[i].name, len))
				break;
		if (i == BLOOM_NFIELDS)
			xtables_error(PARAMETER_PROBLEM,
				      "bloom: unknown field \"%.*s\" in --key %s (fields: saddr, daddr, proto, sport, dport)",
				      (int)len, p, arg);
		if (info->fields & bloom_fields[i].bit)
			xtables_error(PARAMETER_PROBLEM,
				      "bloom: field \"%s\" twice in --key %s",
				      bloom_fields[i].name, arg);
		info->fields |= bloom_fields[i].bit;
		if (!p[len])
			break;
		p += len + 1;
	}
}

static void bloom_parse(struct xt_option_call *cb, unsigned int family)
{
	struct xt_bloom_mtinfo *info = cb->data;
	unsigned int full = bloom_full(family);

	xtables_option_parse(cb);
	switch (cb->entry->id) {
	case O_NAME:
		bloom_parse_name(info, cb->arg);
		break;
	case O_KEY:
		bloom_parse_key(info, cb->arg);
		break;
	case O_SRC_PREFIX:
	case O_DST_PREFIX:
		if (BLOOM_CHECKED && cb->val.u8 > full)
			xtables_error(PARAMETER_PROBLEM,
				      "bloom: --%s %u out of range 0-%u",
				      cb->entry->name, cb->val.u8, full);
		if (cb->entry->id == O_SRC_PREFIX)
			info->src_prefix = cb->val.u8;
		else
			info->dst_prefix = cb->val.u8;
		break;
	case O_TEST:
		info->mode = XT_BLOOM_TEST;
		break;
	case O_ADD:
		info->mode = XT_BLOOM_ADD;
		break;
	case O_TEST_AND_ADD:
		info->mode = XT_BLOOM_TEST_AND_ADD;
		break;
	case O_REMOVE:
		info->mode = XT_BLOOM_REMOVE;
		break;
	}
	if (cb->invert)
		info->flags |= XT_BLOOM_INVERT;
}

static void bloom_parse4(struct xt_option_call *cb)
{
	bloom_parse(cb, NFPROTO_IPV4);
}

static void bloom_parse6(struct xt_option_call *cb)
{
	bloom_parse(cb, NFPROTO_IPV6);
}

/* --fpr P, 0 < P < 1, in parts per billion as the kernel takes it. */
static __u32 bloom_parse_fpr(const char *arg)
{
	char *end;
	double p;

	errno = 0;
	p = strtod(arg, &end);
	/* Rounded to the nearest ppb (no libm: iptables does not load it). */
	p = p * KBLOOM_FPR_ONE + 0.5;
	if (errno || end == arg || *end || !(p >= 1 && p < KBLOOM_FPR_ONE))
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: --fpr \"%s\": a rate between 0 and 1 (at least 1e-9)",
			      arg);
	return (__u32)p;
}

/* --window W: an integer with unit ms, s, m or h, in milliseconds. */
static __u32 bloom_parse_window(const char *arg)
{
	static const struct {
		const char *unit;
		unsigned long long ms;
	} units[] = { {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000} };
	unsigned long long v;
	unsigned int i;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(end, units[i].unit))
			break;
	if (errno || end == arg || arg[0] == '-' || i == ARRAY_SIZE(units) ||
	    v > UINT32_MAX / units[i].ms)
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: --window \"%s\": an integer with unit ms, s, m or h (at most 2^32-1 ms)",
			      arg);
	return (__u32)(v * units[i].ms);
}

/* Revision 1: the options of the filter's shape. */
static void bloom_parse_shape(struct xt_option_call *cb)
{
	struct xt_bloom_mtinfo1 *info = cb->data;

	switch (cb->entry->id) {
	case O_CAPACITY:
		info->capacity = cb->val.u64;
		break;
	case O_FPR:
		info->fpr_ppb = bloom_parse_fpr(cb->arg);
		break;
	case O_WINDOW:
		info->window_ms = bloom_parse_window(cb->arg);
		break;
	case O_GENERATIONS:
		info->generations = cb->val.u32;
		break;
	case O_LAYOUT:
		if (!strcmp(cb->arg, "blocked"))
			info->create_flags |= KBLOOM_CREATE_BLOCKED;
		else if (strcmp(cb->arg, "plain"))
			xtables_error(PARAMETER_PROBLEM,
				      "bloom: --layout \"%s\": plain or blocked",
				      cb->arg);
		break;
	case O_COUNTING:
		info->create_flags |= KBLOOM_CREATE_COUNTING;
		break;
	case O_HASH:
		if (!strcmp(cb->arg, "siphash"))
			info->hash_scheme = KBLOOM_HASH_SIPHASH;
		else if (!strcmp(cb->arg, "jhash"))
			info->hash_scheme = KBLOOM_HASH_JHASH;
		else
			xtables_error(PARAMETER_PROBLEM,
				      "bloom: --hash \"%s\": siphash or jhash",
				      cb->arg);
		break;
	default:
		return;
	}
	info->flags |= XT_BLOOM_SHAPE;
}

static void bloom_parse1_4(struct xt_option_call *cb)
{
	bloom_parse(cb, NFPROTO_IPV4);
	bloom_parse_shape(cb);
}

static void bloom_parse1_6(struct xt_option_call *cb)
{
	bloom_parse(cb, NFPROTO_IPV6);
	bloom_parse_shape(cb);
}

/*
 * Read /sys/kernel/bloom/filters/NAME/ATTR into @buf. Returns 0, or the
 * errno of the failure.
 */
static int bloom_sysfs_read(const char *name, const char *attr, char *buf,
			    size_t size)
{
	char path[128];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), BLOOM_SYSFS "/filters/%s/%s", name, attr);
	f = fopen(path, "r");
	if (!f)
		return errno;
	if (!fgets(buf, size, f))
		ret = EIO;
	fclose(f);
	return ret;
}

/*
 * Say what the kernel would refuse, where sysfs tells: a filter that does
 * not exist, --remove on a filter that is not counting. Without sysfs
 * (not mounted here), the kernel decides and logs why.
 */
static void bloom_check_filter(const struct xt_bloom_mtinfo *info)
{
	char buf[32];
	int err;

	if (access("/sys/kernel", F_OK))
		return;
	if (access(BLOOM_SYSFS, F_OK))
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: no filter \"%s\" (the kbloom module is not loaded)",
			      info->name);
	err = bloom_sysfs_read(info->name, "counting", buf, sizeof(buf));
	if (err == ENOENT)
		xtables_error(PARAMETER_PROBLEM, "bloom: no filter \"%s\"",
			      info->name);
	if (!err && info->mode == XT_BLOOM_REMOVE && atoi(buf) == 0)
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: filter \"%s\" is not a counting filter: --remove needs one (bloomctl create --counting)",
			      info->name);
}

/* What both revisions require; false for the test build. */
static bool bloom_check_head(struct xt_fcheck_call *cb)
{
	const struct xt_bloom_mtinfo *info = cb->data;

	unsigned int mode = cb->xflags & F_MODE;

	/* libxtables checks these too, but after this function. */
	if (!(cb->xflags & F_NAME))
		xtables_error(PARAMETER_PROBLEM, "bloom: --name is required");
	if (!(cb->xflags & F_KEY))
		xtables_error(PARAMETER_PROBLEM, "bloom: --key is required");
	if (!mode || (mode & (mode - 1)))
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: exactly one of --test, --add, --test-and-add or --remove is required");
	if (!BLOOM_CHECKED)
		return false;
	if ((cb->xflags & F_SRC_PREFIX) && !(info->fields & KBLOOM_FLOW_SADDR))
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: --src-prefix needs saddr in --key");
	if ((cb->xflags & F_DST_PREFIX) && !(info->fields & KBLOOM_FLOW_DADDR))
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: --dst-prefix needs daddr in --key");
	return true;
}

static void bloom_check(struct xt_fcheck_call *cb)
{
	if (bloom_check_head(cb))
		bloom_check_filter(cb->data);
}

/* A sysfs value of an existing filter, or -1. */
static long long bloom_sysfs_num(const char *name, const char *attr)
{
	char buf[32];

	return bloom_sysfs_read(name, attr, buf, sizeof(buf)) ? -1 :
	       atoll(buf);
}

/*
 * Say what the kernel would refuse of a rule with a shape: an existing
 * filter of another shape (its shape is world-readable in sysfs). A
 * missing one the kernel makes.
 */
static void bloom_check_shape(const struct xt_bloom_mtinfo1 *info)
{
	const char *n = info->name;
	char layout[16] = "";
	long long v;

	if (bloom_sysfs_num(n, "bits") < 0)
		return;
	v = bloom_sysfs_num(n, "capacity");
	if (v != (long long)info->capacity)
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: filter \"%s\" exists with capacity %lld, not %llu",
			      n, v, (unsigned long long)info->capacity);
	v = bloom_sysfs_num(n, "fpr_ppb");
	if (v != info->fpr_ppb)
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: filter \"%s\" exists with fpr %.9g, not %.9g",
			      n, v / 1e9, info->fpr_ppb / 1e9);
	v = bloom_sysfs_num(n, "counting");
	if (!v != !(info->create_flags & KBLOOM_CREATE_COUNTING))
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: filter \"%s\" exists %s",
			      n, v ? "as a counting filter: add --counting" :
				     "as a plain filter, not a counting one");
	bloom_sysfs_read(n, "layout", layout, sizeof(layout));
	if (!strncmp(layout, "blocked", 7) !=
	    !!(info->create_flags & KBLOOM_CREATE_BLOCKED))
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: filter \"%s\" exists with the %s layout",
			      n, layout[0] == 'b' ? "blocked" : "plain");
	if (bloom_sysfs_num(n, "window_ms") != info->window_ms ||
	    bloom_sysfs_num(n, "generations") != info->generations)
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: filter \"%s\" exists with a window of %lld ms, %lld generations",
			      n, bloom_sysfs_num(n, "window_ms"),
			      bloom_sysfs_num(n, "generations"));
	v = bloom_sysfs_num(n, "hash_scheme");
	if (info->hash_scheme && v != info->hash_scheme)
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: filter \"%s\" exists with hash %s",
			      n, v == KBLOOM_HASH_SIPHASH ? "siphash" : "jhash");
}

static void bloom_check1(struct xt_fcheck_call *cb)
{
	struct xt_bloom_mtinfo1 *info = cb->data;

	if (!(cb->xflags & F_SHAPE)) {
		bloom_check(cb);
		return;
	}
	if (!(cb->xflags & F_CAPACITY) || !(cb->xflags & F_FPR))
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: a filter's shape needs --capacity and --fpr");
	if ((cb->xflags & F_GENERATIONS) && !(cb->xflags & F_WINDOW))
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: --generations needs --window");
	if ((cb->xflags & F_WINDOW) && !(cb->xflags & F_GENERATIONS))
		info->generations = BLOOM_GENERATIONS;
	if (!bloom_check_head(cb))
		return;
	if (info->mode == XT_BLOOM_REMOVE &&
	    !(info->create_flags & KBLOOM_CREATE_COUNTING))
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: --remove needs a counting filter: add --counting");
	if (!access("/sys/kernel", F_OK) && !access(BLOOM_SYSFS, F_OK))
		bloom_check_shape(info);
}

static const char *bloom_mode_name(const struct xt_bloom_mtinfo *info)
{
	switch (info->mode) {
	case XT_BLOOM_TEST:
		return "test";
	case XT_BLOOM_ADD:
		return "add";
	case XT_BLOOM_TEST_AND_ADD:
		return "test-and-add";
	case XT_BLOOM_REMOVE:
		return "remove";
	}
	return "unknown-mode";
}

/*
 * One routine for both: iptables -L (@dashes "") and iptables -S and
 * iptables-save (@dashes "--"), which iptables-restore reads back.
 */
static void bloom_show(const struct xt_entry_match *m, unsigned int family,
		       const char *dashes)
{
	const struct xt_bloom_mtinfo *info = (const void *)m->data;
	unsigned int full = bloom_full(family), i;
	const char *sep = " ";

	printf(" %sname %.*s %skey", dashes, (int)sizeof(info->name),
	       info->name, dashes);
	for (i = 0; i < BLOOM_NFIELDS; i++) {
		if (!(info->fields & bloom_fields[i].bit))
			continue;
		printf("%s%s", sep, bloom_fields[i].name);
		sep = ",";
	}
	if (info->src_prefix != full)
		printf(" %ssrc-prefix %u", dashes, info->src_prefix);
	if (info->dst_prefix != full)
		printf(" %sdst-prefix %u", dashes, info->dst_prefix);
	printf("%s %s%s", info->flags & XT_BLOOM_INVERT ? " !" : "", dashes,
	       bloom_mode_name(info));
}

/* Revision 1: the shape, after what revision 0 prints. */
static void bloom_show1(const struct xt_entry_match *m, unsigned int family,
			const char *dashes)
{
	const struct xt_bloom_mtinfo1 *info = (const void *)m->data;

	bloom_show(m, family, dashes);
	if (!(info->flags & XT_BLOOM_SHAPE))
		return;
	printf(" %scapacity %llu %sfpr %.9g", dashes,
	       (unsigned long long)info->capacity, dashes,
	       info->fpr_ppb / (double)KBLOOM_FPR_ONE);
	if (info->generations) {
		if (info->window_ms % 1000)
			printf(" %swindow %ums", dashes, info->window_ms);
		else
			printf(" %swindow %us", dashes, info->window_ms / 1000);
		printf(" %sgenerations %u", dashes, info->generations);
	}
	if (info->create_flags & KBLOOM_CREATE_BLOCKED)
		printf(" %slayout blocked", dashes);
	if (info->create_flags & KBLOOM_CREATE_COUNTING)
		printf(" %scounting", dashes);
	if (info->hash_scheme)
		printf(" %shash %s", dashes,
		       info->hash_scheme == KBLOOM_HASH_SIPHASH ? "siphash" :
								  "jhash");
}

static void bloom_print1_4(const void *ip, const struct xt_entry_match *m,
			   int numeric)
{
	printf(" bloom:");
	bloom_show1(m, NFPROTO_IPV4, "");
}

static void bloom_print1_6(const void *ip, const struct xt_entry_match *m,
			   int numeric)
{
	printf(" bloom:");
	bloom_show1(m, NFPROTO_IPV6, "");
}

static void bloom_save1_4(const void *ip, const struct xt_entry_match *m)
{
	bloom_show1(m, NFPROTO_IPV4, "--");
}

static void bloom_save1_6(const void *ip, const struct xt_entry_match *m)
{
	bloom_show1(m, NFPROTO_IPV6, "--");
}

static void bloom_print4(const void *ip, const struct xt_entry_match *m,
			 int numeric)
{
	printf(" bloom:");
	bloom_show(m, NFPROTO_IPV4, "");
}

static void bloom_print6(const void *ip, const struct xt_entry_match *m,
			 int numeric)
{
	printf(" bloom:");
	bloom_show(m, NFPROTO_IPV6, "");
}

static void bloom_save4(const void *ip, const struct xt_entry_match *m)
{
	bloom_show(m, NFPROTO_IPV4, "--");
}

static void bloom_save6(const void *ip, const struct xt_entry_match *m)
{
	bloom_show(m, NFPROTO_IPV6, "--");
}

static struct xtables_match bloom_mt_reg[] = {
	{
		.version	= XTABLES_VERSION,
		.name		= "bloom",
		.revision	= 0,
		.family		= NFPROTO_IPV4,
		.size		= XT_ALIGN(sizeof(struct xt_bloom_mtinfo)),
		.userspacesize	= offsetof(struct xt_bloom_mtinfo, filter),
		.help		= bloom_help,
		.init		= bloom_init4,
		.print		= bloom_print4,
		.save		= bloom_save4,
		.x6_parse	= bloom_parse4,
		.x6_fcheck	= bloom_check,
		.x6_options	= bloom_opts,
	},
	{
		.version	= XTABLES_VERSION,
		.name		= "bloom",
		.revision	= 0,
		.family		= NFPROTO_IPV6,
		.size		= XT_ALIGN(sizeof(struct xt_bloom_mtinfo)),
		.userspacesize	= offsetof(struct xt_bloom_mtinfo, filter),
		.help		= bloom_help,
		.init		= bloom_init6,
		.print		= bloom_print6,
		.save		= bloom_save6,
		.x6_parse	= bloom_parse6,
		.x6_fcheck	= bloom_check,
		.x6_options	= bloom_opts,
	},
	{
		.version	= XTABLES_VERSION,
		.name		= "bloom",
		.revision	= 1,
		.family		= NFPROTO_IPV4,
		.size		= XT_ALIGN(sizeof(struct xt_bloom_mtinfo1)),
		.userspacesize	= offsetof(struct xt_bloom_mtinfo1, filter),
		.help		= bloom_help1,
		.init		= bloom_init4,
		.print		= bloom_print1_4,
		.save		= bloom_save1_4,
		.x6_parse	= bloom_parse1_4,
		.x6_fcheck	= bloom_check1,
		.x6_options	= bloom_opts1,
	},
	{
		.version	= XTABLES_VERSION,
		.name		= "bloom",
		.revision	= 1,
		.family		= NFPROTO_IPV6,
		.size		= XT_ALIGN(sizeof(struct xt_bloom_mtinfo1)),
		.userspacesize	= offsetof(struct xt_bloom_mtinfo1, filter),
		.help		= bloom_help1,
		.init		= bloom_init6,
		.print		= bloom_print1_6,
		.save		= bloom_save1_6,
		.x6_parse	= bloom_parse1_6,
		.x6_fcheck	= bloom_check1,
		.x6_options	= bloom_opts1,
	},
};

static void __attribute__((constructor)) bloom_mt_ldr(void)
{
	xtables_register_matches(bloom_mt_reg, ARRAY_SIZE(bloom_mt_reg));
}
