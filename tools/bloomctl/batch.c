// SPDX-License-Identifier: GPL-2.0
/*
 * Batch mode, as `ip -batch`, `ipset restore` and `nft -f`: bloomctl -batch
 * FILE runs one subcommand a line, in one process. It stops at the first
 * line that fails, naming it (FILE:LINE), unless --force, which runs every
 * line; either way the exit status is 2 if any line failed. This is how
 * /etc/kbloom/filters.conf declares filters.
 *
 * A line is split into words as a shell would, without expansions: blanks
 * separate words, '...' quotes literally, "..." quotes with \ escaping
 * ", \ and $, and \ outside quotes escapes the next character. A # at the
 * start of a word begins a comment. Blank lines and comments are skipped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bloomctl.h"

/* "FILE:LINE" while a batch line runs; NULL otherwise (output.c). */
const char *batch_where;
/* The batch is read from stdin: commands may not read keys from it. */
bool batch_owns_stdin;

#define BATCH_MAX_WORDS	256

/*
 * Split @line in place into @argv (at most BATCH_MAX_WORDS words).
 * Returns the number of words, or -1 with *@err set.
 */
static int split_line(char *line, char **argv, const char **err)
{
	char *in = line, *out = line;
	int argc = 0;

	for (;;) {
		while (*in == ' ' || *in == '\t' || *in == '\r' || *in == '\n')
			in++;
		if (!*in || *in == '#')
			return argc;
		if (argc == BATCH_MAX_WORDS) {
			*err = "too many words";
			return -1;
		}
		argv[argc++] = out;
		while (*in && !strchr(" \t\r\n", *in)) {
			if (*in == '\'') {
				for (in++; *in && *in != '\''; )
					*out++ = *in++;
				if (!*in) {
					*err = "unterminated '";
					return -1;
				}
				in++;
			} else if (*in == '"') {
				for (in++; *in && *in != '"'; ) {
					if (*in == '\\' && strchr("\"\\$", in[1]))
						in++;
					*out++ = *in++;
				}
				if (!*in) {
					*err = "unterminated \"";
					return -1;
				}
				in++;
			} else if (*in == '\\' && in[1] && in[1] != '\n') {
				in++;
				*out++ = *in++;
			} else {
				*out++ = *in++;
			}
		}
		/* The word ends here: a blank or the end of the line. */
		if (*in)
			in++;
		*out++ = '\0';
	}
}

/* One line: its subcommand, with the global options of the batch. */
static int run_line(char *line, const char *where)
{
	char *argv[BATCH_MAX_WORDS + 1];
	const struct cmd *cmd;
	const char *err = NULL;
	struct json_mode mode;
	int argc, ret;

	argc = split_line(line, argv, &err);
	if (argc < 0) {
		batch_where = where;
		pr_err("%s", err);
		batch_where = NULL;
		return EXIT_ERROR;
	}
	if (!argc)
		return 0;
	argv[argc] = NULL;
	cmd = find_cmd(argv[0]);
	if (!cmd) {
		batch_where = where;
		pr_err("unknown subcommand '%s'", argv[0]);
		batch_where = NULL;
		return EXIT_ERROR;
	}
	batch_where = where;
	json_mode_get(&mode);
	json_mode_set(&mode);
	/* 0 makes glibc start afresh, and in argument-permuting mode. */
	optind = 0;
	ret = cmd->fn(cmd, argc, argv);
	json_mode_set(&mode);
	batch_where = NULL;
	fflush(stdout);
	return ret;
}

/**
 * run_batch() - bloomctl -batch FILE
 * @path: the file, - for stdin.
 * @force: go on past a failed line.
 *
 * Return: the exit status: EXIT_ERROR if a line failed (or the file could
 * not be read), else EXIT_NEGATIVE if a line answered so (a key absent),
 * else 0.
 */
int run_batch(const char *path, bool force)
{
	const char *name = strcmp(path, "-") ? path : "stdin";
	int status = 0, ret;
	unsigned long lineno = 0;
	char *line = NULL, *where;
	size_t cap = 0;
	ssize_t len;
	FILE *f = stdin;

	if (strcmp(path, "-")) {
		f = fopen(path, "re");
		if (!f) {
			pr_err("%s: %s", path, strerror(errno));
			return EXIT_ERROR;
		}
	} else {
		batch_owns_stdin = true;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (strlen(line) != (size_t)len) {
			pr_err("%s:%lu: a NUL byte in the line", name, lineno);
			ret = EXIT_ERROR;
		} else if (asprintf(&where, "%s:%lu", name, lineno) < 0) {
			pr_err("%s", strerror(ENOMEM));
			ret = EXIT_ERROR;
		} else {
			ret = run_line(line, where);
			free(where);
		}
		if (ret == EXIT_ERROR) {
			status = EXIT_ERROR;
			if (!force) {
				pr_err("%s:%lu: stopped at this line; the lines after it were not run (--force runs them)",
				       name, lineno);
				break;
			}
		} else if (ret && !status) {
			status = ret;
		}
	}
	if (ferror(f)) {
		pr_err("%s: %s", name, strerror(errno));
		status = EXIT_ERROR;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return status;
}
