/* table.h - the columns of a table behind a data set, and their encoding into
 * the network's inputs: the struct behind include/ffnn.h's opaque ffnn_table
 * (private to the library) and the private helpers. The rules (raw and fitted
 * tables, median imputation with indicators, one-hot levels; the scikit-learn
 * equivalent) are include/ffnn.h's "table encoding" section; table.c fits and
 * encodes, table_json.c keeps an encoding as the JSON text of model files. */
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
    size_t embed_dim;   /* fitted, categorical: 0 one-hot; else the dimension of its
                           learned embedding (its input: the level's code, after the
                           indicators)                                           */
} ffnn_table_column;

struct ffnn_table {       /* typedef'd in include/ffnn.h */
    size_t count;           /* feature columns                                  */
    ffnn_table_column *col; /* [count], owned                                   */
    int fitted;             /* 0: a raw data set's columns; 1: an encoding      */
    size_t width;           /* fitted: inputs of the encoding                   */
    size_t dropped;         /* raw: rows dropped for a missing target           */
};

/* ffnn_table_free, ffnn_table_fit, ffnn_table_encode, ffnn_dataset_table,
 * ffnn_table_needs_encoding, the accessors and ffnn_model_table /
 * ffnn_model_set_table are public (include/ffnn.h, "table encoding"). */

/* A deep copy of t into *out. Errors: FFNN_ERR_NO_MEMORY. */
ffnn_status ffnn_table_copy(const ffnn_table *t, ffnn_table **out);

/* Hand t to ds (owned; the previous one freed). */
void ffnn_dataset_set_table(ffnn_dataset *ds, ffnn_table *t);

/* The fitted table t as JSON text (*out malloc'd): {"columns": [{"name": N,
 * "kind": "numeric", "median": M, "indicator": true|false} or {"name": N,
 * "kind": "categorical", "levels": [...]} (+ "embedding": D when embedded), ...],
 * "width": W} (docs/FORMATS.md).
 * Errors: FFNN_ERR_NO_MEMORY. */
ffnn_status ffnn_table_to_json(const ffnn_table *t, char **out);

/* The fitted table of JSON text into *out, checked: every field present and of
 * its type, finite medians, distinct levels, width the sum of the columns'.
 * Errors: FFNN_ERR_FORMAT naming the field, FFNN_ERR_NO_MEMORY. */
ffnn_status ffnn_table_from_json(const char *json, ffnn_table **out);

/* The inputs column c takes in a fitted table's row: a numeric one 1 (+ its
 * indicator's), a one-hot one its levels, an embedded one 1 (its code). */
static inline size_t ffnn_table_column_inputs(const ffnn_table_column *c)
{
    return !c->categorical ? 1 + (size_t)c->indicator : c->embed_dim ? 1 : c->level_count;
}

#endif
