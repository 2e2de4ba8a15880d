/* bench.h - `ffnn bench SUITE`: the benchmark suites (one file each, cli/bench_*.c). */
#ifndef FFNN_CLI_BENCH_H
#define FFNN_CLI_BENCH_H

/* The --help text of `ffnn bench` (lists the suites). */
extern const char *ffnn_cli_bench_usage;

/* Run `ffnn bench SUITE [options]`: argv[0] is "bench". Exit status: the suite's,
 * 2 on a usage error. */
int ffnn_cli_bench(int argc, char **argv);

/* ---- helpers shared by the suites ---- */

#include <stddef.h>

/* Monotonic clock in seconds. */
double ffnn_bench_now_s(void);
/* The CPU's model name from /proc/cpuinfo ("unknown CPU" when unreadable). */
void ffnn_bench_cpu_model(char *buf, size_t size);
/* mkdir -p path; 0 on success (errno set on failure). */
int ffnn_bench_make_dirs(const char *path);
/* Parse an integer option value in [lo, hi]; on error print "ffnn bench SUITE: ..." to
 * stderr and return -1. */
int ffnn_bench_parse_int(const char *suite, const char *opt, const char *s, long lo, long hi,
                         int *out);
/* Parse a comma-separated list of at most max integers in [lo, hi] into out; *n gets
 * the count. Errors as ffnn_bench_parse_int. */
int ffnn_bench_parse_list(const char *suite, const char *opt, const char *s, long lo,
                          long hi, int *out, int *n, int max);

#endif
