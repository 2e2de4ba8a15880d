/* bench.h - `ffnn bench SUITE`: the benchmark suites (bench/, outside libffnn). The
 * CLI's bench command calls these two; the suites themselves are in suites.h. */
#ifndef FFNN_BENCH_BENCH_H
#define FFNN_BENCH_BENCH_H

/* The --help text of `ffnn bench` (lists the suites). */
extern const char *ffnn_cli_bench_usage;

/* Run `ffnn bench SUITE [options]`: argv[0] is "bench". Exit status: the suite's,
 * 2 on a usage error. */
int ffnn_cli_bench(int argc, char **argv);

#endif
