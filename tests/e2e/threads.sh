# SPDX-License-Identifier: GPL-2.0-only
# Samples carry their thread's name, tid, pid and process name (comm) as pprof labels.
. "$(dirname "$0")/lib.sh"

# Each reports its checks: 3 (one a thread, and the comm) and 2.
require_bpf --plan 5 "thread name labels" "pid and tid labels"

start_bg "$WORKLOADS/threads" 6
sleep 0.3
if ! "$PROFILER" -p "$BG_PID" -F 199 -d 3 -o "$TMP/threads.pb.gz" 2>"$TMP/err"; then
	fail "thread name labels: profiler failed"
	sed 's/^/#   /' "$TMP/err"
	exit 0
fi
share_is "thread name labels: alpha-worker runs alpha_work" "$TMP/threads.pb.gz" alpha_work 100 2 \
	-tagfocus=thread=alpha-worker
share_is "thread name labels: beta-worker runs beta_work" "$TMP/threads.pb.gz" beta_work 100 2 \
	-tagfocus=thread=beta-worker
share_is "comm label" "$TMP/threads.pb.gz" alpha_work 50 10 -tagfocus=comm=threads

# Numeric labels: every sample has pid = the workload's pid, and two tids.
pprof -tags "$TMP/threads.pb.gz" >"$TMP/tags" 2>&1
check "pid and tid labels: pid is $BG_PID" grep -qE "\( *100(\.0+)?%\): $BG_PID$" "$TMP/tags"
tids=$(tag_count "$TMP/threads.pb.gz" tid)
check "pid and tid labels: two threads sampled ($tids tids)" test "$tids" -ge 2
