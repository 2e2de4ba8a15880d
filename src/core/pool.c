/* pool.c - the fork-join pool of pool.h: each worker's own job generation, which
 * it polls (C11 atomics) for FFNN_POOL_SPIN rounds, then a condition variable of
 * its own it sleeps on; each part claimed once, by its worker or by whichever
 * other thread of the job comes first; a count of the parts done, which the
 * caller waits on the same way.
 *
 * Worker k claims part k (the same part, so the same data - a slice of a layer's
 * weights - each job: it stays in that core's cache), then the parts beyond the
 * workers' from a shared counter, then the parts of the other workers that have
 * not started yet (from its own up, around). The caller, its own part done,
 * claims the same (from the last part down): no thread waits for a worker that
 * has not started (no free core on a busy machine, a deep sleep state) - the
 * threads that do run take its part, and that worker finds it taken and leaves.
 * The job's description (fn, user, parts) is read by the workers that entered it
 * only: a worker counts itself in (`inside`), then reads `open`; the caller
 * closes the job (`open` 0) before it waits for `inside` to drain and writes the
 * next job - both seq_cst, so either the worker sees the job closed and leaves
 * without reading it, or the caller sees the worker in. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <sched.h>
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
    int k;               /* its part (1 .. workers) */
    pthread_t thread;
    atomic_uint go;      /* the generation of the last job that named it */
    atomic_uint claim;   /* the generation of the last job whose part k was claimed */
    pthread_cond_t wake; /* go changed (or stop); waited on with the pool's lock */
} worker;

struct ffnn_pool {
    int workers;
    worker *w;            /* [workers]                                       */
    pthread_mutex_t lock;
    pthread_cond_t done;  /* the job's last part finished                     */
    unsigned generation;  /* the caller's job counter (the caller's alone)    */
    atomic_uint open;     /* the generation of the job being run, 0: none     */
    atomic_int inside;    /* workers that entered a job and have not left     */
    atomic_int next;      /* the job's next unclaimed part beyond the workers' */
    atomic_int finished;  /* parts 1 .. parts - 1 done                        */
    atomic_int sleepers;  /* workers in (or entering) pthread_cond_wait       */
    atomic_int stop;
    ffnn_pool_fn fn;      /* the job: fn(user, k) for k < parts (k = 0: the caller) */
    void *user;
    int parts;
};

/* Part k of job g if no one has claimed it yet: 1 if run. (A load first: a
 * part already taken costs its line no write.) */
static int claim_part(ffnn_pool *p, int k, unsigned g)
{
    atomic_uint *c = &p->w[k - 1].claim;
    if (atomic_load_explicit(c, memory_order_relaxed) == g ||
        atomic_exchange_explicit(c, g, memory_order_relaxed) == g)
        return 0;
    p->fn(p->user, k);
    return 1;
}

/* The workers a job of n parts names: 1 .. min(n - 1, workers). */
static int named_workers(const ffnn_pool *p, int n)
{
    return n - 1 < p->workers ? n - 1 : p->workers;
}

/* The parts 1 .. named of job g that no one has claimed yet, from the one after
 * part k around (k = 0, the caller: from the last down, away from the workers
 * that look from their own part up); the number run. */
static int claim_rest(ffnn_pool *p, int k, int named, unsigned g)
{
    int ran = 0;
    if (k == 0)
        for (int q = named; q >= 1; q--)
            ran += claim_part(p, q, g);
    else
        for (int i = 1; i < named; i++)
            ran += claim_part(p, (k - 1 + i) % named + 1, g);
    return ran;
}

/* The open job's parts beyond the workers' (parts > workers + 1) from the shared
 * counter until none is left; the number run. */
static int claim_extra(ffnn_pool *p)
{
    int ran = 0;
    if (p->parts <= p->workers + 1) /* none: no traffic on the shared counter */
        return 0;
    for (int k; (k = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed)) < p->parts;
         ran++)
        p->fn(p->user, k);
    return ran;
}

/* Counts n parts done (release: their writes before the caller sees the count);
 * the one that finishes the job wakes the caller if it sleeps. */
static void count_done(ffnn_pool *p, int n)
{
    if (n == 0)
        return;
    const int before = atomic_fetch_add_explicit(&p->finished, n, memory_order_acq_rel);
    if (before + n == p->parts - 1) {
        pthread_mutex_lock(&p->lock);
        pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->lock);
    }
}

/* A worker runs only the jobs that name it (go = their generation): a job of n < all
 * lanes wakes n - 1 workers, so the others sleep on (no core taken from other work). */
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
        atomic_fetch_add(&p->inside, 1);  /* seq_cst: before the load of open */
        if (atomic_load(&p->open) == g) { /* else closed or a later job: leave */
            const int named = named_workers(p, p->parts);
            count_done(p, claim_part(p, me->k, g) + claim_extra(p) +
                              claim_rest(p, me->k, named, g));
        }
        atomic_fetch_sub_explicit(&p->inside, 1, memory_order_release);
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
        atomic_init(&p->w[i].claim, 0);
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
    const int named = named_workers(p, n);
    /* The last job's late workers: those that entered it before it closed claim
     * nothing (its parts are all taken) and leave; a few instructions, unless the
     * system has just taken the core of one. */
    for (int spin = 0; atomic_load(&p->inside) > 0; spin++)
        if (spin < FFNN_POOL_SPIN)
            relax();
        else
            sched_yield();
    p->fn = fn, p->user = user, p->parts = n;
    atomic_store_explicit(&p->next, p->workers + 1, memory_order_relaxed);
    atomic_store_explicit(&p->finished, 0, memory_order_relaxed);
    unsigned g = ++p->generation;
    if (g == 0) /* 0 means closed */
        g = ++p->generation;
    atomic_store(&p->open, g); /* seq_cst, a release: the job before its generation */
    for (int k = 0; k < named; k++)
        atomic_store_explicit(&p->w[k].go, g, memory_order_release);
    /* A worker counts itself a sleeper before it last reads its go (both seq_cst, as
     * this load after the stores above): either it sees g, or this sees it and wakes
     * it under the lock it waits with. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->lock);
        for (int k = 0; k < named; k++)
            pthread_cond_signal(&p->w[k].wake);
        pthread_mutex_unlock(&p->lock);
    }
    fn(user, 0);
    int ran = claim_extra(p) + claim_rest(p, 0, named, g);
    if (ran)
        atomic_fetch_add_explicit(&p->finished, ran, memory_order_relaxed);
    for (int spin = 0; atomic_load_explicit(&p->finished, memory_order_acquire) < n - 1 &&
                       spin < FFNN_POOL_SPIN; spin++)
        relax();
    if (atomic_load_explicit(&p->finished, memory_order_acquire) < n - 1) {
        pthread_mutex_lock(&p->lock);
        while (atomic_load(&p->finished) < n - 1)
            pthread_cond_wait(&p->done, &p->lock);
        pthread_mutex_unlock(&p->lock);
    }
    atomic_store(&p->open, 0); /* seq_cst: late workers see it closed or are seen inside */
}
