#!/usr/bin/env python3
"""Shares of a kernel's warp stall samples per part of its SASS, from the source page that
`scripts/ab.sh profile` writes (profile.sass.csv.gz: one row per instruction).

Usage: scripts/profile_parts.py FILE NAME=FIRST-LAST ...   (instruction indices, inclusive)
       scripts/profile_parts.py FILE --list [MIN]          (instructions with >= MIN samples, and
                                                             every wait, barrier, wgmma and bulk op)
"""
import csv
import gzip
import sys

KEYS = ('EXIT', 'SYNCS', 'BAR.', 'HGMMA', 'DEPBAR', 'UBLK', 'UTMA', 'STSM', 'USETMAXREG')


def rows_of(path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt') as f:
        reader = csv.reader(f)
        next(reader)  # the kernel's name
        header = next(reader)
        return [dict(zip(header, r)) for r in reader]


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__.strip())
    rows = rows_of(argv[1])
    samples = [int(r['Warp Stall Sampling (All Samples)'] or 0) for r in rows]
    total = sum(samples) or 1
    if argv[2] == '--list':
        floor = int(argv[3]) if len(argv) > 3 else 100
        for i, r in enumerate(rows):
            src = r['Source'].strip()
            if samples[i] >= floor or any(k in src for k in KEYS):
                print(f"{i:5d} {samples[i]:7d} {src[:80]}")
        return
    print(f"{total} samples, {len(rows)} instructions")
    for spec in argv[2:]:
        name, span = spec.split('=')
        first, last = (int(x) for x in span.split('-'))
        print(f"{name:32s} {sum(samples[first:last + 1]) / total * 100:5.1f}%")


if __name__ == '__main__':
    main(sys.argv)
