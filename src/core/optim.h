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
} ffnn_optimizer_step;

/* Floats of optimizer state per parameter: sgd 0, momentum 1 (buf), adam 2 (m, v). */
size_t ffnn_optimizer_state_count(ffnn_optimizer kind);

/* The step t (1-based: the t-th update of a trainer) of cfg's optimizer. */
ffnn_optimizer_step ffnn_optimizer_step_at(const ffnn_train_config *cfg, uint64_t t);

#ifdef __cplusplus
}
#endif
#endif
