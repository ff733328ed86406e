# SPDX-License-Identifier: GPL-2.0-only
# -p takes the process tree as it is when profiling starts: a shell that
# only waits, whose child shell started the busy workload before the
# profiler did, two levels down. --no-inherit keeps to the shell itself.
# The outer shell wakes every 100 ms without forking, so that wall-clock
# time shows it (a process blocked since before profiling started shows
# nothing).
. "$(dirname "$0")/lib.sh"

require_bpf "-p takes the descendants running at the start" \
	"--no-inherit leaves the descendants out" \
	"a pid given and found as a descendant is taken once"

cat >"$TMP/inner.sh" <<EOF
"$WORKLOADS/split" 70 30 30 &
echo "\$\$ \$!" >"$TMP/pids.tmp" && mv "$TMP/pids.tmp" "$TMP/pids"
wait
EOF
cat >"$TMP/outer.sh" <<EOF
sh "$TMP/inner.sh" &
child=\$!
exec 3<>"$TMP/fifo"
while kill -0 "\$child" 2>/dev/null; do read -r -t 0.1 -u 3; done
EOF
mkfifo "$TMP/fifo"
start_bg bash "$TMP/outer.sh"
outer=$BG_PID
for _ in $(seq 100); do
	[[ -s $TMP/pids ]] && break
	sleep 0.1
done
read -r inner split <"$TMP/pids" 2>/dev/null
if [[ -z ${split:-} ]]; then
	for t in "-p takes the descendants running at the start" \
		"--no-inherit leaves the descendants out" \
		"a pid given and found as a descendant is taken once"; do
		fail "$t: the workload did not start"
	done
	exit 0
fi
BG_PIDS+=("$split" "$inner")

# The shells are idle: whatever is on CPU is split's, two levels below.
if "$PROFILER" -p "$outer" -F 199 -d 2 -o "$TMP/tree.pb.gz" 2>"$TMP/err"; then
	line=$(grep -m1 '^profiler: profiling ' "$TMP/err")
	hot_a=$(pct "$TMP/tree.pb.gz" hot_a)
	pids=$(tag_values "$TMP/tree.pb.gz" pid | paste -sd ' ')
	if [[ $line == "profiler: profiling pid $outer (bash) and its 2 descendants at 199 Hz" &&
		" $pids " == *" $split "* ]] && within "$hot_a" 70 10; then
		ok "-p takes the descendants running at the start (hot_a $hot_a% in pids $pids;" \
			"'${line#profiler: }')"
	else
		fail "-p takes the descendants running at the start (hot_a $hot_a%, expected 70±10;" \
			"pids ${pids:-none}, expected $split among them)"
		sed 's/^/#   /' "$TMP/err"
	fi
else
	fail "-p takes the descendants running at the start: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# On CPU the shell alone has next to no samples to show that anything was
# profiled: wall-clock time has it waiting all along, so split's absence is
# read from a profile that holds the shell.
if "$PROFILER" --wall --no-inherit -p "$outer" -F 199 -d 1 -o "$TMP/alone.pb.gz" 2>"$TMP/err"
then
	line=$(grep -m1 '^profiler: profiling ' "$TMP/err")
	hot_a=$(pct "$TMP/alone.pb.gz" hot_a)
	pids=$(tag_values "$TMP/alone.pb.gz" pid | paste -sd ' ')
	if [[ $pids == "$outer" && $line != *descendant* ]] && within "$hot_a" 0 0; then
		ok "--no-inherit leaves the descendants out (pids $pids, hot_a $hot_a%;" \
			"'${line#profiler: }')"
	else
		fail "--no-inherit leaves the descendants out (pids ${pids:-none}, expected $outer" \
			"alone; hot_a $hot_a%, expected 0)"
		sed 's/^/#   /' "$TMP/err"
	fi
else
	fail "--no-inherit leaves the descendants out: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# split is a -p target of its own: of outer's tree, only inner is new.
if "$PROFILER" -p "$outer,$split" -F 199 -d 1 -o "$TMP/both.pb.gz" 2>"$TMP/err"; then
	line=$(grep -m1 '^profiler: profiling ' "$TMP/err")
	hot_a=$(pct "$TMP/both.pb.gz" hot_a)
	want="profiler: profiling pid $outer (bash), pid $split (split) and their 1 descendant at 199 Hz"
	if [[ $line == "$want" ]] && within "$hot_a" 70 10; then
		ok "a pid given and found as a descendant is taken once ('${line#profiler: }';" \
			"hot_a $hot_a%)"
	else
		fail "a pid given and found as a descendant is taken once (hot_a $hot_a%)"
		sed 's/^/#   /' "$TMP/err"
	fi
else
	fail "a pid given and found as a descendant is taken once: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi
