/* activation.c - element-wise activations, forward and backward, CPU reference.
 * The backward takes the forward's output a = f(z), from which each derivative
 * follows without z. */
#include <math.h>

#include "cpu_ops.h"

void ffnn_cpu_activation_forward(ffnn_activation act, const float *z, float *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = z[i];
        switch (act) {
        case FFNN_ACT_RELU: v = v > 0.0f ? v : 0.0f; break;       /* max(0, z)     */
        case FFNN_ACT_SIGMOID: v = 1.0f / (1.0f + expf(-v)); break; /* 1/(1+e^-z)  */
        case FFNN_ACT_TANH: v = tanhf(v); break;                  /* tanh(z)       */
        case FFNN_ACT_IDENTITY: break;                            /* z             */
        }
        a[i] = v;
    }
}

void ffnn_cpu_activation_backward(ffnn_activation act, const float *a, const float *da,
                                  float *dz, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float d = 1.0f;
        switch (act) {
        case FFNN_ACT_RELU: d = a[i] > 0.0f ? 1.0f : 0.0f; break; /* 1[z > 0]  */
        case FFNN_ACT_SIGMOID: d = a[i] * (1.0f - a[i]); break;  /* a (1 - a) */
        case FFNN_ACT_TANH: d = 1.0f - a[i] * a[i]; break;       /* 1 - a^2   */
        case FFNN_ACT_IDENTITY: break;
        }
        dz[i] = da[i] * d;
    }
}
