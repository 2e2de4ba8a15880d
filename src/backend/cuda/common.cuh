/*
 * common.cuh - what every file of the CUDA backend shares: the context, the one
 * check macro for CUDA calls, the launch check, the poisoned-context guard, launch
 * helpers, and the entry points each .cu file defines for backend.cu's table.
 *
 * Included only by the .cu files of src/backend/cuda/, but kept free of C++ constructs
 * (no templates, classes, references) so that it reads as a C header.
 *
 * Error policy
 *   - Every CUDA runtime call goes through FFNN_CUDA_CHECK, every kernel launch is
 *     followed by FFNN_CUDA_LAUNCH_CHECK. On failure the message names the file,
 *     the line, the call (or kernel) and CUDA's own description, e.g.
 *       "src/backend/cuda/dense.cu:212: launch of matmul_kernel_tiled failed:
 *        invalid configuration argument (cudaErrorInvalidConfiguration)"
 *   - A failure clears CUDA's per-thread "last error" so that it is not blamed on
 *     the next launch.
 *   - A sticky error (illegal address, launch failure, ... : the CUDA context is
 *     corrupt and every further call returns the same error) poisons the backend
 *     context: every later entry point fails at once with FFNN_ERR_CUDA and a
 *     message that quotes the original error, without touching CUDA again.
 */
#ifndef FFNN_CUDA_COMMON_CUH
#define FFNN_CUDA_COMMON_CUH

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "backend/backend.h"
#include "core/error.h"

/* Threads per block of the 1-D element-wise and per-row kernels (8 warps). */
#define FFNN_CUDA_BLOCK 256
/* Hardware limits of every GPU since compute capability 3.0. */
#define FFNN_CUDA_MAX_GRID_X 2147483647u
#define FFNN_CUDA_MAX_GRID_YZ 65535u
/* Matrix dimensions (rows, columns, inner size) must fit this so that int index
 * arithmetic inside kernels (row + grid stride, tile * tile size) cannot overflow. */
#define FFNN_CUDA_MAX_DIM ((size_t)1 << 30)

/* Column strips (256 columns each) of one act_bias_grad launch (dense.cu): wider
 * rows take its two-kernel path. */
#define FFNN_CUDA_REDUCE_COUNTERS 4096

/* The backend context: one per trainer. */
typedef struct ffnn_cuda_ctx {
    cudaStream_t stream;        /* non-blocking stream every op is queued on       */
                                /* (the side stream between side_begin, side_end)  */
    cudaStream_t main_stream;   /* the ops' stream outside side_begin .. side_end  */
    cudaStream_t side_stream;   /* backend.h side_begin's queue (non-blocking)     */
    cudaEvent_t side_fork;      /* recorded on the main stream at side_begin       */
    cudaEvent_t side_done;      /* recorded on the side stream at side_end         */
    int capturing;              /* 1 between capture_begin and capture_end          */
    int side_done_captured;     /* 1 once side_end has recorded side_done inside the */
                                /* capture under way (side_join waits on it only    */
                                /* then: see cuda_side_join)                        */
    ffnn_matmul_variant matmul; /* the plain dense and local1d ops' kernels: naive, */
                                /* the library's (cuBLAS) or tiled (the default)    */
    ffnn_precision precision;   /* matmul arithmetic: tf32 / bf16 for the fused ops */
                                /* (gemm_mma.cu) and cuBLAS                         */
    void *cublas;               /* cublas.cu's state (handle, workspace, bf16       */
                                /* scratch), made on first use                      */
    void *persist_scratch;      /* persistent.cu's launch scratch (grown on demand) */
    size_t persist_bytes;       /* its size in bytes                                */
    float *split_ws;            /* split-K partial sums of gemm.cu / gemm_mma.cu    */
                                /* (FFNN_GEMM_SPLIT_WS_FLOATS, made with the ctx);  */
                                /* also dense.cu's act_bias_grad chunk sums         */
    unsigned *reduce_count;     /* [FFNN_CUDA_REDUCE_COUNTERS] act_bias_grad's      */
                                /* blocks done per column strip, zero between runs  */
    int gemm_splits;            /* 0: the plan decides; >= 1: forced (kernel lab)   */
    int poisoned;               /* 1 after a sticky error: every call then fails   */
    int device;                 /* CUDA device ordinal the stream was created on   */
    int sm_count;               /* multiprocessors (tile-size choice in dense.cu)  */
    int block_1d;               /* threads/block of the 1-D element-wise kernels   */
                                /* (FFNN_CUDA_BLOCK unless ffnn_cuda_set_launch)   */
    int block_2d;               /* naive matmul's square block edge (default 16)   */
    char poison_reason[512];    /* the message of the sticky error                 */
} ffnn_cuda_ctx;

/* 1 when err leaves the CUDA context unusable (the runtime documents these as
 * "the process must be terminated and relaunched"); unknown errors count too. */
static inline int ffnn_cuda_error_is_sticky(cudaError_t err)
{
    switch (err) {
    case cudaErrorContained:
    case cudaErrorECCUncorrectable:
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorMpsClientTerminated:
    case cudaErrorExternalDevice:
    case cudaErrorUnknown:
        return 1;
    default:
        return 0;
    }
}

/* Record a failed CUDA call: set the thread's error message, clear CUDA's last
 * error, poison ctx (may be NULL) when the error is sticky. Returns FFNN_ERR_CUDA. */
static inline ffnn_status ffnn_cuda_fail_call(ffnn_cuda_ctx *ctx, cudaError_t err,
                                              const char *file, int line,
                                              const char *what)
{
    /* Reset the per-thread last error; a sticky error keeps coming back. */
    cudaError_t again = cudaGetLastError();
    (void)again;
    int sticky = ffnn_cuda_error_is_sticky(err) || cudaPeekAtLastError() != cudaSuccess;
    ffnn_fail(FFNN_ERR_CUDA, "%s:%d: %s failed: %s (%s)%s", file, line, what,
              cudaGetErrorString(err), cudaGetErrorName(err),
              sticky ? "; the CUDA context is unusable from now on" : "");
    if (sticky && ctx != NULL && !ctx->poisoned) {
        ctx->poisoned = 1;
        snprintf(ctx->poison_reason, sizeof ctx->poison_reason, "%s", ffnn_last_error());
    }
    return FFNN_ERR_CUDA;
}

/* Run a CUDA runtime call; on failure record it (see ffnn_cuda_fail_call) and
 * return FFNN_ERR_CUDA from the enclosing function. */
#define FFNN_CUDA_CHECK(ctx, call)                                                 \
    do {                                                                           \
        cudaError_t ffnn_cuda_err_ = (call);                                       \
        if (ffnn_cuda_err_ != cudaSuccess)                                         \
            return ffnn_cuda_fail_call((ctx), ffnn_cuda_err_, __FILE__, __LINE__,  \
                                       #call);                                     \
    } while (0)

/* After every kernel launch: a bad configuration shows up here at once; a fault
 * during execution shows up at the next synchronising call. kernel: a string. */
#define FFNN_CUDA_LAUNCH_CHECK(ctx, kernel)                                        \
    do {                                                                           \
        cudaError_t ffnn_cuda_err_ = cudaGetLastError();                           \
        if (ffnn_cuda_err_ != cudaSuccess)                                         \
            return ffnn_cuda_fail_call((ctx), ffnn_cuda_err_, __FILE__, __LINE__,  \
                                       "launch of " kernel);                       \
    } while (0)

/* First statement of every entry point that takes a context: refuse a NULL or
 * poisoned context. op: the entry point's name, for the message. */
#define FFNN_CUDA_GUARD(ctx, op)                                                   \
    do {                                                                           \
        if ((ctx) == NULL)                                                         \
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda %s: context is NULL", \
                             (op));                                                \
        if ((ctx)->poisoned)                                                       \
            return ffnn_fail(FFNN_ERR_CUDA,                                        \
                             "cuda %s: refused, the CUDA context was lost to an "  \
                             "earlier error: %s", (op), (ctx)->poison_reason);     \
    } while (0)

/* Blocks for a grid-stride loop over n items with `block` threads per block
 * (ctx->block_1d): enough to fill the GPU, capped so that the count fits gridDim.x. */
static inline unsigned ffnn_cuda_grid_1d_for(size_t n, unsigned block)
{
    size_t blocks = (n + block - 1) / block;
    const size_t cap = (size_t)1 << 20; /* the loop strides over the rest */
    if (blocks > cap) blocks = cap;
    if (blocks == 0) blocks = 1;
    return (unsigned)blocks;
}

/* The grid-stride loop of an element-wise kernel over [0, n): thread t of the grid
 * takes elements t, t + (the grid's threads), ... in that order; i is a size_t.
 * Use: FFNN_CUDA_GRID_STRIDE(i, n) statement; */
#define FFNN_CUDA_GRID_STRIDE(i, n)                                                     \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x,                      \
                i##_stride_ = (size_t)gridDim.x * blockDim.x;                           \
         i < (n); i += i##_stride_)

#ifdef __CUDACC__
/* acc [TM][TN] = 0: a thread's register tile of a matmul (dense.cu, gemm.cu). */
template <int TM, int TN>
static __device__ __forceinline__ void ffnn_cuda_zero_tile(float (&acc)[TM][TN])
{
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
}
#endif

/* ffnn_cuda_grid_1d_for with FFNN_CUDA_BLOCK threads per block. */
static inline unsigned ffnn_cuda_grid_1d(size_t n)
{
    return ffnn_cuda_grid_1d_for(n, FFNN_CUDA_BLOCK);
}

/* Dimensions of a dense call (dense.cu, fused.cu): each of batch, in, out in
 * [1, FFNN_CUDA_MAX_DIM], else FFNN_ERR_INVALID_ARGUMENT naming op. */
static inline ffnn_status ffnn_cuda_check_dense_dims(const char *op, size_t batch, size_t in,
                                                     size_t out)
{
    if (batch == 0 || in == 0 || out == 0 || batch > FFNN_CUDA_MAX_DIM ||
        in > FFNN_CUDA_MAX_DIM || out > FFNN_CUDA_MAX_DIM)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda %s: batch=%zu in=%zu out=%zu: each must be in 1..%zu", op,
                         batch, in, out, (size_t)FFNN_CUDA_MAX_DIM);
    return FFNN_OK;
}

/* An activation a fused kernel (fused.cu, local1d.cu) runs: identity, relu, sigmoid,
 * tanh (0..3); the others run as the plain activation ops only. Else
 * FFNN_ERR_INVALID_ARGUMENT "cuda OP: unknown WHAT N". */
static inline ffnn_status ffnn_cuda_check_fused_act(const char *op, const char *what,
                                                    ffnn_activation act)
{
    switch (act) {
    case FFNN_ACT_IDENTITY:
    case FFNN_ACT_RELU:
    case FFNN_ACT_SIGMOID:
    case FFNN_ACT_TANH:
        return FFNN_OK;
    default: /* leaky_relu ... hardswish: the plain activation ops only */
        break;
    }
    return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda %s: unknown %s %d (expected 0..3)", op,
                     what, (int)act);
}

#ifdef __cplusplus
extern "C" {
#endif

/* Entry points with exactly the semantics of the same-named ffnn_backend_ops
 * members and extension entries (backend.h). ctx is an ffnn_cuda_ctx *. */

/* gather.cu (and activation.cu) */
/* Not a backend op: dst [cols, rows] = src^T [rows, cols] exactly (prepare_xt's x^T;
 * rows, cols in 1..FFNN_CUDA_MAX_DIM). */
ffnn_status ffnn_cuda_transpose(void *ctx, const float *src, size_t rows, size_t cols,
                                float *dst);
ffnn_status ffnn_cuda_gather(void *ctx, const ffnn_gather_source *src, const int32_t *index,
                             size_t batch, float *x, int32_t *y, float *t);
ffnn_status ffnn_cuda_activation_forward(void *ctx, ffnn_activation act, float param,
                                         const float *z, float *a, size_t n);
ffnn_status ffnn_cuda_activation_backward(void *ctx, ffnn_activation act, float param,
                                          const float *saved, const float *da, float *dz,
                                          size_t n);

/* activation.cu: mixed precision (backend.h to_bf16); the activation kernels on
 * bf16 tensors in place (act 0..3; identity: nothing), for cublas.cu's
 * mixed-precision ops. */
ffnn_status ffnn_cuda_to_bf16(void *ctx, const float *src, uint16_t *dst16, size_t rows,
                              size_t cols, size_t ld);
ffnn_status ffnn_cuda_gather_bf16(void *ctx, const ffnn_gather_source *src,
                                  const int32_t *index, size_t batch, uint16_t *x16, int32_t *y,
                                  float *t);
ffnn_status ffnn_cuda_activation_forward_bf16(ffnn_cuda_ctx *ctx, ffnn_activation act,
                                              uint16_t *a16, size_t n);
ffnn_status ffnn_cuda_activation_backward_bf16(ffnn_cuda_ctx *ctx, ffnn_activation act,
                                               const uint16_t *saved16, uint16_t *dz16,
                                               size_t n);

/* update.cu */
ffnn_status ffnn_cuda_optimizer_update_bf16(void *ctx, const ffnn_optimizer_step *step,
                                            float *params, const float *grads, float *state,
                                            size_t n, uint16_t *shadow16);
ffnn_status ffnn_cuda_grad_clip(void *ctx, float *grads, size_t n, float max_norm,
                                float max_value, float *norm_out);
ffnn_status ffnn_cuda_dropout(void *ctx, const float *in, float *out, size_t n, uint64_t key,
                              uint32_t threshold, float scale);
ffnn_status ffnn_cuda_ema_update(void *ctx, float *ema, const float *params, size_t n,
                                 float decay, float one_minus_decay);
ffnn_status ffnn_cuda_optimizer_update(void *ctx, const ffnn_optimizer_step *step,
                                       float *params, const float *grads, float *state,
                                       size_t n);

/* dense.cu */
ffnn_status ffnn_cuda_dense_forward(void *ctx, const float *x, const float *W,
                                    const float *b, float *z, size_t batch, size_t in,
                                    size_t out);
ffnn_status ffnn_cuda_dense_backward(void *ctx, const float *x, const float *W,
                                     const float *dz, float *dx, float *dW, float *db,
                                     size_t batch, size_t in, size_t out);

/* embedding.cu (deterministic: the cpu reference's bits) */
ffnn_status ffnn_cuda_embedding_forward(void *ctx, const float *x, const float *W, float *a,
                                        size_t batch, const ffnn_embedding_spec *spec);
ffnn_status ffnn_cuda_embedding_backward(void *ctx, const float *x, const float *dz, float *dW,
                                         size_t batch, const ffnn_embedding_spec *spec);
/* local1d.cu (--strategy naive: the global variant, tiled: the shared one) */
ffnn_status ffnn_cuda_local1d_forward(void *ctx, const float *x, const float *W,
                                      const float *b, float *z, size_t batch, size_t N,
                                      size_t R, ffnn_local1d_padding padding,
                                      ffnn_activation act);
ffnn_status ffnn_cuda_local1d_backward(void *ctx, const float *x, const float *W,
                                       const float *dz, float *dx, float *dW, float *db,
                                       size_t batch, size_t N, size_t R,
                                       ffnn_local1d_padding padding);

/* backend.cu: backend.h side_begin, side_end (also queued inside an op: cublas.cu's
 * weight gradient beside the layer below's backward). */
ffnn_status ffnn_cuda_side_begin(void *ctx);
ffnn_status ffnn_cuda_side_end(void *ctx);

/* fused.cu: the optional fused ops (backend.h) */
ffnn_status ffnn_cuda_dense_act_forward(void *ctx, const float *x, const float *W,
                                        const float *b, float *a, size_t batch, size_t in,
                                        size_t out, ffnn_activation act);
ffnn_status ffnn_cuda_dense_backward_fused(void *ctx, const float *x, float *W, float *b,
                                           const float *dz, float *dx, float *dW, float *db,
                                           float *dx_db, size_t batch, size_t in, size_t out,
                                           ffnn_activation x_act,
                                           const ffnn_optimizer_step *sgd, const float *xt,
                                           int dw_side);
/* models.cu and loss.cu: backend.h ffnn_ops_models */
ffnn_status ffnn_cuda_models_dense_act_forward(void *ctx, const float *x, size_t x_stride,
                                               const float *W, const float *b, size_t p_stride,
                                               float *a, size_t batch, size_t in, size_t out,
                                               ffnn_activation act, size_t count);
ffnn_status ffnn_cuda_models_dense_backward_sgd(void *ctx, const float *x, size_t x_stride,
                                                float *W, float *b, float *dW, size_t p_stride,
                                                const float *dz, float *dx,
                                                ffnn_activation x_act, const float *lr,
                                                size_t batch, size_t in, size_t out,
                                                size_t count);
ffnn_status ffnn_cuda_loss_models(void *ctx, ffnn_loss loss, const float *out,
                                  const int32_t *y, size_t y_stride, size_t batch,
                                  size_t width, size_t count, float *dout, float *row_loss,
                                  uint8_t *row_correct);
/* fused.cu: backend.h dense_backward_wants_xt (cuBLASLt: tf32 where
 * ffnn_lt_xt_from_gather says so, tf32x3 always). */
int ffnn_cuda_dense_backward_wants_xt(void *ctx, size_t batch, size_t in, size_t out);
/* cublas.cu: backend.h prepare_xt (x^T; in tf32x3 its split x^T). */
ffnn_status ffnn_cuda_prepare_xt(void *ctx, const float *x, size_t batch, size_t in, float *xt);

/* cublas.cu: C [M,N] = op(A) op(B) (+ bias[N] per row) through cuBLAS with
 * ctx->precision; op(A) = A^T when trans_a (A stored [K,M]) else A [M,K]; op(B)
 * = B^T when trans_b (B stored [N,K]) else B [K,N]; all row-major. */
ffnn_status ffnn_cuda_matmul_cublas(ffnn_cuda_ctx *ctx, const float *A, const float *B,
                                    const float *bias, float *C, int M, int N, int K,
                                    int trans_a, int trans_b);
/* cublas.cu: the fused ops (backend.h dense_act_forward, dense_backward_fused)
 * on cuBLASLt with its epilogues, for ctx->matmul == FFNN_MATMUL_LIBRARY_LT;
 * fused.cu checks the arguments and calls these. */
ffnn_status ffnn_cuda_dense_act_forward_lt(ffnn_cuda_ctx *ctx, const float *x, const float *W,
                                           const float *b, float *a, size_t batch, size_t in,
                                           size_t out, ffnn_activation act);
ffnn_status ffnn_cuda_dense_backward_lt(ffnn_cuda_ctx *ctx, const float *x, float *W, float *b,
                                        const float *dz, float *dx, float *dW, float *db,
                                        float *dx_db, size_t batch, size_t in, size_t out,
                                        ffnn_activation x_act, const ffnn_optimizer_step *sgd,
                                        const float *xt, int dw_side);
/* dense.cu: db [out] = sum_b dz [batch, out] (dense_backward's bias gradient). */
ffnn_status ffnn_cuda_dense_bias_grad(ffnn_cuda_ctx *ctx, const float *dz, float *db, size_t batch,
                                size_t out);
/* cublas.cu: the mixed-precision ops (backend.h dense_act_forward_bf16,
 * dense_backward_bf16), on cuBLASLt. */
ffnn_status ffnn_cuda_dense_act_forward_bf16(void *ctx, const uint16_t *x16, const uint16_t *W16,
                                             const float *b, const uint16_t *b16, float *a,
                                             uint16_t *a16, size_t batch, size_t in, size_t out,
                                             ffnn_activation act);
ffnn_status ffnn_cuda_dense_backward_bf16(void *ctx, const uint16_t *x16, const uint16_t *W16,
                                          const uint16_t *dz16, size_t dz_ld, uint16_t *dx16,
                                          float *dW, float *db, float *dx_db, size_t batch,
                                          size_t in, size_t out, ffnn_activation x_act,
                                          int dw_side);
/* dense.cu: dx = dx * f'(x) in place (act: identity, relu, sigmoid, tanh) and db =
 * sum_b dx, one pass over x, dx [batch, cols]; the bf16 variant sums the rounded
 * dx16 in fp32. Deterministic (a fixed order, not a one-pass sum's bits). */
ffnn_status ffnn_cuda_dense_act_bias_grad(ffnn_cuda_ctx *ctx, ffnn_activation act, const float *x,
                                    float *dx, float *db, size_t batch, size_t cols);
ffnn_status ffnn_cuda_dense_act_bias_grad_bf16(ffnn_cuda_ctx *ctx, ffnn_activation act,
                                         const uint16_t *x16, uint16_t *dx16, float *db,
                                         size_t batch, size_t cols);
/* dense.cu: db [out] (fp32) = sum_b dz16 [batch, out] (bf16, rows ld apart). */
ffnn_status ffnn_cuda_dense_bias_grad_bf16(ffnn_cuda_ctx *ctx, const uint16_t *dz16, size_t ld,
                                     float *db, size_t batch, size_t out);
/* head.cu: backend.h softmax_ce_head (the output layer and softmax_ce, fused). */
ffnn_status ffnn_cuda_softmax_ce_head(void *ctx, int bf16, const void *h, const void *W,
                                      const float *b, const int32_t *y, size_t batch, size_t in,
                                      size_t C, ffnn_activation act, float *dW, float *db,
                                      void *dh, float *dh_db, float *row_loss,
                                      uint8_t *row_correct, float *scratch);
ffnn_status ffnn_cuda_softmax_ce_head_sums(void *ctx, size_t batch, size_t in, size_t C,
                                           float *dW, float *db, float *dh_db,
                                           const float *scratch, const ffnn_head_sgd *sgd);
/* Destroy ctx's cuBLAS handle, if it made one (called by destroy). */
void ffnn_cuda_cublas_release(ffnn_cuda_ctx *ctx);

/* persistent.cu */
ffnn_status ffnn_cuda_train_persistent(void *ctx, const struct ffnn_persistent_job *job);
int ffnn_cuda_persistent_supported(void *ctx, const struct ffnn_persistent_job *job);

/* loss.cu */
ffnn_status ffnn_cuda_loss(void *ctx, ffnn_loss loss, const float *out, const int32_t *y,
                           const float *targets, size_t batch, size_t width, float *dout,
                           float *row_loss, uint8_t *row_correct);

#ifdef __cplusplus
}
#endif

#endif /* FFNN_CUDA_COMMON_CUH */
