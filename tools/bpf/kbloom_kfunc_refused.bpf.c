// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_kfunc_refused: syscall programs the verifier must refuse, one
 * per kfunc that changes a filter. Syscall programs get only the kfuncs
 * that change nothing (get, put, query, id, query_id): a process with
 * CAP_BPF alone must not change filters, which /dev/bloom keeps to
 * writers. Each program calls one of the others, and loading it must
 * fail with "calling kernel function bpf_kbloom_... is not allowed"
 * (`kbloom_xdp_test kfunc-syscall-refused` loads them one by one). A program
 * kb_X calls bpf_kbloom_X: the loader finds the name there.
 */
#include "kbloom.bpf.h"

const volatile union kbloom_bpf_name filter_name;

/* By reference: get, the call, put. */
#define KB_HELD(op)							\
SEC("syscall")								\
int kb_##op(void *ctx __attribute__((unused)))				\
{									\
	__u8 key[8] __attribute__((aligned(8))) = { 1 };		\
	struct kbloom_bpf_filter *filter;					\
	union kbloom_bpf_name buf;					\
	int ret;							\
									\
	kbloom_name_copy(&buf, &filter_name);				\
	filter = bpf_kbloom_get(buf.s, sizeof(buf.s));			\
	if (!filter)							\
		return 0;						\
	ret = bpf_kbloom_##op(filter, key, sizeof(key));		\
	bpf_kbloom_put(filter);						\
	return ret;							\
}

/* By id: the id of the name, then the call. */
#define KB_BY_ID(op)							\
SEC("syscall")								\
int kb_##op(void *ctx __attribute__((unused)))				\
{									\
	__u8 key[8] __attribute__((aligned(8))) = { 1 };		\
	union kbloom_bpf_name buf;					\
	int id;								\
									\
	kbloom_name_copy(&buf, &filter_name);				\
	id = bpf_kbloom_id(buf.s, sizeof(buf.s));			\
	if (id <= 0)							\
		return 0;						\
	return bpf_kbloom_##op(id, key, sizeof(key));			\
}

KB_HELD(add)
KB_HELD(test_and_add)
KB_HELD(remove)
KB_BY_ID(add_id)
KB_BY_ID(test_and_add_id)
KB_BY_ID(remove_id)

char LICENSE[] SEC("license") = "GPL";
