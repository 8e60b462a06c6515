// SPDX-License-Identifier: GPL-2.0
/*
 * Templates: what a filter shared by a fleet is (size, hashes, layout,
 * hash scheme, seed, window), kept in the KV bucket kbloom-templates under
 * the filter's name as a kbloom image (Documentation/kbloom-image.md) with
 * an all-zero payload, compressed. The first host to put one wins; every
 * host joins by making its filters from it, so that their blocks can be
 * ORed into each other.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bloomsync.h"
#include "natsw.h"

/* The largest payload any module could take: what a template may claim. */
#define TEMPLATE_MAX_PAYLOAD	((KBLOOM_MAX_BITS / 8) * KBLOOM_MAX_GENERATIONS)

/*
 * Read and check template @name; 0, 1 if there is none, -1 on error. The
 * reader refuses, before inflating anything, a payload other than the
 * image of the shape the header declares, and stored bytes past its zlib
 * bound; the payload is then only counted, and must be all zero: a
 * template's bits would be in every filter made from it. With @payload,
 * @rd->payload is that all-zero payload, for import_image().
 */
static int get_template(kvStore *kv, const char *name, struct img_reader *rd,
			bool payload)
{
	kvEntry *e = NULL;
	natsStatus s;
	int ret = 0;

	memset(rd, 0, sizeof(*rd));
	s = kvStore_Get(&e, kv, name);
	if (s == NATS_NOT_FOUND)
		return 1;
	if (s != NATS_OK) {
		pr_err("template '%s': %s", name, nerr(s));
		return -1;
	}
	rd->file = "the template";
	rd->max_payload = TEMPLATE_MAX_PAYLOAD;
	rd->max_payload_src = "the module's largest filter";
	rd->keep_payload = false;
	if (img_read_mem(rd, kvEntry_Value(e), kvEntry_ValueLen(e))) {
		pr_err("template '%s': %s", name, rd->err);
		ret = -1;
	} else if (rd->set) {
		pr_err("template '%s': %" PRIu64 " bits set: a template's payload is all zero (delete it from the bucket %s and put it again)",
		       name, rd->set, TEMPLATE_BUCKET);
		ret = -1;
	} else if (payload) {
		rd->img.adds = 0;
		rd->payload = calloc(1, rd->img.payload_len ?
					rd->img.payload_len : 1);
		if (!rd->payload) {
			pr_err("template '%s': %s", name, strerror(ENOMEM));
			ret = -1;
		}
	}
	if (ret)
		img_reader_release(rd);
	kvEntry_Destroy(e);
	return ret;
}

/* Can filters of this shape be kept in step across hosts? */
static bool shareable(const struct image *img, const char *what,
		      const char *name)
{
	if (img->flags & KBLOOM_CREATE_COUNTING) {
		pr_err("%s '%s': a counting filter: its changes cannot be shared (share a bit filter fed the same keys)",
		       what, name);
		return false;
	}
	if (img->generations && !img->window_ms) {
		pr_err("%s '%s': a window rotated only by hand cannot be kept in step across hosts",
		       what, name);
		return false;
	}
	return true;
}

static int template_put(kvStore *kv, const char *name)
{
	struct filter_image fi;
	struct img_reader rd;
	struct shape mine, theirs;
	unsigned char *val;
	char diff[512];
	size_t len;
	natsStatus s;
	int fd, ret;

	fd = open_device(O_RDONLY);
	if (fd < 0)
		return EXIT_ERROR;
	ret = filter_template(fd, name, &fi);
	close(fd);
	if (ret)
		return EXIT_ERROR;
	if (!shareable(&fi.img, "filter", name)) {
		filter_image_release(&fi);
		return EXIT_ERROR;
	}
	shape_of_image(&fi.img, &mine);
	len = fi.hlen + fi.img.stored_len;
	val = malloc(len);
	if (!val) {
		filter_image_release(&fi);
		pr_err("template '%s': %s", name, strerror(ENOMEM));
		return EXIT_ERROR;
	}
	memcpy(val, fi.h, fi.hlen);
	memcpy(val + fi.hlen, fi.stored, fi.img.stored_len);
	filter_image_release(&fi);
	/* First writer wins: Create fails if the key exists. */
	s = kvStore_Create(NULL, kv, name, val, (int)len);
	free(val);
	if (s == NATS_OK) {
		printf("template '%s': put (%zu bytes)\n", name, len);
		return 0;
	}
	ret = get_template(kv, name, &rd, false);
	if (ret) {
		if (ret > 0)
			pr_err("template '%s': %s", name, nerr(s));
		return EXIT_ERROR;
	}
	shape_of_image(&rd.img, &theirs);
	img_reader_release(&rd);
	if (shape_diff(&mine, &theirs, diff, sizeof(diff))) {
		pr_err("template '%s' exists and differs from filter '%s' (filter != template): %s",
		       name, name, diff);
		return EXIT_ERROR;
	}
	printf("template '%s': already there, identical\n", name);
	return 0;
}

static int template_show(kvStore *kv, const char *name)
{
	struct img_reader rd;
	int ret = get_template(kv, name, &rd, false);

	if (ret > 0)
		pr_err("template '%s': no such template", name);
	if (ret)
		return EXIT_ERROR;
	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, "name", name);
		jw_kv_u64(jw, "bits", rd.img.bits);
		jw_kv_u64(jw, "hashes", rd.img.hashes);
		jw_kv_string(jw, "layout", rd.img.layout == IMG_LAYOUT_BLOCKED ?
			     "blocked" : "standard");
		jw_kv_string(jw, "hash_scheme",
			     hash_scheme_name(rd.img.hash_scheme));
		jw_kv_u64(jw, "capacity", rd.img.capacity);
		jw_kv_u64(jw, "fpr_ppb", rd.img.fpr_ppb);
		jw_kv_u64(jw, "window_ms", rd.img.window_ms);
		jw_kv_u64(jw, "generations", rd.img.generations);
		jw_end_object(jw);
		fputc('\n', stdout);
	} else {
		printf("template '%s': %" PRIu64 " bits, %u hashes, %s layout, %s, capacity %" PRIu64 ", fpr %u ppb",
		       name, rd.img.bits, rd.img.hashes,
		       rd.img.layout == IMG_LAYOUT_BLOCKED ? "blocked" :
							     "standard",
		       hash_scheme_name(rd.img.hash_scheme), rd.img.capacity,
		       rd.img.fpr_ppb);
		if (rd.img.generations)
			printf(", window %ums in %u generations",
			       rd.img.window_ms, rd.img.generations);
		putchar('\n');
	}
	img_reader_release(&rd);
	return 0;
}

int cmd_template(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { COMMON_LONGOPTS,
						   END_LONGOPTS };
	const char *verb, *name;
	struct nconn c;
	kvStore *kv = NULL;
	int ret;

	ret = parse_options(cmd, argc, argv, longopts, NULL, NULL);
	if (ret >= 0)
		return ret;
	if (get_two_args(cmd, argc, argv, "put|show NAME", &verb, &name))
		return EXIT_ERROR;
	if (strcmp(verb, "put") && strcmp(verb, "show")) {
		pr_err("template: unknown action '%s' (put or show)", verb);
		return EXIT_ERROR;
	}
	if (check_name(name))
		return EXIT_ERROR;
	if (nconn_open(&c))
		return EXIT_ERROR;
	if (nconn_kv(&c, &kv)) {
		nconn_close(&c);
		return EXIT_ERROR;
	}
	ret = !strcmp(verb, "put") ? template_put(kv, name) :
				     template_show(kv, name);
	kvStore_Destroy(kv);
	nconn_close(&c);
	return ret;
}

/*
 * Make filter @name from the template, or check that the one there is of
 * its shape: 0, or -1 after naming every difference.
 */
static int join_filter(int fd, const char *name, const char *tname,
		       const struct img_reader *rd, uint32_t flags)
{
	uint64_t now = realtime_now_ms();
	uint64_t period = window_period(rd->img.window_ms,
					rd->img.generations);
	struct shape want, have;
	char diff[512];
	int ret;

	shape_of_image(&rd->img, &want);
	ret = dev_shape(fd, name, &have);
	if (ret == -ENOENT) {
		/* Windowed: rotations on multiples of W / G (window.c). */
		if (import_image(fd, name, rd, false, flags,
				 age_for_schedule(now, period)))
			return -1;
		printf("filter '%s': created from template '%s'\n", name,
		       tname);
		return 0;
	}
	if (ret)
		return -1;
	if (shape_diff(&have, &want, diff, sizeof(diff))) {
		pr_err("filter '%s' exists and differs from template '%s' (filter != template): %s",
		       name, tname, diff);
		return -1;
	}
	printf("filter '%s': matches template '%s'\n", name, tname);
	if (period) {
		struct kbloom_info info;
		uint64_t off;

		/* How far its rotations are from the fleet's schedule. */
		if (!get_info(fd, name, &info)) {
			off = (info.newest_age_ms + period -
			       age_for_schedule(realtime_now_ms(), period)) %
			      period;
			if (off > period / 2)
				off = period - off;
			if (off > period / 10)
				pr_warn("filter '%s' rotates %" PRIu64 " ms off the fleet's schedule (every %" PRIu64 " ms from the Unix epoch): blocks near a rotation may land one generation off; destroy it and join again to align it",
					name, off, period);
		}
	}
	return 0;
}

struct join_opts {
	const char *into;
};

static int join_opt(void *ctx, int c, const char *arg)
{
	struct join_opts *o = ctx;

	if (c != 'i')
		return -1;
	o->into = arg;
	return 0;
}

int cmd_join(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ "into", required_argument, NULL, 'i' },
		END_LONGOPTS
	};
	struct join_opts o = { 0 };
	struct kbloom_version v;
	char fleet[KBLOOM_NAME_MAX + 16];
	struct img_reader rd;
	kvStore *kv = NULL;
	const char *name;
	struct nconn c;
	int ret, fd;

	ret = parse_options(cmd, argc, argv, longopts, join_opt, &o);
	if (ret >= 0)
		return ret;
	name = get_name_arg(cmd, argc, argv);
	if (!name)
		return EXIT_ERROR;
	snprintf(fleet, sizeof(fleet), "%s%s", name, FLEET_SUFFIX);
	if (o.into)
		snprintf(fleet, sizeof(fleet), "%s", o.into);
	if (check_name(fleet))
		return EXIT_ERROR;
	if (!strcmp(fleet, name)) {
		pr_err("join: --into must name another filter than '%s'", name);
		return EXIT_ERROR;
	}
	if (nconn_open(&c))
		return EXIT_ERROR;
	if (nconn_kv(&c, &kv)) {
		nconn_close(&c);
		return EXIT_ERROR;
	}
	ret = get_template(kv, name, &rd, true);
	kvStore_Destroy(kv);
	nconn_close(&c);
	if (ret > 0)
		pr_err("template '%s': no such template (bloomsync template put %s, on one host)",
		       name, name);
	if (ret)
		return EXIT_ERROR;
	ret = EXIT_ERROR;
	if (!shareable(&rd.img, "template", name))
		goto out;
	fd = dev_open();
	if (fd < 0)
		goto out;
	if (device_version(fd, &v) ||
	    !(v.features & KBLOOM_FEATURE_CHANGES)) {
		pr_err("%s: the module has no change tracking (KBLOOM_FEATURE_CHANGES)",
		       device_path);
	} else if (!join_filter(fd, name, name, &rd,
				KBLOOM_CREATE_TRACK_CHANGES) &&
		   !join_filter(fd, fleet, name, &rd, 0)) {
		ret = 0;
	}
	close(fd);
out:
	img_reader_release(&rd);
	return ret;
}
