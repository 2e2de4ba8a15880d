/*
 * trainer.c - the trainer's lifecycle: configuration check (config.c), backend
 * and strategy choice (through the registry, strategy/strategy.h), device
 * buffers, the training data on the device; free. ffnn_trainer_create is in
 * create.c, the steps and epochs in epoch.c, evaluation in eval.c, the run state
 * in state.c, device memory and accessors in base.c (trainer.h lists the split).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/module.h"
#include "core/activation.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/model.h"
#include "core/optim.h"
#include "core/rng.h"
#include "data/dataset.h"
#include "strategy/strategy.h"
#include "train/config.h"
#include "train/train_internal.h"
#include "train/trainer.h"

/* Sample weights (ffnn.h "Per-sample weights") train where the backend weights
 * the loss (cpu, omp), in one process. */
static ffnn_status check_weights(const ffnn_trainer *t, const ffnn_dataset *train)
{
    if (!train->weights)
        return FFNN_OK;
    if (!t->run.ops->weights)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "sample or class weights: the cuda strategies (per_op, fused, graph, "
                         "persistent, cublas, cublaslt, mixed, tune) do not weight the loss; "
                         "train on the cpu (--device cpu: the reference or the OpenMP "
                         "backend), or leave the weights out");
    if (t->comm)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "sample or class weights: data parallelism (--gpus, mpirun) does not "
                         "weight the loss; train in one process");
    return FFNN_OK;
}

/* The backend for the requested device (auto: cuda when the build has it and a
 * GPU is visible), the strategy for the model (strategy/table.c), and the
 * backend context with the strategy's options. */
static ffnn_status pick_backend(ffnn_trainer *t, ffnn_device requested)
{
    const int reference = ffnn_strategy_on_reference(t->cfg.strategy); /* the cpu */
    /* (auto: the device count first, which loads the CUDA module only where a GPU
     * may be: backend/module.h) */
    if (requested == FFNN_DEVICE_AUTO)
        requested = !reference && ffnn_cuda_device_count() > 0 ? FFNN_DEVICE_CUDA
                                                               : FFNN_DEVICE_CPU;
    const ffnn_backend_ops *cuda = requested == FFNN_DEVICE_CUDA ? ffnn_cuda_backend() : NULL;
    if (requested == FFNN_DEVICE_CUDA) {
        if (!cuda)
            return ffnn_fail(FFNN_ERR_UNSUPPORTED, "device cuda: %s", ffnn_cuda_module_error());
        if (ffnn_cuda_device_count() == 0)
            return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                             "device cuda: no CUDA GPU is visible; use device cpu");
        t->run.ops = cuda;
    } else {
        if (t->cfg.precision != FFNN_PRECISION_FP32)
            return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                             "precision %s runs on a GPU's tensor cores: it needs "
                             "device cuda (the cpu backends compute in fp32)",
                             ffnn_precision_name(t->cfg.precision));
        /* strategy reference: the single-threaded reference; else OpenMP on
         * cfg.threads threads (0: all cores) */
        if (reference && t->cfg.threads > 1)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "strategy reference runs on one thread: threads %d asks for "
                             "more (threads 0, or the OpenMP backend: strategy auto)",
                             t->cfg.threads);
        t->run.ops = reference ? &ffnn_cpu_backend : &ffnn_omp_backend;
    }
    t->device = requested;
    if (!ffnn_backend_ops_complete(t->run.ops))
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "backend %s is incomplete", t->run.ops->name);
    ffnn_status st = ffnn_strategy_choose(t->run.model, &t->cfg, t->run.ops->caps, &t->strategy);
    if (st != FFNN_OK)
        return st;
    const ffnn_backend_options options = {t->cfg.threads, t->strategy->matmul, t->cfg.precision,
                                          ffnn_cfg_cuda_block_1d(&t->cfg),
                                          ffnn_cfg_cuda_block_2d(&t->cfg)};
    return t->run.ops->create(&options, &t->run.ctx);
}

/* The optimizer state: one allocation of state_count * parameter_count floats,
 * zeroed (momentum's buffer is also not read at the first step). */
static ffnn_status allocate_optimizer_state(ffnn_trainer *t)
{
    size_t count = ffnn_optimizer_state_count(t->cfg.optimizer), n = t->run.model->parameter_count;
    if (count == 0 || n == 0)
        return FFNN_OK;
    ffnn_status st = ffnn_trainer_alloc(t, &t->run.opt_state, count * n, sizeof(float));
    if (st != FFNN_OK)
        return st;
    float *zeros = calloc(count * n, sizeof *zeros);
    if (!zeros)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the optimizer state");
    st = t->run.ops->upload(t->run.ctx, t->run.opt_state, zeros, count * n * sizeof *zeros);
    if (st == FFNN_OK) /* the upload may be asynchronous: wait before freeing */
        st = t->run.ops->synchronize(t->run.ctx);
    free(zeros);
    return st;
}

static ffnn_status allocate_buffers(ffnn_trainer *t)
{
    const ffnn_model *m = t->run.model;
    size_t widest = 1;
    ffnn_status st;
    t->run.act = calloc((size_t)m->layer_count, sizeof *t->run.act);
    t->run.drop = calloc((size_t)m->layer_count, sizeof *t->run.drop);
    t->run.pre = calloc((size_t)m->layer_count, sizeof *t->run.pre);
    if (!t->run.act || !t->run.drop || !t->run.pre)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    for (int i = 0; i < m->layer_count; i++) {
        if (m->layers[i].out > widest)
            widest = m->layers[i].out;
        if ((st = ffnn_trainer_alloc(t, &t->run.act[i], t->run.capacity,
                                     m->layers[i].out * sizeof(float))) ||
            (m->layers[i].has_dropout &&
             (st = ffnn_trainer_alloc(t, &t->run.drop[i], t->run.capacity,
                                      m->layers[i].out * sizeof(float)))) ||
            (ffnn_act_grad_from_input(m->layers[i].act) && /* f' reads z: keep it */
             (st = ffnn_trainer_alloc(t, &t->run.pre[i], t->run.capacity,
                                      m->layers[i].out * sizeof(float)))))
            return st;
    }
    if (t->cfg.clip_grad_norm > 0.0f &&
        (st = ffnn_trainer_alloc(t, &t->run.grad_norm, t->run.steps_per_epoch, sizeof(float))))
        return st;
    if (t->cfg.ema_decay > 0.0f && /* the EMA starts at the initial parameters */
        ((st = ffnn_trainer_alloc(t, &t->run.ema, m->parameter_count, sizeof(float))) ||
         (st = t->run.ops->upload(t->run.ctx, t->run.ema, m->params,
                                  m->parameter_count * sizeof(float)))))
        return st;
    if ((st = ffnn_trainer_alloc(t, &t->run.params, m->parameter_count, sizeof(float))) ||
        (st = ffnn_trainer_alloc(t, &t->run.grads, m->parameter_count, sizeof(float))) ||
        (st = ffnn_trainer_alloc(t, &t->run.x, t->run.capacity, m->input_size * sizeof(float))) ||
        (st = ffnn_trainer_alloc(t, &t->run.y, t->run.capacity, sizeof(int32_t))) ||
        (st = ffnn_trainer_alloc(t, &t->run.tgt, t->run.capacity,
                                 m->layers[m->layer_count - 1].out * sizeof(float))) ||
        (st =
             ffnn_trainer_alloc(t, &t->run.grad_buf[0], t->run.capacity, widest * sizeof(float))) ||
        (st = ffnn_trainer_alloc(t, &t->run.grad_buf[1], t->run.capacity, widest * sizeof(float))))
        return st;
    if ((st = allocate_optimizer_state(t)) != FFNN_OK)
        return st;
    return t->run.ops->upload(t->run.ctx, t->run.params, m->params,
                              m->parameter_count * sizeof(float));
}

/* The memory the trainer's buffers (allocate_buffers) and the training data
 * (ffnn_device_data_upload) will take, refused up front when the device (or,
 * for the host backends, the host) does not have it: parameters, gradients and
 * optimizer state; the activations (with the dropout outputs and the kept
 * pre-activations), inputs, targets and two gradient buffers of
 * a batch of `capacity` rows; the data, its index and per-row metrics; on the
 * host the permutation, the temporary zeroed optimizer state and early
 * stopping's copy of the best epoch's weights; with
 * --precision bf16 also the mixed-precision pipeline's bf16 copies (strategy/step.h
 * ffnn_mixed: the parameters, the batch, the activations, two gradients: counted
 * whether or not the strategy makes them). Other strategies' own buffers and the
 * evaluation set come later and are not counted. */
typedef struct memory_estimate {
    double device;       /* the backend's buffers and the data (host memory for cpu) */
    double host;         /* host-only: permutation, temporary zeroed state          */
    char detail[256];    /* what the device part holds                              */
} memory_estimate;

static void estimate_memory(const ffnn_model *m, size_t capacity, const ffnn_train_config *cfg,
                            const ffnn_dataset *train, memory_estimate *e)
{
    double n = (double)m->parameter_count, cap = (double)capacity;
    /* the optimizer state, and the EMA weights as one more arena */
    double states = (double)ffnn_optimizer_state_count(cfg->optimizer) +
                    (cfg->ema_decay > 0.0f ? 1.0 : 0.0);
    double widest = (double)m->input_size, outs = 0.0, count = (double)train->count;
    for (int i = 0; i < m->layer_count; i++) {
        /* the activation, the dropout output, the kept pre-activation */
        outs += (double)m->layers[i].out * (1.0 + (m->layers[i].has_dropout ? 1.0 : 0.0) +
                                            (ffnn_act_grad_from_input(m->layers[i].act) ? 1.0
                                                                                         : 0.0));
        if ((double)m->layers[i].out > widest)
            widest = (double)m->layers[i].out;
    }
    /* bf16: 2-byte copies of the parameters, the batch, the outputs and two
     * gradient buffers (ffnn_mixed; the loss's gradient rows padded by up to 8) */
    const double mixed = cfg->precision == FFNN_PRECISION_BF16 ? 1.0 : 0.0;
    double params = 4.0 * n * (2.0 + states) + mixed * 2.0 * n;
    double batch = 4.0 * cap * (outs + (double)m->input_size + 2.0 * widest +
                                (double)m->layers[m->layer_count - 1].out) + cap +
                   mixed * 2.0 * cap * (outs + (double)m->input_size + 2.0 * (widest + 8.0));
    double data = count * (double)train->features * (train->images ? 1.0 : 4.0) +
                  (train->labels ? count : 4.0 * count * (double)train->target_width) +
                  9.0 * count + (train->weights ? 4.0 * count : 0.0); /* + sample weights */
    char a[32], b[32], c[32];
    /* host: the permutation, the zeroed state, early stopping's best weights */
    e->host = 4.0 * count + 4.0 * n * states + (cfg->early_stopping > 0 ? 4.0 * n : 0.0);
    e->device = params + batch + data;
    ffnn_memory_text((uint64_t)params, a, sizeof a);
    ffnn_memory_text((uint64_t)batch, b, sizeof b);
    ffnn_memory_text((uint64_t)data, c, sizeof c);
    snprintf(e->detail, sizeof e->detail, "parameters, gradients and optimizer state %s, a "
             "batch of %zu rows %s, the training data %s", a, capacity, b, c);
}

static ffnn_status check_memory(const ffnn_trainer *t, const ffnn_dataset *train)
{
    memory_estimate e;
    estimate_memory(t->run.model, t->run.capacity, &t->cfg, train, &e);
    if (!(t->run.ops->caps & FFNN_CAP_DEVICE))
        return ffnn_memory_check_host("training", (uint64_t)(e.device + e.host), e.detail);
    if (t->run.ops->device) {
        size_t free_bytes = 0;
        ffnn_status st = t->run.ops->device->memory_available(t->run.ctx, &free_bytes);
        if (st != FFNN_OK)
            return st;
        if ((st = ffnn_memory_check_device("training", (uint64_t)e.device, free_bytes,
                                           t->run.ops->name, e.detail)) != FFNN_OK)
            return st;
    }
    return ffnn_memory_check_host("training (host side)", (uint64_t)e.host,
                                  "the permutation and the zeroed optimizer state");
}

ffnn_status ffnn_train_check_memory(const char *arch, const ffnn_dataset *train,
                                    const ffnn_train_config *cfg)
{
    ffnn_model *m = NULL;
    memory_estimate e;
    if (!arch || !train || !cfg)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_train_check_memory: NULL argument");
    ffnn_status st = ffnn_model_create_layout(arch, &m);
    if (st != FFNN_OK)
        return st;
    size_t capacity = cfg->batch_size > cfg->eval_batch_size ? cfg->batch_size
                                                             : cfg->eval_batch_size;
    estimate_memory(m, capacity, cfg, train, &e);
    int on_host = cfg->device == FFNN_DEVICE_CPU ||
                  (cfg->device == FFNN_DEVICE_AUTO &&
                   ffnn_cuda_device_count() == 0);
    double model = 4.0 * (double)m->parameter_count; /* the model's own copy */
    char detail[320], text[32];
    ffnn_memory_text((uint64_t)model, text, sizeof text);
    snprintf(detail, sizeof detail, "the model %s; %s", text, e.detail);
    st = ffnn_memory_check_host(on_host ? "training" : "the model (host side)",
                                (uint64_t)(model + (on_host ? e.device + e.host : e.host)),
                                on_host ? detail : NULL);
    ffnn_model_free(m);
    return st;
}

/* With the data on the device: the strategy's own checks and state. When the
 * device refuses a strategy that a picking one (auto, tune) chose, the registry's
 * fallback is prepared instead (ffnn_strategy_device_fallback; same backend
 * options). */
static ffnn_status prepare_strategy(ffnn_trainer *t)
{
    const ffnn_strategy_impl *s = t->strategy;
    ffnn_status st = s->prepare ? s->prepare(&t->run, &t->strategy_state) : FFNN_OK;
    const ffnn_strategy_impl *fallback =
        st == FFNN_ERR_UNSUPPORTED ? ffnn_strategy_device_fallback(s, &t->cfg) : NULL;
    if (fallback) {
        t->strategy = s = fallback;
        st = s->prepare(&t->run, &t->strategy_state);
    } else if (st == FFNN_ERR_UNSUPPORTED) {
        char why[512];
        snprintf(why, sizeof why, "%s", ffnn_last_error());
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "%s (choose strategy auto or graph)", why);
    }
    return st;
}

/* Data parallelism (t->comm): the communicator's memory must be the
 * backend's; with more than one rank, the strategy must leave a point for the
 * all-reduce (ffnn_strategy_for_parallel), and the SGD update cannot run inside
 * the backward kernels, before the sum (create_one turns plan.fused_sgd off). A group
 * of one rank (--gpus 1, mpirun -np 1) has nothing to sum: it trains as the
 * plain run (t->run.comm NULL), with the same bits and speed. */
static ffnn_status check_parallel(ffnn_trainer *t)
{
    const ffnn_comm *c = t->comm;
    int device = (t->run.ops->caps & FFNN_CAP_DEVICE) != 0;
    if (c->ops->device_buffers != device)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "the %s communicator sums %s memory, but the trainer runs on %s "
                         "(create the communicator for the trainer's device)", c->ops->name,
                         c->ops->device_buffers ? "GPU" : "host", t->run.ops->name);
    if (device && !t->run.ops->device)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "backend %s has no stream to order the "
                         "all-reduce after", t->run.ops->name);
    return t->run.comm ? ffnn_strategy_for_parallel(&t->cfg, &t->strategy) : FFNN_OK;
}

/* Every rank trains on the same data: rank 0's sample count and CRC-32 of the
 * training set go to every rank, and the lowest rank whose own differ is named
 * (two collectives; the same outcome on every rank). A node with another copy
 * of the data would otherwise train on other rows under the same indices. */
static ffnn_status check_same_data(ffnn_trainer *t)
{
    ffnn_comm *c = t->comm;
    double mine[2] = {(double)ffnn_trainer_data_crc32(t), (double)t->run.train.host->count};
    double root[2] = {mine[0], mine[1]};
    ffnn_status st = c->ops->broadcast_host(c, root, sizeof root, 0);
    if (st != FFNN_OK)
        return st;
    double who = mine[0] != root[0] || mine[1] != root[1] ? (double)c->rank : (double)c->size;
    if ((st = c->ops->reduce_host(c, &who, 1, FFNN_REDUCE_MIN)) != FFNN_OK)
        return st;
    if (who < (double)c->size)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "the ranks train on different data: rank %d's training set differs "
                         "from rank 0's (%.0f samples, CRC-32 0x%08x) in its sample count or "
                         "contents; every rank must load the same data", (int)who, root[1],
                         (unsigned)root[0]);
    return FFNN_OK;
}

/* The trainer's host buffers and the trainer itself (what is not made yet is NULL:
 * the trainer is calloc'd). */
static void free_host(ffnn_trainer *t)
{
    free(t->run.act);
    free(t->run.drop);
    free(t->run.pre);
    free(t->step_norm);
    free(t->epoch_norm);
    free(t->perm);
    free(t->step_loss);
    free(t->epoch_loss);
    free(t->es_best);
    free(t);
}

ffnn_status ffnn_trainer_create_one(ffnn_model *m, const ffnn_dataset *train,
                                    const ffnn_train_config *cfg, ffnn_comm *comm,
                                    ffnn_trainer **out)
{
    ffnn_status st = ffnn_train_config_check(m, train, cfg);
    if (st == FFNN_OK) /* a model another trainer trains: start from its latest weights */
        st = ffnn_model_sync(m);
    if (st != FFNN_OK)
        return st;
    /* a rank's GPU is this thread's device before the backend context is made */
    if (comm && comm->ops->bind_device && (st = comm->ops->bind_device(comm)) != FFNN_OK)
        return st;
    ffnn_trainer *t = calloc(1, sizeof *t);
    if (!t)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory creating a trainer");
    t->run.model = m;
    t->comm = comm;
    t->run.comm = comm && (comm->size > 1 || comm->reduce_alone) ? comm : NULL;
    t->cfg = *cfg;
    if (comm && t->cfg.device == FFNN_DEVICE_AUTO)
        t->cfg.device = comm->ops->device_buffers ? FFNN_DEVICE_CUDA : FFNN_DEVICE_CPU;
    if (t->cfg.batch_size > train->count) /* the whole set as one batch */
        t->cfg.batch_size = train->count;
    cfg = &t->cfg;
    t->run.cfg = &t->cfg;
    t->run.steps_per_epoch = (train->count + cfg->batch_size - 1) / cfg->batch_size;
    t->plateau = ffnn_plateau_start(cfg);
    t->run.plateau = &t->plateau;
    t->run.capacity =
        cfg->batch_size > cfg->eval_batch_size ? cfg->batch_size : cfg->eval_batch_size;
    ffnn_rng_seed(&t->shuffle_rng, cfg->seed, FFNN_STREAM_SHUFFLE);
    t->epoch_rng = t->shuffle_rng;
    t->perm = malloc(train->count * sizeof *t->perm);
    t->step_loss = malloc((train->count / cfg->batch_size + 1) * sizeof *t->step_loss);
    t->epoch_loss = malloc((train->count / cfg->batch_size + 1) * sizeof *t->epoch_loss);
    t->step_norm = calloc(train->count / cfg->batch_size + 1, sizeof *t->step_norm);
    t->epoch_norm = calloc(train->count / cfg->batch_size + 1, sizeof *t->epoch_norm);
    if (cfg->early_stopping > 0) /* the best epoch's weights */
        t->es_best = malloc(m->parameter_count * sizeof *t->es_best);
    if (!t->perm || !t->step_loss || !t->epoch_loss || !t->step_norm || !t->epoch_norm ||
        (cfg->early_stopping > 0 && !t->es_best)) {
        free_host(t);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the permutation");
    }
    if ((st = pick_backend(t, t->cfg.device)) != FFNN_OK ||
        (st = check_weights(t, train)) != FFNN_OK ||
        (st = check_memory(t, train)) != FFNN_OK ||
        (comm && (st = check_parallel(t)) != FFNN_OK) ||
        (st = allocate_buffers(t)) != FFNN_OK ||
        (st = ffnn_device_data_upload(t, train, &t->run.train)) != FFNN_OK ||
        (comm && (st = check_same_data(t)) != FFNN_OK) ||
        (st = prepare_strategy(t)) != FFNN_OK) {
        ffnn_trainer_free(t);
        return st;
    }
    if (t->run.comm)
        t->run.plan.fused_sgd = 0; /* the update waits for the all-reduce */
    m->sync = ffnn_trainer_sync_hook;
    m->owner = t;
    m->stale = 0;
    m->loss = cfg->loss; /* how the outputs are read (predictor, save, export) */
    m->has_loss = 1;
    *out = t;
    return FFNN_OK;
}

void ffnn_trainer_free(ffnn_trainer *t)
{
    if (!t)
        return;
    if (t->run.model && t->run.model->owner == t) { /* the model keeps the last weights */
        ffnn_model_sync(t->run.model);
        t->run.model->sync = NULL;
        t->run.model->owner = NULL;
        t->run.model->stale = 0;
    }
    if (t->run.ops && (t->run.ctx || t->run.ops == &ffnn_cpu_backend)) {
        ffnn_device_data_free(t, &t->run.train);
        ffnn_device_data_free(t, &t->eval);
        for (int i = 0; i < t->run.model->layer_count; i++) {
            if (t->run.act)
                ffnn_trainer_release(t, t->run.act[i]);
            if (t->run.drop)
                ffnn_trainer_release(t, t->run.drop[i]);
            if (t->run.pre)
                ffnn_trainer_release(t, t->run.pre[i]);
        }
        ffnn_trainer_release(t, t->run.grad_norm);
        ffnn_trainer_release(t, t->run.ema);
        ffnn_trainer_release(t, t->run.params);
        ffnn_trainer_release(t, t->run.grads);
        ffnn_trainer_release(t, t->run.opt_state);
        ffnn_trainer_release(t, t->run.x);
        ffnn_trainer_release(t, t->run.y);
        ffnn_trainer_release(t, t->run.tgt);
        ffnn_trainer_release(t, t->run.grad_buf[0]);
        ffnn_trainer_release(t, t->run.grad_buf[1]);
        if (t->strategy && t->strategy->release)
            t->strategy->release(&t->run, t->strategy_state);
        t->run.ops->destroy(t->run.ctx);
    }
    free_host(t);
}
