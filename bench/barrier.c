/* barrier.c - `ffnn bench barrier [--iters N] [--blocks N,N,...]`: microseconds
 * per grid-wide barrier for a range of grid sizes (0 = one block per SM), with the
 * persistent kernel's counter barrier and cooperative_groups' grid.sync()
 * (ffnn_lab_grid_barrier, lab/barrier.cu). Prints a table;
 * writes no files. */
#include <stdio.h>

#include "../lab/barrier.h"
#include "ffnn.h"
#include "harness.h"
#include "suites.h"

#define MAX_GRIDS 32

static const char *usage =
    "usage: ffnn bench barrier [--iters N] [--blocks LIST]\n"
    "  Time one grid-wide barrier of 512-thread blocks: N barriers in one cooperative\n"
    "  launch (default 20000), median of 5 launches, for each grid size in LIST\n"
    "  (default 1,8,32,64,128,0; 0 = one block per SM). Prints us per barrier for the\n"
    "  persistent kernel's barrier (atomic counter + acquire spin) and for\n"
    "  cooperative_groups::this_grid().sync().\n";

int ffnn_bench_barrier(int argc, char **argv)
{
    ffnn_bench_run run;
    ffnn_bench_begin(&run, "barrier", 1, 0);
    int iters = 20000, blocks[MAX_GRIDS] = {1, 8, 32, 64, 128, 0}, n_blocks = 6;
    const ffnn_bench_option opts[] = {
        FFNN_BENCH_OPT_INT("iters", &iters, 1, 10000000),
        FFNN_BENCH_OPT_LIST("blocks", blocks, &n_blocks, MAX_GRIDS, 0, 1 << 20),
        FFNN_BENCH_OPT_END,
    };
    const int parsed = ffnn_bench_parse_options(&run, usage, opts, argc, argv);
    if (parsed != 0) return parsed == 1 ? 0 : 2;
#if !FFNN_HAVE_CUDA
    fprintf(stderr, "%s: this build has no CUDA (nvcc was not found); it needs a CUDA GPU\n",
            run.prog);
    return 1;
#else
    if (ffnn_cuda_device_count() == 0) {
        fprintf(stderr, "%s: needs a CUDA GPU (none visible)\n", run.prog);
        return 1;
    }
    ffnn_bench_gpu(&run, 1);
    printf("grid barrier on %s, %d barriers per launch, median of 5 launches\n", run.gpu_name,
           iters);
    printf("| blocks | ours (us) | cooperative_groups grid.sync (us) |\n|---|---|---|\n");
    for (int i = 0; i < n_blocks; i++) {
        int used = 0;
        double ours = 0, cg = 0;
        if (ffnn_lab_grid_barrier(blocks[i], iters, &used, &ours, &cg) != FFNN_OK) {
            fprintf(stderr, "%s: %s\n", run.prog, ffnn_last_error());
            return 1;
        }
        printf("| %d | %.3f | %.3f |\n", used, ours, cg);
    }
    return 0;
#endif
}
