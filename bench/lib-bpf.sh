# SPDX-License-Identifier: GPL-2.0-only
# bench/lib-bpf.sh: what the benchmarks that time BPF programs share.
# Sourced, not run.

# prog_stats PID: "RUN_TIME_NS RUN_CNT" of the perf_event program (type 7)
# that process PID holds an fd of, or nothing: read from the fd itself
# (/proc/PID/fdinfo), so another BPF program loaded meanwhile is never
# mistaken for it. Needs kernel.bpf_stats_enabled=1.
prog_stats() {
	local f

	for f in /proc/"$1"/fdinfo/*; do
		awk '$1 == "prog_type:" { t = $2 } $1 == "run_time_ns:" { ns = $2 }
			$1 == "run_cnt:" { n = $2 }
			END { if (t == 7) print ns, n }' "$f" 2>/dev/null
	done | head -n 1
}
