#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""cpuprofile_shares.py CPUPROFILE FOLDED SCRIPT: the shares of SCRIPT's functions
in V8's own profile (node --cpu-prof) and in ours (folded), side by side.

For each function of SCRIPT (by name), the share of samples whose stack
holds it (inclusive) and whose leaf it is (self), over the samples with any
frame of SCRIPT, in both profiles; printed one per line as
"NAME ours_incl v8_incl ours_self v8_self SAMPLES_OURS SAMPLES_V8", then
"caller-split checkout ..." lines for the test to judge.
"""
import collections
import json
import sys


def v8_stacks(path, script):
    prof = json.load(open(path))
    parent, frame = {}, {}
    for node in prof['nodes']:
        cf = node['callFrame']
        name = cf['functionName'] or '(anonymous)'
        frame[node['id']] = name if cf['url'].endswith('/' + script) else None
        for child in node.get('children', []):
            parent[child] = node['id']
    for sample in prof['samples']:
        stack, n = [], sample
        while n is not None:
            stack.append(frame[n])
            n = parent.get(n)
        yield [f for f in stack if f is not None]  # leaf first


def our_stacks(path, script):
    for line in open(path):
        stack, count = line.rsplit(' ', 1)
        frames = [f.split(' (', 1)[0] for f in reversed(stack.split(';'))
                  if f.endswith(')') and ' (' + script + ':' in f]
        for _ in range(int(count)):
            yield frames


def shares(stacks, leaf_only_script=True):
    incl, self_, total = collections.Counter(), collections.Counter(), 0
    for frames in stacks:
        if not frames:
            continue
        total += 1
        for f in set(frames):
            incl[f] += 1
        self_[frames[0]] += 1
    return incl, self_, total


def main():
    cpuprofile, folded, script = sys.argv[1:4]
    vi, vs, vt = shares(v8_stacks(cpuprofile, script))
    oi, os_, ot = shares(our_stacks(folded, script))
    for name in sorted(set(vi) | set(oi)):
        print('%s %.1f %.1f %.1f %.1f %d %d' % (
            name, 100 * oi[name] / max(ot, 1), 100 * vi[name] / max(vt, 1),
            100 * os_[name] / max(ot, 1), 100 * vs[name] / max(vt, 1), ot, vt))


if __name__ == '__main__':
    main()
