/*
 * base.c - what every other file of src/train builds on (it calls none of them):
 * the trainer's device memory, a data set's copy on the device, the accessors,
 * the means of per-row values.
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/dataset.h"
#include "train/trainer.h"

ffnn_status ffnn_trainer_alloc(ffnn_trainer *t, void *ptr_out, size_t count, size_t elem)
{
    void **out = (void **)ptr_out;
    if (count != 0 && elem > SIZE_MAX / count)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "buffer size overflows");
    return t->run.ops->alloc(t->run.ctx, count * elem, out);
}

void ffnn_trainer_release(ffnn_trainer *t, void *ptr)
{
    if (ptr)
        t->run.ops->release(t->run.ctx, ptr);
}

void ffnn_device_data_free(ffnn_trainer *t, ffnn_device_data *d)
{
    ffnn_trainer_release(t, d->images);
    ffnn_trainer_release(t, d->values);
    ffnn_trainer_release(t, d->labels);
    ffnn_trainer_release(t, d->targets);
    ffnn_trainer_release(t, d->index);
    ffnn_trainer_release(t, d->row_loss);
    ffnn_trainer_release(t, d->row_correct);
    ffnn_trainer_release(t, d->weights);
    memset(d, 0, sizeof *d);
}

/* Upload a data set once: features (uint8 or float), labels or float targets,
 * per-row metric buffers, index 0..n-1. */
ffnn_status ffnn_device_data_upload(ffnn_trainer *t, const ffnn_dataset *ds,
                                         ffnn_device_data *d)
{
    ffnn_status st;
    size_t n = ds->count;
    int32_t *iota = malloc(n * sizeof *iota);
    if (!iota)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for %zu indices", n);
    for (size_t i = 0; i < n; i++)
        iota[i] = (int32_t)i;
    d->host = ds;
    size_t fbytes = ds->images ? 1 : sizeof(float); /* per feature */
    void **features = ds->images ? (void **)&d->images : (void **)&d->values;
    const void *host_features = ds->images ? (const void *)ds->images : (const void *)ds->values;
    if ((st = ffnn_trainer_alloc(t, features, n, ds->features * fbytes)) != FFNN_OK ||
        (ds->labels && (st = ffnn_trainer_alloc(t, &d->labels, n, sizeof(int32_t))) != FFNN_OK) ||
        (ds->targets && (st = ffnn_trainer_alloc(t, &d->targets, n,
                                                 ds->target_width * sizeof(float))) != FFNN_OK) ||
        (st = ffnn_trainer_alloc(t, &d->index, n, sizeof(int32_t))) != FFNN_OK ||
        (st = ffnn_trainer_alloc(t, &d->row_loss, n, sizeof(float))) != FFNN_OK ||
        (st = ffnn_trainer_alloc(t, &d->row_correct, n, 1)) != FFNN_OK ||
        (st =
             t->run.ops->upload(t->run.ctx, *features, host_features, n * ds->features * fbytes)) ||
        (ds->labels &&
         (st = t->run.ops->upload(t->run.ctx, d->labels, ds->labels, n * sizeof(int32_t))) !=
             FFNN_OK) ||
        (ds->targets && (st = t->run.ops->upload(t->run.ctx, d->targets, ds->targets,
                                                 n * ds->target_width * sizeof(float)))) ||
        (st = t->run.ops->upload(t->run.ctx, d->index, iota, n * sizeof(int32_t))) != FFNN_OK ||
        (ds->weights && ((st = ffnn_trainer_alloc(t, &d->weights, n, sizeof(float))) != FFNN_OK ||
                         (st = t->run.ops->upload(t->run.ctx, d->weights, ds->weights,
                                                  n * sizeof(float))) != FFNN_OK))) {
        free(iota);
        ffnn_device_data_free(t, d);
        return st;
    }
    /* the upload may be asynchronous: wait before freeing its source */
    st = t->run.ops->synchronize(t->run.ctx);
    free(iota);
    return st;
}



ffnn_device ffnn_trainer_device(const ffnn_trainer *t) { return t->device; }

ffnn_comm *ffnn_trainer_comm(const ffnn_trainer *t) { return t->comm; }

ffnn_strategy ffnn_trainer_strategy(const ffnn_trainer *t) { return t->strategy->id; }

const char *ffnn_trainer_strategy_note(const ffnn_trainer *t) { return t->strategy_note; }

int ffnn_trainer_threads(const ffnn_trainer *t)
{
    /* host threads of a cpu backend; 0 on a GPU */
    return t->run.ops->caps & FFNN_CAP_DEVICE ? 0 : t->run.ops->threads(t->run.ctx);
}

size_t ffnn_trainer_batch_size(const ffnn_trainer *t) { return t->cfg.batch_size; }

size_t ffnn_trainer_steps_per_epoch(const ffnn_trainer *t)
{
    size_t n = t->run.train.host->count, B = t->cfg.batch_size;
    return t->cfg.drop_last ? n / B : (n + B - 1) / B;
}

double ffnn_weighted_mean_of(const float *v, const int32_t *index, const float *weights,
                             size_t n)
{
    if (!weights)
        return ffnn_mean_of(v, n);
    double sum = 0.0, wsum = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += (double)weights[index[i]] * v[i];
        wsum += weights[index[i]];
    }
    return wsum > 0.0 ? sum / wsum : 0.0;
}

double ffnn_mean_of(const float *v, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    return sum / (double)n;
}
