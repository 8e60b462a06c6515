#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) the debug kernel the kbloom harness boots, and print the path
# of its build directory. The build lives outside the repository, under
# $KBLOOM_CACHE (default ~/.cache/kbloom), in a directory named after a hash
# of the config fragment and the kernel source tarball, so any change to
# either gives a fresh build and an unchanged pair is never rebuilt.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${KBLOOM_CACHE:-$HOME/.cache/kbloom}
tarball=${KBLOOM_KSRC_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
jobs=${JOBS:-$(nproc)}

[ -r "$tarball" ] || { echo "kernel.sh: $tarball: not found (apt-get install linux-source-6.1)" >&2; exit 2; }

key=$( { cat "$here/debug.config"; stat -c '%s %Y' "$tarball"; } | sha256sum | cut -c1-16)
src=$cache/linux-source-6.1
out=$cache/debug-$key

extract_only=
[ "${1:-}" = --extract-only ] && extract_only=1

if [ -z "$extract_only" ] && [ -f "$out/.kbloom-done" ]; then
	echo "$out"
	exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9

if [ ! -f "$src/.kbloom-extracted" ]; then
	echo "kernel.sh: extracting $tarball" >&2
	rm -rf "$src"
	tar -C "$cache" -xf "$tarball"
	touch "$src/.kbloom-extracted"
fi
if [ -n "$extract_only" ]; then
	echo "$src"
	exit 0
fi
if [ -f "$out/.kbloom-done" ]; then echo "$out"; exit 0; fi

echo "kernel.sh: building debug kernel in $out (about 12 minutes on 2 cores)" >&2
rm -rf "$out"
mkdir -p "$out"
make -C "$src" O="$out" -s allnoconfig >&2
(cd "$out" && "$src/scripts/kconfig/merge_config.sh" -n -m .config "$here/debug.config" >/dev/null)
make -C "$src" O="$out" -s olddefconfig >&2
# Every line of the fragment must have survived olddefconfig: a silently
# dropped checker would make the harness lie.
missing=$(grep -E '^CONFIG_[A-Z0-9_]+=[ym]$' "$here/debug.config" | while read -r l; do grep -qx "$l" "$out/.config" || echo "$l"; done)
if [ -n "$missing" ]; then
	echo "kernel.sh: options not set in the final config:" >&2
	echo "$missing" >&2
	exit 2
fi
make -C "$src" O="$out" -s -j"$jobs" bzImage modules >&2
touch "$out/.kbloom-done"
echo "$out"
