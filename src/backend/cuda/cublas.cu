/*
 * cublas.cu - the matmul of the cublas strategy (--strategy cublas): dense.cu's
 * matmul() hands every C[M,N] = op(A) op(B) (+ bias) of the dense forward and
 * backward to cuBLAS; activations, loss, bias gradient and update stay ffnn's own
 * kernels.
 *
 * Row-major through column-major cuBLAS: a row-major [R,C] array is the
 * column-major [C,R] array of its transpose, so
 *     C^T [N,M] = op(B)^T [N,K] op(A)^T [K,M]      (column-major, ldc = N)
 *   first operand  op(B)^T: B stored [K,N] row-major is op(B)^T as it lies
 *                  (CUBLAS_OP_N, ld N); B stored [N,K] (trans_b) is op(B)^T
 *                  transposed (CUBLAS_OP_T, ld K)
 *   second operand op(A)^T: A stored [M,K] is op(A)^T as it lies (CUBLAS_OP_N,
 *                  ld K); A stored [K,M] (trans_a) needs CUBLAS_OP_T, ld M
 * and cublasGemmEx(m = N, n = M, k = K); fp32 output, fp32 inputs (bf16: their
 * bfloat16 copies, same layout).
 *
 * Precision (ctx->precision, read at every call, so the context's options take
 * effect at the next matmul): the compute type of cublasGemmEx
 *   fp32  CUBLAS_COMPUTE_32F           IEEE fp32 multiply-adds; the handle's math
 *                                      mode is CUBLAS_DEFAULT_MATH, which never
 *                                      uses TF32 for COMPUTE_32F (TF32 needs
 *                                      FAST_TF32 or CUBLAS_TF32_TENSOR_OP_MATH)
 *   tf32  CUBLAS_COMPUTE_32F_FAST_TF32 tensor cores, inputs rounded to TF32 (10
 *                                      mantissa bits), fp32 accumulation
 *   bf16  CUBLAS_COMPUTE_32F on bfloat16 copies of A and B: a small kernel rounds
 *         both operands to bfloat16 (7 stored mantissa bits, round to nearest
 *         even) into the context's scratch, then a bf16 x bf16 -> fp32 GEMM on
 *         the tensor cores, fp32 accumulation. Not CUBLAS_COMPUTE_32F_FAST_16BF:
 *         that only *allows* bf16, and on an H200 with cuBLAS 13 it gave the
 *         same results as FAST_TF32 (same largest error against the cpu, same
 *         training losses): its heuristics picked TF32 kernels.
 *   tf32x3 CUBLAS_COMPUTE_32F_FAST_TF32 over K' = 3K on split copies of A and B
 *         (fp32's accuracy on the tensor cores: the tf32x3 section below)
 *
 * Bias: when bias is non-NULL a small kernel adds bias[col] to every row of C after
 * the GEMM (beta = 0): C = round(acc) + bias, rounded once more, exactly the
 * rounding of ffnn's own matmul kernels (acc + bias[col]).
 *
 * The handle (made on first use, kept in ctx->cublas as a cublas_state *): bound to
 * ctx->stream, with an explicit 32 MiB workspace cudaMalloc'd at creation
 * (cublasSetWorkspace, after cublasSetStream, which resets the workspace). The
 * scratch (bf16 operand copies; cublaslt's tf32 x^T) grows on demand (to at least
 * twice its size); a replaced buffer is kept, not freed, until the context is
 * destroyed, because a CUDA graph captured earlier may still read it. So:
 *   - CUDA graphs: a GEMM allocates nothing and is capture-safe. When the very
 *     first matmul of a context (or one needing a larger scratch) happens
 *     during a capture, the allocation is made with the thread's capture mode
 *     switched to relaxed for that call only (cudaThreadExchangeStreamCaptureMode),
 *     so that cudaMalloc is allowed and nothing of it is recorded.
 *   - Determinism: cuBLAS documents bit-identical results from run to run on
 *     GPUs of the same architecture and SM count with the same toolkit, for one
 *     stream per handle, unless atomics are allowed: the handle keeps
 *     CUBLAS_ATOMICS_NOT_ALLOWED (set explicitly). Its kernel choice depends on
 *     the workspace size, which is fixed here. So reruns give the same bits
 *     (tests/test_cublas.c checks); results may differ across GPU models, cuBLAS
 *     versions and from ffnn's own kernels (another summation order).
 *
 * Errors: every cuBLAS call goes through FFNN_CUBLAS_CHECK: FFNN_ERR_CUDA with
 * "src/backend/cuda/cublas.cu:LINE: cublasGemmEx failed: CUBLAS_STATUS_... (description)";
 * when CUDA's last error is a sticky one the context is poisoned as for any CUDA
 * call (common.cuh).
 */
#include <stdlib.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include "backend/gemm_plan.h"
#include "bf16.cuh"
#include "common.cuh"
#include "device_math.cuh"
#include "mma.cuh"

/* Bytes of the handle's workspace: cuBLAS's recommendation for Hopper (32 MiB);
 * older GPUs need less and simply use part of it. */
#define FFNN_CUBLAS_WORKSPACE_BYTES ((size_t)32 << 20)

/* Earlier scratch buffers kept alive (growth at least doubles: 64 covers any
 * size from 1 MiB up). */
#define FFNN_CUBLAS_MAX_RETIRED 64
/* Offset of op(B)'s bf16 copy in the scratch: A's elements rounded up to this
 * (256 bytes, so that both operands are aligned for the tensor-core kernels). */
#define FFNN_CUBLAS_BF16_ALIGN ((size_t)128)

/* What ctx->cublas points to. */
typedef struct cublas_state {
    cublasHandle_t handle;   /* bound to ctx->stream                           */
    cublasLtHandle_t lt;     /* cuBLASLt (the cublaslt strategy's fused ops)   */
    void *workspace;         /* device, FFNN_CUBLAS_WORKSPACE_BYTES             */
    void *side_workspace;    /* the same size, for the matmuls queued on the side
                                stream (made on first use): two matmuls running
                                at once never share one                         */
    void *scratch;           /* device: bf16 copies of A and B (bf16), or the
                                cublaslt weight gradient's x^T (tf32)           */
    size_t scratch_bytes;    /* its size                                        */
    void *retired[FFNN_CUBLAS_MAX_RETIRED]; /* smaller scratch buffers before it */
    size_t n_retired;
} cublas_state;

/* Record a failed cuBLAS call (status != CUBLAS_STATUS_SUCCESS): the message names
 * the file, the line, the call and cuBLAS's status; CUDA's last error is read and
 * cleared, and a sticky one poisons ctx (may be NULL). Returns FFNN_ERR_CUDA. */
static ffnn_status cublas_fail_call(ffnn_cuda_ctx *ctx, cublasStatus_t status, const char *file,
                                    int line, const char *what)
{
    const cudaError_t cuda_err = cudaGetLastError();
    const int sticky = ffnn_cuda_error_is_sticky(cuda_err) || cudaPeekAtLastError() != cudaSuccess;
    if (cuda_err != cudaSuccess)
        ffnn_fail(FFNN_ERR_CUDA, "%s:%d: %s failed: %s (%s); CUDA: %s (%s)%s", file, line, what,
                  cublasGetStatusName(status), cublasGetStatusString(status),
                  cudaGetErrorString(cuda_err), cudaGetErrorName(cuda_err),
                  sticky ? "; the CUDA context is unusable from now on" : "");
    else
        ffnn_fail(FFNN_ERR_CUDA, "%s:%d: %s failed: %s (%s)", file, line, what,
                  cublasGetStatusName(status), cublasGetStatusString(status));
    if (sticky && ctx != NULL && !ctx->poisoned) {
        ctx->poisoned = 1;
        snprintf(ctx->poison_reason, sizeof ctx->poison_reason, "%s", ffnn_last_error());
    }
    return FFNN_ERR_CUDA;
}

/* Run a cuBLAS call; on failure record it (cublas_fail_call) and return
 * FFNN_ERR_CUDA from the enclosing function. name: the call's name, a string. */
#define FFNN_CUBLAS_CHECK(ctx, name, call)                                          \
    do {                                                                            \
        cublasStatus_t ffnn_cublas_st_ = (call);                                    \
        if (ffnn_cublas_st_ != CUBLAS_STATUS_SUCCESS)                               \
            return cublas_fail_call((ctx), ffnn_cublas_st_, __FILE__, __LINE__, name); \
    } while (0)

/* Free what make_state made so far (s may be half built; s itself is freed). */
static void free_state(cublas_state *s)
{
    if (s == NULL) return;
    if (s->handle != NULL) (void)cublasDestroy(s->handle);
    if (s->lt != NULL) (void)cublasLtDestroy(s->lt);
    if (s->workspace != NULL) (void)cudaFree(s->workspace);
    if (s->side_workspace != NULL) (void)cudaFree(s->side_workspace);
    if (s->scratch != NULL) (void)cudaFree(s->scratch);
    for (size_t i = 0; i < s->n_retired; ++i) (void)cudaFree(s->retired[i]);
    (void)cudaGetLastError();
    free(s);
}

/* Handle + workspace into *s (zeroed by the caller); on failure the caller frees
 * s with free_state. Errors: FFNN_ERR_CUDA (cuBLAS or CUDA call failed). */
static ffnn_status fill_state(ffnn_cuda_ctx *ctx, cublas_state *s)
{
    FFNN_CUBLAS_CHECK(ctx, "cublasCreate", cublasCreate(&s->handle));
    FFNN_CUBLAS_CHECK(ctx, "cublasSetStream", cublasSetStream(s->handle, ctx->stream));
    FFNN_CUDA_CHECK(ctx, cudaMalloc(&s->workspace, FFNN_CUBLAS_WORKSPACE_BYTES));
    /* After cublasSetStream: setting the stream resets the workspace to cuBLAS's own. */
    FFNN_CUBLAS_CHECK(ctx, "cublasSetWorkspace",
                      cublasSetWorkspace(s->handle, s->workspace, FFNN_CUBLAS_WORKSPACE_BYTES));
    /* Default math: no TF32 unless a call asks for it with its compute type. */
    FFNN_CUBLAS_CHECK(ctx, "cublasSetMathMode", cublasSetMathMode(s->handle, CUBLAS_DEFAULT_MATH));
    FFNN_CUBLAS_CHECK(ctx, "cublasSetAtomicsMode",
                      cublasSetAtomicsMode(s->handle, CUBLAS_ATOMICS_NOT_ALLOWED));
    FFNN_CUBLAS_CHECK(ctx, "cublasSetPointerMode",
                      cublasSetPointerMode(s->handle, CUBLAS_POINTER_MODE_HOST));
    FFNN_CUBLAS_CHECK(ctx, "cublasLtCreate", cublasLtCreate(&s->lt));
    return FFNN_OK;
}

/* When ctx->stream is being captured, switch this thread's capture mode to
 * relaxed (so that cudaMalloc is allowed; nothing is recorded) and set *relaxed;
 * *mode then holds the caller's mode for relax_end. Errors: FFNN_ERR_CUDA. */
static ffnn_status relax_begin(ffnn_cuda_ctx *ctx, int *relaxed, cudaStreamCaptureMode *mode)
{
    *relaxed = 0;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    FFNN_CUDA_CHECK(ctx, cudaStreamIsCapturing(ctx->stream, &capture));
    if (capture == cudaStreamCaptureStatusNone) return FFNN_OK;
    *mode = cudaStreamCaptureModeRelaxed;
    FFNN_CUDA_CHECK(ctx, cudaThreadExchangeStreamCaptureMode(mode));
    *relaxed = 1;
    return FFNN_OK;
}

/* Undo relax_begin (nothing when !relaxed); st: the status of the work between,
 * returned unless it is FFNN_OK and restoring the mode fails (FFNN_ERR_CUDA). */
static ffnn_status relax_end(ffnn_cuda_ctx *ctx, int relaxed, cudaStreamCaptureMode mode,
                             ffnn_status st)
{
    if (!relaxed) return st;
    const cudaError_t err = cudaThreadExchangeStreamCaptureMode(&mode);
    if (err != cudaSuccess && st == FFNN_OK)
        return ffnn_cuda_fail_call(ctx, err, __FILE__, __LINE__,
                                   "cudaThreadExchangeStreamCaptureMode");
    return st;
}

/* ctx's state (handle, workspace), made on first use (see the header comment
 * about capture). Errors: FFNN_ERR_NO_MEMORY, FFNN_ERR_CUDA; ctx->cublas stays
 * NULL then. */
static ffnn_status get_state(ffnn_cuda_ctx *ctx, cublas_state **out)
{
    if (ctx->cublas != NULL) {
        *out = (cublas_state *)ctx->cublas;
        return FFNN_OK;
    }
    cublas_state *s = (cublas_state *)calloc(1, sizeof *s);
    if (s == NULL)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "cuda cublas: cannot allocate %zu bytes", sizeof *s);
    int relaxed = 0;
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    ffnn_status st = relax_begin(ctx, &relaxed, &mode);
    if (st == FFNN_OK) st = relax_end(ctx, relaxed, mode, fill_state(ctx, s));
    if (st != FFNN_OK) {
        free_state(s);
        return st;
    }
    ctx->cublas = s;
    *out = s;
    return FFNN_OK;
}

/* *p = `bytes` of device memory, allocated outside any capture's record on
 * ctx->stream (relax_begin); what: the call's name in the error. Errors:
 * FFNN_ERR_CUDA (*p stays NULL). */
static ffnn_status relaxed_malloc(ffnn_cuda_ctx *ctx, size_t bytes, const char *what, void **p)
{
    int relaxed = 0;
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    *p = NULL;
    ffnn_status st = relax_begin(ctx, &relaxed, &mode);
    if (st != FFNN_OK) return st;
    const cudaError_t err = cudaMalloc(p, bytes);
    if (err != cudaSuccess) st = ffnn_cuda_fail_call(ctx, err, __FILE__, __LINE__, what);
    st = relax_end(ctx, relaxed, mode, st);
    if (st != FFNN_OK && *p != NULL) {
        (void)cudaFree(*p);
        *p = NULL;
    }
    return st;
}

/* Make s->scratch at least `bytes` long (device memory; contents unspecified). A
 * replaced buffer is retired, not freed (a captured graph may read it).
 * Errors: FFNN_ERR_CUDA (cudaMalloc failed), FFNN_ERR_NO_MEMORY (no retire slot). */
static ffnn_status ensure_scratch(ffnn_cuda_ctx *ctx, cublas_state *s, size_t bytes)
{
    if (s->scratch_bytes >= bytes) return FFNN_OK;
    if (s->scratch != NULL && s->n_retired == FFNN_CUBLAS_MAX_RETIRED)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "cuda cublas: the scratch grew %d times",
                         FFNN_CUBLAS_MAX_RETIRED);
    size_t size = s->scratch_bytes * 2;
    if (size < bytes) size = bytes;
    size = (size + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1); /* whole MiB */
    void *p = NULL;
    const ffnn_status st = relaxed_malloc(ctx, size, "cudaMalloc (cublas scratch)", &p);
    if (st != FFNN_OK) return st;
    if (s->scratch != NULL) s->retired[s->n_retired++] = s->scratch;
    s->scratch = p;
    s->scratch_bytes = size;
    return FFNN_OK;
}

/* The workspace of a matmul queued on ctx->stream: the side stream's own (made on
 * first use, outside any capture's record as ensure_scratch) or the handle's.
 * Errors: FFNN_ERR_CUDA (cudaMalloc failed). */
static ffnn_status lt_workspace(ffnn_cuda_ctx *ctx, cublas_state *s, void **ws)
{
    if (ctx->stream != ctx->side_stream) {
        *ws = s->workspace;
        return FFNN_OK;
    }
    if (s->side_workspace == NULL) {
        const ffnn_status st = relaxed_malloc(ctx, FFNN_CUBLAS_WORKSPACE_BYTES,
                                              "cudaMalloc (cublaslt side workspace)",
                                              &s->side_workspace);
        if (st != FFNN_OK) return st;
    }
    *ws = s->side_workspace;
    return FFNN_OK;
}

/* dst[i] = bfloat16(src_a[i]) for i < n_a, dst[b_offset + j] = bfloat16(src_b[j])
 * for j < n_b (round to nearest even); grid-stride loop over n_a + n_b. */
static __global__ void to_bf16_kernel(const float *__restrict__ src_a, size_t n_a,
                                      const float *__restrict__ src_b, size_t n_b,
                                      __nv_bfloat16 *__restrict__ dst, size_t b_offset)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_a + n_b;
         i += (size_t)gridDim.x * blockDim.x) {
        if (i < n_a) dst[i] = __float2bfloat16_rn(src_a[i]);
        else dst[b_offset + (i - n_a)] = __float2bfloat16_rn(src_b[i - n_a]);
    }
}

/* bfloat16 copies of A (n_a values) and B (n_b values) in s's scratch (grown when
 * too small): *a16 at the start, *b16 at the next FFNN_CUBLAS_BF16_ALIGN boundary.
 * Queued on ctx->stream. Errors: as ensure_scratch, FFNN_ERR_CUDA (launch). */
static ffnn_status to_bf16(ffnn_cuda_ctx *ctx, cublas_state *s, const float *A, size_t n_a,
                           const float *B, size_t n_b, __nv_bfloat16 **a16, __nv_bfloat16 **b16)
{
    const size_t b_offset = (n_a + FFNN_CUBLAS_BF16_ALIGN - 1) / FFNN_CUBLAS_BF16_ALIGN *
                            FFNN_CUBLAS_BF16_ALIGN;
    ffnn_status st = ensure_scratch(ctx, s, (b_offset + n_b) * sizeof(__nv_bfloat16));
    if (st != FFNN_OK) return st;
    *a16 = (__nv_bfloat16 *)s->scratch;
    *b16 = *a16 + b_offset;
    const unsigned block = (unsigned)ctx->block_1d;
    to_bf16_kernel<<<ffnn_cuda_grid_1d_for(n_a + n_b, block), block, 0, ctx->stream>>>(
        A, n_a, B, n_b, *a16, b_offset);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "to_bf16_kernel");
    return FFNN_OK;
}

/* x^T [in, batch] of x [batch, in] in s's scratch (grown when too small), queued on
 * ctx->stream: the K-major operand of the tf32 weight gradient (gemm_plan.h
 * ffnn_lt_dw_transposes_x). cuBLAS's geam, C = 1 op_T(x) + 0 op_T(x) (column-major
 * C [batch, in], ld batch): x^T exactly for finite x (x + 0 x = x, -0 included).
 * A library routine rather than a kernel of our own: in a survey on an H200 (the probe
 * is in git: git show 6b96639:bench/lt_survey.cu)
 * it was the fastest at 4096 x 4096 (37.8-38.1 us; a 32 x 32 shared-memory kernel
 * 41.6-50.2, cublasLtMatrixTransform 41.8) and within 10% of that kernel at 1024 x
 * 1024 (3.10-3.31 against 3.04-3.40; docs/RESULTS.md history). Errors: as
 * ensure_scratch, FFNN_ERR_CUDA (cuBLAS). */
static ffnn_status transposed_input(ffnn_cuda_ctx *ctx, cublas_state *s, const float *x,
                                    size_t batch, size_t in, const float **xt)
{
    const ffnn_status st = ensure_scratch(ctx, s, batch * in * sizeof(float));
    if (st != FFNN_OK) return st;
    const float one = 1.0f, zero = 0.0f;
    float *t = (float *)s->scratch;
    FFNN_CUBLAS_CHECK(ctx, "cublasSgeam",
                      cublasSgeam(s->handle, CUBLAS_OP_T, CUBLAS_OP_T, (int)batch, (int)in,
                                  &one, x, (int)in, &zero, x, (int)in, t, (int)batch));
    *xt = t;
    return FFNN_OK;
}

/* One operand as stored, column-major terms: rows x cols with leading dimension
 * ld, used as op(operand); type CUDA_R_32F (fp32) or CUDA_R_16BF (a bf16 tensor
 * of the mixed-precision pipeline). */
typedef struct lt_operand {
    const void *p;
    cudaDataType_t type;
    cublasOperation_t op;
    uint64_t rows, cols;
    int64_t ld;
    int x3; /* 1: a first operand split for tf32x3 already (its K' = 3K form:
               prepare_xt's split x^T); rows, cols and ld as it reads */
} lt_operand;

/* ------------------------------------------------------------------ tf32x3 */
/*
 * --precision tf32x3, "3xTF32" (Ootomo & Yokota, "Recovering single precision
 * accuracy from Tensor Cores while surpassing the FP32 theoretical peak
 * performance", IJHPCA 2022; CUTLASS's 3xTF32 GEMMs): fp32's accuracy from the TF32
 * tensor cores. Each fp32 input v is split into two TF32 values
 *     big = tf32(v), small = tf32(v - big)   (mma.cuh's rounding: to nearest, ties
 *                                            away; v - big is exact in fp32)
 * with |v - big - small| <= 2^-22 |v|, and a product as three:
 *     a b ~ a_small b_big + a_big b_small + a_big b_big
 * (a_small b_small <= 2^-22 |a b| dropped): within ~3 2^-22 of |a b| (fp32's
 * rounding: 2^-24), the sums in fp32. The three run as ONE TF32 matmul over
 * K' = 3K, its operands written by tf32x3_split into the scratch:
 *     op(A)' [m, 3K] = [A_small | A_big | A_big],  op(B)' [3K, n] = [B_big; B_small; B_big]
 * small terms first in k, so that they are summed while the running sums are small
 * (a probe on an H200 at the wide net's shapes, git show 6b96639:bench/tf32x3_probe.cu;
 * the largest error as a fraction of sum_k |a_k b_k|: small first 1.9-3.8e-7, big
 * first 1.6-1.8e-6, fp32's COMPUTE_32F 0.5-1.5e-7, TF32 alone 3-4e-5). The split writes both K-major (the
 * reduction index contiguous, as the forward's operands): the 3K launch there took
 * 25-28 us against cuBLASLt fp32's 40-57, the weight gradients' own layout 39-45.
 * The epilogues (bias, ReLU, SGD's alpha and beta) apply as to any matmul; BGRADB
 * does not (op(B)' is not dz: the weight gradient takes DEFAULT and bias_grad).
 * One split is a read of the operand and three writes (16 bytes per element).
 */

/* big = tf32(v) and small = tf32(v - big) into part q of o (q = 0, 1, 2; `part`
 * floats apart): small where bit q of small_mask is set, else big. */
static __device__ __forceinline__ void tf32x3_parts(float v, unsigned small_mask, float *o,
                                                   size_t part)
{
    const float big = __uint_as_float(mma_tf32(v));
    const float small = __uint_as_float(mma_tf32(v - big));
#pragma unroll
    for (int q = 0; q < 3; ++q) o[q * part] = (small_mask >> q) & 1u ? small : big;
}

#define X3_TILE 32 /* the split's tile: 32 x 32 (through shared memory where it transposes) */
#define X3_MAX_BLOCKS 65535u /* blocks per operand; larger operands loop over tiles */

/* One operand's split (tf32x3_parts into part order small_mask): src column-major
 * rows x cols (leading dimension ld); where k is the row, dst [3 rows, cols] (ld 3 rows,
 * each column the three parts' rows in turn); where k is the column (k_is_col),
 * transposed so that it becomes the row (K-major): dst [3 cols, rows] (ld 3 cols),
 * dst[q cols + c, r] = part q of src[r, c]. tiles_r: X3_TILE tiles over rows; tiles:
 * all of them; blocks: the grid's blocks for this operand (<= tiles). */
typedef struct x3_job {
    const float *src;
    float *dst;
    size_t rows, cols, ld;
    unsigned small_mask;
    int k_is_col;
    size_t tiles_r, tiles;
    unsigned blocks;
} x3_job;

/* Both operands of a matmul in one launch (one job with j1.blocks 0): blocks
 * [0, j0.blocks) take j0, the rest j1, each looping over its tiles. Blocks of
 * X3_TILE x 8 threads: x over a tile's rows, reads and writes coalesced (where k
 * is the column: rows on read, columns on write, through shared memory). */
static __global__ void tf32x3_split_kernel(x3_job j0, x3_job j1)
{
    __shared__ float tile[X3_TILE][X3_TILE + 1];
    const int second = blockIdx.x >= j0.blocks;
    const x3_job j = second ? j1 : j0;
    for (size_t t = blockIdx.x - (second ? j0.blocks : 0u); t < j.tiles; t += j.blocks) {
        const size_t r0 = (t % j.tiles_r) * X3_TILE, c0 = (t / j.tiles_r) * X3_TILE;
        if (!j.k_is_col) {
            const size_t r = r0 + threadIdx.x;
            for (int y = threadIdx.y; y < X3_TILE; y += blockDim.y) {
                const size_t c = c0 + y;
                if (r < j.rows && c < j.cols)
                    tf32x3_parts(j.src[c * j.ld + r], j.small_mask,
                                 j.dst + c * 3 * j.rows + r, j.rows);
            }
            continue;
        }
        for (int y = threadIdx.y; y < X3_TILE; y += blockDim.y) {
            const size_t r = r0 + threadIdx.x, c = c0 + y;
            tile[y][threadIdx.x] = r < j.rows && c < j.cols ? j.src[c * j.ld + r] : 0.0f;
        }
        __syncthreads();
        for (int y = threadIdx.y; y < X3_TILE; y += blockDim.y) {
            const size_t r = r0 + y, c = c0 + threadIdx.x;
            if (r < j.rows && c < j.cols)
                tf32x3_parts(tile[threadIdx.x][y], j.small_mask, j.dst + r * 3 * j.cols + c,
                             j.cols);
        }
        __syncthreads();
    }
}

/* The job splitting o (column-major as stored; k its column when k_is_col) into dst. */
static x3_job x3_job_for(const lt_operand *o, int k_is_col, unsigned small_mask, float *dst)
{
    x3_job j;
    j.src = (const float *)o->p;
    j.dst = dst;
    j.rows = (size_t)o->rows;
    j.cols = (size_t)o->cols;
    j.ld = (size_t)o->ld;
    j.small_mask = small_mask;
    j.k_is_col = k_is_col;
    j.tiles_r = (j.rows + X3_TILE - 1) / X3_TILE;
    j.tiles = j.tiles_r * ((j.cols + X3_TILE - 1) / X3_TILE);
    j.blocks = (unsigned)(j.tiles < X3_MAX_BLOCKS ? j.tiles : X3_MAX_BLOCKS);
    return j;
}

/* o (the first operand of a matmul when first, else the second; fp32) as it reads
 * once split (x3_job_for's dst): K-major, 3K long in k, leading dimension 3K. */
static void x3_describe(lt_operand *o, int k_is_col, const float *dst)
{
    if (k_is_col) {
        o->op = o->op == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N;
        const uint64_t rows = o->rows;
        o->rows = 3 * o->cols;
        o->cols = rows;
    } else {
        o->rows = 3 * o->rows;
    }
    o->p = dst;
    o->ld = (int64_t)o->rows;
}

/* Part orders: the first operand [small big big], the second [big small big]. */
#define X3_MASK_FIRST 1u
#define X3_MASK_SECOND 2u

/* a (op(a) [m, K], fp32) and b (op(b) [K, n], fp32) as the K' = 3K operands of the
 * section's comment, written K-major (the reduction index contiguous: op(a) as
 * op_T, op(b) as op_N, the layout of the forward's fastest kernels in that probe)
 * into s's scratch (grown when too small) by one launch on
 * ctx->stream; a and b then describe them. a_split: a is split already (the weight
 * gradient's x, backend.h prepare_xt; a describes it as it reads), only b is split.
 * Errors: as ensure_scratch, FFNN_ERR_CUDA (the launch). */
static ffnn_status tf32x3_split(ffnn_cuda_ctx *ctx, cublas_state *s, lt_operand *a,
                                lt_operand *b, int a_split)
{
    const size_t na = a_split ? 0 : (size_t)(a->rows * a->cols), nb = (size_t)(b->rows * b->cols);
    const size_t b_at = (3 * na + 63) & ~(size_t)63; /* floats: b 256-byte aligned */
    const ffnn_status st = ensure_scratch(ctx, s, (b_at + 3 * nb) * sizeof(float));
    if (st != FFNN_OK) return st;
    float *const da = (float *)s->scratch, *const db = (float *)s->scratch + b_at;
    /* the first operand's k is its column under op N, the second's under op T */
    const int a_col = a->op == CUBLAS_OP_N, b_col = b->op == CUBLAS_OP_T;
    const x3_job jb = x3_job_for(b, b_col, X3_MASK_SECOND, db);
    x3_job ja = jb;
    if (!a_split) ja = x3_job_for(a, a_col, X3_MASK_FIRST, da);
    else ja.blocks = 0;
    tf32x3_split_kernel<<<ja.blocks + jb.blocks, dim3(X3_TILE, 8), 0, ctx->stream>>>(ja, jb);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "tf32x3_split_kernel");
    if (!a_split) x3_describe(a, a_col, da);
    x3_describe(b, b_col, db);
    return FFNN_OK;
}

/* backend.h prepare_xt: xt = x [batch, in] prepared for dense_backward_fused's
 * weight gradient, dW = dz^T x, where x is that matmul's first operand (as the
 * column-major [in, batch], k = batch its column): in tf32x3 its split x^T [in,
 * 3 batch] (tf32x3_split's form of it: each input unit's row [small | big | big],
 * batch values each), else x^T [in, batch] (gather.cu's transpose). Queued on
 * ctx->stream. Errors: FFNN_ERR_INVALID_ARGUMENT (NULL pointer, a dimension outside
 * 1..FFNN_CUDA_MAX_DIM), FFNN_ERR_CUDA (a poisoned context, the launch). */
extern "C" ffnn_status ffnn_cuda_prepare_xt(void *vctx, const float *x, size_t batch, size_t in,
                                            float *xt)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "prepare_xt");
    if (ctx->precision != FFNN_PRECISION_TF32X3) return ffnn_cuda_transpose(ctx, x, batch, in, xt);
    if (x == NULL || xt == NULL || batch < 1 || in < 1 || batch > FFNN_CUDA_MAX_DIM ||
        in > FFNN_CUDA_MAX_DIM)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda prepare_xt: batch=%zu in=%zu must be in 1..%zu and x, xt "
                         "non-NULL", batch, in, (size_t)FFNN_CUDA_MAX_DIM);
    const lt_operand xa = {x, CUDA_R_32F, CUBLAS_OP_N, in, batch, (int64_t)in, 0};
    x3_job j = x3_job_for(&xa, 1, X3_MASK_FIRST, xt), none = j;
    none.blocks = 0;
    tf32x3_split_kernel<<<j.blocks, dim3(X3_TILE, 8), 0, ctx->stream>>>(j, none);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "tf32x3_split_kernel");
    return FFNN_OK;
}

/* C[row, col] += bias[col] for the row-major C [M,N], bias [N]; grid-stride loop
 * over the M*N elements (any size fits the grid). */
static __global__ void add_bias_rows_kernel(float *__restrict__ C, const float *__restrict__ bias,
                                            size_t n_total, size_t N)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_total;
         i += (size_t)gridDim.x * blockDim.x)
        C[i] += bias[i % N];
}

/* C [M,N] = op(A) op(B) (+ bias[N] per row), row-major, fp32 in and out, with the
 * arithmetic of ctx->precision (see the header). A [M,K] or [K,M] (trans_a), B [K,N]
 * or [N,K] (trans_b), bias [N] or NULL: device pointers. 1 <= M, N, K <=
 * FFNN_CUDA_MAX_DIM (dense.cu checks). Queued on ctx->stream; bf16 reads the
 * context's scratch (grown here when too small: M*K + K*N bf16 values).
 * Errors: FFNN_ERR_INVALID_ARGUMENT (NULL ctx or pointer, a size < 1),
 * FFNN_ERR_CUDA (a poisoned context, a failed cuBLAS / CUDA call or launch, a
 * failed cudaMalloc of the workspace or scratch), FFNN_ERR_NO_MEMORY (host memory,
 * or the scratch grew FFNN_CUBLAS_MAX_RETIRED times). */
extern "C" ffnn_status ffnn_cuda_matmul_cublas(ffnn_cuda_ctx *ctx, const float *A,
                                               const float *B, const float *bias, float *C,
                                               int M, int N, int K, int trans_a, int trans_b)
{
    FFNN_CUDA_GUARD(ctx, "cublas matmul");
    if (A == NULL || B == NULL || C == NULL || M < 1 || N < 1 || K < 1)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda cublas matmul: M=%d N=%d K=%d must be >= 1 and A, B, C non-NULL",
                         M, N, K);
    cublas_state *s = NULL;
    ffnn_status st = get_state(ctx, &s);
    if (st != FFNN_OK) return st;

    const float one = 1.0f, zero = 0.0f;
    const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int ld_b = trans_b ? K : N;
    const int ld_a = trans_a ? M : K;
    if (ctx->precision == FFNN_PRECISION_BF16) {
        __nv_bfloat16 *a16 = NULL, *b16 = NULL;
        st = to_bf16(ctx, s, A, (size_t)M * (size_t)K, B, (size_t)K * (size_t)N, &a16, &b16);
        if (st != FFNN_OK) return st;
        FFNN_CUBLAS_CHECK(ctx, "cublasGemmEx",
                          cublasGemmEx(s->handle, op_b, op_a, N, M, K, &one, b16, CUDA_R_16BF,
                                       ld_b, a16, CUDA_R_16BF, ld_a, &zero, C, CUDA_R_32F, N,
                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else if (ctx->precision == FFNN_PRECISION_TF32X3) {
        /* the GEMM's first operand is B (op_b, ld_b), its second A (column-major) */
        lt_operand fb = {B, CUDA_R_32F, op_b, (uint64_t)(trans_b ? K : N),
                         (uint64_t)(trans_b ? N : K), ld_b, 0};
        lt_operand fa = {A, CUDA_R_32F, op_a, (uint64_t)(trans_a ? M : K),
                         (uint64_t)(trans_a ? K : M), ld_a, 0};
        if ((st = tf32x3_split(ctx, s, &fb, &fa, 0)) != FFNN_OK) return st;
        FFNN_CUBLAS_CHECK(ctx, "cublasGemmEx",
                          cublasGemmEx(s->handle, fb.op, fa.op, N, M, 3 * K, &one, fb.p,
                                       CUDA_R_32F, (int)fb.ld, fa.p, CUDA_R_32F, (int)fa.ld,
                                       &zero, C, CUDA_R_32F, N, CUBLAS_COMPUTE_32F_FAST_TF32,
                                       CUBLAS_GEMM_DEFAULT));
    } else {
        const cublasComputeType_t compute = ctx->precision == FFNN_PRECISION_TF32
                                                ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                : CUBLAS_COMPUTE_32F;
        FFNN_CUBLAS_CHECK(ctx, "cublasGemmEx",
                          cublasGemmEx(s->handle, op_b, op_a, N, M, K, &one, B, CUDA_R_32F, ld_b,
                                       A, CUDA_R_32F, ld_a, &zero, C, CUDA_R_32F, N, compute,
                                       CUBLAS_GEMM_DEFAULT));
    }
    if (bias != NULL) {
        const size_t n_total = (size_t)M * (size_t)N;
        const unsigned block = (unsigned)ctx->block_1d;
        add_bias_rows_kernel<<<ffnn_cuda_grid_1d_for(n_total, block), block, 0, ctx->stream>>>(
            C, bias, n_total, (size_t)N);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "add_bias_rows_kernel");
    }
    return FFNN_OK;
}

/* ------------------------------------------------------------------ cuBLASLt */
/*
 * The cublaslt strategy (--strategy cublaslt): the backend's fused ops
 * (dense_act_forward, dense_backward_fused) on cuBLASLt matmuls with cuBLASLt's
 * epilogues - the named comparator for our own fused kernels (fused.cu), as
 * PyTorch's Linear uses them:
 *   forward   a  = act(x W^T + b)      one cublasLtMatmul, epilogue RELU_BIAS /
 *                                       BIAS / RELU / DEFAULT; another act: then
 *                                       activation.cu's activation_forward in place
 *   backward  dx = (dz W) * f'(x)       one cublasLtMatmul, then activation.cu's
 *                                       activation_backward in place (no aux buffer:
 *                                       the DRELU epilogues need the forward's
 *                                       bit mask, which the op interface does not
 *                                       carry)
 *             dW = dz^T x, db = sum_b dz one cublasLtMatmul, epilogue BGRADB (the
 *                                       bias gradient reduced over the GEMM's k =
 *                                       batch from its B operand dz^T); where
 *                                       cuBLASLt has no algorithm for BGRADB,
 *                                       DEFAULT plus dense.cu's bias_grad kernel
 * A bias (or db) not 16-byte aligned takes the plain path for that matmul (the
 * GEMM without epilogue, then our bias kernels): cuBLASLt's epilogues need it.
 *             sgd (plain SGD inside the backward: step.h fused_sgd):
 *                                       W -= lr dz^T x as one cublasLtMatmul,
 *                                       alpha -lr, beta 1, C = D = W (dW not
 *                                       written; the update is rounded as
 *                                       cuBLASLt's epilogue rounds alpha acc +
 *                                       beta C, not as update.cu's update); db
 *                                       by dense.cu's bias_grad, b -= lr db by
 *                                       update.cu's update
 * Column-major cuBLASLt on row-major arrays as above: D [m,n] (ld m) column-major
 * is the row-major [n,m] array. Precision as cublasGemmEx above (fp32: COMPUTE_32F,
 * no TF32; tf32: COMPUTE_32F_FAST_TF32; bf16: bfloat16 copies of both operands,
 * COMPUTE_32F, fp32 D and bias; tf32x3: the split operands over K' = 3K). Bias in the epilogue is added to the fp32
 * accumulator before the one rounding (cuBLAS's add_bias_rows_kernel and our own
 * kernels round twice): values differ in the last bit, within the tolerance of
 * tests/test_cublas.c. The algorithm: cuBLASLt's first heuristic pick for the
 * shapes, the same workspace as the cuBLAS handle, atomics not requested
 * (deterministic run to run on one GPU, as cuBLAS documents).
 */

/* The output D of a cuBLASLt matmul: m x n column-major (ld m), of type type
 * (fp32, or bf16 in the mixed-precision forward and dx). sgd_lr 0: D = the
 * product; else D -= sgd_lr * the product in the epilogue (alpha -sgd_lr, beta 1,
 * C = D: plain SGD's update of the weights D by their gradient, fp32 D only). */
typedef struct lt_output {
    void *p;
    cudaDataType_t type;
    uint64_t m, n;
    float sgd_lr;
} lt_output;

/* The epilogue's vector: bias added (BIAS, RELU_BIAS) or bias gradient written
 * (BGRADB), of type type (fp32, or bf16), or p NULL. */
typedef struct lt_vector {
    void *p;
    cudaDataType_t type;
} lt_vector;

/* The largest power of two <= 256 that divides p's address (cuBLASLt's
 * MIN_ALIGNMENT preferences). */
static uint32_t lt_alignment(const void *p)
{
    const uintptr_t a = (uintptr_t)p;
    uint32_t al = 256;
    while (al > 1 && a % al != 0) al /= 2;
    return al;
}

/* Bias vectors for the epilogues (BIAS, RELU_BIAS, BGRADB) must be 16-byte
 * aligned (cuBLASLt fails or faults otherwise, as other projects found); a bias
 * that is not takes the plain path (the GEMM, then our bias kernels). */
#define LT_BIAS_ALIGN 16

/* No epilogue vector. */
static const lt_vector LT_NO_VECTOR = {NULL, CUDA_R_32F};

#define LT_TRY(call, name)                                                          \
    do {                                                                            \
        cublasStatus_t lt_st_ = (call);                                             \
        if (lt_st_ != CUBLAS_STATUS_SUCCESS) {                                      \
            st = cublas_fail_call(ctx, lt_st_, __FILE__, __LINE__, name);           \
            goto done;                                                              \
        }                                                                           \
    } while (0)

/* The heuristic's pick with CTA swizzling 1 where the pick does not split K and
 * cuBLASLt's check takes it (else the pick as it is), where gemm_plan.h
 * ffnn_lt_swizzles says so (the measurements are there). Swizzling changes the
 * order in which the output tiles are scheduled, not any sum: the same bits. */
static void lt_swizzle(cublas_state *s, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t la,
                       cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t ld,
                       cublasLtMatmulHeuristicResult_t *heur)
{
    int32_t splitk = 0;
    uint32_t swizzle = 1;
    size_t got = 0;
    cublasLtMatmulHeuristicResult_t checked;
    cublasLtMatmulAlgo_t algo = heur->algo;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                             sizeof splitk, &got) != CUBLAS_STATUS_SUCCESS ||
        splitk != 1 ||
        cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle,
                                             sizeof swizzle) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulAlgoCheck(s->lt, desc, la, lb, ld, ld, &algo, &checked) !=
            CUBLAS_STATUS_SUCCESS ||
        checked.workspaceSize > FFNN_CUBLAS_WORKSPACE_BYTES)
        return;
    heur->algo = algo;
}

/* D (out: m x n column-major, ld m) = op(a) op(b) with epilogue epi (bias: its
 * BIAS_POINTER and BIAS_DATA_TYPE: the bias added for BIAS/RELU_BIAS, the
 * gradient written for BGRADB). Operands both fp32 (with ctx->precision bf16:
 * their bf16 copies, made here by to_bf16) or both bf16 (the mixed-precision
 * pipeline: used as they are). *no_algo (may be NULL): set to 1, nothing queued
 * and FFNN_OK returned when cuBLASLt has no algorithm for this epilogue, these
 * types and shapes. Errors: FFNN_ERR_CUDA (a cuBLASLt call), as to_bf16. */
static ffnn_status lt_matmul(ffnn_cuda_ctx *ctx, cublas_state *s, lt_operand a, lt_operand b,
                             lt_output out, cublasLtEpilogue_t epi, lt_vector bias,
                             int *no_algo)
{
    ffnn_status st = FFNN_OK;
    cublasLtMatmulDesc_t desc = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, ld = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    /* D = alpha product + beta C, C = D (in place) */
    const float alpha = out.sgd_lr != 0.0f ? -out.sgd_lr : 1.0f;
    const float beta = out.sgd_lr != 0.0f ? 1.0f : 0.0f;
    const int given16 = a.type == CUDA_R_16BF; /* the operands are bf16 tensors already */
    const int bf16 = given16 || ctx->precision == FFNN_PRECISION_BF16;
    const int x3 = !bf16 && ctx->precision == FFNN_PRECISION_TF32X3;
    const cublasComputeType_t compute =
        !bf16 && (ctx->precision == FFNN_PRECISION_TF32 || x3) ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                               : CUBLAS_COMPUTE_32F;
    const cudaDataType_t ab_type = bf16 ? CUDA_R_16BF : CUDA_R_32F;
    const cudaDataType_t bias_type = bias.type;
    const size_t workspace = FFNN_CUBLAS_WORKSPACE_BYTES;
    void *ws = NULL; /* lt_workspace: the stream's own */
    const void *pa = a.p, *pb = b.p;
    void *d = out.p;
    const uint64_t m = out.m, n = out.n;
    if (no_algo != NULL) *no_algo = 0;
    if (a.type != b.type)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda cublaslt: operands of two types (%d, %d)", (int)a.type,
                         (int)b.type);
    if (bf16 && !given16) {
        __nv_bfloat16 *a16 = NULL, *b16 = NULL;
        st = to_bf16(ctx, s, (const float *)a.p, (size_t)(a.rows * a.cols),
                     (const float *)b.p, (size_t)(b.rows * b.cols), &a16, &b16);
        if (st != FFNN_OK) return st;
        pa = a16;
        pb = b16;
    }
    if ((a.x3 && !x3) || b.x3)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda cublaslt: a split operand outside tf32x3, or as the second");
    if (x3) { /* a and b become the K' = 3K split operands */
        if ((st = tf32x3_split(ctx, s, &a, &b, a.x3)) != FFNN_OK) return st;
        pa = a.p;
        pb = b.p;
    }
    LT_TRY(cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
    LT_TRY(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &a.op, sizeof a.op),
           "cublasLtMatmulDescSetAttribute(TRANSA)");
    LT_TRY(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &b.op, sizeof b.op),
           "cublasLtMatmulDescSetAttribute(TRANSB)");
    LT_TRY(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi),
           "cublasLtMatmulDescSetAttribute(EPILOGUE)");
    if (bias.p != NULL) {
        LT_TRY(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias.p,
                                              sizeof bias.p),
               "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
        LT_TRY(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                              &bias_type, sizeof bias_type),
               "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)");
    }
    LT_TRY(cublasLtMatrixLayoutCreate(&la, ab_type, a.rows, a.cols, a.ld), "cublasLtMatrixLayoutCreate");
    LT_TRY(cublasLtMatrixLayoutCreate(&lb, ab_type, b.rows, b.cols, b.ld), "cublasLtMatrixLayoutCreate");
    LT_TRY(cublasLtMatrixLayoutCreate(&ld, out.type, m, n, (int64_t)m), "cublasLtMatrixLayoutCreate");
    LT_TRY(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &workspace, sizeof workspace),
           "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
    { /* cuBLASLt assumes 256-byte aligned operands unless told: our layers sit at
       * any float offset of one parameter arena */
        const uint32_t al_a = lt_alignment(pa), al_b = lt_alignment(pb), al_d = lt_alignment(d);
        LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                    &al_a, sizeof al_a),
               "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_A_BYTES)");
        LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                                    &al_b, sizeof al_b),
               "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_B_BYTES)");
        LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                                    &al_d, sizeof al_d),
               "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_C_BYTES)");
        LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                                    &al_d, sizeof al_d),
               "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_D_BYTES)");
    }
    {
        const cublasStatus_t hs =
            cublasLtMatmulAlgoGetHeuristic(s->lt, desc, la, lb, ld, ld, pref, 1, &heur, &found);
        if ((hs == CUBLAS_STATUS_NOT_SUPPORTED || found == 0) && no_algo != NULL) {
            *no_algo = 1;
            goto done;
        }
        if (hs != CUBLAS_STATUS_SUCCESS) {
            st = cublas_fail_call(ctx, hs, __FILE__, __LINE__, "cublasLtMatmulAlgoGetHeuristic");
            goto done;
        }
        if (found == 0) {
            st = ffnn_fail(FFNN_ERR_CUDA, "cuda cublaslt: no cuBLASLt algorithm for a %llux%llu "
                           "matmul with epilogue %d in %s%s", (unsigned long long)m,
                           (unsigned long long)n, (int)epi, ffnn_precision_name(ctx->precision),
                           given16 ? " (bf16 tensors)" : "");
            goto done;
        }
    }
    if (ffnn_lt_swizzles(x3, compute == CUBLAS_COMPUTE_32F_FAST_TF32 && !x3,
                         a.op == CUBLAS_OP_T && b.op == CUBLAS_OP_N, (size_t)m, (size_t)n))
        lt_swizzle(s, desc, la, lb, ld, &heur);
    if ((st = lt_workspace(ctx, s, &ws)) != FFNN_OK) goto done;
    LT_TRY(cublasLtMatmul(s->lt, desc, &alpha, pa, la, pb, lb, &beta, d, ld, d, ld, &heur.algo,
                          ws, workspace, ctx->stream),
           "cublasLtMatmul");
done:
    if (pref != NULL) (void)cublasLtMatmulPreferenceDestroy(pref);
    if (ld != NULL) (void)cublasLtMatrixLayoutDestroy(ld);
    if (lb != NULL) (void)cublasLtMatrixLayoutDestroy(lb);
    if (la != NULL) (void)cublasLtMatrixLayoutDestroy(la);
    if (desc != NULL) (void)cublasLtMatmulDescDestroy(desc);
    return st;
}

/* The weight gradient dw = xa zb (the caller's operands) and the bias gradient db
 * (NULL: none) by cuBLASLt's BGRADB epilogue; where it has no algorithm or db is not
 * aligned for it, dw without epilogue and db by our bias_grad kernel over dz (fp32
 * [batch, out]) or dz16 (bf16 rows of dz_ld). One copy for the fp32 and the
 * mixed-precision backward. */
static ffnn_status lt_weight_grad(ffnn_cuda_ctx *ctx, cublas_state *s, lt_operand xa,
                                  lt_operand zb, lt_output dw, float *db, const float *dz,
                                  const uint16_t *dz16, size_t dz_ld, size_t batch, size_t out)
{
    ffnn_status st = FFNN_OK;
    const lt_vector grad = {db, CUDA_R_32F};
    int no_algo = 0;
    /* tf32x3: BGRADB would sum the split op(B), not dz */
    if (db != NULL && (lt_alignment(db) < LT_BIAS_ALIGN ||
                       ctx->precision == FFNN_PRECISION_TF32X3))
        no_algo = 1;
    else if (db != NULL) {
        st = lt_matmul(ctx, s, xa, zb, dw, CUBLASLT_EPILOGUE_BGRADB, grad, &no_algo);
        if (st != FFNN_OK || !no_algo) return st;
    }
    st = lt_matmul(ctx, s, xa, zb, dw, CUBLASLT_EPILOGUE_DEFAULT, LT_NO_VECTOR, NULL);
    if (st != FFNN_OK || db == NULL) return st;
    return dz16 != NULL ? ffnn_cuda_dense_bias_grad_bf16(ctx, dz16, dz_ld, db, batch, out)
                        : ffnn_cuda_dense_bias_grad(ctx, dz, db, batch, out);
}

/* backend.h dense_act_forward on cuBLASLt (fused.cu checked the arguments):
 * a [batch,out] = act(x [batch,in] W [out,in]^T + b [out] or none).
 * Column-major: D [out, batch] = op_T(W as [in, out]) x (x as [in, batch]). */
extern "C" ffnn_status ffnn_cuda_dense_act_forward_lt(ffnn_cuda_ctx *ctx, const float *x,
                                                      const float *W, const float *b, float *a,
                                                      size_t batch, size_t in, size_t out,
                                                      ffnn_activation act)
{
    cublas_state *s = NULL;
    ffnn_status st = get_state(ctx, &s);
    if (st != FFNN_OK) return st;
    if (b != NULL && lt_alignment(b) < LT_BIAS_ALIGN) { /* the plain path: cuBLAS + bias */
        st = ffnn_cuda_dense_forward(ctx, x, W, b, a, batch, in, out);
        if (st != FFNN_OK || act == FFNN_ACT_IDENTITY) return st;
        return ffnn_cuda_activation_forward(ctx, act, 0.0f, a, a, batch * out); /* act 0..3 */
    }
    const int relu = act == FFNN_ACT_RELU;
    const cublasLtEpilogue_t epi = b != NULL ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                             : (relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
    const lt_operand wa = {W, CUDA_R_32F, CUBLAS_OP_T, in, out, (int64_t)in, 0};
    const lt_operand xb = {x, CUDA_R_32F, CUBLAS_OP_N, in, batch, (int64_t)in, 0};
    const lt_output d = {a, CUDA_R_32F, out, batch, 0.0f};
    const lt_vector bias = {(void *)b, CUDA_R_32F};
    st = lt_matmul(ctx, s, wa, xb, d, epi, bias, NULL);
    if (st != FFNN_OK || relu || act == FFNN_ACT_IDENTITY) return st;
    return ffnn_cuda_activation_forward(ctx, act, 0.0f, a, a, batch * out); /* act 0..3 */
}

/* backend.h dense_backward_fused on cuBLASLt (fused.cu checked the arguments; db
 * must be set when b is and sgd is).
 *   dx [batch,in] = dz W, then * f'(x):  D [in, batch] = (W as [in,out]) (dz as [out,batch]);
 *                                        f' and dx_db (the layer below's db) in one
 *                                        pass over dx (dense.cu act_bias_grad)
 *   dW [out,in] = dz^T x, db = sum_b dz: D [in, out] = (x as [in,batch]) op_T(dz as [out,batch]),
 *                                        or op_T(x^T as [batch,in]): given (xt), or
 *                                        where ffnn_lt_dw_transposes_x (tf32: cuBLAS's
 *                                        geam transposes x into the scratch first);
 *                                        BGRADB reduces op(B) = dz^T [batch, out] over k;
 *                                        with sgd D = W: W -= lr dz^T x (dW not
 *                                        written), db by bias_grad, then b -= lr db. */
/* The weight-gradient half of ffnn_cuda_dense_backward_lt (arguments as there). */
static ffnn_status lt_dense_weight_grad(ffnn_cuda_ctx *ctx, cublas_state *s, const float *x,
                                        float *W, float *b, const float *dz, float *dW,
                                        float *db, size_t batch, size_t in, size_t out,
                                        const ffnn_optimizer_step *sgd, const float *xt)
{
    ffnn_status st = FFNN_OK;
    lt_operand xa = {x, CUDA_R_32F, CUBLAS_OP_N, in, batch, (int64_t)in, 0};
    const lt_operand zb = {dz, CUDA_R_32F, CUBLAS_OP_T, out, batch, (int64_t)out, 0};
    if (xt != NULL && ctx->precision == FFNN_PRECISION_TF32X3) /* split x^T [in, 3 batch] */
        xa = (lt_operand){xt, CUDA_R_32F, CUBLAS_OP_T, 3 * batch, in, (int64_t)(3 * batch), 1};
    else if (xt != NULL ||
             ffnn_lt_dw_transposes_x(ctx->precision == FFNN_PRECISION_TF32, batch, in, out)) {
        /* x^T [in, batch]: column-major [batch, in], used as op_T */
        if (xt == NULL && (st = transposed_input(ctx, s, x, batch, in, &xt)) != FFNN_OK)
            return st;
        xa = (lt_operand){xt, CUDA_R_32F, CUBLAS_OP_T, batch, in, (int64_t)batch, 0};
    }
    if (sgd == NULL) {
        const lt_output dw = {dW, CUDA_R_32F, in, out, 0.0f};
        return lt_weight_grad(ctx, s, xa, zb, dw, db, dz, NULL, 0, batch, out);
    }
    /* sgd: W -= lr dz^T x in the matmul's epilogue (dW not written); db by our
     * kernel (the BGRADB epilogue is not combined with the update), then b's update */
    if (db != NULL && (st = ffnn_cuda_dense_bias_grad(ctx, dz, db, batch, out)) != FFNN_OK) return st;
    const lt_output w = {W, CUDA_R_32F, in, out, sgd->lr};
    st = lt_matmul(ctx, s, xa, zb, w, CUBLASLT_EPILOGUE_DEFAULT, LT_NO_VECTOR, NULL);
    if (st == FFNN_OK && b != NULL) st = ffnn_cuda_optimizer_update(ctx, sgd, b, db, NULL, out);
    return st;
}

/* 1 when a weight gradient asked to run beside (dw_side) does: after a dx, on
 * the main stream, in tf32 where ffnn_lt_dw_beside (fp32 measured slower: its
 * sm80 kernels fill the SMs; docs/RESULTS.md history); not when the op would
 * use the scratch (the bf16 copies, tf32's own x^T), which the main stream's next
 * matmul may use too. */
static int lt_dw_goes_beside(const ffnn_cuda_ctx *ctx, int dw_side, int has_dx, const float *xt,
                             size_t batch, size_t in, size_t out)
{
    const int tf32 = ctx->precision == FFNN_PRECISION_TF32;
    return dw_side && has_dx && ctx->stream == ctx->main_stream && tf32 &&
           (xt != NULL || !ffnn_lt_dw_transposes_x(tf32, batch, in, out)) &&
           ffnn_lt_dw_beside(1, ctx->sm_count, in, out);
}

/* Queue `call` (the weight-gradient half of an op) on the side stream: after the
 * work queued so far on the main stream, concurrently with what follows it there
 * (backend.h side_begin, side_end); return its error, or side_end's. */
#define LT_BESIDE(ctx, call)                                                        \
    do {                                                                            \
        ffnn_status beside_st_ = ffnn_cuda_side_begin(ctx);                         \
        if (beside_st_ != FFNN_OK) return beside_st_;                               \
        beside_st_ = (call);                                                        \
        const ffnn_status end_st_ = ffnn_cuda_side_end(ctx);                        \
        if (beside_st_ != FFNN_OK) return beside_st_;                               \
        if (end_st_ != FFNN_OK) return end_st_;                                     \
    } while (0)

extern "C" ffnn_status ffnn_cuda_dense_backward_lt(ffnn_cuda_ctx *ctx, const float *x, float *W,
                                                   float *b, const float *dz, float *dx,
                                                   float *dW, float *db, float *dx_db,
                                                   size_t batch, size_t in, size_t out,
                                                   ffnn_activation x_act,
                                                   const ffnn_optimizer_step *sgd,
                                                   const float *xt, int dw_side)
{
    if (sgd != NULL && b != NULL && db == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda cublaslt dense_backward_fused: db is needed for b's update");
    cublas_state *s = NULL;
    ffnn_status st = get_state(ctx, &s);
    if (st != FFNN_OK) return st;
    const int beside = lt_dw_goes_beside(ctx, dw_side, dx != NULL, xt, batch, in, out);
    if (dx != NULL) { /* first: reads W before the update below */
        const lt_operand wa = {W, CUDA_R_32F, CUBLAS_OP_N, in, out, (int64_t)in, 0};
        const lt_operand zb = {dz, CUDA_R_32F, CUBLAS_OP_N, out, batch, (int64_t)out, 0};
        const lt_output d = {dx, CUDA_R_32F, in, batch, 0.0f};
        st = lt_matmul(ctx, s, wa, zb, d, CUBLASLT_EPILOGUE_DEFAULT, LT_NO_VECTOR, NULL);
        if (st != FFNN_OK) return st;
    }
    if (beside) /* f' below runs concurrently with it */
        LT_BESIDE(ctx, lt_dense_weight_grad(ctx, s, x, W, b, dz, dW, db, batch, in, out, sgd,
                                            xt));
    if (dx != NULL) {
        if (dx_db != NULL)
            st = ffnn_cuda_dense_act_bias_grad(ctx, x_act, x, dx, dx_db, batch, in);
        else if (x_act != FFNN_ACT_IDENTITY)
            st = ffnn_cuda_activation_backward(ctx, x_act, 0.0f, x, dx, dx, batch * in);
        if (st != FFNN_OK) return st;
    }
    if (beside) return FFNN_OK;
    return lt_dense_weight_grad(ctx, s, x, W, b, dz, dW, db, batch, in, out, sgd, xt);
}

/* ---------------------------------------------------------- mixed precision */
/*
 * The mixed-precision pipeline (--precision bf16 on cublaslt; which tensor has
 * which type and why: strategy/step.h ffnn_mixed). No conversion pass: the
 * operands are bf16 tensors already (weights: the shadow the optimizer writes;
 * activations and their gradients: written in bf16 by the ops below).
 *   forward   a16 = bf16(act(x16 W16^T + b))  one cublasLtMatmul, A/B bf16,
 *                                             CUBLAS_COMPUTE_32F, D bf16 (or fp32
 *                                             for the logits), epilogue RELU_BIAS /
 *                                             BIAS / RELU / DEFAULT: bias added to
 *                                             the fp32 sum, relu, one rounding;
 *                                             the bias in fp32, or its bf16 copy
 *                                             where cuBLASLt takes only D's type;
 *                                             sigmoid, tanh: activation.cu's
 *                                             kernel on the output (fp32 math, a
 *                                             second rounding)
 *   backward  dx16 = bf16(dz16 W16)           one cublasLtMatmul, D bf16; then
 *                    * f'(x16)                activation.cu's kernel in place (relu:
 *                                             a mask, exact; sigmoid, tanh: a second
 *                                             rounding), or with dx_db dense.cu's
 *                                             act_bias_grad: f' and the layer
 *                                             below's db in one pass
 *             dW = dz16^T x16 (fp32), db      one cublasLtMatmul, D fp32, epilogue
 *                                             BGRADB (db in fp32)
 *             sgd: update.cu's update writes W, b and their bf16 shadows
 * A bias or db not 16-byte aligned: the GEMM without it, then our kernels
 * (bias_act_rows_kernel: one more rounding; dense.cu's bias_grad on bf16 dz).
 */

/* C[row, col] = act(C[row, col] + bias[col]) for the row-major C [M,N] (T: the
 * output's type; fp32 math, device_math.cuh's act), bias [N] fp32; grid-stride. */
template <typename T>
static __global__ void bias_act_rows_kernel(T *__restrict__ C, const float *__restrict__ bias,
                                            size_t n_total, size_t N, ffnn_activation act)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_total;
         i += (size_t)gridDim.x * blockDim.x)
        ffnn_st(C, i, ffnn_dev_act_forward_basic(act, ffnn_ld(C, i) + bias[i % N]));
}

/* backend.h dense_act_forward_bf16 (the mixed-precision forward; cublaslt only).
 * Column-major as the fp32 op: D [out, batch] = op_T(W16 as [in, out]) (x16 as [in, batch]).
 * Errors: FFNN_ERR_INVALID_ARGUMENT (NULL pointer, dimension, activation),
 * FFNN_ERR_UNSUPPORTED (a context of another matmul variant), FFNN_ERR_CUDA. */
extern "C" ffnn_status ffnn_cuda_dense_act_forward_bf16(void *vctx, const uint16_t *x16,
                                                        const uint16_t *W16, const float *b,
                                                        const uint16_t *b16, float *a,
                                                        uint16_t *a16, size_t batch, size_t in,
                                                        size_t out, ffnn_activation act)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "dense_act_forward_bf16");
    if (batch == 0 || in == 0 || out == 0 || batch > FFNN_CUDA_MAX_DIM ||
        in > FFNN_CUDA_MAX_DIM || out > FFNN_CUDA_MAX_DIM || (int)act < 0 ||
        (int)act > (int)FFNN_ACT_TANH)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda dense_act_forward_bf16: batch=%zu in=%zu out=%zu act=%d: "
                         "dimensions in 1..%zu, act identity, relu, sigmoid or tanh", batch,
                         in, out, (int)act, (size_t)FFNN_CUDA_MAX_DIM);
    if (x16 == NULL || W16 == NULL || (a == NULL && a16 == NULL) || (b == NULL) != (b16 == NULL))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda dense_act_forward_bf16: x16, W16 and a or a16 must be set, and "
                         "b with b16");
    if (ctx->matmul != FFNN_MATMUL_LIBRARY_LT)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "cuda dense_act_forward_bf16: the mixed-precision ops run on "
                         "cuBLASLt (strategy cublaslt)");
    cublas_state *s = NULL;
    ffnn_status st = get_state(ctx, &s);
    if (st != FFNN_OK) return st;
    const int relu = act == FFNN_ACT_RELU;
    const int bias_ok = b != NULL && lt_alignment(b) >= LT_BIAS_ALIGN;
    const lt_operand wa = {W16, CUDA_R_16BF, CUBLAS_OP_T, in, out, (int64_t)in, 0};
    const lt_operand xb = {x16, CUDA_R_16BF, CUBLAS_OP_N, in, batch, (int64_t)in, 0};
    const lt_output d = {a16 != NULL ? (void *)a16 : (void *)a,
                         a16 != NULL ? CUDA_R_16BF : CUDA_R_32F, out, batch, 0.0f};
    const cublasLtEpilogue_t epi = bias_ok ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                           : (relu && b == NULL ? CUBLASLT_EPILOGUE_RELU
                                                                : CUBLASLT_EPILOGUE_DEFAULT);
    int no_algo = 0;
    if (bias_ok) { /* the fp32 bias; else (no algorithm) its bf16 copy, D's type */
        const lt_vector bias = {(void *)b, CUDA_R_32F};
        st = lt_matmul(ctx, s, wa, xb, d, epi, bias, d.type == CUDA_R_32F ? NULL : &no_algo);
        if (st == FFNN_OK && no_algo && lt_alignment(b16) >= LT_BIAS_ALIGN) {
            const lt_vector bias16 = {(void *)b16, CUDA_R_16BF};
            st = lt_matmul(ctx, s, wa, xb, d, epi, bias16, NULL);
        } else if (st == FFNN_OK && no_algo) {
            st = ffnn_fail(FFNN_ERR_CUDA, "cuda cublaslt: no bf16 algorithm with a bias "
                           "epilogue for a %zux%zu output", batch, out);
        }
    } else {
        st = lt_matmul(ctx, s, wa, xb, d, epi, LT_NO_VECTOR, NULL);
    }
    if (st != FFNN_OK) return st;
    const size_t n = batch * out;
    const unsigned block = (unsigned)ctx->block_1d;
    if (b != NULL && !bias_ok) { /* bias (and act) by our kernel */
        if (a16 != NULL)
            bias_act_rows_kernel<__nv_bfloat16><<<ffnn_cuda_grid_1d_for(n, block), block, 0,
                                                  ctx->stream>>>((__nv_bfloat16 *)a16, b, n,
                                                                 out, act);
        else
            bias_act_rows_kernel<float><<<ffnn_cuda_grid_1d_for(n, block), block, 0,
                                          ctx->stream>>>(a, b, n, out, act);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "bias_act_rows_kernel");
        return FFNN_OK;
    }
    if (relu || act == FFNN_ACT_IDENTITY) return FFNN_OK;
    if (a16 != NULL) return ffnn_cuda_activation_forward_bf16(ctx, act, a16, n);
    return ffnn_cuda_activation_forward(ctx, act, 0.0f, a, a, n);
}

/* backend.h dense_backward_bf16 (the mixed-precision backward; cublaslt only).
 *   dx16 [batch,in]: D [in, batch] = (W16 as [in,out]) (dz16 as [out,batch]), bf16;
 *                    then f' in place, with dx_db (sum_b dx16) in the same pass
 *   dW [out,in]:     D [in, out] = (x16 as [in,batch]) op_T(dz16 as [out,batch]), fp32,
 *                    BGRADB: db = sum_b dz16 in fp32 (when db is set).
 * dz16's rows are dz_ld apart (the loss's gradient: ffnn_bf16_ld(out), 16-byte rows).
 * Errors: as dense_act_forward_bf16. */
extern "C" ffnn_status ffnn_cuda_dense_backward_bf16(void *vctx, const uint16_t *x16,
                                                     const uint16_t *W16, const uint16_t *dz16,
                                                     size_t dz_ld, uint16_t *dx16, float *dW,
                                                     float *db, float *dx_db, size_t batch,
                                                     size_t in, size_t out,
                                                     ffnn_activation x_act, int dw_side)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "dense_backward_bf16");
    if (batch == 0 || in == 0 || out == 0 || batch > FFNN_CUDA_MAX_DIM ||
        in > FFNN_CUDA_MAX_DIM || out > FFNN_CUDA_MAX_DIM || (int)x_act < 0 ||
        (int)x_act > (int)FFNN_ACT_TANH)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda dense_backward_bf16: batch=%zu in=%zu out=%zu x_act=%d: "
                         "dimensions in 1..%zu, x_act identity, relu, sigmoid or tanh", batch,
                         in, out, (int)x_act, (size_t)FFNN_CUDA_MAX_DIM);
    if (x16 == NULL || dz16 == NULL || dW == NULL || (dx16 != NULL && W16 == NULL) ||
        dz_ld < out || (dx_db != NULL && dx16 == NULL))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda dense_backward_bf16: x16, dz16, dW (W16 for dx16; dx16 for "
                         "dx_db) must not be NULL, dz_ld >= out");
    if (ctx->matmul != FFNN_MATMUL_LIBRARY_LT)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "cuda dense_backward_bf16: the mixed-precision ops run on cuBLASLt "
                         "(strategy cublaslt)");
    cublas_state *s = NULL;
    ffnn_status st = get_state(ctx, &s);
    if (st != FFNN_OK) return st;
    /* the weight gradient beside f' (as ffnn_cuda_dense_backward_lt; the operands
     * are bf16 tensors already: no scratch) */
    const int beside = dw_side && dx16 != NULL && ctx->stream == ctx->main_stream &&
                       ffnn_lt_dw_beside(1, ctx->sm_count, in, out);
    if (dx16 != NULL) {
        const lt_operand wa = {W16, CUDA_R_16BF, CUBLAS_OP_N, in, out, (int64_t)in, 0};
        const lt_operand zb = {dz16, CUDA_R_16BF, CUBLAS_OP_N, out, batch, (int64_t)dz_ld, 0};
        const lt_output d = {dx16, CUDA_R_16BF, in, batch, 0.0f};
        st = lt_matmul(ctx, s, wa, zb, d, CUBLASLT_EPILOGUE_DEFAULT, LT_NO_VECTOR, NULL);
        if (st != FFNN_OK) return st;
    }
    const lt_operand xa = {x16, CUDA_R_16BF, CUBLAS_OP_N, in, batch, (int64_t)in, 0};
    const lt_operand zb = {dz16, CUDA_R_16BF, CUBLAS_OP_T, out, batch, (int64_t)dz_ld, 0};
    const lt_output dw = {dW, CUDA_R_32F, in, out, 0.0f};
    if (beside)
        LT_BESIDE(ctx, lt_weight_grad(ctx, s, xa, zb, dw, db, NULL, dz16, dz_ld, batch, out));
    if (dx16 != NULL) {
        if (dx_db != NULL)
            st = ffnn_cuda_dense_act_bias_grad_bf16(ctx, x_act, x16, dx16, dx_db, batch, in);
        else
            st = ffnn_cuda_activation_backward_bf16(ctx, x_act, x16, dx16, batch * in);
        if (st != FFNN_OK) return st;
    }
    if (beside) return FFNN_OK;
    return lt_weight_grad(ctx, s, xa, zb, dw, db, NULL, dz16, dz_ld, batch, out);
}

/* Destroy ctx's handle, workspace and scratch, if it made them (destroy calls this after
 * synchronising the stream); errors are dropped, CUDA's last error cleared. */
extern "C" void ffnn_cuda_cublas_release(ffnn_cuda_ctx *ctx)
{
    if (ctx == NULL || ctx->cublas == NULL) return;
    free_state((cublas_state *)ctx->cublas);
    ctx->cublas = NULL;
}
