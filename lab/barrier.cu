/*
 * barrier.cu - the grid-barrier lab (barrier.h): the persistent strategy's grid barrier
 * (src/backend/cuda/grid_barrier.cuh: a counter, a release add, an acquire spin) and
 * cooperative_groups' grid.sync(), each run `iters` times in one cooperative launch.
 */
#include <string.h>

#include <cooperative_groups.h>

#include "backend/cuda/common.cuh"
#include "backend/cuda/grid_barrier.cuh"
#include "barrier.h"

#define PT 512 /* threads per block, as the persistent kernel's */

static __global__ void barrier_ours_kernel(unsigned *counter, int iters)
{
    unsigned target = 0;
    for (int i = 0; i < iters; i++) grid_barrier(counter, target += gridDim.x);
}

static __global__ void barrier_cg_kernel(int iters)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    for (int i = 0; i < iters; i++) grid.sync();
}

/* Microseconds per grid barrier with `blocks` blocks of PT threads (0: one per
 * SM): ours (counter + acquire spin) and cooperative_groups' grid.sync(), each
 * timed over `iters` barriers in one launch (median of 5 launches, CUDA events),
 * minus nothing (a launch of 0 barriers costs ~2 us, under 1% at iters >= 10000). */
extern "C" ffnn_status ffnn_lab_grid_barrier(int blocks, int iters, int *blocks_used,
                                             double *us_ours, double *us_cg)
{
    ffnn_cuda_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    int dev = 0, sms = 0;
    FFNN_CUDA_CHECK(&ctx, cudaGetDevice(&dev));
    FFNN_CUDA_CHECK(&ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (blocks <= 0) blocks = sms;
    if (iters < 1) iters = 1;
    *blocks_used = blocks;
    unsigned *counter = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    FFNN_CUDA_CHECK(&ctx, cudaMalloc(&counter, sizeof *counter));
    FFNN_CUDA_CHECK(&ctx, cudaEventCreate(&e0));
    FFNN_CUDA_CHECK(&ctx, cudaEventCreate(&e1));
    double best[2][5];
    ffnn_status st = FFNN_OK;
    for (int kind = 0; kind < 2 && st == FFNN_OK; kind++) {
        for (int rep = 0; rep < 5; rep++) {
            cudaError_t err = cudaMemset(counter, 0, sizeof *counter);
            if (err == cudaSuccess) err = cudaEventRecord(e0, 0);
            void *args_ours[] = {(void *)&counter, (void *)&iters};
            void *args_cg[] = {(void *)&iters};
            if (err == cudaSuccess)
                err = kind == 0 ? cudaLaunchCooperativeKernel((const void *)barrier_ours_kernel,
                                                              dim3(blocks), dim3(PT), args_ours,
                                                              0, 0)
                                : cudaLaunchCooperativeKernel((const void *)barrier_cg_kernel,
                                                              dim3(blocks), dim3(PT), args_cg,
                                                              0, 0);
            if (err == cudaSuccess) err = cudaEventRecord(e1, 0);
            if (err == cudaSuccess) err = cudaEventSynchronize(e1);
            float ms = 0.0f;
            if (err == cudaSuccess) err = cudaEventElapsedTime(&ms, e0, e1);
            if (err != cudaSuccess) {
                st = ffnn_cuda_fail_call(NULL, err, __FILE__, __LINE__, "barrier benchmark");
                break;
            }
            best[kind][rep] = 1000.0 * ms / iters;
        }
    }
    (void)cudaFree(counter);
    (void)cudaEventDestroy(e0);
    (void)cudaEventDestroy(e1);
    if (st != FFNN_OK) return st;
    for (int kind = 0; kind < 2; kind++) /* median of 5: sort */
        for (int i = 1; i < 5; i++)
            for (int k = i; k > 0 && best[kind][k] < best[kind][k - 1]; k--) {
                double tmp = best[kind][k];
                best[kind][k] = best[kind][k - 1];
                best[kind][k - 1] = tmp;
            }
    *us_ours = best[0][2];
    *us_cg = best[1][2];
    return FFNN_OK;
}
