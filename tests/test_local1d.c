/*
 * test_local1d.c - suite "local1d": the 1-D locally connected layer (seed 002).
 *
 *   - architecture strings with local tokens: sizes, canonical printing that
 *     round-trips, errors naming the token; init bounds U(+-1/sqrt(R));
 *   - gradient check of the CPU reference against central differences, both
 *     paddings, R in {1, 3, 5}, with and without bias, relu / sigmoid / tanh,
 *     local1d first, after a dense layer and last (method and tolerance as
 *     tests/test_gradcheck.c);
 *   - (the ops of every backend against the reference, forward and backward, on
 *     the shared shapes of test_numeric.h: test_ops.c)
 *   - cuda against cpu (skipped without a GPU): both variants (global = --strategy
 *     naive, shared = tiled) give the same bits, and the reference's values, on
 *     the shared shapes (N = R, N not a multiple of the 256-thread block, batch > 1,
 *     R large enough for the shared kernels to shrink their tiles or fall back,
 *     batch > 65535 rows, a long row); the shared entry
 *     point ffnn_lab_local1d_forward_stream with fused sigmoid against
 *     ffnn_cpu_local1d_forward; a training run on cuda follows the cpu one;
 *   - a network mixing local1d and dense layers trains on synth:motif (1-D
 *     signals classified by the shape of a 3-sample motif at a random place, see
 *     src/data/synth.c) to >= 88% test accuracy and >= 8 points above a dense
 *     network with about the same number of parameters (measured: 92.6% against
 *     77.8%); the model's CPU inference (ffnn_model_evaluate) gives the trainer's
 *     accuracy;
 *   - model files and checkpoints with local1d layers: round trip, shape check,
 *     resume gives the uninterrupted run's bits.
 *
 * Tolerances, cuda against cpu: |got - want| <= 1e-5 (1 + sqrt(K)) + 1e-4 |want|,
 * K the summed length (R for z and dx, batch for dW and db) - the dense tests'
 * matmul bound: the GPU sums with fmaf in the reference's order, the reference
 * rounds each product first. Activations fused on the GPU add expf/tanhf's 2 ulp.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#if FFNN_HAVE_CUDA
#include "../lab/harness.h" /* device memory and streams of the lab (CUDA builds) */
#include "../lab/local1d_stream.h"
#endif
#include "check.h"
#include "test_fixtures.h"
#include "test_backend_ctx.h"
#include "test_numeric.h"
#include "backend/cpu/cpu_ops.h"
#include "ffnn.h"
#include "core/local1d.h"
#include "backend/omp/omp_kernels.h"
#include "train/train_internal.h"

/* ------------------------------------------------------------------ helpers */

static double sum_atol(size_t K) { return 1e-5 * (1.0 + sqrt((double)K)); }
#define SUM_RTOL 1e-4

static const char *padding_name(ffnn_local1d_padding p)
{
    return p == FFNN_LOCAL1D_SAME ? "same" : "valid";
}

/* ------------------------------------------------------------------ architecture */

TEST("local1d_arch_strings", test_arch)
{
    CHECK(ffnn_local1d_output_size(10, 3, FFNN_LOCAL1D_VALID) == 8, "valid 10, 3");
    CHECK(ffnn_local1d_output_size(3, 3, FFNN_LOCAL1D_VALID) == 1, "valid N = R");
    CHECK(ffnn_local1d_output_size(2, 3, FFNN_LOCAL1D_VALID) == 0, "valid R > N");
    CHECK(ffnn_local1d_output_size(10, 5, FFNN_LOCAL1D_SAME) == 10, "same 10, 5");
    CHECK(ffnn_local1d_output_size(2, 5, FFNN_LOCAL1D_SAME) == 2, "same R > N");
    CHECK(ffnn_local1d_output_size(10, 4, FFNN_LOCAL1D_SAME) == 0, "same, even R");
    CHECK(ffnn_local1d_output_size(10, 0, FFNN_LOCAL1D_VALID) == 0, "R = 0");
    CHECK(ffnn_local1d_output_size(0, 1, FFNN_LOCAL1D_SAME) == 0, "N = 0");
    CHECK(ffnn_local1d_output_size((size_t)1 << 40, 3, FFNN_LOCAL1D_VALID) ==
              ((size_t)1 << 40) - 2, "64-bit sizes");

    /* sizes, kinds, parameter count */
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("64-local3sigmoid-local5samesigmoid:nobias-10", &m));
    CHECK(ffnn_model_layer_count(m) == 3, "layers %d", ffnn_model_layer_count(m));
    size_t in, out, fan_in;
    ffnn_activation act;
    ffnn_layer_kind kind;
    int bias, same;
    CHECK_OK(ffnn_model_layer(m, 0, &in, &out, &act, &bias));
    CHECK_OK(ffnn_model_layer_kind(m, 0, &kind, &fan_in, &same));
    CHECK(in == 64 && out == 62 && act == FFNN_ACT_SIGMOID && bias && kind == FFNN_LAYER_LOCAL1D &&
          fan_in == 3 && !same, "layer 0: %zu -> %zu, R %zu, same %d", in, out, fan_in, same);
    CHECK_OK(ffnn_model_layer(m, 1, &in, &out, &act, &bias));
    CHECK_OK(ffnn_model_layer_kind(m, 1, &kind, &fan_in, &same));
    CHECK(in == 62 && out == 62 && !bias && kind == FFNN_LAYER_LOCAL1D && fan_in == 5 && same,
          "layer 1: %zu -> %zu, R %zu, same %d", in, out, fan_in, same);
    CHECK_OK(ffnn_model_layer_kind(m, 2, &kind, &fan_in, &same));
    CHECK(kind == FFNN_LAYER_DENSE && fan_in == 62 && !same, "layer 2");
    CHECK(ffnn_model_parameter_count(m) == 62 * 3 + 62 + 62 * 5 + 62 * 10 + 10, "count %zu",
          ffnn_model_parameter_count(m));
    CHECK(ffnn_model_weight(m, 1) == ffnn_model_parameters(m) + 62 * 4, "W of layer 1");
    CHECK(ffnn_model_bias(m, 1) == NULL, "layer 1 has no bias");
    CHECK(ffnn_model_output_size(m) == 10, "outputs");
    ffnn_model_free(m);

    /* canonical printing round-trips */
    const char *forms[] = {"64-local3sigmoid-local3samesigmoid-10", "9-local1-local9same:nobias-2",
                           "8-local3identity-2relu-local1tanh", "7-local7-1",
                           "5-local3samerelu:nobias-local3relu-3"};
    const char *canon[] = {"64-local3sigmoid-local3samesigmoid-10", "9-local1-local9same:nobias-2",
                           "8-local3-2relu-local1tanh", "7-local7-1",
                           "5-local3samerelu:nobias-local3relu-3"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char buf[256], again[256];
        ffnn_model *a = NULL, *b = NULL;
        CHECK_OK(ffnn_model_create(forms[i], &a));
        ffnn_model_arch_string(a, buf, sizeof buf);
        CHECK(strcmp(buf, canon[i]) == 0, "'%s' printed as '%s'", forms[i], buf);
        CHECK_OK(ffnn_model_create(buf, &b));
        ffnn_model_arch_string(b, again, sizeof again);
        CHECK(strcmp(buf, again) == 0 &&
                  ffnn_model_parameter_count(a) == ffnn_model_parameter_count(b),
              "'%s' does not round-trip", buf);
        TEST_FREE(a, b);
    }

    /* errors name the column and the token */
    test_arch_refusal bad[] = {
        {"64-local0-10", "column 4, token 'local0': receptive field R must be at least 1"},
        {"64-local4same-10", "token 'local4same': 'same' padding needs an odd receptive field"},
        {"64-local-10", "token 'local': expected a receptive field R"},
        {"64-localsame-10", "token 'localsame': expected a receptive field R"},
        {"4-local5-10", "column 3, token 'local5': receptive field R = 5 is wider than the "
                        "layer's 4 inputs"},
        {"64-10-local11relu", "column 7, token 'local11relu': receptive field R = 11 is wider"},
        {"64-local3valid-10", "token 'local3valid': unknown activation"},
        {"64-local3samerelu:bias-10", "unknown option"},
        {"64-local99999999-10", "receptive field R larger than the limit"},
        {"64-loc3-10", "token 'loc3': expected a width"},
    };
    CHECK_PASS(test_arch_refused_each(bad, sizeof bad / sizeof bad[0]));
    /* the same output width as 'valid' but not the same layer: R matters */
    ffnn_model *d = NULL, *l = NULL;
    CHECK_OK(ffnn_model_create("64-62-2", &d));
    CHECK_OK(ffnn_model_create("64-local3-2", &l));
    CHECK(ffnn_model_parameter_count(d) != ffnn_model_parameter_count(l), "dense == local?");
    TEST_FREE(d, l);
    return TEST_PASS;
}

/* Initial weights and biases of a local1d layer: U(-1/sqrt(R), 1/sqrt(R)). */
TEST("local1d_init_bounds", test_init)
{
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("4000-local9same-local4", &m));
    CHECK_OK(ffnn_model_init(m, 5));
    for (int l = 0; l < 2; l++) {
        const size_t R = l == 0 ? 9 : 4, M = l == 0 ? 4000 : 3997;
        const float bound = 1.0f / sqrtf((float)R);
        const float *v[2] = {ffnn_model_weight(m, l), ffnn_model_bias(m, l)};
        const size_t n[2] = {M * R, M};
        for (int k = 0; k < 2; k++) {
            float lo = 1, hi = -1;
            for (size_t i = 0; i < n[k]; i++) {
                CHECK(v[k][i] >= -bound && v[k][i] < bound, "layer %d %s %zu = %g", l,
                      k ? "bias" : "weight", i, (double)v[k][i]);
                lo = v[k][i] < lo ? v[k][i] : lo;
                hi = v[k][i] > hi ? v[k][i] : hi;
            }
            CHECK(lo < -0.9f * bound && hi > 0.9f * bound, "layer %d range [%g, %g]", l,
                  (double)lo, (double)hi);
        }
    }
    ffnn_model_free(m);
    return TEST_PASS;
}

/* ------------------------------------------------------------------ gradient check */

enum { GC_SAMPLES = 6, GC_FEATURES = 11 };

/* Random float features in [-1, 1] with labels < classes (every class present). */
static ffnn_dataset *gc_dataset(rng *r, int classes)
{
    float x[GC_SAMPLES * GC_FEATURES];
    int32_t y[GC_SAMPLES];
    ffnn_dataset *ds = NULL;
    fill_uniform(r, x, GC_SAMPLES * GC_FEATURES, -1.0f, 1.0f);
    for (int i = 0; i < GC_SAMPLES; i++)
        y[i] = (int32_t)(i % classes);
    if (ffnn_dataset_from_arrays(GC_SAMPLES, GC_FEATURES, x, y, 0, NULL, &ds) != FFNN_OK)
        return NULL;
    return ds;
}

/* The loss at parameter i = value (uploaded), the others as they are. */
/* The reference's gradient of arch against central differences - the method and
 * tolerance of tests/test_gradcheck.c: h = 1e-2, |fd - g| <= 1e-4 + 1e-3 |g|.
 * A ReLU kink within h of a parameter (a pre-activation crossing 0) spoils fd;
 * such a parameter is let off when, with h' = h/10, the central difference, or
 * the one-sided second-order difference of a side without the kink,
 * (-3 L(0) + 4 L(+-h') - L(+-2h')) / (+-2h') (truncation error twice the
 * central one's: twice the tolerance), agrees with g - so a wrong gradient cannot
 * pass as a kink; the loss's rounding noise (~1e-9 for these nets) is far below
 * the tolerance times h'. At most 20% of the parameters may be let off (a net
 * of R = 1 ReLU units without biases has many pre-activations near 0). */
static test_result check_gradients(const char *arch, ffnn_loss loss, int classes, rng *r)
{
    ffnn_dataset *ds = gc_dataset(r, classes);
    CHECK(ds != NULL, "dataset: %s", ffnn_last_error());
    test_gc g;
    CHECK_OK(test_gc_create(ds, arch, 11, 2.5f, loss, &g));
    const float *p = g.p, *grad = g.grad;
    const size_t n = g.n;
    double L0, Lp, Lm;
    CHECK_OK(ffnn_trainer_gradient(g.t, g.rows, GC_SAMPLES, &L0, g.grad));
    const float h = 1e-2f;
    size_t kinks = 0, nonzero = 0;
    for (size_t i = 0; i < n; i++) {
        const float v = p[i];
        const double tol = 1e-4 + 1e-3 * fabs(grad[i]);
        CHECK_OK(test_gc_loss_at(&g, i, v + h, &Lp));
        CHECK_OK(test_gc_loss_at(&g, i, v - h, &Lm));
        const double fd = (Lp - Lm) / (2.0 * h);
        nonzero += fabs(grad[i]) > 1e-6;
        if (fabs(fd - grad[i]) <= tol)
            continue;
        /* a kink within h: the same with a step ten times smaller */
        const float h2 = h / 10;
        double Lp1, Lm1, Lp2, Lm2;
        CHECK_OK(test_gc_loss_at(&g, i, v + h2, &Lp1));
        CHECK_OK(test_gc_loss_at(&g, i, v - h2, &Lm1));
        CHECK_OK(test_gc_loss_at(&g, i, v + 2 * h2, &Lp2));
        CHECK_OK(test_gc_loss_at(&g, i, v - 2 * h2, &Lm2));
        const double fd2 = (Lp1 - Lm1) / (2.0 * h2);
        const double plus = (-3.0 * L0 + 4.0 * Lp1 - Lp2) / (2.0 * h2);
        const double minus = (3.0 * L0 - 4.0 * Lm1 + Lm2) / (2.0 * h2);
        CHECK(fabs(fd2 - grad[i]) <= tol || fabs(plus - grad[i]) <= 2 * tol ||
                  fabs(minus - grad[i]) <= 2 * tol,
              "%s, loss %s: parameter %zu of %zu: analytic %.6g, central difference %.6g "
              "(h %g), %.6g (h %g), one-sided %.6g (+) %.6g (-)", arch, ffnn_loss_name(loss),
              i, n, (double)grad[i], fd, (double)h, fd2, (double)h2, plus, minus);
        kinks++;
    }
    CHECK_OK(ffnn_trainer_upload_model(g.t));
    CHECK(kinks * 5 <= n, "%s: %zu of %zu parameters at kinks", arch, kinks, n);
    CHECK(nonzero * 4 >= n, "%s: only %zu of %zu gradients are non-zero", arch, nonzero, n);
    test_gc_free(&g);
    ffnn_dataset_free(ds);
    return TEST_PASS;
}

TEST("local1d_gradcheck_cpu", test_gradcheck)
{
    static const char *acts[] = {"relu", "sigmoid", "tanh"};
    static const char *pads[] = {"", "same"};
    static const char *bias[] = {"", ":nobias"};
    static const int Rs[] = {1, 3, 5};
    rng r = {0xC0FFEE1234567ULL};
    for (int ri = 0; ri < 3; ri++)
        for (int pi = 0; pi < 2; pi++)
            for (int ai = 0; ai < 3; ai++)
                for (int bi = 0; bi < 2; bi++) {
                    /* local1d first (dW, db), after a dense layer (dW, db and dx into
                     * it), then a dense output (ce) */
                    char arch[160];
                    snprintf(arch, sizeof arch, "%d-local%d%s%s%s-9%s%s-local%d%s%s%s-3%s",
                             GC_FEATURES, Rs[ri], pads[pi], acts[ai], bias[bi],
                             acts[(ai + 1) % 3], bias[bi], Rs[ri], pads[pi],
                             acts[(ai + 2) % 3], bias[bi], bias[bi]);
                    test_result t = check_gradients(arch, FFNN_LOSS_SOFTMAX_CE, 3, &r);
                    if (t != TEST_PASS)
                        return t;
                }
    /* local1d as the output layer (mse through its activation; bce on its logits) */
    test_result t = check_gradients("11-local3sametanh-local3sigmoid", FFNN_LOSS_MSE, 3, &r);
    if (t == TEST_PASS)
        t = check_gradients("11-7relu-local5same:nobias", FFNN_LOSS_SIGMOID_BCE, 3, &r);
    if (t == TEST_PASS)
        t = check_gradients("11-local5-local5", FFNN_LOSS_SOFTMAX_CE, 3, &r);
    return t;
}

/* ------------------------------------------------------------------ shapes */

/* Buffers of one shape, random x, W, b, dz in [-1, 1]; host memory. */
typedef struct l1d_case {
    l1d_shape s;
    size_t M;
    float *x, *W, *b, *dz; /* [batch, N], [M, R], [M], [batch, M] */
} l1d_case;

static void case_free(l1d_case *c)
{
    free(c->x);
    free(c->W);
    free(c->b);
    free(c->dz);
    memset(c, 0, sizeof *c);
}

static int case_make(l1d_case *c, rng *r, l1d_shape s)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->M = ffnn_local1d_output_size(s.N, s.R, s.padding);
    c->x = malloc(s.batch * s.N * sizeof(float));
    c->W = malloc(c->M * s.R * sizeof(float));
    c->b = malloc(c->M * sizeof(float));
    c->dz = malloc(s.batch * c->M * sizeof(float));
    if (c->M == 0 || !c->x || !c->W || !c->b || !c->dz) {
        case_free(c);
        return 0;
    }
    fill_uniform(r, c->x, s.batch * s.N, -1.0f, 1.0f);
    fill_uniform(r, c->W, c->M * s.R, -1.0f, 1.0f);
    fill_uniform(r, c->b, c->M, -1.0f, 1.0f);
    fill_uniform(r, c->dz, s.batch * c->M, -1.0f, 1.0f);
    return 1;
}

/* ------------------------------------------------------------------ cuda */

static const char *no_gpu_reason(void)
{
    if (!ffnn_has_cuda())
        return "build has no CUDA";
    if (ffnn_cuda_device_count() == 0)
        return "no CUDA GPU";
    return NULL;
}

/* Device buffers of one cuda case (released by gpu_case_free). */
enum { GPU_BUFFERS = 12 };
typedef struct gpu_bufs {
    const ffnn_backend_ops *ops;
    void *ctx;
    void *p[GPU_BUFFERS];
    int n;
} gpu_bufs;

static void *gpu_put(gpu_bufs *g, const float *src, size_t n)
{
    void *d = NULL;
    if (g->n == GPU_BUFFERS || g->ops->alloc(g->ctx, n * sizeof(float), &d) != FFNN_OK)
        return NULL;
    g->p[g->n++] = d;
    float *poison = src ? NULL : poisoned(n);
    ffnn_status st = g->ops->upload(g->ctx, d, src ? src : poison, n * sizeof(float));
    if (st == FFNN_OK)
        st = g->ops->synchronize(g->ctx);
    free(poison);
    return st == FFNN_OK ? d : NULL;
}

static void gpu_free(gpu_bufs *g)
{
    for (int i = 0; i < g->n; i++)
        g->ops->release(g->ctx, g->p[i]);
    g->n = 0;
}

static float *gpu_get(gpu_bufs *g, const void *d, size_t n)
{
    float *h = malloc((n ? n : 1) * sizeof *h);
    if (h && g->ops->download(g->ctx, h, d, n * sizeof *h) != FFNN_OK) {
        free(h);
        return NULL;
    }
    return h;
}

/* Forward and backward of one shape on the two cuda contexts (naive = global,
 * tiled = shared) against the reference; the two variants give the same bits. */
static test_result cuda_case(void *ctx[2], const l1d_case *c, ffnn_activation act)
{
    const l1d_shape s = c->s;
    const size_t nz = s.batch * c->M, nx = s.batch * s.N, nw = c->M * s.R;
    const ffnn_backend_ops *ops = ffnn_cuda_backend();
    float *z0 = malloc(nz * sizeof *z0), *dx0 = malloc(nx * sizeof *dx0);
    float *dW0 = malloc(nw * sizeof *dW0), *db0 = malloc(c->M * sizeof *db0);
    float *got[2][4] = {{NULL}}; /* per variant: z, dx, dW, db */
    CHECK(z0 && dx0 && dW0 && db0, "malloc");
    ffnn_cpu_local1d_forward(c->x, c->W, c->b, z0, s.batch, s.N, s.R, s.padding, act);
    ffnn_cpu_local1d_backward(c->x, c->W, c->dz, dx0, dW0, db0, s.batch, s.N, s.R, s.padding);
    test_result res = TEST_PASS;
    for (int v = 0; v < 2 && res == TEST_PASS; v++) {
        gpu_bufs g = {ops, ctx[v], {NULL}, 0};
        void *x = gpu_put(&g, c->x, nx), *W = gpu_put(&g, c->W, nw), *b = gpu_put(&g, c->b, c->M);
        void *dz = gpu_put(&g, c->dz, nz), *z = gpu_put(&g, NULL, nz), *dx = gpu_put(&g, NULL, nx);
        void *dW = gpu_put(&g, NULL, nw), *db = gpu_put(&g, NULL, c->M);
        ffnn_status st = x && W && b && dz && z && dx && dW && db ? FFNN_OK : FFNN_ERR_CUDA;
        if (st == FFNN_OK)
            st = ops->local1d_forward(ctx[v], x, W, b, z, s.batch, s.N, s.R, s.padding, act);
        if (st == FFNN_OK)
            st = ops->local1d_backward(ctx[v], x, W, dz, dx, dW, db, s.batch, s.N, s.R,
                                       s.padding);
        if (st == FFNN_OK) {
            got[v][0] = gpu_get(&g, z, nz);
            got[v][1] = gpu_get(&g, dx, nx);
            got[v][2] = gpu_get(&g, dW, nw);
            got[v][3] = gpu_get(&g, db, c->M);
        }
        gpu_free(&g);
        if (st != FFNN_OK || !got[v][0] || !got[v][1] || !got[v][2] || !got[v][3]) {
            fprintf(stderr, "    %s: %s\n", v ? "shared" : "global", ffnn_last_error());
            res = TEST_FAIL;
            break;
        }
        const char *name = v ? "shared" : "global";
        const double act_tol = act == FFNN_ACT_IDENTITY ? 0.0 : 1e-6;
        if (!close_f32("z", got[v][0], z0, nz, sum_atol(s.R) + act_tol, SUM_RTOL) ||
            !close_f32("dx", got[v][1], dx0, nx, sum_atol(s.R), SUM_RTOL) ||
            !close_f32("dW", got[v][2], dW0, nw, sum_atol(s.batch), SUM_RTOL) ||
            !close_f32("db", got[v][3], db0, c->M, sum_atol(s.batch), SUM_RTOL)) {
            fprintf(stderr, "    %s: batch=%zu N=%zu R=%zu %s act %s\n", name, s.batch, s.N,
                    s.R, padding_name(s.padding), ffnn_activation_name(act));
            res = TEST_FAIL;
        }
    }
    if (res == TEST_PASS) {
        const size_t n[4] = {nz, nx, nw, c->M};
        const char *what[4] = {"z global/shared", "dx global/shared", "dW global/shared",
                               "db global/shared"};
        for (int k = 0; k < 4 && res == TEST_PASS; k++)
            if (!same_f32(what[k], got[1][k], got[0][k], n[k])) {
                fprintf(stderr, "    batch=%zu N=%zu R=%zu %s\n", s.batch, s.N, s.R,
                        padding_name(s.padding));
                res = TEST_FAIL;
            }
    }
    for (int v = 0; v < 2; v++)
        for (int k = 0; k < 4; k++)
            free(got[v][k]);
    free(z0), free(dx0), free(dW0), free(db0);
    return res;
}

TEST("local1d_cuda_vs_cpu_global_shared", test_cuda)
{
    const char *reason = no_gpu_reason();
    if (reason)
        SKIP("%s", reason);
    const ffnn_backend_ops *ops = ffnn_cuda_backend();
    void *ctx[2] = {NULL, NULL};
    CHECK_OK(test_ctx(ops, FFNN_STRATEGY_NAIVE, 1, &ctx[0]));
    CHECK_OK(test_ctx(ops, FFNN_STRATEGY_TILED, 1, &ctx[1]));
    rng r = {0xD1B54A32D192ED03ULL};
    static const ffnn_activation acts[] = {FFNN_ACT_IDENTITY, FFNN_ACT_SIGMOID, FFNN_ACT_TANH,
                                           FFNN_ACT_RELU};
    test_result t = TEST_PASS;
    for (size_t i = 0; i < test_l1d_count && t == TEST_PASS; i++) {
        l1d_case c;
        const l1d_shape s = test_l1d_shape(&r, i);
        if (!case_make(&c, &r, s)) {
            t = TEST_FAIL;
            fprintf(stderr, "    case_make batch=%zu N=%zu R=%zu failed\n", s.batch, s.N, s.R);
            break;
        }
        t = cuda_case(ctx, &c, acts[i % 4]);
        case_free(&c);
    }
    ops->destroy(ctx[0]);
    ops->destroy(ctx[1]);
    return t;
}

#if FFNN_HAVE_CUDA
/* The benchmark's entry point: ffnn_lab_local1d_forward_stream (both variants, the
 * default stream, fused sigmoid as seed 002) against ffnn_cpu_local1d_forward,
 * and its argument checks. Without CUDA in the build: FFNN_ERR_UNSUPPORTED. */
TEST("local1d_cuda_entry_point_sigmoid", test_cuda_entry_point)
{
    if (!ffnn_has_cuda()) {
        CHECK(ffnn_lab_local1d_forward_stream(FFNN_LOCAL1D_SHARED, NULL, NULL, NULL, NULL, NULL, 1, 4,
                                        3, FFNN_LOCAL1D_VALID, FFNN_ACT_SIGMOID) ==
                  FFNN_ERR_UNSUPPORTED, "a build without CUDA must say unsupported");
        SKIP("no CUDA backend (the entry point answers FFNN_ERR_UNSUPPORTED: checked)");
    }
    const char *reason = no_gpu_reason();
    if (reason)
        SKIP("%s", reason);
    const ffnn_backend_ops *ops = ffnn_cuda_backend();
    void *ctx = NULL;
    CHECK_OK(test_ctx(ops, FFNN_STRATEGY_TILED, 1, &ctx)); /* only for alloc/copies */
    static const l1d_shape shapes[] = {
        {1, 1 << 20, 3, FFNN_LOCAL1D_VALID}, {1, (1 << 20) + 77, 3, FFNN_LOCAL1D_SAME},
        {3, 1001, 5, FFNN_LOCAL1D_VALID},    {1, 4, 3, FFNN_LOCAL1D_SAME},
        {2, 5000, 400, FFNN_LOCAL1D_VALID},
    };
    rng r = {0xABCDEF0002ULL};
    test_result t = TEST_PASS;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0] && t == TEST_PASS; i++) {
        l1d_case c;
        CHECK(case_make(&c, &r, shapes[i]), "case_make");
        const l1d_shape s = c.s;
        const size_t nz = s.batch * c.M;
        float *want = malloc(nz * sizeof *want);
        ffnn_cpu_local1d_forward(c.x, c.W, c.b, want, s.batch, s.N, s.R, s.padding,
                                 FFNN_ACT_SIGMOID);
        for (int v = 0; v < 2 && t == TEST_PASS; v++) {
            gpu_bufs g = {ops, ctx, {NULL}, 0};
            void *x = gpu_put(&g, c.x, s.batch * s.N), *W = gpu_put(&g, c.W, c.M * s.R);
            void *b = gpu_put(&g, c.b, c.M), *z = gpu_put(&g, NULL, nz);
            ffnn_status st = x && W && b && z ? FFNN_OK : FFNN_ERR_CUDA;
            if (st == FFNN_OK) /* the uploads ran on the context's stream: finish them */
                st = ops->synchronize(ctx);
            if (st == FFNN_OK)
                st = ffnn_lab_local1d_forward_stream((ffnn_local1d_variant)v, NULL, x, W, b, z,
                                               s.batch, s.N, s.R, s.padding, FFNN_ACT_SIGMOID);
            /* the kernel ran on the legacy default stream, the context copies on its
             * own non-blocking stream, which does not wait for it: wait here */
            if (st == FFNN_OK)
                st = ffnn_lab_stream_sync(NULL);
            float *got = st == FFNN_OK ? gpu_get(&g, z, nz) : NULL;
            gpu_free(&g);
            if (!got) {
                fprintf(stderr, "    variant %d: %s\n", v, ffnn_last_error());
                t = TEST_FAIL;
            } else if (!close_f32("sigmoid(z)", got, want, nz, sum_atol(s.R) + 1e-6, SUM_RTOL)) {
                fprintf(stderr, "    variant %d batch=%zu N=%zu R=%zu %s\n", v, s.batch, s.N,
                        s.R, padding_name(s.padding));
                t = TEST_FAIL;
            }
            free(got);
        }
        free(want);
        case_free(&c);
    }
    ops->destroy(ctx);
    if (t != TEST_PASS)
        return t;
    float one = 1.0f;
    CHECK(ffnn_lab_local1d_forward_stream((ffnn_local1d_variant)7, NULL, &one, &one, NULL, &one, 1, 1,
                                    1, FFNN_LOCAL1D_VALID, FFNN_ACT_SIGMOID) ==
              FFNN_ERR_INVALID_ARGUMENT, "variant 7 accepted");
    CHECK(ffnn_lab_local1d_forward_stream(FFNN_LOCAL1D_GLOBAL, NULL, &one, &one, NULL, &one, 1, 8, 4,
                                    FFNN_LOCAL1D_SAME, FFNN_ACT_SIGMOID) ==
              FFNN_ERR_INVALID_ARGUMENT, "even R with same accepted");
    CHECK(strstr(ffnn_last_error(), "odd") != NULL, "message: %s", ffnn_last_error());
    CHECK(ffnn_lab_local1d_forward_stream(FFNN_LOCAL1D_SHARED, NULL, &one, &one, NULL, &one, 1, 2, 3,
                                    FFNN_LOCAL1D_VALID, FFNN_ACT_SIGMOID) ==
              FFNN_ERR_INVALID_ARGUMENT, "R > N with valid accepted");
    return TEST_PASS;
}

/* The benchmark's use of ffnn_lab_local1d_forward_stream: K layers chained on one
 * non-blocking stream (each layer's output the next one's input, two buffers
 * taking turns, so layer k+1 overwrites what layer k reads: the launches may
 * overlap, see local1d.h), weights and biases at every alignment (per-layer offsets
 * into one arena, as the benchmark's), activations at offsets too; against the CPU
 * reference layer by layer, and global and shared give the same bits. */
typedef struct chain_shape {
    size_t batch, N, R;
    int K;
    ffnn_local1d_padding padding;
} chain_shape;

static test_result chain_case(const chain_shape *cs, rng *r, void *stream)
{
    const size_t R = cs->R, batch = cs->batch;
    const int K = cs->K;
    size_t wn = 0, bn = 0, n = cs->N;
    for (int k = 0; k < K; k++) { /* arena sizes, layer k shifted by k floats */
        const size_t M = ffnn_local1d_output_size(n, R, cs->padding);
        wn += M * R + 3, bn += M + 3;
        n = M;
    }
    const size_t xn = batch * cs->N + 3;
    float *hW = malloc(wn * sizeof *hW), *hb = malloc(bn * sizeof *hb);
    float *hx = malloc(xn * sizeof *hx), *ref = malloc(xn * sizeof *ref);
    float *tmp = malloc(xn * sizeof *tmp), *got[2] = {NULL, NULL};
    void *dW = NULL, *db = NULL, *dx = NULL, *dbuf[2] = {NULL, NULL};
    test_result t = TEST_PASS;
    ffnn_status st = hW && hb && hx && ref && tmp ? FFNN_OK : FFNN_ERR_NO_MEMORY;
    if (st == FFNN_OK) {
        fill_uniform(r, hW, wn, -0.5f, 0.5f);
        fill_uniform(r, hb, bn, -0.5f, 0.5f);
        fill_uniform(r, hx, xn, 0.0f, 1.0f);
        st = ffnn_lab_malloc(&dW, wn * sizeof(float));
    }
    if (st == FFNN_OK) st = ffnn_lab_malloc(&db, bn * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_malloc(&dx, xn * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_malloc(&dbuf[0], xn * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_malloc(&dbuf[1], xn * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_upload(dW, hW, wn * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_upload(db, hb, bn * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_upload(dx, hx, xn * sizeof(float));
    /* the CPU chain: layer k reads ref (x0 at offset 1), writes tmp, then swaps */
    size_t out_n = cs->N;
    if (st == FFNN_OK) {
        memcpy(ref, hx + 1, batch * cs->N * sizeof *ref);
        size_t wo = 0, bo = 0;
        n = cs->N;
        for (int k = 0; k < K; k++) {
            const size_t M = ffnn_local1d_output_size(n, R, cs->padding);
            ffnn_cpu_local1d_forward(ref, hW + wo + (size_t)k % 4, hb + bo + (size_t)(k + 1) % 4,
                                     tmp, batch, n, R, cs->padding, FFNN_ACT_SIGMOID);
            memcpy(ref, tmp, batch * M * sizeof *ref);
            wo += M * R + 3, bo += M + 3;
            n = M;
        }
        out_n = n;
    }
    for (int v = 0; v < 2 && st == FFNN_OK; v++) {
        const float *in = (const float *)dx + 1;
        float *out = NULL;
        size_t wo = 0, bo = 0;
        n = cs->N;
        for (int k = 0; k < K && st == FFNN_OK; k++) {
            const size_t M = ffnn_local1d_output_size(n, R, cs->padding);
            out = (float *)dbuf[k & 1] + (size_t)k % 3;
            st = ffnn_lab_local1d_forward_stream((ffnn_local1d_variant)v, stream, in,
                                           (const float *)dW + wo + (size_t)k % 4,
                                           (const float *)db + bo + (size_t)(k + 1) % 4, out,
                                           batch, n, R, cs->padding, FFNN_ACT_SIGMOID);
            in = out;
            wo += M * R + 3, bo += M + 3;
            n = M;
        }
        if (st == FFNN_OK) st = ffnn_lab_stream_sync(stream);
        if (st == FFNN_OK) {
            got[v] = malloc(batch * out_n * sizeof(float));
            st = got[v] ? ffnn_lab_download(got[v], out, batch * out_n * sizeof(float))
                        : FFNN_ERR_NO_MEMORY;
        }
    }
    if (st != FFNN_OK) {
        fprintf(stderr, "    %s\n", ffnn_last_error());
        t = TEST_FAIL;
    } else if (!close_f32("chain global", got[0], ref, batch * out_n, 1e-5, SUM_RTOL) ||
               !close_f32("chain shared", got[1], ref, batch * out_n, 1e-5, SUM_RTOL) ||
               !same_f32("chain global/shared", got[1], got[0], batch * out_n)) {
        t = TEST_FAIL;
    }
    if (t != TEST_PASS)
        fprintf(stderr, "    chain batch=%zu N=%zu R=%zu K=%d %s\n", batch, cs->N, R, K,
                padding_name(cs->padding));
    ffnn_lab_free(dW), ffnn_lab_free(db), ffnn_lab_free(dx);
    ffnn_lab_free(dbuf[0]), ffnn_lab_free(dbuf[1]);
    free(hW), free(hb), free(hx), free(ref), free(tmp), free(got[0]), free(got[1]);
    return t;
}

TEST("local1d_cuda_entry_point_chain", test_cuda_entry_point_chain)
{
    const char *reason = no_gpu_reason();
    if (reason)
        SKIP("%s", reason);
    static const chain_shape shapes[] = {
        {1, (1 << 18) + 5, 3, 40, FFNN_LOCAL1D_VALID}, /* seed 002's layer, 40 deep */
        {3, 5001, 5, 8, FFNN_LOCAL1D_SAME},
        {2, 70001, 2, 6, FFNN_LOCAL1D_VALID},
        {1, 4099, 7, 5, FFNN_LOCAL1D_SAME},
        {2, 3000, 12, 3, FFNN_LOCAL1D_VALID}, /* beyond the 4-outputs kernels */
    };
    void *stream = NULL;
    CHECK_OK(ffnn_lab_stream_create(&stream));
    rng r = {0xC4A1D0002ULL};
    test_result t = TEST_PASS;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0] && t == TEST_PASS; i++)
        t = chain_case(&shapes[i], &r, stream);
    ffnn_lab_stream_destroy(stream);
    return t;
}
#else
TEST("local1d_cuda_entry_point_sigmoid", test_cuda_entry_point)
{
    SKIP("build has no CUDA (the lab's device memory helpers)");
}
TEST("local1d_cuda_entry_point_chain", test_cuda_entry_point_chain)
{
    SKIP("build has no CUDA (the lab's device memory helpers)");
}
#endif

/* ------------------------------------------------------------------ training */

#define MOTIF_SPEC "synth:motif:20000"
#define LOCAL_ARCH "64-local5samerelu-local5samerelu-2" /* 898 parameters */
#define DENSE_ARCH "64-13relu-2"                        /* 873 parameters */

static ffnn_train_config motif_config(ffnn_device device, ffnn_strategy kernels)
{
    ffnn_train_config cfg = test_train_config(device, kernels);
    cfg.optimizer = FFNN_OPT_ADAM;
    cfg.learning_rate = 0.01f;
    cfg.batch_size = 32;
    cfg.seed = 1;
    return cfg;
}

/* Train arch on the motif set for `epochs` epochs; *accuracy on its test set. */
static test_result train_motif(const char *arch, const ffnn_dataset *train,
                               const ffnn_dataset *test, const ffnn_train_config *cfg,
                               int epochs, double *accuracy, ffnn_model **keep)
{
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    double loss = 0;
    CHECK_OK(ffnn_model_create(arch, &m));
    CHECK_OK(ffnn_model_init(m, 1));
    CHECK_OK(ffnn_trainer_create(m, train, cfg, &t));
    for (int e = 0; e < epochs; e++) {
        ffnn_epoch_stats stats;
        CHECK_OK(ffnn_trainer_run_epoch(t, NULL, NULL, &stats));
    }
    CHECK_OK(ffnn_trainer_evaluate(t, test, &loss, accuracy));
    CHECK_OK(ffnn_trainer_sync_model(t));
    ffnn_trainer_free(t);
    if (keep)
        *keep = m;
    else
        ffnn_model_free(m);
    return TEST_PASS;
}

TEST("local1d_trains_motif_beats_dense", test_trains_motif)
{
    ffnn_dataset *train = NULL, *test = NULL;
    CHECK_OK(ffnn_dataset_synthetic(MOTIF_SPEC, 1, &train, &test));
    CHECK(ffnn_dataset_features(train) == 64 && ffnn_dataset_classes(train) == 2,
          "synth:motif: %zu features, %d classes", ffnn_dataset_features(train),
          ffnn_dataset_classes(train));
    const ffnn_train_config cfg = motif_config(FFNN_DEVICE_CPU, FFNN_STRATEGY_REFERENCE);
    double local_acc = 0, dense_acc = 0;
    ffnn_model *m = NULL, *d = NULL;
    if (train_motif(LOCAL_ARCH, train, test, &cfg, 20, &local_acc, &m) != TEST_PASS ||
        train_motif(DENSE_ARCH, train, test, &cfg, 20, &dense_acc, &d) != TEST_PASS)
        return TEST_FAIL;
    printf("     %s: %.2f%% (%zu parameters); %s: %.2f%% (%zu parameters); chance 50%%\n",
           LOCAL_ARCH, 100 * local_acc, ffnn_model_parameter_count(m), DENSE_ARCH,
           100 * dense_acc, ffnn_model_parameter_count(d));
    CHECK(local_acc >= 0.88, "local1d net: test accuracy %.4f < 0.88", local_acc);
    CHECK(local_acc >= dense_acc + 0.08, "local1d net %.4f not 8 points above the dense net %.4f",
          local_acc, dense_acc);
    /* CPU inference of the trained model (predict.c) gives the trainer's accuracy */
    const size_t classes = 2;
    uint64_t confusion[4];
    double loss;
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_evaluate(m, test, 1000, &loss, confusion));
    const double acc = (double)(confusion[0] + confusion[classes + 1]) /
                       (double)ffnn_dataset_count(test);
    CHECK(fabs(acc - local_acc) < 1e-9, "ffnn_model_evaluate %.6f, trainer %.6f", acc, local_acc);
    TEST_FREE(m, d, train, test);
    return TEST_PASS;
}

/* 60 steps of a mixed network on cuda (each kernel strategy) against the cpu
 * reference: per-step losses within 1e-4 relative, parameters within 1e-4. */
static test_result cuda_follows_cpu(char *why, size_t why_size, ffnn_strategy kernels)
{
    const char *reason = no_gpu_reason();
    if (reason)
        SKIP("%s", reason);
    const char *arch = "64-local5samerelu-16tanh-local3sigmoid:nobias-local3-2";
    ffnn_dataset *train = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:motif:2000", 3, &train, NULL));
    ffnn_model *m[2] = {NULL, NULL};
    ffnn_trainer *t[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        ffnn_train_config cfg = motif_config(k ? FFNN_DEVICE_CUDA : FFNN_DEVICE_CPU,
                                             k ? kernels : FFNN_STRATEGY_REFERENCE);
        cfg.optimizer = FFNN_OPT_MOMENTUM;
        CHECK_OK(ffnn_model_create(arch, &m[k]));
        CHECK_OK(ffnn_model_init(m[k], 4));
        CHECK_OK(ffnn_trainer_create(m[k], train, &cfg, &t[k]));
    }
    for (int s = 0; s < 60; s++) {
        double loss[2];
        CHECK_OK(ffnn_trainer_step(t[0], &loss[0]));
        CHECK_OK(ffnn_trainer_step(t[1], &loss[1]));
        CHECK(fabs(loss[1] - loss[0]) <= 1e-4 * fabs(loss[0]) + 1e-6,
              "%s, step %d: cuda loss %.9g, cpu %.9g", ffnn_strategy_name(kernels), s + 1,
              loss[1], loss[0]);
    }
    CHECK_OK(ffnn_trainer_sync_model(t[0]));
    CHECK_OK(ffnn_trainer_sync_model(t[1]));
    CHECK(close_f32("parameters", ffnn_model_parameters(m[1]), ffnn_model_parameters(m[0]),
                    ffnn_model_parameter_count(m[0]), 1e-4, 1e-3),
          "%s: parameters after 60 steps", ffnn_strategy_name(kernels));
    for (int k = 0; k < 2; k++) {
        ffnn_trainer_free(t[k]);
        ffnn_model_free(m[k]);
    }
    ffnn_dataset_free(train);
    return TEST_PASS;
}

TEST_WITH("local1d_cuda_naive_follows_cpu", test_cuda_naive_follows_cpu, cuda_follows_cpu,
          FFNN_STRATEGY_NAIVE);
TEST_WITH("local1d_cuda_tiled_follows_cpu", test_cuda_tiled_follows_cpu, cuda_follows_cpu,
          FFNN_STRATEGY_TILED);

/* The motif task on cuda (tiled kernels): the cpu run's accuracy bound. */
TEST("local1d_cuda_trains_motif", test_cuda_trains_motif)
{
    const char *reason = no_gpu_reason();
    if (reason)
        SKIP("%s", reason);
    ffnn_dataset *train = NULL, *test = NULL;
    CHECK_OK(ffnn_dataset_synthetic(MOTIF_SPEC, 1, &train, &test));
    double acc[2];
    for (int k = 0; k < 2; k++) {
        const ffnn_train_config cfg =
            motif_config(FFNN_DEVICE_CUDA, k ? FFNN_STRATEGY_TILED : FFNN_STRATEGY_NAIVE);
        CHECK_PASS(train_motif(LOCAL_ARCH, train, test, &cfg, 20, &acc[k], NULL));
        CHECK(acc[k] >= 0.88, "cuda %s: test accuracy %.4f < 0.88",
              ffnn_strategy_name(cfg.strategy), acc[k]);
    }
    printf("     cuda naive %.2f%%, tiled %.2f%%\n", 100 * acc[0], 100 * acc[1]);
    TEST_FREE(train, test);
    return TEST_PASS;
}

/* ------------------------------------------------------------------ files */

typedef test_result (*dir_body)(const char *dir);

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[512];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            remove(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

static test_result in_tmpdir(dir_body body)
{
    char dir[] = "/tmp/ffnn-test-l1d-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
    test_result r = body(dir);
    remove_dir(dir);
    return r;
}

/* A safetensors file from a header text and data bytes (no padding checks). */
static int write_safetensors(const char *path, const char *header, const void *data,
                             size_t bytes)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    uint64_t n = strlen(header);
    uint8_t len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(n >> (8 * i));
    int ok = fwrite(len, 1, 8, f) == 8 && fwrite(header, 1, n, f) == n &&
             fwrite(data, 1, bytes, f) == bytes;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static test_result model_file_body(const char *dir)
{
    char path[512], arch[256], arch2[256];
    snprintf(path, sizeof path, "%s/local.safetensors", dir);
    const char *a = "16-local3samerelu-local5sigmoid:nobias-6tanh-local3";
    ffnn_model *m = NULL, *l = NULL;
    ffnn_model_file_info info;
    CHECK_OK(ffnn_model_create(a, &m));
    CHECK_OK(ffnn_model_init(m, 9));
    (void)ffnn_model_set_loss(m, FFNN_LOSS_MSE);
    CHECK_OK(ffnn_model_save(m, path));
    CHECK_OK(ffnn_model_load(path, &l, &info));
    ffnn_model_arch_string(m, arch, sizeof arch);
    ffnn_model_arch_string(l, arch2, sizeof arch2);
    CHECK(strcmp(arch, arch2) == 0, "arch '%s' loaded as '%s'", arch, arch2);
    CHECK(info.loss == FFNN_LOSS_MSE, "loss %d", (int)info.loss);
    const size_t n = ffnn_model_parameter_count(m);
    CHECK(n == ffnn_model_parameter_count(l) &&
              memcmp(ffnn_model_parameters(m), ffnn_model_parameters(l), n * sizeof(float)) == 0,
          "parameters differ after the round trip");
    /* the same outputs */
    float x[3 * 16], y[3 * 4], y2[3 * 4];
    rng r = {77};
    fill_uniform(&r, x, 3 * 16, -1.0f, 1.0f);
    CHECK_OK(ffnn_model_forward(m, x, 3, y));
    CHECK_OK(ffnn_model_forward(l, x, 3, y2));
    CHECK(ffnn_model_output_size(m) == 4 && memcmp(y, y2, sizeof y) == 0, "outputs differ");
    TEST_FREE(l, m);

    /* a local1d weight must be [out, R]: a dense-shaped one is refused, naming it */
    static float zeros[14 * 16 + 2 * 14 + 2 + 14];
    char header[512];
    snprintf(header, sizeof header,
             "{\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":\"16-local3-2\","
             "\"loss\":\"ce\"},"
             "\"layers.0.weight\":{\"dtype\":\"F32\",\"shape\":[14,16],\"data_offsets\":[0,%zu]},"
             "\"layers.0.bias\":{\"dtype\":\"F32\",\"shape\":[14],\"data_offsets\":[%zu,%zu]},"
             "\"layers.1.weight\":{\"dtype\":\"F32\",\"shape\":[2,14],\"data_offsets\":[%zu,%zu]},"
             "\"layers.1.bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[%zu,%zu]}}",
             (size_t)14 * 16 * 4, (size_t)14 * 16 * 4, (size_t)(14 * 16 + 14) * 4,
             (size_t)(14 * 16 + 14) * 4, (size_t)(14 * 16 + 14 + 28) * 4,
             (size_t)(14 * 16 + 14 + 28) * 4, (size_t)(14 * 16 + 14 + 28 + 2) * 4);
    snprintf(path, sizeof path, "%s/bad.safetensors", dir);
    CHECK(write_safetensors(path, header, zeros, (14 * 16 + 14 + 28 + 2) * 4) == 0, "write");
    l = NULL;
    CHECK(ffnn_model_load(path, &l, NULL) == FFNN_ERR_FORMAT && l == NULL,
          "a [14, 16] weight for local3 was accepted");
    CHECK(strstr(ffnn_last_error(), "layers.0.weight") &&
              strstr(ffnn_last_error(), "expected [14, 3]") &&
              strstr(ffnn_last_error(), "local1d"),
          "message: %s", ffnn_last_error());
    return TEST_PASS;
}

TEST("local1d_model_file_round_trip", test_model_file)
{
    return in_tmpdir(model_file_body);
}

/* A run with local1d layers stopped mid-epoch, checkpointed and resumed in a
 * fresh trainer gives the uninterrupted run's losses and weights, bit for bit. */
static test_result checkpoint_body(const char *dir)
{
    enum { STEPS = 50, STOP = 23 };
    const char *arch = "64-local5samerelu-local3tanh:nobias-8relu-2";
    char path[512];
    snprintf(path, sizeof path, "%s/run.ckpt", dir);
    ffnn_dataset *train = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:motif:1000", 5, &train, NULL));
    ffnn_train_config cfg = motif_config(FFNN_DEVICE_CPU, FFNN_STRATEGY_REFERENCE);
    double ref[STEPS], got[STEPS];
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    float *ref_params = NULL;
    for (int pass = 0; pass < 2; pass++) {
        CHECK_OK(ffnn_model_create(arch, &m));
        CHECK_OK(ffnn_model_init(m, 2));
        CHECK_OK(ffnn_trainer_create(m, train, &cfg, &t));
        double *out = pass ? got : ref;
        for (int s = 0; s < STEPS; s++) {
            if (pass == 1 && s == STOP) { /* save, throw away, resume afresh */
                CHECK_OK(ffnn_trainer_save_checkpoint(t, path));
                TEST_FREE(t, m);
                CHECK_OK(ffnn_model_create(arch, &m));
                CHECK_OK(ffnn_model_init(m, 99));
                CHECK_OK(ffnn_trainer_create(m, train, &cfg, &t));
                CHECK_OK(ffnn_trainer_resume(t, path));
            }
            CHECK_OK(ffnn_trainer_step(t, &out[s]));
        }
        CHECK_OK(ffnn_trainer_sync_model(t));
        const size_t n = ffnn_model_parameter_count(m);
        if (pass == 0) {
            ref_params = malloc(n * sizeof *ref_params);
            CHECK(ref_params != NULL, "malloc");
            memcpy(ref_params, ffnn_model_parameters(m), n * sizeof *ref_params);
        } else {
            CHECK(memcmp(ref, got, sizeof ref) == 0, "per-step losses differ after resume");
            CHECK(memcmp(ref_params, ffnn_model_parameters(m), n * sizeof *ref_params) == 0,
                  "weights differ after resume");
        }
        TEST_FREE(t, m);
    }
    free(ref_params);
    ffnn_dataset_free(train);
    return TEST_PASS;
}

TEST("local1d_checkpoint_resume_bits", test_checkpoint)
{
    return in_tmpdir(checkpoint_body);
}
