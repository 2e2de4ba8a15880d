/* tabular.c - tabular files on the command line (tabular.h). */
#define _POSIX_C_SOURCE 200809L
#include "tabular.h"

#include <stdio.h>
#include <stdlib.h>
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
    case FFNN_CLI_OPT_IGNORE: o->csv.ignore = arg; return 1;
    case FFNN_CLI_OPT_CATEGORICAL: o->csv.categorical = arg; return 1;
    case FFNN_CLI_OPT_NA_VALUES: o->csv.na_values = arg; return 1;
    case FFNN_CLI_OPT_DROP_MISSING_TARGET: o->csv.drop_missing_target = 1; return 1;
    case FFNN_CLI_OPT_MISSING:
    case FFNN_CLI_OPT_UNKNOWN: {
        const char *keep = c == FFNN_CLI_OPT_MISSING ? "impute" : "ignore";
        if (strcmp(arg, keep) && strcmp(arg, "error"))
            *rc = 2, fprintf(stderr, "%s: --%s expects %s or error, found '%s'\n", cmd,
                             c == FFNN_CLI_OPT_MISSING ? "missing" : "unknown-category", keep,
                             arg);
        else if (c == FFNN_CLI_OPT_MISSING)
            o->missing_error = strcmp(arg, "error") == 0;
        else
            o->unknown_error = strcmp(arg, "error") == 0;
        return 1;
    }
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

/* The model's columns as --features and --categorical lists (*names, *cats
 * malloc'd), its encoding into *enc. 0, or 1 with the message printed. */
static int model_columns(const char *cmd, const ffnn_model *m, ffnn_table **enc, char **names,
                         char **cats)
{
    size_t len = 1;
    if (ffnn_model_table(m, enc) != FFNN_OK || !*enc)
        return ffnn_cli_fail(cmd, "the model's table encoding");
    size_t n = ffnn_table_column_count(*enc);
    for (size_t i = 0; i < n; i++)
        len += strlen(ffnn_table_column_name(*enc, i)) + 1;
    *names = calloc(len, 1);
    *cats = calloc(len, 1);
    if (!*names || !*cats)
        return fprintf(stderr, "%s: out of memory\n", cmd), 1;
    for (size_t i = 0; i < n; i++) {
        const char *name = ffnn_table_column_name(*enc, i);
        int categorical = ffnn_table_column_kind(*enc, i) == FFNN_TABLE_CATEGORICAL;
        char *dst = categorical ? *cats : *names;
        if (*dst)
            strcat(dst, ",");
        strcat(dst, name);
        if (categorical) { /* --features lists every column in order */
            if (**names)
                strcat(*names, ",");
            strcat(*names, name);
        }
    }
    return 0;
}

int ffnn_cli_load_table_for(const char *cmd, const char *opt, const char *path,
                            const ffnn_cli_table_options *o, int regression,
                            const char *const *class_names, int class_count,
                            const ffnn_model *model, ffnn_dataset **out)
{
    ffnn_cli_table_options t = *o;
    if (!model) { /* training: text columns are categories, missing cells NaN */
        t.csv.text_categories = 1;
        t.csv.missing = !o->missing_error;
        return ffnn_cli_load_table(cmd, opt, path, &t, regression, class_names, class_count,
                                   out);
    }
    if (!ffnn_cli_model_has_table(model))
        return ffnn_cli_load_table(cmd, opt, path, o, regression, class_names, class_count, out);
    ffnn_table *enc = NULL;
    char *names = NULL, *cats = NULL;
    ffnn_dataset *raw = NULL;
    int rc = model_columns(cmd, model, &enc, &names, &cats);
    if (!rc) {
        t.csv.features = names;
        t.csv.categorical = *cats ? cats : NULL;
        t.csv.ignore = NULL;
        t.csv.text_categories = 0;
        t.csv.missing = 1;
        rc = ffnn_cli_load_table(cmd, opt, path, &t, regression, class_names, class_count, &raw);
    }
    size_t unseen = 0;
    if (!rc && ffnn_table_encode(enc, raw, &unseen, out) != FFNN_OK)
        rc = ffnn_cli_fail(cmd, opt);
    if (!rc && unseen && o->unknown_error) {
        fprintf(stderr, "%s: %s %s: %zu cell%s of a category the model was not trained on "
                "(--unknown-category ignore: an all-zero one-hot)\n", cmd, opt, path, unseen,
                unseen == 1 ? "" : "s");
        ffnn_dataset_free(*out);
        *out = NULL;
        rc = 1;
    } else if (!rc && unseen) {
        fprintf(stderr, "note: %s %s: %zu cell%s of a category the model was not trained on: "
                "encoded as all zeros (--unknown-category error refuses them)\n", opt, path,
                unseen, unseen == 1 ? "" : "s");
    }
    ffnn_dataset_free(raw);
    ffnn_table_free(enc);
    free(names);
    free(cats);
    return rc;
}

/* "filled 12 cells of age (median 38) ..." of the fitted table into info. */
static void describe_encoding(const ffnn_table *raw, const ffnn_table *t, size_t rows, FILE *info)
{
    size_t filled = 0, cats = 0, n = ffnn_table_column_count(t);
    size_t dropped = ffnn_table_dropped(raw);
    fprintf(info, "table: %zu columns -> %zu inputs", n, ffnn_table_width(t));
    for (size_t i = 0; i < n; i++)
        cats += ffnn_table_column_kind(t, i) == FFNN_TABLE_CATEGORICAL;
    size_t embedded = 0;
    for (size_t i = 0; i < n; i++)
        embedded += ffnn_table_embedding_dim(t, i) > 0;
    if (cats > embedded) {
        fprintf(info, "; one-hot:");
        for (size_t i = 0, k = 0; i < n; i++)
            if (ffnn_table_column_kind(t, i) == FFNN_TABLE_CATEGORICAL &&
                !ffnn_table_embedding_dim(t, i))
                fprintf(info, "%s %s (%zu)", k++ ? "," : "", ffnn_table_column_name(t, i),
                        ffnn_table_level_count(t, i));
    }
    if (embedded) {
        fprintf(info, "; embedded:");
        for (size_t i = 0, k = 0; i < n; i++)
            if (ffnn_table_embedding_dim(t, i))
                fprintf(info, "%s %s (%zu levels, dim %zu)", k++ ? "," : "",
                        ffnn_table_column_name(t, i), ffnn_table_level_count(t, i),
                        ffnn_table_embedding_dim(t, i));
    }
    for (size_t i = 0; i < n; i++)
        filled += ffnn_table_missing(t, i);
    if (filled) {
        fprintf(info, "; filled %zu missing cell%s of %zu training rows:", filled,
                filled == 1 ? "" : "s", rows);
        for (size_t i = 0, k = 0; i < n; i++) {
            const char *name = ffnn_table_column_name(t, i);
            size_t missing = ffnn_table_missing(t, i);
            if (!missing)
                continue;
            if (ffnn_table_column_kind(t, i) == FFNN_TABLE_CATEGORICAL)
                fprintf(info, "%s %s %zu ('missing')", k++ ? "," : "", name, missing);
            else
                fprintf(info, "%s %s %zu (median %g, + indicator)", k++ ? "," : "", name,
                        missing, (double)ffnn_table_median(t, i));
        }
    }
    if (dropped)
        fprintf(info, "; %zu row%s dropped (missing target)", dropped, dropped == 1 ? "" : "s");
    fprintf(info, "\n");
}

/* --embedding-dim COL:D,... against the raw table's columns into dims [columns]
 * (0: not named). 0, or 2 with the message printed. */
static int embedding_dims(const char *cmd, const char *spec, const ffnn_table *raw,
                          size_t *dims)
{
    const size_t n = ffnn_table_column_count(raw);
    for (const char *at = spec; at && *at;) {
        const char *end = strchr(at, ','), *colon;
        size_t len = end ? (size_t)(end - at) : strlen(at);
        colon = memchr(at, ':', len);
        char *stop = NULL;
        long long d = colon ? strtoll(colon + 1, &stop, 10) : 0;
        if (!colon || colon == at || stop != at + len || d < 1 || d > (1 << 24)) {
            fprintf(stderr, "%s: --embedding-dim: '%.*s': expected COLUMN:DIM, DIM an integer "
                    "in [1, 2^24], e.g. city:8\n", cmd, (int)len, at);
            return 2;
        }
        size_t i = 0;
        while (i < n && (strlen(ffnn_table_column_name(raw, i)) != (size_t)(colon - at) ||
                         strncmp(ffnn_table_column_name(raw, i), at, (size_t)(colon - at))))
            i++;
        if (i == n || ffnn_table_column_kind(raw, i) != FFNN_TABLE_CATEGORICAL) {
            fprintf(stderr, "%s: --embedding-dim: '%.*s' is %s\n", cmd, (int)(colon - at), at,
                    i == n ? "not a feature column of the data"
                           : "a numeric column (only categorical columns are embedded: "
                             "--categorical makes integer codes one)");
            return 2;
        }
        dims[i] = (size_t)d;
        at = end ? end + 1 : NULL;
    }
    return 0;
}

void ffnn_cli_embedding_token(const ffnn_dataset *train, char *buf, size_t size)
{
    const ffnn_table *t = ffnn_dataset_table(train);
    if (size)
        buf[0] = '\0';
    if (t && ffnn_table_is_fitted(t) && ffnn_table_embedding_arch(t, NULL, 0) < size)
        ffnn_table_embedding_arch(t, buf, size);
}

int ffnn_cli_encode_splits(const char *cmd, ffnn_dataset **sets, int n, FILE *info,
                           const ffnn_cli_embedding_options *emb)
{
    const ffnn_table *raw = ffnn_dataset_table(sets[0]);
    for (int i = 1; (!raw || !ffnn_table_needs_encoding(raw)) && i < n; i++)
        if (sets[i] && ffnn_table_needs_encoding(ffnn_dataset_table(sets[i]))) {
            fprintf(stderr, "%s: the test data has text or missing cells that the training "
                    "data lacks (nothing learnt to encode them with): fill them, or train on "
                    "data that has them\n", cmd);
            return 1;
        }
    if (!raw || ffnn_table_is_fitted(raw))
        return 0;
    if (!ffnn_table_needs_encoding(raw)) {
        size_t dropped = ffnn_table_dropped(raw);
        if (dropped && info)
            fprintf(info, "table: %zu row%s dropped (missing target)\n", dropped,
                    dropped == 1 ? "" : "s");
        return 0;
    }
    ffnn_table *enc = NULL;
    const size_t columns = ffnn_table_column_count(raw);
    size_t *dims = calloc(columns ? columns : 1, sizeof *dims);
    const long long max = emb && emb->max_one_hot >= 0 ? emb->max_one_hot : FFNN_CLI_MAX_ONE_HOT;
    if (!dims)
        return fprintf(stderr, "%s: out of memory\n", cmd), 1;
    if (emb && emb->dims && embedding_dims(cmd, emb->dims, raw, dims) != 0) {
        free(dims);
        return 1;
    }
    ffnn_status fst = ffnn_table_fit_embedding(sets[0], (size_t)max, dims, &enc);
    free(dims);
    if (fst != FFNN_OK)
        return ffnn_cli_fail(cmd, "--data");
    if (info)
        describe_encoding(raw, enc, ffnn_dataset_count(sets[0]), info);
    int rc = 0;
    for (int i = 0; !rc && i < n; i++) {
        ffnn_dataset *e = NULL;
        if (!sets[i])
            continue;
        if (ffnn_table_encode(enc, sets[i], NULL, &e) != FFNN_OK) {
            rc = ffnn_cli_fail(cmd, "--data");
            break;
        }
        ffnn_dataset_free(sets[i]);
        sets[i] = e;
    }
    ffnn_table_free(enc);
    return rc;
}

int ffnn_cli_keep_table(const char *cmd, ffnn_model *model, const ffnn_dataset *train)
{
    const ffnn_table *t = ffnn_dataset_table(train);
    /* a network of another input width: the training setup that follows names
     * the mismatch in the user's terms (inputs against features) */
    if (!t || !ffnn_table_is_fitted(t) || ffnn_table_width(t) != ffnn_model_input_size(model))
        return 0;
    return ffnn_model_set_table(model, t) == FFNN_OK ? 0
                                                      : ffnn_cli_fail(cmd, "the table encoding");
}

int ffnn_cli_model_has_table(const ffnn_model *model)
{
    ffnn_table *t = NULL;
    int has = model && ffnn_model_table(model, &t) == FFNN_OK && t;
    ffnn_table_free(t);
    return has;
}

void ffnn_cli_print_table(const ffnn_model *model, FILE *out)
{
    ffnn_table *t = NULL;
    if (!model || ffnn_model_table(model, &t) != FFNN_OK || !t)
        return;
    size_t n = ffnn_table_column_count(t);
    fprintf(out, "table: %zu columns -> %zu inputs (metadata \"table\")\n", n,
            ffnn_table_width(t));
    for (size_t i = 0; i < n; i++) {
        size_t levels = ffnn_table_level_count(t, i);
        char name[160];
        ffnn_escape_controls(ffnn_table_column_name(t, i), name, sizeof name);
        if (ffnn_table_column_kind(t, i) != FFNN_TABLE_CATEGORICAL) {
            fprintf(out, "  %-14s numeric, missing -> %g%s\n", name,
                    (double)ffnn_table_median(t, i),
                    ffnn_table_indicator(t, i) ? " (+ an indicator input)" : "");
            continue;
        }
        if (ffnn_table_embedding_dim(t, i))
            fprintf(out, "  %-14s categorical, embedded (dim %zu, input: its code), %zu levels:",
                    name, ffnn_table_embedding_dim(t, i), levels);
        else
            fprintf(out, "  %-14s categorical, %zu levels:", name, levels);
        for (size_t k = 0; k < levels && k < 8; k++) {
            char level[160];
            ffnn_escape_controls(ffnn_table_level(t, i, k), level, sizeof level);
            fprintf(out, "%s '%s'", k ? "," : "", level);
        }
        fprintf(out, "%s\n", levels > 8 ? ", ..." : "");
    }
    ffnn_table_free(t);
}
