/* csv_read.c - libFuzzer target: the CSV/TSV reader (data/csv.c,
 * ffnn_dataset_load_csv) on arbitrary bytes, with three sets of options (the
 * defaults; regression on the columns "b" and 0 with a header; class labels of
 * a given list from column 1 of a tab-separated file, one line skipped). The
 * reader takes a path, so each input is written to one private temporary file
 * first (raw: gzip input takes the same path through zlib). A finding is a crash
 * or a sanitizer report (ASan/UBSan); a rejected file is the expected outcome.
 *   make fuzz [FUZZ_SECONDS=180]     (clang with libFuzzer: Debian's clang-14)
 * Seeds: fuzz/corpus/csv/; every finding is added there as a regression input. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ffnn.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file_write("csvread", "", data, size);
    if (!path)
        return 0;
    static const char *const names[3] = {"a", "1", "x y"};
    ffnn_csv_options o[3];
    o[0] = ffnn_csv_options_default();
    o[1] = ffnn_csv_options_default();
    o[1].header = FFNN_CSV_HEADER_YES;
    o[1].regression = 1;
    o[1].target = "b,0";
    o[2] = ffnn_csv_options_default();
    o[2].delimiter = '\t';
    o[2].skip_rows = 1;
    o[2].target = "1";
    o[2].class_names = names;
    o[2].class_count = 3;
    for (int k = 0; k < 3; k++) {
        ffnn_dataset *ds = NULL;
        if (ffnn_dataset_load_csv(path, &o[k], &ds) == FFNN_OK)
            ffnn_dataset_free(ds);
    }
    return 0;
}
