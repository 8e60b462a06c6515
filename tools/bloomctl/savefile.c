// SPDX-License-Identifier: GPL-2.0
/*
 * Writing a file of secrets (an image carries the filter's seed) into a
 * directory others may write to, atomically and without ever using a name
 * someone could have prepared.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bloomctl.h"

int write_full(int fd, const void *buf, uint64_t len)
{
	const unsigned char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len < (1U << 30) ? len : (1U << 30));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * Saving safely. The image carries the filter's secret seed, and the
 * directory it goes to may be writable by others (/tmp, a shared spool).
 * So the file is never reachable by a name before it is complete and
 * 0600: it is written as an unnamed O_TMPFILE in the destination's
 * directory, linked to a random name (linkat() fails rather than follow or
 * replace anything there), and renamed over the destination, which is
 * atomic and replaces a directory entry without following it. Where
 * O_TMPFILE is missing, the random name is created O_EXCL | O_NOFOLLOW
 * instead. No predictable name is ever opened: a file, FIFO or symlink
 * planted at FILE.tmp is irrelevant.
 */
struct save_target {
	const char *path;	/* as given, for messages */
	char *dir;		/* its directory */
	const char *base;	/* its last component, inside @path */
	int dirfd;
	char tmp[64];		/* the random name, once it exists */
	bool tmp_exists;
	mode_t mode;		/* of the file, once complete */
};

#define SAVE_TMP_TRIES	16

static int save_target_open(struct save_target *t, const char *path)
{
	const char *slash = strrchr(path, '/');

	memset(t, 0, sizeof(*t));
	t->path = path;
	t->dirfd = -1;
	t->base = slash ? slash + 1 : path;
	if (!*t->base || !strcmp(t->base, ".") || !strcmp(t->base, "..")) {
		pr_err("%s: not a file name", path);
		return -1;
	}
	if (!slash)
		t->dir = strdup(".");
	else if (slash == path)
		t->dir = strdup("/");
	else
		t->dir = strndup(path, slash - path);
	if (!t->dir) {
		pr_err("%s", strerror(ENOMEM));
		return -1;
	}
	t->dirfd = open(t->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->dirfd < 0) {
		pr_err("%s: directory %s: %s", path, t->dir, strerror(errno));
		return -1;
	}
	return 0;
}

static void save_target_close(struct save_target *t)
{
	if (t->tmp_exists)
		unlinkat(t->dirfd, t->tmp, 0);
	if (t->dirfd >= 0)
		close(t->dirfd);
	free(t->dir);
}

/*
 * The destination may be replaced only if it is absent, or a regular file
 * of ours: never through or over a symlink (its target is untouched), nor
 * a device, FIFO or directory, nor another user's file. rename() would not
 * follow a symlink that appears after this check, so the check is advice
 * to the user, not what keeps the target safe.
 */
static int save_target_check(const struct save_target *t)
{
	struct stat st;

	if (fstatat(t->dirfd, t->base, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return 0;
		pr_err("%s: %s", t->path, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		pr_err("%s: is a symbolic link: refusing to write through or replace it (remove it, or save to its target's path)",
		       t->path);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		pr_err("%s: exists and is not a regular file: refusing to replace it",
		       t->path);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		pr_err("%s: belongs to uid %u, not to uid %u: refusing to replace it",
		       t->path, (unsigned int)st.st_uid,
		       (unsigned int)geteuid());
		return -1;
	}
	return 0;
}

/*
 * A fresh random name. Unguessable so that nobody can squat it, but
 * safety does not depend on that: the name is only ever created
 * exclusively (linkat(), O_EXCL), and a taken one is simply retried.
 */
static void save_tmp_name(struct save_target *t)
{
	unsigned long long r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (unsigned long long)time(NULL) << 32 ^ getpid() ^
		    (uintptr_t)&r;
	snprintf(t->tmp, sizeof(t->tmp), ".bloomctl-save.%016llx", r);
}

/*
 * Give the unnamed file @fd a random name. Through /proc/self/fd, which
 * any user may do; else AT_EMPTY_PATH (needs CAP_DAC_READ_SEARCH on older
 * kernels). Returns 0, -1 on an error, or 1 if neither way is available.
 */
static int save_link_tmpfile(struct save_target *t, int fd)
{
	char proc[64];
	int i, err;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (i = 0; i < SAVE_TMP_TRIES; i++) {
		save_tmp_name(t);
		if (!linkat(AT_FDCWD, proc, t->dirfd, t->tmp,
			    AT_SYMLINK_FOLLOW))
			goto linked;
		err = errno;
		if (err == ENOENT &&
		    !linkat(fd, "", t->dirfd, t->tmp, AT_EMPTY_PATH))
			goto linked;
		if (err == ENOENT && (errno == ENOENT || errno == EPERM))
			return 1;
		if (err != EEXIST)
			break;
	}
	pr_err("%s: cannot link a new file in %s: %s", t->path, t->dir,
	       strerror(err));
	return -1;
linked:
	t->tmp_exists = true;
	return 0;
}

/* The fallback: a random name created exclusively, never followed. */
static int save_create_named(struct save_target *t)
{
	int i, fd;

	for (i = 0; i < SAVE_TMP_TRIES; i++) {
		save_tmp_name(t);
		fd = openat(t->dirfd, t->tmp, O_WRONLY | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			t->tmp_exists = true;
			return fd;
		}
		if (errno != EEXIST)
			break;
	}
	pr_err("%s: cannot create a file in %s: %s", t->path, t->dir,
	       strerror(errno));
	return -1;
}

/*
 * Write the image to @fd, make it exactly @t->mode (the umask may have
 * taken more; until then it is 0600), check it is the regular file of ours
 * it should be, and sync it.
 */
static int save_fill(const struct save_target *t, int fd, const void *h,
		     size_t hlen, const void *body, uint64_t blen)
{
	struct stat st;

	if (fchmod(fd, 0600) || write_full(fd, h, hlen) ||
	    write_full(fd, body, blen) || fstat(fd, &st)) {
		pr_err("%s: %s", t->path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		pr_err("%s: the new file is not a regular file of uid %u",
		       t->path, (unsigned int)geteuid());
		return -1;
	}
	if ((t->mode != 0600 && fchmod(fd, t->mode)) || fsync(fd)) {
		pr_err("%s: %s", t->path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The complete file under its random name: from O_TMPFILE if the file
 * system has it, else created by name. Returns 0 or -1.
 */
static int save_write_tmp(struct save_target *t, const void *h, size_t hlen,
			  const void *body, uint64_t blen)
{
	bool named = false;
	int fd, ret;

	fd = openat(t->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0 && errno != EOPNOTSUPP && errno != EISDIR &&
	    errno != EINVAL) {
		pr_err("%s: cannot create a file in %s: %s", t->path, t->dir,
		       strerror(errno));
		return -1;
	}
	if (fd < 0) {
		named = true;
		fd = save_create_named(t);
		if (fd < 0)
			return -1;
	}
	ret = save_fill(t, fd, h, hlen, body, blen);
	if (!ret && !named) {
		ret = save_link_tmpfile(t, fd);
		/* No way to name an unnamed file here: write a named one. */
		if (ret == 1) {
			close(fd);
			fd = save_create_named(t);
			if (fd < 0)
				return -1;
			ret = save_fill(t, fd, h, hlen, body, blen);
		}
	}
	if (close(fd) && !ret) {
		pr_err("%s: %s", t->path, strerror(errno));
		ret = -1;
	}
	return ret;
}

/**
 * write_private_file() - replace @path with a new file of mode 0600
 * @path: the destination.
 * @h: its first bytes (a header).
 * @hlen: their length.
 * @body: the bytes after them.
 * @blen: their length.
 *
 * Readers see the old file or the whole new one, never part of it; nobody
 * else ever sees the new one before it is complete and 0600. Errors are
 * reported, naming @path, and leave no file behind.
 *
 * Return: 0 or -1.
 */
int write_private_file(const char *path, const void *h, size_t hlen,
		       const void *body, uint64_t blen)
{
	return write_file_atomic(path, 0600, h, hlen, body, blen);
}

/*
 * write_file_atomic() - write_private_file(), for a file of mode @mode:
 * 0644 for what others are meant to read (metrics), which they see only
 * once it is complete.
 */
int write_file_atomic(const char *path, mode_t mode, const void *h,
		      size_t hlen, const void *body, uint64_t blen)
{
	struct save_target t;
	int ret = -1;

	if (save_target_open(&t, path))
		goto out;
	t.mode = mode;
	if (save_target_check(&t) ||
	    save_write_tmp(&t, h, hlen, body, blen))
		goto out;
	if (renameat(t.dirfd, t.tmp, t.dirfd, t.base)) {
		pr_err("%s: cannot rename the new file over it: %s", path,
		       strerror(errno));
		goto out;
	}
	t.tmp_exists = false;
	/* Make the rename durable. */
	fsync(t.dirfd);
	ret = 0;
out:
	save_target_close(&t);
	return ret;
}
