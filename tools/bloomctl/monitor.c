// SPDX-License-Identifier: GPL-2.0
/*
 * monitor: kbloom's events as they happen, as `ip monitor` prints the
 * network's: filters created and destroyed, and fill alerts (a filter
 * past its design capacity, a counter saturated, a window rotated
 * because full). They are the kernel's uevents of SUBSYSTEM=bloom, read
 * from NETLINK_KOBJECT_UEVENT: no daemon and no udev needed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>

#include "bloomctl.h"

/* One uevent's fields that matter here. */
struct bloom_event {
	const char *action;	/* add, remove, change */
	const char *name;	/* the filter */
	const char *event;	/* change: full, saturated, rotated */
	const char *bits_set;
	const char *bits;
	bool bloom;		/* SUBSYSTEM=bloom */
};

#define DEVPATH_PREFIX	"/kernel/bloom/filters/"

/* "ACTION@DEVPATH\0KEY=VALUE\0...", @len bytes: false if not one. */
static bool parse_uevent(char *buf, size_t len, struct bloom_event *e)
{
	char *p = buf, *end = buf + len, *v;

	memset(e, 0, sizeof(*e));
	if (!memchr(buf, '@', strnlen(buf, len)))
		return false;	/* not the kernel's (udev's start "libudev") */
	for (p += strlen(p) + 1; p < end; p += strlen(p) + 1) {
		v = strchr(p, '=');
		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(p, "ACTION"))
			e->action = v;
		else if (!strcmp(p, "SUBSYSTEM"))
			e->bloom = !strcmp(v, "bloom");
		else if (!strcmp(p, "DEVPATH") &&
			 !strncmp(v, DEVPATH_PREFIX, strlen(DEVPATH_PREFIX)))
			e->name = v + strlen(DEVPATH_PREFIX);
		else if (!strcmp(p, "EVENT"))
			e->event = v;
		else if (!strcmp(p, "BITS_SET"))
			e->bits_set = v;
		else if (!strcmp(p, "BITS"))
			e->bits = v;
	}
	return e->bloom && e->action && e->name;
}

/* What an event is called: create, destroy, or the alert's name. */
static const char *event_name(const struct bloom_event *e)
{
	if (!strcmp(e->action, "add"))
		return "create";
	if (!strcmp(e->action, "remove"))
		return "destroy";
	return e->event ? e->event : e->action;
}

static void print_event(const struct bloom_event *e)
{
	if (jw) {
		jw_start_object(jw);
		jw_kv_string(jw, "event", event_name(e));
		jw_kv_string(jw, "filter", e->name);
		if (e->bits_set)
			jw_kv_u64(jw, "bits_set", strtoull(e->bits_set, NULL, 10));
		if (e->bits)
			jw_kv_u64(jw, "bits", strtoull(e->bits, NULL, 10));
		jw_end_object(jw);
	} else {
		printf("%s %s", event_name(e), e->name);
		if (e->bits_set && e->bits)
			printf(" bits_set %s of %s", e->bits_set, e->bits);
		putchar('\n');
	}
	fflush(stdout);
}

static int monitor_opt(void *ctx, int c, const char *arg)
{
	uint32_t *count = ctx;

	if (c == OPT_COUNT_EVENTS)
		return parse_u32("--events", arg, 1, UINT32_MAX, count);
	return -1;
}

int cmd_monitor(const struct cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "events", required_argument, NULL, OPT_COUNT_EVENTS },
		COMMON_LONGOPTS,
		END_LONGOPTS
	};
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = 1,		/* the kernel's uevents */
	};
	const char *only = NULL;
	struct bloom_event e;
	uint32_t count = 0, seen = 0;
	char buf[8192];
	ssize_t n;
	int ret, fd;

	ret = parse_options(cmd, argc, argv, longopts, monitor_opt, &count);
	if (ret >= 0)
		return ret;
	if (optind < argc) {
		only = get_name_arg(cmd, argc, argv);
		if (!only)
			return EXIT_ERROR;
	}
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
		    NETLINK_KOBJECT_UEVENT);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		pr_err("monitor: the kernel's uevents: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return EXIT_ERROR;
	}
	/* Listening now: a script may make the events it waits for. */
	if (!jw) {
		printf("monitoring kbloom's events\n");
		fflush(stdout);
	}
	while (!count || seen < count) {
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			/* ENOBUFS: events were lost; say so and go on. */
			pr_err("monitor: %s", strerror(errno));
			if (errno == ENOBUFS)
				continue;
			close(fd);
			return EXIT_ERROR;
		}
		buf[n] = '\0';
		if (!parse_uevent(buf, (size_t)n, &e) ||
		    (only && strcmp(only, e.name)))
			continue;
		print_event(&e);
		seen++;
	}
	close(fd);
	return 0;
}
