# SPDX-License-Identifier: GPL-2.0-only
# Known CPU shares come back out of the profile: by -p, by -- COMMAND, and in
# both pprof (read with go tool pprof) and folded output.
. "$(dirname "$0")/lib.sh"

# Each reports its checks: 3, 2 and 3.
require_bpf --plan 8 "70/30 split by -p" "25/75 split by -- COMMAND" "folded output"

# The issue's acceptance run: -p for 5 s at 499 Hz.
start_bg "$WORKLOADS/split" 70 30 8
sleep 0.3
if "$PROFILER" -p "$BG_PID" -F 499 -d 5 -o "$TMP/split.pb.gz" 2>"$TMP/err"; then
	share_is "70/30 split by -p" "$TMP/split.pb.gz" hot_a 70 5
	share_is "70/30 split by -p" "$TMP/split.pb.gz" hot_b 30 5
	cum=$(pct "$TMP/split.pb.gz" compute cum)
	check "callers are kept: compute is on $cum% of stacks" within "$cum" 100 5
else
	fail "70/30 split by -p: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# One function does 3x the work of the other; the command is started by us.
if "$PROFILER" -F 499 -o "$TMP/cmd.pb.gz" -- "$WORKLOADS/split" 25 75 3 2>"$TMP/err"; then
	share_is "25/75 split by -- COMMAND" "$TMP/cmd.pb.gz" hot_a 25 5
	share_is "25/75 split by -- COMMAND" "$TMP/cmd.pb.gz" hot_b 75 5
else
	fail "25/75 split by -- COMMAND: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# Folded stacks on stdout: root first, process name first, count last.
if "$PROFILER" -F 499 -f folded -- "$WORKLOADS/split" 25 75 2 >"$TMP/out.folded" 2>"$TMP/err"; then
	lines=$(wc -l <"$TMP/out.folded")
	bad=$(grep -cvE '^split(;[^;]+)+ [0-9]+$' "$TMP/out.folded")
	check "folded output: every line is 'split;frames... count' ($bad bad of $lines lines)" \
		test "$lines" -gt 0 -a "$bad" -eq 0
	check "folded output: stacks run main -> compute -> hot_b" \
		grep -qE '^split;.*main;compute;hot_b(;burn_\[i\])? [0-9]+$' "$TMP/out.folded"
	share=$(folded_leaf_pct "$TMP/out.folded" hot_b)
	check "folded output: hot_b has $share% of samples (expected 75±5)" within "$share" 75 5
else
	fail "folded output: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi
