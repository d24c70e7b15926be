#!/bin/sh
# rooms.sh [--edges] — the include graph between boxy's rooms (src/ROOM/,
# ui/, store/): for each file, the rooms its #include "..." lines name; then
# every circle between rooms, each edge with the files that make it. Exits 1
# when there is a circle, 0 when the rooms form a line (an acyclic graph).
# --edges also prints every room's outgoing edges.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT

# "FROM TO FILE" for every include that crosses from one room into another.
for f in $(git ls-files 'src/*.c' 'src/*.h' 'ui/*.c' 'ui/*.h' 'store/*.c' 'store/*.h'); do
	case $f in src/*/*) from=${f#src/}; from=${from%%/*} ;; *) from=${f%%/*} ;; esac
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
	while read -r inc; do
		case $inc in */*) ;; *) continue ;; esac      # config.h and the like
		to=${inc%%/*}
		[ -e "src/$inc" ] || [ -e "$inc" ] || continue # a library's header (lwip/...)
		[ "$to" = "$from" ] || echo "$from $to $f"
	done
done | sort -u > "$edges"

[ "${1:-}" = --edges ] && awk '{ print $1 " -> " $2 }' "$edges" | sort -u

# A room is on a circle when it reaches itself: depth-first search from each.
awk '
{ key = $1 " " $2; if (!(key in seen)) { seen[key] = 1; out[$1] = out[$1] " " $2 }
  files[key] = files[key] (files[key] ? ", " : "") $3 }
function reach(a, b, depth,    n, i, next_) {
	if (depth > 40) return 0
	n = split(out[a], next_, " ")
	for (i = 1; i <= n; i++) {
		if (next_[i] == b) { path[depth] = a " -> " b; plen = depth; return 1 }
		if (!(next_[i] in visited)) {
			visited[next_[i]] = 1
			if (reach(next_[i], b, depth + 1)) { path[depth] = a " -> " next_[i]; return 1 }
		}
	}
	return 0
}
END {
	bad = 0
	for (r in out) {
		split("", visited); split("", path)
		if (reach(r, r, 0) && !(r in reported)) {
			bad = 1
			printf "circle:"
			for (i = 0; i <= plen; i++) {
				split(path[i], ab, " -> ")
				reported[ab[1]] = 1
				printf " %s", path[i]
			}
			printf "\n"
			for (i = 0; i <= plen; i++) {
				split(path[i], ab, " -> ")
				printf "  %s: %s\n", path[i], files[ab[1] " " ab[2]]
			}
		}
	}
	exit bad
}' "$edges"
