# SPDX-License-Identifier: GPL-2.0-only
# Bad input: one line naming the cause, exit 2 for usage and 1 for runtime
# failures, and never an output file.
. "$(dirname "$0")/lib.sh"

[[ -x $PROFILER ]] || { skip "bad input" "$PROFILER is not built"; exit 0; }

max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
free_pid=$(($(cat /proc/sys/kernel/pid_max) - 1))
while kill -0 "$free_pid" 2>/dev/null; do free_pid=$((free_pid - 1)); done

expect "no target" 2 "nothing to profile" -d 1
expect "-F 0" 2 "invalid frequency '0'" -F 0 -p 1
expect "-F above the kernel's limit" 2 "perf_event_max_sample_rate" -F $((max + 1)) -p 1
expect "unknown format" 2 "unknown format 'xml'" -f xml -p 1
expect "unknown extension" 2 "cannot tell the format of 'out.xyz'" -o out.xyz -p 1
expect "-p and a command" 2 "cannot be combined" -p 1 -- true
expect "bad pid" 2 "invalid pid 'abc'" -p abc
expect "unknown option" 2 "unknown option" --bogus -p 1
expect "bad duration" 2 "invalid duration" -d -3 -p 1
expect "pid that does not exist" 1 "no such process $free_pid" -p "$free_pid" -o x.pb.gz
expect "output directory missing" 1 "cannot write '/nonexistent/dir/x.pb.gz'" \
	-o /nonexistent/dir/x.pb.gz -p 1
expect "one of several outputs' directory missing" 1 "cannot write '/nonexistent/dir/x.svg'" \
	-o x.pb.gz -o /nonexistent/dir/x.svg -p 1
expect "the same output twice" 2 "'x.pb.gz' given twice" -o x.pb.gz -o x.pb.gz -p 1
expect "an unknown extension among several outputs" 2 "cannot tell the format of 'x.xyz'" \
	-o x.pb.gz -o x.xyz -p 1
expect "command that cannot run" 1 "cannot execute 'no-such-command-xyz'" \
	-o x.pb.gz -- no-such-command-xyz
# Without privilege: drop root the way a user without CAP_BPF would run it.
# The line says what is missing and to run it as root, never to lower a
# sysctl: those it names are facts about the machine, not advice.
if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null; then
	chmod 0755 "$TMP"
	RUN_AS=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	expect "no privilege" 1 \
		"needs root, or (CAP_BPF and CAP_PERFMON, and this process has neither|CAP_SYS_ADMIN on this kernel, and this process lacks it) \(kernel\.perf_event_paranoid=-?[0-9]+, kernel\.unprivileged_bpf_disabled=-?[0-9]+ here\): run it as root or with sudo$" \
		-d 1 -o x.pb.gz -p 1
	# Root without CAP_PERFMON (nor CAP_SYS_ADMIN, which also grants it).
	if [[ $(cat /proc/sys/kernel/cap_last_cap) -ge 39 ]]; then
		RUN_AS=(setpriv --bounding-set=-perfmon,-sys_admin)
		expect "root without CAP_PERFMON" 1 \
			"and this process lacks CAP_PERFMON .*: run it as root or with sudo$" \
			-d 1 -o x.pb.gz -p 1
	else
		skip "bad input: root without CAP_PERFMON" "a kernel before 5.8 has no CAP_PERFMON"
	fi
	RUN_AS=()
else
	skip "bad input: no privilege" "needs root and setpriv to drop privileges"
	skip "bad input: root without CAP_PERFMON" "needs root and setpriv to drop privileges"
fi
# Root of a user namespace, as in a container: every capability, in that
# namespace only.
if [[ $(id -u) -eq 0 ]] && unshare -Ur true 2>/dev/null; then
	RUN_AS=(unshare -Ur)
	expect "capabilities of a user namespace only" 1 \
		"has CAP_BPF and CAP_PERFMON in its own user namespace only .*: run it outside, as root or with sudo$" \
		-d 1 -o x.pb.gz -p 1
	RUN_AS=()
else
	skip "bad input: capabilities of a user namespace only" "cannot make a user namespace here"
fi
