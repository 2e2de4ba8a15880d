/* checkpoint_read.c - libFuzzer target: the checkpoint reader (io/checkpoint.c,
 * ffnn_checkpoint_read) on arbitrary bytes. The reader takes a path, so each input
 * is written to one private temporary file first. A finding is a crash or a
 * sanitizer report (ASan/UBSan); a rejected file is the expected outcome.
 *   make fuzz [FUZZ_SECONDS=180]     (clang with libFuzzer: Debian's clang-14)
 * Seeds: fuzz/corpus/checkpoint/ (a valid checkpoint of a small run); every
 * finding is added there as a regression input. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "io/run_state.h"

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/ffnn-fuzz-checkpoint-%ld", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return 0;
    }
    fclose(f);
    ffnn_run_state s;
    if (ffnn_checkpoint_read(path, NULL, &s) == FFNN_OK)
        ffnn_run_state_free(&s);
    return 0;
}
