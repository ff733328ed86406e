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

# whole_at NAME ID WHAT: at least 95% of recording ID's weight reaches the
# first frame through the whole 400-deep recursion, over at least 200 of
# the summary's WHAT ("on-CPU samples" or "intervals off CPU").
whole_at() {
	local name=$1 id=$2 count pct
	count=$(summary_count "$TMP/$id.err" "$3")
	pct=$(whole_pct "$TMP/$id.folded" 400)
	if [[ ${count:-0} -ge 200 && $pct != none && $pct -ge 95 ]]; then
		ok "$name ($pct% over $count $3, at least 95%)"
	else
		fail "$name (${pct:-no}% over ${count:-no} $3, at least 95%)"
		sed 's/^/#   /' "$TMP/$id.err"
	fi
}

# On CPU, from a command's start: its first samples are unwound from their
# stack copy until its tables are loaded, the rest in the BPF program.
if record on -- "$WORKLOADS/deep-nofp" 400 2; then
	whole_at "${names[0]}" on "on-CPU samples"
else
	fail "${names[0]}: profiler failed"
	sed 's/^/#   /' "$TMP/on.err"
fi

# Off CPU (1 ms sleeps, weighed by time): the scheduler's switch unwinds the same way.
if record off --off-cpu -- "$WORKLOADS/deep-nofp" 400 2 sleep; then
	whole_at "${names[1]}" off "intervals off CPU"
else
	fail "${names[1]}: profiler failed"
	sed 's/^/#   /' "$TMP/off.err"
fi

# truncated_at NAME ID LOW HIGH WARNING: recording ID (made by record) has
# nearly all its stacks truncated, with LOW to HIGH calls of recurse at
# most, and a warning matching WARNING.
truncated_at() {
	local name=$1 id=$2 samples truncated most
	samples=$(summary_count "$TMP/$id.err" "on-CPU samples")
	truncated=$(summary_count "$TMP/$id.err" "truncated stacks")
	most=$(most_recurse "$TMP/$id.folded")
	if [[ ${samples:-0} -ge 100 && ${truncated:-0} -ge $((samples * 9 / 10)) &&
		$most -ge $3 && $most -le $4 ]] && grep -q "warning: .*$5" "$TMP/$id.err"; then
		ok "$name ($truncated of $samples truncated, $most calls of recurse at most, a warning)"
	else
		fail "$name (${truncated:-no} of ${samples:-no} truncated, $most calls of recurse at most)"
		sed 's/^/#   /' "$TMP/$id.err"
	fi
}

# Deeper than a stack holds: its innermost 1,024 frames, marked truncated.
if record over -- "$WORKLOADS/deep-nofp" 1200 1; then
	truncated_at "${names[2]}" over 1000 1024 "deeper than 1024 frames"
else
	fail "${names[2]}: profiler failed"
	sed 's/^/#   /' "$TMP/over.err"
fi

if record fifty --max-frames 50 -- "$WORKLOADS/deep-nofp" 400 1; then
	truncated_at "${names[3]}" fifty 40 50 "deeper than --max-frames"
else
	fail "${names[3]}: profiler failed"
	sed 's/^/#   /' "$TMP/fifty.err"
fi
