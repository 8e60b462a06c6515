// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_xdp_load: what the example's loader, its tests and its benchmark
 * share (kbloom_xdp_load.h): program options, loading, filters, counters.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kbloom_xdp_load.h"

const char *const counter_names[NR_COUNTERS] = { KBLOOM_XDP_COUNTERS };

const char *me = "kbloom_xdp";
bool verbose;
struct bpf_object_open_opts open_opts = { .sz = sizeof(open_opts) };

void errmsg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", me);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int usage_err(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", me);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s --help'.\n", me);
	return EXIT_USAGE;
}

/* ---- arguments --------------------------------------------------------- */

bool name_ok(const char *name)
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

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || *out < min || *out > max ? -1 : 0;
}

/* An address: 4 or 16 bytes into @addr; its family (4 or 6), or 0. */
int parse_addr(const char *s, unsigned char addr[16])
{
	if (inet_pton(AF_INET, s, addr) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, addr) == 1)
		return 6;
	return 0;
}

/* ---- the program options ----------------------------------------------- */

int prog_opts_init(struct prog_opts *o, int argc)
{
	memset(o, 0, sizeof(*o));
	o->capacity = 1000000;
	o->fpr = 0.01;
	o->allow_addrs = calloc(argc, sizeof(*o->allow_addrs));
	if (!o->allow_addrs) {
		errmsg("%s", strerror(errno));
		return -1;
	}
	return 0;
}

int prog_opt(struct prog_opts *o, int opt, const char *arg)
{
	unsigned char addr[16];
	char *end;

	switch (opt) {
	case '?':
		return usage_err("%s", "bad option");
	case 'j':
		o->json = true;
		break;
	case 'v':
		verbose = true;
		open_opts.kernel_log_level = 4;	/* BPF_LOG_STATS */
		break;
	case OPT_MAP:
		o->map = true;
		break;
	case OPT_BY_REF:
		o->by = BY_REF;
		break;
	case OPT_BY_ID:
		o->by = BY_ID;
		break;
	case OPT_IDS_FROM:
		if (!strcmp(arg, "sysfs"))
			o->ids_sysfs = true;
		else if (strcmp(arg, "prog"))
			return usage_err("--ids-from: '%s' is not prog or sysfs",
					 arg);
		break;
	case OPT_ALLOW:
	case OPT_FLOWS:
		if (!name_ok(arg))
			return usage_err("'%s' is not a filter name (1 to 31 of A-Z a-z 0-9 _ . -, not starting with .)",
					 arg);
		*(opt == OPT_ALLOW ? &o->allow : &o->flows) = arg;
		break;
	case OPT_ALLOW_ADDR:
		if (!parse_addr(arg, addr))
			return usage_err("--allow-addr: '%s' is not an IPv4 or IPv6 address",
					 arg);
		o->allow_addrs[o->nr_allow_addrs++] = arg;
		break;
	case OPT_FAIL_OPEN:
		o->fail_open = true;
		break;
	case OPT_CAPACITY:
		if (parse_u64(arg, 1, UINT32_MAX, &o->capacity))
			return usage_err("--capacity: '%s' is not 1 to 4294967295",
					 arg);
		break;
	case OPT_FPR:
		o->fpr = strtod(arg, &end);
		if (*end || end == arg || !(o->fpr > 0 && o->fpr < 1))
			return usage_err("--fpr: '%s' is not a rate between 0 and 1",
					 arg);
		break;
	}
	return 0;
}

int prog_opts_check(const struct prog_opts *o)
{
	if (o->map && (o->by != BY_DEFAULT || o->ids_sysfs))
		return usage_err("%s", "--by-id, --by-ref and --ids-from are for the kfunc program, not --map");
	if (o->ids_sysfs && o->by == BY_REF)
		return usage_err("%s", "--ids-from is for --by-id");
	if (o->nr_allow_addrs && !o->allow)
		return usage_err("%s", "--allow-addr needs --allow NAME (the allow-list to fill)");
	return 0;
}

int prog_getopt(struct prog_opts *o, int argc, char **argv,
		const struct option *opts, bool (*takes)(int opt),
		const char *cmd)
{
	int opt;

	while ((opt = getopt_long(argc, argv, "jvh", opts, NULL)) != -1) {
		if (opt == 'h')
			return opt;
		if (takes && !takes(opt)) {
			usage_err("%s does not take this option", cmd);
			return 0;
		}
		if (opt >= OPT_PROG_END)
			return opt;
		if (prog_opt(o, opt, optarg))
			return 0;
	}
	return prog_opts_check(o) ? 0 : -1;
}

/* ---- keys ------------------------------------------------------------- */

/*
 * The allow-list key of a source address, as kbloom_flow_key() builds it
 * from a packet and `bloomctl --key saddr --flow ADDR` from text: family,
 * KBLOOM_FLOW_SADDR, the address; zero-padded to KBLOOM_XDP_ALLOW_SIZE
 * (the map's value size). Returns the unpadded length, or -1.
 */
int allow_key(const char *addr, unsigned char key[KBLOOM_XDP_ALLOW_SIZE])
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
int filter_ioctl(const char *name, unsigned long cmd, void *arg,
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
void kfuncs_hint(void)
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

void set_name(union kbloom_bpf_name *dst, const char *name)
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

int load_kfunc(const struct prog_opts *o, bool by_id, struct loaded *l)
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

int load_map(const struct prog_opts *o, struct loaded *l)
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
int fill_allow_filter(const struct prog_opts *o)
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

int load(const struct prog_opts *o, struct loaded *l)
{
	if (o->map)
		return load_map(o, l);
	return load_kfunc(o, o->by == BY_ID, l);
}

void unload(struct loaded *l)
{
	kbloom_xdp__destroy(l->kf);
	kbloom_xdp_map__destroy(l->mp);
	l->kf = NULL;
	l->mp = NULL;
}

/* ---- counters --------------------------------------------------------- */

/* The counters of map @fd, summed over the CPUs, into @sum. */
int read_counters(int fd, uint64_t sum[NR_COUNTERS])
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

void json_str(FILE *f, const char *s)
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

void print_counters_json(const uint64_t c[NR_COUNTERS])
{
	size_t i;

	putchar('{');
	for (i = 0; i < NR_COUNTERS; i++)
		printf("%s\"%s\":%llu", i ? "," : "", counter_names[i],
		       (unsigned long long)c[i]);
	putchar('}');
}

