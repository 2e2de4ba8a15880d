/* test_sweep_cuda.c - a sweep on the GPU: the models' trainers run on host lanes
 * at the same time, each on its own streams, and every model ends with the
 * parameters of its lone run (ffnn_train on cuda with the same config), bit for
 * bit, for the strategies that queue ops (fused, graph, cublaslt), the default,
 * and the persistent kernel (on one lane); and the batched engine (strategy
 * batched: every model in one launch per op) against the cpu reference, and a
 * model in it against itself alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
#define CUDA_SWEEP_CASE(test, name, strategy, arch, lanes)                        \
    static test_result name(char *why, size_t why_size)                          \
    {                                                                             \
        return cuda_sweep_equals_lone_runs(strategy, arch, lanes, why, why_size); \
    }                                                                             \
    TEST_CASE(test, name)
CUDA_SWEEP_CASE("sweep_cuda_auto", sweep_cuda_auto, "auto", "2-64relu-64tanh-2", 4);
CUDA_SWEEP_CASE("sweep_cuda_fused", sweep_cuda_fused, "fused", "2-64relu-64tanh-2", 4);
CUDA_SWEEP_CASE("sweep_cuda_graph", sweep_cuda_graph, "graph", "2-64relu-64tanh-2", 4);
CUDA_SWEEP_CASE("sweep_cuda_cublaslt", sweep_cuda_cublaslt, "cublaslt", "2-64relu-64tanh-2", 4);
CUDA_SWEEP_CASE("sweep_cuda_persistent", sweep_cuda_persistent, "persistent", "2-64relu-2", 1);

/* A batched sweep of n models (lr lr0 / 2^i, seeds 1, 2, ...) of arch for epochs,
 * model `stop` (or -1) dropped after its first epoch; the models and their
 * configs are left in m[] and cfg[]. */
static test_result batched_sweep(const char *arch, ffnn_precision prec,
                                 const ffnn_dataset *train, const ffnn_dataset *val, int n,
                                 int first, int epochs, int stop, ffnn_model **m,
                                 ffnn_train_config *cfg, double *train_loss)
{
    const ffnn_dataset *trains[CUDA_SWEEP_N] = {0}, *vals[CUDA_SWEEP_N] = {0};
    CHECK(n >= 1 && n <= CUDA_SWEEP_N, "%d models (1..%d)", n, CUDA_SWEEP_N);
    for (int j = 0; j < n; j++) {
        const int i = first + j;
        cfg[j] = ffnn_train_config_default();
        cfg[j].device = FFNN_DEVICE_CUDA;
        cfg[j].strategy = FFNN_STRATEGY_BATCHED;
        cfg[j].precision = prec;
        cfg[j].learning_rate = 0.2f / (float)(1 << (i % 4));
        cfg[j].seed = 1 + (uint64_t)(i / 4);
        cfg[j].batch_size = 64;
        cfg[j].epochs = epochs;
        CHECK_OK(ffnn_model_create(arch, &m[j]));
        CHECK_OK(ffnn_model_init(m[j], cfg[j].seed));
        trains[j] = train, vals[j] = val;
    }
    ffnn_sweep *s = NULL;
    CHECK_OK(ffnn_sweep_create(m, cfg, (size_t)n, trains, vals, 0, &s));
    size_t training = (size_t)n;
    for (int e = 0; training > 0; e++) {
        CHECK(e < epochs, "the batched sweep ran past every model's epochs");
        CHECK_OK(ffnn_sweep_run_epoch(s, &training));
        if (e == 0 && stop >= 0)
            CHECK_OK(ffnn_sweep_stop_model(s, (size_t)stop));
    }
    for (int j = 0; j < n; j++) {
        ffnn_sweep_state st;
        CHECK_OK(ffnn_sweep_model_state(s, (size_t)j, &st));
        CHECK(st.epochs_run == (j == stop ? 1 : epochs), "model %d ran %d epochs", j,
              st.epochs_run);
        CHECK(isfinite(st.last.val_loss) && st.last.val_accuracy > 0.5,
              "model %d: val loss %g, accuracy %g", j, st.last.val_loss, st.last.val_accuracy);
        train_loss[j] = st.last.train_loss;
    }
    ffnn_sweep_free(s);
    return TEST_PASS;
}

/* Eight models (four learning rates, two seeds), one dropped after epoch 1: each
 * ends within the strategies' tolerance of its lone run on the cpu reference (its
 * last epoch's training loss within 1e-4 relative in fp32, 2^-7 in tf32, 2^-5 in
 * bf16, as tests/test_strategies.c states for every strategy; in fp32 also every
 * parameter within 1e-3 (1 + |ref|)), and a model trained in the batch ends bit for
 * bit as the same model batched alone (the others change nothing of its
 * arithmetic, whatever tile the launch takes). */
static test_result batched_equals_lone_runs(ffnn_precision prec, char *why, size_t why_size)
{
    SKIP_WITHOUT_GPU();
    const char *arch = "2-64relu-64tanh-2";
    const int epochs = 3, stop = 5;
    const double loss_tol = prec == FFNN_PRECISION_FP32   ? 1e-4
                            : prec == FFNN_PRECISION_TF32 ? 1.0 / 128.0
                                                          : 1.0 / 32.0;
    ffnn_dataset *all = NULL, *train = NULL, *val = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:points:2000", 5, &all, NULL));
    CHECK_OK(ffnn_dataset_split(all, 0.25, 1, &train, &val));
    ffnn_model *m[CUDA_SWEEP_N] = {0}, *alone[1] = {0};
    ffnn_train_config cfg[CUDA_SWEEP_N], cfg1[1];
    double loss[CUDA_SWEEP_N], loss1[1];
    test_result r =
        batched_sweep(arch, prec, train, val, CUDA_SWEEP_N, 0, epochs, stop, m, cfg, loss);
    if (r != TEST_PASS)
        return r;
    double worst_loss = 0.0, worst_param = 0.0;
    for (int i = 0; i < CUDA_SWEEP_N; i++) {
        ffnn_model *ref = NULL;
        ffnn_train_config c = cfg[i];
        c.device = FFNN_DEVICE_CPU;
        c.strategy = FFNN_STRATEGY_REFERENCE;
        c.precision = FFNN_PRECISION_FP32;
        c.threads = 1;
        c.epochs = i == stop ? 1 : epochs;
        ffnn_epoch_stats last;
        CHECK_OK(ffnn_model_create(arch, &ref));
        CHECK_OK(ffnn_model_init(ref, c.seed));
        CHECK_OK(ffnn_train(ref, train, NULL, &c, &last));
        const double dl = fabs(loss[i] - last.train_loss) / fabs(last.train_loss);
        CHECK(dl <= loss_tol, "model %d (lr %g, %s): training loss %.9g, the reference's %.9g",
              i, (double)c.learning_rate, ffnn_precision_name(prec), loss[i], last.train_loss);
        const float *p = ffnn_model_parameters(m[i]), *q = ffnn_model_parameters(ref);
        for (size_t k = 0; prec == FFNN_PRECISION_FP32 && k < ffnn_model_parameter_count(ref);
             k++) {
            const double d = fabs((double)p[k] - q[k]) / (1.0 + fabs(q[k]));
            CHECK(d <= 1e-3, "model %d: parameter %zu is %.9g, the reference's %.9g", i, k,
                  (double)p[k], (double)q[k]);
            if (d > worst_param) worst_param = d;
        }
        if (dl > worst_loss) worst_loss = dl;
        ffnn_model_free(ref);
    }
    r = batched_sweep(arch, prec, train, val, 1, 3, epochs, -1, alone, cfg1, loss1);
    if (r != TEST_PASS)
        return r;
    CHECK(memcmp(ffnn_model_parameters(alone[0]), ffnn_model_parameters(m[3]),
                 ffnn_model_parameter_count(m[3]) * sizeof(float)) == 0 && loss1[0] == loss[3],
          "model 3 batched alone differs from model 3 in the batch of %d (%s)", CUDA_SWEEP_N,
          ffnn_precision_name(prec));
    printf("     batched %s: %d models (one dropped after epoch 1) vs the cpu reference: loss "
           "within %.2g relative (bound %.2g)", ffnn_precision_name(prec), CUDA_SWEEP_N,
           worst_loss, loss_tol);
    if (prec == FFNN_PRECISION_FP32)
        printf(", parameters within %.2g (1 + |ref|)", worst_param);
    printf("; model 3 alone equals it in the batch bit for bit\n");
    ffnn_model_free(alone[0]);
    for (int i = 0; i < CUDA_SWEEP_N; i++)
        ffnn_model_free(m[i]);
    ffnn_dataset_free(train);
    ffnn_dataset_free(val);
    ffnn_dataset_free(all);
    return TEST_PASS;
}

#define CUDA_BATCHED_CASE(test, name, prec)                                      \
    static test_result name(char *why, size_t why_size)                          \
    {                                                                             \
        return batched_equals_lone_runs(prec, why, why_size);                     \
    }                                                                             \
    TEST_CASE(test, name)
CUDA_BATCHED_CASE("sweep_cuda_batched", sweep_cuda_batched, FFNN_PRECISION_FP32);
CUDA_BATCHED_CASE("sweep_cuda_batched_tf32", sweep_cuda_batched_tf32, FFNN_PRECISION_TF32);
CUDA_BATCHED_CASE("sweep_cuda_batched_bf16", sweep_cuda_batched_bf16, FFNN_PRECISION_BF16);

/* 8 models of arch over gpus GPUs (ffnn_sweep_create_gpus; 0: the one device),
 * 3 epochs; the parameters of model i into p[i] (each [count], caller-freed). */
static test_result gpus_sweep(const char *strategy, int gpus, const ffnn_dataset *train,
                              const ffnn_dataset *val, float **p, size_t *count)
{
    const char *arch = "2-64relu-64tanh-2";
    ffnn_train_config cfg[CUDA_SWEEP_N];
    ffnn_model *m[CUDA_SWEEP_N] = {0};
    const ffnn_dataset *trains[CUDA_SWEEP_N], *vals[CUDA_SWEEP_N];
    for (int i = 0; i < CUDA_SWEEP_N; i++) {
        cfg[i] = ffnn_train_config_default();
        cfg[i].device = FFNN_DEVICE_CUDA;
        CHECK_OK(ffnn_train_config_set(&cfg[i], "strategy", strategy));
        cfg[i].learning_rate = 0.2f / (float)(1 << (i % 4));
        cfg[i].seed = 1 + (uint64_t)(i / 4);
        cfg[i].batch_size = 64;
        cfg[i].epochs = 3;
        CHECK_OK(ffnn_model_create(arch, &m[i]));
        CHECK_OK(ffnn_model_init(m[i], cfg[i].seed));
        trains[i] = train, vals[i] = val;
    }
    ffnn_sweep *s = NULL;
    CHECK_OK(ffnn_sweep_create_gpus(m, cfg, CUDA_SWEEP_N, trains, vals, 4, gpus, &s));
    size_t training = CUDA_SWEEP_N;
    for (int e = 0; training > 0 && e < 3; e++)
        CHECK_OK(ffnn_sweep_run_epoch(s, &training));
    CHECK(training == 0, "%zu models still training after 3 epochs", training);
    CHECK(ffnn_cuda_current_device() == 0, "the caller's device is now %d",
          ffnn_cuda_current_device());
    ffnn_sweep_free(s);
    for (int i = 0; i < CUDA_SWEEP_N; i++) {
        *count = ffnn_model_parameter_count(m[i]);
        p[i] = malloc(*count * sizeof(float));
        CHECK(p[i] != NULL, "out of memory");
        memcpy(p[i], ffnn_model_parameters(m[i]), *count * sizeof(float));
        ffnn_model_free(m[i]);
    }
    return TEST_PASS;
}

/* A sweep over 1 .. all the GPUs (model i on GPU i % N; batched: one engine per
 * GPU) gives every model the bits of the one-GPU sweep; more GPUs than there are
 * are refused, naming how many there are. */
TEST("sweep_cuda_gpus", sweep_cuda_gpus)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *all = NULL, *train = NULL, *val = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:points:2000", 5, &all, NULL));
    CHECK_OK(ffnn_dataset_split(all, 0.25, 1, &train, &val));
    int visible = ffnn_cuda_device_count();
    const char *strategies[2] = {"auto", "batched"};
    for (int k = 0; k < 2; k++) {
        float *one[CUDA_SWEEP_N] = {0}, *spread[CUDA_SWEEP_N] = {0};
        size_t n = 0;
        test_result r = gpus_sweep(strategies[k], 0, train, val, one, &n);
        for (int g = 1; r == TEST_PASS && g <= visible; g++) {
            r = gpus_sweep(strategies[k], g, train, val, spread, &n);
            for (int i = 0; r == TEST_PASS && i < CUDA_SWEEP_N; i++)
                if (memcmp(one[i], spread[i], n * sizeof(float)) != 0) {
                    snprintf(why, why_size, "%s over %d GPU%s: model %d differs from the "
                             "one-GPU sweep", strategies[k], g, g > 1 ? "s" : "", i);
                    r = TEST_FAIL;
                }
            for (int i = 0; i < CUDA_SWEEP_N; i++)
                free(spread[i]), spread[i] = NULL;
        }
        for (int i = 0; i < CUDA_SWEEP_N; i++)
            free(one[i]);
        if (r != TEST_PASS)
            return r;
    }
    printf("     auto and batched over 1 .. %d GPU%s: every model equals the one-GPU sweep's "
           "bit for bit\n", visible, visible > 1 ? "s" : "");
    TEST_FREE(train, val, all);
    return TEST_PASS;
}
