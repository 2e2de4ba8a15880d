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
 *
 * Files: head_common.cuh (sizes, loads, the row's loss), head_mma.cuh (the tensor-core
 * logits and slices), head_fused.cuh (the one-kernel head); here the fp32 logits and
 * slices kernels, the reduction, and the launches.
 */
#include <math.h>
#include <string.h>

#include "head_common.cuh"
#include "head_fused.cuh"
#include "head_mma.cuh"

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
