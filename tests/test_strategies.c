/* test_strategies.c - the cuda training strategies (--strategy cublas, fused, graph,
 * persistent, auto): each follows the cpu reference's per-step loss within 1e-4
 * relative over 200 steps (the foundation's parity criterion), also when steps run
 * in multi-step launches with a short last batch and a stop between launches; and
 * the strategy scope and auto rule, which need no GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_fixtures.h"
#include "core/model.h"
#include "ffnn.h"
#include "strategy/prefetch.h"
#include "strategy/strategy.h"
#include "strategy/xt.h"
#include "test_parity.h"
#include "train/train_internal.h" /* ffnn_trainer_gradient */
#include "train/trainer.h"

/* The persistent strategy's scope and the auto rule, from the model and config alone. */
TEST("strategies_scope_and_auto_rule", scope_and_auto)
{
    ffnn_model *two = NULL, *three = NULL;
    CHECK_OK(ffnn_model_create("784-256relu-10", &two));
    CHECK_OK(ffnn_model_create("784-1024relu-1024relu-10", &three));
    ffnn_train_config cfg = ffnn_train_config_default();
    CHECK(cfg.strategy == FFNN_STRATEGY_AUTO, "the default strategy is %s",
          ffnn_strategy_name(cfg.strategy));
    CHECK(ffnn_strategy_persistent_fits(two, &cfg), "seed-000 net refused: %s",
          ffnn_last_error());
    CHECK(!ffnn_strategy_persistent_fits(three, &cfg), "3-layer net accepted");
    CHECK(strstr(ffnn_last_error(), "one hidden layer"), "%s", ffnn_last_error());
    cfg.optimizer = FFNN_OPT_ADAM;
    CHECK(!ffnn_strategy_persistent_fits(two, &cfg), "adam accepted");
    CHECK(strstr(ffnn_last_error(), "adam"), "%s", ffnn_last_error());
    cfg = ffnn_train_config_default();
    for (int k = 0; k < FFNN_STRATEGY_COUNT; k++) { /* names round-trip */
        ffnn_strategy back;
        CHECK_OK(ffnn_strategy_from_name(ffnn_strategy_name((ffnn_strategy)k), &back));
        CHECK((int)back == k, "kernels %d -> %s -> %d", k, ffnn_strategy_name((ffnn_strategy)k),
              (int)back);
    }
    ffnn_precision p;
    CHECK(ffnn_precision_from_name("fp16", &p) == FFNN_ERR_PARSE, "fp16 accepted");
    CHECK(strstr(ffnn_last_error(), "fp32, tf32, bf16"), "%s", ffnn_last_error());
    /* auto never resolves to itself */
    for (size_t batch = 1; batch <= 4096; batch *= 4) {
        cfg.batch_size = batch;
        CHECK(ffnn_strategy_resolve(two, &cfg) != FFNN_STRATEGY_AUTO, "auto left unresolved");
        CHECK(ffnn_strategy_resolve(three, &cfg) != FFNN_STRATEGY_AUTO, "auto left unresolved");
    }
    /* fp32, one hidden layer: persistent within persistent_fp32's rows (auto.c),
     * cublaslt past them at every batch (graph was slower in every measured cell) */
    static const struct {
        const char *arch;
        size_t batch;
        ffnn_strategy want;
    } fp32_rule[] = {
        {"784-256relu-10", 64, FFNN_STRATEGY_PERSISTENT},
        {"784-1024relu-10", 128, FFNN_STRATEGY_PERSISTENT},
        {"784-1024relu-10", 129, FFNN_STRATEGY_CUBLASLT},
        {"784-256relu-10", 384, FFNN_STRATEGY_PERSISTENT},
        {"784-384relu-10", 256, FFNN_STRATEGY_CUBLASLT},
        {"784-256relu-10", 448, FFNN_STRATEGY_CUBLASLT},
        {"784-128relu-10", 512, FFNN_STRATEGY_PERSISTENT},
        {"784-256relu-10", 512, FFNN_STRATEGY_CUBLASLT},
        {"784-128relu-10", 513, FFNN_STRATEGY_CUBLASLT},
        {"784-128gelu-10", 448, FFNN_STRATEGY_GRAPH}, /* no epilogue for gelu */
        /* two or more hidden layers (graph_fp32_rule) */
        {"784-1024relu-1024relu-10", 64, FFNN_STRATEGY_CUBLASLT}, /* not narrow */
        {"784-256relu-256relu-10", 64, FFNN_STRATEGY_GRAPH},
        {"784-256relu-256relu-10", 65, FFNN_STRATEGY_CUBLASLT},
        {"784-128relu-128relu-128relu-128relu-10", 256, FFNN_STRATEGY_GRAPH},
        {"784-128relu-128relu-128relu-128relu-10", 257, FFNN_STRATEGY_CUBLASLT},
        {"784-128relu-128relu-128relu-10", 256, FFNN_STRATEGY_CUBLASLT}, /* 3 hidden */
        {"784-256relu-256relu-256relu-256relu-10", 256, FFNN_STRATEGY_CUBLASLT},
    };
    for (size_t i = 0; i < sizeof fp32_rule / sizeof fp32_rule[0]; i++) {
        ffnn_model *m = NULL;
        CHECK_OK(ffnn_model_create(fp32_rule[i].arch, &m));
        cfg.batch_size = fp32_rule[i].batch;
        const ffnn_strategy got = ffnn_strategy_resolve(m, &cfg);
        ffnn_model_free(m);
        CHECK(got == fp32_rule[i].want, "fp32 %s at batch %zu: %s, not %s", fp32_rule[i].arch,
              fp32_rule[i].batch, ffnn_strategy_name(got), ffnn_strategy_name(fp32_rule[i].want));
    }
    cfg.batch_size = 1024; /* fp32 large batches: cuBLASLt with its epilogues */
    CHECK(ffnn_strategy_resolve(three, &cfg) == FFNN_STRATEGY_CUBLASLT, "fp32 batch 1024: %s",
          ffnn_strategy_name(ffnn_strategy_resolve(three, &cfg)));
    /* tf32 and bf16 (its mixed-precision pipeline): cublaslt where its fused ops
     * cover the net */
    cfg.precision = FFNN_PRECISION_TF32;
    CHECK(ffnn_strategy_resolve(three, &cfg) == FFNN_STRATEGY_CUBLASLT, "tf32: %s",
          ffnn_strategy_name(ffnn_strategy_resolve(three, &cfg)));
    cfg.precision = FFNN_PRECISION_BF16;
    CHECK(ffnn_strategy_resolve(three, &cfg) == FFNN_STRATEGY_CUBLASLT, "bf16 not on cublaslt");
    /* narrow nets at batch 1024: cublaslt in every precision (fp32's graph rule
     * stops at batch 256) */
    ffnn_model *deep = NULL;
    CHECK_OK(ffnn_model_create("784-128relu-128relu-128relu-10", &deep));
    for (int p = FFNN_PRECISION_FP32; p <= FFNN_PRECISION_BF16; p++) {
        cfg.precision = (ffnn_precision)p;
        CHECK(ffnn_strategy_resolve(deep, &cfg) == FFNN_STRATEGY_CUBLASLT,
              "deep narrow %s: %s", ffnn_precision_name(cfg.precision),
              ffnn_strategy_name(ffnn_strategy_resolve(deep, &cfg)));
        CHECK(ffnn_strategy_resolve(two, &cfg) == FFNN_STRATEGY_CUBLASLT,
              "784-256-10 %s at 1024: %s", ffnn_precision_name(cfg.precision),
              ffnn_strategy_name(ffnn_strategy_resolve(two, &cfg)));
    }
    cfg.batch_size = 2048; /* beyond the measured batches: the library's kernels */
    cfg.precision = FFNN_PRECISION_TF32;
    CHECK(ffnn_strategy_resolve(deep, &cfg) == FFNN_STRATEGY_CUBLASLT, "deep tf32 at 2048: %s",
          ffnn_strategy_name(ffnn_strategy_resolve(deep, &cfg)));
    ffnn_model_free(deep);
    cfg.batch_size = 1024;
    /* tf32/bf16 below batch 512: cublaslt where its epilogues cover the net, else
     * our tensor-core kernels under graph */
    cfg.batch_size = 256;
    ffnn_model *narrow_gelu = NULL;
    CHECK_OK(ffnn_model_create("784-256gelu-10", &narrow_gelu));
    for (int p = FFNN_PRECISION_TF32; p <= FFNN_PRECISION_BF16; p++) {
        cfg.precision = (ffnn_precision)p;
        /* tf32: one hidden layer of <= 256 units up to batch 256 on the persistent
         * kernel, as fp32 */
        const ffnn_strategy one = p == FFNN_PRECISION_TF32 ? FFNN_STRATEGY_PERSISTENT
                                                           : FFNN_STRATEGY_CUBLASLT;
        CHECK(ffnn_strategy_resolve(two, &cfg) == one, "%s at batch 256: %s",
              ffnn_precision_name(cfg.precision),
              ffnn_strategy_name(ffnn_strategy_resolve(two, &cfg)));
        CHECK(ffnn_strategy_resolve(narrow_gelu, &cfg) == FFNN_STRATEGY_GRAPH,
              "%s gelu at batch 256: %s", ffnn_precision_name(cfg.precision),
              ffnn_strategy_name(ffnn_strategy_resolve(narrow_gelu, &cfg)));
    }
    ffnn_model_free(narrow_gelu);
    /* tf32 past the persistent rule's measured range: batch 384, or 512 units */
    cfg.precision = FFNN_PRECISION_TF32;
    cfg.batch_size = 384;
    CHECK(ffnn_strategy_resolve(two, &cfg) == FFNN_STRATEGY_CUBLASLT, "tf32 at batch 384: %s",
          ffnn_strategy_name(ffnn_strategy_resolve(two, &cfg)));
    cfg.batch_size = 256;
    ffnn_model *wide1 = NULL;
    CHECK_OK(ffnn_model_create("784-512relu-10", &wide1));
    CHECK(ffnn_strategy_resolve(wide1, &cfg) == FFNN_STRATEGY_CUBLASLT,
          "784-512-10 tf32 at batch 256: %s",
          ffnn_strategy_name(ffnn_strategy_resolve(wide1, &cfg)));
    ffnn_model_free(wide1);
    cfg.batch_size = 1024;
    /* an activation the fused and persistent kernels lack: auto picks a strategy
     * that runs the plain element-wise ops (cublas, graph), persistent refuses */
    ffnn_model *gelu = NULL;
    CHECK_OK(ffnn_model_create("784-128gelu-10", &gelu));
    cfg.precision = FFNN_PRECISION_FP32;
    CHECK(ffnn_strategy_resolve(gelu, &cfg) == FFNN_STRATEGY_CUBLAS, "gelu at batch 1024: %s",
          ffnn_strategy_name(ffnn_strategy_resolve(gelu, &cfg)));
    ffnn_model *wide_gelu = NULL; /* not narrow: the tf32 rule's own fallback */
    CHECK_OK(ffnn_model_create("784-512gelu-10", &wide_gelu));
    cfg.precision = FFNN_PRECISION_TF32;
    CHECK(ffnn_strategy_resolve(wide_gelu, &cfg) == FFNN_STRATEGY_CUBLAS,
          "tf32 gelu at batch 1024: %s", ffnn_strategy_name(ffnn_strategy_resolve(wide_gelu, &cfg)));
    ffnn_model_free(wide_gelu);
    cfg.precision = FFNN_PRECISION_FP32;
    cfg.batch_size = 64;
    CHECK(ffnn_strategy_resolve(gelu, &cfg) == FFNN_STRATEGY_GRAPH, "gelu at batch 64: %s",
          ffnn_strategy_name(ffnn_strategy_resolve(gelu, &cfg)));
    CHECK(!ffnn_strategy_persistent_fits(gelu, &cfg), "persistent took gelu");
    CHECK(strstr(ffnn_last_error(), "gelu"), "%s", ffnn_last_error());
    TEST_FREE(gelu, two, three);
    return TEST_PASS;
}

/* The strategy on cuda in precision prec against the cpu reference (fp32), one
 * ffnn_trainer_step at a time: 200 steps of arch with each optimizer the strategy
 * takes, every step's loss within test_steps_follow's bound (fp32's). */
static test_result follows_cpu_in(ffnn_strategy kernels, ffnn_precision prec, char *why,
                                  size_t why_size)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *train = NULL, *test = NULL;
    LOAD_FASHION(&train, &test);
    const int persistent = kernels == FFNN_STRATEGY_PERSISTENT;
    const char *archs[] = {"784-64relu-10", "784-33tanh-10", "784-48sigmoid-24relu-10"};
    const test_follow_opt opts[] = {
        {FFNN_OPT_SGD, 0, 0.05f, "sgd"},
        {FFNN_OPT_MOMENTUM, 1, 0.01f, "nesterov"},
        {FFNN_OPT_ADAM, 0, 0.001f, "adam"},
    };
    for (int a = 0; a < 3; a++) {
        if (persistent && a == 2)
            continue; /* one hidden layer only */
        for (int o = 0; o < 3; o++) {
            if (persistent && o > 0)
                continue; /* plain sgd only */
            CHECK_PASS(test_follow_optimizer(train, archs[a], kernels, prec, &opts[o], 200));
        }
    }
    TEST_FREE(train, test);
    return TEST_PASS;
}

static test_result follows_cpu(ffnn_strategy kernels, char *why, size_t why_size)
{
    return follows_cpu_in(kernels, FFNN_PRECISION_FP32, why, why_size);
}
static test_result cublas_follows(char *w, size_t n) { return follows_cpu(FFNN_STRATEGY_CUBLAS, w, n); }
TEST_CASE("strategies_cublas_follows_cpu_200_steps", cublas_follows);
/* --precision tf32x3 (3xTF32, cublas.cu) keeps fp32's accuracy: fp32's bound */
static test_result cublas_tf32x3_follows(char *w, size_t n)
{
    return follows_cpu_in(FFNN_STRATEGY_CUBLAS, FFNN_PRECISION_TF32X3, w, n);
}
TEST_CASE("strategies_cublas_tf32x3_follows_cpu_200_steps", cublas_tf32x3_follows);
static test_result cublaslt_tf32x3_follows(char *w, size_t n)
{
    return follows_cpu_in(FFNN_STRATEGY_CUBLASLT, FFNN_PRECISION_TF32X3, w, n);
}
TEST_CASE("strategies_cublaslt_tf32x3_follows_cpu_200_steps", cublaslt_tf32x3_follows);
static test_result fused_follows(char *w, size_t n) { return follows_cpu(FFNN_STRATEGY_FUSED, w, n); }
TEST_CASE("strategies_fused_follows_cpu_200_steps", fused_follows);
static test_result cublaslt_follows(char *w, size_t n)
{
    return follows_cpu(FFNN_STRATEGY_CUBLASLT, w, n);
}
TEST_CASE("strategies_cublaslt_follows_cpu_200_steps", cublaslt_follows);
static test_result graph_follows(char *w, size_t n) { return follows_cpu(FFNN_STRATEGY_GRAPH, w, n); }
TEST_CASE("strategies_graph_follows_cpu_200_steps", graph_follows);
static test_result persistent_follows(char *w, size_t n)
{
    return follows_cpu(FFNN_STRATEGY_PERSISTENT, w, n);
}
TEST_CASE("strategies_persistent_follows_cpu_200_steps", persistent_follows);

/* --precision tf32 / bf16 on the fused and graph strategies (their matmuls on
 * gemm_mma.cu's tensor-core kernel) against the fp32 cpu reference, 200 steps of
 * sgd (the update in the dW kernel's epilogue) on two nets that use every fused
 * activation. Tolerance, per step, relative to the cpu's batch loss: 2^-7 (tf32),
 * 2^-5 (bf16). Each matmul output is within 2^-9 S (tf32) / 2^-7 S (bf16) of the
 * fp32 one (tests/test_fused.c); the loss is a mean over the batch of a smooth
 * function of the logits, and 200 steps at lr 0.05 let the parameters drift by a
 * few such errors: the bounds leave 4x over the per-matmul bound. cuBLAS in the
 * same precision runs beside them as a control (its worst difference printed). */
#define TRAIN_REL_TF32 (1.0 / 128.0)
#define TRAIN_REL_BF16 (1.0 / 32.0)
TEST("strategies_fused_graph_tf32_bf16_follow_cpu_200_steps", tensor_follows)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *train = NULL, *test = NULL;
    LOAD_FASHION(&train, &test);
    const char *archs[] = {"784-64relu-10", "784-48sigmoid-24tanh-10"};
    const ffnn_strategy kinds[] = {FFNN_STRATEGY_FUSED, FFNN_STRATEGY_GRAPH,
                                   FFNN_STRATEGY_CUBLAS};
    const ffnn_precision precs[] = {FFNN_PRECISION_TF32, FFNN_PRECISION_BF16};
    for (int a = 0; a < 2; a++)
        for (int p = 0; p < 2; p++)
            for (int k = 0; k < 3; k++) {
                ffnn_model *m = NULL;
                CHECK_OK(ffnn_model_create(archs[a], &m));
                CHECK_OK(ffnn_model_init(m, 3));
                ffnn_train_config cfg = ffnn_train_config_default();
                cfg.batch_size = 64;
                cfg.learning_rate = 0.05f;
                cfg.seed = 5;
                cfg.strategy = kinds[k];
                cfg.precision = precs[p];
                ffnn_trainer *cpu = NULL, *gpu = NULL;
                CHECK_OK(test_trainer_pair(m, train, cfg, &cpu, &gpu));
                const double bound = precs[p] == FFNN_PRECISION_BF16 ? TRAIN_REL_BF16
                                                                     : TRAIN_REL_TF32;
                const int control = kinds[k] == FFNN_STRATEGY_CUBLAS;
                const int steps = test_quick() ? 4 : 200;
                double worst = 0;
                char what[128];
                snprintf(what, sizeof what, "%s %s %s", archs[a], ffnn_strategy_name(kinds[k]),
                         ffnn_precision_name(precs[p]));
                if (test_steps_within(cpu, gpu, steps, control ? INFINITY : bound, what, &worst) !=
                    TEST_PASS)
                    return TEST_FAIL;
                printf("     %s %s %s: %d steps, worst relative loss difference %.2e "
                       "(bound %.2e%s)\n",
                       archs[a], ffnn_strategy_name(kinds[k]), ffnn_precision_name(precs[p]),
                       steps, worst, bound, control ? ", control: not enforced" : "");
                TEST_FREE(cpu, gpu, m);
            }
    TEST_FREE(train, test);
    return TEST_PASS;
}

/* One epoch of cpu (the reference) and gpu, then every step's loss within bound of
 * the cpu's, relative; steps: the count each must have run; *worst raised to the
 * largest difference seen. what and epoch name the failure. */
static test_result epoch_follows(ffnn_trainer *cpu, ffnn_trainer *gpu, size_t steps,
                                 double bound, const char *what, int epoch, double *worst)
{
    ffnn_epoch_stats sc, sg;
    CHECK_OK(ffnn_trainer_run_epoch(cpu, NULL, NULL, &sc));
    CHECK_OK(ffnn_trainer_run_epoch(gpu, NULL, NULL, &sg));
    const double *lc = NULL, *lg = NULL;
    size_t nc = 0, ng = 0;
    CHECK_OK(ffnn_trainer_step_losses(cpu, &lc, &nc));
    CHECK_OK(ffnn_trainer_step_losses(gpu, &lg, &ng));
    CHECK(nc == steps && ng == nc, "%s: %zu and %zu steps per epoch, expected %zu", what, nc,
          ng, steps);
    for (size_t st = 0; st < nc; st++) {
        const double rel = fabs(lg[st] - lc[st]) / fabs(lc[st]);
        if (rel > *worst) *worst = rel;
        CHECK(rel <= bound, "%s epoch %d step %zu: cpu %.8f cuda %.8f (rel %.2e > %.2e)", what,
              epoch, st + 1, lc[st], lg[st], rel, bound);
    }
    return TEST_PASS;
}

/* cublaslt in tf32 on the wide net at batch 1024, where layer 0's weight gradient
 * takes x^T from the step's gather and layer 1's its input transposed beside the
 * forward (step.h ffnn_step_xt_create): the buffers are made (the graph runs'
 * second set too), and 2 epochs of 4 full steps and a short one of
 * 512 rows (which does not take it: dense_backward_wants_xt is 0 below batch 1024)
 * follow the fp32 cpu reference within the tf32 bound above, the epochs as captured
 * graphs with the next batch gathered (and transposed) during the step; then
 * ffnn_trainer_gradient of other rows, which the step's x^T does not hold. */
TEST("strategies_cublaslt_tf32_xt_from_gather_follows_cpu", xt_follows)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *full = NULL, *train = NULL;
    LOAD_FASHION(&full, NULL);
    CHECK_OK(ffnn_dataset_slice(full, 0, 4 * 1024 + 512, &train));
    ffnn_dataset_free(full);
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("784-1024relu-1024relu-10", &m));
    CHECK_OK(ffnn_model_init(m, 3));
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.batch_size = 1024;
    cfg.learning_rate = 0.05f;
    cfg.seed = 5;
    cfg.strategy = FFNN_STRATEGY_CUBLASLT;
    cfg.precision = FFNN_PRECISION_TF32;
    ffnn_trainer *cpu = NULL, *gpu = NULL;
    CHECK_OK(test_trainer_pair(m, train, cfg, &cpu, &gpu));
    CHECK(gpu->run.ext.xt != NULL && (gpu->run.ext.spare == NULL || gpu->run.ext.spare->xt != NULL) &&
              gpu->run.ext.xt->act != NULL && gpu->run.ext.xt->act[0] != NULL,
          "the x^T buffers were not made");
    double worst = 0.0;
    for (int epoch = 1; epoch <= 2; epoch++)
        if (epoch_follows(cpu, gpu, 5, TRAIN_REL_TF32, "784-1024relu-1024relu-10 tf32", epoch,
                          &worst) != TEST_PASS)
            return TEST_FAIL;
    /* ffnn_trainer_gradient gathers its rows itself, after the steps above left
     * another batch's x^T behind: layer 0's dW must be of its own rows (the op then
     * transposes x itself), within the tf32 bound of the cpu's, norm-relative */
    const size_t n0 = 784 * 1024, n = ffnn_model_parameter_count(m);
    int32_t *rows = malloc(1024 * sizeof *rows);
    float *gc = malloc(n * sizeof *gc), *gg = malloc(n * sizeof *gg);
    CHECK(rows && gc && gg, "out of memory");
    for (int i = 0; i < 1024; i++)
        rows[i] = 4 * 1024 + 511 - 3 * i; /* not a batch of the epochs' order */
    double lc = 0.0, lg = 0.0, diff = 0.0, norm = 0.0;
    CHECK_OK(ffnn_trainer_gradient(cpu, rows, 1024, &lc, gc));
    CHECK_OK(ffnn_trainer_gradient(gpu, rows, 1024, &lg, gg));
    for (size_t i = 0; i < n0; i++) {
        diff += ((double)gg[i] - gc[i]) * ((double)gg[i] - gc[i]);
        norm += (double)gc[i] * gc[i];
    }
    free(rows), free(gc), free(gg);
    CHECK(sqrt(diff) <= TRAIN_REL_TF32 * sqrt(norm),
          "ffnn_trainer_gradient: layer 0's dW %.3e from the cpu's, norm-relative",
          sqrt(diff / norm));
    printf("     784-1024relu-1024relu-10 cublaslt tf32, x^T from the gather: 2 epochs, worst "
           "relative loss difference %.2e (bound %.2e); a gradient of other rows: layer 0's "
           "dW %.2e norm-relative\n", worst, TRAIN_REL_TF32, sqrt(diff / norm));
    TEST_FREE(cpu, gpu, m, train);
    return TEST_PASS;
}

static int stop_at_12(void *user, ffnn_trainer *t, int epoch, size_t step, size_t steps)
{
    (void)user, (void)t, (void)epoch, (void)steps;
    return step >= 12;
}

/* Whole epochs in launches of many steps: 2,000 samples at batch 64 (31 full
 * batches and one of 16), two epochs, each step's loss against the cpu's; then a
 * run with 5 steps per launch stopped by on_step after step 12 (so after the
 * launch that ends at 15), continued to the epoch's end. With the strategy's own
 * steps per launch, epoch 2 must replay epoch 1's graphs and capture none - for
 * adam too, whose changing scalars the graphs read from a device table. */
static test_result launches_with(ffnn_strategy kernels, ffnn_optimizer opt, char *why,
                                 size_t why_size)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *full = NULL, *test = NULL, *train = NULL;
    LOAD_FASHION(&full, &test);
    CHECK_OK(ffnn_dataset_slice(full, 0, 2000, &train));
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("784-256relu-10", &m));
    CHECK_OK(ffnn_model_init(m, 7));
    for (int spl = 0; spl <= 5; spl += 5) {
        ffnn_train_config cfg = ffnn_train_config_default();
        cfg.batch_size = 64;
        cfg.optimizer = opt;
        cfg.learning_rate = opt == FFNN_OPT_SGD ? 0.1f : 1e-3f;
        cfg.weight_decay = opt == FFNN_OPT_ADAMW ? 0.01f : 0.0f;
        cfg.strategy = kernels;
        cfg.steps_per_launch = spl;
        ffnn_trainer *cpu = NULL, *gpu = NULL;
        CHECK_OK(test_trainer_pair(m, train, cfg, &cpu, &gpu));
        for (int epoch = 1; epoch <= 2; epoch++) {
            ffnn_epoch_stats sc, sg;
            int finished = 0;
            CHECK_OK(ffnn_trainer_run_epoch(cpu, NULL, NULL, &sc));
            if (spl == 5 && epoch == 1) {
                CHECK_OK(ffnn_trainer_run_epoch_until(gpu, stop_at_12, NULL, &sg, &finished));
                size_t at = 0;
                ffnn_trainer_position(gpu, NULL, &at);
                CHECK(!finished && at == 15, "stopped at step %zu (finished %d), expected 15",
                      at, finished);
            }
            uint64_t captured = 0, replayed = 0, captured_after = 0, replayed_after = 0;
            ffnn_graph_cache_counts(gpu->strategy_state, &captured, &replayed);
            CHECK_OK(ffnn_trainer_run_epoch(gpu, NULL, NULL, &sg));
            ffnn_graph_cache_counts(gpu->strategy_state, &captured_after, &replayed_after);
            /* a constant rate: epoch 2 replays epoch 1's graphs, captures none */
            if (kernels != FFNN_STRATEGY_PERSISTENT && spl == 0)
                CHECK(epoch == 1 ? captured_after > 0 && replayed_after == 0
                                 : captured_after == captured && replayed_after > replayed,
                      "%s epoch %d: %llu graphs captured, %llu replayed (before it %llu, %llu)",
                      ffnn_strategy_name(kernels), epoch, (unsigned long long)captured_after,
                      (unsigned long long)replayed_after, (unsigned long long)captured,
                      (unsigned long long)replayed);
            const double *lc = NULL, *lg = NULL;
            size_t nc = 0, ng = 0;
            CHECK_OK(ffnn_trainer_step_losses(cpu, &lc, &nc));
            CHECK_OK(ffnn_trainer_step_losses(gpu, &lg, &ng));
            CHECK(nc == 32 && ng == 32, "%zu and %zu steps per epoch, expected 32", nc, ng);
            for (size_t s = 0; s < nc; s++) {
                double rel = fabs(lg[s] - lc[s]) / fabs(lc[s]);
                CHECK(rel <= PARITY_REL, "%s %s, %d steps per launch, epoch %d step %zu: "
                      "cpu %.8f cuda %.8f (rel %.2e)", ffnn_strategy_name(kernels),
                      ffnn_optimizer_name(opt), spl, epoch, s + 1, lc[s], lg[s], rel);
            }
        }
        TEST_FREE(cpu, gpu);
    }
    TEST_FREE(m, train, full, test);
    return TEST_PASS;
}

static test_result launches(ffnn_strategy kernels, char *why, size_t why_size)
{
    return launches_with(kernels, FFNN_OPT_SGD, why, why_size);
}
static test_result graph_launches(char *w, size_t n) { return launches(FFNN_STRATEGY_GRAPH, w, n); }
TEST_CASE("strategies_graph_epoch_launches_follow_cpu", graph_launches);
static test_result cublas_launches(char *w, size_t n) { return launches(FFNN_STRATEGY_CUBLAS, w, n); }
TEST_CASE("strategies_cublas_epoch_launches_follow_cpu", cublas_launches);
static test_result persistent_launches(char *w, size_t n)
{
    return launches(FFNN_STRATEGY_PERSISTENT, w, n);
}
TEST_CASE("strategies_persistent_epoch_launches_follow_cpu", persistent_launches);
TEST("strategies_adam_graphs_replay_and_follow_cpu", adam_launches)
{
    const ffnn_strategy ks[] = {FFNN_STRATEGY_GRAPH, FFNN_STRATEGY_CUBLASLT};
    for (int k = 0; k < 2; k++)
        for (int o = FFNN_OPT_ADAM; o <= FFNN_OPT_ADAMW; o++) {
            const test_result res = launches_with(ks[k], (ffnn_optimizer)o, why, why_size);
            if (res != TEST_PASS)
                return res; /* a failure, or no GPU (skipped) */
        }
    return TEST_PASS;
}

/* The second stream (backend.h side_begin) takes work off a step's critical path
 * without changing a value: the next step's batch gathered during the step (graph
 * runs: step.h r->ext.spare) and the head's sums (cublaslt). So two epochs with it and
 * without it (the trainer's ops table copied without the second stream, and no
 * second set of batch buffers) give the same per-step losses and the same parameters, bit for bit.
 * 2,000 samples at batch 64 (launches of 8 or 16 steps and a last batch of 16
 * rows), on graph, cublas, cublaslt fp32 and cublaslt bf16 (the batch gathered
 * straight into bf16); nets of one and of three hidden layers. */
TEST("strategies_second_stream_keeps_the_bits", second_stream_same_bits)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *full = NULL, *test = NULL, *train = NULL;
    LOAD_FASHION(&full, &test);
    CHECK_OK(ffnn_dataset_slice(full, 0, 2000, &train));
    const ffnn_strategy kinds[] = {FFNN_STRATEGY_GRAPH, FFNN_STRATEGY_CUBLAS,
                                   FFNN_STRATEGY_CUBLASLT, FFNN_STRATEGY_CUBLASLT};
    const ffnn_precision precs[] = {FFNN_PRECISION_FP32, FFNN_PRECISION_FP32,
                                    FFNN_PRECISION_FP32, FFNN_PRECISION_BF16};
    const char *archs[] = {"784-256relu-10", "784-128relu-64relu-32relu-10"};
    for (int k = 0; k < 8; k++) {
        const char *arch = archs[k / 4];
        ffnn_model *m[2] = {NULL, NULL};
        double *losses[2] = {NULL, NULL};
        ffnn_backend_ops no_side; /* arm 1's table: the backend's without the second stream */
        for (int arm = 0; arm < 2; arm++) { /* arm 0: with the second stream */
            CHECK_OK(ffnn_model_create(arch, &m[arm]));
            CHECK_OK(ffnn_model_init(m[arm], 11));
            ffnn_train_config cfg = ffnn_train_config_default();
            cfg.batch_size = 64;
            cfg.learning_rate = 0.1f;
            cfg.strategy = kinds[k % 4];
            cfg.precision = precs[k % 4];
            cfg.device = FFNN_DEVICE_CUDA;
            ffnn_trainer *t = NULL;
            CHECK_OK(ffnn_trainer_create(m[arm], train, &cfg, &t));
            CHECK(t->run.ext.spare != NULL, "%s %s: no spare batch buffers",
                  ffnn_strategy_name(kinds[k % 4]), ffnn_precision_name(precs[k % 4]));
            if (arm == 1) {
                ffnn_prefetch_free(&t->run);
                no_side = *t->run.ops;
                no_side.side = NULL;
                t->run.ops = &no_side;
            }
            losses[arm] = malloc(64 * sizeof(double));
            CHECK(losses[arm] != NULL, "out of memory");
            for (int epoch = 0; epoch < 2; epoch++) {
                ffnn_epoch_stats st;
                CHECK_OK(ffnn_trainer_run_epoch(t, NULL, NULL, &st));
                const double *l = NULL;
                size_t n = 0;
                CHECK_OK(ffnn_trainer_step_losses(t, &l, &n));
                CHECK(n == 32, "%zu steps per epoch, expected 32", n);
                memcpy(losses[arm] + 32 * epoch, l, 32 * sizeof(double));
            }
            CHECK_OK(ffnn_trainer_sync_model(t));
            ffnn_trainer_free(t);
        }
        for (int s = 0; s < 64; s++)
            CHECK(memcmp(&losses[0][s], &losses[1][s], sizeof(double)) == 0,
                  "%s %s %s step %d: loss %.9g with the second CUDA stream, %.9g without", arch,
                  ffnn_strategy_name(kinds[k % 4]), ffnn_precision_name(precs[k % 4]), s + 1,
                  losses[0][s], losses[1][s]);
        CHECK(memcmp(m[0]->params, m[1]->params, m[0]->parameter_count * sizeof(float)) == 0,
              "%s %s %s: the parameters differ after two epochs", arch,
              ffnn_strategy_name(kinds[k % 4]), ffnn_precision_name(precs[k % 4]));
        free(losses[0]);
        free(losses[1]);
        ffnn_model_free(m[0]);
        ffnn_model_free(m[1]);
    }
    TEST_FREE(train, full, test);
    return TEST_PASS;
}

/* The persistent kernel's two exchanges of the partial logits (backend/cuda/
 * persistent.cu): a block's rows x classes up to 2048 take one barrier (the sum in
 * 64-bit fixed point), more the two-barrier one: 784-64relu-10 at batch 64 (one),
 * 192 (one, 2 row groups), 256 and 384 (one, 4 row groups) and 1024 (two: 256 rows
 * a block at most), 100 steps each against the cpu reference. Then the fixed
 * point's documented limit: every parameter 100 makes partial logits over 2^20 (h
 * up to ~78,500 times 100), and the step's loss must read NaN, which the trainer
 * reports as divergence, rather than a wrapped sum; the cpu's is finite (all
 * logits of a row equal, ~1e8). */
TEST("strategies_persistent_exchanges_follow_cpu", persistent_exchanges)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *train = NULL, *test = NULL;
    LOAD_FASHION(&train, &test);
    const size_t batches[] = {64, 192, 256, 384, 1024};
    for (size_t k = 0; k < 6; k++) {
        ffnn_model *m = NULL;
        CHECK_OK(ffnn_model_create("784-64relu-10", &m));
        CHECK_OK(ffnn_model_init(m, 3));
        const int huge = k == 5;
        if (huge) {
            float *w = ffnn_model_parameters(m);
            for (size_t i = 0; i < ffnn_model_parameter_count(m); i++)
                w[i] = 100.0f;
        }
        ffnn_train_config cfg = ffnn_train_config_default();
        cfg.batch_size = huge ? 64 : batches[k];
        cfg.learning_rate = 0.05f;
        cfg.seed = 5;
        cfg.strategy = FFNN_STRATEGY_PERSISTENT;
        ffnn_trainer *cpu = NULL, *gpu = NULL;
        CHECK_OK(test_trainer_pair(m, train, cfg, &cpu, &gpu));
        if (huge) {
            double lc = 0, lg = 0;
            CHECK_OK(ffnn_trainer_step(cpu, &lc));
            const ffnn_status st = ffnn_trainer_step(gpu, &lg);
            CHECK(isfinite(lc) && st != FFNN_OK && strstr(ffnn_last_error(), "loss is nan"),
                  "logits over the fixed point's range: cpu loss %g (expected finite), "
                  "persistent: status %d, %s (expected: the loss is nan)", lc, (int)st,
                  st == FFNN_OK ? "no error" : ffnn_last_error());
            printf("     every parameter 100: cpu loss %g, persistent: %s\n", lc,
                   ffnn_last_error());
        } else {
            double worst = 0;
            char what[96];
            snprintf(what, sizeof what, "784-64relu-10 persistent batch %zu", batches[k]);
            CHECK_PASS(test_steps_follow(cpu, gpu, 100, what, &worst));
            printf("     %s (%s): 100 steps, worst relative loss difference %.2e\n", what,
                   batches[k] < 1024 ? "one barrier" : "two barriers", worst);
        }
        TEST_FREE(cpu, gpu, m);
    }
    TEST_FREE(train, test);
    return TEST_PASS;
}

/* The persistent kernel's row groups (backend/cuda/persistent.cu, row_groups: R
 * blocks share a hidden slice, each over ceil(B / R) of the batch's rows, their
 * gradient sums added in row-group order): 2 epochs of 1,800 samples on
 * 784-256relu-10 (JB 4 at R 2, JB 8 at R 4) and 784-90relu-10 (a last slice with
 * 2 empty units) against the cpu reference, every step's loss within PARITY_REL.
 * The last batches leave row groups empty (batch 128: 8 rows, R 2; 192: 72 rows of
 * 96 per group; 256: 8 rows, R 4; 320: 200 rows, groups of 80, 80, 40, 0), and the
 * second epoch starts from the weights the first wrote back. */
TEST("strategies_persistent_row_groups_follow_cpu", persistent_row_groups)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *full = NULL, *train = NULL;
    LOAD_FASHION(&full, NULL);
    CHECK_OK(ffnn_dataset_slice(full, 0, 1800, &train));
    ffnn_dataset_free(full);
    const struct { const char *arch; size_t batch; } cases[] = {
        {"784-256relu-10", 128}, {"784-256relu-10", 192}, {"784-256relu-10", 256},
        {"784-256relu-10", 320}, {"784-90relu-10", 256}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ffnn_model *m = NULL;
        CHECK_OK(ffnn_model_create(cases[k].arch, &m));
        CHECK_OK(ffnn_model_init(m, 7));
        ffnn_train_config cfg = ffnn_train_config_default();
        cfg.batch_size = cases[k].batch;
        cfg.learning_rate = 0.1f;
        cfg.strategy = FFNN_STRATEGY_PERSISTENT;
        ffnn_trainer *cpu = NULL, *gpu = NULL;
        CHECK_OK(test_trainer_pair(m, train, cfg, &cpu, &gpu));
        const size_t steps = (1800 + cases[k].batch - 1) / cases[k].batch;
        char what[64];
        snprintf(what, sizeof what, "%s batch %zu", cases[k].arch, cases[k].batch);
        double worst = 0;
        for (int epoch = 1; epoch <= 2; epoch++)
            CHECK_PASS(epoch_follows(cpu, gpu, steps, PARITY_REL, what, epoch, &worst));
        printf("     %s: 2 epochs of %zu steps, worst relative loss difference %.2e\n", what,
               steps, worst);
        TEST_FREE(cpu, gpu, m);
    }
    ffnn_dataset_free(train);
    return TEST_PASS;
}

/* --strategy persistent --precision tf32 against the fp32 cpu reference. Where a
 * block holds 8 units (persistent.cu make_plan: pl->tc) x W1^T and dW1 run on the
 * tensor cores (forward_tc, dw1_tc: W1 and dz1 rounded to TF32, the pixels exact):
 * every step's loss within the tf32 bound of the fused kernels (TRAIN_REL_TF32, 2
 * epochs of at most 100 steps at lr 0.05, the bound's setting), and in at least half
 * the steps different from the fp32 persistent run of the same model (the rounding
 * really ran). Cases: row groups (batch 256: R 4; 128: R 2), one m tile with rows
 * past the batch (batch 8), a partial m tile (batch 40), last slices with empty units
 * (590 and 500 units), short last batches. Where a block holds fewer units the fp32
 * kernel runs (faster there): the same losses as fp32, bit for bit. */
TEST("strategies_persistent_tf32_follows_cpu", persistent_tf32_follows)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *full = NULL;
    LOAD_FASHION(&full, NULL);
    const struct { const char *arch; size_t batch; int tc; } cases[] = {
        {"784-256relu-10", 256, 1}, {"784-590tanh-10", 40, 1}, {"784-500relu-10", 128, 1},
        {"784-1000sigmoid-10", 8, 1}, {"784-64relu-10", 64, 0}, {"784-256relu-10", 64, 0}};
    const size_t ncases = test_quick() ? 2 : sizeof cases / sizeof cases[0];
    for (size_t k = 0; k < ncases; k++) {
        const size_t n = cases[k].batch * 100 < 1800 ? cases[k].batch * 100 : 1800;
        ffnn_dataset *train = NULL;
        CHECK_OK(ffnn_dataset_slice(full, 0, n, &train));
        ffnn_model *m = NULL;
        CHECK_OK(ffnn_model_create(cases[k].arch, &m));
        CHECK_OK(ffnn_model_init(m, 7));
        ffnn_train_config cfg = ffnn_train_config_default();
        cfg.batch_size = cases[k].batch;
        cfg.learning_rate = 0.05f;
        cfg.strategy = FFNN_STRATEGY_PERSISTENT;
        cfg.precision = FFNN_PRECISION_TF32;
        ffnn_trainer *cpu = NULL, *gpu = NULL, *fp32 = NULL;
        CHECK_OK(test_trainer_pair(m, train, cfg, &cpu, &gpu));
        CHECK(ffnn_trainer_strategy(gpu) == FFNN_STRATEGY_PERSISTENT, "tf32 ran as %s",
              ffnn_strategy_name(ffnn_trainer_strategy(gpu)));
        cfg.precision = FFNN_PRECISION_FP32;
        cfg.device = FFNN_DEVICE_CUDA;
        CHECK_OK(ffnn_trainer_create(m, train, &cfg, &fp32));
        const size_t steps = (n + cases[k].batch - 1) / cases[k].batch;
        char what[80];
        snprintf(what, sizeof what, "%s batch %zu tf32", cases[k].arch, cases[k].batch);
        double worst = 0;
        size_t differ = 0;
        for (int epoch = 1; epoch <= 2; epoch++) {
            CHECK_PASS(epoch_follows(cpu, gpu, steps, TRAIN_REL_TF32, what, epoch, &worst));
            ffnn_epoch_stats s32;
            CHECK_OK(ffnn_trainer_run_epoch(fp32, NULL, NULL, &s32));
            const double *lt = NULL, *lf = NULL;
            size_t nt = 0, nf = 0;
            CHECK_OK(ffnn_trainer_step_losses(gpu, &lt, &nt));
            CHECK_OK(ffnn_trainer_step_losses(fp32, &lf, &nf));
            CHECK(nt == nf, "%s: %zu tf32 steps, %zu fp32", what, nt, nf);
            for (size_t st = 0; st < nt; st++)
                differ += memcmp(&lt[st], &lf[st], sizeof(double)) != 0;
        }
        if (cases[k].tc)
            CHECK(differ >= steps, "%s: only %zu of %zu step losses differ from fp32's: the "
                  "TF32 rounding did not run", what, differ, 2 * steps);
        else
            CHECK(differ == 0, "%s: %zu of %zu step losses differ from the fp32 kernel's, "
                  "which runs here", what, differ, 2 * steps);
        printf("     %s: 2 epochs of %zu steps, worst relative loss difference %.2e, "
               "%zu of %zu steps differ from fp32\n", what, steps, worst, differ, 2 * steps);
        TEST_FREE(cpu, gpu, fp32, m, train);
    }
    ffnn_dataset_free(full);
    return TEST_PASS;
}

/* An explicit persistent request for a net outside its scope fails at create
 * with the reason; auto picks another strategy for it. */
TEST("strategies_persistent_refuses_deep_net", persistent_refusal)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *train = NULL, *test = NULL;
    LOAD_FASHION(&train, &test);
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("784-32relu-32relu-10", &m));
    ffnn_train_config cfg = test_train_config(FFNN_DEVICE_CUDA, FFNN_STRATEGY_PERSISTENT);
    ffnn_trainer *t = NULL;
    CHECK(ffnn_trainer_create(m, train, &cfg, &t) == FFNN_ERR_UNSUPPORTED && !t,
          "persistent accepted a 3-layer net");
    CHECK(strstr(ffnn_last_error(), "one hidden layer"), "%s", ffnn_last_error());
    cfg.strategy = FFNN_STRATEGY_AUTO;
    CHECK_OK(ffnn_trainer_create(m, train, &cfg, &t));
    CHECK(ffnn_trainer_strategy(t) != FFNN_STRATEGY_PERSISTENT &&
          ffnn_trainer_strategy(t) != FFNN_STRATEGY_AUTO, "auto resolved to %s",
          ffnn_strategy_name(ffnn_trainer_strategy(t)));
    TEST_FREE(t, m, train, test);
    return TEST_PASS;
}

/* Seed 001's regression (32-256relu:nobias-1:nobias, mse on float targets,
 * batch 256, lr 0.002) on synth:regression:2560 with the persistent kernel and
 * graph, one step at a time for 200 steps and then whole epochs (10 steps, the
 * last one short), against the cpu reference. */
TEST("strategies_persistent_mse_regression_follows_cpu", mse_follows)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *train = NULL, *test = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:regression:2500", 1, &train, &test));
    const ffnn_strategy ks[] = {FFNN_STRATEGY_PERSISTENT, FFNN_STRATEGY_GRAPH};
    for (int k = 0; k < 2; k++) {
        ffnn_model *m = NULL;
        CHECK_OK(ffnn_model_create("32-256relu:nobias-1:nobias", &m));
        CHECK_OK(ffnn_model_init(m, 3));
        ffnn_train_config cfg = ffnn_train_config_default();
        cfg.loss = FFNN_LOSS_MSE;
        cfg.batch_size = 256;
        cfg.learning_rate = 0.002f;
        cfg.strategy = ks[k];
        ffnn_trainer *cpu = NULL, *gpu = NULL;
        CHECK_OK(test_trainer_pair(m, train, cfg, &cpu, &gpu));
        CHECK(ffnn_trainer_strategy(gpu) == ks[k], "ran as %s",
              ffnn_strategy_name(ffnn_trainer_strategy(gpu)));
        double worst = 0;
        char what[80];
        snprintf(what, sizeof what, "%s mse", ffnn_strategy_name(ks[k]));
        CHECK_PASS(test_steps_follow(cpu, gpu, 200, what, &worst));
        for (int epoch = 1; epoch <= 3; epoch++)
            CHECK_PASS(epoch_follows(cpu, gpu, 10, PARITY_REL, what, epoch, &worst));
        printf("     32-256relu:nobias-1:nobias %s mse: 230 steps, worst relative loss "
               "difference %.2e\n", ffnn_strategy_name(ks[k]), worst);
        TEST_FREE(cpu, gpu, m);
    }
    TEST_FREE(train, test);
    return TEST_PASS;
}

/* The strategy table (src/strategy/table.c) has one entry per ffnn_strategy value,
 * each naming itself as ffnn_strategy_name does and complete: every strategy but
 * auto runs steps; a strategy with its own state frees it. */
TEST("strategies_table_covers_every_strategy", table_covers_enum)
{
    for (int k = 0; k < FFNN_STRATEGY_COUNT; k++) {
        const ffnn_strategy_impl *s = ffnn_strategy_get((ffnn_strategy)k);
        CHECK(s != NULL, "no table entry for strategy %d (%s)", k,
              ffnn_strategy_name((ffnn_strategy)k));
        CHECK((int)s->id == k, "entry %d holds strategy %d", k, (int)s->id);
        CHECK(strcmp(s->name, ffnn_strategy_name((ffnn_strategy)k)) == 0,
              "entry %d is named %s, ffnn_strategy_name says %s", k, s->name,
              ffnn_strategy_name((ffnn_strategy)k));
        CHECK(s->supports != NULL, "%s has no supports()", s->name);
        CHECK(k == (int)FFNN_STRATEGY_AUTO || k == (int)FFNN_STRATEGY_TUNE || s->run_steps != NULL,
              "%s has no run_steps()", s->name);
        CHECK(s->precisions & (1u << FFNN_PRECISION_FP32), "%s refuses fp32", s->name);
    }
    CHECK(ffnn_strategy_get((ffnn_strategy)FFNN_STRATEGY_COUNT) == NULL,
          "an entry past the enum");
    CHECK(ffnn_strategy_get((ffnn_strategy)-1) == NULL, "an entry for -1");
    return TEST_PASS;
}

/* The cached strategies (graph, cublas) choose steps per launch so that an
 * epoch's launches fit the graph cache: at most ffnn_graph_cache_slots()
 * launches for any epoch length (with more, LRU eviction recaptures every launch
 * of every epoch), never fewer steps than their measured default (graph 16,
 * cublas 8), and exactly the default while an epoch fits (Fashion-MNIST). */
TEST("strategies_graph_cache_holds_an_epoch", graph_cache_holds_an_epoch)
{
    const size_t slots = ffnn_graph_cache_slots();
    static const size_t epochs[] = {1, 7, 16, 938, 1024, 2047, 2048, 2049, 4096,
                                    131073, 1000000, 123456789};
    const ffnn_strategy ids[] = {FFNN_STRATEGY_GRAPH, FFNN_STRATEGY_CUBLAS,
                                 FFNN_STRATEGY_CUBLASLT};
    const size_t preferred[] = {16, 8, 8};
    for (int i = 0; i < 3; i++) {
        const ffnn_strategy_impl *s = ffnn_strategy_get(ids[i]);
        CHECK(s && s->default_steps, "%s has no default steps per launch",
              ffnn_strategy_name(ids[i]));
        for (size_t e = 0; e < sizeof epochs / sizeof epochs[0]; e++) {
            const size_t spe = epochs[e], steps = s->default_steps(spe);
            const size_t launches = (spe + steps - 1) / steps;
            CHECK(steps >= preferred[i], "%s: %zu steps per launch under its default %zu",
                  s->name, steps, preferred[i]);
            CHECK(launches <= slots, "%s: an epoch of %zu steps needs %zu launches, the "
                  "cache holds %zu", s->name, spe, launches, slots);
            if (spe <= slots * preferred[i])
                CHECK(steps == preferred[i], "%s: %zu steps per launch for an epoch of %zu "
                      "steps, the default is %zu", s->name, steps, spe, preferred[i]);
        }
    }
    return TEST_PASS;
}

/* --strategy tune without a GPU: the name parses; the rule resolves it as auto
 * (its fallback) for every batch and precision; a cpu trainer runs the OpenMP
 * backend as auto does, with the same losses bit for bit, nothing measured (an
 * empty note) and the caller's model untouched by creation. */
TEST("strategies_tune_on_cpu_is_auto", tune_on_cpu)
{
    ffnn_strategy k;
    CHECK_OK(ffnn_strategy_from_name("tune", &k));
    CHECK(k == FFNN_STRATEGY_TUNE && !strcmp(ffnn_strategy_name(k), "tune"), "tune -> %d", (int)k);
    ffnn_model *m = NULL, *deep = NULL;
    CHECK_OK(ffnn_model_create("784-64relu-10", &m));
    CHECK_OK(ffnn_model_create("784-64gelu-32relu-10", &deep));
    ffnn_train_config cfg = ffnn_train_config_default(), tune;
    for (int p = 0; p <= (int)FFNN_PRECISION_BF16; p++)
        for (size_t batch = 1; batch <= 4096; batch *= 2) {
            cfg.batch_size = batch;
            cfg.precision = (ffnn_precision)p;
            tune = cfg;
            tune.strategy = FFNN_STRATEGY_TUNE;
            CHECK(ffnn_strategy_resolve(m, &tune) == ffnn_strategy_resolve(m, &cfg) &&
                      ffnn_strategy_resolve(deep, &tune) == ffnn_strategy_resolve(deep, &cfg),
                  "tune's fallback is not auto's pick at batch %zu, %s", batch,
                  ffnn_precision_name(cfg.precision));
        }
    ffnn_model_free(deep);
    ffnn_dataset *full = NULL, *test = NULL, *train = NULL;
    if (ffnn_dataset_load_idx_dir(TEST_FASHION_DIR, &full, &test) != FFNN_OK)
        SKIP("Fashion-MNIST missing (%s): apt-get install dataset-fashion-mnist",
             ffnn_last_error());
    CHECK_OK(ffnn_dataset_slice(full, 0, 1000, &train));
    ffnn_dataset_free(full);
    CHECK_OK(ffnn_model_init(m, 3));
    float *before = malloc(m->parameter_count * sizeof *before);
    CHECK(before != NULL, "out of memory");
    memcpy(before, m->params, m->parameter_count * sizeof *before);
    cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    cfg.batch_size = 50;
    cfg.threads = 2;
    tune = cfg;
    tune.strategy = FFNN_STRATEGY_TUNE;
    ffnn_trainer *a = NULL, *t = NULL;
    CHECK_OK(ffnn_trainer_create(m, train, &tune, &t));
    int same = !memcmp(before, m->params, m->parameter_count * sizeof *before);
    free(before);
    CHECK(same, "creating a tune trainer changed the model's parameters");
    CHECK_OK(ffnn_trainer_create(m, train, &cfg, &a));
    CHECK(ffnn_trainer_strategy(t) == ffnn_trainer_strategy(a) &&
              ffnn_trainer_threads(t) == ffnn_trainer_threads(a),
          "tune on the cpu: %s on %d threads, auto: %s on %d",
          ffnn_strategy_name(ffnn_trainer_strategy(t)), ffnn_trainer_threads(t),
          ffnn_strategy_name(ffnn_trainer_strategy(a)), ffnn_trainer_threads(a));
    CHECK(ffnn_trainer_strategy_note(t) && ffnn_trainer_strategy_note(t)[0] == 0 &&
              ffnn_trainer_strategy_note(a)[0] == 0,
          "a note without a measurement: '%s'", ffnn_trainer_strategy_note(t));
    for (int s = 0; s < 30; s++) {
        double lt = 0, la = 0;
        CHECK_OK(ffnn_trainer_step(t, &lt));
        CHECK_OK(ffnn_trainer_step(a, &la));
        CHECK(lt == la, "step %d: tune %.17g, auto %.17g", s + 1, lt, la);
    }
    TEST_FREE(t, a, m, train, test);
    return TEST_PASS;
}

/* The time the note gives `name` (" name 12.3" or " name 12.3 us/step"), or -1
 * when the note does not name it with a number. */
static double note_time(const char *note, const char *name)
{
    char key[40];
    snprintf(key, sizeof key, " %s ", name);
    const char *at = strstr(note, key);
    if (!at)
        return -1.0;
    char *end = NULL;
    double us = strtod(at + strlen(key), &end);
    return end == at + strlen(key) ? -1.0 : us;
}

/* --strategy tune on cuda: the pick is one of the candidates measured, the note
 * names each candidate with a positive time per step and the pick after "->";
 * with a communicator (NCCL, a group of one GPU) it is auto, nothing measured;
 * creation leaves the caller's model as it was (the trials train a copy); the
 * tuned trainer follows the cpu reference within 1e-4 per step over 200 steps.
 * fp32 (persistent fits this net: five candidates) and tf32 (four: not
 * persistent, which is fp32 only). */
TEST("strategies_tune_on_cuda_picks_measured_and_follows_cpu", tune_on_cuda)
{
    SKIP_WITHOUT_GPU();
    ffnn_dataset *train = NULL, *test = NULL;
    LOAD_FASHION(&train, &test);
    static const char *const names[] = {"persistent", "graph", "fused", "cublas", "cublaslt"};
    static const ffnn_strategy ids[] = {FFNN_STRATEGY_PERSISTENT, FFNN_STRATEGY_GRAPH,
                                        FFNN_STRATEGY_FUSED, FFNN_STRATEGY_CUBLAS,
                                        FFNN_STRATEGY_CUBLASLT};
    for (int tf32 = 0; tf32 <= 1; tf32++) {
        ffnn_model *m = NULL;
        CHECK_OK(ffnn_model_create("784-64relu-10", &m));
        CHECK_OK(ffnn_model_init(m, 3));
        float *before = malloc(m->parameter_count * sizeof *before);
        CHECK(before != NULL, "out of memory");
        memcpy(before, m->params, m->parameter_count * sizeof *before);
        ffnn_train_config cfg = ffnn_train_config_default();
        cfg.batch_size = 64;
        cfg.learning_rate = 0.05f;
        cfg.seed = 5;
        cfg.device = FFNN_DEVICE_CUDA;
        cfg.strategy = FFNN_STRATEGY_TUNE;
        cfg.precision = tf32 ? FFNN_PRECISION_TF32 : FFNN_PRECISION_FP32;
        ffnn_trainer *gpu = NULL, *cpu = NULL;
        CHECK_OK(ffnn_trainer_create(m, train, &cfg, &gpu));
        int same = !memcmp(before, m->params, m->parameter_count * sizeof *before);
        free(before);
        CHECK(same, "tuning changed the caller's model parameters");
        const char *note = ffnn_trainer_strategy_note(gpu);
        ffnn_strategy pick = ffnn_trainer_strategy(gpu);
        printf("     784-64relu-10 batch 64 %s: %s\n", ffnn_precision_name(cfg.precision), note);
        CHECK(!strncmp(note, "tune:", 5), "note '%s'", note);
        int picked = 0;
        for (int i = 0; i < 5; i++) {
            double us = note_time(note, names[i]); /* every one takes fp32 and tf32 */
            CHECK(us > 0, "candidate %s not measured with a positive time: %s", names[i], note);
            picked |= pick == ids[i];
        }
        CHECK(picked, "picked %s, not a candidate: %s", ffnn_strategy_name(pick), note);
        char arrow[40];
        snprintf(arrow, sizeof arrow, "-> %s", ffnn_strategy_name(pick));
        CHECK(strstr(note, arrow), "the note does not name the pick %s: %s",
              ffnn_strategy_name(pick), note);
        if (!tf32) { /* fp32: every strategy follows the reference within 1e-4 */
            ffnn_train_config ref_cfg = cfg;
            ref_cfg.device = FFNN_DEVICE_CPU;
            ref_cfg.strategy = FFNN_STRATEGY_REFERENCE;
            CHECK_OK(ffnn_trainer_create(m, train, &ref_cfg, &cpu));
            double worst = 0;
            char what[80];
            snprintf(what, sizeof what, "tune -> %s", ffnn_strategy_name(pick));
            CHECK_PASS(test_steps_follow(cpu, gpu, 200, what, &worst));
            printf("     784-64relu-10 tune -> %s: 200 steps, worst relative loss difference "
                   "%.2e\n", ffnn_strategy_name(pick), worst);
            ffnn_trainer_free(cpu);
        }
        TEST_FREE(gpu, m);
    }
    if (ffnn_has_nccl()) { /* data parallelism (a group of one GPU): tune is auto's rule */
        ffnn_comm *comm = NULL;
        ffnn_model *m = NULL;
        ffnn_trainer *t = NULL;
        CHECK_OK(ffnn_comm_create_gpus(1, &comm));
        CHECK_OK(ffnn_model_create("784-64relu-10", &m));
        CHECK_OK(ffnn_model_init(m, 3));
        ffnn_trainer *lone = NULL;
        ffnn_train_config cfg = test_train_config(FFNN_DEVICE_CUDA, FFNN_STRATEGY_TUNE);
        CHECK_OK(ffnn_trainer_create_parallel(m, train, &cfg, comm, &t));
        /* a group of one trains as the plain run: tune measures nothing and takes
         * auto's pick for the net alone (persistent at batch 64) */
        ffnn_train_config auto_cfg = test_train_config(FFNN_DEVICE_CUDA, FFNN_STRATEGY_AUTO);
        CHECK_OK(ffnn_trainer_create(m, train, &auto_cfg, &lone));
        CHECK(ffnn_trainer_strategy(t) == ffnn_trainer_strategy(lone) &&
                  ffnn_trainer_strategy_note(t)[0] == 0,
              "tune with a communicator: %s (auto alone: %s), note '%s'",
              ffnn_strategy_name(ffnn_trainer_strategy(t)),
              ffnn_strategy_name(ffnn_trainer_strategy(lone)), ffnn_trainer_strategy_note(t));
        ffnn_trainer_free(lone);
        TEST_FREE(t, m);
        ffnn_comm_free(comm);
    }
    TEST_FREE(train, test);
    return TEST_PASS;
}

/* The head op with more than 48 KiB of shared memory (its kernel's attribute set
 * before the launch, backend/cuda/head.cu) inside the cublaslt strategy's captured
 * and replayed graphs: 16 classes on 128 and 256 hidden units (the one-kernel
 * head, 68 KiB of slot sums) and on 1024 (the three kernels: W staged in 64 KiB). Synthetic data: 1,024 samples of 64 features uniform in [-1, 1),
 * label = the argmax of x A for a fixed random A [64, 16]. Two epochs at batch 64
 * on the cpu reference and on cublaslt (fp32, sgd): every step's loss within
 * PARITY_REL of the cpu's, and the graphs captured then replayed. */
TEST("strategies_head_past_48k_shared_memory_in_graphs", head_wide_smem_in_graphs)
{
    SKIP_WITHOUT_GPU();
    enum { N = 1024, F = 64, K = 16 };
    float *x = malloc((size_t)N * F * sizeof(float)), *a = malloc((size_t)F * K * sizeof(float));
    int32_t *y = malloc(N * sizeof(int32_t));
    CHECK(x && a && y, "out of memory");
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    for (size_t i = 0; i < (size_t)N * F + (size_t)F * K; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const float u = (float)(state >> 40) / 16777216.0f * 2.0f - 1.0f; /* [-1, 1) */
        if (i < (size_t)N * F)
            x[i] = u;
        else
            a[i - (size_t)N * F] = u;
    }
    for (int n = 0; n < N; n++) {
        int best = 0;
        float best_v = -1e30f;
        for (int k = 0; k < K; k++) {
            float v = 0.0f;
            for (int f = 0; f < F; f++) v += x[(size_t)n * F + f] * a[(size_t)f * K + k];
            if (v > best_v) best_v = v, best = k;
        }
        y[n] = best;
    }
    y[0] = K - 1; /* every class count: K classes whatever the argmaxes */
    ffnn_dataset *train = NULL;
    CHECK_OK(ffnn_dataset_from_arrays(N, F, x, y, 0, NULL, &train));
    free(x);
    free(a);
    free(y);
    const char *archs[] = {"64-128relu-16", "64-256tanh-16", "64-1024sigmoid-16"};
    for (int ai = 0; ai < 3; ai++) {
        ffnn_model *m = NULL;
        CHECK_OK(ffnn_model_create(archs[ai], &m));
        CHECK_OK(ffnn_model_init(m, 5));
        ffnn_train_config cfg = ffnn_train_config_default();
        cfg.batch_size = 64;
        cfg.learning_rate = 0.05f;
        cfg.strategy = FFNN_STRATEGY_CUBLASLT;
        ffnn_trainer *cpu = NULL, *gpu = NULL;
        CHECK_OK(test_trainer_pair(m, train, cfg, &cpu, &gpu));
        CHECK(gpu->run.ext.head != NULL, "%s: cublaslt does not run the head op", archs[ai]);
        double worst = 0.0;
        for (int epoch = 1; epoch <= 2; epoch++)
            if (epoch_follows(cpu, gpu, N / 64, PARITY_REL, archs[ai], epoch, &worst) !=
                TEST_PASS)
                return TEST_FAIL;
        uint64_t captured = 0, replayed = 0;
        ffnn_graph_cache_counts(gpu->strategy_state, &captured, &replayed);
        CHECK(captured > 0 && replayed > 0, "%s: %llu graphs captured, %llu replayed", archs[ai],
              (unsigned long long)captured, (unsigned long long)replayed);
        printf("     %s cublaslt: 2 epochs, worst relative loss difference %.2e\n", archs[ai],
               worst);
        TEST_FREE(cpu, gpu, m);
    }
    ffnn_dataset_free(train);
    return TEST_PASS;
}
