/* head_mma.cuh - the fused output layer's kernels on the tensor cores (head.cu): the
 * logits (head_logits_mma_kernel) and the slices' backward (head_slices_mma_kernel,
 * in phases: W's operand, a tile's dh, a tile's dW, the slice's sums out). Included
 * by head.cu only. */
#ifndef FFNN_CUDA_HEAD_MMA_CUH
#define FFNN_CUDA_HEAD_MMA_CUH

#include "head_common.cuh"
#include "mma.cuh"


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

/* k steps of dh's mma over the classes: KC classes a step (bf16 16, tf32 8) */
template <typename T>
static constexpr __host__ __device__ int head_smma_kc()
{
    return sizeof(T) == 2 ? 16 : 8;
}

/* head_slices_mma_kernel, its first phase: dh's B operand for the whole slice, W
 * [class k, col n0 + 8n + g] (tf32 rounded, or bf16 pairs), zeros past C or in */
template <typename T, int NK>
static __device__ __forceinline__ void head_smma_w_operand(const T *__restrict__ W, int in,
                                                           int C, int n0, int g, int t,
                                                           unsigned (&wb)[NK][2][2])
{
    constexpr bool BF = sizeof(T) == 2;
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
}

/* One m16 tile (chunk rows m0 .. m0 + 15 of dls [rows, 16]): dh's products dlog W
 * over the classes, then per value (rows rlo, rhi; cols 2t, 2t + 1 of each n8 tile)
 * dh = act'(that, h) rounded to dh's type and stored, the stored values added into
 * the thread's column sums cs (rows past rs1, cols past in skipped) */
template <typename T, int NK>
static __device__ __forceinline__ void head_smma_dh_tile(
    const float (*dls)[16], int m0, int g, int t, const unsigned (&wb)[NK][2][2],
    const head_htile<T> &cur, int n0, int in, int rlo, int rhi, int rs1, ffnn_activation act,
    T *__restrict__ dh, float (&cs)[2][2])
{
    constexpr bool BF = sizeof(T) == 2;
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
                                     ffnn_dev_act_backward_basic(act, acc[n][2 * hf + 1], hv.y)));
            cs[n][0] += v.x;
            cs[n][1] += v.y;
        }
    }
}

/* One m16 tile's dW products: classes x the tile's rows x the warp's columns,
 * dw [n8 tile][classes g, g + 8; cols 2t, 2t + 1] += dlog^T h */
template <typename T>
static __device__ __forceinline__ void head_smma_dw_tile(const float (*dls)[16], int m0, int g,
                                                         int t, const head_htile<T> &cur,
                                                         float (&dw)[2][4])
{
    constexpr bool BF = sizeof(T) == 2;
    constexpr int KC = head_smma_kc<T>();
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
}

/* The slice's sums out to part's slice ps: the warp's columns of dW [C, in], dh_db
 * [in] after a butterfly over the eight lanes of a column (xor 4, 8, 16); tile 0's
 * warp 0 the classes' db [C] */
static __device__ __forceinline__ void head_smma_write(float *ps, int n0, int g, int t, int in,
                                                       int C, const float (&dw)[2][4],
                                                       float (&cs)[2][2], float dbc, int lane,
                                                       int wp)
{
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

template <typename T, int CB>
static __global__ void __launch_bounds__(HEAD_SMMA_WARPS * 32)
    head_slices_mma_kernel(const T *__restrict__ h, const T *__restrict__ W,
                           const float *__restrict__ dlog, int batch, int in, int C,
                           int rows_per_slice, ffnn_activation act, T *__restrict__ dh,
                           float *__restrict__ part, size_t stride)
{
    constexpr int KC = head_smma_kc<T>();  /* classes a k step of dh's mma       */
    constexpr int NK = (CB + KC - 1) / KC; /* k steps over the classes           */
    static_assert(CB <= 16, "the classes: one m16 tile of dW");
    __shared__ float dls[HEAD_CHUNK + 16][16]; /* [chunk rows, classes], zero padded */
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3, wp = threadIdx.x >> 5;
    const int n0 = blockIdx.x * FFNN_HEAD_TILE_COLS + wp * 16; /* the warp's columns */
    const int s = blockIdx.y, rs0 = s * rows_per_slice, rs1 = min(batch, rs0 + rows_per_slice);
    unsigned wb[NK][2][2]; /* dh's B operand: W [class k, col n0 + 8n + g] */
    head_smma_w_operand<T, NK>(W, in, C, n0, g, t, wb);
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
            head_smma_dh_tile<T, NK>(dls, m0, g, t, wb, cur, n0, in, rlo, rhi, rs1, act, dh, cs);
            head_smma_dw_tile<T>(dls, m0, g, t, cur, dw);
            if (m0 + 16 < rc) cur = nxt;
        }
    }
    head_smma_write(part + (size_t)s * stride, n0, g, t, in, C, dw, cs, dbc, lane, wp);
}

#endif
