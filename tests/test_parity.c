/* test_parity.c - test_steps_follow (test_parity.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_fixtures.h"
#include "test_parity.h"

test_result test_steps_within(ffnn_trainer *cpu, ffnn_trainer *gpu, int steps, double bound,
                              const char *what, double *worst)
{
    for (int step = 1; step <= steps; step++) {
        double lc, lg;
        CHECK_OK(ffnn_trainer_step(cpu, &lc));
        CHECK_OK(ffnn_trainer_step(gpu, &lg));
        const double rel = fabs(lg - lc) / fabs(lc);
        if (rel > *worst)
            *worst = rel;
        CHECK(rel <= bound, "%s step %d: cpu loss %.8f, cuda loss %.8f (rel %.2e > %.2e)", what,
              step, lc, lg, rel, bound);
    }
    return TEST_PASS;
}

test_result test_steps_follow(ffnn_trainer *cpu, ffnn_trainer *gpu, int steps,
                              const char *what, double *worst)
{
    return test_steps_within(cpu, gpu, test_quick() && steps > 4 ? 4 : steps, PARITY_REL, what,
                             worst);
}

ffnn_status test_trainer_pair(ffnn_model *m, const ffnn_dataset *train,
                              ffnn_train_config cfg, ffnn_trainer **cpu, ffnn_trainer **gpu)
{
    ffnn_train_config ref_cfg = cfg; /* the cpu reference */
    ref_cfg.device = FFNN_DEVICE_CPU;
    ref_cfg.strategy = FFNN_STRATEGY_REFERENCE;
    ref_cfg.precision = FFNN_PRECISION_FP32;
    *gpu = NULL;
    ffnn_status st = ffnn_trainer_create(m, train, &ref_cfg, cpu);
    if (st != FFNN_OK)
        return st;
    cfg.device = FFNN_DEVICE_CUDA;
    return ffnn_trainer_create(m, train, &cfg, gpu);
}

test_result test_follow_optimizer(const ffnn_dataset *train, const char *arch,
                                  ffnn_strategy kernels, ffnn_precision prec,
                                  const test_follow_opt *o, int steps)
{
    ffnn_model *m = NULL;
    ffnn_trainer *cpu = NULL, *gpu = NULL;
    CHECK_OK(ffnn_model_create(arch, &m));
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.batch_size = 64;
    cfg.optimizer = o->opt;
    cfg.nesterov = o->nesterov;
    cfg.learning_rate = o->lr;
    cfg.seed = 5;
    cfg.strategy = kernels;
    cfg.precision = prec;
    char what[160];
    snprintf(what, sizeof what, "%s %s %s %s", arch, ffnn_strategy_name(kernels),
             ffnn_precision_name(prec), o->name);
    double worst = 0;
    test_result r = TEST_FAIL;
    ffnn_status st = ffnn_model_init(m, 3);
    if (st == FFNN_OK)
        st = test_trainer_pair(m, train, cfg, &cpu, &gpu);
    if (st != FFNN_OK)
        fprintf(stderr, "    %s: %s\n", what, ffnn_last_error());
    else if (ffnn_trainer_strategy(gpu) != kernels)
        fprintf(stderr, "    %s ran as %s\n", what, ffnn_strategy_name(ffnn_trainer_strategy(gpu)));
    else
        r = test_steps_follow(cpu, gpu, steps, what, &worst);
    if (r == TEST_PASS)
        printf("     %s: %d steps, worst relative loss difference %.2e\n", what, steps, worst);
    TEST_FREE(cpu, gpu, m);
    return r;
}

int test_quick(void)
{
    const char *v = getenv("FFNN_TEST_QUICK");
    return v && *v;
}
