/* csv_input.h - reading rows of numbers from a CSV file (ffnn predict). */
#ifndef FFNN_CLI_CSV_INPUT_H
#define FFNN_CLI_CSV_INPUT_H

#include <stddef.h>
#include <stdio.h>

/* Read f (named path in messages) as CSV: one sample per line, `features`
 * comma-separated decimal numbers (spaces around a number allowed), each finite
 * in float32. A UTF-8 byte-order mark at the start, CRLF line endings and empty
 * (or blank) lines are accepted; "nan", "inf", hex floats, values out of float
 * range ("1e999"), an empty field, a NUL byte, a line longer than
 * 64 * features + 4096 bytes, or a row with another number of values are errors.
 * On success returns 0 with *x [*rows, features] (malloc'd; *rows >= 1: input
 * without a row of numbers is an error).
 * On error returns -1 with err [err_size] set to
 * "PATH: line L, column C: expected ..., found ..." (*x NULL). */
int ffnn_cli_read_csv(FILE *f, const char *path, size_t features, float **x, size_t *rows,
                      char *err, size_t err_size);

/* The same rows read a batch at a time (ffnn predict --input -: stdin is not
 * held in memory whole). open: NULL when out of memory (err set). next: up to
 * max_rows rows into x [max_rows, features], returning their count, 0 at the
 * end of the input (after at least one row), or -1 with err set (the same
 * errors, an input without rows included). close frees the stream (not f). */
typedef struct ffnn_cli_csv_stream ffnn_cli_csv_stream;
ffnn_cli_csv_stream *ffnn_cli_csv_open(FILE *f, const char *path, size_t features, char *err,
                                       size_t err_size);
long ffnn_cli_csv_next(ffnn_cli_csv_stream *s, float *x, size_t max_rows);
void ffnn_cli_csv_close(ffnn_cli_csv_stream *s);

#endif
