#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of the tests: build kbloom with a deliberate bug and require that
# the tests FAIL. Each mutant runs at the cheapest tier that catches it:
#   native: the native core tests (tools/native/kbloom_core_test, stopping
#           at the first failure) built on the mutated core; seconds;
#   kunit:  the module built against KDIR, and the debug kernel booted
#           with only the KUnit suites; minutes. For what only a kernel
#           shows (the registry, windows, kernel-only code); needs KDIR.
# Usage: mutate.sh OUTDIR [KDIR]; prints the TAP plan, then one
# "ok"/"not ok" line per mutant; exits 1 if any is "not ok".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/lib-module.sh
. "$top/tools/lib-module.sh"
out=$(mkdir -p "$1" && cd "$1" && pwd)
kdir=${2:-}

# tier|name|file|sed expression (must change the file)
mutants=(
	'native|a plain read-modify-write in place of the atomic OR that sets bits (both layouts)|kmod/kbloom_core.h|s/^\tunsigned long got = mask & ~set_mask_bits(w, 0UL, mask);$/\tunsigned long old = READ_ONCE(*w), got = mask \& ~old;\n\tWRITE_ONCE(*w, old | mask);/'
	'native|off-by-one in the range reduction (x onto [0, m])|kmod/kbloom_hash.c|s/probe->x = kbloom_reduce(h, core->nbits);/probe->x = kbloom_reduce(h, core->nbits + 1);/'
	'native|probe step allowed to be 0|kmod/kbloom_hash.c|s/probe->y = 1 + kbloom_reduce(rol64(h, 32), core->nbits - 1);/probe->y = kbloom_reduce(rol64(h, 32), core->nbits);/'
	'native|sizing rounds m down, not up (kbloom_size)|kmod/kbloom_sizing.c|s/if ((u32)(capacity \* bpk) != 0)/if (0)/'
	'native|sizing truncates k, not rounds it (kbloom_optimal_hashes)|kmod/kbloom_sizing.c|s/k = (k + (1ULL << 31)) >> 32;/k = k >> 32;/'
	'native|a stuck counter decremented by a remove (kbloom_counter_dec)|kmod/kbloom_core.c|s/if (n == KBLOOM_COUNTER_STUCK || n == 0)/if (n == 0)/'
	'native|a counting merge wraps past 15 (kbloom_counters_add)|kmod/kbloom_core.c|s/r |= min_t(unsigned long, x, KBLOOM_COUNTER_STUCK) << shift;/r |= (x \& 0xf) << shift;/'
	'native|blocks of 7 words, not 8, on the blocked fast path (kbloom_block_at)|kmod/kbloom_hash.h|s/return core->bitmap + kbloom_reduce(h, nblocks) \* KBLOOM_BLOCK_LONGS;/return core->bitmap + kbloom_reduce(h, nblocks) * (KBLOOM_BLOCK_LONGS - 1);/'
)

# run_TIER DIR: run the tier's tests on the mutant in DIR. Status 0 if
# they pass (the mutant survived), 125 if it does not build (said here),
# anything else if they fail.
# run_native DIR: the native core tests on DIR's sources.
run_native() {
	local dir=$1

	mkdir -p "$dir/tools"
	cp -r "$top/tools/native" "$dir/tools/"
	rm -f "$dir/tools/native/kbloom_core_test"
	if ! make -C "$dir/tools/native" kbloom_core_test > "$dir/build.log" 2>&1; then
		echo "not ok - mutant '$name' does not build natively (log: $dir/build.log)"
		return 125
	fi
	timeout 900 "$dir/tools/native/kbloom_core_test" -x > "$dir/tests.log" 2>&1
}

# run_kunit DIR: the KUnit suites on the debug kernel.
run_kunit() {
	local dir=$1

	if [ -z "$kdir" ]; then
		echo "not ok - mutant '$name' needs the debug kernel (mutate.sh OUTDIR KDIR)"
		return 125
	fi
	if ! kbloom_module_make "$kdir" "$dir"; then
		echo "not ok - mutant '$name' does not build (log: $dir/build.log)"
		return 125
	fi
	"$top/tools/vm/run.sh" --kernel "$kdir/arch/x86/boot/bzImage" \
		--dir "$dir/vm" --mode kunit --timeout 600 \
		"$dir/kmod/kbloom.ko:lib/kbloom/kbloom.ko"
}

echo "1..${#mutants[@]}"
i=0
bad=0
for m in "${mutants[@]}"; do
	i=$((i + 1))
	IFS='|' read -r tier name file expr <<< "$m"
	dir=$out/mutant-$i
	kbloom_module_tree "$dir"
	sed -i "$expr" "$dir/$file"
	if cmp -s "$top/$file" "$dir/$file"; then
		bad=1
		echo "not ok - mutant '$name': the sed expression no longer applies"
		continue
	fi
	case $tier in
	native) run_native "$dir" ;;
	kunit) run_kunit "$dir" ;;
	*) echo "not ok - mutant '$name': no tier '$tier'"; bad=1; continue ;;
	esac
	case $? in
	0)
		bad=1
		echo "not ok - mutant '$name' survived: the $tier tests did not notice"
		;;
	125)
		bad=1
		;;
	*)
		why=$(cat "$dir/tests.log" "$dir/vm/tests.log" 2> /dev/null |
		      grep -E -m1 '^    not ok|^not ok' | sed 's/^ *//')
		echo "ok - mutant '$name' is caught by the $tier tests (${why:-the run failed})"
		;;
	esac
done
exit "$bad"
