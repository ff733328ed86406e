# SPDX-License-Identifier: GPL-2.0-only
# Stacks through code without frame pointers: a gcc leaf that sets up no
# frame (default mode repairs its caller from CFI), a program with no frame
# pointers at all and a path through the C library (--call-graph dwarf),
# each checked against known shares and against perf on the same workload.
. "$(dirname "$0")/lib.sh"

# Its cases report 21 checks in all, some several each.
require_bpf --plan 21 "unwind: default mode finds a frameless leaf's callers" \
	"unwind: --call-graph fp misses them" "unwind: --call-graph dwarf without frame pointers" \
	"unwind: stacks through qsort" "unwind: a short stack copy is counted as truncated" \
	"unwind: perf agrees" "unwind: off-CPU time through a C library wrapper" \
	"unwind: off-CPU stacks without frame pointers"

# perf_shares DATA: among perf's samples in leaf(), the percentages whose
# stack holds caller_a, caller_b and main, from `perf script`, then the
# number of those samples. With none, the percentages are "none" (which no
# check takes for a number).
perf_shares() {
	perf script -i "$1" -F ip,sym 2>/dev/null | awk 'BEGIN { RS = "" }
		/ leaf\n/ { n++; if (/ caller_a\n/) a++; if (/ caller_b\n/) b++; if (/ main\n/) m++ }
		END { if (!n) { print "none none none 0"; exit }
			printf "%.1f %.1f %.1f %d\n", 100 * a / n, 100 * b / n, 100 * m / n, n }'
}

# folded_share FILE PATTERN WITHIN: the percentage of the counts (samples, or
# microseconds off CPU) of stacks matching WITHIN (an awk regular
# expression) that also match PATTERN; "none" when no stack matches WITHIN
# (or FILE cannot be read), so that no check passes on an empty profile.
folded_share() {
	awk -v p="$2" -v w="$3" '{ n = $NF } $0 ~ w { total += n; if ($0 ~ p) hit += n }
		END { if (total) printf "%.1f", 100 * hit / total; else print "none" }' "$1"
}

# folded_count FILE WITHIN: the counts of the stacks matching WITHIN.
folded_count() {
	awk -v w="$2" '$0 ~ w { n += $NF } END { print n + 0 }' "$1"
}

# truncated_count STDERR: the "truncated stacks: N" of the profiler's summary.
truncated_count() {
	summary_count "$1" "truncated stacks"
}

profile() {
	local name=$1
	shift
	if ! "$PROFILER" -F 499 "$@" 2>"$TMP/err"; then
		fail "$name: profiler failed"
		sed 's/^/#   /' "$TMP/err"
		return 1
	fi
}

# gcc -O2 -fno-omit-frame-pointer: leaf() has no frame, so the kernel's
# frame-pointer walk goes from leaf() to main(). The default mode puts the
# caller back from leaf()'s CFI.
name="unwind: default mode finds a frameless leaf's callers"
if profile "$name" -o "$TMP/leaf.pb.gz" -- "$WORKLOADS/frameless" 70 30 4; then
	share_is "$name" "$TMP/leaf.pb.gz" caller_a 70 5
	share_is "$name" "$TMP/leaf.pb.gz" caller_b 30 5
fi

# What the walk misses is only missing if the stacks were read: leaf() must
# be there, with main() right above it, before caller_a's absence counts.
name="unwind: --call-graph fp misses them"
if profile "$name" --call-graph fp -o "$TMP/fp.pb.gz" -o "$TMP/fp.folded" -- \
	"$WORKLOADS/frameless" 70 30 1; then
	leaf=$(folded_count "$TMP/fp.folded" ';leaf(;|$| )')
	direct=$(folded_share "$TMP/fp.folded" ';main;leaf(;|$| )' ';leaf(;|$| )')
	got=$(pct "$TMP/fp.pb.gz" caller_a)
	check "$name: $leaf samples in leaf, $direct% of them right under main" \
		test "$leaf" -ge 50 -a "${direct%.*}" -ge 95
	if [[ $leaf -ge 50 && ${direct%.*} -ge 95 ]] && within "$got" 0 5; then
		ok "$name: caller_a on $got% of stacks, as the kernel's walk sees them"
	else
		fail "$name: caller_a on $got% of stacks, as the kernel's walk sees them" \
			"(expected 0±5, with leaf on at least 50 stacks right under main)"
	fi
fi
if perf record -q -F 499 --call-graph fp -o "$TMP/perf-fp.data" -- \
	"$WORKLOADS/frameless" 70 30 1 >/dev/null 2>"$TMP/perf.err"; then
	read -r a b m n < <(perf_shares "$TMP/perf-fp.data")
	msg="so does perf record --call-graph fp (caller_a $a%, caller_b $b%, main $m%"
	if [[ $n -ge 50 ]] && within "$m" 100 5 && within "$a" 0 5; then
		ok "$name: $msg of $n samples in leaf)"
	else
		fail "$name: $msg of $n samples in leaf, expected at least 50 with main on 95%)"
	fi
else
	fail "$name: perf record --call-graph fp failed"
	sed 's/^/#   /' "$TMP/perf.err"
fi

# -fomit-frame-pointer: only CFI finds any caller.
name="unwind: --call-graph dwarf without frame pointers"
if profile "$name" --call-graph dwarf -o "$TMP/nofp.pb.gz" -o "$TMP/nofp.folded" -- \
	"$WORKLOADS/frameless-nofp" 70 30 4; then
	share_is "$name" "$TMP/nofp.pb.gz" caller_a 70 5
	share_is "$name" "$TMP/nofp.pb.gz" caller_b 30 5
	ours=$(pct "$TMP/nofp.pb.gz" caller_a)
	whole=$(folded_share "$TMP/nofp.folded" ';_start;.*;main;caller_[ab];leaf(;|$| )' ';leaf(;| )')
	check "$name: $whole% of stacks in leaf run whole from _start" within "$whole" 100 1
	# A rare sample may still end in code whose caller nothing tells (a
	# vDSO or dynamic-linker entry point without CFI): at most 1%.
	cut=$(truncated_count "$TMP/err")
	all=$(summary_count "$TMP/err" "on-CPU samples")
	check "$name: $cut of $all stacks truncated" test "$((${cut:-1000} * 100))" -le "${all:-0}"
	if perf record -q -F 499 --call-graph dwarf -o "$TMP/perf-dwarf.data" -- \
		"$WORKLOADS/frameless-nofp" 70 30 4 >/dev/null 2>"$TMP/perf.err"; then
		read -r a b m n < <(perf_shares "$TMP/perf-dwarf.data")
		msg="perf record --call-graph dwarf has caller_a $a% (ours $ours%), main $m%"
		if [[ $n -ge 200 ]] && within "$a" "$ours" 5; then
			ok "unwind: perf agrees: $msg of $n samples in leaf"
		else
			fail "unwind: perf agrees: $msg of $n samples in leaf (expected at least 200)"
		fi
	else
		fail "unwind: perf agrees: perf record --call-graph dwarf failed"
		sed 's/^/#   /' "$TMP/perf.err"
	fi
fi

# The comparator is called from inside the C library, which has no frame
# pointers: compare, qsort and the caller, in that order.
name="unwind: stacks through qsort"
if profile "$name" --call-graph dwarf -o "$TMP/qsort.folded" -- "$WORKLOADS/qsort_cmp" 3; then
	order=$(folded_share "$TMP/qsort.folded" \
		';main;sort_all;(__)?qsort(_r)?(;[^;]+)*;compare(;|$| )' ';compare(;| )')
	check "$name: $order% of stacks in compare run main;sort_all;qsort...;compare" \
		within "$order" 100 2
fi

# 64 bytes of stack cannot hold the frames of qsort's recursion: those
# stacks are cut short, and said to be.
name="unwind: a short stack copy is counted as truncated"
if profile "$name" --call-graph dwarf=64 -o "$TMP/short.pb.gz" -- "$WORKLOADS/qsort_cmp" 1; then
	cut=$(truncated_count "$TMP/err")
	check "$name: $cut stacks truncated" test "${cut:-0}" -gt 0
	comment=$(pprof -comments "$TMP/short.pb.gz" 2>/dev/null | grep 'truncated stacks')
	check "$name: the profile says '$comment'" test "$comment" = "truncated stacks: $cut"
fi

# Off CPU, every thread is inside a system call wrapper, and poll() sets up
# no frame: the default mode puts wait_a() and wait_b() back under it.
name="unwind: off-CPU time through a C library wrapper"
if profile "$name" --off-cpu -o "$TMP/off.folded" -- "$WORKLOADS/blocker" 7 3 3; then
	a=$(folded_share "$TMP/off.folded" ';wait_a;(__)?poll;' ';(__)?poll;')
	b=$(folded_share "$TMP/off.folded" ';wait_b;(__)?poll;' ';(__)?poll;')
	check "$name: wait_a has $a% of the time blocked in poll (expected 70±5)" within "$a" 70 5
	check "$name: wait_b has $b% (expected 30±5)" within "$b" 30 5
fi
if profile "$name" --off-cpu --call-graph fp -o "$TMP/off-fp.folded" -- "$WORKLOADS/blocker" 7 3 1; then
	blocked=$(folded_count "$TMP/off-fp.folded" ';(__)?poll;')
	direct=$(folded_share "$TMP/off-fp.folded" ';main;(__)?poll;' ';(__)?poll;')
	a=$(folded_share "$TMP/off-fp.folded" ';wait_[ab];(__)?poll;' ';(__)?poll;')
	msg="--call-graph fp misses them ($a%; $blocked us blocked in poll, $direct% right under main)"
	if [[ $blocked -ge 500000 && ${direct%.*} -ge 95 ]] && within "$a" 0 5; then
		ok "$name: $msg"
	else
		fail "$name: $msg"
	fi
fi

# gcc -O2 -fomit-frame-pointer: no frame pointer anywhere, so off CPU only
# CFI finds poll()'s callers and theirs (issue 13's acceptance): 70/30, and
# main() on every stack. A process's first intervals off CPU may come
# before its unwind tables are loaded, and the issue lets those be cut
# short if they are counted as truncated: so main() must be on at least 99%
# of the time blocked in poll (the first interval is 7 ms of the 3 s; 1%
# would be four), and each interval in poll without it must be among the
# truncated stacks the profiler counts.
name="unwind: off-CPU stacks without frame pointers"
if profile "$name" --off-cpu -o "$TMP/off-nofp.folded" -o "$TMP/off-nofp.pb.gz" -- \
	"$WORKLOADS/blocker-nofp" 7 3 3; then
	blocked=$(awk '/;(__)?poll;/ { n += $NF } END { print n + 0 }' "$TMP/off-nofp.folded")
	a=$(folded_share "$TMP/off-nofp.folded" ';wait_a;(__)?poll;' ';(__)?poll;')
	b=$(folded_share "$TMP/off-nofp.folded" ';wait_b;(__)?poll;' ';(__)?poll;')
	m=$(folded_share "$TMP/off-nofp.folded" ';main;wait_[ab];(__)?poll;' ';(__)?poll;')
	check "$name: $blocked us blocked in poll (expected at least 2 s of the 3)" \
		test "$blocked" -ge 2000000
	check "$name: wait_a has $a% of the time blocked in poll (expected 70±5)" within "$a" 70 5
	check "$name: wait_b has $b% (expected 30±5)" within "$b" 30 5
	# The first intervals, before the tables load, may stop short: counted (below).
	if awk -v m="$m" 'BEGIN { exit !(m >= 97) }'; then
		ok "$name: main calls them on $m% of the time blocked in poll (expected >= 97)"
	else
		fail "$name: main calls them on $m% of the time blocked in poll (expected >= 97)"
		grep -vE ';main;wait_[ab];(__)?poll;' "$TMP/off-nofp.folded" | sort -t' ' -k2 -nr |
			head -5 | sed 's/^/#   /'
	fi
	# Intervals (pprof's samples/count; folded counts microseconds) in
	# poll, and those without main: go tool pprof -traces prints each
	# stack leaf first, its count beside the leaf.
	read -r polls without < <(pprof -traces -sample_index=samples "$TMP/off-nofp.pb.gz" \
		2>/dev/null | awk '
		function flush() {
			if (stack ~ /;(__)?poll;/) { p += n; if (stack !~ /;(__)?poll;wait_[ab];main;/) w += n }
			stack = ""; n = 0
		}
		/^-+\+-+$/ { flush(); in_stack = 1; next }
		!in_stack || /^ +[a-z]+: / { next }
		$1 ~ /^[0-9]+$/ && !n { n = $1; stack = ";" $2 ";"; next }
		{ stack = stack $1 ";" }
		END { flush(); print p + 0, w + 0 }')
	cut=$(truncated_count "$TMP/err")
	check "$name: $without of $polls intervals in poll lack main, $cut stacks counted as truncated" \
		test "$polls" -gt 0 -a "$without" -le "${cut:-0}"
fi
