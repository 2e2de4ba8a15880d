/* update.c - batch gather and the SGD update, CPU reference. */
#include "cpu_ops.h"

void ffnn_cpu_gather(const uint8_t *images, const uint8_t *labels, const int32_t *index,
                     size_t batch, size_t features, float *x, uint8_t *y)
{
    for (size_t b = 0; b < batch; b++) {
        const uint8_t *img = images + (size_t)index[b] * features; /* [features] */
        for (size_t f = 0; f < features; f++)
            x[b * features + f] = (float)img[f] / 255.0f;
        y[b] = labels[index[b]];
    }
}

/* w <- w - lr * g  (seed 000's update; the gradient already averages the batch) */
void ffnn_cpu_sgd_update(float *params, const float *grads, size_t n, float learning_rate)
{
    for (size_t i = 0; i < n; i++)
        params[i] -= learning_rate * grads[i];
}
