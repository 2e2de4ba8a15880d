/*
 * matmul.cu - the matmul lab behind `ffnn bench kernels` (matmul.h): the three
 * matmuls of a dense layer,
 *
 *   forward  z  = x W^T    M = batch, N = out, K = in     x [batch,in], W [out,in]
 *   weight   dW = dz^T x   M = out,   N = in,  K = batch  dz [batch,out]
 *   input    dx = dz W     M = batch, N = in,  K = out
 *
 * each in the variants below, queued on the lab's one stream:
 *   naive       dense.cu's one-thread-per-output kernel (through ffnn_cuda_dense_*
 *               on a context switched to FFNN_MATMUL_NAIVE)
 *   tiled       dense.cu's shared-memory tiled kernel (FFNN_MATMUL_TILED)
 *   transposed  one thread per output as naive, but every operand read along the
 *               warp's direction: an operand stored k-contiguous on the column side
 *               (W of the forward) is first transposed into scratch [in,out] by a
 *               32x32 shared-memory transpose (its time is included), then a 32x8
 *               block reads B[k, col..col+31] as one 128-byte line per k
 *   regblock    gemm.cu's register-blocked float4 SGEMM, no epilogue
 *   fused       gemm.cu with the layer's epilogue: forward relu(x W^T + b)
 *               (ffnn_cuda_dense_act_forward), weight dW + db + SGD on W and b
 *               (ffnn_cuda_dense_backward_fused with dx NULL), input
 *               (dz W) * relu'(x) (ffnn_cuda_gemm with the dact epilogue)
 *   cublas      cublasSgemm, default math mode (FP32, no TF32), the comparator
 *   wmma_tf32   gemm.cu's wmma kernel (FFNN_GEMM_TF32_128 / _64), plain
 *   mma_*       gemm_mma.cu (mma.sync + cp.async) in tf32 / bf16 at the 128 and 64
 *               block tiles, plain; mma_*_auto: at the plan's tile and K-splits
 *               (what training runs)
 *   cublas_tf32 / cublas_bf16   ffnn_cuda_matmul_cublas on the lab's context switched
 *               to that precision for the call (bf16: its rounding kernel included)
 *
 * dense.cu launches dx only together with dW (dense_backward), so naive / tiled
 * "input" runs dense_backward(dW + dx); the caller subtracts that variant's dW-only
 * time (*with_dw = 1 says so).
 */
#include <stdlib.h>

#include <cublas_v2.h>

#include "backend/cuda/gemm.cuh"
#include "harness.h"
#include "matmul.h"

typedef struct matmul_lab {
    ffnn_cuda_ctx *ctx;        /* a cuda backend context; its stream is the lab's */
    cublasHandle_t cublas;     /* on ctx->stream, CUBLAS_DEFAULT_MATH              */
    char config_name[64];      /* ffnn_matmul_lab_config's answer                  */
} matmul_lab;

extern "C" ffnn_status ffnn_matmul_lab_create(void **out)
{
    if (out == NULL) return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "matmul lab: out is NULL");
    *out = NULL;
    const ffnn_backend_ops *ops = ffnn_cuda_backend();
    if (ops == NULL) return ffnn_fail(FFNN_ERR_UNSUPPORTED, "matmul lab: no CUDA backend");
    matmul_lab *lab = (matmul_lab *)calloc(1, sizeof *lab);
    if (lab == NULL) return ffnn_fail(FFNN_ERR_NO_MEMORY, "matmul lab: out of memory");
    void *ctx = NULL;
    ffnn_status st = ffnn_lab_backend_create(ops, FFNN_MATMUL_TILED, 1, &ctx);
    if (st != FFNN_OK) {
        free(lab);
        return st;
    }
    lab->ctx = (ffnn_cuda_ctx *)ctx;
    cublasStatus_t cs = cublasCreate(&lab->cublas);
    if (cs == CUBLAS_STATUS_SUCCESS) cs = cublasSetStream(lab->cublas, lab->ctx->stream);
    if (cs == CUBLAS_STATUS_SUCCESS) cs = cublasSetMathMode(lab->cublas, CUBLAS_DEFAULT_MATH);
    if (cs != CUBLAS_STATUS_SUCCESS) {
        if (lab->cublas != NULL) cublasDestroy(lab->cublas);
        ops->destroy(ctx);
        free(lab);
        return ffnn_fail(FFNN_ERR_CUDA, "matmul lab: cuBLAS setup failed: %s",
                         cublasGetStatusString(cs));
    }
    *out = lab;
    return FFNN_OK;
}

extern "C" void ffnn_matmul_lab_destroy(void *vlab)
{
    matmul_lab *lab = (matmul_lab *)vlab;
    if (lab == NULL) return;
    if (lab->cublas != NULL) cublasDestroy(lab->cublas);
    if (lab->ctx != NULL) ffnn_cuda_backend()->destroy(lab->ctx);
    free(lab);
}

extern "C" void *ffnn_matmul_lab_stream(void *vlab)
{
    matmul_lab *lab = (matmul_lab *)vlab;
    return lab != NULL ? (void *)lab->ctx->stream : NULL;
}

/* ------------------------------------------------------------------ transposed */

#define TR_TILE 32

/* out[c, r] = in[r, c]: in [R, Cn], out [Cn, R]. Block 32x8, a 32x32 tile through
 * shared memory (one padding column), coalesced reads and writes. */
static __global__ void transpose_kernel(const float *__restrict__ in, float *__restrict__ out,
                                        int R, int Cn)
{
    __shared__ float t[TR_TILE][TR_TILE + 1];
    const int c0 = blockIdx.x * TR_TILE, r0 = blockIdx.y * TR_TILE;
    for (int j = threadIdx.y; j < TR_TILE; j += blockDim.y) {
        const int r = r0 + j, c = c0 + threadIdx.x;
        if (r < R && c < Cn) t[j][threadIdx.x] = in[(size_t)r * Cn + c];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < TR_TILE; j += blockDim.y) {
        const int c = c0 + j, r = r0 + threadIdx.x;
        if (c < Cn && r < R) out[(size_t)c * R + r] = t[threadIdx.x][j];
    }
}

/* C[row,col] = sum_k op(A)[row,k] B[k,col], B k-major [K,N] (coalesced along the
 * warp's 32 columns), A [M,K] or [K,M] when trans_a (one address per warp and k:
 * a broadcast). Block 32x8; y strides over rows. fmaf chain in k order. */
static __global__ void coalesced_kernel(const float *__restrict__ A, const float *__restrict__ B,
                                        float *__restrict__ C, int M, int N, int K, int trans_a)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= N) return;
    for (int row = blockIdx.y * blockDim.y + threadIdx.y; row < M;
         row += gridDim.y * blockDim.y) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            const float a = trans_a ? A[(size_t)k * M + row] : A[(size_t)row * K + k];
            acc = fmaf(a, B[(size_t)k * N + col], acc);
        }
        C[(size_t)row * N + col] = acc;
    }
}

static ffnn_status run_transposed(ffnn_cuda_ctx *ctx, const float *A, const float *B,
                                  float *C, int M, int N, int K, int trans_a, int trans_b,
                                  float *scratch)
{
    if (trans_b) { /* B stored [N,K]: make it [K,N] first */
        const dim3 block(TR_TILE, 8);
        const dim3 grid((unsigned)((K + TR_TILE - 1) / TR_TILE),
                        (unsigned)((N + TR_TILE - 1) / TR_TILE));
        if (grid.y > FFNN_CUDA_MAX_GRID_YZ)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "matmul lab: N=%d too large", N);
        transpose_kernel<<<grid, block, 0, ctx->stream>>>(B, scratch, N, K);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "transpose_kernel");
        B = scratch;
    }
    const dim3 block(32, 8);
    unsigned gy = (unsigned)((M + 7) / 8);
    if (gy > FFNN_CUDA_MAX_GRID_YZ) gy = FFNN_CUDA_MAX_GRID_YZ;
    const dim3 grid((unsigned)((N + 31) / 32), gy);
    coalesced_kernel<<<grid, block, 0, ctx->stream>>>(A, B, C, M, N, K, trans_a);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "coalesced_kernel");
    return FFNN_OK;
}

/* ------------------------------------------------------------------ cuBLAS */

/* Row-major C [M,N] = op(A) op(B) is column-major C^T = op(B)^T op(A)^T. */
static ffnn_status run_cublas(matmul_lab *lab, const float *A, const float *B, float *C, int M,
                              int N, int K, int trans_a, int trans_b)
{
    const float one = 1.0f, zero = 0.0f;
    const cublasOperation_t ob = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t oa = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int ldb = trans_b ? K : N, lda = trans_a ? M : K;
    cublasStatus_t cs =
        cublasSgemm(lab->cublas, ob, oa, N, M, K, &one, B, ldb, A, lda, &zero, C, N);
    if (cs != CUBLAS_STATUS_SUCCESS)
        return ffnn_fail(FFNN_ERR_CUDA, "matmul lab: cublasSgemm failed: %s",
                         cublasGetStatusString(cs));
    return FFNN_OK;
}

/* gemm_mma.cu at one configuration, plain matmul (bf16: 1, else tf32). */
static ffnn_status run_mma(ffnn_cuda_ctx *ctx, const float *A, const float *B, float *C, int M,
                           int N, int K, int ta, int tb, int config, int bf16)
{
    return ffnn_cuda_gemm_mma(ctx, A, B, C, M, N, K, ta, tb, NULL, NULL, config, bf16);
}

/* ------------------------------------------------------------------ dispatch */

extern "C" ffnn_status ffnn_matmul_lab_run(void *vlab, int variant,
                                           const ffnn_matmul_lab_args *a, int *with_dw)
{
    matmul_lab *lab = (matmul_lab *)vlab;
    if (lab == NULL || a == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "matmul lab: NULL lab or args");
    if (with_dw != NULL) *with_dw = 0;
    ffnn_cuda_ctx *ctx = lab->ctx;
    const size_t B = a->batch, in = a->in, out = a->out;
    /* the op as C[M,N] = op(A) op(B) */
    const float *A = NULL, *Bm = NULL;
    int M = 0, N = 0, K = 0, ta = 0, tb = 0;
    switch (a->op) {
    case FFNN_MM_FORWARD: A = a->x, Bm = a->W, M = (int)B, N = (int)out, K = (int)in, tb = 1; break;
    case FFNN_MM_DW: A = a->dz, Bm = a->x, M = (int)out, N = (int)in, K = (int)B, ta = 1; break;
    case FFNN_MM_DX: A = a->dz, Bm = a->W, M = (int)B, N = (int)in, K = (int)out; break;
    default: return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "matmul lab: unknown op %d", a->op);
    }

    switch (variant) {
    case FFNN_MM_NAIVE:
    case FFNN_MM_TILED:
        ctx->matmul = variant == FFNN_MM_NAIVE ? FFNN_MATMUL_NAIVE : FFNN_MATMUL_TILED;
        if (a->op == FFNN_MM_FORWARD)
            return ffnn_cuda_dense_forward(ctx, a->x, a->W, NULL, a->C, B, in, out);
        if (a->op == FFNN_MM_DW)
            return ffnn_cuda_dense_backward(ctx, a->x, a->W, a->dz, NULL, a->C, NULL, B, in,
                                            out);
        if (with_dw != NULL) *with_dw = 1;
        return ffnn_cuda_dense_backward(ctx, a->x, a->W, a->dz, a->C, a->dW_scratch, NULL, B,
                                        in, out);
    case FFNN_MM_TRANSPOSED:
        return run_transposed(ctx, A, Bm, a->C, M, N, K, ta, tb, a->scratch);
    case FFNN_MM_REGBLOCK:
        return ffnn_cuda_gemm(ctx, A, Bm, a->C, M, N, K, ta, tb, NULL, FFNN_GEMM_AUTO);
    case FFNN_MM_FUSED:
        if (a->op == FFNN_MM_FORWARD)
            return ffnn_cuda_dense_act_forward(ctx, a->x, a->W, a->b, a->C, B, in, out,
                                               FFNN_ACT_RELU);
        if (a->op == FFNN_MM_DW) {
            ffnn_optimizer_step s;
            memset(&s, 0, sizeof s);
            s.kind = FFNN_OPT_SGD;
            s.lr = a->lr;
            return ffnn_cuda_dense_backward_fused(ctx, a->x, a->Wp, a->bp, a->dz, NULL, a->C,
                                                  a->db, NULL, B, in, out, FFNN_ACT_IDENTITY, &s,
                                                  NULL, 0);
        } else {
            ffnn_gemm_epilogue ep;
            memset(&ep, 0, sizeof ep);
            ep.dact_x = a->x;
            ep.dact = FFNN_ACT_RELU;
            return ffnn_cuda_gemm(ctx, A, Bm, a->C, M, N, K, ta, tb, &ep, FFNN_GEMM_AUTO);
        }
    case FFNN_MM_CUBLAS:
        return run_cublas(lab, A, Bm, a->C, M, N, K, ta, tb);
    case FFNN_MM_WMMA_TF32: { /* the tile gemm.cu picked for tf32 before gemm_mma.cu */
        const int big =
            ffnn_cuda_gemm_plan(ctx, M, N, K, FFNN_GEMM_AUTO, 1).config != FFNN_GEMM_MMA_64;
        return ffnn_cuda_gemm(ctx, A, Bm, a->C, M, N, K, ta, tb, NULL,
                              big ? FFNN_GEMM_TF32_128 : FFNN_GEMM_TF32_64);
    }
    case FFNN_MM_MMA_TF32_128: return run_mma(ctx, A, Bm, a->C, M, N, K, ta, tb, FFNN_GEMM_MMA_128, 0);
    case FFNN_MM_MMA_TF32_64: return run_mma(ctx, A, Bm, a->C, M, N, K, ta, tb, FFNN_GEMM_MMA_64, 0);
    case FFNN_MM_MMA_TF32_128W4:
        return run_mma(ctx, A, Bm, a->C, M, N, K, ta, tb, FFNN_GEMM_MMA_128W4, 0);
    case FFNN_MM_MMA_TF32_128W4S4:
        return run_mma(ctx, A, Bm, a->C, M, N, K, ta, tb, FFNN_GEMM_MMA_128W4S4, 0);
    case FFNN_MM_MMA_TF32_64W4:
        return run_mma(ctx, A, Bm, a->C, M, N, K, ta, tb, FFNN_GEMM_MMA_64W4, 0);
    case FFNN_MM_MMA_BF16_128: return run_mma(ctx, A, Bm, a->C, M, N, K, ta, tb, FFNN_GEMM_MMA_128, 1);
    case FFNN_MM_MMA_BF16_64: return run_mma(ctx, A, Bm, a->C, M, N, K, ta, tb, FFNN_GEMM_MMA_64, 1);
    case FFNN_MM_MMA_BF16_128W4:
        return run_mma(ctx, A, Bm, a->C, M, N, K, ta, tb, FFNN_GEMM_MMA_128W4, 1);
    case FFNN_MM_MMA_BF16_128W4S4:
        return run_mma(ctx, A, Bm, a->C, M, N, K, ta, tb, FFNN_GEMM_MMA_128W4S4, 1);
    case FFNN_MM_MMA_BF16_64W4:
        return run_mma(ctx, A, Bm, a->C, M, N, K, ta, tb, FFNN_GEMM_MMA_64W4, 1);
    case FFNN_MM_MMA_TF32_256: return run_mma(ctx, A, Bm, a->C, M, N, K, ta, tb, FFNN_GEMM_MMA_256, 0);
    case FFNN_MM_MMA_TF32_AUTO: return run_mma(ctx, A, Bm, a->C, M, N, K, ta, tb, FFNN_GEMM_AUTO, 0);
    case FFNN_MM_MMA_BF16_AUTO: return run_mma(ctx, A, Bm, a->C, M, N, K, ta, tb, FFNN_GEMM_AUTO, 1);
    case FFNN_MM_MMA_BF16_256: return run_mma(ctx, A, Bm, a->C, M, N, K, ta, tb, FFNN_GEMM_MMA_256, 1);
    case FFNN_MM_CUBLAS_TF32:
    case FFNN_MM_CUBLAS_BF16: { /* the backend's library matmul in that precision */
        ctx->precision = variant == FFNN_MM_CUBLAS_TF32 ? FFNN_PRECISION_TF32
                                                        : FFNN_PRECISION_BF16;
        const ffnn_status st = ffnn_cuda_matmul_cublas(ctx, A, Bm, NULL, a->C, M, N, K, ta, tb);
        ctx->precision = FFNN_PRECISION_FP32;
        return st;
    }
    default:
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "matmul lab: unknown variant %d", variant);
    }
}

extern "C" const char *ffnn_matmul_lab_config(void *vlab, int op, size_t batch, size_t in,
                                              size_t out)
{
    matmul_lab *lab = (matmul_lab *)vlab;
    if (lab == NULL) return "?";
    const int M = op == FFNN_MM_DW ? (int)out : (int)batch;
    const int N = op == FFNN_MM_FORWARD ? (int)out : (int)in;
    const int K = op == FFNN_MM_FORWARD ? (int)in : op == FFNN_MM_DW ? (int)batch : (int)out;
    const ffnn_gemm_plan p = ffnn_cuda_gemm_plan(lab->ctx, M, N, K, FFNN_GEMM_AUTO, 0);
    if (p.splits > 1)
        snprintf(lab->config_name, sizeof lab->config_name, "%s split %d x %d",
                 ffnn_cuda_gemm_config_name(p.config), p.splits, p.k_chunk);
    else
        snprintf(lab->config_name, sizeof lab->config_name, "%s",
                 ffnn_cuda_gemm_config_name(p.config));
    return lab->config_name;
}

extern "C" void ffnn_matmul_lab_set_splits(void *vlab, int splits)
{
    matmul_lab *lab = (matmul_lab *)vlab;
    if (lab != NULL) lab->ctx->gemm_splits = splits < 0 ? 0 : splits;
}
