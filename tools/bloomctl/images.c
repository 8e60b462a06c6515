// SPDX-License-Identifier: GPL-2.0
/*
 * Filter images: save, load and inspect. The format and its reader are in
 * image.c, the safe writing of files in savefile.c; here are the limits,
 * the device and the commands.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "bloomctl.h"
#include "image.h"

/*
 * The largest payload an image may announce before anything is allocated
 * or inflated: a 180-byte image can claim 32 GiB. By default the module's
 * own per-filter limit (it would refuse more), or without the module 1 GiB
 * (2^33 bits); --max-payload or BLOOMCTL_MAX_PAYLOAD set another.
 */
#define DEFAULT_MAX_PAYLOAD	(1ULL << 30)
#define SYSFS_MAX_FILTER_BYTES	"/sys/module/kbloom/parameters/max_filter_bytes"

/* The module's max_filter_bytes parameter; 0 if unknown (not loaded). */
static uint64_t module_max_filter_bytes(void)
{
	uint64_t v;

	return read_sysfs_u64(SYSFS_MAX_FILTER_BYTES, &v) ? 0 : v;
}

/*
 * The limit for this run: --max-payload, else BLOOMCTL_MAX_PAYLOAD, else
 * the module's max_filter_bytes, else DEFAULT_MAX_PAYLOAD. A load never
 * reads more than the module's limit, whatever was asked: the module would
 * refuse it (EFBIG) after bloomctl had allocated and inflated it all.
 */
static int payload_limit(const char *opt, bool load, struct img_reader *rd)
{
	const char *env = getenv("BLOOMCTL_MAX_PAYLOAD");
	uint64_t module = module_max_filter_bytes();

	if (opt) {
		rd->max_payload_src = "--max-payload";
		if (parse_u64("--max-payload", opt, &rd->max_payload))
			return -1;
	} else if (env && *env) {
		rd->max_payload_src = "BLOOMCTL_MAX_PAYLOAD";
		if (parse_u64("BLOOMCTL_MAX_PAYLOAD", env, &rd->max_payload))
			return -1;
	} else if (module) {
		rd->max_payload_src = "the module's max_filter_bytes parameter";
		rd->max_payload = module;
	} else {
		rd->max_payload_src = "bloomctl's limit without the module; see --max-payload";
		rd->max_payload = DEFAULT_MAX_PAYLOAD;
	}
	if (load && module && module < rd->max_payload) {
		rd->max_payload_src = "the module's max_filter_bytes parameter";
		rd->max_payload = module;
	}
	return 0;
}

/*
 * Read and check the image at @path ("-": stdin) completely. Every
 * problem has its own message naming the file.
 */
static int read_image(const char *path, struct img_reader *rd)
{
	int fd = STDIN_FILENO, ret;

	rd->file = strcmp(path, "-") ? path : "stdin";
	if (!strcmp(path, "-") && batch_owns_stdin) {
		pr_err("stdin is the batch: give the image a file name");
		return -1;
	}
	if (strcmp(path, "-")) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			pr_err("%s: %s", path, strerror(errno));
			return -1;
		}
	}
	ret = img_read_fd(rd, fd);
	if (ret)
		pr_err("%s", rd->err);
	if (fd != STDIN_FILENO)
		close(fd);
	return ret;
}

/* --max-payload, as inspect and load take it. */
#define IMAGE_LONGOPTS \
	{ "max-payload", required_argument, NULL, OPT_MAX_PAYLOAD }

static int max_payload_opt(void *ctx, int c, const char *arg)
{
	if (c != OPT_MAX_PAYLOAD)
		return -1;
	*(const char **)ctx = arg;
	return 0;
}

static void inspect_json(const struct img_reader *rd)
{
	const struct image *img = &rd->img;
	/* rd->set counts every generation's positions. */
	double m = (double)img->bits * (img->generations ? img->generations : 1);
	double x = rd->set;

	jw_start_object(jw);
	jw_kv_string(jw, "file", rd->file);
	jw_kv_u64(jw, "format_version", img->version);
	jw_kv_u64(jw, "hash_scheme", img->hash_scheme);
	jw_kv_string(jw, "hash_scheme_name",
		     hash_scheme_name(img->hash_scheme));
	jw_kv_u64(jw, "layout", img->layout);
	jw_kv_u64(jw, "flags", img->flags);
	jw_kv_bool(jw, "counting", img->flags & KBLOOM_CREATE_COUNTING);
	jw_kv_string(jw, "bpf", bpf_access_name(img->flags));
	jw_kv_u64(jw, "bits", img->bits);
	jw_kv_u64(jw, "hashes", img->hashes);
	jw_kv_u64(jw, "capacity", img->capacity);
	if (img->fpr_ppb)
		jw_kv_double(jw, "fpr_target", img->fpr_ppb / 1e9);
	else
		jw_kv_null(jw, "fpr_target");
	jw_kv_u64(jw, "adds", img->adds);
	jw_kv_string(jw, "compression",
		     img->compression == IMG_COMPRESS_ZLIB ? "zlib" : "none");
	jw_kv_u64(jw, "payload_bytes", img->payload_len);
	jw_kv_u64(jw, "stored_bytes", img->stored_len);
	jw_kv_u64(jw, "file_bytes", rd->file_bytes);
	jw_kv_u64(jw, "crc32c", img->crc);
	jw_kv_u64(jw, "generations", img->generations);
	jw_kv_u64(jw, "window_ms", img->window_ms);
	jw_kv_u64(jw, "bits_set", rd->set);
	jw_kv_u64(jw, "saturated", rd->saturated);
	jw_kv_double(jw, "fill_ratio", x / m);
	jw_kv_double(jw, "estimated_fpr",
		     estimate_fpr(rd->set, (uint64_t)m, img->hashes,
				  img_kflags(img)));
	jw_kv_double(jw, "estimated_keys",
		     estimate_keys(rd->set, (uint64_t)m, img->hashes,
				   img_kflags(img)));
	jw_end_object(jw);
}

/* The seed is a secret: it is never printed. */
static void inspect_text(const struct img_reader *rd)
{
	const struct image *img = &rd->img;
	bool counting = img->flags & KBLOOM_CREATE_COUNTING;
	/* rd->set counts every generation's positions. */
	double m = (double)img->bits * (img->generations ? img->generations : 1);
	double x = rd->set;

	printf("image '%s'\n", rd->file);
	printf("  format version: %u\n", img->version);
	printf("  hash scheme:    %s (%u)\n",
	       hash_scheme_name(img->hash_scheme), img->hash_scheme);
	printf("  layout:         %u (%s)\n", img->layout,
	       img->layout == IMG_LAYOUT_BLOCKED ? "blocked" : "standard");
	printf("  counting:       %s\n", counting ? "yes" : "no");
	printf("  bpf:            %s\n", bpf_access_name(img->flags));
	if (img->generations) {
		printf("  generations:    %u (bits and hashes are per generation; bits set counts all)\n",
		       img->generations);
		printf("  window:         %u ms%s\n", img->window_ms,
		       img->window_ms ? "" : " (rotates by hand only)");
		if (img->flags & KBLOOM_CREATE_ROTATE_AT_FILL)
			printf("  rotate at fill: yes\n");
	}
	printf("  bits:           %" PRIu64 "\n", img->bits);
	printf("  hashes:         %u\n", img->hashes);
	if (img->capacity)
		printf("  capacity:       %" PRIu64 "\n", img->capacity);
	else
		printf("  capacity:       -\n");
	if (img->fpr_ppb)
		printf("  fpr target:     %.9g\n", img->fpr_ppb / 1e9);
	else
		printf("  fpr target:     -\n");
	printf("  adds:           %" PRIu64 "\n", img->adds);
	if (img->compression == IMG_COMPRESS_ZLIB)
		printf("  compression:    zlib, %" PRIu64 " bytes for %" PRIu64 "\n",
		       img->stored_len, img->payload_len);
	else
		printf("  compression:    none, %" PRIu64 " bytes\n",
		       img->payload_len);
	printf("  crc32c:         0x%08x\n", img->crc);
	printf("  %s   %" PRIu64 " (%.2f%% full)\n",
	       counting ? "counters set:" : "bits set:    ", rd->set,
	       100 * x / m);
	if (counting)
		printf("  saturated:      %" PRIu64 "\n", rd->saturated);
	printf("  estimated fpr:  %.3g\n",
	       estimate_fpr(rd->set, (uint64_t)m, img->hashes,
			    img_kflags(img)));
	if (x < m)
		printf("  estimated keys: %.0f\n",
		       estimate_keys(rd->set, (uint64_t)m, img->hashes,
				     img_kflags(img)));
	else
		printf("  estimated keys: - (filter full)\n");
}


/* CLOCK_REALTIME in ms since the epoch. */
static uint64_t realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * KBLOOM_IOC_EXPORT: ask for the size, allocate, fetch; again should the
 * filter have been replaced by a larger one meanwhile.
 */
static int export_filter(int fd, const char *name, struct kbloom_image *ki,
			 unsigned char **payload, bool quiet_enoent)
{
	unsigned char *buf = NULL, *tmp;
	uint64_t cap = 0;
	int err;

	for (;;) {
		memset(ki, 0, sizeof(*ki));
		set_name(ki->name, name);
		ki->payload = (__u64)(uintptr_t)buf;
		ki->payload_len = cap;
		if (!ioctl(fd, KBLOOM_IOC_EXPORT, ki))
			break;
		err = errno;
		if (err != ENOBUFS || ki->payload_len <= cap) {
			free(buf);
			/* save --all: destroyed since the list, not an error. */
			if (err == ENOENT && quiet_enoent)
				return -ENOENT;
			pr_err("filter '%s': %s", name, kerr(err));
			return -1;
		}
		if (ki->payload_len > SIZE_MAX / 2) {
			pr_err("filter '%s': %llu bytes: too large for this %zu-bit bloomctl",
			       name, (unsigned long long)ki->payload_len,
			       sizeof(size_t) * 8);
			free(buf);
			return -1;
		}
		cap = ki->payload_len;
		tmp = realloc(buf, cap);
		if (!tmp) {
			pr_err("filter '%s': %s", name, strerror(ENOMEM));
			free(buf);
			return -1;
		}
		buf = tmp;
	}
	*payload = buf;
	return 0;
}

/*
 * The image of an exported filter: header and stored payload, checked by
 * the very reader load uses, so that save never writes what load refuses.
 */
static int build_image(const char *name, const struct kbloom_image *ki,
		       uint64_t now_ms, const unsigned char *payload,
		       bool compress,
		       unsigned char h[IMG_HEADER_MAX],
		       unsigned char **zbuf, struct image *img)
{
	struct img_reader rd = { 0 };
	const unsigned char *stored = payload;

	memset(img, 0, sizeof(*img));
	/*
	 * Windowed filters: G generations of payload, and when the newest
	 * began, so that a load after a downtime forgets what the downtime
	 * covered (version 3).
	 */
	img->version = ki->generations ? IMG_VERSION_SCHEDULE : IMG_VERSION;
	img->generations = ki->generations;
	img->window_ms = ki->window_ms;
	if (ki->generations)
		img->newest_start_ms = now_ms - ki->age_ms;
	img->hash_scheme = ki->hash_scheme;
	img->layout = ki->flags & KBLOOM_CREATE_BLOCKED ? IMG_LAYOUT_BLOCKED :
							  IMG_LAYOUT_STANDARD;
	/*
	 * Change tracking is not kept in files: a loaded filter starts
	 * tracking at its first COLLECT (or asks for it when imported).
	 */
	img->flags = ki->flags &
		     ~(KBLOOM_CREATE_BLOCKED | KBLOOM_CREATE_TRACK_CHANGES);
	img->bits = ki->bits;
	img->hashes = ki->hashes;
	img->fpr_ppb = ki->fpr_ppb;
	img->seed[0] = ki->seed[0];
	img->seed[1] = ki->seed[1];
	img->seed_hi[0] = ki->seed_hi[0];
	img->seed_hi[1] = ki->seed_hi[1];
	img->adds = ki->adds;
	img->capacity = ki->capacity;
	img->payload_len = ki->payload_len;
	img->stored_len = ki->payload_len;
	if (compress) {
		if (img_deflate(payload, img->payload_len, zbuf,
				&img->stored_len, rd.err, sizeof(rd.err))) {
			pr_err("filter '%s': %s", name, rd.err);
			return -1;
		}
		img->compression = IMG_COMPRESS_ZLIB;
		stored = *zbuf;
	}
	img_encode_header(h, img);
	img->crc = crc32c(crc32c(0, h, img_header_len(img)), stored,
			  img->stored_len);
	img_encode_header(h, img);

	rd.file = "the exported image";
	rd.max_payload = UINT64_MAX;
	rd.max_payload_src = "none";
	if (img_read_parts(&rd, h, img_header_len(img), stored,
			   img->stored_len)) {
		pr_err("filter '%s': the module exported an image bloomctl would refuse: %s",
		       name, rd.err);
		return -1;
	}
	return 0;
}


/*
 * The module's own limits, known only now that the device is open. A
 * module has jhash always, SipHash if it says so: what matters is that it
 * can hash the image's keys to the same bits, not what it defaults to.
 */
static int check_image_module(int fd, const struct image *img,
			      const char *file, uint64_t *features)
{
	struct kbloom_version v;
	int err = device_version(fd, &v);

	if (err) {
		pr_err("%s: %s", device_path, kerr(err));
		return -1;
	}
	*features = v.features;
	if (!(v.features & KBLOOM_FEATURE_IMAGE)) {
		pr_err("%s: the module does not support filter images",
		       device_path);
		return -1;
	}
	if (img->hash_scheme == KBLOOM_HASH_SIPHASH &&
	    !(v.features & KBLOOM_FEATURE_SIPHASH)) {
		pr_err("%s: hash scheme 2 (siphash), which the module does not support (it hashes with %s only): its keys would map to other bits",
		       file, hash_scheme_name(v.hash_scheme));
		return -1;
	}
	if ((v.min_bits && img->bits < v.min_bits) ||
	    (v.max_bits && img->bits > v.max_bits)) {
		pr_err("%s: %" PRIu64 " bits, outside the module's range %llu to %llu",
		       file, img->bits, (unsigned long long)v.min_bits,
		       (unsigned long long)v.max_bits);
		return -1;
	}
	if (img->generations && !(v.features & KBLOOM_FEATURE_WINDOW)) {
		pr_err("%s: a windowed filter (%u generations), which the module does not support",
		       file, img->generations);
		return -1;
	}
	if (img->generations && v.max_generations &&
	    img->generations > v.max_generations) {
		pr_err("%s: %u generations, more than the module's %u", file,
		       img->generations, v.max_generations);
		return -1;
	}
	if (v.max_hashes && img->hashes > v.max_hashes) {
		pr_err("%s: %u hashes, more than the module's %u", file,
		       img->hashes, v.max_hashes);
		return -1;
	}
	return 0;
}

/*
 * A windowed image loaded after a downtime: the rotations the time since
 * its newest generation began would have brought are applied to the
 * payload (generations newest first: each rotation drops the oldest and
 * puts an empty one in front; G or more leave it empty), and *age_ms is
 * how far into its period the newest one is, for the module to keep the
 * schedule. A key added at t is thus never reported after t + W, whether
 * or not the filter spent part of the window on disk. Without a start
 * (version 2) or a window (rotated by hand), nothing changes.
 *
 * Return: the rotations applied.
 */
static uint64_t image_downtime(struct img_reader *rd, bool module_age,
			       uint32_t *age_ms)
{
	const struct image *img = &rd->img;
	uint64_t g = img->generations, w = img->window_ms, gb, now, a, r;

	*age_ms = 0;
	if (!img->newest_start_ms || !g)
		return 0;
	now = realtime_ms();
	if (now < img->newest_start_ms) {
		pr_warn("%s: saved %.1f s in the future by this clock: taken as saved now",
			rd->file, (img->newest_start_ms - now) / 1000.0);
		return 0;
	}
	a = now - img->newest_start_ms;
	if (!w) {
		*age_ms = module_age ? (a < INT32_MAX ? a : INT32_MAX) : 0;
		return 0;
	}
	/* a / (W / G) periods, without rounding W / G. */
	r = a > UINT64_MAX / g ? g : a * g / w;
	gb = img->payload_len / g;
	if (r >= g) {
		memset(rd->payload, 0, img->payload_len);
		r = g;
	} else if (r) {
		memmove(rd->payload + r * gb, rd->payload, (g - r) * gb);
		memset(rd->payload, 0, r * gb);
	}
	if (r < g && module_age)
		*age_ms = (a * g - r * w) / g;
	return r;
}

/* KBLOOM_IOC_IMPORT's errors, each naming the filter and the file. */
static void import_error(int err, const char *name, const char *file,
			 uint64_t bytes, bool replace)
{
	if (err == EEXIST)
		pr_err("filter '%s' already exists (load --replace swaps in the image's contents)",
		       name);
	else if (err == ENOENT && replace)
		pr_err("filter '%s': no such filter (--replace needs an existing filter; without it, load creates one)",
		       name);
	else if (err == EFBIG)
		pr_err("filter '%s': %s: %" PRIu64 " bytes, larger than the module's per-filter limit (its max_filter_bytes parameter)",
		       name, file, bytes);
	else if (err == ENOSPC)
		pr_err("filter '%s': %s: %" PRIu64 " bytes would exceed the module's memory budget (its max_memory parameter)",
		       name, file, bytes);
	else if (err == EINVAL)
		pr_err("filter '%s': the module rejected %s as invalid",
		       name, file);
	else
		pr_err("filter '%s': %s: %s", name, file, kerr(err));
}

/*
 * KBLOOM_IOC_IMPORT of a checked image as filter @name, with
 * @extra_flags (KBLOOM_CREATE_TRACK_CHANGES: bloomsync's join) and the
 * newest generation's @age_ms; errors reported, naming filter and file.
 */
int import_image(int fd, const char *name, const struct img_reader *rd,
		 bool replace, uint32_t extra_flags, uint32_t age_ms)
{
	const struct image *img = &rd->img;
	struct kbloom_image ki;

	memset(&ki, 0, sizeof(ki));
	set_name(ki.name, name);
	ki.bits = img->bits;
	ki.hashes = img->hashes;
	ki.flags = img_kflags(img) | extra_flags;
	ki.seed[0] = img->seed[0];
	ki.seed[1] = img->seed[1];
	ki.seed_hi[0] = img->seed_hi[0];
	ki.seed_hi[1] = img->seed_hi[1];
	ki.adds = img->adds;
	ki.capacity = img->capacity;
	ki.fpr_ppb = img->fpr_ppb;
	ki.hash_scheme = img->hash_scheme;
	ki.generations = img->generations;
	ki.window_ms = img->window_ms;
	ki.payload = (__u64)(uintptr_t)rd->payload;
	ki.payload_len = img->payload_len;
	ki.import_flags = replace ? KBLOOM_IMPORT_REPLACE : 0;
	ki.age_ms = age_ms;
	if (!ioctl(fd, KBLOOM_IOC_IMPORT, &ki))
		return 0;
	import_error(errno, name, rd->file, img->payload_len, replace);
	return -1;
}

/* Streams the image: its payload is counted, never held in memory. */
int cmd_inspect(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		IMAGE_LONGOPTS,
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	struct img_reader rd = { .file = NULL };
	const char *max = NULL, *path;
	int ret;

	ret = parse_options(cmd, argc, argv, longopts, max_payload_opt, &max);
	if (ret >= 0)
		return ret;
	if (get_one_arg(cmd, argc, argv, "FILE", &path) ||
	    payload_limit(max, false, &rd) || read_image(path, &rd))
		return EXIT_ERROR;
	if (jw)
		inspect_json(&rd);
	else
		inspect_text(&rd);
	img_reader_release(&rd);
	return 0;
}

/* NAME and FILE; '-' writes to stdout, which must then be neither. */
static int save_operands(const struct cmd *cmd, int argc, char **argv,
			 const char **name, const char **path)
{
	if (get_two_args(cmd, argc, argv, "NAME and FILE", name, path) ||
	    check_name(*name))
		return -1;
	if (strcmp(*path, "-"))
		return 0;
	if (jw) {
		pr_err("save: FILE '-' writes the image to stdout: no JSON there");
		return -1;
	}
	if (isatty(STDOUT_FILENO)) {
		pr_err("save: refusing to write a binary image to a terminal");
		return -1;
	}
	return 0;
}

/* Nothing else goes to stdout: the image is the output. */
static int save_stdout(const unsigned char *h, size_t hlen,
		       const unsigned char *stored, uint64_t stored_len)
{
	if (fflush(stdout) || write_full(STDOUT_FILENO, h, hlen) ||
	    write_full(STDOUT_FILENO, stored, stored_len)) {
		pr_err("stdout: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void save_report(const char *name, const char *path,
			const struct image *img)
{
	if (!jw) {
		printf("saved '%s' to %s: %" PRIu64 " %s, %u hashes, %" PRIu64 " bytes\n",
		       name, path, img->bits,
		       img->flags & KBLOOM_CREATE_COUNTING ? "counters" : "bits",
		       img->hashes, img_header_len(img) + img->stored_len);
		return;
	}
	jw_start_object(jw);
	jw_kv_string(jw, "saved", name);
	jw_kv_string(jw, "file", path);
	jw_kv_u64(jw, "bits", img->bits);
	jw_kv_u64(jw, "hashes", img->hashes);
	jw_kv_bool(jw, "counting", img->flags & KBLOOM_CREATE_COUNTING);
	jw_kv_u64(jw, "hash_scheme", img->hash_scheme);
	jw_kv_string(jw, "hash_scheme_name",
		     hash_scheme_name(img->hash_scheme));
	jw_kv_string(jw, "compression",
		     img->compression == IMG_COMPRESS_ZLIB ? "zlib" : "none");
	jw_kv_u64(jw, "generations", img->generations);
	jw_kv_u64(jw, "window_ms", img->window_ms);
	jw_kv_u64(jw, "payload_bytes", img->payload_len);
	jw_kv_u64(jw, "file_bytes", img_header_len(img) + img->stored_len);
	jw_end_object(jw);
}

/**
 * filter_image() - export a filter and encode its image
 * @fd: the device, open for reading (EXPORT needs CAP_SYS_ADMIN, but no
 *	write mode).
 * @name: the filter.
 * @compress: deflate the payload.
 * @fi: out: the image; release with filter_image_release().
 * @quiet_enoent: a filter that does not exist is not reported.
 *
 * Return: 0; -ENOENT if the filter does not exist and @quiet_enoent; -1
 * on any other error, reported.
 */
int filter_image(int fd, const char *name, bool compress,
		 struct filter_image *fi, bool quiet_enoent)
{
	struct kbloom_image ki;
	uint64_t now;
	int ret;

	memset(fi, 0, sizeof(*fi));
	/*
	 * The clock before the export: its age_ms is read as the copy
	 * begins, and a start taken after a long copy would be late, which
	 * would keep keys past their window after a restore.
	 */
	now = realtime_ms();
	ret = export_filter(fd, name, &ki, &fi->payload, quiet_enoent);
	if (ret)
		return ret;
	if (build_image(name, &ki, now, fi->payload, compress, fi->h,
			&fi->zbuf, &fi->img)) {
		filter_image_release(fi);
		return -1;
	}
	fi->hlen = img_header_len(&fi->img);
	fi->stored = compress ? fi->zbuf : fi->payload;
	return 0;
}

/**
 * filter_template() - the image of a filter's shape and seed, empty
 * @fd: the device.
 * @name: the filter.
 * @fi: out: as filter_image(), compressed, with an all-zero payload and
 *	no keys counted: what another host needs to make a filter whose
 *	keys hash to the same bits (bloomsync's templates).
 *
 * Return: as filter_image().
 */
int filter_template(int fd, const char *name, struct filter_image *fi)
{
	struct kbloom_image ki;
	int ret;

	memset(fi, 0, sizeof(*fi));
	ret = export_filter(fd, name, &ki, &fi->payload, false);
	if (ret)
		return ret;
	memset(fi->payload, 0, ki.payload_len);
	ki.adds = 0;
	ki.age_ms = 0;
	if (build_image(name, &ki, realtime_ms(), fi->payload, true, fi->h,
			&fi->zbuf, &fi->img)) {
		filter_image_release(fi);
		return -1;
	}
	fi->hlen = img_header_len(&fi->img);
	fi->stored = fi->zbuf;
	return 0;
}

void filter_image_release(struct filter_image *fi)
{
	free(fi->zbuf);
	free(fi->payload);
	fi->zbuf = fi->payload = NULL;
}

struct save_opts {
	bool compress, all;
};

static int save_opt(void *ctx, int c, const char *arg)
{
	struct save_opts *o = ctx;

	(void)arg;
	if (c == OPT_COMPRESS)
		o->compress = true;
	else if (c == OPT_ALL)
		o->all = true;
	else
		return -1;
	return 0;
}

int cmd_save(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "compress",	no_argument,	NULL, OPT_COMPRESS },
		{ "all",	no_argument,	NULL, OPT_ALL },
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	struct save_opts o = { .compress = false };
	struct filter_image fi;
	const char *name, *path;
	int ret, fd;

	ret = parse_options(cmd, argc, argv, longopts, save_opt, &o);
	if (ret >= 0)
		return ret;
	if (o.all)
		return get_one_arg(cmd, argc, argv, "directory DIR",
				   &path) ? EXIT_ERROR :
					    save_all(path, o.compress);
	if (save_operands(cmd, argc, argv, &name, &path))
		return EXIT_ERROR;
	fd = open_device(O_RDONLY);
	if (fd < 0)
		return EXIT_ERROR;
	ret = filter_image(fd, name, o.compress, &fi, false);
	close(fd);
	if (ret)
		return EXIT_ERROR;
	if (!strcmp(path, "-"))
		ret = save_stdout(fi.h, fi.hlen, fi.stored, fi.img.stored_len);
	else
		ret = write_private_file(path, fi.h, fi.hlen, fi.stored,
					 fi.img.stored_len);
	if (!ret && strcmp(path, "-"))
		save_report(name, path, &fi.img);
	filter_image_release(&fi);
	return ret ? EXIT_ERROR : 0;
}

struct load_opts {
	bool replace;
	const char *max;
};

static int load_opt(void *ctx, int c, const char *arg)
{
	struct load_opts *o = ctx;

	if (c == OPT_REPLACE) {
		o->replace = true;
		return 0;
	}
	return max_payload_opt(&o->max, c, arg);
}

static void load_report(const char *name, const struct img_reader *rd,
			bool replace, uint64_t rotated)
{
	const struct image *img = &rd->img;
	bool counting = img->flags & KBLOOM_CREATE_COUNTING;

	if (!jw) {
		if (img->generations)
			printf("%s '%s' from %s: %u generations of %" PRIu64 " %s, %u hashes each, window %u ms%s\n",
			       replace ? "replaced" : "loaded", name, rd->file,
			       img->generations, img->bits,
			       counting ? "counters" : "bits", img->hashes,
			       img->window_ms,
			       rotated ? ", rotated for the time since the save" : "");
		else
			printf("%s '%s' from %s: %" PRIu64 " %s, %u hashes\n",
			       replace ? "replaced" : "loaded", name,
			       rd->file, img->bits,
			       counting ? "counters" : "bits", img->hashes);
		return;
	}
	jw_start_object(jw);
	jw_kv_string(jw, "loaded", name);
	jw_kv_string(jw, "file", rd->file);
	jw_kv_bool(jw, "replaced", replace);
	jw_kv_u64(jw, "generations", img->generations);
	jw_kv_u64(jw, "window_ms", img->window_ms);
	jw_kv_u64(jw, "rotations", rotated);
	jw_kv_u64(jw, "bits", img->bits);
	jw_kv_u64(jw, "hashes", img->hashes);
	jw_kv_bool(jw, "counting", counting);
	jw_kv_u64(jw, "hash_scheme", img->hash_scheme);
	jw_kv_string(jw, "hash_scheme_name",
		     hash_scheme_name(img->hash_scheme));
	jw_end_object(jw);
}

/**
 * read_image_file() - read and check an image completely, for a load
 * @path: the file, - for stdin.
 * @max: --max-payload, or NULL.
 * @rd: out: the reader with the payload; release with img_reader_release().
 *
 * Return: 0, or -1 with the problem reported, naming the file.
 */
int read_image_file(const char *path, const char *max, struct img_reader *rd)
{
	memset(rd, 0, sizeof(*rd));
	rd->keep_payload = true;
	if (payload_limit(max, true, rd) || read_image(path, rd)) {
		img_reader_release(rd);
		return -1;
	}
	return 0;
}

/**
 * load_image() - load a read and checked image into a filter
 * @fd: the device, open read-write.
 * @name: the filter to create, or with @replace whose contents to swap.
 * @rd: the image, from read_image_file(); a windowed image's payload is
 *	rotated here for the time since it was saved.
 * @replace: KBLOOM_IMPORT_REPLACE.
 *
 * Errors are reported, naming the filter and the file; on success, what
 * was loaded.
 *
 * Return: 0 or -1.
 */
int load_image(int fd, const char *name, struct img_reader *rd, bool replace)
{
	uint64_t features, rotated;
	uint32_t age_ms;

	if (check_image_module(fd, &rd->img, rd->file, &features))
		return -1;
	rotated = image_downtime(rd, features & KBLOOM_FEATURE_WINDOW_AGE,
				 &age_ms);
	if (import_image(fd, name, rd, replace, 0, age_ms))
		return -1;
	load_report(name, rd, replace, rotated);
	return 0;
}

int cmd_load(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "replace",	no_argument,	NULL, OPT_REPLACE },
		IMAGE_LONGOPTS,
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	struct load_opts o = { .replace = false };
	struct img_reader rd;
	const char *name, *path;
	int ret, fd;

	ret = parse_options(cmd, argc, argv, longopts, load_opt, &o);
	if (ret >= 0)
		return ret;
	if (get_two_args(cmd, argc, argv, "NAME and FILE", &name, &path) ||
	    check_name(name))
		return EXIT_ERROR;
	/* The whole file is checked before the device is even opened. */
	if (read_image_file(path, o.max, &rd))
		return EXIT_ERROR;
	ret = EXIT_ERROR;
	fd = open_device(O_RDWR);
	if (fd >= 0) {
		if (!load_image(fd, name, &rd, o.replace))
			ret = 0;
		close(fd);
	}
	img_reader_release(&rd);
	return ret;
}
