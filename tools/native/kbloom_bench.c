// SPDX-License-Identifier: GPL-2.0
/*
 * Native benchmark of the kbloom hot path: the very core the module runs
 * (kmod/kbloom_core.c), timed on the host CPU instead of under emulation.
 * Also times one bare system call (ioctl FIONREAD on a pipe), the fixed
 * cost that a one-key ioctl pays on top of the core and a batch spreads
 * over thousands of keys.
 *
 * Usage: kbloom_bench [KEYS]   (default 1000000)
 */
#include <sys/ioctl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "kbloom_core.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * Keys like the demo's, decimal numbers as `seq` prints them, made before
 * the clock starts so that only the filter is timed: key i is at
 * keys + 24 * i.
 */
static char *make_keys(u64 count, u32 **lens)
{
	char *keys = malloc(count * 24);
	u64 i;

	*lens = malloc(count * sizeof(**lens));
	if (!keys || !*lens) {
		perror("kbloom_bench: malloc");
		exit(2);
	}
	for (i = 0; i < count; i++)
		(*lens)[i] = (u32)snprintf(keys + 24 * i, 24, "%llu",
					   (unsigned long long)i);
	return keys;
}

static void bench(u64 n, u32 ppb, u32 flags)
{
	struct kbloom_core core;
	u32 seed[2] = { 1, 2 }, k, *lens;
	u64 m, i, hits = 0;
	double t0, t1, t2, t3;
	char *keys;
	void *bits;

	if (kbloom_size(n, ppb, &m, &k))
		return;
	bits = calloc(1, kbloom_core_bytes(m, flags));
	if (!bits) {
		perror("kbloom_bench: calloc");
		exit(2);
	}
	kbloom_core_init(&core, bits, m, k, flags, seed);
	keys = make_keys(2 * n, &lens);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		kbloom_core_add(&core, keys + 24 * i, lens[i]);
	t1 = now_ns();
	for (i = 0; i < n; i++)
		hits += kbloom_core_test(&core, keys + 24 * i, lens[i]);
	t2 = now_ns();
	for (i = n; i < 2 * n; i++)
		hits += kbloom_core_test(&core, keys + 24 * i, lens[i]);
	t3 = now_ns();
	free(keys);
	free(lens);
	printf("%-9s n=%-9llu m=%-10llu k=%-2u %6.1f MiB: add %5.1f ns, query present %5.1f ns, query absent %5.1f ns (fpr %.3f%%)\n",
	       flags ? "counting" : "plain", (unsigned long long)n,
	       (unsigned long long)m, k, kbloom_core_bytes(m, flags) / 1048576.0,
	       (t1 - t0) / n, (t2 - t1) / n, (t3 - t2) / n,
	       100.0 * (hits - n) / n);
	free(bits);
}

int main(int argc, char **argv)
{
	u64 n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	int p[2], avail, i, rounds = 1000000;
	double t0, syscall_ns;

	if (pipe(p)) {
		perror("kbloom_bench: pipe");
		return 2;
	}
	t0 = now_ns();
	for (i = 0; i < rounds; i++)
		if (ioctl(p[0], FIONREAD, &avail))
			return 2;
	syscall_ns = (now_ns() - t0) / rounds;
	printf("one bare ioctl system call: %.1f ns\n", syscall_ns);
	bench(n, 10000000, 0);
	bench(n, 1000000, 0);
	bench(10 * n, 10000000, 0);
	bench(n, 10000000, KBLOOM_CORE_COUNTING);
	return 0;
}
