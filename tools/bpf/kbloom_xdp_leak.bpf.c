// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_xdp_leak: a program the verifier must refuse. It takes a
 * reference with bpf_kbloom_get() and, on one path (a packet shorter
 * than an Ethernet header), returns without bpf_kbloom_put(): the load
 * fails with "Unreleased reference". The test of that (kbloom_xdp_test
 * leak-check) proves the kfuncs are registered KF_ACQUIRE/KF_RELEASE, so
 * that no program can keep a filter's memory alive past its run.
 */
#include "kbloom.bpf.h"

const volatile union kbloom_bpf_name filter_name;

SEC("xdp")
int kbloom_xdp_leak(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	__u8 key[8] __attribute__((aligned(8))) = { 1 };
	struct kbloom_bpf_filter *filter;
	union kbloom_bpf_name buf;
	int ret;

	kbloom_name_copy(&buf, &filter_name);
	filter = bpf_kbloom_get(buf.s, sizeof(buf.s));
	if (!filter)
		return XDP_PASS;
	if (data + sizeof(struct ethhdr) > data_end)
		return XDP_DROP;	/* the leak: no bpf_kbloom_put() */
	ret = bpf_kbloom_query(filter, key, sizeof(key));
	bpf_kbloom_put(filter);
	return ret > 0 ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
