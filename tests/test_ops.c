/*
 * test_ops.c - suite "ops": one table of op x backend x variant x precision, every
 * entry against the cpu reference backend (ffnn_cpu_backend) on fresh random inputs,
 * through the ffnn_backend_ops table only (alloc, upload, the op, download), in the
 * manner of ggml's test-backend-ops.
 *
 *   ops        (op_table below) dense forward/backward, fused dense+activation,
 *              local1d forward/backward, every activation forward/backward, every
 *              loss, every optimizer, clip, dropout, ema, gather, the packed dense
 *              forward, the bf16 conversions and ops, with their shapes (odd and
 *              tall-skinny ones: 1, 3, 17, 33, 257 ..., batch 1 and batch >> width)
 *   targets    (targets_make) omp: each kernel set FFNN_OMP_ISA this CPU runs
 *              (avx512, avx2, baseline) x 1, 2, 3 threads; cuda: each matmul
 *              variant (naive, tiled, cublas, cublaslt: backend.h
 *              ffnn_matmul_variant) x precision (fp32, tf32, tf32x3, bf16) that a
 *              strategy runs (the strategy table's matmul and precisions) and the
 *              backend's capabilities allow. The matmul ops run on every target (the
 *              plain dense ops of the own kernels, fp32 in every precision, once per
 *              variant; local1d on the own kernels), the others (one kind of kernel
 *              per backend) on one target per backend (omp 2 threads, cuda tiled),
 *              the bf16 ops on cublaslt bf16.
 *   lines      one per entry compared: op, backend, variant, precision, shape, FLOPs,
 *              the largest absolute and relative error, the worst error as a
 *              fraction of its bound, and the tolerance; a target or op a machine
 *              lacks (no GPU, an ISA the CPU cannot run, an optional op a backend
 *              has not) is one "skip" line per group naming why.
 *   seeds      each group's generator seed is printed; FFNN_TEST_SEED=N mixes N in.
 *
 * Every output buffer is filled with 0xFF bytes (NaN) before the op runs, so an
 * element the op forgets to write fails.
 *
 * Tolerances, per output value: |got - want| <= atol + rtol |want| + srel S, with
 * S = the same op on |inputs| (sum of |terms|, computed by the reference):
 *   fp32 matmul   atol = 1e-5 (1 + sqrt K), rtol = 1e-4 (K the summed length: in
 *                 for z, batch for dW and db, out for dx, R for local1d): both sides
 *                 sum fp32 products in fp32 in another order or with one fma per
 *                 term; the difference grows like eps sqrt K (measured at 64 x 784
 *                 x 256: 1.1e-5 on sums of ~7, the bound there 2.9e-4).
 *   tf32          the fp32 bound + 2^-9 S: TF32 keeps 10 mantissa bits, an input is
 *                 off by at most 2^-10 of itself (rounded or truncated), a product by
 *                 2^-9 (+2^-20).
 *   tf32x3        the fp32 bound + 2^-20 S: each input split into two TF32 parts to
 *                 within 2^-22, the small x small product dropped (cuda/cublas.cu).
 *   bf16          the fp32 bound + 2^-7 S: 8 significant bits, 2^-8 per input,
 *                 2^-7 (+2^-16) per product; the bf16 ops take bf16 inputs (the
 *                 reference runs on the same values, products exact): fp32 bound,
 *                 + 2^-8 |want| for an output rounded to bf16 (half an ulp, twice).
 *   element-wise  (activations, losses, gather, optimizers, dropout, ema) on the host
 *                 backends: the same bits (one formula, cpu/cpu_math.h, the same libm
 *                 calls, db and the norm summed in the reference's order); on cuda
 *                 activations 1e-6 + 1e-5 |want| (CUDA's expf, erff, tanhf, log1pf
 *                 may differ from glibc's by an ulp or two), row_loss 1e-5 + 1e-5,
 *                 dout 1e-6 + 1e-5, row_correct exactly, optimizer parameters
 *                 1e-7 + 1e-6 and state 1e-12 + 1e-6 (the same operations in the
 *                 same order: an ulp of slack), dropout the same bits (one integer
 *                 mask), ema 1e-12 + 1e-6, uint8 features 1e-6 relative (x / 255).
 *   clip          1e-6 relative on the norm and the clipped values on every backend
 *                 (the double sum runs in chunks), + 1e-12 on cuda.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "check.h"
#include "core/activation.h"
#include "core/dropout.h"
#include "ffnn.h"
#include "strategy/strategy.h"
#include "test_numeric.h"

/* ------------------------------------------------------------------ targets */

enum { MAX_TARGETS = 32 };

typedef struct target {
    const ffnn_backend_ops *ops;
    void *ctx;
    char variant[24]; /* "avx2/3t", "tiled", "cublaslt", ...                */
    ffnn_precision precision; /* the context's options.precision                   */
    ffnn_precision plain; /* what dense_forward/backward run in: the library's
                                 precision, fp32 for the own kernels (backend.h)    */
    int host; /* host memory: element-wise ops give the reference's bits */
    int elementwise; /* the one target per backend for the non-matmul ops */
} target;

typedef struct targets {
    target t[MAX_TARGETS];
    size_t n;
    char skips[16][160]; /* why a backend or variant is not here */
    size_t nskips;
} targets;

static void targets_free(targets *T)
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

static const char *precision_name(ffnn_precision p)
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
                         precision_name(precs[p]));
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

static void targets_make(targets *T)
{
    memset(T, 0, sizeof *T);
    omp_targets(T);
    cuda_targets(T);
    for (size_t i = 0; i < T->nskips; i++)
        printf("     skip %s\n", T->skips[i]);
}

/* ------------------------------------------------------------------ buffers */

/* The buffers of one entry on one target (device) and on the host; pool_free
 * releases them whatever the outcome. */
enum { POOL_MAX = 48 };
typedef struct pool {
    const target *t;
    void *dev[POOL_MAX];
    size_t ndev;
    void *host[POOL_MAX];
    size_t nhost;
    int failed; /* an allocation or copy failed (the message: ffnn_last_error) */
} pool;

static void pool_free(pool *p)
{
    for (size_t i = 0; i < p->ndev; i++)
        p->t->ops->release(p->t->ctx, p->dev[i]);
    for (size_t i = 0; i < p->nhost; i++)
        free(p->host[i]);
    p->ndev = p->nhost = 0;
}

/* A host buffer of bytes (at least 1), owned by the pool. */
static void *hbuf(pool *p, size_t bytes)
{
    void *h = p->nhost < POOL_MAX ? malloc(bytes ? bytes : 1) : NULL;
    if (h)
        p->host[p->nhost++] = h;
    else
        p->failed = 1;
    return h;
}
static float *hf32(pool *p, size_t n) { return hbuf(p, n * sizeof(float)); }

/* A device buffer of bytes: a copy of src, or 0xFF bytes (NaN) when src is NULL. */
static void *dbuf(pool *p, const void *src, size_t bytes)
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
static void *fetch(pool *p, const void *d, size_t bytes)
{
    void *h = hbuf(p, bytes);
    if (h && (!d || p->t->ops->download(p->t->ctx, h, d, bytes) != FFNN_OK)) {
        p->failed = 1;
        return NULL;
    }
    return h;
}
static float *fetch_f32(pool *p, const void *d, size_t n) { return fetch(p, d, n * 4); }

/* ------------------------------------------------------------------ comparison */

/* |got - want| <= atol + rtol |want| + srel S; all 0: the same bits. */
typedef struct tol {
    double atol, rtol, srel;
} tol;

static const tol BITS = {0, 0, 0};

/* The matmul bound of a precision over a summed length K (header). */
static tol matmul_tol(ffnn_precision p, size_t K)
{
    const tol t = {matmul_atol(K), MATMUL_RTOL,
                   p == FFNN_PRECISION_TF32     ? 1.0 / 512.0
                   : p == FFNN_PRECISION_TF32X3 ? 1.0 / 1048576.0
                   : p == FFNN_PRECISION_BF16   ? 1.0 / 128.0
                                                : 0.0};
    return t;
}

/* What one entry compared: the worst over all its outputs. */
typedef struct result {
    double max_abs, max_rel, worst; /* worst: max |diff| / bound (bits: 0 or inf) */
    tol shown; /* the tolerance of the worst output            */
    int compared; /* outputs compared so far                      */
    int ok;
} result;

#define RESULT_INIT ((result){.ok = 1})

static void result_init(result *r) { *r = RESULT_INIT; }

/* Compare n floats (S may be NULL: 0) into r; prints the first fault. */
static void compare(result *r, const char *what, const float *got, const float *want,
                    const float *S, size_t n, tol t)
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

static void compare_u8(result *r, const char *what, const uint8_t *got, const uint8_t *want,
                       size_t n)
{
    if (!got || !same_bits(what, got, want, n))
        r->ok = 0;
}

/* One group (a test): counts, and its line per entry. */
typedef struct group {
    targets T; /* the targets, made by group_begin, freed by group_end */
    const char *op;
    size_t entries, failed, skipped;
    uint64_t seed;
    rng r;
} group;

static void group_begin(group *g, const char *op, uint64_t seed)
{
    memset(g, 0, sizeof *g);
    targets_make(&g->T);
    g->skipped = g->T.nskips;
    g->op = op;
    const char *env = getenv("FFNN_TEST_SEED");
    g->seed = seed ^ (env ? strtoull(env, NULL, 0) * 0x9E3779B97F4A7C15ULL : 0);
    g->r.state = g->seed ? g->seed : 1;
    printf("     %s: seed 0x%016llx\n", op, (unsigned long long)g->seed);
}

static void entry_line(group *g, const char *op, const target *t, ffnn_precision prec,
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
           r->ok ? "ok" : "FAIL", op, t->ops->name, t->variant, precision_name(prec), shape, flops,
           r->max_abs, r->max_rel, r->worst, tl);
}

/* 1 when a host buffer of hp could not be had: counted as a failure of g, hp freed. */
static int host_failed(group *g, pool *hp)
{
    if (!hp->failed)
        return 0;
    fprintf(stderr, "    %s: host buffers: out of memory\n", g->op);
    g->failed++;
    pool_free(hp);
    return 1;
}

static test_result group_end(group *g, char *why, size_t why_size)
{
    targets_free(&g->T);
    printf("     %s: %zu entries compared, %zu failed, %zu skipped\n", g->op, g->entries, g->failed,
           g->skipped);
    if (g->failed)
        return TEST_FAIL;
    if (g->entries == 0)
        SKIP("%s: no backend here has it", g->op);
    return TEST_PASS;
}

/* One "skip" line per group and backend for an optional op the backend lacks. */
static void say_missing(const targets *T, group *g, const char *name, size_t offset)
{
    const char *seen[4] = {NULL};
    size_t ns = 0;
    for (size_t i = 0; i < T->n; i++) {
        const void *fn = *(const void *const *)((const char *)T->t[i].ops + offset);
        int known = 0;
        for (size_t k = 0; k < ns; k++)
            known |= seen[k] == T->t[i].ops->name;
        if (fn || known || ns == 4)
            continue;
        seen[ns++] = T->t[i].ops->name;
        g->skipped++;
        printf("     skip %s on %s: the backend has no %s\n", g->op, T->t[i].ops->name, name);
    }
}

/* Each target t of group g for which `filter` (an expression of t) holds. */
#define FOR_TARGETS(g, t, filter)                                                                  \
    for (const target *t = (g)->T.t; t < (g)->T.t + (g)->T.n; t++)                                 \
        if (filter)

/* Whether target t's backend has the optional op `field`. */
#define HAS(t, field) ((t)->ops->field != NULL)
#define SAY_MISSING(T, g, field) say_missing(T, g, #field, offsetof(ffnn_backend_ops, field))

/* The call's status into r (a failed call fails the entry, with its message). */
static int call_ok(result *r, const char *what, ffnn_status st)
{
    if (st == FFNN_OK)
        return 1;
    fprintf(stderr, "    %s: status %d: %s\n", what, (int)st, ffnn_last_error());
    r->ok = 0;
    return 0;
}

/* A pool's failure (an allocation or copy) into r. */
static void pool_check(result *r, const pool *p)
{
    if (p->failed) {
        fprintf(stderr, "    buffers: %s\n", ffnn_last_error());
        r->ok = 0;
    }
}

static int any_low_precision(const targets *T)
{
    for (size_t i = 0; i < T->n; i++)
        if (T->t[i].precision != FFNN_PRECISION_FP32)
            return 1;
    return 0;
}

/* ------------------------------------------------------------------ dense */

static void shape_text(char *buf, size_t size, dense_shape s)
{
    snprintf(buf, size, "%zux%zu->%zu", s.batch, s.in, s.out);
}

/* The inputs of one dense shape in [-1, 1] and the reference's outputs, with the
 * sums of |terms| S where a target runs a low precision. */
typedef struct dense_case {
    dense_shape s;
    float *x, *W, *b, *dz; /* [batch, in], [out, in], [out], [batch, out] */
    float *z, *zb, *Sz; /* x W^T, + b, |x| |W|^T + |b|  [batch, out]   */
    float *dx, *dW, *db, *Sdx, *SdW; /* the backward, and its S                     */
} dense_case;

static void dense_make(pool *hp, rng *r, dense_case *c, int with_S, int backward)
{
    const dense_shape s = c->s;
    const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
    c->x = hf32(hp, nx), c->W = hf32(hp, nw), c->b = hf32(hp, s.out), c->dz = hf32(hp, nz);
    c->z = hf32(hp, nz), c->zb = hf32(hp, nz);
    c->dx = hf32(hp, nx), c->dW = hf32(hp, nw), c->db = hf32(hp, s.out);
    c->Sz = with_S ? hf32(hp, nz) : NULL;
    c->Sdx = with_S ? hf32(hp, nx) : NULL, c->SdW = with_S ? hf32(hp, nw) : NULL;
    if (hp->failed)
        return;
    fill_uniform(r, c->x, nx, -1.0f, 1.0f);
    fill_uniform(r, c->W, nw, -1.0f, 1.0f);
    fill_uniform(r, c->b, s.out, -1.0f, 1.0f);
    fill_uniform(r, c->dz, nz, -1.0f, 1.0f);
    const ffnn_backend_ops *cpu = &ffnn_cpu_backend;
    cpu->dense_forward(NULL, c->x, c->W, NULL, c->z, s.batch, s.in, s.out);
    cpu->dense_forward(NULL, c->x, c->W, c->b, c->zb, s.batch, s.in, s.out);
    if (backward)
        cpu->dense_backward(NULL, c->x, c->W, c->dz, c->dx, c->dW, c->db, s.batch, s.in, s.out);
    if (with_S) {
        float *ax = hf32(hp, nx), *aW = hf32(hp, nw), *ab = hf32(hp, s.out), *adz = hf32(hp, nz);
        float *junk = hf32(hp, s.out);
        if (hp->failed)
            return;
        abs_copy(ax, c->x, nx), abs_copy(aW, c->W, nw), abs_copy(ab, c->b, s.out);
        abs_copy(adz, c->dz, nz);
        cpu->dense_forward(NULL, ax, aW, ab, c->Sz, s.batch, s.in, s.out);
        if (backward)
            cpu->dense_backward(NULL, ax, aW, adz, c->Sdx, c->SdW, junk, s.batch, s.in, s.out);
    }
}

/* The inputs of a dense case on a target, and the entry's buffers (host and device). */
typedef struct dense_dev {
    const void *x, *W, *b, *dz;
    size_t nx, nw, nz;
} dense_dev;

typedef void (*dense_body)(const target *t, const dense_case *c, const dense_dev *d, pool *p,
                           result *r);

/* One entry: c's inputs uploaded to t, body's comparisons, one line (flops: per
 * multiply-add of batch x in x out). */
static void dense_entry(group *g, const target *t, const dense_case *c, const char *op,
                        ffnn_precision prec, double flops, dense_body body)
{
    const dense_shape s = c->s;
    pool p = {.t = t};
    result r;
    result_init(&r);
    dense_dev d = {.nx = s.batch * s.in, .nw = s.out * s.in, .nz = s.batch * s.out};
    d.x = dbuf(&p, c->x, d.nx * 4), d.W = dbuf(&p, c->W, d.nw * 4);
    d.b = dbuf(&p, c->b, s.out * 4), d.dz = dbuf(&p, c->dz, d.nz * 4);
    pool_check(&r, &p);
    if (r.ok)
        body(t, c, &d, &p, &r);
    pool_free(&p);
    char sh[40];
    shape_text(sh, sizeof sh, s);
    entry_line(g, op, t, prec, sh, flops * d.nz * s.in, &r);
}

/* identity, relu, sigmoid, tanh: the activations of the fused ops (each
 * 1-Lipschitz: the matmul bound holds after it) */
static const ffnn_activation fused_acts[] = {FFNN_ACT_IDENTITY, FFNN_ACT_RELU, FFNN_ACT_SIGMOID,
                                             FFNN_ACT_TANH};

/* z = x W^T (+ b): with and without bias. */
static void dense_forward_body(const target *t, const dense_case *c, const dense_dev *d, pool *p,
                               result *r)
{
    const dense_shape s = c->s;
    void *z0 = dbuf(p, NULL, d->nz * 4), *z1 = dbuf(p, NULL, d->nz * 4);
    pool_check(r, p);
    const tol tl = matmul_tol(t->plain, s.in);
    if (r->ok &&
        call_ok(r, "dense_forward",
                t->ops->dense_forward(t->ctx, d->x, d->W, NULL, z0, s.batch, s.in, s.out)) &&
        call_ok(r, "dense_forward (bias)",
                t->ops->dense_forward(t->ctx, d->x, d->W, d->b, z1, s.batch, s.in, s.out))) {
        compare(r, "z", fetch_f32(p, z0, d->nz), c->z, c->Sz, d->nz, tl);
        compare(r, "z (bias)", fetch_f32(p, z1, d->nz), c->zb, c->Sz, d->nz, tl);
    }
}

/* dW, db, dx; then dW alone (dx and db NULL: a first layer without bias). */
static void dense_backward_body(const target *t, const dense_case *c, const dense_dev *d, pool *p,
                                result *r)
{
    const dense_shape s = c->s;
    void *dx = dbuf(p, NULL, d->nx * 4), *dW = dbuf(p, NULL, d->nw * 4);
    void *db = dbuf(p, NULL, s.out * 4), *dW2 = dbuf(p, NULL, d->nw * 4);
    pool_check(r, p);
    if (r->ok &&
        call_ok(
            r, "dense_backward",
            t->ops->dense_backward(t->ctx, d->x, d->W, d->dz, dx, dW, db, s.batch, s.in, s.out)) &&
        call_ok(r, "dense_backward (dx, db NULL)",
                t->ops->dense_backward(t->ctx, d->x, d->W, d->dz, NULL, dW2, NULL, s.batch, s.in,
                                       s.out))) {
        const tol tw = matmul_tol(t->plain, s.batch);
        compare(r, "dW", fetch_f32(p, dW, d->nw), c->dW, c->SdW, d->nw, tw);
        /* db: the backends' own bias-gradient sum in every precision; the host
         * backends sum in the reference's order */
        compare(r, "db", fetch_f32(p, db, s.out), c->db, NULL, s.out,
                t->host ? BITS : matmul_tol(FFNN_PRECISION_FP32, s.batch));
        compare(r, "dx", fetch_f32(p, dx, d->nx), c->dx, c->Sdx, d->nx,
                matmul_tol(t->plain, s.out));
        compare(r, "dW (dx, db NULL)", fetch_f32(p, dW2, d->nw), c->dW, c->SdW, d->nw, tw);
    }
}

/* a = act(x W^T (+ b)) for each of fused_acts, with and without bias. */
static void dense_act_body(const target *t, const dense_case *c, const dense_dev *d, pool *p,
                           result *r)
{
    const dense_shape s = c->s;
    float *want = hf32(p, d->nz);
    void *a = dbuf(p, NULL, d->nz * 4);
    pool_check(r, p);
    for (size_t ai = 0; ai < 4 && r->ok; ai++)
        for (int bias = 0; bias <= 1 && r->ok; bias++) {
            const ffnn_activation act = fused_acts[ai];
            ffnn_cpu_backend.activation_forward(NULL, act, 0.0f, bias ? c->zb : c->z, want, d->nz);
            if (call_ok(r, ffnn_activation_name(act),
                        t->ops->dense_act_forward(t->ctx, d->x, d->W, bias ? d->b : NULL, a,
                                                  s.batch, s.in, s.out, act)))
                compare(r, ffnn_activation_name(act), fetch_f32(p, a, d->nz), want, c->Sz, d->nz,
                        matmul_tol(t->precision, s.in));
        }
}

/* dense_backward_fused without sgd: dx = (dz W) * f'(x) with x the output of each
 * of fused_acts (drawn in its range, so |f'| <= 1), dW = dz^T x, db; dx_db, xt
 * and dw_side unused. */
static void dense_backward_fused_body(const target *t, const dense_case *c, const dense_dev *d,
                                      pool *p, result *r)
{
    const dense_shape s = c->s;
    const size_t nx = d->nx, nw = d->nw, nz = d->nz;
    float *xa = hf32(p, nx), *dx = hf32(p, nx), *dW = hf32(p, nw), *db = hf32(p, s.out);
    float *ax = hf32(p, nx), *adz = hf32(p, nz), *aW = hf32(p, nw), *Sdx = hf32(p, nx);
    float *SdW = hf32(p, nw), *junk = hf32(p, s.out);
    void *dx_ = dbuf(p, NULL, nx * 4), *dW_ = dbuf(p, NULL, nw * 4),
         *db_ = dbuf(p, NULL, s.out * 4);
    void *x_ = dbuf(p, NULL, nx * 4);
    pool_check(r, p);
    if (r->ok)
        abs_copy(adz, c->dz, nz), abs_copy(aW, c->W, nw);
    for (size_t ai = 0; ai < 4 && r->ok; ai++) {
        const ffnn_activation act = fused_acts[ai];
        for (size_t i = 0; i < nx; i++) {
            const float u = c->x[i];
            xa[i] = act == FFNN_ACT_RELU      ? (u > 0 ? u : 0)
                    : act == FFNN_ACT_SIGMOID ? 0.5f + 0.5f * u
                                              : u;
        }
        ffnn_cpu_backend.dense_backward(NULL, xa, c->W, c->dz, dx, dW, db, s.batch, s.in, s.out);
        ffnn_cpu_backend.activation_backward(NULL, act, 0.0f, xa, dx, dx, nx);
        abs_copy(ax, xa, nx);
        ffnn_cpu_backend.dense_backward(NULL, ax, aW, adz, Sdx, SdW, junk, s.batch, s.in, s.out);
        if (t->ops->upload(t->ctx, x_, xa, nx * 4) != FFNN_OK)
            p->failed = 1;
        pool_check(r, p);
        if (r->ok && call_ok(r, ffnn_activation_name(act),
                             t->ops->dense_backward_fused(t->ctx, x_, (float *)d->W, NULL, d->dz,
                                                          dx_, dW_, db_, NULL, s.batch, s.in, s.out,
                                                          act, NULL, NULL, 0))) {
            compare(r, "dx", fetch_f32(p, dx_, nx), dx, Sdx, nx, matmul_tol(t->precision, s.out));
            compare(r, "dW", fetch_f32(p, dW_, nw), dW, SdW, nw, matmul_tol(t->precision, s.batch));
            compare(r, "db", fetch_f32(p, db_, s.out), db, NULL, s.out,
                    matmul_tol(FFNN_PRECISION_FP32, s.batch));
        }
    }
}

/* packed [dense_pack_floats] = W; dense_forward_packed: the reference's z within
 * the matmul bound and the bits of the target's own dense_forward; its parts
 * (3, on this thread) together: the same bits again. */
static void dense_packed_body(const target *t, const dense_case *c, const dense_dev *d, pool *p,
                              result *r)
{
    const dense_shape s = c->s;
    const size_t nz = d->nz, np = t->ops->dense_pack_floats(t->ctx, s.in, s.out);
    void *packed = dbuf(p, NULL, np * 4), *z = dbuf(p, NULL, nz * 4), *zp = dbuf(p, NULL, nz * 4);
    void *zparts = dbuf(p, NULL, nz * 4);
    pool_check(r, p);
    if (!r->ok ||
        !call_ok(r, "dense_pack", t->ops->dense_pack(t->ctx, d->W, s.in, s.out, packed)) ||
        !call_ok(r, "dense_forward",
                 t->ops->dense_forward(t->ctx, d->x, d->W, d->b, z, s.batch, s.in, s.out)) ||
        !call_ok(
            r, "dense_forward_packed",
            t->ops->dense_forward_packed(t->ctx, d->x, packed, d->b, zp, s.batch, s.in, s.out)))
        return;
    for (int part = 0; part < 3 && r->ok && t->ops->dense_forward_packed_part; part++) {
        size_t j0 = 0, j1 = 0;
        call_ok(r, "dense_forward_packed_part",
                t->ops->dense_forward_packed_part(t->ctx, d->x, packed, d->b, zparts, s.batch, s.in,
                                                  s.out, part, 3, &j0, &j1));
    }
    const float *gz = fetch_f32(p, z, nz), *gzp = fetch_f32(p, zp, nz);
    compare(r, "z (packed)", gzp, c->zb, c->Sz, nz, matmul_tol(t->plain, s.in));
    if (gz && gzp)
        compare(r, "z (packed) vs dense_forward", gzp, gz, NULL, nz, BITS);
    if (gzp && t->ops->dense_forward_packed_part)
        compare(r, "z (3 parts) vs packed", fetch_f32(p, zparts, nz), gzp, NULL, nz, BITS);
}

typedef enum { DENSE_FWD, DENSE_BWD, DENSE_ACT, DENSE_PACKED, DENSE_BWD_FUSED } dense_op;

static test_result dense_group(char *why, size_t why_size, dense_op op)
{
    static const char *names[] = {"dense_forward", "dense_backward", "dense_act_forward",
                                  "dense_forward_packed", "dense_backward_fused"};
    static const uint64_t seeds[] = {0x9E3779B97F4A7C15ULL, 0xD1B54A32D192ED03ULL, 0x5EED0F05EDULL,
                                     0x2545F4914F6CDD1DULL, 0x853C49E6748FEA9BULL};
    group g;
    group_begin(&g, names[op], seeds[op]);
    if (op == DENSE_ACT)
        SAY_MISSING(&g.T, &g, dense_act_forward);
    if (op == DENSE_PACKED)
        SAY_MISSING(&g.T, &g, dense_forward_packed);
    if (op == DENSE_BWD_FUSED)
        SAY_MISSING(&g.T, &g, dense_backward_fused);
    const int with_S = any_low_precision(&g.T);
    int any = 0; /* a target has the op (else no reference to compute) */
    for (size_t k = 0; k < g.T.n; k++)
        any |= op == DENSE_FWD || op == DENSE_BWD ||
               (op == DENSE_ACT && HAS(&g.T.t[k], dense_act_forward)) ||
               (op == DENSE_PACKED && HAS(&g.T.t[k], dense_forward_packed)) ||
               (op == DENSE_BWD_FUSED && HAS(&g.T.t[k], dense_backward_fused));
    /* the forward also on a batch taller than 65535 row tiles of 64 (and 65535 row
     * blocks of 16 in cuda's naive kernel): the grids' row-tile stride */
    const size_t count = test_dense_count + (op == DENSE_FWD);
    for (size_t i = 0; i < count && any; i++) {
        dense_case c = {.s = i < test_dense_count ? test_dense_shape(&g.r, i)
                                                  : (dense_shape){4300000, 2, 3}};
        pool hp = {.t = NULL};
        dense_make(&hp, &g.r, &c, with_S, op == DENSE_BWD);
        if (hp.failed) {
            fprintf(stderr, "    host buffers for %zux%zu->%zu\n", c.s.batch, c.s.in, c.s.out);
            g.failed++;
        }
        for (size_t k = 0; k < g.T.n && !hp.failed; k++) {
            const target *t = &g.T.t[k];
            /* the own kernels' plain ops stay fp32: once per variant */
            if (op == DENSE_FWD && t->precision == t->plain)
                dense_entry(&g, t, &c, g.op, t->plain, 2.0, dense_forward_body);
            else if (op == DENSE_BWD && t->precision == t->plain)
                dense_entry(&g, t, &c, g.op, t->plain, 4.0, dense_backward_body);
            else if (op == DENSE_BWD_FUSED && HAS(t, dense_backward_fused))
                dense_entry(&g, t, &c, g.op, t->precision, 4.0, dense_backward_fused_body);
            else if (op == DENSE_ACT && HAS(t, dense_act_forward))
                dense_entry(&g, t, &c, g.op, t->precision, 2.0, dense_act_body);
            else if (op == DENSE_PACKED && HAS(t, dense_forward_packed) && HAS(t, dense_pack) &&
                     HAS(t, dense_pack_floats))
                dense_entry(&g, t, &c, g.op, t->plain, 2.0, dense_packed_body);
        }
        pool_free(&hp);
    }
    return group_end(&g, why, why_size);
}

TEST_WITH(test_dense_forward, dense_group, DENSE_FWD)
TEST_WITH(test_dense_backward, dense_group, DENSE_BWD)
TEST_WITH(test_dense_act_forward, dense_group, DENSE_ACT)
TEST_WITH(test_dense_backward_fused, dense_group, DENSE_BWD_FUSED)
TEST_WITH(test_dense_packed, dense_group, DENSE_PACKED)

/* ------------------------------------------------------------------ local1d */

/* local1d runs on the variants with their own kernels (cuda naive = global memory,
 * tiled = shared tiles; omp on 1..3 threads); precision does not apply. */
static int l1d_target(const target *t)
{
    return t->precision == FFNN_PRECISION_FP32 &&
           (t->host || !strcmp(t->variant, "naive") || !strcmp(t->variant, "tiled"));
}

static test_result local1d_group(char *why, size_t why_size, int backward)
{
    const ffnn_activation *acts = fused_acts;
    group g;
    group_begin(&g, backward ? "local1d_backward" : "local1d_forward",
                backward ? 0x5EED0002ULL : 0xD1B54A32D192ED05ULL);
    for (size_t i = 0; i < test_l1d_count; i++) {
        const l1d_shape s = test_l1d_shape(&g.r, i);
        const size_t M = ffnn_local1d_output_size(s.N, s.R, s.padding);
        const size_t nx = s.batch * s.N, nw = M * s.R, nz = s.batch * M;
        pool hp = {.t = NULL};
        float *x = hf32(&hp, nx), *W = hf32(&hp, nw), *b = hf32(&hp, M), *dz = hf32(&hp, nz);
        float *z[8], *dx = hf32(&hp, nx), *dW = hf32(&hp, nw), *db = hf32(&hp, M);
        for (int k = 0; k < 8; k++)
            z[k] = hf32(&hp, nz);
        if (hp.failed || M == 0) {
            fprintf(stderr, "    local1d %zu %zu %zu: host buffers or M = 0\n", s.batch, s.N, s.R);
            g.failed++;
            pool_free(&hp);
            continue;
        }
        fill_uniform(&g.r, x, nx, -1.0f, 1.0f);
        fill_uniform(&g.r, W, nw, -1.0f, 1.0f);
        fill_uniform(&g.r, b, M, -1.0f, 1.0f);
        fill_uniform(&g.r, dz, nz, -1.0f, 1.0f);
        const ffnn_backend_ops *cpu = &ffnn_cpu_backend;
        for (int k = 0; k < 8; k++) /* act k / 2, bias k % 2 */
            cpu->local1d_forward(NULL, x, W, k % 2 ? b : NULL, z[k], s.batch, s.N, s.R, s.padding,
                                 acts[k / 2]);
        cpu->local1d_backward(NULL, x, W, dz, dx, dW, db, s.batch, s.N, s.R, s.padding);
        char sh[48];
        snprintf(sh, sizeof sh, "%zux%zu R%zu %s", s.batch, s.N, s.R,
                 s.padding == FFNN_LOCAL1D_SAME ? "same" : "valid");
        FOR_TARGETS(&g, t, l1d_target(t)) {
            pool p = {.t = t};
            result r = RESULT_INIT;
            const void *dxi = dbuf(&p, x, nx * 4), *dWi = dbuf(&p, W, nw * 4);
            const void *dbi = dbuf(&p, b, M * 4), *ddz = dbuf(&p, dz, nz * 4);
            void *o1 = dbuf(&p, NULL, (backward ? nx : nz) * 4), *o2 = dbuf(&p, NULL, nw * 4);
            void *o3 = dbuf(&p, NULL, M * 4), *o4 = dbuf(&p, NULL, nw * 4);
            pool_check(&r, &p);
            /* host: the reference's bits; cuda: the sums' bound (+1e-6 after a
             * non-identity activation: its libm) */
            const tol sum_R = t->host ? BITS : matmul_tol(FFNN_PRECISION_FP32, s.R);
            const tol sum_B = t->host ? BITS : matmul_tol(FFNN_PRECISION_FP32, s.batch);
            for (int a = 0; a < 8 && r.ok && !backward; a++) {
                tol tl = sum_R;
                if (!t->host && acts[a / 2] != FFNN_ACT_IDENTITY)
                    tl.atol += 1e-6;
                if (call_ok(&r, "local1d_forward",
                            t->ops->local1d_forward(t->ctx, dxi, dWi, a % 2 ? dbi : NULL, o1,
                                                    s.batch, s.N, s.R, s.padding, acts[a / 2])))
                    compare(&r, ffnn_activation_name(acts[a / 2]), fetch_f32(&p, o1, nz), z[a],
                            NULL, nz, tl);
            }
            if (r.ok && backward &&
                call_ok(&r, "local1d_backward",
                        t->ops->local1d_backward(t->ctx, dxi, dWi, ddz, o1, o2, o3, s.batch, s.N,
                                                 s.R, s.padding)) &&
                call_ok(&r, "local1d_backward (dW only)",
                        t->ops->local1d_backward(t->ctx, dxi, dWi, ddz, NULL, o4, NULL, s.batch,
                                                 s.N, s.R, s.padding))) {
                compare(&r, "dx", fetch_f32(&p, o1, nx), dx, NULL, nx, sum_R);
                compare(&r, "dW", fetch_f32(&p, o2, nw), dW, NULL, nw, sum_B);
                compare(&r, "db", fetch_f32(&p, o3, M), db, NULL, M, sum_B);
                compare(&r, "dW (dx, db NULL)", fetch_f32(&p, o4, nw), dW, NULL, nw, sum_B);
            }
            pool_free(&p);
            entry_line(&g, g.op, t, FFNN_PRECISION_FP32, sh, (backward ? 4.0 : 2.0) * nz * s.R, &r);
        }
        pool_free(&hp);
    }
    return group_end(&g, why, why_size);
}

TEST_WITH(test_local1d_forward, local1d_group, 0)
TEST_WITH(test_local1d_backward, local1d_group, 1)

/* ------------------------------------------------------------------ element-wise */

/* Every activation, leaky_relu and elu also with a parameter other than the default;
 * inputs in [-6, 6] with relu's kink (0), saturation (+-40) and hardswish's corners
 * (+-3); forward and backward (from the saved value: a, or z for the activations of
 * ffnn_act_grad_from_input), out of place and in place. */
static test_result test_activations(char *why, size_t why_size)
{
    static const struct {
        ffnn_activation act;
        float param;
    } acts[] = {
        {FFNN_ACT_IDENTITY, 0.0f}, {FFNN_ACT_RELU, 0.0f},        {FFNN_ACT_SIGMOID, 0.0f},
        {FFNN_ACT_TANH, 0.0f},     {FFNN_ACT_LEAKY_RELU, 0.01f}, {FFNN_ACT_LEAKY_RELU, 0.2f},
        {FFNN_ACT_ELU, 1.0f},      {FFNN_ACT_ELU, 0.5f},         {FFNN_ACT_SOFTPLUS, 0.0f},
        {FFNN_ACT_GELU, 0.0f},     {FFNN_ACT_GELU_TANH, 0.0f},   {FFNN_ACT_SILU, 0.0f},
        {FFNN_ACT_MISH, 0.0f},     {FFNN_ACT_HARDSWISH, 0.0f}};
    static const size_t sizes[] = {1, 31, 10007, 16385, 300000, 300001};
    group g;
    group_begin(&g, "activation", 0xA0761D6478BD642FULL);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const size_t n = sizes[si];
        pool hp = {.t = NULL};
        float *z = hf32(&hp, n), *da = hf32(&hp, n), *a_ref = hf32(&hp, n), *dz_ref = hf32(&hp, n);
        if (host_failed(&g, &hp))
            continue;
        fill_uniform(&g.r, z, n, -6.0f, 6.0f);
        for (size_t i = 0; i < n; i += 97)
            z[i] = 0.0f;
        for (size_t i = 5; i < n; i += 101)
            z[i] = i % 2 ? 40.0f : -40.0f;
        for (size_t i = 7; i < n; i += 103)
            z[i] = i % 2 ? 3.0f : -3.0f;
        fill_uniform(&g.r, da, n, -1.0f, 1.0f);
        for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++) {
            const ffnn_activation act = acts[ai].act;
            const float prm = acts[ai].param;
            const float *saved = ffnn_act_grad_from_input(act) ? z : a_ref;
            ffnn_cpu_backend.activation_forward(NULL, act, prm, z, a_ref, n);
            ffnn_cpu_backend.activation_backward(NULL, act, prm, saved, da, dz_ref, n);
            char sh[48];
            snprintf(sh, sizeof sh, "%s(%g) n=%zu", ffnn_activation_name(act), (double)prm, n);
            FOR_TARGETS(&g, t, t->elementwise) {
                pool p = {.t = t};
                result r = RESULT_INIT;
                const tol tl = t->host ? BITS : (tol){1e-6, 1e-5, 0};
                void *dz_ = dbuf(&p, z, n * 4), *dsv = dbuf(&p, saved, n * 4);
                void *dda = dbuf(&p, da, n * 4), *da_out = dbuf(&p, NULL, n * 4);
                void *ddz = dbuf(&p, NULL, n * 4);
                pool_check(&r, &p);
                /* then in place: a = f(a) over z's buffer, dz = da f'(saved) over da's */
                for (int in_place = 0; in_place <= 1 && r.ok; in_place++) {
                    void *a_out = in_place ? dz_ : da_out, *dz_out = in_place ? dda : ddz;
                    if (call_ok(&r, in_place ? "forward in place" : "forward",
                                t->ops->activation_forward(t->ctx, act, prm, dz_, a_out, n)) &&
                        call_ok(
                            &r, in_place ? "backward in place" : "backward",
                            t->ops->activation_backward(t->ctx, act, prm, dsv, dda, dz_out, n))) {
                        compare(&r, in_place ? "a (in place)" : "a", fetch_f32(&p, a_out, n), a_ref,
                                NULL, n, tl);
                        compare(&r, in_place ? "dz (in place)" : "dz", fetch_f32(&p, dz_out, n),
                                dz_ref, NULL, n, tl);
                    }
                }
                pool_free(&p);
                entry_line(&g, "activation", t, FFNN_PRECISION_FP32, sh, 2.0 * n, &r);
            }
        }
        pool_free(&hp);
    }
    return group_end(&g, why, why_size);
}

/* ------------------------------------------------------------------ losses */

/* Outputs [batch, width] and labels [batch] that stress the kernels: large logits
 * (the max shift), all-equal rows and a repeated maximum (argmax ties go to the
 * first index), zeros (width 1: z > 0 is false); mse's width-1 label is a value. */
static void loss_inputs(rng *r, ffnn_loss loss, size_t batch, size_t width, float *out, int32_t *y)
{
    const float lo = loss == FFNN_LOSS_MSE ? -0.5f : -4.0f,
                hi = loss == FFNN_LOSS_MSE ? 1.5f : 4.0f;
    for (size_t b = 0; b < batch; b++) {
        float *row = out + b * width;
        fill_uniform(r, row, width, lo, hi);
        if (loss != FFNN_LOSS_MSE && b % 7 == 3)
            for (size_t j = 0; j < width; j++)
                row[j] *= 25.0f; /* |z| up to 100 */
        if (b % 11 == 5)
            memset(row, 0, width * sizeof *row);
        if (b % 13 == 6 && width > 2)
            row[rng_below(r, width - 1)] = row[width - 1] = 9.0f;
        y[b] =
            (int32_t)(width > 1                      ? rng_below(r, width)
                      : loss == FFNN_LOSS_SOFTMAX_CE ? 0
                                                     : rng_below(r, loss == FFNN_LOSS_MSE ? 4 : 2));
    }
}

/* Float targets for bce / mse: uniform, plus 0, 1 and exactly 0.5 (on the threshold). */
static void loss_targets(rng *r, ffnn_loss loss, size_t n, float *t)
{
    const float lo = loss == FFNN_LOSS_MSE ? -0.5f : 0.0f, hi = loss == FFNN_LOSS_MSE ? 1.5f : 1.0f;
    for (size_t i = 0; i < n; i++) {
        t[i] = rng_uniform(r, lo, hi);
        if (i % 5 == 1)
            t[i] = (float)rng_below(r, 2);
        if (i % 17 == 3)
            t[i] = 0.5f;
    }
}

/* One loss entry: with the gradient, then without (evaluation). */
static void loss_entry(group *g, const target *t, ffnn_loss loss, size_t batch, size_t width,
                       const float *out, const int32_t *y, const float *tg, const float *dout_ref,
                       const float *loss_ref, const uint8_t *ok_ref)
{
    const size_t n = batch * width;
    pool p = {.t = t};
    result r;
    result_init(&r);
    const void *d_out = dbuf(&p, out, n * 4);
    const void *d_y = tg ? NULL : dbuf(&p, y, batch * 4), *d_t = tg ? dbuf(&p, tg, n * 4) : NULL;
    void *d_dout = dbuf(&p, NULL, n * 4), *d_loss = dbuf(&p, NULL, batch * 4);
    void *d_ok = dbuf(&p, NULL, batch), *d_loss2 = dbuf(&p, NULL, batch * 4);
    void *d_ok2 = dbuf(&p, NULL, batch);
    pool_check(&r, &p);
    const tol tl_loss = t->host ? BITS : (tol){1e-5, 1e-5, 0};
    const tol tl_dout = t->host ? BITS : (tol){1e-6, 1e-5, 0};
    if (r.ok &&
        call_ok(&r, "loss",
                t->ops->loss(t->ctx, loss, d_out, d_y, d_t, batch, width, d_dout, d_loss, d_ok)) &&
        call_ok(&r, "loss (dout NULL)",
                t->ops->loss(t->ctx, loss, d_out, d_y, d_t, batch, width, NULL, d_loss2, d_ok2))) {
        compare(&r, "row_loss", fetch_f32(&p, d_loss, batch), loss_ref, NULL, batch, tl_loss);
        compare(&r, "dout", fetch_f32(&p, d_dout, n), dout_ref, NULL, n, tl_dout);
        compare_u8(&r, "row_correct", fetch(&p, d_ok, batch), ok_ref, batch);
        compare(&r, "row_loss (dout NULL)", fetch_f32(&p, d_loss2, batch), loss_ref, NULL, batch,
                tl_loss);
        compare_u8(&r, "row_correct (dout NULL)", fetch(&p, d_ok2, batch), ok_ref, batch);
    }
    /* refused as the reference refuses: softmax_ce with float targets */
    if (r.ok && loss == FFNN_LOSS_SOFTMAX_CE && batch == 1 && width == 2) {
        void *ft = dbuf(&p, out, n * 4);
        const ffnn_status st = t->ops->loss(t->ctx, FFNN_LOSS_SOFTMAX_CE, d_out, NULL, ft, batch,
                                            width, NULL, d_loss2, d_ok2);
        if (st != FFNN_ERR_INVALID_ARGUMENT || !strstr(ffnn_last_error(), "softmax_ce")) {
            fprintf(stderr, "    softmax_ce with float targets: status %d (%s)\n", (int)st,
                    ffnn_last_error());
            r.ok = 0;
        }
    }
    pool_free(&p);
    char sh[48];
    snprintf(sh, sizeof sh, "%s%s %zux%zu", ffnn_loss_name(loss), tg ? "+t" : "", batch, width);
    entry_line(g, "loss", t, FFNN_PRECISION_FP32, sh, 10.0 * n, &r);
}

static test_result test_losses(char *why, size_t why_size)
{
    static const ffnn_loss losses[] = {FFNN_LOSS_SOFTMAX_CE, FFNN_LOSS_SIGMOID_BCE, FFNN_LOSS_MSE};
    static const size_t widths[] = {1, 2, 10, 37}, batches[] = {1, 64, 203, 1000, 5000};
    group g;
    group_begin(&g, "loss", 0x94D049BB133111EBULL);
    for (size_t li = 0; li < 3; li++)
        for (size_t wi = 0; wi < 4; wi++)
            for (size_t bi = 0; bi < 5; bi++)
                for (int with_t = 0; with_t <= (losses[li] != FFNN_LOSS_SOFTMAX_CE); with_t++) {
                    const size_t batch = batches[bi], width = widths[wi], n = batch * width;
                    pool hp = {.t = NULL};
                    float *out = hf32(&hp, n), *tg = hf32(&hp, n), *dout = hf32(&hp, n);
                    float *rl = hf32(&hp, batch);
                    int32_t *y = hbuf(&hp, batch * 4);
                    uint8_t *ok = hbuf(&hp, batch);
                    if (host_failed(&g, &hp))
                        continue;
                    loss_inputs(&g.r, losses[li], batch, width, out, y);
                    loss_targets(&g.r, losses[li], n, tg);
                    const float *t_ = with_t ? tg : NULL;
                    ffnn_cpu_backend.loss(NULL, losses[li], out, with_t ? NULL : y, t_, batch,
                                          width, dout, rl, ok);
                    for (size_t k = 0; k < g.T.n; k++)
                        if (g.T.t[k].elementwise)
                            loss_entry(&g, &g.T.t[k], losses[li], batch, width, out, y, t_, dout,
                                       rl, ok);
                    pool_free(&hp);
                }
    return group_end(&g, why, why_size);
}

/* ------------------------------------------------------------------ optimizers */

/* Five steps of each optimizer on the same arena, reference and target side by
 * side, state carried on each side: fresh gradients each step (in [-1, 1] on odd
 * steps, [-0.1, 0.1] on even ones), every 7th exactly zero (Adam's 0 / (0 + eps)). */
static test_result test_optimizers(char *why, size_t why_size)
{
    static const struct {
        ffnn_optimizer kind;
        int nesterov;
        float lr, beta1, wd;
    } cases[] = {
        {FFNN_OPT_SGD, 0, 0.05f, 0.9f, 0},
        {FFNN_OPT_MOMENTUM, 0, 0.01f, 0.9f, 0},
        {FFNN_OPT_MOMENTUM, 1, 0.05f, 0.9f, 0},
        {FFNN_OPT_ADAM, 0, 1e-3f, 0.9f, 0},
        {FFNN_OPT_ADAM, 0, 0.01f, 0.6f, 0}, /* lerp weight >= 0.5 */
        /* weight decay (L2 into the gradient) and adamw's decoupled decay */
        {FFNN_OPT_SGD, 0, 0.05f, 0.9f, 0.01f},
        {FFNN_OPT_MOMENTUM, 0, 0.05f, 0.9f, 0.01f},
        {FFNN_OPT_MOMENTUM, 1, 0.05f, 0.9f, 5e-4f},
        {FFNN_OPT_ADAM, 0, 1e-3f, 0.9f, 0.01f},
        {FFNN_OPT_ADAMW, 0, 1e-3f, 0.9f, 0.01f},
        {FFNN_OPT_ADAMW, 0, 1e-3f, 0.9f, 0.05f},
    };
    static const size_t sizes[] = {1, 255, 16385, 203530, 1000003};
    enum { STEPS = 5 };
    group g;
    group_begin(&g, "optimizer_update", 0x853C49E6748FEA9BULL);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            ffnn_train_config cfg = ffnn_train_config_default();
            cfg.optimizer = cases[ci].kind;
            cfg.nesterov = cases[ci].nesterov;
            cfg.learning_rate = cases[ci].lr;
            cfg.beta1 = cases[ci].beta1;
            cfg.weight_decay = cases[ci].wd;
            const size_t n = sizes[si], ns = ffnn_optimizer_state_count(cfg.optimizer) * n;
            pool hp = {.t = NULL};
            float *p0 = hf32(&hp, n), *g_[STEPS], *pr = hf32(&hp, n), *sr = hf32(&hp, ns + 1);
            for (int s = 0; s < STEPS; s++)
                g_[s] = hf32(&hp, n);
            if (host_failed(&g, &hp))
                continue;
            fill_uniform(&g.r, p0, n, -1.0f, 1.0f);
            for (int s = 0; s < STEPS; s++) {
                const float m = s % 2 ? 0.1f : 1.0f;
                fill_uniform(&g.r, g_[s], n, -m, m);
                for (size_t i = 0; i < n; i += 7)
                    g_[s][i] = 0.0f;
            }
            char sh[48];
            snprintf(sh, sizeof sh, "%s%s wd%g n=%zu", ffnn_optimizer_name(cfg.optimizer),
                     cfg.nesterov ? "+nesterov" : "", (double)cfg.weight_decay, n);
            FOR_TARGETS(&g, t, t->elementwise) {
                pool p = {.t = t};
                result r = RESULT_INIT;
                memcpy(pr, p0, n * 4);
                memset(sr, 0, (ns + 1) * 4);
                void *dp = dbuf(&p, p0, n * 4), *ds = dbuf(&p, sr, (ns + 1) * 4);
                void *dg = dbuf(&p, NULL, n * 4);
                pool_check(&r, &p);
                for (uint64_t step = 1; step <= STEPS && r.ok; step++) {
                    const ffnn_optimizer_step st = ffnn_optimizer_step_at(&cfg, step);
                    ffnn_cpu_backend.optimizer_update(NULL, &st, pr, g_[step - 1], ns ? sr : NULL,
                                                      n);
                    if (t->ops->upload(t->ctx, dg, g_[step - 1], n * 4) != FFNN_OK)
                        p.failed = 1;
                    pool_check(&r, &p);
                    if (r.ok &&
                        call_ok(&r, "optimizer_update",
                                t->ops->optimizer_update(t->ctx, &st, dp, dg, ns ? ds : NULL, n))) {
                        compare(&r, "params", fetch_f32(&p, dp, n), pr, NULL, n,
                                t->host ? BITS : (tol){1e-7, 1e-6, 0});
                        compare(&r, "state", fetch_f32(&p, ds, ns), sr, NULL, ns,
                                t->host ? BITS : (tol){1e-12, 1e-6, 0});
                    }
                }
                pool_free(&p);
                entry_line(&g, "optimizer_update", t, FFNN_PRECISION_FP32, sh,
                           (cfg.optimizer >= FFNN_OPT_ADAM ? 12.0 : 3.0) * n * STEPS, &r);
            }
            pool_free(&hp);
        }
    return group_end(&g, why, why_size);
}

/* ------------------------------------------------------------------ clip, dropout, ema */

/* grad_clip (value then norm, two settings) with its norm output; dropout for p in
 * 0 .. 0.9 (the same integer mask everywhere); ema_update. The reference itself is
 * checked too where n is large: after the norm clip the norm is max_norm, dropout
 * drops p of the elements within 6 standard deviations and scales the kept ones by
 * 1/(1-p), and another step's key draws an independent mask. */
static int reference_dropout_ok(const float *in, const float *out, const float *other, size_t n,
                                double p, float scale)
{
    size_t dropped = 0, same = 0;
    for (size_t i = 0; i < n; i++) {
        dropped += out[i] == 0.0f;
        same += (other[i] == 0.0f) == (out[i] == 0.0f);
        if (out[i] != 0.0f && out[i] != in[i] * scale) {
            fprintf(stderr, "    reference dropout: kept [%zu] not scaled\n", i);
            return 0;
        }
    }
    const double sd = sqrt(n * p * (1 - p)), agree = p * p + (1 - p) * (1 - p);
    if (fabs((double)dropped - n * p) > 6 * sd + 1 ||
        (p > 0 && fabs((double)same / n - agree) >= 0.01)) {
        fprintf(stderr, "    reference dropout p %g: %zu of %zu dropped, masks agree on %zu\n", p,
                dropped, n, same);
        return 0;
    }
    return 1;
}

static test_result test_clip_dropout_ema(char *why, size_t why_size)
{
    static const size_t sizes[] = {1, 1023, 203530, 300007, 1000003};
    static const float clips[2][2] = {{0.5f, 0.008f}, {0.05f, 0.008f}}; /* max_norm, max_value */
    static const double ps[] = {0.0, 0.1, 0.4, 0.5, 0.8, 0.9};
    group g;
    group_begin(&g, "clip_dropout_ema", 0x2545F4914F6CDD1DULL);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const size_t n = sizes[si];
        pool hp = {.t = NULL};
        float *g0 = hf32(&hp, n), *gc[2] = {hf32(&hp, n), hf32(&hp, n)}, norm[2];
        float *e = hf32(&hp, n), *e_ref = hf32(&hp, n), *d_ref[6], *d_other = hf32(&hp, n);
        for (int k = 0; k < 6; k++)
            d_ref[k] = hf32(&hp, n);
        if (host_failed(&g, &hp))
            continue;
        fill_uniform(&g.r, g0, n, -0.01f, 0.01f);
        fill_uniform(&g.r, e, n, 0.5f, 1.0f); /* no zeros: a zero output is a drop */
        result refr;
        result_init(&refr);
        for (int c = 0; c < 2; c++) {
            memcpy(gc[c], g0, n * 4);
            ffnn_cpu_backend.grad_clip(NULL, gc[c], n, clips[c][0], clips[c][1], &norm[c]);
            double sq = 0;
            for (size_t i = 0; i < n; i++)
                sq += (double)gc[c][i] * gc[c][i];
            if (norm[c] > clips[c][0] && !(fabs(sqrt(sq) - clips[c][0]) < 1e-5)) {
                fprintf(stderr, "    reference clip: norm %g after clipping to %g\n", sqrt(sq),
                        (double)clips[c][0]);
                refr.ok = 0;
            }
        }
        const uint64_t key = ffnn_dropout_key(11, 5, 2);
        for (int k = 0; k < 6; k++) {
            ffnn_cpu_backend.dropout(NULL, e, d_ref[k], n, key, ffnn_dropout_threshold(ps[k]),
                                     ffnn_dropout_scale(ps[k]));
            ffnn_cpu_backend.dropout(NULL, e, d_other, n, ffnn_dropout_key(11, 6, 2),
                                     ffnn_dropout_threshold(ps[k]), ffnn_dropout_scale(ps[k]));
            if (n >= 100000 &&
                !reference_dropout_ok(e, d_ref[k], d_other, n, ps[k], ffnn_dropout_scale(ps[k])))
                refr.ok = 0;
        }
        memcpy(e_ref, e, n * 4);
        ffnn_cpu_backend.ema_update(NULL, e_ref, g0, n, 0.999f, 0.001f);
        if (!refr.ok)
            g.failed++;
        char sh[32];
        snprintf(sh, sizeof sh, "n=%zu", n);
        FOR_TARGETS(&g, t, t->elementwise) {
            pool p = {.t = t};
            result r = RESULT_INIT;
            void *dg[2] = {dbuf(&p, g0, n * 4), dbuf(&p, g0, n * 4)};
            void *dnorm = dbuf(&p, NULL, 8), *de = dbuf(&p, e, n * 4), *dd = dbuf(&p, NULL, n * 4);
            void *dge = dbuf(&p, g0, n * 4);
            pool_check(&r, &p);
            for (int c = 0; c < 2 && r.ok; c++)
                if (call_ok(&r, "grad_clip",
                            t->ops->grad_clip(t->ctx, dg[c], n, clips[c][0], clips[c][1],
                                              (float *)dnorm + c))) {
                    compare(&r, "clipped", fetch_f32(&p, dg[c], n), gc[c], NULL, n,
                            (tol){t->host ? 0 : 1e-12, 1e-6, 0});
                }
            if (r.ok)
                compare(&r, "norm", fetch_f32(&p, dnorm, 2), norm, NULL, 2, (tol){0, 1e-6, 0});
            for (int q = 0; q < 6 && r.ok; q++)
                if (call_ok(&r, "dropout",
                            t->ops->dropout(t->ctx, de, dd, n, key, ffnn_dropout_threshold(ps[q]),
                                            ffnn_dropout_scale(ps[q]))))
                    compare(&r, "dropout", fetch_f32(&p, dd, n), d_ref[q], NULL, n, BITS);
            if (r.ok &&
                call_ok(&r, "ema_update", t->ops->ema_update(t->ctx, de, dge, n, 0.999f, 0.001f)))
                compare(&r, "ema", fetch_f32(&p, de, n), e_ref, NULL, n,
                        t->host ? BITS : (tol){1e-12, 1e-6, 0});
            pool_free(&p);
            entry_line(&g, "clip_dropout_ema", t, FFNN_PRECISION_FP32, sh, 12.0 * n, &r);
        }
        pool_free(&hp);
    }
    return group_end(&g, why, why_size);
}

/* ------------------------------------------------------------------ gather */

/* Gather over the four kinds of data set (bit 0: float features, else uint8 images;
 * bit 1: float targets, else labels) from 50 samples; widths 1 and 3 take cuda's
 * one-value path, 8 and 784 its four-value path; 4100 rows are more than its
 * launch's 4096 row blocks. Images: first byte 0, last 255. */
static test_result test_gather(char *why, size_t why_size)
{
    static const size_t features_list[] = {1, 3, 8, 784}, batches[] = {1, 37, 4096, 4100};
    const size_t count = 50;
    group g;
    group_begin(&g, "gather", 0xBF58476D1CE4E5B9ULL);
    for (int kind = 0; kind < 4; kind++)
        for (size_t fi = 0; fi < 4; fi++)
            for (size_t bi = 0; bi < 4; bi++) {
                const int float_x = kind & 1, float_t = (kind & 2) != 0;
                const size_t features = features_list[fi], batch = batches[bi];
                const size_t width = float_t ? 1 + 2 * bi : 0; /* 1, 3, 5, 7 */
                pool hp = {.t = NULL};
                uint8_t *images = hbuf(&hp, count * features);
                float *values = hf32(&hp, count * features),
                      *targets_ = hf32(&hp, count * width + 1);
                int32_t *labels = hbuf(&hp, count * 4), *index = hbuf(&hp, batch * 4);
                float *x_ref = hf32(&hp, batch * features), *t_ref = hf32(&hp, batch * width + 1);
                int32_t *y_ref = hbuf(&hp, batch * 4);
                if (host_failed(&g, &hp))
                    continue;
                for (size_t i = 0; i < count * features; i++)
                    images[i] = i == 0                      ? 0
                                : i + 1 == count * features ? 255
                                                            : (uint8_t)rng_next(&g.r);
                fill_uniform(&g.r, values, count * features, -3.0f, 3.0f);
                for (size_t i = 0; i < count; i++)
                    labels[i] = (int32_t)rng_below(&g.r, 1000);
                fill_uniform(&g.r, targets_, count * width, -1.0f, 2.0f);
                for (size_t b = 0; b < batch; b++)
                    index[b] = (int32_t)rng_below(&g.r, count);
                index[0] = (int32_t)(count - 1);
                const ffnn_gather_source src = {
                    float_x ? NULL : images, float_x ? values : NULL,   features,
                    float_t ? NULL : labels, float_t ? targets_ : NULL, width};
                ffnn_cpu_backend.gather(NULL, &src, index, batch, x_ref, y_ref, t_ref);
                char sh[48];
                snprintf(sh, sizeof sh, "%s%s b%zu f%zu", float_x ? "f32" : "u8",
                         float_t ? "+t" : "+y", batch, features);
                FOR_TARGETS(&g, t, t->elementwise) {
                    pool p = {.t = t};
                    result r = RESULT_INIT;
                    const ffnn_gather_source dsrc = {
                        float_x ? NULL : dbuf(&p, images, count * features),
                        float_x ? dbuf(&p, values, count * features * 4) : NULL,
                        features,
                        float_t ? NULL : dbuf(&p, labels, count * 4),
                        float_t ? dbuf(&p, targets_, (count * width + 1) * 4) : NULL,
                        width};
                    const void *di = dbuf(&p, index, batch * 4);
                    void *dx = dbuf(&p, NULL, batch * features * 4),
                         *dy = dbuf(&p, NULL, batch * 4);
                    void *dt = dbuf(&p, NULL, (batch * width + 1) * 4);
                    pool_check(&r, &p);
                    if (r.ok && call_ok(&r, "gather",
                                        t->ops->gather(t->ctx, &dsrc, di, batch, dx,
                                                       float_t ? NULL : dy, float_t ? dt : NULL))) {
                        /* x = byte / 255: one division (host), 1e-6 relative on cuda */
                        compare(&r, "x", fetch_f32(&p, dx, batch * features), x_ref, NULL,
                                batch * features, float_x || t->host ? BITS : (tol){0, 1e-6, 0});
                        if (float_t)
                            compare(&r, "t", fetch_f32(&p, dt, batch * width), t_ref, NULL,
                                    batch * width, BITS);
                        else
                            compare_u8(&r, "y", fetch(&p, dy, batch * 4), (const uint8_t *)y_ref,
                                       batch * 4);
                    }
                    pool_free(&p);
                    entry_line(&g, "gather", t, FFNN_PRECISION_FP32, sh, 0.0, &r);
                }
                pool_free(&hp);
            }
    return group_end(&g, why, why_size);
}

/* ------------------------------------------------------------------ bf16 ops */

/* The mixed-precision ops (backend.h, cuda's cublaslt strategy) on bf16 contexts:
 *   to_bf16          rows into a wider ld: bf16 of each value (round to nearest
 *                    even, bf16_bits), bit for bit; the cells past a row untouched
 *   dense_act_forward_bf16  on bf16 values x16, W16 (the reference on the same
 *                    values: exact products, fp32 sums): the fp32 bound, and for a
 *                    bf16 output + 2^-8 |want| (one rounding, half an ulp, twice)
 *   optimizer_update_bf16   the parameters as optimizer_update (1e-7 + 1e-6) and
 *                    the shadow the bf16 bits of the updated parameters, exactly */
static int bf16_target(const target *t)
{
    /* the mixed-precision ops run on cuBLASLt (the cublaslt strategy) only */
    return t->precision == FFNN_PRECISION_BF16 && !strcmp(t->variant, "cublaslt") &&
           HAS(t, to_bf16) && HAS(t, dense_act_forward_bf16) && HAS(t, optimizer_update_bf16);
}

static void bf16_entry(group *g, const target *t, dense_shape s, pool *hp)
{
    const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out, ld = s.in + 3;
    float *x = hf32(hp, nx), *W = hf32(hp, nw), *b = hf32(hp, s.out), *want = hf32(hp, nz);
    uint16_t *x16 = hbuf(hp, nx * 2), *W16 = hbuf(hp, nw * 2), *b16 = hbuf(hp, s.out * 2);
    uint16_t *xpad = hbuf(hp, s.batch * ld * 2);
    float *ax = hf32(hp, nx), *aW = hf32(hp, nw), *ab = hf32(hp, s.out), *S = hf32(hp, nz);
    float *a16f = hf32(hp, nz);
    if (hp->failed)
        return;
    fill_uniform(&g->r, x, nx, -1.0f, 1.0f);
    fill_uniform(&g->r, W, nw, -1.0f, 1.0f);
    fill_uniform(&g->r, b, s.out, -1.0f, 1.0f);
    for (size_t i = 0; i < s.batch * ld; i++)
        xpad[i] = (i % ld) < s.in ? bf16_bits(x[i / ld * s.in + i % ld]) : 0x7FC1;
    for (size_t i = 0; i < nx; i++)
        x16[i] = bf16_bits(x[i]), x[i] = bf16_value(x16[i]);
    for (size_t i = 0; i < nw; i++)
        W16[i] = bf16_bits(W[i]), W[i] = bf16_value(W16[i]);
    for (size_t i = 0; i < s.out; i++)
        b16[i] = bf16_bits(b[i]), b[i] = bf16_value(b16[i]);
    abs_copy(ax, x, nx), abs_copy(aW, W, nw), abs_copy(ab, b, s.out);
    ffnn_cpu_backend.dense_forward(NULL, ax, aW, ab, S, s.batch, s.in, s.out);
    char sh[40];
    shape_text(sh, sizeof sh, s);
    pool p = {.t = t};
    result r;
    result_init(&r);
    /* to_bf16 of the fp32 x (before its rounding above: xpad holds those bits) */
    float *xf = hf32(hp, nx);
    if (xf) {
        for (size_t i = 0; i < nx; i++) /* any fp32 values: these round to x16 again */
            xf[i] = x[i] + (x[i] == 0 ? 0 : x[i] * 0x1p-10f);
    }
    void *dxf = dbuf(&p, xf, nx * 4), *dpad = dbuf(&p, NULL, s.batch * ld * 2);
    pool_check(&r, &p);
    if (r.ok && xf) {
        uint16_t *pad_want = hbuf(hp, s.batch * ld * 2);
        if (pad_want && t->ops->upload(t->ctx, dpad, xpad, s.batch * ld * 2) == FFNN_OK &&
            call_ok(&r, "to_bf16", t->ops->to_bf16(t->ctx, dxf, dpad, s.batch, s.in, ld))) {
            for (size_t i = 0; i < s.batch * ld; i++)
                pad_want[i] = (i % ld) < s.in ? bf16_bits(xf[i / ld * s.in + i % ld]) : 0x7FC1;
            compare_u8(&r, "to_bf16", fetch(&p, dpad, s.batch * ld * 2), (const uint8_t *)pad_want,
                       s.batch * ld * 2);
        }
    }
    pool_free(&p);
    entry_line(g, "to_bf16", t, FFNN_PRECISION_BF16, sh, 0.0, &r);

    const ffnn_activation *acts = fused_acts;
    result_init(&r);
    p = (pool){.t = t};
    const void *dx16 = dbuf(&p, x16, nx * 2), *dW16 = dbuf(&p, W16, nw * 2);
    const void *db = dbuf(&p, b, s.out * 4), *db16 = dbuf(&p, b16, s.out * 2);
    void *da = dbuf(&p, NULL, nz * 4), *da16 = dbuf(&p, NULL, nz * 2);
    pool_check(&r, &p);
    for (size_t ai = 0; ai < 4 && r.ok; ai++)
        for (int bias = 0; bias <= 1 && r.ok; bias++) {
            ffnn_cpu_backend.dense_forward(NULL, x, W, bias ? b : NULL, want, s.batch, s.in, s.out);
            ffnn_cpu_backend.activation_forward(NULL, acts[ai], 0.0f, want, want, nz);
            if (!call_ok(&r, "dense_act_forward_bf16",
                         t->ops->dense_act_forward_bf16(t->ctx, dx16, dW16, bias ? db : NULL,
                                                        bias ? db16 : NULL, da, NULL, s.batch, s.in,
                                                        s.out, acts[ai])) ||
                !call_ok(&r, "dense_act_forward_bf16 (bf16 out)",
                         t->ops->dense_act_forward_bf16(t->ctx, dx16, dW16, bias ? db : NULL,
                                                        bias ? db16 : NULL, NULL, da16, s.batch,
                                                        s.in, s.out, acts[ai])))
                break;
            compare(&r, "a", fetch_f32(&p, da, nz), want, S, nz,
                    matmul_tol(FFNN_PRECISION_FP32, s.in));
            const uint16_t *g16 = fetch(&p, da16, nz * 2);
            if (g16) {
                for (size_t i = 0; i < nz; i++)
                    a16f[i] = bf16_value(g16[i]);
                tol tl = matmul_tol(FFNN_PRECISION_FP32, s.in);
                tl.rtol += 1.0 / 256.0;
                compare(&r, "a16", a16f, want, S, nz, tl);
            } else {
                r.ok = 0;
            }
        }
    pool_free(&p);
    entry_line(g, "dense_act_fwd_bf16", t, FFNN_PRECISION_BF16, sh, 2.0 * nz * s.in, &r);
}

static void optimizer_bf16_entry(group *g, const target *t, size_t n, pool *hp)
{
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.optimizer = FFNN_OPT_ADAM;
    cfg.learning_rate = 1e-3f;
    float *p0 = hf32(hp, n), *gr = hf32(hp, n), *pr = hf32(hp, n), *sr = hf32(hp, 2 * n);
    uint16_t *shadow_want = hbuf(hp, n * 2);
    if (hp->failed)
        return;
    fill_uniform(&g->r, p0, n, -1.0f, 1.0f);
    fill_uniform(&g->r, gr, n, -0.1f, 0.1f);
    memcpy(pr, p0, n * 4);
    memset(sr, 0, 2 * n * 4);
    pool p = {.t = t};
    result r;
    result_init(&r);
    void *dp = dbuf(&p, p0, n * 4), *dg = dbuf(&p, gr, n * 4), *ds = dbuf(&p, sr, 2 * n * 4);
    void *dsh = dbuf(&p, NULL, n * 2);
    pool_check(&r, &p);
    for (uint64_t step = 1; step <= 3 && r.ok; step++) {
        const ffnn_optimizer_step st = ffnn_optimizer_step_at(&cfg, step);
        ffnn_cpu_backend.optimizer_update(NULL, &st, pr, gr, sr, n);
        if (!call_ok(&r, "optimizer_update_bf16",
                     t->ops->optimizer_update_bf16(t->ctx, &st, dp, dg, ds, n, dsh)))
            break;
        const float *gp = fetch_f32(&p, dp, n);
        compare(&r, "params", gp, pr, NULL, n, (tol){1e-7, 1e-6, 0});
        if (gp) {
            for (size_t i = 0; i < n; i++)
                shadow_want[i] = bf16_bits(gp[i]);
            compare_u8(&r, "shadow16", fetch(&p, dsh, n * 2), (const uint8_t *)shadow_want, n * 2);
        }
    }
    pool_free(&p);
    char sh[32];
    snprintf(sh, sizeof sh, "adam n=%zu", n);
    entry_line(g, "optimizer_bf16", t, FFNN_PRECISION_BF16, sh, 36.0 * n, &r);
}

static test_result test_bf16(char *why, size_t why_size)
{
    static const dense_shape shapes[] = {{1, 8, 8},     {7, 24, 5},    {64, 784, 256},
                                         {64, 256, 10}, {257, 40, 17}, {2000, 16, 3}};
    static const size_t sizes[] = {1, 255, 203530};
    group g;
    group_begin(&g, "bf16", 0x5851F42D4C957F2DULL);
    SAY_MISSING(&g.T, &g, dense_act_forward_bf16);
    for (size_t k = 0; k < g.T.n; k++) {
        const target *t = &g.T.t[k];
        if (!bf16_target(t))
            continue;
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            pool hp = {.t = NULL};
            bf16_entry(&g, t, shapes[i], &hp);
            g.failed += hp.failed;
            pool_free(&hp);
        }
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            pool hp = {.t = NULL};
            optimizer_bf16_entry(&g, t, sizes[i], &hp);
            g.failed += hp.failed;
            pool_free(&hp);
        }
    }
    return group_end(&g, why, why_size);
}

const test_case ops_tests[] = {
    {"ops_table_dense_forward", test_dense_forward},
    {"ops_table_dense_backward", test_dense_backward},
    {"ops_table_dense_act_forward", test_dense_act_forward},
    {"ops_table_dense_backward_fused", test_dense_backward_fused},
    {"ops_table_dense_forward_packed", test_dense_packed},
    {"ops_table_local1d_forward", test_local1d_forward},
    {"ops_table_local1d_backward", test_local1d_backward},
    {"ops_table_activations", test_activations},
    {"ops_table_losses", test_losses},
    {"ops_table_optimizers", test_optimizers},
    {"ops_table_clip_dropout_ema", test_clip_dropout_ema},
    {"ops_table_gather", test_gather},
    {"ops_table_bf16", test_bf16},
};
const size_t ops_tests_count = sizeof ops_tests / sizeof ops_tests[0];
