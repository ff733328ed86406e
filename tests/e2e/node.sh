# SPDX-License-Identifier: GPL-2.0-only
# Node programs whole and named in the default mode, with no flag given to
# node: V8's builtins and generated code walked by their frame pointers
# (collector/unwind_table.c), JavaScript frames named from V8's own
# constants (bpf/v8.bpf.h, collector/v8.c). The oracle is V8's own CPU
# profiler on the same process at the same time (node --cpu-prof), compared
# by cpuprofile_shares.py with a tolerance derived from both sample counts:
# on js_split (two callers of one hot function, 70/30) under Debian's node
# and nodejs.org's node 18 and 22 (npm), and with every stack unwound in
# user space from a copy (--call-graph dwarf), then on TypeScript's compiler from
# npm type-checking playwright-core's JavaScript. Last, a program that
# exports V8's constants with its own memory behind them: the profiler reads
# what it finds, names nothing wrongly and does not fail; and one that says
# it is V8 9: told in one line, its stacks whole.
. "$(dirname "$0")/lib.sh"

split_name="js_split, no flags: stacks whole, functions named with script:line, shares as V8's profiler"
tsc_name="TypeScript's compiler (npm) type-checking: stacks whole, JavaScript frames named, top-10 within 5 points of V8's profiler"
peer_names=("js_split on node 18 (V8 10.2): functions named, shares as V8's profiler"
	"js_split on node 22 (V8 12.4): functions named, shares as V8's profiler")
dwarf_name="js_split under --call-graph dwarf, every stack unwound in user space from a copy: functions named, shares as V8's profiler"
fake_name="a program posing as node, its V8 constants pointing at garbage: no frame named wrongly, no failure"
v9_name="a program posing as V8 9: one line says its functions are not named, its stacks whole"
require_bpf "$split_name" "${peer_names[@]}" "$dwarf_name" "$tsc_name" "$fake_name" "$v9_name"

node=$(command -v node || command -v nodejs)
if [[ -z $node ]]; then
	missing "node is not installed (tools/install-deps installs the nodejs package)" \
		"$split_name" "${peer_names[@]}" "$dwarf_name" "$tsc_name" "$fake_name" "$v9_name"
	exit 0
fi
shares() { python3 "$(dirname "$0")/cpuprofile_shares.py" "$@"; }

# judge NAME DIR ERR FOLDED SCRIPT|- PRESENT COLUMN TOP [FLOOR]: at least
# 95% of the user stacks whole, at most 2% of the JavaScript frames unnamed,
# V8's PRESENT functions with the most self time (node --cpu-prof into DIR)
# all in ours, and its TOP by COLUMN within tolerance (cpuprofile_shares.py).
judge() {
	local name=$1 dir=$2 err=$3 folded=$4 script=$5 present=$6 w n js unnamed what cmp
	shift 6
	read -r w n < <(stacks_whole "$err")
	read -r js unnamed < <(shares named "$folded")
	what="${w:-?} of ${n:-?} stacks whole, ${unnamed:-?} of ${js:-?} JavaScript frames unnamed"
	if ! cmp=$(shares present "$dir"/*.cpuprofile "$folded" "$script" "$present" 2>&1 &&
		shares compare "$dir"/*.cpuprofile "$folded" "$script" "$@" 2>&1) ||
		[[ -z $w || ${n:-0} -lt 500 ]] || ((w * 100 < n * 95 || unnamed * 50 > js)); then
		fail "$name ($what)"
		sed 's/^/#   /' <<<"$cmp"
		# Self shares too, to tell which frames the two profiles put apart.
		shares compare "$dir"/*.cpuprofile "$folded" "$script" self "$2" 2>&1 |
			grep -v '^samples' | sed 's/^/#   /'
		grep -E 'node:|unwind|warn' "$err" | sed 's/^/#   /'
	else
		ok "$name ($what; V8's $present hottest functions named alike, $(grep -c '^inlined? ' <<<"$cmp") missing (inlined?), $1 shares of $(grep -c '^ok ' <<<"$cmp") within tolerance)"
	fi
}

# Two callers of one hot function, 70/30, and nothing else: each function
# named by its line, and its share, self and with its callees, as V8's.
script=$(realpath "$(dirname "$0")/../workloads/js_split.js")

# split_under NAME NODE TAG [OPTION...]: js_split under NODE, beside its own profiler.
split_under() {
	local name=$1 node=$2 tag=$3

	shift 3
	mkdir -p "$TMP/$tag-v8"
	"$PROFILER" -v -F 999 "$@" -o "$TMP/$tag.folded" -- "$node" --cpu-prof \
		--cpu-prof-dir="$TMP/$tag-v8" "$script" 4 >/dev/null 2>"$TMP/$tag.err"
	judge "$name" "$TMP/$tag-v8" "$TMP/$tag.err" "$TMP/$tag.folded" js_split.js 4 incl 6
}

mkdir -p "$TMP/split-v8"
"$PROFILER" -v -F 999 -o "$TMP/split.folded" -o "$TMP/split.pb.gz" -- "$node" --cpu-prof \
	--cpu-prof-dir="$TMP/split-v8" "$script" 5 >/dev/null 2>"$TMP/split.err"
lines_ok=1
for f in crunch checkout browse serve; do
	line=$(grep -n "^function $f(" "$script" | cut -d: -f1)
	grep -q "$f (js_split.js:$line)" "$TMP/split.folded" || lines_ok=
	# pprof sees the function, with its file and line.
	pprof -list="^$f\$" "$TMP/split.pb.gz" 2>/dev/null | grep -q "js_split.js" || lines_ok=
done
if [[ -z $lines_ok ]]; then
	fail "$split_name (a function is not named as 'NAME (js_split.js:LINE)', or not in the pprof)"
	grep -o '[a-z]* (js_split.js:[0-9]*)' "$TMP/split.folded" | sort | uniq -c | sed 's/^/#   /'
else
	judge "$split_name" "$TMP/split-v8" "$TMP/split.err" "$TMP/split.folded" js_split.js 4 incl 6
fi

# Stacks unwound in user space, from a copy of the stack (every one here; in
# the default mode, those taken before a process's tables are loaded): the
# JavaScript frames named as the BPF program names them.
split_under "$dwarf_name" "$node" dwarf --call-graph dwarf

for v in 18 22; do
	peer=$OUTPUT/npm-node/node_modules/node$v/bin/node
	name=${peer_names[v == 18 ? 0 : 1]}
	if [[ -x $peer ]]; then
		split_under "$name" "$peer" "node$v"
	else
		missing "$peer is missing (make node-peers)" "$name"
	fi
done

# TypeScript's compiler, written by others, with its deep recursion and
# hundreds of functions, checking 150 files of playwright-core: ten seconds.
tsc=$OUTPUT/npm-node/node_modules/typescript/lib/tsc.js
sources=$OUTPUT/npm/node_modules/playwright-core/lib
if [[ ! -f $tsc || ! -d $sources ]]; then
	missing "$tsc or $sources is missing (make node-peers playwright-core)" "$tsc_name"
else
	mkdir -p "$TMP/tsc-v8"
	find "$sources" -name '*.js' | sort | head -n 150 >"$TMP/tsc-files"
	(cd "$TMP" && "$PROFILER" -v -F 499 -o "$TMP/tsc.folded" -- "$node" --cpu-prof \
		--cpu-prof-dir="$TMP/tsc-v8" "$tsc" --noEmit --allowJs --checkJs --skipLibCheck \
		--target es2022 --module commonjs $(cat "$TMP/tsc-files") >/dev/null 2>"$TMP/tsc.err")
	# Its shares are compared within 5 points, not a tolerance from the sample
	# counts: V8's profiler shows the functions it inlined (forEach,
	# nextTokenWithoutCheck) apart, where ours counts them in their callers.
	judge "$tsc_name" "$TMP/tsc-v8" "$TMP/tsc.err" "$TMP/tsc.folded" tsc.js 30 self 10 5
fi

# fake_node exports V8's constants, and its frames (frame pointers, no
# CFI) hold "functions" whose objects are garbage of every kind.
if [[ ! -x $WORKLOADS/fake_node || ! -x $WORKLOADS/fake_node-v9 ]]; then
	missing "$WORKLOADS/fake_node is missing (make workloads)" "$fake_name" "$v9_name"
	exit 0
fi
"$PROFILER" -v -F 999 -o "$TMP/fake.folded" -- "$WORKLOADS/fake_node" 2 >"$TMP/fake.out" \
	2>"$TMP/fake.err"
rc=$?
samples=$(summary_count "$TMP/fake.err" "on-CPU samples")
read -r js unnamed < <(shares named "$TMP/fake.folded")
# late.js at no line: samples before its source could be read, if any.
named=$(grep -o '[^;]* ([^;]*:[0-9]*)' "$TMP/fake.folded" | grep -v '^\[unknown JavaScript\]' |
	grep -vx 'honest (late.js:0)' | sort -u | tr '\n' ' ')
what="exit $rc, ${samples:-0} samples, ${unnamed:-?} of ${js:-?} JavaScript frames unnamed"
# Only the function laid out right is named, in its three scripts (one with
# a source of 2 GiB, whose lines are not counted; one whose source is read
# again until it can be): the rest is garbage, unnamed.
if [[ $rc -eq 0 && ${samples:-0} -ge 500 && ${unnamed:-0} -gt 0 &&
	$named == "honest (big.js:0) honest (fake.js:3) honest (late.js:3) " ]] &&
	grep -q 'frames not named' "$TMP/fake.err"; then
	ok "$fake_name ($what)"
else
	fail "$fake_name ($what; named: ${named:-none})"
	grep -E 'node:|v8:|warn|error' "$TMP/fake.err" | sed 's/^/#   /'
fi

# A release not read: said once, by default, and its stacks as any.
"$PROFILER" -v -F 999 -o "$TMP/v9.folded" -- "$WORKLOADS/fake_node-v9" 1 >/dev/null 2>"$TMP/v9.err"
read -r w n < <(stacks_whole "$TMP/v9.err")
said=$(grep -c 'runs V8 9.3, whose JavaScript functions are not named' "$TMP/v9.err")
what="${w:-?} of ${n:-?} stacks whole, said $said times"
# A second at 999 Hz: 469 stacks beside two busy loops, 300 are plenty.
if [[ $said -eq 1 && ${n:-0} -ge 300 ]] && ((w * 100 >= n * 95)) &&
	! grep -q 'unknown JavaScript\|(fake.js' "$TMP/v9.folded"; then
	ok "$v9_name ($what)"
else
	fail "$v9_name ($what)"
	grep -E 'node:|warn' "$TMP/v9.err" | sed 's/^/#   /'
fi
