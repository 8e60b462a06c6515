// SPDX-License-Identifier: GPL-2.0
/*
 * bloomctl stats: every filter's fill and traffic, as a table, as JSON,
 * or in the Prometheus text exposition format for the node exporter's
 * textfile collector (--output writes the file atomically, as the
 * collector asks: it must never read half a file).
 *
 * Metric names follow the Prometheus conventions: a kbloom_ prefix, base
 * units in the name (_bytes, _seconds, _ratio), _total on counters; one
 * series per filter, labelled filter="NAME".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bloomctl.h"

#define SYSFS_MEMORY_USED	"/sys/kernel/bloom/memory_used"

enum stats_format { STATS_TEXT, STATS_PROMETHEUS };

struct stats_opts {
	enum stats_format format;
	const char *output;
};

static int stats_opt(void *ctx, int c, const char *arg)
{
	struct stats_opts *o = ctx;

	if (c == OPT_OUTPUT) {
		o->output = arg;
		return 0;
	}
	if (c != OPT_FORMAT)
		return -1;
	if (!strcmp(arg, "text")) {
		o->format = STATS_TEXT;
	} else if (!strcmp(arg, "prometheus")) {
		o->format = STATS_PROMETHEUS;
	} else {
		pr_err("--format '%s': must be text or prometheus (-j for JSON)",
		       arg);
		return -1;
	}
	return 0;
}

/*
 * One metric: its HELP, its TYPE, and a sample per filter: a __u64 field
 * of struct kbloom_info as it is (@field), or what @value computes.
 */
struct metric {
	const char *name;
	const char *type;
	const char *help;
	size_t field;
	double (*value)(const struct kbloom_info *info);
	bool windowed_only;
};

/* A __u64 field: anything else does not compile (a negative bit width). */
#define FIELD(f)							\
	offsetof(struct kbloom_info, f) +				\
	0 * sizeof(struct { int u64 : sizeof(((struct kbloom_info *)0)->f) == 8 ? 1 : -1; }), \
	NULL
#define VALUE(fn)	0, fn

static double metric_value(const struct metric *m,
			   const struct kbloom_info *info)
{
	if (m->value)
		return m->value(info);
	return (double)*(const __u64 *)((const char *)info + m->field);
}

static double m_fill(const struct kbloom_info *i)
{
	return i->bits ? (double)i->bits_set / (double)i->bits : NAN;
}

static double m_est_keys(const struct kbloom_info *i)
{
	if (i->bits_set >= i->bits)
		return INFINITY;
	return estimate_keys(i->bits_set, i->bits, i->hashes, i->flags);
}

static double m_est_fpr(const struct kbloom_info *i)
{
	return estimate_fpr(i->bits_set, i->bits, i->hashes, i->flags);
}

static double m_target_fpr(const struct kbloom_info *i)
{
	return i->fpr_ppb ? i->fpr_ppb / 1e9 : NAN;
}

static double m_window(const struct kbloom_info *i)
{
	return i->window_ms / 1e3;
}

static double m_generations(const struct kbloom_info *i)
{
	return i->generations;
}

static double m_newest_age(const struct kbloom_info *i)
{
	return i->newest_age_ms / 1e3;
}

static const struct metric metrics[] = {
	{ "kbloom_filter_positions", "gauge",
	  "Positions of the filter (bits, or counters of a counting filter); of each generation of a windowed one.",
	  FIELD(bits), false },
	{ "kbloom_filter_positions_set", "gauge",
	  "Positions set (non-zero counters); of a windowed filter, in its newest generation.",
	  FIELD(bits_set), false },
	{ "kbloom_filter_fill_ratio", "gauge",
	  "Positions set over positions.", VALUE(m_fill), false },
	{ "kbloom_filter_capacity_keys", "gauge",
	  "Design capacity: the keys at which the false-positive rate reaches its target (0: not sized).",
	  FIELD(capacity), false },
	{ "kbloom_filter_estimated_keys", "gauge",
	  "Keys in the filter, estimated from its fill (+Inf when full).",
	  VALUE(m_est_keys), false },
	{ "kbloom_filter_false_positive_ratio", "gauge",
	  "False-positive rate, estimated from the fill.", VALUE(m_est_fpr), false },
	{ "kbloom_filter_false_positive_target_ratio", "gauge",
	  "The false-positive rate the filter was sized for (NaN: sized by bits and hashes).",
	  VALUE(m_target_fpr), false },
	{ "kbloom_filter_adds_total", "counter",
	  "Keys added (add and test-and-add).", FIELD(adds), false },
	{ "kbloom_filter_queries_total", "counter",
	  "Keys looked up (query and test-and-add).", FIELD(queries), false },
	{ "kbloom_filter_hits_total", "counter",
	  "Lookups that answered maybe present.", FIELD(hits), false },
	{ "kbloom_filter_saturated_counters", "gauge",
	  "Counters stuck at their maximum (counting filters).",
	  FIELD(saturated), false },
	{ "kbloom_filter_memory_bytes", "gauge",
	  "Memory the filter is charged for.", FIELD(memory_bytes), false },
	{ "kbloom_filter_rotations_total", "counter",
	  "Rotations of a windowed filter.", FIELD(rotations), true },
	{ "kbloom_filter_window_seconds", "gauge",
	  "Window of a windowed filter (0: rotated by hand).", VALUE(m_window), true },
	{ "kbloom_filter_generations", "gauge",
	  "Generations of a windowed filter.", VALUE(m_generations), true },
	{ "kbloom_filter_newest_generation_age_seconds", "gauge",
	  "Time since the newest generation of a windowed filter began.",
	  VALUE(m_newest_age), true },
};

#define NR_METRICS	(sizeof(metrics) / sizeof(metrics[0]))

/* Prometheus's float syntax: NaN, +Inf, else the shortest exact form. */
static void prom_value(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN", f);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else
		fprintf(f, "%.17g", v);
}

/* Names are [A-Za-z0-9_.-]: nothing a label value would have to escape. */
static void prom_filter(FILE *f, const struct metric *m,
			const struct kbloom_info *info)
{
	fprintf(f, "%s{filter=\"%.*s\"} ", m->name, KBLOOM_NAME_MAX,
		info->name);
	prom_value(f, metric_value(m, info));
	putc('\n', f);
}

static void prometheus(FILE *f, const struct kbloom_info *infos, uint32_t n)
{
	uint64_t used;
	uint32_t i, j;

	fputs("# HELP kbloom_filters Filters in the kbloom module.\n"
	      "# TYPE kbloom_filters gauge\n", f);
	fprintf(f, "kbloom_filters %u\n", n);
	if (!read_sysfs_u64(SYSFS_MEMORY_USED, &used))
		fprintf(f, "# HELP kbloom_memory_used_bytes Memory charged to every filter together.\n"
			"# TYPE kbloom_memory_used_bytes gauge\n"
			"kbloom_memory_used_bytes %llu\n",
			(unsigned long long)used);
	fputs("# HELP kbloom_filter_info The filter's kind, as labels; always 1.\n"
	      "# TYPE kbloom_filter_info gauge\n", f);
	for (i = 0; i < n; i++)
		fprintf(f, "kbloom_filter_info{filter=\"%.*s\",counting=\"%s\",layout=\"%s\",hash=\"%s\",bpf=\"%s\"} 1\n",
			KBLOOM_NAME_MAX, infos[i].name,
			infos[i].flags & KBLOOM_CREATE_COUNTING ? "yes" : "no",
			infos[i].flags & KBLOOM_CREATE_BLOCKED ? "blocked" :
								  "plain",
			hash_scheme_name(infos[i].hash_scheme),
			bpf_access_name(infos[i].flags));
	for (j = 0; j < NR_METRICS; j++) {
		const struct metric *m = &metrics[j];

		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help,
			m->name, m->type);
		for (i = 0; i < n; i++)
			if (!m->windowed_only || infos[i].generations)
				prom_filter(f, m, &infos[i]);
	}
}

static void text(FILE *f, const struct kbloom_info *infos, uint32_t n)
{
	uint32_t i;

	if (!n)
		return;
	fprintf(f, "%-*s %7s %12s %12s %10s %10s %12s %12s\n",
		KBLOOM_NAME_MAX / 2, "NAME", "FILL", "EST_KEYS", "CAPACITY",
		"EST_FPR", "TARGET", "ADDS", "HITS");
	for (i = 0; i < n; i++) {
		const struct kbloom_info *info = &infos[i];
		double keys = m_est_keys(info);

		fprintf(f, "%-*.*s %6.2f%% ", KBLOOM_NAME_MAX / 2,
			KBLOOM_NAME_MAX, info->name, 100 * m_fill(info));
		if (isinf(keys))
			fprintf(f, "%12s ", "full");
		else
			fprintf(f, "%12.0f ", keys);
		fprintf(f, "%12llu %10.3g ", (unsigned long long)info->capacity,
			m_est_fpr(info));
		if (info->fpr_ppb)
			fprintf(f, "%10.3g ", m_target_fpr(info));
		else
			fprintf(f, "%10s ", "-");
		fprintf(f, "%12llu %12llu\n", (unsigned long long)info->adds,
			(unsigned long long)info->hits);
	}
}

int cmd_stats(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format",	required_argument, NULL, OPT_FORMAT },
		{ "output",	required_argument, NULL, OPT_OUTPUT },
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	struct stats_opts o = { .format = STATS_TEXT };
	struct kbloom_info *infos;
	char *buf = NULL;
	size_t len = 0;
	uint32_t n;
	FILE *f;
	int ret;

	ret = parse_options(cmd, argc, argv, longopts, stats_opt, &o);
	if (ret >= 0)
		return ret;
	if (no_args(cmd, argc, argv))
		return EXIT_ERROR;
	if (jw && (o.format != STATS_TEXT || o.output)) {
		pr_err("stats: -j is JSON on stdout: no --format or --output with it");
		return EXIT_ERROR;
	}
	if (list_infos(&infos, &n))
		return EXIT_ERROR;
	if (jw) {
		list_json(infos, n);
		free(infos);
		return 0;
	}
	f = o.output ? open_memstream(&buf, &len) : stdout;
	if (!f) {
		pr_err("%s", strerror(errno));
		free(infos);
		return EXIT_ERROR;
	}
	if (o.format == STATS_PROMETHEUS)
		prometheus(f, infos, n);
	else
		text(f, infos, n);
	free(infos);
	if (!o.output)
		return 0;
	if (fclose(f)) {
		pr_err("%s", strerror(errno));
		ret = -1;
	} else {
		ret = write_file_atomic(o.output, 0644, buf, len, NULL, 0);
	}
	free(buf);
	return ret ? EXIT_ERROR : 0;
}
