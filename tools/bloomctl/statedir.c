// SPDX-License-Identifier: GPL-2.0
/*
 * The state directory: every filter saved to one directory, one image per
 * filter (DIR/NAME.kbloom), and restored from it at boot, the way
 * netfilter-persistent keeps rules and ipset-persistent keeps sets.
 *
 * save --all rewrites only the images whose filter changed, each
 * atomically (write_private_file(): the old image or the new, never a
 * part), and removes the images of filters that were destroyed, so that
 * they do not come back at the next boot. A filter that could not be
 * saved keeps its previous image. restore loads every image, leaves a
 * filter that already exists alone unless told --replace, and goes on
 * past an image it cannot load, reporting it.
 *
 * "Destroyed" is what the directory itself can tell: a filter that the
 * last save found in this same module instance (DIR/.kbloom-state names
 * the instance and the filters it saved) and that is gone now. An image
 * the module never held since it was loaded (one that failed to restore,
 * or every image after the module was reloaded) is never removed. Saves
 * and restores of one directory take turns (flock).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bloomctl.h"

#define STATE_FILE	".kbloom-state"
#define IMAGE_SUFFIX	".kbloom"
#define SUFFIX_LEN	(sizeof(IMAGE_SUFFIX) - 1)
/*
 * Two saves of a windowed filter nobody touched differ in when they say
 * its newest generation began by the jiffy rounding of its age: within
 * this, the image on disk is as good as the new one.
 */
#define START_SLACK_MS	10

/* The filter name in "NAME.kbloom", or NULL if it is no such file name. */
static char *image_stem(const char *file)
{
	size_t len = strlen(file);
	char *name;

	if (len <= SUFFIX_LEN || strcmp(file + len - SUFFIX_LEN, IMAGE_SUFFIX))
		return NULL;
	name = strndup(file, len - SUFFIX_LEN);
	if (!name)
		pr_err("%s", strerror(ENOMEM));
	else if (!name_valid(name))
		name = (free(name), NULL);
	return name;
}

static int cmp_file(int fd, const unsigned char *want, uint64_t len)
{
	unsigned char buf[1 << 16];
	uint64_t off = 0;
	ssize_t n;

	while (off < len) {
		n = read(fd, buf, len - off < sizeof(buf) ? len - off :
							    sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || memcmp(buf, want + off, n))
			return 1;
		off += n;
	}
	return 0;
}

/*
 * Does DIR/@file hold @fi already, byte for byte, CRC included, but for
 * the newest generation's start within START_SLACK_MS (then the file's is
 * the one compared), as a regular 0600 file of ours? Anything unreadable,
 * damaged or open to others is not the same: it is rewritten.
 */
static bool image_unchanged(int dirfd, const char *file,
			    const struct filter_image *fi)
{
	unsigned char h[IMG_HEADER_MAX], want[IMG_HEADER_MAX];
	struct image old, img = fi->img;
	struct stat st;
	int64_t skew;
	bool same;
	int fd;

	fd = openat(dirfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_mode & 07777) != 0600 || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size != fi->hlen + img.stored_len ||
	    read(fd, h, fi->hlen) != (ssize_t)fi->hlen) {
		close(fd);
		return false;
	}
	img_decode_header(h, &old);
	memcpy(want, fi->h, fi->hlen);
	if (img.version == IMG_VERSION_SCHEDULE) {
		skew = (int64_t)(old.newest_start_ms - img.newest_start_ms);
		if (skew > START_SLACK_MS || skew < -START_SLACK_MS) {
			close(fd);
			return false;
		}
		/* The file's start: the header and CRC it would have. */
		img.newest_start_ms = old.newest_start_ms;
		img.crc = 0;
		img_encode_header(want, &img);
		img.crc = crc32c(crc32c(0, want, fi->hlen), fi->stored,
				 img.stored_len);
		img_encode_header(want, &img);
	}
	same = !memcmp(h, want, fi->hlen) &&
	       !cmp_file(fd, fi->stored, img.stored_len);
	close(fd);
	return same;
}

struct save_run {
	const char *dir;
	int dirfd;
	char *names;		/* LIST's, KBLOOM_NAME_MAX each */
	uint32_t count;
	bool *keep;		/* names[i]'s image stays (saved, or failed) */
	uint32_t saved, unchanged, removed, failed;
	char instance[128];	/* this module's, "" if unknown */
	char *last;		/* DIR/.kbloom-state as read, or NULL */
};

/*
 * This module instance: the boot, and the device node, which a module
 * load makes anew. "" if either cannot be read: then nothing is pruned.
 */
static void module_instance(char *buf, size_t len)
{
	char boot[64] = "";
	struct stat st;
	FILE *f;

	buf[0] = '\0';
	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (!f)
		return;
	if (!fgets(boot, sizeof(boot), f))
		boot[0] = '\0';
	fclose(f);
	boot[strcspn(boot, "\n")] = '\0';
	if (!boot[0] || stat(device_path, &st))
		return;
	snprintf(buf, len, "%s:%llu:%lld.%09ld", boot,
		 (unsigned long long)st.st_ino, (long long)st.st_ctim.tv_sec,
		 st.st_ctim.tv_nsec);
}

/* DIR/.kbloom-state: "instance ID", then "filter NAME" a line. */
static char *read_state(int dirfd)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = NULL;
	int fd;

	fd = openat(dirfd, STATE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		f = fdopen(fd, "r");
	if (!f) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Did the last save, in this module instance, find filter @name? */
static bool saved_last_time(const struct save_run *run, const char *name)
{
	char want[KBLOOM_NAME_MAX + 16];
	size_t ilen = strlen(run->instance);
	const char *p;

	if (!run->last || !ilen || strncmp(run->last, "instance ", 9) ||
	    strncmp(run->last + 9, run->instance, ilen) ||
	    run->last[9 + ilen] != '\n')
		return false;
	snprintf(want, sizeof(want), "\nfilter %s\n", name);
	p = strstr(run->last, want);
	return p != NULL;
}

static int write_state(struct save_run *run)
{
	char *buf = NULL, *path;
	size_t len = 0;
	uint32_t i;
	FILE *f;
	int ret;

	if (!run->instance[0])
		return 0;
	f = open_memstream(&buf, &len);
	if (!f) {
		pr_err("%s", strerror(errno));
		return -1;
	}
	fprintf(f, "instance %s\n", run->instance);
	for (i = 0; i < run->count; i++)
		if (run->keep[i])
			fprintf(f, "filter %.*s\n", KBLOOM_NAME_MAX,
				run->names + (size_t)i * KBLOOM_NAME_MAX);
	if (fclose(f)) {
		pr_err("%s", strerror(errno));
		free(buf);
		return -1;
	}
	if (asprintf(&path, "%s/" STATE_FILE, run->dir) < 0) {
		pr_err("%s", strerror(ENOMEM));
		free(buf);
		return -1;
	}
	ret = write_private_file(path, buf, len, NULL, 0);
	free(path);
	free(buf);
	return ret;
}

static void save_note(const char *what, const char *name)
{
	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, "filter", name);
		jw_kv_string(jw, "action", what);
		jw_end_object(jw);
	}
}

/* One filter: its image, unless the one there is the same. */
static void save_one(struct save_run *run, int fd, const char *name,
		     bool compress, uint32_t i)
{
	struct filter_image fi;
	char file[KBLOOM_NAME_MAX + SUFFIX_LEN], *path;
	int ret;

	ret = filter_image(fd, name, compress, &fi, true);
	if (ret == -ENOENT)		/* destroyed since the list */
		return;
	run->keep[i] = true;
	if (ret) {
		run->failed++;
		save_note("failed", name);
		return;
	}
	snprintf(file, sizeof(file), "%s" IMAGE_SUFFIX, name);
	if (image_unchanged(run->dirfd, file, &fi)) {
		run->unchanged++;
		save_note("unchanged", name);
	} else if (asprintf(&path, "%s/%s", run->dir, file) < 0) {
		pr_err("%s", strerror(ENOMEM));
		run->failed++;
		save_note("failed", name);
	} else {
		ret = write_private_file(path, fi.h, fi.hlen, fi.stored,
					 fi.img.stored_len);
		free(path);
		if (ret) {
			run->failed++;
			save_note("failed", name);
		} else {
			run->saved++;
			save_note("saved", name);
		}
	}
	filter_image_release(&fi);
}

static bool listed(const struct save_run *run, const char *name)
{
	uint32_t i;

	for (i = 0; i < run->count; i++)
		if (run->keep[i] &&
		    !strncmp(run->names + (size_t)i * KBLOOM_NAME_MAX, name,
			     KBLOOM_NAME_MAX))
			return true;
	return false;
}

/*
 * The images of filters that are gone since the last save of this module
 * instance: only NAME.kbloom regular files of ours, never through a
 * symlink.
 */
static void save_prune(struct save_run *run)
{
	struct dirent *de;
	struct stat st;
	char *name;
	DIR *d;
	int fd;

	fd = openat(run->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		pr_err("%s: %s", run->dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		run->failed++;
		return;
	}
	while ((de = readdir(d))) {
		name = image_stem(de->d_name);
		if (!name)
			continue;
		if (!listed(run, name) && saved_last_time(run, name) &&
		    !fstatat(run->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISREG(st.st_mode) && st.st_uid == geteuid()) {
			if (unlinkat(run->dirfd, de->d_name, 0)) {
				pr_err("%s/%s: %s", run->dir, de->d_name,
				       strerror(errno));
				run->failed++;
			} else {
				run->removed++;
				save_note("removed", name);
			}
		}
		free(name);
	}
	closedir(d);
}

/* DIR, made 0700 if it does not exist: the images hold the seeds. */
static int open_state_dir(const char *dir, bool create)
{
	int fd;

	if (create && mkdir(dir, 0700) && errno != EEXIST) {
		pr_err("%s: %s", dir, strerror(errno));
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		pr_err("%s: %s", dir, strerror(errno));
	return fd;
}

/**
 * save_all() - save every filter to @dir, as bloomctl save --all
 * @dir: the state directory.
 * @compress: deflate the payloads.
 *
 * Return: the exit status: 0, or EXIT_ERROR if any filter could not be
 * saved or any stale image not removed (each reported).
 */
int save_all(const char *dir, bool compress)
{
	struct save_run run = { .dir = dir };
	uint32_t i;
	int fd;

	run.dirfd = open_state_dir(dir, true);
	if (run.dirfd < 0)
		return EXIT_ERROR;
	if (flock(run.dirfd, LOCK_EX)) {
		pr_err("%s: %s", dir, strerror(errno));
		close(run.dirfd);
		return EXIT_ERROR;
	}
	module_instance(run.instance, sizeof(run.instance));
	run.last = read_state(run.dirfd);
	fd = open_device(O_RDONLY);
	if (fd < 0 || list_names(fd, &run.names, &run.count)) {
		if (fd >= 0)
			close(fd);
		close(run.dirfd);
		return EXIT_ERROR;
	}
	run.keep = calloc(run.count ? run.count : 1, sizeof(*run.keep));
	if (!run.keep) {
		pr_err("%s", strerror(ENOMEM));
		run.failed++;
	}
	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, "dir", dir);
		jw_key(jw, "filters");
		jw_start_array(jw);
	}
	for (i = 0; run.keep && i < run.count; i++) {
		char name[KBLOOM_NAME_MAX];

		memcpy(name, run.names + (size_t)i * KBLOOM_NAME_MAX,
		       KBLOOM_NAME_MAX);
		name[KBLOOM_NAME_MAX - 1] = '\0';
		save_one(&run, fd, name, compress, i);
	}
	close(fd);
	/*
	 * Nothing is removed on the strength of an incomplete save, nor is
	 * what it found recorded: the next complete one prunes what this
	 * one could not.
	 */
	if (run.keep && !run.failed)
		save_prune(&run);
	if (run.keep && !run.failed && write_state(&run))
		run.failed++;
	if (jw) {
		jw_end_array(jw);
		jw_kv_u64(jw, "saved", run.saved);
		jw_kv_u64(jw, "unchanged", run.unchanged);
		jw_kv_u64(jw, "removed", run.removed);
		jw_kv_u64(jw, "failed", run.failed);
		jw_end_object(jw);
	} else {
		printf("%s: %u saved, %u unchanged, %u removed%s\n", dir,
		       run.saved, run.unchanged, run.removed,
		       run.failed ? ", some failed" : "");
	}
	free(run.keep);
	free(run.names);
	free(run.last);
	close(run.dirfd);
	return run.failed ? EXIT_ERROR : 0;
}

static int restore_opt(void *ctx, int c, const char *arg)
{
	(void)arg;
	if (c != OPT_REPLACE)
		return -1;
	*(bool *)ctx = true;
	return 0;
}

static int image_file_filter(const struct dirent *de)
{
	char *name = image_stem(de->d_name);

	free(name);
	return name != NULL;
}

/*
 * One image: a filter that exists is left alone without --replace; with
 * it, its contents are swapped for the image's.
 */
static int restore_one(int fd, const char *dir, const char *file,
		       bool replace, uint32_t *kept)
{
	struct kbloom_info info;
	struct img_reader rd;
	char *name, *path;
	bool exists;
	int ret = -1, err;

	name = image_stem(file);
	if (!name)
		return -1;
	if (asprintf(&path, "%s/%s", dir, file) < 0) {
		pr_err("%s", strerror(ENOMEM));
		free(name);
		return -1;
	}
	err = get_info(fd, name, &info);
	exists = !err;
	if (err && err != ENOENT) {
		pr_err("filter '%s': %s", name, kerr(err));
	} else if (exists && !replace) {
		(*kept)++;
		if (!jw)
			printf("kept '%s': it exists (restore --replace loads %s over it)\n",
			       name, path);
		ret = 0;
	} else if (!read_image_file(path, NULL, &rd)) {
		ret = load_image(fd, name, &rd, exists);
		img_reader_release(&rd);
	}
	free(path);
	free(name);
	return ret;
}

int cmd_restore(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "replace",	no_argument,	NULL, OPT_REPLACE },
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	uint32_t kept = 0, failed = 0;
	struct dirent **files;
	bool replace = false;
	const char *dir;
	int ret, fd, dirfd, n, i;

	ret = parse_options(cmd, argc, argv, longopts, restore_opt, &replace);
	if (ret >= 0)
		return ret;
	if (get_one_arg(cmd, argc, argv, "directory DIR", &dir))
		return EXIT_ERROR;
	dirfd = open_state_dir(dir, false);
	if (dirfd < 0)
		return EXIT_ERROR;
	/* Not while a save rewrites or prunes it. */
	if (flock(dirfd, LOCK_EX)) {
		pr_err("%s: %s", dir, strerror(errno));
		close(dirfd);
		return EXIT_ERROR;
	}
	n = scandir(dir, &files, image_file_filter, alphasort);
	if (n < 0) {
		pr_err("%s: %s", dir, strerror(errno));
		close(dirfd);
		return EXIT_ERROR;
	}
	fd = n ? open_device(O_RDWR) : -1;
	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, "dir", dir);
		jw_key(jw, "loaded");
		jw_start_array(jw);
	}
	for (i = 0; i < n; i++) {
		if (fd < 0 || restore_one(fd, dir, files[i]->d_name, replace,
					  &kept))
			failed++;
		free(files[i]);
	}
	free(files);
	if (fd >= 0)
		close(fd);
	if (jw) {
		jw_end_array(jw);
		jw_kv_u64(jw, "kept", kept);
		jw_kv_u64(jw, "failed", failed);
		jw_end_object(jw);
	}
	close(dirfd);
	if (failed)
		pr_err("%s: %u of %d images not restored", dir, failed, n);
	return failed ? EXIT_ERROR : 0;
}
