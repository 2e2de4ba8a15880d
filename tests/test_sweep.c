/* test_sweep.c - many models in one process: every model of a sweep ends with
 * the parameters of its lone run (ffnn_train with the same config and the omp
 * backend's default threads), bit for bit, across optimizers, seeds, learning
 * rates and early stopping; bad sweeps are refused by name. */
#include <string.h>

#include "check.h"
#include "ffnn.h"

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
        cfg[i].early_stopping = i == 5 ? 1 : 0; /* one model stops early */
    }
}

static test_result sweep_models_equal_lone_runs(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    ffnn_dataset *all = NULL, *train = NULL, *val = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:points:800", 5, &all, NULL));
    CHECK_OK(ffnn_dataset_split(all, 0.25, 1, &train, &val));
    ffnn_train_config cfg[SWEEP_N];
    sweep_configs(cfg);
    ffnn_model *m[SWEEP_N] = {0}, *lone[SWEEP_N] = {0};
    for (int i = 0; i < SWEEP_N; i++) {
        CHECK_OK(ffnn_model_create("2-16relu-16tanh-2", &m[i]));
        CHECK_OK(ffnn_model_init(m[i], cfg[i].seed));
        CHECK_OK(ffnn_model_create("2-16relu-16tanh-2", &lone[i]));
        CHECK_OK(ffnn_model_init(lone[i], cfg[i].seed));
    }
    ffnn_sweep *s = NULL;
    CHECK_OK(ffnn_sweep_create(m, cfg, SWEEP_N, train, val, 3, &s));
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
        stopped_early += st.epochs_run < cfg[i].epochs;
        ffnn_train_config alone = cfg[i];
        alone.threads = 0; /* all cores: the omp kernels' bits do not depend on it */
        CHECK_OK(ffnn_train(lone[i], train, cfg[i].early_stopping ? val : NULL, &alone, NULL));
    }
    ffnn_sweep_free(s);
    for (int i = 0; i < SWEEP_N; i++) {
        size_t n = ffnn_model_parameter_count(m[i]);
        CHECK(memcmp(ffnn_model_parameters(m[i]), ffnn_model_parameters(lone[i]),
                     n * sizeof(float)) == 0,
              "model %d (%s, lr %g, seed %llu) differs from its lone run", i,
              ffnn_optimizer_name(cfg[i].optimizer), (double)cfg[i].learning_rate,
              (unsigned long long)cfg[i].seed);
        ffnn_model_free(m[i]);
        ffnn_model_free(lone[i]);
    }
    printf("     %d models, 3 lanes: each equals its lone run bit for bit (%d stopped early)\n",
           SWEEP_N, stopped_early);
    ffnn_dataset_free(train);
    ffnn_dataset_free(val);
    ffnn_dataset_free(all);
    return TEST_PASS;
}

static test_result sweep_refuses(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    ffnn_dataset *train = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:points:100", 1, &train, NULL));
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("2-8relu-2", &m));
    ffnn_train_config cfg[2] = {ffnn_train_config_default(), ffnn_train_config_default()};
    cfg[0].device = cfg[1].device = FFNN_DEVICE_CPU;
    ffnn_model *same[2] = {m, m};
    ffnn_sweep *s = NULL;
    CHECK(ffnn_sweep_create(same, cfg, 2, train, NULL, 0, &s) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "same object") && !s,
          "one model twice: %s", ffnn_last_error());
    CHECK(ffnn_sweep_create(same, cfg, 0, train, NULL, 0, &s) == FFNN_ERR_INVALID_ARGUMENT,
          "count 0");
    cfg[0].learning_rate = -1;
    ffnn_model *m2 = NULL;
    CHECK_OK(ffnn_model_create("2-8relu-2", &m2));
    ffnn_model *two[2] = {m2, m};
    CHECK(ffnn_sweep_create(two, cfg, 2, train, NULL, 0, &s) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "model 0") && !s,
          "a bad config names its model: %s", ffnn_last_error());
    ffnn_model_free(m);
    ffnn_model_free(m2);
    ffnn_dataset_free(train);
    return TEST_PASS;
}

const test_case sweep_tests[] = {
    {"sweep_models_equal_lone_runs", sweep_models_equal_lone_runs},
    {"sweep_refuses", sweep_refuses},
};
const size_t sweep_tests_count = sizeof sweep_tests / sizeof sweep_tests[0];
