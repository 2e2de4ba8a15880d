/* op_table.c - the op table's harness (op_table.h). */
#define _POSIX_C_SOURCE 200809L
#include "op_table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnn.h"
#include "strategy/strategy.h"

const ffnn_activation op_fused_acts[4] = {FFNN_ACT_IDENTITY, FFNN_ACT_RELU, FFNN_ACT_SIGMOID,
                                          FFNN_ACT_TANH};

void op_shape_text(char *buf, size_t size, dense_shape s)
{
    snprintf(buf, size, "%zux%zu->%zu", s.batch, s.in, s.out);
}

/* ------------------------------------------------------------------ targets */

void op_targets_free(targets *T)
{
    for (size_t i = 0; i < T->n; i++)
        T->t[i].ops->destroy(T->t[i].ctx);
    T->n = 0;
}

static void add_skip(targets *T, const char *fmt, const char *a, const char *b)
{
    if (T->nskips < 16)
        snprintf(T->skips[T->nskips++], sizeof T->skips[0], fmt, a, b);
}

const char *op_precision_name(ffnn_precision p)
{
    return p == FFNN_PRECISION_TF32     ? "tf32"
           : p == FFNN_PRECISION_TF32X3 ? "tf32x3"
           : p == FFNN_PRECISION_BF16   ? "bf16"
                                        : "fp32";
}

/* The omp targets: FFNN_OMP_ISA each kernel set (restored after), 1..3 threads. */
static void omp_targets(targets *T)
{
    static const char *isas[] = {"avx512", "avx2", "baseline"};
    const char *prev = getenv("FFNN_OMP_ISA");
    char saved[64];
    snprintf(saved, sizeof saved, "%s", prev ? prev : "");
    int have_elementwise = 0;
    for (size_t i = 0; i < 3; i++) {
        setenv("FFNN_OMP_ISA", isas[i], 1);
        for (int threads = 1; threads <= 3 && T->n < MAX_TARGETS; threads++) {
            target *t = &T->t[T->n];
            const ffnn_backend_options o = {threads, FFNN_MATMUL_TILED, FFNN_PRECISION_FP32, 0, 0};
            if (ffnn_omp_backend.create(&o, &t->ctx) != FFNN_OK) {
                add_skip(T, "omp %s: %s", isas[i], ffnn_last_error());
                break; /* this CPU cannot run the set */
            }
            t->ops = &ffnn_omp_backend;
            snprintf(t->variant, sizeof t->variant, "%s/%dt", isas[i], threads);
            t->precision = t->plain = FFNN_PRECISION_FP32;
            t->host = 1;
            t->elementwise = threads == 2 && !have_elementwise;
            have_elementwise |= t->elementwise;
            T->n++;
        }
    }
    if (prev)
        setenv("FFNN_OMP_ISA", saved, 1);
    else
        unsetenv("FFNN_OMP_ISA");
}

/* The cuda targets: each matmul variant x precision that a strategy runs (the
 * strategy table's matmul and precisions, strategy/strategy.h), where the
 * backend's capabilities have it. */
static void cuda_targets(targets *T)
{
    if (!ffnn_has_cuda() || ffnn_cuda_device_count() == 0) {
        add_skip(T, "cuda: %s%s", ffnn_has_cuda() ? "no CUDA GPU" : "build has no CUDA", "");
        return;
    }
    const ffnn_backend_ops *ops = ffnn_cuda_backend();
    static const char *variant_names[] = {"tiled", "naive", "cublas", "cublaslt"};
    static const ffnn_precision precs[] = {FFNN_PRECISION_FP32, FFNN_PRECISION_TF32,
                                           FFNN_PRECISION_TF32X3, FFNN_PRECISION_BF16};
    static const ffnn_matmul_variant variants[] = {FFNN_MATMUL_NAIVE, FFNN_MATMUL_TILED,
                                                   FFNN_MATMUL_LIBRARY, FFNN_MATMUL_LIBRARY_LT};
    for (size_t v = 0; v < 4; v++)
        for (size_t p = 0; p < 4 && T->n < MAX_TARGETS; p++) {
            int runs = 0; /* a strategy runs this pair */
            for (int id = 0; id < FFNN_STRATEGY_COUNT; id++) {
                if (id == FFNN_STRATEGY_AUTO || id == FFNN_STRATEGY_TUNE)
                    continue; /* pickers: they run another strategy */
                const ffnn_strategy_impl *si = ffnn_strategy_get((ffnn_strategy)id);
                runs |= si && si->matmul == variants[v] &&
                        (si->precisions & FFNN_PRECISION_BIT(precs[p]));
            }
            const int library = variants[v] >= FFNN_MATMUL_LIBRARY;
            if (!runs || (library && !(ops->caps & FFNN_CAP_LIBRARY_MATMUL)) ||
                (precs[p] == FFNN_PRECISION_BF16 && !(ops->caps & FFNN_CAP_BF16)) ||
                (precs[p] != FFNN_PRECISION_FP32 && precs[p] != FFNN_PRECISION_BF16 &&
                 !(ops->caps & FFNN_CAP_TF32)))
                continue;
            target *t = &T->t[T->n];
            const ffnn_backend_options o = {1, variants[v], precs[p], 0, 0};
            if (ops->create(&o, &t->ctx) != FFNN_OK) {
                char what[48];
                snprintf(what, sizeof what, "%s %s", variant_names[variants[v]],
                         op_precision_name(precs[p]));
                add_skip(T, "cuda %s: %s", what, ffnn_last_error());
                continue;
            }
            t->ops = ops;
            snprintf(t->variant, sizeof t->variant, "%s", variant_names[variants[v]]);
            t->precision = precs[p];
            t->plain = library ? precs[p] : FFNN_PRECISION_FP32;
            t->host = 0;
            t->elementwise = variants[v] == FFNN_MATMUL_TILED && precs[p] == FFNN_PRECISION_FP32;
            T->n++;
        }
}

void op_targets_make(targets *T)
{
    memset(T, 0, sizeof *T);
    omp_targets(T);
    cuda_targets(T);
    for (size_t i = 0; i < T->nskips; i++)
        printf("     skip %s\n", T->skips[i]);
}

/* ------------------------------------------------------------------ buffers */

void op_pool_free(pool *p)
{
    for (size_t i = 0; i < p->ndev; i++)
        p->t->ops->release(p->t->ctx, p->dev[i]);
    for (size_t i = 0; i < p->nhost; i++)
        free(p->host[i]);
    p->ndev = p->nhost = 0;
}

/* A host buffer of bytes (at least 1), owned by the pool. */
void *op_hbuf(pool *p, size_t bytes)
{
    void *h = p->nhost < POOL_MAX ? malloc(bytes ? bytes : 1) : NULL;
    if (h)
        p->host[p->nhost++] = h;
    else
        p->failed = 1;
    return h;
}
float *op_hf32(pool *p, size_t n) { return op_hbuf(p, n * sizeof(float)); }

/* A device buffer of bytes: a copy of src, or 0xFF bytes (NaN) when src is NULL. */
void *op_dbuf(pool *p, const void *src, size_t bytes)
{
    void *d = NULL;
    const target *t = p->t;
    if (p->ndev == POOL_MAX || t->ops->alloc(t->ctx, bytes ? bytes : 1, &d) != FFNN_OK) {
        p->failed = 1;
        return NULL;
    }
    p->dev[p->ndev++] = d;
    void *poison = src ? NULL : malloc(bytes ? bytes : 1);
    if (!src && poison)
        memset(poison, 0xFF, bytes);
    if ((!src && !poison) || t->ops->upload(t->ctx, d, src ? src : poison, bytes) != FFNN_OK)
        p->failed = 1;
    free(poison); /* upload is staged: the host copy may go */
    return d;
}

/* A new host copy of bytes of device buffer d (NULL on error). */
void *op_fetch(pool *p, const void *d, size_t bytes)
{
    void *h = op_hbuf(p, bytes);
    if (h && (!d || p->t->ops->download(p->t->ctx, h, d, bytes) != FFNN_OK)) {
        p->failed = 1;
        return NULL;
    }
    return h;
}
float *op_fetch_f32(pool *p, const void *d, size_t n) { return op_fetch(p, d, n * 4); }

/* ------------------------------------------------------------------ comparison */

/* The matmul bound of a precision over a summed length K (header). */
tol op_matmul_tol(ffnn_precision p, size_t K)
{
    const tol t = {matmul_atol(K), MATMUL_RTOL,
                   p == FFNN_PRECISION_TF32     ? 1.0 / 512.0
                   : p == FFNN_PRECISION_TF32X3 ? 1.0 / 1048576.0
                   : p == FFNN_PRECISION_BF16   ? 1.0 / 128.0
                                                : 0.0};
    return t;
}

void op_result_init(result *r) { *r = RESULT_INIT; }

/* Compare n floats (S may be NULL: 0) into r; prints the first fault. */
void op_compare(result *r, const char *what, const float *got, const float *want, const float *S,
                size_t n, tol t)
{
    if (!got) {
        fprintf(stderr, "    %s: not fetched (%s)\n", what, ffnn_last_error());
        r->ok = 0;
        return;
    }
    const int bits = t.atol == 0 && t.rtol == 0 && t.srel == 0;
    size_t bad = 0, first = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        const double w = want[i], d = fabs((double)got[i] - w);
        const double bound = t.atol + t.rtol * fabs(w) + (S ? t.srel * S[i] : 0.0);
        const int fault = bits ? memcmp(&got[i], &want[i], 4) != 0 : !(d <= bound);
        if (d > r->max_abs || d != d)
            r->max_abs = d;
        if (w != 0 && d / fabs(w) > r->max_rel)
            r->max_rel = d / fabs(w);
        const double frac = bits ? (fault ? INFINITY : 0) : bound > 0 ? d / bound : 0;
        if (frac > worst || frac != frac)
            worst = frac;
        if (fault && bad++ == 0)
            first = i;
    }
    if (!r->compared++ || worst > r->worst || worst != worst) {
        r->worst = worst;
        r->shown = t;
    }
    if (bad) {
        fprintf(stderr, "    %s: %zu of %zu values off; first at [%zu]: got %.9g want %.9g\n", what,
                bad, n, first, (double)got[first], (double)want[first]);
        r->ok = 0;
    }
}

void op_compare_u8(result *r, const char *what, const uint8_t *got, const uint8_t *want, size_t n)
{
    if (!got || !same_bits(what, got, want, n))
        r->ok = 0;
}

void op_group_begin(group *g, const char *op, uint64_t seed)
{
    memset(g, 0, sizeof *g);
    op_targets_make(&g->T);
    g->skipped = g->T.nskips;
    g->op = op;
    const char *env = getenv("FFNN_TEST_SEED");
    g->seed = seed ^ (env ? strtoull(env, NULL, 0) * 0x9E3779B97F4A7C15ULL : 0);
    g->r.state = g->seed ? g->seed : 1;
    printf("     %s: seed 0x%016llx\n", op, (unsigned long long)g->seed);
}

void op_entry_line(group *g, const char *op, const target *t, ffnn_precision prec,
                   const char *shape, double flops, const result *r)
{
    g->entries++;
    g->failed += !r->ok;
    char tl[64];
    if (r->shown.atol == 0 && r->shown.rtol == 0 && r->shown.srel == 0)
        snprintf(tl, sizeof tl, "bits");
    else
        snprintf(tl, sizeof tl, "%.1e+%.0e|w|%s%.1e S", r->shown.atol, r->shown.rtol,
                 r->shown.srel > 0 ? "+" : "", r->shown.srel);
    if (r->shown.srel == 0 && !(r->shown.atol == 0 && r->shown.rtol == 0))
        snprintf(tl, sizeof tl, "%.1e+%.0e|w|", r->shown.atol, r->shown.rtol);
    printf("     %-4s %-20s %-4s %-11s %-6s %-22s %8.2e flop  abs %8.2e rel %8.2e  "
           "%5.2f of tol %s\n",
           r->ok ? "ok" : "FAIL", op, t->ops->name, t->variant, op_precision_name(prec), shape,
           flops, r->max_abs, r->max_rel, r->worst, tl);
}

/* 1 when a host buffer of hp could not be had: counted as a failure of g, hp freed. */
int op_host_failed(group *g, pool *hp)
{
    if (!hp->failed)
        return 0;
    fprintf(stderr, "    %s: host buffers: out of memory\n", g->op);
    g->failed++;
    op_pool_free(hp);
    return 1;
}

test_result op_group_end(group *g, char *why, size_t why_size)
{
    op_targets_free(&g->T);
    printf("     %s: %zu entries compared, %zu failed, %zu skipped\n", g->op, g->entries, g->failed,
           g->skipped);
    if (g->failed)
        return TEST_FAIL;
    if (g->entries == 0)
        SKIP("%s: no backend here has it", g->op);
    return TEST_PASS;
}

/* One "skip" line per backend of g's targets none of whose targets `runs`. */
void op_say_missing(group *g, int (*runs)(const target *t))
{
    for (size_t i = 0; i < g->T.n; i++) {
        const ffnn_backend_ops *ops = g->T.t[i].ops;
        int first = 1, any = 0; /* the backend's first target; one of them runs it */
        for (size_t k = 0; k < g->T.n; k++)
            if (g->T.t[k].ops == ops) {
                first &= k >= i;
                any |= runs(&g->T.t[k]);
            }
        if (first && !any) {
            g->skipped++;
            printf("     skip %s on %s: the backend has no %s (or no target runs it)\n", g->op,
                   ops->name, g->op);
        }
    }
}

/* The call's status into r (a failed call fails the entry, with its message). */
int op_call_ok(result *r, const char *what, ffnn_status st)
{
    if (st == FFNN_OK)
        return 1;
    fprintf(stderr, "    %s: status %d: %s\n", what, (int)st, ffnn_last_error());
    r->ok = 0;
    return 0;
}

/* A pool's failure (an allocation or copy) into r. */
void op_pool_check(result *r, const pool *p)
{
    if (p->failed) {
        fprintf(stderr, "    buffers: %s\n", ffnn_last_error());
        r->ok = 0;
    }
}

int op_any_low_precision(const targets *T)
{
    for (size_t i = 0; i < T->n; i++)
        if (T->t[i].precision != FFNN_PRECISION_FP32)
            return 1;
    return 0;
}
