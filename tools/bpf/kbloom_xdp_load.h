/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the XDP example's loader (kbloom_xdp.c), its tests
 * (kbloom_xdp_test.c) and its benchmark (tools/bench/kbloom_xdp_bench.c)
 * share: the program options, loading either program of the example
 * (kbloom_xdp.bpf.c on kbloom's kfuncs, kbloom_xdp_map.bpf.c on BPF bloom
 * filter maps), the filters behind them, and their counters.
 */
#ifndef KBLOOM_XDP_LOAD_H
#define KBLOOM_XDP_LOAD_H

#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <bpf/libbpf.h>
#include <linux/kbloom.h>

/* First: the skeletons want its union kbloom_bpf_name. */
#include "kbloom_xdp.h"
#include "kbloom_xdp.skel.h"
#include "kbloom_xdp_map.skel.h"

#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

#define NR_COUNTERS	(sizeof(struct kbloom_xdp_stats) / sizeof(__u64))
extern const char *const counter_names[NR_COUNTERS];

/* The program's name, for messages: set by each main(). */
extern const char *me;
/* -v: libbpf's debug messages, and the verifier's statistics. */
extern bool verbose;
extern struct bpf_object_open_opts open_opts;

void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* libbpf's messages: its debug ones only with -v. */
int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap);
/* "ME: MESSAGE", "Try 'ME --help'."; returns EXIT_USAGE. */
int usage_err(const char *fmt, const char *arg);

bool name_ok(const char *name);
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int parse_addr(const char *s, unsigned char addr[16]);

/* ---- the program options --------------------------------------------- */

enum { BY_DEFAULT, BY_REF, BY_ID };

struct prog_opts {
	bool map;		/* the BPF bloom map program */
	bool no_lookup;		/* parse and build keys, no lookup */
	int by;			/* BY_DEFAULT, BY_REF or BY_ID */
	bool ids_sysfs;		/* --by-id: ids from sysfs, not the program */
	const char *allow;	/* allow-list filter, or NULL */
	const char *flows;	/* new-flow filter, or NULL */
	const char **allow_addrs;
	int nr_allow_addrs;
	bool fail_open;
	bool show_keys;
	uint64_t capacity;	/* --map: the flow map's keys */
	double fpr;		/* --map: its false-positive rate */
	bool json;		/* -j */
};

/* The getopt_long() values of the program options; others follow. */
enum {
	OPT_MAP = 256, OPT_BY_REF, OPT_BY_ID, OPT_IDS_FROM, OPT_ALLOW,
	OPT_FLOWS, OPT_ALLOW_ADDR, OPT_FAIL_OPEN, OPT_CAPACITY, OPT_FPR,
	OPT_PROG_END,
};

#define PROG_LONG_OPTS \
	{ "map", no_argument, NULL, OPT_MAP }, \
	{ "by-ref", no_argument, NULL, OPT_BY_REF }, \
	{ "by-id", no_argument, NULL, OPT_BY_ID }, \
	{ "ids-from", required_argument, NULL, OPT_IDS_FROM }, \
	{ "allow", required_argument, NULL, OPT_ALLOW }, \
	{ "flows", required_argument, NULL, OPT_FLOWS }, \
	{ "allow-addr", required_argument, NULL, OPT_ALLOW_ADDR }, \
	{ "fail-open", no_argument, NULL, OPT_FAIL_OPEN }, \
	{ "capacity", required_argument, NULL, OPT_CAPACITY }, \
	{ "fpr", required_argument, NULL, OPT_FPR }, \
	{ "json", no_argument, NULL, 'j' }, \
	{ "verbose", no_argument, NULL, 'v' }, \
	{ "help", no_argument, NULL, 'h' }

#define PROG_USAGE \
	"Program options:\n" \
	"  --map              the program on BPF bloom filter maps (kbloom_xdp_map),\n" \
	"                     not on kbloom's filters; --allow and --flows then only\n" \
	"                     switch its allow-list and flow count on\n" \
	"  --by-ref           reach filters with bpf_kbloom_get()/put() per packet\n" \
	"                     (the default; kbloom_xdp_bench: both unless one is given)\n" \
	"  --by-id            reach filters by id, resolved once at load\n" \
	"  --ids-from SRC     --by-id: prog (bpf_kbloom_id() in a syscall program, the\n" \
	"                     default) or sysfs (/sys/kernel/bloom/filters/NAME/id)\n" \
	"  --allow NAME       drop packets whose source address is not in filter NAME\n" \
	"                     (key: bloomctl add NAME --key saddr --flow ADDR)\n" \
	"  --flows NAME       count new 5-tuples with test-and-add on filter NAME\n" \
	"                     (key: --key saddr,daddr,proto,sport,dport)\n" \
	"  --allow-addr ADDR  add ADDR to the allow-list first (repeatable): into the\n" \
	"                     --map program's map, or filter --allow through /dev/bloom\n" \
	"  --fail-open        pass packets when the allow-list filter cannot be read\n" \
	"                     (destroyed, error); the default drops them\n" \
	"  --capacity N       --map: keys of the flow map (default 1000000)\n" \
	"  --fpr P            --map: its false-positive rate (default 0.01)\n" \
	"  -j, --json         JSON output (kbloom_xdp_test: test-run's)\n" \
	"  -v, --verbose      libbpf's debug messages\n"

/* Defaults, and room for @argc --allow-addr; 0, or -1 said. */
int prog_opts_init(struct prog_opts *o, int argc);
/* Program option @opt, -j, -v or a bad one ('?'): 0, or EXIT_USAGE said. */
int prog_opt(struct prog_opts *o, int opt, const char *arg);
/* The program options together: 0, or EXIT_USAGE said. */
int prog_opts_check(const struct prog_opts *o);
/*
 * The next option of @argv (getopt_long() with @opts: PROG_LONG_OPTS and
 * the caller's) that is not a program option, -j or -v, which go into @o:
 * 'h' or one of the caller's; -1 at the end, the program options checked
 * together; 0 after a usage error said. Command @cmd takes the options
 * @takes says it does (NULL: all).
 */
int prog_getopt(struct prog_opts *o, int argc, char **argv,
		const struct option *opts, bool (*takes)(int opt),
		const char *cmd);

/* ---- filters --------------------------------------------------------- */

/*
 * The allow-list key of a source address, zero-padded to
 * KBLOOM_XDP_ALLOW_SIZE: its unpadded length, or -1.
 */
int allow_key(const char *addr, unsigned char key[KBLOOM_XDP_ALLOW_SIZE]);
/* One ioctl on /dev/bloom about filter @name: 0, or -1 said. */
int filter_ioctl(const char *name, unsigned long cmd, void *arg,
		 const char *what);
/* The --allow-addr keys into the kbloom filter --allow. */
int fill_allow_filter(const struct prog_opts *o);
/* Why kfunc programs may not load: the module's own word, if any. */
void kfuncs_hint(void);
void set_name(union kbloom_bpf_name *dst, const char *name);

/* ---- loading --------------------------------------------------------- */

/* A loaded program, of either kind. */
struct loaded {
	struct kbloom_xdp *kf;
	struct kbloom_xdp_map *mp;
	int prog_fd;
	int counters_fd;
	struct kbloom_xdp_keys *keys;	/* in the program's .bss */
	char what[64];			/* for messages and tables */
	uint32_t allow_id, flows_id;	/* by id: the ids it uses */
};

int load_kfunc(const struct prog_opts *o, bool by_id, struct loaded *l);
int load_map(const struct prog_opts *o, struct loaded *l);
/* The program @o asks for: 0, or -1 said. */
int load(const struct prog_opts *o, struct loaded *l);
void unload(struct loaded *l);

/* ---- counters -------------------------------------------------------- */

/* The counters of map @fd, summed over the CPUs, into @sum. */
int read_counters(int fd, uint64_t sum[NR_COUNTERS]);
void json_str(FILE *f, const char *s);
void print_counters_json(const uint64_t c[NR_COUNTERS]);

#endif /* KBLOOM_XDP_LOAD_H */
