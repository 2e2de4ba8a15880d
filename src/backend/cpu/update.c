/* update.c - the parameter updates (optimizer step, gradient clipping, EMA), CPU
 * reference.
 *
 * The per-element formulas are cpu_math.h's (shared with the omp backend): the
 * optimizers round like PyTorch's vectorised CPU kernels on float32 tensors
 * (torch.optim single-tensor path). This file relies on ISO C mode (-std=c11: no
 * contraction of a*b+c into an fma) so that the separate roundings stay separate. */

#include "cpu_math.h"
#include "cpu_ops.h"

/* w <- w - lr * g  (seed 000's update; the gradient already averages the batch;
 * ffnn_sgd: the product is rounded first, as since seed 000) */
void ffnn_cpu_optimizer_update_sgd(float *params, const float *grads, size_t n,
                                   float learning_rate)
{
    for (size_t i = 0; i < n; i++)
        params[i] = ffnn_sgd(params[i], learning_rate, grads[i]);
}

/* Every optimizer, element by element (ffnn_optimizer_element):
 *   (sgd, momentum, adam) g += wd p  (PyTorch: grad.add(param, alpha=weight_decay))
 *   sgd       w <- w - lr g
 *   momentum  buf = momentum*buf + g (g at the first step); d = nesterov ?
 *             g + momentum*buf : buf; w <- w - lr d  (PyTorch: buf.mul_(momentum).
 *             add_(g); g.add(buf, alpha=momentum); p.add_(d, alpha=-lr))
 *   adam      m = lerp(m, g, 1-beta1); v = beta2 v + ((1-beta2) g) g;
 *             w <- w + (-step_size m) / (sqrt(v) / bias_correction2_sqrt + eps)
 *             (PyTorch: m.lerp_(g, 1-beta1); v.mul_(beta2).addcmul_(g, g, value=
 *             1-beta2); denom = (v.sqrt() / bias_correction2_sqrt).add_(eps);
 *             p.addcdiv_(m, denom, value=-step_size))
 *   adamw     w *= (1 - lr wd); m = beta1 m + (1-beta1) g; then as adam
 * state: momentum buf [n]; adam(w) m [n] at state, v [n] at state + stride
 * (stride: s->state_stride, or n when 0). */
void ffnn_cpu_optimizer_update(const ffnn_optimizer_step *s, float *params, const float *grads,
                               float *state, size_t n)
{
    const size_t stride = s->state_stride ? s->state_stride : n;
    float *s1 = state && (s->kind == FFNN_OPT_ADAM || s->kind == FFNN_OPT_ADAMW) ? state + stride
                                                                                : NULL;
    for (size_t i = 0; i < n; i++)
        ffnn_optimizer_element(s, &params[i], grads[i], state ? &state[i] : NULL,
                               s1 ? &s1[i] : NULL);
}

/* Sum of g^2 over [begin, end), in double, in order (the clipping norm's part). */
double ffnn_cpu_grad_clip_sum_squares(const float *g, size_t begin, size_t end)
{
    double sum = 0.0;
    for (size_t i = begin; i < end; i++)
        sum += (double)g[i] * (double)g[i];
    return sum;
}

/* Clip by value over [begin, end) (backend.h grad_clip). */
void ffnn_cpu_grad_clip_value(float *g, size_t begin, size_t end, float max_value)
{
    for (size_t i = begin; i < end; i++)
        g[i] = ffnn_clip_value(g[i], max_value);
}

/* g *= coef over [begin, end) (clip by norm, after the norm). */
void ffnn_cpu_grad_clip_scale(float *g, size_t begin, size_t end, float coef)
{
    for (size_t i = begin; i < end; i++)
        g[i] = g[i] * coef;
}

/* ema = ema decay + (1 - decay) p over [begin, end) (backend.h ema_update). */
void ffnn_cpu_ema_update(float *ema, const float *p, size_t begin, size_t end, float decay,
                  float one_minus_decay)
{
    for (size_t i = begin; i < end; i++)
        ema[i] = ffnn_ema(ema[i], p[i], decay, one_minus_decay);
}
