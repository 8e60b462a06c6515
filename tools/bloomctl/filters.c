// SPDX-License-Identifier: GPL-2.0
/*
 * Filters as a whole: create, destroy, clear, list and show.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "bloomctl.h"
#include "image.h"
#include "sizing.h"

struct create_opts {
	struct sizing sz;
	const char *like;
	bool counting;
	uint32_t scheme;	/* --hash; 0: the module's default */
	bool have_window, have_generations, rotate_at_fill;
	uint32_t window_ms;	/* --window */
	uint32_t generations;	/* --generations; 4 with --window */
	uint32_t bpf;		/* --bpf: KBLOOM_CREATE_BPF_* */
	bool exist_ok;		/* --exist-ok */
	bool track;		/* --track-changes */
};

/* --bpf: what BPF programs may do with the filter. */
static int parse_bpf(const char *s, uint32_t *flags)
{
	if (!strcmp(s, "none"))
		*flags = 0;
	else if (!strcmp(s, "read"))
		*flags = KBLOOM_CREATE_BPF_READ;
	else if (!strcmp(s, "write"))
		*flags = KBLOOM_CREATE_BPF_READ | KBLOOM_CREATE_BPF_WRITE;
	else {
		pr_err("--bpf '%s': must be none, read or write", s);
		return -1;
	}
	return 0;
}

/* --hash: a scheme by name. */
static int parse_hash(const char *s, uint32_t *scheme)
{
	if (!strcmp(s, "jhash")) {
		*scheme = KBLOOM_HASH_JHASH;
		return 0;
	}
	if (!strcmp(s, "siphash")) {
		*scheme = KBLOOM_HASH_SIPHASH;
		return 0;
	}
	pr_err("--hash '%s': must be siphash or jhash", s);
	return -1;
}

static int create_opt(void *ctx, int c, const char *arg)
{
	struct create_opts *o = ctx;

	switch (c) {
	case OPT_COUNTING:
		o->counting = true;
		return 0;
	case OPT_LIKE:
		o->like = arg;
		return 0;
	case OPT_HASH:
		return parse_hash(arg, &o->scheme);
	case OPT_WINDOW:
		o->have_window = true;
		return parse_duration("--window", arg, &o->window_ms);
	case OPT_GENERATIONS:
		o->have_generations = true;
		return parse_u32("--generations", arg, 2,
				 KBLOOM_MAX_GENERATIONS, &o->generations);
	case OPT_ROTATE_AT_FILL:
		o->rotate_at_fill = true;
		return 0;
	case OPT_BPF:
		return parse_bpf(arg, &o->bpf);
	case OPT_EXIST_OK:
		o->exist_ok = true;
		return 0;
	case OPT_TRACK_CHANGES:
		o->track = true;
		return 0;
	default:
		return sizing_opt(&o->sz, c, arg) > 0 ? 0 : -1;
	}
}

/* The uapi flags that decide sizing: the kind and the layout. */
static uint32_t create_flags(const struct create_opts *o)
{
	return (o->counting ? KBLOOM_CREATE_COUNTING : 0) |
	       (o->sz.blocked ? KBLOOM_CREATE_BLOCKED : 0);
}

/*
 * With --like everything comes from the old filter, the seed and scheme
 * included: a size or scheme given here could only contradict it.
 */
static int create_check(const struct create_opts *o)
{
	const struct sizing *sz = &o->sz;

	if (o->have_generations && !o->have_window) {
		pr_err("--generations needs --window");
		return -1;
	}
	if (o->rotate_at_fill && !o->have_window) {
		pr_err("--rotate-at-fill needs --window");
		return -1;
	}
	if (o->like && o->have_window) {
		pr_err("--like takes the window from '%s': --window, --generations and --rotate-at-fill cannot be given with it",
		       o->like);
		return -1;
	}
	if (o->rotate_at_fill && !sz->have_capacity) {
		pr_err("--rotate-at-fill needs --capacity (the fill it rotates at)");
		return -1;
	}
	if (!o->like)
		return check_sizing(sz, false, create_flags(o));
	if (sz->have_capacity || sz->have_fpr || sz->have_bits ||
	    sz->have_hashes || sz->blocked) {
		pr_err("--like takes every parameter from '%s': --capacity, --fpr, --bits, --hashes and --layout cannot be given with it",
		       o->like);
		return -1;
	}
	if (o->scheme) {
		pr_err("--like takes the hash scheme from '%s' with its seed: --hash cannot be given with it",
		       o->like);
		return -1;
	}
	return check_name(o->like);
}

static void create_request(const struct create_opts *o, const char *name,
			   struct kbloom_create *cr)
{
	memset(cr, 0, sizeof(*cr));
	set_name(cr->name, name);
	cr->flags = create_flags(o) | o->bpf |
		    (o->track ? KBLOOM_CREATE_TRACK_CHANGES : 0);
	if (o->like) {
		cr->flags |= KBLOOM_CREATE_LIKE;
		set_name(cr->like, o->like);
		return;
	}
	if (o->have_window) {
		cr->window_ms = o->window_ms;
		cr->generations = o->generations;
		if (o->rotate_at_fill)
			cr->flags |= KBLOOM_CREATE_ROTATE_AT_FILL;
	}
	cr->capacity = o->sz.capacity;
	if (o->sz.have_bits) {
		cr->bits = o->sz.bits;
		cr->hashes = o->sz.hashes;
	} else {
		cr->fpr_ppb = o->sz.fpr_ppb;
	}
}

/*
 * The scheme to ask CREATE for. A module without KBLOOM_FEATURE_SIPHASH
 * knows only jhash and wants 0 in the field (it was reserved0); a module
 * that cannot say (no VERSION: not kbloom) is left to refuse CREATE itself.
 */
static int create_scheme(int fd, const char *name, uint32_t *scheme)
{
	struct kbloom_version v;

	if (!*scheme || device_version(fd, &v) ||
	    v.features & KBLOOM_FEATURE_SIPHASH)
		return 0;
	if (*scheme == KBLOOM_HASH_JHASH) {
		*scheme = 0;
		return 0;
	}
	pr_err("filter '%s': --hash %s: the module does not support it (its only scheme is %s)",
	       name, hash_scheme_name(*scheme),
	       hash_scheme_name(v.hash_scheme));
	return -1;
}

/*
 * A windowed filter needs a module with windows, and G within its limit;
 * a blocked one a module with that layout; BPF access a module that has
 * it.
 */
static int create_features(int fd, const struct create_opts *o,
			 const char *name)
{
	struct kbloom_version v;

	if ((!o->have_window && !o->sz.blocked && !o->bpf && !o->track) ||
	    device_version(fd, &v))
		return 0;
	if (o->track && !(v.features & KBLOOM_FEATURE_CHANGES)) {
		pr_err("filter '%s': --track-changes: the module does not support it",
		       name);
		return -1;
	}
	if (o->track && o->counting) {
		pr_err("filter '%s': --track-changes: counting filters do not track changes (a counter cannot be shared by OR)",
		       name);
		return -1;
	}
	if (o->bpf && !(v.features & KBLOOM_FEATURE_BPF_ACCESS)) {
		pr_err("filter '%s': --bpf %s: the module does not support it (its filters are open to every BPF program)",
		       name, bpf_access_name(o->bpf));
		return -1;
	}
	if (o->sz.blocked && !(v.features & KBLOOM_FEATURE_BLOCKED)) {
		pr_err("filter '%s': --layout blocked: the module does not support it",
		       name);
		return -1;
	}
	if (!o->have_window)
		return 0;
	if (!(v.features & KBLOOM_FEATURE_WINDOW)) {
		pr_err("filter '%s': --window: the module does not support windowed filters",
		       name);
		return -1;
	}
	if (v.max_generations && o->generations > v.max_generations) {
		pr_err("--generations '%" PRIu32 "': must be between 2 and %" PRIu32 " (the module's max_generations)",
		       o->generations, v.max_generations);
		return -1;
	}
	return 0;
}

/* One difference between what exists and what was asked, for a message. */
static void differ(char *buf, size_t len, const char *what, uint64_t have,
		   uint64_t want)
{
	size_t n = strlen(buf);

	if (have != want)
		snprintf(buf + n, len - n, "%s%s %" PRIu64 " (asked %" PRIu64 ")",
			 n ? ", " : "", what, have, want);
}

/*
 * --exist-ok: is the existing filter @name what CREATE was asked for?
 * What the request leaves to the module (the hash scheme without --hash,
 * the size when sized by capacity and rate) is not compared; with --like,
 * the shape of the model is. Returns 1 if alike, 0 if not (reported),
 * -1 on an error (reported).
 */
static int create_alike(int fd, const struct create_opts *o,
			const char *name, const struct kbloom_create *cr,
			struct kbloom_info *info)
{
	const uint32_t bpf = KBLOOM_CREATE_BPF_READ | KBLOOM_CREATE_BPF_WRITE;
	const uint32_t kind = KBLOOM_CREATE_COUNTING | KBLOOM_CREATE_BLOCKED |
			      KBLOOM_CREATE_ROTATE_AT_FILL | bpf;
	struct kbloom_info model;
	char diff[512] = "";
	int err;

	err = get_info(fd, name, info);
	if (!err && o->like)
		err = get_info(fd, o->like, &model);
	if (err) {
		pr_err("filter '%s': %s", err && o->like ? o->like : name,
		       kerr(err));
		return -1;
	}
	if (o->like) {
		differ(diff, sizeof(diff), "bits", info->bits, model.bits);
		differ(diff, sizeof(diff), "hashes", info->hashes, model.hashes);
		differ(diff, sizeof(diff), "hash scheme", info->hash_scheme,
		       model.hash_scheme);
		differ(diff, sizeof(diff), "window_ms", info->window_ms,
		       model.window_ms);
		differ(diff, sizeof(diff), "generations", info->generations,
		       model.generations);
	} else {
		if (cr->bits) {
			differ(diff, sizeof(diff), "bits", info->bits, cr->bits);
			differ(diff, sizeof(diff), "hashes", info->hashes,
			       cr->hashes);
		} else {
			differ(diff, sizeof(diff), "fpr_ppb", info->fpr_ppb,
			       cr->fpr_ppb);
		}
		if (cr->capacity)
			differ(diff, sizeof(diff), "capacity", info->capacity,
			       cr->capacity);
		if (o->scheme)
			differ(diff, sizeof(diff), "hash scheme",
			       info->hash_scheme, o->scheme);
		differ(diff, sizeof(diff), "window_ms", info->window_ms,
		       cr->window_ms);
		differ(diff, sizeof(diff), "generations", info->generations,
		       cr->generations);
	}
	/* --like copies all but the BPF access. */
	differ(diff, sizeof(diff), "flags", info->flags & kind,
	       (o->like ? (model.flags & ~bpf) | o->bpf : cr->flags) & kind);
	if (!*diff)
		return 1;
	pr_err("filter '%s' exists with another shape: %s", name, diff);
	return 0;
}

static int create_ioctl(int fd, const struct create_opts *o,
			const char *name, struct kbloom_create *cr)
{
	uint32_t scheme = o->scheme;
	int err;

	if (create_features(fd, o, name) || create_scheme(fd, name, &scheme))
		return -1;
	cr->hash_scheme = scheme;
	if (!ioctl(fd, KBLOOM_IOC_CREATE, cr))
		return 0;
	err = errno;
	if (err == EEXIST && o->exist_ok)
		return 1;
	/* With --like, the only filter that can be missing is @like. */
	if (o->like && err == ENOENT)
		pr_err("filter '%s' (--like): %s", o->like, kerr(err));
	else if (o->like && o->counting && err == EINVAL)
		pr_err("filter '%s': --counting needs '%s' to be a counting filter too",
		       name, o->like);
	else
		pr_err("filter '%s': %s", name, kerr(err));
	return -1;
}

/* Should the filter be gone again already, what CREATE returned will do. */
static void info_from_create(const struct kbloom_create *cr,
			     struct kbloom_info *info)
{
	memset(info, 0, sizeof(*info));
	memcpy(info->name, cr->name, KBLOOM_NAME_MAX);
	info->bits = cr->bits;
	info->hashes = cr->hashes;
	info->capacity = cr->capacity;
	info->fpr_ppb = cr->fpr_ppb;
	info->flags = cr->flags & (KBLOOM_CREATE_COUNTING |
				   KBLOOM_CREATE_BLOCKED |
				   KBLOOM_CREATE_BPF_READ |
				   KBLOOM_CREATE_BPF_WRITE |
				   KBLOOM_CREATE_TRACK_CHANGES);
	info->hash_scheme = cr->hash_scheme;
	info->window_ms = cr->window_ms;
	info->generations = cr->generations;
	info->memory_bytes = sizing_bytes(cr->bits, info->flags) *
			     (cr->generations ? cr->generations : 1);
}

/* The module and calc share the sizing code; say so if they disagree. */
static void create_compare_calc(const struct create_opts *o,
				const struct kbloom_create *cr)
{
	uint64_t bits;
	uint32_t hashes;

	if (o->like || o->sz.have_bits ||
	    size_filter(o->sz.capacity,
			sizing_window_fpr(o->sz.fpr_ppb, cr->generations),
			create_flags(o), &bits, &hashes))
		return;
	if (bits >= KBLOOM_MIN_BITS && bits <= KBLOOM_MAX_BITS &&
	    (bits != cr->bits || hashes != cr->hashes))
		pr_warn("module sized '%s' as %llu bits, %u hashes; 'bloomctl calc' gives %" PRIu64 " bits, %" PRIu32 " hashes",
			cr->name, (unsigned long long)cr->bits, cr->hashes,
			bits, hashes);
}

int cmd_create(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		SIZING_LONGOPTS,
		{ "counting",	no_argument,	   NULL, OPT_COUNTING },
		{ "like",	required_argument, NULL, OPT_LIKE },
		{ "hash",	required_argument, NULL, OPT_HASH },
		{ "window",	required_argument, NULL, OPT_WINDOW },
		{ "generations", required_argument, NULL, OPT_GENERATIONS },
		{ "rotate-at-fill", no_argument,   NULL, OPT_ROTATE_AT_FILL },
		{ "bpf",	required_argument, NULL, OPT_BPF },
		{ "exist-ok",	no_argument,	   NULL, OPT_EXIST_OK },
		{ "track-changes", no_argument,	   NULL, OPT_TRACK_CHANGES },
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	struct create_opts o = { .like = NULL, .generations = 4 };
	struct kbloom_create cr;
	struct kbloom_info info;
	const char *name;
	int ret, fd;

	ret = parse_options(cmd, argc, argv, longopts, create_opt, &o);
	if (ret >= 0)
		return ret;
	name = get_name_arg(cmd, argc, argv);
	if (!name || create_check(&o))
		return EXIT_ERROR;
	create_request(&o, name, &cr);
	fd = open_device(O_RDWR);
	if (fd < 0)
		return EXIT_ERROR;
	ret = create_ioctl(fd, &o, name, &cr);
	if (ret == 1) {
		/* --exist-ok, and it exists. */
		ret = create_alike(fd, &o, name, &cr, &info);
		close(fd);
		if (ret <= 0)
			return EXIT_ERROR;
		if (jw) {
			jw_start_object(jw);
			json_info(&info);
			jw_kv_bool(jw, "existed", true);
			jw_end_object(jw);
		} else {
			printf("exists: '%s', as asked\n", name);
		}
		return 0;
	}
	if (ret) {
		close(fd);
		return EXIT_ERROR;
	}
	/* The module's view: memory_bytes in particular. */
	if (get_info(fd, name, &info))
		info_from_create(&cr, &info);
	close(fd);
	create_compare_calc(&o, &cr);
	if (jw) {
		jw_start_object(jw);
		json_info(&info);
		jw_kv_bool(jw, "existed", false);
		jw_end_object(jw);
	} else if (info.generations) {
		printf("created '%s': %u generations of %llu %s, %u hashes each, window %u ms, %llu bytes\n",
		       name, info.generations, (unsigned long long)info.bits,
		       info.flags & KBLOOM_CREATE_COUNTING ? "counters" : "bits",
		       info.hashes, info.window_ms,
		       (unsigned long long)info.memory_bytes);
	} else {
		printf("created '%s': %llu %s, %u hashes, %llu bytes\n",
		       name, (unsigned long long)info.bits,
		       info.flags & KBLOOM_CREATE_COUNTING ? "counters" : "bits",
		       info.hashes, (unsigned long long)info.memory_bytes);
	}
	return 0;
}

/*
 * What a refusal of @request means, in words, where the errno alone would
 * mislead; false to let kerr() say it. @fd is still open, to ask INFO.
 */
static bool name_cmd_explain(int fd, unsigned long request, const char *name,
			     int err)
{
	struct kbloom_info info;

	if (request == KBLOOM_IOC_DESTROY && err == EBUSY) {
		/* Pinned: iptables rules (-m bloom) or other kernel users. */
		pr_err("filter '%s' is in use by iptables rules or other kernel users (see /sys/kernel/bloom/filters/%s/rules): delete them first",
		       name, name);
		return true;
	}
	/* EINVAL from ROTATE on an existing filter means a plain one. */
	if (request == KBLOOM_IOC_ROTATE && err == EINVAL &&
	    !get_info(fd, name, &info) && !info.generations) {
		pr_err("filter '%s' is not windowed: only windowed filters (create --window) rotate",
		       name);
		return true;
	}
	return false;
}

/* destroy, clear, rotate: a name, an ioctl, nothing printed unless -j. */
static int name_cmd(const struct cmd *cmd, int argc, char **argv,
		    unsigned long request, const char *done)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	struct kbloom_name arg;
	const char *name;
	int ret, fd;

	ret = parse_options(cmd, argc, argv, longopts, NULL, NULL);
	if (ret >= 0)
		return ret;
	name = get_name_arg(cmd, argc, argv);
	if (!name)
		return EXIT_ERROR;

	memset(&arg, 0, sizeof(arg));
	set_name(arg.name, name);
	fd = open_device(O_RDWR);
	if (fd < 0)
		return EXIT_ERROR;
	ret = ioctl(fd, request, &arg) ? errno : 0;
	if (ret && !name_cmd_explain(fd, request, name, ret))
		pr_err("filter '%s': %s", name, kerr(ret));
	close(fd);
	if (ret)
		return EXIT_ERROR;
	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, done, name);
		jw_end_object(jw);
	}
	return 0;
}

int cmd_destroy(const struct cmd *cmd, int argc, char **argv)
{
	return name_cmd(cmd, argc, argv, KBLOOM_IOC_DESTROY, "destroyed");
}

int cmd_clear(const struct cmd *cmd, int argc, char **argv)
{
	return name_cmd(cmd, argc, argv, KBLOOM_IOC_CLEAR, "cleared");
}

int cmd_rotate(const struct cmd *cmd, int argc, char **argv)
{
	return name_cmd(cmd, argc, argv, KBLOOM_IOC_ROTATE, "rotated");
}

int cmd_show(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	struct kbloom_info info;
	const char *name;
	int ret, fd;

	ret = parse_options(cmd, argc, argv, longopts, NULL, NULL);
	if (ret >= 0)
		return ret;
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
int list_names(int fd, char **names, uint32_t *count)
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

/*
 * INFO of every filter LIST names, from the device opened read-only. A
 * filter destroyed since LIST is simply not there any more. On success
 * *infos is the caller's to free; on failure (reported) there is none.
 */
int list_infos(struct kbloom_info **infos, uint32_t *n)
{
	uint32_t count, i;
	char *names;
	int err = 0, fd;

	*infos = NULL;
	fd = open_device(O_RDONLY);
	if (fd < 0)
		return -1;
	if (list_names(fd, &names, &count)) {
		close(fd);
		return -1;
	}
	*n = 0;
	*infos = calloc(count ? count : 1, sizeof(**infos));
	if (!*infos) {
		pr_err("list: %s", strerror(ENOMEM));
		err = ENOMEM;
	}
	for (i = 0; i < count && !err; i++) {
		char name[KBLOOM_NAME_MAX];

		/* The module NUL-terminates; do not rely on it. */
		memcpy(name, names + (size_t)i * KBLOOM_NAME_MAX,
		       KBLOOM_NAME_MAX);
		name[KBLOOM_NAME_MAX - 1] = '\0';
		err = get_info(fd, name, &(*infos)[*n]);
		if (!err)
			(*n)++;
		else if (err == ENOENT)
			err = 0;
		else
			pr_err("filter '%s': %s", name, kerr(err));
	}
	free(names);
	close(fd);
	if (err) {
		free(*infos);
		*infos = NULL;
		return -1;
	}
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

static unsigned int max_width(unsigned int w, uint64_t v)
{
	return u64_width(v) > w ? u64_width(v) : w;
}

/* A table under a header line; nothing at all without filters. */
static void list_text(const struct kbloom_info *infos, uint32_t n)
{
	unsigned int wn = 4, wb = 4, wh = 6, ws = 8, wa = 4;
	uint32_t i;

	if (!n)
		return;
	for (i = 0; i < n; i++) {
		unsigned int len = strnlen(infos[i].name, KBLOOM_NAME_MAX);

		wn = len > wn ? len : wn;
		wb = max_width(wb, infos[i].bits);
		ws = max_width(ws, infos[i].bits_set);
		wa = max_width(wa, infos[i].adds);
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
}

void list_json(const struct kbloom_info *infos, uint32_t n)
{
	uint32_t i;

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
}

int cmd_list(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	struct kbloom_info *infos;
	uint32_t n;
	int ret;

	ret = parse_options(cmd, argc, argv, longopts, NULL, NULL);
	if (ret >= 0)
		return ret;
	if (no_args(cmd, argc, argv) || list_infos(&infos, &n))
		return EXIT_ERROR;
	if (jw)
		list_json(infos, n);
	else
		list_text(infos, n);
	free(infos);
	return 0;
}
