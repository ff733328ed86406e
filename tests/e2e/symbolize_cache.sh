# SPDX-License-Identifier: GPL-2.0-only
# `profiler symbolize` and its cache of answers (symbolize/symcache.h): the
# first run writes BUILD-ID.sym under $XDG_CACHE_HOME/profiler, the second
# answers from it (the same output, even once the file's own DWARF is wiped),
# every address of three files answers as without the cache, --no-cache
# writes nothing, a corrupt, truncated, foreign or untrusted cache file is
# ignored with one line, the answers still right, and a file another user
# owns is not cached. Needs no root, but checks files of another owner only
# as root.
. "$(dirname "$0")/lib.sh"

[[ -x $PROFILER ]] || { skip "symbolize cache" "$PROFILER is not built"; exit 0; }
BIN=$OUTPUT/fixtures/symbols-pie
[[ -r $BIN ]] || { fail "symbolize cache: fixture $BIN is not built"; exit 0; }

# Root takes XDG_CACHE_HOME only from a directory of its own that no one else may write.
export XDG_CACHE_HOME=$TMP/xdg
mkdir -m 0700 "$XDG_CACHE_HOME"
CACHE=$XDG_CACHE_HOME/profiler

# Every function of the fixture, and a few bytes into each.
nm "$BIN" | awk 'NF == 3 && $2 ~ /^[tT]$/ { print "0x" $1 }' >"$TMP/addrs"
while read -r a; do printf '0x%x\n' $((a + 5)); done <"$TMP/addrs" >"$TMP/more"
cat "$TMP/more" >>"$TMP/addrs"

# run NAME FILE ARGS...: symbolize $TMP/addrs (or $ADDRS) in FILE into $TMP/NAME.out and .err.
run() {
	local name=$1 file=$2
	shift 2
	timeout 300 "$PROFILER" symbolize -e "$file" -afiC "$@" <"${ADDRS:-$TMP/addrs}" \
		>"$TMP/$name.out" 2>"$TMP/$name.err"
}

# The truth: no cache, and it must name fixture functions and lines.
run nocache "$BIN" --no-cache
if [[ $? -eq 0 ]] && grep -q "fixture_alpha" "$TMP/nocache.out" &&
	grep -qE "symbols\.c:[1-9]" "$TMP/nocache.out"; then
	if [[ ! -e $CACHE ]]; then
		ok "symbolize cache: --no-cache writes nothing"
	else
		fail "symbolize cache: --no-cache wrote $(ls -R "$CACHE")"
	fi
else
	fail "symbolize cache: --no-cache gives no functions and lines"
	sed 's/^/#   /' "$TMP/nocache.err"
fi

# The first run: the same answers, one cache file named by the build-id.
cp "$BIN" "$TMP/copy"
id=$(readelf -n "$BIN" | awk '/Build ID/ { print $3 }')
FILE=$CACHE/$id.sym
run cold "$TMP/copy"
if cmp -s "$TMP/nocache.out" "$TMP/cold.out" && [[ -n $id && -f $FILE ]] &&
	[[ $(stat -c %a "$FILE") == 600 && $(stat -c %a "$CACHE") == 700 ]] &&
	[[ -z $(find "$CACHE" -name '*.tmp.*') ]]; then
	ok "symbolize cache: the first run answers the same and writes $id.sym (0600, in a 0700 directory)"
else
	fail "symbolize cache: first run (diff, or no $FILE of mode 600)"
	diff "$TMP/nocache.out" "$TMP/cold.out" | head -5 | sed 's/^/#   /'
	ls -la "$CACHE" 2>&1 | sed 's/^/#   /'
fi

# Wipe the copy's .debug_info and .debug_line (the build-id stays): without the
# cache it loses its lines, with it the answers are as before.
zero_dwarf "$TMP/copy"
run wiped "$TMP/copy" --no-cache
run warm "$TMP/copy"
if ! cmp -s "$TMP/nocache.out" "$TMP/wiped.out" && cmp -s "$TMP/nocache.out" "$TMP/warm.out" &&
	[[ ! -s $TMP/warm.err ]]; then
	ok "symbolize cache: the second run answers from the cache, identical"
else
	fail "symbolize cache: second run (wiped DWARF differs: $(cmp -s "$TMP/nocache.out" \
		"$TMP/wiped.out" && echo no || echo yes))"
	diff "$TMP/nocache.out" "$TMP/warm.out" | head -5 | sed 's/^/#   /'
	sed 's/^/#   /' "$TMP/warm.err"
fi

# Every address of .text (every third of the profiler's own): the answers of a
# first run, which builds the cache, and of a second, which reads it, are
# those of a run without it. Inline chains, ranges between units, symbols
# without DWARF: whatever the file has.
every_address() {
	local file=$1 step=$2 name
	name=$(basename "$file")
	readelf -SW "$file" | python3 -c '
import re, sys
for line in sys.stdin:
    m = re.match(r"\s*\[\s*\d+\]\s+\.text\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
    if m:
        lo, n = int(m.group(1), 16), int(m.group(2), 16)
        print("\n".join("0x%x" % a for a in range(lo, lo + n, int(sys.argv[1]))))
' "$step" >"$TMP/$name.addrs"
	ADDRS=$TMP/$name.addrs run "$name.none" "$file" --no-cache
	ADDRS=$TMP/$name.addrs run "$name.first" "$file"
	# The second run is one from the cache: the first wrote it.
	local n lines id
	id=$(readelf -n "$file" | awk '/Build ID/ { print $3 }')
	[[ -n $id && -s $CACHE/$id.sym ]] || fail "symbolize cache: no cache file for $name after a first run"
	ADDRS=$TMP/$name.addrs run "$name.second" "$file"
	n=$(wc -l <"$TMP/$name.addrs")
	lines=$(grep -c ':[1-9]' "$TMP/$name.none.out")
	if ((n > 100 && lines > 0)) && [[ -s $CACHE/$id.sym ]] &&
		cmp -s "$TMP/$name.none.out" "$TMP/$name.first.out" &&
		cmp -s "$TMP/$name.none.out" "$TMP/$name.second.out" && [[ ! -s $TMP/$name.second.err ]]; then
		ok "symbolize cache: $n addresses of $name ($lines lines with a line number) answer as without the cache, first and second run"
	else
		fail "symbolize cache: $n addresses of $name, with the cache ($lines lines with a line number)"
		diff "$TMP/$name.none.out" "$TMP/$name.first.out" | head -6 | sed 's/^/#   first: /'
		diff "$TMP/$name.none.out" "$TMP/$name.second.out" | head -6 | sed 's/^/#   second: /'
		head -3 "$TMP/$name.second.err" | sed 's/^/#   /'
	fi
}
every_address "$BIN" 1
every_address "$WORKLOADS/inline" 1
every_address "$PROFILER" 3

# ignored NAME PATTERN: the cache file as it is now is ignored with one line matching
# PATTERN, and the answers (from the intact file's DWARF) are right.
ignored() {
	local name=$1 pattern=$2
	run "$name" "$BIN"
	if cmp -s "$TMP/nocache.out" "$TMP/$name.out" && [[ $(wc -l <"$TMP/$name.err") -eq 1 ]] &&
		grep -qE "$pattern" "$TMP/$name.err"; then
		ok "symbolize cache: $name cache file ignored ($(cat "$TMP/$name.err"))"
	else
		fail "symbolize cache: $name cache file (expected one line /$pattern/, same output)"
		sed 's/^/#   /' "$TMP/$name.err"
	fi
}

size=$(stat -c %s "$FILE")
printf '\xff\xff\xff\xff' | dd of="$FILE" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
ignored corrupt "ignoring cache file '$FILE': corrupt"
# That run wrote it whole again: the next one is quiet.
run rewritten "$BIN"
if cmp -s "$TMP/nocache.out" "$TMP/rewritten.out" && [[ ! -s $TMP/rewritten.err ]]; then
	ok "symbolize cache: a corrupt file is written anew by the run that ignored it"
else
	fail "symbolize cache: the run after a corrupt file"
	sed 's/^/#   /' "$TMP/rewritten.err"
fi
truncate -s $((size / 3)) "$FILE"
ignored truncated "ignoring cache file '$FILE': (truncated|corrupt)"
cp "$FILE" "$TMP/good.sym"
chmod 0666 "$FILE"
ignored world-writable "ignoring cache file '$FILE': not a regular file of ours"
rm -f "$FILE"
ln -s "$TMP/good.sym" "$FILE"
ignored symlink "ignoring cache file '$FILE'"
rm -f "$FILE"
# Another build-id's file under this one's name.
other=$(ls "$CACHE"/*.sym | grep -v "/$id.sym" | head -1)
if [[ -n $other ]]; then
	cp "$other" "$FILE"
	ignored foreign-build-id "ignoring cache file '$FILE': another build-id"
else
	fail "symbolize cache: no other cache file to pass off as $id.sym"
fi
if [[ $(id -u) -eq 0 ]]; then
	cp "$TMP/good.sym" "$FILE"
	chown 65534 "$FILE"
	ignored other-owner "ignoring cache file '$FILE': not a regular file of ours"
	if [[ $(stat -c %u "$FILE") == 65534 ]]; then
		ok "symbolize cache: a file of another owner is left as it is"
	else
		fail "symbolize cache: the file of another owner was replaced"
	fi
else
	skip "symbolize cache: a file of another owner" "needs root to chown"
fi

# A file that neither root nor we own is not cached: its build-id could be
# another file's. (As root: another user's file.)
if [[ $(id -u) -eq 0 ]]; then
	cp "$BIN" "$TMP/theirs"
	chown 65534 "$TMP/theirs"
	rm -rf "$CACHE"
	run theirs "$TMP/theirs"
	if cmp -s "$TMP/nocache.out" "$TMP/theirs.out" && [[ ! -e $CACHE ]]; then
		ok "symbolize cache: a file of another user answers the same and is not cached"
	else
		fail "symbolize cache: a file of another user ($(ls "$CACHE" 2>&1))"
	fi
else
	skip "symbolize cache: a file of another user" "needs root to chown"
fi

# A cache directory others may write is not used: one line, the same answers.
rm -rf "$CACHE"
mkdir -m 0777 "$CACHE"
run open-dir "$BIN"
if cmp -s "$TMP/nocache.out" "$TMP/open-dir.out" && [[ $(wc -l <"$TMP/open-dir.err") -eq 1 ]] &&
	grep -q "not using cache directory '$CACHE'" "$TMP/open-dir.err" &&
	[[ -z $(ls -A "$CACHE") ]]; then
	ok "symbolize cache: a cache directory others may write is not used ($(cat "$TMP/open-dir.err"))"
else
	fail "symbolize cache: a cache directory others may write ($(ls -A "$CACHE"))"
	sed 's/^/#   /' "$TMP/open-dir.err"
fi
if [[ $(id -u) -eq 0 ]]; then
	# Root takes no XDG_CACHE_HOME of another's: its own /var/cache/profiler instead.
	mkdir -m 0700 "$TMP/users"
	chown 65534 "$TMP/users"
	XDG_CACHE_HOME=$TMP/users run root-xdg "$BIN"
	if cmp -s "$TMP/nocache.out" "$TMP/root-xdg.out" && [[ -z $(ls -A "$TMP/users") ]]; then
		ok "symbolize cache: root writes nothing under another user's XDG_CACHE_HOME"
	else
		fail "symbolize cache: root and another user's XDG_CACHE_HOME ($(ls -A "$TMP/users"))"
	fi
fi
