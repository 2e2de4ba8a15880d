/* predict.c - inference on the CPU reference for a loaded model: class
 * probabilities and predicted classes (ffnn predict), loss and confusion matrix
 * over a data set (ffnn eval). The rules are those of ffnn_trainer_evaluate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_ops.h"
#include "data/dataset.h"
#include "core/error.h"
#include "core/model.h"

/* The network on the host with the cpu reference ops (backend/cpu): y [batch, output]. */
ffnn_status ffnn_model_forward(const ffnn_model *m, const float *x, size_t batch,
                               float *y)
{
    if (!m || !x || !y)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_forward: NULL argument");
    size_t widest = m->input_size;
    for (int i = 0; i < m->layer_count; i++)
        if (m->layers[i].out > widest)
            widest = m->layers[i].out;
    float *buf[2] = {malloc(batch * widest * sizeof(float)),
                     malloc(batch * widest * sizeof(float))};
    if (!buf[0] || !buf[1]) {
        free(buf[0]);
        free(buf[1]);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory in ffnn_model_forward");
    }
    const float *in = x; /* [batch, layer.in] */
    for (int i = 0; i < m->layer_count; i++) {
        const ffnn_layer *l = &m->layers[i];
        float *z = i == m->layer_count - 1 ? y : buf[i % 2]; /* [batch, out] */
        const float *W = m->params + l->weight_offset;     /* [out, fan_in] */
        const float *b = l->has_bias ? m->params + l->bias_offset : NULL;
        switch (l->kind) {
        case FFNN_LAYER_DENSE:
            ffnn_cpu_dense_forward(in, W, b, z, batch, l->in, l->out);
            ffnn_cpu_activation_forward(l->act, z, z, batch * l->out);
            break;
        case FFNN_LAYER_LOCAL1D:
            ffnn_local1d_forward_cpu(in, W, b, z, batch, l->in, l->spec.local1d.R,
                                     l->spec.local1d.padding, l->act);
            break;
        }
        in = z;
    }
    free(buf[0]);
    free(buf[1]);
    return FFNN_OK;
}

int ffnn_model_class_count(const ffnn_model *m)
{
    size_t out = m->layers[m->layer_count - 1].out;
    return out > 1 ? (int)out : 2;
}

/* The loss must fit the last layer, as in ffnn_trainer_create. */
static ffnn_status check_loss(const ffnn_model *m, ffnn_loss loss)
{
    const ffnn_layer *last = &m->layers[m->layer_count - 1];

    if (loss != FFNN_LOSS_SOFTMAX_CE && loss != FFNN_LOSS_SIGMOID_BCE && loss != FFNN_LOSS_MSE)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "unknown loss %d", (int)loss);
    if (loss != FFNN_LOSS_MSE && last->act != FFNN_ACT_IDENTITY)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "loss %s applies %s to the logits itself: the last layer must have "
                         "no activation, found %s", ffnn_loss_name(loss),
                         loss == FFNN_LOSS_SOFTMAX_CE ? "softmax" : "the sigmoid",
                         ffnn_activation_name(last->act));
    if (loss == FFNN_LOSS_SOFTMAX_CE && last->out < 2)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "loss ce needs at least 2 outputs, the network has %zu", last->out);
    return FFNN_OK;
}

/* Predicted class of one row of outputs o [width]: argmax (first on ties); for
 * one output, 1 when it is above 0 (logits) or 0.5 (mse). */
static int classify(ffnn_loss loss, const float *o, size_t width)
{
    size_t best = 0;

    if (width == 1)
        return o[0] > (loss == FFNN_LOSS_MSE ? 0.5f : 0.0f);
    for (size_t j = 1; j < width; j++)
        if (o[j] > o[best])
            best = j;
    return (int)best;
}

/* o [width] in place: softmax (ce), sigmoid (bce), unchanged (mse). */
static void to_probabilities(ffnn_loss loss, float *o, size_t width)
{
    float max = o[0], sum = 0.0f;

    if (loss == FFNN_LOSS_MSE)
        return;
    if (loss == FFNN_LOSS_SIGMOID_BCE) {
        for (size_t j = 0; j < width; j++)
            o[j] = 1.0f / (1.0f + expf(-o[j]));
        return;
    }
    for (size_t j = 1; j < width; j++) /* softmax: width >= 2 (check_loss) */
        if (o[j] > max)
            max = o[j];
    for (size_t j = 0; j < width; j++)
        sum += (o[j] = expf(o[j] - max));
    for (size_t j = 0; j < width; j++)
        o[j] /= sum;
}

ffnn_status ffnn_model_predict(const ffnn_model *m, ffnn_loss loss, const float *x,
                               size_t batch, float *p, int *cls)
{
    size_t width;
    ffnn_status st;

    if (!m || !x || !p)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_predict: NULL argument");
    if ((st = check_loss(m, loss)) != FFNN_OK ||
        (st = ffnn_model_forward(m, x, batch, p)) != FFNN_OK)
        return st;
    width = m->layers[m->layer_count - 1].out;
    for (size_t b = 0; b < batch; b++) {
        float *o = p + b * width; /* [width] */
        if (cls)
            cls[b] = classify(loss, o, width);
        to_probabilities(loss, o, width);
    }
    return FFNN_OK;
}

/* Every label must be a class of the model; float targets must have its width
 * (and a loss other than ce). */
static ffnn_status check_data(const ffnn_model *m, ffnn_loss loss, const ffnn_dataset *data)
{
    int classes = ffnn_model_class_count(m);
    size_t width = m->layers[m->layer_count - 1].out;

    if (data->count == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "evaluate: empty data set");
    if (data->features != m->input_size)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "evaluate: the network takes %zu inputs, the data has %zu features",
                         m->input_size, data->features);
    if (data->target_width) {
        if (loss == FFNN_LOSS_SOFTMAX_CE || data->target_width != width)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "evaluate: the data has %zu float targets per sample; loss %s "
                             "with %zu outputs needs class labels or %zu targets",
                             data->target_width, ffnn_loss_name(loss), width, width);
        return FFNN_OK;
    }
    for (size_t i = 0; i < data->count; i++)
        if (data->labels[i] >= classes)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "evaluate: sample %zu has label %d, the model has %d classes "
                             "(0 to %d)", i, data->labels[i], classes, classes - 1);
    return FFNN_OK;
}

/* Rows [first, first + batch) of data: x [batch, features] = images / 255 (or
 * the float features), then the outputs o [batch, width], their losses (summed
 * into *sum) and classes. The true class is the label, or for float targets the
 * class the same rule gives the target row (threshold 0.5 for one output). */
/* The counts: confusion [classes, classes] (true row, predicted column), or, when
 * it is NULL, per class [classes] the samples (total) and those right (correct). */
typedef struct eval_counts {
    uint64_t *confusion, *correct, *total;
} eval_counts;

static ffnn_status evaluate_batch(const ffnn_model *m, ffnn_loss loss, const ffnn_dataset *data,
                                  size_t first, size_t batch, float *x, float *o, float *rows,
                                  double *sum, const eval_counts *counts)
{
    size_t width = m->layers[m->layer_count - 1].out, f = data->features;
    const uint8_t *y = data->labels ? data->labels + first : NULL;       /* [batch] */
    const float *t = data->targets ? data->targets + first * width : NULL; /* [batch, width] */
    int classes = ffnn_model_class_count(m);
    ffnn_status st;

    if (data->images)
        for (size_t k = 0; k < batch * f; k++)
            x[k] = (float)data->images[first * f + k] / 255.0f;
    else
        memcpy(x, data->values + first * f, batch * f * sizeof *x);
    if ((st = ffnn_model_forward(m, x, batch, o)) != FFNN_OK)
        return st;
    ffnn_cpu_loss(loss, o, y, t, batch, width, NULL, rows, NULL);
    for (size_t b = 0; b < batch; b++) {
        size_t truth = y ? y[b] : (size_t)classify(FFNN_LOSS_MSE, t + b * width, width);
        size_t predicted = (size_t)classify(loss, o + b * width, width);
        *sum += rows[b];
        if (counts->confusion) {
            counts->confusion[truth * (size_t)classes + predicted]++;
        } else {
            counts->total[truth]++;
            counts->correct[truth] += truth == predicted;
        }
    }
    return FFNN_OK;
}

static ffnn_status evaluate(const ffnn_model *m, ffnn_loss loss, const ffnn_dataset *data,
                            size_t batch_size, double *mean_loss, const eval_counts *counts)
{
    size_t width, classes, chunk;
    float *x, *o, *rows;
    double sum = 0.0;
    ffnn_status st;

    if ((st = check_loss(m, loss)) != FFNN_OK || (st = check_data(m, loss, data)) != FFNN_OK)
        return st;
    width = m->layers[m->layer_count - 1].out;
    classes = (size_t)ffnn_model_class_count(m);
    chunk = batch_size < data->count ? batch_size : data->count;
    if (counts->confusion) {
        memset(counts->confusion, 0, classes * classes * sizeof *counts->confusion);
    } else {
        memset(counts->correct, 0, classes * sizeof *counts->correct);
        memset(counts->total, 0, classes * sizeof *counts->total);
    }
    x = malloc(chunk * data->features * sizeof *x); /* [chunk, features] */
    o = malloc(chunk * width * sizeof *o);          /* [chunk, width]    */
    rows = malloc(chunk * sizeof *rows);            /* [chunk]           */
    if (!x || !o || !rows)
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "evaluate: out of memory for a batch of %zu", chunk);
    for (size_t first = 0; st == FFNN_OK && first < data->count; first += chunk) {
        size_t n = data->count - first < chunk ? data->count - first : chunk;
        st = evaluate_batch(m, loss, data, first, n, x, o, rows, &sum, counts);
    }
    free(x);
    free(o);
    free(rows);
    if (st == FFNN_OK)
        *mean_loss = sum / (double)data->count;
    return st;
}

ffnn_status ffnn_model_evaluate(const ffnn_model *m, ffnn_loss loss, const ffnn_dataset *data,
                                size_t batch_size, double *mean_loss, uint64_t *confusion)
{
    eval_counts counts = {confusion, NULL, NULL};
    if (!m || !data || !mean_loss || !confusion || batch_size == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_evaluate: NULL argument or "
                         "batch size 0");
    return evaluate(m, loss, data, batch_size, mean_loss, &counts);
}

ffnn_status ffnn_model_evaluate_per_class(const ffnn_model *m, ffnn_loss loss,
                                          const ffnn_dataset *data, size_t batch_size,
                                          double *mean_loss, uint64_t *correct, uint64_t *total)
{
    eval_counts counts = {NULL, correct, total};
    if (!m || !data || !mean_loss || !correct || !total || batch_size == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_evaluate_per_class: NULL "
                         "argument or batch size 0");
    return evaluate(m, loss, data, batch_size, mean_loss, &counts);
}
