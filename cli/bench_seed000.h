/* bench_seed000.h - `ffnn bench seed000`: the seed-000 experiments (784-256relu-10 on
 * (Fashion-)MNIST: CPU vs GPU, batch, hidden width, 1-D and 2-D launch shapes,
 * learning rate, evaluation batch), writing a CSV and a markdown table. */
#ifndef FFNN_CLI_BENCH_SEED000_H
#define FFNN_CLI_BENCH_SEED000_H

/* The --help text. */
extern const char *ffnn_bench_seed000_usage;

/* Run the suite: argv[0] is "seed000". Exit status: 0 when every run passed its check
 * (or was skipped, with the reason), 1 when one failed or on an error, 2 on a usage
 * error. */
int ffnn_bench_seed000(int argc, char **argv);

#endif
