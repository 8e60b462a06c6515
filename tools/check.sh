#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: everything kbloom is tested by, in order of cost.
#  1. native unit tests of the core and of bloomctl (seconds);
#  2. W=1, sparse and checkpatch --strict on the module;
#  3. the debug kernel (KUnit, KASAN + KASAN_VMALLOC, lockdep, UBSAN,
#     kmemleak, panic_on_warn): KUnit suites and the in-VM tests;
#     then deliberately broken builds, which must make KUnit fail;
#  4. Debian's stock kernel, the one users run: the in-VM tests.
# Ends with "N passed, M failed"; exits non-zero if anything failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${KBLOOM_BUILD:-$top/build}
passed=0
failed=0
started=$(date +%s)

say() { printf '\n== %s\n' "$*"; }
pass() { passed=$((passed + 1)); echo "ok - $*"; }
fail() { failed=$((failed + 1)); echo "not ok - $*"; }

# Add the "ok"/"not ok" lines of a TAP-ish log (column 0 only) to the totals.
count_tap() {
	local p f
	p=$(grep -E -c '^ok ' "$1")
	f=$(grep -E -c '^not ok ' "$1")
	passed=$((passed + p))
	failed=$((failed + f))
	grep -E '^not ok ' "$1" | sed 's/^/    /'
	echo "   $p passed, $f failed ($2)"
}

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

say "dependencies"
"$top/tools/deps.sh" || { fail "installing Debian packages"; }

say "native unit tests of the core"
make -s -C "$top/tools/native" kbloom_core_test >/dev/null &&
	"$top/tools/native/kbloom_core_test" | tee "$build.native.log" >/dev/null
count_tap "$build.native.log" "native core"

say "bloomctl (native, no module needed)"
mkdir -p "$build"
if make -s -C "$top/tools/bloomctl" >/dev/null; then
	"$top/tools/bloomctl/test-native.sh" "$top/tools/bloomctl/bloomctl" > "$build/bloomctl-native.log" 2>&1
	count_tap "$build/bloomctl-native.log" "bloomctl native"
else
	fail "building bloomctl"
fi
make -s -C "$top/tools/selftest" >/dev/null || fail "building kbloom_selftest"

# Build the module out of a copy per kernel, so the two builds never share
# objects.
build_module() { # KDIR OUTDIR
	rm -rf "$2"
	mkdir -p "$2"
	cp -r "$top/Kbuild" "$top/kmod" "$top/kunit" "$top/include" "$2/"
	make -C "$1" M="$2" W=1 modules > "$2/build.log" 2>&1
}

stock_kdir=$(ls -d /usr/src/linux-headers-*-amd64 | sort -V | tail -1)
stock_image=/boot/vmlinuz-${stock_kdir#/usr/src/linux-headers-}

say "static checks against $stock_kdir"
if build_module "$stock_kdir" "$build/stock"; then
	if grep -E -q 'warning:|error:' "$build/stock/build.log"; then
		cat "$build/stock/build.log"; fail "module builds warning-free with W=1"
	else
		pass "module builds warning-free with W=1"
	fi
else
	cat "$build/stock/build.log"; fail "module builds against $stock_kdir"
fi
if make -s -C "$top" sparse > "$build/sparse.log" 2>&1 &&
   ! grep -E -q 'warning:|error:' "$build/sparse.log"; then
	pass "sparse (C=2) clean"
else
	cat "$build/sparse.log"; fail "sparse (C=2) clean"
fi
if make -s -C "$top" checkpatch > "$build/checkpatch.log" 2>&1; then
	pass "checkpatch.pl --strict clean"
else
	cat "$build/checkpatch.log"; fail "checkpatch.pl --strict clean"
fi

vm_files() { # MODULE_DIR
	echo "$1/kmod/kbloom.ko:lib/kbloom/kbloom.ko"
	[ -f "$1/kunit/kbloom_test.ko" ] && echo "$1/kunit/kbloom_test.ko:lib/kbloom/kbloom_test.ko"
	echo "$top/tools/bloomctl/bloomctl.static:bin/bloomctl"
	echo "$top/tools/bloomctl/bloomctl32:bin/bloomctl32"
	echo "$top/tools/selftest/kbloom_selftest:bin/kbloom_selftest"
	echo "$top/tools/selftest/kbloom_selftest32:bin/kbloom_selftest32"
}

run_vm() { # LABEL IMAGE MODULE_DIR APPEND
	local dir=$build/vm-$1 t0=$(date +%s)
	mkdir -p "$dir"
	# shellcheck disable=SC2046
	"$top/tools/vm/run.sh" --kernel "$2" --dir "$dir" --mode check \
		--append "$4" $(vm_files "$3")
	local rc=$?
	count_tap "$dir/tests.log" "$1 kernel VM"
	grep '^# speed' "$dir/tests.log" | sed 's/^/   /'
	[ "$1" = debug ] && count_ktap "$dir/tests.log"
	if [ $rc -eq 0 ]; then
		pass "$1 kernel VM: clean run, result channel says success ($(( $(date +%s) - t0 )) s)"
	else
		fail "$1 kernel VM: no success on the result channel; kernel log:"
		sed 's/^/    | /' "$dir/console.log" | tail -150
	fi
}

say "debug kernel (KUnit, KASAN, lockdep, UBSAN, kmemleak)"
if kdir=$("$top/tools/vm/kernel.sh"); then
	if build_module "$kdir" "$build/debug"; then
		run_vm debug "$kdir/arch/x86/boot/bzImage" "$build/debug" "kbloom_speed_keys=1000000 kbloom_speed_min=20"
		say "tests of the tests: deliberately broken builds must fail"
		"$top/tools/mutate.sh" "$kdir" "$build/mutants" > "$build/mutants.log" 2>&1
		count_tap "$build/mutants.log" "mutants caught"
	else
		cat "$build/debug/build.log"; fail "module builds against the debug kernel"
	fi
else
	fail "building the debug kernel"
fi

say "Debian's stock kernel ($stock_image)"
if [ -f "$build/stock/kmod/kbloom.ko" ]; then
	run_vm stock "$stock_image" "$build/stock" "kbloom_speed_keys=1000000 kbloom_speed_min=4"
else
	fail "no module for the stock kernel"
fi

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

echo
echo "make check took $(( $(date +%s) - started )) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
