# SPDX-License-Identifier: GPL-2.0-only
# JIT-compiled Java methods are named without JVM flags: the profiler asks
# each JVM it sees for its perf map over the JVM's attach socket
# (collector/jvm.c). Split spends 70% of its CPU in hot70() and 30% in
# hot30(). The maps asked for are removed when the profiler ends, so that a
# second run asks again; a perf map the user gave is left alone.
. "$(dirname "$0")/lib.sh"

name="Java methods named without JVM flags"
sudo_name="Java methods named under sudo, the JVM running as the invoking user"
user_name="a user's perf map of a JVM is not overwritten"
again_name="a running JVM's perf map asked for under -p is removed, and a second run asks again"
nojava_name="--no-java: the JVM is never asked"
fix_name="a JVM's broken stacks: the warning names -XX:+PreserveFramePointer"
require_bpf "$name" "$sudo_name" "$user_name" "$again_name" "$nojava_name" "$fix_name"

java=$(command -v java)
if [[ -z $java || ! -f $WORKLOADS/Split.class ]]; then
	missing "java or $WORKLOADS/Split.class is missing (tools/install-deps, make workloads)" \
		"$name" "$sudo_name" "$user_name" "$again_name" "$nojava_name" "$fix_name"
	exit 0
fi

# Split's pid, from the first line it prints in FILE; empty if none.
split_pid() {
	awk '$1 == "Split:" && $2 == "pid" { print $3; exit }' "$1"
}

# Start Split for SECONDS in the background, printing to FILE; its pid in
# $pid, empty if it printed none within 5 seconds.
start_split() {
	start_bg "$java" -cp "$WORKLOADS" Split "$1" >"$2"
	for _ in $(seq 100); do
		pid=$(split_pid "$2")
		[[ -n $pid ]] && return
		sleep 0.05
	done
}

# "H70 H30": samples whose leaf is hot70(), hot30() in the folded FILE.
hot_counts() {
	awk '{ k = split($0, f, ";")
		if (f[k] ~ /Split\.hot70\(/) h70 += $NF; else if (f[k] ~ /Split\.hot30\(/) h30 += $NF }
		END { print h70 + 0, h30 + 0 }' "$1" 2>/dev/null
}

# From $TMP: the JVM may write hs_err files to its directory.
(cd "$TMP" && "$PROFILER" -v -F 499 -o "$TMP/java.folded" -- "$java" -cp "$WORKLOADS" Split 6 \
	>"$TMP/out" 2>"$TMP/err")
rc=$?
pid=$(split_pid "$TMP/out")
if [[ $rc -ne 0 ]]; then
	fail "$name: profiler failed (exit $rc)"
	sed 's/^/#   /' "$TMP/err"
elif [[ -z $pid ]] || ! grep -q "jvm: pid $pid: perf map asked for" "$TMP/err"; then
	fail "$name: no perf map asked for pid '$pid'"
	grep 'jvm' "$TMP/err" | sed 's/^/#   /'
elif [[ -e /tmp/perf-$pid.map ]]; then
	# Read by the symbolizer (the checks below), then removed by the mapper.
	fail "$name: the perf map asked for, '/tmp/perf-$pid.map', is still there"
	rm -f "/tmp/perf-$pid.map"
elif grep -q 'Full thread dump' "$TMP/out"; then
	fail "$name: SIGQUIT made the JVM dump its threads instead of starting its attach listener"
else
	# Samples by leaf frame: JIT names hold spaces ("long Split.hot70(long)_[j]").
	read -r total nr_java hot70 hot30 < <(awk '{ n = $NF; total += n; k = split($0, f, ";")
			if (f[1] == "java") java += n
			if (f[k] ~ /Split\.hot70\(/) h70 += n; else if (f[k] ~ /Split\.hot30\(/) h30 += n }
		END { print total + 0, java + 0, h70 + 0, h30 + 0 }' "$TMP/java.folded")
	share=$(awk -v a="$hot70" -v b="$hot30" 'BEGIN { if (a + b) printf "%.1f", 100 * a / (a + b) }')
	what="hot70 $hot70, hot30 $hot30 of $total samples ($nr_java of java): hot70 has $share%"
	if [[ $total -eq 0 || $nr_java -lt $((total / 2)) ]]; then
		fail "$name: too few samples of java ($what)"
	elif [[ $hot70 -eq 0 || $hot30 -eq 0 || $((hot70 + hot30)) -lt $((nr_java / 2)) ]]; then
		fail "$name: the methods are not named ($what)"
		sort -t' ' -k2 -rn "$TMP/java.folded" | head -5 | sed 's/^/#   /'
	elif within "$share" 70 5; then
		ok "$name ($what, expected 70±5)"
	else
		fail "$name ($what, expected 70±5)"
	fi
fi

# Without -XX:+PreserveFramePointer, stacks end in the JIT's code (most of
# Split's, 94% seen), and the warning that says so names the flag.
warning=$(grep 'of user stacks end before' "$TMP/err")
check "$fix_name (${warning#profiler: })" grep -q 'start the JVM with -XX:+PreserveFramePointer' <<<"$warning"

# Under sudo the command runs as the invoking user (nobody here), and the JVM
# answers only peers of its own uid and gid: the profiler connects as them,
# from the capabilities it kept. nobody runs it in a directory of its own.
mkdir -p "$TMP/nobody"
chmod 0711 "$TMP" && chmod 0777 "$TMP/nobody"
(cd "$TMP/nobody" && SUDO_UID=$(id -u nobody) SUDO_GID=$(id -g nobody) SUDO_USER=nobody \
	HOME=/root "$PROFILER" -v -F 499 -o "$TMP/nobody/java.folded" -- \
	"$java" -cp "$WORKLOADS" Split 4 >"$TMP/nobody/out" 2>"$TMP/nobody/err")
rc=$?
pid=$(split_pid "$TMP/nobody/out")
# The mapper removes the map nobody's JVM wrote, as nobody: /tmp is sticky.
left=no
[[ -n $pid && -e /tmp/perf-$pid.map ]] && left=$(stat -c %U "/tmp/perf-$pid.map")
[[ -n $pid ]] && rm -f "/tmp/perf-$pid.map"
read -r hot70 hot30 < <(hot_counts "$TMP/nobody/java.folded")
what="exit $rc, pid '$pid', hot70 $hot70, hot30 $hot30, map left: $left"
if [[ $rc -eq 0 && -n $pid && $left == no && $hot70 -gt 0 && $hot30 -gt 0 ]]; then
	ok "$sudo_name ($what)"
else
	fail "$sudo_name ($what)"
	grep -i 'jvm\|warn' "$TMP/nobody/err" | sed 's/^/#   /'
fi

# Under -p, a JVM that runs on: the map asked for is removed when the
# profiler exits, and a second profiler asks again (it would take a map left
# behind for the user's, and symbolize with it as it was).
start_split 12 "$TMP/again-out"
map=/tmp/perf-$pid.map
if [[ -z $pid || -e $map ]]; then
	fail "$again_name: no Split pid, or '$map' exists already"
else
	sleep 1
	result=
	for run in 1 2; do
		"$PROFILER" -v -F 499 -d 2 -o "$TMP/again$run.folded" -p "$pid" >/dev/null \
			2>"$TMP/again$run-err"
		rc=$?
		read -r hot70 hot30 < <(hot_counts "$TMP/again$run.folded")
		asked=$(grep -c "jvm: pid $pid: perf map asked for" "$TMP/again$run-err")
		left=no
		[[ -e $map ]] && left=yes
		result+="run $run: exit $rc, $asked requests, hot70 $hot70, hot30 $hot30, map left: $left; "
		if [[ $rc -ne 0 || $asked -eq 0 || $hot70 -eq 0 || $hot30 -eq 0 || $left != no ]]; then
			result="not $result"
			grep 'jvm' "$TMP/again$run-err" | sed 's/^/#   /'
			break
		fi
	done
	rm -f "$map"
	if [[ $result == not* ]]; then
		fail "$again_name (${result#not })"
	else
		ok "$again_name ($result)"
	fi
fi

# A map the user wrote before the profiler saw the JVM, under -p: kept as it is.
start_split 8 "$TMP/user-out"
map=/tmp/perf-$pid.map
if [[ -z $pid || -e $map ]]; then
	fail "$user_name: no Split pid, or '$map' exists already"
	exit 0
fi
echo "0 1 user_given_symbol" >"$map"
"$PROFILER" -vv -F 99 -d 2 -o "$TMP/user.folded" -p "$pid" >/dev/null 2>"$TMP/user-err"
rc=$?
content=$(cat "$map" 2>/dev/null)
rm -f "$map"
if [[ $rc -ne 0 ]]; then
	fail "$user_name: profiler failed (exit $rc)"
	grep -v 'snapshot' "$TMP/user-err" | tail -5 | sed 's/^/#   /'
elif ! grep -q "jvm: pid $pid: '/tmp/perf-$pid.map' exists and is not ours" "$TMP/user-err"; then
	fail "$user_name: the profiler did not see the JVM (pid $pid) or its map"
	grep 'jvm' "$TMP/user-err" | sed 's/^/#   /'
elif [[ $content != "0 1 user_given_symbol" ]] ||
	grep -q "jvm: pid $pid: perf map asked" "$TMP/user-err"; then
	fail "$user_name: the map was asked for, changed or removed"
else
	ok "$user_name"
fi

# --no-java: samples of the JVM, but no request, no SIGQUIT (no thread dump).
(cd "$TMP" && "$PROFILER" -v -F 499 --no-java -o "$TMP/nojava.folded" -- "$java" -cp "$WORKLOADS" \
	Split 2 >"$TMP/out" 2>"$TMP/err")
rc=$?
samples=$(summary_count "$TMP/err" "on-CPU samples")
check "$nojava_name (exit $rc, ${samples:-no} samples, $(grep -c 'perf map asked for' "$TMP/err") requests)" \
	bash -c '[[ $0 -eq 0 && ${1:-0} -gt 100 ]] && ! grep -q "perf map asked for" "$2" &&
		! grep -q "Full thread dump" "$3"' "$rc" "$samples" "$TMP/err" "$TMP/out"
