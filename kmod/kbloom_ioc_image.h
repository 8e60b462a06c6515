/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The image commands: EXPORT and IMPORT.
 */
#ifndef _KBLOOM_IOC_IMAGE_H
#define _KBLOOM_IOC_IMAGE_H

#include <linux/types.h>

struct file;

long kbloom_ioc_export(void __user *argp);
long kbloom_ioc_import(struct file *file, void __user *argp);

#endif /* _KBLOOM_IOC_IMAGE_H */
