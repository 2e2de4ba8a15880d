/*
 * test_cublas.c - suite "cublas": the cublas strategy (src/backend/cuda/cublas.cu) through
 * the backend table (ffnn_cuda_backend(), created with the cublas strategy's options): dense
 * forward and backward against the CPU reference (ffnn_cpu_backend) on fresh
 * random inputs, in each precision (fp32, tf32, bf16); that tf32 and bf16 really
 * change the arithmetic; that a matmul captured into a CUDA graph (even the
 * context's first one, which makes the cuBLAS handle) replays with the same bits;
 * and that the strategies refuse tf32/bf16 where they do not take it.
 *
 * Every GPU output buffer is filled with 0xFF bytes (NaN) before the op runs, so an
 * element the op forgets to write fails the comparison.
 *
 * Tolerances, per output value y = sum_k p_k (+ b) with the terms p_k = a_k w_k:
 *   |got - want| <= rel * S,   S = sum_k |a_k| |w_k| (+ |b|)
 * (S: the same op on the absolute values of the inputs, by the omp backend), so
 * that the bound follows the size of the terms, not of their cancelling sum.
 *   fp32  rel = 1e-5: both sides sum fp32 products in fp32, only the order
 *         differs; the error grows like 2^-24 sqrt(K) (measured: ~1e-7 of S).
 *         A TF32 slip in fp32 mode (2^-11 per input) exceeds it at K = 1024.
 *   tf32  rel = 2^-9 + 1e-5: TF32 keeps 10 of the 23 mantissa bits; an input
 *         rounded (or truncated: the tensor cores may simply drop the low bits)
 *         is off by at most 2^-10 relative, a product by at most 2^-9 (+2^-20),
 *         plus the fp32 accumulation as above.
 *   bf16  rel = 2^-7 + 1e-5: bfloat16 keeps 7 mantissa bits (8 with the implicit
 *         one); cublas.cu rounds each input to nearest: at most 2^-8 relative
 *         per input, 2^-7 (+2^-16) per product (exact in fp32), plus the fp32
 *         accumulation.
 *   tf32x3 rel = 2^-20 + 1e-5: each input split into two TF32 values to within
 *         2^-22 relative, the small x small term (2^-22) dropped (cublas.cu), plus
 *         the fp32 accumulation as above.
 *   db    (ffnn's own bias-gradient kernel in every precision) rel = 1e-5 of
 *         sum_b |dz|.
 * These are worst-case bounds; the measured errors are far smaller, and the
 * precision test checks that they are ordered fp32 << tf32 << bf16.
 *
 * Every test SKIPs when the build has no CUDA or the machine has no GPU.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "check.h"
#include "test_fixtures.h"
#include "strategy/strategy.h"
#include "test_backend_ctx.h"
#include "ffnn.h"
#include "test_numeric.h"

#define REL_FP32 1e-5
#define REL_TF32 (1.0 / 512.0 + 1e-5) /* 2^-9: TF32 products           */
#define REL_BF16 (1.0 / 128.0 + 1e-5) /* 2^-7: bfloat16 products       */
#define REL_TF32X3 (1.0 / 1048576.0 + 1e-5) /* 2^-20: split products (cublas.cu) */

static double precision_rel(ffnn_precision p)
{
    return p == FFNN_PRECISION_TF32     ? REL_TF32
           : p == FFNN_PRECISION_BF16   ? REL_BF16
           : p == FFNN_PRECISION_TF32X3 ? REL_TF32X3
                                        : REL_FP32;
}

/* ------------------------------------------------------------------ buffers */

/* Host and device buffers of one test, freed together by pool_free. */
enum { MAX_BUFS = 48 };
typedef struct pool {
    const ffnn_backend_ops *gpu;
    void *ctx;             /* the cuda context the device buffers belong to */
    void *dev[MAX_BUFS];
    size_t ndev;
    void *host[MAX_BUFS];
    size_t nhost;
} pool;

static void pool_free(pool *p)
{
    for (size_t i = 0; i < p->ndev; ++i) p->gpu->release(p->ctx, p->dev[i]);
    for (size_t i = 0; i < p->nhost; ++i) free(p->host[i]);
    p->ndev = p->nhost = 0;
}

/* n floats of host memory owned by p (NULL when out of memory or slots). */
static float *host_f32(pool *p, size_t n)
{
    if (p->nhost == MAX_BUFS) return NULL;
    float *h = (float *)malloc((n > 0 ? n : 1) * sizeof(float));
    if (h != NULL) p->host[p->nhost++] = h;
    return h;
}

/* n floats of device memory owned by p: a copy of src, or NaN (0xFF bytes) when
 * src is NULL. NULL on any failure (the message in ffnn_last_error()). */
static float *dev_f32(pool *p, const float *src, size_t n)
{
    if (p->ndev == MAX_BUFS) return NULL;
    void *d = NULL;
    if (p->gpu->alloc(p->ctx, n * sizeof(float), &d) != FFNN_OK) return NULL;
    p->dev[p->ndev++] = d;
    ffnn_status st;
    if (src != NULL) {
        st = p->gpu->upload(p->ctx, d, src, n * sizeof(float));
    } else {
        float *nan = poisoned(n);
        if (nan == NULL) return NULL;
        st = p->gpu->upload(p->ctx, d, nan, n * sizeof(float)); /* staged: may free now */
        free(nan);
    }
    return st == FFNN_OK ? (float *)d : NULL;
}

/* Fill the device buffer d [n] with NaN again (before an op writes it). */
static ffnn_status repoison(pool *p, float *d, size_t n)
{
    float *nan = poisoned(n);
    if (nan == NULL) return FFNN_ERR_NO_MEMORY;
    ffnn_status st = p->gpu->upload(p->ctx, d, nan, n * sizeof(float));
    free(nan);
    return st;
}

/* The device buffer d [n] into a new host buffer of p (NULL on failure). */
static float *download_f32(pool *p, const float *d, size_t n)
{
    float *h = host_f32(p, n);
    if (h == NULL || p->gpu->download(p->ctx, h, d, n * sizeof(float)) != FFNN_OK) return NULL;
    return h;
}

/* |v| element-wise into a new host buffer of p. */
static float *abs_host(pool *p, const float *v, size_t n)
{
    float *a = host_f32(p, n);
    if (a != NULL)
        for (size_t i = 0; i < n; ++i) a[i] = fabsf(v[i]);
    return a;
}

/* 1 when |got - want| <= rel * S everywhere (NaN fails); *worst (may be NULL)
 * gets max |got - want| / S (0 where S = 0 and got = want). Otherwise prints how
 * many differ and the first one, and returns 0. */
static int within_bound(const char *what, const float *got, const float *want, const float *S,
                        size_t n, double rel, double *worst)
{
    size_t bad = 0, first = 0;
    double max_ratio = 0.0;
    for (size_t i = 0; i < n; ++i) {
        const double diff = fabs((double)got[i] - (double)want[i]);
        const double bound = rel * (double)S[i];
        if (!(diff <= bound)) {
            if (bad == 0) first = i;
            ++bad;
        }
        const double ratio = S[i] > 0.0f ? diff / (double)S[i] : (diff == 0.0 ? 0.0 : INFINITY);
        if (ratio > max_ratio || ratio != ratio) max_ratio = ratio;
    }
    if (worst != NULL) *worst = max_ratio;
    if (bad == 0) return 1;
    fprintf(stderr,
            "    %s: %zu of %zu values differ; first at [%zu]: got %.9g want %.9g "
            "(bound %.3g = %.3g * S); largest |diff|/S %.3g\n",
            what, bad, n, first, (double)got[first], (double)want[first],
            rel * (double)S[first], rel, max_ratio);
    return 0;
}

/* A cuda context of the given strategy in *ctx; FFNN_OK or the create error. */
static ffnn_status make_ctx(const ffnn_backend_ops *gpu, ffnn_strategy kernels, void **ctx)
{
    *ctx = NULL;
    ffnn_status st = test_ctx(gpu, kernels, 1, ctx);
    if (st != FFNN_OK) *ctx = NULL;
    return st;
}

/* ------------------------------------------------------------------ dense vs cpu */

/* The seed-000 layer, a square 1024 one, odd sizes (no multiple of 4: unaligned
 * leading dimensions), edge cases; two random shapes are added per run. */
static const dense_shape fixed_shapes[] = {
    {64, 784, 256}, {1024, 1024, 1024}, {37, 129, 65}, {1, 1, 1},
    {1, 784, 10},   {257, 17, 1},       {65, 256, 10}, {3, 5, 300},
};
enum { FIXED = sizeof fixed_shapes / sizeof fixed_shapes[0], RANDOM = 2 };

/* One shape: fresh inputs, the cpu reference and the bounds S once, then the GPU
 * forward (with bias) and backward (dx, dW, db) in fp32, tf32, bf16. */
static test_result dense_shape_case(const ffnn_backend_ops *gpu, void *gctx, void *omp_ctx,
                                    rng *r, dense_shape s)
{
    const ffnn_backend_ops *cpu = &ffnn_cpu_backend;
    const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
    char what[160];
    pool p = {gpu, gctx, {0}, 0, {0}, 0};
    test_result result = TEST_FAIL;

    float *x = host_f32(&p, nx), *W = host_f32(&p, nw), *b = host_f32(&p, s.out),
          *dz = host_f32(&p, nz);
    float *z = host_f32(&p, nz), *dW = host_f32(&p, nw), *db = host_f32(&p, s.out),
          *dx = host_f32(&p, nx);
    float *Sz = host_f32(&p, nz), *SdW = host_f32(&p, nw), *Sdb = host_f32(&p, s.out),
          *Sdx = host_f32(&p, nx);
    if (!x || !W || !b || !dz || !z || !dW || !db || !dx || !Sz || !SdW || !Sdb || !Sdx) {
        fprintf(stderr, "    out of host memory\n");
        goto done;
    }
    fill_uniform(r, x, nx, -1.0f, 1.0f);
    fill_uniform(r, W, nw, -1.0f, 1.0f);
    fill_uniform(r, b, s.out, -1.0f, 1.0f);
    fill_uniform(r, dz, nz, -1.0f, 1.0f);

    /* The reference, and S: the same ops on |inputs| (omp: only a bound). */
    if (cpu->dense_forward(NULL, x, W, b, z, s.batch, s.in, s.out) != FFNN_OK ||
        cpu->dense_backward(NULL, x, W, dz, dx, dW, db, s.batch, s.in, s.out) != FFNN_OK) {
        fprintf(stderr, "    cpu reference failed: %s\n", ffnn_last_error());
        goto done;
    }
    {
        float *ax = abs_host(&p, x, nx), *aW = abs_host(&p, W, nw), *ab = abs_host(&p, b, s.out),
              *adz = abs_host(&p, dz, nz);
        if (!ax || !aW || !ab || !adz ||
            ffnn_omp_backend.dense_forward(omp_ctx, ax, aW, ab, Sz, s.batch, s.in, s.out) !=
                FFNN_OK ||
            ffnn_omp_backend.dense_backward(omp_ctx, ax, aW, adz, Sdx, SdW, Sdb, s.batch, s.in,
                                            s.out) != FFNN_OK) {
            fprintf(stderr, "    bounds failed: %s\n", ffnn_last_error());
            goto done;
        }
    }

    float *d_x = dev_f32(&p, x, nx), *d_W = dev_f32(&p, W, nw), *d_b = dev_f32(&p, b, s.out),
          *d_dz = dev_f32(&p, dz, nz);
    float *d_z = dev_f32(&p, NULL, nz), *d_dW = dev_f32(&p, NULL, nw),
          *d_db = dev_f32(&p, NULL, s.out), *d_dx = dev_f32(&p, NULL, nx);
    if (!d_x || !d_W || !d_b || !d_dz || !d_z || !d_dW || !d_db || !d_dx) {
        fprintf(stderr, "    device buffers: %s\n", ffnn_last_error());
        goto done;
    }

    static const ffnn_precision precisions[] = {FFNN_PRECISION_FP32, FFNN_PRECISION_TF32,
                                                FFNN_PRECISION_BF16, FFNN_PRECISION_TF32X3};
    int ok = 1;
    for (size_t i = 0; i < sizeof precisions / sizeof precisions[0]; ++i) {
        const ffnn_precision prec = precisions[i];
        const double rel = precision_rel(prec);
        const char *pn = ffnn_precision_name(prec);
        if (gpu->device->set_precision(gctx, prec) != FFNN_OK ||
            repoison(&p, d_z, nz) != FFNN_OK || repoison(&p, d_dW, nw) != FFNN_OK ||
            repoison(&p, d_db, s.out) != FFNN_OK || repoison(&p, d_dx, nx) != FFNN_OK ||
            gpu->dense_forward(gctx, d_x, d_W, d_b, d_z, s.batch, s.in, s.out) != FFNN_OK ||
            gpu->dense_backward(gctx, d_x, d_W, d_dz, d_dx, d_dW, d_db, s.batch, s.in,
                                s.out) != FFNN_OK) {
            fprintf(stderr, "    %zux%zu->%zu %s: %s\n", s.batch, s.in, s.out, pn,
                    ffnn_last_error());
            goto done;
        }
        const float *g_z = download_f32(&p, d_z, nz), *g_dW = download_f32(&p, d_dW, nw),
                    *g_db = download_f32(&p, d_db, s.out), *g_dx = download_f32(&p, d_dx, nx);
        if (!g_z || !g_dW || !g_db || !g_dx) {
            fprintf(stderr, "    download: %s\n", ffnn_last_error());
            goto done;
        }
        snprintf(what, sizeof what, "%zux%zu->%zu %s z", s.batch, s.in, s.out, pn);
        ok &= within_bound(what, g_z, z, Sz, nz, rel, NULL);
        snprintf(what, sizeof what, "%zux%zu->%zu %s dW", s.batch, s.in, s.out, pn);
        ok &= within_bound(what, g_dW, dW, SdW, nw, rel, NULL);
        snprintf(what, sizeof what, "%zux%zu->%zu %s dx", s.batch, s.in, s.out, pn);
        ok &= within_bound(what, g_dx, dx, Sdx, nx, rel, NULL);
        snprintf(what, sizeof what, "%zux%zu->%zu %s db", s.batch, s.in, s.out, pn);
        ok &= within_bound(what, g_db, db, Sdb, s.out, REL_FP32, NULL);
        /* Host copies of this precision are no longer needed. */
        for (int k = 0; k < 4; ++k) free(p.host[--p.nhost]);
    }
    result = ok ? TEST_PASS : TEST_FAIL;
done:
    pool_free(&p);
    return result;
}

TEST("cublas_dense_vs_cpu", test_cublas_dense_vs_cpu)
{
    SKIP_WITHOUT_GPU();
    const ffnn_backend_ops *gpu = ffnn_cuda_backend();
    CHECK(gpu != NULL, "ffnn_cuda_backend() is NULL although ffnn_has_cuda() is 1");
    void *gctx = NULL, *omp_ctx = NULL;
    CHECK_OK(make_ctx(gpu, FFNN_STRATEGY_CUBLAS, &gctx));
    if (test_ctx(&ffnn_omp_backend, FFNN_STRATEGY_TILED, 0, &omp_ctx) != FFNN_OK) {
        gpu->destroy(gctx);
        CHECK(0, "omp create: %s", ffnn_last_error());
    }
    rng r = {0x5eed0c0b1a5ULL};
    test_result result = TEST_PASS;
    for (size_t i = 0; i < FIXED + RANDOM && result == TEST_PASS; ++i) {
        dense_shape s = i < FIXED ? fixed_shapes[i]
                                  : (dense_shape){rng_between(&r, 1, 300),
                                                  rng_between(&r, 1, 900),
                                                  rng_between(&r, 1, 300)};
        result = dense_shape_case(gpu, gctx, omp_ctx, &r, s);
    }
    ffnn_omp_backend.destroy(omp_ctx);
    gpu->destroy(gctx);
    return result;
}

/* ------------------------------------------------------------------ precision */

/* z = x W^T (no bias) at batch 512, 1024 -> 512 in fp32, tf32, bf16, then fp32 and
 * tf32 again, then tf32x3: the repeats give the same bits (determinism, and fp32
 * really comes back after tf32); tf32 and tf32x3 differ from fp32 in most values,
 * tf32x3's error is fp32's (<= 8x) and under 1/16 of tf32's; the largest error
 * against the cpu reference, as a fraction of S, is ordered fp32 x8 < tf32 x2 <
 * bf16 (TF32 drops 13 mantissa bits, bf16 3 more: ~8x the error when both round,
 * ~4x when TF32 truncates), so each mode is really on. */
TEST("cublas_precision_modes", test_cublas_precision_modes)
{
    SKIP_WITHOUT_GPU();
    const ffnn_backend_ops *gpu = ffnn_cuda_backend();
    CHECK(gpu != NULL, "ffnn_cuda_backend() is NULL");
    const size_t batch = 512, in = 1024, out = 512;
    const size_t nx = batch * in, nw = out * in, nz = batch * out;
    void *gctx = NULL, *omp_ctx = NULL;
    CHECK_OK(make_ctx(gpu, FFNN_STRATEGY_CUBLAS, &gctx));
    if (test_ctx(&ffnn_omp_backend, FFNN_STRATEGY_TILED, 0, &omp_ctx) != FFNN_OK) {
        gpu->destroy(gctx);
        CHECK(0, "omp create: %s", ffnn_last_error());
    }
    pool p = {gpu, gctx, {0}, 0, {0}, 0};
    test_result result = TEST_FAIL;
    rng r = {0x7f32bf16ULL};
    float *x = host_f32(&p, nx), *W = host_f32(&p, nw), *z = host_f32(&p, nz),
          *S = host_f32(&p, nz);
    float *ax = NULL, *aW = NULL, *d_x = NULL, *d_W = NULL, *d_z = NULL;
    static const ffnn_precision order[] = {FFNN_PRECISION_FP32, FFNN_PRECISION_TF32,
                                           FFNN_PRECISION_BF16, FFNN_PRECISION_FP32,
                                           FFNN_PRECISION_TF32, FFNN_PRECISION_TF32X3};
    enum { RUNS = sizeof order / sizeof order[0] };
    float *got[RUNS] = {0};
    double worst[RUNS] = {0};
    if (!x || !W || !z || !S) goto done;
    fill_uniform(&r, x, nx, -1.0f, 1.0f);
    fill_uniform(&r, W, nw, -1.0f, 1.0f);
    ax = abs_host(&p, x, nx);
    aW = abs_host(&p, W, nw);
    if (!ax || !aW ||
        ffnn_cpu_backend.dense_forward(NULL, x, W, NULL, z, batch, in, out) != FFNN_OK ||
        ffnn_omp_backend.dense_forward(omp_ctx, ax, aW, NULL, S, batch, in, out) != FFNN_OK) {
        fprintf(stderr, "    host side failed: %s\n", ffnn_last_error());
        goto done;
    }
    d_x = dev_f32(&p, x, nx);
    d_W = dev_f32(&p, W, nw);
    d_z = dev_f32(&p, NULL, nz);
    if (!d_x || !d_W || !d_z) {
        fprintf(stderr, "    device buffers: %s\n", ffnn_last_error());
        goto done;
    }
    for (size_t i = 0; i < RUNS; ++i) {
        if (gpu->device->set_precision(gctx, order[i]) != FFNN_OK ||
            repoison(&p, d_z, nz) != FFNN_OK ||
            gpu->dense_forward(gctx, d_x, d_W, NULL, d_z, batch, in, out) != FFNN_OK ||
            (got[i] = download_f32(&p, d_z, nz)) == NULL) {
            fprintf(stderr, "    %s run: %s\n", ffnn_precision_name(order[i]), ffnn_last_error());
            goto done;
        }
        char what[64];
        snprintf(what, sizeof what, "512x1024->512 %s z (run %zu)",
                 ffnn_precision_name(order[i]), i);
        if (!within_bound(what, got[i], z, S, nz, precision_rel(order[i]), &worst[i]))
            goto done;
    }
    fprintf(stderr, "    largest |err|/S against the cpu: fp32 %.3g, tf32 %.3g, bf16 %.3g\n",
            worst[0], worst[1], worst[2]);
    if (memcmp(got[0], got[3], nz * sizeof(float)) != 0) {
        fprintf(stderr, "    fp32 after tf32/bf16 differs from the first fp32 run\n");
        goto done;
    }
    if (memcmp(got[1], got[4], nz * sizeof(float)) != 0) {
        fprintf(stderr, "    tf32 rerun gives other bits\n");
        goto done;
    }
    size_t differ = 0;
    for (size_t i = 0; i < nz; ++i) differ += memcmp(&got[0][i], &got[1][i], sizeof(float)) != 0;
    if (differ < nz / 2) {
        fprintf(stderr, "    tf32 differs from fp32 in only %zu of %zu values\n", differ, nz);
        goto done;
    }
    if (!(worst[1] > 8.0 * worst[0]) || !(worst[2] > 2.0 * worst[1])) {
        fprintf(stderr, "    errors not ordered fp32 x8 < tf32 x2 < bf16: is a mode off?\n");
        goto done;
    }
    /* tf32x3: fp32's accuracy (within 8x of fp32's error; tf32's is ~100x: on the
     * H200 fp32 3.9e-7, tf32x3 8.3e-7, tf32 5.4e-5), under 1/16 of tf32's, and other
     * bits than fp32 in most values (the tensor cores' order: it really runs) */
    fprintf(stderr, "    tf32x3 %.3g\n", worst[5]);
    differ = 0;
    for (size_t i = 0; i < nz; ++i) differ += memcmp(&got[0][i], &got[5][i], sizeof(float)) != 0;
    if (!(worst[5] <= 8.0 * worst[0]) || !(16.0 * worst[5] < worst[1]) || differ < nz / 2) {
        fprintf(stderr, "    tf32x3: error %.3g against fp32 %.3g and tf32 %.3g, %zu of %zu "
                "values differ from fp32: is the split off?\n", worst[5], worst[0], worst[1],
                differ, nz);
        goto done;
    }
    result = TEST_PASS;
done:
    pool_free(&p);
    ffnn_omp_backend.destroy(omp_ctx);
    gpu->destroy(gctx);
    return result;
}

/* ------------------------------------------------------------------ capture */

/* A fresh cublas context in precision prec whose first matmul is queued inside a
 * stream capture (the cuBLAS handle, its workspace and for bf16 the scratch are
 * made then): capture forward (with bias) and backward, launch the graph twice,
 * and compare with the same ops run directly: the same bits. */
static test_result capture_case(const ffnn_backend_ops *gpu, ffnn_precision prec)
{
    const size_t batch = 64, in = 784, out = 256;
    const size_t nx = batch * in, nw = out * in, nz = batch * out;
    void *gctx = NULL, *graph = NULL;
    CHECK_OK(make_ctx(gpu, FFNN_STRATEGY_CUBLAS, &gctx));
    if (gpu->device->set_precision(gctx, prec) != FFNN_OK) {
        gpu->destroy(gctx);
        CHECK(0, "set_precision(%s): %s", ffnn_precision_name(prec), ffnn_last_error());
    }
    pool p = {gpu, gctx, {0}, 0, {0}, 0};
    test_result result = TEST_FAIL;
    rng r = {0x9a0bULL};
    float *x = host_f32(&p, nx), *W = host_f32(&p, nw), *b = host_f32(&p, out),
          *dz = host_f32(&p, nz);
    if (!x || !W || !b || !dz) goto done;
    fill_uniform(&r, x, nx, -1.0f, 1.0f);
    fill_uniform(&r, W, nw, -1.0f, 1.0f);
    fill_uniform(&r, b, out, -1.0f, 1.0f);
    fill_uniform(&r, dz, nz, -1.0f, 1.0f);
    float *d_x = dev_f32(&p, x, nx), *d_W = dev_f32(&p, W, nw), *d_b = dev_f32(&p, b, out),
          *d_dz = dev_f32(&p, dz, nz);
    float *d_z = dev_f32(&p, NULL, nz), *d_dW = dev_f32(&p, NULL, nw),
          *d_dx = dev_f32(&p, NULL, nx);
    if (!d_x || !d_W || !d_b || !d_dz || !d_z || !d_dW || !d_dx ||
        gpu->synchronize(gctx) != FFNN_OK) {
        fprintf(stderr, "    device buffers: %s\n", ffnn_last_error());
        goto done;
    }
    ffnn_status st = gpu->graph->capture_begin(gctx);
    if (st == FFNN_OK) {
        st = gpu->dense_forward(gctx, d_x, d_W, d_b, d_z, batch, in, out);
        if (st == FFNN_OK)
            st = gpu->dense_backward(gctx, d_x, d_W, d_dz, d_dx, d_dW, NULL, batch, in, out);
        if (st != FFNN_OK) fprintf(stderr, "    op under capture: %s\n", ffnn_last_error());
        /* End the capture whatever happened, so the stream is usable again. */
        ffnn_status end = gpu->graph->capture_end(gctx, &graph);
        if (st == FFNN_OK && end != FFNN_OK) {
            st = end;
            fprintf(stderr, "    capture_end: %s\n", ffnn_last_error());
        }
    } else {
        fprintf(stderr, "    capture_begin: %s\n", ffnn_last_error());
    }
    if (st != FFNN_OK) goto done;
    float *gz = NULL, *gdW = NULL, *gdx = NULL;
    for (int launch = 0; launch < 2; ++launch) {
        if (repoison(&p, d_z, nz) != FFNN_OK || repoison(&p, d_dW, nw) != FFNN_OK ||
            repoison(&p, d_dx, nx) != FFNN_OK || gpu->graph->graph_launch(gctx, graph) != FFNN_OK ||
            (gz = download_f32(&p, d_z, nz)) == NULL ||
            (gdW = download_f32(&p, d_dW, nw)) == NULL ||
            (gdx = download_f32(&p, d_dx, nx)) == NULL) {
            fprintf(stderr, "    graph launch %d: %s\n", launch, ffnn_last_error());
            goto done;
        }
    }
    if (repoison(&p, d_z, nz) != FFNN_OK || repoison(&p, d_dW, nw) != FFNN_OK ||
        repoison(&p, d_dx, nx) != FFNN_OK ||
        gpu->dense_forward(gctx, d_x, d_W, d_b, d_z, batch, in, out) != FFNN_OK ||
        gpu->dense_backward(gctx, d_x, d_W, d_dz, d_dx, d_dW, NULL, batch, in, out) != FFNN_OK) {
        fprintf(stderr, "    direct run: %s\n", ffnn_last_error());
        goto done;
    }
    float *hz = download_f32(&p, d_z, nz), *hdW = download_f32(&p, d_dW, nw),
          *hdx = download_f32(&p, d_dx, nx);
    if (!hz || !hdW || !hdx) goto done;
    if (memcmp(gz, hz, nz * sizeof(float)) != 0 || memcmp(gdW, hdW, nw * sizeof(float)) != 0 ||
        memcmp(gdx, hdx, nx * sizeof(float)) != 0) {
        fprintf(stderr, "    %s: graph replay and direct run give other bits\n",
                ffnn_precision_name(prec));
        goto done;
    }
    result = TEST_PASS;
done:
    if (graph != NULL) gpu->graph->graph_free(gctx, graph);
    pool_free(&p);
    gpu->destroy(gctx);
    if (result != TEST_PASS) fprintf(stderr, "    (precision %s)\n", ffnn_precision_name(prec));
    return result;
}

TEST("cublas_graph_capture", test_cublas_graph_capture)
{
    SKIP_WITHOUT_GPU();
    const ffnn_backend_ops *gpu = ffnn_cuda_backend();
    CHECK(gpu != NULL, "ffnn_cuda_backend() is NULL");
    static const ffnn_precision precs[] = {FFNN_PRECISION_FP32, FFNN_PRECISION_TF32,
                                           FFNN_PRECISION_BF16};
    for (size_t i = 0; i < sizeof precs / sizeof precs[0]; ++i)
        if (capture_case(gpu, precs[i]) != TEST_PASS) return TEST_FAIL;
    return TEST_PASS;
}

/* ------------------------------------------------------------------ set_precision */

/* tf32 and bf16 only with the cublas, cublaslt, fused and graph strategies, tf32x3
 * with cublas and cublaslt (auto: cublaslt) (the strategies' rule,
 * strategy/table.c: needs no GPU); fp32 everywhere; and
 * the backend refuses an unknown precision value. */
TEST("cublas_precision_strategy_rule", test_cublas_set_precision_strategies)
{
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("784-64relu-10", &m));
    ffnn_train_config cfg = ffnn_train_config_default();
    const unsigned gpu_caps = FFNN_CAP_DEVICE | FFNN_CAP_TF32 | FFNN_CAP_BF16;
    static const struct { ffnn_strategy s; int tf32, bf16, tf32x3; } rule[] = {
        {FFNN_STRATEGY_TILED, 0, 0, 0},  {FFNN_STRATEGY_NAIVE, 0, 0, 0},
        {FFNN_STRATEGY_FUSED, 1, 1, 0},  {FFNN_STRATEGY_GRAPH, 1, 1, 0},
        {FFNN_STRATEGY_CUBLAS, 1, 1, 1}, {FFNN_STRATEGY_PERSISTENT, 1, 0, 0},
        {FFNN_STRATEGY_CUBLASLT, 1, 1, 1}, {FFNN_STRATEGY_AUTO, 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof rule / sizeof rule[0]; ++i) {
        const ffnn_strategy_impl *chosen = NULL;
        cfg.strategy = rule[i].s;
        cfg.precision = FFNN_PRECISION_TF32;
        const ffnn_status tf = ffnn_strategy_choose(m, &cfg, gpu_caps, &chosen);
        const int names_cublas = strstr(ffnn_last_error(), "cublas") != NULL;
        cfg.precision = FFNN_PRECISION_BF16;
        const ffnn_status bf = ffnn_strategy_choose(m, &cfg, gpu_caps, &chosen);
        cfg.precision = FFNN_PRECISION_TF32X3;
        const ffnn_status x3 = ffnn_strategy_choose(m, &cfg, gpu_caps, &chosen);
        CHECK(rule[i].tf32x3 ? x3 == FFNN_OK && (chosen->id == FFNN_STRATEGY_CUBLAS ||
                                                   chosen->id == FFNN_STRATEGY_CUBLASLT)
                             : x3 == FFNN_ERR_UNSUPPORTED && strstr(ffnn_last_error(), "cublas"),
              "tf32x3 on --strategy %s: status %d", ffnn_strategy_name(rule[i].s), (int)x3);
        cfg.precision = FFNN_PRECISION_FP32;
        const ffnn_status fp = ffnn_strategy_choose(m, &cfg, gpu_caps, &chosen);
        const char *name = ffnn_strategy_name(rule[i].s);
        CHECK(rule[i].tf32 ? tf == FFNN_OK : tf == FFNN_ERR_UNSUPPORTED && names_cublas,
              "tf32 on --strategy %s: status %d", name, (int)tf);
        CHECK(rule[i].bf16 ? bf == FFNN_OK : bf == FFNN_ERR_UNSUPPORTED,
              "bf16 on --strategy %s: status %d", name, (int)bf);
        CHECK(fp == FFNN_OK, "fp32 on --strategy %s: status %d", name, (int)fp);
    }
    ffnn_model_free(m);
    return TEST_PASS;
}

/* The backend takes fp32, tf32, bf16 and tf32x3 on a live context, refuses others. */
TEST("cublas_set_precision_values", test_cublas_set_precision_values)
{
    SKIP_WITHOUT_GPU();
    const ffnn_backend_ops *gpu = ffnn_cuda_backend();
    CHECK(gpu != NULL, "ffnn_cuda_backend() is NULL");
    void *ctx = NULL;
    CHECK_OK(make_ctx(gpu, FFNN_STRATEGY_CUBLAS, &ctx));
    const ffnn_status tf = gpu->device->set_precision(ctx, FFNN_PRECISION_TF32);
    const ffnn_status bf = gpu->device->set_precision(ctx, FFNN_PRECISION_BF16);
    const ffnn_status x3 = gpu->device->set_precision(ctx, FFNN_PRECISION_TF32X3);
    const ffnn_status fp = gpu->device->set_precision(ctx, FFNN_PRECISION_FP32);
    const ffnn_status bad = gpu->device->set_precision(ctx, (ffnn_precision)7);
    gpu->destroy(ctx);
    CHECK(tf == FFNN_OK && bf == FFNN_OK && x3 == FFNN_OK && fp == FFNN_OK,
          "cublas set_precision tf32/bf16/tf32x3/fp32: %d %d %d %d", (int)tf, (int)bf, (int)x3,
          (int)fp);
    CHECK(bad == FFNN_ERR_INVALID_ARGUMENT, "set_precision(7): status %d", (int)bad);
    return TEST_PASS;
}
