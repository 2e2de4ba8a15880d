/* cuda_none.c - stands in for src/backend/cuda/ in a build without nvcc: the library
 * then has the CPU backends only, and says so through these queries. (The kernel lab
 * and the benchmarks, lab/ and bench/, need none: without CUDA their GPU code is not
 * compiled.) */
#include <stddef.h>

#include "backend/backend.h"
#include "core/error.h"
#include "ffnn.h"

const ffnn_backend_ops *ffnn_cuda_backend(void) { return NULL; }

int ffnn_has_cuda(void) { return 0; }

int ffnn_cuda_device_count(void) { return 0; }

void ffnn_cuda_device_name(char *buf, size_t buf_size)
{
    if (buf != NULL && buf_size > 0) buf[0] = '\0';
}

/* The shared local1d forward entry point (core/local1d.h): unsupported without CUDA. */
ffnn_status ffnn_cuda_local1d_forward_stream(ffnn_local1d_variant variant, void *stream,
                                      const float *x, const float *W, const float *bias,
                                      float *z, size_t batch, size_t N, size_t R,
                                      ffnn_local1d_padding padding, ffnn_activation act)
{
    (void)variant, (void)stream, (void)x, (void)W, (void)bias, (void)z, (void)batch;
    (void)N, (void)R, (void)padding, (void)act;
    return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                     "ffnn_cuda_local1d_forward_stream: this build of ffnn has no CUDA (nvcc was "
                     "not found at build time)");
}
