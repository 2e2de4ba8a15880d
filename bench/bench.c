/* bench.c - `ffnn bench SUITE`: dispatch to the benchmark suites (suites.h). */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "suites.h"

const char *ffnn_cli_bench_usage =
    "usage: ffnn bench SUITE [options]\n"
    "\n"
    "Benchmark suites (each checks its results before timing them, prints a table and\n"
    "writes a CSV and a markdown table; 'ffnn bench SUITE --help' for its options):\n"
    "  seed000   784-256relu-10 on (Fashion-)MNIST: CPU reference / OpenMP / cuda,\n"
    "            batch, hidden, 1-D and 2-D launch shapes, lr, evaluation batch,\n"
    "            beside the seed's published T4 numbers\n"
    "  seed001   whole training runs of 32-Hrelu:nobias-1:nobias on synth:regression:\n"
    "            cuda naive / tiled and OpenMP, N = 256..25600 and H = 32..1024,\n"
    "            beside the seed's published T4 times\n"
    "  seed002   K-layer forward of a 1-D locally connected layer (R = 3, sigmoid):\n"
    "            cuda global / shared and OpenMP strong / weak scaling, unique and\n"
    "            reused weights, against the device's copy ceiling\n"
    "  seed004   seed 004's MLPs (2-D points, Fashion-MNIST 0/1 and 10 classes):\n"
    "            accuracy and training time on cuda and OpenMP, one training step op\n"
    "            by op with CUDA events, and the loss reduction by atomics / shared\n"
    "            tree / warp shuffles\n"
    "  kernels   the matmul kernel lab: a dense layer's forward, weight and input\n"
    "            gradient as naive / tiled / transposed / register-blocked / fused /\n"
    "            cuBLAS kernels, checked, timed against the FP32 ceiling\n"
    "  barrier   the cost of one grid-wide barrier: the persistent strategy's counter\n"
    "            barrier against cooperative_groups' grid.sync()\n";

typedef struct suite {
    const char *name;
    int (*run)(int argc, char **argv);
} suite;

static const suite suites[] = {
    {"seed000", ffnn_bench_seed000},
    {"seed001", ffnn_bench_seed001},
    {"seed002", ffnn_bench_seed002},
    {"seed004", ffnn_bench_seed004},
    {"kernels", ffnn_bench_kernels},
    {"barrier", ffnn_bench_barrier},
};

int ffnn_cli_bench(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(ffnn_cli_bench_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
        if (strcmp(argv[1], suites[i].name) == 0) return suites[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ffnn bench: unknown suite '%s'\n\n%s", argv[1], ffnn_cli_bench_usage);
    return 2;
}
