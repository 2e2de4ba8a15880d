/* optim.c - the host side of the optimizers: state size and the per-step scalars
 * that the backends' optimizer_update kernels take (backend.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/optim.h"

size_t ffnn_optimizer_state_count(ffnn_optimizer kind)
{
    switch (kind) {
    case FFNN_OPT_MOMENTUM: return 1; /* buf    */
    case FFNN_OPT_ADAM:
    case FFNN_OPT_ADAMW: return 2;    /* m, v   */
    case FFNN_OPT_SGD: return 0;
    }
    return 0;
}

/* The double a user meant by a float hyperparameter: the shortest decimal that
 * reads back as the same float (0.999f -> 0.999, not 0.99900001287...). PyTorch
 * computes 1 - beta2, lr / (1 - beta1^t) ... from such Python floats; doing the
 * same here matters: (float)(1 - 0.999) = 0.001f but 1 - 0.999f = 0.00099998713f. */
double ffnn_decimal_value(float f)
{
    char text[32];
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, (double)f);
        if (strtof(text, NULL) == f)
            return strtod(text, NULL);
    }
    return (double)f; /* NaN: the config check refuses it before this is used */
}

ffnn_optimizer_step ffnn_optimizer_step_at(const ffnn_train_config *cfg, uint64_t t)
{
    return ffnn_optimizer_step_lr(cfg, t, ffnn_decimal_value(cfg->learning_rate));
}

ffnn_optimizer_step ffnn_optimizer_step_no_decay(ffnn_optimizer_step s)
{
    s.weight_decay = 0.0f;
    s.decay_factor = 1.0f;
    return s;
}

ffnn_optimizer_step ffnn_optimizer_step_lr(const ffnn_train_config *cfg, uint64_t t, double lr)
{
    ffnn_optimizer_step s;
    memset(&s, 0, sizeof s);
    s.kind = cfg->optimizer;
    s.lr = (float)lr;
    s.momentum = cfg->momentum;
    s.nesterov = cfg->nesterov != 0;
    s.beta1 = cfg->beta1;
    s.beta2 = cfg->beta2;
    s.eps = cfg->epsilon;
    /* The scalars that change with t only for the optimizer that reads them (the
     * others' stay 0): sgd's and momentum's steps after the first are then the
     * same bytes, which a captured CUDA graph needs to be replayed (graph.c
     * same_update); Adam's bias corrections made every sgd step look new. */
    const int adam = cfg->optimizer == FFNN_OPT_ADAM || cfg->optimizer == FFNN_OPT_ADAMW;
    s.first_step = cfg->optimizer == FFNN_OPT_MOMENTUM && t <= 1;
    /* Adam's scalars, in double as PyTorch's Python code computes them */
    const double beta1 = ffnn_decimal_value(cfg->beta1), beta2 = ffnn_decimal_value(cfg->beta2);
    const double step = (double)(t < 1 ? 1 : t);
    const double bias_correction1 = 1.0 - pow(beta1, step);
    const double bias_correction2 = 1.0 - pow(beta2, step);
    s.one_minus_beta1 = (float)(1.0 - beta1);
    s.one_minus_beta2 = (float)(1.0 - beta2);
    s.step_size = adam ? (float)(lr / bias_correction1) : 0.0f;
    s.bias_correction2_sqrt = adam ? (float)sqrt(bias_correction2) : 0.0f;
    /* weight decay: L2 into the gradient, or adamw's factor (1 - lr wd) in double,
     * as PyTorch's Python computes it, then rounded */
    const double wd = ffnn_decimal_value(cfg->weight_decay);
    s.decay_factor = 1.0f;
    if (cfg->optimizer == FFNN_OPT_ADAMW) {
        if (cfg->weight_decay != 0.0f)
            s.decay_factor = (float)(1.0 - lr * wd);
    } else {
        s.weight_decay = cfg->weight_decay;
    }
    return s;
}
