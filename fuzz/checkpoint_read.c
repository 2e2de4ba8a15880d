/* checkpoint_read.c - libFuzzer target: the checkpoint reader (io/checkpoint.c,
 * ffnn_checkpoint_read) on arbitrary bytes. The reader takes a path, so each input
 * is written to one private temporary file first. A finding is a crash or a
 * sanitizer report (ASan/UBSan); a rejected file is the expected outcome.
 *   make fuzz [FUZZ_SECONDS=180]     (clang with libFuzzer: Debian's clang-14)
 * Seeds: fuzz/corpus/checkpoint/ (valid checkpoints of small runs, and
 * fuzz/make_corpus.py's regression inputs); every finding is added there. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_file.h"
#include "io/run_state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file_write("checkpoint", ".ck", data, size);
    ffnn_run_state s;
    if (path && ffnn_checkpoint_read(path, NULL, &s) == FFNN_OK)
        ffnn_run_state_free(&s);
    return 0;
}
