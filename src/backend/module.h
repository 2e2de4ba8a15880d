/*
 * module.h - the CUDA backend as a run-time module (docs/BUILD.md "The CUDA and MPI
 * modules").
 *
 * libffnn carries the cpu backends only. The CUDA backend (the .cu files of
 * src/backend/cuda/, src/parallel/nccl.cu, with cuBLAS, cuBLASLt, NCCL and the CUDA
 * runtime) is a shared object of its own, libffnn-cuda.so, that module.c loads (dlopen) the first
 * time a GPU is asked for: device cuda, or device auto where a CUDA driver is
 * installed. So a program that never uses a GPU needs none of CUDA's libraries.
 *
 * The module exports one function, FFNN_CUDA_MODULE_ENTRY (ffnn_cuda_module_entry):
 * given the library's services (ffnn_module_host), it returns its table
 * (ffnn_cuda_module). The loader uses the table only when its version, the
 * checksum of the interface headers (FFNN_MODULE_ABI, made by the Makefile) and
 * its size all equal the library's: a module of another build is refused, with
 * both versions in the message. Bump FFNN_CUDA_MODULE_VERSION when this table
 * changes; any change of the headers below changes FFNN_MODULE_ABI by itself. The
 * first three fields (version, abi, size) of both structs keep their place in every
 * version: they are read before anything else is trusted.
 *
 * A program that links the CUDA objects itself (the tests and ffnn-bench, whose
 * kernel lab calls kernels directly) defines the entry point, and the loader then
 * uses that one instead of a file (a weak reference, module.c).
 */
#ifndef FFNN_BACKEND_MODULE_H
#define FFNN_BACKEND_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "ffnn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FFNN_CUDA_MODULE_VERSION 3u
#define FFNN_CUDA_MODULE_ENTRY "ffnn_cuda_module_entry"
#define FFNN_CUDA_MODULE_FILE "libffnn-cuda.so"
/* The checksum of the headers the module shares with the library (Makefile:
 * MODULE_ABI); 0 in a build without it. */
#ifndef FFNN_MODULE_ABI
#define FFNN_MODULE_ABI 0u
#endif

/* What the library lends the module: its error state (one per thread, read by
 * ffnn_last_error), so that a message the module's code sets is the library's. */
typedef struct ffnn_module_host {
    uint32_t version;        /* FFNN_CUDA_MODULE_VERSION of the library            */
    uint32_t abi;            /* FFNN_MODULE_ABI of the library                     */
    size_t size;             /* sizeof(ffnn_module_host)                           */
    ffnn_status (*fail)(ffnn_status status, const char *fmt, ...);
    const char *(*last_error)(void);
} ffnn_module_host;

/* The module's table. Every function below is the one of the same name that
 * libffnn declares (backend.h, ffnn.h, parallel/comm.h), which
 * module.c forwards to it. */
typedef struct ffnn_cuda_module {
    uint32_t version;        /* FFNN_CUDA_MODULE_VERSION of the module             */
    uint32_t abi;            /* FFNN_MODULE_ABI of the module                      */
    size_t size;             /* sizeof(ffnn_cuda_module)                           */
    size_t ops_size;         /* sizeof(ffnn_backend_ops)                           */
    const char *ffnn_version;/* FFNN_VERSION of the module's build                 */
    const ffnn_backend_ops *ops;                       /* ffnn_cuda_backend()       */
    int (*device_count)(void);                         /* ffnn_cuda_device_count    */
    void (*device_name)(char *buf, size_t buf_size);   /* ffnn_cuda_device_name     */
    ffnn_status (*set_device)(int device);             /* ffnn_cuda_set_device      */
    int (*current_device)(void);                       /* ffnn_cuda_current_device  */
    /* NCCL (src/parallel/nccl.cu); all three NULL in a module built without it.
     * id: FFNN_NCCL_ID_BYTES (parallel/comm.h) bytes. */
    ffnn_status (*nccl_unique_id)(unsigned char *id);
    ffnn_status (*nccl_comm_create)(const unsigned char *id, int size, int rank, int device,
                                    ffnn_comm *host, ffnn_comm **out);
    ffnn_status (*nccl_group_create)(int gpus, ffnn_comm **comms);
} ffnn_cuda_module;

/* A module's entry point: its table (here a const ffnn_cuda_module *), given the
 * library's services (a const ffnn_module_host *). */
typedef const void *(*ffnn_module_entry_fn)(const void *host);

/* The module's side: what src/backend/cuda/entry.c puts into its table, defined
 * by the CUDA objects (backend.cu; src/parallel/nccl.cu). */
const ffnn_backend_ops *ffnn_cuda_module_ops(void);
int ffnn_cuda_module_device_count(void);
void ffnn_cuda_module_device_name(char *buf, size_t buf_size);
ffnn_status ffnn_cuda_module_set_device(int device);
int ffnn_cuda_module_current_device(void);
ffnn_status ffnn_nccl_module_unique_id(unsigned char *id);
ffnn_status ffnn_nccl_module_comm_create(const unsigned char *id, int size, int rank,
                                         int device, ffnn_comm *host, ffnn_comm **out);
ffnn_status ffnn_nccl_module_group_create(int gpus, ffnn_comm **comms);
/* host.c (the module only): keeps the library's services for ffnn_fail */
void ffnn_module_set_host(const ffnn_module_host *host);

/* Finding and opening a module (module_search.c), the CUDA one's or another's
 * (parallel/mpi_module.h): file is looked for at $env when set (then there
 * only), beside the loaded libffnn.so, in the install directory, beside the running
 * program; the first whose entry point returns a table that accept() takes wins. */
typedef struct ffnn_module_spec {
    const char *file;        /* e.g. FFNN_CUDA_MODULE_FILE                          */
    const char *env;         /* e.g. "FFNN_CUDA_MODULE"                              */
    const char *entry;       /* the entry point's name                               */
    int global;              /* 1: RTLD_GLOBAL (its libraries' plugins need them)    */
    const void *host;        /* passed to the entry point                            */
    /* 1 when table is of this library's interface, else 0 and why not into why */
    int (*accept)(const void *table, char *why, size_t why_size);
} ffnn_module_spec;
/* The table; NULL when no file loads and is accepted, with each file tried and why
 * it failed (dlerror, no entry point, another build) appended to err[err_size]. */
const void *ffnn_module_open(const ffnn_module_spec *spec, char *err, size_t err_size);
/* 1 when a file of spec is at one of those places (readable; not opened). */
int ffnn_module_found(const ffnn_module_spec *spec);

/* The library's side (module.c). The module's table, loaded on the first call
 * (thread-safe); NULL when no module could be loaded, ffnn_cuda_module_error() then
 * says which files were tried and why each failed. */
const ffnn_cuda_module *ffnn_cuda_module_get(void);
/* Why ffnn_cuda_module_get() returned NULL: "" when it did not (or was not called). */
const char *ffnn_cuda_module_error(void);

#ifdef __cplusplus
}
#endif
#endif
