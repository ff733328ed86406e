# SPDX-License-Identifier: GPL-2.0-only
# A recording with no samples still writes its profile (exit 0), and says in
# one warning why it is empty: the target was idle, its child processes
# (named) may do the work, the command exited at once, the cgroup is empty.
# A recording with samples says nothing of the kind.
. "$(dirname "$0")/lib.sh"

require_bpf "no samples: -p on a sleeping process" \
	"no samples: -p on a busy process, no warning" \
	"no samples: -p names the target's child processes" \
	"no samples: --off-cpu on a process asleep throughout" \
	"no samples: a command that exits at once" \
	"no samples: an empty cgroup" \
	"no samples: --alloc on a command that allocates too little"

# record NAME ARGS...: run the profiler ($name is NAME); its stderr in $TMP/NAME.err, its
# exit status in $rc, its "no samples" warnings in $warning (one a line).
record() {
	name=$1
	shift
	"$PROFILER" "$@" 2>"$TMP/$name.err"
	rc=$?
	warning=$(grep 'warning: no samples' "$TMP/$name.err")
}

# expect_warning WHAT PATTERN FILE: exit 0, FILE written, and one warning matching PATTERN.
expect_warning() {
	local what=$1 pattern=$2 file=$3
	if [[ $rc -eq 0 && -s $file && $(grep -c . <<<"$warning") -eq 1 ]] &&
		grep -qE "$pattern" <<<"$warning"; then
		ok "no samples: $what ($warning)"
	else
		fail "no samples: $what (exit $rc; want one warning matching /$pattern/)"
		sed "s/^/#   /" "$TMP/$name.err"
		sed 's/^/#   /' <<<"$warning"
	fi
}

# --- -p ----------------------------------------------------------------------------------------

start_bg sleep 60
asleep=$BG_PID
record sleeping -p "$asleep" -d 1 -o "$TMP/sleeping.pb.gz"
expect_warning "-p on a sleeping process" \
	"^profiler: warning: no samples: pid $asleep \(sleep\) did not run on a CPU during the recording" \
	"$TMP/sleeping.pb.gz"
[[ -n $warning ]] && warned=1 || warned=0

# The same recording of a process that works: samples, and no such warning.
start_bg "$WORKLOADS/split" 50 50 30
sleep 0.2
record busy -p "$BG_PID" -d 1 -o "$TMP/busy.pb.gz"
samples=$(summary_count "$TMP/busy.err" "on-CPU samples")
check "no samples: -p on a busy process, no warning ($samples samples; the sleeping one warned: $warned)" \
	test "$rc" -eq 0 -a "${samples:-0}" -gt 0 -a -z "$warning" -a "$warned" -eq 1

# A shell that waits for the child doing its work (here: sleeping too, so
# that the profile is empty whether or not -p follows children that exist
# before it starts): the warning names the child and how to profile it.
start_bg sh -c 'sleep 60 & echo $! >"$1"; wait' sh "$TMP/child.pid"
parent=$BG_PID
for ((i = 0; i < 200; i++)); do
	[[ -s $TMP/child.pid ]] && break
	sleep 0.01
done
child=$(cat "$TMP/child.pid")
BG_PIDS+=("$child")
record parent -p "$parent" -d 1 -o "$TMP/parent.pb.gz"
expect_warning "-p names the target's child processes (child $child)" \
	"pid $parent \(sh\) did not run.*its child process $child \(sleep\): -p $child profiles it" \
	"$TMP/parent.pb.gz"

# Off CPU, a process asleep since before the recording leaves no interval.
record offcpu --off-cpu -p "$asleep" -d 1 -o "$TMP/offcpu.pb.gz"
expect_warning "--off-cpu on a process asleep throughout" \
	"pid $asleep \(sleep\) neither ran on a CPU nor woke up during the recording" \
	"$TMP/offcpu.pb.gz"

# --- a command ---------------------------------------------------------------------------------

# true runs for a millisecond or so, one time in tens on a CPU when the
# 99 Hz clock fires: such a run has a sample and rightly no warning. The
# check is of a run without one: up to five tries.
for _ in 1 2 3 4 5; do
	record command -o "$TMP/command.pb.gz" -- true
	[[ $(summary_count "$TMP/command.err" "on-CPU samples") == 0 ]] && break
done
expect_warning "a command that exits at once" \
	"'true' exited after [0-9.]+ s, having run on a CPU too briefly to be sampled at 99 Hz" \
	"$TMP/command.pb.gz"

# Allocations are sampled by bytes: a command that allocates little is told
# of the rate, not of a clock. (One sample per GiB on average: the few KiB
# true allocates are sampled once in some hundred thousand runs.)
record alloc --alloc=1G -o "$TMP/alloc.pb.gz" -- true
expect_warning "--alloc on a command that allocates too little" \
	"'true' made too few allocations to be sampled at one sample per 1073741824 bytes on average: --alloc=1 records every one" \
	"$TMP/alloc.pb.gz"

# --- a cgroup ----------------------------------------------------------------------------------

cg2=$(cgroup2_root)
if [[ -n $cg2 ]] && mkdir "$cg2/profiler-e2e-empty.$$" 2>/dev/null; then
	record cgroup --cgroup "$cg2/profiler-e2e-empty.$$" -d 1 -o "$TMP/cgroup.pb.gz"
	rmdir "$cg2/profiler-e2e-empty.$$"
	expect_warning "an empty cgroup" \
		"cgroup '$cg2/profiler-e2e-empty.$$' holds no process, nor do the cgroups below it" \
		"$TMP/cgroup.pb.gz"
else
	skip "no samples: an empty cgroup" "no cgroup v2 hierarchy to make a cgroup in"
fi
