/* table_columns.c - a raw table data set from columns in memory (include/ffnn.h,
 * ffnn_dataset_from_columns): what a CSV file read with text categories and
 * missing cells gives, built from a data frame's values and level texts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/dataset.h"
#include "data/table.h"

static int compare_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Column i's texts levels[0..n) distinct: FFNN_OK, else the repeated one named. */
static ffnn_status check_distinct(const char *name, const char *const *levels, size_t n)
{
    if (n < 2)
        return FFNN_OK;
    const char **sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    memcpy(sorted, levels, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, compare_text);
    ffnn_status st = FFNN_OK;
    for (size_t k = 1; st == FFNN_OK && k < n; k++)
        if (strcmp(sorted[k - 1], sorted[k]) == 0) {
            char shown[48];
            ffnn_printable(sorted[k], strlen(sorted[k]), 40, shown, sizeof shown);
            st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "column '%s': the level '%s' is given "
                           "twice (a column's levels must be distinct)", name, shown);
        }
    free(sorted);
    return st;
}

/* The arguments checked, before anything is allocated. */
static ffnn_status check_columns(size_t count, size_t columns, const float *x,
                                 const char *const *names, const int *kinds,
                                 const size_t *level_counts, const char *const *levels)
{
    const char *const *lv = levels;
    char index[32];
    for (size_t i = 0; i < columns; i++) {
        const char *name = names ? names[i] : (snprintf(index, sizeof index, "%zu", i), index);
        if (!name)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_from_columns: the "
                             "name of column %zu is NULL", i);
        if (kinds[i] != FFNN_TABLE_NUMERIC && kinds[i] != FFNN_TABLE_CATEGORICAL)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "column '%s': kind %d, expected %d "
                             "(numeric) or %d (categorical)", name, kinds[i],
                             FFNN_TABLE_NUMERIC, FFNN_TABLE_CATEGORICAL);
        size_t n = level_counts[i];
        if (kinds[i] == FFNN_TABLE_NUMERIC && n)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "column '%s': a numeric column with "
                             "%zu levels", name, n);
        if (n > (1u << 24))
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "column '%s': %zu levels, at most "
                             "2^24 (ids exact in float32)", name, n);
        for (size_t k = 0; k < n; k++)
            if (!lv[k])
                return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "column '%s': level %zu is NULL",
                                 name, k);
        ffnn_status st = check_distinct(name, lv, n);
        if (st != FFNN_OK)
            return st;
        lv += n;
        for (size_t r = 0; r < count; r++) {
            float v = x[r * columns + i];
            if (v != v)
                continue; /* missing */
            if (kinds[i] == FFNN_TABLE_NUMERIC ? !isfinite(v)
                                               : !(v >= 0.0f && v < (float)n && v == floorf(v)))
                return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "row %zu, column '%s': %g is not %s",
                                 r, name, (double)v,
                                 kinds[i] == FFNN_TABLE_NUMERIC
                                     ? "a finite float32 (NaN: a missing cell)"
                                     : "the id of one of the column's levels (NaN: missing)");
        }
    }
    return FFNN_OK;
}

/* Column i of the raw table: name, kind, its levels copied, missing cells counted. */
static ffnn_status fill_column(ffnn_table_column *c, const char *name, int kind,
                               const char *const *levels, size_t n, const float *x,
                               size_t count, size_t columns)
{
    size_t len = strlen(name);
    if (!(c->name = malloc(len + 1)))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for a table's columns");
    memcpy(c->name, name, len + 1);
    c->categorical = kind == FFNN_TABLE_CATEGORICAL;
    if (n && !(c->levels = calloc(n, sizeof *c->levels)))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for a table's levels");
    for (size_t k = 0; k < n; k++, c->level_count++) {
        size_t m = strlen(levels[k]);
        if (!(c->levels[k] = malloc(m + 1)))
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for a table's levels");
        memcpy(c->levels[k], levels[k], m + 1);
    }
    for (size_t r = 0; r < count; r++)
        c->missing += x[r * columns] != x[r * columns];
    c->median = NAN;
    return FFNN_OK;
}

ffnn_status ffnn_dataset_from_columns(size_t count, size_t columns, const float *x,
                                      const char *const *names, const int *kinds,
                                      const size_t *level_counts, const char *const *levels,
                                      ffnn_dataset **out)
{
    if (!out || !x || !kinds || !level_counts)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_from_columns: NULL argument "
                         "(x, kinds, level_counts and out are required)");
    size_t total = 0;
    for (size_t i = 0; i < columns; i++)
        total += level_counts[i];
    if (total && !levels)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_from_columns: levels is "
                         "NULL, expected %zu texts", total);
    if (count == 0 || columns == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_from_columns: expected at "
                         "least one row and one column, found %zu x %zu", count, columns);
    ffnn_status st = check_columns(count, columns, x, names, kinds, level_counts, levels);
    if (st != FFNN_OK)
        return st;
    ffnn_dataset *ds = NULL;
    if ((st = ffnn_dataset_alloc_kind(count, 1, columns, 1, 0, &ds)) != FFNN_OK)
        return st;
    memcpy(ds->values, x, count * columns * sizeof *x);
    memset(ds->labels, 0, count * sizeof *ds->labels);
    ffnn_table *t = calloc(1, sizeof *t);
    ffnn_table_column *cols = calloc(columns, sizeof *cols);
    if (!t || !cols) {
        free(t);
        free(cols);
        ffnn_dataset_free(ds);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for a table's columns");
    }
    t->col = cols;
    t->count = columns;
    const char *const *lv = levels;
    char index[32];
    for (size_t i = 0; st == FFNN_OK && i < columns; i++) {
        const char *name = names ? names[i] : (snprintf(index, sizeof index, "%zu", i), index);
        st = fill_column(&cols[i], name, kinds[i], lv, level_counts[i], x + i, count, columns);
        lv += level_counts[i];
    }
    if (st != FFNN_OK) {
        ffnn_table_free(t);
        ffnn_dataset_free(ds);
        return st;
    }
    ffnn_dataset_set_table(ds, t);
    *out = ds;
    return FFNN_OK;
}
