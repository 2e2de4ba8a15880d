/* host.c - the CUDA module's end of its ffnn_module_host: the error functions of
 * core/error.h go to the libffnn that loaded the module (core/error_module.c), so
 * that ffnn_last_error() there reads what the module's code reported. Linked into
 * libffnn-cuda.so only (a program with the CUDA objects linked in has libffnn's
 * own core/error.c). */
#include <stddef.h>

#include "backend/module.h"
#include "core/error_module.h"

void ffnn_module_set_host(const ffnn_module_host *host)
{
    ffnn_error_module_set(host ? host->fail : NULL, host ? host->last_error : NULL);
}
