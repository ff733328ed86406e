# SPDX-License-Identifier: GPL-2.0-only
# Where no output needs samples one by one (pprof, folded, SVG), the BPF
# program counts a thread's samples of the same stacks instead of sending
# each: every one of them is still in the profile, as many as a recording
# that sends each (a Firefox output, which needs their times) counts.
. "$(dirname "$0")/lib.sh"

require_bpf "samples counted in the kernel" "counted as sent"

# sums_count FILE: the samples the profiler's -v said it counted in the kernel.
sums_count() {
	sed -nE 's/.* sums: ([0-9]+) samples counted in the kernel.*/\1/p' "$1"
}

# total FILE: the samples in folded FILE.
total() {
	awk '{ n += $NF } END { print n + 0 }' "$1"
}

# Two recordings of the same threads over the same seconds: one counting in
# the kernel, one sending each sample (it also writes a Firefox profile).
start_bg "$WORKLOADS/threads" 8
sleep 0.3
"$PROFILER" -v -p "$BG_PID" --call-graph fp -F 999 -d 3 -o "$TMP/counted.folded" \
	2>"$TMP/counted.err" &
counted=$!
"$PROFILER" -v -p "$BG_PID" --call-graph fp -F 999 -d 3 -o "$TMP/sent.folded" \
	-o "$TMP/sent.json" 2>"$TMP/sent.err" &
sent=$!
wait "$counted" && wait "$sent" || {
	fail "samples counted in the kernel: profiler failed"
	sed 's/^/#   /' "$TMP/counted.err" "$TMP/sent.err"
	exit 0
}

name="samples counted in the kernel"
samples=$(summary_count "$TMP/counted.err" "on-CPU samples")
sums=$(sums_count "$TMP/counted.err")
got=$(total "$TMP/counted.folded")
# Two busy threads for 3 s at 999 Hz: about 6000 samples on an idle machine, half or less on
# a busy one, where both recordings run beside other work; all but the first of each stack
# counted. A thousand is enough samples to tell.
if [[ ${samples:-0} -ge 1000 && ${sums:-0} -ge $((samples * 9 / 10)) && $got -eq $samples ]]; then
	ok "$name ($sums of $samples samples counted, not sent; $got in the profile)"
else
	fail "$name (${sums:-no} of ${samples:-no} samples counted, not sent; $got in the profile)"
	sed 's/^/#   /' "$TMP/counted.err"
fi

name="counted as sent"
sent_samples=$(summary_count "$TMP/sent.err" "on-CPU samples")
sent_got=$(total "$TMP/sent.folded")
alpha=$(folded_leaf_pct "$TMP/counted.folded" alpha_work)
sent_alpha=$(folded_leaf_pct "$TMP/sent.folded" alpha_work)
# The recording with a Firefox output sends each sample: it says nothing of sums.
if grep -q ' sums: ' "$TMP/sent.err" || [[ ${sent_samples:-0} -lt 1000 ]]; then
	fail "$name: the recording with a Firefox output did not send each sample"
	sed 's/^/#   /' "$TMP/sent.err"
# The two start apart, so their 3 s differ, and beside other work so does the
# CPU the threads get (2,946 against 2,803 seen beside two busy loops): 10%.
# What this guards against is far more: a sum lost or counted twice.
elif within "$got" "$sent_got" $((sent_got / 10)) && within "$alpha" "$sent_alpha" 5; then
	ok "$name ($got samples and alpha_work $alpha% counted, $sent_got and $sent_alpha% sent)"
else
	fail "$name ($got samples and alpha_work $alpha% counted, $sent_got and $sent_alpha% sent)"
fi
