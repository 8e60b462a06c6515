// SPDX-License-Identifier: GPL-2.0
/*
 * bloomctl - manage the named Bloom filters of the kbloom module through the
 * ioctls of /dev/bloom (include/uapi/linux/kbloom.h).
 *
 * Usage: bloomctl [-j|-p] [-d DEVICE] SUBCOMMAND [ARGS...]; see bloomctl(8).
 *
 * This file has the table of subcommands, the global options, help and
 * version; each family of subcommands has its own file (filters.c, keys.c,
 * images.c, setops.c, calc.c), and what they share is in common.c and
 * output.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bloomctl.h"
#include "image.h"

static int cmd_help(const struct cmd *cmd, int argc, char **argv);
static int cmd_version(const struct cmd *cmd, int argc, char **argv);

#define KEY_OPTIONS \
	"  --file F             read keys from F, one per line (- is stdin)\n" \
	"  --hex                keys are hex-encoded binary\n" \
	"  --batch N            keys per ioctl (default 65536; 1: one-key ioctls)\n" \
	"  --count              print only the totals\n" \
	"  --key FIELDS         keys are flows: a comma list of saddr, daddr, proto,\n" \
	"                       sport, dport; each key is their values in that order,\n" \
	"                       comma-separated (10.0.0.1,53), keyed as the bloom\n" \
	"                       iptables match keys packets\n" \
	"  --flow VALUES        one flow (repeatable), as KEY arguments are\n" \
	"  --src-prefix N       mask source addresses to N bits (as the match's option)\n" \
	"  --dst-prefix N       likewise destination addresses\n" \
	"  --family ipv4|ipv6   the family of flows without an address (default ipv4)\n"

#define MAX_PAYLOAD_OPTION \
	"  --max-payload BYTES  refuse images of more payload (default: the module's\n" \
	"                       max_filter_bytes, else 1Gi; or $BLOOMCTL_MAX_PAYLOAD)\n"

#define LAYOUT_OPTION \
	"  --layout LAYOUT      plain (default) or blocked: a key's positions in one\n" \
	"                       64-byte block, one cache miss; a few % more bits\n"

static const struct cmd cmds[] = {
	{ "create", cmd_create,
	  "NAME {--capacity N --fpr P | --bits M --hashes K [--capacity N] | --like OLD} [--counting] [--layout LAYOUT] [--hash SCHEME] [--window DURATION [--generations G] [--rotate-at-fill]] [--bpf ACCESS] [--track-changes] [--exist-ok]",
	  "Create a filter, sized for N keys at false-positive rate P, or by M and K,\n"
	  "or with every parameter and the seed of OLD, so that the two can be merged.\n"
	  "With --window, a time-windowed filter of G generations: keys are forgotten\n"
	  "after the window (N keys per window at a total rate P).",
	  "  --capacity N         design capacity in keys\n"
	  "  --fpr P              target false-positive rate, 0 < P < 1\n"
	  "  --bits M             size in bits\n"
	  "  --hashes K           number of hash functions\n"
	  "  --counting           4-bit counters instead of bits: keys can be removed\n"
	  LAYOUT_OPTION
	  "  --hash SCHEME        siphash (keyed: for untrusted keys) or jhash (faster);\n"
	  "                       default: the module's (see 'bloomctl version')\n"
	  "  --like OLD           copy OLD's size, hashes, counting, hash scheme, seed\n"
	  "                       and window\n"
	  "  --window DURATION    windowed filter: forget keys after DURATION (an integer\n"
	  "                       with unit ms, s, m or h; 0: rotate by hand only)\n"
	  "  --generations G      generations of a windowed filter, 2 to 16 (default 4)\n"
	  "  --rotate-at-fill     also rotate when the newest generation is full\n"
	  "  --bpf ACCESS         what BPF programs may do with it through kbloom's\n"
	  "                       kfuncs: none (default), read (query) or write\n"
	  "                       (query, add, test-and-add, remove)\n"
	  "  --track-changes      mark the 64-byte blocks that change, for bloomsync(8)\n"
	  "                       (bit filters, not counting ones)\n"
	  "  --exist-ok           a filter NAME of this shape exists: success, and it\n"
	  "                       is kept (a rule's filter is adopted); of another\n"
	  "                       shape: an error naming what differs\n" },
	{ "destroy", cmd_destroy, "NAME", "Destroy a filter.", NULL },
	{ "clear", cmd_clear, "NAME", "Zero every bit and counter of a filter.",
	  NULL },
	{ "rotate", cmd_rotate, "NAME",
	  "Rotate a windowed filter now: its oldest generation is forgotten.",
	  NULL },
	{ "list", cmd_list, "", "List the filters.", NULL },
	{ "monitor", cmd_monitor, "[NAME] [--events N]",
	  "Print filters' events as they happen: create, destroy, and fill\n"
	  "alerts: full (past its design capacity), saturated (a counter stuck),\n"
	  "rotated (a window rotated because full). One JSON object a line with -j.",
	  "  --events N           exit after N events\n" },
	{ "show", cmd_show, "NAME", "Show a filter's parameters and statistics.",
	  NULL },
	{ "stats", cmd_stats, "[--format text|prometheus] [--output FILE]",
	  "Show every filter's fill and traffic: a table, JSON (-j), or the\n"
	  "Prometheus text format (for the node exporter's textfile collector).",
	  "  --format FORMAT      text (default) or prometheus\n"
	  "  --output FILE        write FILE (mode 0644) atomically, not stdout\n" },
	{ "add", cmd_add, "NAME [--file F] [--hex | --key FIELDS [--flow VALUES]...] [--batch N] [--count] [KEY...]",
	  "Add keys (the arguments, else one per line from stdin or --file).",
	  KEY_OPTIONS },
	{ "query", cmd_query,
	  "NAME [--file F] [--hex | --key FIELDS [--flow VALUES]...] [--batch N] [--count] [KEY...]",
	  "Query keys: print KEY maybe|no. Exit 0 if all may be present, 1 if not.",
	  KEY_OPTIONS },
	{ "test-and-add", cmd_test_and_add,
	  "NAME [--file F] [--hex | --key FIELDS [--flow VALUES]...] [--batch N] [--count] [KEY...]",
	  "Add keys, printing KEY seen|new. Exit 0 if all were seen, 1 if not.",
	  KEY_OPTIONS },
	{ "remove", cmd_remove,
	  "NAME [--file F] [--hex | --key FIELDS [--flow VALUES]...] [--batch N] [--count] [KEY...]",
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
	{ "save", cmd_save, "{NAME FILE | --all DIR} [--compress]",
	  "Save a filter to an image FILE (- is stdout), or every filter to DIR.\n"
	  "The image holds the seed. With --all, DIR/NAME.kbloom for each filter:\n"
	  "only those that changed are rewritten, and the images of filters that\n"
	  "no longer exist removed.",
	  "  --all DIR            every filter, to the state directory DIR\n"
	  "  --compress           deflate the contents with zlib\n" },
	{ "load", cmd_load, "NAME FILE [--replace] [--max-payload BYTES]",
	  "Create NAME from the image FILE (- is stdin), after checking all of it.",
	  "  --replace            swap the contents of the existing NAME atomically\n"
	  MAX_PAYLOAD_OPTION },
	{ "restore", cmd_restore, "DIR [--replace]",
	  "Load every image DIR/NAME.kbloom (save --all) as filter NAME.\n"
	  "A filter that exists is left alone; windowed ones forget what the time\n"
	  "since the save covers. Goes on past an image it cannot load; exit 2 then.",
	  "  --replace            swap the image's contents into existing filters\n" },
	{ "inspect", cmd_inspect, "FILE [--max-payload BYTES]",
	  "Check an image FILE completely and show its header; needs no module.",
	  MAX_PAYLOAD_OPTION },
	{ "calc", cmd_calc,
	  "{--capacity N --fpr P | --bits M --hashes K --capacity N} [--layout LAYOUT] [--counting] [--generations G]",
	  "Compute a filter's size, or its false-positive rate, without the module.",
	  "  --capacity N         number of keys\n"
	  "  --fpr P              target false-positive rate, 0 < P < 1\n"
	  "  --bits M             size in bits\n"
	  "  --hashes K           number of hash functions\n"
	  LAYOUT_OPTION
	  "  --counting           a counting filter (4 bits a position; blocks of 128)\n"
	  "  --generations G      a windowed filter of G generations (2 to 16): each\n"
	  "                       sized for N keys at P / G; memory is G times one\n" },
	{ "version", cmd_version, "",
	  "Show bloomctl's version and the module's API version and limits.",
	  NULL },
	{ "help", cmd_help, "", "Show this help.", NULL },
};

#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *f)
{
	size_t i;

	fputs("Usage: bloomctl [GLOBAL OPTIONS] SUBCOMMAND [ARGS...]\n"
	      "       bloomctl [GLOBAL OPTIONS] -batch FILE [-force]\n\n"
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
	      "  -b, --batch FILE     run the subcommands of FILE (- is stdin), one a line;\n"
	      "                       stop at the first that fails, naming its line\n"
	      "                       (also -batch, as ip(8) spells it)\n"
	      "  -f, --force          with --batch: run every line, failed ones too\n"
	      "  -h, --help           show this help\n"
	      "  -V, --version        show the version\n"
	      "\n'bloomctl SUBCOMMAND --help' describes a subcommand; see bloomctl(8).\n"
	      "Exit status: 0 success, 1 a key absent, new or not removed, 2 an error.\n", f);
}

static int cmd_help(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	int ret;

	ret = parse_options(cmd, argc, argv, longopts, NULL, NULL);
	if (ret >= 0)
		return ret;
	if (no_args(cmd, argc, argv))
		return EXIT_ERROR;
	usage(stdout);
	return 0;
}

/* Bit i of KBLOOM_IOC_VERSION's features is feature_names[i]. */
static const char * const feature_names[] = {
	"batch", "test-and-add", "sizing", "counting", "merge", "image",
	"siphash", "window", "handle", "blocked", "bpf-access", "window-age",
	"changes",
};

#define NR_FEATURES	(sizeof(feature_names) / sizeof(feature_names[0]))

static void version_json(const struct kbloom_version *v)
{
	unsigned int i;

	jw_start_object(jw);
	jw_kv_string(jw, "version", BLOOMCTL_VERSION);
	jw_kv_u64(jw, "uapi_version", KBLOOM_API_VERSION);
	jw_kv_string(jw, "device", device_path);
	if (!v) {
		jw_kv_null(jw, "module");
		jw_end_object(jw);
		return;
	}
	jw_key(jw, "module");
	jw_start_object(jw);
	jw_kv_u64(jw, "api_version", v->api_version);
	jw_kv_u64(jw, "hash_scheme", v->hash_scheme);
	jw_kv_string(jw, "hash_scheme_name", hash_scheme_name(v->hash_scheme));
	jw_kv_u64(jw, "features_mask", v->features);
	jw_key(jw, "features");
	jw_start_array(jw);
	for (i = 0; i < NR_FEATURES; i++)
		if (v->features & (1ULL << i))
			jw_string(jw, feature_names[i]);
	jw_end_array(jw);
	jw_kv_u64(jw, "min_bits", v->min_bits);
	jw_kv_u64(jw, "max_bits", v->max_bits);
	jw_kv_u64(jw, "max_hashes", v->max_hashes);
	jw_kv_u64(jw, "max_key_len", v->max_key_len);
	jw_kv_u64(jw, "max_batch", v->max_batch);
	jw_kv_u64(jw, "name_max", v->name_max);
	jw_kv_u64(jw, "max_generations", v->max_generations);
	jw_end_object(jw);
	jw_end_object(jw);
}

static void version_text(const struct kbloom_version *v)
{
	uint64_t unknown;
	unsigned int i;

	printf("bloomctl %s (kbloom API %d)\n", BLOOMCTL_VERSION,
	       KBLOOM_API_VERSION);
	if (!v)
		return;
	printf("module: api_version %u, default hash scheme %s (%u)\n",
	       v->api_version, hash_scheme_name(v->hash_scheme),
	       v->hash_scheme);
	printf("features:");
	for (i = 0; i < NR_FEATURES; i++)
		if (v->features & (1ULL << i))
			printf(" %s", feature_names[i]);
	unknown = v->features & ~((1ULL << NR_FEATURES) - 1);
	if (unknown)
		printf(" 0x%llx", (unsigned long long)unknown);
	printf("\n");
	printf("limits: bits %llu..%llu, hashes 1..%u, key 1..%u bytes, batch %u keys, name %u bytes with NUL\n",
	       (unsigned long long)v->min_bits, (unsigned long long)v->max_bits,
	       v->max_hashes, v->max_key_len, v->max_batch, v->name_max);
	if (v->max_generations)
		printf("windows: 2..%u generations\n", v->max_generations);
}

/* Without the module there is still bloomctl's own version. */
static int cmd_version(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	struct kbloom_version v;
	bool have_module = false;
	int ret, fd;

	ret = parse_options(cmd, argc, argv, longopts, NULL, NULL);
	if (ret >= 0)
		return ret;
	if (no_args(cmd, argc, argv))
		return EXIT_ERROR;
	fd = open(device_path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ret = device_version(fd, &v);
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
	if (jw)
		version_json(have_module ? &v : NULL);
	else
		version_text(have_module ? &v : NULL);
	return 0;
}

const struct cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < NR_CMDS; i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

struct globals {
	bool version;		/* -V */
	const char *batch;	/* -b FILE */
	bool force;		/* --force */
};

/*
 * -batch and -force, as ip(8) spells them, are -b FILE and --force: not
 * the short options -b -a -t... getopt would make of them.
 */
static void single_dash_words(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-batch"))
			argv[i] = "--batch";
		else if (!strcmp(argv[i], "-force"))
			argv[i] = "--force";
		else if (!strcmp(argv[i], "--"))
			break;
		/* The options' own arguments are not options. */
		if (!strcmp(argv[i], "-d") || !strcmp(argv[i], "--device") ||
		    !strcmp(argv[i], "-b") || !strcmp(argv[i], "--batch"))
			i++;
	}
}

/*
 * The global options, up to the subcommand. Returns -1 to carry on, else
 * the exit status to return at once.
 */
static int global_options(int argc, char **argv, struct globals *g)
{
	static const struct option longopts[] = {
		{ "json",	no_argument,	   NULL, 'j' },
		{ "pretty",	no_argument,	   NULL, 'p' },
		{ "device",	required_argument, NULL, 'd' },
		{ "batch",	required_argument, NULL, 'b' },
		{ "force",	no_argument,	   NULL, 'f' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ "version",	no_argument,	   NULL, 'V' },
		END_LONGOPTS
	};
	int c;

	single_dash_words(argc, argv);
	/* '+': stop at the subcommand, its options are its own. */
	while ((c = next_opt(argc, argv, "+:jpd:b:fhV", longopts)) != -1) {
		switch (c) {
		case 'b':
			g->batch = optarg;
			break;
		case 'f':
			g->force = true;
			break;
		case 'j':
		case 'p':
			enable_json(c == 'p');
			break;
		case 'd':
			device_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			g->version = true;
			break;
		default:
			return EXIT_ERROR;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	const char *env = getenv("BLOOMCTL_DEVICE");
	struct globals g = { .version = false };
	const struct cmd *cmd;
	int ret;

	if (env && *env)
		device_path = env;
	opterr = 0;
	ret = global_options(argc, argv, &g);
	if (ret >= 0)
		return ret;
	if (g.force && !g.batch) {
		pr_err("--force goes with -batch FILE");
		return EXIT_ERROR;
	}
	if (g.batch) {
		if (optind < argc) {
			pr_err("-batch FILE: unexpected subcommand '%s' (the subcommands are FILE's lines)",
			       argv[optind]);
			return EXIT_ERROR;
		}
		if (!isatty(STDOUT_FILENO))
			setvbuf(stdout, NULL, _IOFBF, 1 << 16);
		ret = run_batch(g.batch, g.force);
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "bloomctl: stdout: %s\n", strerror(errno));
			return EXIT_ERROR;
		}
		return ret;
	}
	if (g.version) {
		cmd = find_cmd("version");
		argc = 1;
		argv += optind - 1;
	} else if (optind >= argc) {
		usage(stderr);
		pr_err("missing SUBCOMMAND");
		return EXIT_ERROR;
	} else {
		cmd = find_cmd(argv[optind]);
		argc -= optind;
		argv += optind;
	}
	if (!cmd) {
		pr_err("unknown subcommand '%s' (try 'bloomctl --help')",
		       argv[0]);
		return EXIT_ERROR;
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
