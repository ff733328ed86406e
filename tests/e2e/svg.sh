# SPDX-License-Identifier: GPL-2.0-only
# The SVG flame graph: well-formed XML with nothing outside the file, frames
# as wide as their share of samples (split's 70/30), and the same counts as
# folded output of the same profile.
. "$(dirname "$0")/lib.sh"

require_bpf "svg: well-formed XML" "svg: the embedded script parses" "svg: self-contained" "svg: the process is the root frame" \
	"svg: hot_a and hot_b 70/30" "svg: counts agree with folded" \
	"svg --wall: microseconds agree with folded" "svg: a tall graph opens at its root" \
	"svg: export/flamegraph.js parses (node --check)"

# The script that export/svg.c embeds, as written.
if command -v node >/dev/null; then
	check "svg: export/flamegraph.js parses (node --check)" \
		node --check "$(dirname "$0")/../../export/flamegraph.js"
else
	fail "svg: export/flamegraph.js parses: no node (tools/install-deps installs nodejs)"
fi

if ! command -v xmllint >/dev/null; then
	fail "svg: well-formed XML: no xmllint (tools/install-deps installs libxml2-utils)"
	exit 0
fi

# svg_frames FILE: one line per drawn frame: class, count, width, name (as
# escaped in the file). A frame's <title> is its name, then " (details)".
svg_frames() {
	local g='<g class="\([a-z]*\)" data-s="[0-9]*" data-n="\([0-9]*\)">'
	local title='<title>\(.*\) ([^(]*</title>'
	local rect='<rect x="[0-9.]*" y="[0-9]*" width="\([0-9.]*\)"'
	sed -n "s|^$g$title$rect.*|\\1\t\\2\t\\4\t\\3|p" "$1"
}

# svg_sum FILE NAME COLUMN: the sum of COLUMN (2: count, 3: width) over the frames called NAME.
svg_sum() {
	svg_frames "$1" | awk -F'\t' -v f="$2" -v c="$3" '$4 == f { s += $c } END { print s + 0 }'
}

# folded_sum FILE [FUNC]: the samples in folded FILE, or those whose stack has FUNC.
folded_sum() {
	awk -v f="${2:-}" '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, fr, ";")
		for (i = 1; i <= k; i++) if (f == "" || fr[i] == f) { s += n; break } }
		END { print s + 0 }' "$1"
}

# Both formats from one profile, so their counts can be compared.
if "$PROFILER" -F 499 -o "$TMP/split.svg" -o "$TMP/split.folded" -- \
	"$WORKLOADS/split" 70 30 3 2>"$TMP/err"; then
	check "svg: well-formed XML (xmllint --noout)" xmllint --noout "$TMP/split.svg"
	ext=$(grep -Eo '(href|src) *=|url\(|@import|https?://[^"]*' "$TMP/split.svg" |
		grep -vx 'http://www.w3.org/2000/svg' | sort -u | tr '\n' ' ')
	frames=$(grep -c '<title>' "$TMP/split.svg")
	check "svg: self-contained (external references: '${ext}' in $frames frames)" \
		test "$frames" -gt 0 -a -z "$ext"
	# The script as the SVG holds it, with the call svg.c adds.
	sed -n '/<script[^>]*><!\[CDATA\[$/,/^\]\]><\/script>$/p' "$TMP/split.svg" | sed '1d;$d' \
		>"$TMP/split.js"
	if [[ -s $TMP/split.js ]] && command -v node >/dev/null; then
		check "svg: the embedded script parses (node --check)" node --check "$TMP/split.js"
	else
		fail "svg: the embedded script parses: no script in the SVG, or no node"
	fi
	process=$(svg_frames "$TMP/split.svg" | awk -F'\t' 'NR == 2 { print $1 ":" $4 }')
	check "svg: the process is the root frame above all ($process)" test "$process" = process:split

	a=$(svg_sum "$TMP/split.svg" hot_a 3)
	b=$(svg_sum "$TMP/split.svg" hot_b 3)
	share=$(awk -v a="$a" -v b="$b" 'BEGIN { s = a + b; printf "%.1f", s ? 100 * a / s : 0 }')
	if awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && b > 0) }' && within "$share" 70 5; then
		ok "svg: hot_a and hot_b 70/30 (widths $a and $b px: hot_a $share%)"
	else
		fail "svg: hot_a and hot_b 70/30 (widths $a and $b px: hot_a $share%, expected 70±5)"
		svg_frames "$TMP/split.svg" | head -n 30 | sed 's/^/#   /'
	fi

	got="all $(svg_sum "$TMP/split.svg" all 2), hot_a $(svg_sum "$TMP/split.svg" hot_a 2)"
	got+=", hot_b $(svg_sum "$TMP/split.svg" hot_b 2)"
	want="all $(folded_sum "$TMP/split.folded"), hot_a $(folded_sum "$TMP/split.folded" hot_a)"
	want+=", hot_b $(folded_sum "$TMP/split.folded" hot_b)"
	check "svg: counts agree with folded (svg: $got; folded: $want)" test "$got" = "$want"
else
	fail "svg: well-formed XML: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# Microseconds of wall-clock time, asleep and burning: the same totals as folded's.
if "$PROFILER" --wall -F 499 -o "$TMP/wall.svg" -o "$TMP/wall.folded" -- \
	"$WORKLOADS/sleeper" 2 10 10 2>"$TMP/err"; then
	got=$(svg_sum "$TMP/wall.svg" all 2)
	want=$(folded_sum "$TMP/wall.folded")
	if xmllint --noout "$TMP/wall.svg" 2>"$TMP/xmlerr" && [[ $got -gt 0 && $got == "$want" ]] &&
		grep -q "µs of wall-clock time[;<]" "$TMP/wall.svg"; then
		ok "svg --wall: microseconds agree with folded ($got µs)"
	else
		fail "svg --wall: microseconds agree with folded (svg $got µs, folded $want)"
		sed 's/^/#   /' "$TMP/xmlerr"
	fi
else
	fail "svg --wall: microseconds agree with folded: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi

# A graph taller than the window (a 60-deep recursion) opens in a browser at
# its root, at the bottom, not at its thin top; the root frame in view.
VIEW=$(dirname "$0")/svg_view.js
if [[ ! -f $OUTPUT/npm/node_modules/playwright-core/package.json || ! -x ${CHROMIUM:-/usr/bin/chromium} ]]; then
	missing "no playwright-core or no Chromium: run 'make playwright-core'" \
		"svg: a tall graph opens at its root"
elif "$PROFILER" -F 499 -o "$TMP/deep.svg" -- "$WORKLOADS/deep" 60 1 2>"$TMP/err"; then
	view=$(OUTPUT=$OUTPUT node "$VIEW" "$TMP/deep.svg" 2>&1)
	height=$(sed -n 's/^height //p' <<<"$view")
	scroll=$(sed -n 's/^scroll //p' <<<"$view")
	visible=$(sed -n 's/^root-visible //p' <<<"$view")
	check "svg: a tall graph opens at its root (${height:-?} px high, opened ${scroll:-?} px down, root in view: ${visible:-?})" \
		test "${height:-0}" -gt 600 -a "${scroll:-0}" -gt 0 -a "${visible:-0}" = 1
else
	fail "svg: a tall graph opens at its root: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi
