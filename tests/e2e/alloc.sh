# SPDX-License-Identifier: GPL-2.0-only
# Heap profiles (--alloc): the allocations of tests/workloads/heap_work, which
# prints what each of its call sites allocated and left live, held against
# the profile: exactly with --alloc=1, within 5% when sampled by bytes. Then
# -p on a running process (blocks it allocated before are freed while we
# watch), a child of the command, the live-block map full, and a program
# with no malloc to probe.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/heap.bash"

H="heap profiles"
require_bpf "$H: --alloc=1 against DHAT" "$H: dh_view.html shows our DHAT file" \
	"$H: go tool pprof reads Go's four heap sample types" \
	"$H: --alloc=1: site70" "$H: --alloc=1: site30" "$H: folded stacks of site70" \
	"$H: aligned_alloc, realloc: site_aligned" "$H: aligned_alloc, realloc: site70" \
	"$H: aligned_alloc, realloc: site30" "$H: sampled: site70" "$H: sampled: site30" \
	"$H: -p" "$H: -v: what a malloc and its free cost under the allocator's probes" \
	"$H: a child of the command" "$H: three processes leaking" \
	"$H: anonymous mmap" "$H: a full live-block map" \
	"bad input: --alloc on a static, stripped program" "bad input: --alloc with -a" \
	"bad input: --alloc with --off-cpu" "bad input: --alloc=0" \
	"bad input: a DHAT output without --alloc"

HEAP=$WORKLOADS/heap_work

# The four types, in Go's order: alloc_objects alloc_space inuse_objects inuse_space.
# printed() gives bytes blocks live_blocks live_bytes: reorder to that.
as_pprof() {
	awk '{ print $2, $1, $3, $4 }'
}

# dhat_sites FILE: "SITE tb tbk gb gbk eb ebk" for site70 and site30, each
# the sum over the program points of DHAT file FILE with a frame of SITE.
dhat_sites() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for site in ("site70", "site30"):
    sums = [0] * 6
    for pp in d["pps"]:
        if any(": %s (" % site in d["ftbl"][i] for i in pp["fs"]):
            for k, key in enumerate(("tb", "tbk", "gb", "gbk", "eb", "ebk")):
                sums[k] += pp[key]
    print(site, *sums)
PY
}

# 0. Against valgrind's DHAT on the same deterministic program (alloc_sites):
# per call site, the bytes and blocks allocated, at the heap's peak and at
# the end; and valgrind's own viewer shows our file's totals as DHAT's.
if ! command -v valgrind >/dev/null; then
	missing "no valgrind (tools/install-deps installs it)" "heap profiles: --alloc=1 against DHAT"
elif ! valgrind --tool=dhat --dhat-out-file="$TMP/vg.dhat.json" "$WORKLOADS/alloc_sites" 5 \
	2>"$TMP/vg.err"; then
	fail "heap profiles: --alloc=1 against DHAT: valgrind failed"
	sed 's/^/#   /' "$TMP/vg.err"
elif ! "$PROFILER" --alloc=1 -o "$TMP/ours.dhat.json" -- "$WORKLOADS/alloc_sites" 5 \
	2>"$TMP/ours.err"; then
	fail "heap profiles: --alloc=1 against DHAT: the profiler failed"
	sed 's/^/#   /' "$TMP/ours.err"
else
	theirs=$(dhat_sites "$TMP/vg.dhat.json") ours=$(dhat_sites "$TMP/ours.dhat.json")
	# A precondition: DHAT saw the sites (a broken parse would make both empty).
	if [[ $theirs == *"site70 350000 350 "* && $ours == "$theirs" ]]; then
		ok "heap profiles: --alloc=1 against DHAT: per site, bytes and blocks in all, at t-gmax and at t-end are DHAT's ($(tr '\n' ';' <<<"$ours"))"
	else
		fail "heap profiles: --alloc=1 against DHAT: ours '$ours', DHAT's '$theirs'"
	fi
	vg=$(sed -nE 's/^==[0-9]+== (Total|At t-gmax|At t-end): +([0-9,]+) bytes in ([0-9,]+) blocks$/\2 \3/p' \
		"$TMP/vg.err" | tr -d , | paste -sd ' ')
	if [[ ! -f $OUTPUT/npm/node_modules/playwright-core/package.json || ! -x /usr/bin/chromium ]]; then
		missing "no playwright-core or chromium: run 'make playwright-core' and tools/install-deps" \
			"heap profiles: dh_view.html shows our DHAT file"
	elif OUTPUT=$OUTPUT node "$(dirname "$0")/dh_view.js" "$TMP/ours.dhat.json" \
		--screenshot "$TMP/ours.png" >"$TMP/view" 2>"$TMP/view.err"; then
		view=$(awk '$1 ~ /^(total|t-gmax-total|t-end-total)$/ { printf "%s%s %s", (n++ ? " " : ""), $2, $4 }' \
			"$TMP/view")
		if [[ -n $vg && $view == "$vg" ]]; then
			ok "heap profiles: dh_view.html shows our DHAT file's total, t-gmax and t-end as valgrind's DHAT counted them ($view)"
		else
			fail "heap profiles: dh_view.html shows '$view' for our file; valgrind counted '$vg'"
			sed 's/^/#   /' "$TMP/view"
		fi
	else
		fail "heap profiles: dh_view.html does not load our DHAT file"
		sed 's/^/#   /' "$TMP/view.err"
	fi
fi

# 1. Exact: every allocation, against the program's own count. 60,000
# allocations in a burst: a ring buffer of 64 MiB holds them all, so that a
# drain slowed down (AddressSanitizer's build lost 5,775 of them to the
# default 16 MiB once) does not make the counts inexact; the loss is its own test.
if "$PROFILER" --alloc=1 --ringbuf-size 67108864 -o "$TMP/exact.pb.gz" -o "$TMP/exact.folded" -- \
	"$HEAP" sites 20000 >"$TMP/exact.out" 2>"$TMP/exact.err"; then
	types=$(pprof -raw "$TMP/exact.pb.gz" 2>/dev/null | sed -n '/^Samples:/{n;p;q}')
	if [[ $types == "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes[dflt]" ]]; then
		ok "heap profiles: go tool pprof reads Go's four heap sample types ($types)"
	else
		fail "heap profiles: sample types are '$types'"
	fi
	for site in site70 site30; do
		want=$(printed "$TMP/exact.out" "$site" | as_pprof)
		got=$(pprof_site "$TMP/exact.pb.gz" "$site")
		if [[ -n $want && $got == "$want" ]]; then
			ok "heap profiles: --alloc=1: $site's blocks, bytes, live blocks and live bytes are the program's own count ($got)"
		else
			fail "heap profiles: --alloc=1: $site has '$got', the program counted '$want'"
			sed 's/^/#   /' "$TMP/exact.err"
		fi
	done
	# Folded counts bytes: site70's stacks add up to its bytes.
	want=$(printed "$TMP/exact.out" site70 | awk '{ print $1 }')
	got=$(awk '/;site70;/ { n += $NF } END { print n + 0 }' "$TMP/exact.folded")
	if [[ -n $want && $got == "$want" ]]; then
		ok "heap profiles: folded stacks of site70 add up to its $got bytes"
	else
		fail "heap profiles: folded stacks of site70 add up to $got bytes, not $want"
	fi
else
	fail "heap profiles: --alloc=1 failed"
	sed 's/^/#   /' "$TMP/exact.err"
fi

# 1b. What allocators do besides malloc and free (heap_work quirks): glibc's
# aligned_alloc of a small alignment calls malloc (counted once), a realloc
# that fails keeps its block, realloc(p, 0) frees it.
if "$PROFILER" --alloc=1 -o "$TMP/quirks.pb.gz" -- "$HEAP" quirks >"$TMP/quirks.out" 2>"$TMP/quirks.err"; then
	for site in site_aligned site70 site30; do
		want=$(printed "$TMP/quirks.out" "$site" | as_pprof)
		got=$(pprof_site "$TMP/quirks.pb.gz" "$site")
		if [[ -n $want && $got == "$want" ]] && ! grep -q "not seen allocated" "$TMP/quirks.err"; then
			ok "heap profiles: aligned_alloc, a failed realloc and realloc(p, 0): $site is the program's own count ($got), no free unaccounted"
		else
			fail "heap profiles: aligned_alloc, realloc: $site has '$got', the program counted '$want'"
			sed 's/^/#   /' "$TMP/quirks.err"
		fi
	done
else
	fail "heap profiles: heap_work quirks failed"
	sed 's/^/#   /' "$TMP/quirks.err"
fi

# 2. Sampled by bytes (the default, 512 KiB), over 8 GiB: within 5% a site.
if "$PROFILER" --alloc -o "$TMP/sampled.pb.gz" -- "$HEAP" big 8 \
	>"$TMP/sampled.out" 2>"$TMP/sampled.err"; then
	for site in site70 site30; do
		want=$(printed "$TMP/sampled.out" "$site" | awk '{ print $1 }')
		got=$(pprof_site "$TMP/sampled.pb.gz" "$site" | awk '{ print $2 }')
		pc=$(awk -v g="$got" -v w="$want" 'BEGIN { if (w > 0) printf "%.2f", 100 * (g - w) / w }')
		if [[ -n $want ]] && within "$pc" 0 5; then
			ok "heap profiles: sampled: $site's bytes $got, $pc% from the $want it allocated (within 5%)"
		else
			fail "heap profiles: sampled: $site's bytes '$got', the program allocated '$want' ($pc%)"
			sed 's/^/#   /' "$TMP/sampled.err"
		fi
	done
else
	fail "heap profiles: --alloc failed"
	sed 's/^/#   /' "$TMP/sampled.err"
fi

# 3. -p: a process allocating already, some of whose blocks from before we see freed.
# It runs well past the recording: beside other work the profiler took 2-3 s
# to start (a 3 s run had exited by then once), and is then stopped.
rm -f "$TMP/attach.ready"
start_bg sh -c "exec '$HEAP' attach 10 >'$TMP/attach.out'"
for _ in $(seq 100); do
	grep -q ready "$TMP/attach.out" 2>/dev/null && break
	sleep 0.05
done
if "$PROFILER" --alloc=1 -p "$BG_PID" -d 1 -o "$TMP/attach.pb.gz" 2>"$TMP/attach.err"; then
	got=$(pprof_site "$TMP/attach.pb.gz" site70 | awk '{ print $1 }')
	before=$(pprof_site "$TMP/attach.pb.gz" site_before | awk '{ print $1 }')
	if [[ ${got:-0} -gt 0 && $before == 0 ]]; then
		ok "heap profiles: -p: $got of site70's blocks, none of those allocated before the recording"
	else
		fail "heap profiles: -p: site70 has '$got' blocks, site_before '$before'"
		sed 's/^/#   /' "$TMP/attach.err"
	fi
else
	fail "heap profiles: -p failed"
	sed 's/^/#   /' "$TMP/attach.err"
fi
kill "$BG_PID" 2>/dev/null
wait "$BG_PID" 2>/dev/null

# 3b. What -v says a malloc and its free cost under the allocator's probes
# (as -p places them; --alloc-uprobes for a command), against what 50,000
# of them cost heap_work churn, by its own clock: within a factor of 3 (the
# trap is timed at the start, on a machine maybe busier or quieter later).
"$HEAP" churn 50000 >"$TMP/churn-alone.out"
if "$PROFILER" -v --alloc --alloc-uprobes -o "$TMP/churn.pb.gz" -- "$HEAP" churn 50000 \
	>"$TMP/churn.out" 2>"$TMP/churn.err"; then
	said=$(sed -n 's/.*a malloc and its free about \([0-9.]*\) us.*/\1/p' "$TMP/churn.err")
	alone=$(sed -n 's/^seconds=//p' "$TMP/churn-alone.out")
	probed=$(sed -n 's/^seconds=//p' "$TMP/churn.out")
	pair=$(awk -v p="$probed" -v a="$alone" 'BEGIN { if (p != "") printf "%.1f", (p - a) * 1e6 / 50000 }')
	if [[ -n $said && -n $pair ]] && awk -v s="$said" -v m="$pair" 'BEGIN { exit !(s > 0 && m > 0 && s <= 3 * m && m <= 3 * s) }'; then
		ok "heap profiles: -v: what a malloc and its free cost under the allocator's probes: said $said us, measured $pair us"
	else
		fail "heap profiles: -v: a malloc and its free said to cost '$said' us under the allocator's probes, measured '$pair' us"
		grep 'alloc:' "$TMP/churn.err" | sed 's/^/#   /'
	fi
else
	fail "heap profiles: -v: what a malloc and its free cost: the profiler failed"
	sed 's/^/#   /' "$TMP/churn.err"
fi

# 4. A child of the command, which runs for a second: probed when the
# profiler hears of its fork (its probes hold through its exec of a program
# with the same allocator), so all but its first milliseconds are in.
if "$PROFILER" --alloc=1 -o "$TMP/child.pb.gz" -- sh -c "'$HEAP' attach 1; true" \
	>"$TMP/child.out" 2>"$TMP/child.err"; then
	got=$(pprof_site "$TMP/child.pb.gz" site70 | awk '{ print $1 }')
	want=$(printed "$TMP/child.out" site70 | awk '{ print $2 }')
	if [[ ${want:-0} -gt 0 && ${got:-0} -le $want && $((100 * ${got:-0})) -ge $((90 * want)) ]]; then
		ok "heap profiles: a child of the command: $got of the $want blocks site70 allocated (>= 90%)"
	else
		fail "heap profiles: a child of the command: site70 has '$got' blocks of '$want'"
		sed 's/^/#   /' "$TMP/child.err"
	fi
else
	fail "heap profiles: a child of the command failed"
	sed 's/^/#   /' "$TMP/child.err"
fi

# 4b. Processes that exit with their blocks: three in turn, each leaking 1 MiB.
# Live at the end, for their stacks (as DHAT counts what a program leaks),
# but not live together: the heap's peak is one process's.
if "$PROFILER" --alloc=1 -o "$TMP/leak.pb.gz" -- sh -c \
	"'$HEAP' leak >/dev/null; '$HEAP' leak >/dev/null; '$HEAP' leak >/dev/null" 2>"$TMP/leak.err"; then
	peak=$(sed -nE 's/.*peak live: ([0-9]+) bytes.*/\1/p' "$TMP/leak.err")
	end=$(sed -nE 's/.*live at the end: ([0-9]+) bytes.*/\1/p' "$TMP/leak.err")
	if [[ ${end:-0} -ge $((3 << 20)) && ${peak:-0} -ge $((1 << 20)) && ${peak:-0} -lt $((2 << 20)) ]]; then
		ok "heap profiles: three processes leaking 1 MiB each in turn: live at the end $end bytes, peak $peak"
	else
		fail "heap profiles: three processes leaking 1 MiB in turn: live at the end '$end', peak '$peak'" \
			"(expected >= 3 MiB, and 1 to 2 MiB)"
		sed 's/^/#   /' "$TMP/leak.err"
	fi
else
	fail "heap profiles: three leaking processes: the profiler failed"
	sed 's/^/#   /' "$TMP/leak.err"
fi

# 5. Anonymous mmap, its own kind; glibc's malloc maps a 1 MiB block itself,
# which is a heap block, not also an mmap.
if "$PROFILER" --alloc=1 -o "$TMP/mmap.pb.gz" -- "$HEAP" mmap >"$TMP/mmap.out" 2>"$TMP/mmap.err"; then
	m=$(pprof_site "$TMP/mmap.pb.gz" site_mmap -tagfocus=kind=mmap | awk '{ print $2 }')
	h=$(pprof_site "$TMP/mmap.pb.gz" site70 -tagfocus=kind=heap | awk '{ print $2 }')
	m70=$(pprof_site "$TMP/mmap.pb.gz" site70 -tagfocus=kind=mmap | awk '{ print $2 }')
	if [[ $m == 1048576 && $h == 1048576 && ${m70:-0} == 0 ]]; then
		ok "heap profiles: anonymous mmap is its own kind (site_mmap $m bytes), a large malloc is heap only (site70 $h bytes)"
	else
		fail "heap profiles: kind=mmap under site_mmap '$m', kind=heap under site70 '$h', kind=mmap under site70 '$m70'"
		sed 's/^/#   /' "$TMP/mmap.err"
	fi
else
	fail "heap profiles: the mmap workload failed"
	sed 's/^/#   /' "$TMP/mmap.err"
fi

# 6. Too many live blocks to watch: the ones past the limit are counted, and
# live to the end as far as the profile can tell.
if "$PROFILER" -v --alloc=1 --alloc-max-live 16 -o "$TMP/full.pb.gz" -- "$HEAP" sites 20000 \
	>"$TMP/full.out" 2>"$TMP/full.err"; then
	want=$(printed "$TMP/full.out" site70 | as_pprof | awk '{ print $1, $2 }')
	got=$(pprof_site "$TMP/full.pb.gz" site70 | awk '{ print $1, $2 }')
	untracked=$(summary_count "$TMP/full.err" "frees not watched")
	if [[ -n $want && $got == "$want" && ${untracked:-0} -gt 0 ]]; then
		ok "heap profiles: a full live-block map: allocations still exact ($got), $untracked blocks counted as not watched"
	else
		fail "heap profiles: a full live-block map: site70 '$got' of '$want', '$untracked' not watched"
		sed 's/^/#   /' "$TMP/full.err"
	fi
else
	fail "heap profiles: --alloc-max-live 16 failed"
	sed 's/^/#   /' "$TMP/full.err"
fi

# 7. Nothing to probe: a static, stripped program.
if gcc -static -s -o "$TMP/static" -x c - <<<'#include <stdlib.h>
int main(void) { void *volatile p = malloc(10); free(p); return 0; }' 2>/dev/null; then
	expect "--alloc on a static, stripped program" 1 \
		"cannot profile .*defines no malloc.*nothing for --alloc to probe" \
		--alloc -o x.pb.gz -- "$TMP/static"
else
	missing "no static C library (libc6-dev)" "bad input: --alloc on a static, stripped program"
fi
expect "--alloc with -a" 2 "alloc probes the allocator of given processes" --alloc -a -d 1
expect "--alloc with --off-cpu" 2 "cannot be combined with --off-cpu" --alloc --off-cpu -- true
expect "--alloc=0" 2 "invalid --alloc '0'" --alloc=0 -- true
expect "a DHAT output without --alloc" 2 "DHAT's format \(x.dhat.json\) holds allocations: add --alloc" \
	-o x.dhat.json -- true
