/*
 * backend.cu - the CUDA backend's table (backend.h) and its extensions: lifetime,
 * memory, copies, graphs and the second stream here; the core ops live in the
 * files of their names (gather.cu, dense.cu, local1d.cu, embedding.cu, activation.cu,
 * loss.cu, update.cu), the extensions' in fused.cu, cublas.cu, head.cu and persistent.cu.
 * Plus the device queries of the module's table (src/backend/module.h).
 *
 * One context = one non-blocking stream on the current device; every op is queued
 * on it, and only download() and synchronize() wait for it.
 */
#include <stdlib.h>

#include "common.cuh"
#include "gemm.cuh"

/* ------------------------------------------------------------------ device queries */


/* Number of CUDA devices; 0 on any error (no driver, no GPU), with CUDA's last
 * error cleared so it is not reported by a later launch check. */
extern "C" int ffnn_cuda_module_device_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count > 0 ? count : 0;
}

extern "C" void ffnn_cuda_module_device_name(char *buf, size_t buf_size)
{
    if (buf == NULL || buf_size == 0) return;
    buf[0] = '\0';
    if (ffnn_cuda_module_device_count() == 0) return;
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    snprintf(buf, buf_size, "%s", prop.name);
}

/* The calling thread's device: backend contexts made on the thread from then on
 * live on it, and its launches go there (module.h set_device, current_device). */
extern "C" ffnn_status ffnn_cuda_module_set_device(int device)
{
    int count = ffnn_cuda_module_device_count();
    if (device < 0 || device >= count)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "CUDA device %d: %d device%s visible",
                         device, count, count == 1 ? " is" : "s are");
    cudaError_t err = cudaSetDevice(device);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return ffnn_fail(FFNN_ERR_CUDA, "cudaSetDevice(%d): %s (%s)", device,
                         cudaGetErrorString(err), cudaGetErrorName(err));
    }
    return FFNN_OK;
}

extern "C" int ffnn_cuda_module_current_device(void)
{
    int device = -1;
    if (cudaGetDevice(&device) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return device;
}

/* ------------------------------------------------------------------ lifetime */

/* Query the device and make the stream; on failure the caller frees ctx. */
static ffnn_status cuda_init_context(ffnn_cuda_ctx *ctx)
{
    FFNN_CUDA_CHECK(ctx, cudaGetDevice(&ctx->device));
    FFNN_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&ctx->sm_count, cudaDevAttrMultiProcessorCount,
                                                ctx->device));
    if (ctx->sm_count < 1) ctx->sm_count = 1;
    /* the ops' stream at the device's highest priority, the second stream (backend.h
     * side_begin) at its lowest: a block of a side kernel (the next batch's
     * gather) is scheduled only where no block of the step's own kernels waits.
     * Made here, not on first use (a graph capture may not create streams); the
     * events without timing, for ordering only */
    int least = 0, greatest = 0;
    FFNN_CUDA_CHECK(ctx, cudaDeviceGetStreamPriorityRange(&least, &greatest));
    FFNN_CUDA_CHECK(ctx, cudaStreamCreateWithPriority(&ctx->stream, cudaStreamNonBlocking,
                                                      greatest));
    ctx->main_stream = ctx->stream;
    FFNN_CUDA_CHECK(ctx, cudaStreamCreateWithPriority(&ctx->side_stream, cudaStreamNonBlocking,
                                                      least));
    FFNN_CUDA_CHECK(ctx, cudaEventCreateWithFlags(&ctx->side_fork, cudaEventDisableTiming));
    FFNN_CUDA_CHECK(ctx, cudaEventCreateWithFlags(&ctx->side_done, cudaEventDisableTiming));
    /* split-K workspace: here, not on first use (a graph capture may not allocate) */
    FFNN_CUDA_CHECK(ctx, cudaMalloc((void **)&ctx->split_ws,
                                    (size_t)FFNN_GEMM_SPLIT_WS_FLOATS * sizeof(float)));
    FFNN_CUDA_CHECK(ctx, cudaMalloc((void **)&ctx->reduce_count,
                                    FFNN_CUDA_REDUCE_COUNTERS * sizeof(unsigned)));
    FFNN_CUDA_CHECK(ctx, cudaMemsetAsync(ctx->reduce_count, 0,
                                         FFNN_CUDA_REDUCE_COUNTERS * sizeof(unsigned),
                                         ctx->stream));
    return ffnn_cuda_gemm_mma_init(ctx); /* its kernels' shared-memory opt-in */
}

/* The second stream's stream and events (each may be NULL: not made). */
static void side_destroy(ffnn_cuda_ctx *ctx)
{
    if (ctx->side_done != NULL) (void)cudaEventDestroy(ctx->side_done);
    if (ctx->side_fork != NULL) (void)cudaEventDestroy(ctx->side_fork);
    if (ctx->side_stream != NULL) (void)cudaStreamDestroy(ctx->side_stream);
}

/* Check *o against what this backend takes (backend.h ffnn_backend_options). */
static ffnn_status cuda_check_options(const ffnn_backend_options *o)
{
    if ((int)o->matmul < (int)FFNN_MATMUL_TILED || (int)o->matmul > (int)FFNN_MATMUL_LIBRARY_LT)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda create: unknown matmul variant %d",
                         (int)o->matmul);
    if (o->precision != FFNN_PRECISION_FP32 && o->precision != FFNN_PRECISION_TF32 &&
        o->precision != FFNN_PRECISION_BF16 && o->precision != FFNN_PRECISION_TF32X3)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda create: unknown precision %d",
                         (int)o->precision);
    if (o->block_1d != 0 && (o->block_1d < 32 || o->block_1d > 1024 || o->block_1d % 32 != 0))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda create: 1-D block must be a multiple of 32 in [32, 1024], "
                         "found %d", o->block_1d);
    if (o->block_2d != 0 && o->block_2d != 8 && o->block_2d != 16 && o->block_2d != 32)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda create: 2-D block must be 8, 16 or 32, found %d", o->block_2d);
    return FFNN_OK;
}

static ffnn_status cuda_create(const ffnn_backend_options *options, void **out)
{
    const ffnn_backend_options defaults = {0, FFNN_MATMUL_TILED, FFNN_PRECISION_FP32, 0, 0};
    const ffnn_backend_options *o = options ? options : &defaults;
    if (out == NULL) return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda create: out is NULL");
    ffnn_status st = cuda_check_options(o);
    if (st != FFNN_OK) return st;
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
    ctx->matmul = o->matmul;
    ctx->precision = o->precision;
    ctx->block_1d = o->block_1d ? o->block_1d : FFNN_CUDA_BLOCK;
    ctx->block_2d = o->block_2d ? o->block_2d : 16;
    st = cuda_init_context(ctx);
    if (st != FFNN_OK) {
        if (ctx->split_ws != NULL) (void)cudaFree(ctx->split_ws);
        if (ctx->reduce_count != NULL) (void)cudaFree(ctx->reduce_count);
        side_destroy(ctx);
        if (ctx->stream != NULL) (void)cudaStreamDestroy(ctx->stream);
        (void)cudaGetLastError();
        free(ctx);
        return st;
    }
    *out = ctx;
    return FFNN_OK;
}

static void *cuda_native_stream(void *vctx) { return (void *)((ffnn_cuda_ctx *)vctx)->stream; }

static ffnn_status cuda_set_precision(void *vctx, ffnn_precision precision)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "set_precision");
    if (precision != FFNN_PRECISION_FP32 && precision != FFNN_PRECISION_TF32 &&
        precision != FFNN_PRECISION_BF16 && precision != FFNN_PRECISION_TF32X3)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda set_precision: unknown precision %d",
                         (int)precision);
    ctx->precision = precision;
    return FFNN_OK;
}

/* Host threads: the ops are queued on one stream by the calling thread. */
static int cuda_threads(const void *ctx)
{
    (void)ctx;
    return 1;
}

/* Waits for queued work, then frees the stream; errors are dropped (nothing to
 * report to), CUDA's last error is cleared. */
static void cuda_destroy(void *vctx)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    if (ctx == NULL) return;
    if (!ctx->poisoned && ctx->main_stream != NULL) {
        (void)cudaStreamSynchronize(ctx->side_stream);
        (void)cudaStreamSynchronize(ctx->main_stream);
        ffnn_cuda_cublas_release(ctx);
        if (ctx->persist_scratch != NULL) (void)cudaFree(ctx->persist_scratch);
        if (ctx->split_ws != NULL) (void)cudaFree(ctx->split_ws);
        if (ctx->reduce_count != NULL) (void)cudaFree(ctx->reduce_count);
        side_destroy(ctx);
        (void)cudaStreamDestroy(ctx->main_stream);
    }
    (void)cudaGetLastError();
    free(ctx);
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

/* The device memory still free (cudaMemGetInfo), for the trainer's estimate. */
static ffnn_status cuda_memory_available(void *vctx, size_t *free_bytes)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "memory_available");
    size_t free_b = 0, total_b = 0;
    cudaError_t err = cudaMemGetInfo(&free_b, &total_b);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return ffnn_fail(FFNN_ERR_CUDA, "cudaMemGetInfo: %s", cudaGetErrorString(err));
    }
    *free_bytes = free_b;
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
    ctx->capturing = 1;
    ctx->side_done_captured = 0;
    return FFNN_OK;
}

static ffnn_status cuda_capture_end(void *vctx, void **graph)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "capture_end");
    cudaGraph_t g = NULL;
    cudaGraphExec_t exec = NULL;
    *graph = NULL;
    ctx->capturing = 0;
    FFNN_CUDA_CHECK(ctx, cudaStreamEndCapture(ctx->stream, &g));
    /* each kernel node keeps the priority of the stream it was captured from
     * (the second stream's below the main stream's: cuda_init_context) */
    cudaError_t err = cudaGraphInstantiate(&exec, g, cudaGraphInstantiateFlagUseNodePriority);
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

/* ------------------------------------------------------------------ second stream */

/* backend.h side_begin .. side_join: the side stream waits for an event recorded
 * on the main stream, the ops queue on it (ctx->stream) until side_end records
 * side_done there; side_join makes the main stream wait for side_done. Under
 * stream capture the records and waits become the graph's edges. */
extern "C" ffnn_status ffnn_cuda_side_begin(void *vctx)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "side_begin");
    if (ctx->stream != ctx->main_stream)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda side_begin: already on the second CUDA stream");
    FFNN_CUDA_CHECK(ctx, cudaEventRecord(ctx->side_fork, ctx->main_stream));
    FFNN_CUDA_CHECK(ctx, cudaStreamWaitEvent(ctx->side_stream, ctx->side_fork, 0));
    ctx->stream = ctx->side_stream;
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_cuda_side_end(void *vctx)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    if (ctx == NULL) return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda side_end: context is NULL");
    if (ctx->stream != ctx->side_stream)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda side_end: not on the second CUDA stream");
    ctx->stream = ctx->main_stream; /* back on the main stream even after an error */
    FFNN_CUDA_GUARD(ctx, "side_end");
    FFNN_CUDA_CHECK(ctx, cudaEventRecord(ctx->side_done, ctx->side_stream));
    if (ctx->capturing) ctx->side_done_captured = 1;
    return FFNN_OK;
}

static ffnn_status cuda_side_join(void *vctx)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "side_join");
    /* In a capture before any side_end of it there is nothing of the capture's to
     * join: the steps join all their side work before a launch ends, and side_done
     * then holds a record from outside the capture (or from an earlier one), which a
     * captured wait may not depend on - CUDA would invalidate the whole capture
     * (what a run resumed mid-epoch met on its first launch). */
    if (ctx->capturing && !ctx->side_done_captured) return FFNN_OK;
    FFNN_CUDA_CHECK(ctx, cudaStreamWaitEvent(ctx->main_stream, ctx->side_done, 0));
    return FFNN_OK;
}

/* ------------------------------------------------------------------ the table */

/* Every extension the cuda backend has (backend.h; packed and weights: none - the
 * predictor runs dense_forward on cuda, and the trainer refuses weights there). */
static const ffnn_ops_fused cuda_fused = {
    /* dense_act_forward       */ ffnn_cuda_dense_act_forward,
    /* dense_backward_fused    */ ffnn_cuda_dense_backward_fused,
};
static const ffnn_ops_xt cuda_xt = {
    /* dense_backward_wants_xt */ ffnn_cuda_dense_backward_wants_xt,
    /* prepare_xt              */ ffnn_cuda_prepare_xt,
};
static const ffnn_ops_graph cuda_graph = {
    /* capture_begin           */ cuda_capture_begin,
    /* capture_end             */ cuda_capture_end,
    /* graph_launch            */ cuda_graph_launch,
    /* graph_free              */ cuda_graph_free,
};
static const ffnn_ops_persistent cuda_persistent = {
    /* train_persistent        */ ffnn_cuda_train_persistent,
    /* persistent_supported    */ ffnn_cuda_persistent_supported,
};
static const ffnn_ops_device cuda_device = {
    /* set_precision           */ cuda_set_precision,
    /* memory_available        */ cuda_memory_available,
    /* native_stream           */ cuda_native_stream,
};
static const ffnn_ops_bf16 cuda_bf16 = {
    /* to_bf16                 */ ffnn_cuda_to_bf16,
    /* gather_bf16             */ ffnn_cuda_gather_bf16,
    /* optimizer_update_bf16   */ ffnn_cuda_optimizer_update_bf16,
    /* dense_act_forward_bf16  */ ffnn_cuda_dense_act_forward_bf16,
    /* dense_backward_bf16     */ ffnn_cuda_dense_backward_bf16,
};
static const ffnn_ops_head cuda_head = {
    /* softmax_ce_head         */ ffnn_cuda_softmax_ce_head,
    /* softmax_ce_head_sums    */ ffnn_cuda_softmax_ce_head_sums,
};
static const ffnn_ops_side cuda_side = {
    /* side_begin              */ ffnn_cuda_side_begin,
    /* side_end                */ ffnn_cuda_side_end,
    /* side_join               */ cuda_side_join,
};

static const ffnn_ops_models cuda_models = {
    /* dense_act_forward       */ ffnn_cuda_models_dense_act_forward,
    /* dense_backward_sgd      */ ffnn_cuda_models_dense_backward_sgd,
    /* loss                    */ ffnn_cuda_loss_models,
};

/* One name, the caps, 22 core functions and 11 extension pointers: a new member in
 * backend.h must be added here too (the initialisers are positional). */
static_assert(sizeof(ffnn_backend_ops) == 35 * sizeof(void *),
              "ffnn_backend_ops changed: update cuda_ops in src/backend/cuda/backend.cu");
static_assert(sizeof(ffnn_ops_fused) == 2 * sizeof(void *) &&
                  sizeof(ffnn_ops_xt) == 2 * sizeof(void *) &&
                  sizeof(ffnn_ops_graph) == 4 * sizeof(void *) &&
                  sizeof(ffnn_ops_persistent) == 2 * sizeof(void *) &&
                  sizeof(ffnn_ops_device) == 3 * sizeof(void *) &&
                  sizeof(ffnn_ops_bf16) == 5 * sizeof(void *) &&
                  sizeof(ffnn_ops_head) == 2 * sizeof(void *) &&
                  sizeof(ffnn_ops_side) == 3 * sizeof(void *) &&
                  sizeof(ffnn_ops_models) == 3 * sizeof(void *),
              "an extension of backend.h changed: update its table in cuda/backend.cu");

static const ffnn_backend_ops cuda_ops = {
    /* name                */ "cuda",
    /* caps                */ FFNN_CAP_DEVICE | FFNN_CAP_TF32 | FFNN_CAP_BF16 |
                              FFNN_CAP_LIBRARY_MATMUL,
    /* create              */ cuda_create,
    /* destroy             */ cuda_destroy,
    /* threads             */ cuda_threads,
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
    /* embedding_forward   */ ffnn_cuda_embedding_forward,
    /* embedding_backward  */ ffnn_cuda_embedding_backward,
    /* activation_forward  */ ffnn_cuda_activation_forward,
    /* activation_backward */ ffnn_cuda_activation_backward,
    /* loss                */ ffnn_cuda_loss,
    /* optimizer_update    */ ffnn_cuda_optimizer_update,
    /* grad_clip           */ ffnn_cuda_grad_clip,
    /* dropout             */ ffnn_cuda_dropout,
    /* ema_update          */ ffnn_cuda_ema_update,
    /* fused               */ &cuda_fused,
    /* xt                  */ &cuda_xt,
    /* graph               */ &cuda_graph,
    /* persistent          */ &cuda_persistent,
    /* device              */ &cuda_device,
    /* bf16                */ &cuda_bf16,
    /* head                */ &cuda_head,
    /* side                */ &cuda_side,
    /* packed              */ NULL,
    /* weights             */ NULL,
    /* models              */ &cuda_models,
};

extern "C" const ffnn_backend_ops *ffnn_cuda_module_ops(void) { return &cuda_ops; }
