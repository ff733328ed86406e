# SPDX-License-Identifier: GPL-2.0-only
# Go programs whole and named in the default mode, stripped as Debian strips
# them (no symbols, no DWARF, no .eh_frame for Go's code): stacks unwound
# from Go's own function table and named from it (collector/unwind_table.c,
# elf/gopclntab.c). The oracle is Go's own CPU profiler on the same process
# at the same time (-test.cpuprofile, runtime/pprof), compared by
# pprof_shares.py with a tolerance derived from both sample counts; the
# goroutines' pprof labels, as Go's profiler splits by them; esbuild's
# released binaries (npm), built by Go 1.23 and by Go 1.16, beside their own
# --cpuprofile; then Debian's hugo (cgo, stripped) building a site.
. "$(dirname "$0")/lib.sh"

regexp_name="Go's regexp tests, stripped: stacks whole, frames named, flat shares as Go's profiler"
split_name="go_split: callers' shares as Go's profiler, checkout 70±5%"
labels_name="goroutines' pprof labels: handler=checkout 70±5% of the labelled samples, as Go's profiler"
esbuild_names=("esbuild 0.24 (Go 1.23): stacks whole, frames named, flat shares as its own profile"
	"esbuild 0.11 (Go 1.16): stacks whole, frames named, flat shares as its own profile")
hugo_name="Debian's hugo building a site: stacks whole and frames named"
require_bpf "$regexp_name" "$split_name" "$labels_name" "${esbuild_names[@]}" "$hugo_name"

if ! command -v go >/dev/null || [[ ! -x $WORKLOADS/regexp.test || ! -x $WORKLOADS/go_split ]]; then
	missing "go or the Go workloads are missing (tools/install-deps, make workloads)" \
		"$regexp_name" "$split_name" "$labels_name" "${esbuild_names[@]}" "$hugo_name"
	exit 0
fi
shares() { python3 "$(dirname "$0")/pprof_shares.py" "$@"; }

# judge NAME ERR PROFILE MIN_WHOLE MIN_NAMED [COMPARE...]: at least
# MIN_WHOLE% of the user stacks whole, MIN_NAMED% of the user frames named,
# and pprof_shares.py compare COMPARE..., if given, content.
judge() {
	local name=$1 err=$2 profile=$3 min_whole=$4 min_named=$5 w n named what cmp=
	shift 5
	read -r w n < <(stacks_whole "$err")
	named=$(shares summary "$profile" 2>/dev/null | awk '{ print $4 }')
	what="${w:-?} of ${n:-?} stacks whole, ${named:-?}% of frames named"
	if [[ -z $w || ${n:-0} -lt 500 ]]; then
		fail "$name: too few samples ($what)"
		grep -E 'warn|error' "$err" | sed 's/^/#   /'
	elif ((w * 100 < n * min_whole)) || ! within "${named:-x}" 100 $((100 - min_named)); then
		fail "$name ($what; at least $min_whole% and $min_named% expected)"
		grep -E 'unwind|warn' "$err" | sed 's/^/#   /'
	elif [[ $# -gt 0 ]] && ! cmp=$(shares compare "$@" 2>&1); then
		fail "$name ($what)"
		sed 's/^/#   /' <<<"$cmp"
	else
		[[ -n $cmp ]] && what+="; $(grep -c '%' <<<"$cmp") shares within tolerance of Go's profile"
		ok "$name ($what)"
	fi
}

# Go's own regexp package, its test binary stripped: the matcher's hot
# functions, several of them inlined into one another.
(cd "$TMP" && "$PROFILER" -v -F 999 -o "$TMP/regexp.pb.gz" -- "$WORKLOADS/regexp.test" \
	-test.run='^$' -test.bench='Match/(Easy1|Medium|Hard)/(32K|1M)' -test.benchtime=400ms \
	-test.cpuprofile="$TMP/regexp-go.pprof" >"$TMP/regexp.out" 2>"$TMP/regexp.err")
judge "$regexp_name" "$TMP/regexp.err" "$TMP/regexp.pb.gz" 95 95 \
	"$TMP/regexp-go.pprof" "$TMP/regexp.pb.gz" flat 10

# Two callers of one hot function, 70/30: only whole stacks through the
# frameless leaf tell them apart.
"$PROFILER" -v -F 999 -o "$TMP/split.pb.gz" -- "$WORKLOADS/go_split" \
	-cpuprofile "$TMP/split-go.pprof" 5 >/dev/null 2>"$TMP/split.err"
checkout=$(pct "$TMP/split.pb.gz" main.checkout cum)
if within "$checkout" 70 5; then
	judge "$split_name (checkout $checkout%)" "$TMP/split.err" "$TMP/split.pb.gz" 95 95 \
		"$TMP/split-go.pprof" "$TMP/split.pb.gz" cum 0 main.checkout main.browse main.crunch
else
	fail "$split_name (checkout $checkout%)"
	pprof -top -cum -nodecount=10 "$TMP/split.pb.gz" 2>&1 | sed 's/^/#   /'
fi

# Each handler under its own label (pprof.Do): the label's shares, which
# only reading the goroutine's labels gives, beside Go's own profile's.
# handler_share FILE: checkout's percentage of the samples labelled handler,
# and how many those are, from `go tool pprof -tags`.
handler_share() {
	pprof -tags "$1" 2>/dev/null | awk '$1 == "handler:" { t = 1; next } t && /^ *[a-z]+: Total/ { t = 0 }
		t && $NF == "checkout" { share = $2 } t && /%\): / { n++ }
		END { gsub(/[(%):]/, "", share); if (n) print share }'
}
"$PROFILER" -v -F 999 -o "$TMP/labels.pb.gz" -o "$TMP/labels.folded" --root-frame labels \
	-- "$WORKLOADS/go_split" -labels -cpuprofile "$TMP/labels-go.pprof" 5 >/dev/null \
	2>"$TMP/labels.err"
ours=$(handler_share "$TMP/labels.pb.gz")
# The same samples in folded output, each stack under its labels.
folded=$(awk '{ n = $NF; split($0, f, ";"); if (f[1] == "handler=checkout") c += n
		if (f[1] ~ /^handler=/) all += n } END { if (all) printf "%.2f", 100 * c / all }' \
	"$TMP/labels.folded")
theirs=$(handler_share "$TMP/labels-go.pprof")
n_ours=$(summary_count "$TMP/labels.err" "on-CPU samples")
n_go=$(shares summary "$TMP/labels-go.pprof" 2>/dev/null | awk '{ print $2 }')
# Three standard deviations of the difference, and a point for the clocks.
tol=$(share_tol "$n_ours" "$n_go")
what="checkout ${ours:-none}% of labelled samples (folded under --root-frame labels: ${folded:-none}%), Go's profile ${theirs:-none}% (±${tol:-?}); ${n_ours:-0} and ${n_go:-0} samples"
if within "$ours" 70 5 && within "$ours" "$theirs" "${tol:-x}" && within "$folded" "$ours" 0.5; then
	ok "$labels_name ($what)"
else
	fail "$labels_name ($what)"
	grep -E 'golang|warn' "$TMP/labels.err" | sed 's/^/#   /'
	pprof -tags "$TMP/labels.pb.gz" 2>&1 | head -20 | sed 's/^/#   /'
fi

# esbuild bundling 8,000 generated functions: the function tables of Go's
# newest and oldest layouts read, on programs built elsewhere.
esbuilds=("$OUTPUT/npm-go/node_modules/@esbuild/linux-x64/bin/esbuild"
	"$OUTPUT/npm-go/node_modules/esbuild-linux-64/bin/esbuild")
for ((f = 0; f < 8000; f++)); do
	echo "export function f$f(a, b) { const x = a * $f + b; if (x > $((f % 97))) { return [x, a, b].map(v => v + $f).filter(Boolean) } return { k$f: x, s: \`t\${a}$f\` } }"
done >"$TMP/in.js"
for i in 0 1; do
	if [[ ! -x ${esbuilds[i]} ]]; then
		missing "${esbuilds[i]} is missing (make go-peers)" "${esbuild_names[i]}"
		continue
	fi
	"$PROFILER" -v -F 999 -o "$TMP/esbuild$i.pb.gz" -- "${esbuilds[i]}" "$TMP/in.js" --bundle \
		--minify --outfile="$TMP/out.js" --cpuprofile="$TMP/esbuild$i-go.pprof" \
		>/dev/null 2>"$TMP/esbuild$i.err"
	judge "${esbuild_names[i]}" "$TMP/esbuild$i.err" "$TMP/esbuild$i.pb.gz" 95 95 \
		"$TMP/esbuild$i-go.pprof" "$TMP/esbuild$i.pb.gz" flat 8
done

# hugo: no frame pointers in its C, no CFI in its Go, stripped. A site of
# 400 generated pages, each listing the others: a few seconds of templates.
if ! command -v hugo >/dev/null; then
	missing "hugo is not installed (tools/install-deps)" "$hugo_name"
	exit 0
fi
site=$TMP/site
mkdir -p "$site/layouts/_default" "$site/content/posts"
echo 'title = "test"' >"$site/config.toml"
echo '<html><body><h1>{{ .Title }}</h1>{{ .Content }}{{ range .Site.RegularPages }}{{ .Title }}{{ end }}</body></html>' \
	>"$site/layouts/_default/single.html"
echo '<html><body>{{ range .Pages }}<a href="{{ .RelPermalink }}">{{ .Title }}</a>{{ end }}</body></html>' \
	| tee "$site/layouts/_default/list.html" >"$site/layouts/index.html"
body=$(printf 'Some **bold** and _it_ `code` [link](/p%d). ' $(seq 40))
for i in $(seq 400); do
	printf -- '---\ntitle: Post %d\ntags: [t%d]\n---\n\n# Post %d\n\n%s\n\n```go\nfunc f%d() {}\n```\n' \
		"$i" $((i % 7)) "$i" "$body" "$i" >"$site/content/posts/p$i.md"
done
(cd "$site" && "$PROFILER" -v -F 999 -o "$TMP/hugo.pb.gz" -- hugo --quiet -d "$TMP/site-out" \
	>/dev/null 2>"$TMP/hugo.err")
# The sanitizer build loads hugo's unwind tables late in its 1.5 s run, and
# the stacks taken before are unwound from copies, of which fewer are whole:
# 248 such stacks and 93.1% whole, then 99 and 97.7%; the real build had 79
# and 58, and 97.3% and 99.0%.
whole=95
asan_build && whole=90
judge "$hugo_name" "$TMP/hugo.err" "$TMP/hugo.pb.gz" "$whole" 90
