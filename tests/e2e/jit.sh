# SPDX-License-Identifier: GPL-2.0-only
# JIT-compiled code is named from the perf map its runtime writes: node
# --perf-basic-prof lists each function V8 compiles in /tmp/perf-PID.map.
# With --no-node, so that V8's own objects do not name the functions first
# (node.sh tests that).
# (Python's -X perf would be a second runtime, but it needs Python 3.12 and
# Debian 12 has 3.11.)
. "$(dirname "$0")/lib.sh"

name="JIT frames named from node's perf map"
require_bpf "$name"

node=$(command -v node || command -v nodejs)
if [[ -z $node ]]; then
	missing "node is not installed (tools/install-deps installs the nodejs package)" "$name"
	exit 0
fi

# From $TMP: node --perf-basic-prof also writes isolate-*-v8.log to its directory.
workload=$(realpath "$(dirname "$0")/../workloads/hot.js")
(cd "$TMP" && "$PROFILER" -F 499 --no-node -o "$TMP/jit.pb.gz" -- "$node" --perf-basic-prof "$workload" 3 \
	>"$TMP/out" 2>"$TMP/err")
rc=$?
# node leaves its map behind.
pid=$(awk '$1 == "hot.js:" && $2 == "pid" { print $3; exit }' "$TMP/out")
map=/tmp/perf-$pid.map
[[ -n $pid && -f $map ]] && mv "$map" "$TMP/node.map"
if [[ $rc -ne 0 ]]; then
	fail "$name: profiler failed (exit $rc)"
	sed 's/^/#   /' "$TMP/err"
	exit 0
fi
if ! grep -q ' [^ ]*hotLoop ' "$TMP/node.map" 2>/dev/null; then
	fail "$name: node wrote no perf map naming hotLoop (pid '$pid')"
	exit 0
fi

# The share of samples with a frame matching hotLoop on their stack: what
# pprof keeps under -focus. JIT names hold spaces ("JS:*hotLoop /path:10:17"),
# which pct() in lib.sh does not take.
share=$(pprof -top -focus='JS:.hotLoop' "$TMP/jit.pb.gz" 2>/dev/null |
	awk '/^Showing nodes accounting for / { v = $6; sub(/%/, "", v); print v; exit }')
share=${share:-0}
if awk -v s="$share" 'BEGIN { exit !(s >= 80) }'; then
	ok "$name (hotLoop on $share% of samples, expected >= 80)"
else
	fail "$name (hotLoop on $share% of samples, expected >= 80)"
	pprof -top -nodecount=15 "$TMP/jit.pb.gz" 2>&1 | sed 's/^/#   /'
fi
