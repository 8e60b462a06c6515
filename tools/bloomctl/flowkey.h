/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Flow keys from text: "10.0.0.1,53" with --key saddr,dport becomes the
 * bytes the bloom iptables match (kmod/xt_bloom.c) builds from a packet of
 * that flow, the KBLOOM_FLOW_* layout of <linux/kbloom.h>. No device here,
 * so that the fuzz harnesses and bloomctl run the same code.
 */
#ifndef BLOOMCTL_FLOWKEY_H
#define BLOOMCTL_FLOWKEY_H

#include <stddef.h>
#include <stdint.h>

#include <linux/kbloom.h>

#define FLOW_NFIELDS		5
#define FLOW_ERR_MAX		256

/**
 * struct flow_spec - how flows are typed and keyed
 * @fields: the KBLOOM_FLOW_* bits of --key.
 * @order: the fields in the order --key lists them: the order of the
 *	comma-separated values of a flow.
 * @nfields: entries of @order.
 * @family: KBLOOM_FLOW_IPV4 or KBLOOM_FLOW_IPV6 (--family), or 0: the
 *	family of the flow's addresses, IPv4 when it has none.
 * @src_prefix: --src-prefix, or -1 for the whole address (32 or 128).
 * @dst_prefix: likewise --dst-prefix.
 */
struct flow_spec {
	uint8_t fields;
	uint8_t order[FLOW_NFIELDS];
	int nfields;
	int family;
	int src_prefix, dst_prefix;
};

void flow_spec_init(struct flow_spec *fs);
int flow_parse_fields(struct flow_spec *fs, const char *list, char *err);
int flow_parse_family(struct flow_spec *fs, const char *s, char *err);
int flow_parse_prefix(int *prefix, const char *opt, const char *s,
		      char *err);
int flow_spec_check(const struct flow_spec *fs, char *err);
int flow_key(const struct flow_spec *fs, const char *s, size_t len,
	     unsigned char out[KBLOOM_FLOW_KEY_MAX], char *err);

#endif /* BLOOMCTL_FLOWKEY_H */
