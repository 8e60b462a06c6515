/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF kfuncs: XDP, tc and syscall programs use kbloom's filters.
 */
#ifndef _KBLOOM_BPF_H
#define _KBLOOM_BPF_H

#include <linux/types.h>

struct kbloom_bpf_filter;

void kbloom_bpf_init(void);
void kbloom_bpf_uninit(void);
const char *kbloom_bpf_status(void);

/*
 * The kfuncs. Only BPF programs call them (tools/bpf/kbloom.bpf.h declares
 * them there); declared here so that every definition has a prototype.
 */
struct kbloom_bpf_filter *bpf_kbloom_get(const char *name, u32 name__sz);
void bpf_kbloom_put(struct kbloom_bpf_filter *f);
int bpf_kbloom_query(struct kbloom_bpf_filter *f, const void *key,
		     u32 key__sz);
int bpf_kbloom_add(struct kbloom_bpf_filter *f, const void *key, u32 key__sz);
int bpf_kbloom_test_and_add(struct kbloom_bpf_filter *f, const void *key,
			    u32 key__sz);
int bpf_kbloom_remove(struct kbloom_bpf_filter *f, const void *key,
		      u32 key__sz);
int bpf_kbloom_id(const char *name, u32 name__sz);
int bpf_kbloom_query_id(u32 id, const void *key, u32 key__sz);
int bpf_kbloom_add_id(u32 id, const void *key, u32 key__sz);
int bpf_kbloom_test_and_add_id(u32 id, const void *key, u32 key__sz);
int bpf_kbloom_remove_id(u32 id, const void *key, u32 key__sz);

#endif /* _KBLOOM_BPF_H */
