# SPDX-License-Identifier: GPL-2.0-only
# Profiling a command: it is symbolized however short it lives, only its own
# code after exec is sampled, and it does not outlive the profiler.
. "$(dirname "$0")/lib.sh"

require_bpf "a 50 ms command is symbolized" "a 50 ms command's shared library is symbolized" \
	"no samples from before exec" \
	"the command is stopped with the profiler" "a -p thread id is refused"

# Exits within 50 ms: its maps must be read before it is gone. Its own
# frames, named or not, are counted (as its library's below): the dynamic
# linker's start is a share of the few dozen samples that grows with load
# (32% in a sanitizer build beside two busy loops).
if "$PROFILER" -F 999 -f folded -o "$TMP/short.folded" -- "$WORKLOADS/early_exit" 0.05 \
	2>"$TMP/err"; then
	read -r named unnamed < <(awk '{ n = $NF }
		/;main;short_lived_work[;_ ]/ { named += n }
		/^early_exit;.*early_exit\+0x|;main;\[unknown\]/ { unnamed += n }
		END { print named + 0, unnamed + 0 }' "$TMP/short.folded")
	check "a 50 ms command is symbolized (short_lived_work named in $named samples, its program unnamed in $unnamed)" \
		test "$named" -ge 5 -a "$unnamed" -eq 0
else
	fail "a 50 ms command is symbolized: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# Its library is mapped after exec, after the first snapshot: the one taken
# when its samples miss must still come in time.
# Its frames, named or not, are counted rather than held against its start:
# beside other work 50 ms is a few dozen samples, of which the dynamic
# linker's took a third.
if "$PROFILER" -F 999 -f folded -o "$TMP/lib.folded" -- "$WORKLOADS/uses_lib" 0.05 2>"$TMP/err"; then
	read -r named unnamed < <(awk '{ n = $NF }
		/;call_library;lib_hot_loop[;_ ]/ { named += n }
		/libhot\.so\+0x|;call_library;\[unknown\]/ { unnamed += n }
		END { print named + 0, unnamed + 0 }' "$TMP/lib.folded")
	check "a 50 ms command's shared library is symbolized (lib_hot_loop named in $named samples, its library unnamed in $unnamed)" \
		test "$named" -ge 5 -a "$unnamed" -eq 0
else
	fail "a 50 ms command's shared library is symbolized: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# The command is forked by the profiler; samples before its exec are the
# profiler's own (process name "profiler") and must not appear. That counts
# only if the profiler succeeded and split's own samples are there.
if "$PROFILER" -F 999 -f folded -o "$TMP/cmd.folded" -- "$WORKLOADS/split" 50 50 0.5 \
	2>"$TMP/err"; then
	own=$(awk '/^split;.*;hot_[ab]/ { n += $NF } END { print n + 0 }' "$TMP/cmd.folded")
	others=$(grep -cv '^split;' "$TMP/cmd.folded")
	check "no samples from before exec ($others stacks of other processes; split has $own samples in hot_a or hot_b)" \
		test "$own" -ge 50 -a "$others" -eq 0
else
	fail "no samples from before exec: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# -d ends the profile; the command must not keep running (or hold a pipe open).
# The profile it writes on the way out must be whole: the profiler exits 0
# and its stacks are split's.
SECONDS=0
"$PROFILER" -d 1 -F 99 -f folded -- "$WORKLOADS/split" 50 50 30 2>"$TMP/err" |
	cat >"$TMP/stopped.folded"
rc=${PIPESTATUS[0]}
elapsed=$SECONDS
left=$(pgrep -fc "$WORKLOADS/split 50 50 30")
samples=$(awk '/^split;.*;hot_[ab]/ { n += $NF } END { print n + 0 }' "$TMP/stopped.folded")
if [[ $rc -eq 0 && $samples -ge 10 && $elapsed -le 5 && $left -eq 0 ]] &&
	grep -q "stopped '.*split'" "$TMP/err"; then
	ok "the command is stopped with the profiler (${elapsed}s, $samples samples, $(grep stopped "$TMP/err"))"
else
	fail "the command is stopped with the profiler (exit $rc, ${elapsed}s, $samples samples, $left still running)"
	sed 's/^/#   /' "$TMP/err"
	pkill -f "$WORKLOADS/split 50 50 30"
fi

# -p takes processes; a thread id gets a pointer to its process.
start_bg "$WORKLOADS/threads" 5
sleep 0.3
tid=$(ls "/proc/$BG_PID/task" | grep -vx "$BG_PID" | head -1)
"$PROFILER" -p "$tid" -d 1 -o "$TMP/tid.pb.gz" 2>"$TMP/err"
rc=$?
if [[ $rc -eq 1 ]] && grep -q "$tid is a thread of process $BG_PID: use -p $BG_PID" "$TMP/err" &&
	[[ ! -e $TMP/tid.pb.gz ]]; then
	ok "a -p thread id is refused ($(cat "$TMP/err"))"
else
	fail "a -p thread id is refused (exit $rc)"
	sed 's/^/#   /' "$TMP/err"
fi
