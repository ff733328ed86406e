# SPDX-License-Identifier: GPL-2.0-only
# One recording, four formats: profiled once with -o given four times, the
# pprof, folded, Firefox Profiler and SVG outputs hold the same stacks with
# the same counts. Each is read back by its own reader's rules: pprof by
# `go tool pprof -traces`, Firefox JSON by node, the SVG by its frames.
. "$(dirname "$0")/lib.sh"

require_bpf "formats: one profile written as pprof, folded, Firefox and SVG" \
	"formats: per-stack counts agree" "formats: a full disk for one output leaves the others as they were"

# Each reader prints "process;root;...;leaf count" lines, summed and sorted.
sum_stacks() {
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); c[$0] += n } END { for (k in c) print k, c[k] }' |
		LC_ALL=C sort
}

# Folded, without flamegraph.pl's kind suffixes.
from_folded() {
	sed -E 's/_\[[kij]\](;| )/\1/g' "$1" | sum_stacks
}

# pprof -traces: a block per sample, labels then "COUNT leaf" and callers
# one a line; inlined functions carry " (inline)".
from_pprof() {
	pprof -traces -sample_index=samples "$1" 2>/dev/null | awk '
		function flush() { if (n) { s = proc; for (i = n; i >= 1; i--) s = s ";" f[i]
			print s, count } n = 0 }
		/^-+\+/ { flush(); next }
		$1 == "comm:" { proc = $2; next }
		/^ +[a-z]+: / { next }
		/^ +[0-9]+ / { count = $1; $1 = ""; f[n = 1] = name($0); next }
		n && NF { f[++n] = name($0) }
		function name(s) { sub(/^ +/, "", s); sub(/ \(inline\)$/, "", s); return s }
		END { flush() }' | sum_stacks
}

# Firefox (the processed format): every sample row's stack, from the
# thread's stack, frame and function tables; a row counts one sample (CPU
# profiles have no weights). Its processName is the command line: the
# process name that the other formats start with is the name of its main
# thread (tid = pid).
from_firefox() {
	node -e '
		const zlib = require("zlib"), fs = require("fs");
		const p = JSON.parse(zlib.gunzipSync(fs.readFileSync(process.argv[1])));
		const comm = {};
		for (const t of p.threads)
			if (String(t.tid) === String(t.pid))
				comm[t.pid] = t.name;
		for (const t of p.threads) {
			const st = t.stackTable, fr = t.frameTable, fn = t.funcTable;
			for (const stack of t.samples.stack) {
				const names = [];
				for (let s = stack; s !== null; s = st.prefix[s])
					names.unshift(t.stringArray[fn.name[fr.func[st.frame[s]]]]);
				// A truncated stack has a [truncated] root here alone (folded
				// and pprof mark it in the summary): one at exit, say.
				if (names[0] === "[truncated]")
					names.shift();
				console.log([comm[t.pid] || t.name, ...names].join(";") + " 1");
			}
		}' "$1" | sum_stacks
}

# SVG: frames come depth first, each with its count (data-n) and its depth
# (y, 16 px a level); a stack's count is its leaf frame's count less its
# callees'. "all" is the root, above it the process.
from_svg() {
	sed -n 's|^<g class="\([a-z]*\)" data-s="[0-9]*" data-n="\([0-9]*\)"><title>\(.*\) ([^(]*</title><rect x="[0-9.]*" y="\([0-9]*\)".*|\1\t\2\t\4\t\3|p' "$1" |
		awk -F'\t' '
		function flush(d) { while (top >= d) { if (self[top] > 0) print path[top], self[top]; top-- } }
		$1 == "root" { base = $3; top = -1; next }
		{ d = (base - $3) / 16
		  flush(d)
		  path[d] = d > 1 ? path[d - 1] ";" $4 : $4
		  self[d] = $2; if (d > 1) self[d - 1] -= $2
		  top = d }
		END { flush(1) }' | sum_stacks
}

if "$PROFILER" -F 499 -o "$TMP/a.pb.gz" -o "$TMP/a.folded" -o "$TMP/a.json.gz" \
	-o "$TMP/a.svg" -- "$WORKLOADS/split" 70 30 2 2>"$TMP/err"; then
	written=$(grep -c "^profiler: wrote " "$TMP/err")
	check "formats: one profile written as pprof, folded, Firefox and SVG ($written files)" \
		test "$written" -eq 4
	from_folded "$TMP/a.folded" >"$TMP/folded.stacks"
	from_pprof "$TMP/a.pb.gz" >"$TMP/pprof.stacks"
	from_firefox "$TMP/a.json.gz" >"$TMP/firefox.stacks"
	from_svg "$TMP/a.svg" >"$TMP/svg.stacks"
	stacks=$(wc -l <"$TMP/folded.stacks")
	total=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/folded.stacks")
	same=1
	for f in pprof firefox svg; do
		if ! diff -u "$TMP/folded.stacks" "$TMP/$f.stacks" >"$TMP/$f.diff"; then
			same=0
			echo "# folded vs $f:"
			head -n 20 "$TMP/$f.diff" | sed 's/^/#   /'
		fi
	done
	if [[ $same == 1 && $stacks -gt 0 ]]; then
		ok "formats: per-stack counts agree ($stacks stacks, $total samples in each format)"
	else
		fail "formats: per-stack counts agree ($stacks stacks in folded)"
	fi
else
	fail "formats: one profile written as pprof, folded, Firefox and SVG: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# One output that cannot be written (its disk is full) leaves the others as
# they were: every output is flushed before any is renamed into place.
mkdir -p "$TMP/big" "$TMP/small"
echo OLD >"$TMP/big/a.svg"
if mount -t tmpfs -o size=64k tmpfs "$TMP/small" 2>"$TMP/err"; then
	dd if=/dev/zero of="$TMP/small/fill" bs=4k count=100 status=none 2>/dev/null
	rc=0
	"$PROFILER" -F 499 -o "$TMP/big/a.svg" -o "$TMP/small/b.folded" -- \
		"$WORKLOADS/split" 70 30 1 2>"$TMP/err" || rc=$?
	left=$(find "$TMP/big" "$TMP/small" -name '.profiler-*' | wc -l)
	state="exit $rc, a.svg '$(head -c 20 "$TMP/big/a.svg")', $left temporary files"
	check "formats: a full disk for one output leaves the others as they were ($state)" \
		test "$rc" -eq 1 -a "$(cat "$TMP/big/a.svg")" = OLD -a "$left" -eq 0
	umount "$TMP/small"
else
	fail "formats: a full disk for one output: cannot mount a tmpfs ($(cat "$TMP/err"))"
fi
