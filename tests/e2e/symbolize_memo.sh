# SPDX-License-Identifier: GPL-2.0-only
# `profiler symbolize --memo-size`: the memo of recent answers is bounded,
# and a bound so small that it forgets answers all the time (or none at
# all) changes nothing in the output: each address, asked again after its
# answer was forgotten, gets the same answer. Needs no root.
. "$(dirname "$0")/lib.sh"

[[ -x $PROFILER ]] || { skip "symbolize memo" "$PROFILER is not built"; exit 0; }
BIN=$OUTPUT/fixtures/symbols-pie
[[ -r $BIN ]] || { fail "symbolize memo: fixture $BIN is not built"; exit 0; }

# Every 3rd byte of the fixture's functions, three times over in three
# orders (sorted, reversed, interleaved), as a profile asks for its
# addresses again and again, and a line that is not an address.
nm -S --defined-only "$BIN" | while read -r start size type name; do
	[[ $type == [tT] ]] || continue
	for ((a = 16#$start; a < 16#$start + 16#$size; a += 3)); do
		printf '0x%x\n' "$a"
	done
done >"$TMP/distinct"
{
	cat "$TMP/distinct"
	tac "$TMP/distinct"
	echo "not an address"
	paste -d '\n' "$TMP/distinct" <(tac "$TMP/distinct")
} >"$TMP/addrs"

symbolize() { timeout 60 "$PROFILER" symbolize -afiC -e "$BIN" "$@" <"$TMP/addrs"; }

ndistinct=$(wc -l <"$TMP/distinct")
if ! symbolize >"$TMP/default" 2>"$TMP/err"; then
	fail "symbolize memo: the default run failed: $(head -n 1 "$TMP/err")"
	exit 0
fi
# Preconditions: one answer per line asked, a function for each address
# (the line that is not one gets "??"), and answers
# of the distinct addresses far more than 1 KiB, so a 1K memo must forget.
nanswers=$(grep -c '^0x' "$TMP/default")
nunnamed=$(awk '/^0x/ { getline f; n += f == "??" } END { print n + 0 }' "$TMP/default")
distinct_bytes=$(head -n "$(grep -n -m 1 "^0x$(printf %016x "$(tail -n 1 "$TMP/distinct")")$" \
	"$TMP/default" | cut -d: -f1)" "$TMP/default" | wc -c)
if [[ $nanswers -ne $(wc -l <"$TMP/addrs") || $nunnamed -ne 1 || $ndistinct -lt 100 ||
	$distinct_bytes -lt 16384 ]]; then
	fail "symbolize memo: preconditions ($nanswers answers for $(wc -l <"$TMP/addrs") lines," \
		"$nunnamed without a function, $distinct_bytes bytes of distinct answers)"
	exit 0
fi
ok "symbolize memo: $nanswers answers, $ndistinct distinct addresses ($distinct_bytes bytes of answers)"

for size in 1K 0 1; do
	if symbolize --memo-size "$size" >"$TMP/out" 2>"$TMP/err" && [[ ! -s $TMP/err ]] &&
		cmp -s "$TMP/default" "$TMP/out"; then
		ok "symbolize memo: --memo-size $size gives the default's output"
	else
		fail "symbolize memo: --memo-size $size differs from the default"
		diff "$TMP/default" "$TMP/out" | head -n 10 | sed 's/^/#   /'
		sed 's/^/#   /' "$TMP/err"
	fi
done

# A size that is not one: usage error, one line, no output.
timeout 60 "$PROFILER" symbolize --memo-size 12X -e "$BIN" 0x1 >"$TMP/out" 2>"$TMP/err"
rc=$?
if [[ $rc -eq 2 && ! -s $TMP/out && $(wc -l <"$TMP/err") -eq 1 ]] &&
	grep -q "invalid --memo-size '12X'" "$TMP/err"; then
	ok "symbolize memo: a bad size is refused (exit 2: $(cat "$TMP/err"))"
else
	fail "symbolize memo: --memo-size 12X gave exit $rc"
	sed 's/^/#   /' "$TMP/err"
fi
