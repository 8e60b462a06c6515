#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of the tests: build kbloom with a deliberate bug, boot the debug
# kernel with only the KUnit suites, and require that the run FAILS.
# Usage: mutate.sh KDIR OUTDIR; prints one "ok"/"not ok" line per mutant.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kdir=$1
out=$(mkdir -p "$2" && cd "$2" && pwd)

# name|file|sed expression (must change the file)
mutants=(
	'__set_bit in place of the atomic set_bit|kmod/kbloom_core.c|s/^\t\t\tset_bit(pos\[i\], core->bitmap);/\t\t\t__set_bit(pos[i], core->bitmap);/'
	'off-by-one in the range reduction (x onto [0, m])|kmod/kbloom_core.c|s/probe->x = kbloom_reduce(h, core->nbits);/probe->x = kbloom_reduce(h, core->nbits + 1);/'
	'probe step allowed to be 0|kmod/kbloom_core.c|s/probe->y = 1 + kbloom_reduce(rol64(h, 32), core->nbits - 1);/probe->y = kbloom_reduce(rol64(h, 32), core->nbits);/'
)

i=0
for m in "${mutants[@]}"; do
	i=$((i + 1))
	IFS='|' read -r name file expr <<< "$m"
	dir=$out/mutant-$i
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -r "$top/Kbuild" "$top/kmod" "$top/kunit" "$top/include" "$dir/"
	sed -i "$expr" "$dir/$file"
	if cmp -s "$top/$file" "$dir/$file"; then
		echo "not ok - mutant '$name': the sed expression no longer applies"
		continue
	fi
	if ! make -C "$kdir" M="$dir" modules > "$dir/build.log" 2>&1; then
		echo "not ok - mutant '$name' does not build"
		continue
	fi
	"$top/tools/vm/run.sh" --kernel "$kdir/arch/x86/boot/bzImage" \
		--dir "$dir/vm" --mode kunit --timeout 600 \
		"$dir/kmod/kbloom.ko:lib/kbloom/kbloom.ko" \
		"$dir/kunit/kbloom_test.ko:lib/kbloom/kbloom_test.ko"
	if [ $? -ne 0 ]; then
		why=$(grep -E -m1 '^    not ok|^not ok' "$dir/vm/tests.log" | sed 's/^ *//')
		echo "ok - mutant '$name' is caught (${why:-the run failed})"
	else
		echo "not ok - mutant '$name' survived: the tests did not notice"
	fi
done
