# SPDX-License-Identifier: GPL-2.0-only
# A recording symbolizes through the cache of answers too (symbolize/symcache.h):
# the first writes the cache file of a workload built with DWARF, the second
# answers from it with the same functions and inline frames, and --no-cache
# writes nothing.
. "$(dirname "$0")/lib.sh"

require_bpf "record cache: the first recording writes the workload's cache file" \
	"record cache: the second names the same functions, from the cache" \
	"record cache: --no-cache writes nothing"

BIN=$WORKLOADS/inline
export XDG_CACHE_HOME=$TMP/xdg
mkdir -m 0700 "$XDG_CACHE_HOME"
CACHE=$XDG_CACHE_HOME/profiler
id=$(readelf -n "$BIN" | awk '/Build ID/ { print $3 }')

# record NAME ARGS...: a second of the workload, folded, into $TMP/NAME.folded.
record() {
	local name=$1
	shift
	"$PROFILER" -F 499 -d 1 "$@" -o "$TMP/$name.folded" -- "$BIN" 2>"$TMP/$name.err"
}

# The frames a profile names, with their inline marks, one a line.
frames() { sed 's/ [0-9]*$//' "$1" | tr ';' '\n' | sort -u; }

record none --no-cache
if [[ -s $TMP/none.folded && ! -e $CACHE ]] && grep -q 'hot_inline_\[i\]' "$TMP/none.folded"; then
	ok "record cache: --no-cache writes nothing"
else
	fail "record cache: --no-cache ($(ls -R "$CACHE" 2>&1 | head -3))"
fi

record first
if [[ -n $id && -s $CACHE/$id.sym && $(stat -c %a "$CACHE/$id.sym") == 600 ]] &&
	grep -q 'hot_inline_\[i\]' "$TMP/first.folded"; then
	ok "record cache: the first recording writes the workload's cache file ($id.sym)"
else
	fail "record cache: the first recording wrote no $CACHE/$id.sym"
	sed 's/^/#   /' "$TMP/first.err"
fi

# The DWARF zeroed in a copy, its headers and build-id kept: the second
# recording, of the copy, can only name the inline frames from the cache.
cp "$BIN" "$TMP/inline"
zero_dwarf "$TMP/inline"
"$PROFILER" symbolize --no-cache -f -e "$TMP/inline" \
	"$(nm "$TMP/inline" | awk '$3 == "caller_a" { print $1 }')" >"$TMP/wiped" 2>&1
BIN=$TMP/inline
record second
# The workload's own functions only: a sample of the dynamic linker's
# (dl_main) is in one recording or the other, by chance.
own='hot_inline_\[i\]|caller_a|caller_b|main'
mine=$(frames "$TMP/first.folded" | grep -xE "$own" | paste -s -d ' ')
again=$(frames "$TMP/second.folded" | grep -xE "$own" | paste -s -d ' ')
if [[ -n $mine && $mine == "$again" ]] && grep -q 'hot_inline_\[i\]' "$TMP/second.folded" &&
	grep -q '^??:0$' "$TMP/wiped"; then
	ok "record cache: the second names the same functions, from the cache ($again)"
else
	fail "record cache: the second recording ($again; first: $mine)"
	sed 's/^/#   /' "$TMP/second.err"
fi
