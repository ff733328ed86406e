# SPDX-License-Identifier: GPL-2.0-only
# The profiler stops when told or when its targets are gone, and still writes
# a complete profile; what it could not capture is counted, not hidden.
. "$(dirname "$0")/lib.sh"

require_bpf "SIGINT writes a complete profile" "SIGTERM writes a complete profile" \
	"stops when every -p target exited" "truncated stacks are counted" \
	"-d at the kernel's highest rate: sampling ends at the deadline"

# stop_with SIGNAL: profile a workload with no -d, send SIGNAL after a second.
stop_with() {
	local sig=$1 prof rc
	start_bg "$WORKLOADS/split" 50 50 20
	"$PROFILER" -p "$BG_PID" -F 199 -o "$TMP/$sig.pb.gz" 2>"$TMP/err" &
	prof=$!
	sleep 1.5
	kill -"$sig" "$prof"
	wait "$prof"
	rc=$?
	kill "$BG_PID"
	if [[ $rc -eq 0 ]] && pprof -top "$TMP/$sig.pb.gz" >"$TMP/top" 2>&1 &&
		grep -q ' hot_a$' "$TMP/top"; then
		ok "$sig writes a complete profile ($(grep -o 'on-CPU samples: [0-9]* in [0-9.]* s' "$TMP/err"))"
	else
		fail "$sig writes a complete profile (exit $rc)"
		sed 's/^/#   /' "$TMP/err" "$TMP/top"
	fi
}
stop_with INT
stop_with TERM

# No -d and no signal: the profiler ends once its only target has exited.
# (3 s: the sanitizer build, on a busy machine, once took over 1 s to start.)
start_bg "$WORKLOADS/split" 50 50 3
SECONDS=0
if timeout 20 "$PROFILER" -p "$BG_PID" -F 99 -o "$TMP/exit.pb.gz" 2>"$TMP/err" &&
	[[ -s $TMP/exit.pb.gz ]]; then
	ok "stops when every -p target exited (after ${SECONDS}s)"
else
	fail "stops when every -p target exited"
	sed 's/^/#   /' "$TMP/err"
fi

# A 1,200-deep recursion overflows the 1,024 frames a stack holds.
if "$PROFILER" -F 199 -o "$TMP/deep.pb.gz" -- "$WORKLOADS/deep" 1200 1 2>"$TMP/err"; then
	samples=$(summary_count "$TMP/err" "on-CPU samples")
	truncated=$(summary_count "$TMP/err" "truncated stacks")
	comment=$(summary_count <(pprof -comments "$TMP/deep.pb.gz" 2>/dev/null) "truncated stacks")
	if [[ -n $samples && $samples -gt 0 && ${truncated:-0} -ge $((samples * 9 / 10)) &&
		$comment == "$truncated" ]]; then
		ok "truncated stacks are counted ($truncated of $samples, in stderr and the pprof comments)"
	else
		fail "truncated stacks are counted (samples '$samples', truncated '$truncated', comment '$comment')"
		sed 's/^/#   /' "$TMP/err"
	fi
else
	fail "truncated stacks are counted: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# At the highest rate the kernel allows, records can come in as fast as they
# are handled: sampling still ends at -d (the profile's own duration, within
# a second), with the ring at its default size, and whatever did not fit is
# counted as lost. The BPF programs take nothing past the deadline, so on a
# machine busy with other tests, where the profiler's one thread waits for a
# CPU (it stopped 4-8 s late beside two busy loops), the duration holds; a
# run that went on sampling would be cut by the timeout (they went on for
# 13-49 s for -d 3).
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
start_bg "$WORKLOADS/split" 50 50 60
if timeout 60 "$PROFILER" -p "$BG_PID" -F "$max" -d 2 -o "$TMP/max.pb.gz" 2>"$TMP/err"; then
	samples=$(summary_count "$TMP/err" "on-CPU samples")
	lost=$(summary_count "$TMP/err" "samples lost")
	# The profile's duration to 10 ms (pprof -raw), not the summary's to 100 ms.
	took=$(pprof -raw "$TMP/max.pb.gz" 2>/dev/null | sed -nE 's/^Duration: ([0-9.]+)s?$/\1/p')
	if [[ ${samples:-0} -gt 0 && -n $lost ]] && within "${took:-x}" 2.0 1.0; then
		ok "-d at the kernel's highest rate: sampling ends at the deadline ($samples samples" \
			"in $took s at $max Hz, $lost lost)"
	else
		fail "-d at the kernel's highest rate: sampling ends at the deadline (${samples:-no}" \
			"samples in ${took:-?} s at $max Hz, ${lost:-no count of} lost)"
		sed 's/^/#   /' "$TMP/err"
	fi
else
	fail "-d at the kernel's highest rate: sampling ends at the deadline: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi
kill "$BG_PID"
