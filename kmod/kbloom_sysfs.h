/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /sys/kernel/bloom: global figures and one directory per filter, one value
 * per file. Documented in Documentation/ABI/testing/sysfs-kernel-bloom.
 */
#ifndef _KBLOOM_SYSFS_H
#define _KBLOOM_SYSFS_H

int kbloom_sysfs_init(void);
void kbloom_sysfs_uninit(void);

#endif /* _KBLOOM_SYSFS_H */
