# SPDX-License-Identifier: GPL-2.0-only
# profiler serve against local clients it cannot trust: a served profile
# names kernel functions but tells no kernel address (KASLR), unless the
# operator asks for them with --raw-kernel-addresses; clients that ask for
# long profiles and hang up, and clients that send their headers a byte at
# a time, from two loopback addresses, do not keep /metrics or a scrape
# from being answered.
. "$(dirname "$0")/lib.sh"

TESTS=("serve hostile: no kernel address in a served profile"
	"serve hostile: --raw-kernel-addresses gives them"
	"serve hostile: /metrics does not wait behind profiles"
	"serve hostile: abandoned scrapes release their slots"
	"serve hostile: slow clients do not block /metrics")
require_bpf "${TESTS[@]}"
export PPROF_TMPDIR=$TMP/pprof
AGENT=
stop_agent() {
	[[ -n $AGENT ]] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	AGENT=
}
trap 'stop_agent; cleanup' EXIT

# start_agent ARGS...: an agent on a free loopback port, its base URL in $ADDR.
start_agent() {
	"$PROFILER" serve --listen 127.0.0.1:0 -F 199 "$@" 2>"$TMP/agent.err" &
	AGENT=$!
	ADDR=
	for _ in $(seq 100); do
		grep -q 'serving on' "$TMP/agent.err" && break
		kill -0 "$AGENT" 2>/dev/null || break
		sleep 0.1
	done
	ADDR=$(grep -o 'http://[0-9.]*:[0-9]*' "$TMP/agent.err")
	[[ -n $ADDR ]]
}

# A workload that spends its time in the kernel: reading /dev/zero.
start_bg dd if=/dev/zero of=/dev/null bs=512 count=2000000000

# kernel_report RAW: what go tool pprof -raw output RAW holds of the kernel: "N named
# kernel locations (mapping M=ID), addresses at or above 0xffff800000000000: 'A B C'".
kernel_report() {
	local kmap named=0 high
	kmap=$(awk '/^Mappings/ { m = 1; next }
		m && /\[kernel\.kallsyms\]/ { sub(":", "", $1); print "M=" $1; exit }' "$1")
	[[ -n $kmap ]] &&
		named=$(awk -v k="$kmap" '$3 == k && $4 !~ /^\[/ && $4 != "" { n++ } END { print n + 0 }' "$1")
	high=$(high_addresses "$1" | head -3 | paste -sd ' ')
	echo "$named named kernel locations (mapping $kmap), addresses at or above 0xffff800000000000: '$high'"
}

# high_addresses FILE: the 64-bit hex numbers in FILE at or above 0xffff800000000000.
high_addresses() {
	grep -oiE '0x[0-9a-f]{16}' "$1" | tr 'A-F' 'a-f' | awk '$0 >= "0xffff800000000000"' | sort -u
}

# --- kernel addresses -------------------------------------------------------------------
if start_agent; then
	go tool pprof -symbolize=none -raw "$ADDR/debug/pprof/profile?seconds=2" >"$TMP/raw" \
		2>"$TMP/raw.err"
	curl -s "$ADDR/debug/pprof/profile?seconds=1&format=folded" >"$TMP/p.folded"
	kernel_report "$TMP/raw" >"$TMP/report"
	report=$(cat "$TMP/report")
	named=$(awk '{ print $1 }' "$TMP/report")
	folded_high=$(high_addresses "$TMP/p.folded" | head -1)
	# Positive precondition: go tool pprof read it, and it names kernel functions.
	if grep -q '^Samples:' "$TMP/raw" && [[ $named -ge 5 && $report == *"0xffff800000000000: ''" &&
		-z $folded_high ]] && grep -q 'read_zero\|__x64_sys_read\|vfs_read' "$TMP/raw"; then
		ok "${TESTS[0]} ($report; folded too)"
	else
		fail "${TESTS[0]} ($report; folded: '$folded_high')"
		sed 's/^/#   /' "$TMP/raw.err" | head -5
		grep -A4 '^Mappings' "$TMP/raw" | sed 's/^/#   /'
	fi
	stop_agent
else
	fail "${TESTS[0]}: the agent did not start"
	sed 's/^/#   /' "$TMP/agent.err"
fi

if start_agent --raw-kernel-addresses; then
	go tool pprof -symbolize=none -raw "$ADDR/debug/pprof/profile?seconds=2" >"$TMP/raw" \
		2>"$TMP/raw.err"
	kernel_report "$TMP/raw" >"$TMP/report"
	report=$(cat "$TMP/report")
	if [[ $(awk '{ print $1 }' "$TMP/report") -ge 5 && $report != *"0xffff800000000000: ''" ]]; then
		ok "${TESTS[1]} ($report)"
	else
		fail "${TESTS[1]} ($report)"
	fi
	stop_agent
else
	fail "${TESTS[1]}: the agent did not start"
	sed 's/^/#   /' "$TMP/agent.err"
fi

# --- clients that hang up, and clients that trickle ------------------------------------

# hold HOST:PORT N SECONDS: N clients that each ask for a profile of SECONDS
# and keep their connection until SIGTERM, then close it at once.
cat >"$TMP/hold.py" <<'PY'
import signal, socket, sys, time
host, port = sys.argv[1].split(":")
socks = []
for _ in range(int(sys.argv[2])):
    s = socket.create_connection((host, int(port)))
    s.sendall(b"GET /debug/pprof/profile?seconds=%s HTTP/1.1\r\nHost: x\r\n\r\n" % sys.argv[3].encode())
    socks.append(s)
print("held", flush=True)
signal.sigwait([signal.SIGTERM])
for s in socks:
    s.close()
PY

# slowloris HOST:PORT N SECONDS: N connections, half from 127.0.0.1 and half from
# 127.0.0.2, each sending a request's headers (or, one in two, a body after
# whole headers) a byte a second, opened again as soon as the agent closes
# one; prints how many were open, every second.
cat >"$TMP/slowloris.py" <<'PY'
import socket, sys, time
host, port = sys.argv[1].split(":")
n, end = int(sys.argv[2]), time.time() + float(sys.argv[3])
slow_headers = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 100000
post = b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
conns = [None] * n
def connect(i):
    s = socket.socket()
    try:
        s.bind(("127.0.0.%d" % (1 + i % 2), 0))
        s.connect((host, int(port)))
        if i % 4 >= 2:
            s.sendall(post)
        s.setblocking(False)
        return [s, 0, slow_headers if i % 4 < 2 else b"a" * 100000]
    except OSError:
        s.close()
        return None
while time.time() < end:
    open_now = 0
    for i in range(n):
        if conns[i] is None:
            conns[i] = connect(i)
        c = conns[i]
        if c is None:
            continue
        try:
            c[0].send(c[2][c[1]:c[1] + 1])
            c[1] += 1
            # A closed connection shows as readable with nothing to read.
            if c[0].recv(1, socket.MSG_PEEK) == b"":
                raise OSError
        except BlockingIOError:
            open_now += 1
        except OSError:
            c[0].close()
            conns[i] = None
    print(open_now, flush=True)
    time.sleep(1)
PY

# metrics_time: "CODE SECONDS" of one GET /metrics, given at most 5 s.
metrics_time() {
	curl -s -o "$TMP/metrics" -w '%{http_code} %{time_total}\n' --max-time 5 "$ADDR/metrics"
}

# slow_within LIST: every "CODE SECONDS" line of LIST a 200 in under 2 s.
all_fast() {
	awk '$1 != 200 || $2 >= 2 { bad = 1 } END { exit bad }' "$1"
}

if start_agent; then
	hostport=${ADDR#http://}
	# Eight long scrapes take every slot: a ninth profile is refused, /metrics is not.
	python3 "$TMP/hold.py" "$hostport" 8 300 >"$TMP/hold.out" &
	holder=$!
	BG_PIDS+=("$holder")
	for _ in $(seq 100); do
		grep -q held "$TMP/hold.out" && break
		sleep 0.1
	done
	sleep 0.5
	ninth=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$ADDR/debug/pprof/profile?seconds=1")
	: >"$TMP/times"
	for _ in 1 2 3; do
		metrics_time >>"$TMP/times"
	done
	windows=$(awk '$1 == "profiler_windows_active" { print $2 }' "$TMP/metrics")
	times=$(awk '{ print $2 }' "$TMP/times" | paste -sd ' ')
	if [[ $ninth == 503 && $windows == 8 ]] && all_fast "$TMP/times"; then
		ok "${TESTS[2]} (8 scrapes of 300 s held: a ninth gets $ninth; /metrics in $times s, $windows windows active)"
	else
		fail "${TESTS[2]} (a ninth profile got '$ninth', expected 503; /metrics: $(paste -sd ' ' "$TMP/times"); windows '$windows', expected 8)"
	fi

	# They hang up at once: their windows are dropped, and their slots free, within 2 s.
	kill -TERM "$holder"
	wait "$holder" 2>/dev/null
	start=$(date +%s%N)
	windows=
	for _ in $(seq 50); do
		curl -s -o "$TMP/metrics" --max-time 5 "$ADDR/metrics"
		windows=$(awk '$1 == "profiler_windows_active" { print $2 }' "$TMP/metrics")
		[[ $windows == 0 ]] && break
		sleep 0.1
	done
	ms=$((($(date +%s%N) - start) / 1000000))
	code=$(curl -s -o "$TMP/after.folded" -w '%{http_code}' --max-time 30 \
		"$ADDR/debug/pprof/profile?seconds=1&format=folded")
	if [[ $windows == 0 && $ms -lt 2000 && $code == 200 && -s $TMP/after.folded ]]; then
		ok "${TESTS[3]} (0 windows active $ms ms after they hung up; a 1 s profile then: $code)"
	else
		fail "${TESTS[3]} ('$windows' windows active $ms ms after they hung up; a 1 s profile then: '$code')"
		sed 's/^/#   /' "$TMP/agent.err" | tail -5
	fi

	# 32 connections trickling their headers from two addresses, for 12 s.
	python3 "$TMP/slowloris.py" "$hostport" 32 12 >"$TMP/slow.out" &
	slow=$!
	BG_PIDS+=("$slow")
	sleep 2
	: >"$TMP/times"
	for _ in $(seq 8); do
		metrics_time >>"$TMP/times"
		sleep 1
	done
	wait "$slow" 2>/dev/null
	held=$(sort -n "$TMP/slow.out" | tail -1)
	closed=$(awk '$1 == "profiler_http_connections_closed_total" { print $2 }' "$TMP/metrics")
	times=$(awk '{ print $1 ":" $2 }' "$TMP/times" | paste -sd ' ')
	alive=$(kill -0 "$AGENT" 2>/dev/null && echo yes)
	# Positive precondition: the slow clients did hold connections all along.
	if [[ ${held:-0} -ge 16 && $alive == yes ]] && all_fast "$TMP/times" &&
		[[ $(wc -l <"$TMP/times") -eq 8 ]]; then
		ok "${TESTS[4]} (up to $held slow connections held, $closed closed by the agent; /metrics code:seconds $times)"
	else
		fail "${TESTS[4]} (up to '$held' slow connections held, agent alive '$alive'; /metrics $times)"
		paste -sd ' ' "$TMP/slow.out" | sed 's/^/#   slow connections open: /'
	fi
	stop_agent
else
	for t in "${TESTS[@]:2}"; do
		fail "$t: the agent did not start"
	done
fi
