/*
 * backend.cu - the CUDA backend's table (backend.h): lifetime, memory and copies
 * here; the ops live in dense.cu, local1d.cu, elementwise.cu, loss.cu and optim.cu.
 * Plus the public device queries of ffnn.h (ffnn_has_cuda, ffnn_cuda_device_count, ...).
 *
 * One context = one non-blocking stream on the current device; every op is queued
 * on it, and only download() and synchronize() wait for it.
 */
#include <stdlib.h>

#include "common.cuh"

/* ------------------------------------------------------------------ device queries */

extern "C" int ffnn_has_cuda(void) { return 1; }

/* Number of CUDA devices; 0 on any error (no driver, no GPU), with CUDA's last
 * error cleared so it is not reported by a later launch check. */
extern "C" int ffnn_cuda_device_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count > 0 ? count : 0;
}

extern "C" void ffnn_cuda_device_name(char *buf, size_t buf_size)
{
    if (buf == NULL || buf_size == 0) return;
    buf[0] = '\0';
    if (ffnn_cuda_device_count() == 0) return;
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    snprintf(buf, buf_size, "%s", prop.name);
}

/* ------------------------------------------------------------------ lifetime */

/* Query the device and make the stream; on failure the caller frees ctx. */
static ffnn_status cuda_init_context(ffnn_cuda_ctx *ctx)
{
    FFNN_CUDA_CHECK(ctx, cudaGetDevice(&ctx->device));
    FFNN_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&ctx->sm_count, cudaDevAttrMultiProcessorCount,
                                                ctx->device));
    if (ctx->sm_count < 1) ctx->sm_count = 1;
    FFNN_CUDA_CHECK(ctx, cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking));
    return FFNN_OK;
}

static ffnn_status cuda_create(ffnn_strategy kernels, int threads, void **out)
{
    (void)threads; /* CPU threads: the omp backend's */
    if (out == NULL) return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda create: out is NULL");
    if ((int)kernels < (int)FFNN_STRATEGY_TILED || (int)kernels >= (int)FFNN_STRATEGY_AUTO)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda create: kernels value %d is not a concrete strategy (auto is "
                         "resolved by the trainer)", (int)kernels);
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "cuda create: no usable CUDA device: %s (%s)",
                         cudaGetErrorString(err), cudaGetErrorName(err));
    }
    if (count == 0)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "cuda create: no CUDA device found");

    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)calloc(1, sizeof *ctx);
    if (ctx == NULL)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "cuda create: cannot allocate %zu bytes",
                         sizeof *ctx);
    ctx->kernels = kernels;
    ctx->block_1d = FFNN_CUDA_BLOCK;
    ctx->block_2d = 16;
    ffnn_status st = cuda_init_context(ctx);
    if (st != FFNN_OK) {
        if (ctx->stream != NULL) (void)cudaStreamDestroy(ctx->stream);
        (void)cudaGetLastError();
        free(ctx);
        return st;
    }
    *out = ctx;
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_cuda_set_launch(void *vctx, int block_1d, int block_2d)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "set_launch");
    if (block_1d != 0 && (block_1d < 32 || block_1d > 1024 || block_1d % 32 != 0))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda set_launch: 1-D block must be a multiple of 32 in [32, 1024], "
                         "found %d", block_1d);
    if (block_2d != 0 && block_2d != 8 && block_2d != 16 && block_2d != 32)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda set_launch: 2-D block must be 8, 16 or 32, found %d", block_2d);
    if (block_1d != 0) ctx->block_1d = block_1d;
    if (block_2d != 0) ctx->block_2d = block_2d;
    return FFNN_OK;
}

/* Waits for queued work, then frees the stream; errors are dropped (nothing to
 * report to), CUDA's last error is cleared. */
static void cuda_destroy(void *vctx)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    if (ctx == NULL) return;
    if (!ctx->poisoned && ctx->stream != NULL) {
        (void)cudaStreamSynchronize(ctx->stream);
        ffnn_cuda_cublas_release(ctx);
        if (ctx->persist_scratch != NULL) (void)cudaFree(ctx->persist_scratch);
        (void)cudaStreamDestroy(ctx->stream);
    }
    (void)cudaGetLastError();
    free(ctx);
}

extern "C" ffnn_status ffnn_cuda_set_precision(void *vctx, ffnn_precision precision)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "set_precision");
    if (precision != FFNN_PRECISION_FP32 && precision != FFNN_PRECISION_TF32 &&
        precision != FFNN_PRECISION_BF16)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda set_precision: unknown precision %d",
                         (int)precision);
    /* tf32: cuBLAS, or gemm.cu's tensor-core kernel under fused / graph; bf16: cuBLAS */
    const int takes_tf32 = ctx->kernels == FFNN_STRATEGY_CUBLAS ||
                           ctx->kernels == FFNN_STRATEGY_FUSED ||
                           ctx->kernels == FFNN_STRATEGY_GRAPH;
    if ((precision == FFNN_PRECISION_TF32 && !takes_tf32) ||
        (precision == FFNN_PRECISION_BF16 && ctx->kernels != FFNN_STRATEGY_CUBLAS))
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "precision %s runs on tensor cores through %s, not --kernels %s",
                         ffnn_precision_name(precision),
                         precision == FFNN_PRECISION_TF32
                             ? "the cublas, fused or graph strategies (or auto)"
                             : "the cublas strategy (--kernels cublas or auto)",
                         ffnn_strategy_name(ctx->kernels));
    ctx->precision = precision;
    return FFNN_OK;
}

/* ------------------------------------------------------------------ memory */

static ffnn_status cuda_alloc(void *vctx, size_t bytes, void **ptr)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "alloc");
    if (ptr == NULL) return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda alloc: ptr is NULL");
    *ptr = NULL;
    if (bytes == 0) return FFNN_OK;
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes);
    if (err != cudaSuccess) {
        /* Out of memory is not sticky: clear it and say how much was asked for. */
        (void)cudaGetLastError();
        size_t free_b = 0, total_b = 0;
        const int have_info = cudaMemGetInfo(&free_b, &total_b) == cudaSuccess;
        (void)cudaGetLastError();
        if (ffnn_cuda_error_is_sticky(err)) {
            return ffnn_cuda_fail_call(ctx, err, __FILE__, __LINE__, "cudaMalloc");
        }
        if (have_info)
            return ffnn_fail(FFNN_ERR_CUDA,
                             "cudaMalloc of %.3g bytes failed: %s (device has %.3g bytes, "
                             "%.3g free)",
                             (double)bytes, cudaGetErrorString(err), (double)total_b,
                             (double)free_b);
        return ffnn_fail(FFNN_ERR_CUDA, "cudaMalloc of %.3g bytes failed: %s", (double)bytes,
                         cudaGetErrorString(err));
    }
    *ptr = p;
    return FFNN_OK;
}

/* cudaFree waits for the device; a failure cannot be reported (void), but a
 * sticky one poisons the context and any failure is cleared. */
static void cuda_release(void *vctx, void *ptr)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    if (ptr == NULL) return;
    if (ctx != NULL && ctx->poisoned) return; /* the CUDA context is gone anyway */
    cudaError_t err = cudaFree(ptr);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        if (ctx != NULL && ffnn_cuda_error_is_sticky(err) && !ctx->poisoned) {
            ctx->poisoned = 1;
            snprintf(ctx->poison_reason, sizeof ctx->poison_reason,
                     "cudaFree failed: %s (%s)", cudaGetErrorString(err),
                     cudaGetErrorName(err));
        }
    }
}

/* Host -> device. From pageable memory the call returns once src has been staged,
 * so the caller may reuse src at once. */
static ffnn_status cuda_upload(void *vctx, void *dst, const void *src, size_t bytes)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "upload");
    if (bytes == 0) return FFNN_OK;
    if (dst == NULL || src == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda upload: a NULL pointer (%zu bytes)",
                         bytes);
    FFNN_CUDA_CHECK(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ctx->stream));
    return FFNN_OK;
}

/* Device -> host, after all work queued before it; returns when dst is filled. */
static ffnn_status cuda_download(void *vctx, void *dst, const void *src, size_t bytes)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "download");
    if (bytes == 0) return FFNN_OK;
    if (dst == NULL || src == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda download: a NULL pointer (%zu bytes)", bytes);
    FFNN_CUDA_CHECK(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ctx->stream));
    FFNN_CUDA_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
    return FFNN_OK;
}

static ffnn_status cuda_synchronize(void *vctx)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "synchronize");
    FFNN_CUDA_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
    return FFNN_OK;
}

/* ------------------------------------------------------------------ graphs */

/* Stream capture (backend.h capture_begin .. graph_free). Relaxed mode: the ops
 * queued meanwhile make no CUDA calls that capture forbids (they only launch). */
static ffnn_status cuda_capture_begin(void *vctx)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "capture_begin");
    FFNN_CUDA_CHECK(ctx, cudaStreamBeginCapture(ctx->stream, cudaStreamCaptureModeThreadLocal));
    return FFNN_OK;
}

static ffnn_status cuda_capture_end(void *vctx, void **graph)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "capture_end");
    cudaGraph_t g = NULL;
    cudaGraphExec_t exec = NULL;
    *graph = NULL;
    FFNN_CUDA_CHECK(ctx, cudaStreamEndCapture(ctx->stream, &g));
    cudaError_t err = cudaGraphInstantiate(&exec, g, 0);
    (void)cudaGraphDestroy(g);
    if (err != cudaSuccess)
        return ffnn_cuda_fail_call(ctx, err, __FILE__, __LINE__, "cudaGraphInstantiate");
    *graph = (void *)exec;
    return FFNN_OK;
}

static ffnn_status cuda_graph_launch(void *vctx, void *graph)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "graph_launch");
    FFNN_CUDA_CHECK(ctx, cudaGraphLaunch((cudaGraphExec_t)graph, ctx->stream));
    return FFNN_OK;
}

static void cuda_graph_free(void *vctx, void *graph)
{
    (void)vctx;
    if (graph != NULL) (void)cudaGraphExecDestroy((cudaGraphExec_t)graph);
}

/* ------------------------------------------------------------------ the table */

/* One name and 23 functions: a new member in backend.h must be added here too. */
static_assert(sizeof(ffnn_backend_ops) == 24 * sizeof(void *),
              "ffnn_backend_ops changed: update cuda_ops in src/cuda/backend.cu");

static const ffnn_backend_ops cuda_ops = {
    /* name                */ "cuda",
    /* create              */ cuda_create,
    /* destroy             */ cuda_destroy,
    /* alloc               */ cuda_alloc,
    /* release             */ cuda_release,
    /* upload              */ cuda_upload,
    /* download            */ cuda_download,
    /* synchronize         */ cuda_synchronize,
    /* gather              */ ffnn_cuda_gather,
    /* dense_forward       */ ffnn_cuda_dense_forward,
    /* dense_backward      */ ffnn_cuda_dense_backward,
    /* local1d_forward     */ ffnn_cuda_local1d_forward,
    /* local1d_backward    */ ffnn_cuda_local1d_backward,
    /* activation_forward  */ ffnn_cuda_activation_forward,
    /* activation_backward */ ffnn_cuda_activation_backward,
    /* loss                */ ffnn_cuda_loss,
    /* optimizer_update    */ ffnn_cuda_optimizer_update,
    /* dense_act_forward   */ ffnn_cuda_dense_act_forward,
    /* dense_backward_fused*/ ffnn_cuda_dense_backward_fused,
    /* capture_begin       */ cuda_capture_begin,
    /* capture_end         */ cuda_capture_end,
    /* graph_launch        */ cuda_graph_launch,
    /* graph_free          */ cuda_graph_free,
    /* train_persistent    */ ffnn_cuda_train_persistent,
};

extern "C" const ffnn_backend_ops *ffnn_cuda_backend(void) { return &cuda_ops; }
