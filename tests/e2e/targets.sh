# SPDX-License-Identifier: GPL-2.0-only
# Targets other than processes: one thread (-t), the whole machine (-a), and
# the processes of a cgroup v2 directory (--cgroup).
. "$(dirname "$0")/lib.sh"

require_bpf "-t profiles one thread" "-a profiles every process" \
	"--cgroup profiles the processes in the cgroup"

# alpha-worker's thread only: beta-worker, in the same process, is left out.
start_bg "$WORKLOADS/threads" 10
threads_pid=$BG_PID
sleep 0.3
tid=
for task in /proc/"$threads_pid"/task/*; do
	[[ $(cat "$task/comm" 2>/dev/null) == alpha-worker ]] && tid=${task##*/}
done
if [[ -z $tid ]]; then
	fail "-t profiles one thread: no alpha-worker thread in process $threads_pid"
elif "$PROFILER" -t "$tid" -F 199 -d 2 -o "$TMP/tid.pb.gz" 2>"$TMP/err"; then
	alpha=$(pct "$TMP/tid.pb.gz" alpha_work)
	beta=$(pct "$TMP/tid.pb.gz" beta_work)
	tids=$(tag_values "$TMP/tid.pb.gz" tid | paste -sd ' ')
	if within "$alpha" 100 5 && [[ $beta == 0 && $tids == "$tid" ]]; then
		ok "-t profiles one thread (alpha_work $alpha%, beta_work $beta%, tids $tids)"
	else
		fail "-t profiles one thread (alpha_work $alpha%, beta_work $beta%, expected 100 and 0;" \
			"tids ${tids:-none}, expected $tid)"
		pprof -top -nodecount=10 "$TMP/tid.pb.gz" 2>&1 | sed 's/^/#   /'
	fi
else
	fail "-t profiles one thread: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# The whole machine, with split and threads both busy and started before it.
start_bg "$WORKLOADS/split" 70 30 10
split_pid=$BG_PID
sleep 0.3
if "$PROFILER" -a -F 199 -d 2 -o "$TMP/all.pb.gz" 2>"$TMP/err"; then
	hot_a=$(pct "$TMP/all.pb.gz" hot_a cum -tagfocus=pid="$split_pid")
	hot_b=$(pct "$TMP/all.pb.gz" hot_b cum -tagfocus=pid="$split_pid")
	alpha=$(pct "$TMP/all.pb.gz" alpha_work cum -tagfocus=pid="$threads_pid")
	procs=$(tag_values "$TMP/all.pb.gz" comm | sort -u | paste -sd ' ')
	if within "$hot_a" 70 10 && within "$hot_b" 30 10 && within "$alpha" 50 10 &&
		[[ " $procs " == *" split "* && " $procs " == *" threads "* ]]; then
		ok "-a profiles every process (split: hot_a $hot_a%, hot_b $hot_b%;" \
			"threads: alpha_work $alpha%; processes: $procs)"
	else
		fail "-a profiles every process (split: hot_a $hot_a%, hot_b $hot_b%, expected 70/30±10;" \
			"threads: alpha_work $alpha%, expected 50±10; processes: ${procs:-none})"
		pprof -top -nodecount=15 "$TMP/all.pb.gz" 2>&1 | sed 's/^/#   /'
	fi
else
	fail "-a profiles every process: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi
kill "$threads_pid" "$split_pid" 2>/dev/null
wait "$threads_pid" "$split_pid" 2>/dev/null

# split inside a new cgroup, threads outside it.
root=$(cgroup2_root)
if [[ -z $root ]]; then
	skip "--cgroup profiles the processes in the cgroup" "no cgroup v2 hierarchy is mounted"
	exit 0
fi
# split goes one level down: --cgroup takes the cgroups below PATH too, as
# a service's cgroup holds its processes in sub-cgroups.
cg=$root/profiler-test-$$
if ! mkdir -p "$cg/inner" 2>"$TMP/err"; then
	skip "--cgroup profiles the processes in the cgroup" "cannot create $cg: $(cat "$TMP/err")"
	exit 0
fi
# Empty the cgroup and remove it, whatever happens; then lib.sh's cleanup.
remove_cgroup() {
	local pid
	for pid in $(cat "$cg/inner/cgroup.procs" 2>/dev/null) "${BG_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		rmdir "$cg/inner" "$cg" 2>/dev/null && break
		sleep 0.1
	done
	[[ -d $cg ]] && echo "# could not remove $cg" >&2
	cleanup
}
trap remove_cgroup EXIT

start_bg "$WORKLOADS/split" 70 30 5
inside=$BG_PID
start_bg "$WORKLOADS/threads" 5
outside=$BG_PID
if ! echo "$inside" >"$cg/inner/cgroup.procs" 2>"$TMP/err"; then
	fail "--cgroup profiles the processes in the cgroup: cannot move $inside into $cg/inner"
	sed 's/^/#   /' "$TMP/err"
	exit 0
fi
sleep 0.3
if "$PROFILER" --cgroup "$cg" -F 199 -d 2 -o "$TMP/cgroup.pb.gz" 2>"$TMP/err"; then
	hot_a=$(pct "$TMP/cgroup.pb.gz" hot_a)
	alpha=$(pct "$TMP/cgroup.pb.gz" alpha_work)
	pids=$(tag_values "$TMP/cgroup.pb.gz" pid | paste -sd ' ')
	if within "$hot_a" 70 10 && [[ $alpha == 0 && $pids == "$inside" ]]; then
		ok "--cgroup profiles the processes in the cgroup (hot_a $hot_a%, alpha_work $alpha%," \
			"pids $pids)"
	else
		fail "--cgroup profiles the processes in the cgroup (hot_a $hot_a%, expected 70±10;" \
			"alpha_work $alpha%, expected 0; pids ${pids:-none}, expected $inside;" \
			"threads outside is $outside)"
		pprof -top -nodecount=15 "$TMP/cgroup.pb.gz" 2>&1 | sed 's/^/#   /'
	fi
else
	fail "--cgroup profiles the processes in the cgroup: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi
