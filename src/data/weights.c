/* weights.c - per-sample and class weights of a data set (ffnn.h "Per-sample
 * weights"; the loss that reads them: backend.h loss_weights), and taking a
 * feature column out (a CSV file's weight column). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/dataset.h"

/* Each of w [n] finite and >= 0, their sum > 0 (what names the values). */
static ffnn_status check_weights(const float *w, size_t n, const char *what)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(w[i]) || w[i] < 0.0f)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "%s: weight %zu is %g: expected a finite number >= 0", what, i,
                             (double)w[i]);
        sum += w[i];
    }
    if (!(sum > 0.0))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "%s: all %zu weights are 0: nothing would be trained on", what, n);
    return FFNN_OK;
}

ffnn_status ffnn_dataset_set_sample_weights(ffnn_dataset *ds, const float *weights)
{
    if (!ds)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_set_sample_weights: ds is NULL");
    if (!weights) {
        free(ds->weights);
        ds->weights = NULL;
        return FFNN_OK;
    }
    ffnn_status st = check_weights(weights, ds->count, "sample weights");
    if (st != FFNN_OK)
        return st;
    float *copy = malloc(ds->count * sizeof *copy); /* [count] */
    if (!copy)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for %zu sample weights", ds->count);
    memcpy(copy, weights, ds->count * sizeof *copy);
    free(ds->weights);
    ds->weights = copy;
    return FFNN_OK;
}

const float *ffnn_dataset_sample_weights(const ffnn_dataset *ds)
{
    return ds ? ds->weights : NULL;
}

ffnn_status ffnn_dataset_apply_class_weights(ffnn_dataset *ds, const float *class_weights,
                                             int classes)
{
    if (!ds || !class_weights)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_apply_class_weights: NULL "
                         "argument");
    if (!ds->labels || classes != ds->classes)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "class weights: expected %d weights, one per class of the data, found "
                         "%d%s", ds->classes, classes,
                         ds->labels ? "" : " (the data has float targets, not classes)");
    for (int c = 0; c < classes; c++)
        if (!isfinite(class_weights[c]) || class_weights[c] < 0.0f)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "class weights: the weight of class %d is %g: expected a finite "
                             "number >= 0", c, (double)class_weights[c]);
    float *w = malloc(ds->count * sizeof *w); /* [count] */
    if (!w)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for %zu sample weights", ds->count);
    for (size_t i = 0; i < ds->count; i++)
        w[i] = (ds->weights ? ds->weights[i] : 1.0f) * class_weights[ds->labels[i]];
    ffnn_status st = check_weights(w, ds->count, "class weights times sample weights");
    if (st != FFNN_OK) {
        free(w);
        return st;
    }
    free(ds->weights);
    ds->weights = w;
    return FFNN_OK;
}

ffnn_status ffnn_dataset_balanced_class_weights(const ffnn_dataset *ds, float *out)
{
    if (!ds || !out || !ds->labels)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "balanced class weights: expected a data set of class labels");
    size_t *n = calloc((size_t)ds->classes, sizeof *n);
    if (!n)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for %d class counts", ds->classes);
    size_t present = 0;
    for (size_t i = 0; i < ds->count; i++)
        present += n[ds->labels[i]]++ == 0;
    for (int c = 0; c < ds->classes; c++) /* sklearn: n_samples / (n_classes * bincount) */
        out[c] = n[c] ? (float)((double)ds->count / ((double)present * (double)n[c])) : 0.0f;
    free(n);
    return FFNN_OK;
}

ffnn_status ffnn_dataset_remove_feature(ffnn_dataset *ds, size_t j, float *column)
{
    if (!ds || !ds->values || ds->features < 2 || j >= ds->features)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "remove feature %zu: expected float features, at least 2, and an "
                         "index below %zu", j, ds ? ds->features : 0);
    ffnn_status st = ffnn_dataset_own_values(ds); /* a read-only mapping: copy first */
    if (st != FFNN_OK)
        return st;
    size_t f = ds->features;
    for (size_t i = 0; column && i < ds->count; i++)
        column[i] = ds->values[i * f + j];
    for (size_t i = 0; i < ds->count; i++) { /* compact in place, row by row */
        const float *src = ds->values + i * f;
        float *dst = ds->values + i * (f - 1);
        memmove(dst, src, j * sizeof *dst);
        memmove(dst + j, src + j + 1, (f - 1 - j) * sizeof *dst);
    }
    ds->features = f - 1;
    ds->cols = f - 1;
    return FFNN_OK;
}
