#!/usr/bin/python3
"""check_entries.py DIR [--max BYTES]: every entry of a VAST cache folder is whole (base/diskcache.h:
88-byte header "VASTDC1\\n", format 1, header size, payload length, key = the file's name,
SHA-256 of the payload), no temporary file is left, and the total is within --max.
Prints the count and total; exit 1 on any bad entry."""
import hashlib
import os
import struct
import sys

HEADER = struct.Struct("=8sIIQ32s32s")


def check(path, name):
    data = open(path, "rb").read()
    if len(data) < HEADER.size:
        return "shorter than its header"
    magic, fmt, hbytes, plen, key, csum = HEADER.unpack_from(data)
    if magic != b"VASTDC1\n" or fmt != 1 or hbytes != HEADER.size:
        return "bad header"
    if plen != len(data) - HEADER.size:
        return "payload length %d, file holds %d" % (plen, len(data) - HEADER.size)
    if key.hex() + ".vc" != name:
        return "key differs from its name"
    if hashlib.sha256(data[HEADER.size:]).digest() != csum:
        return "checksum differs"
    return None


def main():
    folder = sys.argv[1]
    bound = int(sys.argv[sys.argv.index("--max") + 1]) if "--max" in sys.argv else None
    bad, count, total = 0, 0, 0
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.startswith(".tmp-"):
            print("check_entries: FAIL: temporary file left: %s" % name)
            bad += 1
            continue
        why = check(path, name) if name.endswith(".vc") else "not an entry"
        if why:
            print("check_entries: FAIL: %s: %s" % (name, why))
            bad += 1
        count += 1
        total += os.path.getsize(path)
    if bound is not None and total > bound:
        print("check_entries: FAIL: %d bytes in the folder, bound %d" % (total, bound))
        bad += 1
    print("check_entries: %d entries, %d bytes, %d bad" % (count, total, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
