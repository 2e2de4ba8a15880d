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
#include "common.cuh"
#include "bf16.cuh"

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
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

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
extern "C" ffnn_status ffnn_cuda_bias_grad_bf16(ffnn_cuda_ctx *ctx, const uint16_t *dz16,
                                                size_t ld, float *db, size_t batch, size_t out)
{
    const dim3 block(BIAS_COLS, BIAS_ROWS);
    const dim3 grid((unsigned)((out + BIAS_COLS - 1) / BIAS_COLS));
    bias_grad_kernel<__nv_bfloat16><<<grid, block, 0, ctx->stream>>>(
        (const __nv_bfloat16 *)dz16, db, (int)batch, (int)out, ld);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "bias_grad_kernel<bf16>");
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_cuda_bias_grad(ffnn_cuda_ctx *ctx, const float *dz, float *db,
                                           size_t batch, size_t out)
{
    return bias_grad(ctx, dz, db, (int)batch, (int)out);
}

/* ------------------------------------------------------------------ entry points */

/* Dimensions of a dense call: each in [1, FFNN_CUDA_MAX_DIM]. */
static ffnn_status check_dims(const char *op, size_t batch, size_t in, size_t out)
{
    if (batch == 0 || in == 0 || out == 0 || batch > FFNN_CUDA_MAX_DIM ||
        in > FFNN_CUDA_MAX_DIM || out > FFNN_CUDA_MAX_DIM)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda %s: batch=%zu in=%zu out=%zu: each must be in 1..%zu", op,
                         batch, in, out, (size_t)FFNN_CUDA_MAX_DIM);
    return FFNN_OK;
}

/* z = x W^T (+ b).  x [batch,in], W [out,in], b [out] or NULL, z [batch,out]. */
extern "C" ffnn_status ffnn_cuda_dense_forward(void *vctx, const float *x, const float *W,
                                               const float *b, float *z, size_t batch,
                                               size_t in, size_t out)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "dense_forward");
    ffnn_status st = check_dims("dense_forward", batch, in, out);
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
    ffnn_status st = check_dims("dense_backward", batch, in, out);
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
