// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest - integration test for the kbloom module, run as root
 * inside the test VM with kbloom.ko loaded and /dev/bloom present, on the
 * kernel's own kselftest harness (tools/testing/selftests/
 * kselftest_harness.h of the kernel source, not a copy).
 *
 * One file per area (kbloom_st_<area>.c), each included here: the 6.1
 * harness keeps its list of tests static to a translation unit, so the
 * areas must be one unit to be one program. Each area's fixtures open the
 * device and create the filters its cases need; their teardowns destroy
 * them. Every case runs in its own child process.
 *
 * Output is TAP from the harness: the plan "1..N" first, then one
 * "ok N fixture.case" line per case; the exit status is 0 only when every
 * case passed. The same source is built as a 64-bit and as an i386
 * binary: the i386 one goes through compat_ptr_ioctl(), so both must
 * pass. kbloom_selftest_stress (kbloom_selftest_stress.c) is the stress
 * area alone, for the KCSAN run: the 6.1 harness takes no options.
 *
 * Filter names start with the area's name (but for create's "Z"), so that
 * nothing here touches a filter of another area or of another test
 * program.
 */
#include "kbloom_st.h"

/*
 * The ABI promise is that i386 and x86_64 see identical layouts, so that
 * compat_ptr_ioctl() suffices. Pin every size and offset here: both builds
 * compile this, so a layout drift on either breaks the build, not the VM.
 */
#define ASSERT_SIZE(t, n) \
	_Static_assert(sizeof(struct t) == (n), "sizeof(struct " #t ")")
#define ASSERT_OFF(t, f, n) \
	_Static_assert(offsetof(struct t, f) == (n), "offsetof(" #t ", " #f ")")
#define ASSERT_FSIZE(t, f, n) \
	_Static_assert(sizeof(((struct t *)0)->f) == (n), "sizeof(" #t "." #f ")")

ASSERT_SIZE(kbloom_version, 80);
ASSERT_OFF(kbloom_version, api_version, 0);
ASSERT_OFF(kbloom_version, hash_scheme, 4);
ASSERT_OFF(kbloom_version, features, 8);
ASSERT_OFF(kbloom_version, min_bits, 16);
ASSERT_OFF(kbloom_version, max_bits, 24);
ASSERT_OFF(kbloom_version, max_hashes, 32);
ASSERT_OFF(kbloom_version, max_key_len, 36);
ASSERT_OFF(kbloom_version, max_batch, 40);
ASSERT_OFF(kbloom_version, name_max, 44);
ASSERT_OFF(kbloom_version, default_hash_scheme, 48);
ASSERT_OFF(kbloom_version, max_generations, 52);
ASSERT_OFF(kbloom_version, reserved, 56);
ASSERT_FSIZE(kbloom_version, reserved, 24);

ASSERT_SIZE(kbloom_create, 120);
ASSERT_OFF(kbloom_create, name, 0);
ASSERT_FSIZE(kbloom_create, name, KBLOOM_NAME_MAX);
ASSERT_OFF(kbloom_create, bits, 32);
ASSERT_OFF(kbloom_create, hashes, 40);
ASSERT_OFF(kbloom_create, fpr_ppb, 44);
ASSERT_OFF(kbloom_create, capacity, 48);
ASSERT_OFF(kbloom_create, flags, 56);
ASSERT_OFF(kbloom_create, hash_scheme, 60);
ASSERT_OFF(kbloom_create, like, 64);
ASSERT_FSIZE(kbloom_create, like, KBLOOM_NAME_MAX);
ASSERT_OFF(kbloom_create, window_ms, 96);
ASSERT_OFF(kbloom_create, generations, 100);
ASSERT_OFF(kbloom_create, reserved, 104);
ASSERT_FSIZE(kbloom_create, reserved, 16);
/* The argument before windows, still accepted under its own number. */

ASSERT_SIZE(kbloom_open, 56);
ASSERT_OFF(kbloom_open, name, 0);
ASSERT_OFF(kbloom_open, flags, 32);
ASSERT_OFF(kbloom_open, fd, 36);
ASSERT_OFF(kbloom_open, reserved, 40);

ASSERT_SIZE(kbloom_name, 48);
ASSERT_OFF(kbloom_name, name, 0);
ASSERT_OFF(kbloom_name, reserved, 32);
ASSERT_FSIZE(kbloom_name, reserved, 16);

ASSERT_SIZE(kbloom_info, 136);
ASSERT_OFF(kbloom_info, name, 0);
ASSERT_OFF(kbloom_info, bits, 32);
ASSERT_OFF(kbloom_info, hashes, 40);
ASSERT_OFF(kbloom_info, flags, 44);
ASSERT_OFF(kbloom_info, capacity, 48);
ASSERT_OFF(kbloom_info, fpr_ppb, 56);
ASSERT_OFF(kbloom_info, hash_scheme, 60);
ASSERT_OFF(kbloom_info, bits_set, 64);
ASSERT_OFF(kbloom_info, adds, 72);
ASSERT_OFF(kbloom_info, queries, 80);
ASSERT_OFF(kbloom_info, hits, 88);
ASSERT_OFF(kbloom_info, memory_bytes, 96);
ASSERT_OFF(kbloom_info, saturated, 104);
ASSERT_OFF(kbloom_info, window_ms, 112);
ASSERT_OFF(kbloom_info, generations, 116);
ASSERT_OFF(kbloom_info, rotations, 120);
ASSERT_OFF(kbloom_info, newest_age_ms, 128);

ASSERT_SIZE(kbloom_list, 16);
ASSERT_OFF(kbloom_list, names, 0);
ASSERT_OFF(kbloom_list, count, 8);
ASSERT_OFF(kbloom_list, reserved, 12);

ASSERT_SIZE(kbloom_key, 64);
ASSERT_OFF(kbloom_key, name, 0);
ASSERT_OFF(kbloom_key, key, 32);
ASSERT_OFF(kbloom_key, len, 40);
ASSERT_OFF(kbloom_key, result, 44);
ASSERT_OFF(kbloom_key, reserved, 48);
ASSERT_FSIZE(kbloom_key, reserved, 16);

ASSERT_SIZE(kbloom_batch, 96);
ASSERT_OFF(kbloom_batch, name, 0);
ASSERT_OFF(kbloom_batch, keys, 32);
ASSERT_OFF(kbloom_batch, lens, 40);
ASSERT_OFF(kbloom_batch, results, 48);
ASSERT_OFF(kbloom_batch, keys_bytes, 56);
ASSERT_OFF(kbloom_batch, count, 64);
ASSERT_OFF(kbloom_batch, done, 68);
ASSERT_OFF(kbloom_batch, hits, 72);
ASSERT_OFF(kbloom_batch, reserved0, 76);
ASSERT_OFF(kbloom_batch, reserved, 80);
ASSERT_FSIZE(kbloom_batch, reserved, 16);

ASSERT_SIZE(kbloom_merge, 120);
ASSERT_OFF(kbloom_merge, dst, 0);
ASSERT_FSIZE(kbloom_merge, dst, KBLOOM_NAME_MAX);
ASSERT_OFF(kbloom_merge, src, 32);
ASSERT_FSIZE(kbloom_merge, src, KBLOOM_NAME_MAX);
ASSERT_OFF(kbloom_merge, bits_dst, 64);
ASSERT_OFF(kbloom_merge, bits_src, 72);
ASSERT_OFF(kbloom_merge, bits_union, 80);
ASSERT_OFF(kbloom_merge, bits_inter, 88);
ASSERT_OFF(kbloom_merge, mismatch, 96);
ASSERT_OFF(kbloom_merge, reserved0, 100);
ASSERT_OFF(kbloom_merge, reserved, 104);
ASSERT_FSIZE(kbloom_merge, reserved, 16);

ASSERT_SIZE(kbloom_image, 120);
ASSERT_OFF(kbloom_image, name, 0);
ASSERT_FSIZE(kbloom_image, name, KBLOOM_NAME_MAX);
ASSERT_OFF(kbloom_image, bits, 32);
ASSERT_OFF(kbloom_image, hashes, 40);
ASSERT_OFF(kbloom_image, flags, 44);
ASSERT_OFF(kbloom_image, seed, 48);
ASSERT_FSIZE(kbloom_image, seed, 8);
ASSERT_OFF(kbloom_image, adds, 56);
ASSERT_OFF(kbloom_image, capacity, 64);
ASSERT_OFF(kbloom_image, fpr_ppb, 72);
ASSERT_OFF(kbloom_image, hash_scheme, 76);
ASSERT_OFF(kbloom_image, payload, 80);
ASSERT_OFF(kbloom_image, payload_len, 88);
ASSERT_OFF(kbloom_image, import_flags, 96);
ASSERT_OFF(kbloom_image, age_ms, 100);
ASSERT_OFF(kbloom_image, seed_hi, 104);
ASSERT_FSIZE(kbloom_image, seed_hi, 8);
ASSERT_OFF(kbloom_image, generations, 112);
ASSERT_OFF(kbloom_image, window_ms, 116);

ASSERT_SIZE(kbloom_block, 80);
ASSERT_OFF(kbloom_block, index, 0);
ASSERT_OFF(kbloom_block, generation, 8);
ASSERT_OFF(kbloom_block, reserved, 12);
ASSERT_OFF(kbloom_block, data, 16);

ASSERT_SIZE(kbloom_blocks, 120);
ASSERT_OFF(kbloom_blocks, name, 0);
ASSERT_OFF(kbloom_blocks, blocks, 32);
ASSERT_OFF(kbloom_blocks, count, 40);
ASSERT_OFF(kbloom_blocks, done, 44);
ASSERT_OFF(kbloom_blocks, flags, 48);
ASSERT_OFF(kbloom_blocks, reserved0, 52);
ASSERT_OFF(kbloom_blocks, cursor, 56);
ASSERT_OFF(kbloom_blocks, rotations, 64);
ASSERT_OFF(kbloom_blocks, age_ms, 72);
ASSERT_OFF(kbloom_blocks, fingerprint, 80);
ASSERT_OFF(kbloom_blocks, max_set, 88);
ASSERT_OFF(kbloom_blocks, set, 96);
ASSERT_OFF(kbloom_blocks, reserved, 104);

/* The command numbers themselves are ABI: the same on both builds. */
_Static_assert(KBLOOM_IOC_VERSION == 0x8050BF00u, "VERSION number");
_Static_assert(KBLOOM_IOC_CREATE == 0xC078BF01u, "CREATE number");
_Static_assert(KBLOOM_IOC_ROTATE == 0x4030BF06u, "ROTATE number");
_Static_assert(KBLOOM_IOC_OPEN == 0xC038BF07u, "OPEN number");
_Static_assert(KBLOOM_IOC_DESTROY == 0x4030BF02u, "DESTROY number");
_Static_assert(KBLOOM_IOC_CLEAR == 0x4030BF03u, "CLEAR number");
_Static_assert(KBLOOM_IOC_INFO == 0xC088BF04u, "INFO number");
_Static_assert(KBLOOM_IOC_LIST == 0xC010BF05u, "LIST number");
_Static_assert(KBLOOM_IOC_ADD == 0xC040BF10u, "ADD number");
_Static_assert(KBLOOM_IOC_QUERY == 0xC040BF11u, "QUERY number");
_Static_assert(KBLOOM_IOC_TEST_AND_ADD == 0xC040BF12u, "TEST_AND_ADD number");
_Static_assert(KBLOOM_IOC_ADD_BATCH == 0xC060BF20u, "ADD_BATCH number");
_Static_assert(KBLOOM_IOC_QUERY_BATCH == 0xC060BF21u, "QUERY_BATCH number");
_Static_assert(KBLOOM_IOC_TEST_AND_ADD_BATCH == 0xC060BF22u,
	       "TEST_AND_ADD_BATCH number");
_Static_assert(KBLOOM_IOC_REMOVE == 0xC040BF13u, "REMOVE number");
_Static_assert(KBLOOM_IOC_REMOVE_BATCH == 0xC060BF23u, "REMOVE_BATCH number");
_Static_assert(KBLOOM_IOC_MERGE == 0xC078BF30u, "MERGE number");
_Static_assert(KBLOOM_IOC_COMPARE == 0xC078BF31u, "COMPARE number");
_Static_assert(KBLOOM_IOC_EXPORT == 0xC078BF40u, "EXPORT number");
_Static_assert(KBLOOM_IOC_IMPORT == 0x4078BF41u, "IMPORT number");
_Static_assert(KBLOOM_IOC_COLLECT == 0xC078BF50u, "COLLECT number");
_Static_assert(KBLOOM_IOC_APPLY == 0xC078BF51u, "APPLY number");
/* Flag and limit values are ABI too. */
_Static_assert(KBLOOM_CREATE_COUNTING == 1 && KBLOOM_CREATE_LIKE == 2,
	       "create flags");
_Static_assert(KBLOOM_IMPORT_REPLACE == 1, "import flags");
_Static_assert(KBLOOM_COUNTER_MAX == 15, "4-bit counters");
_Static_assert(KBLOOM_MISMATCH_BITS == 1 && KBLOOM_MISMATCH_HASHES == 2 &&
	       KBLOOM_MISMATCH_COUNTING == 4 && KBLOOM_MISMATCH_SEED == 8 &&
	       KBLOOM_MISMATCH_HASH_SCHEME == 16,
	       "mismatch bits");
_Static_assert(KBLOOM_HASH_JHASH == 1 && KBLOOM_HASH_SIPHASH == 2,
	       "hash schemes");
_Static_assert(KBLOOM_FEATURE_SIPHASH == 1ULL << 6, "SIPHASH feature");

#include "kbloom_st_version.c"
#include "kbloom_st_badioctl.c"
#include "kbloom_st_create.c"
#include "kbloom_st_keys.c"
#include "kbloom_st_batch.c"
#include "kbloom_st_counting.c"
#include "kbloom_st_merge.c"
#include "kbloom_st_compare.c"
#include "kbloom_st_image.c"
#include "kbloom_st_perm.c"
#include "kbloom_st_stress.c"
#include "kbloom_st_handle.c"
#include "kbloom_st_window.c"
#include "kbloom_st_changes.c"
#include "kbloom_st_faults.c"
/*
 * Last: its huge filter takes long to free on the debug kernel (vfree
 * under KASAN, emulated), and no case should run while it does.
 */
#include "kbloom_st_sysfs.c"

TEST_HARNESS_MAIN
