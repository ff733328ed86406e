# SPDX-License-Identifier: GPL-2.0-only
# What a target says reaches root's terminal escaped: a fake JVM (a process
# mapping a file named libjvm.so, answering the attach protocol) refuses
# Compiler.perfmap with terminal escape sequences; with -vv the profiler
# quotes its answer with those bytes as \xNN, and writes the profile. A
# process that names itself with them is named escaped in the line that
# says what is profiled.
. "$(dirname "$0")/lib.sh"

NAME="terminal escapes: a JVM's answer is quoted escaped under -vv"
COMM_NAME="terminal escapes: a -p target's own name is shown escaped"
require_bpf "$NAME" "$COMM_NAME"

cat >"$TMP/fake_jvm.py" <<'PY'
import mmap, os, signal, socket, sys, threading, time
path = os.path.join(sys.argv[1], "libjvm.so")
with open(path, "wb") as f:
    f.write(b"\0" * 4096)
jvm = mmap.mmap(os.open(path, os.O_RDONLY), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC,
                flags=mmap.MAP_PRIVATE)
sock_path = "/tmp/.java_pid%d" % os.getpid()
def listen():
    os.umask(0o077)  # the profiler talks only to a socket no one else may use
    s = socket.socket(socket.AF_UNIX)
    s.bind(sock_path)
    s.listen(4)
    while True:
        c, _ = s.accept()
        c.recv(4096)
        # Set the window's title, clear the screen, ring the bell, in the reason.
        c.sendall(b"1\n\x1b]0;pwned\x07\x1b[2J\x9b31mrefused\x7f\n")
        c.close()
started = []
def on_quit(sig, frame):
    if not started:
        started.append(1)
        threading.Thread(target=listen, daemon=True).start()
signal.signal(signal.SIGQUIT, on_quit)
end = time.time() + float(sys.argv[2])
try:
    while time.time() < end:
        pass
finally:
    try:
        os.unlink(sock_path)
    except OSError:
        pass
PY

python3 "$TMP/fake_jvm.py" "$TMP" 20 &
fake=$!
BG_PIDS+=("$fake")
# Until it maps its libjvm.so: the profiler looks for a JVM in the maps it
# reads at the start, and on a busy machine Python took longer than the half
# second this once waited (no JVM seen, nothing asked).
for _ in $(seq 200); do
	grep -q libjvm.so "/proc/$fake/maps" 2>/dev/null && break
	sleep 0.05
done
"$PROFILER" -p "$fake" -d 2 -vv -f folded -o "$TMP/out.folded" 2>"$TMP/err"
rc=$?
kill "$fake" 2>/dev/null
wait "$fake" 2>/dev/null
rm -f "/tmp/.java_pid$fake"
quoted=$(grep -a 'Compiler.perfmap refused' "$TMP/err")
# Control bytes: ESC, BEL, DEL and the C1 CSI byte, anywhere in what it printed.
controls=$(LC_ALL=C tr -cd '\033\007\177\233' <"$TMP/err" | wc -c)
# Positive precondition: the JVM was asked and its answer read and quoted.
if [[ $rc -eq 0 && -s $TMP/out.folded && $controls -eq 0 &&
	$quoted == *'refused: \x1b]0;pwned\x07\x1b[2J\x9b31mrefused\x7f' ]]; then
	ok "$NAME (exit 0; $quoted)"
else
	fail "$NAME (exit $rc, $controls control bytes; quoted: '$(cat -v <<<"$quoted")')"
	cat -v "$TMP/err" | grep -a jvm | sed 's/^/#   /'
fi

# A process named ESC ] 0;pwn BEL x (prctl(PR_SET_NAME)), burning CPU.
python3 -c '
import ctypes, time
ctypes.CDLL(None).prctl(15, b"\x1b]0;pwn\x07x", 0, 0, 0)
end = time.time() + 10
while time.time() < end:
    pass' &
named=$!
BG_PIDS+=("$named")
sleep 0.3
"$PROFILER" -p "$named" -d 1 -f folded -o "$TMP/named.folded" 2>"$TMP/err"
rc=$?
kill "$named" 2>/dev/null
line=$(grep -a '^profiler: profiling' "$TMP/err")
controls=$(LC_ALL=C tr -cd '\033\007' <"$TMP/err" | wc -c)
# Positive precondition: the process was profiled, and named in that line.
if [[ $rc -eq 0 && -s $TMP/named.folded && $controls -eq 0 &&
	$line == *"pid $named (\x1b]0;pwn\x07x)"* ]]; then
	ok "$COMM_NAME ($line)"
else
	fail "$COMM_NAME (exit $rc, $controls control bytes; '$(cat -v <<<"$line")')"
fi
