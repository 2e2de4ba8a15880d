/*
 * device_math.cuh - the one copy of the CUDA backend's element-wise math: the
 * activations (forward, and the derivative from the saved value: the output
 * a = f(z), or z where the derivative has no form in a - core/activation.h),
 * the uint8 -> float input conversion x = value / 255, the per-element optimizer
 * updates (sgd, momentum with Nesterov and the first step, adam) and the
 * per-element pieces of the losses. Every kernel that needs one of them calls the
 * function here; no other .cu file spells these expressions.
 *
 * Reference: the CPU backend, src/backend/cpu/cpu_math.h (used by
 * src/backend/cpu/activation.c, update.c and the omp backend; the losses:
 * src/backend/cpu/loss.c), whose optimizer updates round like PyTorch's vectorised
 * float32 kernels (torch.optim single-tensor path: fma where PyTorch uses fmadd -
 * add with alpha, lerp - separate roundings elsewhere). The derivatives and the
 * optimizer updates spell every float operation with its rounding (__fmul_rn,
 * __fadd_rn, __fsub_rn, __fdiv_rn, __fsqrt_rn, __fmaf_rn) in the reference's order,
 * so that nvcc cannot contract or reassociate; the activations, the losses and the
 * /255 use plain operators where no product feeds an add (nothing to contract) and
 * __fmul_rn where one does.
 * So the GPU gives the CPU's bits for the same inputs except through expf / expm1f /
 * erff / tanhf / logf / log1pf, which are CUDA's (not the __expf intrinsics; the build has no
 * --use_fast_math) and can differ from glibc's by an ulp.
 *
 * Editing a formula here changes every kernel at once; change the CPU reference
 * (cpu_math.h) the same way, or the backends stop agreeing bit for bit.
 *
 * Included by .cu files only; C-like (no classes, no templates): __device__
 * __forceinline__ functions of scalars (pointers only where a value must not be
 * read).
 */
#ifndef FFNN_CUDA_DEVICE_MATH_CUH
#define FFNN_CUDA_DEVICE_MATH_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#include "core/optim.h"
#include "ffnn.h"

/* ------------------------------------------------------------------ activations */

/* relu(z) = max(0, z), as z > 0 ? z : 0 (-0 and NaN give +0). */
static __device__ __forceinline__ float ffnn_dev_relu(float z) { return z > 0.0f ? z : 0.0f; }

/* sigmoid(z) = 1 / (1 + exp(-z)), IEEE division (also the sigmoid of loss.cu's bce). */
static __device__ __forceinline__ float ffnn_dev_sigmoid(float z)
{
    return 1.0f / (1.0f + expf(-z));
}

/* tanh(z), CUDA's tanhf. */
static __device__ __forceinline__ float ffnn_dev_tanh(float z) { return tanhf(z); }

/* sigmoid'(z) = a (1 - a) and tanh'(z) = 1 - a^2 through a = f(z), products rounded
 * (no contraction into 1 - a^2). */
static __device__ __forceinline__ float ffnn_dev_sigmoid_grad(float a)
{
    return __fmul_rn(a, __fsub_rn(1.0f, a));
}
static __device__ __forceinline__ float ffnn_dev_tanh_grad(float a)
{
    return __fsub_rn(1.0f, __fmul_rn(a, a));
}

/* The GELUs' constants, cpu_math.h's (FFNN_GELU_*): 1/sqrt(2), 1/sqrt(2 pi),
 * sqrt(2/pi), 0.044715, rounded to float. */
#define FFNN_DEV_GELU_SQRT1_2 0.707106781186547524f
#define FFNN_DEV_GELU_INV_SQRT_2PI 0.398942280401432678f
#define FFNN_DEV_GELU_SQRT_2_PI 0.797884560802865356f
#define FFNN_DEV_GELU_KAPPA 0.044715f

/* a = f(z) for act, param the layer's parameter (leaky_relu's slope, elu's alpha;
 * unused by the others): cpu_math.h ffnn_act_forward's table, the same operations
 * in the same order, each product and sum rounded on its own (__fmul_rn,
 * __fadd_rn, __fdiv_rn where a product could otherwise be contracted into an add);
 * CUDA's expf, expm1f, erff, tanhf, log1pf. Identity (and any other value): z. */
static __device__ __forceinline__ float ffnn_dev_act_forward(ffnn_activation act, float param,
                                                             float z)
{
    switch (act) {
    case FFNN_ACT_RELU: return ffnn_dev_relu(z);
    case FFNN_ACT_SIGMOID: return ffnn_dev_sigmoid(z);
    case FFNN_ACT_TANH: return ffnn_dev_tanh(z);
    case FFNN_ACT_LEAKY_RELU: return z > 0.0f ? z : __fmul_rn(param, z);
    case FFNN_ACT_ELU: return z > 0.0f ? z : __fmul_rn(param, expm1f(z));
    case FFNN_ACT_SOFTPLUS: return z > 20.0f ? z : log1pf(expf(z));
    case FFNN_ACT_GELU:
        return __fmul_rn(__fmul_rn(z, 0.5f),
                         __fadd_rn(1.0f, erff(__fmul_rn(z, FFNN_DEV_GELU_SQRT1_2))));
    case FFNN_ACT_GELU_TANH: {
        const float cube = __fmul_rn(__fmul_rn(z, z), z);
        const float u = __fmul_rn(FFNN_DEV_GELU_SQRT_2_PI,
                                  __fadd_rn(z, __fmul_rn(FFNN_DEV_GELU_KAPPA, cube)));
        return __fmul_rn(__fmul_rn(0.5f, z), __fadd_rn(1.0f, tanhf(u)));
    }
    case FFNN_ACT_SILU: return __fdiv_rn(z, __fadd_rn(1.0f, expf(-z)));
    case FFNN_ACT_MISH: return __fmul_rn(z, tanhf(log1pf(expf(z))));
    case FFNN_ACT_HARDSWISH: {
        const float r = __fadd_rn(z, 3.0f);
        return __fdiv_rn(__fmul_rn(z, r > 0.0f ? (r < 6.0f ? r : 6.0f) : 0.0f), 6.0f);
    }
    default: return z;
    }
}

/* f'(z) from the saved value v: a = f(z) for relu [a > 0], sigmoid a (1 - a), tanh
 * 1 - a^2, leaky_relu, elu, softplus; z for gelu, gelu_tanh, silu, mish,
 * hardswish (core/activation.h ffnn_act_grad_from_input); identity 1. cpu_math.h
 * ffnn_act_grad's formulas with every product and sum rounded in its order. */
static __device__ __forceinline__ float ffnn_dev_act_grad(ffnn_activation act, float param,
                                                          float v)
{
    switch (act) {
    case FFNN_ACT_RELU: return v > 0.0f ? 1.0f : 0.0f;
    case FFNN_ACT_SIGMOID: return ffnn_dev_sigmoid_grad(v);
    case FFNN_ACT_TANH: return ffnn_dev_tanh_grad(v);
    case FFNN_ACT_LEAKY_RELU: return v > 0.0f ? 1.0f : param;
    case FFNN_ACT_ELU: return v > 0.0f ? 1.0f : __fadd_rn(v, param);
    case FFNN_ACT_SOFTPLUS: return __fsub_rn(1.0f, expf(-v));
    case FFNN_ACT_GELU: {
        const float cdf =
            __fmul_rn(0.5f, __fadd_rn(1.0f, erff(__fmul_rn(v, FFNN_DEV_GELU_SQRT1_2))));
        const float pdf = __fmul_rn(expf(__fmul_rn(__fmul_rn(-0.5f, v), v)),
                                    FFNN_DEV_GELU_INV_SQRT_2PI);
        return __fadd_rn(cdf, __fmul_rn(v, pdf));
    }
    case FFNN_ACT_GELU_TANH: {
        const float sq = __fmul_rn(v, v);
        const float u = __fmul_rn(FFNN_DEV_GELU_SQRT_2_PI,
                                  __fadd_rn(v, __fmul_rn(FFNN_DEV_GELU_KAPPA, __fmul_rn(sq, v))));
        const float t = tanhf(u);
        const float left = __fmul_rn(0.5f, __fadd_rn(1.0f, t));
        const float right = __fmul_rn(
            __fmul_rn(__fmul_rn(__fmul_rn(0.5f, v), __fsub_rn(1.0f, __fmul_rn(t, t))),
                      FFNN_DEV_GELU_SQRT_2_PI),
            __fadd_rn(1.0f, __fmul_rn(__fmul_rn(3.0f, FFNN_DEV_GELU_KAPPA), sq)));
        return __fadd_rn(left, right);
    }
    case FFNN_ACT_SILU: {
        const float s = ffnn_dev_sigmoid(v);
        return __fmul_rn(s, __fadd_rn(1.0f, __fmul_rn(v, __fsub_rn(1.0f, s))));
    }
    case FFNN_ACT_MISH: {
        const float t = tanhf(log1pf(expf(v)));
        const float s = ffnn_dev_sigmoid(v);
        return __fadd_rn(t, __fmul_rn(__fmul_rn(v, s), __fsub_rn(1.0f, __fmul_rn(t, t))));
    }
    case FFNN_ACT_HARDSWISH:
        return v < -3.0f ? 0.0f : (v <= 3.0f ? __fadd_rn(__fdiv_rn(v, 3.0f), 0.5f) : 1.0f);
    default: return 1.0f;
    }
}

/* dz = g f'(z) = g * ffnn_dev_act_grad(act, param, v), the product rounded (the
 * reference's da * d; identity: g * 1). */
static __device__ __forceinline__ float ffnn_dev_act_backward(ffnn_activation act, float param,
                                                              float g, float v)
{
    return __fmul_rn(g, ffnn_dev_act_grad(act, param, v));
}

/* The activations the matmul-epilogue, persistent and local1d kernels take (identity,
 * relu, sigmoid, tanh: strategy.h ffnn_strategy_fused_activations; fused.cu and
 * local1d.cu refuse the others): the same functions as the cases above, in a switch
 * without the others' code, which would cost those kernels registers (ptxas: up to
 * +5 per gemm kernel with every activation in the switch). a = f(z): */
static __device__ __forceinline__ float ffnn_dev_act_forward_basic(ffnn_activation act, float z)
{
    switch (act) {
    case FFNN_ACT_RELU: return ffnn_dev_relu(z);
    case FFNN_ACT_SIGMOID: return ffnn_dev_sigmoid(z);
    case FFNN_ACT_TANH: return ffnn_dev_tanh(z);
    default: return z;
    }
}

/* dz = g f'(z) through a = f(z) for identity, relu, sigmoid, tanh (as
 * ffnn_dev_act_backward). */
static __device__ __forceinline__ float ffnn_dev_act_backward_basic(ffnn_activation act, float g,
                                                                    float a)
{
    float d = 1.0f;
    switch (act) {
    case FFNN_ACT_RELU: d = a > 0.0f ? 1.0f : 0.0f; break;
    case FFNN_ACT_SIGMOID: d = ffnn_dev_sigmoid_grad(a); break;
    case FFNN_ACT_TANH: d = ffnn_dev_tanh_grad(a); break;
    default: break;
    }
    return __fmul_rn(g, d);
}

/* ------------------------------------------------------------------ uint8 input */

/* x = p / 255, IEEE division (correctly rounded): p in 0..255. */
static __device__ __forceinline__ float ffnn_dev_u8_to_unit(uint8_t p)
{
    return (float)p / 255.0f;
}

/* f / 255 for an integer-valued f in 0..255, correctly rounded without a division:
 * 1/255 split in two floats, hi = RN(1/255) and lo = RN(1/255 - hi), then
 * RN(f hi + RN(f lo)) in one fma. Equal to ffnn_dev_u8_to_unit for all 256 values
 * (checked exhaustively with exact rationals; golden_cuda holds it bit for bit): keep
 * the two so. Two FP32 operations (the Markstein form it replaced took three). For
 * any other f: f (hi + lo) is 1/255 to 2^-48 relative, so the result is f / 255
 * correctly rounded except where f / 255 lies that close to a rounding tie. */
static __device__ __forceinline__ float ffnn_dev_div255(float f)
{
    const float hi = 1.0f / 255.0f, lo = -2.31917584e-10f;
    return __fmaf_rn(f, hi, __fmul_rn(f, lo));
}

/* x = p / 255 (p in 0..255) as ffnn_dev_u8_to_unit, division-free: float(p) from
 * the exponent trick (2^23 + p, exact), then ffnn_dev_div255. */
static __device__ __forceinline__ float ffnn_dev_u8_to_unit_nodiv(unsigned p)
{
    return ffnn_dev_div255(__int_as_float(0x4B000000u | p) - 8388608.0f);
}

/* Byte k of the word v as a float, the pixel value 0..255 itself (exact: one PRMT,
 * selector 0x765k, builds 2^23 + byte; minus 2^23). */
static __device__ __forceinline__ float ffnn_dev_u8_byte(unsigned v, unsigned sel)
{
    return __int_as_float(__byte_perm(v, 0x4B000000u, sel)) - 8388608.0f;
}

/* The four bytes of the word v (little-endian: byte 0, 1, 2, 3) as floats, the
 * pixel values 0..255 themselves (ffnn_dev_u8_byte). */
static __device__ __forceinline__ float4 ffnn_dev_u8x4_to_float4(unsigned v)
{
    return make_float4(ffnn_dev_u8_byte(v, 0x7650u), ffnn_dev_u8_byte(v, 0x7651u),
                       ffnn_dev_u8_byte(v, 0x7652u), ffnn_dev_u8_byte(v, 0x7653u));
}

/* As ffnn_dev_u8x4_to_float4, the same values, with bytes 0 and 3 converted by
 * I2F.U8 (the conversion pipe, 16 results a clock per SM on sm_90) and bytes 1 and 2
 * by PRMT + FADD (the ALU and FMA pipes): fewer issue slots where a loop is bound by
 * issue and has warps enough to hide the conversion's latency (the persistent
 * forward: 1.91 -> 1.84 us a step at batch 64, docs/RESULTS.md history; its dW1,
 * 2 warps a scheduler, was slower with it). */
static __device__ __forceinline__ float4 ffnn_dev_u8x4_to_float4_mixed(unsigned v)
{
    return make_float4(__uint2float_rn(v & 0xffu), ffnn_dev_u8_byte(v, 0x7651u),
                       ffnn_dev_u8_byte(v, 0x7652u), __uint2float_rn(v >> 24));
}

/* The four bytes of the word v as x = byte / 255: (byte 0, 1, 2, 3). */
static __device__ __forceinline__ float4 ffnn_dev_u8x4_to_unit4(unsigned v)
{
    const float4 f = ffnn_dev_u8x4_to_float4(v);
    return make_float4(ffnn_dev_div255(f.x), ffnn_dev_div255(f.y), ffnn_dev_div255(f.z),
                       ffnn_dev_div255(f.w));
}

/* ------------------------------------------------------------------ optimizers */
/* Scalars as in ffnn_optimizer_step (src/core/optim.h), one parameter each. */

/* sgd: p' = p - lr g, the product rounded first (not one fma). */
static __device__ __forceinline__ float ffnn_dev_sgd(float p, float lr, float g)
{
    return __fsub_rn(p, __fmul_rn(lr, g));
}

/* momentum buffer: buf' = buf momentum + g (product rounded, then the add), or g at
 * the first step, where *buf is not read (PyTorch: buf.mul_(momentum).add_(g)). */
static __device__ __forceinline__ float ffnn_dev_momentum_buf(const float *buf, float g,
                                                              float momentum, int first_step)
{
    return first_step ? g : __fadd_rn(__fmul_rn(*buf, momentum), g);
}

/* momentum parameter: d = nesterov ? g + momentum buf' (one fma) : buf';
 * p' = p - lr d (one fma). buf: the new buffer value. */
static __device__ __forceinline__ float ffnn_dev_momentum_param(float p, float g, float buf,
                                                                float momentum, float lr,
                                                                int nesterov)
{
    const float d = nesterov ? __fmaf_rn(momentum, buf, g) : buf;
    return __fmaf_rn(-lr, d, p);
}

/* PyTorch's lerp(a, b, w): a + w (b - a) for |w| < 0.5, else b - (1 - w)(b - a),
 * each one fma. */
static __device__ __forceinline__ float ffnn_dev_lerp_torch(float a, float b, float w)
{
    const float diff = __fsub_rn(b, a);
    return fabsf(w) < 0.5f ? __fmaf_rn(w, diff, a) : __fmaf_rn(__fsub_rn(w, 1.0f), diff, b);
}

/* adam first moment: m' = lerp(m, g, 1 - beta1) (PyTorch: m.lerp_(g, 1-beta1)). */
static __device__ __forceinline__ float ffnn_dev_adam_m(float m, float g, float one_minus_beta1)
{
    return ffnn_dev_lerp_torch(m, g, one_minus_beta1);
}

/* adam second moment: v' = v beta2 + ((1 - beta2) g) g, each product rounded
 * (PyTorch: v.mul_(beta2).addcmul_(g, g, value=1-beta2)). */
static __device__ __forceinline__ float ffnn_dev_adam_v(float v, float g, float beta2,
                                                        float one_minus_beta2)
{
    return __fadd_rn(__fmul_rn(v, beta2), __fmul_rn(__fmul_rn(one_minus_beta2, g), g));
}

/* adam parameter, m and v the new moments: denom = sqrt(v) / bias_correction2_sqrt
 * + eps; p' = p + (-step_size m) / denom (PyTorch: p.addcdiv_(m, denom,
 * value=-step_size)). */
static __device__ __forceinline__ float ffnn_dev_adam_param(float p, float m, float v,
                                                            float step_size,
                                                            float bias_correction2_sqrt,
                                                            float eps)
{
    const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(v), bias_correction2_sqrt), eps);
    return __fadd_rn(p, __fdiv_rn(__fmul_rn(-step_size, m), denom));
}

/* L2 weight decay into the gradient: g' = g + wd p, one fma (cpu_math.h
 * ffnn_decay_grad; PyTorch: grad.add(param, alpha=weight_decay)). */
static __device__ __forceinline__ float ffnn_dev_decay_grad(float g, float p, float wd)
{
    return __fmaf_rn(wd, p, g);
}

/* adamw's decoupled decay: p' = p factor, one rounding (PyTorch: param.mul_(1 - lr wd)). */
static __device__ __forceinline__ float ffnn_dev_decay_param(float p, float factor)
{
    return __fmul_rn(p, factor);
}

/* adamw first moment (torch 1.13's AdamW): m' = (m beta1) + (1 - beta1) g, the product
 * rounded, then one fma. */
static __device__ __forceinline__ float ffnn_dev_adamw_m(float m, float g, float beta1,
                                                         float one_minus_beta1)
{
    return __fmaf_rn(one_minus_beta1, g, __fmul_rn(m, beta1));
}

/* One optimizer step of one parameter, every optimizer and weight decay (cpu_math.h
 * ffnn_optimizer_element, the same order): s0/s1 its state (momentum: buf; adam(w):
 * m, v), not read where the optimizer has none. */
static __device__ __forceinline__ void ffnn_dev_optimizer_element(const ffnn_optimizer_step &s,
                                                                  float *p, float g, float *s0,
                                                                  float *s1)
{
    float w = *p;
    if (s.weight_decay != 0.0f)
        g = ffnn_dev_decay_grad(g, w, s.weight_decay);
    switch (s.kind) {
    case FFNN_OPT_SGD: *p = ffnn_dev_sgd(w, s.lr, g); return;
    case FFNN_OPT_MOMENTUM: {
        const float b = ffnn_dev_momentum_buf(s0, g, s.momentum, s.first_step);
        *s0 = b;
        *p = ffnn_dev_momentum_param(w, g, b, s.momentum, s.lr, s.nesterov);
        return;
    }
    default: { /* adam, adamw */
        float m;
        if (s.kind == FFNN_OPT_ADAMW) {
            if (s.decay_factor != 1.0f)
                w = ffnn_dev_decay_param(w, s.decay_factor);
            m = ffnn_dev_adamw_m(*s0, g, s.beta1, s.one_minus_beta1);
        } else {
            m = ffnn_dev_adam_m(*s0, g, s.one_minus_beta1);
        }
        const float v = ffnn_dev_adam_v(*s1, g, s.beta2, s.one_minus_beta2);
        *s0 = m;
        *s1 = v;
        *p = ffnn_dev_adam_param(w, m, v, s.step_size, s.bias_correction2_sqrt, s.eps);
        return;
    }
    }
}

/* clip by value (cpu_math.h ffnn_clip_value). */
static __device__ __forceinline__ float ffnn_dev_clip_value(float g, float v)
{
    return g < -v ? -v : (g > v ? v : g);
}

/* clip by norm's coefficient min(max_norm / (norm + 1e-6), 1), IEEE float. */
static __device__ __forceinline__ float ffnn_dev_clip_coef(float max_norm, float norm)
{
    const float c = __fdiv_rn(max_norm, __fadd_rn(norm, 1e-6f));
    return c < 1.0f ? c : 1.0f;
}

/* ema' = (ema decay) + (1 - decay) p: the product rounded, then one fma. */
static __device__ __forceinline__ float ffnn_dev_ema(float ema, float p, float decay,
                                                     float one_minus_decay)
{
    return __fmaf_rn(one_minus_decay, p, __fmul_rn(ema, decay));
}

/* ------------------------------------------------------------------ losses */
/* Per-element pieces of the losses (src/backend/cpu/loss.c's formulas), shared by
 * loss.cu and persistent.cu; the sums over a row stay with their kernels. m: the
 * row's max logit, s = sum_j ffnn_dev_softmax_term(z_j, m), scale: 1/batch (softmax)
 * or 1/(batch width) (mse, bce). */

/* softmax term exp(z - m). */
static __device__ __forceinline__ float ffnn_dev_softmax_term(float z, float m)
{
    return expf(z - m);
}

/* softmax cross-entropy row loss: m + log(s) - z_y. */
static __device__ __forceinline__ float ffnn_dev_softmax_ce_loss(float m, float s, float z_label)
{
    return m + logf(s) - z_label;
}

/* softmax cross-entropy gradient: (exp(z - m) / s - [j == y]) * scale. */
static __device__ __forceinline__ float ffnn_dev_softmax_ce_grad(float z, float m, float s,
                                                                 int is_label, float scale)
{
    return (expf(z - m) / s - (is_label ? 1.0f : 0.0f)) * scale;
}

/* mse term d^2, d = o - t (rounded product, as the CPU's). */
static __device__ __forceinline__ float ffnn_dev_mse_term(float d) { return __fmul_rn(d, d); }

/* mse gradient: 2 d scale, d = o - t ((2 d) rounded, then times scale). */
static __device__ __forceinline__ float ffnn_dev_mse_grad(float d, float scale)
{
    return 2.0f * d * scale;
}

/* sigmoid bce term on logit v, target t, stable form: max(v, 0) - v t + log1p(exp(-|v|)). */
static __device__ __forceinline__ float ffnn_dev_bce_term(float v, float t)
{
    return fmaxf(v, 0.0f) - __fmul_rn(v, t) + log1pf(expf(-fabsf(v)));
}

/* sigmoid bce gradient: (sigmoid(v) - t) * scale. */
static __device__ __forceinline__ float ffnn_dev_bce_grad(float v, float t, float scale)
{
    return (ffnn_dev_sigmoid(v) - t) * scale;
}

#endif /* FFNN_CUDA_DEVICE_MATH_CUH */
