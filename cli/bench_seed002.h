/* bench_seed002.h - `ffnn bench seed002`: the seed-002 benchmark (K-layer forward of
 * a 1-D locally connected layer on cuda global / shared and OpenMP), writing a CSV
 * and a markdown table. */
#ifndef FFNN_CLI_BENCH_SEED002_H
#define FFNN_CLI_BENCH_SEED002_H

/* The --help text. */
extern const char *ffnn_bench_seed002_usage;

/* Run the suite: argv[0] is "seed002". Exit status: 0 when every configuration ran
 * and passed its check (or was skipped, with the reason), 1 when one failed or on an
 * error, 2 on a usage error. */
int ffnn_bench_seed002(int argc, char **argv);

#endif
