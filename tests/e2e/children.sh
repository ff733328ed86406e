# SPDX-License-Identifier: GPL-2.0-only
# Children are followed: processes a target forks later are profiled too,
# each under its own pid, also when they exec another program; --no-inherit
# keeps to the target itself.
. "$(dirname "$0")/lib.sh"

require_bpf "forked children are profiled" "each child has its own pid label" \
	"exec'd children are symbolized" "--no-inherit leaves children out"

# The parent only sleeps and waits: the CPU is its eight children's.
if "$PROFILER" -F 499 -o "$TMP/fork.pb.gz" -- "$WORKLOADS/forker" 8 150 50 2>"$TMP/err"; then
	share=$(pct "$TMP/fork.pb.gz" child_work cum)
	check "forked children are profiled (child_work on $share% of samples, expected >= 80)" \
		within "$share" 90 10
	pids=$(tag_count "$TMP/fork.pb.gz" pid -focus=child_work)
	check "each child has its own pid label ($pids pids run child_work, expected 8)" \
		test "$pids" -eq 8
else
	fail "forked children are profiled: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# Each child execs early_exit for 150 ms: a program first seen after exec,
# in a process the profiler did not start.
if "$PROFILER" -F 499 -o "$TMP/exec.pb.gz" -- "$WORKLOADS/forker" --exec 4 150 50 \
	2>"$TMP/err"; then
	share=$(pct "$TMP/exec.pb.gz" short_lived_work cum)
	raw=$(pprof -top -nodecount=100000 "$TMP/exec.pb.gz" 2>/dev/null | grep -c 'early_exit+0x')
	if within "$share" 85 15 && [[ $raw -eq 0 ]]; then
		ok "exec'd children are symbolized (short_lived_work on $share%, $raw early_exit+0x frames)"
	else
		fail "exec'd children are symbolized (short_lived_work on $share%, expected >= 70;" \
			"$raw unresolved early_exit+0x frames)"
		pprof -top -nodecount=15 "$TMP/exec.pb.gz" 2>&1 | sed 's/^/#   /'
	fi
else
	fail "exec'd children are symbolized: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# On CPU the parent has no samples to show that anything was profiled:
# wall-clock time has it waiting for its children all along, so the
# children's absence is read from a profile that holds the parent.
if "$PROFILER" --wall --no-inherit -F 499 -o "$TMP/noinherit.pb.gz" -- \
	"$WORKLOADS/forker" 8 150 50 2>"$TMP/err"; then
	share=$(pct "$TMP/noinherit.pb.gz" child_work cum)
	parent=$(pct "$TMP/noinherit.pb.gz" main cum)
	pids=$(tag_count "$TMP/noinherit.pb.gz" pid)
	# The parent's main holds most of the time, not all: an interval off CPU
	# that starts before its unwind tables are loaded keeps only the top of
	# its stack, which need not reach main: a slow profiler loads them later
	# (seen under ASan: main on 79%, with 4 truncated stacks).
	if within "$parent" 75 25 && [[ $pids -eq 1 ]] && within "$share" 0 5; then
		ok "--no-inherit leaves children out (child_work on $share%, the parent's main on $parent%)"
	else
		fail "--no-inherit leaves children out (child_work on $share%, expected <= 5;" \
			"main on $parent% in $pids processes, expected 50 to 100 in 1)"
		pprof -top -nodecount=15 "$TMP/noinherit.pb.gz" 2>&1 | sed 's/^/#   /'
	fi
else
	fail "--no-inherit leaves children out: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi
