// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_xdp: loads the XDP examples of tools/bpf through their libbpf
 * skeletons: kbloom_xdp.bpf.c (kbloom's kfuncs, by reference or by id)
 * or, with --map, kbloom_xdp_map.bpf.c (BPF bloom filter maps). Attaches
 * them to a device, reads their counters, detaches them; runs them on
 * crafted packets with BPF_PROG_TEST_RUN (test-run), so that tests see
 * verdicts and counters without traffic; benchmarks the two side by side
 * (bench); and checks that the verifier refuses a program that leaks a
 * filter reference (leak-check). kfunc runs one call of any of the kfuncs
 * from an XDP, tc or syscall program (kbloom_kfunc_test.bpf.c) and prints
 * its answer; kfunc-syscall-refused checks that the verifier refuses the
 * kfuncs that change filters to syscall programs
 * (kbloom_kfunc_refused.bpf.c).
 *
 * Exit status: 0 done, 1 runtime error, 2 usage error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/if_link.h>
#include <math.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/kbloom.h>

/* First: the skeletons want its union kbloom_bpf_name. */
#include "kbloom_xdp.h"
#include "kbloom_kfunc_refused.skel.h"
#include "kbloom_kfunc_test.skel.h"
#include "kbloom_xdp.skel.h"
#include "kbloom_xdp_leak.skel.h"
#include "kbloom_xdp_map.skel.h"

#define ME		"kbloom_xdp"
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

/* The frames test-run and bench build: headers and a little payload. */
#define PKT_MAX		512
#define ETH_ZLEN_	60	/* a frame's minimum, without FCS */

static const char *const counter_names[] = { KBLOOM_XDP_COUNTERS };
#define NR_COUNTERS	ARRAY_LEN(counter_names)

struct options {
	bool map;		/* the BPF bloom map program */
	bool no_lookup;		/* bench: parse and build keys, no lookup */
	int by;			/* BY_DEFAULT, BY_REF or BY_ID */
	bool ids_sysfs;		/* --by-id: ids from sysfs, not the program */
	const char *allow;	/* allow-list filter, or NULL */
	const char *flows;	/* new-flow filter, or NULL */
	const char **allow_addrs;
	int nr_allow_addrs;
	bool fail_open;
	bool show_keys;
	bool json;
	uint64_t capacity;	/* --map: the flow map's keys */
	double fpr;		/* --map: its false-positive rate */
	uint32_t xdp_mode;	/* XDP_FLAGS_SKB_MODE, _DRV_MODE or 0 */
	bool force;
	const char **pkts;
	int nr_pkts;
	/* bench */
	uint64_t packets;
	uint64_t nr_flows;
	bool distinct;
	bool ipv6;
	bool clear;
	bool only_kfunc;
	/* kfunc */
	int kf_op;		/* enum kbloom_kfunc_op */
	int kf_prog;		/* KF_XDP, KF_TC or KF_SYSCALL */
	uint32_t kf_id;		/* --id: this id, not the name's */
	int64_t kf_len;		/* --len, or -1: the key's bytes */
};

enum { KF_XDP, KF_TC, KF_SYSCALL };

enum { BY_DEFAULT, BY_REF, BY_ID };

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

static void __attribute__((format(printf, 1, 2))) errmsg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, ME ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- libbpf's messages ------------------------------------------------- */

static bool verbose;
/* -v: the verifier's statistics too (libbpf prints them as debug). */
static struct bpf_object_open_opts open_opts = { .sz = sizeof(open_opts) };
/*
 * While set, libbpf's messages are kept here (leak-check reads the
 * verifier's log in them) instead of printed.
 */
static char *capture;
static size_t capture_len, capture_cap;

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
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
	return vfprintf(stderr, fmt, ap);
}

/* ---- arguments --------------------------------------------------------- */

static bool name_ok(const char *name)
{
	size_t len = strlen(name), i;

	if (!len || len >= KBLOOM_NAME_MAX || name[0] == '.')
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) &&
		    !strchr("_.-", name[i]))
			return false;
	return true;
}

static int parse_u64(const char *s, uint64_t min, uint64_t max,
		     uint64_t *out)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || *out < min || *out > max ? -1 : 0;
}

/* An address: 4 or 16 bytes into @addr; its family (4 or 6), or 0. */
static int parse_addr(const char *s, unsigned char addr[16])
{
	if (inet_pton(AF_INET, s, addr) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, addr) == 1)
		return 6;
	return 0;
}

/* ---- keys -------------------------------------------------------------- */

/*
 * The allow-list key of a source address, as kbloom_flow_key() builds it
 * from a packet and `bloomctl --key saddr --flow ADDR` from text: family,
 * KBLOOM_FLOW_SADDR, the address; zero-padded to KBLOOM_XDP_ALLOW_SIZE
 * (the map's value size). Returns the unpadded length, or -1.
 */
static int allow_key(const char *addr, unsigned char key[KBLOOM_XDP_ALLOW_SIZE])
{
	unsigned char a[16];
	int family = parse_addr(addr, a);

	if (!family)
		return -1;
	memset(key, 0, KBLOOM_XDP_ALLOW_SIZE);
	key[0] = family == 4 ? KBLOOM_FLOW_IPV4 : KBLOOM_FLOW_IPV6;
	key[1] = KBLOOM_FLOW_SADDR;
	memcpy(key + 2, a, family == 4 ? 4 : 16);
	return family == 4 ? 6 : 18;
}

static void hex(FILE *f, const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		fprintf(f, "%02x", p[i]);
}

/* ---- /dev/bloom and sysfs ---------------------------------------------- */

static const char *bloom_device(void)
{
	const char *dev = getenv("BLOOMCTL_DEVICE");

	return dev && *dev ? dev : "/dev/bloom";
}

/*
 * One ioctl on the device, about filter @name (@what says what was being
 * done, for the error): 0, or -1 with the error said.
 */
static int filter_ioctl(const char *name, unsigned long cmd, void *arg,
			const char *what)
{
	int fd, ret = 0;

	fd = open(bloom_device(), O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		errmsg("%s: %s", bloom_device(), strerror(errno));
		return -1;
	}
	if (ioctl(fd, cmd, arg)) {
		errmsg("filter '%s': %s: %s", name, what, strerror(errno));
		ret = -1;
	}
	close(fd);
	return ret;
}

/* Add @key to filter @name through the device, as bloomctl add would. */
static int filter_add(const char *name, const unsigned char *key, int len)
{
	struct kbloom_key k;

	memset(&k, 0, sizeof(k));
	strncpy(k.name, name, sizeof(k.name) - 1);
	k.key = (uintptr_t)key;
	k.len = len;
	return filter_ioctl(name, KBLOOM_IOC_ADD, &k, "adding a key");
}

static int filter_clear(const char *name)
{
	struct kbloom_name n;

	memset(&n, 0, sizeof(n));
	strncpy(n.name, name, sizeof(n.name) - 1);
	return filter_ioctl(name, KBLOOM_IOC_CLEAR, &n, "clearing");
}

/* A filter's id from /sys/kernel/bloom/filters/NAME/id; 0 on error. */
static uint32_t sysfs_id(const char *name)
{
	char path[128], buf[32];
	uint64_t id;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/bloom/filters/%s/id", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errmsg("filter '%s': %s (%s)", name,
		       errno == ENOENT ? "no such filter" : strerror(errno),
		       path);
		return 0;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0)
		buf[n] = '\0';
	if (n <= 0 || parse_u64(buf, 1, UINT32_MAX, &id)) {
		errmsg("filter '%s': %s: not an id", name, path);
		return 0;
	}
	return (uint32_t)id;
}

/* Why kfunc programs may not load: the module's own word, if any. */
static void kfuncs_hint(void)
{
	char buf[256];
	ssize_t n;
	int fd = open("/sys/kernel/bloom/kfuncs", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		errmsg("kbloom's kfuncs: kbloom.ko is not loaded (no /sys/kernel/bloom/kfuncs)");
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	errmsg("kbloom's kfuncs: %s", buf);
}

/* ---- loading ----------------------------------------------------------- */

static void set_name(union kbloom_bpf_name *dst, const char *name)
{
	memset(dst, 0, sizeof(*dst));
	if (name)
		strncpy(dst->s, name, sizeof(dst->s) - 1);
}

/*
 * The number of hashes for a false-positive rate: log2(1/p), 1 to 15 (the
 * bits of map_extra a bloom filter map reads).
 */
static unsigned int map_hashes(double fpr)
{
	long k = lround(log2(1 / fpr));

	return k < 1 ? 1 : k > 15 ? 15 : (unsigned int)k;
}

/*
 * What kbloom_resolve found for filter @name (if the program uses one):
 * false if an id, else true, having said why.
 */
static bool resolved_bad(const char *name, int ret)
{
	if (!name || ret > 0)
		return false;
	errmsg("filter '%s': %s", name,
	       ret == -ENOENT ? "no such filter" : strerror(-ret));
	return true;
}

static int load_kfunc(const struct options *o, bool by_id,
		      struct loaded *l)
{
	struct kbloom_xdp *s;
	int err;

	memset(l, 0, sizeof(*l));
	snprintf(l->what, sizeof(l->what), "kbloom kfuncs, by %s",
		 by_id ? "id" : "reference");
	s = kbloom_xdp__open_opts(&open_opts);
	if (!s) {
		errmsg("opening kbloom_xdp: %s", strerror(errno));
		return -1;
	}
	set_name(&s->rodata->allow_name, o->allow);
	set_name(&s->rodata->flows_name, o->flows);
	s->rodata->by_id = by_id;
	s->rodata->fail_open = o->fail_open;
	s->rodata->show_keys = o->show_keys;
	if (by_id && o->ids_sysfs) {
		/* Before loading: a missing filter stops us early. */
		s->bss->allow_id = o->allow ? sysfs_id(o->allow) : 0;
		if (o->allow && !s->bss->allow_id)
			goto err;
		s->bss->flows_id = o->flows ? sysfs_id(o->flows) : 0;
		if (o->flows && !s->bss->flows_id)
			goto err;
	}
	bpf_program__set_autoload(s->progs.kbloom_resolve,
				  by_id && !o->ids_sysfs);
	err = kbloom_xdp__load(s);
	if (err) {
		errmsg("loading kbloom_xdp (%s): %s", l->what, strerror(-err));
		kfuncs_hint();
		goto err;
	}
	if (by_id && !o->ids_sysfs) {
		LIBBPF_OPTS(bpf_test_run_opts, run);
		int fd = bpf_program__fd(s->progs.kbloom_resolve);

		err = bpf_prog_test_run_opts(fd, &run);
		if (err) {
			errmsg("running kbloom_resolve: %s", strerror(errno));
			goto err;
		}
		if (resolved_bad(o->allow, s->bss->allow_id_ret) ||
		    resolved_bad(o->flows, s->bss->flows_id_ret))
			goto err;
	}
	l->kf = s;
	l->allow_id = s->bss->allow_id;
	l->flows_id = s->bss->flows_id;
	l->prog_fd = bpf_program__fd(s->progs.kbloom_xdp);
	l->counters_fd = bpf_map__fd(s->maps.kb_counters);
	l->keys = &s->bss->kb_keys;
	return 0;
err:
	kbloom_xdp__destroy(s);
	return -1;
}

static int load_map(const struct options *o, struct loaded *l)
{
	unsigned char key[KBLOOM_XDP_ALLOW_SIZE];
	struct kbloom_xdp_map *s;
	unsigned int k = map_hashes(o->fpr);
	int err, i, fd;

	memset(l, 0, sizeof(*l));
	snprintf(l->what, sizeof(l->what), "BPF bloom map, k = %u", k);
	s = kbloom_xdp_map__open_opts(&open_opts);
	if (!s) {
		errmsg("opening kbloom_xdp_map: %s", strerror(errno));
		return -1;
	}
	s->rodata->use_allow = !!o->allow;
	s->rodata->use_flows = !!o->flows;
	s->rodata->no_lookup = o->no_lookup;
	s->rodata->show_keys = o->show_keys;
	/* map_extra: the number of hashes, nothing else (seed bits 0). */
	if (bpf_map__set_max_entries(s->maps.kb_flows, (uint32_t)o->capacity) ||
	    bpf_map__set_map_extra(s->maps.kb_flows, k) ||
	    bpf_map__set_max_entries(s->maps.kb_allow,
				     o->nr_allow_addrs ? o->nr_allow_addrs : 1) ||
	    bpf_map__set_map_extra(s->maps.kb_allow, k)) {
		errmsg("sizing the bloom filter maps: %s", strerror(errno));
		goto err;
	}
	err = kbloom_xdp_map__load(s);
	if (err) {
		errmsg("loading kbloom_xdp_map: %s", strerror(-err));
		goto err;
	}
	fd = bpf_map__fd(s->maps.kb_allow);
	for (i = 0; i < o->nr_allow_addrs; i++) {
		allow_key(o->allow_addrs[i], key);
		/* A bloom filter map's update takes the value, no key. */
		if (bpf_map_update_elem(fd, NULL, key, BPF_ANY)) {
			errmsg("allow-list map: adding %s: %s",
			       o->allow_addrs[i], strerror(errno));
			goto err;
		}
	}
	l->mp = s;
	l->prog_fd = bpf_program__fd(s->progs.kbloom_xdp_map);
	l->counters_fd = bpf_map__fd(s->maps.kb_counters);
	l->keys = &s->bss->kb_keys;
	return 0;
err:
	kbloom_xdp_map__destroy(s);
	return -1;
}

/* The --allow-addr keys into the kbloom filter --allow. */
static int fill_allow_filter(const struct options *o)
{
	unsigned char key[KBLOOM_XDP_ALLOW_SIZE];
	int i, len;

	for (i = 0; i < o->nr_allow_addrs; i++) {
		len = allow_key(o->allow_addrs[i], key);
		if (filter_add(o->allow, key, len))
			return -1;
	}
	return 0;
}

static int load(const struct options *o, struct loaded *l)
{
	if (o->map)
		return load_map(o, l);
	return load_kfunc(o, o->by == BY_ID, l);
}

static void unload(struct loaded *l)
{
	kbloom_xdp__destroy(l->kf);
	kbloom_xdp_map__destroy(l->mp);
	l->kf = NULL;
	l->mp = NULL;
}

/* ---- counters ---------------------------------------------------------- */

/* The counters of map @fd, summed over the CPUs, into @sum. */
static int read_counters(int fd, uint64_t sum[NR_COUNTERS])
{
	int ncpus = libbpf_num_possible_cpus(), cpu;
	struct kbloom_xdp_stats *v;
	uint32_t zero = 0;
	size_t c;

	if (ncpus < 0) {
		errmsg("number of CPUs: %s", strerror(-ncpus));
		return -1;
	}
	v = calloc(ncpus, sizeof(*v));
	if (!v) {
		errmsg("%s", strerror(errno));
		return -1;
	}
	if (bpf_map_lookup_elem(fd, &zero, v)) {
		errmsg("reading the counters: %s", strerror(errno));
		free(v);
		return -1;
	}
	memset(sum, 0, NR_COUNTERS * sizeof(sum[0]));
	for (cpu = 0; cpu < ncpus; cpu++)
		for (c = 0; c < NR_COUNTERS; c++)
			sum[c] += ((uint64_t *)&v[cpu])[c];
	free(v);
	return 0;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void print_counters_json(const uint64_t c[NR_COUNTERS])
{
	size_t i;

	putchar('{');
	for (i = 0; i < NR_COUNTERS; i++)
		printf("%s\"%s\":%llu", i ? "," : "", counter_names[i],
		       (unsigned long long)c[i]);
	putchar('}');
}

/* ---- packets ----------------------------------------------------------- */

struct pkt {
	unsigned char buf[PKT_MAX];
	size_t len;
};

static const struct {
	const char *name;
	uint8_t proto;
} protos[] = {
	{ "icmp", 1 }, { "igmp", 2 }, { "tcp", 6 }, { "udp", 17 },
	{ "dccp", 33 }, { "gre", 47 }, { "esp", 50 }, { "ah", 51 },
	{ "icmpv6", 58 }, { "sctp", 132 }, { "udplite", 136 },
};

static bool has_ports(uint8_t p)
{
	return p == 6 || p == 17 || p == 33 || p == 132 || p == 136;
}

struct endpoint {
	int family;
	unsigned char addr[16];
	uint16_t port;
};

/* "10.0.0.1", "10.0.0.1:53", "2001:db8::1", "[2001:db8::1]:53". */
static int parse_endpoint(const char *s, struct endpoint *e, char *err,
			  size_t errlen)
{
	char buf[INET6_ADDRSTRLEN + 16], *colon, *port = NULL;
	uint64_t v;

	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	e->port = 0;
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');

		if (!close || (close[1] && close[1] != ':'))
			goto bad;
		*close = '\0';
		if (close[1])
			port = close + 2;
		memmove(buf, buf + 1, strlen(buf + 1) + 1);
	} else {
		colon = strchr(buf, ':');
		/* One colon: IPv4 and a port; more: an IPv6 address. */
		if (colon && !strchr(colon + 1, ':')) {
			*colon = '\0';
			port = colon + 1;
		}
	}
	e->family = parse_addr(buf, e->addr);
	if (!e->family)
		goto bad;
	if (port) {
		if (parse_u64(port, 0, 65535, &v))
			goto bad;
		e->port = (uint16_t)v;
	}
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not ADDR, ADDR:PORT or [ADDR6]:PORT",
		 s);
	return -1;
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static uint16_t ip_csum(const unsigned char *p, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (p[i] << 8) | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/* The transport header, or 8 bytes of data for a later fragment. */
static size_t put_l4(unsigned char *p, uint8_t proto, bool later_frag,
		     const struct endpoint *src, const struct endpoint *dst,
		     bool v6)
{
	size_t len;

	if (later_frag) {
		/*
		 * Not a header: were the ports read from it, they would
		 * show as eeee in the key.
		 */
		memset(p, 0xee, 8);
		return 8;
	}
	switch (proto) {
	case 6:		/* TCP: a SYN */
		len = 20;
		memset(p, 0, len);
		p[7] = 1;
		p[12] = 5 << 4;
		p[13] = 0x02;
		put16(p + 14, 65535);
		break;
	case 17:	/* UDP, UDP-Lite: 8 bytes, length covers the header */
	case 136:
		len = 8;
		memset(p, 0, len);
		put16(p + 4, 8);
		break;
	case 33:	/* DCCP: a 16-byte generic header */
	case 132:	/* SCTP: the 12-byte common header, and 4 */
		len = 16;
		memset(p, 0, len);
		break;
	case 1:		/* ICMP, ICMPv6: an echo request */
	case 58:
		len = 8;
		memset(p, 0, len);
		p[0] = v6 ? 128 : 8;
		put16(p + 4, 0x4b42);
		put16(p + 6, 1);
		break;
	default:
		len = 8;
		memset(p, 0xa5, len);
		break;
	}
	if (has_ports(proto)) {
		put16(p, src->port);
		put16(p + 2, dst->port);
	}
	return len;
}

/* IPv6 extension headers by name: hop, dst, rt, ah, frag. */
static int ext_proto(const char *name)
{
	static const struct {
		const char *name;
		int proto;
	} exts[] = {
		{ "hop", 0 }, { "rt", 43 }, { "frag", 44 }, { "ah", 51 },
		{ "dst", 60 },
	};
	size_t i;

	for (i = 0; i < ARRAY_LEN(exts); i++)
		if (!strcmp(name, exts[i].name))
			return exts[i].proto;
	return -1;
}

#define MAX_EXT		12

/*
 * A frame from its description (kbloom_xdp help has the grammar):
 *   PROTO SRC > DST [frag=OFF] [mf] [vlan=ID]... [opts=N] [ext=LIST]
 *     [iplen=N] [trunc=N]
 *   arp [vlan=ID]...
 *   raw HEX
 */
static int pkt_build(const char *spec, struct pkt *pkt, char *err,
		     size_t errlen)
{
	char buf[512], *tok[32], *save, *t;
	unsigned char *p = pkt->buf, *l3;
	int ntok = 0, i, nvlan = 0, nr_ext = 0, ext[MAX_EXT];
	uint16_t vlans[2];
	struct endpoint src, dst;
	uint64_t v, frag = 0, opts = 0, trunc = 0, iplen = 0;
	bool mf = false, have_frag = false, have_iplen = false;
	bool have_trunc = false, frag_in_ext = false;
	int proto = -1;
	size_t len, l4len;

	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "packet description too long");
		return -1;
	}
	strcpy(buf, spec);
	for (t = strtok_r(buf, " \t", &save); t && ntok < (int)ARRAY_LEN(tok);
	     t = strtok_r(NULL, " \t", &save))
		tok[ntok++] = t;
	if (!ntok) {
		snprintf(err, errlen, "empty packet description");
		return -1;
	}
	memset(pkt->buf, 0, sizeof(pkt->buf));

	if (!strcmp(tok[0], "raw")) {
		const char *h = ntok == 2 ? tok[1] : "";
		size_t n = strlen(h);

		if (ntok != 2 || n % 2 || n / 2 < 14 || n / 2 > PKT_MAX) {
			snprintf(err, errlen, "raw: HEX of 14 to %d bytes",
				 PKT_MAX);
			return -1;
		}
		for (i = 0; i < (int)n / 2; i++) {
			unsigned int b;

			if (!isxdigit((unsigned char)h[2 * i]) ||
			    !isxdigit((unsigned char)h[2 * i + 1]) ||
			    sscanf(h + 2 * i, "%2x", &b) != 1) {
				snprintf(err, errlen, "raw: '%s' is not hex", h);
				return -1;
			}
			pkt->buf[i] = b;
		}
		pkt->len = n / 2;
		return 0;
	}

	i = 1;
	if (strcmp(tok[0], "arp")) {
		size_t k;

		for (k = 0; k < ARRAY_LEN(protos); k++)
			if (!strcmp(tok[0], protos[k].name))
				proto = protos[k].proto;
		if (proto < 0) {
			if (!strncmp(tok[0], "proto=", 6) &&
			    !parse_u64(tok[0] + 6, 0, 255, &v)) {
				proto = (int)v;
			} else {
				snprintf(err, errlen, "'%s' is not a protocol (tcp, udp, udplite, sctp, dccp, icmp, icmpv6, gre, esp, ah, igmp, proto=N), arp or raw",
					 tok[0]);
				return -1;
			}
		}
		if (ntok < 4 || strcmp(tok[2], ">")) {
			snprintf(err, errlen, "expected '%s SRC > DST'",
				 tok[0]);
			return -1;
		}
		if (parse_endpoint(tok[1], &src, err, errlen) ||
		    parse_endpoint(tok[3], &dst, err, errlen))
			return -1;
		if (src.family != dst.family) {
			snprintf(err, errlen, "IPv4 and IPv6 addresses in one packet");
			return -1;
		}
		if ((src.port || dst.port) && !has_ports(proto)) {
			snprintf(err, errlen, "protocol %d has no ports", proto);
			return -1;
		}
		i = 4;
	}
	for (; i < ntok; i++) {
		t = tok[i];
		if (!strcmp(t, "mf")) {
			mf = true;
		} else if (!strncmp(t, "frag=", 5) &&
			   !parse_u64(t + 5, 0, 65528, &v) && !(v % 8)) {
			frag = v;
			have_frag = true;
		} else if (!strncmp(t, "vlan=", 5) &&
			   !parse_u64(t + 5, 0, 4095, &v) && nvlan < 2) {
			vlans[nvlan++] = (uint16_t)v;
		} else if (!strncmp(t, "opts=", 5) &&
			   !parse_u64(t + 5, 0, 40, &v) && !(v % 4)) {
			opts = v;
		} else if (!strncmp(t, "iplen=", 6) &&
			   !parse_u64(t + 6, 0, 65535, &v)) {
			iplen = v;
			have_iplen = true;
		} else if (!strncmp(t, "trunc=", 6) &&
			   !parse_u64(t + 6, 14, PKT_MAX, &v)) {
			trunc = v;
			have_trunc = true;
		} else if (!strncmp(t, "ext=", 4)) {
			char *e, *s2;

			for (e = strtok_r(t + 4, ",", &s2); e;
			     e = strtok_r(NULL, ",", &s2)) {
				if (nr_ext == MAX_EXT || ext_proto(e) < 0) {
					snprintf(err, errlen, "ext=: a list of at most %d of hop, dst, rt, ah, frag",
						 MAX_EXT);
					return -1;
				}
				ext[nr_ext++] = ext_proto(e);
				frag_in_ext |= ext[nr_ext - 1] == 44;
			}
		} else {
			snprintf(err, errlen, "'%s': not an option (frag=BYTES (a multiple of 8), mf, vlan=ID (two at most), opts=BYTES (IPv4 options, a multiple of 4), ext=LIST (IPv6), iplen=N, trunc=N)",
				 t);
			return -1;
		}
	}
	if (proto < 0 && (have_frag || mf || opts || nr_ext || have_iplen)) {
		snprintf(err, errlen, "arp takes vlan= and trunc= only");
		return -1;
	}
	if (proto >= 0 && src.family == 4 && nr_ext) {
		snprintf(err, errlen, "ext= is for IPv6");
		return -1;
	}
	if (proto >= 0 && src.family == 6 && opts) {
		snprintf(err, errlen, "opts= is for IPv4");
		return -1;
	}
	/* A fragment header goes last, unless ext= placed it. */
	if (proto >= 0 && src.family == 6 && (have_frag || mf) &&
	    !frag_in_ext) {
		if (nr_ext == MAX_EXT) {
			snprintf(err, errlen, "too many extension headers");
			return -1;
		}
		ext[nr_ext++] = 44;
	}

	/* Ethernet: 02:00:00:00:00:02 < 02:00:00:00:00:01 */
	p[0] = 2;
	p[5] = 2;
	p[6] = 2;
	p[11] = 1;
	len = 12;
	for (i = 0; i < nvlan; i++) {
		/* The outer tag of two is 802.1ad, as QinQ has it. */
		put16(p + len, nvlan == 2 && !i ? 0x88a8 : 0x8100);
		put16(p + len + 2, vlans[i]);
		len += 4;
	}
	if (proto < 0) {
		static const unsigned char arp[28] = {
			0, 1, 8, 0, 6, 4, 0, 1,
			2, 0, 0, 0, 0, 1, 10, 0, 0, 1,
			0, 0, 0, 0, 0, 0, 10, 0, 0, 2,
		};

		put16(p + len, 0x0806);
		len += 2;
		memcpy(p + len, arp, sizeof(arp));
		len += sizeof(arp);
		goto done;
	}
	put16(p + len, src.family == 4 ? 0x0800 : 0x86dd);
	len += 2;
	l3 = p + len;
	if (src.family == 4) {
		size_t hlen = 20 + opts;

		l3[0] = 0x40 | (hlen / 4);
		put16(l3 + 4, 0x4b42);
		put16(l3 + 6, (mf ? 0x2000 : 0) | (frag / 8));
		l3[8] = 64;
		l3[9] = proto;
		memcpy(l3 + 12, src.addr, 4);
		memcpy(l3 + 16, dst.addr, 4);
		memset(l3 + 20, 1, opts);	/* NOP options */
		l4len = put_l4(l3 + hlen, proto, frag > 0, &src, &dst, false);
		put16(l3 + 2, have_iplen ? iplen : hlen + l4len);
		put16(l3 + 10, ip_csum(l3, hlen));
		len += hlen + l4len;
	} else {
		unsigned char *h = l3 + 40, *nh = l3 + 6;
		bool later = false;

		l3[0] = 0x60;
		l3[7] = 64;
		memcpy(l3 + 8, src.addr, 16);
		memcpy(l3 + 24, dst.addr, 16);
		/*
		 * Each header's next-header field is written when the next
		 * one is known.
		 */
		for (i = 0; i < nr_ext && !later; i++) {
			*nh = ext[i];
			nh = h;
			memset(h, 0, 8);
			switch (ext[i]) {
			case 44:
				put16(h + 2, frag | mf);
				put16(h + 6, 0x4b42);
				later = frag > 0;
				h += 8;
				break;
			case 51:	/* AH: (2 + 2) * 4 = 16 bytes */
				h[1] = 2;
				memset(h + 8, 0, 8);
				h += 16;
				break;
			default:	/* hop, dst, rt: (0 + 1) * 8 bytes */
				if (ext[i] != 43) {
					h[2] = 1;	/* PadN, 4 bytes */
					h[3] = 4;
				}
				h += 8;
				break;
			}
		}
		/*
		 * After a later fragment's header: the next header as
		 * listed (maybe another extension), then data.
		 */
		*nh = i < nr_ext ? ext[i] : proto;
		l4len = put_l4(h, proto, later, &src, &dst, true);
		h += l4len;
		put16(l3 + 4, have_iplen ? iplen : (uint64_t)(h - l3) - 40);
		len = h - p;
	}
done:
	if (len < ETH_ZLEN_)
		len = ETH_ZLEN_;	/* padding, as on the wire */
	if (have_trunc && trunc < len)
		len = trunc;
	pkt->len = len;
	return 0;
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

static int cmd_test_run(struct options *o)
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
	if (!o->map && o->nr_allow_addrs && fill_allow_filter(o))
		goto out;
	if (load(o, &l))
		goto out;
	if (o->json) {
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
			if (o->json) {
				saved = dup(STDOUT_FILENO);
				dup2(STDERR_FILENO, STDOUT_FILENO);
			}
			st = system(specs[i] + 5);
			if (saved >= 0) {
				dup2(saved, STDOUT_FILENO);
				close(saved);
			}
			st = st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
			if (o->json) {
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
		if (o->json) {
			printf("%s{\"packet\":", i ? "," : "");
			json_str(stdout, specs[i]);
			printf(",\"verdict\":\"%s\",\"retval\":%u,\"counters\":{",
			       verdict_name(run.retval), run.retval);
			for (c = 0; c < NR_COUNTERS; c++)
				printf("%s\"%s\":%llu", c ? "," : "",
				       counter_names[c],
				       (unsigned long long)(after[c] - before[c]));
			putchar('}');
			if (o->show_keys) {
				printf(",\"allow_key\":\"");
				hex(stdout, l.keys->allow, l.keys->allow_len);
				printf("\",\"flow_key\":\"");
				hex(stdout, l.keys->flow, l.keys->flow_len);
				putchar('"');
			}
			putchar('}');
			continue;
		}
		printf("%s: %s", specs[i], verdict_name(run.retval));
		for (c = 0; c < NR_COUNTERS; c++)
			if (after[c] != before[c])
				printf(" %s+%llu", counter_names[c],
				       (unsigned long long)(after[c] - before[c]));
		putchar('\n');
		if (o->show_keys && l.keys->allow_len) {
			printf("\tallow-key ");
			hex(stdout, l.keys->allow, l.keys->allow_len);
			putchar('\n');
		}
		if (o->show_keys && l.keys->flow_len) {
			printf("\tflow-key ");
			hex(stdout, l.keys->flow, l.keys->flow_len);
			putchar('\n');
		}
	}
	if (read_counters(l.counters_fd, after))
		goto out_unload;
	if (o->json) {
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

/* ---- attach, stats, detach --------------------------------------------- */

static int ifindex_of(const char *dev)
{
	int ifindex = if_nametoindex(dev);

	if (!ifindex)
		errmsg("device '%s': %s", dev,
		       errno == ENODEV ? "no such device" : strerror(errno));
	return ifindex;
}

static int cmd_attach(struct options *o, const char *dev)
{
	int ifindex = ifindex_of(dev), err, ret = EXIT_RUNTIME;
	uint32_t flags = o->xdp_mode;
	struct loaded l;

	if (!ifindex)
		return EXIT_RUNTIME;
	if (!o->force)
		flags |= XDP_FLAGS_UPDATE_IF_NOEXIST;
	if (!o->map && o->nr_allow_addrs && fill_allow_filter(o))
		return EXIT_RUNTIME;
	if (load(o, &l))
		return EXIT_RUNTIME;
	/*
	 * Through netlink, not a bpf_link: the program stays attached when
	 * we exit, holding its maps, until kbloom_xdp detach.
	 */
	err = bpf_xdp_attach(ifindex, l.prog_fd, flags, NULL);
	if (err) {
		if (err == -EBUSY || err == -EEXIST)
			errmsg("device '%s': an XDP program is attached already (kbloom_xdp detach %s, or --force)",
			       dev, dev);
		else
			errmsg("device '%s': attaching: %s%s", dev,
			       strerror(-err),
			       err == -EOPNOTSUPP && o->xdp_mode ==
			       XDP_FLAGS_DRV_MODE ?
			       " (no native XDP in its driver: --generic)" : "");
		goto out;
	}
	if (!o->json)
		printf("attached %s (%s) to %s\n",
		       o->map ? "kbloom_xdp_map" : "kbloom_xdp", l.what, dev);
	ret = 0;
out:
	unload(&l);
	return ret;
}

/* The program attached to @ifindex, its attach mode's flag and name. */
static int attached_prog(const char *dev, int ifindex, uint32_t *mode_flag,
			 const char **mode, struct bpf_prog_info *info)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	uint32_t len = sizeof(*info);
	int err, fd;

	err = bpf_xdp_query(ifindex, 0, &q);
	if (err) {
		errmsg("device '%s': querying XDP: %s", dev, strerror(-err));
		return -1;
	}
	switch (q.attach_mode) {
	case XDP_ATTACHED_DRV:
		*mode_flag = XDP_FLAGS_DRV_MODE;
		*mode = "native";
		break;
	case XDP_ATTACHED_SKB:
		*mode_flag = XDP_FLAGS_SKB_MODE;
		*mode = "generic";
		break;
	case XDP_ATTACHED_HW:
		*mode_flag = XDP_FLAGS_HW_MODE;
		*mode = "offload";
		break;
	case XDP_ATTACHED_NONE:
		errmsg("device '%s': no XDP program attached", dev);
		return -1;
	default:
		errmsg("device '%s': several XDP programs attached", dev);
		return -1;
	}
	fd = bpf_prog_get_fd_by_id(q.prog_id);
	if (fd < 0) {
		errmsg("device '%s': XDP program %u: %s", dev, q.prog_id,
		       strerror(errno));
		return -1;
	}
	memset(info, 0, sizeof(*info));
	if (bpf_obj_get_info_by_fd(fd, info, &len)) {
		errmsg("device '%s': XDP program %u: %s", dev, q.prog_id,
		       strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static bool is_ours(const struct bpf_prog_info *info)
{
	return !strcmp(info->name, "kbloom_xdp") ||
	       !strcmp(info->name, "kbloom_xdp_map");
}

static int cmd_stats(struct options *o, const char *dev)
{
	int ifindex = ifindex_of(dev), fd, mfd = -1, ret = EXIT_RUNTIME;
	uint64_t counters[NR_COUNTERS];
	struct bpf_prog_info info;
	struct bpf_map_info minfo;
	uint32_t mode_flag, i, len, nr_maps, *ids = NULL;
	const char *mode;
	size_t c;

	if (!ifindex)
		return EXIT_RUNTIME;
	fd = attached_prog(dev, ifindex, &mode_flag, &mode, &info);
	if (fd < 0)
		return EXIT_RUNTIME;
	if (!is_ours(&info)) {
		errmsg("device '%s': XDP program %u is '%s', not kbloom_xdp's",
		       dev, info.id, info.name);
		goto out;
	}
	nr_maps = info.nr_map_ids;
	ids = calloc(nr_maps ? nr_maps : 1, sizeof(*ids));
	if (!ids)
		goto out;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = nr_maps;
	info.map_ids = (uintptr_t)ids;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		errmsg("device '%s': its program's maps: %s", dev,
		       strerror(errno));
		goto out;
	}
	for (i = 0; i < nr_maps && i < info.nr_map_ids; i++) {
		mfd = bpf_map_get_fd_by_id(ids[i]);
		if (mfd < 0)
			continue;
		len = sizeof(minfo);
		memset(&minfo, 0, sizeof(minfo));
		if (!bpf_obj_get_info_by_fd(mfd, &minfo, &len) &&
		    !strcmp(minfo.name, KBLOOM_XDP_COUNTERS_MAP))
			break;
		close(mfd);
		mfd = -1;
	}
	if (mfd < 0) {
		errmsg("device '%s': program %u has no map %s", dev, info.id,
		       KBLOOM_XDP_COUNTERS_MAP);
		goto out;
	}
	if (read_counters(mfd, counters))
		goto out;
	if (o->json) {
		printf("{\"device\":");
		json_str(stdout, dev);
		printf(",\"program\":\"%s\",\"id\":%u,\"mode\":\"%s\",\"counters\":",
		       info.name, info.id, mode);
		print_counters_json(counters);
		printf("}\n");
	} else {
		printf("%s: %s (id %u, %s)\n", dev, info.name, info.id, mode);
		for (c = 0; c < NR_COUNTERS; c++)
			printf("%-11s %llu\n", counter_names[c],
			       (unsigned long long)counters[c]);
	}
	ret = 0;
out:
	if (mfd >= 0)
		close(mfd);
	free(ids);
	close(fd);
	return ret;
}

static int cmd_detach(struct options *o, const char *dev)
{
	int ifindex = ifindex_of(dev), fd, err, ret = EXIT_RUNTIME;
	LIBBPF_OPTS(bpf_xdp_attach_opts, a);
	struct bpf_prog_info info;
	uint32_t mode_flag;
	const char *mode;

	if (!ifindex)
		return EXIT_RUNTIME;
	fd = attached_prog(dev, ifindex, &mode_flag, &mode, &info);
	if (fd < 0)
		return EXIT_RUNTIME;
	if (!is_ours(&info) && !o->force) {
		errmsg("device '%s': XDP program %u is '%s', not kbloom_xdp's (--force detaches it anyway)",
		       dev, info.id, info.name);
		goto out;
	}
	/* Only if it is still the one we looked at. */
	a.old_prog_fd = fd;
	err = bpf_xdp_detach(ifindex, mode_flag | XDP_FLAGS_REPLACE, &a);
	if (err) {
		errmsg("device '%s': detaching: %s", dev, strerror(-err));
		goto out;
	}
	if (!o->json)
		printf("detached %s (id %u) from %s\n", info.name, info.id,
		       dev);
	ret = 0;
out:
	close(fd);
	return ret;
}

/* ---- bench ------------------------------------------------------------- */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
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
	double t0 = now_ns();
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
	r->wall_ns += now_ns() - t0;
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
	struct options none;

	switch (run) {
	case BENCH_NONE:
		/* The map program, parsing and building keys as the others. */
		none = *o;
		none.no_lookup = true;
		if (load_map(&none, l))
			return -1;
		snprintf(l->what, sizeof(l->what), "%s", "no lookup (parsing, keys)");
		return 0;
	case BENCH_MAP:
		return load_map(o, l);
	default:
		return (o->nr_allow_addrs && fill_allow_filter(o)) ||
		       (o->clear && o->flows && filter_clear(o->flows)) ||
		       load_kfunc(o, run == BENCH_BY_ID, l) ? -1 : 0;
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

	if (!o->map) {
		want[BENCH_BY_REF] = o->by != BY_ID;
		want[BENCH_BY_ID] = o->by != BY_REF;
	}
	want[BENCH_MAP] = !o->only_kfunc;
	/* The allow-lists hold the bench's source, else all would drop. */
	if (o->allow) {
		o->allow_addrs = allow_addrs;
		o->nr_allow_addrs = 1;
	}
	if (!o->json) {
		printf("bench: %llu packets, %llu flows (IPv%d UDP), %s; allow-list %s, flow count %s\n",
		       (unsigned long long)o->packets,
		       (unsigned long long)o->nr_flows, o->ipv6 ? 6 : 4,
		       o->distinct ? "one run per packet (distinct)" :
				     "each flow's packet repeated",
		       o->allow ? "on" : "off", o->flows ? "on" : "off");
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
		if (o->json) {
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
	if (o->json) {
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
	int i, j, n, ret = 0;

	s = kbloom_kfunc_refused__open();
	if (!s) {
		errmsg("opening kbloom_kfunc_refused: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	n = 0;
	bpf_object__for_each_program(prog, s->obj)
		n++;
	kbloom_kfunc_refused__destroy(s);
	for (i = 0; i < n; i++) {
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
		if (!prog)
			break;
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
	s->rodata->by_id = o->by == BY_ID;
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
	if (verbose && o->by == BY_ID && !o->kf_id)
		errmsg("bpf_kbloom_id(\"%s\"): %d", name, s->bss->id_ret);
	printf("%d\n", s->bss->result);
	ret = 0;
out:
	kbloom_kfunc_test__destroy(s);
	return ret;
}

/* KEY-HEX: pairs of hex digits, 1 to KBLOOM_KFUNC_KEY_BUF bytes. */
static int parse_hex(const char *s, unsigned char *key, size_t *len)
{
	size_t n = strlen(s), i;

	if (!n || n % 2 || n / 2 > KBLOOM_KFUNC_KEY_BUF)
		return -1;
	for (i = 0; i < n; i += 2) {
		if (!isxdigit((unsigned char)s[i]) ||
		    !isxdigit((unsigned char)s[i + 1]))
			return -1;
		key[i / 2] = (unsigned char)strtoul((char[]){ s[i], s[i + 1], 0 },
						    NULL, 16);
	}
	*len = n / 2;
	return 0;
}

/* ---- main -------------------------------------------------------------- */

static void usage(FILE *f)
{
	fputs("Usage: " ME " [attach] [PROGRAM OPTIONS] [--generic|--native] [--force] DEV\n"
	      "       " ME " stats [-j] DEV\n"
	      "       " ME " detach [--force] DEV\n"
	      "       " ME " test-run [PROGRAM OPTIONS] [--show-keys] [-j] [--pkt PACKET]...\n"
	      "       " ME " bench [PROGRAM OPTIONS] [--kfunc] [--packets N] [--flows-count M]\n"
	      "                  [--distinct] [--ipv6] [--clear] [-j]\n"
	      "       " ME " leak-check\n"
	      "       " ME " kfunc OP [--by-id|--id N] [--tc|--syscall] [--len N] FILTER [KEY-HEX]\n"
	      "       " ME " kfunc-syscall-refused\n"
	      "\n"
	      "Attach the kbloom XDP example to DEV, print its counters, detach it; run it\n"
	      "on crafted packets (test-run: verdicts and counter changes), or benchmark it\n"
	      "against the same program on BPF bloom filter maps (bench); check that the\n"
	      "verifier refuses a program that leaks a filter reference (leak-check).\n"
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
	      "Program options:\n"
	      "  --map              the program on BPF bloom filter maps (kbloom_xdp_map),\n"
	      "                     not on kbloom's filters; --allow and --flows then only\n"
	      "                     switch its allow-list and flow count on\n"
	      "  --by-ref           reach filters with bpf_kbloom_get()/put() per packet\n"
	      "                     (the default; bench: both unless one is given)\n"
	      "  --by-id            reach filters by id, resolved once at load\n"
	      "  --ids-from SRC     --by-id: prog (bpf_kbloom_id() in a syscall program, the\n"
	      "                     default) or sysfs (/sys/kernel/bloom/filters/NAME/id)\n"
	      "  --allow NAME       drop packets whose source address is not in filter NAME\n"
	      "                     (key: bloomctl add NAME --key saddr --flow ADDR)\n"
	      "  --flows NAME       count new 5-tuples with test-and-add on filter NAME\n"
	      "                     (key: --key saddr,daddr,proto,sport,dport)\n"
	      "  --allow-addr ADDR  add ADDR to the allow-list first (repeatable): into the\n"
	      "                     --map program's map, or filter --allow through /dev/bloom\n"
	      "  --fail-open        pass packets when the allow-list filter cannot be read\n"
	      "                     (destroyed, error); the default drops them\n"
	      "  --capacity N       --map: keys of the flow map (default 1000000)\n"
	      "  --fpr P            --map: its false-positive rate (default 0.01)\n"
	      "\n"
	      "Other options:\n"
	      "  --generic, --native   attach in generic (skb) or native (driver) mode;\n"
	      "                     default: native if the driver has it, else generic\n"
	      "  --force            attach over another program; detach one not ours\n"
	      "  -j, --json         JSON output\n"
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
	      "  --kfunc            bench: the kfunc program only (--map: the map's only)\n"
	      "  --packets N        bench: packets per program (default 1000000)\n"
	      "  --flows-count M    bench: distinct flows among them, each program its\n"
	      "                     own (default 1000, at most 2097152); the programs\n"
	      "                     take turns, a flow (or with --distinct a packet) each\n"
	      "  --distinct         bench: one BPF_PROG_TEST_RUN per packet, the flows in\n"
	      "                     turn; default: each flow's packet repeated N/M times\n"
	      "  --ipv6             bench: IPv6 packets\n"
	      "  --clear            bench: clear filter --flows first; the two kfunc\n"
	      "                     programs share it, and fill it with 2 x M flows\n"
	      "  --by-id            kfunc: by the filter's id, from bpf_kbloom_id() in the\n"
	      "                     same run (default: by reference, bpf_kbloom_get()/put())\n"
	      "  --id N             kfunc: by id N, as given (a destroyed filter's, say)\n"
	      "  --tc               kfunc: from a tc (sched_cls) program; default XDP\n"
	      "  --syscall          kfunc: from a syscall program: query, get, id only\n"
	      "  --len N            kfunc: the key length handed to the kfunc, 0 to 4104\n"
	      "                     (default: KEY-HEX's bytes; the bytes past them are 0)\n"
	      "  -v, --verbose      libbpf's debug messages\n"
	      "\n"
	      "Exit status: 0 done, 1 error, 2 usage error.\n", f);
}

enum {
	OPT_MAP = 256, OPT_BY_REF, OPT_BY_ID, OPT_IDS_FROM, OPT_ALLOW,
	OPT_FLOWS, OPT_ALLOW_ADDR, OPT_FAIL_OPEN, OPT_CAPACITY, OPT_FPR,
	OPT_GENERIC, OPT_NATIVE, OPT_FORCE, OPT_SHOW_KEYS, OPT_PKT,
	OPT_KFUNC, OPT_PACKETS, OPT_FLOWS_COUNT, OPT_DISTINCT, OPT_IPV6,
	OPT_CLEAR, OPT_TC, OPT_SYSCALL, OPT_LEN, OPT_ID,
};

static const struct option long_opts[] = {
	{ "map", no_argument, NULL, OPT_MAP },
	{ "by-ref", no_argument, NULL, OPT_BY_REF },
	{ "by-id", no_argument, NULL, OPT_BY_ID },
	{ "ids-from", required_argument, NULL, OPT_IDS_FROM },
	{ "allow", required_argument, NULL, OPT_ALLOW },
	{ "flows", required_argument, NULL, OPT_FLOWS },
	{ "allow-addr", required_argument, NULL, OPT_ALLOW_ADDR },
	{ "fail-open", no_argument, NULL, OPT_FAIL_OPEN },
	{ "capacity", required_argument, NULL, OPT_CAPACITY },
	{ "fpr", required_argument, NULL, OPT_FPR },
	{ "generic", no_argument, NULL, OPT_GENERIC },
	{ "native", no_argument, NULL, OPT_NATIVE },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "show-keys", no_argument, NULL, OPT_SHOW_KEYS },
	{ "pkt", required_argument, NULL, OPT_PKT },
	{ "kfunc", no_argument, NULL, OPT_KFUNC },
	{ "packets", required_argument, NULL, OPT_PACKETS },
	{ "flows-count", required_argument, NULL, OPT_FLOWS_COUNT },
	{ "distinct", no_argument, NULL, OPT_DISTINCT },
	{ "ipv6", no_argument, NULL, OPT_IPV6 },
	{ "clear", no_argument, NULL, OPT_CLEAR },
	{ "tc", no_argument, NULL, OPT_TC },
	{ "syscall", no_argument, NULL, OPT_SYSCALL },
	{ "len", required_argument, NULL, OPT_LEN },
	{ "id", required_argument, NULL, OPT_ID },
	{ "json", no_argument, NULL, 'j' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

enum cmd { CMD_ATTACH, CMD_STATS, CMD_DETACH, CMD_TEST_RUN, CMD_BENCH,
	   CMD_LEAK_CHECK, CMD_KFUNC, CMD_SYSCALL_REFUSED };

static const char *const cmd_names[] = {
	"attach", "stats", "detach", "test-run", "bench", "leak-check",
	"kfunc", "kfunc-syscall-refused",
};

/* Which commands take which options: a bit per command. */
#define C(x)	(1u << CMD_##x)
#define PROGRAM	(C(ATTACH) | C(TEST_RUN) | C(BENCH))

static unsigned int opt_cmds(int opt)
{
	switch (opt) {
	case OPT_GENERIC:
	case OPT_NATIVE:
		return C(ATTACH);
	case OPT_FORCE:
		return C(ATTACH) | C(DETACH);
	case OPT_BY_REF:
	case OPT_BY_ID:
		return PROGRAM | C(KFUNC);
	case OPT_TC:
	case OPT_SYSCALL:
	case OPT_LEN:
	case OPT_ID:
		return C(KFUNC);
	case OPT_SHOW_KEYS:
	case OPT_PKT:
		return C(TEST_RUN);
	case OPT_KFUNC:
	case OPT_PACKETS:
	case OPT_FLOWS_COUNT:
	case OPT_DISTINCT:
	case OPT_IPV6:
	case OPT_CLEAR:
		return C(BENCH);
	case 'j':
		return C(STATS) | C(TEST_RUN) | C(BENCH) | C(ATTACH) |
		       C(DETACH);
	case 'v':
		return ~0u;
	default:
		return PROGRAM;
	}
}

static int usage_err(const char *fmt, const char *arg)
{
	fprintf(stderr, ME ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '" ME " --help'.\n");
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	struct options o = {
		.capacity = 1000000,
		.fpr = 0.01,
		.packets = 1000000,
		.nr_flows = 1000,
		.kf_len = -1,
	};
	unsigned char *kf_key = NULL;
	size_t kf_key_len = 0;
	const char *kf_name = NULL;
	enum cmd cmd = CMD_ATTACH;
	unsigned char addr[16];
	const char *dev = NULL;
	int opt, i, first = 1;
	uint64_t v;
	char *end;

	if (argc > 1 && (!strcmp(argv[1], "help") ||
			 !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < (int)ARRAY_LEN(cmd_names); i++) {
		if (argc > 1 && !strcmp(argv[1], cmd_names[i])) {
			cmd = i;
			first = 2;
		}
	}
	o.allow_addrs = calloc(argc, sizeof(*o.allow_addrs));
	o.pkts = calloc(argc, sizeof(*o.pkts));
	if (!o.allow_addrs || !o.pkts) {
		errmsg("%s", strerror(errno));
		return EXIT_RUNTIME;
	}
	/* getopt sees the arguments after the command. */
	argv[first - 1] = argv[0];
	argc -= first - 1;
	argv += first - 1;
	while ((opt = getopt_long(argc, argv, "jvh", long_opts, NULL)) != -1) {
		if (opt == '?')
			return usage_err("%s", "bad option");
		if (opt == 'h') {
			usage(stdout);
			return 0;
		}
		if (!(opt_cmds(opt) & (1u << cmd)))
			return usage_err("%s does not take this option",
					 cmd_names[cmd]);
		switch (opt) {
		case OPT_MAP:
			o.map = true;
			break;
		case OPT_BY_REF:
			o.by = BY_REF;
			break;
		case OPT_BY_ID:
			o.by = BY_ID;
			break;
		case OPT_IDS_FROM:
			if (!strcmp(optarg, "sysfs"))
				o.ids_sysfs = true;
			else if (strcmp(optarg, "prog"))
				return usage_err("--ids-from: '%s' is not prog or sysfs",
						 optarg);
			break;
		case OPT_ALLOW:
		case OPT_FLOWS:
			if (!name_ok(optarg))
				return usage_err("'%s' is not a filter name (1 to 31 of A-Z a-z 0-9 _ . -, not starting with .)",
						 optarg);
			*(opt == OPT_ALLOW ? &o.allow : &o.flows) = optarg;
			break;
		case OPT_ALLOW_ADDR:
			if (!parse_addr(optarg, addr))
				return usage_err("--allow-addr: '%s' is not an IPv4 or IPv6 address",
						 optarg);
			o.allow_addrs[o.nr_allow_addrs++] = optarg;
			break;
		case OPT_FAIL_OPEN:
			o.fail_open = true;
			break;
		case OPT_CAPACITY:
			if (parse_u64(optarg, 1, UINT32_MAX, &o.capacity))
				return usage_err("--capacity: '%s' is not 1 to 4294967295",
						 optarg);
			break;
		case OPT_FPR:
			o.fpr = strtod(optarg, &end);
			if (*end || end == optarg || !(o.fpr > 0 && o.fpr < 1))
				return usage_err("--fpr: '%s' is not a rate between 0 and 1",
						 optarg);
			break;
		case OPT_GENERIC:
			o.xdp_mode = XDP_FLAGS_SKB_MODE;
			break;
		case OPT_NATIVE:
			o.xdp_mode = XDP_FLAGS_DRV_MODE;
			break;
		case OPT_FORCE:
			o.force = true;
			break;
		case OPT_SHOW_KEYS:
			o.show_keys = true;
			break;
		case OPT_PKT:
			o.pkts[o.nr_pkts++] = optarg;
			break;
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
			o.by = BY_ID;
			break;
		case 'j':
			o.json = true;
			break;
		case 'v':
			verbose = true;
			open_opts.kernel_log_level = 4;	/* BPF_LOG_STATS */
			break;
		}
	}
	libbpf_set_print(libbpf_print);

	if (o.map && o.only_kfunc)
		return usage_err("%s", "--map and --kfunc: choose one");
	if (o.map && (o.by != BY_DEFAULT || o.ids_sysfs))
		return usage_err("%s", "--by-id, --by-ref and --ids-from are for the kfunc program, not --map");
	if (o.ids_sysfs && o.by == BY_REF)
		return usage_err("%s", "--ids-from is for --by-id");
	if (o.nr_allow_addrs && !o.allow)
		return usage_err("%s", "--allow-addr needs --allow NAME (the allow-list to fill)");
	if (cmd == CMD_BENCH && o.nr_allow_addrs)
		return usage_err("%s", "bench fills the allow-lists with its own source address: no --allow-addr");
	if (cmd == CMD_BENCH && o.nr_flows > o.packets)
		return usage_err("%s", "--flows-count is more than --packets");
	/* BPF_PROG_TEST_RUN repeats a packet at most INT_MAX times here. */
	if (cmd == CMD_BENCH && o.packets / o.nr_flows > INT_MAX)
		return usage_err("%s", "more than 2147483647 packets per flow");
	if (cmd == CMD_BENCH && o.clear && !o.flows)
		return usage_err("%s", "--clear needs --flows NAME");
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
			if (o.by == BY_ID)
				return usage_err("kfunc %s: by name, not by id", kf_ops[o.kf_op]);
		} else {
			if (argc - optind != 3)
				return usage_err("kfunc %s: KEY-HEX expected", kf_ops[o.kf_op]);
			kf_key = calloc(1, KBLOOM_KFUNC_KEY_BUF);
			if (!kf_key) {
				errmsg("%s", strerror(errno));
				return EXIT_RUNTIME;
			}
			if (parse_hex(argv[optind + 2], kf_key, &kf_key_len))
				return usage_err("kfunc: '%s' is not a key in hex (1 to 4104 bytes)",
						 argv[optind + 2]);
		}
		if (o.kf_prog == KF_SYSCALL && o.kf_op != KBLOOM_KFUNC_QUERY &&
		    o.kf_op != KBLOOM_KFUNC_GET && o.kf_op != KBLOOM_KFUNC_ID)
			return usage_err("kfunc %s: syscall programs may only query, get and id (kfunc-syscall-refused checks that the others are refused)",
					 kf_ops[o.kf_op]);
	} else if (cmd == CMD_ATTACH || cmd == CMD_STATS || cmd == CMD_DETACH) {
		if (optind != argc - 1)
			return usage_err("%s: one device expected", cmd_names[cmd]);
		dev = argv[optind];
	} else if (optind != argc) {
		return usage_err("unexpected argument '%s'", argv[optind]);
	}
	/* --ids-from says by id; else by reference, but bench runs both. */
	if ((cmd == CMD_ATTACH || cmd == CMD_TEST_RUN) && !o.map &&
	    o.by == BY_DEFAULT)
		o.by = o.ids_sysfs ? BY_ID : BY_REF;

	switch (cmd) {
	case CMD_ATTACH:
		return cmd_attach(&o, dev);
	case CMD_STATS:
		return cmd_stats(&o, dev);
	case CMD_DETACH:
		return cmd_detach(&o, dev);
	case CMD_TEST_RUN:
		return cmd_test_run(&o);
	case CMD_BENCH:
		return cmd_bench(&o);
	case CMD_LEAK_CHECK:
		return cmd_leak_check();
	case CMD_KFUNC:
		return cmd_kfunc(&o, kf_name, kf_key, kf_key_len);
	case CMD_SYSCALL_REFUSED:
		return cmd_syscall_refused();
	}
	return EXIT_USAGE;
}
