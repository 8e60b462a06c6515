#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make dkms-check`: what `dkms add . && dkms install kbloom/VERSION` does
# on a user's machine, against the Debian kernel whose headers are
# installed (linux-headers-amd64), without touching the system: dkms's
# source tree (/usr/src), its state (/var/lib/dkms), the install tree
# (/lib/modules) and the module signing key are all in a scratch directory,
# removed at the end. Installs dkms and the headers if they are missing.
# Prints one "ok"/"not ok" line per step, then "N passed, M failed".
set -uo pipefail

# shellcheck source=tools/packaging/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tools/lib-module.sh
. "$pkg_top/tools/lib-module.sh"

mkdir -p "$pkg_build"
log=$pkg_build/dkms-check.log
: > "$log"
echo "# log: $log"

if ! need_packages "$log" dkms linux-headers-amd64; then
	not_ok "installing dkms and linux-headers-amd64"
	show_log "$log"
	pkg_summary
	exit
fi
kver=$(debian_kernel)
version=$(pkg_version)
arch=$(uname -m)
if [ -z "$kver" ] || [ ! -d "/lib/modules/$kver/build" ]; then
	not_ok "Debian's kernel headers in /lib/modules/$kver/build"
	pkg_summary
	exit
fi

# What is in the system's dkms places before, to prove nothing was added.
system_state() {
	ls -a /usr/src /var/lib/dkms "/lib/modules/$kver" 2>/dev/null
	find "/lib/modules/$kver" -name 'kbloom*' -o -name 'xt_bloom*' 2>/dev/null
}
before=$(system_state)

scratch=$(mktemp -d "${TMPDIR:-/tmp}/kbloom-dkms.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# A source tree as a user has it: the module sources, dkms.conf, the
# script its PRE_BUILD runs (module BTF), and the changelog dkms.conf takes
# the version from. Nothing built in it.
src=$scratch/kbloom
kbloom_module_tree "$src"
cp "$pkg_top/dkms.conf" "$src/"
mkdir -p "$src/tools"
cp -p "$pkg_top/tools/btf-kdir.sh" "$src/tools/"
mkdir -p "$src/debian"
cp "$pkg_top/debian/changelog" "$src/debian/"

dkms=(dkms --sourcetree "$scratch/usr-src" --dkmstree "$scratch/var-lib-dkms"
      --installtree "$scratch/lib-modules")
mkdir -p "$scratch/usr-src" "$scratch/var-lib-dkms" "$scratch/lib-modules/$kver"
# dkms signs what it builds, with a key it makes in /var/lib/dkms unless
# told otherwise.
export mok_signing_key=$scratch/mok.key mok_certificate=$scratch/mok.pub

# step DESCRIPTION COMMAND...: ok or not ok, the output in the log.
step() {
	local what=$1 t0=$SECONDS
	shift
	printf '\n==== %s: %s\n' "$what" "$*" >> "$log"
	if "$@" >> "$log" 2>&1; then
		ok "$what ($((SECONDS - t0)) s)"
	else
		not_ok "$what"
		show_log "$log"
		return 1
	fi
}

# shellcheck disable=SC2016 # expanded by the inner bash
check "dkms.conf gives PACKAGE_VERSION $version (debian/changelog's)" \
	bash -c '. "$1/dkms.conf" && [ "$PACKAGE_NAME/$PACKAGE_VERSION" = "kbloom/$2" ]' \
	_ "$src" "$version"
# dkms build [OPTION...], and kbuild's output in the log whatever happens.
# Without HOME, as DKMS runs from systemd or unattended-upgrades when a
# kernel is installed.
dkms_build() {
	local rc=0 make_log=$scratch/var-lib-dkms/kbloom/$version/build/make.log
	env -u HOME "${dkms[@]}" build -m kbloom -v "$version" -k "$kver" "$@" || rc=$?
	[ -f "$make_log" ] && cat "$make_log"
	return "$rc"
}

# has_btf MODULE: MODULE (perhaps compressed, as DKMS leaves it for kernels
# whose modules are) has a .BTF section.
has_btf() {
	case "$1" in
	*.xz) xz -dc "$1" ;;
	*.zst) zstd -dc "$1" ;;
	*.gz) gzip -dc "$1" ;;
	*) cat "$1" ;;
	esac > "$scratch/has-btf.ko" && readelf -S "$scratch/has-btf.ko" | grep ' \.BTF ' > /dev/null
}
# built_without_btf [MODULE]: there is a MODULE, and it has no BTF.
built_without_btf() { [ -n "${1:-}" ] && ! has_btf "$1"; }

if step "dkms add (the source tree, as 'dkms add .')" "${dkms[@]}" add "$src" &&
   step "dkms build -k $kver" dkms_build; then
	built=$scratch/var-lib-dkms/kbloom/$version/$kver/$arch/module
	# BTF when btf-kdir.sh could make it (dwarves, libelf-dev,
	# linux-source, the kernel image), else its reason in the log.
	no_btf=$(grep -m1 'building without module BTF' "$log")
	for m in kbloom xt_bloom; do
		f=$(find "$built" -name "$m.ko*" 2>/dev/null | head -n 1)
		if [ -n "$f" ] && modinfo -F vermagic "$f" | grep -q "^$kver "; then
			ok "dkms built $m.ko for $kver"
		else
			not_ok "dkms built $m.ko for $kver (in $built)"
			continue
		fi
		if [ -n "$no_btf" ]; then
			ok "$m.ko has BTF # SKIP $(grep -m1 -B1 'building without module BTF' "$log" | head -n 1)"
		else
			check "$m.ko has BTF (a .BTF section), as the kfuncs need" has_btf "$f"
		fi
	done
	if step "dkms install -k $kver (into the scratch install tree)" \
		"${dkms[@]}" install --no-depmod -m kbloom -v "$version" -k "$kver"; then
		for m in kbloom xt_bloom; do
			check "$m.ko installed in /lib/modules/$kver/updates/dkms/" \
				test -n "$(compgen -G "$scratch/lib-modules/$kver/updates/dkms/$m.ko*")"
		done
	fi
	"${dkms[@]}" status >> "$log" 2>&1
	# A PRE_BUILD that made no .btf/kdir (here: not executable, which DKMS
	# only warns about): MAKE[0] falls back to the headers, a module
	# without BTF rather than none.
	chmod -x "$scratch/usr-src/kbloom-$version/tools/btf-kdir.sh"
	if step "dkms build --force without PRE_BUILD (against the headers)" \
		dkms_build --force; then
		f=$(find "$built" -name "kbloom.ko*" 2>/dev/null | head -n 1)
		check "dkms built kbloom.ko for $kver, without BTF" \
			built_without_btf "$f"
	fi
fi
step "dkms remove kbloom/$version --all" \
	"${dkms[@]}" remove --no-depmod -m kbloom -v "$version" --all
check "dkms remove left no kbloom in the dkms tree" \
	test ! -e "$scratch/var-lib-dkms/kbloom"
rm -rf "$scratch"
check "nothing left in /usr/src, /var/lib/dkms or /lib/modules/$kver" \
	test "$before" = "$(system_state)"
pkg_summary
