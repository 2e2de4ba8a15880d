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
 * engine (sweep_batched.h) trains them all in one array, one launch per op.
 * Over gpus GPUs (ffnn_sweep_create_gpus): model i lives on GPU i % gpus (its
 * trainer made with that device current, or the batched engine of that GPU, one
 * engine per GPU run by a lane of its own); every lane makes a model's device its
 * thread's before running its epoch, so the lanes serve all the GPUs at once. */
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
    int device;                /* its CUDA device; -1: cpu                          */
} sweep_slot;

struct ffnn_sweep {
    size_t count;
    sweep_slot *slot;          /* [count]                                          */
    int lanes;
    ffnn_pool *pool;           /* lanes - 1 workers, or NULL                       */
    atomic_size_t next;        /* the next model a lane takes during an epoch      */
    ffnn_batched **batched;    /* strategy batched: [engines] the engines (no trainers),
                                  engine g with models g, g + engines ...; or NULL    */
    int engines;
    ffnn_model **engine_models; /* [count]: engine g's models side by side (an engine
                                  keeps its array: freed with the sweep)            */
    int gpus;                  /* the GPUs spread over (0: the caller's device)     */
    ffnn_status engine_status[FFNN_SWEEP_MAX_GPUS]; /* of each engine's last epoch  */
    char engine_error[FFNN_SWEEP_MAX_GPUS][512];
};

/* Make device (>= 0) the calling thread's CUDA device; -1: nothing to do. */
static ffnn_status on_device(int device)
{
    return device >= 0 && ffnn_cuda_current_device() != device ? ffnn_cuda_set_device(device)
                                                               : FFNN_OK;
}

void ffnn_sweep_free(ffnn_sweep *s)
{
    if (!s)
        return;
    int caller = s->gpus > 0 || (s->count && s->slot[0].device >= 0)
                     ? ffnn_cuda_current_device() : -1;
    for (size_t i = 0; i < s->count; i++) {
        (void)on_device(s->slot[i].device); /* its last download and frees there */
        ffnn_trainer_free(s->slot[i].trainer);
    }
    for (int g = 0; s->batched && g < s->engines; g++) {
        (void)on_device(s->gpus > 0 ? g : -1);
        ffnn_batched_free(s->batched[g]);
    }
    (void)on_device(caller);
    free(s->batched);
    free(s->engine_models);
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

/* Engine g's models (g, g + engines ...) into m[*n], c[*n] (each [count]). */
static void engine_models(const ffnn_sweep *s, int g, ffnn_model *const *models,
                          const ffnn_train_config *configs, ffnn_model **m,
                          ffnn_train_config *c, size_t *n)
{
    *n = 0;
    for (size_t i = (size_t)g; i < s->count; i += (size_t)s->engines, (*n)++)
        m[*n] = models[i], c[*n] = configs[i];
}

/* The sweep of strategy batched: the models in one engine per GPU (gpus 0: one on
 * the caller's device), one lane per engine. */
static ffnn_status create_batched(ffnn_sweep *s, ffnn_model *const *models,
                                  const ffnn_train_config *configs,
                                  const ffnn_dataset *const *train,
                                  const ffnn_dataset *const *val, int gpus, ffnn_sweep **out)
{
    ffnn_status st = ffnn_batched_check(models, configs, s->count, train, val);
    s->engines = gpus < 1 ? 1 : (size_t)gpus < s->count ? gpus : (int)s->count;
    ffnn_model **m = malloc(s->count * sizeof *m);
    ffnn_train_config *c = malloc(s->count * sizeof *c);
    s->batched = calloc((size_t)s->engines, sizeof *s->batched);
    if (st == FFNN_OK && (!m || !c || !s->batched))
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "ffnn_sweep_create: %zu models", s->count);
    int caller = gpus > 0 ? ffnn_cuda_current_device() : -1;
    s->engine_models = m; /* the engines keep pointers into it */
    for (size_t g = 0, at = 0; st == FFNN_OK && g < (size_t)s->engines; g++) {
        size_t n = 0;
        engine_models(s, (int)g, models, configs, m + at, c, &n);
        st = on_device(gpus > 0 ? (int)g : -1);
        if (st == FFNN_OK)
            st = ffnn_batched_create(m + at, c, n, train[0], val ? val[0] : NULL,
                                     &s->batched[g]);
        at += n;
    }
    (void)on_device(caller);
    free(c);
    if (st == FFNN_OK && s->engines > 1)
        st = ffnn_pool_create(s->engines - 1, &s->pool);
    if (st != FFNN_OK) {
        ffnn_sweep_free(s);
        return st;
    }
    for (size_t i = 0; i < s->count; i++) {
        s->slot[i].model = models[i];
        s->slot[i].cfg = configs[i];
        s->slot[i].device = -1; /* the engines' */
    }
    s->lanes = s->engines;
    *out = s;
    return FFNN_OK;
}

/* Lane g of a batched epoch: engine g, on its GPU, for its models of training[]
 * (the sweep's indices; stats likewise). */
typedef struct batched_run {
    ffnn_sweep *s;
    const int *training;
    ffnn_epoch_stats *stats;
} batched_run;

static void batched_lane(void *user, int g)
{
    batched_run *r = user;
    ffnn_sweep *s = r->s;
    size_t n = (s->count - (size_t)g + (size_t)s->engines - 1) / (size_t)s->engines;
    int *training = malloc(n * sizeof *training);
    ffnn_epoch_stats *stats = calloc(n, sizeof *stats);
    ffnn_status st = training && stats ? on_device(s->gpus > 0 ? g : -1)
                                       : ffnn_fail(FFNN_ERR_NO_MEMORY, "ffnn_sweep_run_epoch");
    for (size_t j = 0; st == FFNN_OK && j < n; j++)
        training[j] = r->training[(size_t)g + j * (size_t)s->engines];
    if (st == FFNN_OK)
        st = ffnn_batched_run_epoch(s->batched[g], training, stats);
    for (size_t j = 0; st == FFNN_OK && j < n; j++)
        r->stats[(size_t)g + j * (size_t)s->engines] = stats[j];
    s->engine_status[g] = st;
    if (st != FFNN_OK)
        snprintf(s->engine_error[g], sizeof s->engine_error[g], "%s", ffnn_last_error());
    free(training);
    free(stats);
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
    if (st == FFNN_OK) {
        int caller = s->gpus > 0 ? ffnn_cuda_current_device() : -1;
        batched_run r = {s, training, stats};
        if (s->pool)
            ffnn_pool_run(s->pool, s->engines, batched_lane, &r);
        else
            batched_lane(&r, 0);
        (void)on_device(caller);
        for (int g = 0; g < s->engines && st == FFNN_OK; g++)
            if ((st = s->engine_status[g]) != FFNN_OK)
                st = ffnn_fail(st, "%s", s->engine_error[g]);
    }
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
    return ffnn_sweep_create_gpus(models, configs, count, train, val, threads, 0, out);
}

/* gpus for count models of configs: 0, or 1 .. the GPUs visible with cuda configs. */
static ffnn_status check_gpus(const ffnn_train_config *configs, int gpus)
{
    if (gpus == 0)
        return FFNN_OK;
    int visible = ffnn_cuda_device_count();
    if (gpus < 0 || gpus > FFNN_SWEEP_MAX_GPUS)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_sweep_create_gpus: gpus %d: "
                         "expected 0 .. %d", gpus, FFNN_SWEEP_MAX_GPUS);
    if (configs[0].device != FFNN_DEVICE_CUDA)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_sweep_create_gpus: gpus %d needs "
                         "device cuda in the configs", gpus);
    if (gpus > visible)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "ffnn_sweep_create_gpus: %d GPUs asked for, %d "
                         "CUDA GPU%s visible", gpus, visible, visible == 1 ? " is" : "s are");
    return FFNN_OK;
}

/* Model i's trainer on its device (gpus > 0: GPU i % gpus, else the caller's). */
static ffnn_status create_slot(sweep_slot *m, size_t i, const ffnn_dataset *train,
                               const ffnn_dataset *val, int gpus)
{
    m->device = m->cfg.device != FFNN_DEVICE_CUDA ? -1
                : gpus > 0                        ? (int)(i % (size_t)gpus)
                                                  : ffnn_cuda_current_device();
    ffnn_status st = gpus > 0 ? on_device(m->device) : FFNN_OK;
    if (st == FFNN_OK)
        st = ffnn_trainer_create(m->model, train, &m->cfg, &m->trainer);
    if (st == FFNN_OK && val)
        st = ffnn_trainer_set_validation(m->trainer, val);
    if (st != FFNN_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", ffnn_last_error());
        st = ffnn_fail(st, "ffnn_sweep_create: model %zu: %s", i, why);
    }
    if (st == FFNN_OK && m->cfg.device == FFNN_DEVICE_AUTO &&
        ffnn_trainer_device(m->trainer) == FFNN_DEVICE_CUDA)
        st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_sweep_create: model %zu: device "
                       "auto chose cuda; give the device (cpu or cuda) explicitly", i);
    return st;
}

ffnn_status ffnn_sweep_create_gpus(ffnn_model *const *models, const ffnn_train_config *configs,
                                   size_t count, const ffnn_dataset *const *train,
                                   const ffnn_dataset *const *val, int threads, int gpus,
                                   ffnn_sweep **out)
{
    ffnn_status st = check_args(models, configs, count, train, out);
    if (st == FFNN_OK)
        st = check_gpus(configs, gpus);
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
    s->gpus = gpus;
    for (size_t i = 0; i < count; i++)
        s->slot[i].device = -1; /* nothing on a device yet */
    if (configs[0].strategy == FFNN_STRATEGY_BATCHED)
        return create_batched(s, models, configs, train, val, gpus, out);
    int caller = gpus > 0 ? ffnn_cuda_current_device() : -1;
    for (size_t i = 0; i < count && st == FFNN_OK; i++) {
        sweep_slot *m = &s->slot[i];
        m->model = models[i];
        m->cfg = configs[i];
        if (m->cfg.device != FFNN_DEVICE_CUDA)
            m->cfg.threads = 1;   /* the lanes are the parallelism */
        st = create_slot(m, i, train[i], val ? val[i] : NULL, gpus);
    }
    (void)on_device(caller);
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
    m->status = on_device(m->device); /* this lane's thread on the model's GPU */
    if (m->status == FFNN_OK)
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
        int caller = s->count && s->slot[0].device >= 0 ? ffnn_cuda_current_device() : -1;
        atomic_store(&s->next, 0);
        if (s->pool)
            ffnn_pool_run(s->pool, s->lanes, lane, s);
        else
            lane(s, 0);
        (void)on_device(caller); /* lane 0 is this thread */
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
    int caller = m->device >= 0 ? ffnn_cuda_current_device() : -1;
    ffnn_status st = on_device(m->device);
    if (st == FFNN_OK && m->cfg.early_stopping > 0 && m->epochs_run > 0 &&
        (st = ffnn_trainer_early_stopping(m->trainer, &best, NULL, NULL)) == FFNN_OK &&
        best > 0)
        st = ffnn_trainer_restore_best(m->trainer);
    (void)on_device(caller);
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
