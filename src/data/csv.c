/*
 * csv.c - CSV/TSV files (RFC 4180, optionally gzip'ed) as data sets
 * (ffnn_dataset_load_csv in ffnn.h has the rules).
 *
 * The whole file is read into memory through zlib (gzread reads plain files as
 * they are), then tokenised in place: a quoted field is unescaped over its own
 * bytes and every field is NUL-terminated where its delimiter was, so a field
 * stays a pointer into the buffer for as long as the buffer lives. A record is
 * parsed, checked and converted at once; the data set is allocated at the end.
 *
 * Own tokenizer rather than Debian's libcsv (3.0.3): libcsv reports fields
 * through callbacks without line numbers, so the errors this reader must give
 * (file, line, column) would need the same bookkeeping on top of it; the
 * tokenizer itself is some 80 lines, and a new library would be one more
 * dependency for every machine that builds ffnn (the device machine has none).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/error.h"
#include "data/dataset.h"

enum { CSV_SHOW = 40 }; /* bytes of a field shown in a message */

typedef struct csv_field {
    char *s;     /* NUL-terminated text (in the buffer) */
    size_t len;
    size_t line; /* line the field starts on (1-based) */
} csv_field;

typedef struct csv_parser {
    const char *path;
    char *buf;          /* [size + 1] the file                          */
    size_t size, pos;
    size_t line;        /* 1-based line at pos                          */
    char delim;
    csv_field *fields;  /* [cap] the current record                     */
    size_t count, cap;
    size_t record_line; /* line the current record starts on            */
} csv_parser;

ffnn_csv_options ffnn_csv_options_default(void)
{
    ffnn_csv_options o;
    memset(&o, 0, sizeof o);
    o.header = FFNN_CSV_HEADER_AUTO;
    return o;
}

/* ------------------------------------------------------------ reading */

/* The whole file into *buf (one spare byte at the end). */
static ffnn_status csv_read_file(const char *path, char **buf, size_t *size)
{
    gzFile f = gzopen(path, "rb");
    if (!f)
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot open: %s", path,
                         errno ? strerror(errno) : "out of memory");
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    for (;;) {
        if (!b) {
            gzclose(f);
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory after %zu bytes", path, n);
        }
        if (n == cap) {
            char *nb = cap < SIZE_MAX / 2 - 1 ? realloc(b, 2 * cap + 1) : NULL;
            if (!nb)
                free(b);
            b = nb;
            cap *= 2;
            continue;
        }
        size_t want = cap - n < (1u << 30) ? cap - n : (1u << 30);
        int got = gzread(f, b + n, (unsigned)want);
        if (got < 0) {
            int code = 0;
            const char *msg = gzerror(f, &code);
            ffnn_status st = ffnn_fail(code == Z_ERRNO ? FFNN_ERR_IO : FFNN_ERR_FORMAT,
                                       "%s: byte %zu: cannot read%s: %s", path, n,
                                       code == Z_ERRNO ? "" : " the gzip stream",
                                       code == Z_ERRNO ? strerror(errno) : msg);
            free(b);
            gzclose(f);
            return st;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    gzclose(f);
    b[n] = '\0';
    *buf = b;
    *size = n;
    return FFNN_OK;
}

/* "PATH: line L, column C ('NAME'): " + message. */
#if defined(__GNUC__)
__attribute__((format(printf, 6, 7)))
#endif
static ffnn_status csv_fail(ffnn_status st, const csv_parser *p, size_t line, size_t column,
                            const char *name, const char *fmt, ...)
{
    char msg[512], where[160] = "", shown[CSV_SHOW + 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (column && name) {
        ffnn_printable(name, strlen(name), CSV_SHOW, shown, sizeof shown);
        snprintf(where, sizeof where, ", column %zu ('%s')", column, shown);
    } else if (column) {
        snprintf(where, sizeof where, ", column %zu", column);
    }
    return ffnn_fail(st, "%s: line %zu%s: %s", p->path, line, where, msg);
}

static ffnn_status csv_push_field(csv_parser *p, char *s, size_t len, size_t line)
{
    if (p->count == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        csv_field *f = realloc(p->fields, cap * sizeof *f);
        if (!f)
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory for %zu fields", p->path,
                             cap);
        p->fields = f;
        p->cap = cap;
    }
    p->fields[p->count++] = (csv_field){s, len, line};
    return FFNN_OK;
}

/* One quoted field starting at p->pos ('"'): unescaped in place; *end is where
 * its text ends (to be NUL-terminated). */
static ffnn_status csv_quoted(csv_parser *p, size_t *len)
{
    size_t start = p->pos, w = p->pos, line0 = p->line;
    p->pos++;
    for (;;) {
        if (p->pos >= p->size)
            return csv_fail(FFNN_ERR_FORMAT, p, line0, p->count + 1, NULL,
                            "expected a closing quote for the field opened here, found the "
                            "end of the file");
        char c = p->buf[p->pos];
        if (c == '\0')
            return csv_fail(FFNN_ERR_FORMAT, p, p->line, p->count + 1, NULL,
                            "expected text, found a NUL byte");
        if (c == '"') {
            if (p->pos + 1 < p->size && p->buf[p->pos + 1] == '"') {
                p->buf[w++] = '"';
                p->pos += 2;
                continue;
            }
            p->pos++;
            break;
        }
        if (c == '\n')
            p->line++;
        p->buf[w++] = c;
        p->pos++;
    }
    *len = w - start;
    if (p->pos < p->size && p->buf[p->pos] == '\r' && p->pos + 1 < p->size &&
        p->buf[p->pos + 1] == '\n')
        p->pos++;
    if (p->pos < p->size && p->buf[p->pos] != p->delim && p->buf[p->pos] != '\n') {
        char shown[8];
        ffnn_printable(p->buf + p->pos, 1, 1, shown, sizeof shown);
        return csv_fail(FFNN_ERR_FORMAT, p, p->line, p->count + 1, NULL,
                        "expected a delimiter or the end of the line after a closing quote, "
                        "found '%s'", shown);
    }
    return FFNN_OK; /* the caller ends the text at start + len (before the closing quote) */
}

/* The next record into p->fields: 1, or 0 at the end of the file; blank lines
 * are skipped. */
static ffnn_status csv_next(csv_parser *p, int *got)
{
    ffnn_status st;
    *got = 0;
    for (;;) {
        p->count = 0;
        if (p->pos >= p->size)
            return FFNN_OK;
        p->record_line = p->line;
        for (;;) {
            size_t start = p->pos, len = 0, line = p->line;
            char term;
            if (p->buf[p->pos] == '"') {
                if ((st = csv_quoted(p, &len)) != FFNN_OK)
                    return st;
            } else {
                while (p->pos < p->size && p->buf[p->pos] != p->delim &&
                       p->buf[p->pos] != '\n') {
                    if (p->buf[p->pos] == '\0')
                        return csv_fail(FFNN_ERR_FORMAT, p, p->line, p->count + 1, NULL,
                                        "expected text, found a NUL byte");
                    p->pos++;
                }
                len = p->pos - start;
                if (len > 0 && p->buf[start + len - 1] == '\r' &&
                    (p->pos >= p->size || p->buf[p->pos] == '\n'))
                    len--;
            }
            term = p->pos < p->size ? p->buf[p->pos] : '\n';
            p->buf[start + len] = '\0'; /* over the delimiter, '\r', '\n' or the spare */
            if ((st = csv_push_field(p, p->buf + start, len, line)) != FFNN_OK)
                return st;
            p->pos++;
            if (term == '\n') {
                p->line++;
                break;
            }
        }
        /* a blank line: one empty (or all-space) unquoted field */
        if (p->count == 1 && p->fields[0].s[strspn(p->fields[0].s, " \t")] == '\0')
            continue;
        *got = 1;
        return FFNN_OK;
    }
}

/* ------------------------------------------------------------ values */

/* A decimal number in float32's range: 1, else 0. */
static int csv_number(const char *s, float *out)
{
    char *end;
    s += strspn(s, " \t");
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n == 0 || strspn(s, "0123456789+-.eE") < n)
        return 0;
    errno = 0;
    double v = strtod(s, &end);
    if ((size_t)(end - s) != n || !isfinite(v) || fabs(v) > FLT_MAX)
        return 0;
    if (out)
        *out = (float)v;
    return 1;
}

/* ------------------------------------------------------------ columns */

typedef struct csv_columns {
    size_t ncols;
    char **names;     /* [ncols] header names (into the buffer), or NULL */
    size_t *target;   /* [ntarget] column indices */
    size_t ntarget;
    size_t *feature;  /* [nfeature] */
    size_t nfeature;
} csv_columns;

/* The column name or index tok (NUL-terminated) -> *col. */
static ffnn_status csv_column(const csv_parser *p, const csv_columns *c, const char *what,
                              const char *tok, size_t *col)
{
    char shown[CSV_SHOW + 8], *end;
    for (size_t j = 0; c->names && j < c->ncols; j++)
        if (strcmp(c->names[j], tok) == 0) {
            *col = j;
            return FFNN_OK;
        }
    errno = 0;
    long long v = strtoll(tok, &end, 10);
    if (*tok && *end == '\0' && errno == 0 && v < (long long)c->ncols &&
        v >= -(long long)c->ncols) {
        *col = v < 0 ? (size_t)((long long)c->ncols + v) : (size_t)v;
        return FFNN_OK;
    }
    ffnn_printable(tok, strlen(tok), CSV_SHOW, shown, sizeof shown);
    char names[256] = "";
    for (size_t j = 0, k = 0; c->names && j < c->ncols && k + 48 < sizeof names; j++) {
        char one[CSV_SHOW + 8];
        ffnn_printable(c->names[j], strlen(c->names[j]), 20, one, sizeof one);
        k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", j ? ", " : "", one);
        if (j + 1 < c->ncols && k + 48 >= sizeof names)
            snprintf(names + k, sizeof names - k, ", ...");
    }
    return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                     "%s: %s column '%s': expected a header name or an index in [-%zu, %zu]%s%s",
                     p->path, what, shown, c->ncols, c->ncols - 1,
                     c->names ? "; the columns are " : " (the file has no header)", names);
}

/* A comma-separated list of columns -> *out [*n] (allocated). */
static ffnn_status csv_column_list(const csv_parser *p, const csv_columns *c, const char *what,
                                   const char *spec, size_t **out, size_t *n)
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
    for (char *tok = copy, *next; tok && st == FFNN_OK; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        st = csv_column(p, c, what, tok, &cols[k]);
        for (size_t i = 0; st == FFNN_OK && i < k; i++)
            if (cols[i] == cols[k])
                st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: %s column %zu given twice",
                               p->path, what, cols[k]);
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

static ffnn_status csv_resolve_columns(const csv_parser *p, const ffnn_csv_options *o,
                                       csv_columns *c)
{
    ffnn_status st;
    if (o->target && !*o->target) { /* no target: every label 0 */
        c->ntarget = 0;
    } else if (o->target) {
        if ((st = csv_column_list(p, c, "target", o->target, &c->target, &c->ntarget)) != FFNN_OK)
            return st;
    } else {
        if (!(c->target = malloc(sizeof *c->target)))
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
        c->target[0] = c->ncols - 1;
        c->ntarget = 1;
    }
    if (!o->regression && c->ntarget > 1)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: expected one target column of class "
                         "labels, found %zu (several columns: regression)", p->path,
                         c->ntarget);
    if (o->features)
        return csv_column_list(p, c, "feature", o->features, &c->feature, &c->nfeature);
    if (!(c->feature = malloc(c->ncols * sizeof *c->feature)))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    for (size_t j = 0; j < c->ncols; j++) {
        int is_target = 0;
        for (size_t t = 0; t < c->ntarget; t++)
            is_target |= c->target[t] == j;
        if (!is_target)
            c->feature[c->nfeature++] = j;
    }
    if (c->nfeature == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: expected at least one feature column, "
                         "found only the %zu target column%s", p->path, c->ntarget,
                         c->ntarget == 1 ? "" : "s");
    return FFNN_OK;
}

/* ------------------------------------------------------------ classes */

typedef struct csv_classes {
    char **name;        /* [count] into the buffer (or classes_from's names) */
    size_t count, cap;
    size_t *slot;       /* [slots] hash table of class ids + 1 (0: empty)    */
    size_t slots;
} csv_classes;

static uint64_t csv_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The id of class text s, added when new (add) - or SIZE_MAX when not found. */
static size_t csv_class_id(csv_classes *k, char *s, int add, ffnn_status *st)
{
    *st = FFNN_OK;
    if (k->count * 2 >= k->slots) { /* grow and rehash */
        size_t slots = k->slots ? 2 * k->slots : 64;
        size_t *t = calloc(slots, sizeof *t);
        if (!t) {
            *st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the classes");
            return SIZE_MAX;
        }
        for (size_t i = 0; i < k->count; i++) {
            size_t h = (size_t)csv_hash(k->name[i]) & (slots - 1);
            while (t[h])
                h = (h + 1) & (slots - 1);
            t[h] = i + 1;
        }
        free(k->slot);
        k->slot = t;
        k->slots = slots;
    }
    size_t h = (size_t)csv_hash(s) & (k->slots - 1);
    for (; k->slot[h]; h = (h + 1) & (k->slots - 1))
        if (strcmp(k->name[k->slot[h] - 1], s) == 0)
            return k->slot[h] - 1;
    if (!add)
        return SIZE_MAX;
    if (k->count == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 16;
        char **n = realloc(k->name, cap * sizeof *n);
        if (!n) {
            *st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the classes");
            return SIZE_MAX;
        }
        k->name = n;
        k->cap = cap;
    }
    k->name[k->count] = s;
    k->slot[h] = k->count + 1;
    return k->count++;
}

/* An integer label: 1 and *v, else 0. */
static int csv_integer(const char *s, long long *v)
{
    char *end;
    s += strspn(s, " \t");
    if (!*s)
        return 0;
    errno = 0;
    *v = strtoll(s, &end, 10);
    end += strspn(end, " \t");
    return *end == '\0' && errno == 0;
}

/* A class to sort: its text, its value when every class is an integer. */
typedef struct csv_sorted {
    const char *name;
    long long value;
    int numeric;  /* the same for every element: compare values first */
    size_t id;    /* order of first appearance */
} csv_sorted;

static int csv_compare_classes(const void *a, const void *b)
{
    const csv_sorted *x = a, *y = b;
    if (x->numeric && x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The classes sorted (numerically when every text is an integer, else by bytes):
 * rank[id] = the class number of first-appearance id; names in class order. */
static ffnn_status csv_sort_classes(const csv_classes *k, size_t *rank, const char **names)
{
    csv_sorted *v = malloc(k->count * sizeof *v);
    int numeric = 1;
    if (!v)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the classes");
    for (size_t i = 0; i < k->count; i++) {
        v[i].name = k->name[i];
        v[i].id = i;
        numeric &= csv_integer(k->name[i], &v[i].value);
    }
    for (size_t i = 0; i < k->count; i++)
        v[i].numeric = numeric;
    qsort(v, k->count, sizeof *v, csv_compare_classes);
    for (size_t c = 0; c < k->count; c++) {
        rank[v[c].id] = c;
        names[c] = v[c].name;
    }
    free(v);
    return FFNN_OK;
}

/* ------------------------------------------------------------ the loader */

typedef struct csv_rows {
    float *x;       /* [cap, nfeature] */
    float *t;       /* [cap, ntarget] (regression) */
    int32_t *y;     /* [cap] class ids (first appearance, or classes_from's) */
    size_t count, cap;
} csv_rows;

static ffnn_status csv_grow(csv_rows *r, const csv_columns *c, int regression)
{
    if (r->count < r->cap)
        return FFNN_OK;
    size_t cap = r->cap ? 2 * r->cap : 256;
    if (cap > SIZE_MAX / sizeof(float) / (c->nfeature + c->ntarget + 1))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "too many rows");
    float *x = realloc(r->x, cap * c->nfeature * sizeof *x);
    if (x)
        r->x = x;
    void *t = regression ? realloc(r->t, cap * c->ntarget * sizeof(float))
                         : realloc(r->y, cap * sizeof(int32_t));
    if (t) {
        if (regression)
            r->t = t;
        else
            r->y = t;
    }
    if (!x || !t)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for %zu rows", cap);
    r->cap = cap;
    return FFNN_OK;
}

static const char *csv_name(const csv_columns *c, size_t j)
{
    return c->names ? c->names[j] : NULL;
}

/* One data record of p into the rows. */
static ffnn_status csv_record(csv_parser *p, const csv_columns *c, const ffnn_csv_options *o,
                              csv_classes *k, csv_rows *r)
{
    ffnn_status st;
    if (p->count != c->ncols)
        return csv_fail(FFNN_ERR_FORMAT, p, p->record_line, 0, NULL,
                        "expected %zu fields (as the first row), found %zu (a ragged row)",
                        c->ncols, p->count);
    if ((st = csv_grow(r, c, o->regression)) != FFNN_OK)
        return st;
    if (!o->regression)
        r->y[r->count] = 0; /* no target column: every label 0 */
    for (size_t i = 0; i < c->nfeature + c->ntarget; i++) {
        int is_feature = i < c->nfeature;
        size_t j = is_feature ? c->feature[i] : c->target[i - c->nfeature];
        csv_field *f = &p->fields[j];
        char shown[CSV_SHOW + 8];
        if (f->s[strspn(f->s, " \t")] == '\0')
            return csv_fail(FFNN_ERR_FORMAT, p, f->line, j + 1, csv_name(c, j),
                            "expected a %s, found an empty field (a missing value)",
                            is_feature || o->regression ? "number" : "class label");
        if (!is_feature && !o->regression) {
            size_t id = csv_class_id(k, f->s, o->class_names == NULL, &st);
            if (st != FFNN_OK)
                return st;
            if (id == SIZE_MAX) {
                ffnn_printable(f->s, f->len, CSV_SHOW, shown, sizeof shown);
                return csv_fail(FFNN_ERR_FORMAT, p, f->line, j + 1, csv_name(c, j),
                                "expected one of the %zu classes of the training data, found "
                                "'%s' (a class the training data does not have)", k->count,
                                shown);
            }
            r->y[r->count] = (int32_t)id;
            continue;
        }
        float *dst = is_feature ? &r->x[r->count * c->nfeature + i]
                                : &r->t[r->count * c->ntarget + (i - c->nfeature)];
        if (!csv_number(f->s, dst)) {
            ffnn_printable(f->s, f->len, CSV_SHOW, shown, sizeof shown);
            return csv_fail(FFNN_ERR_FORMAT, p, f->line, j + 1, csv_name(c, j),
                            "expected a decimal number within the float32 range, found '%s'",
                            shown);
        }
    }
    r->count++;
    return FFNN_OK;
}

/* Whether record a (fields fa [n]) is a header, given the next record b (NULL). */
static int csv_is_header(const csv_field *a, size_t n, const csv_field *b, size_t nb)
{
    int all_text = 1;
    for (size_t j = 0; j < n; j++) {
        int number = csv_number(a[j].s, NULL);
        all_text &= !number;
        if (!number && b && j < nb && csv_number(b[j].s, NULL))
            return 1;
    }
    return b == NULL && all_text;
}

/* The data set from the rows: features, then labels (sorted classes) or targets. */
static ffnn_status csv_build(const char *path, const csv_columns *c, const ffnn_csv_options *o,
                             const csv_classes *k, const csv_rows *r, ffnn_dataset **out)
{
    ffnn_dataset *ds = NULL;
    ffnn_status st = ffnn_dataset_alloc_kind(r->count, 1, c->nfeature, 1,
                                             o->regression ? c->ntarget : 0, &ds);
    if (st != FFNN_OK)
        return ffnn_fail_context(st, path);
    memcpy(ds->values, r->x, r->count * c->nfeature * sizeof(float));
    if (o->regression) {
        memcpy(ds->targets, r->t, r->count * c->ntarget * sizeof(float));
        *out = ds;
        return FFNN_OK;
    }
    if (c->ntarget == 0) { /* features only */
        memset(ds->labels, 0, r->count * sizeof(int32_t));
        ds->classes = 1;
    } else if (o->class_names) { /* the ids are the given classes already */
        memcpy(ds->labels, r->y, r->count * sizeof(int32_t));
        ds->classes = (int)k->count;
        st = ffnn_dataset_set_class_names(ds, (const char *const *)k->name, k->count);
    } else {
        size_t *rank = malloc(k->count * sizeof *rank);
        const char **names = malloc(k->count * sizeof *names);
        st = rank && names ? csv_sort_classes(k, rank, names)
                           : ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the classes");
        for (size_t i = 0; st == FFNN_OK && i < r->count; i++)
            ds->labels[i] = (int32_t)rank[r->y[i]];
        if (st == FFNN_OK)
            st = ffnn_dataset_set_class_names(ds, names, k->count);
        free(rank);
        free(names);
    }
    if (st != FFNN_OK) {
        ffnn_dataset_free(ds);
        return st;
    }
    *out = ds;
    return FFNN_OK;
}

static int csv_ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

ffnn_status ffnn_dataset_load_csv(const char *path, const ffnn_csv_options *opt,
                                  ffnn_dataset **out)
{
    ffnn_csv_options o = opt ? *opt : ffnn_csv_options_default();
    csv_parser p;
    csv_columns c;
    csv_classes k;
    csv_rows r;
    csv_field *first = NULL;
    size_t nfirst = 0;
    int got = 0;
    ffnn_status st;

    if (!path || !out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_load_csv: NULL argument");
    if ((int)o.header < 0 || (int)o.header > FFNN_CSV_HEADER_NO ||
        (o.class_names && (o.regression || o.class_count < 1)))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: %s", path,
                         o.class_names ? "class_names: expected at least one class, and class "
                                         "labels (not regression)"
                                       : "unknown header option");
    memset(&p, 0, sizeof p);
    memset(&c, 0, sizeof c);
    memset(&k, 0, sizeof k);
    memset(&r, 0, sizeof r);
    p.path = path;
    p.line = 1;
    p.delim = o.delimiter ? o.delimiter
              : csv_ends_with(path, ".tsv") || csv_ends_with(path, ".tsv.gz") ? '\t' : ',';
    if ((st = csv_read_file(path, &p.buf, &p.size)) != FFNN_OK)
        return st;
    if (p.size >= 3 && memcmp(p.buf, "\xEF\xBB\xBF", 3) == 0)
        p.pos = 3;
    for (size_t i = 0; i < o.skip_rows && p.pos < p.size; p.pos++)
        if (p.buf[p.pos] == '\n') {
            i++;
            p.line++;
        }
    st = csv_next(&p, &got);
    if (st == FFNN_OK && !got)
        st = ffnn_fail(FFNN_ERR_FORMAT, "%s: line %zu: expected a header or a data row, found "
                       "the end of the file (an empty file)", path, p.line);
    if (st == FFNN_OK && !(first = malloc(p.count * sizeof *first)))
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    if (st == FFNN_OK) {
        nfirst = p.count;
        memcpy(first, p.fields, nfirst * sizeof *first);
        c.ncols = nfirst;
        st = csv_next(&p, &got);
    }
    int header = 0;
    if (st == FFNN_OK)
        header = o.header == FFNN_CSV_HEADER_YES ||
                 (o.header == FFNN_CSV_HEADER_AUTO &&
                  csv_is_header(first, nfirst, got ? p.fields : NULL, p.count));
    if (st == FFNN_OK && header) {
        if (!(c.names = malloc(nfirst * sizeof *c.names)))
            st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
        for (size_t j = 0; st == FFNN_OK && j < nfirst; j++)
            c.names[j] = first[j].s;
    }
    if (st == FFNN_OK)
        st = csv_resolve_columns(&p, &o, &c);
    if (st == FFNN_OK && c.ntarget == 0)
        o.regression = 0;
    for (int i = 0; st == FFNN_OK && o.class_names && i < o.class_count; i++)
        csv_class_id(&k, (char *)o.class_names[i], 1, &st);
    if (st == FFNN_OK && !header) { /* the first record is data */
        csv_field *second = malloc((p.count ? p.count : 1) * sizeof *second);
        size_t nsecond = p.count, line2 = p.record_line, line1 = first[0].line;
        if (!second) {
            st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
        } else {
            memcpy(second, p.fields, nsecond * sizeof *second);
            memcpy(p.fields, first, nfirst * sizeof *first); /* cap >= nfirst */
            p.count = nfirst;
            p.record_line = line1;
            st = csv_record(&p, &c, &o, &k, &r);
            if (st == FFNN_OK && got) {
                memcpy(p.fields, second, nsecond * sizeof *second);
                p.count = nsecond;
                p.record_line = line2;
            }
            free(second);
        }
    }
    while (st == FFNN_OK && got) {
        st = csv_record(&p, &c, &o, &k, &r);
        if (st == FFNN_OK)
            st = csv_next(&p, &got);
    }
    if (st == FFNN_OK && r.count == 0)
        st = ffnn_fail(FFNN_ERR_FORMAT, "%s: line %zu: expected data rows after the header, "
                       "found the end of the file (no data)", path, p.line);
    if (st == FFNN_OK)
        st = csv_build(path, &c, &o, &k, &r, out);
    free(first);
    free(p.fields);
    free(c.names);
    free(c.target);
    free(c.feature);
    free(k.name);
    free(k.slot);
    free(r.x);
    free(r.t);
    free(r.y);
    free(p.buf);
    return st;
}
