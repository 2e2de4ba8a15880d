/* bench_kernels.h - `ffnn bench kernels`: the matmul kernel lab (the three matmuls of
 * a dense layer in six variants, each checked against the CPU reference, then timed
 * with CUDA events), writing a CSV and a markdown table. */
#ifndef FFNN_CLI_BENCH_KERNELS_H
#define FFNN_CLI_BENCH_KERNELS_H

/* The --help text. */
extern const char *ffnn_bench_kernels_usage;

/* Run the suite: argv[0] is "kernels". Exit status: 0 when every variant passed its
 * check, 1 when one failed, on an error, or without a CUDA GPU; 2 on a usage error. */
int ffnn_bench_kernels(int argc, char **argv);

#endif
