#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""cpuprofile_shares.py CPUPROFILE FOLDED [SCRIPT]: JavaScript functions' shares
in V8's own profile of a run (node --cpu-prof) and in ours of the same run
(folded, --format folded), side by side.

A function is "name file:line" (the file's base name, the line where the
function starts), as both profiles say it. Only samples in JavaScript count,
in each: V8's whose leaf is a JavaScript function (not "(program)", "(garbage
collector)", "(idle)"), ours with a JavaScript frame. A function's self share
is of the samples whose innermost JavaScript frame it is; its inclusive share
of those with it anywhere. With SCRIPT (a base name), only that script's
functions count, and samples with none of them are left out.

Prints one line per function: NAME FILE:LINE OURS_SELF V8_SELF OURS_INCL V8_INCL,
in percent, then "samples OURS V8".
"""
import collections
import json
import re
import sys

OURS = re.compile(r'^(.*) \(([^():]+):(\d+)\)$')


def base(url):
    return url.rsplit('/', 1)[-1]


def v8_stacks(path):
    prof = json.load(open(path))
    parent, frame = {}, {}
    for node in prof['nodes']:
        cf = node['callFrame']
        url = cf.get('url', '')
        if url and cf['lineNumber'] >= 0:
            name = cf['functionName'] or '(anonymous)'
            frame[node['id']] = '%s %s:%d' % (name, base(url), cf['lineNumber'] + 1)
        else:
            frame[node['id']] = None  # (program), (garbage collector), native
        for child in node.get('children', []):
            parent[child] = node['id']
    for sample in prof['samples']:
        if frame[sample] is None:
            continue
        stack, n = [], sample
        while n is not None:
            if frame[n] is not None:
                stack.append(frame[n])
            n = parent.get(n)
        yield stack  # innermost first


def our_stacks(path):
    for line in open(path):
        stack, count = line.rsplit(' ', 1)
        frames = []
        for f in reversed(stack.split(';')):
            m = OURS.match(f)
            if m:
                frames.append('%s %s:%s' % m.groups())
        for _ in range(int(count)):
            yield frames


def shares(stacks, script):
    incl, self_, total = collections.Counter(), collections.Counter(), 0
    for frames in stacks:
        if script:
            frames = [f for f in frames if f.rsplit(' ', 1)[1].startswith(script + ':')]
        if not frames:
            continue
        total += 1
        for f in set(frames):
            incl[f] += 1
        self_[frames[0]] += 1
    return incl, self_, total


def main():
    cpuprofile, folded = sys.argv[1:3]
    script = sys.argv[3] if len(sys.argv) > 3 else None
    vi, vs, vt = shares(v8_stacks(cpuprofile), script)
    oi, os_, ot = shares(our_stacks(folded), script)
    for f in sorted(set(vi) | set(oi), key=lambda f: -vs[f]):
        print('%s %.2f %.2f %.2f %.2f' % (f, 100 * os_[f] / max(ot, 1), 100 * vs[f] / max(vt, 1),
                                         100 * oi[f] / max(ot, 1), 100 * vi[f] / max(vt, 1)))
    print('samples %d %d' % (ot, vt))


if __name__ == '__main__':
    main()
