# SPDX-License-Identifier: GPL-2.0-only
# Off-CPU time: --off-cpu records where a thread blocks and for how long,
# --wall merges it with on-CPU time so each thread's total is its wall time.
# sleeper spends 10 ms burning and 10 ms asleep, turn about.
. "$(dirname "$0")/lib.sh"

require_bpf "--wall: half asleep, half burning" "--off-cpu: time blocked in sleep_phase" \
	"--wall: sample types" "--wall: one summary in every output" "--off-cpu: sample types" \
	"--wall folded: counts are microseconds" "--off-cpu folded: time asleep only" \
	"--wall: 20 us sleeps add up to the wall time" \
	"--off-cpu: intervals under --off-cpu-min counted and said"

# sample_types FILE: the profile's sample types, as pprof -raw lists them
# ("type/unit" each, the default one marked [dflt]).
sample_types() {
	pprof -raw "$1" 2>/dev/null | awk '/^Samples:/ { getline; print; exit }'
}

# Under --wall, time spent preempted (waiting for a CPU) counts too, in
# whatever function was running: on a busy machine burn_phase() would take a
# share of it. At nice -20 (inherited by the command) sleeper is rarely
# preempted, whatever else runs.
profile() {
	nice -n -20 "$PROFILER" "$@"
}

# The summary's lines, one a line: from stderr ("profiler: A: N; B: N"),
# pprof's comments, the markers of the Firefox output's first thread, the
# SVG's lines of text under its title (class "stats").
summary_stderr() {
	grep -E '^profiler: (on-CPU samples|truncated stacks|frames|BPF program [^:]*): ' "$1" |
		sed 's/^profiler: //; s/; /\n/g'
}
summary_pprof() {
	pprof -comments "$1" 2>/dev/null
}
summary_firefox() {
	python3 -c 'import gzip, json, sys
t = json.load(gzip.open(sys.argv[1]))["threads"][0]
print("\n".join(t["stringArray"][i] for i in t["markers"]["name"]))' "$1"
}
summary_svg() {
	sed -n 's|^<text class="stats"[^>]*>\(.*\)</text>$|\1|p' "$1" | sed 's/; /\n/g'
}

if profile --wall -F 499 -o "$TMP/wall.pb.gz" -o "$TMP/wall.json.gz" -o "$TMP/wall.svg" -- \
	"$WORKLOADS/sleeper" 3 10 10 2>"$TMP/err"; then
	asleep=$(pct "$TMP/wall.pb.gz" sleep_phase cum)
	burning=$(pct "$TMP/wall.pb.gz" burn_phase cum)
	if within "$asleep" 50 5 && within "$burning" 50 5; then
		ok "--wall: half asleep, half burning (sleep_phase $asleep%, burn_phase $burning%)"
	else
		fail "--wall: half asleep, half burning (sleep_phase $asleep%, burn_phase $burning%," \
			"expected 50±5 each)"
		pprof -top -cum -nodecount=15 "$TMP/wall.pb.gz" 2>&1 | sed 's/^/#   /'
	fi
	types=$(sample_types "$TMP/wall.pb.gz")
	check "--wall: sample types ($types)" test "$types" = "samples/count wall/nanoseconds[dflt]"

	# The same counts in the same words everywhere: on-CPU samples are not
	# the pprof samples/count total, which adds the intervals off CPU.
	summary_stderr "$TMP/err" >"$TMP/sum.stderr"
	summary_pprof "$TMP/wall.pb.gz" >"$TMP/sum.pprof"
	summary_firefox "$TMP/wall.json.gz" >"$TMP/sum.firefox" 2>&1
	summary_svg "$TMP/wall.svg" >"$TMP/sum.svg"
	samples=$(summary_count "$TMP/sum.stderr" "on-CPU samples")
	intervals=$(summary_count "$TMP/sum.stderr" "intervals off CPU")
	rows=$(pprof -raw "$TMP/wall.pb.gz" 2>/dev/null |
		awk '/^Samples:/ { s = 1; getline; next } /^Locations/ { s = 0 }
			s && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+:$/ { n += $1 } END { print n + 0 }')
	state="on-CPU samples ${samples:-none}, intervals off CPU ${intervals:-none}, samples/count $rows"
	if [[ ${samples:-0} -gt 0 && ${intervals:-0} -gt 0 && $rows -eq $((samples + intervals)) ]] &&
		cmp -s "$TMP/sum.stderr" "$TMP/sum.pprof" && cmp -s "$TMP/sum.stderr" "$TMP/sum.firefox" &&
		cmp -s "$TMP/sum.stderr" "$TMP/sum.svg"; then
		ok "--wall: one summary in every output ($state; $(wc -l <"$TMP/sum.stderr") lines)"
	else
		fail "--wall: one summary in every output ($state)"
		for f in stderr pprof firefox svg; do
			sed "s/^/#   $f: /" "$TMP/sum.$f"
		done
	fi
else
	fail "--wall: half asleep, half burning: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

if profile --off-cpu -F 499 -o "$TMP/off.pb.gz" -- "$WORKLOADS/sleeper" 3 10 10 \
	2>"$TMP/err"; then
	asleep=$(pct "$TMP/off.pb.gz" sleep_phase cum -sample_index=offcpu)
	check "--off-cpu: time blocked in sleep_phase ($asleep% of off-CPU time, expected >= 90)" \
		within "$asleep" 95 5
	types=$(sample_types "$TMP/off.pb.gz")
	check "--off-cpu: sample types ($types)" \
		test "$types" = "samples/count cpu/nanoseconds offcpu/nanoseconds[dflt]"
else
	fail "--off-cpu: time blocked in sleep_phase: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# 3 s of one thread, on and off CPU, in microseconds.
if profile --wall -F 499 -f folded -o "$TMP/wall.folded" -- "$WORKLOADS/sleeper" 3 10 10 \
	2>"$TMP/err"; then
	total=$(awk '{ n += $NF } END { print n + 0 }' "$TMP/wall.folded")
	check "--wall folded: counts are microseconds ($total in all, expected 3000000±20%)" \
		within "$total" 3000000 600000
else
	fail "--wall folded: counts are microseconds: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# Off CPU alone: half of those 3 s, asleep; the burning half is not there.
if profile --off-cpu -F 499 -f folded -o "$TMP/off.folded" -- "$WORKLOADS/sleeper" 3 10 10 \
	2>"$TMP/err"; then
	total=$(awk '{ n += $NF } END { print n + 0 }' "$TMP/off.folded")
	burning=$(grep -c ';burn_phase ' "$TMP/off.folded")
	if within "$total" 1500000 300000 && [[ $burning -eq 0 ]]; then
		ok "--off-cpu folded: time asleep only ($total us, no on-CPU stacks)"
	else
		fail "--off-cpu folded: time asleep only ($total us, expected 1500000±20%;" \
			"$burning on-CPU stacks)"
		sort -t' ' -k2 -nr "$TMP/off.folded" | head -5 | sed 's/^/#   /'
	fi
else
	fail "--off-cpu folded: time asleep only: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# Every interval off CPU counts under --wall, however short: a thread that
# sleeps 20 us at a time, ten thousand times a second, adds up to the time it
# ran (which it prints itself) within 1%.
if profile --wall -f folded -o "$TMP/short.folded" -- "$WORKLOADS/short_sleeps" 3 20 \
	>"$TMP/short.out" 2>"$TMP/err"; then
	ran=$(($(cat "$TMP/short.out") / 1000))
	total=$(awk '/^short_sleeps;/ { n += $NF } END { print n + 0 }' "$TMP/short.folded")
	sleeping=$(awk '/;short_sleep;/ { n += $NF } END { print n + 0 }' "$TMP/short.folded")
	if [[ $ran -gt 2900000 && $sleeping -gt 0 ]] && within "$total" "$ran" $((ran / 100)); then
		ok "--wall: 20 us sleeps add up to the wall time ($total us of $ran us," \
			"$sleeping us in short_sleep)"
	else
		fail "--wall: 20 us sleeps add up to the wall time ($total us of $ran us expected" \
			"within 1%, $sleeping us in short_sleep)"
		sed 's/^/#   /' "$TMP/err"
	fi
else
	fail "--wall: 20 us sleeps add up to the wall time: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# --off-cpu leaves out intervals under --off-cpu-min (100 us), but counts
# them: the same thread sleeping 1 us at a time (some 50-80 us with the
# timer's slack) is off CPU almost only in those. The summary says how many
# and how long; when that is most of the time off CPU, a warning says how
# to keep them.
if profile --off-cpu -f folded -o "$TMP/shortoff.folded" -- "$WORKLOADS/short_sleeps" 2 1 \
	>/dev/null 2>"$TMP/err"; then
	line=$(grep -oE 'intervals off CPU under --off-cpu-min: [0-9]+ \([0-9.]+ s\)' "$TMP/err")
	short=$(sed -nE 's/.*: ([0-9]+) .*/\1/p' <<<"$line")
	short_s=$(sed -nE 's/.*\(([0-9.]+) s\)/\1/p' <<<"$line")
	kept_s=$(sed -nE 's/.*intervals off CPU: [0-9]+ \(([0-9.]+) s\).*/\1/p' "$TMP/err")
	warned=$(grep -c 'shorter than --off-cpu-min (100 us), left out: a lower --off-cpu-min' "$TMP/err")
	# The warning comes exactly when the summary's figures say most was left out.
	want=$(awk -v s="${short_s:-0}" -v k="${kept_s:-0}" 'BEGIN { print (s > k) ? 1 : 0 }')
	check "--off-cpu: intervals under --off-cpu-min counted and said ($line; kept ${kept_s:-?} s; warned $warned, expected $want)" \
		awk -v n="${short:-0}" -v w="$warned" -v e="$want" 'BEGIN { exit !(n >= 1000 && w == e) }'
else
	fail "--off-cpu: intervals under --off-cpu-min counted and said: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi
