/* bench_seed001.h - `ffnn bench seed001`: the seed-001 benchmark (whole training runs
 * of 32-Hrelu:nobias-1:nobias on synth:regression with cuda naive, cuda tiled and the
 * OpenMP backend), writing a CSV and a markdown table. */
#ifndef FFNN_CLI_BENCH_SEED001_H
#define FFNN_CLI_BENCH_SEED001_H

/* The --help text. */
extern const char *ffnn_bench_seed001_usage;

/* Run the suite: argv[0] is "seed001". Exit status: 0 when every run passed its check
 * (or was skipped, with the reason), 1 when one failed or on an error, 2 on a usage
 * error. */
int ffnn_bench_seed001(int argc, char **argv);

#endif
