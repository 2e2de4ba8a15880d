/* test_sweep_cuda.c - a sweep on the GPU: the models' trainers run on host lanes
 * at the same time, each on its own streams, and every model ends with the
 * parameters of its lone run (ffnn_train on cuda with the same config), bit for
 * bit, for the strategies that queue ops (fused, graph, cublaslt), the default,
 * and the persistent kernel (on one lane). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "ffnn.h"
#include "test_fixtures.h"

#define CUDA_SWEEP_N 8

static test_result cuda_sweep_equals_lone_runs(const char *strategy, const char *arch,
                                                int lanes, char *why, size_t why_size)
{
    (void)why, (void)why_size;
    SKIP_WITHOUT_GPU();
    ffnn_dataset *all = NULL, *train = NULL, *val = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:points:2000", 5, &all, NULL));
    CHECK_OK(ffnn_dataset_split(all, 0.25, 1, &train, &val));
    const ffnn_optimizer opt[4] = {FFNN_OPT_SGD, FFNN_OPT_MOMENTUM, FFNN_OPT_ADAM,
                                   FFNN_OPT_ADAMW};
    const float lr[4] = {0.1f, 0.05f, 0.01f, 0.003f};
    ffnn_train_config cfg[CUDA_SWEEP_N];
    ffnn_model *m[CUDA_SWEEP_N] = {0}, *lone[CUDA_SWEEP_N] = {0};
    const ffnn_dataset *trains[CUDA_SWEEP_N], *vals[CUDA_SWEEP_N];
    for (int i = 0; i < CUDA_SWEEP_N; i++) {
        cfg[i] = ffnn_train_config_default();
        cfg[i].device = FFNN_DEVICE_CUDA;
        CHECK_OK(ffnn_train_config_set(&cfg[i], "strategy", strategy));
        int sgd_only = !strcmp(strategy, "persistent"); /* its one optimizer */
        cfg[i].optimizer = sgd_only ? FFNN_OPT_SGD : opt[i % 4];
        cfg[i].learning_rate = lr[i % 4];
        cfg[i].seed = 1 + (uint64_t)(i / 4);
        cfg[i].weight_decay = !sgd_only && i % 3 == 2 ? 1e-3f : 0.0f;
        cfg[i].batch_size = 64;
        cfg[i].epochs = 3;
        CHECK_OK(ffnn_model_create(arch, &m[i]));
        CHECK_OK(ffnn_model_init(m[i], cfg[i].seed));
        CHECK_OK(ffnn_model_create(arch, &lone[i]));
        CHECK_OK(ffnn_model_init(lone[i], cfg[i].seed));
        trains[i] = train, vals[i] = val;
    }
    ffnn_sweep *s = NULL;
    CHECK_OK(ffnn_sweep_create(m, cfg, CUDA_SWEEP_N, trains, vals, 4, &s));
    CHECK(ffnn_sweep_lanes(s) == lanes, "lanes %d, not %d", ffnn_sweep_lanes(s), lanes);
    size_t training = CUDA_SWEEP_N;
    for (int e = 0; training > 0; e++) {
        CHECK(e < 3, "the sweep ran past every model's epochs");
        CHECK_OK(ffnn_sweep_run_epoch(s, &training));
    }
    ffnn_sweep_free(s);
    for (int i = 0; i < CUDA_SWEEP_N; i++) {
        CHECK_OK(ffnn_train(lone[i], train, NULL, &cfg[i], NULL));
        size_t n = ffnn_model_parameter_count(m[i]);
        CHECK(memcmp(ffnn_model_parameters(m[i]), ffnn_model_parameters(lone[i]),
                     n * sizeof(float)) == 0,
              "strategy %s: model %d (%s, lr %g) differs from its lone run", strategy, i,
              ffnn_optimizer_name(cfg[i].optimizer), (double)cfg[i].learning_rate);
        ffnn_model_free(m[i]);
        ffnn_model_free(lone[i]);
    }
    printf("     %s: %d models on %d lane%s, each equals its lone cuda run bit for bit\n",
           strategy, CUDA_SWEEP_N, lanes, lanes > 1 ? "s" : "");
    TEST_FREE(train, val, all);
    return TEST_PASS;
}

/* Two hidden layers: auto picks a strategy that queues ops, 4 lanes run at once;
 * the persistent kernel (one hidden layer) holds every SM: one lane. */
#define CUDA_SWEEP_CASE(name, strategy, arch, lanes)                              \
    static test_result name(char *why, size_t why_size)                          \
    {                                                                             \
        return cuda_sweep_equals_lone_runs(strategy, arch, lanes, why, why_size); \
    }
CUDA_SWEEP_CASE(sweep_cuda_auto, "auto", "2-64relu-64tanh-2", 4)
CUDA_SWEEP_CASE(sweep_cuda_fused, "fused", "2-64relu-64tanh-2", 4)
CUDA_SWEEP_CASE(sweep_cuda_graph, "graph", "2-64relu-64tanh-2", 4)
CUDA_SWEEP_CASE(sweep_cuda_cublaslt, "cublaslt", "2-64relu-64tanh-2", 4)
CUDA_SWEEP_CASE(sweep_cuda_persistent, "persistent", "2-64relu-2", 1)

const test_case sweep_cuda_tests[] = {
    {"sweep_cuda_auto", sweep_cuda_auto},
    {"sweep_cuda_fused", sweep_cuda_fused},
    {"sweep_cuda_graph", sweep_cuda_graph},
    {"sweep_cuda_cublaslt", sweep_cuda_cublaslt},
    {"sweep_cuda_persistent", sweep_cuda_persistent},
};
const size_t sweep_cuda_tests_count = sizeof sweep_cuda_tests / sizeof sweep_cuda_tests[0];
