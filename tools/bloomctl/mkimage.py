#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Write kbloom filter images (Documentation/kbloom-image.md) for
# test-native.sh: valid ones, and ones broken in one precise way each, so
# that every check of 'bloomctl load' and 'bloomctl inspect' can be hit.
# Written from the format description, not from bloomctl's code, so that
# the two cross-check each other (the CRC32C in particular).
#
# Usage: mkimage.py [options] OUT
#   --bits M --hashes K       filter size (default 100 bits, 3 hashes)
#   --from IMAGE              the size, kind, scheme, seed and counts of a
#                             version-1 IMAGE (bloomctl save's of a plain one)
#   --counting                4-bit counters
#   --siphash                 hash scheme 2, with a 128-bit seed
#   --compress                zlib-deflate the payload
#   --fill N                  set N pseudo-random positions (counters to 1..15)
#   --ones                    set every bit (a full plain filter)
#   --field NAME=VALUE        override a header field, CRC recomputed
#   --pad                     set the first padding bit past m
#   --zlib-garbage            a compressed payload that is not zlib
#   --zlib-extra N            compress N more zero bytes than the payload
#   --zlib-short N            compress N fewer bytes than the payload
#   --zlib-tail N             N junk bytes after the zlib stream (in stored)
#   --zlib-cut N              cut N bytes off the end of the zlib stream
#   --flip OFFSET             flip a byte after the CRC was computed
#   --append N                N junk bytes after the image
#   --truncate N              keep only the first N bytes
#   --selftest                check the CRC32C against its test vector

import argparse
import random
import struct
import sys
import zlib

MAGIC = b"\x89KBLOOM\n"
HEADER = struct.Struct("<8sIIIIQIIIIQQIIQQII")
assert HEADER.size == 96

FIELDS = ["magic", "version", "hash_scheme", "layout", "flags", "bits",
          "hashes", "fpr_ppb", "seed0", "seed1", "adds", "capacity",
          "compression", "crc", "payload_len", "stored_len", "seed_hi0",
          "seed_hi1"]


def crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


TABLE = crc32c_table()


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = (crc >> 8) ^ TABLE[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?")
    ap.add_argument("--bits", type=int, default=100)
    ap.add_argument("--hashes", type=int, default=3)
    ap.add_argument("--from", dest="src")
    ap.add_argument("--counting", action="store_true")
    ap.add_argument("--siphash", action="store_true")
    ap.add_argument("--compress", action="store_true")
    ap.add_argument("--fill", type=int, default=0)
    ap.add_argument("--ones", action="store_true")
    ap.add_argument("--field", action="append", default=[])
    ap.add_argument("--pad", action="store_true")
    ap.add_argument("--zlib-garbage", action="store_true")
    ap.add_argument("--zlib-extra", type=int, default=0)
    ap.add_argument("--zlib-short", type=int, default=0)
    ap.add_argument("--zlib-tail", type=int, default=0)
    ap.add_argument("--zlib-cut", type=int, default=0)
    ap.add_argument("--flip", type=int, action="append", default=[])
    ap.add_argument("--append", type=int, default=0)
    ap.add_argument("--truncate", type=int)
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()

    if a.selftest:
        ok = crc32c(b"123456789") == 0xE3069283
        ok &= crc32c(b"56789", crc32c(b"1234")) == 0xE3069283
        print("crc32c ok" if ok else "crc32c BROKEN")
        return 0 if ok else 1

    base = {}
    if a.src:
        with open(a.src, "rb") as src:
            base = dict(zip(FIELDS, HEADER.unpack_from(src.read())))
        a.bits, a.hashes = base["bits"], base["hashes"]
        a.counting = bool(base["flags"] & 1)
    width = 4 if a.counting else 1
    plen = (a.bits * width + 63) // 64 * 8
    payload = bytearray(plen)
    rnd = random.Random(42)
    for _ in range(a.fill):
        i = rnd.randrange(a.bits)
        if a.counting:
            v = rnd.randrange(1, 16)
            payload[i // 2] |= v << (4 * (i % 2))
        else:
            payload[i // 8] |= 1 << (i % 8)
    for i in range(a.bits if a.ones else 0):
        payload[i // 8] |= 1 << (i % 8)
    if a.pad:
        i = a.bits * width
        payload[i // 8] |= 1 << (i % 8)

    stored = bytes(payload)
    compression = 0
    if a.compress:
        compression = 1
        src = bytes(payload)
        if a.zlib_extra:
            src += bytes(a.zlib_extra)
        if a.zlib_short:
            src = src[:-a.zlib_short]
        stored = zlib.compress(src)
        stored = stored[:len(stored) - a.zlib_cut] + b"\x55" * a.zlib_tail
        if a.zlib_garbage:
            stored = bytes(rnd.randrange(256) for _ in range(len(stored)))

    # No design rate by default: a rate binds bits and hashes to the
    # capacity (the module's sizing), and tests set all three when they
    # want one.
    f = {
        "magic": MAGIC, "version": 1, "hash_scheme": 2 if a.siphash else 1,
        "layout": 0, "flags": 1 if a.counting else 0, "bits": a.bits,
        "hashes": a.hashes, "fpr_ppb": 0,
        "seed0": 0x12345678, "seed1": 0x9ABCDEF0, "adds": a.fill,
        "capacity": 10, "compression": compression, "crc": 0,
        "payload_len": plen, "stored_len": len(stored),
        "seed_hi0": 0x0F1E2D3C if a.siphash else 0,
        "seed_hi1": 0x4B5A6978 if a.siphash else 0,
    }
    for k in ("hash_scheme", "layout", "flags", "fpr_ppb", "seed0", "seed1",
              "adds", "capacity", "seed_hi0", "seed_hi1"):
        f[k] = base.get(k, f[k])
    for kv in a.field:
        k, v = kv.split("=", 1)
        if k not in f:
            sys.exit("unknown field " + k)
        f[k] = v.encode("latin-1") if k == "magic" else int(v, 0)

    f["crc"] = 0
    crc = crc32c(stored, crc32c(HEADER.pack(*[f[k] for k in FIELDS])))
    f["crc"] = crc
    img = bytearray(HEADER.pack(*[f[k] for k in FIELDS]) + stored)
    for off in a.flip:
        img[off] ^= 0x01
    img += b"\xAA" * a.append
    if a.truncate is not None:
        img = img[:a.truncate]
    with open(a.out, "wb") as out:
        out.write(img)
    return 0


if __name__ == "__main__":
    sys.exit(main())
