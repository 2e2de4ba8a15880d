/* auto.c - the auto strategy: the fastest correct strategy for the network and
 * batch, by the rule measured on an H200 (docs/PERFORMANCE.md, "auto"). It never
 * runs steps itself: ffnn_strategy_choose replaces it by its pick. Also tune's
 * table entry: auto's rule is its fallback (src/train/tune.c measures). */
#include "strategy/strategy.h"

/* Batch limits of the auto rule (docs/PERFORMANCE.md, "auto"). */
#define AUTO_TF32_PERSISTENT_MAX_BATCH 256
#define AUTO_CUBLAS_MIN_BATCH 512
/* Narrow nets (every hidden layer at most this wide) up to this batch: graph. */
#define AUTO_NARROW_WIDTH 256
#define AUTO_NARROW_MAX_BATCH 1024
/* fp32 narrow nets of two or more hidden layers on graph (graph_fp32_rule): up to
 * this batch, and deep narrow ones (at least this many hidden layers, each at most
 * this wide) up to that batch */
#define AUTO_GRAPH_FP32_MAX_BATCH 64
#define AUTO_DEEP_NARROW_LAYERS 4
#define AUTO_DEEP_NARROW_WIDTH 128
#define AUTO_DEEP_NARROW_MAX_BATCH 256

/* fp32 one-hidden-layer nets: the persistent kernel when the batch and the hidden
 * width are within one row (docs/PERFORMANCE.md "auto"; bench/auto_width.sh, one H200
 * call, 2026-11-29, ms/epoch of 784-Hrelu-10, persistent against cublaslt, the best
 * of the rest: at batch <= 128 persistent leads at every width to 1024 (H 1024 at
 * 128: 14.8 vs 17.4); at 256 up to H 256 (5.5 vs 6.5) but not at 384 (8.0 vs 7.4);
 * at 384 up to 256 (5.0 vs 5.2) but not at 384 (8.7 vs 5.8); at 512 up to 128 (3.2
 * vs 3.6) but not at 256 (4.5 vs 4.2)). */
static const struct {
    size_t max_batch;
    size_t max_hidden;
} persistent_fp32[] = {{128, 1024}, {384, 256}, {512, 128}};

static int persistent_fp32_rule(const ffnn_model *m, size_t batch)
{
    if (m->layer_count != 2) return 0;
    for (size_t i = 0; i < sizeof persistent_fp32 / sizeof persistent_fp32[0]; i++)
        if (batch <= persistent_fp32[i].max_batch &&
            m->layers[0].out <= persistent_fp32[i].max_hidden)
            return 1;
    return 0;
}

/* 1 when every layer is dense and every hidden one at most `width` wide. */
static int narrow_to(const ffnn_model *m, size_t width)
{
    if (!ffnn_strategy_all_dense(m)) return 0;
    for (int i = 0; i + 1 < m->layer_count; i++)
        if (m->layers[i].out > width) return 0;
    return 1;
}

static int narrow_net(const ffnn_model *m) { return narrow_to(m, AUTO_NARROW_WIDTH); }

/* fp32 nets of two or more hidden layers, all at most AUTO_NARROW_WIDTH wide: graph
 * (our kernels with the split-K plan, backend/gemm_plan.h) at batch <= 64, and for 4
 * or more hidden layers of at most 128 units up to batch 256; else cublaslt. One H200
 * call (bench/auto_width.sh, 2026-11-29), ms/epoch graph vs cublaslt at batch 64 /
 * 256 / 1024: 784-128relux2-10 35.8 / 11.9 / 4.49 vs 40.9 / 10.6 / 3.60,
 * 784-256relux2-10 42.4 / 18.8 / 7.59 vs 38.5 / 12.7 / 5.45, 784-128relux4-10 53.3 /
 * 18.0 / 6.68 vs 83.0 / 20.1 / 6.28, 784-256relux4-10 68.2 / 30.8 / 11.7 vs 76.9 /
 * 24.4 / 9.27; 784-128relux8-10 at 64 / 256 / 448 88.5 / 29.9 / 25.6 vs 168.5 / 38.4 /
 * 23.7. */
static int graph_fp32_rule(const ffnn_model *m, size_t batch)
{
    if (m->layer_count < 3 || !narrow_net(m)) return 0;
    if (batch <= AUTO_GRAPH_FP32_MAX_BATCH) return 1;
    return batch <= AUTO_DEEP_NARROW_MAX_BATCH && m->layer_count - 1 >= AUTO_DEEP_NARROW_LAYERS &&
           narrow_to(m, AUTO_DEEP_NARROW_WIDTH);
}

ffnn_strategy ffnn_strategy_resolve(const ffnn_model *m, const ffnn_train_config *cfg)
{
    if (cfg->strategy != FFNN_STRATEGY_AUTO && cfg->strategy != FFNN_STRATEGY_TUNE)
        return cfg->strategy;
    /* tf32 and bf16: cublaslt at every batch where its fused ops cover the net (bf16
     * there runs the mixed-precision pipeline: bf16 weights, activations and
     * gradients written by the epilogues and the update, step.h ffnn_mixed). One
     * H200 call (2026-11-24, RESULTS.md "Graphs replayed"), cublaslt against graph
     * (our tensor-core kernels) tf32 / bf16 ms/epoch: 784-256-10 at 64 31.2 / 25.0
     * vs 33.6 / 30.7, at 256 9.2 / 7.0 vs 10.7 / 9.5, at 1024 3.3 / 2.5 vs 3.6 /
     * 3.4; 784-128x8-10 at 256 34.7 / 24.9 vs 42.2 / 36.3, at 1024 10.5 / 7.9 vs
     * 10.9 / 9.6; 784-1024x2-10 at 512 11.6 / 7.4 vs cublas 13.6 / 12.9. (The
     * graph-first rule before it was measured while every launch was captured anew:
     * cuBLAS's host-side cost per capture weighed on cublaslt.) */
    /* tf32x3: only cuBLAS(Lt) runs it (cublas.cu); cublaslt, whose ops fall back to
     * the plain ones where its epilogues do not cover a layer */
    if (cfg->precision == FFNN_PRECISION_TF32X3) return FFNN_STRATEGY_CUBLASLT;
    /* tf32, one hidden layer of at most AUTO_NARROW_WIDTH units, batch <= 256: the
     * persistent kernel (its two matmuls on the tensor cores at 8 units a block, else
     * its fp32 products). One H200 call (2026-11-25, RESULTS.md history), ms/epoch,
     * persistent tf32 against cublaslt tf32: 784-256relu-10 at batch 32 14.7 / 29.9,
     * 64 9.7-9.8 / 16.8-17.0, 128 7.0-7.2 / 8.5-8.7, 256 4.5-4.6 / 4.8-4.9; but at 384
     * 4.9-5.0 / 3.7-3.9, and 784-512relu-10 at 256 8.2-8.3 / 5.5: cublaslt there. */
    if (cfg->precision == FFNN_PRECISION_TF32 &&
        cfg->batch_size <= AUTO_TF32_PERSISTENT_MAX_BATCH && narrow_net(m) &&
        ffnn_strategy_persistent_fits(m, cfg))
        return FFNN_STRATEGY_PERSISTENT;
    if (cfg->precision != FFNN_PRECISION_FP32 && ffnn_strategy_all_dense(m) &&
        ffnn_strategy_fused_activations(m) && !ffnn_strategy_has_dropout(m))
        return FFNN_STRATEGY_CUBLASLT;
    /* tf32/bf16 nets the epilogues do not cover, small batches or narrow nets up
     * to 1024: our own tensor-core kernels under graph (launch-bound there) */
    if (cfg->precision != FFNN_PRECISION_FP32 &&
        (cfg->batch_size < AUTO_CUBLAS_MIN_BATCH ||
         (cfg->batch_size <= AUTO_NARROW_MAX_BATCH && narrow_net(m))))
        return FFNN_STRATEGY_GRAPH;
    /* fp32, narrow nets of two or more hidden layers at small batches: graph */
    if (cfg->precision == FFNN_PRECISION_FP32 && graph_fp32_rule(m, cfg->batch_size))
        return FFNN_STRATEGY_GRAPH;
    if (cfg->precision != FFNN_PRECISION_FP32)
        return FFNN_STRATEGY_CUBLAS;
    /* small batches of one-hidden-layer nets: launch- and latency-bound, one
     * persistent kernel per epoch wins up to the widths of persistent_fp32 (2.0x
     * cublaslt at batch 64, 1.2x at 256 for 784-256relu-10) */
    if (persistent_fp32_rule(m, cfg->batch_size) && ffnn_strategy_persistent_fits(m, cfg))
        return FFNN_STRATEGY_PERSISTENT;
    /* large batches: matmul-bound, cuBLAS's kernels are the fastest we have
     * (batch 512: cublas 8.2, graph 11.5, fused 11.9 ms), and with bias + relu and
     * the bias gradient in cuBLASLt's epilogues faster still: cublaslt beat cublas
     * in fp32 on all four nets of one H200 call at batch 1024-4096 (5.34 vs 5.92,
     * 20.85 vs 22.60, 263.5 vs 269.7, 21.0 vs 21.4 ms/epoch; docs/RESULTS.md) */
    /* - unless an epilogue lacks a layer's activation (leaky_relu, elu, softplus,
     * gelu, gelu_tanh, silu, mish, hardswish) or the net has dropout: then cuBLAS
     * with the plain element-wise ops (what cublaslt would fall back to) */
    const int lt = ffnn_strategy_fused_activations(m) && !ffnn_strategy_has_dropout(m);
    if (cfg->batch_size >= AUTO_CUBLAS_MIN_BATCH)
        return lt ? FFNN_STRATEGY_CUBLASLT : FFNN_STRATEGY_CUBLAS;
    /* below batch 512, past persistent's rows and the narrow deep nets: cublaslt
     * (bench/auto_width.sh, H200, 2026-11-29, ms/epoch graph vs cublaslt: one hidden
     * layer of <= 1024 units 1.3-2.35x slower on graph in every cell, 1.75-2.1x at
     * batch 448, e.g. 784-512relu-10 at 384 13.7 vs 6.7, 784-1024relu-10 at 256 18.3
     * vs 11.5; at batch 64 / 256 / 448, 784-1024relu-1024relu-10 75.4 / 42.0 / 42.6
     * vs 62.4 / 26.3 / 22.8, 784-512relu-512relu-10 57.5 / 23.0 / 20.3 vs 43.3 / 15.7
     * / 12.2, 784-384relux3-10 68.0 / 37.8 / 24.6 vs 62.9 / 22.2 / 16.2) */
    if (ffnn_strategy_all_dense(m) && lt) return FFNN_STRATEGY_CUBLASLT;
    /* the rest: the fused kernels, 16 steps per CUDA graph (graph runs the plain ops
     * in its graphs for the activations and dropout the fused kernels lack) */
    return FFNN_STRATEGY_GRAPH;
}

const ffnn_strategy_impl ffnn_strategy_auto_impl = {
    .id = FFNN_STRATEGY_AUTO, .name = "auto", .precisions = FFNN_PRECISIONS_ALL,
    .matmul = FFNN_MATMUL_TILED,
    .supports = ffnn_strategy_supports_all, /* it picks one that does */
};

/* tune's candidates, in the order of its note. tiled and naive are never faster
 * (docs/PERFORMANCE.md): not measured. */
static const ffnn_strategy candidates[] = {FFNN_STRATEGY_PERSISTENT, FFNN_STRATEGY_GRAPH,
                                           FFNN_STRATEGY_FUSED, FFNN_STRATEGY_CUBLAS,
                                           FFNN_STRATEGY_CUBLASLT};

const ffnn_strategy *ffnn_strategy_candidates(size_t *count)
{
    *count = sizeof candidates / sizeof candidates[0];
    return candidates;
}

/* tune: auto by measurement. The trainer (src/train/tune.c) times the candidates
 * and creates itself with the fastest; where it measures nothing (the cpu, data
 * parallelism, every candidate failed) tune is resolved as auto, by the rule above. */
const ffnn_strategy_impl ffnn_strategy_tune_impl = {
    .id = FFNN_STRATEGY_TUNE, .name = "tune", .precisions = FFNN_PRECISIONS_ALL,
    .matmul = FFNN_MATMUL_TILED,
    .supports = ffnn_strategy_supports_all, /* it picks one that does */
};
