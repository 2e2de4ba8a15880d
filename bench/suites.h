/* suites.h - the suites of `ffnn bench` (one file each, named for what it measures),
 * dispatched by bench.c. Each takes argv[0] = its name and returns its exit status: 0
 * when every measurement passed its check (or was skipped, with the reason), 1 when
 * one failed, on an error, or when it needs a GPU this build or machine lacks, 2 on a
 * usage error. Each prints its usage for --help. */
#ifndef FFNN_BENCH_SUITES_H
#define FFNN_BENCH_SUITES_H

/* seed000 (mnist_sweeps.c): 784-256relu-10 on (Fashion-)MNIST, CPU vs GPU and sweeps. */
int ffnn_bench_seed000(int argc, char **argv);
/* seed001 (regression_runs.c): whole training runs of a regression MLP vs N and H. */
int ffnn_bench_seed001(int argc, char **argv);
/* seed002 (local1d_forward.c): K-layer forward of a 1-D locally connected layer. */
int ffnn_bench_seed002(int argc, char **argv);
/* seed004 (mlp_step.c): accuracy and time, one step op by op, the loss reduction. */
int ffnn_bench_seed004(int argc, char **argv);
/* kernels (matmul_kernels.c): the matmul kernel lab. */
int ffnn_bench_kernels(int argc, char **argv);
/* barrier (grid_barrier.c): the cost of one grid-wide barrier. */
int ffnn_bench_barrier(int argc, char **argv);

#endif
