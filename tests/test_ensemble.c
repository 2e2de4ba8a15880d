/* test_ensemble.c - ensemble models (include/ffnn.h "Ensembles"): an ensemble's
 * predictions are the mean of its members' (the same bits: each member's
 * prediction summed in member order, divided by the count) for ce, bce and mse,
 * members with different hidden layers and standardisations, on the predictor's
 * row and column paths; its evaluation; its file round trip and a damaged file;
 * what is refused; and ffnn sweep --save-all / --ensemble then ffnn predict, eval
 * and info on the ensemble file, end to end. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cli_run.h"
#include "ffnn.h"
#include "test_files.h"
#include "train/predictor.h" /* ffnn_predictor_set_column_work */

#define ROWS 77

static void random_inputs(float *x, size_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[i] = (float)((double)(s >> 40) / (double)(1ull << 24) * 4.0 - 2.0);
    }
}

/* Three members of 4 inputs and `out` outputs with different hidden layers, each
 * initialised with its own seed and given loss; member 1 standardises its inputs
 * (and, for mse, its targets). */
static test_result make_members(ffnn_loss loss, size_t out, ffnn_model *m[3])
{
    char arch[3][64];
    snprintf(arch[0], sizeof arch[0], "4-8relu-%zu", out);
    snprintf(arch[1], sizeof arch[1], "4-16tanh-%zu", out);
    snprintf(arch[2], sizeof arch[2], "4-5relu-7gelu-%zu", out);
    for (int i = 0; i < 3; i++) {
        CHECK_OK(ffnn_model_create(arch[i], &m[i]));
        CHECK_OK(ffnn_model_init(m[i], 11 + (uint64_t)i));
        CHECK_OK(ffnn_model_set_loss(m[i], loss));
    }
    const float mean[4] = {0.5f, -1, 0.25f, 2}, scale[4] = {2, 0.5f, 1, 3};
    const float tmean[3] = {10, -3, 1}, tscale[3] = {4, 0.5f, 2};
    CHECK_OK(ffnn_model_set_standardization(m[1], mean, scale,
                                            loss == FFNN_LOSS_MSE ? tmean : NULL,
                                            loss == FFNN_LOSS_MSE ? tscale : NULL));
    return TEST_PASS;
}

/* ref [ROWS, out]: the sum of the members' predictions in member order / 3. */
static test_result member_mean(ffnn_model *m[3], const float *x, size_t out, float *ref)
{
    float *p = malloc(ROWS * out * sizeof *p);
    CHECK(p, "out of memory");
    for (int i = 0; i < 3; i++) {
        CHECK_OK(ffnn_model_predict(m[i], x, ROWS, p, NULL));
        for (size_t k = 0; k < ROWS * out; k++)
            ref[k] = i ? ref[k] + p[k] : p[k];
    }
    for (size_t k = 0; k < ROWS * out; k++)
        ref[k] /= 3.0f;
    free(p);
    return TEST_PASS;
}

/* Frees the three members of make_members and their ensemble e (NULL allowed). */
static void members_free(ffnn_model *m[3], ffnn_model *e)
{
    ffnn_model_free(e);
    for (int i = 0; i < 3; i++)
        ffnn_model_free(m[i]);
}

/* The ensemble of the members predicts their mean, bit for bit: ffnn_model_predict,
 * predictors of 1 and 2 threads, the column split forced, batches 1 and ROWS; its
 * classes are the argmax of the mean (one output: above 0.5). */
static test_result ensemble_mean(ffnn_loss loss, size_t out)
{
    ffnn_model *m[3] = {NULL, NULL, NULL}, *e = NULL;
    CHECK_PASS(make_members(loss, out, m));
    CHECK_OK(ffnn_model_ensemble((const ffnn_model *const *)m, 3, &e));
    float x[ROWS * 4], *ref = malloc(ROWS * out * sizeof *ref), *y = malloc(ROWS * out * sizeof *y);
    int cls[ROWS];
    CHECK(ref && y, "out of memory");
    random_inputs(x, ROWS * 4, 5);
    CHECK_PASS(member_mean(m, x, out, ref));
    CHECK_OK(ffnn_model_predict(e, x, ROWS, y, cls));
    CHECK(memcmp(y, ref, ROWS * out * sizeof *y) == 0, "ffnn_model_predict of the ensemble "
          "differs from the mean of its members' (loss %s)", ffnn_loss_name(loss));
    for (size_t r = 0; r < ROWS; r++) {
        int best = 0;
        for (size_t j = 1; j < out; j++)
            best = ref[r * out + j] > ref[r * out + (size_t)best] ? (int)j : best;
        if (out == 1)
            best = ref[r] > 0.5f;
        CHECK(cls[r] == best, "row %zu: class %d, the mean's is %d", r, cls[r], best);
    }
    for (int threads = 1; threads <= 2; threads++)
        for (int columns = 0; columns <= 1; columns++) {
            ffnn_predictor *p = NULL;
            CHECK_OK(ffnn_predictor_create(e, FFNN_DEVICE_CPU, threads, 32, &p));
            if (columns)
                ffnn_predictor_set_column_work(p, 1);
            memset(y, 0, ROWS * out * sizeof *y);
            CHECK_OK(ffnn_predictor_predict(p, x, 1, y, NULL));
            CHECK(memcmp(y, ref, out * sizeof *y) == 0, "1 row, %d threads", threads);
            CHECK_OK(ffnn_predictor_predict(p, x, ROWS, y, NULL));
            CHECK(memcmp(y, ref, ROWS * out * sizeof *y) == 0, "%d rows, %d threads%s", ROWS,
                  threads, columns ? ", by columns" : "");
            CHECK(ffnn_predictor_forward(p, x, 1, y) == FFNN_ERR_INVALID_ARGUMENT,
                  "ffnn_predictor_forward of an ensemble");
            ffnn_predictor_free(p);
        }
    printf("     loss %s, 3 members: the mean of the members' predictions, bit for bit\n",
           ffnn_loss_name(loss));
    free(ref);
    free(y);
    members_free(m, e);
    return TEST_PASS;
}

TEST("ensemble_predicts_mean_ce", ensemble_predicts_mean_ce)
{
    return ensemble_mean(FFNN_LOSS_SOFTMAX_CE, 3);
}

TEST("ensemble_predicts_mean_bce", ensemble_predicts_mean_bce)
{
    return ensemble_mean(FFNN_LOSS_SIGMOID_BCE, 1);
}

TEST("ensemble_predicts_mean_mse", ensemble_predicts_mean_mse)
{
    return ensemble_mean(FFNN_LOSS_MSE, 3);
}

/* Its evaluation: the mean over rows of -log of the mean probability of the label,
 * and the accuracy of the mean's argmax. */
TEST("ensemble_evaluates_its_mean", ensemble_evaluates_its_mean)
{
    ffnn_model *m[3] = {NULL, NULL, NULL}, *e = NULL;
    CHECK_PASS(make_members(FFNN_LOSS_SOFTMAX_CE, 3, m));
    CHECK_OK(ffnn_model_ensemble((const ffnn_model *const *)m, 3, &e));
    float x[ROWS * 4], p[ROWS * 3];
    int32_t labels[ROWS];
    int cls[ROWS];
    random_inputs(x, ROWS * 4, 9);
    for (int r = 0; r < ROWS; r++)
        labels[r] = r % 3;
    ffnn_dataset *d = NULL;
    CHECK_OK(ffnn_dataset_from_arrays(ROWS, 4, x, labels, 0, NULL, &d));
    CHECK_OK(ffnn_model_predict(e, x, ROWS, p, cls));
    double loss = 0, right = 0;
    for (int r = 0; r < ROWS; r++)
        loss -= log(p[r * 3 + labels[r]]), right += cls[r] == labels[r];
    loss /= ROWS;
    ffnn_metrics mt;
    CHECK_OK(ffnn_model_evaluate_metrics(e, d, 16, &mt, NULL));
    printf("     loss %.6f (from the predictions %.6f), accuracy %.4f (%.4f)\n", mt.loss, loss,
           mt.accuracy, right / ROWS);
    CHECK(fabs(mt.loss - loss) <= 1e-5 * (1 + loss), "loss %.9g, expected %.9g", mt.loss, loss);
    CHECK(mt.accuracy == right / ROWS, "accuracy %g, expected %g", mt.accuracy, right / ROWS);
    ffnn_dataset_free(d);
    members_free(m, e);
    return TEST_PASS;
}

/* Saved and loaded: the same members, predictions, names; a damaged member count is
 * refused naming the key. */
TEST_DIR_CASE("ensemble_file_round_trip", "ensemble", ensemble_file_round_trip)
{
    UNUSED_WHY();
    ffnn_model *m[3] = {NULL, NULL, NULL}, *e = NULL, *back = NULL;
    CHECK_PASS(make_members(FFNN_LOSS_SOFTMAX_CE, 3, m));
    const char *names[3] = {"setosa", "versicolor", "virginica"};
    for (int i = 0; i < 3; i++)
        CHECK_OK(ffnn_model_set_class_names(m[i], names, 3));
    CHECK_OK(ffnn_model_ensemble((const ffnn_model *const *)m, 3, &e));
    char path[600];
    snprintf(path, sizeof path, "%s/ensemble.safetensors", dir);
    CHECK_OK(ffnn_model_save(e, path));
    ffnn_model_file_info info;
    CHECK_OK(ffnn_model_load(path, &back, &info));
    CHECK(ffnn_model_member_count(back) == 3 && info.loss == FFNN_LOSS_SOFTMAX_CE &&
              ffnn_model_layer_count(back) == 0 &&
              ffnn_model_parameter_count(back) == ffnn_model_parameter_count(e),
          "members %d, layers %d", ffnn_model_member_count(back), ffnn_model_layer_count(back));
    char a[256], b[256];
    ffnn_model_arch_string(e, a, sizeof a);
    ffnn_model_arch_string(back, b, sizeof b);
    CHECK(strcmp(a, b) == 0 && strncmp(a, "ensemble of 3: 4-8relu-3, 4-16tanh-3", 36) == 0,
          "arch '%s' then '%s'", a, b);
    CHECK(strcmp(ffnn_model_class_name(back, 2), "virginica") == 0 &&
              strcmp(ffnn_model_class_name(ffnn_model_member(back, 1), 0), "setosa") == 0,
          "class names");
    float x[ROWS * 4], y0[ROWS * 3], y1[ROWS * 3];
    random_inputs(x, ROWS * 4, 3);
    CHECK_OK(ffnn_model_predict(e, x, ROWS, y0, NULL));
    CHECK_OK(ffnn_model_predict(back, x, ROWS, y1, NULL));
    CHECK(memcmp(y0, y1, sizeof y0) == 0, "the loaded ensemble predicts otherwise");
    /* "members":"3" -> "members":"4" (same length): member.3.arch is missing */
    blob f = {NULL, 0};
    CHECK(test_read_file(path, &f) == 0, "read %s", path);
    char *at = strstr((char *)f.data + 8, "\"members\":\"3\"");
    CHECK(at, "no members key in the header");
    at[11] = '4';
    char bad[600];
    snprintf(bad, sizeof bad, "%s/bad.safetensors", dir);
    FILE *w = fopen(bad, "wb");
    CHECK(w && fwrite(f.data, 1, f.size, w) == f.size && fclose(w) == 0, "write %s", bad);
    free(f.data);
    ffnn_model *none = NULL;
    CHECK(ffnn_model_load(bad, &none, NULL) == FFNN_ERR_FORMAT && !none &&
              strstr(ffnn_last_error(), "member.3.arch"),
          "damaged member count: %s", ffnn_last_error());
    ffnn_model_free(back);
    members_free(m, e);
    return TEST_PASS;
}

/* Refused: training an ensemble, its network-only forward, members that do not fit. */
TEST("ensemble_refuses", ensemble_refuses)
{
    ffnn_model *m[3] = {NULL, NULL, NULL}, *e = NULL, *odd = NULL;
    CHECK_PASS(make_members(FFNN_LOSS_SOFTMAX_CE, 3, m));
    CHECK_OK(ffnn_model_ensemble((const ffnn_model *const *)m, 3, &e));
    ffnn_dataset *d = NULL;
    CHECK_OK(ffnn_dataset_from_arrays(3, 4, (const float[12]){0}, (const int32_t[3]){0, 1, 2}, 0,
                                      NULL, &d));
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    ffnn_trainer *t = NULL;
    CHECK(ffnn_trainer_create(e, d, &cfg, &t) == FFNN_ERR_INVALID_ARGUMENT && !t &&
              strstr(ffnn_last_error(), "an ensemble model (3 members) has no single network"),
          "training an ensemble: %s", ffnn_last_error());
    CHECK(ffnn_train(e, d, NULL, &cfg, NULL) == FFNN_ERR_INVALID_ARGUMENT, "ffnn_train");
    float x[4] = {0}, y[3];
    CHECK(ffnn_model_forward(e, x, 1, y) == FFNN_ERR_INVALID_ARGUMENT, "forward");
    CHECK(ffnn_model_init(e, 1) == FFNN_ERR_INVALID_ARGUMENT, "init");
    CHECK(ffnn_model_set_loss(e, FFNN_LOSS_MSE) == FFNN_ERR_INVALID_ARGUMENT, "set_loss");
    CHECK_OK(ffnn_model_create("4-8relu-2", &odd));
    CHECK_OK(ffnn_model_set_loss(odd, FFNN_LOSS_SOFTMAX_CE));
    const ffnn_model *mixed[2] = {m[0], odd};
    ffnn_model *none = NULL;
    CHECK(ffnn_model_ensemble(mixed, 2, &none) == FFNN_ERR_INVALID_ARGUMENT && !none &&
              strstr(ffnn_last_error(), "member 1 takes 4 inputs and gives 2 outputs"),
          "widths: %s", ffnn_last_error());
    const ffnn_model *nested[2] = {m[0], e};
    CHECK(ffnn_model_ensemble(nested, 2, &none) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "member 1 is an ensemble"), "nested: %s",
          ffnn_last_error());
    CHECK(ffnn_model_ensemble(mixed, 0, &none) == FFNN_ERR_INVALID_ARGUMENT, "count 0");
    ffnn_model_free(odd);
    ffnn_dataset_free(d);
    members_free(m, e);
    return TEST_PASS;
}

/* ffnn sweep --save-all DIR --ensemble 2 FILE: DIR/conf-<N> for every configuration,
 * FILE the ensemble of the two best (its predictions the mean of those two conf
 * files'); then ffnn predict, eval, info and export on FILE. A DIR holding another file
 * than conf-<N>.safetensors is refused before training. */
TEST_DIR_CASE("ensemble_cli_sweep_predict", "ensemble", ensemble_cli_sweep_predict)
{
    UNUSED_WHY();
    char all[600], ens[600], out[600], csv[600], data[600];
    snprintf(all, sizeof all, "%s/all", dir);
    snprintf(ens, sizeof ens, "%s/ens.safetensors", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(csv, sizeof csv, "%s/in.csv", dir);
    snprintf(data, sizeof data, "%s/data.csv", dir);
    const char *args[] = {"sweep", "--data", "synth:points:300", "--arch", "2-8relu-2",
                          "--epochs", "3", "--lr", "0.01,0.1,0.3", "--device", "cpu",
                          "--save-all", all, "--ensemble", "2", ens, NULL};
    CHECK(cli_run(args, out, NULL) == 0, "ffnn sweep failed (see %s)", out);
    FILE *f = fopen(out, "r");
    char line[1024];
    long long c1 = 0, c2 = 0;
    while (f && fgets(line, sizeof line, f)) {
        const char *at = strstr(line, "(configurations ");
        if (at)
            sscanf(at + 16, "%lld, %lld", &c1, &c2);
    }
    if (f)
        fclose(f);
    CHECK(c1 >= 1 && c1 <= 3 && c2 >= 1 && c2 <= 3 && c1 != c2, "no ensemble line (see %s)",
          out);
    ffnn_model *e = NULL, *a = NULL, *b = NULL;
    char pa[700], pb[700], p3[700];
    snprintf(pa, sizeof pa, "%s/conf-%lld.safetensors", all, c1);
    snprintf(pb, sizeof pb, "%s/conf-%lld.safetensors", all, c2);
    snprintf(p3, sizeof p3, "%s/conf-%lld.safetensors", all, 6 - c1 - c2);
    struct stat sb;
    CHECK(stat(p3, &sb) == 0, "--save-all wrote no %s", p3);
    CHECK_OK(ffnn_model_load(ens, &e, NULL));
    CHECK_OK(ffnn_model_load(pa, &a, NULL));
    CHECK_OK(ffnn_model_load(pb, &b, NULL));
    float x[ROWS * 2], ya[ROWS * 2], yb[ROWS * 2], ye[ROWS * 2];
    random_inputs(x, ROWS * 2, 7);
    CHECK_OK(ffnn_model_predict(a, x, ROWS, ya, NULL));
    CHECK_OK(ffnn_model_predict(b, x, ROWS, yb, NULL));
    CHECK_OK(ffnn_model_predict(e, x, ROWS, ye, NULL));
    for (int k = 0; k < ROWS * 2; k++)
        CHECK(ye[k] == (ya[k] + yb[k]) / 2.0f, "value %d: %g, the mean of %g and %g", k,
              (double)ye[k], (double)ya[k], (double)yb[k]);
    FILE *w = fopen(csv, "w"), *w2 = fopen(data, "w");
    CHECK(w && w2, "write %s", csv);
    for (int r = 0; r < 5; r++) {
        fprintf(w, "%g,%g\n", (double)x[2 * r], (double)x[2 * r + 1]);
        fprintf(w2, "%g,%g,%d\n", (double)x[2 * r], (double)x[2 * r + 1], r % 2);
    }
    fclose(w);
    fclose(w2);
    const char *predict[] = {"predict", "--model", ens, "--input", csv, NULL};
    CHECK(cli_run(predict, out, NULL) == 0, "ffnn predict of the ensemble (see %s)", out);
    int lines = 0;
    f = fopen(out, "r");
    while (f && fgets(line, sizeof line, f))
        lines += strchr(line, ',') != NULL;
    if (f)
        fclose(f);
    CHECK(lines == 5, "%d prediction lines, expected 5 (see %s)", lines, out);
    const char *eval[] = {"eval", "--model", ens, "--data", data, NULL};
    CHECK(cli_run(eval, out, NULL) == 0 && file_contains(out, "test_acc"),
          "ffnn eval of the ensemble (see %s)", out);
    const char *info[] = {"info", ens, NULL};
    CHECK(cli_run(info, out, NULL) == 0 && file_contains(out, "ensemble of 2"),
          "ffnn info of the ensemble (see %s)", out);
    char onnx[700];
    snprintf(onnx, sizeof onnx, "%s/ens.onnx", dir);
    const char *export[] = {"export", "--model", ens, "--onnx", onnx, NULL};
    int rc = cli_run(export, out, NULL);
    CHECK(rc == 0 || file_contains(out, "protobuf-c"), "ffnn export of the ensemble (see %s)",
          out);
    printf("     ensemble of configurations %lld and %lld: the mean of their files; ffnn "
           "predict, eval, info%s ran\n", c1, c2, rc == 0 ? ", export" : "");
    /* a directory with a file of its own is refused before training */
    char foreign[700];
    snprintf(foreign, sizeof foreign, "%s/notes.txt", all);
    w = fopen(foreign, "w");
    CHECK(w && fclose(w) == 0, "write %s", foreign);
    const char *again[] = {"sweep", "--data", "synth:points:300", "--arch", "2-8relu-2",
                           "--epochs", "1", "--lr", "0.01,0.1,0.3", "--device", "cpu",
                           "--save-all", all, NULL};
    CHECK(cli_run(again, out, NULL) == 2 && file_contains(out, "'notes.txt', not written by") &&
              !file_contains(out, "at a time"),
          "--save-all into a directory with a foreign file (see %s)", out);
    test_remove_dir(all); /* test_in_tmpdir removes files, not directories */
    ffnn_model_free(a);
    ffnn_model_free(b);
    ffnn_model_free(e);
    return TEST_PASS;
}
