#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: everything kbloom is tested by, in order of cost.
#  1. native unit tests of the core, and deliberately broken cores that
#     they must catch (tools/mutate.sh); bloomctl and bloomsync natively;
#  2. W=1, sparse and checkpatch --strict on the module; the libFuzzer
#     harnesses for a bounded time (tools/fuzz, when present);
#  3. Debian's stock kernel, the one users run: the in-VM tests, as two
#     VMs side by side; the reboot test: a Debian system (systemd,
#     netfilter-persistent) on the stock kernel, the bloomctl package and
#     the modules installed, filters and rules across a clean reboot and a
#     crash; two hosts exchanging digests;
#  4. the debug kernel (KUnit, KASAN + KASAN_VMALLOC, lockdep, UBSAN,
#     kmemleak, fault injection, panic_on_warn): KUnit suites and the
#     in-VM tests (with the fail-nth sweep and the ioctl fuzzer), as two
#     VMs side by side (run_vm);
#  4b. the KCSAN kernel: KUnit and the concurrency tests, no data race.
# The two debug kernels build in the background from the start.
# With --quick (make check-quick), stages 1 and 2 only, for the edit loop:
# no VM, no kernel built, no mutants, no fuzzers, the module without BTF.
# Every test program must exit 0 and print its TAP plan "1..N" and N
# results (count_tap). Ends with "N passed, M failed"; exits non-zero if
# anything failed.
set -uo pipefail

quick=
[ "${1:-}" = --quick ] && quick=1

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/lib-module.sh
. "$top/tools/lib-module.sh"
build=${KBLOOM_BUILD:-$top/build}
passed=0
failed=0
started=$(date +%s)

say() { printf '\n== %s (at %d s)\n' "$*" $(( $(date +%s) - started )); }
pass() { passed=$((passed + 1)); echo "ok - $*"; }
fail() { failed=$((failed + 1)); echo "not ok - $*"; }

# ---- TAP accounting (check honesty) ----
# count_tap LOG LABEL [EXIT_STATUS]: add the "ok"/"not ok" lines of a TAP
# log (column 0 only) to the totals, and fail unless the log is whole:
#  - each stream has exactly one plan "1..N", before its first result or
#    after its last, and exactly N results: a test that dies after 30 "ok"
#    lines has a short plan (or none) and fails here;
#  - a VM log holds several streams: the lines between "# TAP-BEGIN NAME"
#    and "# TAP-END NAME exit=RC" (tap_run in tools/vm/tests.d/faults.sh)
#    are program NAME's, which must also have exited 0; the rest is
#    tests.sh's own; "# KTAP-BEGIN"/"# KTAP-END" blocks are count_ktap's;
#  - EXIT_STATUS, the status of the program that wrote LOG, must be 0.
count_tap() {
	local log=$1 label=$2 status=${3:-0} p=0 f=0 line
	if [ ! -s "$log" ]; then
		fail "$label: no TAP output at all"
		return
	fi
	while IFS= read -r line; do
		case "$line" in
		"PASS "*) p=${line#PASS } ;;
		"FAIL "*) f=${line#FAIL } ;;
		"PROBLEM "*) fail "$label: ${line#PROBLEM }" ;;
		*) echo "    $line" ;;
		esac
	done < <(awk '
		function problem(m) { print "PROBLEM " m }
		function check(s) {
			if (plans[s] != 1)
				problem((s == "" ? "" : s ": ") plans[s] + 0 " plan lines (want one \"1..N\")")
			else if (late[s])
				problem((s == "" ? "" : s ": ") "results after the trailing plan")
			else if (res[s] != want[s])
				problem((s == "" ? "" : s ": ") "plan 1.." want[s] ", " res[s] + 0 " results")
		}
		{ sub(/\r$/, "") }
		/^# KTAP-BEGIN / { ktap = 1; next }
		/^# KTAP-END/ { ktap = 0; next }
		ktap { next }
		/^# TAP-BEGIN / {
			if (cur != "") { check(cur); problem(cur ": no TAP-END") }
			cur = $3; plans[cur] = res[cur] = late[cur] = 0; where[cur] = ""
			next
		}
		/^# TAP-END / {
			ex = $4; sub(/^exit=/, "", ex)
			if ($3 != cur) { problem("TAP-END " $3 " without its TAP-BEGIN"); next }
			check(cur)
			if (ex != "0") problem(cur ": exit status " ex)
			cur = ""
			next
		}
		/^1\.\.[0-9]+/ {
			plans[cur]++; split($1, a, /\.\./); want[cur] = a[2] + 0
			where[cur] = res[cur] ? "end" : "start"
			next
		}
		/^ok($| )/ { res[cur]++; pass++; if (where[cur] == "end") late[cur] = 1; next }
		/^not ok($| )/ { res[cur]++; nfail++; print; if (where[cur] == "end") late[cur] = 1; next }
		END {
			if (cur != "") { check(cur); problem(cur ": no TAP-END (it or the VM died)") }
			cur = ""; check(cur)
			print "PASS " pass + 0; print "FAIL " nfail + 0
		}' "$log")
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$status" = 0 ] || fail "$label: exit status $status"
	echo "   $p passed, $f failed ($label)"
}
# ---- end of TAP accounting ----

# KUnit: count test cases (a parameterised case counts once) from the
# KTAP that the VM copied out of debugfs. A suite that crashed or never
# ran leaves no result line, and the VM's result channel catches it.
count_ktap() {
	local p f
	p=$(awk '/^# KTAP-BEGIN/{s=1;next} /^# KTAP-END/{s=0} s && /^    ok [0-9]+ /' "$1" | wc -l)
	f=$(awk '/^# KTAP-BEGIN/{s=1;next} /^# KTAP-END/{s=0} s && /^    not ok [0-9]+ /' "$1" | wc -l)
	awk '/^# KTAP-BEGIN/{s=1;next} /^# KTAP-END/{s=0} s && /^    not ok [0-9]+ /' "$1" | sed 's/^/    KUnit /'
	passed=$((passed + p))
	failed=$((failed + f))
	echo "   KUnit: $p cases passed, $f failed"
	[ "$p" -gt 0 ] || fail "KUnit ran no test case"
}

# The closing lines, which CI reads; the exit status.
finish() {
	echo
	echo "make check${quick:+-quick} took $(( $(date +%s) - started )) s"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

say "dependencies"
"$top/tools/deps.sh" || { fail "installing Debian packages"; }

# The Debian packages build in a scratch copy of the tree and lintian is
# slow: they run beside everything up to the packaging stage.
mkdir -p "$build"
"$top/tools/packaging/deb.sh" --check > "$build/deb-check.out" 2>&1 &
deb_check=$!

# The two debug kernels are the longest stages of a first run, and only
# their VMs need them: they build from the start, one after the other (two
# at once would share the same cores and both finish late), at the lowest
# priority, on what the other stages leave idle: the single-threaded
# fuzzers, the waits of the native tests and of the stock kernel's VMs,
# which run first. A cached kernel returns at once. kernel_wait VARIANT
# prints the build directory, or fails. The builder is a process group of
# its own (setsid), which an interrupted run takes down with it.
if [ -z "$quick" ]; then
	rm -f "$build"/kernel-*.path "$build"/kernel-*.done
	# shellcheck disable=SC2016 # expanded by the inner shell
	setsid bash -c 'for v in debug kcsan; do
		nice -n 19 "$1/tools/vm/kernel.sh" --variant "$v" \
			> "$2/kernel-$v.path" 2> "$2/kernel-$v.log"
		echo $? > "$2/kernel-$v.done"
	done' kernels "$top" "$build" &
	kernels=$!
	trap 'kill -TERM -- "-$kernels" 2> /dev/null' EXIT
fi
kernel_wait() { # VARIANT
	while [ ! -f "$build/kernel-$1.done" ]; do
		kill -0 "$kernels" 2> /dev/null || [ -f "$build/kernel-$1.done" ] ||
			{ echo "the kernel builder died" >&2; return 1; }
		sleep 2
	done
	cat "$build/kernel-$1.log" >&2
	[ "$(cat "$build/kernel-$1.done")" = 0 ] && cat "$build/kernel-$1.path"
}

say "native unit tests of the core"
rm -f "$build.native.log"
if make -s -C "$top/tools/native" kbloom_core_test >/dev/null; then
	"$top/tools/native/kbloom_core_test" > "$build.native.log" 2>&1
	count_tap "$build.native.log" "native core" $?
else
	fail "building the native unit tests"
fi
# make bench's program (not its timings): it builds with its peers
# (libbloom, the BPF program and its skeleton) and every kind finds every
# present key; a kind whose library or bpf() is missing says so.
if make -s -C "$top/tools/bench" kbloom_bench > "$build/bench-smoke.log" 2>&1 &&
	"$top/tools/bench/kbloom_bench" -q -l 8 20000 >> "$build/bench-smoke.log" 2>&1; then
	pass "make bench's program builds and runs: 20,000 keys, every kind, no false negative"
	grep -E '^- (libbloom|BPF)' "$build/bench-smoke.log" | sed 's/^/   /'
else
	tail -20 "$build/bench-smoke.log"
	fail "make bench's program builds and runs"
fi

# Tests of the tests: deliberately broken cores (tools/mutate.sh) that the
# native tests must catch. None needs a kernel, so no KDIR.
if [ -z "$quick" ]; then
	say "tests of the tests: deliberately broken builds must fail"
	"$top/tools/mutate.sh" "$build/mutants" > "$build/mutants.log" 2>&1
	count_tap "$build/mutants.log" "mutants caught" $?
fi

say "bloomctl (native, no module needed)"
# The static and 32-bit variants are for the VMs' initramfs only.
bloomctl_targets=bloomctl
[ -n "$quick" ] || bloomctl_targets="bloomctl variants"
# shellcheck disable=SC2086 # two targets, or one
if make -s -C "$top/tools/bloomctl" $bloomctl_targets >/dev/null; then
	# The longest native stage, and one core's work: it runs beside the
	# stages after it and is counted after the packaging.
	"$top/tools/bloomctl/test-native.sh" "$top/tools/bloomctl/bloomctl" > "$build/bloomctl-native.log" 2>&1 &
	bloomctl_native=$!
	"$top/tools/completion/test.sh" "$top/tools/bloomctl/bloomctl" > "$build/completion.log" 2>&1
	count_tap "$build/completion.log" "bash completion" $?
else
	fail "building bloomctl"
fi
# bloomsync: hosts on bloomctl's fake device, a real nats-server. Mostly
# waiting for its intervals, so it too runs beside the stages after it.
say "bloomsync (native, a real JetStream server)"
if make -s -C "$top/tools/bloomsync" bloomsync blocks-check >/dev/null &&
	make -s -C "$top/tools/bloomctl" fakedev.so >/dev/null; then
	"$top/tools/bloomsync/test-native.sh" "$top/tools/bloomsync/bloomsync" \
		"$top/tools/bloomctl/bloomctl" > "$build/bloomsync-native.log" 2>&1 &
	bloomsync_native=$!
	echo "   started; counted after the packaging"
else
	fail "building bloomsync"
fi
# The selftest, the fail-nth sweep and the ioctl fuzzer run only in the
# VMs (tests.d/): built for make check, not for the edit loop.
if [ -z "$quick" ]; then
	make -s -C "$top/tools/selftest" >/dev/null || fail "building kbloom_selftest"
	make -s -C "$top/tools/stress" >/dev/null || fail "building the stress tools (tools/stress)"
fi
# The iptables extension, checked and unchecked (tests.d/packets.sh).
make -s -C "$top/tools/xtables" >/dev/null || fail "building the iptables extension (tools/xtables)"
# The XDP examples, their loader, its tests' way in and its benchmark
# (tests.d/bpf.sh). The program on BPF bloom maps runs here too, on this
# machine's own kernel.
if make -s -C "$top/tools/bpf" >/dev/null &&
	make -s -C "$top/tools/bench" kbloom_xdp_bench >/dev/null; then
	say "XDP example on BPF maps, natively (tools/bpf/test-native.sh)"
	"$top/tools/bpf/test-native.sh" "$top/tools/bpf/kbloom_xdp" \
		"$top/tools/bpf/kbloom_xdp_test" "$top/tools/bench/kbloom_xdp_bench" \
		> "$build/bpf-native.log" 2>&1
	count_tap "$build/bpf-native.log" "XDP example, native" $?
else
	fail "building the XDP examples (tools/bpf)"
fi

# Each kernel's module is built out of its own copy of the tree
# (kbloom_build_module, tools/lib-module.sh), so builds never share objects.

stock_kdir=$(find /usr/src -maxdepth 1 -name "linux-headers-*-amd64" | sort -V | tail -n 1)
stock_image=/boot/vmlinuz-${stock_kdir#/usr/src/linux-headers-}

say "static checks against $stock_kdir"
# The script and patch-style checks build nothing: they run beside the builds.
make -s -C "$top" shellcheck > "$build/shellcheck.log" 2>&1 &
shellcheck_pid=$!
make -s -C "$top" checkpatch > "$build/checkpatch.log" 2>&1 &
checkpatch_pid=$!
# With BTF (tools/btf-kdir.sh), so that the kfuncs register and
# tests.d/bpf.sh can load programs that call them; the same module with
# its .BTF section cut off is the one without kfuncs. --quick: without,
# which needs no kernel tree of its own.
# Sparse checks each file as it is compiled (C=1): a fresh copy of the
# tree compiles every file, so this is make sparse's C=2 without a second
# build. Its warnings land in the same log as the compiler's.
if [ -n "$quick" ]; then
	kbloom_build_module "$stock_kdir" "$build/stock-quick" C=1 CHECK=sparse
	rc=$?
	cp "$build/stock-quick/build.log" "$build/stock.log" 2>/dev/null
else
	KBLOOM_BTF=1 kbloom_build_module "$stock_kdir" "$build/stock" C=1 CHECK=sparse
	rc=$?
	cp "$build/stock/build.log" "$build/stock.log" 2>/dev/null
fi
if [ $rc -eq 0 ]; then
	if [ -z "$quick" ]; then
		objcopy --remove-section .BTF "$build/stock/kmod/kbloom.ko" \
			"$build/stock/kmod/kbloom-nobtf.ko"
		pass "module builds with BTF (make BTF=1: the target kernel's BTF, resolve_btfids)"
	fi
	if grep -E -q 'warning:|error:' "$build/stock.log"; then
		cat "$build/stock.log"; fail "module builds warning-free with W=1, sparse clean"
	else
		pass "module builds warning-free with W=1, sparse clean"
	fi
else
	cat "$build/stock.log"; fail "module builds against $stock_kdir"
fi
if wait "$shellcheck_pid"; then
	pass "shellcheck clean (every shell script)"
else
	cat "$build/shellcheck.log"; fail "shellcheck clean (every shell script)"
fi
if wait "$checkpatch_pid"; then
	pass "checkpatch.pl --strict clean"
else
	cat "$build/checkpatch.log"; fail "checkpatch.pl --strict clean"
fi

# ---- packaging ----
say "packaging: DKMS against Debian's headers, the Debian packages"
# --quick: the packages and their lint (started with the first stage), not
# a DKMS build of the module (the module was just built against the same
# headers).
if [ -z "$quick" ]; then
	"$top/tools/packaging/dkms-check.sh" > "$build/dkms-check.out" 2>&1
	rc=$?
	count_tap "$build/dkms-check.out" "dkms" $rc
	[ $rc -eq 0 ] || tail -n 40 "$build/dkms-check.out" | sed 's/^/    | /'
fi
wait "$deb_check"
rc=$?
count_tap "$build/deb-check.out" "Debian packages" $rc
[ $rc -eq 0 ] || tail -n 40 "$build/deb-check.out" | sed 's/^/    | /'
# ---- end of packaging ----

if [ -n "${bloomctl_native:-}" ]; then
	say "bloomctl (native): the tests started with its stage"
	wait "$bloomctl_native"
	count_tap "$build/bloomctl-native.log" "bloomctl native" $?
fi
if [ -n "${bloomsync_native:-}" ]; then
	say "bloomsync (native): the tests started with its stage"
	wait "$bloomsync_native"
	count_tap "$build/bloomsync-native.log" "bloomsync native" $?
fi

# ---- libFuzzer ----
# The harnesses in tools/fuzz (image validation, bloomctl's readers and
# parsers), each for a bounded time from its committed corpus; the target
# builds them first and prints TAP.
fuzz_s=${KBLOOM_LIBFUZZER_SECONDS:-20}
if [ -z "$quick" ] && [ -f "$top/tools/fuzz/Makefile" ]; then
	say "libFuzzer harnesses ($fuzz_s s each)"
	make -s -C "$top/tools/fuzz" run SECONDS="$fuzz_s" > "$build/libfuzzer.log" 2>&1
	rc=$?
	count_tap "$build/libfuzzer.log" "libFuzzer" $rc
	[ $rc -eq 0 ] || tail -40 "$build/libfuzzer.log" | sed 's/^/    | /'
fi
# ---- end of libFuzzer ----

[ -n "$quick" ] && finish

vm_files() { # MODULE_DIR
	echo "$1/kmod/kbloom.ko:lib/kbloom/kbloom.ko"
	echo "$top/tools/bloomctl/bloomctl.static:bin/bloomctl"
	echo "$top/tools/bloomctl/bloomctl32:bin/bloomctl32"
	# bloomsync (tests.d/fleet.sh): the daemon and a real nats-server,
	# beside a host on the fake device (fakedev.so, a dynamic bloomctl).
	if [ -f "$top/tools/bloomsync/bloomsync" ] && [ -x /usr/sbin/nats-server ] &&
		[ -f "$top/tools/bloomctl/fakedev.so" ]; then
		echo "$top/tools/bloomsync/bloomsync:bin/bloomsync"
		echo "/usr/sbin/nats-server:bin/nats-server"
		echo "$top/tools/bloomctl/bloomctl:bin/bloomctl-dyn"
		echo "$top/tools/bloomctl/fakedev.so:lib/kbloom/fakedev.so"
	fi
	[ -f "$top/tools/bloomsync/blocks-check" ] &&
		echo "$top/tools/bloomsync/blocks-check:bin/blocks-check"
	echo "$top/tools/selftest/kbloom_selftest:bin/kbloom_selftest"
	echo "$top/tools/selftest/kbloom_selftest32:bin/kbloom_selftest32"
	echo "$top/tools/selftest/kbloom_selftest_stress:bin/kbloom_selftest_stress"
	echo "$top/tools/selftest/kbloom_selftest_stress32:bin/kbloom_selftest_stress32"
	# tools/stress (tests.d/faults.sh, fuzz.sh say so when one is missing)
	local x
	for x in kbloom_failnth kbloom_ioctl_fuzz kbloom_ioctl_fuzz32; do
		[ -f "$top/tools/stress/$x" ] && echo "$top/tools/stress/$x:bin/$x"
	done
	# The bloom match (tests.d/packets.sh): the module, the extension
	# where iptables looks for it, and the extension built without its
	# checks, so that the kernel's own refusals can be reached.
	[ -f "$1/kmod/xt_bloom.ko" ] && echo "$1/kmod/xt_bloom.ko:lib/kbloom/xt_bloom.ko"
	# The kfuncs (tests.d/bpf.sh): the loader with its programs, its
	# tests' way in and its benchmark, and a kbloom.ko without BTF, where
	# there is one.
	for x in bpf/kbloom_xdp bpf/kbloom_xdp_test bench/kbloom_xdp_bench; do
		[ -f "$top/tools/$x" ] && echo "$top/tools/$x:bin/${x#*/}"
	done
	echo "$top/tools/bpf/test-kfunc.sh:lib/kbloom/test-kfunc.sh"
	[ -f "$top/tools/bpf/kbloom_udpflows" ] && echo "$top/tools/bpf/kbloom_udpflows:bin/kbloom_udpflows"
	[ -f "$top/tools/bpf/kbloom_bpf_access" ] && echo "$top/tools/bpf/kbloom_bpf_access:bin/kbloom_bpf_access"
	[ -f "$1/kmod/kbloom-nobtf.ko" ] && echo "$1/kmod/kbloom-nobtf.ko:lib/kbloom/kbloom-nobtf.ko"
	if [ -f "$top/tools/xtables/libxt_bloom.so" ]; then
		x=$(pkg-config --variable=xtlibdir xtables 2>/dev/null) ||
			x=/usr/lib/x86_64-linux-gnu/xtables
		echo "$top/tools/xtables/libxt_bloom.so:${x#/}/libxt_bloom.so"
		[ -f "$top/tools/xtables/unchecked/libxt_bloom.so" ] &&
			echo "$top/tools/xtables/unchecked/libxt_bloom.so:lib/kbloom/xt-unchecked/libxt_bloom.so"
	fi
}

# Kernel command line for tests.d/fuzz.sh: how long the ioctl fuzzer runs
# (seconds), and KBLOOM_FUZZ_SEED=N to replay a run's "# seed N".
fuzz_append() { # SECONDS
	echo "kbloom_fuzz_seconds=$1${KBLOOM_FUZZ_SEED:+ kbloom_fuzz_seed=$KBLOOM_FUZZ_SEED}"
}

# The kernel's first report (the panic's cause: a warning, an oops, a
# KCSAN or KASAN report, a lockup), whole: the log's tail shows only how
# the panic ended, and a long log is cut in the middle where CI shows it.
vm_first_report() { # CONSOLE_LOG
	local at
	at=$(grep -n -m1 -E 'BUG:|WARNING:|Oops|general protection|watchdog:|INFO: task|Kernel panic|rcu: INFO' "$1" | cut -d: -f1)
	[ -n "$at" ] || return 0
	echo "    first report, console.log line $at:"
	sed -n "$((at > 3 ? at - 3 : 1)),$((at + 60))p" "$1" | sed 's/^/    | /'
	echo "    ..."
}

# A kernel's check VM is two VMs side by side, each with a share of
# tests.sh's areas (kbloom_split, kbloom_part): a VM runs its areas one at
# a time, which leaves this machine's second core idle. The first VM runs
# the areas in $vm_split, the second every other one, so that a new area
# is never left out; the "# times:" lines show the balance.
vm_split=run_kunit,run_selftest,run_bpf

# vm_dir LABEL PART: where VM PART of the LABEL kernel keeps its logs.
vm_dir() {
	if [ "$2" = 1 ]; then
		echo "$build/vm-$1"
	else
		echo "$build/vm-$1-$2"
	fi
}

run_vm() { # LABEL IMAGE MODULE_DIR APPEND [MODE]
	local mode=${5:-check} parts=1 p dir label t0 append
	local -a pid vmrc logs
	t0=$(date +%s)
	[ "$mode" = check ] && [ "${KBLOOM_VM_PARTS:-2}" = 2 ] && parts=2
	for p in $(seq "$parts"); do
		dir=$(vm_dir "$1" "$p")
		append=$4
		[ "$parts" = 1 ] || append="$append kbloom_split=$vm_split kbloom_part=$p"
		mkdir -p "$dir"
		# shellcheck disable=SC2046
		"$top/tools/vm/run.sh" --kernel "$2" --dir "$dir" --mode "$mode" \
			--timeout "${KBLOOM_VM_TIMEOUT:-2700}" \
			--append "$append" $(vm_files "$3") < /dev/null &
		pid[p]=$!
	done
	for p in $(seq "$parts"); do
		wait "${pid[p]}"
		vmrc[p]=$?
	done
	for p in $(seq "$parts"); do
		dir=$(vm_dir "$1" "$p")
		label="$1 kernel VM"
		[ "$parts" = 1 ] || label="$label $p of $parts"
		logs+=("$dir/tests.log")
		count_tap "$dir/tests.log" "$label"
		grep -E '^# (speed|seed|packets|times)' "$dir/tests.log" | sed 's/^/   /'
		if [ "${vmrc[p]}" -eq 0 ]; then
			pass "$label: clean run, result channel says success ($(( $(date +%s) - t0 )) s)"
		else
			fail "$label: no success on the result channel; kernel log:"
			vm_first_report "$dir/console.log"
			sed 's/^/    | /' "$dir/console.log" | tail -40
		fi
	done
	# KUnit runs in one of the parts.
	case "$1" in
	debug|kcsan)
		cat "${logs[@]}" > "$build/vm-$1.ktap"
		count_ktap "$build/vm-$1.ktap" ;;
	esac
}

# The stock kernel's VMs first: its kernel is there, and the debug kernels
# may still be building.
say "Debian's stock kernel ($stock_image)"
if [ -f "$build/stock/kmod/kbloom.ko" ]; then
	run_vm stock "$stock_image" "$build/stock" "$(fuzz_append 30)"
else
	fail "no module for the stock kernel"
fi

# ---- reboot test ----
# A whole Debian system (tools/vm/rootfs.sh, cached) on the stock kernel,
# booted three times on one disk: the bloomctl package (built by the
# packaging stage) and the modules installed in it, filters and rules kept
# across a clean reboot by kbloom.service and netfilter-persistent, then
# across a crash by kbloom-save.timer (tools/vm/reboot-test.sh).
if [ -f "$build/stock/kmod/kbloom.ko" ]; then
	say "reboot test: a Debian system on the stock kernel, a reboot and a crash"
	deb=$(find "$build/deb" -name 'bloomctl_*.deb' 2>/dev/null | head -n 1)
	"$top/tools/vm/reboot-test.sh" --modules "$build/stock/kmod" ${deb:+--deb "$deb"} \
		> "$build/reboot-test.log" 2>&1
	rc=$?
	count_tap "$build/reboot-test.log" "reboot test" $rc
	grep -E '^# (root filesystem|boot [0-9]|the reboot test|the crash window)' "$build/reboot-test.log" | sed 's/^/   /'
	[ $rc -eq 0 ] || tail -n 60 "$build/reboot-test.log" | sed 's/^/    | /'
fi
# ---- end of reboot test ----

# The Summary Cache pattern between two "hosts": two boots of the stock
# kernel; the images host A saves travel to host B through the host.
run_exchange() {
	local da=$build/vm-host-a db=$build/vm-host-b x rc
	mkdir -p "$da" "$db"
	rm -f "$da"/*.img "$da"/*.b64
	"$top/tools/vm/run.sh" --kernel "$stock_image" --dir "$da" \
		--mode exchange-a "$build/stock/kmod/kbloom.ko:lib/kbloom/kbloom.ko" \
		"$top/tools/bloomctl/bloomctl.static:bin/bloomctl"
	rc=$?
	count_tap "$da/tests.log" "host A"
	awk -v dir="$da" '{ sub(/\r$/, "") }
		/^# FILE-BEGIN /	{ f = dir "/" $3 ".b64"; next }
		/^# FILE-END/		{ f = ""; next }
		f			{ print > f }' "$da/tests.log"
	for x in "$da"/*.b64; do
		[ -f "$x" ] && base64 -d "$x" > "${x%.b64}"
	done
	if [ $rc -ne 0 ] || [ ! -s "$da/template.img" ] || [ ! -s "$da/a.img" ]; then
		fail "host A: boot and images"
		sed 's/^/    | /' "$da/console.log" | tail -80
		return
	fi
	"$top/tools/vm/run.sh" --kernel "$stock_image" --dir "$db" \
		--mode exchange-b "$build/stock/kmod/kbloom.ko:lib/kbloom/kbloom.ko" \
		"$top/tools/bloomctl/bloomctl.static:bin/bloomctl" \
		"$da/template.img:in/template.img" "$da/a.img:in/a.img"
	rc=$?
	count_tap "$db/tests.log" "host B"
	grep '^# ' "$db/tests.log" | grep -v FILE | sed 's/^/   /'
	if [ $rc -eq 0 ]; then
		pass "two hosts exchanged digests: the merged digest is the union"
	else
		fail "host B: no success on the result channel; kernel log:"
		sed 's/^/    | /' "$db/console.log" | tail -80
	fi
}

if [ -f "$build/stock/kmod/kbloom.ko" ]; then
	say "two hosts exchanging digests (Summary Cache), two boots"
	run_exchange
fi

say "debug kernel (KUnit, KASAN, lockdep, UBSAN, kmemleak)"
if kdir=$(kernel_wait debug); then
	if kbloom_build_module "$kdir" "$build/debug"; then
		run_vm debug "$kdir/arch/x86/boot/bzImage" "$build/debug" "$(fuzz_append 60)"
	else
		cat "$build/debug/build.log"; fail "module builds against the debug kernel"
	fi
else
	fail "building the debug kernel"
fi

# ---- KCSAN ----
# The second debug kernel (kernel.sh --variant kcsan: debug.config without
# KASAN, plus tools/vm/kcsan.config): KUnit and the in-VM concurrency tests
# (tests.d/kcsan.sh: the selftest's stress area, kbloom_selftest_stress,
# and the ioctl fuzzer); any "BUG: KCSAN: data-race" in the kernel log
# fails the run.
say "KCSAN kernel (data races): KUnit, concurrency tests, ioctl fuzzer"
if kdir=$(kernel_wait kcsan); then
	if kbloom_build_module "$kdir" "$build/kcsan"; then
		# panic_on_warn=0: see kcsan_drop_foreign in tests.d/kcsan.sh.
		run_vm kcsan "$kdir/arch/x86/boot/bzImage" "$build/kcsan" "$(fuzz_append 60) panic_on_warn=0 log_buf_len=16M" kcsan
	else
		cat "$build/kcsan/build.log"; fail "module builds against the KCSAN kernel"
	fi
else
	fail "building the KCSAN kernel"
fi
# ---- end of KCSAN ----

finish
