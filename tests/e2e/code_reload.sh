# SPDX-License-Identifier: GPL-2.0-only
# A library unloaded and another loaded where it was: the same addresses are
# one function, then the other (dlcycle alternates liba.so's lib_a_loop and
# libb.so's lib_b_loop, 20 ms each, at one address). Each is named for its
# own half of the samples, by a recording of the command and of the process
# by -p; named after the one first seen there, one of them took 100%. Then
# the same with the libraries landing somewhere new at each load, in a
# process of 2,000 more mappings of code: every stack of a load takes a new
# snapshot of them, and the recording's memory must not grow with them
# (0.7 MB/s measured, 2.5 before superseded snapshots were trimmed).
. "$(dirname "$0")/lib.sh"

T_CMD="library reloaded in place, command"
T_PID="library reloaded in place, -p"
T_GROW="libraries loaded anew all along among 2,000 mappings"
names=("$T_CMD: lib_a_loop" "$T_CMD: lib_b_loop" "$T_PID: lib_a_loop" "$T_PID: lib_b_loop")
# Memory growth is left to make test on an AddressSanitizer build (below).
asan_build || names+=("$T_GROW")
require_bpf "${names[@]}"

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

# peak_kb SECONDS: the peak RSS (KiB) of a recording of SECONDS of churn.
peak_kb() {
	/usr/bin/time -o "$TMP/grow$1.rss" -f %M "$PROFILER" -F 199 -o "$TMP/grow$1.pb.gz" -- \
		"$WORKLOADS/dlcycle" "${LIBS[@]}" "$1" 1 2000 >/dev/null 2>"$TMP/grow$1.err" &&
		tail -n 1 "$TMP/grow$1.rss"
}
short=$(peak_kb 3)
long=$(peak_kb 12)
samples=$(summary_count "$TMP/grow12.err" "on-CPU samples")
if [[ ${samples:-0} -eq 0 ]]; then
	fail "$T_GROW: the 12 s recording has no samples"
	sed 's/^/#   /' "$TMP/grow12.err"
elif asan_build; then
	echo "# $T_GROW: not checked on an AddressSanitizer build (its quarantine keeps what is freed); make test checks it"
elif [[ $short =~ ^[0-9]+$ && $long =~ ^[0-9]+$ ]] && (((long - short) / 9 <= 1536)); then
	ok "$T_GROW: $(((long - short) / 9)) KB/s more after 3 s (peaks $((short / 1024)) and $((long / 1024)) MB), at most 1.5 MB/s"
else
	fail "$T_GROW: peaks '$short' KB at 3 s, '$long' KB at 12 s: more than 1.5 MB/s"
	sed 's/^/#   /' "$TMP/grow12.err"
fi
# Its names are not checked: a snapshot of 2,000 mappings takes 5 ms, and on
# a busy machine the reader falls behind loads 20 ms apart, so the maps it
# reads are a later load's (26% [unknown] measured while other work ran).
exit 0
