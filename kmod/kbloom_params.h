/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a filter is made of: uapi creation fields to core parameters.
 */
#ifndef _KBLOOM_PARAMS_H
#define _KBLOOM_PARAMS_H

#include <linux/types.h>
#include <uapi/linux/kbloom.h>

struct kbloom_params;

/*
 * The hash scheme of filters created without choosing one. SipHash: a
 * filter is most often fed from the network, by whoever sends packets,
 * and only a keyed PRF keeps them from aiming keys at chosen bits. It
 * costs a few nanoseconds a key more than jhash (Documentation/design.md,
 * "Hashing", measured by `make bench`), small beside the cache misses of a filter
 * larger than the caches; filters of trusted keys can choose jhash.
 */
#define KBLOOM_HASH_DEFAULT	KBLOOM_HASH_SIPHASH

#define KBLOOM_CREATE_BPF	(KBLOOM_CREATE_BPF_READ | KBLOOM_CREATE_BPF_WRITE)

u32 kbloom_scheme_flags(u32 scheme);
u32 kbloom_flags_scheme(u32 core_flags);
bool kbloom_scheme_valid(u32 scheme);
u32 kbloom_core_flags(u32 uapi_flags);
u32 kbloom_uapi_flags(u32 core_flags);
u8 kbloom_bpf_ops(u32 uapi_flags);
u32 kbloom_bpf_flags(u8 bpf_ops);
int kbloom_params_check(const struct kbloom_params *p);
int kbloom_create_window(const struct kbloom_create *c,
			 struct kbloom_params *p);
int kbloom_create_params(struct kbloom_create *c, struct kbloom_params *p);

#endif /* _KBLOOM_PARAMS_H */
