// SPDX-License-Identifier: GPL-2.0
/*
 * libxt_bloom: the iptables/ip6tables extension for the "bloom" match
 * (kmod/xt_bloom.c). Loaded by iptables-legacy and iptables-nft from the
 * xtables library directory (pkg-config --variable=xtlibdir xtables).
 *
 *	-m bloom --name NAME --key FIELDS [--src-prefix N] [--dst-prefix N]
 *		[!] --test | --add | [!] --test-and-add | --remove
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
	F_NAME = 1 << O_NAME,
	F_KEY = 1 << O_KEY,
	F_SRC_PREFIX = 1 << O_SRC_PREFIX,
	F_DST_PREFIX = 1 << O_DST_PREFIX,
	F_MODE = (1 << O_TEST) | (1 << O_ADD) | (1 << O_TEST_AND_ADD) |
		 (1 << O_REMOVE),
};

static const struct xt_option_entry bloom_opts[] = {
	{.name = "name", .id = O_NAME, .type = XTTYPE_STRING,
	 .flags = XTOPT_MAND},
	{.name = "key", .id = O_KEY, .type = XTTYPE_STRING,
	 .flags = XTOPT_MAND},
	{.name = "src-prefix", .id = O_SRC_PREFIX, .type = XTTYPE_UINT8},
	{.name = "dst-prefix", .id = O_DST_PREFIX, .type = XTTYPE_UINT8},
	{.name = "test", .id = O_TEST, .type = XTTYPE_NONE,
	 .excl = F_MODE, .flags = XTOPT_INVERT},
	{.name = "add", .id = O_ADD, .type = XTTYPE_NONE, .excl = F_MODE,
	 .flags = BLOOM_MODE_INV},
	{.name = "test-and-add", .id = O_TEST_AND_ADD, .type = XTTYPE_NONE,
	 .excl = F_MODE, .flags = XTOPT_INVERT},
	{.name = "remove", .id = O_REMOVE, .type = XTTYPE_NONE,
	 .excl = F_MODE, .flags = BLOOM_MODE_INV},
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

static void bloom_check(struct xt_fcheck_call *cb)
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
		return;
	if ((cb->xflags & F_SRC_PREFIX) && !(info->fields & KBLOOM_FLOW_SADDR))
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: --src-prefix needs saddr in --key");
	if ((cb->xflags & F_DST_PREFIX) && !(info->fields & KBLOOM_FLOW_DADDR))
		xtables_error(PARAMETER_PROBLEM,
			      "bloom: --dst-prefix needs daddr in --key");
	bloom_check_filter(info);
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
};

static void __attribute__((constructor)) bloom_mt_ldr(void)
{
	xtables_register_matches(bloom_mt_reg, ARRAY_SIZE(bloom_mt_reg));
}
