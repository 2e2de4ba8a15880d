/*
 * gemm.cuh - the register-blocked, float4-vectorised FP32 SGEMM family of the
 * "fused" strategy (gemm.cu), with its epilogues. The epilogues' activation and SGD
 * formulas are device_math.cuh's (the one copy every kernel uses).
 *
 *   C[M,N] = op(A)[M,K] op(B)[K,N], all row-major,
 *     op(A) = A   (A stored [M,K])   or A^T (A stored [K,M]) when trans_a
 *     op(B) = B   (B stored [K,N])   or B^T (B stored [N,K]) when trans_b
 *
 * then, per output element, in this order (each step only when asked for):
 *   v = acc + bias[col]                      (bias [N])
 *   v = act(v)                               (relu / sigmoid / tanh)
 *   v = v * f'(X[row,col])                   (dact_x [M,N]: f' written through the
 *                                             activation's output, as
 *                                             activation_backward:
 *                                             ffnn_dev_act_backward_basic)
 *   C[row,col] = v
 *   P[row,col] = P[row,col] - lr * v         (sgd_param [M,N]: ffnn_dev_sgd,
 *                                             product rounded first)
 * and, for the blocks of column tile 0,
 *   rowsum[m] = sum_k op(A)[m,k]             (k ascending, one float add per k:
 *                                             the CPU reference's db order)
 *   Q[m] = Q[m] - lr * rowsum[m]             (rowsum_param [M], ffnn_dev_sgd)
 *
 * Every output is one fmaf chain over k = 0..K-1 in one thread, or, where the
 * plan splits K (backend/gemm_plan.h: small outputs with deep K), one chain per
 * chunk of K with the chunks added in ascending order by a second kernel
 * (gemm_split_reduce) that then runs the epilogue; row sums likewise. No atomics:
 * reruns give the same bits.
 *
 * Included by .cu files only; C-like (no classes).
 */
#ifndef FFNN_CUDA_GEMM_CUH
#define FFNN_CUDA_GEMM_CUH

#include "common.cuh"
#include "device_math.cuh"
#include "backend/gemm_plan.h"

/* A matmul over a model axis (ffnn_cuda_gemm_models): count matmuls of one shape,
 * blockIdx.z the model z; model z's A, B, C and epilogue tensors start z times
 * their stride (floats; 0: one tensor every model shares) past the pointers
 * given, and its learning rate is lr[z] (device [count]; NULL: the epilogue's lr).
 * Apart from the epilogue: the kernels take it as a parameter of their model-axis
 * instantiations only (template MODELS), so a single matmul's kernel is compiled
 * without any of it. */
typedef struct ffnn_gemm_models {
    int count;
    size_t a, b, c;                     /* strides of A, B, C                      */
    size_t bias, dact_x, sgd_param;     /* strides of the epilogue's [N] / [M,N]   */
    size_t rowsum, rowsum_param;        /* strides of the [M] row sums             */
    const float *lr;                    /* [count] or NULL                         */
    int no_c;                           /* 1: C is not stored where the epilogue
                                           runs (an SGD update's gradient nobody
                                           reads: its memory traffic saved)       */
} ffnn_gemm_models;

/* What runs after the matmul (see the top of this file). All pointers device
 * pointers or NULL; a zeroed struct (or NULL for the whole struct) is a plain
 * matmul. */
typedef struct ffnn_gemm_epilogue {
    const float *bias;      /* [N] added to every row, or NULL                     */
    ffnn_activation act;    /* applied after the bias (identity: none)             */
    const float *dact_x;    /* [M,N] X: multiply by f'(X) of dact, or NULL         */
    ffnn_activation dact;   /* the activation whose derivative dact_x gives        */
    float *sgd_param;       /* [M,N] P: P -= lr C after C is stored, or NULL       */
    float lr;               /* learning rate of both SGD updates                   */
    float *rowsum;          /* [M] row sums of op(A) over k, or NULL               */
    float *rowsum_param;    /* [M] Q: Q -= lr rowsum, or NULL                      */
} ffnn_gemm_epilogue;

/* Tile configurations FFNN_GEMM_* and the split-K plan: backend/gemm_plan.h. */



#ifdef __cplusplus
extern "C" {
#endif

/* C[M,N] = op(A) op(B) with the epilogue ep (NULL: none), queued on ctx->stream.
 * A, B, C device pointers (any alignment: float4 loads/stores are used where the
 * contiguous dimension is a multiple of 4 and the pointer 16-byte aligned, scalar
 * ones elsewhere); 1 <= M, N, K <= FFNN_CUDA_MAX_DIM (checked: FFNN_ERR_INVALID_
 * ARGUMENT). config: FFNN_GEMM_AUTO (tile and K-splits by ffnn_cuda_gemm_plan;
 * with ctx->precision TF32 or BF16 the tensor-core kernel of gemm_mma.cu) or a
 * fixed FFNN_GEMM_* (TF32_*: the wmma kernel; MMA_*: gemm_mma.cu in tf32, or bf16
 * when ctx->precision is BF16), unsplit unless ctx->gemm_splits says otherwise.
 * A split plan uses ctx->split_ws (made with the context).
 * Errors: FFNN_ERR_CUDA from the launch (the context is poisoned on sticky ones).
 * Method: shared-memory tiles, double-buffered (the next tile's global loads are
 * in flight while the current one is multiplied, one barrier per k step), each
 * thread an 8x8 / 4x4 / 2x2 / 1x1 register micro-tile read from shared memory
 * with float4 loads (the classic "SGEMM on CUDA cores" layout, e.g. CUTLASS's
 * SIMT gemm / NVIDIA's maxas write-ups). */
ffnn_status ffnn_cuda_gemm(ffnn_cuda_ctx *ctx, const float *A, const float *B, float *C, int M,
                           int N, int K, int trans_a, int trans_b,
                           const ffnn_gemm_epilogue *ep, int config);
/* The plan ffnn_cuda_gemm / ffnn_cuda_gemm_mma follow for this shape and config
 * (ctx->sm_count, ctx->gemm_splits: the lab's forced split count; tensor_cores as
 * gemm_plan.h). */
ffnn_gemm_plan ffnn_cuda_gemm_plan(const ffnn_cuda_ctx *ctx, int M, int N, int K, int config,
                                   int tensor_cores);

/* z->count matmuls of one shape at once (ffnn_gemm_models: per-model strides and
 * learning rates) with the epilogue ep (model 0's tensors), one launch of
 * gemm_kernel: config AUTO picks the tile for the whole launch (count x tiles
 * blocks), K is never split (the grid's
 * z is the model axis), so each model's outputs are those of ffnn_cuda_gemm with
 * an unsplit plan, bit for bit (every tile sums an output in the same order).
 * ctx->precision tf32 / bf16: gemm_mma.cu's kernel the same way (its tile chosen
 * likewise, K unsplit). 1 <= count <= 65535.
 * Errors: FFNN_ERR_INVALID_ARGUMENT (dims, NULL, count), FFNN_ERR_UNSUPPORTED,
 * FFNN_ERR_CUDA. Method: the batched GEMM of e.g. cublasSgemmStridedBatched, on
 * gemm_kernel (HFTA, Wang et al., MLSys 2022: fusing the models of a sweep). */
ffnn_status ffnn_cuda_gemm_models(ffnn_cuda_ctx *ctx, const float *A, const float *B, float *C,
                                  int M, int N, int K, int trans_a, int trans_b,
                                  const ffnn_gemm_epilogue *ep, const ffnn_gemm_models *z,
                                  int config);

/* The tile of a matmul over `count` models, from order[0..n) (largest first): the
 * first whose tiles pad the M x N output by at most half and give every SM two
 * blocks (count x tiles >= 2 SMs), else the one that pads it least. The tile of
 * a kernel does not change the order in which an output is summed (here and in
 * gemm_mma.cu), so the choice moves time, not values. */
int ffnn_cuda_gemm_models_config(const ffnn_cuda_ctx *ctx, int M, int N, int count,
                                 const int *order, int n);

/* The tensor-core matmul of gemm_mma.cu: the same contract as ffnn_cuda_gemm (any
 * shape, alignment, transposes, every epilogue), products on tensor cores with
 * fp32 accumulation: bf16 = 0: mma.sync m16n8k8 tf32 (inputs rounded to TF32),
 * bf16 = 1: m16n8k16 bf16 (inputs rounded to bfloat16, round to nearest even).
 * config: FFNN_GEMM_AUTO (ffnn_cuda_gemm_plan) or a fixed FFNN_GEMM_MMA_*.
 * Errors: FFNN_ERR_INVALID_ARGUMENT (dims, NULL, config), FFNN_ERR_CUDA.
 * Method: PTX ISA mma.sync / ldmatrix / cp.async; a CUTLASS-style multistage
 * shared-memory pipeline (gemm_mma.cu). ffnn_cuda_gemm calls it for AUTO when
 * ctx->precision is TF32 or BF16; z: NULL, or the model axis of
 * ffnn_cuda_gemm_models (which calls it with z for tf32 and bf16). */
ffnn_status ffnn_cuda_gemm_mma(ffnn_cuda_ctx *ctx, const float *A, const float *B, float *C,
                               int M, int N, int K, int trans_a, int trans_b,
                               const ffnn_gemm_epilogue *ep, const ffnn_gemm_models *z,
                               int config, int bf16);
/* Raises the shared-memory limit of every gemm_mma kernel (above the 48 KiB
 * default); backend.cu calls it when a context is created. Errors: FFNN_ERR_CUDA. */
ffnn_status ffnn_cuda_gemm_mma_init(ffnn_cuda_ctx *ctx);
/* A config's name ("128x128x8" ...). */
const char *ffnn_cuda_gemm_config_name(int config);

#ifdef __cplusplus
}
#endif

/* The second kernel of a split matmul: C = P[0] + P[1] + ... + P[splits-1] (ascending,
 * P = ctx->split_ws [splits, M, N]), then ep; row sums (ep->rowsum / rowsum_param)
 * from the partial row sums R = split_ws + splits M N, [splits, M], added the same
 * way. Queued on ctx->stream. Errors: FFNN_ERR_CUDA (launch). */
ffnn_status ffnn_cuda_gemm_split_reduce(ffnn_cuda_ctx *ctx, float *C, int M, int N, int splits,
                                        const ffnn_gemm_epilogue &ep);

#endif /* FFNN_CUDA_GEMM_CUH */
