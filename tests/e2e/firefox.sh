# SPDX-License-Identifier: GPL-2.0-only
# Firefox Profiler output (-o X.json.gz) goes through the profiler's own
# loader, @firefox-devtools/profiler-cli, which `make profiler-cli` installs:
# the threads, call trees, CPU time and statistics we wrote come back out.
# Folded output, which the site imports too, loads as well.
. "$(dirname "$0")/lib.sh"

TESTS=("firefox: loads in profiler-cli" "firefox: thread names" "firefox: call tree of each thread"
	"firefox: CPU time" "firefox: platform" "firefox: truncated stacks" "firefox: statistics markers"
	"firefox --wall: the call tree weighs time" "firefox --wall: time off CPU as on stderr"
	"firefox: folded output loads" "firefox: Python frames" "firefox --alloc: the call tree weighs bytes")
# The call tree and the CPU time are two reports each, one per thread.
require_bpf --plan $((${#TESTS[@]} + 2)) "${TESTS[@]}"

CLI=$OUTPUT/npm/node_modules/@firefox-devtools/profiler-cli/dist/profiler-cli.js
if [[ ! -f $CLI ]] || ! command -v node >/dev/null; then
	missing "no $CLI or no node: run 'make profiler-cli'" "${TESTS[@]}"
	exit 0
fi

# Each `load` starts a daemon that keeps its state here: stop them all
# before lib.sh's cleanup removes the directory.
export PROFILER_CLI_SESSION_DIR=$TMP/profiler-cli
pq() {
	node "$CLI" "$@"
}
trap 'pq stop --all >/dev/null 2>&1; cleanup' EXIT

# load FILE SESSION: a profiler-cli session on FILE, its output in $TMP/load.
# profiler-cli waits 500 ms for its daemon to start, then gives up waiting
# while the daemon goes on starting: node alone takes longer on a loaded
# machine, so then wait up to 20 s more for the session to show a thread.
load() {
	pq load "$1" --session "$2" >"$TMP/load" 2>&1 && return 0
	grep -q 'did not become ready' "$TMP/load" || return 1
	for _ in $(seq 40); do
		sleep 0.5
		pq status --session "$2" 2>/dev/null | grep 'Selected thread:' >/dev/null &&
			echo "Session started: $2 (late)" >>"$TMP/load" && return 0
	done
	return 1
}

# js EXPR: EXPR evaluated on the JSON document on stdin, which it calls d.
js() {
	node -e 'const d = JSON.parse(require("fs").readFileSync(0, "utf8"));
		console.log(new Function("d", "return " + process.argv[1])(d))' "$1"
}

# total_pct THREAD FUNC SESSION: FUNC's total share of THREAD's samples, in percent (0 if absent).
total_pct() {
	pq thread functions --thread "$1" --session "$3" --limit 0 --json |
		js "(d.functions.find(f => f.name === '$2') || { totalPercentage: 0 }).totalPercentage.toFixed(1)"
}

if ! "$PROFILER" -F 499 -o "$TMP/threads.json.gz" -- "$WORKLOADS/threads" 3 2>"$TMP/err"; then
	for t in "${TESTS[@]:0:4}"; do
		fail "$t: profiler failed"
	done
	sed 's/^/#   /' "$TMP/err"
elif ! load "$TMP/threads.json.gz" threads; then
	for t in "${TESTS[@]:0:4}"; do
		fail "$t: profiler-cli cannot load it"
	done
	sed 's/^/#   /' "$TMP/load"
else
	ok "firefox: loads in profiler-cli ($(grep -o 'Session started: .*' "$TMP/load"))"
	pq thread list --session threads --json >"$TMP/threads"
	# The main thread only waits, so it may have no samples at all. Threads
	# keep their names; their process is named by its command line.
	names=$(js 'd.threads.filter(t => t.name !== "threads").map(t => t.name + " in " +
		t.processName).sort().join(", ")' <"$TMP/threads")
	check "firefox: thread names ($names)" test "$names" = \
		"alpha-worker in $WORKLOADS/threads 3, beta-worker in $WORKLOADS/threads 3"

	for w in alpha beta; do
		h=$(js "d.threads.find(t => t.name === '$w-worker').threadHandle" <"$TMP/threads")
		own=$(total_pct "$h" "${w}_work" threads)
		other=$(total_pct "$h" "$([[ $w == alpha ]] && echo beta || echo alpha)_work" threads)
		pq thread samples-top-down --thread "$h" --session threads >"$TMP/tree"
		if within "$own" 100 2 && within "$other" 0 0 &&
			grep -A1 'threads!run ' "$TMP/tree" | grep "threads!${w}_work " >/dev/null; then
			ok "firefox: call tree of each thread ($w-worker: run -> ${w}_work on $own%)"
		else
			fail "firefox: call tree of each thread ($w-worker: ${w}_work on $own%," \
				"expected 100±2; the other on $other%)"
			sed 's/^/#   /' "$TMP/tree"
		fi
	done

	# threadCPUDelta: one sampling period of CPU time per sample (the loader
	# skips each thread's first sample).
	interval=$(pq profile meta --session threads --json | js 'd.interval')
	for w in alpha beta; do
		h=$(js "d.threads.find(t => t.name === '$w-worker').threadHandle" <"$TMP/threads")
		cpu=$(js "d.threads.find(t => t.name === '$w-worker').cpuMs" <"$TMP/threads")
		samples=$(pq thread functions --thread "$h" --session threads --limit 0 --json |
			js 'Math.max(...d.functions.map(f => f.totalSamples))')
		want=$(awk -v n="$samples" -v i="$interval" 'BEGIN { printf "%.1f", (n - 1) * i }')
		check "firefox: CPU time ($w-worker $cpu ms for $samples samples at $interval ms)" \
			within "$cpu" "$want" "$(awk -v w="$want" 'BEGIN { print 1 + w / 100 }')"
	done

	# meta.oscpu, which the profiler shows as the platform: this machine's.
	platform=$(pq profile info --session threads --json | js 'd.platform')
	check "firefox: platform ($platform)" test "$platform" = "$(uname -srm)"
fi

# A recursion deeper than a stack holds (1,024 frames): every stack is truncated, which
# the statistics markers count as the profiler's summary does.
if ! "$PROFILER" -F 199 -o "$TMP/deep.json.gz" -- "$WORKLOADS/deep" 1200 1 2>"$TMP/err"; then
	fail "firefox: truncated stacks: profiler failed"
	fail "firefox: statistics markers: profiler failed"
	sed 's/^/#   /' "$TMP/err"
elif ! load "$TMP/deep.json.gz" deep; then
	fail "firefox: truncated stacks: profiler-cli cannot load it"
	fail "firefox: statistics markers: profiler-cli cannot load it"
	sed 's/^/#   /' "$TMP/load"
else
	root=$(pq thread samples-top-down --session deep --json |
		js 'd.regularCallTree.children.map(c => c.name + " " + c.totalPercentage.toFixed(1))
			.join(", ")')
	check "firefox: truncated stacks (roots: $root)" \
		awk -v r="$root" 'BEGIN { exit !(r ~ /^\[truncated\] (9[0-9]|100)\./) }'

	# The summary's lines, as stderr groups them ("profiler: A: N; B: N").
	want=$(grep -E '^profiler: (on-CPU samples|truncated stacks|frames|BPF program [^:]*): ' "$TMP/err" |
		sed 's/^profiler: //; s/; /\n/g' | paste -sd '|')
	got=$(pq profile markers --category Other --limit 100 --session deep --json |
		js 'd.markers.map(m => m.name).join("|")')
	if [[ -n $want && $got == "$want" ]]; then
		ok "firefox: statistics markers ($got)"
	else
		fail "firefox: statistics markers ($got; stderr: ${want:-no summary})"
	fi
fi

# --wall: rows weigh the time they stand for, so a thread's share of time
# off CPU in the call tree is the share of its life it spent off CPU: for
# sleeper, which burns 6 ms and sleeps 4 ms turn about, 40% on an idle
# machine. Unweighted rows, one per interval off CPU and one per on-CPU
# sample, would give the ratio of their counts instead (about 25% at
# 499 Hz). The truth is measured apart, by bash's `time` (1 - CPU time /
# elapsed time), since time spent waiting for a CPU counts as off CPU too:
# nice -20, as in offcpu.sh, keeps it small, but other work on a busy
# machine can make it large.
if ! nice -n -20 "$PROFILER" --wall -F 499 -o "$TMP/wall.json.gz" -- bash -c \
	'TIMEFORMAT="%3R %3U %3S"; { time "$0" 3 6 4; } 2>"$1"' "$WORKLOADS/sleeper" \
	"$TMP/times" 2>"$TMP/err"; then
	fail "firefox --wall: the call tree weighs time: profiler failed"
	fail "firefox --wall: time off CPU as on stderr: profiler failed"
	sed 's/^/#   /' "$TMP/err"
elif ! load "$TMP/wall.json.gz" wall; then
	fail "firefox --wall: the call tree weighs time: profiler-cli cannot load it"
	fail "firefox --wall: time off CPU as on stderr: profiler-cli cannot load it"
	sed 's/^/#   /' "$TMP/load"
else
	h=$(pq thread list --session wall --json |
		js '(d.threads.find(t => t.name === "sleeper") || { threadHandle: "" }).threadHandle')
	pq thread functions --thread "$h" --session wall --limit 0 --json >"$TMP/wall.functions"
	# f_field FUNC FIELD: FIELD of FUNC in the thread's function list ("none" when absent).
	f_field() {
		js "String((d.functions.find(f => f.name === '$1') || { $2: 'none' }).$2)" \
			<"$TMP/wall.functions"
	}
	main=$(f_field main totalPercentage)
	off=$(f_field '[off-CPU]' totalPercentage)
	off_ms=$(f_field '[off-CPU]' totalSamples)
	weight=$(js 'd.weightType' <"$TMP/wall.functions")
	off=$(awk -v v="$off" 'BEGIN { printf "%.1f", v }')
	truth=$(awk 'NF == 3 && $1 > 0 { printf "%.1f", 100 * (1 - ($2 + $3) / $1) }' "$TMP/times")
	# The positive precondition: the thread is there, main() under every row.
	if [[ -n $h ]] && within "$main" 100 1 && within "$off" "${truth:-none}" 5; then
		ok "firefox --wall: the call tree weighs time ([off-CPU] $off%, measured" \
			"$truth% off CPU; weights $weight)"
	else
		fail "firefox --wall: the call tree weighs time (thread '${h:-none}', main $main%," \
			"[off-CPU] $off%, measured ${truth:-none}% off CPU ($(cat "$TMP/times"))," \
			"expected within 5; weights $weight)"
		pq thread samples-top-down --thread "$h" --session wall 2>&1 | head -n 30 |
			sed 's/^/#   /'
	fi
	# "intervals off CPU: N (S s)": the same time as all threads' [off-CPU], in
	# ms, to within its rounding.
	off_ms=0
	for t in $(pq thread list --session wall --json | js 'd.threads.map(t => t.threadHandle).join(" ")'); do
		ms=$(pq thread functions --thread "$t" --session wall --limit 0 --json |
			js "(d.functions.find(f => f.name === '[off-CPU]') || { totalSamples: 0 }).totalSamples")
		off_ms=$(awk -v a="$off_ms" -v b="$ms" 'BEGIN { printf "%.3f", a + b }')
	done
	stderr_ms=$(sed -nE 's/.*intervals off CPU: [0-9]+ \(([0-9.]+) s\).*/\1/p' "$TMP/err" |
		awk '{ printf "%.1f", $1 * 1000 }')
	check "firefox --wall: time off CPU as on stderr ([off-CPU] $off_ms ms, stderr $stderr_ms ms)" \
		within "$off_ms" "${stderr_ms:-none}" 1
fi

# Folded stacks: the site's importer reads them too, one tree rooted at the process name.
if ! "$PROFILER" -F 499 -f folded -- "$WORKLOADS/threads" 2 >"$TMP/threads.folded" \
	2>"$TMP/err"; then
	fail "firefox: folded output loads: profiler failed"
	sed 's/^/#   /' "$TMP/err"
elif ! load "$TMP/threads.folded" folded; then
	fail "firefox: folded output loads: profiler-cli cannot load it"
	sed 's/^/#   /' "$TMP/load"
else
	h=$(pq thread list --session folded --json | js 'd.threads[0].threadHandle')
	root=$(total_pct "$h" threads folded)
	alpha=$(total_pct "$h" alpha_work folded)
	beta=$(total_pct "$h" beta_work folded)
	if within "$root" 100 0.1 && within "$alpha" 50 10 && within "$beta" 50 10; then
		ok "firefox: folded output loads (threads $root%: alpha_work $alpha%, beta_work $beta%)"
	else
		fail "firefox: folded output loads (threads $root%, expected 100; alpha_work" \
			"$alpha%, beta_work $beta%, expected 50±10 each)"
		pq thread samples-top-down --session folded 2>&1 | sed 's/^/#   /'
	fi
fi

# Python functions as functions of their own, in their own category, named
# "qualname (file.py:DEF)", DEF the line of the def: one function whichever
# of its lines ran; py_work.py's hot70 and hot30 share 70/30.
PY=/usr/bin/python3.11
if ! [[ -x $PY ]]; then
	missing "$PY is not installed (tools/install-deps installs python3.11)" "firefox: Python frames"
elif ! "$PROFILER" -F 499 -o "$TMP/python.json.gz" -- "$PY" \
	"$(dirname "$0")/../workloads/py_work.py" split 3 >/dev/null 2>"$TMP/err"; then
	fail "firefox: Python frames: profiler failed"
	sed 's/^/#   /' "$TMP/err"
elif ! load "$TMP/python.json.gz" python; then
	fail "firefox: Python frames: profiler-cli cannot load it"
	sed 's/^/#   /' "$TMP/load"
else
	h=$(pq thread list --session python --json | js 'd.threads[0].threadHandle')
	pq thread functions --thread "$h" --session python --limit 0 --json >"$TMP/py.functions"
	# share NAME: the total percentage of the functions whose name starts with NAME.
	share() {
		js "d.functions.filter(f => f.name.startsWith('$1')).reduce((a, f) => a + f.totalPercentage, 0).toFixed(1)" \
			<"$TMP/py.functions"
	}
	hot70=$(share 'hot70 (py_work.py:')
	hot30=$(share 'hot30 (py_work.py:')
	nr_hot70=$(js "d.functions.filter(f => f.name.startsWith('hot70 (')).length" <"$TMP/py.functions")
	category=$(gzip -dc "$TMP/python.json.gz" | js 'd.meta.categories.map(c => c.name).join(",")')
	ratio=$(awk -v a="$hot70" -v b="$hot30" 'BEGIN { if (a + b) printf "%.1f", 100 * a / (a + b); else print "none" }')
	if within "$ratio" 70 5 && [[ $category == *Python* && $nr_hot70 == 1 ]]; then
		ok "firefox: Python frames (hot70 $hot70%, hot30 $hot30%: $ratio% of the two; hot70 one function; categories $category)"
	else
		fail "firefox: Python frames (hot70 $hot70%, hot30 $hot30%: $ratio%, expected 70±5; hot70 $nr_hot70 functions, expected 1; categories $category)"
		head -c 2000 "$TMP/py.functions" | sed 's/^/#   /'
	fi
fi

# A heap profile: rows weigh bytes. heap_work sites allocates 14,000,000 bytes
# in 20,000 blocks at site70 and 12,000,000 in 40,000 at site30 (its own
# count, printed): 54% of the bytes, 33% of the calls.
if ! "$PROFILER" --alloc=1 -o "$TMP/alloc.json.gz" -- "$WORKLOADS/heap_work" sites 20000 \
	>"$TMP/alloc.out" 2>"$TMP/err"; then
	fail "firefox --alloc: the call tree weighs bytes: profiler failed"
	sed 's/^/#   /' "$TMP/err"
elif ! load "$TMP/alloc.json.gz" alloc; then
	fail "firefox --alloc: the call tree weighs bytes: profiler-cli cannot load it"
	sed 's/^/#   /' "$TMP/load"
else
	h=$(pq thread list --session alloc --json | js 'd.threads[0].threadHandle')
	pq thread functions --thread "$h" --session alloc --limit 0 --json >"$TMP/alloc.functions"
	site70=$(js "(d.functions.find(f => f.name === 'site70') || { totalPercentage: 0 }).totalPercentage.toFixed(1)" \
		<"$TMP/alloc.functions")
	weight=$(js 'd.weightType' <"$TMP/alloc.functions")
	# The workload's own bytes: site70's share of all it and the C library allocated.
	want=$(awk -F'[ =]' '/^site70 / { a = $3 } /^site30 / { b = $3 } END { if (a + b) printf "%.1f", 100 * a / (a + b) }' \
		"$TMP/alloc.out")
	if [[ $weight == bytes ]] && within "$site70" "$want" 1; then
		ok "firefox --alloc: the call tree weighs bytes (weightType $weight; site70 $site70% of the bytes, the program's own count $want%)"
	else
		fail "firefox --alloc: the call tree weighs bytes (weightType '$weight'; site70 $site70%, expected $want±1)"
		head -c 1500 "$TMP/alloc.functions" | sed 's/^/#   /'
	fi
fi
