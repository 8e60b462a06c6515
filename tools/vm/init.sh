#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# PID 1 of the kbloom test VM. Console (kernel log) on ttyS0; the result
# channel on ttyS1 gets "success" only if every test passed and the kernel
# log shows no splat; test output goes to ttyS2 so that kernel messages
# cannot interleave with it. kbloom_mode (from the kernel command line)
# picks what to run: check, only (the checks named by kbloom_only),
# kunit, kcsan, exchange-a|b, demo or shell.

/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
echo 1 > /proc/sys/kernel/printk_ratelimit 2>/dev/null

out=/dev/ttyS2
case "${kbloom_mode:-check}" in check|only|kunit|kcsan|exchange-*) ;; *) out=/dev/console ;; esac
exec 3>"$out"

# shellcheck source=SCRIPTDIR/tests.sh # run.sh installs it there
. /lib/kbloom/tests.sh

kbloom_vm_main "${kbloom_mode:-check}" >&3 2>&3
status=$?

if [ "${kbloom_mode:-check}" = shell ]; then
	setsid cttyhack sh
elif [ $status -eq 0 ]; then
	echo success > /dev/ttyS1
fi
sync
reboot -f
