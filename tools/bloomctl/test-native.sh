#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of bloomctl that need no kbloom module: calc, argument checking,
# help, exit status and JSON well-formedness. /dev/null stands in for the
# device where bloomctl must get as far as the first ioctl (which then fails
# with ENOTTY), to show that the input was accepted.
#
# Usage: test-native.sh path/to/bloomctl
# Prints "ok N - ..." or "not ok N - ..." per check, then "P passed, F failed".

set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 path/to/bloomctl" >&2
	exit 2
fi
BLOOMCTL=$1
# Never touch a real device, whatever the environment says.
export BLOOMCTL_DEVICE=/nonexistent/bloom
# No test may wait for a terminal.
exec </dev/null

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

n=0
passed=0
failed=0

result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
		passed=$((passed + 1))
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

# run ARGS...: run bloomctl, leaving stdout, stderr and status in
# $tmp/out, $tmp/err and $rc. Standard input is whatever the caller gives:
# redirect it, not pipe it, as the counters must not live in a subshell.
run() {
	"$BLOOMCTL" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# expect RC DESC ARGS...: run, check the exit status.
expect() {
	local want=$1 desc=$2

	shift 2
	run "$@"
	[ "$rc" = "$want" ]
	result $? "$desc (exit $want, got $rc)"
}

# out_has / err_has TEXT DESC: fixed-string search of the last run's output.
out_has() {
	grep -qF -- "$1" "$tmp/out"
	result $? "$2"
}

err_has() {
	grep -qF -- "$1" "$tmp/err"
	result $? "$2"
}

json_ok() {
	python3 -m json.tool "$tmp/out" >/dev/null 2>&1
	result $? "$1"
}

# JSON member KEY of the last run's output, as Python prints it.
json_get() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' \
		"$tmp/out" "$1" 2>/dev/null
}

json_is() {
	local got

	got=$(json_get "$1")
	[ "$got" = "$2" ]
	result $? "$3 ($1 = $2, got '$got')"
}

# --- help and version ---

expect 0 "--help" --help
out_has "Usage: bloomctl" "--help prints usage on stdout"
expect 0 "-h" -h
expect 0 "help subcommand" help
for cmd in create destroy clear list show add query test-and-add calc version help; do
	expect 0 "$cmd --help" "$cmd" --help
	out_has "Usage: bloomctl [GLOBAL OPTIONS] $cmd" "$cmd --help prints its usage"
	expect 0 "$cmd -h" "$cmd" -h
done
expect 0 "-V without a module" -V
out_has "bloomctl " "-V prints the version"
expect 0 "version without a module" version
expect 0 "-j version without a module" -j version
json_ok "version JSON is valid"
json_is module None "no module in version JSON"

# --- calc ---

expect 0 "calc --capacity 1M --fpr 0.01" calc --capacity 1M --fpr 0.01
out_has "9.585" "fpr 1% gives 9.585 bits per key"
out_has "hashes:          7" "fpr 1% gives 7 hashes"
out_has "bits:            9585059" "fpr 1% for 1M keys gives 9585059 bits"
out_has "bytes:           1198136" "bytes are whole 64-bit words"

expect 0 "calc --fpr 0.001" calc --capacity 1000000 --fpr 0.001
out_has "14.377" "fpr 0.1% gives 14.377 bits per key"
out_has "hashes:          10" "fpr 0.1% gives 10 hashes"

expect 0 "calc by bits and hashes" calc --bits 10000 --hashes 10 --capacity 1000
out_has "0.0102 (1.02%)" "m=10000 k=10 n=1000 gives fpr 1.02%"

expect 0 "calc -j" -j calc --capacity 1000000 --fpr 0.01
json_ok "calc JSON is valid"
json_is bits 9585059 "calc JSON bits"
json_is hashes 7 "calc JSON hashes"
json_is bytes 1198136 "calc JSON bytes"
json_is capacity 1000000 "calc JSON capacity"
json_is bits_per_key 9.585059 "calc JSON bits_per_key"
python3 -c 'import json, sys; f = json.load(open(sys.argv[1]))["fpr"]; sys.exit(not 0.0099 < f < 0.0101)' "$tmp/out" 2>/dev/null
result $? "calc JSON fpr about 0.01"

expect 0 "calc -p" -p calc --bits 10000 --hashes 10 --capacity 1000
json_ok "pretty calc JSON is valid"
[ "$(wc -l <"$tmp/out")" -gt 3 ]
result $? "pretty JSON spans several lines"
python3 -c 'import json, sys; f = json.load(open(sys.argv[1]))["fpr"]; sys.exit(not 0.0101 < f < 0.0103)' "$tmp/out" 2>/dev/null
result $? "calc JSON fpr about 0.0102 for m=10000 k=10 n=1000"

expect 0 "global options after the subcommand" calc --capacity 1000 --fpr 0.01 -j
json_ok "calc ... -j gives JSON"

# The module sizes in fixed point; calc must give exactly what it does,
# even where a double computation would be a bit short (these figures are
# kbloom_size()'s, from kmod/kbloom_core.c).
expect 0 "calc matches the module's fixed point" -j calc --capacity 2546546 --fpr 0.000000012
json_is bits 96668810 "fixed-point bits for n=2546546, 12 ppb"
json_is hashes 26 "fixed-point hashes for n=2546546, 12 ppb"
expect 0 "calc of a tiny filter" -j calc --capacity 1 --fpr 0.5
json_is bits 64 "the module's minimum of 64 bits"
json_is hashes 32 "hashes clamped to 32"

# Suffixes.
expect 0 "suffix Ki" -j calc --capacity 1Ki --fpr 0.01
json_is capacity 1024 "1Ki is 1024"
expect 0 "suffix k" -j calc --capacity 2k --fpr 0.01
json_is capacity 2000 "2k is 2000"
expect 0 "suffix M" -j calc --capacity 3M --fpr 0.01
json_is capacity 3000000 "3M is 3000000"
expect 0 "suffix Mi" -j calc --capacity 1Mi --fpr 0.01
json_is capacity 1048576 "1Mi is 1048576"
expect 0 "suffix G" -j calc --capacity 1G --fpr 0.5
json_is capacity 1000000000 "1G is 10^9"
expect 0 "suffix Gi" -j calc --capacity 1Gi --fpr 0.5
json_is capacity 1073741824 "1Gi is 2^30"

# calc must not open the device.
if command -v strace >/dev/null 2>&1; then
	BLOOMCTL_DEVICE=/dev/null strace -f -e trace=open,openat -o "$tmp/strace" \
		"$BLOOMCTL" calc --capacity 1000 --fpr 0.01 >/dev/null 2>&1
	! grep -q '/dev/null' "$tmp/strace"
	result $? "calc does not open the device"
fi

# --- bad numbers and options ---

expect 2 "--fpr 1.5" calc --capacity 1000 --fpr 1.5
err_has "bloomctl: --fpr '1.5': must be a fraction between 0 and 1" "--fpr 1.5 message"
[ ! -s "$tmp/out" ]
result $? "errors go to stderr only without -j"
expect 2 "--fpr 0" calc --capacity 1000 --fpr 0
expect 2 "--fpr 1" calc --capacity 1000 --fpr 1
expect 2 "--fpr -0.1" calc --capacity 1000 --fpr -0.1
expect 2 "--fpr abc" calc --capacity 1000 --fpr abc
expect 2 "--fpr nan" calc --capacity 1000 --fpr nan
expect 2 "--fpr 0x0.1" calc --capacity 1000 --fpr 0x0.1
expect 2 "--fpr below one per billion" calc --capacity 1000 --fpr 1e-10
expect 2 "--capacity 12abc" calc --capacity 12abc --fpr 0.01
err_has "--capacity '12abc'" "12abc message names option and value"
expect 2 "--capacity -5" calc --capacity -5 --fpr 0.01
err_has "--capacity '-5'" "-5 message names option and value"
expect 2 "--capacity empty" calc --capacity '' --fpr 0.01
expect 2 "--capacity ' 5'" calc --capacity ' 5' --fpr 0.01
expect 2 "--capacity 5Ki1" calc --capacity 5Ki1 --fpr 0.01
expect 2 "--capacity overflow" calc --capacity 99999999999999999999 --fpr 0.01
err_has "too large" "overflow message"
expect 2 "--capacity suffix overflow" calc --capacity 99999999999Gi --fpr 0.01
expect 2 "--capacity 0" calc --capacity 0 --fpr 0.01
expect 2 "--hashes 0" calc --bits 1000 --hashes 0 --capacity 10
expect 2 "--hashes 33" calc --bits 1000 --hashes 33 --capacity 10
expect 2 "calc without arguments" calc
expect 2 "calc --capacity without --fpr" calc --capacity 1000
expect 2 "calc --bits without --hashes" calc --bits 1000 --capacity 10
expect 2 "calc --bits --hashes without --capacity" calc --bits 1000 --hashes 3
expect 2 "calc --fpr with --bits" calc --bits 1000 --hashes 3 --capacity 10 --fpr 0.1
expect 2 "calc missing option argument" calc --capacity
err_has "needs an argument" "missing argument message"
expect 2 "calc stray argument" calc --capacity 10 --fpr 0.1 extra
expect 2 "unknown global option" --bogus
err_has "bloomctl: " "errors are prefixed bloomctl:"
expect 2 "unknown short global option" -Z calc
expect 2 "unknown subcommand option" calc --bogus
expect 2 "unknown subcommand" frobnicate
expect 2 "no subcommand"
expect 2 "-d without argument" -d

# --- JSON errors ---

expect 2 "-j error" -j calc --capacity 1000 --fpr 1.5
json_ok "JSON error is valid JSON"
json_is error "--fpr '1.5': must be a fraction between 0 and 1" "JSON error text"
err_has "must be a fraction" "JSON error also on stderr"
expect 2 "-p error" -p calc --capacity x --fpr 0.1
json_ok "pretty JSON error is valid JSON"
# Quotes, backslashes, control characters and non-UTF-8 bytes must be escaped.
expect 2 "-j error with odd bytes" -j create $'a"b\\c\x01\xff\xc3\xa9' --bits 64 --hashes 1
json_ok "JSON escapes quotes, backslashes, control and non-UTF-8 bytes"
out_has '\u0001' "control byte as \\u0001"
out_has '\u00ff' "non-UTF-8 byte as \\u00ff"
expect 2 "-j unknown option" -j --bogus
json_ok "JSON error for an unknown option"
expect 2 "-j device missing" -j list
json_ok "JSON error when the device is missing"

# --- names ---

expect 2 "name starting with ." create .foo --bits 64 --hashes 1
err_has "filter name '.foo'" "bad name is named"
expect 2 "name with a space" create 'a b' --bits 64 --hashes 1
expect 2 "name with /" show a/b
expect 2 "empty name" destroy ''
expect 2 "32-character name" clear aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
err_has "too long" "long name message"
expect 2 "31-character name reaches the device" -d /dev/null clear aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
err_has "not a kbloom device" "31 characters are accepted"
expect 2 "missing NAME" show
expect 2 "two NAMEs" show a b
expect 2 "query without NAME" query

# --- create argument rules (checked before the device is opened) ---

expect 2 "create without sizing" create foo
expect 2 "create --bits without --hashes" create foo --bits 1000
err_has "--bits needs --hashes" "--bits needs --hashes message"
expect 2 "create --hashes without --bits" create foo --hashes 3
expect 2 "create --capacity without --fpr" create foo --capacity 1000
expect 2 "create --fpr without --capacity" create foo --fpr 0.01
expect 2 "create --bits below 64" create foo --bits 63 --hashes 1
expect 2 "create --bits above 2^36" create foo --bits 68719476737 --hashes 1
expect 2 "create reaches the device" -d /dev/null create foo --capacity 1000 --fpr 0.01
err_has "filter 'foo': not a kbloom device" "create names the filter on an ioctl error"
expect 2 "create, options before NAME" -d /dev/null create --bits 1Ki --hashes 3 foo --capacity 10
err_has "filter 'foo'" "options may come before NAME"
expect 2 "missing device" create foo --bits 64 --hashes 1
err_has "/nonexistent/bloom" "missing device is named"
expect 2 "-d overrides BLOOMCTL_DEVICE" -d /nonexistent/other list
err_has "/nonexistent/other" "-d device is used"

# --- keys (input checks happen before the first ioctl) ---

printf 'a\n\nb\n' >"$tmp/in"
expect 2 "empty line" -d /dev/null query foo <"$tmp/in"
err_has "stdin: line 2: empty key" "empty line names the line"
printf '\r\n' >"$tmp/in"
expect 2 "line with only CR is empty" -d /dev/null add foo <"$tmp/in"
err_has "line 1: empty key" "CRLF is stripped"
printf 'abc\n' >"$tmp/in"
expect 2 "odd hex line" -d /dev/null query foo --hex <"$tmp/in"
err_has "line 1: 'abc': not hex" "odd hex names the line"
expect 2 "odd hex argument" -d /dev/null query foo --hex abc
err_has "key 'abc': not hex" "odd hex names the key"
expect 2 "non-hex argument" -d /dev/null test-and-add foo --hex 0g
err_has "key '0g'" "non-hex names the key"
expect 2 "too long key" -d /dev/null add foo "$(printf 'x%.0s' $(seq 4097))"
err_has "longer than 4096" "long key message"
expect 2 "4096-byte key reaches the device" -d /dev/null add foo "$(printf 'x%.0s' $(seq 4096))"
err_has "not a kbloom device" "4096 bytes are accepted"
head -c 100000 /dev/zero >"$tmp/in"
expect 2 "binary line too long" -d /dev/null add foo <"$tmp/in"
err_has "line 1: too long" "long line message"
printf 'aa\nbb\n' >"$tmp/keys"
expect 2 "--file reaches the device" -d /dev/null query foo --file "$tmp/keys"
err_has "not a kbloom device" "--file is read"
expect 2 "--file missing" -d /dev/null query foo --file "$tmp/nonexistent"
err_has "$tmp/nonexistent" "missing --file is named"
expect 2 "--file with KEY arguments" query foo --file "$tmp/keys" x
expect 2 "--batch 0" query foo --batch 0
err_has "--batch '0'" "--batch 0 message"
expect 2 "--batch above the maximum" query foo --batch 2Mi
expect 2 "-- ends options" -d /dev/null query foo -- -x --hex
err_has "not a kbloom device" "keys after -- are keys"
expect 2 "options after keys" -d /dev/null query foo a --count b
err_has "not a kbloom device" "--count after the keys is an option"
expect 2 "key that looks like an option" query foo -x
expect 2 "-j key error" -j -d /dev/null query foo --hex 1
json_ok "JSON for a key error is valid"
printf 'a\nb\n' >"$tmp/in"
expect 2 "-j ioctl error while streaming" -j -d /dev/null query foo <"$tmp/in"
json_ok "JSON for an error in a result stream is valid"
out_has '"error"' "the stream's JSON carries the error"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
