#!/bin/sh
# install_test.sh - the installed library as a user meets it (run by tests/test_install.c).
#   install_test.sh install BUILD [MAKE ARGS...]
#       make install into a temporary DESTDIR (PREFIX /usr/local); checks the files,
#       the soname and its links and the version; builds examples/*.c against the
#       installed tree with pkg-config, shared and static (libffnn.a linked in), and
#       runs them (train_mnist: 1 epoch on Fashion-MNIST); runs the installed ffnn
#       with no library path; make uninstall then leaves no file behind.
#   install_test.sh man BUILD
#       every option of 'ffnn CMD --help' (train, eval, predict) is in docs/ffnn.1.
#   install_test.sh clidoc BUILD
#       every option of 'ffnn CMD --help' (train, eval, predict, info, plot, export) is in
#       docs/CLI.md, the CLI reference (--kernels, an alias of --strategy, is not).
#   install_test.sh wait BUILD
#       ffnn train runs with the environment it was given: no GOMP_SPINCOUNT or
#       OMP_WAIT_POLICY added (nothing in it depends on OpenMP's waiting policy), the
#       user's own passed through untouched.
# Exit status 0: passed; 77: skipped (the reason on stderr); else failed.
set -eu
mode=$1
build=$2
shift 2
fail() { echo "install_test: $*" >&2; exit 1; }

if [ "$mode" = man ]; then
    for cmd in train eval predict; do
        for opt in $("$build/ffnn" "$cmd" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
            esc=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
            grep -q -- "$esc" docs/ffnn.1 || fail "ffnn $cmd $opt is not in docs/ffnn.1"
        done
    done
    exit 0
fi
if [ "$mode" = clidoc ]; then
    for cmd in train sweep eval predict info plot export; do
        for opt in $("$build/ffnn" "$cmd" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
            [ "$opt" = --kernels ] && continue
            grep -qE -- "(^|[\` [(|])$opt([^a-z0-9-]|\$)" docs/CLI.md ||
                fail "ffnn $cmd $opt is not in docs/CLI.md"
        done
    done
    exit 0
fi
if [ "$mode" = wait ]; then
    # the environment ffnn train runs with (read from /proc once it has started):
    # the one it was given
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/ffnn-wait.XXXXXX")
    pid=""
    trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
    n=0
    probe() { # probe EXPECTED-LINE UNEXPECTED-PATTERN [VAR=VALUE ...]
        want=$1 unwanted=$2
        shift 2
        n=$((n + 1))
        out=$tmp/out.$n # a fresh file: no line of an earlier run can match
        env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "$@" "$build/ffnn" train \
            --data synth:points:100000 --arch 2-64relu-2 --epochs 1000 --device cpu \
            > "$out" 2>&1 &
        pid=$!
        i=0
        until grep -qs "^arch " "$out"; do # started
            i=$((i + 1))
            [ $i -lt 300 ] || fail "ffnn train did not start: $(cat "$out")"
            sleep 0.1
        done
        tr '\0' '\n' < "/proc/$pid/environ" > "$tmp/env"
        kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
        grep -qx "$want" "$tmp/env" || fail "ffnn train ($*): no $want in its environment"
        if grep -q "$unwanted" "$tmp/env"; then
            fail "ffnn train ($*): $(grep "$unwanted" "$tmp/env") in its environment"
        fi
    }
    probe FFNN_WAIT_PROBE=1 '^\(GOMP_SPINCOUNT\|OMP_WAIT_POLICY\)=' FFNN_WAIT_PROBE=1
    probe OMP_WAIT_POLICY=passive '^GOMP_SPINCOUNT=' OMP_WAIT_POLICY=passive
    probe GOMP_SPINCOUNT=300000 '^OMP_WAIT_POLICY=' GOMP_SPINCOUNT=300000
    exit 0
fi
[ "$mode" = install ] || fail "unknown mode $mode"
command -v pkg-config >/dev/null 2>&1 ||
    { echo "pkg-config not installed (apt-get install pkg-config)" >&2; exit 77; }
data=/usr/share/datasets/fashion-mnist   # for train_mnist; without it, that run is left out
have_data=0
if [ -r "$data/t10k-labels-idx1-ubyte.gz" ] || [ -r "$data/t10k-labels-idx1-ubyte" ]; then
    have_data=1
else
    echo "install_test: no $data (apt-get install dataset-fashion-mnist): train_mnist is" \
         "built but not run" >&2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ffnn-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
root=$tmp/root
prefix=/usr/local
lib=$root$prefix/lib
${MAKE:-make} -s BUILD="$build" DESTDIR="$root" PREFIX="$prefix" "$@" install >"$tmp/make.log" 2>&1 ||
    { cat "$tmp/make.log" >&2; fail "make install failed"; }

major=$(sed -n 's/^#define FFNN_VERSION_MAJOR \([0-9]*\).*/\1/p' include/ffnn.h)
minor=$(sed -n 's/^#define FFNN_VERSION_MINOR \([0-9]*\).*/\1/p' include/ffnn.h)
patch=$(sed -n 's/^#define FFNN_VERSION_PATCH \([0-9]*\).*/\1/p' include/ffnn.h)
version=$major.$minor.$patch
for f in bin/ffnn bin/ffnn-bench lib/libffnn.a "lib/libffnn.so.$version" include/ffnn.h lib/pkgconfig/ffnn.pc \
         share/ffnn/plot_log.py share/man/man1/ffnn.1; do
    [ -f "$root$prefix/$f" ] && [ ! -L "$root$prefix/$f" ] || fail "$prefix/$f not installed"
done
[ "$(readlink "$lib/libffnn.so.$major")" = "libffnn.so.$version" ] || fail "libffnn.so.$major link"
[ "$(readlink "$lib/libffnn.so")" = "libffnn.so.$major" ] || fail "libffnn.so link"
soname=$(readelf -d "$lib/libffnn.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libffnn.so.$major" ] || fail "soname '$soname', expected libffnn.so.$major"
grep -q "\"ffnn $version\"" "$root$prefix/share/man/man1/ffnn.1" || fail "man page version"
# the modules beside the library (docs/BUILD.md "The CUDA and MPI modules")
modules=$(${MAKE:-make} -s --no-print-directory BUILD="$build" "$@" print-modules)
for m in $modules; do
    [ -f "$lib/$(basename "$m")" ] || fail "$prefix/lib/$(basename "$m") not installed"
done

# the installed program runs without a library path and reports the version
out=$(env -u LD_LIBRARY_PATH "$root$prefix/bin/ffnn" --version)
case "$out" in "ffnn $version "*) ;; *) fail "ffnn --version says '$out'" ;; esac
# ffnn bench runs the ffnn-bench installed beside it (not one on PATH)
out=$(env -u LD_LIBRARY_PATH PATH=/nonexistent "$root$prefix/bin/ffnn" bench --help) ||
    fail "ffnn bench --help failed"
case "$out" in "usage: ffnn bench SUITE"*) ;; *) fail "ffnn bench --help says '$out'" ;; esac

# the staged prefix stands in for $prefix (not PKG_CONFIG_SYSROOT_DIR: it would prefix
# every -L, also a CJSON_DIR's, which lies outside the staged tree)
export PKG_CONFIG_PATH="$lib/pkgconfig"
pkgconf() { pkg-config --define-variable=prefix="$root$prefix" "$@"; }
[ "$(pkgconf --modversion ffnn)" = "$version" ] || fail "pkg-config --modversion ffnn"
cc=${CC:-cc}
for src in examples/*.c; do
    name=$(basename "$src" .c)
    # shared: the installed libffnn.so.MAJOR (an rpath stands in for ldconfig here)
    # shellcheck disable=SC2046
    $cc -std=c11 -Wall -Wextra -Werror -o "$tmp/$name-shared" "$src" \
        $(pkgconf --cflags --libs ffnn) -Wl,-rpath,"$lib" || fail "$name: shared link"
    readelf -d "$tmp/$name-shared" | grep -q "NEEDED.*\[libffnn.so.$major\]" ||
        fail "$name-shared does not load libffnn.so.$major"
    # static: libffnn.a linked in, its dependencies from Libs.private / Requires.private
    # shellcheck disable=SC2046
    $cc -std=c11 -Wall -Wextra -Werror -o "$tmp/$name-static" "$src" \
        $(pkgconf --cflags ffnn) -Wl,--as-needed -Wl,-Bstatic -lffnn -Wl,-Bdynamic \
        $(pkgconf --static --libs ffnn) || fail "$name: static link"
    if readelf -d "$tmp/$name-static" | grep -q "libffnn"; then
        fail "$name-static still loads libffnn.so"
    fi
    # no GPU library for a program that does not use a GPU: the CUDA backend is a module
    for exe in "$tmp/$name-static" "$tmp/$name-shared"; do
        if readelf -d "$exe" | grep -E "NEEDED.*(libcublas|libnccl|libcudart|libcuda\.)"; then
            fail "$(basename "$exe") needs a CUDA library"
        fi
    done
    for kind in shared static; do
        exe=$tmp/$name-$kind
        if [ "$name" = train_mnist ] && [ "$have_data" = 0 ]; then
            continue
        elif [ "$name" = train_mnist ]; then
            "$exe" "$data" 1 "$tmp/model.safetensors" > "$tmp/out" 2>&1 ||
                { cat "$tmp/out" >&2; fail "$name-$kind failed"; }
            grep -q "model.safetensors: test_loss .* test_accuracy" "$tmp/out" ||
                { cat "$tmp/out" >&2; fail "$name-$kind: no evaluation of the loaded model"; }
        else
            "$exe" > "$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "$name-$kind failed"; }
        fi
        grep -q "test_accuracy" "$tmp/out" || fail "$name-$kind printed no accuracy"
    done
done

${MAKE:-make} -s BUILD="$build" DESTDIR="$root" PREFIX="$prefix" "$@" uninstall >"$tmp/make.log" 2>&1 ||
    { cat "$tmp/make.log" >&2; fail "make uninstall failed"; }
left=$(find "$root" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
exit 0
