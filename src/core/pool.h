/* pool.h - a fork-join pool of worker threads owned by one object (a predictor, a
 * sweep, an omp backend context):
 * ffnn_pool_run(pool, n, fn, user) runs fn(user, k) once for each k < n and returns
 * when all are done: k = 0 on the calling thread, k >= 1 on whichever of workers
 * 1 .. n - 1 (all of them if fewer) or another thread of the job claims it
 * first - each thread, its own part done, takes the parts no worker has started,
 * so a worker that wakes late (no free core on a busy machine) delays nothing.
 * fn must not depend on the thread it runs on: a part's index names its data.
 * The other workers are not woken (a job of 3 lanes in a pool of 16 wakes 2).
 * Workers wait for work spinning briefly (FFNN_POOL_SPIN polls, each a pause
 * instruction: some tens of microseconds in all), then sleep on
 * a condition variable: a machine busy with other work loses no CPU to them,
 * whatever GOMP_SPINCOUNT says (OpenMP's teams spin 300,000 polls by default).
 * One caller at a time (the pool belongs to its object's thread). */
#ifndef FFNN_CORE_POOL_H
#define FFNN_CORE_POOL_H

#include "ffnn.h"

#define FFNN_POOL_SPIN 4000

typedef struct ffnn_pool ffnn_pool;
typedef void (*ffnn_pool_fn)(void *user, int k);

/* A pool of workers threads (>= 0) beside the caller. Errors: FFNN_ERR_NO_MEMORY,
 * FFNN_ERR_UNSUPPORTED when a thread cannot be started (pthread_create's error). */
ffnn_status ffnn_pool_create(int workers, ffnn_pool **out);
void ffnn_pool_free(ffnn_pool *p);
/* fn(user, k) once for each k < n, at most workers + 1 at a time. */
void ffnn_pool_run(ffnn_pool *p, int n, ffnn_pool_fn fn, void *user);

#endif
