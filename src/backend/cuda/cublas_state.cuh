/* cublas_state.cuh - what the files of the cuBLAS / cuBLASLt strategies share
 * (cublas.cu: the context's handles, workspace and scratch and the plain cuBLAS
 * matmul; cublas_x3.cu: the tf32x3 split; cublas_lt.cu: the cuBLASLt fused ops and
 * the bf16 pipeline): the per-context state, the call check, one operand's
 * description and the helpers each defines for the others. File comment and error
 * model: cublas.cu. */
#ifndef FFNN_CUDA_CUBLAS_STATE_CUH
#define FFNN_CUDA_CUBLAS_STATE_CUH

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

/* Run a cuBLAS call; on failure record it (ffnn_cublas_fail_call) and return
 * FFNN_ERR_CUDA from the enclosing function. name: the call's name, a string. */
#define FFNN_CUBLAS_CHECK(ctx, name, call)                                          \
    do {                                                                            \
        cublasStatus_t ffnn_cublas_st_ = (call);                                    \
        if (ffnn_cublas_st_ != CUBLAS_STATUS_SUCCESS)                               \
            return ffnn_cublas_fail_call((ctx), ffnn_cublas_st_, __FILE__, __LINE__, name); \
    } while (0)

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

/* Record a failed cuBLAS call (cublas.cu). Returns FFNN_ERR_CUDA. */
ffnn_status ffnn_cublas_fail_call(ffnn_cuda_ctx *ctx, cublasStatus_t status, const char *file,
                                  int line, const char *what);
/* ctx's state, made on first use (cublas.cu) */
ffnn_status ffnn_cublas_get_state(ffnn_cuda_ctx *ctx, cublas_state **out);
/* grow s->scratch to at least `bytes` (cublas.cu) */
ffnn_status ffnn_cublas_ensure_scratch(ffnn_cuda_ctx *ctx, cublas_state *s, size_t bytes);
/* the workspace of the stream ctx queues on (cublas.cu) */
ffnn_status ffnn_cublas_lt_workspace(ffnn_cuda_ctx *ctx, cublas_state *s, void **ws);
/* bf16 copies of A [n_a] and B [n_b] into the scratch (cublas.cu) */
ffnn_status ffnn_cublas_to_bf16(ffnn_cuda_ctx *ctx, cublas_state *s, const float *A, size_t n_a,
                                const float *B, size_t n_b, __nv_bfloat16 **a16,
                                __nv_bfloat16 **b16);
/* x^T [in, batch] of x [batch, in] into the scratch (cublas.cu) */
ffnn_status ffnn_cublas_transposed_input(ffnn_cuda_ctx *ctx, cublas_state *s, const float *x,
                                         size_t batch, size_t in, const float **xt);
/* tf32x3: a and b split into the scratch, described as their K' = 3K forms
 * (cublas_x3.cu) */
ffnn_status ffnn_cublas_tf32x3_split(ffnn_cuda_ctx *ctx, cublas_state *s, lt_operand *a,
                                     lt_operand *b, int a_split);

#endif
