/* bench_seed004.h - `ffnn bench seed004`: the seed-004 benchmark (accuracy and
 * training time of its three networks, per-op times of one training step with CUDA
 * events, and the loss reduction three ways), writing a CSV and a markdown table. */
#ifndef FFNN_CLI_BENCH_SEED004_H
#define FFNN_CLI_BENCH_SEED004_H

/* The --help text. */
extern const char *ffnn_bench_seed004_usage;

/* Run the suite: argv[0] is "seed004". Exit status: 0 when every measurement passed
 * its check (or was skipped, with the reason), 1 when one failed or on an error, 2 on
 * a usage error. */
int ffnn_bench_seed004(int argc, char **argv);

#endif
