# SPDX-License-Identifier: GPL-2.0-only
# profiler serve, scraped as continuous-profiling backends scrape it: go tool
# pprof fetching /debug/pprof/profile?seconds=N (the client Parca's and
# Alloy's scrapers are modelled on) gets the workload's 70/30 split, so do
# two scrapes that overlap, and the samples carry the labels a backend
# filters by. Bad requests get 400/404/405 and leave the agent serving;
# SIGTERM answers a scrape in flight with a 503 and stops it.
. "$(dirname "$0")/lib.sh"

TESTS=("serve: go tool pprof scrape" "serve: two overlapping scrapes" "serve: labels"
	"serve: other formats" "serve: bad requests" "serve: SIGTERM" "serve: --off-cpu window"
	"serve: bad options")
require_bpf "${TESTS[@]}"
# go tool pprof saves what it fetches under $PPROF_TMPDIR (else ~/pprof).
export PPROF_TMPDIR=$TMP/pprof

# The workload runs in a cgroup of its own, which its cgroup label names.
root=$(cgroup2_root)
cg=${root:+$root/profiler-e2e-serve.$$}
AGENT=
remove_cgroup() {
	[[ -n $AGENT ]] && kill "$AGENT" 2>/dev/null
	for pid in "${BG_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	if [[ -n $cg && -d $cg ]]; then
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			rmdir "$cg" 2>/dev/null && break
			sleep 0.1
		done
	fi
	cleanup
}
trap remove_cgroup EXIT

start_bg "$WORKLOADS/split" 70 30 -1
SPLIT=$BG_PID
[[ -n $cg ]] && mkdir "$cg" 2>/dev/null && echo "$SPLIT" >"$cg/cgroup.procs"
expected_cgroup=$(sed -n 's/^0:://p' "/proc/$SPLIT/cgroup")

"$PROFILER" serve --listen 127.0.0.1:0 -F 199 2>"$TMP/agent.err" &
AGENT=$!
# It says where it listens once sampling is attached.
for _ in $(seq 100); do
	grep -q 'serving on' "$TMP/agent.err" && break
	kill -0 "$AGENT" 2>/dev/null || break
	sleep 0.1
done
ADDR=$(grep -o 'http://[0-9.]*:[0-9]*' "$TMP/agent.err")
if [[ -z $ADDR ]]; then
	for t in "${TESTS[@]}"; do
		fail "$t: the agent did not start"
	done
	sed 's/^/#   /' "$TMP/agent.err"
	exit 0
fi
URL=$ADDR/debug/pprof/profile

# "N%" of hot_a in a profile, the workload's samples only.
hot_a_pct() {
	pct "$1" hot_a cum -tagfocus=comm=split
}

# The samples of split in a profile.
split_samples() {
	pprof -sample_index=samples -tags -tagfocus=comm=split "$1" 2>/dev/null |
		awk '$1 == "comm:" && $2 == "Total" { print int($3); exit }'
}

# --- one scrape, as go tool pprof -raw fetches it ---------------------------
go tool pprof -symbolize=none -raw "$URL?seconds=3" >"$TMP/raw" 2>"$TMP/raw.err"
# Named after the profile's first mapping, which may have a colon ("memfd:...").
saved=$(ls "$PPROF_TMPDIR"/*.pb.gz 2>/dev/null | head -1)
[[ -n $saved ]] && cp "$saved" "$TMP/first.pb.gz"
a=$(hot_a_pct "$TMP/first.pb.gz")
samples=$(summary_count "$TMP/raw" "on-CPU samples")
# 3 s at 199 Hz on the workload's CPU alone would be 597 samples.
if [[ -n $saved ]] && grep -q '^Samples:' "$TMP/raw" && within "$a" 70 5 &&
	[[ ${samples:-0} -ge 500 ]]; then
	ok "serve: go tool pprof scrape (hot_a $a% of split's, expected 70±5; $samples samples in 3 s)"
else
	fail "serve: go tool pprof scrape (hot_a $a%, expected 70±5; $samples samples; saved '$saved')"
	sed 's/^/#   /' "$TMP/raw.err" | head -5
	head -20 "$TMP/raw" | sed 's/^/#   /'
fi

# --- two scrapes whose windows overlap -------------------------------------
go tool pprof -symbolize=none -proto "$URL?seconds=4" >"$TMP/long.pb.gz" 2>"$TMP/long.err" &
long=$!
sleep 1
go tool pprof -symbolize=none -proto "$URL?seconds=2" >"$TMP/short.pb.gz" 2>"$TMP/short.err"
wait "$long"
a_long=$(hot_a_pct "$TMP/long.pb.gz")
a_short=$(hot_a_pct "$TMP/short.pb.gz")
n_long=$(split_samples "$TMP/long.pb.gz")
n_short=$(split_samples "$TMP/short.pb.gz")
# Each window has its own span: the 4 s one about twice the 2 s one's samples
# of split, which burns a CPU throughout (idle CPUs' samples vary more).
# Each share within 5 points, or three standard deviations of its count
# where that is more: beside other work, 255 samples read 75.68%.
tol_long=$(SHARE_TOL_FLOOR=5 share_tol "$n_long") tol_short=$(SHARE_TOL_FLOOR=5 share_tol "$n_short")
if within "$a_long" 70 "${tol_long:-x}" && within "$a_short" 70 "${tol_short:-x}" &&
	[[ ${n_short:-0} -gt 0 ]] &&
	within "$(awk -v l="${n_long:-0}" -v s="$n_short" 'BEGIN { print l / s }')" 2 0.3; then
	ok "serve: two overlapping scrapes (hot_a $a_long% over 4 s, $a_short% over 2 s, expected" \
		"70±$tol_long and 70±$tol_short; $n_long and $n_short samples of split)"
else
	fail "serve: two overlapping scrapes (hot_a $a_long% and $a_short%, expected 70±${tol_long:-?} and 70±${tol_short:-?};" \
		"$n_long and $n_short samples of split, expected a ratio of 2±0.3)"
	cat "$TMP/long.err" "$TMP/short.err" | sed 's/^/#   /' | head -10
fi

# --- labels -----------------------------------------------------------------
f=$TMP/long.pb.gz
pid=$(tag_values "$f" pid -tagfocus=comm=split | paste -sd ' ')
thread=$(tag_values "$f" thread -tagfocus=comm=split | paste -sd ' ')
cmdline=$(tag_values "$f" cmdline -tagfocus=comm=split | paste -sd '|')
cgroup=$(tag_values "$f" cgroup -tagfocus=comm=split | paste -sd '|')
comms=$(tag_count "$f" comm)
if [[ $pid == "$SPLIT" && $thread == split && $cmdline == *"split 70 30 -1" &&
	-n $expected_cgroup && $cgroup == "$expected_cgroup" && $comms -ge 2 ]]; then
	ok "serve: labels (pid $pid, thread $thread, cmdline '$cmdline', cgroup '$cgroup'," \
		"$comms process names in all)"
else
	fail "serve: labels (pid '$pid' expected $SPLIT, thread '$thread', cmdline '$cmdline'," \
		"cgroup '$cgroup' expected '$expected_cgroup', $comms process names)"
	pprof -tags "$f" 2>&1 | head -30 | sed 's/^/#   /'
fi

# --- the other formats ------------------------------------------------------
curl -s -o "$TMP/p.folded" -w '%{http_code} %{content_type}\n' "$URL?seconds=1&format=folded" \
	>"$TMP/folded.http"
curl -s -o "$TMP/p.svg" -w '%{http_code} %{content_type}\n' "$URL?seconds=1&format=svg" \
	>"$TMP/svg.http"
curl -s -o "$TMP/p.json" -w '%{http_code} %{content_type}\n' "$URL?seconds=1&format=firefox" \
	>"$TMP/json.http"
leaf=$(grep '^split;' "$TMP/p.folded" | folded_leaf_pct /dev/stdin hot_a)
if grep -q '^200 text/plain' "$TMP/folded.http" && grep -q '^200 image/svg+xml' "$TMP/svg.http" &&
	grep -q '^200 application/json' "$TMP/json.http" && xmllint --noout "$TMP/p.svg" &&
	node -e 'const p = JSON.parse(require("fs").readFileSync(process.argv[1]));
		if (!p.threads.some(t => t.processName.includes("split"))) process.exit(1)' \
		"$TMP/p.json" && [[ $leaf =~ ^[0-9]+$ && $leaf -ge 55 && $leaf -le 85 ]]; then
	ok "serve: other formats (folded, svg and firefox answered; hot_a leaf $leaf% of split's folded)"
else
	fail "serve: other formats (hot_a leaf '$leaf'% of split's folded)"
	cat "$TMP"/*.http | sed 's/^/#   /'
fi

# --- bad requests: a clear answer each, and the agent keeps serving -----------
status() {
	curl -s -o "$TMP/body" -w '%{http_code}' "$@"
}
bad=()
for q in "seconds=0" "seconds=301" "seconds=abc" "seconds=-5" "seconds=1e3" "format=xml"; do
	code=$(status "$URL?$q")
	[[ $code == 400 && $(wc -l <"$TMP/body") -eq 1 ]] || bad+=("$q: $code $(cat "$TMP/body")")
done
code=$(status "$ADDR/debug/pprof/heap")
[[ $code == 404 ]] || bad+=("/debug/pprof/heap: $code")
code=$(status -X POST "$ADDR/metrics")
[[ $code == 405 ]] || bad+=("POST: $code")
code=$(status -H "X-Big: $(head -c 40000 /dev/zero | tr '\0' x)" "$ADDR/metrics")
[[ $code == 431 || $code == 413 || $code == 400 || $code == 000 ]] || bad+=("40 kB header: $code")
code=$(status "$ADDR/debug/pprof/")
grep -q '/debug/pprof/profile' "$TMP/body" || bad+=("index: $code, no link to the profile")
metrics_code=$(status "$ADDR/metrics")
grep -q '^profiler_http_requests_total{code="400"} [1-9]' "$TMP/body" ||
	bad+=("/metrics ($metrics_code) counts no 400")
if [[ ${#bad[@]} -eq 0 ]] && kill -0 "$AGENT" 2>/dev/null; then
	ok "serve: bad requests (400, 404, 405, a huge header refused; index and metrics still served)"
else
	fail "serve: bad requests (${bad[*]})"
fi

# --- SIGTERM: the scrape in flight gets a 503, the agent exits 0 --------------
curl -s -o "$TMP/inflight" -w '%{http_code}' "$URL?seconds=20" >"$TMP/inflight.code" &
curler=$!
sleep 1
start=$(date +%s%N)
kill -TERM "$AGENT"
wait "$AGENT"
rc=$?
wait "$curler"
took=$((($(date +%s%N) - start) / 1000000))
AGENT=
code=$(cat "$TMP/inflight.code")
if [[ $rc -eq 0 && $code == 503 && $took -lt 3000 ]] && grep -q 'stopped by SIGTERM' "$TMP/agent.err"; then
	ok "serve: SIGTERM (exit 0 in $took ms; the scrape in flight got $code: $(cat "$TMP/inflight"))"
else
	fail "serve: SIGTERM (exit $rc in $took ms, the scrape in flight got '$code')"
	sed 's/^/#   /' "$TMP/agent.err"
fi

# --- --off-cpu: a window holds the time off CPU of its span, no more --------
# sleeper burns 200 ms and sleeps 800 ms, turn about: its sleeps straddle the
# window's edges. An interval counts in each window it overlaps, for the
# part inside, and one still under way at a window's end counts up to it:
# a 3 s window holds 80% of 3 s off CPU, all in sleep_phase, wherever its
# edges fall. (Not in the agent's first second: a sleep that began before
# sampling was attached is unknown.)
start_bg "$WORKLOADS/sleeper" 60 200 800
SLEEPER=$BG_PID
"$PROFILER" serve --listen 127.0.0.1:0 --off-cpu -p "$SLEEPER" 2>"$TMP/off.err" &
AGENT=$!
for _ in $(seq 100); do
	grep -q 'serving on' "$TMP/off.err" && break
	sleep 0.1
done
OFF_URL=$(grep -o 'http://[0-9.]*:[0-9]*' "$TMP/off.err")/debug/pprof/profile
sleep 1
curl -s -o "$TMP/off.pb.gz" "$OFF_URL?seconds=3"
off_ms=$(pprof -sample_index=offcpu -unit=ms -top "$TMP/off.pb.gz" 2>/dev/null |
	sed -nE 's/.*Total samples = ([0-9.]+)ms.*/\1/p')
sleep_share=$(pct "$TMP/off.pb.gz" sleep_phase cum -sample_index=offcpu)
kill "$AGENT" 2>/dev/null
wait "$AGENT" 2>/dev/null
AGENT=
if within "$off_ms" 2400 150 && within "$sleep_share" 100 5; then
	ok "serve: --off-cpu window (${off_ms} ms off CPU in a 3 s window, $sleep_share% in sleep_phase)"
else
	fail "serve: --off-cpu window (${off_ms:-no} ms off CPU in a 3 s window, expected 2400±150;" \
		"$sleep_share% in sleep_phase)"
	sed 's/^/#   /' "$TMP/off.err"
fi

# --- bad options: usage errors, and a port that is taken ---------------------
bad=()
"$PROFILER" serve -- true 2>"$TMP/err"
[[ $? -eq 2 ]] && grep -q 'takes no command' "$TMP/err" || bad+=("-- COMMAND: $(cat "$TMP/err")")
"$PROFILER" serve -d 5 2>"$TMP/err"
[[ $? -eq 2 ]] && grep -q 'no -d' "$TMP/err" || bad+=("-d: $(cat "$TMP/err")")
"$PROFILER" serve --listen nonsense 2>"$TMP/err"
[[ $? -eq 2 ]] && grep -q "expected HOST:PORT" "$TMP/err" || bad+=("--listen nonsense: $(cat "$TMP/err")")
# token_file_refused WHAT PATTERN ARGS...: exit 2, one line matching PATTERN.
token_file_refused() {
	local what=$1 pattern=$2
	shift 2
	timeout 10 "$PROFILER" "$@" 2>"$TMP/err"
	local rc=$?
	[[ $rc -eq 2 && $(wc -l <"$TMP/err") -eq 1 ]] && grep -q -- "$pattern" "$TMP/err" ||
		bad+=("$what: exit $rc: $(cat "$TMP/err")")
}
: >"$TMP/empty-token"
mkfifo "$TMP/fifo-token"
printf 'two words\n' >"$TMP/blank-token"
token_file_refused "--token-file missing" "cannot read --token-file" \
	serve --token-file "$TMP/no-such-token"
token_file_refused "--token-file empty" "holds no token" serve --token-file "$TMP/empty-token"
token_file_refused "--token-file a FIFO" "not a regular file" serve --token-file "$TMP/fifo-token"
token_file_refused "--token-file with a blank" "has a blank" serve --token-file "$TMP/blank-token"
token_file_refused "--token-file recording" "is an option of profiler serve" \
	--token-file "$TMP/empty-token" -- true
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(30)' >"$TMP/port" &
holder=$!
BG_PIDS+=("$holder")
for _ in $(seq 50); do [[ -s $TMP/port ]] && break; sleep 0.1; done
"$PROFILER" serve --listen "127.0.0.1:$(cat "$TMP/port")" 2>"$TMP/err"
rc=$?
[[ $rc -eq 1 && $(wc -l <"$TMP/err") -eq 1 ]] && grep -q 'Address already in use' "$TMP/err" ||
	bad+=("port in use: exit $rc: $(cat "$TMP/err")")
if [[ ${#bad[@]} -eq 0 ]]; then
	ok "serve: bad options (a command, -d, a bad address, a --token-file missing, empty," \
		"a FIFO, with a blank, or given to a recording: exit 2; a port in use: exit 1)"
else
	fail "serve: bad options (${bad[*]})"
fi
