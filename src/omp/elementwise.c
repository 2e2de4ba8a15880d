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

/* ---- losses: the reference's row functions (src/cpu/loss.c), unchanged ---- */

static size_t argmax(const float *v, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (v[i] > v[best])
            best = i;
    return best;
}

static float target(const float *t, uint8_t y, size_t j, size_t width)
{
    if (t)
        return t[j];
    return width == 1 ? (float)y : (j == y ? 1.0f : 0.0f);
}

static void softmax_ce_row(const float *z, uint8_t y, size_t width, float scale, float *dz,
                           float *loss)
{
    float max = z[argmax(z, width)];
    float sum = 0.0f;
    for (size_t j = 0; j < width; j++)
        sum += expf(z[j] - max);
    float log_sum = logf(sum);
    *loss = log_sum + max - z[y];
    if (dz)
        for (size_t j = 0; j < width; j++)
            dz[j] = (expf(z[j] - max) / sum - (j == y ? 1.0f : 0.0f)) * scale;
}

static void sigmoid_bce_row(const float *z, uint8_t y, const float *tr, size_t width,
                            float scale, float *dz, float *loss)
{
    float sum = 0.0f;
    for (size_t j = 0; j < width; j++) {
        float t = target(tr, y, j, width);
        sum += fmaxf(z[j], 0.0f) - z[j] * t + log1pf(expf(-fabsf(z[j])));
        if (dz)
            dz[j] = (1.0f / (1.0f + expf(-z[j])) - t) * scale;
    }
    *loss = sum / (float)width;
}

static void mse_row(const float *o, uint8_t y, const float *tr, size_t width, float scale,
                    float *dz, float *loss)
{
    float sum = 0.0f;
    for (size_t j = 0; j < width; j++) {
        float diff = o[j] - target(tr, y, j, width);
        sum += diff * diff;
        if (dz)
            dz[j] = 2.0f * diff * scale;
    }
    *loss = sum / (float)width;
}

static uint8_t is_correct(ffnn_loss loss, const float *o, uint8_t y, const float *t,
                          size_t width)
{
    float threshold = loss == FFNN_LOSS_MSE ? 0.5f : 0.0f;
    if (t) {
        for (size_t j = 0; j < width; j++)
            if ((o[j] > threshold) != (t[j] > 0.5f))
                return 0;
        return 1;
    }
    if (width > 1)
        return argmax(o, width) == y;
    return (o[0] > threshold) == (y != 0);
}

void ffnn_omp_loss_rows(ffnn_loss loss, const float *out, const uint8_t *y,
                        const float *targets, size_t batch, size_t width, float *dout,
                        float *row_loss, uint8_t *row_correct, size_t begin, size_t end)
{
    float scale = loss == FFNN_LOSS_SOFTMAX_CE ? 1.0f / (float)batch
                                               : 1.0f / ((float)batch * (float)width);
    for (size_t n = begin; n < end; n++) {
        const float *o = out + n * width;                      /* [width] */
        float *d = dout ? dout + n * width : NULL;             /* [width] */
        const float *t = targets ? targets + n * width : NULL; /* [width] */
        uint8_t label = t ? 0 : y[n];
        switch (loss) {
        case FFNN_LOSS_SOFTMAX_CE: softmax_ce_row(o, label, width, scale, d, &row_loss[n]); break;
        case FFNN_LOSS_SIGMOID_BCE:
            sigmoid_bce_row(o, label, t, width, scale, d, &row_loss[n]);
            break;
        case FFNN_LOSS_MSE: mse_row(o, label, t, width, scale, d, &row_loss[n]); break;
        }
        if (row_correct)
            row_correct[n] = is_correct(loss, o, label, t, width);
    }
}
