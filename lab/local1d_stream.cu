/* local1d_stream.cu - ffnn_lab_local1d_forward_stream (local1d_stream.h): the
 * backend's local1d forward kernels and launch (src/backend/cuda/local1d_launch.cuh,
 * a copy of its own in this object), on a caller's stream, with programmatic
 * dependent launch and no backend context. */
#include "backend/cuda/local1d_launch.cuh"
#include "local1d_stream.h"

extern "C" ffnn_status ffnn_lab_local1d_forward_stream(ffnn_local1d_variant variant,
                                                       void *stream, const float *x,
                                                       const float *W, const float *bias,
                                                       float *z, size_t batch, size_t N,
                                                       size_t R, ffnn_local1d_padding padding,
                                                       ffnn_activation act)
{
    if (!ffnn_has_cuda())
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "ffnn_lab_local1d_forward_stream: this program has no CUDA backend");
    if (variant != FFNN_LOCAL1D_GLOBAL && variant != FFNN_LOCAL1D_SHARED)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_lab_local1d_forward_stream: unknown variant %d (expected global 0 "
                         "or shared 1)", (int)variant);
    size_t M = 0;
    ffnn_status st = check_forward("local1d forward", "ffnn_lab_local1d_forward_stream", batch,
                                   N, R, padding, act, x, W, z, &M);
    if (st != FFNN_OK) return st;
    return forward_launch(NULL, (cudaStream_t)stream, variant, x, W, bias, z, batch, N, M, R,
                          ffnn_local1d_pad(R, padding), act, 1);
}
