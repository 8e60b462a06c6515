// SPDX-License-Identifier: GPL-2.0
/*
 * Keys: add, query, test-and-add and remove share one streaming path. Keys
 * come from the arguments, or a line each from stdin or --file
 * (keyparse.c), and go to the module in batches.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "bloomctl.h"
#include "flowkey.h"
#include "keyparse.h"

/* Default batch: large enough to amortise the ioctl, small enough to stream. */
#define DEFAULT_BATCH_KEYS	65536U
#define DEFAULT_BATCH_BYTES	(4U << 20)

enum key_op { OP_ADD, OP_QUERY, OP_TEST_AND_ADD, OP_REMOVE };

struct op_desc {
	unsigned long ioc_one;
	unsigned long ioc_batch;
	int open_flags;
	/* Per-key words for result bit 1 and 0 (NULL: no per-key output). */
	const char *yes, *no;
	/* Names of the totals, for --count and JSON. */
	const char *total, *total_yes, *total_no;
};

static const struct op_desc key_ops[] = {
	[OP_ADD] = {
		KBLOOM_IOC_ADD, KBLOOM_IOC_ADD_BATCH, O_RDWR,
		NULL, NULL, "added", NULL, NULL,
	},
	[OP_QUERY] = {
		/* QUERY works on a read-only fd: no need for write access. */
		KBLOOM_IOC_QUERY, KBLOOM_IOC_QUERY_BATCH, O_RDONLY,
		"maybe", "no", "queried", "present", "absent",
	},
	[OP_TEST_AND_ADD] = {
		KBLOOM_IOC_TEST_AND_ADD, KBLOOM_IOC_TEST_AND_ADD_BATCH, O_RDWR,
		"seen", "new", "processed", "seen", "new",
	},
	[OP_REMOVE] = {
		/* 0 is a refusal: the filter says the key is not there. */
		KBLOOM_IOC_REMOVE, KBLOOM_IOC_REMOVE_BATCH, O_RDWR,
		"removed", "absent", "processed", "removed", "absent",
	},
};

struct key_stream {
	const struct op_desc *op;
	const char *name;
	int fd;
	/* A handle bound to the filter (KBLOOM_IOC_OPEN): keys go there, with
	 * no name to copy and look up; else the device, by name. */
	bool handle;
	bool hex;
	/* --key FIELDS: keys are flows (flowkey.c), given by --flow too. */
	bool flows;
	struct flow_spec flow;
	char **flow_args;
	int nflow_args;
	/* Print each key's result (query and test-and-add without --count). */
	bool per_key;
	/* --count: print only the totals. */
	bool count_only;
	/* --file, or NULL. */
	const char *file;

	uint32_t batch_keys;	/* keys per call; 1: the one-key ioctls */
	size_t keys_cap;	/* bytes of keys per call */

	/* The batch being filled. */
	unsigned char *keys;
	size_t keys_used;
	__u32 *lens;
	uint32_t nkeys;
	unsigned char *results;
	/* With --hex or --key, the keys as typed, to echo them as given. */
	char *text;
	size_t text_used, text_cap;
	uint32_t *text_lens;

	uint64_t total, yes;
};

static void emit_result(struct key_stream *ks, const void *key, size_t len,
			bool yes)
{
	const char *word = yes ? ks->op->yes : ks->op->no;

	if (jw) {
		jw_start_object(jw);
		jw_key(jw, "key");
		jw_bytes(jw, key, len);
		jw_kv_string(jw, "result", word);
		jw_end_object(jw);
		return;
	}
	fwrite(key, 1, len, stdout);
	putchar(' ');
	fputs(word, stdout);
	putchar('\n');
}

/* The one-key ioctl: @done and @hits are 0 or 1. Returns 0 or the errno. */
static int flush_one(struct key_stream *ks, uint32_t *done, uint32_t *hits)
{
	struct kbloom_key k;

	memset(&k, 0, sizeof(k));
	if (!ks->handle)
		set_name(k.name, ks->name);
	k.key = (__u64)(uintptr_t)ks->keys;
	k.len = ks->lens[0];
	if (ioctl(ks->fd, ks->op->ioc_one, &k))
		return errno;
	*done = 1;
	*hits = !!k.result;
	ks->results[0] = *hits;
	return 0;
}

/* The batched ioctl. Returns 0, the errno, or -1 for a short success. */
static int flush_batch(struct key_stream *ks, uint32_t *done, uint32_t *hits)
{
	struct kbloom_batch b;
	int err = 0;

	memset(&b, 0, sizeof(b));
	if (!ks->handle)
		set_name(b.name, ks->name);
	b.keys = (__u64)(uintptr_t)ks->keys;
	b.lens = (__u64)(uintptr_t)ks->lens;
	if (ks->per_key)
		b.results = (__u64)(uintptr_t)ks->results;
	b.keys_bytes = ks->keys_used;
	b.count = ks->nkeys;
	if (ioctl(ks->fd, ks->op->ioc_batch, &b))
		err = errno;
	else if (b.done != ks->nkeys)
		err = -1;
	/* Written back even on error, when the call got that far. */
	*done = b.done <= ks->nkeys ? b.done : 0;
	*hits = b.hits <= *done ? b.hits : *done;
	return err;
}

/* The results of the first @done keys of the batch, in order. */
static void emit_results(struct key_stream *ks, uint32_t done)
{
	const unsigned char *key = ks->keys;
	const char *text = ks->text;
	uint32_t i;

	for (i = 0; i < done; i++) {
		bool yes = ks->results[i / 8] & (1U << (i % 8));

		if (ks->text) {
			emit_result(ks, text, ks->text_lens[i], yes);
			text += ks->text_lens[i];
		} else {
			emit_result(ks, key, ks->lens[i], yes);
		}
		key += ks->lens[i];
	}
}

static void flush_error(const struct key_stream *ks, int err, uint32_t done,
			uint32_t count)
{
	if (err < 0)
		pr_err("filter '%s': module processed %" PRIu32 " of %" PRIu32 " keys but reported success",
		       ks->name, done, count);
	/* Only remove gets it: the first call fails, so ks->total is 0. */
	else if (err == EOPNOTSUPP && ks->op == &key_ops[OP_REMOVE])
		pr_err("filter '%s' is not a counting filter (create it with --counting)",
		       ks->name);
	else if (ks->total == 0)
		pr_err("filter '%s': %s", ks->name, kerr(err));
	else
		pr_err("filter '%s': failed at key %" PRIu64 " (%" PRIu64 " keys done): %s",
		       ks->name, ks->total + 1, ks->total, kerr(err));
}

/* Send the pending keys to the module and print their results. */
static int flush_keys(struct key_stream *ks)
{
	uint32_t done = 0, hits = 0, count = ks->nkeys;
	int err;

	if (!ks->nkeys)
		return 0;
	if (ks->batch_keys == 1)
		err = flush_one(ks, &done, &hits);
	else
		err = flush_batch(ks, &done, &hits);
	if (ks->per_key)
		emit_results(ks, done);
	ks->total += done;
	ks->yes += hits;
	ks->nkeys = 0;
	ks->keys_used = 0;
	ks->text_used = 0;
	if (!err)
		return 0;
	flush_error(ks, err, done, count);
	return -1;
}

/* Where a key came from, for error messages: a line, or an argument. */
struct key_origin {
	const char *src;		/* file name, "stdin", or NULL */
	unsigned long long line;
};

/*
 * Report bad input. The keys before it are sent first, so that "every key
 * before the bad one was processed" holds whatever the batch size.
 */
static void __attribute__((format(printf, 5, 6)))
key_err(struct key_stream *ks, const struct key_origin *o, const char *key,
	size_t len, const char *fmt, ...)
{
	char label[KEY_SHOW_MAX], *msg = NULL;
	va_list ap;
	int ret;

	flush_keys(ks);
	va_start(ap, fmt);
	ret = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (ret < 0)
		msg = NULL;
	key_show(label, key, len);
	if (o->src && len)
		pr_err("%s: line %llu: '%s': %s", o->src, o->line, label,
		       msg ? msg : "bad key");
	else if (o->src)
		pr_err("%s: line %llu: %s", o->src, o->line,
		       msg ? msg : "bad key");
	else
		pr_err("key '%s': %s", label, msg ? msg : "bad key");
	free(msg);
}

/* The message for a key key_check() refused. */
static void key_refused(struct key_stream *ks, const struct key_origin *o,
			const char *s, size_t len, enum key_status st,
			size_t where)
{
	switch (st) {
	case KEY_EMPTY:
		key_err(ks, o, s, len, "empty key (keys are 1 to %d bytes)",
			KBLOOM_KEY_MAX);
		break;
	case KEY_ODD_HEX:
		key_err(ks, o, s, len,
			"not hex: needs an even number of hex digits");
		break;
	case KEY_NOT_HEX:
		key_err(ks, o, s, len, "not hex: '%c' at offset %zu",
			isprint((unsigned char)s[where]) ? s[where] : '?',
			where);
		break;
	default:
		key_err(ks, o, s, len, "key of %zu bytes, longer than %d",
			ks->hex ? len / 2 : len, KBLOOM_KEY_MAX);
		break;
	}
}

/* Append one key (as typed) to the batch, sending the batch when full. */
static int stream_key(struct key_stream *ks, const char *s, size_t len,
		      const struct key_origin *o)
{
	unsigned char flow[KBLOOM_FLOW_KEY_MAX];
	char err[FLOW_ERR_MAX];
	size_t klen = 0, where = 0;
	enum key_status st;
	int ret;

	if (ks->flows) {
		ret = flow_key(&ks->flow, s, len, flow, err);
		if (ret < 0) {
			key_err(ks, o, s, len, "%s", err);
			return -1;
		}
		klen = ret;
	} else {
		st = key_check(s, len, ks->hex, &klen, &where);
		if (st != KEY_OK) {
			key_refused(ks, o, s, len, st, where);
			return -1;
		}
	}
	if (ks->nkeys == ks->batch_keys ||
	    ks->keys_used + klen > ks->keys_cap ||
	    (ks->text && ks->text_used + len > ks->text_cap)) {
		if (flush_keys(ks))
			return -1;
	}
	if (ks->flows)
		memcpy(ks->keys + ks->keys_used, flow, klen);
	else
		key_decode(s, len, ks->hex, ks->keys + ks->keys_used);
	if (ks->text) {
		memcpy(ks->text + ks->text_used, s, len);
		ks->text_used += len;
		ks->text_lens[ks->nkeys] = len;
	}
	ks->keys_used += klen;
	ks->lens[ks->nkeys++] = klen;
	return 0;
}

static ssize_t fd_read(void *ctx, void *buf, size_t len)
{
	return read(*(int *)ctx, buf, len);
}

/* Every line of @lr a key; the keys before a bad one are still sent. */
static int stream_reader(struct key_stream *ks, struct line_reader *lr,
			 struct key_origin *o)
{
	size_t len;
	char *line;
	int ret, err;

	while ((ret = read_line(lr, &line, &len)) == LINE_OK) {
		o->line = lr->line;
		if (stream_key(ks, line, len, o))
			return -1;
	}
	if (ret == LINE_TOO_LONG) {
		o->line = lr->line + 1;
		key_err(ks, o, "", 0, "too long (keys are 1 to %d bytes%s)",
			KBLOOM_KEY_MAX, ks->hex ? ", twice that in hex" : "");
		return -1;
	}
	if (ret == LINE_ERROR) {
		err = errno;
		flush_keys(ks);
		pr_err("%s: %s", o->src, strerror(err));
		return -1;
	}
	return 0;
}

/* The keys of stdin or --file, one per line. */
static int stream_lines(struct key_stream *ks)
{
	int fd = STDIN_FILENO;
	struct line_reader lr = {
		.read = fd_read, .ctx = &fd, .size = READ_BUF_SIZE,
	};
	struct key_origin o = { .src = "stdin" };
	int ret = -1;

	if (batch_owns_stdin && (!ks->file || !strcmp(ks->file, "-"))) {
		pr_err("no keys: stdin is the batch; give them on the line, or --file");
		return -1;
	}
	if (ks->file && strcmp(ks->file, "-")) {
		fd = open(ks->file, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			pr_err("%s: %s", ks->file, strerror(errno));
			return -1;
		}
		o.src = ks->file;
	}
	lr.buf = malloc(READ_BUF_SIZE);
	if (lr.buf)
		ret = stream_reader(ks, &lr, &o);
	else
		pr_err("%s", strerror(ENOMEM));
	free(lr.buf);
	if (fd != STDIN_FILENO)
		close(fd);
	return ret;
}

/* The keys of the command line: the --flow values, then the operands. */
static int stream_args(struct key_stream *ks, int argc, char **argv)
{
	struct key_origin o = { NULL, 0 };
	int i;

	for (i = 0; i < ks->nflow_args; i++)
		if (stream_key(ks, ks->flow_args[i], strlen(ks->flow_args[i]),
			       &o))
			return -1;
	for (i = optind; i < argc; i++)
		if (stream_key(ks, argv[i], strlen(argv[i]), &o))
			return -1;
	return 0;
}

static void print_totals(struct key_stream *ks)
{
	uint64_t no = ks->total - ks->yes;
	const struct op_desc *op = ks->op;

	if (jw) {
		if (ks->per_key)
			jw_end_array(jw);
		else
			jw_start_object(jw);
		jw_kv_u64(jw, op->total, ks->total);
		if (op->total_yes) {
			jw_kv_u64(jw, op->total_yes, ks->yes);
			jw_kv_u64(jw, op->total_no, no);
		}
		jw_end_object(jw);
		return;
	}
	if (!ks->count_only)
		return;
	if (op->total_yes)
		printf("%s %" PRIu64 ", %s %" PRIu64 ", %s %" PRIu64 "\n",
		       op->total, ks->total, op->total_yes, ks->yes,
		       op->total_no, no);
	else
		printf("%s %" PRIu64 "\n", op->total, ks->total);
}

/*
 * Send the keys to a handle bound to the filter, which the module looks up
 * once here rather than on every call. A missing filter is reported now,
 * before any input is read; any other refusal leaves the keys going by
 * name.
 */
static int open_handle(struct key_stream *ks)
{
	struct kbloom_open o;

	memset(&o, 0, sizeof(o));
	set_name(o.name, ks->name);
	if (ioctl(ks->fd, KBLOOM_IOC_OPEN, &o)) {
		if (errno != ENOENT)
			return 0;
		pr_err("filter '%s': %s", ks->name, kerr(errno));
		return -1;
	}
	close(ks->fd);
	ks->fd = o.fd;
	ks->handle = true;
	return 0;
}

/*
 * The batch size the module allows; it may lack batching altogether, then
 * the one-key ioctls do the job. A handle if the module has them.
 */
static int check_module(struct key_stream *ks, enum key_op opi)
{
	struct kbloom_version v;

	/* An old or odd module: let the real call report the problem. */
	if (device_version(ks->fd, &v))
		return 0;
	if (opi == OP_TEST_AND_ADD &&
	    !(v.features & KBLOOM_FEATURE_TEST_AND_ADD)) {
		pr_err("filter '%s': the module does not support test-and-add",
		       ks->name);
		return -1;
	}
	if (opi == OP_REMOVE && !(v.features & KBLOOM_FEATURE_COUNTING)) {
		pr_err("filter '%s': the module does not support counting filters, so no remove",
		       ks->name);
		return -1;
	}
	if (!(v.features & KBLOOM_FEATURE_BATCH))
		ks->batch_keys = 1;
	else if (v.max_batch && ks->batch_keys > v.max_batch)
		ks->batch_keys = v.max_batch;
	if (v.features & KBLOOM_FEATURE_HANDLE)
		return open_handle(ks);
	return 0;
}

static int key_opt(void *ctx, int c, const char *arg)
{
	struct key_stream *ks = ctx;
	char err[FLOW_ERR_MAX];
	int ret = 0;

	switch (c) {
	case OPT_KEY:
		ks->flows = true;
		ret = flow_parse_fields(&ks->flow, arg, err);
		break;
	case OPT_FLOW:
		/* optarg points into argv, which outlives the command. */
		ks->flow_args[ks->nflow_args++] = (char *)arg;
		return 0;
	case OPT_SRC_PREFIX:
		ret = flow_parse_prefix(&ks->flow.src_prefix, "--src-prefix",
					arg, err);
		break;
	case OPT_DST_PREFIX:
		ret = flow_parse_prefix(&ks->flow.dst_prefix, "--dst-prefix",
					arg, err);
		break;
	case OPT_FAMILY:
		ret = flow_parse_family(&ks->flow, arg, err);
		break;
	case OPT_FILE:
		ks->file = arg;
		return 0;
	case OPT_HEX:
		ks->hex = true;
		return 0;
	case OPT_BATCH:
		return parse_u32("--batch", arg, 1, KBLOOM_BATCH_MAX,
				 &ks->batch_keys);
	case OPT_COUNT:
		ks->count_only = true;
		return 0;
	default:
		return -1;
	}
	if (ret)
		pr_err("%s", err);
	return ret;
}

/* The batch buffers, once the batch size is known. */
static int key_stream_alloc(struct key_stream *ks)
{
	/* In 64 bits: 2^20 keys of 4 KiB overflow a 32-bit size_t. */
	ks->keys_cap = DEFAULT_BATCH_BYTES;
	if ((uint64_t)ks->batch_keys * KBLOOM_KEY_MAX < ks->keys_cap)
		ks->keys_cap = ks->batch_keys * KBLOOM_KEY_MAX;
	ks->keys = malloc(ks->keys_cap);
	ks->lens = calloc(ks->batch_keys, sizeof(*ks->lens));
	/* Zeroed: only bits below "done" are ever written by the module. */
	ks->results = calloc(ks->batch_keys / 8 + 1, 1);
	if ((ks->hex || ks->flows) && ks->per_key) {
		ks->text_cap = 2 * ks->keys_cap;
		ks->text = malloc(ks->text_cap);
		ks->text_lens = calloc(ks->batch_keys, sizeof(*ks->text_lens));
		if (!ks->text || !ks->text_lens) {
			free(ks->text);
			ks->text = NULL;
			pr_err("%s", strerror(ENOMEM));
			return -1;
		}
	}
	if (!ks->keys || !ks->lens || !ks->results) {
		pr_err("%s", strerror(ENOMEM));
		return -1;
	}
	return 0;
}

static void key_stream_free(struct key_stream *ks)
{
	free(ks->flow_args);
	free(ks->text_lens);
	free(ks->text);
	free(ks->results);
	free(ks->lens);
	free(ks->keys);
	if (ks->fd >= 0)
		close(ks->fd);
}

/* --key and its companions, checked together. */
static int flow_operands(const struct cmd *cmd, struct key_stream *ks)
{
	char err[FLOW_ERR_MAX];

	if (!ks->flows) {
		if (ks->nflow_args || ks->flow.src_prefix >= 0 ||
		    ks->flow.dst_prefix >= 0 || ks->flow.family) {
			pr_err("%s: --flow, --src-prefix, --dst-prefix and --family need --key FIELDS",
			       cmd->name);
			return -1;
		}
		return 0;
	}
	if (ks->hex) {
		pr_err("%s: --key and --hex are exclusive (flows are typed as text)",
		       cmd->name);
		return -1;
	}
	if (flow_spec_check(&ks->flow, err)) {
		pr_err("%s: %s", cmd->name, err);
		return -1;
	}
	return 0;
}

/* NAME, then KEY... or --file: checked before the device is opened. */
static int key_operands(const struct cmd *cmd, int argc, char **argv,
			struct key_stream *ks)
{
	if (optind >= argc) {
		pr_err("%s: missing filter NAME", cmd->name);
		return -1;
	}
	ks->name = argv[optind++];
	if (check_name(ks->name))
		return -1;
	if (ks->file && (optind < argc || ks->nflow_args)) {
		pr_err("%s: --file '%s' and KEY arguments are exclusive",
		       cmd->name, ks->file);
		return -1;
	}
	return flow_operands(cmd, ks);
}

static int key_cmd(const struct cmd *cmd, int argc, char **argv,
		   enum key_op opi)
{
	static const struct option longopts[] = {
		{ "file",	required_argument, NULL, OPT_FILE },
		{ "hex",	no_argument,	   NULL, OPT_HEX },
		{ "batch",	required_argument, NULL, OPT_BATCH },
		{ "count",	no_argument,	   NULL, OPT_COUNT },
		{ "key",	required_argument, NULL, OPT_KEY },
		{ "flow",	required_argument, NULL, OPT_FLOW },
		{ "src-prefix",	required_argument, NULL, OPT_SRC_PREFIX },
		{ "dst-prefix",	required_argument, NULL, OPT_DST_PREFIX },
		{ "family",	required_argument, NULL, OPT_FAMILY },
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	struct key_stream ks = {
		.op = &key_ops[opi],
		.fd = -1,
		.batch_keys = DEFAULT_BATCH_KEYS,
	};
	int ret;

	flow_spec_init(&ks.flow);
	/* Room for every --flow: there are fewer than argc. */
	ks.flow_args = calloc(argc, sizeof(*ks.flow_args));
	if (!ks.flow_args) {
		pr_err("%s", strerror(ENOMEM));
		return EXIT_ERROR;
	}
	ret = parse_options(cmd, argc, argv, longopts, key_opt, &ks);
	if (ret >= 0)
		goto out;
	ret = EXIT_ERROR;
	if (key_operands(cmd, argc, argv, &ks))
		goto out;
	ks.per_key = ks.op->yes && !ks.count_only;
	ks.fd = open_device(ks.op->open_flags);
	if (ks.fd < 0 || check_module(&ks, opi) || key_stream_alloc(&ks))
		goto out;
	if (jw && ks.per_key) {
		jw_start_object(jw);
		jw_key(jw, "results");
		jw_start_array(jw);
	}
	ret = optind < argc || ks.nflow_args ? stream_args(&ks, argc, argv) :
					       stream_lines(&ks);
	/*
	 * Even after bad input, send what came before it, so that "every key
	 * before the bad one was processed" holds.
	 */
	if (flush_keys(&ks) || ret) {
		ret = EXIT_ERROR;
		goto out;
	}
	print_totals(&ks);
	ret = ks.op->total_yes && ks.yes < ks.total ? EXIT_NEGATIVE : 0;
out:
	key_stream_free(&ks);
	return ret;
}

int cmd_add(const struct cmd *cmd, int argc, char **argv)
{
	return key_cmd(cmd, argc, argv, OP_ADD);
}

int cmd_query(const struct cmd *cmd, int argc, char **argv)
{
	return key_cmd(cmd, argc, argv, OP_QUERY);
}

int cmd_test_and_add(const struct cmd *cmd, int argc, char **argv)
{
	return key_cmd(cmd, argc, argv, OP_TEST_AND_ADD);
}

int cmd_remove(const struct cmd *cmd, int argc, char **argv)
{
	return key_cmd(cmd, argc, argv, OP_REMOVE);
}
