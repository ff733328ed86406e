# SPDX-License-Identifier: GPL-2.0-only
# A process that exits long before the profiler stops is still fully symbolized.
. "$(dirname "$0")/lib.sh"

require_bpf "early exit: symbolized" "early exit: no unresolved frames"

# The early process burns its second once sampling is attached (a busy
# machine may take longer than that to start the profiler), then exits two
# seconds before the profiler stops.
mkfifo "$TMP/go"
start_bg sh -c 'read -r _ <"$1"; exec "$2" 1' sh "$TMP/go" "$WORKLOADS/early_exit"
early=$BG_PID
start_bg "$WORKLOADS/split" 50 50 20
"$PROFILER" -p "$early,$BG_PID" -F 299 -d 3 -o "$TMP/early.pb.gz" 2>"$TMP/err" &
profiler=$!
wait_for "$TMP/err" "^profiler: profiling pid" 20
echo go >"$TMP/go"
if ! wait "$profiler"; then
	fail "early exit: profiler failed"
	sed 's/^/#   /' "$TMP/err"
	exit 0
fi
# Give the exited process's samples a stable reading: only its own.
share_is "early exit: symbolized" "$TMP/early.pb.gz" short_lived_work 95 5 \
	-tagfocus=comm=early_exit
# No unresolved frame counts only in a listing pprof could make, with the
# process's own function in it.
if pprof -top -nodecount=1000 -tagfocus=comm=early_exit "$TMP/early.pb.gz" \
	>"$TMP/top" 2>&1 && grep -q ' short_lived_work$' "$TMP/top"; then
	unresolved=$(grep -c 'early_exit+0x' "$TMP/top")
	check "early exit: no unresolved frames in early_exit ($unresolved)" test "$unresolved" -eq 0
else
	fail "early exit: no unresolved frames in early_exit: no short_lived_work in pprof's listing"
	sed 's/^/#   /' "$TMP/top"
fi
