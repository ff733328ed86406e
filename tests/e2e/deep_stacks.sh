# SPDX-License-Identifier: GPL-2.0-only
# Stacks deeper than the kernel's 127 frames: unwound whole up to 1,024
# frames, on and off CPU, in code without frame pointers; deeper ones (or
# deeper than --max-frames) counted as truncated, with a warning that names
# the limit.
. "$(dirname "$0")/lib.sh"

names=("deep stacks: 400 frames without frame pointers, on CPU, reach the first frame"
	"deep stacks: 400 frames without frame pointers, off CPU, reach the first frame"
	"deep stacks: deeper than 1024 frames: truncated, counted and said"
	"deep stacks: --max-frames 50 stops at 50 frames and says so")
require_bpf "${names[@]}"

# whole_pct FOLDED DEPTH: the share (percent, integer) of FOLDED's weight
# whose stack starts at _start and holds the whole DEPTH-deep recursion
# (DEPTH + 1 calls of recurse); "none" when it holds nothing.
whole_pct() {
	awk -v want=$(($2 + 1)) '{ w = $NF; total += w; n = split($1, f, ";"); r = 0
		for (i = 1; i <= n; i++) if (f[i] == "recurse") r++
		if (f[2] == "_start" && r == want) whole += w }
		END { if (total) printf "%.0f", 100 * whole / total; else print "none" }' "$1"
}

# most_recurse FOLDED: the most calls of recurse in one of FOLDED's stacks.
most_recurse() {
	awk '{ n = split($1, f, ";"); r = 0; for (i = 1; i <= n; i++) if (f[i] == "recurse") r++
		if (r > most) most = r } END { print most + 0 }' "$1"
}

# record ID ARGS...: profile deep-nofp (its arguments after --) into $TMP/ID.folded.
record() {
	local id=$1
	shift
	"$PROFILER" -F 499 -o "$TMP/$id.folded" "$@" 2>"$TMP/$id.err"
}

# On CPU, from a command's start: its first samples are unwound from their
# stack copy until its tables are loaded, the rest in the BPF program.
name=${names[0]}
if record on -- "$WORKLOADS/deep-nofp" 400 2; then
	samples=$(summary_count "$TMP/on.err" "on-CPU samples")
	pct=$(whole_pct "$TMP/on.folded" 400)
	if [[ ${samples:-0} -ge 200 && $pct != none && $pct -ge 95 ]]; then
		ok "$name ($pct% of $samples samples, at least 95%)"
	else
		fail "$name (${pct:-no}% of ${samples:-no} samples, at least 95%)"
		sed 's/^/#   /' "$TMP/on.err"
	fi
else
	fail "$name: profiler failed"
	sed 's/^/#   /' "$TMP/on.err"
fi

# Off CPU: the scheduler's switch unwinds the same way (1 ms sleeps).
name=${names[1]}
if record off --off-cpu -- "$WORKLOADS/deep-nofp" 400 2 sleep; then
	intervals=$(summary_count "$TMP/off.err" "intervals off CPU")
	pct=$(whole_pct "$TMP/off.folded" 400)
	if [[ ${intervals:-0} -ge 200 && $pct != none && $pct -ge 95 ]]; then
		ok "$name ($pct% of the time of $intervals intervals, at least 95%)"
	else
		fail "$name (${pct:-no}% of the time of ${intervals:-no} intervals, at least 95%)"
		sed 's/^/#   /' "$TMP/off.err"
	fi
else
	fail "$name: profiler failed"
	sed 's/^/#   /' "$TMP/off.err"
fi

# Deeper than a stack holds: its innermost 1,024 frames, marked truncated.
name=${names[2]}
if record over -- "$WORKLOADS/deep-nofp" 1200 1; then
	samples=$(summary_count "$TMP/over.err" "on-CPU samples")
	truncated=$(summary_count "$TMP/over.err" "truncated stacks")
	most=$(most_recurse "$TMP/over.folded")
	if [[ ${samples:-0} -ge 100 && ${truncated:-0} -ge $((samples * 9 / 10)) &&
		$most -ge 1000 && $most -le 1024 ]] &&
		grep -q "warning: .*deeper than 1024 frames" "$TMP/over.err"; then
		ok "$name ($truncated of $samples truncated, $most calls of recurse at most, a warning)"
	else
		fail "$name (${truncated:-no} of ${samples:-no} truncated, $most calls of recurse at most)"
		sed 's/^/#   /' "$TMP/over.err"
	fi
else
	fail "$name: profiler failed"
	sed 's/^/#   /' "$TMP/over.err"
fi

name=${names[3]}
if record fifty --max-frames 50 -- "$WORKLOADS/deep-nofp" 400 1; then
	samples=$(summary_count "$TMP/fifty.err" "on-CPU samples")
	truncated=$(summary_count "$TMP/fifty.err" "truncated stacks")
	most=$(most_recurse "$TMP/fifty.folded")
	if [[ ${samples:-0} -ge 100 && ${truncated:-0} -ge $((samples * 9 / 10)) &&
		$most -ge 40 && $most -le 50 ]] &&
		grep -q "warning: .*deeper than --max-frames" "$TMP/fifty.err"; then
		ok "$name ($truncated of $samples truncated, $most calls of recurse at most, a warning)"
	else
		fail "$name (${truncated:-no} of ${samples:-no} truncated, $most calls of recurse at most)"
		sed 's/^/#   /' "$TMP/fifty.err"
	fi
else
	fail "$name: profiler failed"
	sed 's/^/#   /' "$TMP/fifty.err"
fi
