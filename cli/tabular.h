/* tabular.h - tabular files (CSV, TSV, NPY) on the command line: the options
 * train, eval and predict share (--labels, --header, --delimiter, --target,
 * --features, --skip-rows) and the loading through the library's readers. */
#ifndef FFNN_CLI_TABULAR_H
#define FFNN_CLI_TABULAR_H

#include <getopt.h>

#include "ffnn.h"

typedef struct ffnn_cli_table_options {
    const char *labels;   /* --labels y.npy (with --data X.npy), or NULL        */
    ffnn_csv_options csv; /* --header, --delimiter, --target, --features, --skip-rows */
} ffnn_cli_table_options;

enum { FFNN_CLI_OPT_LABELS = 600, FFNN_CLI_OPT_HEADER, FFNN_CLI_OPT_DELIMITER,
       FFNN_CLI_OPT_TARGET, FFNN_CLI_OPT_FEATURES, FFNN_CLI_OPT_SKIP_ROWS };

#define FFNN_CLI_TABLE_LONGOPTS                                                       \
    {"labels", required_argument, NULL, FFNN_CLI_OPT_LABELS},                         \
        {"header", required_argument, NULL, FFNN_CLI_OPT_HEADER},                     \
        {"delimiter", required_argument, NULL, FFNN_CLI_OPT_DELIMITER},               \
        {"target", required_argument, NULL, FFNN_CLI_OPT_TARGET},                     \
        {"features", required_argument, NULL, FFNN_CLI_OPT_FEATURES},                 \
        {"skip-rows", required_argument, NULL, FFNN_CLI_OPT_SKIP_ROWS}

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
    "  --skip-rows N     lines to skip before the header or first row (default 0)\n"

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

#endif
