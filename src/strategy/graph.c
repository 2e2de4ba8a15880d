/* graph.c - the graph strategy: the fused path with runs of steps captured in one
 * CUDA graph (through the backend's capture ops) and replayed: nothing per step
 * on the host. Also the capture cache the cublas strategy uses (per_op.c).
 *
 * A captured run of steps [first, first + count) of an epoch is valid for any
 * epoch while the optimizer's per-step scalars stay those of the capture (sgd:
 * always; momentum: after its first step; adam(w): its two scalars that change
 * with t, step_size and bias_correction2_sqrt, are read from a device table that
 * is filled for the launch's steps before every launch (adam_table), the rest
 * must stay; a learning-rate schedule: while the rate stays, e.g. within an
 * epoch - a launch whose first two steps differ, as in a warm-up, is captured
 * and run once). One
 * graph of a whole epoch (~8,000 nodes at batch 64) replays slower than 16-step
 * graphs (docs/PERFORMANCE.md): 16 steps per launch by default, more when an
 * epoch would need more launches than the cache holds (ffnn_graph_steps). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "strategy/prefetch.h"
#include "strategy/strategy.h"

#define GRAPH_CACHE 128
#define GRAPH_DEFAULT_STEPS 16

typedef struct step_graph {
    void *exec;                 /* backend graph, or NULL                        */
    size_t first, count;
    ffnn_optimizer_step update; /* the scalars it was captured with              */
    uint64_t used;              /* last use (for eviction)                       */
} step_graph;

typedef struct graph_cache {
    step_graph graphs[GRAPH_CACHE];
    uint64_t tick;              /* graph uses so far (the eviction order)        */
    uint64_t captures, replays; /* graphs captured; cached graphs launched again  */
    float *adam_table;          /* device [2 adam_steps]: the launch's steps'
                                   {step_size, bias_correction2_sqrt}; made at the
                                   first adam(w) launch, shared by every graph
                                   (stream order: filled before each launch)     */
    float *adam_host;           /* host [2 adam_steps]: the table staged before
                                   its upload (made with it, reused per launch)  */
    size_t adam_steps;          /* their capacity in steps                       */
    ffnn_capture_scalars scalars; /* r->ext.scalars while a capture reads the table */
} graph_cache;

ffnn_status ffnn_graph_cache_create(ffnn_run *r, void **cache)
{
    *cache = calloc(1, sizeof(graph_cache));
    if (!*cache)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the graph cache");
    /* the runs gather the next step's batch during the step (step.h r->ext.spare) */
    const ffnn_status st = ffnn_prefetch_create(r);
    if (st != FFNN_OK) {
        free(*cache);
        *cache = NULL;
    }
    return st;
}

void ffnn_graph_cache_free(ffnn_run *r, void *cache)
{
    graph_cache *c = cache;
    ffnn_prefetch_free(r);
    if (!c)
        return;
    for (int i = 0; i < GRAPH_CACHE; i++)
        if (c->graphs[i].exec)
            r->ops->graph->graph_free(r->ctx, c->graphs[i].exec);
    if (c->adam_table)
        r->ops->release(r->ctx, c->adam_table);
    free(c->adam_host);
    free(c);
}

static int is_adam(const ffnn_optimizer_step *s)
{
    return s->kind == FFNN_OPT_ADAM || s->kind == FFNN_OPT_ADAMW;
}

/* s without what the adam table carries (a graph reads those from the table). */
static ffnn_optimizer_step replay_key(ffnn_optimizer_step s)
{
    if (is_adam(&s))
        s.step_size = s.bias_correction2_sqrt = 0.0f;
    return s;
}

/* 1 when a graph captured at step a may replay step b: the same scalars, but for
 * adam(w)'s two in the table. */
static int same_update(const ffnn_optimizer_step *a, const ffnn_optimizer_step *b)
{
    const ffnn_optimizer_step ka = replay_key(*a), kb = replay_key(*b);
    return memcmp(&ka, &kb, sizeof ka) == 0;
}

/* adam(w): the table made (on the first call, for `count` steps; 0 when a later
 * launch is longer: that launch is not cached) and filled with the scalars of
 * optimizer steps opt_t + 1 ... opt_t + count, queued before the launch. *ok 0:
 * no table for this launch. */
static ffnn_status adam_table_fill(ffnn_run *r, graph_cache *c, size_t count, uint64_t opt_t,
                                   int *ok)
{
    *ok = 0;
    if (!c->adam_table) {
        float *host = malloc(2 * count * sizeof *host);
        if (!host)
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the adam table");
        void *p = NULL;
        ffnn_status st = r->ops->alloc(r->ctx, 2 * count * sizeof(float), &p);
        if (st != FFNN_OK) {
            free(host);
            return st;
        }
        c->adam_table = p;
        c->adam_host = host;
        c->adam_steps = count;
    }
    if (count > c->adam_steps)
        return FFNN_OK;
    float *host = c->adam_host;
    for (size_t k = 0; k < count; k++) {
        const ffnn_optimizer_step s = ffnn_run_update_at(r, opt_t + 1 + k);
        host[2 * k] = s.step_size;
        host[2 * k + 1] = s.bias_correction2_sqrt;
    }
    /* stream-ordered after the previous launch; host is staged before it returns */
    ffnn_status st = r->ops->upload(r->ctx, c->adam_table, host, 2 * count * sizeof *host);
    *ok = st == FFNN_OK;
    return st;
}

ffnn_status ffnn_graph_run(ffnn_run *r, void *cache, size_t first, size_t count,
                           uint64_t opt_t)
{
    graph_cache *c = cache;
    const ffnn_optimizer_step u0 = ffnn_run_update_at(r, opt_t + 1);
    const ffnn_optimizer_step u1 = ffnn_run_update_at(r, opt_t + 2);
    /* replayable (cached) when every step has the same scalars: sgd always,
     * momentum after its first step, adam(w) but for the two in its table; never
     * with dropout (each step's
     * masks are keyed by its optimizer step, an argument of the captured kernels) */
    int stable = same_update(&u0, &u1) && !ffnn_strategy_has_dropout(r->model);
    step_graph *slot = NULL;
    ffnn_status st;
    if (stable && is_adam(&u0)) { /* the launch's scalars into the table, first */
        int table = 0;
        if ((st = adam_table_fill(r, c, count, opt_t, &table)) != FFNN_OK)
            return st;
        stable = table;
    }
    for (int i = 0; i < GRAPH_CACHE; i++) {
        step_graph *g = &c->graphs[i];
        if (g->exec && g->first == first && g->count == count && stable &&
            same_update(&g->update, &u0)) {
            g->used = ++c->tick;
            c->replays++;
            return r->ops->graph->graph_launch(r->ctx, g->exec);
        }
        if (!slot || !g->exec || (slot->exec && g->used < slot->used))
            slot = g;
    }
    if (slot->exec) {
        r->ops->graph->graph_free(r->ctx, slot->exec);
        slot->exec = NULL;
    }
    if ((st = r->ops->graph->capture_begin(r->ctx)) != FFNN_OK)
        return st;
    if (stable && is_adam(&u0)) { /* the captured updates read the table */
        c->scalars.adam = c->adam_table;
        c->scalars.t0 = opt_t + 1;
        r->ext.scalars = &c->scalars;
    }
    const ffnn_status qs = ffnn_step_queue_run(r, first, count, opt_t);
    r->ext.scalars = NULL;
    void *exec = NULL;
    st = r->ops->graph->capture_end(r->ctx, &exec); /* ends the capture even after an error */
    if (qs != FFNN_OK) {
        if (exec)
            r->ops->graph->graph_free(r->ctx, exec);
        return qs;
    }
    if (st != FFNN_OK)
        return st;
    c->captures++;
    slot->exec = exec;
    slot->first = first;
    slot->count = count;
    slot->update = u0; /* compared through same_update (adam: without the table's) */
    slot->used = ++c->tick;
    if (!stable) { /* dropout, changing scalars: use once */
        st = r->ops->graph->graph_launch(r->ctx, exec);
        r->ops->graph->graph_free(r->ctx, exec);
        slot->exec = NULL;
        return st;
    }
    return r->ops->graph->graph_launch(r->ctx, exec);
}

/* Steps per launch for a cached strategy: `preferred`, raised to
 * ceil(steps_per_epoch / GRAPH_CACHE) so that one epoch's launches all fit the
 * cache. With more distinct launches than slots, the least-recently-used
 * eviction would evict every graph just before its next use (a cyclic access
 * pattern), and every launch of every epoch would be captured anew. */
size_t ffnn_graph_steps(size_t preferred, size_t steps_per_epoch)
{
    const size_t fit = (steps_per_epoch + GRAPH_CACHE - 1) / GRAPH_CACHE;
    return fit > preferred ? fit : preferred;
}

void ffnn_graph_cache_counts(const void *cache, uint64_t *captures, uint64_t *replays)
{
    const graph_cache *c = cache;
    *captures = c ? c->captures : 0;
    *replays = c ? c->replays : 0;
}

size_t ffnn_graph_cache_slots(void)
{
    return GRAPH_CACHE;
}

static int graph_supports(const ffnn_model *m, const ffnn_train_config *cfg, unsigned caps)
{
    (void)m, (void)cfg;
    if (!(caps & FFNN_CAP_DEVICE)) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED, "strategy graph captures CUDA graphs: it needs a GPU");
        return 0;
    }
    return 1;
}

static ffnn_status graph_prepare(ffnn_run *r, void **state)
{
    void *unused;
    ffnn_status st = ffnn_strategy_fused_prepare(r, &unused);
    return st != FFNN_OK ? st : ffnn_graph_cache_create(r, state);
}

static size_t graph_steps(size_t steps_per_epoch)
{
    return ffnn_graph_steps(GRAPH_DEFAULT_STEPS, steps_per_epoch);
}

const ffnn_strategy_impl ffnn_strategy_graph_impl = {
    .id = FFNN_STRATEGY_GRAPH, .name = "graph",
    .precisions = FFNN_PRECISION_BIT(FFNN_PRECISION_FP32) | FFNN_PRECISION_BIT(FFNN_PRECISION_TF32) | FFNN_PRECISION_BIT(FFNN_PRECISION_BF16),
    .matmul = FFNN_MATMUL_TILED, .supports = graph_supports, .prepare = graph_prepare,
    .release = ffnn_graph_cache_free, .default_steps = graph_steps, .run_steps = ffnn_graph_run,
};
