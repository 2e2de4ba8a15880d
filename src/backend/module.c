/* module.c - finding and loading the CUDA backend's module (module.h), and the
 * functions of the library that forward to it: ffnn_cuda_backend (backend.h),
 * ffnn_has_cuda, ffnn_cuda_device_count, ffnn_cuda_device_name (ffnn.h),
 * ffnn_local1d_forward_cuda (core/local1d.h).
 *
 * Where the module is looked for, in order (the first that loads and matches wins):
 *   1. $FFNN_CUDA_MODULE (a path), when set: then that file only;
 *   2. beside the loaded libffnn.so (dladdr), e.g. build/ or the Python wheel's ffnn/;
 *   3. the install directory (FFNN_MODULE_DIR: make's $(LIBDIR), e.g. /usr/local/lib);
 *   4. the directory of the running program (/proc/self/exe), e.g. build/ for
 *      build/ffnn, which carries libffnn.a.
 * The load happens once per process, the first time a GPU is asked for; what it
 * found (the table, or the message naming each file tried and its dlerror) is kept
 * for the process's lifetime: it is the state of dlopen's own, read-only after the
 * one-time load (pthread_once). Device auto asks ffnn_cuda_device_count(), which
 * loads the module only where a CUDA driver (libcuda.so.1) is installed: a machine
 * without one trains on the cpu without opening CUDA's libraries. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/module.h"
#include "core/error.h"

#ifndef FFNN_MODULE_DIR
#define FFNN_MODULE_DIR "/usr/local/lib"
#endif

/* Defined by a program that links the CUDA objects itself (src/backend/cuda/entry.c
 * linked in: the tests, ffnn-bench); NULL in libffnn.so and in the programs that
 * link libffnn.a alone. */
extern const ffnn_cuda_module *ffnn_cuda_module_entry(const ffnn_module_host *host)
    __attribute__((weak, visibility("hidden")));

enum { MODULE_ERROR_SIZE = 3072, MODULE_CANDIDATES = 4 };

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const ffnn_cuda_module *loaded;
static char load_error[MODULE_ERROR_SIZE];
static int tried; /* files tried so far (the separator of their reasons) */

static const ffnn_module_host host = {
    FFNN_CUDA_MODULE_VERSION, FFNN_MODULE_ABI, sizeof(ffnn_module_host), ffnn_fail,
    ffnn_last_error,
};

/* Append printf-style text to load_error (truncated at its size). */
__attribute__((format(printf, 1, 2))) static void note(const char *fmt, ...)
{
    size_t used = strlen(load_error);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(load_error + used, sizeof load_error - used, fmt, ap);
    va_end(ap);
}

/* 1 when the table matches this library, else 0 and why not (into why). */
static int table_matches(const ffnn_cuda_module *m, char *why, size_t why_size)
{
    if (!m) {
        snprintf(why, why_size, "its %s returned no table", FFNN_CUDA_MODULE_ENTRY);
        return 0;
    }
    if (m->version != FFNN_CUDA_MODULE_VERSION || m->abi != FFNN_MODULE_ABI ||
        m->size != sizeof(ffnn_cuda_module) || m->ops_size != sizeof(ffnn_backend_ops)) {
        snprintf(why, why_size, "a module of another build of ffnn (%s, interface %u, "
                 "checksum %u; this libffnn: %s, interface %u, checksum %u)",
                 m->version == FFNN_CUDA_MODULE_VERSION && m->ffnn_version ? m->ffnn_version
                                                                           : "?",
                 (unsigned)m->version, (unsigned)m->abi, FFNN_VERSION,
                 (unsigned)FFNN_CUDA_MODULE_VERSION, (unsigned)FFNN_MODULE_ABI);
        return 0;
    }
    if (!m->ops || !m->device_count || !m->device_name || !m->local1d_forward ||
        !ffnn_backend_ops_complete(m->ops)) {
        snprintf(why, why_size, "its table is incomplete");
        return 0;
    }
    return 1;
}

/* Try one file: 1 and *out set when it loads and matches; else 0 with the reason
 * noted (its dlerror, a missing entry point, another build). */
static int try_file(const char *path, const char *source, const ffnn_cuda_module **out)
{
    char why[512];
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        note("%s%s (%s)", tried++ ? "; " : "", e ? e : path, source);
        return 0;
    }
    ffnn_cuda_module_entry_fn entry;
    *(void **)&entry = dlsym(h, FFNN_CUDA_MODULE_ENTRY);
    if (!entry) {
        note("%s%s: no %s: not an ffnn CUDA module (%s)", tried++ ? "; " : "", path,
             FFNN_CUDA_MODULE_ENTRY, source);
        dlclose(h);
        return 0;
    }
    const ffnn_cuda_module *m = entry(&host);
    if (!table_matches(m, why, sizeof why)) {
        note("%s%s: %s (%s)", tried++ ? "; " : "", path, why, source);
        dlclose(h);
        return 0;
    }
    *out = m; /* the handle stays open for the process's lifetime */
    return 1;
}

/* dir + "/" + FFNN_CUDA_MODULE_FILE into path[PATH_MAX]; 0 when it does not fit. */
static int in_dir(char *path, const char *dir)
{
    int n = snprintf(path, PATH_MAX, "%s/%s", dir, FFNN_CUDA_MODULE_FILE);
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
static int candidates(char paths[MODULE_CANDIDATES][PATH_MAX], const char *sources[])
{
    const char *env = getenv("FFNN_CUDA_MODULE");
    if (env && env[0]) {
        snprintf(paths[0], PATH_MAX, "%s", env);
        sources[0] = "FFNN_CUDA_MODULE";
        return 1;
    }
    int count = 0;
    char dir[PATH_MAX], exe[PATH_MAX], self[PATH_MAX], lib[PATH_MAX];
    Dl_info info;
    int exe_known = dir_of("/proc/self/exe", exe);
    /* beside libffnn.so; in a program with libffnn.a linked in, dladdr names the
     * program, which the last place covers */
    if (dladdr((void *)&ffnn_cuda_module_get, &info) && info.dli_fname &&
        realpath(info.dli_fname, lib) &&
        !(realpath("/proc/self/exe", self) && strcmp(self, lib) == 0) && dir_of(lib, dir) &&
        in_dir(paths[count], dir))
        sources[count++] = "beside libffnn";
    if (in_dir(paths[count], FFNN_MODULE_DIR))
        sources[count++] = "the install directory";
    if (exe_known && in_dir(paths[count], exe))
        sources[count++] = "beside the program";
    int unique = 0;
    for (int i = 0; i < count; i++) {
        int seen = 0;
        for (int j = 0; j < unique; j++)
            seen |= strcmp(paths[i], paths[j]) == 0;
        if (!seen) {
            memmove(paths[unique], paths[i], PATH_MAX);
            sources[unique++] = sources[i];
        }
    }
    return unique;
}

static void load(void)
{
    note("no CUDA module (%s) could be loaded: ", FFNN_CUDA_MODULE_FILE);
    const ffnn_cuda_module *m = NULL;
    char why[512];
    if (ffnn_cuda_module_entry) { /* linked in */
        m = ffnn_cuda_module_entry(&host);
        if (table_matches(m, why, sizeof why))
            loaded = m, load_error[0] = '\0';
        else
            note("the linked-in CUDA backend: %s", why);
        return;
    }
    static char paths[MODULE_CANDIDATES][PATH_MAX];
    const char *sources[MODULE_CANDIDATES];
    int count = candidates(paths, sources);
    for (int i = 0; i < count; i++)
        if (try_file(paths[i], sources[i], &m)) {
            loaded = m;
            load_error[0] = '\0';
            return;
        }
    if (count == 0)
        note("no directory to look in");
    const char *env = getenv("FFNN_CUDA_MODULE");
    if (env && env[0])
        note("; unset FFNN_CUDA_MODULE to look in the usual places, or use device cpu");
#ifdef FFNN_BUILT_CUDA_MODULE
    else
        note("; set FFNN_CUDA_MODULE to the path of %s (built by make beside libffnn), or "
             "use device cpu", FFNN_CUDA_MODULE_FILE);
#else
    else
        note("; this build of ffnn made no CUDA module (nvcc was not found at build time): "
             "rebuild with nvcc on the PATH, or use device cpu");
#endif
}

const ffnn_cuda_module *ffnn_cuda_module_get(void)
{
    pthread_once(&load_once, load);
    return loaded;
}

const char *ffnn_cuda_module_error(void)
{
    return ffnn_cuda_module_get() ? "" : load_error;
}

/* A CUDA driver is installed (libcuda.so.1 loads), or the user named a module, or
 * the program carries the backend: only then may device auto load the module. */
static int driver_present;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static void probe(void)
{
    const char *env = getenv("FFNN_CUDA_MODULE");
    if (ffnn_cuda_module_entry || (env && env[0])) {
        driver_present = 1;
        return;
    }
    /* left open: the CUDA runtime opens the same library when the module loads */
    driver_present = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) != NULL;
}

const ffnn_backend_ops *ffnn_cuda_backend(void)
{
    const ffnn_cuda_module *m = ffnn_cuda_module_get();
    return m ? m->ops : NULL;
}

/* Where no CUDA driver is installed the module could not run: it is not loaded
 * then (that would map CUDA's libraries for nothing), only looked for. */
int ffnn_has_cuda(void)
{
    pthread_once(&probe_once, probe);
    if (driver_present)
        return ffnn_cuda_module_get() != NULL;
    static char paths[MODULE_CANDIDATES][PATH_MAX];
    const char *sources[MODULE_CANDIDATES];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    int count = candidates(paths, sources), found = 0;
    for (int i = 0; i < count && !found; i++)
        found = access(paths[i], R_OK) == 0;
    pthread_mutex_unlock(&lock);
    return found;
}

int ffnn_cuda_device_count(void)
{
    pthread_once(&probe_once, probe);
    if (!driver_present)
        return 0;
    const ffnn_cuda_module *m = ffnn_cuda_module_get();
    return m ? m->device_count() : 0;
}

void ffnn_cuda_device_name(char *buf, size_t buf_size)
{
    if (buf == NULL || buf_size == 0)
        return;
    buf[0] = '\0';
    if (ffnn_cuda_device_count() > 0)
        ffnn_cuda_module_get()->device_name(buf, buf_size);
}

ffnn_status ffnn_local1d_forward_cuda(ffnn_local1d_variant variant, void *stream,
                                      const float *x, const float *W, const float *bias,
                                      float *z, size_t batch, size_t N, size_t R,
                                      ffnn_local1d_padding padding, ffnn_activation act)
{
    const ffnn_cuda_module *m = ffnn_cuda_module_get();
    if (!m)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "ffnn_local1d_forward_cuda: %s",
                         ffnn_cuda_module_error());
    return m->local1d_forward(variant, stream, x, W, bias, z, batch, N, R, padding, act);
}
