/* dataset.c - the in-memory data set: allocation with overflow checks, slicing,
 * class subsets, a data set from caller arrays, and the read-only accessors of
 * ffnn.h. Loaders (idx.c, synth.c) fill it in. */
#define _POSIX_C_SOURCE 200809L
#include "data/dataset.h"

#include <math.h>
#include <sys/mman.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/strings.h"
#include "data/table.h"

/* Allocate a data set of count samples of rows x cols features each, uint8 or
 * float32 (float_features), with uint8 labels (target_width 0) or float32
 * targets [count, target_width]. Buffers are left uninitialised; classes is 0.
 * count, rows and cols must be non-zero; every byte size must fit in size_t. */
ffnn_status ffnn_dataset_alloc_kind(size_t count, size_t rows, size_t cols,
                                    int float_features, size_t target_width,
                                    ffnn_dataset **out)
{
    ffnn_dataset *ds;
    size_t fsize = float_features ? sizeof(float) : 1;

    if (!out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_alloc: out is NULL");
    if (count == 0 || rows == 0 || cols == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_dataset_alloc: expected non-zero sizes, found %zu samples "
                         "of %zu x %zu", count, rows, cols);
    if (rows > SIZE_MAX / cols || count > SIZE_MAX / (rows * cols) ||
        count * rows * cols > SIZE_MAX / fsize ||
        (target_width && (target_width > SIZE_MAX / sizeof(float) / count)))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_dataset_alloc: %zu samples of %zu x %zu values (targets %zu "
                         "wide) overflow size_t", count, rows, cols, target_width);
    ds = calloc(1, sizeof *ds);
    if (!ds)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "ffnn_dataset_alloc: out of memory (%zu bytes)",
                         sizeof *ds);
    ds->count = count;
    ds->rows = rows;
    ds->cols = cols;
    ds->features = rows * cols;
    ds->target_width = target_width;
    if (float_features)
        ds->values = malloc(count * ds->features * sizeof(float)); /* [count, features] */
    else
        ds->images = malloc(count * ds->features);                 /* [count, features] */
    if (target_width)
        ds->targets = malloc(count * target_width * sizeof(float)); /* [count, width] */
    else
        ds->labels = malloc(count * sizeof(int32_t));               /* [count] */
    if ((!ds->images && !ds->values) || (!ds->labels && !ds->targets)) {
        ffnn_dataset_free(ds);
        return ffnn_fail(FFNN_ERR_NO_MEMORY,
                         "ffnn_dataset_alloc: out of memory for %zu samples of %zu %s values",
                         count, rows * cols, float_features ? "float" : "byte");
    }
    *out = ds;
    return FFNN_OK;
}

/* uint8 images [count, rows*cols] and uint8 labels [count] (idx.c). */
ffnn_status ffnn_dataset_alloc(size_t count, size_t rows, size_t cols,
                               ffnn_dataset **out)
{
    return ffnn_dataset_alloc_kind(count, rows, cols, 0, 0, out);
}

/* Free a data set and its buffers; NULL is a no-op. */
void ffnn_dataset_free(ffnn_dataset *ds)
{
    if (!ds)
        return;
    free(ds->images);
    if (ds->map)
        munmap(ds->map, ds->map_size); /* values point into it */
    else
        free(ds->values);
    free(ds->labels);
    free(ds->targets);
    free(ds->weights);
    ffnn_strings_free(ds->class_names, (size_t)ds->classes);
    ffnn_table_free(ds->table);
    free(ds);
}

ffnn_status ffnn_dataset_own_values(ffnn_dataset *ds)
{
    if (!ds || !ds->map)
        return FFNN_OK;
    size_t bytes = ds->count * ds->features * sizeof(float);
    float *copy = malloc(bytes ? bytes : 1);
    if (!copy)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for a copy of %zu float features "
                         "(%zu bytes)", ds->count * ds->features, bytes);
    memcpy(copy, ds->values, bytes);
    munmap(ds->map, ds->map_size);
    ds->map = NULL;
    ds->map_size = 0;
    ds->values = copy;
    return FFNN_OK;
}

/* Copy sample `from` of src into sample `to` of dst (same kinds and widths). */
static void copy_sample(ffnn_dataset *dst, size_t to, const ffnn_dataset *src, size_t from)
{
    size_t f = src->features, w = src->target_width;
    if (src->images)
        memcpy(dst->images + to * f, src->images + from * f, f);
    else
        memcpy(dst->values + to * f, src->values + from * f, f * sizeof(float));
    if (src->labels)
        dst->labels[to] = src->labels[from];
    else
        memcpy(dst->targets + to * w, src->targets + from * w, w * sizeof(float));
    if (src->weights && dst->weights)
        dst->weights[to] = src->weights[from];
}

/* dst's weights buffer when src has weights (contents left to copy_sample). */
static ffnn_status alloc_weights_like(ffnn_dataset *dst, const ffnn_dataset *src)
{
    if (!src->weights)
        return FFNN_OK;
    if (!(dst->weights = malloc(dst->count * sizeof *dst->weights)))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for %zu sample weights",
                         dst->count);
    return FFNN_OK;
}

/* A copy of rows [first, first + count) of src. The copy keeps src's kinds, its
 * image shape and its number of classes (a slice has the label space of its
 * source, even when the largest label does not occur in it). */
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
    st = ffnn_dataset_alloc_kind(count, src->rows, src->cols, src->values != NULL,
                                 src->target_width, &ds);
    if (st == FFNN_OK && (st = alloc_weights_like(ds, src)) != FFNN_OK)
        ffnn_dataset_free(ds);
    if (st != FFNN_OK)
        return st;
    for (size_t i = 0; i < count; i++)
        copy_sample(ds, i, src, first + i);
    ds->classes = src->classes;
    if (src->class_names &&
        (st = ffnn_dataset_set_class_names(ds, (const char *const *)src->class_names,
                                           (size_t)src->classes)) != FFNN_OK) {
        ffnn_dataset_free(ds);
        return st;
    }
    if (src->table && (st = ffnn_table_copy(src->table, &ds->table)) != FFNN_OK) {
        ffnn_dataset_free(ds);
        return st;
    }
    *out = ds;
    return FFNN_OK;
}

ffnn_status ffnn_dataset_set_class_names(ffnn_dataset *ds, const char *const *names,
                                         size_t count)
{
    char **copy = NULL;
    ffnn_status st = ffnn_strings_copy(names, count, &copy);
    if (st != FFNN_OK)
        return st;
    ffnn_strings_free(ds->class_names, (size_t)ds->classes);
    ds->class_names = copy;
    ds->classes = (int)count;
    return FFNN_OK;
}

void ffnn_printable(const char *s, size_t n, size_t max, char *out, size_t out_size)
{
    size_t k = 0;
    if (out_size == 0)
        return;
    for (size_t i = 0; i < n && i < max && k + 1 < out_size; i++) {
        unsigned char c = (unsigned char)s[i];
        out[k++] = c >= 0x20 && c <= 0x7e ? (char)c : '?';
    }
    for (int d = 0; n > max && d < 3 && k + 1 < out_size; d++)
        out[k++] = '.';
    out[k] = '\0';
}

const char *ffnn_dataset_class_name(const ffnn_dataset *ds, int c)
{
    if (!ds || !ds->class_names || c < 0 || c >= ds->classes)
        return NULL;
    return ds->class_names[c];
}

ffnn_status ffnn_dataset_select_classes(const ffnn_dataset *src, int a, int b,
                                        ffnn_dataset **out)
{
    ffnn_dataset *ds = NULL;
    size_t kept = 0, k = 0;
    ffnn_status st;

    if (!src || !out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_dataset_select_classes: NULL argument");
    if (!src->labels)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "select classes: the data set has float targets (%zu per sample), "
                         "not class labels", src->target_width);
    if (a < 0 || b < 0 || a == b)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "select classes: expected two different labels >= 0, found "
                         "%d and %d", a, b);
    for (size_t i = 0; i < src->count; i++)
        kept += src->labels[i] == a || src->labels[i] == b;
    if (kept == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "select classes %d,%d: no sample of the %zu has either label", a, b,
                         src->count);
    st = ffnn_dataset_alloc_kind(kept, src->rows, src->cols, src->values != NULL, 0, &ds);
    if (st == FFNN_OK && (st = alloc_weights_like(ds, src)) != FFNN_OK)
        ffnn_dataset_free(ds);
    if (st != FFNN_OK)
        return st;
    for (size_t i = 0; i < src->count; i++) {
        if (src->labels[i] != a && src->labels[i] != b)
            continue;
        copy_sample(ds, k, src, i);
        ds->labels[k++] = src->labels[i] == b; /* a -> 0, b -> 1 */
    }
    ds->classes = 2;
    if (src->class_names && a < src->classes && b < src->classes) { /* their labels' texts */
        const char *names[2] = {src->class_names[a], src->class_names[b]};
        if ((st = ffnn_dataset_set_class_names(ds, names, 2)) != FFNN_OK) {
            ffnn_dataset_free(ds);
            return st;
        }
    }
    *out = ds;
    return FFNN_OK;
}

ffnn_status ffnn_dataset_from_arrays(size_t count, size_t features, const float *x,
                                     const int32_t *labels, size_t target_width,
                                     const float *targets, ffnn_dataset **out)
{
    ffnn_dataset *ds = NULL;
    ffnn_status st;

    if (!x || !out || (target_width == 0 && !labels) || (target_width > 0 && !targets))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_dataset_from_arrays: NULL argument (x, out, and labels when "
                         "target_width is 0, else targets, are required)");
    for (size_t i = 0; count && features && i < count * features; i++)
        if (!isfinite(x[i]))
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "ffnn_dataset_from_arrays: feature %zu of sample %zu is %g",
                             i % features, i / features, (double)x[i]);
    for (size_t i = 0; target_width && i < count * target_width; i++)
        if (!isfinite(targets[i]))
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "ffnn_dataset_from_arrays: target %zu of sample %zu is %g",
                             i % target_width, i / target_width, (double)targets[i]);
    for (size_t i = 0; !target_width && i < count; i++)
        if (labels[i] < 0)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "ffnn_dataset_from_arrays: label of sample %zu is %d, expected "
                             ">= 0", i, (int)labels[i]);
    st = ffnn_dataset_alloc_kind(count, 1, features, 1, target_width, &ds);
    if (st != FFNN_OK)
        return st;
    memcpy(ds->values, x, count * features * sizeof(float));
    if (target_width) {
        memcpy(ds->targets, targets, count * target_width * sizeof(float));
    } else {
        memcpy(ds->labels, labels, count * sizeof *labels);
        for (size_t i = 0; i < count; i++)
            if (labels[i] >= ds->classes)
                ds->classes = labels[i] + 1;
    }
    *out = ds;
    return FFNN_OK;
}

/* Number of samples (0 for NULL). */
size_t ffnn_dataset_count(const ffnn_dataset *ds) { return ds ? ds->count : 0; }

/* Values per sample (0 for NULL). */
size_t ffnn_dataset_features(const ffnn_dataset *ds) { return ds ? ds->features : 0; }

/* Number of classes, max label + 1 (0 for NULL and for float targets). */
int ffnn_dataset_classes(const ffnn_dataset *ds) { return ds ? ds->classes : 0; }

/* Images uint8 [count, features], owned by ds (NULL for NULL or float features). */
const uint8_t *ffnn_dataset_images(const ffnn_dataset *ds) { return ds ? ds->images : NULL; }

/* Labels int32 [count], owned by ds (NULL for NULL or float targets). */
const int32_t *ffnn_dataset_labels(const ffnn_dataset *ds) { return ds ? ds->labels : NULL; }

/* Float features [count, features] (NULL for NULL or uint8 features). */
const float *ffnn_dataset_float_features(const ffnn_dataset *ds)
{
    return ds ? ds->values : NULL;
}

/* Floats per target row; 0 with class labels (and for NULL). */
size_t ffnn_dataset_target_width(const ffnn_dataset *ds) { return ds ? ds->target_width : 0; }

/* Float targets [count, target_width] (NULL for NULL or class labels). */
const float *ffnn_dataset_targets(const ffnn_dataset *ds) { return ds ? ds->targets : NULL; }
