# SPDX-License-Identifier: GPL-2.0-only
# Helpers for the end-to-end tests: sourced, not run.
#
# Each test reports with ok/fail/skip, TAP-style, and tests/run counts them.
# Workloads and the profiler come from $OUTPUT (build/).

set -uo pipefail
OUTPUT=$(realpath -m "${OUTPUT:-build}")
PROFILER=$OUTPUT/profiler
WORKLOADS=$OUTPUT/workloads
TMP=$(mktemp -d /tmp/profiler-e2e.XXXXXX)
BG_PIDS=()

cleanup() {
	local pid
	for pid in "${BG_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

ok() { echo "ok - e2e: $*"; }
fail() { echo "not ok - e2e: $*"; }
skip() { echo "ok - e2e: $1 # SKIP $2"; }
# busy NAME WHY: skip a test that needs an idle CPU on a machine with none.
# No test can make one here without moving every process of the machine
# (cgroup v1 cpusets), so even where end-to-end tests must run
# (PROFILER_REQUIRE_BPF=1) this stays a skip, which tests/run counts.
busy() { echo "ok - e2e: $1 # SKIP no idle CPU: $2"; }

# check NAME COMMAND...: ok if COMMAND succeeds, else fail with its output.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$name"
	else
		fail "$name"
		[[ -n $out ]] && sed 's/^/#   /' <<<"$out"
	fi
}

# Is $PROFILER built with AddressSanitizer (make asan)? ldd's output is read
# whole: `ldd | grep -q` under pipefail fails when grep leaves before ldd
# has written all (SIGPIPE), which turned a skip into a failure.
asan_build() {
	[[ $(ldd "$PROFILER" 2>/dev/null) == *libasan* ]]
}

# Why end-to-end tests cannot run here, or nothing.
bpf_unavailable() {
	[[ $(id -u) -eq 0 ]] || { echo "needs root (run 'sudo make test')"; return; }
	[[ -x $PROFILER ]] || { echo "$PROFILER is not built"; return; }
	[[ -r /sys/kernel/btf/vmlinux ]] || { echo "the kernel has no BTF"; return; }
}

# missing WHY TESTNAMES...: what the named tests need is not on this machine:
# each is a skip, or a failure where the end-to-end tests must run (CI sets
# PROFILER_REQUIRE_BPF=1, and installs all they need).
missing() {
	local why=$1 name
	shift
	for name in "$@"; do
		if [[ ${PROFILER_REQUIRE_BPF:-0} == 1 ]]; then
			fail "$name: $why"
		else
			skip "$name" "$why"
		fi
	done
}

# require_bpf [--plan N] TESTNAMES...: the script's tests, declared: a TAP
# plan line ("1..N", N the number of names unless --plan gives it, for a
# script whose names stand for several reports each), by which tests/run
# checks that every one is reported, none left out by a branch or an early
# exit. Skip each name and exit when BPF is out of reach.
require_bpf() {
	local why name plan=
	if [[ $1 == --plan ]]; then
		plan=$2
		shift 2
	fi
	why=$(bpf_unavailable)
	if [[ -z $why ]]; then
		echo "1..${plan:-$#}"
		return 0
	fi
	echo "1..$#"
	for name in "$@"; do
		skip "$name" "$why"
	done
	exit 0
}

# Start a workload in the background; its pid is in $BG_PID.
start_bg() {
	"$@" &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

# wait_for FILE PATTERN [SECONDS]: poll until FILE has a line matching
# PATTERN (an extended regular expression), for SECONDS at most (20).
wait_for() {
	local i
	for ((i = 0; i < ${3:-20} * 100; i++)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}

pprof() {
	go tool pprof -symbolize=none "$@"
}

# pct FILE FUNC [cum|flat] [PPROF_ARGS...]: FUNC's share in percent of the
# samples that PPROF_ARGS keep (-tagfocus=... filters), from
# `go tool pprof -top`; 0 when FUNC does not appear, "none" when pprof
# cannot read FILE or keeps no samples (no check takes that for a number). cum (the default)
# counts the samples in FUNC and in what it calls or has inlined (the
# workloads' burn()); flat, those whose innermost function is FUNC. pprof reports shares of
# the whole profile even when filtering, so this divides by the kept share.
pct() {
	local file=$1 func=$2 col=${3:-cum}
	shift 3 2>/dev/null || shift $#
	pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 "$@" "$file" 2>/dev/null |
		awk -v f="$func" -v col="$col" '
		/^Showing nodes accounting for / { kept = $6; sub(/%/, "", kept) }
		$NF == f && $2 ~ /%$/ { v = (col == "cum") ? $5 : $2; sub(/%/, "", v); found = 1; exit }
		END { if (kept + 0 == 0) print "none"; else if (!found) print 0
			else printf "%.2f\n", 100 * v / kept }'
}

# folded_leaf_pct FILE FUNC: the percentage of samples in folded FILE whose
# leaf function is FUNC (integer): the innermost frame not inlined into it
# (inlined frames end in _[i]); "none" when FILE holds no samples.
folded_leaf_pct() {
	awk -v f="$2" '{ n = $NF; total += n; k = split($0, frames, ";")
		sub(/ [0-9]+$/, "", frames[k]); while (k > 1 && frames[k] ~ /_\[i\]$/) k--
		if (frames[k] == f) hot += n }
		END { if (total) printf "%.0f", 100 * hot / total; else print "none" }' "$1"
}

# stacks_whole ERR: "N of M", the user stacks that reach their process's first
# frame and all of them, from the profiler's -v stderr in ERR.
stacks_whole() {
	sed -nE 's/.*unwind: ([0-9]+) of ([0-9]+) user stacks reach.*/\1 \2/p' "$1" | head -n 1
}

# summary_count FILE WHAT: N, from "WHAT: N" in the profile's summary as FILE
# holds it: the profiler's stderr ("profiler: " lines, several to a line
# apart by "; "), `go tool pprof -comments` (one a line), the Firefox
# markers' names; empty when FILE has none. WHAT is one of the summary's
# words (common/profile.h): "on-CPU samples", "samples lost", "intervals off
# CPU", "intervals off CPU lost", "truncated stacks", "stack read errors",
# "processes with unreadable maps", "DWARF units unreadable".
summary_count() {
	sed -nE "s/^(.*(: |; ))?$2: ([0-9]+).*/\3/p" "$1" | head -n 1
}

# tag_values FILE KEY [PPROF_ARGS...]: the values of label KEY in FILE, one a
# line, from `go tool pprof -tags`.
tag_values() {
	local file=$1 key=$2
	shift 2
	pprof -tags "$@" "$file" 2>/dev/null |
		awk -v k="$key" '$1 == k ":" { t = 1; next } /^ *[a-z_]+: Total/ { t = 0 }
			t && /%\): / { sub(/^.*%\): /, ""); print }'
}

# tag_count FILE KEY [PPROF_ARGS...]: how many values label KEY has in FILE.
tag_count() {
	tag_values "$@" | wc -l
}

# expect NAME STATUS PATTERN ARGS...: the profiler exits with STATUS, prints
# one stderr line matching PATTERN, and leaves no file in $TMP/out. The
# profiler runs under the command prefix in RUN_AS, if any.
RUN_AS=()
expect() {
	local name=$1 status=$2 pattern=$3 rc lines
	shift 3
	rm -rf "$TMP/out" && mkdir -p "$TMP/out" && chmod 0777 "$TMP/out"
	(cd "$TMP/out" && "${RUN_AS[@]}" "$PROFILER" "$@") >"$TMP/stdout" 2>"$TMP/stderr" </dev/null
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

# The cgroup v2 hierarchy: /sys/fs/cgroup, or its unified/ part on a hybrid
# system; nothing when there is none.
cgroup2_root() {
	if [[ $(stat -fc %T /sys/fs/cgroup 2>/dev/null) == cgroup2fs ]]; then
		echo /sys/fs/cgroup
	else
		awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts
	fi
}

# within VALUE EXPECTED TOLERANCE: is |VALUE - EXPECTED| <= TOLERANCE? Never
# when one is not a number ("", "none"): an unreadable profile fails.
within() {
	awk -v v="$1" -v e="$2" -v t="$3" 'function num(x) {
			return x ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
		BEGIN { if (!num(v) || !num(e) || !num(t)) exit 1
			d = v - e; if (d < 0) d = -d; exit !(d <= t) }'
}

# share_tol COUNT...: three standard deviations, in points, of a 70/30
# share counted over COUNT samples (of the difference of the shares, with
# several counts), and a point for the clock's aliasing: at least FLOOR
# points (SHARE_TOL_FLOOR, 0). Nothing when a count is missing or 0.
share_tol() {
	awk -v list="$*" -v floor="${SHARE_TOL_FLOOR:-0}" 'BEGIN { n = split(list, c, " ")
		for (i = 1; i <= n; i++) { if (c[i] + 0 <= 0) exit; s += 1 / c[i] }
		t = 300 * sqrt(0.21 * s) + 1; if (n) printf "%.1f", (t > floor ? t : floor) }'
}

# share_is NAME FILE FUNC EXPECTED TOLERANCE [PPROF_ARGS...]: FUNC's share
# of the samples, with what was inlined into it (pprof's cumulative column).
share_is() {
	local name=$1 file=$2 func=$3 expected=$4 tol=$5 got
	shift 5
	got=$(pct "$file" "$func" cum "$@")
	if within "$got" "$expected" "$tol"; then
		ok "$name ($func $got%, expected $expected±$tol)"
	else
		fail "$name ($func $got%, expected $expected±$tol)"
		pprof -top -nodecount=15 "$@" "$file" 2>&1 | sed 's/^/#   /'
	fi
}

# zero_dwarf FILE: zero the bytes of FILE's .debug_info and .debug_line, its
# headers and build-id kept: a copy whose DWARF says nothing, that a cache
# of answers keyed by the file still answers for.
zero_dwarf() {
	python3 - "$1" <<'PY'
import subprocess, sys
path = sys.argv[1]
out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
with open(path, "r+b") as f:
    for line in out.splitlines():
        for name in (".debug_info ", ".debug_line "):
            if name in line:
                fields = line.split(name)[1].split()
                f.seek(int(fields[2], 16))
                f.write(b"\0" * int(fields[3], 16))
PY
}
