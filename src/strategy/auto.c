/* auto.c - the auto strategy: the fastest correct strategy for the network and
 * batch, by the rule measured on an H200 (docs/PERFORMANCE.md, "auto"). It never
 * runs steps itself: ffnn_strategy_choose replaces it by its pick. Also tune's
 * table entry: auto's rule is its fallback (src/train/tune.c measures). */
#include "strategy/strategy.h"

/* Batch limits of the auto rule (docs/PERFORMANCE.md, "auto"). */
#define AUTO_PERSISTENT_MAX_BATCH 384
#define AUTO_CUBLAS_MIN_BATCH 512
/* Narrow nets (every hidden layer at most this wide) up to this batch: graph. */
#define AUTO_NARROW_WIDTH 256
#define AUTO_NARROW_MAX_BATCH 1024

/* 1 when every layer is dense and every hidden one at most AUTO_NARROW_WIDTH wide. */
static int narrow_net(const ffnn_model *m)
{
    if (!ffnn_strategy_all_dense(m)) return 0;
    for (int i = 0; i + 1 < m->layer_count; i++)
        if (m->layers[i].out > AUTO_NARROW_WIDTH) return 0;
    return 1;
}

ffnn_strategy ffnn_strategy_resolve(const ffnn_model *m, const ffnn_train_config *cfg)
{
    if (cfg->strategy != FFNN_STRATEGY_AUTO && cfg->strategy != FFNN_STRATEGY_TUNE)
        return cfg->strategy;
    /* tf32/bf16 at small batches: our own tensor-core kernels (gemm_mma.cu) under
     * graph, launch-bound where cuBLAS's per-call cost dominates: 784-256-10 in
     * one H200 call (2026-11-24, RESULTS.md "Issue 15, final"): tf32 at batch 64
     * graph 56.9 vs cublas 92.2 / cublaslt 90.7 ms/epoch, at 256 17.8 vs 27.6 /
     * 28.2; at 1024 cublas leads (6.27 vs 7.88) */
    if (cfg->precision != FFNN_PRECISION_FP32 && cfg->batch_size < AUTO_CUBLAS_MIN_BATCH)
        return FFNN_STRATEGY_GRAPH;
    /* narrow nets up to batch 1024, since the split-K plan (backend/gemm_plan.h)
     * feeds our kernels' small-output, deep-K matmuls: graph. One H200 call
     * (2026-11-24, RESULTS.md "split-K"): 784-128x8-10 at 1024, graph fp32 / tf32 /
     * bf16 14.7 / 15.2 / 13.7 ms/epoch against cublaslt 26.8 / 22.1 / 19.0;
     * 784-256-10 at 1024 tf32 4.5 against cublas 5.6-6.3. Not fp32 with one
     * hidden layer: there cublaslt stays ahead (6.1 vs graph 6.9). */
    if (cfg->batch_size <= AUTO_NARROW_MAX_BATCH && narrow_net(m) &&
        (cfg->precision != FFNN_PRECISION_FP32 || m->layer_count >= 3))
        return FFNN_STRATEGY_GRAPH;
    /* tf32 and bf16, larger batches: cublaslt where its fused ops cover the net,
     * else cuBLAS. bf16 there runs the mixed-precision pipeline (bf16 weights,
     * activations and gradients written by the epilogues and the update: step.h
     * ffnn_mixed): in one H200 call 31.0 vs 44.8 ms/epoch for cublas on the
     * 4096-wide net at batch 4096 (24.3-25.1 after the last change), 8.9 vs 9.7-11.8
     * on 784-1024x2-10 at 1024, at par on 784-256-10 (bimodal spread;
     * docs/RESULTS.md "mixed precision"). tf32 since cublaslt updates in one launch
     * (per_op.c): one H200 call
     * (2026-11-24, RESULTS.md "One update launch"), cublaslt:tf32 against
     * cublas:tf32, 784-1024x2-10 at 1024: 8.05-9.56 vs 10.25-11.47 ms/epoch, at
     * 512: 17.3-20.4 vs 16.0-22.6 (mixed), 784-4096x3-10 at 4096: 47.8 vs 54.7-55.1 */
    if (cfg->precision != FFNN_PRECISION_FP32 && ffnn_strategy_all_dense(m) &&
        ffnn_strategy_fused_activations(m) && !ffnn_strategy_has_dropout(m))
        return FFNN_STRATEGY_CUBLASLT;
    if (cfg->precision != FFNN_PRECISION_FP32)
        return FFNN_STRATEGY_CUBLAS;
    /* small batches of one-hidden-layer nets: launch- and latency-bound, one
     * persistent kernel per epoch wins (2.2x graph at batch 64, 1.6x at 256);
     * from 512 cublas does (8.2 vs 9.1 ms at 512, 5.9 vs 8.6 at 1024) */
    if (cfg->batch_size <= AUTO_PERSISTENT_MAX_BATCH && ffnn_strategy_persistent_fits(m, cfg))
        return FFNN_STRATEGY_PERSISTENT;
    /* large batches: matmul-bound, cuBLAS's kernels are the fastest we have
     * (batch 512: cublas 8.2, graph 11.5, fused 11.9 ms), and with bias + relu and
     * the bias gradient in cuBLASLt's epilogues faster still: cublaslt beat cublas
     * in fp32 on all four nets of one H200 call at batch 1024-4096 (5.34 vs 5.92,
     * 20.85 vs 22.60, 263.5 vs 269.7, 21.0 vs 21.4 ms/epoch; docs/RESULTS.md) */
    /* - unless an epilogue lacks a layer's activation (leaky_relu, elu, softplus,
     * gelu, gelu_tanh, silu, mish, hardswish) or the net has dropout: then cuBLAS
     * with the plain element-wise ops (what cublaslt would fall back to) */
    if (cfg->batch_size >= AUTO_CUBLAS_MIN_BATCH)
        return ffnn_strategy_fused_activations(m) && !ffnn_strategy_has_dropout(m)
                   ? FFNN_STRATEGY_CUBLASLT
                   : FFNN_STRATEGY_CUBLAS;
    /* the rest: the fused kernels, 16 steps per CUDA graph (graph runs the plain ops
     * in its graphs for the activations and dropout the fused kernels lack) */
    return FFNN_STRATEGY_GRAPH;
}

const ffnn_strategy_impl ffnn_strategy_auto_impl = {
    FFNN_STRATEGY_AUTO,
    "auto",
    FFNN_PRECISION_BIT(FFNN_PRECISION_FP32) | FFNN_PRECISION_BIT(FFNN_PRECISION_TF32) |
        FFNN_PRECISION_BIT(FFNN_PRECISION_BF16),
    FFNN_MATMUL_TILED,
    ffnn_strategy_supports_all, /* it picks one that does */
    NULL,
    NULL,
    NULL,
    NULL,
};

/* tune: auto by measurement. The trainer (src/train/tune.c) times the candidates
 * and creates itself with the fastest; where it measures nothing (the cpu, data
 * parallelism, every candidate failed) tune is resolved as auto, by the rule above. */
const ffnn_strategy_impl ffnn_strategy_tune_impl = {
    FFNN_STRATEGY_TUNE,
    "tune",
    FFNN_PRECISION_BIT(FFNN_PRECISION_FP32) | FFNN_PRECISION_BIT(FFNN_PRECISION_TF32) |
        FFNN_PRECISION_BIT(FFNN_PRECISION_BF16),
    FFNN_MATMUL_TILED,
    ffnn_strategy_supports_all, /* it picks one that does */
    NULL,
    NULL,
    NULL,
    NULL,
};
