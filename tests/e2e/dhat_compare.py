# SPDX-License-Identifier: GPL-2.0-only
"""dhat_compare.py OURS THEIRS RATE [TOP [DEPTH]]: a sampled heap profile
(OURS, our DHAT file, one sample per RATE bytes on average) against
valgrind's DHAT of the same program (THEIRS), which counts every block.

Prints the total bytes of each and how far ours is, then THEIRS' TOP
allocation sites (10) by bytes, each with its share of the bytes in both.
A site is the DEPTH (6) frames under the allocation function, by function
name: the two runs' addresses differ, and the allocation function is
valgrind's in THEIRS, the sampler's or the C library's in OURS. A share is
within tolerance when it is within three standard deviations of a count of
(total / RATE) samples, plus half a point. Exits 1 when a site is not.
"""
import collections
import json
import math
import re
import sys

# "0x1234: name (file:line)" or "0x1234: ??? (in /lib/x.so)": the name.
FRAME = re.compile(r'^(?:0x[0-9a-fA-F]+: )?(.*?)(?: \((?:in )?[^()]*\))?$')


def sites(path, depth):
    d = json.load(open(path))
    names = [FRAME.match(f).group(1) for f in d['ftbl']]
    total, by_site = 0, collections.Counter()
    for pp in d['pps']:
        frames = [names[i] for i in pp['fs']]
        total += pp['tb']
        by_site[' < '.join(frames[1:1 + depth])] += pp['tb']
    return total, by_site


def main():
    ours_path, theirs_path, rate = sys.argv[1], sys.argv[2], float(sys.argv[3])
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    depth = int(sys.argv[5]) if len(sys.argv) > 5 else 6
    ot, ours = sites(ours_path, depth)
    tt, theirs = sites(theirs_path, depth)
    if not ot or not tt:
        print('total bytes: ours %d, DHAT\'s %d: nothing to compare' % (ot, tt))
        return 1
    print('total bytes: ours %d, DHAT\'s %d (%+.2f%%)' % (ot, tt, 100.0 * (ot - tt) / tt))
    n = ot / rate
    bad = False
    for site, b in theirs.most_common(top):
        p = b / tt
        a = ours[site] / ot
        tol = 300 * math.sqrt(p * (1 - p) / n) + 0.5
        good = abs(100 * (a - p)) <= tol
        bad = bad or not good
        print('%s %.2f%% ours, %.2f%% DHAT\'s (tolerance %.2f): %s' % (
            'ok' if good else 'NOT', 100 * a, 100 * p, tol, site))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
