/*
 * csv.c - CSV/TSV files (RFC 4180, optionally gzip'ed) as data sets
 * (ffnn_dataset_load_csv in ffnn.h has the rules).
 *
 * The file streams through zlib in chunks (csv_stream.c): a batch of records
 * is cut from the chunk, its records are tokenised and their numbers parsed in
 * parallel (the library's thread pool, core/pool.h: one contiguous range of
 * records per thread) straight into the rows of the float32 matrix, and then,
 * in record order on one thread, the texts of label and categorical columns are
 * numbered. A record without quotes, spaces or missing cells (almost every
 * record of a numeric table) has its numbers parsed where they lie, in one pass
 * (csv_fast_record); any other record, or one that pass does not take, is split
 * into fields first (csv_split), which also names any error (both in
 * csv_record.c, the record side of the loader). Every row lands at the same place and
 * every text gets the same number whatever the thread count, and the first
 * error in file order is the one reported. The matrix grows by realloc (mremap
 * on Linux: no copy beside it) after the host memory check of the projected
 * size (rows so far / fraction of the file read), so a file that would not fit
 * - a gzip bomb included - is refused with the estimate after one chunk.
 *
 * Own tokenizer rather than Debian's libcsv (3.0.3): libcsv reports fields
 * through callbacks without line numbers, so the errors this reader must give
 * (file, line, column) would need the same bookkeeping on top of it, and its
 * callbacks would not run in parallel over a chunk.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h> /* omp_get_max_threads: the default thread count only */
#endif

#include "core/error.h"
#include "core/memory.h"
#include "core/pool.h"
#include "data/csv.h"
#include "data/csv_loader.h"
#include "data/dataset.h"
#include "data/table.h"

enum { CSV_BATCH = 65536,   /* records per parallel batch                      */
       CSV_SNIFF = 1000,    /* data rows that decide which columns hold text    */
       CSV_PART = 256,      /* records at least per thread of a batch           */
       CSV_MAX_THREADS = 256 };

ffnn_csv_options ffnn_csv_options_default(void)
{
    ffnn_csv_options o;
    memset(&o, 0, sizeof o);
    o.header = FFNN_CSV_HEADER_AUTO;
    return o;
}

ffnn_status csv_fail(ffnn_status st, const csv_loader *L, size_t line, size_t column,
                            const char *fmt, ...)
{
    char msg[512], where[160] = "", shown[CSV_SHOW + 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *name = column && L->names && column <= L->ncols ? L->names[column - 1] : NULL;
    if (name) {
        ffnn_printable(name, strlen(name), CSV_SHOW, shown, sizeof shown);
        snprintf(where, sizeof where, ", column %zu ('%s')", column, shown);
    } else if (column) {
        snprintf(where, sizeof where, ", column %zu", column);
    }
    return ffnn_fail(st, "%s: line %zu%s: %s", L->path, line, where, msg);
}

/* ------------------------------------------------------------ rows */

/* Room for n more rows (the records handed out so far): the projected rows of the
 * whole file are checked against the host's memory first, and reserved. */
static ffnn_status csv_reserve(csv_loader *L, const csv_stream *s, size_t n)
{
    size_t row_bytes = (L->nfeature + (L->o.regression ? L->ntarget : 1)) * sizeof(float);
    if (L->rows + n <= L->cap)
        return FFNN_OK;
    double frac = csv_stream_fraction(s);
    size_t cap = L->cap ? 2 * L->cap : 1024;
    if (cap < L->rows + n)
        cap = L->rows + n;
    /* the rows to come: the rows per byte so far times the file's decompressed size,
     * estimated from the bytes read over the fraction of the file they came from */
    double used = (double)csv_stream_consumed(s), read = (double)(s->consumed + s->len);
    if (frac > 0.0 && frac < 1.0 && used > 0.0) {
        double projected = (double)(L->rows + n) / used * (read / frac);
        char detail[160];
        snprintf(detail, sizeof detail, "%.0f rows of %zu values projected from %zu rows in "
                 "the first %.2f%% of the file", projected, L->nfeature, L->rows + n,
                 100.0 * frac);
        ffnn_status st = ffnn_memory_check_host(L->path, (uint64_t)(projected * (double)row_bytes),
                                                detail);
        if (st != FFNN_OK)
            return st;
        if (projected * 1.05 > (double)cap && projected * 1.05 < (double)SIZE_MAX / row_bytes)
            cap = (size_t)(projected * 1.05);
    }
    if (cap > SIZE_MAX / row_bytes)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: too many rows", L->path);
    ffnn_status st = ffnn_memory_check_host(L->path, (uint64_t)(cap - L->cap) * row_bytes, NULL);
    if (st != FFNN_OK)
        return st;
    float *x = realloc(L->x, cap * L->nfeature * sizeof *x);
    if (x)
        L->x = x;
    void *t = L->o.regression ? realloc(L->t, cap * (L->ntarget ? L->ntarget : 1) * sizeof(float))
                              : realloc(L->y, cap * sizeof(int32_t));
    if (t && L->o.regression)
        L->t = t;
    else if (t)
        L->y = t;
    if (!x || !t)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory for %zu rows", L->path, cap);
    L->cap = cap;
    return FFNN_OK;
}


/* The texts of a parsed batch of n slots numbered in record order, missing
 * cells counted; blank and dropped records taken out of the rows. */
static ffnn_status csv_finish_batch(csv_loader *L, size_t n)
{
    ffnn_status st = FFNN_OK;
    size_t w = L->rows;
    for (size_t k = 0; k < n; k++) {
        size_t row = L->rows + k;
        if (L->skip[k]) {
            L->dropped += L->skip[k] == 2;
            continue;
        }
        for (size_t c = 0; c < L->ntext_col; c++) {
            const size_t j = L->text_col[c];
            const char *s = L->tptr[k * L->ntext + L->text_slot[j]];
            size_t len = L->tlen[k * L->ntext + L->text_slot[j]];
            if (L->role[j] == ROLE_FEATURE) {
                size_t i = L->index[j];
                if (!s) {
                    L->x[row * L->nfeature + i] = NAN;
                    continue;
                }
                size_t id = csv_level_id(&L->levels[i], s, len, 1, &st);
                if (st != FFNN_OK)
                    return st;
                L->x[row * L->nfeature + i] = (float)id;
                continue;
            }
            size_t id = csv_level_id(&L->classes, s, len, L->o.class_names == NULL, &st);
            if (st != FFNN_OK)
                return st;
            if (id == SIZE_MAX) {
                char shown[CSV_SHOW + 8];
                ffnn_printable(s, len, CSV_SHOW, shown, sizeof shown);
                return csv_fail(FFNN_ERR_FORMAT, L, L->tline[k], j + 1, "expected one of the "
                                "%zu classes of the training data, found '%s' (a class the "
                                "training data does not have)", L->classes.count, shown);
            }
            L->y[row] = (int32_t)id;
        }
        if (w != row) {
            memmove(&L->x[w * L->nfeature], &L->x[row * L->nfeature],
                    L->nfeature * sizeof *L->x);
            if (L->o.regression)
                memmove(&L->t[w * L->ntarget], &L->t[row * L->ntarget],
                        L->ntarget * sizeof *L->t);
            else
                L->y[w] = L->y[row];
        }
        for (size_t i = 0; L->o.missing && i < L->nfeature; i++)
            L->missing[i] += L->x[w * L->nfeature + i] != L->x[w * L->nfeature + i];
        w++;
    }
    L->rows = w;
    return FFNN_OK;
}

/* One batch split over the pool: records [first, n) of s, part k of parts. */
typedef struct csv_job {
    csv_loader *L;
    csv_stream *s;
    size_t first, n;
    int parts;
} csv_job;

/* Part k's contiguous range of records, parsed in order up to its first error. */
static void csv_parse_part(void *user, int k)
{
    const csv_job *J = user;
    csv_loader *L = J->L;
    csv_part *P = &L->parts[k];
    size_t count = J->n - J->first;
    size_t lo = J->first + count * (size_t)k / (size_t)J->parts;
    size_t hi = J->first + count * (size_t)(k + 1) / (size_t)J->parts;
    P->fail_at = SIZE_MAX;
    for (size_t r = lo; r < hi; r++) {
        ffnn_status e = csv_parse_record(L, J->s->buf, &J->s->rec[r], r - J->first,
                                         P->fields);
        if (e != FFNN_OK) { /* the message is this thread's: kept for the caller */
            P->fail_at = r;
            P->st = e;
            snprintf(P->msg, sizeof P->msg, "%s", ffnn_last_error());
            return;
        }
    }
}

/* Records [first, n) of the stream's batch, in parallel (L->threads parts of at
 * least CSV_PART records); the first error in file order wins: each part stops
 * at its own first, and the parts are in file order. */
static ffnn_status csv_parse_batch(csv_loader *L, csv_stream *s, size_t first, size_t n)
{
    ffnn_status st = csv_reserve(L, s, n - first);
    if (st != FFNN_OK)
        return st;
    size_t count = n - first, parts = count / CSV_PART;
    if (parts > (size_t)L->threads)
        parts = (size_t)L->threads;
    if (parts < 1)
        parts = 1;
    if (parts > 1 && !L->pool && (st = ffnn_pool_create(L->threads - 1, &L->pool)) != FFNN_OK)
        return st;
    csv_job job = {L, s, first, n, (int)parts};
    ffnn_pool_run(L->pool, (int)parts, csv_parse_part, &job);
    for (size_t k = 0; k < parts; k++)
        if (L->parts[k].fail_at != SIZE_MAX)
            return ffnn_fail(L->parts[k].st, "%s", L->parts[k].msg);
    return csv_finish_batch(L, count);
}

/* ------------------------------------------------------------ the start */

/* Whether record a (fields [n]) is a header, given the next record b (NULL). */
static int csv_is_header(const csv_field *a, size_t n, const csv_field *b, size_t nb)
{
    int all_text = 1;
    for (size_t j = 0; j < n; j++) {
        int number = csv_number(a[j].s, a[j].len, NULL);
        all_text &= !number;
        if (!number && b && j < nb && csv_number(b[j].s, b[j].len, NULL))
            return 1;
    }
    return b == NULL && all_text;
}

/* A tokenised copy of record r of the stream (for looking ahead: the records
 * are parsed again in place later): *copy owns the text. */
static ffnn_status csv_peek(const csv_loader *L, const csv_stream *s, const csv_record *r,
                            char **copy, csv_field **fields, size_t *count)
{
    size_t len = r->end - r->start, cap = L->ncols ? L->ncols : 1;
    ffnn_status st;
    if (!L->ncols) { /* the first record: count its fields on a throw-away copy */
        char *tmp = malloc(len + 1);
        if (!tmp)
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
        memcpy(tmp, s->buf + r->start, len);
        st = csv_split(L, tmp, tmp + len, r->line, NULL, 0, &cap);
        free(tmp);
        if (st != FFNN_OK)
            return st;
    }
    *copy = malloc(len + 1);
    *fields = malloc(cap * sizeof **fields);
    if (!*copy || !*fields)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    memcpy(*copy, s->buf + r->start, len);
    return csv_split(L, *copy, *copy + len, r->line, *fields, cap, count);
}

/* The first batch: header (o->header, or guessed from records 0 and 1), the
 * columns, which hold text (the first CSV_SNIFF data rows); *first gets the
 * first data record of the batch. */
static ffnn_status csv_start(csv_loader *L, csv_stream *s, size_t n, size_t *first)
{
    ffnn_status st;
    char *c0 = NULL, **copies = NULL;
    csv_field *f0 = NULL, **rows = NULL;
    size_t n0 = 0, nrows = 0;
    if ((st = csv_peek(L, s, &s->rec[0], &c0, &f0, &n0)) != FFNN_OK)
        goto done;
    L->ncols = n0;
    size_t sniff = n < CSV_SNIFF + 1 ? n : CSV_SNIFF + 1;
    if (!(copies = calloc(sniff, sizeof *copies)) || !(rows = calloc(sniff, sizeof *rows)) ||
        !(L->role = calloc(n0, 1)) || !(L->index = calloc(n0, sizeof *L->index)) ||
        !(L->text = calloc(n0, 1)) || !(L->text_slot = calloc(n0, sizeof *L->text_slot))) {
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    nrows = sniff;
    size_t counts1 = 0;
    for (size_t k = 1; k < sniff; k++) {
        size_t cnt = 0;
        if ((st = csv_peek(L, s, &s->rec[k], &copies[k], &rows[k], &cnt)) != FFNN_OK)
            goto done;
        if (k == 1)
            counts1 = cnt;
        if (cnt != n0) { /* blank or ragged: the parse says which */
            free(rows[k]);
            rows[k] = NULL;
        }
    }
    int header = L->o.header == FFNN_CSV_HEADER_YES ||
                 (L->o.header == FFNN_CSV_HEADER_AUTO &&
                  csv_is_header(f0, n0, n > 1 ? rows[1] : NULL, n > 1 ? counts1 : 0));
    if (header) {
        if (!(L->names = calloc(n0, sizeof *L->names))) {
            st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
            goto done;
        }
        for (size_t j = 0; j < n0; j++)
            if (!(L->names[j] = malloc(f0[j].len + 1))) {
                st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
                goto done;
            } else {
                memcpy(L->names[j], f0[j].s, f0[j].len + 1);
            }
    } else {
        copies[0] = c0;
        rows[0] = f0;
        c0 = NULL;
        f0 = NULL;
    }
    if ((st = csv_resolve_columns(L)) != FFNN_OK || (st = csv_na_values(L)) != FFNN_OK ||
        (st = csv_find_text(L, rows + header, nrows - (size_t)header)) != FFNN_OK)
        goto done;
    *first = (size_t)header;
done:
    for (size_t k = 0; k < nrows; k++) {
        free(copies ? copies[k] : NULL);
        free(rows ? rows[k] : NULL);
    }
    free(copies);
    free(rows);
    free(c0);
    free(f0);
    return st;
}

/* ------------------------------------------------------------ the end */

/* The columns of the features into a raw table (names, categorical levels,
 * missing counts), handed to ds. */
static ffnn_status csv_table(csv_loader *L, ffnn_dataset *ds)
{
    ffnn_table *t = calloc(1, sizeof *t);
    if (!t || !(t->col = calloc(L->nfeature, sizeof *t->col))) {
        free(t);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    }
    t->count = L->nfeature;
    t->dropped = L->dropped;
    ffnn_dataset_set_table(ds, t);
    for (size_t i = 0; i < L->nfeature; i++) {
        ffnn_table_column *c = &t->col[i];
        size_t j = L->feature[i];
        char name[32];
        snprintf(name, sizeof name, "%zu", j); /* no header: the 0-based index */
        const char *nm = L->names ? L->names[j] : name;
        if (!(c->name = malloc(strlen(nm) + 1)))
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
        memcpy(c->name, nm, strlen(nm) + 1);
        c->missing = L->missing ? L->missing[i] : 0;
        c->categorical = L->text[j];
        if (c->categorical) { /* the levels move into the table */
            c->levels = L->levels[i].name;
            c->level_count = L->levels[i].count;
            L->levels[i].name = NULL;
            L->levels[i].count = 0;
        }
    }
    return FFNN_OK;
}

/* The data set from the rows (the matrix handed over, not copied): features,
 * then labels (sorted classes) or targets. */
static ffnn_status csv_build(csv_loader *L, ffnn_dataset **out)
{
    ffnn_status st = FFNN_OK;
    ffnn_dataset *ds = calloc(1, sizeof *ds);
    if (!ds)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    float *x = realloc(L->x, L->rows * L->nfeature * sizeof *x);
    ds->values = x ? x : L->x;
    L->x = NULL;
    ds->count = L->rows;
    ds->rows = 1;
    ds->cols = ds->features = L->nfeature;
    if (L->o.regression) {
        ds->targets = L->t;
        ds->target_width = L->ntarget;
        L->t = NULL;
    } else {
        ds->labels = L->y;
        L->y = NULL;
        ds->classes = 1; /* no target column: every label 0 */
    }
    if (!L->o.regression && L->ntarget > 0 && L->o.class_names) { /* the given classes */
        st = ffnn_dataset_set_class_names(ds, (const char *const *)L->classes.name,
                                          L->classes.count);
    } else if (!L->o.regression && L->ntarget > 0) {
        size_t *rank = malloc((L->classes.count + 1) * sizeof *rank);
        const char **names = malloc((L->classes.count + 1) * sizeof *names);
        st = rank && names ? csv_levels_sort(&L->classes, rank, names)
                           : ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the classes");
        for (size_t i = 0; st == FFNN_OK && i < L->rows; i++)
            ds->labels[i] = (int32_t)rank[ds->labels[i]];
        if (st == FFNN_OK)
            st = ffnn_dataset_set_class_names(ds, names, L->classes.count);
        free(rank);
        free(names);
    }
    int table = L->dropped > 0;
    for (size_t i = 0; i < L->nfeature; i++)
        table |= L->text[L->feature[i]] || (L->missing && L->missing[i] > 0);
    if (st == FFNN_OK && table)
        st = csv_table(L, ds);
    if (st != FFNN_OK) {
        ffnn_dataset_free(ds);
        return st;
    }
    *out = ds;
    return FFNN_OK;
}

static void csv_loader_free(csv_loader *L)
{
    for (size_t j = 0; L->names && j < L->ncols; j++)
        free(L->names[j]);
    free(L->names);
    free(L->role);
    free(L->index);
    free(L->feature);
    free(L->target);
    free(L->text);
    free(L->text_slot);
    free(L->na);
    free(L->na_copy);
    csv_levels_free(&L->classes);
    for (size_t i = 0; L->levels && i < L->nfeature; i++)
        csv_levels_free(&L->levels[i]);
    free(L->levels);
    free(L->missing);
    free(L->x);
    free(L->t);
    free(L->y);
    free(L->tptr);
    free(L->tlen);
    free(L->tline);
    free(L->skip);
    free(L->text_col);
    for (int k = 0; L->parts && k < L->threads; k++)
        free(L->parts[k].fields);
    free(L->parts);
    ffnn_pool_free(L->pool);
}

static int csv_ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

/* Whether record r of the stream is a blank line. */
static int csv_blank(const csv_stream *s, const csv_record *r)
{
    for (size_t i = r->start; i < r->end; i++)
        if (s->buf[i] != ' ' && s->buf[i] != '\t' && s->buf[i] != '\r')
            return 0;
    return 1;
}

/* After the start: the per-feature and per-batch arrays. */
static ffnn_status csv_alloc_batch(csv_loader *L)
{
    size_t nt = L->ntext ? L->ntext : 1;
    L->levels = calloc(L->nfeature, sizeof *L->levels);
    L->missing = calloc(L->nfeature, sizeof *L->missing);
    L->tptr = malloc(L->batch * nt * sizeof *L->tptr);
    L->tlen = malloc(L->batch * nt * sizeof *L->tlen);
    L->tline = malloc(L->batch * sizeof *L->tline);
    L->skip = malloc(L->batch);
    L->text_col = malloc(L->ncols * sizeof *L->text_col);
    L->parts = calloc((size_t)L->threads, sizeof *L->parts);
    if (!L->levels || !L->missing || !L->tptr || !L->tlen || !L->tline || !L->skip ||
        !L->text_col || !L->parts)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    for (size_t j = 0; j < L->ncols; j++)
        if (L->text[j])
            L->text_col[L->ntext_col++] = j;
    for (int k = 0; k < L->threads; k++)
        if (!(L->parts[k].fields = malloc((L->ncols + 1) * sizeof *L->parts[k].fields)))
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    return FFNN_OK;
}

/* The threads of a load: omp_get_max_threads() (what OMP_NUM_THREADS sets, as
 * for the omp backend; OpenMP only counts here), else the online cores. */
static int csv_default_threads(void)
{
#ifdef _OPENMP
    int n = omp_get_max_threads();
#else
    long n = sysconf(_SC_NPROCESSORS_ONLN);
#endif
    return n < 1 ? 1 : n > CSV_MAX_THREADS ? CSV_MAX_THREADS : (int)n;
}

ffnn_status ffnn_dataset_load_csv(const char *path, const ffnn_csv_options *opt,
                                  ffnn_dataset **out)
{
    return csv_load(path, opt, 0, out);
}

ffnn_status csv_load(const char *path, const ffnn_csv_options *opt, int threads,
                     ffnn_dataset **out)
{
    csv_loader L;
    csv_stream s;
    ffnn_status st;
    size_t n = 0, first = 0;

    if (!path || !out || threads < 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_load_csv: %s",
                         threads < 0 ? "threads < 0" : "NULL argument");
    memset(&L, 0, sizeof L);
    L.threads = threads ? (threads > CSV_MAX_THREADS ? CSV_MAX_THREADS : threads)
                        : csv_default_threads();
    L.o = opt ? *opt : ffnn_csv_options_default();
    if ((int)L.o.header < 0 || (int)L.o.header > FFNN_CSV_HEADER_NO ||
        (L.o.class_names && (L.o.regression || L.o.class_count < 1)))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: %s", path,
                         L.o.class_names ? "class_names: expected at least one class, and "
                                           "class labels (not regression)"
                                         : "unknown header option");
    L.path = path;
    L.delim = L.o.delimiter ? L.o.delimiter
              : csv_ends_with(path, ".tsv") || csv_ends_with(path, ".tsv.gz") ? '\t' : ',';
    L.one_pass = strchr("+-.0123456789eE\"", L.delim) == NULL; /* strchr finds '\0' too */
    if ((st = csv_stream_open(&s, path, L.delim)) != FFNN_OK)
        return st;
    L.batch = s.cap + 1 < CSV_BATCH ? s.cap + 1 : CSV_BATCH; /* a record has >= 1 byte */
    st = csv_stream_skip_lines(&s, L.o.skip_rows);
    while (st == FFNN_OK) { /* the first batch, leading blank lines dropped */
        if ((st = csv_stream_next(&s, L.batch, &n)) != FFNN_OK || n == 0)
            break;
        size_t b = 0;
        while (b < n && csv_blank(&s, &s.rec[b]))
            b++;
        memmove(s.rec, s.rec + b, (n - b) * sizeof *s.rec);
        if ((n -= b) > 0)
            break;
    }
    if (st == FFNN_OK && n == 0)
        st = ffnn_fail(FFNN_ERR_FORMAT, "%s: line %zu: expected a header or a data row, found "
                       "the end of the file (an empty file)", path, s.line);
    if (st == FFNN_OK && (st = csv_start(&L, &s, n, &first)) == FFNN_OK && L.ntarget == 0)
        L.o.regression = 0;
    for (int i = 0; st == FFNN_OK && L.o.class_names && i < L.o.class_count; i++)
        csv_level_id(&L.classes, L.o.class_names[i], strlen(L.o.class_names[i]), 1, &st);
    if (st == FFNN_OK)
        st = csv_alloc_batch(&L);
    while (st == FFNN_OK && n > 0) {
        if ((st = csv_parse_batch(&L, &s, first, n)) != FFNN_OK)
            break;
        first = 0;
        st = csv_stream_next(&s, L.batch, &n);
    }
    if (st == FFNN_OK && L.rows == 0)
        st = ffnn_fail(FFNN_ERR_FORMAT, "%s: line %zu: expected data rows after the header, "
                       "found the end of the file (no data%s)", path, s.line,
                       L.dropped ? ": every row's target is missing" : "");
    csv_stream_close(&s);
    if (st == FFNN_OK)
        st = csv_build(&L, out);
    csv_loader_free(&L);
    return st;
}
