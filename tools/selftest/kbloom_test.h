/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbloom_selftest on the kernel's kselftest harness: the harness itself,
 * and the checks kbloom_selftest words its assertions with, on top of
 * kbloom_util.h (tools/include), which holds the ioctl wrappers, sysfs
 * access, clocks and key sets the stress tools share.
 *
 * Every function is static __maybe_unused: kbloom_selftest_stress uses
 * only a part of it, and an unused helper must not break a -Werror build.
 */
#ifndef KBLOOM_TEST_H
#define KBLOOM_TEST_H

#include "../include/kbloom_util.h"

#include <grp.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>

/*
 * The 6.1 harness's SIGALRM handler ignores its third parameter: the only
 * warning -Wextra has about it. Everything after it is checked in full.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

/*
 * A "# " line on stdout, flushed: a test child leaves by _exit(), which
 * would drop what stdio still buffers when stdout is a pipe.
 */
#define NOTE(fmt, ...) do {					\
	ksft_print_msg(fmt "\n", ##__VA_ARGS__);		\
	fflush(stdout);						\
} while (0)

/* ------------------------------------------------------------------ */
/* Checks                                                             */
/* ------------------------------------------------------------------ */

/*
 * kbloom_selftest's checks: each is an EXPECT_*() of the harness whose
 * failure logs what was checked and why it failed, and each evaluates to
 * whether it held, so that a case can leave out what depends on a failed
 * step without giving up the rest of the case (an ASSERT_*() would).
 * @fmt describes the check; its arguments are evaluated only on failure.
 */

/* @cond holds; @detail (evaluated right after @cond) says why not. */
#define EXPECT_COND(cond, detail, fmt, ...) ({				\
	bool __kb_ok = (cond);						\
	const char *__kb_why = __kb_ok ? "" : (detail);			\
									\
	EXPECT_TRUE(__kb_ok)						\
		TH_LOG(fmt ": %s", ##__VA_ARGS__, __kb_why);		\
	__kb_ok;							\
})

/* @err, from one of the wrappers below, is 0. */
#define EXPECT_OK(err, fmt, ...) ({					\
	int __kb_err = (err);						\
	char __kb_et[96];						\
									\
	EXPECT_EQ(0, __kb_err)						\
		TH_LOG(fmt ": failed with %s", ##__VA_ARGS__,		\
		       errtext(__kb_err, __kb_et, sizeof(__kb_et)));	\
	__kb_err == 0;							\
})

/* @err is @want or @want2. */
#define EXPECT_ERRNO2(err, want, want2, fmt, ...) ({			\
	int __kb_err = (err), __kb_w1 = (want), __kb_w2 = (want2);	\
	bool __kb_ok = __kb_err == __kb_w1 ||				\
		       (__kb_w2 && __kb_err == __kb_w2);		\
	char __kb_et[96];						\
									\
	EXPECT_TRUE(__kb_ok)						\
		TH_LOG(fmt ": expected %s%s%s, got %s", ##__VA_ARGS__,	\
		       errname(__kb_w1), __kb_w2 ? " or " : "",		\
		       __kb_w2 ? errname(__kb_w2) : "",			\
		       errtext(__kb_err, __kb_et, sizeof(__kb_et)));	\
	__kb_ok;							\
})

/* @err is the errno @want. */
#define EXPECT_ERRNO(err, want, fmt, ...) \
	EXPECT_ERRNO2(err, want, 0, fmt, ##__VA_ARGS__)

/* @got == @want, as unsigned 64-bit numbers. */
#define EXPECT_U64(got, want, fmt, ...) ({				\
	u64 __kb_got = (got), __kb_want = (want);			\
									\
	EXPECT_EQ(__kb_want, __kb_got)					\
		TH_LOG(fmt, ##__VA_ARGS__);				\
	__kb_got == __kb_want;						\
})

/* @lo <= @got <= @hi. */
#define EXPECT_RANGE(got, lo, hi, fmt, ...) ({				\
	u64 __kb_got = (got), __kb_lo = (lo), __kb_hi = (hi);		\
	bool __kb_ok = __kb_got >= __kb_lo && __kb_got <= __kb_hi;	\
									\
	EXPECT_TRUE(__kb_ok)						\
		TH_LOG(fmt ": got %llu, want %llu..%llu", ##__VA_ARGS__,\
		       (unsigned long long)__kb_got,			\
		       (unsigned long long)__kb_lo,			\
		       (unsigned long long)__kb_hi);			\
	__kb_ok;							\
})

#endif /* KBLOOM_TEST_H */
