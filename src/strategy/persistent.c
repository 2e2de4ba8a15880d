/* persistent.c - the persistent strategy: one cooperative kernel of the backend
 * (train_persistent) runs many SGD steps of a one-hidden-layer dense net, each
 * block holding its slice of W1/W2 on chip, two grid barriers per step
 * (docs/PERFORMANCE.md). Scope: in -> hidden (any activation) -> out (identity),
 * softmax_ce on class labels or mse on float targets, plain sgd, fp32 or tf32
 * (which lets the kernel put its two matmuls on the tensor cores where that is
 * faster: 8 units a block, uint8 images; elsewhere fp32); the kernel's size limits
 * are asked of the device at prepare. By default one launch runs the rest of the
 * epoch. When auto chose it and the device refuses the shapes, the trainer falls
 * back to graph (the next best below 512 rows). */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "data/dataset.h"
#include "strategy/strategy.h"

int ffnn_strategy_persistent_fits(const ffnn_model *m, const ffnn_train_config *cfg)
{
    if (m->layers[0].kind == FFNN_LAYER_EMBEDDING) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED, "strategy persistent trains dense layers only; layer 0 "
                  "is an embedding layer (graph, fused, cublaslt, cublas, tiled and naive run "
                  "it)");
        return 0;
    }
    if (m->layer_count != 2 || m->layers[0].kind != FFNN_LAYER_DENSE ||
        m->layers[1].kind != FFNN_LAYER_DENSE) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED,
                  "strategy persistent trains dense nets with one hidden layer "
                  "(in-hidden-out); this one has %d layers", m->layer_count);
        return 0;
    }
    if (m->layers[1].act != FFNN_ACT_IDENTITY ||
        (cfg->loss != FFNN_LOSS_SOFTMAX_CE && cfg->loss != FFNN_LOSS_MSE)) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED,
                  "strategy persistent needs an identity output layer with softmax "
                  "cross-entropy (labels) or mse (float targets)");
        return 0;
    }
    if (cfg->optimizer != FFNN_OPT_SGD || cfg->weight_decay != 0.0f) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED, "strategy persistent runs plain sgd without "
                  "weight decay, not %s%s", ffnn_optimizer_name(cfg->optimizer),
                  cfg->weight_decay != 0.0f ? " with weight decay" : "");
        return 0;
    }
    if (cfg->clip_grad_norm > 0.0f || cfg->clip_grad_value > 0.0f || cfg->ema_decay > 0.0f ||
        ffnn_strategy_has_dropout(m) || !ffnn_strategy_fused_activations(m)) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED, "strategy persistent runs plain sgd steps with "
                  "relu, sigmoid or tanh: no gradient clipping, EMA, dropout, leaky_relu, elu, "
                  "softplus, gelu, gelu_tanh, silu, mish or hardswish");
        return 0;
    }
    if (!ffnn_schedule_constant_within_epochs(cfg)) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED, "strategy persistent runs a launch at one learning "
                  "rate: no warm-up steps");
        return 0;
    }
    if (cfg->precision != FFNN_PRECISION_FP32 && cfg->precision != FFNN_PRECISION_TF32) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED, "strategy persistent runs fp32 or tf32, not %s",
                  ffnn_precision_name(cfg->precision));
        return 0;
    }
    return 1;
}

static int persistent_supports(const ffnn_model *m, const ffnn_train_config *cfg,
                               unsigned caps)
{
    (void)caps;
    return ffnn_strategy_persistent_fits(m, cfg);
}

/* The kernel's job for steps [first, first + count) (shapes only when count is
 * 0: for the device's support check). */
static ffnn_persistent_job persistent_job(const ffnn_run *r, size_t first, size_t count,
                                          uint64_t opt_t)
{
    const ffnn_model *m = r->model;
    const ffnn_layer *l0 = &m->layers[0], *l1 = &m->layers[1];
    ffnn_persistent_job j;
    memset(&j, 0, sizeof j);
    j.data = ffnn_step_gather_source(&r->train);
    j.index = r->train.index;
    j.n = r->train.host->count;
    j.batch_size = r->cfg->batch_size;
    j.first_step = first;
    j.steps = count;
    j.in = l0->in;
    j.hidden = l0->out;
    j.out = l1->out;
    j.hidden_act = l0->act;
    j.loss = r->cfg->loss;
    j.W1 = r->params + l0->weight_offset;
    j.b1 = l0->has_bias ? r->params + l0->bias_offset : NULL;
    j.W2 = r->params + l1->weight_offset;
    j.b2 = l1->has_bias ? r->params + l1->bias_offset : NULL;
    j.lr = ffnn_run_update_at(r, opt_t + 1).lr; /* one rate per launch: within an epoch */
    j.row_loss = r->train.row_loss;
    j.row_correct = r->train.row_correct;
    return j;
}

/* With the data on the device: the loss's targets and the device's limits. */
static ffnn_status persistent_prepare(ffnn_run *r, void **state)
{
    *state = NULL;
    if (!r->ops->persistent)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "strategy persistent: backend %s has no persistent kernel",
                         r->ops->name);
    if (r->cfg->loss == FFNN_LOSS_MSE ? !r->train.targets : !r->train.labels)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "strategy persistent runs softmax_ce on class labels or mse "
                         "on float targets, not %s on %s", ffnn_loss_name(r->cfg->loss),
                         r->train.labels ? "class labels" : "float targets");
    const ffnn_persistent_job job = persistent_job(r, 0, 0, 0);
    if (!r->ops->persistent->persistent_supported(r->ctx, &job))
        return FFNN_ERR_UNSUPPORTED; /* the reason is in ffnn_last_error() */
    return FFNN_OK;
}

static size_t whole_epoch(size_t steps_per_epoch) { return steps_per_epoch; }

static ffnn_status persistent_run(ffnn_run *r, void *state, size_t first, size_t count,
                                  uint64_t opt_t)
{
    (void)state; /* plain sgd: every step of a launch (within an epoch) has the same lr */
    const ffnn_persistent_job job = persistent_job(r, first, count, opt_t);
    return r->ops->persistent->train_persistent(r->ctx, &job);
}

const ffnn_strategy_impl ffnn_strategy_persistent_impl = {
    .id = FFNN_STRATEGY_PERSISTENT, .name = "persistent",
    .precisions = FFNN_PRECISION_BIT(FFNN_PRECISION_FP32) | FFNN_PRECISION_BIT(FFNN_PRECISION_TF32),
    .matmul = FFNN_MATMUL_TILED, .supports = persistent_supports, .prepare = persistent_prepare,
    .default_steps = whole_epoch, .run_steps = persistent_run,
};
