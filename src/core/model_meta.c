/* model_meta.c - what a model keeps besides its parameters: the z-score
 * standardisation of its inputs (and regression targets), the original class
 * labels, the encoding of a table's columns, and the hook that keeps params fresh while a trainer trains it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/model.h"
#include "core/strings.h"

ffnn_status ffnn_model_fresh(const ffnn_model *m)
{
    if (!m || !m->stale)
        return FFNN_OK;
    return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "the model is being trained and its trainer "
                     "holds newer weights (inside an epoch): call ffnn_trainer_sync_model "
                     "first, or read it after the epoch call returns");
}

ffnn_status ffnn_model_sync(ffnn_model *m)
{
    if (!m || !m->stale || !m->sync)
        return FFNN_OK;
    return m->sync(m->owner); /* the trainer copies its parameters and clears stale */
}

ffnn_status ffnn_model_set_loss(ffnn_model *m, ffnn_loss loss)
{
    if (!m)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_set_loss: NULL model");
    if (m->member_count && loss != m->loss)
        return ffnn_model_refuse_ensemble(m, "ffnn_model_set_loss");
    ffnn_status st = ffnn_model_check_loss(m, loss);
    if (st != FFNN_OK)
        return st;
    m->loss = loss;
    m->has_loss = 1;
    return FFNN_OK;
}

ffnn_status ffnn_model_loss(const ffnn_model *m, ffnn_loss *loss)
{
    if (!m || !loss)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_loss: NULL argument");
    if (!m->has_loss)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "the model has no loss yet (it was "
                         "neither loaded from a file nor trained): ffnn_model_set_loss");
    *loss = m->loss;
    return FFNN_OK;
}

/* A copy of n floats, checked: mean finite, scale finite and > 0. */
static ffnn_status copy_stats(const char *what, const float *mean, const float *scale, size_t n,
                              float **mean_out, float **scale_out)
{
    for (size_t j = 0; j < n; j++)
        if (!isfinite(mean[j]) || !isfinite(scale[j]) || !(scale[j] > 0.0f))
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "standardization: %s %zu: expected a finite mean and a positive "
                             "finite scale, found %g and %g", what, j, (double)mean[j],
                             (double)scale[j]);
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "standardization: out of memory");
    }
    memcpy(a, mean, n * sizeof *a);
    memcpy(b, scale, n * sizeof *b);
    *mean_out = a;
    *scale_out = b;
    return FFNN_OK;
}

ffnn_status ffnn_model_set_standardization(ffnn_model *m, const float *input_mean,
                                           const float *input_scale, const float *target_mean,
                                           const float *target_scale)
{
    float *im = NULL, *is = NULL, *tm = NULL, *ts = NULL;
    ffnn_status st = FFNN_OK;
    if (!m || !input_mean != !input_scale || !target_mean != !target_scale)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_set_standardization: NULL "
                         "model, or a mean without its scale");
    if (m->member_count) /* each member keeps its own */
        return ffnn_model_refuse_ensemble(m, "ffnn_model_set_standardization");
    size_t out = m->layers[m->layer_count - 1].out;
    if (input_mean)
        st = copy_stats("input", input_mean, input_scale, m->input_size, &im, &is);
    if (st == FFNN_OK && target_mean)
        st = copy_stats("target", target_mean, target_scale, out, &tm, &ts);
    if (st != FFNN_OK) {
        free(im);
        free(is);
        return st;
    }
    free(m->input_mean);
    free(m->input_scale);
    free(m->target_mean);
    free(m->target_scale);
    m->input_mean = im;
    m->input_scale = is;
    m->target_mean = tm;
    m->target_scale = ts;
    return FFNN_OK;
}

ffnn_status ffnn_model_standardization(const ffnn_model *m, const float **input_mean,
                                       const float **input_scale, const float **target_mean,
                                       const float **target_scale)
{
    if (!m)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_standardization: NULL model");
    if (input_mean)
        *input_mean = m->input_mean;
    if (input_scale)
        *input_scale = m->input_scale;
    if (target_mean)
        *target_mean = m->target_mean;
    if (target_scale)
        *target_scale = m->target_scale;
    return FFNN_OK;
}

ffnn_status ffnn_model_set_class_names(ffnn_model *m, const char *const *names, int count)
{
    char **copy = NULL;
    if (!m || count < 0 || (count > 0 && !names))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_set_class_names: NULL "
                         "argument or negative count");
    if (count > 0) {
        size_t out = ffnn_model_out(m);
        int classes = out == 1 ? 2 : (int)out; /* ffnn_model_class_count */
        if (count != classes)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "class names: expected %d (the "
                             "model's classes), found %d", classes, count);
        ffnn_status st = ffnn_strings_copy(names, (size_t)count, &copy);
        if (st != FFNN_OK)
            return st;
    }
    ffnn_strings_free(m->class_names, (size_t)m->class_name_count);
    m->class_names = copy;
    m->class_name_count = count;
    return FFNN_OK;
}

const char *ffnn_model_class_name(const ffnn_model *m, int c)
{
    if (!m || !m->class_names || c < 0 || c >= m->class_name_count)
        return NULL;
    return m->class_names[c];
}

ffnn_status ffnn_model_set_table_json(ffnn_model *m, const char *json)
{
    char *copy = NULL;
    if (!m)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_set_table_json: NULL model");
    if (json) {
        size_t n = strlen(json);
        if (!(copy = malloc(n + 1)))
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the table encoding");
        memcpy(copy, json, n + 1);
    }
    free(m->table);
    m->table = copy;
    return FFNN_OK;
}

ffnn_status ffnn_model_check_loss(const ffnn_model *m, ffnn_loss loss)
{
    if (m->member_count) /* its members were checked (ffnn_model_ensemble, the reader) */
        return loss == m->loss ? FFNN_OK : ffnn_model_refuse_ensemble(m, "another loss");
    const ffnn_layer *last = &m->layers[m->layer_count - 1];

    if (loss != FFNN_LOSS_SOFTMAX_CE && loss != FFNN_LOSS_SIGMOID_BCE && loss != FFNN_LOSS_MSE)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "unknown loss %d", (int)loss);
    if (loss != FFNN_LOSS_MSE && last->act != FFNN_ACT_IDENTITY)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "loss %s applies %s to the logits itself: the last layer must have "
                         "no activation, found %s (write '-%zu', not '-%zu%s')",
                         ffnn_loss_name(loss),
                         loss == FFNN_LOSS_SOFTMAX_CE ? "softmax" : "the sigmoid",
                         ffnn_activation_name(last->act), last->out, last->out,
                         ffnn_activation_name(last->act));
    if (loss == FFNN_LOSS_SOFTMAX_CE && last->out < 2)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "loss ce needs at least 2 outputs, the network has %zu (use bce for "
                         "one output)", last->out);
    return FFNN_OK;
}
