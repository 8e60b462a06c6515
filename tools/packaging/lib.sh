# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the packaging checks (dkms-check.sh, deb.sh) share: TAP-ish output
# and installing the Debian packages they need, quietly.

pkg_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck disable=SC2034 # for the scripts that source this
pkg_build=${KBLOOM_BUILD:-$pkg_top/build}
# shellcheck source=tools/lib-tap.sh
. "$pkg_top/tools/lib-tap.sh"

# The last lines of a log, indented, after a "not ok".
show_log() { tail -n "${2:-25}" "$1" | sed 's/^/    | /'; }

# The upstream version: the first line of debian/changelog, as the
# Makefile and dkms.conf read it.
pkg_version() {
	sed -n '1{s/^[^(]*(\([^)]*\)).*/\1/;s/^[0-9]*://;s/-[^-]*$//;p}' \
		"$pkg_top/debian/changelog"
}

# need_packages LOG PACKAGE...: install those of the Debian packages that
# are missing (apt-get update first, once), apt's output in LOG.
need_packages() {
	local log=$1 p missing=()
	shift
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "# installing ${missing[*]} (log: $log)"
	{
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq &&
		apt-get install -y -qq --no-install-recommends "${missing[@]}"
	} >> "$log" 2>&1
}

# The Debian kernel whose headers tools/deps.sh installs (linux-headers-amd64),
# e.g. 6.1.0-57-amd64; empty if none.
debian_kernel() {
	local d
	d=$(find /usr/src -maxdepth 1 -name 'linux-headers-*-amd64' | sort -V | tail -n 1)
	echo "${d#/usr/src/linux-headers-}"
}

# The TAP plan (trailing: how many checks there are depends on how far
# they got), the closing line, and the exit status.
pkg_summary() {
	tap_done
}
