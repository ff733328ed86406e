# SPDX-License-Identifier: GPL-2.0-only
# `profiler symbolize` names the same functions, inline chains and source
# lines as llvm-addr2line (the oracle), address by address, on the binaries
# of `make oracle`: C, C++ from two compilers, Rust with both manglings, a
# shared library, and debug information found by debuglink, by build ID and
# in MiniDebugInfo. Needs neither root nor BPF.
#
# SYMBOLIZE="addr2line" (or any addr2line-compatible command) tests another
# symbolizer; ORACLE_ADDRS sets how many addresses each binary gets.
. "$(dirname "$0")/lib.sh"

ORACLE=$OUTPUT/oracle
read -ra symbolize <<<"${SYMBOLIZE:-$PROFILER symbolize}"
naddrs=${ORACLE_ADDRS:-3000}
min_pct=99
show=5

# NAME REFERENCE MODE [ARGS...]: symbolize NAME with ours (given ARGS), and
# REFERENCE, the same code with its debug information in place, with
# llvm-addr2line. MODE "lines" compares whole records; "names" compares
# only the function names of a binary that has no DWARF at all, against
# REFERENCE with its DWARF removed, which llvm-addr2line can only name
# from .symtab too.
binaries=(
	"c-gcc c-gcc lines"
	"cxx-gcc cxx-gcc lines"
	"cxx-clang cxx-clang lines"
	"rust-legacy rust-legacy lines"
	"rust-v0 rust-v0 lines"
	"liboracle.so liboracle.so lines"
	"c-debuglink c-gcc lines"
	"cxx-buildid cxx-clang lines --debug-dir $ORACLE/debug-root"
	"cxx-minidebuginfo cxx-gcc names"
	"cxx-zlib cxx-gcc lines"
	"cxx-zlib-gnu cxx-gcc lines"
)

why=
if ! command -v llvm-addr2line >/dev/null; then
	why="no llvm-addr2line (install llvm)"
elif [[ ! -e $ORACLE/cxx-minidebuginfo ]]; then
	why="$ORACLE is not built (run 'make oracle')"
elif ! command -v "${symbolize[0]}" >/dev/null; then
	why="no ${symbolize[0]}"
fi
if [[ -n $why ]]; then
	for b in "${binaries[@]}"; do
		echo "ok - symbolize: ${b%% *} # SKIP $why"
	done
	exit 0
fi

# pick_addrs BIN: $naddrs distinct addresses, uniform over the bytes of the
# function symbols in BIN's .text, in hex, sorted. The generator is MINSTD,
# written out rather than awk's rand() so that mawk and gawk pick the same.
pick_addrs() {
	nm --defined-only --format=sysv "$1" | awk -F'|' -v n="$naddrs" '
	function hex(s,    i, v) {
		s = tolower(s); v = 0
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	function tohex(v,    s) {
		s = ""
		do {
			s = substr("0123456789abcdef", v % 16 + 1, 1) s
			v = int(v / 16)
		} while (v > 0)
		return s
	}
	function next_rand() { seed = (seed * 48271) % 2147483647; return seed / 2147483647 }
	$4 ~ /FUNC/ && $7 ~ /^\.text *$/ && $5 ~ /[0-9a-f]/ {
		start = hex($2); size = hex($5)
		if (size == 0 || (start, size) in seen)
			next
		seen[start, size] = 1
		nf++; base[nf] = start; cum[nf] = total; total += size
	}
	END {
		seed = 20240601
		for (i = 0; i < n * 20 && count < n; i++) {
			r = int(next_rand() * total)
			lo = 1; hi = nf
			while (lo < hi) {
				mid = int((lo + hi + 1) / 2)
				if (cum[mid] <= r) lo = mid; else hi = mid - 1
			}
			a = base[lo] + r - cum[lo]
			if (!(a in picked)) {
				picked[a] = 1; count++
				print tohex(a)
			}
		}
	}' | LC_ALL=C sort
}

# parse MODE TOOL: GNU addr2line output (-a -f -i) on stdin to one line per
# address, "ADDR<tab>FRAME<tab>FRAME...", innermost first, FRAME being
# "FUNCTION @ FILE:LINE" ("lines") or only the innermost FUNCTION ("names").
# TOOL "eu" and "oracle" say whose output it is, for the normalizations
# below; for the oracle, FILESYMS names a file of the binary's STT_FILE
# symbols.
parse() {
	awk -v mode="$1" -v tool="$2" -v filesyms="${3:-}" '
	function flush() {
		if (addr == "")
			return
		if (n % 2)
			rec = rec "\t" fn " @ (no location)"
		print addr rec
	}
	# llvm-addr2line names the outermost frame from .symtab, where a
	# function the compiler cloned or split keeps the suffix of the clone
	# (main.cold, run.constprop.0, f.isra.0, f.part.0 from gcc, f.llvm.123
	# from rustc); DWARF, and so GNU addr2line, names the function the
	# source wrote. Both are the same function: drop the suffix however
	# it is spelled, raw, "f() [clone .cold]" (libiberty) or "f() (.cold)"
	# (LLVM).
	function unclone(s) {
		while (sub(/ \[clone \.[A-Za-z0-9_.]+\]$/, "", s) ||
		       sub(/ \(\.[A-Za-z0-9_.]+\)$/, "", s))
			;
		while (match(s, "\\.(cold|part|isra|constprop|llvm|lto_priv)(\\.[0-9]+)?$"))
			s = substr(s, 1, RSTART - 1)
		return s
	}
	# Rust legacy names are Itanium-mangled paths ending in a hash of the
	# item ("::h" and 16 hex digits), with the characters Itanium names
	# cannot hold escaped ("$LT$" for "<", ".." for "::"). Rust
	# demanglers (rustfilt, rustc-demangle, libiberty: ours, and c++filt -i
	# for the oracle) decode the escapes and drop the hash, which only
	# tells otherwise identical items apart and changes with every
	# compiler; demanglers that know only Itanium (eu-addr2line, and
	# llvm-addr2line -C) keep both. Decoding every side alike hides no error.
	function rust_legacy(s,    out, c) {
		if (!match(s, /::h[0-9a-f]+$/) || RLENGTH != 19)
			return s
		s = substr(s, 1, RSTART - 1)
		sub(/^_\$/, "$", s)
		gsub(/::_\$/, "::$", s)
		gsub(/\.\./, "::", s)
		out = ""
		while (match(s, /\$[A-Za-z0-9]+\$/)) {
			c = substr(s, RSTART + 1, RLENGTH - 2)
			if (c in esc)
				c = esc[c]
			else if (c ~ /^u[0-9a-f]+$/)
				c = sprintf("%c", hexval(substr(c, 2)))
			else
				c = substr(s, RSTART, RLENGTH)
			out = out substr(s, 1, RSTART - 1) c
			s = substr(s, RSTART + RLENGTH)
		}
		return out s
	}
	function hexval(s,    i, v) {
		v = 0
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	BEGIN {
		while (filesyms != "" && (getline l <filesyms) > 0)
			stt[l] = 1
		esc["SP"] = "@"; esc["BP"] = "*"; esc["RF"] = "&"; esc["LT"] = "<"
		esc["GT"] = ">"; esc["LP"] = "("; esc["RP"] = ")"; esc["C"] = ","
	}
	/^0x[0-9A-Fa-f]+$/ {
		flush()
		addr = tolower(substr($0, 3))
		sub(/^0+/, "", addr)
		rec = ""; n = 0
		next
	}
	addr == "" { next }
	n++ % 2 == 0 {
		fn = $0
		# eu-addr2line appends where the innermost inlined function was
		# inlined; the next frame says it again.
		if (tool == "eu")
			sub(/ inlined at .* in .*$/, "", fn)
		fn = rust_legacy(unclone(fn))
		if (mode == "names" && n == 1)
			rec = "\t" fn
		next
	}
	mode == "lines" {
		loc = $0
		# Columns are not part of the addr2line format; eu-addr2line adds them.
		if (tool == "eu" && loc ~ /:[0-9]+:[0-9]+$/)
			sub(/:[0-9]+$/, "", loc)
		# Where DWARF has no line for an address, llvm-addr2line names
		# the file after the STT_FILE symbol before the function (a Rust
		# codegen unit such as "gimli.fcf744d7-cgu.2", or crtstuff.c),
		# line 0: a guess at the object file, not a source location.
		# Ours says it does not know, as the addr2line format has it.
		if (tool == "oracle" && n == 2 && match(loc, /:0$/) &&
		    substr(loc, 1, RSTART - 1) in stt)
			loc = "??:0"
		rec = rec "\t" fn " @ " loc
	}
	END { flush() }'
}

# without_discriminators: drop " (discriminator N)" from every frame. The
# addr2line format makes them optional, and the two references disagree on
# where they go: llvm-addr2line prints the line table's on the innermost
# frame only, GNU addr2line repeats it on every caller's call site, which
# DWARF gives none.
without_discriminators() {
	sed 's/ (discriminator [0-9]*)//g'
}

# compare OURS THEIRS ADDRS: "AGREE TOTAL" on the first line, then every
# disagreement as "ADDR<tab>OURS<tab>THEIRS", records' frames joined by "|".
compare() {
	awk -F'\t' '
	function rec(   i, r) {
		r = $2
		for (i = 3; i <= NF; i++)
			r = r "|" $i
		return r
	}
	FILENAME == ARGV[1] { ours[$1] = rec(); next }
	FILENAME == ARGV[2] { theirs[$1] = rec(); next }
	{
		a = $1; sub(/^0+/, "", a)
		total++
		o = (a in ours) ? ours[a] : "(no record)"
		t = (a in theirs) ? theirs[a] : "(no record)"
		if (o == t)
			agree++
		else
			diffs[++nd] = a "\t" o "\t" t
	}
	END {
		print agree + 0, total + 0
		for (i = 1; i <= nd; i++)
			print diffs[i]
	}' "$1" "$2" "$3"
}

# show_diffs LABEL_OURS LABEL_THEIRS: the first $show disagreements from
# compare's output on stdin, as # comments, one frame a line.
show_diffs() {
	head -n "$show" | awk -F'\t' -v l1="$1" -v l2="$2" '
	function frames(label, r,    n, f, i) {
		n = split(r, f, "|")
		for (i = 1; i <= n; i++)
			printf "#       %-*s %s\n", w, i == 1 ? label ":" : "", f[i]
	}
	BEGIN { w = (length(l1) > length(l2) ? length(l1) : length(l2)) + 1 }
	{
		printf "#   0x%s\n", $1
		frames(l1, $2)
		frames(l2, $3)
	}'
}

# classify: how many disagreements (compare's output on stdin) are of each
# kind, by the first way the two records differ, innermost frame first.
classify() {
	awk -F'\t' '
	{
		no = split($2, o, "|"); nt = split($3, t, "|")
		kind = ""
		for (i = 1; i <= no && i <= nt && kind == ""; i++) {
			split(o[i], of, " @ "); split(t[i], tf, " @ ")
			fo = of[2]; ft = tf[2]
			lo = fo; sub(/.*:/, "", lo); sub(/:[^:]*$/, "", fo)
			lt = ft; sub(/.*:/, "", lt); sub(/:[^:]*$/, "", ft)
			if (of[1] != tf[1])
				kind = i == 1 ? "innermost function name" : "function name of an outer frame"
			else if (fo != ft)
				kind = "file"
			else if (lo != lt)
				kind = "line"
		}
		if (kind == "")
			kind = no < nt ? "fewer inline frames" : "more inline frames"
		count[kind]++
	}
	END {
		for (k in count)
			printf "%d\t%s\n", count[k], k
	}' | sort -k1,1nr -k2 | awk -F'\t' '{ printf "#     %d: %s\n", $1, $2 }'
}

# oracle BIN: llvm-addr2line's records for $TMP/addrs in BIN, its names
# demangled by libiberty (c++filt -i) rather than by LLVM. The oracle says
# which function an address is in by its linkage name; how to spell that
# name is the demangler's business, and ours uses libiberty, as binutils
# do. LLVM 14's demangler spells some C++ names otherwise ("operator<<char"
# for "operator< <char", "'lambda'(int const&)" for "{lambda(int const&)#1}"),
# gets some wrong (std::__sort's parameters come out as "(int, int, ...)"
# when its comparator is a lambda in a template) and gives some up (enable_if
# return types). -i: no Rust legacy hash, as in ours.
oracle() {
	llvm-addr2line -a -f -i -e "$1" <"$TMP/addrs" | c++filt -i
}

run_ours() {
	local bin=$1
	shift
	"${symbolize[@]}" "$@" -a -f -i -C -e "$bin" <"$TMP/addrs" 2>"$TMP/ours.err"
}

for entry in "${binaries[@]}"; do
	read -r name ref mode args <<<"$entry"
	read -ra args <<<"${args:-}"
	bin=$ORACLE/$name
	refbin=$ORACLE/$ref
	label="symbolize: $name"
	if [[ $mode == names ]]; then
		strip -g "$ORACLE/$ref" -o "$TMP/$ref-nodwarf"
		refbin=$TMP/$ref-nodwarf
	fi

	pick_addrs "$refbin" >"$TMP/addrs"
	readelf -sW "$refbin" | awk '$4 == "FILE" && NF >= 8 { print $8 }' >"$TMP/filesyms"
	oracle "$refbin" | parse "$mode" oracle "$TMP/filesyms" | without_discriminators \
		>"$TMP/theirs"
	if ! run_ours "$bin" "${args[@]}" >"$TMP/ours.out"; then
		echo "not ok - $label: '${symbolize[*]} ${args[*]} -a -f -i -C -e $bin' failed"
		head -n 5 "$TMP/ours.err" | sed 's/^/#   /'
		continue
	fi
	parse "$mode" ours <"$TMP/ours.out" | without_discriminators >"$TMP/ours"
	compare "$TMP/ours" "$TMP/theirs" "$TMP/addrs" >"$TMP/cmp"
	read -r agree total <"$TMP/cmp"
	pct=$(awk -v a="$agree" -v t="$total" 'BEGIN { printf "%.1f", t ? 100 * a / t : 0 }')
	msg="$label: $agree of $total addresses agree with llvm-addr2line ($pct%)"
	if ((total > 0 && agree * 100 >= min_pct * total)); then
		echo "ok - $msg"
	else
		echo "not ok - $msg"
	fi
	tail -n +2 "$TMP/cmp" | show_diffs ours llvm-addr2line

	# A second opinion on the binaries with their DWARF in place: not a
	# test, but where two mature symbolizers disagree, ours may too.
	if [[ $mode == lines && $name == "$ref" ]] && command -v eu-addr2line >/dev/null; then
		eu-addr2line -a -f -i -C -e "$refbin" <"$TMP/addrs" | parse lines eu |
			without_discriminators >"$TMP/eu"
		compare "$TMP/eu" "$TMP/theirs" "$TMP/addrs" >"$TMP/cmp"
		read -r agree total <"$TMP/cmp"
		echo "# eu-addr2line: $name: $((total - agree)) of $total addresses differ from llvm-addr2line"
		tail -n +2 "$TMP/cmp" | classify
		tail -n +2 "$TMP/cmp" | show=3 show_diffs eu-addr2line llvm-addr2line
	fi
done
