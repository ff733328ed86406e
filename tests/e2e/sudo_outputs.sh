# SPDX-License-Identifier: GPL-2.0-only
# Outputs under sudo are written as the user who ran sudo would write them:
# a root-owned file she could not replace stays root's and unchanged, in a
# root directory or in a sticky shared one; a FIFO (or a device) at the
# output path is refused at once with one line; and as root, a FIFO nobody
# reads is refused rather than waited on. A user of our own, made here.
. "$(dirname "$0")/lib.sh"

names=("sudo outputs: her own file is written and hers"
	"sudo outputs: a root file in a root directory stays root's"
	"sudo outputs: a root file in a sticky directory stays root's"
	"sudo outputs: her link to a root file replaces the link only"
	"sudo outputs: a FIFO is refused at once"
	"sudo outputs: a device is refused at once"
	"sudo outputs: as root, a FIFO nobody reads is refused")
require_bpf "${names[@]}"
if ! command -v useradd >/dev/null; then
	missing "no useradd to make an unprivileged user" "${names[@]}"
	exit 0
fi

user=prof-e2e-$$
useradd -M -N -r -s /usr/sbin/nologin "$user" || {
	missing "useradd '$user' failed" "${names[@]}"
	exit 0
}
trap 'cleanup; userdel "$user" 2>/dev/null' EXIT
uid=$(id -u "$user")
gid=$(id -g "$user")

chmod 711 "$TMP"
mkdir -p "$TMP/her" "$TMP/etc" "$TMP/shared"
chown "$uid:$gid" "$TMP/her"
chmod 1777 "$TMP/shared"
echo ROOT >"$TMP/etc/passwd"
echo ROOT >"$TMP/shared/root.folded"
# Writable by anyone, so only replacing it is what she may not do.
chmod 666 "$TMP/etc/passwd" "$TMP/shared/root.folded"

# as_her ARGS...: the profiler as `sudo profiler` run by $user, a short command profiled.
as_her() {
	SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=$user timeout 30 "$PROFILER" -F 199 -f folded "$@" \
		-- "$WORKLOADS/split" 50 50 0.3
}

# unchanged FILE: still root's, mode 666, holding ROOT.
unchanged() {
	[[ $(stat -c %u:%g:%a "$1") == 0:0:666 && $(cat "$1") == ROOT ]]
}

# no_temps DIR: no temporary file of ours left in DIR.
no_temps() {
	[[ -z $(find "$1" -maxdepth 1 -name '.profiler-*') ]]
}

# Positive precondition: in her own directory and in the shared one, she gets a profile.
as_her -o "$TMP/her/own.folded" 2>"$TMP/err"
rc=$?
as_her -o "$TMP/shared/hers.folded" 2>>"$TMP/err"
rc2=$?
hot=$(grep -c ';hot_a' "$TMP/her/own.folded" 2>/dev/null)
owners="$(stat -c %u:%g "$TMP/her/own.folded" "$TMP/shared/hers.folded" 2>/dev/null | tr '\n' ' ')"
check "${names[0]} (exit $rc and $rc2, owners $owners, $hot stacks in hot_a)" \
	test "$rc" -eq 0 -a "$rc2" -eq 0 -a "$owners" = "$uid:$gid $uid:$gid " -a "${hot:-0}" -ge 1
[[ $rc -eq 0 ]] || sed 's/^/#   /' "$TMP/err"

# refused NAME FILE PATTERN ARGS...: exit 1 within 5 s, one line matching PATTERN, FILE unchanged.
refused() {
	local name=$1 file=$2 pattern=$3 start ms rc
	shift 3
	start=$(date +%s%N)
	as_her "$@" 2>"$TMP/err"
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	if [[ $rc -eq 1 && $ms -lt 5000 && $(wc -l <"$TMP/err") -eq 1 ]] &&
		grep -q "$pattern" "$TMP/err" && unchanged "$file" && no_temps "$(dirname "$file")"; then
		ok "$name (exit 1 in $ms ms: $(cat "$TMP/err"))"
	else
		fail "$name (exit $rc in $ms ms; $(stat -c '%U:%G %a' "$file"): $(head -c 40 "$file"))"
		sed 's/^/#   /' "$TMP/err"
	fi
}

refused "${names[1]}" "$TMP/etc/passwd" "cannot write '$TMP/etc/passwd': Permission denied" \
	-o "$TMP/etc/passwd"
refused "${names[2]}" "$TMP/shared/root.folded" \
	"cannot write '$TMP/shared/root.folded': Operation not permitted" \
	-o "$TMP/shared/root.folded"

# A link of hers to root's file: what she may replace is her link, not what it leads to.
ln -s "$TMP/etc/passwd" "$TMP/her/link.folded"
chown -h "$uid:$gid" "$TMP/her/link.folded"
as_her -o "$TMP/her/link.folded" 2>"$TMP/err"
rc=$?
state="exit $rc, link now $(stat -c '%F %U' "$TMP/her/link.folded")"
if [[ $rc -eq 0 && ! -L $TMP/her/link.folded && $(stat -c %u "$TMP/her/link.folded") == "$uid" ]] &&
	unchanged "$TMP/etc/passwd"; then
	ok "${names[3]} ($state, root's file unchanged)"
else
	fail "${names[3]} ($state; root's file: $(stat -c '%U %a' "$TMP/etc/passwd"))"
	sed 's/^/#   /' "$TMP/err"
fi

# A FIFO she made at the path: today's refusal, before anything is sampled.
mkfifo "$TMP/her/fifo"
chown "$uid:$gid" "$TMP/her/fifo"
start=$(date +%s%N)
as_her -o "$TMP/her/fifo" 2>"$TMP/err"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
if [[ $rc -eq 1 && $ms -lt 5000 && $(wc -l <"$TMP/err") -eq 1 && -p $TMP/her/fifo ]] &&
	grep -q "cannot write '$TMP/her/fifo': not a regular file" "$TMP/err" && no_temps "$TMP/her"; then
	ok "${names[4]} (exit 1 in $ms ms: $(cat "$TMP/err"))"
else
	fail "${names[4]} (exit $rc in $ms ms)"
	sed 's/^/#   /' "$TMP/err"
fi

as_her -o /dev/null 2>"$TMP/err"
rc=$?
if [[ $rc -eq 1 && $(wc -l <"$TMP/err") -eq 1 && -c /dev/null ]] &&
	grep -q "cannot write '/dev/null': not a regular file" "$TMP/err"; then
	ok "${names[5]} (exit 1: $(cat "$TMP/err"))"
else
	fail "${names[5]} (exit $rc)"
	sed 's/^/#   /' "$TMP/err"
fi

# As root, a FIFO is written as it is when someone reads it (the unit tests), and
# refused, not waited on, when nobody does.
start=$(date +%s%N)
timeout 30 "$PROFILER" -F 199 -f folded -o "$TMP/her/fifo" -- "$WORKLOADS/split" 50 50 0.3 \
	2>"$TMP/err"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
if [[ $rc -eq 1 && $ms -lt 10000 ]] && grep -q "^profiler: profiling" "$TMP/err" &&
	[[ $(grep -c "cannot write" "$TMP/err") -eq 1 ]] &&
	grep -q "cannot write '$TMP/her/fifo': a FIFO that nobody reads" "$TMP/err"; then
	ok "${names[6]} (exit 1 in $ms ms, after sampling: $(grep 'cannot write' "$TMP/err"))"
else
	fail "${names[6]} (exit $rc in $ms ms)"
	sed 's/^/#   /' "$TMP/err"
fi
