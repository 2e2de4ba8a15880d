/* test_parity.h - the foundation's cuda-vs-cpu parity criterion, shared by the
 * suites that check a cuda path against the cpu reference step by step. */
#ifndef FFNN_TEST_PARITY_H
#define FFNN_TEST_PARITY_H

#include "check.h"
#include "ffnn.h"

/* Per-step loss, relative: the foundation issue's parity tolerance. */
#define PARITY_REL 1e-4

/* Run `steps` ffnn_trainer_step calls on cpu and on gpu, one after the other; each
 * pair of batch losses must agree within PARITY_REL relative (the failure message
 * names `what` and the step). *worst: raised to the largest relative difference. */
test_result test_steps_follow(ffnn_trainer *cpu, ffnn_trainer *gpu, int steps,
                              const char *what, double *worst);

/* The same with the bound `bound` (relative; INFINITY: measured, not enforced) and
 * exactly `steps` steps (FFNN_TEST_QUICK not applied). */
test_result test_steps_within(ffnn_trainer *cpu, ffnn_trainer *gpu, int steps, double bound,
                              const char *what, double *worst);

/* The cpu reference trainer of model m on train (cfg with device cpu, strategy
 * reference, precision fp32) in *cpu, and cfg's trainer on the cuda device in *gpu.
 * Errors: ffnn_trainer_create's (*cpu may then be set, *gpu NULL). */
ffnn_status test_trainer_pair(ffnn_model *m, const ffnn_dataset *train,
                              ffnn_train_config cfg, ffnn_trainer **cpu, ffnn_trainer **gpu);

/* An optimizer of a parity run: its kind, Nesterov or not, learning rate, name. */
typedef struct test_follow_opt {
    ffnn_optimizer opt;
    int nesterov;
    float lr;
    const char *name;
} test_follow_opt;

/* Model arch (initialised with seed 3; batch 64, seed 5, optimizer o) trained on
 * train by the cpu reference and by the cuda strategy kernels in precision prec,
 * `steps` steps side by side within PARITY_REL (test_steps_follow); the cuda
 * trainer must run kernels. Prints "ARCH STRATEGY PRECISION OPT: N steps, worst
 * relative loss difference X". */
test_result test_follow_optimizer(const ffnn_dataset *train, const char *arch,
                                  ffnn_strategy kernels, ffnn_precision prec,
                                  const test_follow_opt *o, int steps);

/* 1 when FFNN_TEST_QUICK is set (non-empty): the GPU suites then run the same
 * kernels on fewer shapes and steps (test_steps_follow at most 4 steps), for the
 * slow compute-sanitizer tools (tools/sanitize_cuda.sh sets it for racecheck and
 * initcheck). Never set in make test. */
int test_quick(void);

#endif
