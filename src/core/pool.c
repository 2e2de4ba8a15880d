/* pool.c - the fork-join pool of pool.h: each worker's own job generation, which
 * it polls (C11 atomics) for FFNN_POOL_SPIN rounds, then a condition variable of
 * its own it sleeps on; a count of the job's workers still running it, which the
 * caller waits on the same way. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/pool.h"

/* One poll's pause: a spin-wait hint (no system call). Not sched_yield: on a
 * machine busy with other work each yield can hand the core away for a whole time
 * slice, and a few thousand of them made an epoch 20x slower. */
static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

typedef struct worker {
    struct ffnn_pool *pool;
    int k;            /* its job index (1 .. workers) */
    pthread_t thread;
    atomic_uint go;   /* the generation of the last job given to it */
    pthread_cond_t wake; /* go changed (or stop); waited on with the pool's lock */
} worker;

struct ffnn_pool {
    int workers;
    worker *w;            /* [workers]                                      */
    pthread_mutex_t lock;
    pthread_cond_t done;  /* running reached 0                              */
    unsigned generation;  /* the caller's job counter (the caller's alone)   */
    atomic_int sleepers;  /* workers in (or entering) pthread_cond_wait      */
    atomic_int running;   /* workers still in the current job               */
    atomic_int stop;
    ffnn_pool_fn fn;      /* the current job: fn(user, k) on worker k        */
    void *user;
};

/* A worker runs only the jobs that name it (go = their generation): a job of n < all
 * lanes wakes and waits for its n - 1 workers alone, so the others sleep on (no core
 * taken from other work, no wait for a sleeper's wake-up on the caller's path). */
static void *worker_main(void *arg)
{
    worker *me = arg;
    ffnn_pool *p = me->pool;
    unsigned seen = 0;
    for (;;) {
        unsigned g = atomic_load_explicit(&me->go, memory_order_acquire);
        for (int spin = 0; g == seen && spin < FFNN_POOL_SPIN; spin++) {
            relax();
            g = atomic_load_explicit(&me->go, memory_order_acquire);
        }
        if (g == seen) {
            pthread_mutex_lock(&p->lock);
            atomic_fetch_add(&p->sleepers, 1); /* before the check: pool_run's pairing */
            while ((g = atomic_load(&me->go)) == seen && !atomic_load(&p->stop))
                pthread_cond_wait(&me->wake, &p->lock);
            atomic_fetch_sub(&p->sleepers, 1);
            pthread_mutex_unlock(&p->lock);
        }
        if (atomic_load(&p->stop))
            return NULL;
        seen = g;
        p->fn(p->user, me->k);
        if (atomic_fetch_sub_explicit(&p->running, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->lock);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->lock);
        }
    }
}

ffnn_status ffnn_pool_create(int workers, ffnn_pool **out)
{
    ffnn_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->w = calloc(workers > 0 ? (size_t)workers : 1, sizeof *p->w))) {
        free(p);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for a thread pool");
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 0; i < workers; i++) {
        p->w[i].pool = p;
        p->w[i].k = i + 1;
        atomic_init(&p->w[i].go, 0);
        pthread_cond_init(&p->w[i].wake, NULL);
        int e = pthread_create(&p->w[i].thread, NULL, worker_main, &p->w[i]);
        if (e != 0) {
            pthread_cond_destroy(&p->w[i].wake);
            p->workers = i;
            ffnn_pool_free(p);
            return ffnn_fail(FFNN_ERR_UNSUPPORTED, "thread pool: pthread_create of worker %d "
                             "of %d: %s", i + 1, workers, strerror(e));
        }
        p->workers = i + 1;
    }
    *out = p;
    return FFNN_OK;
}

void ffnn_pool_free(ffnn_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    atomic_store(&p->stop, 1);
    for (int i = 0; i < p->workers; i++)
        pthread_cond_signal(&p->w[i].wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->workers; i++)
        pthread_join(p->w[i].thread, NULL);
    for (int i = 0; i < p->workers; i++)
        pthread_cond_destroy(&p->w[i].wake);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
    free(p->w);
    free(p);
}

void ffnn_pool_run(ffnn_pool *p, int n, ffnn_pool_fn fn, void *user)
{
    if (!p || n <= 1 || p->workers == 0) {
        for (int k = 0; k < n; k++)
            fn(user, k);
        return;
    }
    if (n > p->workers + 1)
        n = p->workers + 1;
    p->fn = fn, p->user = user;
    atomic_store_explicit(&p->running, n - 1, memory_order_relaxed);
    const unsigned g = ++p->generation;
    for (int k = 1; k < n; k++) /* release: fn, user and running before the worker sees g */
        atomic_store_explicit(&p->w[k - 1].go, g, memory_order_release);
    /* A worker counts itself a sleeper before it last reads its go (both seq_cst, as
     * this load after the stores above): either it sees g, or this sees it and wakes
     * it under the lock it waits with. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->lock);
        for (int k = 1; k < n; k++)
            pthread_cond_signal(&p->w[k - 1].wake);
        pthread_mutex_unlock(&p->lock);
    }
    fn(user, 0);
    for (int spin = 0; atomic_load_explicit(&p->running, memory_order_acquire) > 0 &&
                       spin < FFNN_POOL_SPIN; spin++)
        relax();
    if (atomic_load_explicit(&p->running, memory_order_acquire) > 0) {
        pthread_mutex_lock(&p->lock);
        while (atomic_load(&p->running) > 0)
            pthread_cond_wait(&p->done, &p->lock);
        pthread_mutex_unlock(&p->lock);
    }
}
