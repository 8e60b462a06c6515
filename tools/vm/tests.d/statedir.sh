# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# The state directory with the module, sourced by tests.sh: filters saved
# with `bloomctl save --all` and restored with `bloomctl restore` are the
# filters they were (byte for byte, counting filters included); a windowed
# filter keeps its schedule across the time it spent on disk; a full or
# read-only file system fails the save and keeps the previous images; a
# batch file declares filters. What bloomctl decides alone (restoring over
# existing filters, truncated images, a declaration's shape differing) is
# tools/bloomctl/test-native.sh's, on its fake device.

KBLOOM_CHECKS="$KBLOOM_CHECKS run_statedir"

sd_cleanup() {
	for f in sda sdc sdw sdb; do bloomctl destroy "$f" >/dev/null 2>&1; done
}

run_statedir() {
	sd_dir=/tmp/kbloom-state
	sd_cleanup
	rm -rf "$sd_dir" /tmp/sd-*
	check_exit 0 "statedir: create sda, 1000 keys at 0.1%" \
		bloomctl create sda --capacity 1000 --fpr 0.001
	seq 1 500 > /tmp/sd-keys
	seq 100001 100500 > /tmp/sd-other
	bloomctl add sda --file /tmp/sd-keys >/dev/null
	check_exit 0 "statedir: create sdc, a counting filter" \
		bloomctl create sdc --capacity 1000 --fpr 0.01 --counting
	bloomctl add sdc --file /tmp/sd-keys >/dev/null
	bloomctl add sdc --file /tmp/sd-keys >/dev/null
	bloomctl remove sdc 7 >/dev/null
	# W 12 s in 2 generations: a key added at t is there until t + 6 s
	# at least, and gone by t + 12 s.
	check_exit 0 "statedir: create sdw, a 12 s window of 2 generations" \
		bloomctl create sdw --capacity 1000 --fpr 0.01 --window 12s --generations 2
	t0=$(now_ms)
	bloomctl add sdw windowed-key >/dev/null
	bloomctl query sda --file /tmp/sd-keys > /tmp/sd-q1
	bloomctl query sda --file /tmp/sd-other > /tmp/sd-o1
	bloomctl save sda /tmp/sd-a1.img >/dev/null
	bloomctl save sdc /tmp/sd-c1.img >/dev/null
	check_exit 0 "statedir: save --all" bloomctl save --all "$sd_dir"
	check "statedir: an image for each filter" \
		test -f "$sd_dir"/sda.kbloom -a -f "$sd_dir"/sdc.kbloom -a -f "$sd_dir"/sdw.kbloom
	check_exit 0 "statedir: save --all again" bloomctl save --all "$sd_dir"
	check "statedir: ...the plain and counting ones unchanged" \
		has "unchanged" /tmp/out
	sd_cleanup
	# Only these three: another area's filters are not ours to load.
	for f in "$sd_dir"/*.kbloom; do
		case "${f##*/}" in sda.* | sdc.* | sdw.*) ;; *) rm -f "$f" ;; esac
	done
	sleep 1
	check_exit 0 "statedir: restore into a module without them" \
		bloomctl restore "$sd_dir"
	check "statedir: the allow-list answers as before for its keys" \
		sh -c 'bloomctl query sda --file /tmp/sd-keys | cmp -s - /tmp/sd-q1'
	check "statedir: ...and for keys it never had" \
		sh -c 'bloomctl query sda --file /tmp/sd-other | cmp -s - /tmp/sd-o1'
	bloomctl save sda /tmp/sd-a2.img >/dev/null
	bloomctl save sdc /tmp/sd-c2.img >/dev/null
	check_same "statedir: the plain filter is restored byte for byte" \
		/tmp/sd-a1.img /tmp/sd-a2.img
	check_same "statedir: the counting filter is restored exactly" \
		/tmp/sd-c1.img /tmp/sd-c2.img
	# A key lives at least W - W/G = 6 s: past that (a machine took that
	# long to save and restore), its absence proves nothing.
	bloomctl query sdw windowed-key >/tmp/out 2>&1
	rc=$? el=$(($(now_ms) - t0))
	if [ $rc != 0 ] && [ $el -ge 6000 ]; then
		skip "statedir: the windowed key is there after the restore: asked $el ms after its add"
	else
		check "statedir: the windowed key is there after the restore ($el ms after its add)" [ $rc = 0 ]
	fi
	# Its rotations keep the schedule it had: by t0 + W (and a second for
	# the rotation's own time) it is gone; a fresh period from the restore
	# would keep it until after t0 + 13 s.
	while [ $(($(now_ms) - t0)) -lt 13000 ]; do sleep 0.2; done
	check_exit 1 "statedir: ...and gone by its add + W, downtime included" \
		bloomctl query sdw windowed-key

	# A file system that is full, then read-only: the save fails, the
	# previous images stay whole and load.
	mkdir -p /tmp/sd-small
	mount -t tmpfs -o size=64k tmpfs /tmp/sd-small
	cp "$sd_dir"/sda.kbloom /tmp/sd-small/
	bloomctl create sdb --bits 8Mi --hashes 3 >/dev/null
	check_exit 2 "statedir: save --all to a full file system" \
		bloomctl save --all /tmp/sd-small
	check "statedir: ...names the image it could not write" \
		has "sdb.kbloom" /tmp/err
	check "statedir: ...and kept the previous image of sda" \
		cmp -s /tmp/sd-small/sda.kbloom "$sd_dir"/sda.kbloom
	check "statedir: ...and left no temporary file" \
		sh -c '! ls -a /tmp/sd-small | grep -q bloomctl-save'
	bloomctl destroy sdb >/dev/null
	bloomctl add sda late-key >/dev/null
	mount -o remount,ro /tmp/sd-small
	check_exit 2 "statedir: save --all to a read-only file system" \
		bloomctl save --all /tmp/sd-small
	check "statedir: ...which is named" has "Read-only file system" /tmp/err
	umount /tmp/sd-small

	# Declared filters: the restored ones as they are, the new one made.
	cat > /tmp/sd-filters.conf <<-EOF
	# filters.conf
	create sda --capacity 1000 --fpr 0.001 --exist-ok
	create sdb --bits 1Ki --hashes 3 --exist-ok
	EOF
	check_exit 0 "statedir: a batch file of create --exist-ok lines" \
		bloomctl -batch /tmp/sd-filters.conf
	check "statedir: ...keeps the restored filter" \
		sh -c 'bloomctl query sda --file /tmp/sd-keys | cmp -s - /tmp/sd-q1'
	check "statedir: ...and makes the declared one" [ -d /sys/kernel/bloom/filters/sdb ]
	sd_cleanup
	rm -rf "$sd_dir" /tmp/sd-*
}
