// SPDX-License-Identifier: GPL-2.0
/*
 * make bench's in-kernel peer, natively on the host kernel: the BPF bloom
 * filter map (BPF_MAP_TYPE_BLOOM_FILTER), from a BPF program
 * (bench_bpf.bpf.c, run by BPF_PROG_TEST_RUN) and with one bpf() system
 * call per key, as userspace uses it. Needs root (or CAP_BPF) and a
 * kernel that allows bpf(); says so otherwise.
 */
#include "bench.h"

#ifdef BENCH_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_bpf.skel.h"

/*
 * The map's k: the BPF map takes it from the user (map_extra, default 5);
 * the optimal one for BENCH_FPR is round(log2(1 / p)) = 7. The map sizes
 * its bitmap itself: n * k / ln 2 bits, rounded up to a power of two.
 */
#define BPF_BENCH_HASHES	7
/* bpf_loop() takes at most 2^23 iterations; 2^20 per run keeps each
 * run (preemption off, on the host) well under a second. */
#define BPF_BENCH_CHUNK		(1u << 20)

struct bpf_filter {
	struct bench_bpf *skel;
	int prog_fd, map_fd;
};

/*
 * The map's bitmap as kernel/bpf/bloom_filter.c sizes it: n * k bits
 * times 7/5 (about 1 / ln 2), rounded up to a power of two (at least a
 * long, at most 2^31 bits). fdinfo's "memlock" says so only from Linux 6.4
 * on, and this runs on the VM's 6.1 as well.
 */
static size_t bpfb_bytes(uint64_t n, uint32_t k)
{
	uint64_t bits = n * k / 5 * 7, p = 64;

	if (bits > (1ULL << 31))
		return (1ULL << 31) / 8;
	while (p < bits)
		p <<= 1;
	return p / 8;
}

static int bpfb_create(struct bench_filter *f, const struct bench_keys *keys,
		       uintptr_t arg)
{
	static char detail[64];
	struct bpf_filter *b = calloc(1, sizeof(*b));

	(void)arg;
	if (!b)
		return -1;
	b->skel = bench_bpf__open();
	if (!b->skel)
		goto err_free;
	if (bpf_map__set_value_size(b->skel->maps.bloom, keys->len) ||
	    bpf_map__set_max_entries(b->skel->maps.bloom, (uint32_t)keys->n) ||
	    bpf_map__set_map_extra(b->skel->maps.bloom, BPF_BENCH_HASHES) ||
	    bench_bpf__load(b->skel))
		goto err_destroy;
	b->prog_fd = bpf_program__fd(b->skel->progs.bench);
	b->map_fd = bpf_map__fd(b->skel->maps.bloom);
	f->priv = b;
	f->bytes = bpfb_bytes(keys->n, BPF_BENCH_HASHES);
	snprintf(detail, sizeof(detail), "k = %d, m = 2^%.0f",
		 BPF_BENCH_HASHES, log2((double)f->bytes * 8));
	f->detail = detail;
	return 0;

err_destroy:
	bench_bpf__destroy(b->skel);
err_free:
	free(b);
	return -1;
}

static void bpfb_destroy(struct bench_filter *f)
{
	struct bpf_filter *b = f->priv;

	bench_bpf__destroy(b->skel);
	free(b);
}

/* One BPF_PROG_TEST_RUN per chunk; returns the hits of a query. */
static uint64_t bpfb_run(struct bench_filter *f, bool add, uint64_t first,
			uint64_t count)
{
	struct bpf_filter *b = f->priv;
	uint8_t pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
		    .data_size_in = sizeof(pkt), .repeat = 1);
	uint64_t done, hits = 0;

	for (done = 0; done < count; done += b->skel->bss->count) {
		b->skel->bss->first = first + done;
		b->skel->bss->count = count - done < BPF_BENCH_CHUNK ?
				      count - done : BPF_BENCH_CHUNK;
		b->skel->bss->add = add;
		b->skel->bss->hits = 0;
		if (bpf_prog_test_run_opts(b->prog_fd, &opts)) {
			perror("kbloom_bench: BPF_PROG_TEST_RUN");
			exit(2);
		}
		hits += b->skel->bss->hits;
	}
	return hits;
}

static void bpfb_prog_add(struct bench_filter *f, const struct bench_keys *keys,
			 uint64_t first, uint64_t count)
{
	(void)keys;
	bpfb_run(f, true, first, count);
}

static uint64_t bpfb_prog_query(struct bench_filter *f,
			       const struct bench_keys *keys, uint64_t first,
			       uint64_t count)
{
	(void)keys;
	return bpfb_run(f, false, first, count);
}

static void bpfb_syscall_add(struct bench_filter *f,
			    const struct bench_keys *keys, uint64_t first,
			    uint64_t count)
{
	struct bpf_filter *b = f->priv;
	const uint8_t *p = keys->buf + first * keys->len;
	uint64_t i;

	for (i = 0; i < count; i++, p += keys->len)
		if (bpf_map_update_elem(b->map_fd, NULL, p, BPF_ANY)) {
			perror("kbloom_bench: BPF_MAP_UPDATE_ELEM");
			exit(2);
		}
}

static uint64_t bpfb_syscall_query(struct bench_filter *f,
				  const struct bench_keys *keys,
				  uint64_t first, uint64_t count)
{
	struct bpf_filter *b = f->priv;
	const uint8_t *p = keys->buf + first * keys->len;
	uint8_t value[16];
	uint64_t i, hits = 0;

	for (i = 0; i < count; i++, p += keys->len) {
		/* A bloom map's lookup takes the value, and no key. */
		memcpy(value, p, keys->len);
		if (!bpf_map_lookup_elem(b->map_fd, NULL, value))
			hits++;
		else if (errno != ENOENT) {
			perror("kbloom_bench: BPF_MAP_LOOKUP_ELEM");
			exit(2);
		}
	}
	return hits;
}

static const struct bench_kind bpf_prog_kind = {
	.name = "BPF bloom map, from a BPF program (bpf_loop)",
	.short_name = "BPF map, BPF program",
	.create = bpfb_create,
	.destroy = bpfb_destroy,
	.add = bpfb_prog_add,
	.query = bpfb_prog_query,
};

static const struct bench_kind bpf_syscall_kind = {
	.name = "BPF bloom map, one bpf() per key",
	.short_name = "BPF map, bpf() per key",
	.max_timed = 200000,
	.create = bpfb_create,
	.destroy = bpfb_destroy,
	.add = bpfb_syscall_add,
	.fill = bpfb_prog_add,
	.query = bpfb_syscall_query,
};

/* Can this process use bpf() at all? Tried once. */
static const char *bpfb_usable(void)
{
	static int state;	/* 0 unknown, 1 yes, -1 no */
	static char why[128];
	int fd;

	if (!state) {
		fd = bpf_map_create(BPF_MAP_TYPE_BLOOM_FILTER, NULL, 0, 8, 1,
				    NULL);
		if (fd < 0) {
			snprintf(why, sizeof(why),
				 "not measured: bpf(BPF_MAP_CREATE): %s (root, and a kernel that allows bpf())",
				 strerror(errno));
			state = -1;
		} else {
			close(fd);
			state = 1;
		}
	}
	return state > 0 ? NULL : why;
}

const struct bench_kind *bench_bpf_kind(bool syscall, const char **why)
{
	*why = bpfb_usable();
	return *why ? NULL : syscall ? &bpf_syscall_kind : &bpf_prog_kind;
}
#else
const struct bench_kind *bench_bpf_kind(bool syscall, const char **why)
{
	(void)syscall;
	*why = "not built (apt-get install clang libbpf-dev bpftool)";
	return NULL;
}
#endif
