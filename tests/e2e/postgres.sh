# SPDX-License-Identifier: GPL-2.0-only
# The case command lines are for: a PostgreSQL server, where every backend
# is "postgres" by name. Two clients, alice on database sales and bob on hr,
# run a query each; -p on the postmaster, started before the profiler, takes
# its backends as descendants, and the command lines the backends set
# ("postgres: alice sales [local] SELECT") tell them apart. Skipped where
# Debian's postgresql is not installed.
. "$(dirname "$0")/lib.sh"

TESTS=("postgres: -p on the postmaster takes its backends"
	"postgres: backends told apart by command line")
require_bpf "${TESTS[@]}"

skip_all() {
	for t in "${TESTS[@]}"; do
		skip "$t" "$1"
	done
	exit 0
}

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[[ -n $PGBIN && -x $PGBIN/postgres && -x $PGBIN/initdb && -x $PGBIN/pg_ctl ]] ||
	skip_all "no PostgreSQL under /usr/lib/postgresql (apt-get install postgresql)"
command -v psql >/dev/null && command -v runuser >/dev/null ||
	skip_all "no psql or runuser"

# PostgreSQL will not run as root: the cluster is nobody's, in a directory
# of its own (lib.sh's $TMP is root's alone).
PG=$(mktemp -d /tmp/profiler-pg.XXXXXX)
chown nobody "$PG"
as_nobody() {
	runuser -u nobody -- "$@"
}
stop_pg() {
	as_nobody "$PGBIN/pg_ctl" -D "$PG/data" -m immediate stop >/dev/null 2>&1
	rm -rf "$PG"
	cleanup
}
trap stop_pg EXIT
sql() {
	local user=$1 db=$2
	shift 2
	as_nobody psql -h "$PG" -U "$user" -X -q -v ON_ERROR_STOP=1 "$@" "$db"
}

if ! as_nobody "$PGBIN/initdb" -D "$PG/data" -U postgres -A trust --no-sync >"$TMP/init" 2>&1 ||
	! as_nobody "$PGBIN/pg_ctl" -D "$PG/data" -w -l "$PG/log" \
		-o "-k $PG -c listen_addresses=''" start >>"$TMP/init" 2>&1; then
	for t in "${TESTS[@]}"; do
		fail "$t: cannot start PostgreSQL"
	done
	sed 's/^/#   /' "$TMP/init" "$PG/log" 2>/dev/null
	exit 0
fi
for c in "create user alice" "create user bob" "create database sales owner alice" \
	"create database hr owner bob"; do
	sql postgres postgres -c "$c" >>"$TMP/init" 2>&1
done
postmaster=$(head -n 1 "$PG/data/postmaster.pid")

# Each query counts for 30 s at most; the profiler needs 2.
query="set statement_timeout = '30s'; select count(*) from generate_series(1, 1e10) g where g % 7 = 3"
sql alice sales -c "$query" >/dev/null 2>&1 &
BG_PIDS+=($!)
sql bob hr -c "$query" >/dev/null 2>&1 &
BG_PIDS+=($!)
# Both backends run their query, as their titles say.
for _ in $(seq 100); do
	titles=$(ps --ppid "$postmaster" -o args= | grep -c '\[local\] SELECT')
	[[ $titles -eq 2 ]] && break
	sleep 0.1
done

if ! "$PROFILER" -p "$postmaster" -F 199 -d 2 --root-frame cmdline -o "$TMP/pg.pb.gz" \
	-o "$TMP/pg.folded" 2>"$TMP/err"; then
	for t in "${TESTS[@]}"; do
		fail "$t: profiler failed"
	done
	sed 's/^/#   /' "$TMP/err"
	exit 0
fi

# The postmaster's children at the start: its auxiliary processes and the two backends.
line=$(grep -m1 '^profiler: profiling ' "$TMP/err")
found=$(sed -n 's/.* and its \([0-9]*\) descendants .*/\1/p' <<<"$line")
children=$(ps --ppid "$postmaster" -o pid= | wc -l)
procs=$(tag_values "$TMP/pg.pb.gz" comm | sort -u | paste -sd ' ')
pids=$(tag_count "$TMP/pg.pb.gz" pid)
if [[ $titles -eq 2 && ${found:-0} -ge 2 && ${found:-0} -ge $((children - 2)) &&
	$procs == postgres && $pids -ge 2 ]]; then
	ok "postgres: -p on the postmaster takes its backends ('${line#profiler: }';" \
		"$pids pids with samples, all '$procs')"
else
	fail "postgres: -p on the postmaster takes its backends ('$line'; $titles backends" \
		"running their query; $children children now; processes '$procs' in $pids pids)"
	ps --ppid "$postmaster" -o pid=,args= | sed 's/^/#   /'
fi

# Each backend's share, by its command line, in pprof and as folded's roots.
share() {
	pprof -tags "$TMP/pg.pb.gz" 2>/dev/null |
		awk -v v="$1" '$1 == "cmdline:" { t = 1; next } /^ *[a-z_]+: Total/ { t = 0 }
			t { s = $0; sub(/^[^(]*\( */, "", s); p = s; sub(/%.*/, "", p)
			    sub(/^[^)]*\): /, "", s); if (s == v) print p }'
}
root_share() {
	awk -v v="$1" '{ r = $0; sub(/;.*/, "", r); n += $NF; if (r == v) m += $NF }
		END { if (n) printf "%.1f\n", 100 * m / n }' "$TMP/pg.folded"
}
alice=$(share "postgres: alice sales [local] SELECT")
bob=$(share "postgres: bob hr [local] SELECT")
alice_root=$(root_share "postgres: alice sales [local] SELECT")
bob_root=$(root_share "postgres: bob hr [local] SELECT")
if within "${alice:-none}" 50 15 && within "${bob:-none}" 50 15 &&
	within "${alice_root:-none}" "$alice" 1 && within "${bob_root:-none}" "$bob" 1; then
	ok "postgres: backends told apart by command line (alice's $alice%, bob's $bob%;" \
		"folded roots $alice_root% and $bob_root%)"
else
	fail "postgres: backends told apart by command line (alice's ${alice:-no}%, bob's" \
		"${bob:-no}%, expected 50±15 each; folded roots ${alice_root:-no}% and" \
		"${bob_root:-no}%)"
	pprof -tags "$TMP/pg.pb.gz" 2>&1 | sed 's/^/#   /'
fi
