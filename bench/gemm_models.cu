/*
 * gemm_models.cu - the matmuls of one training step of `ffnn sweep --strategy batched`
 * (src/train/sweep_batched.c step(), src/backend/cuda/models.cu), each one launch of
 * ffnn_cuda_gemm_models over the model axis, timed at ffnn's AUTO tile, at every tile
 * of the candidate list AUTO picks from (ffnn_cuda_gemm_models_config), and against
 * cuBLAS's strided-batched GEMM on the same M, N, K, transposes and strides.
 *
 * Per layer i (x_i: the input [batch, in], model z's at + z batch in; W_i [out, in],
 * b_i [out] in the model's parameter arena of P floats, model z's at + z P, P the
 * net's parameter count rounded up to 64 floats as the sweep lays it out, or to
 * --param-align N):
 *   fwd_i  a [batch,out] = act(x W^T + b)   M = batch, N = out, K = in   (N T)
 *   dx_i   dx [batch,in] = (dz W) * f'(x)   M = batch, N = in,  K = out  (N N), i > 0
 *   dW_i   dW [out,in] = dz^T x, W -= lr dW, b -= lr rowsum(dz^T)        (T N)
 *          M = out, N = in, K = batch; dW itself not stored (no_c = 1)
 * in the order step() issues them (forward 0..L-1, then per layer L-1..0 dx, dW),
 * with models.cu's epilogues and strides. The loss and the gather between them are
 * not matmuls and not timed.
 *
 * Each (models, batch, precision, matmul) is first checked: ffnn's plain matmul (the
 * same strides, no epilogue) at AUTO and at every tile timed, against cuBLAS's
 * (fp32: max |ffnn - cuBLAS| <= 1e-4 max |C_cuBLAS|; tf32 5e-3, bf16 1e-2: both sides
 * round the inputs, in their own order of sums), a FAIL line when off. Then timed:
 * CUDA events around one launch, a 30 us spin kernel queued ahead of each sample (the
 * launch is queued before the GPU reaches it), --warmup untimed launches, the median
 * of --reps samples. ffnn runs with the step's epilogue; cuBLAS runs the plain matmul
 * (alpha 1, beta 0, no epilogue, C stored; bf16: A and B converted to bfloat16
 * beforehand, untimed, fp32 accumulate and output) - it does the GEMM only, ffnn the
 * GEMM plus the epilogue's bias/activation/f'/SGD/row-sum traffic. TFLOP/s =
 * 2 M N K models / time. The same operands run back to back: where they fit in the
 * L2 cache they are read from there (in a sweep other kernels run between matmuls).
 *
 * After each (models, batch, precision): the step's total (the sum of its matmuls'
 * medians: ffnn at AUTO, ffnn at each matmul's best tile, cuBLAS), and the step's
 * matmuls timed back to back in one sample ("stepb2b": each finds in L2 what the
 * previous matmul left there, as in the sweep; ffnn at AUTO and cuBLAS).
 *
 * --lt adds cuBLASLt (cublasLtMatmul on strided batch layouts, its first heuristic
 * pick, the same plain matmul, checked against cuBLAS the same way).
 *
 * Build and run (needs nvcc and a GPU): make build/gemm_models, then
 *   build/gemm_models --arch 784-256relu-10 [--models 1,16,64,256,1024]
 *       [--batch 64,1024] [--precision fp32,tf32,bf16] [--markdown]
 *       [--lt] [--param-align N] [--reps 20] [--warmup 3]
 * (bench/README.md). Outside libffnn: it links the CUDA objects and calls the kernels
 * directly, as ffnn-bench's kernel lab does.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "../lab/harness.h"
#include "backend/backend.h"
#include "backend/cuda/gemm.cuh"
#include "ffnn.h"
extern "C" {
#include "core/model.h"
}

/* The candidate lists ffnn_cuda_gemm_models_config picks from: gemm.cu's
 * ffnn_cuda_gemm_models (fp32) and gemm_mma.cu's ffnn_cuda_gemm_mma (tf32 / bf16 over a
 * model axis). Keep them as those files have them. */
static const int fp32_order[] = {FFNN_GEMM_128, FFNN_GEMM_64, FFNN_GEMM_32, FFNN_GEMM_16};
static const int mma_order[] = {FFNN_GEMM_MMA_128W4, FFNN_GEMM_MMA_64, FFNN_GEMM_MMA_32};
#define MAX_TILES 8
#define MAX_LIST 32
#define MAX_LAYERS 64 /* this program's bound (the parser's is 1024) */
#define MAX_MM (3 * MAX_LAYERS)

/* ------------------------------------------------------------ options */

typedef struct options {
    const char *arch;
    int models[MAX_LIST], n_models;
    int batch[MAX_LIST], n_batch;
    ffnn_precision prec[4];
    int n_prec;
    int markdown, lt, reps, warmup;
    size_t param_align;
    float lr;
} options;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gemm_models [--arch ARCH] [--models LIST] [--batch LIST]\n"
            "                   [--precision LIST] [--markdown] [--lt]\n"
            "                   [--param-align N] [--reps N] [--warmup N] [--lr LR]\n"
            "  --arch ARCH        dense net, e.g. 784-256relu-10 (default); activations\n"
            "                     identity, relu, sigmoid, tanh (the fused epilogues')\n"
            "  --models LIST      models per launch, default 1,16,64,256,1024\n"
            "  --batch LIST       rows per model, default 64,1024\n"
            "  --precision LIST   fp32,tf32,bf16 (default all three)\n"
            "  --markdown         a markdown table instead of aligned text\n"
            "  --lt               also cuBLASLt (cublasLtMatmul, strided batch layouts, its\n"
            "                     first heuristic pick), plain matmul as cuBLAS\n"
            "  --param-align N    round the per-model parameter stride P up to a multiple\n"
            "                     of N floats (default 64: as the sweep lays it out)\n"
            "  --reps N           timed samples per matmul (median), default 20\n"
            "  --warmup N         untimed launches first, default 3\n"
            "  --lr LR            the SGD epilogue's learning rate, default 1e-6\n");
}

static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    while (*s) {
        char *end = NULL;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 65535 || n == max) return -1;
        out[n++] = (int)v;
        s = end;
        if (*s == ',') s++;
        else if (*s) return -1;
    }
    return n;
}

static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->arch = "784-256relu-10";
    const int dm[] = {1, 16, 64, 256, 1024}, db[] = {64, 1024};
    memcpy(o->models, dm, sizeof dm), o->n_models = 5;
    memcpy(o->batch, db, sizeof db), o->n_batch = 2;
    o->prec[0] = FFNN_PRECISION_FP32, o->prec[1] = FFNN_PRECISION_TF32;
    o->prec[2] = FFNN_PRECISION_BF16, o->n_prec = 3;
    o->reps = 20, o->warmup = 3, o->param_align = 64, o->lr = 1e-6f;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--markdown")) {
            o->markdown = 1;
        } else if (!strcmp(a, "--lt")) {
            o->lt = 1;
        } else if (v == NULL) {
            fprintf(stderr, "gemm_models: %s: unknown option or missing value\n", a);
            return -1;
        } else if (!strcmp(a, "--arch")) {
            o->arch = v, i++;
        } else if (!strcmp(a, "--models") || !strcmp(a, "--batch")) {
            int *l = a[2] == 'm' ? o->models : o->batch;
            int n = parse_list(v, l, MAX_LIST);
            if (n < 1) {
                fprintf(stderr, "gemm_models: %s %s: a list of integers 1..65535\n", a, v);
                return -1;
            }
            *(a[2] == 'm' ? &o->n_models : &o->n_batch) = n, i++;
        } else if (!strcmp(a, "--precision")) {
            o->n_prec = 0;
            char buf[64];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                ffnn_precision p;
                if (!strcmp(t, "fp32")) p = FFNN_PRECISION_FP32;
                else if (!strcmp(t, "tf32")) p = FFNN_PRECISION_TF32;
                else if (!strcmp(t, "bf16")) p = FFNN_PRECISION_BF16;
                else {
                    fprintf(stderr, "gemm_models: --precision %s: fp32, tf32 or bf16\n", t);
                    return -1;
                }
                if (o->n_prec < 4) o->prec[o->n_prec++] = p;
            }
            i++;
        } else if (!strcmp(a, "--param-align") || !strcmp(a, "--reps") ||
                   !strcmp(a, "--warmup")) {
            long n = strtol(v, NULL, 10);
            if (n < (a[2] == 'w' ? 0 : 1) || n > 100000) {
                fprintf(stderr, "gemm_models: %s %s: out of range\n", a, v);
                return -1;
            }
            if (a[2] == 'p') o->param_align = (size_t)n;
            else if (a[2] == 'r') o->reps = (int)n;
            else o->warmup = (int)n;
            i++;
        } else if (!strcmp(a, "--lr")) {
            o->lr = strtof(v, NULL), i++;
        } else {
            fprintf(stderr, "gemm_models: %s: unknown option\n", a);
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ device helpers */

#define CK(call)                                                                           \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "gemm_models: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,     \
                    cudaGetErrorString(e_));                                               \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)
#define CB(call)                                                                           \
    do {                                                                                   \
        cublasStatus_t s_ = (call);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
            fprintf(stderr, "gemm_models: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,     \
                    cublasGetStatusString(s_));                                            \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)
#define FK(call)                                                                           \
    do {                                                                                   \
        ffnn_status f_ = (call);                                                           \
        if (f_ != FFNN_OK) {                                                               \
            fprintf(stderr, "gemm_models: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,     \
                    ffnn_last_error());                                                    \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static __global__ void to_bf16_kernel(const float *__restrict__ x, __nv_bfloat16 *__restrict__ y,
                                      size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = __float2bfloat16_rn(x[i]);
}

/* out[0] = bits of max |got - want|, out[1] = bits of max |want|, out[2] = non-finite
 * values, over models z < count, elements j < mn of got/want + z stride. */
static __global__ void diff_kernel(const float *__restrict__ got, const float *__restrict__ want,
                                   size_t stride, size_t mn, size_t total, unsigned *out)
{
    float d = 0.0f, r = 0.0f;
    unsigned bad = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t idx = (i / mn) * stride + i % mn;
        const float g = got[idx], w = want[idx];
        if (!isfinite(g) || !isfinite(w)) {
            bad++;
            continue;
        }
        d = fmaxf(d, fabsf(g - w));
        r = fmaxf(r, fabsf(w));
    }
    for (int o = 16; o > 0; o >>= 1) {
        d = fmaxf(d, __shfl_xor_sync(0xffffffffu, d, o));
        r = fmaxf(r, __shfl_xor_sync(0xffffffffu, r, o));
        bad += __shfl_xor_sync(0xffffffffu, bad, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMax(&out[0], __float_as_uint(d)); /* non-negative floats order as ints */
        atomicMax(&out[1], __float_as_uint(r));
        atomicAdd(&out[2], bad);
    }
}

static float *dalloc(size_t floats)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, floats * sizeof(float) + 16);
    if (e != cudaSuccess) {
        fprintf(stderr, "gemm_models: cudaMalloc of %.2f GiB: %s\n",
                (double)floats * 4 / (1 << 30), cudaGetErrorString(e));
        return NULL;
    }
    return (float *)p;
}

/* ------------------------------------------------------------ the step's matmuls */

typedef struct matmul {
    char name[16];
    const float *A, *B;
    float *C;
    int M, N, K, ta, tb;
    ffnn_gemm_epilogue ep; /* the step's (models.cu's) */
    ffnn_gemm_models z;    /* its model axis */
    size_t a_span, b_span; /* floats of A / B over every model */
} matmul;

typedef struct bench {
    const options *o;
    ffnn_cuda_ctx *ctx;
    cublasHandle_t cublas;
    cublasLtHandle_t lt;
    void *lt_ws; /* cuBLASLt's workspace, LT_WS bytes */
    unsigned *diff; /* device [3] */
    __nv_bfloat16 *Abf, *Bbf;
    float *Cref;
} bench;

#define LT_WS ((size_t)32 << 20)

/* A cuBLASLt matmul of one (matmul, precision): descriptors and the heuristic's first
 * pick, made once before it is checked and timed. */
typedef struct lt_plan {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    int ok;
    char why[160]; /* when not ok */
} lt_plan;

/* One timed launch (ffnn_lab_time's callback). */
typedef struct job {
    bench *b;
    const matmul *m;
    int config; /* ffnn: FFNN_GEMM_*; -1: cuBLAS; -2: cuBLASLt (lt); the whole step,
                   back to back: -3 ffnn at AUTO, -4 cuBLAS (over mm[0..n_mm)) */
    int plain;  /* ffnn with no epilogue (the check) */
    ffnn_precision prec;
    const lt_plan *lt;
    const matmul *mm;
    int n_mm;
} job;

static ffnn_status run_ffnn(const job *j)
{
    const matmul *m = j->m;
    ffnn_gemm_epilogue ep;
    ffnn_gemm_models z;
    if (j->plain) {
        memset(&ep, 0, sizeof ep);
        memset(&z, 0, sizeof z);
        z.count = m->z.count;
        z.a = m->z.a, z.b = m->z.b, z.c = m->z.c;
    } else {
        ep = m->ep;
        z = m->z;
    }
    return ffnn_cuda_gemm_models(j->b->ctx, m->A, m->B, m->C, m->M, m->N, m->K, m->ta, m->tb,
                                 &ep, &z, j->config);
}

static ffnn_status run_cublas(const job *j)
{
    const matmul *m = j->m;
    const ffnn_gemm_models &z = m->z;
    /* row-major C [M,N] = op(A) op(B) is column-major C^T [N,M] = op(B)^T op(A)^T */
    const cublasOperation_t opb = m->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opa = m->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int ldb = m->tb ? m->K : m->N, lda = m->ta ? m->M : m->K;
    const float one = 1.0f, zero = 0.0f;
    const int bf = j->prec == FFNN_PRECISION_BF16;
    const void *A = bf ? (const void *)j->b->Abf : (const void *)m->A;
    const void *B = bf ? (const void *)j->b->Bbf : (const void *)m->B;
    const cudaDataType t = bf ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t ct =
        j->prec == FFNN_PRECISION_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    cublasStatus_t s = cublasGemmStridedBatchedEx(
        j->b->cublas, opb, opa, m->N, m->M, m->K, &one, B, t, ldb, (long long)z.b, A, t, lda,
        (long long)z.a, &zero, j->b->Cref, CUDA_R_32F, m->N, (long long)z.c, z.count, ct,
        CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
        return ffnn_fail(FFNN_ERR_CUDA, "cublasGemmStridedBatchedEx: %s",
                         cublasGetStatusString(s));
    return FFNN_OK;
}

/* The largest power of two <= 256 dividing the address of every model's operand
 * (p + z stride elements of `elem` bytes): cuBLASLt assumes 256 unless told. */
static uint32_t lt_alignment(const void *p, size_t stride, size_t elem)
{
    uint32_t al = 256;
    while (al > 1 && (((uintptr_t)p % al) != 0 || (stride * elem) % al != 0)) al /= 2;
    return al;
}

static void lt_plan_destroy(lt_plan *l)
{
    if (l->lc) cublasLtMatrixLayoutDestroy(l->lc);
    if (l->lb) cublasLtMatrixLayoutDestroy(l->lb);
    if (l->la) cublasLtMatrixLayoutDestroy(l->la);
    if (l->desc) cublasLtMatmulDescDestroy(l->desc);
    memset(l, 0, sizeof *l);
}

#define LT(call)                                                                           \
    do {                                                                                   \
        cublasStatus_t s_ = (call);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
            snprintf(l->why, sizeof l->why, "%s: %s", #call, cublasGetStatusString(s_));   \
            goto done;                                                                     \
        }                                                                                  \
    } while (0)

/* The plan of m as run_cublas has it (column-major C^T = op(B)^T op(A)^T), each
 * layout strided over the models; its output goes to m->C (ffnn's C: checked against
 * cuBLAS's Cref like ffnn's). */
static void lt_plan_make(bench *b, const matmul *m, ffnn_precision prec, lt_plan *l)
{
    memset(l, 0, sizeof *l);
    const ffnn_gemm_models &z = m->z;
    const int bf = prec == FFNN_PRECISION_BF16;
    const cudaDataType t = bf ? CUDA_R_16BF : CUDA_R_32F;
    const size_t elem = bf ? 2 : 4;
    const cublasComputeType_t ct =
        prec == FFNN_PRECISION_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const cublasOperation_t opb = m->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opa = m->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    /* the first operand: B (ffnn's), stored [K, N] col-major when tb, else [N, K] */
    const uint64_t b_rows = m->tb ? m->K : m->N, b_cols = m->tb ? m->N : m->K;
    const uint64_t a_rows = m->ta ? m->M : m->K, a_cols = m->ta ? m->K : m->M;
    const int32_t count = z.count;
    const int64_t sa = (int64_t)z.a, sb = (int64_t)z.b, sc = (int64_t)z.c;
    const void *pa = bf ? (const void *)b->Abf : (const void *)m->A;
    const void *pb = bf ? (const void *)b->Bbf : (const void *)m->B;
    const uint32_t al_a = lt_alignment(pb, z.b, elem), al_b = lt_alignment(pa, z.a, elem),
                   al_c = lt_alignment(m->C, z.c, 4);
    const uint64_t ws = LT_WS;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    LT(cublasLtMatmulDescCreate(&l->desc, ct, CUDA_R_32F));
    LT(cublasLtMatmulDescSetAttribute(l->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opb, sizeof opb));
    LT(cublasLtMatmulDescSetAttribute(l->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opa, sizeof opa));
    LT(cublasLtMatrixLayoutCreate(&l->la, t, b_rows, b_cols, (int64_t)b_rows));
    LT(cublasLtMatrixLayoutCreate(&l->lb, t, a_rows, a_cols, (int64_t)a_rows));
    LT(cublasLtMatrixLayoutCreate(&l->lc, CUDA_R_32F, m->N, m->M, m->N));
    LT(cublasLtMatrixLayoutSetAttribute(l->la, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                        sizeof count));
    LT(cublasLtMatrixLayoutSetAttribute(l->lb, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                        sizeof count));
    LT(cublasLtMatrixLayoutSetAttribute(l->lc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                        sizeof count));
    LT(cublasLtMatrixLayoutSetAttribute(l->la, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sb,
                                        sizeof sb));
    LT(cublasLtMatrixLayoutSetAttribute(l->lb, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sa,
                                        sizeof sa));
    LT(cublasLtMatrixLayoutSetAttribute(l->lc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sc,
                                        sizeof sc));
    LT(cublasLtMatmulPreferenceCreate(&pref));
    LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                            sizeof ws));
    LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                            &al_a, sizeof al_a));
    LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                            &al_b, sizeof al_b));
    LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                            &al_c, sizeof al_c));
    LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                            &al_c, sizeof al_c));
    LT(cublasLtMatmulAlgoGetHeuristic(b->lt, l->desc, l->la, l->lb, l->lc, l->lc, pref, 1,
                                      &heur, &found));
    if (found < 1) {
        snprintf(l->why, sizeof l->why, "cuBLASLt has no algorithm");
        goto done;
    }
    l->algo = heur.algo;
    l->ok = 1;
done:
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
}
#undef LT

static ffnn_status run_lt(const job *j)
{
    const matmul *m = j->m;
    const float one = 1.0f, zero = 0.0f;
    const int bf = j->prec == FFNN_PRECISION_BF16;
    const void *A = bf ? (const void *)j->b->Abf : (const void *)m->A;
    const void *B = bf ? (const void *)j->b->Bbf : (const void *)m->B;
    cublasStatus_t s =
        cublasLtMatmul(j->b->lt, j->lt->desc, &one, B, j->lt->la, A, j->lt->lb, &zero,
                       m->C, j->lt->lc, m->C, j->lt->lc, &j->lt->algo, j->b->lt_ws,
                       LT_WS, j->b->ctx->stream);
    if (s != CUBLAS_STATUS_SUCCESS)
        return ffnn_fail(FFNN_ERR_CUDA, "cublasLtMatmul: %s", cublasGetStatusString(s));
    return FFNN_OK;
}

static ffnn_status launch(void *arg)
{
    const job *j = (const job *)arg;
    if (j->config == -3 || j->config == -4) {
        for (int k = 0; k < j->n_mm; k++) {
            job one = *j;
            one.m = &j->mm[k];
            one.config = j->config == -3 ? FFNN_GEMM_AUTO : -1;
            const ffnn_status st = launch(&one);
            if (st != FFNN_OK) return st;
        }
        return FFNN_OK;
    }
    return j->config == -2 ? run_lt(j) : j->config < 0 ? run_cublas(j) : run_ffnn(j);
}

/* Median microseconds of one launch; NAN when it failed (message on stderr). */
static double time_job(job *j)
{
    const ffnn_lab_timing t = {j->b->o->warmup, j->b->o->reps, 1, 0.0, 1, 30.0};
    ffnn_lab_times r;
    if (ffnn_lab_time(j->b->ctx->stream, launch, j, &t, &r) != FFNN_OK) {
        fprintf(stderr, "gemm_models: %s %s: %s\n", j->m->name,
                j->config == -2   ? "cuBLASLt"
                : j->config == -3 ? "the step at AUTO"
                : j->config == -4 ? "the step on cuBLAS"
                : j->config < 0   ? "cuBLAS"
                                  : ffnn_cuda_gemm_config_name(j->config),
                ffnn_last_error());
        CK(cudaDeviceSynchronize());
        return NAN;
    }
    return r.median_us;
}

/* max |C - Cref| / max |Cref| over every model (C and Cref at the matmul's c stride);
 * -1 on non-finite values. */
static double compare(bench *b, const matmul *m)
{
    CK(cudaMemsetAsync(b->diff, 0, 3 * sizeof(unsigned), b->ctx->stream));
    const size_t mn = (size_t)m->M * m->N, total = mn * m->z.count;
    const unsigned blocks = (unsigned)(total / 256 + 1 < 4096 ? total / 256 + 1 : 4096);
    diff_kernel<<<blocks, 256, 0, b->ctx->stream>>>(m->C, b->Cref, m->z.c, mn, total,
                                                    b->diff);
    CK(cudaGetLastError());
    unsigned h[3];
    CK(cudaMemcpyAsync(h, b->diff, sizeof h, cudaMemcpyDeviceToHost, b->ctx->stream));
    CK(cudaStreamSynchronize(b->ctx->stream));
    float d, r;
    memcpy(&d, &h[0], 4), memcpy(&r, &h[1], 4);
    if (h[2]) return -1.0;
    return r > 0.0f ? (double)d / r : (double)d;
}

static double tolerance(ffnn_precision p)
{
    return p == FFNN_PRECISION_FP32 ? 1e-4 : p == FFNN_PRECISION_TF32 ? 5e-3 : 1e-2;
}

/* The float4 permissions gemm.cu's (fp32) / gemm_mma.cu's launch derives for m with
 * the step's epilogue (gemm_shape_of / gemm_mma_launch_t), as "a/b/c". */
static void vec_flags(const matmul *m, int mma, char *out, size_t size)
{
    const ffnn_gemm_epilogue &e = m->ep;
    const ffnn_gemm_models &z = m->z;
    auto al = [](const void *p, unsigned n) { return p == NULL || ((uintptr_t)p % n) == 0; };
    const int va = al(m->A, 16) && (m->ta ? m->M % 4 == 0 : m->K % 4 == 0) && z.a % 4 == 0;
    const int vb = al(m->B, 16) && (m->tb ? m->K % 4 == 0 : m->N % 4 == 0) && z.b % 4 == 0;
    int vc;
    if (mma)
        vc = m->N % 2 == 0 && al(m->C, 8) && z.c % 2 == 0;
    else
        vc = m->N % 4 == 0 && al(m->C, 16) && al(e.bias, 16) && al(e.dact_x, 16) &&
             al(e.sgd_param, 16) && z.c % 4 == 0 && z.bias % 4 == 0 && z.dact_x % 4 == 0 &&
             z.sgd_param % 4 == 0;
    snprintf(out, size, "%d/%d/%d", va, vb, vc);
}

/* ------------------------------------------------------------ one (models, batch) */

typedef struct buffers {
    float *params, *grads, *lr, *x0, *act[MAX_LAYERS], *dz[2];
} buffers;

static void free_buffers(buffers *u, int layers)
{
    cudaFree(u->params), cudaFree(u->grads), cudaFree(u->lr), cudaFree(u->x0);
    for (int i = 0; i < layers; i++) cudaFree(u->act[i]);
    cudaFree(u->dz[0]), cudaFree(u->dz[1]);
    memset(u, 0, sizeof *u);
}

/* The step's matmuls as step() and models.cu issue them; returns their number. */
static int step_matmuls(const ffnn_layer *L, int layers, size_t in0, size_t Ps, size_t batch,
                        int count, const buffers *u, matmul *mm)
{
    int n = 0;
    for (int i = 0; i < layers; i++) { /* forward */
        const ffnn_layer *l = &L[i];
        matmul *m = &mm[n++];
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "fwd%d", i);
        const size_t in = i ? L[i - 1].out : in0;
        m->A = i ? u->act[i - 1] : u->x0;
        m->B = u->params + l->weight_offset;
        m->C = u->act[i];
        m->M = (int)batch, m->N = (int)l->out, m->K = (int)in, m->ta = 0, m->tb = 1;
        m->ep.bias = l->has_bias ? u->params + l->bias_offset : NULL;
        m->ep.act = l->act;
        m->z.count = count;
        m->z.a = batch * in, m->z.b = Ps, m->z.c = batch * l->out;
        m->z.bias = Ps;
    }
    int cur = 0;
    for (int i = layers - 1; i >= 0; i--) { /* backward */
        const ffnn_layer *l = &L[i];
        const float *x = i ? u->act[i - 1] : u->x0;
        if (i > 0) {
            matmul *m = &mm[n++];
            memset(m, 0, sizeof *m);
            snprintf(m->name, sizeof m->name, "dx%d", i);
            m->A = u->dz[cur], m->B = u->params + l->weight_offset, m->C = u->dz[cur ^ 1];
            m->M = (int)batch, m->N = (int)l->in, m->K = (int)l->out, m->ta = 0, m->tb = 0;
            if (L[i - 1].act != FFNN_ACT_IDENTITY) {
                m->ep.dact_x = x;
                m->ep.dact = L[i - 1].act;
            }
            m->z.count = count;
            m->z.a = batch * l->out, m->z.b = Ps;
            m->z.c = batch * l->in, m->z.dact_x = batch * l->in;
        }
        matmul *m = &mm[n++];
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "dW%d", i);
        m->A = u->dz[cur], m->B = x, m->C = u->grads + l->weight_offset;
        m->M = (int)l->out, m->N = (int)l->in, m->K = (int)batch, m->ta = 1, m->tb = 0;
        m->ep.sgd_param = u->params + l->weight_offset;
        m->ep.rowsum_param = l->has_bias ? u->params + l->bias_offset : NULL;
        m->z.count = count;
        m->z.a = batch * l->out, m->z.b = batch * l->in, m->z.c = Ps;
        m->z.sgd_param = Ps, m->z.rowsum_param = Ps;
        m->z.lr = u->lr;
        m->z.no_c = 1;
        cur ^= 1;
    }
    for (int k = 0; k < n; k++) {
        matmul *m = &mm[k];
        const ffnn_gemm_models &z = m->z;
        m->a_span = (size_t)(count - 1) * z.a + (size_t)m->M * m->K;
        m->b_span = (size_t)(count - 1) * z.b + (size_t)m->K * m->N;
    }
    return n;
}

static double tflops(const matmul *m, double us)
{
    return 2.0 * m->M * m->N * (double)m->K * m->z.count / (us * 1e-6) / 1e12;
}

static void header(const options *o)
{
    if (o->markdown) {
        printf("| models | batch | prec | matmul | M | N | K | float4 a/b/c | ffnn auto tile | "
               "auto us | auto TFLOP/s | best tile | best us | best TFLOP/s | cuBLAS us | "
               "cuBLAS TFLOP/s | %sauto / cuBLAS | every tile (us) | check |\n",
               o->lt ? "cuBLASLt us | cuBLASLt TFLOP/s | " : "");
        printf("|---:|---:|---|---|---:|---:|---:|---|---|---:|---:|---|---:|---:|---:|---:|"
               "%s---:|---|---|\n", o->lt ? "---:|---:|" : "");
    } else {
        printf("%6s %5s %4s %-6s %5s %5s %5s %5s | %-30s %9s %6s | %-30s %9s %6s | %9s %6s | ",
               "models", "batch", "prec", "matmul", "M", "N", "K", "f4abc", "ffnn auto tile",
               "us", "TF/s", "best tile", "us", "TF/s", "cuBLAS us", "TF/s");
        if (o->lt) printf("%9s %6s | ", "Lt us", "TF/s");
        printf("%6s | %s\n", "a/cuB", "check | every tile (us)");
    }
}

static int run_shape(bench *b, const ffnn_layer *L, int layers, size_t in0, size_t P,
                     int count, int batch)
{
    const options *o = b->o;
    const size_t Ps = (P + o->param_align - 1) / o->param_align * o->param_align;
    size_t widest = 0;
    for (int i = 0; i < layers; i++) widest = L[i].out > widest ? L[i].out : widest;
    buffers u;
    memset(&u, 0, sizeof u);
    const size_t nz = (size_t)count, nb = (size_t)batch;
    int ok = (u.params = dalloc(nz * Ps)) && (u.grads = dalloc(nz * Ps)) &&
             (u.lr = dalloc(nz)) && (u.x0 = dalloc(nz * nb * in0)) &&
             (u.dz[0] = dalloc(nz * nb * widest)) && (u.dz[1] = dalloc(nz * nb * widest));
    for (int i = 0; ok && i < layers; i++) ok = (u.act[i] = dalloc(nz * nb * L[i].out)) != NULL;
    matmul mm[MAX_MM];
    const int n = step_matmuls(L, layers, in0, Ps, nb, count, &u, mm);
    size_t a_max = 0, b_max = 0, c_max = 0;
    for (int k = 0; k < n; k++) {
        a_max = mm[k].a_span > a_max ? mm[k].a_span : a_max;
        b_max = mm[k].b_span > b_max ? mm[k].b_span : b_max;
        const size_t c = (size_t)(count - 1) * mm[k].z.c + (size_t)mm[k].M * mm[k].N;
        c_max = c > c_max ? c : c_max;
    }
    int want_bf16 = 0;
    for (int p = 0; p < o->n_prec; p++) want_bf16 |= o->prec[p] == FFNN_PRECISION_BF16;
    b->Abf = NULL, b->Bbf = NULL;
    if (ok) ok = (b->Cref = dalloc(c_max)) != NULL;
    if (ok && want_bf16)
        ok = (b->Abf = (__nv_bfloat16 *)dalloc(a_max / 2 + 1)) != NULL &&
             (b->Bbf = (__nv_bfloat16 *)dalloc(b_max / 2 + 1)) != NULL;
    if (!ok) {
        printf("models %d batch %d: skipped (device memory)\n", count, batch);
        free_buffers(&u, layers);
        cudaFree(b->Cref), cudaFree(b->Abf), cudaFree(b->Bbf);
        b->Cref = NULL;
        cudaGetLastError();
        return 0;
    }
    /* values: W, x, dz uniform in [-1, 1]; lr the same for every model */
    FK(ffnn_lab_fill_uniform(u.params, nz * Ps, 1, -1.0f, 1.0f));
    FK(ffnn_lab_fill_uniform(u.x0, nz * nb * in0, 2, -1.0f, 1.0f));
    FK(ffnn_lab_fill_uniform(u.dz[0], nz * nb * widest, 3, -1.0f, 1.0f));
    FK(ffnn_lab_fill_uniform(u.dz[1], nz * nb * widest, 4, -1.0f, 1.0f));
    for (int i = 0; i < layers; i++)
        FK(ffnn_lab_fill_uniform(u.act[i], nz * nb * L[i].out, 5 + i, -1.0f, 1.0f));
    FK(ffnn_lab_fill_uniform(u.lr, nz, 99, o->lr, o->lr));
    int fails = 0;
    for (int p = 0; p < o->n_prec; p++) {
        const ffnn_precision prec = o->prec[p];
        const int mma = prec != FFNN_PRECISION_FP32;
        int tiles[MAX_TILES], nt = 0;
        const int *order = mma ? mma_order : fp32_order;
        const int n_order = mma ? 3 : 4;
        for (int t = 0; t < n_order; t++) tiles[nt++] = order[t];
        double sum_auto = 0, sum_best = 0, sum_cublas = 0, sum_lt = 0, flop = 0;
        for (int k = 0; k < n; k++) {
            const matmul *m = &mm[k];
            b->ctx->precision = prec;
            const int auto_cfg =
                ffnn_cuda_gemm_models_config(b->ctx, m->M, m->N, count, order, n_order);
            /* check: cuBLAS into Cref; ffnn plain at AUTO and each tile, and cuBLASLt,
             * into C, each against Cref */
            if (prec == FFNN_PRECISION_BF16) {
                to_bf16_kernel<<<4096, 256, 0, b->ctx->stream>>>(m->A, b->Abf, m->a_span);
                to_bf16_kernel<<<4096, 256, 0, b->ctx->stream>>>(m->B, b->Bbf, m->b_span);
                CK(cudaGetLastError());
            }
            lt_plan lp;
            memset(&lp, 0, sizeof lp);
            if (o->lt) {
                lt_plan_make(b, m, prec, &lp);
                if (!lp.ok)
                    printf("note: %s models %d batch %d %s: no cuBLASLt run: %s\n", m->name,
                           count, batch, ffnn_precision_name(prec), lp.why);
            }
            job jc = {b, m, -1, 1, prec, NULL, NULL, 0};
            const int have_ref = launch(&jc) == FFNN_OK;
            double worst = 0.0, worst_lt = -1.0;
            int bad = 0;
            if (!have_ref) {
                printf("FAIL %s models %d batch %d %s: cuBLAS: %s (no check)\n", m->name,
                       count, batch, ffnn_precision_name(prec), ffnn_last_error());
                bad = 1;
            }
            for (int t = -2; have_ref && t < nt; t++) {
                if (t == -2 && !lp.ok) continue;
                const int cfg = t == -2 ? -2 : t < 0 ? FFNN_GEMM_AUTO : tiles[t];
                job jf = {b, m, cfg, 1, prec, &lp, NULL, 0};
                const char *what = t == -2 ? "cuBLASLt" : ffnn_cuda_gemm_config_name(jf.config);
                if (launch(&jf) != FFNN_OK) {
                    printf("FAIL %s models %d batch %d %s %s: %s\n", m->name, count, batch,
                           ffnn_precision_name(prec), what, ffnn_last_error());
                    bad = 1;
                    continue;
                }
                const double rel = compare(b, m);
                if (rel < 0 || rel > tolerance(prec)) {
                    printf("FAIL %s models %d batch %d %s %s: max |C - C_cuBLAS| / max "
                           "|C_cuBLAS| = %s%.3g (tolerance %.0e)\n",
                           m->name, count, batch, ffnn_precision_name(prec), what,
                           rel < 0 ? "non-finite " : "", rel < 0 ? 0.0 : rel, tolerance(prec));
                    bad = 1;
                }
                if (t == -2) worst_lt = rel;
                else if (rel > worst) worst = rel;
            }
            fails += bad;
            /* time: cuBLASLt (it writes C: first), AUTO, every tile, cuBLAS */
            double t_lt = NAN;
            if (lp.ok) {
                job jl = {b, m, -2, 0, prec, &lp, NULL, 0};
                t_lt = time_job(&jl);
            }
            lt_plan_destroy(&lp);
            job ja = {b, m, FFNN_GEMM_AUTO, 0, prec, NULL, NULL, 0};
            const double t_auto = time_job(&ja);
            double t_tile[MAX_TILES], t_best = INFINITY;
            int best = -1;
            for (int t = 0; t < nt; t++) {
                job jt = {b, m, tiles[t], 0, prec, NULL, NULL, 0};
                t_tile[t] = time_job(&jt);
                if (t_tile[t] < t_best) t_best = t_tile[t], best = t;
            }
            job jb = {b, m, -1, 0, prec, NULL, NULL, 0};
            const double t_cublas = time_job(&jb);
            sum_auto += t_auto, sum_best += t_best, sum_cublas += t_cublas, sum_lt += t_lt;
            flop += 2.0 * m->M * m->N * (double)m->K * count;
            char vec[16], all[320] = "", chk[64];
            vec_flags(m, mma, vec, sizeof vec);
            for (int t = 0; t < nt; t++) {
                const size_t used = strlen(all);
                snprintf(all + used, sizeof all - used, "%s%s %.1f", t ? ", " : "",
                         ffnn_cuda_gemm_config_name(tiles[t]), t_tile[t]);
            }
            if (worst_lt >= 0)
                snprintf(chk, sizeof chk, "%s %.1e (Lt %.1e)", bad ? "FAIL" : "ok", worst,
                         worst_lt);
            else
                snprintf(chk, sizeof chk, "%s %.1e", bad ? "FAIL" : "ok", worst);
            const char *bn = best >= 0 ? ffnn_cuda_gemm_config_name(tiles[best]) : "-";
            if (o->markdown) {
                printf("| %d | %d | %s | %s | %d | %d | %d | %s | %s | %.1f | %.2f | %s | %.1f | "
                       "%.2f | %.1f | %.2f | ",
                       count, batch, ffnn_precision_name(prec), m->name, m->M, m->N, m->K, vec,
                       ffnn_cuda_gemm_config_name(auto_cfg), t_auto, tflops(m, t_auto), bn,
                       t_best, tflops(m, t_best), t_cublas, tflops(m, t_cublas));
                if (o->lt) printf("%.1f | %.2f | ", t_lt, tflops(m, t_lt));
                printf("%.2f | %s | %s |\n", t_auto / t_cublas, all, chk);
            } else {
                printf("%6d %5d %4s %-6s %5d %5d %5d %5s | %-30s %9.1f %6.2f | %-30s %9.1f "
                       "%6.2f | %9.1f %6.2f | ",
                       count, batch, ffnn_precision_name(prec), m->name, m->M, m->N, m->K, vec,
                       ffnn_cuda_gemm_config_name(auto_cfg), t_auto, tflops(m, t_auto), bn,
                       t_best, tflops(m, t_best), t_cublas, tflops(m, t_cublas));
                if (o->lt) printf("%9.1f %6.2f | ", t_lt, tflops(m, t_lt));
                printf("%6.2f | %s | %s\n", t_auto / t_cublas, chk, all);
            }
            fflush(stdout);
        }
        const double tf_a = flop / (sum_auto * 1e-6) / 1e12,
                     tf_b = flop / (sum_best * 1e-6) / 1e12,
                     tf_c = flop / (sum_cublas * 1e-6) / 1e12,
                     tf_l = flop / (sum_lt * 1e-6) / 1e12;
        if (o->markdown) {
            printf("| %d | %d | %s | **step** | | | | | (sum) | %.1f | %.2f | (sum of bests) | "
                   "%.1f | %.2f | %.1f | %.2f | ",
                   count, batch, ffnn_precision_name(prec), sum_auto, tf_a, sum_best, tf_b,
                   sum_cublas, tf_c);
            if (o->lt) printf("%.1f | %.2f | ", sum_lt, tf_l);
            printf("%.2f | | |\n", sum_auto / sum_cublas);
        } else {
            printf("%6d %5d %4s %-6s %5s %5s %5s %5s | %-30s %9.1f %6.2f | %-30s %9.1f %6.2f | "
                   "%9.1f %6.2f | ",
                   count, batch, ffnn_precision_name(prec), "step", "", "", "", "", "(sum)",
                   sum_auto, tf_a, "(sum of bests)", sum_best, tf_b, sum_cublas, tf_c);
            if (o->lt) printf("%9.1f %6.2f | ", sum_lt, tf_l);
            printf("%6.2f |\n", sum_auto / sum_cublas);
        }
        /* the step's matmuls back to back in one sample (the sweep's order; between
         * them the L2 holds the previous matmul's data, not this one's). cuBLAS in
         * bf16 reads the bfloat16 copies of the last matmul's operands: the same
         * shapes, other values. */
        job js = {b, mm, -3, 0, prec, NULL, mm, n};
        const double t_sa = time_job(&js);
        js.config = -4;
        const double t_sc = time_job(&js);
        const double tf_sa = flop / (t_sa * 1e-6) / 1e12, tf_sc = flop / (t_sc * 1e-6) / 1e12;
        if (o->markdown) {
            printf("| %d | %d | %s | **step, back to back** | | | | | AUTO | %.1f | %.2f | | | | "
                   "%.1f | %.2f | ",
                   count, batch, ffnn_precision_name(prec), t_sa, tf_sa, t_sc, tf_sc);
            if (o->lt) printf("| | ");
            printf("%.2f | | |\n", t_sa / t_sc);
        } else {
            printf("%6d %5d %4s %-6s %5s %5s %5s %5s | %-30s %9.1f %6.2f | %-30s %9s %6s | "
                   "%9.1f %6.2f | ",
                   count, batch, ffnn_precision_name(prec), "stepb2b", "", "", "", "",
                   "(back to back, AUTO)", t_sa, tf_sa, "", "", "", t_sc, tf_sc);
            if (o->lt) printf("%9s %6s | ", "", "");
            printf("%6.2f |\n", t_sa / t_sc);
        }
        fflush(stdout);
    }
    b->ctx->precision = FFNN_PRECISION_FP32;
    free_buffers(&u, layers);
    cudaFree(b->Cref), cudaFree(b->Abf), cudaFree(b->Bbf);
    b->Cref = NULL, b->Abf = NULL, b->Bbf = NULL;
    return fails;
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    size_t in0 = 0, P = 0;
    ffnn_layer *L = NULL;
    int layers = 0;
    if (ffnn_arch_parse(o.arch, &in0, &L, &layers, &P) != FFNN_OK) {
        fprintf(stderr, "gemm_models: %s\n", ffnn_last_error());
        return 2;
    }
    if (layers > MAX_LAYERS) {
        fprintf(stderr, "gemm_models: %s: at most %d layers\n", o.arch, MAX_LAYERS);
        return 2;
    }
    for (int i = 0; i < layers; i++)
        if (L[i].kind != FFNN_LAYER_DENSE ||
            ffnn_cuda_check_fused_act("gemm_models", "activation", L[i].act) != FFNN_OK) {
            fprintf(stderr, "gemm_models: %s: layer %d: dense layers with identity, relu, "
                    "sigmoid or tanh only (the batched sweep's)\n", o.arch, i);
            return 2;
        }
    ffnn_lab_gpu_info gpu;
    if (ffnn_lab_gpu_query(&gpu) != FFNN_OK) {
        fprintf(stderr, "gemm_models: no GPU: %s\n", ffnn_last_error());
        return 1;
    }
    const ffnn_backend_ops *ops = ffnn_cuda_backend();
    void *vctx = NULL;
    if (ops == NULL || ffnn_lab_backend_create(ops, FFNN_MATMUL_TILED, 1, &vctx) != FFNN_OK) {
        fprintf(stderr, "gemm_models: cuda context: %s\n", ffnn_last_error());
        return 1;
    }
    bench b;
    memset(&b, 0, sizeof b);
    b.o = &o;
    b.ctx = (ffnn_cuda_ctx *)vctx;
    CB(cublasCreate(&b.cublas));
    CB(cublasSetStream(b.cublas, b.ctx->stream));
    CB(cublasSetMathMode(b.cublas, CUBLAS_DEFAULT_MATH)); /* the compute type decides */
    CK(cudaMalloc(&b.diff, 3 * sizeof(unsigned)));
    if (o.lt) {
        CB(cublasLtCreate(&b.lt));
        CK(cudaMalloc(&b.lt_ws, LT_WS));
    }
    int cv = 0, dv = 0;
    cublasGetVersion(b.cublas, &cv);
    cudaDriverGetVersion(&dv);
    const size_t Ps = (P + o.param_align - 1) / o.param_align * o.param_align;
    printf("%sgemm_models: %s, %d SMs, cuBLAS %d, driver %d; net %s, P = %zu floats per model"
           " (stride %zu, %% 4 = %zu)\n",
           o.markdown ? "" : "# ", gpu.name, gpu.sm_count, cv, dv, o.arch, P, Ps, Ps % 4);
    printf("%sffnn: ffnn_cuda_gemm_models with the step's epilogue (fwd: bias + act; dx: "
           "* f'(x); dW: SGD on W and b, row sums, dW not stored); cuBLAS: "
           "cublasGemmStridedBatchedEx, plain matmul (no epilogue, C stored; bf16: inputs "
           "converted beforehand, untimed), same M N K, transposes and strides. Median of %d "
           "launches (events, %d warm-up), us; TFLOP/s = 2 M N K models / time. check: max "
           "|ffnn - cuBLAS| / max |cuBLAS| of the plain matmul at AUTO and every tile "
           "(tolerance fp32 1e-4, tf32 5e-3, bf16 1e-2). f4abc: float4 loads of A / B / "
           "C+epilogue (gemm.cu's rule for fp32, gemm_mma.cu's for tf32/bf16).%s\n\n",
           o.markdown ? "" : "# ", o.reps, o.warmup,
           o.lt ? " cuBLASLt: cublasLtMatmul over strided batch layouts, its first heuristic "
                  "pick (32 MiB workspace), the same plain matmul, checked the same way."
                : "");
    header(&o);
    int fails = 0;
    for (int im = 0; im < o.n_models; im++)
        for (int ib = 0; ib < o.n_batch; ib++)
            fails += run_shape(&b, L, layers, in0, P, o.models[im], o.batch[ib]);
    if (fails) printf("\n%d matmul(s) FAILED the check\n", fails);
    cudaFree(b.diff);
    if (b.lt) cublasLtDestroy(b.lt);
    cudaFree(b.lt_ws);
    cublasDestroy(b.cublas);
    ops->destroy(vctx);
    ffnn_layers_free(L, layers);
    return fails ? 1 : 0;
}
