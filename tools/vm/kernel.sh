#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) the debug kernel the kbloom harness boots, and print the path
# of its build directory. The build lives outside the repository, under
# $KBLOOM_CACHE (default ~/.cache/kbloom), in a directory named after a hash
# of the config fragment and the kernel source tarball, so any change to
# either gives a fresh build and an unchanged pair is never rebuilt.
#
# Usage: kernel.sh [--variant debug|kcsan] [--extract-only]
#   debug (default): allnoconfig + debug.config (KASAN, lockdep, ...) +
#          bpf.config (BPF, BTF for vmlinux and modules), in debug-<hash of
#          the two>;
#   kcsan: allnoconfig + debug.config without its CONFIG_KASAN* lines +
#          kcsan.config (whose options replace debug.config's), in
#          kcsan-<hash of that composed fragment and the tarball>; the
#          composed fragment is kept there as kbloom.config.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${KBLOOM_CACHE:-$HOME/.cache/kbloom}
tarball=${KBLOOM_KSRC_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
jobs=${JOBS:-$(nproc)}

[ -r "$tarball" ] || { echo "kernel.sh: $tarball: not found (apt-get install linux-source-6.1)" >&2; exit 2; }

extract_only=
variant=debug
while [ $# -gt 0 ]; do
	case "$1" in
	--extract-only) extract_only=1; shift ;;
	--variant) variant=${2:-}; shift 2 || { echo "kernel.sh: --variant needs a value" >&2; exit 2; } ;;
	--variant=*) variant=${1#--variant=}; shift ;;
	*) echo "usage: kernel.sh [--variant debug|kcsan] [--extract-only]" >&2; exit 2 ;;
	esac
done

# The variant's config fragment: the file merge_config.sh gets.
fragment=$(mktemp)
trap 'rm -f "$fragment"' EXIT
case "$variant" in
debug)
	cat "$here/debug.config" "$here/bpf.config" > "$fragment"
	;;
kcsan)
	# debug.config minus KASAN and minus every option kcsan.config sets,
	# then kcsan.config: each option appears once, so the check below
	# that every =y line survived holds for the composed fragment too.
	{
		echo "# Composed by kernel.sh --variant kcsan: debug.config without KASAN, then kcsan.config."
		awk 'FNR == NR {
			if (match($0, /^(# )?CONFIG_[A-Za-z0-9_]+/)) {
				s = substr($0, RSTART, RLENGTH); sub(/^# /, "", s); over[s] = 1
			}
			next
		}
		{
			if (match($0, /^(# )?CONFIG_[A-Za-z0-9_]+/)) {
				s = substr($0, RSTART, RLENGTH); sub(/^# /, "", s)
				if (s ~ /^CONFIG_KASAN/ || s in over) next
			}
			print
		}' "$here/kcsan.config" "$here/debug.config"
		cat "$here/kcsan.config"
	} > "$fragment"
	;;
*)
	echo "kernel.sh: unknown variant '$variant' (debug or kcsan)" >&2
	exit 2
	;;
esac

key=$( { cat "$fragment"; stat -c '%s %Y' "$tarball"; } | sha256sum | cut -c1-16)
src=$cache/linux-source-6.1
out=$cache/$variant-$key

if [ -z "$extract_only" ] && [ -f "$out/.kbloom-done" ]; then
	echo "$out"
	exit 0
fi

mkdir -p "$cache"
# One lock for the shared source tree, held only while it is unpacked, and
# one per build directory: a kernel that builds for a quarter of an hour
# (make check starts it in the background) does not hold up a caller that
# only needs the source, nor a build of the other variant.
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
flock -u 9
exec 8>"$out.lock"
flock 8
if [ -f "$out/.kbloom-done" ]; then echo "$out"; exit 0; fi

echo "kernel.sh: building $variant kernel in $out (about 12 minutes on 2 cores)" >&2
rm -rf "$out"
mkdir -p "$out"
cp "$fragment" "$out/kbloom.config"
make -C "$src" O="$out" -s allnoconfig >&2
(cd "$out" && "$src/scripts/kconfig/merge_config.sh" -n -m .config "$out/kbloom.config" >/dev/null)
make -C "$src" O="$out" -s olddefconfig >&2
# Every line of the fragment must have survived olddefconfig: a silently
# dropped checker would make the harness lie.
missing=$(grep -E '^CONFIG_[A-Z0-9_]+=[ym]$' "$out/kbloom.config" | while read -r l; do grep -qx "$l" "$out/.config" || echo "$l"; done)
if [ -n "$missing" ]; then
	echo "kernel.sh: options not set in the final config:" >&2
	echo "$missing" >&2
	exit 2
fi
make -C "$src" O="$out" -s -j"$jobs" bzImage modules >&2
touch "$out/.kbloom-done"
echo "$out"
