/* table.c - the strategy table (one line per strategy) and the choice of the
 * strategy a trainer runs. */
#include <stdio.h>

#include "core/error.h"
#include "strategy/strategy.h"

static const ffnn_strategy_impl *const table[] = {
    [FFNN_STRATEGY_TILED] = &ffnn_strategy_tiled_impl,
    [FFNN_STRATEGY_NAIVE] = &ffnn_strategy_naive_impl,
    [FFNN_STRATEGY_CUBLAS] = &ffnn_strategy_cublas_impl,
    [FFNN_STRATEGY_FUSED] = &ffnn_strategy_fused_impl,
    [FFNN_STRATEGY_GRAPH] = &ffnn_strategy_graph_impl,
    [FFNN_STRATEGY_PERSISTENT] = &ffnn_strategy_persistent_impl,
    [FFNN_STRATEGY_AUTO] = &ffnn_strategy_auto_impl,
    [FFNN_STRATEGY_CUBLASLT] = &ffnn_strategy_cublaslt_impl,
    [FFNN_STRATEGY_REFERENCE] = &ffnn_strategy_reference_impl,
    [FFNN_STRATEGY_TUNE] = &ffnn_strategy_tune_impl,
};

const ffnn_strategy_impl *ffnn_strategy_get(ffnn_strategy id)
{
    if ((int)id < 0 || (size_t)id >= sizeof table / sizeof table[0])
        return NULL;
    return table[id];
}

ffnn_status ffnn_strategy_choose(const ffnn_model *m, const ffnn_train_config *cfg,
                                 unsigned caps, const ffnn_strategy_impl **out)
{
    if (cfg->strategy == FFNN_STRATEGY_BATCHED)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "strategy batched trains the models of a sweep "
                         "together (ffnn_sweep_create); one trainer takes another strategy "
                         "(auto)");
    const ffnn_strategy_impl *s = ffnn_strategy_get(cfg->strategy);
    if (!s)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "unknown strategy value %d",
                         (int)cfg->strategy);
    if (!(caps & FFNN_CAP_DEVICE)) { /* the cpu backends: the plain ops */
        *out = cfg->strategy == FFNN_STRATEGY_REFERENCE ? &ffnn_strategy_reference_impl
                                                        : &ffnn_strategy_tiled_impl;
        return FFNN_OK;
    }
    if (cfg->strategy == FFNN_STRATEGY_REFERENCE)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "strategy reference is the cpu reference: it runs on device cpu");
    s = ffnn_strategy_get(ffnn_strategy_resolve(m, cfg));
    if (!(s->precisions & FFNN_PRECISION_BIT(cfg->precision)))
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "precision %s runs on tensor cores through %s, not strategy %s",
                         ffnn_precision_name(cfg->precision),
                         cfg->precision == FFNN_PRECISION_TF32X3
                             ? "the cublas or cublaslt strategies (or auto)"
                             : "the cublas, cublaslt, fused or graph strategies (or auto)",
                         s->name);
    if (!s->supports(m, cfg, caps)) {
        char why[512];
        snprintf(why, sizeof why, "%s", ffnn_last_error());
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "%s (choose strategy auto or graph)", why);
    }
    *out = s;
    return FFNN_OK;
}

int ffnn_strategy_picks(ffnn_strategy id)
{
    return id == FFNN_STRATEGY_AUTO || id == FFNN_STRATEGY_TUNE;
}

int ffnn_strategy_measured(ffnn_strategy id) { return id == FFNN_STRATEGY_TUNE; }

int ffnn_strategy_on_reference(ffnn_strategy id) { return id == FFNN_STRATEGY_REFERENCE; }

const ffnn_strategy_impl *ffnn_strategy_device_fallback(const ffnn_strategy_impl *s,
                                                        const ffnn_train_config *cfg)
{
    if (ffnn_strategy_picks(cfg->strategy) && s->id == FFNN_STRATEGY_PERSISTENT)
        return ffnn_strategy_get(FFNN_STRATEGY_CUBLASLT);
    return NULL;
}

ffnn_status ffnn_strategy_for_parallel(const ffnn_train_config *cfg,
                                       const ffnn_strategy_impl **s)
{
    if ((*s)->id != FFNN_STRATEGY_PERSISTENT)
        return FFNN_OK;
    if (!ffnn_strategy_picks(cfg->strategy))
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "strategy persistent trains whole runs of steps in one kernel, "
                         "with no place for the gradient all-reduce of data-parallel "
                         "training: use graph, fused, cublaslt, cublas, tiled or naive");
    *s = ffnn_strategy_get(FFNN_STRATEGY_GRAPH);
    return FFNN_OK;
}
