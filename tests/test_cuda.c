/*
 * test_cuda.c - suite "cuda": what the CUDA backend promises beyond its ops' values
 * against the CPU reference (those: test_ops.c, every op per matmul variant and
 * precision): device queries, the naive and tiled matmuls agreeing bit for bit and on
 * a rerun, the output layer and its loss in one op (softmax_ce_head: against the
 * reference's ops composed, its split sums and SGD, its TF32 rounding), and a clean
 * out-of-memory error.
 *
 * Each GPU output buffer is filled with 0xFF bytes (a NaN for floats, 255 for
 * flags) before the op runs, so an element the kernel forgets to write fails the
 * comparison. Tolerances: at head_body and head_tf32_body.
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
#include "test_fixtures.h"
#include "core/activation.h"
#include "core/dropout.h"
#include "test_backend_ctx.h"
#include "ffnn.h"
#include "test_numeric.h"

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

/* Create both backends, run body, free everything. Skips without CUDA or a GPU. */
typedef test_result (*fixture_body)(fixture *fx);

static test_result with_fixture(char *why, size_t why_size, ffnn_strategy kernels,
                                fixture_body body)
{
    SKIP_WITHOUT_GPU();
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

/* Both strategies sum each output in k order with fmaf, so they agree bit for bit,
 * and a rerun gives the same bits (dense.cu's determinism promise). */
static test_result deterministic_body(fixture *fx)
{
    rng r = {0x2545F4914F6CDD1DULL};
    void *naive_ctx = NULL;
    CHECK_OK(test_ctx(fx->gpu, FFNN_STRATEGY_NAIVE, 1, &naive_ctx));
    test_result result = TEST_PASS;
    for (size_t i = 0; i < test_dense_count && result == TEST_PASS; ++i) {
        const dense_shape s = test_dense_shape(&r, i);
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
            } else if (!same_f32("z tiled vs naive", z, z_naive, nz) ||
                       !same_f32("dW tiled vs naive", dW, dW_naive, nw) ||
                       !same_f32("dx tiled vs naive", dx, dx_naive, nx)) {
                fprintf(stderr, "    run %d, batch=%zu in=%zu out=%zu\n", run, s.batch, s.in,
                        s.out);
                result = TEST_FAIL;
            }
        }
    }
    fx->gpu->destroy(naive_ctx);
    return result;
}

TEST_WITH("cuda_dense_deterministic", test_dense_deterministic, with_fixture, FFNN_STRATEGY_TILED,
          deterministic_body);

/* ------------------------------------------------------------------ the head */

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

TEST_WITH("cuda_softmax_ce_head", test_head, with_fixture, FFNN_STRATEGY_TILED, head_body);

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

TEST_WITH("cuda_softmax_ce_head_tf32_rounds", test_head_tf32, with_fixture, FFNN_STRATEGY_TILED,
          head_tf32_body);

/* A plain-SGD step of rate lr for optimizer_update. */
static ffnn_optimizer_step sgd_step(float lr)
{
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.optimizer = FFNN_OPT_SGD;
    cfg.learning_rate = lr;
    return ffnn_optimizer_step_at(&cfg, 1);
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

TEST_WITH("cuda_alloc_too_large", test_alloc_too_large, with_fixture, FFNN_STRATEGY_TILED,
          alloc_too_large_body);

/* Device queries are consistent with the skip conditions. */
TEST("cuda_device_queries", test_device_queries)
{
    SKIP_WITHOUT_GPU();
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

/* test_embedding.c: backend ops against the cpu reference, bit for bit. */
test_result ffnn_test_embedding_backend(const ffnn_backend_ops *ops, char *why,
                                        size_t why_size);

/* The embedding kernels (embedding.cu) against the cpu reference on fresh random
 * inputs: the gather and the deterministic scatter-add give its bits (tolerance
 * 0: the same additions in the same order), on two draws of inputs. */
TEST("cuda_embedding_matches_cpu", test_embedding)
{
    SKIP_WITHOUT_GPU();
    const ffnn_backend_ops *gpu = ffnn_cuda_backend();
    CHECK(gpu != NULL, "ffnn_cuda_backend() is NULL although a GPU is visible");
    for (int run = 0; run < 2; run++)
        CHECK_PASS(ffnn_test_embedding_backend(gpu, why, why_size));
    return TEST_PASS;
}
