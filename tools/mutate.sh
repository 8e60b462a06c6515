#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of the tests: build kbloom with a deliberate bug, boot the debug
# kernel with only the KUnit suites, and require that the run FAILS.
# Usage: mutate.sh KDIR OUTDIR; prints the TAP plan, then one "ok"/"not ok"
# line per mutant; exits 1 if any is "not ok".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/lib-module.sh
. "$top/tools/lib-module.sh"
kdir=$1
out=$(mkdir -p "$2" && cd "$2" && pwd)

# name|file|sed expression (must change the file)
mutants=(
	'a plain read-modify-write in place of the atomic OR that sets bits (both layouts)|kmod/kbloom_core.h|s/^\tunsigned long got = mask & ~set_mask_bits(w, 0UL, mask);$/\tunsigned long old = READ_ONCE(*w), got = mask \& ~old;\n\tWRITE_ONCE(*w, old | mask);/'
	'off-by-one in the range reduction (x onto [0, m])|kmod/kbloom_hash.c|s/probe->x = kbloom_reduce(h, core->nbits);/probe->x = kbloom_reduce(h, core->nbits + 1);/'
	'probe step allowed to be 0|kmod/kbloom_hash.c|s/probe->y = 1 + kbloom_reduce(rol64(h, 32), core->nbits - 1);/probe->y = kbloom_reduce(rol64(h, 32), core->nbits);/'
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
	if ! kbloom_module_make "$kdir" "$dir"; then
		bad=1
		echo "not ok - mutant '$name' does not build (log: $dir/build.log)"
		continue
	fi
	if ! "$top/tools/vm/run.sh" --kernel "$kdir/arch/x86/boot/bzImage" \
		--dir "$dir/vm" --mode kunit --timeout 600 \
		"$dir/kmod/kbloom.ko:lib/kbloom/kbloom.ko"; then
		why=$(grep -E -m1 '^    not ok|^not ok' "$dir/vm/tests.log" | sed 's/^ *//')
		echo "ok - mutant '$name' is caught (${why:-the run failed})"
	else
		bad=1
		echo "not ok - mutant '$name' survived: the tests did not notice"
	fi
done
exit "$bad"
