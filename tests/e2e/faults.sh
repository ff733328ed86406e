# SPDX-License-Identifier: GPL-2.0-only
# Faults: targets that die, exec, lose their files or hide in /proc; outputs
# that cannot be written; signals at any moment; a reader that goes away.
# Each ends with a one-line reason, a documented exit status (0 with a
# profile, 1 for a failure, 128 + N for signal N before the profile was
# written), and either a complete output file or none.
. "$(dirname "$0")/lib.sh"

require_bpf "faults: target killed mid-profile" "faults: command killed mid-profile" \
	"faults: exec mid-profile" "faults: mapped files deleted or replaced" \
	"faults: /proc/PID hidden" "faults: full disk" "faults: /dev/full" \
	"faults: signals at any moment" "faults: signal while symbolizing" \
	"faults: reader of stdout exits early"

# Temporary files the profiler would have left beside its outputs.
leftovers() {
	find "$@" -name '.profiler-*' 2>/dev/null | wc -l
}

# Lines on stderr that are not progress or the summary.
messages() {
	grep -vE '^profiler: (profiling |on-CPU samples: |truncated stacks: |frames: |wrote |stopped .* when profiling ended)' "$1"
}

# --- the target dies ---------------------------------------------------------

start_bg "$WORKLOADS/split" 50 50 30
victim=$BG_PID
"$PROFILER" -p "$victim" -F 199 -o "$TMP/killed.pb.gz" 2>"$TMP/err" &
prof=$!
wait_for "$TMP/err" "profiling pid" 10
sleep 0.5
kill -KILL "$victim"
SECONDS=0
timeout 20 tail --pid="$prof" -f /dev/null
wait "$prof"
rc=$?
if [[ $rc -eq 0 && $SECONDS -le 5 ]] &&
	pprof -top "$TMP/killed.pb.gz" 2>/dev/null | grep ' hot_a$' >/dev/null; then
	ok "faults: target killed mid-profile (exit 0 after ${SECONDS}s, profile written)"
else
	fail "faults: target killed mid-profile (exit $rc after ${SECONDS}s)"
	sed 's/^/#   /' "$TMP/err"
fi

# The command itself is killed: its end is reported, the profile written.
"$PROFILER" -F 199 -o "$TMP/cmdkilled.pb.gz" -- "$WORKLOADS/split" 50 50 30 2>"$TMP/err" &
prof=$!
wait_for "$TMP/err" "profiling '" 10
sleep 0.5
kill -KILL "$(sed -n "s/^profiler: profiling '.*' (pid \([0-9]*\)).*/\1/p" "$TMP/err")"
wait "$prof"
rc=$?
if [[ $rc -eq 0 ]] && grep -q "'.*split' was killed by signal 9" "$TMP/err" &&
	pprof -top "$TMP/cmdkilled.pb.gz" 2>/dev/null | grep ' hot_a$' >/dev/null; then
	ok "faults: command killed mid-profile ($(grep 'killed by' "$TMP/err"))"
else
	fail "faults: command killed mid-profile (exit $rc)"
	sed 's/^/#   /' "$TMP/err"
fi

# --- the target execs another binary -------------------------------------------

if "$PROFILER" -F 499 -o "$TMP/exec.folded" -- "$WORKLOADS/execer" 0.5 \
	"$WORKLOADS/split" 50 50 0.5 2>"$TMP/err"; then
	before=$(awk '/;before_exec(;| )/ { n += $NF } END { print n + 0 }' "$TMP/exec.folded")
	after=$(awk '/;hot_a(;| )/ { n += $NF } END { print n + 0 }' "$TMP/exec.folded")
	pids=$(awk -F';' '{ print $1 }' "$TMP/exec.folded" | sort -u | tr '\n' ' ')
	check "faults: exec mid-profile names both binaries' functions (before_exec $before, hot_a $after samples; processes $pids)" \
		test "$before" -ge 20 -a "$after" -ge 10
else
	fail "faults: exec mid-profile: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# --- mapped files deleted or replaced ---------------------------------------------

# A copy of uses_lib and its library: the library is deleted, the program
# replaced by another file under its name, both before the profiler starts.
mkdir -p "$TMP/gone"
cp "$WORKLOADS/uses_lib" "$WORKLOADS/libhot.so" "$TMP/gone/"
start_bg "$TMP/gone/uses_lib" 30
sleep 0.3
rm "$TMP/gone/libhot.so"
cp "$WORKLOADS/split" "$TMP/gone/uses_lib.new"
mv "$TMP/gone/uses_lib.new" "$TMP/gone/uses_lib"
if "$PROFILER" -p "$BG_PID" -F 499 -d 1 -o "$TMP/gone.folded" 2>"$TMP/err"; then
	lib=$(folded_leaf_pct "$TMP/gone.folded" lib_hot_loop)
	caller=$(grep -c ';call_library;lib_hot_loop' "$TMP/gone.folded")
	unnamed=$(grep -cE '(uses_lib|libhot\.so)\+0x' "$TMP/gone.folded")
	check "faults: mapped files deleted or replaced are still symbolized (lib_hot_loop $lib%, $caller stacks through call_library, $unnamed unnamed)" \
		test "$lib" -ge 80 -a "$caller" -ge 1 -a "$unnamed" -eq 0
else
	fail "faults: mapped files deleted or replaced: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi
kill "$BG_PID" 2>/dev/null

# --- /proc/PID hidden --------------------------------------------------------------

# The profiler runs as nobody with only CAP_BPF and CAP_PERFMON, in a mount
# namespace whose /proc is mounted hidepid=invisible: root's process is
# sampled, but its /proc entry is not there.
if command -v unshare >/dev/null && command -v setpriv >/dev/null; then
	chmod 0755 "$TMP"
	mkdir -m 0777 "$TMP/hidden"
	start_bg "$WORKLOADS/split" 50 50 30
	unshare -m --propagation private sh -c '
		mount -t proc -o hidepid=invisible proc /proc || exit 99
		exec setpriv --reuid=nobody --regid=nogroup --clear-groups \
			--inh-caps=+bpf,+perfmon --ambient-caps=+bpf,+perfmon \
			"$0" -p "$1" -d 1 -F 199 -o "$2"' \
		"$PROFILER" "$BG_PID" "$TMP/hidden/hidden.folded" 2>"$TMP/err"
	rc=$?
	kill "$BG_PID"
	samples=$(awk '{ n += $NF } END { print n + 0 }' "$TMP/hidden/hidden.folded" 2>/dev/null)
	if [[ $rc -eq 99 ]]; then
		skip "faults: /proc/PID hidden" "cannot mount a hidepid /proc: $(cat "$TMP/err")"
	elif [[ $rc -eq 0 && $samples -gt 0 ]] && grep -q "cannot read /proc/$BG_PID" "$TMP/err" &&
		grep -q "^profiler: 1 processes with unreadable maps (" "$TMP/err"; then
		ok "faults: /proc/PID hidden: profiled without maps ($samples samples; $(messages "$TMP/err" | head -1))"
	else
		fail "faults: /proc/PID hidden (exit $rc, $samples samples)"
		sed 's/^/#   /' "$TMP/err"
	fi
else
	skip "faults: /proc/PID hidden" "needs unshare and setpriv"
fi

# --- outputs that cannot be written ---------------------------------------------------

mkdir -p "$TMP/full"
if mount -t tmpfs -o size=64k tmpfs "$TMP/full" 2>"$TMP/err"; then
	dd if=/dev/zero of="$TMP/full/fill" bs=4k count=100 status=none 2>/dev/null
	"$PROFILER" -F 499 -o "$TMP/full/out.json" -- "$WORKLOADS/split" 50 50 0.5 2>"$TMP/err"
	rc=$?
	msg=$(messages "$TMP/err")
	check "faults: full disk: exit 1, one line, no file ($msg)" \
		test "$rc" -eq 1 -a "$(wc -l <<<"$msg")" -eq 1 -a ! -e "$TMP/full/out.json" \
		-a "$(leftovers "$TMP/full")" -eq 0
	[[ $msg == *"No space left on device"* ]] || fail "faults: full disk: the message names the cause"
	umount "$TMP/full"
else
	fail "faults: full disk: cannot mount a tmpfs ($(cat "$TMP/err"))"
fi

"$PROFILER" -F 499 -f folded -o /dev/full -- "$WORKLOADS/split" 50 50 0.5 2>"$TMP/err"
rc=$?
msg=$(messages "$TMP/err")
check "faults: /dev/full: exit 1, one line ($msg)" \
	test "$rc" -eq 1 -a "$(wc -l <<<"$msg")" -eq 1 -a "$msg" = \
	"profiler: cannot write '/dev/full': No space left on device"

# --- signals --------------------------------------------------------------------------

# signal_at SIG DELAY: send SIG DELAY seconds after the start. Either exit 0
# and a complete profile, or death by the signal and no file at all. (A
# background job of a script starts with SIGINT ignored: a SIGINT that comes
# before the profiler installs its handler is lost, and the command's end,
# 3 s later, ends the profile.)
signal_ok=0 signal_bad=0 outcomes=""
signal_at() {
	local sig=$1 delay=$2 rc out="$TMP/sig/out.pb.gz"
	rm -rf "$TMP/sig" && mkdir -p "$TMP/sig"
	"$PROFILER" -F 199 -o "$out" -- "$WORKLOADS/split" 50 50 3 2>"$TMP/err" &
	local prof=$!
	sleep "$delay"
	kill -"$sig" "$prof"
	wait "$prof"
	rc=$?
	pkill -f "$WORKLOADS/split 50 50 3\$"
	if [[ $rc -eq 0 ]] && pprof -top "$out" >/dev/null 2>&1 && [[ $(leftovers "$TMP/sig") -eq 0 ]]; then
		signal_ok=$((signal_ok + 1))
		outcomes+=" $sig@${delay}s:profile"
	elif [[ $rc -eq $(signal_status "$sig") && ! -e $out && $(leftovers "$TMP/sig") -eq 0 ]]; then
		signal_ok=$((signal_ok + 1))
		outcomes+=" $sig@${delay}s:exit-$rc"
	else
		signal_bad=$((signal_bad + 1))
		outcomes+=" $sig@${delay}s:BAD(exit $rc)"
		sed 's/^/#   /' "$TMP/err"
		ls -A "$TMP/sig" | sed 's/^/#   left: /'
	fi
}

# The shell's exit status of a process killed by SIG: 128 + its number.
signal_status() {
	case $1 in
	INT) echo 130 ;;
	TERM) echo 143 ;;
	HUP) echo 129 ;;
	esac
}

for delay in 0 0.02 0.1 0.3 1; do
	for sig in INT TERM HUP; do
		signal_at "$sig" "$delay"
	done
done
check "faults: signals at any moment: a complete profile or none ($signal_ok right:$outcomes)" \
	test "$signal_bad" -eq 0

# A signal after sampling, while a big program's symbols are read: clang
# (libLLVM, libclang-cpp) keeps the symbolizer busy a few hundred ms.
clang_bin=$(command -v clang || command -v clang-14)
if [[ -n $clang_bin ]]; then
	awk 'BEGIN { for (i = 0; i < 3000; i++)
		printf "int f%d(int x) { int s = 0; for (int j = 0; j < x; j++) s += j * %d ^ (s >> 3); return s; }\n", i, i }' \
		>"$TMP/big.c"
	rm -rf "$TMP/sym" && mkdir -p "$TMP/sym"
	"$PROFILER" -v -F 999 -d 1.5 -o "$TMP/sym/out.pb.gz" -- "$clang_bin" -O2 -c "$TMP/big.c" \
		-o "$TMP/big.o" 2>"$TMP/err" &
	prof=$!
	wait_for "$TMP/err" "symbolizing [0-9]+ stacks" 30
	kill -INT "$prof"
	wait "$prof"
	rc=$?
	when=$(grep -o 'while [a-z ]*' "$TMP/err")
	if [[ $rc -eq 130 && ! -e $TMP/sym/out.pb.gz && $(leftovers "$TMP/sym") -eq 0 ]] &&
		grep -q "^profiler: stopped by SIGINT while .*: no profile written$" "$TMP/err"; then
		ok "faults: signal while symbolizing: exit 130, no file ($when)"
	elif [[ $rc -eq 0 ]] && pprof -top "$TMP/sym/out.pb.gz" >/dev/null 2>&1; then
		ok "faults: signal while symbolizing: it came too late, the profile is complete"
	else
		fail "faults: signal while symbolizing (exit $rc)"
		grep -v libbpf "$TMP/err" | sed 's/^/#   /'
		ls -A "$TMP/sym" | sed 's/^/#   left: /'
	fi
else
	skip "faults: signal while symbolizing" "no clang to keep the symbolizer busy"
fi

# --- the reader of stdout exits early ------------------------------------------------------

# Thousands of distinct stacks: far more than a pipe holds, so head's exit
# is seen while the profile is still being written.
"$PROFILER" -F 999 -f folded -o - -- "$WORKLOADS/many_stacks" 1 2>"$TMP/err" | head -1 >"$TMP/first"
rc=${PIPESTATUS[0]}
msg=$(messages "$TMP/err")
check "faults: reader of stdout exits early: exit 1, one line ($msg)" \
	test "$rc" -eq 1 -a "$(wc -l <<<"$msg")" -eq 1 -a -s "$TMP/first" -a \
	"$msg" = "profiler: cannot write the profile to stdout: its reader exited"
