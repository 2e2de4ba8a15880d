/* test_data.c - suite "data": float features and float targets, the synthetic
 * data sets of the seeds (synth:points, synth:regression), class subsets.
 *
 *   - the generators are deterministic per seed and follow their documented
 *     definitions sample by sample (re-derived here from ffnn's RNG, src/core/rng.h);
 *   - ffnn_dataset_select_classes keeps the order and relabels a -> 0, b -> 1;
 *   - the float-target losses of the CPU reference have the gradients central
 *     differences give (the method and tolerances of tests/test_gradcheck.c);
 *   - training works: 2-30tanh-30tanh-1 (bce) on synth:points reaches >= 95% test
 *     accuracy; 32-256relu:nobias-1:nobias (mse) on synth:regression:2560 brings
 *     the test MSE below 20% of the test targets' variance (a linear fit leaves
 *     about a third, so the hidden layer must do its part);
 *   - on a GPU, the cuda trainer follows the cpu one on float data. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_fixtures.h"
#include "backend/cpu/cpu_ops.h"
#include "data/dataset.h"
#include "ffnn.h"
#include "core/rng.h"
#include "test_numeric.h"
#include "test_parity.h"
#include "train/train_internal.h"

/* ------------------------------------------------------------------ generators */

/* The check of one generated set: ds is set s (0 the training set, 1 the test set),
 * drawn from the rng stream stream. */
typedef test_result (*synth_set_check)(const ffnn_dataset *ds, int s, uint64_t stream);

/* The data sets of spec (seed 1): n_train and n_test samples, each set passing check. */
static test_result synth_sets_pass(const char *spec, size_t n_train, size_t n_test,
                                   synth_set_check check)
{
    ffnn_dataset *train = NULL, *test = NULL;
    CHECK_OK(ffnn_dataset_synthetic(spec, 1, &train, &test));
    CHECK(ffnn_dataset_count(train) == n_train && ffnn_dataset_count(test) == n_test,
          "counts %zu, %zu", ffnn_dataset_count(train), ffnn_dataset_count(test));
    const ffnn_dataset *sets[2] = {train, test};
    const uint64_t streams[2] = {FFNN_STREAM_SYNTH_TRAIN, FFNN_STREAM_SYNTH_TEST};
    for (int s = 0; s < 2; s++)
        CHECK_PASS(check(sets[s], s, streams[s]));
    TEST_FREE(train, test);
    return TEST_PASS;
}

/* synth:points, default size (points_definition: the counts): kinds, the quadrant
 * rule for every sample, and the exact values of the documented draw order (x0 = 2u -
 * 1, x1 = 2u - 1). */
static test_result points_set(const ffnn_dataset *ds, int s, uint64_t stream)
{
    CHECK(ffnn_dataset_features(ds) == 2 && ffnn_dataset_classes(ds) == 2 &&
              ffnn_dataset_target_width(ds) == 0 && ffnn_dataset_images(ds) == NULL &&
              ffnn_dataset_targets(ds) == NULL,
          "shape/kind of set %d", s);
    const float *x = ffnn_dataset_float_features(ds);
    const int32_t *y = ffnn_dataset_labels(ds);
    CHECK(x && y, "float features and labels expected");
    ffnn_rng r;
    ffnn_rng_seed(&r, 1, stream);
    size_t ones = 0, n = ffnn_dataset_count(ds);
    for (size_t i = 0; i < n; i++) {
        float x0 = 2.0f * ffnn_rng_uniform(&r) - 1.0f;
        float x1 = 2.0f * ffnn_rng_uniform(&r) - 1.0f;
        CHECK(x[2 * i] == x0 && x[2 * i + 1] == x1, "set %d sample %zu: (%g, %g) != (%g, %g)",
              s, i, (double)x[2 * i], (double)x[2 * i + 1], (double)x0, (double)x1);
        CHECK(x0 >= -1.0f && x0 < 1.0f && x1 >= -1.0f && x1 < 1.0f, "range");
        int quadrant_1_or_3 = (x0 > 0 && x1 > 0) || (x0 < 0 && x1 < 0);
        CHECK(y[i] == quadrant_1_or_3, "set %d sample %zu: (%g, %g) labelled %d", s, i,
              (double)x0, (double)x1, y[i]);
        ones += y[i];
    }
    CHECK(ones > n * 2 / 5 && ones < n * 3 / 5, "set %d: %zu of %zu labelled 1", s, ones, n);
    return TEST_PASS;
}

TEST("data_synth_points_definition", points_definition)
{
    return synth_sets_pass("synth:points", 2100, 420, points_set);
}

/* synth:regression:2560 (regression_definition: the counts): kinds, the features of
 * the documented draws, the targets equal to the documented function plus noise in
 * [-0.05, 0.05), exactly as documented (computed in double, rounded once). */
static test_result regression_set(const ffnn_dataset *ds, int s, uint64_t stream)
{
    CHECK(ffnn_dataset_features(ds) == 32 && ffnn_dataset_target_width(ds) == 1 &&
              ffnn_dataset_classes(ds) == 0 && ffnn_dataset_labels(ds) == NULL &&
              ffnn_dataset_images(ds) == NULL,
          "shape/kind of set %d", s);
    const float *x = ffnn_dataset_float_features(ds), *y = ffnn_dataset_targets(ds);
    CHECK(x && y, "float features and targets expected");
    ffnn_rng r;
    ffnn_rng_seed(&r, 1, stream);
    double noise_min = 1, noise_max = -1, sum = 0, sum2 = 0;
    size_t n = ffnn_dataset_count(ds);
    for (size_t i = 0; i < n; i++) {
        const float *xi = x + 32 * i;
        double f = 0.0;
        for (int j = 0; j < 32; j++) {
            float want = 2.0f * ffnn_rng_uniform(&r) - 1.0f;
            CHECK(xi[j] == want, "set %d sample %zu feature %d", s, i, j);
            f += (j % 2 == 0 ? 0.25 : -0.25) * (double)xi[j];
        }
        for (int k = 0; k < 16; k++) {
            double a = xi[2 * k], b = xi[2 * k + 1];
            f += (k % 2 == 0 ? 0.5 : -0.5) * sqrt(a * a + b * b);
        }
        double e = ffnn_rng_uniform(&r);
        CHECK(f == ffnn_synth_regression_function(xi), "the library's function differs");
        CHECK(y[i] == (float)(f + 0.1 * (e - 0.5)), "set %d sample %zu: target %.9g", s, i,
              (double)y[i]);
        double noise = (double)y[i] - f; /* the noise, within float rounding of y */
        CHECK(noise >= -0.05 - 1e-6 && noise < 0.05 + 1e-6, "set %d sample %zu: noise %g",
              s, i, noise);
        noise_min = noise < noise_min ? noise : noise_min;
        noise_max = noise > noise_max ? noise : noise_max;
        sum += y[i];
        sum2 += (double)y[i] * y[i];
    }
    CHECK(noise_min < -0.045 && noise_max > 0.045, "noise spans [%g, %g]", noise_min,
          noise_max);
    double var = sum2 / (double)n - (sum / (double)n) * (sum / (double)n);
    CHECK(var > 0.7 && var < 1.3, "set %d: target variance %g (about 0.97 expected)", s, var);
    return TEST_PASS;
}

TEST("data_synth_regression_definition", regression_definition)
{
    return synth_sets_pass("synth:regression:2560", 2560, 512, regression_set);
}

/* 1 when two data sets hold the same bytes (float features, labels/targets). */
static int same_data(const ffnn_dataset *a, const ffnn_dataset *b)
{
    size_t n = ffnn_dataset_count(a), f = ffnn_dataset_features(a);
    size_t w = ffnn_dataset_target_width(a);
    if (n != ffnn_dataset_count(b) || f != ffnn_dataset_features(b) ||
        w != ffnn_dataset_target_width(b))
        return 0;
    if (memcmp(ffnn_dataset_float_features(a), ffnn_dataset_float_features(b),
               n * f * sizeof(float)) != 0)
        return 0;
    if (w)
        return memcmp(ffnn_dataset_targets(a), ffnn_dataset_targets(b), n * w * sizeof(float)) ==
               0;
    return memcmp(ffnn_dataset_labels(a), ffnn_dataset_labels(b), n) == 0;
}

/* Same spec and seed: the same bytes; another seed: other samples; a SEED field
 * in the spec replaces the seed argument; NULL outputs skip a set. */
TEST("data_synth_deterministic_per_seed", synthetic_deterministic)
{
    const char *specs[] = {"synth:points:500", "synth:regression:256"};
    for (int k = 0; k < 2; k++) {
        ffnn_dataset *a = NULL, *at = NULL, *b = NULL, *bt = NULL, *c = NULL, *d = NULL;
        char with_seed[64];
        CHECK_OK(ffnn_dataset_synthetic(specs[k], 7, &a, &at));
        CHECK_OK(ffnn_dataset_synthetic(specs[k], 7, &b, &bt));
        CHECK(same_data(a, b) && same_data(at, bt), "%s: two runs differ", specs[k]);
        CHECK(!same_data(a, at) || ffnn_dataset_count(a) != ffnn_dataset_count(at), "train = test");
        CHECK_OK(ffnn_dataset_synthetic(specs[k], 8, &c, NULL));
        CHECK(!same_data(a, c), "%s: seeds 7 and 8 give the same data", specs[k]);
        snprintf(with_seed, sizeof with_seed, "%s:7", specs[k]);
        CHECK_OK(ffnn_dataset_synthetic(with_seed, 123, &d, NULL));
        CHECK(same_data(a, d), "%s: the spec's seed 7 is not used", with_seed);
        CHECK(ffnn_dataset_count(at) == (ffnn_dataset_count(a) + 4) / 5, "test count %zu",
              ffnn_dataset_count(at));
        TEST_FREE(a, at, b, bt, c, d);
    }
    ffnn_dataset *t = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:regression", 1, NULL, &t));
    CHECK(ffnn_dataset_count(t) == 512, "default regression size: test %zu",
          ffnn_dataset_count(t));
    ffnn_dataset_free(t);
    return TEST_PASS;
}

/* Malformed specs fail with FFNN_ERR_PARSE and say what was expected. */
TEST("data_synth_bad_specs", synthetic_bad_specs)
{
    struct { const char *spec; const char *expect; } bad[] = {
        {"points", "expected synth:points"},
        {"synth:", "unknown generator ''"},
        {"synth:spiral", "unknown generator 'spiral'"},
        {"synth:pointsx", "unknown generator 'pointsx'"},
        {"synth:points:", "column 14: expected a sample count N"},
        {"synth:points:0", "found '0'"},
        {"synth:points:-5", "found '-5'"},
        {"synth:points:12x", "found '12x'"},
        {"synth:regression:100000001", "in [1, 100000000]"},
        {"synth:points:10:", "column 17: expected a seed"},
        {"synth:points:10:abc", "found 'abc'"},
        {"synth:points:10:5:9", "found '5:9'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ffnn_dataset *tr = NULL, *te = NULL;
        ffnn_status st = ffnn_dataset_synthetic(bad[i].spec, 1, &tr, &te);
        CHECK(st == FFNN_ERR_PARSE && tr == NULL && te == NULL, "'%s': status %d", bad[i].spec,
              (int)st);
        CHECK(strstr(ffnn_last_error(), bad[i].expect), "'%s': '%s' lacks '%s'", bad[i].spec,
              ffnn_last_error(), bad[i].expect);
    }
    return TEST_PASS;
}

/* ------------------------------------------------------------------ data sets */

/* select_classes on uint8 and float data: order kept, a -> 0, b -> 1; errors. */
TEST("data_select_classes", select_classes)
{
    ffnn_dataset *ds = NULL, *sel = NULL;
    CHECK_OK(ffnn_dataset_alloc(10, 1, 3, &ds));
    for (int i = 0; i < 10; i++) {
        ds->labels[i] = (uint8_t)(i % 5);
        for (int f = 0; f < 3; f++)
            ds->images[3 * i + f] = (uint8_t)(10 * i + f);
    }
    ds->classes = 5;
    CHECK_OK(ffnn_dataset_select_classes(ds, 3, 1, &sel)); /* rows 1, 3, 6, 8 */
    CHECK(ffnn_dataset_count(sel) == 4 && ffnn_dataset_classes(sel) == 2 &&
              ffnn_dataset_features(sel) == 3,
          "count %zu classes %d", ffnn_dataset_count(sel), ffnn_dataset_classes(sel));
    const int32_t want_labels[4] = {1, 0, 1, 0};
    const uint8_t rows[4] = {1, 3, 6, 8};
    CHECK(memcmp(ffnn_dataset_labels(sel), want_labels, sizeof want_labels) == 0, "labels");
    for (int k = 0; k < 4; k++)
        CHECK(ffnn_dataset_images(sel)[3 * k + 2] == 10 * rows[k] + 2, "row %d", k);
    ffnn_dataset_free(sel);

    /* float features */
    float x[6 * 2];
    int32_t y[6] = {7, 2, 7, 7, 9, 2};
    for (int i = 0; i < 12; i++)
        x[i] = 0.5f * (float)i - 1.0f;
    ffnn_dataset *fl = NULL;
    CHECK_OK(ffnn_dataset_from_arrays(6, 2, x, y, 0, NULL, &fl));
    CHECK(ffnn_dataset_classes(fl) == 10 && ffnn_dataset_float_features(fl) != NULL, "float");
    CHECK_OK(ffnn_dataset_select_classes(fl, 2, 7, &sel)); /* rows 0, 1, 2, 3, 5 */
    CHECK(ffnn_dataset_count(sel) == 5, "count %zu", ffnn_dataset_count(sel));
    CHECK(ffnn_dataset_float_features(sel)[2 * 4 + 1] == x[2 * 5 + 1], "row 5's features");
    const int32_t want2[5] = {1, 0, 1, 1, 0};
    CHECK(memcmp(ffnn_dataset_labels(sel), want2, sizeof want2) == 0, "float labels");
    ffnn_dataset_free(sel);

    /* errors */
    struct { int a, b; const char *expect; } bad[] = {
        {1, 1, "two different labels"}, {-1, 2, "found -1"}, {3, -2, "found 3 and -2"},
        {5, 6, "no sample"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sel = NULL;
        CHECK(ffnn_dataset_select_classes(ds, bad[i].a, bad[i].b, &sel) ==
                  FFNN_ERR_INVALID_ARGUMENT && sel == NULL, "case %zu accepted", i);
        CHECK(strstr(ffnn_last_error(), bad[i].expect), "'%s' lacks '%s'", ffnn_last_error(),
              bad[i].expect);
    }
    ffnn_dataset *reg = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:regression:10", 1, &reg, NULL));
    CHECK(ffnn_dataset_select_classes(reg, 0, 1, &sel) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "float targets"), "float targets accepted: %s",
          ffnn_last_error());
    TEST_FREE(reg, fl, ds);
    return TEST_PASS;
}

/* MNIST-style 0/1 subset (seed 004) of Fashion-MNIST's test set: 1000 + 1000. */
TEST("data_select_classes_idx_0_1", select_classes_idx)
{
    ffnn_dataset *test = NULL, *sel = NULL;
    CHECK_FASHION(ffnn_dataset_load_idx_dir(TEST_FASHION_DIR, NULL, &test));
    CHECK_OK(ffnn_dataset_select_classes(test, 0, 1, &sel));
    CHECK(ffnn_dataset_count(sel) == 2000 && ffnn_dataset_features(sel) == 784 &&
              ffnn_dataset_images(sel) != NULL, "count %zu", ffnn_dataset_count(sel));
    size_t ones = 0, k = 0;
    for (size_t i = 0; i < ffnn_dataset_count(sel); i++)
        ones += ffnn_dataset_labels(sel)[i];
    CHECK(ones == 1000, "%zu ones", ones);
    for (size_t i = 0; i < ffnn_dataset_count(test); i++) { /* the same images, in order */
        uint8_t l = ffnn_dataset_labels(test)[i];
        if (l > 1)
            continue;
        CHECK(memcmp(ffnn_dataset_images(test) + i * 784, ffnn_dataset_images(sel) + k * 784,
                     784) == 0 && ffnn_dataset_labels(sel)[k] == l, "sample %zu", i);
        k++;
    }
    TEST_FREE(sel, test);
    return TEST_PASS;
}

/* from_arrays with float targets; slices keep the kinds; non-finite values and
 * missing arrays are refused. */
TEST("data_float_arrays_and_slices", float_arrays_and_slices)
{
    float x[4 * 3], t[4 * 2];
    for (int i = 0; i < 12; i++)
        x[i] = (float)i * 0.25f;
    for (int i = 0; i < 8; i++)
        t[i] = (float)i - 3.0f;
    ffnn_dataset *ds = NULL, *s = NULL;
    CHECK_OK(ffnn_dataset_from_arrays(4, 3, x, NULL, 2, t, &ds));
    CHECK(ffnn_dataset_target_width(ds) == 2 && ffnn_dataset_classes(ds) == 0 &&
              ffnn_dataset_labels(ds) == NULL, "kinds");
    CHECK_OK(ffnn_dataset_slice(ds, 1, 2, &s));
    CHECK(ffnn_dataset_count(s) == 2 && ffnn_dataset_target_width(s) == 2 &&
              memcmp(ffnn_dataset_float_features(s), x + 3, 6 * sizeof(float)) == 0 &&
              memcmp(ffnn_dataset_targets(s), t + 2, 4 * sizeof(float)) == 0,
          "slice");
    ffnn_dataset_free(s);
    ffnn_dataset *bad = NULL;
    x[7] = NAN;
    CHECK(ffnn_dataset_from_arrays(4, 3, x, NULL, 2, t, &bad) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "feature 1 of sample 2"), "NaN: %s", ffnn_last_error());
    x[7] = 0;
    t[5] = INFINITY;
    CHECK(ffnn_dataset_from_arrays(4, 3, x, NULL, 2, t, &bad) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "target 1 of sample 2"), "Inf: %s", ffnn_last_error());
    CHECK(ffnn_dataset_from_arrays(4, 3, x, NULL, 0, NULL, &bad) == FFNN_ERR_INVALID_ARGUMENT,
          "no labels accepted");
    CHECK(ffnn_dataset_from_arrays(0, 3, x, NULL, 2, t, &bad) == FFNN_ERR_INVALID_ARGUMENT,
          "0 samples accepted");
    CHECK(bad == NULL, "output set on error");
    ffnn_dataset_free(ds);
    return TEST_PASS;
}

/* ------------------------------------------------------------------ losses */

/* Float targets equal to the label-derived ones give the same loss and gradient
 * bits as the labels (width 1: 0/1 values; width 3: one-hot), and the documented
 * row_correct rule (every output on its target's side). */
TEST("data_float_targets_match_labels", float_targets_match_labels)
{
    enum { B = 6 };
    const float out1[B] = {-2.0f, 0.3f, 0.0f, 0.7f, 5.0f, -0.1f};
    const int32_t y1[B] = {0, 1, 1, 0, 1, 0};
    float t1[B], out3[B * 3], t3[B * 3];
    int32_t y3[B];
    for (int b = 0; b < B; b++) {
        t1[b] = (float)y1[b];
        y3[b] = b % 3;
        for (int j = 0; j < 3; j++) {
            out3[3 * b + j] = 0.37f * (float)(b - j) - 0.2f * (float)j;
            t3[3 * b + j] = j == y3[b] ? 1.0f : 0.0f;
        }
    }
    const ffnn_loss losses[2] = {FFNN_LOSS_SIGMOID_BCE, FFNN_LOSS_MSE};
    for (int l = 0; l < 2; l++) {
        for (int w = 1; w <= 3; w += 2) {
            const float *out = w == 1 ? out1 : out3, *t = w == 1 ? t1 : t3;
            const int32_t *y = w == 1 ? y1 : y3;
            float dl[B * 3], df[B * 3], rl[B], rf[B];
            uint8_t cl[B], cf[B];
            ffnn_cpu_loss(losses[l], out, y, NULL, B, (size_t)w, dl, rl, cl);
            ffnn_cpu_loss(losses[l], out, NULL, t, B, (size_t)w, df, rf, cf);
            CHECK(memcmp(dl, df, sizeof(float) * B * (size_t)w) == 0 &&
                      memcmp(rl, rf, sizeof rl) == 0,
                  "%s width %d: float targets differ from labels", ffnn_loss_name(losses[l]), w);
            float threshold = losses[l] == FFNN_LOSS_MSE ? 0.5f : 0.0f;
            for (int b = 0; b < B; b++) {
                int all = 1;
                for (int j = 0; j < w; j++)
                    all &= (out[b * w + j] > threshold) == (t[b * w + j] > 0.5f);
                CHECK(cf[b] == all, "%s width %d row %d: correct %d", ffnn_loss_name(losses[l]),
                      w, b, cf[b]);
                if (w == 1)
                    CHECK(cf[b] == cl[b], "width 1 row %d: the label rule differs", b);
            }
        }
    }
    return TEST_PASS;
}

/* Central differences (the method of tests/test_gradcheck.c: h = 1e-2, tolerance
 * 1e-4 + 1e-3 |g|, ReLU kinks detected by one-sided slopes, at most 5% skipped)
 * for a network trained on float features and float targets. */
static test_result gradcheck_float(const char *arch, ffnn_loss loss, size_t width)
{
    enum { S = 8, F = 6 };
    float x[S * F], t[S * 3];
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < S * F; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(state >> 40) / 16777216.0 * 4.0 - 2.0);
    }
    for (size_t i = 0; i < S * width; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(state >> 40) / 16777216.0;
        t[i] = (float)(loss == FFNN_LOSS_SIGMOID_BCE ? u : 3.0 * u - 1.5); /* bce: [0, 1] */
    }
    ffnn_dataset *ds = NULL;
    CHECK_OK(ffnn_dataset_from_arrays(S, F, x, NULL, width, t, &ds));
    test_gc g;
    CHECK_OK(test_gc_create(ds, arch, 5, 2.0f, loss, &g));
    const float *grad = g.grad;
    const size_t n = g.n;
    double L0, Lp, Lm;
    CHECK_OK(ffnn_trainer_gradient(g.t, g.rows, S, &L0, g.grad));
    const float h = 1e-2f;
    size_t kinks = 0;
    for (size_t i = 0; i < n; i++) {
        const float saved = g.p[i];
        CHECK_OK(test_gc_loss_at(&g, i, saved + h, &Lp));
        CHECK_OK(test_gc_loss_at(&g, i, saved - h, &Lm));
        double fd = (Lp - Lm) / (2.0 * h), fwd = (Lp - L0) / h, bwd = (L0 - Lm) / h;
        if (fabs(fd - grad[i]) > 1e-4 + 1e-3 * fabs(grad[i])) {
            if (fabs(fwd - bwd) > 1e-2 + 0.1 * fabs(fd)) {
                kinks++;
                continue;
            }
            CHECK(0, "%s, loss %s, float targets: parameter %zu: analytic %.6g, central "
                     "difference %.6g", arch, ffnn_loss_name(loss), i, (double)grad[i], fd);
        }
    }
    CHECK(kinks * 20 <= n, "%s: %zu of %zu parameters at kinks", arch, kinks, n);
    test_gc_free(&g);
    ffnn_dataset_free(ds);
    return TEST_PASS;
}

TEST("data_gradcheck_cpu_float_targets", gradcheck_float_targets)
{
    struct { const char *arch; ffnn_loss loss; size_t width; } cases[] = {
        {"6-5tanh-3", FFNN_LOSS_MSE, 3},
        {"6-5relu-4sigmoid-1", FFNN_LOSS_MSE, 1},
        {"6-5sigmoid:nobias-3tanh:nobias", FFNN_LOSS_MSE, 3},
        {"6-5tanh-3", FFNN_LOSS_SIGMOID_BCE, 3},
        {"6-5relu-4tanh-1", FFNN_LOSS_SIGMOID_BCE, 1},
        {"6-5relu:nobias-2:nobias", FFNN_LOSS_SIGMOID_BCE, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        test_result r = gradcheck_float(cases[i].arch, cases[i].loss, cases[i].width);
        if (r != TEST_PASS)
            return r;
    }
    return TEST_PASS;
}

/* ------------------------------------------------------------------ training */

/* Float targets need mse or bce and one target per output. */
TEST("data_trainer_checks_float_targets", trainer_checks_float_targets)
{
    ffnn_dataset *train = NULL, *test = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:regression:64", 1, &train, &test));
    struct { const char *arch; ffnn_loss loss; const char *expect; } bad[] = {
        {"32-8relu-2", FFNN_LOSS_SOFTMAX_CE, "loss ce takes class labels"},
        {"32-8relu-2", FFNN_LOSS_MSE, "1 float target per sample but the network has 2 outputs"},
        {"16-8relu-1", FFNN_LOSS_MSE, "takes 16 inputs but the data has 32"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ffnn_model *m = NULL;
        ffnn_trainer *t = NULL;
        CHECK_OK(ffnn_model_create(bad[i].arch, &m));
        ffnn_train_config cfg = test_train_config(FFNN_DEVICE_CPU, FFNN_STRATEGY_REFERENCE);
        cfg.loss = bad[i].loss;
        CHECK(ffnn_trainer_create(m, train, &cfg, &t) == FFNN_ERR_INVALID_ARGUMENT && !t,
              "case %zu accepted", i);
        CHECK(strstr(ffnn_last_error(), bad[i].expect), "'%s' lacks '%s'", ffnn_last_error(),
              bad[i].expect);
        ffnn_model_free(m);
    }
    /* evaluating label data with a regression trainer, and the other way round */
    ffnn_dataset *pts = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:points:64", 1, &pts, NULL));
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    double loss, acc;
    CHECK_OK(ffnn_model_create("32-8relu-1", &m));
    ffnn_train_config cfg = test_train_config(FFNN_DEVICE_CPU, FFNN_STRATEGY_REFERENCE);
    cfg.loss = FFNN_LOSS_MSE;
    CHECK_OK(ffnn_trainer_create(m, train, &cfg, &t));
    CHECK_OK(ffnn_trainer_evaluate(t, test, &loss, &acc));
    CHECK(ffnn_trainer_evaluate(t, pts, &loss, &acc) == FFNN_ERR_INVALID_ARGUMENT,
          "2-feature data accepted");
    TEST_FREE(t, m, pts, train, test);
    return TEST_PASS;
}

/* A CPU reference run on the data sets of spec (seed 1): arch initialised with seed
 * 1, loss, adam at lr, batch, seed 1; the test frees what it made (TEST_FREE). */
typedef struct synth_run {
    ffnn_dataset *train, *test;
    ffnn_model *m;
    ffnn_trainer *t;
} synth_run;

static test_result synth_run_start(synth_run *r, const char *spec, const char *arch,
                                   ffnn_loss loss, float lr, int batch)
{
    memset(r, 0, sizeof *r);
    CHECK_OK(ffnn_dataset_synthetic(spec, 1, &r->train, &r->test));
    CHECK_OK(ffnn_model_create(arch, &r->m));
    CHECK_OK(ffnn_model_init(r->m, 1));
    ffnn_train_config cfg = test_train_config(FFNN_DEVICE_CPU, FFNN_STRATEGY_REFERENCE);
    cfg.loss = loss;
    cfg.optimizer = FFNN_OPT_ADAM;
    cfg.learning_rate = lr;
    cfg.batch_size = batch;
    cfg.seed = 1;
    CHECK_OK(ffnn_trainer_create(r->m, r->train, &cfg, &r->t));
    return TEST_PASS;
}

/* The trained model (synced from the trainer, loss set) evaluated on the test set by
 * ffnn_model_evaluate (batches of 100): *loss and the confusion counts [4]. */
static test_result synth_run_model_evaluate(synth_run *r, ffnn_loss loss, double *mloss,
                                            uint64_t confusion[4])
{
    CHECK_OK(ffnn_trainer_sync_model(r->t));
    (void)ffnn_model_set_loss(r->m, loss);
    CHECK_OK(ffnn_model_evaluate(r->m, r->test, 100, mloss, confusion));
    return TEST_PASS;
}

/* Seed 004's 2-D points: 2-30tanh-30tanh-1, bce, on the cpu; >= 95% test accuracy. */
TEST("data_train_cpu_points_reaches_95pct", train_points)
{
    synth_run r;
    CHECK_PASS(synth_run_start(&r, "synth:points", "2-30tanh-30tanh-1", FFNN_LOSS_SIGMOID_BCE,
                               0.01f, 32));
    ffnn_epoch_stats stats;
    double loss = 0, accuracy = 0;
    const int epochs = 60;
    for (int e = 0; e < epochs; e++)
        CHECK_OK(ffnn_trainer_run_epoch(r.t, NULL, NULL, &stats));
    CHECK_OK(ffnn_trainer_evaluate(r.t, r.test, &loss, &accuracy));
    printf("     synth:points, 2-30tanh-30tanh-1 bce adam lr 0.01 batch 32, %d epochs: "
           "train_loss %.4f test_loss %.4f test_acc %.2f%%\n", epochs, stats.train_loss, loss,
           100 * accuracy);
    CHECK(accuracy >= 0.95, "test accuracy %.4f < 0.95", accuracy);
    /* the model evaluates the same on the CPU reference */
    uint64_t confusion[4];
    double mloss;
    CHECK_PASS(synth_run_model_evaluate(&r, FFNN_LOSS_SIGMOID_BCE, &mloss, confusion));
    double macc = (double)(confusion[0] + confusion[3]) / (double)ffnn_dataset_count(r.test);
    CHECK(fabs(mloss - loss) <= 1e-6 * (1 + loss) && fabs(macc - accuracy) < 1e-12,
          "model_evaluate: loss %.9g acc %.6f, trainer: %.9g %.6f", mloss, macc, loss, accuracy);
    TEST_FREE(r.t, r.m, r.train, r.test);
    return TEST_PASS;
}

/* Seed 001's network 32-256relu:nobias-1:nobias, mse, on synth:regression:2560:
 * the test MSE falls below 20% of the test targets' variance. */
TEST("data_train_cpu_regression_below_20pct_var", train_regression)
{
    synth_run r;
    CHECK_PASS(synth_run_start(&r, "synth:regression:2560", "32-256relu:nobias-1:nobias",
                               FFNN_LOSS_MSE, 3e-3f, 256));
    const float *y = ffnn_dataset_targets(r.test);
    size_t n = ffnn_dataset_count(r.test);
    double sum = 0, sum2 = 0;
    for (size_t i = 0; i < n; i++) {
        sum += y[i];
        sum2 += (double)y[i] * y[i];
    }
    double var = sum2 / (double)n - (sum / (double)n) * (sum / (double)n);
    double loss0, acc;
    CHECK_OK(ffnn_trainer_evaluate(r.t, r.test, &loss0, &acc));
    ffnn_epoch_stats stats;
    const int epochs = 30;
    for (int e = 0; e < epochs; e++)
        CHECK_OK(ffnn_trainer_run_epoch(r.t, NULL, NULL, &stats));
    double loss;
    CHECK_OK(ffnn_trainer_evaluate(r.t, r.test, &loss, &acc));
    printf("     synth:regression:2560, 32-256relu:nobias-1:nobias mse adam lr 0.003 batch 256, "
           "%d epochs: test MSE %.4f -> %.4f = %.1f%% of the target variance %.4f\n", epochs,
           loss0, loss, 100 * loss / var, var);
    CHECK(loss < 0.2 * var, "test MSE %.4f >= 20%% of the variance %.4f", loss, var);
    /* the model evaluates the same on the CPU reference */
    uint64_t confusion[4];
    double mloss;
    CHECK_PASS(synth_run_model_evaluate(&r, FFNN_LOSS_MSE, &mloss, confusion));
    CHECK(fabs(mloss - loss) <= 1e-6 * (1 + loss), "model_evaluate %.9g, trainer %.9g", mloss,
          loss);
    TEST_FREE(r.t, r.m, r.train, r.test);
    return TEST_PASS;
}

/* cuda follows cpu step by step on float data (features and targets). */
TEST("data_cuda_follows_cpu_float_data", cuda_follows_cpu_float)
{
    SKIP_WITHOUT_GPU();
    struct { const char *spec, *arch; ffnn_loss loss; ffnn_optimizer opt; float lr; } cases[] = {
        {"synth:regression:2560", "32-256relu:nobias-1:nobias", FFNN_LOSS_MSE, FFNN_OPT_SGD,
         0.002f},
        {"synth:regression:2560", "32-256relu:nobias-1:nobias", FFNN_LOSS_MSE, FFNN_OPT_ADAM,
         3e-3f},
        {"synth:points", "2-30tanh-30tanh-1", FFNN_LOSS_SIGMOID_BCE, FFNN_OPT_ADAM, 0.01f},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ffnn_dataset *train = NULL, *test = NULL;
        ffnn_model *m = NULL;
        CHECK_OK(ffnn_dataset_synthetic(cases[c].spec, 1, &train, &test));
        CHECK_OK(ffnn_model_create(cases[c].arch, &m));
        CHECK_OK(ffnn_model_init(m, 3));
        ffnn_train_config cfg = ffnn_train_config_default();
        cfg.loss = cases[c].loss;
        cfg.optimizer = cases[c].opt;
        cfg.learning_rate = cases[c].lr;
        cfg.batch_size = 64;
        cfg.seed = 5;
        ffnn_trainer *cpu = NULL, *gpu = NULL;
        CHECK_OK(test_trainer_pair(m, train, cfg, &cpu, &gpu));
        double worst = 0;
        char what[160];
        snprintf(what, sizeof what, "%s %s", cases[c].spec, cases[c].arch);
        CHECK_PASS(test_steps_follow(cpu, gpu, 200, what, &worst));
        double lc, ac, lg, ag;
        CHECK_OK(ffnn_trainer_evaluate(cpu, test, &lc, &ac));
        CHECK_OK(ffnn_trainer_evaluate(gpu, test, &lg, &ag));
        /* accuracy: NaN on both for real-valued targets (ffnn_trainer_evaluate), else
         * within one point */
        const int same_acc = isnan(ac) ? isnan(ag) : fabs(ag - ac) <= 0.01;
        CHECK(fabs(lg - lc) <= 1e-4 * fabs(lc) && same_acc,
              "%s: evaluation cpu %.6f/%.4f, cuda %.6f/%.4f", cases[c].spec, lc, ac, lg, ag);
        printf("     %s %s %s: 200 steps, worst relative loss difference %.2e\n", cases[c].spec,
               cases[c].arch, ffnn_optimizer_name(cases[c].opt), worst);
        TEST_FREE(cpu, gpu, m, train, test);
    }
    return TEST_PASS;
}
