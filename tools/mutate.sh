#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of the tests: build kbloom with a deliberate bug and require that
# the tests FAIL: the native core tests (tools/native/kbloom_core_test,
# stopping at the first failure) built on the mutated core, in seconds.
# Usage: mutate.sh OUTDIR; prints the TAP plan, then one "ok"/"not ok"
# line per mutant; exits 1 if any is "not ok".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/lib-module.sh
. "$top/tools/lib-module.sh"
out=$(mkdir -p "$1" && cd "$1" && pwd)

# name|file|sed expression (must change the file)
mutants=(
	'a plain read-modify-write in place of the atomic OR that sets bits (both layouts)|kmod/kbloom_core.h|s/^\tunsigned long got = mask & ~set_mask_bits(w, 0UL, mask);$/\tunsigned long old = READ_ONCE(*w), got = mask \& ~old;\n\tWRITE_ONCE(*w, old | mask);/'
	'off-by-one in the range reduction (x onto [0, m])|kmod/kbloom_hash.c|s/probe->x = kbloom_reduce(h, core->nbits);/probe->x = kbloom_reduce(h, core->nbits + 1);/'
	'probe step allowed to be 0|kmod/kbloom_hash.c|s/probe->y = 1 + kbloom_reduce(rol64(h, 32), core->nbits - 1);/probe->y = kbloom_reduce(rol64(h, 32), core->nbits);/'
	'sizing rounds m down, not up (kbloom_size)|kmod/kbloom_sizing.c|s/if ((u32)(capacity \* bpk) != 0)/if (0)/'
	'sizing truncates k, not rounds it (kbloom_optimal_hashes)|kmod/kbloom_sizing.c|s/k = (k + (1ULL << 31)) >> 32;/k = k >> 32;/'
	'a stuck counter decremented by a remove (kbloom_counter_dec)|kmod/kbloom_core.c|s/if (n == KBLOOM_COUNTER_STUCK || n == 0)/if (n == 0)/'
	'a counting merge wraps past 15 (kbloom_counters_add)|kmod/kbloom_core.c|s/r |= min_t(unsigned long, x, KBLOOM_COUNTER_STUCK) << shift;/r |= (x \& 0xf) << shift;/'
	'blocks of 7 words, not 8, on the blocked fast path (kbloom_block_at)|kmod/kbloom_hash.h|s/return core->bitmap + kbloom_reduce(h, nblocks) \* KBLOOM_BLOCK_LONGS;/return core->bitmap + kbloom_reduce(h, nblocks) * (KBLOOM_BLOCK_LONGS - 1);/'
)

echo "1..${#mutants[@]}"
i=0
bad=0
for m in "${mutants[@]}"; do
	i=$((i + 1))
	IFS='|' read -r name file expr <<< "$m"
	dir=$out/mutant-$i
	kbloom_module_tree "$dir"
	sed -i "$expr" "$dir/$file"
	if cmp -s "$top/$file" "$dir/$file"; then
		bad=1
		echo "not ok - mutant '$name': the sed expression no longer applies"
		continue
	fi
	mkdir -p "$dir/tools"
	cp -r "$top/tools/native" "$dir/tools/"
	rm -f "$dir/tools/native/kbloom_core_test"
	if ! make -C "$dir/tools/native" kbloom_core_test > "$dir/build.log" 2>&1; then
		bad=1
		echo "not ok - mutant '$name' does not build natively (log: $dir/build.log)"
		continue
	fi
	timeout 900 "$dir/tools/native/kbloom_core_test" -x > "$dir/tests.log" 2>&1
	case $? in
	0)
		bad=1
		echo "not ok - mutant '$name' survived: the native tests did not notice"
		;;
	*)
		why=$(grep -E -m1 '^not ok' "$dir/tests.log")
		echo "ok - mutant '$name' is caught by the native tests (${why:-the run failed})"
		;;
	esac
done
exit "$bad"
