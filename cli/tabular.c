/* tabular.c - tabular files on the command line (tabular.h). */
#define _POSIX_C_SOURCE 200809L
#include "tabular.h"

#include <stdio.h>
#include <string.h>

#include "options.h"

int ffnn_cli_table_option(const char *cmd, ffnn_cli_table_options *o, int c, const char *arg,
                          int *rc)
{
    long long v;
    *rc = 0;
    switch (c) {
    case FFNN_CLI_OPT_LABELS: o->labels = arg; return 1;
    case FFNN_CLI_OPT_TARGET: o->csv.target = arg; return 1;
    case FFNN_CLI_OPT_FEATURES: o->csv.features = arg; return 1;
    case FFNN_CLI_OPT_HEADER:
        if (!strcmp(arg, "auto") || !strcmp(arg, "yes") || !strcmp(arg, "no"))
            o->csv.header = !strcmp(arg, "auto") ? FFNN_CSV_HEADER_AUTO
                            : !strcmp(arg, "yes") ? FFNN_CSV_HEADER_YES : FFNN_CSV_HEADER_NO;
        else
            *rc = 2, fprintf(stderr, "%s: --header expects auto, yes or no, found '%s'\n", cmd,
                             arg);
        return 1;
    case FFNN_CLI_OPT_DELIMITER:
        if (!strcmp(arg, "tab") || !strcmp(arg, "\\t"))
            o->csv.delimiter = '\t';
        else if (!strcmp(arg, "comma"))
            o->csv.delimiter = ',';
        else if (strlen(arg) == 1 && arg[0] != '"' && arg[0] != '\n' && arg[0] != '\r')
            o->csv.delimiter = arg[0];
        else
            *rc = 2, fprintf(stderr, "%s: --delimiter expects one character (not a quote or a "
                             "line end), 'tab' or 'comma', found '%s'\n", cmd, arg);
        return 1;
    case FFNN_CLI_OPT_SKIP_ROWS:
        if ((*rc = ffnn_cli_int(cmd, "--skip-rows", arg, 0, INT32_MAX, &v)) == 0)
            o->csv.skip_rows = (size_t)v;
        return 1;
    default: return 0;
    }
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

int ffnn_cli_is_table(const char *path)
{
    static const char *const tails[] = {".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz",
                                        ".txt.gz", ".npy", ".npz"};
    for (size_t i = 0; path && i < sizeof tails / sizeof tails[0]; i++)
        if (ends_with(path, tails[i]))
            return 1;
    return 0;
}

int ffnn_cli_load_table(const char *cmd, const char *opt, const char *path,
                        const ffnn_cli_table_options *o, int regression,
                        const char *const *class_names, int class_count, ffnn_dataset **out)
{
    ffnn_status st;
    char what[64];
    snprintf(what, sizeof what, "%s", opt);
    if (ends_with(path, ".npy") || ends_with(path, ".npz")) {
        st = ffnn_dataset_load_npy(path, o->labels, out);
    } else {
        if (o->labels) {
            fprintf(stderr, "%s: --labels goes with --data X.npy; a CSV file holds its labels "
                    "(--target)\n", cmd);
            return 1;
        }
        ffnn_csv_options csv = o->csv;
        csv.regression = regression;
        csv.class_names = class_names;
        csv.class_count = class_count;
        st = ffnn_dataset_load_csv(path, &csv, out);
    }
    return st == FFNN_OK ? 0 : ffnn_cli_fail(cmd, what);
}
