/*
 * bf16.cuh - storage of the element-wise kernels that run on fp32 or bf16 tensors
 * (mixed precision, backend.h to_bf16 ...): load a value as float, store a float
 * into the tensor's type. bf16 stores round to nearest even (__float2bfloat16_rn),
 * the rounding of every bf16 value ffnn makes; the arithmetic stays fp32 and is
 * device_math.cuh's (one copy of each formula, whatever the storage).
 */
#ifndef FFNN_CUDA_BF16_CUH
#define FFNN_CUDA_BF16_CUH

#include <cuda_bf16.h>

static __device__ __forceinline__ float ffnn_ld(const float *p, size_t i) { return p[i]; }
static __device__ __forceinline__ float ffnn_ld(const __nv_bfloat16 *p, size_t i)
{
    return __bfloat162float(p[i]);
}
static __device__ __forceinline__ void ffnn_st(float *p, size_t i, float v) { p[i] = v; }
static __device__ __forceinline__ void ffnn_st(__nv_bfloat16 *p, size_t i, float v)
{
    p[i] = __float2bfloat16_rn(v);
}

#endif /* FFNN_CUDA_BF16_CUH */
