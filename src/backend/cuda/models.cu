/*
 * models.cu - the ops over a model axis (backend.h ffnn_ops_models): the fused
 * dense ops of fused.cu for `count` models of one shape, each matmul one launch of
 * gemm.cu's kernel with the model index in the grid's z (ffnn_cuda_gemm_models),
 * the rest of the op in its epilogue as fused.cu has it:
 *
 *   forward   a  = act(x W^T + b)       A = x [batch,in], B = W [out,in]^T
 *   backward  dx = (dz W) * f'(x)        A = dz [batch,out], B = W [out,in]
 *             dW = dz^T x, db = sum_b dz A = dz^T, B = x; row sums of dz^T = db;
 *             W -= lr[z] dW, b -= lr[z] db in the same epilogue
 *
 * per model z: x + z x_stride, W + z p_stride, b + z p_stride, a / dx / dz + z
 * batch width. The loss over the models is loss.cu's (ffnn_cuda_loss_models).
 * Method: HFTA (Wang et al., "Horizontally Fused Training Array", MLSys 2022) -
 * the models of a sweep fused into one kernel per op - on the own SGEMM.
 */
#include "gemm.cuh"

static ffnn_status models_dims(const char *op, size_t batch, size_t in, size_t out,
                               size_t count)
{
    if (count == 0 || count > FFNN_CUDA_MAX_GRID_YZ)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda %s: %zu models (1..%u)", op, count,
                         (unsigned)FFNN_CUDA_MAX_GRID_YZ);
    return ffnn_cuda_check_dense_dims(op, batch, in, out);
}

extern "C" ffnn_status ffnn_cuda_models_dense_act_forward(void *vctx, const float *x,
                                                          size_t x_stride, const float *W,
                                                          const float *b, size_t p_stride,
                                                          float *a, size_t batch, size_t in,
                                                          size_t out, ffnn_activation act,
                                                          size_t count)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "models dense_act_forward");
    ffnn_status st = models_dims("models dense_act_forward", batch, in, out, count);
    if (st == FFNN_OK)
        st = ffnn_cuda_check_fused_act("models dense_act_forward", "activation", act);
    if (st != FFNN_OK) return st;
    if (x == NULL || W == NULL || a == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda models dense_act_forward: x, W and a must not be NULL");
    ffnn_gemm_epilogue ep;
    memset(&ep, 0, sizeof ep);
    ep.bias = b;
    ep.act = act;
    ffnn_gemm_models z;
    memset(&z, 0, sizeof z);
    z.count = (int)count;
    z.a = x_stride;
    z.b = p_stride;
    z.c = batch * out;
    z.bias = p_stride;
    /* a [batch,out] = x [batch,in] (W [out,in])^T, per model */
    return ffnn_cuda_gemm_models(ctx, x, W, a, (int)batch, (int)out, (int)in, 0, 1, &ep, &z,
                                 FFNN_GEMM_AUTO);
}

extern "C" ffnn_status ffnn_cuda_models_dense_backward_sgd(
    void *vctx, const float *x, size_t x_stride, float *W, float *b, float *dW,
    size_t p_stride, const float *dz, float *dx, ffnn_activation x_act, const float *lr,
    size_t batch, size_t in, size_t out, size_t count)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "models dense_backward_sgd");
    ffnn_status st = models_dims("models dense_backward_sgd", batch, in, out, count);
    if (st == FFNN_OK)
        st = ffnn_cuda_check_fused_act("models dense_backward_sgd", "x_act", x_act);
    if (st != FFNN_OK) return st;
    if (x == NULL || W == NULL || dW == NULL || dz == NULL || lr == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda models dense_backward_sgd: x, W, "
                         "dW, dz and lr must not be NULL");
    if (dx != NULL) { /* first: reads W before the update below */
        ffnn_gemm_epilogue ep;
        memset(&ep, 0, sizeof ep);
        if (x_act != FFNN_ACT_IDENTITY) {
            ep.dact_x = x;
            ep.dact = x_act;
        }
        ffnn_gemm_models z;
        memset(&z, 0, sizeof z);
        z.count = (int)count;
        z.a = batch * out;
        z.b = p_stride;
        z.c = batch * in;
        z.dact_x = x_stride;
        /* dx [batch,in] = dz [batch,out] W [out,in], per model */
        if ((st = ffnn_cuda_gemm_models(ctx, dz, W, dx, (int)batch, (int)in, (int)out, 0, 0,
                                        &ep, &z, FFNN_GEMM_AUTO)) != FFNN_OK)
            return st;
    }
    ffnn_gemm_epilogue ep;
    memset(&ep, 0, sizeof ep);
    ep.sgd_param = W;
    ep.rowsum_param = b;
    ffnn_gemm_models z;
    memset(&z, 0, sizeof z);
    z.count = (int)count;
    z.a = batch * out;
    z.b = x_stride;
    z.c = p_stride;
    z.sgd_param = p_stride;
    z.rowsum_param = p_stride;
    z.lr = lr;
    z.no_c = 1; /* dW: only the update reads it */
    /* dW [out,in] = dz^T [out,batch] x [batch,in]; row sums of dz^T = db, per model */
    return ffnn_cuda_gemm_models(ctx, dz, x, dW, (int)out, (int)in, (int)batch, 1, 0, &ep, &z,
                                 FFNN_GEMM_AUTO);
}
