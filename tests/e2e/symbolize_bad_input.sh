# SPDX-License-Identifier: GPL-2.0-only
# `profiler symbolize` on bad input: files it cannot use get one line naming
# the cause and exit 1; bad addresses and broken debug information get
# addr2line's "??" answers. Never a crash, never a hang. Needs no root.
. "$(dirname "$0")/lib.sh"

[[ -x $PROFILER ]] || { skip "symbolize bad input" "$PROFILER is not built"; exit 0; }
BIN=$OUTPUT/fixtures/symbols-pie
[[ -r $BIN ]] || { fail "symbolize bad input: fixture $BIN is not built"; exit 0; }

# An address of the fixture's fixture_alpha(), which has DWARF.
alpha=$(nm "$BIN" | awk '$3 == "fixture_alpha" { print "0x" $1 }')

# symbolize ARGS...: run it with a time limit; stdout, stderr and status in $TMP.
symbolize() {
	timeout 60 "$PROFILER" symbolize "$@" >"$TMP/stdout" 2>"$TMP/stderr"
	rc=$?
}

# Files it cannot use: exit 1, one line on stderr naming the file and why.
refused() {
	local name=$1 pattern=$2
	shift 2
	symbolize "$@" "$alpha"
	if [[ $rc -eq 1 && $(wc -l <"$TMP/stderr") -eq 1 && ! -s $TMP/stdout ]] &&
		grep -qE "$pattern" "$TMP/stderr"; then
		ok "symbolize bad input: $name (exit 1: $(cat "$TMP/stderr"))"
	else
		fail "symbolize bad input: $name (exit $rc, expected 1 and /$pattern/)"
		sed 's/^/#   /' "$TMP/stderr" "$TMP/stdout"
	fi
}

refused "missing file" "cannot read '$TMP/none': No such file or directory" -e "$TMP/none"
echo "not an ELF file" >"$TMP/text"
refused "not ELF" "cannot read '$TMP/text': not an ELF file" -e "$TMP/text"
head -c 4000 "$BIN" >"$TMP/truncated"
refused "ELF file cut short" "cannot read '$TMP/truncated': .*truncated" -e "$TMP/truncated"
refused "a directory" "cannot read '$TMP'" -e "$TMP"
if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null; then
	cp "$BIN" "$TMP/private" && chmod 0600 "$TMP/private" && chmod 0755 "$TMP"
	rc=0
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$PROFILER" symbolize -e "$TMP/private" "$alpha" >"$TMP/stdout" 2>"$TMP/stderr" || rc=$?
	if [[ $rc -eq 1 ]] && grep -q "cannot read '$TMP/private': Permission denied" "$TMP/stderr"; then
		ok "symbolize bad input: unreadable file (exit 1: $(cat "$TMP/stderr"))"
	else
		fail "symbolize bad input: unreadable file (exit $rc)"
		sed 's/^/#   /' "$TMP/stderr"
	fi
fi
symbolize -e "$BIN" --bogus "$alpha"
check "symbolize bad input: unknown option exits 2 ($(cat "$TMP/stderr"))" test "$rc" -eq 2

# Addresses outside any section, and garbage on stdin: one "??" answer
# each (and the address line of -a), in order, exit 0.
printf '%s\n' 0 0xffffffffffff0000 hello '' 0xZZ 12345678901234567890 "$alpha" \
	"$(head -c 6000 /dev/zero | tr '\0' 'f')" "$alpha" >"$TMP/in"
printf '\x01\x02\xff\n' >>"$TMP/in"
timeout 60 "$PROFILER" symbolize -a -f -e "$BIN" <"$TMP/in" >"$TMP/stdout" 2>"$TMP/stderr"
rc=$?
answers=$(grep -c '^0x' "$TMP/stdout")
unknown=$(grep -c '^??$' "$TMP/stdout")
named=$(grep -c '^fixture_alpha$' "$TMP/stdout")
check "symbolize bad input: garbage on stdin: 10 answers, 8 '??', 2 named (exit $rc; $answers answers, $unknown '??', $named fixture_alpha)" \
	test "$rc" -eq 0 -a "$answers" -eq 10 -a "$unknown" -eq 8 -a "$named" -eq 2

# Debug information that is missing or broken.
objcopy --only-keep-debug "$BIN" "$TMP/prog.debug"
strip -g "$BIN" -o "$TMP/prog"
objcopy --add-gnu-debuglink="$TMP/prog.debug" "$TMP/prog" "$TMP/prog.linked"
rm "$TMP/prog.debug"
symbolize -f -e "$TMP/prog.linked" "$alpha"
check "symbolize bad input: debug file missing: the function, '??:0' (exit $rc)" \
	test "$rc" -eq 0 -a "$(cat "$TMP/stdout")" = "fixture_alpha"$'\n'"??:0"

# .debug_info and .debug_line overwritten with random bytes, a few seeds:
# whatever comes out, every address gets its answer and nothing crashes.
for seed in 1 2 3 4 5; do
	cp "$BIN" "$TMP/corrupt"
	for sec in .debug_info .debug_line .debug_abbrev; do
		# "[Nr] Name Type Address Off Size ...": offset and size in hex.
		read -r off size < <(readelf -SW "$TMP/corrupt" |
			awk -v s="$sec" '{ for (i = 1; i < NF; i++) if ($i == s) print $(i + 3), $(i + 4) }')
		[[ -n ${off:-} ]] || continue
		off=$((16#$off)) size=$((16#$size))
		# Keep each section's first unit header bytes, scramble the rest.
		awk -v seed="$seed" -v n=$((size > 16 ? size - 16 : 0)) \
			'BEGIN { srand(seed); for (i = 0; i < n; i++) printf "%c", int(rand() * 255) + 1 }' |
			dd of="$TMP/corrupt" bs=4096 seek=$((off + 16)) oflag=seek_bytes conv=notrunc \
				status=none
	done
	nm "$BIN" | awk '$2 ~ /[tT]/ { print "0x" $1 }' >"$TMP/addrs"
	timeout 60 "$PROFILER" symbolize -a -f -i -e "$TMP/corrupt" <"$TMP/addrs" \
		>"$TMP/stdout" 2>"$TMP/stderr"
	rc=$?
	want=$(wc -l <"$TMP/addrs")
	got=$(grep -c '^0x' "$TMP/stdout")
	check "symbolize bad input: scrambled DWARF (seed $seed): $got of $want answers, exit $rc" \
		test "$rc" -eq 0 -a "$got" -eq "$want"
done
