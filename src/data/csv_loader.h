/* csv_loader.h - the state of one ffnn_dataset_load_csv call, shared by the
 * loader (csv.c), its records (csv_record.c) and its column rules
 * (csv_columns.c); private to src/data. */
#ifndef FFNN_DATA_CSV_LOADER_H
#define FFNN_DATA_CSV_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "data/csv.h"

enum { CSV_SHOW = 40 }; /* bytes of a field shown in a message */

typedef struct csv_field {
    char *s;     /* text (NUL-terminated once tokenised) */
    size_t len;
    size_t line; /* line the field starts on (1-based) */
} csv_field;

enum { ROLE_NONE = 0, ROLE_FEATURE, ROLE_TARGET };

/* One thread's share of a batch (csv.c): its scratch fields and its first error. */
typedef struct csv_part {
    csv_field *fields;   /* [ncols + 1]                                      */
    size_t fail_at;      /* the record of its first error, or SIZE_MAX       */
    ffnn_status st;
    char msg[1024];
} csv_part;

struct ffnn_pool;

typedef struct csv_loader {
    const char *path;
    ffnn_csv_options o;
    char delim;
    int one_pass;        /* csv_fast_record may run: the delimiter is no number's byte */
    size_t ncols;
    char **names;        /* [ncols] owned copies of the header, or NULL          */
    unsigned char *role; /* [ncols] ROLE_*                                      */
    size_t *index;       /* [ncols] feature or target index of a column          */
    size_t *feature, nfeature; /* [nfeature] column of each feature             */
    size_t *target, ntarget;   /* [ntarget]                                     */
    unsigned char *text; /* [ncols] 1: the column's texts are numbered (label, category) */
    size_t *text_slot;   /* [ncols] its slot among the ntext text columns        */
    size_t ntext;
    char **na;           /* [nna] texts of a missing cell (into na_copy)         */
    size_t nna;
    char *na_copy;
    csv_levels classes;  /* the label column's texts                            */
    csv_levels *levels;  /* [nfeature] categorical features' texts              */
    size_t *missing;     /* [nfeature] missing cells per feature                */
    size_t dropped;      /* rows dropped for a missing target                    */
    /* the rows */
    float *x;            /* [cap, nfeature]                                     */
    float *t;            /* [cap, ntarget] regression                           */
    int32_t *y;          /* [cap] label ids (first appearance)                  */
    size_t rows, cap;
    /* one batch */
    const char **tptr;   /* [batch, ntext] text cells (into the stream)     */
    size_t *tlen;        /* [batch, ntext]                                  */
    size_t *tline;       /* [batch] the record's line                       */
    unsigned char *skip; /* [batch] 1: a blank line, 2: a missing target    */
    size_t batch;        /* records per batch: CSV_BATCH, fewer for a small file */
    size_t *text_col, ntext_col; /* [ncols] the columns with L->text set       */
    /* the threads */
    int threads;         /* >= 1: the caller and threads - 1 pool workers         */
    struct ffnn_pool *pool; /* created for the first batch worth splitting     */
    csv_part *parts;     /* [threads]                                           */
} csv_loader;

/* "PATH: line L, column C ('NAME'): " + message (column 0: none). */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
ffnn_status csv_fail(ffnn_status st, const csv_loader *L, size_t line, size_t column,
                     const char *fmt, ...);

/* csv_record.c: split the record [b, e) (line) into fields [cap]: quoted fields
 * unescaped in place, every field NUL-terminated where its delimiter was. *count
 * gets the number of fields (counted past cap: a ragged row). Errors:
 * FFNN_ERR_FORMAT (a NUL byte, an unclosed quote, text after a closing quote). */
ffnn_status csv_split(const csv_loader *L, char *b, char *e, size_t line, csv_field *fields,
                      size_t cap, size_t *count);

/* csv_record.c: record r of the stream's buffer buf as slot i of a batch (row
 * L->rows + i): numbers into the matrix, texts into the batch's text cells, or
 * L->skip[i] set (a blank line; a missing target with drop_missing_target).
 * fields [ncols] scratch. Errors: FFNN_ERR_FORMAT naming line and column. */
ffnn_status csv_parse_record(csv_loader *L, char *buf, const csv_record *r, size_t i,
                             csv_field *fields);

/* 1 when the field is a missing value: empty (or blank), or one of L->na. */
int csv_is_missing(const csv_loader *L, const csv_field *f);

/* 1 when s[0..n) (spaces around allowed) is a decimal number, into *out (may be NULL). */
int csv_number(const char *s, size_t n, float *out);

/* csv_columns.c: the targets, features (minus ignored) and roles of the columns
 * from L->o and the header; the texts of a missing cell; which feature columns
 * hold text (--categorical, and text among the first data rows [nrows][ncols],
 * a NULL row skipped). Errors: FFNN_ERR_INVALID_ARGUMENT naming the column spec,
 * FFNN_ERR_NO_MEMORY. */
ffnn_status csv_resolve_columns(csv_loader *L);
ffnn_status csv_na_values(csv_loader *L);
ffnn_status csv_find_text(csv_loader *L, csv_field *const *rows, size_t nrows);

#endif
