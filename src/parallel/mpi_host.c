/* mpi_host.c - inside the MPI module (mpi_module.h): the functions of libffnn that
 * mpi.c calls, through the services of the libffnn that loaded it, so that its
 * messages are that library's (ffnn_last_error, core/error_module.c) and the NCCL
 * bootstrap reaches that library's CUDA module. Linked into libffnn-mpi.so only. */
#include "core/error_module.h"
#include "parallel/comm.h"
#include "parallel/mpi_module.h"

/* Set once, by the entry point, before any other function of the module runs. */
static const ffnn_mpi_host *lib;

void ffnn_mpi_module_set_host(const ffnn_mpi_host *host)
{
    lib = host;
    ffnn_error_module_set(host ? host->fail : NULL, host ? host->last_error : NULL);
}

int ffnn_cuda_device_count(void) { return lib ? lib->cuda_device_count() : 0; }

int ffnn_nccl_built(void) { return lib ? lib->nccl_built() : 0; }

ffnn_status ffnn_nccl_unique_id(unsigned char id[FFNN_NCCL_ID_BYTES])
{
    return lib ? lib->nccl_unique_id(id) : FFNN_ERR_UNSUPPORTED;
}

ffnn_status ffnn_nccl_comm_create(const unsigned char id[FFNN_NCCL_ID_BYTES], int size,
                                  int rank, int device, ffnn_comm *host, ffnn_comm **out)
{
    return lib ? lib->nccl_comm_create(id, size, rank, device, host, out) : FFNN_ERR_UNSUPPORTED;
}
