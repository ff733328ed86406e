# SPDX-License-Identifier: GPL-2.0-only
# Samples that find the ring buffer full are counted, not silently dropped:
# the summary on stderr and the profile's comments give the same count.
. "$(dirname "$0")/lib.sh"

require_bpf "a full ring buffer loses samples" "the profile records the loss" \
	"a warning says how to lose none"

# One page holds a single record of 1 KiB of stack: two busy processes at
# 4999 Hz overrun it.
start_bg "$WORKLOADS/split" 50 50 5
first=$BG_PID
start_bg "$WORKLOADS/split" 50 50 5
sleep 0.3
if "$PROFILER" -p "$first,$BG_PID" -F 4999 -d 2 --ringbuf-size 4096 --call-graph dwarf=1024 -o "$TMP/loss.pb.gz" \
	2>"$TMP/err"; then
	summary=$(grep -E '^profiler: on-CPU samples: ' "$TMP/err")
	lost=$(summary_count "$TMP/err" "samples lost")
	check "a full ring buffer loses samples (${summary:-no summary line})" \
		test "${lost:-0}" -gt 0
	comment=$(summary_count <(pprof -comments "$TMP/loss.pb.gz" 2>/dev/null) "samples lost")
	check "the profile records the loss ('samples lost: ${comment:-none}', stderr ${lost:-none})" \
		test -n "$lost" -a "$comment" = "$lost"
	warning=$(grep -E '^profiler: [0-9]+ samples and [0-9]+ intervals off CPU lost .*--ringbuf-size' "$TMP/err")
	check "a warning says how to lose none (${warning:-no warning})" \
		test "${lost:-0}" -gt 0 -a -n "$warning"
else
	fail "a full ring buffer loses samples: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi
