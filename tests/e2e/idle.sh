# SPDX-License-Identifier: GPL-2.0-only
# -a samples idle CPUs too, as the process "swapper" with the kernel's idle
# loop for a stack (as perf shows them), so the profile tells how busy the
# machine was; --no-idle leaves them out. One busy thread runs on a machine
# of at least two CPUs, so at least one CPU is idle much of the time.
. "$(dirname "$0")/lib.sh"

TESTS=("-a: idle CPUs as swapper" "-a --no-idle: no swapper")
require_bpf "${TESTS[@]}"

start_bg "$WORKLOADS/sleeper" 30 10 10

# roots FILE: "NAME COUNT" per folded root (the process name), most first.
roots() {
	awk '{ split($1, f, ";"); n[f[1]] += $NF } END { for (r in n) print r, n[r] }' "$1" |
		sort -k2 -nr
}

# idle_ticks: the machine's idle time so far, in clock ticks, all CPUs.
idle_ticks() {
	awk '$1 == "cpu" { print $5 + $6; exit }' /proc/stat
}

before=$(idle_ticks)
if "$PROFILER" -a -d 2 -f folded -o "$TMP/all.folded" 2>"$TMP/err"; then
	# What the machine says its CPUs idled meanwhile, in samples at 99 Hz:
	# on a machine others keep busy there may be none to see (idle in many
	# short stretches, its CPUs were sampled idle 4 times for 62 samples'
	# worth of idle time, once), so under about a CPU-second the test skips.
	expected=$(awk -v a="$before" -v b="$(idle_ticks)" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%d", (b - a) / hz * 99 }')
	total=$(awk '{ n += $NF } END { print n + 0 }' "$TMP/all.folded")
	idle=$(awk '/^swapper;/ { n += $NF } END { print n + 0 }' "$TMP/all.folded")
	loop=$(grep -c '^swapper;.*do_idle' "$TMP/all.folded")
	said=$(summary_count "$TMP/err" "of which idle CPUs")
	if [[ $total -gt 0 && $idle -gt 0 && $loop -gt 0 && ${said:-none} == "$idle" ]]; then
		ok "-a: idle CPUs as swapper ($idle of $total samples, in the idle loop; /proc/stat's idle time: $expected samples' worth)"
	elif [[ $total -gt 0 && $idle -eq 0 && $expected -lt 100 ]]; then
		busy "${TESTS[0]}" "/proc/stat counts $expected samples' worth of idle time in the 2 s (the machine is busy)"
		busy "${TESTS[1]}" "none to leave out"
		exit 0
	else
		fail "-a: idle CPUs as swapper ($idle of $total samples; $loop stacks in do_idle;" \
			"the summary says ${said:-none} idle; /proc/stat's idle time: $expected samples' worth)"
		roots "$TMP/all.folded" | head -5 | sed 's/^/#   /'
	fi
else
	fail "-a: idle CPUs as swapper: profiler failed"
	sed 's/^/#   /' "$TMP/err"
	idle=0
fi

if "$PROFILER" -a --no-idle -d 2 -f folded -o "$TMP/busy.folded" 2>"$TMP/err"; then
	sleeper=$(awk '/^sleeper;/ { n += $NF } END { print n + 0 }' "$TMP/busy.folded")
	swapper=$(grep -c '^swapper;' "$TMP/busy.folded")
	# Only meaningful when the run with idle CPUs had some, and this one sampled.
	if [[ $idle -gt 0 && $sleeper -gt 0 && $swapper -eq 0 ]]; then
		ok "-a --no-idle: no swapper ($sleeper samples of sleeper)"
	else
		fail "-a --no-idle: no swapper ($swapper swapper stacks, $sleeper samples of" \
			"sleeper; $idle idle samples without --no-idle)"
	fi
else
	fail "-a --no-idle: no swapper: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi
