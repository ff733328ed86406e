# SPDX-License-Identifier: GPL-2.0-only
# Bad input to the target options (-a, -t, --cgroup): one line naming the
# cause, exit 2, and never an output file. No BPF is needed.
. "$(dirname "$0")/lib.sh"

[[ -x $PROFILER ]] || { skip "bad input: targets" "$PROFILER is not built"; exit 0; }

# expect NAME STATUS PATTERN ARGS...: the profiler exits with STATUS, prints
# one stderr line matching PATTERN, and leaves no file in $TMP/out (as in
# bad_input.sh).
expect() {
	local name=$1 status=$2 pattern=$3 rc lines
	shift 3
	rm -rf "$TMP/out" && mkdir -p "$TMP/out"
	(cd "$TMP/out" && "$PROFILER" "$@") >"$TMP/stdout" 2>"$TMP/stderr" </dev/null
	rc=$?
	lines=$(wc -l <"$TMP/stderr")
	if [[ $rc -eq $status && $lines -eq 1 ]] && grep -qE "$pattern" "$TMP/stderr" &&
		[[ -z $(ls -A "$TMP/out") ]]; then
		ok "bad input: $name (exit $rc: $(cat "$TMP/stderr"))"
	else
		fail "bad input: $name (exit $rc, expected $status; $lines stderr lines)"
		sed 's/^/#   /' "$TMP/stderr"
		ls -A "$TMP/out" | sed 's/^/#   left behind: /'
	fi
}

expect "-a and -p" 2 "cannot be combined" -a -p 1 -d 1
expect "-a and -t" 2 "cannot be combined" -a -t 1 -d 1
expect "-a and a command" 2 "cannot be combined" -a -- true
expect "--cgroup on a plain directory" 2 "'/tmp'.*not a cgroup v2 directory" --cgroup /tmp -d 1
expect "--cgroup that does not exist" 2 "'/nonexistent'" --cgroup /nonexistent -d 1
expect "bad tid" 2 "'abc'" -t abc -d 1

# A real cgroup v2 directory, so that only the combination is wrong.
if [[ $(stat -fc %T /sys/fs/cgroup 2>/dev/null) == cgroup2fs ]]; then
	cg2=/sys/fs/cgroup
else
	cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
fi
if [[ -n $cg2 ]]; then
	expect "-a and --cgroup" 2 "cannot be combined" -a --cgroup "$cg2" -d 1
else
	skip "bad input: -a and --cgroup" "no cgroup v2 hierarchy is mounted"
fi
# A cgroup v1 directory is a cgroup, but not a v2 one.
cg1=$(awk '$3 == "cgroup" { print $2; exit }' /proc/self/mounts)
if [[ -n $cg1 ]]; then
	expect "--cgroup on a cgroup v1 directory" 2 "not a cgroup v2 directory" --cgroup "$cg1" -d 1
else
	skip "bad input: --cgroup on a cgroup v1 directory" "no cgroup v1 hierarchy is mounted"
fi
