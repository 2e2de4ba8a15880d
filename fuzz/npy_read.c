/* npy_read.c - libFuzzer target: the NumPy .npy reader (data/npy.c,
 * ffnn_dataset_load_npy) on arbitrary bytes, as features alone, as both the
 * features and the labels/targets file, and as an .npz archive (data/npz.c). Each input is written to private
 * temporary files first (fuzz_file.h: removed at exit). A finding is a crash or a sanitizer report (ASan/UBSan);
 * a rejected file is the expected outcome.
 *   make fuzz [FUZZ_SECONDS=180]     (clang with libFuzzer: Debian's clang-14)
 * Seeds: fuzz/corpus/npy/; every finding is added there as a regression input. */
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
    const char *path = fuzz_file_write("npy", "", data, size);
    const char *npz = fuzz_file_write("npy", ".npz", data, size);
    if (!path || !npz)
        return 0;
    ffnn_dataset *ds = NULL;
    if (ffnn_dataset_load_npy(path, NULL, &ds) == FFNN_OK)
        ffnn_dataset_free(ds);
    ds = NULL;
    if (ffnn_dataset_load_npy(path, path, &ds) == FFNN_OK)
        ffnn_dataset_free(ds);
    ds = NULL;
    if (ffnn_dataset_load_npy(npz, NULL, &ds) == FFNN_OK)
        ffnn_dataset_free(ds);
    return 0;
}
