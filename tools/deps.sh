#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages kbloom's build and tests need, if missing.
# Idempotent: does nothing (not even apt-get update) when all are there.
set -euo pipefail

pkgs=(build-essential gcc-multilib bc bison flex libelf-dev libssl-dev
      zlib1g-dev lib32z1-dev
      cpio gzip xz-utils kmod file python3 sparse shellcheck
      busybox-static qemu-system-x86
      linux-source-6.1 linux-image-amd64 linux-headers-amd64
      # libFuzzer (tools/fuzz): clang with its fuzzer and sanitizer
      # runtimes, and llvm-symbolizer for readable crash reports
      clang libclang-rt-14-dev llvm
      # the bloom match (tools/xtables, tests.d/packets.sh): the extension
      # builds against libxtables-dev; the VM runs iptables (both
      # backends) and nft from the host
      iptables libxtables-dev nftables pkgconf
      # make bench's peers and plot (tools/bench): libbloom, the BPF
      # bloom map through libbpf and a bpftool skeleton, gnuplot
      libbloom-dev libbpf-dev bpftool gnuplot-nox
      # the kfuncs (tools/btf-kdir.sh, tools/bpf): pahole for module BTF;
      # the XDP examples link libbpf statically, with libelf's and zlib's
      # archives (libelf-dev, zlib1g-dev above)
      dwarves
      # the reboot test (tools/vm/rootfs.sh, reboot-test.sh): a Debian
      # root filesystem from the archive, its ext4 image and qcow2
      # overlays; the bloomctl package it installs (tools/packaging/deb.sh
      # installs its own build dependencies)
      mmdebstrap e2fsprogs qemu-utils
      # the packages and their checks (tools/packaging: deb.sh and
      # dkms-check.sh install these too when run alone; make check runs
      # deb.sh beside other stages, so nothing may install then)
      dpkg-dev debhelper dh-dkms dkms lintian man-db
      # bloomctl stats --format prometheus is checked by promtool
      prometheus
      # bloomsync (tools/bloomsync): the NATS C client; its tests start a
      # real JetStream server
      libnats-dev nats-server)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
