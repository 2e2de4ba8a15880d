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

/* Eight bf16 values in one 16-byte word (uint4), for the vectorised kernels: bf16
 * element k of the word is the low (k even) or high (k odd) half of 32-bit lane
 * k / 2 (little-endian, the order in memory). ffnn_unpack8 widens them to float
 * (exact), ffnn_pack8 rounds eight floats as ffnn_st does (nearest even). */
static __device__ __forceinline__ void ffnn_unpack8(uint4 w, float f[8])
{
    const unsigned lane[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        f[2 * k] = __uint_as_float(lane[k] << 16);
        f[2 * k + 1] = __uint_as_float(lane[k] & 0xffff0000u);
    }
}
static __device__ __forceinline__ uint4 ffnn_pack8(const float f[8])
{
    unsigned lane[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const unsigned lo = __bfloat16_as_ushort(__float2bfloat16_rn(f[2 * k]));
        const unsigned hi = __bfloat16_as_ushort(__float2bfloat16_rn(f[2 * k + 1]));
        lane[k] = lo | (hi << 16);
    }
    return make_uint4(lane[0], lane[1], lane[2], lane[3]);
}

#endif /* FFNN_CUDA_BF16_CUH */
