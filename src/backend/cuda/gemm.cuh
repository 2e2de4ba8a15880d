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
 * Every output is one fmaf chain over k = 0..K-1 in one thread (no split-K, no
 * atomics): results do not depend on the tile configuration chosen and reruns give
 * the same bits.
 *
 * Included by .cu files only; C-like (no classes).
 */
#ifndef FFNN_CUDA_GEMM_CUH
#define FFNN_CUDA_GEMM_CUH

#include "common.cuh"
#include "device_math.cuh"

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

/* Tile configurations (block tile BM x BN, BK deep, TM x TN per thread, 256
 * threads). ffnn_cuda_gemm picks one by shape; FFNN_GEMM_AUTO lets it. */
enum {
    FFNN_GEMM_AUTO = 0,
    FFNN_GEMM_128 = 1, /* 128x128 x 8, 8x8 per thread  */
    FFNN_GEMM_64 = 2,  /* 64x64 x 16, 4x4 per thread   */
    FFNN_GEMM_32 = 3,  /* 32x32 x 32, 2x2 per thread   */
    FFNN_GEMM_16 = 4,  /* 16x16 x 64, 1x1 per thread   */
    FFNN_GEMM_TF32_128 = 5, /* wmma tensor cores, 128x128 x 16 (the first tf32  */
    FFNN_GEMM_TF32_64 = 6,  /* kernel, kept for the kernel lab), 64x64 x 16     */
    FFNN_GEMM_MMA_128 = 7,  /* gemm_mma.cu: mma.sync + cp.async, 128x128 x 32,  */
                            /* 8 warps of 64x32, 3 stages                       */
    FFNN_GEMM_MMA_64 = 8,   /* 64x64 x 32, 8 warps of 32x16, 4 stages (AUTO)    */
    FFNN_GEMM_MMA_128W4 = 9,   /* 128x128 x 32, 4 warps of 64x64, 3 stages (AUTO) */
    FFNN_GEMM_MMA_128W4S4 = 10, /* the same, 4 stages                           */
    FFNN_GEMM_MMA_64W4 = 11,   /* 64x64 x 32, 4 warps of 32x32, 4 stages        */
    FFNN_GEMM_MMA_256 = 12     /* 128x256 x 32, 8 warps of 64x64, 3 stages      */
};



#ifdef __cplusplus
extern "C" {
#endif

/* C[M,N] = op(A) op(B) with the epilogue ep (NULL: none), queued on ctx->stream.
 * A, B, C device pointers (any alignment: float4 loads/stores are used where the
 * contiguous dimension is a multiple of 4 and the pointer 16-byte aligned, scalar
 * ones elsewhere); 1 <= M, N, K <= FFNN_CUDA_MAX_DIM (checked: FFNN_ERR_INVALID_
 * ARGUMENT). config: FFNN_GEMM_AUTO (the largest block tile whose grid still
 * gives every SM a block, else the smallest; with ctx->precision TF32 or BF16 the
 * tensor-core kernel of gemm_mma.cu) or a fixed FFNN_GEMM_* (TF32_*: the wmma
 * kernel; MMA_*: gemm_mma.cu in tf32, or bf16 when ctx->precision is BF16).
 * Errors: FFNN_ERR_CUDA from the launch (the context is poisoned on sticky ones).
 * Method: shared-memory tiles, double-buffered (the next tile's global loads are
 * in flight while the current one is multiplied, one barrier per k step), each
 * thread an 8x8 / 4x4 / 2x2 / 1x1 register micro-tile read from shared memory
 * with float4 loads (the classic "SGEMM on CUDA cores" layout, e.g. CUTLASS's
 * SIMT gemm / NVIDIA's maxas write-ups). */
ffnn_status ffnn_cuda_gemm(ffnn_cuda_ctx *ctx, const float *A, const float *B, float *C, int M,
                           int N, int K, int trans_a, int trans_b,
                           const ffnn_gemm_epilogue *ep, int config);

/* The tensor-core matmul of gemm_mma.cu: the same contract as ffnn_cuda_gemm (any
 * shape, alignment, transposes, every epilogue), products on tensor cores with
 * fp32 accumulation: bf16 = 0: mma.sync m16n8k8 tf32 (inputs rounded to TF32),
 * bf16 = 1: m16n8k16 bf16 (inputs rounded to bfloat16, round to nearest even).
 * config: FFNN_GEMM_AUTO (ffnn_cuda_gemm_mma_pick), FFNN_GEMM_MMA_128 or _64.
 * Errors: FFNN_ERR_INVALID_ARGUMENT (dims, NULL, config), FFNN_ERR_CUDA.
 * Method: PTX ISA mma.sync / ldmatrix / cp.async; a CUTLASS-style multistage
 * shared-memory pipeline (gemm_mma.cu). ffnn_cuda_gemm calls it for AUTO when
 * ctx->precision is TF32 or BF16. */
ffnn_status ffnn_cuda_gemm_mma(ffnn_cuda_ctx *ctx, const float *A, const float *B, float *C,
                               int M, int N, int K, int trans_a, int trans_b,
                               const ffnn_gemm_epilogue *ep, int config, int bf16);
/* Raises the shared-memory limit of every gemm_mma kernel (above the 48 KiB
 * default); backend.cu calls it when a context is created. Errors: FFNN_ERR_CUDA. */
ffnn_status ffnn_cuda_gemm_mma_init(ffnn_cuda_ctx *ctx);
/* The configuration ffnn_cuda_gemm_mma picks for AUTO: FFNN_GEMM_MMA_128W4 when
 * its 128x128 tiles give every SM a block, else FFNN_GEMM_MMA_64 (measured:
 * gemm_mma.cu). */
int ffnn_cuda_gemm_mma_pick(const ffnn_cuda_ctx *ctx, int M, int N);

/* The configuration ffnn_cuda_gemm picks for FFNN_GEMM_AUTO, and a config's name
 * ("128x128x8" ...). */
int ffnn_cuda_gemm_pick(const ffnn_cuda_ctx *ctx, int M, int N);
const char *ffnn_cuda_gemm_config_name(int config);

#ifdef __cplusplus
}
#endif

#endif /* FFNN_CUDA_GEMM_CUH */
