# SPDX-License-Identifier: GPL-2.0-only
# profiler serve against local clients it cannot trust: a served profile
# names kernel functions but tells no kernel address (KASLR), unless the
# operator asks for them with --raw-kernel-addresses; clients that ask for
# long profiles and hang up, and clients that send their headers a byte at
# a time, from two loopback addresses, do not keep /metrics or a scrape
# from being answered.
. "$(dirname "$0")/lib.sh"

TESTS=("serve hostile: no kernel address in a served profile"
	"serve hostile: --raw-kernel-addresses gives them")
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
