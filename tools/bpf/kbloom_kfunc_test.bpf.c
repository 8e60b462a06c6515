// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_kfunc_test: one call of one of kbloom's kfuncs, chosen by the
 * loader (`kbloom_xdp_test kfunc`, kbloom_xdp_test.c), from an XDP, a tc
 * (sched_cls) or a syscall program, each run once with
 * BPF_PROG_TEST_RUN. The kfunc's answer goes to .bss (result), for the
 * tests (test-kfunc.sh) to see every answer of every kfunc: 0, 1,
 * -EINVAL, -ENOENT, -EOPNOTSUPP.
 *
 * .rodata: the operation (enum kbloom_kfunc_op), by reference or by id,
 * the filter's name. .bss: the key, its length and, by id, the id (0:
 * resolved from the name with bpf_kbloom_id() in the same run). The key
 * lives in .bss, a writable map value (a kfunc's memory argument must be
 * writable), in a buffer longer than KBLOOM_KEY_MAX: the length is a
 * number the verifier only knows to be within the buffer, so that the
 * kfunc itself must refuse 0 and KBLOOM_KEY_MAX + 1 (-EINVAL).
 *
 * The syscall program has only the calls that change nothing (query,
 * get/put, id): syscall programs are refused the others at load
 * (kbloom_kfunc_refused.bpf.c).
 */
#include "kbloom.bpf.h"
#include "kbloom_xdp.h"

#define KB_ENOENT	2
#define KB_E2BIG	7
#define KB_ENOSYS	38

/* Set by the loader before loading; the verifier prunes the others. */
const volatile union kbloom_bpf_name filter_name;
const volatile __u32 op;		/* enum kbloom_kfunc_op */
const volatile __u32 by_id;

/* In: by id, the id to use (0: bpf_kbloom_id() of the name). */
__u32 id;
/* In: the key and the length handed to the kfunc. */
__u32 key_len;
__u8 key[KBLOOM_KFUNC_KEY_BUF];
/* Out: the kfunc's answer; bpf_kbloom_id()'s, by id; runs, to be sure. */
__s32 result;
__s32 id_ret;
__u32 runs;

/*
 * The call. @may_write: a compile-time constant, false for the syscall
 * program, whose code then holds no call that changes a filter.
 */
static __always_inline int kb_call(const int may_write)
{
	struct kbloom_bpf_filter *filter;
	union kbloom_bpf_name name;
	__u32 len = key_len;
	int fid, ret;

	runs++;
	/* Within the buffer: what the verifier wants to know of len. */
	if (len > sizeof(key))
		return -KB_E2BIG;
	kbloom_name_copy(&name, &filter_name);
	if (op == KBLOOM_KFUNC_ID)
		return bpf_kbloom_id(name.s, sizeof(name.s));

	if (by_id) {
		fid = id;
		if (!fid) {
			fid = bpf_kbloom_id(name.s, sizeof(name.s));
			id_ret = fid;
			if (fid <= 0)
				return fid < 0 ? fid : -KB_ENOENT;
		}
		if (op == KBLOOM_KFUNC_QUERY)
			return bpf_kbloom_query_id(fid, key, len);
		if (!may_write)
			return -KB_ENOSYS;
		if (op == KBLOOM_KFUNC_ADD)
			return bpf_kbloom_add_id(fid, key, len);
		if (op == KBLOOM_KFUNC_TEST_AND_ADD)
			return bpf_kbloom_test_and_add_id(fid, key, len);
		if (op == KBLOOM_KFUNC_REMOVE)
			return bpf_kbloom_remove_id(fid, key, len);
		return -KB_ENOSYS;
	}

	filter = bpf_kbloom_get(name.s, sizeof(name.s));
	if (!filter)
		return op == KBLOOM_KFUNC_GET ? 0 : -KB_ENOENT;
	if (op == KBLOOM_KFUNC_GET)
		ret = 1;
	else if (op == KBLOOM_KFUNC_QUERY)
		ret = bpf_kbloom_query(filter, key, len);
	else if (!may_write)
		ret = -KB_ENOSYS;
	else if (op == KBLOOM_KFUNC_ADD)
		ret = bpf_kbloom_add(filter, key, len);
	else if (op == KBLOOM_KFUNC_TEST_AND_ADD)
		ret = bpf_kbloom_test_and_add(filter, key, len);
	else if (op == KBLOOM_KFUNC_REMOVE)
		ret = bpf_kbloom_remove(filter, key, len);
	else
		ret = -KB_ENOSYS;
	bpf_kbloom_put(filter);
	return ret;
}

SEC("xdp")
int kbloom_kfunc_xdp(struct xdp_md *ctx __attribute__((unused)))
{
	result = kb_call(1);
	return XDP_PASS;
}

SEC("tc")
int kbloom_kfunc_tc(struct __sk_buff *skb __attribute__((unused)))
{
	result = kb_call(1);
	return 0;	/* TC_ACT_OK */
}

/*
 * Run with a struct kbloom_kfunc_args as its context, which the kernel
 * copies back to the loader: the answer is there too.
 */
SEC("syscall")
int kbloom_kfunc_syscall(struct kbloom_kfunc_args *args)
{
	int ret = kb_call(0);

	result = ret;
	args->ret = ret;
	args->runs = runs;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
