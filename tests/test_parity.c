/* test_parity.c - test_steps_follow (test_parity.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_parity.h"

test_result test_steps_follow(ffnn_trainer *cpu, ffnn_trainer *gpu, int steps,
                              const char *what, double *worst)
{
    if (test_quick() && steps > 4)
        steps = 4;
    for (int step = 1; step <= steps; step++) {
        double lc, lg;
        CHECK_OK(ffnn_trainer_step(cpu, &lc));
        CHECK_OK(ffnn_trainer_step(gpu, &lg));
        const double rel = fabs(lg - lc) / fabs(lc);
        if (rel > *worst)
            *worst = rel;
        CHECK(rel <= PARITY_REL, "%s step %d: cpu loss %.8f, cuda loss %.8f (rel %.2e)", what,
              step, lc, lg, rel);
    }
    return TEST_PASS;
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

int test_quick(void)
{
    const char *v = getenv("FFNN_TEST_QUICK");
    return v && *v;
}
