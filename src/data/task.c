/* task.c - whether a data set's class labels make a sensible classification
 * task (ffnn_dataset_check_task, ffnn.h): the checks that keep a continuous
 * target, a missing label or a one-class file from training silently as
 * something else. Each refusal names the way out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/dataset.h"

/* The number of text s when all of it is one (spaces around allowed), into *v. */
static int parse_number(const char *s, double *v)
{
    char *end;
    while (*s == ' ')
        s++;
    if (!*s)
        return 0;
    *v = strtod(s, &end);
    while (*end == ' ')
        end++;
    return end != s && *end == '\0';
}

/* Samples with label c. */
static size_t count_label(const ffnn_dataset *ds, int c)
{
    size_t n = 0;
    for (size_t i = 0; i < ds->count; i++)
        n += ds->labels[i] == c;
    return n;
}

static int compare_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Distinct labels among the samples (a table of classes bytes when that is
 * not much more than the labels, else a sorted copy); -1 when out of memory. */
static long long distinct_labels(const ffnn_dataset *ds)
{
    long long n = 0;
    if ((size_t)ds->classes <= 4 * ds->count + 1024) {
        uint8_t *seen = calloc((size_t)ds->classes + 1, 1);
        if (!seen)
            return -1;
        for (size_t i = 0; i < ds->count; i++)
            if (ds->labels[i] >= 0 && ds->labels[i] < ds->classes && !seen[ds->labels[i]])
                seen[ds->labels[i]] = 1, n++;
        free(seen);
        return n;
    }
    int32_t *copy = malloc(ds->count * sizeof *copy);
    if (!copy)
        return -1;
    memcpy(copy, ds->labels, ds->count * sizeof *copy);
    qsort(copy, ds->count, sizeof *copy, compare_i32);
    for (size_t i = 0; i < ds->count; i++)
        n += i == 0 || copy[i] != copy[i - 1];
    free(copy);
    return n;
}

/* The class names: a "nan" class, or numbers that are not all integers. */
static ffnn_status check_class_names(const ffnn_dataset *ds)
{
    int numeric = 1, fraction = -1;
    char text[64];
    for (int c = 0; c < ds->classes; c++) {
        double v;
        const char *name = ds->class_names[c];
        if (!parse_number(name, &v)) {
            numeric = 0;
            continue;
        }
        if (isnan(v)) {
            ffnn_printable(name, strlen(name), 40, text, sizeof text);
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "the target holds '%s' in %zu of the %zu rows: a missing label, "
                             "which would train as a class of its own; drop those rows or "
                             "fill in their labels", text, count_label(ds, c), ds->count);
        }
        if (fraction < 0 && isfinite(v) && v != floor(v))
            fraction = c;
    }
    if (numeric && fraction >= 0) {
        const char *name = ds->class_names[fraction];
        ffnn_printable(name, strlen(name), 40, text, sizeof text);
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "the target is numeric and not all integers (e.g. '%s'): a "
                         "continuous target, which would train as %d classes; for regression "
                         "use loss mse (--loss mse; Python: MLPRegressor), or for "
                         "classification give integer or text labels",
                         text, ds->classes);
    }
    return FFNN_OK;
}

ffnn_status ffnn_dataset_check_task(const ffnn_dataset *ds, ffnn_loss loss, unsigned flags)
{
    if (!ds)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_check_task: ds is NULL");
    if (!ds->labels || loss == FFNN_LOSS_MSE) /* float targets, or labels as values */
        return FFNN_OK;
    ffnn_status st;
    if (ds->class_names && (st = check_class_names(ds)) != FFNN_OK)
        return st;
    long long distinct = distinct_labels(ds);
    if (distinct < 0)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory counting the classes");
    if (distinct < 2) {
        const char *name = ffnn_dataset_class_name(ds, ds->labels[0]);
        char text[64];
        if (name)
            ffnn_printable(name, strlen(name), 40, text, sizeof text);
        else
            snprintf(text, sizeof text, "%d", (int)ds->labels[0]);
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "the %zu samples all have one label ('%s'): a classifier needs at "
                         "least 2 classes; check the target column (--target) or the labels "
                         "file (--labels y.npy), or use loss mse (--loss mse) for a numeric "
                         "target", ds->count, text);
    }
    if (!(flags & FFNN_TASK_ALLOW_MANY_CLASSES) && (size_t)distinct > ds->count / 2)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "%lld classes among %zu samples (more than half the samples): "
                         "likely a continuous target or an id column; for regression use "
                         "loss mse (--loss mse), else pick the target column (--target), or "
                         "confirm these are classes (--allow-many-classes)",
                         distinct, ds->count);
    return FFNN_OK;
}
