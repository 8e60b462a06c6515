// SPDX-License-Identifier: GPL-2.0
/*
 * What every subcommand does alike: its options and operands, the names
 * of filters, and the device.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "bloomctl.h"

const char *device_path = DEFAULT_DEVICE;

void cmd_usage(const struct cmd *cmd, FILE *f)
{
	fprintf(f, "Usage: %s [GLOBAL OPTIONS] %s%s%s\n\n%s\n",
		prog_name, cmd->name, cmd->args[0] ? " " : "", cmd->args, cmd->help);
	fprintf(f, "\nOptions:\n%s", cmd->options ? cmd->options : "");
	fputs("  -j, --json           JSON output (also a global option)\n"
	      "  -p, --pretty         pretty-printed JSON output\n"
	      "  -h, --help           show this help\n", f);
}

/* getopt_long() that reports bad options itself (opterr is 0). */
int next_opt(int argc, char **argv, const char *shortopts,
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

/**
 * parse_options() - a subcommand's options, the common ones included
 * @cmd: the subcommand, for --help.
 * @argc: its arguments.
 * @argv: see @argc; getopt_long() moves the operands after the options.
 * @longopts: its long options, COMMON_LONGOPTS among them.
 * @fn: called with each of its own options; returns 0, or -1 after
 *	reporting a bad value. NULL if it has none.
 * @ctx: @fn's argument.
 *
 * Return: -1 to carry on with the operands at argv[optind], else the exit
 * status to return at once (0 after --help, EXIT_ERROR on a bad option).
 */
int parse_options(const struct cmd *cmd, int argc, char **argv,
		  const struct option *longopts, opt_handler fn, void *ctx)
{
	int c, ret;

	while ((c = next_opt(argc, argv, COMMON_SHORTOPTS, longopts)) != -1) {
		ret = common_opt(cmd, c);
		if (ret == INT_MAX)
			continue;
		if (ret >= 0)
			return ret;
		if (!fn || fn(ctx, c, optarg))
			return EXIT_ERROR;
	}
	return -1;
}

/*
 * A count: digits, then optionally k or K (10^3), M (10^6), G (10^9),
 * Ki (2^10), Mi (2^20) or Gi (2^30). No sign, no blanks, no overflow.
 */
int parse_u64(const char *opt, const char *s, uint64_t *out)
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

int parse_u32(const char *opt, const char *s, uint64_t min, uint64_t max,
	      uint32_t *out)
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

/*
 * A duration: an integer and a unit, ms, s, m or h (500ms, 90s, 10m, 2h),
 * or 0 alone; in milliseconds, at most UINT32_MAX.
 */
int parse_duration(const char *opt, const char *s, uint32_t *ms)
{
	static const struct { const char *unit; uint64_t ms; } units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
	};
	uint64_t v = 0;
	const char *p = s;
	size_t i;

	if (!strcmp(s, "0")) {
		*ms = 0;
		return 0;
	}
	if (!isdigit((unsigned char)*p))
		goto bad;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - 9) / 10)
			goto big;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].unit))
			continue;
		if (v > UINT32_MAX / units[i].ms)
			goto big;
		*ms = v * units[i].ms;
		return 0;
	}
bad:
	pr_err("%s '%s': must be an integer with a unit, ms, s, m or h (500ms, 90s, 10m, 2h), or 0",
	       opt, s);
	return -1;
big:
	pr_err("%s '%s': too long (at most %" PRIu32 " ms)", opt, s,
	       (uint32_t)UINT32_MAX);
	return -1;
}

enum name_fault { NAME_OK, NAME_EMPTY, NAME_LONG, NAME_DOT, NAME_CHAR };

/* What, if anything, the module would refuse in @name. */
static enum name_fault name_fault(const char *name)
{
	size_t len = strlen(name), i;

	if (!len)
		return NAME_EMPTY;
	if (len >= KBLOOM_NAME_MAX)
		return NAME_LONG;
	if (name[0] == '.')
		return NAME_DOT;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '-'))
			return NAME_CHAR;
	}
	return NAME_OK;
}

/* A name the module takes, said nothing about: the state directory's. */
bool name_valid(const char *name)
{
	return name_fault(name) == NAME_OK;
}

/* Names as the module wants them, checked here for a clearer message. */
int check_name(const char *name)
{
	switch (name_fault(name)) {
	case NAME_OK:
		return 0;
	case NAME_EMPTY:
		pr_err("filter name '': must not be empty");
		break;
	case NAME_LONG:
		pr_err("filter name '%s': too long (%zu characters, at most %d)",
		       name, strlen(name), KBLOOM_NAME_MAX - 1);
		break;
	case NAME_DOT:
		pr_err("filter name '%s': must not start with '.'", name);
		break;
	case NAME_CHAR:
		pr_err("filter name '%s': may only contain A-Z, a-z, 0-9, '_', '.' and '-'",
		       name);
		break;
	}
	return -1;
}

/* Copy a checked name into a zeroed ioctl structure. */
void set_name(char dst[KBLOOM_NAME_MAX], const char *name)
{
	memcpy(dst, name, strlen(name) + 1);
}

/* The one positional NAME of create, destroy, clear and show. */
const char *get_name_arg(const struct cmd *cmd, int argc, char **argv)
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

/* Exactly one operand (@what names it for the message). */
int get_one_arg(const struct cmd *cmd, int argc, char **argv,
		const char *what, const char **a)
{
	if (optind >= argc) {
		pr_err("%s: missing %s", cmd->name, what);
		return -1;
	}
	if (optind + 1 < argc) {
		pr_err("%s: unexpected argument '%s'", cmd->name,
		       argv[optind + 1]);
		return -1;
	}
	*a = argv[optind];
	return 0;
}

/* Exactly two operands (@what names them for the message). */
int get_two_args(const struct cmd *cmd, int argc, char **argv,
		 const char *what, const char **a, const char **b)
{
	if (optind + 2 > argc) {
		pr_err("%s: needs %s", cmd->name, what);
		return -1;
	}
	if (optind + 2 < argc) {
		pr_err("%s: unexpected argument '%s'", cmd->name,
		       argv[optind + 2]);
		return -1;
	}
	*a = argv[optind];
	*b = argv[optind + 1];
	return 0;
}

int no_args(const struct cmd *cmd, int argc, char **argv)
{
	if (optind < argc) {
		pr_err("%s: unexpected argument '%s'", cmd->name, argv[optind]);
		return -1;
	}
	return 0;
}

/* Text for an errno returned by the module, friendlier than strerror(). */
const char *kerr(int err)
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
		return "the device is not open for writing";
	case EDQUOT:
		return "too many filters (the module's max_filters limit)";
	case ENOTTY:
		return "not a kbloom device, or the module lacks this command";
	default:
		return strerror(err);
	}
}

/*
 * Open the device O_RDONLY for what a read-only fd may do (VERSION, INFO,
 * LIST, QUERY, EXPORT) and O_RDWR for everything else: the module refuses
 * CREATE, DESTROY, CLEAR, IMPORT, MERGE, COMPARE and the key updates on a
 * read-only fd, so a group given read access to the node may only look.
 */
int open_device(int flags)
{
	int fd = open(device_path, flags | O_CLOEXEC);

	if (fd < 0) {
		int err = errno;

		pr_err("%s: %s%s", device_path, strerror(err),
		       err == ENOENT ? " (is the kbloom module loaded?)" :
		       err == EACCES && (flags & O_ACCMODE) == O_RDWR ?
		       " (this command needs the device open for reading and writing)" :
		       "");
	}
	return fd;
}

/* KBLOOM_IOC_VERSION: 0, or the errno. */
int device_version(int fd, struct kbloom_version *v)
{
	memset(v, 0, sizeof(*v));
	return ioctl(fd, KBLOOM_IOC_VERSION, v) ? errno : 0;
}

/* KBLOOM_IOC_INFO: 0, or the errno. */
int get_info(int fd, const char *name, struct kbloom_info *info)
{
	memset(info, 0, sizeof(*info));
	set_name(info->name, name);
	return ioctl(fd, KBLOOM_IOC_INFO, info) ? errno : 0;
}

/* A number the module shows in sysfs (@path); -1 if unreadable. */
int read_sysfs_u64(const char *path, uint64_t *v)
{
	unsigned long long x;
	char buf[32], *end;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	errno = 0;
	x = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return -1;
	*v = x;
	return 0;
}
