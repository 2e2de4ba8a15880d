/* sweep_batched.c - the sweep's batched engine (sweep_batched.h): the models of a
 * sweep on one GPU as one array over a model axis, each op one launch for all of
 * them (backend.h ffnn_ops_models: the fused strategy's kernels with the model
 * index in the grid), the method of HFTA (Wang et al., MLSys 2022).
 *
 * Device layout, for the a models still training (slot z < a; model act[z]):
 *   params  [count][S]          slot z's parameters (the model's layout, P of
 *                               them; S = P rounded up to PARAM_ALIGN floats, so
 *                               every slot starts 256-byte aligned and the
 *                               matmuls keep their float4 loads and stores)
 *   grads   [count][S]          its weight gradients (scratch of the update)
 *   x, y    [a][B][in], [a][B]  the step's rows, gathered by index
 *   index   [steps][a][Bs]      the epoch's permutations, step-major: step s's
 *                               rows of every model side by side (Bs: that step's
 *                               batch), so one gather fetches them all
 *   act[i]  [a][rows][out_i]    layer outputs (rows: B, or an evaluation chunk)
 *   dz[2]   [a][B][widest]      the backward's gradients, in turn
 *   loss, correct [steps][a][Bs]  per-row results of the epoch
 * Each model is its lone run of the fused op sequence: its own shuffle generator
 * (seed, FFNN_STREAM_SHUFFLE), its learning rate, its batch mean. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/module.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/model.h"
#include "core/rng.h"
#include "data/dataset.h"
#include "train/config.h"
#include "train/sweep_batched.h"
#include "train/trainer.h"

#define EVAL_ROWS 1024 /* validation rows per forward chunk */
#define PARAM_ALIGN 64 /* floats: a slot of the parameter arena starts 256-byte aligned */

struct ffnn_batched {
    const ffnn_backend_ops *ops;
    void *ctx;
    size_t count;
    ffnn_model *const *models;        /* the caller's [count]                  */
    const ffnn_model *net;            /* models[0]: the shape every model has  */
    size_t P, S, B, widest, steps, rows; /* parameters, their slot's stride,
                                         batch, widest layer, steps and rows of
                                         an epoch                               */
    size_t n_train, n_val;
    size_t loss_rows;                 /* rows of row_loss per model: an epoch's or
                                         an evaluation chunk's, the larger        */
    float *lr_host;                   /* [count] learning rates                */
    ffnn_rng *rng;                    /* [count] shuffle generators            */
    int *epochs;                      /* [count] epochs trained                */
    int *shuffle;                     /* [count] cfg.shuffle                   */
    size_t *slot_of;                  /* [count] arena slot, or SIZE_MAX       */
    size_t *act;                      /* [count] model of slot z (z < active)   */
    size_t active;
    int32_t *perm, *index_host;       /* [n] one permutation; [rows * count]    */
    ffnn_rng *rng_before;             /* [count] the generators before `ahead`  */
    size_t *ahead_act;                /* [count] the models `ahead` was made for */
    size_t ahead_active;              /* how many (0: no epoch made ahead)      */
    float *loss_host;                 /* [rows * count]                          */
    uint8_t *correct_host;            /* [EVAL_ROWS * count]                     */
    /* device */
    ffnn_gather_source src;           /* the training set                        */
    void *train_features;
    int32_t *train_labels;
    float *val_x;                     /* [n_val, in] float32                     */
    int32_t *val_labels;
    float *params, *grads, *lr, *x, *dz[2], **actv;
    int32_t *y, *index, *index_next; /* this epoch's index, and the next one's
                                         (made while this one trains)          */
    float *row_loss;
    uint8_t *row_correct;
};

static ffnn_status refuse(size_t i, const char *what)
{
    return ffnn_fail(FFNN_ERR_UNSUPPORTED, "strategy batched: model %zu: %s; the batched "
                     "engine trains plain sgd on dense nets (docs/SWEEP.md): choose another "
                     "strategy (auto) for this sweep", i, what);
}

static int basic_act(ffnn_activation a)
{
    return a == FFNN_ACT_IDENTITY || a == FFNN_ACT_RELU || a == FFNN_ACT_SIGMOID ||
           a == FFNN_ACT_TANH;
}

static int same_net(const ffnn_model *a, const ffnn_model *b)
{
    if (a->input_size != b->input_size || a->layer_count != b->layer_count ||
        a->parameter_count != b->parameter_count)
        return 0;
    for (int i = 0; i < a->layer_count; i++) {
        const ffnn_layer *x = &a->layers[i], *y = &b->layers[i];
        if (x->kind != y->kind || x->in != y->in || x->out != y->out || x->act != y->act ||
            x->has_bias != y->has_bias || x->weight_offset != y->weight_offset ||
            x->bias_offset != y->bias_offset)
            return 0;
    }
    return 1;
}

static ffnn_status check_config(size_t i, const ffnn_train_config *c,
                                const ffnn_train_config *c0)
{
    if (c->strategy != FFNN_STRATEGY_BATCHED)
        return refuse(i, "every model of a batched sweep needs strategy batched");
    if (c->device != FFNN_DEVICE_CUDA)
        return refuse(i, "it runs on device cuda only");
    if (c->optimizer != FFNN_OPT_SGD)
        return refuse(i, "optimizer is not sgd");
    if (c->weight_decay != 0.0f || c->clip_grad_norm != 0.0f || c->clip_grad_value != 0.0f ||
        c->ema_decay != 0.0f || c->warmup_steps != 0)
        return refuse(i, "weight decay, clipping, EMA or warm-up is set");
    if (c->lr_schedule != FFNN_LR_CONSTANT)
        return refuse(i, "the learning-rate schedule is not constant");
    if (c->early_stopping != 0)
        return refuse(i, "early stopping is set");
    if (c->loss != FFNN_LOSS_SOFTMAX_CE)
        return refuse(i, "the loss is not ce");
    if (c->precision == FFNN_PRECISION_TF32X3 || c->precision != c0->precision)
        return refuse(i, "its precision is tf32x3 or differs from model 0's (fp32, tf32 or "
                         "bf16 for all)");
    if (c->batch_size != c0->batch_size || c->drop_last != c0->drop_last)
        return refuse(i, "its batch size or drop_last differs from model 0's");
    if (!(c->learning_rate > 0.0f) || !isfinite(c->learning_rate))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "strategy batched: model %zu: learning "
                         "rate %g (> 0 needed)", i, (double)c->learning_rate);
    return FFNN_OK;
}

ffnn_status ffnn_batched_check(ffnn_model *const *models, const ffnn_train_config *configs,
                               size_t count, const ffnn_dataset *const *train,
                               const ffnn_dataset *const *val)
{
    const ffnn_model *m0 = models[0];
    for (int l = 0; l < m0->layer_count; l++) {
        const ffnn_layer *L = &m0->layers[l];
        if (L->kind != FFNN_LAYER_DENSE || L->has_dropout || !basic_act(L->act))
            return refuse(0, "a layer is not dense, has dropout, or an activation other "
                             "than identity, relu, sigmoid, tanh");
    }
    if (m0->layers[m0->layer_count - 1].act != FFNN_ACT_IDENTITY)
        return refuse(0, "the output layer has an activation (ce takes logits)");
    if (!train[0]->labels || train[0]->weights)
        return refuse(0, "the training set needs class labels and no sample weights");
    for (size_t i = 0; i < count; i++) {
        ffnn_status st = ffnn_train_config_check(models[i], train[i], &configs[i]);
        if (st != FFNN_OK) {
            char why[512];
            snprintf(why, sizeof why, "%s", ffnn_last_error());
            return ffnn_fail(st, "ffnn_sweep_create: model %zu: %s", i, why);
        }
        if ((st = check_config(i, &configs[i], &configs[0])) != FFNN_OK)
            return st;
        if (!same_net(models[i], m0))
            return refuse(i, "its network differs from model 0's");
        if (train[i] != train[0] || (val ? val[i] : NULL) != (val ? val[0] : NULL))
            return refuse(i, "its training or validation set is not model 0's "
                             "(one data set for every model)");
    }
    if (val && val[0] && !val[0]->labels)
        return refuse(0, "the validation set has no class labels");
    return FFNN_OK;
}

void ffnn_batched_free(ffnn_batched *b)
{
    if (!b)
        return;
    if (b->ctx) {
        void *dev[] = {b->train_features, b->train_labels, b->val_x, b->val_labels,
                       b->params, b->grads, b->lr, b->x, b->dz[0], b->dz[1], b->y,
                       b->index, b->index_next, b->row_loss, b->row_correct};
        for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
            if (dev[i])
                b->ops->release(b->ctx, dev[i]);
        for (int i = 0; b->actv && i < b->net->layer_count; i++)
            if (b->actv[i])
                b->ops->release(b->ctx, b->actv[i]);
        b->ops->destroy(b->ctx);
    }
    free(b->actv);
    free(b->lr_host);
    free(b->rng);
    free(b->epochs);
    free(b->shuffle);
    free(b->slot_of);
    free(b->act);
    free(b->perm);
    free(b->index_host);
    free(b->rng_before);
    free(b->ahead_act);
    free(b->loss_host);
    free(b->correct_host);
    free(b);
}

static ffnn_status dev_alloc(ffnn_batched *b, void *out, size_t count, size_t elem)
{
    void **p = out;
    if (count == 0)
        count = 1;
    if (count > SIZE_MAX / elem)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "strategy batched: %zu x %zu bytes", count, elem);
    return b->ops->alloc(b->ctx, count * elem, p);
}

/* Device bytes of the engine, before anything is allocated. */
static uint64_t device_bytes(const ffnn_batched *b, const ffnn_dataset *train)
{
    const size_t n = b->count, rows = b->B > EVAL_ROWS ? b->B : EVAL_ROWS;
    uint64_t f = 2ull * n * b->S + n;                                   /* params, grads, lr */
    f += (uint64_t)n * b->B * b->net->input_size + 2ull * n * b->B * b->widest; /* x, dz */
    for (int i = 0; i < b->net->layer_count; i++)
        f += (uint64_t)n * rows * b->net->layers[i].out;                /* act */
    f += (uint64_t)b->n_val * (b->net->input_size + 1);                 /* val */
    uint64_t bytes = 4 * f + (uint64_t)n * b->B * 4;                    /* y */
    bytes += (uint64_t)b->rows * n * 8 + (uint64_t)b->loss_rows * n * 5; /* 2 index, loss, ok */
    bytes += (uint64_t)train->count * (train->features * (train->images ? 1 : 4) + 4);
    return bytes;
}

static ffnn_status upload_data(ffnn_batched *b, const ffnn_dataset *train,
                               const ffnn_dataset *val)
{
    const size_t fb = train->images ? 1 : 4, in = train->features;
    ffnn_status st;
    if ((st = dev_alloc(b, &b->train_features, train->count * in, fb)) != FFNN_OK ||
        (st = b->ops->upload(b->ctx, b->train_features,
                             train->images ? (const void *)train->images
                                           : (const void *)train->values,
                             train->count * in * fb)) != FFNN_OK ||
        (st = dev_alloc(b, &b->train_labels, train->count, 4)) != FFNN_OK ||
        (st = b->ops->upload(b->ctx, b->train_labels, train->labels, train->count * 4)))
        return st;
    b->src.images = train->images ? b->train_features : NULL;
    b->src.values = train->images ? NULL : b->train_features;
    b->src.features = in;
    b->src.labels = b->train_labels;
    if (!val)
        return FFNN_OK;
    /* the validation features once as float32 (gather's x = value / 255 for images) */
    ffnn_gather_source vs = {0};
    void *vf = NULL;
    int32_t *vi = NULL;
    const size_t vb = val->images ? 1 : 4;
    if ((st = dev_alloc(b, &vf, val->count * in, vb)) == FFNN_OK &&
        (st = b->ops->upload(b->ctx, vf, val->images ? (const void *)val->images
                                                     : (const void *)val->values,
                             val->count * in * vb)) == FFNN_OK &&
        (st = dev_alloc(b, &b->val_labels, val->count, 4)) == FFNN_OK &&
        (st = b->ops->upload(b->ctx, b->val_labels, val->labels, val->count * 4)) == FFNN_OK &&
        (st = dev_alloc(b, &b->val_x, val->count * in, 4)) == FFNN_OK &&
        (st = dev_alloc(b, &vi, val->count, 4)) == FFNN_OK) {
        int32_t *ident = malloc(val->count * sizeof *ident);
        if (!ident)
            st = ffnn_fail(FFNN_ERR_NO_MEMORY, "strategy batched: validation index");
        for (size_t r = 0; ident && r < val->count; r++)
            ident[r] = (int32_t)r;
        vs.images = val->images ? vf : NULL;
        vs.values = val->images ? NULL : vf;
        vs.features = in;
        if (st == FFNN_OK && (st = b->ops->upload(b->ctx, vi, ident, val->count * 4)) == FFNN_OK)
            st = b->ops->gather(b->ctx, &vs, vi, val->count, b->val_x, NULL, NULL);
        if (st == FFNN_OK)
            st = b->ops->synchronize(b->ctx);
        free(ident);
    }
    if (vf)
        b->ops->release(b->ctx, vf);
    if (vi)
        b->ops->release(b->ctx, vi);
    return st;
}

static ffnn_status allocate(ffnn_batched *b)
{
    const size_t n = b->count, rows = b->B > EVAL_ROWS ? b->B : EVAL_ROWS;
    ffnn_status st;
    if ((st = dev_alloc(b, &b->params, n * b->S, 4)) || (st = dev_alloc(b, &b->grads, n * b->S, 4)) ||
        (st = dev_alloc(b, &b->lr, n, 4)) ||
        (st = dev_alloc(b, &b->x, n * b->B * b->net->input_size, 4)) ||
        (st = dev_alloc(b, &b->dz[0], n * b->B * b->widest, 4)) ||
        (st = dev_alloc(b, &b->dz[1], n * b->B * b->widest, 4)) ||
        (st = dev_alloc(b, &b->y, n * b->B, 4)) || (st = dev_alloc(b, &b->index, n * b->rows, 4)) ||
        (st = dev_alloc(b, &b->index_next, n * b->rows, 4)) ||
        (st = dev_alloc(b, &b->row_loss, n * b->loss_rows, 4)) ||
        (st = dev_alloc(b, &b->row_correct, n * b->loss_rows, 1)))
        return st;
    for (int i = 0; i < b->net->layer_count; i++)
        if ((st = dev_alloc(b, &b->actv[i], n * rows * b->net->layers[i].out, 4)))
            return st;
    return FFNN_OK;
}

ffnn_status ffnn_batched_create(ffnn_model *const *models, const ffnn_train_config *configs,
                                size_t count, const ffnn_dataset *train,
                                const ffnn_dataset *val, ffnn_batched **out)
{
    const ffnn_backend_ops *ops = ffnn_cuda_backend();
    if (!ops)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "strategy batched: device cuda: %s",
                         ffnn_cuda_module_error());
    if (!ops->models || !ops->device)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "strategy batched: the CUDA backend has no "
                         "ops over a model axis");
    if (ffnn_cuda_device_count() == 0)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "strategy batched: no CUDA GPU is visible");
    ffnn_batched *b = calloc(1, sizeof *b);
    if (!b)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "strategy batched: %zu models", count);
    b->ops = ops;
    b->count = count;
    b->models = models;
    b->net = models[0];
    b->P = b->net->parameter_count;
    b->S = (b->P + PARAM_ALIGN - 1) / PARAM_ALIGN * PARAM_ALIGN;
    b->B = configs[0].batch_size;
    const size_t n = train->count;
    b->steps = configs[0].drop_last ? n / b->B : (n + b->B - 1) / b->B;
    b->rows = configs[0].drop_last ? b->steps * b->B : n;
    b->n_train = n;
    b->loss_rows = b->rows > EVAL_ROWS ? b->rows : EVAL_ROWS;
    b->n_val = val ? val->count : 0;
    b->widest = 1;
    for (int i = 0; i < b->net->layer_count; i++)
        if (b->net->layers[i].out > b->widest)
            b->widest = b->net->layers[i].out;
    ffnn_status st = FFNN_OK;
    if (b->steps == 0)
        st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "strategy batched: %zu training rows make "
                       "no batch of %zu (drop_last)", n, b->B);
    b->lr_host = malloc(count * sizeof *b->lr_host);
    b->rng = malloc(count * sizeof *b->rng);
    b->epochs = calloc(count, sizeof *b->epochs);
    b->shuffle = malloc(count * sizeof *b->shuffle);
    b->slot_of = malloc(count * sizeof *b->slot_of);
    b->act = malloc(count * sizeof *b->act);
    b->perm = malloc(n * sizeof *b->perm);
    b->index_host = malloc(b->rows * count * sizeof *b->index_host);
    b->rng_before = malloc(count * sizeof *b->rng_before);
    b->ahead_act = malloc(count * sizeof *b->ahead_act);
    b->loss_host = malloc(b->loss_rows * count * sizeof *b->loss_host);
    b->correct_host = malloc((size_t)EVAL_ROWS * count);
    b->actv = calloc((size_t)b->net->layer_count, sizeof *b->actv);
    if (st == FFNN_OK && (!b->lr_host || !b->rng || !b->epochs || !b->shuffle || !b->slot_of ||
                          !b->act || !b->perm || !b->index_host ||
                          !b->rng_before || !b->ahead_act || !b->loss_host ||
                          !b->correct_host || !b->actv))
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "strategy batched: host buffers of %zu models",
                       count);
    for (size_t i = 0; st == FFNN_OK && i < count; i++) {
        b->lr_host[i] = configs[i].learning_rate;
        ffnn_rng_seed(&b->rng[i], configs[i].seed, FFNN_STREAM_SHUFFLE);
        b->shuffle[i] = configs[i].shuffle;
        b->slot_of[i] = SIZE_MAX; /* uploaded at the first epoch */
    }
    ffnn_backend_options opt = {0};
    opt.precision = configs[0].precision; /* the matmuls' (gemm.cuh ffnn_cuda_gemm_models) */
    if (st == FFNN_OK)
        st = ops->create(&opt, &b->ctx);
    if (st == FFNN_OK) {
        size_t free_bytes = 0;
        st = ops->device->memory_available(b->ctx, &free_bytes);
        char detail[160];
        snprintf(detail, sizeof detail, "%zu models of %zu parameters, batch %zu", count,
                 b->P, b->B);
        if (st == FFNN_OK)
            st = ffnn_memory_check_device("strategy batched", device_bytes(b, train),
                                          free_bytes, "cuda", detail);
    }
    if (st == FFNN_OK)
        st = allocate(b);
    if (st == FFNN_OK)
        st = upload_data(b, train, val);
    if (st != FFNN_OK) {
        ffnn_batched_free(b);
        return st;
    }
    for (size_t i = 0; i < count; i++) { /* how the outputs are read */
        models[i]->loss = configs[i].loss;
        models[i]->has_loss = 1;
    }
    *out = b;
    return FFNN_OK;
}

/* The arena holds the models still training, in order: slot z is model act[z]
 * (their weights from the models, which hold every trained epoch). */
static ffnn_status place(ffnn_batched *b, const int *training)
{
    size_t a = 0;
    int moved = 0;
    for (size_t i = 0; i < b->count; i++) {
        if (!training[i])
            continue;
        moved |= b->slot_of[i] != a;
        b->act[a++] = i;
    }
    if (!moved && a == b->active)
        return FFNN_OK;
    for (size_t i = 0; i < b->count; i++)
        b->slot_of[i] = SIZE_MAX;
    ffnn_status st = FFNN_OK;
    float *lr = malloc((a ? a : 1) * sizeof *lr);
    if (!lr)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "strategy batched: learning rates");
    for (size_t z = 0; z < a && st == FFNN_OK; z++) {
        const size_t i = b->act[z];
        b->slot_of[i] = z;
        lr[z] = b->lr_host[i];
        st = b->ops->upload(b->ctx, b->params + z * b->S, b->models[i]->params,
                            b->P * sizeof(float));
    }
    if (st == FFNN_OK && a)
        st = b->ops->upload(b->ctx, b->lr, lr, a * sizeof *lr);
    free(lr);
    b->active = a;
    return st;
}

/* Rows of step s (the last may be short unless drop_last). */
static size_t batch_of(const ffnn_batched *b, size_t s)
{
    return s + 1 < b->steps ? b->B : b->rows - s * b->B;
}

/* An epoch's permutations, step-major (the top of this file), uploaded into dst:
 * each model's as its lone trainer makes it (epoch.c: the rows in order, shuffled
 * by its generator, which goes on from epoch to epoch). */
static ffnn_status permutations(ffnn_batched *b, int32_t *dst)
{
    const size_t a = b->active;
    for (size_t z = 0; z < a; z++) {
        const size_t i = b->act[z];
        for (size_t r = 0; r < b->n_train; r++)
            b->perm[r] = (int32_t)r;
        if (b->shuffle[i])
            ffnn_rng_shuffle(&b->rng[i], b->perm, b->n_train);
        for (size_t s = 0; s < b->steps; s++) {
            const size_t bs = batch_of(b, s);
            memcpy(b->index_host + s * a * b->B + z * bs, b->perm + s * b->B,
                   bs * sizeof *b->perm);
        }
    }
    return b->ops->upload(b->ctx, dst, b->index_host, a * b->rows * sizeof(int32_t));
}

/* This epoch's index: the one made ahead when it was made for these models, else
 * (the generators put back as they were before it) made now. */
static ffnn_status this_epoch_index(ffnn_batched *b)
{
    const int same = b->ahead_active == b->active &&
                     !memcmp(b->ahead_act, b->act, b->active * sizeof *b->act);
    if (same) {
        int32_t *t = b->index;
        b->index = b->index_next, b->index_next = t;
        b->ahead_active = 0;
        return FFNN_OK;
    }
    if (b->ahead_active)
        memcpy(b->rng, b->rng_before, b->count * sizeof *b->rng);
    b->ahead_active = 0;
    return permutations(b, b->index);
}

/* The next epoch's index for the same models, made on the host while the GPU
 * trains this one (the generators kept, should the next epoch train others). */
static ffnn_status next_epoch_index(ffnn_batched *b)
{
    memcpy(b->rng_before, b->rng, b->count * sizeof *b->rng);
    memcpy(b->ahead_act, b->act, b->active * sizeof *b->act);
    ffnn_status st = permutations(b, b->index_next);
    b->ahead_active = st == FFNN_OK ? b->active : 0;
    if (st != FFNN_OK)
        memcpy(b->rng, b->rng_before, b->count * sizeof *b->rng);
    return st;
}

/* The forward of `rows` rows per model from x (model z's at x + z x_stride)
 * through every layer into actv[]; the logits are actv[L-1] [a][rows][out]. */
static ffnn_status forward(ffnn_batched *b, const float *x, size_t x_stride, size_t rows)
{
    const ffnn_model *m = b->net;
    ffnn_status st = FFNN_OK;
    for (int i = 0; i < m->layer_count && st == FFNN_OK; i++) {
        const ffnn_layer *l = &m->layers[i];
        st = b->ops->models->dense_act_forward(
            b->ctx, x, x_stride, b->params + l->weight_offset,
            l->has_bias ? b->params + l->bias_offset : NULL, b->S, b->actv[i], rows, l->in,
            l->out, l->act, b->active);
        x = b->actv[i];
        x_stride = rows * l->out;
    }
    return st;
}

/* Training step s of every model in the arena. */
static ffnn_status step(ffnn_batched *b, size_t s)
{
    const ffnn_model *m = b->net;
    const ffnn_ops_models *mo = b->ops->models;
    const size_t a = b->active, bs = batch_of(b, s), first = s * a * b->B;
    const ffnn_layer *top = &m->layers[m->layer_count - 1];
    ffnn_status st = b->ops->gather(b->ctx, &b->src, b->index + first, a * bs, b->x, b->y, NULL);
    if (st == FFNN_OK)
        st = forward(b, b->x, bs * m->input_size, bs);
    if (st == FFNN_OK) /* dz = d(batch mean of ce)/d logits, per model */
        st = mo->loss(b->ctx, FFNN_LOSS_SOFTMAX_CE, b->actv[m->layer_count - 1], b->y, bs, bs,
                      top->out, a, b->dz[0], b->row_loss + first, b->row_correct + first);
    int cur = 0;
    for (int i = m->layer_count - 1; i >= 0 && st == FFNN_OK; i--) {
        const ffnn_layer *l = &m->layers[i];
        const float *x = i > 0 ? b->actv[i - 1] : b->x;
        st = mo->dense_backward_sgd(
            b->ctx, x, bs * l->in, b->params + l->weight_offset,
            l->has_bias ? b->params + l->bias_offset : NULL, b->grads + l->weight_offset, b->S,
            b->dz[cur], i > 0 ? b->dz[cur ^ 1] : NULL,
            i > 0 ? m->layers[i - 1].act : FFNN_ACT_IDENTITY, b->lr, bs, l->in, l->out, a);
        cur ^= 1;
    }
    return st;
}

/* Validation loss and accuracy of every model in the arena into stats. */
static ffnn_status evaluate(ffnn_batched *b, ffnn_epoch_stats *stats)
{
    const ffnn_model *m = b->net;
    const size_t a = b->active, in = m->input_size, out = m->layers[m->layer_count - 1].out;
    double *sum = calloc(a ? a : 1, sizeof *sum);
    size_t *ok = calloc(a ? a : 1, sizeof *ok);
    ffnn_status st = sum && ok ? FFNN_OK
                               : ffnn_fail(FFNN_ERR_NO_MEMORY, "strategy batched: evaluation");
    for (size_t r0 = 0; r0 < b->n_val && st == FFNN_OK; r0 += EVAL_ROWS) {
        const size_t rows = b->n_val - r0 < EVAL_ROWS ? b->n_val - r0 : EVAL_ROWS;
        st = forward(b, b->val_x + r0 * in, 0, rows); /* one input for every model */
        if (st == FFNN_OK)
            st = b->ops->models->loss(b->ctx, FFNN_LOSS_SOFTMAX_CE, b->actv[m->layer_count - 1],
                                      b->val_labels + r0, 0, rows, out, a, NULL, b->row_loss,
                                      b->row_correct);
        if (st == FFNN_OK)
            st = b->ops->download(b->ctx, b->loss_host, b->row_loss, a * rows * sizeof(float));
        if (st == FFNN_OK)
            st = b->ops->download(b->ctx, b->correct_host, b->row_correct, a * rows);
        for (size_t z = 0; z < a && st == FFNN_OK; z++)
            for (size_t r = 0; r < rows; r++) {
                sum[z] += b->loss_host[z * rows + r];
                ok[z] += b->correct_host[z * rows + r];
            }
    }
    for (size_t z = 0; z < a && st == FFNN_OK; z++) {
        ffnn_epoch_stats *e = &stats[b->act[z]];
        e->val_loss = b->n_val ? sum[z] / (double)b->n_val : NAN;
        e->val_accuracy = b->n_val ? (double)ok[z] / (double)b->n_val : NAN;
    }
    free(sum);
    free(ok);
    return st;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Each model's training loss of the epoch (the mean of its steps' batch means, as
 * the lone trainer's), FFNN_ERR_NUMERIC at the first NaN/Inf step. */
static ffnn_status train_losses(ffnn_batched *b, ffnn_epoch_stats *stats)
{
    const size_t a = b->active;
    ffnn_status st = b->ops->download(b->ctx, b->loss_host, b->row_loss,
                                      a * b->rows * sizeof(float));
    for (size_t z = 0; z < a && st == FFNN_OK; z++) {
        double total = 0.0;
        for (size_t s = 0; s < b->steps; s++) {
            const size_t bs = batch_of(b, s);
            const double l = ffnn_mean_of(b->loss_host + s * a * b->B + z * bs, bs);
            if (!isfinite(l))
                return ffnn_fail(FFNN_ERR_NUMERIC, "strategy batched: model %zu: the loss "
                                 "is %g at epoch %d, step %zu (lower its learning rate %g)",
                                 b->act[z], l, b->epochs[b->act[z]] + 1, s + 1,
                                 (double)b->lr_host[b->act[z]]);
            total += l;
        }
        stats[b->act[z]].train_loss = total / (double)b->steps;
    }
    return st;
}

ffnn_status ffnn_batched_run_epoch(ffnn_batched *b, const int *training, ffnn_epoch_stats *stats)
{
    if (!b || !training || !stats)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_batched_run_epoch: NULL argument");
    ffnn_status st = place(b, training);
    if (st != FFNN_OK || b->active == 0)
        return st;
    if ((st = this_epoch_index(b)) != FFNN_OK || (st = b->ops->synchronize(b->ctx)) != FFNN_OK)
        return st;
    const double t0 = now_seconds();
    for (size_t s = 0; s < b->steps && st == FFNN_OK; s++)
        st = step(b, s);
    if (st == FFNN_OK) /* while the GPU runs the steps queued */
        st = next_epoch_index(b);
    if (st == FFNN_OK)
        st = b->ops->synchronize(b->ctx);
    const double seconds = now_seconds() - t0;
    if (st == FFNN_OK)
        st = train_losses(b, stats);
    if (st == FFNN_OK)
        st = evaluate(b, stats);
    for (size_t z = 0; z < b->active && st == FFNN_OK; z++) {
        const size_t i = b->act[z];
        ffnn_epoch_stats *e = &stats[i];
        st = b->ops->download(b->ctx, b->models[i]->params, b->params + z * b->S,
                              b->P * sizeof(float));
        e->epoch = ++b->epochs[i];
        e->seconds = seconds / (double)b->active; /* its share of the models' epoch */
        e->images_per_second = seconds > 0 ? (double)(b->active * b->rows) / seconds : 0.0;
        e->learning_rate = b->lr_host[i];
    }
    return st;
}
