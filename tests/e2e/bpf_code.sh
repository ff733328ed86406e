# SPDX-License-Identifier: GPL-2.0-only
# BPF programs' own code in kernel stacks, named by their functions with
# their source lines (common/bpf_progs.h): bpf_hot's program on the system
# call entry tracepoint, for its own process (tests/workloads/bpf_hot.bpf.c,
# built with -g), profiled with -p beside perf record on the same process
# at the same time. perf names the code bpf_prog_TAG_NAME; ours, "NAME [bpf]"
# at FILE:LINE; both must see as many samples, and the same shares. First,
# the program loaded by the command profiled, after the recording started.
. "$(dirname "$0")/lib.sh"

named_name="bpf code: a BPF program's functions named 'NAME [bpf]', at their source lines"
share_name="bpf code: the BPF functions' self shares as perf's, on the same process at the same time"
count_name="bpf code: no sample lost in BPF code: as many samples as perf's"
later_name="bpf code: a program loaded after the recording started is named alike (the lister)"
cost_name="bpf code: the summary gives the program's runs and run time, as its samples do"
require_bpf "$named_name" "$share_name" "$count_name" "$later_name" "$cost_name"

# Loaded by the command the profiler starts, once it dropped the privilege
# that listing programs needs: the lister process opens them for it.
"$PROFILER" -v -F 499 -o "$TMP/later.folded" -- "$WORKLOADS/bpf_hot" 2 >/dev/null 2>"$TMP/later.err"
rc=$?
total=$(awk '{ n += $NF } END { print n + 0 }' "$TMP/later.folded" 2>/dev/null)
named=$(grep -E '(hot_syscall_enter|mix_round) \[bpf\]_\[k\]' "$TMP/later.folded" 2>/dev/null |
	awk '{ n += $NF } END { print n + 0 }')
unnamed=$(grep -E 'bpf_prog_[0-9a-f]+_(hot_syscall_enter|mix_round)' "$TMP/later.folded" 2>/dev/null |
	awk '{ n += $NF } END { print n + 0 }')
what="exit $rc, $named of $total samples in named BPF code, $unnamed named by kallsyms only"
if [[ $rc -eq 0 ]] && ((total >= 200 && named * 2 >= total && unnamed == 0)); then
	ok "$later_name ($what)"
else
	fail "$later_name ($what)"
	grep -E 'bpf|warn' "$TMP/later.err" | sed 's/^/#   /'
fi

source=$(dirname "$0")/../workloads/bpf_hot.bpf.c
start_bg "$WORKLOADS/bpf_hot" 8 >"$TMP/ready"
pid=$BG_PID
if ! wait_for "$TMP/ready" '^ready'; then
	for name in "$named_name" "$share_name" "$count_name"; do
		fail "$name (bpf_hot did not start: $(tail -1 "$TMP/ready"))"
	done
	exit 0
fi
# The kernel counts the programs' run time while kernel.bpf_stats_enabled is on.
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
perf record -q -F 499 -g -p "$pid" -o "$TMP/perf.data" -- sleep 4 >/dev/null 2>"$TMP/perf.err" &
perf_pid=$!
"$PROFILER" -v -F 499 -d 4 -p "$pid" -o "$TMP/bpf.pb.gz" -o "$TMP/bpf.folded" 2>"$TMP/err"
rc=$?
wait "$perf_pid"
perf_rc=$?
sysctl -qw kernel.bpf_stats_enabled="$stats_was"
ours=$(summary_count "$TMP/err" "on-CPU samples")
# A busy machine gives bpf_hot less of a CPU: a few hundred samples are enough.
if [[ $rc -ne 0 || ${ours:-0} -lt 300 ]]; then
	for name in "$named_name" "$share_name" "$count_name" "$cost_name"; do
		fail "$name (exit $rc, ${ours:-no} samples)"
	done
	sed 's/^/#   /' "$TMP/err"
	exit 0
fi

# The lines of each function in the source: mix_round's two statements, and
# hot_syscall_enter's body, from its signature to the next closing brace.
mix_lines=$(grep -nE '^\s*\*x (=|\^=)' "$source" | cut -d: -f1 | paste -sd' ')
read -r hot_first hot_last < <(awk '/hot_syscall_enter,/ { f = NR } f && /^}/ { print f, NR; exit }' \
	"$source")
# name FILE LINE SHARE, from pprof's lines of flat samples, the hottest first.
pprof -lines -top -nodecount=1000 "$TMP/bpf.pb.gz" 2>/dev/null |
	sed -nE 's/^ *[0-9.]+[a-z]* +([0-9.]+)%.* ([a-z_]+) \[bpf\] (.*):([0-9]+)$/\2 \3 \4 \1/p' >"$TMP/lines"
hot_line=$(awk '$1 == "hot_syscall_enter" { print $3; exit }' "$TMP/lines")
mix_line=$(awk '$1 == "mix_round" { print $3; exit }' "$TMP/lines")
files=$(awk '{ print $2 }' "$TMP/lines" | sort -u | paste -sd' ')
what="hot_syscall_enter at line ${hot_line:-none} (in $hot_first-$hot_last), mix_round at ${mix_line:-none} (of $mix_lines), in $files"
if [[ -n $hot_line && -n $mix_line && $files == */bpf_hot.bpf.c && $hot_line -ge $hot_first &&
	$hot_line -le $hot_last && " $mix_lines " == *" $mix_line "* ]]; then
	ok "$named_name ($what)"
else
	fail "$named_name ($what)"
	sed 's/^/#   /' "$TMP/lines"
	grep bpf "$TMP/err" | sed 's/^/#   /'
fi

# The program's run time by the kernel's count (the summary's share of a
# CPU over the recording's seconds), and by our samples in its code, one
# period each (as long as a CPU gives bpf_hot's thread, so a busy machine
# changes neither): the same within 20%. The kernel's clock also runs
# while the program is preempted.
cpu=$(sed -nE 's/.*BPF program hot_syscall_enter \(id [0-9]+\): [0-9]+ runs, [0-9.]+ us a run, ([0-9.]+)% of a CPU.*/\1/p' \
	"$TMP/err")
seconds=$(sed -nE 's/.*on-CPU samples: [0-9]+ in ([0-9.]+) s.*/\1/p' "$TMP/err")
in_bpf=$(grep -E '(hot_syscall_enter|mix_round) \[bpf\]_\[k\] [0-9]+$' "$TMP/bpf.folded" |
	awk '{ n += $NF } END { print n + 0 }')
what="run time $(awk -v c="${cpu:-0}" -v s="${seconds:-0}" 'BEGIN { printf "%.2f", c * s / 100 }') s (${cpu:-no}% of a CPU over ${seconds:-?} s), sampled $(awk -v n="$in_bpf" 'BEGIN { printf "%.2f", n / 499 }') s ($in_bpf samples)"
if [[ -n $cpu && -n $seconds ]] && ((in_bpf >= 200)) &&
	awk -v c="$cpu" -v s="$seconds" -v n="$in_bpf" 'BEGIN {
		t = c * s / 100; u = n / 499; exit !(t >= 0.8 * u && t <= 1.2 * u) }'; then
	ok "$cost_name ($what)"
else
	fail "$cost_name ($what, expected within 20%)"
	grep -E 'BPF program|bpf' "$TMP/err" | sed 's/^/#   /'
fi

# perf's self shares (of the process's samples), by the end of the kernel's names.
if [[ $perf_rc -ne 0 ]]; then
	fail "$share_name (perf record failed)"
	fail "$count_name (perf record failed)"
	sed 's/^/#   /' "$TMP/perf.err"
	exit 0
fi
perf report -i "$TMP/perf.data" --no-children --sort sym --stdio -g none 2>/dev/null >"$TMP/perf.txt"
perf_share() { awk -v f="_$1" '$2 == "[k]" && substr($3, length($3) - length(f) + 1) == f {
	sub(/%/, "", $1); s += $1 } END { printf "%.1f", s }' "$TMP/perf.txt"; }
perf_hot=$(perf_share hot_syscall_enter)
perf_mix=$(perf_share mix_round)
our_hot=$(folded_leaf_pct "$TMP/bpf.folded" "hot_syscall_enter [bpf]_[k]")
our_mix=$(folded_leaf_pct "$TMP/bpf.folded" "mix_round [bpf]_[k]")
what="hot_syscall_enter $our_hot% (perf $perf_hot%), mix_round $our_mix% (perf $perf_mix%)"
# Its precondition: BPF code is most of the process's time, to both.
if within "$our_hot" "$perf_hot" 5 && within "$our_mix" "$perf_mix" 5 &&
	awk -v a="$perf_hot" -v b="$perf_mix" 'BEGIN { exit !(a + b >= 50) }'; then
	ok "$share_name ($what)"
else
	fail "$share_name ($what, expected each within 5 points, and at least 50% in all)"
	head -20 "$TMP/perf.txt" | sed 's/^/#   /'
fi

# A sample the kernel does not hand to our program inside another BPF
# program would be missing here and not from perf's.
theirs=$(perf report -i "$TMP/perf.data" --no-children --stdio -n --sort pid -g none 2>/dev/null |
	awk '$1 ~ /%$/ { n += $2 } END { print n + 0 }')
if [[ $theirs -ge 300 ]] && ((ours * 100 >= theirs * 95 && ours * 100 <= theirs * 105)); then
	ok "$count_name (ours $ours, perf's $theirs)"
else
	fail "$count_name (ours $ours, perf's $theirs: expected within 5%, over 300)"
fi
