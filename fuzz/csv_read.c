/* csv_read.c - libFuzzer target: the CSV/TSV reader (data/csv.c,
 * ffnn_dataset_load_csv) on arbitrary bytes, with four sets of options (the
 * defaults; regression on the columns "b" and 0 with a header; class labels of
 * a given list from column 1 of a tab-separated file, one line skipped; a real
 * table with text categories and missing cells, its encoding fitted, applied and
 * written to JSON and read back). The
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
#include "data/table.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file_write("csvread", "", data, size);
    if (!path)
        return 0;
    static const char *const names[3] = {"a", "1", "x y"};
    ffnn_csv_options o[4];
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
    o[3] = ffnn_csv_options_default(); /* a real table: text, missing cells, dropped rows */
    o[3].text_categories = 1;
    o[3].missing = 1;
    o[3].drop_missing_target = 1;
    o[3].ignore = "0";
    o[3].categorical = "1";
    o[3].na_values = "NA,?";
    for (int k = 0; k < 4; k++) {
        ffnn_dataset *ds = NULL;
        if (ffnn_dataset_load_csv(path, &o[k], &ds) != FFNN_OK)
            continue;
        /* the table's encoding, fitted and applied, then through its JSON form */
        ffnn_table *enc = NULL, *back = NULL;
        ffnn_dataset *e = NULL;
        char *json = NULL;
        if (ffnn_dataset_table(ds) && ffnn_table_fit(ds, &enc) == FFNN_OK) {
            if (ffnn_table_encode(enc, ds, NULL, &e) == FFNN_OK)
                ffnn_dataset_free(e);
            if (ffnn_table_to_json(enc, &json) == FFNN_OK &&
                ffnn_table_from_json(json, &back) != FFNN_OK)
                __builtin_trap(); /* what ffnn writes, ffnn must read */
            ffnn_table_free(back);
            free(json);
            ffnn_table_free(enc);
        }
        ffnn_dataset_free(ds);
    }
    return 0;
}
