/* dataset.c - the in-memory data set: allocation with overflow checks, slicing,
 * and the read-only accessors of ffnn.h. Loaders (idx.c, ...) fill it in. */
#include "data/dataset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Allocate a data set of count samples of rows x cols bytes each; images and
 * labels are left uninitialised and classes is 0. count, rows and cols must be
 * non-zero; count * rows * cols must fit in size_t. */
ffnn_status ffnn_dataset_alloc(size_t count, size_t rows, size_t cols,
                               ffnn_dataset **out)
{
    ffnn_dataset *ds;

    if (!out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_alloc: out is NULL");
    if (count == 0 || rows == 0 || cols == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_dataset_alloc: expected non-zero sizes, found %zu samples "
                         "of %zu x %zu", count, rows, cols);
    if (rows > SIZE_MAX / cols || count > SIZE_MAX / (rows * cols))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_dataset_alloc: %zu samples of %zu x %zu bytes overflow size_t",
                         count, rows, cols);
    ds = calloc(1, sizeof *ds);
    if (!ds)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "ffnn_dataset_alloc: out of memory (%zu bytes)",
                         sizeof *ds);
    ds->count = count;
    ds->rows = rows;
    ds->cols = cols;
    ds->features = rows * cols;
    ds->images = malloc(count * ds->features); /* [count, features] */
    ds->labels = malloc(count);                /* [count] */
    if (!ds->images || !ds->labels) {
        ffnn_dataset_free(ds);
        return ffnn_fail(FFNN_ERR_NO_MEMORY,
                         "ffnn_dataset_alloc: out of memory for %zu samples of %zu bytes",
                         count, rows * cols);
    }
    *out = ds;
    return FFNN_OK;
}

/* Free a data set and its buffers; NULL is a no-op. */
void ffnn_dataset_free(ffnn_dataset *ds)
{
    if (!ds)
        return;
    free(ds->images);
    free(ds->labels);
    free(ds);
}

/* A copy of rows [first, first + count) of src. The copy keeps src's image shape
 * and its number of classes (a slice has the label space of its source, even
 * when the largest label does not occur in it). */
ffnn_status ffnn_dataset_slice(const ffnn_dataset *src, size_t first, size_t count,
                               ffnn_dataset **out)
{
    ffnn_dataset *ds = NULL;
    ffnn_status st;

    if (!src || !out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_slice: NULL argument");
    if (count == 0 || first > src->count || count > src->count - first)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_dataset_slice: expected a non-empty range within the %zu "
                         "samples, found rows [%zu, %zu + %zu)",
                         src->count, first, first, count);
    st = ffnn_dataset_alloc(count, src->rows, src->cols, &ds);
    if (st != FFNN_OK)
        return st;
    memcpy(ds->images, src->images + first * src->features, count * src->features);
    memcpy(ds->labels, src->labels + first, count);
    ds->classes = src->classes;
    *out = ds;
    return FFNN_OK;
}

/* Number of samples (0 for NULL). */
size_t ffnn_dataset_count(const ffnn_dataset *ds) { return ds ? ds->count : 0; }

/* Values per sample (0 for NULL). */
size_t ffnn_dataset_features(const ffnn_dataset *ds) { return ds ? ds->features : 0; }

/* Number of classes, max label + 1 (0 for NULL). */
int ffnn_dataset_classes(const ffnn_dataset *ds) { return ds ? ds->classes : 0; }

/* Images uint8 [count, features], owned by ds (NULL for NULL). */
const uint8_t *ffnn_dataset_images(const ffnn_dataset *ds) { return ds ? ds->images : NULL; }

/* Labels uint8 [count], owned by ds (NULL for NULL). */
const uint8_t *ffnn_dataset_labels(const ffnn_dataset *ds) { return ds ? ds->labels : NULL; }
