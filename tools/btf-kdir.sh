#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make a kernel headers tree that gives external modules BTF, and print its
# path: the KDIR to build kbloom.ko against when its BPF kfuncs must
# register (register_btf_kfunc_id_set() fails on a module without BTF).
#
# kbuild (scripts/Makefile.modfinal, cmd_btf_ko) adds BTF to a module only
# if the build directory holds `vmlinux`, the base the module's split BTF
# refers to, and tools/bpf/resolve_btfids/resolve_btfids; Debian's
# linux-headers packages ship neither. So this makes a private copy of
# KDIR in OUTDIR (KDIR itself, and /usr/src, are never written) and adds:
#  - vmlinux: the target kernel's BTF, raw (the format of
#    /sys/kernel/btf/vmlinux; pahole --btf_base and resolve_btfids -b read
#    it through libbpf's btf__parse(), which takes raw BTF as well as ELF:
#    checked with pahole 1.24 and 6.1's resolve_btfids, the module comes
#    out byte for byte as with the whole vmlinux ELF). Taken from, in this
#    order: --vmlinux FILE; /sys/kernel/btf/vmlinux if the target is the
#    running kernel; the .BTF section of the ELF that scripts/extract-vmlinux
#    takes out of /boot/vmlinuz-RELEASE. Never the host's BTF for another
#    kernel: type IDs differ between builds.
#  - resolve_btfids, built from the kernel sources (linux-source-X.Y):
#    the tools/ part of the tarball is enough, and the binary is cached.
# It also checks pahole (dwarves) against the version the kernel was built
# with (CONFIG_PAHOLE_VERSION): kbuild picks pahole's flags by the version
# it finds, and an older pahole cannot encode what the kernel expects.
#
# Usage: btf-kdir.sh [options] KDIR [OUTDIR]
#   OUTDIR             a symbolic link to the copy, which is made beside it;
#                      default $KBLOOM_CACHE/btf-kdir/RELEASE
#                      ($KBLOOM_CACHE: default ~/.cache/kbloom, /root's
#                      without HOME, as DKMS runs from systemd)
#   --vmlinux FILE     the target's BTF: raw BTF, a vmlinux ELF with a .BTF
#                      section, or a compressed kernel image (vmlinuz)
#   --ksrc DIR         kernel sources to build resolve_btfids from (default:
#                      $KBLOOM_CACHE/linux-source-X.Y, tools/vm/kernel.sh's
#                      tree; /usr/src/linux-source-X.Y; the tools/ part of
#                      /usr/src/linux-source-X.Y.tar.*)
#   --cache DIR        where resolve_btfids and the sources it is built from
#                      are kept (default $KBLOOM_CACHE; not in /usr/src)
#   --fallback         if something is missing, say so and print KDIR itself
#                      (a build without module BTF) instead of failing: DKMS
#   --link LINK        also make LINK a symbolic link to the directory printed
#                      (DKMS's PRE_BUILD runs this, and its MAKE uses LINK)
#
# Prints the directory to build against on stdout (the copy's own path,
# not OUTDIR's), everything else on stderr. Exit 2 (unless --fallback)
# names what is missing and the Debian package that provides it. The copy
# is reused while it was made from the same KDIR, .config and BTF source
# (its stamp, .kbloom-btf-kdir). A KDIR that already has both (a full
# kernel build) is printed as it is.
set -euo pipefail
# Inside $(...) too (resolve_btfids, src_tree): a failure there must end
# the script, not be followed by the next command.
shopt -s inherit_errexit

me=btf-kdir.sh
# Its default is worked out after the options: HOME may be unset (DKMS
# from systemd or unattended-upgrades), and --cache must work then.
cache=
vmlinux_opt=
ksrc_opt=
fallback=
link=
usage="usage: $me [--vmlinux FILE] [--ksrc DIR] [--cache DIR] [--fallback] [--link LINK] KDIR [OUTDIR]"

# Set once KDIR is known, so that --fallback can print it.
kdir=
work=

# finish DIR: the answer, DIR, on stdout (and in LINK).
finish() {
	if [ -n "$link" ]; then
		mkdir -p "$(dirname "$link")"
		ln -sfn "$1" "$link"
	fi
	printf '%s\n' "$1"
}

on_exit() {
	local rc=$?
	[ -n "$work" ] && rm -rf "$work"
	if [ "$rc" -ne 0 ] && [ -n "$fallback" ] && [ -n "$kdir" ]; then
		echo "$me: building without module BTF (kfuncs will not register)" >&2
		finish "$kdir"
		exit 0
	fi
	exit "$rc"
}
trap on_exit EXIT

# Their words never include "warning:" or "error:": lib-module.sh puts
# them in build.log, where tools/check.sh takes either for the compiler's
# (only a failed resolve_btfids build shows its log, and fails anyway).
die() { echo "$me: $*" >&2; exit 2; }
note() { echo "$me: $*" >&2; }

# need COMMAND PACKAGE [WHY]: COMMAND must be on PATH.
need() {
	command -v "$1" > /dev/null ||
		die "$1 not found${3:+ ($3)}: apt-get install $2"
}

args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--vmlinux) vmlinux_opt=${2:-}; shift 2 || die "--vmlinux needs a file" ;;
	--vmlinux=*) vmlinux_opt=${1#*=}; shift ;;
	--ksrc) ksrc_opt=${2:-}; shift 2 || die "--ksrc needs a directory" ;;
	--ksrc=*) ksrc_opt=${1#*=}; shift ;;
	--cache) cache=${2:-}; shift 2 || die "--cache needs a directory" ;;
	--cache=*) cache=${1#*=}; shift ;;
	--fallback) fallback=1; shift ;;
	--link) link=${2:-}; shift 2 || die "--link needs a path" ;;
	--link=*) link=${1#*=}; shift ;;
	-h|--help) echo "$usage"; exit 0 ;;
	-*) echo "$usage" >&2; exit 2 ;;
	*) args+=("$1"); shift ;;
	esac
done
if [ ${#args[@]} -lt 1 ] || [ ${#args[@]} -gt 2 ]; then echo "$usage" >&2; exit 2; fi
# What --fallback prints, even if KDIR turns out unusable: make then says
# what is wrong with it.
kdir=${args[0]}
{ [ -f "$kdir/.config" ] && [ -f "$kdir/Makefile" ]; } ||
	die "$kdir: not a kernel build directory (no .config or Makefile): apt-get install linux-headers-RELEASE"
# The physical path: /lib/modules/R/build and /usr/src/linux-headers-R are
# one tree, and one cached copy.
kdir=$(cd "$kdir" && pwd -P)

# ${HOME:-/root}: not set -u's end when HOME is unset (DKMS from systemd
# runs as root).
cache=${cache:-${KBLOOM_CACHE:-${HOME:-/root}/.cache/kbloom}}
cache=$(realpath -m "$cache")
case "$cache/" in
"$kdir"/*) die "--cache $cache is inside $kdir, which is never written" ;;
/usr/src/*) die "--cache $cache is in /usr/src, which is never written" ;;
esac

# The target's release. Debian's include/config/kernel.release holds the
# upstream version (6.1.192), not the release (6.1.0-57-amd64), so
# utsrelease.h comes first.
release=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h" 2>/dev/null || true)
[ -n "$release" ] || release=$(cat "$kdir/include/config/kernel.release" 2>/dev/null || true)
[ -n "$release" ] || die "$kdir: no kernel release (include/generated/utsrelease.h)"
# X.Y, for the linux-source-X.Y package.
series=$(printf '%s\n' "$release" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')

config_value() { sed -n "s/^$1=//p" "$kdir/.config"; }

grep -qx 'CONFIG_DEBUG_INFO_BTF_MODULES=y' "$kdir/.config" ||
	die "$release is built without CONFIG_DEBUG_INFO_BTF_MODULES: it loads no module BTF, whatever the module has"

# pahole: kbuild runs it for every module, so it is needed even when
# OUTDIR is cached. pahole-version.sh's reading of "v1.24": 124.
need pahole dwarves "kbuild encodes module BTF with it"
pahole_str=$(pahole --version)
pahole_have=$(printf '%s\n' "$pahole_str" | sed -E 's/v([0-9]+)\.([0-9]+)/\1\2/')
pahole_want=$(config_value CONFIG_PAHOLE_VERSION)
case "$pahole_have" in ''|*[!0-9]*) die "cannot read pahole's version ('$pahole_str')" ;; esac
# 124 -> 1.24, for people.
pahole_want_str=${pahole_want:0:1}.${pahole_want:1}
if [ -z "$pahole_want" ] || [ "$pahole_want" = 0 ]; then
	note "$release's .config does not say which pahole built it; using pahole $pahole_str"
elif [ "$pahole_have" -lt "$pahole_want" ]; then
	die "pahole $pahole_str is older than the $pahole_want_str $release was built with (CONFIG_PAHOLE_VERSION=$pahole_want): apt-get install dwarves (>= $pahole_want_str)"
elif [ "$pahole_have" -gt "$pahole_want" ]; then
	note "pahole $pahole_str is newer than the $pahole_want_str $release was built with: if the kernel drops the module's BTF (dmesg: 'failed to validate module [kbloom] BTF'), build with pahole $pahole_want_str"
fi

# A KDIR that has both already (a full kernel build with BTF): nothing to add.
if [ -f "$kdir/vmlinux" ] && [ -x "$kdir/tools/bpf/resolve_btfids/resolve_btfids" ]; then
	note "$kdir has vmlinux and resolve_btfids: using it as it is"
	finish "$kdir"
	exit 0
fi

out=${args[1]:-$cache/btf-kdir/$release}
# Only the directory it is in made physical: OUTDIR itself is a link this
# script made, not to be resolved into the copy it points to.
out=$(realpath -m "$(dirname "$out")")/$(basename "$out")
case "$out/" in
"$kdir"/*) die "$out is inside $kdir, which is never written" ;;
/usr/src/*) die "$out is in /usr/src, which is never written" ;;
/) die "OUTDIR cannot be /" ;;
esac

# The BTF source: what the stamp hashes and vmlinux is made from.
if [ -n "$vmlinux_opt" ]; then
	btf_src=$vmlinux_opt
elif [ "$release" = "$(uname -r)" ] && [ -r /sys/kernel/btf/vmlinux ]; then
	btf_src=/sys/kernel/btf/vmlinux
else
	btf_src=/boot/vmlinuz-$release
	[ -e "$btf_src" ] ||
		die "no $btf_src to take $release's BTF from: apt-get install linux-image-$release, or --vmlinux FILE"
fi
[ -r "$btf_src" ] || die "$btf_src: not readable (run as root, or --vmlinux FILE)"

stamp_want=$(printf 'btf-kdir 1\nkdir %s\nconfig %s\nbtf %s %s\n' "$kdir" \
	"$(sha256sum < "$kdir/.config" | cut -d' ' -f1)" \
	"$btf_src" "$(sha256sum < "$btf_src" | cut -d' ' -f1)")
# cached: OUTDIR is a copy for stamp_want; cur, the copy's own path, is
# what to print. A copy is never changed once OUTDIR points to it, so cur
# stays what was checked whatever a concurrent run does to OUTDIR.
cached() {
	cur=$(readlink -m "$out")
	[ -f "$cur/.kbloom-btf-kdir" ] && [ "$(cat "$cur/.kbloom-btf-kdir")" = "$stamp_want" ] &&
		[ -s "$cur/vmlinux" ] && [ -x "$cur/tools/bpf/resolve_btfids/resolve_btfids" ]
}
if cached; then
	finish "$cur"
	exit 0
fi

# Never remove a directory this script did not make.
if [ -e "$out" ] && [ ! -f "$out/.kbloom-btf-kdir" ] &&
   [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
	die "$out exists and is not a copy made by $me: remove it or choose another OUTDIR"
fi
mkdir -p "$(dirname "$out")" "$cache"
# One maker at a time per OUTDIR (make -j, check.sh and a shell at once).
exec 8> "$out.lock"
flock 8
if cached; then finish "$cur"; exit 0; fi
need readelf binutils
need objcopy binutils
# The new copy is made in a directory of its own beside OUTDIR, and OUTDIR,
# a symbolic link, is renamed over to point to it: OUTDIR is the old
# complete copy or the new one, never half of one, and the old one stays
# (until the next replacement) for a build that was given it before.
work=$(mktemp -d "$out.tree.XXXXXX")

# ---- the kernel sources: resolve_btfids, extract-vmlinux ------------------
# lock_cache: hold $cache/.lock until the (sub)shell ends. What is made in
# the cache (btf-src-*, resolve_btfids-*) is shared by runs for every
# OUTDIR, and tools/vm/kernel.sh unpacks linux-source-X.Y there under the
# same lock. Not to be taken twice in one (sub)shell: a second open of the
# file would wait for the first.
lock_cache() {
	exec 9> "$cache/.lock"
	flock 9
}

# src_tree: a tree with tools/bpf/resolve_btfids in it, or empty.
src_tree() {
	local t d
	if [ -n "$ksrc_opt" ]; then
		[ -f "$ksrc_opt/tools/bpf/resolve_btfids/Makefile" ] ||
			die "--ksrc $ksrc_opt: no tools/bpf/resolve_btfids in it"
		cd "$ksrc_opt" && pwd
		return
	fi
	# tools/vm/kernel.sh's whole tree, then one unpacked by hand.
	for d in "$cache/linux-source-$series" "/usr/src/linux-source-$series"; do
		if [ -f "$d/tools/bpf/resolve_btfids/Makefile" ] && [ -f "$d/Makefile" ] &&
		   { [ "$d" != "$cache/linux-source-$series" ] || [ -f "$d/.kbloom-extracted" ]; }; then
			echo "$d"
			return
		fi
	done
	t=$(find /usr/src -maxdepth 1 -name "linux-source-$series.tar.*" | sort | head -n 1)
	[ -n "$t" ] || return 0
	# Only what resolve_btfids (with libbpf and libsubcmd) and
	# extract-vmlinux are built from: 6 MB of the 140 MB tarball.
	d=$cache/btf-src-$(stat -c '%n %s %Y' "$t" | sha256sum | cut -c1-16)
	[ -f "$d/.kbloom-extracted" ] || lock_cache
	if [ ! -f "$d/.kbloom-extracted" ]; then
		note "unpacking the tools/ part of $t"
		rm -rf "$d"
		mkdir -p "$d"
		local top=linux-source-$series
		tar -C "$d" -xf "$t" "$top/Makefile" "$top/scripts/bpf_doc.py" \
			"$top/scripts/extract-vmlinux" "$top/tools/bpf/resolve_btfids" \
			"$top/tools/build" "$top/tools/include" "$top/tools/lib" \
			"$top/tools/scripts" "$top/tools/arch" ||
			die "cannot unpack $t (xz-utils?)"
		touch "$d/.kbloom-extracted"
	fi
	echo "$d/linux-source-$series"
}

src=
sources() {
	[ -n "$src" ] && return
	src=$(src_tree)
	[ -n "$src" ] ||
		die "no kernel sources to build resolve_btfids from: apt-get install linux-source-$series, or --ksrc DIR"
}

# resolve_btfids: KDIR's own if it has one (Ubuntu's headers do), else
# built once per source version into the cache.
resolve_btfids() {
	if [ -x "$kdir/tools/bpf/resolve_btfids/resolve_btfids" ]; then
		echo "$kdir/tools/bpf/resolve_btfids/resolve_btfids"
		return
	fi
	sources
	local key dir log
	key=$( { sed -n '/^\(VERSION\|PATCHLEVEL\|SUBLEVEL\) =/p' "$src/Makefile"
		cat "$src/tools/bpf/resolve_btfids/main.c"; } | sha256sum | cut -c1-16)
	dir=$cache/resolve_btfids-$key
	if [ ! -x "$dir/resolve_btfids" ]; then
		need make build-essential
		need gcc build-essential
		need python3 python3 "libbpf's build generates a header with it"
		printf '#include <gelf.h>\n' | gcc -E -x c - -o /dev/null 2>/dev/null ||
			die "no <gelf.h> to build resolve_btfids: apt-get install libelf-dev"
		printf '#include <zlib.h>\n' | gcc -E -x c - -o /dev/null 2>/dev/null ||
			die "no <zlib.h> to build resolve_btfids: apt-get install zlib1g-dev"
		# Only after sources, whose src_tree takes the lock in a
		# subshell of its own: holding it here, that would wait forever.
		lock_cache
	fi
	if [ ! -x "$dir/resolve_btfids" ]; then
		note "building resolve_btfids from $src"
		rm -rf "$dir.build"
		mkdir -p "$dir.build"
		log=$dir.build/build.log
		# OUTPUT keeps every object out of the source tree, which may be
		# shared (tools/vm/kernel.sh's) or not ours (/usr/src).
		if ! make -C "$src/tools/bpf/resolve_btfids" OUTPUT="$dir.build/" \
			-j"$(nproc)" > "$log" 2>&1; then
			tail -n 20 "$log" | sed 's/^/    | /' >&2
			die "building resolve_btfids failed (log: $log)"
		fi
		mkdir -p "$dir"
		cp "$dir.build/resolve_btfids" "$dir/resolve_btfids.new"
		mv "$dir/resolve_btfids.new" "$dir/resolve_btfids"
		rm -rf "$dir.build"
	fi
	echo "$dir/resolve_btfids"
}

# ---- vmlinux: the target's BTF, raw ---------------------------------------
# is_raw_btf FILE: FILE starts with BTF's magic, 0xeB9F, in either byte order.
is_raw_btf() {
	case "$(od -An -tx1 -N2 "$1" | tr -d ' \n')" in 9feb|eb9f) return 0 ;; esac
	return 1
}
# btf_of_elf ELF NAME DEST: DEST becomes the .BTF section of ELF (NAME is
# what to call it in a message).
btf_of_elf() {
	# grep reads it all: with pipefail, grep -q's early exit could kill
	# readelf with SIGPIPE and fail the pipeline although .BTF is there.
	readelf -S "$1" 2>/dev/null | grep ' \.BTF ' > /dev/null ||
		die "$2 has no .BTF section: was $release built with CONFIG_DEBUG_INFO_BTF?"
	# -O binary of the one section: its bytes, what /sys/kernel/btf/vmlinux
	# shows.
	objcopy -O binary --only-section=.BTF "$1" "$3" 2>/dev/null
}
# make_vmlinux IN DEST: DEST becomes IN's BTF, raw; IN is raw BTF, an ELF
# or a compressed kernel image.
make_vmlinux() {
	local in=$1 dest=$2 ex
	if is_raw_btf "$in"; then
		cp "$in" "$dest"
	elif readelf -h "$in" > /dev/null 2>&1; then
		btf_of_elf "$in" "$in" "$dest"
	else
		# A compressed image: scripts/extract-vmlinux, from the sources
		# (Debian's headers do not have it; Ubuntu's do).
		ex=$kdir/scripts/extract-vmlinux
		if [ ! -f "$ex" ]; then
			sources
			ex=$src/scripts/extract-vmlinux
			[ -f "$ex" ] || die "no scripts/extract-vmlinux in $src"
		fi
		note "extracting vmlinux from $in"
		# extract-vmlinux exits 0 even when it finds nothing: judge by
		# what it wrote.
		sh "$ex" "$in" > "$work/vmlinux.elf" 2> "$work/extract.log" || true
		if ! readelf -h "$work/vmlinux.elf" > /dev/null 2>&1; then
			cat "$work/extract.log" >&2
			die "cannot extract vmlinux from $in (its decompressor missing? xz-utils, zstd, gzip, lz4 ...), or --vmlinux FILE"
		fi
		btf_of_elf "$work/vmlinux.elf" "$in" "$dest"
		rm -f "$work/vmlinux.elf"
	fi
	is_raw_btf "$dest" || die "$in: no BTF in it"
}

# ---- the copy ---------------------------------------------------------------
note "making $out: $kdir with vmlinux ($btf_src) and resolve_btfids"
copy=$work/kdir
cp -a "$kdir" "$copy"
# Symbolic links that leave KDIR, relative ones (Debian's scripts and tools
# -> ../../lib/linux-kbuild-X.Y/...), would dangle in the copy: point them
# where they point from KDIR. Those inside KDIR stay relative, into the copy.
while IFS= read -r -d '' l; do
	rel=${l#"$copy"/}
	case "$(readlink "$l")" in /*) continue ;; esac
	target=$(readlink -m "$kdir/$rel")
	case "$target/" in "$kdir"/*) continue ;; esac
	ln -sfn "$target" "$l"
done < <(find "$copy" -type l -print0)
# tools/bpf/resolve_btfids must be a directory of the copy's own; so must
# every directory on its way that is a link (Debian's tools -> kbuild's):
# a directory of links to what the linked one holds.
d=$copy
for part in tools bpf resolve_btfids; do
	d=$d/$part
	if [ -L "$d" ]; then
		target=$(readlink -f "$d")
		rm "$d"
		mkdir "$d"
		if [ -d "$target" ]; then
			find "$target" -mindepth 1 -maxdepth 1 -exec ln -s {} "$d/" \;
		fi
	fi
	mkdir -p "$d"
done
# (An assignment, so that its failure ends the script with its status.)
rbt=$(resolve_btfids)
rm -f "$d/resolve_btfids"
cp "$rbt" "$d/resolve_btfids"
rm -f "$copy/vmlinux"
make_vmlinux "$btf_src" "$copy/vmlinux"
chmod 0644 "$copy/vmlinux"
printf '%s\n' "$stamp_want" > "$copy/.kbloom-btf-kdir"
rm -f "$work/vmlinux.elf" "$work/extract.log"
# mktemp's 0700 was for while it was being made.
chmod 0755 "$work"

# ---- in place: OUTDIR -> OUTDIR.tree.XXXXXX/kdir ---------------------------
# keep: the copy OUTDIR points to now, which a build may be using.
keep=
if [ -L "$out" ]; then
	keep=$(readlink "$out")
	keep=${keep%%/*}
elif [ -d "$out" ]; then
	# A directory, which a link cannot be renamed over: empty, or a copy
	# an older btf-kdir.sh made there. Set aside as a replaced copy is.
	keep=$(mktemp -d "$out.tree.XXXXXX")
	mv -T "$out" "$keep"
	keep=${keep##*/}
fi
ln -sfn "${work##*/}/kdir" "$out.link"
mv -T "$out.link" "$out"
new=$work
work=
# Older copies, and what runs that were killed left (this one holds the
# lock for OUTDIR: no other is making one).
for t in "$out".tree.*; do
	case "${t##*/}" in "${new##*/}"|"$keep") continue ;; esac
	rm -rf "$t"
done
note "$out: vmlinux ($(stat -c %s "$new/kdir/vmlinux") bytes of BTF from $btf_src), resolve_btfids"
finish "$new/kdir"
