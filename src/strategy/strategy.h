/* strategy.h - the ways of running training steps (ffnn_strategy), behind one
 * interface. Only the trainer calls a strategy; only the files of this folder
 * name one. Adding a strategy: one file defining a `const ffnn_strategy_impl`
 * and one line in table.c (tests/test_strategies.c checks the table covers
 * every ffnn_strategy value).
 *
 * The strategies (docs/PERFORMANCE.md has their measurements):
 *   per_op.c      naive, tiled, cublas: one backend op per launch (cublas: runs
 *                 of steps captured in CUDA graphs through graph.c's cache);
 *                 cublaslt: the fused ops on cuBLASLt epilogues, graphs as cublas
 *   fused.c       fused: bias + activation, act' and the SGD update in the matmuls
 *   graph.c       graph: the fused path, runs of steps captured and replayed
 *   persistent.c  persistent: one cooperative kernel runs many steps
 *   auto.c        auto: picks one of the above for the net and batch; also
 *                 tune's table entry (tune: auto by measurement, which needs
 *                 trainers: src/train/tune.c measures, auto's rule is its fallback)
 *   per_op.c      also reference: the plain ops on the cpu reference backend
 */
#ifndef FFNN_STRATEGY_H
#define FFNN_STRATEGY_H

#include "backend/backend.h"
#include "core/model.h"
#include "ffnn.h"
#include "strategy/step.h"

/* Number of ffnn_strategy values (0 .. FFNN_STRATEGY_COUNT - 1 each have a table
 * entry). */
#define FFNN_STRATEGY_COUNT ((int)FFNN_STRATEGY_TUNE + 1)

/* The bit of a precision in ffnn_strategy_impl.precisions. */
#define FFNN_PRECISION_BIT(p) (1u << (p))
/* Every precision: fp32, tf32, bf16 and tf32x3. */
#define FFNN_PRECISIONS_ALL                                                              \
    (FFNN_PRECISION_BIT(FFNN_PRECISION_FP32) | FFNN_PRECISION_BIT(FFNN_PRECISION_TF32) |    \
     FFNN_PRECISION_BIT(FFNN_PRECISION_BF16) | FFNN_PRECISION_BIT(FFNN_PRECISION_TF32X3))

typedef struct ffnn_strategy_impl {
    ffnn_strategy id;
    const char *name;             /* ffnn_strategy_name(id)                         */
    unsigned precisions;          /* FFNN_PRECISION_BIT of each precision it takes  */
    ffnn_matmul_variant matmul;   /* the kernels of the backend's plain matmul ops  */
    /* 1 when the strategy can train m with cfg on a backend of these caps; else 0
     * with the reason in ffnn_last_error(). Before any allocation. */
    int (*supports)(const ffnn_model *m, const ffnn_train_config *cfg, unsigned caps);
    /* With the backend context, buffers and data in r: the checks that need the
     * device (NULL: none); sets r->plan (fused, fused_sgd ...) and makes the
     * features of r->ext it runs; *state: the strategy's own (e.g. the graph
     * cache), freed by release (with those features). FFNN_ERR_UNSUPPORTED when the
     * device cannot run it. */
    ffnn_status (*prepare)(ffnn_run *r, void **state);
    void (*release)(ffnn_run *r, void *state);
    /* Steps per launch when cfg.steps_per_launch is 0 (steps_per_epoch given);
     * NULL: one step per launch, whatever cfg.steps_per_launch says. */
    size_t (*default_steps)(size_t steps_per_epoch);
    /* Queue steps [first, first + count) of the current epoch as optimizer steps
     * opt_t + 1 ... opt_t + count. Touches no counter of the trainer. */
    ffnn_status (*run_steps)(ffnn_run *r, void *state, size_t first, size_t count,
                             uint64_t opt_t);
} ffnn_strategy_impl;

/* The strategy of an id (every ffnn_strategy value has one), or NULL. */
const ffnn_strategy_impl *ffnn_strategy_get(ffnn_strategy id);

/* The strategy that trains m with cfg on a backend of these caps: cfg->strategy,
 * with auto resolved (auto.c); on a backend without FFNN_CAP_DEVICE, the cpu's
 * one way (tiled: the plain ops). FFNN_ERR_UNSUPPORTED with the reason when
 * an explicit choice cannot train it or does not take cfg->precision. */
ffnn_status ffnn_strategy_choose(const ffnn_model *m, const ffnn_train_config *cfg,
                                 unsigned caps, const ffnn_strategy_impl **out);

/* The registry's answers to the trainer, which names no strategy (table.c). */
/* 1 when id picks another strategy for the net and batch (auto, tune). */
int ffnn_strategy_picks(ffnn_strategy id);
/* 1 when id is chosen by timing trainers of ffnn_strategy_candidates (tune:
 * src/train/tune.c; in one process, elsewhere it picks by the rule). */
int ffnn_strategy_measured(ffnn_strategy id);
/* 1 when id trains on the single-threaded cpu reference backend (reference). */
int ffnn_strategy_on_reference(ffnn_strategy id);
/* The strategies a measured choice times, in the order of its note (auto.c);
 * *count of them. */
const ffnn_strategy *ffnn_strategy_candidates(size_t *count);
/* What to prepare instead of s when its prepare refused this device
 * (FFNN_ERR_UNSUPPORTED) and cfg asked a strategy that picks: persistent falls back
 * to the next best for the nets it takes, cublaslt (fp32 as tf32; the same
 * backend options). NULL: no fallback. */
const ffnn_strategy_impl *ffnn_strategy_device_fallback(const ffnn_strategy_impl *s,
                                                        const ffnn_train_config *cfg);
/* Data parallelism (more than one rank): *s as it is, or where it has no place for
 * the gradient all-reduce (persistent: whole runs of steps in one kernel) graph
 * when cfg asked a strategy that picks, else FFNN_ERR_UNSUPPORTED with the reason. */
ffnn_status ffnn_strategy_for_parallel(const ffnn_train_config *cfg,
                                       const ffnn_strategy_impl **s);

/* The auto rule alone (auto.c): the strategy auto picks for m and cfg on a GPU
 * (tune: auto's pick too, its fallback; src/train/tune.c measures). */
ffnn_strategy ffnn_strategy_resolve(const ffnn_model *m, const ffnn_train_config *cfg);

/* The strategies of the table (one file each). */
extern const ffnn_strategy_impl ffnn_strategy_naive_impl, ffnn_strategy_tiled_impl,
    ffnn_strategy_cublas_impl, ffnn_strategy_fused_impl, ffnn_strategy_graph_impl,
    ffnn_strategy_persistent_impl, ffnn_strategy_auto_impl, ffnn_strategy_cublaslt_impl,
    ffnn_strategy_reference_impl, ffnn_strategy_tune_impl;

/* Helpers shared by the strategy files. */
/* supports() of a strategy that trains every net and config (fused.c, as the
 * helpers below). */
int ffnn_strategy_supports_all(const ffnn_model *m, const ffnn_train_config *cfg, unsigned caps);
/* run_steps() of a strategy that queues ops step by step (ffnn_step_queue_run). */
ffnn_status ffnn_strategy_queue_steps(ffnn_run *r, void *state, size_t first, size_t count,
                                      uint64_t opt_t);
/* fused.c: turn the backend's fused ops on (r->plan.fused, r->plan.fused_sgd); graph.c too. */
ffnn_status ffnn_strategy_fused_prepare(ffnn_run *r, void **state);
/* 1 when every layer of m is dense (the fused ops cover it). */
int ffnn_strategy_all_dense(const ffnn_model *m);
/* 1 when every activation of m is one the fused and persistent kernels have
 * (identity, relu, sigmoid, tanh); the others (leaky_relu, elu, softplus, gelu,
 * gelu_tanh, silu, mish, hardswish) run the plain ops. */
int ffnn_strategy_fused_activations(const ffnn_model *m);
/* 1 when a layer of m has dropout (the fused ops then stay off: fused.c). */
int ffnn_strategy_has_dropout(const ffnn_model *m);
/* graph.c: steps [first, first + count) through a captured graph, cached and
 * replayed while the optimizer's per-step scalars stay those of the capture. */
ffnn_status ffnn_graph_run(ffnn_run *r, void *cache, size_t first, size_t count,
                           uint64_t opt_t);
/* The capture cache, with r's second set of batch buffers (r->ext.spare,
 * prefetch.h ffnn_prefetch_create); ffnn_graph_cache_free releases both. */
ffnn_status ffnn_graph_cache_create(ffnn_run *r, void **cache);
void ffnn_graph_cache_free(ffnn_run *r, void *cache);
/* The default steps per launch of a cached strategy: `preferred`, raised so that
 * an epoch of steps_per_epoch steps needs at most ffnn_graph_cache_slots()
 * launches (more would evict every graph before its reuse). */
size_t ffnn_graph_steps(size_t preferred, size_t steps_per_epoch);
size_t ffnn_graph_cache_slots(void);
/* The cache's graphs captured and replayed (cache hits) so far: a run whose
 * scalars stay the same captures each launch of an epoch once (tests). */
void ffnn_graph_cache_counts(const void *cache, uint64_t *captures, uint64_t *replays);
/* persistent.c: its network family (two dense layers, softmax_ce or mse, sgd,
 * fp32); the kernel's size limits are checked at prepare on the device. */
int ffnn_strategy_persistent_fits(const ffnn_model *m, const ffnn_train_config *cfg);

#endif
