/*
 * split.c - a data set split in two by a fixed seeded permutation, stratified by
 * class (ffnn_dataset_split in ffnn.h has the rule; tests/torch_twin.py redoes it).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/rng.h"
#include "data/dataset.h"

/* The rows of src whose flag in[] is `want`, in file order, as a new data set. */
static ffnn_status take_rows(const ffnn_dataset *src, const unsigned char *in, int want,
                             size_t count, ffnn_dataset **out)
{
    ffnn_dataset *ds = NULL;
    ffnn_status st = ffnn_dataset_slice(src, 0, count, &ds); /* src's kinds, names, classes */
    if (st != FFNN_OK)
        return st;
    size_t f = src->features, w = src->target_width, k = 0;
    size_t fb = src->images ? 1 : sizeof(float);
    for (size_t i = 0; i < src->count; i++) {
        if (in[i] != want)
            continue;
        if (src->images)
            memcpy(ds->images + k * f, src->images + i * f, f);
        else
            memcpy(ds->values + k * f, src->values + i * f, f * fb);
        if (src->labels)
            ds->labels[k] = src->labels[i];
        else
            memcpy(ds->targets + k * w, src->targets + i * w, w * sizeof(float));
        if (src->weights) /* slice gave ds a weights buffer */
            ds->weights[k] = src->weights[i];
        k++;
    }
    *out = ds;
    return FFNN_OK;
}

/* Largest-remainder counts: q[c] of n[c] go to the part, summing to total. */
static void stratum_counts(const size_t *n, size_t classes, double fraction, size_t total,
                           size_t *q)
{
    size_t sum = 0;
    for (size_t c = 0; c < classes; c++) {
        q[c] = (size_t)floor(fraction * (double)n[c]);
        sum += q[c];
    }
    while (sum < total) { /* one more to the largest remainder (first class on ties) */
        size_t best = classes;
        double best_r = -1.0;
        for (size_t c = 0; c < classes; c++) {
            double r = fraction * (double)n[c] - (double)q[c];
            if (q[c] < n[c] && r > best_r) {
                best_r = r;
                best = c;
            }
        }
        if (best == classes)
            break;
        q[best]++;
        sum++;
    }
}

ffnn_status ffnn_dataset_split(const ffnn_dataset *src, double fraction, uint64_t seed,
                               ffnn_dataset **rest, ffnn_dataset **part)
{
    if (!src || !rest || !part)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_split: NULL argument");
    size_t n = src->count, total = (size_t)floor(fraction * (double)n + 0.5);
    if (!(fraction > 0.0 && fraction < 1.0) || total == 0 || total == n)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "split: a fraction of %g of %zu samples leaves %zu and %zu: expected a "
                         "fraction in (0, 1) that leaves both sides non-empty", fraction, n,
                         n - total, total);
    size_t classes = src->labels ? (size_t)src->classes : 1;
    size_t *count = calloc(classes, sizeof *count), *q = calloc(classes, sizeof *q);
    size_t *start = calloc(classes + 1, sizeof *start);
    int32_t *order = malloc(n * sizeof *order);
    unsigned char *in = calloc(n, 1);
    ffnn_status st = FFNN_OK;
    if (!count || !q || !start || !order || !in) {
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "split: out of memory for %zu samples", n);
        goto done;
    }
    /* the rows grouped by class, file order within a class */
    for (size_t i = 0; i < n; i++)
        count[src->labels ? (size_t)src->labels[i] : 0]++;
    for (size_t c = 0; c < classes; c++)
        start[c + 1] = start[c] + count[c];
    for (size_t i = 0, *fill = q; i < n; i++) { /* q as the fill cursor, reset below */
        size_t c = src->labels ? (size_t)src->labels[i] : 0;
        order[start[c] + fill[c]++] = (int32_t)i;
    }
    stratum_counts(count, classes, fraction, total, q);
    ffnn_rng r;
    ffnn_rng_seed(&r, seed, FFNN_STREAM_SPLIT);
    for (size_t c = 0; c < classes; c++) {
        ffnn_rng_shuffle(&r, order + start[c], count[c]);
        for (size_t k = 0; k < q[c]; k++)
            in[order[start[c] + k]] = 1;
    }
    st = take_rows(src, in, 0, n - total, rest);
    if (st == FFNN_OK && (st = take_rows(src, in, 1, total, part)) != FFNN_OK) {
        ffnn_dataset_free(*rest);
        *rest = NULL;
    }
done:
    free(count);
    free(q);
    free(start);
    free(order);
    free(in);
    return st;
}

ffnn_status ffnn_dataset_fold(const ffnn_dataset *src, int k, int fold, uint64_t seed,
                              ffnn_dataset **train, ffnn_dataset **test)
{
    if (!src || !test)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_fold: NULL argument");
    size_t n = src->count;
    if (k < 2 || (size_t)k > n || fold < 0 || fold >= k)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cross-validation: expected 2 <= K <= %zu samples and a fold in "
                         "[0, K), found K %d, fold %d", n, k, fold);
    size_t classes = src->labels ? (size_t)src->classes : 1;
    size_t *count = calloc(classes, sizeof *count), *start = calloc(classes + 1, sizeof *start);
    size_t *fill = calloc(classes, sizeof *fill);
    int32_t *order = malloc(n * sizeof *order);
    unsigned char *in = calloc(n, 1);
    ffnn_status st = FFNN_OK;
    if (!count || !start || !fill || !order || !in) {
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "cross-validation: out of memory for %zu samples", n);
        goto done;
    }
    for (size_t i = 0; i < n; i++) /* the rows grouped by class, file order within */
        count[src->labels ? (size_t)src->labels[i] : 0]++;
    for (size_t c = 0; c < classes; c++)
        start[c + 1] = start[c] + count[c];
    for (size_t i = 0; i < n; i++) {
        size_t c = src->labels ? (size_t)src->labels[i] : 0;
        order[start[c] + fill[c]++] = (int32_t)i;
    }
    ffnn_rng r;
    ffnn_rng_seed(&r, seed, FFNN_STREAM_SPLIT);
    size_t next = 0, in_fold = 0; /* the fold the next sample is dealt to */
    for (size_t c = 0; c < classes; c++) {
        ffnn_rng_shuffle(&r, order + start[c], count[c]);
        for (size_t j = 0; j < count[c]; j++, next = (next + 1) % (size_t)k)
            if (next == (size_t)fold) {
                in[order[start[c] + j]] = 1;
                in_fold++;
            }
    }
    if (in_fold == 0 || in_fold == n) {
        st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cross-validation: fold %d of %d is empty",
                       fold, k);
        goto done;
    }
    if ((st = take_rows(src, in, 1, in_fold, test)) == FFNN_OK && train &&
        (st = take_rows(src, in, 0, n - in_fold, train)) != FFNN_OK) {
        ffnn_dataset_free(*test);
        *test = NULL;
    }
done:
    free(count);
    free(start);
    free(fill);
    free(order);
    free(in);
    return st;
}
