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

int test_quick(void)
{
    const char *v = getenv("FFNN_TEST_QUICK");
    return v && *v;
}
