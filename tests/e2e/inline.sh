# SPDX-License-Identifier: GPL-2.0-only
# A function inlined into two callers is a frame of its own in the profile,
# with its source line, under each caller, with each caller's share of the
# time: the workload's hot_inline() has no out-of-line copy, only DWARF's
# records of where it was inlined.
. "$(dirname "$0")/lib.sh"

require_bpf "inline frames" "inline frames: source lines" "inline frames: 70/30 split"

if ! "$PROFILER" -F 499 -o "$TMP/inline.pb.gz" -- "$WORKLOADS/inline" 70 30 5 2>"$TMP/err"; then
	fail "inline frames: profiler failed"
	sed 's/^/#   /' "$TMP/err"
	exit 0
fi
pprof -traces -lines "$TMP/inline.pb.gz" >"$TMP/traces" 2>&1

# Where the source puts hot_inline's body ("hot_inline FIRST LAST") and
# each call of it ("CALLER LINE"), to check the lines the profile names.
src=$(dirname "$0")/../workloads/inline.c
awk '
	# A definition starts in column 0; its name is the last "name(" on it.
	/^[a-z_].*\(/ && !/;$/ {
		for (s = $0; match(s, /[a-z_]+\(/); s = substr(s, RSTART + RLENGTH))
			fn = substr(s, RSTART, RLENGTH - 1)
		start = NR
	}
	/^}/ && fn == "hot_inline" { print fn, start, NR }
	/^\t.*hot_inline\(/ && fn != "" && fn != "hot_inline" { print fn, NR }
' "$src" >"$TMP/lines"
read -r _ hot_first hot_last < <(grep '^hot_inline ' "$TMP/lines")

# `pprof -traces -lines` prints one block a stack: label lines ("pid:  12"),
# then the frames, leaf first, as "FUNCTION FILE:LINE", the first preceded
# by the stack's time and the frames of inlined calls followed by
# "(inline)". For each stack that holds hot_inline, this counts its time
# under the frame that follows, and whether hot_inline was marked inlined
# and named a line of inline.c; and prints the shares of all the time as
# "caller_a PCT", "caller_b PCT", "hot_inline PCT", "marked PCT", then
# every distinct "FRAME LINE" seen for hot_inline and its callers.
summary=$(awk '
	function seconds(v,    n, u) {
		n = v; sub(/[^0-9.]+$/, "", n); u = substr(v, length(n) + 1)
		if (u == "ns")
			return n * 1e-9
		if (u == "us" || u == "µs")
			return n * 1e-6
		if (u == "ms")
			return n * 1e-3
		if (u == "min")
			return n * 60
		if (u == "h" || u == "hrs")
			return n * 3600
		return n
	}
	function finish(    i, f, name) {
		total += value
		for (i = 1; i < nf; i++) {
			split(frame[i], f, " ")
			if (f[1] != "hot_inline")
				continue
			hot += value
			if (frame[i] ~ / \(inline\)$/)
				marked += value
			split(frame[i + 1], name, " ")
			under[name[1]] += value
			seen["hot_inline " f[2]] = 1
			seen[name[1] " " name[2]] = 1
			break
		}
		nf = 0; value = 0
	}
	/^-+\+-+$/ { if (nf) finish(); next }
	$1 ~ /:$/ { next }
	NF && !nf && $1 ~ /^[0-9.]+[^0-9.]*$/ { value = seconds($1); sub(/^ *[^ ]+ +/, "") }
	NF { sub(/^ +/, ""); frame[++nf] = $0 }
	END {
		if (nf)
			finish()
		if (!total)
			total = 1
		printf "caller_a %.1f\ncaller_b %.1f\n", 100 * under["caller_a"] / total,
			100 * under["caller_b"] / total
		printf "hot_inline %.1f\nmarked %.1f\n", 100 * hot / total, 100 * marked / total
		for (s in seen)
			print s
	}' "$TMP/traces")
share() { awk -v k="$1" '$1 == k { print $2; exit }' <<<"$summary"; }
# dump: what the profile held, once, under the first failure.
dumped=0
dump() {
	((dumped++)) && return
	sed 's/^/#   /' <<<"$summary"
	grep -m 12 -E 'hot_inline|caller_' "$TMP/traces" | sed 's/^/#   /'
}

hot=$(share hot_inline)
marked=$(share marked)
if within "$hot" 100 5 && within "$marked" 100 5; then
	ok "inline frames: hot_inline is an inline frame on $hot% of stacks"
else
	fail "inline frames: hot_inline is on $hot% of stacks, $marked% as an inline frame" \
		"(expected 100±5)"
	dump
fi

# Every hot_inline frame names a line of its body; every caller frame under
# it names the line of that caller's call.
bad=$(awk -v first="$hot_first" -v last="$hot_last" '
	NR == FNR { call[$1] = $2; next }
	$1 != "caller_a" && $1 != "caller_b" && $1 != "hot_inline" || $2 == "" { next }
	{
		file = $2; line = file; sub(/.*:/, "", line); sub(/:[^:]*$/, "", file); line += 0
		if (file !~ /(^|\/)inline\.c$/)
			print
		else if ($1 == "hot_inline" && (line < first || line > last))
			print
		else if ($1 != "hot_inline" && line != call[$1])
			print
	}' "$TMP/lines" <(tail -n +5 <<<"$summary"))
lines=$(tail -n +5 <<<"$summary" | sed 's| [^ ]*/| |' | sort |
	awk '{ s = s (NR > 1 ? ", " : "") $0 } END { print s }')
if [[ -n $lines && -z $bad ]]; then
	ok "inline frames: source lines: $lines"
else
	calls=$(awk '$1 != "hot_inline" { s = s (s ? ", " : "") $1 " " $2 } END { print s }' \
		"$TMP/lines")
	fail "inline frames: source lines: ${lines:-none} (expected hot_inline in" \
		"inline.c:$hot_first-$hot_last, calls at $calls)"
	[[ -n $bad ]] && sed 's/^/#   wrong: /' <<<"$bad"
	dump
fi

a=$(share caller_a)
b=$(share caller_b)
if within "$a" 70 5 && within "$b" 30 5; then
	ok "inline frames: 70/30 split: hot_inline under caller_a $a%, under caller_b $b%"
else
	fail "inline frames: 70/30 split: hot_inline under caller_a $a%, under caller_b $b%" \
		"(expected 70±5 and 30±5)"
	dump
fi
