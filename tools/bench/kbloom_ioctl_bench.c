// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_ioctl_bench - make bench-vm's system-call part, in the VM: the
 * same absent and present keys looked up in a kbloom filter through
 * /dev/bloom (a batch by name, a batch on a handle, one ioctl per key by
 * name and on a handle) and in a BPF bloom filter map with one bpf() per
 * key, as userspace reaches each. Both sized for the keys at 1%. Three
 * interleaved rounds, medians; ratios against one bpf() per key.
 *
 * Usage: kbloom_ioctl_bench [-k] [KEYS]   (default 100000)
 * -k keeps the filter, "ioctl_bench", full of the present keys, for
 * kbloom_apibench.ko to look them up from the kernel.
 * Prints "# bench: ..." lines (tools/bench/vm-checks.sh). Exit 0, or 1
 * on a wrong answer (a present key reported absent), 2 on a failed call.
 */
#include <linux/bpf.h>
#include <sys/syscall.h>

#include "bench.h"	/* bench_key(), bench_median() */
/* The ioctl wrappers, now_ns(), and the libc headers they take. */
#include "../include/kbloom_util.h"

#define NAME	"ioctl_bench"
#define ROUNDS	3
#define KEYLEN	8

static void die(const char *what)
{
	fprintf(stderr, "kbloom_ioctl_bench: %s: %s\n", what, strerror(errno));
	exit(2);
}

static uint8_t *keys;	/* key i: i little-endian, as make bench's */
static uint32_t *lens;
static uint64_t nkeys;

static const uint8_t *key(uint64_t i)
{
	return keys + i * KEYLEN;
}

/* ---- kbloom ---- */

static uint64_t bench_batch(int fd, bool named, unsigned long cmd,
			    uint64_t first, uint64_t count, uint8_t *results)
{
	struct kbloom_batch b;

	if (kb_batch(fd, cmd, named ? NAME : "", key(first), lens, results,
		     count * KEYLEN, (uint32_t)count, &b))
		die("batch ioctl");
	return b.hits;
}

static uint64_t bench_one(int fd, bool named, uint64_t first, uint64_t count)
{
	struct kbloom_key k = { .len = KEYLEN };
	uint64_t i, hits = 0;

	if (named)
		strcpy(k.name, NAME);
	for (i = first; i < first + count; i++) {
		k.key = (uintptr_t)key(i);
		if (ioctl(fd, KBLOOM_IOC_QUERY, &k))
			die("KBLOOM_IOC_QUERY");
		hits += k.result;
	}
	return hits;
}

/* ---- the BPF bloom map, through bpf() ---- */

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int bpf_bloom_create(uint32_t n)
{
	union bpf_attr a = {
		.map_type = BPF_MAP_TYPE_BLOOM_FILTER,
		.value_size = KEYLEN,
		.max_entries = n,
		.map_extra = 7,	/* k for 1%, as make bench */
	};

	return (int)sys_bpf(BPF_MAP_CREATE, &a);
}

static void bpf_push(int fd, uint64_t i)
{
	union bpf_attr a = {
		.map_fd = (uint32_t)fd,
		.value = (uintptr_t)key(i),
		.flags = BPF_ANY,
	};

	if (sys_bpf(BPF_MAP_UPDATE_ELEM, &a))
		die("BPF_MAP_UPDATE_ELEM");
}

static uint64_t bpf_lookup(int fd, uint64_t first, uint64_t count)
{
	uint8_t value[KEYLEN];
	union bpf_attr a = { .map_fd = (uint32_t)fd,
			     .value = (uintptr_t)value };
	uint64_t i, hits = 0;

	for (i = first; i < first + count; i++) {
		memcpy(value, key(i), KEYLEN);
		if (!sys_bpf(BPF_MAP_LOOKUP_ELEM, &a))
			hits++;
		else if (errno != ENOENT)
			die("BPF_MAP_LOOKUP_ELEM");
	}
	return hits;
}

/* ---- the run ---- */

enum { BATCH_NAME, BATCH_HANDLE, ONE_NAME, ONE_HANDLE, BPF_ONE, NWAYS };

static const char *const way_name[NWAYS] = {
	"kbloom batch ioctl, by name",
	"kbloom batch ioctl, on a handle",
	"kbloom one ioctl per key, by name",
	"kbloom one ioctl per key, on a handle",
	"BPF bloom map, one bpf() per key",
};

int main(int argc, char **argv)
{
	double t[NWAYS][2][ROUNDS], t0, med[NWAYS][2];
	uint64_t hits[NWAYS][2], i, fp;
	int dev, handle, map, w, r, p, bad = 0, keep = 0;
	uint8_t *results;

	if (argc > 1 && !strcmp(argv[1], "-k")) {
		keep = 1;
		argc--;
		argv++;
	}
	nkeys = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
	if (!nkeys || nkeys > KBLOOM_BATCH_MAX) {
		fprintf(stderr, "kbloom_ioctl_bench: KEYS from 1 to %u (one batch)\n",
			KBLOOM_BATCH_MAX);
		return 2;
	}
	keys = malloc(2 * nkeys * KEYLEN);
	lens = malloc(nkeys * sizeof(*lens));
	results = calloc(1, nkeys / 8 + 1);
	if (!keys || !lens || !results)
		die("malloc");
	for (i = 0; i < 2 * nkeys; i++)
		bench_key(keys + i * KEYLEN, i, KEYLEN);
	for (i = 0; i < nkeys; i++)
		lens[i] = KEYLEN;

	dev = open("/dev/bloom", O_RDWR);
	if (dev < 0)
		die("open /dev/bloom");
	destroy_quiet(dev, NAME);
	/* jhash, as the BPF map hashes: the same work per key. */
	if (kb_create_all(dev, NAME, 0, 0, nkeys, 10000000,
			  KBLOOM_CREATE_BLOCKED, NULL, KBLOOM_HASH_JHASH, NULL))
		die("KBLOOM_IOC_CREATE");
	if (kb_open_handle(dev, NAME, &handle))
		die("KBLOOM_IOC_OPEN");
	bench_batch(dev, true, KBLOOM_IOC_ADD_BATCH, 0, nkeys, results);
	map = bpf_bloom_create((uint32_t)nkeys);
	if (map < 0)
		die("BPF_MAP_CREATE");
	for (i = 0; i < nkeys; i++)
		bpf_push(map, i);

	/* p 0: present keys [0, n); p 1: absent keys [n, 2n). */
	for (r = 0; r < ROUNDS; r++) {
		for (w = 0; w < NWAYS; w++) {
			for (p = 0; p < 2; p++) {
				uint64_t first = p * nkeys, h = 0;

				t0 = now_ns();
				switch (w) {
				case BATCH_NAME:
					h = bench_batch(dev, true,
						     KBLOOM_IOC_QUERY_BATCH,
						     first, nkeys, results);
					break;
				case BATCH_HANDLE:
					h = bench_batch(handle, false,
						     KBLOOM_IOC_QUERY_BATCH,
						     first, nkeys, results);
					break;
				case ONE_NAME:
					h = bench_one(dev, true, first, nkeys);
					break;
				case ONE_HANDLE:
					h = bench_one(handle, false, first, nkeys);
					break;
				default:
					h = bpf_lookup(map, first, nkeys);
				}
				t[w][p][r] = (now_ns() - t0) / nkeys;
				hits[w][p] = h;
			}
		}
	}
	for (w = 0; w < NWAYS; w++) {
		for (p = 0; p < 2; p++)
			med[w][p] = bench_median(t[w][p], ROUNDS);
		fp = hits[w][1];
		if (hits[w][0] != nkeys)
			bad = 1;
		printf("# bench: %-38s present %8.1f ns/key, absent %8.1f ns/key, false positives %.2f%%%s\n",
		       way_name[w], med[w][0], med[w][1], 100.0 * fp / nkeys,
		       hits[w][0] != nkeys ? " (PRESENT KEYS MISSED)" : "");
	}
	for (w = 0; w < BPF_ONE; w++)
		printf("# bench: %s: %.1fx (present), %.1fx (absent) the speed of one bpf() per key\n",
		       way_name[w], med[BPF_ONE][0] / med[w][0],
		       med[BPF_ONE][1] / med[w][1]);
	close(handle);
	if (!keep)
		kb_destroy(dev, NAME);
	close(dev);
	close(map);
	return bad;
}
