/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The commands of one filter's contents: the key commands, one key and
 * batches, and (from kbloom_ioc_blocks.c) the block commands.
 */
#ifndef _KBLOOM_IOC_KEYS_H
#define _KBLOOM_IOC_KEYS_H

#include <linux/types.h>

struct file;
struct kbloom_filter;

long kbloom_key_ioctl(struct file *file, unsigned int cmd,
		      void __user *argp, struct kbloom_filter *bound);

#endif /* _KBLOOM_IOC_KEYS_H */
