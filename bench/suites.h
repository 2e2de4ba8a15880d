/* suites.h - the suites of ffnn-bench (`ffnn bench SUITE`; one file each, named for what
 * it measures), dispatched by main.c. Each takes argv[0] = its name and returns its exit
 * status: 0 when every measurement passed its check (or was skipped, with the reason),
 * 1 when one failed, on an error, or when it needs a GPU this build or machine lacks, 2
 * on a usage error. Each prints its usage for --help. */
#ifndef FFNN_BENCH_SUITES_H
#define FFNN_BENCH_SUITES_H

/* mnist-mlp (mnist_mlp.c): report 000's 784-256relu-10 on (Fashion-)MNIST, CPU vs GPU
 * and its sweeps. */
int ffnn_bench_mnist_mlp(int argc, char **argv);
/* regression-mlp (regression_mlp.c): report 001's whole training runs of a regression
 * MLP vs N and H. */
int ffnn_bench_regression_mlp(int argc, char **argv);
/* local1d (local1d.c): report 002's K-layer forward of a 1-D locally connected layer. */
int ffnn_bench_local1d(int argc, char **argv);
/* modular (modular.c): report 004's networks: accuracy and time, one step op by op, the
 * loss reduction. */
int ffnn_bench_modular(int argc, char **argv);
/* kernels (kernels.c): the matmul kernel lab. */
int ffnn_bench_kernels(int argc, char **argv);
/* barrier (barrier.c): the cost of one grid-wide barrier. */
int ffnn_bench_barrier(int argc, char **argv);

#endif
