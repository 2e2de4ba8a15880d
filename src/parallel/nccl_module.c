/* nccl_module.c - the NCCL functions of comm.h, forwarded to the CUDA module
 * (backend/module.h), which has them when it was built with NCCL (nccl.cu);
 * without the module, or without NCCL in it, they refuse and say which. */
#include <stddef.h>

#include "backend/module.h"
#include "core/error.h"
#include "parallel/comm.h"

static const ffnn_cuda_module *with_nccl(void)
{
    const ffnn_cuda_module *m = ffnn_cuda_module_get();
    return m && m->nccl_unique_id && m->nccl_comm_create && m->nccl_group_create ? m : NULL;
}

int ffnn_nccl_built(void) { return with_nccl() != NULL; }

static ffnn_status no_nccl(void)
{
    if (!ffnn_cuda_module_get())
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "NCCL: %s", ffnn_cuda_module_error());
    return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                     "this build of ffnn has no NCCL (it needs nvcc and NCCL's nccl.h and "
                     "libnccl under CUDA_HOME, e.g. /usr/local/cuda, at build time; make "
                     "NCCL=1 insists)");
}

ffnn_status ffnn_nccl_unique_id(unsigned char id[FFNN_NCCL_ID_BYTES])
{
    const ffnn_cuda_module *m = with_nccl();
    return m ? m->nccl_unique_id(id) : no_nccl();
}

ffnn_status ffnn_nccl_comm_create(const unsigned char id[FFNN_NCCL_ID_BYTES], int size,
                                  int rank, int device, ffnn_comm *host, ffnn_comm **out)
{
    const ffnn_cuda_module *m = with_nccl();
    if (m)
        return m->nccl_comm_create(id, size, rank, device, host, out);
    if (host)
        host->ops->destroy(host);
    return no_nccl();
}

ffnn_status ffnn_nccl_group_create(int gpus, ffnn_comm **comms)
{
    const ffnn_cuda_module *m = with_nccl();
    return m ? m->nccl_group_create(gpus, comms) : no_nccl();
}
