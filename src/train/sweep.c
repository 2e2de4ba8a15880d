/* sweep.c - many models trained at once in one process (include/ffnn.h, "Sweeps").
 *
 * Each model has a trainer of its own, made from its own config; on the cpu each
 * trainer is a one-thread OpenMP backend (the omp kernels give the same bits for
 * any thread count, so every model trains exactly as it would alone), and a pool of
 * `lanes` threads (pool.h) runs the models' epochs side by side, each lane taking
 * the next model still training. On cuda each trainer has a backend context of its
 * own (its streams, its device buffers) and the lanes are host threads that queue
 * their models' steps at the same time, so the GPU runs several models' kernels
 * concurrently (the same kernels as a lone run: the same bits); the models share the
 * process and its CUDA context, not yet the kernels (one matmul over the model axis).
 * A model on the persistent strategy makes it one lane: that strategy's cooperative
 * kernel holds every SM, and two at once fail to launch.
 * With strategy batched (every config) the models have no trainers: the batched
 * engine (sweep_batched.h) trains them all in one array, one launch per op. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "ffnn.h"
#include "train/pool.h"
#include "train/sweep_batched.h"
#include "train/trainer.h"

typedef struct sweep_slot {
    ffnn_model *model;         /* the caller's                                     */
    ffnn_trainer *trainer;
    ffnn_train_config cfg;     /* the caller's config, threads 1 on the cpu        */
    int epochs_run;
    int done;                  /* 1: cfg.epochs run, or early stopping's patience out */
    ffnn_epoch_stats last;     /* its last finished epoch                          */
    ffnn_status status;        /* of its last epoch                                */
    char error[512];           /* ffnn_last_error of a failed epoch (lane thread)  */
} sweep_slot;

struct ffnn_sweep {
    size_t count;
    sweep_slot *slot;          /* [count]                                          */
    int lanes;
    ffnn_pool *pool;           /* lanes - 1 workers, or NULL                       */
    atomic_size_t next;        /* the next model a lane takes during an epoch      */
    ffnn_batched *batched;     /* strategy batched: the engine (no trainers), or NULL */
};

void ffnn_sweep_free(ffnn_sweep *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->count; i++)
        ffnn_trainer_free(s->slot[i].trainer);
    ffnn_batched_free(s->batched);
    ffnn_pool_free(s->pool);
    free(s->slot);
    free(s);
}

typedef struct model_at {
    const ffnn_model *m;
    size_t i;
} model_at;

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const model_at *)a)->m, y = (uintptr_t)((const model_at *)b)->m;
    return (x > y) - (x < y);
}

/* Each model a different object: the pointers sorted, neighbours compared
 * (O(count log count), for sweeps of many thousands of models). */
static ffnn_status distinct_models(ffnn_model *const *models, size_t count)
{
    model_at *at = malloc(count * sizeof *at);
    if (!at)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "ffnn_sweep_create: %zu models", count);
    for (size_t i = 0; i < count; i++)
        at[i].m = models[i], at[i].i = i;
    qsort(at, count, sizeof *at, by_address);
    ffnn_status st = FFNN_OK;
    for (size_t i = 1; i < count && st == FFNN_OK; i++)
        if (at[i].m == at[i - 1].m) {
            size_t a = at[i - 1].i < at[i].i ? at[i - 1].i : at[i].i;
            size_t b = at[i - 1].i < at[i].i ? at[i].i : at[i - 1].i;
            st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_sweep_create: models %zu and %zu "
                           "are the same object (each needs its own)", a, b);
        }
    free(at);
    return st;
}

static ffnn_status check_args(ffnn_model *const *models, const ffnn_train_config *configs,
                              size_t count, const ffnn_dataset *const *train, ffnn_sweep **out)
{
    if (!out || !models || !configs || !train || count == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_sweep_create: models, configs, "
                         "train, out and a count >= 1 are needed (count %zu)", count);
    int cuda = -1;
    for (size_t i = 0; i < count; i++) {
        if (!models[i] || !train[i])
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_sweep_create: model %zu%s is "
                             "NULL", i, models[i] ? "'s training set" : "");
        int c = configs[i].device == FFNN_DEVICE_CUDA;
        if (cuda >= 0 && c != cuda)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_sweep_create: configs 0 and %zu "
                             "ask for different devices (cpu and cuda in one sweep)", i);
        cuda = c;
    }
    return distinct_models(models, count);
}

/* The sweep of strategy batched: every model in the engine, one lane. */
static ffnn_status create_batched(ffnn_sweep *s, ffnn_model *const *models,
                                  const ffnn_train_config *configs,
                                  const ffnn_dataset *const *train,
                                  const ffnn_dataset *const *val, ffnn_sweep **out)
{
    ffnn_status st = ffnn_batched_check(models, configs, s->count, train, val);
    if (st == FFNN_OK)
        st = ffnn_batched_create(models, configs, s->count, train[0], val ? val[0] : NULL,
                                 &s->batched);
    if (st != FFNN_OK) {
        ffnn_sweep_free(s);
        return st;
    }
    for (size_t i = 0; i < s->count; i++) {
        s->slot[i].model = models[i];
        s->slot[i].cfg = configs[i];
    }
    s->lanes = 1;
    *out = s;
    return FFNN_OK;
}

/* One epoch of the batched engine for the models still training. */
static ffnn_status batched_epoch(ffnn_sweep *s)
{
    int *training = malloc(s->count * sizeof *training);
    ffnn_epoch_stats *stats = calloc(s->count, sizeof *stats);
    ffnn_status st = training && stats ? FFNN_OK
                                       : ffnn_fail(FFNN_ERR_NO_MEMORY, "ffnn_sweep_run_epoch");
    for (size_t i = 0; st == FFNN_OK && i < s->count; i++)
        training[i] = !s->slot[i].done;
    if (st == FFNN_OK)
        st = ffnn_batched_run_epoch(s->batched, training, stats);
    for (size_t i = 0; st == FFNN_OK && i < s->count; i++) {
        sweep_slot *m = &s->slot[i];
        if (!training[i])
            continue;
        m->last = stats[i];
        m->done = ++m->epochs_run >= m->cfg.epochs;
    }
    free(training);
    free(stats);
    return st;
}

ffnn_status ffnn_sweep_create(ffnn_model *const *models, const ffnn_train_config *configs,
                              size_t count, const ffnn_dataset *const *train,
                              const ffnn_dataset *const *val, int threads, ffnn_sweep **out)
{
    ffnn_status st = check_args(models, configs, count, train, out);
    if (st != FFNN_OK)
        return st;
    if (threads < 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_sweep_create: threads %d < 0",
                         threads);
    ffnn_sweep *s = calloc(1, sizeof *s);
    if (!s || !(s->slot = calloc(count, sizeof *s->slot))) {
        free(s);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "ffnn_sweep_create: %zu models", count);
    }
    s->count = count;
    if (configs[0].strategy == FFNN_STRATEGY_BATCHED)
        return create_batched(s, models, configs, train, val, out);
    for (size_t i = 0; i < count && st == FFNN_OK; i++) {
        sweep_slot *m = &s->slot[i];
        m->model = models[i];
        m->cfg = configs[i];
        if (m->cfg.device != FFNN_DEVICE_CUDA)
            m->cfg.threads = 1;   /* the lanes are the parallelism */
        st = ffnn_trainer_create(m->model, train[i], &m->cfg, &m->trainer);
        if (st == FFNN_OK && val && val[i])
            st = ffnn_trainer_set_validation(m->trainer, val[i]);
        if (st != FFNN_OK) {
            char why[512];
            snprintf(why, sizeof why, "%s", ffnn_last_error());
            st = ffnn_fail(st, "ffnn_sweep_create: model %zu: %s", i, why);
        }
        if (st == FFNN_OK && m->cfg.device == FFNN_DEVICE_AUTO &&
            ffnn_trainer_device(m->trainer) == FFNN_DEVICE_CUDA)
            st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_sweep_create: model %zu: device "
                           "auto chose cuda; give the device (cpu or cuda) explicitly", i);
    }
    if (st == FFNN_OK) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        s->lanes = threads > 0 ? threads : cores > 0 ? (int)cores : 1;
        for (size_t i = 0; i < count; i++) /* its cooperative kernel holds every SM */
            if (ffnn_trainer_strategy(s->slot[i].trainer) == FFNN_STRATEGY_PERSISTENT)
                s->lanes = 1;
        if ((size_t)s->lanes > count)
            s->lanes = (int)count;
        if (s->lanes > 1)
            st = ffnn_pool_create(s->lanes - 1, &s->pool);
    }
    if (st != FFNN_OK) {
        ffnn_sweep_free(s);
        return st;
    }
    *out = s;
    return FFNN_OK;
}

/* One model's epoch, then its early-stopping verdict. */
static void model_epoch(sweep_slot *m)
{
    m->status = ffnn_train_epoch(m->trainer, &m->cfg, m->epochs_run, &m->last, &m->done);
    if (m->status != FFNN_OK)
        snprintf(m->error, sizeof m->error, "%s", ffnn_last_error());
    else
        m->epochs_run++;
}

static void lane(void *user, int k)
{
    (void)k;
    ffnn_sweep *s = user;
    for (;;) {
        size_t i = atomic_fetch_add(&s->next, 1);
        if (i >= s->count)
            return;
        if (!s->slot[i].done)
            model_epoch(&s->slot[i]);
    }
}

ffnn_status ffnn_sweep_run_epoch(ffnn_sweep *s, size_t *training)
{
    if (!s)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_sweep_run_epoch: NULL sweep");
    if (s->batched) {
        ffnn_status st = batched_epoch(s);
        if (st != FFNN_OK)
            return st;
    } else {
        atomic_store(&s->next, 0);
        if (s->pool)
            ffnn_pool_run(s->pool, s->lanes, lane, s);
        else
            lane(s, 0);
    }
    size_t left = 0;
    for (size_t i = 0; i < s->count; i++) {
        const sweep_slot *m = &s->slot[i];
        if (m->status != FFNN_OK)
            return ffnn_fail(m->status, "ffnn_sweep_run_epoch: model %zu, epoch %d: %s", i,
                             m->epochs_run + 1, m->error[0] ? m->error : ffnn_last_error());
        left += !m->done;
    }
    if (training)
        *training = left;
    return FFNN_OK;
}

ffnn_status ffnn_sweep_stop_model(ffnn_sweep *s, size_t i)
{
    if (!s || i >= s->count)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_sweep_stop_model: model %zu of %zu",
                         i, s ? s->count : 0);
    sweep_slot *m = &s->slot[i];
    if (m->done)
        return FFNN_OK;
    m->done = 1;
    /* the end of its run, as ffnn_train_epoch ends one: the best epoch's weights */
    int best = 0;
    ffnn_status st = FFNN_OK;
    if (m->cfg.early_stopping > 0 && m->epochs_run > 0 &&
        (st = ffnn_trainer_early_stopping(m->trainer, &best, NULL, NULL)) == FFNN_OK &&
        best > 0)
        st = ffnn_trainer_restore_best(m->trainer);
    if (st != FFNN_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", ffnn_last_error());
        return ffnn_fail(st, "ffnn_sweep_stop_model: model %zu: %s", i, why);
    }
    return FFNN_OK;
}

ffnn_status ffnn_sweep_model_state(const ffnn_sweep *s, size_t i, ffnn_sweep_state *state)
{
    if (!s || i >= s->count || !state)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_sweep_model_state: model %zu of %zu",
                         i, s ? s->count : 0);
    const sweep_slot *m = &s->slot[i];
    memset(state, 0, sizeof *state);
    state->epochs_run = m->epochs_run;
    state->training = !m->done;
    state->last = m->last;
    if (m->cfg.early_stopping > 0)
        ffnn_trainer_early_stopping(m->trainer, &state->best_epoch, &state->best_loss, NULL);
    else
        state->best_loss = m->last.val_loss;
    return FFNN_OK;
}

ffnn_trainer *ffnn_sweep_trainer(ffnn_sweep *s, size_t i)
{
    return s && i < s->count ? s->slot[i].trainer : NULL;
}

size_t ffnn_sweep_count(const ffnn_sweep *s)
{
    return s ? s->count : 0;
}

int ffnn_sweep_lanes(const ffnn_sweep *s)
{
    return s ? s->lanes : 0;
}
