# SPDX-License-Identifier: GPL-2.0-only
# Firefox Profiler output (-o X.json.gz) goes through the profiler's own
# loader, @firefox-devtools/profiler-cli, which `make profiler-cli` installs:
# the threads, call trees, CPU time and statistics we wrote come back out.
# Folded output, which the site imports too, loads as well.
. "$(dirname "$0")/lib.sh"

TESTS=("firefox: loads in profiler-cli" "firefox: thread names" "firefox: call tree of each thread"
	"firefox: CPU time" "firefox: truncated stacks" "firefox: statistics markers"
	"firefox: folded output loads")
require_bpf "${TESTS[@]}"

CLI=$OUTPUT/npm/node_modules/@firefox-devtools/profiler-cli/dist/profiler-cli.js
if [[ ! -f $CLI ]] || ! command -v node >/dev/null; then
	why="no $CLI or no node: run 'make profiler-cli'"
	for t in "${TESTS[@]}"; do
		if [[ ${PROFILER_REQUIRE_BPF:-0} == 1 ]]; then
			fail "$t ($why)"
		else
			skip "$t" "$why"
		fi
	done
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
		pq status --session "$2" 2>/dev/null | grep -q 'Selected thread:' &&
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
			grep -A1 'threads!run ' "$TMP/tree" | grep -q "threads!${w}_work "; then
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
fi

# A recursion deeper than a sample holds: every stack is truncated, which
# the statistics markers count as the profiler's summary does.
if ! "$PROFILER" -F 199 -o "$TMP/deep.json.gz" -- "$WORKLOADS/deep" 200 1 2>"$TMP/err"; then
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

	# "profiler: N samples in S s, N lost, N truncated, N stack errors, N processes ..."
	want=$(awk '/ samples in / { gsub(",", ""); printf "lost samples: %s, truncated stacks: %s, " \
		"stack read errors: %s, processes with unreadable maps: %s", $7, $9, $11, $14 }' \
		"$TMP/err")
	got=$(pq profile markers --category Other --limit 100 --session deep --json |
		js 'd.markers.map(m => m.name).join(", ")')
	check "firefox: statistics markers ($got)" test "$got" = "$want"
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
