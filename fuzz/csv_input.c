/* csv_input.c - libFuzzer target: the CSV reader of ffnn predict
 * (cli/csv_input.c) on arbitrary bytes. The first byte picks the row width
 * (1 to 16 values); the rest is the file. Seeds: fuzz/corpus/csv/. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_input.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[768];
    float *x = NULL;
    size_t rows = 0;
    if (size < 1)
        return 0;
    size_t features = (size_t)(data[0] % 16) + 1;
    const char *path = fuzz_file_write("csv", ".csv", data + 1, size - 1);
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f)
        return 0;
    if (ffnn_cli_read_csv(f, "<fuzz>", features, &x, &rows, err, sizeof err) == 0) {
        if (rows == 0 || !x)
            abort(); /* success means at least one row */
        free(x);
    } else if (!memchr(err, '\0', sizeof err) || strpbrk(err, "\x1b\r\n")) {
        abort(); /* messages are terminated and free of control characters */
    }
    fclose(f);
    return 0;
}
