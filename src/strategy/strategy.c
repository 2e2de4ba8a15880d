/* strategy.c - the cuda strategies' scope and the auto rule (strategy.h). */
#include "strategy/strategy.h"

#include "core/error.h"

int ffnn_strategy_persistent_fits(const ffnn_model *m, const ffnn_train_config *cfg)
{
    if (m->layer_count != 2 || m->layers[0].kind != FFNN_LAYER_DENSE ||
        m->layers[1].kind != FFNN_LAYER_DENSE) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED,
                  "--kernels persistent trains dense nets with one hidden layer "
                  "(in-hidden-out); this one has %d layers", m->layer_count);
        return 0;
    }
    if (m->layers[1].act != FFNN_ACT_IDENTITY ||
        (cfg->loss != FFNN_LOSS_SOFTMAX_CE && cfg->loss != FFNN_LOSS_MSE)) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED,
                  "--kernels persistent needs an identity output layer with softmax "
                  "cross-entropy (labels) or mse (float targets)");
        return 0;
    }
    if (cfg->optimizer != FFNN_OPT_SGD) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED, "--kernels persistent runs plain sgd, not %s",
                  ffnn_optimizer_name(cfg->optimizer));
        return 0;
    }
    if (cfg->precision != FFNN_PRECISION_FP32) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED, "--kernels persistent runs fp32 only");
        return 0;
    }
    return 1;
}

int ffnn_strategy_fused_fits(const ffnn_model *m)
{
    for (int i = 0; i < m->layer_count; i++)
        if (m->layers[i].kind != FFNN_LAYER_DENSE)
            return 0;
    return 1;
}

/* Batch limits of the auto rule (docs/PERFORMANCE.md, "auto"). */
#define FFNN_AUTO_PERSISTENT_MAX_BATCH 384
#define FFNN_AUTO_CUBLAS_MIN_BATCH 512

ffnn_strategy ffnn_strategy_resolve(const ffnn_model *m, const ffnn_train_config *cfg)
{
    if (cfg->strategy != FFNN_STRATEGY_AUTO)
        return cfg->strategy;
    /* The rule from the H200 measurements in docs/PERFORMANCE.md: */
    if (cfg->precision != FFNN_PRECISION_FP32) /* tensor cores: through cuBLAS */
        return FFNN_STRATEGY_CUBLAS;
    /* small batches of one-hidden-layer nets: launch- and latency-bound, one
     * persistent kernel per epoch wins (2.2x graph at batch 64, 1.6x at 256);
     * from 512 cublas does (8.2 vs 9.1 ms at 512, 5.9 vs 8.6 at 1024) */
    if (cfg->batch_size <= FFNN_AUTO_PERSISTENT_MAX_BATCH &&
        ffnn_strategy_persistent_fits(m, cfg))
        return FFNN_STRATEGY_PERSISTENT;
    /* large batches: matmul-bound, cuBLAS's kernels are the fastest we have
     * (batch 512: cublas 8.2, graph 11.5, fused 11.9 ms) */
    if (cfg->batch_size >= FFNN_AUTO_CUBLAS_MIN_BATCH)
        return FFNN_STRATEGY_CUBLAS;
    /* the rest: our fused kernels, 16 steps per CUDA graph */
    return FFNN_STRATEGY_GRAPH;
}
