#define _POSIX_C_SOURCE 200809L
/* bench_barrier.c - `ffnn bench barrier [--iters N] [--blocks N,N,...]`: microseconds
 * per grid-wide barrier for a range of grid sizes (0 = one block per SM), with
 * the persistent kernel's counter barrier and cooperative_groups' grid.sync(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_barrier.h"
#include "bench_util.h"
#include "ffnn.h"

static const char *usage =
    "usage: ffnn bench barrier [--iters N] [--blocks LIST]\n"
    "  Time one grid-wide barrier of 256-thread blocks: N barriers in one cooperative\n"
    "  launch (default 20000), median of 5 launches, for each grid size in LIST\n"
    "  (default 1,8,32,64,128,0; 0 = one block per SM). Prints us per barrier for the\n"
    "  persistent kernel's barrier (atomic counter + acquire spin) and for\n"
    "  cooperative_groups::this_grid().sync().\n";

int ffnn_bench_barrier(int argc, char **argv)
{
    int iters = 20000;
    const char *list = "1,8,32,64,128,0";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--blocks") && i + 1 < argc) {
            list = argv[++i];
        } else {
            fprintf(stderr, "ffnn bench barrier: unknown argument '%s'\n%s", argv[i], usage);
            return 2;
        }
    }
    if (iters < 1 || iters > 10000000) {
        fprintf(stderr, "ffnn bench barrier: --iters must be in [1, 10000000]\n");
        return 2;
    }
    if (ffnn_cuda_device_count() == 0) {
        fprintf(stderr, "ffnn bench barrier: needs a CUDA GPU (%s)\n",
                ffnn_has_cuda() ? "none visible" : "this build has no CUDA");
        return 1;
    }
    char gpu[200];
    ffnn_cuda_device_name(gpu, sizeof gpu);
    printf("grid barrier on %s, %d barriers per launch, median of 5 launches\n", gpu, iters);
    printf("| blocks | ours (us) | cooperative_groups grid.sync (us) |\n|---|---|---|\n");
    char *copy = strdup(list);
    if (!copy) return 1;
    int rc = 0;
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        int used = 0;
        double ours = 0, cg = 0;
        if (ffnn_cuda_bench_grid_barrier(atoi(tok), iters, &used, &ours, &cg) != FFNN_OK) {
            fprintf(stderr, "ffnn bench barrier: %s\n", ffnn_last_error());
            rc = 1;
            break;
        }
        printf("| %d | %.3f | %.3f |\n", used, ours, cg);
    }
    free(copy);
    return rc;
}
