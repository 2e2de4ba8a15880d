/* persistent_tiles.cuh - the per-thread and per-warp arithmetic of the persistent
 * kernel's phases (persistent.cu): x values from the chunk (x_at, px_sum), dW1's
 * row update (dw1_row) and SGD step (sgd_w1), the tensor-core forward and dW1
 * (forward_tc, dw1_tc), the fixed-point partial logit (partial_fx) and the small
 * weights' update (update_small, small_sums_meet). Included by persistent.cu only. */
#ifndef FFNN_CUDA_PERSISTENT_TILES_CUH
#define FFNN_CUDA_PERSISTENT_TILES_CUH

#include "mma.cuh"
#include "persistent_job.cuh"

/* Four x values of chunk row r, float4 column col of Xs: stored floats, or (U8)
 * one word of 4 raw pixels as the pixel values 0..255 (the sums over them are
 * divided by 255 once: px_sum). MIXED: the word converted by
 * ffnn_dev_u8x4_to_float4_mixed (the forward's loop: the same values in fewer issue
 * slots), else ffnn_dev_u8x4_to_float4. */
template <bool U8, bool MIXED = false>
static __device__ __forceinline__ float4 x_at(const float *Xs, int D4s, int r, int col)
{
    if (U8) {
        const unsigned q = ((const unsigned *)Xs)[r * D4s + col];
        return MIXED ? ffnn_dev_u8x4_to_float4_mixed(q) : ffnn_dev_u8x4_to_float4(q);
    }
    return ((const float4 *)Xs)[r * D4s + col];
}

/* A sum over x_at<U8>'s values in terms of x: U8's sums ran over the pixel
 * values p = 255 x, so divide by 255 (ffnn_dev_div255: two FP32 operations, the
 * quotient's rounding apart from rare near-ties; __fdiv_rn's slow path cost dW1's
 * update 0.6 us per step at batch 64). */
template <bool U8>
static __device__ __forceinline__ float px_sum(float v)
{
    return U8 ? ffnn_dev_div255(v) : v;
}

/* acc[j] += dz1[c0 + r, j] * x[r, col] (one float4 column of row r of the chunk). */
template <int JB, bool U8>
static __device__ __forceinline__ void dw1_row(const float *Xs, const float *dZs, int D4s,
                                               int col, int c0, int r, float4 (&acc)[JB])
{
    const float4 x = x_at<U8>(Xs, D4s, r, col);
#pragma unroll
    for (int j = 0; j < JB; j++) {
        const float dz = dZs[(c0 + r) * JB + j];
        acc[j].x = fmaf(dz, x.x, acc[j].x);
        acc[j].y = fmaf(dz, x.y, acc[j].y);
        acc[j].z = fmaf(dz, x.z, acc[j].z);
        acc[j].w = fmaf(dz, x.w, acc[j].w);
    }
}

/* W1[j, 4 col .. 4 col + 3] -= lr px_sum(g): the SGD update of one word of W1s from
 * its gradient's sums (ffnn_dev_sgd, rounded as optimizer_update). */
template <bool U8>
static __device__ __forceinline__ void sgd_w1(float4 *W14, int D4s, int j, int col, float lr,
                                              float4 g)
{
    float4 w = W14[j * D4s + col];
    w.x = ffnn_dev_sgd(w.x, lr, px_sum<U8>(g.x));
    w.y = ffnn_dev_sgd(w.y, lr, px_sum<U8>(g.y));
    w.z = ffnn_dev_sgd(w.z, lr, px_sum<U8>(g.z));
    w.w = ffnn_dev_sgd(w.w, lr, px_sum<U8>(g.w));
    W14[j * D4s + col] = w;
}

/* Byte sel & 3 of the pixel word q (selector 0x765k, ffnn_dev_u8_byte) as an mma
 * operand: the pixel value's float, exact in TF32. */
static __device__ __forceinline__ unsigned px_op(unsigned q, unsigned sel)
{
    return __float_as_uint(ffnn_dev_u8_byte(q, sel));
}

/* tf32 (TC; the tensor cores, mma.cuh's m16n8k8, on uint8 images whose block rows are
 * one chunk): x W1[J]^T's partial sums over the block's rows. Warp w takes m tile
 * mt = w % MT (rows 16 mt .. 16 mt + 15; MT a power of 2 <= PWARPS) and the 16-column
 * chunks kg, kg + KG, ... of K = in (kg = w / MT, KG = PWARPS / MT). Lane (gq, tq)
 * reads word 4 c + tq (pixels 16 c + 4 tq .. + 3) of rows 16 mt + gq and + 8 and the
 * same 4 columns of W1[unit gq] (one float4); the k slots tq and tq + 4 of the first
 * product take bytes 0 and 1, of the second bytes 2 and 3 (A and B alike, so every
 * product pairs p[b, k] with W1[j, k]); units gq >= JB and rows past `rows` are 0.
 * Pixel values are exact in TF32; W1 is rounded to TF32 (mma_tf32), the sums are the
 * tensor cores' fp32 ones, the two products' accumulators added at the end. Writes
 * red[(kg 16 MT + r) JB + j], rows r < 16 MT, units j < JB. */
template <int JB>
static __device__ __forceinline__ void forward_tc(const unsigned *Xw, const float4 *W14, int D4,
                                                  int D4s, int rows, int MT, float *red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, gq = lane >> 2, tq = lane & 3;
    const int mt = warp % MT, kg = warp / MT, KG = PWARPS / MT;
    const int rA = 16 * mt + gq, rB = rA + 8, NCH = (D4 + 3) / 4;
    float d0[4] = {0.0f, 0.0f, 0.0f, 0.0f}, d1[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 2
    for (int c = kg; c < NCH; c += KG) {
        const int wi = 4 * c + tq;
        const bool ok = wi < D4;
        const unsigned qa = ok && rA < rows ? Xw[rA * D4s + wi] : 0u;
        const unsigned qb = ok && rB < rows ? Xw[rB * D4s + wi] : 0u;
        const float4 w = ok && gq < JB ? W14[gq * D4s + wi] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        const unsigned a0[4] = {px_op(qa, 0x7650u),
                                px_op(qb, 0x7650u),
                                px_op(qa, 0x7651u),
                                px_op(qb, 0x7651u)};
        const unsigned a1[4] = {px_op(qa, 0x7652u),
                                px_op(qb, 0x7652u),
                                px_op(qa, 0x7653u),
                                px_op(qb, 0x7653u)};
        const unsigned b0[2] = {mma_tf32(w.x), mma_tf32(w.y)};
        const unsigned b1[2] = {mma_tf32(w.z), mma_tf32(w.w)};
        mma_tf32_op(d0, a0, b0);
        mma_tf32_op(d1, a1, b1);
    }
    /* d[0], d[1]: row rA, units 2 tq, 2 tq + 1; d[2], d[3]: row rB */
    const int MP = 16 * MT;
#pragma unroll
    for (int u = 0; u < 2; u++) {
        const int j = 2 * tq + u;
        if (j < JB) {
            red[(kg * MP + rA) * JB + j] = d0[u] + d1[u];
            red[(kg * MP + rB) * JB + j] = d0[2 + u] + d1[2 + u];
        }
    }
}

/* tf32 (TC): dW1[J, :]'s sums over the block's rows for word group q (words 8 q ..
 * 8 q + 7, 32 columns) on the tensor cores: D [32 columns, 8 units] = p^T [columns,
 * rows] dz1 [rows, units], K = the rows in steps of 8. Lane (gq, tq): m slots gq and
 * gq + 8 of the first product are bytes 0 and 1 of word 8 q + gq, of the second bytes
 * 2 and 3; k slots tq and tq + 4 are rows 8 kk + tq and + 4. dz1 (dZs [rows, JB]) is
 * rounded to TF32 (mma_tf32), 0 past `rows` and for units >= JB. Returns the lane's
 * sums for word 8 q + gq (its 4 pixels' columns): s0 of unit 2 tq, s1 of unit 2 tq + 1. */
template <int JB>
static __device__ __forceinline__ void dw1_tc(const unsigned *Xw, const float *dZs, int D4,
                                              int D4s, int rows, int q, float4 &s0, float4 &s1)
{
    const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3, wi = 8 * q + gq;
    const bool ok = wi < D4;
    float e[4] = {0.0f, 0.0f, 0.0f, 0.0f}, f[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 2
    for (int r0 = tq; r0 - tq < rows; r0 += 8) {
        const int r1 = r0 + 4;
        const unsigned x0 = ok && r0 < rows ? Xw[r0 * D4s + wi] : 0u;
        const unsigned x1 = ok && r1 < rows ? Xw[r1 * D4s + wi] : 0u;
        const unsigned b[2] = {mma_tf32(gq < JB && r0 < rows ? dZs[r0 * JB + gq] : 0.0f),
                               mma_tf32(gq < JB && r1 < rows ? dZs[r1 * JB + gq] : 0.0f)};
        const unsigned a0[4] = {px_op(x0, 0x7650u),
                                px_op(x0, 0x7651u),
                                px_op(x1, 0x7650u),
                                px_op(x1, 0x7651u)};
        const unsigned a1[4] = {px_op(x0, 0x7652u),
                                px_op(x0, 0x7653u),
                                px_op(x1, 0x7652u),
                                px_op(x1, 0x7653u)};
        mma_tf32_op(e, a0, b);
        mma_tf32_op(f, a1, b);
    }
    /* e: (byte 0, unit 2 tq), (byte 0, 2 tq + 1), (byte 1, 2 tq), (byte 1, 2 tq + 1); f:
     * bytes 2 and 3 */
    s0 = make_float4(e[0], e[2], f[0], f[2]);
    s1 = make_float4(e[1], e[3], f[1], f[3]);
}

/* One barrier: row b, class c's partial logit over the block's JB hidden units
 * (Hs [rows, JB], W2s [C, JB]) in fixed point; 0, with the step's flag *bad set, when
 * it is NaN or not below FX_LIMIT (that step's logits then read NaN). */
template <int JB>
static __device__ __forceinline__ long long partial_fx(const float *Hs, const float *W2s, int b,
                                                       int c, unsigned *bad)
{
    float v = 0.0f;
#pragma unroll
    for (int j = 0; j < JB; j++) v = fmaf(Hs[b * JB + j], W2s[c * JB + j], v);
    if (fabsf(v) < FX_LIMIT) return fx_from(v); /* not NaN, not too large */
    atomicOr(bad, 1u);
    return 0;
}

/* The SGD update of what a block owns besides W1 from gtmp's sums: db2 [C] and dW2
 * [C, JB] (gtmp[c (1 + JB) + k], k = 0: db2[c], else dW2[c, k - 1]) and db1 [JB]
 * (gtmp[C (1 + JB) + j]). */
template <int JB>
static __device__ __forceinline__ void update_small(const pjob_dev &p, const float *gtmp,
                                                    float *W2s, float *b1s, float *b2s, int j0)
{
    const int C = p.C;
    for (int q = threadIdx.x; q < C * (1 + JB); q += PT) {
        const int c = q / (1 + JB), k = q - c * (1 + JB);
        if (k == 0) {
            if (p.has_b2) b2s[c] = ffnn_dev_sgd(b2s[c], p.lr, gtmp[q]);
        } else if (j0 + k - 1 < p.H) {
            W2s[c * JB + k - 1] = ffnn_dev_sgd(W2s[c * JB + k - 1], p.lr, gtmp[q]);
        }
    }
    if (threadIdx.x < JB && p.has_b1 && j0 + (int)threadIdx.x < p.H)
        b1s[threadIdx.x] = ffnn_dev_sgd(b1s[threadIdx.x], p.lr, gtmp[C * (1 + JB) + threadIdx.x]);
}

/* R > 1, after the slice's counter: the small sums (NS = C (1 + JB) + JB floats at
 * offset 4 JB D4 of each row group's wpart part, WP floats a part; blocks g = rg Hg +
 * hg) added in row-group order rg = 0, 1, ... (the same bits in each of the R
 * blocks) into gtmp, then their SGD update (update_small). */
template <int JB>
static __device__ __forceinline__ void small_sums_meet(const pjob_dev &p, float *gtmp,
                                                       float *W2s, float *b1s, float *b2s,
                                                       int j0, int hg, int Hg, int WP, int NS)
{
    for (int q = threadIdx.x; q < NS; q += PT) {
        const float *ws = p.wpart + (size_t)hg * WP + 4 * JB * p.D4 + q;
        float v = __ldcg(ws);
        for (int r = 1; r < p.R; r++) v += __ldcg(ws + (size_t)r * Hg * WP);
        gtmp[q] = v;
    }
    __syncthreads();
    update_small<JB>(p, gtmp, W2s, b1s, b2s, j0);
}

#endif
