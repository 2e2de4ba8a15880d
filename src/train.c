/*
 * train.c - the training loop: backend choice, device buffers, shuffling,
 * batching, forward, backward, the optimizer step, evaluation and metrics.
 *
 * One step (all on the backend, no host copy):
 *   gather x [B, in0], y [B] by the device permutation
 *   for each layer l:  a_l = f_l(a_{l-1} W_l^T + b_l)         (in place)
 *   loss(a_L, y) -> row_loss[step*B .. +B), d a_L             (mean over batch)
 *   for l = L..1:  dz = da * f_l'(a_l); dW_l, db_l, da_{l-1}
 *   optimizer_update(params, grads, state)      (one arena each: sgd, momentum, adam)
 * The per-row losses of the whole epoch stay on the device and are read back once.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "data/dataset.h"
#include "error.h"
#include "model.h"
#include "rng.h"
#include "train_internal.h"

/* The device copy of one data set (uploaded once). */
typedef struct device_dataset {
    const ffnn_dataset *host; /* the data set this copy was made from */
    uint8_t *images;          /* [count, features]                    */
    uint8_t *labels;          /* [count]                              */
    int32_t *index;           /* [count] permutation or 0..count-1    */
    float *row_loss;          /* [count] per-sample loss              */
    uint8_t *row_correct;     /* [count] 1 when classified right      */
} device_dataset;

struct ffnn_trainer {
    ffnn_model *model;
    ffnn_train_config cfg;
    ffnn_device device;
    const ffnn_backend_ops *ops;
    void *ctx;

    size_t capacity;          /* rows of the activation buffers: max(batch, eval batch) */
    float *params;            /* [parameter_count] on the device           */
    float *grads;             /* [parameter_count]                         */
    float *opt_state;         /* [state_count * parameter_count] optimizer state in one
                                 allocation (momentum: buf; adam: m then v), laid out
                                 like the parameter arena; NULL for sgd     */
    uint64_t opt_steps;       /* optimizer steps taken (Adam's t of the last step) */
    float *x;                 /* [capacity, input_size]                    */
    uint8_t *y;               /* [capacity]                                */
    float **act;              /* [layer_count] -> [capacity, layer.out]    */
    float *grad_buf[2];       /* each [capacity, widest layer] (backprop ping-pong) */

    device_dataset train;
    device_dataset eval;      /* the last data set evaluated (cached)      */

    int32_t *perm;            /* [train count] host permutation            */
    double *step_loss;        /* [steps per epoch] the last epoch's per-step losses */
    size_t step_loss_count;   /* steps of the last completed epoch (0 before) */
    ffnn_rng shuffle_rng;
    int epoch;                /* epochs started (1-based once started)     */
    size_t step;              /* next step within the current epoch        */
};

ffnn_train_config ffnn_train_config_default(void)
{
    ffnn_train_config c;
    memset(&c, 0, sizeof c);
    c.epochs = 10;
    c.batch_size = 64;
    c.learning_rate = 0.01f;
    c.seed = 1;
    c.shuffle = 1;
    c.loss = FFNN_LOSS_SOFTMAX_CE;
    c.device = FFNN_DEVICE_AUTO;
    c.kernels = FFNN_KERNELS_TILED;
    c.eval_batch_size = 1024;
    c.optimizer = FFNN_OPT_SGD;
    c.momentum = 0.9f;
    c.nesterov = 0;
    c.beta1 = 0.9f;
    c.beta2 = 0.999f;
    c.epsilon = 1e-8f;
    return c;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------ validation */

static ffnn_status check_config(const ffnn_model *m, const ffnn_dataset *train,
                                const ffnn_train_config *c)
{
    if (c->epochs < 0 || c->epochs > 1000000)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "epochs must be in [0, 1000000], found %d",
                         c->epochs);
    if (c->batch_size < 1 || c->batch_size > train->count)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "batch size must be in [1, %zu] (the training set size), found %zu",
                         train->count, c->batch_size);
    if (c->eval_batch_size < 1 || c->eval_batch_size > (1u << 20))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "evaluation batch size must be in [1, 1048576], found %zu",
                         c->eval_batch_size);
    if (!(c->learning_rate > 0.0f) || !isfinite(c->learning_rate) || c->learning_rate > 1e6f)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "learning rate must be positive, finite and at most 1e6, found %g",
                         (double)c->learning_rate);
    if (c->optimizer != FFNN_OPT_SGD && c->optimizer != FFNN_OPT_MOMENTUM &&
        c->optimizer != FFNN_OPT_ADAM)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "unknown optimizer %d (expected sgd, momentum or adam)",
                         (int)c->optimizer);
    if (!(c->momentum >= 0.0f && c->momentum < 1.0f))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "momentum must be in [0, 1), found %g",
                         (double)c->momentum);
    if (c->nesterov && (c->optimizer != FFNN_OPT_MOMENTUM || c->momentum == 0.0f))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "nesterov needs the momentum optimizer with a momentum > 0 "
                         "(found optimizer %s, momentum %g)",
                         ffnn_optimizer_name(c->optimizer), (double)c->momentum);
    if (!(c->beta1 >= 0.0f && c->beta1 < 1.0f))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "adam beta1 must be in [0, 1), found %g",
                         (double)c->beta1);
    if (!(c->beta2 >= 0.0f && c->beta2 < 1.0f))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "adam beta2 must be in [0, 1), found %g",
                         (double)c->beta2);
    if (!(c->epsilon > 0.0f && c->epsilon <= 1.0f))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "adam epsilon must be in (0, 1], found %g",
                         (double)c->epsilon);
    if (train->count > (size_t)INT32_MAX)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "training set larger than 2^31-1 samples");
    if (m->input_size != train->features)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "the network takes %zu inputs but the data has %zu features per sample",
                         m->input_size, train->features);
    const ffnn_dense_layer *last = &m->layers[m->layer_count - 1];
    if (c->loss != FFNN_LOSS_MSE && last->act != FFNN_ACT_IDENTITY)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "loss %s applies %s to the logits itself: the last layer must have "
                         "no activation (write '-%zu', not '-%zu%s')",
                         ffnn_loss_name(c->loss),
                         c->loss == FFNN_LOSS_SOFTMAX_CE ? "softmax" : "the sigmoid",
                         last->out, last->out, ffnn_activation_name(last->act));
    if (c->loss == FFNN_LOSS_SOFTMAX_CE && last->out < 2)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "loss ce needs at least 2 outputs, the network has %zu", last->out);
    size_t classes_fit = last->out == 1 ? 2 : last->out;
    if (c->loss != FFNN_LOSS_MSE || last->out > 1) {
        if ((size_t)train->classes > classes_fit)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "the data has labels up to %d but the network has %zu output%s "
                             "(at most %zu classes)",
                             train->classes - 1, last->out, last->out == 1 ? "" : "s",
                             classes_fit);
    }
    return FFNN_OK;
}

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
    dev_free(t, d->labels);
    dev_free(t, d->index);
    dev_free(t, d->row_loss);
    dev_free(t, d->row_correct);
    memset(d, 0, sizeof *d);
}

/* Upload a data set once: images, labels, per-row metric buffers, index 0..n-1. */
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
    if ((st = dev_alloc(t, &d->images, n, ds->features)) != FFNN_OK ||
        (st = dev_alloc(t, &d->labels, n, 1)) != FFNN_OK ||
        (st = dev_alloc(t, &d->index, n, sizeof(int32_t))) != FFNN_OK ||
        (st = dev_alloc(t, &d->row_loss, n, sizeof(float))) != FFNN_OK ||
        (st = dev_alloc(t, &d->row_correct, n, 1)) != FFNN_OK ||
        (st = t->ops->upload(t->ctx, d->images, ds->images, n * ds->features)) != FFNN_OK ||
        (st = t->ops->upload(t->ctx, d->labels, ds->labels, n)) != FFNN_OK ||
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
        t->ops = &ffnn_cpu_backend;
    }
    t->device = requested;
    if (!ffnn_backend_ops_complete(t->ops))
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "backend %s is incomplete", t->ops->name);
    return t->ops->create(t->cfg.kernels, &t->ctx);
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
        (st = dev_alloc(t, &t->grad_buf[0], t->capacity, widest * sizeof(float))) ||
        (st = dev_alloc(t, &t->grad_buf[1], t->capacity, widest * sizeof(float))))
        return st;
    if ((st = allocate_optimizer_state(t)) != FFNN_OK)
        return st;
    return t->ops->upload(t->ctx, t->params, m->params, m->parameter_count * sizeof(float));
}

ffnn_status ffnn_trainer_create(ffnn_model *m, const ffnn_dataset *train,
                                const ffnn_train_config *cfg, ffnn_trainer **out)
{
    if (!m || !train || !cfg || !out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_create: NULL argument");
    ffnn_status st = check_config(m, train, cfg);
    if (st != FFNN_OK)
        return st;
    ffnn_trainer *t = calloc(1, sizeof *t);
    if (!t)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory creating a trainer");
    t->model = m;
    t->cfg = *cfg;
    t->capacity = cfg->batch_size > cfg->eval_batch_size ? cfg->batch_size : cfg->eval_batch_size;
    ffnn_rng_seed(&t->shuffle_rng, cfg->seed, FFNN_STREAM_SHUFFLE);
    t->perm = malloc(train->count * sizeof *t->perm);
    t->step_loss = malloc((train->count / cfg->batch_size + 1) * sizeof *t->step_loss);
    if (!t->perm || !t->step_loss) {
        free(t->perm);
        free(t->step_loss);
        free(t);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the permutation");
    }
    if ((st = pick_backend(t, cfg->device)) != FFNN_OK ||
        (st = allocate_buffers(t)) != FFNN_OK ||
        (st = device_dataset_upload(t, train, &t->train)) != FFNN_OK) {
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
        dev_free(t, t->grad_buf[0]);
        dev_free(t, t->grad_buf[1]);
        t->ops->destroy(t->ctx);
    }
    free(t->act);
    free(t->perm);
    free(t->step_loss);
    free(t);
}

ffnn_device ffnn_trainer_device(const ffnn_trainer *t) { return t->device; }

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
        const ffnn_dense_layer *l = &m->layers[i];
        const float *W = t->params + l->weight_offset;
        const float *b = l->has_bias ? t->params + l->bias_offset : NULL;
        if ((st = t->ops->dense_forward(t->ctx, in, W, b, t->act[i], batch, l->in, l->out)))
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

/* Backward pass from d(output) in grad_buf[0]; writes every layer's dW, db. */
static ffnn_status backward(ffnn_trainer *t, size_t batch)
{
    const ffnn_model *m = t->model;
    ffnn_status st;
    int cur = 0; /* grad_buf[cur] holds dL/da of layer i */
    for (int i = m->layer_count - 1; i >= 0; i--) {
        const ffnn_dense_layer *l = &m->layers[i];
        float *dz = t->grad_buf[cur]; /* [batch, out] */
        if (l->act != FFNN_ACT_IDENTITY &&
            (st = t->ops->activation_backward(t->ctx, l->act, t->act[i], dz, dz,
                                              batch * l->out)))
            return st;
        const float *x = i == 0 ? t->x : t->act[i - 1]; /* [batch, in] */
        float *dx = i == 0 ? NULL : t->grad_buf[1 - cur];
        float *db = l->has_bias ? t->grads + l->bias_offset : NULL;
        if ((st = t->ops->dense_backward(t->ctx, x, t->params + l->weight_offset, dz, dx,
                                         t->grads + l->weight_offset, db, batch, l->in,
                                         l->out)))
            return st;
        cur = 1 - cur;
    }
    return FFNN_OK;
}

/* Start an epoch: a fresh permutation (or file order), uploaded once. */
static ffnn_status begin_epoch(ffnn_trainer *t)
{
    size_t n = t->train.host->count;
    for (size_t i = 0; i < n; i++)
        t->perm[i] = (int32_t)i;
    if (t->cfg.shuffle)
        ffnn_rng_shuffle(&t->shuffle_rng, t->perm, n);
    t->epoch++;
    t->step = 0;
    return t->ops->upload(t->ctx, t->train.index, t->perm, n * sizeof(int32_t));
}

/* Queue one training step on the batch t->step of the current epoch. */
static ffnn_status train_step(ffnn_trainer *t, size_t *first_row, size_t *batch_out)
{
    const ffnn_model *m = t->model;
    size_t n = t->train.host->count;
    size_t first = t->step * t->cfg.batch_size;
    size_t batch = n - first < t->cfg.batch_size ? n - first : t->cfg.batch_size;
    float *output;
    ffnn_status st;
    size_t width = m->layers[m->layer_count - 1].out;
    const ffnn_optimizer_step update = ffnn_optimizer_step_at(&t->cfg, t->opt_steps + 1);
    if ((st = t->ops->gather(t->ctx, t->train.images, t->train.labels, t->train.index + first,
                             batch, m->input_size, t->x, t->y)) ||
        (st = forward(t, batch, &output)) ||
        (st = t->ops->loss(t->ctx, t->cfg.loss, output, t->y, batch, width, t->grad_buf[0],
                           t->train.row_loss + first, t->train.row_correct + first)) ||
        (st = backward(t, batch)) ||
        (st = t->ops->optimizer_update(t->ctx, &update, t->params, t->grads, t->opt_state,
                                       m->parameter_count)))
        return st;
    t->opt_steps++;
    t->step++;
    *first_row = first;
    *batch_out = batch;
    return FFNN_OK;
}

static double mean_of(const float *v, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    return sum / (double)n;
}

ffnn_status ffnn_trainer_step(ffnn_trainer *t, double *loss)
{
    ffnn_status st;
    if (t->epoch == 0 || t->step == ffnn_trainer_steps_per_epoch(t))
        if ((st = begin_epoch(t)) != FFNN_OK)
            return st;
    size_t first, batch;
    if ((st = train_step(t, &first, &batch)) != FFNN_OK)
        return st;
    float *rows = malloc(batch * sizeof *rows);
    if (!rows)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    st = t->ops->download(t->ctx, rows, t->train.row_loss + first, batch * sizeof *rows);
    if (st == FFNN_OK) {
        *loss = mean_of(rows, batch);
        if (!isfinite(*loss))
            st = ffnn_fail(FFNN_ERR_NUMERIC, "epoch %d, step %zu: the loss is %g",
                           t->epoch, t->step, *loss);
    }
    free(rows);
    return st;
}

ffnn_status ffnn_trainer_run_epoch(ffnn_trainer *t, ffnn_progress_fn progress, void *user,
                                   ffnn_epoch_stats *stats)
{
    ffnn_status st;
    size_t n = t->train.host->count, steps = ffnn_trainer_steps_per_epoch(t);
    float *rows = malloc(n * sizeof *rows);
    if (!rows)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    double start = now_seconds();
    if ((st = t->ops->synchronize(t->ctx)) != FFNN_OK || (st = begin_epoch(t)) != FFNN_OK)
        goto done;
    for (size_t s = 0; s < steps; s++) {
        size_t first, batch;
        if ((st = train_step(t, &first, &batch)) != FFNN_OK)
            goto done;
        if (progress)
            progress(user, s + 1, steps);
    }
    /* one read-back per epoch: every row's loss (synchronises) */
    if ((st = t->ops->download(t->ctx, rows, t->train.row_loss, n * sizeof *rows)) != FFNN_OK)
        goto done;
    double seconds = now_seconds() - start;
    double sum = 0.0;
    for (size_t s = 0; s < steps; s++) {
        size_t first = s * t->cfg.batch_size;
        size_t batch = n - first < t->cfg.batch_size ? n - first : t->cfg.batch_size;
        double step_loss = mean_of(rows + first, batch);
        if (!isfinite(step_loss)) {
            st = ffnn_fail(FFNN_ERR_NUMERIC,
                           "epoch %d, step %zu: the loss is %g (diverged or NaN/Inf in the "
                           "data; try a smaller learning rate)",
                           t->epoch, s + 1, step_loss);
            goto done;
        }
        sum += step_loss;
        t->step_loss[s] = step_loss;
    }
    t->step_loss_count = steps;
    stats->epoch = t->epoch;
    stats->train_loss = sum / (double)steps;
    stats->seconds = seconds;
    stats->images_per_second = seconds > 0 ? (double)n / seconds : 0.0;
done:
    free(rows);
    return st;
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
        if ((st = t->ops->gather(t->ctx, d->images, d->labels, d->index + first, batch,
                                 m->input_size, t->x, t->y)) ||
            (st = forward(t, batch, &output)) ||
            (st = t->ops->loss(t->ctx, t->cfg.loss, output, t->y, batch, width, NULL,
                               d->row_loss + first, d->row_correct + first)))
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
    float *output;
    ffnn_status st = host_rows ? FFNN_OK : ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    if (st == FFNN_OK &&
        !((st = dev_alloc(t, &index, batch, sizeof *index)) ||
          (st = dev_alloc(t, &row_loss, batch, sizeof *row_loss)) ||
          (st = t->ops->upload(t->ctx, index, rows, batch * sizeof *index)) ||
          (st = t->ops->gather(t->ctx, t->train.images, t->train.labels, index, batch,
                               m->input_size, t->x, t->y)) ||
          (st = forward(t, batch, &output)) ||
          (st = t->ops->loss(t->ctx, t->cfg.loss, output, t->y, batch, width,
                             t->grad_buf[0], row_loss, NULL)) ||
          (st = backward(t, batch)) ||
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
