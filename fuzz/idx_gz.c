/* idx_gz.c - libFuzzer target: the gzip path of the IDX loader (data/idx.c). The
 * input is the decompressed content; it is gzip-compressed here (zlib, level 1)
 * and written as a .gz file, so the fuzzer explores IDX headers and payloads
 * behind a valid gzip stream: the bound on the decompressed size, the counting
 * pass, truncation and trailing data. Corrupt streams: idx_raw (its inputs may
 * start with 1f 8b). Seeds: fuzz/corpus/idx/. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#include "ffnn.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ffnn_dataset *ds = NULL;
    const char *path = fuzz_file_name("idxgz", ".gz");
    gzFile gz = path ? gzopen(path, "wb1") : NULL;
    if (!gz)
        return 0;
    if (size && gzwrite(gz, data, (unsigned)size) != (int)size) {
        gzclose(gz);
        return 0;
    }
    if (gzclose(gz) != Z_OK)
        return 0;
    if (ffnn_dataset_load_idx(path, NULL, &ds) == FFNN_OK)
        ffnn_dataset_free(ds);
    return 0;
}
