#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The reboot test's side inside the VM (tools/vm/reboot-test.sh drives the
# boots): the payload disk's run.sh, run by the root filesystem's
# kbloom-vmtest.service (tools/vm/rootfs.sh) once the system is up, with
# kbloom.test=PHASE on the kernel command line. Results go to the second
# serial port (/dev/ttyS1), one "ok - ..." or "not ok - ..." per check and
# "# ..." notes; the host numbers them and adds the plan. What must survive
# a boot is kept in /var/lib/kbloom-test, on the VM's disk.
#
#  1  install the bloomctl package and the modules; make the filters (an
#     allow-list filled from userspace, a windowed flow filter made by a
#     rule), the rules (iptables-legacy and iptables-nft, IPv4 and IPv6),
#     /etc/kbloom/filters.conf; netfilter-persistent save; enable
#     kbloom.service and kbloom-save.timer; a clean reboot.
#  2  everything is back: the units ran in order, the rules, the
#     allow-list's answers (added keys and others, as before), the window
#     forgot what is older than W, and packets through a veth pair in a
#     network namespace hit the rules. Then the timer saves every 10 s
#     (a drop-in), keys are added before and after a save, and the VM
#     crashes (sysrq b).
#  3  after the crash: the keys added before the last save are there; of
#     those added after, any number (the crash window).
set -u

P=/run/kbloom-test
S=/var/lib/kbloom-test
STATE=/var/lib/kbloom
W=20		# the flow filter's window, seconds
FLOWS_SHAPE="--capacity 100000 --fpr 0.01 --window ${W}s --generations 4"
phase=$(sed -n 's/.*kbloom\.test=\([0-9]*\).*/\1/p' /proc/cmdline)

# The results channel: raw, so that the host reads "\n", not "\r\n".
stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>/dev/ttyS1
out() { printf '%s\n' "$*" >&3; printf '%s\n' "$*"; }
ok() { out "ok - $*"; }
not_ok() { out "not ok - $*"; }
note() { out "# $*"; }
# check DESCRIPTION COMMAND...: ok if COMMAND succeeds (its output, if it
# fails, as notes).
check() {
	d=$1
	shift
	if "$@" > /tmp/check.out 2>&1; then
		ok "$d"
	else
		not_ok "$d"
		sed 's/^/#   /' /tmp/check.out | head -n 20 >&3
	fi
}
now() { date +%s; }
# Seconds since boot (whole), and a unit property's monotonic time in s.
uptime_s() { cut -d. -f1 /proc/uptime; }
mono() { # UNIT PROPERTY
	v=$(systemctl show -P "$2" "$1")
	echo $(( ${v:-0} / 1000 ))	# ms
}

# The keys: IPv4 sources in 198.18.0.0/15 (the benchmarking range),
# IPv6 in 2001:db8::/32 (documentation). keys4 X COUNT: COUNT addresses
# from 198.18.X.1, 250 per /24; keys6 G COUNT: from 2001:db8:G::1.
keys4() { # THIRD-OCTET COUNT
	i=0
	while [ "$i" -lt "$2" ]; do
		echo "198.18.$(($1 + i / 250)).$((i % 250 + 1))"
		i=$((i + 1))
	done
}
keys6() { # GROUP COUNT
	i=1
	while [ "$i" -le "$2" ]; do printf '2001:db8:%x::%x\n' "$1" "$i"; i=$((i + 1)); done
}
# The peer of the veth pair, whose packets the allow-list accepts.
PEER4=192.0.2.2 PEER6=2001:db8:1::2 HOST4=192.0.2.1 HOST6=2001:db8:1::1 OTHER4=192.0.2.3

ipts="iptables-legacy iptables-nft ip6tables-legacy ip6tables-nft"
# The ruleset as saved, without counters and comments, for comparing.
ruleset() { # IPTABLES
	"$1-save" | grep -v -e '^#' -e '^:' | sed 's/\[[0-9]*:[0-9]*\]//g'
}

# The test runs after multi-user.target, which does not wait for units
# without default dependencies (netfilter-persistent, kbloom.service): wait
# until the boot's other jobs are done, as a login would see the system.
boot_note() {
	i=0
	while [ $i -lt 120 ] && systemctl list-jobs --no-legend | grep -v kbloom-vmtest | grep -q .; do
		sleep 1
		i=$((i + 1))
	done
	mu=$(mono multi-user.target ActiveEnterTimestampMonotonic)
	us=$(awk '{ print int($1 * 1000) }' /proc/uptime)
	note "boot $phase: multi-user.target reached ${mu} ms after the kernel started, every boot job done at ${us} ms"
	for u in kbloom.service netfilter-persistent.service; do
		a=$(mono "$u" InactiveExitTimestampMonotonic) b=$(mono "$u" ActiveEnterTimestampMonotonic)
		[ "$a" -gt 0 ] && [ "$b" -ge "$a" ] && note "boot $phase: $u took $((b - a)) ms (from ${a} ms)"
	done
}

units_disabled() {
	[ "$(systemctl is-enabled kbloom.service)" = disabled ] &&
	[ "$(systemctl is-enabled kbloom-save.timer)" = disabled ]
}

# ---------------------------------------------------------------------------
phase1() {
	boot_note
	mkdir -p "$S"
	kver=$(uname -r)
	deb=$(ls "$P"/bloomctl_*.deb)
	check "dpkg -i ${deb##*/} (the bloomctl package)" dpkg -i "$deb"
	mkdir -p "/lib/modules/$kver/updates"
	cp "$P/kbloom.ko" "$P/xt_bloom.ko" "/lib/modules/$kver/updates/"
	depmod -a "$kver"
	check "modinfo finds kbloom and xt_bloom in /lib/modules/$kver/updates" \
		sh -c "modinfo -n kbloom | grep -q /updates/ && modinfo -n xt_bloom | grep -q /updates/"
	check "the package's units are installed and disabled" units_disabled
	check "the package's netfilter-persistent plugin is there, executable" \
		test -x /usr/share/netfilter-persistent/plugins.d/10-kbloom
	check "the package's /etc/kbloom/filters.conf is there" test -f /etc/kbloom/filters.conf

	check "modprobe kbloom xt_bloom" modprobe -a kbloom xt_bloom
	check "bloomctl create allow --capacity 10000 --fpr 0.001" \
		bloomctl create allow --capacity 10000 --fpr 0.001
	{ keys4 0 200; echo "$PEER4"; keys6 2 100; echo "$PEER6"; } > "$S/allow.keys"
	check "bloomctl add allow: 302 sources" bloomctl add allow --key saddr --file "$S/allow.keys"
	{ keys4 100 500; keys6 100 500; } > "$S/other.keys"
	bloomctl query allow --key saddr --file "$S/other.keys" > "$S/other.before"
	check "bloomctl query allow: 1000 answers for 1000 keys never added" \
		test "$(grep -c -E ' (maybe|no)$' "$S/other.before")" -eq 1000
	note "allow-list: $(grep -c ' maybe$' "$S/other.before") false positives among 1000 keys never added"

	# The rules: legacy and nft, IPv4 and IPv6; the first rule naming
	# flows makes it (the shape options), the others find it. UDP only,
	# so that neighbour discovery does not count.
	for ipt in $ipts; do
		check "$ipt: bloom rules (flows with its shape, allow)" sh -c "
			$ipt -A INPUT -i vk0 -p udp -m bloom --name flows --key saddr,dport ! --test-and-add $FLOWS_SHAPE &&
			$ipt -A INPUT -i vk0 -p udp -m bloom --name allow --key saddr --test -j ACCEPT"
	done
	check "the rules made the windowed filter flows" test -d /sys/kernel/bloom/filters/flows
	keys4 200 20 | sed 's/$/,9/' > "$S/flows.keys"
	bloomctl add flows --key saddr,dport --file "$S/flows.keys" > /dev/null
	now > "$S/flows.added"
	check "bloomctl query flows: the keys just added are there" \
		bloomctl query flows --key saddr,dport --file "$S/flows.keys"
	# A longer window, which the reboot must not cut short: its keys are
	# there until t + W(G-1)/G (7.5 min).
	check "bloomctl create longwin --window 10m, add 20 keys" sh -c "
		bloomctl create longwin --capacity 1000 --fpr 0.01 --window 10m --generations 4 &&
		bloomctl add longwin --key saddr,dport --file $S/flows.keys > /dev/null"

	# netfilter-persistent saves the rules of the selected backend (nft);
	# the legacy ones through a plugin of the test's, as the Debian
	# plugins do it.
	for v in 4 6; do
		x=iptables; [ $v = 6 ] && x=ip6tables
		cat > "/usr/share/netfilter-persistent/plugins.d/${v}6-${x}-legacy" <<-EOF
		#!/bin/sh
		# The kbloom reboot test's: $x-legacy's rules.
		set -e
		case "\$1" in
		start|restart|reload|force-reload) $x-legacy-restore < /etc/iptables/rules-legacy.v$v ;;
		save) $x-legacy-save > /etc/iptables/rules-legacy.v$v ;;
		esac
		EOF
		chmod 0755 "/usr/share/netfilter-persistent/plugins.d/${v}6-${x}-legacy"
	done
	# The conf: what the restore brought back stays (--exist-ok); a
	# filter only it names is made; a bad line does not stop the rest.
	cat > /etc/kbloom/filters.conf <<-EOF
	# the reboot test's
	create allow --capacity 10000 --fpr 0.001 --exist-ok
	create broken --capacity 0 --fpr 2 --exist-ok
	create confonly --capacity 1000 --fpr 0.01 --exist-ok
	EOF
	check "netfilter-persistent save" netfilter-persistent save
	check "/etc/iptables/rules.v4 and rules.v6 (iptables-nft) have the bloom rules" \
		sh -c 'grep -q -- "-m bloom --name allow" /etc/iptables/rules.v4 &&
		       grep -q -- "-m bloom --name flows" /etc/iptables/rules.v6'
	check "rules-legacy.v4 and .v6 have the bloom rules" \
		sh -c 'grep -q -- "-m bloom --name flows" /etc/iptables/rules-legacy.v4 &&
		       grep -q -- "-m bloom --name allow" /etc/iptables/rules-legacy.v6'
	check "netfilter-persistent save saved the filters (10-kbloom)" \
		sh -c "test -s $STATE/allow.kbloom && test -s $STATE/flows.kbloom"
	for ipt in $ipts; do ruleset "$ipt" > "$S/rules.$ipt"; done

	check "systemctl enable --now kbloom.service kbloom-save.timer" \
		systemctl enable --now kbloom.service kbloom-save.timer
	check "kbloom.service is active" systemctl is-active kbloom.service
	check "kbloom.service made confonly from filters.conf, past its bad line" \
		test -d /sys/kernel/bloom/filters/confonly
	note "phase 1 done at uptime $(uptime_s) s: systemctl reboot"
	note "phase 1 end"
	systemctl --no-block reboot
}

# ---------------------------------------------------------------------------
# Counters of the rules on vk0 (packets), one line per rule in order.
counters() { # IPTABLES
	"$1" -L INPUT -v -x -n | awk '$6 == "vk0" || $3 == "vk0" || /vk0/ { print $1 }'
}
send_udp() { # NETNS DST
	ip netns exec "$1" bash -c "echo kbloom > /dev/udp/$2/9" 2>/dev/null
}
nth() { sed -n "${1}p"; }

phase2() {
	boot_note
	check "kbloom.service is active" systemctl is-active kbloom.service
	check "netfilter-persistent.service is active" systemctl is-active netfilter-persistent.service
	check "kbloom-save.timer is active" systemctl is-active kbloom-save.timer
	kb=$(mono kbloom.service ActiveEnterTimestampMonotonic)
	nf=$(mono netfilter-persistent.service InactiveExitTimestampMonotonic)
	check "kbloom.service was done (${kb} ms) before netfilter-persistent started (${nf} ms)" \
		test "$kb" -gt 0 -a "$kb" -le "$nf"
	journalctl -b -u kbloom.service -o cat | sed 's/^/#   kbloom.service: /' >&3
	for ipt in $ipts; do
		ruleset "$ipt" > "/tmp/rules.$ipt"
		check "$ipt: the rules are back as saved" diff "$S/rules.$ipt" "/tmp/rules.$ipt"
	done
	check "the filters allow, flows and confonly exist" sh -c \
		'cd /sys/kernel/bloom/filters && test -d allow && test -d flows && test -d confonly'
	check "$STATE is mode 0700, its images 0600" sh -c \
		"[ \"\$(stat -c %a $STATE)\" = 700 ] && [ -z \"\$(find $STATE -name '*.kbloom' ! -perm 0600)\" ]"

	check "allow-list: every key added before the reboot is there" \
		bloomctl query allow --key saddr --file "$S/allow.keys"
	bloomctl query allow --key saddr --file "$S/other.keys" > "$S/other.after"
	check "allow-list: 1000 keys never added get the same answers as before the reboot" \
		cmp "$S/other.before" "$S/other.after"

	# The window: a key added at t is gone by t + W, downtime included.
	t=$(cat "$S/flows.added")
	age=$(( $(now) - t ))
	if [ "$age" -le "$W" ]; then
		note "the flows were added ${age} s ago: waiting until W (${W} s) has passed"
		sleep $(( W + 1 - age ))
		age=$(( $(now) - t ))
	fi
	bloomctl query flows --key saddr,dport --file "$S/flows.keys" > /tmp/flows.answers
	n=$(grep -c ' maybe$' /tmp/flows.answers)
	check "flows: the 20 keys added ${age} s ago (window ${W} s) are forgotten ($n left)" \
		test "$(grep -c ' no$' /tmp/flows.answers)" -eq 20
	age=$(( $(now) - t ))
	check "longwin: its 20 keys added ${age} s ago (window 10 min) are there" \
		bloomctl query longwin --key saddr,dport --file "$S/flows.keys"
	check "flows: a key added now is there" sh -c \
		'bloomctl add flows --key saddr,dport --flow 198.18.201.1,9 >/dev/null &&
		 bloomctl query flows --key saddr,dport --flow 198.18.201.1,9'

	# Packets: vk0 here, vk1 in the namespace "peer".
	ip netns add peer
	ip link add vk0 type veth peer name vk1 netns peer
	ip addr add "$HOST4/24" dev vk0
	ip addr add "$HOST6/64" dev vk0 nodad
	ip link set vk0 up
	ip -n peer addr add "$PEER4/24" dev vk1
	ip -n peer addr add "$OTHER4/24" dev vk1
	ip -n peer addr add "$PEER6/64" dev vk1 nodad
	ip -n peer link set vk1 up
	ip -n peer link set lo up
	for ipt in $ipts; do counters "$ipt" > "/tmp/c0.$ipt"; done
	send_udp peer "$HOST4"
	send_udp peer "$HOST6"
	# The same from a source the allow-list does not have.
	ip -n peer route replace "$HOST4/32" dev vk1 src "$OTHER4"
	send_udp peer "$HOST4"
	sleep 1
	for ipt in $ipts; do counters "$ipt" > "/tmp/c1.$ipt"; done
	flows_new=0
	for ipt in $ipts; do
		a0=$(nth 2 < "/tmp/c0.$ipt") a1=$(nth 2 < "/tmp/c1.$ipt")
		f0=$(nth 1 < "/tmp/c0.$ipt") f1=$(nth 1 < "/tmp/c1.$ipt")
		check "$ipt: the allowed source's packet hit the allow rule (${a0:-?} -> ${a1:-?}), the other's did not" \
			test "$((a1 - a0))" -eq 1
		flows_new=$((flows_new + f1 - f0))
	done
	# Both backends see each packet and add its flow to the one filter:
	# the first of the two to see a new flow matches (! --test-and-add),
	# the second finds it there.
	check "flows: each of the 3 new flows matched ! --test-and-add once (legacy + nft: $flows_new)" \
		test "$flows_new" -eq 3

	# ---- the crash ----
	# Metrics too, where the node exporter's textfile collector reads.
	mkdir -p /var/lib/prometheus/node-exporter
	mkdir -p /etc/systemd/system/kbloom-save.timer.d
	printf '[Timer]\nOnCalendar=\nOnCalendar=*:*:0/10\nAccuracySec=1s\n' \
		> /etc/systemd/system/kbloom-save.timer.d/test.conf
	systemctl daemon-reload
	systemctl restart kbloom-save.timer
	keys4 50 50 > "$S/crash.before"
	check "bloomctl add allow: 50 keys before a timer save" \
		bloomctl add allow --key saddr --file "$S/crash.before"
	t0=$(awk '{ print int($1 * 1000) }' /proc/uptime)
	i=0 saved=
	while [ $i -lt 40 ]; do
		sleep 1
		e=$(mono kbloom-save.service ExecMainExitTimestampMonotonic)
		if [ "$e" -gt "$t0" ]; then saved=$e; break; fi
		i=$((i + 1))
	done
	check "kbloom-save.timer ran kbloom-save.service after the keys were added (${i} s)" test -n "$saved"
	check "kbloom-save.service succeeded" \
		test -n "$saved" -a "$(systemctl show -P Result kbloom-save.service)" = success
	check "kbloom-save.service wrote the metrics (kbloom.prom)" \
		grep -q '^kbloom_' /var/lib/prometheus/node-exporter/kbloom.prom
	keys4 51 50 > "$S/crash.after"
	note "crash (sysrq b) right after 50 more keys, without a clean stop"
	note "phase 2 end"
	# What the serial port still has to send would be lost in the crash.
	sleep 1
	bloomctl add allow --key saddr --file "$S/crash.after" > /dev/null
	echo b > /proc/sysrq-trigger
}

# ---------------------------------------------------------------------------
phase3() {
	boot_note
	check "kbloom.service is active after the crash" systemctl is-active kbloom.service
	check "netfilter-persistent.service is active" systemctl is-active netfilter-persistent.service
	for ipt in $ipts; do
		check "$ipt: the rules are there" sh -c "$ipt-save | grep -q -- '-m bloom --name allow'"
	done
	check "allow-list: the keys added before the reboot are there" \
		bloomctl query allow --key saddr --file "$S/allow.keys"
	check "allow-list: the 50 keys added before the last timer save are there" \
		bloomctl query allow --key saddr --file "$S/crash.before"
	n=$(bloomctl query allow --key saddr --file "$S/crash.after" | grep -c ' maybe$')
	note "the crash window: $n of the 50 keys added after the last timer save survived"
	check "the filters allow, flows and confonly are back" sh -c \
		'cd /sys/kernel/bloom/filters && test -d allow && test -d flows && test -d confonly'
	check "the crash left every image whole (bloomctl inspect)" sh -c \
		"for f in $STATE/*.kbloom; do bloomctl inspect \"\$f\" > /dev/null || exit; done"
	# The plugin's flush: every filter goes but those rules use.
	/usr/share/netfilter-persistent/plugins.d/10-kbloom flush > /tmp/flush.out 2>&1
	check "10-kbloom flush: longwin and confonly destroyed, allow and flows (used by rules) kept" sh -c \
		'cd /sys/kernel/bloom/filters && test ! -e longwin && test ! -e confonly &&
		 test -d allow && test -d flows'
	sed 's/^/#   10-kbloom flush: /' /tmp/flush.out >&3
	note "phase 3 done at uptime $(uptime_s) s: poweroff"
	note "phase 3 end"
	systemctl --no-block poweroff
}

note "phase $phase"
case "$phase" in
1) phase1 ;;
2) phase2 ;;
3) phase3 ;;
*) not_ok "no kbloom.test=PHASE (1, 2 or 3) on the kernel command line"; systemctl --no-block poweroff ;;
esac
