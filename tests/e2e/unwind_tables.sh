# SPDX-License-Identifier: GPL-2.0-only
# The default unwinder's tables (--call-graph cfi): records of addresses
# only, no loss with -a at 999 Hz, and a table over --unwind-memory counted
# and said, never passed off as a whole stack.
. "$(dirname "$0")/lib.sh"

require_bpf "unwind tables: records carry addresses only" \
	"unwind tables: -a -F 999 loses nothing" \
	"unwind tables: a table over --unwind-memory is counted and said"

# summary_field STDERR FIELD: the profiler's count of "samples" (on CPU),
# "lost" samples or "truncated" stacks, from its summary.
summary_field() {
	case $2 in
	samples) summary_count "$1" "on-CPU samples" ;;
	lost) summary_count "$1" "samples lost" ;;
	truncated) summary_count "$1" "truncated stacks" ;;
	esac
}

# start_deep SECONDS: a 30-frame stack spinning on each CPU; pids in $pids.
start_deep() {
	pids=()
	for _ in $(seq "$(nproc)"); do
		"$WORKLOADS/deep" 26 "$1" &
		pids+=($!)
	done
}

stop_deep() {
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
}

# Taken with -p: the tables are loaded before sampling starts, so every
# record is one the BPF program unwound. The targets outlive the recording
# (stopped after it): beside other work the profiler once took long enough to
# start that 5 s targets had exited.
name="unwind tables: records carry addresses only"
start_deep 10
sleep 0.2
if "$PROFILER" -v -F 999 -d 2 -p "$(IFS=,; echo "${pids[*]}")" -o "$TMP/deep.pb.gz" \
	2>"$TMP/deep.err"; then
	bytes=$(sed -n 's/.* ring buffer: [0-9]* on-CPU records, \([0-9]*\) bytes each.*/\1/p' \
		"$TMP/deep.err")
	samples=$(summary_field "$TMP/deep.err" samples)
	if [[ -n $bytes && ${samples:-0} -ge 1000 && $bytes -le 1536 && $bytes -ge 200 ]]; then
		ok "$name ($bytes bytes per sample over $samples samples, at most 1536)"
	else
		fail "$name (${bytes:-no} bytes per sample over ${samples:-no} samples)"
		sed 's/^/#   /' "$TMP/deep.err"
	fi
else
	fail "$name: profiler failed"
	sed 's/^/#   /' "$TMP/deep.err"
fi
stop_deep

# The whole machine at 999 Hz with both CPUs busy: each process's first
# samples copy up to 32 KiB of stack until its tables are loaded, and still the
# ring buffer keeps up.
name="unwind tables: -a -F 999 loses nothing"
start_deep 6
if "$PROFILER" -v -a -F 999 -d 3 -o "$TMP/all.pb.gz" 2>"$TMP/all.err"; then
	lost=$(summary_field "$TMP/all.err" lost)
	samples=$(summary_field "$TMP/all.err" samples)
	if [[ $lost == 0 && ${samples:-0} -ge 2000 ]]; then
		ok "$name ($samples samples, 0 lost)"
	else
		fail "$name (${lost:-no} lost of ${samples:-no} samples)"
		sed 's/^/#   /' "$TMP/all.err"
	fi
else
	fail "$name: profiler failed"
	sed 's/^/#   /' "$TMP/all.err"
fi
stop_deep

# clang++ maps libLLVM, whose table (about 950,000 rows) cannot fit in 1 MB.
name="unwind tables: a table over --unwind-memory is counted and said"
cat >"$TMP/big.cpp" <<'EOF'
#include <map>
#include <regex>
#include <string>
int main() { std::map<std::string, std::regex> m; m["a"] = std::regex("a+b*"); return m.size(); }
EOF
if ! command -v clang++ >/dev/null; then
	skip "$name" "no clang++ (tools/install-deps installs clang)"
elif "$PROFILER" -v -F 499 --unwind-memory 1 -o "$TMP/clang.pb.gz" -- \
	clang++ -O2 -c "$TMP/big.cpp" -o "$TMP/big.o" 2>"$TMP/clang.err"; then
	samples=$(summary_field "$TMP/clang.err" samples)
	truncated=$(summary_field "$TMP/clang.err" truncated)
	if [[ ${samples:-0} -ge 100 && $((truncated * 2)) -ge $samples ]] &&
		grep -q "warning: .* user stacks end before " "$TMP/clang.err" &&
		grep -qE "unwind: [1-9][0-9]* end at unwind tables that did not fit" "$TMP/clang.err"; then
		# The warning names the commonest cause: under a sanitizer, building the
		# tables is slow enough that the copies taken meanwhile may outnumber them.
		ok "$name ($truncated of $samples samples truncated, a warning, and -v names tables that did not fit)"
	else
		fail "$name (${truncated:-no} of ${samples:-no} samples truncated)"
		sed 's/^/#   /' "$TMP/clang.err"
	fi
else
	fail "$name: profiler failed"
	sed 's/^/#   /' "$TMP/clang.err"
fi
