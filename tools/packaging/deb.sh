#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make deb`: build the Debian packages kbloom-dkms, bloomctl and bloomsync with
# dpkg-buildpackage -us -uc -b in a scratch copy of the tree (the tree
# itself stays clean), put them in build/deb/ and run lintian on them.
# `make deb-check` (--check): the same, then check what the packages hold,
# that the packaged bloomctl runs and that the packaged module sources
# build with DKMS against Debian's kernel headers. Installs the Debian
# packages it needs if they are missing. Prints one "ok"/"not ok" line per
# check, then "N passed, M failed".
set -uo pipefail

# shellcheck source=tools/packaging/lib.sh
. "$(dirname "$0")/lib.sh"

checking=
[ "${1:-}" = --check ] && checking=1

mkdir -p "$pkg_build"
log=$pkg_build/deb.log
out=$pkg_build/deb
: > "$log"
echo "# log: $log"

if ! need_packages "$log" build-essential dpkg-dev debhelper dh-dkms dkms \
	lintian libxtables-dev libnats-dev pkgconf zlib1g-dev man-db; then
	not_ok "installing the packages dpkg-buildpackage and lintian need"
	show_log "$log"
	pkg_summary
	exit
fi

version=$(pkg_version)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/kbloom-deb.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# The tree as git sees it: tracked files and new files not ignored, so no
# build products (outside a git checkout: everything but build/).
copy_tree() { # DEST
	mkdir -p "$1"
	if git -C "$pkg_top" rev-parse --git-dir > /dev/null 2>&1; then
		local f
		(cd "$pkg_top" && git ls-files -z --cached --others --exclude-standard) |
		while IFS= read -r -d '' f; do
			[ -e "$pkg_top/$f" ] && printf '%s\0' "$f"
		done | tar -C "$pkg_top" --null -T - -cf - | tar -C "$1" -xf -
	else
		tar -C "$pkg_top" --exclude=./build --exclude=./.git -cf - . | tar -C "$1" -xf -
	fi
}

src=$scratch/kbloom-$version
copy_tree "$src"
t0=$SECONDS
printf '\n==== dpkg-buildpackage -us -uc -b\n' >> "$log"
if (cd "$src" && dpkg-buildpackage -us -uc -b) >> "$log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b ($((SECONDS - t0)) s)"
else
	not_ok "dpkg-buildpackage -us -uc -b"
	show_log "$log" 40
	pkg_summary
	exit
fi
rm -rf "$out"
mkdir -p "$out"
cp "$scratch"/*.deb "$scratch"/*.changes "$scratch"/*.buildinfo "$out/"
changes=$(find "$out" -name '*.changes' | head -n 1)
echo "# packages in $out:"
(cd "$out" && ls -- *.deb) | sed 's/^/#   /'

# Lintian, down to its pedantic and experimental tags: any tag fails
# (debian/*.lintian-overrides has the justified exceptions).
printf '\n==== lintian\n' >> "$log"
lintian --display-info --pedantic --display-experimental \
	--fail-on error,warning,info,pedantic,experimental "$changes" > "$scratch/lintian.log" 2>&1
rc=$?
cat "$scratch/lintian.log" >> "$log"
if [ $rc -eq 0 ] && ! grep -qE '^[EWIPX]: ' "$scratch/lintian.log"; then
	ok "lintian clean (errors, warnings, info, pedantic, experimental)"
else
	not_ok "lintian clean (errors, warnings, info, pedantic, experimental)"
fi
grep -E '^[EWIPX]: ' "$scratch/lintian.log" | sed 's/^/    /'

if [ -z "$checking" ]; then
	pkg_summary
	exit
fi

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
dkms_deb=$out/kbloom-dkms_${version}_all.deb
tool_deb=$out/bloomctl_${version}_${arch}.deb
for d in "$dkms_deb" "$tool_deb"; do
	check "built ${d##*/}" test -f "$d"
done
if [ ! -f "$dkms_deb" ] || [ ! -f "$tool_deb" ]; then
	pkg_summary
	exit
fi

# The checks, each a function that fails with a word on stderr.
dpkg-deb -c "$dkms_deb" | awk '{ print $6 }' | sed 's|^\./|/|' > "$scratch/dkms.files"
dpkg-deb -c "$tool_deb" | awk '{ print $6 }' | sed 's|^\./|/|' > "$scratch/tool.files"
cat "$scratch/dkms.files" "$scratch/tool.files" >> "$log"
mkdir -p "$scratch/x-dkms" "$scratch/x-tool"
dpkg-deb -R "$dkms_deb" "$scratch/x-dkms"
dpkg-deb -R "$tool_deb" "$scratch/x-tool"
s=/usr/src/kbloom-$version

has() { # LIST PATH
	grep -qxF "$2" "$1"
}
ships_all_module_sources() {
	local f
	while read -r f; do
		has "$scratch/dkms.files" "$s/$f" || { echo "missing $f" >&2; return 1; }
	done < <(cd "$pkg_top" && find kmod include -type f \( -name Kbuild -o -name '*.[ch]' \) ! -name '*.mod.c')
}
nothing_built_nothing_else() {
	! grep -E '\.(o|ko|cmd|mod|a)$' "$scratch/dkms.files" &&
	! grep -vE '^/(usr(/src(/.*)?|/share(/doc(/.*)?)?)?)?/?$' "$scratch/dkms.files"
}
arch_all_depends_dkms() {
	[ "$(dpkg-deb -f "$dkms_deb" Architecture)" = all ] &&
	dpkg-deb -f "$dkms_deb" Depends | grep -qw dkms
}
maintscripts_run_dkms() {
	grep -q dkms "$scratch/x-dkms/DEBIAN/postinst" &&
	grep -q dkms "$scratch/x-dkms/DEBIAN/prerm"
}
no_test_programs() {
	! grep -E 'bloomctl(\.static|32)$|selftest|\.ko$|^/usr/src' "$scratch/tool.files"
}
depends_on_libraries() {
	local d p
	d=$(dpkg-deb -f "$tool_deb" Depends)
	for p in libc6 zlib1g libxtables12; do
		grep -qw "$p" <<< "$d" || { echo "no $p in: $d" >&2; return 1; }
	done
}
bloomctl_runs() {
	"$scratch/x-tool/usr/sbin/bloomctl" calc --capacity 1000000 --fpr 0.01 > /dev/null
}
bloomctl_version() {
	"$scratch/x-tool/usr/sbin/bloomctl" -V 2>/dev/null | grep -qw -- "$version"
}
plugin_executable() {
	[ "$(stat -c %a "$scratch/x-tool/usr/share/netfilter-persistent/plugins.d/10-kbloom")" = 755 ]
}
units_paths() {
	local u=$scratch/x-tool/lib/systemd/system
	grep -q '^ExecStart=/usr/sbin/bloomctl restore /var/lib/kbloom$' "$u/kbloom.service" &&
	grep -q '^ExecStop=/usr/sbin/bloomctl save --all /var/lib/kbloom$' "$u/kbloom.service" &&
	! grep -n '@[A-Z]*@' "$u"/kbloom*
}
# dh_installsystemd --no-enable --no-start: the postinst records the
# units' state for purge and enables a unit again only if the admin had it
# enabled (deb-systemd-helper debian-installed ... was-enabled), never
# starts one, and only try-restarts one that runs.
units_not_enabled() {
	local p=$scratch/x-tool/DEBIAN/postinst
	grep -q "deb-systemd-helper debian-installed 'kbloom.service'" "$p" &&
	! grep -E "deb-systemd-invoke (start|restart) " "$p"
}
man_pages_clean() {
	local m w
	for m in "$scratch"/x-tool/usr/share/man/man8/*.8.gz; do
		w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$m" 2>&1 > /dev/null) || return 1
		[ -z "$w" ] || { echo "${m##*/}: $w" >&2; return 1; }
	done
}

for f in "$s/dkms.conf" "$s/Kbuild" "$s/kmod/Kbuild" "$s/kmod/kbloom_main.c" \
	"$s/kmod/kbloom.h" "$s/kmod/xt_bloom.c" "$s/include/uapi/linux/kbloom.h" \
	"$s/include/uapi/linux/netfilter/xt_bloom.h" "$s/tools/btf-kdir.sh" \
	/usr/share/doc/kbloom-dkms/copyright; do
	check "kbloom-dkms has $f" has "$scratch/dkms.files" "$f"
done
check "kbloom-dkms has every .c, .h and Kbuild of kmod/ and include/" ships_all_module_sources
check "kbloom-dkms has nothing built and nothing outside /usr/src and its docs" \
	nothing_built_nothing_else
check "kbloom-dkms's dkms.conf says PACKAGE_VERSION=\"$version\"" \
	grep -qx "PACKAGE_VERSION=\"$version\"" "$scratch/x-dkms$s/dkms.conf"
check "kbloom-dkms is Architecture: all and depends on dkms" arch_all_depends_dkms
check "kbloom-dkms's postinst and prerm run dkms" maintscripts_run_dkms

for f in /usr/sbin/bloomctl /usr/share/man/man8/bloomctl.8.gz \
	/usr/share/bash-completion/completions/bloomctl \
	"/usr/lib/$multiarch/xtables/libxt_bloom.so" /usr/share/man/man8/libxt_bloom.8.gz \
	/usr/share/doc/bloomctl/examples/60-kbloom.rules.example \
	/usr/share/doc/bloomctl/copyright \
	/lib/systemd/system/kbloom.service /lib/systemd/system/kbloom-save.service \
	/lib/systemd/system/kbloom-save.timer \
	/usr/share/netfilter-persistent/plugins.d/10-kbloom /etc/kbloom/filters.conf; do
	check "bloomctl has $f" has "$scratch/tool.files" "$f"
done
check "bloomctl's /etc/kbloom/filters.conf is a conffile" \
	grep -qx /etc/kbloom/filters.conf "$scratch/x-tool/DEBIAN/conffiles"
check "bloomctl's netfilter-persistent plugin is mode 0755" plugin_executable
check "bloomctl's units run /usr/sbin/bloomctl, and nothing of the source tree" units_paths
check "bloomctl's units are shipped disabled and not started (postinst)" units_not_enabled
check "bloomctl has no test programs (static, 32-bit, selftests) and no modules" \
	no_test_programs
check "bloomctl depends on libc6, zlib1g and libxtables12" depends_on_libraries
check "the packaged bloomctl runs (calc)" bloomctl_runs
check "the packaged bloomctl reports version $version (bloomctl -V)" bloomctl_version
check "the packaged man pages format without warnings" man_pages_clean

# bloomsync: the fleet daemon, its man page, unit template and example.
sync_deb=$out/bloomsync_${version}_${arch}.deb
check "built ${sync_deb##*/}" test -f "$sync_deb"
if [ -f "$sync_deb" ]; then
	dpkg-deb -c "$sync_deb" | awk '{ print $6 }' | sed 's|^\./|/|' > "$scratch/sync.files"
	mkdir -p "$scratch/x-sync"
	dpkg-deb -R "$sync_deb" "$scratch/x-sync"
	for f in /usr/sbin/bloomsync /usr/share/man/man8/bloomsync.8.gz \
		/lib/systemd/system/bloomsync@.service \
		/usr/share/doc/bloomsync/examples/nats-server.conf.example \
		/usr/share/doc/bloomsync/copyright; do
		check "bloomsync has $f" has "$scratch/sync.files" "$f"
	done
	check "bloomsync depends on the NATS C client (libnats3.4)" \
		grep -qw 'libnats3.4' <<< "$(dpkg-deb -f "$sync_deb" Depends)"
	check "bloomsync's unit runs /usr/sbin/bloomsync" \
		grep -q '^ExecStart=/usr/sbin/bloomsync ' "$scratch/x-sync/lib/systemd/system/bloomsync@.service"
	check "the packaged bloomsync runs (--help)" \
		"$scratch/x-sync/usr/sbin/bloomsync" --help
fi

# The package's module sources, built by DKMS as its postinst would, in a
# scratch dkms tree (nothing in /usr/src or /var/lib/dkms).
kver=$(debian_kernel)
if [ -n "$kver" ] && [ -d "/lib/modules/$kver/build" ]; then
	dk=$scratch/dkms
	mkdir -p "$dk/src" "$dk/tree" "$dk/install"
	export mok_signing_key=$dk/mok.key mok_certificate=$dk/mok.pub
	t0=$SECONDS
	printf '\n==== dkms build of the packaged sources\n' >> "$log"
	if dkms --sourcetree "$dk/src" --dkmstree "$dk/tree" --installtree "$dk/install" \
		add "$scratch/x-dkms$s" >> "$log" 2>&1 &&
	   dkms --sourcetree "$dk/src" --dkmstree "$dk/tree" --installtree "$dk/install" \
		build -m kbloom -v "$version" -k "$kver" >> "$log" 2>&1 &&
	   [ -n "$(compgen -G "$dk/tree/kbloom/$version/$kver/*/module/xt_bloom.ko*")" ]; then
		ok "kbloom-dkms's sources build with dkms for $kver ($((SECONDS - t0)) s)"
	else
		cat "$dk/tree/kbloom/$version/build/make.log" >> "$log" 2>/dev/null
		not_ok "kbloom-dkms's sources build with dkms for $kver"
		show_log "$log"
	fi
else
	not_ok "no Debian kernel headers (linux-headers-amd64) to build kbloom-dkms's sources against"
fi
pkg_summary
