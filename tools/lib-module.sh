# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The one way kbloom's module tree is built for a kernel, shared by
# tools/check.sh, tools/mutate.sh and tools/demo.sh. Source it:
#
#   . "$top/tools/lib-module.sh"
#   kbloom_build_module KDIR OUTDIR     # copy the tree, build it
#
# or, to change the copy before building it (tools/mutate.sh):
#
#   kbloom_module_tree OUTDIR           # copy the tree
#   ...edit OUTDIR/kmod/...
#   kbloom_module_make KDIR OUTDIR      # build it
#
# Each build gets its own copy of the sources, so builds for different
# kernels (or different mutants) never share objects. kbuild's output goes
# to OUTDIR/build.log, not to the terminal; the modules end up in
# OUTDIR/kmod/ (kbloom.ko, xt_bloom.ko).
#
# With KBLOOM_BTF=1 in the environment, the modules are built with BTF
# (which kbloom's BPF kfuncs need), against kbloom_btf_kdir KDIR:
#
#   KBLOOM_BTF=1 kbloom_build_module KDIR OUTDIR
#   kbloom_build_module "$(kbloom_btf_kdir KDIR)" OUTDIR     # the same

# The repository, whoever sources this file and from wherever.
kbloom_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# What a module build needs: the top-level Kbuild, the module sources and
# the uapi headers (and kunit/, for trees that still have it there).
kbloom_module_sources=(Kbuild kmod kunit include)

# kbloom_module_tree OUTDIR: OUTDIR becomes a fresh copy of the module
# sources (anything in it before is removed).
kbloom_module_tree() {
	local out=$1 f
	rm -rf "$out"
	mkdir -p "$out"
	for f in "${kbloom_module_sources[@]}"; do
		[ -e "$kbloom_top/$f" ] && cp -r "$kbloom_top/$f" "$out/"
	done
	# Objects from an in-tree build must not leak into the copy.
	find "$out" \( -name '*.o' -o -name '*.ko' -o -name '*.mod' \
		-o -name '*.mod.c' -o -name '.*.cmd' -o -name '.*.d' -o -name '*.a' \
		-o -name modules.order -o -name Module.symvers \) -delete
}

# kbloom_btf_kdir KDIR: print the kernel build directory to build against
# for modules with BTF: tools/btf-kdir.sh's private copy of KDIR with the
# target kernel's vmlinux BTF and resolve_btfids, which Debian's headers
# lack (made once, in $KBLOOM_CACHE/btf-kdir/RELEASE, as make BTF=1 does),
# or KDIR itself if it has them (a kernel built here). Its messages on
# stderr; fails (status 2) saying what is missing.
kbloom_btf_kdir() {
	bash "$kbloom_top/tools/btf-kdir.sh" "$1"
}

# kbloom_module_make KDIR OUTDIR [VAR=VALUE...]: build the tree in OUTDIR
# against the kernel build directory KDIR with W=1 (and the make variables
# given); kbuild's output in OUTDIR/build.log.
# KBLOOM_BTF=1: against kbloom_btf_kdir KDIR, and every module must come
# out with BTF.
kbloom_module_make() {
	local kdir=$1 out ko
	out=$(cd "$2" && pwd) || return
	shift 2
	: > "$out/build.log"
	if [ "${KBLOOM_BTF:-}" = 1 ]; then
		# Its messages with kbuild's, which they explain; they never
		# say "warning:" or "error:", which check.sh looks for here.
		kdir=$(kbloom_btf_kdir "$kdir" 2>> "$out/build.log") || return
	fi
	make -C "$kdir" M="$out" W=1 -j"$(nproc)" "$@" modules >> "$out/build.log" 2>&1 || return
	if [ "${KBLOOM_BTF:-}" = 1 ]; then
		for ko in "$out"/kmod/*.ko; do
			# Not grep -q: under pipefail (check.sh) its early exit
			# can fail the pipeline with readelf's SIGPIPE.
			readelf -S "$ko" | grep ' \.BTF ' > /dev/null && continue
			echo "kbloom_module_make: ${ko#"$out"/}: no BTF (.BTF section)" >> "$out/build.log"
			return 1
		done
	fi
}

# kbloom_build_module KDIR OUTDIR: both. Returns make's status.
kbloom_build_module() {
	kbloom_module_tree "$2" && kbloom_module_make "$@"
}
