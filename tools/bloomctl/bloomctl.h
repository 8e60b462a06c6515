/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bloomctl: what the command families share (main.c, common.c, output.c)
 * and the commands each family provides (filters.c, keys.c, images.c,
 * setops.c, calc.c), in the way of bpftool.
 */
#ifndef BLOOMCTL_H
#define BLOOMCTL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/kbloom.h>

#include "image.h"
#include "json.h"

#ifndef BLOOMCTL_VERSION
#define BLOOMCTL_VERSION	"1.0"
#endif

#define DEFAULT_DEVICE		"/dev/bloom"

/* Exit status, as grep(1): 1 is a negative answer, not an error. */
#define EXIT_NEGATIVE		1
#define EXIT_ERROR		2

/* The device: -d, else $BLOOMCTL_DEVICE, else DEFAULT_DEVICE. */
extern const char *device_path;
/* Non-NULL in JSON mode (-j or -p). */
extern struct jw *jw;

struct cmd {
	const char *name;
	int (*fn)(const struct cmd *cmd, int argc, char **argv);
	const char *args;
	const char *help;
	const char *options;
};

/* Long options of the subcommands; the common ones are below 256. */
enum {
	OPT_CAPACITY = 256,
	OPT_FPR,
	OPT_BITS,
	OPT_HASHES,
	OPT_FILE,
	OPT_HEX,
	OPT_BATCH,
	OPT_COUNT,
	OPT_COUNTING,
	OPT_LAYOUT,
	OPT_LIKE,
	OPT_COMPRESS,
	OPT_REPLACE,
	OPT_HASH,
	OPT_MAX_PAYLOAD,
	OPT_WINDOW,
	OPT_GENERATIONS,
	OPT_ROTATE_AT_FILL,
	OPT_BPF,
	OPT_COUNT_EVENTS,
	OPT_KEY,
	OPT_FLOW,
	OPT_SRC_PREFIX,
	OPT_DST_PREFIX,
	OPT_FAMILY,
	OPT_ALL,
	OPT_EXIST_OK,
	OPT_TRACK_CHANGES,
	OPT_FORMAT,
	OPT_OUTPUT,
};

/* Options every subcommand takes. */
#define COMMON_SHORTOPTS	":hjp"
#define COMMON_LONGOPTS					\
	{ "help",	no_argument,	NULL, 'h' },	\
	{ "json",	no_argument,	NULL, 'j' },	\
	{ "pretty",	no_argument,	NULL, 'p' }
#define END_LONGOPTS		{ NULL, 0, NULL, 0 }

/* main.c, batch.c: the subcommands, one by one or a batch of them */
const struct cmd *find_cmd(const char *name);
int run_batch(const char *path, bool force);
extern const char *batch_where;
extern bool batch_owns_stdin;

/* output.c */
/* "bloomctl", or the name of another program built with these files. */
extern const char *prog_name;
struct json_mode {
	bool on, pretty;
};
void enable_json(bool pretty);
void json_mode_get(struct json_mode *m);
void json_mode_set(const struct json_mode *m);
void __attribute__((format(printf, 1, 2))) pr_err(const char *fmt, ...);
void __attribute__((format(printf, 1, 2))) pr_warn(const char *fmt, ...);
const char *bpf_access_name(uint32_t flags);
void json_info(const struct kbloom_info *info);
void print_info(const struct kbloom_info *info);
double estimate_keys(uint64_t x, uint64_t m, uint32_t k, uint32_t flags);
double estimate_fpr(uint64_t x, uint64_t m, uint32_t k, uint32_t flags);

/* common.c: options and operands */
typedef int (*opt_handler)(void *ctx, int c, const char *arg);
int next_opt(int argc, char **argv, const char *shortopts,
	     const struct option *longopts);
void cmd_usage(const struct cmd *cmd, FILE *f);
int parse_options(const struct cmd *cmd, int argc, char **argv,
		  const struct option *longopts, opt_handler fn, void *ctx);
int parse_u64(const char *opt, const char *s, uint64_t *out);
int parse_u32(const char *opt, const char *s, uint64_t min, uint64_t max,
	      uint32_t *out);
int parse_duration(const char *opt, const char *s, uint32_t *ms);
int check_name(const char *name);
bool name_valid(const char *name);
void set_name(char dst[KBLOOM_NAME_MAX], const char *name);
const char *get_name_arg(const struct cmd *cmd, int argc, char **argv);
int get_one_arg(const struct cmd *cmd, int argc, char **argv,
		const char *what, const char **a);
int get_two_args(const struct cmd *cmd, int argc, char **argv,
		 const char *what, const char **a, const char **b);
int no_args(const struct cmd *cmd, int argc, char **argv);

/* common.c: the device */
const char *kerr(int err);
int open_device(int flags);
int device_version(int fd, struct kbloom_version *v);
int get_info(int fd, const char *name, struct kbloom_info *info);
int read_sysfs_u64(const char *path, uint64_t *v);

/* savefile.c */
int write_full(int fd, const void *buf, uint64_t len);
int write_private_file(const char *path, const void *h, size_t hlen,
		       const void *body, uint64_t blen);
int write_file_atomic(const char *path, mode_t mode, const void *h,
		      size_t hlen, const void *body, uint64_t blen);

/* filters.c: the list of filters */
int list_names(int fd, char **names, uint32_t *count);
int list_infos(struct kbloom_info **infos, uint32_t *n);
void list_json(const struct kbloom_info *infos, uint32_t n);

/* images.c: images of filters, for save, load and the state directory */
struct img_reader;
struct filter_image {
	unsigned char h[IMG_HEADER_MAX];	/* the header */
	size_t hlen;
	const unsigned char *stored;		/* the bytes after it */
	struct image img;			/* img.stored_len of them */
	unsigned char *payload, *zbuf;		/* what @stored points into */
};
int filter_image(int fd, const char *name, bool compress,
		 struct filter_image *fi, bool quiet_enoent);
void filter_image_release(struct filter_image *fi);
int filter_template(int fd, const char *name, struct filter_image *fi);
int read_image_file(const char *path, const char *max, struct img_reader *rd);
int load_image(int fd, const char *name, struct img_reader *rd, bool replace);
int import_image(int fd, const char *name, const struct img_reader *rd,
		 bool replace, uint32_t extra_flags, uint32_t age_ms);

/* statedir.c: every filter to and from a directory */
int save_all(const char *dir, bool compress);

/* calc.c: sizing, shared by calc and create */
#define SIZING_LONGOPTS						\
	{ "capacity",	required_argument, NULL, OPT_CAPACITY },	\
	{ "fpr",	required_argument, NULL, OPT_FPR },		\
	{ "bits",	required_argument, NULL, OPT_BITS },		\
	{ "hashes",	required_argument, NULL, OPT_HASHES },		\
	{ "layout",	required_argument, NULL, OPT_LAYOUT }

struct sizing {
	bool have_capacity, have_fpr, have_bits, have_hashes;
	bool blocked;		/* --layout blocked */
	uint64_t capacity;
	uint64_t bits;
	uint32_t hashes;
	uint32_t fpr_ppb;
	double fpr;
};

int sizing_opt(struct sizing *sz, int c, const char *arg);
int check_sizing(const struct sizing *sz, bool calc, uint32_t flags);
int size_filter(uint64_t n, uint32_t fpr_ppb, uint32_t flags, uint64_t *bits,
		uint32_t *hashes);

/* The subcommands. */
int cmd_calc(const struct cmd *cmd, int argc, char **argv);
int cmd_create(const struct cmd *cmd, int argc, char **argv);
int cmd_destroy(const struct cmd *cmd, int argc, char **argv);
int cmd_clear(const struct cmd *cmd, int argc, char **argv);
int cmd_rotate(const struct cmd *cmd, int argc, char **argv);
int cmd_list(const struct cmd *cmd, int argc, char **argv);
int cmd_show(const struct cmd *cmd, int argc, char **argv);
int cmd_add(const struct cmd *cmd, int argc, char **argv);
int cmd_query(const struct cmd *cmd, int argc, char **argv);
int cmd_test_and_add(const struct cmd *cmd, int argc, char **argv);
int cmd_remove(const struct cmd *cmd, int argc, char **argv);
int cmd_merge(const struct cmd *cmd, int argc, char **argv);
int cmd_estimate(const struct cmd *cmd, int argc, char **argv);
int cmd_save(const struct cmd *cmd, int argc, char **argv);
int cmd_load(const struct cmd *cmd, int argc, char **argv);
int cmd_inspect(const struct cmd *cmd, int argc, char **argv);
int cmd_monitor(const struct cmd *cmd, int argc, char **argv);
int cmd_restore(const struct cmd *cmd, int argc, char **argv);
int cmd_stats(const struct cmd *cmd, int argc, char **argv);

#endif /* BLOOMCTL_H */
