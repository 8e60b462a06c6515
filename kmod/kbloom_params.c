// SPDX-License-Identifier: GPL-2.0
/*
 * What a filter is made of: a creation's uapi fields (struct
 * kbloom_create, and an image's, and a rule's shape) checked and turned
 * into the core's parameters (struct kbloom_params), and back. Shared by
 * /dev/bloom's CREATE and IMPORT and by rules that create their filter
 * (kbloom_get_shaped()).
 */

#include <linux/string.h>

#include "kbloom_filter.h"
#include "kbloom_gen.h"
#include "kbloom_params.h"

u32 kbloom_scheme_flags(u32 scheme)
{
	return scheme == KBLOOM_HASH_SIPHASH ? KBLOOM_CORE_SIPHASH : 0;
}

u32 kbloom_flags_scheme(u32 core_flags)
{
	return core_flags & KBLOOM_CORE_SIPHASH ? KBLOOM_HASH_SIPHASH :
						  KBLOOM_HASH_JHASH;
}

bool kbloom_scheme_valid(u32 scheme)
{
	return scheme == KBLOOM_HASH_JHASH || scheme == KBLOOM_HASH_SIPHASH;
}

/* The uapi's creation flags and the core's are separate namespaces. */
u32 kbloom_core_flags(u32 uapi_flags)
{
	return (uapi_flags & KBLOOM_CREATE_COUNTING ? KBLOOM_CORE_COUNTING : 0) |
	       (uapi_flags & KBLOOM_CREATE_BLOCKED ? KBLOOM_CORE_BLOCKED : 0);
}

u32 kbloom_uapi_flags(u32 core_flags)
{
	return (core_flags & KBLOOM_CORE_COUNTING ? KBLOOM_CREATE_COUNTING : 0) |
	       (core_flags & KBLOOM_CORE_BLOCKED ? KBLOOM_CREATE_BLOCKED : 0);
}

/* A filter's BPF access from its creation flags: write implies read. */
u8 kbloom_bpf_ops(u32 uapi_flags)
{
	if (uapi_flags & KBLOOM_CREATE_BPF_WRITE)
		return KBLOOM_BPF_OPS_WRITE;
	return uapi_flags & KBLOOM_CREATE_BPF_READ ? KBLOOM_BPF_OPS_READ : 0;
}

/* And back, as INFO, EXPORT and CREATE report it. */
u32 kbloom_bpf_flags(u8 bpf_ops)
{
	if (bpf_ops & BIT(KBLOOM_OP_ADD))
		return KBLOOM_CREATE_BPF;
	return bpf_ops ? KBLOOM_CREATE_BPF_READ : 0;
}

/*
 * What CREATE and IMPORT both require of a filter's parameters: the
 * core's rules (kbloom_params_valid(), with each generation's rate), and a
 * design fill for rotate-at-fill to watch for.
 */
int kbloom_params_check(const struct kbloom_params *p)
{
	if (!kbloom_params_valid(p->nbits, p->nhashes, p->flags, p->capacity,
				 kbloom_window_fpr(p->fpr_ppb, p->generations)))
		return -EINVAL;
	if (p->rotate_at_fill &&
	    !kbloom_fill_at(p->nbits, p->nhashes, p->capacity, p->flags))
		return -EINVAL;
	/* A counter is not a change that an OR can carry (the uapi). */
	if (p->track_changes && p->flags & KBLOOM_CORE_COUNTING)
		return -EINVAL;
	return 0;
}

/* The window of a new filter: @c's fields into @p, checked. */
int kbloom_create_window(const struct kbloom_create *c,
			 struct kbloom_params *p)
{
	if (!c->generations)
		return c->window_ms ||
		       c->flags & KBLOOM_CREATE_ROTATE_AT_FILL ? -EINVAL : 0;
	if (c->generations < 2 || c->generations > KBLOOM_MAX_GENERATIONS ||
	    (c->flags & KBLOOM_CREATE_ROTATE_AT_FILL && !c->capacity))
		return -EINVAL;
	p->generations = c->generations;
	p->window_ms = c->window_ms;
	p->rotate_at_fill = c->flags & KBLOOM_CREATE_ROTATE_AT_FILL;
	return 0;
}

/* Everything of a new filter but the name, from @c into @p, checked. */
int kbloom_create_params(struct kbloom_create *c, struct kbloom_params *p)
{
	int ret;

	if (!c->hash_scheme)
		c->hash_scheme = KBLOOM_HASH_DEFAULT;
	if (!kbloom_scheme_valid(c->hash_scheme) ||
	    memchr_inv(c->like, 0, sizeof(c->like)))
		return -EINVAL;
	p->flags |= kbloom_scheme_flags(c->hash_scheme);
	ret = kbloom_create_window(c, p);
	if (ret)
		return ret;
	p->capacity = c->capacity;
	if (c->fpr_ppb) {
		/* Sized by capacity and rate: bits, hashes are outputs. */
		if (c->bits || c->hashes || !c->capacity)
			return -EINVAL;
		ret = kbloom_size_flags(c->capacity,
					kbloom_window_fpr(c->fpr_ppb,
							  p->generations),
					p->flags, &p->nbits, &p->nhashes);
		if (ret)
			return ret;
		p->fpr_ppb = c->fpr_ppb;
	} else {
		if (!c->bits || (!c->hashes && !c->capacity))
			return -EINVAL;
		p->nbits = c->bits;
		p->nhashes = c->hashes ? c->hashes :
			     kbloom_optimal_hashes(c->bits, c->capacity);
	}
	return kbloom_params_check(p);
}
