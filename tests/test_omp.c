/*
 * test_omp.c - suite "omp": every op of the OpenMP backend (src/backend/omp/) against the
 * single-threaded reference (ffnn_cpu_backend) on fresh random data, for each
 * matmul instruction set this CPU runs (avx512, avx2, baseline) and 1, 2 and 3
 * threads; then whole training runs: omp against the reference for 200 steps on
 * Fashion-MNIST, and omp against itself (same bits for the same thread count, and
 * for any thread count).
 *
 * Every omp output buffer is filled with 0xFF bytes (a NaN for floats) before the
 * op runs, so an element the op forgets to write fails the comparison.
 *
 * Tolerances: |got - want| <= atol + rtol * |want|
 *   matmuls (z, dW, dx)  atol = 1e-5 * (1 + sqrt(K)), rtol = 1e-4, K the summed
 *       length (in for z, batch for dW, out for dx) - the cuda tests' bound. The
 *       omp kernels sum over K in the same order as the reference, but with one
 *       fma per term (avx2/avx512) where the reference rounds the product first;
 *       measured at 64 x 784 x 256 with inputs in [-1, 1]: at most 1.1e-5 on z
 *       (sums of magnitude ~7, bound 2.9e-4), 2.9e-6 on dW, 6.7e-6 on dx.
 *   everything else: the same bits (db is summed in the reference's order;
 *       activations, losses, gather and optimizers use the reference's
 *       expressions and libm calls).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "check.h"
#include "core/activation.h"
#include "core/dropout.h"
#include "test_backend_ctx.h"
#include "test_numeric.h"
#include "ffnn.h"
#include "backend/omp/omp_kernels.h"

/* ------------------------------------------------------------------ helpers */

/* The same bits (NaN payloads included). */
static int same_bits(const char *what, const void *got, const void *want, size_t bytes)
{
    if (memcmp(got, want, bytes) == 0)
        return 1;
    const unsigned char *g = got, *w = want;
    size_t i = 0;
    while (g[i] == w[i])
        i++;
    fprintf(stderr, "    %s: bytes differ from offset %zu (of %zu)\n", what, i, bytes);
    if (bytes % 4 == 0)
        fprintf(stderr, "    as floats at [%zu]: got %.9g want %.9g\n", i / 4,
                (double)((const float *)got)[i / 4], (double)((const float *)want)[i / 4]);
    return 0;
}

static double matmul_atol(size_t K) { return 1e-5 * (1.0 + sqrt((double)K)); }
#define MATMUL_RTOL 1e-4

/* The omp contexts under test: each instruction set this CPU runs x 1, 2, 3 threads. */
enum { MAX_CTX = 9 };
typedef struct contexts {
    void *ctx[MAX_CTX];
    char name[MAX_CTX][32];
    size_t n;
} contexts;

static void contexts_free(contexts *c)
{
    for (size_t i = 0; i < c->n; i++)
        ffnn_omp_backend.destroy(c->ctx[i]);
    c->n = 0;
}

static ffnn_status contexts_make(contexts *c)
{
    static const char *isas[] = {"avx512", "avx2", "baseline"};
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < 3; i++) {
        const ffnn_omp_gemm_isa *isa = ffnn_omp_gemm_named(isas[i]);
        if (!isa)
            continue; /* not on this CPU */
        for (int threads = 1; threads <= 3; threads++) {
            ffnn_status st = ffnn_omp_create_with(threads, isa, &c->ctx[c->n]);
            if (st != FFNN_OK) {
                contexts_free(c);
                return st;
            }
            snprintf(c->name[c->n], sizeof c->name[0], "%s, %d thread%s", isa->name, threads,
                     threads > 1 ? "s" : "");
            c->n++;
        }
    }
    return FFNN_OK;
}

/* ------------------------------------------------------------------ dense */

typedef struct dense_shape {
    size_t batch, in, out;
} dense_shape;

static const dense_shape dense_shapes[] = {
    {1, 1, 1},      {64, 784, 256}, {65, 784, 256}, {1000, 784, 256}, {64, 256, 10},
    {65, 256, 10},  {1000, 256, 10}, {1, 784, 256}, {1, 784, 10},    {17, 33, 65},
    {33, 1, 65},    {257, 17, 1},   {7, 3, 5},      {64, 65, 64},    {9, 48, 31},
    {2000, 3, 5},
};
enum { DENSE_FIXED = sizeof dense_shapes / sizeof dense_shapes[0], DENSE_RANDOM = 6 };

static dense_shape dense_shape_at(rng *r, size_t i)
{
    if (i < DENSE_FIXED)
        return dense_shapes[i];
    dense_shape s = {rng_between(r, 1, 300), rng_between(r, 1, 900), rng_between(r, 1, 300)};
    return s;
}

static test_result dense_case(const contexts *c, rng *r, dense_shape s)
{
    const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
    float *x = malloc(nx * sizeof *x), *W = malloc(nw * sizeof *W);
    float *b = malloc(s.out * sizeof *b), *dz = malloc(nz * sizeof *dz);
    float *z_ref = malloc(nz * sizeof *z_ref), *zb_ref = malloc(nz * sizeof *zb_ref);
    float *dx_ref = malloc(nx * sizeof *dx_ref), *dW_ref = malloc(nw * sizeof *dW_ref);
    float *db_ref = malloc(s.out * sizeof *db_ref);
    float *z = poisoned(nz), *dx = poisoned(nx), *dW = poisoned(nw), *db = poisoned(s.out);
    test_result result = TEST_FAIL;
    if (!(x && W && b && dz && z_ref && zb_ref && dx_ref && dW_ref && db_ref && z && dx && dW &&
          db)) {
        fprintf(stderr, "    out of memory\n");
        goto done;
    }
    fill_uniform(r, x, nx, -1.0f, 1.0f);
    fill_uniform(r, W, nw, -1.0f, 1.0f);
    fill_uniform(r, b, s.out, -1.0f, 1.0f);
    fill_uniform(r, dz, nz, -1.0f, 1.0f);
    ffnn_cpu_backend.dense_forward(NULL, x, W, NULL, z_ref, s.batch, s.in, s.out);
    ffnn_cpu_backend.dense_forward(NULL, x, W, b, zb_ref, s.batch, s.in, s.out);
    ffnn_cpu_backend.dense_backward(NULL, x, W, dz, dx_ref, dW_ref, db_ref, s.batch, s.in,
                                    s.out);
    for (size_t k = 0; k < c->n; k++) {
        void *ctx = c->ctx[k];
        const char *name = c->name[k];
        memset(z, 0xFF, nz * sizeof *z);
        if (ffnn_omp_backend.dense_forward(ctx, x, W, NULL, z, s.batch, s.in, s.out) ||
            !close_f32("z", z, z_ref, nz, matmul_atol(s.in), MATMUL_RTOL)) {
            fprintf(stderr, "    dense_forward (%s) batch=%zu in=%zu out=%zu\n", name, s.batch,
                    s.in, s.out);
            goto done;
        }
        memset(z, 0xFF, nz * sizeof *z);
        if (ffnn_omp_backend.dense_forward(ctx, x, W, b, z, s.batch, s.in, s.out) ||
            !close_f32("z (bias)", z, zb_ref, nz, matmul_atol(s.in), MATMUL_RTOL)) {
            fprintf(stderr, "    dense_forward with bias (%s) batch=%zu in=%zu out=%zu\n", name,
                    s.batch, s.in, s.out);
            goto done;
        }
        memset(dx, 0xFF, nx * sizeof *dx);
        memset(dW, 0xFF, nw * sizeof *dW);
        memset(db, 0xFF, s.out * sizeof *db);
        if (ffnn_omp_backend.dense_backward(ctx, x, W, dz, dx, dW, db, s.batch, s.in, s.out) ||
            !close_f32("dW", dW, dW_ref, nw, matmul_atol(s.batch), MATMUL_RTOL) ||
            !close_f32("dx", dx, dx_ref, nx, matmul_atol(s.out), MATMUL_RTOL) ||
            !same_bits("db", db, db_ref, s.out * sizeof *db)) {
            fprintf(stderr, "    dense_backward (%s) batch=%zu in=%zu out=%zu\n", name,
                    s.batch, s.in, s.out);
            goto done;
        }
        /* the first layer (no dx) without a bias (no db) */
        memset(dW, 0xFF, nw * sizeof *dW);
        if (ffnn_omp_backend.dense_backward(ctx, x, W, dz, NULL, dW, NULL, s.batch, s.in,
                                            s.out) ||
            !close_f32("dW (dx, db NULL)", dW, dW_ref, nw, matmul_atol(s.batch), MATMUL_RTOL)) {
            fprintf(stderr, "    dense_backward (%s) batch=%zu in=%zu out=%zu\n", name,
                    s.batch, s.in, s.out);
            goto done;
        }
    }
    result = TEST_PASS;
done:
    free(x), free(W), free(b), free(dz), free(z_ref), free(zb_ref), free(dx_ref);
    free(dW_ref), free(db_ref), free(z), free(dx), free(dW), free(db);
    return result;
}

static test_result test_dense(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    contexts c;
    CHECK_OK(contexts_make(&c));
    rng r = {0x9E3779B97F4A7C15ULL};
    test_result result = TEST_PASS;
    for (size_t i = 0; i < DENSE_FIXED + DENSE_RANDOM && result == TEST_PASS; i++)
        result = dense_case(&c, &r, dense_shape_at(&r, i));
    printf("     matmul kernels tested:");
    for (size_t i = 0; i < c.n; i += 3)
        printf(" %s", ffnn_omp_isa(c.ctx[i])->name);
    printf(" (best here: %s)\n", ffnn_omp_gemm_best()->name);
    contexts_free(&c);
    return result;
}

/* The matmuls give the same bits for any thread count, and on a second call. */
static test_result test_dense_thread_invariant(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    contexts c;
    CHECK_OK(contexts_make(&c));
    rng r = {0x2545F4914F6CDD1DULL};
    const dense_shape s = {67, 785, 259};
    const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
    float *x = malloc(nx * 4), *W = malloc(nw * 4), *b = malloc(s.out * 4), *dz = malloc(nz * 4);
    float *z[2] = {poisoned(nz), poisoned(nz)}, *dx[2] = {poisoned(nx), poisoned(nx)};
    float *dW[2] = {poisoned(nw), poisoned(nw)};
    test_result result = TEST_FAIL;
    if (x && W && b && dz && z[0] && z[1] && dx[0] && dx[1] && dW[0] && dW[1]) {
        fill_uniform(&r, x, nx, -1.0f, 1.0f);
        fill_uniform(&r, W, nw, -1.0f, 1.0f);
        fill_uniform(&r, b, s.out, -1.0f, 1.0f);
        fill_uniform(&r, dz, nz, -1.0f, 1.0f);
        result = TEST_PASS;
        for (size_t k = 0; k < c.n && result == TEST_PASS; k++) {
            const int slot = k % 3 == 0 ? 0 : 1; /* 1 thread: the baseline of its set */
            ffnn_omp_backend.dense_forward(c.ctx[k], x, W, b, z[slot], s.batch, s.in, s.out);
            ffnn_omp_backend.dense_backward(c.ctx[k], x, W, dz, dx[slot], dW[slot], NULL,
                                            s.batch, s.in, s.out);
            if (slot == 1 && (!same_bits("z", z[1], z[0], nz * 4) ||
                              !same_bits("dx", dx[1], dx[0], nx * 4) ||
                              !same_bits("dW", dW[1], dW[0], nw * 4))) {
                fprintf(stderr, "    %s differs from 1 thread\n", c.name[k]);
                result = TEST_FAIL;
            }
        }
    }
    free(x), free(W), free(b), free(dz);
    for (int i = 0; i < 2; i++)
        free(z[i]), free(dx[i]), free(dW[i]);
    contexts_free(&c);
    return result;
}

/* ------------------------------------------------------------------ element-wise */

/* Every activation, and leaky_relu and elu with a parameter other than the default:
 * the omp backend gives the reference's bits (one formula, cpu_math.h), forward and
 * backward (from the saved value: a, or z for gelu, gelu_tanh, silu, mish,
 * hardswish), out of place and in place. */
static test_result test_activations(char *why, size_t why_size)
{
    (void)why, (void)why_size;
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
    static const size_t sizes[] = {1, 31, 16385, 300001};
    void *ctx = NULL;
    CHECK_OK(test_ctx(&ffnn_omp_backend, FFNN_STRATEGY_TILED, 2, &ctx));
    rng r = {0xA0761D6478BD642FULL};
    test_result result = TEST_PASS;
    for (size_t si = 0; si < 4 && result == TEST_PASS; si++) {
        const size_t n = sizes[si];
        float *z = malloc(n * 4), *da = malloc(n * 4), *a_ref = malloc(n * 4);
        float *dz_ref = malloc(n * 4), *a = poisoned(n), *dz = poisoned(n), *inplace = malloc(n * 4);
        if (!(z && da && a_ref && dz_ref && a && dz && inplace)) {
            result = TEST_FAIL;
        } else {
            fill_uniform(&r, z, n, -6.0f, 6.0f);
            for (size_t i = 0; i < n; i += 97)
                z[i] = 0.0f;
            for (size_t i = 5; i < n; i += 101)
                z[i] = i % 2 ? 40.0f : -40.0f;
            for (size_t i = 7; i < n; i += 103) /* hardswish's corners */
                z[i] = i % 2 ? 3.0f : -3.0f;
            fill_uniform(&r, da, n, -1.0f, 1.0f);
            for (size_t ai = 0; ai < sizeof acts / sizeof acts[0] && result == TEST_PASS; ai++) {
                const ffnn_activation act = acts[ai].act;
                const float p = acts[ai].param;
                ffnn_cpu_backend.activation_forward(NULL, act, p, z, a_ref, n);
                /* the saved value the backward reads */
                const float *saved = ffnn_act_grad_from_input(act) ? z : a_ref;
                ffnn_cpu_backend.activation_backward(NULL, act, p, saved, da, dz_ref, n);
                memset(a, 0xFF, n * 4);
                memset(dz, 0xFF, n * 4);
                ffnn_omp_backend.activation_forward(ctx, act, p, z, a, n);
                ffnn_omp_backend.activation_backward(ctx, act, p, saved, da, dz, n);
                if (!same_bits("a", a, a_ref, n * 4) || !same_bits("dz", dz, dz_ref, n * 4))
                    result = TEST_FAIL;
                memcpy(inplace, z, n * 4); /* a = f(a) */
                ffnn_omp_backend.activation_forward(ctx, act, p, inplace, inplace, n);
                if (!same_bits("a (in place)", inplace, a_ref, n * 4))
                    result = TEST_FAIL;
                memcpy(inplace, da, n * 4); /* dz = da f'(saved) over da */
                ffnn_omp_backend.activation_backward(ctx, act, p, saved, inplace, inplace, n);
                if (!same_bits("dz (in place)", inplace, dz_ref, n * 4))
                    result = TEST_FAIL;
                if (result != TEST_PASS)
                    fprintf(stderr, "    activation %s (param %g) n=%zu\n",
                            ffnn_activation_name(act), (double)p, n);
            }
        }
        free(z), free(da), free(a_ref), free(dz_ref), free(a), free(dz), free(inplace);
    }
    ffnn_omp_backend.destroy(ctx);
    return result;
}

static test_result loss_case(void *ctx, rng *r, ffnn_loss loss, size_t batch, size_t width,
                             int with_targets)
{
    const size_t n = batch * width;
    float *out = malloc(n * 4), *targets = malloc(n * 4), *dout_ref = malloc(n * 4);
    float *loss_ref = malloc(batch * 4), *dout = poisoned(n), *rl = poisoned(batch);
    int32_t *y = malloc(batch * sizeof *y);
    uint8_t *ok_ref = malloc(batch), *ok = malloc(batch);
    test_result result = TEST_FAIL;
    if (!(out && targets && dout_ref && loss_ref && dout && rl && y && ok_ref && ok))
        goto done;
    const float lo = loss == FFNN_LOSS_MSE ? -0.5f : -4.0f, hi = loss == FFNN_LOSS_MSE ? 1.5f : 4.0f;
    for (size_t b = 0; b < batch; b++) {
        float *row = out + b * width;
        fill_uniform(r, row, width, lo, hi);
        if (loss != FFNN_LOSS_MSE && b % 7 == 3)
            for (size_t j = 0; j < width; j++)
                row[j] *= 25.0f;
        if (b % 11 == 5)
            memset(row, 0, width * 4);
        y[b] = (int32_t)(width > 1 ? rng_next(r) % width
                                   : (loss == FFNN_LOSS_SOFTMAX_CE ? 0 : rng_next(r) % 2));
    }
    fill_uniform(r, targets, n, 0.0f, 1.0f);
    const float *t = with_targets ? targets : NULL;
    ffnn_cpu_backend.loss(NULL, loss, out, y, t, batch, width, dout_ref, loss_ref, ok_ref);
    memset(ok, 0xFF, batch);
    if (ffnn_omp_backend.loss(ctx, loss, out, y, t, batch, width, dout, rl, ok) != FFNN_OK ||
        !same_bits("row_loss", rl, loss_ref, batch * 4) ||
        !same_bits("dout", dout, dout_ref, n * 4) || !same_bits("row_correct", ok, ok_ref, batch))
        goto fail;
    memset(rl, 0xFF, batch * 4); /* evaluation: no gradient */
    if (ffnn_omp_backend.loss(ctx, loss, out, y, t, batch, width, NULL, rl, ok) != FFNN_OK ||
        !same_bits("row_loss (dout NULL)", rl, loss_ref, batch * 4))
        goto fail;
    result = TEST_PASS;
    goto done;
fail:
    fprintf(stderr, "    loss %s batch=%zu width=%zu targets=%d\n", ffnn_loss_name(loss), batch,
            width, with_targets);
done:
    free(out), free(targets), free(dout_ref), free(loss_ref), free(dout), free(rl);
    free(y), free(ok_ref), free(ok);
    return result;
}

static test_result test_losses(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    static const ffnn_loss losses[] = {FFNN_LOSS_SOFTMAX_CE, FFNN_LOSS_SIGMOID_BCE,
                                       FFNN_LOSS_MSE};
    static const size_t widths[] = {1, 2, 10, 37}, batches[] = {1, 64, 203, 5000};
    void *ctx = NULL;
    CHECK_OK(test_ctx(&ffnn_omp_backend, FFNN_STRATEGY_TILED, 2, &ctx));
    rng r = {0x94D049BB133111EBULL};
    test_result result = TEST_PASS;
    for (size_t li = 0; li < 3 && result == TEST_PASS; li++)
        for (size_t wi = 0; wi < 4 && result == TEST_PASS; wi++)
            for (size_t bi = 0; bi < 4 && result == TEST_PASS; bi++) {
                if (losses[li] == FFNN_LOSS_SOFTMAX_CE && widths[wi] < 2)
                    continue;
                for (int tg = 0; tg <= (losses[li] != FFNN_LOSS_SOFTMAX_CE) && result == TEST_PASS;
                     tg++)
                    result = loss_case(ctx, &r, losses[li], batches[bi], widths[wi], tg);
            }
    /* refused like the reference refuses */
    float o[2] = {0, 0}, t[2] = {0, 1}, rl[1];
    if (result == TEST_PASS &&
        ffnn_omp_backend.loss(ctx, FFNN_LOSS_SOFTMAX_CE, o, NULL, t, 1, 2, NULL, rl, NULL) !=
            FFNN_ERR_INVALID_ARGUMENT) {
        fprintf(stderr, "    softmax_ce with float targets was not refused\n");
        result = TEST_FAIL;
    }
    ffnn_omp_backend.destroy(ctx);
    return result;
}

static test_result test_gather(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    static const size_t features_list[] = {1, 3, 784}, batches[] = {1, 37, 4096};
    const size_t count = 50, width = 3;
    void *ctx = NULL;
    CHECK_OK(test_ctx(&ffnn_omp_backend, FFNN_STRATEGY_TILED, 2, &ctx));
    rng r = {0xBF58476D1CE4E5B9ULL};
    test_result result = TEST_PASS;
    for (size_t fi = 0; fi < 3 && result == TEST_PASS; fi++)
        for (size_t bi = 0; bi < 3 && result == TEST_PASS; bi++) {
            const size_t features = features_list[fi], batch = batches[bi];
            uint8_t *images = malloc(count * features);
            int32_t *labels = malloc(count * sizeof *labels);
            float *values = malloc(count * features * 4), *targets = malloc(count * width * 4);
            int32_t *index = malloc(batch * 4);
            float *x_ref = malloc(batch * features * 4), *x = poisoned(batch * features);
            float *t_ref = malloc(batch * width * 4), *t = poisoned(batch * width);
            int32_t *y_ref = malloc(batch * 4), *y = malloc(batch * 4);
            if (!(images && labels && values && targets && index && x_ref && x && t_ref && t &&
                  y_ref && y)) {
                result = TEST_FAIL;
            } else {
                for (size_t i = 0; i < count * features; i++)
                    images[i] = (uint8_t)rng_next(&r);
                for (size_t f = 0; f < features; f++)
                    images[f] = 255; /* the extremes: image 0 all 255, some bytes 0 */
                fill_uniform(&r, values, count * features, -3.0f, 3.0f);
                fill_uniform(&r, targets, count * width, 0.0f, 1.0f);
                for (size_t i = 0; i < count; i++)
                    labels[i] = (int32_t)(rng_next(&r) % 1000);
                for (size_t b = 0; b < batch; b++)
                    index[b] = (int32_t)(rng_next(&r) % count);
                index[0] = (int32_t)(count - 1);
                for (int kind = 0; kind < 2 && result == TEST_PASS; kind++) {
                    /* kind 0: uint8 images + labels; 1: float values + targets */
                    ffnn_gather_source src = {.features = features};
                    if (kind == 0)
                        src.images = images, src.labels = labels;
                    else
                        src.values = values, src.targets = targets, src.target_width = width;
                    ffnn_cpu_backend.gather(NULL, &src, index, batch, x_ref, y_ref, t_ref);
                    memset(x, 0xFF, batch * features * 4);
                    memset(y, 0xFF, batch * 4);
                    memset(t, 0xFF, batch * width * 4);
                    if (ffnn_omp_backend.gather(ctx, &src, index, batch, x, y, t) != FFNN_OK ||
                        !same_bits("x", x, x_ref, batch * features * 4) ||
                        (kind == 0 && !same_bits("y", y, y_ref, batch * 4)) ||
                        (kind == 1 && !same_bits("t", t, t_ref, batch * width * 4))) {
                        fprintf(stderr, "    gather kind %d batch=%zu features=%zu\n", kind,
                                batch, features);
                        result = TEST_FAIL;
                    }
                }
            }
            free(images), free(labels), free(values), free(targets), free(index);
            free(x_ref), free(x), free(t_ref), free(t), free(y_ref), free(y);
        }
    ffnn_omp_backend.destroy(ctx);
    return result;
}

/* Five steps of each optimizer on the same arena, reference and omp side by side;
 * kinds 4..7: weight decay (sgd, momentum, adam) and adamw. */
static test_result test_optimizers(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    static const size_t sizes[] = {1, 255, 16385, 203530};
    void *ctx = NULL;
    CHECK_OK(test_ctx(&ffnn_omp_backend, FFNN_STRATEGY_TILED, 2, &ctx));
    rng r = {0x853C49E6748FEA9BULL};
    test_result result = TEST_PASS;
    for (int kind = 0; kind < 8 && result == TEST_PASS; kind++) {
        static const ffnn_optimizer kinds[8] = {
            FFNN_OPT_SGD, FFNN_OPT_MOMENTUM, FFNN_OPT_MOMENTUM, FFNN_OPT_ADAM,
            FFNN_OPT_SGD, FFNN_OPT_MOMENTUM, FFNN_OPT_ADAM,     FFNN_OPT_ADAMW};
        ffnn_train_config cfg = ffnn_train_config_default();
        cfg.optimizer = kinds[kind];
        cfg.nesterov = kind == 2;
        cfg.weight_decay = kind >= 4 ? 0.01f : 0.0f;
        cfg.learning_rate =
            cfg.optimizer == FFNN_OPT_ADAM || cfg.optimizer == FFNN_OPT_ADAMW ? 1e-3f : 0.05f;
        const size_t states = ffnn_optimizer_state_count(cfg.optimizer);
        for (size_t si = 0; si < 4 && result == TEST_PASS; si++) {
            const size_t n = sizes[si];
            float *p_ref = malloc(n * 4), *p = malloc(n * 4), *g = malloc(n * 4);
            float *s_ref = calloc(states * n + 1, 4), *s = calloc(states * n + 1, 4);
            if (!(p_ref && p && g && s_ref && s)) {
                result = TEST_FAIL;
            } else {
                fill_uniform(&r, p_ref, n, -1.0f, 1.0f);
                memcpy(p, p_ref, n * 4);
                for (uint64_t step = 1; step <= 5 && result == TEST_PASS; step++) {
                    fill_uniform(&r, g, n, -1.0f, 1.0f);
                    const ffnn_optimizer_step st = ffnn_optimizer_step_at(&cfg, step);
                    ffnn_cpu_backend.optimizer_update(NULL, &st, p_ref, g,
                                                      states ? s_ref : NULL, n);
                    ffnn_omp_backend.optimizer_update(ctx, &st, p, g, states ? s : NULL, n);
                    if (!same_bits("params", p, p_ref, n * 4) ||
                        !same_bits("state", s, s_ref, states * n * 4)) {
                        fprintf(stderr, "    %s%s wd %g n=%zu step %llu\n",
                                ffnn_optimizer_name(cfg.optimizer), cfg.nesterov ? " nesterov" : "",
                                (double)cfg.weight_decay, n, (unsigned long long)step);
                        result = TEST_FAIL;
                    }
                }
            }
            free(p_ref), free(p), free(g), free(s_ref), free(s);
        }
    }
    ffnn_omp_backend.destroy(ctx);
    return result;
}

/* Clipping, dropout and EMA: omp against the reference on the same inputs. Clamp,
 * dropout and EMA give the reference's bits; the norm's double sum goes by chunks
 * (1e-6 relative on the clipped values). Dropout: the mask keeps 1 - p of the
 * elements within 6 standard deviations, kept values are x * 1/(1-p), p = 0 keeps
 * all, and another step's key draws another mask. */
static test_result test_clip_dropout_ema(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    enum { N = 300007 };
    void *ctx = NULL;
    CHECK_OK(test_ctx(&ffnn_omp_backend, FFNN_STRATEGY_TILED, 2, &ctx));
    rng r = {0x2545F4914F6CDD1DULL};
    float *g = malloc(N * 4), *g_ref = malloc(N * 4), *e = malloc(N * 4), *e_ref = malloc(N * 4);
    float *d = malloc(N * 4), *d_ref = malloc(N * 4), *d2 = malloc(N * 4);
    CHECK(g && g_ref && e && e_ref && d && d_ref && d2, "out of memory");
    fill_uniform(&r, g_ref, N, -0.01f, 0.01f);
    memcpy(g, g_ref, N * 4);
    float norm = 0, norm_ref = 0;
    CHECK_OK(ffnn_cpu_backend.grad_clip(NULL, g_ref, N, 0.5f, 0.008f, &norm_ref));
    CHECK_OK(ffnn_omp_backend.grad_clip(ctx, g, N, 0.5f, 0.008f, &norm));
    CHECK(fabsf(norm - norm_ref) <= 1e-6f * norm_ref, "norm %.9g vs %.9g", (double)norm,
          (double)norm_ref);
    double sq = 0;
    for (size_t i = 0; i < N; i++) {
        CHECK(fabsf(g[i] - g_ref[i]) <= 1e-6f * fabsf(g_ref[i]), "clipped [%zu]", i);
        sq += (double)g_ref[i] * g_ref[i];
    }
    CHECK(norm_ref > 0.5f && fabs(sqrt(sq) - 0.5) < 1e-5, "after clipping the norm is %.9g",
          sqrt(sq)); /* the norm was above 0.5: clipped to it */
    fill_uniform(&r, e_ref, N, -1.0f, 1.0f);
    memcpy(e, e_ref, N * 4);
    CHECK_OK(ffnn_cpu_backend.ema_update(NULL, e_ref, g_ref, N, 0.99f, 0.01f));
    CHECK_OK(ffnn_omp_backend.ema_update(ctx, e, g_ref, N, 0.99f, 0.01f));
    CHECK(same_bits("ema", e, e_ref, N * 4), "ema");
    fill_uniform(&r, e_ref, N, 0.5f, 1.0f); /* no zeros: a zero output is a drop */
    const double ps[] = {0.0, 0.1, 0.5, 0.9};
    for (int k = 0; k < 4; k++) {
        const uint64_t key = ffnn_dropout_key(7, 3, 1);
        const uint32_t th = ffnn_dropout_threshold(ps[k]);
        const float scale = ffnn_dropout_scale(ps[k]);
        CHECK_OK(ffnn_cpu_backend.dropout(NULL, e_ref, d_ref, N, key, th, scale));
        CHECK_OK(ffnn_omp_backend.dropout(ctx, e_ref, d, N, key, th, scale));
        CHECK(same_bits("dropout", d, d_ref, N * 4), "p %g", ps[k]);
        size_t dropped = 0;
        for (size_t i = 0; i < N; i++) {
            dropped += d_ref[i] == 0.0f;
            CHECK(d_ref[i] == 0.0f || d_ref[i] == e_ref[i] * scale, "kept [%zu] not scaled", i);
        }
        const double sd = sqrt(N * ps[k] * (1 - ps[k]));
        CHECK(fabs((double)dropped - N * ps[k]) <= 6 * sd + 1, "p %g: %zu of %d dropped", ps[k],
              dropped, N);
        CHECK_OK(ffnn_cpu_backend.dropout(NULL, e_ref, d2, N, ffnn_dropout_key(7, 4, 1), th,
                                          scale));
        size_t same = 0;
        for (size_t i = 0; i < N; i++)
            same += (d2[i] == 0.0f) == (d_ref[i] == 0.0f);
        if (ps[k] > 0) /* independent masks agree on p^2 + (1-p)^2 of the elements */
            CHECK(fabs((double)same / N - (ps[k] * ps[k] + (1 - ps[k]) * (1 - ps[k]))) < 0.01,
                  "p %g: step 4's mask agrees with step 3's on %zu of %d", ps[k], same, N);
    }
    free(g), free(g_ref), free(e), free(e_ref), free(d), free(d_ref), free(d2);
    ffnn_omp_backend.destroy(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------ training */

static const char *fashion_dir = "/usr/share/datasets/fashion-mnist";

/* The first 12,800 Fashion-MNIST training images (200 batches of 64). */
static ffnn_status load_train_12800(ffnn_dataset **out)
{
    ffnn_dataset *full = NULL;
    ffnn_status st = ffnn_dataset_load_idx_dir(fashion_dir, &full, NULL);
    if (st == FFNN_OK)
        st = ffnn_dataset_slice(full, 0, 12800, out);
    ffnn_dataset_free(full);
    return st;
}

/* run_steps' threads for the reference backend (strategy reference). */
#define REFERENCE_RUN (-1)

/* `steps` steps of 784-256relu-10 (seed 1, batch 64, lr 0.01, shuffled) on data
 * with the omp backend on `threads` threads (REFERENCE_RUN: the reference):
 * per-step losses and the final parameters. */
static ffnn_status run_steps(const ffnn_dataset *data, int threads, size_t steps, double *loss,
                             float **params, size_t *count)
{
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    ffnn_status st = ffnn_model_create("784-256relu-10", &m);
    if (st == FFNN_OK)
        st = ffnn_model_init(m, 1);
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    if (threads == REFERENCE_RUN)
        cfg.strategy = FFNN_STRATEGY_REFERENCE;
    else
        cfg.threads = threads;
    if (st == FFNN_OK)
        st = ffnn_trainer_create(m, data, &cfg, &t);
#ifdef _OPENMP
    if (st == FFNN_OK && threads > 0 && ffnn_trainer_threads(t) != threads)
        st = FFNN_ERR_INVALID_ARGUMENT;
#endif
    for (size_t s = 0; s < steps && st == FFNN_OK; s++)
        st = ffnn_trainer_step(t, &loss[s]);
    if (st == FFNN_OK)
        st = ffnn_trainer_sync_model(t);
    if (st == FFNN_OK) {
        *count = ffnn_model_parameter_count(m);
        *params = malloc(*count * sizeof(float));
        if (!*params)
            st = FFNN_ERR_NO_MEMORY;
        else
            memcpy(*params, ffnn_model_parameters(m), *count * sizeof(float));
    }
    ffnn_trainer_free(t);
    ffnn_model_free(m);
    return st;
}

/* 200 steps (the first 12,800 images): the omp backend on 2 threads follows the
 * reference, every step's loss within 1e-4 relative. */
static test_result test_train_parity(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    enum { STEPS = 200 };
    ffnn_dataset *data = NULL;
    CHECK(load_train_12800(&data) == FFNN_OK,
          "Fashion-MNIST missing (%s); install it: apt-get install dataset-fashion-mnist",
          ffnn_last_error());
    double ref[STEPS], omp[STEPS];
    float *p_ref = NULL, *p_omp = NULL;
    size_t n_ref = 0, n_omp = 0;
    ffnn_status st1 = run_steps(data, REFERENCE_RUN, STEPS, ref, &p_ref, &n_ref);
    ffnn_status st2 = st1 == FFNN_OK ? run_steps(data, 2, STEPS, omp, &p_omp, &n_omp) : st1;
    ffnn_dataset_free(data);
    test_result result = TEST_FAIL;
    if (st1 != FFNN_OK || st2 != FFNN_OK) {
        fprintf(stderr, "    training failed: %s\n", ffnn_last_error());
    } else {
        double worst = 0.0, worst_param = 0.0;
        size_t worst_step = 0;
        for (size_t s = 0; s < STEPS; s++) {
            const double rel = fabs(omp[s] - ref[s]) / fabs(ref[s]);
            if (rel > worst)
                worst = rel, worst_step = s;
        }
        for (size_t i = 0; i < n_ref; i++)
            if (fabs((double)p_omp[i] - (double)p_ref[i]) > worst_param)
                worst_param = fabs((double)p_omp[i] - (double)p_ref[i]);
        printf("     200 steps: loss %.5f -> %.5f (reference %.5f -> %.5f); largest relative "
               "loss difference %.2e (step %zu); largest parameter difference %.2e\n",
               omp[0], omp[STEPS - 1], ref[0], ref[STEPS - 1], worst, worst_step + 1,
               worst_param);
        result = worst <= 1e-4 ? TEST_PASS : TEST_FAIL;
        if (result != TEST_PASS)
            fprintf(stderr, "    step %zu: omp loss %.9g, reference %.9g\n", worst_step + 1,
                    omp[worst_step], ref[worst_step]);
    }
    free(p_ref), free(p_omp);
    return result;
}

/* Two runs on 2 threads give the same bits (per-step losses and final
 * parameters); so do runs on 3 threads and on all cores (threads 0). */
static test_result test_train_deterministic(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    enum { STEPS = 40 };
    ffnn_dataset *data = NULL;
    CHECK(load_train_12800(&data) == FFNN_OK,
          "Fashion-MNIST missing (%s); install it: apt-get install dataset-fashion-mnist",
          ffnn_last_error());
    static const int threads[] = {2, 2, 3, 0};
    double loss[4][STEPS];
    float *params[4] = {NULL, NULL, NULL, NULL};
    size_t count[4] = {0, 0, 0, 0};
    test_result result = TEST_PASS;
    for (int r = 0; r < 4 && result == TEST_PASS; r++) {
        if (run_steps(data, threads[r], STEPS, loss[r], &params[r], &count[r]) != FFNN_OK) {
            fprintf(stderr, "    run %d: %s\n", r, ffnn_last_error());
            result = TEST_FAIL;
        } else if (r > 0 && (!same_bits("step losses", loss[r], loss[0], sizeof loss[0]) ||
                             !same_bits("parameters", params[r], params[0], count[0] * 4))) {
            fprintf(stderr, "    run %d (%d threads) differs from run 0 (2 threads)\n", r,
                    threads[r]);
            result = TEST_FAIL;
        }
    }
    for (int r = 0; r < 4; r++)
        free(params[r]);
    ffnn_dataset_free(data);
    return result;
}

/* cfg.threads: the omp backend on N threads (1 included), 0 (the library's default)
 * all cores; out of range is refused. The reference is strategy reference, on one
 * thread, on the cpu only. */
static test_result test_threads_config(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    ffnn_dataset *full = NULL, *data = NULL;
    CHECK(ffnn_dataset_load_idx_dir(fashion_dir, &full, NULL) == FFNN_OK,
          "Fashion-MNIST missing (%s)", ffnn_last_error());
    CHECK_OK(ffnn_dataset_slice(full, 0, 256, &data));
    ffnn_dataset_free(full);
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("784-16relu-10", &m));
    CHECK_OK(ffnn_model_init(m, 1));
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    CHECK(cfg.threads == 0, "library default threads %d, expected 0", cfg.threads);
    static const int asked[] = {1, 2, 5, 0};
    for (int i = 0; i < 4; i++) {
        cfg.threads = asked[i];
        ffnn_trainer *t = NULL;
        CHECK_OK(ffnn_trainer_create(m, data, &cfg, &t));
        const int got = ffnn_trainer_threads(t);
        const ffnn_strategy s = ffnn_trainer_strategy(t);
        double loss;
        ffnn_status st = ffnn_trainer_step(t, &loss);
        ffnn_trainer_free(t);
        CHECK_OK(st);
        CHECK(s != FFNN_STRATEGY_REFERENCE, "threads %d ran the reference", asked[i]);
#ifdef _OPENMP
        if (asked[i] > 0)
            CHECK(got == asked[i], "threads %d: trainer reports %d", asked[i], got);
#else
        if (asked[i] > 0) /* a build without OpenMP: the omp backend runs one thread */
            CHECK(got == 1, "threads %d without OpenMP: trainer reports %d", asked[i], got);
#endif
        else
            CHECK(got >= 1, "threads 0: trainer reports %d", got);
    }
    cfg.threads = -1;
    ffnn_trainer *t = NULL;
    CHECK(ffnn_trainer_create(m, data, &cfg, &t) == FFNN_ERR_INVALID_ARGUMENT,
          "threads -1 accepted");
    CHECK(strstr(ffnn_last_error(), "threads") != NULL, "message: %s", ffnn_last_error());
    cfg.threads = 100000;
    CHECK(ffnn_trainer_create(m, data, &cfg, &t) == FFNN_ERR_INVALID_ARGUMENT,
          "threads 100000 accepted");
    /* the reference by name: on the cpu (device auto included), one thread */
    static const ffnn_device devices[] = {FFNN_DEVICE_CPU, FFNN_DEVICE_AUTO};
    for (int d = 0; d < 2; d++)
        for (int threads = 0; threads <= 1; threads++) {
            cfg = ffnn_train_config_default();
            cfg.device = devices[d];
            cfg.threads = threads;
            CHECK_OK(ffnn_strategy_from_name("reference", &cfg.strategy));
            CHECK_OK(ffnn_trainer_create(m, data, &cfg, &t));
            const ffnn_device dev = ffnn_trainer_device(t);
            const ffnn_strategy s = ffnn_trainer_strategy(t);
            const int got = ffnn_trainer_threads(t);
            ffnn_trainer_free(t);
            CHECK(dev == FFNN_DEVICE_CPU && s == FFNN_STRATEGY_REFERENCE && got == 1,
                  "reference (device %s, threads %d) ran on %s as %s with %d threads",
                  ffnn_device_name(devices[d]), threads, ffnn_device_name(dev),
                  ffnn_strategy_name(s), got);
        }
    cfg.threads = 2;
    t = NULL;
    CHECK(ffnn_trainer_create(m, data, &cfg, &t) == FFNN_ERR_INVALID_ARGUMENT && !t,
          "reference on 2 threads accepted");
    CHECK(strstr(ffnn_last_error(), "one thread") != NULL, "message: %s", ffnn_last_error());
    cfg.threads = 0;
    cfg.device = FFNN_DEVICE_CUDA; /* refused: no CUDA, no GPU, or the reference's rule */
    t = NULL;
    CHECK(ffnn_trainer_create(m, data, &cfg, &t) == FFNN_ERR_UNSUPPORTED && !t,
          "reference on cuda accepted");
    if (ffnn_cuda_device_count() > 0)
        CHECK(strstr(ffnn_last_error(), "reference") != NULL, "message: %s", ffnn_last_error());
    ffnn_model_free(m);
    ffnn_dataset_free(data);
    return TEST_PASS;
}

/* FFNN_OMP_ISA forces the kernel set: each set this CPU runs is taken, one it cannot
 * run is refused (FFNN_ERR_UNSUPPORTED, never run), an unknown name is refused by
 * name; the trainer passes the refusal on. */
static test_result test_isa_forced(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    static const char *sets[] = {"avx512", "avx2", "baseline"};
    const char *prev = getenv("FFNN_OMP_ISA");
    char saved[64];
    snprintf(saved, sizeof saved, "%s", prev ? prev : "");
    test_result r = TEST_PASS;
    for (size_t i = 0; i < 3 && r == TEST_PASS; i++) {
        setenv("FFNN_OMP_ISA", sets[i], 1);
        void *ctx = NULL;
        ffnn_status st = ffnn_omp_create_with(2, NULL, &ctx);
        if (ffnn_omp_gemm_named(sets[i])) {
            if (st != FFNN_OK || strcmp(ffnn_omp_isa(ctx)->name, sets[i]) != 0) {
                fprintf(stderr, "    FFNN_OMP_ISA=%s: status %d, set %s\n", sets[i], (int)st,
                        st == FFNN_OK ? ffnn_omp_isa(ctx)->name : ffnn_last_error());
                r = TEST_FAIL;
            }
            printf("      FFNN_OMP_ISA=%s: taken\n", sets[i]);
        } else if (st != FFNN_ERR_UNSUPPORTED || !strstr(ffnn_last_error(), "cannot run")) {
            fprintf(stderr, "    FFNN_OMP_ISA=%s on a CPU without it: status %d (%s)\n",
                    sets[i], (int)st, ffnn_last_error());
            r = TEST_FAIL;
        } else {
            printf("      FFNN_OMP_ISA=%s: refused here (%s)\n", sets[i], ffnn_last_error());
        }
        if (st == FFNN_OK)
            ffnn_omp_backend.destroy(ctx);
    }
    if (r == TEST_PASS) {
        setenv("FFNN_OMP_ISA", "sse9", 1);
        void *ctx = NULL;
        ffnn_status st = ffnn_omp_create_with(1, NULL, &ctx);
        if (st != FFNN_ERR_INVALID_ARGUMENT || !strstr(ffnn_last_error(), "sse9") ||
            !strstr(ffnn_last_error(), "baseline")) {
            fprintf(stderr, "    FFNN_OMP_ISA=sse9: status %d (%s)\n", (int)st,
                    ffnn_last_error());
            r = TEST_FAIL;
            if (st == FFNN_OK)
                ffnn_omp_backend.destroy(ctx);
        }
    }
    if (r == TEST_PASS) { /* through the public API */
        ffnn_model *m = NULL;
        ffnn_dataset *tr = NULL, *te = NULL;
        CHECK_OK(ffnn_model_create("2-4relu-2", &m));
        CHECK_OK(ffnn_dataset_synthetic("synth:points:64", 1, &tr, &te));
        ffnn_train_config cfg = ffnn_train_config_default();
        cfg.device = FFNN_DEVICE_CPU;
        cfg.threads = 2;
        ffnn_trainer *t = NULL;
        ffnn_status st = ffnn_trainer_create(m, tr, &cfg, &t);
        if (st != FFNN_ERR_INVALID_ARGUMENT || !strstr(ffnn_last_error(), "FFNN_OMP_ISA")) {
            fprintf(stderr, "    trainer with FFNN_OMP_ISA=sse9: status %d (%s)\n", (int)st,
                    ffnn_last_error());
            r = TEST_FAIL;
        }
        ffnn_trainer_free(t);
        ffnn_model_free(m);
        ffnn_dataset_free(tr);
        ffnn_dataset_free(te);
    }
    if (prev)
        setenv("FFNN_OMP_ISA", saved, 1);
    else
        unsetenv("FFNN_OMP_ISA");
    return r;
}

const test_case omp_tests[] = {
    {"omp_clip_dropout_ema_vs_reference", test_clip_dropout_ema},
    {"omp_dense_vs_reference", test_dense},
    {"omp_dense_same_bits_any_thread_count", test_dense_thread_invariant},
    {"omp_activations_same_bits", test_activations},
    {"omp_losses_same_bits", test_losses},
    {"omp_gather_same_bits", test_gather},
    {"omp_optimizers_same_bits", test_optimizers},
    {"omp_train_200_steps_parity_fashion", test_train_parity},
    {"omp_train_deterministic", test_train_deterministic},
    {"omp_threads_config", test_threads_config},
    {"omp_isa_forced_by_environment", test_isa_forced},
};
const size_t omp_tests_count = sizeof omp_tests / sizeof omp_tests[0];
