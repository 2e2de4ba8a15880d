/* head_fused.cuh - the fused output layer in one kernel for in <=
 * FFNN_HEAD_FUSED_MAX_IN (head.cu): a block's rows end to end, logits, loss, dlog on
 * chip, dh and the block's partial sums (head_fused_kernel). Included by head.cu
 * only. */
#ifndef FFNN_CUDA_HEAD_FUSED_CUH
#define FFNN_CUDA_HEAD_FUSED_CUH

#include "head_common.cuh"

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
/* head_fused_kernel's thread: slot p of `slots` (rows at once), warp kw of wpr of its
 * row, column group q (qq: q, or 0 past the row), mine: q is a column group of the row */
typedef struct head_fused_thread {
    int lane, warp, in4, wpr, slots, p, kw, q, qq;
    bool active, mine;
} head_fused_thread;

/* Phase 1 of a chunk (rows c0 .. c0 + rc - 1): each slot's rows, the lane's 4 products
 * per class, the warp's sums (warp_sum_spread), the warps' partials into zs [rows,
 * HEAD_WARPS, NR] */
template <typename T, int CB, int NR>
static __device__ __forceinline__ void head_fused_partials(const T *__restrict__ h,
                                                           const float4 (&w)[CB], int in, int C,
                                                           int c0, int rc, float *zs,
                                                           const head_fused_thread &th)
{
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
    const int lane = th.lane, slots = th.slots, kw = th.kw, q = th.q;
    for (int rr0 = th.p; th.active && rr0 < rc; rr0 += slots * HEAD_U) {
        float4 hv[HEAD_U];
#pragma unroll
        for (int u = 0; u < HEAD_U; u++) {
            const int rr = rr0 + u * slots;
            hv[u] = th.mine && rr < rc ? ld4(h + (size_t)(c0 + rr) * in, q) : zero;
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
}

/* Phase 2: one warp per row, the logits (the wpr partials in order, + b), the loss
 * (head_row_loss), dlog into dls [rows, CB]; lab: lane k holds row warp + k
 * HEAD_WARPS's label */
template <int CB, int NR>
static __device__ __forceinline__ void head_fused_loss(const float *zs, float *dls, int lab,
                                                       const float *__restrict__ b, float bias,
                                                       int C, int c0, int rc, float inv_batch,
                                                       float *__restrict__ row_loss,
                                                       uint8_t *__restrict__ row_correct,
                                                       const head_fused_thread &th)
{
    const int lane = th.lane, warp = th.warp, wpr = th.wpr;
#pragma unroll 1 /* one copy of the loss's code: most chunks give a warp one row */
    for (int k = 0; k < HEAD_RC / HEAD_WARPS; k++) {
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
}

/* Phase 3: each slot's rows again (h from L1; head_row_backward): dh stored, the
 * partial sums dW (acc) and dh_db (dbb) */
template <typename T, int CB, int ACT>
static __device__ __forceinline__ void head_fused_backward(
    const T *__restrict__ h, const float4 (&w)[CB], const float *dls, int in, int C, int c0,
    int rc, T *__restrict__ dh, float4 (&acc)[CB], float4 &dbb, const head_fused_thread &th)
{
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
    const int slots = th.slots;
    for (int rr0 = th.p; th.active && rr0 < rc; rr0 += slots * HEAD_U) {
        float4 hv[HEAD_U];
#pragma unroll
        for (int u = 0; u < HEAD_U; u++) {
            const int rr = rr0 + u * slots;
            hv[u] = rr < rc ? ld4(h + (size_t)(c0 + rr) * in, th.qq) : zero;
        }
#pragma unroll
        for (int u = 0; u < HEAD_U; u++) {
            const int rr = rr0 + u * slots;
            if (rr >= rc) break;
            head_row_backward<T, CB>(hv[u], dls + rr * CB, w, C, (ffnn_activation)ACT, th.mine,
                                     dh + (size_t)(c0 + rr) * in, th.q, acc, dbb);
        }
    }
}

/* The slice ps: [C, in] dW, then [in] dh_db. With slots > 1 every slot's sums go to
 * shared memory ([slots, C + 1, in / 4] float4s over buf), then the block's threads
 * add each output over the slots in a fixed order, s0 + (s1 + (... + s_last)) */
template <int CB>
static __device__ __forceinline__ void head_fused_write(float *ps, float4 *buf, int in, int C,
                                                        const float4 (&acc)[CB], float4 dbb,
                                                        const head_fused_thread &th)
{
    const int in4 = th.in4, slots = th.slots, p = th.p, q = th.q;
    if (slots == 1) {
        if (th.mine) {
#pragma unroll
            for (int c = 0; c < CB; c++)
                if (c < C) ((float4 *)(ps + (size_t)c * in))[q] = acc[c];
            ((float4 *)(ps + (size_t)C * in))[q] = dbb;
        }
    } else {
        const int n = (C + 1) * in4; /* float4s of a slot's sums */
        if (th.mine) {
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
}

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
    head_fused_thread th;
    th.in4 = in / 4, th.lane = threadIdx.x & 31, th.warp = threadIdx.x >> 5;
    th.wpr = (th.in4 + 31) / 32, th.slots = HEAD_WARPS / th.wpr;
    th.p = th.warp / th.wpr, th.kw = th.warp % th.wpr, th.q = th.kw * 32 + th.lane;
    th.active = th.p < th.slots, th.mine = th.active && th.q < th.in4;
    th.qq = th.mine ? th.q : 0; /* threads past the row load group 0, store nothing */
    const int lane = th.lane, warp = th.warp;
    float4 w[CB], acc[CB];
    float4 dbb = zero;
    float dbc = 0.0f; /* thread c < C: the slice's sum of dlog[:, c] */
#pragma unroll
    for (int c = 0; c < CB; c++) {
        acc[c] = zero;
        w[c] = th.mine && c < C ? ld4(W + (size_t)c * in, th.q) : zero;
    }
    const int r0 = blockIdx.x * rows_per_block, r1 = min(batch, r0 + rows_per_block);
    const float bias = b != NULL && lane < C ? __ldg(b + lane) : 0.0f;
    for (int c0 = r0; c0 < r1; c0 += HEAD_RC) {
        const int rc = min(HEAD_RC, r1 - c0);
        /* phase 2's rows' labels, loaded before 1: lane k holds row warp + k HEAD_WARPS's */
        const int lab = lane < HEAD_RC / HEAD_WARPS && warp + lane * HEAD_WARPS < rc
                            ? __ldg(y + c0 + warp + lane * HEAD_WARPS)
                            : 0;
        head_fused_partials<T, CB, NR>(h, w, in, C, c0, rc, zs, th); /* 1 */
        __syncthreads();
        head_fused_loss<CB, NR>(zs, dls, lab, b, bias, C, c0, rc, inv_batch, row_loss,
                                row_correct, th); /* 2 */
        __syncthreads();
        if (threadIdx.x < C) { /* the chunk's rows in order; the loads at once */
            float d[HEAD_RC];
#pragma unroll
            for (int rr = 0; rr < HEAD_RC; rr++) d[rr] = rr < rc ? dls[rr * CB + threadIdx.x] : 0.f;
#pragma unroll
            for (int rr = 0; rr < HEAD_RC; rr++)
                if (rr < rc) dbc += d[rr];
        }
        head_fused_backward<T, CB, ACT>(h, w, dls, in, C, c0, rc, dh, acc, dbb, th); /* 3 */
        __syncthreads(); /* zs and dls are the next chunk's */
    }
    float *ps = part + (size_t)blockIdx.x * stride;
    head_fused_write<CB>(ps, buf, in, C, acc, dbb, th);
    if (threadIdx.x < C) ps[(size_t)C * in + in + threadIdx.x] = dbc;
}

#endif
