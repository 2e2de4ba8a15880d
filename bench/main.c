/* main.c - ffnn-bench, the benchmark program: `ffnn-bench SUITE [options]`, which
 * `ffnn bench SUITE [options]` runs (cli/cmd_bench.c). It is built from bench/ and lab/
 * and links the library statically (the suites time internal kernels that libffnn.so
 * does not export), so that the ffnn program and libffnn carry no benchmark code.
 * bench/README.md says which question each suite answers. */
#include <stdio.h>
#include <string.h>

#include "suites.h"

static const char *const usage =
    "usage: ffnn bench SUITE [options]      (or: ffnn-bench SUITE [options])\n"
    "\n"
    "Benchmark suites. Each checks its results before timing them, prints a table and\n"
    "writes SUITE.csv and SUITE_table.md under --out DIR (default build/bench; never a\n"
    "tracked file unless --out names one); 'ffnn bench SUITE --help' for its options.\n"
    "  mnist-mlp       report 000: 784-256relu-10 on (Fashion-)MNIST, CPU reference /\n"
    "                  OpenMP / cuda; batch, hidden, 1-D and 2-D launch shapes, lr,\n"
    "                  evaluation batch, beside the report's T4 numbers\n"
    "  regression-mlp  report 001: whole training runs of 32-Hrelu:nobias-1:nobias on\n"
    "                  synth:regression: cuda naive / tiled and OpenMP, N = 256..25600\n"
    "                  and H = 32..1024, beside the report's T4 times\n"
    "  local1d         report 002: K-layer forward of a 1-D locally connected layer\n"
    "                  (R = 3, sigmoid): cuda global / shared and OpenMP strong / weak\n"
    "                  scaling, unique and reused weights, against the copy ceiling\n"
    "  modular         report 004: its MLPs (2-D points, Fashion-MNIST 0/1 and 10\n"
    "                  classes): accuracy and training time on cuda and OpenMP, one\n"
    "                  training step op by op, the loss reduction by atomics / shared\n"
    "                  tree / warp shuffles\n"
    "  kernels         the matmul kernel lab: a dense layer's forward, weight and input\n"
    "                  gradient as naive / tiled / transposed / register-blocked / fused\n"
    "                  / tensor-core / cuBLAS kernels, checked, timed against the ceiling\n"
    "  barrier         the cost of one grid-wide barrier: the persistent strategy's\n"
    "                  counter barrier against cooperative_groups' grid.sync()\n";

typedef struct suite {
    const char *name;
    const char *old_name; /* accepted as well, not listed (the suites' first names) */
    int (*run)(int argc, char **argv);
} suite;

static const suite suites[] = {
    {"mnist-mlp", "seed000", ffnn_bench_mnist_mlp},
    {"regression-mlp", "seed001", ffnn_bench_regression_mlp},
    {"local1d", "seed002", ffnn_bench_local1d},
    {"modular", "seed004", ffnn_bench_modular},
    {"kernels", NULL, ffnn_bench_kernels},
    {"barrier", NULL, ffnn_bench_barrier},
};

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        const suite *s = &suites[i];
        if (strcmp(argv[1], s->name) == 0) return s->run(argc - 1, argv + 1);
        if (s->old_name && strcmp(argv[1], s->old_name) == 0) {
            fprintf(stderr, "ffnn bench: '%s' is now called '%s'\n", s->old_name, s->name);
            argv[1] = (char *)s->name;
            return s->run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "ffnn bench: unknown suite '%s'\n\n%s", argv[1], usage);
    return 2;
}
