// SPDX-License-Identifier: GPL-2.0
/*
 * Hashes N keys of one length with one scheme, for an instruction count
 * under valgrind (`make -C tools/bench hash-cost`): instructions are the
 * same from run to run, where nanoseconds on a shared machine are not.
 *
 * Usage: kbloom_hashcost jhash|siphash LEN N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kbloom_core.h"

int main(int argc, char **argv)
{
	static u8 keys[4096 + 64];
	u32 seed[4] = { 1, 2, 3, 4 }, len, n, i, flags;
	struct kbloom_core core;
	volatile u64 sink = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: %s jhash|siphash LEN N\n", argv[0]);
		return 2;
	}
	flags = strcmp(argv[1], "siphash") ? 0 : KBLOOM_CORE_SIPHASH;
	len = strtoul(argv[2], NULL, 10);
	n = strtoul(argv[3], NULL, 10);
	if (len < 1 || len > 64)
		return 2;
	for (i = 0; i < sizeof(keys); i++)
		keys[i] = (u8)(i * 131 + 7);
	kbloom_core_init(&core, NULL, 1 << 20, 7, flags, seed);
	for (i = 0; i < n; i++)
		sink += kbloom_core_hash(&core, keys + (i & 4095), len);
	return (int)(sink & 0);
}
