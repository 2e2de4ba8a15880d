/* optim.h - the optimizers' per-step scalars and state sizes (optim.c), shared by
 * every backend's optimizer_update and the trainer. */
#ifndef FFNN_CORE_OPTIM_H
#define FFNN_CORE_OPTIM_H

#include <stddef.h>
#include <stdint.h>

#include "ffnn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One optimizer step as the backends apply it: the hyperparameters as float
 * (what PyTorch's kernels use for a float32 tensor) and the per-step scalars,
 * computed on the host in double from the decimal hyperparameters and then
 * rounded to float, as PyTorch does with Python floats. ffnn_optimizer_step_at()
 * fills it; the kernels only read it. */
typedef struct ffnn_optimizer_step {
    ffnn_optimizer kind;
    float lr;                    /* learning rate                                    */
    float momentum;              /* momentum: buf = momentum*buf + g                 */
    int nesterov;                /* momentum: d = g + momentum*buf (else d = buf)    */
    int first_step;              /* momentum: 1 at t = 1: buf = g, buf is not read   */
    float beta1, beta2;          /* adam: decays of m and v (the kernels use the     */
                                 /* one_minus_ values below)                         */
    float eps;                   /* adam: added to the denominator                   */
    float one_minus_beta1;       /* adam: (float)(1 - beta1), m's lerp weight        */
    float one_minus_beta2;       /* adam: (float)(1 - beta2)                         */
    float step_size;             /* adam: (float)(lr / (1 - beta1^t))                */
    float bias_correction2_sqrt; /* adam: (float)sqrt(1 - beta2^t)                   */
    float weight_decay;          /* sgd, momentum, adam: g += weight_decay p first;  */
                                 /* 0: no decay (the update of before, bit for bit)  */
    float decay_factor;          /* adamw: p *= decay_factor = (float)(1 - lr wd)    */
                                 /* before the Adam update (1: none)                 */
    size_t state_stride;         /* adam(w): floats from m to v in the state; 0: n   */
                                 /* (a call over part of the arena sets the whole    */
                                 /* arena's size, so that v = m + state_stride)      */
    const float *device_scalars; /* adam(w) on a GPU: NULL, or device memory holding */
                                 /* {step_size, bias_correction2_sqrt}, which the    */
                                 /* kernel reads instead of the two fields above: a  */
                                 /* captured graph then replays for every t          */
                                 /* (strategy/graph.c fills it before each launch)   */
} ffnn_optimizer_step;

/* Floats of optimizer state per parameter: sgd 0, momentum 1 (buf), adam and adamw
 * 2 (m, v). */
size_t ffnn_optimizer_state_count(ffnn_optimizer kind);

/* The step t (1-based: the t-th update of a trainer) of cfg's optimizer at its
 * learning rate cfg->learning_rate. */
ffnn_optimizer_step ffnn_optimizer_step_at(const ffnn_train_config *cfg, uint64_t t);

/* The same at learning rate lr (a double, as PyTorch's param_group['lr'] after a
 * scheduler; ffnn_optimizer_step_at passes the decimal value of
 * cfg->learning_rate, so the two agree for a constant rate). */
ffnn_optimizer_step ffnn_optimizer_step_lr(const ffnn_train_config *cfg, uint64_t t, double lr);

/* The same step without weight decay (the parameters a decay skips: biases under
 * decay_bias 0). */
ffnn_optimizer_step ffnn_optimizer_step_no_decay(ffnn_optimizer_step s);

/* The double a user meant by a float hyperparameter: the shortest decimal that
 * reads back as the same float (0.999f -> 0.999). */
double ffnn_decimal_value(float f);

#ifdef __cplusplus
}
#endif
#endif
