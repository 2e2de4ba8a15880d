/* persistent.cu - placeholder. */
#include "common.cuh"

extern "C" ffnn_status ffnn_cuda_train_persistent(void *ctx, const ffnn_persistent_job *job)
{
    (void)ctx, (void)job;
    return ffnn_fail(FFNN_ERR_UNSUPPORTED, "cuda persistent: not built yet");
}

extern "C" int ffnn_cuda_persistent_supported(void *ctx, const ffnn_persistent_job *job)
{
    (void)ctx, (void)job;
    ffnn_fail(FFNN_ERR_UNSUPPORTED, "cuda persistent: not built yet");
    return 0;
}
