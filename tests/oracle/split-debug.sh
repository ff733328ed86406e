#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# split-debug.sh MODE IN OUT [DIR]: write OUT, a copy of IN with its debug
# information moved out the way distributions ship it, so the symbolizer
# has to find it again. MODE is one of:
#   debuglink       OUT without DWARF (strip -g), OUT.debug next to it,
#                   named by OUT's .gnu_debuglink
#   build-id        OUT stripped of everything, its debug file at
#                   DIR/.build-id/xx/rest.debug for build ID xxrest
#   minidebuginfo   OUT stripped of everything but .dynsym, with a
#                   .gnu_debugdata section as Fedora's find-debuginfo makes
#                   it: an xz-compressed ELF file whose .symtab holds the
#                   function symbols that .dynsym lacks, and no DWARF
set -euo pipefail

mode=$1 in=$2 out=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

case $mode in
debuglink)
	objcopy --only-keep-debug "$in" "$out.debug"
	strip -g "$in" -o "$tmp/out"
	# The link holds the debug file's name and CRC: objcopy reads the file
	# from the path given, so run it where OUT.debug is.
	(cd "$(dirname "$out")" && objcopy --add-gnu-debuglink="$(basename "$out").debug" \
		"$tmp/out")
	mv "$tmp/out" "$out"
	;;
build-id)
	dir=$4
	id=$(readelf -n "$in" | awk '/Build ID:/ { print $3; exit }')
	[[ -n $id ]] || { echo "split-debug.sh: '$in' has no build ID" >&2; exit 1; }
	mkdir -p "$dir/.build-id/${id:0:2}"
	objcopy --only-keep-debug "$in" "$dir/.build-id/${id:0:2}/${id:2}.debug"
	strip -s "$in" -o "$out"
	;;
minidebuginfo)
	objcopy --only-keep-debug "$in" "$tmp/debug"
	strip -s "$in" -o "$tmp/out"
	# Function symbols already in .dynsym are found there: keep the others.
	nm -D --defined-only --format=posix "$tmp/out" | awk '{ print $1 }' | sort -u >"$tmp/dynsyms"
	nm --defined-only --format=sysv "$tmp/debug" |
		awk -F'|' '$4 ~ /FUNC/ { sub(/ +$/, "", $1); print $1 }' | sort -u >"$tmp/funcs"
	comm -13 "$tmp/dynsyms" "$tmp/funcs" >"$tmp/keep"
	objcopy -S --remove-section=.comment --remove-section=.gnu_debuglink \
		--keep-symbols="$tmp/keep" "$tmp/debug" "$tmp/mini"
	xz -T1 "$tmp/mini"
	objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$tmp/out"
	mv "$tmp/out" "$out"
	;;
*)
	echo "split-debug.sh: unknown mode '$mode'" >&2
	exit 1
	;;
esac
