# SPDX-License-Identifier: GPL-2.0-only
# The privilege model: under sudo the command runs as the user who ran sudo
# and the profile is theirs; a link planted in /tmp is never followed; once
# attached, the profiler keeps only the capabilities it still needs; a
# target's debug files are looked up inside its own root.
. "$(dirname "$0")/lib.sh"

# The capabilities case reports three checks.
require_bpf --plan 8 "privileges: under sudo, the command runs as the invoking user" \
	"privileges: under sudo, the output belongs to the invoking user" \
	"privileges: without sudo, the command runs as root" \
	"privileges: a link planted in /tmp is not followed" \
	"privileges: capabilities dropped once attached" \
	"privileges: debug files resolved inside the target's root"

nobody_uid=$(id -u nobody)
nobody_gid=$(id -g nobody)
nobody_home=$(getent passwd nobody | cut -d: -f6)

# The command prints who it runs as, then burns CPU as split does.
whoami_then_split='id -u; id -g; id -G; echo "$HOME"; exec "$0" 50 50 0.3'

# --- sudo: the command and the output are the user's -----------------------------

# The user writes her profile where she could write a file: a directory of hers.
chmod 711 "$TMP"
mkdir -p "$TMP/sudo"
chown "$nobody_uid:$nobody_gid" "$TMP/sudo"
SUDO_UID=$nobody_uid SUDO_GID=$nobody_gid SUDO_USER=nobody HOME=/root \
	"$PROFILER" -F 199 -o "$TMP/sudo/out.folded" -- sh -c "$whoami_then_split" \
	"$WORKLOADS/split" >"$TMP/ids" 2>"$TMP/err"
rc=$?
ids=$(tr '\n' ' ' <"$TMP/ids")
expected="$nobody_uid $nobody_gid $(id -G nobody) $nobody_home "
if [[ $rc -eq 0 && $ids == "$expected" ]]; then
	ok "privileges: under sudo, the command runs as the invoking user (uid gid groups HOME: $ids)"
else
	fail "privileges: under sudo, the command runs as the invoking user (exit $rc; got '$ids', expected '$expected')"
	sed 's/^/#   /' "$TMP/err"
fi
owner=$(stat -c %u:%g "$TMP/sudo/out.folded" 2>/dev/null)
hot=$(grep -c ';hot_a' "$TMP/sudo/out.folded" 2>/dev/null)
check "privileges: under sudo, the output belongs to the invoking user ($owner, $hot stacks in hot_a)" \
	test "$owner" = "$nobody_uid:$nobody_gid" -a "${hot:-0}" -ge 1

env -u SUDO_UID -u SUDO_GID -u SUDO_USER "$PROFILER" -F 199 -o "$TMP/sudo/root.folded" -- \
	sh -c "$whoami_then_split" "$WORKLOADS/split" >"$TMP/ids" 2>"$TMP/err"
rc=$?
ids=$(head -2 "$TMP/ids" | tr '\n' ' ')
owner=$(stat -c %u "$TMP/sudo/root.folded" 2>/dev/null)
check "privileges: without sudo, the command runs as root (exit $rc, uid gid: $ids, output uid $owner)" \
	test "$rc" -eq 0 -a "$ids" = "0 0 " -a "$owner" = 0

# --- a link planted in a shared directory ----------------------------------------------

# Another user's links in sticky, world-writable /tmp: one to a file of
# root's, one to a directory of root's. Neither is followed, whatever
# fs.protected_symlinks says; the file is untouched and nothing is written.
echo SECRET >"$TMP/secret"
mkdir -p "$TMP/rootdir"
link=$(mktemp -u /tmp/profiler-e2e-link.XXXXXX)
dirlink=$(mktemp -u /tmp/profiler-e2e-dir.XXXXXX)
ln -s "$TMP/secret" "$link" && chown -h nobody "$link"
ln -s "$TMP/rootdir" "$dirlink" && chown -h nobody "$dirlink"
"$PROFILER" -F 199 -f folded -o "$link" -- "$WORKLOADS/split" 50 50 0.2 2>"$TMP/err"
rc=$?
"$PROFILER" -F 199 -o "$dirlink/out.folded" -- "$WORKLOADS/split" 50 50 0.2 2>"$TMP/err2"
rc2=$?
state="exit $rc and $rc2, secret '$(cat "$TMP/secret")', $(ls -A "$TMP/rootdir" | wc -l) files in the directory"
if [[ $rc -eq 1 && $rc2 -eq 1 && $(cat "$TMP/secret") == SECRET && -L $link &&
	-z $(ls -A "$TMP/rootdir") && $(wc -l <"$TMP/err") -eq 1 && $(wc -l <"$TMP/err2") -eq 1 ]] &&
	grep -q "symbolic link another user owns in a shared directory" "$TMP/err"; then
	ok "privileges: a link planted in /tmp is not followed ($state: $(cat "$TMP/err"))"
else
	fail "privileges: a link planted in /tmp is not followed ($state)"
	sed 's/^/#   /' "$TMP/err" "$TMP/err2"
fi
rm -f "$link" "$dirlink"

# --- capabilities ---------------------------------------------------------------------------

# Kept: DAC_OVERRIDE (1), DAC_READ_SEARCH (2), SYS_PTRACE (19), SYSLOG (34),
# BPF (39), CHECKPOINT_RESTORE (40); under sudo with a command, KILL (5), and
# SETGID (6) and SETUID (7) to write the outputs as the user. Everything else is gone from the bounding set as well.
caps_of() {
	awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"
}
check_caps() {
	local name=$1 want=$2 prof=$3 eff prm bnd nnp
	wait_for "$TMP/err" "^profiler: profiling"
	sleep 0.2
	eff=$(caps_of "$prof" CapEff) prm=$(caps_of "$prof" CapPrm) bnd=$(caps_of "$prof" CapBnd)
	nnp=$(caps_of "$prof" NoNewPrivs)
	sleep 1 # a second of samples for the profile made with what is left
	kill -INT "$prof"
	wait "$prof"
	if [[ $((16#$eff)) -eq $want && $((16#$prm)) -eq $want && $((16#$bnd)) -eq $want && $nnp == 1 ]]; then
		ok "privileges: capabilities dropped once attached, $name (CapEff=CapPrm=CapBnd=$eff, NoNewPrivs)"
	else
		fail "privileges: capabilities dropped once attached, $name (want $(printf %016x "$want"); CapEff $eff CapPrm $prm CapBnd $bnd NoNewPrivs $nnp)"
		sed 's/^/#   /' "$TMP/err"
	fi
}
kept=$(((1 << 1) | (1 << 2) | (1 << 19) | (1 << 34) | (1 << 39) | (1 << 40)))
if [[ $(cat /proc/sys/kernel/cap_last_cap) -ge 40 ]]; then
	start_bg "$WORKLOADS/split" 50 50 30
	"$PROFILER" -p "$BG_PID" -F 99 -o "$TMP/caps.pb.gz" 2>"$TMP/err" &
	check_caps "-p" "$kept" $!
	kill "$BG_PID"
	SUDO_UID=$nobody_uid SUDO_GID=$nobody_gid "$PROFILER" -F 99 -o "$TMP/sudo/caps2.pb.gz" -- \
		"$WORKLOADS/split" 50 50 30 2>"$TMP/err" &
	check_caps "sudo and a command" $((kept | (1 << 5) | (1 << 6) | (1 << 7))) $!
	# Sampling and symbolizing with what is left still works (map_files and all).
	top=$(pprof -top "$TMP/caps.pb.gz" 2>/dev/null | grep -c ' hot_[ab]$')
	check "privileges: capabilities dropped once attached, the profile is whole ($top of hot_a, hot_b)" \
		test "$top" -eq 2
else
	skip "privileges: capabilities dropped once attached" "kernel before 5.9: no CAP_CHECKPOINT_RESTORE"
fi

# --- a target in another root --------------------------------------------------------------

# A chroot holding split, stripped, and its debug file reached from its
# build-id through an absolute link: /usr/lib/debug/.build-id/xx/rest.debug
# -> /usr/lib/debug/real/split.debug. That link means the chroot's file,
# not the host's (where there is none): the names of split's functions come
# from the debug file only if the link is resolved inside the target's root.
root=$TMP/chroot
mkdir -p "$root/usr/lib/debug/real"
objcopy --only-keep-debug "$WORKLOADS/split" "$root/usr/lib/debug/real/split.debug"
strip -s -o "$root/split" "$WORKLOADS/split"
id=$(readelf -n "$root/split" | awk '/Build ID:/ { print $3 }')
for lib in $(ldd "$WORKLOADS/split" | grep -oE '/[^ ]+'); do
	cp --parents -L "$lib" "$root/"
done
if [[ -n $id ]]; then
	mkdir -p "$root/usr/lib/debug/.build-id/${id:0:2}"
	ln -s /usr/lib/debug/real/split.debug "$root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	chroot "$root" /split 50 50 30 &
	BG_PIDS+=($!)
	chrooted=$!
	sleep 0.3
	"$PROFILER" -p "$chrooted" -F 199 -d 1 -f folded -o "$TMP/chroot.folded" 2>"$TMP/err"
	kill "$chrooted"
	named=$(grep -c ';compute;hot_a' "$TMP/chroot.folded")
	unnamed=$(grep -c 'split+0x' "$TMP/chroot.folded")
	check "privileges: debug files resolved inside the target's root ($named stacks through hot_a, $unnamed unnamed)" \
		test "$named" -ge 1 -a "$unnamed" -eq 0
else
	fail "privileges: debug files resolved inside the target's root: split has no build-id"
fi
