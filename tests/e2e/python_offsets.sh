# SPDX-License-Identifier: GPL-2.0-only
# collector/python_offsets.c against each CPython's own headers: compiled
# against the headers of every release on the machine (Debian's
# python3.11-dev and each pyenv build), tools/python-offsets.c must print
# that release's entry of the table as it is written there.
. "$(dirname "$0")/lib.sh"

ROOT=$(realpath "$(dirname "$0")/../..")
PYENV_ROOT=${PYENV_ROOT:-/root/.pyenv}

# entry VERSION: the table's entry of release 0xVERSION, a field a line.
entry() {
	awk -v v=".version = $1," '
		$0 ~ /^\t{$/ { n = 0; keep = 0; next }
		index($0, v) { keep = 1 }
		/^\t\t\./ { sub(/ *\/\*.*\*\//, ""); lines[++n] = $0 }
		/^\t},?$/ && keep { for (i = 1; i <= n; i++) print lines[i]; exit }' \
		"$ROOT/collector/python_offsets.c"
}

# check_headers NAME CFLAGS...: compile against these headers and compare.
check_headers() {
	local name=$1 version want
	shift
	if ! gcc "$@" "$ROOT/tools/python-offsets.c" -o "$TMP/offsets" 2>"$TMP/cc.err"; then
		fail "Python offsets: $name: tools/python-offsets.c does not compile"
		sed 's/^/#   /' "$TMP/cc.err"
		return
	fi
	"$TMP/offsets" | sed 's/ *$//' >"$TMP/got"
	version=$(sed -nE 's/^\t\t\.version = (0x[0-9a-f]+),$/\1/p' "$TMP/got")
	entry "$version" >"$TMP/want"
	if [[ -s $TMP/want ]] && diff -u "$TMP/want" "$TMP/got" >"$TMP/diff"; then
		ok "Python offsets: $name: the table's entry $version is the headers' ($(wc -l <"$TMP/got") fields)"
	else
		fail "Python offsets: $name: the table's entry ${version:-?} differs from the headers'"
		sed 's/^/#   /' "$TMP/diff"
	fi
}

if [[ -f /usr/include/python3.11/internal/pycore_frame.h ]]; then
	check_headers "Debian's python3.11-dev" -I/usr/include/python3.11 \
		-I/usr/include/x86_64-linux-gnu/python3.11
else
	missing "no /usr/include/python3.11 (tools/install-deps installs python3.11-dev)" \
		"Python offsets: Debian's python3.11-dev"
fi
for v in 3.10 3.11 3.12 3.13; do
	for inc in "$PYENV_ROOT"/versions/"$v".*/include/python"$v"; do
		[[ -d $inc ]] && check_headers "pyenv $(basename "$(dirname "$(dirname "$inc")")")" -I"$inc"
	done
done
