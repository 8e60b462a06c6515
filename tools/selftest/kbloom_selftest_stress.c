// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest_stress - the stress area of kbloom_selftest alone, for
 * the run under the kernel's data race detector (tools/vm/tests.d/
 * kcsan.sh): the 6.1 harness takes no options to pick cases, so a program
 * of its own is how to run only these. See kbloom_selftest.c.
 */
#include "kbloom_st.h"

#include "kbloom_st_stress.c"

TEST_HARNESS_MAIN
