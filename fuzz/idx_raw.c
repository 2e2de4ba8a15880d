/* idx_raw.c - libFuzzer target: the IDX loader (data/idx.c) on arbitrary bytes,
 * as an image file and as a label file (paired with a valid one-image file), raw
 * or gzip as the bytes say (zlib passes raw data through). Seeds:
 * fuzz/corpus/idx/ (fuzz/make_corpus.py). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>

#include "ffnn.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t one_image[16 + 4] = {0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2,
                                              1, 2, 3, 4};
    ffnn_dataset *ds = NULL;
    const char *path = fuzz_file_write("idx", "", data, size);
    if (!path)
        return 0;
    if (ffnn_dataset_load_idx(path, NULL, &ds) == FFNN_OK)
        ffnn_dataset_free(ds);
    ds = NULL;
    char labels[128];
    snprintf(labels, sizeof labels, "%s", path);
    const char *images = fuzz_file_write("idx-images", "", one_image, sizeof one_image);
    if (images && ffnn_dataset_load_idx(images, labels, &ds) == FFNN_OK)
        ffnn_dataset_free(ds);
    return 0;
}
