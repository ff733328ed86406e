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

if "$PROFILER" -a -d 2 -f folded -o "$TMP/all.folded" 2>"$TMP/err"; then
	total=$(awk '{ n += $NF } END { print n + 0 }' "$TMP/all.folded")
	idle=$(awk '/^swapper;/ { n += $NF } END { print n + 0 }' "$TMP/all.folded")
	loop=$(grep -c '^swapper;.*do_idle' "$TMP/all.folded")
	said=$(summary_count "$TMP/err" "of which idle CPUs")
	if [[ $total -gt 0 && $idle -gt 0 && $loop -gt 0 && ${said:-none} == "$idle" ]]; then
		ok "-a: idle CPUs as swapper ($idle of $total samples, in the idle loop)"
	else
		fail "-a: idle CPUs as swapper ($idle of $total samples; $loop stacks in do_idle;" \
			"the summary says ${said:-none} idle)"
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
