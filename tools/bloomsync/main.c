// SPDX-License-Identifier: GPL-2.0
/*
 * bloomsync: kbloom filters shared by a fleet of hosts through NATS
 * JetStream. The global options and the table of subcommands.
 *
 * Exit status, as bloomctl's: 0 success, 1 a negative answer (status: the
 * daemon's state is stale), 2 an error (usage, a refusal, the device, the
 * server).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bloomsync.h"

struct globals g = {
	.server = DEFAULT_SERVER,
	.state_dir = DEFAULT_STATE_DIR,
};

/* bloomctl's output.c and images.c know of its batches; bloomsync has none. */
const char *batch_where;
bool batch_owns_stdin;

static const struct cmd cmds[] = {
	{ "template", cmd_template, "put|show NAME",
	  "put: publish the shape and seed of the local filter NAME as the\n"
	  "fleet's template (an empty image in the KV bucket " TEMPLATE_BUCKET ");\n"
	  "the first host wins: a later put succeeds only if it is identical.\n"
	  "show: print the template.",
	  NULL },
	{ "join", cmd_join, "NAME",
	  "Create the local filter NAME (tracking changes) and the fleet filter\n"
	  "from template NAME, or check that the ones there are of its shape.",
	  "      --into FLEET     the fleet filter (default NAME" FLEET_SUFFIX ")\n" },
	{ "publish", cmd_publish, "NAME",
	  "Publish the changes of the local filter NAME to the stream " STREAM_NAME ".",
	  "      --interval DUR   how often to collect and publish (default 1s)\n"
	  "      --snapshot-every DUR  a full image this often (default 60s)\n"
	  "      --into FLEET     also apply this host's blocks there (default\n"
	  "                       NAME" FLEET_SUFFIX ", if it exists)\n"
	  "      --max-fill PCT   as subscribe (default 50)\n"
	  "      --max-age DUR    the stream's retention, if it creates it (15m)\n" },
	{ "subscribe", cmd_subscribe, "NAME",
	  "Apply every other host's changes of NAME to the fleet filter.",
	  "      --into FLEET     the fleet filter (default NAME" FLEET_SUFFIX ")\n"
	  "      --max-fill PCT   refuse updates that would set more than PCT%\n"
	  "                       of a generation's bits (default 50)\n"
	  "      --max-age DUR    the stream's retention, if it creates it (15m)\n" },
	{ "run", cmd_run, "NAME",
	  "publish and subscribe in one process (what bloomsync@.service runs).",
	  "      --interval DUR, --snapshot-every DUR, --into FLEET,\n"
	  "      --max-fill PCT, --max-age DUR   as publish and subscribe\n" },
	{ "status", cmd_status, "NAME",
	  "Per peer: lag, last sequence number, bytes received; the fleet\n"
	  "filter's fill; from the state the daemon writes.",
	  NULL },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"Usage: bloomsync [GLOBAL OPTIONS] COMMAND [ARGS]\n\n"
		"Share kbloom filters across hosts through NATS JetStream.\n\n"
		"Commands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].args);
	fputs("\nGlobal options:\n"
	      "  -s, --server URL     NATS server (default $BLOOMSYNC_SERVER, else\n"
	      "                       " DEFAULT_SERVER "; nats://USER:PASSWORD@HOST:PORT)\n"
	      "      --creds FILE     NATS credentials (user JWT and NKey seed)\n"
	      "      --tls-ca FILE    CA certificates for the server's\n"
	      "      --tls-cert FILE  client certificate\n"
	      "      --tls-key FILE   its key\n"
	      "      --host NAME      this host's name in subjects (default: the hostname)\n"
	      "  -d, --device PATH    the kbloom device (default " DEFAULT_DEVICE ")\n"
	      "      --state-dir DIR  where the daemon writes its state (default " DEFAULT_STATE_DIR ")\n"
	      "  -j, --json, -p, --pretty   JSON output\n"
	      "  -V, --version        print the version\n"
	      "  -h, --help           this help; COMMAND --help for a command's\n"
	      "\nSee bloomsync(8).\n", f);
}

/* Host names as subjects take them: [A-Za-z0-9_.-], 1 to 255 bytes. */
static int check_host(const char *h)
{
	size_t n = strlen(h);

	if (!n || n > 255 || h[0] == '.' ||
	    strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != n) {
		pr_err("--host '%s': must be 1 to 255 characters of [A-Za-z0-9_.-], not starting with '.'",
		       h);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum { O_CREDS = 300, O_CA, O_CERT, O_KEY, O_HOST, O_STATE };
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, 's' },
		{ "creds", required_argument, NULL, O_CREDS },
		{ "tls-ca", required_argument, NULL, O_CA },
		{ "tls-cert", required_argument, NULL, O_CERT },
		{ "tls-key", required_argument, NULL, O_KEY },
		{ "host", required_argument, NULL, O_HOST },
		{ "device", required_argument, NULL, 'd' },
		{ "state-dir", required_argument, NULL, O_STATE },
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		END_LONGOPTS
	};
	const char *env;
	bool host_set = false;
	size_t i;
	int c;

	prog_name = "bloomsync";
	/* A URL with a password is better in the environment than in argv. */
	env = getenv("BLOOMSYNC_SERVER");
	if (env && *env)
		g.server = env;
	env = getenv("BLOOMSYNC_DEVICE");
	if (env && *env)
		device_path = env;
	opterr = 0;
	while ((c = next_opt(argc, argv, "+:s:d:jpVh", longopts)) != -1) {
		switch (c) {
		case 's':
			g.server = optarg;
			break;
		case O_CREDS:
			g.creds = optarg;
			break;
		case O_CA:
			g.tls_ca = optarg;
			break;
		case O_CERT:
			g.tls_cert = optarg;
			break;
		case O_KEY:
			g.tls_key = optarg;
			break;
		case O_HOST:
			if (check_host(optarg))
				return EXIT_ERROR;
			snprintf(g.host, sizeof(g.host), "%s", optarg);
			host_set = true;
			break;
		case 'd':
			device_path = optarg;
			break;
		case O_STATE:
			g.state_dir = optarg;
			break;
		case 'j':
			enable_json(false);
			break;
		case 'p':
			enable_json(true);
			break;
		case 'V':
			printf("bloomsync %s\n", BLOOMSYNC_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_ERROR;
		}
	}
	if (!!g.tls_cert != !!g.tls_key) {
		pr_err("--tls-cert and --tls-key go together");
		return EXIT_ERROR;
	}
	if (!host_set) {
		if (gethostname(g.host, sizeof(g.host) - 1)) {
			pr_err("no --host and no hostname");
			return EXIT_ERROR;
		}
		if (check_host(g.host))
			return EXIT_ERROR;
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_ERROR;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[optind], cmds[i].name))
			continue;
		argc -= optind;
		argv += optind;
		optind = 0;
		return cmds[i].fn(&cmds[i], argc, argv);
	}
	pr_err("unknown command '%s' (bloomsync --help)", argv[optind]);
	return EXIT_ERROR;
}
