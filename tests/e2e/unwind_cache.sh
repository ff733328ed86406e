# SPDX-License-Identifier: GPL-2.0-only
# The unwind tables are kept between recordings (collector/unwind_cache.h):
# the first recording of a workload without frame pointers writes its
# table, the second reads it back (-v says so) and its stacks are as whole;
# a table file cut short is ignored with one line and written anew; and
# --no-cache writes nothing.
. "$(dirname "$0")/lib.sh"

require_bpf "unwind cache: --no-cache writes nothing" \
	"unwind cache: the first recording writes the workload's table" \
	"unwind cache: the second reads its tables from the cache, its stacks as whole" \
	"unwind cache: a table file cut short is ignored with one line and written anew"

BIN=$WORKLOADS/frameless-nofp
export XDG_CACHE_HOME=$TMP/xdg
mkdir -m 0700 "$XDG_CACHE_HOME"
CACHE=$XDG_CACHE_HOME/profiler
id=$(readelf -n "$BIN" | awk '/Build ID/ { print $3 }')
FILE=$CACHE/$id.unwind

# record NAME ARGS...: a second of the workload, folded, into $TMP/NAME.folded;
# debug messages in $TMP/NAME.err.
record() {
	local name=$1
	shift
	"$PROFILER" -v -v -F 499 "$@" -o "$TMP/$name.folded" -- "$BIN" 70 30 1 2>"$TMP/$name.err"
}

# whole NAME: the percentage of samples whose stack goes from the workload's
# leaf down to its entry point, _start: no frame pointer leads there.
whole() {
	awk '{ n = $NF; all += n; if ($0 ~ /^[^;]*;_start;.*;main;caller_[ab];leaf/) w += n }
		END { if (all) printf "%d\n", 100 * w / all; else print 0 }' "$TMP/$1.folded"
}

# samples NAME: how many samples the profile holds.
samples() { awk '{ n += $NF } END { print n + 0 }' "$TMP/$1.folded"; }

# from_cache NAME: the "N read from the cache" of the -v line.
from_cache() {
	sed -nE 's/.*unwind: tables of [0-9]+ files for [0-9]+ processes, ([0-9]+) read from the cache.*/\1/p' \
		"$TMP/$1.err"
}

name="unwind cache: --no-cache writes nothing"
record none --no-cache
if [[ $(samples none) -ge 100 && $(whole none) -ge 90 && ! -e $CACHE ]]; then
	ok "$name ($(whole none)% of $(samples none) samples whole)"
else
	fail "$name ($(whole none)% of $(samples none) samples whole; $(ls -R "$CACHE" 2>&1 | head -3))"
	sed 's/^/#   /' "$TMP/none.err"
fi

name="unwind cache: the first recording writes the workload's table"
record first
if [[ -n $id && -s $FILE && $(stat -c %a "$FILE") == 600 && $(from_cache first) == 0 ]] &&
	grep -q "unwind: table of '$BIN': .* rows$" "$TMP/first.err"; then
	ok "$name ($id.unwind, $(stat -c %s "$FILE") bytes)"
else
	fail "$name (no $FILE, or read from the cache: $(from_cache first))"
	sed 's/^/#   /' "$TMP/first.err"
fi
size=$(stat -c %s "$FILE" 2>/dev/null)

name="unwind cache: the second reads its tables from the cache, its stacks as whole"
record second
first=$(whole first)
second=$(whole second)
if [[ $(samples first) -ge 100 && $first -ge 90 && $(samples second) -ge 100 &&
	$second -ge $((first - 5)) && $(from_cache second) -ge 1 ]] &&
	grep -q "unwind: table of '$BIN': .* rows, from the cache" "$TMP/second.err" &&
	! grep -q "unwind: table of .* written to" "$TMP/second.err"; then
	ok "$name ($(from_cache second) tables read; $second% of stacks whole, $first% the first time)"
else
	fail "$name ($(from_cache second) tables read; $second% of stacks whole, $first% the first time)"
	sed 's/^/#   /' "$TMP/second.err"
fi

name="unwind cache: a table file cut short is ignored with one line and written anew"
if [[ -n $size ]]; then
	truncate -s $((size - 5)) "$FILE"
	record cut
	warnings=$(grep -c "unwind: ignoring cache file '$FILE'" "$TMP/cut.err")
	if [[ $warnings == 1 && $(whole cut) -ge $((first - 5)) && $(stat -c %s "$FILE") == "$size" ]] &&
		grep -q "unwind: table of '$BIN': .* rows$" "$TMP/cut.err"; then
		ok "$name ($(grep "ignoring cache file" "$TMP/cut.err"); $(whole cut)% of stacks whole)"
	else
		fail "$name ($warnings warnings, $(whole cut)% whole, $(stat -c %s "$FILE") bytes of $size)"
		sed 's/^/#   /' "$TMP/cut.err"
	fi
else
	fail "$name: the first recording wrote no table"
fi
