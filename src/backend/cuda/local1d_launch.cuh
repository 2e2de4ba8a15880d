/* local1d_launch.cuh - the local1d forward's kernels and launch (local1d.cu has the
 * formulas and the variants): the forward kernels, the launch helpers, the shape
 * checks and forward_launch. Included by local1d.cu (the backend's ops) and by
 * the kernel lab's lab/local1d_stream.cu (its entry point on a caller's stream,
 * with programmatic dependent launch), each a copy of its own: every function
 * here is static. */
#ifndef FFNN_CUDA_LOCAL1D_LAUNCH_CUH
#define FFNN_CUDA_LOCAL1D_LAUNCH_CUH

#include "common.cuh"
#include "core/local1d.h"
#include "device_math.cuh"

#define L1D_THREADS 256                /* threads per block of every kernel here  */
#define L1D_SHARED_MAX (48u * 1024u)    /* dynamic shared memory without an opt-in */
#define L1D_GRID_X_MAX ((size_t)1 << 20) /* blocks along x; the loops stride       */
#define L1D_TARGET_BLOCKS ((size_t)4096) /* shared forward/dx: rows per block so that
                                            about this many blocks run             */

static __device__ __forceinline__ size_t l1d_min(size_t a, size_t b) { return a < b ? a : b; }

/* A block's T threads walk a [rows, R] tile element by element, thread tid taking
 * e = tid, tid + T, ... (coalesced in global memory); its position (q, r) =
 * (e / R, e % R) in the tile is advanced without a division per element:
 * L1D_WALK declares q0, r0 (the start) and qT, rT (T = qT R + rT), L1D_STEP moves
 * (q, r) on by T elements. */
#define L1D_WALK(T, R, tid)                                                        \
    const int q0 = (tid) / (R), r0 = (tid) % (R), qT = (T) / (R), rT = (T) % (R)
#define L1D_STEP(q, r)                                                             \
    do {                                                                           \
        (q) += qT;                                                                 \
        (r) += rT;                                                                 \
        if ((r) >= R) {                                                            \
            (r) -= R;                                                              \
            ++(q);                                                                 \
        }                                                                          \
    } while (0)

/* ------------------------------------------------------------------ forward */

/* global: thread (row, m) sums its R products from global memory.
 * x [batch,N], W [M,R], bias [M] or NULL, z [batch,M]. */
static __global__ void local1d_forward_global(const float *__restrict__ x,
                                              const float *__restrict__ W,
                                              const float *__restrict__ bias,
                                              float *__restrict__ z, size_t batch, size_t N,
                                              size_t M, int R, int pad, ffnn_activation act)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t row = blockIdx.y; row < batch; row += gridDim.y) {
        const float *xb = x + row * N; /* [N] */
        float *zb = z + row * M;       /* [M] */
        for (size_t m = (size_t)blockIdx.x * blockDim.x + threadIdx.x; m < M; m += stride) {
            const float *wm = W + m * (size_t)R; /* [R] */
            float acc = 0.0f;
            for (int r = 0; r < R; ++r) {
                const size_t n = m + (size_t)r - (size_t)pad; /* wraps below 0: then >= N */
                if (n < N) acc = fmaf(wm[r], xb[n], acc);
            }
            if (bias != NULL) acc += bias[m];
            zb[m] = ffnn_dev_act_forward_basic(act, acc);
        }
    }
}

/* shared: a block per tile of T = blockDim.x outputs (grid.x strides over tiles),
 * rows blockIdx.y, +gridDim.y, ... Shared memory: W_s [T][S], then
 * x_s [T + R - 1]. Shapes as local1d_forward_global. */
static __global__ void local1d_forward_shared(const float *__restrict__ x,
                                              const float *__restrict__ W,
                                              const float *__restrict__ bias,
                                              float *__restrict__ z, size_t batch, size_t N,
                                              size_t M, int R, int S, int pad,
                                              ffnn_activation act)
{
    extern __shared__ float smem[];
    const int T = (int)blockDim.x, tid = (int)threadIdx.x;
    float *w_s = smem;         /* [T][S]     */
    float *x_s = smem + T * S; /* [T + R - 1] */
    L1D_WALK(T, R, tid);
    const size_t tiles = (M + (size_t)T - 1) / (size_t)T;
    for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const size_t m0 = tile * (size_t)T;
        const int count = (int)l1d_min((size_t)T, M - m0); /* outputs in this tile */
        const float *Wt = W + m0 * (size_t)R;              /* [count, R], contiguous */
        for (int e = tid, q = q0, r = r0; e < count * R; e += T) {
            w_s[q * S + r] = Wt[e]; /* W_s[e / R][e % R] */
            L1D_STEP(q, r);
        }
        const float b_m = bias != NULL && tid < count ? bias[m0 + tid] : 0.0f;
        for (size_t row = blockIdx.y; row < batch; row += gridDim.y) {
            const float *xb = x + row * N; /* [N] */
            for (int k = tid; k < count + R - 1; k += T) {
                const size_t n = m0 + (size_t)k - (size_t)pad; /* wraps below 0 */
                x_s[k] = n < N ? xb[n] : 0.0f;
            }
            __syncthreads(); /* W_s (first row) and x_s complete */
            if (tid < count) {
                const float *w = w_s + tid * S; /* [R] */
                float acc = 0.0f;
                for (int r = 0; r < R; ++r) acc = fmaf(w[r], x_s[tid + r], acc);
                if (bias != NULL) acc += b_m;
                z[row * M + m0 + tid] = ffnn_dev_act_forward_basic(act, acc);
            }
            __syncthreads(); /* x_s (and, after the last row, W_s) free again */
        }
    }
}

/* ------------------------------------------------------------------ forward, R <= 8 */
/* (in local1d_vec.cuh: it uses the sizes and walk macros above) */
#include "local1d_vec.cuh"

/* ------------------------------------------------------------------ backward: dx */

/* ------------------------------------------------------------------ launch */

/* Threads per block (256, 128, 64 or 32) of a shared kernel that needs
 * per_thread * T + extra floats of shared memory, the largest that fits
 * L1D_SHARED_MAX; *bytes its shared memory. 0 when even 32 do not fit. */
static int shared_threads(size_t per_thread, size_t extra, size_t *bytes)
{
    for (int T = L1D_THREADS; T >= 32; T /= 2) {
        const size_t floats = per_thread * (size_t)T + extra;
        if (floats <= L1D_SHARED_MAX / sizeof(float)) {
            *bytes = floats * sizeof(float);
            return T;
        }
    }
    return 0;
}

/* The odd row stride of the W tiles: R or R + 1. */
static int odd_stride(int R) { return R % 2 == 1 ? R : R + 1; }

static unsigned clamp_blocks(size_t blocks, size_t cap)
{
    if (blocks > cap) blocks = cap;
    return blocks == 0 ? 1u : (unsigned)blocks;
}

/* grid.y for `rows` rows: each block takes rows y, y + gridDim.y, ...; with
 * `tiles` blocks along x, enough rows per block that about L1D_TARGET_BLOCKS run
 * (shared kernels reuse their W tile across their rows). */
static unsigned row_blocks(size_t rows, size_t tiles, int share)
{
    size_t y = rows;
    if (share) {
        const size_t want = L1D_TARGET_BLOCKS / (tiles ? tiles : 1);
        if (y > want) y = want;
    }
    return clamp_blocks(y, FFNN_CUDA_MAX_GRID_YZ);
}

/* The argument checks every entry point shares; *M the output width. */
static ffnn_status check_shape(const char *op, size_t batch, size_t N, size_t R,
                               ffnn_local1d_padding padding, size_t *M)
{
    if (padding != FFNN_LOCAL1D_VALID && padding != FFNN_LOCAL1D_SAME)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda %s: unknown padding %d (expected valid 0 or same 1)", op,
                         (int)padding);
    if (N == 0 || R == 0 || N > FFNN_CUDA_MAX_DIM || R > FFNN_CUDA_MAX_DIM ||
        batch > FFNN_CUDA_MAX_DIM)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda %s: batch=%zu N=%zu R=%zu: N and R must be in 1..%zu, batch "
                         "at most %zu", op, batch, N, R, (size_t)FFNN_CUDA_MAX_DIM,
                         (size_t)FFNN_CUDA_MAX_DIM);
    *M = ffnn_local1d_output_size(N, R, padding);
    if (*M == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda %s: N=%zu R=%zu %s: %s", op, N, R,
                         padding == FFNN_LOCAL1D_SAME ? "same" : "valid",
                         padding == FFNN_LOCAL1D_SAME
                             ? "'same' padding needs an odd R"
                             : "'valid' output N - R + 1 is below 1");
    return FFNN_OK;
}

/* The checks of a forward entry point (check_shape, the fused activation, x, W and z
 * set when batch > 0); op names it in check_shape's and the activation's messages,
 * who in the NULL one. *M the output width. */
static ffnn_status check_forward(const char *op, const char *who, size_t batch, size_t N,
                                 size_t R, ffnn_local1d_padding padding, ffnn_activation act,
                                 const float *x, const float *W, const float *z, size_t *M)
{
    ffnn_status st = check_shape(op, batch, N, R, padding, M);
    if (st == FFNN_OK) st = ffnn_cuda_check_fused_act(op, "activation", act);
    if (st != FFNN_OK) return st;
    if (batch > 0 && (x == NULL || W == NULL || z == NULL))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: x, W and z must not be NULL", who);
    return FFNN_OK;
}

/* Resident blocks per SM of a kernel (L1D_THREADS threads, no dynamic shared
 * memory), asked once per kernel. */
template <typename Kernel>
static int l1d_occupancy(Kernel kernel)
{
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, L1D_THREADS, 0) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        blocks = 4;
    }
    return blocks > 0 ? blocks : 1;
}

/* One forward of the R <= 8 kernels. grid.x covers the row's 1024-output blocks,
 * but at most L1D_WAVES_* times what the GPU holds at once (the kernels stride over
 * the rest); grid.y the rows. Measured on an H200 (seed 002, N = 2^21, R = 3): the
 * global kernel is fastest with one resident wave (~3 groups per thread), the
 * shared one with two; a block per 1024 outputs was 5-10% slower for global.
 * pdl: launch with programmatic stream serialization (compute capability >= 9.0):
 * the kernel may start while the previous one on the stream drains. */
#define L1D_WAVES_GLOBAL 1
#define L1D_WAVES_SHARED 2

template <int R>
static cudaError_t forward_vec(cudaStream_t stream, int shared, int pdl, const float *x,
                               const float *W, const float *bias, float *z, size_t batch,
                               size_t N, size_t M, int pad, ffnn_activation act)
{
    static const int occ_s = l1d_occupancy(local1d_forward_shared_vec<R>);
    static const int occ_g = l1d_occupancy(local1d_forward_global_vec<R>);
    int device = 0, sms = 0, major = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    if (err != cudaSuccess) return err;
    const size_t need = (M + L1D_TW - 1) / L1D_TW; /* both kernels: 1024 outputs a block */
    const unsigned gy = clamp_blocks(batch, FFNN_CUDA_MAX_GRID_YZ);
    const size_t resident = shared ? (size_t)L1D_WAVES_SHARED * (size_t)sms * (size_t)occ_s
                                   : (size_t)L1D_WAVES_GLOBAL * (size_t)sms * (size_t)occ_g;
    const size_t cap = resident / gy < L1D_GRID_X_MAX ? resident / gy : L1D_GRID_X_MAX;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(clamp_blocks(need, cap), gy);
    cfg.blockDim = dim3(L1D_THREADS);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1] = {};
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pdl && major >= 9 ? 1 : 0;
    if (shared)
        return cudaLaunchKernelEx(&cfg, local1d_forward_shared_vec<R>, x, W, bias, z, batch, N,
                                  M, pad, act);
    return cudaLaunchKernelEx(&cfg, local1d_forward_global_vec<R>, x, W, bias, z, batch, N,
                              M, pad, act);
}

/* Forward on stream; ctx (may be NULL) is poisoned by a sticky launch error. pdl:
 * let the kernel start before the previous one on the stream has finished (only
 * the lab's ffnn_lab_local1d_forward_stream asks; see lab/local1d_stream.h). */
static ffnn_status forward_launch(ffnn_cuda_ctx *ctx, cudaStream_t stream,
                                  ffnn_local1d_variant variant, const float *x, const float *W,
                                  const float *bias, float *z, size_t batch, size_t N,
                                  size_t M, size_t R, size_t pad, ffnn_activation act, int pdl)
{
    if (batch == 0) return FFNN_OK;
    const int shared_v = variant == FFNN_LOCAL1D_SHARED;
    if (R <= L1D_VEC_RMAX) {
        cudaError_t err = cudaSuccess;
        switch (R) {
#define L1D_CASE(r)                                                                        \
    case r:                                                                                \
        err = forward_vec<r>(stream, shared_v, pdl, x, W, bias, z, batch, N, M, (int)pad, \
                             act);                                                         \
        break;
            L1D_CASE(1) L1D_CASE(2) L1D_CASE(3) L1D_CASE(4)
            L1D_CASE(5) L1D_CASE(6) L1D_CASE(7) L1D_CASE(8)
#undef L1D_CASE
        }
        if (err != cudaSuccess)
            return ffnn_cuda_fail_call(ctx, err, __FILE__, __LINE__,
                                       shared_v ? "launch of local1d_forward_shared_vec"
                                                : "launch of local1d_forward_global_vec");
        FFNN_CUDA_LAUNCH_CHECK(ctx, "local1d_forward_vec");
        return FFNN_OK;
    }
    const int S = odd_stride((int)R);
    size_t bytes = 0;
    const int T = shared_v ? shared_threads((size_t)S + 1, R - 1, &bytes) : 0;
    if (T > 0) {
        const size_t tiles = (M + (size_t)T - 1) / (size_t)T;
        const dim3 grid(clamp_blocks(tiles, L1D_GRID_X_MAX), row_blocks(batch, tiles, 1));
        local1d_forward_shared<<<grid, T, bytes, stream>>>(x, W, bias, z, batch, N, M, (int)R,
                                                           S, (int)pad, act);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "local1d_forward_shared");
        return FFNN_OK;
    }
    const size_t blocks = (M + L1D_THREADS - 1) / L1D_THREADS;
    const dim3 grid(clamp_blocks(blocks, L1D_GRID_X_MAX), row_blocks(batch, blocks, 0));
    local1d_forward_global<<<grid, L1D_THREADS, 0, stream>>>(x, W, bias, z, batch, N, M,
                                                             (int)R, (int)pad, act);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "local1d_forward_global");
    return FFNN_OK;
}

#endif
