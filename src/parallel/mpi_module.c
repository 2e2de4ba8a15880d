/* mpi_module.c - ffnn_comm_create_mpi and ffnn_has_mpi (ffnn.h) through the MPI
 * module (mpi_module.h), loaded on the first call (once per process: the table or
 * the message naming each file tried, kept from then on, as dlopen keeps its
 * handle); without it they refuse and say which files were tried and why. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/module.h"
#include "core/error.h"
#include "parallel/comm.h"
#include "parallel/mpi_module.h"

enum { MPI_ERROR_SIZE = 3072 };

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const ffnn_mpi_module *loaded;
static char load_error[MPI_ERROR_SIZE];

static const ffnn_mpi_host host = {
    FFNN_MPI_MODULE_VERSION, FFNN_MODULE_ABI, sizeof(ffnn_mpi_host), ffnn_fail,
    ffnn_last_error, ffnn_cuda_device_count, ffnn_nccl_built, ffnn_nccl_unique_id,
    ffnn_nccl_comm_create,
};

static int table_matches(const void *table, char *why, size_t why_size)
{
    const ffnn_mpi_module *m = (const ffnn_mpi_module *)table;
    if (!m || m->version != FFNN_MPI_MODULE_VERSION || m->abi != FFNN_MODULE_ABI ||
        m->size != sizeof(ffnn_mpi_module) || !m->comm_create) {
        snprintf(why, why_size, "a module of another build of ffnn (interface %u, checksum "
                 "%u; this libffnn: interface %u, checksum %u)", m ? (unsigned)m->version : 0u,
                 m ? (unsigned)m->abi : 0u, (unsigned)FFNN_MPI_MODULE_VERSION,
                 (unsigned)FFNN_MODULE_ABI);
        return 0;
    }
    return 1;
}

static const ffnn_module_spec mpi_spec = {
    FFNN_MPI_MODULE_FILE, "FFNN_MPI_MODULE", FFNN_MPI_MODULE_ENTRY, 1, &host, table_matches,
};

static void load(void)
{
    snprintf(load_error, sizeof load_error, "no MPI module (%s) could be loaded: ",
             FFNN_MPI_MODULE_FILE);
    loaded = (const ffnn_mpi_module *)ffnn_module_open(&mpi_spec, load_error, sizeof load_error);
    size_t used = strlen(load_error);
    if (loaded)
        load_error[0] = '\0';
#ifdef FFNN_BUILT_MPI_MODULE
    else
        snprintf(load_error + used, sizeof load_error - used, " (make builds it beside libffnn)");
#else
    else
        snprintf(load_error + used, sizeof load_error - used,
                 "; this build of ffnn made no MPI module (mpicc was not found at build "
                 "time): install Open MPI (Debian: apt-get install openmpi-bin "
                 "libopenmpi-dev) and rebuild (make MPI=1)");
#endif
}

static const ffnn_mpi_module *module(void)
{
    pthread_once(&load_once, load);
    return loaded;
}

int ffnn_mpi_built(void) { return module() != NULL; }

ffnn_status ffnn_comm_create_mpi(ffnn_device device, ffnn_comm **out)
{
    const ffnn_mpi_module *m = module();
    if (!m)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "MPI: %s", load_error);
    return m->comm_create(device, out);
}
