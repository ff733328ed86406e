# SPDX-License-Identifier: GPL-2.0-only
# Python functions in the stacks of CPython processes, read by the BPF
# program from the interpreter's own frames: Debian's python3.11 and each
# pyenv build of 3.10 to 3.13 on the machine, on tests/workloads/py_work.py,
# whose profile is known. Then what is not CPython as the profiler expects
# it: a release it cannot read, and a fake interpreter whose frames are
# garbage that changes while it is sampled.
. "$(dirname "$0")/lib.sh"

PYENV_ROOT=${PYENV_ROOT:-/root/.pyenv}
interpreters=(/usr/bin/python3.11)
for v in 3.10 3.11 3.12 3.13; do
	for py in "$PYENV_ROOT"/versions/"$v".*/bin/python"$v"; do
		[[ -x $py ]] && interpreters+=("$py")
	done
done
# Nine checks of each interpreter, then eight of one: a child, an exec, the
# cold part, the crowd, the release not read (2) and the garbage frames (2).
require_bpf --plan $((9 * ${#interpreters[@]} + 8)) "Python stacks"

WORK=$(realpath "$(dirname "$0")/../workloads/py_work.py")

# label PY: a short name for interpreter PY in test names.
label() {
	case $1 in
	/usr/bin/*) echo "Debian's $(basename "$1")" ;;
	*) echo "pyenv $(basename "$(dirname "$(dirname "$1")")")" ;;
	esac
}

# share FOLDED A B: A's share in percent of the samples whose stack holds a
# frame of function A or of function B ("NAME (" in folded, where a Python
# frame is "qualname (file.py:DEF)", DEF the line of its def); "none"
# without any.
share() {
	awk -v a="$2 (" -v b="$3 (" '{ n = $NF
		if (index($0, ";" a)) x += n; else if (index($0, ";" b)) y += n }
		END { if (x + y) printf "%.1f\n", 100 * x / (x + y); else print "none" }' "$1"
}

# record NAME ARGS...: profile py_work.py under the profiler with ARGS,
# into $TMP/NAME.{folded,pb.gz}, its stderr in $TMP/NAME.err. 0 on success.
record() {
	local name=$1
	shift
	"$PROFILER" -v -F 499 -o "$TMP/$name.folded" -o "$TMP/$name.pb.gz" "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.err"
}

for py in "${interpreters[@]}"; do
	l=$(label "$py")
	if ! [[ -x $py ]]; then
		missing "$py is not installed (tools/install-deps installs python3.11)" "Python stacks: $l"
		continue
	fi

	# 70/30 between two functions, with the file and the lines they call from.
	if ! record split -- "$py" "$WORK" split 4; then
		fail "Python stacks: $l: the profiler failed"
		sed 's/^/#   /' "$TMP/split.err"
		continue
	fi
	s=$(share "$TMP/split.folded" hot70 hot30)
	check "Python stacks: $l: hot70 vs hot30 is 70/30 +-5 ($s%)" within "$s" 70 5
	# Its body is lines def+1 and def+2. A frame sampled as it starts (its
	# RESUME) is at the def line, as CPython's own f_lineno says: that is
	# rare (a call every ~10 ms, its entry some hundred ns), so at most 2%.
	# The lines are pprof's; the other formats name the function by its def
	# line alone, whichever line ran, so it is one node in a flame graph.
	def=$(grep -n '^def hot70' "$WORK" | cut -d: -f1)
	lines=$(pprof -traces -lines "$TMP/split.pb.gz" 2>/dev/null | awk -v f="hot70 $WORK:" '
		/^-+\+-+$/ { w = 0 }
		/^ +[0-9.]+(ns|us|ms|s) / { w = $1 + 0; if ($1 ~ /[^m]s$/) w *= 1000
			if ($1 ~ /us$/) w /= 1000; if ($1 ~ /ns$/) w /= 1e6 }
		i = index($0, f) { l = substr($0, i + length(f)); sub(/[^0-9].*/, "", l); c[l] += w }
		END { for (l in c) printf "%s:%g ", l, c[l] }')
	folded_lines=$(grep -o 'hot70 (py_work\.py:[0-9]*)' "$TMP/split.folded" | sort -u | tr '\n' ' ')
	check "Python stacks: $l: hot70 at its lines $((def + 1))-$((def + 2)), its def line $def on at most 2% (saw line:ms $lines)" \
		awk -v d="$def" -v s="$lines" 'BEGIN {
			n = split(s, a, " ")
			for (i = 1; i <= n; i++) {
				split(a[i], f, ":")
				if (f[1] == d) entry += f[2]
				else if (f[1] == d + 1 || f[1] == d + 2) body += f[2]
				else exit 1
			}
			exit !(body > 0 && entry <= 0.02 * (body + entry)) }'
	check "Python stacks: $l: folded names hot70 by its def line alone (saw $folded_lines)" \
		test "$folded_lines" = "hot70 (py_work.py:$def) "
	# Interpreter C frames gone where Python ran them: the Python frames are
	# between main's native callers and the code they call (3.10 calls each
	# Python function through C of its own, which stays).
	total=$(awk '{ t += $NF } END { print t + 0 }' "$TMP/split.folded")
	py_samples=$(awk '/;<module> \(py_work\.py:[0-9]+\);(.*;)?main \(py_work\.py:[0-9]+\);(.*;)?split \(/ {
		t += $NF } END { print t + 0 }' "$TMP/split.folded")
	eval_left=$(awk '/_PyEval_EvalFrameDefault/ { t += $NF } END { print t + 0 }' \
		"$TMP/split.folded")
	check "Python stacks: $l: <module>;main;split under the native frames in $py_samples of $total samples (>= 90%), _PyEval_EvalFrameDefault left in $eval_left" \
		awk -v p="$py_samples" -v t="$total" -v e="$eval_left" \
		'BEGIN { exit !(t > 0 && p >= 0.9 * t && e <= 0.02 * t) }'
	# Names read while the process lived, its last samples' too: only code
	# freed before the drain that followed (an import's) goes unnamed.
	unnamed=$(awk '/\[unknown Python code\]/ { t += $NF } END { print t + 0 }' "$TMP/split.folded")
	check "Python stacks: $l: $unnamed of $total samples with a Python frame not named (<= 2%)" \
		awk -v u="$unnamed" -v t="$total" 'BEGIN { exit !(t > 0 && u <= 0.02 * t) }'

	# Two threads, each under its own name with its own function.
	if record threads -- "$py" "$WORK" threads 3; then
		left=$(pct "$TMP/threads.pb.gz" left_worker cum -tagfocus=thread=py-left)
		wrong=$(pct "$TMP/threads.pb.gz" right_worker cum -tagfocus=thread=py-left)
		right=$(pct "$TMP/threads.pb.gz" right_worker cum -tagfocus=thread=py-right)
		check "Python stacks: $l: thread py-left runs left_worker ($left%, right_worker $wrong%), py-right right_worker ($right%)" \
			awk -v a="$left" -v b="$wrong" -v c="$right" \
			'BEGIN { exit !(a >= 90 && b == 0 && c >= 90) }'
	else
		fail "Python stacks: $l: threads: the profiler failed"
	fi

	# Every interpreter's threads: a subinterpreter's too.
	if record subinterpreter -- "$py" "$WORK" subinterpreter 3; then
		s=$(awk '{ t += $NF } /;sub_worker \(/ { s += $NF }
			END { if (t) printf "%.1f\n", 100 * s / t; else print "none" }' \
			"$TMP/subinterpreter.folded")
		check "Python stacks: $l: a subinterpreter's thread in its sub_worker on $s% of samples (>= 30)" \
			within "$s" 65 35
	else
		fail "Python stacks: $l: subinterpreter: the profiler failed"
	fi

	# C called by Python stays above its caller.
	if record zlib -- "$py" "$WORK" zlib 3; then
		s=$(awk '{ n = $NF; if (index($0, ";compress_caller (")) { t += n
			if ($0 ~ /;compress_caller \(py_work\.py:[0-9]+\);.*deflate/) d += n } }
			END { if (t) printf "%.0f\n", 100 * d / t; else print "none" }' "$TMP/zlib.folded")
		check "Python stacks: $l: compress_caller;...;deflate in $s% of its samples (>= 60)" \
			within "$s" 80 20
	else
		fail "Python stacks: $l: zlib: the profiler failed"
	fi

	# --wall: the function that sleeps, by the time it sleeps.
	if record sleep --wall -- "$py" "$WORK" sleep 4; then
		s=$(share "$TMP/sleep.folded" nap spin)
		check "Python stacks: $l: --wall: nap has 40% +-5 of nap and spin's wall time ($s%)" \
			within "$s" 40 5
	else
		fail "Python stacks: $l: --wall: the profiler failed"
	fi
done

# A child of the command: its interpreter found when it execs.
if [[ -x /usr/bin/python3.11 ]] &&
	record child -- bash -c '/usr/bin/python3.11 "$0" split 3; true' "$WORK"; then
	s=$(share "$TMP/child.folded" hot70 hot30)
	check "Python stacks: a child of the command: hot70 vs hot30 is 70/30 +-5 ($s%)" \
		within "$s" 70 5
else
	fail "Python stacks: a child of the command: the profiler failed"
fi

# An interpreter that execs itself: the same file at the same place (Debian's
# python3.11 is not PIE), new code objects, named anew.
if [[ -x /usr/bin/python3.11 ]] && record reexec -- /usr/bin/python3.11 "$WORK" reexec 4; then
	s=$(share "$TMP/reexec.folded" before_exec after_exec)
	check "Python stacks: across an exec: before_exec vs after_exec is 50/50 +-10 ($s%)" \
		within "$s" 50 10
else
	fail "Python stacks: across an exec: the profiler failed"
fi
# The evaluation loop's cold part, which Debian's stripped python3.11 does
# not name, is found: a frame there is the loop's.
if [[ -x /usr/bin/python3.11 ]]; then
	"$PROFILER" -vv -d 0.5 -o "$TMP/cold.folded" -- /usr/bin/python3.11 -c 'import time
time.sleep(1)' 2>"$TMP/cold.err"
	check "Python stacks: Debian's python3.11: the evaluation loop's cold part found ($(grep -o '[0-9]* cold parts[^)]*)' "$TMP/cold.err"))" \
		grep -qE 'evaluation loop at 0x[0-9a-f]+, [1-9] cold parts' "$TMP/cold.err"
fi

# A thread among many: the main thread is the last of 501 in the
# interpreter's list, found once and then remembered.
if [[ -x /usr/bin/python3.11 ]] && record crowd -- /usr/bin/python3.11 "$WORK" crowd 3; then
	s=$(awk '{ t += $NF } /;crowd_worker \(/ { s += $NF }
		END { if (t) printf "%.1f\n", 100 * s / t; else print "none" }' "$TMP/crowd.folded")
	check "Python stacks: among 500 other threads, crowd_worker on $s% of samples (>= 70)" \
		within "$s" 85 15
else
	fail "Python stacks: among 500 other threads: the profiler failed"
fi

# A release that is not read: a note, and the interpreter's own C frames.
old=$(ls "$PYENV_ROOT"/versions/3.9.*/bin/python3.9 2>/dev/null | head -n 1)
if [[ -x $old ]]; then
	if record old -- "$old" -c 'import time
end = time.monotonic() + 2
while time.monotonic() < end: sum(range(1000))'; then
		check "Python stacks: 3.9 is named as not supported, once" \
			test "$(grep -c 'runs Python 3.9, whose frames this profiler cannot read' "$TMP/old.err")" -eq 1
		check "Python stacks: 3.9 is profiled natively (_PyEval_EvalFrameDefault)" \
			grep -q _PyEval_EvalFrameDefault "$TMP/old.folded"
	else
		fail "Python stacks: 3.9: the profiler failed"
	fi
else
	skip "Python stacks: 3.9 is named as not supported, once" "no pyenv 3.9 under $PYENV_ROOT"
	skip "Python stacks: 3.9 is profiled natively" "no pyenv 3.9 under $PYENV_ROOT"
fi

# Garbage frames: no crash, no verifier failure, stacks counted as cut short.
cp "$WORKLOADS/fake_python" "$TMP/python3.11"
if "$PROFILER" -v -F 999 -o "$TMP/fake.folded" -- "$TMP/python3.11" 3 \
	>"$TMP/fake.out" 2>"$TMP/fake.err"; then
	samples=$(summary_count "$TMP/fake.err" "on-CPU samples")
	cut=$(sed -nE 's/.* ([0-9]+) Python stacks cut short.*/\1/p' "$TMP/fake.err")
	check "Python stacks: garbage frames: $samples samples, ${cut:-no} Python stacks counted as cut short" \
		test "${samples:-0}" -gt 100 -a "${cut:-0}" -gt 0
	check "Python stacks: garbage frames: stacks marked truncated" \
		test "$(summary_count "$TMP/fake.err" "truncated stacks")" -gt 0
else
	fail "Python stacks: garbage frames: the profiler failed"
	sed 's/^/#   /' "$TMP/fake.err"
fi
