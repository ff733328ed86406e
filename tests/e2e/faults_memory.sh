# SPDX-License-Identifier: GPL-2.0-only
# Bounded memory: a workload that makes a new stack at nearly every sample
# fills --max-stacks; the stacks past it are counted in a "[stack table
# full]" bucket of their thread, said on stderr and written in every format,
# never silently lost.
. "$(dirname "$0")/lib.sh"

require_bpf "memory: stacks past --max-stacks are counted, not lost" \
	"memory: the overflow bucket is in every format"

if "$PROFILER" -F 999 --max-stacks 100 -o "$TMP/cap.folded" -o "$TMP/cap.pb.gz" \
	-o "$TMP/cap.json.gz" -o "$TMP/cap.svg" -- "$WORKLOADS/many_stacks" 2 2>"$TMP/err"; then
	samples=$(summary_count "$TMP/err" "on-CPU samples")
	overflowed=$(sed -n 's/.*(--max-stacks): \([0-9]*\) samples of newer stacks.*/\1/p' "$TMP/err")
	dropped=$(sed -n 's/.*counted as \[stack table full\], \([0-9]*\) dropped$/\1/p' "$TMP/err")
	stacks=$(grep -vc '\[stack table full\]' "$TMP/cap.folded")
	bucket=$(awk '/\[stack table full\] [0-9]+$/ { n += $NF } END { print n + 0 }' "$TMP/cap.folded")
	total=$(awk '{ n += $NF } END { print n + 0 }' "$TMP/cap.folded")
	state="$samples samples: $stacks stacks kept, $overflowed in the bucket (folded: $bucket), $dropped dropped"
	if [[ -n $overflowed && $overflowed -gt 0 && $stacks -le 100 && $bucket -eq $overflowed &&
		$((total + dropped)) -eq $samples ]]; then
		ok "memory: stacks past --max-stacks are counted, not lost ($state)"
	else
		fail "memory: stacks past --max-stacks are counted, not lost ($state, $total in folded)"
		sed 's/^/#   /' "$TMP/err"
	fi
	in_pprof=$(pprof -top -nodecount=1000 "$TMP/cap.pb.gz" 2>/dev/null | grep -c '\[stack table full\]$')
	in_firefox=$(gzip -dc "$TMP/cap.json.gz" | grep -c '\[stack table full\]')
	in_svg=$(grep -c '<title>\[stack table full\]' "$TMP/cap.svg")
	check "memory: the overflow bucket is in every format (pprof $in_pprof, Firefox $in_firefox, SVG $in_svg)" \
		test "$in_pprof" -ge 1 -a "$in_firefox" -ge 1 -a "$in_svg" -ge 1
else
	fail "memory: stacks past --max-stacks are counted, not lost: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi
