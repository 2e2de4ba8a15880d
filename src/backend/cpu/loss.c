/* loss.c - losses with their gradients, CPU reference (semantics: backend.h).
 * Each returns the per-sample loss; the gradient is that of the batch mean
 * (PyTorch's reduction='mean': over the batch for ce, over batch*width for
 * bce and mse). Targets are derived from uint8 labels or, for bce and mse, read
 * from float target rows. */
#include <math.h>

#include "cpu_ops.h"

/* Index of the largest value, the first one on ties. */
static size_t argmax(const float *v, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (v[i] > v[best])
            best = i;
    return best;
}

/* Target of output j: the float target t[j] when t is set; else, for label y,
 * one-hot when width > 1, y itself when width == 1. */
static float target(const float *t, int32_t y, size_t j, size_t width)
{
    if (t)
        return t[j];
    return width == 1 ? (float)y : (j == (size_t)y ? 1.0f : 0.0f);
}

/* L = logsumexp(z) - z[y];  dL/dz = softmax(z) - onehot(y) */
static void softmax_ce_row(const float *z, int32_t y, size_t width, float scale,
                           float *dz, float *loss)
{
    float max = z[argmax(z, width)];
    float sum = 0.0f;
    for (size_t j = 0; j < width; j++)
        sum += expf(z[j] - max);
    float log_sum = logf(sum);
    *loss = log_sum + max - z[(size_t)y];
    if (dz)
        for (size_t j = 0; j < width; j++)
            dz[j] = (expf(z[j] - max) / sum - (j == (size_t)y ? 1.0f : 0.0f)) * scale;
}

/* L = mean_j [max(z,0) - z t + log(1 + e^-|z|)];  dL/dz = sigmoid(z) - t */
static void sigmoid_bce_row(const float *z, int32_t y, const float *tr, size_t width,
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

/* L = mean_j (o - t)^2;  dL/do = 2 (o - t) */
static void mse_row(const float *o, int32_t y, const float *tr, size_t width, float scale,
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

/* With labels: right when the argmax is the label; for one output, when the
 * output is on the label's side of the threshold (0 for logits, 0.5 for mse).
 * With float targets t: when every output is on the side of the threshold that
 * its target is on of 0.5. */
static uint8_t is_correct(ffnn_loss loss, const float *o, int32_t y, const float *t,
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
        return argmax(o, width) == (size_t)y;
    return (o[0] > threshold) == (y != 0);
}

void ffnn_cpu_loss_rows(ffnn_loss loss, const float *out, const int32_t *y,
                        const float *targets, size_t batch, size_t width, float *dout,
                        float *row_loss, uint8_t *row_correct, size_t begin, size_t end)
{
    float scale = loss == FFNN_LOSS_SOFTMAX_CE ? 1.0f / (float)batch
                                               : 1.0f / ((float)batch * (float)width);
    for (size_t n = begin; n < end; n++) {
        const float *o = out + n * width;        /* [width] */
        float *d = dout ? dout + n * width : NULL; /* [width] */
        const float *t = targets ? targets + n * width : NULL; /* [width] */
        int32_t label = t ? 0 : y[n];
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

void ffnn_cpu_loss(ffnn_loss loss, const float *out, const int32_t *y, const float *targets,
                   size_t batch, size_t width, float *dout, float *row_loss,
                   uint8_t *row_correct)
{
    ffnn_cpu_loss_rows(loss, out, y, targets, batch, width, dout, row_loss, row_correct, 0,
                       batch);
}

/* The weighted mean's gradient from the plain mean's (backend.h loss_weights):
 * dout[b, :] *= w[index[b]] * batch / sum_b w[index[b]]. */
void ffnn_cpu_loss_weights(const float *weights, const int32_t *index, size_t batch,
                           size_t width, float *dout)
{
    double sum = 0.0;
    for (size_t b = 0; b < batch; b++)
        sum += weights[index[b]];
    for (size_t b = 0; b < batch; b++) {
        float s = sum > 0.0 ? (float)((double)weights[index[b]] * (double)batch / sum) : 0.0f;
        for (size_t j = 0; j < width; j++)
            dout[b * width + j] *= s;
    }
}
