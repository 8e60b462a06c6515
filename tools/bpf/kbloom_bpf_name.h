/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A filter name in a BPF program's .rodata, set by its loader before the
 * program is loaded: a union so that the program can copy it to the stack
 * eight bytes at a time (kbloom.bpf.h says why it
 * must). Both sides include it: the programs through kbloom.bpf.h, the
 * loaders for their skeletons.
 */
#ifndef __KBLOOM_BPF_NAME_H
#define __KBLOOM_BPF_NAME_H

#include <linux/kbloom.h>
#include <linux/types.h>

union kbloom_bpf_name {
	char s[KBLOOM_NAME_MAX];
	__u64 w[KBLOOM_NAME_MAX / 8];
};

#endif
