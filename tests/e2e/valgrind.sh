# SPDX-License-Identifier: GPL-2.0-only
# The real profiler under Valgrind's memcheck, end to end: recording a
# command and a running process (BPF loaded, ring buffer drained, maps
# snapshotted, everything symbolized and written in every format), and
# `profiler symbolize` on ELF fixtures (DWARF, a debuglink, MiniDebugInfo).
# Any invalid read or write, use of uninitialised memory or definite leak
# fails; ASan (make asan) sees much of this too, but not reads of
# uninitialised memory, and not in the binary users run.
. "$(dirname "$0")/lib.sh"

names=("valgrind: profiler -- COMMAND, four outputs"
	"valgrind: profiler -p PID -d 2 --off-cpu"
	"valgrind: profiler symbolize")
# ASan's runtime must come first in a process, and valgrind's must be the
# only one: make asan's build is checked by ASan, make test's by valgrind.
if asan_build; then
	echo "# valgrind: not run on a sanitizer build; make test runs it"
	exit 0
fi
require_bpf "${names[@]}"
if ! command -v valgrind >/dev/null; then
	for n in "${names[@]}"; do
		skip "$n" "valgrind is not installed (apt-get install valgrind)"
	done
	exit 0
fi

# Valgrind checks the memory a system call reads by its own idea of the
# call's arguments. Where that idea is wrong, the report is about Valgrind,
# not us; each suppression below is for one such call, and as narrow as the
# report allows.
cat >"$TMP/valgrind.supp" <<'EOF'
# bpf(BPF_MAP_CREATE): libbpf passes a union bpf_attr cut at the last field
# it sets (the kernel takes the size argument); Valgrind 3.19 checks fields
# past that size, which are other commands' (BPF_PROG_LOAD's), as if passed.
{
   libbpf-map-create-attr-size
   Memcheck:Param
   bpf(attr->expected_attach_type)
   fun:syscall
   obj:*/libbpf.so*
   ...
   fun:bpf_map_create
}
{
   libbpf-map-create-attr-size-ifindex
   Memcheck:Param
   bpf(attr->prog_ifindex)
   fun:syscall
   obj:*/libbpf.so*
   ...
   fun:bpf_map_create
}
# bpf(BPF_MAP_GET_NEXT_KEY): a NULL key asks for the first key (collector.c
# walks a map so); Valgrind 3.19 takes it for a key to read, and checks
# attr->flags, which the command does not have (libbpf cuts the attr
# before it, as above).
{
   libbpf-get-next-key-first-key
   Memcheck:Param
   bpf(attr->key)
   fun:syscall
   fun:bpf_map_get_next_key
}
{
   libbpf-get-next-key-attr-size
   Memcheck:Param
   bpf(attr->flags)
   fun:syscall
   fun:bpf_map_get_next_key
}
EOF

VALGRIND=(valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite
	--show-leak-kinds=definite --error-exitcode=97 --suppressions="$TMP/valgrind.supp")

# vg NAME LOG COMMAND...: run COMMAND under memcheck; fail NAME with its report on an error.
vg() {
	local name=$1 log=$2 rc
	shift 2
	"${VALGRIND[@]}" --log-file="$log" "$@"
	rc=$?
	if [[ $rc -eq 97 ]]; then
		fail "$name: memcheck found errors"
		grep -v '^--' "$log" | sed 's/^/#   /' | head -n 80
		return 1
	elif [[ $rc -ne 0 ]]; then
		fail "$name: exit status $rc"
		grep -hv '^--' "$log" "$TMP/stderr" 2>/dev/null | sed 's/^/#   /' | head -n 40
		return 1
	fi
	return 0
}

# Recording a command: the collector, the symbolizer (DWARF of the
# workload, libc's symbols) and all four exporters.
if vg "${names[0]}" "$TMP/cmd.vg" "$PROFILER" -F 199 -o "$TMP/out.pb.gz" -o "$TMP/out.folded" \
	-o "$TMP/out.json.gz" -o "$TMP/out.svg" -- "$WORKLOADS/split" 50 50 1 2>"$TMP/stderr"; then
	if grep -q 'hot_a' "$TMP/out.folded" && [[ -s $TMP/out.pb.gz && -s $TMP/out.json.gz &&
		-s $TMP/out.svg ]]; then
		ok "${names[0]}"
	else
		fail "${names[0]}: the outputs are missing or lack hot_a"
		sed 's/^/#   /' "$TMP/stderr"
	fi
fi

# A running process, with the off-CPU tracepoint program and a shared library.
# It runs until the test ends: valgrind's start takes its time, more so on a
# busy machine (30 s was once not enough).
start_bg "$WORKLOADS/sleeper" 600 10 10
if vg "${names[1]}" "$TMP/pid.vg" "$PROFILER" -p "$BG_PID" -d 2 --off-cpu -f folded \
	-o "$TMP/pid.folded" 2>"$TMP/stderr"; then
	if grep -q 'sleep_phase' "$TMP/pid.folded"; then
		ok "${names[1]}"
	else
		fail "${names[1]}: no sleep_phase in the profile"
		sed 's/^/#   /' "$TMP/stderr"
	fi
fi
kill "$BG_PID" 2>/dev/null

# profiler symbolize, on every function address of the fixtures (and some
# that are none): the same answers as without Valgrind, and no error.
# Each FILE:SYMBOLS, the addresses taken from SYMBOLS (the stripped ones have none).
sym_ok=1
fx=$OUTPUT/fixtures
for pair in "$fx/symbols-pie:$fx/symbols-pie" "$fx/libsymbols.so:$fx/libsymbols.so" \
	"$fx/debuginfo/next/prog:$fx/debuginfo/prog.full" \
	"$fx/debuginfo/mini:$fx/debuginfo/prog.full"; do
	f=${pair%%:*}
	[[ -r $f ]] || continue
	{
		nm --defined-only "${pair#*:}" 2>/dev/null | awk '$2 ~ /^[Tt]$/ { print $1 }'
		printf '0\nnot-an-address\n0xffffffffffffffff\n'
	} >"$TMP/addrs"
	"$PROFILER" symbolize -e "$f" -afiC <"$TMP/addrs" >"$TMP/want" 2>/dev/null
	vg "${names[2]}" "$TMP/sym.vg" "$PROFILER" symbolize -e "$f" -afiC <"$TMP/addrs" \
		>"$TMP/got" 2>"$TMP/stderr" || { sym_ok=0; break; }
	if ! cmp -s "$TMP/want" "$TMP/got"; then
		fail "${names[2]}: '$f' answers differ under valgrind"
		diff -u "$TMP/want" "$TMP/got" | head -n 20 | sed 's/^/#   /'
		sym_ok=0
		break
	fi
done
[[ $sym_ok -eq 1 ]] && ok "${names[2]}"
