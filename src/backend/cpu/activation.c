/* activation.c - element-wise activations, forward and backward, CPU reference.
 * The backward takes the forward's output a = f(z), from which each derivative
 * follows without z. The formulas are cpu_math.h's (shared with the omp backend). */
#include "core/dropout.h"
#include "cpu_math.h"
#include "cpu_ops.h"

void ffnn_cpu_activation_forward(ffnn_activation act, const float *z, float *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = ffnn_act_forward(act, z[i]);
}

void ffnn_cpu_activation_backward(ffnn_activation act, const float *a, const float *da,
                                  float *dz, size_t n)
{
    /* the identity's f' is 1: a is not read there (it may be NULL) */
    const int reads_a = act != FFNN_ACT_IDENTITY;
    for (size_t i = 0; i < n; i++)
        dz[i] = ffnn_act_backward(act, da[i], reads_a ? a[i] : 0.0f);
}

/* Inverted dropout (backend.h dropout): out[i] = keep(i) ? in[i] * scale : 0; the
 * mask from core/dropout.h. Elements [begin, end) (the omp backend splits them). */
void ffnn_cpu_dropout(const float *in, float *out, size_t begin, size_t end, uint64_t key,
                      uint32_t threshold, float scale)
{
    for (size_t i = begin; i < end; i++)
        out[i] = ffnn_dropout_keep(key, i, threshold) ? in[i] * scale : 0.0f;
}
