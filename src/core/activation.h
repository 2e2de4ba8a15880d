/* activation.h - what the training loop and the backends need to know about an
 * activation beyond its formula (the formulas: src/backend/cpu/cpu_math.h for the
 * cpu and omp backends, src/backend/cuda/device_math.cuh for cuda):
 *
 *   - which value its backward reads (the "saved" value): the output a = f(z) for
 *     relu, sigmoid, tanh, leaky_relu, elu, softplus and identity, whose derivative
 *     is written through a; the pre-activation z for gelu, gelu_tanh, silu, mish
 *     and hardswish, whose derivative has no closed form in a. The trainer keeps a
 *     pre-activation buffer only for the layers of the second kind
 *     (src/strategy/step_forward.c, step_backward.c, src/train/trainer.c);
 *   - its parameter: leaky_relu's negative slope and elu's alpha (the architecture
 *     string's '256leaky_relu0.2', core/arch.c), 0 and unused for the others.
 *
 * Static inline functions of the enum, usable from C and from .cu host code. */
#ifndef FFNN_CORE_ACTIVATION_H
#define FFNN_CORE_ACTIVATION_H

#include "ffnn.h"

/* leaky_relu's default negative slope and elu's default alpha (torch.nn.LeakyReLU(),
 * torch.nn.ELU()). */
#define FFNN_LEAKY_RELU_DEFAULT_SLOPE 0.01f
#define FFNN_ELU_DEFAULT_ALPHA 1.0f

/* The case labels of the activations after the first four (leaky_relu, elu, softplus,
 * gelu, gelu_tanh, silu, mish, hardswish), in enum order: for the switches that treat
 * them alike (one general loop in omp/elementwise.c, "known" in cuda/activation.cu).
 * Use: `switch (act) { ... FFNN_ACT_CASES_AFTER_TANH: stmt; }`. */
#define FFNN_ACT_CASES_AFTER_TANH                                                       \
    case FFNN_ACT_LEAKY_RELU:                                                           \
    case FFNN_ACT_ELU:                                                                  \
    case FFNN_ACT_SOFTPLUS:                                                             \
    case FFNN_ACT_GELU:                                                                 \
    case FFNN_ACT_GELU_TANH:                                                            \
    case FFNN_ACT_SILU:                                                                 \
    case FFNN_ACT_MISH:                                                                 \
    case FFNN_ACT_HARDSWISH

/* 1 when act's backward reads the pre-activation z (gelu, gelu_tanh, silu, mish,
 * hardswish), 0 when it reads the output a = f(z) (every other activation). */
static inline int ffnn_act_grad_from_input(ffnn_activation act)
{
    switch (act) {
    case FFNN_ACT_GELU:
    case FFNN_ACT_GELU_TANH:
    case FFNN_ACT_SILU:
    case FFNN_ACT_MISH:
    case FFNN_ACT_HARDSWISH:
        return 1;
    default:
        return 0;
    }
}

/* 1 when act takes a parameter in the architecture string (leaky_relu, elu). */
static inline int ffnn_act_has_param(ffnn_activation act)
{
    return act == FFNN_ACT_LEAKY_RELU || act == FFNN_ACT_ELU;
}

/* act's parameter when the architecture string gives none: 0.01 for leaky_relu,
 * 1 for elu, 0 (unused) for the others. */
static inline float ffnn_act_default_param(ffnn_activation act)
{
    return act == FFNN_ACT_LEAKY_RELU ? FFNN_LEAKY_RELU_DEFAULT_SLOPE
           : act == FFNN_ACT_ELU      ? FFNN_ELU_DEFAULT_ALPHA
                                      : 0.0f;
}

#endif
