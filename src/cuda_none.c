/* cuda_none.c - stands in for src/cuda/ in a build without nvcc: the library then
 * has the CPU backend only, and says so through these queries. */
#include <stddef.h>

#include "backend.h"
#include "ffnn.h"

const ffnn_backend_ops *ffnn_cuda_backend(void) { return NULL; }

int ffnn_has_cuda(void) { return 0; }

int ffnn_cuda_device_count(void) { return 0; }

void ffnn_cuda_device_name(char *buf, size_t buf_size)
{
    if (buf != NULL && buf_size > 0) buf[0] = '\0';
}
