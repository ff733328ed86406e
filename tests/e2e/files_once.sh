# SPDX-License-Identifier: GPL-2.0-only
# Each mapped file is read once per recording: the unwinder and the
# symbolizer share one ELF cache (elf/elf_cache.h). strace -y names the file
# behind every descriptor, so the mmap() calls of each library of Debian's Python
# that imports some fifty of them are counted: one per file, where reading
# it once for the unwinder and twice for the symbolizer made three for
# each library with samples.
. "$(dirname "$0")/lib.sh"

name="each mapped file is read once"
require_bpf "$name"

if ! command -v strace >/dev/null; then
	missing "strace is not installed (tools/install-deps installs it)" "$name"
	exit 0
fi

cat >"$TMP/many_libs.py" <<'EOF'
import bz2, ctypes, curses, decimal, hashlib, json, lzma, mmap, readline, sqlite3, ssl, uuid, zlib
import xml.etree.ElementTree
import time

t = time.time()
while time.time() - t < 30:
    zlib.compress(b"a" * 1000)
    hashlib.sha256(b"x").digest()
    lzma.compress(b"b" * 100)
EOF
# It runs well past the recording, and is stopped at the end: beside other
# work the profiler under strace once took over 5 s to start.
start_bg /usr/bin/python3.11 "$TMP/many_libs.py"
sleep 1
libs=$(awk '$2 ~ /x/ && $6 ~ /\.so/ { print $6 }' "/proc/$BG_PID/maps" | sort -u)

# LeakSanitizer (make asan) cannot run under ptrace.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -y -e trace=openat,mmap -o "$TMP/trace" \
	"$PROFILER" -p "$BG_PID" -d 2 -o "$TMP/p.pb.gz" 2>"$TMP/err"
rc=$?
if [[ $rc -ne 0 ]]; then
	fail "$name: profiler failed (exit $rc)"
	sed 's/^/#   /' "$TMP/err"
	exit 0
fi
# From the first snapshot of the target's maps on: before it, the dynamic
# loader mapped the profiler's own libraries (libz, liblzma, ...).
sed -n "\|/proc/$BG_PID/maps|,\$p" "$TMP/trace" >"$TMP/after"
seen=0 worst=0 worst_lib=
for lib in $libs; do
	n=$(grep -c "^[0-9]* *mmap(.*, [0-9]*<$lib>, " "$TMP/after")
	[[ $n -gt 0 ]] && seen=$((seen + 1))
	if [[ $n -gt $worst ]]; then
		worst=$n worst_lib=$lib
	fi
done
nr_libs=$(wc -w <<<"$libs")
if [[ $seen -lt 20 ]]; then
	fail "$name: only $seen of the $nr_libs libraries were read at all"
elif [[ $worst -gt 1 ]]; then
	fail "$name: '$worst_lib' was mapped $worst times ($seen of $nr_libs libraries read)"
else
	ok "$name: $seen of $nr_libs libraries read, each mapped once"
fi
