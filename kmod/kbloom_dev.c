// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/bloom: the ioctl interface (include/uapi/linux/kbloom.h).
 *
 * This file is the device, its handles (KBLOOM_IOC_OPEN) and the dispatch
 * of the commands, which are in a file per family, each calling only
 * what is below it (the filters, kbloom_filter.h, and kbloom_ioc.h, what
 * the commands share): kbloom_ioc_filters.c (the set of filters and whole
 * filters), kbloom_ioc_keys.c (keys and batches), kbloom_ioc_blocks.c
 * (blocks, which the key commands' dispatch reaches) and
 * kbloom_ioc_image.c (images).
 *
 * Every argument structure is copied in exactly once, checked whole
 * (reserved fields, flags, names) before anything happens, and worked on
 * from the kernel copy, so userspace cannot change it under us. Batched
 * calls stream keys through a bounded kernel buffer in chunks, yielding
 * between chunks, so one call with a million keys neither pins a huge
 * allocation nor holds the CPU.
 *
 * A write to userspace that can fail comes before the change it reports,
 * never after: a command that changes a filter first proves it can write
 * its answer (writing zeroes or the unchanged argument back), and a batch
 * counts a chunk in @done before it writes the chunk's results. So an
 * -EFAULT means "nothing happened" or "exactly @done keys happened", and
 * retrying never applies a key twice.
 */

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "kbloom_dev.h"
#include "kbloom_filter.h"
#include "kbloom_ioc.h"
#include "kbloom_ioc_filters.h"
#include "kbloom_ioc_image.h"
#include "kbloom_ioc_keys.h"
#include "kbloom_params.h"

static long kbloom_ioc_version(void __user *argp)
{
	struct kbloom_version v = {
		.api_version = KBLOOM_API_VERSION,
		.hash_scheme = KBLOOM_HASH_JHASH,
		.default_hash_scheme = KBLOOM_HASH_DEFAULT,
		.max_generations = KBLOOM_MAX_GENERATIONS,
		.features = KBLOOM_FEATURE_BATCH | KBLOOM_FEATURE_TEST_AND_ADD |
			    KBLOOM_FEATURE_SIZING | KBLOOM_FEATURE_COUNTING |
			    KBLOOM_FEATURE_MERGE | KBLOOM_FEATURE_IMAGE |
			    KBLOOM_FEATURE_SIPHASH | KBLOOM_FEATURE_WINDOW |
			    KBLOOM_FEATURE_HANDLE | KBLOOM_FEATURE_BLOCKED |
			    KBLOOM_FEATURE_BPF_ACCESS |
			    KBLOOM_FEATURE_WINDOW_AGE | KBLOOM_FEATURE_CHANGES,
		.min_bits = KBLOOM_MIN_BITS,
		.max_bits = KBLOOM_MAX_BITS,
		.max_hashes = KBLOOM_MAX_HASHES,
		.max_key_len = KBLOOM_KEY_MAX,
		.max_batch = KBLOOM_BATCH_MAX,
		.name_max = KBLOOM_NAME_MAX,
	};

	return copy_to_user(argp, &v, sizeof(v)) ? -EFAULT : 0;
}

/* A handle: the commands of one filter, on the filter the file holds. */
static long kbloom_handle_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	long ret = kbloom_key_ioctl(file, cmd, (void __user *)arg,
				    file->private_data);

	return ret == -ENOIOCTLCMD ? -ENOTTY : ret;
}

static int kbloom_handle_release(struct inode *inode, struct file *file)
{
	kbloom_filter_put(file->private_data);
	return 0;
}

/*
 * /proc/PID/fdinfo/FD of a handle: which filter it holds, and whether that
 * filter has been destroyed (its memory is then held until the close), so
 * that an administrator can find who keeps it.
 */
static void kbloom_handle_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct kbloom_filter *filter = file->private_data;

	seq_printf(m, "kbloom-filter:\t%s\n", filter->name);
	seq_printf(m, "kbloom-destroyed:\t%d\n", READ_ONCE(filter->dead));
}

static const struct file_operations kbloom_handle_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = kbloom_handle_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.release = kbloom_handle_release,
	.show_fdinfo = kbloom_handle_show_fdinfo,
	.llseek = noop_llseek,
};

/*
 * KBLOOM_IOC_OPEN: a new fd bound to a filter. The fd is reserved and
 * written back before the file is installed, so a failed write leaves no
 * descriptor behind.
 */
static long kbloom_ioc_open(struct file *file, void __user *argp)
{
	struct kbloom_open __user *uo = argp;
	struct kbloom_filter *filter;
	struct kbloom_open o;
	struct file *handle;
	int fd, ret;

	if (copy_from_user(&o, argp, sizeof(o)))
		return -EFAULT;
	if (o.flags || !kbloom_zeroed(o.reserved, sizeof(o.reserved)) ||
	    !kbloom_name_valid(o.name))
		return -EINVAL;
	filter = kbloom_filter_get(o.name);
	if (!filter)
		return -ENOENT;
	/* Destroyed since the lookup: a handle could only fail and hold it. */
	if (READ_ONCE(filter->dead)) {
		ret = -ENOENT;
		goto err_put_filter;
	}
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto err_put_filter;
	}
	/* The file owns the filter reference from here on. */
	handle = anon_inode_getfile("[kbloom]", &kbloom_handle_fops, filter,
				    file->f_mode & FMODE_WRITE ? O_RDWR :
								 O_RDONLY);
	if (IS_ERR(handle)) {
		ret = PTR_ERR(handle);
		goto err_put_fd;
	}
	if (put_user(fd, &uo->fd)) {
		fput(handle);
		put_unused_fd(fd);
		return -EFAULT;
	}
	fd_install(fd, handle);
	return 0;

err_put_fd:
	put_unused_fd(fd);
err_put_filter:
	kbloom_filter_put(filter);
	return ret;
}

static long kbloom_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	void __user *argp = (void __user *)arg;
	long ret;

	switch (cmd) {
	case KBLOOM_IOC_VERSION:
		return kbloom_ioc_version(argp);
	case KBLOOM_IOC_CREATE:
		return kbloom_ioc_create(file, argp);
	case KBLOOM_IOC_ROTATE:
		return kbloom_ioc_rotate(file, argp);
	case KBLOOM_IOC_OPEN:
		return kbloom_ioc_open(file, argp);
	case KBLOOM_IOC_DESTROY:
		return kbloom_ioc_destroy(file, argp);
	case KBLOOM_IOC_CLEAR:
		return kbloom_ioc_clear(file, argp);
	case KBLOOM_IOC_INFO:
		return kbloom_ioc_info(argp);
	case KBLOOM_IOC_LIST:
		return kbloom_ioc_list(argp);
	case KBLOOM_IOC_MERGE:
		return kbloom_ioc_merge(file, argp, false);
	case KBLOOM_IOC_COMPARE:
		return kbloom_ioc_merge(file, argp, true);
	case KBLOOM_IOC_EXPORT:
		return kbloom_ioc_export(argp);
	case KBLOOM_IOC_IMPORT:
		return kbloom_ioc_import(file, argp);
	default:
		ret = kbloom_key_ioctl(file, cmd, argp, NULL);
		return ret == -ENOIOCTLCMD ? -ENOTTY : ret;
	}
}

static const struct file_operations kbloom_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = kbloom_ioctl,
	/* Every structure has the same layout for 32-bit callers. */
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/*
 * Root only by default. To let a group query (read-only fd) or add
 * (read-write fd), relax the node with a udev rule, e.g.
 * KERNEL=="bloom", GROUP="bloom", MODE="0660"; creating, destroying and
 * clearing still require CAP_SYS_ADMIN.
 */
static struct miscdevice kbloom_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "bloom",
	.fops = &kbloom_fops,
	.mode = 0600,
};

int kbloom_dev_init(void)
{
	return misc_register(&kbloom_misc);
}

void kbloom_dev_uninit(void)
{
	misc_deregister(&kbloom_misc);
}
