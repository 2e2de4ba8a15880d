/* fuzz_file.h - the fuzz targets' one helper: the readers take a path, so each
 * input is written to one private temporary file first (fuzz_file_write). The
 * file is removed when the process exits (atexit), and files of fuzzing
 * processes that died without exiting (a crash, a kill) are removed by the
 * next one: nothing is left in /dev/shm. */
#ifndef FFNN_FUZZ_FILE_H
#define FFNN_FUZZ_FILE_H

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* The directory of the inputs: /dev/shm (memory) when there is one, else /tmp. */
static inline const char *fuzz_dir(void)
{
    return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}

enum { FUZZ_FILES = 4 };                     /* names per process, by tag */
static char fuzz_file_paths[FUZZ_FILES][128];

static inline void fuzz_file_remove(void)
{
    for (int i = 0; i < FUZZ_FILES; i++)
        if (fuzz_file_paths[i][0])
            unlink(fuzz_file_paths[i]);
}

/* Remove <fuzz_dir>/ffnn-fuzz-<tag>-<pid><suffix> files whose pid no longer runs. */
static inline void fuzz_file_remove_stale(void)
{
    char victim[512];
    DIR *d = opendir(fuzz_dir());
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "ffnn-fuzz-", 10) != 0)
            continue;
        const char *dash = strrchr(e->d_name, '-'); /* before the pid */
        long pid = strtol(dash + 1, NULL, 10);
        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        snprintf(victim, sizeof victim, "%s/%s", fuzz_dir(), e->d_name);
        unlink(victim);
    }
    if (d)
        closedir(d);
}

/* <fuzz_dir>/ffnn-fuzz-<tag>-<pid><suffix>, removed at exit (the same
 * name for the same tag; suffix without '-'). The first call removes the files
 * of dead fuzzing processes. */
static inline const char *fuzz_file_name(const char *tag, const char *suffix)
{
    static int registered;
    char name[128];
    if (!registered) {
        registered = 1;
        fuzz_file_remove_stale();
        atexit(fuzz_file_remove);
    }
    snprintf(name, sizeof name, "%s/ffnn-fuzz-%s-%ld%s", fuzz_dir(), tag, (long)getpid(),
             suffix);
    for (int i = 0; i < FUZZ_FILES; i++) {
        if (!fuzz_file_paths[i][0])
            memcpy(fuzz_file_paths[i], name, sizeof name);
        if (!strcmp(fuzz_file_paths[i], name))
            return fuzz_file_paths[i];
    }
    return NULL;
}

/* data [size] into fuzz_file_name(tag, suffix); its path, or NULL. */
static inline const char *fuzz_file_write(const char *tag, const char *suffix,
                                          const uint8_t *data, size_t size)
{
    const char *path = fuzz_file_name(tag, suffix);
    FILE *f = path ? fopen(path, "wb") : NULL;
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
