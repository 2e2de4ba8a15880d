/* mpi_none.c - stands in for mpi.c in a build without MPI (mpicc was not found
 * or make MPI=0): the library then has no multi-process runs, and says so. */
#include <stddef.h>

#include "core/error.h"
#include "parallel/comm.h"

int ffnn_mpi_built(void) { return 0; }

ffnn_status ffnn_comm_create_mpi(ffnn_device device, ffnn_comm **out)
{
    (void)device, (void)out;
    return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                     "this build of ffnn has no MPI (mpicc was not found at build time): "
                     "install Open MPI (Debian: apt-get install openmpi-bin libopenmpi-dev) "
                     "and rebuild (make MPI=1)");
}
