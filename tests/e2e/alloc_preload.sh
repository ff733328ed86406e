# SPDX-License-Identifier: GPL-2.0-only
# Heap profiles of a command through the preloaded sampler (--alloc --
# COMMAND; doc/heap.md): Debian's sqlite3 inserting 100,000 rows, held
# against valgrind's DHAT on the same inserts; the command's children
# sampled the same way, and nothing preloaded into those that are not
# targets; a set-user-ID program probed at its allocator instead, said in
# one line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/heap.bash"

P="preloaded heap sampler"
require_bpf "$P: sqlite3's total bytes within 3% of DHAT's" \
	"$P: sqlite3's ten largest allocation sites as DHAT's" \
	"$P: a child that execs another program is sampled the same way" \
	"$P: --no-inherit: nothing preloaded into the command's children" \
	"$P: a set-user-ID program is probed at its allocator instead"

HEAP=$WORKLOADS/heap_work

# 1. sqlite3: 100,000 indexed inserts in one transaction (about 660 MB in
# 2 million blocks), the same statements under ours and under DHAT.
awk 'BEGIN { x = 12345
	print "CREATE TABLE t(a INTEGER, b TEXT); CREATE INDEX i ON t(b); BEGIN;"
	for (i = 0; i < 100000; i++) {
		x = (x * 1103515245 + 12345) % 2147483648; y = (x * 69069 + 1) % 2147483648
		printf("INSERT INTO t VALUES(%d,'\''%08x%08x'\'');\n", i, x, y) }
	print "COMMIT;" }' >"$TMP/insert.sql"
sqlite=$(command -v sqlite3)
if [[ -z $sqlite ]] || ! command -v valgrind >/dev/null; then
	missing "no sqlite3 or valgrind (tools/install-deps installs them)" \
		"$P: sqlite3's total bytes within 3% of DHAT's" \
		"$P: sqlite3's ten largest allocation sites as DHAT's"
elif ! valgrind --tool=dhat --dhat-out-file="$TMP/vg.dhat.json" "$sqlite" "$TMP/vg.db" \
	".read $TMP/insert.sql" >/dev/null 2>"$TMP/vg.err"; then
	fail "$P: sqlite3 under valgrind's DHAT failed"
	sed 's/^/#   /' "$TMP/vg.err"
elif ! "$PROFILER" -v --alloc -o "$TMP/sqlite.dhat.json" -- "$sqlite" "$TMP/ours.db" \
	".read $TMP/insert.sql" >/dev/null 2>"$TMP/sqlite.err"; then
	fail "$P: sqlite3 under --alloc failed"
	sed 's/^/#   /' "$TMP/sqlite.err"
else
	cmp=$(python3 "$(dirname "$0")/dhat_compare.py" "$TMP/sqlite.dhat.json" "$TMP/vg.dhat.json" \
		524288 10 6)
	sites_ok=$?
	pc=$(sed -n 's/^total bytes: .*(\([-+0-9.]*\)%)$/\1/p' <<<"$cmp")
	# The sampler, not the allocator's probes, took them.
	if ! grep -q 'runs with .*libprofiler-heap.so preloaded' "$TMP/sqlite.err"; then
		fail "$P: sqlite3 was not run with the sampler preloaded"
		sed 's/^/#   /' "$TMP/sqlite.err"
	elif within "$pc" 0 3; then
		ok "$P: sqlite3's total bytes within 3% of DHAT's ($(head -1 <<<"$cmp"))"
	else
		fail "$P: sqlite3's total bytes within 3% of DHAT's ($(head -1 <<<"$cmp"))"
	fi
	if [[ $sites_ok -eq 0 && $(grep -c '^ok ' <<<"$cmp") -eq 10 ]]; then
		ok "$P: sqlite3's ten largest allocation sites as DHAT's, each within its tolerance ($(sed -n 2p <<<"$cmp" | cut -c1-60)...)"
	else
		fail "$P: sqlite3's ten largest allocation sites as DHAT's"
		sed 's/^/#   /' <<<"$cmp"
	fi
fi

# 2. A child that execs another program: sh runs heap_work, which allocates
# 8 GiB in blocks of 8 to 64 KiB. It has the sampler (the malloc its sites
# call is the sampler's, heap.c, in the DHAT file), and its sites are
# sampled as the command's own are.
if "$PROFILER" --alloc -o "$TMP/child.pb.gz" -o "$TMP/child.dhat.json" -- \
	sh -c "'$HEAP' big 8; true" >"$TMP/child.out" 2>"$TMP/child.err"; then
	want=$(printed "$TMP/child.out" site70 | awk '{ print $1 }')
	got=$(pprof_site "$TMP/child.pb.gz" site70 | awk '{ print $2 }')
	pc=$(awk -v g="$got" -v w="$want" 'BEGIN { if (w > 0) printf "%.2f", 100 * (g - w) / w }')
	read -r sampler all < <(python3 - "$TMP/child.dhat.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
stacks = [[d["ftbl"][i] for i in pp["fs"]] for pp in d["pps"]]
site70 = [s for s in stacks if len(s) > 1 and ": site70 (" in s[1]]
print(sum(": malloc (heap.c:" in s[0] for s in site70), len(site70))
PY
	)
	if [[ -n $want ]] && within "$pc" 0 5 && [[ ${all:-0} -gt 0 && $sampler -eq $all ]]; then
		ok "$P: a child that execs another program is sampled the same way (site70's bytes $got, $pc% from the $want it allocated; $sampler of $all stacks through the sampler's malloc)"
	else
		fail "$P: a child that execs another program: site70's bytes '$got' of '$want' ($pc%), $sampler of $all stacks through the sampler's malloc"
		sed 's/^/#   /' "$TMP/child.err"
	fi
else
	fail "$P: a child that execs another program: the profiler failed"
	sed 's/^/#   /' "$TMP/child.err"
fi

# 3. The command's children are targets unless --no-inherit: then none of
# them has the sampler in its environment or its memory. Each grep is a
# child of sh, looking at itself.
look='grep -q libprofiler-heap /proc/self/maps && echo 1 || echo 0
grep -qz "^LD_PRELOAD=.*libprofiler-heap" /proc/self/environ && echo 1 || echo 0'
"$PROFILER" --alloc -o "$TMP/inherit.pb.gz" -- sh -c "$look" >"$TMP/inherit.out" 2>"$TMP/inherit.err"
"$PROFILER" --alloc --no-inherit -o "$TMP/alone.pb.gz" -- sh -c "$look" >"$TMP/alone.out" \
	2>"$TMP/alone.err"
inherit=$(paste -s -d ' ' "$TMP/inherit.out") alone=$(paste -s -d ' ' "$TMP/alone.out")
if [[ $inherit == "1 1" && $alone == "0 0" ]]; then
	ok "$P: --no-inherit: nothing preloaded into the command's children (mapped, in LD_PRELOAD: '$alone'; without --no-inherit '$inherit')"
else
	fail "$P: --no-inherit: the children had the sampler mapped and in LD_PRELOAD '$alone' (without --no-inherit '$inherit', expected '1 1')"
	cat "$TMP/inherit.err" "$TMP/alone.err" | sed 's/^/#   /'
fi

# 4. A set-user-ID program: the dynamic linker preloads nothing into it, so
# its allocator is probed, said once, and its sites are as exact as before.
cp "$HEAP" "$TMP/heap_suid" && chmod 4755 "$TMP/heap_suid"
if "$PROFILER" --alloc=1 -o "$TMP/suid.pb.gz" -o "$TMP/suid.folded" -- "$TMP/heap_suid" sites 2000 \
	>"$TMP/suid.out" 2>"$TMP/suid.err"; then
	want=$(printed "$TMP/suid.out" site70 | awk '{ print $2 }')
	got=$(pprof_site "$TMP/suid.pb.gz" site70 | awk '{ print $1 }')
	said=$(grep -c "set-user-ID.*its allocator is probed instead" "$TMP/suid.err")
	if [[ $said -eq 1 && -n $want && $got == "$want" ]] && ! grep -q 'heap\.c:' "$TMP/suid.folded"; then
		ok "$P: a set-user-ID program is probed at its allocator instead, said once ($(grep 'set-user-ID' "$TMP/suid.err"); site70 $got blocks, as it counted)"
	else
		fail "$P: a set-user-ID program: said $said times, site70 '$got' blocks of '$want'"
		sed 's/^/#   /' "$TMP/suid.err"
	fi
else
	fail "$P: a set-user-ID program: the profiler failed"
	sed 's/^/#   /' "$TMP/suid.err"
fi
