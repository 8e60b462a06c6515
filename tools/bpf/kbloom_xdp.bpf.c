// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_xdp: an XDP program on kbloom's kfuncs, loaded by kbloom_xdp.c
 * (and by kbloom_xdp_test.c, tools/bench/kbloom_xdp_bench.c).
 *
 * (a) Allow-list: a packet whose source address is not in the filter
 *     allow_name is dropped. Its key is what `bloomctl add NAME --key
 *     saddr --flow ADDR` adds: family, KBLOOM_FLOW_SADDR, the address.
 *     An empty name: no allow-list, every IP packet passes it.
 * (b) New flows: each passing packet's 5-tuple (saddr, daddr, proto,
 *     sport, dport: the key of `--key saddr,daddr,proto,sport,dport`) is
 *     test-and-added to the filter flows_name, counting first packets of
 *     a flow (new) and the others (seen). An empty name: not counted.
 * Non-IP packets pass, untouched by either.
 *
 * The filters are reached by reference (bpf_kbloom_get() and
 * bpf_kbloom_put() around each use: a name lookup and two atomics per
 * packet and filter) or, with by_id, by the ids the loader resolved once
 * (no reference: an RCU lookup of the id per call). The counters are per
 * CPU, in kb_counters (struct kbloom_xdp_stats).
 *
 * kbloom_resolve, a syscall program, resolves the names to ids with
 * bpf_kbloom_id() into .bss, for the loader to run once after loading
 * (or the loader reads sysfs and writes the ids there itself).
 */
#define KBLOOM_XDP_PROGRAM
#include "kbloom.bpf.h"
#include "kbloom_xdp.h"

#define KB_ENOENT	2

/* Set by the loader before loading; the verifier prunes what is off. */
const volatile union kbloom_bpf_name allow_name;
const volatile union kbloom_bpf_name flows_name;
const volatile __u32 by_id;
/*
 * Pass packets whose source cannot be checked (the allow-list filter is
 * missing or fails), instead of dropping them: an allow-list that cannot
 * be read allows nothing, unless asked.
 */
const volatile __u32 fail_open;

/*
 * Ids, in .bss rather than .rodata: they are resolved after loading, by
 * kbloom_resolve in this same object, and the loader can write new ones
 * into the running program (a filter destroyed and created again has a
 * new id) without reloading it.
 */
__u32 allow_id;
__u32 flows_id;
/* What bpf_kbloom_id() answered, for the loader's messages. */
__s32 allow_id_ret;
__s32 flows_id_ret;

enum kb_op {
	KB_QUERY,
	KB_TEST_AND_ADD,
};

/* @op on the filter @name or @id, as the loader chose: the kfunc's answer. */
static __always_inline int kb_apply(const volatile union kbloom_bpf_name *name,
				    __u32 id, enum kb_op op, const __u8 *key,
				    __u32 len)
{
	struct kbloom_bpf_filter *filter;
	union kbloom_bpf_name buf;
	int ret;

	if (by_id)
		return op == KB_QUERY ?
		       bpf_kbloom_query_id(id, key, len) :
		       bpf_kbloom_test_and_add_id(id, key, len);
	kbloom_name_copy(&buf, name);
	filter = bpf_kbloom_get(buf.s, sizeof(buf.s));
	if (!filter)
		return -KB_ENOENT;
	ret = op == KB_QUERY ? bpf_kbloom_query(filter, key, len) :
			       bpf_kbloom_test_and_add(filter, key, len);
	bpf_kbloom_put(filter);
	return ret;
}

SEC("xdp")
int kbloom_xdp(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	/*
	 * Zeroed: kfuncs are handed the key's length, which the verifier
	 * only knows as a range, so it wants all of the range written.
	 */
	__u8 key[KBLOOM_XDP_FLOW_SIZE] __attribute__((aligned(8))) = {};
	struct kbloom_xdp_stats *st;
	struct kbloom_flow flow;
	int parsed, ret, len;

	st = kb_stats();
	if (!st)
		return XDP_PASS;	/* cannot happen: an array's only entry */
	/* The 5-tuple needs proto and ports; the allow-list only saddr. */
	parsed = kbloom_parse(ctx, data, data_end,
			      flows_name.s[0] ? KBLOOM_FLOW_FIELDS :
						KBLOOM_FLOW_SADDR, &flow);
	if (parsed == KBLOOM_PARSE_NOT_IP)
		goto pass;
	if (parsed == KBLOOM_PARSE_MALFORMED) {
		st->malformed++;
		goto drop;
	}

	if (allow_name.s[0]) {
		len = kbloom_flow_key(&flow, KBLOOM_FLOW_SADDR, key);
		kb_show_key(kb_keys.allow, &kb_keys.allow_len, key, len);
		ret = kb_apply(&allow_name, allow_id, KB_QUERY, key, len);
		if (ret < 0) {
			st->errors++;
			if (!fail_open)
				goto drop;
		} else if (!ret) {
			goto drop;
		}
	}

	if (flows_name.s[0]) {
		if (parsed == KBLOOM_PARSE_UNSUPPORTED) {
			/* Addresses only: no 5-tuple to count. */
			st->errors++;
			goto pass;
		}
		len = kbloom_flow_key(&flow, KBLOOM_FLOW_FIELDS, key);
		kb_show_key(kb_keys.flow, &kb_keys.flow_len, key, len);
		ret = kb_apply(&flows_name, flows_id, KB_TEST_AND_ADD, key,
			       len);
		if (ret < 0)
			st->errors++;
		else if (ret)
			st->seen_flows++;
		else
			st->new_flows++;
	}
pass:
	st->passed++;
	return XDP_PASS;
drop:
	st->dropped++;
	return XDP_DROP;
}

/*
 * Run once by the loader (BPF_PROG_TEST_RUN) after loading, with --by-id:
 * the filters' ids into .bss. Not attached anywhere.
 */
SEC("syscall")
int kbloom_resolve(void *ctx __attribute__((unused)))
{
	union kbloom_bpf_name buf;
	int id;

	if (allow_name.s[0]) {
		kbloom_name_copy(&buf, &allow_name);
		id = bpf_kbloom_id(buf.s, sizeof(buf.s));
		allow_id_ret = id;
		allow_id = id > 0 ? id : 0;
	}
	if (flows_name.s[0]) {
		kbloom_name_copy(&buf, &flows_name);
		id = bpf_kbloom_id(buf.s, sizeof(buf.s));
		flows_id_ret = id;
		flows_id = id > 0 ? id : 0;
	}
	return 0;
}

/* kfuncs are for GPL programs only. */
char LICENSE[] SEC("license") = "GPL";
