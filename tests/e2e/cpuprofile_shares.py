#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""cpuprofile_shares.py: JavaScript functions' shares in V8's own profile of a
run (node --cpu-prof) and in ours of the same run (--format folded).

  cpuprofile_shares.py compare CPUPROFILE FOLDED SCRIPT|- self|incl TOP [FLOOR]
      The TOP functions of V8's profile by their self (or inclusive) share,
      beside ours: each within three standard deviations of the difference
      of two shares over these sample counts, plus one point for the two
      clocks, or FLOOR points if more. Exits 1 when one is not, or either
      profile has under 500 samples in JavaScript.
  cpuprofile_shares.py present CPUPROFILE FOLDED SCRIPT|- TOP
      The TOP functions of V8's profile by their self share are all in ours,
      by the same name, script and line: exits 1 when one is not, or V8's
      profile has under 500 samples in JavaScript.
  cpuprofile_shares.py named FOLDED
      "JS_FRAMES UNNAMED": JavaScript frames in FOLDED (named "name (file:LINE)",
      or not: "[unknown JavaScript]"), and how many are not named.

A function is "name file:line" (the file's base name, the line where the
function starts), as both profiles say it. Only samples in JavaScript count,
in each: V8's whose leaf is a JavaScript function (not "(program)", "(garbage
collector)", "(idle)"), ours with a JavaScript frame. A function's self share
is of the samples whose innermost JavaScript frame it is; its inclusive share
of those with it anywhere. With SCRIPT (a base name), only that script's
functions count, and samples with none of them are left out.
"""
import collections
import json
import math
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


def compare(cpuprofile, folded, script, column, top, floor=0.0):
    vi, vs, vt = shares(v8_stacks(cpuprofile), script)
    oi, os_, ot = shares(our_stacks(folded), script)
    theirs, ours = (vs, os_) if column == 'self' else (vi, oi)
    bad = ot < 500 or vt < 500
    print('samples in JavaScript: ours %d, V8\'s %d' % (ot, vt))
    for f in sorted(theirs, key=lambda f: -theirs[f])[:top]:
        a, b = 100 * ours[f] / max(ot, 1), 100 * theirs[f] / max(vt, 1)
        p = b / 100
        tol = max(300 * math.sqrt(p * (1 - p) * (1 / max(ot, 1) + 1 / max(vt, 1))) + 1, floor)
        good = abs(a - b) <= tol
        bad = bad or not good
        print('%s %s: ours %.1f%%, V8 %.1f%% (%s %.1f)' % (
            'ok' if good else 'NOT', f, a, b, column, tol))
    return 1 if bad else 0


def present(cpuprofile, folded, script, top):
    # V8's profiler shows apart the functions TurboFan inlined, where ours
    # counts them in their callers (inlined frames are not expanded): which
    # ones it inlines changes from run to run. Of V8's top functions, those
    # missing from ours may hold at most 1% of its samples between them.
    _, vs, vt = shares(v8_stacks(cpuprofile), script)
    oi, _, _ = shares(our_stacks(folded), script)
    missing = [f for f in sorted(vs, key=lambda f: -vs[f])[:top] if not oi[f]]
    share = 100 * sum(vs[f] for f in missing) / max(vt, 1)
    for f in missing:
        print('%s %s: in V8\'s profile (%d samples in it), not in ours' % (
            'NOT' if share > 1 else 'inlined?', f, vs[f]))
    # Fewer functions with samples of their own than asked for is no failure
    # (js_split's checkout and browse have next to none until TurboFan
    # inlines crunch into them; under node 18 on a busy machine V8's profile
    # had fewer than four), but too few samples is.
    if len(vs) < top or vt < 500:
        print('%s: V8\'s profile has %d functions with samples of their own, of %d asked for, '
              'in %d samples in JavaScript' % ('NOT' if vt < 500 else 'note', len(vs), top, vt))
    return 1 if share > 1 or vt < 500 else 0


def named(folded):
    frames = unnamed = 0
    for line in open(folded):
        stack, count = line.rsplit(' ', 1)
        for f in stack.split(';'):
            if f == '[unknown JavaScript]':
                unnamed += int(count)
                frames += int(count)
            elif OURS.match(f):
                frames += int(count)
    print(frames, unnamed)
    return 0


def main():
    if sys.argv[1] in ('compare', 'present'):
        script = sys.argv[4] if sys.argv[4] != '-' else None
        if sys.argv[1] == 'present':
            return present(sys.argv[2], sys.argv[3], script, int(sys.argv[5]))
        floor = float(sys.argv[7]) if len(sys.argv) > 7 else 0.0
        return compare(sys.argv[2], sys.argv[3], script, sys.argv[5], int(sys.argv[6]), floor)
    return named(sys.argv[2])


if __name__ == '__main__':
    sys.exit(main())
