/*
 * fused.cu - the optional fused dense ops of the "fused" strategy (backend.h
 * dense_act_forward, dense_backward_fused), each matmul one launch of gemm.cu's
 * register-blocked SGEMM (--precision tf32 / bf16: gemm_mma.cu's tensor-core
 * kernel, through ffnn_cuda_gemm) with the rest of the op in its epilogue:
 *
 *   forward   a  = act(x W^T + b)       one kernel:  A = x [batch,in],
 *                                        B = W [out,in] transposed, bias + act
 *   backward  dx = (dz W) * f'(x)        one kernel:  A = dz [batch,out],
 *                                        B = W [out,in], dact epilogue
 *             dW = dz^T x, db = sum_b dz one kernel:  A = dz transposed, B = x;
 *                                        the blocks of column tile 0 also sum
 *                                        the rows of dz^T (= db, batch order)
 *             sgd: W -= lr dW, b -= lr db in the same kernel's epilogue
 *                                        (ffnn_dev_sgd, update.cu's rounding:
 *                                        p - (lr * g), product rounded)
 *
 * dx is launched first, on the same stream, so it reads W before the update.
 * Values: every output is one fmaf chain over k in order (the tiled kernels'
 * order: the same values expected, not tested bit for bit), bias added and
 * activation applied with device_math.cuh's formulas (as activation.cu); db is
 * summed in the CPU reference's order (bit-identical to it, tests/test_fused.c)
 * unless the plan splits K (backend/gemm_plan.h: small outputs with deep K, e.g.
 * the weight gradient of a 128 -> 128 layer at batch 1024), where each chunk is
 * summed in that order and the chunks added in ascending order.
 * Deterministic: no atomics.
 */
#include "backend/gemm_plan.h"
#include "gemm.cuh"

/* a = act(x W^T (+ b)).  x [batch,in], W [out,in], b [out] or NULL, a [batch,out].
 * Errors: FFNN_ERR_INVALID_ARGUMENT (NULL ctx/pointer, a dimension 0 or above
 * FFNN_CUDA_MAX_DIM, unknown act), FFNN_ERR_CUDA (launch; poisoned context). */
extern "C" ffnn_status ffnn_cuda_dense_act_forward(void *vctx, const float *x, const float *W,
                                                   const float *b, float *a, size_t batch,
                                                   size_t in, size_t out, ffnn_activation act)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "dense_act_forward");
    ffnn_status st = ffnn_cuda_check_dense_dims("dense_act_forward", batch, in, out);
    if (st != FFNN_OK) return st;
    if ((st = ffnn_cuda_check_fused_act("dense_act_forward", "activation", act)) != FFNN_OK)
        return st;
    if (x == NULL || W == NULL || a == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda dense_act_forward: x, W and a must not be NULL");
    if (ctx->matmul == FFNN_MATMUL_LIBRARY_LT) /* the cublaslt strategy */
        return ffnn_cuda_dense_act_forward_lt(ctx, x, W, b, a, batch, in, out, act);
    ffnn_gemm_epilogue ep;
    memset(&ep, 0, sizeof ep);
    ep.bias = b;
    ep.act = act;
    /* a [batch,out] = x [batch,in] (W [out,in])^T */
    return ffnn_cuda_gemm(ctx, x, W, a, (int)batch, (int)out, (int)in, 0, 1, &ep,
                          FFNN_GEMM_AUTO);
}

/* dx = (dz W) * f'(x) [batch,in] (unless dx NULL); dW = dz^T x [out,in];
 * db = sum_b dz [out] (unless NULL); dx_db = sum_b dx [in] (unless NULL; here a
 * second kernel over dx: the strategies on these kernels pass NULL); with sgd
 * (kind FFNN_OPT_SGD): W -= lr dW, b -= lr db (b may be NULL: no bias).
 * x [batch,in] (x_act's output), W [out,in], dz [batch,out]; xt (or NULL) x
 * prepared (backend.h prepare_xt: x^T [in,batch]; in tf32x3 its split x^T), on
 * cuBLASLt only. dw_side: as backend.h (here: cuBLASLt only; the
 * own kernels queue everything in order).
 * Errors: FFNN_ERR_INVALID_ARGUMENT (NULL ctx, x, dz, dW, W when dx or sgd needs
 * it, dx_db without dx; dims; unknown x_act; sgd of another kind; xt off
 * cuBLASLt), FFNN_ERR_CUDA. */
extern "C" ffnn_status ffnn_cuda_dense_backward_fused(void *vctx, const float *x, float *W,
                                                      float *b, const float *dz, float *dx,
                                                      float *dW, float *db, float *dx_db,
                                                      size_t batch,
                                                      size_t in, size_t out,
                                                      ffnn_activation x_act,
                                                      const ffnn_optimizer_step *sgd,
                                                      const float *xt, int dw_side)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "dense_backward_fused");
    ffnn_status st = ffnn_cuda_check_dense_dims("dense_backward_fused", batch, in, out);
    if (st != FFNN_OK) return st;
    if ((st = ffnn_cuda_check_fused_act("dense_backward_fused", "x_act", x_act)) != FFNN_OK)
        return st;
    if (x == NULL || dz == NULL || dW == NULL || ((dx != NULL || sgd != NULL) && W == NULL))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda dense_backward_fused: x, dz, dW (and W when dx or sgd is "
                         "wanted) must not be NULL");
    if (dx_db != NULL && dx == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda dense_backward_fused: dx_db (the sums of dx) needs dx");
    if (sgd != NULL && sgd->kind != FFNN_OPT_SGD)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda dense_backward_fused: the fused update is plain SGD only "
                         "(optimizer kind %d)", (int)sgd->kind);

    if (xt != NULL && ctx->matmul != FFNN_MATMUL_LIBRARY_LT)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda dense_backward_fused: a prepared x (xt) is taken on cuBLASLt "
                         "only (the cublaslt strategy)");
    if (ctx->matmul == FFNN_MATMUL_LIBRARY_LT) /* the cublaslt strategy */
        return ffnn_cuda_dense_backward_lt(ctx, x, W, b, dz, dx, dW, db, dx_db, batch, in, out,
                                           x_act, sgd, xt, dw_side);
    if (dx != NULL) { /* first: reads W before the update below */
        ffnn_gemm_epilogue ep;
        memset(&ep, 0, sizeof ep);
        if (x_act != FFNN_ACT_IDENTITY) {
            ep.dact_x = x;
            ep.dact = x_act;
        }
        /* dx [batch,in] = dz [batch,out] W [out,in] */
        st = ffnn_cuda_gemm(ctx, dz, W, dx, (int)batch, (int)in, (int)out, 0, 0, &ep,
                            FFNN_GEMM_AUTO);
        if (st == FFNN_OK && dx_db != NULL)
            st = ffnn_cuda_dense_bias_grad(ctx, dx, dx_db, batch, in);
        if (st != FFNN_OK) return st;
    }

    ffnn_gemm_epilogue ep;
    memset(&ep, 0, sizeof ep);
    ep.rowsum = db;
    if (sgd != NULL) {
        ep.lr = sgd->lr;
        ep.sgd_param = W;
        ep.rowsum_param = b; /* db is summed for b's update even when db is NULL */
    }
    /* dW [out,in] = dz^T [out,batch] x [batch,in]; row sums of dz^T = db */
    return ffnn_cuda_gemm(ctx, dz, x, dW, (int)out, (int)in, (int)batch, 1, 0, &ep,
                          FFNN_GEMM_AUTO);
}

/* backend.h dense_backward_wants_xt: on cuBLASLt, 1 (x^T) in tf32 where the weight
 * gradient takes x^T (the shapes where the sm90 kernels, which take K-major operands
 * only, measured faster) and a copy beside the step measured faster than the op's
 * own (gemm_plan.h ffnn_lt_xt_from_gather); 3 in tf32x3 at every shape (its split
 * x^T, which the weight gradient would write itself on the step's chain otherwise:
 * cublas.cu "tf32x3"); else 0. */
extern "C" int ffnn_cuda_dense_backward_wants_xt(void *vctx, size_t batch, size_t in, size_t out)
{
    const ffnn_cuda_ctx *ctx = (const ffnn_cuda_ctx *)vctx;
    if (ctx == NULL || ctx->matmul != FFNN_MATMUL_LIBRARY_LT) return 0;
    if (ctx->precision == FFNN_PRECISION_TF32X3) return 3;
    return ffnn_lt_xt_from_gather(ctx->precision == FFNN_PRECISION_TF32, batch, in, out);
}
