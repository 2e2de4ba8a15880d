/* model_load.c - libFuzzer target: the model-file reader (io/safetensors.c,
 * ffnn_model_load) on arbitrary bytes. A finding is a crash or a sanitizer report
 * (ASan/UBSan); a rejected file is the expected outcome. A file that loads is
 * saved again (with FUZZ_ROUNDTRIP=1 in the environment: every save fsyncs, which
 * slows the run about tenfold) and must load back.
 * Seeds: fuzz/corpus/model/ (tools: fuzz/make_corpus.py). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>

#include "ffnn.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file_write("model", ".safetensors", data, size);
    ffnn_model *m = NULL, *back = NULL;
    ffnn_model_file_info info;
    if (!path || ffnn_model_load(path, &m, &info) != FFNN_OK)
        return 0;
    if (getenv("FUZZ_ROUNDTRIP") &&
        (ffnn_model_save(m, path) != FFNN_OK ||
         ffnn_model_load(path, &back, NULL) != FFNN_OK))
        abort(); /* a file ffnn reads must survive its own save */
    ffnn_model_free(back);
    ffnn_model_free(m);
    return 0;
}
