/* csv_input.c - rows of numbers from a CSV file (see csv_input.h). */
#define _POSIX_C_SOURCE 200809L
#include "csv_input.h"
#include "ffnn.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { CSV_FIELD_MAX = 63 }; /* characters of one number */

typedef struct csv_reader {
    FILE *f;
    const char *path;
    size_t features;  /* values per row                             */
    char *line;       /* [cap] the current line, NUL-terminated      */
    size_t cap, len;
    size_t max_len;   /* longest line accepted                       */
    size_t line_no;   /* 1-based number of the current line          */
    float *x;         /* [cap_rows, features] the rows read so far   */
    size_t rows, cap_rows;
    int external;     /* 1: x is the caller's (a stream): never grown */
    size_t total;     /* rows read over all calls (a stream)         */
    char *err;        /* [err_size] */
    size_t err_size;
} csv_reader;

/* "PATH: line L[, column C]: MESSAGE" into r->err; returns -1. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int csv_error(csv_reader *r, size_t column, const char *fmt, ...)
{
    char msg[512], where[64] = "", raw[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (column)
        snprintf(where, sizeof where, ", column %zu", column);
    snprintf(raw, sizeof raw, "%s: line %zu%s: %s", r->path, r->line_no, where, msg);
    ffnn_escape_controls(raw, r->err, r->err_size); /* fields are quoted: no raw controls */
    return -1;
}

/* Append byte c to the line, growing it; -1 when out of memory. */
static int csv_push(csv_reader *r, char c)
{
    if (r->len + 1 >= r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 256;
        char *line = realloc(r->line, cap);
        if (!line)
            return csv_error(r, 0, "out of memory reading the line");
        r->line = line;
        r->cap = cap;
    }
    r->line[r->len++] = c;
    return 0;
}

/* The next line, without "\n" or "\r\n", into r->line: 1, or 0 at the end of
 * the file, or -1 on an error (a NUL byte, an over-long line, a read error). */
static int csv_next_line(csv_reader *r)
{
    int c;

    r->len = 0;
    r->line_no++;
    while ((c = getc(r->f)) != EOF && c != '\n') {
        if (c == '\0')
            return csv_error(r, r->len + 1, "expected text, found a NUL byte");
        if (r->len >= r->max_len)
            return csv_error(r, 0, "expected at most %zu bytes per line (%zu values), found "
                             "a longer line", r->max_len, r->features);
        if (csv_push(r, (char)c) != 0)
            return -1;
    }
    if (ferror(r->f))
        return csv_error(r, 0, "cannot read: %s", strerror(errno));
    if (c == EOF && r->len == 0)
        return 0;
    if (r->len > 0 && r->line[r->len - 1] == '\r')
        r->len--;
    if (csv_push(r, '\0') != 0)
        return -1;
    r->len--;
    return 1;
}

/* One number from [b, e) (spaces around it allowed) at column col. */
static int csv_number(csv_reader *r, const char *b, const char *e, size_t col, float *out)
{
    char buf[CSV_FIELD_MAX + 1], *end;
    size_t n;

    for (; b < e && (*b == ' ' || *b == '\t'); b++)
        col++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    n = (size_t)(e - b);
    if (n == 0)
        return csv_error(r, col, "expected a number, found an empty field");
    if (n > CSV_FIELD_MAX || strspn(b, "0123456789+-.eE") < n)
        return csv_error(r, col, "expected a decimal number, found '%.*s'%s",
                         (int)(n < 40 ? n : 40), b, n > 40 ? "..." : "");
    memcpy(buf, b, n);
    buf[n] = '\0';
    if (ffnn_csv_parse_float(buf, n, out)) /* the nearest float32, as the CSV reader */
        return 0;
    errno = 0;
    (void)strtod(buf, &end); /* which refusal: not a number, or out of float32's range */
    if (end != buf + n)
        return csv_error(r, col, "expected a number, found '%s'", buf);
    return csv_error(r, col, "expected a number within the float32 range, found '%s'", buf);
}

/* The comma-separated values of s (column col0 of the line) into row [features]. */
static int csv_row(csv_reader *r, const char *s, size_t col0, float *row)
{
    size_t count = 0;
    const char *p = s;

    for (;;) {
        const char *end = p + strcspn(p, ",");
        if (count == r->features)
            return csv_error(r, col0 + (size_t)(p - s), "expected %zu values (the model's "
                             "inputs), found more", r->features);
        if (csv_number(r, p, end, col0 + (size_t)(p - s), &row[count]) != 0)
            return -1;
        count++;
        if (*end != ',')
            break;
        p = end + 1;
    }
    if (count != r->features)
        return csv_error(r, 0, "expected %zu values (the model's inputs), found %zu",
                         r->features, count);
    return 0;
}

/* Room for one more row in r->x; a pointer to it or NULL (message set). */
static float *csv_new_row(csv_reader *r)
{
    if (r->rows == r->cap_rows && !r->external) {
        size_t cap = r->cap_rows ? 2 * r->cap_rows : 64;
        float *x = NULL;
        if (cap <= SIZE_MAX / sizeof(float) / r->features)
            x = realloc(r->x, cap * r->features * sizeof *x);
        if (!x) {
            csv_error(r, 0, "out of memory for %zu rows", cap);
            return NULL;
        }
        r->x = x;
        r->cap_rows = cap;
    }
    return r->x + r->rows * r->features;
}

/* Lines until limit rows are read or the input ends: BOM skipped on line 1,
 * blank lines skipped. 1 when limit rows were read, 0 at the end, -1 on error. */
static int csv_read_rows(csv_reader *r, size_t limit)
{
    int got = 1;

    while (r->rows < limit && (got = csv_next_line(r)) == 1) {
        const char *s = r->line;
        float *row;
        if (r->line_no == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
            s += 3;
        if (s[strspn(s, " \t")] == '\0')
            continue;
        if (!(row = csv_new_row(r)) || csv_row(r, s, 1, row) != 0)
            return -1;
        r->rows++;
        r->total++;
    }
    return got;
}

static void csv_init(csv_reader *r, FILE *f, const char *path, size_t features, char *err,
                     size_t err_size)
{
    memset(r, 0, sizeof *r);
    r->f = f;
    r->path = path;
    r->features = features ? features : 1;
    r->max_len = features < (SIZE_MAX - 4096) / 64 ? 64 * features + 4096 : SIZE_MAX;
    r->err = err;
    r->err_size = err_size;
}

struct ffnn_cli_csv_stream {
    csv_reader r;
};

ffnn_cli_csv_stream *ffnn_cli_csv_open(FILE *f, const char *path, size_t features, char *err,
                                       size_t err_size)
{
    ffnn_cli_csv_stream *s = malloc(sizeof *s);
    if (s) {
        csv_init(&s->r, f, path, features, err, err_size);
        s->r.external = 1;
    } else if (err_size) {
        snprintf(err, err_size, "%s: out of memory", path);
    }
    return s;
}

long ffnn_cli_csv_next(ffnn_cli_csv_stream *s, float *x, size_t max_rows)
{
    csv_reader *r = &s->r;
    r->x = x;
    r->rows = 0;
    r->cap_rows = max_rows;
    if (csv_read_rows(r, max_rows) < 0)
        return -1;
    if (r->total == 0)
        return csv_error(r, 0, "expected at least one row of %zu numbers, found none (empty "
                         "input)", r->features);
    return (long)r->rows;
}

void ffnn_cli_csv_close(ffnn_cli_csv_stream *s)
{
    if (s)
        free(s->r.line);
    free(s);
}

int ffnn_cli_read_csv(FILE *f, const char *path, size_t features, float **x, size_t *rows,
                      char *err, size_t err_size)
{
    csv_reader r;

    csv_init(&r, f, path, features, err, err_size);
    *x = NULL;
    if (csv_read_rows(&r, SIZE_MAX) != 0 ||
        (r.rows == 0 && csv_error(&r, 0, "expected at least one row of %zu numbers, found "
                                  "none (empty input)", r.features) != 0)) {
        free(r.line);
        free(r.x);
        return -1;
    }
    free(r.line);
    *x = r.x;
    *rows = r.rows;
    return 0;
}
