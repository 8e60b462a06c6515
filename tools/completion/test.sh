#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of the bash completion of bloomctl (tools/completion/bloomctl):
# source it, set COMP_WORDS/COMP_CWORD as bash would for a command line,
# call _bloomctl, compare COMPREPLY. Filter names come from a stand-in
# bloomctl that prints what 'bloomctl list' prints, and, when the fake
# device of tools/bloomctl/fakedev.c builds, from the real bloomctl.
# The subcommands and options are checked against the real bloomctl's
# --help. Needs no module and no root.
#
# Usage: test.sh [BLOOMCTL]   (default tools/bloomctl/bloomctl, which
# 'make bloomctl' builds). Prints "ok"/"not ok" lines, the TAP plan, then
# "N passed, M failed".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
real=${1:-$top/tools/bloomctl/bloomctl}
[[ $real == /* ]] || real=$PWD/$real
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomctl-completion.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=tools/lib-tap.sh
. "$here/../lib-tap.sh"

# shellcheck source=tools/completion/bloomctl
. "$here/bloomctl"

# A stand-in bloomctl, first in PATH: 'list' prints what bloomctl.c's
# cmd_list prints (a header, then one line per filter in name order; a
# filter may be called NAME), per device; anything else fails.
mkdir -p "$tmp/bin" "$tmp/files/sub"
cat > "$tmp/bin/bloomctl" << 'EOF'
#!/bin/sh
dev=${BLOOMCTL_DEVICE:-/dev/bloom}
if [ "$1" = -d ]; then dev=$2; shift 2; fi
[ "$1" = list ] && [ $# -eq 1 ] || exit 2
case $dev in
/dev/bloom)
	echo 'NAME      BITS  HASHES  BITS_SET  ADDS'
	echo 'NAME      9586       7         0     0'
	echo 'flows.v4  9586       7        12     2'
	echo 'seen      9586       7         0     0' ;;
*/other)
	echo 'NAME  BITS  HASHES  BITS_SET  ADDS'
	echo 'alt   9586       7         0     0' ;;
*/empty) ;;
*) echo "bloomctl: $dev: No such file or directory" >&2; exit 2 ;;
esac
EOF
chmod +x "$tmp/bin/bloomctl"
PATH=$tmp/bin:$PATH
: > "$tmp/files/a.img"
: > "$tmp/files/b.txt"
cd "$tmp/files" || exit 2

# complete LINE: what _bloomctl offers with the cursor at the end of LINE,
# sorted, on one line.
complete_line() {
	local line=$1
	read -r -a COMP_WORDS <<< "$line"
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=$line
	COMP_POINT=${#line}
	COMPREPLY=()
	_bloomctl "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" \
		"${COMP_WORDS[COMP_CWORD - 1]}" 2> "$tmp/stderr"
	[ -s "$tmp/stderr" ] && sed 's/^/stderr: /' "$tmp/stderr"
	[ ${#COMPREPLY[@]} -eq 0 ] || printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | paste -sd ' '
}

# The words of stdin, sorted, on one line.
words() { tr ' ' '\n' | sed '/^$/d' | LC_ALL=C sort | paste -sd ' '; }

# same DESCRIPTION GOT WANT WHAT: ok if GOT is WANT; else WHAT says what
# each is.
same() {
	[ "$2" = "$3" ]
	result $? "$1"
	[ "$2" = "$3" ] || echo "#   $4"
}

# expect DESCRIPTION LINE WANT: WANT is the words expected, space separated.
expect() {
	local got want
	got=$(complete_line "$2")
	want=$(words <<< "$3")
	same "$1" "$got" "$want" "'$2<TAB>': got '$got', want '$want'"
}

all_commands="add calc clear create destroy estimate help inspect list load merge monitor query remove restore rotate save show stats test-and-add version"
common="--help --json --pretty -h -j -p"
filters="NAME flows.v4 seen"
files="a.img b.txt sub"

expect "subcommands" "bloomctl " "$all_commands"
expect "subcommands by prefix" "bloomctl te" "test-and-add"
expect "global options" "bloomctl -" "--batch --device --force --help --json --pretty --version -V -b -d -f -h -j -p"
expect "-batch takes a file" "bloomctl -batch " "$files"
expect "the subcommand after global options" "bloomctl -j -p sh" "show"
expect "-d takes a file" "bloomctl -d " "$files"
expect "an unknown subcommand gets nothing" "bloomctl frobnicate " ""
expect "create's options" "bloomctl create x -" \
	"--bits --bpf --capacity --counting --exist-ok --fpr --generations --hash --hashes --layout --like --rotate-at-fill --track-changes --window $common"
expect "create --layout: the layouts" "bloomctl create x --layout " "blocked plain"
expect "create --bpf: the accesses" "bloomctl create x --bpf " "none read write"
expect "create --window: example durations" "bloomctl create x --window " "0 10m 10s 1h 1m 500ms"
expect "create --generations takes a number: nothing offered" "bloomctl create x --window 1s --generations " ""
expect "create --hash: the schemes" "bloomctl create x --hash " "jhash siphash"
expect "create --like: filter names" "bloomctl create x --like " "$filters"
expect "create NAME is new: nothing offered" "bloomctl create " ""
expect "create --capacity takes a number: nothing offered" "bloomctl create x --capacity " ""
expect "filter names, the header of 'bloomctl list' left out" "bloomctl show " "$filters"
expect "filter names by prefix" "bloomctl destroy s" "seen"
for c in destroy clear rotate show add query test-and-add remove save; do
	expect "$c NAME: filter names" "bloomctl $c " "$filters"
done
expect "filter names from the device given with -d" "bloomctl -d /x/other clear " "alt"
expect "filter names from the device given with --device" "bloomctl --device /x/other show " "alt"
expect "no filter: nothing" "bloomctl -d /x/empty show " ""
expect "no device: nothing, and nothing on stderr" "bloomctl -d /x/gone show " ""
expect "merge DST SRC: filter names" "bloomctl merge seen " "$filters"
expect "merge takes two" "bloomctl merge seen flows.v4 " ""
expect "estimate A B: filter names" "bloomctl estimate NAME " "$filters"
expect "add's options" "bloomctl add seen --" "--batch --count --dst-prefix --family --file --flow --help --hex --json --key --pretty --src-prefix"
expect "query's options" "bloomctl query seen -" "--batch --count --dst-prefix --family --file --flow --hex --key --src-prefix $common"
expect "remove's options" "bloomctl remove -" "--batch --count --dst-prefix --family --file --flow --hex --key --src-prefix $common"
expect "--key's fields" "bloomctl add seen --key " "daddr dport proto saddr sport"
expect "--key's next field after a comma" "bloomctl add seen --key saddr,d" "saddr,daddr saddr,dport"
expect "--family" "bloomctl query seen --family " "ipv4 ipv6"
expect "nothing to offer for --flow" "bloomctl add seen --flow " ""
expect "add KEY: nothing offered" "bloomctl add seen " ""
expect "add --file: file names" "bloomctl add seen --file " "$files"
expect "add --file by prefix" "bloomctl add seen --file a" "a.img"
expect "add --batch takes a number" "bloomctl add seen --batch " ""
expect "options before NAME do not count as arguments" "bloomctl add --count --file x " "$filters"
expect "after --, no options" "bloomctl query seen -- -" ""
expect "save NAME FILE: file names" "bloomctl save seen " "$files"
expect "save's options" "bloomctl save seen x -" "--all --compress $common"
expect "save --all takes a directory" "bloomctl save --all " "sub"
expect "restore takes a directory" "bloomctl restore " "sub"
expect "stats --format: the formats" "bloomctl stats --format " "prometheus text"
expect "load NAME is new: nothing offered" "bloomctl load " ""
expect "load --replace NAME: filter names" "bloomctl load --replace " "$filters"
expect "load NAME FILE: file names" "bloomctl load new " "$files"
expect "load's options" "bloomctl load new x -" "--max-payload --replace $common"
expect "inspect FILE: file names" "bloomctl inspect " "$files"
expect "inspect's options" "bloomctl inspect -" "--max-payload $common"
expect "calc's options" "bloomctl calc -" "--bits --capacity --counting --fpr --generations --hashes --layout $common"
for c in destroy clear rotate list show merge estimate version help; do
	expect "$c's options" "bloomctl $c -" "$common"
done
expect "the command word as typed (a path)" "$tmp/bin/bloomctl show f" "flows.v4"

# File names again through bash-completion's _filedir, as on a system with
# the bash-completion package.
if bash -c '. /usr/share/bash-completion/bash_completion' > /dev/null 2>&1; then
	# shellcheck source=/dev/null
	. /usr/share/bash-completion/bash_completion > /dev/null 2>&1
	expect "with bash-completion: add --file" "bloomctl add seen --file " "$files"
	expect "with bash-completion: save NAME FILE" "bloomctl save seen b" "b.txt"
	expect "with bash-completion: inspect FILE" "bloomctl inspect s" "sub"
	expect "with bash-completion: filter names still" "bloomctl show " "$filters"
	complete -p bloomctl > /dev/null 2>&1
	result $? "with bash-completion: complete -p bloomctl"
else
	echo "# no bash-completion package: _filedir not tested"
fi

# The real bloomctl: its subcommands and options are what the completion
# offers.
help_commands() { # BLOOMCTL: the subcommands of --help
	"$1" --help | awk '/^Subcommands:/ { s = 1; next } s && /^$/ { exit } s { print $1 }'
}
help_options() { # BLOOMCTL [SUBCOMMAND]: the options of [SUBCOMMAND] --help
	"$@" --help | sed -n 's/^  \(-[A-Za-z], \)\{0,1\}\(--[a-z0-9-]*\).*/\1 \2/p' |
		tr -d ',' | tr ' ' '\n' | sed '/^$/d'
}
if [ -x "$real" ] && "$real" --help > /dev/null 2>&1; then
	# help_same WHAT LINE [SUBCOMMAND]: LINE<TAB> offers what --help lists
	# (never nothing).
	help_same() {
		local got want

		if [ "$1" = subcommands ]; then
			want=$(help_commands "$real" | words)
		else
			want=$(help_options "$real" ${3:+"$3"} | words)
		fi
		got=$(complete_line "$2")
		same "the $1 are those of 'bloomctl ${3:+$3 }--help'" "$got" \
			"${want:-(none)}" "completion: '$got'; bloomctl ${3:+$3 }--help: '$want'"
	}
	help_same subcommands "bloomctl "
	help_same "global options" "bloomctl -"
	for c in $(help_commands "$real"); do
		help_same "options of $c" "bloomctl $c -" "$c"
	done

	# Filter names through the real 'bloomctl list', on the fake device.
	b=$top/tools/bloomctl
	if make -s -C "$b" fakedev.so > "$tmp/cc.log" 2>&1 &&
		cp "$b/fakedev.so" "$tmp/fakedev.so"; then
		mkdir -p "$tmp/state"
		: > "$tmp/fakedev"
		export LD_PRELOAD=$tmp/fakedev.so FAKEDEV=$tmp/fakedev FAKEDEV_STATE=$tmp/state
		for f in seen flows.v4 NAME; do
			"$real" -d "$tmp/fakedev" create "$f" --capacity 1000 --fpr 0.01 > /dev/null 2>&1
		done
		expect "filter names from the real 'bloomctl list' (fake device)" \
			"$real -d $tmp/fakedev show " "$filters"
		unset LD_PRELOAD FAKEDEV FAKEDEV_STATE
	else
		skip "filter names from the real 'bloomctl list': fakedev.so does not build"
	fi
else
	result 1 "no bloomctl at $real to check the subcommands and options against (make bloomctl)"
fi

tap_done
