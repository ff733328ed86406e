# SPDX-License-Identifier: GPL-2.0-only
# Whole stacks in the default mode on Debian's own binaries, none of them
# built with frame pointers: xz, python3.11 and sqlite3, each profiled by -p
# while `perf record --call-graph dwarf` is attached to the same process at
# the same time (issue 13's acceptance). For each program:
#   - at least 99% of our on-CPU samples reach the process root: the
#     outermost frame is _start (the main thread; in a stripped executable,
#     the function at its entry point) or clone/clone3 (another thread);
#   - the 10 functions with the most cumulative time in our profile have
#     the same cumulative share in perf's, within 2 points.
# With --no-python: the native frames perf also shows, the interpreter's
# included (tests/e2e/python.sh checks the Python frames that replace them).
# PROFILER_EXTRA_ARGS adds options to every run of the profiler, to run the
# same checks in another mode: PROFILER_EXTRA_ARGS='--call-graph dwarf=32768'
# (the sqlite3 shell's stack is deeper than dwarf's default 8 KiB copy).
. "$(dirname "$0")/lib.sh"

# The tests of program $1.
test_names() {
	echo "debian stacks: $1: stacks reach the root"
	echo "debian stacks: $1: perf agrees"
}

# missing_program PROGRAM WHY: PROGRAM's tests cannot run.
missing_program() {
	local n
	while read -r n; do
		missing "$2" "$n"
	done < <(test_names "$1")
}

mapfile -t names < <(test_names xz; test_names python3.11; test_names sqlite3)
require_bpf "${names[@]}"

if ! command -v perf >/dev/null; then
	for n in "${names[@]}"; do
		missing "perf is not installed (tools/install-deps installs linux-perf)" "$n"
	done
	exit 0
fi

read -ra extra <<<"${PROFILER_EXTRA_ARGS:-}"
mode=${PROFILER_EXTRA_ARGS:-default mode}

# Both profilers sample each program at FREQ Hz for DURATION seconds: about
# 10,000 samples each. Their shares of a function differ by sampling noise
# alone by up to sqrt(2 * 0.25 / 10000) = 0.7 points (one standard
# deviation, for a function on half the stacks), well inside the 2 allowed.
FREQ=999
DURATION=10
# Fewer samples than this, from either, and nothing is compared: a quarter
# of what a program alone on a CPU gives (a busy machine gives it less).
MIN_SAMPLES=$((FREQ * DURATION / 4))
# How much stack perf copies with each sample to unwind later: the sqlite3
# shell's stack is deeper than perf's default of 8 KiB (none of its samples
# reached main with 8 KiB, 83% with 16 KiB).
PERF_STACK=32768

# fde_table PID: for every executable file PID maps, its loadable segments,
# "L BASENAME OFFSET FILESIZE VADDR", and one line per FDE of its call frame
# information, "F BASENAME START END" (hex, as readelf prints them), sorted
# by file and address. Frames without a symbol are named BASENAME+0xADDR
# (ADDR the ELF address by us, the file offset by perf); the comparison
# names them by the function (FDE) that holds ADDR instead.
fde_table() {
	local file
	awk '$2 ~ /x/ && $6 ~ /^\// { print $6 }' "/proc/$1/maps" | sort -u |
		while read -r file; do
			readelf -lW "$file" 2>/dev/null |
				awk -v b="${file##*/}" '$1 == "LOAD" { print "L", b, $2, $5, $3 }'
			readelf --debug-dump=frames "$file" 2>/dev/null |
				awk -v b="${file##*/}" '$4 == "FDE" && $6 ~ /^pc=/ {
					pc = $6; sub(/^pc=/, "", pc); split(pc, r, /\.\./)
					print "F", b, r[1], r[2] }'
		done | LC_ALL=C sort -k1,1 -k2,2 -k3,3
}

# cumulative FORMAT FDES ENTRY_BASE ENTRY_ADDR [PID] < STACKS: from our
# folded output (FORMAT folded) or perf script's (FORMAT perf, samples of PID
# only), print "TOTAL<TAB>samples", "ROOT<TAB>samples that reach the process
# root", then "FUNCTION<TAB>samples with FUNCTION anywhere on their stack",
# one line each. ENTRY_BASE+0xENTRY_ADDR is the executable's entry point,
# _start, which a stripped executable does not name. The two are made
# comparable so:
#   - perf script --no-inline shows the functions that own the addresses,
#     not the ones inlined into them: our inlined frames (_[i]) are left out;
#   - kernel (_[k]) and JIT (_[j]) suffixes go, and symbol versions
#     (__libc_start_main@@GLIBC_2.34), which both of us may print;
#   - a frame without a symbol (our BASENAME+0xADDR, perf's "[unknown]
#     (PATH)" at a file offset, which the segments turn into ADDR) is named
#     by the start of the FDE that holds it,
#     BASENAME+0xSTART: its function, however many addresses in it were
#     sampled. An ADDR that is itself an FDE's start (a profiler that names
#     unnamed code by its FDE already) stays; any other is looked up at
#     ADDR - 1, as a return address must be (for a leaf that lands in the
#     same function).
cumulative() {
	awk -v fmt="$1" -v fdes="$2" -v entry_base="$3" -v entry_addr="$4" -v want="${5:-}" '
	function hexval(h, i, v) {
		h = tolower(h); sub(/^0x/, "", h); v = 0
		for (i = 1; i <= length(h); i++)
			v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		return v
	}
	function strip0(h) { h = tolower(h); sub(/^0x/, "", h); sub(/^0+/, "", h); return h == "" ? "0" : h }
	# printf "%x" stops at 32 bits in mawk.
	function tohex(v, h) {
		h = ""
		do { h = substr("0123456789abcdef", v % 16 + 1, 1) h; v = int(v / 16) } while (v)
		return h
	}
	# The ELF address of file offset h (hex) in file b.
	function vaddr(b, h, a, i) {
		a = hexval(h)
		for (i = 1; i <= nseg[b]; i++)
			if (a >= so[b, i] && a < so[b, i] + sz[b, i])
				return tohex(a - so[b, i] + sv[b, i])
		return strip0(h)
	}
	# The last FDE of file b that starts at or below a, or 0.
	function below(b, a, lo, hi, mid) {
		lo = 1; hi = nfde[b]
		while (lo <= hi) {
			mid = int((lo + hi) / 2)
			if (fs[b, mid] <= a) lo = mid + 1; else hi = mid - 1
		}
		return hi
	}
	function fde_name(b, h, k, a, i) {
		k = b SUBSEP h
		if (k in memo)
			return memo[k]
		a = hexval(h)
		i = below(b, a)
		if (!(i && fs[b, i] == a)) {
			i = below(b, a - 1)
			if (i && a - 1 >= fe[b, i]) i = 0
		}
		return memo[k] = b "+0x" (i ? fh[b, i] : strip0(h))
	}
	function norm(f, b) {
		sub(/_\[[kj]\]$/, "", f)
		if (match(f, /\+0x[0-9a-fA-F]+$/)) {
			b = substr(f, 1, RSTART - 1)
			return (b in nfde) ? fde_name(b, substr(f, RSTART + 3)) : f
		}
		sub(/@@?[^@]*$/, "", f)
		return f
	}
	function is_root(f) {
		return f == root_name || f == "_start" || f == "clone" || f == "clone3" ||
			f == "__clone" || f == "__clone3"
	}
	# The stack in fr[1..nf], outermost first, weighing n.
	function count(n, i, seen) {
		total += n
		for (i = 1; i <= nf; i++)
			if (!(fr[i] in seen)) { seen[fr[i]] = 1; cum[fr[i]] += n }
		if (nf && is_root(fr[1])) reached += n
	}
	BEGIN {
		while ((getline line < fdes) > 0) {
			split(line, x, " ")
			if (x[1] == "L") {
				i = ++nseg[x[2]]
				so[x[2], i] = hexval(x[3]); sz[x[2], i] = hexval(x[4]); sv[x[2], i] = hexval(x[5])
				continue
			}
			i = ++nfde[x[2]]
			fs[x[2], i] = hexval(x[3]); fe[x[2], i] = hexval(x[4]); fh[x[2], i] = strip0(x[3])
		}
		root_name = norm(entry_base "+0x" strip0(entry_addr))
		FS = "\n"
		if (fmt == "perf") RS = ""
	}
	fmt == "folded" {
		n = $0; sub(/.* /, "", n); stack = $0; sub(/ [0-9]+$/, "", stack)
		k = split(stack, all, ";"); nf = 0
		for (i = 2; i <= k; i++)
			if (all[i] !~ /_\[i\]$/) fr[++nf] = norm(all[i])
		count(n + 0)
	}
	# A sample: "COMM PID/TID", then a line per frame, innermost first:
	# "ADDR SYMBOL (DSO)".
	fmt == "perf" {
		split($1, head, " ")
		pid = ""
		for (i in head)
			if (head[i] ~ /^[0-9]+\/[0-9]+$/) { pid = head[i]; sub(/\/.*/, "", pid) }
		if (pid != want) next
		nf = 0
		for (i = NF; i >= 2; i--) {
			line = $i; sub(/^[ \t]+/, "", line)
			addr = line; sub(/ .*/, "", addr)
			dso = line; sub(/.* \(/, "", dso); sub(/\)$/, "", dso)
			sym = line; sub(/^[^ ]+ /, "", sym); sub(/ \([^(]*\)$/, "", sym)
			if (sym == "[unknown]" && dso != "[unknown]") {
				sub(/.*\//, "", dso)
				sym = dso "+0x" vaddr(dso, addr)
			}
			fr[++nf] = norm(sym)
		}
		count(1)
	}
	END {
		printf "TOTAL\t%d\nROOT\t%d\n", total, reached
		for (f in cum)
			printf "%s\t%d\n", f, cum[f]
	}'
}

# profile_case NAME EXE COMMAND...: start COMMAND (its output to
# /dev/null; its input is /dev/null, as for any command run in the
# background), let it warm up, then profile it for DURATION seconds with us
# and with perf at once, and check the two. EXE is the executable COMMAND
# runs (its entry point is _start).
profile_case() {
	local name=$1 exe=$2 pid perf_pid entry rc
	local roots="debian stacks: $name: stacks reach the root" agree="debian stacks: $name: perf agrees"
	local ours=$TMP/$name.ours perfs=$TMP/$name.perf
	shift 2
	start_bg "$@" >/dev/null
	pid=$BG_PID
	sleep 1
	if ! kill -0 "$pid" 2>/dev/null; then
		fail "$roots: $name exited before it was profiled"
		fail "$agree: $name exited before it was profiled"
		return
	fi
	perf record -q -e cpu-clock -F "$FREQ" --call-graph "dwarf,$PERF_STACK" -p "$pid" \
		-o "$TMP/$name.data" -- sleep "$DURATION" >/dev/null 2>"$TMP/$name.perf-record.err" &
	perf_pid=$!
	"$PROFILER" -F "$FREQ" -d "$DURATION" --no-python "${extra[@]}" -p "$pid" -f folded \
		-o "$TMP/$name.folded" 2>"$TMP/$name.err"
	rc=$?
	wait "$perf_pid"
	# Still running: both profiles are of the steady state, whole. Its
	# maps now have every file it loaded.
	if ! kill -0 "$pid" 2>/dev/null; then
		fail "$roots: $name exited while it was profiled: make it run longer"
		fail "$agree: $name exited while it was profiled: make it run longer"
		return
	fi
	fde_table "$pid" >"$TMP/$name.fdes"
	kill "$pid" 2>/dev/null
	entry=$(readelf -h "$exe" | awk '/Entry point address:/ { print $4 }')
	if [[ $rc -ne 0 ]]; then
		fail "$roots: profiler failed (exit $rc)"
		sed 's/^/#   /' "$TMP/$name.err"
		fail "$agree: profiler failed"
		return
	fi

	cumulative folded "$TMP/$name.fdes" "${exe##*/}" "$entry" <"$TMP/$name.folded" >"$ours"
	perf script --no-inline -F comm,pid,tid,ip,sym,dso -i "$TMP/$name.data" \
		2>"$TMP/$name.perf-script.err" |
		cumulative perf "$TMP/$name.fdes" "${exe##*/}" "$entry" "$pid" >"$perfs"
	rm -f "$TMP/$name.data" # 300 MB of stacks
	local total reached perf_total perf_reached share perf_share
	total=$(awk -F'\t' '$1 == "TOTAL" { print $2 }' "$ours")
	reached=$(awk -F'\t' '$1 == "ROOT" { print $2 }' "$ours")
	perf_total=$(awk -F'\t' '$1 == "TOTAL" { print $2 }' "$perfs")
	perf_reached=$(awk -F'\t' '$1 == "ROOT" { print $2 }' "$perfs")
	share=$(awk -v r="$reached" -v t="$total" 'BEGIN { printf "%.1f", t ? 100 * r / t : 0 }')
	perf_share=$(awk -v r="$perf_reached" -v t="$perf_total" \
		'BEGIN { printf "%.1f", t ? 100 * r / t : 0 }')

	# (a) The roots, of a profile that has the samples it should.
	if [[ ${total:-0} -lt $MIN_SAMPLES ]]; then
		fail "$roots: $total samples, expected at least $MIN_SAMPLES ($mode)"
		sed 's/^/#   /' "$TMP/$name.err"
	elif awk -v s="$share" 'BEGIN { exit !(s >= 99) }'; then
		ok "$roots: $share% of $total samples from _start or clone ($mode; perf $perf_share%)"
	else
		fail "$roots: $share% of $total samples from _start or clone, expected >= 99" \
			"($mode; perf $perf_share%)"
		echo "#   the outermost frames of our samples:"
		awk '{ n = $NF; split($0, f, ";"); sub(/ [0-9]+$/, "", f[2]); c[f[2]] += n }
			END { for (r in c) print c[r], r }' "$TMP/$name.folded" |
			sort -nr | head -5 | sed 's/^/#     /'
	fi

	# (b) Our 10 functions with the most cumulative time, each looked up in
	# perf's profile (0 where perf never saw it), perf's own stacks whole.
	# The next 10 are shown too, not checked: the first 10 are often all
	# on the trunk every stack shares.
	if [[ ${perf_total:-0} -lt $MIN_SAMPLES ]]; then
		fail "$agree: perf has $perf_total samples of $name, expected at least $MIN_SAMPLES"
		sed 's/^/#   /' "$TMP/$name.perf-record.err" "$TMP/$name.perf-script.err"
		return
	fi
	if [[ ${total:-0} -lt $MIN_SAMPLES ]]; then
		fail "$agree: our profile has $total samples, expected at least $MIN_SAMPLES"
		return
	fi
	local report bad
	report=$(awk -F'\t' -v t="$total" -v pt="$perf_total" '
		FNR == NR { if ($1 != "TOTAL" && $1 != "ROOT") p[$1] = $2; next }
		$1 != "TOTAL" && $1 != "ROOT" {
			o = 100 * $2 / t; q = 100 * p[$1] / pt; d = o - q
			if (d < 0) d = -d
			if (FNR == 11) print "   the next 10, not checked:"
			mark = (FNR <= 10 && d > 2) ? "!!" : "  "
			printf "%s %5.1f%% ours, %5.1f%% perf\t%s\n", mark, o, q, $1
		}' "$perfs" <(grep -v -e '^TOTAL' -e '^ROOT' "$ours" | LC_ALL=C sort -t$'\t' -k2,2nr -k1,1 |
		head -20))
	bad=$(grep -c '^!!' <<<"$report")
	if [[ $(grep -c '%' <<<"$report") -lt 10 ]]; then
		fail "$agree: fewer than 10 functions in our profile"
	elif awk -v s="$perf_share" 'BEGIN { exit !(s < 95) }'; then
		fail "$agree: perf's own stacks reach the root in only $perf_share% of its samples:" \
			"no reference to compare with"
	elif [[ $bad -eq 0 ]]; then
		ok "$agree: the 10 functions with the most cumulative time, within 2 points" \
			"($mode; $total samples, perf $perf_total)"
	else
		fail "$agree: $bad of the 10 functions with the most cumulative time differ" \
			"from perf's share by more than 2 points ($mode; $total samples, perf $perf_total)"
	fi
	sed 's/^/#   /' <<<"$report"
}

# xz -9 in one thread on 40 MB of text from a seeded generator: words
# drawn from a fixed vocabulary, which compresses to about a third, slowly
# (about 1.5 MB/s, so it outlasts the profile).
# The text comes from Debian's python3.11, also needed below.
if ! command -v xz >/dev/null; then
	missing_program xz "xz is not installed (tools/install-deps installs xz-utils)"
elif ! [[ -x /usr/bin/python3.11 ]]; then
	missing_program xz "/usr/bin/python3.11 is not installed (tools/install-deps installs python3.11)"
else
	/usr/bin/python3.11 -c '
import random, sys
random.seed(13)
letters = "etaoinshrdlucmfwypvbgkjqxz"
vocab = ["".join(random.choices(letters, k=random.randint(2, 10))) for _ in range(20000)]
size = 0
while size < 40000000:
    line = " ".join(random.choices(vocab, k=10000)) + "\n"
    sys.stdout.write(line)
    size += len(line)' >"$TMP/words.txt"
	profile_case xz "$(command -v xz)" xz -9 -T1 -c "$TMP/words.txt"
	rm -f "$TMP/words.txt"
fi

# Debian's python3.11, not another one first in PATH (pyenv).
if ! [[ -x /usr/bin/python3.11 ]]; then
	missing_program python3.11 \
		"/usr/bin/python3.11 is not installed (tools/install-deps installs python3.11)"
else
	profile_case python3.11 /usr/bin/python3.11 /usr/bin/python3.11 \
		"$(dirname "$0")/../workloads/pure_python.py" 30
fi

# sqlite3: a million rows, then group-by and sort queries over them, again
# and again, in one process.
if ! command -v sqlite3 >/dev/null; then
	missing_program sqlite3 "sqlite3 is not installed (tools/install-deps installs it)"
else
	sqlite3 "$TMP/big.db" <<-'EOF'
		CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, s TEXT, v REAL);
		WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1000000)
		INSERT INTO t SELECT i, (i * 7919) % 100003, printf('%08x', (i * 40503) % 1000003),
			(i % 1000) / 7.0 FROM c;
	EOF
	for i in $(seq 1 40); do
		echo "SELECT k % $((1000 + i)), count(*), sum(v), max(s) FROM t GROUP BY 1 ORDER BY 3 DESC LIMIT 3;"
		echo "SELECT substr(s, $((i % 5 + 1)), 4), count(*), avg(v) FROM t GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 3;"
	done >"$TMP/queries.sql"
	profile_case sqlite3 "$(command -v sqlite3)" sqlite3 "$TMP/big.db" ".read $TMP/queries.sql"
fi
