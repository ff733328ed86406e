# SPDX-License-Identifier: GPL-2.0-only
# Bad input to the target options (-a, -t, --cgroup): one line naming the
# cause, exit 2 (1 for a cgroup v1 directory), and never an output file. No
# BPF is needed.
. "$(dirname "$0")/lib.sh"

[[ -x $PROFILER ]] || { skip "bad input: targets" "$PROFILER is not built"; exit 0; }

expect "-a and -p" 2 "cannot be combined" -a -p 1 -d 1
expect "-a and -t" 2 "cannot be combined" -a -t 1 -d 1
expect "-a and a command" 2 "cannot be combined" -a -- true
expect "--cgroup on a plain directory" 2 "'/tmp'.*not a cgroup v2 directory" --cgroup /tmp -d 1
expect "--cgroup that does not exist" 2 "'/nonexistent'" --cgroup /nonexistent -d 1
expect "bad tid" 2 "'abc'" -t abc -d 1

# A real cgroup v2 directory, so that only the combination is wrong.
cg2=$(cgroup2_root)
if [[ -n $cg2 ]]; then
	expect "-a and --cgroup" 2 "cannot be combined" -a --cgroup "$cg2" -d 1
else
	skip "bad input: -a and --cgroup" "no cgroup v2 hierarchy is mounted"
fi
# A cgroup v1 directory is a cgroup, but not a v2 one: not the command
# line's fault but the system's, so exit 1, saying where v2 is. Without a v1
# hierarchy mounted, root mounts a named one with no controllers.
cg1=$(awk '$3 == "cgroup" { print $2; exit }' /proc/self/mounts)
if [[ -z $cg1 && $(id -u) -eq 0 ]] && mkdir -p "$TMP/cg1" &&
	mount -t cgroup -o none,name=profiler-e2e none "$TMP/cg1" 2>/dev/null; then
	cg1=$TMP/cg1
fi
if [[ -n $cg1 ]]; then
	expect "--cgroup on a cgroup v1 directory" 1 \
		"'$cg1' is a cgroup v1 directory, and --cgroup needs cgroup v2" --cgroup "$cg1" -d 1
else
	skip "bad input: --cgroup on a cgroup v1 directory" \
		"no cgroup v1 hierarchy is mounted, and none can be"
fi
if [[ $cg1 == "$TMP/cg1" ]]; then
	umount "$TMP/cg1"
fi
