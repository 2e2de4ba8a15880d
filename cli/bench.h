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

/* CSV cells: a text field (quoted when it holds ',', '"' or a newline) and a number
 * followed by ',' (empty for NaN). */
#include <stdio.h>
void ffnn_bench_csv_field(FILE *f, const char *s);
void ffnn_bench_csv_num(FILE *f, double v);

/* Write a suite's results: OUT/SUITE.csv through write_csv(path), OUT/SUITE_table.md
 * through table(f, ctx), the table again on stdout, then one "wrote ..." line (with
 * fail_note when failed or a write failed). Returns 1 when a file could not be
 * written, else 0; errors name the path. */
typedef void (*ffnn_bench_table_fn)(FILE *f, const void *ctx);
int ffnn_bench_save(const char *suite, const char *out, int (*write_csv)(const char *path),
                    ffnn_bench_table_fn table, const void *ctx, double seconds, int failed,
                    const char *fail_note);

#endif
