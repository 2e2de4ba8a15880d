/* predict.c - inference for a loaded model: the cpu reference forward
 * (ffnn_model_forward, the tests' reference), and on a predictor (predictor.c)
 * class probabilities and predicted classes (ffnn predict), loss and confusion
 * matrix over a data set (ffnn eval). The rules are those of
 * ffnn_trainer_evaluate. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_ops.h"
#include "data/dataset.h"
#include "core/error.h"
#include "core/model.h"
#include "train/predictor.h"

/* The network on the host with the cpu reference ops (backend/cpu): y [batch, output]. */
ffnn_status ffnn_model_forward(const ffnn_model *m, const float *x, size_t batch,
                               float *y)
{
    if (!m || !x || !y)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_forward: NULL argument");
    if (m->member_count)
        return ffnn_model_refuse_ensemble(m, "ffnn_model_forward (the network alone; "
                                          "ffnn_model_predict averages members)");
    ffnn_status st = ffnn_model_fresh(m);
    if (st != FFNN_OK)
        return st;
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
            break;
        case FFNN_LAYER_LOCAL1D:
            ffnn_cpu_local1d_forward(in, W, b, z, batch, l->in, l->spec.local1d.R,
                                     l->spec.local1d.padding, FFNN_ACT_IDENTITY);
            break;
        case FFNN_LAYER_EMBEDDING:
            ffnn_cpu_embedding_forward(in, W, z, batch, &l->spec.embedding);
            break;
        }
        /* the activation with the layer's parameter, in place (the forward only) */
        ffnn_cpu_activation_forward(l->act, l->act_param, z, z, batch * l->out);
        in = z;
    }
    free(buf[0]);
    free(buf[1]);
    return FFNN_OK;
}

int ffnn_model_class_count(const ffnn_model *m)
{
    size_t out = ffnn_model_out(m);
    return out > 1 ? (int)out : 2;
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
    for (size_t j = 1; j < width; j++) /* softmax: width >= 2 (ffnn_model_check_loss) */
        if (o[j] > max)
            max = o[j];
    for (size_t j = 0; j < width; j++)
        sum += (o[j] = expf(o[j] - max));
    for (size_t j = 0; j < width; j++)
        o[j] /= sum;
}

/* x [batch, in] into the network's units: (x - input_mean) / input_scale. */
static void standardize_rows(const ffnn_model *m, float *x, size_t batch)
{
    for (size_t b = 0; m->input_mean && b < batch; b++)
        for (size_t j = 0; j < m->input_size; j++)
            x[b * m->input_size + j] =
                (x[b * m->input_size + j] - m->input_mean[j]) / m->input_scale[j];
}

/* Regression outputs o [batch, width] back into the targets' units (mse only). */
static void unstandardize_outputs(const ffnn_model *m, ffnn_loss loss, float *o, size_t batch)
{
    size_t width = ffnn_model_out(m);
    for (size_t b = 0; loss == FFNN_LOSS_MSE && m->target_mean && b < batch; b++)
        for (size_t j = 0; j < width; j++)
            o[b * width + j] = o[b * width + j] * m->target_scale[j] + m->target_mean[j];
}

void ffnn_predict_read_rows(const ffnn_model *m, ffnn_loss loss, float *o, size_t batch)
{
    size_t width = ffnn_model_out(m);
    unstandardize_outputs(m, loss, o, batch);
    for (size_t b = 0; b < batch; b++)
        to_probabilities(loss, o + b * width, width);
}

/* The predictor's outputs o [batch, width] read as loss reads them: regression
 * outputs in the targets' units, classes (cls may be NULL), probabilities. An
 * ensemble's are read already (the means): its classes by the 0.5 rule. */
static void read_outputs(const ffnn_model *m, ffnn_loss loss, float *o, size_t batch, int *cls)
{
    size_t width = ffnn_model_out(m);
    if (m->member_count) {
        for (size_t b = 0; cls && b < batch; b++)
            cls[b] = classify(FFNN_LOSS_MSE, o + b * width, width);
        return;
    }
    unstandardize_outputs(m, loss, o, batch);
    for (size_t b = 0; b < batch; b++) {
        float *row = o + b * width; /* [width] */
        if (cls)
            cls[b] = classify(loss, row, width);
        to_probabilities(loss, row, width);
    }
}

ffnn_status ffnn_predictor_predict(ffnn_predictor *p, const float *x, size_t batch, float *prob,
                                   int *cls)
{
    ffnn_loss loss;
    ffnn_status st;
    if (!p || (batch && (!x || !prob)))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_predictor_predict: NULL argument");
    const ffnn_model *m = ffnn_predictor_model(p);
    if ((st = ffnn_model_loss(m, &loss)) != FFNN_OK ||
        (st = ffnn_predictor_forward_raw(p, x, batch, 1, prob)) != FFNN_OK)
        return st;
    read_outputs(m, loss, prob, batch, cls);
    return FFNN_OK;
}

/* Rows per forward pass of the library's one-call paths (predict, evaluate). */
#define ONE_CALL_ROWS 1024

ffnn_status ffnn_model_predict(const ffnn_model *m, const float *x, size_t batch, float *p,
                               int *cls)
{
    ffnn_predictor *pr;
    ffnn_status st;
    ffnn_loss loss;

    if (!m || !x || !p)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_predict: NULL argument");
    if ((st = ffnn_model_loss(m, &loss)) != FFNN_OK ||
        (st = ffnn_model_check_loss(m, loss)) != FFNN_OK || batch == 0)
        return st;
    if ((st = ffnn_predictor_create(m, FFNN_DEVICE_CPU, 0,
                                    batch < ONE_CALL_ROWS ? batch : ONE_CALL_ROWS, &pr)) != FFNN_OK)
        return st;
    st = ffnn_predictor_forward_raw(pr, x, batch, 1, p);
    ffnn_predictor_free(pr);
    if (st == FFNN_OK)
        read_outputs(m, loss, p, batch, cls);
    return st;
}

/* Every label must be a class of the model; float targets must have its width
 * (and a loss other than ce). */
static ffnn_status check_data(const ffnn_model *m, ffnn_loss loss, const ffnn_dataset *data)
{
    int classes = ffnn_model_class_count(m);
    size_t width = ffnn_model_out(m);

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
        if (data->labels[i] < 0 || data->labels[i] >= classes)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "evaluate: sample %zu has label %d, the model has %d classes "
                             "(0 to %d)", i, data->labels[i], classes, classes - 1);
    return FFNN_OK;
}

/* An ensemble's mean probabilities o [count] in place as logits that give them
 * back (ce: log p, whose softmax is p; bce: log(p / (1 - p))), so that the loss
 * and the class rule read them as a network's outputs; p is clamped to
 * [2^-126, 1 - 2^-24] first (a finite loss for a probability of 0 or 1). mse:
 * unchanged. */
static void to_logits(ffnn_loss loss, float *o, size_t count)
{
    for (size_t i = 0; loss != FFNN_LOSS_MSE && i < count; i++) {
        double p = o[i] < FLT_MIN ? FLT_MIN : o[i] > 1.0f - 0x1p-24f ? 1.0 - 0x1p-24 : o[i];
        o[i] = (float)(loss == FFNN_LOSS_SOFTMAX_CE ? log(p) : log(p) - log1p(-p));
    }
}

/* Sums over the rows seen so far, and the counts: confusion [classes, classes]
 * (true row, predicted column; may be NULL), or per class [classes] the samples
 * (total) and those right (class_correct), when those are set. */
typedef struct eval_sums {
    double loss;
    uint64_t correct;
    double *err2, *abs_err, *t_sum, *t_sq; /* [width] each (regression) */
    uint64_t *confusion, *class_correct, *total;
    double w_loss, w_correct, w_sum; /* with sample weights: sums of w l, w right, w */
} eval_sums;

/* Rows [first, first + batch) of data: x [batch, features] = images / 255 (or
 * the float features, standardised when the model says so), then the outputs
 * o [batch, width] (regression: in the targets' units), their losses and
 * classes (confusion may be NULL), and the regression sums. The true class is
 * the label, or for float targets the class the same rule gives the target row
 * (threshold 0.5 for one output). */
static ffnn_status evaluate_batch(ffnn_predictor *p, ffnn_loss loss, const ffnn_dataset *data,
                                  size_t first, size_t batch, float *x, float *o, float *rows,
                                  eval_sums *sum)
{
    const ffnn_model *m = ffnn_predictor_model(p);
    size_t width = ffnn_model_out(m), f = data->features;
    const int32_t *y = data->labels ? data->labels + first : NULL;       /* [batch] */
    const float *t = data->targets ? data->targets + first * width : NULL; /* [batch, width] */
    int classes = ffnn_model_class_count(m);
    ffnn_status st;

    if (data->images)
        for (size_t k = 0; k < batch * f; k++)
            x[k] = (float)data->images[first * f + k] / 255.0f;
    else
        memcpy(x, data->values + first * f, batch * f * sizeof *x);
    standardize_rows(m, x, batch);
    if ((st = ffnn_predictor_forward_raw(p, x, batch, 0, o)) != FFNN_OK)
        return st;
    unstandardize_outputs(m, loss, o, batch);
    if (m->member_count)
        to_logits(loss, o, batch * width);
    ffnn_cpu_loss(loss, o, y, t, batch, width, NULL, rows, NULL);
    for (size_t b = 0; b < batch; b++) {
        size_t truth = y ? (size_t)y[b] : (size_t)classify(FFNN_LOSS_MSE, t + b * width, width);
        size_t guess = (size_t)classify(loss, o + b * width, width);
        sum->loss += rows[b];
        sum->correct += truth == guess;
        if (data->weights) {
            double w = data->weights[first + b];
            sum->w_loss += w * rows[b];
            sum->w_correct += truth == guess ? w : 0.0;
            sum->w_sum += w;
        }
        if (sum->confusion)
            sum->confusion[truth * (size_t)classes + guess]++;
        if (sum->total) {
            sum->total[truth]++;
            sum->class_correct[truth] += truth == guess;
        }
        for (size_t j = 0; t && sum->err2 && j < width; j++) {
            double target = t[b * width + j], e = (double)o[b * width + j] - target;
            sum->err2[j] += e * e;
            sum->abs_err[j] += fabs(e);
            sum->t_sum[j] += target;
            sum->t_sq[j] += target * target;
        }
    }
    return FFNN_OK;
}

/* Every metric over data, with the counts sum_in asks for (confusion or per class). */
static ffnn_status evaluate(const ffnn_model *m, ffnn_loss loss, const ffnn_dataset *data,
                            size_t batch_size, ffnn_metrics *metrics, const eval_sums *sum_in)
{
    size_t width, classes, chunk;
    float *x, *o, *rows;
    ffnn_predictor *p = NULL;
    eval_sums sum = *sum_in;
    uint64_t *confusion = sum.confusion;
    ffnn_status st;

    if ((st = ffnn_model_check_loss(m, loss)) != FFNN_OK || (st = check_data(m, loss, data)) != FFNN_OK ||
        (st = ffnn_model_fresh(m)) != FFNN_OK)
        return st;
    width = ffnn_model_out(m);
    classes = (size_t)ffnn_model_class_count(m);
    int regression = data->targets && loss == FFNN_LOSS_MSE;
    chunk = batch_size < data->count ? batch_size : data->count;
    if (confusion)
        memset(confusion, 0, classes * classes * sizeof *confusion);
    if (sum.total) {
        memset(sum.total, 0, classes * sizeof *sum.total);
        memset(sum.class_correct, 0, classes * sizeof *sum.class_correct);
    }
    x = malloc(chunk * data->features * sizeof *x); /* [chunk, features] */
    o = malloc(chunk * width * sizeof *o);          /* [chunk, width]    */
    rows = malloc(chunk * sizeof *rows);            /* [chunk]           */
    double *acc = regression ? calloc(4 * width, sizeof *acc) : NULL;
    if (acc) {
        sum.err2 = acc;
        sum.abs_err = acc + width;
        sum.t_sum = acc + 2 * width;
        sum.t_sq = acc + 3 * width;
    }
    if (!x || !o || !rows || (regression && !acc))
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "evaluate: out of memory for a batch of %zu", chunk);
    if (st == FFNN_OK)
        st = ffnn_predictor_create(m, FFNN_DEVICE_CPU, 0, chunk, &p);
    for (size_t first = 0; st == FFNN_OK && first < data->count; first += chunk) {
        size_t n = data->count - first < chunk ? data->count - first : chunk;
        st = evaluate_batch(p, loss, data, first, n, x, o, rows, &sum);
    }
    ffnn_predictor_free(p);
    if (st == FFNN_OK) {
        double n = (double)data->count, err2 = 0.0, abs_err = 0.0, r2 = 0.0;
        metrics->count = data->count;
        metrics->loss = sum.loss / n;
        metrics->accuracy = regression ? NAN : (double)sum.correct / n;
        metrics->weight_sum = sum.w_sum;
        metrics->weighted_loss = data->weights && sum.w_sum > 0 ? sum.w_loss / sum.w_sum : NAN;
        metrics->weighted_accuracy =
            data->weights && sum.w_sum > 0 && !regression ? sum.w_correct / sum.w_sum : NAN;
        for (size_t j = 0; regression && j < width; j++) {
            double ss_tot = sum.t_sq[j] - sum.t_sum[j] * sum.t_sum[j] / n;
            err2 += sum.err2[j];
            abs_err += sum.abs_err[j];
            r2 += ss_tot > 0.0 ? 1.0 - sum.err2[j] / ss_tot : NAN;
        }
        metrics->mse = regression ? err2 / (n * (double)width) : NAN;
        metrics->rmse = regression ? sqrt(metrics->mse) : NAN;
        metrics->mae = regression ? abs_err / (n * (double)width) : NAN;
        metrics->r2 = regression ? r2 / (double)width : NAN;
    }
    free(x);
    free(o);
    free(rows);
    free(acc);
    return st;
}

ffnn_status ffnn_model_evaluate_metrics(const ffnn_model *m, const ffnn_dataset *data,
                                        size_t batch_size, ffnn_metrics *metrics,
                                        uint64_t *confusion)
{
    eval_sums sum = {0.0, 0, NULL, NULL, NULL, NULL, confusion, NULL, NULL, 0, 0, 0};
    ffnn_loss loss;
    if (!m || !data || !metrics || batch_size == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_evaluate_metrics: NULL "
                         "argument or batch size 0");
    ffnn_status st = ffnn_model_loss(m, &loss);
    return st != FFNN_OK ? st : evaluate(m, loss, data, batch_size, metrics, &sum);
}

/* evaluate with m's loss into sum; the mean loss into *mean_loss. */
static ffnn_status evaluate_mean(const ffnn_model *m, const ffnn_dataset *data,
                                 size_t batch_size, eval_sums *sum, double *mean_loss)
{
    ffnn_metrics metrics;
    ffnn_loss loss;
    ffnn_status st = ffnn_model_loss(m, &loss);
    if (st == FFNN_OK)
        st = evaluate(m, loss, data, batch_size, &metrics, sum);
    if (st == FFNN_OK)
        *mean_loss = metrics.loss;
    return st;
}

ffnn_status ffnn_model_evaluate(const ffnn_model *m, const ffnn_dataset *data,
                                size_t batch_size, double *mean_loss, uint64_t *confusion)
{
    eval_sums sum = {0.0, 0, NULL, NULL, NULL, NULL, confusion, NULL, NULL, 0, 0, 0};
    if (!m || !data || !mean_loss || !confusion || batch_size == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_evaluate: NULL argument or "
                         "batch size 0");
    return evaluate_mean(m, data, batch_size, &sum, mean_loss);
}

ffnn_status ffnn_model_evaluate_per_class(const ffnn_model *m, const ffnn_dataset *data,
                                          size_t batch_size, double *mean_loss,
                                          uint64_t *correct, uint64_t *total)
{
    eval_sums sum = {0.0, 0, NULL, NULL, NULL, NULL, NULL, correct, total, 0, 0, 0};
    if (!m || !data || !mean_loss || !correct || !total || batch_size == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_evaluate_per_class: NULL "
                         "argument or batch size 0");
    return evaluate_mean(m, data, batch_size, &sum, mean_loss);
}
