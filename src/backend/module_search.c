/* module_search.c - finding and opening a module of libffnn (module.h
 * ffnn_module_open): the CUDA backend's (module.c), MPI's (parallel/mpi_module.c).
 *
 * Where a module FILE is looked for, in order (the first that loads and is
 * accepted wins):
 *   1. $ENV (a path), when set: then that file only;
 *   2. beside the loaded libffnn.so (dladdr), e.g. build/ or the Python wheel's ffnn/;
 *   3. the install directory (FFNN_MODULE_DIR: make's $(LIBDIR), e.g. /usr/local/lib);
 *   4. the directory of the running program (/proc/self/exe), e.g. build/ for
 *      build/ffnn, which carries libffnn.a. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/module.h"

#ifndef FFNN_MODULE_DIR
#define FFNN_MODULE_DIR "/usr/local/lib"
#endif

enum { MODULE_CANDIDATES = 4 };

typedef struct search {
    char *err;
    size_t size;
    int tried;          /* files tried so far (the separator of their reasons) */
} search;

/* Append printf-style text to the search's message (truncated at its size). */
__attribute__((format(printf, 2, 3))) static void note(search *s, const char *fmt, ...)
{
    size_t used = strlen(s->err);
    if (used + 1 >= s->size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err + used, s->size - used, fmt, ap);
    va_end(ap);
}

/* Try one file: its table when it loads and spec accepts it; else NULL with the
 * reason noted (its dlerror, a missing entry point, another build). */
static const void *try_file(const ffnn_module_spec *spec, const char *path,
                            const char *source, search *s)
{
    char why[512];
    void *h = dlopen(path, RTLD_NOW | (spec->global ? RTLD_GLOBAL : RTLD_LOCAL));
    const char *sep = s->tried++ ? "; " : "";
    if (!h) {
        const char *e = dlerror();
        note(s, "%s%s (%s)", sep, e ? e : path, source);
        return NULL;
    }
    ffnn_module_entry_fn entry;
    *(void **)&entry = dlsym(h, spec->entry);
    if (!entry) {
        note(s, "%s%s: no %s: not an ffnn module (%s)", sep, path, spec->entry, source);
        dlclose(h);
        return NULL;
    }
    const void *table = entry(spec->host);
    if (!spec->accept(table, why, sizeof why)) {
        note(s, "%s%s: %s (%s)", sep, path, why, source);
        dlclose(h);
        return NULL;
    }
    return table; /* the handle stays open for the process's lifetime */
}

/* dir + "/" + file into path[PATH_MAX]; 0 when it does not fit. */
static int in_dir(char *path, const char *dir, const char *file)
{
    int n = snprintf(path, PATH_MAX, "%s/%s", dir, file);
    return n > 0 && n < PATH_MAX;
}

/* The directory of file into dir[PATH_MAX] (its real path's); 0 when none. */
static int dir_of(const char *file, char *dir)
{
    char real[PATH_MAX];
    if (!file || !file[0] || !realpath(file, real))
        return 0;
    char *slash = strrchr(real, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    snprintf(dir, PATH_MAX, "%s", real[0] ? real : "/");
    return 1;
}

/* The files to try, in order, each once: paths[], why each (sources[]); the count. */
static int candidates(const ffnn_module_spec *spec, char paths[MODULE_CANDIDATES][PATH_MAX],
                      const char *sources[MODULE_CANDIDATES])
{
    const char *env = getenv(spec->env);
    if (env && env[0]) {
        snprintf(paths[0], PATH_MAX, "%s", env);
        sources[0] = spec->env;
        return 1;
    }
    int count = 0;
    char dir[PATH_MAX], exe[PATH_MAX], self[PATH_MAX], lib[PATH_MAX];
    Dl_info info;
    int exe_known = dir_of("/proc/self/exe", exe);
    /* beside libffnn.so; in a program with libffnn.a linked in, dladdr names the
     * program, which the last place covers */
    if (dladdr((void *)&ffnn_module_open, &info) && info.dli_fname &&
        realpath(info.dli_fname, lib) &&
        !(realpath("/proc/self/exe", self) && strcmp(self, lib) == 0) && dir_of(lib, dir) &&
        in_dir(paths[count], dir, spec->file))
        sources[count++] = "beside libffnn";
    if (in_dir(paths[count], FFNN_MODULE_DIR, spec->file))
        sources[count++] = "the install directory";
    if (exe_known && in_dir(paths[count], exe, spec->file))
        sources[count++] = "beside the program";
    int unique = 0;
    for (int i = 0; i < count; i++) {
        int seen = 0;
        for (int j = 0; j < unique; j++)
            seen |= strcmp(paths[i], paths[j]) == 0;
        if (!seen) {
            if (unique != i)
                memcpy(paths[unique], paths[i], PATH_MAX);
            sources[unique++] = sources[i];
        }
    }
    return unique;
}

const void *ffnn_module_open(const ffnn_module_spec *spec, char *err, size_t err_size)
{
    char paths[MODULE_CANDIDATES][PATH_MAX];
    const char *sources[MODULE_CANDIDATES];
    search s = {err, err_size, 0};
    int count = candidates(spec, paths, sources);
    for (int i = 0; i < count; i++) {
        const void *table = try_file(spec, paths[i], sources[i], &s);
        if (table)
            return table;
    }
    if (count == 0)
        note(&s, "no directory to look in");
    const char *env = getenv(spec->env);
    if (env && env[0])
        note(&s, "; unset %s to look in the usual places", spec->env);
    else
        note(&s, "; %s names its path", spec->env);
    return NULL;
}

int ffnn_module_found(const ffnn_module_spec *spec)
{
    char paths[MODULE_CANDIDATES][PATH_MAX];
    const char *sources[MODULE_CANDIDATES];
    int count = candidates(spec, paths, sources);
    for (int i = 0; i < count; i++)
        if (access(paths[i], R_OK) == 0)
            return 1;
    return 0;
}
