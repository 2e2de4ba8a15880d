/* standardize.c - z-score statistics of a data set into a model, and a data set
 * put into the network's units (ffnn.h: ffnn_model_fit_standardization,
 * ffnn_dataset_standardize). The model applies the same statistics when it
 * predicts (src/train/predict.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/model.h"
#include "data/dataset.h"

/* Column means and population standard deviations of v [n, w] (two passes in
 * double); a zero deviation becomes 1. */
static void column_stats(const float *v, size_t n, size_t w, float *mean, float *scale)
{
    for (size_t j = 0; j < w; j++) {
        double sum = 0.0, sq = 0.0;
        for (size_t i = 0; i < n; i++)
            sum += v[i * w + j];
        double mu = sum / (double)n;
        for (size_t i = 0; i < n; i++) {
            double d = v[i * w + j] - mu;
            sq += d * d;
        }
        double sd = sqrt(sq / (double)n);
        mean[j] = (float)mu;
        scale[j] = sd > 0.0 && (float)sd > 0.0f ? (float)sd : 1.0f;
    }
}

ffnn_status ffnn_model_fit_standardization(ffnn_model *m, const ffnn_dataset *train, int targets)
{
    if (!m || !train)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "fit standardization: NULL argument");
    if (m->member_count)
        return ffnn_model_refuse_ensemble(m, "ffnn_model_fit_standardization");
    size_t out = m->layers[m->layer_count - 1].out;
    if (!train->values || train->features != m->input_size)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "fit standardization: expected %zu float "
                         "features, found %zu %s features", m->input_size, train->features,
                         train->values ? "float" : "uint8 (images: scaled by 1/255 instead)");
    targets = targets && train->targets;
    if (targets && train->target_width != out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "fit standardization: expected %zu targets "
                         "per sample (the outputs), found %zu", out, train->target_width);
    float *s = malloc((2 * m->input_size + 2 * out) * sizeof *s);
    if (!s)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "fit standardization: out of memory");
    float *im = s, *is = im + m->input_size, *tm = is + m->input_size, *ts = tm + out;
    column_stats(train->values, train->count, train->features, im, is);
    if (m->layers[0].kind == FFNN_LAYER_EMBEDDING) /* the codes are read as they are */
        for (size_t j = m->layers[0].spec.embedding.passed; j < m->input_size; j++)
            im[j] = 0.0f, is[j] = 1.0f;
    if (targets)
        column_stats(train->targets, train->count, out, tm, ts);
    ffnn_status st = ffnn_model_set_standardization(m, im, is, targets ? tm : NULL,
                                                    targets ? ts : NULL);
    free(s);
    return st;
}

ffnn_status ffnn_dataset_standardize(const ffnn_dataset *src, const ffnn_model *m,
                                     ffnn_dataset **out)
{
    if (!src || !m || !out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_standardize: NULL argument");
    size_t w = ffnn_model_out(m), f = src->features;
    if (m->input_mean && (!src->values || f != m->input_size))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "standardize: expected %zu float features "
                         "(the model's inputs), found %zu", m->input_size, f);
    if (m->target_mean && src->targets && src->target_width != w)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "standardize: expected %zu targets per "
                         "sample, found %zu", w, src->target_width);
    ffnn_dataset *ds = NULL;
    ffnn_status st = ffnn_dataset_slice(src, 0, src->count, &ds);
    if (st != FFNN_OK)
        return st;
    for (size_t i = 0; m->input_mean && i < src->count; i++)
        for (size_t j = 0; j < f; j++)
            ds->values[i * f + j] =
                (src->values[i * f + j] - m->input_mean[j]) / m->input_scale[j];
    for (size_t i = 0; m->target_mean && src->targets && i < src->count; i++)
        for (size_t j = 0; j < w; j++)
            ds->targets[i * w + j] =
                (src->targets[i * w + j] - m->target_mean[j]) / m->target_scale[j];
    *out = ds;
    return FFNN_OK;
}
