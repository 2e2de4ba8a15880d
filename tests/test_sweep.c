/* test_sweep.c - many models in one process: every model of a sweep ends with
 * the parameters of its lone run (ffnn_train with the same config and the omp
 * backend's default threads), bit for bit, across optimizers, seeds, learning
 * rates and early stopping; bad sweeps are refused by name. */
#include <string.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "test_fixtures.h"
#include "cli_run.h"
#include "ffnn.h"
#include "test_files.h"

#define SWEEP_N 8

static void sweep_configs(ffnn_train_config *cfg)
{
    const ffnn_optimizer opt[4] = {FFNN_OPT_SGD, FFNN_OPT_MOMENTUM, FFNN_OPT_ADAM,
                                   FFNN_OPT_ADAMW};
    const float lr[4] = {0.1f, 0.05f, 0.01f, 0.003f};
    for (int i = 0; i < SWEEP_N; i++) {
        cfg[i] = ffnn_train_config_default();
        cfg[i].device = FFNN_DEVICE_CPU;
        cfg[i].optimizer = opt[i % 4];
        cfg[i].learning_rate = lr[i % 4];
        cfg[i].seed = 1 + (uint64_t)(i / 4);
        cfg[i].weight_decay = i % 3 == 2 ? 1e-3f : 0.0f;
        cfg[i].batch_size = i % 2 ? 16 : 32;
        cfg[i].epochs = 6;
        if (i == 6) /* adam at a rate that overshoots: its best epoch is not its last */
            cfg[i].learning_rate = 0.3f;
        cfg[i].early_stopping = i == 5 ? 1 : i == 6 ? 100 : 0; /* one stops early; one
                                                              keeps its best epoch */
    }
}

/* What both lone-run tests start from: the points split 3:1, sweep_configs, and
 * for each model i two copies of the net initialised with its seed (m[i] for the
 * sweep, lone[i] for its lone run), every model on train and val; the sweep of the
 * m[i] on 3 lanes. */
typedef struct sweep_fixture {
    ffnn_dataset *all, *train, *val;
    ffnn_train_config cfg[SWEEP_N];
    ffnn_model *m[SWEEP_N], *lone[SWEEP_N];
    const ffnn_dataset *trains[SWEEP_N], *vals[SWEEP_N];
    ffnn_sweep *s;
} sweep_fixture;

static test_result sweep_setup(sweep_fixture *f)
{
    memset(f, 0, sizeof *f);
    CHECK_OK(ffnn_dataset_synthetic("synth:points:800", 5, &f->all, NULL));
    CHECK_OK(ffnn_dataset_split(f->all, 0.25, 1, &f->train, &f->val));
    sweep_configs(f->cfg);
    for (int i = 0; i < SWEEP_N; i++) {
        CHECK_OK(ffnn_model_create("2-16relu-16tanh-2", &f->m[i]));
        CHECK_OK(ffnn_model_init(f->m[i], f->cfg[i].seed));
        CHECK_OK(ffnn_model_create("2-16relu-16tanh-2", &f->lone[i]));
        CHECK_OK(ffnn_model_init(f->lone[i], f->cfg[i].seed));
        f->trains[i] = f->train, f->vals[i] = f->val;
    }
    CHECK_OK(ffnn_sweep_create(f->m, f->cfg, SWEEP_N, f->trains, f->vals, 3, &f->s));
    return TEST_PASS;
}

/* Model i's lone run of `epochs` epochs: cfg[i] on all cores (the omp kernels' bits
 * do not depend on it), with val when it stops early. */
static ffnn_status lone_run(sweep_fixture *f, int i, int epochs)
{
    ffnn_train_config alone = f->cfg[i];
    alone.threads = 0;
    alone.epochs = epochs;
    return ffnn_train(f->lone[i], f->train, f->cfg[i].early_stopping ? f->val : NULL, &alone,
                      NULL);
}

/* After the sweep is freed: the first model whose parameters differ from its lone
 * run's, or -1. */
static int first_unlike_lone(const sweep_fixture *f)
{
    for (int i = 0; i < SWEEP_N; i++) {
        size_t n = ffnn_model_parameter_count(f->m[i]);
        if (memcmp(ffnn_model_parameters(f->m[i]), ffnn_model_parameters(f->lone[i]),
                   n * sizeof(float)) != 0)
            return i;
    }
    return -1;
}

static void sweep_fixture_free(sweep_fixture *f)
{
    ffnn_sweep_free(f->s);
    for (int i = 0; i < SWEEP_N; i++)
        TEST_FREE(f->m[i], f->lone[i]);
    TEST_FREE(f->train, f->val, f->all);
}

TEST("sweep_models_equal_lone_runs", sweep_models_equal_lone_runs)
{
    sweep_fixture f;
    CHECK_PASS(sweep_setup(&f));
    ffnn_sweep *s = f.s;
    CHECK(ffnn_sweep_count(s) == SWEEP_N && ffnn_sweep_lanes(s) == 3, "count %zu lanes %d",
          ffnn_sweep_count(s), ffnn_sweep_lanes(s));
    size_t training = SWEEP_N;
    int epochs = 0;
    while (training > 0) {
        CHECK_OK(ffnn_sweep_run_epoch(s, &training));
        CHECK(++epochs <= 6, "the sweep ran past every model's epochs");
    }
    int stopped_early = 0;
    for (int i = 0; i < SWEEP_N; i++) {
        ffnn_sweep_state st;
        CHECK_OK(ffnn_sweep_model_state(s, i, &st));
        CHECK(!st.training, "model %d still training", i);
        stopped_early += st.epochs_run < f.cfg[i].epochs;
        CHECK_OK(lone_run(&f, i, f.cfg[i].epochs));
    }
    ffnn_sweep_free(s);
    f.s = NULL;
    const int i = first_unlike_lone(&f);
    CHECK(i < 0, "model %d (%s, lr %g, seed %llu) differs from its lone run", i,
          ffnn_optimizer_name(f.cfg[i].optimizer), (double)f.cfg[i].learning_rate,
          (unsigned long long)f.cfg[i].seed);
    printf("     %d models, 3 lanes: each equals its lone run bit for bit (%d stopped early)\n",
           SWEEP_N, stopped_early);
    sweep_fixture_free(&f);
    return TEST_PASS;
}

/* Successive halving from C (ETA 2, rungs 1, 2, 4 of 6 epochs): at each rung the
 * models still training ranked by best_loss, the best ceil(n/2) kept, the others
 * stopped; each model's last state equals its lone run of epochs_run epochs. */
TEST("sweep_halving_equals_lone_runs", sweep_halving_equals_lone_runs)
{
    sweep_fixture f;
    CHECK_PASS(sweep_setup(&f));
    ffnn_sweep *s = f.s;
    CHECK(ffnn_sweep_stop_model(s, SWEEP_N) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "model 8 of 8"),
          "stop out of range: %s", ffnn_last_error());
    size_t training = SWEEP_N;
    for (int e = 1, rung = 1; training > 0; e++) {
        CHECK_OK(ffnn_sweep_run_epoch(s, &training));
        CHECK(e <= 6, "the sweep ran past every model's epochs");
        if (e != rung || training == 0)
            continue;
        rung *= 2;
        int alive[SWEEP_N], n = 0;
        double loss[SWEEP_N];
        for (int i = 0; i < SWEEP_N; i++) {
            ffnn_sweep_state st;
            CHECK_OK(ffnn_sweep_model_state(s, i, &st));
            if (st.training)
                loss[n] = st.best_loss == st.best_loss ? st.best_loss : INFINITY, alive[n++] = i;
        }
        for (int a = 1; a < n; a++) /* insertion sort by loss, ties by index */
            for (int b = a; b > 0 && loss[b] < loss[b - 1]; b--) {
                double t = loss[b];
                int ti = alive[b];
                loss[b] = loss[b - 1], alive[b] = alive[b - 1];
                loss[b - 1] = t, alive[b - 1] = ti;
            }
        int keep = (n + 1) / 2;
        for (int q = keep; q < n; q++)
            CHECK_OK(ffnn_sweep_stop_model(s, alive[q]));
        CHECK_OK(ffnn_sweep_stop_model(s, alive[n - 1])); /* twice: nothing happens */
        size_t left = 0;
        for (int i = 0; i < SWEEP_N; i++) {
            ffnn_sweep_state st;
            CHECK_OK(ffnn_sweep_model_state(s, i, &st));
            left += (size_t)st.training;
        }
        CHECK(left == (size_t)keep, "rung at epoch %d: %zu survivors of %d, not %d", e, left,
              n, keep);
        printf("     rung at epoch %d: %d training, %d go on\n", e, n, keep);
        training = left;
    }
    int epochs[SWEEP_N];
    for (int i = 0; i < SWEEP_N; i++) {
        ffnn_sweep_state st;
        CHECK_OK(ffnn_sweep_model_state(s, i, &st));
        epochs[i] = st.epochs_run;
        CHECK_OK(lone_run(&f, i, st.epochs_run));
    }
    ffnn_sweep_free(s);
    f.s = NULL;
    const int i = first_unlike_lone(&f);
    CHECK(i < 0, "model %d (stopped after %d epochs) differs from its lone run", i,
          i < 0 ? 0 : epochs[i]);
    printf("     epochs run: %d %d %d %d %d %d %d %d; each equals its lone run bit for bit\n",
           epochs[0], epochs[1], epochs[2], epochs[3], epochs[4], epochs[5], epochs[6],
           epochs[7]);
    sweep_fixture_free(&f);
    return TEST_PASS;
}

TEST("sweep_refuses", sweep_refuses)
{
    ffnn_dataset *train = NULL;
    ffnn_model *m = NULL;
    CHECK_OK(test_synth_and_model("synth:points:100", "2-8relu-2", &train, &m));
    ffnn_train_config cfg[2] = {ffnn_train_config_default(), ffnn_train_config_default()};
    cfg[0].device = cfg[1].device = FFNN_DEVICE_CPU;
    ffnn_model *same[2] = {m, m};
    const ffnn_dataset *trains[2] = {train, train};
    ffnn_sweep *s = NULL;
    CHECK(ffnn_sweep_create(same, cfg, 2, trains, NULL, 0, &s) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "same object") && !s,
          "one model twice: %s", ffnn_last_error());
    CHECK(ffnn_sweep_create(same, cfg, 0, trains, NULL, 0, &s) == FFNN_ERR_INVALID_ARGUMENT,
          "count 0");
    cfg[0].learning_rate = -1;
    ffnn_model *m2 = NULL;
    CHECK_OK(ffnn_model_create("2-8relu-2", &m2));
    ffnn_model *two[2] = {m2, m};
    CHECK(ffnn_sweep_create(two, cfg, 2, trains, NULL, 0, &s) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "model 0") && !s,
          "a bad config names its model: %s", ffnn_last_error());
    /* strategy batched: a sweep's engine on cuda; a trainer alone refuses it */
    cfg[0] = cfg[1] = ffnn_train_config_default();
    cfg[0].strategy = cfg[1].strategy = FFNN_STRATEGY_BATCHED;
    cfg[0].device = cfg[1].device = FFNN_DEVICE_CPU;
    CHECK(ffnn_sweep_create(two, cfg, 2, trains, NULL, 0, &s) == FFNN_ERR_UNSUPPORTED &&
              strstr(ffnn_last_error(), "device cuda") && !s,
          "batched on the cpu: %s", ffnn_last_error());
    cfg[0].device = cfg[1].device = FFNN_DEVICE_CUDA;
    cfg[1].optimizer = FFNN_OPT_ADAM;
    CHECK(ffnn_sweep_create(two, cfg, 2, trains, NULL, 0, &s) == FFNN_ERR_UNSUPPORTED &&
              strstr(ffnn_last_error(), "model 1: optimizer is not sgd") && !s,
          "batched adam: %s", ffnn_last_error());
    ffnn_trainer *t = NULL;
    cfg[0].device = FFNN_DEVICE_CPU;
    CHECK(ffnn_trainer_create(m2, train, &cfg[0], &t) == FFNN_ERR_UNSUPPORTED &&
              strstr(ffnn_last_error(), "models of a sweep") && !t,
          "a trainer of strategy batched: %s", ffnn_last_error());
    TEST_FREE(m, m2, train);
    return TEST_PASS;
}

/* ffnn sweep picks its best configuration and --save-best writes exactly the file
 * `ffnn train --save` writes for that configuration (same bytes); the ranked
 * table, --csv and --json agree; run-only options are refused by name. */
TEST_DIR_CASE("sweep_cli_best_equals_ffnn_train", "sweep", sweep_cli_best_equals_ffnn_train)
{
    const char *csv = TEST_SKLEARN_DATA "iris.csv";
    SKIP_WITHOUT_SKLEARN_FILE(csv);
    char best[600], lone[600], table[600], out[600], json[600];
    snprintf(best, sizeof best, "%s/best.safetensors", dir);
    snprintf(lone, sizeof lone, "%s/lone.safetensors", dir);
    snprintf(table, sizeof table, "%s/table.csv", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(json, sizeof json, "%s/json.txt", dir);
    const char *common[] = {"--data", csv, "--skip-rows", "1", "--val-split", "0.2",
                            "--test-split", "0.2", "--standardize", "--epochs", "30",
                            "--batch", "16", "--device", "cpu"};
    const char *sweep[40] = {"sweep"}, *again[40] = {"sweep"};
    int n = 1;
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
        sweep[n] = again[n] = common[i], n++;
    const char *axes[] = {"--lr", "0.01,0.1", "--optimizer", "sgd,momentum", "--seed", "1"};
    for (size_t i = 0; i < sizeof axes / sizeof axes[0]; i++)
        sweep[n] = again[n] = axes[i], n++;
    int m = n;
    sweep[n++] = "--save-best", sweep[n++] = best, sweep[n++] = "--csv", sweep[n++] = table;
    again[m++] = "--json";
    CHECK(cli_run(sweep, out, NULL) == 0, "ffnn sweep failed (see %s)", out);
    CHECK(cli_run(again, json, NULL) == 0, "ffnn sweep --json failed (see %s)", json);
    CHECK(file_contains(out, "4 configurations") && file_contains(table, "rank,configuration"),
          "no table (see %s)", out);
    /* the best configuration, from the JSON's first object */
    FILE *f = fopen(json, "r");
    char line[2048], lr[32] = "", opt[32] = "";
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "\"rank\": 1,")) {
            const char *l = strstr(line, "\"lr\": "), *o = strstr(line, "\"optimizer\": \"");
            if (l)
                sscanf(l + 6, "%31[^,}]", lr);
            if (o)
                sscanf(o + 14, "%31[^\"]", opt);
        }
    if (f)
        fclose(f);
    CHECK(lr[0] && opt[0], "no rank 1 in %s", json);
    const char *train[40] = {"train"};
    int t = 1;
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
        train[t++] = common[i];
    train[t++] = "--lr", train[t++] = lr, train[t++] = "--optimizer", train[t++] = opt;
    train[t++] = "--seed", train[t++] = "1", train[t++] = "--save", train[t++] = lone;
    CHECK(cli_run(train, out, NULL) == 0, "ffnn train failed (see %s)", out);
    int same = test_same_files(best, lone);
    CHECK(same >= 0, "model files");
    CHECK(same, "--save-best (lr %s, %s) differs from ffnn train --save", lr, opt);
    printf("     best: lr %s, %s; its file equals ffnn train --save's byte for byte\n", lr, opt);
    const char *bad[] = {"sweep", "--data", csv, "--skip-rows", "1", "--lr", "0.1,0.2",
                         "--save", lone, NULL};
    CHECK(cli_run(bad, out, NULL) == 2 && file_contains(out, "--save (use --save-best)"),
          "--save in a sweep (see %s)", out);
    const char *range[] = {"sweep", "--data", csv, "--lr", "0.001:0.1", NULL};
    CHECK(cli_run(range, out, NULL) == 2 && file_contains(out, "ranges need --random"),
          "a range without --random (see %s)", out);
    return TEST_PASS;
}

/* ffnn sweep --cv K gives each configuration the mean over its folds that ffnn
 * train --cv K prints for it (the same folds, the same models). */
TEST_DIR_CASE("sweep_cli_cv_equals_ffnn_train_cv", "sweep", sweep_cli_cv_equals_ffnn_train_cv)
{
    const char *csv = TEST_SKLEARN_DATA "wine_data.csv";
    SKIP_WITHOUT_SKLEARN_FILE(csv);
    char sweep_out[600], train_out[600], line[2048];
    snprintf(sweep_out, sizeof sweep_out, "%s/sweep.txt", dir);
    snprintf(train_out, sizeof train_out, "%s/train.txt", dir);
    const char *sweep[] = {"sweep", "--data", csv, "--skip-rows", "1", "--cv", "3",
                           "--standardize", "--epochs", "20", "--batch", "16", "--lr",
                           "0.01,0.05", "--device", "cpu", "--json", "--quiet", NULL};
    const char *train[] = {"train", "--data", csv, "--skip-rows", "1", "--cv", "3",
                           "--standardize", "--epochs", "20", "--batch", "16", "--lr", "0.05",
                           "--device", "cpu", "--json", NULL};
    CHECK(cli_run(sweep, sweep_out, NULL) == 0, "ffnn sweep --cv failed (see %s)", sweep_out);
    CHECK(cli_run(train, train_out, NULL) == 0, "ffnn train --cv failed (see %s)", train_out);
    double sweep_loss = -1, sweep_acc = -1, train_loss = -2, train_acc = -2;
    FILE *f = fopen(sweep_out, "r");
    while (f && fgets(line, sizeof line, f)) {
        const char *l = strstr(line, "\"val_loss\": "), *a = strstr(line, "\"val_accuracy\": ");
        if (strstr(line, "\"lr\": 0.05") && l && a)
            sweep_loss = strtod(l + 12, NULL), sweep_acc = strtod(a + 16, NULL);
    }
    if (f)
        fclose(f);
    f = fopen(train_out, "r");
    while (f && fgets(line, sizeof line, f)) {
        const char *l = strstr(line, "\"mean\": {\"loss\": "), *a = strstr(line, "\"accuracy\": ");
        if (l && a)
            train_loss = strtod(l + 17, NULL), train_acc = strtod(a + 12, NULL);
    }
    if (f)
        fclose(f);
    printf("     lr 0.05, 3 folds: sweep loss %.6g accuracy %.6g; ffnn train --cv %.6g %.6g\n",
           sweep_loss, sweep_acc, train_loss, train_acc);
    /* both print 6 significant digits of the same doubles */
    CHECK(fabs(sweep_loss - train_loss) <= 1e-5 * train_loss &&
              fabs(sweep_acc - train_acc) <= 1e-5,
          "the sweep's folds differ from ffnn train --cv's");
    return TEST_PASS;
}

/* SIGINT during a sweep: the models stop after the current epoch, the table and
 * --csv are written for the models as they are, exit status 130. */
TEST_DIR_CASE("sweep_cli_sigint_ranks_what_it_has", "sweep", sweep_cli_sigint_ranks_what_it_has)
{
    UNUSED_WHY();
    char out[600], table[600];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(table, sizeof table, "%s/table.csv", dir);
    const char *args[] = {"sweep", "--data", "synth:points:2000", "--arch", "2-16relu-2",
                          "--epochs", "1000000", "--lr", "0.01,0.1", "--device", "cpu",
                          "--csv", table, NULL};
    cli_run_opts opts = {0};
    opts.wait_for = "at a time";
    opts.signal = SIGINT;
    opts.delay_ms = 500;
    int rc = cli_run(args, out, &opts);
    CHECK(rc == 130, "exit status %d, not 130 (see %s)", rc, out);
    CHECK(file_contains(out, "SIGINT after epoch") && file_contains(out, "lr=0.1"),
          "no stop line or table (see %s)", out);
    CHECK(file_contains(table, "rank,configuration") && file_contains(table, "\"lr=0.01\""),
          "--csv not written after the interrupt (see %s)", table);
    return TEST_PASS;
}

/* ffnn sweep --halving 2 --min-epochs 2 of 8 epochs with --cv 2: 4 configurations,
 * rungs at 2 and 4: two dropped at 2, one at 4, one trains all 8; ETA 1 refused. */
TEST_DIR_CASE("sweep_cli_halving_rungs", "sweep", sweep_cli_halving_rungs)
{
    UNUSED_WHY();
    char out[600];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    const char *args[] = {"sweep", "--data", "synth:points:400", "--arch", "2-8relu-2",
                          "--cv", "2", "--epochs", "8", "--lr", "0.001,0.01,0.03,0.1",
                          "--device", "cpu", "--halving", "2", "--min-epochs", "2", "--json",
                          NULL};
    CHECK(cli_run(args, out, NULL) == 0, "ffnn sweep --halving failed (see %s)", out);
    CHECK(file_contains(out, "rung at epoch 2: 4 configurations") &&
              file_contains(out, "rung at epoch 4: 2 configurations"),
          "no rung lines (see %s)", out);
    FILE *f = fopen(out, "r");
    char line[2048];
    int at2 = 0, at4 = 0, full = 0;
    while (f && fgets(line, sizeof line, f)) {
        at2 += strstr(line, "\"epochs\": 2,") && strstr(line, "\"dropped_at\": 2");
        at4 += strstr(line, "\"epochs\": 4,") && strstr(line, "\"dropped_at\": 4");
        full += strstr(line, "\"epochs\": 8,") && !strstr(line, "dropped_at");
    }
    if (f)
        fclose(f);
    CHECK(at2 == 2 && at4 == 1 && full == 1, "dropped at 2: %d, at 4: %d, full: %d (see %s)",
          at2, at4, full, out);
    const char *bad[] = {"sweep", "--data", "synth:points:100", "--halving", "1", NULL};
    CHECK(cli_run(bad, out, NULL) == 2 && file_contains(out, "--halving expects an integer"),
          "--halving 1 (see %s)", out);
    return TEST_PASS;
}

/* ffnn sweep --save-all DIR: DIR made, one DIR/conf-<N>.safetensors per
 * configuration, the best one the same bytes as --save-best; a second run into
 * DIR replaces them; a DIR with another file, or with conf files beyond the
 * sweep's count, is refused before training. */
TEST_DIR_CASE("sweep_cli_save_all", "sweep", sweep_cli_save_all)
{
    UNUSED_WHY();
    char all[600], best[600], out[600], path[700];
    snprintf(all, sizeof all, "%s/all", dir);
    snprintf(best, sizeof best, "%s/best.safetensors", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    const char *args[] = {"sweep", "--data", "synth:points:300", "--arch", "2-8relu-2",
                          "--epochs", "3", "--lr", "0.01,0.1,0.3", "--device", "cpu",
                          "--save-all", all, "--save-best", best, "--json", NULL};
    CHECK(cli_run(args, out, NULL) == 0, "ffnn sweep --save-all failed (see %s)", out);
    long long first = 0;
    FILE *f = fopen(out, "r");
    char line[2048];
    while (f && fgets(line, sizeof line, f)) {
        const char *at = strstr(line, "\"rank\": 1, \"configuration\": ");
        if (at)
            sscanf(at, "\"rank\": 1, \"configuration\": %lld", &first);
    }
    if (f)
        fclose(f);
    CHECK(first >= 1 && first <= 3, "no rank 1 (see %s)", out);
    for (int k = 1; k <= 3; k++) {
        snprintf(path, sizeof path, "%s/conf-%d.safetensors", all, k);
        ffnn_model *m = NULL;
        CHECK_OK(ffnn_model_load(path, &m, NULL));
        ffnn_model_free(m);
    }
    snprintf(path, sizeof path, "%s/conf-%lld.safetensors", all, first);
    int same = test_same_files(path, best);
    CHECK(same >= 0, "read %s", path);
    CHECK(same, "conf-%lld.safetensors differs from --save-best", first);
    CHECK(cli_run(args, out, NULL) == 0 && file_contains(out, "will be replaced"),
          "a second --save-all into the same directory (see %s)", out);
    const char *two[] = {"sweep", "--data", "synth:points:300", "--arch", "2-8relu-2",
                         "--epochs", "1", "--lr", "0.01,0.1", "--device", "cpu",
                         "--save-all", all, NULL};
    CHECK(cli_run(two, out, NULL) == 2 && file_contains(out, "conf-3.safetensors' of an "
                                                         "earlier sweep"),
          "conf files beyond the sweep's count (see %s)", out);
    char foreign[700];
    snprintf(foreign, sizeof foreign, "%s/notes.txt", all);
    FILE *w = fopen(foreign, "w");
    CHECK(w && fclose(w) == 0, "write %s", foreign);
    CHECK(cli_run(args, out, NULL) == 2 && file_contains(out, "'notes.txt', not written by") &&
              !file_contains(out, "at a time"),
          "a directory with a file of its own (see %s)", out);
    printf("     3 files; conf-%lld (rank 1) = --save-best byte for byte; refusals named\n",
           first);
    for (int k = 1; k <= 3; k++) { /* test_in_tmpdir removes files, not directories */
        snprintf(path, sizeof path, "%s/conf-%d.safetensors", all, k);
        remove(path);
    }
    remove(foreign);
    rmdir(all);
    return TEST_PASS;
}

/* --gpus N / ffnn_sweep_create_gpus: N greater than the GPUs there are is refused,
 * saying how many there are (on a machine without a GPU: every N); not on the cpu. */
TEST_DIR_CASE("sweep_gpus_refused", "sweep", sweep_gpus_refused)
{
    UNUSED_WHY();
    ffnn_dataset *train = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:points:100", 1, &train, NULL));
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("2-8relu-2", &m));
    ffnn_train_config cfg = ffnn_train_config_default();
    const ffnn_dataset *trains[1] = {train};
    ffnn_sweep *s = NULL;
    int visible = ffnn_cuda_device_count();
    cfg.device = FFNN_DEVICE_CPU;
    CHECK(ffnn_sweep_create_gpus(&m, &cfg, 1, trains, NULL, 0, 1, &s) ==
                  FFNN_ERR_INVALID_ARGUMENT && strstr(ffnn_last_error(), "device cuda") && !s,
          "gpus on the cpu: %s", ffnn_last_error());
    cfg.device = FFNN_DEVICE_CUDA;
    char want[128], asked[16], out[600];
    snprintf(want, sizeof want, "%d CUDA GPU%s visible", visible, visible == 1 ? " is" : "s are");
    CHECK(ffnn_sweep_create_gpus(&m, &cfg, 1, trains, NULL, 0, visible + 1, &s) ==
                  FFNN_ERR_UNSUPPORTED && strstr(ffnn_last_error(), want) && !s,
          "gpus %d with %d visible: %s", visible + 1, visible, ffnn_last_error());
    snprintf(asked, sizeof asked, "%d", visible + 1);
    snprintf(want, sizeof want, "--gpus %d: %d CUDA GPU%s found", visible + 1, visible,
             visible == 1 ? " was" : "s were");
    snprintf(out, sizeof out, "%s/out.txt", dir);
    const char *args[] = {"sweep", "--data", "synth:points:100", "--lr", "0.1,0.2",
                          "--device", "cuda", "--gpus", asked, NULL};
    CHECK(cli_run(args, out, NULL) == 1 && file_contains(out, want) &&
              !file_contains(out, "at a time"),
          "ffnn sweep --gpus %s (see %s)", asked, out);
    const char *cpu[] = {"sweep", "--data", "synth:points:100", "--lr", "0.1,0.2",
                         "--device", "cpu", "--gpus", "1", NULL};
    CHECK(cli_run(cpu, out, NULL) == 2 && file_contains(out, "excludes --device cpu"),
          "ffnn sweep --gpus 1 --device cpu (see %s)", out);
    printf("     %d GPU%s here: --gpus %d refused (\"%s\")\n", visible, visible == 1 ? "" : "s",
           visible + 1, want);
    TEST_FREE(m, train);
    return TEST_PASS;
}
