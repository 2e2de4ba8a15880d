/*
 * test_pool.c - suite "pool": the fork-join pool (src/core/pool.h) runs every part
 * of a job exactly once and the caller sees each part's writes when the job
 * returns, over thousands of jobs of every size from 1 part to more parts than
 * threads (the workers then take several), with parts of uneven length so that
 * workers fall asleep, wake late and find their parts taken by the caller or by
 * another worker. Run under ThreadSanitizer by `make tsan` (a lost happens-before
 * edge is a report there; here, a wrong count).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "check.h"
#include "core/pool.h"

#define MAX_PARTS 9

typedef struct job {
    atomic_int runs[MAX_PARTS]; /* how often part k ran                      */
    uint64_t value[MAX_PARTS];  /* part k's result, written by whoever ran it */
    uint64_t seed;              /* the job's input (the same for all parts)   */
    int sleep_part;             /* this part sleeps a little first, or -1     */
} job;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33, x *= 0xff51afd7ed558ccdull, x ^= x >> 33;
    return x;
}

static void part(void *user, int k)
{
    job *j = user;
    if (k == j->sleep_part) { /* long enough for the spinning workers to sleep */
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    atomic_fetch_add_explicit(&j->runs[k], 1, memory_order_relaxed);
    j->value[k] = mix(j->seed + (uint64_t)k);
}

TEST("pool_every_part_once", test_pool_every_part_once)
{
    const int workers[] = {1, 3};
    for (size_t w = 0; w < sizeof workers / sizeof *workers; w++) {
        ffnn_pool *p = NULL;
        CHECK_OK(ffnn_pool_create(workers[w], &p));
        uint64_t s = 12345 + w;
        for (int it = 0; it < 4000; it++) {
            s = mix(s + 1);
            job j = {.seed = s};
            const int n = 1 + (int)(s % MAX_PARTS);
            j.sleep_part = it % 50 == 0 ? (int)(s >> 8) % n : -1;
            for (int k = 0; k < MAX_PARTS; k++)
                atomic_init(&j.runs[k], 0);
            ffnn_pool_run(p, n, part, &j);
            for (int k = 0; k < MAX_PARTS; k++) {
                const int runs = atomic_load_explicit(&j.runs[k], memory_order_relaxed);
                CHECK(runs == (k < n), "%d workers, job %d of %d parts: part %d ran %d times",
                      workers[w], it, n, k, runs);
                if (k < n)
                    CHECK(j.value[k] == mix(s + (uint64_t)k), "%d workers, job %d: part %d's "
                          "result not seen by the caller", workers[w], it, k);
            }
        }
        ffnn_pool_free(p);
    }
    return TEST_PASS;
}
