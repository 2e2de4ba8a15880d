/* csv_columns.c - which columns of a CSV file are targets, features, ignored
 * or categorical, and which texts are missing cells (csv_loader.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/csv_loader.h"
#include "data/dataset.h"

static const char *const csv_default_na = "NA,N/A,NaN,nan,null,NULL,None";

/* ------------------------------------------------------------ columns */

/* The column name or index tok (NUL-terminated) -> *col. */
static ffnn_status csv_column(const csv_loader *L, const char *what, const char *tok,
                              size_t *col)
{
    char shown[CSV_SHOW + 8], *end;
    for (size_t j = 0; L->names && j < L->ncols; j++)
        if (strcmp(L->names[j], tok) == 0) {
            *col = j;
            return FFNN_OK;
        }
    errno = 0;
    long long v = strtoll(tok, &end, 10);
    if (*tok && *end == '\0' && errno == 0 && v < (long long)L->ncols &&
        v >= -(long long)L->ncols) {
        *col = v < 0 ? (size_t)((long long)L->ncols + v) : (size_t)v;
        return FFNN_OK;
    }
    ffnn_printable(tok, strlen(tok), CSV_SHOW, shown, sizeof shown);
    char names[256] = "";
    for (size_t j = 0, k = 0; L->names && j < L->ncols && k + 48 < sizeof names; j++) {
        char one[CSV_SHOW + 8];
        ffnn_printable(L->names[j], strlen(L->names[j]), 20, one, sizeof one);
        k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", j ? ", " : "", one);
        if (j + 1 < L->ncols && k + 48 >= sizeof names)
            snprintf(names + k, sizeof names - k, ", ...");
    }
    return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                     "%s: %s column '%s': expected a header name or an index in [-%zu, %zu]%s%s",
                     L->path, what, shown, L->ncols, L->ncols - 1,
                     L->names ? "; the columns are " : " (the file has no header)", names);
}

/* A comma-separated list of columns -> *out [*n] (allocated). */
static ffnn_status csv_column_list(const csv_loader *L, const char *what, const char *spec,
                                   size_t **out, size_t *n)
{
    size_t len = strlen(spec), k = 0;
    char *copy = malloc(len + 1);
    size_t *cols = malloc((len / 2 + 1) * sizeof *cols);
    ffnn_status st = FFNN_OK;
    if (!copy || !cols) {
        free(copy);
        free(cols);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(copy, spec, len + 1);
    for (char *tok = copy, *next; tok && *spec && st == FFNN_OK; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        st = csv_column(L, what, tok, &cols[k]);
        for (size_t i = 0; st == FFNN_OK && i < k; i++)
            if (cols[i] == cols[k])
                st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: %s column %zu given twice",
                               L->path, what, cols[k]);
        k++;
    }
    free(copy);
    if (st != FFNN_OK) {
        free(cols);
        return st;
    }
    *out = cols;
    *n = k;
    return FFNN_OK;
}

/* Whether column j is in list [n]. */
static int csv_in(const size_t *list, size_t n, size_t j)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == j)
            return 1;
    return 0;
}

/* Targets, features (minus --ignore), the roles of the columns. */
ffnn_status csv_resolve_columns(csv_loader *L)
{
    ffnn_status st;
    size_t *ignore = NULL, nignore = 0;
    const ffnn_csv_options *o = &L->o;
    if (o->target && !*o->target) { /* no target: every label 0 */
        L->ntarget = 0;
    } else if (o->target) {
        if ((st = csv_column_list(L, "target", o->target, &L->target, &L->ntarget)) != FFNN_OK)
            return st;
    } else {
        if (!(L->target = malloc(sizeof *L->target)))
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
        L->target[0] = L->ncols - 1;
        L->ntarget = 1;
    }
    if (!o->regression && L->ntarget > 1)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: expected one target column of class "
                         "labels, found %zu (several columns: regression)", L->path,
                         L->ntarget);
    if (o->ignore && (st = csv_column_list(L, "ignored", o->ignore, &ignore, &nignore)) != FFNN_OK)
        return st;
    for (size_t t = 0; t < L->ntarget; t++)
        if (csv_in(ignore, nignore, L->target[t])) {
            free(ignore);
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: column %zu is both a target and "
                             "ignored (--ignore)", L->path, L->target[t]);
        }
    if (o->features) {
        st = csv_column_list(L, "feature", o->features, &L->feature, &L->nfeature);
    } else if (!(L->feature = malloc(L->ncols * sizeof *L->feature))) {
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    } else {
        st = FFNN_OK;
        for (size_t j = 0; j < L->ncols; j++)
            if (!csv_in(L->target, L->ntarget, j) && !csv_in(ignore, nignore, j))
                L->feature[L->nfeature++] = j;
    }
    for (size_t i = 0; st == FFNN_OK && o->features && i < L->nfeature; i++)
        if (csv_in(ignore, nignore, L->feature[i]))
            st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: column %zu is both a feature and "
                           "ignored (--ignore)", L->path, L->feature[i]);
    free(ignore);
    if (st != FFNN_OK)
        return st;
    if (L->nfeature == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: expected at least one feature column, "
                         "found only the %zu target column%s%s", L->path, L->ntarget,
                         L->ntarget == 1 ? "" : "s", nignore ? " and ignored ones" : "");
    for (size_t i = 0; i < L->nfeature; i++) {
        L->role[L->feature[i]] = ROLE_FEATURE;
        L->index[L->feature[i]] = i;
    }
    for (size_t t = 0; t < L->ntarget; t++) {
        if (L->role[L->target[t]])
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: column %zu is both a feature and "
                             "a target", L->path, L->target[t]);
        L->role[L->target[t]] = ROLE_TARGET;
        L->index[L->target[t]] = t;
        L->text[L->target[t]] = !o->regression;
    }
    return FFNN_OK;
}

/* The texts of a missing cell: o->na_values (or the default), split. */
ffnn_status csv_na_values(csv_loader *L)
{
    const char *spec = L->o.na_values ? L->o.na_values : csv_default_na;
    size_t len = strlen(spec);
    if (!(L->na_copy = malloc(len + 1)) || !(L->na = malloc((len / 2 + 2) * sizeof *L->na)))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    memcpy(L->na_copy, spec, len + 1);
    for (char *tok = L->na_copy, *next; tok && *spec; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        if (*tok)
            L->na[L->nna++] = tok;
    }
    return FFNN_OK;
}

/* Which feature columns hold text: --categorical, and (text_categories) a
 * column with a present non-number among the first rows (fields [nrows][ncols]). */
ffnn_status csv_find_text(csv_loader *L, csv_field *const *rows, size_t nrows)
{
    ffnn_status st;
    size_t *cat = NULL, ncat = 0;
    if (L->o.categorical &&
        (st = csv_column_list(L, "categorical", L->o.categorical, &cat, &ncat)) != FFNN_OK)
        return st;
    for (size_t i = 0; i < ncat; i++)
        if (L->role[cat[i]] != ROLE_FEATURE) {
            st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: categorical column %zu is not a "
                           "feature (a target or ignored)", L->path, cat[i]);
            free(cat);
            return st;
        }
    for (size_t i = 0; i < ncat; i++)
        L->text[cat[i]] = 1;
    free(cat);
    for (size_t j = 0; L->o.text_categories && j < L->ncols; j++)
        for (size_t r = 0; L->role[j] == ROLE_FEATURE && !L->text[j] && r < nrows; r++)
            if (rows[r] && !csv_is_missing(L, &rows[r][j]) &&
                !csv_number(rows[r][j].s, rows[r][j].len, NULL))
                L->text[j] = 1;
    for (size_t j = 0; j < L->ncols; j++)
        if (L->text[j])
            L->text_slot[j] = L->ntext++;
    return FFNN_OK;
}

