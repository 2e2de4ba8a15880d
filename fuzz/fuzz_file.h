/* fuzz_file.h - the fuzz targets' one helper: the readers take a path, so each
 * input is written to one private temporary file first (fuzz_file_write). */
#ifndef FFNN_FUZZ_FILE_H
#define FFNN_FUZZ_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

/* The directory of the inputs: /dev/shm (memory) when there is one, else /tmp. */
static inline const char *fuzz_dir(void)
{
    return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}

/* data [size] into <fuzz_dir>/ffnn-fuzz-<tag>-<pid><suffix>; its path, or NULL. */
static inline const char *fuzz_file_write(const char *tag, const char *suffix,
                                          const uint8_t *data, size_t size)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/ffnn-fuzz-%s-%ld%s", fuzz_dir(), tag, (long)getpid(),
             suffix);
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return NULL;
    }
    fclose(f);
    return path;
}

#endif
