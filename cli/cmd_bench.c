/* cmd_bench.c - ffnn bench SUITE [...]: runs the separate program ffnn-bench (built from
 * bench/ and lab/, git-style: `ffnn bench X` is `ffnn-bench X`), so that the ffnn binary
 * and libffnn carry no benchmark code. ffnn-bench is looked for beside the running ffnn
 * (build/ffnn-bench next to build/ffnn, PREFIX/bin/ffnn-bench next to PREFIX/bin/ffnn),
 * then on PATH; the arguments go to it as given. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "exe_path.h"

#define BENCH_PROGRAM "ffnn-bench"

const char *const ffnn_cli_bench_usage =
    "usage: ffnn bench SUITE [options]\n"
    "\n"
    "Run a benchmark suite of ffnn-bench, the separate benchmark program (bench/ and\n"
    "lab/ of the source tree; make builds build/ffnn-bench, make install installs it\n"
    "beside ffnn). It is looked for beside this ffnn, then on PATH.\n"
    "'ffnn bench --help' lists the suites, 'ffnn bench SUITE --help' a suite's options;\n"
    "bench/README.md says which question each suite answers.\n";

/* dir/ffnn-bench where dir is the folder of the running executable; 0 if it is there. */
static int find_beside(char *path, size_t size)
{
    static const char *const name[] = {BENCH_PROGRAM};
    return ffnn_cli_beside_exe(name, 1, X_OK, path, size);
}

/* Run ffnn bench: argv[0] is "bench". Execs ffnn-bench with argv[1..]; returns only when
 * it could not be run (exit status 1, with what to do). */
int ffnn_cli_bench(int argc, char **argv)
{
    char beside[PATH_MAX + 16];
    int found_beside = find_beside(beside, sizeof beside) == 0;
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!args) {
        fprintf(stderr, "ffnn bench: out of memory\n");
        return 1;
    }
    args[0] = found_beside ? beside : BENCH_PROGRAM;
    for (int i = 1; i < argc; i++)
        args[i] = argv[i];
    fflush(stdout);
    fflush(stderr);
    if (found_beside)
        execv(beside, args);
    else
        execvp(BENCH_PROGRAM, args);
    int err = errno;
    if (found_beside || err != ENOENT)
        fprintf(stderr, "ffnn bench: cannot run %s: %s\n", args[0], strerror(err));
    else
        fprintf(stderr, "ffnn bench: the benchmark program " BENCH_PROGRAM " is not installed "
                "(looked beside ffnn and on PATH); build it from the source tree with 'make' "
                "(build/" BENCH_PROGRAM ") or install it with 'make install'\n");
    free(args);
    return 1;
}
