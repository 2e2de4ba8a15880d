/*
 * head.cu - the output layer and softmax cross-entropy of a training step, fused
 * (backend.h softmax_ce_head; the cublaslt strategy's steps use it where the net
 * ends in dense -> act -> dense (identity) -> softmax_ce on class labels).
 *
 * It replaces, per step, the output layer's forward matmul (and cuBLASLt's split-K
 * reduction), the loss kernel, the dlogits' bf16 copy, the dh and dW matmuls of the
 * output layer (each with a split-K reduction), its bias-gradient kernel, and the
 * pass that applies f' to dh and sums the layer below's bias gradient: 8-9 kernels,
 * ~35-39 us of a step at batch 1024 by Nsight Compute (H200, docs/RESULTS.md), by
 * one kernel and the reduction of its slices for in <= FFNN_HEAD_FUSED_MAX_IN
 * (head_fused_kernel: a block's rows end to end - logits, loss, dlog on chip, dh,
 * the block's partial sums; W in registers, h read once from L2 and again from L1),
 * else three kernels whose work is one read of h for the logits, one read of h with
 * one write of dh, and the slices' partial sums:
 *
 *   logits  blocks of 8 warps, rows_per_block rows each (8 up to batch 2048): W
 *           staged once per block in shared memory as floats, then one warp per row:
 *           z[b, c] = sum_k h[b, k] W[c, k] (lane l sums the float4 column groups l,
 *           l + 32, ..., HEAD_J groups loaded at once, then a fixed butterfly), +
 *           b[c]; then loss.cu's softmax cross-entropy with device_math.cuh's
 *           formulas: row_loss, row_correct, dlog [batch, C] = (softmax -
 *           onehot(y)) / batch (fp32, into the scratch). On a tf32 context and for
 *           bf16 tensors the products run on the tensor cores instead
 *           (head_logits_mma_kernel: mma.sync, 16 rows a block, K dealt over the
 *           warps, fp32 sums; tf32 rounds h and W to TF32 first, as the matmuls of
 *           that precision do), and so do the slices' (head_slices_mma_kernel: dlog
 *           rounded to the precision; the same grid and partial sums)
 *   slices  grid (column tiles of 128, row slices of the batch, >= 16 rows each,
 *           ~256 blocks, two per multiprocessor; backend.h ffnn_head_slices): thread
 *           (g, t, half) of HEAD_GROUPS row groups x 32 x 2 holds 4 columns k of W
 *           in registers for its half of the classes and takes the slice's rows g,
 *           g + HEAD_GROUPS, ... in rounds of HEAD_U (the next round's loads in
 *           flight during this one's arithmetic):
 *             dh[b, k] = act'(h[b, k]) * (sum_{c < CB/2} dlog[b, c] W[c, k] +
 *                        sum_{c >= CB/2} ...)  (each half's classes in order, then
 *                        the two halves added; one rounding to dh's type)
 *             partial dW[c, k] += dlog[b, c] h[b, k], partial dh_db[k] += dh[b, k]
 *                        (the stored, rounded value: what the next matmul sees),
 *             partial db[c] += dlog[b, c] (tile 0)
 *           the row groups' sums met in shared memory in a fixed order, s0 + (s1 +
 *           (s2 + s3)) after one barrier, into scratch slice s: [C, in] dW, [in]
 *           dh_db, [C] db
 *   reduce  each output = the sum over the slices in slice order (queued by
 *           softmax_ce_head, or, when it gets dW NULL, by softmax_ce_head_sums)
 * Every sum runs in a fixed order: the results are deterministic; they differ from
 * the op-by-op path (cuBLAS's sums) only in summation order, and in bf16 in fewer
 * roundings (dlog stays fp32; dh is rounded once after f'). The fused kernel's
 * orders (a logit: 4 products per lane, the lanes' butterfly, then the warps of
 * the row in order; dW: the block's rows, then the slices) differ from the three
 * kernels' (docs/RESULTS.md "The head in one kernel", 2026-11-25).
 *
 * h, W and dh are fp32 or bf16 (T); the arithmetic is fp32. Shapes: h [batch, in],
 * W [C, in], b [C], y [batch], dW [C, in], db [C], dh [batch, in], dh_db [in].
 */
#include <math.h>
#include <string.h>

#include "backend/backend.h"
#include "bf16.cuh"
#include "common.cuh"
#include "device_math.cuh"
#include "mma.cuh"

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

/* Logits, softmax cross-entropy and dlog, one row per warp at a time, rows
 * [blockIdx.x * rows_per_block, + rows_per_block); W staged in shared memory as
 * floats first (C * in * 4 bytes of dynamic shared memory). CB >= C: the classes'
 * registers. h [batch, in], W [C, in] (in % 4 == 0), b [C] or NULL, y [batch];
 * dlog [batch, C], row_loss [batch], row_correct [batch]. */
template <typename T, int CB>
static __global__ void __maxnreg__(128) /* ptxas picked 64 with spills */
    head_logits_kernel(const T *__restrict__ h, const T *__restrict__ W,
                       const float *__restrict__ b, const int32_t *__restrict__ y, int batch,
                       int in, int C, int rows_per_block, float inv_batch,
                       float *__restrict__ dlog, float *__restrict__ row_loss,
                       uint8_t *__restrict__ row_correct)
{
    extern __shared__ float4 Ws[]; /* [C, in / 4] */
    const int in4 = in / 4, lane = threadIdx.x & 31;
    for (int i = threadIdx.x; i < C * in4; i += HEAD_WARPS * 32) {
        const int c = i / in4;
        Ws[i] = ld4(W + (size_t)c * in, i - c * in4);
    }
    __syncthreads();
    const int r_end = min(batch, (blockIdx.x + 1) * rows_per_block);
    for (int row = blockIdx.x * rows_per_block + (threadIdx.x >> 5); row < r_end;
         row += HEAD_WARPS) {
        const T *hr = h + (size_t)row * in;
        float z[CB];
#pragma unroll
        for (int c = 0; c < CB; c++) z[c] = 0.0f;
        for (int q0 = lane; q0 < in4; q0 += 32 * HEAD_J) {
            float4 hv[HEAD_J]; /* this round's loads, all in flight */
#pragma unroll
            for (int j = 0; j < HEAD_J; j++)
                if (q0 + 32 * j < in4) hv[j] = ld4(hr, q0 + 32 * j);
#pragma unroll
            for (int j = 0; j < HEAD_J; j++) {
                if (q0 + 32 * j >= in4) break;
#pragma unroll
                for (int c = 0; c < CB; c++) {
                    if (c < C) {
                        const float4 w = Ws[c * in4 + q0 + 32 * j];
                        z[c] = fmaf(hv[j].x, w.x, z[c]);
                        z[c] = fmaf(hv[j].y, w.y, z[c]);
                        z[c] = fmaf(hv[j].z, w.z, z[c]);
                        z[c] = fmaf(hv[j].w, w.w, z[c]);
                    }
                }
            }
        }
        /* every lane: the row's logits (same bits) */
#pragma unroll
        for (int c = 0; c < CB; c++) {
            if (c < C) {
                const float v = warp_sum(z[c]);
                z[c] = b != NULL ? __fadd_rn(v, b[c]) : v;
            }
        }
        const float d = head_row_loss<CB>(z, C, y[row], lane, inv_batch, row_loss + row,
                                          row_correct + row);
        if (lane < C) dlog[(size_t)row * C + lane] = d;
    }
}

/* The tensor-core logits (tf32 and bf16 contexts, in > FFNN_HEAD_FUSED_MAX_IN;
 * head_logits_mma_applies): HEAD_MMA_ROWS rows a block, one m16 tile of the rows
 * times ceil(C / 8) n8 tiles of the classes, its K (= in) in chunks of 128 bytes of
 * a row (32 fp32 / 64 bf16 columns) dealt to the block's HEAD_MMA_WARPS warps in
 * turn (warp w: chunks w, w + HEAD_MMA_WARPS, ...; the next chunk's loads in flight
 * during this one's products). Thread (g, t) loads the chunk's 32 bytes at columns
 * [t L, t L + L) (L = 8 fp32 / 16 bf16) of rows g and g + 8 and of classes g and
 * 8 + g, and the mma k slots are mapped onto those columns (A and B alike, so each
 * product pairs h[b, k] with W[c, k]):
 *   tf32 step j of 4: slot t -> column t L + 2j, slot t + 4 -> t L + 2j + 1
 *   bf16 step j of 4: slots 2t, 2t + 1 -> t L + 4j, + 1; slots 2t + 8, 2t + 9 ->
 *                     t L + 4j + 2, + 3
 * (mma.cuh's fragment layouts); tf32 operands rounded by cvt.rna (mma_tf32), bf16
 * operands as stored. Then z[b, c] = ((w0 + w1) + w2) ... + w15 over the warps'
 * partials in shared memory, + b[c], and head_row_loss per row (warp w: row w of the
 * tile): row_loss, row_correct, dlog as head_logits_kernel. Shapes as
 * head_logits_kernel; in % 8 == 0 for bf16 (16-byte loads). */
#define HEAD_MMA_ROWS 16  /* rows of a block: an m16 tile                         */
#define HEAD_MMA_WARPS 16 /* warps of a block: K's chunks, then one row each      */
/* 32 bytes of row from column col (two 16-byte loads; zeros past in or for a NULL
 * row) */
template <typename T>
static __device__ __forceinline__ void head_ld32(const T *row, int col, int in, uint4 (&v)[2])
{
    constexpr int PER16 = 16 / (int)sizeof(T); /* columns of 16 bytes */
#pragma unroll
    for (int p = 0; p < 2; p++) {
        const int c = col + p * PER16;
        v[p] = row != NULL && c < in ? __ldg((const uint4 *)(row + c)) : make_uint4(0, 0, 0, 0);
    }
}
/* 32-bit word m (0..7) of head_ld32's 32 bytes */
static __device__ __forceinline__ unsigned head_word(const uint4 (&v)[2], int m)
{
    const uint4 q = v[m >> 2];
    const int i = m & 3;
    return i == 0 ? q.x : i == 1 ? q.y : i == 2 ? q.z : q.w;
}

template <typename T, int CB>
static __global__ void __launch_bounds__(HEAD_MMA_WARPS * 32, 1)
    head_logits_mma_kernel(const T *__restrict__ h, const T *__restrict__ W,
                           const float *__restrict__ b, const int32_t *__restrict__ y,
                           int batch, int in, int C, float inv_batch,
                           float *__restrict__ dlog, float *__restrict__ row_loss,
                           uint8_t *__restrict__ row_correct)
{
    constexpr bool BF = sizeof(T) == 2;
    constexpr int NT = (CB + 7) / 8;       /* n8 tiles of the classes             */
    constexpr int CW = 128 / (int)sizeof(T); /* columns of a chunk                */
    constexpr int L = CW / 4;              /* columns of a thread in a chunk        */
    __shared__ float part[HEAD_MMA_WARPS][HEAD_MMA_ROWS][NT * 8]; /* warps' partials */
    __shared__ float zs[HEAD_MMA_ROWS][NT * 8];               /* the logits          */
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3, wp = threadIdx.x >> 5;
    const int r0 = blockIdx.x * HEAD_MMA_ROWS, r_end = min(batch, r0 + HEAD_MMA_ROWS);
    const T *h_lo = r0 + g < r_end ? h + (size_t)(r0 + g) * in : NULL;
    const T *h_hi = r0 + g + 8 < r_end ? h + (size_t)(r0 + g + 8) * in : NULL;
    const T *w_n[NT];
#pragma unroll
    for (int n = 0; n < NT; n++) w_n[n] = 8 * n + g < C ? W + (size_t)(8 * n + g) * in : NULL;
    float acc[NT][4];
#pragma unroll
    for (int n = 0; n < NT; n++) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
    const int chunks = (in + CW - 1) / CW;
    uint4 a_lo[2], a_hi[2], wv[NT][2]; /* this chunk's loads */
    int ch = wp;
    if (ch < chunks) {
        head_ld32(h_lo, ch * CW + t * L, in, a_lo);
        head_ld32(h_hi, ch * CW + t * L, in, a_hi);
#pragma unroll
        for (int n = 0; n < NT; n++) head_ld32(w_n[n], ch * CW + t * L, in, wv[n]);
    }
    for (; ch < chunks; ch += HEAD_MMA_WARPS) {
        uint4 na_lo[2], na_hi[2], nw[NT][2]; /* the next chunk's, in flight */
        const int nc = ch + HEAD_MMA_WARPS;
        if (nc < chunks) {
            head_ld32(h_lo, nc * CW + t * L, in, na_lo);
            head_ld32(h_hi, nc * CW + t * L, in, na_hi);
#pragma unroll
            for (int n = 0; n < NT; n++) head_ld32(w_n[n], nc * CW + t * L, in, nw[n]);
        }
#pragma unroll
        for (int j = 0; j < 4; j++) {
            unsigned a[4], bb[NT][2];
            if (BF) { /* words 2j, 2j + 1 of the thread's 8: columns 4j .. 4j + 3 */
                a[0] = head_word(a_lo, 2 * j);
                a[1] = head_word(a_hi, 2 * j);
                a[2] = head_word(a_lo, 2 * j + 1);
                a[3] = head_word(a_hi, 2 * j + 1);
#pragma unroll
                for (int n = 0; n < NT; n++) {
                    bb[n][0] = head_word(wv[n], 2 * j);
                    bb[n][1] = head_word(wv[n], 2 * j + 1);
                }
            } else { /* columns 2j (slot t), 2j + 1 (slot t + 4) */
                a[0] = mma_tf32(__uint_as_float(head_word(a_lo, 2 * j)));
                a[1] = mma_tf32(__uint_as_float(head_word(a_hi, 2 * j)));
                a[2] = mma_tf32(__uint_as_float(head_word(a_lo, 2 * j + 1)));
                a[3] = mma_tf32(__uint_as_float(head_word(a_hi, 2 * j + 1)));
#pragma unroll
                for (int n = 0; n < NT; n++) {
                    bb[n][0] = mma_tf32(__uint_as_float(head_word(wv[n], 2 * j)));
                    bb[n][1] = mma_tf32(__uint_as_float(head_word(wv[n], 2 * j + 1)));
                }
            }
#pragma unroll
            for (int n = 0; n < NT; n++) {
                if (BF)
                    mma_bf16_op(acc[n], a, bb[n]);
                else
                    mma_tf32_op(acc[n], a, bb[n]);
            }
        }
        if (nc < chunks) {
#pragma unroll
            for (int p = 0; p < 2; p++) {
                a_lo[p] = na_lo[p];
                a_hi[p] = na_hi[p];
#pragma unroll
                for (int n = 0; n < NT; n++) wv[n][p] = nw[n][p];
            }
        }
    }
    /* the warp's partial tile: rows g, g + 8, classes 8n + 2t, + 1 */
#pragma unroll
    for (int n = 0; n < NT; n++) {
        part[wp][g][8 * n + 2 * t] = acc[n][0];
        part[wp][g][8 * n + 2 * t + 1] = acc[n][1];
        part[wp][g + 8][8 * n + 2 * t] = acc[n][2];
        part[wp][g + 8][8 * n + 2 * t + 1] = acc[n][3];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < HEAD_MMA_ROWS * NT * 8; i += HEAD_MMA_WARPS * 32) {
        const int r = i / (NT * 8), c = i % (NT * 8);
        float v = part[0][r][c];
#pragma unroll
        for (int w = 1; w < HEAD_MMA_WARPS; w++) v += part[w][r][c];
        zs[r][c] = b != NULL && c < C ? __fadd_rn(v, b[c]) : v;
    }
    __syncthreads();
    static_assert(HEAD_MMA_WARPS >= HEAD_MMA_ROWS, "a row a warp");
    const int row = r0 + wp;
    if (wp < HEAD_MMA_ROWS && row < r_end) {
        const int r = wp;
        float z[CB];
#pragma unroll
        for (int c = 0; c < CB; c++) z[c] = zs[r][c];
        const float d = head_row_loss<CB>(z, C, y[row], lane, inv_batch, row_loss + row,
                                          row_correct + row);
        if (lane < C) dlog[(size_t)row * C + lane] = d;
    }
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

/* One (column tile, row slice) of the backward: dh for the slice's rows and the
 * slice's partial sums (file comment). Thread (g, t, k) of HEAD_GROUPS row groups x
 * HEAD_COLS column groups x 2 class halves (k the lowest bit of the thread index:
 * the two halves of a column group are adjacent lanes) holds W's 4 columns of group
 * blockIdx.x * HEAD_COLS + t for classes [k CH, k CH + CH), CH = CB / 2, and takes
 * the slice's rows g, g + HEAD_GROUPS, ... in rounds of HEAD_U (the next round's
 * loads issued before this round's arithmetic). Per row: each half's products over
 * its classes in order, then dh's sum = half 0's + half 1's (one shuffle); half 0
 * stores dh and sums dh_db. Then groups 1 .. HEAD_GROUPS - 1 put their sums in
 * shared memory at once and group 0 adds s0 + (s1 + (s2 + s3)). part: the slices,
 * each stride floats: [C, in] dW, [in] dh_db, [C] db. */
template <typename T, int CB>
static __global__ void __launch_bounds__(HEAD_COLS * 2 * HEAD_GROUPS, 2)
    head_slices_kernel(const T *__restrict__ h, const T *__restrict__ W,
                       const float *__restrict__ dlog, int batch, int in, int C,
                       int rows_per_slice, ffnn_activation act, T *__restrict__ dh,
                       float *__restrict__ part, size_t stride)
{
    static_assert(HEAD_CHUNK % (HEAD_GROUPS * HEAD_U) == 0, "a round inside a chunk");
    static_assert(CB % 2 == 0, "two class halves");
    constexpr int ROUND = HEAD_GROUPS * HEAD_U; /* rows of a round               */
    constexpr int CH = CB / 2;                  /* classes of a half              */
    constexpr int NT = HEAD_COLS * 2 * HEAD_GROUPS;
    __shared__ float dls[HEAD_CHUNK * CB];      /* [chunk rows, C]               */
    __shared__ float4 sum[(HEAD_GROUPS - 1) * (CB + 1) * HEAD_COLS]; /* groups 1..:
                                                   [group - 1, C + 1, HEAD_COLS]  */
    const int k = threadIdx.x & 1, t = (threadIdx.x >> 1) % HEAD_COLS;
    const int g = threadIdx.x / (2 * HEAD_COLS);
    const int q = blockIdx.x * HEAD_COLS + t, s = blockIdx.y, in4 = in / 4;
    const int rs0 = s * rows_per_slice, rs1 = min(batch, rs0 + rows_per_slice);
    const int c_lo = k * CH, n = max(0, min(CH, C - c_lo)); /* this half's classes */
    const bool mine = q < in4;
    const int qq = mine ? q : 0; /* threads past the row load group 0, store nothing */
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
    float4 w[CH], acc[CH];
    float4 dbb = zero;
    float dbc = 0.0f; /* tile 0, thread t < C of group 0, half 0: the sum of dlog[:, t] */
#pragma unroll
    for (int c = 0; c < CH; c++) {
        acc[c] = zero;
        w[c] = c < n ? ld4(W + (size_t)(c_lo + c) * in, qq) : zero;
    }
    float4 hv[HEAD_U]; /* this round's rows (slice rows r0 + HEAD_GROUPS u), loaded */
#pragma unroll
    for (int u = 0; u < HEAD_U; u++) {
        const int row = rs0 + g + HEAD_GROUPS * u;
        hv[u] = row < rs1 ? ld4(h + (size_t)row * in, qq) : zero;
    }
    for (int c0 = rs0; c0 < rs1; c0 += HEAD_CHUNK) {
        const int rc = min(HEAD_CHUNK, rs1 - c0);
        __syncthreads();
        for (int i = threadIdx.x; i < rc * C; i += NT) dls[i] = dlog[(size_t)c0 * C + i];
        __syncthreads();
        if (blockIdx.x == 0 && g == 0 && k == 0 && t < C)
            for (int r = 0; r < rc; r++) dbc += dls[r * C + t];
        for (int r0 = g; r0 < rc; r0 += ROUND) {
            float4 hn[HEAD_U]; /* the next round's rows (maybe the next chunk's) */
#pragma unroll
            for (int u = 0; u < HEAD_U; u++) {
                const int row = c0 + r0 + ROUND + HEAD_GROUPS * u;
                hn[u] = row < rs1 ? ld4(h + (size_t)row * in, qq) : zero;
            }
#pragma unroll
            for (int u = 0; u < HEAD_U; u++) {
                const int r = r0 + HEAD_GROUPS * u;
                if (r >= rc) break;
                const float4 part_gr =
                    head_row_products<CH>(hv[u], dls + r * C + c_lo, w, n, acc);
                float4 gr; /* half 0's + half 1's, the same bits in both lanes */
                gr.x = part_gr.x + __shfl_xor_sync(FULL_MASK, part_gr.x, 1);
                gr.y = part_gr.y + __shfl_xor_sync(FULL_MASK, part_gr.y, 1);
                gr.z = part_gr.z + __shfl_xor_sync(FULL_MASK, part_gr.z, 1);
                gr.w = part_gr.w + __shfl_xor_sync(FULL_MASK, part_gr.w, 1);
                if (k == 0 && mine)
                    head_row_store<T>(hv[u], gr, act, dh + (size_t)(c0 + r) * in, q, dbb);
            }
#pragma unroll
            for (int u = 0; u < HEAD_U; u++) hv[u] = hn[u];
        }
    }
    /* the groups' sums in a fixed order: groups 1.. store theirs at once, group 0
     * adds s0 + (s1 + (s2 + s3)) and writes the slice's partial; class C is dh_db */
    if (g > 0) {
        float4 *gs = sum + (size_t)(g - 1) * (C + 1) * HEAD_COLS;
#pragma unroll
        for (int c = 0; c < CH; c++)
            if (c < n) gs[(c_lo + c) * HEAD_COLS + t] = acc[c];
        if (k == 0) gs[C * HEAD_COLS + t] = dbb;
    }
    __syncthreads();
    if (g != 0) return;
    float *ps = part + (size_t)s * stride;
    if (mine) {
#pragma unroll
        for (int c = 0; c <= CH; c++) { /* c == CH: dh_db, half 0 */
            if (c == CH ? k != 0 : c >= n) continue;
            const int out = c == CH ? C : c_lo + c;
            float4 v = sum[((HEAD_GROUPS - 2) * (C + 1) + out) * HEAD_COLS + t];
#pragma unroll
            for (int j = HEAD_GROUPS - 3; j >= 0; j--) {
                float4 o = sum[(j * (C + 1) + out) * HEAD_COLS + t];
                add4(o, v);
                v = o;
            }
            float4 o = c == CH ? dbb : acc[c];
            add4(o, v);
            ((float4 *)(ps + (size_t)out * in))[q] = o;
        }
    }
    if (blockIdx.x == 0 && k == 0 && t < C) ps[(size_t)C * in + in + t] = dbc;
}

/* The slices on the tensor cores (head_logits_mma_applies' contexts; the same grid,
 * slices and partial sums as head_slices_kernel): warp w of 8 owns the tile's columns
 * [w 16, w 16 + 16) (two n8 tiles) and takes the slice's rows in m16 tiles (dlog
 * staged HEAD_CHUNK rows at a time, zero past the slice):
 *   dh tile [16 rows, 16 cols] = dlog [16, C] W [C, 16]: mma over the classes (W's
 *     operand in registers for the whole slice); then per value (row g or g + 8,
 *     cols 2t, 2t + 1 of each n8 tile) dh = act'(that, h), rounded to dh's type and
 *     stored; the thread's column sums of the stored values, its rows in order;
 *   dW [C, 16 cols] += dlog^T [C, 16 rows] h [16 rows, 16 cols]: mma over the rows
 *     (classes as the m16 tile).
 * The operands are rounded to the precision's type (tf32: mma_tf32 of dlog, W, h;
 * bf16: dlog rounded to bf16, h and W as stored), fp32 accumulation, as the matmuls
 * of that precision (autocast's backward of a bf16 linear takes a bf16 gradient).
 * At the end each warp writes its columns' dW and, after a butterfly over the eight
 * lanes of a column (xor 4, 8, 16), dh_db; tile 0's warp 0 the classes' db (rows in
 * order). Sums in a fixed order: deterministic (a documented order different from
 * head_slices_kernel's). */
#define HEAD_SMMA_WARPS 8
static_assert(HEAD_SMMA_WARPS * 16 == FFNN_HEAD_TILE_COLS, "16 columns a warp");

/* the raw bits of one value (fp32: its 32 bits; bf16: its 16 bits in the low half) */
static __device__ __forceinline__ unsigned head_bits(const float *p)
{
    return __float_as_uint(__ldg(p));
}
static __device__ __forceinline__ unsigned head_bits(const __nv_bfloat16 *p)
{
    return __ldg((const unsigned short *)p);
}
/* a tf32 operand from fp32 bits; a bf16x2 operand from two bf16's bits */
static __device__ __forceinline__ unsigned head_op1(unsigned v) { return mma_tf32(__uint_as_float(v)); }
static __device__ __forceinline__ unsigned head_op2(unsigned lo, unsigned hi) { return lo | (hi << 16); }
/* two adjacent values of a row as floats (8-byte fp32 / 4-byte bf16 load) */
static __device__ __forceinline__ float2 head_ld2(const float *p) { return __ldg((const float2 *)p); }
static __device__ __forceinline__ float2 head_ld2(const __nv_bfloat16 *p)
{
    const unsigned w = __ldg((const unsigned *)p);
    return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
}
/* store two adjacent values rounded to the type; returns the values stored */
static __device__ __forceinline__ float2 head_st2(float *p, float2 v)
{
    *(float2 *)p = v;
    return v;
}
static __device__ __forceinline__ float2 head_st2(__nv_bfloat16 *p, float2 v)
{
    const unsigned x = __bfloat16_as_ushort(__float2bfloat16_rn(v.x));
    const unsigned y = __bfloat16_as_ushort(__float2bfloat16_rn(v.y));
    *(unsigned *)p = x | (y << 16);
    return make_float2(__uint_as_float(x << 16), __uint_as_float(y << 16));
}

/* One m16 tile's loads of h for head_slices_mma_kernel (issued a tile ahead): the
 * pairs f' needs (rows g, g + 8; cols 2t, 2t + 1 of each n8 tile) and the raw bits of
 * dW's B operand (tf32: rows 8k + t + 4j, col g; bf16: rows 2t + 8j and the one
 * after, col g); zeros past the slice's rows r_end or past in. */
template <typename T>
struct head_htile {
    float2 pair[2][2]; /* [n8 tile][row g / g + 8]   */
    unsigned op[2][4]; /* [n8 tile][operand element] */
};
template <typename T>
static __device__ __forceinline__ void head_htile_load(head_htile<T> &ht, const T *h, int r0,
                                                       int r_end, int n0, int in, int g, int t)
{
#pragma unroll
    for (int n = 0; n < 2; n++) {
        const int cp = n0 + 8 * n + 2 * t, cb = n0 + 8 * n + g;
#pragma unroll
        for (int hf = 0; hf < 2; hf++) {
            const int row = r0 + g + 8 * hf;
            ht.pair[n][hf] = row < r_end && cp < in ? head_ld2(h + (size_t)row * in + cp)
                                                    : make_float2(0.0f, 0.0f);
        }
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int row = sizeof(T) == 2 ? r0 + 2 * t + 8 * (e >> 1) + (e & 1)
                                           : r0 + 8 * (e >> 1) + t + 4 * (e & 1);
            ht.op[n][e] = row < r_end && cb < in ? head_bits(h + (size_t)row * in + cb) : 0u;
        }
    }
}

template <typename T, int CB>
static __global__ void __launch_bounds__(HEAD_SMMA_WARPS * 32)
    head_slices_mma_kernel(const T *__restrict__ h, const T *__restrict__ W,
                           const float *__restrict__ dlog, int batch, int in, int C,
                           int rows_per_slice, ffnn_activation act, T *__restrict__ dh,
                           float *__restrict__ part, size_t stride)
{
    constexpr bool BF = sizeof(T) == 2;
    constexpr int KC = BF ? 16 : 8;           /* classes a k step of dh's mma       */
    constexpr int NK = (CB + KC - 1) / KC;    /* k steps over the classes           */
    static_assert(CB <= 16, "the classes: one m16 tile of dW");
    __shared__ float dls[HEAD_CHUNK + 16][16]; /* [chunk rows, classes], zero padded */
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3, wp = threadIdx.x >> 5;
    const int n0 = blockIdx.x * FFNN_HEAD_TILE_COLS + wp * 16; /* the warp's columns */
    const int s = blockIdx.y, rs0 = s * rows_per_slice, rs1 = min(batch, rs0 + rows_per_slice);
    /* dh's B operand: W [class k, col n0 + 8n + g] */
    unsigned wb[NK][2][2];
#pragma unroll
    for (int k = 0; k < NK; k++) {
#pragma unroll
        for (int n = 0; n < 2; n++) {
            const int col = n0 + 8 * n + g;
#pragma unroll
            for (int j = 0; j < 2; j++) {
                if (BF) {
                    const int c = k * 16 + 2 * t + 8 * j;
                    const unsigned lo = c < C && col < in ? head_bits(W + (size_t)c * in + col) : 0u;
                    const unsigned hi =
                        c + 1 < C && col < in ? head_bits(W + (size_t)(c + 1) * in + col) : 0u;
                    wb[k][n][j] = head_op2(lo, hi);
                } else {
                    const int c = k * 8 + t + 4 * j;
                    wb[k][n][j] =
                        c < C && col < in ? head_op1(head_bits(W + (size_t)c * in + col)) : 0u;
                }
            }
        }
    }
    float dw[2][4], cs[2][2]; /* dW (classes g, g + 8; cols 2t, 2t + 1); column sums */
#pragma unroll
    for (int n = 0; n < 2; n++) {
        dw[n][0] = dw[n][1] = dw[n][2] = dw[n][3] = 0.0f;
        cs[n][0] = cs[n][1] = 0.0f;
    }
    float dbc = 0.0f; /* tile 0, warp 0, lane c < C: the sum of dlog[:, c] */
    for (int c0 = rs0; c0 < rs1; c0 += HEAD_CHUNK) {
        const int rc = min(HEAD_CHUNK, rs1 - c0), rc16 = (rc + 15) / 16 * 16;
        head_htile<T> cur; /* the chunk's first tile, loaded during the staging */
        head_htile_load<T>(cur, h, c0, rs1, n0, in, g, t);
        __syncthreads();
        for (int i = threadIdx.x; i < rc16 * 16; i += HEAD_SMMA_WARPS * 32) {
            const int r = i >> 4, c = i & 15;
            dls[r][c] = r < rc && c < C ? dlog[(size_t)(c0 + r) * C + c] : 0.0f;
        }
        __syncthreads();
        if (blockIdx.x == 0 && wp == 0 && lane < C)
            for (int r = 0; r < rc; r++) dbc += dls[r][lane];
        for (int m0 = 0; m0 < rc; m0 += 16) {
            const int rlo = c0 + m0 + g, rhi = rlo + 8; /* this thread's dh rows */
            head_htile<T> nxt; /* the next tile's loads in flight */
            if (m0 + 16 < rc) head_htile_load<T>(nxt, h, c0 + m0 + 16, rs1, n0, in, g, t);
            /* dh's products */
            float acc[2][4];
#pragma unroll
            for (int n = 0; n < 2; n++) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
#pragma unroll
            for (int k = 0; k < NK; k++) {
                unsigned a[4];
                if (BF) {
                    const int c = k * 16 + 2 * t;
                    a[0] = mma_bf16x2(dls[m0 + g][c], dls[m0 + g][c + 1]);
                    a[1] = mma_bf16x2(dls[m0 + g + 8][c], dls[m0 + g + 8][c + 1]);
                    a[2] = mma_bf16x2(dls[m0 + g][c + 8], dls[m0 + g][c + 9]);
                    a[3] = mma_bf16x2(dls[m0 + g + 8][c + 8], dls[m0 + g + 8][c + 9]);
                } else {
                    const int c = k * 8 + t;
                    a[0] = mma_tf32(dls[m0 + g][c]);
                    a[1] = mma_tf32(dls[m0 + g + 8][c]);
                    a[2] = mma_tf32(dls[m0 + g][c + 4]);
                    a[3] = mma_tf32(dls[m0 + g + 8][c + 4]);
                }
#pragma unroll
                for (int n = 0; n < 2; n++) {
                    if (BF)
                        mma_bf16_op(acc[n], a, wb[k][n]);
                    else
                        mma_tf32_op(acc[n], a, wb[k][n]);
                }
            }
            /* f', the stores and the column sums */
#pragma unroll
            for (int n = 0; n < 2; n++) {
                const int col = n0 + 8 * n + 2 * t;
                if (col >= in) continue;
#pragma unroll
                for (int hf = 0; hf < 2; hf++) {
                    const int row = hf ? rhi : rlo;
                    if (row >= rs1) continue;
                    const size_t at = (size_t)row * in + col;
                    const float2 hv = cur.pair[n][hf];
                    const float2 v = head_st2(
                        dh + at, make_float2(ffnn_dev_act_backward_basic(act, acc[n][2 * hf], hv.x),
                                             ffnn_dev_act_backward_basic(act, acc[n][2 * hf + 1],
                                                                         hv.y)));
                    cs[n][0] += v.x;
                    cs[n][1] += v.y;
                }
            }
            /* dW's products: classes x this tile's rows x the warp's columns */
#pragma unroll
            for (int k = 0; k < 16 / KC; k++) {
                unsigned a[4], bq[2][2];
                if (BF) {
                    const int r = m0 + 2 * t;
                    a[0] = mma_bf16x2(dls[r][g], dls[r + 1][g]);
                    a[1] = mma_bf16x2(dls[r][g + 8], dls[r + 1][g + 8]);
                    a[2] = mma_bf16x2(dls[r + 8][g], dls[r + 9][g]);
                    a[3] = mma_bf16x2(dls[r + 8][g + 8], dls[r + 9][g + 8]);
                } else {
                    const int r = m0 + k * 8 + t;
                    a[0] = mma_tf32(dls[r][g]);
                    a[1] = mma_tf32(dls[r][g + 8]);
                    a[2] = mma_tf32(dls[r + 4][g]);
                    a[3] = mma_tf32(dls[r + 4][g + 8]);
                }
#pragma unroll
                for (int n = 0; n < 2; n++) {
#pragma unroll
                    for (int j = 0; j < 2; j++)
                        bq[n][j] = BF ? head_op2(cur.op[n][2 * j], cur.op[n][2 * j + 1])
                                      : head_op1(cur.op[n][2 * k + j]);
                    if (BF)
                        mma_bf16_op(dw[n], a, bq[n]);
                    else
                        mma_tf32_op(dw[n], a, bq[n]);
                }
            }
            if (m0 + 16 < rc) cur = nxt;
        }
    }
    float *ps = part + (size_t)s * stride;
#pragma unroll
    for (int n = 0; n < 2; n++) {
        const int col = n0 + 8 * n + 2 * t;
#pragma unroll
        for (int j = 0; j < 2; j++) {
#pragma unroll
            for (int off = 4; off < 32; off *= 2)
                cs[n][j] += __shfl_xor_sync(FULL_MASK, cs[n][j], off);
        }
        if (col >= in) continue;
        if (g < C) {
            ps[(size_t)g * in + col] = dw[n][0];
            ps[(size_t)g * in + col + 1] = dw[n][1];
        }
        if (g + 8 < C) {
            ps[(size_t)(g + 8) * in + col] = dw[n][2];
            ps[(size_t)(g + 8) * in + col + 1] = dw[n][3];
        }
        if (g == 0) {
            ps[(size_t)C * in + col] = cs[n][0];
            ps[(size_t)C * in + col + 1] = cs[n][1];
        }
    }
    if (blockIdx.x == 0 && wp == 0 && lane < C) ps[(size_t)C * in + in + lane] = dbc;
}

/* The sums of NR values over the warp's lanes in 4 + log2(NR) shuffle rounds: each
 * round sends half of the values still held to the partner lane and keeps the
 * other half (the lane with the round's bit set keeps the upper half), then plain
 * butterflies. After it v[0] of lane l is the warp's sum of value l / (32 / NR).
 * NR a power of two <= 16; every sum in a fixed order (deterministic). */
template <int NR>
static __device__ __forceinline__ void warp_sum_spread(float (&v)[NR], int lane)
{
#pragma unroll
    for (int n = NR, off = 16; n > 1; n /= 2, off /= 2) {
        const bool up = (lane & off) != 0;
#pragma unroll
        for (int i = 0; i < n / 2; i++) {
            const float send = up ? v[i] : v[i + n / 2];
            const float keep = up ? v[i + n / 2] : v[i];
            v[i] = keep + __shfl_xor_sync(FULL_MASK, send, off);
        }
    }
#pragma unroll
    for (int off = 16 / NR; off >= 1; off /= 2) v[0] += __shfl_xor_sync(FULL_MASK, v[0], off);
}

/* The classes of head_fused_kernel's phase-1 sums: CB padded to a power of two. */
static constexpr __host__ __device__ int head_fused_nr(int cb)
{
    return cb <= 4 ? 4 : cb <= 8 ? 8 : 16;
}

/* The whole op for in <= FFNN_HEAD_FUSED_MAX_IN in one kernel (backend.h
 * ffnn_head_rows_per_block rows a block, the block's partial sums its slice):
 * column group q = kw * 32 + lane of a row is thread (slot p, warp kw of the
 * slot)'s, wpr = ceil(in / 128) warps a row, slots = HEAD_WARPS / wpr rows at once;
 * each thread holds W's 4 columns of its group for every class in registers. Per
 * chunk of HEAD_RC rows:
 *   1. each slot's rows: the lane's 4 products per class, the warp's sums
 *      (warp_sum_spread), the warps' partials into shared memory;
 *   2. one warp per row: the logits (the wpr partials in order, + b), the loss
 *      (head_row_loss), dlog into shared memory (b and the rows' labels are loaded
 *      before 1);
 *   3. each slot's rows again (h from L1; head_row_backward): dh = act'(h) *
 *      sum_c dlog[c] W[c] (c in order), stored, and the partial sums dW += dlog h,
 *      dh_db += dh (stored values), db += dlog (thread c < C, rows in order).
 * Then every slot's sums go to shared memory and the block's threads add each
 * output over the slots, s0 + (s1 + (... + s_last)), into the slice (the order of
 * the serial merge it replaced: the same bits). Shapes as head_logits_kernel /
 * head_slices_kernel; part: the slices, each stride floats; dynamic shared memory:
 * head_fused_smem. */
template <typename T, int CB, int ACT>
static __global__ void __launch_bounds__(HEAD_WARPS * 32)
    head_fused_kernel(const T *__restrict__ h, const T *__restrict__ W,
                      const float *__restrict__ b, const int32_t *__restrict__ y, int batch,
                      int in, int C, int rows_per_block, float inv_batch,
                      T *__restrict__ dh, float *__restrict__ row_loss,
                      uint8_t *__restrict__ row_correct, float *__restrict__ part,
                      size_t stride)
{
    constexpr int NR = head_fused_nr(CB); /* classes padded for the sums */
    extern __shared__ float4 buf[];       /* head_fused_smem: zs, then the slots' sums */
    __shared__ float dls[HEAD_RC * CB];   /* [chunk rows, C] dlog */
    float *zs = (float *)buf;             /* [chunk rows, HEAD_WARPS, NR]              */
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
    const int in4 = in / 4, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int wpr = (in4 + 31) / 32, slots = HEAD_WARPS / wpr;
    const int p = warp / wpr, kw = warp % wpr, q = kw * 32 + lane;
    const bool active = p < slots, mine = active && q < in4;
    const int qq = mine ? q : 0; /* threads past the row load group 0, store nothing */
    float4 w[CB], acc[CB];
    float4 dbb = zero;
    float dbc = 0.0f; /* thread c < C: the slice's sum of dlog[:, c] */
#pragma unroll
    for (int c = 0; c < CB; c++) {
        acc[c] = zero;
        w[c] = mine && c < C ? ld4(W + (size_t)c * in, q) : zero;
    }
    const int r0 = blockIdx.x * rows_per_block, r1 = min(batch, r0 + rows_per_block);
    const float bias = b != NULL && lane < C ? __ldg(b + lane) : 0.0f;
    for (int c0 = r0; c0 < r1; c0 += HEAD_RC) {
        const int rc = min(HEAD_RC, r1 - c0);
        /* phase 2's rows' labels, loaded before 1: lane k holds row warp + k HEAD_WARPS's */
        const int lab = lane < HEAD_RC / HEAD_WARPS && warp + lane * HEAD_WARPS < rc
                            ? __ldg(y + c0 + warp + lane * HEAD_WARPS)
                            : 0;
        for (int rr0 = p; active && rr0 < rc; rr0 += slots * HEAD_U) { /* 1 */
            float4 hv[HEAD_U];
#pragma unroll
            for (int u = 0; u < HEAD_U; u++) {
                const int rr = rr0 + u * slots;
                hv[u] = mine && rr < rc ? ld4(h + (size_t)(c0 + rr) * in, q) : zero;
            }
#pragma unroll
            for (int u = 0; u < HEAD_U; u++) {
                const int rr = rr0 + u * slots;
                if (rr >= rc) break;
                float v[NR];
#pragma unroll
                for (int c = 0; c < NR; c++) {
                    v[c] = 0.0f;
                    if (c < CB && c < C) {
                        v[c] = fmaf(hv[u].x, w[c].x, v[c]);
                        v[c] = fmaf(hv[u].y, w[c].y, v[c]);
                        v[c] = fmaf(hv[u].z, w[c].z, v[c]);
                        v[c] = fmaf(hv[u].w, w[c].w, v[c]);
                    }
                }
                warp_sum_spread<NR>(v, lane);
                const int c = lane / (32 / NR);
                if (lane % (32 / NR) == 0 && c < C) zs[(rr * HEAD_WARPS + kw) * NR + c] = v[0];
            }
        }
        __syncthreads();
#pragma unroll 1 /* one copy of the loss's code: most chunks give a warp one row */
        for (int k = 0; k < HEAD_RC / HEAD_WARPS; k++) { /* 2 */
            const int rr = warp + k * HEAD_WARPS, row = c0 + rr;
            if (rr >= rc) break;
            const int label = __shfl_sync(FULL_MASK, lab, k);
            float mz = 0.0f;
            if (lane < C) {
                for (int j = 0; j < wpr; j++) mz += zs[(rr * HEAD_WARPS + j) * NR + lane];
                if (b != NULL) mz = __fadd_rn(mz, bias);
            }
            float z[CB];
#pragma unroll
            for (int c = 0; c < CB; c++) z[c] = __shfl_sync(FULL_MASK, mz, c < C ? c : 0);
            const float d = head_row_loss<CB>(z, C, label, lane, inv_batch, row_loss + row,
                                              row_correct + row);
            if (lane < C) dls[rr * CB + lane] = d;
        }
        __syncthreads();
        if (threadIdx.x < C) { /* the chunk's rows in order; the loads at once */
            float d[HEAD_RC];
#pragma unroll
            for (int rr = 0; rr < HEAD_RC; rr++) d[rr] = rr < rc ? dls[rr * CB + threadIdx.x] : 0.f;
#pragma unroll
            for (int rr = 0; rr < HEAD_RC; rr++)
                if (rr < rc) dbc += d[rr];
        }
        for (int rr0 = p; active && rr0 < rc; rr0 += slots * HEAD_U) { /* 3 */
            float4 hv[HEAD_U];
#pragma unroll
            for (int u = 0; u < HEAD_U; u++) {
                const int rr = rr0 + u * slots;
                hv[u] = rr < rc ? ld4(h + (size_t)(c0 + rr) * in, qq) : zero;
            }
#pragma unroll
            for (int u = 0; u < HEAD_U; u++) {
                const int rr = rr0 + u * slots;
                if (rr >= rc) break;
                head_row_backward<T, CB>(hv[u], dls + rr * CB, w, C, (ffnn_activation)ACT,
                                         mine, dh + (size_t)(c0 + rr) * in, q, acc, dbb);
            }
        }
        __syncthreads(); /* zs and dls are the next chunk's */
    }
    /* the slice: [C, in] dW, then [in] dh_db. With slots > 1 every slot's sums go
     * to shared memory ([slots, C + 1, in / 4] float4s over zs), then the block's
     * threads add each output over the slots in a fixed order, s0 + (s1 + (... +
     * s_last)) */
    float *ps = part + (size_t)blockIdx.x * stride;
    if (slots == 1) {
        if (mine) {
#pragma unroll
            for (int c = 0; c < CB; c++)
                if (c < C) ((float4 *)(ps + (size_t)c * in))[q] = acc[c];
            ((float4 *)(ps + (size_t)C * in))[q] = dbb;
        }
    } else {
        const int n = (C + 1) * in4; /* float4s of a slot's sums */
        if (mine) {
#pragma unroll
            for (int c = 0; c < CB; c++)
                if (c < C) buf[p * n + c * in4 + q] = acc[c];
            buf[p * n + C * in4 + q] = dbb;
        }
        __syncthreads();
        /* output i = c in4 + qi (c == C: dh_db, at ps + C in as well), stepped by the
         * block's threads without a division in the loop */
        constexpr int NT = HEAD_WARPS * 32;
        const int c_step = NT / in4, q_step = NT - c_step * in4;
        int c = (int)threadIdx.x / in4, qi = (int)threadIdx.x - c * in4;
        for (int i = threadIdx.x; i < n; i += NT) {
            float4 v = buf[(slots - 1) * n + i];
            for (int k = slots - 2; k >= 0; k--) {
                float4 s = buf[k * n + i];
                add4(s, v);
                v = s;
            }
            ((float4 *)(ps + (size_t)c * in))[qi] = v;
            c += c_step;
            qi += q_step;
            if (qi >= in4) {
                qi -= in4;
                c++;
            }
        }
    }
    if (threadIdx.x < C) ps[(size_t)C * in + in + threadIdx.x] = dbc;
}

/* The gradient g at *grad (skipped when NULL) and, with p not NULL,
 * p -= lr g (ffnn_dev_sgd: update.cu's rounding). */
static __device__ __forceinline__ void head_store(float *grad, float *p, float lr, float g)
{
    if (grad == NULL) return;
    *grad = g;
    if (p != NULL) *p = ffnn_dev_sgd(*p, lr, g);
}

/* out[i] = sum over the slices s (in order) of part[s * stride + i], for the n =
 * C in + in + C outputs: dW [C, in], then dh_db [in] (skipped when NULL), then db
 * [C] (skipped when NULL); u's parameters updated by them (backend.h
 * ffnn_head_sgd; all NULL: none). */
static __global__ void head_reduce_kernel(const float *__restrict__ part, int slices,
                                          size_t stride, size_t n_dw, size_t in, size_t C,
                                          float *__restrict__ dW, float *__restrict__ dh_db,
                                          float *__restrict__ db, ffnn_head_sgd u)
{
    const size_t n = n_dw + in + C;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = 0.0f;
#pragma unroll 32
        for (int s = 0; s < slices; s++) v += __ldg(part + (size_t)s * stride + i);
        if (i < n_dw)
            head_store(dW + i, u.W != NULL ? u.W + i : NULL, u.lr, v);
        else if (i < n_dw + in)
            head_store(dh_db != NULL ? dh_db + (i - n_dw) : NULL,
                       u.b_below != NULL ? u.b_below + (i - n_dw) : NULL, u.lr, v);
        else
            head_store(db != NULL ? db + (i - n_dw - in) : NULL,
                       u.b != NULL ? u.b + (i - n_dw - in) : NULL, u.lr, v);
    }
}

/* The reduction of the slices' partial sums in scratch (laid out by batch, in, C as
 * launch's) into dW, dh_db and db; sgd (or NULL) as softmax_ce_head_sums's. */
static ffnn_status launch_sums(ffnn_cuda_ctx *ctx, size_t batch, size_t in, size_t C,
                               float *dW, float *db, float *dh_db, const float *scratch,
                               const ffnn_head_sgd *sgd)
{
    const float *part = scratch + ffnn_head_dlog_floats(batch, C);
    const size_t slices = ffnn_head_slices(batch, in), stride = ffnn_head_slice_floats(in, C);
    const size_t n = C * in + in + C;
    const unsigned block = (unsigned)ctx->block_1d;
    ffnn_head_sgd u;
    memset(&u, 0, sizeof u);
    if (sgd != NULL) u = *sgd;
    head_reduce_kernel<<<ffnn_cuda_grid_1d_for(n, block), block, 0, ctx->stream>>>(
        part, (int)slices, stride, C * in, in, C, dW, dh_db, db, u);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "head_reduce_kernel");
    return FFNN_OK;
}

/* head_fused_kernel's dynamic shared memory in bytes: phase 1's partials [HEAD_RC,
 * HEAD_WARPS, NR] floats, or after the rows the slots' sums [slots, C + 1, in / 4]
 * float4s (slots > 1), whichever is larger: at most 256 (C + 1) float4s, 68 KiB. */
template <int CB>
static size_t head_fused_smem(size_t in, size_t C)
{
    const size_t in4 = in / 4, slots = HEAD_WARPS / ((in4 + 31) / 32);
    const size_t zs = (size_t)HEAD_RC * HEAD_WARPS * head_fused_nr(CB) / 4;
    const size_t sums = slots > 1 ? slots * (C + 1) * in4 : 0;
    return (zs > sums ? zs : sums) * sizeof(float4);
}

/* head_fused_kernel for the activation ACT below the layer (a template argument:
 * its f' inlined, no branch per value), batch rows in slices of
 * ffnn_head_rows_per_block. */
template <typename T, int CB, int ACT>
static ffnn_status launch_fused(ffnn_cuda_ctx *ctx, const T *h, const T *W, const float *b,
                                const int32_t *y, size_t batch, size_t in, size_t C, void *dh,
                                float *row_loss, uint8_t *row_correct, float *part,
                                size_t stride)
{
    const size_t smem = head_fused_smem<CB>(in, C);
    if (smem > 48 * 1024)
        FFNN_CUDA_CHECK(ctx, cudaFuncSetAttribute((const void *)head_fused_kernel<T, CB, ACT>,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  (int)smem));
    head_fused_kernel<T, CB, ACT>
        <<<(unsigned)ffnn_head_slices(batch, in), HEAD_WARPS * 32, smem, ctx->stream>>>(
            h, W, b, y, (int)batch, (int)in, (int)C, (int)ffnn_head_rows_per_block(batch, in),
            1.0f / (float)batch, (T *)dh, row_loss, row_correct, part, stride);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "head_fused_kernel");
    return FFNN_OK;
}

/* The slices kernel (dh and the slices' partial sums in part, from dlog; on the
 * tensor cores when mma). */
template <typename T, int CB>
static ffnn_status launch_slices(ffnn_cuda_ctx *ctx, bool mma, const T *h, const T *W,
                                 size_t batch, size_t in, size_t C, ffnn_activation act,
                                 void *dh, const float *dlog, float *part, size_t stride)
{
    const size_t slices = ffnn_head_slices(batch, in);
    const dim3 grid((unsigned)((in + FFNN_HEAD_TILE_COLS - 1) / FFNN_HEAD_TILE_COLS),
                    (unsigned)slices);
    const int rows = (int)((batch + slices - 1) / slices);
    if (mma) {
        head_slices_mma_kernel<T, CB><<<grid, HEAD_SMMA_WARPS * 32, 0, ctx->stream>>>(
            h, W, dlog, (int)batch, (int)in, (int)C, rows, act, (T *)dh, part, stride);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "head_slices_mma_kernel");
        return FFNN_OK;
    }
    head_slices_kernel<T, CB><<<grid, HEAD_COLS * 2 * HEAD_GROUPS, 0, ctx->stream>>>(
        h, W, dlog, (int)batch, (int)in, (int)C, rows, act, (T *)dh, part, stride);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "head_slices_kernel");
    return FFNN_OK;
}

/* 1 when the logits take the tensor cores (head_logits_mma_kernel): bf16 tensors,
 * or fp32 ones on a tf32 context; bf16 rows of whole 16-byte groups (in % 8 == 0);
 * h and W 16-byte aligned. Else head_logits_kernel (fp32 products). */
template <typename T>
static bool head_logits_mma_applies(const ffnn_cuda_ctx *ctx, const T *h, const T *W, size_t in)
{
    if (sizeof(T) == sizeof(float) && ctx->precision != FFNN_PRECISION_TF32) return false;
    return (sizeof(T) == sizeof(float) || in % 8 == 0) && (uintptr_t)h % 16 == 0 &&
           (uintptr_t)W % 16 == 0;
}

/* The three kernels' first two (wider than FFNN_HEAD_FUSED_MAX_IN): the logits
 * kernel (dlog [batch, C] into the scratch, row_loss, row_correct; on the tensor
 * cores where head_logits_mma_applies), then the slices kernel. */
template <typename T, int CB>
static ffnn_status launch_three(ffnn_cuda_ctx *ctx, const T *h, const T *W, const float *b,
                                const int32_t *y, size_t batch, size_t in, size_t C,
                                ffnn_activation act, void *dh, float *row_loss,
                                uint8_t *row_correct, float *dlog, float *part, size_t stride)
{
    if (head_logits_mma_applies<T>(ctx, h, W, in)) {
        head_logits_mma_kernel<T, CB>
            <<<(unsigned)((batch + HEAD_MMA_ROWS - 1) / HEAD_MMA_ROWS), HEAD_MMA_WARPS * 32, 0,
               ctx->stream>>>(h, W, b, y, (int)batch, (int)in, (int)C, 1.0f / (float)batch,
                              dlog, row_loss, row_correct);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "head_logits_mma_kernel");
        return launch_slices<T, CB>(ctx, true, h, W, batch, in, C, act, dh, dlog, part,
                                    stride);
    }
    /* 8 rows a block up to batch 2048, then 16, 24, ...: W is staged once a block */
    const size_t rows_per_block = HEAD_WARPS * ((batch + 2047) / 2048);
    const size_t smem = C * in * sizeof(float);
    if (smem > 48 * 1024)
        FFNN_CUDA_CHECK(ctx, cudaFuncSetAttribute((const void *)head_logits_kernel<T, CB>,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  (int)smem));
    head_logits_kernel<T, CB><<<(unsigned)((batch + rows_per_block - 1) / rows_per_block),
                                HEAD_WARPS * 32, smem, ctx->stream>>>(
        h, W, b, y, (int)batch, (int)in, (int)C, (int)rows_per_block, 1.0f / (float)batch,
        dlog, row_loss, row_correct);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "head_logits_kernel");
    return launch_slices<T, CB>(ctx, false, h, W, batch, in, C, act, dh, dlog, part, stride);
}

/* The op: one kernel up to FFNN_HEAD_FUSED_MAX_IN inputs (dlog stays on chip), else
 * the logits and slices kernels; then the slices' reduction when dW is set. */
template <typename T, int CB>
static ffnn_status launch(ffnn_cuda_ctx *ctx, const void *h, const void *W, const float *b,
                          const int32_t *y, size_t batch, size_t in, size_t C,
                          ffnn_activation act, float *dW, float *db, void *dh, float *dh_db,
                          float *row_loss, uint8_t *row_correct, float *scratch)
{
    const T *h_t = (const T *)h, *W_t = (const T *)W;
    float *dlog = scratch; /* [batch, C], then the slices */
    float *part = scratch + ffnn_head_dlog_floats(batch, C);
    const size_t stride = ffnn_head_slice_floats(in, C);
    ffnn_status st;
    if (in > FFNN_HEAD_FUSED_MAX_IN)
        st = launch_three<T, CB>(ctx, h_t, W_t, b, y, batch, in, C, act, dh, row_loss,
                                 row_correct, dlog, part, stride);
    else if (act == FFNN_ACT_RELU)
        st = launch_fused<T, CB, FFNN_ACT_RELU>(ctx, h_t, W_t, b, y, batch, in, C, dh,
                                                row_loss, row_correct, part, stride);
    else if (act == FFNN_ACT_SIGMOID)
        st = launch_fused<T, CB, FFNN_ACT_SIGMOID>(ctx, h_t, W_t, b, y, batch, in, C, dh,
                                                   row_loss, row_correct, part, stride);
    else if (act == FFNN_ACT_TANH)
        st = launch_fused<T, CB, FFNN_ACT_TANH>(ctx, h_t, W_t, b, y, batch, in, C, dh,
                                                row_loss, row_correct, part, stride);
    else
        st = launch_fused<T, CB, FFNN_ACT_IDENTITY>(ctx, h_t, W_t, b, y, batch, in, C, dh,
                                                    row_loss, row_correct, part, stride);
    if (st != FFNN_OK || dW == NULL) return st;
    return launch_sums(ctx, batch, in, C, dW, db, dh_db, scratch, NULL);
}

/* The launch for the tensors' type and the classes' register count CB >= C. */
template <typename T>
static ffnn_status launch_c(ffnn_cuda_ctx *ctx, const void *h, const void *W, const float *b,
                            const int32_t *y, size_t batch, size_t in, size_t C,
                            ffnn_activation act, float *dW, float *db, void *dh, float *dh_db,
                            float *row_loss, uint8_t *row_correct, float *scratch)
{
    if (C <= 4)
        return launch<T, 4>(ctx, h, W, b, y, batch, in, C, act, dW, db, dh, dh_db, row_loss,
                            row_correct, scratch);
    if (C <= 8)
        return launch<T, 8>(ctx, h, W, b, y, batch, in, C, act, dW, db, dh, dh_db, row_loss,
                            row_correct, scratch);
    if (C <= 12)
        return launch<T, 12>(ctx, h, W, b, y, batch, in, C, act, dW, db, dh, dh_db, row_loss,
                             row_correct, scratch);
    return launch<T, FFNN_HEAD_CMAX>(ctx, h, W, b, y, batch, in, C, act, dW, db, dh, dh_db,
                                     row_loss, row_correct, scratch);
}

/* backend.h softmax_ce_head. Errors: FFNN_ERR_INVALID_ARGUMENT (a NULL tensor, a
 * dimension out of range, in not a multiple of 4, a tensor not aligned for the
 * 16-byte (fp32) / 8-byte (bf16) loads, an activation other than identity, relu,
 * sigmoid, tanh), FFNN_ERR_CUDA. */
extern "C" ffnn_status ffnn_cuda_softmax_ce_head(void *vctx, int bf16, const void *h,
                                                 const void *W, const float *b,
                                                 const int32_t *y, size_t batch, size_t in,
                                                 size_t C, ffnn_activation act, float *dW,
                                                 float *db, void *dh, float *dh_db,
                                                 float *row_loss, uint8_t *row_correct,
                                                 float *scratch)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "softmax_ce_head");
    const size_t align = bf16 ? 8 : 16;
    if (batch == 0 || batch > FFNN_CUDA_MAX_DIM || in == 0 || in % 4 != 0 || C == 0 ||
        C > FFNN_HEAD_CMAX || C * in > FFNN_HEAD_MAX_WEIGHTS || (int)act < 0 ||
        (int)act > (int)FFNN_ACT_TANH)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda softmax_ce_head: batch=%zu in=%zu C=%zu act=%d: batch in "
                         "1..%zu, in a multiple of 4, C in 1..%d, C * in <= %d, act identity, "
                         "relu, sigmoid or tanh", batch, in, C, (int)act,
                         (size_t)FFNN_CUDA_MAX_DIM, FFNN_HEAD_CMAX, FFNN_HEAD_MAX_WEIGHTS);
    if (h == NULL || W == NULL || y == NULL || dh == NULL || row_loss == NULL ||
        row_correct == NULL || scratch == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda softmax_ce_head: h, W, y, dh, row_loss, row_correct and "
                         "scratch must not be NULL");
    if ((uintptr_t)h % align != 0 || (uintptr_t)W % align != 0 || (uintptr_t)dh % align != 0 ||
        (uintptr_t)scratch % 16 != 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda softmax_ce_head: h, W and dh must be %zu-byte aligned, scratch "
                         "16-byte aligned", align);
    if (bf16)
        return launch_c<__nv_bfloat16>(ctx, h, W, b, y, batch, in, C, act, dW, db, dh, dh_db,
                                       row_loss, row_correct, scratch);
    return launch_c<float>(ctx, h, W, b, y, batch, in, C, act, dW, db, dh, dh_db, row_loss,
                           row_correct, scratch);
}

/* backend.h softmax_ce_head_sums. Errors: FFNN_ERR_INVALID_ARGUMENT (a dimension out
 * of softmax_ce_head's range, dW or scratch NULL), FFNN_ERR_CUDA. */
extern "C" ffnn_status ffnn_cuda_softmax_ce_head_sums(void *vctx, size_t batch, size_t in,
                                                      size_t C, float *dW, float *db,
                                                      float *dh_db, const float *scratch,
                                                      const ffnn_head_sgd *sgd)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "softmax_ce_head_sums");
    if (batch == 0 || batch > FFNN_CUDA_MAX_DIM || in == 0 || in % 4 != 0 || C == 0 ||
        C > FFNN_HEAD_CMAX || C * in > FFNN_HEAD_MAX_WEIGHTS)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda softmax_ce_head_sums: batch=%zu in=%zu C=%zu: batch in 1..%zu, "
                         "in a multiple of 4, C in 1..%d, C * in <= %d", batch, in, C,
                         (size_t)FFNN_CUDA_MAX_DIM, FFNN_HEAD_CMAX, FFNN_HEAD_MAX_WEIGHTS);
    if (dW == NULL || scratch == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda softmax_ce_head_sums: dW and scratch must not be NULL");
    return launch_sums(ctx, batch, in, C, dW, db, dh_db, scratch, sgd);
}
