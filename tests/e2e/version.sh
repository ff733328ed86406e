# SPDX-License-Identifier: GPL-2.0-only
# --version prints the Makefile's VERSION, with `git describe` from a git
# checkout and nothing more from a tarball; the header that carries it is
# rewritten when the checkout changes, and only then. No BPF is needed.
. "$(dirname "$0")/lib.sh"

[[ -x $PROFILER ]] || { skip "version" "$PROFILER is not built"; exit 0; }

src=$(cd "$(dirname "$0")/../.." && pwd)
version=$(sed -n 's/^VERSION := //p' "$src/Makefile")
[[ -n $version ]] || { fail "version: the Makefile has no 'VERSION := ...' line"; exit 0; }

# What the built profiler should say after the version: describe of this
# checkout, "-dirty" or not (the tree may have changed since the build).
describe=
[[ -e $src/.git ]] && describe=$(git -C "$src" describe --always 2>/dev/null)
for opt in --version -V; do
	out=$("$PROFILER" "$opt" 2>"$TMP/err")
	rc=$?
	if [[ -n $describe ]]; then
		want="^profiler $version \($describe(-dirty)?\)\$"
	else
		want="^profiler $version\$"
	fi
	if [[ $rc -eq 0 && $(wc -l <<<"$out") -eq 1 && $out =~ $want && ! -s $TMP/err ]]; then
		ok "version: $opt prints the Makefile's version ($out)"
	else
		fail "version: $opt prints the Makefile's version (exit $rc, '$out', want /$want/)"
		sed 's/^/#   /' "$TMP/err"
	fi
done

# --version wins over a usage error later on the line, as --help does.
out=$("$PROFILER" --version --bogus 2>/dev/null)
check "version: --version with other options still exits 0 ($out)" \
	test "${out%% (*}" = "profiler $version"

# --- the version header, in a tree without .git and in a fresh checkout ----------------

if [[ -z $describe ]]; then
	skip "version: a tarball says no git describe" "not a git checkout: no tree to archive"
	skip "version: a new commit or a dirty tree rewrites the header" "not a git checkout"
	exit 0
fi
tree=$TMP/tree
mkdir -p "$tree"
# The tracked files as they are now, as a release tarball would hold them.
git -C "$src" ls-files -z | tar -C "$src" --null -T - -c | tar -x -C "$tree"
header() {
	make -s -C "$tree" OUTPUT=build build/version.h >"$TMP/make.out" 2>&1 &&
		cat "$tree/build/version.h"
}
got=$(header)
# ... and says nothing else either: no complaint from git.
check "version: a tarball says no git describe ($got)" \
	test "$got" = "#define PROFILER_VERSION \"$version\"" -a -z "$(grep -v ' GEN ' "$TMP/make.out")"

git_() { git -C "$tree" -c user.name=test -c user.email=test@example.invalid "$@"; }
git_ init -q && git_ add -A && git_ commit -qm "the tree"
id=$(git_ describe --always)
first=$(header)
stamp=$(stat -c %y "$tree/build/version.h")
again=$(header)
unchanged=$([[ $(stat -c %y "$tree/build/version.h") == "$stamp" ]] && echo yes || echo no)
echo "/* changed */" >>"$tree/cli/main.c"
dirty=$(header)
git_ commit -qam "a change"
id2=$(git_ describe --always)
committed=$(header)
if [[ $first == "#define PROFILER_VERSION \"$version ($id)\"" && $again == "$first" &&
	$unchanged == yes && $dirty == "#define PROFILER_VERSION \"$version ($id-dirty)\"" &&
	$committed == "#define PROFILER_VERSION \"$version ($id2)\"" && $id2 != "$id" ]]; then
	ok "version: a new commit or a dirty tree rewrites the header, nothing else does ($first; $dirty; $committed)"
else
	fail "version: a new commit or a dirty tree rewrites the header, nothing else does"
	printf '#   %s\n' "first: $first" "again: $again (file unchanged: $unchanged)" \
		"dirty: $dirty" "committed: $committed (ids $id, $id2)"
fi
