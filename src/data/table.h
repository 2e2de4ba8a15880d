/* table.h - the columns of a table behind a data set, and their encoding into
 * the network's inputs (private to the library; the CLI, the model files and
 * prediction use it). A CSV file read with text categories or missing cells
 * gives a raw data set: one value per feature column, a categorical column's
 * value the id of its level (table_column.levels), a missing cell NaN. Fitting
 * on the training split (table.c: ffnn_table_fit) gives what the model keeps:
 * per numeric column the median of its present values (the fill of a missing
 * cell) and whether it had missing cells (then a 0/1 indicator input follows
 * the features), per categorical column the levels seen in training (one-hot
 * inputs; a missing cell is the level "missing" when training had one; an
 * unseen level is an all-zero row, counted). The same as scikit-learn's
 * SimpleImputer(strategy="median", add_indicator=True) on the numeric columns
 * and OneHotEncoder(handle_unknown="ignore") after SimpleImputer(strategy=
 * "constant", fill_value="missing") on the categorical ones. */
#ifndef FFNN_DATA_TABLE_H
#define FFNN_DATA_TABLE_H

#include <stddef.h>

#include "ffnn.h"

typedef struct ffnn_table_column {
    char *name;         /* the header name, or the 0-based index ("3") without one */
    int categorical;    /* 1: values are level ids                               */
    char **levels;      /* [level_count] categorical: the levels' texts          */
    size_t level_count;
    size_t missing;     /* raw: cells read as missing; fitted: in the training split */
    float median;       /* fitted, numeric: the fill of a missing cell            */
    int indicator;      /* fitted, numeric: 1 when an indicator input follows     */
} ffnn_table_column;

typedef struct ffnn_table {
    size_t count;           /* feature columns                                  */
    ffnn_table_column *col; /* [count], owned                                   */
    int fitted;             /* 0: a raw data set's columns; 1: an encoding      */
    size_t width;           /* fitted: inputs of the encoding                   */
    size_t dropped;         /* raw: rows dropped for a missing target           */
} ffnn_table;

void ffnn_table_free(ffnn_table *t);

/* A deep copy of t into *out. Errors: FFNN_ERR_NO_MEMORY. */
ffnn_status ffnn_table_copy(const ffnn_table *t, ffnn_table **out);

/* Whether the raw table needs an encoding (a categorical column or a missing
 * cell); when not, its values are the network's inputs as they are. */
int ffnn_table_needs_encoding(const ffnn_table *raw);

/* The encoding fitted on the raw training split train (its values and the
 * columns of its table) into *out. Errors: FFNN_ERR_INVALID_ARGUMENT (no
 * table; a numeric column with no present value), FFNN_ERR_NO_MEMORY. */
ffnn_status ffnn_table_fit(const ffnn_dataset *train, ffnn_table **out);

/* The raw data set src encoded by enc into *out [count, enc->width] (labels or
 * targets copied; *out carries a copy of enc, so a model trained on it keeps
 * it). src's columns are matched to enc's by position; its categorical levels
 * to enc's by text; *unseen (may be NULL) gets the number of cells whose level
 * enc does not know (all-zero one-hot). Errors: FFNN_ERR_INVALID_ARGUMENT
 * (columns that differ in number or kind, naming the first), FFNN_ERR_NO_MEMORY. */
ffnn_status ffnn_table_encode(const ffnn_table *enc, const ffnn_dataset *src,
                              size_t *unseen, ffnn_dataset **out);

/* The data set's table (raw or fitted), or NULL. */
const ffnn_table *ffnn_dataset_table(const ffnn_dataset *ds);

/* Hand t to ds (owned; the previous one freed). */
void ffnn_dataset_set_table(ffnn_dataset *ds, ffnn_table *t);

/* The fitted table t as JSON text (*out malloc'd): {"columns": [{"name": N,
 * "kind": "numeric", "median": M, "indicator": true|false} or {"name": N,
 * "kind": "categorical", "levels": [...]}, ...], "width": W} (docs/FORMATS.md).
 * Errors: FFNN_ERR_NO_MEMORY. */
ffnn_status ffnn_table_to_json(const ffnn_table *t, char **out);

/* The fitted table of JSON text into *out, checked: every field present and of
 * its type, finite medians, distinct levels, width the sum of the columns'.
 * Errors: FFNN_ERR_FORMAT naming the field, FFNN_ERR_NO_MEMORY. */
ffnn_status ffnn_table_from_json(const char *json, ffnn_table **out);

#endif
