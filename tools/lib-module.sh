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

# kbloom_module_make KDIR OUTDIR [VAR=VALUE...]: build the tree in OUTDIR
# against the kernel build directory KDIR with W=1 (and the make variables
# given, such as KBLOOM_APIBENCH=m); kbuild's output in OUTDIR/build.log.
kbloom_module_make() {
	local kdir=$1 out
	out=$(cd "$2" && pwd) || return
	shift 2
	make -C "$kdir" M="$out" W=1 -j"$(nproc)" "$@" modules > "$out/build.log" 2>&1
}

# kbloom_build_module KDIR OUTDIR: both. Returns make's status.
kbloom_build_module() {
	kbloom_module_tree "$2" && kbloom_module_make "$@"
}
