# SPDX-License-Identifier: GPL-2.0-only
# Processes of one program told apart by their command lines, as
# PostgreSQL's backends are: two split processes, both "split" by name,
# whose argv[0] bash sets (exec -a), with opposite shares of hot_a and
# hot_b. The command line is a pprof label, the Firefox process name, and
# with --root-frame cmdline the root of folded stacks; a command that
# exec's is shown by the command line it exec'd.
. "$(dirname "$0")/lib.sh"

TESTS=("cmdline: pprof label" "cmdline: Firefox process name" "cmdline: folded root frame"
	"cmdline: read again after exec")
require_bpf "${TESTS[@]}"

ALICE="postgres: alice sales [local] SELECT"
BOB="postgres: bob hr [local] idle"
start_bg bash -c 'exec -a "$1" "$0" 70 30 30' "$WORKLOADS/split" "$ALICE"
alice=$BG_PID
start_bg bash -c 'exec -a "$1" "$0" 30 70 30' "$WORKLOADS/split" "$BOB"
bob=$BG_PID
# Both have exec'd once their command lines read so.
for _ in $(seq 50); do
	[[ $(head -c 8 "/proc/$alice/cmdline" 2>/dev/null) == postgres &&
		$(head -c 8 "/proc/$bob/cmdline" 2>/dev/null) == postgres ]] && break
	sleep 0.1
done

if ! "$PROFILER" -p "$alice,$bob" -F 199 -d 2 --root-frame cmdline -o "$TMP/pg.pb.gz" \
	-o "$TMP/pg.json" -o "$TMP/pg.folded" 2>"$TMP/err"; then
	for t in "${TESTS[@]:0:3}"; do
		fail "$t: profiler failed"
	done
	sed 's/^/#   /' "$TMP/err"
else
	# Both processes are "split" to the comm label; the cmdline label
	# tells them apart, and each has its own share of hot_a.
	values=$(tag_values "$TMP/pg.pb.gz" cmdline | sort | paste -sd '|')
	procs=$(tag_values "$TMP/pg.pb.gz" comm | sort -u | paste -sd ' ')
	a_hot=$(pct "$TMP/pg.pb.gz" hot_a cum -tagfocus="cmdline=alice")
	b_hot=$(pct "$TMP/pg.pb.gz" hot_a cum -tagfocus="cmdline=bob")
	if [[ $values == "$ALICE 70 30 30|$BOB 30 70 30" && $procs == split ]] &&
		within "$a_hot" 70 10 && within "$b_hot" 30 10; then
		ok "cmdline: pprof label (comm label '$procs'; hot_a $a_hot% of alice's," \
			"$b_hot% of bob's)"
	else
		fail "cmdline: pprof label (values '$values', comm labels '$procs';" \
			"hot_a $a_hot% of alice's, $b_hot% of bob's, expected 70 and 30±10)"
		pprof -tags "$TMP/pg.pb.gz" 2>&1 | sed 's/^/#   /'
	fi

	# The thread keeps the short name; the process is named by its command line.
	names=$(node -e '
		const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		console.log(p.threads.map(t => t.pid + " " + t.name + " in " + t.processName)
			.sort().join("|"))' "$TMP/pg.json" 2>&1)
	want=$(printf '%s\n' "$alice split in $ALICE 70 30 30" "$bob split in $BOB 30 70 30" |
		sort | paste -sd '|')
	check "cmdline: Firefox process name ($names)" test "$names" = "$want"

	# Rooted at command lines, each process's stacks are its own (spaces
	# kept, but not before the trailing number, which would read as a count).
	roots=$(awk '{ root = $0; sub(/;.*/, "", root); n[root] += $NF
			if ($0 ~ /;hot_a/) hot[root] += $NF }
		END { for (r in n) printf "%s=%.0f\n", r, 100 * hot[r] / n[r] }' \
		"$TMP/pg.folded" | sort | paste -sd '|')
	a_root=$(tr '|' '\n' <<<"$roots" | awk -F= -v r="$ALICE 70 30_30" '$1 == r { print $2 }')
	b_root=$(tr '|' '\n' <<<"$roots" | awk -F= -v r="$BOB 30 70_30" '$1 == r { print $2 }')
	if [[ $(tr '|' '\n' <<<"$roots" | wc -l) -eq 2 ]] && within "$a_root" 70 10 &&
		within "$b_root" 30 10; then
		ok "cmdline: folded root frame (hot_a by root: $roots)"
	else
		fail "cmdline: folded root frame (hot_a by root: $roots; expected two roots," \
			"70 and 30±10)"
		head -n 5 "$TMP/pg.folded" | sed 's/^/#   /'
	fi
fi
kill "$alice" "$bob" 2>/dev/null

# The command is bash until it exec's split under another name: split's
# samples carry the new command line, read at the exec. 3 s, for enough
# samples beside other work to tell 70% within 10 (1 s gave 59.37%).
if "$PROFILER" -F 199 -o "$TMP/exec.pb.gz" -- bash -c 'exec -a "renamed worker" "$0" 70 30 3' \
	"$WORKLOADS/split" 2>"$TMP/err"; then
	share=$(pprof -tags "$TMP/exec.pb.gz" 2>/dev/null |
		awk '$1 == "cmdline:" { t = 1; next } /^ *[a-z_]+: Total/ { t = 0 }
			t && /%\): renamed worker 70 30 3$/ { sub(/^[^(]*\( */, ""); sub(/%.*/, ""); print }')
	hot=$(pct "$TMP/exec.pb.gz" hot_a cum -tagfocus="cmdline=^renamed worker 70 30 3$")
	if within "${share:-none}" 100 5 && within "$hot" 70 10; then
		ok "cmdline: read again after exec ('renamed worker 70 30 3' on $share% of samples," \
			"hot_a on $hot% of those)"
	else
		fail "cmdline: read again after exec ('renamed worker 70 30 3' on ${share:-no}%" \
			"of samples, expected 100±5; hot_a on $hot% of those, expected 70±10)"
		pprof -tags "$TMP/exec.pb.gz" 2>&1 | sed 's/^/#   /'
	fi
else
	fail "cmdline: read again after exec: profiler failed"
	sed 's/^/#   /' "$TMP/err"
fi
