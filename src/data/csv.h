/* csv.h - the pieces of the CSV/TSV reader (private to the library): the
 * correctly rounded number parser (csv_number.c) and the streaming record
 * reader (csv_stream.c) that ffnn_dataset_load_csv (csv.c) runs over. */
#ifndef FFNN_DATA_CSV_H
#define FFNN_DATA_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "ffnn.h"

/* ffnn_csv_parse_float (ffnn.h): the number parser of the reader, exported for the
 * CLI's predict --input. */

/* The decimal number starting at s (before e; the grammar of ffnn_csv_parse_float)
 * into *out: the end of its text, or NULL when s holds no such number or it
 * rounds beyond float32's range. ffnn_csv_parse_float(s, n) accepts exactly the
 * texts whose scan ends at s + n, with the same value. Thread-safe. */
const char *csv_scan_float(const char *s, const char *e, float *out);

/* ffnn_dataset_load_csv with `threads` threads parsing the records (0: the
 * default, omp_get_max_threads() or the online cores); the data set is the
 * same for every count (tests/test_csv.c). */
ffnn_status csv_load(const char *path, const ffnn_csv_options *opt, int threads,
                     ffnn_dataset **out);

/* One record of a chunk: bytes [start, end) of the stream's buffer, without
 * its line end; line is the 1-based line it starts on. */
typedef struct csv_record {
    size_t start, end;
    size_t line;
} csv_record;

/* A file read in chunks through zlib (gzread reads plain files as they are):
 * buf holds the records not yet handed out; it grows only for a record longer
 * than it, after the host memory check. */
typedef struct csv_stream {
    const char *path;
    void *gz;           /* gzFile                                         */
    char *buf;          /* [cap + 1]                                      */
    size_t cap, len;    /* bytes in buf                                   */
    size_t pos;         /* first byte not handed out                      */
    size_t line;        /* line at pos                                    */
    int eof;
    int started;        /* the first read is done (its BOM skipped)        */
    char delim;
    uint64_t file_size; /* bytes of the file on disk (compressed or not)  */
    uint64_t consumed;  /* decompressed bytes handed out before buf[0]    */
    csv_record *rec;    /* [rec_cap] the current batch                    */
    size_t rec_cap;
} csv_stream;

ffnn_status csv_stream_open(csv_stream *s, const char *path, char delim);
void csv_stream_close(csv_stream *s);

/* Skip n lines (before the header). */
ffnn_status csv_stream_skip_lines(csv_stream *s, size_t n);

/* The next batch of at most max complete records into s->rec [*count] (0 at
 * the end of the file); they stay valid until the next call. Errors: a read or
 * gzip error (file, byte), a record that
 * would not fit in memory. */
ffnn_status csv_stream_next(csv_stream *s, size_t max, size_t *count);

/* The decompressed bytes handed out so far and the fraction of the file on
 * disk read (0..1; for the estimate of the rows to come). */
uint64_t csv_stream_consumed(const csv_stream *s);
double csv_stream_fraction(const csv_stream *s);


/* The distinct texts of a column (class labels, categories) in order of first
 * appearance, each copied; a hash table finds them (csv_levels.c). */
typedef struct csv_levels {
    char **name;  /* [count] owned */
    size_t count, cap;
    size_t *slot; /* [slots] ids + 1 (0: empty) */
    size_t slots;
} csv_levels;

/* The id of text s[0..len) (NUL at s[len] not needed), added when new and add
 * is set; SIZE_MAX when absent (or on an error: *st then set). */
size_t csv_level_id(csv_levels *k, const char *s, size_t len, int add, ffnn_status *st);
void csv_levels_free(csv_levels *k);

/* The levels sorted (numerically when every text is an integer, else by bytes):
 * rank[id] = the sorted position of id; names [count] in sorted order
 * (pointers into k). Errors: FFNN_ERR_NO_MEMORY. */
ffnn_status csv_levels_sort(const csv_levels *k, size_t *rank, const char **names);

#endif
