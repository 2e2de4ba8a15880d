/*
 * dense.cu - the dense (fully connected) layer on the GPU: one matmul with
 * transpose flags, in two strategies side by side, plus the bias gradient.
 *
 *   C[M,N] = op(A)[M,K] op(B)[K,N] (+ bias[N])
 *     op(A) = A   (A stored [M,K])   or A^T (A stored [K,M]) when trans_a
 *     op(B) = B   (B stored [K,N])   or B^T (B stored [N,K]) when trans_b
 *
 *   forward   z  = x W^T + b : A = x  [batch,in],  B = W [out,in] transposed
 *                              M = batch, N = out, K = in
 *   backward  dx = dz W      : A = dz [batch,out], B = W [out,in]
 *                              M = batch, N = in,  K = out
 *             dW = dz^T x    : A = dz [batch,out] transposed, B = x [batch,in]
 *                              M = out,   N = in,  K = batch
 *             db = column sums of dz [batch,out]
 *
 * Strategies (ffnn_strategy, chosen per context):
 *   naive  one thread per output element, both operands read from global memory
 *          (the seed-000 baseline), 16x16 thread blocks.
 *   tiled  shared-memory tiles with one padding column against bank conflicts,
 *          256 threads per block, each thread a TM x TN register micro-tile, the
 *          next k-step prefetched into registers during the current one:
 *          64x64 block tiles, 16 deep, 4x4 per thread, when the grid still has at
 *          least one block per SM; else 32x32 x 32 deep (2x2), else 16x16 x 64
 *          deep (1x1), so that small layers spread over more SMs.
 *          Measured on an H200 (FP32 CUDA cores, ceiling ~51 TFLOP/s): 4096^3
 *          23 TFLOP/s; 60000x784x256 forward 24 TFLOP/s; batch 64 784->256
 *          forward 14 us (latency bound; naive 38 us).
 *
 * Determinism: every output is accumulated in one thread as a chain of fmaf over
 * k = 0, 1, ..., K-1 (the tiled kernel's zero padding adds exact zeros), then the
 * bias is added. So results do not depend on the tile size chosen, the naive and
 * tiled kernels give the same bits, and reruns give the same bits. The bias
 * gradient uses a fixed-shape tree, no atomics.
 *
 * Napkin math (seed-000 layer 784->256, batch 64): forward 12.8 MFLOP, backward
 * 25.7 MFLOP; at tens of TFLOP/s these are microseconds, so small problems are
 * bound by the number of blocks in flight, hence the tile-size choice.
 */
#include "backend/gemm_plan.h"
#include "bf16.cuh"
#include "common.cuh"
#include "device_math.cuh"

/* ------------------------------------------------------------------ naive */

/* C[row,col] = sum_k op(A)[row,k] op(B)[k,col] (+ bias[col]).
 * A [M,K] (or [K,M] when trans_a), B [K,N] (or [N,K] when trans_b), bias [N] or
 * NULL, C [M,N]. Block 16x16 (ctx->block_2d): x over columns, y over rows; the y grid strides so
 * that any M fits the 65535 limit of gridDim.y. */
static __global__ void matmul_kernel_naive(const float *__restrict__ A, const float *__restrict__ B,
                                    const float *__restrict__ bias, float *__restrict__ C,
                                    int M, int N, int K, int trans_a, int trans_b)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= N) return;
    for (int row = blockIdx.y * blockDim.y + threadIdx.y; row < M;
         row += gridDim.y * blockDim.y) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            const float a = trans_a ? A[(size_t)k * M + row] : A[(size_t)row * K + k];
            const float b = trans_b ? B[(size_t)col * K + k] : B[(size_t)k * N + col];
            acc = fmaf(a, b, acc);
        }
        C[(size_t)row * N + col] = bias != NULL ? acc + bias[col] : acc;
    }
}

static ffnn_status matmul_naive(ffnn_cuda_ctx *ctx, const float *A, const float *B,
                                const float *bias, float *C, int M, int N, int K,
                                int trans_a, int trans_b)
{
    const int e = ctx->block_2d; /* 16 unless options.block_2d: no arithmetic change */
    const dim3 block((unsigned)e, (unsigned)e);
    unsigned grid_y = (unsigned)((M + e - 1) / e);
    if (grid_y > FFNN_CUDA_MAX_GRID_YZ) grid_y = FFNN_CUDA_MAX_GRID_YZ; /* rows stride */
    const dim3 grid((unsigned)((N + e - 1) / e), grid_y);
    matmul_kernel_naive<<<grid, block, 0, ctx->stream>>>(A, B, bias, C, M, N, K, trans_a,
                                                         trans_b);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "matmul_kernel_naive");
    return FFNN_OK;
}

/* ------------------------------------------------------------------ tiled */

#define TILE_THREADS 256 /* threads per block of every tile configuration */

/* Global -> registers for one BK-deep step of the tiled kernel: element e of the
 * tile is op(X)[row0 + r, k0 + k] with (r, k) walking the stored row, so that
 * consecutive threads read consecutive addresses. X is [ROWS_TOTAL, K] when
 * K_CONTIGUOUS, else [K, ROWS_TOTAL]; out-of-range elements read as 0. */
template <int ROWS, int BK, bool K_CONTIGUOUS>
static __device__ __forceinline__ void tile_load(const float *__restrict__ X, int rows_total,
                                                 int K, int row0, int k0, int tid,
                                                 float (&reg)[ROWS * BK / TILE_THREADS])
{
#pragma unroll
    for (int r = 0; r < ROWS * BK / TILE_THREADS; ++r) {
        const int e = tid + r * TILE_THREADS;
        const int row = K_CONTIGUOUS ? e / BK : e % ROWS;
        const int k = K_CONTIGUOUS ? e % BK : e / ROWS;
        const int g_row = row0 + row, g_k = k0 + k;
        float v = 0.0f;
        if (g_row < rows_total && g_k < K)
            v = K_CONTIGUOUS ? X[(size_t)g_row * K + g_k] : X[(size_t)g_k * rows_total + g_row];
        reg[r] = v;
    }
}

/* Registers -> the k-major shared tile S[k][row] (same element order as tile_load). */
template <int ROWS, int BK, bool K_CONTIGUOUS>
static __device__ __forceinline__ void tile_store(float (*S)[ROWS + 1], int tid,
                                                  const float (&reg)[ROWS * BK / TILE_THREADS])
{
#pragma unroll
    for (int r = 0; r < ROWS * BK / TILE_THREADS; ++r) {
        const int e = tid + r * TILE_THREADS;
        const int row = K_CONTIGUOUS ? e / BK : e % ROWS;
        const int k = K_CONTIGUOUS ? e % BK : e / ROWS;
        S[k][row] = reg[r];
    }
}

/* C[BM x BN block tile] = sum over K in BK steps of As[BK][BM] x Bs[BK][BN] (+ bias).
 * Shapes as matmul_kernel_naive. 256 threads as a (BN/TN) x (BM/TM) grid; thread
 * (tx,ty) owns rows ty + i*(BM/TM) and columns tx + j*(BN/TN) of the tile, so a
 * warp reads 16 consecutive Bs entries and 2 As entries per k (no bank conflicts)
 * and writes C in 64-byte runs. Tiles are stored k-major with one padding column
 * (BM+1, BN+1): the transposing stores of a K-contiguous operand (A of the forward
 * and dx, B = W of the forward) then hit distinct banks. The next step's tiles are
 * read into registers while the current one is multiplied (one shared buffer, two
 * barriers per step). Out-of-range elements load as 0, so any M, N, K >= 1 works.
 * gridDim.x covers N; gridDim.y strides over the M tiles (any M fits 65535). */
template <int BM, int BN, int BK, int TM, int TN, bool TRANS_A, bool TRANS_B>
static __global__ void __launch_bounds__(TILE_THREADS)
matmul_kernel_tiled(const float *__restrict__ A, const float *__restrict__ B,
                    const float *__restrict__ bias, float *__restrict__ C, int M, int N,
                    int K, int m_tiles)
{
    constexpr int THREADS_X = BN / TN; /* threads along the columns */
    constexpr int THREADS_Y = BM / TM; /* threads along the rows    */
    static_assert(THREADS_X * THREADS_Y == TILE_THREADS, "tile shape needs 256 threads");
    static_assert((BM * BK) % TILE_THREADS == 0 && (BN * BK) % TILE_THREADS == 0,
                  "tile loads must split evenly over the threads");

    __shared__ float As[BK][BM + 1]; /* As[k][m] = op(A)[m0+m, k0+k] */
    __shared__ float Bs[BK][BN + 1]; /* Bs[k][n] = op(B)[k0+k, n0+n] */
    float a_next[BM * BK / TILE_THREADS]; /* this thread's share of the next A tile */
    float b_next[BN * BK / TILE_THREADS]; /* ... and of the next B tile             */

    const int tid = threadIdx.x;
    const int tx = tid % THREADS_X;
    const int ty = tid / THREADS_X;
    const int n0 = blockIdx.x * BN;

    for (int m_tile = blockIdx.y; m_tile < m_tiles; m_tile += gridDim.y) {
        const int m0 = m_tile * BM;
        float acc[TM][TN];
        ffnn_cuda_zero_tile(acc);

        /* op(A) rows are A's rows unless transposed; op(B) "rows" are B^T's. */
        tile_load<BM, BK, !TRANS_A>(A, M, K, m0, 0, tid, a_next);
        tile_load<BN, BK, TRANS_B>(B, N, K, n0, 0, tid, b_next);
        for (int k0 = 0; k0 < K; k0 += BK) {
            tile_store<BM, BK, !TRANS_A>(As, tid, a_next);
            tile_store<BN, BK, TRANS_B>(Bs, tid, b_next);
            __syncthreads();
            if (k0 + BK < K) { /* in flight while the tile below is multiplied */
                tile_load<BM, BK, !TRANS_A>(A, M, K, m0, k0 + BK, tid, a_next);
                tile_load<BN, BK, TRANS_B>(B, N, K, n0, k0 + BK, tid, b_next);
            }
#pragma unroll
            for (int kk = 0; kk < BK; ++kk) {
                float a[TM], b[TN];
#pragma unroll
                for (int i = 0; i < TM; ++i) a[i] = As[kk][ty + i * THREADS_Y];
#pragma unroll
                for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tx + j * THREADS_X];
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
            }
            __syncthreads();
        }

#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int row = m0 + ty + i * THREADS_Y;
            if (row >= M) continue;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const int col = n0 + tx + j * THREADS_X;
                if (col < N)
                    C[(size_t)row * N + col] = bias != NULL ? acc[i][j] + bias[col] : acc[i][j];
            }
        }
    }
}

/* Launch one tile configuration for the transpose pattern given at run time. */
template <int BM, int BN, int BK, int TM, int TN>
static ffnn_status matmul_tiled_launch(ffnn_cuda_ctx *ctx, const float *A, const float *B,
                                       const float *bias, float *C, int M, int N, int K,
                                       int trans_a, int trans_b)
{
    const int m_tiles = (M + BM - 1) / BM;
    const unsigned grid_y = (unsigned)m_tiles > FFNN_CUDA_MAX_GRID_YZ
                                ? FFNN_CUDA_MAX_GRID_YZ
                                : (unsigned)m_tiles; /* the kernel strides over the rest */
    const dim3 grid((unsigned)((N + BN - 1) / BN), grid_y);
    const dim3 block(TILE_THREADS);
    cudaStream_t s = ctx->stream;
    if (!trans_a && !trans_b)
        matmul_kernel_tiled<BM, BN, BK, TM, TN, false, false>
            <<<grid, block, 0, s>>>(A, B, bias, C, M, N, K, m_tiles);
    else if (!trans_a && trans_b)
        matmul_kernel_tiled<BM, BN, BK, TM, TN, false, true>
            <<<grid, block, 0, s>>>(A, B, bias, C, M, N, K, m_tiles);
    else if (trans_a && !trans_b)
        matmul_kernel_tiled<BM, BN, BK, TM, TN, true, false>
            <<<grid, block, 0, s>>>(A, B, bias, C, M, N, K, m_tiles);
    else
        matmul_kernel_tiled<BM, BN, BK, TM, TN, true, true>
            <<<grid, block, 0, s>>>(A, B, bias, C, M, N, K, m_tiles);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "matmul_kernel_tiled");
    return FFNN_OK;
}

/* Pick the largest block tile whose grid still gives every SM a block; smaller
 * tiles take deeper k steps so that each step still moves 4+ values per thread. */
static ffnn_status matmul_tiled(ffnn_cuda_ctx *ctx, const float *A, const float *B,
                                const float *bias, float *C, int M, int N, int K,
                                int trans_a, int trans_b)
{
    const long long blocks64 = (long long)((M + 63) / 64) * ((N + 63) / 64);
    const long long blocks32 = (long long)((M + 31) / 32) * ((N + 31) / 32);
    if (blocks64 >= ctx->sm_count)
        return matmul_tiled_launch<64, 64, 16, 4, 4>(ctx, A, B, bias, C, M, N, K, trans_a,
                                                     trans_b);
    if (blocks32 >= ctx->sm_count)
        return matmul_tiled_launch<32, 32, 32, 2, 2>(ctx, A, B, bias, C, M, N, K, trans_a,
                                                     trans_b);
    return matmul_tiled_launch<16, 16, 64, 1, 1>(ctx, A, B, bias, C, M, N, K, trans_a,
                                                 trans_b);
}

/* The matmul variant switch (ctx->matmul). Dimensions already checked (1 <= M,N,K <= FFNN_CUDA_MAX_DIM). */
static ffnn_status matmul(ffnn_cuda_ctx *ctx, const float *A, const float *B,
                          const float *bias, float *C, int M, int N, int K, int trans_a,
                          int trans_b)
{
    switch (ctx->matmul) {
    case FFNN_MATMUL_NAIVE:
        return matmul_naive(ctx, A, B, bias, C, M, N, K, trans_a, trans_b);
    case FFNN_MATMUL_LIBRARY:
    case FFNN_MATMUL_LIBRARY_LT: /* its plain ops: cuBLAS (the fused ops: cuBLASLt) */
        return ffnn_cuda_matmul_cublas(ctx, A, B, bias, C, M, N, K, trans_a, trans_b);
    default: /* tiled, and the plain ops of fused, graph and persistent */
        return matmul_tiled(ctx, A, B, bias, C, M, N, K, trans_a, trans_b);
    }
}

/* ------------------------------------------------------------------ bias gradient */

#define BIAS_COLS 32 /* columns per block (one per lane)          */
#define BIAS_ROWS 8  /* row lanes per column (threadIdx.y)        */

/* db[o] = sum_b dz[b,o]. dz [batch,out], db [out]. Block 32x8: threadIdx.x picks
 * the column (coalesced reads of a row), threadIdx.y sums rows y, y+8, y+16, ...
 * in order, then a fixed shared-memory tree 8 -> 4 -> 2 -> 1 (deterministic). */
template <typename T>
static __global__ void bias_grad_kernel(const T *__restrict__ dz, float *__restrict__ db,
                                 int batch, int out, size_t ld)
{
    __shared__ float part[BIAS_ROWS][BIAS_COLS];
    const int col = blockIdx.x * BIAS_COLS + threadIdx.x;
    float s = 0.0f;
    if (col < out)
        for (int b = threadIdx.y; b < batch; b += BIAS_ROWS) s += ffnn_ld(dz, (size_t)b * ld + col);
    part[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
#pragma unroll
    for (int h = BIAS_ROWS / 2; h > 0; h /= 2) {
        if ((int)threadIdx.y < h) part[threadIdx.y][threadIdx.x] += part[threadIdx.y + h][threadIdx.x];
        __syncthreads();
    }
    if (threadIdx.y == 0 && col < out) db[col] = part[0][threadIdx.x];
}

static ffnn_status bias_grad(ffnn_cuda_ctx *ctx, const float *dz, float *db, int batch,
                             int out)
{
    const dim3 block(BIAS_COLS, BIAS_ROWS);
    const dim3 grid((unsigned)((out + BIAS_COLS - 1) / BIAS_COLS));
    bias_grad_kernel<float><<<grid, block, 0, ctx->stream>>>(dz, db, batch, out, (size_t)out);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "bias_grad_kernel");
    return FFNN_OK;
}

/* db [out] (fp32) = sum_b dz16 [batch, out] (bf16, rows ld apart), summed in fp32
 * as above. */
extern "C" ffnn_status ffnn_cuda_dense_bias_grad_bf16(ffnn_cuda_ctx *ctx, const uint16_t *dz16,
                                                size_t ld, float *db, size_t batch, size_t out)
{
    const dim3 block(BIAS_COLS, BIAS_ROWS);
    const dim3 grid((unsigned)((out + BIAS_COLS - 1) / BIAS_COLS));
    bias_grad_kernel<__nv_bfloat16><<<grid, block, 0, ctx->stream>>>(
        (const __nv_bfloat16 *)dz16, db, (int)batch, (int)out, ld);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "bias_grad_kernel<bf16>");
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_cuda_dense_bias_grad(ffnn_cuda_ctx *ctx, const float *dz, float *db,
                                           size_t batch, size_t out)
{
    return bias_grad(ctx, dz, db, (int)batch, (int)out);
}

/* ------------------------------------------------ f' with the bias gradient */
/*
 * The backward pass on cuBLASLt writes dx = dz W with a matmul, then applies f' in
 * place; the layer below then needs its bias gradient, the column sums of that same
 * dx. act_bias_grad_kernel does both in one pass over dx, so that the weight-gradient
 * matmul of the layer below runs without cuBLASLt's BGRADB epilogue (a second kernel
 * there: 1024^3 bf16 dW 5.6 -> 8.1 us on an H200, docs/RESULTS.md "f' with the bias
 * gradient"):
 *   dz[b, c] = T(dz[b, c] * f'(saved[b, c]))   in place, [batch, cols] of T
 *   db[c]    = sum_b dz[b, c]                  fp32 sums of the stored values
 * Grid: x = strips of ABG_STRIP columns, y = chunks of rows_per rows. A block's
 * 256 threads are 32 column lanes (8 adjacent columns each: one 16-byte bf16 word
 * or two float4 when VEC) x 8 row lanes; a row lane sums rows r0 + lane, + 8, ...
 * in order, then a fixed tree over the 8 lanes in shared memory gives the chunk's
 * sums, written to partial[chunk, cols]. The last block of a strip to finish (a
 * counter per strip, as CUDA's threadFenceReduction sample) adds the chunks' sums
 * in chunk order into db and resets the counter. Every sum has a fixed order: the
 * same bits on every run for the same shapes (but not those of a one-pass sum).
 * Measured variants (RESULTS.md): loading 4 rows of a lane at once, no faster;
 * 16-row chunks with the last block's sums split over its row lanes, slower (bf16
 * 1024 x 1024: 9.7 against 7.1-7.6 us).
 */
#define ABG_LANES 32                      /* column lanes of a block            */
#define ABG_ROWS 8                        /* row lanes of a block               */
#define ABG_COLS 8                        /* adjacent columns per thread        */
#define ABG_STRIP (ABG_LANES * ABG_COLS)  /* columns per block: 256             */
#define ABG_CHUNK_ROWS 32                 /* rows per chunk, before the cap     */
#define ABG_MAX_CHUNKS 64                 /* chunks of a launch (grid y)        */

/* Eight values from p (n of them, the rest 0 when not VEC) as float; stored back
 * after rounding to T (float: as they are). */
static __device__ __forceinline__ void abg_load(const float *p, int n, bool vec, float f[8])
{
    if (vec) {
        const float4 a = ((const float4 *)p)[0], b = ((const float4 *)p)[1];
        f[0] = a.x; f[1] = a.y; f[2] = a.z; f[3] = a.w;
        f[4] = b.x; f[5] = b.y; f[6] = b.z; f[7] = b.w;
        return;
    }
#pragma unroll
    for (int k = 0; k < 8; k++) f[k] = k < n ? p[k] : 0.0f;
}
static __device__ __forceinline__ void abg_load(const __nv_bfloat16 *p, int n, bool vec,
                                                float f[8])
{
    if (vec) {
        ffnn_unpack8(*(const uint4 *)p, f);
        return;
    }
#pragma unroll
    for (int k = 0; k < 8; k++) f[k] = k < n ? __bfloat162float(p[k]) : 0.0f;
}
static __device__ __forceinline__ void abg_store(float *p, int n, bool vec, const float f[8])
{
    if (vec) {
        ((float4 *)p)[0] = make_float4(f[0], f[1], f[2], f[3]);
        ((float4 *)p)[1] = make_float4(f[4], f[5], f[6], f[7]);
        return;
    }
#pragma unroll
    for (int k = 0; k < 8; k++)
        if (k < n) p[k] = f[k];
}
static __device__ __forceinline__ void abg_store(__nv_bfloat16 *p, int n, bool vec,
                                                 const float f[8])
{
    if (vec) {
        *(uint4 *)p = ffnn_pack8(f);
        return;
    }
#pragma unroll
    for (int k = 0; k < 8; k++)
        if (k < n) ffnn_st(p, (size_t)k, f[k]);
}
/* v as stored in T (float: v; bf16: rounded to nearest even, as ffnn_st). */
static __device__ __forceinline__ float abg_stored(const float *, float v) { return v; }
static __device__ __forceinline__ float abg_stored(const __nv_bfloat16 *, float v)
{
    return __bfloat162float(__float2bfloat16_rn(v));
}

/* See above. saved, dz [batch, cols] of T (rows cols apart); db [cols]; partial
 * [gridDim.y, cols] fp32 scratch; count [gridDim.x] zero on entry and on exit. VEC:
 * cols % 8 == 0 and both tensors 16-byte aligned. ACT: identity (dz kept, only the
 * sums), relu, sigmoid or tanh (ffnn_dev_act_backward_basic, as activation.cu's
 * kernels: the same bits in dz). */
template <typename T, int ACT, bool VEC>
static __global__ void __launch_bounds__(ABG_LANES *ABG_ROWS)
act_bias_grad_kernel(const T *__restrict__ saved, T *__restrict__ dz, float *__restrict__ db,
                     int batch, int cols, int rows_per, float *__restrict__ partial,
                     unsigned *__restrict__ count)
{
    __shared__ float part[ABG_ROWS][ABG_STRIP];
    __shared__ int is_last;
    const int lane = threadIdx.x % ABG_LANES, row_lane = threadIdx.x / ABG_LANES;
    const int c0 = blockIdx.x * ABG_STRIP + lane * ABG_COLS;
    const int n = cols - c0 < ABG_COLS ? cols - c0 : ABG_COLS; /* <= 0: none */
    const int r0 = blockIdx.y * rows_per;
    const int r1 = r0 + rows_per < batch ? r0 + rows_per : batch;
    float sum[ABG_COLS] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    if (n > 0)
        for (int r = r0 + row_lane; r < r1; r += ABG_ROWS) {
            const size_t at = (size_t)r * cols + c0;
            float g[ABG_COLS];
            abg_load(dz + at, n, VEC, g);
            if (ACT != FFNN_ACT_IDENTITY) {
                float v[ABG_COLS];
                abg_load(saved + at, n, VEC, v);
#pragma unroll
                for (int k = 0; k < ABG_COLS; k++)
                    g[k] = abg_stored(dz, ffnn_dev_act_backward_basic((ffnn_activation)ACT,
                                                                      g[k], v[k]));
                abg_store(dz + at, n, VEC, g);
            }
#pragma unroll
            for (int k = 0; k < ABG_COLS; k++) sum[k] += g[k];
        }
#pragma unroll
    for (int k = 0; k < ABG_COLS; k++) part[row_lane][lane * ABG_COLS + k] = sum[k];
    __syncthreads();
#pragma unroll
    for (int h = ABG_ROWS / 2; h > 0; h /= 2) { /* the fixed tree 8 -> 4 -> 2 -> 1 */
        for (int i = threadIdx.x; i < h * ABG_STRIP; i += blockDim.x)
            part[i / ABG_STRIP][i % ABG_STRIP] += part[i / ABG_STRIP + h][i % ABG_STRIP];
        __syncthreads();
    }
    const int col = blockIdx.x * ABG_STRIP + threadIdx.x; /* one column per thread */
    if (col < cols) partial[(size_t)blockIdx.y * cols + col] = part[0][threadIdx.x];
    __threadfence(); /* every thread's sums visible before the counter says so */
    __syncthreads();
    if (threadIdx.x == 0) is_last = atomicAdd(&count[blockIdx.x], 1u) == gridDim.y - 1;
    __syncthreads();
    if (!is_last) return;
    __threadfence();
    if (col < cols) {
        float s = 0.0f;
        for (unsigned y = 0; y < gridDim.y; y++) s += __ldcg(&partial[(size_t)y * cols + col]);
        db[col] = s;
    }
    if (threadIdx.x == 0) count[blockIdx.x] = 0; /* ready for the next launch */
}

/* act_bias_grad_kernel for T, with act's template argument and VEC where the
 * shapes allow; 0 when the scratch cannot hold the launch (the caller then runs f'
 * and the bias gradient apart). */
template <typename T>
static int act_bias_grad(ffnn_cuda_ctx *ctx, ffnn_activation act, const T *saved, T *dz,
                         float *db, size_t batch, size_t cols)
{
    const size_t strips = (cols + ABG_STRIP - 1) / ABG_STRIP;
    size_t chunks = (batch + ABG_CHUNK_ROWS - 1) / ABG_CHUNK_ROWS;
    if (chunks > ABG_MAX_CHUNKS) chunks = ABG_MAX_CHUNKS;
    while (chunks > 1 && chunks * cols > (size_t)FFNN_GEMM_SPLIT_WS_FLOATS) chunks /= 2;
    if (strips > FFNN_CUDA_REDUCE_COUNTERS || chunks * cols > (size_t)FFNN_GEMM_SPLIT_WS_FLOATS)
        return 0;
    const int rows_per = (int)((batch + chunks - 1) / chunks);
    const dim3 grid((unsigned)strips, (unsigned)chunks);
    const bool vec = cols % ABG_COLS == 0 && (((uintptr_t)saved | (uintptr_t)dz) & 15u) == 0;
#define ABG_LAUNCH(A, V)                                                                   \
    act_bias_grad_kernel<T, A, V><<<grid, ABG_LANES * ABG_ROWS, 0, ctx->stream>>>(          \
        saved, dz, db, (int)batch, (int)cols, rows_per, ctx->split_ws, ctx->reduce_count)
#define ABG_BY_ACT(V)                                                                      \
    switch (act) {                                                                         \
    case FFNN_ACT_RELU: ABG_LAUNCH(FFNN_ACT_RELU, V); break;                               \
    case FFNN_ACT_SIGMOID: ABG_LAUNCH(FFNN_ACT_SIGMOID, V); break;                         \
    case FFNN_ACT_TANH: ABG_LAUNCH(FFNN_ACT_TANH, V); break;                               \
    default: ABG_LAUNCH(FFNN_ACT_IDENTITY, V); break;                                      \
    }
    if (vec) {
        ABG_BY_ACT(true)
    } else {
        ABG_BY_ACT(false)
    }
#undef ABG_BY_ACT
#undef ABG_LAUNCH
    return 1;
}

/* dx = dx * f'(x) in place and db = sum_b dx (fp32), one pass (act_bias_grad_kernel;
 * f' then bias_grad where the scratch is too small). act: identity, relu, sigmoid,
 * tanh. x, dx [batch, cols] fp32. */
extern "C" ffnn_status ffnn_cuda_dense_act_bias_grad(ffnn_cuda_ctx *ctx, ffnn_activation act,
                                               const float *x, float *dx, float *db,
                                               size_t batch, size_t cols)
{
    if (act_bias_grad<float>(ctx, act, x, dx, db, batch, cols)) {
        FFNN_CUDA_LAUNCH_CHECK(ctx, "act_bias_grad_kernel");
        return FFNN_OK;
    }
    ffnn_status st = act == FFNN_ACT_IDENTITY
                         ? FFNN_OK
                         : ffnn_cuda_activation_backward(ctx, act, 0.0f, x, dx, dx, batch * cols);
    return st != FFNN_OK ? st : bias_grad(ctx, dx, db, (int)batch, (int)cols);
}

/* As ffnn_cuda_dense_act_bias_grad on bf16 tensors x16, dx16 [batch, cols]: dx16 =
 * bf16(dx16 * f'(x16)), db (fp32) = the sum of the rounded values. */
extern "C" ffnn_status ffnn_cuda_dense_act_bias_grad_bf16(ffnn_cuda_ctx *ctx, ffnn_activation act,
                                                    const uint16_t *x16, uint16_t *dx16,
                                                    float *db, size_t batch, size_t cols)
{
    if (act_bias_grad<__nv_bfloat16>(ctx, act, (const __nv_bfloat16 *)x16,
                                     (__nv_bfloat16 *)dx16, db, batch, cols)) {
        FFNN_CUDA_LAUNCH_CHECK(ctx, "act_bias_grad_kernel<bf16>");
        return FFNN_OK;
    }
    ffnn_status st = ffnn_cuda_activation_backward_bf16(ctx, act, x16, dx16, batch * cols);
    return st != FFNN_OK ? st : ffnn_cuda_dense_bias_grad_bf16(ctx, dx16, cols, db, batch, cols);
}

/* ------------------------------------------------------------------ entry points */

/* z = x W^T (+ b).  x [batch,in], W [out,in], b [out] or NULL, z [batch,out]. */
extern "C" ffnn_status ffnn_cuda_dense_forward(void *vctx, const float *x, const float *W,
                                               const float *b, float *z, size_t batch,
                                               size_t in, size_t out)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "dense_forward");
    ffnn_status st = ffnn_cuda_check_dense_dims("dense_forward", batch, in, out);
    if (st != FFNN_OK) return st;
    if (x == NULL || W == NULL || z == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda dense_forward: x, W and z must not be NULL");
    return matmul(ctx, x, W, b, z, (int)batch, (int)out, (int)in, 0, 1);
}

/* dW = dz^T x [out,in]; db = column sums of dz [out] (unless NULL);
 * dx = dz W [batch,in] (unless NULL). x [batch,in], W [out,in], dz [batch,out]. */
extern "C" ffnn_status ffnn_cuda_dense_backward(void *vctx, const float *x, const float *W,
                                                const float *dz, float *dx, float *dW,
                                                float *db, size_t batch, size_t in,
                                                size_t out)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "dense_backward");
    ffnn_status st = ffnn_cuda_check_dense_dims("dense_backward", batch, in, out);
    if (st != FFNN_OK) return st;
    if (x == NULL || dz == NULL || dW == NULL || (dx != NULL && W == NULL))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda dense_backward: x, dz, dW (and W when dx is wanted) must not be NULL");
    /* dW [out,in] = dz^T [out,batch] x [batch,in] */
    st = matmul(ctx, dz, x, NULL, dW, (int)out, (int)in, (int)batch, 1, 0);
    if (st != FFNN_OK) return st;
    if (db != NULL) {
        st = bias_grad(ctx, dz, db, (int)batch, (int)out);
        if (st != FFNN_OK) return st;
    }
    if (dx != NULL) {
        /* dx [batch,in] = dz [batch,out] W [out,in] */
        st = matmul(ctx, dz, W, NULL, dx, (int)batch, (int)in, (int)out, 0, 0);
        if (st != FFNN_OK) return st;
    }
    return FFNN_OK;
}
