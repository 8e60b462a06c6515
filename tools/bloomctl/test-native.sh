#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of bloomctl that need no kbloom module: calc, argument checking,
# help, exit status, JSON well-formedness, and the checks of filter images
# (inspect, and load up to the point where it opens the device). /dev/null
# stands in for the device where bloomctl must get as far as the first
# ioctl (which then fails with ENOTTY), to show that the input was accepted.
# Images are written by mkimage.py, next to this script, which implements
# the format (and its CRC32C) independently of bloomctl. Decompression
# bombs run under `ulimit -v`, to prove nothing large is allocated.
#
# Then, if bloomctl is dynamically linked, fakedev.so (fakedev.c, built by
# its Makefile rule) is preloaded to stand in for the device: what bloomctl sends to
# the module and how it reports the answers (open modes, hash schemes,
# EDQUOT and other errors, image round trips, the safe save) are checked
# without the module.
#
# Usage: test-native.sh path/to/bloomctl
# Prints "ok N - ..." or "not ok N - ..." per check, then "P passed, F failed".

set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 path/to/bloomctl" >&2
	exit 2
fi
# Absolute: some tests run it from another directory.
BLOOMCTL=$(readlink -f "$1")
# Never touch a real device, whatever the environment says.
export BLOOMCTL_DEVICE=/nonexistent/bloom
unset BLOOMCTL_MAX_PAYLOAD
# The tests import mkimage.py: leave no __pycache__ in the tree.
export PYTHONDONTWRITEBYTECODE=1
# No test may wait for a terminal.
exec </dev/null

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=tools/lib-tap.sh
. "$(dirname "$0")/../lib-tap.sh"
tap_out=$tmp/out
tap_err=$tmp/err

# run ARGS...: run bloomctl, leaving stdout, stderr and status in
# $tmp/out, $tmp/err and $rc (lib-tap's expect, out_has and err_has read
# them). Standard input is whatever the caller gives: redirect it, not
# pipe it, as the counters must not live in a subshell.
run() {
	"$BLOOMCTL" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# refused DESC MESSAGE ARGS...: expect 2, then err_has MESSAGE.
refused() {
	local desc=$1 msg=$2

	shift 2
	expect 2 "$desc" "$@"
	err_has "$msg" "$desc: says '${msg//$tmp\//}'"
}

# prints RC DESC TEXT ARGS...: expect RC, then out_has TEXT.
prints() {
	local want=$1 desc=$2 text=$3

	shift 3
	expect "$want" "$desc" "$@"
	out_has "$text" "$desc: prints '${text//$tmp\//}'"
}

# lacks out|err|log|strace PATTERN DESC: no line of that output of the
# last run matches PATTERN (grep -iE).
lacks() {
	! grep -qiE -- "$2" "$tmp/$1"
	result $? "$3"
}

json_ok() {
	python3 -m json.tool "$tmp/out" >/dev/null 2>&1
	result $? "$1"
}

# same_image A B: the same image but for the CRC and, within 10 ms, the
# newest generation's start (version 3): two saves of one filter.
same_image() {
	python3 - "$1" "$2" <<'PYEOF'
import struct, sys
a, b = (bytearray(open(f, "rb").read()) for f in sys.argv[1:3])
if len(a) != len(b) or len(a) < 112:
    sys.exit(1)
sa, sb = (struct.unpack_from("<Q", x, 104)[0] for x in (a, b))
for x in (a, b):
    x[68:72] = bytes(4)
    x[104:112] = bytes(8)
sys.exit(0 if a == b and abs(sa - sb) <= 10 else 1)
PYEOF
}

# json_get KEY: JSON member KEY (a.b: member b of member a) of the last
# run's output, as Python prints it.
json_get() {
	python3 -c 'import functools, json, sys; print(functools.reduce(lambda o, k: o[k], sys.argv[2].split("."), json.load(open(sys.argv[1]))))' \
		"$tmp/out" "$1" 2>/dev/null
}

json_is() {
	local got

	got=$(json_get "$1")
	check "$3 ($1 = $2, got '$got')" [ "$got" = "$2" ]
}

# json_are DESC KEY=VALUE...: json_is of each KEY, named "DESC: KEY".
json_are() {
	local desc=$1 kv

	shift
	for kv; do
		json_is "${kv%%=*}" "${kv#*=}" "$desc: ${kv%%=*}"
	done
}

# --- help and version ---

prints 0 "--help" "Usage: bloomctl" --help
expect 0 "-h" -h
expect 0 "help subcommand" help
for cmd in create destroy clear list show add query test-and-add remove \
	   merge estimate save load inspect calc version help; do
	prints 0 "$cmd --help" "Usage: bloomctl [GLOBAL OPTIONS] $cmd" "$cmd" --help
	expect 0 "$cmd -h" "$cmd" -h
done
prints 0 "-V without a module" "bloomctl " -V
expect 0 "version without a module" version
expect 0 "-j version without a module" -j version
json_ok "version JSON is valid"
json_is module None "no module in version JSON"

# --- calc ---

prints 0 "calc --capacity 1M --fpr 0.01" "9.585" calc --capacity 1M --fpr 0.01
out_has "hashes:          7" "fpr 1% gives 7 hashes"
out_has "bits:            9585059" "fpr 1% for 1M keys gives 9585059 bits"
out_has "bytes:           1198136" "bytes are whole 64-bit words"

prints 0 "calc --fpr 0.001" "14.377" calc --capacity 1000000 --fpr 0.001
out_has "hashes:          10" "fpr 0.1% gives 10 hashes"

prints 0 "calc by bits and hashes" "0.0102 (1.02%)" calc --bits 10000 --hashes 10 --capacity 1000

expect 0 "calc -j" -j calc --capacity 1000000 --fpr 0.01
json_ok "calc JSON is valid"
json_are "calc JSON" bits=9585059 hashes=7 bytes=1198136 capacity=1000000 bits_per_key=9.585059
python3 -c 'import json, sys; f = json.load(open(sys.argv[1]))["fpr"]; sys.exit(not 0.0099 < f < 0.0101)' "$tmp/out" 2>/dev/null
result $? "calc JSON fpr about 0.01"

expect 0 "calc -p" -p calc --bits 10000 --hashes 10 --capacity 1000
json_ok "pretty calc JSON is valid"
check "pretty JSON spans several lines" [ "$(wc -l <"$tmp/out")" -gt 3 ]
python3 -c 'import json, sys; f = json.load(open(sys.argv[1]))["fpr"]; sys.exit(not 0.0101 < f < 0.0103)' "$tmp/out" 2>/dev/null
result $? "calc JSON fpr about 0.0102 for m=10000 k=10 n=1000"

expect 0 "global options after the subcommand" calc --capacity 1000 --fpr 0.01 -j
json_ok "calc ... -j gives JSON"

# The module sizes in fixed point; calc must give exactly what it does,
# even where a double computation would be a bit short (these figures are
# kbloom_size()'s, from kmod/kbloom_core.c).
expect 0 "calc matches the module's fixed point" -j calc --capacity 2546546 --fpr 0.000000012
json_are "fixed point, n=2546546 at 12 ppb" bits=96668810 hashes=26
expect 0 "calc of a tiny filter" -j calc --capacity 1 --fpr 0.5
json_are "the module's minimum of 64 bits, hashes clamped to 32" bits=64 hashes=32

# Suffixes.
for s in 1Ki=1024 2k=2000 3M=3000000 1Mi=1048576 1G=1000000000 \
	 1Gi=1073741824; do
	expect 0 "suffix ${s%=*}" -j calc --capacity "${s%=*}" --fpr 0.5
	json_is capacity "${s#*=}" "${s%=*} is ${s#*=}"
done

# calc must not open the device.
if command -v strace >/dev/null 2>&1; then
	BLOOMCTL_DEVICE=/dev/null strace -f -e trace=open,openat -o "$tmp/strace" \
		"$BLOOMCTL" calc --capacity 1000 --fpr 0.01 >/dev/null 2>&1
	lacks strace /dev/null "calc does not open the device"
fi

# --- bad numbers and options ---

refused "--fpr 1.5" "bloomctl: --fpr '1.5': must be a fraction between 0 and 1" calc --capacity 1000 --fpr 1.5
check "errors go to stderr only without -j" [ ! -s "$tmp/out" ]
# The last is below one per billion.
for v in 0 1 -0.1 abc nan 0x0.1 1e-10; do
	expect 2 "--fpr $v" calc --capacity 1000 --fpr "$v"
done
refused "--capacity 12abc" "--capacity '12abc'" calc --capacity 12abc --fpr 0.01
refused "--capacity -5" "--capacity '-5'" calc --capacity -5 --fpr 0.01
refused "create --bits 12abc" "--bits '12abc'" create bad --bits 12abc --hashes 3
refused "create --fpr 1.5" "--fpr '1.5': must be a fraction" create bad --capacity 10 --fpr 1.5
refused "list --frobnicate" "unknown or ambiguous option '--frobnicate'" list --frobnicate
for v in '' ' 5' 5Ki1; do
	expect 2 "--capacity '$v'" calc --capacity "$v" --fpr 0.01
done
refused "--capacity overflow" "too large" calc --capacity 99999999999999999999 --fpr 0.01
expect 2 "--capacity suffix overflow" calc --capacity 99999999999Gi --fpr 0.01
expect 2 "--capacity 0" calc --capacity 0 --fpr 0.01
expect 2 "--hashes 0" calc --bits 1000 --hashes 0 --capacity 10
expect 2 "--hashes 33" calc --bits 1000 --hashes 33 --capacity 10
expect 2 "calc without arguments" calc
expect 2 "calc --capacity without --fpr" calc --capacity 1000
expect 2 "calc --bits without --hashes" calc --bits 1000 --capacity 10
expect 2 "calc --bits --hashes without --capacity" calc --bits 1000 --hashes 3
expect 2 "calc --fpr with --bits" calc --bits 1000 --hashes 3 --capacity 10 --fpr 0.1
refused "calc missing option argument" "needs an argument" calc --capacity
expect 2 "calc stray argument" calc --capacity 10 --fpr 0.1 extra
refused "unknown global option" "bloomctl: " --bogus
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

refused "name starting with ." "filter name '.foo'" create .foo --bits 64 --hashes 1
expect 2 "name with a space" create 'a b' --bits 64 --hashes 1
expect 2 "name with /" show a/b
expect 2 "empty name" destroy ''
refused "32-character name" "too long" clear aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
refused "31-character name reaches the device" "not a kbloom device" -d /dev/null clear aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
expect 2 "missing NAME" show
expect 2 "two NAMEs" show a b
expect 2 "query without NAME" query

# --- create argument rules (checked before the device is opened) ---

expect 2 "create without sizing" create foo
refused "create --bits without --hashes" "--bits needs --hashes" create foo --bits 1000
expect 2 "create --hashes without --bits" create foo --hashes 3
expect 2 "create --capacity without --fpr" create foo --capacity 1000
expect 2 "create --fpr without --capacity" create foo --fpr 0.01
expect 2 "create --bits below 64" create foo --bits 63 --hashes 1
expect 2 "create --bits above 2^36" create foo --bits 68719476737 --hashes 1
expect 2 "create reaches the device" -d /dev/null create foo --capacity 1000 --fpr 0.01
err_has "filter 'foo': not a kbloom device" "create names the filter on an ioctl error"
refused "create, options before NAME" "filter 'foo'" -d /dev/null create --bits 1Ki --hashes 3 foo --capacity 10
refused "missing device" "/nonexistent/bloom" create foo --bits 64 --hashes 1
refused "-d overrides BLOOMCTL_DEVICE" "/nonexistent/other" -d /nonexistent/other list

# --- keys (input checks happen before the first ioctl) ---

printf 'a\n\nb\n' >"$tmp/in"
refused "empty line" "stdin: line 2: empty key" -d /dev/null query foo <"$tmp/in"
printf '\r\n' >"$tmp/in"
refused "line with only CR is empty" "line 1: empty key" -d /dev/null add foo <"$tmp/in"
printf 'abc\n' >"$tmp/in"
refused "odd hex line" "line 1: 'abc': not hex" -d /dev/null query foo --hex <"$tmp/in"
refused "odd hex argument" "key 'abc': not hex" -d /dev/null query foo --hex abc
refused "non-hex argument" "key '0g'" -d /dev/null test-and-add foo --hex 0g
refused "too long key" "longer than 4096" -d /dev/null add foo "$(printf 'x%.0s' $(seq 4097))"
refused "4096-byte key reaches the device" "not a kbloom device" -d /dev/null add foo "$(printf 'x%.0s' $(seq 4096))"
head -c 100000 /dev/zero >"$tmp/in"
refused "binary line too long" "line 1: too long" -d /dev/null add foo <"$tmp/in"
# However the input is cut into reads, a line is too long by its length.
{ echo a; head -c 9000 /dev/zero | tr '\0' x; echo; } >"$tmp/in"
refused "a 9000-byte line, newline and all in one read" "line 2: too long" -d /dev/null add foo --file "$tmp/in"
{ printf 'ab%.0s' $(seq 4096); printf '\r\n'; } >"$tmp/in"
refused "the longest hex key, CRLF" "not a kbloom device" -d /dev/null add foo --hex --file "$tmp/in"
printf 'aa\nbb\n' >"$tmp/keys"
refused "--file reaches the device" "not a kbloom device" -d /dev/null query foo --file "$tmp/keys"
refused "--file missing" "$tmp/nonexistent" -d /dev/null query foo --file "$tmp/nonexistent"
expect 2 "--file with KEY arguments" query foo --file "$tmp/keys" x
refused "--batch 0" "--batch '0'" query foo --batch 0
expect 2 "--batch above the maximum" query foo --batch 2Mi
refused "-- ends options" "not a kbloom device" -d /dev/null query foo -- -x --hex
refused "options after keys" "not a kbloom device" -d /dev/null query foo a --count b
expect 2 "key that looks like an option" query foo -x
expect 2 "-j key error" -j -d /dev/null query foo --hex 1
json_ok "JSON for a key error is valid"
printf 'a\nb\n' >"$tmp/in"
expect 2 "-j ioctl error while streaming" -j -d /dev/null query foo <"$tmp/in"
json_ok "JSON for an error in a result stream is valid"
out_has '"error"' "the stream's JSON carries the error"

# --- create --counting and --like ---

expect 2 "create --counting reaches the device" -d /dev/null create c --counting --bits 1Ki --hashes 3
err_has "filter 'c': not a kbloom device" "--counting is accepted"
refused "create --like reaches the device" "filter 'b': not a kbloom device" -d /dev/null create b --like a
expect 2 "create --like --counting reaches the device" -d /dev/null create b --like a --counting
for opt in "--bits 1000" "--hashes 3" "--capacity 10" "--fpr 0.1"; do
	# shellcheck disable=SC2086
	refused "create --like with $opt" "cannot be given with it" -d /dev/null create b --like a $opt
done
refused "create --like with a bad name" "filter name '.a'" -d /dev/null create b --like .a
expect 2 "create --like without an argument" create b --like

# --- remove, merge, estimate: argument checks ---

refused "remove reaches the device" "filter 'foo': not a kbloom device" -d /dev/null remove foo a b
printf 'a\n\n' >"$tmp/in"
refused "remove empty line" "stdin: line 2: empty key" -d /dev/null remove foo <"$tmp/in"
refused "remove --batch 1 reaches the device" "not a kbloom device" -d /dev/null remove foo --batch 1 --hex 00ff
expect 2 "remove --count -j" -j -d /dev/null remove foo --count a
json_ok "remove error JSON is valid"
expect 2 "remove without NAME" remove
refused "merge reaches the device" "cannot merge 'b' into 'a': not a kbloom device" -d /dev/null merge a b
refused "merge with one name" "needs two filter names" -d /dev/null merge a
refused "merge with three names" "unexpected argument 'c'" -d /dev/null merge a b c
expect 2 "merge with a bad name" -d /dev/null merge a 'b/c'
refused "estimate reaches the device" "cannot compare 'a' with 'b': not a kbloom device" -d /dev/null estimate a b
expect 2 "-j estimate error" -j -d /dev/null estimate a b
json_ok "estimate error JSON is valid"
expect 2 "estimate with one name" estimate a

# --- save ---

refused "save reaches the device" "filter 'foo': not a kbloom device" -d /dev/null save foo "$tmp/s.img"
[ ! -e "$tmp/s.img" ] && [ ! -e "$tmp/s.img.tmp" ]
result $? "a failed save leaves no file behind"
expect 2 "save --compress reaches the device" -d /dev/null save foo "$tmp/s.img" --compress
refused "save -j to stdout" "no JSON there" -j -d /dev/null save foo -
refused "save without FILE" "needs NAME and FILE" save foo
expect 2 "save with a bad name" save .foo "$tmp/s.img"
expect 2 "load without FILE" load foo
expect 2 "load --bogus" load foo x --bogus

# --- images: valid ones ---

MKIMAGE="$(dirname "$0")/mkimage.py"
python3 "$MKIMAGE" --selftest >/dev/null
result $? "mkimage.py's CRC32C passes its test vector"

# img FILE ARGS...: write an image with mkimage.py.
img() {
	local f=$1

	shift
	python3 "$MKIMAGE" "$@" "$tmp/$f"
}

img v.img --fill 20
prints 0 "inspect a valid plain image" "bits:           100" inspect "$tmp/v.img"
out_has "counting:       no" "inspect shows counting"
lacks out seed "inspect does not show the seed"
expect 0 "inspect -j a valid image" -j inspect "$tmp/v.img"
json_ok "inspect JSON is valid"
# 100 bits are 16 bytes of payload, after a 96-byte header.
json_are "inspect JSON" bits=100 hashes=3 payload_bytes=16 file_bytes=112 compression=none counting=False \
	hash_scheme_name=jhash
refused "load a valid image: only the device fails" "/nonexistent/bloom" load x "$tmp/v.img"
refused "load a valid image, -d /nonexistent" "bloomctl: /nonexistent: " -d /nonexistent load x "$tmp/v.img"
refused "load a valid image, -d /dev/null" "/dev/null: not a kbloom device" -d /dev/null load x "$tmp/v.img" --replace
refused "load from stdin" "bloomctl: /nonexistent: " -d /nonexistent load x - <"$tmp/v.img"
prints 0 "inspect from stdin" "image 'stdin'" inspect - <"$tmp/v.img"

img vc.img --counting --compress --fill 30
expect 0 "inspect a compressed counting image" -j inspect "$tmp/vc.img"
# 100 counters are 56 bytes; the non-zero ones and those at 15 counted.
json_are "compressed counting image" counting=True compression=zlib payload_bytes=56 bits_set=27 saturated=1
refused "load a compressed image: only the device fails" "bloomctl: /nonexistent: " -d /nonexistent load x "$tmp/vc.img"
img vbig.img --bits 1048576 --hashes 7 --fill 50000 --compress
expect 0 "inspect a 1 Mi-bit compressed image" -j inspect "$tmp/vbig.img"
json_is payload_bytes 131072 "2^20 bits are 128 KiB"
img vfull.img --bits 64 --hashes 1 --field adds=0 --ones
expect 0 "inspect a full filter" -j inspect "$tmp/vfull.img"
json_is estimated_keys None "a full filter's key estimate is null"

# --- images: one corruption each, each with its own message ---

# bad DESC MESSAGE FILE: load and inspect must fail with MESSAGE, naming
# the file, before the device is opened.
bad() {
	local desc=$1 msg=$2 f=$tmp/$3

	refused "load: $desc" "bloomctl: $f: $msg" -d /nonexistent load x "$f"
	lacks err /nonexistent "load: $desc: rejected before the device is opened"
	expect 2 "inspect: $desc" -j inspect "$f"
	json_ok "inspect: $desc: JSON error is valid"
	err_has "$f: $msg" "inspect: $desc: same message"
}

# bad_img DESC MESSAGE MKIMAGE_ARGS...: bad, of the image mkimage.py
# writes with these arguments.
bad_img() {
	local desc=$1 msg=$2

	shift 2
	img c.img "$@"
	bad "$desc" "$msg" c.img
}

bad_img "truncated header" "truncated: header needs 96 bytes, file has 40" --truncate 40
: >"$tmp/empty.img"
bad "empty file" "truncated: header needs 96 bytes, file has 0" empty.img
bad_img "bad magic" "bad magic: not a kbloom filter image" --field magic=XKBLOOM
printf 'hello\n' >"$tmp/text.img"
bad "short text file" "bad magic" text.img
bad_img "unknown version" "unknown format version 4" --field version=4
bad_img "version 0" "unknown format version 0" --field version=0
bad_img "unknown hash scheme" "unknown hash scheme 3 (bloomctl knows 1, jhash, and 2, siphash)" --field hash_scheme=3
bad_img "hash scheme 0" "unknown hash scheme 0" --field hash_scheme=0
bad_img "unknown layout" "unknown layout 2 (bloomctl knows 0, standard, and 1, blocked)" --field layout=2
bad_img "layout 1 on bits that are no whole blocks" "parameters the module would refuse: 100 bits are not a whole number of 512-position blocks" \
	--field layout=1
bad_img "unknown flags (LIKE is no image flag)" "unknown flags 0x2" --field flags=2
bad_img "unknown high flag" "unknown flags 0x80000000" --field flags=0x80000000
bad_img "unknown compression" "unknown compression 2" --field compression=2
bad_img "jhash image with seed_hi[0]" "header bytes 88 to 95 (seed_hi) are not zero, but hash scheme 1 (jhash) has no high seed" \
	--field seed_hi0=1
bad_img "jhash image with seed_hi[1]" "header bytes 88 to 95 (seed_hi) are not zero" --field seed_hi1=0x80000000
bad_img "bits below 64" "bits 63 out of range" --field bits=63 --field payload_len=8 --field stored_len=8
bad_img "bits above 2^36" "bits 68719476800 out of range" --field bits=0x1000000040 --field payload_len=0x200000008
bad_img "hashes 0" "hashes 0 out of range" --field hashes=0
bad_img "hashes 33" "hashes 33 out of range" --field hashes=33
bad_img "fpr_ppb of one" "fpr_ppb 1000000000 out of range" --field fpr_ppb=1000000000
bad_img "payload length too large for the bits" "payload length mismatch: header says 24 bytes, a plain filter of 100 bits needs 16" \
	--field payload_len=24 --field stored_len=24 --append 8
bad_img "payload length too small for the bits" "payload length mismatch: header says 8 bytes" --field payload_len=8 --field stored_len=8
bad_img "counting flag without the counters" "payload length mismatch: header says 16 bytes, a counting filter of 100 bits needs 56" \
	--field flags=1
bad_img "stored length disagrees, uncompressed" "stored length mismatch: header says 8 bytes stored, 16 uncompressed" --field stored_len=8
bad_img "stored length beyond any deflate" "stored length mismatch: 100000 compressed bytes" --compress --field stored_len=100000
bad_img "truncated payload" "truncated: header says 16 bytes of payload, file has 4 after the header" --truncate 100
bad_img "truncated compressed payload" "truncated: header says 16 bytes of payload" --field stored_len=16 --compress --truncate 100
bad_img "one byte of trailing garbage" "trailing garbage: 1 bytes after the payload" --append 1
bad_img "trailing garbage" "trailing garbage: 5000 bytes after the payload" --append 5000
bad_img "a payload byte flipped" "bad CRC32C" --fill 20 --flip 100
bad_img "a header byte (adds) flipped" "bad CRC32C" --fill 20 --flip 50
bad_img "a seed byte flipped" "bad CRC32C" --fill 20 --flip 40
bad_img "the CRC itself flipped" "bad CRC32C" --fill 20 --flip 68
bad_img "a compressed byte flipped" "bad CRC32C" --compress --fill 20 --flip 110
bad_img "bad compression stream" "zlib decompression failed" --compress --zlib-garbage
bad_img "stream decompresses to more" "decompressed size mismatch: the stream gives more than the 16 bytes" --compress --zlib-extra 8
bad_img "stream decompresses to less" "decompressed size mismatch: the stream gives 8 bytes, the header says 16" --compress --zlib-short 8
bad_img "junk after the zlib stream" "zlib decompression failed: 3 bytes after the end of the compressed stream" --compress --zlib-tail 3
# A zlib stream cut short, with lengths and CRC that agree with it.
bad_img "zlib stream cut short" "zlib decompression failed: the compressed stream ends early" \
	--counting --compress --fill 30 --zlib-cut 10
bad_img "padding bit set" "non-zero padding: bit 100 of the payload is set, past the 100 bits" --pad
bad_img "padding counter set" "non-zero padding: bit 400 of the payload is set, past the 100 counters" --pad --counting
bad_img "padding bit set, compressed" "non-zero padding" --pad --compress
refused "load a missing file" "$tmp/nonexistent.img: No such file" -d /nonexistent load x "$tmp/nonexistent.img"
refused "load a directory" "$tmp: " -d /nonexistent load x "$tmp"
img c.img --truncate 40
expect 2 "a corrupt image on stdin" -d /nonexistent load x - <"$tmp/c.img"
err_has "bloomctl: stdin: truncated: header needs 96 bytes, file has 40" "stdin is named in the message"

# Truncation at every byte offset must be caught, by the right check.
for f in v.img vc.img; do
	size=$(wc -c <"$tmp/$f")
	bad_offsets=
	for ((i = 0; i < size; i++)); do
		head -c "$i" "$tmp/$f" >"$tmp/t.img"
		"$BLOOMCTL" -d /nonexistent load x "$tmp/t.img" >/dev/null 2>"$tmp/err"
		rc=$?
		if [ "$i" -lt 96 ]; then
			want="$tmp/t.img: truncated: header needs 96 bytes, file has $i"
		else
			want="$tmp/t.img: truncated: header says $((size - 96)) bytes of payload, file has $((i - 96)) after the header"
		fi
		if [ "$rc" != 2 ] || ! grep -qF -- "$want" "$tmp/err"; then
			bad_offsets="$bad_offsets $i"
		fi
	done
	[ -z "$bad_offsets" ]
	result $? "$f truncated at each of its $size offsets: the truncation is reported${bad_offsets:+ (wrong at:$bad_offsets)}"
done

# Every single-byte change of the header is caught (the CRC covers it):
# one image, then each of its bytes flipped in a copy of its own.
size=$(wc -c <"$tmp/v.img")
missed=
img t.img --fill 20
mkdir "$tmp/flips"
python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
for i in range(len(b)):
    f = bytearray(b)
    f[i] ^= 0x01
    open("%s/%d.img" % (sys.argv[2], i), "wb").write(f)' "$tmp/t.img" "$tmp/flips"
for ((i = 0; i < size; i++)); do
	"$BLOOMCTL" inspect "$tmp/flips/$i.img" >/dev/null 2>&1 && missed="$missed $i"
done
rm -rf "$tmp/flips"
check "a bit flipped at any of the $size offsets is caught${missed:+ (missed at:$missed)}" [ -z "$missed" ]

# --- images: hash schemes and the module's parameter rules ---

img s.img --siphash --fill 20
prints 0 "inspect a SipHash image" "hash scheme:    siphash (2)" inspect "$tmp/s.img"
lacks out seed "inspect does not show the seed of a SipHash image"
expect 0 "inspect -j a SipHash image" -j inspect "$tmp/s.img"
json_are "inspect JSON" hash_scheme=2 hash_scheme_name=siphash
refused "load a SipHash image: only the device fails" "bloomctl: /nonexistent: " -d /nonexistent load x "$tmp/s.img"
img s0.img --siphash --field seed_hi0=0 --field seed_hi1=0
expect 0 "a SipHash image whose high seed is zero is valid" inspect "$tmp/s0.img"
img sc.img --siphash --counting --compress --fill 30
expect 0 "inspect a compressed counting SipHash image" -j inspect "$tmp/sc.img"
json_is bits_set 27 "SipHash counting image: counters set"

# A design rate binds bits and hashes to the capacity, as the module's
# sizing gives them (kbloom_params_valid() in kmod/kbloom_core.c).
run -j calc --capacity 1000 --fpr 0.01
cbits=$(json_get bits)
chashes=$(json_get hashes)
img p.img --bits "$cbits" --hashes "$chashes" --field capacity=1000 --field fpr_ppb=10000000 --fill 50
expect 0 "an image sized as calc says is valid" -j inspect "$tmp/p.img"
json_is fpr_target 0.01 "its design rate is kept"
bad_img "a design rate that does not give these bits" "parameters the module would refuse: capacity 10 at fpr_ppb 10000000 sizes a filter of 96 bits and 7 hashes, not 100 bits and 3" \
	--field capacity=10 --field fpr_ppb=10000000
bad_img "a design rate that does not give these hashes" "parameters the module would refuse: capacity 1000 at fpr_ppb 10000000 sizes a filter of $cbits bits and $chashes hashes" \
	--bits "$cbits" --hashes $((chashes + 1)) --field capacity=1000 --field fpr_ppb=10000000
bad_img "a design rate without a capacity" "parameters the module would refuse: a design rate (fpr_ppb 10000000) without a capacity" \
	--field capacity=0 --field fpr_ppb=10000000
img c.img --field capacity=123456789 --field fpr_ppb=0
expect 0 "a capacity without a rate is informational" inspect "$tmp/c.img"

# --- images: decompression bombs ---

# limited KB ARGS...: run bloomctl with at most KB of address space, so
# that a large allocation fails instead of happening.
limited() {
	local kb=$1

	shift
	(ulimit -v "$kb" && exec "$BLOOMCTL" "$@") >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# 180 bytes that claim a counting filter of 2^36 counters: 32 GiB.
img bomb.img --compress --field bits=68719476736 --field flags=1 --field payload_len=34359738368
size=$(wc -c <"$tmp/bomb.img")
limited 20000 inspect "$tmp/bomb.img"
check "inspect a $size-byte image claiming 32 GiB: refused (exit 2, got $rc)" [ "$rc" = 2 ]
err_has "bomb.img: payload of 34359738368 bytes is over the limit of 1073741824 bytes (bloomctl's limit without the module; see --max-payload): not reading it" \
	"the refusal names the payload size and the limit"
limited 20000 -d /nonexistent load x "$tmp/bomb.img"
check "load of the 32 GiB claim: refused (exit 2, got $rc)" [ "$rc" = 2 ]
err_has "payload of 34359738368 bytes is over the limit" "load refuses it from the header, before the device"
# Even allowed, it costs only what the stream really produces (a 32-bit
# bloomctl, whose size_t cannot count 32 GiB, refuses it anyway).
if [ "$(od -An -tx1 -j4 -N1 "$BLOOMCTL" | tr -d ' ')" = 01 ]; then
	lie="counting filter of 68719476736 bits: too large for this 32-bit bloomctl"
else
	lie="decompressed size mismatch: the stream gives 16 bytes, the header says 34359738368"
fi
limited 20000 inspect "$tmp/bomb.img" --max-payload 64Gi
err_has "$lie" "inspect with the limit raised streams and finds the lie in 20 MB"
limited 20000 -d /nonexistent load x "$tmp/bomb.img" --max-payload 64Gi
err_has "$lie" "load with the limit raised allocates only what arrives"

# 65 KB that inflate to 64 MiB, an honest empty filter of 2^29 bits.
img b64.img --bits 536870912 --hashes 7 --compress
size=$(wc -c <"$tmp/b64.img")
limited 20000 -j inspect "$tmp/b64.img"
check "inspect of a $size-byte image of 64 MiB streams in 20 MB (exit 0, got $rc)" [ "$rc" = 0 ]
json_are "64 MiB, every piece counted" payload_bytes=67108864 bits_set=0
limited 20000 -d /nonexistent load x "$tmp/b64.img"
err_has "67108864 bytes of payload: Cannot allocate memory" "load needs the whole payload, and says so when it cannot have it"
expect 2 "load --max-payload below the payload" -d /nonexistent load x "$tmp/b64.img" --max-payload 1Mi
err_has "payload of 67108864 bytes is over the limit of 1048576 bytes (--max-payload)" "--max-payload is named"
expect 2 "inspect --max-payload below the payload" inspect "$tmp/b64.img" --max-payload 64Mi --max-payload 1000000
err_has "over the limit of 1000000 bytes (--max-payload)" "the last --max-payload counts"
BLOOMCTL_MAX_PAYLOAD=32Mi run inspect "$tmp/b64.img"
check "BLOOMCTL_MAX_PAYLOAD below the payload (exit 2, got $rc)" [ "$rc" = 2 ]
err_has "over the limit of 33554432 bytes (BLOOMCTL_MAX_PAYLOAD)" "BLOOMCTL_MAX_PAYLOAD is named"
BLOOMCTL_MAX_PAYLOAD=32Mi run inspect "$tmp/b64.img" --max-payload 64Mi
check "--max-payload overrides BLOOMCTL_MAX_PAYLOAD (exit 0, got $rc)" [ "$rc" = 0 ]
BLOOMCTL_MAX_PAYLOAD=lots run inspect "$tmp/v.img"
check "a bad BLOOMCTL_MAX_PAYLOAD is an error (exit 2, got $rc)" [ "$rc" = 2 ]
err_has "BLOOMCTL_MAX_PAYLOAD 'lots'" "the bad value is named"
refused "a bad --max-payload" "--max-payload '-1'" inspect "$tmp/v.img" --max-payload -1
expect 2 "--max-payload 0 refuses everything" inspect "$tmp/v.img" --max-payload 0
err_has "payload of 16 bytes is over the limit of 0 bytes" "limit 0"

# --- device open modes ---

# Commands that change filters, or (COMPARE) cost a pass over them, need a
# read-write fd; the others open the device read-only.
if command -v strace >/dev/null 2>&1; then
	# mode CMD ARGS...: how bloomctl opened /dev/null for CMD.
	mode() {
		strace -f -e trace=openat -o "$tmp/strace" "$BLOOMCTL" -d /dev/null "$@" \
			>/dev/null 2>&1 </dev/null
		sed -n 's|.*openat(AT_FDCWD, "/dev/null", \(O_[A-Z]*\).*|\1|p' "$tmp/strace" | head -1
	}
	for c in "create f --bits 64 --hashes 1" "create f --like g" "destroy f" \
		 "clear f" "load f $tmp/v.img" "merge a b" "estimate a b" \
		 "add f k" "test-and-add f k" "remove f k"; do
		# shellcheck disable=SC2086
		got=$(mode $c)
		check "${c%% *} opens the device read-write (got '$got')" [ "$got" = O_RDWR ]
	done
	for c in "show f" "list" "query f k" "save f $tmp/never.img" "version"; do
		# shellcheck disable=SC2086
		got=$(mode $c)
		check "${c%% *} opens the device read-only (got '$got')" [ "$got" = O_RDONLY ]
	done
fi

# --- windowed filters, without a device ---

# What is refused before the device is even opened (-d names a file that
# does not exist: any attempt to open it fails), and calc.
nodev=$tmp/no-such-device
wcreate=(-d "$nodev" create w --capacity 10 --fpr 0.01)
for d in 10parsecs 1.5s -1s s 10 1d 10S 5sec 1m30s '' 4294968s; do
	refused "create --window '$d' is refused" "--window '$d'" "${wcreate[@]}" --window "$d"
done
err_has "too long" "a window beyond 2^32 ms says it is too long"
for d in 1 17; do
	refused "create --window 1s --generations $d" "--generations '$d': must be between 2 and 16" \
		"${wcreate[@]}" --window 1s --generations "$d"
done
expect 2 "--generations x" "${wcreate[@]}" --window 1s --generations x
refused "--generations without --window" "--generations needs --window" "${wcreate[@]}" --generations 3
refused "--rotate-at-fill without --window" "--rotate-at-fill needs --window" "${wcreate[@]}" --rotate-at-fill
expect 2 "--rotate-at-fill without --capacity" -d "$nodev" create w --bits 1024 --hashes 3 --window 1s --rotate-at-fill
refused "--window with --like" "--like takes the window" -d "$nodev" create w --like old --window 1s
prints 0 "calc --generations 4" "generation fpr:  0.0025" calc --capacity 10000 --fpr 0.01 --generations 4
expect 0 "-j calc --generations 4" -j calc --capacity 10000 --fpr 0.01 --generations 4
json_is generations 4 "calc JSON: generations"
# kbloom_size(10000, 2500000): the module's per-generation size.
json_is bits 124705 "calc JSON: per-generation bits for fpr / G"
json_is total_bytes "$(( $(json_get bytes) * 4 ))" "calc JSON: total bytes are G times one"
expect 2 "calc --generations 1" calc --capacity 10 --fpr 0.01 --generations 1
expect 0 "calc without --generations has no generations" -j calc --capacity 10000 --fpr 0.01
json_is bits 95851 "plain calc unchanged"
expect 2 "rotate needs a name" rotate

# --- with a fake device ---

# fakedev.so, LD_PRELOADed, answers the ioctls on $tmp/fakedev as the
# module would (see fakedev.c): what bloomctl sends and how it reports the
# answers can be checked without the module. Only a dynamically linked
# bloomctl can be so tested.
here=$(cd "$(dirname "$0")" && pwd)
mkdir "$tmp/state"
: >"$tmp/fakedev"
fakeenv=(env "LD_PRELOAD=$tmp/fakedev.so" "FAKEDEV=$tmp/fakedev"
	 "FAKEDEV_STATE=$tmp/state" "FAKEDEV_LOG=$tmp/log")

# fake ARGS...: run bloomctl on the fake device, as run does, for 20 s
# at the most (a save must not hang on a FIFO).
fake() {
	: >"$tmp/log"
	timeout 20 "${fakeenv[@]}" "$BLOOMCTL" -d "$tmp/fakedev" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# fexpect, frefused, fprints: expect, refused, prints on the fake device.
fexpect() { runner=fake expect "$@"; }
frefused() { runner=fake refused "$@"; }
fprints() { runner=fake prints "$@"; }

log_has() {
	check "$2" grep -qF -- "$1" "$tmp/log"
}

# flogs RC DESC TEXT ARGS...: fexpect RC, then log_has TEXT.
flogs() {
	local want=$1 desc=$2 text=$3

	shift 3
	fexpect "$want" "$desc" "$@"
	log_has "$text" "$desc: the device gets '${text//$tmp\//}'"
}

have_fake=false
if ! command -v cc >/dev/null 2>&1; then
	echo "# no cc: no fake-device tests"
elif ! make -s -C "$here" fakedev.so >"$tmp/cc.err" 2>&1 ||
	! cp "$here/fakedev.so" "$tmp/fakedev.so"; then
	sed 's/^/# /' "$tmp/cc.err"
	result 1 "fakedev.so builds against the current uapi header"
else
	fake version
	if grep -q '^module: ' "$tmp/out"; then
		have_fake=true
	else
		echo "# $BLOOMCTL does not take LD_PRELOAD (statically linked?): no fake-device tests"
	fi
fi

# The errno values the fake module is told to fail with.
read -r EDQUOT ENOSPC EPERM EIO EBUSY < <(python3 -c 'import errno as e
print(e.EDQUOT, e.ENOSPC, e.EPERM, e.EIO, e.EBUSY)')

fake_version_tests() {
	fprints 0 "version with the fake module" "module: api_version 1, default hash scheme jhash (1)" version
	out_has "features: batch test-and-add sizing counting merge image siphash" "version lists the siphash feature"
	out_has "windows: 2..16 generations" "version lists the window feature"
	FAKEDEV_SCHEME=2 fexpect 0 "-j version, default siphash" -j version
	json_are "version JSON, the default scheme" module.hash_scheme=2 module.hash_scheme_name=siphash
	python3 -c 'import json, sys; sys.exit("siphash" not in json.load(open(sys.argv[1]))["module"]["features"])' "$tmp/out"
	result $? "version JSON: siphash among the features"
}

fake_create_tests() {
	flogs 0 "create --hash siphash" "CREATE rw hash_scheme=2" create h1 --bits 1Ki --hashes 3 --hash siphash
	frefused "create a filter that exists" "filter 'h1': already exists" create h1 --bits 1Ki --hashes 3
	fprints 0 "show a SipHash filter" "hash scheme:    siphash (2)" show h1
	fexpect 0 "-j show a SipHash filter" -j show h1
	json_are "show JSON" hash_scheme=2 hash_scheme_name=siphash
	flogs 0 "create without --hash" "CREATE rw hash_scheme=0" create h2 --bits 1Ki --hashes 3
	fprints 0 "show the default-scheme filter" "hash scheme:    jhash (1)" show h2
	flogs 0 "create --hash jhash" "CREATE rw hash_scheme=1" -j create h3 --capacity 1000 --fpr 0.01 --hash jhash
	json_is hash_scheme_name jhash "create JSON names the scheme"
	FAKEDEV_SCHEME=2 fexpect 0 "create on a module defaulting to SipHash" create h4 --bits 64 --hashes 1
	fprints 0 "show it" "hash scheme:    siphash (2)" show h4
	flogs 0 "create --like a SipHash filter" "CREATE rw hash_scheme=0" create h5 --like h1
	fprints 0 "show the copy" "hash scheme:    siphash (2)" show h5
	refused "create --like with --hash" "--hash cannot be given with it" create h6 --like h1 --hash jhash
	refused "create --hash md5" "--hash 'md5': must be siphash or jhash" create h6 --bits 64 --hashes 1 --hash md5
	FAKEDEV_FEATURES=0x3f fexpect 2 "--hash siphash on a module without it" create h7 --bits 64 --hashes 1 --hash siphash
	err_has "filter 'h7': --hash siphash: the module does not support it (its only scheme is jhash)" "the refusal says why"
	lacks log CREATE "nothing was sent to CREATE"
	FAKEDEV_FEATURES=0x3f fexpect 0 "--hash jhash on a module without SipHash" create h7 --bits 64 --hashes 1 --hash jhash
	log_has "CREATE rw hash_scheme=0" "an old module gets 0 (its field was reserved)"
}

fake_error_tests() {
	FAKEDEV_FAIL=CREATE:$EDQUOT fexpect 2 "create beyond max_filters" create q1 --bits 64 --hashes 1
	err_has "bloomctl: filter 'q1': too many filters (the module's max_filters limit)" "EDQUOT from CREATE is explained, naming the filter"
	nf=$(find "$tmp/state" -type f | wc -l)
	FAKEDEV_MAX_FILTERS=$nf fexpect 2 "load beyond max_filters" load q2 "$tmp/v.img"
	err_has "bloomctl: filter 'q2': $tmp/v.img: too many filters (the module's max_filters limit)" "EDQUOT from IMPORT names the filter and the file"
	FAKEDEV_FAIL=IMPORT:$ENOSPC fexpect 2 "load beyond the memory budget" load q3 "$tmp/v.img"
	err_has "filter 'q3': $tmp/v.img: 16 bytes would exceed the module's memory budget" "ENOSPC from IMPORT names the filter and the file"
	FAKEDEV_FAIL=DESTROY:$EPERM frefused "destroy without CAP_SYS_ADMIN" "filter 'h1': permission denied" destroy h1
	FAKEDEV_FAIL=CLEAR:$EDQUOT frefused "clear failing" "filter 'h1': too many filters" clear h1
	fexpect 0 "create for the mismatch" create m1 --bits 1Ki --hashes 3
	fexpect 0 "create another scheme" create m2 --bits 1Ki --hashes 3 --hash siphash
	frefused "merge across hash schemes" "cannot merge 'm2' into 'm1': seeds differ" merge m1 m2
	err_has "hash schemes differ (jhash vs siphash)" "the schemes are named"
	log_has "MERGE rw" "merge uses a read-write fd"
	frefused "estimate across hash schemes" "cannot compare 'm1' with 'm2'" estimate m1 m2
	err_has "hash schemes differ (jhash vs siphash)" "estimate names the schemes"
	log_has "COMPARE rw" "estimate uses a read-write fd"
	fexpect 0 "create a filter of other bits" create m3 --bits 2Ki --hashes 3
	frefused "merge of filters of different sizes" "bits differ (1024 vs 2048)" merge m1 m3
	FAKEDEV_KEYS=1 frefused "remove on a plain filter" "filter 'm1' is not a counting filter" remove m1 x
	fexpect 0 "estimate of alike filters" estimate h1 h5
}

# round_trip IMAGE PLAIN SCHEME: load IMAGE, save it both ways, and check
# the uncompressed save is byte for byte PLAIN (the same filter, never
# compressed), and that the compressed one comes back the same.
round_trip() {
	local img=$1 plain=$2 scheme=$3 i=$4 hi=0,0

	# jhash has no high seed; SipHash's reaches IMPORT.
	[ "$scheme" = 2 ] && hi=f1e2d3c,4b5a6978
	flogs 0 "load $img" "IMPORT rw hash_scheme=$scheme seed_hi=$hi" load "rt$i" "$tmp/$img"
	flogs 0 "save it" "EXPORT ro" save "rt$i" "$tmp/rt.img"
	check "$img: saved again, it is byte for byte the image it came from" cmp -s "$tmp/rt.img" "$tmp/$plain"
	fexpect 0 "save it compressed" save "rt$i" "$tmp/rtz.img" --compress
	expect 0 "inspect the compressed save" -j inspect "$tmp/rtz.img"
	json_are "$img: the compressed save" hash_scheme="$scheme" compression=zlib
	fexpect 0 "load the compressed save" load "rtz$i" "$tmp/rtz.img"
	fexpect 0 "save that" save "rtz$i" "$tmp/rt2.img"
	check "$img: through a compressed image and back, the same image" cmp -s "$tmp/rt2.img" "$tmp/$plain"
}

fake_image_tests() {
	img vcp.img --counting --fill 30
	img sp.img --siphash --fill 20
	img scp.img --siphash --counting --fill 30
	round_trip v.img v.img 1 1
	round_trip vc.img vcp.img 1 2
	round_trip s.img sp.img 2 3
	round_trip sc.img scp.img 2 4
	round_trip p.img p.img 1 5
	fprints 0 "show a loaded SipHash filter" "hash scheme:    siphash (2)" show rt3
	FAKEDEV_FEATURES=0x3f fexpect 2 "load a SipHash image on a module without SipHash" load ns "$tmp/s.img"
	err_has "bloomctl: $tmp/s.img: hash scheme 2 (siphash), which the module does not support (it hashes with jhash only)" "the refusal names the file and the scheme"
	lacks log IMPORT "nothing was sent to IMPORT"
	FAKEDEV_FEATURES=0x3f fexpect 0 "load a jhash image on a module without SipHash" load ns "$tmp/v.img"
	FAKEDEV_SCHEME=2 fexpect 0 "load a jhash image on a module defaulting to SipHash" load ns2 "$tmp/v.img"
	fprints 0 "load --replace" "replaced 'ns2'" load ns2 "$tmp/vfull.img" --replace
	frefused "load onto an existing name" "filter 'ns2' already exists" load ns2 "$tmp/v.img"

	echo 1048576 >"$tmp/mfb"
	FAKEDEV_SYSFS=$tmp/mfb fexpect 2 "load above the module's max_filter_bytes" load big "$tmp/b64.img"
	err_has "payload of 67108864 bytes is over the limit of 1048576 bytes (the module's max_filter_bytes parameter)" "the module's limit bounds a load"
	FAKEDEV_SYSFS=$tmp/mfb fexpect 2 "load --max-payload above max_filter_bytes" load big "$tmp/b64.img" --max-payload 1Gi
	err_has "(the module's max_filter_bytes parameter)" "a load never reads more than the module takes"
	FAKEDEV_SYSFS=$tmp/mfb fexpect 2 "inspect with the module's limit" inspect "$tmp/b64.img"
	err_has "over the limit of 1048576 bytes (the module's max_filter_bytes parameter)" "inspect defaults to the module's limit"
	FAKEDEV_SYSFS=$tmp/mfb fexpect 0 "inspect --max-payload above it" inspect "$tmp/b64.img" --max-payload 1Gi
}

# The blocked layout: sizing, the request, show, images, merge, refusals.
fake_blocked_tests() {
	local bits

	expect 0 "calc --layout blocked" -j calc --capacity 1000000 --fpr 0.01 --layout blocked
	# Whole 512-bit blocks and fewer hashes; the plain layout's bits to compare.
	json_are "calc JSON, blocked" layout=blocked bits=9918464 hashes=6 plain_bits=9585059
	expect 0 "calc text" calc --capacity 1000000 --fpr 0.01 --layout blocked
	out_has "plain layout:    9585059 bits (blocked takes +3.48%)" "calc text: the extra bits of blocking"
	expect 2 "--layout bogus" calc --capacity 10 --fpr 0.01 --layout bogus
	err_has "--layout 'bogus': must be plain or blocked" "...is refused by name"
	flogs 0 "create --layout blocked" "flags=0x8" -j create b1 --capacity 1000000 --fpr 0.01 --layout blocked
	json_are "create JSON: the module's blocked sizing, as calc says" bits=9918464 layout=blocked
	fprints 0 "show it" "layout:         blocked" show b1
	fexpect 0 "create a blocked counting filter" -j create b2 --capacity 1000 --fpr 0.01 --layout blocked --counting
	bits=$(json_get bits)
	check "a blocked counting filter has whole 128-counter blocks ($bits)" [ $((bits % 128)) = 0 ]
	fexpect 2 "--bits not a whole number of blocks" create b3 --bits 1000 --hashes 3 --layout blocked
	err_has "--bits '1000': a blocked filter has whole 64-byte blocks of 512 bits: try 1024" "...says why and what would do"
	fexpect 0 "--bits 1024 --layout blocked" create b3 --bits 1024 --hashes 3 --layout blocked
	fexpect 0 "--bits 384 --layout blocked --counting" create b4 --bits 384 --hashes 3 --layout blocked --counting
	frefused "--like with --layout" "--layout cannot be given with it" create b5 --like b1 --layout blocked
	fexpect 0 "create --like a blocked filter" -j create b5 --like b1
	json_is layout blocked "--like keeps the layout"
	FAKEDEV_FEATURES=0x1ff fexpect 2 "--layout blocked on a module without it" create b6 --capacity 10 --fpr 0.01 --layout blocked
	err_has "--layout blocked: the module does not support it" "...says the module lacks it"
	fexpect 0 "create a plain filter of the same bits" create p6 --bits 1024 --hashes 3
	# What BPF programs may do with a filter.
	fexpect 0 "create --bpf write" -j create bp1 --capacity 10 --fpr 0.01 --bpf write
	json_is bpf write "create -j: the BPF access"
	fexpect 0 "create --bpf read" create bp2 --capacity 10 --fpr 0.01 --bpf read
	fprints 0 "show it" "bpf:            read" show bp2
	fexpect 0 "show a filter created without --bpf" -j show p6
	json_is bpf none "...none by default"
	fexpect 2 "--bpf of another word" create bp3 --capacity 10 --fpr 0.01 --bpf all
	err_has "--bpf 'all': must be none, read or write" "...names the words"
	FAKEDEV_FEATURES=0x3ff fexpect 2 "--bpf on a module without per-filter access" create bp3 --capacity 10 --fpr 0.01 --bpf read
	err_has "filter 'bp3': --bpf read: the module does not support it" "...says the module lacks it"
	fexpect 0 "--like with --bpf" -j create bp4 --like bp1 --bpf read
	json_is bpf read "...the access is the call's, not the model's"
	fexpect 0 "save a filter open to BPF writes" save bp1 "$tmp/bp1.img"
	expect 0 "inspect its image" -j inspect "$tmp/bp1.img"
	json_is bpf write "the image carries the BPF access"
	fexpect 0 "load it under another name" load bp5 "$tmp/bp1.img"
	fexpect 0 "show that" -j show bp5
	json_is bpf write "...which takes the image's access"
	fexpect 0 "load it over a filter open to BPF reads" load bp2 "$tmp/bp1.img" --replace
	fexpect 0 "show that" -j show bp2
	json_is bpf read "...which keeps its own"
	frefused "merge blocked into plain" "layouts differ (plain vs blocked)" merge p6 b3
	fexpect 0 "add a key to the blocked filter" add b1 k1
	fexpect 0 "save it" save b1 "$tmp/b1.img"
	expect 0 "inspect it" -j inspect "$tmp/b1.img"
	json_are "the image's layout is 1, blocked, kept out of its flags" layout=1 flags=0
	prints 0 "inspect text" "layout:         1 (blocked)" inspect "$tmp/b1.img"
	flogs 0 "load it" "IMPORT" -j load b1b "$tmp/b1.img"
	fexpect 0 "show the loaded filter" -j show b1b
	json_is layout blocked "the loaded filter is blocked"
	fexpect 0 "save it again" save b1b "$tmp/b1b.img"
	check "saved again, a blocked image is byte for byte the same" cmp -s "$tmp/b1.img" "$tmp/b1b.img"
}

fake_window_tests() {
	fexpect 0 "create a windowed filter" create w1 --capacity 1000 --fpr 0.01 --window 90s --generations 3 --rotate-at-fill
	log_has "CREATE rw hash_scheme=0 window_ms=90000 generations=3 flags=0x4" "CREATE gets the window, G and the flag"
	out_has "3 generations of" "create reports G"
	out_has "window 90000 ms" "create reports the window"
	fexpect 0 "create with the default G" create w2 --capacity 1000 --fpr 0.01 --window 500ms
	log_has "window_ms=500 generations=4 flags=0x0" "G is 4 by default"
	fexpect 0 "create a manual-only window" -j create w3 --bits 4096 --hashes 3 --window 0 --generations 2
	log_has "window_ms=0 generations=2" "--window 0 sends a window of 0"
	json_are "create JSON: the generations, and the memory of all" generations=2 memory_bytes=1024
	fexpect 0 "create 2h" create w4 --capacity 10 --fpr 0.01 --window 2h --generations 16
	log_has "window_ms=7200000 generations=16" "2h is 7200000 ms"
	flogs 0 "create 10m" "window_ms=600000" create w5 --capacity 10 --fpr 0.01 --window 10m
	FAKEDEV_FEATURES=0x7f fexpect 2 "--window on a module without windows" create w6 --capacity 10 --fpr 0.01 --window 1s
	err_has "does not support windowed filters" "...says the module has no windows"
	lacks log CREATE "...and sends no CREATE"
	flogs 0 "create a plain filter" "window_ms=0 generations=0 flags=0x0" create p1 --bits 1024 --hashes 3
	fprints 0 "show a windowed filter" "generations:    3" show w1
	out_has "window:         90000 ms" "show: window"
	out_has "rotations:      0" "show: rotations"
	out_has "newest age:" "show: newest age"
	fexpect 0 "show a plain filter" show p1
	lacks out 'generations|window|rotations' "plain show prints no window"
	flogs 0 "rotate" "ROTATE rw" rotate w1
	fexpect 0 "-j show after a rotation" -j show w1
	json_are "show JSON" window_ms=90000 generations=3 rotations=1
	[ "$(json_get newest_age_ms)" -lt 60000 ] 2>/dev/null
	result $? "show JSON: newest_age_ms, since the rotation just before"
	fexpect 0 "-j show a plain filter" -j show p1
	json_is generations 0 "show JSON: a plain filter has 0 generations"
	frefused "rotate a plain filter" "filter 'p1' is not windowed" rotate p1
	frefused "rotate a missing filter" "filter 'nope'" rotate nope
	flogs 0 "create --like a windowed filter" "window_ms=0 generations=0 flags=0x2" create w7 --like w1

	# Images: version 3, every generation, the window, the flag and
	# when the newest generation began.
	fexpect 0 "save a windowed filter" save w1 "$tmp/w1.img"
	expect 0 "inspect it" -j inspect "$tmp/w1.img"
	json_are "a windowed image" format_version=3 generations=3 window_ms=90000 flags=4
	# 11872 bits: 1488 bytes a generation, padded to 8.
	json_is payload_bytes 4464 "the payload is G generations"
	json_is file_bytes "$(( 112 + $(json_get payload_bytes) ))" "a version-3 header is 112 bytes"
	prints 0 "inspect text" "generations:    3" inspect "$tmp/w1.img"
	fprints 0 "load it" "3 generations" load w1b "$tmp/w1.img"
	fexpect 0 "show the loaded filter" -j show w1b
	json_are "the loaded filter" generations=3 window_ms=90000 flags=4
	frefused "merge windowed filters" "windowed filters are not merged or compared" merge w1 w1b
	fexpect 0 "save it again" save w1b "$tmp/w1b.img"
	same_image "$tmp/w1.img" "$tmp/w1b.img"
	result $? "saved again, a windowed image is the same but for when it was saved"
	fexpect 0 "save compressed" save w1 "$tmp/w1z.img" --compress
	fexpect 0 "load the compressed one" load w1z "$tmp/w1z.img"
	fexpect 0 "save a plain filter" save p1 "$tmp/p1.img"
	expect 0 "inspect it" -j inspect "$tmp/p1.img"
	json_are "a plain filter's image: format version 1, a 96-byte header" format_version=1 file_bytes=224
	cp "$tmp/w1.img" "$tmp/wbad.img"
	printf '\005' | dd of="$tmp/wbad.img" bs=1 seek=96 conv=notrunc 2>/dev/null
	fexpect 2 "load an image whose generation count does not match" load wbad "$tmp/wbad.img"
	err_has "the generation count does not match the payload" "...says so"
	lacks log IMPORT "...and sends nothing to IMPORT"
	cp "$tmp/w1.img" "$tmp/wbad.img"
	printf '\001' | dd of="$tmp/wbad.img" bs=1 seek=96 conv=notrunc 2>/dev/null
	expect 2 "inspect an image of 1 generation" inspect "$tmp/wbad.img"
	err_has "generations 1 out of range (a windowed filter has 2 to 16)" "...G out of range"
	head -c 108 "$tmp/w1.img" >"$tmp/wbad.img"
	expect 2 "inspect a truncated version-3 header" inspect "$tmp/wbad.img"
	err_has "truncated: a version 3 header needs 112 bytes, file has 108" "...truncated header"
	cp "$tmp/p1.img" "$tmp/wbad.img"
	printf '\002' | dd of="$tmp/wbad.img" bs=1 seek=8 conv=notrunc 2>/dev/null
	expect 2 "a version-1 image relabelled version 2" inspect "$tmp/wbad.img"
	FAKEDEV_FEATURES=0x7f fexpect 2 "load a windowed image on a module without windows" load wno "$tmp/w1.img"
	err_has "a windowed filter (3 generations), which the module does not support" "...says the module has no windows"
}

# A file and its state: type, owner, mode, size and contents' hash.
fstate() {
	stat -c '%F %u %a %s' "$1" 2>/dev/null
	[ -f "$1" ] && [ ! -L "$1" ] && cksum <"$1"
}

leftovers() {
	local left

	left=$(find "$tmp/sv" -name '.bloomctl-save.*' | wc -l)
	check "$1: no temporary file left in the directory ($left)" [ "$left" = 0 ]
}

fake_save_tests() {
	local old u f

	mkdir "$tmp/sv"
	fexpect 0 "create a filter to save" create sv1 --bits 1Ki --hashes 3 --hash siphash
	old=$(umask)
	for u in 000 022 077 277; do
		umask "$u"
		fake save sv1 "$tmp/sv/u$u.img"
		umask "$old"
		[ "$rc" = 0 ] && [ "$(stat -c %a "$tmp/sv/u$u.img")" = 600 ]
		result $? "save under umask $u: the image is mode 0600"
	done
	expect 0 "the saved image is valid" inspect "$tmp/sv/u022.img"

	# What others may plant in a shared directory.
	echo planted >"$tmp/sv/p.img.tmp"
	[ "$(id -u)" = 0 ] && chown 65534 "$tmp/sv/p.img.tmp"
	before=$(fstate "$tmp/sv/p.img.tmp")
	fexpect 0 "save beside a FILE.tmp of someone else" save sv1 "$tmp/sv/p.img"
	check "the planted FILE.tmp is neither used nor touched" [ "$(fstate "$tmp/sv/p.img.tmp")" = "$before" ]
	check "the image is ours and 0600" [ "$(stat -c '%u %a' "$tmp/sv/p.img")" = "$(id -u) 600" ]
	mkfifo "$tmp/sv/f.img.tmp"
	fake save sv1 "$tmp/sv/f.img"
	[ "$rc" = 0 ] && [ -p "$tmp/sv/f.img.tmp" ]
	result $? "a FIFO at FILE.tmp neither hangs the save nor is touched (exit $rc)"

	echo target >"$tmp/sv/target"
	ln -s target "$tmp/sv/l.img"
	before=$(fstate "$tmp/sv/target")
	fexpect 2 "save onto a symlink" save sv1 "$tmp/sv/l.img"
	err_has "$tmp/sv/l.img: is a symbolic link: refusing to write through or replace it" "the symlink is refused, and named"
	[ "$(fstate "$tmp/sv/target")" = "$before" ] && [ -L "$tmp/sv/l.img" ]
	result $? "the symlink and its target are untouched"
	ln -s nowhere "$tmp/sv/d.img"
	fexpect 2 "save onto a dangling symlink" save sv1 "$tmp/sv/d.img"
	check "a dangling symlink's target is not created" [ ! -e "$tmp/sv/nowhere" ]
	mkfifo "$tmp/sv/fifo.img"
	fake save sv1 "$tmp/sv/fifo.img"
	[ "$rc" = 2 ] && [ -p "$tmp/sv/fifo.img" ]
	result $? "save onto a FIFO is refused without hanging (exit $rc)"
	err_has "exists and is not a regular file" "the FIFO refusal says why"
	mkdir "$tmp/sv/dir.img"
	frefused "save onto a directory" "exists and is not a regular file" save sv1 "$tmp/sv/dir.img"
	if [ "$(id -u)" = 0 ]; then
		echo theirs >"$tmp/sv/o.img"
		chown 65534 "$tmp/sv/o.img"
		before=$(fstate "$tmp/sv/o.img")
		fexpect 2 "save onto another user's file" save sv1 "$tmp/sv/o.img"
		err_has "$tmp/sv/o.img: belongs to uid 65534, not to uid 0: refusing to replace it" "the owner is named"
		check "their file is untouched" [ "$(fstate "$tmp/sv/o.img")" = "$before" ]
	fi
	fexpect 0 "save a first time" save sv1 "$tmp/sv/e.img"
	ino=$(stat -c %i "$tmp/sv/e.img")
	fexpect 0 "save over our own image" save sv1 "$tmp/sv/e.img"
	check "the old image is replaced by a new file (renamed over it)" [ "$(stat -c %i "$tmp/sv/e.img")" != "$ino" ]
	leftovers "after saves and refusals"

	if command -v strace >/dev/null 2>&1; then
		strace -f -e trace=openat,linkat,renameat,renameat2 -o "$tmp/strace" \
			"${fakeenv[@]}" "$BLOOMCTL" -d "$tmp/fakedev" save sv1 "$tmp/sv/t.img" >/dev/null 2>&1
		grep -q 'O_TMPFILE' "$tmp/strace" && grep -q 'linkat(.*"/proc/self/fd/' "$tmp/strace" &&
			grep -q 'rename.*"t.img"' "$tmp/strace"
		result $? "save writes an O_TMPFILE, links it and renames it into place"
		lacks strace 't\.img\.tmp' "save never opens FILE.tmp"
	fi
	FAKEDEV_NO_TMPFILE=1 fexpect 0 "save where O_TMPFILE is unsupported" save sv1 "$tmp/sv/n.img"
	check "the fallback's image is 0600" [ "$(stat -c %a "$tmp/sv/n.img")" = 600 ]
	expect 0 "the fallback's image is valid" inspect "$tmp/sv/n.img"
	FAKEDEV_NO_LINK=1 fexpect 0 "save where an unnamed file cannot be linked" save sv1 "$tmp/sv/k.img"
	expect 0 "that image is valid" inspect "$tmp/sv/k.img"
	before=$(fstate "$tmp/sv/e.img")
	FAKEDEV_NO_RENAME=1 fexpect 2 "save whose rename fails" save sv1 "$tmp/sv/e.img"
	err_has "$tmp/sv/e.img: cannot rename the new file over it" "the rename failure is named"
	check "the old image survives a failed save" [ "$(fstate "$tmp/sv/e.img")" = "$before" ]
	FAKEDEV_NO_RENAME=1 FAKEDEV_NO_TMPFILE=1 fexpect 2 "fallback save whose rename fails" save sv1 "$tmp/sv/e.img"
	leftovers "after failed saves"
	FAKEDEV_FAIL=EXPORT:$EIO fexpect 2 "save whose export fails" save sv1 "$tmp/sv/x.img"
	check "a failed export creates no file" [ ! -e "$tmp/sv/x.img" ]
	fexpect 2 "save into a missing directory" save sv1 "$tmp/sv/none/x.img"
	err_has "$tmp/sv/none/x.img: directory $tmp/sv/none: No such file or directory" "the directory is named"
	frefused "save to a directory path" "not a file name" save sv1 "$tmp/sv/"
	"${fakeenv[@]}" "$BLOOMCTL" -d "$tmp/fakedev" save sv1 - >"$tmp/sv/stdout.img" 2>/dev/null
	expect 0 "save to stdout gives a valid image" inspect "$tmp/sv/stdout.img"
	(cd "$tmp/sv" && "${fakeenv[@]}" "$BLOOMCTL" -d "$tmp/fakedev" save sv1 rel.img >/dev/null 2>&1)
	check "save to a relative name, in the current directory" [ -f "$tmp/sv/rel.img" ]
	leftovers "at the end"
}

# flowhex FAMILY FIELDS VALUES...: the KBLOOM_FLOW_* key of a flow, in hex,
# computed here with Python's ipaddress, not by bloomctl: FAMILY 4 or 6,
# FIELDS the bit mask, then the values of the fields present, in layout
# order (saddr/PREFIX, daddr/PREFIX, proto, sport, dport).
flowhex() {
	python3 - "$@" <<'PY'
import ipaddress, sys
fam, fields, vals = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
out = bytes([fam, fields])
for bit in range(5):
    if not fields & (1 << bit):
        continue
    v = vals.pop(0)
    if bit < 2:
        net = ipaddress.ip_network(v, strict=False)
        out += net.network_address.packed
    elif bit == 2:
        out += bytes([int(v)])
    else:
        out += int(v).to_bytes(2, "big")
print(out.hex())
PY
}

fake_flow_tests() {
	fexpect 0 "create fl for the flow tests" create fl --capacity 1000 --fpr 0.01
	fexpect 0 "add --key saddr,dport --flow" add fl --key saddr,dport --flow 10.0.0.1,53
	log_has "KEY $(flowhex 4 17 10.0.0.1/32 53)" "--flow builds the layout's bytes"
	log_has "ADD_BATCH rw name=" "flows go in a batch"
	log_has "OPEN rw" "keys go through a handle (KBLOOM_IOC_OPEN)"
	check "on the handle, with no name" grep -qx "ADD_BATCH rw name=" "$tmp/log"
	FAKEDEV_FEATURES=0xff fexpect 0 "a module without handles" add fl --key saddr --flow 10.0.0.1
	lacks log OPEN "no OPEN without KBLOOM_FEATURE_HANDLE"
	check "keys go by name then" grep -qx "ADD_BATCH rw name=fl" "$tmp/log"
	frefused "add to a missing filter" "filter 'nosuch': no such filter" add nosuch --key saddr --flow 10.0.0.1
	lacks log KEY "nothing sent to a missing filter"
	frefused "query a missing filter" "filter 'nosuch': no such filter" query nosuch x
	fexpect 0 "--key in another order" add fl --key dport,saddr --flow 53,10.0.0.1
	log_has "KEY $(flowhex 4 17 10.0.0.1/32 53)" "the fields' order in --key does not change the key"
	fexpect 0 "the five fields, a protocol by name" add fl --key saddr,daddr,proto,sport,dport \
		--flow 10.1.2.3,10.99.0.1,udp,1234,9
	log_has "KEY $(flowhex 4 31 10.1.2.3/32 10.99.0.1/32 17 1234 9)" "the 5-tuple key"
	flogs 0 "--src-prefix 24" "KEY $(flowhex 4 1 10.1.2.3/24)" add fl --key saddr --src-prefix 24 --flow 10.1.2.3
	fexpect 0 "--src-prefix 0" add fl --key saddr,proto --src-prefix 0 --flow 10.1.2.3,6
	log_has "KEY $(flowhex 4 5 0.0.0.0/0 6)" "prefix 0: the source is all zeros"
	flogs 0 "IPv6" "KEY $(flowhex 6 9 fd00::2/128 1234)" add fl --key saddr,sport --flow fd00::2,1234
	fexpect 0 "IPv6 --dst-prefix 64" add fl --key daddr --dst-prefix 64 --flow fd00:1:2:3:4:5:6:7
	log_has "KEY $(flowhex 6 2 fd00:1:2:3:4:5:6:7/64)" "the IPv6 destination masked to 64 bits"
	fexpect 0 "--dst-prefix 100 of IPv6 (not a byte boundary)" add fl --key daddr --dst-prefix 100 \
		--flow fd00:1:2:3:4:5:ffff:ffff
	log_has "KEY $(flowhex 6 2 fd00:1:2:3:4:5:ffff:ffff/100)" "the IPv6 destination masked to 100 bits"
	flogs 0 "no address: --family ipv6" "KEY 060406" add fl --key proto --family ipv6 --flow tcp
	flogs 0 "no address: IPv4 by default" "KEY 041001bb" add fl --key dport --flow 443
	printf '10.0.0.1,53\n10.0.0.2,53\n' >"$tmp/flows"
	fexpect 0 "flows from --file" add fl --key saddr,dport --file "$tmp/flows"
	check "one key per line" [ "$(grep -c '^KEY ' "$tmp/log")" = 2 ]
	log_has "KEY $(flowhex 4 17 10.0.0.2/32 53)" "the second line's key"
	fexpect 0 "flows as KEY arguments" add fl --key saddr,dport --flow 10.0.0.1,53 10.0.0.2,53
	check "--flow and arguments together" [ "$(grep -c '^KEY ' "$tmp/log")" = 2 ]
	fprints 1 "query --key prints each flow as typed" "10.0.0.1,53 no" query fl --key saddr,dport 10.0.0.1,53
	log_has "QUERY_BATCH ro" "query of flows on a read-only fd"
	fexpect 1 "-j query --key" -j query fl --key saddr --flow 10.0.0.9
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"][0]; sys.exit(r != {"key": "10.0.0.9", "result": "no"})' "$tmp/out"
	result $? "JSON: the flow as typed, with its answer"

	frefused "unknown field" "unknown field 'foo'" add fl --key saddr,foo --flow 10.0.0.1,1
	lacks log KEY "nothing sent after an unknown field"
	frefused "a field twice" "field 'saddr' twice" add fl --key saddr,saddr --flow 10.0.0.1,10.0.0.1
	frefused "an empty --key" "unknown field ''" add fl --key '' --flow 1
	frefused "too few values" "a flow has 2 comma-separated values" add fl --key saddr,dport --flow 10.0.0.1
	frefused "too many values" "a flow has 1 comma-separated value," add fl --key saddr --flow 10.0.0.1,53
	frefused "not an address" "'10.0.0.256' is not an IPv4 or IPv6 address" add fl --key saddr --flow 10.0.0.256
	fexpect 2 "IPv4 and IPv6 in one flow" add fl --key saddr,daddr --flow 10.0.0.1,fd00::1
	err_has "IPv4 and IPv6 addresses in one flow" "mixed families refused"
	fexpect 2 "--family against the address" add fl --key saddr --family ipv6 --flow 10.0.0.1
	err_has "an IPv4 flow, but --family ipv6" "the family conflict is explained"
	fexpect 2 "an IPv4 prefix over 32" add fl --key saddr --src-prefix 33 --flow 10.0.0.1
	err_has "a prefix of IPv4 addresses is 0 to 32" "the IPv4 prefix range"
	fexpect 2 "a prefix over 128" add fl --key saddr --src-prefix 129 --flow fd00::1
	err_has "--src-prefix: '129' is not a prefix length" "the prefix range"
	fexpect 2 "--src-prefix without saddr" add fl --key daddr --src-prefix 8 --flow 10.0.0.1
	err_has "--src-prefix needs saddr in --key" "as the iptables extension says"
	frefused "--flow without --key" "need --key FIELDS" add fl --flow 10.0.0.1
	frefused "--key with --hex" "--key and --hex are exclusive" add fl --hex --key saddr --flow 10.0.0.1
	frefused "a port of 65536" "'65536' is not a port" add fl --key dport --flow 65536
	frefused "a port for ICMP" "protocol 1 has no ports" add fl --key proto,dport --flow icmp,80
	frefused "an unknown protocol name" "'bogus' is not a protocol" add fl --key proto --flow bogus
	frefused "--family bogus" "--family: 'ipx' is not ipv4 or ipv6" add fl --key proto --family ipx --flow 6
	printf '10.0.0.1,53\nbad,53\n10.0.0.3,53\n' >"$tmp/flows"
	fexpect 2 "a bad flow on line 2" add fl --key saddr,dport --file "$tmp/flows"
	err_has "$tmp/flows: line 2: 'bad,53': 'bad' is not an IPv4 or IPv6 address" "the line and the value are named"
	check "the flow before the bad line was sent, none after" [ "$(grep -c '^KEY ' "$tmp/log")" = 1 ]
	printf '10.0.0.1\0junk\n' >"$tmp/flows"
	frefused "a flow with a NUL byte" "a flow has a NUL byte" add fl --key saddr --file "$tmp/flows"
	lacks log KEY "nothing sent for it"
	printf '\033[31mRED\n' >"$tmp/flows"
	fexpect 2 "a flow with a terminal escape" add fl --key saddr --file "$tmp/flows"
	lacks err "$(printf '\033')" "no raw escape byte reaches the terminal"
	err_has '\x1b[31mRED' "the escape shown as \\x1b"
	frefused "--key twice" "--key given twice" add fl --key saddr --key daddr --flow 10.0.0.1
	flogs 0 "protocol names in any case" "KEY 040406" add fl --key proto --flow TCP
	flogs 0 "--batch 1: the one-key ioctl" "ADD rw" add fl --batch 1 --key saddr,dport --flow 10.0.0.1,53
	log_has "KEY $(flowhex 4 17 10.0.0.1/32 53)" "the one-key path sends the same bytes"
	FAKEDEV_FAIL=DESTROY:$EBUSY fexpect 2 "destroy of a filter in use" destroy fl
	err_has "filter 'fl' is in use by iptables rules" "EBUSY from DESTROY says the filter is in use"
}

# in_sdmod COMMAND ARGS...: fake or fexpect, on a fake module of its own
# (state directory $tmp/sdmod); sd_fake and sd_expect say it shorter.
in_sdmod() {
	local saved=("${fakeenv[@]}")

	fakeenv+=("FAKEDEV_STATE=$tmp/sdmod")
	"$@"
	fakeenv=("${saved[@]}")
}

sd_fake() { in_sdmod fake "$@"; }
sd_expect() { in_sdmod fexpect "$@"; }
sd_refused() { in_sdmod frefused "$@"; }
sd_prints() { in_sdmod fprints "$@"; }
sd_logs() { in_sdmod flogs "$@"; }

# sd_empty: the module of in_sdmod, with no filter.
sd_empty() {
	rm -rf "$tmp/sdmod"
	mkdir "$tmp/sdmod"
}

# reimage FILE START_OFFSET_MS: a windowed image whose generation i has
# its first i + 1 bytes all ones (8 (i + 1) bits), and whose newest
# generation began START_OFFSET_MS from now (negative: in the past); the
# CRC is recomputed, by mkimage.py's own CRC32C.
reimage() {
	python3 - "$1" "$2" "$here" <<'PYEOF'
import struct, sys, time
sys.path.insert(0, sys.argv[3])
import mkimage
path, off = sys.argv[1], int(sys.argv[2])
b = bytearray(open(path, "rb").read())
g = struct.unpack_from("<I", b, 96)[0]
plen = struct.unpack_from("<Q", b, 72)[0]
gb = plen // g
body = bytearray(plen)
for i in range(g):
    body[i * gb:i * gb + i + 1] = b"\xff" * (i + 1)
b[112:] = body
struct.pack_into("<Q", b, 104, int(time.time() * 1000) + off)
b[68:72] = bytes(4)
struct.pack_into("<I", b, 68, mkimage.crc32c(bytes(b)))
open(path, "wb").write(b)
PYEOF
}

# bits_after_restore DESC WANT: restore $tmp/sdw into a fresh fake module,
# then the bits set in every generation of the restored w.
bits_after_restore() {
	sd_empty
	sd_expect 0 "$1: restore" restore "$tmp/sdw"
	cp "$tmp/log" "$tmp/restore.log"
	cp "$tmp/err" "$tmp/restore.err"
	sd_fake save w "$tmp/w-again.img"
	expect 0 "$1: inspect the restored filter" -j inspect "$tmp/w-again.img"
	json_is bits_set "$2" "$1: bits left"
}

fake_statedir_tests() {
	local ino sd=$tmp/sd before

	sd_empty
	sd_expect 0 "create a plain filter" create a --bits 1Ki --hashes 3
	sd_expect 0 "create a counting filter" create b --bits 1Ki --hashes 3 --counting
	sd_expect 0 "create a windowed filter" create w --bits 1Ki --hashes 3 --window 60s --generations 4
	sd_prints 0 "save --all to a new directory" "$sd: 3 saved, 0 unchanged, 0 removed" save --all "$sd"
	[ "$(stat -c %a "$sd")" = 700 ] && [ "$(stat -c %a "$sd/a.kbloom")" = 600 ] &&
		[ "$(stat -c %a "$sd/w.kbloom")" = 600 ]
	result $? "the directory is 0700, the images 0600"
	expect 0 "a saved image is valid" inspect "$sd/b.kbloom"
	ino=$(stat -c %i "$sd/a.kbloom")
	sd_prints 0 "save --all again" "$sd: 0 saved, 3 unchanged, 0 removed" save --all "$sd"
	check "an unchanged image is the same file" [ "$(stat -c %i "$sd/a.kbloom")" = "$ino" ]

	img sdfill.img --bits 1024 --hashes 3 --fill 40
	sd_expect 0 "change a filter (load --replace)" load --replace a "$tmp/sdfill.img"
	before=$(fstate "$sd/a.kbloom")
	FAKEDEV_NO_RENAME=1 sd_expect 2 "save --all when the image cannot be renamed into place" save --all "$sd"
	err_has "$sd/a.kbloom: cannot rename the new file over it" "the failing image is named"
	out_has "some failed" "the summary says some failed"
	check "the previous image of a stays, whole" [ "$(fstate "$sd/a.kbloom")" = "$before" ]
	check "no temporary file left" [ "$(find "$sd" -name '.bloomctl-save.*' | wc -l)" = 0 ]
	sd_expect 0 "-j save --all" -j save --all "$sd"
	json_ok "save --all JSON is valid"
	json_are "JSON: the changed filter saved, the others unchanged" saved=1 unchanged=2

	echo notes >"$sd/README"
	ln -s /etc/hostname "$sd/x.kbloom"
	sd_expect 0 "destroy a filter" destroy b
	FAKEDEV_FAIL=EXPORT:$EIO sd_expect 2 "save --all when EXPORT fails" save --all "$sd"
	check "an incomplete save removes no image" [ -f "$sd/b.kbloom" ]
	sd_prints 0 "save --all after a destroy" "$sd: 0 saved, 2 unchanged, 1 removed" save --all "$sd"
	[ ! -e "$sd/b.kbloom" ] && [ -f "$sd/README" ] && [ -L "$sd/x.kbloom" ]
	result $? "only its image: other files and symlinks stay"
	rm "$sd/x.kbloom"

	sd_empty
	sd_prints 0 "restore into a module without filters" "loaded 'a' from $sd/a.kbloom" restore "$sd"
	out_has "loaded 'w' from $sd/w.kbloom: 4 generations" "restore loads w"
	sd_fake save a "$tmp/a-again.img"
	check "the restored filter is the saved one, byte for byte" cmp -s "$tmp/a-again.img" "$sd/a.kbloom"
	sd_prints 0 "restore again" "kept 'a': it exists" restore "$sd"
	sd_prints 0 "restore --replace" "replaced 'a' from $sd/a.kbloom" restore --replace "$sd"
	head -c 50 "$sd/a.kbloom" >"$sd/c.kbloom"
	sd_empty
	sd_refused "restore with a truncated image" "$sd/c.kbloom: truncated" -j restore "$sd"
	err_has "1 of 3 images not restored" "the failures are counted"
	json_ok "restore JSON is valid"
	sd_expect 0 "the others are restored all the same: a" show a
	sd_expect 0 "...and w" show w
	rm "$sd/c.kbloom"
	sd_refused "restore from a missing directory" "$tmp/nowhere: No such file or directory" restore "$tmp/nowhere"

	# Windows across a downtime: W 60 s, 4 generations of 15 s, of
	# 8, 16, 24 and 32 bits newest first.
	mkdir "$tmp/sdw"
	cp "$sd/w.kbloom" "$tmp/sdw/w.kbloom"
	reimage "$tmp/sdw/w.kbloom" -1000
	bits_after_restore "saved 1 s ago" 80
	# The age grows by the time taken from the reimage to the restore,
	# which a loaded machine makes longer: it is measured, and allowed.
	t0=$(date +%s%3N)
	reimage "$tmp/sdw/w.kbloom" -35000
	bits_after_restore "saved 35 s ago" 24
	late=$(($(date +%s%3N) - t0))
	age=$(sed -n 's/.*age_ms=\([0-9]*\)$/\1/p' "$tmp/restore.log" | tail -n 1)
	[ -n "$age" ] && [ "$age" -ge 4900 ] && [ "$age" -le $((5100 + late)) ]
	result $? "35 s: two rotations, and the newest is 5 s into its period (age_ms=${age:-none}, ${late} ms to restore)"
	reimage "$tmp/sdw/w.kbloom" -61000
	bits_after_restore "saved 61 s ago, more than W" 0
	reimage "$tmp/sdw/w.kbloom" 100000
	bits_after_restore "saved in the future by this clock" 80
	grep -qE "saved (9[7-9]\.[0-9]|100\.0) s in the future by this clock" "$tmp/restore.err"
	result $? "a clock behind the save is said"
	reimage "$tmp/sdw/w.kbloom" -35000
	sd_empty
	FAKEDEV_FEATURES=0x7ff sd_logs 0 "restore on a module without image ages" "age_ms=0" restore "$tmp/sdw"
}

fake_batch_tests() {
	sd_empty
	cat >"$tmp/filters.conf" <<'EOF'
# the filters of this host
create allow --capacity 1000 --fpr 0.001 --exist-ok   # the allow-list
create "flows" --capacity 1000 --fpr 0.01 --window 60s --exist-ok

add allow 'a b' "c\"d" e\ f
create broken --capacity 1000
create after --bits 64 --hashes 1 --exist-ok
EOF
	sd_expect 2 "-batch stops at a failing line" -batch "$tmp/filters.conf"
	err_has "$tmp/filters.conf:6: --capacity needs --fpr" "the error names FILE:LINE"
	err_has "$tmp/filters.conf:6: stopped at this line" "...and says it stopped there"
	log_has "KEY 612062" "quoted words: 'a b'"
	log_has "KEY 632264" "escaped quotes: \"c\\\"d\""
	log_has "KEY 652066" "escaped blanks: e\\ f"
	sd_expect 2 "nothing after the failing line ran" show after
	sd_expect 2 "-batch -force runs every line, and still fails" -batch "$tmp/filters.conf" -force
	out_has "exists: 'allow', as asked" "a second run finds the filters as declared"
	sd_expect 0 "...and the line after the error ran" show after
	sd_expect 2 "--batch FILE --force, the long spellings" --batch "$tmp/filters.conf" --force
	err_has "$tmp/filters.conf:6: --capacity needs --fpr" "...fail at the same line"
	sed -i '/broken/d' "$tmp/filters.conf"
	sd_expect 0 "a batch without errors" -b "$tmp/filters.conf"
	sd_fake -j -batch - <"$tmp/filters.conf"
	check "-j -batch - reads stdin (exit $rc)" [ "$rc" = 0 ]
	[ "$(python3 -c 'import json, sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l).get("existed")))' "$tmp/out")" = 3 ]
	result $? "one JSON document a line, each create saying it existed"
	sd_refused "a batch on stdin gives no stdin to its lines" "stdin:1: no keys: stdin is the batch" \
		-batch - <<<'add allow'
	sd_refused "an unterminated quote is an error of its line" 'stdin:1: unterminated "' \
		-batch - <<<'query allow "open'
	sd_refused "an unknown subcommand names its line" "stdin:1: unknown subcommand 'frobnicate'" \
		-batch - <<<'frobnicate'
	sd_fake -batch - <<<'query allow nothere'
	check "a negative answer is exit 1, not an error (exit $rc)" [ "$rc" = 1 ]
	sd_expect 2 "-batch with a subcommand too" -batch "$tmp/filters.conf" list
	sd_expect 2 "-force without -batch" -force list
	sd_refused "-batch of a missing file" "$tmp/nowhere.conf: No such file or directory" -batch "$tmp/nowhere.conf"

	# --exist-ok compares the shape with what exists.
	sd_expect 2 "--exist-ok, another capacity" create allow --capacity 2000 --fpr 0.001 --exist-ok
	err_has "filter 'allow' exists with another shape: capacity 1000 (asked 2000)" "...names the difference"
	sd_expect 2 "--exist-ok, a window where there is none" create allow --capacity 1000 --fpr 0.001 --window 1m --exist-ok
	err_has "window_ms 0 (asked 60000), generations 0 (asked 4)" "...names both differences"
	sd_expect 2 "--exist-ok, another BPF access" create allow --capacity 1000 --fpr 0.001 --bpf read --exist-ok
	err_has "flags 0 (asked 16)" "...the access counts"
	sd_expect 2 "--exist-ok, another hash scheme" create after --bits 64 --hashes 1 --hash siphash --exist-ok
	err_has "hash scheme 1 (asked 2)" "...an explicit scheme counts"
	sd_expect 0 "--exist-ok, no scheme asked: any" create after --bits 64 --hashes 1 --exist-ok
	sd_expect 0 "--exist-ok with --like, made" create twin --like allow --exist-ok
	sd_expect 0 "--exist-ok with --like, existing" create twin --like allow --exist-ok
	sd_expect 2 "create without --exist-ok of an existing filter" create allow --capacity 1000 --fpr 0.001
}

fake_stats_tests() {
	sd_empty
	sd_expect 0 "create a sized filter" create allow --capacity 1000 --fpr 0.001
	sd_expect 0 "create a windowed counting filter" create w --capacity 1000 --fpr 0.01 --window 1m --counting
	sd_expect 0 "create a filter by bits and hashes" create b --bits 1024 --hashes 3
	sd_prints 0 "stats" "EST_KEYS" stats
	sd_expect 0 "stats --format prometheus" stats --format prometheus
	if command -v promtool >/dev/null; then
		promtool check metrics <"$tmp/out" >"$tmp/promtool.out" 2>&1
		result $? "promtool check metrics accepts the output$(sed 's/^/; /' "$tmp/promtool.out" | tr -d '\n')"
	else
		result 1 "promtool check metrics (no promtool: apt-get install prometheus)"
	fi
	out_has "kbloom_filters 3" "the number of filters"
	out_has 'kbloom_filter_positions{filter="b"} 1024' "a filter's positions"
	out_has 'kbloom_filter_capacity_keys{filter="allow"} 1000' "its design capacity"
	out_has 'kbloom_filter_false_positive_target_ratio{filter="allow"} 0.001' "its target rate"
	out_has 'kbloom_filter_false_positive_target_ratio{filter="b"} NaN' "no target: NaN"
	out_has 'kbloom_filter_window_seconds{filter="w"} 60' "a window in seconds"
	out_has 'kbloom_filter_info{filter="w",counting="yes",layout="plain",hash="jhash",bpf="none"} 1' "the kind, as labels"
	out_has '# TYPE kbloom_filter_adds_total counter' "adds are a counter"
	lacks out 'kbloom_filter_window_seconds\{filter="b"\}' "no window series for a plain filter"
	mkdir "$tmp/textfile"
	echo old >"$tmp/textfile/kbloom.prom"
	sd_expect 0 "stats --output FILE" stats --format prometheus --output "$tmp/textfile/kbloom.prom"
	[ ! -s "$tmp/out" ] && [ "$(stat -c %a "$tmp/textfile/kbloom.prom")" = 644 ] &&
		grep -q '^kbloom_filters 3$' "$tmp/textfile/kbloom.prom"
	result $? "the file replaced, mode 0644 for the exporter to read, nothing on stdout"
	check "no temporary file left beside it" [ "$(find "$tmp/textfile" -name '.bloomctl-save.*' | wc -l)" = 0 ]
	sd_expect 2 "stats --output into a missing directory" stats --format prometheus --output "$tmp/nowhere/kbloom.prom"
	err_has "$tmp/nowhere/kbloom.prom: directory $tmp/nowhere" "...names it"
	sd_refused "stats --format of no format" "--format 'xml': must be text or prometheus" stats --format xml
	sd_expect 0 "-j stats" -j stats
	json_ok "stats JSON is valid"
	sd_expect 2 "-j stats --format prometheus" -j stats --format prometheus
}

# What the review of the state directory and batches found, kept found.
fake_statedir_safety_tests() {
	local sd=$tmp/sds

	rm -rf "$sd"
	sd_empty
	sd_expect 0 "safety: create a" create a --bits 1Ki --hashes 3
	sd_expect 0 "safety: create b" create b --bits 1Ki --hashes 3
	sd_expect 0 "safety: save --all" save --all "$sd"
	# A reloaded module: another device node, no filters.
	sd_empty
	mv "$tmp/fakedev" "$tmp/fakedev.old"
	: >"$tmp/fakedev"
	sd_expect 0 "safety: save --all from a reloaded, empty module" save --all "$sd"
	[ -f "$sd/a.kbloom" ] && [ -f "$sd/b.kbloom" ]
	result $? "safety: ...removes no image of a filter it never held"
	rm -f "$tmp/fakedev.old"
	# A filter whose image failed to restore is not removed either.
	cp "$sd/a.kbloom" "$sd/c.kbloom"
	printf 'X' | dd of="$sd/c.kbloom" bs=1 seek=200 conv=notrunc 2>/dev/null
	sd_expect 2 "safety: restore with a corrupt image" restore "$sd"
	sd_expect 0 "safety: save --all after it" save --all "$sd"
	sd_expect 0 "safety: save --all again" save --all "$sd"
	check "safety: the image that did not restore is kept" [ -f "$sd/c.kbloom" ]
	sd_expect 0 "safety: destroy a" destroy a
	sd_expect 0 "safety: save --all after the destroy" save --all "$sd"
	[ ! -e "$sd/a.kbloom" ] && [ -f "$sd/b.kbloom" ]
	result $? "safety: a filter destroyed since the last save is removed"
	# A damaged or opened image is rewritten, not kept as unchanged.
	printf '\000\000\000\000' | dd of="$sd/b.kbloom" bs=1 seek=68 conv=notrunc 2>/dev/null
	sd_expect 0 "safety: save --all over a bad CRC" save --all "$sd"
	expect 0 "safety: ...the image is whole again" inspect "$sd/b.kbloom"
	chmod 644 "$sd/b.kbloom"
	sd_expect 0 "safety: save --all over a 0644 image" save --all "$sd"
	check "safety: ...the image is 0600 again" [ "$(stat -c %a "$sd/b.kbloom")" = 600 ]

	printf 'destroy b\000junk\n' >"$tmp/nul.batch"
	sd_refused "safety: a batch line with a NUL byte" "nul.batch:1: a NUL byte in the line" -batch "$tmp/nul.batch"
	sd_expect 0 "safety: ...and ran nothing" show b
	sd_refused "safety: load - in a batch read from stdin is refused" \
		"stdin:1: stdin is the batch: give the image a file name" -batch - <<<'load x -'
	printf 'show nosuch\nlist\nlist -j\nlist\n' >"$tmp/json.batch"
	sd_fake -j -batch "$tmp/json.batch" -force
	check "safety: -j: each line its own JSON document, after an error too" [ "$(grep -c '^{' "$tmp/out")" = 4 ]
	sd_fake -batch "$tmp/json.batch" -force
	check "safety: a line's -j is its own, not the next line's" [ "$(grep -c '^{' "$tmp/out")" = 1 ]
}

if $have_fake; then
	fake_statedir_safety_tests
	fake_stats_tests
	fake_statedir_tests
	fake_batch_tests
	fake_flow_tests
	fake_version_tests
	fake_create_tests
	fake_error_tests
	fake_image_tests
	fake_save_tests
	fake_window_tests
	fake_blocked_tests
fi

tap_done
