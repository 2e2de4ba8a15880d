/*
 * barrier.h - the grid-barrier lab (barrier.cu, `ffnn bench barrier`): the cost of one
 * grid-wide barrier, the persistent strategy's (src/backend/cuda/grid_barrier.cuh)
 * against cooperative_groups' grid.sync(). Needs CUDA (FFNN_HAVE_CUDA).
 */
#ifndef FFNN_LAB_BARRIER_H
#define FFNN_LAB_BARRIER_H

#include "ffnn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Cost of one grid-wide barrier: `blocks` blocks of 512 threads (0: one per SM;
 * *blocks_used says how many), `iters` barriers in one cooperative launch, median of 5
 * launches timed with CUDA events: *us_ours (microseconds per barrier) for the
 * persistent kernel's counter barrier, *us_cg for cooperative_groups' grid.sync(). */
ffnn_status ffnn_lab_grid_barrier(int blocks, int iters, int *blocks_used, double *us_ours,
                                  double *us_cg);

#ifdef __cplusplus
}
#endif
#endif
