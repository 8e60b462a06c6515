/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's sizing and validation rules, from its own source:
 * kmod/kbloom_core.c is built into bloomctl (see sizing.c), so that calc
 * prints what create gets and an image load refuses exactly what
 * KBLOOM_IOC_IMPORT would.
 */
#ifndef BLOOMCTL_SIZING_H
#define BLOOMCTL_SIZING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int sizing_size(uint64_t capacity, uint32_t fpr_ppb, uint32_t flags,
		uint64_t *bits, uint32_t *hashes);
uint32_t sizing_block_cells(uint32_t flags);
double sizing_fpr_blocked(uint64_t bits, uint32_t hashes, uint64_t keys,
			  uint32_t flags);
uint64_t sizing_bytes(uint64_t bits, uint32_t flags);
uint32_t sizing_window_fpr(uint32_t fpr_ppb, uint32_t generations);
bool sizing_params_valid(uint64_t bits, uint32_t hashes, uint32_t flags,
			 uint64_t capacity, uint32_t fpr_ppb, char *why,
			 size_t whylen);
bool sizing_padding_clear(const void *payload, uint64_t bits,
			  uint32_t flags);

#endif /* BLOOMCTL_SIZING_H */
