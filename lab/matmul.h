/*
 * matmul.h - the matmul lab (matmul.cu, `ffnn bench kernels`): the three matmuls of a
 * dense layer
 *
 *   forward      z  = x W^T   M = batch, N = out, K = in
 *   weight_grad  dW = dz^T x  M = out,   N = in,  K = batch
 *   input_grad   dx = dz W    M = batch, N = in,  K = out
 *
 * in six variants: naive and tiled (the cuda backend's dense kernels), transposed (one
 * thread per output with operands made coalesced, transpose included), regblock (the
 * backend's register-blocked SGEMM), fused (regblock with the layer's epilogue:
 * forward relu(x W^T + b), weight_grad dW + db + SGD on Wp/bp, input_grad
 * (dz W) * relu'(x)), cublas (cublasSgemm, FP32 default math); and on tensor cores
 * (plain matmuls): wmma_tf32 (gemm.cu's first tf32 kernel), mma_tf32_* and
 * mma_bf16_* (gemm_mma.cu, mma.sync + cp.async, at each of its configurations:
 * 128, 64, 128w4, 128w4s4, 64w4, 256 = FFNN_GEMM_MMA_*),
 * cublas_tf32 (cublasGemmEx, COMPUTE_32F_FAST_TF32) and cublas_bf16 (the cublas
 * strategy's path: fp32 operands rounded to bf16 copies by a kernel, then a bf16
 * GEMM; the conversion is inside its time, as our kernels' is). The names are inline
 * (every build); the rest needs CUDA (FFNN_HAVE_CUDA).
 */
#ifndef FFNN_LAB_MATMUL_H
#define FFNN_LAB_MATMUL_H

#include <stddef.h>

#include "ffnn.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { FFNN_MM_NAIVE = 0, FFNN_MM_TILED = 1, FFNN_MM_TRANSPOSED = 2, FFNN_MM_REGBLOCK = 3,
       FFNN_MM_FUSED = 4, FFNN_MM_CUBLAS = 5,
       /* tensor cores (checked within 2^-9 S for tf32, 2^-7 S for bf16) */
       FFNN_MM_WMMA_TF32 = 6, FFNN_MM_MMA_TF32_128 = 7, FFNN_MM_MMA_TF32_64 = 8,
       FFNN_MM_MMA_BF16_128 = 9, FFNN_MM_MMA_BF16_64 = 10, FFNN_MM_CUBLAS_TF32 = 11,
       FFNN_MM_CUBLAS_BF16 = 12, FFNN_MM_MMA_TF32_128W4 = 13, FFNN_MM_MMA_TF32_128W4S4 = 14,
       FFNN_MM_MMA_TF32_64W4 = 15, FFNN_MM_MMA_BF16_128W4 = 16, FFNN_MM_MMA_BF16_128W4S4 = 17,
       FFNN_MM_MMA_BF16_64W4 = 18, FFNN_MM_MMA_TF32_256 = 19, FFNN_MM_MMA_BF16_256 = 20,
       FFNN_MM_MMA_TF32_AUTO = 21, FFNN_MM_MMA_BF16_AUTO = 22, FFNN_MM_VARIANTS = 23 };
enum { FFNN_MM_FORWARD = 0, FFNN_MM_DW = 1, FFNN_MM_DX = 2, FFNN_MM_OPS = 3 };

static inline const char *ffnn_matmul_lab_variant_name(int variant)
{
    static const char *const names[FFNN_MM_VARIANTS] = {
        "naive",      "tiled",        "transposed",  "regblock",    "fused",
        "cublas",     "wmma_tf32",    "mma_tf32_128", "mma_tf32_64", "mma_bf16_128",
        "mma_bf16_64", "cublas_tf32", "cublas_bf16", "mma_tf32_128w4", "mma_tf32_128w4s4",
        "mma_tf32_64w4", "mma_bf16_128w4", "mma_bf16_128w4s4", "mma_bf16_64w4",
        "mma_tf32_256", "mma_bf16_256", "mma_tf32_auto", "mma_bf16_auto"};
    return variant >= 0 && variant < FFNN_MM_VARIANTS ? names[variant] : "?";
}

static inline const char *ffnn_matmul_lab_op_name(int op)
{
    static const char *const names[FFNN_MM_OPS] = {"forward", "weight_grad", "input_grad"};
    return op >= 0 && op < FFNN_MM_OPS ? names[op] : "?";
}

/* The arithmetic of a variant: 0 fp32, 1 tf32, 2 bf16 (its tolerance). */
static inline int ffnn_matmul_lab_variant_precision(int variant)
{
    switch (variant) {
    case FFNN_MM_WMMA_TF32:
    case FFNN_MM_MMA_TF32_128:
    case FFNN_MM_MMA_TF32_64:
    case FFNN_MM_MMA_TF32_128W4:
    case FFNN_MM_MMA_TF32_128W4S4:
    case FFNN_MM_MMA_TF32_64W4:
    case FFNN_MM_MMA_TF32_256:
    case FFNN_MM_MMA_TF32_AUTO:
    case FFNN_MM_CUBLAS_TF32: return 1;
    case FFNN_MM_MMA_BF16_128:
    case FFNN_MM_MMA_BF16_64:
    case FFNN_MM_MMA_BF16_128W4:
    case FFNN_MM_MMA_BF16_128W4S4:
    case FFNN_MM_MMA_BF16_64W4:
    case FFNN_MM_MMA_BF16_256:
    case FFNN_MM_MMA_BF16_AUTO:
    case FFNN_MM_CUBLAS_BF16: return 2;
    default: return 0;
    }
}

/* One call's operands, all device pointers. */
typedef struct ffnn_matmul_lab_args {
    int op;                  /* FFNN_MM_FORWARD / _DW / _DX                          */
    size_t batch, in, out;   /* the layer                                            */
    const float *x;          /* [batch, in]                                          */
    const float *W;          /* [out, in]                                            */
    const float *b;          /* [out] (fused forward)                                */
    const float *dz;         /* [batch, out]                                         */
    float *C;                /* the result: z [batch,out] / dW [out,in] / dx [batch,in] */
    float *db;               /* [out] (fused weight_grad)                            */
    float *Wp, *bp;          /* [out, in], [out]: updated by fused weight_grad's SGD */
    float lr;                /* its learning rate                                    */
    float *scratch;          /* [out * in] (transposed forward)                      */
    float *dW_scratch;       /* [out, in] (naive / tiled input_grad)                 */
} ffnn_matmul_lab_args;

/* A lab: a cuda backend context (one stream) and a cuBLAS handle on it. */
ffnn_status ffnn_matmul_lab_create(void **lab);
void ffnn_matmul_lab_destroy(void *lab);
/* The lab's stream (cudaStream_t as void *): time its calls there. */
void *ffnn_matmul_lab_stream(void *lab);
/* Queue one variant of one op. *with_dw (may be NULL) = 1 when the launch also
 * computed dW (naive / tiled input_grad: the backend runs dx only with dW). */
ffnn_status ffnn_matmul_lab_run(void *lab, int variant, const ffnn_matmul_lab_args *a,
                                int *with_dw);
/* The regblock tile configuration and K-splits chosen for op on this layer
 * ("64x64x16 split 5" ...; backend/gemm_plan.h), in a buffer of the lab's. */
const char *ffnn_matmul_lab_config(void *lab, int op, size_t batch, size_t in, size_t out);
/* From now on every matmul of gemm.cu / gemm_mma.cu cuts K into this many chunks
 * (0: the plan decides; the kernel lab's --splits). */
void ffnn_matmul_lab_set_splits(void *lab, int splits);

#ifdef __cplusplus
}
#endif
#endif
