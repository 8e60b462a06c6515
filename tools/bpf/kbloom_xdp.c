// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_xdp: attaches the XDP example of tools/bpf to a device, reads
 * its counters, detaches it. The program is kbloom_xdp.bpf.c (kbloom's
 * kfuncs, by reference or by id) or, with --map, kbloom_xdp_map.bpf.c
 * (BPF bloom filter maps), loaded through their libbpf skeletons
 * (kbloom_xdp_load.c). Its tests are kbloom_xdp_test.c, its benchmark
 * tools/bench/kbloom_xdp_bench.c.
 *
 * Exit status: 0 done, 1 runtime error, 2 usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kbloom_xdp_load.h"

struct options {
	struct prog_opts prog;
	uint32_t xdp_mode;	/* XDP_FLAGS_SKB_MODE, _DRV_MODE or 0 */
	bool force;
};

static int ifindex_of(const char *dev)
{
	int ifindex = if_nametoindex(dev);

	if (!ifindex)
		errmsg("device '%s': %s", dev,
		       errno == ENODEV ? "no such device" : strerror(errno));
	return ifindex;
}

static int cmd_attach(const struct options *o, const char *dev)
{
	int ifindex = ifindex_of(dev), err, ret = EXIT_RUNTIME;
	uint32_t flags = o->xdp_mode;
	struct loaded l;

	if (!ifindex)
		return EXIT_RUNTIME;
	if (!o->force)
		flags |= XDP_FLAGS_UPDATE_IF_NOEXIST;
	if (!o->prog.map && o->prog.nr_allow_addrs && fill_allow_filter(&o->prog))
		return EXIT_RUNTIME;
	if (load(&o->prog, &l))
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
	if (!o->prog.json)
		printf("attached %s (%s) to %s\n",
		       o->prog.map ? "kbloom_xdp_map" : "kbloom_xdp", l.what, dev);
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

static int cmd_stats(const struct options *o, const char *dev)
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
	if (o->prog.json) {
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

static int cmd_detach(const struct options *o, const char *dev)
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
	if (!o->prog.json)
		printf("detached %s (id %u) from %s\n", info.name, info.id,
		       dev);
	ret = 0;
out:
	close(fd);
	return ret;
}

static void usage(FILE *f)
{
	fputs("Usage: kbloom_xdp [attach] [PROGRAM OPTIONS] [--generic|--native] [--force] DEV\n"
	      "       kbloom_xdp stats [-j] DEV\n"
	      "       kbloom_xdp detach [--force] DEV\n"
	      "\n"
	      "Attach the kbloom XDP example to DEV, print its counters, detach it.\n"
	      "It drops packets whose source is not in the allow-list (--allow) and\n"
	      "counts new 5-tuples (--flows).\n"
	      "\n"
	      PROG_USAGE
	      "\n"
	      "Other options:\n"
	      "  --generic, --native   attach in generic (skb) or native (driver) mode;\n"
	      "                     default: native if the driver has it, else generic\n"
	      "  --force            attach over another program; detach one not ours\n"
	      "\n"
	      "Exit status: 0 done, 1 error, 2 usage error.\n", f);
}

enum { OPT_GENERIC = OPT_PROG_END, OPT_NATIVE, OPT_FORCE };

static const struct option long_opts[] = {
	PROG_LONG_OPTS,
	{ "generic", no_argument, NULL, OPT_GENERIC },
	{ "native", no_argument, NULL, OPT_NATIVE },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ NULL, 0, NULL, 0 },
};

enum cmd { CMD_ATTACH, CMD_STATS, CMD_DETACH };

static const char *const cmd_names[] = { "attach", "stats", "detach" };

static enum cmd cmd = CMD_ATTACH;

/* Whether command cmd takes option @opt. */
static bool takes(int opt)
{
	switch (opt) {
	case OPT_FORCE:
		return cmd != CMD_STATS;
	case 'j':
	case 'v':
	case '?':
		return true;
	default:
		return cmd == CMD_ATTACH;
	}
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	int opt, i, first = 1;

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
	if (prog_opts_init(&o.prog, argc))
		return EXIT_RUNTIME;
	/* getopt sees the arguments after the command. */
	argv[first - 1] = argv[0];
	argc -= first - 1;
	argv += first - 1;
	while ((opt = prog_getopt(&o.prog, argc, argv, long_opts, takes,
				  cmd_names[cmd])) > 0) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case OPT_GENERIC:
			o.xdp_mode = XDP_FLAGS_SKB_MODE;
			break;
		case OPT_NATIVE:
			o.xdp_mode = XDP_FLAGS_DRV_MODE;
			break;
		case OPT_FORCE:
			o.force = true;
			break;
		}
	}
	if (!opt)
		return EXIT_USAGE;
	libbpf_set_print(print_libbpf);
	if (optind != argc - 1)
		return usage_err("%s: one device expected", cmd_names[cmd]);
	/* --ids-from says by id; else by reference. */
	if (!o.prog.map && o.prog.by == BY_DEFAULT)
		o.prog.by = o.prog.ids_sysfs ? BY_ID : BY_REF;

	switch (cmd) {
	case CMD_ATTACH:
		return cmd_attach(&o, argv[optind]);
	case CMD_STATS:
		return cmd_stats(&o, argv[optind]);
	case CMD_DETACH:
		return cmd_detach(&o, argv[optind]);
	}
	return EXIT_USAGE;
}
