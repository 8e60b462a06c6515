/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Changes as blocks: KBLOOM_IOC_COLLECT and KBLOOM_IOC_APPLY.
 */
#ifndef _KBLOOM_IOC_BLOCKS_H
#define _KBLOOM_IOC_BLOCKS_H

#include <linux/types.h>

struct file;
struct kbloom_filter;

long kbloom_ioc_blocks(struct file *file, void __user *argp, bool collect,
		       struct kbloom_filter *bound);

#endif /* _KBLOOM_IOC_BLOCKS_H */
