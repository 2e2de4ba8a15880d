/* host.c - the error functions of core/error.h inside the CUDA module: they set the
 * message of the libffnn that loaded the module (its ffnn_module_host), so that
 * ffnn_last_error() there reads what the module's code reported. Linked into
 * libffnn-cuda.so only (a program with the CUDA objects linked in has libffnn's
 * own core/error.c). */
#include <stdarg.h>
#include <stdio.h>

#include "backend/module.h"
#include "core/error.h"

/* Set once, by the entry point, before any other function of the module runs. */
static const ffnn_module_host *lib;

void ffnn_module_set_host(const ffnn_module_host *host) { lib = host; }

ffnn_status ffnn_fail(ffnn_status status, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return lib ? lib->fail(status, "%s", text) : status;
}

const char *ffnn_last_error(void) { return lib ? lib->last_error() : ""; }
