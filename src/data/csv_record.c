/*
 * csv_record.c - one record of a CSV/TSV file into a row (csv_loader.h): the
 * tokenizer (csv_split: RFC 4180 quotes, fields cut in place), missing cells and
 * numbers of a field, the one-pass path of a plain numeric record
 * (csv_fast_record) and the cell rules of csv_parse_record. csv.c hands out the
 * records of a batch to the threads and numbers their texts in record order.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "core/error.h"
#include "data/csv.h"
#include "data/csv_loader.h"
#include "data/dataset.h"

/* ------------------------------------------------------------ tokens */

/* Split the record [b, e) (line) into fields [cap]: quoted fields unescaped in
 * place, every field NUL-terminated where its delimiter was. *count gets the
 * number of fields (counted past cap: a ragged row). */
ffnn_status csv_split(const csv_loader *L, char *b, char *e, size_t line,
                      csv_field *fields, size_t cap, size_t *count)
{
    size_t n = 0;
    char *p = b;
    if (memchr(b, '\0', (size_t)(e - b))) {
        size_t col = 1;
        for (char *q = b; *q; q++)
            col += *q == L->delim;
        return csv_fail(FFNN_ERR_FORMAT, L, line, col, "expected text, found a NUL byte");
    }
    for (;;) {
        char *start = p, *end;
        size_t fline = line;
        if (p < e && *p == '"') {
            char *w = p;
            for (p++;; p++) {
                if (p >= e)
                    return csv_fail(FFNN_ERR_FORMAT, L, fline, n + 1, "expected a closing "
                                    "quote for the field opened here, found the end of the "
                                    "file");
                if (*p == '"') {
                    if (p + 1 < e && p[1] == '"') {
                        *w++ = '"';
                        p++;
                        continue;
                    }
                    p++;
                    break;
                }
                if (*p == '\n')
                    line++;
                *w++ = *p;
            }
            end = w;
            if (p < e && *p == '\r' && p + 1 == e)
                p++;
            if (p < e && *p != L->delim) {
                char shown[8];
                ffnn_printable(p, 1, 1, shown, sizeof shown);
                return csv_fail(FFNN_ERR_FORMAT, L, line, n + 1, "expected a delimiter or the "
                                "end of the line after a closing quote, found '%s'", shown);
            }
        } else {
            const char delim = L->delim; /* fields are short: a loop beats memchr */
            while (p < e && *p != delim)
                p++;
            end = p;
            if (p >= e && end > start && end[-1] == '\r')
                end--;
        }
        if (n < cap)
            fields[n] = (csv_field){start, (size_t)(end - start), fline};
        n++;
        int last = p >= e;
        *end = '\0'; /* over the delimiter, '\r', '\n' or the buffer's spare byte */
        if (last)
            break;
        p++;
    }
    *count = n;
    return FFNN_OK;
}

/* s[0..*n) without the spaces around it. */
static const char *csv_trim(const char *s, size_t *n)
{
    while (*n > 0 && (*s == ' ' || *s == '\t'))
        s++, (*n)--;
    while (*n > 0 && (s[*n - 1] == ' ' || s[*n - 1] == '\t'))
        (*n)--;
    return s;
}

/* 1 when the field is a missing value: empty (or blank), or one of na. */
int csv_is_missing(const csv_loader *L, const csv_field *f)
{
    size_t n = f->len;
    const char *s = csv_trim(f->s, &n);
    if (n == 0)
        return 1;
    for (size_t i = 0; i < L->nna; i++)
        if (strncmp(L->na[i], s, n) == 0 && L->na[i][n] == '\0')
            return 1;
    return 0;
}

int csv_number(const char *s, size_t n, float *out)
{
    float v;
    s = csv_trim(s, &n);
    if (n == 0 || !ffnn_csv_parse_float(s, n, &v))
        return 0;
    if (out)
        *out = v;
    return 1;
}

/* ------------------------------------------------------------ records */

/* The record [b, e) as slot i of a batch (row `row`) in one pass, when every
 * field is unquoted and holds no NUL, each number column a number with no spaces
 * around it and each text column a text that is not missing: numbers into the
 * matrix (csv_scan_float where they lie, no copy), texts into the batch's text
 * cells; 1. 0 for any other record (some cells may be written: the general path
 * writes them all again). The buffer is only read. */
static int csv_fast_record(csv_loader *L, const char *b, const char *e, size_t i, size_t row)
{
    const char delim = L->delim;
    const size_t last = L->ncols - 1;
    if (e > b && e[-1] == '\r')
        e--; /* as csv_split: a '\r' before the line feed ends the last field */
    const char *p = b;
    if (L->ncols == 1 || !L->one_pass)
        return 0; /* a blank line may be a record or nothing: csv_split's rules */
    for (size_t j = 0;; j++) {
        const int role = L->role[j];
        if (role != ROLE_NONE && !L->text[j]) {
            float v;
            const char *q = csv_scan_float(p, e, &v);
            if (!q || (j < last ? q == e || *q != delim : q != e))
                return 0;
            if (role == ROLE_FEATURE)
                L->x[row * L->nfeature + L->index[j]] = v;
            else
                L->t[row * L->ntarget + L->index[j]] = v;
            p = q;
        } else {
            const char *s = p;
            if (p < e && *p == '"')
                return 0;
            for (; p < e && *p != delim; p++)
                if (*p == '\0')
                    return 0;
            if (j < last ? p == e : p != e)
                return 0;
            if (role != ROLE_NONE) {
                csv_field f = {(char *)s, (size_t)(p - s), 0};
                if (csv_is_missing(L, &f))
                    return 0;
                L->tptr[i * L->ntext + L->text_slot[j]] = s;
                L->tlen[i * L->ntext + L->text_slot[j]] = f.len;
            }
        }
        if (j == last)
            return 1;
        p++; /* the delimiter */
    }
}

/* Record r as slot i of a batch (row L->rows + i): numbers into the matrix,
 * texts into the batch's text cells, or skip[i] set. fields [ncols] scratch. */
ffnn_status csv_parse_record(csv_loader *L, char *buf, const csv_record *r, size_t i,
                             csv_field *fields)
{
    size_t count;
    L->skip[i] = 0;
    L->tline[i] = r->line;
    if (!L->o.regression)
        L->y[L->rows + i] = 0; /* no target column: every label 0 */
    if (csv_fast_record(L, buf + r->start, buf + r->end, i, L->rows + i))
        return FFNN_OK;
    ffnn_status st = csv_split(L, buf + r->start, buf + r->end, r->line, fields, L->ncols,
                               &count);
    if (st != FFNN_OK)
        return st;
    if (count == 1 && fields[0].s[strspn(fields[0].s, " \t")] == '\0') {
        L->skip[i] = 1; /* a blank line */
        return FFNN_OK;
    }
    if (count != L->ncols)
        return csv_fail(FFNN_ERR_FORMAT, L, r->line, 0, "expected %zu fields (as the first "
                        "row), found %zu (a ragged row)", L->ncols, count);
    size_t row = L->rows + i;
    for (size_t j = 0; j < L->ncols; j++) {
        const csv_field *f = &fields[j];
        int role = L->role[j], is_feature = role == ROLE_FEATURE;
        if (role == ROLE_NONE)
            continue;
        if (!L->text[j]) {
            float *dst = is_feature ? &L->x[row * L->nfeature + L->index[j]]
                                    : &L->t[row * L->ntarget + L->index[j]];
            if (csv_number(f->s, f->len, dst))
                continue;
            if (!csv_is_missing(L, f)) {
                char shown[CSV_SHOW + 8];
                ffnn_printable(f->s, f->len, CSV_SHOW, shown, sizeof shown);
                return csv_fail(FFNN_ERR_FORMAT, L, f->line, j + 1, "expected a decimal number "
                                "within the float32 range, found '%s'%s", shown,
                                is_feature && L->o.text_categories
                                    ? " (the column's first rows are numbers; to read it as "
                                      "categories, name it in --categorical)" : "");
            }
            if (is_feature && L->o.missing) {
                *dst = NAN;
                continue;
            }
        } else if (!csv_is_missing(L, f)) {
            L->tptr[i * L->ntext + L->text_slot[j]] = f->s;
            L->tlen[i * L->ntext + L->text_slot[j]] = f->len;
            continue;
        } else if (is_feature && L->o.missing) {
            L->tptr[i * L->ntext + L->text_slot[j]] = NULL;
            continue;
        }
        if (!is_feature && L->o.drop_missing_target) {
            L->skip[i] = 2;
            return FFNN_OK;
        }
        char shown[CSV_SHOW + 8];
        int blank = f->s[strspn(f->s, " \t")] == '\0';
        ffnn_printable(f->s, f->len, CSV_SHOW, shown, sizeof shown);
        return csv_fail(FFNN_ERR_FORMAT, L, f->line, j + 1, "expected a %s, found %s%s%s (a "
                        "missing value%s)", is_feature || L->o.regression ? "number"
                                                                          : "class label",
                        blank ? "an empty field" : "'", blank ? "" : shown, blank ? "" : "'",
                        is_feature ? "" : " of the target; to drop such rows: "
                                          "--drop-missing-target");
    }
    return FFNN_OK;
}
