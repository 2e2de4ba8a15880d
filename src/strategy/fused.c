/* fused.c - the fused strategy: the backend's fused ops (dense_act_forward,
 * dense_backward_fused: bias + activation in the matmul's epilogue, the input
 * layer's act' in the dx epilogue, and with plain sgd on an all-dense net the
 * update in the weight-gradient kernels), one launch per op. graph.c captures
 * the same ops. */
#include "core/error.h"
#include "strategy/strategy.h"

#define PRECISION(p) (1u << (p))

int ffnn_strategy_all_dense(const ffnn_model *m)
{
    for (int i = 0; i < m->layer_count; i++)
        if (m->layers[i].kind != FFNN_LAYER_DENSE)
            return 0;
    return 1;
}

static int fused_supports(const ffnn_model *m, const ffnn_train_config *cfg, unsigned caps)
{
    (void)m, (void)cfg, (void)caps; /* local1d layers run the plain ops */
    return 1;
}

/* Turn the fused ops on where the backend has them (shared with graph.c). */
static ffnn_status fused_prepare(ffnn_run *r, void **state)
{
    *state = NULL;
    r->fused = r->ops->dense_act_forward && r->ops->dense_backward_fused;
    r->fused_sgd = r->fused && r->cfg->optimizer == FFNN_OPT_SGD &&
                   ffnn_strategy_all_dense(r->model);
    return FFNN_OK;
}

static ffnn_status fused_run(ffnn_run *r, void *state, size_t first, size_t count,
                             uint64_t opt_t)
{
    (void)state;
    ffnn_status st = FFNN_OK;
    for (size_t i = 0; i < count && st == FFNN_OK; i++)
        st = ffnn_step_queue(r, first + i, opt_t + 1 + i);
    return st;
}

const ffnn_strategy_impl ffnn_strategy_fused_impl = {
    FFNN_STRATEGY_FUSED,
    "fused",
    PRECISION(FFNN_PRECISION_FP32) | PRECISION(FFNN_PRECISION_TF32),
    FFNN_MATMUL_TILED,
    fused_supports,
    fused_prepare,
    NULL,
    NULL,
    fused_run,
};

/* graph.c's prepare: the fused ops, then its capture cache. */
ffnn_status ffnn_strategy_fused_prepare(ffnn_run *r, void **state)
{
    return fused_prepare(r, state);
}
