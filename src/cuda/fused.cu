/* fused.cu - placeholder, replaced by the fused-kernels work. */
#include "common.cuh"

extern "C" ffnn_status ffnn_cuda_dense_act_forward(void *ctx, const float *x, const float *W,
                                                   const float *b, float *a, size_t batch,
                                                   size_t in, size_t out, ffnn_activation act)
{
    (void)ctx, (void)x, (void)W, (void)b, (void)a, (void)batch, (void)in, (void)out, (void)act;
    return ffnn_fail(FFNN_ERR_UNSUPPORTED, "cuda dense_act_forward: not built yet");
}

extern "C" ffnn_status ffnn_cuda_dense_backward_fused(void *ctx, const float *x, float *W,
                                                      float *b, const float *dz, float *dx,
                                                      float *dW, float *db, size_t batch,
                                                      size_t in, size_t out,
                                                      ffnn_activation x_act,
                                                      const ffnn_optimizer_step *sgd)
{
    (void)ctx, (void)x, (void)W, (void)b, (void)dz, (void)dx, (void)dW, (void)db, (void)batch;
    (void)in, (void)out, (void)x_act, (void)sgd;
    return ffnn_fail(FFNN_ERR_UNSUPPORTED, "cuda dense_backward_fused: not built yet");
}
