/* cpu_math.h - the one copy of the CPU element-wise math: the activations (forward,
 * and the derivative from the saved value: the output a = f(z), or z where the
 * derivative has no form in a; core/activation.h), the uint8 -> float input
 * conversion x = value / 255, and the per-element optimizer updates (sgd, momentum
 * with Nesterov and the first step, adam). The reference backend
 * (src/backend/cpu/activation.c, update.c) and the omp backend
 * (src/backend/omp/elementwise.c, local1d.c) both call these, so that they give the
 * same bits; the CUDA backend's src/backend/cuda/device_math.cuh spells the same
 * operations in the same order with explicit roundings.
 *
 * The optimizers round like PyTorch's vectorised CPU kernels on float32 tensors
 * (torch.optim single-tensor path): fmaf where PyTorch's kernel uses fmadd (add with
 * alpha, lerp), separate roundings elsewhere (mul_, addcmul_, sqrt, div, addcdiv_).
 *
 * Rounding contract: a*b + c below is two roundings. That holds in ISO C mode
 * (-std=c11: GCC's default is -ffp-contract=off) and would break under
 * -ffp-contract=fast (src/backend/omp/gemm.c's flag): include this header only from
 * files compiled without it. fmaf is one rounding everywhere (an fma instruction, or
 * libm's exact fmaf). -fno-math-errno (the omp files) changes no value.
 *
 * static inline functions of scalars (a pointer only where a value must not be read);
 * loops that call them with a constant activation fold the switch away and vectorise
 * as the hand-written per-case loops did. */
#ifndef FFNN_CPU_MATH_H
#define FFNN_CPU_MATH_H

#include <math.h>
#include <stdint.h>

#include "core/optim.h"
#include "ffnn.h"

/* ------------------------------------------------------------------ activations */

/* relu(z) = max(0, z), as z > 0 ? z : 0 (-0 and NaN give +0). */
static inline float ffnn_relu(float z) { return z > 0.0f ? z : 0.0f; }

/* sigmoid(z) = 1 / (1 + exp(-z)) (libm's expf). */
static inline float ffnn_sigmoid(float z) { return 1.0f / (1.0f + expf(-z)); }

/* Constants of the GELUs: 1/sqrt(2), 1/sqrt(2 pi), sqrt(2/pi) and the tanh form's
 * cubic coefficient (PyTorch's M_SQRT1_2, M_2_SQRTPI M_SQRT1_2 / 2, M_SQRT2
 * M_2_SQRTPI / 2, kKappa), rounded to float. */
#define FFNN_GELU_SQRT1_2 0.707106781186547524f
#define FFNN_GELU_INV_SQRT_2PI 0.398942280401432678f
#define FFNN_GELU_SQRT_2_PI 0.797884560802865356f
#define FFNN_GELU_KAPPA 0.044715f

/* The activation and its derivative, with param = the layer's parameter
 * (core/activation.h: leaky_relu's negative slope s, elu's alpha; unused by the
 * others). Each product and sum below rounds on its own, left to right as written
 * (PyTorch's CPU kernels' order for the new ones; libm's expf, erff, tanhf,
 * expm1f, log1pf):
 *
 *   act         a = f(z)                               saved   f'(z) from the saved value
 *   relu        z > 0 ? z : 0                          a       a > 0 ? 1 : 0
 *   sigmoid     1 / (1 + exp(-z))                      a       a (1 - a)
 *   tanh        tanh(z)                                a       1 - a a
 *   leaky_relu  z > 0 ? z : s z                        a       a > 0 ? 1 : s      (s >= 0)
 *   elu         z > 0 ? z : alpha expm1(z)             a       a > 0 ? 1 : a + alpha
 *                                                              (= alpha exp(z); alpha > 0)
 *   softplus    z > 20 ? z : log1p(exp(z))             a       1 - exp(-a) (= sigmoid(z))
 *   gelu        z 0.5 (1 + erf(z / sqrt 2))            z       c + z p, c = 0.5 (1 + erf(z /
 *                                                              sqrt 2)), p = exp(-0.5 z z) /
 *                                                              sqrt(2 pi)
 *   gelu_tanh   0.5 z (1 + tanh(u)), u = sqrt(2/pi)    z       0.5 (1 + t) + 0.5 z (1 - t t)
 *               (z + 0.044715 z^3)                             sqrt(2/pi) (1 + 3 0.044715 z z),
 *                                                              t = tanh(u)
 *   silu        z / (1 + exp(-z))                      z       s (1 + z (1 - s)), s = sigmoid(z)
 *   mish        z tanh(log1p(exp(z)))                  z       t + z s (1 - t t), t = tanh(
 *                                                              log1p(exp(z))), s = sigmoid(z)
 *   hardswish   z min(max(z + 3, 0), 6) / 6            z       z < -3 ? 0 : z <= 3 ? z / 3 +
 *                                                              0.5 : 1
 *   identity    z                                      -       1
 *
 * "saved" is the value the backward reads (ffnn_act_grad_from_input says which):
 * the output a where the derivative has a form in a, else the pre-activation z. */
static inline float ffnn_act_forward(ffnn_activation act, float param, float z)
{
    switch (act) {
    case FFNN_ACT_RELU: return ffnn_relu(z);
    case FFNN_ACT_SIGMOID: return ffnn_sigmoid(z);
    case FFNN_ACT_TANH: return tanhf(z);
    case FFNN_ACT_LEAKY_RELU: return z > 0.0f ? z : param * z;
    case FFNN_ACT_ELU: return z > 0.0f ? z : param * expm1f(z);
    case FFNN_ACT_SOFTPLUS: return z > 20.0f ? z : log1pf(expf(z));
    case FFNN_ACT_GELU: return z * 0.5f * (1.0f + erff(z * FFNN_GELU_SQRT1_2));
    case FFNN_ACT_GELU_TANH: {
        const float cube = z * z * z;
        const float u = FFNN_GELU_SQRT_2_PI * (z + FFNN_GELU_KAPPA * cube);
        return 0.5f * z * (1.0f + tanhf(u));
    }
    case FFNN_ACT_SILU: return z / (1.0f + expf(-z));
    case FFNN_ACT_MISH: return z * tanhf(log1pf(expf(z)));
    case FFNN_ACT_HARDSWISH: {
        const float r = z + 3.0f;
        return z * (r > 0.0f ? (r < 6.0f ? r : 6.0f) : 0.0f) / 6.0f;
    }
    case FFNN_ACT_IDENTITY: break;
    }
    return z;
}

/* f'(z) from the saved value v (the table above: a = f(z), or z). */
static inline float ffnn_act_grad(ffnn_activation act, float param, float v)
{
    switch (act) {
    case FFNN_ACT_RELU: return v > 0.0f ? 1.0f : 0.0f;
    case FFNN_ACT_SIGMOID: return v * (1.0f - v);
    case FFNN_ACT_TANH: return 1.0f - v * v;
    case FFNN_ACT_LEAKY_RELU: return v > 0.0f ? 1.0f : param;
    case FFNN_ACT_ELU: return v > 0.0f ? 1.0f : v + param;
    case FFNN_ACT_SOFTPLUS: return 1.0f - expf(-v);
    case FFNN_ACT_GELU: {
        const float cdf = 0.5f * (1.0f + erff(v * FFNN_GELU_SQRT1_2));
        const float pdf = expf(-0.5f * v * v) * FFNN_GELU_INV_SQRT_2PI;
        return cdf + v * pdf;
    }
    case FFNN_ACT_GELU_TANH: {
        const float sq = v * v;
        const float u = FFNN_GELU_SQRT_2_PI * (v + FFNN_GELU_KAPPA * (sq * v));
        const float t = tanhf(u);
        const float left = 0.5f * (1.0f + t);
        const float right = 0.5f * v * (1.0f - t * t) * FFNN_GELU_SQRT_2_PI *
                            (1.0f + 3.0f * FFNN_GELU_KAPPA * sq);
        return left + right;
    }
    case FFNN_ACT_SILU: {
        const float s = ffnn_sigmoid(v);
        return s * (1.0f + v * (1.0f - s));
    }
    case FFNN_ACT_MISH: {
        const float t = tanhf(log1pf(expf(v)));
        const float s = ffnn_sigmoid(v);
        return t + v * s * (1.0f - t * t);
    }
    case FFNN_ACT_HARDSWISH: return v < -3.0f ? 0.0f : (v <= 3.0f ? v / 3.0f + 0.5f : 1.0f);
    case FFNN_ACT_IDENTITY: break;
    }
    return 1.0f;
}

/* dz = g f'(z) = g * ffnn_act_grad(act, param, v), one rounding (identity: g * 1). */
static inline float ffnn_act_backward(ffnn_activation act, float param, float g, float v)
{
    return g * ffnn_act_grad(act, param, v);
}

/* ------------------------------------------------------------------ uint8 input */

/* x = p / 255, correctly rounded (IEEE division). */
static inline float ffnn_u8_to_unit(uint8_t p) { return (float)p / 255.0f; }

/* ------------------------------------------------------------------ optimizers */
/* Scalars as in ffnn_optimizer_step (src/core/optim.h), one parameter each. */

/* sgd: p' = p - lr g, the product rounded first (not one fma; PyTorch's fmadd rounds
 * once: the two differ by at most an ulp of p). */
static inline float ffnn_sgd(float p, float lr, float g) { return p - lr * g; }

/* momentum buffer: buf' = buf momentum + g (product rounded, then the add), or g at
 * the first step, where *buf is not read (PyTorch: buf.mul_(momentum).add_(g)). */
static inline float ffnn_momentum_buf(const float *buf, float g, float momentum,
                                      int first_step)
{
    return first_step ? g : *buf * momentum + g;
}

/* momentum parameter: d = nesterov ? g + momentum buf' (one fma) : buf';
 * p' = p - lr d (one fma). buf: the new buffer value. PyTorch: g.add(buf,
 * alpha=momentum); p.add_(d, alpha=-lr). */
static inline float ffnn_momentum_param(float p, float g, float buf, float momentum, float lr,
                                        int nesterov)
{
    const float d = nesterov ? fmaf(momentum, buf, g) : buf;
    return fmaf(-lr, d, p);
}

/* PyTorch's lerp(a, b, w): a + w (b - a) for |w| < 0.5, else b - (1 - w)(b - a),
 * each one fma (its vectorised form). */
static inline float ffnn_lerp_torch(float a, float b, float w)
{
    return fabsf(w) < 0.5f ? fmaf(w, b - a, a) : fmaf(w - 1.0f, b - a, b);
}

/* adam first moment: m' = lerp(m, g, 1 - beta1) (PyTorch: m.lerp_(g, 1-beta1)). */
static inline float ffnn_adam_m(float m, float g, float one_minus_beta1)
{
    return ffnn_lerp_torch(m, g, one_minus_beta1);
}

/* adam second moment: v' = v beta2 + ((1 - beta2) g) g, each product rounded
 * (PyTorch: v.mul_(beta2).addcmul_(g, g, value=1-beta2)). */
static inline float ffnn_adam_v(float v, float g, float beta2, float one_minus_beta2)
{
    const float decayed = v * beta2;
    const float scaled = one_minus_beta2 * g;
    return decayed + scaled * g;
}

/* adam parameter, m and v the new moments: denom = sqrt(v) / bias_correction2_sqrt
 * + eps; p' = p + (-step_size m) / denom (PyTorch: denom = (v.sqrt() /
 * bias_correction2_sqrt).add_(eps); p.addcdiv_(m, denom, value=-step_size)). */
static inline float ffnn_adam_param(float p, float m, float v, float step_size,
                                    float bias_correction2_sqrt, float eps)
{
    const float denom = sqrtf(v) / bias_correction2_sqrt + eps;
    return p + (-step_size * m) / denom;
}

/* L2 weight decay into the gradient (sgd, momentum, adam): g' = g + wd p, one fma
 * (PyTorch: grad = grad.add(param, alpha=weight_decay)). */
static inline float ffnn_decay_grad(float g, float p, float wd) { return fmaf(wd, p, g); }

/* adamw's decoupled decay: p' = p factor, factor = (float)(1 - lr wd), one rounding
 * (PyTorch: param.mul_(1 - lr * weight_decay)). */
static inline float ffnn_decay_param(float p, float factor) { return p * factor; }

/* adamw first moment as torch 1.13's AdamW spells it: m' = (m beta1) + (1 - beta1) g,
 * the product rounded, then one fma (PyTorch: exp_avg.mul_(beta1).add_(grad,
 * alpha=1 - beta1); its Adam uses lerp_, ffnn_adam_m). */
static inline float ffnn_adamw_m(float m, float g, float beta1, float one_minus_beta1)
{
    return fmaf(one_minus_beta1, g, m * beta1);
}

/* One optimizer step of one parameter, every optimizer and weight decay: p the
 * parameter, g its gradient, s0/s1 its state (momentum: buf at s0; adam, adamw: m
 * at s0, v at s1; not read where the optimizer has none). The per-case loops of
 * the omp backend give the same bits without weight decay. */
static inline void ffnn_optimizer_element(const ffnn_optimizer_step *s, float *p, float g,
                                          float *s0, float *s1)
{
    float w = *p;
    if (s->weight_decay != 0.0f)
        g = ffnn_decay_grad(g, w, s->weight_decay);
    switch (s->kind) {
    case FFNN_OPT_SGD: *p = ffnn_sgd(w, s->lr, g); return;
    case FFNN_OPT_MOMENTUM: {
        const float b = ffnn_momentum_buf(s0, g, s->momentum, s->first_step);
        *s0 = b;
        *p = ffnn_momentum_param(w, g, b, s->momentum, s->lr, s->nesterov);
        return;
    }
    case FFNN_OPT_ADAM:
    case FFNN_OPT_ADAMW: {
        float m;
        if (s->kind == FFNN_OPT_ADAMW) {
            if (s->decay_factor != 1.0f)
                w = ffnn_decay_param(w, s->decay_factor);
            m = ffnn_adamw_m(*s0, g, s->beta1, s->one_minus_beta1);
        } else {
            m = ffnn_adam_m(*s0, g, s->one_minus_beta1);
        }
        const float v = ffnn_adam_v(*s1, g, s->beta2, s->one_minus_beta2);
        *s0 = m;
        *s1 = v;
        *p = ffnn_adam_param(w, m, v, s->step_size, s->bias_correction2_sqrt, s->eps);
        return;
    }
    }
}

/* ------------------------------------------------------------------ clipping, ema */

/* clip by value: min(max(g, -v), v) (torch: g.clamp_(min=-v, max=v)). */
static inline float ffnn_clip_value(float g, float v) { return g < -v ? -v : (g > v ? v : g); }

/* clip by norm's coefficient, in float: min(max_norm / (norm + 1e-6), 1)
 * (torch 1.13: clip_coef = max_norm / (total_norm + 1e-6), clamped at 1; the
 * gradients are then multiplied by it, by 1 too). */
static inline float ffnn_clip_coef(float max_norm, float norm)
{
    const float c = max_norm / (norm + 1e-6f);
    return c < 1.0f ? c : 1.0f;
}

/* ema' = (ema decay) + (1 - decay) p: the product rounded, then one fma (torch:
 * ema.mul_(decay).add_(p, alpha=1 - decay)). */
static inline float ffnn_ema(float ema, float p, float decay, float one_minus_decay)
{
    return fmaf(one_minus_decay, p, ema * decay);
}

#endif
