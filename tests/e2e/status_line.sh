# SPDX-License-Identifier: GPL-2.0-only
# The status line while recording: on a terminal (script(1) gives the
# profiler one), a line rewritten in place with the time, the samples and
# the samples lost, and the intervals off CPU with --off-cpu, cleared before
# any other line is printed; with stderr not a terminal, nothing of it.
. "$(dirname "$0")/lib.sh"

require_bpf "status line: drawn in place on a terminal" \
	"status line: cleared before every other line" \
	"status line: none when stderr is not a terminal" \
	"status line: none on a TERM=dumb terminal" \
	"status line: intervals off CPU with --off-cpu" \
	"status line: none beside a command"

if ! command -v script >/dev/null; then
	for name in "drawn in place on a terminal" "cleared before every other line" \
		"none when stderr is not a terminal" "none on a TERM=dumb terminal" \
		"intervals off CPU with --off-cpu" \
		"none beside a command"; do
		skip "status line: $name" "no script(1) to give the profiler a terminal"
	done
	exit 0
fi

# on_tty OUT ARGS...: run the profiler with a terminal for stdin, stdout and
# stderr, all of which script(1) copies to OUT, \r\n line ends and all;
# TERM is xterm, or $TTY_TERM.
on_tty() {
	local out=$1 cmd
	shift
	cmd=$(printf '%q ' "$PROFILER" "$@")
	TERM=${TTY_TERM:-xterm} script -qec "$cmd" /dev/null </dev/null >"$out" 2>&1
}

status_text='^profiler: [0-9]+\.[0-9] s( of [0-9.]+)?, [0-9]+ samples, [0-9]+ lost(, [0-9]+ intervals off CPU)?$'
status_re="^status ${status_text#^}"

# The pieces of what the profiler printed, one a line: "clear" for each
# \r ESC [K (which erases the line), then what was written after it:
# "status TEXT" for a status line, "line TEXT" for anything else.
pieces() {
	awk -v re="$status_text" '{ sub(/\r$/, ""); n = split($0, seg, /\r\033\[K/)
		for (i = 1; i <= n; i++) {
			if (i > 1) print "clear"
			if (seg[i] ~ re) print "status " seg[i]; else if (seg[i] != "") print "line " seg[i]
		} }' "$1"
}

# unerased PIECES: status lines that the next piece does not erase (a line
# after one, or the end).
unerased() {
	awk -v re="$status_re" '$0 ~ re { pending = 1; next }
		pending && $0 != "clear" { n++ } { pending = 0 } END { print n + pending }' "$1"
}

# merged PIECES: status lines that another line ran into, on the same row.
merged() {
	grep -cE '^line profiler: [0-9]+\.[0-9] s( of [0-9.]+)?, [0-9]+ samples, [0-9]+ lost' "$1"
}

# --- on a terminal ----------------------------------------------------------------------

start_bg "$WORKLOADS/split" 50 50 30
busy=$BG_PID
sleep 0.2
on_tty "$TMP/tty.out" -p "$busy" -d 1.5 -o "$TMP/tty.pb.gz"
rc=$?
pieces "$TMP/tty.out" >"$TMP/tty.pieces"
drawn=$(grep -cE "$status_re" "$TMP/tty.pieces")
last=$(grep -E "$status_re" "$TMP/tty.pieces" | tail -n1 | sed 's/^status //')
samples=$(sed -nE 's/.* ([0-9]+) samples.*/\1/p' <<<"$last")
left=$(($(unerased "$TMP/tty.pieces") + $(merged "$TMP/tty.pieces")))
# Drawn every 250 ms: about 5 times in 1.5 s; the last one counts what came
# in, and is erased before the summary.
if [[ $rc -eq 0 && $drawn -ge 3 && ${samples:-0} -gt 0 && $left -eq 0 && -s $TMP/tty.pb.gz ]]; then
	ok "status line: drawn in place on a terminal ($drawn times, the last '$last')"
	tty_ok=1
else
	fail "status line: drawn in place on a terminal (exit $rc, drawn $drawn times, $left not erased, last '$last')"
	cat -v "$TMP/tty.out" | sed 's/^/#   /'
	tty_ok=0
fi

# Every other line starts on a line of its own: a status line is erased
# before it, never left for it to run into. With -vv, debug lines come while
# sampling (a forked child, its maps): at least one must follow an erased
# status line, or this proves nothing.
start_bg "$WORKLOADS/forker" 12 250 250
on_tty "$TMP/tty2.out" -vv -p "$BG_PID" -o "$TMP/tty2.pb.gz"
rc=$?
pieces "$TMP/tty2.out" >"$TMP/tty2.pieces"
unerased=$(unerased "$TMP/tty2.pieces")
merged=$(merged "$TMP/tty2.pieces")
interrupted=$(awk -v re="$status_re" '$0 ~ re { s = 1; next } s && $0 == "clear" { c = 1; s = 0; next }
	c && /^line profiler: / { n++ } { s = 0; c = 0 } END { print n + 0 }' "$TMP/tty2.pieces")
summary=$(grep -c '^line profiler: on-CPU samples: [0-9]* in' "$TMP/tty2.pieces")
if [[ $rc -eq 0 && $unerased -eq 0 && $merged -eq 0 && $interrupted -ge 1 && $summary -eq 1 ]]; then
	ok "status line: cleared before every other line ($interrupted log lines came while it was drawn)"
else
	fail "status line: cleared before every other line (exit $rc, $unerased left, $merged run into, $interrupted log lines after one, $summary summaries)"
	sed 's/^/#   /' "$TMP/tty2.pieces" | cat -v | head -60
fi

# --- not a terminal -----------------------------------------------------------------------

# The same recording as the first, stderr to a file, then to a pipe.
TERM=xterm "$PROFILER" -p "$busy" -d 1.5 -o "$TMP/file.pb.gz" 2>"$TMP/file.err"
rc=$?
TERM=xterm "$PROFILER" -p "$busy" -d 1.5 -o "$TMP/pipe.pb.gz" 2>&1 | cat >"$TMP/pipe.err"
rc2=${PIPESTATUS[0]}
controls=$(cat "$TMP/file.err" "$TMP/pipe.err" | grep -c $'[\r\033]')
lines=$(cat "$TMP/file.err" "$TMP/pipe.err" | grep -c '^profiler: on-CPU samples: [0-9]* in')
if [[ $tty_ok -eq 1 && $rc -eq 0 && $rc2 -eq 0 && $controls -eq 0 && $lines -eq 2 ]]; then
	ok "status line: none when stderr is not a terminal (a file, a pipe: plain lines only)"
else
	fail "status line: none when stderr is not a terminal (the terminal run showed one: $tty_ok; exit $rc and $rc2, $controls lines with \\r or ESC)"
	cat -v "$TMP/file.err" "$TMP/pipe.err" | sed 's/^/#   /'
fi

# A terminal that says it cannot erase a line (TERM=dumb, as Emacs's shell).
TTY_TERM=dumb on_tty "$TMP/dumb.out" -p "$busy" -d 1.5 -o "$TMP/dumb.pb.gz"
rc=$?
controls=$(grep -c $'\033' "$TMP/dumb.out")
summary=$(grep -c '^profiler: on-CPU samples: [0-9]* in' "$TMP/dumb.out")
check "status line: none on a TERM=dumb terminal (the xterm one showed one: $tty_ok; exit $rc, $controls escapes)" \
	test "$tty_ok" -eq 1 -a "$rc" -eq 0 -a "$controls" -eq 0 -a "$summary" -eq 1

# --- off CPU ------------------------------------------------------------------------------

start_bg "$WORKLOADS/sleeper" 30 10 10
sleep 0.2
on_tty "$TMP/tty3.out" --off-cpu -p "$BG_PID" -d 1.5 -o "$TMP/tty3.pb.gz"
rc=$?
last=$(pieces "$TMP/tty3.out" | grep -E "$status_re" | tail -n1 | sed 's/^status //')
intervals=$(sed -nE 's/.* ([0-9]+) intervals off CPU$/\1/p' <<<"$last")
check "status line: intervals off CPU with --off-cpu (exit $rc, the last '$last')" \
	test "$rc" -eq 0 -a "${intervals:-0}" -gt 0

# --- beside a command ---------------------------------------------------------------------

# The command writes to the same terminal: no status line to run into it.
on_tty "$TMP/tty4.out" -d 1.5 -o "$TMP/tty4.pb.gz" -- "$WORKLOADS/split" 50 50 30
rc=$?
controls=$(grep -c $'\033' "$TMP/tty4.out")
summary=$(grep -c '^profiler: on-CPU samples: [0-9]* in' "$TMP/tty4.out")
check "status line: none beside a command (the -p run showed one: $tty_ok; exit $rc, $controls escapes)" \
	test "$tty_ok" -eq 1 -a "$rc" -eq 0 -a "$controls" -eq 0 -a "$summary" -eq 1
