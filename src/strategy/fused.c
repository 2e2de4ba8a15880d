/* fused.c - the fused strategy: the backend's fused ops (dense_act_forward,
 * dense_backward_fused: bias + activation in the matmul's epilogue, the input
 * layer's act' in the dx epilogue, and with plain sgd on an all-dense net the
 * update in the weight-gradient kernels - plain sgd without weight decay; any other
 * optimizer runs optimizer_update after the backward), one launch per op. graph.c captures
 * the same ops. */
#include "core/error.h"
#include "strategy/strategy.h"

int ffnn_strategy_supports_all(const ffnn_model *m, const ffnn_train_config *cfg, unsigned caps)
{
    (void)m, (void)cfg, (void)caps;
    return 1;
}

ffnn_status ffnn_strategy_queue_steps(ffnn_run *r, void *state, size_t first, size_t count,
                                      uint64_t opt_t)
{
    (void)state;
    return ffnn_step_queue_run(r, first, count, opt_t);
}

int ffnn_strategy_all_dense(const ffnn_model *m)
{
    for (int i = 0; i < m->layer_count; i++)
        if (m->layers[i].kind != FFNN_LAYER_DENSE)
            return 0;
    return 1;
}

int ffnn_strategy_fused_activations(const ffnn_model *m)
{
    for (int i = 0; i < m->layer_count; i++)
        if (m->layers[i].act != FFNN_ACT_IDENTITY && m->layers[i].act != FFNN_ACT_RELU &&
            m->layers[i].act != FFNN_ACT_SIGMOID && m->layers[i].act != FFNN_ACT_TANH)
            return 0;
    return 1;
}

int ffnn_strategy_has_dropout(const ffnn_model *m)
{
    for (int i = 0; i < m->layer_count; i++)
        if (m->layers[i].has_dropout)
            return 1;
    return 0;
}

/* Turn the fused ops on where the backend has them (local1d layers keep the plain
 * ops); graph.c prepares the same way. */
ffnn_status ffnn_strategy_fused_prepare(ffnn_run *r, void **state)
{
    *state = NULL;
    /* dropout: the dx epilogue's f' reads the (dropped) input: the plain ops */
    r->plan.fused = r->ops->fused &&
               !ffnn_strategy_has_dropout(r->model) && ffnn_strategy_fused_activations(r->model);
    /* the update inside the backward: plain sgd with nothing between the gradient
     * and the update (no decay, no clipping) */
    r->plan.fused_sgd = r->plan.fused && r->cfg->optimizer == FFNN_OPT_SGD &&
                   r->cfg->weight_decay == 0.0f && r->cfg->clip_grad_norm == 0.0f &&
                   r->cfg->clip_grad_value == 0.0f && ffnn_strategy_all_dense(r->model);
    return FFNN_OK;
}

const ffnn_strategy_impl ffnn_strategy_fused_impl = {
    .id = FFNN_STRATEGY_FUSED, .name = "fused",
    .precisions = FFNN_PRECISION_BIT(FFNN_PRECISION_FP32) | FFNN_PRECISION_BIT(FFNN_PRECISION_TF32) | FFNN_PRECISION_BIT(FFNN_PRECISION_BF16),
    .matmul = FFNN_MATMUL_TILED, .supports = ffnn_strategy_supports_all,
    .prepare = ffnn_strategy_fused_prepare, .run_steps = ffnn_strategy_queue_steps,
};
