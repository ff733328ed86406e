# SPDX-License-Identifier: GPL-2.0-only
# eBPF programs' own code in kernel stacks (doc/bpf.md): named by their
# functions with their source lines (common/bpf_progs.h), their cost in the
# summary, and the samples the kernel does not hand our program counted.
# The programs are bpf_hot's (tests/workloads/bpf_hot.bpf.c, built with
# -g): on the system call entry tracepoint, for its own process, or as a
# uprobe, or an XDP program on a veth pair between two network namespaces
# of the test's own; profiled with -p (-a for XDP) beside perf record on
# the same process at the same time, both started before its work and
# ending after it. perf names the code bpf_prog_TAG_NAME; ours, "NAME
# [bpf]" at FILE:LINE.
. "$(dirname "$0")/lib.sh"

later_name="bpf code: a program loaded after the recording started is named (the lister)"
named_name="bpf code: a BPF program's functions named 'NAME [bpf]', at their source lines"
share_name="bpf code: the BPF functions' self shares as perf's, on the same process at the same time"
count_name="bpf code: no sample lost in BPF code: as many samples as perf's"
cost_name="bpf code: the summary gives the program's runs and run time, as its samples do"
uprobe_name="bpf code: a uprobe's BPF program named, its samples all taken"
maps_name="bpf code: samples the kernel does not hand over during bpf() calls are counted, and make up perf's count"
idle_name="bpf code: no sample counted as not taken on an idle CPU"
xdp_name="bpf code: an XDP program under a UDP flood, named at its lines by -a, its share of the sender's samples as perf's"
serve_name="bpf code: the agent exports each program's runs and run time, names its code in its profiles, and forgets the programs unloaded"
all_names=("$later_name" "$named_name" "$share_name" "$count_name" "$cost_name" "$uprobe_name"
	"$maps_name" "$idle_name" "$xdp_name" "$serve_name")
require_bpf "${all_names[@]}"
source=$(dirname "$0")/../workloads/bpf_hot.bpf.c
# Put back as it was, however the script ends (it turns it on for one run).
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
# The XDP case's network namespaces (a veth pair between them goes with them).
ns=profiler-xdp-$$
trap 'sysctl -qw kernel.bpf_stats_enabled="$stats_was"; ip netns del "$ns-a" 2>/dev/null
	ip netns del "$ns-b" 2>/dev/null; cleanup' EXIT

# The summary's count of WHAT in FILE, or 0 (a line left out when there is none).
count_of() { local n; n=$(summary_count "$1" "$2"); echo "${n:-0}"; }

# body_lines FUNC: the first and last lines of BPF function FUNC in the
# source, from its signature to the next closing brace.
body_lines() {
	awk -v f="$1" 'index($0, f "(") || index($0, f ",") { l = NR } l && /^}/ { print l, NR; exit }' \
		"$source"
}

# bpf_lines PPROF: "FUNC FILE LINE SHARE" for each line of BPF code in PPROF,
# from pprof's lines of flat samples, the hottest first.
bpf_lines() {
	pprof -lines -top -nodecount=1000 "$1" 2>/dev/null |
		sed -nE 's/^ *[0-9.]+[a-z]* +([0-9.]+)%.* ([a-z_]+) \[bpf\] (.*):([0-9]+)$/\2 \3 \4 \1/p'
}

# perf_through DATA FUNC [COMM]: "N X", perf record DATA's samples (of
# processes named COMM only, if given) and those whose stack runs through
# BPF function FUNC (bpf_prog_TAG_FUNC).
perf_through() {
	perf script -i "$1" -F comm,ip,sym 2>/dev/null |
		awk -v f="_$2" -v comm="${3:-}" '
			function end() { if (c != "" && (comm == "" || c == comm)) { n++; x += h }
				c = ""; h = 0 }
			NF == 0 { end(); next } c == "" { c = $1; next }
			substr($2, length($2) - length(f) + 1) == f { h = 1 }
			END { end(); print n + 0, x + 0 }'
}

# share X N: X of N in percent, or "none".
share() { awk -v x="$1" -v n="$2" 'BEGIN { if (n) printf "%.1f", 100 * x / n; else print "none" }'; }

# perf_samples DATA: the samples in perf record's DATA.
perf_samples() {
	perf report -i "$1" --no-children --stdio -n --sort pid -g none 2>/dev/null |
		awk '$1 ~ /%$/ { n += $2 } END { print n + 0 }'
}

# beside_perf TAG SCOPE MODE [ARG...]: 3 s of bpf_hot's work in MODE (with
# its ARGs), on CPU 0, which waits for both profilers to be attached, each
# profiling bpf_hot's process (SCOPE -p) or every CPU (-a); bpf_hot runs in
# network namespace $NETNS if set: into $TMP/TAG.err, .folded, .pb.gz and
# .perf. 0 when all went as planned.
beside_perf() {
	local tag=$1 scope=$2 pid ours perf rc=0 i netns=()
	shift 2

	[[ -n ${NETNS:-} ]] && netns=(ip netns exec "$NETNS")
	start_bg "${netns[@]}" taskset -c 0 "$WORKLOADS/bpf_hot" 3 "$@" wait >"$TMP/$tag.ready"
	wait_for "$TMP/$tag.ready" '^ready' || return 1
	pid=$(sed -n 's/^ready //p' "$TMP/$tag.ready")
	[[ $scope == -p ]] && scope=(-p "$pid")
	perf record -q -F 499 -g "${scope[@]}" -o "$TMP/$tag.perf" -- sleep 6 >/dev/null 2>&1 &
	perf=$!
	"$PROFILER" -v -F 499 -d 6 "${scope[@]}" -o "$TMP/$tag.folded" -o "$TMP/$tag.pb.gz" \
		2>"$TMP/$tag.err" &
	ours=$!
	wait_for "$TMP/$tag.err" '^profiler: profiling (pid|every)' || rc=1
	for ((i = 0; i < 100; i++)); do
		[[ -s $TMP/$tag.perf ]] && break
		sleep 0.01
	done
	sleep 0.2
	kill -USR1 "$pid"
	wait_for "$TMP/$tag.ready" '^done' 20 || rc=1
	wait "$ours" || rc=1
	wait "$perf" || rc=1
	kill "$pid" 2>/dev/null
	return $rc
}

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
# About half of bpf_hot's samples are in its programs when it has a CPU to
# itself (254 of 521 seen beside two busy loops): a fifth is plenty to tell
# named code from code kallsyms alone names.
if [[ $rc -eq 0 ]] && ((total >= 200 && named * 5 >= total && unnamed == 0)); then
	ok "$later_name ($what)"
else
	fail "$later_name ($what)"
	grep -E 'bpf|warn' "$TMP/later.err" | sed 's/^/#   /'
fi

# The tracepoint's program, with the kernel counting the programs' run time
# (kernel.bpf_stats_enabled) meanwhile.
sysctl -qw kernel.bpf_stats_enabled=1
beside_perf main -p syscalls
rc=$?
sysctl -qw kernel.bpf_stats_enabled="$stats_was"
ours=$(count_of "$TMP/main.err" "on-CPU samples")
theirs=$(perf_samples "$TMP/main.perf")
# A busy machine gives bpf_hot less of a CPU: a few hundred samples are enough.
if [[ $rc -ne 0 ]] || ((ours < 300 || theirs < 300)); then
	for name in "$named_name" "$share_name" "$count_name" "$cost_name"; do
		fail "$name (run: $rc, ours $ours samples, perf's $theirs)"
	done
	sed 's/^/#   /' "$TMP/main.err"
else
	# The lines of each function in the source: mix_round's two statements, and
	# hot_syscall_enter's body, from its signature to the next closing brace.
	mix_lines=$(grep -nE '^\s*\*x (=|\^=)' "$source" | cut -d: -f1 | paste -sd' ')
	read -r hot_first hot_last < <(body_lines hot_syscall_enter)
	bpf_lines "$TMP/main.pb.gz" >"$TMP/lines"
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
	fi

	# perf's self shares (of the process's samples), by the end of the kernel's names.
	perf report -i "$TMP/main.perf" --no-children --sort sym --stdio -g none 2>/dev/null \
		>"$TMP/perf.txt"
	perf_share() { awk -v f="_$1" '$2 == "[k]" && substr($3, length($3) - length(f) + 1) == f {
		sub(/%/, "", $1); s += $1 } END { printf "%.1f", s }' "$TMP/perf.txt"; }
	perf_hot=$(perf_share hot_syscall_enter)
	perf_mix=$(perf_share mix_round)
	our_hot=$(folded_leaf_pct "$TMP/main.folded" "hot_syscall_enter [bpf]_[k]")
	our_mix=$(folded_leaf_pct "$TMP/main.folded" "mix_round [bpf]_[k]")
	what="hot_syscall_enter $our_hot% (perf $perf_hot%), mix_round $our_mix% (perf $perf_mix%)"
	# Its precondition: BPF code is most of the process's time, to both.
	if within "$our_hot" "$perf_hot" 5 && within "$our_mix" "$perf_mix" 5 &&
		awk -v a="$perf_hot" -v b="$perf_mix" 'BEGIN { exit !(a + b >= 50) }'; then
		ok "$share_name ($what)"
	else
		fail "$share_name ($what, expected each within 5 points, and at least 50% in all)"
		head -20 "$TMP/perf.txt" | sed 's/^/#   /'
	fi

	# A sample the kernel did not hand to our program inside another BPF
	# program would be missing here and not from perf's.
	if ((ours * 100 >= theirs * 95 && ours * 100 <= theirs * 105)); then
		ok "$count_name (ours $ours, perf's $theirs)"
	else
		fail "$count_name (ours $ours, perf's $theirs: expected within 5%)"
	fi

	# The program's run time by the kernel's count (the summary's share of a
	# CPU over the recording's seconds), and by our samples in its code, one
	# period each (as long as a CPU gives bpf_hot's thread, so a busy machine
	# changes neither): the same within 20%. The kernel's clock also runs
	# while the program is preempted.
	cpu=$(sed -nE 's/.*BPF program hot_syscall_enter \(id [0-9]+\): [0-9]+ runs, [0-9.]+ us a run, ([0-9.]+)% of a CPU.*/\1/p' \
		"$TMP/main.err")
	seconds=$(sed -nE 's/.*on-CPU samples: [0-9]+ in ([0-9.]+) s.*/\1/p' "$TMP/main.err")
	in_bpf=$(grep -E '(hot_syscall_enter|mix_round) \[bpf\]_\[k\] [0-9]+$' "$TMP/main.folded" |
		awk '{ n += $NF } END { print n + 0 }')
	what="run time $(awk -v c="${cpu:-0}" -v s="${seconds:-0}" 'BEGIN { printf "%.2f", c * s / 100 }') s (${cpu:-no}% of a CPU over ${seconds:-?} s), sampled $(awk -v n="$in_bpf" 'BEGIN { printf "%.2f", n / 499 }') s ($in_bpf samples)"
	if [[ -n $cpu && -n $seconds ]] && ((in_bpf >= 200)) &&
		awk -v c="$cpu" -v s="$seconds" -v n="$in_bpf" 'BEGIN {
			t = c * s / 100; u = n / 499; exit !(t >= 0.8 * u && t <= 1.2 * u) }'; then
		ok "$cost_name ($what)"
	else
		fail "$cost_name ($what, expected within 20%)"
		grep -E 'BPF program|bpf' "$TMP/main.err" | sed 's/^/#   /'
	fi
fi

# A raw tracepoint's program never keeps the kernel from running ours, and
# CPU 1, idle, is one where this machine's kernel takes no samples (perf's
# record has none there either): nothing may be said not taken.
# (Other tests' BPF map updates on that CPU may drop a sample or two: -v
# says so, the summary not, as for any count under 20 and 1%.)
not_taken=$(count_of "$TMP/main.err" "samples not taken")
ours=$(count_of "$TMP/main.err" "on-CPU samples")
if ((ours >= 300 && not_taken == 0)) && ! grep -q 'samples not taken: [0-9]* (' "$TMP/main.err"; then
	ok "$idle_name (ours $ours samples, none said not taken in the summary)"
else
	fail "$idle_name (ours $ours samples, $not_taken said not taken)"
	grep -E 'not taken' "$TMP/main.err" | sed 's/^/#   /'
fi

# A uprobe's program runs where the kernel still hands our program its
# samples (unlike a kprobe's: see doc/bpf.md): named, and none missing.
if beside_perf uprobe -p uprobe; then
	ours=$(count_of "$TMP/uprobe.err" "on-CPU samples")
	theirs=$(perf_samples "$TMP/uprobe.perf")
	named=$(grep -E 'hot_uprobe \[bpf\]_\[k\]' "$TMP/uprobe.folded" | awk '{ n += $NF } END { print n + 0 }')
	read -r _ perf_named < <(perf_through "$TMP/uprobe.perf" hot_uprobe)
	# How much of the time the trap itself takes depends on the machine
	# (a virtual CPU's interrupts): the program's share is perf's, not ours to fix.
	what="$named of $ours samples through hot_uprobe [bpf] ($(share "$named" "$ours")%), perf's $perf_named of $theirs ($(share "$perf_named" "$theirs")%)"
	if ((theirs >= 300 && perf_named * 10 >= theirs && ours * 100 >= theirs * 95)) &&
		within "$(share "$named" "$ours")" "$(share "$perf_named" "$theirs")" 5; then
		ok "$uprobe_name ($what)"
	else
		fail "$uprobe_name ($what: expected the shares within 5 points, perf's at least 10%, and at least 95% of perf's samples)"
	fi
else
	fail "$uprobe_name (the run did not go as planned)"
	sed 's/^/#   /' "$TMP/uprobe.err"
fi

# A bpf() map update keeps the kernel from running BPF programs meanwhile:
# perf takes those samples, ours cannot, and counts them: on CPU 0, where
# bpf_hot ran (-v), since the count is of whatever ran on each CPU.
if beside_perf maps -p maps; then
	ours=$(count_of "$TMP/maps.err" "on-CPU samples")
	all=$(count_of "$TMP/maps.err" "samples not taken")
	missed=$(sed -nE 's/^profiler: samples not taken: (.*, )?cpu 0: ([0-9]+) of.*/\2/p' \
		"$TMP/maps.err")
	missed=${missed:-0}
	theirs=$(perf_samples "$TMP/maps.perf")
	what="ours $ours + $missed not taken on CPU 0 ($all in the summary), perf's $theirs"
	if ((theirs >= 300 && missed * 20 >= theirs)) &&
		within "$((ours + missed))" "$theirs" "$((theirs / 20))"; then
		ok "$maps_name ($what)"
	else
		fail "$maps_name ($what: expected at least 5% not taken, the sum within 5%)"
		grep -E 'not taken|samples' "$TMP/maps.err" | sed 's/^/#   /'
	fi
else
	fail "$maps_name (the run did not go as planned)"
	sed 's/^/#   /' "$TMP/maps.err"
fi

# An XDP program on the receiving end of a veth pair between two network
# namespaces of the test's own, under a flood of UDP packets from the other
# end: the kernel runs it in the softirq that polls the device, in the
# sender's context (bpf_hot's). Profiled with -a, beside perf -a.
if ! ip netns add "$ns-a" 2>/dev/null || ! ip netns add "$ns-b" ||
	! ip link add "pxa$$" netns "$ns-a" type veth peer name "pxb$$" netns "$ns-b"; then
	skip "$xdp_name" "cannot make network namespaces and a veth pair here"
elif ! ip -n "$ns-a" addr add 10.253.0.1/30 dev "pxa$$" ||
	! ip -n "$ns-b" addr add 10.253.0.2/30 dev "pxb$$" ||
	! ip -n "$ns-a" link set "pxa$$" up || ! ip -n "$ns-b" link set "pxb$$" up ||
	! NETNS=$ns-b beside_perf xdp -a xdp "pxb$$" 10.253.0.2 "/run/netns/$ns-a"; then
	fail "$xdp_name (the run did not go as planned)"
	sed 's/^/#   /' "$TMP/xdp.ready" "$TMP/xdp.err"
else
	# The sender's samples, and those through hot_xdp: ours by the folded
	# stacks' first frame (the process), perf's by its comm.
	read -r our_all our_xdp < <(awk '/^bpf_hot;/ { n += $NF; if (/;hot_xdp \[bpf\]_\[k\]/) x += $NF }
		END { print n + 0, x + 0 }' "$TMP/xdp.folded")
	read -r perf_all perf_xdp < <(perf_through "$TMP/xdp.perf" hot_xdp bpf_hot)
	ours=$(share "$our_xdp" "$our_all")
	theirs=$(share "$perf_xdp" "$perf_all")
	read -r xdp_first xdp_last < <(body_lines hot_xdp)
	bpf_lines "$TMP/xdp.pb.gz" >"$TMP/xdp.lines"
	xdp_line=$(awk '$1 == "hot_xdp" { print $3; exit }' "$TMP/xdp.lines")
	mix_line=$(awk '$1 == "mix_round" { print $3; exit }' "$TMP/xdp.lines")
	mix_lines=$(grep -nE '^\s*\*x (=|\^=)' "$source" | cut -d: -f1 | paste -sd' ')
	what="hot_xdp $ours% of bpf_hot's $our_all samples (perf $theirs% of $perf_all), its hottest line ${xdp_line:-none} (in $xdp_first-$xdp_last), mix_round's ${mix_line:-none}"
	if ((our_all >= 300 && perf_all >= 300 && perf_xdp * 10 >= perf_all)) &&
		within "$ours" "$theirs" 5 && [[ -n $xdp_line && -n $mix_line ]] &&
		((xdp_line >= xdp_first && xdp_line <= xdp_last)) && [[ " $mix_lines " == *" $mix_line "* ]]; then
		ok "$xdp_name ($what)"
	else
		fail "$xdp_name ($what: expected within 5 points, perf's at least 10%)"
		sed 's/^/#   /' "$TMP/xdp.lines"
	fi
fi

# The agent, with the kernel counting the programs' run time: bpf_hot's
# program among every program loaded in /metrics, its runs growing between
# two reads, and its code named in a scrape.
sysctl -qw kernel.bpf_stats_enabled=1
start_bg "$WORKLOADS/bpf_hot" 20 >"$TMP/agent.ready"
wait_for "$TMP/agent.ready" '^ready'
hot=$(sed -n 's/^ready //p' "$TMP/agent.ready")
"$PROFILER" serve --listen 127.0.0.1:0 -F 499 2>"$TMP/agent.err" &
agent=$!
BG_PIDS+=("$agent")
wait_for "$TMP/agent.err" 'serving on'
addr=$(grep -o 'http://[0-9.]*:[0-9]*' "$TMP/agent.err")
# metric FAMILY NAME: FAMILY's value for the program named NAME, from $TMP/metrics.
metric() { sed -nE "s/^$1\{id=\"[0-9]+\",name=\"$2\"\} ([0-9.e+-]+)$/\1/p" "$TMP/metrics" | head -n 1; }
curl -s -o "$TMP/metrics" "$addr/metrics"
runs1=$(metric profiler_bpf_program_runs_total hot_syscall_enter)
curl -s -o "$TMP/scrape.folded" "$addr/debug/pprof/profile?seconds=2&format=folded"
curl -s -o "$TMP/metrics" "$addr/metrics"
sysctl -qw kernel.bpf_stats_enabled="$stats_was"
runs2=$(metric profiler_bpf_program_runs_total hot_syscall_enter)
seconds=$(metric profiler_bpf_program_run_seconds_total hot_syscall_enter)
ours=$(metric profiler_bpf_program_runs_total profile_sample)
not_taken=$(sed -nE 's/^profiler_samples_not_taken_total ([0-9]+)$/\1/p' "$TMP/metrics")
named=$(awk '/^bpf_hot;/ { n += $NF; if (/;hot_syscall_enter \[bpf\]_\[k\]/) x += $NF }
	END { if (n) printf "%.1f", 100 * x / n; else print "none" }' "$TMP/scrape.folded")
# bpf_hot's three programs unloaded: forgotten within the agent's 10 s of housekeeping.
known() { curl -s "$addr/metrics" | sed -nE 's/^profiler_bpf_programs ([0-9]+)$/\1/p'; }
before=$(known)
kill "$hot" 2>/dev/null
for ((i = 0; i < 25; i++)); do
	after=$(known)
	((${after:-0} > 0 && ${after:-0} + 3 <= ${before:-0})) && break
	sleep 1
done
kill "$agent" 2>/dev/null
wait "$agent" 2>/dev/null
what="hot_syscall_enter runs ${runs1:-none} then ${runs2:-none}, ${seconds:-no} s; profile_sample's runs ${ours:-none}; ${not_taken:-no} samples not taken; hot_syscall_enter [bpf] $named% of bpf_hot's scrape; programs known ${before:-?}, ${after:-?} after bpf_hot exited"
if [[ -n $runs1 && -n $runs2 && -n $seconds && -n $ours && -n $not_taken ]] &&
	((runs2 > runs1 && ours > 0 && ${after:-0} > 0 && ${after:-0} + 3 <= ${before:-0})) &&
	awk -v s="$seconds" 'BEGIN { exit !(s > 0) }' &&
	awk -v n="$named" 'BEGIN { exit !(n + 0 >= 20) }'; then
	ok "$serve_name ($what)"
else
	fail "$serve_name ($what)"
	grep -E 'bpf|warn' "$TMP/agent.err" | sed 's/^/#   /'
	grep -E 'profiler_bpf_program|not_taken' "$TMP/metrics" | head | sed 's/^/#   /'
fi
