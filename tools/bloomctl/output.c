// SPDX-License-Identifier: GPL-2.0
/*
 * bloomctl's output: errors and warnings, JSON mode, and a filter's
 * statistics as show, list and create print them.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomctl.h"
#include "image.h"
#include "sizing.h"

/* The program that prints: bloomctl, or bloomsync, which shares this. */
const char *prog_name = "bloomctl";
static struct jw json_writer;
static bool pretty_output;
struct jw *jw;

void enable_json(bool pretty)
{
	pretty_output |= pretty;
	jw_init(&json_writer, stdout, pretty_output);
	jw = &json_writer;
}

/*
 * The output mode as a batch's global options set it, for each line
 * afresh: a line's -j, or an error that ended its JSON document, is not
 * the next line's.
 */
void json_mode_get(struct json_mode *m)
{
	m->on = jw != NULL;
	m->pretty = pretty_output;
}

void json_mode_set(const struct json_mode *m)
{
	pretty_output = m->pretty;
	jw = NULL;
	if (m->on)
		enable_json(m->pretty);
}

/*
 * Report an error on stderr and, in JSON mode, as {"error":...} on stdout,
 * so that a script reading either stream sees it.
 */
void pr_err(const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int ret;

	va_start(ap, fmt);
	ret = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (ret < 0) {
		fprintf(stderr, "%s: out of memory\n", prog_name);
		if (jw)
			jw_error(jw, "out of memory");
		return;
	}
	if (batch_where) {
		char *at;

		/* In a batch, every error names its line. */
		if (asprintf(&at, "%s: %s", batch_where, msg) >= 0) {
			free(msg);
			msg = at;
		}
	}
	fprintf(stderr, "%s: %s\n", prog_name, msg);
	if (jw)
		jw_error(jw, msg);
	free(msg);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: warning: ", prog_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	putc('\n', stderr);
}

/*
 * Keys in a filter with X of its m positions set, Swamidass & Baldi:
 * n = -(m/k) ln(1 - X/m). Infinite (NAN here, null in JSON) when every bit
 * is set: then any number of keys fits. A blocked filter (@flags, the
 * uapi's) fills as 1 - X/m = e^(-(nB/m)(1 - (1-1/B)^k)) (see the core's
 * kbloom_fill_at()), whose inverse is used instead.
 */
double estimate_keys(uint64_t x, uint64_t m, uint32_t k, uint32_t flags)
{
	double cells = sizing_block_cells(flags);

	if (!m || !k || x >= m)
		return NAN;
	if (flags & KBLOOM_CREATE_BLOCKED)
		return -((double)m / cells) * log1p(-(double)x / (double)m) /
		       -expm1(k * log1p(-1 / cells));
	return -((double)m / k) * log1p(-(double)x / (double)m);
}

/*
 * The rate a filter with X of its m positions set has now: (X/m)^k, the
 * chance that k independent positions are all set; for a blocked filter,
 * whose blocks fill unevenly, the module's blocked rate at the keys
 * estimate_keys() finds (1 when full).
 */
double estimate_fpr(uint64_t x, uint64_t m, uint32_t k, uint32_t flags)
{
	double n = estimate_keys(x, m, k, flags);

	if (!m)
		return NAN;
	if (!(flags & KBLOOM_CREATE_BLOCKED))
		return pow((double)x / (double)m, k);
	if (isnan(n))
		return 1;
	return sizing_fpr_blocked(m, k, (uint64_t)llround(n), flags);
}

/* What BPF programs may do with a filter of these creation flags. */
const char *bpf_access_name(uint32_t flags)
{
	if (flags & KBLOOM_CREATE_BPF_WRITE)
		return "write";
	return flags & KBLOOM_CREATE_BPF_READ ? "read" : "none";
}

/* Members of a filter's JSON object, shared by show, list and create. */
void json_info(const struct kbloom_info *info)
{
	double m = info->bits, x = info->bits_set;

	jw_key(jw, "name");
	jw_bytes(jw, info->name, strnlen(info->name, KBLOOM_NAME_MAX));
	jw_kv_u64(jw, "bits", info->bits);
	jw_kv_u64(jw, "hashes", info->hashes);
	jw_kv_u64(jw, "capacity", info->capacity);
	if (info->fpr_ppb)
		jw_kv_double(jw, "fpr_target", info->fpr_ppb / 1e9);
	else
		jw_kv_null(jw, "fpr_target");
	jw_kv_u64(jw, "flags", info->flags);
	jw_kv_bool(jw, "counting", info->flags & KBLOOM_CREATE_COUNTING);
	jw_kv_string(jw, "layout",
		     info->flags & KBLOOM_CREATE_BLOCKED ? "blocked" : "plain");
	jw_kv_u64(jw, "hash_scheme", info->hash_scheme);
	jw_kv_string(jw, "hash_scheme_name",
		     hash_scheme_name(info->hash_scheme));
	jw_kv_string(jw, "bpf", bpf_access_name(info->flags));
	jw_kv_bool(jw, "track_changes",
		   info->flags & KBLOOM_CREATE_TRACK_CHANGES);
	jw_kv_u64(jw, "bits_set", info->bits_set);
	jw_kv_u64(jw, "saturated", info->saturated);
	jw_kv_u64(jw, "adds", info->adds);
	jw_kv_u64(jw, "queries", info->queries);
	jw_kv_u64(jw, "hits", info->hits);
	jw_kv_u64(jw, "memory_bytes", info->memory_bytes);
	jw_kv_u64(jw, "window_ms", info->window_ms);
	jw_kv_u64(jw, "generations", info->generations);
	jw_kv_u64(jw, "rotations", info->rotations);
	jw_kv_u64(jw, "newest_age_ms", info->newest_age_ms);
	if (!info->bits) {
		/* Not from a sane module; keep the output valid JSON. */
		jw_kv_null(jw, "fill_ratio");
		jw_kv_null(jw, "estimated_fpr");
		jw_kv_null(jw, "estimated_keys");
		return;
	}
	jw_kv_double(jw, "fill_ratio", x / m);
	jw_kv_double(jw, "estimated_fpr",
		     estimate_fpr(info->bits_set, info->bits, info->hashes,
				  info->flags));
	/* Unbounded when full. */
	if (info->bits_set >= info->bits || !info->hashes)
		jw_kv_null(jw, "estimated_keys");
	else
		jw_kv_double(jw, "estimated_keys",
			     estimate_keys(info->bits_set, info->bits,
					   info->hashes, info->flags));
}

void print_info(const struct kbloom_info *info)
{
	double m = info->bits, x = info->bits_set;
	bool counting = info->flags & KBLOOM_CREATE_COUNTING;

	printf("filter '%.*s'\n", KBLOOM_NAME_MAX, info->name);
	printf("  bits:           %llu (%llu bytes)\n",
	       (unsigned long long)info->bits,
	       (unsigned long long)info->memory_bytes);
	printf("  hashes:         %u\n", info->hashes);
	if (info->capacity)
		printf("  capacity:       %llu\n",
		       (unsigned long long)info->capacity);
	else
		printf("  capacity:       -\n");
	if (info->fpr_ppb)
		printf("  fpr target:     %.9g\n", info->fpr_ppb / 1e9);
	else
		printf("  fpr target:     -\n");
	printf("  hash scheme:    %s (%u)\n",
	       hash_scheme_name(info->hash_scheme), info->hash_scheme);
	if (info->flags)
		printf("  flags:          0x%x\n", info->flags);
	printf("  counting:       %s\n", counting ? "yes" : "no");
	printf("  layout:         %s\n",
	       info->flags & KBLOOM_CREATE_BLOCKED ?
	       "blocked (64-byte blocks)" : "plain");
	printf("  bpf:            %s\n", bpf_access_name(info->flags));
	if (info->flags & KBLOOM_CREATE_TRACK_CHANGES)
		printf("  changes:        tracked (64-byte blocks)\n");
	if (info->generations) {
		printf("  generations:    %u (bits, hashes and %s are per generation, the newest's)\n",
		       info->generations,
		       counting ? "counters set" : "bits set");
		if (info->window_ms)
			printf("  window:         %u ms\n", info->window_ms);
		else
			printf("  window:         0 (rotates by hand only)\n");
		printf("  rotations:      %llu\n",
		       (unsigned long long)info->rotations);
		printf("  newest age:     %llu ms\n",
		       (unsigned long long)info->newest_age_ms);
	}
	/* For a counting filter X is the number of non-zero counters. */
	printf("  %s   %llu (%.2f%% full)\n",
	       counting ? "counters set:" : "bits set:    ",
	       (unsigned long long)info->bits_set, m ? 100 * x / m : 0.0);
	printf("  saturated:      %llu%s\n",
	       (unsigned long long)info->saturated,
	       counting ? " (counters stuck at 15)" : "");
	printf("  adds:           %llu\n", (unsigned long long)info->adds);
	printf("  queries:        %llu\n", (unsigned long long)info->queries);
	printf("  hits:           %llu\n", (unsigned long long)info->hits);
	if (!m)
		return;
	printf("  estimated fpr:  %.3g\n",
	       estimate_fpr(info->bits_set, info->bits, info->hashes,
			    info->flags));
	if (info->bits_set < info->bits && info->hashes)
		printf("  estimated keys: %.0f\n",
		       estimate_keys(info->bits_set, info->bits, info->hashes,
				     info->flags));
	else
		printf("  estimated keys: - (filter full)\n");
}
