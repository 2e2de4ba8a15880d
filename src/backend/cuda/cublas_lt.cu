/* cublas_lt.cu - the cublaslt strategy's fused ops on cuBLASLt (dense_act_forward,
 * dense_backward_fused, their epilogues) and the mixed-precision (bf16) pipeline's
 * ops (file comment and error model: cublas.cu). */
#include "cublas_state.cuh"

/* ------------------------------------------------------------------ cuBLASLt */
/*
 * The cublaslt strategy (--strategy cublaslt): the backend's fused ops
 * (dense_act_forward, dense_backward_fused) on cuBLASLt matmuls with cuBLASLt's
 * epilogues - the named comparator for our own fused kernels (fused.cu), as
 * PyTorch's Linear uses them:
 *   forward   a  = act(x W^T + b)      one cublasLtMatmul, epilogue RELU_BIAS /
 *                                       BIAS / RELU / DEFAULT; another act: then
 *                                       activation.cu's activation_forward in place
 *   backward  dx = (dz W) * f'(x)       one cublasLtMatmul, then activation.cu's
 *                                       activation_backward in place (no aux buffer:
 *                                       the DRELU epilogues need the forward's
 *                                       bit mask, which the op interface does not
 *                                       carry)
 *             dW = dz^T x, db = sum_b dz one cublasLtMatmul, epilogue BGRADB (the
 *                                       bias gradient reduced over the GEMM's k =
 *                                       batch from its B operand dz^T); where
 *                                       cuBLASLt has no algorithm for BGRADB,
 *                                       DEFAULT plus dense.cu's bias_grad kernel
 * A bias (or db) not 16-byte aligned takes the plain path for that matmul (the
 * GEMM without epilogue, then our bias kernels): cuBLASLt's epilogues need it.
 *             sgd (plain SGD inside the backward: step.h fused_sgd):
 *                                       W -= lr dz^T x as one cublasLtMatmul,
 *                                       alpha -lr, beta 1, C = D = W (dW not
 *                                       written; the update is rounded as
 *                                       cuBLASLt's epilogue rounds alpha acc +
 *                                       beta C, not as update.cu's update); db
 *                                       by dense.cu's bias_grad, b -= lr db by
 *                                       update.cu's update
 * Column-major cuBLASLt on row-major arrays as above: D [m,n] (ld m) column-major
 * is the row-major [n,m] array. Precision as cublasGemmEx above (fp32: COMPUTE_32F,
 * no TF32; tf32: COMPUTE_32F_FAST_TF32; bf16: bfloat16 copies of both operands,
 * COMPUTE_32F, fp32 D and bias; tf32x3: the split operands over K' = 3K). Bias in the epilogue is added to the fp32
 * accumulator before the one rounding (cuBLAS's add_bias_rows_kernel and our own
 * kernels round twice): values differ in the last bit, within the tolerance of
 * tests/test_cublas.c. The algorithm: cuBLASLt's first heuristic pick for the
 * shapes, the same workspace as the cuBLAS handle, atomics not requested
 * (deterministic run to run on one GPU, as cuBLAS documents).
 */

/* The output D of a cuBLASLt matmul: m x n column-major (ld m), of type type
 * (fp32, or bf16 in the mixed-precision forward and dx). sgd_lr 0: D = the
 * product; else D -= sgd_lr * the product in the epilogue (alpha -sgd_lr, beta 1,
 * C = D: plain SGD's update of the weights D by their gradient, fp32 D only). */
typedef struct lt_output {
    void *p;
    cudaDataType_t type;
    uint64_t m, n;
    float sgd_lr;
} lt_output;

/* The epilogue's vector: bias added (BIAS, RELU_BIAS) or bias gradient written
 * (BGRADB), of type type (fp32, or bf16), or p NULL. */
typedef struct lt_vector {
    void *p;
    cudaDataType_t type;
} lt_vector;

/* The largest power of two <= 256 that divides p's address (cuBLASLt's
 * MIN_ALIGNMENT preferences). */
static uint32_t lt_alignment(const void *p)
{
    const uintptr_t a = (uintptr_t)p;
    uint32_t al = 256;
    while (al > 1 && a % al != 0) al /= 2;
    return al;
}

/* Bias vectors for the epilogues (BIAS, RELU_BIAS, BGRADB) must be 16-byte
 * aligned (cuBLASLt fails or faults otherwise, as other projects found); a bias
 * that is not takes the plain path (the GEMM, then our bias kernels). */
#define LT_BIAS_ALIGN 16

/* No epilogue vector. */
static const lt_vector LT_NO_VECTOR = {NULL, CUDA_R_32F};

#define LT_TRY(call, name)                                                          \
    do {                                                                            \
        cublasStatus_t lt_st_ = (call);                                             \
        if (lt_st_ != CUBLAS_STATUS_SUCCESS) {                                      \
            st = ffnn_cublas_fail_call(ctx, lt_st_, __FILE__, __LINE__, name);           \
            goto done;                                                              \
        }                                                                           \
    } while (0)

/* The heuristic's pick with CTA swizzling 1 where the pick does not split K and
 * cuBLASLt's check takes it (else the pick as it is), where gemm_plan.h
 * ffnn_lt_swizzles says so (the measurements are there). Swizzling changes the
 * order in which the output tiles are scheduled, not any sum: the same bits. */
static void lt_swizzle(cublas_state *s, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t la,
                       cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t ld,
                       cublasLtMatmulHeuristicResult_t *heur)
{
    int32_t splitk = 0;
    uint32_t swizzle = 1;
    size_t got = 0;
    cublasLtMatmulHeuristicResult_t checked;
    cublasLtMatmulAlgo_t algo = heur->algo;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                             sizeof splitk, &got) != CUBLAS_STATUS_SUCCESS ||
        splitk != 1 ||
        cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle,
                                             sizeof swizzle) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulAlgoCheck(s->lt, desc, la, lb, ld, ld, &algo, &checked) !=
            CUBLAS_STATUS_SUCCESS ||
        checked.workspaceSize > FFNN_CUBLAS_WORKSPACE_BYTES)
        return;
    heur->algo = algo;
}

/* D (out: m x n column-major, ld m) = op(a) op(b) with epilogue epi (bias: its
 * BIAS_POINTER and BIAS_DATA_TYPE: the bias added for BIAS/RELU_BIAS, the
 * gradient written for BGRADB). Operands both fp32 (with ctx->precision bf16:
 * their bf16 copies, made here by ffnn_cublas_to_bf16) or both bf16 (the mixed-precision
 * pipeline: used as they are). *no_algo (may be NULL): set to 1, nothing queued
 * and FFNN_OK returned when cuBLASLt has no algorithm for this epilogue, these
 * types and shapes. Errors: FFNN_ERR_CUDA (a cuBLASLt call), as ffnn_cublas_to_bf16. */
static ffnn_status lt_matmul(ffnn_cuda_ctx *ctx, cublas_state *s, lt_operand a, lt_operand b,
                             lt_output out, cublasLtEpilogue_t epi, lt_vector bias,
                             int *no_algo)
{
    ffnn_status st = FFNN_OK;
    cublasLtMatmulDesc_t desc = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, ld = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    /* D = alpha product + beta C, C = D (in place) */
    const float alpha = out.sgd_lr != 0.0f ? -out.sgd_lr : 1.0f;
    const float beta = out.sgd_lr != 0.0f ? 1.0f : 0.0f;
    const int given16 = a.type == CUDA_R_16BF; /* the operands are bf16 tensors already */
    const int bf16 = given16 || ctx->precision == FFNN_PRECISION_BF16;
    const int x3 = !bf16 && ctx->precision == FFNN_PRECISION_TF32X3;
    const cublasComputeType_t compute =
        !bf16 && (ctx->precision == FFNN_PRECISION_TF32 || x3) ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                               : CUBLAS_COMPUTE_32F;
    const cudaDataType_t ab_type = bf16 ? CUDA_R_16BF : CUDA_R_32F;
    const cudaDataType_t bias_type = bias.type;
    const size_t workspace = FFNN_CUBLAS_WORKSPACE_BYTES;
    void *ws = NULL; /* ffnn_cublas_lt_workspace: the stream's own */
    const void *pa = a.p, *pb = b.p;
    void *d = out.p;
    const uint64_t m = out.m, n = out.n;
    if (no_algo != NULL) *no_algo = 0;
    if (a.type != b.type)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda cublaslt: operands of two types (%d, %d)", (int)a.type,
                         (int)b.type);
    if (bf16 && !given16) {
        __nv_bfloat16 *a16 = NULL, *b16 = NULL;
        st = ffnn_cublas_to_bf16(ctx, s, (const float *)a.p, (size_t)(a.rows * a.cols),
                     (const float *)b.p, (size_t)(b.rows * b.cols), &a16, &b16);
        if (st != FFNN_OK) return st;
        pa = a16;
        pb = b16;
    }
    if ((a.x3 && !x3) || b.x3)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda cublaslt: a split operand outside tf32x3, or as the second");
    if (x3) { /* a and b become the K' = 3K split operands */
        if ((st = ffnn_cublas_tf32x3_split(ctx, s, &a, &b, a.x3)) != FFNN_OK) return st;
        pa = a.p;
        pb = b.p;
    }
    LT_TRY(cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
    LT_TRY(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &a.op, sizeof a.op),
           "cublasLtMatmulDescSetAttribute(TRANSA)");
    LT_TRY(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &b.op, sizeof b.op),
           "cublasLtMatmulDescSetAttribute(TRANSB)");
    LT_TRY(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi),
           "cublasLtMatmulDescSetAttribute(EPILOGUE)");
    if (bias.p != NULL) {
        LT_TRY(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias.p,
                                              sizeof bias.p),
               "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
        LT_TRY(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                              &bias_type, sizeof bias_type),
               "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)");
    }
    LT_TRY(cublasLtMatrixLayoutCreate(&la, ab_type, a.rows, a.cols, a.ld), "cublasLtMatrixLayoutCreate");
    LT_TRY(cublasLtMatrixLayoutCreate(&lb, ab_type, b.rows, b.cols, b.ld), "cublasLtMatrixLayoutCreate");
    LT_TRY(cublasLtMatrixLayoutCreate(&ld, out.type, m, n, (int64_t)m), "cublasLtMatrixLayoutCreate");
    LT_TRY(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &workspace, sizeof workspace),
           "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
    { /* cuBLASLt assumes 256-byte aligned operands unless told: our layers sit at
       * any float offset of one parameter arena */
        const uint32_t al_a = lt_alignment(pa), al_b = lt_alignment(pb), al_d = lt_alignment(d);
        LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                    &al_a, sizeof al_a),
               "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_A_BYTES)");
        LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                                    &al_b, sizeof al_b),
               "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_B_BYTES)");
        LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                                    &al_d, sizeof al_d),
               "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_C_BYTES)");
        LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                                    &al_d, sizeof al_d),
               "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_D_BYTES)");
    }
    {
        const cublasStatus_t hs =
            cublasLtMatmulAlgoGetHeuristic(s->lt, desc, la, lb, ld, ld, pref, 1, &heur, &found);
        if ((hs == CUBLAS_STATUS_NOT_SUPPORTED || found == 0) && no_algo != NULL) {
            *no_algo = 1;
            goto done;
        }
        if (hs != CUBLAS_STATUS_SUCCESS) {
            st = ffnn_cublas_fail_call(ctx, hs, __FILE__, __LINE__,
                                       "cublasLtMatmulAlgoGetHeuristic");
            goto done;
        }
        if (found == 0) {
            st = ffnn_fail(FFNN_ERR_CUDA, "cuda cublaslt: no cuBLASLt algorithm for a %llux%llu "
                           "matmul with epilogue %d in %s%s", (unsigned long long)m,
                           (unsigned long long)n, (int)epi, ffnn_precision_name(ctx->precision),
                           given16 ? " (bf16 tensors)" : "");
            goto done;
        }
    }
    if (ffnn_lt_swizzles(x3, compute == CUBLAS_COMPUTE_32F_FAST_TF32 && !x3,
                         a.op == CUBLAS_OP_T && b.op == CUBLAS_OP_N, (size_t)m, (size_t)n))
        lt_swizzle(s, desc, la, lb, ld, &heur);
    if ((st = ffnn_cublas_lt_workspace(ctx, s, &ws)) != FFNN_OK) goto done;
    LT_TRY(cublasLtMatmul(s->lt, desc, &alpha, pa, la, pb, lb, &beta, d, ld, d, ld, &heur.algo,
                          ws, workspace, ctx->stream),
           "cublasLtMatmul");
done:
    if (pref != NULL) (void)cublasLtMatmulPreferenceDestroy(pref);
    if (ld != NULL) (void)cublasLtMatrixLayoutDestroy(ld);
    if (lb != NULL) (void)cublasLtMatrixLayoutDestroy(lb);
    if (la != NULL) (void)cublasLtMatrixLayoutDestroy(la);
    if (desc != NULL) (void)cublasLtMatmulDescDestroy(desc);
    return st;
}

/* The weight gradient dw = xa zb (the caller's operands) and the bias gradient db
 * (NULL: none) by cuBLASLt's BGRADB epilogue; where it has no algorithm or db is not
 * aligned for it, dw without epilogue and db by our bias_grad kernel over dz (fp32
 * [batch, out]) or dz16 (bf16 rows of dz_ld). One copy for the fp32 and the
 * mixed-precision backward. */
static ffnn_status lt_weight_grad(ffnn_cuda_ctx *ctx, cublas_state *s, lt_operand xa,
                                  lt_operand zb, lt_output dw, float *db, const float *dz,
                                  const uint16_t *dz16, size_t dz_ld, size_t batch, size_t out)
{
    ffnn_status st = FFNN_OK;
    const lt_vector grad = {db, CUDA_R_32F};
    int no_algo = 0;
    /* tf32x3: BGRADB would sum the split op(B), not dz */
    if (db != NULL && (lt_alignment(db) < LT_BIAS_ALIGN ||
                       ctx->precision == FFNN_PRECISION_TF32X3))
        no_algo = 1;
    else if (db != NULL) {
        st = lt_matmul(ctx, s, xa, zb, dw, CUBLASLT_EPILOGUE_BGRADB, grad, &no_algo);
        if (st != FFNN_OK || !no_algo) return st;
    }
    st = lt_matmul(ctx, s, xa, zb, dw, CUBLASLT_EPILOGUE_DEFAULT, LT_NO_VECTOR, NULL);
    if (st != FFNN_OK || db == NULL) return st;
    return dz16 != NULL ? ffnn_cuda_dense_bias_grad_bf16(ctx, dz16, dz_ld, db, batch, out)
                        : ffnn_cuda_dense_bias_grad(ctx, dz, db, batch, out);
}

/* backend.h dense_act_forward on cuBLASLt (fused.cu checked the arguments):
 * a [batch,out] = act(x [batch,in] W [out,in]^T + b [out] or none).
 * Column-major: D [out, batch] = op_T(W as [in, out]) x (x as [in, batch]). */
extern "C" ffnn_status ffnn_cuda_dense_act_forward_lt(ffnn_cuda_ctx *ctx, const float *x,
                                                      const float *W, const float *b, float *a,
                                                      size_t batch, size_t in, size_t out,
                                                      ffnn_activation act)
{
    cublas_state *s = NULL;
    ffnn_status st = ffnn_cublas_get_state(ctx, &s);
    if (st != FFNN_OK) return st;
    if (b != NULL && lt_alignment(b) < LT_BIAS_ALIGN) { /* the plain path: cuBLAS + bias */
        st = ffnn_cuda_dense_forward(ctx, x, W, b, a, batch, in, out);
        if (st != FFNN_OK || act == FFNN_ACT_IDENTITY) return st;
        return ffnn_cuda_activation_forward(ctx, act, 0.0f, a, a, batch * out); /* act 0..3 */
    }
    const int relu = act == FFNN_ACT_RELU;
    const cublasLtEpilogue_t epi = b != NULL ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                             : (relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
    const lt_operand wa = {W, CUDA_R_32F, CUBLAS_OP_T, in, out, (int64_t)in, 0};
    const lt_operand xb = {x, CUDA_R_32F, CUBLAS_OP_N, in, batch, (int64_t)in, 0};
    const lt_output d = {a, CUDA_R_32F, out, batch, 0.0f};
    const lt_vector bias = {(void *)b, CUDA_R_32F};
    st = lt_matmul(ctx, s, wa, xb, d, epi, bias, NULL);
    if (st != FFNN_OK || relu || act == FFNN_ACT_IDENTITY) return st;
    return ffnn_cuda_activation_forward(ctx, act, 0.0f, a, a, batch * out); /* act 0..3 */
}

/* backend.h dense_backward_fused on cuBLASLt (fused.cu checked the arguments; db
 * must be set when b is and sgd is).
 *   dx [batch,in] = dz W, then * f'(x):  D [in, batch] = (W as [in,out]) (dz as [out,batch]);
 *                                        f' and dx_db (the layer below's db) in one
 *                                        pass over dx (dense.cu act_bias_grad)
 *   dW [out,in] = dz^T x, db = sum_b dz: D [in, out] = (x as [in,batch]) op_T(dz as [out,batch]),
 *                                        or op_T(x^T as [batch,in]): given (xt), or
 *                                        where ffnn_lt_dw_transposes_x (tf32: cuBLAS's
 *                                        geam transposes x into the scratch first);
 *                                        BGRADB reduces op(B) = dz^T [batch, out] over k;
 *                                        with sgd D = W: W -= lr dz^T x (dW not
 *                                        written), db by bias_grad, then b -= lr db. */
/* The weight-gradient half of ffnn_cuda_dense_backward_lt (arguments as there). */
static ffnn_status lt_dense_weight_grad(ffnn_cuda_ctx *ctx, cublas_state *s, const float *x,
                                        float *W, float *b, const float *dz, float *dW,
                                        float *db, size_t batch, size_t in, size_t out,
                                        const ffnn_optimizer_step *sgd, const float *xt)
{
    ffnn_status st = FFNN_OK;
    lt_operand xa = {x, CUDA_R_32F, CUBLAS_OP_N, in, batch, (int64_t)in, 0};
    const lt_operand zb = {dz, CUDA_R_32F, CUBLAS_OP_T, out, batch, (int64_t)out, 0};
    if (xt != NULL && ctx->precision == FFNN_PRECISION_TF32X3) /* split x^T [in, 3 batch] */
        xa = (lt_operand){xt, CUDA_R_32F, CUBLAS_OP_T, 3 * batch, in, (int64_t)(3 * batch), 1};
    else if (xt != NULL ||
             ffnn_lt_dw_transposes_x(ctx->precision == FFNN_PRECISION_TF32, batch, in, out)) {
        /* x^T [in, batch]: column-major [batch, in], used as op_T */
        if (xt == NULL && (st = ffnn_cublas_transposed_input(ctx, s, x, batch, in, &xt)) != FFNN_OK)
            return st;
        xa = (lt_operand){xt, CUDA_R_32F, CUBLAS_OP_T, batch, in, (int64_t)batch, 0};
    }
    if (sgd == NULL) {
        const lt_output dw = {dW, CUDA_R_32F, in, out, 0.0f};
        return lt_weight_grad(ctx, s, xa, zb, dw, db, dz, NULL, 0, batch, out);
    }
    /* sgd: W -= lr dz^T x in the matmul's epilogue (dW not written); db by our
     * kernel (the BGRADB epilogue is not combined with the update), then b's update */
    if (db != NULL && (st = ffnn_cuda_dense_bias_grad(ctx, dz, db, batch, out)) != FFNN_OK) return st;
    const lt_output w = {W, CUDA_R_32F, in, out, sgd->lr};
    st = lt_matmul(ctx, s, xa, zb, w, CUBLASLT_EPILOGUE_DEFAULT, LT_NO_VECTOR, NULL);
    if (st == FFNN_OK && b != NULL) st = ffnn_cuda_optimizer_update(ctx, sgd, b, db, NULL, out);
    return st;
}

/* 1 when a weight gradient asked to run beside (dw_side) does: after a dx, on
 * the main stream, in tf32 where ffnn_lt_dw_beside (fp32 measured slower: its
 * sm80 kernels fill the SMs; docs/RESULTS.md history); not when the op would
 * use the scratch (the bf16 copies, tf32's own x^T), which the main stream's next
 * matmul may use too. */
static int lt_dw_goes_beside(const ffnn_cuda_ctx *ctx, int dw_side, int has_dx, const float *xt,
                             size_t batch, size_t in, size_t out)
{
    const int tf32 = ctx->precision == FFNN_PRECISION_TF32;
    return dw_side && has_dx && ctx->stream == ctx->main_stream && tf32 &&
           (xt != NULL || !ffnn_lt_dw_transposes_x(tf32, batch, in, out)) &&
           ffnn_lt_dw_beside(1, ctx->sm_count, in, out);
}

/* Queue `call` (the weight-gradient half of an op) on the side stream: after the
 * work queued so far on the main stream, concurrently with what follows it there
 * (backend.h side_begin, side_end); return its error, or side_end's. */
#define LT_BESIDE(ctx, call)                                                        \
    do {                                                                            \
        ffnn_status beside_st_ = ffnn_cuda_side_begin(ctx);                         \
        if (beside_st_ != FFNN_OK) return beside_st_;                               \
        beside_st_ = (call);                                                        \
        const ffnn_status end_st_ = ffnn_cuda_side_end(ctx);                        \
        if (beside_st_ != FFNN_OK) return beside_st_;                               \
        if (end_st_ != FFNN_OK) return end_st_;                                     \
    } while (0)

extern "C" ffnn_status ffnn_cuda_dense_backward_lt(ffnn_cuda_ctx *ctx, const float *x, float *W,
                                                   float *b, const float *dz, float *dx,
                                                   float *dW, float *db, float *dx_db,
                                                   size_t batch, size_t in, size_t out,
                                                   ffnn_activation x_act,
                                                   const ffnn_optimizer_step *sgd,
                                                   const float *xt, int dw_side)
{
    if (sgd != NULL && b != NULL && db == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda cublaslt dense_backward_fused: db is needed for b's update");
    cublas_state *s = NULL;
    ffnn_status st = ffnn_cublas_get_state(ctx, &s);
    if (st != FFNN_OK) return st;
    const int beside = lt_dw_goes_beside(ctx, dw_side, dx != NULL, xt, batch, in, out);
    if (dx != NULL) { /* first: reads W before the update below */
        const lt_operand wa = {W, CUDA_R_32F, CUBLAS_OP_N, in, out, (int64_t)in, 0};
        const lt_operand zb = {dz, CUDA_R_32F, CUBLAS_OP_N, out, batch, (int64_t)out, 0};
        const lt_output d = {dx, CUDA_R_32F, in, batch, 0.0f};
        st = lt_matmul(ctx, s, wa, zb, d, CUBLASLT_EPILOGUE_DEFAULT, LT_NO_VECTOR, NULL);
        if (st != FFNN_OK) return st;
    }
    if (beside) /* f' below runs concurrently with it */
        LT_BESIDE(ctx, lt_dense_weight_grad(ctx, s, x, W, b, dz, dW, db, batch, in, out, sgd,
                                            xt));
    if (dx != NULL) {
        if (dx_db != NULL)
            st = ffnn_cuda_dense_act_bias_grad(ctx, x_act, x, dx, dx_db, batch, in);
        else if (x_act != FFNN_ACT_IDENTITY)
            st = ffnn_cuda_activation_backward(ctx, x_act, 0.0f, x, dx, dx, batch * in);
        if (st != FFNN_OK) return st;
    }
    if (beside) return FFNN_OK;
    return lt_dense_weight_grad(ctx, s, x, W, b, dz, dW, db, batch, in, out, sgd, xt);
}

/* ---------------------------------------------------------- mixed precision */
/*
 * The mixed-precision pipeline (--precision bf16 on cublaslt; which tensor has
 * which type and why: strategy/step.h ffnn_mixed). No conversion pass: the
 * operands are bf16 tensors already (weights: the shadow the optimizer writes;
 * activations and their gradients: written in bf16 by the ops below).
 *   forward   a16 = bf16(act(x16 W16^T + b))  one cublasLtMatmul, A/B bf16,
 *                                             CUBLAS_COMPUTE_32F, D bf16 (or fp32
 *                                             for the logits), epilogue RELU_BIAS /
 *                                             BIAS / RELU / DEFAULT: bias added to
 *                                             the fp32 sum, relu, one rounding;
 *                                             the bias in fp32, or its bf16 copy
 *                                             where cuBLASLt takes only D's type;
 *                                             sigmoid, tanh: activation.cu's
 *                                             kernel on the output (fp32 math, a
 *                                             second rounding)
 *   backward  dx16 = bf16(dz16 W16)           one cublasLtMatmul, D bf16; then
 *                    * f'(x16)                activation.cu's kernel in place (relu:
 *                                             a mask, exact; sigmoid, tanh: a second
 *                                             rounding), or with dx_db dense.cu's
 *                                             act_bias_grad: f' and the layer
 *                                             below's db in one pass
 *             dW = dz16^T x16 (fp32), db      one cublasLtMatmul, D fp32, epilogue
 *                                             BGRADB (db in fp32)
 *             sgd: update.cu's update writes W, b and their bf16 shadows
 * A bias or db not 16-byte aligned: the GEMM without it, then our kernels
 * (bias_act_rows_kernel: one more rounding; dense.cu's bias_grad on bf16 dz).
 */

/* C[row, col] = act(C[row, col] + bias[col]) for the row-major C [M,N] (T: the
 * output's type; fp32 math, device_math.cuh's act), bias [N] fp32; grid-stride. */
template <typename T>
static __global__ void bias_act_rows_kernel(T *__restrict__ C, const float *__restrict__ bias,
                                            size_t n_total, size_t N, ffnn_activation act)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_total;
         i += (size_t)gridDim.x * blockDim.x)
        ffnn_st(C, i, ffnn_dev_act_forward_basic(act, ffnn_ld(C, i) + bias[i % N]));
}

/* backend.h dense_act_forward_bf16 (the mixed-precision forward; cublaslt only).
 * Column-major as the fp32 op: D [out, batch] = op_T(W16 as [in, out]) (x16 as [in, batch]).
 * Errors: FFNN_ERR_INVALID_ARGUMENT (NULL pointer, dimension, activation),
 * FFNN_ERR_UNSUPPORTED (a context of another matmul variant), FFNN_ERR_CUDA. */
extern "C" ffnn_status ffnn_cuda_dense_act_forward_bf16(void *vctx, const uint16_t *x16,
                                                        const uint16_t *W16, const float *b,
                                                        const uint16_t *b16, float *a,
                                                        uint16_t *a16, size_t batch, size_t in,
                                                        size_t out, ffnn_activation act)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "dense_act_forward_bf16");
    if (batch == 0 || in == 0 || out == 0 || batch > FFNN_CUDA_MAX_DIM ||
        in > FFNN_CUDA_MAX_DIM || out > FFNN_CUDA_MAX_DIM || (int)act < 0 ||
        (int)act > (int)FFNN_ACT_TANH)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda dense_act_forward_bf16: batch=%zu in=%zu out=%zu act=%d: "
                         "dimensions in 1..%zu, act identity, relu, sigmoid or tanh", batch,
                         in, out, (int)act, (size_t)FFNN_CUDA_MAX_DIM);
    if (x16 == NULL || W16 == NULL || (a == NULL && a16 == NULL) || (b == NULL) != (b16 == NULL))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda dense_act_forward_bf16: x16, W16 and a or a16 must be set, and "
                         "b with b16");
    if (ctx->matmul != FFNN_MATMUL_LIBRARY_LT)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "cuda dense_act_forward_bf16: the mixed-precision ops run on "
                         "cuBLASLt (strategy cublaslt)");
    cublas_state *s = NULL;
    ffnn_status st = ffnn_cublas_get_state(ctx, &s);
    if (st != FFNN_OK) return st;
    const int relu = act == FFNN_ACT_RELU;
    const int bias_ok = b != NULL && lt_alignment(b) >= LT_BIAS_ALIGN;
    const lt_operand wa = {W16, CUDA_R_16BF, CUBLAS_OP_T, in, out, (int64_t)in, 0};
    const lt_operand xb = {x16, CUDA_R_16BF, CUBLAS_OP_N, in, batch, (int64_t)in, 0};
    const lt_output d = {a16 != NULL ? (void *)a16 : (void *)a,
                         a16 != NULL ? CUDA_R_16BF : CUDA_R_32F, out, batch, 0.0f};
    const cublasLtEpilogue_t epi = bias_ok ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                           : (relu && b == NULL ? CUBLASLT_EPILOGUE_RELU
                                                                : CUBLASLT_EPILOGUE_DEFAULT);
    int no_algo = 0;
    if (bias_ok) { /* the fp32 bias; else (no algorithm) its bf16 copy, D's type */
        const lt_vector bias = {(void *)b, CUDA_R_32F};
        st = lt_matmul(ctx, s, wa, xb, d, epi, bias, d.type == CUDA_R_32F ? NULL : &no_algo);
        if (st == FFNN_OK && no_algo && lt_alignment(b16) >= LT_BIAS_ALIGN) {
            const lt_vector bias16 = {(void *)b16, CUDA_R_16BF};
            st = lt_matmul(ctx, s, wa, xb, d, epi, bias16, NULL);
        } else if (st == FFNN_OK && no_algo) {
            st = ffnn_fail(FFNN_ERR_CUDA, "cuda cublaslt: no bf16 algorithm with a bias "
                           "epilogue for a %zux%zu output", batch, out);
        }
    } else {
        st = lt_matmul(ctx, s, wa, xb, d, epi, LT_NO_VECTOR, NULL);
    }
    if (st != FFNN_OK) return st;
    const size_t n = batch * out;
    const unsigned block = (unsigned)ctx->block_1d;
    if (b != NULL && !bias_ok) { /* bias (and act) by our kernel */
        if (a16 != NULL)
            bias_act_rows_kernel<__nv_bfloat16><<<ffnn_cuda_grid_1d_for(n, block), block, 0,
                                                  ctx->stream>>>((__nv_bfloat16 *)a16, b, n,
                                                                 out, act);
        else
            bias_act_rows_kernel<float><<<ffnn_cuda_grid_1d_for(n, block), block, 0,
                                          ctx->stream>>>(a, b, n, out, act);
        FFNN_CUDA_LAUNCH_CHECK(ctx, "bias_act_rows_kernel");
        return FFNN_OK;
    }
    if (relu || act == FFNN_ACT_IDENTITY) return FFNN_OK;
    if (a16 != NULL) return ffnn_cuda_activation_forward_bf16(ctx, act, a16, n);
    return ffnn_cuda_activation_forward(ctx, act, 0.0f, a, a, n);
}

/* backend.h dense_backward_bf16 (the mixed-precision backward; cublaslt only).
 *   dx16 [batch,in]: D [in, batch] = (W16 as [in,out]) (dz16 as [out,batch]), bf16;
 *                    then f' in place, with dx_db (sum_b dx16) in the same pass
 *   dW [out,in]:     D [in, out] = (x16 as [in,batch]) op_T(dz16 as [out,batch]), fp32,
 *                    BGRADB: db = sum_b dz16 in fp32 (when db is set).
 * dz16's rows are dz_ld apart (the loss's gradient: ffnn_bf16_ld(out), 16-byte rows).
 * Errors: as dense_act_forward_bf16. */
extern "C" ffnn_status ffnn_cuda_dense_backward_bf16(void *vctx, const uint16_t *x16,
                                                     const uint16_t *W16, const uint16_t *dz16,
                                                     size_t dz_ld, uint16_t *dx16, float *dW,
                                                     float *db, float *dx_db, size_t batch,
                                                     size_t in, size_t out,
                                                     ffnn_activation x_act, int dw_side)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "dense_backward_bf16");
    if (batch == 0 || in == 0 || out == 0 || batch > FFNN_CUDA_MAX_DIM ||
        in > FFNN_CUDA_MAX_DIM || out > FFNN_CUDA_MAX_DIM || (int)x_act < 0 ||
        (int)x_act > (int)FFNN_ACT_TANH)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda dense_backward_bf16: batch=%zu in=%zu out=%zu x_act=%d: "
                         "dimensions in 1..%zu, x_act identity, relu, sigmoid or tanh", batch,
                         in, out, (int)x_act, (size_t)FFNN_CUDA_MAX_DIM);
    if (x16 == NULL || dz16 == NULL || dW == NULL || (dx16 != NULL && W16 == NULL) ||
        dz_ld < out || (dx_db != NULL && dx16 == NULL))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda dense_backward_bf16: x16, dz16, dW (W16 for dx16; dx16 for "
                         "dx_db) must not be NULL, dz_ld >= out");
    if (ctx->matmul != FFNN_MATMUL_LIBRARY_LT)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "cuda dense_backward_bf16: the mixed-precision ops run on cuBLASLt "
                         "(strategy cublaslt)");
    cublas_state *s = NULL;
    ffnn_status st = ffnn_cublas_get_state(ctx, &s);
    if (st != FFNN_OK) return st;
    /* the weight gradient beside f' (as ffnn_cuda_dense_backward_lt; the operands
     * are bf16 tensors already: no scratch) */
    const int beside = dw_side && dx16 != NULL && ctx->stream == ctx->main_stream &&
                       ffnn_lt_dw_beside(1, ctx->sm_count, in, out);
    if (dx16 != NULL) {
        const lt_operand wa = {W16, CUDA_R_16BF, CUBLAS_OP_N, in, out, (int64_t)in, 0};
        const lt_operand zb = {dz16, CUDA_R_16BF, CUBLAS_OP_N, out, batch, (int64_t)dz_ld, 0};
        const lt_output d = {dx16, CUDA_R_16BF, in, batch, 0.0f};
        st = lt_matmul(ctx, s, wa, zb, d, CUBLASLT_EPILOGUE_DEFAULT, LT_NO_VECTOR, NULL);
        if (st != FFNN_OK) return st;
    }
    const lt_operand xa = {x16, CUDA_R_16BF, CUBLAS_OP_N, in, batch, (int64_t)in, 0};
    const lt_operand zb = {dz16, CUDA_R_16BF, CUBLAS_OP_T, out, batch, (int64_t)dz_ld, 0};
    const lt_output dw = {dW, CUDA_R_32F, in, out, 0.0f};
    if (beside)
        LT_BESIDE(ctx, lt_weight_grad(ctx, s, xa, zb, dw, db, NULL, dz16, dz_ld, batch, out));
    if (dx16 != NULL) {
        if (dx_db != NULL)
            st = ffnn_cuda_dense_act_bias_grad_bf16(ctx, x_act, x16, dx16, dx_db, batch, in);
        else
            st = ffnn_cuda_activation_backward_bf16(ctx, x_act, x16, dx16, batch * in);
        if (st != FFNN_OK) return st;
    }
    if (beside) return FFNN_OK;
    return lt_weight_grad(ctx, s, xa, zb, dw, db, NULL, dz16, dz_ld, batch, out);
}
