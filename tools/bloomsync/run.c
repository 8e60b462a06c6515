// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon: publish, subscribe, or both in one process (run, what the
 * systemd unit starts), in one thread: a tick every --interval collects
 * and publishes, and in between the subscription is read; the state file
 * is written once a second. SIGTERM and SIGINT end it after the current
 * step; so does the loss of either filter (exit 2: bloomsync@.service
 * starts it again, joining first).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sync.h"

volatile int stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

struct run_opts {
	bool publish, subscribe;
	const char *into;
	uint64_t interval_ms, snapshot_ms, max_age_ms;
	uint32_t max_fill;
};

enum { OPT_INTO = 1000, OPT_INTERVAL, OPT_SNAPSHOT, OPT_MAX_FILL,
       OPT_MAX_AGE };

static int run_opt(void *ctx, int c, const char *arg)
{
	struct run_opts *o = ctx;

	switch (c) {
	case OPT_INTO:
		o->into = arg;
		return check_name(arg);
	case OPT_INTERVAL:
		return parse_ms("--interval", arg, &o->interval_ms);
	case OPT_SNAPSHOT:
		return parse_ms("--snapshot-every", arg, &o->snapshot_ms);
	case OPT_MAX_AGE:
		return parse_ms("--max-age", arg, &o->max_age_ms);
	case OPT_MAX_FILL:
		return parse_u32("--max-fill", arg, 1, 100, &o->max_fill);
	default:
		return -1;
	}
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	if (ms > 0)
		nanosleep(&ts, NULL);
}

static int daemon_loop(const struct cmd *cmd, int argc, char **argv,
		       struct run_opts *o)
{
	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ "into", required_argument, NULL, OPT_INTO },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "snapshot-every", required_argument, NULL, OPT_SNAPSHOT },
		{ "max-fill", required_argument, NULL, OPT_MAX_FILL },
		{ "max-age", required_argument, NULL, OPT_MAX_AGE },
		END_LONGOPTS
	};
	char fleet_name[KBLOOM_NAME_MAX + 16];
	struct kbloom_info info;
	struct kbloom_version v;
	struct publisher pub;
	struct subscriber sub;
	struct fleet fleet;
	struct sigaction sa;
	bool have_fleet = false;
	uint64_t now, next_pub, next_status;
	struct nconn c;
	const char *name;
	int ret, fd, err;

	ret = parse_options(cmd, argc, argv, longopts, run_opt, o);
	if (ret >= 0)
		return ret;
	name = get_name_arg(cmd, argc, argv);
	if (!name)
		return EXIT_ERROR;
	snprintf(fleet_name, sizeof(fleet_name), "%s%s", name, FLEET_SUFFIX);
	if (o->into)
		snprintf(fleet_name, sizeof(fleet_name), "%s", o->into);
	if (check_name(fleet_name))
		return EXIT_ERROR;
	fd = dev_open();
	if (fd < 0)
		return EXIT_ERROR;
	ret = EXIT_ERROR;
	if (device_version(fd, &v) || !(v.features & KBLOOM_FEATURE_CHANGES)) {
		pr_err("%s: the module has no change tracking (KBLOOM_FEATURE_CHANGES)",
		       device_path);
		goto out_fd;
	}
	if (o->publish && dev_info(fd, name, &info))
		goto out_fd;
	/* A publisher alone applies its blocks to the fleet filter if any. */
	err = get_info(fd, fleet_name, &info);
	if (err && (o->subscribe || err != ENOENT)) {
		pr_err("filter '%s': %s (bloomsync join %s)", fleet_name,
		       kerr(err), name);
		goto out_fd;
	}
	if (!err) {
		if (fleet_open(&fleet, fd, fleet_name, o->max_fill))
			goto out_fd;
		have_fleet = true;
	}
	if (nconn_open(&c))
		goto out_fleet;
	if (nconn_stream(&c, (int64_t)o->max_age_ms))
		goto out_nats;
	if (o->publish && pub_init(&pub, &c, fd, name,
				   have_fleet ? &fleet : NULL,
				   o->snapshot_ms))
		goto out_nats;
	if (o->subscribe && sub_init(&sub, &c, name, &fleet))
		goto out_pub;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	logmsg("filter '%s': %s%s%s as host %s on %s", name,
	       o->publish ? "publishing" : "",
	       o->publish && o->subscribe ? " and " : "",
	       o->subscribe ? "subscribing" : "", g.host, url_public(g.server));
	next_pub = next_status = monotonic_ms();
	ret = 0;
	while (!stop_requested) {
		now = monotonic_ms();
		if (o->publish && now >= next_pub) {
			pub_tick(&pub);
			next_pub += o->interval_ms;
			if (next_pub <= now)
				next_pub = now + o->interval_ms;
		}
		now = monotonic_ms();
		if (now >= next_status) {
			/* Gone (destroyed, the module unloaded): let systemd
			 * start us again, join first. */
			if ((o->publish && get_info(fd, name, &info) == ENOENT) ||
			    (have_fleet &&
			     get_info(fd, fleet_name, &info) == ENOENT)) {
				logmsg("filter '%s' or '%s' is gone: stopping",
				       name, fleet_name);
				ret = EXIT_ERROR;
				break;
			}
			write_status(o->publish ? &pub : NULL,
				     o->subscribe ? &sub : NULL, name,
				     have_fleet ? &fleet : NULL);
			next_status = now + 1000;
		}
		now = monotonic_ms();
		{
			uint64_t until = next_status;
			int64_t wait;

			if (o->publish && next_pub < until)
				until = next_pub;
			wait = until > now ? (int64_t)(until - now) : 0;
			if (o->subscribe)
				sub_poll(&sub, wait);
			else
				sleep_ms(wait);
		}
	}
	write_status(o->publish ? &pub : NULL, o->subscribe ? &sub : NULL,
		     name, have_fleet ? &fleet : NULL);
	logmsg("filter '%s': stopped", name);
	if (o->subscribe)
		sub_close(&sub);
out_pub:
	if (o->publish)
		pub_close(&pub);
out_nats:
	nconn_close(&c);
out_fleet:
	if (have_fleet)
		fleet_close(&fleet);
out_fd:
	close(fd);
	return ret;
}

static void defaults(struct run_opts *o, bool publish, bool subscribe)
{
	memset(o, 0, sizeof(*o));
	o->publish = publish;
	o->subscribe = subscribe;
	o->interval_ms = 1000;
	o->snapshot_ms = 60000;
	o->max_age_ms = 15 * 60000;
	o->max_fill = 50;
}

int cmd_publish(const struct cmd *cmd, int argc, char **argv)
{
	struct run_opts o;

	defaults(&o, true, false);
	return daemon_loop(cmd, argc, argv, &o);
}

int cmd_subscribe(const struct cmd *cmd, int argc, char **argv)
{
	struct run_opts o;

	defaults(&o, false, true);
	return daemon_loop(cmd, argc, argv, &o);
}

int cmd_run(const struct cmd *cmd, int argc, char **argv)
{
	struct run_opts o;

	defaults(&o, true, true);
	return daemon_loop(cmd, argc, argv, &o);
}
