/* per_op.c - the strategies that queue one backend op per launch: naive and
 * tiled (the backend's plain matmul kernels of that name) and cublas (cuBLAS
 * matmuls, the named comparator, with runs of steps captured in CUDA graphs
 * through graph.c's cache: 8 steps per graph measured 4-8% faster than 1 and
 * than 16 or 59, docs/PERFORMANCE.md; --steps-per-launch 1 launches op by op);
 * and cublaslt, its comparator with the matmul epilogues: the backend's fused ops
 * (fused.c) on cuBLASLt (src/backend/cuda/cublas.cu), captured as cublas; with
 * --precision bf16 the mixed-precision pipeline (step.h ffnn_mixed, mixed.c). */
#include "core/error.h"
#include "strategy/head.h"
#include "strategy/mixed.h"
#include "strategy/strategy.h"
#include "strategy/xt.h"

#define CUBLAS_DEFAULT_STEPS 8

const ffnn_strategy_impl ffnn_strategy_naive_impl = {
    .id = FFNN_STRATEGY_NAIVE, .name = "naive",
    .precisions = FFNN_PRECISION_BIT(FFNN_PRECISION_FP32), .matmul = FFNN_MATMUL_NAIVE,
    .supports = ffnn_strategy_supports_all, .run_steps = ffnn_strategy_queue_steps,
};

const ffnn_strategy_impl ffnn_strategy_tiled_impl = {
    .id = FFNN_STRATEGY_TILED, .name = "tiled",
    .precisions = FFNN_PRECISION_BIT(FFNN_PRECISION_FP32), .matmul = FFNN_MATMUL_TILED,
    .supports = ffnn_strategy_supports_all, .run_steps = ffnn_strategy_queue_steps,
};

/* The cpu reference: the plain ops, one by one, on the reference backend (the
 * trainer picks that backend for this strategy: src/train/trainer.c). */
const ffnn_strategy_impl ffnn_strategy_reference_impl = {
    .id = FFNN_STRATEGY_REFERENCE, .name = "reference",
    .precisions = FFNN_PRECISION_BIT(FFNN_PRECISION_FP32), .matmul = FFNN_MATMUL_TILED,
    .supports = ffnn_strategy_supports_all, .run_steps = ffnn_strategy_queue_steps,
};

static ffnn_status cublas_prepare(ffnn_run *r, void **state)
{
    return ffnn_graph_cache_create(r, state);
}

/* The fused ops on (the backend runs them on cuBLASLt for FFNN_MATMUL_LIBRARY_LT),
 * and the graph cache. A net with dropout or an activation the epilogues lack
 * (leaky_relu ... hardswish, ffnn_strategy_fused_activations) runs the plain ops,
 * cuBLAS matmuls, as fused and graph do (auto picks cublas for it). */
static ffnn_status cublaslt_prepare(ffnn_run *r, void **state)
{
    if (!r->ops->fused)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "strategy cublaslt: the %s backend has no fused dense ops",
                         r->ops->name);
    void *none = NULL;
    ffnn_status st = ffnn_strategy_fused_prepare(r, &none);
    if (st != FFNN_OK) return st;
    /* the dense layers' bias gradients summed in the pass that applies f' to dx,
     * not by cuBLASLt's BGRADB epilogue, a second kernel per layer (docs/RESULTS.md
     * "f' with the bias gradient") */
    r->plan.bias_grad_from_dx = r->plan.fused;
    /* bf16: the mixed-precision pipeline (step.h ffnn_mixed) where every layer
     * runs the fused ops; else the fused ops convert their operands per matmul */
    if (r->cfg->precision == FFNN_PRECISION_BF16 && r->plan.fused &&
        ffnn_strategy_all_dense(r->model) && r->ops->bf16 &&
        (st = ffnn_mixed_create(r)) != FFNN_OK)
        return st;
    /* plain sgd (fused_sgd, as fused.c sets it) in fp32 and tf32: each weight
     * matrix updated in its dW matmul's epilogue (W -= lr dz^T x, no update
     * kernel, dW not written), the biases and the head's layer by the step's
     * update_rest beside layer 0's matmul (docs/RESULTS.md "SGD in the matmul").
     * The bf16 pipeline keeps one update launch after the backward: it writes the
     * weights' bf16 shadows in the same pass (docs/RESULTS.md "one update
     * launch") */
    if (r->ext.mixed != NULL)
        r->plan.fused_sgd = 0;
    /* the update of the layers above layer 0 beside the backward of the layers
     * below, where it runs after the backward (docs/RESULTS.md "SGD in the
     * matmul") */
    r->plan.early_update = 1;
    /* the output layer and softmax_ce as one op where the net allows (step.h
     * ffnn_step_head_applies; docs/RESULTS.md "The output layer and its loss in
     * one op") */
    /* layer 0's weight gradient from x prepared by the gather, beside the step, where
     * the backend says so (tf32: x^T, tf32x3: its split x^T; step.h
     * ffnn_step_xt_create; docs/RESULTS.md "x^T from the gather", "tf32x3's splits
     * off the chain"); before the graph cache, whose second set of batch buffers take one
     * then */
    if ((st = ffnn_step_head_create(r)) != FFNN_OK ||
        (st = ffnn_step_xt_create(r)) != FFNN_OK ||
        (st = ffnn_graph_cache_create(r, state)) != FFNN_OK) {
        ffnn_step_xt_free(r);
        ffnn_step_head_free(r);
        ffnn_mixed_free(r);
    }
    return st;
}

static void cublaslt_release(ffnn_run *r, void *state)
{
    ffnn_graph_cache_free(r, state);
    ffnn_step_xt_free(r);
    ffnn_step_head_free(r);
    ffnn_mixed_free(r);
}

static size_t cublas_steps(size_t steps_per_epoch)
{
    return ffnn_graph_steps(CUBLAS_DEFAULT_STEPS, steps_per_epoch);
}

/* A run of more than one step is captured (and cached) as one graph. */
static ffnn_status cublas_run(ffnn_run *r, void *state, size_t first, size_t count,
                              uint64_t opt_t)
{
    /* the bf16 shadow made again outside the capture (params came from the host) */
    ffnn_status st = ffnn_mixed_sync(r);
    if (st != FFNN_OK)
        return st;
    if (count > 1)
        return ffnn_graph_run(r, state, first, count, opt_t);
    return ffnn_step_queue_run(r, first, count, opt_t);
}

const ffnn_strategy_impl ffnn_strategy_cublas_impl = {
    .id = FFNN_STRATEGY_CUBLAS, .name = "cublas", .precisions = FFNN_PRECISIONS_ALL,
    .matmul = FFNN_MATMUL_LIBRARY, .supports = ffnn_strategy_supports_all,
    .prepare = cublas_prepare, .release = ffnn_graph_cache_free, .default_steps = cublas_steps,
    .run_steps = cublas_run,
};

const ffnn_strategy_impl ffnn_strategy_cublaslt_impl = {
    .id = FFNN_STRATEGY_CUBLASLT, .name = "cublaslt", .precisions = FFNN_PRECISIONS_ALL,
    .matmul = FFNN_MATMUL_LIBRARY_LT, .supports = ffnn_strategy_supports_all,
    .prepare = cublaslt_prepare, .release = cublaslt_release, .default_steps = cublas_steps,
    .run_steps = cublas_run,
};
