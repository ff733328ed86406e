# SPDX-License-Identifier: GPL-2.0-only
"""Functions' shares of two CPU profiles of one process, ours and a runtime's
own (Go's runtime/pprof), compared as tests/e2e/go.sh does.

Both are read with `go tool pprof -raw`. Only user frames count: ours has
the kernel's too, which Go's profiler charges to the user function that made
the system call. A function's flat share is of the samples whose innermost
user frame it is (inlined functions are frames of their own, as Go prints
them); its cumulative share, of the samples it is anywhere in.

  pprof_shares.py summary OURS
      "samples N named P": P, the percentage of user frames (by samples)
      that have a name, not "[unknown]" or "FILE+0xADDR".
  pprof_shares.py compare ORACLE OURS flat|cum N [FUNCTION...]
      each of the oracle's N functions with the largest share (or the
      FUNCTIONs named; NOT_COMPARED's left out), its share in both; exit 1 when one differs by more
      than the tolerance: three standard deviations of the difference of
      two shares sampled independently (Go samples at 100 Hz, so its own
      share is the noisier), plus one point for what the two sampling
      clocks see differently.
"""
import collections
import math
import re
import subprocess
import sys

KERNEL = 0xFFFF800000000000
# Not compared: Go's profiler puts samples in runtime.asyncPreempt (2.1% of
# esbuild's) that ours finds in the function it preempts (0.0%). And in
# runtime.futex, by how busy the machine is: its SIGPROF is taken where the
# thread next runs, often on its way back from a futex wait, so esbuild
# 0.11's own profile has 0.6-0.7% there on a quiet machine, 4.9-6.5% beside
# two busy loops (ours 0.4%).
NOT_COMPARED = {"runtime.asyncPreempt", "runtime.futex"}
UNNAMED = re.compile(r"\+0x[0-9a-f]+$|^\[unknown\]$")


def read(path):
    """The profile at @path: (samples, flat, cum, named, unnamed)."""
    raw = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True,
                         text=True, check=True).stdout
    samples, locations, section, loc = [], {}, None, None
    for line in raw.split("\n"):
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section == "Samples:":
            m = re.match(r"\s*(\d+)\s+\S+:\s*([\d ]*)$", line)
            if m:
                samples.append((int(m.group(1)), [int(x) for x in m.group(2).split()]))
        elif section == "Locations":
            m = re.match(r"\s*(\d+):\s+(0x[0-9a-f]+)\s+M=\d+\s*(.*)$", line)
            if m:
                loc = int(m.group(1))
                locations[loc] = (int(m.group(2), 16), [])
                line = m.group(3)
            # "FUNCTION FILE:LINE s=START", one per function of the inline
            # chain, innermost first; names may hold spaces.
            name = re.sub(r"( \S+:\d+)? s=\d+$", "", line.strip())
            if loc is not None and name:
                locations[loc][1].append(name)
    flat, cum = collections.Counter(), collections.Counter()
    named = unnamed = total = 0
    for n, ids in samples:
        user = [locations[i] for i in ids if i in locations and locations[i][0] < KERNEL]
        total += n
        if not user:
            continue
        for _, names in user:
            if names and not UNNAMED.search(names[0]):
                named += n
            else:
                unnamed += n
        flat[user[0][1][0] if user[0][1] else "[unknown]"] += n
        for name in {name for _, names in user for name in names}:
            cum[name] += n
    return total, flat, cum, named, unnamed


def main():
    if sys.argv[1] == "summary":
        total, _, _, named, unnamed = read(sys.argv[2])
        print("samples %d named %.1f" % (total, 100 * named / max(1, named + unnamed)))
        return 0
    oracle, ours, column, top = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    n1, flat1, cum1, _, _ = read(oracle)
    n2, flat2, cum2, _, _ = read(ours)
    if not n1 or not n2:
        print("no samples: oracle %d, ours %d" % (n1, n2))
        return 1
    want, got = (flat1, flat2) if column == "flat" else (cum1, cum2)
    names = sys.argv[6:] or [name for name, _ in want.most_common(top + len(NOT_COMPARED))
                             if name not in NOT_COMPARED][:top]
    failed = 0
    for name in names:
        p1, p2 = want[name] / n1, got[name] / n2
        p = max((p1 + p2) / 2, 0.01)
        tol = 100 * 3 * math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2)) + 1
        bad = abs(p1 - p2) * 100 > tol
        failed += bad
        print("%s%s %s: oracle %.1f%%, ours %.1f%% (±%.1f)" %
              ("NOT " if bad else "", column, name, 100 * p1, 100 * p2, tol))
    print("samples: oracle %d, ours %d" % (n1, n2))
    return 1 if failed else 0


sys.exit(main())
