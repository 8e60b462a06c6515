/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The misc device /dev/bloom and its ioctls.
 */
#ifndef _KBLOOM_DEV_H
#define _KBLOOM_DEV_H

int kbloom_dev_init(void);
void kbloom_dev_uninit(void);

#endif /* _KBLOOM_DEV_H */
