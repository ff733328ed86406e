# SPDX-License-Identifier: GPL-2.0-only
# A library unloaded and another loaded where it was: the same addresses are
# one function, then the other (dlcycle alternates liba.so's lib_a_loop and
# libb.so's lib_b_loop, 20 ms each, at one address). Each is named for its
# own half of the samples, by a recording of the command and of the process
# by -p; named after the one first seen there, one of them took 100%.
. "$(dirname "$0")/lib.sh"

T_CMD="library reloaded in place, command"
T_PID="library reloaded in place, -p"
require_bpf "$T_CMD" "$T_PID"

LIBS=("$WORKLOADS/liba.so" "$WORKLOADS/libb.so")

# halves NAME FILE: lib_a_loop and lib_b_loop each hold half the samples,
# within 10 points (binomially, 1,000 samples of a 50% share vary by 1.6).
halves() {
	share_is "$1" "$2" lib_a_loop 50 10
	share_is "$1" "$2" lib_b_loop 50 10
}

if "$PROFILER" -F 199 -o "$TMP/cmd.pb.gz" -- "$WORKLOADS/dlcycle" "${LIBS[@]}" 5 \
	>/dev/null 2>"$TMP/cmd.err"; then
	halves "$T_CMD" "$TMP/cmd.pb.gz"
else
	fail "$T_CMD: the profiler failed"
	sed 's/^/#   /' "$TMP/cmd.err"
fi

"$WORKLOADS/dlcycle" "${LIBS[@]}" 8 >"$TMP/pid.out" &
pid=$!
if wait_for "$TMP/pid.out" "dlcycle: ready" &&
	"$PROFILER" -F 199 -p "$pid" -d 5 -o "$TMP/pid.pb.gz" 2>"$TMP/pid.err"; then
	halves "$T_PID" "$TMP/pid.pb.gz"
else
	fail "$T_PID: the workload or the profiler failed"
	sed 's/^/#   /' "$TMP/pid.err"
fi
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
exit 0
