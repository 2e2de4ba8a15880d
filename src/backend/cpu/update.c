/* update.c - batch gather and the optimizer updates, CPU reference.
 *
 * The per-element formulas are cpu_math.h's (shared with the omp backend): the
 * optimizers round like PyTorch's vectorised CPU kernels on float32 tensors
 * (torch.optim single-tensor path). This file relies on ISO C mode (-std=c11: no
 * contraction of a*b+c into an fma) so that the separate roundings stay separate. */
#include <string.h>

#include "cpu_math.h"
#include "cpu_ops.h"

void ffnn_cpu_gather(const ffnn_gather_source *src, const int32_t *index, size_t batch,
                     float *x, int32_t *y, float *t)
{
    const size_t features = src->features, width = src->target_width;
    for (size_t b = 0; b < batch; b++) {
        const size_t r = (size_t)index[b];
        if (src->images) {
            const uint8_t *img = src->images + r * features; /* [features] */
            for (size_t f = 0; f < features; f++)
                x[b * features + f] = ffnn_u8_to_unit(img[f]);
        } else {
            memcpy(x + b * features, src->values + r * features, features * sizeof(float));
        }
        if (src->labels)
            y[b] = src->labels[r];
        if (src->targets)
            memcpy(t + b * width, src->targets + r * width, width * sizeof(float));
    }
}

/* w <- w - lr * g  (seed 000's update; the gradient already averages the batch;
 * ffnn_sgd: the product is rounded first, as since seed 000) */
void ffnn_cpu_sgd_update(float *params, const float *grads, size_t n, float learning_rate)
{
    for (size_t i = 0; i < n; i++)
        params[i] = ffnn_sgd(params[i], learning_rate, grads[i]);
}

/* buf = momentum*buf + g (buf = g at the first step); d = nesterov ? g + momentum*buf
 * : buf; w <- w - lr d.  PyTorch: buf.mul_(momentum).add_(g); g.add(buf, alpha=
 * momentum); p.add_(d, alpha=-lr). buf [n]. */
void ffnn_cpu_momentum_update(const ffnn_optimizer_step *s, float *params, const float *grads,
                              float *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const float g = grads[i];
        const float b = ffnn_momentum_buf(&buf[i], g, s->momentum, s->first_step);
        buf[i] = b;
        params[i] = ffnn_momentum_param(params[i], g, b, s->momentum, s->lr, s->nesterov);
    }
}

/* m = lerp(m, g, 1-beta1); v = beta2 v + ((1-beta2) g) g;
 * w <- w + (-step_size m) / (sqrt(v) / bias_correction2_sqrt + eps).
 * PyTorch: m.lerp_(g, 1-beta1); v.mul_(beta2).addcmul_(g, g, value=1-beta2);
 * denom = (v.sqrt() / bias_correction2_sqrt).add_(eps); p.addcdiv_(m, denom,
 * value=-step_size). m [n], v [n]. */
void ffnn_cpu_adam_update(const ffnn_optimizer_step *s, float *params, const float *grads,
                          float *m, float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const float g = grads[i];
        m[i] = ffnn_adam_m(m[i], g, s->one_minus_beta1);
        v[i] = ffnn_adam_v(v[i], g, s->beta2, s->one_minus_beta2);
        params[i] = ffnn_adam_param(params[i], m[i], v[i], s->step_size,
                                    s->bias_correction2_sqrt, s->eps);
    }
}
