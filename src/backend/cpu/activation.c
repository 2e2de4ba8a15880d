/* activation.c - element-wise activations, forward and backward, CPU reference.
 * The backward takes the forward's saved value: the output a = f(z), from which
 * most derivatives follow without z, or z itself for gelu, gelu_tanh, silu, mish
 * and hardswish (core/activation.h). The formulas are cpu_math.h's (shared with the
 * omp backend). */
#include "core/dropout.h"
#include "cpu_math.h"
#include "cpu_ops.h"

void ffnn_cpu_activation_forward(ffnn_activation act, float param, const float *z, float *a,
                                 size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = ffnn_act_forward(act, param, z[i]);
}

void ffnn_cpu_activation_backward(ffnn_activation act, float param, const float *saved,
                                  const float *da, float *dz, size_t n)
{
    /* the identity's f' is 1: saved is not read there (it may be NULL) */
    const int reads = act != FFNN_ACT_IDENTITY;
    for (size_t i = 0; i < n; i++)
        dz[i] = ffnn_act_backward(act, param, da[i], reads ? saved[i] : 0.0f);
}

/* Inverted dropout (backend.h dropout): out[i] = keep(i) ? in[i] * scale : 0; the
 * mask from core/dropout.h. Elements [begin, end) (the omp backend splits them). */
void ffnn_cpu_dropout(const float *in, float *out, size_t begin, size_t end, uint64_t key,
                      uint32_t threshold, float scale)
{
    for (size_t i = begin; i < end; i++)
        out[i] = ffnn_dropout_keep(key, i, threshold) ? in[i] * scale : 0.0f;
}
