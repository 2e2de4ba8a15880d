/* parallel.h - how ffnn train runs over several ranks (parallel.c): one process
 * (no launcher, no --gpus), the ranks of an MPI launch (mpirun -np R ffnn train),
 * or one process driving N GPUs with one thread each (--gpus N). */
#ifndef FFNN_CLI_PARALLEL_H
#define FFNN_CLI_PARALLEL_H

#include "train_run.h"

/* 1 when this process is a rank of an MPI launch (Open MPI's OMPI_COMM_WORLD_SIZE,
 * PMI_SIZE of MPICH/Slurm, or PMIX_RANK); *size gets the launch's rank count when
 * the environment names it (else 0). */
int ffnn_cli_mpi_launched(int *size);

/* Train as the launch says (above), each rank through ffnn_cli_train_run.
 * gpus: --gpus (0: not given, -1: all visible GPUs). Returns the exit status. */
int ffnn_cli_train_launch(const ffnn_cli_train_options *o, int gpus, ffnn_model *model,
                          ffnn_dataset *train, ffnn_dataset *val, ffnn_dataset *test,
                          const char *data_description);

#endif
