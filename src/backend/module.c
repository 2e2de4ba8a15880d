/* module.c - finding and loading the CUDA backend's module (module.h), and the
 * functions of the library that forward to it: ffnn_cuda_backend (backend.h),
 * ffnn_has_cuda, ffnn_cuda_device_count, ffnn_cuda_device_name (ffnn.h).
 *
 * Where the module is looked for (module_search.c), in order (the first that loads
 * and matches wins):
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
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/module.h"
#include "core/error.h"

/* Defined by a program that links the CUDA objects itself (src/backend/cuda/entry.c
 * linked in: the tests, ffnn-bench); NULL in libffnn.so and in the programs that
 * link libffnn.a alone. */
extern const void *ffnn_cuda_module_entry(const void *host)
    __attribute__((weak, visibility("hidden")));

enum { MODULE_ERROR_SIZE = 3072 };

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const ffnn_cuda_module *loaded;
static char load_error[MODULE_ERROR_SIZE];

static const ffnn_module_host host = {
    FFNN_CUDA_MODULE_VERSION, FFNN_MODULE_ABI, sizeof(ffnn_module_host), ffnn_fail,
    ffnn_last_error,
};

/* 1 when the table matches this library, else 0 and why not (into why). */
static int table_matches(const void *table, char *why, size_t why_size)
{
    const ffnn_cuda_module *m = (const ffnn_cuda_module *)table;
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
    if (!m->ops || !m->device_count || !m->device_name ||
        !ffnn_backend_ops_complete(m->ops)) {
        snprintf(why, why_size, "its table is incomplete");
        return 0;
    }
    return 1;
}

static const ffnn_module_spec cuda_spec = {
    FFNN_CUDA_MODULE_FILE, "FFNN_CUDA_MODULE", FFNN_CUDA_MODULE_ENTRY, 0, &host,
    table_matches,
};

static void load(void)
{
    char why[512];
    size_t used = (size_t)snprintf(load_error, sizeof load_error,
                                   "no CUDA module (%s) could be loaded: ",
                                   FFNN_CUDA_MODULE_FILE);
    if (ffnn_cuda_module_entry) { /* linked in */
        const void *m = ffnn_cuda_module_entry(&host);
        if (table_matches(m, why, sizeof why))
            loaded = (const ffnn_cuda_module *)m, load_error[0] = '\0';
        else
            snprintf(load_error + used, sizeof load_error - used,
                     "the linked-in CUDA backend: %s", why);
        return;
    }
    loaded = (const ffnn_cuda_module *)ffnn_module_open(&cuda_spec, load_error,
                                                        sizeof load_error);
    if (loaded) {
        load_error[0] = '\0';
        return;
    }
    used = strlen(load_error);
#ifdef FFNN_BUILT_CUDA_MODULE
    snprintf(load_error + used, sizeof load_error - used,
             " (make builds it beside libffnn), or use device cpu");
#else
    snprintf(load_error + used, sizeof load_error - used,
             "; this build of ffnn made no CUDA module (nvcc was not found at build "
             "time): rebuild with nvcc on the PATH, or use device cpu");
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
    return driver_present ? ffnn_cuda_module_get() != NULL : ffnn_module_found(&cuda_spec);
}

int ffnn_cuda_device_count(void)
{
    pthread_once(&probe_once, probe);
    if (!driver_present)
        return 0;
    const ffnn_cuda_module *m = ffnn_cuda_module_get();
    return m ? m->device_count() : 0;
}

ffnn_status ffnn_cuda_set_device(int device)
{
    int count = ffnn_cuda_device_count();
    if (device < 0 || device >= count)
        return ffnn_fail(count ? FFNN_ERR_INVALID_ARGUMENT : FFNN_ERR_UNSUPPORTED,
                         "CUDA device %d: %d device%s visible%s", device, count,
                         count == 1 ? " is" : "s are",
                         ffnn_cuda_module_get() ? "" : " (no CUDA module)");
    return ffnn_cuda_module_get()->set_device(device);
}

int ffnn_cuda_current_device(void)
{
    return ffnn_cuda_device_count() > 0 ? ffnn_cuda_module_get()->current_device() : -1;
}

void ffnn_cuda_device_name(char *buf, size_t buf_size)
{
    if (buf == NULL || buf_size == 0)
        return;
    buf[0] = '\0';
    if (ffnn_cuda_device_count() > 0)
        ffnn_cuda_module_get()->device_name(buf, buf_size);
}
