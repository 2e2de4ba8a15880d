/* gather.c - the batch gather (backend.h gather), CPU reference: rows of a data
 * set by index, uint8 features scaled to [0, 1] (cpu_math.h ffnn_u8_to_unit). */
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
