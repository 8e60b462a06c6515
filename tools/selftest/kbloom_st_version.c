// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "version": what KBLOOM_IOC_VERSION reports.
 * Included by kbloom_selftest.c.
 */

FIXTURE(version) {
};

FIXTURE_SETUP(version)
{
	st_open(_metadata);
}

FIXTURE_TEARDOWN(version)
{
	st_close();
}

/* Poison it all: every field must come from the kernel. */
TEST_F(version, fields)
{
	const u64 want_feat = KBLOOM_FEATURE_BATCH |
			      KBLOOM_FEATURE_TEST_AND_ADD |
			      KBLOOM_FEATURE_SIZING | KBLOOM_FEATURE_COUNTING |
			      KBLOOM_FEATURE_MERGE | KBLOOM_FEATURE_IMAGE |
			      KBLOOM_FEATURE_SIPHASH;
	struct kbloom_version v;
	char detail[64];
	int err;

	memset(&v, 0xa5, sizeof(v));
	err = ioc(g_fd, KBLOOM_IOC_VERSION, &v);
	if (!EXPECT_OK(err, "version: KBLOOM_IOC_VERSION"))
		return;
	EXPECT_U64(v.api_version, KBLOOM_API_VERSION, "version: api_version");
	EXPECT_U64(v.hash_scheme, KBLOOM_HASH_SCHEME, "version: hash_scheme");
	/* The default scheme of new filters: jhash or SipHash. */
	EXPECT_RANGE(v.default_hash_scheme, KBLOOM_HASH_JHASH,
		     KBLOOM_HASH_SIPHASH,
		     "version: default_hash_scheme is a known scheme");
	snprintf(detail, sizeof(detail), "features 0x%llx lack 0x%llx",
		 (unsigned long long)v.features,
		 (unsigned long long)(want_feat & ~v.features));
	EXPECT_COND((v.features & want_feat) == want_feat, detail,
		    "version: features has BATCH to SIPHASH (bits 0 to 6)");
	EXPECT_U64(v.min_bits, KBLOOM_MIN_BITS, "version: min_bits");
	EXPECT_U64(v.max_bits, KBLOOM_MAX_BITS, "version: max_bits");
	EXPECT_U64(v.max_hashes, KBLOOM_MAX_HASHES, "version: max_hashes");
	EXPECT_U64(v.max_key_len, KBLOOM_KEY_MAX, "version: max_key_len");
	EXPECT_U64(v.max_batch, KBLOOM_BATCH_MAX, "version: max_batch");
	EXPECT_U64(v.name_max, KBLOOM_NAME_MAX, "version: name_max");
	EXPECT_COND(all_bytes((unsigned char *)v.reserved, sizeof(v.reserved),
			      0), "a reserved byte is not zero",
		    "version: reserved all zero");
}
