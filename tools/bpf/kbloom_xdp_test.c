// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_xdp_test: the tests' way into the XDP example of tools/bpf and
 * the kfunc test programs (test-native.sh, test-kfunc.sh). test-run runs
 * the example (kbloom_xdp.bpf.c, or kbloom_xdp_map.bpf.c with --map) on
 * crafted packets with BPF_PROG_TEST_RUN, so that tests see verdicts,
 * counters and keys without traffic; leak-check checks that the verifier
 * refuses a program that leaks a filter reference (kbloom_xdp_leak.bpf.c);
 * kfunc runs one call of any of the kfuncs from an XDP, tc or syscall
 * program (kbloom_kfunc_test.bpf.c) and prints its answer;
 * kfunc-syscall-refused checks that the verifier refuses syscall programs
 * the kfuncs that change filters (kbloom_kfunc_refused.bpf.c).
 *
 * Exit status: 0 done, 1 runtime error, 2 usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kbloom_xdp_load.h"
#include "kbloom_xdp_pkt.h"
#include "kbloom_kfunc_refused.skel.h"
#include "kbloom_kfunc_test.skel.h"
#include "kbloom_xdp_leak.skel.h"

struct options {
	struct prog_opts prog;
	const char **pkts;
	int nr_pkts;
	/* kfunc */
	int kf_op;		/* enum kbloom_kfunc_op */
	int kf_prog;		/* KF_XDP, KF_TC or KF_SYSCALL */
	uint32_t kf_id;		/* --id: this id, not the name's */
	int64_t kf_len;		/* --len, or -1: the key's bytes */
};

enum { KF_XDP, KF_TC, KF_SYSCALL };

/*
 * While set, libbpf's messages are kept here (leak-check reads the
 * verifier's log in them) instead of printed.
 */
static char *capture;
static size_t capture_len, capture_cap;

static int capture_print(enum libbpf_print_level level, const char *fmt,
			 va_list ap)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	if (capture) {
		int n = vsnprintf(capture + capture_len,
				  capture_cap - capture_len, fmt, ap);

		if (n > 0)
			capture_len += (size_t)n < capture_cap - capture_len ?
				       (size_t)n : capture_cap - capture_len - 1;
		return 0;
	}
	return print_libbpf(level, fmt, ap);
}

/* A key in hex: ,"KIND_key":"HEX" in JSON, else a line if it has bytes. */
static void print_key(bool json, const char *kind, const unsigned char *p,
		      size_t len)
{
	size_t i;

	if (!json && !len)
		return;
	printf(json ? ",\"%s_key\":\"" : "\t%s-key ", kind);
	for (i = 0; i < len; i++)
		printf("%02x", p[i]);
	putchar(json ? '"' : '\n');
}

static const char *verdict_name(uint32_t v)
{
	static const char *const names[] = {
		"XDP_ABORTED", "XDP_DROP", "XDP_PASS", "XDP_TX", "XDP_REDIRECT",
	};

	return v < ARRAY_LEN(names) ? names[v] : "XDP_UNKNOWN";
}

/* ---- test-run ---------------------------------------------------------- */

/* When no --pkt is given: one of each kind, and a repeated flow. */
static const char *const builtin_pkts[] = {
	"udp 10.0.0.1:1000 > 10.0.0.2:53",
	"udp 10.0.0.1:1000 > 10.0.0.2:53",
	"tcp 10.0.0.1:40000 > 10.0.0.2:80",
	"icmp 10.0.0.1 > 10.0.0.2",
	"udp 10.0.0.1:1000 > 10.0.0.2:53 frag=1480",
	"udp 10.0.0.3:1000 > 10.0.0.2:53",
	"udp [2001:db8::1]:1000 > [2001:db8::2]:53",
	"tcp [2001:db8::1]:40000 > [2001:db8::2]:443 ext=hop,dst",
	"udp [2001:db8::1]:1000 > [2001:db8::2]:53 frag=1232",
	"arp",
};

static int cmd_test_run(const struct options *o)
{
	const char *const *specs = o->nr_pkts ? o->pkts : builtin_pkts;
	int n = o->nr_pkts ? o->nr_pkts : (int)ARRAY_LEN(builtin_pkts);
	uint64_t before[NR_COUNTERS], after[NR_COUNTERS];
	struct pkt *pkts;
	struct loaded l;
	char err[256];
	int i, ret = EXIT_RUNTIME;
	size_t c;

	pkts = calloc(n, sizeof(*pkts));
	if (!pkts) {
		errmsg("%s", strerror(errno));
		return EXIT_RUNTIME;
	}
	/* All of them first: a bad one is a usage error, before loading. */
	for (i = 0; i < n; i++) {
		if (!strncmp(specs[i], "exec ", 5))
			continue;
		if (pkt_build(specs[i], &pkts[i], err, sizeof(err))) {
			errmsg("--pkt '%s': %s", specs[i], err);
			free(pkts);
			return EXIT_USAGE;
		}
	}
	if (!o->prog.map && o->prog.nr_allow_addrs && fill_allow_filter(&o->prog))
		goto out;
	if (load(&o->prog, &l))
		goto out;
	if (o->prog.json) {
		printf("{\"program\":");
		json_str(stdout, l.what);
		if (l.allow_id || l.flows_id)
			printf(",\"allow_id\":%u,\"flows_id\":%u", l.allow_id,
			       l.flows_id);
		printf(",\"packets\":[");
	} else {
		printf("program: %s", l.what);
		if (l.allow_id || l.flows_id)
			printf("; ids: allow %u, flows %u", l.allow_id,
			       l.flows_id);
		putchar('\n');
	}
	for (i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = pkts[i].buf,
			    .data_size_in = pkts[i].len, .repeat = 1);

		if (!strncmp(specs[i], "exec ", 5)) {
			/*
			 * Between packets, while the program stays loaded:
			 * destroy or recreate a filter, say.
			 */
			int st, saved = -1;

			fflush(stdout);
			/* Its output must not break the JSON. */
			if (o->prog.json) {
				saved = dup(STDOUT_FILENO);
				dup2(STDERR_FILENO, STDOUT_FILENO);
			}
			st = system(specs[i] + 5);
			if (saved >= 0) {
				dup2(saved, STDOUT_FILENO);
				close(saved);
			}
			st = st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
			if (o->prog.json) {
				printf("%s{\"exec\":", i ? "," : "");
				json_str(stdout, specs[i] + 5);
				printf(",\"status\":%d}", st);
			} else {
				printf("%s: exit %d\n", specs[i], st);
			}
			continue;
		}
		if (read_counters(l.counters_fd, before))
			goto out_unload;
		if (bpf_prog_test_run_opts(l.prog_fd, &run)) {
			errmsg("BPF_PROG_TEST_RUN of '%s': %s", specs[i],
			       strerror(errno));
			goto out_unload;
		}
		if (read_counters(l.counters_fd, after))
			goto out_unload;
		/* This packet's changes. */
		for (c = 0; c < NR_COUNTERS; c++)
			after[c] -= before[c];
		if (o->prog.json) {
			printf("%s{\"packet\":", i ? "," : "");
			json_str(stdout, specs[i]);
			printf(",\"verdict\":\"%s\",\"retval\":%u,\"counters\":",
			       verdict_name(run.retval), run.retval);
			print_counters_json(after);
		} else {
			printf("%s: %s", specs[i], verdict_name(run.retval));
			for (c = 0; c < NR_COUNTERS; c++)
				if (after[c])
					printf(" %s+%llu", counter_names[c],
					       (unsigned long long)after[c]);
			putchar('\n');
		}
		if (o->prog.show_keys) {
			print_key(o->prog.json, "allow", l.keys->allow,
				  l.keys->allow_len);
			print_key(o->prog.json, "flow", l.keys->flow,
				  l.keys->flow_len);
		}
		if (o->prog.json)
			putchar('}');
	}
	if (read_counters(l.counters_fd, after))
		goto out_unload;
	if (o->prog.json) {
		printf("],\"counters\":");
		print_counters_json(after);
		printf("}\n");
	} else {
		printf("total:");
		for (c = 0; c < NR_COUNTERS; c++)
			printf(" %s %llu", counter_names[c],
			       (unsigned long long)after[c]);
		putchar('\n');
	}
	ret = 0;
out_unload:
	unload(&l);
out:
	free(pkts);
	return ret;
}

/* ---- programs the verifier must refuse --------------------------------- */

/* Set when expect_refused() could not even reach the verifier. */
static bool refused_unchecked;

/*
 * Load @obj, which the verifier must refuse for @must (a phrase of its
 * log): 0 if it did, printing the log's line; else EXIT_RUNTIME, with the
 * log and why. @what names the program.
 */
static int expect_refused(struct bpf_object *obj, const char *what,
			  const char *must)
{
	static char log[1 << 20];
	const char *line;
	int err;

	capture = log;
	capture_cap = sizeof(log);
	capture_len = 0;
	log[0] = '\0';
	err = bpf_object__load(obj);
	capture = NULL;
	if (!err) {
		errmsg("%s: the verifier accepted it; it must refuse it: %s",
		       what, must);
		return EXIT_RUNTIME;
	}
	line = strstr(log, must);
	if (line) {
		printf("%s: refused as it must be: %.*s\n", what,
		       (int)strcspn(line, "\n"), line);
		return 0;
	}
	fputs(log, stderr);
	if (!strstr(log, "BEGIN PROG LOAD LOG")) {
		/* libbpf stopped before the verifier: no kfuncs, say. */
		errmsg("%s: not loaded, so not checked: %s", what,
		       strerror(-err));
		kfuncs_hint();
		refused_unchecked = true;
	} else {
		errmsg("%s: refused, but not with '%s'", what, must);
	}
	return EXIT_RUNTIME;
}

/* ---- leak-check -------------------------------------------------------- */

static int cmd_leak_check(void)
{
	struct kbloom_xdp_leak *s;
	int ret;

	s = kbloom_xdp_leak__open();
	if (!s) {
		errmsg("opening kbloom_xdp_leak: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	ret = expect_refused(s->obj, "kbloom_xdp_leak", "Unreleased reference");
	kbloom_xdp_leak__destroy(s);
	return ret;
}

/* ---- kfunc-syscall-refused --------------------------------------------- */

/*
 * Each program of kbloom_kfunc_refused, kb_X, alone: a syscall program
 * calling bpf_kbloom_X, which changes a filter.
 */
static int cmd_syscall_refused(void)
{
	char must[128], what[128];
	struct kbloom_kfunc_refused *s;
	struct bpf_program *prog, *p;
	int i, j, ret = 0;

	for (i = 0; ; i++) {
		s = kbloom_kfunc_refused__open();
		if (!s) {
			errmsg("opening kbloom_kfunc_refused: %s",
			       strerror(errno));
			return EXIT_RUNTIME;
		}
		prog = NULL;
		j = 0;
		bpf_object__for_each_program(p, s->obj) {
			bpf_program__set_autoload(p, j == i);
			if (j++ == i)
				prog = p;
		}
		if (!prog) {
			kbloom_kfunc_refused__destroy(s);
			break;
		}
		snprintf(what, sizeof(what), "kbloom_kfunc_refused %s",
			 bpf_program__name(prog));
		snprintf(must, sizeof(must),
			 "calling kernel function bpf_kbloom_%s is not allowed",
			 bpf_program__name(prog) + 3 /* "kb_" */);
		if (expect_refused(s->obj, what, must))
			ret = EXIT_RUNTIME;
		kbloom_kfunc_refused__destroy(s);
		/* No kfuncs at all: the others would say the same. */
		if (refused_unchecked)
			break;
	}
	return ret;
}

/* ---- kfunc ------------------------------------------------------------- */

static const char *const kf_ops[] = { KBLOOM_KFUNC_OPS };
static const char *const kf_progs[] = { "xdp", "tc", "syscall" };

/*
 * One call of a kfunc, from the program o->kf_prog, run once: prints the
 * kfunc's answer. @key: @key_len bytes, zero-padded to o->kf_len.
 */
static int cmd_kfunc(const struct options *o, const char *name,
		     const unsigned char *key, size_t key_len)
{
	struct kbloom_kfunc_args args = { .ret = INT32_MIN };
	LIBBPF_OPTS(bpf_test_run_opts, run, .repeat = 1);
	struct kbloom_kfunc_test *s;
	struct bpf_program *prog, *p;
	struct pkt pkt;
	char err[128];
	int fd, ret = EXIT_RUNTIME;

	s = kbloom_kfunc_test__open_opts(&open_opts);
	if (!s) {
		errmsg("opening kbloom_kfunc_test: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	set_name(&s->rodata->filter_name, name);
	s->rodata->op = o->kf_op;
	s->rodata->by_id = o->prog.by == BY_ID;
	s->bss->id = o->kf_id;
	memcpy(s->bss->key, key, key_len);
	s->bss->key_len = o->kf_len >= 0 ? (uint32_t)o->kf_len : key_len;
	s->bss->result = INT32_MIN;
	prog = o->kf_prog == KF_TC ? s->progs.kbloom_kfunc_tc :
	       o->kf_prog == KF_SYSCALL ? s->progs.kbloom_kfunc_syscall :
	       s->progs.kbloom_kfunc_xdp;
	bpf_object__for_each_program(p, s->obj)
		bpf_program__set_autoload(p, p == prog);
	ret = kbloom_kfunc_test__load(s);
	if (ret) {
		errmsg("loading kbloom_kfunc_test's %s program: %s",
		       kf_progs[o->kf_prog], strerror(-ret));
		kfuncs_hint();
		ret = EXIT_RUNTIME;
		goto out;
	}
	ret = EXIT_RUNTIME;
	fd = bpf_program__fd(prog);
	if (o->kf_prog == KF_SYSCALL) {
		/* No packet, no repeat: a context, copied back. */
		run.repeat = 0;
		run.ctx_in = &args;
		run.ctx_size_in = sizeof(args);
		if (bpf_prog_test_run_opts(fd, &run)) {
			errmsg("BPF_PROG_TEST_RUN of the syscall program: %s",
			       strerror(errno));
			goto out;
		}
		if (args.runs != 1 || args.ret != s->bss->result) {
			errmsg("the syscall program's context says %d (run %u times), .bss %d",
			       args.ret, args.runs, s->bss->result);
			goto out;
		}
	} else {
		/* A packet, any: the kfunc's arguments are in .bss. */
		if (pkt_build("udp 10.0.0.1:1000 > 10.0.0.2:53", &pkt, err,
			      sizeof(err))) {
			errmsg("building a packet: %s", err);
			goto out;
		}
		run.data_in = pkt.buf;
		run.data_size_in = pkt.len;
		if (bpf_prog_test_run_opts(fd, &run)) {
			errmsg("BPF_PROG_TEST_RUN of the %s program: %s",
			       kf_progs[o->kf_prog], strerror(errno));
			goto out;
		}
	}
	if (s->bss->runs != 1) {
		errmsg("the %s program ran %u times, not once",
		       kf_progs[o->kf_prog], s->bss->runs);
		goto out;
	}
	if (verbose && o->prog.by == BY_ID && !o->kf_id)
		errmsg("bpf_kbloom_id(\"%s\"): %d", name, s->bss->id_ret);
	printf("%d\n", s->bss->result);
	ret = 0;
out:
	kbloom_kfunc_test__destroy(s);
	return ret;
}

static void usage(FILE *f)
{
	fputs("Usage: kbloom_xdp_test test-run [PROGRAM OPTIONS] [--show-keys] [-j] [--pkt PACKET]...\n"
	      "       kbloom_xdp_test leak-check\n"
	      "       kbloom_xdp_test kfunc OP [--by-id|--id N] [--tc|--syscall] [--len N] FILTER [KEY-HEX]\n"
	      "       kbloom_xdp_test kfunc-syscall-refused\n"
	      "\n"
	      "test-run: run the kbloom XDP example (kbloom_xdp) on crafted packets with\n"
	      "BPF_PROG_TEST_RUN: each packet's verdict and counter changes. leak-check:\n"
	      "check that the verifier refuses a program that leaks a filter reference.\n"
	      "\n"
	      "kfunc: one call of a kfunc on filter FILTER, from a program run once with\n"
	      "BPF_PROG_TEST_RUN; prints the kfunc's answer: 1 or 0 (query, test-and-add),\n"
	      "0 (add, remove), or -errno (-22 EINVAL: length not 1 to 4096; -2 ENOENT: no\n"
	      "such filter, or remove of an absent key; -95 EOPNOTSUPP: remove on a filter\n"
	      "that is not counting). OP: query, add, test-and-add, remove (of KEY-HEX, its\n"
	      "bytes in hex), get (bpf_kbloom_get() then bpf_kbloom_put(): 1 found, 0 not),\n"
	      "id (bpf_kbloom_id()). kfunc-syscall-refused: check that the verifier refuses\n"
	      "syscall programs the kfuncs that change filters (add, test-and-add, remove,\n"
	      "and their _id forms).\n"
	      "\n"
	      PROG_USAGE
	      "\n"
	      "Other options:\n"
	      "  --show-keys        test-run: print each packet's keys in hex\n"
	      "  --pkt PACKET       test-run: a packet (repeatable; default: a built-in set):\n"
	      "                       PROTO SRC > DST [OPTION]...   PROTO: tcp, udp, udplite,\n"
	      "                       sctp, dccp, icmp, icmpv6, gre, esp, ah, igmp, proto=N;\n"
	      "                       SRC, DST: 10.0.0.1[:PORT], 2001:db8::1, [2001:db8::1]:PORT\n"
	      "                       OPTION: frag=BYTES (fragment offset, a multiple of 8),\n"
	      "                       mf, vlan=ID (twice: QinQ), opts=BYTES (IPv4 options),\n"
	      "                       ext=hop,dst,rt,ah,frag (IPv6 extension headers, in\n"
	      "                       order), iplen=N (IPv4 total / IPv6 payload length),\n"
	      "                       trunc=N (cut the frame to N bytes)\n"
	      "                     or: arp [vlan=ID]...; raw HEX (a whole frame);\n"
	      "                     or: exec COMMAND, run by sh between two packets\n"
	      "  --by-id            kfunc: by the filter's id, from bpf_kbloom_id() in the\n"
	      "                     same run (default: by reference, bpf_kbloom_get()/put())\n"
	      "  --id N             kfunc: by id N, as given (a destroyed filter's, say)\n"
	      "  --tc               kfunc: from a tc (sched_cls) program; default XDP\n"
	      "  --syscall          kfunc: from a syscall program: query, get, id only\n"
	      "  --len N            kfunc: the key length handed to the kfunc, 0 to 4104\n"
	      "                     (default: KEY-HEX's bytes; the bytes past them are 0)\n"
	      "\n"
	      "Exit status: 0 done, 1 error, 2 usage error.\n", f);
}

enum {
	OPT_SHOW_KEYS = OPT_PROG_END, OPT_PKT, OPT_TC, OPT_SYSCALL, OPT_LEN,
	OPT_ID,
};

static const struct option long_opts[] = {
	PROG_LONG_OPTS,
	{ "show-keys", no_argument, NULL, OPT_SHOW_KEYS },
	{ "pkt", required_argument, NULL, OPT_PKT },
	{ "tc", no_argument, NULL, OPT_TC },
	{ "syscall", no_argument, NULL, OPT_SYSCALL },
	{ "len", required_argument, NULL, OPT_LEN },
	{ "id", required_argument, NULL, OPT_ID },
	{ NULL, 0, NULL, 0 },
};

enum cmd { CMD_TEST_RUN, CMD_LEAK_CHECK, CMD_KFUNC, CMD_SYSCALL_REFUSED };

static const char *const cmd_names[] = {
	"test-run", "leak-check", "kfunc", "kfunc-syscall-refused",
};

static enum cmd cmd;

/* Whether command cmd takes option @opt. */
static bool takes(int opt)
{
	switch (opt) {
	case OPT_BY_REF:
	case OPT_BY_ID:
		return cmd == CMD_TEST_RUN || cmd == CMD_KFUNC;
	case OPT_TC:
	case OPT_SYSCALL:
	case OPT_LEN:
	case OPT_ID:
		return cmd == CMD_KFUNC;
	case 'v':
	case '?':
		return true;
	default:	/* the program options, --show-keys, --pkt, -j */
		return cmd == CMD_TEST_RUN;
	}
}

int main(int argc, char **argv)
{
	struct options o = { .kf_len = -1 };
	static unsigned char kf_key[KBLOOM_KFUNC_KEY_BUF];
	size_t kf_key_len = 0;
	const char *kf_name = NULL;
	int opt, i;
	uint64_t v;

	me = "kbloom_xdp_test";
	if (argc < 2 || !strcmp(argv[1], "help") ||
	    !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	for (i = 0; i < (int)ARRAY_LEN(cmd_names); i++)
		if (!strcmp(argv[1], cmd_names[i]))
			break;
	if (i == (int)ARRAY_LEN(cmd_names))
		return usage_err("'%s' is not test-run, leak-check, kfunc or kfunc-syscall-refused",
				 argv[1]);
	cmd = i;
	if (prog_opts_init(&o.prog, argc))
		return EXIT_RUNTIME;
	o.pkts = calloc(argc, sizeof(*o.pkts));
	if (!o.pkts) {
		errmsg("%s", strerror(errno));
		return EXIT_RUNTIME;
	}
	/* getopt sees the arguments after the command. */
	argv[1] = argv[0];
	argc--;
	argv++;
	while ((opt = prog_getopt(&o.prog, argc, argv, long_opts, takes,
				  cmd_names[cmd])) > 0) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case OPT_SHOW_KEYS:
			o.prog.show_keys = true;
			break;
		case OPT_PKT:
			o.pkts[o.nr_pkts++] = optarg;
			break;
		case OPT_TC:
		case OPT_SYSCALL:
			if (o.kf_prog != KF_XDP &&
			    o.kf_prog != (opt == OPT_TC ? KF_TC : KF_SYSCALL))
				return usage_err("%s", "--tc and --syscall: choose one");
			o.kf_prog = opt == OPT_TC ? KF_TC : KF_SYSCALL;
			break;
		case OPT_LEN:
			if (parse_u64(optarg, 0, KBLOOM_KFUNC_KEY_BUF, &v))
				return usage_err("--len: '%s' is not 0 to 4104",
						 optarg);
			o.kf_len = (int64_t)v;
			break;
		case OPT_ID:
			if (parse_u64(optarg, 1, INT32_MAX, &v))
				return usage_err("--id: '%s' is not 1 to 2147483647",
						 optarg);
			o.kf_id = (uint32_t)v;
			o.prog.by = BY_ID;
			break;
		}
	}
	if (!opt)
		return EXIT_USAGE;
	libbpf_set_print(capture_print);
	if (cmd == CMD_KFUNC) {
		/* OP FILTER [KEY-HEX] */
		if (argc - optind < 2 || argc - optind > 3)
			return usage_err("%s", "kfunc: OP FILTER [KEY-HEX] expected");
		for (i = 0; i < (int)ARRAY_LEN(kf_ops); i++)
			if (!strcmp(argv[optind], kf_ops[i]))
				break;
		if (i == (int)ARRAY_LEN(kf_ops))
			return usage_err("kfunc: '%s' is not query, add, test-and-add, remove, get or id",
					 argv[optind]);
		o.kf_op = i;
		kf_name = argv[optind + 1];
		if (!name_ok(kf_name))
			return usage_err("'%s' is not a filter name (1 to 31 of A-Z a-z 0-9 _ . -, not starting with .)",
					 kf_name);
		if (o.kf_op == KBLOOM_KFUNC_GET || o.kf_op == KBLOOM_KFUNC_ID) {
			if (argc - optind == 3)
				return usage_err("kfunc %s: no key", kf_ops[o.kf_op]);
			if (o.kf_len >= 0)
				return usage_err("kfunc %s: no key, no --len", kf_ops[o.kf_op]);
			if (o.prog.by == BY_ID)
				return usage_err("kfunc %s: by name, not by id", kf_ops[o.kf_op]);
		} else {
			if (argc - optind != 3)
				return usage_err("kfunc %s: KEY-HEX expected", kf_ops[o.kf_op]);
			if (parse_hex(argv[optind + 2], kf_key, sizeof(kf_key),
				      &kf_key_len))
				return usage_err("kfunc: '%s' is not a key in hex (1 to 4104 bytes)",
						 argv[optind + 2]);
		}
		if (o.kf_prog == KF_SYSCALL && o.kf_op != KBLOOM_KFUNC_QUERY &&
		    o.kf_op != KBLOOM_KFUNC_GET && o.kf_op != KBLOOM_KFUNC_ID)
			return usage_err("kfunc %s: syscall programs may only query, get and id (kfunc-syscall-refused checks that the others are refused)",
					 kf_ops[o.kf_op]);
	} else if (optind != argc) {
		return usage_err("unexpected argument '%s'", argv[optind]);
	}
	/* --ids-from says by id; else by reference. */
	if (cmd == CMD_TEST_RUN && !o.prog.map && o.prog.by == BY_DEFAULT)
		o.prog.by = o.prog.ids_sysfs ? BY_ID : BY_REF;

	switch (cmd) {
	case CMD_TEST_RUN:
		return cmd_test_run(&o);
	case CMD_LEAK_CHECK:
		return cmd_leak_check();
	case CMD_KFUNC:
		return cmd_kfunc(&o, kf_name, kf_key, kf_key_len);
	case CMD_SYSCALL_REFUSED:
		return cmd_syscall_refused();
	}
	return EXIT_USAGE;
}
