/* omp_wait.c - the ffnn program's OpenMP waiting policy (omp_wait.h): a spin count
 * set in the environment before libgomp reads it, by re-executing the program
 * once. The library itself never touches the environment. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <unistd.h>

#include "omp_wait.h"

void ffnn_cli_omp_wait_policy(char **argv)
{
#ifdef _OPENMP
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT"))
        return; /* the user's choice (or this program's, after the re-exec) */
    if (setenv("GOMP_SPINCOUNT", FFNN_CLI_GOMP_SPINCOUNT, 0) != 0)
        return;
    execv("/proc/self/exe", argv);
    unsetenv("GOMP_SPINCOUNT"); /* no /proc: run on with libgomp's default */
#else
    (void)argv; /* no OpenMP: nothing waits */
#endif
}
