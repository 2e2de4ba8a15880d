/*
 * train.c - the training loop: backend choice, device buffers, shuffling,
 * batching, forward, backward, the optimizer step, evaluation and metrics.
 *
 * One step (all on the backend, no host copy):
 *   gather x [B, in0], y [B] (or float targets [B, out]) by the device permutation
 *   for each layer l:  a_l = f_l(a_{l-1} W_l^T + b_l)         (in place)
 *                      (local1d layers: local1d_forward instead of the matmul)
 *   loss(a_L, y or targets) -> row_loss[step*B .. +B), d a_L  (mean over batch)
 *   for l = L..1:  dz = da * f_l'(a_l); dW_l, db_l, da_{l-1}
 *   optimizer_update(params, grads, state)      (one arena each: sgd, momentum, adam)
 * The per-row losses of the whole epoch stay on the device and are read back once.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "backend/backend.h"
#include "data/dataset.h"
#include "core/error.h"
#include "core/model.h"
#include "core/rng.h"
#include "strategy/strategy.h"
#include "train/train_internal.h"
#include "train/config.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The device copy of one data set (uploaded once). */
typedef struct device_dataset {
    const ffnn_dataset *host; /* the data set this copy was made from */
    uint8_t *images;          /* [count, features] uint8 features, or NULL */
    float *values;            /* [count, features] float features, or NULL */
    uint8_t *labels;          /* [count] class labels, or NULL        */
    float *targets;           /* [count, target_width] float targets, or NULL */
    int32_t *index;           /* [count] permutation or 0..count-1    */
    float *row_loss;          /* [count] per-sample loss              */
    uint8_t *row_correct;     /* [count] 1 when classified right      */
} device_dataset;

/* graph strategy: a captured run of steps [first, first + count) of an epoch,
 * valid for any epoch while the optimizer's per-step scalars stay those of the
 * capture (sgd: always; momentum: after its first step; adam: never reused). */
#define GRAPH_CACHE 128
/* graph strategy: steps per captured launch unless cfg.steps_per_launch says: one
 * graph of a whole epoch (~8,000 nodes at batch 64) replays slower than 16-step
 * graphs (docs/PERFORMANCE.md) */
#define GRAPH_DEFAULT_STEPS 16
/* cublas: 8 steps per captured graph measured 4-8% faster than 1 (per-op
 * launches) and than 16 or 59 (docs/PERFORMANCE.md); --steps-per-launch 1 gives
 * plain per-op launches */
#define CUBLAS_DEFAULT_STEPS 8
typedef struct step_graph {
    void *exec;               /* backend graph, or NULL                          */
    size_t first, count;
    ffnn_optimizer_step update; /* the scalars it was captured with            */
    uint64_t used;            /* last use (for eviction)                         */
} step_graph;

struct ffnn_trainer {
    ffnn_model *model;
    ffnn_train_config cfg;
    ffnn_device device;
    const ffnn_backend_ops *ops;
    void *ctx;
    ffnn_strategy strategy;    /* cfg.strategy with auto resolved (cuda only)   */
    int fused;                /* 1: dense layers run the backend's fused ops   */
    int fused_sgd;            /* 1: fused, every layer dense and plain sgd: the
                                 update runs inside the weight-gradient kernels */
    step_graph graphs[GRAPH_CACHE]; /* graph strategy: captured runs of steps  */
    uint64_t graph_tick;      /* graph uses so far (the cache's eviction order) */

    size_t capacity;          /* rows of the activation buffers: max(batch, eval batch) */
    float *params;            /* [parameter_count] on the device           */
    float *grads;             /* [parameter_count]                         */
    float *opt_state;         /* [state_count * parameter_count] optimizer state in one
                                 allocation (momentum: buf; adam: m then v), laid out
                                 like the parameter arena; NULL for sgd     */
    uint64_t opt_steps;       /* optimizer steps taken (Adam's t of the last step) */
    float *x;                 /* [capacity, input_size]                    */
    uint8_t *y;               /* [capacity]                                */
    float *tgt;               /* [capacity, output width] a batch's float targets */
    float **act;              /* [layer_count] -> [capacity, layer.out]    */
    float *grad_buf[2];       /* each [capacity, widest layer] (backprop ping-pong) */

    device_dataset train;
    device_dataset eval;      /* the last data set evaluated (cached)      */

    int32_t *perm;            /* [train count] host permutation            */
    double *step_loss;        /* [steps per epoch] the last epoch's per-step losses */
    size_t step_loss_count;   /* steps of the last completed epoch (0 before) */
    double *epoch_loss;       /* [steps per epoch] the current epoch's per-step losses,
                                 read back for steps [0, epoch_loss_known)  */
    size_t epoch_loss_known;  /* steps of the current epoch read back      */
    ffnn_rng shuffle_rng;
    ffnn_rng epoch_rng;       /* shuffle_rng as it was when the current epoch began
                                 (a checkpoint regenerates the permutation from it) */
    int epoch;                /* epochs started (1-based once started)     */
    size_t step;              /* next step within the current epoch        */
    int diverged_epoch;       /* > 0: the first NaN/Inf loss seen, at this epoch */
    size_t diverged_step;     /*       and step (1-based)                  */
    double diverged_loss;     /*       and its value                       */
    uint32_t data_crc;        /* CRC-32 of the training data (once data_crc_known) */
    int data_crc_known;
};

/* ------------------------------------------------------------ device memory */

static ffnn_status dev_alloc(ffnn_trainer *t, void *ptr_out, size_t count, size_t elem)
{
    void **out = (void **)ptr_out;
    if (count != 0 && elem > SIZE_MAX / count)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "buffer size overflows");
    return t->ops->alloc(t->ctx, count * elem, out);
}

static void dev_free(ffnn_trainer *t, void *ptr)
{
    if (ptr)
        t->ops->release(t->ctx, ptr);
}

static void device_dataset_free(ffnn_trainer *t, device_dataset *d)
{
    dev_free(t, d->images);
    dev_free(t, d->values);
    dev_free(t, d->labels);
    dev_free(t, d->targets);
    dev_free(t, d->index);
    dev_free(t, d->row_loss);
    dev_free(t, d->row_correct);
    memset(d, 0, sizeof *d);
}

/* Upload a data set once: features (uint8 or float), labels or float targets,
 * per-row metric buffers, index 0..n-1. */
static ffnn_status device_dataset_upload(ffnn_trainer *t, const ffnn_dataset *ds,
                                         device_dataset *d)
{
    ffnn_status st;
    size_t n = ds->count;
    int32_t *iota = malloc(n * sizeof *iota);
    if (!iota)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for %zu indices", n);
    for (size_t i = 0; i < n; i++)
        iota[i] = (int32_t)i;
    d->host = ds;
    size_t fbytes = ds->images ? 1 : sizeof(float); /* per feature */
    void **features = ds->images ? (void **)&d->images : (void **)&d->values;
    const void *host_features = ds->images ? (const void *)ds->images : (const void *)ds->values;
    if ((st = dev_alloc(t, features, n, ds->features * fbytes)) != FFNN_OK ||
        (ds->labels && (st = dev_alloc(t, &d->labels, n, 1)) != FFNN_OK) ||
        (ds->targets &&
         (st = dev_alloc(t, &d->targets, n, ds->target_width * sizeof(float))) != FFNN_OK) ||
        (st = dev_alloc(t, &d->index, n, sizeof(int32_t))) != FFNN_OK ||
        (st = dev_alloc(t, &d->row_loss, n, sizeof(float))) != FFNN_OK ||
        (st = dev_alloc(t, &d->row_correct, n, 1)) != FFNN_OK ||
        (st = t->ops->upload(t->ctx, *features, host_features, n * ds->features * fbytes)) ||
        (ds->labels && (st = t->ops->upload(t->ctx, d->labels, ds->labels, n)) != FFNN_OK) ||
        (ds->targets && (st = t->ops->upload(t->ctx, d->targets, ds->targets,
                                             n * ds->target_width * sizeof(float)))) ||
        (st = t->ops->upload(t->ctx, d->index, iota, n * sizeof(int32_t))) != FFNN_OK) {
        free(iota);
        device_dataset_free(t, d);
        return st;
    }
    /* the upload may be asynchronous: wait before freeing its source */
    st = t->ops->synchronize(t->ctx);
    free(iota);
    return st;
}

/* Where gather reads the device copy d. */
static ffnn_gather_source gather_source(const device_dataset *d)
{
    ffnn_gather_source src = {d->images, d->values, d->host->features, d->labels, d->targets,
                              d->host->target_width};
    return src;
}

/* The loss's float targets for a batch gathered from d: t->tgt, or NULL with labels. */
static const float *batch_targets(const ffnn_trainer *t, const device_dataset *d)
{
    return d->targets ? t->tgt : NULL;
}

static ffnn_status pick_backend(ffnn_trainer *t, ffnn_device requested)
{
    const ffnn_backend_ops *cuda = ffnn_cuda_backend();
    if (requested == FFNN_DEVICE_AUTO)
        requested = cuda && ffnn_cuda_device_count() > 0 ? FFNN_DEVICE_CUDA : FFNN_DEVICE_CPU;
    if (requested == FFNN_DEVICE_CUDA) {
        if (!cuda)
            return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                             "--device cuda: this build of ffnn has no CUDA (nvcc was not "
                             "found at build time); rebuild with nvcc on the PATH or use "
                             "--device cpu");
        if (ffnn_cuda_device_count() == 0)
            return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                             "--device cuda: no CUDA GPU is visible; use --device cpu");
        t->ops = cuda;
    } else {
        if (t->cfg.precision != FFNN_PRECISION_FP32)
            return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                             "--precision %s runs on a GPU's tensor cores: it needs "
                             "--device cuda (the cpu backends compute in fp32)",
                             ffnn_precision_name(t->cfg.precision));
        /* threads 1: the single-threaded reference; 0 or N > 1: OpenMP */
        t->ops = t->cfg.threads == 1 ? &ffnn_cpu_backend : &ffnn_omp_backend;
    }
    t->device = requested;
    if (!ffnn_backend_ops_complete(t->ops))
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "backend %s is incomplete", t->ops->name);
    const int on_cuda = t->ops == ffnn_cuda_backend();
    t->strategy = on_cuda ? ffnn_strategy_resolve(t->model, &t->cfg) : FFNN_STRATEGY_TILED;
    ffnn_status st = t->ops->create(t->strategy, t->cfg.threads, &t->ctx);
    if (st == FFNN_OK && on_cuda && (t->cfg.cuda_block_1d != 0 || t->cfg.cuda_block_2d != 0))
        st = ffnn_cuda_set_launch(t->ctx, t->cfg.cuda_block_1d, t->cfg.cuda_block_2d);
    if (st == FFNN_OK && on_cuda && t->cfg.precision != FFNN_PRECISION_FP32)
        st = ffnn_cuda_set_precision(t->ctx, t->cfg.precision);
    return st;
}

/* The optimizer state: one allocation of state_count * parameter_count floats,
 * zeroed (momentum's buffer is also not read at the first step). */
static ffnn_status allocate_optimizer_state(ffnn_trainer *t)
{
    size_t count = ffnn_optimizer_state_count(t->cfg.optimizer), n = t->model->parameter_count;
    if (count == 0 || n == 0)
        return FFNN_OK;
    ffnn_status st = dev_alloc(t, &t->opt_state, count * n, sizeof(float));
    if (st != FFNN_OK)
        return st;
    float *zeros = calloc(count * n, sizeof *zeros);
    if (!zeros)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the optimizer state");
    st = t->ops->upload(t->ctx, t->opt_state, zeros, count * n * sizeof *zeros);
    if (st == FFNN_OK) /* the upload may be asynchronous: wait before freeing */
        st = t->ops->synchronize(t->ctx);
    free(zeros);
    return st;
}

static ffnn_status allocate_buffers(ffnn_trainer *t)
{
    const ffnn_model *m = t->model;
    size_t widest = 1;
    ffnn_status st;
    t->act = calloc((size_t)m->layer_count, sizeof *t->act);
    if (!t->act)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    for (int i = 0; i < m->layer_count; i++) {
        if (m->layers[i].out > widest)
            widest = m->layers[i].out;
        if ((st = dev_alloc(t, &t->act[i], t->capacity, m->layers[i].out * sizeof(float))))
            return st;
    }
    if ((st = dev_alloc(t, &t->params, m->parameter_count, sizeof(float))) ||
        (st = dev_alloc(t, &t->grads, m->parameter_count, sizeof(float))) ||
        (st = dev_alloc(t, &t->x, t->capacity, m->input_size * sizeof(float))) ||
        (st = dev_alloc(t, &t->y, t->capacity, 1)) ||
        (st = dev_alloc(t, &t->tgt, t->capacity,
                        m->layers[m->layer_count - 1].out * sizeof(float))) ||
        (st = dev_alloc(t, &t->grad_buf[0], t->capacity, widest * sizeof(float))) ||
        (st = dev_alloc(t, &t->grad_buf[1], t->capacity, widest * sizeof(float))))
        return st;
    if ((st = allocate_optimizer_state(t)) != FFNN_OK)
        return st;
    return t->ops->upload(t->ctx, t->params, m->params, m->parameter_count * sizeof(float));
}

static ffnn_persistent_job persistent_job(ffnn_trainer *t, size_t first, size_t count);

/* With the data on the device: check that an explicitly chosen strategy can
 * run this net (auto falls back: persistent -> graph), and turn the fused ops on. */
static ffnn_status settle_strategy(ffnn_trainer *t)
{
    if (t->ops != ffnn_cuda_backend())
        return FFNN_OK;
    if (t->strategy == FFNN_STRATEGY_PERSISTENT) {
        int fits = ffnn_strategy_persistent_fits(t->model, &t->cfg);
        if (fits && (t->cfg.loss == FFNN_LOSS_MSE ? !t->train.targets : !t->train.labels))
            fits = 0, ffnn_fail(FFNN_ERR_UNSUPPORTED,
                                "--kernels persistent runs softmax_ce on class labels or mse "
                                "on float targets, not %s on %s", ffnn_loss_name(t->cfg.loss),
                                t->train.labels ? "class labels" : "float targets");
        if (fits) {
            const ffnn_persistent_job job = persistent_job(t, 0, 0);
            fits = ffnn_cuda_persistent_supported(t->ctx, &job);
        }
        if (!fits) {
            if (t->cfg.strategy == FFNN_STRATEGY_PERSISTENT) {
                char why[400];
                snprintf(why, sizeof why, "%s", ffnn_last_error());
                return ffnn_fail(FFNN_ERR_UNSUPPORTED, "%s (choose --kernels auto or graph)",
                                 why);
            }
            t->strategy = FFNN_STRATEGY_GRAPH; /* auto: the next best below 512 rows */
        }
    }
    t->fused = (t->strategy == FFNN_STRATEGY_FUSED || t->strategy == FFNN_STRATEGY_GRAPH) &&
               t->ops->dense_act_forward && t->ops->dense_backward_fused;
    t->fused_sgd = t->fused && t->cfg.optimizer == FFNN_OPT_SGD &&
                   ffnn_strategy_fused_fits(t->model);
    return FFNN_OK;
}

ffnn_status ffnn_trainer_create(ffnn_model *m, const ffnn_dataset *train,
                                const ffnn_train_config *cfg, ffnn_trainer **out)
{
    if (!m || !train || !cfg || !out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_create: NULL argument");
    ffnn_status st = ffnn_train_config_check(m, train, cfg);
    if (st != FFNN_OK)
        return st;
    ffnn_trainer *t = calloc(1, sizeof *t);
    if (!t)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory creating a trainer");
    t->model = m;
    t->cfg = *cfg;
    t->capacity = cfg->batch_size > cfg->eval_batch_size ? cfg->batch_size : cfg->eval_batch_size;
    ffnn_rng_seed(&t->shuffle_rng, cfg->seed, FFNN_STREAM_SHUFFLE);
    t->epoch_rng = t->shuffle_rng;
    t->perm = malloc(train->count * sizeof *t->perm);
    t->step_loss = malloc((train->count / cfg->batch_size + 1) * sizeof *t->step_loss);
    t->epoch_loss = malloc((train->count / cfg->batch_size + 1) * sizeof *t->epoch_loss);
    if (!t->perm || !t->step_loss || !t->epoch_loss) {
        free(t->perm);
        free(t->step_loss);
        free(t->epoch_loss);
        free(t);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the permutation");
    }
    if ((st = pick_backend(t, cfg->device)) != FFNN_OK ||
        (st = allocate_buffers(t)) != FFNN_OK ||
        (st = device_dataset_upload(t, train, &t->train)) != FFNN_OK ||
        (st = settle_strategy(t)) != FFNN_OK) {
        ffnn_trainer_free(t);
        return st;
    }
    *out = t;
    return FFNN_OK;
}

void ffnn_trainer_free(ffnn_trainer *t)
{
    if (!t)
        return;
    if (t->ops && (t->ctx || t->ops == &ffnn_cpu_backend)) {
        device_dataset_free(t, &t->train);
        device_dataset_free(t, &t->eval);
        if (t->act)
            for (int i = 0; i < t->model->layer_count; i++)
                dev_free(t, t->act[i]);
        dev_free(t, t->params);
        dev_free(t, t->grads);
        dev_free(t, t->opt_state);
        dev_free(t, t->x);
        dev_free(t, t->y);
        dev_free(t, t->tgt);
        dev_free(t, t->grad_buf[0]);
        dev_free(t, t->grad_buf[1]);
        for (int i = 0; i < GRAPH_CACHE; i++)
            if (t->graphs[i].exec)
                t->ops->graph_free(t->ctx, t->graphs[i].exec);
        t->ops->destroy(t->ctx);
    }
    free(t->act);
    free(t->perm);
    free(t->step_loss);
    free(t->epoch_loss);
    free(t);
}

ffnn_device ffnn_trainer_device(const ffnn_trainer *t) { return t->device; }

ffnn_strategy ffnn_trainer_strategy(const ffnn_trainer *t) { return t->strategy; }

int ffnn_trainer_threads(const ffnn_trainer *t)
{
    if (t->ops == &ffnn_omp_backend)
        return ffnn_omp_threads(t->ctx);
    return t->ops == &ffnn_cpu_backend ? 1 : 0;
}

size_t ffnn_trainer_steps_per_epoch(const ffnn_trainer *t)
{
    return (t->train.host->count + t->cfg.batch_size - 1) / t->cfg.batch_size;
}

/* ------------------------------------------------------------ one step */

/* Forward pass of `batch` rows already gathered into t->x; returns the output. */
static ffnn_status forward(ffnn_trainer *t, size_t batch, float **output)
{
    const ffnn_model *m = t->model;
    const float *in = t->x; /* [batch, layer.in] */
    ffnn_status st;
    for (int i = 0; i < m->layer_count; i++) {
        const ffnn_layer *l = &m->layers[i];
        const float *W = t->params + l->weight_offset; /* [out, fan_in] */
        const float *b = l->has_bias ? t->params + l->bias_offset : NULL;
        if (t->fused && l->kind == FFNN_LAYER_DENSE) { /* bias + act in the epilogue */
            if ((st = t->ops->dense_act_forward(t->ctx, in, W, b, t->act[i], batch, l->in,
                                                l->out, l->act)))
                return st;
            in = t->act[i];
            continue;
        }
        switch (l->kind) {
        case FFNN_LAYER_DENSE:
            st = t->ops->dense_forward(t->ctx, in, W, b, t->act[i], batch, l->in, l->out);
            break;
        case FFNN_LAYER_LOCAL1D: /* the activation runs below, as for dense layers */
            st = t->ops->local1d_forward(t->ctx, in, W, b, t->act[i], batch, l->in,
                                         l->spec.local1d.R, l->spec.local1d.padding,
                                         FFNN_ACT_IDENTITY);
            break;
        default:
            st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "layer %d: unknown kind %d", i,
                           (int)l->kind);
        }
        if (st != FFNN_OK)
            return st;
        if (l->act != FFNN_ACT_IDENTITY &&
            (st = t->ops->activation_forward(t->ctx, l->act, t->act[i], t->act[i],
                                             batch * l->out)))
            return st;
        in = t->act[i];
    }
    *output = t->act[m->layer_count - 1];
    return FFNN_OK;
}

/* Backward pass from d(output) in grad_buf[0]; writes every layer's dW, db.
 * sgd (only when t->fused_sgd, else NULL): the layers also apply p -= lr g. */
static ffnn_status backward(ffnn_trainer *t, size_t batch, const ffnn_optimizer_step *sgd)
{
    const ffnn_model *m = t->model;
    ffnn_status st;
    int cur = 0;       /* grad_buf[cur] holds dL/da of layer i ...             */
    int is_dz = 0;     /* ... or dL/dz when the layer above applied act' already */
    for (int i = m->layer_count - 1; i >= 0; i--) {
        const ffnn_layer *l = &m->layers[i];
        float *dz = t->grad_buf[cur]; /* [batch, out] */
        if (!is_dz && l->act != FFNN_ACT_IDENTITY &&
            (st = t->ops->activation_backward(t->ctx, l->act, t->act[i], dz, dz,
                                              batch * l->out)))
            return st;
        const float *x = i == 0 ? t->x : t->act[i - 1]; /* [batch, in] */
        float *dx = i == 0 ? NULL : t->grad_buf[1 - cur];
        float *db = l->has_bias ? t->grads + l->bias_offset : NULL;
        float *W = t->params + l->weight_offset;  /* [out, fan_in] */
        float *dW = t->grads + l->weight_offset;  /* [out, fan_in] */
        is_dz = 0;
        if (t->fused && l->kind == FFNN_LAYER_DENSE) { /* act' of x in the dx epilogue */
            const ffnn_activation x_act = i == 0 ? FFNN_ACT_IDENTITY : m->layers[i - 1].act;
            if ((st = t->ops->dense_backward_fused(
                     t->ctx, x, W, l->has_bias ? t->params + l->bias_offset : NULL, dz, dx,
                     dW, db, batch, l->in, l->out, x_act, sgd)))
                return st;
            is_dz = 1;
            cur = 1 - cur;
            continue;
        }
        switch (l->kind) {
        case FFNN_LAYER_DENSE:
            st = t->ops->dense_backward(t->ctx, x, W, dz, dx, dW, db, batch, l->in, l->out);
            break;
        case FFNN_LAYER_LOCAL1D:
            st = t->ops->local1d_backward(t->ctx, x, W, dz, dx, dW, db, batch, l->in,
                                          l->spec.local1d.R, l->spec.local1d.padding);
            break;
        default:
            st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "layer %d: unknown kind %d", i,
                           (int)l->kind);
        }
        if (st != FFNN_OK)
            return st;
        cur = 1 - cur;
    }
    return FFNN_OK;
}

/* The permutation of an epoch (or file order) from the shuffle generator as it
 * was when the epoch began (epoch_rng), uploaded once; shuffle_rng advances. */
static ffnn_status make_permutation(ffnn_trainer *t)
{
    size_t n = t->train.host->count;
    for (size_t i = 0; i < n; i++)
        t->perm[i] = (int32_t)i;
    t->shuffle_rng = t->epoch_rng;
    if (t->cfg.shuffle)
        ffnn_rng_shuffle(&t->shuffle_rng, t->perm, n);
    return t->ops->upload(t->ctx, t->train.index, t->perm, n * sizeof(int32_t));
}

/* Start an epoch: a fresh permutation (or file order), uploaded once. */
static ffnn_status begin_epoch(ffnn_trainer *t)
{
    t->epoch_rng = t->shuffle_rng;
    t->epoch++;
    t->step = 0;
    t->epoch_loss_known = 0;
    return make_permutation(t);
}

/* Batch size of step s (0-based) of an epoch: the last batch may be short. */
static size_t batch_of_step(const ffnn_trainer *t, size_t s)
{
    size_t n = t->train.host->count, first = s * t->cfg.batch_size;
    return n - first < t->cfg.batch_size ? n - first : t->cfg.batch_size;
}

/* Queue training step s (0-based) of the current epoch as optimizer step
 * opt_t (1-based). Touches no counter: run_steps advances them. */
static ffnn_status queue_step(ffnn_trainer *t, size_t s, uint64_t opt_t)
{
    const ffnn_model *m = t->model;
    size_t first = s * t->cfg.batch_size, batch = batch_of_step(t, s);
    float *output;
    ffnn_status st;
    size_t width = m->layers[m->layer_count - 1].out;
    const ffnn_optimizer_step update = ffnn_optimizer_step_at(&t->cfg, opt_t);
    const ffnn_gather_source src = gather_source(&t->train);
    if ((st = t->ops->gather(t->ctx, &src, t->train.index + first, batch, t->x, t->y,
                             t->tgt)) ||
        (st = forward(t, batch, &output)) ||
        (st = t->ops->loss(t->ctx, t->cfg.loss, output, t->y, batch_targets(t, &t->train),
                           batch, width, t->grad_buf[0], t->train.row_loss + first,
                           t->train.row_correct + first)) ||
        (st = backward(t, batch, t->fused_sgd ? &update : NULL)))
        return st;
    if (!t->fused_sgd)
        st = t->ops->optimizer_update(t->ctx, &update, t->params, t->grads, t->opt_state,
                                      m->parameter_count);
    return st;
}

/* The persistent kernel's job for steps [first, first + count) (shapes only when
 * count is 0: for the support check). */
static ffnn_persistent_job persistent_job(ffnn_trainer *t, size_t first, size_t count)
{
    const ffnn_model *m = t->model;
    const ffnn_layer *l0 = &m->layers[0], *l1 = &m->layers[1];
    ffnn_persistent_job j;
    memset(&j, 0, sizeof j);
    j.data = gather_source(&t->train);
    j.index = t->train.index;
    j.n = t->train.host->count;
    j.batch_size = t->cfg.batch_size;
    j.first_step = first;
    j.steps = count;
    j.in = l0->in;
    j.hidden = l0->out;
    j.out = l1->out;
    j.hidden_act = l0->act;
    j.loss = t->cfg.loss;
    j.W1 = t->params + l0->weight_offset;
    j.b1 = l0->has_bias ? t->params + l0->bias_offset : NULL;
    j.W2 = t->params + l1->weight_offset;
    j.b2 = l1->has_bias ? t->params + l1->bias_offset : NULL;
    j.lr = ffnn_optimizer_step_at(&t->cfg, 1).lr;
    j.row_loss = t->train.row_loss;
    j.row_correct = t->train.row_correct;
    return j;
}

/* 1 when two optimizer steps have the same scalars (a graph may replay one). */
static int same_update(const ffnn_optimizer_step *a, const ffnn_optimizer_step *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* graph strategy: steps [first, first + count) through a cached graph, captured
 * on first use. */
static ffnn_status run_graph(ffnn_trainer *t, size_t first, size_t count)
{
    const ffnn_optimizer_step u0 = ffnn_optimizer_step_at(&t->cfg, t->opt_steps + 1);
    const ffnn_optimizer_step u1 = ffnn_optimizer_step_at(&t->cfg, t->opt_steps + 2);
    /* replayable (cached) when every step has the same scalars: sgd always,
     * momentum after its first step, adam never */
    const int stable = same_update(&u0, &u1);
    step_graph *slot = NULL;
    ffnn_status st;
    for (int i = 0; i < GRAPH_CACHE; i++) {
        step_graph *g = &t->graphs[i];
        if (g->exec && g->first == first && g->count == count && stable &&
            same_update(&g->update, &u0)) {
            g->used = ++t->graph_tick;
            return t->ops->graph_launch(t->ctx, g->exec);
        }
        if (!slot || !g->exec || (slot->exec && g->used < slot->used))
            slot = g;
    }
    if (slot->exec) {
        t->ops->graph_free(t->ctx, slot->exec);
        slot->exec = NULL;
    }
    if ((st = t->ops->capture_begin(t->ctx)) != FFNN_OK)
        return st;
    ffnn_status qs = FFNN_OK;
    for (size_t s = first; s < first + count && qs == FFNN_OK; s++)
        qs = queue_step(t, s, t->opt_steps + 1 + (s - first));
    void *exec = NULL;
    st = t->ops->capture_end(t->ctx, &exec); /* ends the capture even after an error */
    if (qs != FFNN_OK) {
        if (exec)
            t->ops->graph_free(t->ctx, exec);
        return qs;
    }
    if (st != FFNN_OK)
        return st;
    slot->exec = exec;
    slot->first = first;
    slot->count = count;
    slot->update = u0;
    slot->used = ++t->graph_tick;
    if (!stable) { /* adam: use once */
        st = t->ops->graph_launch(t->ctx, exec);
        t->ops->graph_free(t->ctx, exec);
        slot->exec = NULL;
        return st;
    }
    return t->ops->graph_launch(t->ctx, exec);
}

/* Queue steps [t->step, t->step + count) of the current epoch with the trainer's
 * strategy and advance the counters. */
static ffnn_status run_steps(ffnn_trainer *t, size_t count)
{
    ffnn_status st = FFNN_OK;
    if (t->strategy == FFNN_STRATEGY_PERSISTENT) {
        const ffnn_persistent_job job = persistent_job(t, t->step, count);
        st = t->ops->train_persistent(t->ctx, &job);
    } else if (t->strategy == FFNN_STRATEGY_GRAPH ||
               (t->strategy == FFNN_STRATEGY_CUBLAS && count > 1)) {
        st = run_graph(t, t->step, count);
    } else {
        for (size_t i = 0; i < count && st == FFNN_OK; i++)
            st = queue_step(t, t->step + i, t->opt_steps + 1 + i);
    }
    if (st != FFNN_OK)
        return st;
    t->opt_steps += count;
    t->step += count;
    return FFNN_OK;
}

/* Steps per launch: cfg.steps_per_launch for graph, persistent and cublas, else
 * by default 16 for graph, the rest of the epoch for persistent, 8 for cublas,
 * 1 otherwise. */
static size_t launch_steps(const ffnn_trainer *t)
{
    const size_t asked = (size_t)t->cfg.steps_per_launch;
    switch (t->strategy) {
    case FFNN_STRATEGY_GRAPH: return asked ? asked : GRAPH_DEFAULT_STEPS;
    case FFNN_STRATEGY_PERSISTENT: return asked ? asked : ffnn_trainer_steps_per_epoch(t);
    case FFNN_STRATEGY_CUBLAS: return asked ? asked : CUBLAS_DEFAULT_STEPS;
    default: return 1;
    }
}

static double mean_of(const float *v, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    return sum / (double)n;
}

/* Record the loss of step s (0-based) of the current epoch; 0 when it is NaN
 * or Inf. The first NaN/Inf loss of the run is remembered (no checkpoint is
 * written after it). */
static int record_step_loss(ffnn_trainer *t, size_t s, double loss)
{
    t->epoch_loss[s] = loss;
    if (isfinite(loss))
        return 1;
    if (t->diverged_epoch == 0) {
        t->diverged_epoch = t->epoch;
        t->diverged_step = s + 1;
        t->diverged_loss = loss;
    }
    return 0;
}

/* Read back the per-row losses of steps [epoch_loss_known, step) of the current
 * epoch in one download (it synchronises) and record each step's mean; when
 * the epoch is complete, it becomes the last epoch (ffnn_trainer_step_losses).
 * FFNN_ERR_NUMERIC names the first NaN/Inf step. */
static ffnn_status read_back_losses(ffnn_trainer *t)
{
    size_t from = t->epoch_loss_known, to = t->step, B = t->cfg.batch_size;
    if (from >= to)
        return FFNN_OK;
    size_t first = from * B, count = (to - 1) * B + batch_of_step(t, to - 1) - first;
    float *rows = malloc(count * sizeof *rows); /* [count] */
    if (!rows)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    ffnn_status st = t->ops->download(t->ctx, rows, t->train.row_loss + first,
                                      count * sizeof *rows);
    if (st != FFNN_OK) {
        free(rows);
        return st;
    }
    size_t bad = to; /* every step recorded; the first NaN/Inf reported */
    for (size_t s = from; s < to; s++)
        if (!record_step_loss(t, s, mean_of(rows + (s * B - first), batch_of_step(t, s))) &&
            bad == to)
            bad = s;
    free(rows);
    t->epoch_loss_known = to;
    if (bad < to)
        return ffnn_fail(FFNN_ERR_NUMERIC,
                         "epoch %d, step %zu: the loss is %g (diverged or NaN/Inf in the "
                         "data; try a smaller learning rate)", t->epoch, bad + 1,
                         t->epoch_loss[bad]);
    if (to == ffnn_trainer_steps_per_epoch(t)) {
        memcpy(t->step_loss, t->epoch_loss, to * sizeof *t->step_loss);
        t->step_loss_count = to;
    }
    return FFNN_OK;
}

ffnn_status ffnn_trainer_step(ffnn_trainer *t, double *loss)
{
    ffnn_status st;
    if (t->epoch == 0 || t->step == ffnn_trainer_steps_per_epoch(t))
        if ((st = begin_epoch(t)) != FFNN_OK)
            return st;
    if ((st = read_back_losses(t)) != FFNN_OK || (st = run_steps(t, 1)) != FFNN_OK)
        return st;
    st = read_back_losses(t); /* this batch's rows */
    *loss = t->epoch_loss[t->step - 1];
    return st;
}

void ffnn_trainer_position(const ffnn_trainer *t, int *epoch, size_t *step)
{
    if (epoch)
        *epoch = t->epoch;
    if (step)
        *step = t->step;
}

ffnn_status ffnn_trainer_run_epoch_until(ffnn_trainer *t, ffnn_step_fn on_step, void *user,
                                         ffnn_epoch_stats *stats, int *finished)
{
    ffnn_status st;
    if (!t || !stats)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_run_epoch_until: NULL argument");
    size_t steps = ffnn_trainer_steps_per_epoch(t), B = t->cfg.batch_size;
    double start = now_seconds();
    if ((st = t->ops->synchronize(t->ctx)) != FFNN_OK)
        return st;
    if ((t->epoch == 0 || t->step == steps) && (st = begin_epoch(t)) != FFNN_OK)
        return st;
    size_t first_step = t->step, per_launch = launch_steps(t);
    while (t->step < steps) {
        size_t count = steps - t->step < per_launch ? steps - t->step : per_launch;
        if ((st = run_steps(t, count)) != FFNN_OK)
            return st;
        if (on_step && on_step(user, t, t->epoch, t->step, steps) != 0)
            break;
    }
    /* one read-back per call: the rows of the steps not read back yet */
    if ((st = read_back_losses(t)) != FFNN_OK)
        return st;
    if (t->diverged_epoch == t->epoch && t->diverged_step > first_step) /* seen by on_step */
        return ffnn_fail(FFNN_ERR_NUMERIC,
                         "epoch %d, step %zu: the loss is %g (diverged or NaN/Inf in the "
                         "data; try a smaller learning rate)", t->diverged_epoch,
                         t->diverged_step, t->diverged_loss);
    double seconds = now_seconds() - start, sum = 0.0;
    for (size_t s = 0; s < t->step; s++)
        sum += t->epoch_loss[s];
    size_t rows_done = t->step > first_step /* samples trained on in this call */
                           ? (t->step - 1) * B + batch_of_step(t, t->step - 1) - first_step * B
                           : 0;
    stats->epoch = t->epoch;
    stats->train_loss = t->step ? sum / (double)t->step : 0.0;
    stats->seconds = seconds;
    stats->images_per_second = seconds > 0 ? (double)rows_done / seconds : 0.0;
    if (finished)
        *finished = t->step == steps;
    return FFNN_OK;
}

/* ffnn_trainer_run_epoch's progress callback as a step callback that never stops. */
typedef struct progress_adapter {
    ffnn_progress_fn progress;
    void *user;
} progress_adapter;

static int call_progress(void *user, ffnn_trainer *t, int epoch, size_t step, size_t steps)
{
    const progress_adapter *a = user;
    (void)t, (void)epoch;
    if (a->progress)
        a->progress(a->user, step, steps);
    return 0;
}

ffnn_status ffnn_trainer_run_epoch(ffnn_trainer *t, ffnn_progress_fn progress, void *user,
                                   ffnn_epoch_stats *stats)
{
    progress_adapter a = {progress, user};
    return ffnn_trainer_run_epoch_until(t, call_progress, &a, stats, NULL);
}

ffnn_status ffnn_trainer_evaluate(ffnn_trainer *t, const ffnn_dataset *data, double *loss,
                                  double *accuracy)
{
    const ffnn_model *m = t->model;
    ffnn_status st;
    if (!data || data->count == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "evaluate: empty data set");
    if (data->features != m->input_size)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "evaluate: the network takes %zu inputs, the data has %zu features",
                         m->input_size, data->features);
    size_t width = m->layers[m->layer_count - 1].out;
    if (data->target_width && (t->cfg.loss == FFNN_LOSS_SOFTMAX_CE ||
                               data->target_width != width))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "evaluate: the data has %zu float targets per sample; loss %s with "
                         "%zu outputs needs class labels or %zu targets", data->target_width,
                         ffnn_loss_name(t->cfg.loss), width, width);
    if (t->cfg.loss == FFNN_LOSS_SOFTMAX_CE && (size_t)data->classes > width)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "evaluate: the data has labels up to %d, the network %zu outputs",
                         data->classes - 1, width);
    /* evaluation has its own device copy (in file order), cached by data set */
    device_dataset *d = &t->eval;
    if (d->host != data) {
        device_dataset_free(t, d);
        if ((st = device_dataset_upload(t, data, d)) != FFNN_OK)
            return st;
    }
    size_t n = data->count;
    for (size_t first = 0; first < n; first += t->cfg.eval_batch_size) {
        size_t batch = n - first < t->cfg.eval_batch_size ? n - first : t->cfg.eval_batch_size;
        float *output;
        const ffnn_gather_source src = gather_source(d);
        if ((st = t->ops->gather(t->ctx, &src, d->index + first, batch, t->x, t->y, t->tgt)) ||
            (st = forward(t, batch, &output)) ||
            (st = t->ops->loss(t->ctx, t->cfg.loss, output, t->y, batch_targets(t, d), batch,
                               width, NULL, d->row_loss + first, d->row_correct + first)))
            return st;
    }
    float *rows = malloc(n * sizeof *rows);
    uint8_t *correct = malloc(n);
    if (!rows || !correct) {
        free(rows);
        free(correct);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    }
    if ((st = t->ops->download(t->ctx, rows, d->row_loss, n * sizeof *rows)) == FFNN_OK &&
        (st = t->ops->download(t->ctx, correct, d->row_correct, n)) == FFNN_OK) {
        size_t right = 0;
        for (size_t i = 0; i < n; i++)
            right += correct[i];
        *loss = mean_of(rows, n);
        *accuracy = (double)right / (double)n;
    }
    free(rows);
    free(correct);
    return st;
}

ffnn_status ffnn_trainer_sync_model(ffnn_trainer *t)
{
    return t->ops->download(t->ctx, t->model->params, t->params,
                            t->model->parameter_count * sizeof(float));
}

ffnn_status ffnn_trainer_upload_model(ffnn_trainer *t)
{
    return t->ops->upload(t->ctx, t->params, t->model->params,
                          t->model->parameter_count * sizeof(float));
}

ffnn_status ffnn_trainer_gradient(ffnn_trainer *t, const int32_t *rows, size_t batch,
                                  double *loss, float *grads)
{
    const ffnn_model *m = t->model;
    if (batch < 1 || batch > t->capacity)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "gradient: batch %zu outside [1, %zu]",
                         batch, t->capacity);
    for (size_t i = 0; i < batch; i++)
        if (rows[i] < 0 || (size_t)rows[i] >= t->train.host->count)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "gradient: row %d out of range",
                             rows[i]);
    int32_t *index = NULL;   /* [batch] device */
    float *row_loss = NULL;  /* [batch] device */
    float *host_rows = malloc(batch * sizeof *host_rows);
    size_t width = m->layers[m->layer_count - 1].out;
    const ffnn_gather_source src = gather_source(&t->train);
    float *output;
    ffnn_status st = host_rows ? FFNN_OK : ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    if (st == FFNN_OK &&
        !((st = dev_alloc(t, &index, batch, sizeof *index)) ||
          (st = dev_alloc(t, &row_loss, batch, sizeof *row_loss)) ||
          (st = t->ops->upload(t->ctx, index, rows, batch * sizeof *index)) ||
          (st = t->ops->gather(t->ctx, &src, index, batch, t->x, t->y, t->tgt)) ||
          (st = forward(t, batch, &output)) ||
          (st = t->ops->loss(t->ctx, t->cfg.loss, output, t->y, batch_targets(t, &t->train),
                             batch, width, t->grad_buf[0], row_loss, NULL)) ||
          (st = backward(t, batch, NULL)) ||
          (st = t->ops->download(t->ctx, host_rows, row_loss, batch * sizeof *host_rows)) ||
          (grads && (st = t->ops->download(t->ctx, grads, t->grads,
                                           m->parameter_count * sizeof *grads)))))
        *loss = mean_of(host_rows, batch);
    dev_free(t, index);
    dev_free(t, row_loss);
    free(host_rows);
    return st;
}

ffnn_status ffnn_trainer_step_losses(const ffnn_trainer *t, const double **losses,
                                     size_t *count)
{
    if (!t || !losses || !count)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_step_losses: NULL argument");
    *losses = t->step_loss;
    *count = t->step_loss_count;
    return FFNN_OK;
}

ffnn_status ffnn_trainer_optimizer_state(ffnn_trainer *t, float *host_state, size_t *count)
{
    if (!t || !count)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_trainer_optimizer_state: NULL argument");
    size_t n = ffnn_optimizer_state_count(t->cfg.optimizer) * t->model->parameter_count;
    if (host_state && *count < n)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_trainer_optimizer_state: room for %zu floats, the %s state "
                         "has %zu", *count, ffnn_optimizer_name(t->cfg.optimizer), n);
    *count = n;
    if (!host_state || n == 0)
        return FFNN_OK;
    return t->ops->download(t->ctx, host_state, t->opt_state, n * sizeof *host_state);
}

uint64_t ffnn_trainer_optimizer_steps(const ffnn_trainer *t) { return t->opt_steps; }

/* ------------------------------------------------------------ checkpoint state */

ffnn_model *ffnn_trainer_model(const ffnn_trainer *t) { return t->model; }

const ffnn_train_config *ffnn_trainer_config(const ffnn_trainer *t) { return &t->cfg; }

const ffnn_dataset *ffnn_trainer_train_data(const ffnn_trainer *t) { return t->train.host; }

uint32_t ffnn_trainer_data_crc32(ffnn_trainer *t)
{
    if (!t->data_crc_known) {
        const ffnn_dataset *d = t->train.host;
        const uint8_t *parts[4] = {d->images, (const uint8_t *)d->values, d->labels,
                                   (const uint8_t *)d->targets};
        size_t sizes[4] = {d->count * d->features, d->count * d->features * sizeof(float),
                           d->count, d->count * d->target_width * sizeof(float)};
        uLong crc = crc32(0L, Z_NULL, 0);
        for (int p = 0; p < 4; p++)
            for (size_t at = 0; parts[p] && at < sizes[p]; at += 1u << 30) {
                size_t n = sizes[p] - at < (1u << 30) ? sizes[p] - at : (1u << 30);
                crc = crc32(crc, parts[p] + at, (uInt)n);
            }
        t->data_crc = (uint32_t)crc;
        t->data_crc_known = 1;
    }
    return t->data_crc;
}

ffnn_status ffnn_trainer_download_parameters(ffnn_trainer *t, float *host)
{
    return t->ops->download(t->ctx, host, t->params, t->model->parameter_count * sizeof *host);
}

ffnn_status ffnn_trainer_get_state(ffnn_trainer *t, ffnn_trainer_state *s)
{
    ffnn_status st = read_back_losses(t);
    if (st == FFNN_OK && t->diverged_epoch != 0)
        st = ffnn_fail(FFNN_ERR_NUMERIC,
                       "epoch %d, step %zu: the loss is %g (the run diverged; a checkpoint "
                       "after it would hold NaN/Inf)", t->diverged_epoch, t->diverged_step,
                       t->diverged_loss);
    if (st != FFNN_OK)
        return st;
    s->epoch = t->epoch;
    s->step = t->step;
    s->optimizer_steps = t->opt_steps;
    memcpy(s->epoch_rng, t->epoch_rng.s, sizeof s->epoch_rng);
    s->step_losses = t->epoch_loss;
    return FFNN_OK;
}

ffnn_status ffnn_trainer_set_state(ffnn_trainer *t, const float *params, const float *opt_state,
                                   const ffnn_trainer_state *s)
{
    size_t steps = ffnn_trainer_steps_per_epoch(t), n = t->model->parameter_count;
    size_t state_floats = ffnn_optimizer_state_count(t->cfg.optimizer) * n;
    ffnn_status st;
    if (s->epoch < 0 || s->step > steps || (s->epoch == 0 && s->step != 0))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "epoch %d, step %zu: expected an epoch >= 0 and a step in [0, %zu] "
                         "(0 before the first epoch)", s->epoch, s->step, steps);
    uint64_t expected = s->epoch == 0 ? 0 : (uint64_t)(s->epoch - 1) * steps + s->step;
    if (s->optimizer_steps != expected)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "optimizer steps %llu: expected %llu (%d full epochs of %zu steps "
                         "and %zu steps)", (unsigned long long)s->optimizer_steps,
                         (unsigned long long)expected, s->epoch > 0 ? s->epoch - 1 : 0, steps,
                         s->step);
    for (size_t k = 0; k < s->step; k++)
        if (!isfinite(s->step_losses[k]))
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "step %zu: loss %g: expected a "
                             "finite number", k + 1, s->step_losses[k]);
    if ((st = t->ops->upload(t->ctx, t->params, params, n * sizeof *params)) != FFNN_OK ||
        (state_floats && (st = t->ops->upload(t->ctx, t->opt_state, opt_state,
                                              state_floats * sizeof *opt_state)) != FFNN_OK))
        return st;
    memcpy(t->model->params, params, n * sizeof *params);
    t->opt_steps = s->optimizer_steps;
    memcpy(t->epoch_rng.s, s->epoch_rng, sizeof t->epoch_rng.s);
    t->shuffle_rng = t->epoch_rng;
    t->epoch = s->epoch;
    t->step = s->step;
    t->diverged_epoch = 0;
    memcpy(t->epoch_loss, s->step_losses, s->step * sizeof *t->epoch_loss);
    t->epoch_loss_known = s->step;
    t->step_loss_count = 0;
    if (s->epoch > 0 && s->step == steps) {
        memcpy(t->step_loss, t->epoch_loss, steps * sizeof *t->step_loss);
        t->step_loss_count = steps;
    }
    /* the epoch's permutation again (shuffle_rng then stands where it stood) */
    if (s->epoch > 0 && (st = make_permutation(t)) != FFNN_OK)
        return st;
    return t->ops->synchronize(t->ctx); /* the uploads may be asynchronous */
}
