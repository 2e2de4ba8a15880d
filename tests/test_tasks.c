/* test_tasks.c - the task checks (no silent wrong task: a continuous target, a
 * "nan" label, one class, more classes than half the rows, .npy features
 * without labels - refused by the library and by ffnn train with a message
 * naming the way out), per-sample and class weights (the weighted mean of the
 * per-sample losses and its gradient, against sums of single-sample
 * gradients; a weight of 2 equals the sample twice) and k-fold
 * cross-validation (stratified, seeded folds; ffnn train --cv's mean equals the
 * mean of its folds). The CLI: build/ffnn (FFNN_BIN overrides). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "test_fixtures.h"
#include "cli_run.h"
#include "ffnn.h"
#include "test_files.h"
#include "train/train_internal.h"

/* A CSV of n rows "a,b,LABEL" with label(i) as its target. */
static int put_csv(const char *dir, const char *name, int n, const char *(*label)(int, char *),
                   char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "a,b,y\n");
    for (int i = 0; i < n; i++) {
        char buf[32];
        fprintf(f, "%d,%d,%s\n", i, (i * 7) % 5, label(i, buf));
    }
    return fclose(f) == 0 ? 0 : -1;
}

static const char *label_fraction(int i, char *buf) { return sprintf(buf, "%d.5", i), buf; }
static const char *label_one(int i, char *buf) { return (void)i, strcpy(buf, "yes"); }
static const char *label_id(int i, char *buf) { return sprintf(buf, "%d", 3 * i), buf; }
static const char *label_nan(int i, char *buf)
{
    return i == 7 ? strcpy(buf, "nan") : (sprintf(buf, "%d", i % 2), buf);
}
static const char *label_two(int i, char *buf) { return sprintf(buf, "%d", i % 2), buf; }

/* ffnn train ARGS... into dir/out.txt: the exit status (the text in out). */
static int train_cli(const char *dir, const char *const *args, char *out, size_t size)
{
    snprintf(out, size, "%s/out.txt", dir);
    return cli_run(args, out, NULL);
}

/* ------------------------------------------------------------ the task checks */

/* The library refuses each case with the way out in the message. */
TEST_DIR_CASE("tasks_library_refuses_wrong_tasks", "tasks", library_refuses_wrong_tasks)
{
    UNUSED_WHY();
    char path[512];
    ffnn_dataset *ds = NULL;
    ffnn_csv_options csv = ffnn_csv_options_default();
    struct {
        const char *name;
        const char *(*label)(int, char *);
        unsigned flags;
        const char *want; /* in the message */
    } cases[] = {
        {"fraction.csv", label_fraction, FFNN_TASK_ALLOW_MANY_CLASSES, "--loss mse"},
        {"one.csv", label_one, 0, "at least 2 classes"},
        {"id.csv", label_id, 0, "--allow-many-classes"},
    };
    /* a "nan" label: the CSV reader refuses it as a missing target, naming its line
     * and --drop-missing-target */
    CHECK(put_csv(dir, "nan.csv", 40, label_nan, path, sizeof path) == 0, "cannot write");
    CHECK(ffnn_dataset_load_csv(path, &csv, &ds) == FFNN_ERR_FORMAT &&
              strstr(ffnn_last_error(), "line 9") &&
              strstr(ffnn_last_error(), "--drop-missing-target"),
          "a nan label: '%s'", ffnn_last_error());
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        CHECK(put_csv(dir, cases[k].name, 40, cases[k].label, path, sizeof path) == 0,
              "cannot write %s", cases[k].name);
        CHECK_OK(ffnn_dataset_load_csv(path, &csv, &ds));
        ffnn_status st = ffnn_dataset_check_task(ds, FFNN_LOSS_SOFTMAX_CE, cases[k].flags);
        CHECK(st == FFNN_ERR_INVALID_ARGUMENT && strstr(ffnn_last_error(), cases[k].want),
              "%s: status %d, message '%s' (expected one naming '%s')", cases[k].name, (int)st,
              ffnn_last_error(), cases[k].want);
        /* the trainer refuses all but the many-classes case (the caller's to confirm) */
        ffnn_model *m = NULL;
        ffnn_trainer *t = NULL;
        char arch[32];
        snprintf(arch, sizeof arch, "2-4relu-%d", ffnn_dataset_classes(ds) < 2
                                                      ? 2 : ffnn_dataset_classes(ds));
        CHECK_OK(ffnn_model_create(arch, &m));
        ffnn_train_config cfg = ffnn_train_config_default();
        cfg.device = FFNN_DEVICE_CPU;
        st = ffnn_trainer_create(m, ds, &cfg, &t);
        int many = strcmp(cases[k].name, "id.csv") == 0;
        CHECK(many ? st == FFNN_OK : st == FFNN_ERR_INVALID_ARGUMENT,
              "%s: ffnn_trainer_create returned %d (%s)", cases[k].name, (int)st,
              ffnn_last_error());
        TEST_FREE(t, m);
        /* with loss mse (a regression of the labels' values) nothing is refused */
        CHECK_OK(ffnn_dataset_check_task(ds, FFNN_LOSS_MSE, 0));
        ffnn_dataset_free(ds);
        ds = NULL;
    }
    /* flags confirm many classes; two integer classes pass */
    CHECK(put_csv(dir, "id.csv", 40, label_id, path, sizeof path) == 0, "cannot write");
    CHECK_OK(ffnn_dataset_load_csv(path, &csv, &ds));
    CHECK_OK(ffnn_dataset_check_task(ds, FFNN_LOSS_SOFTMAX_CE, FFNN_TASK_ALLOW_MANY_CLASSES));
    ffnn_dataset_free(ds);
    CHECK(put_csv(dir, "two.csv", 40, label_two, path, sizeof path) == 0, "cannot write");
    CHECK_OK(ffnn_dataset_load_csv(path, &csv, &ds));
    CHECK_OK(ffnn_dataset_check_task(ds, FFNN_LOSS_SOFTMAX_CE, 0));
    ffnn_dataset_free(ds);
    /* arrays: all labels 0 (as .npy features without labels) */
    float x[8] = {0};
    int32_t y[4] = {0, 0, 0, 0};
    CHECK_OK(ffnn_dataset_from_arrays(4, 2, x, y, 0, NULL, &ds));
    ffnn_status st = ffnn_dataset_check_task(ds, FFNN_LOSS_SOFTMAX_CE, 0);
    CHECK(st == FFNN_ERR_INVALID_ARGUMENT && strstr(ffnn_last_error(), "--labels"),
          "one class of arrays: %d '%s'", (int)st, ffnn_last_error());
    ffnn_dataset_free(ds);
    return TEST_PASS;
}

/* ffnn train refuses each case, exit 1, the way out named; the way out works. */
TEST_CLI_CASE("tasks_cli_refuses_wrong_tasks", "tasks", cli_refuses_wrong_tasks)
{
    UNUSED_WHY();
    char path[512], out[600], npy[512];
    struct {
        const char *name;
        const char *(*label)(int, char *);
        const char *want, *fix; /* in the message; the option that trains */
    } cases[] = {
        {"fraction.csv", label_fraction, "--loss mse", "--loss=mse"},
        {"one.csv", label_one, "--target", NULL},
        {"id.csv", label_id, "--allow-many-classes", "--allow-many-classes"},
        {"nan.csv", label_nan, "--drop-missing-target", "--drop-missing-target"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        CHECK(put_csv(dir, cases[k].name, 40, cases[k].label, path, sizeof path) == 0,
              "cannot write");
        const char *args[] = {"train", "--data", path, "--epochs", "1", "--device", "cpu",
                              NULL, NULL};
        int rc = train_cli(dir, args, out, sizeof out);
        CHECK(rc == 1 && file_contains(out, cases[k].want),
              "%s: exit %d, output without '%s' (%s)", cases[k].name, rc, cases[k].want, out);
        if (cases[k].fix) {
            args[7] = cases[k].fix;
            rc = train_cli(dir, args, out, sizeof out);
            CHECK(rc == 0, "%s with %s: exit %d (%s)", cases[k].name, cases[k].fix, rc, out);
        }
    }
    /* .npy features without --labels */
    snprintf(npy, sizeof npy, "%s/x.npy", dir);
    {
        const char head[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (4, 1), }";
        char buf[128 + 16];
        memset(buf, ' ', 128);
        memcpy(buf, head, sizeof head - 1);
        buf[127] = '\n';
        memset(buf + 128, 0, 16);
        CHECK(test_write_file(npy, buf, sizeof buf) == 0, "cannot write %s", npy);
    }
    const char *args[] = {"train", "--data", npy, "--epochs", "1", NULL};
    int rc = train_cli(dir, args, out, sizeof out);
    CHECK(rc == 1 && file_contains(out, "--labels y.npy"),
          "x.npy without labels: exit %d, no '--labels y.npy' in the output", rc);
    return TEST_PASS;
}

/* ------------------------------------------------------------ weights */

/* n samples of 3 features and 3 classes, from a fixed LCG. */
static void toy_data(size_t n, float *x, int32_t *y)
{
    uint64_t s = 99;
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < 3; j++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            x[i * 3 + j] = (float)((double)(s >> 40) / (double)(1ull << 24)) * 2.0f - 1.0f;
        }
        y[i] = (int32_t)(i % 3);
    }
}

/* The gradient and loss of a trainer on ds over rows. */
static ffnn_status grad_of(ffnn_dataset *ds, ffnn_loss loss, int threads, const int32_t *rows,
                           size_t batch, double *l, float *g)
{
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    cfg.loss = loss;
    cfg.threads = threads;
    cfg.strategy = threads == 1 ? FFNN_STRATEGY_REFERENCE : FFNN_STRATEGY_AUTO;
    cfg.batch_size = batch;
    ffnn_status st = ffnn_model_create("3-5tanh-3", &m);
    if (st == FFNN_OK)
        st = ffnn_model_init(m, 5);
    if (st == FFNN_OK)
        st = ffnn_trainer_create(m, ds, &cfg, &t);
    if (st == FFNN_OK)
        st = ffnn_trainer_gradient(t, rows, batch, l, g);
    TEST_FREE(t, m);
    return st;
}

/* With weights w the batch loss is sum w_i l_i / sum w_i and the gradient
 * sum w_i g_i / sum w_i (g_i, l_i: one sample's), on the reference and the
 * OpenMP backend, for ce and mse; class weights multiply in; a weight of 2
 * equals the sample given twice. */
TEST("tasks_weighted_loss_and_gradient", weighted_loss_and_gradient)
{
    enum { N = 12, P = 3 * 5 + 5 + 5 * 3 + 3 };
    float x[N * 3], w[N], cw[3] = {0.5f, 2.0f, 1.25f}, g[P], gi[P];
    int32_t y[N], rows[N];
    double sum_g[P];
    toy_data(N, x, y);
    for (int i = 0; i < N; i++) {
        w[i] = 0.25f + 0.125f * (float)(i % 5);
        rows[i] = i;
    }
    const ffnn_loss losses[2] = {FFNN_LOSS_SOFTMAX_CE, FFNN_LOSS_MSE};
    for (int li = 0; li < 2; li++)
        for (int threads = 1; threads <= 2; threads++) {
            ffnn_dataset *ds = NULL;
            CHECK_OK(ffnn_dataset_from_arrays(N, 3, x, y, 0, NULL, &ds));
            CHECK_OK(ffnn_dataset_set_sample_weights(ds, w));
            CHECK_OK(ffnn_dataset_apply_class_weights(ds, cw, 3));
            const float *wi = ffnn_dataset_sample_weights(ds);
            double l = 0, li_loss = 0, sum_l = 0, sum_w = 0;
            memset(sum_g, 0, sizeof sum_g);
            for (int i = 0; i < N; i++) { /* one sample at a time: its own l_i, g_i */
                CHECK_OK(grad_of(ds, losses[li], threads, rows + i, 1, &li_loss, gi));
                for (int p = 0; p < P; p++)
                    sum_g[p] += (double)wi[i] * gi[p];
                sum_l += (double)wi[i] * li_loss;
                sum_w += wi[i];
            }
            CHECK_OK(grad_of(ds, losses[li], threads, rows, N, &l, g));
            CHECK(fabs(l - sum_l / sum_w) <= 1e-6 * fabs(l) + 1e-7,
                  "%s threads %d: weighted loss %.9g, expected %.9g",
                  ffnn_loss_name(losses[li]), threads, l, sum_l / sum_w);
            double worst = 0, scale = 0;
            for (int p = 0; p < P; p++) {
                double e = sum_g[p] / sum_w;
                worst = fmax(worst, fabs(g[p] - e));
                scale = fmax(scale, fabs(e));
            }
            CHECK(worst <= 1e-5 * scale, "%s threads %d: gradient off by %.3g (largest %.3g)",
                  ffnn_loss_name(losses[li]), threads, worst, scale);
            ffnn_dataset_free(ds);
        }
    /* a weight of 2 on sample 0 equals sample 0 given twice (weights 1) */
    float x2[(N + 1) * 3], w2[N];
    int32_t y2[N + 1], rows2[N + 1];
    memcpy(x2, x, sizeof x);
    memcpy(x2 + 3 * N, x, 3 * sizeof *x);
    memcpy(y2, y, sizeof y);
    y2[N] = y[0];
    for (int i = 0; i < N; i++)
        w2[i] = i == 0 ? 2.0f : 1.0f;
    for (int i = 0; i <= N; i++)
        rows2[i] = i;
    ffnn_dataset *a = NULL, *b = NULL;
    CHECK_OK(ffnn_dataset_from_arrays(N, 3, x, y, 0, NULL, &a));
    CHECK_OK(ffnn_dataset_set_sample_weights(a, w2));
    CHECK_OK(ffnn_dataset_from_arrays(N + 1, 3, x2, y2, 0, NULL, &b));
    double la, lb;
    float gb[P];
    CHECK_OK(grad_of(a, FFNN_LOSS_SOFTMAX_CE, 1, rows2, N, &la, g));
    CHECK_OK(grad_of(b, FFNN_LOSS_SOFTMAX_CE, 1, rows2, N + 1, &lb, gb));
    double worst = 0;
    for (int p = 0; p < P; p++)
        worst = fmax(worst, fabs(g[p] - gb[p]));
    CHECK(fabs(la - lb) <= 1e-6 && worst <= 1e-6,
          "weight 2 vs twice: loss %.9g vs %.9g, gradient off by %.3g", la, lb, worst);
    TEST_FREE(a, b);
    return TEST_PASS;
}

/* Bad weights are refused before anything changes; balanced is sklearn's rule;
 * weights follow the samples through slice, split and fold. */
TEST("tasks_weights_checked_and_carried", weights_checked_and_carried)
{
    enum { N = 10 };
    float x[N * 3], w[N];
    int32_t y[N] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 2}; /* 6, 3, 1 */
    toy_data(N, x, (int32_t[N]){0});
    for (int i = 0; i < N; i++)
        w[i] = (float)(i + 1);
    ffnn_dataset *ds = NULL, *rest = NULL, *part = NULL;
    CHECK_OK(ffnn_dataset_from_arrays(N, 3, x, y, 0, NULL, &ds));
    float bad[N];
    memcpy(bad, w, sizeof bad);
    bad[4] = -1.0f;
    CHECK(ffnn_dataset_set_sample_weights(ds, bad) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "weight 4") && !ffnn_dataset_sample_weights(ds),
          "a negative weight: %s", ffnn_last_error());
    memset(bad, 0, sizeof bad);
    CHECK(ffnn_dataset_set_sample_weights(ds, bad) == FFNN_ERR_INVALID_ARGUMENT,
          "all-zero weights accepted");
    float cw[3];
    CHECK_OK(ffnn_dataset_balanced_class_weights(ds, cw));
    const double want[3] = {10.0 / (3 * 6), 10.0 / (3 * 3), 10.0 / (3 * 1)};
    for (int c = 0; c < 3; c++)
        CHECK(fabs(cw[c] - want[c]) < 1e-6, "balanced weight of class %d: %g, expected %g", c,
              (double)cw[c], want[c]);
    CHECK_OK(ffnn_dataset_set_sample_weights(ds, w));
    CHECK_OK(ffnn_dataset_split(ds, 0.3, 3, &rest, &part));
    const float *wr = ffnn_dataset_sample_weights(rest), *wp = ffnn_dataset_sample_weights(part);
    CHECK(wr && wp, "split lost the weights");
    /* each side's weights are those of its rows: w = i + 1 identifies row i by its
     * first feature */
    for (size_t i = 0; i < ffnn_dataset_count(part); i++) {
        const float *xi = ffnn_dataset_float_features(part) + 3 * i;
        int found = -1;
        for (int r = 0; r < N && found < 0; r++)
            if (memcmp(xi, x + 3 * r, 3 * sizeof *x) == 0)
                found = r;
        CHECK(found >= 0 && wp[i] == w[found], "split row %zu: weight %g, its row's %g", i,
              (double)wp[i], found >= 0 ? (double)w[found] : -1.0);
    }
    TEST_FREE(rest, part, ds);
    return TEST_PASS;
}

/* ffnn train and eval with --sample-weight COL of a CSV (the column leaves the
 * features) and --class-weight: the weighted line after training, eval's JSON
 * fields; unknown classes and a non-CSV column are refused with the reason. */
TEST_CLI_CASE("tasks_cli_weights", "tasks", cli_weights)
{
    UNUSED_WHY();
    char path[512], out[600], model[512];
    snprintf(path, sizeof path, "%s/w.csv", dir);
    snprintf(model, sizeof model, "%s/m.safetensors", dir);
    FILE *f = fopen(path, "w");
    CHECK(f, "cannot write %s", path);
    fprintf(f, "a,wt,b,y\n");
    for (int i = 0; i < 60; i++)
        fprintf(f, "%d,%g,%d,%s\n", i % 9, 0.5 + (i % 4), (i * 7) % 5, i % 3 ? "no" : "yes");
    CHECK(fclose(f) == 0, "cannot write %s", path);
    const char *train[] = {"train", "--data", path, "--sample-weight", "wt", "--class-weight",
                           "yes:3", "--test-split", "0.25", "--epochs", "2", "--device", "cpu",
                           "--save", model, NULL};
    int rc = train_cli(dir, train, out, sizeof out);
    CHECK(rc == 0 && file_contains(out, "(2 features, 2 classes)") &&
              file_contains(out, "weighted: loss"),
          "train with weights: exit %d, no 2-feature data line or weighted line (%s)", rc, out);
    const char *eval[] = {"eval", "--model", model, "--data", path, "--sample-weight", "wt",
                          "--class-weight", "balanced", "--json", NULL};
    rc = train_cli(dir, eval, out, sizeof out);
    CHECK(rc == 0 && file_contains(out, "\"weighted_accuracy\"") &&
              file_contains(out, "\"weight_sum\""),
          "eval with weights: exit %d (%s)", rc, out);
    const char *unknown[] = {"train", "--data", path, "--sample-weight", "wt", "--class-weight",
                             "maybe:2", "--epochs", "1", NULL};
    rc = train_cli(dir, unknown, out, sizeof out);
    CHECK(rc == 1 && file_contains(out, "'maybe' is not a class"),
          "an unknown class: exit %d (%s)", rc, out);
    const char *synth[] = {"train", "--data", "synth:points:200", "--sample-weight", "wt",
                           "--epochs", "1", NULL};
    rc = train_cli(dir, synth, out, sizeof out);
    CHECK(rc == 1 && file_contains(out, "goes with a CSV"), "a column of synth data: exit %d",
          rc);
    return TEST_PASS;
}

/* ------------------------------------------------------------ folds */

/* Every sample in exactly one test fold; per class, fold counts within one of
 * count_c / K; the same seed the same folds, another seed others. */
TEST("tasks_folds_stratified_and_seeded", folds_stratified_and_seeded)
{
    enum { N = 50, K = 4 };
    float x[N];
    int32_t y[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i; /* the feature names the row */
        y[i] = i < 30 ? 0 : i < 45 ? 1 : 2;
    }
    ffnn_dataset *ds = NULL;
    CHECK_OK(ffnn_dataset_from_arrays(N, 1, x, y, 0, NULL, &ds));
    int seen[N] = {0}, fold_of[2][N];
    for (int s = 0; s < 2; s++)
        for (int f = 0; f < K; f++) {
            ffnn_dataset *train = NULL, *test = NULL, *again = NULL;
            CHECK_OK(ffnn_dataset_fold(ds, K, f, 7 + (uint64_t)s, &train, &test));
            CHECK(ffnn_dataset_count(train) + ffnn_dataset_count(test) == N,
                  "fold %d: %zu + %zu rows", f, ffnn_dataset_count(train),
                  ffnn_dataset_count(test));
            int per[3] = {0, 0, 0};
            for (size_t i = 0; i < ffnn_dataset_count(test); i++) {
                int r = (int)ffnn_dataset_float_features(test)[i];
                per[ffnn_dataset_labels(test)[i]]++;
                fold_of[s][r] = f;
                if (s == 0)
                    seen[r]++;
            }
            const int n_c[3] = {30, 15, 5};
            for (int c = 0; c < 3; c++)
                CHECK(abs(per[c] * K - n_c[c]) < K, "fold %d class %d: %d of %d", f, c, per[c],
                      n_c[c]);
            CHECK_OK(ffnn_dataset_fold(ds, K, f, 7 + (uint64_t)s, NULL, &again));
            CHECK(ffnn_dataset_count(again) == ffnn_dataset_count(test) &&
                      memcmp(ffnn_dataset_float_features(again), ffnn_dataset_float_features(test),
                             ffnn_dataset_count(test) * sizeof(float)) == 0,
                  "fold %d differs between two calls with the same seed", f);
            TEST_FREE(train, test, again);
        }
    int differ = 0;
    for (int i = 0; i < N; i++) {
        CHECK(seen[i] == 1, "row %d in %d test folds", i, seen[i]);
        differ += fold_of[0][i] != fold_of[1][i];
    }
    CHECK(differ > 0, "seeds 7 and 8 gave the same folds");
    CHECK(ffnn_dataset_fold(ds, 1, 0, 1, NULL, &(ffnn_dataset *){NULL}) ==
              FFNN_ERR_INVALID_ARGUMENT, "K = 1 accepted");
    ffnn_dataset_free(ds);
    return TEST_PASS;
}

/* The number after "\"key\": " in line, or NaN. */
static double json_number(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(line, pat);
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

/* ffnn train --cv 3 --json: three fold lines whose test rows add up to the data,
 * a summary whose mean is the mean of the folds' values and whose std is their
 * spread; the same run again prints the same numbers. */
TEST_CLI_CASE("tasks_cli_cross_validation", "tasks", cli_cross_validation)
{
    UNUSED_WHY();
    char path[512], out[600], again[600];
    CHECK(put_csv(dir, "two.csv", 61, label_two, path, sizeof path) == 0, "cannot write");
    const char *args[] = {"train", "--data", path, "--cv", "3", "--epochs", "3", "--json",
                          "--standardize", "--lr", "0.1", "--device", "cpu", NULL};
    CHECK(train_cli(dir, args, out, sizeof out) == 0, "ffnn train --cv 3 failed (%s)", out);
    snprintf(again, sizeof again, "%s/again.txt", dir);
    CHECK(cli_run(args, again, NULL) == 0, "the second run failed");
    blob a, b;
    CHECK(test_read_file(out, &a) == 0 && test_read_file(again, &b) == 0, "cannot read");
    int same = test_same_blob(&a, &b);
    free(b.data);
    char *text = realloc(a.data, a.size + 1);
    CHECK(text, "out of memory");
    text[a.size] = '\0';
    double acc[3], loss[3], sum_acc = 0, sum_loss = 0;
    size_t rows = 0;
    int folds = 0;
    const char *summary = NULL;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "\"cv_fold\"") && folds < 3) {
            acc[folds] = json_number(line, "accuracy");
            loss[folds] = json_number(line, "loss");
            rows += (size_t)json_number(line, "test_count");
            sum_acc += acc[folds];
            sum_loss += loss[folds];
            folds++;
        } else if (strstr(line, "\"cv_folds\"")) {
            summary = line;
        }
    }
    test_result r = TEST_PASS;
    if (folds != 3 || rows != 61 || !summary) {
        snprintf(why, why_size, "%d fold lines, %zu test rows, summary %s", folds, rows,
                 summary ? "found" : "missing");
        r = TEST_FAIL;
    } else {
        const char *std = strstr(summary, "\"std\"");
        double mean_acc = json_number(summary, "accuracy"), mean_loss = json_number(summary, "loss");
        double m = sum_acc / 3, sd = 0;
        for (int f = 0; f < 3; f++)
            sd += (acc[f] - m) * (acc[f] - m);
        sd = sqrt(sd / 3);
        double std_acc = std ? json_number(std, "accuracy") : NAN;
        if (!(fabs(mean_acc - m) < 1e-8 && fabs(mean_loss - sum_loss / 3) < 1e-8 &&
              fabs(std_acc - sd) < 1e-8 && same)) {
            snprintf(why, why_size, "mean accuracy %.9g vs folds' %.9g, loss %.9g vs %.9g, "
                     "std %.9g vs %.9g, repeatable %d", mean_acc, m, mean_loss, sum_loss / 3,
                     std_acc, sd, same);
            r = TEST_FAIL;
        }
    }
    free(text);
    return r;
}
