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
 *
 * Files: cublas.cu (this: the state, the plain cuBLAS matmul), cublas_x3.cu (the
 * tf32x3 split), cublas_lt.cu (cuBLASLt's fused ops, the bf16 pipeline),
 * cublas_state.cuh (what they share).
 */
#include <stdlib.h>

#include "cublas_state.cuh"


/* Record a failed cuBLAS call (status != CUBLAS_STATUS_SUCCESS): the message names
 * the file, the line, the call and cuBLAS's status; CUDA's last error is read and
 * cleared, and a sticky one poisons ctx (may be NULL). Returns FFNN_ERR_CUDA. */
ffnn_status ffnn_cublas_fail_call(ffnn_cuda_ctx *ctx, cublasStatus_t status, const char *file,
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
ffnn_status ffnn_cublas_get_state(ffnn_cuda_ctx *ctx, cublas_state **out)
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
ffnn_status ffnn_cublas_ensure_scratch(ffnn_cuda_ctx *ctx, cublas_state *s, size_t bytes)
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
 * first use, outside any capture's record as ffnn_cublas_ensure_scratch) or the handle's.
 * Errors: FFNN_ERR_CUDA (cudaMalloc failed). */
ffnn_status ffnn_cublas_lt_workspace(ffnn_cuda_ctx *ctx, cublas_state *s, void **ws)
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
 * Queued on ctx->stream. Errors: as ffnn_cublas_ensure_scratch, FFNN_ERR_CUDA (launch). */
ffnn_status ffnn_cublas_to_bf16(ffnn_cuda_ctx *ctx, cublas_state *s, const float *A, size_t n_a,
                                const float *B, size_t n_b, __nv_bfloat16 **a16,
                                __nv_bfloat16 **b16)
{
    const size_t b_offset = (n_a + FFNN_CUBLAS_BF16_ALIGN - 1) / FFNN_CUBLAS_BF16_ALIGN *
                            FFNN_CUBLAS_BF16_ALIGN;
    ffnn_status st = ffnn_cublas_ensure_scratch(ctx, s, (b_offset + n_b) * sizeof(__nv_bfloat16));
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
 * ffnn_cublas_ensure_scratch, FFNN_ERR_CUDA (cuBLAS). */
ffnn_status ffnn_cublas_transposed_input(ffnn_cuda_ctx *ctx, cublas_state *s, const float *x,
                                         size_t batch, size_t in, const float **xt)
{
    const ffnn_status st = ffnn_cublas_ensure_scratch(ctx, s, batch * in * sizeof(float));
    if (st != FFNN_OK) return st;
    const float one = 1.0f, zero = 0.0f;
    float *t = (float *)s->scratch;
    FFNN_CUBLAS_CHECK(ctx, "cublasSgeam",
                      cublasSgeam(s->handle, CUBLAS_OP_T, CUBLAS_OP_T, (int)batch, (int)in,
                                  &one, x, (int)in, &zero, x, (int)in, t, (int)batch));
    *xt = t;
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
    ffnn_status st = ffnn_cublas_get_state(ctx, &s);
    if (st != FFNN_OK) return st;

    const float one = 1.0f, zero = 0.0f;
    const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int ld_b = trans_b ? K : N;
    const int ld_a = trans_a ? M : K;
    if (ctx->precision == FFNN_PRECISION_BF16) {
        __nv_bfloat16 *a16 = NULL, *b16 = NULL;
        st = ffnn_cublas_to_bf16(ctx, s, A, (size_t)M * (size_t)K, B, (size_t)K * (size_t)N, &a16,
                                 &b16);
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
        if ((st = ffnn_cublas_tf32x3_split(ctx, s, &fb, &fa, 0)) != FFNN_OK) return st;
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


/* Destroy ctx's handle, workspace and scratch, if it made them (destroy calls this after
 * synchronising the stream); errors are dropped, CUDA's last error cleared. */
extern "C" void ffnn_cuda_cublas_release(ffnn_cuda_ctx *ctx)
{
    if (ctx == NULL || ctx->cublas == NULL) return;
    free_state((cublas_state *)ctx->cublas);
    ctx->cublas = NULL;
}

