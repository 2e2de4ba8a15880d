/* elementwise.c - the omp backend's element-wise ops, loss and gather, each over a
 * range [begin, end) of elements or rows so that threads can split the work.
 * The expressions are the reference's (src/cpu/activation.c, loss.c, update.c),
 * written as one loop per case so that the compiler vectorises them; with the
 * same libm calls and no contraction of a*b+c (ISO C mode: -ffp-contract=off)
 * they give the reference's bits. On x86-64 with glibc each function is compiled
 * for x86-64-v4 (AVX-512), x86-64-v3 (AVX2, FMA) and the baseline, and the loader
 * picks one (target_clones): the baseline has no fma instruction, so fmaf is a
 * libm call there, with the same result. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "omp_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)
#define FFNN_OMP_CLONES \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define FFNN_OMP_CLONES
#endif

FFNN_OMP_CLONES
void ffnn_omp_gather_rows(const ffnn_gather_source *src, const int32_t *index, float *x,
                          uint8_t *y, float *t, size_t begin, size_t end)
{
    const size_t features = src->features, width = src->target_width;
    for (size_t b = begin; b < end; b++) {
        const size_t r = (size_t)index[b];
        float *xb = x + b * features; /* [features] */
        if (src->images) {
            const uint8_t *img = src->images + r * features; /* [features] */
            for (size_t f = 0; f < features; f++)
                xb[f] = (float)img[f] / 255.0f;
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
void ffnn_omp_activation_forward(ffnn_activation act, const float *z, float *a, size_t begin,
                                 size_t end)
{
    switch (act) {
    case FFNN_ACT_RELU:
        for (size_t i = begin; i < end; i++)
            a[i] = z[i] > 0.0f ? z[i] : 0.0f;
        break;
    case FFNN_ACT_SIGMOID:
        for (size_t i = begin; i < end; i++)
            a[i] = 1.0f / (1.0f + expf(-z[i]));
        break;
    case FFNN_ACT_TANH:
        for (size_t i = begin; i < end; i++)
            a[i] = tanhf(z[i]);
        break;
    case FFNN_ACT_IDENTITY:
        if (a != z)
            for (size_t i = begin; i < end; i++)
                a[i] = z[i];
        break;
    }
}

FFNN_OMP_CLONES
void ffnn_omp_activation_backward(ffnn_activation act, const float *a, const float *da,
                                  float *dz, size_t begin, size_t end)
{
    switch (act) {
    case FFNN_ACT_RELU:
        for (size_t i = begin; i < end; i++)
            dz[i] = da[i] * (a[i] > 0.0f ? 1.0f : 0.0f);
        break;
    case FFNN_ACT_SIGMOID:
        for (size_t i = begin; i < end; i++)
            dz[i] = da[i] * (a[i] * (1.0f - a[i]));
        break;
    case FFNN_ACT_TANH:
        for (size_t i = begin; i < end; i++)
            dz[i] = da[i] * (1.0f - a[i] * a[i]);
        break;
    case FFNN_ACT_IDENTITY:
        for (size_t i = begin; i < end; i++)
            dz[i] = da[i] * 1.0f;
        break;
    }
}

FFNN_OMP_CLONES
void ffnn_omp_column_sum(const float *dz, size_t batch, size_t width, float *db, size_t begin,
                         size_t end)
{
    for (size_t o = begin; o < end; o++)
        db[o] = 0.0f;
    for (size_t b = 0; b < batch; b++) {
        const float *row = dz + b * width; /* [width] */
        for (size_t o = begin; o < end; o++)
            db[o] += row[o];
    }
}

/* PyTorch's lerp (src/cpu/update.c). */
static inline float lerp(float a, float b, float w)
{
    return fabsf(w) < 0.5f ? fmaf(w, b - a, a) : fmaf(w - 1.0f, b - a, b);
}

FFNN_OMP_CLONES
void ffnn_omp_optimizer_update(const ffnn_optimizer_step *s, float *params, const float *grads,
                               float *state, size_t n, size_t begin, size_t end)
{
    switch (s->kind) {
    case FFNN_OPT_SGD: {
        const float lr = s->lr;
        for (size_t i = begin; i < end; i++)
            params[i] -= lr * grads[i];
        break;
    }
    case FFNN_OPT_MOMENTUM: {
        float *buf = state; /* [n] */
        const float momentum = s->momentum, neg_lr = -s->lr;
        if (s->first_step) {
            for (size_t i = begin; i < end; i++) {
                const float g = grads[i];
                buf[i] = g;
                const float d = s->nesterov ? fmaf(momentum, g, g) : g;
                params[i] = fmaf(neg_lr, d, params[i]);
            }
        } else if (s->nesterov) {
            for (size_t i = begin; i < end; i++) {
                const float g = grads[i];
                const float b = buf[i] * momentum + g;
                buf[i] = b;
                params[i] = fmaf(neg_lr, fmaf(momentum, b, g), params[i]);
            }
        } else {
            for (size_t i = begin; i < end; i++) {
                const float b = buf[i] * momentum + grads[i];
                buf[i] = b;
                params[i] = fmaf(neg_lr, b, params[i]);
            }
        }
        break;
    }
    case FFNN_OPT_ADAM: {
        float *m = state, *v = state + n; /* [n] each */
        const float w1 = s->one_minus_beta1, beta2 = s->beta2, w2 = s->one_minus_beta2;
        const float bc2 = s->bias_correction2_sqrt, eps = s->eps, neg_step = -s->step_size;
        for (size_t i = begin; i < end; i++) {
            const float g = grads[i];
            const float mi = lerp(m[i], g, w1);
            m[i] = mi;
            const float decayed = v[i] * beta2;
            const float scaled = w2 * g;
            const float vi = decayed + scaled * g;
            v[i] = vi;
            const float denom = sqrtf(vi) / bc2 + eps;
            params[i] = params[i] + (neg_step * mi) / denom;
        }
        break;
    }
    }
}

