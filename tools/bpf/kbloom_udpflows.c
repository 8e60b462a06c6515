// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_udpflows: send R UDP datagrams from each of N source ports
 * (PORT, PORT + 1, ...) of address SRC to DST:DPORT, through the kernel's
 * own stack: real traffic for the XDP example's tests (tests.d/bpf.sh),
 * one flow per source port.
 *
 * Not pktgen: pktgen transmits one skb many times (its reference count
 * raised), and generic XDP in 6.1 must make room in front of such a
 * shared skb, which is a BUG() in pskb_expand_head(); a socket's skbs are
 * not shared.
 *
 *   kbloom_udpflows [-r R] [-p PORT] SRC DST DPORT N
 *
 * Exit status: 0 all sent, 1 a system call failed, 2 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void usage(void)
{
	fputs("usage: kbloom_udpflows [-r R] [-p PORT] SRC DST DPORT N\n",
	      stderr);
	exit(2);
}

static unsigned long num(const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max)
		usage();
	return v;
}

/* SRC or DST, IPv4 or IPv6, into @sa with @port; its length. */
static socklen_t addr(const char *s, unsigned int port,
		      struct sockaddr_storage *sa)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;
	struct sockaddr_in *s4 = (struct sockaddr_in *)sa;

	memset(sa, 0, sizeof(*sa));
	if (inet_pton(AF_INET, s, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		return sizeof(*s4);
	}
	if (inet_pton(AF_INET6, s, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		return sizeof(*s6);
	}
	fprintf(stderr, "kbloom_udpflows: '%s': not an IPv4 or IPv6 address\n",
		s);
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long reps = 1, port = 10000, dport, n, i, r;
	struct sockaddr_storage src, dst;
	socklen_t slen, dlen;
	int opt, fd;

	while ((opt = getopt(argc, argv, "r:p:")) != -1) {
		switch (opt) {
		case 'r':
			reps = num(optarg, 1000000);
			break;
		case 'p':
			port = num(optarg, 65535);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 4)
		usage();
	dport = num(argv[optind + 2], 65535);
	n = num(argv[optind + 3], 65536);
	if (!dport || !port || port + n > 65536)
		usage();
	dlen = addr(argv[optind + 1], dport, &dst);
	/* Rounds of one datagram per flow: a flow's packets are not adjacent. */
	for (r = 0; r < reps; r++) {
		for (i = 0; i < n; i++) {
			slen = addr(argv[optind], port + i, &src);
			if (src.ss_family != dst.ss_family) {
				fputs("kbloom_udpflows: SRC and DST are of different families\n",
				      stderr);
				return 2;
			}
			fd = socket(src.ss_family, SOCK_DGRAM, 0);
			if (fd < 0) {
				perror("kbloom_udpflows: socket");
				return 1;
			}
			if (bind(fd, (struct sockaddr *)&src, slen) ||
			    sendto(fd, "kbloom", 6, 0, (struct sockaddr *)&dst,
				   dlen) != 6) {
				fprintf(stderr, "kbloom_udpflows: port %lu: %s\n",
					port + i, strerror(errno));
				close(fd);
				return 1;
			}
			close(fd);
		}
	}
	return 0;
}
