#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# (Re)generate the seed corpora in corpus/<harness>/: a few small inputs
# of every kind each harness parses, valid and broken. The images come
# from tools/bloomctl/mkimage.py, which writes the format independently
# of bloomctl. Deterministic: running it again gives the same files.

set -eu

here=$(cd "$(dirname "$0")" && pwd)
mkimage=$here/../bloomctl/mkimage.py
export PYTHONDONTWRITEBYTECODE=1
# corpus HARNESS: $c is its corpus, emptied.
corpus() {
	c=$here/corpus/$1
	rm -rf "$c"
	mkdir -p "$c"
}

corpus fuzz_image
img() { # NAME ARGS...
	local name=$1

	shift
	python3 "$mkimage" "$@" "$c/$name"
}
img jhash-plain --fill 20
img jhash-counting-zlib --counting --compress --fill 30
img siphash-plain --siphash --fill 20
img siphash-counting-zlib --siphash --counting --compress --fill 30
img siphash-zero-seed-hi --siphash --field seed_hi0=0 --field seed_hi1=0
img sized-by-rate --bits 9586 --hashes 7 --field capacity=1000 --field fpr_ppb=10000000 --compress --fill 100
img empty-64k-zlib --bits 65536 --hashes 4 --compress
img full-64 --bits 64 --hashes 1 --fill 400
img claims-32GiB --compress --field bits=68719476736 --field flags=1 --field payload_len=34359738368
img rate-mismatch --field fpr_ppb=10000000
img jhash-seed-hi --field seed_hi0=1
img padding-set --pad --counting
img zlib-short --compress --zlib-short 8
img zlib-extra --compress --zlib-extra 8
img zlib-tail --compress --zlib-tail 3
img zlib-garbage --compress --zlib-garbage
img crc-flipped --fill 20 --flip 100
img trailing --append 7
img truncated-header --truncate 40
img truncated-payload --compress --fill 30 --truncate 110
printf 'not an image\n' >"$c/text"

# fuzz_keys: one byte of options (bit 0: --hex), then the stream.
corpus fuzz_keys
printf '\000alpha\nbeta\ngamma' >"$c/text-lines"
printf '\000a\r\nb\r\n\r\nc\n' >"$c/crlf-and-empty"
printf '\001deadbeef\n00ff\r\nABCDEF\n' >"$c/hex-lines"
printf '\001abc\n0g\n' >"$c/hex-bad"
{ printf '\003'; head -c 8192 /dev/zero | tr '\0' 'a'; printf '\r\nb\n'; } >"$c/hex-longest"
{ printf '\002'; head -c 8195 /dev/zero | tr '\0' 'x'; printf '\n'; } >"$c/too-long"
{ printf '\000'; head -c 4097 /dev/zero | tr '\0' 'k'; printf '\n'; } >"$c/key-too-long"
printf '\000\n\n\n' >"$c/only-newlines"
head -c 300 /dev/zero | tr '\0' '\377' >"$c/binary"

# fuzz_core: bits, hashes, flags, capacity, fpr_ppb, seed, then payload.
corpus fuzz_core
core() { # NAME BITS HASHES FLAGS CAPACITY PPB PAYLOAD_HEX
	python3 - "$c/$1" "$2" "$3" "$4" "$5" "$6" "$7" <<'PY'
import struct, sys
out, bits, hashes, flags, cap, ppb, payload = sys.argv[1:]
d = struct.pack("<QIIQI4I", int(bits), int(hashes), int(flags), int(cap),
                int(ppb), 0x12345678, 0x9ABCDEF0, 0x0F1E2D3C, 0x4B5A6978)
open(out, "wb").write(d + bytes.fromhex(payload))
PY
}
core plain-100 100 3 0 10 0 00112233445566770011223344556677
core counting-100 100 3 1 0 0 "$(printf '11%.0s' $(seq 56))"
core siphash-64 64 1 2 0 0 ffffffffffffffff6b6579
core rate-1000-1pct 9586 7 0 1000 10000000 00
core rate-mismatch 9000 7 0 1000 10000000 00
core padding-set 65 1 0 0 0 00000000000000000100000000000000
core big-bits $((0x80000000 + 4096)) 32 $((0x80000000)) 0 0 ff

# fuzz_flowkey: four bytes of options (family and field count, --key
# permutation, --src-prefix, --dst-prefix; see fuzz_flowkey.c), then the
# flow, or with bit 5 of the first byte "--key list\nflow".
corpus fuzz_flowkey
printf '\004\017\377\37710.0.0.1,53' >"$c/saddr-dport"
printf '\020\000\377\37710.1.2.3,10.99.0.1,udp,1234,9' >"$c/five-tuple"
printf '\006\000\100\144fd00::1,fd00:1:2:3:4:5:ffff:ffff' >"$c/ipv6-prefixes"
printf '\000\000\015\377255.255.255.255' >"$c/ipv4-prefix-13"
printf '\000\000\000\37710.1.2.3' >"$c/ipv4-prefix-0"
printf '\040\000\030\377dport,saddr\n53,10.0.0.1' >"$c/key-text"
printf '\040\000\377\377saddr,,dport\n1.2.3.4,,5' >"$c/key-text-empty-field"
printf '\000\000\377\377::ffff:1.2.3.4' >"$c/ipv4-mapped"
printf '\000\000\377\377fe80::1%%eth0' >"$c/zone-id"
printf '\002\002\377\377tcp' >"$c/proto-family-ipv6"
printf '\004\021\377\377icmp,80' >"$c/icmp-port"
printf '\000\000\377\37710.0.0.1,' >"$c/trailing-comma"
printf '\004\017\377\37710.0.0.1\000,53' >"$c/embedded-nul"
printf '\000\004\377\377+53' >"$c/plus-port"
printf '\000\004\377\377000053' >"$c/port-leading-zeros"
printf '\001\000\100\377fd00::1' >"$c/ipv4-family-ipv6-addr"
