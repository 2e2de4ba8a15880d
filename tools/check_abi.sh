#!/bin/sh
# check_abi.sh LIB.so HEADER - the shared library's ABI is exactly the header's functions.
#
# Lists the symbols LIB.so defines in its dynamic symbol table (nm -D --defined-only)
# and the functions HEADER declares (comments, strings and preprocessor lines removed;
# function pointer typedefs and struct members are not functions), and fails, listing
# the differences both ways, unless the two sets are equal. Also fails when a function
# of HEADER is declared without FFNN_API (it would be hidden: -fvisibility=hidden).
# Run by `make check` / `make test` as tools/check_abi.sh build/libffnn.so include/ffnn.h.
#
# check_abi.sh --version-script HEADER - prints a linker version script that keeps the
# header's functions global and makes every other symbol local. The Makefile links
# libffnn.so with it: -fvisibility=hidden alone lets some symbols through (GCC 12 gives
# the ifunc of a target_clones function default visibility whatever its declaration
# says, src/backend/omp/). It cannot export what is hidden: a function of the header
# without FFNN_API stays hidden, and this check reports it.
#
# check_abi.sh --module MODULE.so ENTRY - a module of libffnn (the CUDA module,
# src/backend/module.h; the MPI module, src/parallel/mpi_module.h) exports its entry
# point ENTRY and nothing else (it is not part of libffnn's ABI: libffnn finds it
# with dlsym). Run by `make check` for each module of the build.
set -eu

if [ $# -eq 3 ] && [ "$1" = "--module" ]; then
    exported=$(nm -D --defined-only "$2" | awk 'NF >= 3 && $2 != "A" { n = $3; sub(/@.*/, "", n); print n }' | sort -u)
    if [ "$exported" != "$3" ]; then
        echo "check_abi: $2 exports, expected $3 alone:"
        echo "$exported" | sed 's/^/    /'
        exit 1
    fi
    echo "check_abi: ok: $2 exports its entry point $3 alone"
    exit 0
fi

mode=check
if [ $# -eq 2 ] && [ "$1" = "--version-script" ]; then
    mode=map
    hdr=$2
elif [ $# -eq 2 ]; then
    lib=$1
    hdr=$2
    if [ ! -r "$lib" ]; then
        echo "check_abi: cannot read $lib" >&2
        exit 2
    fi
else
    echo "usage: $0 LIB.so HEADER | $0 --version-script HEADER" >&2
    exit 2
fi
if [ ! -r "$hdr" ]; then
    echo "check_abi: cannot read $hdr" >&2
    exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# The functions the header declares: one line "NAME API" per declaration (API is 1
# when the declaration carries FFNN_API, else 0).
awk '
{ text = text $0 "\n" }
END {
    # 1. Remove comments, the contents of string and character literals, and
    #    preprocessor lines (with their backslash continuations).
    n = length(text); out = ""; i = 1; bol = 1
    while (i <= n) {
        c = substr(text, i, 1); c2 = substr(text, i, 2)
        if (bol && c == "#") {                       # preprocessor line
            while (i <= n) {
                c = substr(text, i, 1)
                if (c == "\\" && substr(text, i + 1, 1) == "\n") { i += 2; continue }
                if (c == "\n") break
                i++
            }
            continue
        }
        if (c2 == "/*") {
            j = index(substr(text, i + 2), "*/")
            if (j == 0) i = n + 1; else i = i + 2 + j + 1
            out = out " "; continue
        }
        if (c2 == "//") {
            while (i <= n && substr(text, i, 1) != "\n") i++
            continue
        }
        if (c == "\"" || c == "\047") {
            q = c; i++
            while (i <= n) {
                d = substr(text, i, 1)
                if (d == "\\") { i += 2; continue }
                i++
                if (d == q) break
            }
            out = out q q; bol = 0; continue
        }
        out = out c
        if (c == "\n") bol = 1
        else if (c != " " && c != "\t") bol = 0
        i++
    }
    # 2. Split into statements at ; { } outside parentheses; keep those at file scope
    #    (an extern "C" { } block does not count as a level).
    gsub(/[\t\n]/, " ", out)
    n = length(out); stmt = ""; paren = 0; depth = 0; sp = 0
    for (i = 1; i <= n; i++) {
        c = substr(out, i, 1)
        if (c == "(") paren++
        else if (c == ")") paren--
        if (paren == 0 && (c == ";" || c == "{" || c == "}")) {
            if (c == "{") {
                extern_c = (stmt ~ /^[ ]*extern[ ]*""[ ]*$/)
                stack[++sp] = extern_c
                if (!extern_c) depth++
            } else if (c == "}") {
                if (sp > 0 && !stack[sp--]) depth--
            } else if (depth == 0) {
                declaration(stmt)
            }
            stmt = ""; continue
        }
        stmt = stmt c
    }
}
function declaration(s,    api, p, name) {
    # drop __attribute__((...)) groups
    while (match(s, /__attribute__[ ]*\(\(/)) {
        p = RSTART + RLENGTH; lvl = 2
        while (lvl > 0 && p <= length(s)) {
            ch = substr(s, p, 1)
            if (ch == "(") lvl++; else if (ch == ")") lvl--
            p++
        }
        s = substr(s, 1, RSTART - 1) " " substr(s, p)
    }
    if (s ~ /^[ ]*typedef[^A-Za-z0-9_]/) return
    p = index(s, "(")
    if (p == 0) return
    if (substr(s, p + 1) ~ /^[ ]*[*^]/) {            # (*name)(...): a pointer, but
        rest = substr(s, p + 1)                      # (*name(args))(...): a function
        if (!match(rest, /^[ ]*[*^][ ]*[A-Za-z_][A-Za-z0-9_]*[ ]*\(/)) return
        s = substr(s, 1, p) substr(rest, 1, RSTART + RLENGTH - 2)
        sub(/\([ ]*[*^][ ]*/, " ", s); p = length(s) + 1
        s = s "("
    }
    s2 = substr(s, 1, p - 1)
    if (!match(s2, /[A-Za-z_][A-Za-z0-9_]*[ ]*$/)) return
    name = substr(s2, RSTART, RLENGTH); sub(/[ ]+$/, "", name)
    if (name ~ /^(sizeof|_Alignof|_Static_assert|static_assert|_Generic|__typeof__|typeof)$/) return
    api = (s2 ~ /(^|[^A-Za-z0-9_])FFNN_API([^A-Za-z0-9_]|$)/) ? 1 : 0
    print name, api
}
' "$hdr" > "$tmp/decls"
awk '{ print $1 }' "$tmp/decls" | sort -u > "$tmp/declared"
awk '$2 == 0 { print $1 }' "$tmp/decls" | sort -u > "$tmp/noapi"

if [ "$mode" = map ]; then
    if [ ! -s "$tmp/declared" ]; then
        echo "check_abi: no function declared in $hdr" >&2
        exit 1
    fi
    echo "/* generated from $hdr by tools/check_abi.sh --version-script */"
    echo "{"
    echo "  global:"
    sed 's/.*/    &;/' "$tmp/declared"
    echo "  local:"
    echo "    *;"
    echo "};"
    exit 0
fi

# Defined dynamic symbols: "VALUE TYPE NAME[@VERSION]". Type A (absolute) entries are
# the version nodes of a version script, not symbols of the code.
nm -D --defined-only "$lib" > "$tmp/nm"
awk 'NF >= 3 && $2 != "A" { n = $3; sub(/@.*/, "", n); print n }' "$tmp/nm" | sort -u > "$tmp/exported"

comm -23 "$tmp/exported" "$tmp/declared" > "$tmp/extra"
comm -13 "$tmp/exported" "$tmp/declared" > "$tmp/missing"

status=0
if [ -s "$tmp/extra" ]; then
    echo "check_abi: $lib exports $(wc -l < "$tmp/extra") symbol(s) not declared in $hdr:"
    sed 's/^/    /' "$tmp/extra"
    status=1
fi
if [ -s "$tmp/missing" ]; then
    echo "check_abi: $hdr declares $(wc -l < "$tmp/missing") function(s) that $lib does not export:"
    sed 's/^/    /' "$tmp/missing"
    status=1
fi
if [ -s "$tmp/noapi" ]; then
    echo "check_abi: $hdr declares $(wc -l < "$tmp/noapi") function(s) without FFNN_API:"
    sed 's/^/    /' "$tmp/noapi"
    status=1
fi
if [ "$status" -eq 0 ]; then
    echo "check_abi: ok: $lib exports exactly the $(wc -l < "$tmp/declared") functions of $hdr"
fi
exit "$status"
