/* tabular.h - tabular files (CSV, TSV, NPY) on the command line: the options
 * train, eval and predict share (--labels, --header, --delimiter, --target,
 * --features, --skip-rows) and the loading through the library's readers. */
#ifndef FFNN_CLI_TABULAR_H
#define FFNN_CLI_TABULAR_H

#include <getopt.h>
#include <stdio.h>

#include "ffnn.h"

/* ffnn train's choice of one-hot or embedding for categorical columns. */
typedef struct ffnn_cli_embedding_options {
    long long max_one_hot;      /* --max-one-hot N: columns with more levels are
                                   embedded (default 32; < 0: the default)       */
    const char *dims;           /* --embedding-dim COL:D,... (or NULL)           */
} ffnn_cli_embedding_options;

typedef struct ffnn_cli_table_options {
    const char *labels;   /* --labels y.npy (with --data X.npy), or NULL        */
    ffnn_csv_options csv; /* --header, --delimiter, --target, --features, --skip-rows,
                             --ignore, --categorical, --na-values, --drop-missing-target */
    int missing_error;    /* --missing error (default impute)                    */
    int unknown_error;    /* --unknown-category error (default ignore: all-zero)  */
} ffnn_cli_table_options;

enum { FFNN_CLI_OPT_LABELS = 600, FFNN_CLI_OPT_HEADER, FFNN_CLI_OPT_DELIMITER,
       FFNN_CLI_OPT_TARGET, FFNN_CLI_OPT_FEATURES, FFNN_CLI_OPT_SKIP_ROWS,
       FFNN_CLI_OPT_IGNORE, FFNN_CLI_OPT_CATEGORICAL, FFNN_CLI_OPT_NA_VALUES,
       FFNN_CLI_OPT_MISSING, FFNN_CLI_OPT_DROP_MISSING_TARGET, FFNN_CLI_OPT_UNKNOWN };

#define FFNN_CLI_TABLE_LONGOPTS                                                       \
    {"labels", required_argument, NULL, FFNN_CLI_OPT_LABELS},                         \
        {"header", required_argument, NULL, FFNN_CLI_OPT_HEADER},                     \
        {"delimiter", required_argument, NULL, FFNN_CLI_OPT_DELIMITER},               \
        {"target", required_argument, NULL, FFNN_CLI_OPT_TARGET},                     \
        {"features", required_argument, NULL, FFNN_CLI_OPT_FEATURES},                 \
        {"skip-rows", required_argument, NULL, FFNN_CLI_OPT_SKIP_ROWS},               \
        {"ignore", required_argument, NULL, FFNN_CLI_OPT_IGNORE},                     \
        {"categorical", required_argument, NULL, FFNN_CLI_OPT_CATEGORICAL},           \
        {"na-values", required_argument, NULL, FFNN_CLI_OPT_NA_VALUES},               \
        {"missing", required_argument, NULL, FFNN_CLI_OPT_MISSING},                   \
        {"drop-missing-target", no_argument, NULL, FFNN_CLI_OPT_DROP_MISSING_TARGET}, \
        {"unknown-category", required_argument, NULL, FFNN_CLI_OPT_UNKNOWN}

/* The help text of those options (for the commands' usage). */
#define FFNN_CLI_TABLE_USAGE                                                               \
    "  --labels FILE     with --data X.npy: the labels or targets (.npy; integer\n"        \
    "                    dtypes: class labels, float: regression targets)\n"               \
    "  --header auto|yes|no  whether a CSV file's first row names the columns\n"           \
    "                    (auto, the default: when a column holds text in the first\n"      \
    "                    row and a number in the second)\n"                                \
    "  --delimiter C     the field separator: a character, 'tab' or 'comma'\n"             \
    "                    (default: tab for .tsv[.gz], else comma)\n"                       \
    "  --target COLS     the target column(s): header names or 0-based indices\n"          \
    "                    (-1 the last), comma-separated; default the last column.\n"       \
    "                    Several columns: regression (--loss mse)\n"                       \
    "  --features COLS   the feature columns (default: every other column)\n"             \
    "  --skip-rows N     lines to skip before the header or first row (default 0)\n"        \
    "  --ignore COLS     columns to drop (ids, dates, free text)\n"                       \
    "  --categorical COLS  feature columns of integer codes read as categories (a\n"      \
    "                    column holding text is categorical anyway): one-hot with\n"      \
    "                    the training split's levels, kept in the model\n"                \
    "  --na-values LIST  texts of a missing cell besides an empty one (default\n"         \
    "                    NA,N/A,NaN,nan,null,NULL,None)\n"                                \
    "  --missing impute|error  missing feature cells: filled with the training\n"         \
    "                    split's median (+ a 0/1 indicator input) or category\n"          \
    "                    'missing' (default), or refused\n"                               \
    "  --drop-missing-target  drop rows whose target is missing (else an error)\n"         \
    "  --unknown-category ignore|error  a category the model has not seen: an\n"          \
    "                    all-zero one-hot, counted in a note (default), or an error\n"

/* 1 when c is one of the table options (handled: *rc 0, or 2 with the message). */
int ffnn_cli_table_option(const char *cmd, ffnn_cli_table_options *o, int c, const char *arg,
                          int *rc);

/* 1 when path names a tabular file: .csv, .tsv, .txt (each maybe .gz) or .npy. */
int ffnn_cli_is_table(const char *path);

/* Load path (CSV/TSV or NPY with o->labels) as a data set: class labels
 * (regression 0; mapped to class_names [class_count] when given) or float targets
 * (regression 1). 0, or 1 with the message printed. */
int ffnn_cli_load_table(const char *cmd, const char *opt, const char *path,
                        const ffnn_cli_table_options *o, int regression,
                        const char *const *class_names, int class_count, ffnn_dataset **out);

/* The same for a model's data (eval, predict; model NULL: training). A model
 * with a table encoding reads its columns (by name) as it was trained, then the
 * rows are encoded (median fills, indicators, one-hot; unseen categories counted
 * on stderr, or refused with --unknown-category error). Training reads text
 * columns as categories and missing cells as NaN (--missing error: refused), to
 * be encoded by ffnn_cli_encode_splits. 0, or 1 with the message printed. */
int ffnn_cli_load_table_for(const char *cmd, const char *opt, const char *path,
                            const ffnn_cli_table_options *o, int regression,
                            const char *const *class_names, int class_count,
                            const ffnn_model *model, ffnn_dataset **out);

/* Training: when the raw table of sets[0] (the training split) has categorical
 * columns or missing cells, fit the encoding on sets[0] (columns with more than
 * emb->max_one_hot levels, or named in emb->dims, embedded; emb NULL: the
 * defaults) and replace each of sets[0..n) (NULL entries skipped) by its
 * encoding; a line saying what was filled, one-hot encoded and embedded goes to
 * info. 0, or 1 with the message printed. */
int ffnn_cli_encode_splits(const char *cmd, ffnn_dataset **sets, int n, FILE *info,
                           const ffnn_cli_embedding_options *emb);

/* The default of --max-one-hot. */
enum { FFNN_CLI_MAX_ONE_HOT = 32 };

/* The embedding layer token the encoded training set needs ("embed100x21_..."),
 * into buf [size]; "" when nothing is embedded (or no table). */
void ffnn_cli_embedding_token(const ffnn_dataset *train, char *buf, size_t size);

/* 1 when model keeps a table encoding (its inputs are a table's columns). */
int ffnn_cli_model_has_table(const ffnn_model *model);

/* ffnn info: the model's table encoding, one line per column (nothing without one). */
void ffnn_cli_print_table(const ffnn_model *model, FILE *out);

/* The fitted encoding of a data set (its JSON text) into model: 0, or 1. */
int ffnn_cli_keep_table(const char *cmd, ffnn_model *model, const ffnn_dataset *train);

#endif
