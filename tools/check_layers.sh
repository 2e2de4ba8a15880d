#!/bin/sh
# check_layers.sh - the layer rule: a file includes project headers of its own layer or
# of the layers to its left only.
#
#   core (src/core) <- data (src/data) <- io (src/io) <- backend (src/backend/...)
#     <- parallel (src/parallel)
#     <- strategy (src/strategy) <- train (src/train) <- {cli, lab, bench}
#
# include/ffnn.h may be included everywhere; tests/ is not checked (it may include
# anything). Scans every .c/.h/.cu/.cuh under src/ cli/ lab/ bench/ for #include "...",
# resolves the header as the compiler does (the including file's folder, then
# -Iinclude, then -Isrc; then the repository root, cli/, lab/, bench/ in case a -I
# adds them; a header found nowhere - noted on stderr - belongs to the layer its path
# prefix names - "core/", "data/", "io/", "backend/", "parallel/", "strategy/", "train/" - or
# else to the including file's folder) and prints, for each violation,
#   FILE:LINE: includes LAYER header "NAME" (this file is LAYER)
# A header outside every layer (e.g. src/x.h) is "unlayered": including one is a
# violation, and so is any project include of an unlayered file. Exit status 1 when
# there is a violation, else 0. Run from anywhere: it works on the repository it is in.
set -eu

cd "$(dirname "$0")/.."

dirs=""
for d in src cli lab bench; do
    [ -d "$d" ] && dirs="$dirs $d"
done
[ -n "$dirs" ] || { echo "check_layers: no src/ cli/ lab/ bench/ here" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# every file that an include could name (to resolve names as the compiler does)
find $dirs include tests -type f 2>/dev/null | sed 's|^\./||' > "$tmp/all"
# the files checked
# shellcheck disable=SC2086
find $dirs -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) |
    sed 's|^\./||' | LC_ALL=C sort > "$tmp/files"
: > "$tmp/includes"
while IFS= read -r f; do
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
        sed "s|^|$f:|" >> "$tmp/includes" || true
done < "$tmp/files"

awk -v allfile="$tmp/all" '
BEGIN {
    while ((getline p < allfile) > 0) exists[p] = 1
    close(allfile)
    rank["core"] = 0; rank["data"] = 1; rank["io"] = 2; rank["backend"] = 3
    rank["parallel"] = 4; rank["strategy"] = 5; rank["train"] = 6
    rank["cli"] = 7; rank["lab"] = 7; rank["bench"] = 7
    rank["tests"] = 8
    bad = 0
}
function dirname(p) { if (sub(/\/[^\/]*$/, "", p)) return p; return "." }
function normalize(p,    n, i, k, part, out, res) {      # a/b/../c -> a/c, ./a -> a
    n = split(p, part, "/"); k = 0
    for (i = 1; i <= n; i++) {
        if (part[i] == "" || part[i] == ".") continue
        if (part[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
        out[++k] = part[i]
    }
    res = ""
    for (i = 1; i <= k; i++) res = res (i > 1 ? "/" : "") out[i]
    return res
}
function layer_of(p) {                                   # the layer of a repository path
    if (p == "include/ffnn.h") return "public"
    if (p ~ /^src\/(core|data|io|backend|parallel|strategy|train)\//) { split(p, a, "/"); return a[2] }
    if (p ~ /^(cli|lab|bench|tests)\//) { split(p, a, "/"); return a[1] }
    return "unlayered"
}
{
    # FILE:LINE:#include "NAME" ...
    file = $0; sub(/:.*/, "", file)
    rest = substr($0, length(file) + 2)
    line = rest; sub(/:.*/, "", line)
    name = rest; sub(/^[^"]*"/, "", name); sub(/".*/, "", name)
    self = layer_of(file)

    # the folder of the file, then -Iinclude -Isrc (the Makefile), then the places an
    # added -I could point to
    nc = split(dirname(file) " include src . cli lab bench", dir, " ")
    path = ""
    for (i = 1; i <= nc; i++) {
        c = normalize(dir[i] "/" name)
        if (c in exists) { path = c; break }
    }
    if (path == "") {
        if (name ~ /^(core|data|io|backend|parallel|strategy|train)\//) path = "src/" name
        else path = normalize(dirname(file) "/" name)
        printf "check_layers: note: %s:%s: \"%s\" not found (taken as %s)\n", file, line, name, path > "/dev/stderr"
    }
    hl = layer_of(path)
    if (hl == "public") next
    if (hl == "unlayered" || self == "unlayered" || rank[hl] > rank[self]) {
        printf "%s:%s: includes %s header \"%s\" (this file is %s)\n", file, line, hl, name, self
        bad++
    }
}
END {
    if (bad) printf "check_layers: %d include(s) against the layer rule\n", bad
    else print "check_layers: ok"
    exit bad ? 1 : 0
}
' "$tmp/includes"
