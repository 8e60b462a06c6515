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
 * Within each _Static_assert, AT(f, n): field f of struct LAYOUT is at
 * offset n; SZ(f, n): it is n bytes.
 */
#define AT(f, n)	(offsetof(struct LAYOUT, f) == (n))
#define SZ(f, n)	(sizeof(((struct LAYOUT *)0)->f) == (n))

#define LAYOUT kbloom_version
_Static_assert(sizeof(struct LAYOUT) == 80 &&
	       AT(api_version, 0) && AT(hash_scheme, 4) && AT(features, 8) &&
	       AT(min_bits, 16) && AT(max_bits, 24) && AT(max_hashes, 32) &&
	       AT(max_key_len, 36) && AT(max_batch, 40) && AT(name_max, 44) &&
	       AT(default_hash_scheme, 48) && AT(max_generations, 52) &&
	       AT(reserved, 56) && SZ(reserved, 24),
	       "struct kbloom_version layout");
#undef LAYOUT

#define LAYOUT kbloom_create
_Static_assert(sizeof(struct LAYOUT) == 120 &&
	       AT(name, 0) && SZ(name, KBLOOM_NAME_MAX) && AT(bits, 32) &&
	       AT(hashes, 40) && AT(fpr_ppb, 44) && AT(capacity, 48) &&
	       AT(flags, 56) && AT(hash_scheme, 60) && AT(like, 64) &&
	       SZ(like, KBLOOM_NAME_MAX) && AT(window_ms, 96) &&
	       AT(generations, 100) && AT(reserved, 104) && SZ(reserved, 16),
	       "struct kbloom_create layout");
#undef LAYOUT

#define LAYOUT kbloom_open
_Static_assert(sizeof(struct LAYOUT) == 56 &&
	       AT(name, 0) && AT(flags, 32) && AT(fd, 36) && AT(reserved, 40),
	       "struct kbloom_open layout");
#undef LAYOUT

#define LAYOUT kbloom_name
_Static_assert(sizeof(struct LAYOUT) == 48 &&
	       AT(name, 0) && AT(reserved, 32) && SZ(reserved, 16),
	       "struct kbloom_name layout");
#undef LAYOUT

#define LAYOUT kbloom_info
_Static_assert(sizeof(struct LAYOUT) == 136 &&
	       AT(name, 0) && AT(bits, 32) && AT(hashes, 40) && AT(flags, 44) &&
	       AT(capacity, 48) && AT(fpr_ppb, 56) && AT(hash_scheme, 60) &&
	       AT(bits_set, 64) && AT(adds, 72) && AT(queries, 80) &&
	       AT(hits, 88) && AT(memory_bytes, 96) && AT(saturated, 104) &&
	       AT(window_ms, 112) && AT(generations, 116) &&
	       AT(rotations, 120) && AT(newest_age_ms, 128),
	       "struct kbloom_info layout");
#undef LAYOUT

#define LAYOUT kbloom_list
_Static_assert(sizeof(struct LAYOUT) == 16 &&
	       AT(names, 0) && AT(count, 8) && AT(reserved, 12),
	       "struct kbloom_list layout");
#undef LAYOUT

#define LAYOUT kbloom_key
_Static_assert(sizeof(struct LAYOUT) == 64 &&
	       AT(name, 0) && AT(key, 32) && AT(len, 40) && AT(result, 44) &&
	       AT(reserved, 48) && SZ(reserved, 16),
	       "struct kbloom_key layout");
#undef LAYOUT

#define LAYOUT kbloom_batch
_Static_assert(sizeof(struct LAYOUT) == 96 &&
	       AT(name, 0) && AT(keys, 32) && AT(lens, 40) && AT(results, 48) &&
	       AT(keys_bytes, 56) && AT(count, 64) && AT(done, 68) &&
	       AT(hits, 72) && AT(reserved0, 76) && AT(reserved, 80) &&
	       SZ(reserved, 16), "struct kbloom_batch layout");
#undef LAYOUT

#define LAYOUT kbloom_merge
_Static_assert(sizeof(struct LAYOUT) == 120 &&
	       AT(dst, 0) && SZ(dst, KBLOOM_NAME_MAX) && AT(src, 32) &&
	       SZ(src, KBLOOM_NAME_MAX) && AT(bits_dst, 64) &&
	       AT(bits_src, 72) && AT(bits_union, 80) && AT(bits_inter, 88) &&
	       AT(mismatch, 96) && AT(reserved0, 100) && AT(reserved, 104) &&
	       SZ(reserved, 16), "struct kbloom_merge layout");
#undef LAYOUT

#define LAYOUT kbloom_image
_Static_assert(sizeof(struct LAYOUT) == 120 &&
	       AT(name, 0) && SZ(name, KBLOOM_NAME_MAX) && AT(bits, 32) &&
	       AT(hashes, 40) && AT(flags, 44) && AT(seed, 48) && SZ(seed, 8) &&
	       AT(adds, 56) && AT(capacity, 64) && AT(fpr_ppb, 72) &&
	       AT(hash_scheme, 76) && AT(payload, 80) && AT(payload_len, 88) &&
	       AT(import_flags, 96) && AT(age_ms, 100) && AT(seed_hi, 104) &&
	       SZ(seed_hi, 8) && AT(generations, 112) && AT(window_ms, 116),
	       "struct kbloom_image layout");
#undef LAYOUT

#define LAYOUT kbloom_block
_Static_assert(sizeof(struct LAYOUT) == 80 &&
	       AT(index, 0) && AT(generation, 8) && AT(reserved, 12) &&
	       AT(data, 16), "struct kbloom_block layout");
#undef LAYOUT

#define LAYOUT kbloom_blocks
_Static_assert(sizeof(struct LAYOUT) == 120 &&
	       AT(name, 0) && AT(blocks, 32) && AT(count, 40) && AT(done, 44) &&
	       AT(flags, 48) && AT(reserved0, 52) && AT(cursor, 56) &&
	       AT(rotations, 64) && AT(age_ms, 72) && AT(fingerprint, 80) &&
	       AT(max_set, 88) && AT(set, 96) && AT(reserved, 104),
	       "struct kbloom_blocks layout");
#undef LAYOUT
#undef AT
#undef SZ

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
