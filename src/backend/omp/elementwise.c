/* elementwise.c - the omp backend's per-element and per-row loops (the gather's
 * rows, the activations, db's column sums, the optimizer step), each over a range
 * [begin, end) of elements or rows so that threads can split the work; the ops
 * that split them are in the files of their names (gather.c, activation.c,
 * dense.c, update.c). They live in one file because it is compiled for several
 * instruction sets (below; Makefile ELEMENTWISE_CFLAGS).
 * The per-element formulas are the reference's: src/backend/cpu/cpu_math.h, the one
 * copy both backends call (the loss is src/backend/cpu/loss.c's row function); one
 * loop per case (the activation a constant in each, so the switch folds away) so
 * that the compiler vectorises them; with the same libm calls and no contraction
 * of a*b+c (ISO C mode: -ffp-contract=off) they give the reference's bits. On
 * x86-64 with glibc each function is compiled for x86-64-v4 (AVX-512), x86-64-v3
 * (AVX2, FMA) and the baseline, and the loader picks one (target_clones): the
 * baseline has no fma instruction, so fmaf is a libm call there, with the same
 * result. */
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_math.h"
#include "core/activation.h"
#include "omp_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)
#define FFNN_OMP_CLONES \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define FFNN_OMP_CLONES
#endif

FFNN_OMP_CLONES
void ffnn_omp_gather_rows(const ffnn_gather_source *src, const int32_t *index, float *x,
                          int32_t *y, float *t, size_t begin, size_t end)
{
    const size_t features = src->features, width = src->target_width;
    for (size_t b = begin; b < end; b++) {
        const size_t r = (size_t)index[b];
        float *xb = x + b * features; /* [features] */
        if (src->images) {
            const uint8_t *img = src->images + r * features; /* [features] */
            for (size_t f = 0; f < features; f++)
                xb[f] = ffnn_u8_to_unit(img[f]);
        } else {
            memcpy(xb, src->values + r * features, features * sizeof(float));
        }
        if (src->labels)
            y[b] = src->labels[r];
        if (src->targets)
            memcpy(t + b * width, src->targets + r * width, width * sizeof(float));
    }
}

FFNN_OMP_CLONES
void ffnn_omp_activation_forward_range(ffnn_activation act, float param, const float *z,
                                       float *a, size_t begin, size_t end)
{
    switch (act) {
    case FFNN_ACT_RELU:
        for (size_t i = begin; i < end; i++)
            a[i] = ffnn_act_forward(FFNN_ACT_RELU, 0.0f, z[i]);
        break;
    case FFNN_ACT_SIGMOID:
        for (size_t i = begin; i < end; i++)
            a[i] = ffnn_act_forward(FFNN_ACT_SIGMOID, 0.0f, z[i]);
        break;
    case FFNN_ACT_TANH:
        for (size_t i = begin; i < end; i++)
            a[i] = ffnn_act_forward(FFNN_ACT_TANH, 0.0f, z[i]);
        break;
    case FFNN_ACT_IDENTITY:
        if (a != z)
            for (size_t i = begin; i < end; i++)
                a[i] = z[i];
        break;
    FFNN_ACT_CASES_AFTER_TANH:
        for (size_t i = begin; i < end; i++)
            a[i] = ffnn_act_forward(act, param, z[i]);
        break;
    }
}

/* saved: a = f(z), or z for the activations of ffnn_act_grad_from_input. */
FFNN_OMP_CLONES
void ffnn_omp_activation_backward_range(ffnn_activation act, float param, const float *saved,
                                        const float *da, float *dz, size_t begin, size_t end)
{
    switch (act) {
    case FFNN_ACT_RELU:
        for (size_t i = begin; i < end; i++)
            dz[i] = ffnn_act_backward(FFNN_ACT_RELU, 0.0f, da[i], saved[i]);
        break;
    case FFNN_ACT_SIGMOID:
        for (size_t i = begin; i < end; i++)
            dz[i] = ffnn_act_backward(FFNN_ACT_SIGMOID, 0.0f, da[i], saved[i]);
        break;
    case FFNN_ACT_TANH:
        for (size_t i = begin; i < end; i++)
            dz[i] = ffnn_act_backward(FFNN_ACT_TANH, 0.0f, da[i], saved[i]);
        break;
    case FFNN_ACT_IDENTITY: /* saved is not read (may be NULL) */
        for (size_t i = begin; i < end; i++)
            dz[i] = ffnn_act_backward(FFNN_ACT_IDENTITY, 0.0f, da[i], 0.0f);
        break;
    FFNN_ACT_CASES_AFTER_TANH:
        for (size_t i = begin; i < end; i++)
            dz[i] = ffnn_act_backward(act, param, da[i], saved[i]);
        break;
    }
}

FFNN_OMP_CLONES
void ffnn_omp_dense_bias_grad_range(const float *dz, size_t batch, size_t width, float *db,
                                    size_t begin, size_t end)
{
    for (size_t o = begin; o < end; o++)
        db[o] = 0.0f;
    for (size_t b = 0; b < batch; b++) {
        const float *row = dz + b * width; /* [width] */
        for (size_t o = begin; o < end; o++)
            db[o] += row[o];
    }
}

FFNN_OMP_CLONES
void ffnn_omp_optimizer_update_range(const ffnn_optimizer_step *s, float *params,
                                     const float *grads, float *state, size_t n, size_t begin,
                                     size_t end)
{
    const size_t stride = s->state_stride ? s->state_stride : n;
    if (s->weight_decay != 0.0f || s->kind == FFNN_OPT_ADAMW) {
        /* weight decay, adamw: the reference's element function */
        float *s1 = s->kind == FFNN_OPT_SGD || s->kind == FFNN_OPT_MOMENTUM ? NULL : state + stride;
        for (size_t i = begin; i < end; i++)
            ffnn_optimizer_element(s, &params[i], grads[i], state ? &state[i] : NULL,
                                   s1 ? &s1[i] : NULL);
        return;
    }
    switch (s->kind) {
    case FFNN_OPT_ADAMW: break; /* above */
    case FFNN_OPT_SGD: {
        const float lr = s->lr;
        for (size_t i = begin; i < end; i++)
            params[i] = ffnn_sgd(params[i], lr, grads[i]);
        break;
    }
    case FFNN_OPT_MOMENTUM: {
        /* one loop per (first_step, nesterov) case, the flags constants in each */
        float *buf = state; /* [n] */
        const float momentum = s->momentum, lr = s->lr;
        if (s->first_step) { /* buf is not read */
            const int nesterov = s->nesterov;
            for (size_t i = begin; i < end; i++) {
                const float g = grads[i];
                const float b = ffnn_momentum_buf(&buf[i], g, momentum, 1);
                buf[i] = b;
                params[i] = ffnn_momentum_param(params[i], g, b, momentum, lr, nesterov);
            }
        } else if (s->nesterov) {
            for (size_t i = begin; i < end; i++) {
                const float g = grads[i];
                const float b = ffnn_momentum_buf(&buf[i], g, momentum, 0);
                buf[i] = b;
                params[i] = ffnn_momentum_param(params[i], g, b, momentum, lr, 1);
            }
        } else {
            for (size_t i = begin; i < end; i++) {
                const float g = grads[i];
                const float b = ffnn_momentum_buf(&buf[i], g, momentum, 0);
                buf[i] = b;
                params[i] = ffnn_momentum_param(params[i], g, b, momentum, lr, 0);
            }
        }
        break;
    }
    case FFNN_OPT_ADAM: {
        float *m = state, *v = state + stride; /* [n] each */
        const float w1 = s->one_minus_beta1, beta2 = s->beta2, w2 = s->one_minus_beta2;
        const float bc2 = s->bias_correction2_sqrt, eps = s->eps, step = s->step_size;
        for (size_t i = begin; i < end; i++) {
            const float g = grads[i];
            const float mi = ffnn_adam_m(m[i], g, w1);
            m[i] = mi;
            const float vi = ffnn_adam_v(v[i], g, beta2, w2);
            v[i] = vi;
            params[i] = ffnn_adam_param(params[i], mi, vi, step, bc2, eps);
        }
        break;
    }
    }
}

