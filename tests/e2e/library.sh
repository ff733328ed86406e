# SPDX-License-Identifier: GPL-2.0-only
# A hot function inside a shared library is named, under the library's mapping.
. "$(dirname "$0")/lib.sh"

require_bpf "shared-library function" "the main binary is pprof's first mapping" \
	"shared-library mapping"

if ! "$PROFILER" -F 299 -o "$TMP/lib.pb.gz" -- "$WORKLOADS/uses_lib" 2 2>"$TMP/err"; then
	fail "shared-library function: profiler failed"
	sed 's/^/#   /' "$TMP/err"
	exit 0
fi
share_is "shared-library function" "$TMP/lib.pb.gz" lib_hot_loop 95 5
check "the main binary is pprof's first mapping" grep -q "^File: uses_lib$" <(pprof -top "$TMP/lib.pb.gz" 2>&1)

# In `pprof -raw`, a location reads "ID: ADDR M=MAPPING FUNC FILE:LINE ...",
# and each function inlined there adds a line "FUNC FILE:LINE ..." under it;
# a mapping line reads "ID: START/LIMIT/OFFSET FILE BUILDID ...".
pprof -raw "$TMP/lib.pb.gz" >"$TMP/raw" 2>&1
mapping=$(awk '/^Locations/ { l = 1 } l && $1 ~ /^[0-9]+:$/ { m = $3; sub(/M=/, "", m) }
	l && / lib_hot_loop / { print m; exit }' "$TMP/raw")
file=$(awk -v m="$mapping" '/^Mappings/ { s = 1; next } s && $1 == m ":" { print $3; exit }' "$TMP/raw")
check "shared-library mapping: lib_hot_loop is in mapping $mapping, '$file'" \
	test "${file##*/}" = libhot.so
