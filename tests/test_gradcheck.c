/* test_gradcheck.c - the CPU reference's gradients against central differences,
 * for every activation, every loss, with and without bias.
 *
 * Method: loss L(theta) is the batch mean computed by the trainer (float32 rows,
 * summed in double). For each parameter, fd = (L(theta+h) - L(theta-h)) / 2h with
 * h = 1e-2: the float32 forward pass rounds L to ~5e-7, so fd carries ~5e-5 of
 * rounding noise, and the truncation error h^2/6 L''' is ~2e-5 for these smooth
 * nets; the tolerance is |fd - g| <= 1e-4 + 1e-3 |g| (a 1% error in any gradient
 * entry fails it).
 * Inputs avoid ReLU kinks: a parameter whose perturbation flips a ReLU is
 * skipped only when L is not smooth there, detected by the one-sided difference
 * disagreeing with the other one; a parameter that fails without that sign is
 * checked again at h/4 (a kink then rarely lies inside the step; the tolerance's
 * absolute part 4e-4 for the 4x rounding noise); at most 5% of parameters may be
 * skipped. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_numeric.h"
#include "test_fixtures.h"
#include "data/dataset.h"
#include "ffnn.h"
#include "train/train_internal.h"

enum { GC_SAMPLES = 8, GC_FEATURES = 6 };

static uint64_t gc_state = 0x1234567ull;
static uint32_t gc_rand(void)
{
    gc_state ^= gc_state << 13;
    gc_state ^= gc_state >> 7;
    gc_state ^= gc_state << 17;
    return (uint32_t)(gc_state >> 11);
}

/* A random data set of GC_SAMPLES samples with labels < classes. */
static ffnn_dataset *random_dataset(int classes)
{
    ffnn_dataset *ds = NULL;
    if (ffnn_dataset_alloc(GC_SAMPLES, 1, GC_FEATURES, &ds) != FFNN_OK)
        return NULL;
    for (size_t i = 0; i < GC_SAMPLES * GC_FEATURES; i++)
        ds->images[i] = (uint8_t)(gc_rand() & 0xFF);
    for (size_t i = 0; i < GC_SAMPLES; i++)
        ds->labels[i] = (uint8_t)(i % (size_t)classes); /* every class present */
    ds->classes = classes;
    return ds;
}

/* Check one network + loss with the dropout masks of optimizer step dstep (0: none),
 * with per-sample weights (the loss their weighted mean) when weighted; returns
 * TEST_PASS or TEST_FAIL. */
static test_result check_gradients_weighted(const char *arch, ffnn_loss loss, int classes,
                                            uint64_t dstep, int weighted)
{
    ffnn_dataset *ds = random_dataset(classes);
    CHECK(ds != NULL, "dataset");
    if (weighted) { /* 0.25 .. 3.25, and one sample of weight 0 */
        float w[GC_SAMPLES];
        for (int i = 0; i < GC_SAMPLES; i++)
            w[i] = i == 1 ? 0.0f : 0.25f + 0.5f * (float)(i % 7);
        CHECK_OK(ffnn_dataset_set_sample_weights(ds, w));
    }
    test_gc g;
    CHECK_OK(test_gc_create(ds, arch, 7, 3.0f, loss, &g));
    g.dropout = 1;
    g.dstep = dstep;
    const float *grad = g.grad;
    const size_t n = g.n;
    double L0, Lp, Lm;
    CHECK_OK(ffnn_trainer_gradient_dropout(g.t, g.rows, GC_SAMPLES, dstep, &L0, g.grad));
    if (dstep) { /* the masks act: the loss differs from the one without dropout */
        double plain;
        CHECK_OK(ffnn_trainer_gradient(g.t, g.rows, GC_SAMPLES, &plain, NULL));
        CHECK(plain != L0, "%s: dropout at step %llu left the loss %.9g", arch,
              (unsigned long long)dstep, L0);
    }
    const float h = 1e-2f;
    size_t kinks = 0, retried = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        const float saved = g.p[i];
        CHECK_OK(test_gc_loss_at(&g, i, saved + h, &Lp));
        CHECK_OK(test_gc_loss_at(&g, i, saved - h, &Lm));
        double fd = (Lp - Lm) / (2.0 * h);
        double fwd = (Lp - L0) / h, bwd = (L0 - Lm) / h;
        double err = fabs(fd - grad[i]);
        if (err > 1e-4 + 1e-3 * fabs(grad[i])) {
            /* again at h/4: a kink (relu, leaky_relu, elu with alpha != 1, hardswish's
             * corners) at a random distance lies inside the step 3 times in 4 less
             * often; the tolerance's absolute part 4e-4 for the 4x rounding noise */
            const float h4 = h / 4.0f;
            double Lp4, Lm4;
            CHECK_OK(test_gc_loss_at(&g, i, saved + h4, &Lp4));
            CHECK_OK(test_gc_loss_at(&g, i, saved - h4, &Lm4));
            const double fd4 = (Lp4 - Lm4) / (2.0 * h4);
            if (fabs(fd4 - grad[i]) <= 4e-4 + 1e-3 * fabs(grad[i])) {
                retried++;
                continue;
            }
            /* not smooth at theta (a ReLU kink inside [-h, h]): one-sided slopes differ */
            if (fabs(fwd - bwd) > 1e-2 + 0.1 * fabs(fd)) {
                kinks++;
                continue;
            }
            CHECK(0, "%s, loss %s: parameter %zu: analytic %.6g, central difference %.6g (h), "
                  "%.6g (h/4)", arch, ffnn_loss_name(loss), i, (double)grad[i], fd, fd4);
        }
        worst = err > worst ? err : worst;
    }
    CHECK(kinks * 20 <= n, "%s: %zu of %zu parameters at kinks (%zu more checked at h/4)",
          arch, kinks, n, retried);
    CHECK_OK(ffnn_trainer_upload_model(g.t));
    test_gc_free(&g);
    ffnn_dataset_free(ds);
    return TEST_PASS;
}

static test_result check_gradients_at(const char *arch, ffnn_loss loss, int classes,
                                      uint64_t dstep)
{
    return check_gradients_weighted(arch, loss, classes, dstep, 0);
}

static test_result check_gradients(const char *arch, ffnn_loss loss, int classes)
{
    return check_gradients_at(arch, loss, classes, 0);
}

/* Every hidden activation, with and without bias, for one loss and output layer. */
static test_result check_all_activations(ffnn_loss loss, const char *output, int classes)
{
    const char *acts[] = {"relu", "sigmoid", "tanh", "identity"};
    const char *bias[] = {"", ":nobias"};
    for (int a = 0; a < 4; a++) {
        for (int b = 0; b < 2; b++) {
            char arch[96];
            snprintf(arch, sizeof arch, "%d-5%s%s-4%s%s-%s%s", GC_FEATURES, acts[a], bias[b],
                     acts[(a + 1) % 4], bias[b], output, bias[b]);
            test_result r = check_gradients(arch, loss, classes);
            if (r != TEST_PASS)
                return r;
        }
    }
    return TEST_PASS;
}

TEST("gradcheck_cpu_softmax_ce", gc_softmax_ce)
{
    return check_all_activations(FFNN_LOSS_SOFTMAX_CE, "3", 3);
}

TEST("gradcheck_cpu_sigmoid_bce_1_output", gc_sigmoid_bce_one_output)
{
    return check_all_activations(FFNN_LOSS_SIGMOID_BCE, "1", 2);
}

TEST("gradcheck_cpu_sigmoid_bce_3_outputs", gc_sigmoid_bce_multi_output)
{
    return check_all_activations(FFNN_LOSS_SIGMOID_BCE, "3", 3);
}

TEST("gradcheck_cpu_mse", gc_mse)
{
    test_result r = check_all_activations(FFNN_LOSS_MSE, "3", 3);
    if (r != TEST_PASS)
        return r;
    /* mse also trains through an output activation */
    const char *outs[] = {"3sigmoid", "3tanh", "3relu", "1sigmoid"};
    for (int i = 0; i < 4; i++) {
        char arch[64];
        snprintf(arch, sizeof arch, "%d-5tanh-%s", GC_FEATURES, outs[i]);
        if ((r = check_gradients(arch, FFNN_LOSS_MSE, i == 3 ? 2 : 3)) != TEST_PASS)
            return r;
    }
    return TEST_PASS;
}

/* Dropout after hidden layers: the gradient with the masks of a training step
 * fixed (the same key in every evaluation) against central differences; p = 0
 * (the op runs, keeps all) too. Smooth activations: with h = 1e-2 a ReLU net's
 * dropped-and-scaled units sit at kinks too often for the skip rule above. */
TEST("gradcheck_cpu_dropout", gc_dropout)
{
    const char *archs[] = {"6-5tanh:dropout0.5-4sigmoid:dropout0.3-3",
                           "6-7tanh:nobias:dropout0.25-3", "6-5sigmoid:dropout0.5-4tanh-3"};
    for (int a = 0; a < 3; a++)
        for (uint64_t step = 1; step <= 3; step += 2)
            CHECK_PASS(check_gradients_at(archs[a], FFNN_LOSS_SOFTMAX_CE, 3, step));
    return check_gradients("6-5tanh:dropout0-3", FFNN_LOSS_SOFTMAX_CE, 3);
}

/* leaky_relu, elu and softplus, each as a hidden layer (and elu, softplus as an
 * mse output). */
TEST("gradcheck_cpu_leaky_relu_elu_softplus", gc_new_activations)
{
    const char *archs[] = {"6-5elu-4softplus-3", "6-5softplus:nobias-4elu-3",
                           "6-5leaky_relu-4elu-3"};
    for (int a = 0; a < 3; a++)
        CHECK_PASS(check_gradients(archs[a], FFNN_LOSS_SOFTMAX_CE, 3));
    CHECK_PASS(check_gradients("6-5tanh-3elu", FFNN_LOSS_MSE, 3));
    return check_gradients("6-5tanh-3softplus", FFNN_LOSS_MSE, 3);
}

/* leaky_relu and elu with parameters other than the defaults, and the activations
 * whose backward reads the kept pre-activation z (gelu, gelu_tanh, silu, mish,
 * hardswish): hidden layers (dense, local1d, with dropout after one, without bias)
 * and mse outputs. */
TEST("gradcheck_cpu_gelu_silu_mish_hardswish_parameters", gc_z_activations)
{
    const char *archs[] = {"6-5leaky_relu0.2-4elu0.5-3", "6-5elu2.5:nobias-4leaky_relu0.3-3",
                           "6-5gelu-4gelu_tanh-3",       "6-5silu:nobias-4mish-3",
                           "6-5hardswish-4silu-3",       "6-local3samegelu-4mish-3",
                           "6-local3leaky_relu0.25-4elu0.5-3"};
    for (size_t a = 0; a < sizeof archs / sizeof archs[0]; a++)
        CHECK_PASS(check_gradients(archs[a], FFNN_LOSS_SOFTMAX_CE, 3));
    /* dropout after a layer whose z is kept: the masks of step 3 */
    if (check_gradients_at("6-5gelu:dropout0.5-4silu-3", FFNN_LOSS_SOFTMAX_CE, 3, 3) !=
        TEST_PASS)
        return TEST_FAIL;
    const char *outs[] = {"6-5tanh-3gelu", "6-5tanh-3gelu_tanh", "6-5tanh-3silu",
                          "6-5tanh-3mish", "6-5tanh-3hardswish", "6-5tanh-3elu0.5",
                          "6-5tanh-3leaky_relu0.2"};
    for (size_t o = 0; o < sizeof outs / sizeof outs[0]; o++)
        CHECK_PASS(check_gradients(outs[o], FFNN_LOSS_MSE, 3));
    return TEST_PASS;
}

/* Per-sample weights (docs/TRAINING.md "Weights"): the gradient of the weighted
 * mean sum w l / sum w for every loss, against central differences of it. */
TEST("gradcheck_cpu_sample_weights", gc_sample_weights)
{
    char arch[64];
    const struct { ffnn_loss loss; const char *out; int classes; } c[] = {
        {FFNN_LOSS_SOFTMAX_CE, "3", 3}, {FFNN_LOSS_SIGMOID_BCE, "1", 2},
        {FFNN_LOSS_SIGMOID_BCE, "3", 3}, {FFNN_LOSS_MSE, "3", 3}};
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        snprintf(arch, sizeof arch, "%d-5tanh-4sigmoid-%s", GC_FEATURES, c[k].out);
        test_result r = check_gradients_weighted(arch, c[k].loss, c[k].classes, 0, 1);
        if (r != TEST_PASS)
            return r;
    }
    return TEST_PASS;
}
