/* omp_wait.h - the OpenMP waiting policy of the ffnn program (omp_wait.c). */
#ifndef FFNN_CLI_OMP_WAIT_H
#define FFNN_CLI_OMP_WAIT_H

/* libgomp's spin count for the ffnn program: how long a thread waiting for work
 * spins (busy, "active") before it sleeps in the kernel ("passive"). libgomp's
 * default (300,000 spins when OMP_WAIT_POLICY is unset) keeps waiting threads on
 * their cores for milliseconds: on a machine busy with other work they take the
 * cores their partners need and an epoch becomes 10-40x slower. This count keeps
 * an idle machine's speed and a busy machine's: README "CPU backends" has the
 * measurements (bench/wait_policy.sh). */
#define FFNN_CLI_GOMP_SPINCOUNT "1000"

/* Unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT (theirs always wins), set
 * GOMP_SPINCOUNT=FFNN_CLI_GOMP_SPINCOUNT and re-execute the program (libgomp reads
 * its environment once, when it is loaded: before main). Returns only when nothing
 * is to be done or the re-exec failed (then libgomp's default stays). */
void ffnn_cli_omp_wait_policy(char **argv);

#endif
