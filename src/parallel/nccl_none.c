/* nccl_none.c - stands in for nccl.cu in a build without NCCL (no nvcc, or no
 * nccl.h / libnccl under CUDA_HOME, or make NCCL=0): no multi-GPU runs, and the
 * constructors say what is missing. */
#include <stddef.h>

#include "core/error.h"
#include "parallel/comm.h"

int ffnn_nccl_built(void) { return 0; }

static ffnn_status no_nccl(void)
{
    return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                     "this build of ffnn has no NCCL (it needs nvcc and NCCL's nccl.h and "
                     "libnccl under CUDA_HOME, e.g. /usr/local/cuda, at build time; make "
                     "NCCL=1 insists)");
}

ffnn_status ffnn_nccl_unique_id(unsigned char id[FFNN_NCCL_ID_BYTES])
{
    (void)id;
    return no_nccl();
}

ffnn_status ffnn_nccl_comm_create(const unsigned char id[FFNN_NCCL_ID_BYTES], int size,
                                  int rank, int device, ffnn_comm *host, ffnn_comm **out)
{
    (void)id, (void)size, (void)rank, (void)device, (void)out;
    if (host)
        host->ops->destroy(host);
    return no_nccl();
}

ffnn_status ffnn_nccl_group_create(int gpus, ffnn_comm **comms)
{
    (void)gpus, (void)comms;
    return no_nccl();
}
