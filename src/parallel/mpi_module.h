/* mpi_module.h - MPI as a run-time module (docs/BUILD.md "The modules"): the MPI
 * communicator (mpi.c, with Open MPI's libmpi) is libffnn-mpi.so, which
 * mpi_module.c loads (backend/module.h ffnn_module_open, RTLD_GLOBAL: Open MPI's
 * plugins look up libmpi's symbols) the first time a multi-process run is asked
 * for (ffnn_comm_create_mpi, ffnn_has_mpi). So libffnn and the programs that link it
 * need no libmpi. The module exports one function, FFNN_MPI_MODULE_ENTRY: given
 * the library's services (ffnn_mpi_host), its table (ffnn_mpi_module), taken only
 * when its version, the headers' checksum (FFNN_MODULE_ABI) and its size equal the
 * library's. Bump FFNN_MPI_MODULE_VERSION when these structs change. */
#ifndef FFNN_PARALLEL_MPI_MODULE_H
#define FFNN_PARALLEL_MPI_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "ffnn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FFNN_MPI_MODULE_VERSION 1u
#define FFNN_MPI_MODULE_ENTRY "ffnn_mpi_module_entry"
#define FFNN_MPI_MODULE_FILE "libffnn-mpi.so"

/* What the library lends the module: its error state, and the functions of
 * libffnn that mpi.c calls (the NCCL bootstrap of a multi-process GPU run). */
typedef struct ffnn_mpi_host {
    uint32_t version;        /* FFNN_MPI_MODULE_VERSION of the library             */
    uint32_t abi;            /* FFNN_MODULE_ABI of the library                     */
    size_t size;             /* sizeof(ffnn_mpi_host)                              */
    ffnn_status (*fail)(ffnn_status status, const char *fmt, ...);
    const char *(*last_error)(void);
    int (*cuda_device_count)(void);
    int (*nccl_built)(void);
    ffnn_status (*nccl_unique_id)(unsigned char *id);
    ffnn_status (*nccl_comm_create)(const unsigned char *id, int size, int rank, int device,
                                    ffnn_comm *host, ffnn_comm **out);
} ffnn_mpi_host;

typedef struct ffnn_mpi_module {
    uint32_t version;        /* FFNN_MPI_MODULE_VERSION of the module              */
    uint32_t abi;            /* FFNN_MODULE_ABI of the module                      */
    size_t size;             /* sizeof(ffnn_mpi_module)                            */
    ffnn_status (*comm_create)(ffnn_device device, ffnn_comm **out); /* ffnn.h's
                                ffnn_comm_create_mpi                                */
} ffnn_mpi_module;

/* The module's side: mpi.c's communicator, mpi_host.c's keeping of the services. */
ffnn_status ffnn_mpi_module_comm_create(ffnn_device device, ffnn_comm **out);
void ffnn_mpi_module_set_host(const ffnn_mpi_host *host);

#ifdef __cplusplus
}
#endif
#endif
