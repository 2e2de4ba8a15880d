/*
 * local1d.cu - the 1-D locally connected layer (seed 002) on the GPU: forward and
 * backward (dW, db, dx) in two variants side by side, the backend's
 * local1d_forward / local1d_backward. The forward kernels and their launch are in
 * local1d_launch.cuh, which the kernel lab's entry point on a caller's stream
 * (ffnn_lab_local1d_forward_stream, lab/local1d_stream.cu) compiles too.
 *
 *   z[b,m]  = act( sum_{r<R} W[m,r] x[b, m+r-pad] + bias[m] )    x [batch,N], W [M,R]
 *   dW[m,r] = sum_b dz[b,m] x[b, m+r-pad]       db[m] = sum_b dz[b,m]
 *   dx[b,n] = sum_{r<R} dz[b, n+pad-r] W[n+pad-r, r]            (0 <= n+pad-r < M)
 *   pad = 0 ('valid', M = N-R+1) or (R-1)/2 ('same', M = N); x outside [0,N) is 0.
 *
 * Variants (FFNN_LOCAL1D_GLOBAL for --strategy naive, FFNN_LOCAL1D_SHARED for tiled):
 *   forward, R <= 8 (seed 002's case; local1d_forward_*_vec): a thread computes a
 *           group of 4 consecutive outputs with 16-byte loads (its 4R weights, 4
 *           biases, 4 outputs, R+3 inputs; narrower loads where a pointer is only
 *           8- or 4-byte aligned), the grid holds one (global) or two (shared)
 *           waves of resident blocks and strides over the rest:
 *     global  inputs read from global memory (the overlap between neighbouring
 *             groups' windows comes from L1);
 *     shared  a block's 1024 outputs stage their inputs with the halo,
 *             x[m0-pad .. m0+1023+R-1-pad], in shared memory (float4 stores, two
 *             buffers taking turns: one barrier per tile); W is read from global
 *             memory, since no other output uses it.
 *           Seed 002 on an H200 (N = 2^21, K = 1000, CUDA graph): 1.93e11 outputs/s
 *           global, 1.67e11 shared, against 1.09e11 and 7.1e10 for the kernels below.
 *           Each kernel loads its weights and biases, then waits for the previous
 *           kernel on the stream (griddepcontrol.wait) before reading x; with
 *           programmatic dependent launch (ffnn_lab_local1d_forward_stream only, see
 *           lab/local1d_stream.h) the next layer's weights stream in while this layer drains.
 *   forward, R > 8, and every backward kernel:
 *   global  one thread per output, every operand read from global memory (the
 *           seed's first kernel): forward and dx one thread per (row, output),
 *           blocks of 256 along the row and grid.y over the rows; dW one thread
 *           per weight (m, r) looping over the batch (the r = 0 thread also sums
 *           db[m]). A thread reads W[m, 0..R-1] - consecutive threads R floats
 *           apart, so each warp load touches R times the lines it uses; L1 keeps
 *           them for the next r.
 *   shared  a block owns a tile of T consecutive outputs (T = 256, fewer when R
 *           is large) and stages in shared memory, with coalesced loads (thread
 *           k reads element k):
 *             forward  its W tile [T, R] (T*R consecutive floats: one coalesced
 *                      stream) once, then for each of its rows the input tile
 *                      with its halo, x[m0-pad .. m0+T-1+R-1-pad] (zero outside
 *                      [0, N)); thread t sums W_s[t, r] x_s[t + r]. Every global
 *                      value is read once per block.
 *             dx       the W rows and dz values of the T + R - 1 outputs that touch
 *                      its T inputs (zero where m is outside [0, M)), W once per
 *                      tile, dz per row; thread t sums over r.
 *             dW, db   the input tile with its halo per row; thread t owns output
 *                      m0 + t: its R sums live in shared memory (its own slots),
 *                      db in a register; the batch loops inside the block, so no
 *                      sum is split across threads. The W tile is written back
 *                      [T, R] coalesced.
 *           W_s rows are S = R (R odd) or R + 1 floats apart: an odd stride, so
 *           the 32 lanes reading W_s[t, r] hit 32 different banks. When even 32
 *           outputs' tiles need more than 48 KiB (R in the hundreds) the shared
 *           variant runs the global kernels instead.
 *
 * Every index is 64-bit (size_t): batch * M may exceed 2^31 (seed 002's int
 * counter overflowed). Grids stride: grid.x over tiles or outputs (at most 2^20
 * blocks), grid.y over rows (at most 65535).
 *
 * Determinism and agreement: every value is summed by one thread, in the
 * reference's order (z and dx over r ascending, dW and db over b ascending), with
 * fmaf; no atomics. A term whose input is outside the layer is left out by the
 * global kernels and added as an exact zero by the shared ones, which changes
 * nothing (a sum that starts at +0 never becomes -0), so the two variants give the
 * same bits. Against the CPU reference (products rounded before the add) they
 * differ by rounding only (tests/test_local1d.c states the bound).
 */
#include "local1d_launch.cuh"

/* global: thread (row, n) gathers dz[row, m] W[m, r] over the outputs m = n+pad-r
 * that read input n. W [M,R], dz [batch,M], dx [batch,N]. */
static __global__ void local1d_dx_global(const float *__restrict__ W,
                                         const float *__restrict__ dz, float *__restrict__ dx,
                                         size_t batch, size_t N, size_t M, int R, int pad)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t row = blockIdx.y; row < batch; row += gridDim.y) {
        const float *dzb = dz + row * M; /* [M] */
        for (size_t n = (size_t)blockIdx.x * blockDim.x + threadIdx.x; n < N; n += stride) {
            float acc = 0.0f;
            for (int r = 0; r < R; ++r) {
                const size_t m = n + (size_t)pad - (size_t)r; /* wraps below 0: then >= M */
                if (m < M) acc = fmaf(dzb[m], W[m * (size_t)R + r], acc);
            }
            dx[row * N + n] = acc;
        }
    }
}

/* shared: a block per tile of T inputs n0 .. n0+T-1; the outputs that touch them
 * are m = base + k, k < H = count + R - 1, base = n0 + pad - (R - 1). Shared
 * memory: W_s [H][S] (rows of W, zero outside [0, M)), then dz_s [H]. */
static __global__ void local1d_dx_shared(const float *__restrict__ W,
                                         const float *__restrict__ dz, float *__restrict__ dx,
                                         size_t batch, size_t N, size_t M, int R, int S,
                                         int pad)
{
    extern __shared__ float smem[];
    const int T = (int)blockDim.x, tid = (int)threadIdx.x;
    float *w_s = smem;                   /* [T + R - 1][S] */
    float *d_s = smem + (T + R - 1) * S; /* [T + R - 1]    */
    L1D_WALK(T, R, tid);
    const size_t tiles = (N + (size_t)T - 1) / (size_t)T;
    for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const size_t n0 = tile * (size_t)T;
        const int count = (int)l1d_min((size_t)T, N - n0);
        const int H = count + R - 1;
        /* base = n0 + pad - (R-1), possibly "negative": unsigned arithmetic wraps,
         * and base + k is then >= M exactly for the outputs below 0 */
        const size_t base = n0 + (size_t)pad - (size_t)(R - 1);
        for (int e = tid, k = q0, r = r0; e < H * R; e += T) { /* k = e / R, r = e % R */
            const size_t m = base + (size_t)k; /* W rows base .. base+H-1: contiguous */
            w_s[k * S + r] = m < M ? W[m * (size_t)R + r] : 0.0f;
            L1D_STEP(k, r);
        }
        for (size_t row = blockIdx.y; row < batch; row += gridDim.y) {
            const float *dzb = dz + row * M; /* [M] */
            for (int k = tid; k < H; k += T) {
                const size_t m = base + (size_t)k;
                d_s[k] = m < M ? dzb[m] : 0.0f;
            }
            __syncthreads();
            if (tid < count) {
                float acc = 0.0f;
                for (int r = 0; r < R; ++r) { /* output m = n + pad - r: k = tid + R-1-r */
                    const int k = tid + R - 1 - r;
                    acc = fmaf(d_s[k], w_s[k * S + r], acc);
                }
                dx[row * N + n0 + tid] = acc;
            }
            __syncthreads();
        }
    }
}

/* ------------------------------------------------------------------ backward: dW, db */

/* global: thread e = m*R + r sums dz[b,m] x[b, m+r-pad] over b; the r = 0 thread
 * also sums db[m] (when db is set). x [batch,N], dz [batch,M], dW [M,R], db [M]. */
static __global__ void local1d_dw_global(const float *__restrict__ x,
                                         const float *__restrict__ dz, float *__restrict__ dW,
                                         float *__restrict__ db, size_t batch, size_t N,
                                         size_t M, int R, int pad)
{
    const size_t total = M * (size_t)R, stride = (size_t)gridDim.x * blockDim.x;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        const size_t m = e / (size_t)R, r = e - m * (size_t)R;
        const size_t n = m + r - (size_t)pad; /* wraps below 0: then >= N */
        const int sums_db = db != NULL && r == 0;
        float acc = 0.0f, acc_b = 0.0f;
        for (size_t b = 0; b < batch; ++b) {
            const float g = dz[b * M + m];
            if (n < N) acc = fmaf(g, x[b * N + n], acc);
            if (sums_db) acc_b += g;
        }
        dW[e] = acc;
        if (sums_db) db[m] = acc_b;
    }
}

/* shared: a block per tile of T outputs (grid.x strides over tiles); thread t owns
 * output m0 + t over the whole batch. Shared memory: acc_s [T][S] (thread t's R
 * sums), then x_s [T + R - 1]. Shapes as local1d_dw_global. */
static __global__ void local1d_dw_shared(const float *__restrict__ x,
                                         const float *__restrict__ dz, float *__restrict__ dW,
                                         float *__restrict__ db, size_t batch, size_t N,
                                         size_t M, int R, int S, int pad)
{
    extern __shared__ float smem[];
    const int T = (int)blockDim.x, tid = (int)threadIdx.x;
    float *acc_s = smem;         /* [T][S]      */
    float *x_s = smem + T * S;   /* [T + R - 1] */
    float *mine = acc_s + tid * S; /* [R] this thread's sums */
    L1D_WALK(T, R, tid);
    const size_t tiles = (M + (size_t)T - 1) / (size_t)T;
    for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const size_t m0 = tile * (size_t)T;
        const int count = (int)l1d_min((size_t)T, M - m0);
        for (int r = 0; r < R; ++r) mine[r] = 0.0f;
        float acc_b = 0.0f;
        for (size_t b = 0; b < batch; ++b) {
            const float *xb = x + b * N; /* [N] */
            for (int k = tid; k < count + R - 1; k += T) {
                const size_t n = m0 + (size_t)k - (size_t)pad; /* wraps below 0 */
                x_s[k] = n < N ? xb[n] : 0.0f;
            }
            __syncthreads();
            if (tid < count) {
                const float g = dz[b * M + m0 + tid];
                for (int r = 0; r < R; ++r) mine[r] = fmaf(g, x_s[tid + r], mine[r]);
                acc_b += g;
            }
            __syncthreads();
        }
        /* the tile's dW [count, R]: count*R consecutive floats, written coalesced */
        float *dWt = dW + m0 * (size_t)R;
        for (int e = tid, q = q0, r = r0; e < count * R; e += T) {
            dWt[e] = acc_s[q * S + r]; /* acc_s[e / R][e % R] */
            L1D_STEP(q, r);
        }
        if (db != NULL && tid < count) db[m0 + tid] = acc_b;
        __syncthreads(); /* acc_s read by other threads before the next tile resets it */
    }
}


static ffnn_status backward_launch(ffnn_cuda_ctx *ctx, cudaStream_t stream,
                                   ffnn_local1d_variant variant, const float *x,
                                   const float *W, const float *dz, float *dx, float *dW,
                                   float *db, size_t batch, size_t N, size_t M, size_t R,
                                   size_t pad)
{
    const int S = odd_stride((int)R);
    const int shared = variant == FFNN_LOCAL1D_SHARED;
    size_t bytes = 0;
    /* dW and db */
    int T = shared ? shared_threads((size_t)S + 1, R - 1, &bytes) : 0;
    if (T > 0) {
        const size_t tiles = (M + (size_t)T - 1) / (size_t)T;
        local1d_dw_shared<<<clamp_blocks(tiles, L1D_GRID_X_MAX), T, bytes, stream>>>(
            x, dz, dW, db, batch, N, M, (int)R, S, (int)pad);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "local1d_dw_shared");
    } else {
        const size_t blocks = (M * R + L1D_THREADS - 1) / L1D_THREADS;
        local1d_dw_global<<<clamp_blocks(blocks, L1D_GRID_X_MAX), L1D_THREADS, 0, stream>>>(
            x, dz, dW, db, batch, N, M, (int)R, (int)pad);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "local1d_dw_global");
    }
    if (dx == NULL || batch == 0) return FFNN_OK;
    /* dx: H = T + R - 1 rows of S + 1 floats (W_s and dz_s) */
    T = shared ? shared_threads((size_t)S + 1, (R - 1) * ((size_t)S + 1), &bytes) : 0;
    if (T > 0) {
        const size_t tiles = (N + (size_t)T - 1) / (size_t)T;
        const dim3 grid(clamp_blocks(tiles, L1D_GRID_X_MAX), row_blocks(batch, tiles, 1));
        local1d_dx_shared<<<grid, T, bytes, stream>>>(W, dz, dx, batch, N, M, (int)R, S,
                                                      (int)pad);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "local1d_dx_shared");
    } else {
        const size_t blocks = (N + L1D_THREADS - 1) / L1D_THREADS;
        const dim3 grid(clamp_blocks(blocks, L1D_GRID_X_MAX), row_blocks(batch, blocks, 0));
        local1d_dx_global<<<grid, L1D_THREADS, 0, stream>>>(W, dz, dx, batch, N, M, (int)R,
                                                            (int)pad);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "local1d_dx_global");
    }
    return FFNN_OK;
}

/* ------------------------------------------------------------------ entry points */

/* The backend's ops (backend.h): the naive matmul variant runs the global kernels,
 * the others the shared ones. */
static ffnn_local1d_variant ctx_variant(const ffnn_cuda_ctx *ctx)
{
    return ctx->matmul == FFNN_MATMUL_NAIVE ? FFNN_LOCAL1D_GLOBAL : FFNN_LOCAL1D_SHARED;
}

extern "C" ffnn_status ffnn_cuda_local1d_forward(void *vctx, const float *x, const float *W,
                                                 const float *b, float *z, size_t batch,
                                                 size_t N, size_t R,
                                                 ffnn_local1d_padding padding,
                                                 ffnn_activation act)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "local1d_forward");
    size_t M = 0;
    ffnn_status st = check_forward("local1d_forward", "cuda local1d_forward", batch, N, R,
                                   padding, act, x, W, z, &M);
    if (st != FFNN_OK) return st;
    return forward_launch(ctx, ctx->stream, ctx_variant(ctx), x, W, b, z, batch, N, M, R,
                          ffnn_local1d_pad(R, padding), act, 0);
}

extern "C" ffnn_status ffnn_cuda_local1d_backward(void *vctx, const float *x, const float *W,
                                                  const float *dz, float *dx, float *dW,
                                                  float *db, size_t batch, size_t N, size_t R,
                                                  ffnn_local1d_padding padding)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "local1d_backward");
    size_t M = 0;
    ffnn_status st = check_shape("local1d_backward", batch, N, R, padding, &M);
    if (st != FFNN_OK) return st;
    if (dW == NULL || (batch > 0 && (x == NULL || dz == NULL)) || (dx != NULL && W == NULL))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda local1d_backward: x, dz, dW (and W when dx is wanted) must not "
                         "be NULL");
    return backward_launch(ctx, ctx->stream, ctx_variant(ctx), x, W, dz, dx, dW, db, batch, N,
                           M, R, ffnn_local1d_pad(R, padding));
}
