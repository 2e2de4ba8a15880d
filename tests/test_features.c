/* test_features.c - the training features on every backend and strategy:
 * weight decay (with biases exempt), adamw, a learning-rate schedule with warm-up,
 * gradient clipping, EMA and dropout. Each configuration trains on the cpu
 * reference, the omp backend and every cuda strategy that takes it, one step at a
 * time across epoch boundaries; each step's loss must follow the reference's
 * within 1e-4 relative (the parity criterion), and so must the evaluation (which
 * reads the EMA weights when EMA is on). A strategy that cannot run a feature
 * refuses it at creation with the reason, and auto picks one that can. The
 * graph strategy's cache must not replay a captured run with dropout (its masks
 * are keyed by the step): the dropout case runs 5 epochs through it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "test_fixtures.h"
#include "ffnn.h"
#include "test_parity.h"

typedef struct feature_case {
    const char *name, *arch;
    ffnn_optimizer optimizer;
    float lr, weight_decay, clip_norm, clip_value, ema;
    int decay_bias, warmup;
    ffnn_lr_schedule schedule;
} feature_case;

static const feature_case cases[] = {
    {"momentum wd no-bias step+warm-up", "784-64relu-32tanh-10", FFNN_OPT_MOMENTUM, 0.02f,
     5e-4f, 0, 0, 0, 0, 10, FFNN_LR_STEP},
    {"adamw clip ema cosine", "784-64relu-10", FFNN_OPT_ADAMW, 1e-3f, 0.05f, 1.0f, 0.01f,
     0.99f, 1, 0, FFNN_LR_COSINE},
    {"sgd dropout clip", "784-64relu:dropout0.3-32sigmoid:dropout0.1-10", FFNN_OPT_SGD, 0.05f,
     0, 0.5f, 0, 0, 1, 0, FFNN_LR_CONSTANT},
    {"leaky_relu elu softplus", "784-64leaky_relu-32elu-16softplus-10", FFNN_OPT_SGD, 0.05f, 0,
     0, 0, 0, 1, 0, FFNN_LR_CONSTANT},
    /* the activations whose backward reads the kept z, and parameters */
    {"gelu silu leaky_relu0.2 elu0.5", "784-64gelu-32silu-16leaky_relu0.2-16elu0.5-10",
     FFNN_OPT_SGD, 0.05f, 0, 0, 0, 0, 1, 0, FFNN_LR_CONSTANT},
    {"gelu_tanh mish hardswish momentum", "784-64gelu_tanh-32mish:dropout0.2-16hardswish-10",
     FFNN_OPT_MOMENTUM, 0.02f, 0, 0, 0, 0, 1, 0, FFNN_LR_CONSTANT},
};
enum { CASES = sizeof cases / sizeof cases[0] };

static ffnn_train_config case_config(const feature_case *c)
{
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.batch_size = 64;
    cfg.seed = 5;
    cfg.epochs = 4;
    cfg.optimizer = c->optimizer;
    cfg.learning_rate = c->lr;
    cfg.weight_decay = c->weight_decay;
    cfg.decay_bias = c->decay_bias;
    cfg.clip_grad_norm = c->clip_norm;
    cfg.clip_grad_value = c->clip_value;
    cfg.ema_decay = c->ema;
    cfg.warmup_steps = c->warmup;
    cfg.lr_schedule = c->schedule;
    cfg.lr_step_size = 1;
    cfg.lr_gamma = 0.5f;
    cfg.lr_t_max = 4;
    return cfg;
}

/* 1,000 samples (16 steps per epoch, the last one short), 80 steps = 5 epochs. */
static test_result follow(const feature_case *c, ffnn_device device, int threads,
                          ffnn_strategy strategy, const ffnn_dataset *train,
                          const ffnn_dataset *test)
{
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create(c->arch, &m));
    CHECK_OK(ffnn_model_init(m, 3));
    ffnn_train_config cfg = case_config(c);
    ffnn_trainer *ref = NULL, *other = NULL;
    cfg.device = FFNN_DEVICE_CPU;
    cfg.strategy = FFNN_STRATEGY_REFERENCE; /* the reference */
    CHECK_OK(ffnn_trainer_create(m, train, &cfg, &ref));
    cfg.device = device;
    cfg.threads = threads;
    cfg.strategy = strategy;
    ffnn_status st = ffnn_trainer_create(m, train, &cfg, &other);
    char what[200];
    snprintf(what, sizeof what, "%s on %s %s", c->name, ffnn_device_name(device),
             device == FFNN_DEVICE_CUDA ? ffnn_strategy_name(strategy) : "omp");
    if (st != FFNN_OK) { /* only persistent may refuse, naming the feature */
        CHECK(strategy == FFNN_STRATEGY_PERSISTENT && st == FFNN_ERR_UNSUPPORTED &&
                  strstr(ffnn_last_error(), "persistent"),
              "%s refused: %s", what, ffnn_last_error());
        printf("     %s: refused (%s)\n", what, ffnn_last_error());
        TEST_FREE(ref, m);
        return TEST_PASS;
    }
    double worst = 0;
    CHECK_PASS(test_steps_follow(ref, other, 80, what, &worst));
    double l0, a0, l1, a1;
    CHECK_OK(ffnn_trainer_evaluate(ref, test, &l0, &a0));
    CHECK_OK(ffnn_trainer_evaluate(other, test, &l1, &a1));
    CHECK(fabs(l1 - l0) <= PARITY_REL * fabs(l0), "%s: test loss %.9g vs reference %.9g", what,
          l1, l0);
    printf("     %s%s%s: 80 steps, worst relative loss difference %.2e; test loss %.6f vs %.6f\n",
           what, device == FFNN_DEVICE_CUDA && strategy == FFNN_STRATEGY_AUTO ? " -> " : "",
           device == FFNN_DEVICE_CUDA && strategy == FFNN_STRATEGY_AUTO
               ? ffnn_strategy_name(ffnn_trainer_strategy(other)) : "",
           worst, l1, l0);
    TEST_FREE(ref, other, m);
    return TEST_PASS;
}

static test_result load(ffnn_dataset **train, ffnn_dataset **test)
{
    ffnn_dataset *full = NULL, *full_test = NULL;
    LOAD_FASHION(&full, &full_test);
    CHECK_OK(ffnn_dataset_slice(full, 0, 1000, train));
    CHECK_OK(ffnn_dataset_slice(full_test, 0, 2000, test));
    TEST_FREE(full, full_test);
    return TEST_PASS;
}

TEST("features_omp_follows_cpu", omp_follows)
{
    ffnn_dataset *train = NULL, *test = NULL;
    CHECK_PASS(load(&train, &test));
    for (int c = 0; c < CASES; c++)
        CHECK_PASS(follow(&cases[c], FFNN_DEVICE_CPU, 2, FFNN_STRATEGY_AUTO, train, test));
    TEST_FREE(train, test);
    return TEST_PASS;
}

TEST("features_cuda_strategies_follow_cpu", cuda_follows)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *train = NULL, *test = NULL;
    CHECK_PASS(load(&train, &test));
    const ffnn_strategy strategies[] = {FFNN_STRATEGY_NAIVE, FFNN_STRATEGY_TILED,
                                        FFNN_STRATEGY_CUBLAS, FFNN_STRATEGY_FUSED,
                                        FFNN_STRATEGY_GRAPH, FFNN_STRATEGY_PERSISTENT,
                                        FFNN_STRATEGY_CUBLASLT, FFNN_STRATEGY_AUTO};
    for (int c = 0; c < CASES; c++)
        for (size_t s = 0; s < sizeof strategies / sizeof strategies[0]; s++)
            CHECK_PASS(follow(&cases[c], FFNN_DEVICE_CUDA, 1, strategies[s], train, test));
    TEST_FREE(train, test);
    return TEST_PASS;
}
