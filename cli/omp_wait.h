/* omp_wait.h - the OpenMP waiting policy of the ffnn program (omp_wait.c). */
#ifndef FFNN_CLI_OMP_WAIT_H
#define FFNN_CLI_OMP_WAIT_H

/* libgomp's spin count for the ffnn program: how long a thread waiting for work
 * spins (busy, "active") before it sleeps in the kernel ("passive"). With libgomp's
 * default (300,000 spins when OMP_WAIT_POLICY is unset) the waiting threads of a
 * machine busy with other work take the cores their partners need and an epoch
 * becomes 10-40x slower; 3,000 spins kept the idle machine's speed (median) and came
 * within 1.0-1.7x of passive waiting's time on a busy one: docs/PERFORMANCE.md
 * "Waiting policy" has the measurements (bench/wait_policy.sh). */
#define FFNN_CLI_GOMP_SPINCOUNT "3000"

/* Unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT (theirs always wins), set
 * GOMP_SPINCOUNT=FFNN_CLI_GOMP_SPINCOUNT and re-execute the program (libgomp reads
 * its environment once, when it is loaded: before main). Returns only when nothing
 * is to be done or the re-exec failed (then libgomp's default stays). */
void ffnn_cli_omp_wait_policy(char **argv);

#endif
