/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The KUnit suites of kbloom (selftest/kbloom_test.c), compiled into the
 * module only when the kernel has KUnit, and run at load with kunit=1.
 */
#ifndef _KBLOOM_KUNIT_H
#define _KBLOOM_KUNIT_H

#if IS_ENABLED(CONFIG_KUNIT)
void kbloom_kunit_run(void);
void kbloom_kunit_exit(void);
#else
static inline void kbloom_kunit_run(void)
{
}

static inline void kbloom_kunit_exit(void)
{
}
#endif

#endif /* _KBLOOM_KUNIT_H */
