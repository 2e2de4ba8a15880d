/*
 * test_cuda.c - suite "cuda": every op of the CUDA backend against the CPU
 * reference backend (ffnn_cpu_backend, called on host buffers), on fresh random
 * data per shape, for both matmul strategies (naive and tiled).
 *
 * Each GPU output buffer is filled with 0xFF bytes (a NaN for floats, 255 for
 * flags) before the op runs, so an element the kernel forgets to write fails the
 * comparison. A mismatch prints the op, the shape, how many values differ and the
 * first one (index, got, want, tolerance).
 *
 * Tolerances: |got - want| <= atol + rtol * |want|
 *   matmuls   atol = 1e-5 * (1 + sqrt(K)), rtol = 1e-4 (K = the summed length:
 *             in for z, out for dx, batch for dW and db). The GPU sums with fmaf
 *             in k order, the CPU in its own order; with inputs in [-1, 1] the
 *             rounding difference grows like eps * K, far below this.
 *   element-wise  atol = 1e-6, rtol = 1e-5 (expf/tanhf may differ by 2 ulp).
 *   losses    row_loss atol = 1e-5, rtol = 1e-5; dout atol = 1e-6, rtol = 1e-5;
 *             row_correct exactly; with labels and with float targets (bce, mse).
 *   gather    exactly (a copy, or one division by 255), for uint8 and float
 *             features, labels and float targets.
 *   softmax_ce_head (the output layer and its loss in one op): at head_body; its
 *             tensor-core logits on a tf32 context: at head_tf32_body.
 *
 * Every test SKIPs when the build has no CUDA or the machine has no GPU.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cpu/cpu_ops.h"
#include "check.h"
#include "core/activation.h"
#include "core/dropout.h"
#include "test_backend_ctx.h"
#include "ffnn.h"

/* ------------------------------------------------------------------ random numbers */

/* xorshift64*: a local generator, seeded with a fixed value per test. */
typedef struct rng {
    uint64_t state;
} rng;

static uint64_t rng_next(rng *r)
{
    r->state ^= r->state >> 12;
    r->state ^= r->state << 25;
    r->state ^= r->state >> 27;
    return r->state * 2685821657736338717ULL;
}

/* Uniform in [lo, hi), 24 random bits. */
static float rng_uniform(rng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)((double)(rng_next(r) >> 40) / 16777216.0);
}

/* Uniform in [0, n), n >= 1. */
static size_t rng_below(rng *r, size_t n) { return (size_t)(rng_next(r) % n); }

/* Uniform in [lo, hi] (inclusive). */
static size_t rng_between(rng *r, size_t lo, size_t hi) { return lo + rng_below(r, hi - lo + 1); }

static void fill_uniform(rng *r, float *v, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; ++i) v[i] = rng_uniform(r, lo, hi);
}

/* ------------------------------------------------------------------ fixture */

/* What one test holds: both backends with their contexts and the buffers of the
 * current shape, all freed by fixture_reset/fixture_free whatever the outcome. */
enum { MAX_BUFFERS = 64 };
typedef struct fixture {
    const ffnn_backend_ops *gpu; /* ffnn_cuda_backend()           */
    const ffnn_backend_ops *cpu; /* &ffnn_cpu_backend (reference) */
    void *gpu_ctx, *cpu_ctx;
    void *dev[MAX_BUFFERS]; /* device buffers of the current shape */
    size_t ndev;
    void *host[MAX_BUFFERS]; /* host buffers of the current shape */
    size_t nhost;
} fixture;

/* Free the buffers of the current shape; the contexts stay. */
static void fixture_reset(fixture *fx)
{
    for (size_t i = 0; i < fx->ndev; ++i) fx->gpu->release(fx->gpu_ctx, fx->dev[i]);
    for (size_t i = 0; i < fx->nhost; ++i) free(fx->host[i]);
    fx->ndev = fx->nhost = 0;
}

static void fixture_free(fixture *fx)
{
    if (fx->gpu_ctx != NULL) {
        fixture_reset(fx);
        fx->gpu->destroy(fx->gpu_ctx);
    }
    if (fx->cpu_ctx != NULL) fx->cpu->destroy(fx->cpu_ctx);
}

/* A host buffer of `bytes` (at least 1) owned by the fixture; NULL when out of
 * memory or slots (then the test fails on the NULL). */
static void *host_buf(fixture *fx, size_t bytes)
{
    if (fx->nhost == MAX_BUFFERS) return NULL;
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p != NULL) fx->host[fx->nhost++] = p;
    return p;
}

/* A device buffer owned by the fixture: a copy of src when src is non-NULL, else
 * filled with 0xFF bytes (NaN as float) so that unwritten outputs show. */
static ffnn_status dev_buf(fixture *fx, const void *src, size_t bytes, void **out)
{
    *out = NULL;
    if (fx->ndev == MAX_BUFFERS) return FFNN_ERR_NO_MEMORY;
    void *d = NULL;
    ffnn_status st = fx->gpu->alloc(fx->gpu_ctx, bytes, &d);
    if (st != FFNN_OK) return st;
    fx->dev[fx->ndev++] = d;
    if (src != NULL) {
        st = fx->gpu->upload(fx->gpu_ctx, d, src, bytes);
    } else {
        unsigned char *poison = (unsigned char *)malloc(bytes > 0 ? bytes : 1);
        if (poison == NULL) return FFNN_ERR_NO_MEMORY;
        memset(poison, 0xFF, bytes);
        st = fx->gpu->upload(fx->gpu_ctx, d, poison, bytes); /* staged: may free now */
        free(poison);
    }
    if (st != FFNN_OK) return st;
    *out = d;
    return FFNN_OK;
}

/* The float count n of a device buffer into a new host buffer (NULL on error). */
static float *download_f32(fixture *fx, const void *dev, size_t n)
{
    float *h = (float *)host_buf(fx, n * sizeof(float));
    if (h == NULL) return NULL;
    if (fx->gpu->download(fx->gpu_ctx, h, dev, n * sizeof(float)) != FFNN_OK) return NULL;
    return h;
}

static uint8_t *download_u8(fixture *fx, const void *dev, size_t n)
{
    uint8_t *h = (uint8_t *)host_buf(fx, n);
    if (h == NULL) return NULL;
    if (fx->gpu->download(fx->gpu_ctx, h, dev, n) != FFNN_OK) return NULL;
    return h;
}

/* 1 when every |got[i] - want[i]| <= atol + rtol |want[i]| (NaN fails); otherwise
 * prints the count and the first mismatch and returns 0. */
static int close_f32(const char *what, const float *got, const float *want, size_t n,
                     double atol, double rtol)
{
    size_t bad = 0, first = 0;
    double worst = 0.0;
    for (size_t i = 0; i < n; ++i) {
        const double diff = fabs((double)got[i] - (double)want[i]);
        const double tol = atol + rtol * fabs((double)want[i]);
        if (!(diff <= tol)) {
            if (bad == 0) first = i;
            ++bad;
        }
        if (diff > worst || diff != diff) worst = diff;
    }
    if (bad == 0) return 1;
    fprintf(stderr,
            "    %s: %zu of %zu values differ; first at [%zu]: got %.9g want %.9g "
            "(tolerance %.3g); largest |diff| %.3g\n",
            what, bad, n, first, (double)got[first], (double)want[first],
            atol + rtol * fabs((double)want[first]), worst);
    return 0;
}

static int equal_u8(const char *what, const uint8_t *got, const uint8_t *want, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (got[i] != want[i]) {
            fprintf(stderr, "    %s: first difference at [%zu]: got %u want %u\n", what, i,
                    (unsigned)got[i], (unsigned)want[i]);
            return 0;
        }
    }
    return 1;
}

/* Bitwise equality of two float arrays (for determinism). */
static int same_bits_f32(const char *what, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0) {
            fprintf(stderr, "    %s: bits differ at [%zu]: %.9g vs %.9g\n", what, i,
                    (double)a[i], (double)b[i]);
            return 0;
        }
    }
    return 1;
}

static double matmul_atol(size_t K) { return 1e-5 * (1.0 + sqrt((double)K)); }
#define MATMUL_RTOL 1e-4

/* Create both backends, run body, free everything. Skips without CUDA or a GPU. */
typedef test_result (*fixture_body)(fixture *fx);

static test_result with_fixture(char *why, size_t why_size, ffnn_strategy kernels,
                                fixture_body body)
{
    if (!ffnn_has_cuda()) SKIP("build has no CUDA");
    if (ffnn_cuda_device_count() == 0) SKIP("no CUDA GPU");
    fixture fx;
    memset(&fx, 0, sizeof fx);
    fx.gpu = ffnn_cuda_backend();
    fx.cpu = &ffnn_cpu_backend;
    CHECK(fx.gpu != NULL, "ffnn_cuda_backend() is NULL although ffnn_has_cuda() is 1");
    CHECK(ffnn_backend_ops_complete(fx.gpu), "the cuda backend table has an empty entry");
    test_result r = TEST_FAIL;
    ffnn_status st = test_ctx(fx.gpu, kernels, 1, &fx.gpu_ctx);
    if (st != FFNN_OK) {
        fprintf(stderr, "    cuda create(%s) failed: %s\n", ffnn_strategy_name(kernels),
                ffnn_last_error());
        fx.gpu_ctx = NULL;
    } else if ((st = test_ctx(fx.cpu, kernels, 1, &fx.cpu_ctx)) != FFNN_OK) {
        fprintf(stderr, "    cpu create failed: %s\n", ffnn_last_error());
        fx.cpu_ctx = NULL;
    } else {
        r = body(&fx);
    }
    fixture_free(&fx);
    return r;
}

/* ------------------------------------------------------------------ dense */

typedef struct dense_shape {
    size_t batch, in, out;
} dense_shape;

/* Edge cases and the seed-000 layers; random shapes are added per test. */
static const dense_shape dense_fixed_shapes[] = {
    {1, 1, 1},     {17, 784, 256}, {64, 784, 256}, {65, 256, 10},
    {1, 784, 10},  {33, 1, 65},    {257, 17, 1},   {64, 65, 64},
    {60000, 3, 5},
};
enum { DENSE_FIXED = sizeof dense_fixed_shapes / sizeof dense_fixed_shapes[0] };
enum { DENSE_RANDOM = 5 };

/* Shape number i: the fixed ones, then DENSE_RANDOM fresh random ones. */
static dense_shape dense_shape_at(rng *r, size_t i)
{
    if (i < DENSE_FIXED) return dense_fixed_shapes[i];
    dense_shape s = {rng_between(r, 1, 300), rng_between(r, 1, 900), rng_between(r, 1, 300)};
    return s;
}

/* z = x W^T (+ b) for one shape, with and without bias. */
static test_result dense_forward_case(fixture *fx, rng *r, dense_shape s)
{
    const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
    for (int with_bias = 0; with_bias <= 1; ++with_bias) {
        fixture_reset(fx);
        float *x = (float *)host_buf(fx, nx * sizeof(float));     /* [batch, in]  */
        float *W = (float *)host_buf(fx, nw * sizeof(float));     /* [out, in]    */
        float *b = (float *)host_buf(fx, s.out * sizeof(float));  /* [out]        */
        float *z_ref = (float *)host_buf(fx, nz * sizeof(float)); /* [batch, out] */
        CHECK(x && W && b && z_ref, "host allocation failed");
        fill_uniform(r, x, nx, -1.0f, 1.0f);
        fill_uniform(r, W, nw, -1.0f, 1.0f);
        fill_uniform(r, b, s.out, -1.0f, 1.0f);
        CHECK_OK(fx->cpu->dense_forward(fx->cpu_ctx, x, W, with_bias ? b : NULL, z_ref,
                                        s.batch, s.in, s.out));
        void *dx, *dW, *db, *dz;
        CHECK_OK(dev_buf(fx, x, nx * sizeof(float), &dx));
        CHECK_OK(dev_buf(fx, W, nw * sizeof(float), &dW));
        CHECK_OK(dev_buf(fx, b, s.out * sizeof(float), &db));
        CHECK_OK(dev_buf(fx, NULL, nz * sizeof(float), &dz));
        CHECK_OK(fx->gpu->dense_forward(fx->gpu_ctx, (const float *)dx, (const float *)dW,
                                        with_bias ? (const float *)db : NULL, (float *)dz,
                                        s.batch, s.in, s.out));
        const float *z = download_f32(fx, dz, nz);
        CHECK(z != NULL, "download failed: %s", ffnn_last_error());
        CHECK(close_f32("z", z, z_ref, nz, matmul_atol(s.in), MATMUL_RTOL),
              "dense_forward batch=%zu in=%zu out=%zu bias=%d", s.batch, s.in, s.out,
              with_bias);
    }
    return TEST_PASS;
}

/* dW, db, dx for one shape; then again with dx and db NULL. */
static test_result dense_backward_case(fixture *fx, rng *r, dense_shape s)
{
    const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
    fixture_reset(fx);
    float *x = (float *)host_buf(fx, nx * sizeof(float));       /* [batch, in]  */
    float *W = (float *)host_buf(fx, nw * sizeof(float));       /* [out, in]    */
    float *dz = (float *)host_buf(fx, nz * sizeof(float));      /* [batch, out] */
    float *dx_ref = (float *)host_buf(fx, nx * sizeof(float));  /* [batch, in]  */
    float *dW_ref = (float *)host_buf(fx, nw * sizeof(float));  /* [out, in]    */
    float *db_ref = (float *)host_buf(fx, s.out * sizeof(float)); /* [out]      */
    CHECK(x && W && dz && dx_ref && dW_ref && db_ref, "host allocation failed");
    fill_uniform(r, x, nx, -1.0f, 1.0f);
    fill_uniform(r, W, nw, -1.0f, 1.0f);
    fill_uniform(r, dz, nz, -1.0f, 1.0f);
    CHECK_OK(fx->cpu->dense_backward(fx->cpu_ctx, x, W, dz, dx_ref, dW_ref, db_ref, s.batch,
                                     s.in, s.out));

    void *d_x, *d_W, *d_dz, *d_dx, *d_dW, *d_db, *d_dW2;
    CHECK_OK(dev_buf(fx, x, nx * sizeof(float), &d_x));
    CHECK_OK(dev_buf(fx, W, nw * sizeof(float), &d_W));
    CHECK_OK(dev_buf(fx, dz, nz * sizeof(float), &d_dz));
    CHECK_OK(dev_buf(fx, NULL, nx * sizeof(float), &d_dx));
    CHECK_OK(dev_buf(fx, NULL, nw * sizeof(float), &d_dW));
    CHECK_OK(dev_buf(fx, NULL, s.out * sizeof(float), &d_db));
    CHECK_OK(dev_buf(fx, NULL, nw * sizeof(float), &d_dW2));
    CHECK_OK(fx->gpu->dense_backward(fx->gpu_ctx, (const float *)d_x, (const float *)d_W,
                                     (const float *)d_dz, (float *)d_dx, (float *)d_dW,
                                     (float *)d_db, s.batch, s.in, s.out));
    const float *gdx = download_f32(fx, d_dx, nx);
    const float *gdW = download_f32(fx, d_dW, nw);
    const float *gdb = download_f32(fx, d_db, s.out);
    CHECK(gdx && gdW && gdb, "download failed: %s", ffnn_last_error());
    CHECK(close_f32("dW", gdW, dW_ref, nw, matmul_atol(s.batch), MATMUL_RTOL),
          "dense_backward batch=%zu in=%zu out=%zu", s.batch, s.in, s.out);
    CHECK(close_f32("db", gdb, db_ref, s.out, matmul_atol(s.batch), MATMUL_RTOL),
          "dense_backward batch=%zu in=%zu out=%zu", s.batch, s.in, s.out);
    CHECK(close_f32("dx", gdx, dx_ref, nx, matmul_atol(s.out), MATMUL_RTOL),
          "dense_backward batch=%zu in=%zu out=%zu", s.batch, s.in, s.out);

    /* dW only (the first layer: no dx; a layer without bias: no db). */
    CHECK_OK(fx->gpu->dense_backward(fx->gpu_ctx, (const float *)d_x, (const float *)d_W,
                                     (const float *)d_dz, NULL, (float *)d_dW2, NULL,
                                     s.batch, s.in, s.out));
    const float *gdW2 = download_f32(fx, d_dW2, nw);
    CHECK(gdW2 != NULL, "download failed: %s", ffnn_last_error());
    CHECK(close_f32("dW (dx, db NULL)", gdW2, dW_ref, nw, matmul_atol(s.batch), MATMUL_RTOL),
          "dense_backward batch=%zu in=%zu out=%zu", s.batch, s.in, s.out);
    return TEST_PASS;
}

static test_result dense_forward_body(fixture *fx)
{
    rng r = {0x9E3779B97F4A7C15ULL};
    for (size_t i = 0; i < DENSE_FIXED + DENSE_RANDOM; ++i) {
        test_result t = dense_forward_case(fx, &r, dense_shape_at(&r, i));
        if (t != TEST_PASS) return t;
    }
    /* Taller than 65535 row tiles of 64 (and 65535 row blocks of 16 in the naive
     * kernel): exercises the row-tile stride of both grids. */
    const dense_shape tall = {4300000, 2, 3};
    return dense_forward_case(fx, &r, tall);
}

static test_result dense_backward_body(fixture *fx)
{
    rng r = {0xD1B54A32D192ED03ULL};
    for (size_t i = 0; i < DENSE_FIXED + DENSE_RANDOM; ++i) {
        test_result t = dense_backward_case(fx, &r, dense_shape_at(&r, i));
        if (t != TEST_PASS) return t;
    }
    return TEST_PASS;
}

static test_result test_dense_forward_naive(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_NAIVE, dense_forward_body);
}
static test_result test_dense_forward_tiled(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, dense_forward_body);
}
static test_result test_dense_backward_naive(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_NAIVE, dense_backward_body);
}
static test_result test_dense_backward_tiled(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, dense_backward_body);
}

/* Both strategies sum each output in k order with fmaf, so they agree bit for bit,
 * and a rerun gives the same bits (dense.cu's determinism promise). */
static test_result deterministic_body(fixture *fx)
{
    rng r = {0x2545F4914F6CDD1DULL};
    void *naive_ctx = NULL;
    CHECK_OK(test_ctx(fx->gpu, FFNN_STRATEGY_NAIVE, 1, &naive_ctx));
    test_result result = TEST_PASS;
    for (size_t i = 0; i < DENSE_FIXED + DENSE_RANDOM && result == TEST_PASS; ++i) {
        const dense_shape s = dense_shape_at(&r, i);
        const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
        fixture_reset(fx);
        float *x = (float *)host_buf(fx, nx * sizeof(float));  /* [batch, in]  */
        float *W = (float *)host_buf(fx, nw * sizeof(float));  /* [out, in]    */
        float *b = (float *)host_buf(fx, s.out * sizeof(float)); /* [out]      */
        float *dz = (float *)host_buf(fx, nz * sizeof(float)); /* [batch, out] */
        float *z_naive = (float *)host_buf(fx, nz * sizeof(float));
        float *dW_naive = (float *)host_buf(fx, nw * sizeof(float));
        float *dx_naive = (float *)host_buf(fx, nx * sizeof(float));
        if (!(x && W && b && dz && z_naive && dW_naive && dx_naive)) {
            fprintf(stderr, "    host allocation failed\n");
            result = TEST_FAIL;
            break;
        }
        fill_uniform(&r, x, nx, -1.0f, 1.0f);
        fill_uniform(&r, W, nw, -1.0f, 1.0f);
        fill_uniform(&r, b, s.out, -1.0f, 1.0f);
        fill_uniform(&r, dz, nz, -1.0f, 1.0f);
        void *d_x, *d_W, *d_b, *d_dz, *d_z, *d_dW, *d_dx;
        if (dev_buf(fx, x, nx * sizeof(float), &d_x) || dev_buf(fx, W, nw * sizeof(float), &d_W) ||
            dev_buf(fx, b, s.out * sizeof(float), &d_b) ||
            dev_buf(fx, dz, nz * sizeof(float), &d_dz) ||
            dev_buf(fx, NULL, nz * sizeof(float), &d_z) ||
            dev_buf(fx, NULL, nw * sizeof(float), &d_dW) ||
            dev_buf(fx, NULL, nx * sizeof(float), &d_dx)) {
            fprintf(stderr, "    device buffers: %s\n", ffnn_last_error());
            result = TEST_FAIL;
            break;
        }
        /* The same device buffers serve both contexts (same device, and each
         * context's download waits only for its own stream, so synchronise). */
        for (int run = 0; run < 3 && result == TEST_PASS; ++run) {
            void *ctx = run == 0 ? naive_ctx : fx->gpu_ctx;
            ffnn_status st = fx->gpu->dense_forward(ctx, (const float *)d_x, (const float *)d_W,
                                                    (const float *)d_b, (float *)d_z, s.batch,
                                                    s.in, s.out);
            if (st == FFNN_OK)
                st = fx->gpu->dense_backward(ctx, (const float *)d_x, (const float *)d_W,
                                             (const float *)d_dz, (float *)d_dx,
                                             (float *)d_dW, NULL, s.batch, s.in, s.out);
            if (st == FFNN_OK) st = fx->gpu->synchronize(ctx);
            const float *z = st == FFNN_OK ? download_f32(fx, d_z, nz) : NULL;
            const float *dW = st == FFNN_OK ? download_f32(fx, d_dW, nw) : NULL;
            const float *dx = st == FFNN_OK ? download_f32(fx, d_dx, nx) : NULL;
            if (!(z && dW && dx)) {
                fprintf(stderr, "    run %d: %s\n", run, ffnn_last_error());
                result = TEST_FAIL;
            } else if (run == 0) {
                memcpy(z_naive, z, nz * sizeof(float));
                memcpy(dW_naive, dW, nw * sizeof(float));
                memcpy(dx_naive, dx, nx * sizeof(float));
            } else if (!same_bits_f32("z tiled vs naive", z, z_naive, nz) ||
                       !same_bits_f32("dW tiled vs naive", dW, dW_naive, nw) ||
                       !same_bits_f32("dx tiled vs naive", dx, dx_naive, nx)) {
                fprintf(stderr, "    run %d, batch=%zu in=%zu out=%zu\n", run, s.batch, s.in,
                        s.out);
                result = TEST_FAIL;
            }
        }
    }
    fx->gpu->destroy(naive_ctx);
    return result;
}

static test_result test_dense_deterministic(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, deterministic_body);
}

/* ------------------------------------------------------------------ activations */

/* Every activation (leaky_relu and elu also with a parameter other than the
 * default) against the cpu reference on fresh random inputs: within 1e-6 absolute
 * + 1e-5 relative (CUDA's expf, erff, tanhf, log1pf may differ from glibc's by an
 * ulp; the rest is the same arithmetic, device_math.cuh). The backward reads the
 * saved value: a, or z for gelu, gelu_tanh, silu, mish, hardswish. */
static test_result activations_body(fixture *fx)
{
    static const struct {
        ffnn_activation act;
        float param;
    } acts[] = {{FFNN_ACT_IDENTITY, 0.0f},   {FFNN_ACT_RELU, 0.0f},
                {FFNN_ACT_SIGMOID, 0.0f},    {FFNN_ACT_TANH, 0.0f},
                {FFNN_ACT_LEAKY_RELU, 0.01f}, {FFNN_ACT_LEAKY_RELU, 0.2f},
                {FFNN_ACT_ELU, 1.0f},        {FFNN_ACT_ELU, 0.5f},
                {FFNN_ACT_SOFTPLUS, 0.0f},   {FFNN_ACT_GELU, 0.0f},
                {FFNN_ACT_GELU_TANH, 0.0f},  {FFNN_ACT_SILU, 0.0f},
                {FFNN_ACT_MISH, 0.0f},       {FFNN_ACT_HARDSWISH, 0.0f}};
    static const size_t sizes[] = {1, 31, 10007, 300000};
    rng r = {0xA0761D6478BD642FULL};
    for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ++ai) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            const ffnn_activation act = acts[ai].act;
            const float p = acts[ai].param;
            const char *name = ffnn_activation_name(act);
            const size_t n = sizes[si];
            fixture_reset(fx);
            float *z = (float *)host_buf(fx, n * sizeof(float));      /* [n] */
            float *a_ref = (float *)host_buf(fx, n * sizeof(float));  /* [n] */
            float *da = (float *)host_buf(fx, n * sizeof(float));     /* [n] */
            float *dz_ref = (float *)host_buf(fx, n * sizeof(float)); /* [n] */
            CHECK(z && a_ref && da && dz_ref, "host allocation failed");
            fill_uniform(&r, z, n, -6.0f, 6.0f);
            for (size_t i = 0; i < n; i += 97) z[i] = 0.0f; /* relu's kink */
            for (size_t i = 5; i < n; i += 101) z[i] = (i % 2 ? 40.0f : -40.0f); /* saturation */
            for (size_t i = 7; i < n; i += 103) z[i] = (i % 2 ? 3.0f : -3.0f); /* hardswish */
            fill_uniform(&r, da, n, -1.0f, 1.0f);
            const float *saved = ffnn_act_grad_from_input(act) ? z : a_ref;
            CHECK_OK(fx->cpu->activation_forward(fx->cpu_ctx, act, p, z, a_ref, n));
            CHECK_OK(fx->cpu->activation_backward(fx->cpu_ctx, act, p, saved, da, dz_ref, n));

            void *d_z, *d_a, *d_ain, *d_da, *d_dz;
            CHECK_OK(dev_buf(fx, z, n * sizeof(float), &d_z));
            CHECK_OK(dev_buf(fx, NULL, n * sizeof(float), &d_a));
            CHECK_OK(dev_buf(fx, saved, n * sizeof(float), &d_ain)); /* a or z */
            CHECK_OK(dev_buf(fx, da, n * sizeof(float), &d_da));
            CHECK_OK(dev_buf(fx, NULL, n * sizeof(float), &d_dz));
            CHECK_OK(fx->gpu->activation_forward(fx->gpu_ctx, act, p, (const float *)d_z,
                                                 (float *)d_a, n));
            CHECK_OK(fx->gpu->activation_backward(fx->gpu_ctx, act, p, (const float *)d_ain,
                                                  (const float *)d_da, (float *)d_dz, n));
            const float *a = download_f32(fx, d_a, n);
            const float *dzg = download_f32(fx, d_dz, n);
            CHECK(a && dzg, "download failed: %s", ffnn_last_error());
            CHECK(close_f32("a", a, a_ref, n, 1e-6, 1e-5), "activation_forward %s(%g) n=%zu", name,
                  (double)p, n);
            CHECK(close_f32("dz", dzg, dz_ref, n, 1e-6, 1e-5), "activation_backward %s(%g) n=%zu",
                  name, (double)p, n);

            /* In place: a = f(a) over z's buffer, dz = da * f'(saved) over da's buffer. */
            CHECK_OK(fx->gpu->activation_forward(fx->gpu_ctx, act, p, (const float *)d_z,
                                                 (float *)d_z, n));
            CHECK_OK(fx->gpu->activation_backward(fx->gpu_ctx, act, p, (const float *)d_ain,
                                                  (const float *)d_da, (float *)d_da, n));
            const float *a2 = download_f32(fx, d_z, n);
            const float *dz2 = download_f32(fx, d_da, n);
            CHECK(a2 && dz2, "download failed: %s", ffnn_last_error());
            CHECK(close_f32("a (in place)", a2, a_ref, n, 1e-6, 1e-5),
                  "activation_forward %s n=%zu in place", name, n);
            CHECK(close_f32("dz (in place)", dz2, dz_ref, n, 1e-6, 1e-5),
                  "activation_backward %s n=%zu in place", name, n);
        }
    }
    return TEST_PASS;
}

static test_result test_activations(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, activations_body);
}

/* ------------------------------------------------------------------ losses */

/* Outputs [batch, width] and labels [batch] for one loss and width, with rows
 * that stress the kernels: large logits (max shift), all-equal rows and a repeated
 * maximum (argmax ties go to the first index), zeros (width 1: z > 0 is false). */
static void make_loss_inputs(rng *r, ffnn_loss loss, size_t batch, size_t width, float *out,
                             int32_t *y)
{
    const float lo = loss == FFNN_LOSS_MSE ? -0.5f : -4.0f;
    const float hi = loss == FFNN_LOSS_MSE ? 1.5f : 4.0f;
    for (size_t b = 0; b < batch; ++b) {
        float *row = out + b * width;
        fill_uniform(r, row, width, lo, hi);
        if (loss != FFNN_LOSS_MSE && b % 7 == 3)
            for (size_t j = 0; j < width; ++j) row[j] *= 25.0f; /* |z| up to 100 */
        if (b % 11 == 5)
            for (size_t j = 0; j < width; ++j) row[j] = 0.0f; /* all tied */
        if (b % 13 == 6 && width > 2) {
            const size_t i = rng_below(r, width - 1);
            row[i] = row[width - 1] = 9.0f; /* repeated maximum */
        }
        if (width > 1)
            y[b] = (int32_t)rng_below(r, width);
        else
            y[b] = loss == FFNN_LOSS_SOFTMAX_CE ? 0
                   : (int32_t)rng_below(r, loss == FFNN_LOSS_MSE ? 4 : 2); /* mse: a value */
    }
}

/* Float targets [batch, width] for bce / mse: uniform values plus the edge
 * cases 0, 1 and exactly 0.5 (on the threshold: "> 0.5" is false). */
static void make_float_targets(rng *r, ffnn_loss loss, size_t n, float *t)
{
    const float lo = loss == FFNN_LOSS_MSE ? -0.5f : 0.0f;
    const float hi = loss == FFNN_LOSS_MSE ? 1.5f : 1.0f;
    for (size_t i = 0; i < n; ++i) {
        t[i] = rng_uniform(r, lo, hi);
        if (i % 5 == 1) t[i] = (float)(rng_below(r, 2)); /* 0 or 1 */
        if (i % 17 == 3) t[i] = 0.5f;
    }
}

/* One loss against the cpu reference over several widths and batches; with
 * float_targets, against float target rows (y is not passed: NULL). */
static test_result loss_body_kind(fixture *fx, ffnn_loss loss, int float_targets)
{
    static const size_t widths[] = {1, 2, 10, 37};
    static const size_t batches[] = {1, 203, 1000};
    rng r = {0x94D049BB133111EBULL + (uint64_t)loss};
    rng rt = {0x9E3779B97F4A7C15ULL + (uint64_t)loss};
    const char *name = float_targets ? (loss == FFNN_LOSS_MSE ? "mse (float targets)"
                                                              : "bce (float targets)")
                                     : ffnn_loss_name(loss);
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; ++wi) {
        for (size_t bi = 0; bi < sizeof batches / sizeof batches[0]; ++bi) {
            const size_t width = widths[wi], batch = batches[bi], n = batch * width;
            fixture_reset(fx);
            float *out = (float *)host_buf(fx, n * sizeof(float));        /* [batch, width] */
            int32_t *y = (int32_t *)host_buf(fx, batch * sizeof(int32_t)); /* [batch]      */
            float *dout_ref = (float *)host_buf(fx, n * sizeof(float));   /* [batch, width] */
            float *loss_ref = (float *)host_buf(fx, batch * sizeof(float)); /* [batch]      */
            uint8_t *correct_ref = (uint8_t *)host_buf(fx, batch);        /* [batch]        */
            float *targets = (float *)host_buf(fx, n * sizeof(float));    /* [batch, width] */
            CHECK(out && y && dout_ref && loss_ref && correct_ref && targets,
                  "host allocation failed");
            make_loss_inputs(&r, loss, batch, width, out, y);
            if (float_targets) make_float_targets(&rt, loss, n, targets);
            const float *h_t = float_targets ? targets : NULL;
            const int32_t *h_y = float_targets ? NULL : y;
            CHECK_OK(fx->cpu->loss(fx->cpu_ctx, loss, out, h_y, h_t, batch, width, dout_ref,
                                   loss_ref, correct_ref));

            void *d_out, *d_y = NULL, *d_t = NULL, *d_dout, *d_loss, *d_correct, *d_loss2,
                 *d_correct2;
            CHECK_OK(dev_buf(fx, out, n * sizeof(float), &d_out));
            if (float_targets)
                CHECK_OK(dev_buf(fx, targets, n * sizeof(float), &d_t));
            else
                CHECK_OK(dev_buf(fx, y, batch * sizeof(int32_t), &d_y));
            CHECK_OK(dev_buf(fx, NULL, n * sizeof(float), &d_dout));
            CHECK_OK(dev_buf(fx, NULL, batch * sizeof(float), &d_loss));
            CHECK_OK(dev_buf(fx, NULL, batch, &d_correct));
            CHECK_OK(dev_buf(fx, NULL, batch * sizeof(float), &d_loss2));
            CHECK_OK(dev_buf(fx, NULL, batch, &d_correct2));
            CHECK_OK(fx->gpu->loss(fx->gpu_ctx, loss, (const float *)d_out, (const int32_t *)d_y,
                                   (const float *)d_t, batch, width, (float *)d_dout,
                                   (float *)d_loss, (uint8_t *)d_correct));
            /* Evaluation: no gradient wanted. */
            CHECK_OK(fx->gpu->loss(fx->gpu_ctx, loss, (const float *)d_out, (const int32_t *)d_y,
                                   (const float *)d_t, batch, width, NULL, (float *)d_loss2,
                                   (uint8_t *)d_correct2));
            const float *gdout = download_f32(fx, d_dout, n);
            const float *gloss = download_f32(fx, d_loss, batch);
            const uint8_t *gcorrect = download_u8(fx, d_correct, batch);
            const float *gloss2 = download_f32(fx, d_loss2, batch);
            const uint8_t *gcorrect2 = download_u8(fx, d_correct2, batch);
            CHECK(gdout && gloss && gcorrect && gloss2 && gcorrect2, "download failed: %s",
                  ffnn_last_error());
            CHECK(close_f32("row_loss", gloss, loss_ref, batch, 1e-5, 1e-5),
                  "loss %s batch=%zu width=%zu", name, batch, width);
            CHECK(equal_u8("row_correct", gcorrect, correct_ref, batch),
                  "loss %s batch=%zu width=%zu", name, batch, width);
            CHECK(close_f32("dout", gdout, dout_ref, n, 1e-6, 1e-5),
                  "loss %s batch=%zu width=%zu", name, batch, width);
            CHECK(close_f32("row_loss (dout NULL)", gloss2, loss_ref, batch, 1e-5, 1e-5),
                  "loss %s batch=%zu width=%zu", name, batch, width);
            CHECK(equal_u8("row_correct (dout NULL)", gcorrect2, correct_ref, batch),
                  "loss %s batch=%zu width=%zu", name, batch, width);
        }
    }
    return TEST_PASS;
}

static test_result loss_body(fixture *fx, ffnn_loss loss) { return loss_body_kind(fx, loss, 0); }
static test_result softmax_ce_body(fixture *fx) { return loss_body(fx, FFNN_LOSS_SOFTMAX_CE); }
static test_result sigmoid_bce_body(fixture *fx) { return loss_body(fx, FFNN_LOSS_SIGMOID_BCE); }
static test_result mse_body(fixture *fx) { return loss_body(fx, FFNN_LOSS_MSE); }

/* Float targets: bce and mse against the cpu reference; ce refuses them. */
static test_result float_targets_body(fixture *fx)
{
    test_result r = loss_body_kind(fx, FFNN_LOSS_SIGMOID_BCE, 1);
    if (r != TEST_PASS) return r;
    if ((r = loss_body_kind(fx, FFNN_LOSS_MSE, 1)) != TEST_PASS) return r;
    fixture_reset(fx);
    void *d_out, *d_t, *d_loss, *d_correct;
    CHECK_OK(dev_buf(fx, NULL, 4 * sizeof(float), &d_out));
    CHECK_OK(dev_buf(fx, NULL, 4 * sizeof(float), &d_t));
    CHECK_OK(dev_buf(fx, NULL, 2 * sizeof(float), &d_loss));
    CHECK_OK(dev_buf(fx, NULL, 2, &d_correct));
    ffnn_status st = fx->gpu->loss(fx->gpu_ctx, FFNN_LOSS_SOFTMAX_CE, (const float *)d_out,
                                   NULL, (const float *)d_t, 2, 2, NULL, (float *)d_loss,
                                   (uint8_t *)d_correct);
    CHECK(st == FFNN_ERR_INVALID_ARGUMENT && strstr(ffnn_last_error(), "softmax_ce"),
          "ce with float targets: status %d, '%s'", (int)st, ffnn_last_error());
    return TEST_PASS;
}

static test_result test_loss_softmax_ce(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, softmax_ce_body);
}
static test_result test_loss_sigmoid_bce(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, sigmoid_bce_body);
}
static test_result test_loss_mse(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, mse_body);
}
static test_result test_loss_float_targets(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, float_targets_body);
}

/* ------------------------------------------------------------------ the head */

/* bfloat16 of f, rounded to nearest even, as a float (finite f). */
static float bf16_round(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&f, &u, sizeof f);
    return f;
}
/* f rounded to TF32 (10 mantissa bits; to nearest, ties away: cvt.rna.tf32.f32),
 * as a float (finite f). */
static float tf32_round(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u = (u + 0x1000u) & ~0x1fffu;
    memcpy(&f, &u, sizeof f);
    return f;
}
static uint16_t bf16_bits(float f) /* f already a bf16 value */
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}
static float bf16_value(uint16_t v)
{
    const uint32_t u = (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* softmax_ce_head (the output layer and its loss in one op) against the cpu
 * reference's ops composed (shapes up to in 1536: in <= FFNN_HEAD_FUSED_MAX_IN takes
 * the one-kernel path - 1 to 8 warps a row, one or several rows at once, one or
 * several chunks of rows a block (batch 8200), the slots' sums past 48 KiB of
 * shared memory (in 128, 16 classes) - the wider ones the three kernels:
 * rows of two rounds of loads, W past 48 KiB of shared memory (in 1024, 16
 * classes), the classes split over two threads (3 classes: 2 + 1; 2: 2 + 0)): dense_forward, loss (softmax_ce), dense_backward,
 * activation_backward, then dh_db = the column sums of dh on the host. Fresh
 * random h (the layer below's output: act(u) of uniform u, so relu outputs have
 * zeros), W, b, labels per shape; with and without biases; fp32, bf16 (h and W
 * bf16 values, the reference on the same values) and a tf32 context (h and W TF32
 * values: the logits kernel then runs on the tensor cores past
 * FFNN_HEAD_FUSED_MAX_IN inputs, its products exact as in the reference; the
 * rounding itself: test_head_tf32). Tolerances:
 *   row_loss atol 1e-5 + matmul_atol(in), rtol 1e-5 (the logits are a matmul
 *            over in, then the loss's formulas);
 *   row_correct exactly, on the rows whose two largest reference logits differ
 *            by more than 1e-3 (one class: |logit| > 1e-3; others may flip with
 *            the summation order);
 *   dW, db   matmul atol over K = batch, rtol 1e-4; dh fp32 matmul over K = C;
 *   dh bf16  one rounding: 2^-8 relative (twice the half ulp) + matmul_atol(C);
 *   dh_db    sums of the stored dh: matmul_atol(batch) + rtol 1e-4, and in bf16
 *            + 2^-9 sum_b |dh[b, k]| (each stored value within half an ulp);
 *   tensor-core slices (tf32 / bf16 past FFNN_HEAD_FUSED_MAX_IN): dlog rounded to
 *            the precision (unit roundoff u = 2^-11 / 2^-8) adds u sum_b |dlog h|
 *            to dW's tolerance, u sum_c |dlog W| to dh's (|act'| <= 1) and the
 *            column sums of the latter to dh_db's. */
static test_result head_body(fixture *fx)
{
    typedef struct { size_t batch, in, C; ffnn_activation act; int bias; } hshape;
    static const hshape shapes[] = {
        {1, 4, 1, FFNN_ACT_RELU, 1},       {7, 12, 2, FFNN_ACT_IDENTITY, 0},
        {64, 256, 10, FFNN_ACT_RELU, 1},   {333, 260, 16, FFNN_ACT_SIGMOID, 1},
        {1024, 1024, 10, FFNN_ACT_RELU, 1}, {200, 516, 3, FFNN_ACT_TANH, 0},
        {4096, 128, 10, FFNN_ACT_RELU, 1}, {96, 1536, 10, FFNN_ACT_RELU, 1},
        {8200, 64, 10, FFNN_ACT_RELU, 1}, /* 65 rows a block: chunks of 32, 32, 1 */
        {300, 128, 16, FFNN_ACT_TANH, 1}, /* 8 slots' sums: 68 KiB of shared memory */
        {130, 1024, 16, FFNN_ACT_SIGMOID, 1}, /* W 64 KiB; 8 classes a half */
        {40, 520, 2, FFNN_ACT_RELU, 1}, /* the second half of the classes empty */
    };
    rng r = {0xD1B54A32D192ED03ULL};
    for (int pm = 0; pm <= 2; pm++) { /* fp32, bf16, tf32 */
        const int bf16 = pm == 1, tf32 = pm == 2;
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            const hshape sh = shapes[si];
            const size_t B = sh.batch, K = sh.in, C = sh.C;
            fixture_reset(fx);
            float *h = (float *)host_buf(fx, B * K * sizeof(float));   /* [B, K] */
            float *W = (float *)host_buf(fx, C * K * sizeof(float));   /* [C, K] */
            float *b = (float *)host_buf(fx, C * sizeof(float));       /* [C]    */
            int32_t *y = (int32_t *)host_buf(fx, B * sizeof(int32_t)); /* [B]    */
            float *z = (float *)host_buf(fx, B * C * sizeof(float));   /* [B, C] */
            float *dlog = (float *)host_buf(fx, B * C * sizeof(float));
            float *loss_ref = (float *)host_buf(fx, B * sizeof(float));
            uint8_t *corr_ref = (uint8_t *)host_buf(fx, B);
            float *dh_ref = (float *)host_buf(fx, B * K * sizeof(float));
            float *dW_ref = (float *)host_buf(fx, C * K * sizeof(float));
            float *db_ref = (float *)host_buf(fx, C * sizeof(float));
            double *dhdb_ref = (double *)host_buf(fx, K * sizeof(double));
            double *dhdb_abs = (double *)host_buf(fx, K * sizeof(double));
            uint16_t *h16 = (uint16_t *)host_buf(fx, B * K * sizeof(uint16_t));
            uint16_t *W16 = (uint16_t *)host_buf(fx, C * K * sizeof(uint16_t));
            CHECK(h && W && b && y && z && dlog && loss_ref && corr_ref && dh_ref && dW_ref &&
                      db_ref && dhdb_ref && dhdb_abs && h16 && W16,
                  "host allocation failed");
            for (size_t i = 0; i < B * K; i++) {
                const float u = rng_uniform(&r, -2.0f, 2.0f);
                float v = sh.act == FFNN_ACT_RELU      ? (u > 0.0f ? u : 0.0f)
                          : sh.act == FFNN_ACT_SIGMOID ? 1.0f / (1.0f + expf(-u))
                          : sh.act == FFNN_ACT_TANH    ? tanhf(u)
                                                       : u;
                h[i] = bf16 ? bf16_round(v) : tf32 ? tf32_round(v) : v;
                h16[i] = bf16_bits(bf16_round(v));
            }
            const float ws = 1.0f / sqrtf((float)K);
            for (size_t i = 0; i < C * K; i++) {
                const float v = rng_uniform(&r, -3.0f * ws, 3.0f * ws);
                W[i] = bf16 ? bf16_round(v) : tf32 ? tf32_round(v) : v;
                W16[i] = bf16_bits(bf16_round(v));
            }
            fill_uniform(&r, b, C, -0.5f, 0.5f);
            for (size_t i = 0; i < B; i++) y[i] = (int32_t)rng_below(&r, C);
            /* the reference */
            CHECK_OK(fx->cpu->dense_forward(fx->cpu_ctx, h, W, sh.bias ? b : NULL, z, B, K, C));
            CHECK_OK(fx->cpu->loss(fx->cpu_ctx, FFNN_LOSS_SOFTMAX_CE, z, y, NULL, B, C, dlog,
                                   loss_ref, corr_ref));
            CHECK_OK(fx->cpu->dense_backward(fx->cpu_ctx, h, W, dlog, dh_ref, dW_ref, db_ref, B,
                                             K, C));
            CHECK_OK(fx->cpu->activation_backward(fx->cpu_ctx, sh.act, 0.0f, h, dh_ref, dh_ref,
                                                  B * K));
            for (size_t k = 0; k < K; k++) dhdb_ref[k] = 0.0;
            for (size_t i = 0; i < B * K; i++) dhdb_ref[i % K] += dh_ref[i];
            /* the op */
            const size_t esz = bf16 ? sizeof(uint16_t) : sizeof(float);
            void *d_h, *d_W, *d_b, *d_y, *d_dW, *d_db, *d_dh, *d_dhdb, *d_loss, *d_corr, *d_scr;
            CHECK_OK(dev_buf(fx, bf16 ? (const void *)h16 : (const void *)h, B * K * esz, &d_h));
            CHECK_OK(dev_buf(fx, bf16 ? (const void *)W16 : (const void *)W, C * K * esz, &d_W));
            CHECK_OK(dev_buf(fx, b, C * sizeof(float), &d_b));
            CHECK_OK(dev_buf(fx, y, B * sizeof(int32_t), &d_y));
            CHECK_OK(dev_buf(fx, NULL, C * K * sizeof(float), &d_dW));
            CHECK_OK(dev_buf(fx, NULL, C * sizeof(float), &d_db));
            CHECK_OK(dev_buf(fx, NULL, B * K * esz, &d_dh));
            CHECK_OK(dev_buf(fx, NULL, K * sizeof(float), &d_dhdb));
            CHECK_OK(dev_buf(fx, NULL, B * sizeof(float), &d_loss));
            CHECK_OK(dev_buf(fx, NULL, B, &d_corr));
            CHECK_OK(dev_buf(fx, NULL, ffnn_head_scratch_floats(B, K, C) * sizeof(float), &d_scr));
            CHECK(fx->gpu->head != NULL, "cuda has no softmax_ce_head");
            CHECK_OK(fx->gpu->device->set_precision(fx->gpu_ctx, tf32 ? FFNN_PRECISION_TF32
                                                              : FFNN_PRECISION_FP32));
            ffnn_status hs = fx->gpu->head->softmax_ce_head(
                fx->gpu_ctx, bf16, d_h, d_W, sh.bias ? (const float *)d_b : NULL,
                (const int32_t *)d_y, B, K, C, sh.act, (float *)d_dW,
                sh.bias ? (float *)d_db : NULL, d_dh, sh.bias ? (float *)d_dhdb : NULL,
                (float *)d_loss, (uint8_t *)d_corr, (float *)d_scr);
            CHECK_OK(fx->gpu->device->set_precision(fx->gpu_ctx, FFNN_PRECISION_FP32));
            CHECK_OK(hs);
            const float *g_loss = download_f32(fx, d_loss, B);
            const uint8_t *g_corr = download_u8(fx, d_corr, B);
            const float *g_dW = download_f32(fx, d_dW, C * K);
            const float *g_db = download_f32(fx, d_db, C);
            const float *g_dhdb = download_f32(fx, d_dhdb, K);
            float *g_dh = (float *)host_buf(fx, B * K * sizeof(float));
            uint16_t *g_dh16 = (uint16_t *)host_buf(fx, B * K * sizeof(uint16_t));
            CHECK(g_loss && g_corr && g_dW && g_db && g_dhdb && g_dh && g_dh16,
                  "download failed: %s", ffnn_last_error());
            if (bf16) {
                CHECK_OK(fx->gpu->download(fx->gpu_ctx, g_dh16, d_dh, B * K * sizeof(uint16_t)));
                for (size_t i = 0; i < B * K; i++) g_dh[i] = bf16_value(g_dh16[i]);
            } else {
                CHECK_OK(fx->gpu->download(fx->gpu_ctx, g_dh, d_dh, B * K * sizeof(float)));
            }
            const char *mode = bf16 ? "bf16" : tf32 ? "tf32" : "fp32";
            CHECK(close_f32("row_loss", g_loss, loss_ref, B, 1e-5 + matmul_atol(K), 1e-5),
                  "head %s B=%zu in=%zu C=%zu", mode, B, K, C);
            for (size_t i = 0; i < B; i++) {
                float m1 = -INFINITY, m2 = -INFINITY;
                for (size_t c = 0; c < C; c++) {
                    const float v = z[i * C + c];
                    if (v > m1) { m2 = m1; m1 = v; } else if (v > m2) { m2 = v; }
                }
                if (C > 1 ? m1 - m2 <= 1e-3f : fabsf(m1) <= 1e-3f) continue;
                CHECK(g_corr[i] == corr_ref[i], "head %s B=%zu in=%zu C=%zu: row_correct[%zu] "
                      "%u, want %u", mode, B, K, C, i, g_corr[i], corr_ref[i]);
            }
            /* the tensor-core slices round dlog to the precision (u: its unit
             * roundoff): dW and dh move by up to u times the sums of |products| */
            const int tc = (bf16 || tf32) && K > FFNN_HEAD_FUSED_MAX_IN && (!bf16 || K % 8 == 0);
            const double u = !tc ? 0.0 : bf16 ? 1.0 / 256.0 : 1.0 / 2048.0;
            for (size_t c = 0; c < C; c++) {
                for (size_t k = 0; k < K; k++) {
                    double sp = 0.0;
                    for (size_t i = 0; u > 0.0 && i < B; i++)
                        sp += fabs((double)dlog[i * C + c] * h[i * K + k]);
                    const double want = dW_ref[c * K + k], got = g_dW[c * K + k];
                    const double tol = matmul_atol(B) + MATMUL_RTOL * fabs(want) + u * sp;
                    CHECK(fabs(got - want) <= tol, "head %s B=%zu in=%zu C=%zu: dW[%zu, %zu] "
                          "%.9g, want %.9g (tolerance %.3g)", mode, B, K, C, c, k, got, want, tol);
                }
            }
            if (sh.bias)
                CHECK(close_f32("db", g_db, db_ref, C, matmul_atol(B), MATMUL_RTOL),
                      "head %s B=%zu in=%zu C=%zu", mode, B, K, C);
            for (size_t k = 0; k < K; k++) dhdb_abs[k] = 0.0; /* now: u sum_b S[b, k] */
            for (size_t i = 0; i < B; i++) {
                for (size_t k = 0; k < K; k++) {
                    double sp = 0.0; /* S[b, k] = sum_c |dlog W| (|act'| <= 1) */
                    for (size_t c = 0; u > 0.0 && c < C; c++)
                        sp += fabs((double)dlog[i * C + c] * W[c * K + k]);
                    const double want = dh_ref[i * K + k], got = g_dh[i * K + k];
                    const double tol = matmul_atol(C) +
                                       (bf16 ? 1.0 / 256.0 : MATMUL_RTOL) * fabs(want) + u * sp;
                    CHECK(fabs(got - want) <= tol, "head %s B=%zu in=%zu C=%zu: dh[%zu, %zu] "
                          "%.9g, want %.9g (tolerance %.3g)", mode, B, K, C, i, k, got, want, tol);
                    dhdb_abs[k] += fabs(want) * (bf16 ? 1.0 / 512.0 : 0.0) + u * sp;
                }
            }
            for (size_t k = 0; sh.bias && k < K; k++) {
                const double tol = matmul_atol(B) + MATMUL_RTOL * fabs(dhdb_ref[k]) + dhdb_abs[k];
                CHECK(fabs((double)g_dhdb[k] - dhdb_ref[k]) <= tol,
                      "head %s B=%zu in=%zu C=%zu: dh_db[%zu] %.9g, want %.9g (tolerance %.3g)",
                      mode, B, K, C, k, (double)g_dhdb[k], dhdb_ref[k], tol);
            }
            /* split: the op with dW NULL, then softmax_ce_head_sums: the same bits;
             * with its sgd, the parameters updated as optimizer_update would on
             * those sums (fp32 master copies, also in bf16), bit for bit */
            void *s_dW, *s_db, *s_dhdb, *u_W, *u_b, *u_bb;
            float *bb = (float *)host_buf(fx, K * sizeof(float));
            float *want_W = (float *)host_buf(fx, C * K * sizeof(float));
            float *want_b = (float *)host_buf(fx, C * sizeof(float));
            float *want_bb = (float *)host_buf(fx, K * sizeof(float));
            CHECK(bb && want_W && want_b && want_bb, "host allocation failed");
            fill_uniform(&r, bb, K, -0.5f, 0.5f);
            CHECK_OK(dev_buf(fx, NULL, C * K * sizeof(float), &s_dW));
            CHECK_OK(dev_buf(fx, NULL, C * sizeof(float), &s_db));
            CHECK_OK(dev_buf(fx, NULL, K * sizeof(float), &s_dhdb));
            CHECK_OK(dev_buf(fx, W, C * K * sizeof(float), &u_W));
            CHECK_OK(dev_buf(fx, b, C * sizeof(float), &u_b));
            CHECK_OK(dev_buf(fx, bb, K * sizeof(float), &u_bb));
            const float lr = 0.0625f + 0.01f * (float)si;
            const ffnn_head_sgd sgd = {(float *)u_W, sh.bias ? (float *)u_b : NULL,
                                       sh.bias ? (float *)u_bb : NULL, lr};
            CHECK(fx->gpu->head != NULL, "cuda has no softmax_ce_head_sums");
            CHECK_OK(fx->gpu->device->set_precision(fx->gpu_ctx, tf32 ? FFNN_PRECISION_TF32
                                                              : FFNN_PRECISION_FP32));
            hs = fx->gpu->head->softmax_ce_head(
                fx->gpu_ctx, bf16, d_h, d_W, sh.bias ? (const float *)d_b : NULL,
                (const int32_t *)d_y, B, K, C, sh.act, NULL, NULL, d_dh, NULL,
                (float *)d_loss, (uint8_t *)d_corr, (float *)d_scr);
            CHECK_OK(fx->gpu->device->set_precision(fx->gpu_ctx, FFNN_PRECISION_FP32));
            CHECK_OK(hs);
            CHECK_OK(fx->gpu->head->softmax_ce_head_sums(fx->gpu_ctx, B, K, C, (float *)s_dW,
                                                   sh.bias ? (float *)s_db : NULL,
                                                   sh.bias ? (float *)s_dhdb : NULL,
                                                   (const float *)d_scr, &sgd));
            const float *s_gdW = download_f32(fx, s_dW, C * K);
            const float *s_gdb = download_f32(fx, s_db, C);
            const float *s_gdhdb = download_f32(fx, s_dhdb, K);
            CHECK(s_gdW && s_gdb && s_gdhdb, "download failed: %s", ffnn_last_error());
            CHECK(!memcmp(s_gdW, g_dW, C * K * sizeof(float)) &&
                      (!sh.bias || (!memcmp(s_gdb, g_db, C * sizeof(float)) &&
                                    !memcmp(s_gdhdb, g_dhdb, K * sizeof(float)))),
                  "head %s B=%zu in=%zu C=%zu: softmax_ce_head_sums differs from the op's "
                  "own sums", mode, B, K, C);
            memcpy(want_W, W, C * K * sizeof(float));
            memcpy(want_b, b, C * sizeof(float));
            memcpy(want_bb, bb, K * sizeof(float));
            ffnn_cpu_optimizer_update_sgd(want_W, g_dW, C * K, lr);
            if (sh.bias) {
                ffnn_cpu_optimizer_update_sgd(want_b, g_db, C, lr);
                ffnn_cpu_optimizer_update_sgd(want_bb, g_dhdb, K, lr);
            }
            const float *u_gW = download_f32(fx, u_W, C * K);
            const float *u_gb = download_f32(fx, u_b, C);
            const float *u_gbb = download_f32(fx, u_bb, K);
            CHECK(u_gW && u_gb && u_gbb, "download failed: %s", ffnn_last_error());
            CHECK(!memcmp(u_gW, want_W, C * K * sizeof(float)) &&
                      !memcmp(u_gb, want_b, C * sizeof(float)) &&
                      !memcmp(u_gbb, want_bb, K * sizeof(float)),
                  "head %s B=%zu in=%zu C=%zu: softmax_ce_head_sums's sgd differs from the "
                  "cpu update on its sums (lr %g)", mode, B, K, C, (double)lr);
        }
    }
    /* refused: in not a multiple of 4, more than FFNN_HEAD_CMAX classes */
    fixture_reset(fx);
    void *d_any;
    CHECK_OK(dev_buf(fx, NULL, 4096, &d_any));
    ffnn_status st = fx->gpu->head->softmax_ce_head(fx->gpu_ctx, 0, d_any, d_any, NULL,
                                              (const int32_t *)d_any, 2, 6, 2, FFNN_ACT_RELU,
                                              (float *)d_any, NULL, d_any, NULL, (float *)d_any,
                                              (uint8_t *)d_any, (float *)d_any);
    CHECK(st == FFNN_ERR_INVALID_ARGUMENT && strstr(ffnn_last_error(), "multiple of 4"),
          "in = 6: status %d, '%s'", (int)st, ffnn_last_error());
    st = fx->gpu->head->softmax_ce_head(fx->gpu_ctx, 0, d_any, d_any, NULL, (const int32_t *)d_any,
                                  2, 8, FFNN_HEAD_CMAX + 1, FFNN_ACT_RELU, (float *)d_any, NULL,
                                  d_any, NULL, (float *)d_any, (uint8_t *)d_any, (float *)d_any);
    CHECK(st == FFNN_ERR_INVALID_ARGUMENT, "C = %d: status %d", FFNN_HEAD_CMAX + 1, (int)st);
    return TEST_PASS;
}

static test_result test_head(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, head_body);
}

/* softmax_ce_head on a tf32 context with h and W that TF32 does not hold (in 1024 and
 * 1028 > FFNN_HEAD_FUSED_MAX_IN: the tensor-core logits; 1028 ends in a part chunk):
 * row_loss within the TF32 bound of the cpu reference, and different from the fp32
 * context's in most rows (the rounding is really on). Bound: an operand rounded to
 * 10 mantissa bits is off by at most 2^-11 of itself, a product by 2^-10 + 2^-22, so
 * |dz[b, c]| <= (2^-10 + 2^-22) S[b], S[b] = max_c sum_k |h[b, k] W[c, k]|, plus the
 * fp32 sums' matmul_atol(in); the loss, log sum_c exp(z[c]) - z[y], moves by at
 * most twice the largest |dz[b, c]|. */
static test_result head_tf32_body(fixture *fx)
{
    static const size_t ins[] = {1024, 1028};
    const size_t B = 512, C = 10;
    rng r = {0x94D049BB133111EBULL};
    for (size_t ii = 0; ii < sizeof ins / sizeof ins[0]; ii++) {
        const size_t K = ins[ii];
        fixture_reset(fx);
        float *h = (float *)host_buf(fx, B * K * sizeof(float));
        float *W = (float *)host_buf(fx, C * K * sizeof(float));
        float *b = (float *)host_buf(fx, C * sizeof(float));
        int32_t *y = (int32_t *)host_buf(fx, B * sizeof(int32_t));
        float *z = (float *)host_buf(fx, B * C * sizeof(float));
        float *dlog = (float *)host_buf(fx, B * C * sizeof(float));
        float *loss_ref = (float *)host_buf(fx, B * sizeof(float));
        uint8_t *corr_ref = (uint8_t *)host_buf(fx, B);
        float *loss32 = (float *)host_buf(fx, B * sizeof(float));
        CHECK(h && W && b && y && z && dlog && loss_ref && corr_ref && loss32,
              "host allocation failed");
        for (size_t i = 0; i < B * K; i++) {
            const float u = rng_uniform(&r, -2.0f, 2.0f);
            h[i] = u > 0.0f ? u : 0.0f;
        }
        const float ws = 1.0f / sqrtf((float)K);
        fill_uniform(&r, W, C * K, -3.0f * ws, 3.0f * ws);
        fill_uniform(&r, b, C, -0.5f, 0.5f);
        for (size_t i = 0; i < B; i++) y[i] = (int32_t)rng_below(&r, C);
        CHECK_OK(fx->cpu->dense_forward(fx->cpu_ctx, h, W, b, z, B, K, C));
        CHECK_OK(fx->cpu->loss(fx->cpu_ctx, FFNN_LOSS_SOFTMAX_CE, z, y, NULL, B, C, dlog,
                               loss_ref, corr_ref));
        void *d_h, *d_W, *d_b, *d_y, *d_dh, *d_loss, *d_corr, *d_scr;
        CHECK_OK(dev_buf(fx, h, B * K * sizeof(float), &d_h));
        CHECK_OK(dev_buf(fx, W, C * K * sizeof(float), &d_W));
        CHECK_OK(dev_buf(fx, b, C * sizeof(float), &d_b));
        CHECK_OK(dev_buf(fx, y, B * sizeof(int32_t), &d_y));
        CHECK_OK(dev_buf(fx, NULL, B * K * sizeof(float), &d_dh));
        CHECK_OK(dev_buf(fx, NULL, B * sizeof(float), &d_loss));
        CHECK_OK(dev_buf(fx, NULL, B, &d_corr));
        CHECK_OK(dev_buf(fx, NULL, ffnn_head_scratch_floats(B, K, C) * sizeof(float), &d_scr));
        for (int tf32 = 0; tf32 <= 1; tf32++) {
            CHECK_OK(fx->gpu->device->set_precision(fx->gpu_ctx, tf32 ? FFNN_PRECISION_TF32
                                                              : FFNN_PRECISION_FP32));
            const ffnn_status hs = fx->gpu->head->softmax_ce_head(
                fx->gpu_ctx, 0, d_h, d_W, (const float *)d_b, (const int32_t *)d_y, B, K, C,
                FFNN_ACT_RELU, NULL, NULL, d_dh, NULL, (float *)d_loss, (uint8_t *)d_corr,
                (float *)d_scr);
            CHECK_OK(fx->gpu->device->set_precision(fx->gpu_ctx, FFNN_PRECISION_FP32));
            CHECK_OK(hs);
            const float *g_loss = download_f32(fx, d_loss, B);
            CHECK(g_loss != NULL, "download failed: %s", ffnn_last_error());
            if (!tf32) {
                memcpy(loss32, g_loss, B * sizeof(float));
                continue;
            }
            size_t differ = 0;
            for (size_t i = 0; i < B; i++) {
                double S = 0.0;
                for (size_t c = 0; c < C; c++) {
                    double s = 0.0;
                    for (size_t k = 0; k < K; k++) s += fabs((double)h[i * K + k] * W[c * K + k]);
                    if (s > S) S = s;
                }
                const double tol = 2.0 * ((1.0 / 1024.0 + 1.0 / 4194304.0) * S + matmul_atol(K)) +
                                   1e-5 + 1e-5 * fabs(loss_ref[i]);
                CHECK(fabs((double)g_loss[i] - loss_ref[i]) <= tol,
                      "head tf32 B=%zu in=%zu: row_loss[%zu] %.9g, want %.9g (tolerance %.3g)",
                      B, K, i, (double)g_loss[i], (double)loss_ref[i], tol);
                differ += g_loss[i] != loss32[i];
            }
            CHECK(differ >= B / 2, "head tf32 in=%zu: row_loss differs from the fp32 context's "
                  "in only %zu of %zu rows: TF32 not in use?", K, differ, B);
        }
    }
    return TEST_PASS;
}

static test_result test_head_tf32(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, head_tf32_body);
}

/* ------------------------------------------------------------------ gather, optimizers */

/* Gather over the four kinds of data set: uint8 or float features, labels or
 * float targets (kind bit 0: float features, bit 1: float targets). */
static test_result gather_body(fixture *fx)
{
    /* widths of 1 and 3 take the kernel's one-value path, 8 and 784 its four-value
     * path; 4100 rows are more than the launch's 4096 row blocks (its row loop) */
    static const size_t features_list[] = {1, 3, 8, 784};
    static const size_t batches[] = {1, 37, 4100};
    const size_t count = 50; /* samples in the "data set" */
    rng r = {0xBF58476D1CE4E5B9ULL};
    for (int kind = 0; kind < 4; ++kind) {
        const int float_features = kind & 1, float_targets = (kind & 2) != 0;
        for (size_t fi = 0; fi < sizeof features_list / sizeof features_list[0]; ++fi) {
            for (size_t bi = 0; bi < sizeof batches / sizeof batches[0]; ++bi) {
                const size_t features = features_list[fi], batch = batches[bi];
                const size_t width = float_targets ? 1 + 4 * (bi % 2) : 0; /* 1 or 5 */
                fixture_reset(fx);
                uint8_t *images = (uint8_t *)host_buf(fx, count * features); /* [count, f] */
                float *values = (float *)host_buf(fx, count * features * sizeof(float));
                int32_t *labels = (int32_t *)host_buf(fx, count * sizeof(int32_t)); /* [count] */
                float *targets = (float *)host_buf(fx, (count * width + 1) * sizeof(float));
                int32_t *index = (int32_t *)host_buf(fx, batch * sizeof(int32_t)); /* [batch] */
                float *x_ref = (float *)host_buf(fx, batch * features * sizeof(float));
                int32_t *y_ref = (int32_t *)host_buf(fx, batch * sizeof(int32_t));
                float *t_ref = (float *)host_buf(fx, (batch * width + 1) * sizeof(float));
                CHECK(images && values && labels && targets && index && x_ref && y_ref && t_ref,
                      "host allocation failed");
                for (size_t i = 0; i < count * features; ++i) /* first 0, last 255 */
                    images[i] = i == 0 ? 0 : i + 1 == count * features ? 255
                                                                       : (uint8_t)rng_next(&r);
                fill_uniform(&r, values, count * features, -3.0f, 3.0f);
                for (size_t i = 0; i < count; ++i) labels[i] = (int32_t)rng_below(&r, 1000);
                fill_uniform(&r, targets, count * width, -1.0f, 2.0f);
                for (size_t b = 0; b < batch; ++b) index[b] = (int32_t)rng_below(&r, count);
                index[0] = (int32_t)(count - 1);
                ffnn_gather_source src = {float_features ? NULL : images,
                                          float_features ? values : NULL, features,
                                          float_targets ? NULL : labels,
                                          float_targets ? targets : NULL, width};
                CHECK_OK(fx->cpu->gather(fx->cpu_ctx, &src, index, batch, x_ref, y_ref, t_ref));
                void *d_images, *d_values, *d_labels, *d_targets, *d_index, *d_x, *d_y, *d_t;
                CHECK_OK(dev_buf(fx, images, count * features, &d_images));
                CHECK_OK(dev_buf(fx, values, count * features * sizeof(float), &d_values));
                CHECK_OK(dev_buf(fx, labels, count * sizeof(int32_t), &d_labels));
                CHECK_OK(dev_buf(fx, targets, (count * width + 1) * sizeof(float), &d_targets));
                CHECK_OK(dev_buf(fx, index, batch * sizeof(int32_t), &d_index));
                CHECK_OK(dev_buf(fx, NULL, batch * features * sizeof(float), &d_x));
                CHECK_OK(dev_buf(fx, NULL, batch * sizeof(int32_t), &d_y));
                CHECK_OK(dev_buf(fx, NULL, (batch * width + 1) * sizeof(float), &d_t));
                ffnn_gather_source dsrc = {
                    float_features ? NULL : (const uint8_t *)d_images,
                    float_features ? (const float *)d_values : NULL, features,
                    float_targets ? NULL : (const int32_t *)d_labels,
                    float_targets ? (const float *)d_targets : NULL, width};
                CHECK_OK(fx->gpu->gather(fx->gpu_ctx, &dsrc, (const int32_t *)d_index, batch,
                                         (float *)d_x, (int32_t *)d_y, (float *)d_t));
                const float *x = download_f32(fx, d_x, batch * features);
                const uint8_t *y = download_u8(fx, d_y, batch * sizeof(int32_t));
                const float *t = download_f32(fx, d_t, batch * width);
                CHECK(x && y && t, "download failed: %s", ffnn_last_error());
                CHECK(float_features ? same_bits_f32("x", x, x_ref, batch * features)
                                     : close_f32("x", x, x_ref, batch * features, 0.0, 1e-6),
                      "gather kind %d batch=%zu features=%zu", kind, batch, features);
                if (float_targets)
                    CHECK(same_bits_f32("t", t, t_ref, batch * width),
                          "gather kind %d batch=%zu width=%zu", kind, batch, width);
                else
                    CHECK(equal_u8("y", y, (const uint8_t *)y_ref, batch * sizeof(int32_t)),
                          "gather kind %d batch=%zu", kind, batch);
            }
        }
    }
    return TEST_PASS;
}

static test_result test_gather(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, gather_body);
}

/* A plain-SGD step of rate lr for optimizer_update. */
static ffnn_optimizer_step sgd_step(float lr)
{
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.optimizer = FFNN_OPT_SGD;
    cfg.learning_rate = lr;
    return ffnn_optimizer_step_at(&cfg, 1);
}

static test_result sgd_body(fixture *fx)
{
    static const size_t sizes[] = {1, 255, 203530, 1000003};
    rng r = {0x853C49E6748FEA9BULL};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
        const size_t n = sizes[si];
        const float lr = rng_uniform(&r, 0.001f, 0.5f);
        fixture_reset(fx);
        float *params = (float *)host_buf(fx, n * sizeof(float)); /* [n] */
        float *grads = (float *)host_buf(fx, n * sizeof(float));  /* [n] */
        CHECK(params && grads, "host allocation failed");
        fill_uniform(&r, params, n, -1.0f, 1.0f);
        fill_uniform(&r, grads, n, -1.0f, 1.0f);
        void *d_params, *d_grads;
        CHECK_OK(dev_buf(fx, params, n * sizeof(float), &d_params));
        CHECK_OK(dev_buf(fx, grads, n * sizeof(float), &d_grads));
        const ffnn_optimizer_step step = sgd_step(lr);
        CHECK_OK(fx->cpu->optimizer_update(fx->cpu_ctx, &step, params, grads, NULL,
                                           n)); /* params := ref */
        CHECK_OK(fx->gpu->optimizer_update(fx->gpu_ctx, &step, (float *)d_params,
                                           (const float *)d_grads, NULL, n));
        const float *got = download_f32(fx, d_params, n);
        CHECK(got != NULL, "download failed: %s", ffnn_last_error());
        CHECK(close_f32("params", got, params, n, 1e-7, 1e-6), "sgd_update n=%zu lr=%g", n,
              (double)lr);
    }
    return TEST_PASS;
}

static test_result test_sgd_update(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, sgd_body);
}

/* Momentum, Nesterov momentum and Adam: several steps of the cuda kernel against
 * the cpu reference on the same random parameters and gradients (fresh gradients
 * each step, some exactly zero: Adam's 0/(0+eps) path), state carried on each
 * side. Both evaluate the same float operations in the same order with the same
 * roundings, so they should agree to the bit; the tolerance leaves an ulp. */
static test_result optimizer_body(fixture *fx)
{
    static const size_t sizes[] = {1, 255, 203530, 1000003};
    static const struct { ffnn_optimizer kind; int nesterov; float lr, beta1, wd; } cases[] = {
        {FFNN_OPT_MOMENTUM, 0, 0.01f, 0.9f, 0}, {FFNN_OPT_MOMENTUM, 1, 0.05f, 0.9f, 0},
        {FFNN_OPT_ADAM, 0, 1e-3f, 0.9f, 0},     {FFNN_OPT_ADAM, 0, 0.01f, 0.6f, 0}, /* lerp w >= 0.5 */
        /* weight decay (L2 into the gradient) and adamw's decoupled decay */
        {FFNN_OPT_SGD, 0, 0.05f, 0.9f, 0.01f},  {FFNN_OPT_MOMENTUM, 1, 0.05f, 0.9f, 5e-4f},
        {FFNN_OPT_ADAM, 0, 1e-3f, 0.9f, 0.01f}, {FFNN_OPT_ADAMW, 0, 1e-3f, 0.9f, 0.05f},
    };
    enum { STEPS = 5 };
    rng r = {0x5851F42D4C957F2DULL};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            const size_t n = sizes[si];
            ffnn_train_config cfg = ffnn_train_config_default();
            cfg.optimizer = cases[ci].kind;
            cfg.nesterov = cases[ci].nesterov;
            cfg.learning_rate = cases[ci].lr;
            cfg.beta1 = cases[ci].beta1;
            cfg.weight_decay = cases[ci].wd;
            const size_t ns = ffnn_optimizer_state_count(cfg.optimizer) * n;
            const char *name = cases[ci].nesterov ? "nesterov" : ffnn_optimizer_name(cfg.optimizer);
            fixture_reset(fx);
            float *params = (float *)host_buf(fx, n * sizeof(float)); /* [n]          */
            float *grads = (float *)host_buf(fx, n * sizeof(float));  /* [n]          */
            float *state = (float *)host_buf(fx, (ns + 1) * sizeof(float)); /* [count * n] */
            CHECK(params && grads && state, "host allocation failed");
            fill_uniform(&r, params, n, -1.0f, 1.0f);
            memset(state, 0, ns * sizeof(float));
            void *d_params, *d_grads, *d_state;
            CHECK_OK(dev_buf(fx, params, n * sizeof(float), &d_params));
            CHECK_OK(dev_buf(fx, NULL, n * sizeof(float), &d_grads));
            CHECK_OK(dev_buf(fx, state, (ns + 1) * sizeof(float), &d_state));
            for (uint64_t t = 1; t <= STEPS; ++t) {
                fill_uniform(&r, grads, n, -0.1f, 0.1f);
                for (size_t i = 0; i < n; i += 7) grads[i] = 0.0f;
                CHECK_OK(fx->gpu->upload(fx->gpu_ctx, d_grads, grads, n * sizeof(float)));
                const ffnn_optimizer_step step = ffnn_optimizer_step_at(&cfg, t);
                CHECK_OK(fx->cpu->optimizer_update(fx->cpu_ctx, &step, params, grads, state, n));
                CHECK_OK(fx->gpu->optimizer_update(fx->gpu_ctx, &step, (float *)d_params,
                                                   (const float *)d_grads, (float *)d_state, n));
                const float *got = download_f32(fx, d_params, n); /* synchronises */
                const float *got_state = download_f32(fx, d_state, ns + 1);
                CHECK(got && got_state, "download failed: %s", ffnn_last_error());
                CHECK(close_f32("params", got, params, n, 1e-7, 1e-6), "%s n=%zu step %u", name,
                      n, (unsigned)t);
                CHECK(close_f32("state", got_state, state, ns, 1e-12, 1e-6), "%s n=%zu step %u",
                      name, n, (unsigned)t);
            }
        }
    }
    return TEST_PASS;
}

static test_result test_optimizer_update(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, optimizer_body);
}

/* ------------------------------------------------------------------ faults */

/* An allocation larger than any GPU: a clean FFNN_ERR_CUDA naming the size, and the
 * context still works afterwards (out of memory is not sticky). */
/* Clipping (value then norm), dropout and EMA: cuda against the cpu reference on
 * fresh random inputs. Dropout and EMA: the same bits (the same integer mask, the
 * same roundings); clipping: the norm summed in another order in double, 1e-6. */
static test_result clip_dropout_ema_body(fixture *fx)
{
    static const size_t sizes[] = {1, 1023, 203530, 1000003};
    rng r = {0x9E3779B97F4A7C15ULL};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
        const size_t n = sizes[si];
        fixture_reset(fx);
        float *g = (float *)host_buf(fx, n * 4), *e = (float *)host_buf(fx, n * 4);
        float *d = (float *)host_buf(fx, n * 4);
        CHECK(g && e && d, "host allocation failed");
        fill_uniform(&r, g, n, -0.01f, 0.01f);
        fill_uniform(&r, e, n, 0.5f, 1.0f);
        void *dg, *de, *dd, *dnorm;
        CHECK_OK(dev_buf(fx, g, n * 4, &dg));
        CHECK_OK(dev_buf(fx, e, n * 4, &de));
        CHECK_OK(dev_buf(fx, NULL, n * 4, &dd));
        CHECK_OK(dev_buf(fx, NULL, 4, &dnorm));
        float norm = 0;
        CHECK_OK(fx->cpu->grad_clip(fx->cpu_ctx, g, n, 0.05f, 0.008f, &norm));
        CHECK_OK(fx->gpu->grad_clip(fx->gpu_ctx, (float *)dg, n, 0.05f, 0.008f, (float *)dnorm));
        const float *got = download_f32(fx, dg, n), *got_norm = download_f32(fx, dnorm, 1);
        CHECK(got && got_norm, "download failed: %s", ffnn_last_error());
        CHECK(close_f32("norm", got_norm, &norm, 1, 0, 1e-6), "n=%zu", n);
        CHECK(close_f32("clipped", got, g, n, 1e-12, 1e-6), "n=%zu", n);
        const uint64_t key = ffnn_dropout_key(11, 5, 2);
        for (int k = 0; k < 3; k++) {
            const double p = k * 0.4; /* 0, 0.4, 0.8 */
            CHECK_OK(fx->cpu->dropout(fx->cpu_ctx, e, d, n, key, ffnn_dropout_threshold(p),
                                      ffnn_dropout_scale(p)));
            CHECK_OK(fx->gpu->dropout(fx->gpu_ctx, (const float *)de, (float *)dd, n, key,
                                      ffnn_dropout_threshold(p), ffnn_dropout_scale(p)));
            const float *gd = download_f32(fx, dd, n);
            CHECK(gd && same_bits_f32("dropout", gd, d, n), "n=%zu p=%g", n, p);
        }
        CHECK_OK(fx->cpu->ema_update(fx->cpu_ctx, e, g, n, 0.999f, 0.001f));
        CHECK_OK(fx->gpu->ema_update(fx->gpu_ctx, (float *)de, (const float *)dg, n, 0.999f,
                                     0.001f));
        const float *ge = download_f32(fx, de, n);
        /* the gradients differ by the clip's last bits: EMA of nearly the same p */
        CHECK(ge && close_f32("ema", ge, e, n, 1e-12, 1e-6), "n=%zu", n);
    }
    return TEST_PASS;
}

static test_result test_clip_dropout_ema(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, clip_dropout_ema_body);
}

static test_result alloc_too_large_body(fixture *fx)
{
    void *p = NULL;
    const size_t huge = (size_t)1 << 50; /* 1 PiB */
    ffnn_status st = fx->gpu->alloc(fx->gpu_ctx, huge, &p);
    CHECK(st == FFNN_ERR_CUDA, "alloc of 2^50 bytes returned %d (%s)", (int)st,
          ffnn_last_error());
    CHECK(p == NULL, "failed alloc left a pointer");
    CHECK(strstr(ffnn_last_error(), "cudaMalloc of 1.13e+15 bytes failed") != NULL,
          "message does not name the call and size: \"%s\"", ffnn_last_error());

    fixture_reset(fx);
    const float v[3] = {1.0f, -2.0f, 3.5f}, g[3] = {1.0f, 2.0f, 3.5f};
    void *d, *dg;
    CHECK_OK(dev_buf(fx, v, sizeof v, &d));
    CHECK_OK(dev_buf(fx, g, sizeof g, &dg));
    const ffnn_optimizer_step step = sgd_step(0.5f);
    CHECK_OK(fx->gpu->optimizer_update(fx->gpu_ctx, &step, (float *)d, (const float *)dg, NULL,
                                       3));
    const float *got = download_f32(fx, d, 3);
    CHECK(got != NULL, "download after a failed alloc: %s", ffnn_last_error());
    CHECK(got[0] == 0.5f && got[1] == -3.0f && got[2] == 1.75f,
          "after a failed alloc: got %g %g %g", (double)got[0], (double)got[1], (double)got[2]);
    return TEST_PASS;
}

static test_result test_alloc_too_large(char *why, size_t why_size)
{
    return with_fixture(why, why_size, FFNN_STRATEGY_TILED, alloc_too_large_body);
}

/* Device queries are consistent with the skip conditions. */
static test_result test_device_queries(char *why, size_t why_size)
{
    if (!ffnn_has_cuda()) SKIP("build has no CUDA");
    if (ffnn_cuda_device_count() == 0) SKIP("no CUDA GPU");
    char name[256];
    memset(name, 'x', sizeof name);
    ffnn_cuda_device_name(name, sizeof name);
    CHECK(memchr(name, '\0', sizeof name) != NULL, "device name not terminated");
    CHECK(name[0] != '\0', "a GPU is present but its name is empty");
    char tiny[4];
    ffnn_cuda_device_name(tiny, sizeof tiny);
    CHECK(strlen(tiny) <= 3, "device name overflowed a 4-byte buffer");
    CHECK(ffnn_cuda_backend() != NULL, "ffnn_cuda_backend() is NULL");
    CHECK(strcmp(ffnn_cuda_backend()->name, "cuda") == 0, "backend name \"%s\"",
          ffnn_cuda_backend()->name);
    return TEST_PASS;
}

const test_case cuda_tests[] = {
    {"cuda_device_queries", test_device_queries},
    {"cuda_dense_forward_naive", test_dense_forward_naive},
    {"cuda_dense_forward_tiled", test_dense_forward_tiled},
    {"cuda_dense_backward_naive", test_dense_backward_naive},
    {"cuda_dense_backward_tiled", test_dense_backward_tiled},
    {"cuda_dense_deterministic", test_dense_deterministic},
    {"cuda_activations", test_activations},
    {"cuda_loss_softmax_ce", test_loss_softmax_ce},
    {"cuda_loss_sigmoid_bce", test_loss_sigmoid_bce},
    {"cuda_loss_mse", test_loss_mse},
    {"cuda_loss_float_targets", test_loss_float_targets},
    {"cuda_softmax_ce_head", test_head},
    {"cuda_softmax_ce_head_tf32_rounds", test_head_tf32},
    {"cuda_gather", test_gather},
    {"cuda_sgd_update", test_sgd_update},
    {"cuda_optimizer_update", test_optimizer_update},
    {"cuda_clip_dropout_ema_vs_cpu", test_clip_dropout_ema},
    {"cuda_alloc_too_large", test_alloc_too_large},
};
const size_t cuda_tests_count = sizeof cuda_tests / sizeof cuda_tests[0];
