# SPDX-License-Identifier: GPL-2.0-only
# The DHAT viewer test tool (tests/e2e/dh_view.js) on valgrind's own DHAT
# file: valgrind --tool=dhat runs alloc_sites, whose figures are known, and
# valgrind's viewer (dh_view.html, in headless Chromium) must render the
# totals valgrind printed, and each call site's share; a broken file must
# fail. This proves the tool that checks our DHAT output.
. "$(dirname "$0")/lib.sh"

TESTS=("dhat_view: valgrind's DHAT counts alloc_sites' allocations"
	"dhat_view: dh_view renders valgrind's totals"
	"dhat_view: dh_view shows site70 and site30"
	"dhat_view: dh_view.js fails on a broken file")
VIEW=$(dirname "$0")/dh_view.js
PLAYWRIGHT=$OUTPUT/npm/node_modules/playwright-core/package.json
DH_VIEW_HTML=/usr/libexec/valgrind/dh_view.html

if ! command -v valgrind >/dev/null || [[ ! -f $DH_VIEW_HTML ]]; then
	missing "no valgrind or no $DH_VIEW_HTML (apt-get install valgrind)" "${TESTS[@]}"
	exit 0
fi
if ! command -v node >/dev/null || [[ ! -f $PLAYWRIGHT ]]; then
	missing "no node or no $PLAYWRIGHT: run 'make playwright-core'" "${TESTS[@]}"
	exit 0
fi
if [[ ! -x ${CHROMIUM:-/usr/bin/chromium} ]]; then
	missing "no ${CHROMIUM:-/usr/bin/chromium} (apt-get install chromium)" "${TESTS[@]}"
	exit 0
fi
if [[ ! -x $WORKLOADS/alloc_sites ]]; then
	missing "no $WORKLOADS/alloc_sites: run 'make workloads'" "${TESTS[@]}"
	exit 0
fi

view() {
	OUTPUT=$OUTPUT node "$VIEW" "$@"
}

# vg_count WHAT: "BYTES BLOCKS" from valgrind's "WHAT N bytes in N blocks" line.
vg_count() {
	sed -nE "s/^==[0-9]+== $1 +([0-9,]+) bytes in ([0-9,]+) blocks$/\1 \2/p" "$TMP/vg.err" |
		tr -d , | head -n 1
}

# view_count KEY: "BYTES BLOCKS" from dh_view.js's "KEY N bytes N blocks" line.
view_count() {
	awk -v k="$1" '$1 == k && $3 == "bytes" && $5 == "blocks" { print $2, $4; exit }' \
		"$TMP/view"
}

# site_count FUNC: "BYTES BLOCKS" of the viewer's node whose own frames hold FUNC.
site_count() {
	local id
	id=$(awk -v f="$1" '$1 == "frame" && index($0, ": " f " (") { print $2; exit }' "$TMP/view")
	[[ -n $id ]] && awk -v id="$id" '$1 == "pp" && $2 == id { print $4, $6; exit }' "$TMP/view"
}

# Two rounds: t-gmax (80,000 bytes) then differs from the total of any one site.
if ! valgrind --tool=dhat --dhat-out-file="$TMP/vg.dhat.json" "$WORKLOADS/alloc_sites" 2 \
	2>"$TMP/vg.err"; then
	fail "${TESTS[0]}: valgrind failed"
	sed 's/^/#   /' "$TMP/vg.err"
	exit 0
fi
total=$(vg_count "Total:") gmax=$(vg_count "At t-gmax:") end=$(vg_count "At t-end:")
# The workload's own figures (see alloc_sites.c); the C library allocates nothing more here.
if [[ $total == "200000 200" && $gmax == "80000 80" && $end == "20000 20" ]]; then
	ok "${TESTS[0]} (total $total, t-gmax $gmax, t-end $end)"
else
	fail "${TESTS[0]} (total '$total', t-gmax '$gmax', t-end '$end'; expected" \
		"'200000 200', '80000 80', '20000 20')"
	sed 's/^/#   /' "$TMP/vg.err"
fi

if ! view "$TMP/vg.dhat.json" >"$TMP/view" 2>"$TMP/view.err"; then
	for t in "${TESTS[@]:1:2}"; do
		fail "$t: dh_view.js failed"
	done
	sed 's/^/#   /' "$TMP/view.err"
else
	vtotal=$(view_count total) vgmax=$(view_count t-gmax-total) vend=$(view_count t-end-total)
	if [[ -n $total && $vtotal == "$total" && $vgmax == "$gmax" && $vend == "$end" ]]; then
		ok "${TESTS[1]} (total $vtotal, t-gmax $vgmax, t-end $vend)"
	else
		fail "${TESTS[1]} (viewer: total '$vtotal', t-gmax '$vgmax', t-end '$vend';" \
			"valgrind: '$total', '$gmax', '$end')"
		sed 's/^/#   /' "$TMP/view"
	fi
	s70=$(site_count site70) s30=$(site_count site30)
	if [[ $s70 == "140000 140" && $s30 == "60000 60" ]]; then
		ok "${TESTS[2]} (site70 $s70, site30 $s30: 70% and 30% of the bytes)"
	else
		fail "${TESTS[2]} (site70 '$s70', site30 '$s30'; expected '140000 140', '60000 60')"
		sed 's/^/#   /' "$TMP/view"
	fi
fi

# A file cut short: the viewer prints JSON's error into the page, and the tool must fail.
head -c 200 "$TMP/vg.dhat.json" >"$TMP/cut.dhat.json"
if view "$TMP/cut.dhat.json" >"$TMP/cut.out" 2>"$TMP/cut.err"; then
	fail "${TESTS[3]}: it exited 0"
	sed 's/^/#   /' "$TMP/cut.out"
elif grep -q "the viewer shows an error" "$TMP/cut.err"; then
	ok "${TESTS[3]} ($(head -c 160 "$TMP/cut.err"))"
else
	fail "${TESTS[3]}: not for the viewer's error"
	sed 's/^/#   /' "$TMP/cut.err"
fi
