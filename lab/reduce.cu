/*
 * reduce.cu - seed 004's loss-reduction experiment (ffnn bench modular, part c): the
 * cross-entropy summed over a batch of [B, C] logits, three ways (reduce.h):
 *   0 atomic  one thread per row computes the row's loss and atomicAdd's it into one
 *             float (zeroed by a cudaMemsetAsync first) - the seed's v0 pattern;
 *   1 tree    one block of 1024 threads: each thread sums rows tid, tid + 1024, ...,
 *             then a shared-memory tree halves 1024 partial sums to one;
 *   2 shuffle the same block, but the partials are combined by __shfl_xor_sync inside
 *             each warp, the 32 warp sums through 32 floats of shared memory and a
 *             last shuffle in warp 0 - the seed's v2 pattern.
 */
#include <math.h>

#include "backend/cuda/common.cuh"
#include "reduce.h"

#define LAB_THREADS 1024
#define LAB_WARP 32

/* The row loss: max + log(sum exp(z - max)) - z[y], as src/backend/cuda/loss.cu's softmax_ce. */
static __device__ __forceinline__ float lab_row_loss(const float *__restrict__ z,
                                                     const uint8_t *__restrict__ y, int row,
                                                     int C)
{
    const float *zr = z + (size_t)row * C;
    float m = zr[0];
    for (int j = 1; j < C; j++) m = fmaxf(m, zr[j]);
    float s = 0.0f;
    for (int j = 0; j < C; j++) s += expf(zr[j] - m);
    const int label = y[row];
    return label < C ? m + logf(s) - zr[label] : NAN;
}

static __global__ void lab_atomic_kernel(const float *__restrict__ z,
                                         const uint8_t *__restrict__ y, int B, int C,
                                         float *out)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < B) atomicAdd(out, lab_row_loss(z, y, row, C));
}

static __global__ void lab_tree_kernel(const float *__restrict__ z,
                                       const uint8_t *__restrict__ y, int B, int C,
                                       float *out)
{
    __shared__ float part[LAB_THREADS];
    float acc = 0.0f;
    for (int row = threadIdx.x; row < B; row += LAB_THREADS) acc += lab_row_loss(z, y, row, C);
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int half = LAB_THREADS / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = part[0];
}

static __global__ void lab_shuffle_kernel(const float *__restrict__ z,
                                          const uint8_t *__restrict__ y, int B, int C,
                                          float *out)
{
    __shared__ float warp_sums[LAB_THREADS / LAB_WARP];
    float acc = 0.0f;
    for (int row = threadIdx.x; row < B; row += LAB_THREADS) acc += lab_row_loss(z, y, row, C);
#pragma unroll
    for (int off = LAB_WARP / 2; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    const int lane = threadIdx.x % LAB_WARP, warp = threadIdx.x / LAB_WARP;
    if (lane == 0) warp_sums[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = warp_sums[lane];
#pragma unroll
        for (int off = LAB_WARP / 2; off > 0; off /= 2)
            acc += __shfl_xor_sync(0xffffffffu, acc, off);
        if (lane == 0) *out = acc;
    }
}

extern "C" ffnn_status ffnn_reduce_lab_ce_sum(int variant, const float *logits,
                                              const uint8_t *labels, int B, int C,
                                              float *out, void *stream)
{
    if (logits == NULL || labels == NULL || out == NULL || B <= 0 || C <= 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "reduce lab: bad arguments (B %d, C %d)",
                         B, C);
    cudaStream_t s = (cudaStream_t)stream;
    switch (variant) {
    case FFNN_REDUCE_ATOMIC:
        FFNN_CUDA_CHECK(NULL, cudaMemsetAsync(out, 0, sizeof *out, s));
        lab_atomic_kernel<<<(B + 255) / 256, 256, 0, s>>>(logits, labels, B, C, out);
        break;
    case FFNN_REDUCE_TREE:
        lab_tree_kernel<<<1, LAB_THREADS, 0, s>>>(logits, labels, B, C, out);
        break;
    case FFNN_REDUCE_SHUFFLE:
        lab_shuffle_kernel<<<1, LAB_THREADS, 0, s>>>(logits, labels, B, C, out);
        break;
    default:
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "reduce lab: unknown variant %d", variant);
    }
    FFNN_CUDA_CHECK(NULL, cudaGetLastError());
    return FFNN_OK;
}
