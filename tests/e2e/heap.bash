# SPDX-License-Identifier: GPL-2.0-only
# Helpers for the heap profiles' tests (alloc.sh, alloc_preload.sh), sourced
# by them (tests/run runs only *.sh): what a pprof heap profile says of a
# call site, what heap_work printed of it.

# pprof_site FILE FUNC [PPROF_ARGS...]: each sample type's sum
# (space-separated, in the profile's order) over the samples with a frame of
# FUNC (inlined or not) that PPROF_ARGS keep, from `go tool pprof -raw`;
# nothing when pprof cannot read FILE.
pprof_site() {
	local file=$1 func=$2
	shift 2
	pprof -raw "$@" "$file" 2>/dev/null | awk -v f="$func" '
		/^Samples:/ { s = 1; next }
		/^Locations/ { s = 0; l = 1; next }
		/^Mappings/ { l = 0 }
		s && /: / && $1 ~ /^[0-9]+$/ {
			n++; split($0, parts, ":"); nv = split(parts[1], v, " ")
			for (i = 1; i <= nv; i++) val[n, i] = v[i]
			nl[n] = split(parts[2], ids, " ")
			for (i = 1; i <= nl[n]; i++) loc[n, i] = ids[i]
			next }
		l && /^ *[0-9]+: / { id = $1; sub(/:/, "", id); if ($4 == f) has[id] = 1; next }
		l && $1 == f { has[id] = 1 }
		END { if (!nv) exit
			for (k = 1; k <= n; k++) {
				hit = 0
				for (i = 1; i <= nl[k]; i++) if (loc[k, i] in has) hit = 1
				if (hit) for (i = 1; i <= nv; i++) sum[i] += val[k, i] }
			for (i = 1; i <= nv; i++) printf "%s%.0f", (i > 1 ? " " : ""), sum[i]
			print "" }'
}

# printed FILE SITE: "bytes blocks live_bytes live_blocks" as heap_work printed them.
printed() {
	sed -nE "s/^$2 bytes=([0-9]+) blocks=([0-9]+) live_bytes=([0-9]+) live_blocks=([0-9]+)$/\1 \2 \4 \3/p" "$1"
}
