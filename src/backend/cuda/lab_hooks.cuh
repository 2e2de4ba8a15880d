/*
 * lab_hooks.cuh - entry points of the cuda backend that exist for the kernel lab and
 * the benchmarks (lab/, bench/) only; nothing in src/ calls them. Kept C (the
 * benchmarks are C files) and declared only here.
 */
#ifndef FFNN_CUDA_LAB_HOOKS_CUH
#define FFNN_CUDA_LAB_HOOKS_CUH

#include "ffnn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Cost of one grid-wide barrier (persistent.cu): `blocks` blocks of 512 threads (0:
 * one per SM; *blocks_used says how many), `iters` barriers in one cooperative
 * launch, median of 5 launches: *us_ours for the persistent kernel's counter
 * barrier, *us_cg for cooperative_groups' grid.sync(). */
ffnn_status ffnn_cuda_bench_grid_barrier(int blocks, int iters, int *blocks_used,
                                         double *us_ours, double *us_cg);

#ifdef __cplusplus
}
#endif
#endif
