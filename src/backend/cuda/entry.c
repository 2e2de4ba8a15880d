/* entry.c - the CUDA module's one exported function (module.h): its table, from
 * the CUDA objects' functions. Linked into libffnn-cuda.so (with host.c), and
 * into the programs that carry the CUDA objects themselves (module.c then uses
 * it instead of a file). FFNN_MODULE_NCCL: 1 when src/parallel/nccl.cu is in. */
#include <stddef.h>

#include "backend/module.h"

#ifndef FFNN_MODULE_NCCL
#define FFNN_MODULE_NCCL 0
#endif

/* host.c, in the module only: a program with the CUDA objects linked in has
 * libffnn's own error functions */
#pragma weak ffnn_module_set_host

__attribute__((visibility("default"))) const void *ffnn_cuda_module_entry(const void *arg)
{
    const ffnn_module_host *host = (const ffnn_module_host *)arg;
    static ffnn_cuda_module table = {
        FFNN_CUDA_MODULE_VERSION, FFNN_MODULE_ABI, sizeof(ffnn_cuda_module),
        sizeof(ffnn_backend_ops), FFNN_VERSION, NULL, ffnn_cuda_module_device_count,
        ffnn_cuda_module_device_name, ffnn_cuda_module_set_device,
        ffnn_cuda_module_current_device,
#if FFNN_MODULE_NCCL
        ffnn_nccl_module_unique_id, ffnn_nccl_module_comm_create,
        ffnn_nccl_module_group_create,
#else
        NULL, NULL, NULL,
#endif
    };
    /* the library's services only when it speaks this interface (else the loader
     * refuses the table, and nothing of the module runs) */
    if (host && host->version == FFNN_CUDA_MODULE_VERSION && host->abi == FFNN_MODULE_ABI &&
        host->size == sizeof(ffnn_module_host) && ffnn_module_set_host)
        ffnn_module_set_host(host);
    table.ops = ffnn_cuda_module_ops();
    return &table;
}
