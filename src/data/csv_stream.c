/* csv_stream.c - a CSV/TSV file read in chunks through zlib and cut into
 * records (csv.h). Memory stays one chunk (CSV_CHUNK, grown only for a longer
 * record) whatever the file's size; a gzip bomb costs no more than a plain file.
 *
 * Records end at a line feed outside quotes. A quote opens a quoted field only
 * at the start of a field (RFC 4180; elsewhere it is text); inside one, "" is a
 * quote and line feeds are text. Lines without a quote (almost every line of a
 * numeric table) are found with memchr alone. */
#define _POSIX_C_SOURCE 200809L
#include "data/csv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "core/error.h"
#include "core/memory.h"

enum { CSV_CHUNK = 8 << 20 };

ffnn_status csv_stream_open(csv_stream *s, const char *path, char delim)
{
    struct stat sb;
    memset(s, 0, sizeof *s);
    s->path = path;
    s->delim = delim;
    s->line = 1;
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f)
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot open: %s", path,
                         errno ? strerror(errno) : "out of memory");
    gzbuffer(f, 1 << 14); /* small: gzoffset then tracks the input inflated so far */
    s->gz = f;
    s->file_size = stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
    s->cap = CSV_CHUNK; /* a small file gets a small buffer (it grows for a long record) */
    if (s->file_size && s->file_size < CSV_CHUNK)
        s->cap = s->file_size < 4096 ? 4096 : (size_t)s->file_size;
    if (!(s->buf = malloc(s->cap + 1))) {
        csv_stream_close(s);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory for the read buffer", path);
    }
    return FFNN_OK;
}

void csv_stream_close(csv_stream *s)
{
    if (s->gz)
        gzclose((gzFile)s->gz);
    free(s->buf);
    free(s->rec);
    s->gz = NULL;
    s->buf = NULL;
    s->rec = NULL;
}

uint64_t csv_stream_consumed(const csv_stream *s)
{
    return s->consumed + s->pos;
}

double csv_stream_fraction(const csv_stream *s)
{
    if (!s->file_size || !s->gz)
        return 0.0;
    z_off_t at = gzoffset((gzFile)s->gz); /* compressed bytes read */
    double f = at > 0 ? (double)at / (double)s->file_size : 0.0;
    return f > 1.0 ? 1.0 : f;
}

/* Move the unread bytes to the front and read more: grows buf (memory checked)
 * when the unread bytes fill it (one record longer than the buffer). */
static ffnn_status csv_fill(csv_stream *s)
{
    gzFile f = (gzFile)s->gz;
    if (s->pos > 0) {
        memmove(s->buf, s->buf + s->pos, s->len - s->pos);
        s->consumed += s->pos;
        s->len -= s->pos;
        s->pos = 0;
    }
    if (s->len == s->cap) {
        ffnn_status st = ffnn_memory_check_host("reading a CSV record", (uint64_t)s->cap, NULL);
        char *b = st == FFNN_OK && s->cap < SIZE_MAX / 4 ? realloc(s->buf, 2 * s->cap + 1)
                                                         : NULL;
        if (!b)
            return st != FFNN_OK ? ffnn_fail_context(st, s->path)
                                 : ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: line %zu: out of memory "
                                             "for a record longer than %zu bytes", s->path,
                                             s->line, s->cap);
        s->buf = b;
        s->cap *= 2;
    }
    while (!s->eof && s->len < s->cap) {
        size_t want = s->cap - s->len < (1u << 30) ? s->cap - s->len : (1u << 30);
        int got = gzread(f, s->buf + s->len, (unsigned)want);
        if (got < 0) {
            int code = 0;
            const char *msg = gzerror(f, &code);
            return ffnn_fail(code == Z_ERRNO ? FFNN_ERR_IO : FFNN_ERR_FORMAT,
                             "%s: byte %llu: cannot read%s: %s", s->path,
                             (unsigned long long)(s->consumed + s->len),
                             code == Z_ERRNO ? "" : " the gzip stream",
                             code == Z_ERRNO ? strerror(errno) : msg);
        }
        if (got == 0)
            s->eof = 1;
        s->len += (size_t)got;
    }
    s->buf[s->len] = '\0';
    if (!s->started) { /* a UTF-8 byte order mark */
        s->started = 1;
        if (s->len >= 3 && memcmp(s->buf, "\xEF\xBB\xBF", 3) == 0)
            s->pos = 3;
    }
    return FFNN_OK;
}

/* The end of the record starting at b (before e): the line feed that ends it,
 * or NULL when the buffer ends first; *lines counts the line feeds inside
 * quoted fields; *open 1 when the buffer ended inside a quoted field. */
static const char *csv_record_end(const char *b, const char *e, char delim, int eof,
                                  size_t *lines, int *open)
{
    const char *p = b;
    *open = 0;
    for (;;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        const char *stop = nl ? nl : e;
        const char *q = memchr(p, '"', (size_t)(stop - p));
        while (q && q != b && q[-1] != delim) /* a quote inside a field is text */
            q = memchr(q + 1, '"', (size_t)(stop - q - 1));
        if (!q)
            return nl;
        for (p = q + 1;; p++) { /* inside the quoted field */
            if (p >= e) {
                *open = 1;
                return NULL;
            }
            if (*p == '\n')
                (*lines)++;
            else if (*p == '"') {
                if (p + 1 < e && p[1] == '"') {
                    p++;
                    continue;
                }
                if (p + 1 >= e && !eof) { /* "" may continue past the buffer */
                    *open = 1;
                    return NULL;
                }
                p++;
                break;
            }
        }
    }
}

ffnn_status csv_stream_next(csv_stream *s, size_t max, size_t *count)
{
    ffnn_status st;
    *count = 0;
    if (s->rec_cap < max) {
        csv_record *r = realloc(s->rec, max * sizeof *r);
        if (!r)
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", s->path);
        s->rec = r;
        s->rec_cap = max;
    }
    for (;;) {
        size_t n = 0, at = s->pos, line = s->line;
        int open = 0;
        while (n < max && at < s->len) {
            size_t inner = 0;
            const char *b = s->buf + at, *e = s->buf + s->len;
            const char *nl = csv_record_end(b, e, s->delim, s->eof, &inner, &open);
            if (!nl && !s->eof)
                break;
            /* at the end of the file an open quote leaves the rest as one record: the
             * tokenizer names its line and column */
            size_t end = nl ? (size_t)(nl - s->buf) : s->len;
            s->rec[n++] = (csv_record){at, end, line};
            line += inner + 1;
            at = nl ? end + 1 : s->len;
        }
        if (n > 0 || (s->eof && at >= s->len)) {
            s->pos = at;
            s->line = line;
            *count = n;
            return FFNN_OK;
        }
        if ((st = csv_fill(s)) != FFNN_OK)
            return st;
    }
}

ffnn_status csv_stream_skip_lines(csv_stream *s, size_t n)
{
    ffnn_status st;
    while (n > 0) {
        if (s->pos >= s->len) {
            if (s->eof)
                return FFNN_OK;
            if ((st = csv_fill(s)) != FFNN_OK)
                return st;
            if (s->pos >= s->len)
                return FFNN_OK;
        }
        char *nl = memchr(s->buf + s->pos, '\n', s->len - s->pos);
        if (!nl) {
            s->pos = s->len;
            continue;
        }
        s->pos = (size_t)(nl - s->buf) + 1;
        s->line++;
        n--;
    }
    return FFNN_OK;
}
