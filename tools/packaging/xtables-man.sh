#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Usage: xtables-man.sh VERSION libxt_bloom.man > libxt_bloom.8
# libxt_bloom.man is in iptables' format for extensions: the body of one
# section of iptables-extensions(8), which iptables' own build assembles.
# An extension built outside iptables gets a man page of its own instead:
# that body with a header and a name around it.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 VERSION FILE.man" >&2; exit 2; }
cat <<HEADER
.\\" SPDX-License-Identifier: GPL-2.0
.\\" Made by tools/packaging/xtables-man.sh from tools/xtables/libxt_bloom.man.
.TH LIBXT_BLOOM 8 "" "kbloom $1" "System Administration"
.SH NAME
libxt_bloom \\- the bloom match of iptables and ip6tables (kbloom)
.SH SYNOPSIS
.B iptables
.RB [ \\-t
.IR table ]
.B \\-A
.I chain
\\&...
.B \\-m bloom \\-\\-name
.I filter
.RB [ \\-\\-key
.IR fields ]
.RB { \\-\\-test | \\-\\-add | \\-\\-test\\-and\\-add | \\-\\-remove }
\\&...
.SH DESCRIPTION
HEADER
cat "$2"
cat <<'FOOTER'
.SH FILES
The match is the kernel module \fBxt_bloom\fP (package kbloom-dkms); this
extension, \fBlibxt_bloom.so\fP, lets \fBiptables\fP and \fBip6tables\fP
parse and print it.
.SH SEE ALSO
.BR bloomctl (8),
.BR iptables (8),
.BR iptables\-extensions (8)
FOOTER
