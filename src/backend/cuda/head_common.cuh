/* head_common.cuh - what the kernels of the fused output layer (head.cu,
 * head_mma.cuh, head_fused.cuh) share: their sizes, 4-wide loads and stores of fp32
 * or bf16 rows (ld4, st4), float4 arithmetic, the warp sum and one row's softmax
 * cross-entropy (head_row_loss). Included by head.cu only. */
#ifndef FFNN_CUDA_HEAD_COMMON_CUH
#define FFNN_CUDA_HEAD_COMMON_CUH

#include "backend/backend.h"
#include "bf16.cuh"
#include "common.cuh"
#include "device_math.cuh"

#define HEAD_WARPS 8     /* warps (rows) per block of the logits kernel          */
#define HEAD_J 8         /* column groups of 4 a lane loads at once: rows of up to
                            1024 columns in one round of loads                  */
#define HEAD_COLS 32     /* column groups (of 4) per block of the slices kernel  */
#define HEAD_GROUPS 4    /* row groups per block of the slices kernel            */
#define HEAD_U 4         /* rows a thread of the slices kernel loads at once     */
#define HEAD_CHUNK 128   /* rows of dlog staged in shared memory at a time       */
#define HEAD_RC 32       /* rows of a chunk of the fused kernel                  */
#define FULL_MASK 0xffffffffu

static_assert(HEAD_COLS * 4 == FFNN_HEAD_TILE_COLS, "tile width");
static_assert(FFNN_HEAD_FUSED_MAX_IN <= HEAD_WARPS * 32 * 4, "a row of the fused kernel: "
              "one column group of 4 per thread of a block");

/* Four consecutive values from column group q (columns 4q .. 4q + 3) of a row, as
 * floats: one 16-byte (fp32) or 8-byte (bf16) load. */
static __device__ __forceinline__ float4 ld4(const float *row, int q)
{
    return __ldg((const float4 *)row + q);
}
static __device__ __forceinline__ float4 ld4(const __nv_bfloat16 *row, int q)
{
    const uint2 w = __ldg((const uint2 *)row + q);
    return make_float4(__uint_as_float(w.x << 16), __uint_as_float(w.x & 0xffff0000u),
                       __uint_as_float(w.y << 16), __uint_as_float(w.y & 0xffff0000u));
}
/* Store v into column group q of row; returns the values stored (bf16: rounded to
 * nearest even, as ffnn_st). */
static __device__ __forceinline__ float4 st4(float *row, int q, float4 v)
{
    ((float4 *)row)[q] = v;
    return v;
}
static __device__ __forceinline__ float4 st4(__nv_bfloat16 *row, int q, float4 v)
{
    const unsigned x = __bfloat16_as_ushort(__float2bfloat16_rn(v.x));
    const unsigned y = __bfloat16_as_ushort(__float2bfloat16_rn(v.y));
    const unsigned z = __bfloat16_as_ushort(__float2bfloat16_rn(v.z));
    const unsigned w = __bfloat16_as_ushort(__float2bfloat16_rn(v.w));
    ((uint2 *)row)[q] = make_uint2(x | (y << 16), z | (w << 16));
    return make_float4(__uint_as_float(x << 16), __uint_as_float(y << 16),
                       __uint_as_float(z << 16), __uint_as_float(w << 16));
}
static __device__ __forceinline__ void add4(float4 &a, float4 b)
{
    a.x += b.x;
    a.y += b.y;
    a.z += b.z;
    a.w += b.w;
}
static __device__ __forceinline__ void fma4(float4 &a, float s, float4 b)
{
    a.x = fmaf(s, b.x, a.x);
    a.y = fmaf(s, b.y, a.y);
    a.z = fmaf(s, b.z, a.z);
    a.w = fmaf(s, b.w, a.w);
}

static __device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(FULL_MASK, v, off);
    return v;
}

/* A row's softmax cross-entropy from its logits z [C] (the same values in every lane
 * of the warp): lane 0 writes *row_loss and *row_correct; returns lane c's dlog,
 * (softmax - onehot(label))[c] / batch, for c = lane < C (0 in the other lanes).
 * max: the first index on ties; the sum of the terms in class order. */
template <int CB>
static __device__ __forceinline__ float head_row_loss(const float (&z)[CB], int C, int label,
                                                      int lane, float inv_batch,
                                                      float *row_loss, uint8_t *row_correct)
{
    float m = 0.0f, se = 0.0f, zl = 0.0f, mine = 0.0f;
    int arg = 0;
#pragma unroll
    for (int c = 0; c < CB; c++) {
        if (c < C) {
            if (c == 0 || z[c] > m) {
                m = z[c];
                arg = c;
            }
            if (c == label) zl = z[c];
            if (c == lane) mine = z[c];
        }
    }
#pragma unroll
    for (int c = 0; c < CB; c++)
        if (c < C) se += ffnn_dev_softmax_term(z[c], m);
    if (lane == 0) {
        *row_loss = label >= 0 && label < C ? ffnn_dev_softmax_ce_loss(m, se, zl) : NAN;
        *row_correct = (uint8_t)(C == 1 ? (z[0] > 0.0f) == (label != 0) : arg == label);
    }
    return lane < C ? ffnn_dev_softmax_ce_grad(mine, m, se, lane == label, inv_batch) : 0.0f;
}


/* One row's products at a thread's column group q (4 columns) for classes [0, n)
 * of CB: gr = sum_c d[c] w[c] (c in order, fused multiply-adds from 0), and the
 * partial sums acc[c] += d[c] h. hv: the row's h at q; d: the row's dlog from the
 * first of these classes; w: W's columns at q for them. */
template <int CB>
static __device__ __forceinline__ float4 head_row_products(float4 hv, const float *d,
                                                           const float4 (&w)[CB], int n,
                                                           float4 (&acc)[CB])
{
    float4 gr = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int c = 0; c < CB; c++) {
        if (c < n) {
            const float dc = d[c];
            fma4(gr, dc, w[c]);
            fma4(acc[c], dc, hv);
        }
    }
    return gr;
}

/* dh_row[q] = act'(gr, h) rounded to dh's type, and dbb += the stored values. */
template <typename T>
static __device__ __forceinline__ void head_row_store(float4 hv, float4 gr, ffnn_activation act,
                                                      T *dh_row, int q, float4 &dbb)
{
    const float4 dz = make_float4(ffnn_dev_act_backward_basic(act, gr.x, hv.x),
                                  ffnn_dev_act_backward_basic(act, gr.y, hv.y),
                                  ffnn_dev_act_backward_basic(act, gr.z, hv.z),
                                  ffnn_dev_act_backward_basic(act, gr.w, hv.w));
    add4(dbb, st4(dh_row, q, dz));
}

/* One row of the backward at a thread's column group q, every class: gr = sum_c
 * d[c] W[c] (c in order), dh_row[q] = act'(gr, h) (when mine), acc[c] += d[c] h,
 * dbb += the stored dh. d: the row's dlog [C]; w: W's columns at q for every class. */
template <typename T, int CB>
static __device__ __forceinline__ void head_row_backward(float4 hv, const float *d,
                                                         const float4 (&w)[CB], int C,
                                                         ffnn_activation act, bool mine,
                                                         T *dh_row, int q, float4 (&acc)[CB],
                                                         float4 &dbb)
{
    const float4 gr = head_row_products<CB>(hv, d, w, C, acc);
    if (mine) head_row_store<T>(hv, gr, act, dh_row, q, dbb);
}

#endif
