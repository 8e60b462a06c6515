// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_xdp_bench: the XDP example of tools/bpf (kbloom_xdp.bpf.c, on
 * kbloom's kfuncs, by reference and by id) against the same program on
 * BPF bloom filter maps (kbloom_xdp_map.bpf.c), and that program with its
 * lookups left out (parsing and keys only): packets/s through
 * BPF_PROG_TEST_RUN, and each program's lookups alone, its time less that
 * of the one without lookups. make bench-vm runs it
 * (tools/bench/vm-bench.sh, run_xdp_bench); the tests run it small.
 *
 * Exit status: 0 done, 1 runtime error, 2 usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bench.h"
#include "kbloom_xdp_load.h"
#include "kbloom_xdp_pkt.h"

struct options {
	struct prog_opts prog;
	uint64_t packets;
	uint64_t nr_flows;
	bool distinct;
	bool ipv6;
	bool clear;
	bool only_kfunc;
};

/* Clear filter @name, as bloomctl clear would. */
static int filter_clear(const char *name)
{
	struct kbloom_name n;

	memset(&n, 0, sizeof(n));
	strncpy(n.name, name, sizeof(n.name) - 1);
	return filter_ioctl(name, KBLOOM_IOC_CLEAR, &n, "clearing");
}

/* The bench's source address: the only one its allow-list holds. */
#define BENCH_SRC4	"10.1.0.1"
#define BENCH_SRC6	"2001:db8:1::1"

/*
 * Flow @i of the bench: UDP from the bench's source, to a distinct
 * destination address per flow (10.128.0.0/9, 2001:db8:2::/64).
 */
static void bench_pkt(const struct options *o, uint64_t i, struct pkt *pkt)
{
	char spec[128];
	char err[256];
	unsigned int a = (unsigned int)i;

	if (o->ipv6)
		snprintf(spec, sizeof(spec),
			 "udp [%s]:40000 > [2001:db8:2::%x:%x]:53", BENCH_SRC6,
			 a >> 16, a & 0xffff);
	else
		snprintf(spec, sizeof(spec), "udp %s:40000 > %u.%u.%u.%u:53",
			 BENCH_SRC4, 10, 128 | ((a >> 16) & 0x7f),
			 (a >> 8) & 0xff, a & 0xff);
	if (pkt_build(spec, pkt, err, sizeof(err)))
		abort();	/* our own description */
}

struct bench_result {
	double ns;		/* in the program, as the kernel timed it */
	double wall_ns;		/* around the system calls */
	uint64_t packets;
	uint64_t counters[NR_COUNTERS];
};

/* One BPF_PROG_TEST_RUN of flow @flow's packet, @repeat times, into @r. */
static int bench_run(const struct options *o, struct loaded *l, uint64_t flow,
		     int repeat, struct bench_result *r)
{
	LIBBPF_OPTS(bpf_test_run_opts, run, .repeat = repeat);
	double t0 = bench_now_ns();
	struct pkt pkt;

	bench_pkt(o, flow, &pkt);
	run.data_in = pkt.buf;
	run.data_size_in = pkt.len;
	if (bpf_prog_test_run_opts(l->prog_fd, &run)) {
		errmsg("%s: BPF_PROG_TEST_RUN: %s", l->what, strerror(errno));
		return -1;
	}
	r->ns += (double)run.duration * run.repeat;
	r->packets += run.repeat;
	r->wall_ns += bench_now_ns() - t0;
	return 0;
}

/*
 * The bench's runs: the kfunc program by reference and by id, the map
 * program, and first the same parsing, keys and counting with no lookup,
 * whose cost the others' "lookup" figures leave out.
 */
enum bench_run {
	BENCH_NONE,
	BENCH_BY_REF,
	BENCH_BY_ID,
	BENCH_MAP,
	NR_BENCH_RUNS,
};

static int bench_load(const struct options *o, enum bench_run run,
		      struct loaded *l)
{
	struct prog_opts none;

	switch (run) {
	case BENCH_NONE:
		/* The map program, parsing and building keys as the others. */
		none = o->prog;
		none.no_lookup = true;
		if (load_map(&none, l))
			return -1;
		snprintf(l->what, sizeof(l->what), "%s", "no lookup (parsing, keys)");
		return 0;
	case BENCH_MAP:
		return load_map(&o->prog, l);
	default:
		return (o->prog.nr_allow_addrs && fill_allow_filter(&o->prog)) ||
		       (o->clear && o->prog.flows &&
			filter_clear(o->prog.flows)) ||
		       load_kfunc(&o->prog, run == BENCH_BY_ID, l) ? -1 : 0;
	}
}

static int cmd_bench(struct options *o)
{
	bool want[NR_BENCH_RUNS] = { [BENCH_NONE] = true };
	bool ok[NR_BENCH_RUNS] = { false };
	double ns[NR_BENCH_RUNS] = { 0 };
	struct bench_result r[NR_BENCH_RUNS];
	struct loaded l[NR_BENCH_RUNS];
	const char *src = o->ipv6 ? BENCH_SRC6 : BENCH_SRC4;
	const char *allow_addrs[1] = { src };
	/* main() checked 1 <= --packets / --flows-count <= INT_MAX. */
	int repeat = o->distinct ? 1 : (int)(o->packets / o->nr_flows);
	uint64_t i, turns;
	int failed = 0, shown = 0;
	enum bench_run run;

	if (!o->prog.map) {
		want[BENCH_BY_REF] = o->prog.by != BY_ID;
		want[BENCH_BY_ID] = o->prog.by != BY_REF;
	}
	want[BENCH_MAP] = !o->only_kfunc;
	/* The allow-lists hold the bench's source, else all would drop. */
	if (o->prog.allow) {
		o->prog.allow_addrs = allow_addrs;
		o->prog.nr_allow_addrs = 1;
	}
	if (!o->prog.json) {
		printf("bench: %llu packets, %llu flows (IPv%d UDP), %s; allow-list %s, flow count %s\n",
		       (unsigned long long)o->packets,
		       (unsigned long long)o->nr_flows, o->ipv6 ? 6 : 4,
		       o->distinct ? "one run per packet (distinct)" :
				     "each flow's packet repeated",
		       o->prog.allow ? "on" : "off", o->prog.flows ? "on" : "off");
		printf("%-30s %12s %10s %12s %10s %10s %8s %8s\n", "program",
		       "packets/s", "ns/packet", "wall pkt/s", "new", "seen",
		       "dropped", "errors");
	} else {
		printf("{\"packets\":%llu,\"flows\":%llu,\"family\":%d,\"mode\":\"%s\",\"results\":[",
		       (unsigned long long)o->packets,
		       (unsigned long long)o->nr_flows, o->ipv6 ? 6 : 4,
		       o->distinct ? "distinct" : "repeat");
	}
	fflush(stdout);
	memset(r, 0, sizeof(r));
	for (run = 0; run < NR_BENCH_RUNS; run++) {
		if (!want[run])
			continue;
		if (bench_load(o, run, &l[run]))
			failed++;
		else
			ok[run] = true;
	}
	/*
	 * Side by side: the programs take turns, a flow each (its packet
	 * repeated) or, with --distinct, a packet each, so that what the
	 * machine or the emulator does meanwhile falls on all of them alike;
	 * one program run after another moved the "no lookup" line, and with
	 * it every "lookup alone", by a third under emulation. Each program
	 * has flows of its own (numbered from run * --flows-count): the two
	 * kfunc programs share one filter, and each must see its flows new.
	 */
	turns = o->distinct ? o->packets : o->nr_flows;
	for (i = 0; i < turns; i++) {
		for (run = 0; run < NR_BENCH_RUNS; run++) {
			if (!ok[run])
				continue;
			if (bench_run(o, &l[run],
				      run * o->nr_flows + i % o->nr_flows,
				      repeat, &r[run])) {
				unload(&l[run]);
				ok[run] = false;
				failed++;
			}
		}
	}
	for (run = 0; run < NR_BENCH_RUNS; run++) {
		if (!ok[run])
			continue;
		if (read_counters(l[run].counters_fd, r[run].counters)) {
			unload(&l[run]);
			ok[run] = false;
			failed++;
			continue;
		}
		ns[run] = r[run].ns / r[run].packets;
		if (o->prog.json) {
			printf("%s{\"program\":", shown++ ? "," : "");
			json_str(stdout, l[run].what);
			printf(",\"packets_per_s\":%.0f,\"ns_per_packet\":%.2f,\"lookup_ns_per_packet\":%.2f,\"wall_packets_per_s\":%.0f,\"counters\":",
			       r[run].packets / r[run].ns * 1e9, ns[run],
			       run && ns[BENCH_NONE] ? ns[run] - ns[BENCH_NONE] : 0,
			       r[run].packets / r[run].wall_ns * 1e9);
			print_counters_json(r[run].counters);
			putchar('}');
		} else {
			printf("%-30s %12.0f %10.2f %12.0f %10llu %10llu %8llu %8llu\n",
			       l[run].what, r[run].packets / r[run].ns * 1e9,
			       ns[run], r[run].packets / r[run].wall_ns * 1e9,
			       (unsigned long long)r[run].counters[2],
			       (unsigned long long)r[run].counters[3],
			       (unsigned long long)r[run].counters[1],
			       (unsigned long long)r[run].counters[4]);
		}
		fflush(stdout);
	}
	if (o->prog.json) {
		printf("]}\n");
	} else if (ns[BENCH_NONE] > 0) {
		/*
		 * The filters' share: each program's time less the parsing
		 * it shares with the others, and the map's share over it.
		 */
		printf("lookups alone (ns/packet less the %.2f of no lookup):\n",
		       ns[BENCH_NONE]);
		for (run = BENCH_BY_REF; run < NR_BENCH_RUNS; run++) {
			double mine = ns[run] - ns[BENCH_NONE];
			double map = ns[BENCH_MAP] - ns[BENCH_NONE];

			if (ns[run] <= 0)
				continue;
			printf("  lookup, %-30s %10.2f ns", l[run].what, mine);
			if (run != BENCH_MAP && ns[BENCH_MAP] > 0 && mine > 0)
				printf("  %.2fx the map's lookup rate", map / mine);
			putchar('\n');
		}
	}
	for (run = 0; run < NR_BENCH_RUNS; run++)
		if (ok[run])
			unload(&l[run]);
	return failed ? EXIT_RUNTIME : 0;
}

static void usage(FILE *f)
{
	fputs("Usage: kbloom_xdp_bench [PROGRAM OPTIONS] [--kfunc] [--packets N] [--flows-count M]\n"
	      "                        [--distinct] [--ipv6] [--clear] [-j]\n"
	      "\n"
	      "Benchmark the kbloom XDP example (kbloom_xdp) against the same program on\n"
	      "BPF bloom filter maps, through BPF_PROG_TEST_RUN.\n"
	      "\n"
	      PROG_USAGE
	      "\n"
	      "Other options:\n"
	      "  --kfunc            the kfunc program only (--map: the map's only)\n"
	      "  --packets N        packets per program (default 1000000)\n"
	      "  --flows-count M    distinct flows among them, each program its\n"
	      "                     own (default 1000, at most 2097152); the programs\n"
	      "                     take turns, a flow (or with --distinct a packet) each\n"
	      "  --distinct         one BPF_PROG_TEST_RUN per packet, the flows in\n"
	      "                     turn; default: each flow's packet repeated N/M times\n"
	      "  --ipv6             IPv6 packets\n"
	      "  --clear            clear filter --flows first; the two kfunc\n"
	      "                     programs share it, and fill it with 2 x M flows\n"
	      "\n"
	      "Exit status: 0 done, 1 error, 2 usage error.\n", f);
}

enum {
	OPT_KFUNC = OPT_PROG_END, OPT_PACKETS, OPT_FLOWS_COUNT, OPT_DISTINCT,
	OPT_IPV6, OPT_CLEAR,
};

static const struct option long_opts[] = {
	PROG_LONG_OPTS,
	{ "kfunc", no_argument, NULL, OPT_KFUNC },
	{ "packets", required_argument, NULL, OPT_PACKETS },
	{ "flows-count", required_argument, NULL, OPT_FLOWS_COUNT },
	{ "distinct", no_argument, NULL, OPT_DISTINCT },
	{ "ipv6", no_argument, NULL, OPT_IPV6 },
	{ "clear", no_argument, NULL, OPT_CLEAR },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	struct options o = { .packets = 1000000, .nr_flows = 1000 };
	uint64_t v;
	int opt;

	me = "kbloom_xdp_bench";
	if (prog_opts_init(&o.prog, argc))
		return EXIT_RUNTIME;
	while ((opt = prog_getopt(&o.prog, argc, argv, long_opts, NULL,
				  NULL)) > 0) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case OPT_KFUNC:
			o.only_kfunc = true;
			break;
		case OPT_PACKETS:
			if (parse_u64(optarg, 1, 1ULL << 40, &o.packets))
				return usage_err("--packets: '%s' is not a count",
						 optarg);
			break;
		case OPT_FLOWS_COUNT:
			/* 2^23 IPv4 destinations, a quarter per program. */
			if (parse_u64(optarg, 1, 1U << 21, &v))
				return usage_err("--flows-count: '%s' is not 1 to 2097152",
						 optarg);
			o.nr_flows = v;
			break;
		case OPT_DISTINCT:
			o.distinct = true;
			break;
		case OPT_IPV6:
			o.ipv6 = true;
			break;
		case OPT_CLEAR:
			o.clear = true;
			break;
		}
	}
	if (!opt)
		return EXIT_USAGE;
	libbpf_set_print(print_libbpf);
	if (o.prog.map && o.only_kfunc)
		return usage_err("%s", "--map and --kfunc: choose one");
	if (o.prog.nr_allow_addrs)
		return usage_err("%s", "bench fills the allow-lists with its own source address: no --allow-addr");
	if (o.nr_flows > o.packets)
		return usage_err("%s", "--flows-count is more than --packets");
	/* BPF_PROG_TEST_RUN repeats a packet at most INT_MAX times here. */
	if (o.packets / o.nr_flows > INT_MAX)
		return usage_err("%s", "more than 2147483647 packets per flow");
	if (o.clear && !o.prog.flows)
		return usage_err("%s", "--clear needs --flows NAME");
	if (optind != argc)
		return usage_err("unexpected argument '%s'", argv[optind]);
	return cmd_bench(&o);
}
