# SPDX-License-Identifier: GPL-2.0-only
# profiler serve's /metrics, read by what reads it in production: the
# exposition has every metric of doc/serve.md's list with its type and passes
# `promtool check metrics`, and Debian's Prometheus server, started here on
# loopback with a configuration, a port and a data directory of its own (never
# the prometheus.service Debian may run on :9090), scrapes the agent every
# second and reports through its query API the target up and
# profiler_samples_total rising while a workload burns CPU. Prometheus's
# checks skip where the prometheus package is not installed. The agent
# answers only requests with its token (--token-file), which Prometheus
# sends from the same file (authorization: credentials_file), as Parca's and
# Alloy's bearer_token_file do: without it, or with another, 401.
. "$(dirname "$0")/lib.sh"

T_METRICS="serve: /metrics answers in text format 0.0.4, every metric with its type"
T_PROMTOOL="serve: promtool check metrics accepts /metrics"
T_UP="serve: Prometheus scrapes the agent (up == 1)"
T_RISING="serve: profiler_samples_total rises in Prometheus"
T_STOP="serve: SIGTERM stops the agent with status 0"
T_TOKEN="serve: a request without the agent's token, or with another, is 401"
TESTS=("$T_METRICS" "$T_PROMTOOL" "$T_UP" "$T_RISING" "$T_STOP" "$T_TOKEN")
require_bpf "${TESTS[@]}"

PROMETHEUS=/usr/bin/prometheus

# What /metrics must declare, as "NAME TYPE". The BPF run counters come from
# the kernel's bpf_stats, only counted while kernel.bpf_stats_enabled is 1.
EXPECTED=(
	"profiler_samples_total counter" "profiler_offcpu_intervals_total counter"
	"profiler_lost_samples_total counter" "profiler_lost_offcpu_intervals_total counter"
	"profiler_truncated_stacks_total counter" "profiler_distinct_stacks gauge"
	"profiler_targets gauge" "profiler_windows_active gauge" "profiler_symbolizer_files gauge" "profiler_symbolizer_modules gauge"
	"profiler_symbolizer_lookups_total counter" "profiler_symbolizer_hits_total counter"
	"profiler_bpf_stats_enabled gauge"
	"process_cpu_seconds_total counter" "process_resident_memory_bytes gauge"
	"process_start_time_seconds gauge" "profiler_http_requests_total counter"
	"profiler_http_connections_closed_total counter"
)
if [[ $(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null) == 1 ]]; then
	EXPECTED+=("profiler_bpf_runs_total counter" "profiler_bpf_run_seconds_total counter"
		"profiler_bpf_seconds_per_run gauge")
fi

# A TCP port nobody listens on now, on loopback.
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# Whatever happens, the agent and Prometheus are gone when the test is: lib.sh's
# cleanup sends SIGTERM and waits, which would hang on an agent that ignores
# it, so anything still alive after 5 s gets SIGKILL first.
stop_all() {
	local pid alive
	for pid in "${BG_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for _ in $(seq 50); do
		alive=0
		for pid in "${BG_PIDS[@]}"; do
			kill -0 "$pid" 2>/dev/null && alive=1
		done
		[[ $alive -eq 0 ]] && break
		sleep 0.1
	done
	for pid in "${BG_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
	done
	cleanup
}
trap stop_all EXIT

start_bg "$WORKLOADS/split" 50 50 120

PORT=$(free_port)
URL=http://127.0.0.1:$PORT
TOKEN=$(head -c 24 /dev/urandom | base64 | tr '+/' '-_')
(umask 077 && echo "$TOKEN" >"$TMP/token")
start_bg "$PROFILER" serve --listen "127.0.0.1:$PORT" -F 99 --token-file "$TMP/token" \
	2>"$TMP/serve.err"
AGENT=$BG_PID

# get URL FILE: the body of URL in FILE, its headers in FILE.headers, asked
# with the agent's token; never more than 5 s.
get() {
	curl -sS --max-time 5 -H "Authorization: Bearer $TOKEN" -D "$2.headers" -o "$2" "$1" \
		2>"$2.curl"
}

# Loading the BPF program and reading every process takes a while with -a:
# wait for /metrics up to 30 s, or until the agent has exited.
SECONDS=0
answered=0
while [[ $SECONDS -lt 30 ]]; do
	if get "$URL/metrics" "$TMP/metrics"; then
		answered=1
		break
	fi
	kill -0 "$AGENT" 2>/dev/null || break
	sleep 0.2
done
if [[ $answered -eq 0 ]]; then
	if kill -0 "$AGENT" 2>/dev/null; then
		why="no answer from $URL/metrics in ${SECONDS}s"
	else
		wait "$AGENT"
		why="the agent exited with status $? before $URL/metrics answered"
	fi
	for t in "${TESTS[@]}"; do
		fail "$t: $why"
	done
	sed 's/^/#   curl: /' "$TMP/metrics.curl" 2>/dev/null
	sed 's/^/#   agent: /' "$TMP/serve.err"
	exit 0
fi
waited=$SECONDS

# The banner (what follows the URL is free), the format and the metrics: a
# second request, after a first one answered 200, counts at least that one in
# profiler_http_requests_total.
banner=$(grep -cE "^profiler: serving on $URL/debug/pprof/( |\$)" "$TMP/serve.err")
get "$URL/metrics" "$TMP/metrics"
status=$(awk 'NR == 1 { print $2 }' "$TMP/metrics.headers")
ctype=$(tr -d '\r' <"$TMP/metrics.headers" | sed -n 's/^[Cc]ontent-[Tt]ype: *//p' | tail -n 1)
missing=()
for e in "${EXPECTED[@]}"; do
	grep -qx "# TYPE $e" "$TMP/metrics" || missing+=("${e% *} (${e#* })")
done
ok200=$(sed -nE 's/^profiler_http_requests_total\{(.*,)?code="200"(,.*)?\} ([0-9.e+]+)$/\3/p' \
	"$TMP/metrics" | head -n 1)
if [[ $banner -eq 1 && $status == 200 && $ctype =~ ^text/plain\;\ *version=0\.0\.4 &&
	${#missing[@]} -eq 0 ]] && awk -v n="${ok200:-0}" 'BEGIN { exit !(n >= 1) }'; then
	ok "$T_METRICS (after ${waited}s; ${#EXPECTED[@]} metrics;" \
		"$ok200 requests answered 200)"
else
	fail "$T_METRICS (banner lines: $banner; HTTP status '$status', Content-Type" \
		"'$ctype'; requests answered 200: '${ok200:-none}'; missing or mistyped:" \
		"${missing[*]:-none})"
	grep '^# TYPE ' "$TMP/metrics" | sed 's/^/#   metrics: /'
	sed 's/^/#   agent: /' "$TMP/serve.err"
fi

# Without the token, with another, and with a lowercase scheme (RFC 7235:
# case-insensitive), which is the token.
status_of() {
	curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$@"
}
none=$(status_of "$URL/metrics")
other=$(status_of -H "Authorization: Bearer x$TOKEN" "$URL/debug/pprof/profile?seconds=1")
lower=$(status_of -H "authorization: bearer $TOKEN" "$URL/metrics")
challenge=$(curl -s --max-time 5 -D - -o /dev/null "$URL/" | tr -d '\r' |
	sed -n 's/^[Ww][Ww][Ww]-[Aa]uthenticate: *//p')
if [[ $none == 401 && $other == 401 && $lower == 200 && $challenge == Bearer* ]]; then
	ok "$T_TOKEN (none: $none, another: $other, 'bearer' in lowercase: $lower; $challenge)"
else
	fail "$T_TOKEN (none: '$none', another: '$other', lowercase: '$lower'; challenge '$challenge')"
fi

if ! command -v promtool >/dev/null; then
	skip "$T_PROMTOOL" "no promtool (tools/install-deps installs prometheus)"
elif [[ $status == 200 && -s $TMP/metrics ]]; then
	if promtool check metrics <"$TMP/metrics" >"$TMP/promtool" 2>&1; then
		ok "$T_PROMTOOL ($(grep -c '^# TYPE ' "$TMP/metrics") metric families)"
	else
		fail "$T_PROMTOOL"
		sed 's/^/#   /' "$TMP/promtool"
	fi
else
	fail "$T_PROMTOOL: no exposition to check (HTTP status '$status')"
fi

if ! [[ -x $PROMETHEUS ]]; then
	skip "$T_UP" "no $PROMETHEUS (tools/install-deps installs prometheus)"
	skip "$T_RISING" "no $PROMETHEUS (tools/install-deps installs prometheus)"
else
	PROM_PORT=$(free_port)
	PROM=http://127.0.0.1:$PROM_PORT
	mkdir -p "$TMP/prometheus/data"
	cat >"$TMP/prometheus/prometheus.yml" <<-EOF
		global:
		  scrape_interval: 1s
		  evaluation_interval: 1s
		scrape_configs:
		  - job_name: profiler
		    scrape_interval: 1s
		    scrape_timeout: 1s
		    authorization:
		      credentials_file: $TMP/token
		    static_configs:
		      - targets: ['127.0.0.1:$PORT']
	EOF
	start_bg "$PROMETHEUS" --config.file="$TMP/prometheus/prometheus.yml" \
		--storage.tsdb.path="$TMP/prometheus/data" --web.listen-address="127.0.0.1:$PROM_PORT" \
		>"$TMP/prometheus.log" 2>&1
	PROM_PID=$BG_PID

	# query PROMQL: the value of the first series PROMQL returns now, or
	# nothing (no answer, an error, no series).
	query() {
		curl -sS --max-time 5 -G "$PROM/api/v1/query" --data-urlencode "query=$1" 2>/dev/null |
			python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")' 2>/dev/null
	}
	# What Prometheus says of the target, for failure messages.
	target_state() {
		curl -sS --max-time 5 "$PROM/api/v1/targets" 2>&1 |
			python3 -c 'import json, sys
for t in json.load(sys.stdin)["data"]["activeTargets"]:
    print(t["scrapeUrl"], t["health"], repr(t["lastError"]))' 2>&1
	}

	# Until up is 1 and the counter rose between two queries 3 s apart, or 40 s.
	SECONDS=0
	up="" up_at="" first="" last="" ready=0
	while [[ $SECONDS -lt 40 ]]; do
		kill -0 "$PROM_PID" 2>/dev/null || break
		if [[ $ready -eq 0 ]]; then
			curl -sf --max-time 2 -o /dev/null "$PROM/-/ready" && ready=1
		fi
		if [[ $ready -eq 1 ]]; then
			up=$(query 'up{job="profiler"}')
			last=$(query 'profiler_samples_total{job="profiler"}')
			[[ $up == 1 && -z $up_at ]] && up_at=$SECONDS
			if [[ $up == 1 && $last =~ ^[0-9.e+]+$ ]]; then
				if [[ -z $first ]]; then
					first=$last
					first_at=$SECONDS
				elif [[ $((SECONDS - first_at)) -ge 3 ]] &&
					awk -v a="$first" -v b="$last" 'BEGIN { exit !(b > a) }'; then
					break
				fi
			fi
		fi
		sleep 1
	done

	if [[ $ready -eq 0 ]]; then
		kill -0 "$PROM_PID" 2>/dev/null && why="not ready after ${SECONDS}s" ||
			why="exited"
		fail "$T_UP: Prometheus on $PROM $why"
		fail "$T_RISING: Prometheus on $PROM $why"
		tail -n 20 "$TMP/prometheus.log" | sed 's/^/#   prometheus: /'
	else
		if [[ $up == 1 ]]; then
			ok "$T_UP (after ${up_at}s)"
		else
			fail "$T_UP (up is '${up:-no series}' after ${SECONDS}s)"
			target_state | sed 's/^/#   target: /'
			tail -n 20 "$TMP/prometheus.log" | sed 's/^/#   prometheus: /'
		fi
		if [[ $up == 1 && -n $first ]] &&
			awk -v a="$first" -v b="$last" 'BEGIN { exit !(b > a) }'; then
			ok "$T_RISING (from $first to $last in $((SECONDS - first_at))s)"
		else
			fail "$T_RISING (up '${up:-no series}'; profiler_samples_total first" \
				"'${first:-no series}', last '${last:-no series}' after ${SECONDS}s)"
			target_state | sed 's/^/#   target: /'
		fi
	fi
fi

# The agent stops on SIGTERM within 10 s, with status 0.
if kill -0 "$AGENT" 2>/dev/null; then
	kill -TERM "$AGENT"
	SECONDS=0
	while kill -0 "$AGENT" 2>/dev/null && [[ $SECONDS -lt 10 ]]; do
		sleep 0.1
	done
	if kill -0 "$AGENT" 2>/dev/null; then
		fail "$T_STOP (still running 10 s after SIGTERM)"
	else
		wait "$AGENT"
		rc=$?
		if [[ $rc -eq 0 ]]; then
			ok "$T_STOP (in ${SECONDS}s)"
		else
			fail "$T_STOP (exit status $rc)"
			sed 's/^/#   agent: /' "$TMP/serve.err"
		fi
	fi
else
	wait "$AGENT"
	fail "$T_STOP: the agent had exited already, with status $?"
	sed 's/^/#   agent: /' "$TMP/serve.err"
fi
