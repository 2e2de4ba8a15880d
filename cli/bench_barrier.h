/* bench_barrier.h - `ffnn bench barrier`: the cost of one grid-wide barrier (the
 * persistent strategy's synchronisation), ours against cooperative_groups'. */
#ifndef FFNN_CLI_BENCH_BARRIER_H
#define FFNN_CLI_BENCH_BARRIER_H

/* argv[0] is "barrier". Exit status 0, 1 on an error or without a GPU, 2 on usage. */
int ffnn_bench_barrier(int argc, char **argv);

#endif
