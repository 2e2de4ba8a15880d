/* npy_read.c - libFuzzer target: the NumPy .npy reader (data/npy.c,
 * ffnn_dataset_load_npy) on arbitrary bytes, as features alone, as both the
 * features and the labels/targets file, and as an .npz archive (data/npz.c). Each input is written to one private
 * temporary file first. A finding is a crash or a sanitizer report (ASan/UBSan);
 * a rejected file is the expected outcome.
 *   make fuzz [FUZZ_SECONDS=180]     (clang with libFuzzer: Debian's clang-14)
 * Seeds: fuzz/corpus/npy/; every finding is added there as a regression input. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ffnn.h"

static char path[64], npz[72];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/ffnn-fuzz-npy-%ld", (long)getpid());
        snprintf(npz, sizeof npz, "%s.npz", path);
    }
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(k ? npz : path, "wb");
        if (!f)
            return 0;
        if (size && fwrite(data, 1, size, f) != size) {
            fclose(f);
            return 0;
        }
        fclose(f);
    }
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
