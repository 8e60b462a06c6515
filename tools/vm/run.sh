#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one kbloom test VM and report. Usage:
#   run.sh --kernel IMAGE --dir DIR --mode check|only|demo|shell [--mem M]
#          [--timeout S] [--append ARGS] FILE:DEST...
# Builds DIR/initramfs.cpio.gz from busybox-static, init.sh, tests.sh and
# the FILE:DEST pairs (DEST relative to the initramfs root), boots it under
# software emulation and leaves DIR/console.log (kernel log), DIR/tests.log
# (test output) and DIR/result. Exit 0 only if the VM wrote "success" on
# its result channel: a panic, a hang, a splat or a failed test all leave
# it empty.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kernel='' dir='' mode=check mem=2G timeout=1500 append=''
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	--mode) mode=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ -z "$kernel" ] || [ -z "$dir" ]; then
	echo "run.sh: --kernel and --dir are required" >&2; exit 2
fi

root=$dir/root
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,etc,lib/kbloom,root}
cp /bin/busybox "$root/bin/busybox"
file "$root/bin/busybox" | grep -q 'statically linked' ||
	{ echo "run.sh: /bin/busybox is not static (apt-get install busybox-static)" >&2; exit 2; }
install -m 0755 "$here/init.sh" "$root/init"
install -m 0644 "$here/tests.sh" "$root/lib/kbloom/tests.sh"
install -m 0644 "$here/../lib-tap.sh" "$root/lib/kbloom/lib-tap.sh"
mkdir -p "$root/lib/kbloom/tests.d"
for f in "$here"/tests.d/*.sh; do
	[ -f "$f" ] && install -m 0644 "$f" "$root/lib/kbloom/tests.d/"
done
# ---- packet tests (tests.d/packets.sh): iptables, nft, kernel modules ----
# iptables-nft and iptables-legacy (the multi binaries with their command
# symlinks and shared libraries), nft, the xtables extensions the tests
# load, /etc/protocols and /run; and, when IMAGE is a kernel whose modules
# are installed on this host (Debian's), the netfilter, veth and pktgen
# modules, listed in load order in /lib/kbloom/modules.order for the tests
# to insmod. What the host lacks is left out, and the tests then skip.
# libxt_bloom.so and xt_bloom.ko come in as FILE:DEST pairs.
packet_tools() { # ROOT IMAGE
	local r=$1 image=$2 b l x ver m xtlib
	local elf=() done_mods=" "
	xtlib=$(pkg-config --variable=xtlibdir xtables 2>/dev/null) ||
		xtlib=/usr/lib/x86_64-linux-gnu/xtables
	mkdir -p "$r/sbin" "$r/run" "$r/etc" "$r/usr/sbin" "$r/lib/modules"
	# bpftool too, for the kfunc tests (tests.d/bpf.sh).
	for b in /usr/sbin/xtables-nft-multi /usr/sbin/xtables-legacy-multi /usr/sbin/nft \
		 /usr/sbin/bpftool; do
		[ -x "$b" ] || continue
		cp "$b" "$r/usr/sbin/"
		elf+=("$b")
	done
	if [ -x /usr/sbin/xtables-nft-multi ]; then
		for x in iptables ip6tables; do
			for l in "" -save -restore; do
				ln -sf /usr/sbin/xtables-nft-multi "$r/sbin/$x-nft$l"
				ln -sf /usr/sbin/xtables-nft-multi "$r/sbin/$x$l"
			done
		done
	fi
	if [ -x /usr/sbin/xtables-legacy-multi ]; then
		for x in iptables ip6tables; do
			for l in "" -save -restore; do
				ln -sf /usr/sbin/xtables-legacy-multi "$r/sbin/$x-legacy$l"
			done
		done
	fi
	for b in nft bpftool; do
		if [ -x "/usr/sbin/$b" ]; then ln -sf "/usr/sbin/$b" "$r/sbin/$b"; fi
	done
	if [ -d "$xtlib" ]; then
		mkdir -p "$r$xtlib"
		for x in libxt_standard libxt_udp libxt_tcp libxt_comment libxt_recent \
			 libipt_icmp libip6t_icmp6 libxt_mark libxt_LOG; do
			[ -f "$xtlib/$x.so" ] || continue
			cp "$xtlib/$x.so" "$r$xtlib/"
			elf+=("$xtlib/$x.so")
		done
	fi
	# Shared libraries, wherever the loader will look for them.
	for l in $( { for b in "${elf[@]}"; do ldd "$b"; done; } |
		   awk '/=> \// { print $3 } /^\t\// { print $1 }' | sort -u); do
		mkdir -p "$r$(dirname "$l")"
		cp -L "$l" "$r$l"
	done
	for x in /etc/protocols /etc/services; do
		if [ -f "$x" ]; then cp "$x" "$r$x"; fi
	done
	# Kernel modules of IMAGE, if this host has them, dependencies first.
	ver=$(file -bL "$image" | sed -n 's/.*version \([^ ]*\) .*/\1/p')
	[ -n "$ver" ] && [ -d "/lib/modules/$ver" ] || return 0
	: > "$r/lib/kbloom/modules.order"
	add_mod() { # NAME
		local p d
		case "$done_mods" in *" $1 "*) return 0 ;; esac
		done_mods="$done_mods$1 "
		p=$(modinfo -k "$ver" -n "$1" 2>/dev/null) || return 0
		for d in $(modinfo -k "$ver" -F depends "$1" | tr , ' '); do
			add_mod "$d"
		done
		mkdir -p "$r$(dirname "$p")"
		case "$p" in
		*.ko.xz) xz -dc "$p" > "$r${p%.xz}"; p=${p%.xz} ;;
		*) cp "$p" "$r$p" ;;
		esac
		echo "$p" >> "$r/lib/kbloom/modules.order"
	}
	for m in crc32c_generic libcrc32c x_tables xt_tcpudp ip_tables iptable_filter \
		 ip6_tables ip6table_filter nfnetlink nf_tables nft_compat \
		 xt_comment xt_recent veth pktgen sch_ingress cls_bpf; do
		add_mod "$m"
	done
}
packet_tools "$root" "$kernel"
# ---- end of the packet tests block ----
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
for pair in "$@"; do
	src=${pair%%:*} dst=${pair#*:}
	mkdir -p "$root/$(dirname "$dst")"
	cp "$src" "$root/$dst"
	# A dynamically linked program brings its shared libraries.
	if file -b "$src" | grep -q 'dynamically linked'; then
		for l in $(ldd "$src" | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
			[ -e "$root$l" ] && continue
			mkdir -p "$root$(dirname "$l")"
			cp -L "$l" "$root$l"
		done
	fi
done
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$dir/initramfs.cpio.gz"

: > "$dir/result"
: > "$dir/tests.log"
: > "$dir/console.log"
console=(-serial "file:$dir/console.log")
case "$mode" in check|only|kunit|kcsan|exchange-*) ;; *) console=(-serial mon:stdio) ;; esac
# -no-reboot: the guest's reboot (or a panic, with panic=-1) ends qemu.
set +e
timeout --foreground "$timeout" qemu-system-x86_64 \
	-machine pc -cpu "${KBLOOM_QEMU_CPU:-max,la57=off}" -smp 2 -m "$mem" \
	-nographic -nodefaults -no-reboot \
	-accel tcg,thread=multi \
	"${console[@]}" \
	-serial "file:$dir/result" \
	-serial "file:$dir/tests.log" \
	-kernel "$kernel" -initrd "$dir/initramfs.cpio.gz" \
	-append "console=ttyS0 panic=-1 panic_on_warn=1 oops=panic softlockup_panic=1 loglevel=7 kbloom_mode=$mode $append"
rc=$?
set -e
[ $rc -eq 124 ] && echo "run.sh: VM timed out after ${timeout}s" >&2
# The tty turns "\n" into "\r\n".
tr -d "\r" < "$dir/result" | grep -qx success && exit 0
exit 1
