/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The commands on the set of filters and on whole filters: CREATE,
 * DESTROY, CLEAR, ROTATE, INFO, LIST, MERGE and COMPARE.
 */
#ifndef _KBLOOM_IOC_FILTERS_H
#define _KBLOOM_IOC_FILTERS_H

#include <linux/types.h>

struct file;

long kbloom_ioc_create(struct file *file, void __user *argp);
long kbloom_ioc_destroy(struct file *file, void __user *argp);
long kbloom_ioc_clear(struct file *file, void __user *argp);
long kbloom_ioc_rotate(struct file *file, void __user *argp);
long kbloom_ioc_info(void __user *argp);
long kbloom_ioc_list(void __user *argp);
long kbloom_ioc_merge(struct file *file, void __user *argp, bool compare);

#endif /* _KBLOOM_IOC_FILTERS_H */
