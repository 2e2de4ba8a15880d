/* test_mixed.c - suite "mixed": --precision bf16 on the cublaslt strategy, the
 * mixed-precision pipeline (src/strategy/step.h ffnn_mixed: bf16 operands from a
 * shadow of the fp32 master weights written by the update, bf16 activations and
 * gradients written by the matmul epilogues, fp32 accumulation, master weights
 * and optimizer state).
 *
 *   cublaslt_bf16_mixed_follows_cpu: 100 steps against the fp32 cpu reference.
 *     Tolerance per step, stated before measuring: |loss_gpu - loss_cpu| <=
 *     L 2^-6 |loss_cpu| for a net of L dense layers. Why: each bf16 matmul output
 *     is within 2^-7 S of the fp32 one (S = the sum of |products|; the op tests'
 *     bound: both inputs rounded to 8 significant bits, 2^-8 each), and an input
 *     error of a layer reaches its output at most with the same relative weight,
 *     so the logits are within about L 2^-7 of their absolute scale; softmax
 *     cross-entropy moves by at most 2 max_j |dz_j| (its gradient in the logits
 *     has an L1 norm <= 2): 2 L 2^-7 = L 2^-6, with the logits' scale no larger
 *     than the loss's in these runs (losses 0.3-2.4, logits of that order). The
 *     trajectories may drift apart over the steps; the bound must hold anyway
 *     (the weights' difference stays at the gradients' bf16 error times lr).
 *     And bf16 really runs: some step differs from the cpu by more than 1e-5
 *     relative (the fp32 strategies stay below 5e-7).
 *   cublaslt_bf16_shadow_is_rne_of_master: after steps of sgd and adam (one
 *     update over the arena) and adamw without bias decay (one update per
 *     weight and bias), every bf16 shadow value has the bits
 *     of the fp32 master rounded to nearest even; after a checkpoint is resumed
 *     into another trainer, its shadow is made again (the next step's loss equals
 *     the saving trainer's, bit for bit).
 *   cublaslt_bf16_gather_and_to_bf16_are_rne: the batch gathered straight into
 *     bf16, and converted into rows with padding, are bf16_rne of the fp32 gather.
 *   cublaslt_bf16_act_backward_bits_match_host: the f' step of the bf16 backward
 *     (activation.cu's 16-byte kernel and its tail) gives the host formula's bits
 *     for identity, relu, sigmoid and tanh on random bf16, lengths 7 .. 13056.
 *
 * Every test SKIPs without a CUDA GPU (and fails without the Fashion-MNIST files,
 * as the strategies suite). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "test_fixtures.h"
#include "ffnn.h"
#include "test_parity.h"
#include "strategy/mixed.h"
#include "strategy/step.h"
#include "train/trainer.h"

/* bfloat16 bits of a finite f, rounded to nearest even (the 16 low bits of f's
 * pattern decide: above half an ulp up, below down, exactly half to the even
 * one). */
static uint16_t bf16_rne(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static ffnn_train_config bf16_config(ffnn_optimizer opt, float lr)
{
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.batch_size = 64;
    cfg.optimizer = opt;
    cfg.learning_rate = lr;
    cfg.seed = 5;
    cfg.device = FFNN_DEVICE_CUDA;
    cfg.strategy = FFNN_STRATEGY_CUBLASLT;
    cfg.precision = FFNN_PRECISION_BF16;
    return cfg;
}

TEST("cublaslt_bf16_mixed_follows_cpu_100_steps", follows_cpu)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *train = NULL, *test = NULL;
    LOAD_FASHION(&train, &test);
    /* 784-30relu-26relu-10: its second bias is not 16-byte aligned, so that layer
     * takes cublas.cu's bias kernel (bias_act_rows_kernel) on the bf16 output */
    const struct { const char *arch; int layers; } nets[] = {
        {"784-64relu-10", 2}, {"784-33tanh-10", 2}, {"784-48sigmoid-24relu-10", 3},
        {"784-30relu-26relu-10", 3}};
    const struct { ffnn_optimizer opt; int nesterov; float lr; const char *name; } opts[] = {
        {FFNN_OPT_SGD, 0, 0.05f, "sgd"},
        {FFNN_OPT_MOMENTUM, 1, 0.01f, "nesterov"},
        {FFNN_OPT_ADAM, 0, 0.001f, "adam"},
    };
    const int steps = test_quick() ? 4 : 100;
    for (int a = 0; a < 4; a++)
        for (int o = 0; o < 3; o++) {
            ffnn_model *m = NULL;
            CHECK_OK(ffnn_model_create(nets[a].arch, &m));
            CHECK_OK(ffnn_model_init(m, 3));
            ffnn_train_config cfg = bf16_config(opts[o].opt, opts[o].lr);
            cfg.nesterov = opts[o].nesterov;
            ffnn_trainer *cpu = NULL, *gpu = NULL;
            CHECK_OK(test_trainer_pair(m, train, cfg, &cpu, &gpu));
            CHECK(gpu->run.ext.mixed != NULL, "%s: the bf16 pipeline is off", nets[a].arch);
            const double tol = nets[a].layers * ldexp(1.0, -6);
            double worst = 0;
            char what[96];
            snprintf(what, sizeof what, "%s %s bf16", nets[a].arch, opts[o].name);
            CHECK_PASS(test_steps_within(cpu, gpu, steps, tol, what, &worst));
            CHECK(worst > 1e-5, "%s %s: within %.2e of fp32 for %d steps: bf16 not in use?",
                  nets[a].arch, opts[o].name, worst, steps);
            printf("     %s cublaslt bf16 %s: %d steps, worst relative loss difference %.2e "
                   "(bound %.2e)\n", nets[a].arch, opts[o].name, steps, worst, tol);
            TEST_FREE(cpu, gpu, m);
        }
    TEST_FREE(train, test);
    return TEST_PASS;
}

/* Every shadow value of t against bf16_rne of its master. */
static test_result shadow_matches(ffnn_trainer *t, const char *what)
{
    const size_t n = t->run.model->parameter_count;
    float *p = malloc(n * sizeof *p);
    uint16_t *h = malloc(n * sizeof *h);
    CHECK(p && h, "out of memory");
    CHECK(t->run.ext.mixed != NULL, "%s: no bf16 pipeline", what);
    CHECK_OK(t->run.ops->download(t->run.ctx, p, t->run.params, n * sizeof *p));
    CHECK_OK(t->run.ops->download(t->run.ctx, h, t->run.ext.mixed->params16, n * sizeof *h));
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (h[i] != bf16_rne(p[i]) && bad++ == 0)
            first = i;
    const float f0 = p[first];
    const unsigned h0 = h[first], w0 = bf16_rne(p[first]);
    free(p);
    free(h);
    CHECK(bad == 0, "%s: %zu of %zu shadow values are not bf16(master); the first [%zu]: "
          "master %.9g, shadow 0x%04x, expected 0x%04x", what, bad, n, first, (double)f0, h0,
          w0);
    return TEST_PASS;
}

TEST("cublaslt_bf16_shadow_is_rne_of_master", shadow_is_rne)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *train = NULL, *test = NULL;
    LOAD_FASHION(&train, &test);
    const char *archs[] = {"784-48sigmoid-24relu-10", "784-33tanh-10"};
    const struct { ffnn_optimizer opt; float lr, wd; const char *name; } opts[] = {
        {FFNN_OPT_SGD, 0.05f, 0.0f, "sgd"},
        {FFNN_OPT_ADAM, 0.001f, 0.0f, "adam"},
        {FFNN_OPT_ADAMW, 0.001f, 0.01f, "adamw"},
    };
    for (int a = 0; a < 2; a++)
        for (int o = 0; o < 3; o++) {
            ffnn_model *m = NULL;
            CHECK_OK(ffnn_model_create(archs[a], &m));
            CHECK_OK(ffnn_model_init(m, 11));
            ffnn_train_config cfg = bf16_config(opts[o].opt, opts[o].lr);
            cfg.weight_decay = opts[o].wd;
            cfg.decay_bias = opts[o].wd == 0.0f; /* adamw: one update per weight, per bias */
            ffnn_trainer *t = NULL;
            CHECK_OK(ffnn_trainer_create(m, train, &cfg, &t));
            double loss;
            for (int s = 0; s < 20; s++)
                CHECK_OK(ffnn_trainer_step(t, &loss));
            char what[96];
            snprintf(what, sizeof what, "%s %s after 20 steps", archs[a], opts[o].name);
            CHECK_PASS(shadow_matches(t, what));
            if (o == 1) { /* resumed elsewhere: the shadow is made again */
                char path[96];
                snprintf(path, sizeof path, "/tmp/ffnn_test_mixed_%d.ckpt", (int)getpid());
                CHECK_OK(ffnn_trainer_save_checkpoint(t, path));
                ffnn_model *m2 = NULL;
                ffnn_trainer *r = NULL;
                CHECK_OK(ffnn_model_create(archs[a], &m2));
                CHECK_OK(ffnn_model_init(m2, 99)); /* other weights until the resume */
                CHECK_OK(ffnn_trainer_create(m2, train, &cfg, &r));
                CHECK_OK(ffnn_trainer_step(r, &loss)); /* its shadow: of other weights */
                const ffnn_status rs = ffnn_trainer_resume(r, path);
                unlink(path);
                CHECK_OK(rs);
                double lt, lr;
                CHECK_OK(ffnn_trainer_step(t, &lt));
                CHECK_OK(ffnn_trainer_step(r, &lr));
                CHECK(lt == lr, "%s: the step after the resume: %.9g, the saving trainer's "
                      "%.9g", archs[a], lr, lt);
                snprintf(what, sizeof what, "%s resumed", archs[a]);
                CHECK_PASS(shadow_matches(r, what));
                TEST_FREE(r, m2);
            }
            TEST_FREE(t, m);
        }
    TEST_FREE(train, test);
    return TEST_PASS;
}

/* The bf16 trainer the op-level tests below drive through its run's ops:
 * 784-64relu-10 (seed 1), sgd at lr 0.05, Fashion-MNIST's training set. */
typedef struct op_fixture {
    ffnn_dataset *train, *test;
    ffnn_model *m;
    ffnn_trainer *t;
} op_fixture;

/* SKIP without a GPU; else the fixture, whose run must have the bf16 ops (and, with
 * need_side, the second stream's). */
static test_result op_fixture_open(op_fixture *fx, int need_side, char *why, size_t why_size)
{
    SKIP_WITHOUT_GPU();
    memset(fx, 0, sizeof *fx);
    LOAD_FASHION(&fx->train, &fx->test);
    CHECK_OK(ffnn_model_create("784-64relu-10", &fx->m));
    CHECK_OK(ffnn_model_init(fx->m, 1));
    ffnn_train_config cfg = bf16_config(FFNN_OPT_SGD, 0.05f);
    CHECK_OK(ffnn_trainer_create(fx->m, fx->train, &cfg, &fx->t));
    const ffnn_run *r = &fx->t->run;
    CHECK(r->ext.mixed && r->ops->bf16 && (!need_side || r->ops->side), "no bf16 ops");
    return TEST_PASS;
}

static void op_fixture_close(op_fixture *fx)
{
    ffnn_trainer_free(fx->t);
    ffnn_model_free(fx->m);
    ffnn_dataset_free(fx->train);
    ffnn_dataset_free(fx->test);
}

/* gather_bf16 and to_bf16 (with padded rows) give bf16_rne of gather's fp32 x,
 * bit for bit, and to_bf16 leaves the cells past a row's end as they were. */
TEST("cublaslt_bf16_gather_and_to_bf16_are_rne", gather_and_convert)
{
    op_fixture fx;
    const test_result opened = op_fixture_open(&fx, 0, why, why_size);
    if (opened != TEST_PASS) return opened;
    ffnn_run *r = &fx.t->run;
    enum { B = 64, F = 784, LD = 800 };
    int32_t idx[B];
    for (int b = 0; b < B; b++)
        idx[b] = (int32_t)((b * 7919) % 60000);
    int32_t *didx = NULL;
    uint16_t *padded = NULL;
    CHECK_OK(r->ops->alloc(r->ctx, sizeof idx, (void **)&didx));
    CHECK_OK(r->ops->alloc(r->ctx, (size_t)B * LD * 2, (void **)&padded));
    static float x[B * F];
    static uint16_t g16[B * F], p16[B * LD];
    memset(p16, 0xff, sizeof p16);
    const ffnn_gather_source src = ffnn_step_gather_source(&r->train);
    CHECK_OK(r->ops->upload(r->ctx, didx, idx, sizeof idx));
    CHECK_OK(r->ops->upload(r->ctx, padded, p16, sizeof p16));
    CHECK_OK(r->ops->gather(r->ctx, &src, didx, B, r->x, r->y, r->tgt));
    CHECK_OK(r->ops->bf16->gather_bf16(r->ctx, &src, didx, B, r->ext.mixed->x16, r->y, r->tgt));
    CHECK_OK(r->ops->bf16->to_bf16(r->ctx, r->x, padded, B, F, LD));
    CHECK_OK(r->ops->download(r->ctx, x, r->x, sizeof x));
    CHECK_OK(r->ops->download(r->ctx, g16, r->ext.mixed->x16, sizeof g16));
    CHECK_OK(r->ops->download(r->ctx, p16, padded, sizeof p16));
    size_t bad_g = 0, bad_p = 0, bad_pad = 0, nonzero = 0;
    for (int b = 0; b < B; b++)
        for (int f = 0; f < LD; f++) {
            if (f >= F) {
                bad_pad += p16[b * LD + f] != 0xffff;
                continue;
            }
            const uint16_t want = bf16_rne(x[b * F + f]);
            bad_g += g16[b * F + f] != want;
            bad_p += p16[b * LD + f] != want;
            nonzero += x[b * F + f] != 0.0f;
        }
    r->ops->release(r->ctx, didx);
    r->ops->release(r->ctx, padded);
    op_fixture_close(&fx);
    CHECK(nonzero > 1000, "only %zu nonzero pixels gathered", nonzero);
    CHECK(bad_g == 0, "gather_bf16: %zu of %d values are not bf16(x)", bad_g, B * F);
    CHECK(bad_p == 0, "to_bf16 with rows %d apart: %zu of %d values are not bf16(x)", LD, bad_p,
          B * F);
    CHECK(bad_pad == 0, "to_bf16 wrote %zu cells past the rows' ends", bad_pad);
    return TEST_PASS;
}

/* Fresh random bf16 bits (xorshift64 state *s): a finite value of sign, exponent
 * 2^(lo-127)..2^(hi-127) and 7 random mantissa bits; with zeros (+0 and -0) one in
 * 16 when zeros is set. */
static uint16_t random_bf16(uint64_t *s, int lo, int hi, int zeros)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    const uint64_t r = *s >> 11;
    const uint16_t sign = (uint16_t)((r & 1u) << 15);
    if (zeros && ((r >> 1) & 15u) == 0)
        return sign;
    const unsigned e = (unsigned)lo + (unsigned)((r >> 5) % (uint64_t)(hi - lo + 1));
    return (uint16_t)(sign | (e << 7) | ((r >> 20) & 0x7fu));
}

static float bf16_to_float(uint16_t h)
{
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The f' step of the bf16 backward (activation.cu: the 16-byte kernel where the
 * buffers are aligned) gives the host's bits: dense_backward_bf16 with W16 = the
 * identity [in, in] makes dx16 = bf16(dz16 I) = dz16 exactly (one nonzero product
 * per sum, dz never 0), then dx16 = bf16(dz * f'(x16)) with device_math.cuh's
 * formula (relu [x > 0], sigmoid x (1 - x), tanh 1 - x x, each product and
 * difference rounded to fp32, the product with dz last; identity dz), compared
 * bit for bit on fresh random bf16 x16 (with +0 and -0) and dz16, for lengths
 * batch * in of 7 (no whole 8-element word: the tail only), 15 (one word and a
 * tail of 7), 259 (32 words, an odd tail of 3) and 13056 (whole words only).
 * Then again with dx_db (dense.cu's act_bias_grad: f' and the sums in one pass):
 * the same dx16 bits, and dx_db within 1e-5 sum |dx| of the double sum of the
 * bf16 values (fp32 sums in a fixed order of at most ~50 additions in a row), on
 * these and 130 x 13 (5 chunks of rows, the one-value path) and 1000 x 264 (two
 * column strips, the second partial; 32 chunks; 16-byte words). */
TEST("cublaslt_bf16_act_backward_bits_match_host", bf16_act_backward_bits)
{
    op_fixture fx;
    const test_result opened = op_fixture_open(&fx, 0, why, why_size);
    if (opened != TEST_PASS) return opened;
    ffnn_run *r = &fx.t->run;
    const struct { size_t batch, in; } shapes[] = {{1, 7},    {3, 5},     {7, 37},
                                                   {96, 136}, {130, 13}, {1000, 264}};
    const ffnn_activation acts[] = {FFNN_ACT_IDENTITY, FFNN_ACT_RELU, FFNN_ACT_SIGMOID,
                                    FFNN_ACT_TANH};
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    size_t checked = 0;
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
        for (int a = 0; a < 4; a++) {
            const size_t batch = shapes[sh].batch, in = shapes[sh].in, n = batch * in;
            uint16_t *x16 = malloc(n * 2), *dz16 = malloc(n * 2), *dx16 = malloc(n * 2);
            uint16_t *dx16b = malloc(n * 2), *eye = calloc(in * in, 2);
            float *dxdb = malloc(in * sizeof(float));
            CHECK(x16 && dz16 && dx16 && dx16b && eye && dxdb, "out of memory");
            for (size_t i = 0; i < in; i++)
                eye[i * in + i] = 0x3f80; /* 1.0 */
            for (size_t i = 0; i < n; i++) {
                x16[i] = random_bf16(&seed, 110, 128, 1); /* |x| < 4, some +-0 */
                dz16[i] = random_bf16(&seed, 100, 135, 0);
            }
            void *d_x = NULL, *d_w = NULL, *d_dz = NULL, *d_dx = NULL, *d_dw = NULL;
            void *d_xdb = NULL;
            CHECK_OK(r->ops->alloc(r->ctx, in * sizeof(float), &d_xdb));
            CHECK_OK(r->ops->alloc(r->ctx, n * 2, &d_x));
            CHECK_OK(r->ops->alloc(r->ctx, in * in * 2, &d_w));
            CHECK_OK(r->ops->alloc(r->ctx, n * 2, &d_dz));
            CHECK_OK(r->ops->alloc(r->ctx, n * 2, &d_dx));
            CHECK_OK(r->ops->alloc(r->ctx, in * in * sizeof(float), &d_dw));
            CHECK_OK(r->ops->upload(r->ctx, d_x, x16, n * 2));
            CHECK_OK(r->ops->upload(r->ctx, d_w, eye, in * in * 2));
            CHECK_OK(r->ops->upload(r->ctx, d_dz, dz16, n * 2));
            CHECK_OK(r->ops->bf16->dense_backward_bf16(r->ctx, d_x, d_w, d_dz, in, d_dx, d_dw, NULL,
                                                 NULL, batch, in, in, acts[a], 0));
            CHECK_OK(r->ops->download(r->ctx, dx16, d_dx, n * 2));
            CHECK_OK(r->ops->bf16->dense_backward_bf16(r->ctx, d_x, d_w, d_dz, in, d_dx, d_dw, NULL,
                                                 (float *)d_xdb, batch, in, in, acts[a], 0));
            CHECK_OK(r->ops->download(r->ctx, dx16b, d_dx, n * 2));
            CHECK_OK(r->ops->download(r->ctx, dxdb, d_xdb, in * sizeof(float)));
            size_t bad_db = 0, first_db = in;
            for (size_t c = 0; c < in; c++) {
                double sum = 0.0, asum = 0.0;
                for (size_t b = 0; b < batch; b++) {
                    sum += bf16_to_float(dx16b[b * in + c]);
                    asum += fabs(bf16_to_float(dx16b[b * in + c]));
                }
                if (!(fabs(dxdb[c] - sum) <= 1e-5 * asum + 1e-30) && bad_db++ == 0) first_db = c;
            }
            CHECK(bad_db == 0 && memcmp(dx16, dx16b, n * 2) == 0,
                  "act %d, batch %zu x in %zu with dx_db: %zu sums off (first column %zu), "
                  "dx16 %s", (int)acts[a], batch, in, bad_db, first_db,
                  memcmp(dx16, dx16b, n * 2) == 0 ? "the same" : "not the same bits");
            size_t bad = 0, first = n;
            for (size_t i = 0; i < n; i++) {
                const float v = bf16_to_float(x16[i]), g = bf16_to_float(dz16[i]);
                float d = 1.0f;
                if (acts[a] == FFNN_ACT_RELU) {
                    d = v > 0.0f ? 1.0f : 0.0f;
                } else if (acts[a] == FFNN_ACT_SIGMOID) {
                    const float one_minus = 1.0f - v;
                    d = v * one_minus;
                } else if (acts[a] == FFNN_ACT_TANH) {
                    const float sq = v * v;
                    d = 1.0f - sq;
                }
                const float want = g * d;
                if (dx16[i] != bf16_rne(want)) {
                    bad++;
                    if (first == n) first = i;
                }
            }
            const unsigned got = first < n ? dx16[first] : 0u;
            r->ops->release(r->ctx, d_x);
            r->ops->release(r->ctx, d_w);
            r->ops->release(r->ctx, d_dz);
            r->ops->release(r->ctx, d_dx);
            r->ops->release(r->ctx, d_dw);
            r->ops->release(r->ctx, d_xdb);
            free(x16), free(dz16), free(dx16), free(dx16b), free(eye), free(dxdb);
            CHECK(bad == 0, "act %d, batch %zu x in %zu: %zu of %zu values differ from the "
                  "host's bits (first at %zu: got 0x%04x)", (int)acts[a], batch, in, bad, n,
                  first, got);
            checked += n;
        }
    op_fixture_close(&fx);
    CHECK(checked > 50000, "only %zu values checked", checked);
    return TEST_PASS;
}

/* One run of bf16_dw_beside: layer 1 (1024 -> 1024 at batch 1024: dx16, relu's
 * f', dx_db, dW1 - on the second stream when dw_side) and layer 0 (784 -> 1024: dW0
 * from layer 1's dx16) as the step queues them, then side_join; into out: dx16
 * (as 2-byte values packed in floats' room), dx_db, dW1, dW0. */
enum { BB_B = 1024, BB_H = 1024, BB_IN = 784 };
static int bf16_beside_run(ffnn_run *r, void *const *d, int dw_side, float *out)
{
    const size_t nx = (size_t)BB_B * BB_H, nw1 = (size_t)BB_H * BB_H;
    /* d: x1, W1, dz1, dx1, dxdb, dW1, x0, dW0 */
    return r->ops->bf16->dense_backward_bf16(r->ctx, d[0], d[1], d[2], BB_H, d[3], d[5], NULL, d[4],
                                       BB_B, BB_H, BB_H, FFNN_ACT_RELU, dw_side) == FFNN_OK &&
           r->ops->bf16->dense_backward_bf16(r->ctx, d[6], NULL, d[3], BB_H, NULL, d[7], NULL, NULL,
                                       BB_B, BB_IN, BB_H, FFNN_ACT_IDENTITY, 0) == FFNN_OK &&
           r->ops->side->side_join(r->ctx) == FFNN_OK &&
           r->ops->download(r->ctx, out, d[3], nx * 2) == FFNN_OK &&
           r->ops->download(r->ctx, out + nx, d[4], BB_H * 4) == FFNN_OK &&
           r->ops->download(r->ctx, out + nx + BB_H, d[5], nw1 * 4) == FFNN_OK &&
           r->ops->download(r->ctx, out + nx + BB_H + nw1, d[7], (size_t)BB_H * BB_IN * 4) ==
               FFNN_OK;
}

/* backend.h dense_backward_bf16's dw_side: the wide net's last two layers'
 * backward in order and with layer 1's weight gradient beside (on an H200
 * gemm_plan.h ffnn_lt_dw_beside takes the 1024 x 1024 one: it runs concurrently
 * with f' and layer 0's, each matmul with its own cuBLASLt workspace) give the same
 * bits: dx16, dx_db, dW1, dW0. Fresh random bf16 inputs (x16 with +-0). */
TEST("cublaslt_bf16_dw_beside_same_bits", bf16_dw_beside)
{
    op_fixture fx;
    const test_result opened = op_fixture_open(&fx, 1, why, why_size);
    if (opened != TEST_PASS) return opened;
    ffnn_run *r = &fx.t->run;
    const size_t n1 = (size_t)BB_B * BB_H, n0 = (size_t)BB_B * BB_IN, nw1 = (size_t)BB_H * BB_H;
    const size_t nw0 = (size_t)BB_H * BB_IN, nout = n1 + BB_H + nw1 + nw0;
    const size_t bytes[8] = {n1 * 2, nw1 * 2, n1 * 2, n1 * 2, BB_H * 4, nw1 * 4, n0 * 2, nw0 * 4};
    uint16_t *host[8] = {NULL};
    void *d[8] = {NULL};
    float *in_order = malloc(nout * 4), *beside = malloc(nout * 4);
    CHECK(in_order && beside, "out of memory");
    uint64_t seed = 0x5eedbe51de5ull;
    for (int k = 0; k < 8; k++) {
        CHECK_OK(r->ops->alloc(r->ctx, bytes[k], &d[k]));
        if (k == 0 || k == 1 || k == 2 || k == 6) { /* the inputs: x1, W1, dz1, x0 */
            host[k] = malloc(bytes[k]);
            CHECK(host[k] != NULL, "out of memory");
            for (size_t i = 0; i < bytes[k] / 2; i++)
                host[k][i] = k == 1 ? random_bf16(&seed, 115, 121, 0)   /* |W| < 2^-6 */
                                    : random_bf16(&seed, 118, 127, k != 2);
            if (k == 0) /* relu outputs: >= 0 */
                for (size_t i = 0; i < bytes[k] / 2; i++) host[k][i] &= 0x7fffu;
            CHECK_OK(r->ops->upload(r->ctx, d[k], host[k], bytes[k]));
        }
    }
    CHECK(bf16_beside_run(r, d, 0, in_order) && bf16_beside_run(r, d, 1, beside),
          "the ops: %s", ffnn_last_error());
    const char *names[4] = {"dx16", "dx_db", "dW1", "dW0"};
    const size_t off[5] = {0, n1, n1 + BB_H, n1 + BB_H + nw1, nout};
    for (int k = 0; k < 4; k++) {
        const size_t len = k == 0 ? n1 / 2 : off[k + 1] - off[k]; /* dx16: 2-byte values */
        CHECK(memcmp(in_order + off[k], beside + off[k], len * 4) == 0,
              "%s: beside is not in order's bits", names[k]);
    }
    for (int k = 0; k < 8; k++) {
        r->ops->release(r->ctx, d[k]);
        free(host[k]);
    }
    free(in_order), free(beside);
    op_fixture_close(&fx);
    return TEST_PASS;
}
