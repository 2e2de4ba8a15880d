/*
 * mma.cuh - the warp-level tensor-core products (mma.sync) and their operand
 * conversions, one copy for every kernel that issues them (gemm_mma.cu, head.cu).
 *
 * Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k8" and "mma.m16n8k16";
 * g = lane / 4, t = lane % 4):
 *   tf32 m16n8k8:  a0 (row g, k t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4);
 *                  b0 (k t, col g), b1 (t + 4, g); d0 d1 (row g, cols 2t, 2t + 1),
 *                  d2 d3 (row g + 8, the same cols)
 *   bf16 m16n8k16: a0 (row g, k 2t..2t+1), a1 (g + 8, 2t..2t+1), a2 (g, 2t+8..2t+9),
 *                  a3 (g + 8, 2t+8..2t+9); b0 (k 2t..2t+1, col g), b1 (2t+8..2t+9, g);
 *                  d as tf32's. A 32-bit register holds two bf16, the lower k in the
 *                  low half.
 * fp32 accumulation in both; the order of the additions inside one product is the
 * hardware's (fixed: the same inputs give the same bits).
 */
#pragma once

#include <cuda_bf16.h>

/* x rounded to TF32 (10 mantissa bits; to nearest, ties away from zero, as
 * wmma::__float_to_tf32), as an mma operand register */
static __device__ __forceinline__ unsigned mma_tf32(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

/* (lo, hi) -> bf16x2, lo in the low half (the lower k index) */
static __device__ __forceinline__ unsigned mma_bf16x2(float lo, float hi)
{
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *(const unsigned *)&v;
}

/* d += a b, one 16 x 8 x 8 tf32 product */
static __device__ __forceinline__ void mma_tf32_op(float (&d)[4], const unsigned (&a)[4],
                                                   const unsigned (&b)[2])
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* d += a b, one 16 x 8 x 16 bf16 product */
static __device__ __forceinline__ void mma_bf16_op(float (&d)[4], const unsigned (&a)[4],
                                                   const unsigned (&b)[2])
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
