/* error_module.h - core/error.h's ffnn_fail and ffnn_last_error inside a run-time
 * module (libffnn-cuda.so, libffnn-mpi.so): error_module.c, linked into the modules
 * only (libffnn has core/error.c), forwards them to the libffnn that loaded the
 * module, so that a message the module's code sets is what ffnn_last_error() reads
 * there. */
#ifndef FFNN_CORE_ERROR_MODULE_H
#define FFNN_CORE_ERROR_MODULE_H

#include "ffnn.h"

/* The loading library's error functions (its ffnn_module_host / ffnn_mpi_host
 * members); set once, by the module's entry point, before any other of its functions
 * runs. NULL (or never set): ffnn_fail returns its status, ffnn_last_error "". */
void ffnn_error_module_set(ffnn_status (*fail)(ffnn_status status, const char *fmt, ...),
                           const char *(*last_error)(void));

#endif
